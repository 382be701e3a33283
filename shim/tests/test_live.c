/* The knobs in force while the layer's own messages fly (src/live.c):
 * suspended, every knob in force is zero, per-pair values and jitter
 * included, whatever is published meanwhile; resumed, the knobs wanted then
 * are back, region scope and the armed steps outside it included. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "jitter.h"
#include "live.h"
#include "region.h"
#include "runenv.h"

#define US 1000000 /* ps */

static loggp_knobs knobs(int64_t L_ps, int64_t G_ps, int scope)
{
    loggp_knobs k = {0};
    k.ps[LOGGP_KNOB_LATENCY] = L_ps;
    k.ps[LOGGP_KNOB_GAP_PER_BYTE] = G_ps;
    k.scope = scope;
    return k;
}

static void expect_in_force(int64_t L_ps, int64_t G_ps, int topo, const char *when)
{
    loggp_knobs now;
    loggp_live_knobs(&now);
    loggp_delays d;
    loggp_live_get(&d);
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        int64_t want = i == LOGGP_KNOB_LATENCY ? L_ps : i == LOGGP_KNOB_GAP_PER_BYTE ? G_ps : 0;
        cr_expect_eq(now.ps[i], want, "%s: knob %d in force is %lld ps, not %lld", when, i, (long long)now.ps[i],
                     (long long)want);
    }
    cr_expect_eq(d.L, (uint64_t)(L_ps + 500) / 1000, "%s: the message path's L", when);
    cr_expect_eq(d.G_ps_per_byte, G_ps, "%s: the message path's G", when);
    cr_expect_eq(d.topo, topo, "%s: per-pair values in force", when);
    cr_expect_eq(loggp_live_active(), L_ps || G_ps || topo, "%s: the zero-knob flag", when);
}

static void expect_wanted_L(int64_t L_ps)
{
    loggp_knobs w;
    loggp_live_wanted(&w);
    cr_expect_eq(w.ps[LOGGP_KNOB_LATENCY], L_ps, "the knobs wanted (banner, profile) are what was published");
}

Test(live_suspend, zero_in_force_while_suspended_and_back_after)
{
    loggp_knobs k = knobs(200 * US, 3000, LOGGP_SCOPE_ALL);
    loggp_live_publish(&k);
    expect_in_force(200 * US, 3000, 0, "published");
    loggp_live_suspend();
    expect_in_force(0, 0, 0, "suspended");
    expect_wanted_L(200 * US);
    loggp_live_resume();
    expect_in_force(200 * US, 3000, 0, "resumed");
}

Test(live_suspend, what_is_published_while_suspended_stays_out_until_resumed)
{
    loggp_live_suspend();
    loggp_knobs k = knobs(50 * US, 0, LOGGP_SCOPE_ALL); /* the watcher, say */
    loggp_live_publish(&k);
    expect_in_force(0, 0, 0, "published while suspended");
    expect_wanted_L(50 * US);
    k = knobs(70 * US, 0, LOGGP_SCOPE_ALL);
    loggp_live_publish(&k);
    loggp_live_resume();
    expect_in_force(70 * US, 0, 0, "resumed: the last knobs published");
}

Test(live_suspend, per_pair_values_apply_neither_while_suspended)
{
    loggp_knobs k = knobs(10 * US, 0, LOGGP_SCOPE_ALL);
    loggp_live_publish(&k);
    loggp_live_suspend();
    loggp_live_set_topology(1, 1); /* after MPI_Init, during the layer's set-up */
    expect_in_force(0, 0, 0, "topology set while suspended");
    loggp_live_resume();
    expect_in_force(10 * US, 0, 1, "resumed with a topology");
    loggp_live_suspend();
    expect_in_force(0, 0, 0, "suspended again");
}

Test(live_suspend, jitter_is_held_while_suspended)
{
    loggp_knobs k = knobs(10 * US, 0, LOGGP_SCOPE_ALL);
    loggp_live_publish(&k);
    cr_assert_eq(loggp_jitter_is_held(), 0);
    loggp_live_suspend();
    cr_expect_eq(loggp_jitter_is_held(), 1, "no draw for the layer's own messages");
    loggp_live_publish(&k);
    cr_expect_eq(loggp_jitter_is_held(), 1, "a republish while suspended keeps jitter held");
    loggp_live_resume();
    cr_expect_eq(loggp_jitter_is_held(), 0);
}

Test(live_suspend, resume_honours_the_kernel_scope)
{
    loggp_region_enter(LOGGP_REGION_OUTSIDE);
    loggp_knobs k = knobs(30 * US, 0, LOGGP_SCOPE_KERNEL);
    loggp_live_publish(&k);
    expect_in_force(0, 0, 0, "outside the kernel");
    loggp_live_suspend();
    loggp_region_enter(LOGGP_REGION_KERNEL);
    expect_in_force(0, 0, 0, "entered the kernel while suspended");
    loggp_live_resume();
    expect_in_force(30 * US, 0, 0, "resumed inside the kernel");
    loggp_live_suspend();
    loggp_region_enter(LOGGP_REGION_OUTSIDE);
    loggp_live_resume();
    expect_in_force(0, 0, 0, "resumed outside the kernel");
}

/* LOGGP_OUTSIDE=armed: outside the kernel each knob set takes its smallest
 * step and jitter is held; suspended, not even the step applies. */
static void start_outside_armed(void)
{
    setenv("LOGGP_OUTSIDE", "armed", 1);
    setenv("LOGGP_SCOPE", "kernel", 1);
    setenv("LOGGP_LIVE", "0", 1);
    setenv("LOGGP_KNOB_FILE", "/nonexistent/loggp-test-live/knobs", 1);
    char err[512];
    cr_assert_eq(loggp_live_start(err, sizeof err), 0, "%s", err);
    cr_assert(loggp_live_outside_armed());
}

Test(live_suspend, resume_outside_the_kernel_puts_the_armed_steps_back, .init = start_outside_armed)
{
    loggp_region_enter(LOGGP_REGION_OUTSIDE);
    loggp_knobs k = knobs(30 * US, 0, LOGGP_SCOPE_KERNEL);
    loggp_live_publish(&k);
    expect_in_force(LOGGP_ARMED_STEP_PS, 0, 0, "outside, armed");
    loggp_live_suspend();
    expect_in_force(0, 0, 0, "suspended outside");
    loggp_live_resume();
    expect_in_force(LOGGP_ARMED_STEP_PS, 0, 0, "resumed outside, armed");
    cr_expect_eq(loggp_jitter_is_held(), 1);
    loggp_region_enter(LOGGP_REGION_KERNEL);
    expect_in_force(30 * US, 0, 0, "inside");
    cr_expect_eq(loggp_jitter_is_held(), 0);
}

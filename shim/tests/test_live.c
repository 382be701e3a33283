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

/* The message path keeps whole ns: a knob's ps round to the nearest ns, half up, on both sides of each half. */
Test(live_ns, ps_round_to_the_nearest_ns_half_up)
{
    static const struct {
        int64_t ps;
        uint64_t ns;
    } cases[] = {{1, 0}, {499, 0}, {500, 1}, {1499, 1}, {1500, 2}, {2499, 2}, {2500, 3}, {999999, 1000}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loggp_knobs k = {0};
        k.ps[LOGGP_KNOB_LATENCY] = k.ps[LOGGP_KNOB_O_S] = k.ps[LOGGP_KNOB_O_R] = k.ps[LOGGP_KNOB_GAP] = cases[i].ps;
        loggp_live_publish(&k);
        loggp_delays d;
        loggp_live_get(&d);
        cr_expect_eq(d.L, cases[i].ns, "L of %lld ps is %llu ns", (long long)cases[i].ps, (unsigned long long)d.L);
        cr_expect_eq(d.o_s, cases[i].ns, "o_s of %lld ps", (long long)cases[i].ps);
        cr_expect_eq(d.o_r, cases[i].ns, "o_r of %lld ps", (long long)cases[i].ps);
        cr_expect_eq(d.g, cases[i].ns, "g of %lld ps", (long long)cases[i].ps);
    }
}

/* A send skips o_s and the pacer (stamp only) when L, or per-pair L, is all the knobs ask of it:
 * each knob that asks more of a send, alone beside L, takes that path away. */
Test(live_ns, a_send_is_stamp_only_under_L_alone)
{
    static const struct {
        int knob;
        int64_t ps;
        int stamp_only;
    } beside_L[] = {{-1, 0, 1},
                    {LOGGP_KNOB_O_R, 1000, 1}, /* o_r is the receiver's: the send still only stamps */
                    {LOGGP_KNOB_O_S, 1000, 0},
                    {LOGGP_KNOB_GAP, 1000, 0},
                    {LOGGP_KNOB_GAP_PER_BYTE, 1, 0}};
    for (size_t i = 0; i < sizeof beside_L / sizeof beside_L[0]; i++) {
        loggp_knobs k = knobs(10 * US, 0, LOGGP_SCOPE_ALL);
        if (beside_L[i].knob >= 0)
            k.ps[beside_L[i].knob] = beside_L[i].ps;
        loggp_live_publish(&k);
        cr_expect_eq(atomic_load(&loggp_live_stamp_only), beside_L[i].stamp_only, "L with knob %d set",
                     beside_L[i].knob);
    }
    loggp_knobs none = {0};
    loggp_live_publish(&none);
    cr_expect_eq(atomic_load(&loggp_live_stamp_only), 0, "no knob: nothing to stamp");
    loggp_knobs o_s = {0};
    o_s.ps[LOGGP_KNOB_O_S] = 1000;
    loggp_live_publish(&o_s);
    cr_expect_eq(atomic_load(&loggp_live_stamp_only), 0, "o_s alone is no L");
}

Test(live_ns, per_pair_G_takes_a_send_off_the_stamp_only_path)
{
    loggp_knobs none = {0};
    loggp_live_publish(&none);
    loggp_live_set_topology(1, 0);
    cr_expect_eq(atomic_load(&loggp_live_stamp_only), 1, "per-pair L alone: stamp only");
    loggp_live_set_topology(1, 1);
    cr_expect_eq(atomic_load(&loggp_live_stamp_only), 0, "per-pair G owes the pacer its bytes");
}

/* Outside the kernel, armed: a topology's per-pair L (and G) count as knob sets of their own,
 * so they take their smallest step there though the knob itself is not set. */
Test(live_suspend, a_topology_takes_its_armed_steps_outside_the_kernel, .init = start_outside_armed)
{
    loggp_region_enter(LOGGP_REGION_OUTSIDE);
    loggp_knobs k = knobs(0, 0, LOGGP_SCOPE_KERNEL);
    k.ps[LOGGP_KNOB_O_S] = 5 * US;
    loggp_live_publish(&k);
    loggp_live_set_topology(1, 0);
    loggp_knobs now;
    loggp_live_knobs(&now);
    cr_expect_eq(now.ps[LOGGP_KNOB_LATENCY], LOGGP_ARMED_STEP_PS, "per-pair L outside: L's step");
    cr_expect_eq(now.ps[LOGGP_KNOB_GAP_PER_BYTE], 0, "no per-pair G: no G step");
    cr_expect_eq(now.ps[LOGGP_KNOB_O_S], LOGGP_ARMED_STEP_PS);
    loggp_live_set_topology(1, 1);
    loggp_live_knobs(&now);
    cr_expect_eq(now.ps[LOGGP_KNOB_LATENCY], LOGGP_ARMED_STEP_PS);
    cr_expect_eq(now.ps[LOGGP_KNOB_GAP_PER_BYTE], LOGGP_ARMED_STEP_PS_PER_BYTE, "per-pair G outside: G's step");
    loggp_region_enter(LOGGP_REGION_KERNEL);
    loggp_live_knobs(&now);
    cr_expect_eq(now.ps[LOGGP_KNOB_LATENCY], 0, "inside, the pairs' own values apply, not the knob");
    cr_expect_eq(now.ps[LOGGP_KNOB_O_S], 5 * US);
}

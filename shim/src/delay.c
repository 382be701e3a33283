#include "delay.h"

#include <stdio.h>
#include <string.h>

/* ---- the clock ---- */

__thread loggp_tsc_anchor loggp_tls_anchor __attribute__((tls_model("initial-exec")));
static _Atomic uint64_t tsc_mult; /* the process's best rate so far */

/* The process's first anchor, the base of the rate. */
static uint64_t first_tsc, first_ns;
static _Atomic int clock_state; /* 0: unknown, 1: being set up, 2: TSC, 3: vDSO only */

/* Does the kernel keep CLOCK_MONOTONIC on the TSC? Then it found the TSC
 * invariant and in step across CPUs (it drops it as a clocksource otherwise). */
static int kernel_clock_is_tsc(void)
{
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (!f)
        return 0;
    char name[32] = {0};
    int ok = fgets(name, sizeof name, f) && strncmp(name, "tsc\n", 4) == 0;
    fclose(f);
    return ok;
}

uint64_t loggp_tsc_rate(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1)
{
    if (tsc1 <= tsc0 || ns1 <= ns0 || ns1 - ns0 < 10000u)
        return 0;
    return (uint64_t)(((unsigned __int128)(ns1 - ns0) << LOGGP_TSC_SHIFT) / (tsc1 - tsc0));
}

#if defined(__x86_64__)
/* The tick span of the tightest reading calibration saw: a later reading no
 * wider than a few of it was not preempted in the middle. */
static uint64_t tight_width;
/* ns since the process's first anchor when the rate was last refined. */
static _Atomic uint64_t rate_base_ns;

/* A CLOCK_MONOTONIC reading and the tick count in the middle of it: the
 * tightest of `tries`, so a preemption inside one cannot skew it. */
static uint64_t read_pair(uint64_t *tsc, int tries, uint64_t *width)
{
    uint64_t best_ns = 0, best_width = UINT64_MAX;
    *tsc = 0;
    for (int i = 0; i < tries; i++) {
        uint64_t t0 = __builtin_ia32_rdtsc();
        uint64_t ns = loggp_vdso_ns();
        uint64_t t1 = __builtin_ia32_rdtsc();
        if (t1 - t0 < best_width) {
            best_width = t1 - t0;
            best_ns = ns;
            *tsc = t0 + (t1 - t0) / 2;
        }
    }
    *width = best_width;
    return best_ns;
}

static void calibrate(void)
{
    int expect = 0;
    if (!atomic_compare_exchange_strong(&clock_state, &expect, 1))
        return;
    if (!kernel_clock_is_tsc()) {
        atomic_store(&clock_state, 3);
        return;
    }
    uint64_t tsc, ns, width;
    first_ns = read_pair(&first_tsc, 4, &tight_width);
    do { /* 1 ms: a rate within ~2e-5 (2 ns over an anchor's span), refined as the base grows */
        ns = read_pair(&tsc, 4, &width);
        if (width < tight_width)
            tight_width = width;
    } while (ns - first_ns < 1000000u);
    atomic_store(&rate_base_ns, ns - first_ns);
    uint64_t mult = loggp_tsc_rate(first_tsc, first_ns, tsc, ns);
    if (!mult) {
        atomic_store(&clock_state, 3);
        return;
    }
    atomic_store(&tsc_mult, mult);
    atomic_store(&clock_state, 2);
}
#endif

int loggp_clock_uses_tsc(void)
{
    (void)loggp_now_ns();
    return atomic_load(&clock_state) == 2;
}

uint64_t loggp_now_ns_anchor(void)
{
#if defined(__x86_64__)
    int state = atomic_load_explicit(&clock_state, memory_order_acquire);
    if (state == 0) {
        calibrate();
        state = atomic_load_explicit(&clock_state, memory_order_acquire);
    }
    if (state != 2)
        return loggp_vdso_ns(); /* no TSC clock (or another thread is calibrating) */
    /* This runs after every idle spell longer than a span, on the path of the
     * next message: one reading, more only if it was preempted, and the rate
     * refined (a 128-bit division) only once its base has doubled. */
    uint64_t tsc, width, ns = read_pair(&tsc, 1, &width);
    if (width > 4 * tight_width + 64)
        ns = read_pair(&tsc, 4, &width);
    uint64_t mult = atomic_load_explicit(&tsc_mult, memory_order_relaxed);
    uint64_t base = atomic_load_explicit(&rate_base_ns, memory_order_relaxed);
    if (ns - first_ns >= 2 * base) { /* the longer the base, the truer the rate */
        uint64_t longer = loggp_tsc_rate(first_tsc, first_ns, tsc, ns);
        if (longer) {
            mult = longer;
            atomic_store_explicit(&tsc_mult, mult, memory_order_relaxed);
            atomic_store_explicit(&rate_base_ns, ns - first_ns, memory_order_relaxed);
        }
    }
    loggp_tls_anchor = loggp_tsc_reanchor(&loggp_tls_anchor, tsc, ns, mult);
    ns = loggp_tls_anchor.ns;
    return ns;
#else
    return loggp_vdso_ns();
#endif
}

/* ---- busy-waiting and the pacer ---- */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

uint64_t loggp_spin_until(uint64_t t)
{
    uint64_t now;
    while ((now = loggp_now_ns()) < t)
        cpu_relax();
    return now;
}

/* What the host took from this thread's o spins past their ends (delay.h);
 * initial-exec, as the clock's anchor: no __tls_get_addr call on an o spin. */
static __thread uint64_t spin_credit_ns __attribute__((tls_model("initial-exec")));

static inline uint64_t spin_overhead(uint64_t now, uint64_t t)
{
    uint64_t credit = spin_credit_ns;
    uint64_t target = credit ? loggp_credit_target(t, now, &credit) : t;
    while (now < target) {
        cpu_relax();
        now = loggp_now_ns();
    }
    spin_credit_ns = loggp_credit_after(credit, target, now);
    return now;
}

uint64_t loggp_spin_overhead_until(uint64_t t)
{
    /* the loop's first clock read also places the target: no read of its own */
    return spin_overhead(loggp_now_ns(), t);
}

uint64_t loggp_spin_overhead_ns(uint64_t ns)
{
    uint64_t now = loggp_now_ns(); /* the start, and the loop's first clock read */
    return spin_overhead(now, now + ns);
}

uint64_t loggp_spin_until_unpaused(uint64_t t)
{
    uint64_t now;
    while ((now = loggp_now_ns()) < t)
        ;
    return now;
}

uint64_t loggp_spin_ns(uint64_t ns)
{
    uint64_t start = loggp_now_ns();
    return ns ? loggp_spin_until(start + ns) : start;
}

static _Atomic uint64_t send_completed_at;

void loggp_send_completed(uint64_t at)
{
    uint64_t seen = atomic_load_explicit(&send_completed_at, memory_order_relaxed);
    while (at > seen &&
           !atomic_compare_exchange_weak_explicit(&send_completed_at, &seen, at, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

loggp_post_plan loggp_pacer_plan(const loggp_pacer *pacer, uint64_t called, uint64_t o_s_ns)
{
    loggp_post_plan plan = {called + o_s_ns, {0, 0}};
    uint64_t g = atomic_load_explicit(&pacer->g_ns, memory_order_relaxed);
    uint64_t per_byte = atomic_load_explicit(&pacer->bytes_ns, memory_order_relaxed);
    uint64_t owed = g + per_byte;
    if (!owed)
        return plan;
    uint64_t free_at = loggp_injector_free_at(atomic_load_explicit(&pacer->end_ns, memory_order_relaxed),
                                              atomic_load_explicit(&send_completed_at, memory_order_relaxed),
                                              called);
    plan.go_ns = loggp_post_go(called, o_s_ns, loggp_gap_next(free_at, owed));
    uint64_t waited = plan.go_ns - (called + o_s_ns);
    /* shared out by knob; the division only when both are owed (it is on
     * every paced send) */
    plan.waits.g_ns = !per_byte ? waited : !g || !waited ? 0 : (uint64_t)((unsigned __int128)waited * g / owed);
    plan.waits.bytes_ns = waited - plan.waits.g_ns;
    return plan;
}

loggp_gap_wait loggp_pacer_begin(loggp_pacer *pacer, uint64_t o_s_ns)
{
    loggp_gap_wait none = {0, 0};
    if (!o_s_ns && !atomic_load_explicit(&pacer->g_ns, memory_order_relaxed) &&
        !atomic_load_explicit(&pacer->bytes_ns, memory_order_relaxed))
        return none;
    /* o_s from the start of the call, so the layer's own work is inside it */
    uint64_t called = loggp_now_ns();
    loggp_post_plan plan = loggp_pacer_plan(pacer, called, o_s_ns);
    if (plan.go_ns <= called)
        return plan.waits; /* nothing owed by now: no second clock read */
    if (o_s_ns && plan.go_ns == called + o_s_ns) /* o_s, not the gap, sets the end */
        loggp_spin_overhead_until(plan.go_ns);
    else
        loggp_spin_until(plan.go_ns);
    return plan.waits;
}

void loggp_pacer_done_at(loggp_pacer *pacer, uint64_t end_ns, uint64_t g_ns, uint64_t bytes_ns)
{
    if (!g_ns && !bytes_ns) {
        if (atomic_load_explicit(&pacer->g_ns, memory_order_relaxed) ||
            atomic_load_explicit(&pacer->bytes_ns, memory_order_relaxed)) {
            atomic_store_explicit(&pacer->g_ns, 0, memory_order_relaxed);
            atomic_store_explicit(&pacer->bytes_ns, 0, memory_order_relaxed);
        }
        return;
    }
    atomic_store_explicit(&pacer->end_ns, end_ns, memory_order_relaxed);
    atomic_store_explicit(&pacer->g_ns, g_ns, memory_order_relaxed);
    atomic_store_explicit(&pacer->bytes_ns, bytes_ns, memory_order_relaxed);
}

void loggp_pacer_done(loggp_pacer *pacer, uint64_t g_ns, uint64_t bytes_ns)
{
    if (!g_ns && !bytes_ns)
        loggp_pacer_done_at(pacer, 0, 0, 0);
    else
        loggp_pacer_done_at(pacer, loggp_now_ns(), g_ns, bytes_ns);
}

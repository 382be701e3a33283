#include "delay.h"

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
    plan.waits.g_ns = (uint64_t)((unsigned __int128)waited * g / owed);
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
    loggp_post_plan plan = loggp_pacer_plan(pacer, loggp_now_ns(), o_s_ns);
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

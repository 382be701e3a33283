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

loggp_gap_wait loggp_pacer_begin(loggp_pacer *pacer, uint64_t o_s_ns)
{
    loggp_gap_wait w = {0, 0};
    uint64_t g = atomic_load_explicit(&pacer->g_ns, memory_order_relaxed);
    uint64_t per_byte = atomic_load_explicit(&pacer->bytes_ns, memory_order_relaxed);
    uint64_t owed = g + per_byte;
    if (!owed && !o_s_ns)
        return w;
    uint64_t now = loggp_now_ns(), due = 0;
    if (owed) {
        uint64_t free_at = atomic_load_explicit(&pacer->end_ns, memory_order_relaxed);
        uint64_t completed = atomic_load_explicit(&send_completed_at, memory_order_relaxed);
        if (completed > free_at && completed <= now)
            free_at = completed;
        due = loggp_gap_due(free_at, owed, now);
    }
    if (o_s_ns) /* from the start of the call, so the layer's own work is inside o_s */
        now = loggp_spin_until(now + o_s_ns);
    if (due <= now)
        return w;
    uint64_t waited = loggp_spin_until(due) - now;
    w.g_ns = (uint64_t)((unsigned __int128)waited * g / owed);
    w.bytes_ns = waited - w.g_ns;
    return w;
}

void loggp_pacer_done(loggp_pacer *pacer, uint64_t g_ns, uint64_t bytes_ns)
{
    if (!g_ns && !bytes_ns) {
        if (atomic_load_explicit(&pacer->g_ns, memory_order_relaxed) ||
            atomic_load_explicit(&pacer->bytes_ns, memory_order_relaxed)) {
            atomic_store_explicit(&pacer->g_ns, 0, memory_order_relaxed);
            atomic_store_explicit(&pacer->bytes_ns, 0, memory_order_relaxed);
        }
        return;
    }
    atomic_store_explicit(&pacer->end_ns, loggp_now_ns(), memory_order_relaxed);
    atomic_store_explicit(&pacer->g_ns, g_ns, memory_order_relaxed);
    atomic_store_explicit(&pacer->bytes_ns, bytes_ns, memory_order_relaxed);
}

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

uint64_t loggp_pacer_wait(loggp_pacer *pacer)
{
    uint64_t due = atomic_load_explicit(&pacer->next_free, memory_order_relaxed);
    uint64_t now = loggp_now_ns();
    if (now >= due)
        return 0;
    return loggp_spin_until(due) - now;
}

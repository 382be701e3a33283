/* The delay arithmetic both engines share: the clock, busy-waiting, and the
 * pacer that spaces successive injections by g + (k-1)*G. */
#ifndef LOGGP_DELAY_H
#define LOGGP_DELAY_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC is served by the vDSO (no system call) and shared by all
 * processes of a host, so send timestamps can be compared across ranks. */
static inline uint64_t loggp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy-waits on the calling CPU until the clock reaches t (the o knobs must
 * consume CPU time, not sleep). Returns the time reached. */
uint64_t loggp_spin_until(uint64_t t);

/* Busy-waits ns nanoseconds; returns the time reached. */
uint64_t loggp_spin_ns(uint64_t ns);

/* Time per byte applied to a k-byte message: (k-1)*G for k >= 1, in ns. */
static inline uint64_t loggp_bytes_delay_ns(int64_t G_ps_per_byte, uint64_t bytes)
{
    if (G_ps_per_byte <= 0 || bytes <= 1)
        return 0;
    return (uint64_t)(((unsigned __int128)(bytes - 1) * (uint64_t)G_ps_per_byte + 500) / 1000);
}

/* Spacing of one injector: the next injection may not start before next_free. */
typedef struct {
    _Atomic uint64_t next_free;
} loggp_pacer;

/* Waits until the pacer is free; returns the nanoseconds waited. */
uint64_t loggp_pacer_wait(loggp_pacer *pacer);

/* Records an injection that ended at `end`: the next may start g + (k-1)*G later. */
static inline void loggp_pacer_done(loggp_pacer *pacer, uint64_t end, uint64_t g_ns, uint64_t bytes_ns)
{
    atomic_store_explicit(&pacer->next_free, end + g_ns + bytes_ns, memory_order_relaxed);
}

#endif

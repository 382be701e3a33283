/* The clock that send stamps and due times use: CLOCK_MONOTONIC plus a
 * correction onto rank 0's clock (0 on one host unless a test injects one). */
#ifndef LOGGP_OFI_CLOCK_H
#define LOGGP_OFI_CLOCK_H

#include <stdatomic.h>
#include <stdint.h>

#include "delay.h"

#pragma GCC visibility push(hidden)

extern _Atomic int64_t ofi_clock_correction;
/* How long a natural-transit minimum is trusted: forever when all ranks read
 * one clock, a few seconds across hosts, where clocks drift apart. */
extern _Atomic uint64_t ofi_transit_window_ns;

#pragma GCC visibility pop

/* Now, on the corrected clock. */
static inline uint64_t clock_ns(void)
{
    return loggp_now_ns() + (uint64_t)atomic_load_explicit(&ofi_clock_correction, memory_order_relaxed);
}

/* A clock_ns() time on this host's own clock (loggp_now_ns). */
static inline uint64_t local_ns(uint64_t clock_time)
{
    return clock_time - (uint64_t)atomic_load_explicit(&ofi_clock_correction, memory_order_relaxed);
}

#endif

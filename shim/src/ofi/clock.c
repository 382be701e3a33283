/* The layer's corrected clock (clock.h) and its setter (ofi.h). */
#include "clock.h"

#include "ofi.h"

_Atomic int64_t ofi_clock_correction;
_Atomic uint64_t ofi_transit_window_ns = 10000000000u;

void loggp_ofi_set_clock(int64_t correction_ns, int clocks_shared)
{
    atomic_store(&ofi_clock_correction, correction_ns);
    atomic_store(&ofi_transit_window_ns, clocks_shared ? UINT64_MAX : 10000000000u);
}

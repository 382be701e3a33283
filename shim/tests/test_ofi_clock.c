/* The layer's clock (src/ofi/clock.h): the correction onto rank 0's clock is
 * applied to every stamp and due time, and undone for local waits. */
#include <criterion/criterion.h>

#include "clock.h"
#include "ofi.h"

#define S 1000000000u

Test(ofi_clock, applies_the_correction)
{
    loggp_ofi_set_clock(7 * (int64_t)S, 1);
    uint64_t before = loggp_now_ns();
    uint64_t corrected = clock_ns();
    uint64_t after = loggp_now_ns();
    cr_assert(corrected >= before + 7 * (uint64_t)S && corrected <= after + 7 * (uint64_t)S,
              "corrected %llu, local %llu..%llu", (unsigned long long)corrected, (unsigned long long)before,
              (unsigned long long)after);
    /* and local_ns takes a corrected time back to this host's clock */
    uint64_t local = local_ns(corrected);
    cr_assert(local >= before && local <= after);
    loggp_ofi_set_clock(0, 1);
}

Test(ofi_clock, a_negative_correction_moves_it_back)
{
    loggp_ofi_set_clock(-3 * (int64_t)S, 0);
    uint64_t before = loggp_now_ns();
    uint64_t corrected = clock_ns();
    uint64_t after = loggp_now_ns();
    cr_assert(corrected + 3 * (uint64_t)S >= before && corrected + 3 * (uint64_t)S <= after);
    loggp_ofi_set_clock(0, 1);
}

Test(ofi_clock, shared_clocks_trust_a_transit_minimum_forever)
{
    loggp_ofi_set_clock(0, 1);
    cr_assert_eq(atomic_load(&ofi_transit_window_ns), UINT64_MAX);
    loggp_ofi_set_clock(5, 0);
    cr_assert(atomic_load(&ofi_transit_window_ns) < UINT64_MAX);
    loggp_ofi_set_clock(0, 1);
}

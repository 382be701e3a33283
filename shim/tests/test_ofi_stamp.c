/* Send stamps in remote CQ data (src/ofi/stamp.c): what a receiver decodes is
 * the send time, to the stamp's 16 ns unit, across the 2^32 ns wraparound,
 * and the pair's topology class beside it. */
#include <criterion/criterion.h>

#include "stamp.h"

#define UNIT (UINT64_C(1) << STAMP_UNIT_SHIFT)
#define PERIOD (UINT64_C(1) << (STAMP_BITS + STAMP_UNIT_SHIFT)) /* ~4.3 s */

Test(stamp, decodes_the_send_time_and_keeps_the_callers_low_bits)
{
    uint64_t sent = 123456789 * UNIT;
    uint64_t data = stamp_encode(0xdeadbeefu, 1, sent, 0);
    cr_assert(is_stamped(FI_REMOTE_CQ_DATA, data));
    cr_assert_eq(stamp_send_time(data, sent + 5000), sent);
    uint64_t flags = FI_REMOTE_CQ_DATA | FI_RECV;
    strip_stamp(&flags, &data);
    cr_assert_eq(data, 0xdeadbeefu);
    cr_assert_eq(flags, FI_REMOTE_CQ_DATA | FI_RECV);
}

Test(stamp, a_sender_without_data_gets_none_back)
{
    uint64_t data = stamp_encode(0, 0, 1000 * UNIT, 0);
    uint64_t flags = FI_REMOTE_CQ_DATA | FI_RECV;
    strip_stamp(&flags, &data);
    cr_assert_eq(data, 0);
    cr_assert_eq(flags, FI_RECV);
}

Test(stamp, unstamped_data_is_not_taken_for_a_stamp)
{
    cr_assert_not(is_stamped(FI_REMOTE_CQ_DATA, 0x12345678u));
    cr_assert_not(is_stamped(0, stamp_encode(0, 0, 0, 0)));
}

Test(stamp, rounds_down_to_its_unit)
{
    uint64_t sent = 1000 * UNIT + UNIT - 1;
    uint64_t got = stamp_send_time(stamp_encode(0, 1, sent, 0), sent + 100);
    cr_assert_eq(got, 1000 * UNIT);
}

Test(stamp, survives_the_wraparound_of_its_field)
{
    /* sent just before the field wraps, received just after */
    for (uint64_t base = 0; base < 4 * PERIOD; base += PERIOD) {
        uint64_t sent = base + PERIOD - 2 * UNIT;
        uint64_t data = stamp_encode(0, 1, sent, 0);
        cr_assert_eq(stamp_send_time(data, base + PERIOD + 3 * UNIT), sent, "base %llu", (unsigned long long)base);
        /* and an age of almost a whole period still decodes */
        cr_assert_eq(stamp_send_time(data, sent + PERIOD - UNIT), sent);
    }
}

Test(stamp, uses_exactly_its_bit_field)
{
    /* a send time one period later encodes the same bits */
    uint64_t sent = 77 * UNIT;
    cr_assert_eq(stamp_encode(5, 1, sent, 0), stamp_encode(5, 1, sent + PERIOD, 0));
    cr_assert_neq(stamp_encode(5, 1, sent, 0), stamp_encode(5, 1, sent + PERIOD / 2, 0));
    /* and never touches the low 32 bits or bit 62 when the caller had data */
    uint64_t d = stamp_encode(0xffffffffu, 1, UINT64_MAX, 0);
    cr_assert_eq(d & 0xffffffffu, 0xffffffffu);
    cr_assert_eq(d & STAMP_NO_DATA, 0);
}

Test(stamp, carries_the_pair_class_without_touching_the_time_or_data)
{
    uint64_t sent = 987654 * UNIT;
    for (unsigned c = 0; c < 4; c++) {
        uint64_t data = stamp_encode(0xabcdu, 1, sent, c);
        cr_assert_eq(stamp_class(data), c);
        cr_assert_eq(stamp_send_time(data, sent + 100), sent);
        cr_assert(is_stamped(FI_REMOTE_CQ_DATA, data));
        uint64_t flags = FI_REMOTE_CQ_DATA | FI_RECV;
        strip_stamp(&flags, &data);
        cr_assert_eq(data, 0xabcdu);
    }
    /* a class beyond two bits cannot spill into the marks */
    cr_assert_eq(stamp_encode(0, 1, sent, 7) & STAMP_NO_DATA, 0);
}

Test(stamp, the_callers_upper_bits_never_reach_the_stamp)
{
    /* bits 32-63 are the stamp's whatever the caller passed there */
    uint64_t sent = 4242 * UNIT, caller = UINT64_C(0xffffffff00001234);
    uint64_t data = stamp_encode(caller, 1, sent, 1);
    cr_assert_eq(stamp_class(data), 1);
    cr_assert_eq(data & STAMP_NO_DATA, 0, "the caller had data");
    cr_assert_eq(stamp_send_time(data, sent + 100), sent);
    uint64_t flags = FI_REMOTE_CQ_DATA | FI_RECV;
    strip_stamp(&flags, &data);
    cr_assert_eq(data, 0x1234);
    cr_assert_eq(flags, FI_REMOTE_CQ_DATA | FI_RECV);
}

Test(stamp, never_decodes_a_time_after_now)
{
    /* the latest time <= now: now one ns short of a period after the send, inside a unit */
    uint64_t sent = 5000 * UNIT;
    uint64_t data = stamp_encode(0, 1, sent, 0);
    cr_assert_eq(stamp_send_time(data, sent + PERIOD - 1), sent);
    cr_assert_eq(stamp_send_time(data, sent + UNIT / 2), sent);
}

/* Stamp arithmetic (stamp.h): pure, unit-tested in test_ofi_stamp.c. */
#include "stamp.h"

#define STAMP_FIELD ((UINT64_C(1) << STAMP_BITS) - 1)

uint64_t stamp_encode(uint64_t data, int had_data, uint64_t send_time, unsigned pair_class)
{
    uint64_t t = (send_time >> STAMP_UNIT_SHIFT) & STAMP_FIELD;
    return (data & 0xffffffffu) | STAMP_MARK | (had_data ? 0 : STAMP_NO_DATA) |
           ((uint64_t)(pair_class & 3u) << STAMP_CLASS_SHIFT) | (t << STAMP_SHIFT);
}

uint64_t stamp_send_time(uint64_t data, uint64_t now)
{
    uint64_t t = (data >> STAMP_SHIFT) & STAMP_FIELD;
    uint64_t now_units = now >> STAMP_UNIT_SHIFT;
    uint64_t age = (now_units - t) & STAMP_FIELD;
    return (now_units - age) << STAMP_UNIT_SHIFT;
}

/* Send times carried in the upper bits of remote CQ data. Bits 0-31 stay the
 * MPI library's. Bit 63 marks a stamp; bit 62 says the sender gave no CQ data
 * of its own; bits 60-61 the pair's topology class (topology_live.h); bits
 * 32-59 the send time in 16 ns units, which wraps every 4.3 s: a receiver
 * first sees a message at its natural arrival, long before that. */
#ifndef LOGGP_OFI_STAMP_H
#define LOGGP_OFI_STAMP_H

#include <rdma/fi_eq.h>
#include <stdint.h>

#define STAMP_MARK (UINT64_C(1) << 63)
#define STAMP_NO_DATA (UINT64_C(1) << 62)
#define STAMP_SHIFT 32
#define STAMP_BITS 28
#define STAMP_UNIT_SHIFT 4
#define STAMP_CLASS_SHIFT 60

#pragma GCC visibility push(hidden)

/* The CQ data that carries `data` (if had_data), a send at send_time and the
 * pair's class (0-3). */
uint64_t stamp_encode(uint64_t data, int had_data, uint64_t send_time, unsigned pair_class);

/* The send time of a stamp, as the latest time <= now with its bits. */
uint64_t stamp_send_time(uint64_t data, uint64_t now);

#pragma GCC visibility pop

static inline unsigned stamp_class(uint64_t data)
{
    return (unsigned)(data >> STAMP_CLASS_SHIFT) & 3u;
}

static inline int is_stamped(uint64_t flags, uint64_t data)
{
    return (flags & FI_REMOTE_CQ_DATA) && (data & STAMP_MARK);
}

/* Gives a receive entry back the sender's own CQ data (or none). */
static inline void strip_stamp(uint64_t *flags, uint64_t *data)
{
    if (*data & STAMP_NO_DATA) {
        *data = 0;
        *flags &= ~(uint64_t)FI_REMOTE_CQ_DATA;
    } else {
        *data &= 0xffffffffu;
    }
}

#endif

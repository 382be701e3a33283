/* When a held receive completion is due: its natural arrival (estimated from
 * its send stamp, the least transit seen and when the CQ was last found
 * drained) plus L + (k-1)G. */
#ifndef LOGGP_OFI_DUE_H
#define LOGGP_OFI_DUE_H

#include <stdint.h>

#include "delay.h"
#include "live.h"

#define TRANSIT_BUCKETS 48

/* Windowed minimum of natural transit times (first seen - send time) per
 * size class: the current window's and the previous one's. */
typedef struct {
    uint64_t now[TRANSIT_BUCKETS], prev[TRANSIT_BUCKETS];
    uint64_t window_start;
    unsigned char sampled[TRANSIT_BUCKETS]; /* has the class seen its first sample (transit_least) */
} transit_min;

#pragma GCC visibility push(hidden)

void transit_min_init(transit_min *t, uint64_t now);

/* Adds an observed transit for `bucket` at time now and returns the least
 * transit of that bucket over this window and the last; a window lasts
 * window_ns. */
uint64_t transit_min_update(transit_min *t, int bucket, uint64_t observed, uint64_t now, uint64_t window_ns);

/* The least transit to take for a receive seen `observed` after its send.
 * Only a receive posted before the CQ was last found drained (posted_before)
 * adds its time as a sample: its message was not there yet. One posted later
 * may have found its message waiting since long before, so its time holds the
 * wait for the post (about L, on a rank that always posts after its peer
 * sends) and is no transit; it only reads the least seen, 0 when none.
 * A class's first such sample is not taken either: the first message of a
 * size pays the provider's first touch of its buffers (130 us measured
 * against 1 us after), and a rank whose later receives of that size all come
 * late would hold each of them that much too long. */
uint64_t transit_least(transit_min *t, int bucket, uint64_t observed, int posted_before, uint64_t now,
                       uint64_t window_ns);

/* The transit to count for a receive's message: its size class's least, or
 * none for a message the provider moves by rendezvous. What lands first of
 * such a message is its request to send, a control message whose transit is
 * a small message's; the class's least is the whole natural handshake of a
 * receive that waited (up to a first contact's 100 us and more), and taken
 * for the request it moved a late-posted receive's hold from its post to its
 * completion: a third flight, 3L where a blocking burst pays 2L. */
static inline uint64_t arrival_transit(uint64_t least, int rendezvous)
{
    return rendezvous ? 0 : least;
}

/* The machine's own rendezvous handshake (what shm spends copying the data
 * inside the post or the read that returned it), which the emulated
 * handshake's flights precede rather than overlap: this receive's own copy,
 * bounded by the time its post call and that read took (own_ns) and by the
 * time since its message arrived or, if later, since its post; after a late
 * post (posted after the arrival) no less than the least a receive of its
 * size class took from its post to its completion. 0 for a receive whose
 * arrival is its completion (a pre-posted one seen by a polling caller).
 * Counted from the post alone, a late receive's hold swallowed the copy: L
 * and G read 0.015-0.017 ns/B short of their slope above 4 KiB; with the
 * class's least alone, or with none for a pre-posted receive whose request
 * came before the caller read again, it swallowed what the copy took: a
 * 16 MiB receive whose rank worked 2L after asking read -0.2 to +0.9 ms at
 * L = 2 ms where LogGOPS gives +4 (test_gap_logp.py -k copy_after). */
uint64_t rendezvous_handshake_ns(transit_min *t, int bucket, uint64_t now, uint64_t posted, uint64_t arrival,
                                 uint64_t own_ns, uint64_t window_ns);

/* What a receive of `len` bytes is held beyond its natural arrival. */
uint64_t receive_hold_ns(const loggp_delays *d, uint64_t len);

/* Natural arrival of a message sent at `sent` and seen at `now`: send time +
 * least transit, raised to the last drained read (drained_at, 0: none) if the
 * receive was posted before it (posts.h: posted_before_drain), or to now if
 * the caller has been polling the drained CQ since; never later than now. */
uint64_t receive_arrival(uint64_t sent, uint64_t least_transit, uint64_t now, int posted_before,
                         uint64_t drained_at, int polling);

#pragma GCC visibility pop

#endif

/* Due-time arithmetic (due.h): pure, unit-tested in test_ofi_due.c. */
#include "due.h"

#include <string.h>

void transit_min_init(transit_min *t, uint64_t now)
{
    for (int i = 0; i < TRANSIT_BUCKETS; i++)
        t->now[i] = t->prev[i] = UINT64_MAX;
    memset(t->sampled, 0, sizeof t->sampled);
    t->window_start = now;
}

uint64_t transit_min_update(transit_min *t, int bucket, uint64_t observed, uint64_t now, uint64_t window_ns)
{
    if (now - t->window_start > window_ns) {
        memcpy(t->prev, t->now, sizeof t->prev);
        for (int i = 0; i < TRANSIT_BUCKETS; i++)
            t->now[i] = UINT64_MAX;
        t->window_start = now;
    }
    if (observed < t->now[bucket])
        t->now[bucket] = observed;
    return t->now[bucket] < t->prev[bucket] ? t->now[bucket] : t->prev[bucket];
}

uint64_t transit_least(transit_min *t, int bucket, uint64_t observed, int posted_before, uint64_t now,
                       uint64_t window_ns)
{
    int sample = posted_before && t->sampled[bucket];
    if (posted_before)
        t->sampled[bucket] = 1;
    /* UINT64_MAX never lowers a minimum: the receive only reads it */
    uint64_t least = transit_min_update(t, bucket, sample ? observed : UINT64_MAX, now, window_ns);
    return least == UINT64_MAX ? 0 : least;
}

uint64_t rendezvous_handshake_ns(transit_min *t, int bucket, uint64_t now, uint64_t posted, uint64_t arrival,
                                 uint64_t own_ns, uint64_t window_ns)
{
    int late = posted > arrival;
    uint64_t from = late ? posted : arrival;
    if (now <= from)
        return 0;
    uint64_t own = own_ns < now - from ? own_ns : now - from;
    if (!late)
        return own;
    uint64_t least = transit_min_update(t, bucket, now - posted, now, window_ns);
    return own > least ? own : least;
}

uint64_t receive_hold_ns(const loggp_delays *d, uint64_t len)
{
    return d->L + loggp_bytes_delay_ns(d->G_ps_per_byte, len);
}

uint64_t receive_arrival(uint64_t sent, uint64_t least_transit, uint64_t now, int posted_before,
                         uint64_t drained_at, int polling)
{
    uint64_t arrival = sent + least_transit;
    /* posted before the CQ was last found drained, so it was not there then;
     * a receive posted later may have found its message already waiting */
    if (drained_at && posted_before) {
        if (polling || drained_at > arrival)
            arrival = polling ? now : drained_at;
    }
    if (arrival > now)
        arrival = now;
    return arrival;
}

/* Completion queues, the holding read: receive completions wait in a FIFO
 * per CQ until natural arrival + L + (k-1)G (due.h), and until the receive
 * gap g + (k-1)G after the previous one allows; the completions of
 * rendezvous sends wait there until the emulated network has delivered them
 * (send_post.c). */
#include <string.h>

#include "layer.h"
#include "ofi.h"

/* Longest break between two reads that still counts as polling. */
#define POLL_GAP_NS 2000u
/* A held entry due within this is waited for inside the read (about one
 * polling period of MPICH's progress loop over a fast provider). */
#define SPIN_AHEAD_NS 1500u
/* A new entry due within this of now, with nothing held before it, is waited
 * for where it stands: cheaper than a trip through the ring, and it delays the
 * entries already handed out in this read by no more. */
#define SPIN_INLINE_NS 100u

/* Strips the stamp from a receive entry and returns its due time: its
 * natural arrival plus L + (k-1)G (eager), or the rendezvous handshake's
 * three flights counted from the later of arrival + L and its post. If the receive was posted and the caller
 * has polled the drained CQ ever since, the natural arrival is now; otherwise
 * it is bounded below by send time + the least transit seen for its size and
 * by the last drained read after the post. */
static uint64_t receive_due(cq_state *cs, struct fi_cq_tagged_entry *e, const loggp_delays *d, uint64_t now,
                            uint64_t drained_at, uint64_t drained_posts, int polling)
{
    if (!(e->flags & FI_RECV))
        return 0; /* a multi-receive buffer's release: no message, it only keeps its place */
    /* taken even when unused, so the post table holds only receives in flight;
     * unknown (a multi-receive buffer): posted long ago, at 0 */
    uint64_t posted_at = 0;
    int stamped = cs->has_data && is_stamped(e->flags, e->data);
    loggp_delays of_pair; /* the L and G of the sender's topology class towards us */
    if (stamped && d->topo && stamp_class(e->data)) {
        of_pair = *d;
        loggp_delays_for_class(&of_pair, stamp_class(e->data));
        d = &of_pair;
    }
    /* this message's own L (jitter.h); the FIFO keeps arrivals in order */
    uint64_t L = loggp_jittered_L(d->L);
    int posted_before =
        !(e->flags & FI_TAGGED) || receive_posted_before_drain(cs, e->op_context, drained_posts, &posted_at);
    uint64_t extra = receive_hold_ns(d, e->len) + (L - d->L); /* modulo 2^64: L + (k-1)G */
    if (!stamped)
        return extra ? now + extra : 0;
    uint64_t sent = stamp_send_time(e->data, now);
    strip_stamp(&e->flags, &e->data);
    if (!extra)
        return 0;
    /* Measured from the send even when the receive came later: a late post
     * only lengthens a sample, so the minimum stays a true transit. */
    uint64_t observed = now > sent ? now - sent : 0;
    int bucket = loggp_bucket(e->len);
    if (bucket >= TRANSIT_BUCKETS)
        bucket = TRANSIT_BUCKETS - 1;
    uint64_t window = atomic_load_explicit(&ofi_transit_window_ns, memory_order_relaxed);
    uint64_t least = transit_min_update(&cs->transit, bucket, observed, now, window);
    uint64_t arrival = receive_arrival(sent, least, now, posted_before, drained_at, polling);
    if (e->len > RENDEZVOUS_MIN_BYTES && e->len > rendezvous_above())
        return loggp_rendezvous_due(arrival, posted_at, L, loggp_bytes_delay_ns(d->G_ps_per_byte, e->len));
    return arrival + extra;
}

/* The earliest a receive owing g and (k-1)G (gap_ns, of which gap_g_ns is
 * g) may be handed over: LogP's gap as a minimum spacing between receptions
 * and LogGP's bytes added to the machine's own (delay.h), counted from the
 * previous reception (released_at); o_r and the caller's own time overlap it. */
static inline uint64_t gap_floor(uint64_t released_at, uint64_t gap_ns, uint64_t gap_g_ns, uint64_t hand_ns,
                                 uint64_t take_ns)
{
    return loggp_receive_gap_due(released_at, gap_g_ns, gap_ns - gap_g_ns, hand_ns, take_ns);
}

/* The previous reception: the last one this read handed out, if any, else
 * the last one before it. */
static inline uint64_t last_reception(const cq_state *cs, size_t receives, uint64_t reception)
{
    return receives ? reception : cs->gap_released_at;
}

static void copy_out(cq_state *cs, void *buf, size_t index, const struct fi_cq_tagged_entry *e)
{
    memcpy((char *)buf + index * cs->entry_size, e, cs->entry_size);
}

/* When an entry due at `due` (L, (k-1)G) and owing gap_ns may go, after
 * the reception at released_at (last_reception). Several receptions may go
 * in one read when the gap already spaced them (a backlog): each counts from
 * the one before it. */
static inline uint64_t entry_due(uint64_t due, uint64_t gap_ns, uint64_t gap_g_ns, uint64_t hand_ns,
                                 uint64_t take_ns, uint64_t released_at)
{
    if (atomic_load_explicit(&ofi_flushing, memory_order_relaxed))
        return 0;
    if (!gap_ns)
        return due;
    uint64_t floor = gap_floor(released_at, gap_ns, gap_g_ns, hand_ns, take_ns);
    return floor > due ? floor : due;
}

static inline uint64_t head_due(const cq_state *cs, uint64_t released_at)
{
    const held_entry *h = &cs->ring[cs->head];
    return entry_due(h->due, h->gap_ns, h->gap_g_ns, h->hand_ns, h->take_ns, released_at);
}

/* Hands out held entries due by now, in order, into buf[out..count). */
static size_t release_due(cq_state *cs, void *buf, size_t count, size_t out, fi_addr_t *src, uint64_t now,
                          size_t *receives, uint64_t *reception)
{
    while (out < count && cs->count) {
        uint64_t due = head_due(cs, last_reception(cs, *receives, *reception));
        if (due > now)
            break;
        held_entry *h = &cs->ring[cs->head];
        if (due > h->due) { /* held longer for the gap than for L and (k-1)G */
            uint64_t waited = due - h->due < h->gap_ns ? due - h->due : h->gap_ns;
            uint64_t for_g = (uint64_t)((unsigned __int128)waited * h->gap_g_ns / h->gap_ns);
            cs->gap_waited_ns[0] += for_g;
            cs->gap_waited_ns[1] += waited - for_g;
        }
        copy_out(cs, buf, out, &h->e);
        if (src)
            src[out] = h->src;
        if (h->e.flags & FI_RECV) {
            *reception = loggp_reception_at(h->due, due, now);
            (*receives)++;
        }
        out++;
        cs->head = ring_next(cs->head, cs->cap);
        atomic_store_explicit(&cs->count, cs->count - 1, memory_order_relaxed);
        atomic_fetch_sub_explicit(&ofi_held_total, 1, memory_order_relaxed);
    }
    return out;
}

ssize_t cq_read_held(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count,
                            int from, fi_addr_t *src, const loggp_delays *d)
{
    /* Clock reads cost ~25 ns each and this runs on every poll: an empty poll
     * reads the clock once. */
    size_t out = 0, receives = 0;
    uint64_t held_ns = 0, reception = 0; /* of the last receive handed out (delay.h) */
    ssize_t inner_rc = 0;
    int gapped = d->g || d->G_ps_per_byte;
    spin_lock(&cs->lock);
    uint64_t start = clock_ns(), now = start, returned = start;
    if (gapped && cs->gap_released_at && !cs->gap_back_at)
        cs->gap_back_at = start;
    /* 1. entries whose time has come, in order */
    if (cs->count)
        out = release_due(cs, buf, count, 0, src, now, &receives, &reception);
    /* 2. new entries: at most as many as there is room for, so anything that
     * need not wait can be handed out at once */
    if (out < count) {
        /* read straight into the caller's buffer: what need not wait stays in
         * place (or moves up over what is held), nothing is copied twice */
        int in_place = cs->entry_size == sizeof(struct fi_cq_tagged_entry);
        size_t first = out;
        uint64_t drained_at = atomic_load_explicit(&cs->drained_at, memory_order_relaxed);
        uint64_t drained_posts = atomic_load_explicit(&cs->drained_posts, memory_order_relaxed);
        uint64_t posts_now = atomic_load_explicit(&cs->post_count, memory_order_relaxed);
        int polling = drained_at && start - atomic_load_explicit(&cs->returned_at, memory_order_relaxed) <= POLL_GAP_NS;
        inner_rc = inner_read(o, cq, (char *)buf + first * cs->entry_size, count - first, from,
                              src ? src + first : NULL);
        int drained = inner_rc == -FI_EAGAIN || (inner_rc >= 0 && (size_t)inner_rc < count - first);
        if (inner_rc > 0)
            now = returned = clock_ns();
        uint64_t seen = now; /* when the new entries were seen */
        /* an empty read found the CQ drained as of its start: a safe (early) bound */
        atomic_store_explicit(&cs->drained_at, drained ? now : 0, memory_order_relaxed);
        if (drained)
            atomic_store_explicit(&cs->drained_posts, posts_now, memory_order_relaxed);
        uint64_t take_ns = inner_rc > 0 ? (now - start) / (uint64_t)inner_rc : 0;
        uint64_t hand_ns = inner_rc > 0 && gapped ? transit_min_update(&cs->hand, 0, take_ns, now,
                                                       atomic_load_explicit(&ofi_transit_window_ns, memory_order_relaxed))
                                                 : take_ns;
        for (ssize_t i = 0; i < inner_rc; i++) {
            char *slot = (char *)buf + (first + (size_t)i) * cs->entry_size;
            struct fi_cq_tagged_entry local, *e = (struct fi_cq_tagged_entry *)slot;
            if (!in_place) {
                memset(&local, 0, sizeof local);
                memcpy(&local, slot, cs->entry_size);
                e = &local;
            }
            fi_addr_t e_src = src ? src[first + (size_t)i] : FI_ADDR_NOTAVAIL;
            uint64_t due = 0;
            if (e->flags & (FI_RECV | FI_MULTI_RECV)) {
                /* a read that returns several entries took take_ns for each: the
                 * i-th was there by then, not only at the read's end. shm copies
                 * rendezvous data inside the read, so taking its end for every
                 * entry counted each copy twice: once before the first hold and
                 * again in the receive gap (docs/benchmarks.md) */
                uint64_t seen_i = start + (uint64_t)(i + 1) * take_ns;
                due = receive_due(cs, e, d, seen_i < seen ? seen_i : seen, drained_at, drained_posts, polling);
                if (!is_receive(e->flags))
                    due = 0; /* a peek reports without waiting, so Iprobe never blocks */
            }
            int sent = (e->flags & FI_SEND) && !(e->flags & FI_RECV);
            if (sent) {
                uint64_t natural = polling || !drained_at ? now : drained_at;
                /* the injector was busy until the send naturally completed (delay.h) */
                if (gapped)
                    loggp_send_completed(local_ns(natural));
                if (atomic_load_explicit(&cs->sends_filed, memory_order_relaxed))
                    due = send_completion_due(cs, e->op_context, natural);
            }
            uint64_t gap_ns = 0;
            if (e->flags & FI_RECV)
                gap_ns = d->g + loggp_bytes_delay_ns(d->G_ps_per_byte, e->len);
            uint64_t go = is_receive(e->flags) || due
                              ? entry_due(due, gap_ns, gap_ns ? d->g : 0, hand_ns, take_ns, last_reception(cs, receives, reception))
                              : 0;
            /* a held send keeps its place behind what is held before it;
             * other sends pass held receives */
            int must_wait = is_receive(e->flags) ? cs->count || go > now : due && (cs->count || go > now);
            if (must_wait && !cs->count && go <= now + SPIN_INLINE_NS) {
                /* due within a clock read or two (L = 1 ns, g = 1 ns): wait
                 * here, not in the ring and a later read */
                uint64_t before = now;
                while ((now = clock_ns()) < go)
                    ;
                uint64_t spun = now - before, for_gap = go > due ? go - due : 0;
                if (for_gap > spun)
                    for_gap = spun;
                held_ns += spun - for_gap;
                if (for_gap) {
                    uint64_t for_g = (uint64_t)((unsigned __int128)for_gap * d->g / gap_ns);
                    cs->gap_waited_ns[0] += for_g;
                    cs->gap_waited_ns[1] += for_gap - for_g;
                }
                returned = now;
                must_wait = 0;
            }
            if (!must_wait || ring_reserve((void **)&cs->ring, &cs->cap, &cs->head, cs->count, sizeof *cs->ring)) {
                /* handed out now (or, with no memory to hold it, rather than lost) */
                if (e != (struct fi_cq_tagged_entry *)((char *)buf + out * cs->entry_size))
                    copy_out(cs, buf, out, e);
                if (src)
                    src[out] = e_src;
                if (!must_wait && gapped && is_receive(e->flags) && (e->flags & FI_RECV)) /* not there when last found drained */
                    reception = loggp_reception_at(due > drained_at ? due : drained_at, go, now);
                receives += !must_wait && is_receive(e->flags) && (e->flags & FI_RECV);
                out++;
                continue;
            }
            held_entry *h = &cs->ring[ring_index(cs->head, cs->count, cs->cap)];
            h->e = *e;
            h->src = e_src;
            h->due = due;
            h->gap_ns = gap_ns;
            h->gap_g_ns = gap_ns ? d->g : 0;
            h->take_ns = take_ns;
            h->hand_ns = hand_ns;
            if (due > now)
                held_ns += due - now;
            atomic_store_explicit(&cs->count, cs->count + 1, memory_order_relaxed);
            atomic_fetch_add_explicit(&ofi_held_total, 1, memory_order_relaxed);
        }
    }
    /* 3. a head entry due sooner than the caller would poll again is waited
     * for here: releasing it on the next poll would add half a polling
     * period to every message on average */
    if (!out && cs->count) {
        uint64_t due = head_due(cs, last_reception(cs, receives, reception));
        if (due <= now + SPIN_AHEAD_NS) {
            while ((now = clock_ns()) < due)
                ;
            out = release_due(cs, buf, count, 0, src, now, &receives, &reception);
            returned = now;
        }
    }
    int queue_empty = cs->count == 0;
    if (receives) {
        cs->gap_released_at = reception ? reception : returned;
        cs->gap_overhead_ns = d->o_r * receives;
        cs->gap_back_at = 0;
    }
    uint64_t gap_waited_g = cs->gap_waited_ns[0], gap_waited_bytes = cs->gap_waited_ns[1];
    cs->gap_waited_ns[0] = cs->gap_waited_ns[1] = 0;
    spin_unlock(&cs->lock);

    if (held_ns || gap_waited_g || gap_waited_bytes || (receives && d->o_r)) {
        loggp_counters *c = loggp_my_counters();
        /* a hold is L's if L is set, else (k-1)G's */
        c->injected_ns[d->L || d->topo ? LOGGP_INJ_LATENCY : LOGGP_INJ_GAP_PER_BYTE] += held_ns;
        c->injected_ns[LOGGP_INJ_GAP] += gap_waited_g;
        c->injected_ns[LOGGP_INJ_GAP_PER_BYTE] += gap_waited_bytes;
        if (receives && d->o_r) {
            /* from when the completions were taken, so the layer's own work is inside o_r */
            uint64_t o_r = loggp_jitter_o_on ? loggp_jitter_draw_o(d->o_r * receives) : d->o_r * receives;
            uint64_t spun_to = loggp_spin_overhead_until(local_ns(returned) + o_r);
            returned += spun_to - local_ns(returned);
            c->injected_ns[LOGGP_INJ_O_R] += o_r;
        }
    }
    atomic_store_explicit(&cs->returned_at, returned, memory_order_relaxed);
    if (out)
        return (ssize_t)out;
    /* An error waits behind held entries, so errors keep their place in the queue. */
    if (inner_rc == -FI_EAVAIL && !queue_empty)
        return -FI_EAGAIN;
    return inner_rc < 0 ? inner_rc : -FI_EAGAIN;
}

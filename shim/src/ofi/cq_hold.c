/* Completion queues, the holding read: receive completions wait in a FIFO
 * per CQ until natural arrival + L + (k-1)G (due.h), and until the receive
 * gap g + (k-1)G after the previous one allows; the completions of
 * rendezvous sends wait in a FIFO of their own until the emulated network has
 * delivered them (send_post.c), so that neither waits for the other. */
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
 * three flights counted from the later of arrival + L and its post, and its
 * own copy (read_ns: the provider read's time). If the receive was posted and the caller
 * has polled the drained CQ ever since, the natural arrival is now; otherwise
 * it is bounded below by send time + the least transit seen for its size and
 * by the last drained read after the post. With g alone nothing is held and
 * the due time is that arrival, which the next reception's gap counts from. */
static uint64_t receive_due(cq_state *cs, struct fi_cq_tagged_entry *e, const loggp_delays *d, uint64_t now,
                            uint64_t drained_at, uint64_t drained_posts, int polling, uint64_t read_ns)
{
    if (!(e->flags & FI_RECV))
        return 0; /* a multi-receive buffer's release: no message, it only keeps its place */
    /* taken even when unused, so the post table holds only receives in flight;
     * unknown (a multi-receive buffer): posted long ago, at 0 */
    uint64_t posted_at = 0, post_ns = 0;
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
        !(e->flags & FI_TAGGED) || receive_posted_before_drain(cs, e->op_context, drained_posts, &posted_at, &post_ns);
    uint64_t extra = receive_hold_ns(d, e->len) + (L - d->L); /* modulo 2^64: L + (k-1)G */
    if (!stamped)
        return extra ? now + extra : 0;
    uint64_t sent = stamp_send_time(e->data, now);
    strip_stamp(&e->flags, &e->data);
    if (!extra && !d->g)
        return 0;
    /* a sample only from a receive that waited for its message (transit_least) */
    uint64_t observed = now > sent ? now - sent : 0;
    int bucket = loggp_bucket(e->len);
    if (bucket >= TRANSIT_BUCKETS)
        bucket = TRANSIT_BUCKETS - 1;
    uint64_t window = atomic_load_explicit(&ofi_transit_window_ns, memory_order_relaxed);
    uint64_t least = transit_least(&cs->transit, bucket, observed, posted_before, now, window);
    int rendezvous = extra && e->len > RENDEZVOUS_MIN_BYTES && e->len > rendezvous_above();
    uint64_t arrival = receive_arrival(sent, arrival_transit(least, rendezvous), now, posted_before, drained_at,
                                       polling);
    if (rendezvous)
        return loggp_rendezvous_due(arrival, posted_at, L, loggp_bytes_delay_ns(d->G_ps_per_byte, e->len),
                                    rendezvous_handshake_ns(&cs->handshake, bucket, now, posted_at, arrival,
                                                            post_ns + read_ns, window));
    /* g alone: no hold, but the arrival the next reception's gap counts from */
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

/* Receives (and multi-receive releases) held: the entries of the first FIFO. */
static inline size_t receives_held(const cq_state *cs)
{
    return atomic_load_explicit(&cs->count, memory_order_relaxed) - cs->send_count;
}

static inline uint64_t head_due(const cq_state *cs, uint64_t released_at)
{
    const held_entry *h = &cs->ring[cs->head];
    return entry_due(h->due, h->gap_ns, h->gap_g_ns, h->hand_ns, h->take_ns, released_at);
}

/* When the first held send may go (sends owe no gap). */
static inline uint64_t send_head_due(const cq_state *cs)
{
    return entry_due(cs->send_ring[cs->send_head].due, 0, 0, 0, 0, 0);
}

/* The soonest either FIFO's head may go, or UINT64_MAX with nothing held. */
static inline uint64_t next_due(const cq_state *cs, uint64_t released_at)
{
    uint64_t due = receives_held(cs) ? head_due(cs, released_at) : UINT64_MAX;
    if (cs->send_count) {
        uint64_t send_due = send_head_due(cs);
        if (send_due < due)
            due = send_due;
    }
    return due;
}

/* Splits time a reception waited for the gap into g's share and (k-1)G's, for the profile. */
static inline void count_gap_wait(cq_state *cs, uint64_t waited, uint64_t gap_g_ns, uint64_t gap_ns)
{
    uint64_t for_g = (uint64_t)((unsigned __int128)waited * gap_g_ns / gap_ns);
    cs->gap_waited_ns[0] += for_g;
    cs->gap_waited_ns[1] += waited - for_g;
}

/* Hands one held entry to buf[out]: the entry leaves the hold. */
static void hand_held(cq_state *cs, void *buf, size_t out, fi_addr_t *src, const held_entry *h)
{
    copy_out(cs, buf, out, &h->e);
    if (src)
        src[out] = h->src;
    atomic_store_explicit(&cs->count, cs->count - 1, memory_order_relaxed);
    atomic_fetch_sub_explicit(&ofi_held_total, 1, memory_order_relaxed);
}

/* Hands out held entries due by now into buf[out..count): each FIFO in its
 * order, the two merged by due time (so entries that fell due while the
 * caller was away leave as they would have one by one). */
static size_t release_due(cq_state *cs, void *buf, size_t count, size_t out, fi_addr_t *src, uint64_t now,
                          size_t *receives, uint64_t *reception)
{
    while (out < count && cs->count) {
        uint64_t due = receives_held(cs) ? head_due(cs, last_reception(cs, *receives, *reception)) : UINT64_MAX;
        uint64_t send_due = cs->send_count ? send_head_due(cs) : UINT64_MAX;
        if (send_due < due) {
            if (send_due > now)
                break;
            hand_held(cs, buf, out++, src, &cs->send_ring[cs->send_head]);
            cs->send_head = ring_next(cs->send_head, cs->send_cap);
            cs->send_count--;
            continue;
        }
        if (due > now)
            break;
        held_entry *h = &cs->ring[cs->head];
        if (due > h->due) /* held longer for the gap than for L and (k-1)G */
            count_gap_wait(cs, due - h->due < h->gap_ns ? due - h->due : h->gap_ns, h->gap_g_ns, h->gap_ns);
        if (h->e.flags & FI_RECV) {
            *reception = loggp_reception_at(h->due, due, now);
            (*receives)++;
        }
        hand_held(cs, buf, out++, src, h);
        cs->head = ring_next(cs->head, cs->cap);
    }
    return out;
}

/* What one holding read carries from step to step. Clock reads cost ~25 ns
 * each and this runs on every poll: an empty poll reads the clock once. */
typedef struct {
    cq_state *cs;
    void *buf;
    size_t count;
    fi_addr_t *src;
    const loggp_delays *d;
    int gapped;         /* g or G is set: receptions are spaced */
    size_t out;         /* entries handed out so far */
    size_t receives;    /* of which receptions */
    uint64_t reception; /* the last reception handed out (delay.h) */
    uint64_t held_ns;   /* time the entries taken in this read wait, for the profile */
    uint64_t start, now;
    uint64_t returned;  /* when the provider last returned entries */
} held_read;

/* The entries one provider read returned, and what was known of the CQ before it. */
typedef struct {
    size_t first;      /* where they start in the caller's buffer */
    int in_place;      /* the caller's entries are fi_cq_tagged_entry: no copy */
    int polling;       /* the caller polled the drained CQ ever since */
    uint64_t drained_at, drained_posts;
    uint64_t seen;     /* when they were seen */
    uint64_t take_ns;  /* the provider's time per entry of this read */
    uint64_t hand_ns;  /* its least time per entry lately */
} provider_batch;

/* Waits on the corrected clock until `until`, there and then: cheaper than a
 * trip through the ring and a later read. Returns the time reached. */
static inline uint64_t wait_until(uint64_t until)
{
    int64_t correction = atomic_load_explicit(&ofi_clock_correction, memory_order_relaxed);
    return loggp_spin_until_unpaused(until - (uint64_t)correction) + (uint64_t)correction;
}

/* Step 1: the provider's read, into the caller's buffer after what was
 * already handed out, and the CQ's drained bookkeeping. */
static ssize_t read_provider(held_read *r, provider_batch *b, const struct fi_ops_cq *o, struct fid_cq *cq, int from)
{
    cq_state *cs = r->cs;
    b->first = r->out;
    b->in_place = cs->entry_size == sizeof(struct fi_cq_tagged_entry);
    b->drained_at = atomic_load_explicit(&cs->drained_at, memory_order_relaxed);
    b->drained_posts = atomic_load_explicit(&cs->drained_posts, memory_order_relaxed);
    uint64_t posts_now = atomic_load_explicit(&cs->post_count, memory_order_relaxed);
    b->polling = b->drained_at &&
                 r->start - atomic_load_explicit(&cs->returned_at, memory_order_relaxed) <= POLL_GAP_NS;
    ssize_t rc = inner_read(o, cq, (char *)r->buf + b->first * cs->entry_size, r->count - b->first, from,
                            r->src ? r->src + b->first : NULL);
    int drained = rc == -FI_EAGAIN || (rc >= 0 && (size_t)rc < r->count - b->first);
    if (rc > 0)
        r->now = r->returned = clock_ns();
    b->seen = r->now;
    /* an empty read found the CQ drained as of its start: a safe (early) bound */
    atomic_store_explicit(&cs->drained_at, drained ? r->now : 0, memory_order_relaxed);
    if (drained)
        atomic_store_explicit(&cs->drained_posts, posts_now, memory_order_relaxed);
    b->take_ns = rc > 0 ? (r->now - r->start) / (uint64_t)rc : 0;
    b->hand_ns = rc > 0 && r->gapped ? transit_min_update(&cs->hand, 0, b->take_ns, r->now,
                                                          atomic_load_explicit(&ofi_transit_window_ns, memory_order_relaxed))
                                     : b->take_ns;
    return rc;
}

/* Step 2a: when the i-th new entry is due for L and (k-1)G (receives) or for
 * the handshake (rendezvous sends); 0 when it need not wait for either. */
static uint64_t new_entry_due(held_read *r, const provider_batch *b, struct fi_cq_tagged_entry *e, ssize_t i)
{
    cq_state *cs = r->cs;
    uint64_t due = 0;
    if (e->flags & (FI_RECV | FI_MULTI_RECV)) {
        /* a read that returns several entries took take_ns for each: the
         * i-th was there by then, not only at the read's end. shm copies
         * rendezvous data inside the read, so taking its end for every
         * entry counted each copy twice: once before the first hold and
         * again in the receive gap (docs/benchmarks.md) */
        uint64_t seen_i = r->start + (uint64_t)(i + 1) * b->take_ns;
        due = receive_due(cs, e, r->d, seen_i < b->seen ? seen_i : b->seen, b->drained_at, b->drained_posts,
                          b->polling, b->seen - r->start);
        if (!is_receive(e->flags))
            due = 0; /* a peek reports without waiting, so Iprobe never blocks */
    }
    int sent = (e->flags & FI_SEND) && !(e->flags & FI_RECV);
    if (sent) {
        uint64_t natural = b->polling || !b->drained_at ? r->now : b->drained_at;
        /* the injector was busy until the send naturally completed (delay.h) */
        if (r->gapped)
            loggp_send_completed(local_ns(natural));
        if (atomic_load_explicit(&cs->sends_filed, memory_order_relaxed))
            due = send_completion_due(cs, e->op_context, natural);
    }
    return due;
}

/* Step 2b: an entry due within a clock read or two (L = 1 ns, g = 1 ns),
 * with nothing held before it, is waited for where it stands. */
static void wait_in_place(held_read *r, uint64_t go, uint64_t due, uint64_t gap_ns)
{
    uint64_t before = r->now;
    r->now = wait_until(go);
    uint64_t spun = r->now - before, for_gap = go > due ? go - due : 0;
    if (for_gap > spun)
        for_gap = spun;
    r->held_ns += spun - for_gap;
    if (for_gap)
        count_gap_wait(r->cs, for_gap, r->d->g, gap_ns);
    r->returned = r->now;
}

/* Step 2c: an entry that need not wait goes to the caller now. */
static void hand_out_new(held_read *r, const provider_batch *b, const struct fi_cq_tagged_entry *e, fi_addr_t e_src,
                         int waited, uint64_t due, uint64_t go)
{
    cq_state *cs = r->cs;
    if (e != (const struct fi_cq_tagged_entry *)((char *)r->buf + r->out * cs->entry_size))
        copy_out(cs, r->buf, r->out, e);
    if (r->src)
        r->src[r->out] = e_src;
    int reception = !waited && is_receive(e->flags) && (e->flags & FI_RECV);
    /* a stamped receive's due holds its arrival (receive_due, which bounds
     * it by the drained read only if the receive was posted before it: a
     * later one may have found its message waiting); else it was not there
     * when the CQ was last found drained */
    if (reception && r->gapped)
        r->reception = loggp_reception_at(due ? due : b->drained_at, go, r->now);
    r->receives += reception;
    r->out++;
}

/* Step 2d: an entry that must wait goes to the back of its FIFO (its room
 * reserved by hold_room). */
static void hold_new(held_read *r, const provider_batch *b, const struct fi_cq_tagged_entry *e, fi_addr_t e_src,
                     uint64_t due, uint64_t gap_ns)
{
    cq_state *cs = r->cs;
    held_entry *h;
    if (is_receive(e->flags)) {
        h = &cs->ring[ring_index(cs->head, receives_held(cs), cs->cap)];
    } else {
        h = &cs->send_ring[ring_index(cs->send_head, cs->send_count, cs->send_cap)];
        cs->send_count++;
    }
    h->e = *e;
    h->src = e_src;
    h->due = due;
    h->gap_ns = gap_ns;
    h->gap_g_ns = gap_ns ? r->d->g : 0;
    h->take_ns = b->take_ns;
    h->hand_ns = b->hand_ns;
    if (due > r->now)
        r->held_ns += due - r->now;
    atomic_store_explicit(&cs->count, cs->count + 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&ofi_held_total, 1, memory_order_relaxed);
}

/* Room at the back of the FIFO an entry waits in; 0 on success. */
static int hold_room(cq_state *cs, uint64_t flags)
{
    if (is_receive(flags))
        return ring_reserve((void **)&cs->ring, &cs->cap, &cs->head, receives_held(cs), sizeof *cs->ring);
    return ring_reserve((void **)&cs->send_ring, &cs->send_cap, &cs->send_head, cs->send_count,
                        sizeof *cs->send_ring);
}

/* Step 2: the i-th new entry handed out, waited for in place, or held. */
static void place_new_entry(held_read *r, const provider_batch *b, ssize_t i)
{
    cq_state *cs = r->cs;
    const loggp_delays *d = r->d;
    char *slot = (char *)r->buf + (b->first + (size_t)i) * cs->entry_size;
    struct fi_cq_tagged_entry local, *e = (struct fi_cq_tagged_entry *)slot;
    if (!b->in_place) {
        memset(&local, 0, sizeof local);
        memcpy(&local, slot, cs->entry_size);
        e = &local;
    }
    fi_addr_t e_src = r->src ? r->src[b->first + (size_t)i] : FI_ADDR_NOTAVAIL;
    uint64_t due = new_entry_due(r, b, e, i);
    uint64_t gap_ns = e->flags & FI_RECV ? d->g + loggp_bytes_delay_ns(d->G_ps_per_byte, e->len) : 0;
    uint64_t go = is_receive(e->flags) || due
                      ? entry_due(due, gap_ns, gap_ns ? d->g : 0, b->hand_ns, b->take_ns,
                                  last_reception(cs, r->receives, r->reception))
                      : 0;
    /* a receive keeps its place behind the receives held before it, a held
     * send behind the sends; a send that owes nothing passes both */
    size_t ahead = is_receive(e->flags) ? receives_held(cs) : cs->send_count;
    int must_wait = is_receive(e->flags) ? ahead || go > r->now : due && (ahead || go > r->now);
    if (must_wait && !ahead && go <= r->now + SPIN_INLINE_NS) {
        wait_in_place(r, go, due, gap_ns);
        must_wait = 0;
    }
    /* with no memory to hold it, an entry is handed out rather than lost */
    if (!must_wait || hold_room(cs, e->flags))
        hand_out_new(r, b, e, e_src, must_wait, due, go);
    else
        hold_new(r, b, e, e_src, due, gap_ns);
}

/* Step 3: a head entry due sooner than the caller would poll again is
 * waited for here: releasing it on the next poll would add half a polling
 * period to every message on average. */
static void wait_for_head(held_read *r)
{
    cq_state *cs = r->cs;
    uint64_t due = next_due(cs, last_reception(cs, r->receives, r->reception));
    if (due > r->now + SPIN_AHEAD_NS)
        return;
    r->now = wait_until(due);
    r->out = release_due(cs, r->buf, r->count, 0, r->src, r->now, &r->receives, &r->reception);
    r->returned = r->now;
}

/* Step 4: what this read injected, into the profile, and o_r for its
 * receptions, spun once the layer's work is done. Returns when o_r ended. */
static uint64_t spend_o_r_and_count(const held_read *r, uint64_t gap_waited_g, uint64_t gap_waited_bytes)
{
    const loggp_delays *d = r->d;
    size_t receives = r->receives;
    uint64_t held_ns = r->held_ns, returned = r->returned;
    if (held_ns || gap_waited_g || gap_waited_bytes || (receives && d->o_r)) {
        loggp_counters *c = loggp_my_counters();
        /* a hold is L's if L is set, else (k-1)G's */
        c->injected_ns[d->L || d->topo ? LOGGP_INJ_LATENCY : LOGGP_INJ_GAP_PER_BYTE] += held_ns;
        c->injected_ns[LOGGP_INJ_GAP] += gap_waited_g;
        c->injected_ns[LOGGP_INJ_GAP_PER_BYTE] += gap_waited_bytes;
        if (receives && d->o_r) {
            /* from now, after the layer's own work: the armed baseline does that work too, so
             * o_r adds o_r over it rather than swallowing it */
            uint64_t o_r = loggp_jitter_o_drawn() ? loggp_jitter_draw_o(d->o_r * receives) : d->o_r * receives;
            uint64_t spun_to = loggp_spin_overhead_ns(o_r);
            returned += spun_to - local_ns(returned);
            c->injected_ns[LOGGP_INJ_O_R] += o_r;
        }
    }
    return returned;
}

ssize_t cq_read_held(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count,
                            int from, fi_addr_t *src, const loggp_delays *d)
{
    held_read r = {.cs = cs, .buf = buf, .count = count, .src = src, .d = d, .gapped = d->g || d->G_ps_per_byte};
    ssize_t inner_rc = 0;
    spin_lock(&cs->lock);
    r.start = r.now = r.returned = clock_ns();
    if (r.gapped && cs->gap_released_at && !cs->gap_back_at)
        cs->gap_back_at = r.start;
    /* held entries whose time has come, in order */
    if (cs->count)
        r.out = release_due(cs, buf, count, 0, src, r.now, &r.receives, &r.reception);
    /* new entries: at most as many as there is room for, so anything that
     * need not wait can be handed out at once */
    if (r.out < count) {
        provider_batch b;
        inner_rc = read_provider(&r, &b, o, cq, from);
        if (inner_rc <= 0 && !r.out && !cs->count) {
            /* an empty poll with nothing held, the read that runs most
             * often: it handed out, spun and counted nothing */
            spin_unlock(&cs->lock);
            atomic_store_explicit(&cs->returned_at, r.returned, memory_order_relaxed);
            return inner_rc < 0 ? inner_rc : -FI_EAGAIN;
        }
        for (ssize_t i = 0; i < inner_rc; i++)
            place_new_entry(&r, &b, i);
    }
    if (!r.out && cs->count)
        wait_for_head(&r);
    int queue_empty = cs->count == 0;
    if (r.receives) {
        cs->gap_released_at = r.reception ? r.reception : r.returned;
        cs->gap_overhead_ns = d->o_r * r.receives;
        cs->gap_back_at = 0;
    }
    uint64_t gap_waited_g = cs->gap_waited_ns[0], gap_waited_bytes = cs->gap_waited_ns[1];
    cs->gap_waited_ns[0] = cs->gap_waited_ns[1] = 0;
    spin_unlock(&cs->lock);

    uint64_t returned = spend_o_r_and_count(&r, gap_waited_g, gap_waited_bytes);
    atomic_store_explicit(&cs->returned_at, returned, memory_order_relaxed);
    if (r.out)
        return (ssize_t)r.out;
    /* An error waits behind held entries, so errors keep their place in the queue. */
    if (inner_rc == -FI_EAVAIL && !queue_empty)
        return -FI_EAGAIN;
    return inner_rc < 0 ? inner_rc : -FI_EAGAIN;
}

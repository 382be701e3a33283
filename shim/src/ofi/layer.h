/* Private header of the libfabric layer (shim/src/ofi/): the state every
 * wrapped object carries, how a hook finds it, and what the files share.
 * One fi object class per file: fabric.c (fabrics, domains), ep.c
 * (endpoints), av.c and peers.c (addresses and their topology classes),
 * tagged.c / msg.c / rma.c / atomic.c (transfer hooks, each
 * with its ops table below them), cq.c and cq_hold.c (completion queues),
 * cntr.c (counters), provider.c (entry points and layer state), switch.c
 * (provider's tables at zero knobs, ours otherwise), recv_post.c (which
 * post each receive was). The pure arithmetic sits in stamp.c, ring.c, due.c,
 * posts.c and clock.c, with unit tests (shim/tests/test_ofi_*.c). */
#ifndef LOGGP_OFI_LAYER_H
#define LOGGP_OFI_LAYER_H

#include <rdma/fabric.h>
#include <rdma/fi_atomic.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>
#include <rdma/fi_tagged.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "clock.h"
#include "delay.h"
#include "due.h"
#include "jitter.h"
#include "live.h"
#include "ofi.h"
#include "posts.h"
#include "profile.h"
#include "ring.h"
#include "stamp.h"
#include "topology_live.h"

/* Nothing here is exported from libloggp.so: the names are the layer's own. */
#pragma GCC visibility push(hidden)

/* ---- layer state (provider.c) ---- */

extern _Atomic int ofi_layer_enabled;
extern _Atomic int ofi_layer_active;
/* Set from MPI_Finalize on: everything held is handed out at once, since the
 * MPI library may poll only until the completions it waits for are out, and a
 * freed request's completion held behind them would never reach it. */
extern _Atomic int ofi_flushing;
/* Receive completions held across all CQs, for the flush. */
extern _Atomic long ofi_held_total;
/* Creation calls nested inside a wrapped creation call belong to a layered
 * provider's inner objects (rxm over tcp): leave those alone, so each message
 * is inflated once. */
extern __thread int ofi_creation_depth __attribute__((tls_model("initial-exec")));
/* A provider may implement one entry through another of its own table
 * (read through readfrom, send through sendmsg): inside a hook, calls that come
 * back through a patched table go straight to the provider, so nothing is
 * delayed twice and nothing recurses. */
extern __thread int ofi_in_hook __attribute__((tls_model("initial-exec")));

/* Records the provider's name the first time an endpoint is wrapped. */
void ofi_note_provider(const struct fi_info *info);

/* A stamp of a send of topology class peer leaving now (stamp.h). */
static inline uint64_t stamp(uint64_t data, int had_data, unsigned peer)
{
    return stamp_encode(data, had_data, clock_ns(), peer);
}

/* ---- the topology class of each destination (peers.c) ---- */

/* Indexed by libfabric address (an AV table's index); filled after MPI_Init. */
extern uint8_t *ofi_peer_classes;
extern _Atomic size_t ofi_peer_count; /* published after the classes (release) */

static inline unsigned peer_class(fi_addr_t addr)
{
    return addr < atomic_load_explicit(&ofi_peer_count, memory_order_acquire) ? ofi_peer_classes[addr] : 0;
}

/* The first reliable-datagram endpoint, whose name and address vector
 * (ep_state.av) map addresses to ranks (fabric.c, ep.c tell). */
void ofi_note_endpoint(struct fid_ep *ep);
void ofi_forget_endpoint(struct fid_ep *ep);

/* Address vectors (av.c): the domain's av_open, and a copy of the names
 * inserted into an AV it opened, name_len bytes per address (the caller
 * frees *names); returns the number of addresses, 0 if it knows none. */
int ofi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av, void *ctx);
size_t ofi_av_names(struct fid_av *av, unsigned char **names, size_t *name_len);

/* ---- patched ops tables (table.c) ---- */

/* Each patched table copy sits right behind this header, so a hook finds the
 * provider's table and the object's state in O(1). */
typedef struct {
    void *orig;  /* the provider's table */
    void *state; /* the object's state */
} table_header;

#define HEADER(table) ((table_header *)(table) - 1)
#define ORIG(table, type) ((const type *)HEADER(table)->orig)
#define STATE(table, type) ((type *)HEADER(table)->state)

/* Does a provider table of run-time size `size` hold a non-NULL `member`? */
#define HAS_ENTRY(table, type, member) \
    ((table) && offsetof(type, member) < ((const type *)(table))->size && ((const type *)(table))->member)

/* Points a patched table's entry at a hook if the provider has that entry. */
#define HOOK(tbl, type, member, fn)                     \
    do {                                                \
        if (HAS_ENTRY(HEADER(tbl)->orig, type, member)) \
            (tbl)->member = (fn);                       \
    } while (0)

/* Replaces *slot_ptr (a table pointer inside a provider object) by a copy
 * made with the table's run-time size; NULL if there is none or no memory. */
void *patch_table(void *slot_ptr, size_t known_size, void *state);
void free_table(void *table);

/* ---- switching hot tables between the provider's and ours (switch.c) ---- */

/* MPICH's inline fi_* calls read an object's table pointer on every call, so
 * while every knob is zero the hot tables (an endpoint's tagged and msg
 * tables, a CQ's ops) point at the provider's own and the layer costs
 * nothing; when a knob becomes nonzero one pointer store per table brings
 * ours back. Hooks therefore find their state through fid.ops, which stays
 * ours. Counters, RMA and atomics stay patched: a counter counts an operation
 * only if the layer saw it posted. A CQ still holding completions stays
 * patched until drained, then switches itself back. */
typedef struct switch_node {
    struct switch_node *next, *prev;
    void (*apply)(struct switch_node *node, int armed); /* sets the tables; called under the registry lock */
} switch_node;

/* Adds an object and sets its tables for the knobs in force now. */
void switch_register(switch_node *node);
/* Removes it (before its provider object is closed). */
void switch_unregister(switch_node *node);
/* Sets the tables of every registered object for the knobs in force. */
void switch_all(void);
/* Re-applies one object's tables for the knobs in force (after it changed). */
void switch_refresh(switch_node *node);

/* A table pointer as MPICH's inline calls read it. */
static inline void set_table(void *slot, void *table)
{
    __atomic_store_n((void **)slot, table, __ATOMIC_RELEASE);
}

/* ---- counters (cntr.c) ---- */

typedef struct {
    atomic_flag lock;
    uint64_t *due; /* FIFO of due times of tracked operations */
    size_t cap, head, count;
    uint64_t due_count; /* operations counted as done by time */
    uint64_t base;      /* value the counter started from */
    _Atomic size_t pending;
    void *fid_ops, *ops;
} cntr_state;

void patch_cntr(struct fid_cntr *cntr);
/* The layer's state of a counter it wraps, or NULL. */
cntr_state *cntr_state_of(struct fid_cntr *cntr);
/* Records an operation that will bump cs; due == 0 means done already. */
void cntr_track(cntr_state *cs, uint64_t due);

/* ---- completion queues (cq.c, cq_hold.c) ---- */

typedef struct {
    struct fi_cq_tagged_entry e;
    fi_addr_t src;
    uint64_t due;
    uint64_t gap_ns;   /* g + (k-1)G this receive owes after the previous one */
    uint64_t gap_g_ns; /* the g in it */
    uint64_t take_ns;  /* its share of the read that returned it (which may hold a copy) */
    uint64_t hand_ns;  /* the provider's least time to hand over one completion, lately */
} held_entry;

typedef struct {
    atomic_flag lock;
    size_t entry_size;
    int has_flags, has_data;
    /* Held receives (and multi-receive buffer releases, which keep their place
     * behind them) in one FIFO, held sends in another: a send's completion owes
     * its own handshake, not the receives that happen to be held before it. */
    held_entry *ring;
    size_t cap, head;
    held_entry *send_ring;
    size_t send_cap, send_head, send_count;
    _Atomic size_t count; /* held in both */
    /* Natural transit time (first seen - send time) per size class: a windowed
     * minimum, which also absorbs a constant clock offset between hosts. */
    transit_min transit;
    /* The least per-entry time of a read lately (bucket 0): the provider's
     * own hand-over time, which g's spacing counts on top of (delay.h). */
    transit_min hand;
    /* Least time shm took for a rendezvous after a late post, per size class
     * (rendezvous_handshake_ns). */
    transit_min handshake;
    /* End of the last read through this layer that left the CQ drained
     * (0: unknown). A receive posted before then and seen later was not there
     * yet, which bounds its natural arrival from below even when transit times
     * vary widely; reads this layer skips (zero knobs) cannot make it wrong. */
    _Atomic uint64_t drained_at;
    /* Receives posted to endpoints bound to this CQ so far, which post each
     * outstanding one was (posts.h; allocated at the first post a hold needs),
     * and how many had been posted when the last drained read began. */
    _Atomic uint64_t post_count;
    _Atomic(post_slot *) posts;
    _Atomic uint64_t drained_posts;
    /* Rendezvous-size sends whose completions reach this CQ (send_post.c),
     * and how many were filed: a read looks a send up only while some are. */
    _Atomic(post_slot *) sends;
    _Atomic uint64_t sends_filed;
    /* When the last read returned to the caller: a caller back within
     * POLL_GAP_NS was polling, so without the layer it would have seen a
     * message no earlier than now. */
    _Atomic uint64_t returned_at;
    /* The receive gap: when the last receive was handed to the caller, the
     * o_r spent on it (which the gap overlaps), and when the caller came back
     * for more (0: not yet). */
    uint64_t gap_released_at, gap_overhead_ns, gap_back_at;
    uint64_t gap_waited_ns[2]; /* this read's waits for g and for (k-1)G, for the counters */
    void *fid_ops, *ops;
    struct fid_cq *cq;
    switch_node node;
} cq_state;

/* A CQ's state, through its fid ops (which stay ours). */
static inline cq_state *cq_state_of(struct fid_cq *cq)
{
    return STATE(cq->fid.ops, cq_state);
}

/* While every knob is zero and nothing is held: back to the provider's table. */
void cq_switch_home(cq_state *cs);

void patch_cq(struct fid_cq *cq, enum fi_cq_format format);

static inline ssize_t inner_read(const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count, int from,
                                 fi_addr_t *src)
{
    return from ? o->readfrom(cq, buf, count, src) : o->read(cq, buf, count);
}

static inline int is_receive(uint64_t flags)
{
    return (flags & (FI_RECV | FI_MULTI_RECV)) && !(flags & FI_PEEK);
}

/* A read that may hold receives for L, (k-1)G and g (cq_hold.c). */
ssize_t cq_read_held(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf, size_t count, int from,
                     fi_addr_t *src, const loggp_delays *knobs);

/* The layer's state of a CQ it wraps, or NULL. */
cq_state *cq_state_if_ours(struct fid *fid);

/* ---- receive posts (recv_post.c) ---- */

/* No provider moves messages of up to this many bytes by rendezvous (shm
 * starts above it): smaller posts need no post time. */
#define RENDEZVOUS_MIN_BYTES 4096u

/* Messages above this many bytes the provider moves by rendezvous: shm past
 * its inject size (SMR_INJECT_SIZE, 4096 in libfabric 1.17-2.5) copies the
 * data only once the receiver has matched (docs/protocols.md). Other
 * providers are taken as eager. */
static inline uint64_t rendezvous_above(void)
{
    const char *p = loggp_ofi_provider();
    return p && strcmp(p, "shm") == 0 ? 4096u : UINT64_MAX;
}

/* Files a tagged receive of a buffer of len bytes on the CQ its completion
 * will reach (only while a hold needs it); its post time only if len is
 * large enough for a rendezvous (cq_hold.c), which a clock read costs.
 * Returns the slot of such a post (else NULL) for note_receive_posted. */
post_slot *note_receive_post_on(cq_state *cq, void *context, uint64_t len);
/* When the provider's post call of that receive returned: shm copies a
 * message that was waiting inside the post, so the post's length bounds
 * that copy (rendezvous_handshake_ns). Inline: every receive post passes
 * here, and at zero knobs slot is NULL. */
static inline void note_receive_posted(post_slot *slot, void *context)
{
    if (slot && slot->context == (uint64_t)(uintptr_t)context)
        slot->done_ns = clock_ns();
}
/* Did the receive of this completion come before the CQ's last drained read
 * (posts.h)? Sets *posted_at to its post time and *post_ns to how long its
 * post call took, if taken (else leaves them). Forgets it. */
int receive_posted_before_drain(cq_state *cs, void *context, uint64_t drained_posts, uint64_t *posted_at,
                                uint64_t *post_ns);

static inline post_slot *note_receive_post(_Atomic(cq_state *) *recv_cq, void *context, uint64_t len)
{
    if (context && loggp_live_active()) {
        cq_state *cq = atomic_load_explicit(recv_cq, memory_order_relaxed);
        if (cq)
            return note_receive_post_on(cq, context, len);
    }
    return NULL;
}

/* ---- send posts (send_post.c) ---- */

/* Files a send of `bytes` posted at `posted` (clock_ns) with context on the CQ
 * its completion will reach, if the provider moves it by rendezvous and d
 * (the destination's L and G) makes its completion owe anything. */
void note_send_post_on(cq_state *cq, void *context, uint64_t posted, uint64_t bytes, const loggp_delays *d);
/* When the completion of the send with this context, found at `natural`,
 * is due (docs/protocols.md); 0 if it owes nothing. Forgets it. */
uint64_t send_completion_due(cq_state *cs, void *context, uint64_t natural);

/* ---- endpoints (ep.c) and their transfer hooks ---- */

typedef struct ep_state {
    loggp_pacer pacer;
    _Atomic int os_prepaid; /* o_s already spent on a post the provider refused with -FI_EAGAIN */
    int stamps;             /* remote CQ data is 8 bytes: stamps fit */
    _Atomic(cntr_state *) write_cntr, read_cntr;
    _Atomic(cq_state *) recv_cq; /* where its receives complete (recv_post.c) */
    _Atomic(cq_state *) send_cq; /* where its sends complete (send_post.c) */
    _Atomic int send_selective;  /* bound with FI_SELECTIVE_COMPLETION: sendmsg completes only if asked */
    struct fid_av *av;           /* its address vector (peers.c) */
    void *fid_ops, *msg, *tagged, *rma, *atomic, *ep_ops; /* our copies */
    struct fid_ep *ep;
    switch_node node;
} ep_state;

/* An endpoint's state, through its fid ops (which stay ours, while its tagged
 * and msg tables switch). */
static inline ep_state *ep_state_of(struct fid_ep *ep)
{
    return STATE(ep->fid.ops, ep_state);
}

void patch_ep(struct fid_ep *ep, int stamps);
/* Each copies its table on ep and points its entries at the hooks. */
void *patch_tagged(struct fid_ep *ep, ep_state *s);
void *patch_msg(struct fid_ep *ep, ep_state *s);
void *patch_rma(struct fid_ep *ep, ep_state *s);
void *patch_atomic(struct fid_ep *ep, ep_state *s);

/* Does the injector owe a gap from its last injection? */
static inline int pacer_owed(loggp_pacer *p)
{
    return atomic_load_explicit(&p->g_ns, memory_order_relaxed) || atomic_load_explicit(&p->bytes_ns, memory_order_relaxed);
}

/* Before a post: o_s and the wait for the gap the last injection left. */
static inline void post_begin(ep_state *s, loggp_delays *d)
{
    loggp_live_get(d);
    uint64_t o_s = d->o_s && !atomic_exchange_explicit(&s->os_prepaid, 0, memory_order_relaxed) ? loggp_jittered_o(d->o_s) : 0;
    if (!o_s && !pacer_owed(&s->pacer))
        return; /* L alone: no clock read, no counter */
    loggp_counters *c = loggp_my_counters();
    loggp_gap_wait w = loggp_pacer_begin(&s->pacer, o_s);
    c->injected_ns[LOGGP_INJ_O_S] += o_s;
    c->injected_ns[LOGGP_INJ_GAP] += w.g_ns;
    c->injected_ns[LOGGP_INJ_GAP_PER_BYTE] += w.bytes_ns;
}

/* After a post: a refused post keeps its o_s; an accepted one leaves the
 * injector owing g + (k-1)G. */
static inline void post_end(ep_state *s, const loggp_delays *d, ssize_t rc, uint64_t bytes)
{
    if (rc == -FI_EAGAIN) {
        if (d->o_s)
            atomic_store_explicit(&s->os_prepaid, 1, memory_order_relaxed);
        return;
    }
    if (rc < 0 || (!d->g && !d->G_ps_per_byte && !pacer_owed(&s->pacer)))
        return;
    loggp_pacer_done(&s->pacer, d->g, loggp_bytes_delay_ns(d->G_ps_per_byte, bytes));
}

static inline uint64_t iov_bytes(const struct iovec *iov, size_t count)
{
    uint64_t n = 0;
    for (size_t i = 0; iov && i < count; i++)
        n += iov[i].iov_len;
    return n;
}

/* A send of rendezvous size gets its post time; only then, a clock read. */
static inline uint64_t send_post_time(void *context, uint64_t bytes)
{
    return context && bytes > RENDEZVOUS_MIN_BYTES ? clock_ns() : 0;
}

/* After an accepted send posted at `posted` (send_post_time): filed if its
 * completion may owe L or (k-1)G (d: the knobs towards its destination; NULL:
 * not read yet, the L-alone path). */
static inline void note_send_post(ep_state *s, void *context, uint64_t posted, uint64_t bytes, ssize_t rc,
                                  const loggp_delays *d, unsigned peer)
{
    if (!posted || rc != 0)
        return;
    cq_state *cq = atomic_load_explicit(&s->send_cq, memory_order_relaxed);
    if (!cq)
        return;
    loggp_delays read;
    if (!d) {
        loggp_live_get(&read);
        if (peer)
            loggp_delays_for_class(&read, peer);
        d = &read;
    }
    note_send_post_on(cq, context, posted, bytes, d);
}

/* The context a sendmsg's completion will carry, or NULL if it has none. */
static inline void *send_msg_context(ep_state *s, void *context, uint64_t flags)
{
    if (flags & FI_INJECT)
        return NULL;
    return !atomic_load_explicit(&s->send_selective, memory_order_relaxed) || (flags & FI_COMPLETION) ? context : NULL;
}

/* A send hook's plan (tagged.c, msg.c), made by send_begin before the
 * provider call and finished by send_end after it. */
typedef struct {
    int stamping;   /* the provider call must carry a send stamp (stamp(..., peer)) */
    unsigned peer;  /* the destination's topology class, for the stamp */
    int stamp_only; /* L alone: no o_s to spend, no gap owed, no knob snapshot */
    uint64_t bytes;
    uint64_t posted; /* send_post_time: when a send of rendezvous size was posted */
    loggp_delays d;  /* the knobs it is posted under (not read when stamp_only) */
} send_plan;

/* A send goes straight to the provider while every knob is zero, and from
 * inside the layer's own calls. */
static inline int send_bypasses_layer(void)
{
    return !loggp_live_active() || ofi_in_hook;
}

/* Before a send of `bytes` to dest is posted with `context` (NULL: it
 * completes without one): o_s, the gap owed, and what the call must carry.
 * The layer counts as inside a call until send_end. */
static inline void send_begin(ep_state *s, send_plan *p, uint64_t bytes, fi_addr_t dest, void *context)
{
    p->bytes = bytes;
    p->stamp_only = atomic_load_explicit(&loggp_live_stamp_only, memory_order_relaxed) && !pacer_owed(&s->pacer);
    if (p->stamp_only) {
        p->stamping = s->stamps;
        p->peer = peer_class(dest);
        p->posted = send_post_time(context, bytes);
    } else {
        post_begin(s, &p->d);
        /* the holds for L, G and the receive gap read stamps (a reception
         * counts from its message's arrival, cq_hold.c) */
        p->stamping = s->stamps && (p->d.L || p->d.g || p->d.G_ps_per_byte || p->d.topo);
        p->peer = p->d.topo ? peer_class(dest) : 0;
        if (p->peer)
            loggp_delays_for_class(&p->d, p->peer);
        p->posted = p->d.L || p->d.G_ps_per_byte || p->d.topo ? send_post_time(context, bytes) : 0;
    }
    ofi_in_hook++;
}

/* After the provider call returned rc: the gap's bookkeeping, and the send
 * filed when its completion owes the handshake. Returns rc. */
static inline ssize_t send_end(ep_state *s, send_plan *p, void *context, ssize_t rc)
{
    ofi_in_hook--;
    if (p->stamp_only) {
        note_send_post(s, context, p->posted, p->bytes, rc, NULL, p->peer);
        return rc;
    }
    post_end(s, &p->d, rc, p->bytes);
    note_send_post(s, context, p->posted, p->bytes, rc, &p->d, 0);
    return rc;
}

/* An RMA or atomic operation posted at post_time completes at the origin no
 * earlier than a round trip through the emulated network (rma.c). */
void rma_track(ep_state *s, int is_read, const loggp_delays *d, ssize_t rc, uint64_t post_time, uint64_t bytes);

/* An RMA or atomic hook's plan (rma.c, atomic.c), made by rma_begin before
 * the provider call and finished by rma_end after it. */
typedef struct {
    int is_read;     /* completes on the read counter, else the write counter */
    uint64_t bytes;
    uint64_t posted; /* loggp_now_ns() at the post: the origin completes 2L + (k-1)G after it */
    loggp_delays d;
} rma_plan;

/* An RMA operation goes straight to the provider from inside the layer's own
 * calls, and while every knob is zero with nothing pending on its counter. */
static inline int rma_bypasses_layer(ep_state *s, int is_read)
{
    return ofi_in_hook ||
           (!loggp_live_active() &&
            !atomic_load_explicit(is_read ? &s->read_cntr : &s->write_cntr, memory_order_relaxed));
}

/* Before an RMA operation of `bytes` is posted: o_s and the gap owed. The
 * layer counts as inside a call until rma_end. */
static inline void rma_begin(ep_state *s, rma_plan *p, int is_read, uint64_t bytes)
{
    p->is_read = is_read;
    p->bytes = bytes;
    post_begin(s, &p->d);
    p->posted = loggp_now_ns();
    ofi_in_hook++;
}

/* After the provider call returned rc: the gap's bookkeeping and the
 * origin's completion tracked (rma_track). Returns rc. */
static inline ssize_t rma_end(ep_state *s, rma_plan *p, ssize_t rc)
{
    ofi_in_hook--;
    post_end(s, &p->d, rc, p->bytes);
    rma_track(s, p->is_read, &p->d, rc, p->posted, p->bytes);
    return rc;
}

/* ---- fabrics and domains (fabric.c) ---- */

void patch_fabric(struct fid_fabric *fabric);

#pragma GCC visibility pop

#endif

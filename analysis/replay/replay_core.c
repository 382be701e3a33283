/* The LogGOPS replay at native speed: the same model as
 * analysis/loggp/analysis/loggops.py (docs/predict.md), fed either with
 * hand-made programs (arrays of operations) or straight from trace files
 * (docs/trace-format.md), which it reads in chunks and turns into operations
 * as analysis/loggp/analysis/replay.py does, so memory follows the ranks and
 * the messages in flight, not the trace's length.
 *
 * Ranks advance in any order: the model is a dataflow (messages match in
 * order per sender, communicator and tag; every time depends only on
 * earlier events of the same rank or of the matched message), so a rank
 * runs until it waits for a request not yet complete and is woken when the
 * last one it waits for completes. Loaded from Python with ctypes
 * (analysis/loggp/analysis/native.py). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))

/* OP_FORGET: the trace freed the request (MPI_Request_free): nothing will wait for it, so its
 * entry goes (traces only; it changes no time). */
enum { OP_CALC = 0, OP_ISEND = 1, OP_IRECV = 2, OP_WAIT = 3, OP_DONE = 4, OP_FORGET = 5 };

/* One operation (Python's numpy dtype native.OP mirrors it). */
typedef struct {
    int64_t req;    /* ISEND, IRECV, DONE: the request; WAIT: where its requests start in the wait list */
    int64_t comm, tag;
    uint64_t bytes;
    double ns;      /* CALC */
    int32_t kind, peer; /* WAIT: peer = how many requests */
} lr_op;

/* One trace record (docs/trace-format.md). */
typedef struct {
    uint64_t start_ns, end_ns, bytes, request;
    int32_t peer, tag;
    uint32_t comm_id, comm_size;
    uint16_t call, kind;
    int32_t index;
} lr_rec;
_Static_assert(sizeof(lr_rec) == 56, "a trace record is 56 bytes");

/* What went wrong (Python turns it into a message naming the file and offset). */
enum { ERR_NONE = 0, ERR_IO, ERR_CORRUPT, ERR_UNPOSTED, ERR_COLLECTIVE, ERR_TRUNCATED, ERR_MEMORY, ERR_PEER };
typedef struct {
    int32_t code, rank;
    int64_t record;       /* index of the record in the rank's trace */
    uint64_t value, value2; /* CORRUPT: call, kind; UNPOSTED: handle; COLLECTIVE: comm, its number; IO: errno */
    uint64_t start, end;  /* CORRUPT */
    int32_t base_here, base_other; /* COLLECTIVE */
} lr_err;

/* Per rank, after a deadlock: where it stopped. */
typedef struct {
    int64_t op;       /* operation index (array programs) */
    int64_t call_number; /* trace programs: the call's number in its trace, from 1 */
    int32_t call;     /* trace programs: the call's index into the name table */
    int32_t finished;
    int32_t awaited_kind; /* OP_ISEND, OP_IRECV, or -1 */
    int32_t awaited_peer;
} lr_stuck;

/* Call classes for trace programs: cls[call] = class | base << 8 | POSTING | FREEING. */
enum { C_OTHER = 0, C_SEND, C_ISEND, C_IRECV, C_RECV, C_SENDRECV, C_WAIT, C_SEND_INIT, C_RECV_INIT, C_START,
       C_COLL, C_IGNORED };
#define CLS_POSTING (1 << 16)
#define CLS_FREEING (1 << 17)
#define ANY_SOURCE (-2)
#define ANY_TAG (-1)
#define COLL_TAG (INT64_C(1) << 40)     /* collective messages' tags: apart from any MPI tag */

/* ---- an open-addressing map of three 64-bit words to a 32-bit value ---- */
typedef struct { uint64_t a, b, c; } key3;
typedef struct {
    key3 *keys;
    uint32_t *vals;
    uint8_t *used;
    size_t cap, n;
} map3;

static size_t slot_of(const map3 *m, key3 k)
{
    uint64_t h = k.a * 0x9e3779b97f4a7c15ull ^ k.b * 0xc2b2ae3d27d4eb4full ^ k.c * 0x165667b19e3779f9ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return (size_t)h & (m->cap - 1);
}

static int same(key3 x, key3 y) { return x.a == y.a && x.b == y.b && x.c == y.c; }

static void map_clear(map3 *m)
{
    if (m->used)
        memset(m->used, 0, m->cap);
    m->n = 0;
}

static void map_free(map3 *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

static long map_find(const map3 *m, key3 k)
{
    if (!m->cap)
        return -1;
    for (size_t s = slot_of(m, k);; s = (s + 1) & (m->cap - 1)) {
        if (!m->used[s])
            return -1;
        if (same(m->keys[s], k))
            return (long)s;
    }
}

static int map_grow(map3 *m)
{
    map3 bigger = {0};
    bigger.cap = m->cap ? m->cap * 2 : 16;
    bigger.keys = malloc(bigger.cap * sizeof *bigger.keys);
    bigger.vals = malloc(bigger.cap * sizeof *bigger.vals);
    bigger.used = calloc(bigger.cap, 1);
    if (!bigger.keys || !bigger.vals || !bigger.used) {
        map_free(&bigger);
        return -1;
    }
    for (size_t s = 0; s < m->cap; s++) {
        if (!m->used[s])
            continue;
        size_t t = slot_of(&bigger, m->keys[s]);
        while (bigger.used[t])
            t = (t + 1) & (bigger.cap - 1);
        bigger.used[t] = 1;
        bigger.keys[t] = m->keys[s];
        bigger.vals[t] = m->vals[s];
    }
    bigger.n = m->n;
    map_free(m);
    *m = bigger;
    return 0;
}

/* Inserts k (absent) with value v; -1 when out of memory. */
static int map_put(map3 *m, key3 k, uint32_t v)
{
    if (2 * (m->n + 1) > m->cap && map_grow(m) != 0)
        return -1;
    size_t s = slot_of(m, k);
    while (m->used[s])
        s = (s + 1) & (m->cap - 1);
    m->used[s] = 1;
    m->keys[s] = k;
    m->vals[s] = v;
    m->n++;
    return 0;
}

/* Removes slot s, shifting back the entries its removal would hide. */
static void map_del(map3 *m, long slot)
{
    size_t hole = (size_t)slot, mask = m->cap - 1;
    m->used[hole] = 0;
    m->n--;
    for (size_t s = (hole + 1) & mask; m->used[s]; s = (s + 1) & mask) {
        size_t home = slot_of(m, m->keys[s]);
        /* the entry at s may move into the hole if its home is not in (hole, s] */
        int between = hole <= s ? (home > hole && home <= s) : (home > hole || home <= s);
        if (between)
            continue;
        m->used[hole] = 1;
        m->keys[hole] = m->keys[s];
        m->vals[hole] = m->vals[s];
        m->used[s] = 0;
        hole = s;
    }
}

/* ---- pools: growable arrays of fixed-size items with a free list ---- */
typedef struct {
    char *items;
    size_t size, cap, n;
    int64_t free_head;
} pool;

static int64_t pool_take(pool *p)
{
    if (p->free_head >= 0) {
        int64_t i = p->free_head;
        memcpy(&p->free_head, p->items + (size_t)i * p->size, sizeof p->free_head);
        return i;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        char *items = realloc(p->items, cap * p->size);
        if (!items)
            return -1;
        p->items = items;
        p->cap = cap;
    }
    return (int64_t)p->n++;
}

static void pool_give(pool *p, int64_t i)
{
    memcpy(p->items + (size_t)i * p->size, &p->free_head, sizeof p->free_head);
    p->free_head = i;
}

static void pool_reset(pool *p)
{
    p->n = 0;
    p->free_head = -1;
}

#define AT(p, type, i) ((type *)((p)->items + (size_t)(i) * sizeof(type)))

/* A request of one rank. */
typedef struct {
    double at;        /* completion time, once done */
    int64_t post;     /* operation index of its post (for saying what a stuck rank waits for) */
    int32_t peer;
    uint8_t done, is_recv, kind, in_wait;
    uint8_t forgotten;  /* freed by the trace before it completed: dropped when it does */
} request;

/* A posted send or receive no partner took yet. */
typedef struct {
    int64_t next;     /* first word: the free list's link too */
    int64_t req;
    uint64_t bytes;
    double time;      /* a send's injection, a receive's post */
    int32_t rank;
} pending;

typedef struct {
    int64_t head, tail; /* pending items in post order */
    int32_t sends;      /* 1: the items are sends, 0: receives */
} channel;

/* A request handle's live posts, oldest first (pairs completions with posts). */
typedef struct {
    int64_t next;
    int64_t post;     /* record index */
} post_node;

typedef struct {
    int64_t head, tail, count;
} post_fifo;

typedef struct { /* a persistent request's init record */
    int64_t next;
    lr_rec rec;
} persistent;

typedef struct { /* the n-th collective on a communicator, over all ranks */
    int64_t next;
    uint64_t bytes, least;  /* the largest size any rank recorded, and the smallest */
    int32_t base, root;     /* root: the highest rank's peer, as replay.py takes it */
    int32_t root_rank, first_root, ranks;
    int32_t roots_differ;
} collective;

/* ---- reading a rank's trace in chunks ---- */
typedef struct {
    char *path;         /* opened for each chunk: thousands of ranks would exceed the open-file limit */
    uint64_t records_offset;
    int64_t n;          /* records in the file */
    lr_rec *win;        /* records [base, base + len) */
    int64_t base, len, cap, chunk;
    int64_t keep;       /* records before this may be dropped */
    int64_t peak, reads;
} reader;

typedef struct sim sim;

typedef struct {
    /* the operations being run: the whole program (arrays), or one record's (traces) */
    lr_op *ops;
    int64_t nops, pos, op_base; /* op_base: index of ops[0] in the rank's whole program */
    int64_t *waits;
    int64_t nwaits;
    size_t ops_cap, waits_cap;
    double t, nic_tx, nic_rx, compute, overhead, waiting;
    int64_t missing;    /* requests its current wait still needs */
    map3 reqs;          /* req -> request (small, so a rank's requests stay in cache) */
    map3 chans;         /* (src, comm, tag) -> channel of messages to this rank */
    map3 aux;           /* (handle, 0): its live posts; (handle, 1): a persistent request; (comm, 2): collectives */
    int finished, queued;
    /* traces */
    reader rd;
    int64_t next;       /* next record to turn into operations */
    int64_t prev_end;
    uint64_t init_ns, finalize_ns;
    int64_t call_number;
    int32_t call;
    int eof;
} rank;

struct sim {
    int32_t nranks;
    int traces;
    rank *ranks;
    /* array programs */
    const lr_op *all_ops;
    const int64_t *rank_start;
    const int64_t *all_waits;
    /* trace programs */
    const int32_t *cls;     /* per rank, per call */
    const int32_t *cls_start;
    int64_t chunk;
    map3 colls;             /* (comm, seq) -> collective */
    pool coll_pool;
    /* the run */
    double o_s, o_r, g, G, L, S;
    pool req_pool;          /* requests (each rank's map points into it) */
    pool chan_pool, pend_pool;
    pool fifo_pool, node_pool, pers_pool;
    int32_t *ready;
    int64_t ready_head, ready_n;
    /* counts of the last run (traces) */
    int64_t messages;
    int64_t collectives[32];
    int64_t *unmodelled;    /* per rank, per call (cls_start layout) */
    lr_err err;
};

static void fail(sim *s, int code, int32_t r, int64_t record)
{
    if (s->err.code)
        return;
    s->err.code = code;
    s->err.rank = r;
    s->err.record = record;
}

/* ---- the reader ---- */

static int rec_load(sim *s, int32_t r, int64_t i);

/* The record i of rank r, in the window (valid until the next read); NULL on error. */
static inline const lr_rec *rec_peek(sim *s, int32_t r, int64_t i)
{
    reader *rd = &s->ranks[r].rd;
    if (i >= rd->base + rd->len && rec_load(s, r, i) != 0)
        return NULL;
    return &rd->win[i - rd->base];
}

/* The record i of rank r (a copy), reading further chunks as needed; 0 on success. */
static inline int rec_get(sim *s, int32_t r, int64_t i, lr_rec *out)
{
    const lr_rec *x = rec_peek(s, r, i);
    if (!x)
        return -1;
    *out = *x;
    return 0;
}

/* Reads chunks until record i is in the window, dropping the records before keep. */
static int rec_load(sim *s, int32_t r, int64_t i)
{
    reader *rd = &s->ranks[r].rd;
    {
        int64_t drop = rd->keep - rd->base;
        if (drop > rd->len)
            drop = rd->len;
        if (drop > 0) {
            memmove(rd->win, rd->win + drop, (size_t)(rd->len - drop) * sizeof *rd->win);
            rd->base += drop;
            rd->len -= drop;
        }
        if (rd->base + rd->len < rd->keep) { /* nothing held is needed: jump */
            rd->base = rd->keep;
            rd->len = 0;
        }
        while (i >= rd->base + rd->len) {
            int64_t want = rd->n - (rd->base + rd->len);
            if (rd->len == rd->cap) { /* full of records still needed (a long look-ahead): one chunk more */
                lr_rec *win = realloc(rd->win, (size_t)(rd->cap + rd->chunk) * sizeof *win);
                if (!win) {
                    fail(s, ERR_MEMORY, r, i);
                    return -1;
                }
                rd->win = win;
                rd->cap += rd->chunk;
            }
            if (want > rd->cap - rd->len)
                want = rd->cap - rd->len;
            if (rd->cap > rd->peak)
                rd->peak = rd->cap;
            int64_t first = rd->base + rd->len;
            size_t bytes = (size_t)want * sizeof(lr_rec), got = 0;
            char *to = (char *)(rd->win + rd->len);
            int fd = open(rd->path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                fail(s, ERR_IO, r, -1);
                s->err.value = (uint64_t)errno;
                return -1;
            }
            while (got < bytes) {
                ssize_t n = pread(fd, to + got, bytes - got,
                                  (off_t)(rd->records_offset + (uint64_t)first * sizeof(lr_rec) + got));
                if (n < 0 && errno == EINTR)
                    continue;
                if (n < 0) {
                    fail(s, ERR_IO, r, first);
                    s->err.value = (uint64_t)errno;
                    close(fd);
                    return -1;
                }
                if (n == 0) {
                    fail(s, ERR_TRUNCATED, r, first + (int64_t)(got / sizeof(lr_rec)));
                    close(fd);
                    return -1;
                }
                got += (size_t)n;
            }
            close(fd);
            rd->reads++;
            int32_t ncalls = s->cls_start[r + 1] - s->cls_start[r];
            for (int64_t k = 0; k < want; k++) {
                const lr_rec *x = &rd->win[rd->len + k];
                if (x->call >= ncalls || x->kind > 1 || x->end_ns < x->start_ns) {
                    fail(s, ERR_CORRUPT, r, first + k);
                    s->err.value = x->call;
                    s->err.value2 = x->kind;
                    s->err.start = x->start_ns;
                    s->err.end = x->end_ns;
                    return -1;
                }
            }
            rd->len += want;
        }
    }
    return 0;
}

/* ---- requests and channels ---- */

static request *req_find(sim *s, int32_t r, int64_t req, long *slot)
{
    if (s->traces)
        return AT(&s->req_pool, request, req);
    map3 *m = &s->ranks[r].reqs;
    long at = map_find(m, (key3){(uint64_t)req, 0, 0});
    if (slot)
        *slot = at;
    return at < 0 ? NULL : AT(&s->req_pool, request, m->vals[at]);
}

/* Traces name a request by its entry in req_pool, allocated when its post is turned into
 * operations (req_alloc); hand-made programs by a number each rank maps (req_find, req_make). */
static int64_t req_alloc(sim *s, int32_t r)
{
    int64_t i = pool_take(&s->req_pool);
    if (i < 0) {
        fail(s, ERR_MEMORY, r, -1);
        return -1;
    }
    request *q = AT(&s->req_pool, request, i);
    memset(q, 0, sizeof *q);
    q->peer = -1;
    return i;
}

/* The request's entry, made (not done) if new; NULL when out of memory. */
static request *req_make(sim *s, int32_t r, int64_t req)
{
    if (s->traces)
        return AT(&s->req_pool, request, req);
    request *q = req_find(s, r, req, NULL);
    if (q)
        return q;
    int64_t i = pool_take(&s->req_pool);
    if (i < 0 || map_put(&s->ranks[r].reqs, (key3){(uint64_t)req, 0, 0}, (uint32_t)i) != 0) {
        fail(s, ERR_MEMORY, r, -1);
        return NULL;
    }
    q = AT(&s->req_pool, request, i);
    memset(q, 0, sizeof *q);
    q->peer = -1;
    return q;
}

static void wake(sim *s, int32_t r)
{
    rank *rk = &s->ranks[r];
    if (rk->queued)
        return;
    rk->queued = 1;
    s->ready[(s->ready_head + s->ready_n) % s->nranks] = r;
    s->ready_n++;
}

/* The request leaves: nothing refers to it any more (waited for, or freed and complete). */
static void req_drop(sim *s, int32_t r, int64_t req)
{
    long slot;
    if (s->traces)
        pool_give(&s->req_pool, req);
    else if (req_find(s, r, req, &slot)) {
        pool_give(&s->req_pool, s->ranks[r].reqs.vals[slot]);
        map_del(&s->ranks[r].reqs, slot);
    }
}

static void complete(sim *s, int32_t r, int64_t req, double at)
{
    request *q = req_find(s, r, req, NULL);
    if (!q)
        return;
    if (q->forgotten) { /* freed by the trace: nobody waits for it */
        req_drop(s, r, req);
        return;
    }
    q->done = 1;
    q->at = at;
    if (q->in_wait) {
        q->in_wait = 0;
        if (--s->ranks[r].missing == 0)
            wake(s, r);
    }
}

static void match(sim *s, const pending *snd, const pending *rcv)
{
    if (snd->rank == rcv->rank) { /* copied by MPI: there at once */
        complete(s, rcv->rank, rcv->req, snd->time);
        return;
    }
    double flight = (snd->bytes > 0 ? (double)(snd->bytes - 1) : 0.0) * s->G;
    if ((double)snd->bytes <= s->S) {
        complete(s, rcv->rank, rcv->req, snd->time + flight + s->L);
    } else {
        double go_ahead = fmax(snd->time + s->L, rcv->time) + s->L;
        double data_end = go_ahead + flight;
        complete(s, snd->rank, snd->req, data_end);
        complete(s, rcv->rank, rcv->req, data_end + s->L);
    }
}

/* A send (is_send) or receive meets the oldest partner on its channel, or queues. */
static void post(sim *s, int is_send, int32_t src, int32_t dst, int64_t comm, int64_t tag, pending item)
{
    map3 *chans = &s->ranks[dst].chans;
    key3 k = {(uint64_t)(uint32_t)src, (uint64_t)comm, (uint64_t)tag};
    long slot = map_find(chans, k);
    channel *ch = slot < 0 ? NULL : AT(&s->chan_pool, channel, chans->vals[slot]);
    if (ch && ch->head >= 0 && ch->sends != is_send) {
        int64_t first = ch->head;
        pending other = *AT(&s->pend_pool, pending, first);
        ch->head = other.next;
        if (ch->head < 0) { /* empty: forget the channel (collectives make one per instance) */
            pool_give(&s->chan_pool, chans->vals[slot]);
            map_del(chans, slot);
        }
        pool_give(&s->pend_pool, first);
        if (is_send)
            match(s, &item, &other);
        else
            match(s, &other, &item);
        return;
    }
    int64_t pi = pool_take(&s->pend_pool);
    if (pi < 0) {
        fail(s, ERR_MEMORY, src, -1);
        return;
    }
    item.next = -1;
    *AT(&s->pend_pool, pending, pi) = item;
    if (!ch) {
        int64_t ci = pool_take(&s->chan_pool);
        if (ci < 0 || map_put(chans, k, (uint32_t)ci) != 0) {
            fail(s, ERR_MEMORY, src, -1);
            return;
        }
        ch = AT(&s->chan_pool, channel, ci);
        ch->head = -1;
    }
    if (ch->head < 0) {
        ch->head = ch->tail = pi;
        ch->sends = is_send;
    } else {
        AT(&s->pend_pool, pending, ch->tail)->next = pi;
        ch->tail = pi;
    }
}

/* ---- turning trace records into operations (replay.py's _program, one call at a time) ---- */

static lr_op *emit(sim *s, rank *rk)
{
    if ((size_t)rk->nops == rk->ops_cap) {
        size_t cap = rk->ops_cap ? rk->ops_cap * 2 : 16;
        lr_op *ops = realloc(rk->ops, cap * sizeof *ops);
        if (!ops) {
            fail(s, ERR_MEMORY, (int32_t)(rk - s->ranks), -1);
            return NULL;
        }
        rk->ops = ops;
        rk->ops_cap = cap;
    }
    lr_op *op = &rk->ops[rk->nops++];
    memset(op, 0, sizeof *op);
    return op;
}

static int emit_wait_req(sim *s, rank *rk, int64_t req)
{
    if ((size_t)rk->nwaits == rk->waits_cap) {
        size_t cap = rk->waits_cap ? rk->waits_cap * 2 : 16;
        int64_t *w = realloc(rk->waits, cap * sizeof *w);
        if (!w) {
            fail(s, ERR_MEMORY, (int32_t)(rk - s->ranks), -1);
            return -1;
        }
        rk->waits = w;
        rk->waits_cap = cap;
    }
    rk->waits[rk->nwaits++] = req;
    return 0;
}

static void emit_calc(sim *s, rank *rk, int64_t ns)
{
    if (ns <= 0)
        return;
    lr_op *op = emit(s, rk);
    if (op) {
        op->kind = OP_CALC;
        op->ns = (double)ns;
    }
}

static void emit_simple(sim *s, rank *rk, int kind, int32_t peer, int64_t comm, int64_t tag, uint64_t bytes,
                        int64_t req)
{
    if ((kind == OP_ISEND || kind == OP_IRECV) && (peer < 0 || peer >= s->nranks)) {
        /* a damaged record: its rank would index past the run's ranks */
        fail(s, ERR_PEER, (int32_t)(rk - s->ranks), rk->rd.keep);
        s->err.value = (uint64_t)(uint32_t)peer;
        return;
    }
    lr_op *op = emit(s, rk);
    if (op) {
        op->kind = kind;
        op->peer = peer;
        op->comm = comm;
        op->tag = tag;
        op->bytes = bytes;
        op->req = req;
    }
}

/* A wait for reqs (emitted with emit_wait_req since first). */
static void emit_wait(sim *s, rank *rk, int64_t first)
{
    lr_op *op = emit(s, rk);
    if (op) {
        op->kind = OP_WAIT;
        op->req = first;
        op->peer = (int32_t)(rk->nwaits - first);
    }
}

static int32_t cls_of(sim *s, int32_t r, uint16_t call) { return s->cls[s->cls_start[r] + call]; }

static post_fifo *fifo_of(sim *s, int32_t r, uint64_t handle, int make)
{
    key3 k = {handle, 0, 0};
    long slot = map_find(&s->ranks[r].aux, k);
    if (slot >= 0)
        return AT(&s->fifo_pool, post_fifo, s->ranks[r].aux.vals[slot]);
    if (!make)
        return NULL;
    int64_t i = pool_take(&s->fifo_pool);
    if (i < 0 || map_put(&s->ranks[r].aux, k, (uint32_t)i) != 0) {
        fail(s, ERR_MEMORY, r, -1);
        return NULL;
    }
    post_fifo *f = AT(&s->fifo_pool, post_fifo, i);
    f->head = f->tail = -1;
    f->count = 0;
    return f;
}

static void fifo_push(sim *s, int32_t r, uint64_t handle, int64_t post_at)
{
    int64_t ni = pool_take(&s->node_pool);
    post_fifo *f = ni < 0 ? NULL : fifo_of(s, r, handle, 1);
    if (!f) {
        fail(s, ERR_MEMORY, r, post_at);
        return;
    }
    post_node *n = AT(&s->node_pool, post_node, ni);
    n->next = -1;
    n->post = post_at;
    if (f->head < 0)
        f->head = f->tail = ni;
    else {
        AT(&s->node_pool, post_node, f->tail)->next = ni;
        f->tail = ni;
    }
    f->count++;
}

/* The oldest live post of handle, removed; -1 if none. */
static int64_t fifo_pop(sim *s, int32_t r, uint64_t handle)
{
    key3 k = {handle, 0, 0};
    long slot = map_find(&s->ranks[r].aux, k);
    if (slot < 0)
        return -1;
    int64_t fi = s->ranks[r].aux.vals[slot];
    post_fifo *f = AT(&s->fifo_pool, post_fifo, fi);
    int64_t ni = f->head;
    post_node *n = AT(&s->node_pool, post_node, ni);
    int64_t at = n->post;
    f->head = n->next;
    f->count--;
    pool_give(&s->node_pool, ni);
    if (f->head < 0) {
        pool_give(&s->fifo_pool, fi);
        map_del(&s->ranks[r].aux, slot);
    }
    return at;
}

/* The record completing the receive posted at record i with handle (its status says what it got),
 * found by reading ahead: -1 if the trace never completes it (freed, or never waited for). */
static int64_t completion_of(sim *s, int32_t r, int64_t i, uint64_t handle, lr_rec *out)
{
    if (!handle)
        return -1;
    post_fifo *f = fifo_of(s, r, handle, 0);
    int64_t older = f ? f->count : 0; /* live posts of the handle before this one take completions first */
    rank *rk = &s->ranks[r];
    for (int64_t j = i + 1; j < rk->rd.n; j++) {
        const lr_rec *x = rec_peek(s, r, j);
        if (!x)
            return -2;
        if (x->request != handle)
            continue;
        if (x->kind == 1 || (cls_of(s, r, x->call) & CLS_FREEING)) {
            if (older == 0) {
                if (x->kind == 1) {
                    *out = *x;
                    return j;
                }
                return -1;
            }
            older--;
        }
    }
    return -1;
}

/* *req, allocated on first use (-1: not yet). */
static int64_t req_of(sim *s, rank *rk, int64_t *req)
{
    if (*req < 0)
        *req = req_alloc(s, (int32_t)(rk - s->ranks));
    return *req;
}

static int add_send(sim *s, rank *rk, const lr_rec *rec, int64_t *req)
{
    if (rec->peer < 0)
        return 0;
    emit_simple(s, rk, OP_ISEND, rec->peer, rec->comm_id, rec->tag, rec->bytes, req_of(s, rk, req));
    s->messages++;
    return 1;
}

static int add_recv(sim *s, rank *rk, const lr_rec *rec, const lr_rec *got, int64_t *req)
{
    if (!got)
        got = rec;
    if (got->peer < 0 || got->peer == ANY_SOURCE || got->tag == ANY_TAG)
        return 0;
    emit_simple(s, rk, OP_IRECV, got->peer, rec->comm_id, got->tag, rec->bytes, req_of(s, rk, req));
    return 1;
}

static int schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
                    int32_t *peers, uint64_t *bytes, int cap);

/* Operations for the next call of rank r (the closing computation after the last); how many
 * (0: the trace has ended), -1 on error. */
static int translate(sim *s, int32_t r)
{
    rank *rk = &s->ranks[r];
    rk->nops = rk->pos = 0;
    rk->nwaits = 0;
    int32_t world = s->nranks;
    while (rk->nops == 0) {
        if (rk->eof)
            return 0;
        if (rk->next >= rk->rd.n) {
            emit_calc(s, rk, (int64_t)(rk->finalize_ns - (uint64_t)rk->prev_end));
            rk->eof = 1;
            rk->call = -1;
            rk->call_number++;
            break;
        }
        int64_t i = rk->next;
        rk->rd.keep = i;
        lr_rec rec;
        if (rec_get(s, r, i, &rec) != 0)
            return -1;
        int32_t c = cls_of(s, r, rec.call);
        if (rec.kind != 0) { /* a completion with no call before it */
            if (rec.request && fifo_pop(s, r, rec.request) < 0) {
                fail(s, ERR_UNPOSTED, r, i);
                s->err.value = rec.request;
                return -1;
            }
            rk->next = i + 1;
            continue;
        }
        rk->call_number++;
        rk->call = rec.call;
        emit_calc(s, rk, (int64_t)(rec.start_ns - (uint64_t)rk->prev_end));
        rk->prev_end = (int64_t)rec.end_ns;
        int cls = c & 0xff, base = (c >> 8) & 0xff;
        int local = (int32_t)rec.comm_size == world;
        /* this call's request (a post's is what later completions name), allocated when used */
        int64_t me_req = -1;
        int posted = (c & CLS_POSTING) && rec.request;
        /* a receive's completion, read ahead before this post joins its handle's live posts */
        lr_rec got;
        int64_t got_at = -1;
        if (local && (cls == C_IRECV || cls == C_START)) {
            got_at = completion_of(s, r, i, rec.request, &got);
            if (got_at == -2)
                return -1;
        }
        if (posted)
            fifo_push(s, r, rec.request, req_of(s, rk, &me_req));
        else if ((c & CLS_FREEING) && rec.request && fifo_of(s, r, rec.request, 0))
            emit_simple(s, rk, OP_FORGET, 0, 0, 0, 0, fifo_pop(s, r, rec.request));
        /* the completions that follow the call */
        int64_t j = i + 1, first_wait = rk->nwaits;
        lr_rec first_completion = {0};
        int ncompl = 0;
        for (; j < rk->rd.n; j++) {
            lr_rec x;
            if (rec_get(s, r, j, &x) != 0)
                return -1;
            if (x.kind != 1)
                break;
            if (ncompl++ == 0)
                first_completion = x;
            if (x.request) {
                int64_t req = fifo_pop(s, r, x.request);
                if (req < 0) {
                    fail(s, ERR_UNPOSTED, r, j);
                    s->err.value = x.request;
                    return -1;
                }
                if (cls == C_WAIT && emit_wait_req(s, rk, req) != 0)
                    return -1;
            }
        }
        rk->next = j;
        int modelled = 1;
        switch (cls) {
        case C_SEND:
        case C_ISEND:
            if (!local)
                modelled = 0;
            else if (!add_send(s, rk, &rec, &me_req)) {
                if (posted)
                    emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, me_req);
            } else if (cls == C_SEND) {
                int64_t w = rk->nwaits;
                emit_wait_req(s, rk, me_req);
                emit_wait(s, rk, w);
            }
            break;
        case C_IRECV:
            if (!local)
                modelled = 0;
            else if (!add_recv(s, rk, &rec, got_at >= 0 ? &got : NULL, &me_req) && posted)
                emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, me_req);
            break;
        case C_RECV:
            if (!local)
                modelled = 0;
            else if (ncompl && add_recv(s, rk, &rec, &first_completion, &me_req)) {
                int64_t w = rk->nwaits;
                emit_wait_req(s, rk, me_req);
                emit_wait(s, rk, w);
            }
            break;
        case C_SENDRECV:
            if (!local)
                modelled = 0;
            else {
                int64_t w = rk->nwaits, send_req = -1, recv_req = -1;
                if (add_send(s, rk, &rec, &send_req))
                    emit_wait_req(s, rk, send_req);
                if (ncompl && add_recv(s, rk, &rec, &first_completion, &recv_req))
                    emit_wait_req(s, rk, recv_req);
                if (rk->nwaits > w)
                    emit_wait(s, rk, w);
            }
            break;
        case C_WAIT:
            if (rk->nwaits > first_wait)
                emit_wait(s, rk, first_wait);
            else
                emit_calc(s, rk, (int64_t)(rec.end_ns - rec.start_ns));
            break;
        case C_SEND_INIT:
        case C_RECV_INIT: {
            key3 k = {rec.request, 1, 0};
            long slot = map_find(&rk->aux, k);
            int64_t pi;
            if (slot >= 0)
                pi = rk->aux.vals[slot];
            else {
                pi = pool_take(&s->pers_pool);
                if (pi < 0 || map_put(&rk->aux, k, (uint32_t)pi) != 0) {
                    fail(s, ERR_MEMORY, r, i);
                    return -1;
                }
            }
            AT(&s->pers_pool, persistent, pi)->rec = rec;
            break;
        }
        case C_START: {
            long slot = map_find(&rk->aux, (key3){rec.request, 1, 0});
            const lr_rec *made = slot < 0 ? NULL : &AT(&s->pers_pool, persistent, rk->aux.vals[slot])->rec;
            if (!made || (int32_t)made->comm_size != world)
                modelled = 0;
            else {
                lr_rec m = *made;
                int ok = (cls_of(s, r, m.call) & 0xff) == C_SEND_INIT
                             ? add_send(s, rk, &m, &me_req)
                             : add_recv(s, rk, &m, got_at >= 0 ? &got : NULL, &me_req);
                if (!ok && posted)
                    emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, me_req);
            }
            break;
        }
        case C_COLL: {
            if (!local) {
                modelled = 0;
                break;
            }
            key3 sk = {rec.comm_id, 2, 0};
            long slot = map_find(&rk->aux, sk);
            uint32_t seq = slot < 0 ? 0 : rk->aux.vals[slot];
            if (slot < 0) {
                if (map_put(&rk->aux, sk, 1) != 0) {
                    fail(s, ERR_MEMORY, r, i);
                    return -1;
                }
            } else
                rk->aux.vals[slot]++;
            /* the instance as every rank recorded it, or as the scan found it where they differ */
            long cs = map_find(&s->colls, (key3){rec.comm_id, seq, 0});
            uint64_t nbytes = rec.bytes;
            int root = rec.peer;
            if (cs >= 0) {
                const collective *co = AT(&s->coll_pool, collective, s->colls.vals[cs]);
                nbytes = co->bytes;
                root = co->root;
            }
            int cap = 3 * world + 8; /* a large Bcast: scatter (world - 1) + ring allgather 2 (world - 1) */
            int32_t *rounds = malloc((size_t)cap * sizeof *rounds), *kinds = malloc((size_t)cap * sizeof *kinds),
                    *peers = malloc((size_t)cap * sizeof *peers);
            uint64_t *sizes = malloc((size_t)cap * sizeof *sizes);
            if (!rounds || !kinds || !peers || !sizes) {
                free(rounds), free(kinds), free(peers), free(sizes);
                fail(s, ERR_MEMORY, r, i);
                return -1;
            }
            int n = schedule(base, r, world, nbytes, root, rounds, kinds, peers, sizes, cap);
            int64_t w = rk->nwaits;
            for (int k = 0; k < n; k++) {
                int64_t req = req_alloc(s, r);
                emit_simple(s, rk, kinds[k] ? OP_IRECV : OP_ISEND, peers[k], rec.comm_id, COLL_TAG + seq, sizes[k],
                            req);
                s->messages += kinds[k] == 0;
                emit_wait_req(s, rk, req);
                if (k + 1 == n || rounds[k + 1] != rounds[k]) {
                    emit_wait(s, rk, w);
                    w = rk->nwaits;
                }
            }
            free(rounds), free(kinds), free(peers), free(sizes);
            if (posted)
                emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, me_req);
            if (base < 32)
                s->collectives[base]++;
            break;
        }
        case C_IGNORED:
            break;
        default:
            modelled = 0;
        }
        if (!modelled) {
            emit_calc(s, rk, (int64_t)(rec.end_ns - rec.start_ns));
            s->unmodelled[s->cls_start[r] + rec.call]++;
            if (posted) /* done within the time kept, when a completion names it */
                emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, me_req);
        }
        if (s->err.code)
            return -1;
    }
    return s->err.code ? -1 : (int)(rk->nops > 0);
}

/* ---- the replay ---- */

/* Operations a rank runs before the others get a turn: a rank that never waits (sends it
 * frees, say) would otherwise post its whole trace before any receiver takes a message. */
#define QUANTUM 64

static void wake(sim *s, int32_t r);

/* Runs rank r until it waits for what is not known yet, ends, or has had its turn; -1 on error. */
/* Pays o_s and waits for the gap; returns the injection time. */
static double inject(sim *s, rank *rk, uint64_t bytes)
{
    double ready = rk->t + s->o_s;
    double inj = fmax(ready, rk->nic_tx);
    rk->overhead += s->o_s;
    rk->waiting += inj - ready;
    rk->t = inj;
    rk->nic_tx = inj + s->g + (bytes > 0 ? (double)(bytes - 1) : 0.0) * s->G;
    return inj;
}

/* A message to oneself never reaches the network: both overheads at the send. */
static double copy_to_self(sim *s, rank *rk)
{
    rk->t += s->o_s + s->o_r;
    rk->overhead += s->o_s + s->o_r;
    return rk->t;
}

static int run_rank(sim *s, int32_t r)
{
    rank *rk = &s->ranks[r];
    for (int turn = 0;; turn++) {
        if (turn == QUANTUM && s->ready_n > 0) {
            wake(s, r);
            return 0;
        }
        if (rk->pos == rk->nops) {
            if (!s->traces) {
                rk->finished = 1;
                return 0;
            }
            rk->op_base += rk->nops;
            if (translate(s, r) < 0)
                return -1;
            if (rk->nops == 0) {
                rk->finished = 1;
                return 0;
            }
        }
        const lr_op *op = &rk->ops[rk->pos];
        switch (op->kind) {
        case OP_CALC:
            rk->t += op->ns;
            rk->compute += op->ns;
            break;
        case OP_ISEND: {
            int to_self = op->peer == r;
            double inj = to_self ? copy_to_self(s, rk) : inject(s, rk, op->bytes);
            request *q = req_make(s, r, op->req);
            if (!q)
                return -1;
            q->kind = OP_ISEND;
            q->peer = op->peer;
            q->post = rk->op_base + rk->pos;
            q->is_recv = 0;
            q->in_wait = 0;
            q->done = to_self || (double)op->bytes <= s->S;
            q->at = inj;
            pending item = {.req = op->req, .bytes = op->bytes, .time = inj, .rank = r};
            post(s, 1, r, op->peer, op->comm, op->tag, item);
            break;
        }
        case OP_IRECV: {
            request *q = req_make(s, r, op->req);
            if (!q)
                return -1;
            q->kind = OP_IRECV;
            q->peer = op->peer;
            q->post = rk->op_base + rk->pos;
            q->is_recv = op->peer != r; /* from oneself: o_r was paid at the send */
            pending item = {.req = op->req, .bytes = op->bytes, .time = rk->t, .rank = r};
            post(s, 0, op->peer, r, op->comm, op->tag, item);
            break;
        }
        case OP_WAIT: {
            const int64_t *list = (s->traces ? rk->waits : s->all_waits) + op->req;
            int64_t missing = 0;
            for (int32_t k = 0; k < op->peer; k++) {
                request *q = req_find(s, r, list[k], NULL);
                if (!q || !q->done)
                    missing++;
            }
            if (missing) {
                for (int32_t k = 0; k < op->peer; k++) {
                    request *q = req_find(s, r, list[k], NULL);
                    if (q && !q->done)
                        q->in_wait = 1;
                }
                rk->missing = missing;
                return 0;
            }
            for (int32_t k = 0; k < op->peer; k++) {
                request *q = req_find(s, r, list[k], NULL);
                if (!q) /* the same request twice in one wait: waited for already */
                    continue;
                double at = q->at;
                if (q->is_recv) {
                    double take = fmax(fmax(rk->t, at), rk->nic_rx);
                    rk->nic_rx = take + s->g;
                    rk->waiting += take - rk->t;
                    rk->t = take + s->o_r;
                    rk->overhead += s->o_r;
                } else if (at > rk->t) {
                    rk->waiting += at - rk->t;
                    rk->t = at;
                }
                req_drop(s, r, list[k]);
            }
            break;
        }
        case OP_DONE: {
            request *q = req_make(s, r, op->req);
            if (!q)
                return -1;
            q->done = 1;
            q->at = rk->t;
            break;
        }
        case OP_FORGET: { /* a complete one leaves now; one still in flight when it completes */
            request *q = req_find(s, r, op->req, NULL);
            if (q && q->done)
                req_drop(s, r, op->req);
            else if (q)
                q->forgotten = 1;
            break;
        }
        default:
            return -1;
        }
        if (s->err.code)
            return -1;
        rk->pos++;
    }
}

static void reset_run(sim *s)
{
    pool_reset(&s->req_pool);
    pool_reset(&s->chan_pool);
    pool_reset(&s->pend_pool);
    pool_reset(&s->fifo_pool);
    pool_reset(&s->node_pool);
    pool_reset(&s->pers_pool);
    s->messages = 0;
    memset(s->collectives, 0, sizeof s->collectives);
    if (s->traces)
        memset(s->unmodelled, 0, (size_t)s->cls_start[s->nranks] * sizeof *s->unmodelled);
    memset(&s->err, 0, sizeof s->err);
    for (int32_t r = 0; r < s->nranks; r++) {
        rank *rk = &s->ranks[r];
        map_clear(&rk->reqs);
        map_clear(&rk->chans);
        map_clear(&rk->aux);
        rk->pos = rk->op_base = 0;
        rk->t = rk->compute = rk->overhead = rk->waiting = 0.0;
        rk->nic_tx = rk->nic_rx = -INFINITY;
        rk->missing = 0;
        rk->finished = 0;
        rk->queued = 1;
        s->ready[r] = r;
        if (s->traces) {
            rk->nops = 0;
            rk->next = 0;
            rk->prev_end = (int64_t)rk->init_ns;
            rk->call_number = 0;
            rk->call = -1;
            rk->eof = 0;
            rk->rd.base = rk->rd.len = rk->rd.keep = 0;
        } else {
            rk->ops = (lr_op *)(s->all_ops + s->rank_start[r]);
            rk->nops = s->rank_start[r + 1] - s->rank_start[r];
        }
    }
    s->ready_head = 0;
    s->ready_n = s->nranks;
}

static sim *sim_new(int32_t nranks)
{
    sim *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->nranks = nranks;
    s->ranks = calloc((size_t)nranks, sizeof *s->ranks);
    s->ready = calloc((size_t)nranks + 1, sizeof *s->ready);
    s->req_pool.size = sizeof(request);
    s->chan_pool.size = sizeof(channel);
    s->pend_pool.size = sizeof(pending);
    s->fifo_pool.size = sizeof(post_fifo);
    s->node_pool.size = sizeof(post_node);
    s->pers_pool.size = sizeof(persistent);
    s->coll_pool.size = sizeof(collective);
    pool_reset(&s->coll_pool);
    if (!s->ranks || !s->ready) {
        free(s->ranks);
        free(s->ready);
        free(s);
        return NULL;
    }
    return s;
}

API void lr_free(sim *s)
{
    if (!s)
        return;
    for (int32_t r = 0; r < s->nranks; r++) {
        rank *rk = &s->ranks[r];
        if (s->traces) {
            free(rk->ops);
            free(rk->rd.path);
        }
        free(rk->waits);
        free(rk->rd.win);
        map_free(&rk->reqs);
        map_free(&rk->chans);
        map_free(&rk->aux);
    }
    map_free(&s->colls);
    free(s->req_pool.items);
    free(s->chan_pool.items);
    free(s->pend_pool.items);
    free(s->fifo_pool.items);
    free(s->node_pool.items);
    free(s->pers_pool.items);
    free(s->coll_pool.items);
    free(s->unmodelled);
    free(s->ranks);
    free(s->ready);
    free(s);
}

/* Programs given as operations: rank r's are ops[rank_start[r] .. rank_start[r + 1]),
 * a wait's requests waits[op.req .. op.req + op.peer). The arrays must outlive the sim. */
API sim *lr_new_ops(int32_t nranks, const lr_op *ops, const int64_t *rank_start, const int64_t *waits)
{
    sim *s = sim_new(nranks);
    if (!s)
        return NULL;
    s->all_ops = ops;
    s->rank_start = rank_start;
    s->all_waits = waits;
    return s;
}

/* Adds rank r's record x (its seq-th collective on its communicator) to the instance it belongs
 * to; an instance every rank recorded alike is forgotten once all have (each rank's own record
 * says it all), one they recorded differently is kept in s->colls. 0, or -1 on error. */
static int contribute(sim *s, map3 *pending, int32_t r, int64_t i, const lr_rec *x, int base, uint32_t seq)
{
    key3 k = {x->comm_id, seq, 0};
    long slot = map_find(pending, k);
    collective *co;
    int64_t ci;
    if (slot < 0) {
        ci = pool_take(&s->coll_pool);
        if (ci < 0 || map_put(pending, k, (uint32_t)ci) != 0) {
            fail(s, ERR_MEMORY, r, i);
            return -1;
        }
        co = AT(&s->coll_pool, collective, ci);
        memset(co, 0, sizeof *co);
        co->base = base;
        co->bytes = co->least = x->bytes;
        co->root = co->first_root = x->peer;
        co->root_rank = r;
    } else {
        ci = pending->vals[slot];
        co = AT(&s->coll_pool, collective, ci);
        if (co->base != base) {
            fail(s, ERR_COLLECTIVE, r, i);
            s->err.value = x->comm_id;
            s->err.value2 = (uint64_t)seq + 1;
            s->err.base_here = base;
            s->err.base_other = co->base;
            return -1;
        }
        if (x->bytes > co->bytes)
            co->bytes = x->bytes;
        if (x->bytes < co->least)
            co->least = x->bytes;
        co->roots_differ |= x->peer != co->first_root;
        if (r >= co->root_rank) {
            co->root = x->peer;
            co->root_rank = r;
        }
    }
    if (++co->ranks < s->nranks)
        return 0;
    map_del(pending, map_find(pending, k));
    if (co->bytes == co->least && !co->roots_differ) {
        pool_give(&s->coll_pool, ci);
        return 0;
    }
    if (map_put(&s->colls, k, (uint32_t)ci) != 0) {
        fail(s, ERR_MEMORY, r, i);
        return -1;
    }
    return 0;
}

/* The n-th collective on each communicator as large as the world, over every rank: its largest
 * size (the schedule's message size) and root. The ranks' files are read side by side, each up to
 * its next collective in turn, so only the instances some rank has reached and another not yet
 * are held, and those the ranks recorded differently. */
static int scan_collectives(sim *s)
{
    map3 seen = {0}, pending = {0};
    int64_t *cursor = calloc((size_t)s->nranks, sizeof *cursor);
    int rc = cursor ? 0 : -1;
    int32_t active = s->nranks;
    if (!cursor)
        fail(s, ERR_MEMORY, 0, -1);
    for (int32_t r = 0; r < s->nranks; r++)
        s->ranks[r].rd.base = s->ranks[r].rd.len = s->ranks[r].rd.keep = 0;
    while (!rc && active > 0) {
        for (int32_t r = 0; r < s->nranks && !rc; r++) {
            rank *rk = &s->ranks[r];
            if (cursor[r] < 0)
                continue;
            for (;;) {
                int64_t i = cursor[r];
                if (i >= rk->rd.n) {
                    cursor[r] = -1;
                    active--;
                    break;
                }
                rk->rd.keep = i;
                const lr_rec *x = rec_peek(s, r, i);
                if (!x) {
                    rc = -1;
                    break;
                }
                cursor[r] = i + 1;
                int32_t c = cls_of(s, r, x->call);
                if (x->kind != 0 || (c & 0xff) != C_COLL || (int32_t)x->comm_size != s->nranks)
                    continue;
                key3 sk = {(uint64_t)r, x->comm_id, 0};
                long slot = map_find(&seen, sk);
                uint32_t seq = slot < 0 ? 0 : seen.vals[slot];
                if (slot < 0 ? map_put(&seen, sk, 1) != 0 : (seen.vals[slot]++, 0)) {
                    fail(s, ERR_MEMORY, r, i);
                    rc = -1;
                    break;
                }
                lr_rec copy = *x;
                if (contribute(s, &pending, r, i, &copy, (c >> 8) & 0xff, seq) != 0)
                    rc = -1;
                break;
            }
        }
    }
    /* instances some rank never reached: their values are over the ranks that did */
    for (size_t k = 0; !rc && k < pending.cap; k++)
        if (pending.used[k] && map_put(&s->colls, pending.keys[k], pending.vals[k]) != 0) {
            fail(s, ERR_MEMORY, 0, -1);
            rc = -1;
        }
    free(cursor);
    map_free(&seen);
    map_free(&pending);
    return rc;
}

/* Programs read from trace files: rank r's records start at records_offset[r] of paths[r]
 * (nrecords[r] of them); cls[cls_start[r] + call] classes its calls. Reads chunk records at a
 * time. NULL when out of memory; otherwise check lr_error (a file that cannot be read, a
 * collective that differs between ranks). */
API sim *lr_new_trace(int32_t nranks, const char *const *paths, const uint64_t *records_offset,
                      const int64_t *nrecords, const uint64_t *init_ns, const uint64_t *finalize_ns,
                      const int32_t *cls, const int32_t *cls_start, int64_t chunk)
{
    sim *s = sim_new(nranks);
    if (!s)
        return NULL;
    s->traces = 1;
    s->cls = cls;
    s->cls_start = cls_start;
    s->chunk = chunk > 0 ? chunk : 4096;
    s->unmodelled = calloc((size_t)cls_start[nranks] + 1, sizeof *s->unmodelled);
    if (!s->unmodelled) {
        lr_free(s);
        return NULL;
    }
    for (int32_t r = 0; r < nranks; r++) {
        rank *rk = &s->ranks[r];
        rk->rd.records_offset = records_offset[r];
        rk->rd.n = nrecords[r];
        rk->rd.chunk = s->chunk;
        rk->init_ns = init_ns[r];
        rk->finalize_ns = finalize_ns[r];
        rk->rd.path = strdup(paths[r]);
        if (!rk->rd.path) {
            lr_free(s);
            return NULL;
        }
    }
    scan_collectives(s);
    return s;
}

API void lr_error(const sim *s, lr_err *out) { *out = s->err; }

/* One replay under (o_s, o_r, g, G, L, S); fills each rank's end time and parts.
 * 0: done; 1: deadlock (stuck says where each rank stopped); -1: error (lr_error). */
API int lr_run(sim *s, const double *params, double *end, double *compute, double *overhead, double *waiting,
               lr_stuck *stuck)
{
    if (s->err.code) /* the trace cannot be read: every run would fail the same way */
        return -1;
    s->o_s = params[0], s->o_r = params[1], s->g = params[2], s->G = params[3], s->L = params[4];
    s->S = params[5];
    reset_run(s);
    while (s->ready_n) {
        int32_t r = s->ready[s->ready_head];
        s->ready_head = (s->ready_head + 1) % s->nranks;
        s->ready_n--;
        s->ranks[r].queued = 0;
        if (run_rank(s, r) != 0) {
            if (!s->err.code)
                fail(s, ERR_CORRUPT, r, -1);
            return -1;
        }
    }
    int stuck_any = 0;
    for (int32_t r = 0; r < s->nranks; r++) {
        rank *rk = &s->ranks[r];
        end[r] = rk->t;
        compute[r] = rk->compute;
        overhead[r] = rk->overhead;
        waiting[r] = rk->waiting;
        lr_stuck *st = &stuck[r];
        memset(st, 0, sizeof *st);
        st->finished = rk->finished;
        st->awaited_kind = -1;
        st->awaited_peer = -1;
        if (rk->finished)
            continue;
        stuck_any = 1;
        st->op = rk->op_base + rk->pos;
        st->call = rk->call;
        st->call_number = rk->call_number;
        const lr_op *op = &rk->ops[rk->pos];
        const int64_t *list = (s->traces ? rk->waits : s->all_waits) + op->req;
        int64_t latest = -1;
        for (int32_t k = 0; k < op->peer; k++) {
            request *q = req_find(s, r, list[k], NULL);
            if (q && !q->done && q->post > latest) {
                latest = q->post;
                st->awaited_kind = q->kind;
                st->awaited_peer = q->peer;
            }
        }
    }
    return stuck_any;
}

API int64_t lr_messages(const sim *s) { return s->messages; }
API void lr_collectives(const sim *s, int64_t *out) { memcpy(out, s->collectives, sizeof s->collectives); }
API void lr_unmodelled(const sim *s, int64_t *out)
{
    memcpy(out, s->unmodelled, (size_t)s->cls_start[s->nranks] * sizeof *out);
}

/* Per rank: the most records its reader held at once, and how many reads it made. */
API void lr_reader_stats(const sim *s, int64_t *peak, int64_t *reads)
{
    for (int32_t r = 0; r < s->nranks; r++) {
        peak[r] = s->ranks[r].rd.peak;
        reads[r] = s->ranks[r].rd.reads;
    }
}

/* ---- MPICH's collective schedules (schedules.py; docs/predict.md) ---- */

enum { B_BARRIER, B_BCAST, B_REDUCE, B_ALLREDUCE, B_ALLGATHER, B_ALLGATHERV, B_ALLTOALL, B_ALLTOALLV, B_ALLTOALLW,
       B_GATHER, B_GATHERV, B_SCATTER, B_SCATTERV, B_REDUCE_SCATTER, B_REDUCE_SCATTER_BLOCK, B_SCAN, B_EXSCAN,
       B_COUNT };
#define ALLREDUCE_SHORT 256
#define BCAST_SHORT 12288

typedef struct {
    int32_t *rounds, *ops, *peers;
    uint64_t *bytes;
    int n, cap, round;
} sched;

static void put(sched *sc, int op, int peer, uint64_t bytes)
{
    if (sc->n == sc->cap)
        return;
    sc->rounds[sc->n] = sc->round;
    sc->ops[sc->n] = op;
    sc->peers[sc->n] = peer;
    sc->bytes[sc->n] = bytes;
    sc->n++;
}

static void next_round(sched *sc) { sc->round++; }
static int pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }
static int mod(int a, int n) { return ((a % n) + n) % n; }
static int bits(int n) { int b = 0; while (n) { b++; n >>= 1; } return b; }

static void exchange(sched *sc, int peer, uint64_t bytes)
{
    put(sc, 0, peer, bytes);
    put(sc, 1, peer, bytes);
    next_round(sc);
}

/* Binomial broadcast; reversed (leaves to root, sends and receives swapped) for a reduce. */
static void binomial(sched *sc, int rank, int size, uint64_t nbytes, int root, int reversed)
{
    int vr = mod(rank - root, size);
    int steps_peer[64], steps_op[64], n = 0;
    int mask = 1;
    while (mask < size) {
        if (vr & mask) {
            steps_op[n] = 1;
            steps_peer[n++] = mod(vr - mask + root, size);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (vr + mask < size) {
            steps_op[n] = 0;
            steps_peer[n++] = mod(vr + mask + root, size);
        }
        mask >>= 1;
    }
    for (int k = 0; k < n; k++) {
        int at = reversed ? n - 1 - k : k;
        put(sc, reversed ? !steps_op[at] : steps_op[at], steps_peer[at], nbytes);
        next_round(sc);
    }
}

static void doubling(sched *sc, int rank, int size, uint64_t nbytes, int grow)
{
    int k = 0;
    for (int mask = 1; mask < size; mask <<= 1, k++) {
        int peer = rank ^ mask;
        if (peer < size)
            exchange(sc, peer, grow ? nbytes << k : nbytes);
    }
}

static void halving(sched *sc, int rank, int size, uint64_t nbytes)
{
    for (int k = 0; k < bits(size) - 1; k++)
        exchange(sc, rank ^ (size >> (k + 1)), nbytes >> (k + 1));
}

static void allreduce(sched *sc, int rank, int size, uint64_t nbytes)
{
    if (nbytes <= ALLREDUCE_SHORT || !pow2(size)) {
        doubling(sc, rank, size, nbytes, 0);
        return;
    }
    halving(sc, rank, size, nbytes);
    for (int k = 0; k < bits(size) - 1; k++)
        exchange(sc, rank ^ (1 << k), (nbytes / (uint64_t)size) << k);
}

static void allgather(sched *sc, int rank, int size, uint64_t nbytes)
{
    if (pow2(size)) {
        doubling(sc, rank, size, nbytes, 1);
        return;
    }
    for (int k = 0; k < size - 1; k++) {
        put(sc, 0, mod(rank + 1, size), nbytes);
        put(sc, 1, mod(rank - 1, size), nbytes);
        next_round(sc);
    }
}

static void gather(sched *sc, int rank, int size, uint64_t nbytes, int root, int scatter)
{
    uint64_t each = scatter ? (size ? nbytes / (uint64_t)size : 0) : nbytes;
    if (rank == root) {
        for (int peer = 0; peer < size; peer++)
            if (peer != root)
                put(sc, scatter ? 0 : 1, peer, each);
    } else
        put(sc, scatter ? 1 : 0, root, each);
    next_round(sc);
}

/* One rank's part of a collective as (round, op 0 send / 1 receive, peer, bytes); returns how many. */
static int schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
                    int32_t *peers, uint64_t *bytes, int cap)
{
    sched sc = {rounds, ops, peers, bytes, 0, cap, 0};
    if (root < 0)
        root = 0;
    switch (base) {
    case B_BARRIER:
        for (int k = 1; k < size; k <<= 1) {
            put(&sc, 0, mod(rank + k, size), 0);
            put(&sc, 1, mod(rank - k, size), 0);
            next_round(&sc);
        }
        break;
    case B_BCAST:
        if (nbytes <= BCAST_SHORT || size < 3)
            binomial(&sc, rank, size, nbytes, root, 0);
        else {
            gather(&sc, rank, size, nbytes, root, 1);
            allgather(&sc, rank, size, nbytes / (uint64_t)size);
        }
        break;
    case B_REDUCE:
        binomial(&sc, rank, size, nbytes, root, 1);
        break;
    case B_ALLREDUCE:
        allreduce(&sc, rank, size, nbytes);
        break;
    case B_ALLGATHER:
    case B_ALLGATHERV:
        allgather(&sc, rank, size, nbytes);
        break;
    case B_ALLTOALL:
    case B_ALLTOALLV:
    case B_ALLTOALLW: {
        uint64_t each = size ? nbytes / (uint64_t)size : 0;
        for (int i = 1; i < size; i++) {
            put(&sc, 0, mod(rank + i, size), each);
            put(&sc, 1, mod(rank - i, size), each);
            next_round(&sc);
        }
        break;
    }
    case B_GATHER:
    case B_GATHERV:
        gather(&sc, rank, size, nbytes, root, 0);
        break;
    case B_SCATTER:
    case B_SCATTERV:
        gather(&sc, rank, size, nbytes, root, 1);
        break;
    case B_REDUCE_SCATTER:
    case B_REDUCE_SCATTER_BLOCK:
        if (!pow2(size))
            allreduce(&sc, rank, size, nbytes);
        else
            halving(&sc, rank, size, nbytes);
        break;
    case B_SCAN:
    case B_EXSCAN:
        doubling(&sc, rank, size, nbytes, 0);
        break;
    default:
        break;
    }
    return sc.n;
}

/* The schedule, for tests against schedules.py. */
API int lr_schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
                    int32_t *peers, uint64_t *bytes, int cap)
{
    return schedule(base, rank, size, nbytes, root, rounds, ops, peers, bytes, cap);
}

/* The most entries each part of the replay's state held at once: requests, channels, unmatched
 * messages, live posts of handles, collective instances held by the scan (for tests of bounded
 * memory). */
API void lr_state_peak(const sim *s, int64_t *out)
{
    out[0] = (int64_t)s->req_pool.n;
    out[1] = (int64_t)s->chan_pool.n;
    out[2] = (int64_t)s->pend_pool.n;
    out[3] = (int64_t)s->node_pool.n;
    out[4] = (int64_t)s->coll_pool.n;
}

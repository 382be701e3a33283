/* The replay core's private header: the types its files share (operations, trace records,
 * the map and pools, requests, channels, ranks and the sim) and the functions they call
 * across files. Only the lr_* entry points (API) leave libloggp-replay.so. */
#ifndef LOGGP_REPLAY_INTERNAL_H
#define LOGGP_REPLAY_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#define API __attribute__((visibility("default")))

/* OP_FORGET: the trace freed the request (MPI_Request_free): nothing will wait for it, so its
 * entry goes (traces only; it changes no time). */
enum { OP_CALC = 0, OP_ISEND = 1, OP_IRECV = 2, OP_WAIT = 3, OP_DONE = 4, OP_FORGET = 5 };

/* An ISEND's mode: a synchronous send completes when the receiver's answer arrives, a buffered
 * one at its injection (loggops.py). */
enum { SEND_STANDARD = 0, SEND_SYNC = 1, SEND_BUFFERED = 2 };

/* One operation (Python's numpy dtype native.OP mirrors it). */
typedef struct {
    int64_t req;    /* ISEND, IRECV, DONE: the request; WAIT: where its requests start in the wait list */
    int64_t comm, tag;
    uint64_t bytes;
    double ns;      /* CALC */
    int32_t kind, peer; /* WAIT: peer = how many requests */
    int32_t mode, unused; /* ISEND: SEND_* */
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
enum { ERR_NONE = 0, ERR_IO, ERR_CORRUPT, ERR_COLLECTIVE, ERR_TRUNCATED, ERR_MEMORY, ERR_PEER, ERR_NOT_MEMBER };
typedef struct {
    int32_t code, rank;
    int64_t record;       /* index of the record in the rank's trace */
    uint64_t value, value2; /* CORRUPT: call, kind; COLLECTIVE: comm, its number; IO: errno;
                             * PEER: the rank, its communicator's size + 1 (0: the run's); NOT_MEMBER: comm */
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
#define CLS_SYNC (1 << 18)     /* a synchronous send (Ssend, Issend, Ssend_init) */
#define CLS_BUFFERED (1 << 19) /* a buffered send (Bsend, Ibsend, Bsend_init) */
#define ANY_SOURCE (-2)
#define ANY_TAG (-1)
#define COLL_TAG (INT64_C(1) << 40)     /* collective messages' tags: apart from any MPI tag */

/* ---- an open-addressing map of three 64-bit words to a 32-bit value (map.c) ---- */
typedef struct { uint64_t a, b, c; } key3;
typedef struct {
    key3 *keys;
    uint32_t *vals;
    uint8_t *used;
    size_t cap, n;
} map3;

void map_clear(map3 *m);
void map_free(map3 *m);
/* The slot of k, or -1 when absent. */
long map_find(const map3 *m, key3 k);
/* Inserts k (absent) with value v; -1 when out of memory. */
int map_put(map3 *m, key3 k, uint32_t v);
/* Removes slot s, shifting back the entries its removal would hide. */
void map_del(map3 *m, long slot);

/* ---- pools: growable arrays of fixed-size items with a free list (pool.c) ---- */
typedef struct {
    char *items;
    size_t size, cap, n;
    int64_t free_head;
} pool;

/* A free item's index (the pool grows when none is free); -1 when out of memory. */
int64_t pool_take(pool *p);
void pool_give(pool *p, int64_t i);
/* Every item free again; a new pool needs it before its first take. */
void pool_reset(pool *p);

#define AT(p, type, i) ((type *)((p)->items + (size_t)(i) * sizeof(type)))

/* A request of one rank. */
typedef struct {
    double at;        /* completion time, once done */
    int64_t post;     /* operation index of its post (for saying what a stuck rank waits for) */
    int32_t peer;
    uint8_t done, is_recv, kind, in_wait;
    uint8_t forgotten;  /* freed by the trace before it completed: dropped when it does */
    uint8_t acks;       /* a receive of a synchronous message: its wait pays o_s for the answer */
} request;

/* A posted send or receive no partner took yet. */
typedef struct {
    int64_t next;     /* first word: the free list's link too */
    int64_t req;
    uint64_t bytes;
    double time;      /* a send's injection, a receive's post */
    int32_t rank;
    int32_t mode;     /* a send's SEND_* */
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
    /* the communicators' recorded memberships: (id, 3, 0) -> k; its world ranks are
     * comm_members[comm_start[k] .. comm_start[k + 1]) in its rank order */
    map3 comms;
    const int64_t *comm_start;
    const int32_t *comm_members;
    pool coll_pool;
    /* the run */
    double o_s, o_r, g, G, L, S;
    pool req_pool;          /* requests (each rank's map points into it) */
    pool chan_pool, pend_pool;
    pool fifo_pool, node_pool, pers_pool;
    int32_t *ready;
    int64_t ready_head, ready_n;
    /* a wait's requests in the order they completed (simulate.c) */
    struct wait_slot {
        double at;
        int32_t k;
    } *wait_order;
    int64_t wait_cap;
    /* counts of the last run (traces) */
    int64_t messages;
    int64_t collectives[32];
    int64_t *unmodelled;    /* per rank, per call (cls_start layout) */
    lr_err err;
};

/* Records the first error of the run (replay_core.c). */
void fail(sim *s, int code, int32_t r, int64_t record);

/* ---- reading a rank's trace in chunks (reader.c) ---- */

/* Reads chunks until record i is in the window, dropping the records before keep. */
int rec_load(sim *s, int32_t r, int64_t i);

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

static inline int32_t cls_of(sim *s, int32_t r, uint16_t call) { return s->cls[s->cls_start[r] + call]; }

/* ---- requests and channels (requests.c) ---- */

/* The request's entry (slot: where a hand-made program's rank maps it); NULL if it has none. */
request *req_find(sim *s, int32_t r, int64_t req, long *slot);
/* A trace's request: a new entry of req_pool; -1 when out of memory. */
int64_t req_alloc(sim *s, int32_t r);
/* The request's entry, made (not done) if new; NULL when out of memory. */
request *req_make(sim *s, int32_t r, int64_t req);
/* Queues rank r to run, unless it is queued already. */
void wake(sim *s, int32_t r);
/* The request leaves: nothing refers to it any more (waited for, or freed and complete). */
void req_drop(sim *s, int32_t r, int64_t req);
/* A send (is_send) or receive meets the oldest partner on its channel, or queues. */
void post(sim *s, int is_send, int32_t src, int32_t dst, int64_t comm, int64_t tag, pending item);

/* ---- communicators' ranks as world ranks (translate.c) ---- */

/* Whether the ranks of communicator comm (of size ranks) map to world ranks: 1 with *members its
 * world ranks in its rank order (NULL: the world's own order, for a communicator as large as the
 * world whose membership the trace does not record), 0 when they do not (not modelled). */
int comm_members(const sim *s, uint32_t comm, uint32_t size, const int32_t **members);

/* ---- trace records into operations (translate.c), collectives (collectives.c, schedules.c) ---- */

/* Operations for the next call of rank r (the closing computation after the last); how many
 * (0: the trace has ended), -1 on error. */
int translate(sim *s, int32_t r);
/* The n-th collective on each communicator whose ranks map to world ranks, over every rank. */
int scan_collectives(sim *s);
/* One rank's part of a collective as (round, op 0 send / 1 receive, peer, bytes); returns how many. */
int schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
             int32_t *peers, uint64_t *bytes, int cap);

/* ---- the replay (simulate.c) ---- */

/* Every rank back at its start, for another run. */
void reset_run(sim *s);

#endif

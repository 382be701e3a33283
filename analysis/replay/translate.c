/* Trace records turned into operations, one call at a time (replay.py's _program): sends,
 * receives and waits as their records say, persistent requests, and collectives as MPICH's
 * schedules. */
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

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

/* The operation emitted (a standard send when it is one), or NULL on error. */
static lr_op *emit_simple(sim *s, rank *rk, int kind, int32_t peer, int64_t comm, int64_t tag, uint64_t bytes,
                          int64_t req)
{
    if ((kind == OP_ISEND || kind == OP_IRECV) && (peer < 0 || peer >= s->nranks)) {
        /* a damaged record: its rank would index past the run's ranks (or world_rank said so) */
        if (!s->err.code) {
            fail(s, ERR_PEER, (int32_t)(rk - s->ranks), rk->rd.keep);
            s->err.value = (uint64_t)(uint32_t)peer;
        }
        return NULL;
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
    return op;
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

int comm_members(const sim *s, uint32_t comm, uint32_t size, const int32_t **members)
{
    long slot = s->comms.n ? map_find(&s->comms, (key3){comm, 3, 0}) : -1; /* none listed: no lookup */
    if (slot >= 0) {
        uint32_t k = s->comms.vals[slot];
        if (s->comm_start[k + 1] - s->comm_start[k] == (int64_t)size) {
            *members = s->comm_members + s->comm_start[k];
            return 1;
        }
    }
    *members = NULL;
    return (int32_t)size == s->nranks;
}

/* peer, a rank of rec's communicator, as a world rank; -1 (and the error) when it is none of its ranks. */
static int32_t world_rank(sim *s, rank *rk, const lr_rec *rec, int32_t peer)
{
    const int32_t *members;
    comm_members(s, rec->comm_id, rec->comm_size, &members);
    if (!members)
        return peer;
    if (peer >= 0 && (uint32_t)peer < rec->comm_size)
        return members[peer];
    fail(s, ERR_PEER, (int32_t)(rk - s->ranks), rk->rd.keep);
    s->err.value = (uint64_t)(uint32_t)peer;
    s->err.value2 = (uint64_t)rec->comm_size + 1; /* a rank of a communicator of this size */
    return -1;
}

/* *req, allocated on first use (-1: not yet). */
static int64_t req_of(sim *s, rank *rk, int64_t *req)
{
    if (*req < 0)
        *req = req_alloc(s, (int32_t)(rk - s->ranks));
    return *req;
}

/* A send as rec says (its call, or the init a Start made it from, gives the mode). */
static int add_send(sim *s, rank *rk, const lr_rec *rec, int64_t *req)
{
    if (rec->peer < 0)
        return 0;
    lr_op *op = emit_simple(s, rk, OP_ISEND, world_rank(s, rk, rec, rec->peer), rec->comm_id, rec->tag, rec->bytes,
                            req_of(s, rk, req));
    if (op) {
        int32_t c = cls_of(s, (int32_t)(rk - s->ranks), rec->call);
        op->mode = (c & CLS_SYNC) ? SEND_SYNC : (c & CLS_BUFFERED) ? SEND_BUFFERED : SEND_STANDARD;
    }
    s->messages++;
    return 1;
}

static int add_recv(sim *s, rank *rk, const lr_rec *rec, const lr_rec *got, int64_t *req)
{
    if (!got)
        got = rec;
    if (got->peer < 0 || got->peer == ANY_SOURCE || got->tag == ANY_TAG)
        return 0;
    emit_simple(s, rk, OP_IRECV, world_rank(s, rk, rec, got->peer), rec->comm_id, got->tag, rec->bytes,
                req_of(s, rk, req));
    return 1;
}

/* One MPI call being turned into operations: its record and what the records after it say. */
typedef struct {
    lr_rec rec;
    int64_t at;             /* its record's index */
    int cls, base;          /* its class (C_*) and, for a collective, which one (B_*) */
    int local;              /* on a communicator whose ranks map to world ranks: modelled */
    int posted;             /* it posts a request later records complete */
    int64_t req;            /* its request (a post's is what later completions name), -1 until used */
    lr_rec got;             /* a receive's completion, read ahead (when got_at >= 0) */
    int64_t got_at;
    lr_rec first_completion; /* of the completions right after the call (ncompl of them) */
    int ncompl;
    int64_t first_wait;     /* where the waits of its completions start */
} mpi_call;

/* The call's time since the last one as computation, its class, and its post: a receive reads
 * its completion ahead before the post joins its handle's live posts. 0, or -1 on error. */
static int begin_call(sim *s, int32_t r, int64_t i, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    int32_t c = cls_of(s, r, cl->rec.call);
    rk->call_number++;
    rk->call = cl->rec.call;
    emit_calc(s, rk, (int64_t)(cl->rec.start_ns - (uint64_t)rk->prev_end));
    rk->prev_end = (int64_t)cl->rec.end_ns;
    cl->at = i;
    cl->cls = c & 0xff;
    cl->base = (c >> 8) & 0xff;
    const int32_t *members;
    cl->local = comm_members(s, cl->rec.comm_id, cl->rec.comm_size, &members);
    cl->req = -1;
    cl->posted = (c & CLS_POSTING) && cl->rec.request;
    cl->got_at = -1;
    if (cl->local && (cl->cls == C_IRECV || cl->cls == C_START)) {
        cl->got_at = completion_of(s, r, i, cl->rec.request, &cl->got);
        if (cl->got_at == -2)
            return -1;
    }
    if (cl->posted)
        fifo_push(s, r, cl->rec.request, req_of(s, rk, &cl->req));
    else if ((c & CLS_FREEING) && cl->rec.request && fifo_of(s, r, cl->rec.request, 0))
        emit_simple(s, rk, OP_FORGET, 0, 0, 0, 0, fifo_pop(s, r, cl->rec.request));
    return 0;
}

/* The completion records right after the call: each takes its handle's oldest live post (a wait
 * call waits for those requests); the rank moves on past them. 0, or -1 on error. */
static int read_completions(sim *s, int32_t r, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    int64_t j = cl->at + 1;
    cl->first_wait = rk->nwaits;
    cl->ncompl = 0;
    memset(&cl->first_completion, 0, sizeof cl->first_completion);
    for (; j < rk->rd.n; j++) {
        lr_rec x;
        if (rec_get(s, r, j, &x) != 0)
            return -1;
        if (x.kind != 1)
            break;
        if (cl->ncompl++ == 0)
            cl->first_completion = x;
        if (x.request) {
            /* a request no recorded call posted (MPI-IO's, one-sided, a matched receive): the
             * wait keeps its own time for it */
            int64_t req = fifo_pop(s, r, x.request);
            if (req >= 0 && cl->cls == C_WAIT && emit_wait_req(s, rk, req) != 0)
                return -1;
        }
    }
    rk->next = j;
    return 0;
}

/* A blocking call: a wait for the request it just posted. */
static void wait_for(sim *s, rank *rk, int64_t req)
{
    int64_t w = rk->nwaits;
    emit_wait_req(s, rk, req);
    emit_wait(s, rk, w);
}

/* Sends and receives, blocking or not, and Sendrecv; 1 modelled, 0 not (another communicator). */
static int point_to_point(sim *s, rank *rk, mpi_call *cl)
{
    if (!cl->local)
        return 0;
    switch (cl->cls) {
    case C_SEND:
    case C_ISEND:
        if (!add_send(s, rk, &cl->rec, &cl->req)) {
            if (cl->posted)
                emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, cl->req);
        } else if (cl->cls == C_SEND)
            wait_for(s, rk, cl->req);
        break;
    case C_IRECV:
        if (!add_recv(s, rk, &cl->rec, cl->got_at >= 0 ? &cl->got : NULL, &cl->req) && cl->posted)
            emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, cl->req);
        break;
    case C_RECV:
        if (cl->ncompl && add_recv(s, rk, &cl->rec, &cl->first_completion, &cl->req))
            wait_for(s, rk, cl->req);
        break;
    default: { /* C_SENDRECV */
        int64_t w = rk->nwaits, send_req = -1, recv_req = -1;
        if (add_send(s, rk, &cl->rec, &send_req))
            emit_wait_req(s, rk, send_req);
        if (cl->ncompl && add_recv(s, rk, &cl->rec, &cl->first_completion, &recv_req))
            emit_wait_req(s, rk, recv_req);
        if (rk->nwaits > w)
            emit_wait(s, rk, w);
    }
    }
    return 1;
}

/* Send_init or Recv_init: its record kept under its handle for the Starts to come. 1, or -1 on error. */
static int persistent_init(sim *s, int32_t r, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    key3 k = {cl->rec.request, 1, 0};
    long slot = map_find(&rk->aux, k);
    int64_t pi;
    if (slot >= 0)
        pi = rk->aux.vals[slot];
    else {
        pi = pool_take(&s->pers_pool);
        if (pi < 0 || map_put(&rk->aux, k, (uint32_t)pi) != 0) {
            fail(s, ERR_MEMORY, r, cl->at);
            return -1;
        }
    }
    AT(&s->pers_pool, persistent, pi)->rec = cl->rec;
    return 1;
}

/* Start: the send or receive its init record made; 1 modelled, 0 not (no init, another communicator). */
static int persistent_start(sim *s, int32_t r, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    long slot = map_find(&rk->aux, (key3){cl->rec.request, 1, 0});
    const lr_rec *made = slot < 0 ? NULL : &AT(&s->pers_pool, persistent, rk->aux.vals[slot])->rec;
    const int32_t *members;
    if (!made || !comm_members(s, made->comm_id, made->comm_size, &members))
        return 0;
    lr_rec m = *made;
    int ok = (cls_of(s, r, m.call) & 0xff) == C_SEND_INIT
                 ? add_send(s, rk, &m, &cl->req)
                 : add_recv(s, rk, &m, cl->got_at >= 0 ? &cl->got : NULL, &cl->req);
    if (!ok && cl->posted)
        emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, cl->req);
    return 1;
}

/* This rank's number for the next collective on comm (its instance); -1 when out of memory. */
static int64_t collective_seq(sim *s, int32_t r, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    key3 sk = {cl->rec.comm_id, 2, 0};
    long slot = map_find(&rk->aux, sk);
    uint32_t seq = slot < 0 ? 0 : rk->aux.vals[slot];
    if (slot < 0) {
        if (map_put(&rk->aux, sk, 1) != 0) {
            fail(s, ERR_MEMORY, r, cl->at);
            return -1;
        }
    } else
        rk->aux.vals[slot]++;
    return seq;
}

/* A collective as MPICH's schedule for it over its communicator's ranks, each a world rank through
 * its members: each round's sends and receives, then a wait for them. 1 modelled, 0 not (another
 * communicator), -1 on error. */
static int collective_ops(sim *s, int32_t r, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    const int32_t *members;
    if (!comm_members(s, cl->rec.comm_id, cl->rec.comm_size, &members))
        return 0;
    int32_t size = (int32_t)cl->rec.comm_size, me = r;
    if (members) {
        for (me = 0; me < size && members[me] != r; me++)
            ;
        if (me == size) { /* the reader checks a file's own members; another file's may share the id */
            fail(s, ERR_NOT_MEMBER, r, rk->rd.keep);
            s->err.value = cl->rec.comm_id;
            s->err.value2 = (uint64_t)cl->base;
            return -1;
        }
    }
    int64_t seq_or_error = collective_seq(s, r, cl);
    if (seq_or_error < 0)
        return -1;
    uint32_t seq = (uint32_t)seq_or_error;
    /* the instance as every rank recorded it, or as the scan found it where they differ */
    long cs = map_find(&s->colls, (key3){cl->rec.comm_id, seq, 0});
    uint64_t nbytes = cl->rec.bytes;
    int root = cl->rec.peer;
    if (cs >= 0) {
        const collective *co = AT(&s->coll_pool, collective, s->colls.vals[cs]);
        nbytes = co->bytes;
        root = co->root;
    }
    if (root >= size) {
        /* a damaged record: the schedules take the root modulo the ranks, so say it here */
        fail(s, ERR_PEER, r, rk->rd.keep);
        s->err.value = (uint64_t)(uint32_t)root;
        s->err.value2 = members ? (uint64_t)size + 1 : 0;
        return -1;
    }
    int cap = 3 * size + 8; /* a large Bcast: a scatter + a ring allgather 2 (size - 1) */
    int32_t *rounds = malloc((size_t)cap * sizeof *rounds), *kinds = malloc((size_t)cap * sizeof *kinds),
            *peers = malloc((size_t)cap * sizeof *peers);
    uint64_t *sizes = malloc((size_t)cap * sizeof *sizes);
    if (!rounds || !kinds || !peers || !sizes) {
        free(rounds), free(kinds), free(peers), free(sizes);
        fail(s, ERR_MEMORY, r, cl->at);
        return -1;
    }
    int n = schedule(cl->base, me, size, nbytes, root, rounds, kinds, peers, sizes, cap);
    int64_t w = rk->nwaits;
    for (int k = 0; k < n; k++) {
        int64_t req = req_alloc(s, r);
        emit_simple(s, rk, kinds[k] ? OP_IRECV : OP_ISEND, members ? members[peers[k]] : peers[k], cl->rec.comm_id,
                    COLL_TAG + seq, sizes[k], req);
        s->messages += kinds[k] == 0;
        emit_wait_req(s, rk, req);
        if (k + 1 == n || rounds[k + 1] != rounds[k]) {
            emit_wait(s, rk, w);
            w = rk->nwaits;
        }
    }
    free(rounds), free(kinds), free(peers), free(sizes);
    if (cl->posted)
        emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, cl->req);
    if (cl->base < 32)
        s->collectives[cl->base]++;
    return 1;
}

/* The call's own operations, by its class: 1 modelled, 0 not (kept as computation), -1 on error. */
static int call_ops(sim *s, int32_t r, mpi_call *cl)
{
    rank *rk = &s->ranks[r];
    switch (cl->cls) {
    case C_SEND:
    case C_ISEND:
    case C_IRECV:
    case C_RECV:
    case C_SENDRECV:
        return point_to_point(s, rk, cl);
    case C_WAIT:
        if (rk->nwaits > cl->first_wait)
            emit_wait(s, rk, cl->first_wait);
        else
            emit_calc(s, rk, (int64_t)(cl->rec.end_ns - cl->rec.start_ns));
        return 1;
    case C_SEND_INIT:
    case C_RECV_INIT:
        return persistent_init(s, r, cl);
    case C_START:
        return persistent_start(s, r, cl);
    case C_COLL:
        return collective_ops(s, r, cl);
    case C_IGNORED:
        return 1;
    default:
        return 0;
    }
}

/* Operations for the next call of rank r (the closing computation after the last); how many
 * (0: the trace has ended), -1 on error. */
int translate(sim *s, int32_t r)
{
    rank *rk = &s->ranks[r];
    rk->nops = rk->pos = 0;
    rk->nwaits = 0;
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
        mpi_call cl;
        if (rec_get(s, r, i, &cl.rec) != 0)
            return -1;
        if (cl.rec.kind != 0) { /* a completion with no call before it */
            if (cl.rec.request)
                fifo_pop(s, r, cl.rec.request);
            rk->next = i + 1;
            continue;
        }
        if (begin_call(s, r, i, &cl) != 0 || read_completions(s, r, &cl) != 0)
            return -1;
        int modelled = call_ops(s, r, &cl);
        if (modelled < 0)
            return -1;
        if (!modelled) {
            emit_calc(s, rk, (int64_t)(cl.rec.end_ns - cl.rec.start_ns));
            s->unmodelled[s->cls_start[r] + cl.rec.call]++;
            if (cl.posted) /* done within the time kept, when a completion names it */
                emit_simple(s, rk, OP_DONE, 0, 0, 0, 0, cl.req);
        }
        if (s->err.code)
            return -1;
    }
    return s->err.code ? -1 : (int)(rk->nops > 0);
}

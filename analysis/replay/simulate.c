/* The replay: ranks run in turn until each waits for what is not known yet; a completion
 * wakes the rank waiting for it. o_s, o_r, g, G and L are paid here. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

/* Operations a rank runs before the others get a turn: a rank that never waits (sends it
 * frees, say) would otherwise post its whole trace before any receiver takes a message. */
#define QUANTUM 64

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

/* A send: o_s and the gap, or a copy to oneself; eager and buffered sends are done at once, a
 * synchronous one when its answer is taken (its wait pays o_r). 0, or -1 on error. */
static int start_send(sim *s, int32_t r, rank *rk, const lr_op *op)
{
    int to_self = op->peer == r;
    int mode = to_self ? SEND_STANDARD : op->mode; /* to oneself MPI copies it */
    double inj = to_self ? copy_to_self(s, rk) : inject(s, rk, op->bytes);
    request *q = req_make(s, r, op->req);
    if (!q)
        return -1;
    q->kind = OP_ISEND;
    q->peer = op->peer;
    q->post = rk->op_base + rk->pos;
    q->is_recv = mode == SEND_SYNC;
    q->in_wait = 0;
    q->done = mode == SEND_BUFFERED || (mode == SEND_STANDARD && (to_self || (double)op->bytes <= s->S));
    q->at = inj;
    pending item = {.req = op->req, .bytes = op->bytes, .time = inj, .rank = r, .mode = mode};
    post(s, 1, r, op->peer, op->comm, op->tag, item);
    return 0;
}

/* A receive posted now; o_r is paid at its wait. 0, or -1 on error. */
static int start_recv(sim *s, int32_t r, rank *rk, const lr_op *op)
{
    request *q = req_make(s, r, op->req);
    if (!q)
        return -1;
    q->kind = OP_IRECV;
    q->peer = op->peer;
    q->post = rk->op_base + rk->pos;
    q->is_recv = op->peer != r; /* from oneself: o_r was paid at the send */
    q->acks = 0;
    pending item = {.req = op->req, .bytes = op->bytes, .time = rk->t, .rank = r};
    post(s, 0, op->peer, r, op->comm, op->tag, item);
    return 0;
}

static int by_completion(const void *a, const void *b)
{
    const struct wait_slot *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at ? 1 : (x->k > y->k) - (x->k < y->k);
}

/* A wait: 1 when a request is not complete yet (the rank sleeps until the last one is); else the
 * rank moves to the latest completion, a receive paying o_r and the receive gap, and 0. */
static int finish_wait(sim *s, int32_t r, rank *rk, const lr_op *op)
{
    const int64_t *list = (s->traces ? rk->waits : s->all_waits) + op->req;
    if (op->peer > s->wait_cap) {
        struct wait_slot *grown = realloc(s->wait_order, (size_t)op->peer * sizeof *grown);
        if (!grown) {
            fail(s, ERR_MEMORY, r, -1);
            return 0;
        }
        s->wait_order = grown;
        s->wait_cap = op->peer;
    }
    /* taken as they completed, not in the list's order: MPI's Waitall does not depend on the
     * order of its arguments (ties keep that order) */
    int64_t missing = 0;
    int32_t n = 0, in_order = 1;
    for (int32_t k = 0; k < op->peer; k++) {
        request *q = req_find(s, r, list[k], NULL);
        if (!q || !q->done) {
            missing++;
            continue;
        }
        in_order &= n == 0 || s->wait_order[n - 1].at <= q->at;
        s->wait_order[n++] = (struct wait_slot){q->at, k};
    }
    if (missing) {
        for (int32_t k = 0; k < op->peer; k++) {
            request *q = req_find(s, r, list[k], NULL);
            if (q && !q->done)
                q->in_wait = 1;
        }
        rk->missing = missing;
        return 1;
    }
    if (!in_order && n > 32) {
        qsort(s->wait_order, (size_t)n, sizeof *s->wait_order, by_completion);
    } else if (!in_order) { /* a few: an insertion sort, stable, without qsort's calls */
        for (int32_t j = 1; j < n; j++) {
            struct wait_slot x = s->wait_order[j];
            int32_t i = j;
            for (; i > 0 && s->wait_order[i - 1].at > x.at; i--)
                s->wait_order[i] = s->wait_order[i - 1];
            s->wait_order[i] = x;
        }
    }
    for (int32_t j = 0; j < n; j++) {
        int32_t k = s->wait_order[j].k;
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
            if (q->acks) { /* it answers a synchronous message */
                rk->t += s->o_s;
                rk->overhead += s->o_s;
            }
        } else if (at > rk->t) {
            rk->waiting += at - rk->t;
            rk->t = at;
        }
        req_drop(s, r, list[k]);
    }
    return 0;
}

/* The rank's next operation in *op, translating its trace's next call when the last is used up:
 * 1, or 0 when the rank has ended, -1 on error. */
static int next_op(sim *s, int32_t r, rank *rk, const lr_op **op)
{
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
    *op = &rk->ops[rk->pos];
    return 1;
}

/* Runs rank r until it waits for what is not known yet, ends, or has had its turn; -1 on error. */
static int run_rank(sim *s, int32_t r)
{
    rank *rk = &s->ranks[r];
    for (int turn = 0;; turn++) {
        if (turn == QUANTUM && s->ready_n > 0) {
            wake(s, r);
            return 0;
        }
        const lr_op *op;
        int next = next_op(s, r, rk, &op);
        if (next <= 0)
            return next;
        switch (op->kind) {
        case OP_CALC:
            rk->t += op->ns;
            rk->compute += op->ns;
            break;
        case OP_ISEND:
            if (start_send(s, r, rk, op) != 0)
                return -1;
            break;
        case OP_IRECV:
            if (start_recv(s, r, rk, op) != 0)
                return -1;
            break;
        case OP_WAIT:
            if (finish_wait(s, r, rk, op))
                return 0;
            break;
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

void reset_run(sim *s)
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

/* Where rank r stopped after a deadlock: its operation and call, and the latest-posted request of
 * its wait that never completed. */
static void where_stuck(sim *s, int32_t r, lr_stuck *st)
{
    rank *rk = &s->ranks[r];
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
        where_stuck(s, r, st);
    }
    return stuck_any;
}

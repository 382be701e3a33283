/* Requests and channels: a rank's requests, and the sends and receives that wait on a
 * channel (sender, communicator, tag) until a partner posts; a match completes both under
 * LogGOPS (eager up to S, rendezvous above). */
#include <math.h>
#include <string.h>

#include "replay_internal.h"

request *req_find(sim *s, int32_t r, int64_t req, long *slot)
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
int64_t req_alloc(sim *s, int32_t r)
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
request *req_make(sim *s, int32_t r, int64_t req)
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

void wake(sim *s, int32_t r)
{
    rank *rk = &s->ranks[r];
    if (rk->queued)
        return;
    rk->queued = 1;
    s->ready[(s->ready_head + s->ready_n) % s->nranks] = r;
    s->ready_n++;
}

/* The request leaves: nothing refers to it any more (waited for, or freed and complete). */
void req_drop(sim *s, int32_t r, int64_t req)
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
    double taken; /* when the receiver can take it: a synchronous message is answered then */
    if (snd->mode == SEND_SYNC) {
        request *q = req_find(s, rcv->rank, rcv->req, NULL);
        if (q && !q->forgotten)
            q->acks = 1;
    }
    if ((double)snd->bytes <= s->S) {
        double arrival = snd->time + flight + s->L;
        complete(s, rcv->rank, rcv->req, arrival);
        taken = fmax(arrival, rcv->time);
    } else {
        double go_ahead = fmax(snd->time + s->L, rcv->time) + s->L;
        double data_end = go_ahead + flight;
        if (snd->mode == SEND_STANDARD) /* a buffered send was done at its injection */
            complete(s, snd->rank, snd->req, data_end);
        taken = data_end + s->L;
        complete(s, rcv->rank, rcv->req, taken);
    }
    if (snd->mode == SEND_SYNC) /* the answer leaves after the receiver's o_r and its own o_s */
        complete(s, snd->rank, snd->req, taken + s->o_r + s->o_s + s->L);
}

/* A send (is_send) or receive meets the oldest partner on its channel, or queues. */
void post(sim *s, int is_send, int32_t src, int32_t dst, int64_t comm, int64_t tag, pending item)
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

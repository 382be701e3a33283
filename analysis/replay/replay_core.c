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
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

void fail(sim *s, int code, int32_t r, int64_t record)
{
    if (s->err.code)
        return;
    s->err.code = code;
    s->err.rank = r;
    s->err.record = record;
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
    map_free(&s->comms);
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
    free(s->wait_order);
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
/* Programs read from trace files: rank r's records start at records_offset[r] of paths[r]
 * (nrecords[r] of them); cls[cls_start[r] + call] classes its calls. Communicator comm_ids[k]
 * has the world ranks comm_members[comm_start[k] .. comm_start[k + 1]) in its rank order (the
 * memberships the files record). Reads chunk records at a time. The arrays must outlive the
 * sim. NULL when out of memory; otherwise check lr_error (a file that cannot be read, a
 * collective that differs between ranks). */
API sim *lr_new_trace(int32_t nranks, const char *const *paths, const uint64_t *records_offset,
                      const int64_t *nrecords, const uint64_t *init_ns, const uint64_t *finalize_ns,
                      const int32_t *cls, const int32_t *cls_start, int64_t chunk, int64_t ncomms,
                      const uint32_t *comm_ids, const int64_t *comm_start, const int32_t *comm_members)
{
    sim *s = sim_new(nranks);
    if (!s)
        return NULL;
    s->traces = 1;
    s->cls = cls;
    s->cls_start = cls_start;
    s->comm_start = comm_start;
    s->comm_members = comm_members;
    for (int64_t k = 0; k < ncomms; k++)
        if (map_put(&s->comms, (key3){comm_ids[k], 3, 0}, (uint32_t)k) != 0) {
            lr_free(s);
            return NULL;
        }
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

/* Before a trace replay: each collective instance over every rank, its largest size and
 * root, so every rank's schedule of it agrees. */
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

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
    if (++co->ranks < (int32_t)x->comm_size)
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

/* The n-th collective on each communicator whose ranks map to world ranks, over every rank: its largest
 * size (the schedule's message size) and root. The ranks' files are read side by side, each up to
 * its next collective in turn, so only the instances some rank has reached and another not yet
 * are held, and those the ranks recorded differently. */
int scan_collectives(sim *s)
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
                const int32_t *members;
                if (x->kind != 0 || (c & 0xff) != C_COLL || !comm_members(s, x->comm_id, x->comm_size, &members))
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

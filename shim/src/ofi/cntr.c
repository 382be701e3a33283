/* Counters: RMA completion at the origin. An operation counts only once the
 * real counter and its due time (post + 2L + (k-1)G, rma.c) both say so. */
#include <stdlib.h>

#include "layer.h"

/* Records an operation that will bump cs; due == 0 means done already. */
void cntr_track(cntr_state *cs, uint64_t due)
{
    spin_lock(&cs->lock);
    if (due && ring_reserve((void **)&cs->due, &cs->cap, &cs->head, cs->count, sizeof *cs->due) == 0) {
        cs->due[ring_index(cs->head, cs->count, cs->cap)] = due;
        cs->count++;
        atomic_store_explicit(&cs->pending, cs->count, memory_order_relaxed);
    } else {
        cs->due_count++;
    }
    spin_unlock(&cs->lock);
}

/* The counter as the emulated network has it: operations complete in order,
 * and one counts only once both the real counter and its due time say so. */
static uint64_t cntr_virtual(cntr_state *cs, uint64_t real_value)
{
    spin_lock(&cs->lock);
    uint64_t now = atomic_load_explicit(&ofi_flushing, memory_order_relaxed) ? UINT64_MAX : loggp_now_ns();
    while (cs->count && cs->due[cs->head] <= now) {
        cs->head = ring_next(cs->head, cs->cap);
        cs->count--;
        cs->due_count++;
    }
    atomic_store_explicit(&cs->pending, cs->count, memory_order_relaxed);
    uint64_t allowed = cs->base + cs->due_count;
    spin_unlock(&cs->lock);
    return real_value < allowed ? real_value : allowed;
}

static uint64_t h_cntr_read(struct fid_cntr *cntr)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    uint64_t v = ORIG(cntr->ops, struct fi_ops_cntr)->read(cntr);
    if (!atomic_load_explicit(&cs->pending, memory_order_relaxed) && !loggp_live_active())
        return v;
    return cntr_virtual(cs, v);
}

static int h_cntr_wait(struct fid_cntr *cntr, uint64_t threshold, int timeout_ms)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    const struct fi_ops_cntr *o = ORIG(cntr->ops, struct fi_ops_cntr);
    if (!atomic_load_explicit(&cs->pending, memory_order_relaxed))
        return o->wait(cntr, threshold, timeout_ms);
    uint64_t end = timeout_ms < 0 ? UINT64_MAX : loggp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        if (h_cntr_read(cntr) >= threshold)
            return 0;
        if (o->readerr(cntr))
            return -FI_EAVAIL;
        if (loggp_now_ns() >= end)
            return -FI_ETIMEDOUT;
    }
}

static int h_cntr_add(struct fid_cntr *cntr, uint64_t value)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    spin_lock(&cs->lock);
    cs->base += value;
    spin_unlock(&cs->lock);
    return ORIG(cntr->ops, struct fi_ops_cntr)->add(cntr, value);
}

static int h_cntr_set(struct fid_cntr *cntr, uint64_t value)
{
    cntr_state *cs = STATE(cntr->ops, cntr_state);
    spin_lock(&cs->lock);
    /* From here on, count from `value` with everything tracked so far done. */
    cs->base = value;
    cs->due_count = 0;
    cs->head = cs->count = 0;
    atomic_store_explicit(&cs->pending, 0, memory_order_relaxed);
    spin_unlock(&cs->lock);
    return ORIG(cntr->ops, struct fi_ops_cntr)->set(cntr, value);
}

static int h_cntr_close(struct fid *fid)
{
    struct fid_cntr *cntr = (struct fid_cntr *)fid;
    cntr_state *cs = STATE(fid->ops, cntr_state);
    void *ops = cntr->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        free_table(cs->fid_ops);
        free_table(ops);
        free(cs->due);
        free(cs);
    }
    return rc;
}

void patch_cntr(struct fid_cntr *cntr)
{
    if (cntr->ops && cntr->ops->read == h_cntr_read)
        return; /* already ours (preloaded and loaded as a hook at once) */
    cntr_state *cs = calloc(1, sizeof *cs);
    if (!cs)
        return;
    atomic_flag_clear(&cs->lock);
    struct fi_ops_cntr *ops = patch_table(&cntr->ops, sizeof(struct fi_ops_cntr), cs);
    struct fi_ops *fops = patch_table(&cntr->fid.ops, sizeof(struct fi_ops), cs);
    if (!ops || !fops) {
        /* Leave the counter as the provider made it. */
        if (ops) {
            cntr->ops = HEADER(ops)->orig;
            free_table(ops);
        }
        if (fops) {
            cntr->fid.ops = HEADER(fops)->orig;
            free_table(fops);
        }
        free(cs);
        return;
    }
    cs->ops = ops;
    cs->fid_ops = fops;
    const struct fi_ops_cntr *o = HEADER(ops)->orig;
    cs->base = o->read ? o->read(cntr) : 0;
    if (HAS_ENTRY(o, struct fi_ops_cntr, read))
        ops->read = h_cntr_read;
    if (HAS_ENTRY(o, struct fi_ops_cntr, wait) && HAS_ENTRY(o, struct fi_ops_cntr, readerr))
        ops->wait = h_cntr_wait;
    if (HAS_ENTRY(o, struct fi_ops_cntr, add))
        ops->add = h_cntr_add;
    if (HAS_ENTRY(o, struct fi_ops_cntr, set))
        ops->set = h_cntr_set;
    fops->close = h_cntr_close;
}

cntr_state *cntr_state_of(struct fid_cntr *cntr)
{
    if (!cntr->fid.ops || cntr->fid.ops->close != h_cntr_close)
        return NULL;
    return STATE(cntr->ops, cntr_state);
}

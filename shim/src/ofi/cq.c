/* Completion queues: the read entry points, the path for o_r alone, blocking
 * reads, and the CQ object itself. Holding receives is cq_hold.c's. */
#include <stdlib.h>
#include <string.h>

#include "layer.h"

/* Only o_s / o_r set and nothing held: nothing to time or hold, so the read costs
 * no lock and no clock beyond the o_r spin, counted once the stamps are stripped. */
static ssize_t cq_read_overhead_only(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq, void *buf,
                                     size_t count, int from, fi_addr_t *src, uint64_t o_r)
{
    ssize_t rc = inner_read(o, cq, buf, count, from, src);
    if (rc <= 0)
        return rc;
    size_t receives = 0;
    for (ssize_t i = 0; i < rc; i++) {
        /* the formats with CQ data start like fi_cq_data_entry */
        char *entry = (char *)buf + (size_t)i * cs->entry_size;
        uint64_t flags, data;
        memcpy(&flags, entry + offsetof(struct fi_cq_data_entry, flags), sizeof flags);
        if (cs->has_data && (flags & FI_RECV)) {
            memcpy(&data, entry + offsetof(struct fi_cq_data_entry, data), sizeof data);
            if (is_stamped(flags, data)) {
                strip_stamp(&flags, &data);
                memcpy(entry + offsetof(struct fi_cq_data_entry, flags), &flags, sizeof flags);
                memcpy(entry + offsetof(struct fi_cq_data_entry, data), &data, sizeof data);
            }
        }
        receives += is_receive(flags) && (flags & FI_RECV);
    }
    if (receives && o_r) {
        /* from now: the armed baseline strips the stamps too, so o_r adds o_r over it */
        loggp_spin_overhead_ns(o_r * receives);
        loggp_my_counters()->injected_ns[LOGGP_INJ_O_R] += o_r * receives;
    }
    return rc;
}

/* The read path shared by read and readfrom, once past the entry checks. */
static __attribute__((noinline)) ssize_t cq_read_hooked(cq_state *cs, const struct fi_ops_cq *o, struct fid_cq *cq,
                                                        void *buf, size_t count, int from, fi_addr_t *src)
{
    if (!atomic_load_explicit(&cs->count, memory_order_relaxed) && !loggp_live_active()) {
        cq_switch_home(cs); /* the knobs went to zero: nothing of ours is needed */
        return inner_read(o, cq, buf, count, from, src);
    }
    loggp_delays d;
    loggp_live_get(&d);
    ofi_in_hook++;
    ssize_t rc = !d.L && !d.G_ps_per_byte && !d.g && !d.topo && !atomic_load_explicit(&cs->count, memory_order_relaxed)
                     ? cq_read_overhead_only(cs, o, cq, buf, count, from, src, d.o_r)
                     : cq_read_held(cs, o, cq, buf, count, from, src, &d);
    ofi_in_hook--;
    return rc;
}

/* A read from inside the layer (libfabric's own read calls readfrom through
 * the CQ's table, so every hooked poll comes back here once) goes straight
 * to the provider: kept small so that costs a handful of instructions, not
 * the holding read's frame. */
static inline ssize_t cq_read_common(struct fid_cq *cq, void *buf, size_t count, int from, fi_addr_t *src)
{
    cq_state *cs = cq_state_of(cq);
    const struct fi_ops_cq *o = ORIG(cs->ops, struct fi_ops_cq);
    if (ofi_in_hook || !cs->has_flags)
        return inner_read(o, cq, buf, count, from, src);
    return cq_read_hooked(cs, o, cq, buf, count, from, src);
}

static ssize_t h_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
    return cq_read_common(cq, buf, count, 0, NULL);
}

static ssize_t h_cq_readfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src)
{
    return cq_read_common(cq, buf, count, 1, src);
}

/* Blocking reads: wait by polling the held queue and the provider. */
static ssize_t cq_sread_common(struct fid_cq *cq, void *buf, size_t count, int from, fi_addr_t *src,
                               int timeout_ms)
{
    uint64_t end = timeout_ms < 0 ? UINT64_MAX : loggp_now_ns() + (uint64_t)timeout_ms * 1000000u;
    for (;;) {
        ssize_t rc = cq_read_common(cq, buf, count, from, src);
        if (rc != -FI_EAGAIN)
            return rc;
        if (loggp_now_ns() >= end)
            return -FI_EAGAIN;
    }
}

static ssize_t h_cq_sread(struct fid_cq *cq, void *buf, size_t count, const void *cond, int timeout)
{
    cq_state *cs = cq_state_of(cq);
    if (ofi_in_hook || (!atomic_load_explicit(&cs->count, memory_order_relaxed) && !loggp_live_active()))
        return ORIG(cs->ops, struct fi_ops_cq)->sread(cq, buf, count, cond, timeout);
    return cq_sread_common(cq, buf, count, 0, NULL, timeout);
}

static ssize_t h_cq_sreadfrom(struct fid_cq *cq, void *buf, size_t count, fi_addr_t *src, const void *cond,
                              int timeout)
{
    cq_state *cs = cq_state_of(cq);
    if (ofi_in_hook || (!atomic_load_explicit(&cs->count, memory_order_relaxed) && !loggp_live_active()))
        return ORIG(cs->ops, struct fi_ops_cq)->sreadfrom(cq, buf, count, src, cond, timeout);
    return cq_sread_common(cq, buf, count, 1, src, timeout);
}

static int h_cq_close(struct fid *fid)
{
    cq_state *cs = STATE(fid->ops, cq_state);
    switch_unregister(&cs->node);
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc != 0) {
        switch_register(&cs->node);
    } else {
        atomic_fetch_sub_explicit(&ofi_held_total, (long)cs->count, memory_order_relaxed);
        free_table(cs->fid_ops);
        free_table(cs->ops);
        free(cs->ring);
        free(cs->send_ring);
        free(atomic_load(&cs->posts));
        free(cs);
    }
    return rc;
}

cq_state *cq_state_if_ours(struct fid *fid)
{
    return fid && fid->fclass == FI_CLASS_CQ && fid->ops && fid->ops->close == h_cq_close ? STATE(fid->ops, cq_state)
                                                                                          : NULL;
}

/* Our table while a knob is set or anything is held, else the provider's. */
static void cq_apply(switch_node *node, int armed)
{
    cq_state *cs = (cq_state *)((char *)node - offsetof(cq_state, node));
    if (armed)
        set_table(&cs->cq->ops, cs->ops);
    else if (!atomic_load_explicit(&cs->count, memory_order_relaxed))
        set_table(&cs->cq->ops, HEADER(cs->ops)->orig);
}

void cq_switch_home(cq_state *cs)
{
    switch_refresh(&cs->node);
}

void patch_cq(struct fid_cq *cq, enum fi_cq_format format)
{
    size_t entry_size;
    switch (format) {
    case FI_CQ_FORMAT_MSG:
        entry_size = sizeof(struct fi_cq_msg_entry);
        break;
    case FI_CQ_FORMAT_DATA:
        entry_size = sizeof(struct fi_cq_data_entry);
        break;
    case FI_CQ_FORMAT_TAGGED:
        entry_size = sizeof(struct fi_cq_tagged_entry);
        break;
    default:
        return; /* no flags to tell receives from the rest: leave it alone */
    }
    if (cq->fid.ops && cq->fid.ops->close == h_cq_close)
        return; /* already ours (preloaded and loaded as a hook at once) */
    cq_state *cs = calloc(1, sizeof *cs);
    if (!cs)
        return;
    atomic_flag_clear(&cs->lock);
    cs->entry_size = entry_size;
    cs->has_flags = 1;
    cs->has_data = format != FI_CQ_FORMAT_MSG;
    transit_min_init(&cs->transit, clock_ns());
    transit_min_init(&cs->hand, clock_ns());
    transit_min_init(&cs->handshake, clock_ns());
    struct fi_ops_cq *ops = patch_table(&cq->ops, sizeof(struct fi_ops_cq), cs);
    if (!ops) {
        free(cs);
        return;
    }
    struct fi_ops *fops = patch_table(&cq->fid.ops, sizeof(struct fi_ops), cs);
    if (!fops) {
        cq->ops = HEADER(ops)->orig;
        free_table(ops);
        free(cs);
        return;
    }
    cs->ops = ops;
    cs->fid_ops = fops;
    const struct fi_ops_cq *o = HEADER(ops)->orig;
    if (HAS_ENTRY(o, struct fi_ops_cq, read))
        ops->read = h_cq_read;
    if (HAS_ENTRY(o, struct fi_ops_cq, readfrom))
        ops->readfrom = h_cq_readfrom;
    if (HAS_ENTRY(o, struct fi_ops_cq, sread))
        ops->sread = h_cq_sread;
    if (HAS_ENTRY(o, struct fi_ops_cq, sreadfrom))
        ops->sreadfrom = h_cq_sreadfrom;
    fops->close = h_cq_close;
    cs->cq = cq;
    cs->node.apply = cq_apply;
    switch_register(&cs->node);
}

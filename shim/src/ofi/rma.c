/* RMA: o_s, pacing, and origin completion after 2L + (k-1)G (cntr.c). */
#include "layer.h"

/* An RMA or atomic operation posted at post_time completes at the origin no
 * earlier than a round trip through the emulated network. */
void rma_track(ep_state *s, int is_read, const loggp_delays *d, ssize_t rc, uint64_t post_time, uint64_t bytes)
{
    if (rc != 0)
        return;
    cntr_state *cs = atomic_load_explicit(is_read ? &s->read_cntr : &s->write_cntr, memory_order_relaxed);
    if (!cs)
        return;
    uint64_t extra = 2 * d->L + loggp_bytes_delay_ns(d->G_ps_per_byte, bytes);
    cntr_track(cs, extra ? post_time + extra : 0);
}

static ssize_t h_read(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t addr,
                      uint64_t key, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, len);
    ssize_t rc = o->read(ep, buf, len, desc, src, addr, key, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_readv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
                       uint64_t addr, uint64_t key, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, iov_bytes(iov, count));
    ssize_t rc = o->readv(ep, iov, desc, count, src, addr, key, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_readmsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, iov_bytes(msg->msg_iov, msg->iov_count));
    ssize_t rc = o->readmsg(ep, msg, flags);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_write(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t addr,
                       uint64_t key, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, len);
    ssize_t rc = o->write(ep, buf, len, desc, dest, addr, key, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_writev(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                        uint64_t addr, uint64_t key, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, iov_bytes(iov, count));
    ssize_t rc = o->writev(ep, iov, desc, count, dest, addr, key, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_writemsg(struct fid_ep *ep, const struct fi_msg_rma *msg, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, iov_bytes(msg->msg_iov, msg->iov_count));
    ssize_t rc = o->writemsg(ep, msg, flags);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_inject_write(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t addr,
                              uint64_t key)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, len);
    ssize_t rc = o->inject(ep, buf, len, dest, addr, key);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_writedata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                           uint64_t addr, uint64_t key, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, len);
    ssize_t rc = o->writedata(ep, buf, len, desc, data, dest, addr, key, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_inject_writedata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                                  uint64_t addr, uint64_t key)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_rma *o = ORIG(s->rma, struct fi_ops_rma);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, len);
    ssize_t rc = o->injectdata(ep, buf, len, data, dest, addr, key);
    return hooked ? rma_end(s, &p, rc) : rc;
}

void *patch_rma(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_rma *r = patch_table(&ep->rma, sizeof *r, s);
    if (!r)
        return NULL;
    HOOK(r, struct fi_ops_rma, read, h_read);
    HOOK(r, struct fi_ops_rma, readv, h_readv);
    HOOK(r, struct fi_ops_rma, readmsg, h_readmsg);
    HOOK(r, struct fi_ops_rma, write, h_write);
    HOOK(r, struct fi_ops_rma, writev, h_writev);
    HOOK(r, struct fi_ops_rma, writemsg, h_writemsg);
    HOOK(r, struct fi_ops_rma, inject, h_inject_write);
    HOOK(r, struct fi_ops_rma, writedata, h_writedata);
    HOOK(r, struct fi_ops_rma, injectdata, h_inject_writedata);
    return r;
}

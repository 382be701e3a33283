/* Untagged messages (MPICH's active messages): o_s, the gap and stamps, as
 * for tagged sends. */
#include "layer.h"

static ssize_t h_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, void *ctx)
{
    SEND_HOOK(msg, struct fi_ops_msg, len, dest, ctx,
              stamping ? o->senddata(ep, buf, len, desc, stamp(0, 0, peer), dest, ctx) : o->send(ep, buf, len, desc, dest, ctx),
              o->send(ep, buf, len, desc, dest, ctx))
}

static ssize_t h_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                       void *ctx)
{
    SEND_HOOK(msg, struct fi_ops_msg, iov_bytes(iov, count), dest, ctx,
              o->sendv(ep, iov, desc, count, dest, ctx),
              o->sendv(ep, iov, desc, count, dest, ctx))
}

static ssize_t sendmsg_stamped(const struct fi_ops_msg *o, struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags,
                               unsigned peer)
{
    struct fi_msg m = *msg;
    int had = (flags & FI_REMOTE_CQ_DATA) != 0;
    if (had && (m.data >> 32))
        return o->sendmsg(ep, msg, flags);
    m.data = stamp(had ? m.data : 0, had, peer);
    return o->sendmsg(ep, &m, flags | FI_REMOTE_CQ_DATA);
}

static ssize_t h_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
    SEND_HOOK(msg, struct fi_ops_msg, iov_bytes(msg->msg_iov, msg->iov_count), msg->addr,
              send_msg_context(s, msg->context, flags),
              stamping ? sendmsg_stamped(o, ep, msg, flags, peer) : o->sendmsg(ep, msg, flags),
              o->sendmsg(ep, msg, flags))
}

static ssize_t h_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest)
{
    SEND_HOOK(msg, struct fi_ops_msg, len, dest, NULL,
              stamping ? o->injectdata(ep, buf, len, stamp(0, 0, peer), dest) : o->inject(ep, buf, len, dest),
              o->inject(ep, buf, len, dest))
}

static ssize_t h_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                          void *ctx)
{
    SEND_HOOK(msg, struct fi_ops_msg, len, dest, ctx,
              o->senddata(ep, buf, len, desc, stamping && !(data >> 32) ? stamp(data, 1, peer) : data, dest, ctx),
              o->senddata(ep, buf, len, desc, data, dest, ctx))
}

static ssize_t h_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
    SEND_HOOK(msg, struct fi_ops_msg, len, dest, NULL,
              o->injectdata(ep, buf, len, stamping && !(data >> 32) ? stamp(data, 1, peer) : data, dest),
              o->injectdata(ep, buf, len, data, dest))
}

void *patch_msg(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_msg *m = patch_table(&ep->msg, sizeof *m, s);
    if (!m)
        return NULL;
    HOOK(m, struct fi_ops_msg, send, h_send);
    HOOK(m, struct fi_ops_msg, sendv, h_sendv);
    HOOK(m, struct fi_ops_msg, sendmsg, h_sendmsg);
    HOOK(m, struct fi_ops_msg, inject, h_inject);
    HOOK(m, struct fi_ops_msg, senddata, h_senddata);
    HOOK(m, struct fi_ops_msg, injectdata, h_injectdata);
    return m;
}

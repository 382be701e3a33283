/* Untagged messages (MPICH's active messages): o_s, the gap and stamps, as
 * for tagged sends. */
#include "layer.h"

static ssize_t h_send(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_msg *o = ORIG(s->msg, struct fi_ops_msg);
    if (send_bypasses_layer())
        return o->send(ep, buf, len, desc, dest, ctx);
    send_plan p;
    send_begin(s, &p, len, dest, ctx);
    ssize_t rc = p.stamping ? o->senddata(ep, buf, len, desc, stamp(0, 0, p.peer), dest, ctx)
                            : o->send(ep, buf, len, desc, dest, ctx);
    return send_end(s, &p, ctx, rc);
}

static ssize_t h_sendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                       void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_msg *o = ORIG(s->msg, struct fi_ops_msg);
    if (send_bypasses_layer())
        return o->sendv(ep, iov, desc, count, dest, ctx);
    send_plan p;
    send_begin(s, &p, iov_bytes(iov, count), dest, ctx);
    ssize_t rc = o->sendv(ep, iov, desc, count, dest, ctx);
    return send_end(s, &p, ctx, rc);
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
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_msg *o = ORIG(s->msg, struct fi_ops_msg);
    if (send_bypasses_layer())
        return o->sendmsg(ep, msg, flags);
    void *context = send_msg_context(s, msg->context, flags);
    send_plan p;
    send_begin(s, &p, iov_bytes(msg->msg_iov, msg->iov_count), msg->addr, context);
    ssize_t rc = p.stamping ? sendmsg_stamped(o, ep, msg, flags, p.peer)
                            : o->sendmsg(ep, msg, flags);
    return send_end(s, &p, context, rc);
}

static ssize_t h_inject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_msg *o = ORIG(s->msg, struct fi_ops_msg);
    if (send_bypasses_layer())
        return o->inject(ep, buf, len, dest);
    send_plan p;
    send_begin(s, &p, len, dest, NULL);
    ssize_t rc = p.stamping ? o->injectdata(ep, buf, len, stamp(0, 0, p.peer), dest)
                            : o->inject(ep, buf, len, dest);
    return send_end(s, &p, NULL, rc);
}

static ssize_t h_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data, fi_addr_t dest,
                          void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_msg *o = ORIG(s->msg, struct fi_ops_msg);
    if (send_bypasses_layer())
        return o->senddata(ep, buf, len, desc, data, dest, ctx);
    send_plan p;
    send_begin(s, &p, len, dest, ctx);
    uint64_t sent_data = p.stamping && !(data >> 32) ? stamp(data, 1, p.peer) : data;
    ssize_t rc = o->senddata(ep, buf, len, desc, sent_data, dest, ctx);
    return send_end(s, &p, ctx, rc);
}

static ssize_t h_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_msg *o = ORIG(s->msg, struct fi_ops_msg);
    if (send_bypasses_layer())
        return o->injectdata(ep, buf, len, data, dest);
    send_plan p;
    send_begin(s, &p, len, dest, NULL);
    uint64_t sent_data = p.stamping && !(data >> 32) ? stamp(data, 1, p.peer) : data;
    ssize_t rc = o->injectdata(ep, buf, len, sent_data, dest);
    return send_end(s, &p, NULL, rc);
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

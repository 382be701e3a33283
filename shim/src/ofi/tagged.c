/* Tagged messages (MPI point-to-point): o_s and the gap on every send, a send
 * stamp while a hold needs one, and which post each receive was. */
#include "layer.h"

static ssize_t h_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t tag,
                       void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_tagged *o = ORIG(s->tagged, struct fi_ops_tagged);
    if (send_bypasses_layer())
        return o->send(ep, buf, len, desc, dest, tag, ctx);
    send_plan p;
    send_begin(s, &p, len, dest, ctx);
    ssize_t rc = p.stamping ? o->senddata(ep, buf, len, desc, stamp(0, 0, p.peer), dest, tag, ctx)
                            : o->send(ep, buf, len, desc, dest, tag, ctx);
    return send_end(s, &p, ctx, rc);
}

static ssize_t h_tsendv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t dest,
                        uint64_t tag, void *ctx)
{
    /* Not stamped: turning it into sendmsg would change its completion flags. */
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_tagged *o = ORIG(s->tagged, struct fi_ops_tagged);
    if (send_bypasses_layer())
        return o->sendv(ep, iov, desc, count, dest, tag, ctx);
    send_plan p;
    send_begin(s, &p, iov_bytes(iov, count), dest, ctx);
    ssize_t rc = o->sendv(ep, iov, desc, count, dest, tag, ctx);
    return send_end(s, &p, ctx, rc);
}

static ssize_t tsendmsg_stamped(const struct fi_ops_tagged *o, struct fid_ep *ep, const struct fi_msg_tagged *msg,
                                uint64_t flags, unsigned peer)
{
    struct fi_msg_tagged m = *msg;
    int had = (flags & FI_REMOTE_CQ_DATA) != 0;
    if (had && (m.data >> 32))
        return o->sendmsg(ep, msg, flags); /* the caller uses the upper bits itself */
    m.data = stamp(had ? m.data : 0, had, peer);
    return o->sendmsg(ep, &m, flags | FI_REMOTE_CQ_DATA);
}

static ssize_t h_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_tagged *o = ORIG(s->tagged, struct fi_ops_tagged);
    if (send_bypasses_layer())
        return o->sendmsg(ep, msg, flags);
    void *context = send_msg_context(s, msg->context, flags);
    send_plan p;
    send_begin(s, &p, iov_bytes(msg->msg_iov, msg->iov_count), msg->addr, context);
    ssize_t rc = p.stamping ? tsendmsg_stamped(o, ep, msg, flags, p.peer)
                            : o->sendmsg(ep, msg, flags);
    return send_end(s, &p, context, rc);
}

static ssize_t h_tinject(struct fid_ep *ep, const void *buf, size_t len, fi_addr_t dest, uint64_t tag)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_tagged *o = ORIG(s->tagged, struct fi_ops_tagged);
    if (send_bypasses_layer())
        return o->inject(ep, buf, len, dest, tag);
    send_plan p;
    send_begin(s, &p, len, dest, NULL);
    ssize_t rc = p.stamping ? o->injectdata(ep, buf, len, stamp(0, 0, p.peer), dest, tag)
                            : o->inject(ep, buf, len, dest, tag);
    return send_end(s, &p, NULL, rc);
}

static ssize_t h_tsenddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
                           fi_addr_t dest, uint64_t tag, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_tagged *o = ORIG(s->tagged, struct fi_ops_tagged);
    if (send_bypasses_layer())
        return o->senddata(ep, buf, len, desc, data, dest, tag, ctx);
    send_plan p;
    send_begin(s, &p, len, dest, ctx);
    uint64_t sent_data = p.stamping && !(data >> 32) ? stamp(data, 1, p.peer) : data;
    ssize_t rc = o->senddata(ep, buf, len, desc, sent_data, dest, tag, ctx);
    return send_end(s, &p, ctx, rc);
}

static ssize_t h_tinjectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                             uint64_t tag)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_tagged *o = ORIG(s->tagged, struct fi_ops_tagged);
    if (send_bypasses_layer())
        return o->injectdata(ep, buf, len, data, dest, tag);
    send_plan p;
    send_begin(s, &p, len, dest, NULL);
    uint64_t sent_data = p.stamping && !(data >> 32) ? stamp(data, 1, p.peer) : data;
    ssize_t rc = o->injectdata(ep, buf, len, sent_data, dest, tag);
    return send_end(s, &p, NULL, rc);
}

static ssize_t h_trecv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t tag,
                       uint64_t ignore, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    post_slot *slot = note_receive_post(&s->recv_cq, ctx, len);
    ssize_t rc = ORIG(s->tagged, struct fi_ops_tagged)->recv(ep, buf, len, desc, src, tag, ignore, ctx);
    note_receive_posted(slot, ctx);
    return rc;
}

static ssize_t h_trecvv(struct fid_ep *ep, const struct iovec *iov, void **desc, size_t count, fi_addr_t src,
                        uint64_t tag, uint64_t ignore, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    post_slot *slot = note_receive_post(&s->recv_cq, ctx, iov_bytes(iov, count));
    ssize_t rc = ORIG(s->tagged, struct fi_ops_tagged)->recvv(ep, iov, desc, count, src, tag, ignore, ctx);
    note_receive_posted(slot, ctx);
    return rc;
}

static ssize_t h_trecvmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    post_slot *slot = NULL;
    if (!(flags & FI_PEEK))
        slot = note_receive_post(&s->recv_cq, msg->context, iov_bytes(msg->msg_iov, msg->iov_count));
    ssize_t rc = ORIG(s->tagged, struct fi_ops_tagged)->recvmsg(ep, msg, flags);
    note_receive_posted(slot, msg->context);
    return rc;
}

void *patch_tagged(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_tagged *t = patch_table(&ep->tagged, sizeof *t, s);
    if (!t)
        return NULL;
    const struct fi_ops_tagged *o = HEADER(t)->orig;
    int data_ok = s->stamps && HAS_ENTRY(o, struct fi_ops_tagged, senddata) &&
                  HAS_ENTRY(o, struct fi_ops_tagged, injectdata);
    HOOK(t, struct fi_ops_tagged, recv, h_trecv);
    HOOK(t, struct fi_ops_tagged, recvv, h_trecvv);
    HOOK(t, struct fi_ops_tagged, recvmsg, h_trecvmsg);
    HOOK(t, struct fi_ops_tagged, send, h_tsend);
    HOOK(t, struct fi_ops_tagged, sendv, h_tsendv);
    HOOK(t, struct fi_ops_tagged, sendmsg, h_tsendmsg);
    HOOK(t, struct fi_ops_tagged, inject, h_tinject);
    HOOK(t, struct fi_ops_tagged, senddata, h_tsenddata);
    HOOK(t, struct fi_ops_tagged, injectdata, h_tinjectdata);
    if (!data_ok)
        s->stamps = 0;
    return t;
}

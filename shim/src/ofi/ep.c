/* Endpoints: their fid ops (bind, close, enable) and scalable endpoints'
 * transmit contexts; the transfer tables are patched by tagged.c, msg.c,
 * rma.c and atomic.c. */
#include <stdlib.h>

#include "layer.h"

static int h_ep_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    ep_state *s = STATE(fid->ops, ep_state);
    int rc = ORIG(fid->ops, struct fi_ops)->bind(fid, bfid, flags);
    if (rc == 0 && bfid && bfid->fclass == FI_CLASS_CNTR) {
        /* only counters this layer wraps can be virtualised */
        cntr_state *cs = cntr_state_of((struct fid_cntr *)bfid);
        if (cs) {
            if (flags & FI_WRITE)
                atomic_store(&s->write_cntr, cs);
            if (flags & FI_READ)
                atomic_store(&s->read_cntr, cs);
        }
    }
    if (rc == 0 && bfid && bfid->fclass == FI_CLASS_AV)
        s->av = (struct fid_av *)bfid;
    if (rc == 0 && bfid && bfid->fclass == FI_CLASS_CQ && (flags & FI_RECV))
        atomic_store(&s->recv_cq, cq_state_if_ours(bfid));
    if (rc == 0 && bfid && bfid->fclass == FI_CLASS_CQ && (flags & FI_TRANSMIT)) {
        atomic_store(&s->send_cq, cq_state_if_ours(bfid));
        atomic_store(&s->send_selective, (flags & FI_SELECTIVE_COMPLETION) != 0);
    }
    return rc;
}

static int h_ep_close(struct fid *fid)
{
    ep_state *s = STATE(fid->ops, ep_state);
    switch_unregister(&s->node);
    ofi_forget_endpoint(s->ep);
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc != 0) {
        switch_register(&s->node);
    } else {
        free_table(s->fid_ops);
        free_table(s->msg);
        free_table(s->tagged);
        free_table(s->rma);
        free_table(s->atomic);
        free_table(s->ep_ops);
        free(s);
    }
    return rc;
}

/* Re-attaches to any table a provider swapped in while enabling the endpoint. */
static void repatch_tables(struct fid_ep *ep, ep_state *s);

static int h_ep_control(struct fid *fid, int command, void *arg)
{
    ep_state *s = STATE(fid->ops, ep_state);
    /* out of the registry meanwhile: no switch races with the provider's swap */
    switch_unregister(&s->node);
    int rc = ORIG(fid->ops, struct fi_ops)->control(fid, command, arg);
    if (rc == 0 && command == FI_ENABLE)
        repatch_tables((struct fid_ep *)fid, s);
    switch_register(&s->node);
    return rc;
}

/* Is table neither our copy nor the provider's table behind it? */
static int replaced(void *table, void *ours)
{
    return table && table != ours && !(ours && table == HEADER(ours)->orig);
}

static void repatch_tables(struct fid_ep *ep, ep_state *s)
{
    /* A table the provider replaced is no longer our copy: copy the new one. */
    if (replaced(ep->tagged, s->tagged)) {
        free_table(s->tagged);
        s->tagged = patch_tagged(ep, s);
    }
    if (replaced(ep->msg, s->msg)) {
        free_table(s->msg);
        s->msg = patch_msg(ep, s);
    }
    if (ep->rma && ep->rma != s->rma) {
        free_table(s->rma);
        s->rma = patch_rma(ep, s);
    }
    if (ep->atomic && ep->atomic != s->atomic) {
        free_table(s->atomic);
        s->atomic = patch_atomic(ep, s);
    }
}

/* The message tables: ours while a knob is set, else the provider's. */
static void ep_apply(switch_node *node, int armed)
{
    ep_state *s = (ep_state *)((char *)node - offsetof(ep_state, node));
    if (s->tagged)
        set_table(&s->ep->tagged, armed ? s->tagged : HEADER(s->tagged)->orig);
    if (s->msg)
        set_table(&s->ep->msg, armed ? s->msg : HEADER(s->msg)->orig);
}

/* Scalable endpoints: each transmit context is an endpoint of its own. */
static int h_tx_ctx(struct fid_ep *sep, int index, struct fi_tx_attr *attr, struct fid_ep **tx, void *ctx)
{
    ep_state *s = STATE(sep->ops, ep_state);
    int rc = ORIG(sep->ops, struct fi_ops_ep)->tx_ctx(sep, index, attr, tx, ctx);
    if (rc == 0)
        patch_ep(*tx, s->stamps);
    return rc;
}

void patch_ep(struct fid_ep *ep, int stamps)
{
    if (ep->fid.ops && ep->fid.ops->close == h_ep_close)
        return;
    ep_state *s = calloc(1, sizeof *s);
    if (!s)
        return;
    s->stamps = stamps;
    struct fi_ops *f = patch_table(&ep->fid.ops, sizeof *f, s);
    if (!f) {
        free(s);
        return;
    }
    s->fid_ops = f;
    HOOK(f, struct fi_ops, bind, h_ep_bind);
    HOOK(f, struct fi_ops, control, h_ep_control);
    f->close = h_ep_close;
    s->tagged = patch_tagged(ep, s);
    s->msg = patch_msg(ep, s);
    s->rma = patch_rma(ep, s);
    s->atomic = patch_atomic(ep, s);
    if (ep->ops && HAS_ENTRY(ep->ops, struct fi_ops_ep, tx_ctx)) {
        struct fi_ops_ep *e = patch_table(&ep->ops, sizeof *e, s);
        if (e) {
            s->ep_ops = e;
            e->tx_ctx = h_tx_ctx;
        }
    }
    s->ep = ep;
    ofi_note_endpoint(ep);
    s->node.apply = ep_apply;
    switch_register(&s->node);
}

/* Atomics: as RMA (rma.c), sized by datatype. */
#include "layer.h"

static uint64_t atomic_type_size(enum fi_datatype type)
{
    switch (type) {
    case FI_INT8: case FI_UINT8: return 1;
    case FI_INT16: case FI_UINT16: return 2;
    case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
    case FI_INT64: case FI_UINT64: case FI_DOUBLE: case FI_FLOAT_COMPLEX: return 8;
    case FI_DOUBLE_COMPLEX: case FI_LONG_DOUBLE: return 16;
    case FI_LONG_DOUBLE_COMPLEX: return 32;
    default: return 8;
    }
}

static uint64_t ioc_bytes(const struct fi_ioc *ioc, size_t count, enum fi_datatype type)
{
    uint64_t n = 0;
    for (size_t i = 0; ioc && i < count; i++)
        n += ioc[i].count;
    return n * atomic_type_size(type);
}


static ssize_t h_atomic_write(struct fid_ep *ep, const void *buf, size_t count, void *desc, fi_addr_t dest,
                              uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, count * atomic_type_size(type));
    ssize_t rc = o->write(ep, buf, count, desc, dest, addr, key, type, op, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_writev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                               fi_addr_t dest, uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op,
                               void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, ioc_bytes(iov, count, type));
    ssize_t rc = o->writev(ep, iov, desc, count, dest, addr, key, type, op, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_writemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, ioc_bytes(msg->msg_iov, msg->iov_count, msg->datatype));
    ssize_t rc = o->writemsg(ep, msg, flags);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_inject(struct fid_ep *ep, const void *buf, size_t count, fi_addr_t dest, uint64_t addr,
                               uint64_t key, enum fi_datatype type, enum fi_op op)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 0);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 0, count * atomic_type_size(type));
    ssize_t rc = o->inject(ep, buf, count, dest, addr, key, type, op);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_readwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, void *result,
                                  void *result_desc, fi_addr_t dest, uint64_t addr, uint64_t key,
                                  enum fi_datatype type, enum fi_op op, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, count * atomic_type_size(type));
    ssize_t rc = o->readwrite(ep, buf, count, desc, result, result_desc, dest, addr, key, type, op, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_readwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                                   struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest,
                                   uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, ioc_bytes(iov, count, type));
    ssize_t rc = o->readwritev(ep, iov, desc, count, resultv, result_desc, result_count, dest, addr, key, type, op,
                               ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_readwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg, struct fi_ioc *resultv,
                                     void **result_desc, size_t result_count, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, ioc_bytes(msg->msg_iov, msg->iov_count, msg->datatype));
    ssize_t rc = o->readwritemsg(ep, msg, resultv, result_desc, result_count, flags);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_compwrite(struct fid_ep *ep, const void *buf, size_t count, void *desc, const void *compare,
                                  void *compare_desc, void *result, void *result_desc, fi_addr_t dest, uint64_t addr,
                                  uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, count * atomic_type_size(type));
    ssize_t rc = o->compwrite(ep, buf, count, desc, compare, compare_desc, result, result_desc, dest, addr, key,
                              type, op, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_compwritev(struct fid_ep *ep, const struct fi_ioc *iov, void **desc, size_t count,
                                   const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
                                   struct fi_ioc *resultv, void **result_desc, size_t result_count, fi_addr_t dest,
                                   uint64_t addr, uint64_t key, enum fi_datatype type, enum fi_op op, void *ctx)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, ioc_bytes(iov, count, type));
    ssize_t rc = o->compwritev(ep, iov, desc, count, comparev, compare_desc, compare_count, resultv, result_desc,
                               result_count, dest, addr, key, type, op, ctx);
    return hooked ? rma_end(s, &p, rc) : rc;
}

static ssize_t h_atomic_compwritemsg(struct fid_ep *ep, const struct fi_msg_atomic *msg,
                                     const struct fi_ioc *comparev, void **compare_desc, size_t compare_count,
                                     struct fi_ioc *resultv, void **result_desc, size_t result_count, uint64_t flags)
{
    ep_state *s = ep_state_of(ep);
    const struct fi_ops_atomic *o = ORIG(s->atomic, struct fi_ops_atomic);
    int hooked = !rma_bypasses_layer(s, 1);
    rma_plan p;
    if (hooked)
        rma_begin(s, &p, 1, ioc_bytes(msg->msg_iov, msg->iov_count, msg->datatype));
    ssize_t rc = o->compwritemsg(ep, msg, comparev, compare_desc, compare_count, resultv, result_desc, result_count,
                                 flags);
    return hooked ? rma_end(s, &p, rc) : rc;
}

void *patch_atomic(struct fid_ep *ep, ep_state *s)
{
    struct fi_ops_atomic *a = patch_table(&ep->atomic, sizeof *a, s);
    if (!a)
        return NULL;
    HOOK(a, struct fi_ops_atomic, write, h_atomic_write);
    HOOK(a, struct fi_ops_atomic, writev, h_atomic_writev);
    HOOK(a, struct fi_ops_atomic, writemsg, h_atomic_writemsg);
    HOOK(a, struct fi_ops_atomic, inject, h_atomic_inject);
    HOOK(a, struct fi_ops_atomic, readwrite, h_atomic_readwrite);
    HOOK(a, struct fi_ops_atomic, readwritev, h_atomic_readwritev);
    HOOK(a, struct fi_ops_atomic, readwritemsg, h_atomic_readwritemsg);
    HOOK(a, struct fi_ops_atomic, compwrite, h_atomic_compwrite);
    HOOK(a, struct fi_ops_atomic, compwritev, h_atomic_compwritev);
    HOOK(a, struct fi_ops_atomic, compwritemsg, h_atomic_compwritemsg);
    return a;
}

/* Fabrics and domains: wrapped so that every reliable-datagram endpoint, CQ
 * and counter they open is wrapped too. */
#include <stdlib.h>

#include "layer.h"

typedef struct {
    int stamps;
    void *fid_ops, *ops;
} domain_state;

static int is_rdm(const struct fi_info *info)
{
    return info && info->ep_attr && info->ep_attr->type == FI_EP_RDM;
}

static int h_cq_open(struct fid_domain *domain, struct fi_cq_attr *attr, struct fid_cq **cq, void *ctx)
{
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->cq_open(domain, attr, cq, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested && attr)
        patch_cq(*cq, attr->format);
    return rc;
}

static int h_cntr_open(struct fid_domain *domain, struct fi_cntr_attr *attr, struct fid_cntr **cntr, void *ctx)
{
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->cntr_open(domain, attr, cntr, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested)
        patch_cntr(*cntr);
    return rc;
}

static void endpoint_opened(domain_state *ds, struct fi_info *info, struct fid_ep *ep)
{
    if (!is_rdm(info) || !atomic_load(&ofi_layer_enabled))
        return;
    patch_ep(ep, ds->stamps);
    ofi_note_provider(info);
    atomic_store(&ofi_layer_active, 1);
}

static int h_endpoint(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, void *ctx)
{
    domain_state *ds = STATE(domain->ops, domain_state);
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->endpoint(domain, info, ep, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested)
        endpoint_opened(ds, info, *ep);
    return rc;
}

static int h_endpoint2(struct fid_domain *domain, struct fi_info *info, struct fid_ep **ep, uint64_t flags, void *ctx)
{
    domain_state *ds = STATE(domain->ops, domain_state);
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->endpoint2(domain, info, ep, flags, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested)
        endpoint_opened(ds, info, *ep);
    return rc;
}

static int h_scalable_ep(struct fid_domain *domain, struct fi_info *info, struct fid_ep **sep, void *ctx)
{
    domain_state *ds = STATE(domain->ops, domain_state);
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->scalable_ep(domain, info, sep, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested)
        endpoint_opened(ds, info, *sep);
    return rc;
}

static int h_domain_close(struct fid *fid)
{
    struct fid_domain *domain = (struct fid_domain *)fid;
    domain_state *ds = STATE(fid->ops, domain_state);
    void *ops = domain->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        free_table(ds->fid_ops);
        free_table(ops);
        free(ds);
    }
    return rc;
}

static void patch_domain(struct fid_domain *domain, const struct fi_info *info)
{
    if (domain->fid.ops && domain->fid.ops->close == h_domain_close)
        return;
    domain_state *ds = calloc(1, sizeof *ds);
    if (!ds)
        return;
    ds->stamps = info->domain_attr && info->domain_attr->cq_data_size >= 8;
    struct fi_ops_domain *d = patch_table(&domain->ops, sizeof *d, ds);
    if (!d) {
        free(ds);
        return;
    }
    struct fi_ops *f = patch_table(&domain->fid.ops, sizeof *f, ds);
    if (!f) {
        domain->ops = HEADER(d)->orig;
        free_table(d);
        free(ds);
        return;
    }
    ds->ops = d;
    ds->fid_ops = f;
    f->close = h_domain_close;
    HOOK(d, struct fi_ops_domain, cq_open, h_cq_open);
    HOOK(d, struct fi_ops_domain, cntr_open, h_cntr_open);
    HOOK(d, struct fi_ops_domain, endpoint, h_endpoint);
    HOOK(d, struct fi_ops_domain, endpoint2, h_endpoint2);
    HOOK(d, struct fi_ops_domain, scalable_ep, h_scalable_ep);
    HOOK(d, struct fi_ops_domain, av_open, ofi_av_open);
}

static void domain_opened(struct fi_info *info, struct fid_domain *domain)
{
    if (is_rdm(info) && atomic_load(&ofi_layer_enabled))
        patch_domain(domain, info);
}

static int h_fabric_domain(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domain, void *ctx)
{
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(fabric->ops, struct fi_ops_fabric)->domain(fabric, info, domain, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested)
        domain_opened(info, *domain);
    return rc;
}

static int h_fabric_domain2(struct fid_fabric *fabric, struct fi_info *info, struct fid_domain **domain,
                            uint64_t flags, void *ctx)
{
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(fabric->ops, struct fi_ops_fabric)->domain2(fabric, info, domain, flags, ctx);
    ofi_creation_depth--;
    if (rc == 0 && !nested)
        domain_opened(info, *domain);
    return rc;
}

static int h_fabric_close(struct fid *fid)
{
    struct fid_fabric *fabric = (struct fid_fabric *)fid;
    void *fops = fid->ops, *ops = fabric->ops;
    int rc = ORIG(fid->ops, struct fi_ops)->close(fid);
    if (rc == 0) {
        free_table(fops);
        free_table(ops);
    }
    return rc;
}

void patch_fabric(struct fid_fabric *fabric)
{
    if (fabric->fid.ops && fabric->fid.ops->close == h_fabric_close)
        return;
    struct fi_ops_fabric *ops = patch_table(&fabric->ops, sizeof *ops, NULL);
    if (!ops)
        return;
    struct fi_ops *f = patch_table(&fabric->fid.ops, sizeof *f, NULL);
    if (!f) {
        fabric->ops = HEADER(ops)->orig;
        free_table(ops);
        return;
    }
    f->close = h_fabric_close;
    HOOK(ops, struct fi_ops_fabric, domain, h_fabric_domain);
    HOOK(ops, struct fi_ops_fabric, domain2, h_fabric_domain2);
}

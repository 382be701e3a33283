/* libloggp.so, libfabric layer: every message the MPI library moves through
 * a libfabric reliable-datagram endpoint gets o, g, G and L.
 *
 * How it attaches: fi_fabric is interposed (LD_PRELOAD), or libfabric loads
 * this library as a hook provider (fi_prov_ini); the objects a fabric and its
 * descendants return stay the provider's own, but their ops-table pointers
 * are swapped for copies whose entries call in here first (table.c).
 *
 * What each knob does here:
 *  o_s  busy-wait in every posting call (sends, injects, RMA, atomics)
 *  o_r  busy-wait for every receive completion handed to the caller
 *  g,G  an endpoint's next injection waits until g + (k-1)G after the last
 *  L    receive completions are held in a FIFO per CQ until
 *       natural arrival + L + (k-1)G; the send time rides in the upper 32
 *       bits of remote CQ data, which MPICH leaves free
 *  RMA  origin counters count an operation only after post + 2L + (k-1)G
 *
 * This file: the layer's state, its interface to the rest of libloggp.so
 * (ofi.h) and the entry points. */
#include "ofi.h"

#include <dlfcn.h>
#include <pthread.h>
#include <rdma/providers/fi_prov.h>
#include <stdio.h>
#include <string.h>

#include "layer.h"

_Atomic int ofi_layer_enabled;
_Atomic int ofi_layer_active;
_Atomic int ofi_flushing;
_Atomic long ofi_held_total;
__thread int ofi_creation_depth __attribute__((tls_model("initial-exec")));
__thread int ofi_in_hook __attribute__((tls_model("initial-exec")));
static char provider_name[64];

void loggp_ofi_flush(void)
{
    atomic_store(&ofi_flushing, 1);
}

long loggp_ofi_held(void)
{
    return atomic_load(&ofi_held_total);
}

void loggp_ofi_enable(int on)
{
    atomic_store(&ofi_layer_enabled, on);
}

int loggp_ofi_active(void)
{
    return atomic_load(&ofi_layer_active);
}

const char *loggp_ofi_provider(void)
{
    return provider_name;
}

void ofi_note_provider(const struct fi_info *info)
{
    if (provider_name[0] || !info || !info->fabric_attr || !info->fabric_attr->prov_name)
        return;
    snprintf(provider_name, sizeof provider_name, "%s", info->fabric_attr->prov_name);
}

/* ---- the entry points ---- */

/* As a libfabric hook provider (FI_HOOK=loggp, FI_PROVIDER_PATH naming the
 * folder with libloggp-fi.so): libfabric hands over each fabric it opens.
 * Without the PMPI layer nobody loaded the knobs yet: load them here. */
static pthread_once_t hook_once = PTHREAD_ONCE_INIT;

static int hook_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context);

/* libfabric may dlclose a provider library it loaded (Open MPI's components
 * open and close libfabric more than once), but this one keeps a thread and
 * patched ops tables alive: it must stay mapped. */
static void stay_loaded(void)
{
    Dl_info self;
    void *fn;
    int (*hook)(struct fi_fabric_attr *, struct fid_fabric **, void *) = hook_fabric;
    memcpy(&fn, &hook, sizeof fn);
    if (dladdr(fn, &self) && self.dli_fname)
        dlopen(self.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

static void hook_start(void)
{
    stay_loaded();
    char err[1024];
    if (loggp_live_start(err, sizeof err) != 0) {
        fprintf(stderr, "loggp: libfabric hook: %s; the hook stays off\n", err);
        return;
    }
    atomic_store(&ofi_layer_enabled, 1);
}

static int hook_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    (void)context;
    if (!attr || !attr->fabric)
        return -FI_EINVAL;
    if (!atomic_load(&ofi_layer_enabled))
        pthread_once(&hook_once, hook_start);
    if (atomic_load(&ofi_layer_enabled))
        patch_fabric(attr->fabric);
    *fabric = attr->fabric; /* patched in place: the hooked fabric is the fabric */
    return 0;
}

static void hook_cleanup(void)
{
}

static struct fi_provider hook_provider = {
    .version = FI_VERSION(0, 1),
    .fi_version = FI_VERSION(1, 3),
    .name = "loggp",
    .getinfo = NULL, /* what makes libfabric treat it as a hook */
    .fabric = hook_fabric,
    .cleanup = hook_cleanup,
};

struct fi_provider *fi_prov_ini(void);
struct fi_provider *fi_prov_ini(void)
{
    return &hook_provider;
}

typedef int (*fi_fabric_fn)(struct fi_fabric_attr *, struct fid_fabric **, void *);

int fi_fabric(struct fi_fabric_attr *attr, struct fid_fabric **fabric, void *context)
{
    static _Atomic(fi_fabric_fn) real;
    fi_fabric_fn next = atomic_load(&real);
    if (!next) {
        void *f = dlvsym(RTLD_NEXT, "fi_fabric", "FABRIC_1.1");
        if (!f)
            f = dlsym(RTLD_NEXT, "fi_fabric");
        if (!f)
            return -FI_ENOSYS;
        memcpy(&next, &f, sizeof f);
        atomic_store(&real, next);
    }
    int nested = ofi_creation_depth++ > 0;
    int rc = next(attr, fabric, context);
    ofi_creation_depth--;
    if (rc == 0 && !nested && atomic_load(&ofi_layer_enabled))
        patch_fabric(*fabric);
    return rc;
}

/* The topology class of each destination address: matching the names MPI
 * inserted into the address vector (av.c) against the names the ranks'
 * endpoints published gives each address its rank, whatever order MPI
 * inserted them in. Done once after MPI_Init (pmpi/topology.c). */
#include <rdma/fi_cm.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "ofi.h"

uint8_t *ofi_peer_classes;
_Atomic size_t ofi_peer_count;
static struct fid_ep *_Atomic first_ep;

void ofi_note_endpoint(struct fid_ep *ep)
{
    struct fid_ep *none = NULL;
    atomic_compare_exchange_strong(&first_ep, &none, ep);
}

void ofi_forget_endpoint(struct fid_ep *ep)
{
    struct fid_ep *mine = ep;
    atomic_compare_exchange_strong(&first_ep, &mine, NULL);
}

int loggp_ofi_endpoint_name(void *buf, size_t *len)
{
    struct fid_ep *ep = atomic_load(&first_ep);
    if (!ep)
        return -1;
    return fi_getname(&ep->fid, buf, len) == 0 ? 0 : -1;
}

/* Equal names, the shorter one padded with zeros. */
static int same_name(const unsigned char *a, size_t alen, const unsigned char *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    if (memcmp(a, b, n) != 0)
        return 0;
    const unsigned char *rest = alen > n ? a + n : b + n;
    for (size_t i = 0, left = (alen > n ? alen : blen) - n; i < left; i++)
        if (rest[i])
            return 0;
    return 1;
}

static int all_zero(const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

int loggp_ofi_set_peer_classes(const unsigned char *names, size_t name_len, int nranks,
                               const uint8_t *class_of_rank)
{
    struct fid_ep *ep = atomic_load(&first_ep);
    unsigned char *inserted = NULL;
    size_t inserted_len = 0;
    size_t count = ep ? ofi_av_names(ep_state_of(ep)->av, &inserted, &inserted_len) : 0;
    uint8_t *classes = count ? calloc(count, 1) : NULL;
    unsigned char *seen = calloc((size_t)nranks, 1);
    if (!classes || !seen) {
        free(inserted);
        free(classes);
        free(seen);
        return -1;
    }
    int found = 0;
    for (size_t a = 0; a < count; a++) {
        const unsigned char *name = inserted + a * inserted_len;
        if (all_zero(name, inserted_len))
            continue; /* never inserted, or removed */
        for (int r = 0; r < nranks; r++)
            if (same_name(name, inserted_len, names + (size_t)r * name_len, name_len)) {
                classes[a] = class_of_rank[r];
                found += !seen[r];
                seen[r] = 1;
                break;
            }
    }
    free(inserted);
    free(seen);
    /* set before the knobs turn the classes on (live.c publishes with release) */
    ofi_peer_classes = classes;
    atomic_store_explicit(&ofi_peer_count, count, memory_order_release);
    return found;
}

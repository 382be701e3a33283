/* Address vectors: wrapped to keep the name behind each address as MPI
 * inserted it (the name a rank's endpoint published), so the topology can
 * tell which rank each address is (peers.c). A provider's own lookup cannot
 * serve: it may give another form of the name (shm drops its prefix) and
 * may not bounds-check. Only inserts are hooked, never a message's path. */
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "ofi.h"

typedef struct {
    atomic_flag lock;
    size_t entries;       /* one past the highest address inserted */
    size_t name_len, cap; /* bytes per name; slots allocated */
    unsigned char *names; /* the name at each address (zeros: unknown) */
} av_state;

/* Room for address a; 0 when there is none. */
static int make_room(av_state *s, size_t a)
{
    if (a < s->cap)
        return 1;
    size_t cap = s->cap ? s->cap : 64;
    while (cap <= a)
        cap *= 2;
    unsigned char *grown = realloc(s->names, cap * s->name_len);
    if (!grown)
        return 0;
    memset(grown + s->cap * s->name_len, 0, (cap - s->cap) * s->name_len);
    s->names = grown;
    s->cap = cap;
    return 1;
}

static void remember(av_state *s, const void *addr, size_t count, const fi_addr_t *fi_addr, size_t first)
{
    if (!s->name_len) {
        /* the names MPI inserts have the length of its own endpoint's name */
        unsigned char mine[FI_NAME_MAX];
        size_t len = sizeof mine;
        if (loggp_ofi_endpoint_name(mine, &len) != 0 || !len || len > FI_NAME_MAX)
            return;
        s->name_len = len;
    }
    for (size_t i = 0; i < count; i++) {
        size_t a = fi_addr ? (size_t)fi_addr[i] : first + i;
        if ((fi_addr && fi_addr[i] == FI_ADDR_NOTAVAIL) || !make_room(s, a))
            continue;
        memcpy(s->names + a * s->name_len, (const unsigned char *)addr + i * s->name_len, s->name_len);
        if (a + 1 > s->entries)
            s->entries = a + 1;
    }
}

static int h_av_insert(struct fid_av *av, const void *addr, size_t count, fi_addr_t *fi_addr, uint64_t flags,
                       void *context)
{
    av_state *s = STATE(av->ops, av_state);
    spin_lock(&s->lock);
    size_t first = s->entries; /* a table without fi_addr output fills in order */
    int rc = ORIG(av->ops, struct fi_ops_av)->insert(av, addr, count, fi_addr, flags, context);
    if (rc > 0 && addr)
        remember(s, addr, fi_addr ? count : (size_t)rc, fi_addr, first);
    spin_unlock(&s->lock);
    return rc;
}

int ofi_av_open(struct fid_domain *domain, struct fi_av_attr *attr, struct fid_av **av, void *ctx)
{
    int nested = ofi_creation_depth++ > 0;
    int rc = ORIG(domain->ops, struct fi_ops_domain)->av_open(domain, attr, av, ctx);
    ofi_creation_depth--;
    if (rc != 0 || nested)
        return rc;
    av_state *s = calloc(1, sizeof *s);
    struct fi_ops_av *ops = s ? patch_table(&(*av)->ops, sizeof *ops, s) : NULL;
    if (!ops) {
        free(s);
        return rc;
    }
    /* kept for the AV's life: one table copy and its names per AV */
    HOOK(ops, struct fi_ops_av, insert, h_av_insert);
    return rc;
}

size_t ofi_av_names(struct fid_av *av, unsigned char **names, size_t *name_len)
{
    if (!av || !av->ops || av->ops->insert != h_av_insert)
        return 0;
    av_state *s = STATE(av->ops, av_state);
    spin_lock(&s->lock);
    size_t n = s->entries;
    *name_len = s->name_len;
    *names = n && s->name_len ? malloc(n * s->name_len) : NULL;
    if (*names)
        memcpy(*names, s->names, n * s->name_len);
    spin_unlock(&s->lock);
    return *names ? n : 0;
}

/* The receive-post table (posts.h): pure, unit-tested in test_ofi_posts.c. */
#include "posts.h"

#include <stddef.h>

static inline uint64_t home(uint64_t context)
{
    return (context * UINT64_C(0x9E3779B97F4A7C15)) >> 54; /* top 10 bits: POST_SLOTS */
}

static inline post_slot *probe(post_slot *slots, uint64_t context, unsigned i)
{
    return &slots[(home(context) + i) & (POST_SLOTS - 1)];
}

void post_put(post_slot *slots, uint64_t context, uint64_t seq)
{
    post_slot *free_slot = NULL;
    for (unsigned i = 0; i < POST_PROBES; i++) {
        post_slot *s = probe(slots, context, i);
        if (s->context == context) { /* a stale entry of a receive whose completion was never taken */
            s->seq = seq;
            return;
        }
        if (!s->context && !free_slot)
            free_slot = s;
    }
    if (!free_slot)
        free_slot = probe(slots, context, (unsigned)(seq % POST_PROBES)); /* full: drop one of them */
    free_slot->context = context;
    free_slot->seq = seq;
}

int post_take(post_slot *slots, uint64_t context, uint64_t *seq)
{
    for (unsigned i = 0; i < POST_PROBES; i++) {
        post_slot *s = probe(slots, context, i);
        if (s->context == context) {
            *seq = s->seq;
            s->context = 0;
            return 1;
        }
    }
    return 0;
}

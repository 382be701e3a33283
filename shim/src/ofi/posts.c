/* The receive-post table (posts.h): pure, unit-tested in test_ofi_posts.c. */
#include "posts.h"

#include <stddef.h>

static inline unsigned home(uint64_t context)
{
    return (unsigned)((context * UINT64_C(0x9E3779B97F4A7C15)) >> 54); /* top 10 bits: POST_SLOTS */
}

void post_put(post_slot *slots, uint64_t context, uint64_t seq, uint64_t posted_ns)
{
    /* the first free slot or its own stale entry (a receive whose completion
     * was never taken); a stale entry further on is found after this one */
    unsigned h = home(context);
    post_slot *s = NULL;
    for (unsigned i = 0; i < POST_PROBES; i++) {
        s = &slots[(h + i) & (POST_SLOTS - 1)];
        if (!s->context || s->context == context)
            break;
        s = NULL;
    }
    if (!s)
        s = &slots[(h + (unsigned)(seq % POST_PROBES)) & (POST_SLOTS - 1)]; /* full: drop one of them */
    s->context = context;
    s->seq = seq;
    s->posted_ns = posted_ns;
}

int post_take(post_slot *slots, uint64_t context, uint64_t *seq, uint64_t *posted_ns)
{
    unsigned h = home(context);
    for (unsigned i = 0; i < POST_PROBES; i++) {
        post_slot *s = &slots[(h + i) & (POST_SLOTS - 1)];
        if (s->context == context) {
            *seq = s->seq;
            *posted_ns = s->posted_ns;
            s->context = 0;
            return 1;
        }
    }
    return 0;
}

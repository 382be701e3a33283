/* The post table (posts.h): unit-tested in test_ofi_posts.c. */
#include "posts.h"

#include <stddef.h>
#include <stdlib.h>

static inline unsigned home(uint64_t context)
{
    return (unsigned)((context * UINT64_C(0x9E3779B97F4A7C15)) >> 54); /* top 10 bits: POST_SLOTS */
}

post_slot *post_put(post_slot *slots, const post_slot *post)
{
    uint64_t context = post->context;
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
    if (!s) /* full: drop one of them */
        s = &slots[(h + (unsigned)((post->seq ^ post->posted_ns) % POST_PROBES)) & (POST_SLOTS - 1)];
    *s = *post;
    return s;
}

int post_take(post_slot *slots, uint64_t context, post_slot *post)
{
    unsigned h = home(context);
    for (unsigned i = 0; i < POST_PROBES; i++) {
        post_slot *s = &slots[(h + i) & (POST_SLOTS - 1)];
        if (s->context == context) {
            *post = *s;
            s->context = 0;
            return 1;
        }
    }
    return 0;
}

post_slot *post_table(_Atomic(post_slot *) *table)
{
    post_slot *slots = atomic_load_explicit(table, memory_order_acquire);
    if (slots)
        return slots;
    post_slot *fresh = calloc(POST_SLOTS, sizeof *fresh);
    if (!fresh)
        return NULL;
    if (!atomic_compare_exchange_strong(table, &slots, fresh)) {
        free(fresh); /* another thread's won: slots is now theirs */
        return slots;
    }
    return fresh;
}

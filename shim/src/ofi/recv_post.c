/* Receive posts: each tagged receive's post number on the CQ its completion
 * reaches (posts.h). A receive seen after the CQ was found drained since its
 * post arrived after that read (due.h, receive_arrival). */
#include <stdlib.h>

#include "layer.h"

void note_receive_post_on(cq_state *cq, void *context, uint64_t len)
{
    /* only a hold reads it; a stale knob read costs one receive its refinement */
    if (!atomic_load_explicit(&loggp_live_ns[3], memory_order_relaxed) &&
        !atomic_load_explicit(&loggp_live_G_ps_per_byte, memory_order_relaxed) &&
        !atomic_load_explicit(&loggp_live_topo, memory_order_relaxed))
        return;
    post_slot *slots = atomic_load_explicit(&cq->posts, memory_order_acquire);
    if (!slots) {
        post_slot *fresh = calloc(POST_SLOTS, sizeof *fresh);
        if (!fresh)
            return;
        if (!atomic_compare_exchange_strong(&cq->posts, &slots, fresh))
            free(fresh); /* another thread's won: slots is now theirs */
        else
            slots = fresh;
    }
    /* posts and reads of one CQ are serialised by the MPI library (posts.h) */
    uint64_t n = atomic_load_explicit(&cq->post_count, memory_order_relaxed);
    atomic_store_explicit(&cq->post_count, n + 1, memory_order_relaxed);
    post_put(slots, (uint64_t)(uintptr_t)context, n, len > RENDEZVOUS_MIN_BYTES ? clock_ns() : 0);
}

int receive_posted_before_drain(cq_state *cs, void *context, uint64_t drained_posts, uint64_t *posted_at)
{
    post_slot *slots = atomic_load_explicit(&cs->posts, memory_order_acquire);
    uint64_t seq = 0;
    int known = slots && context && post_take(slots, (uint64_t)(uintptr_t)context, &seq, posted_at);
    return posted_before_drain(known, seq, drained_posts);
}

/* Receive posts: each tagged receive's post number on the CQ its completion
 * reaches (posts.h). A receive seen after the CQ was found drained since its
 * post arrived after that read (due.h, receive_arrival). */
#include "layer.h"

post_slot *note_receive_post_on(cq_state *cq, void *context, uint64_t len)
{
    /* only a hold or the receive gap reads it; a stale knob read costs one
     * receive its refinement */
    if (!atomic_load_explicit(&loggp_live_ns[2], memory_order_relaxed) &&
        !atomic_load_explicit(&loggp_live_ns[3], memory_order_relaxed) &&
        !atomic_load_explicit(&loggp_live_G_ps_per_byte, memory_order_relaxed) &&
        !atomic_load_explicit(&loggp_live_topo, memory_order_relaxed))
        return NULL;
    post_slot *slots = post_table(&cq->posts);
    if (!slots)
        return NULL;
    /* posts and reads of one CQ are serialised by the MPI library (posts.h) */
    uint64_t n = atomic_load_explicit(&cq->post_count, memory_order_relaxed);
    atomic_store_explicit(&cq->post_count, n + 1, memory_order_relaxed);
    int rendezvous_size = len > RENDEZVOUS_MIN_BYTES;
    post_slot *slot = post_put(slots, &(post_slot){.context = (uint64_t)(uintptr_t)context,
                                                   .seq = n,
                                                   .posted_ns = rendezvous_size ? clock_ns() : 0});
    return rendezvous_size ? slot : NULL;
}

int receive_posted_before_drain(cq_state *cs, void *context, uint64_t drained_posts, uint64_t *posted_at,
                                uint64_t *post_ns)
{
    post_slot *slots = atomic_load_explicit(&cs->posts, memory_order_acquire), post = {0};
    int known = slots && context && post_take(slots, (uint64_t)(uintptr_t)context, &post);
    if (known) {
        *posted_at = post.posted_ns;
        *post_ns = post.done_ns > post.posted_ns ? post.done_ns - post.posted_ns : 0;
    }
    return posted_before_drain(known, post.seq, drained_posts);
}

/* Send posts: a send the provider moves by rendezvous completes at the sender
 * no earlier than the emulated network could have delivered it (delay.h,
 * loggp_rendezvous_send_due; docs/protocols.md). Its post time and what its
 * completion owes are filed by context on the CQ the completion reaches
 * (posts.h); the holding read (cq_hold.c) takes them back. A record is
 * honoured only under the knobs it was filed under. */
#include "layer.h"

void note_send_post_on(cq_state *cq, void *context, uint64_t posted, uint64_t bytes, const loggp_delays *d)
{
    uint64_t bytes_ns = loggp_bytes_delay_ns(d->G_ps_per_byte, bytes);
    if ((!d->L && !bytes_ns) || bytes <= rendezvous_above())
        return;
    post_slot *slots = post_table(&cq->sends);
    if (!slots)
        return;
    /* posts and reads of one CQ are serialised by the MPI library (posts.h) */
    post_put(slots, &(post_slot){.context = (uint64_t)(uintptr_t)context,
                                 .L_ns = loggp_jittered_L(d->L),
                                 .posted_ns = posted,
                                 .bytes_ns = bytes_ns,
                                 .knobs_seq = atomic_load_explicit(&loggp_live_seq, memory_order_relaxed)});
    atomic_fetch_add_explicit(&cq->sends_filed, 1, memory_order_relaxed);
}

uint64_t send_completion_due(cq_state *cs, void *context, uint64_t natural)
{
    post_slot *slots = atomic_load_explicit(&cs->sends, memory_order_acquire), post;
    if (!slots || !context || !post_take(slots, (uint64_t)(uintptr_t)context, &post))
        return 0;
    atomic_fetch_sub_explicit(&cs->sends_filed, 1, memory_order_relaxed);
    /* Filed under other knobs: its own completion may have passed unread by
     * the hold (knobs at zero, or o alone), and this one, with the context
     * reused, was never filed; owing nothing is the safe reading. */
    if (post.knobs_seq != atomic_load_explicit(&loggp_live_seq, memory_order_relaxed))
        return 0;
    return loggp_rendezvous_send_due(post.posted_ns, natural, post.L_ns, post.bytes_ns);
}

/* Posts by context. Receives: which post, in a CQ's own count of posts, each
 * outstanding tagged receive was. A completion then knows whether its receive
 * was posted before the CQ was last found drained (due.h) without a clock
 * read at the post or a lock: the MPI library posts to and reads one CQ under
 * one lock (MPICH: per VCI). Sends of rendezvous size: when each was posted
 * and the L and (k-1)G its completion owes (send_post.c). A small
 * open-addressed table: when all probes of a context are taken by others, one
 * of them is overwritten and its post becomes unknown, which due.h treats as
 * posted long ago and a send as owing nothing. A record whose completion
 * passed while no hold was reading (the knobs changed meanwhile) stays behind;
 * a receive's then reads as posted long ago, and a send's is not honoured
 * (send_post.c). */
#ifndef LOGGP_OFI_POSTS_H
#define LOGGP_OFI_POSTS_H

#include <stdatomic.h>
#include <stdint.h>

#define POST_SLOTS 1024 /* a power of two; MPICH keeps far fewer receives in flight per CQ */
#define POST_PROBES 8

typedef struct {
    uint64_t context; /* 0: empty */
    union {
        uint64_t seq;  /* a receive's: the CQ's post count when it was posted */
        uint64_t L_ns; /* a send's: the flight time its completion owes */
    };
    uint64_t posted_ns; /* when, for a post large enough for a rendezvous (0: not taken) */
    uint64_t done_ns;   /* a receive's: when that post call returned (0: not taken) */
    uint64_t bytes_ns;  /* a send's: (k-1)G */
    unsigned knobs_seq; /* a send's: the knobs' generation it was filed under (live.h) */
} post_slot;

#pragma GCC visibility push(hidden)

/* Files a post (its context nonzero) in slots[POST_SLOTS]; returns its slot. */
post_slot *post_put(post_slot *slots, const post_slot *post);

/* Takes the post of context into *post; 0 if unknown. */
int post_take(post_slot *slots, uint64_t context, post_slot *post);

/* The table at *table, allocated at its first use (NULL: no memory). */
post_slot *post_table(_Atomic(post_slot *) *table);

#pragma GCC visibility pop

/* Was a receive (its post number, if known) posted before the last read that
 * found the CQ drained, which began when drained_seq receives had been
 * posted? Unknown counts as before (posted long ago). */
static inline int posted_before_drain(int known, uint64_t post_seq, uint64_t drained_seq)
{
    return !known || post_seq < drained_seq;
}

#endif

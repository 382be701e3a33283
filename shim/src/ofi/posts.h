/* Receive posts by context: which post, in a CQ's own count of posts, each
 * outstanding tagged receive was. A completion then knows whether its receive
 * was posted before the CQ was last found drained (due.h) without a clock
 * read at the post or a lock: the MPI library posts to and reads one CQ under
 * one lock (MPICH: per VCI). A small open-addressed table: when all probes of
 * a context are taken by others, one of them is overwritten and its receive
 * becomes unknown, which due.h treats as posted long ago. */
#ifndef LOGGP_OFI_POSTS_H
#define LOGGP_OFI_POSTS_H

#include <stdint.h>

#define POST_SLOTS 1024 /* a power of two; MPICH keeps far fewer receives in flight per CQ */
#define POST_PROBES 8

typedef struct {
    uint64_t context;   /* 0: empty */
    uint64_t seq;       /* the CQ's post count when it was posted */
    uint64_t posted_ns; /* when, for a receive large enough for a rendezvous (0: not taken) */
} post_slot;

#pragma GCC visibility push(hidden)

/* Files post number seq of context (nonzero), posted at posted_ns, in
 * slots[POST_SLOTS]. */
void post_put(post_slot *slots, uint64_t context, uint64_t seq, uint64_t posted_ns);

/* Takes the post number and time of context into *seq and *posted_ns; 0 if
 * unknown. */
int post_take(post_slot *slots, uint64_t context, uint64_t *seq, uint64_t *posted_ns);

#pragma GCC visibility pop

/* Was a receive (its post number, if known) posted before the last read that
 * found the CQ drained, which began when drained_seq receives had been
 * posted? Unknown counts as before (posted long ago). */
static inline int posted_before_drain(int known, uint64_t post_seq, uint64_t drained_seq)
{
    return !known || post_seq < drained_seq;
}

#endif

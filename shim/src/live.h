/* Live knobs: loaded at MPI_Init (environment over the knob file), then
 * refreshed by a watcher thread when `loggp-knobs set` rewrites the file, so
 * the message path reads them without any system call. */
#ifndef LOGGP_LIVE_H
#define LOGGP_LIVE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "knobs.h"

/* Delays in the form the message path uses. */
typedef struct {
    uint64_t o_s, o_r, g, L; /* ns */
    int64_t G_ps_per_byte;            /* ps per byte */
    int topo;                         /* per-pair L and G in force (topology_live.h) */
} loggp_delays;

/* Nonzero while any knob is nonzero: the one load on the zero-knob path. */
extern _Atomic int loggp_live_any;

static inline int loggp_live_active(void)
{
    return atomic_load_explicit(&loggp_live_any, memory_order_relaxed);
}

/* The delays as the message path uses them, under a seqlock (live.c). */
extern _Atomic unsigned loggp_live_seq;
extern _Atomic uint64_t loggp_live_ns[4]; /* o_s, o_r, g, L */
extern _Atomic int64_t loggp_live_G_ps_per_byte;
extern _Atomic int loggp_live_topo;
/* The knobs in force ask nothing of a send but its stamp (L, or per-pair L,
 * alone): the send hooks skip the snapshot and the pacer (layer.h). */
extern _Atomic int loggp_live_stamp_only;

/* A consistent snapshot of the current delays: a handful of loads, no lock. */
static inline void loggp_live_get(loggp_delays *out)
{
    unsigned s1, s2;
    do {
        s1 = atomic_load_explicit(&loggp_live_seq, memory_order_acquire);
        out->o_s = atomic_load_explicit(&loggp_live_ns[0], memory_order_relaxed);
        out->o_r = atomic_load_explicit(&loggp_live_ns[1], memory_order_relaxed);
        out->g = atomic_load_explicit(&loggp_live_ns[2], memory_order_relaxed);
        out->L = atomic_load_explicit(&loggp_live_ns[3], memory_order_relaxed);
        out->G_ps_per_byte = atomic_load_explicit(&loggp_live_G_ps_per_byte, memory_order_relaxed);
        out->topo = atomic_load_explicit(&loggp_live_topo, memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        s2 = atomic_load_explicit(&loggp_live_seq, memory_order_relaxed);
    } while ((s1 & 1) || s1 != s2);
}

/* Loads the knobs (environment overrides the file) and starts the watcher
 * unless LOGGP_LIVE=0 or every knob comes from the environment. Returns -1
 * with a message if a value or the file is bad. */
int loggp_live_start(char *err, size_t errlen);

/* Stops the watcher (at MPI_Finalize). */
void loggp_live_stop(void);

/* The knobs in effect now, their sources, and the knob file's path. */
void loggp_live_knobs(loggp_knobs *out);
unsigned loggp_live_env_mask(void);
const char *loggp_live_file(void);
int loggp_live_watching(void);

/* Replaces the knobs (the watcher's update; also used by tests). */
void loggp_live_publish(const loggp_knobs *knobs);

/* The layer's own messages (clock sync, its checks at MPI_Init and
 * MPI_Finalize) carry no knobs: while suspended every knob in force is zero,
 * per-pair values and jitter included, whatever is published meanwhile (the
 * watcher, the region, the topology); resume puts in force what is wanted
 * then, region scope included. Not nested. Completions already held keep
 * their hold. */
void loggp_live_suspend(void);
void loggp_live_resume(void);

/* LOGGP_SCOPE=kernel: the knobs apply inside the program's kernel region
 * only (region.h), else everywhere (all, the default). */
int loggp_live_scoped_to_kernel(void);
/* LOGGP_OUTSIDE=armed: outside the kernel region each knob set applies its
 * smallest step instead of nothing (runenv.h). */
int loggp_live_outside_armed(void);
/* The knobs as loaded (file and environment), whatever the region: what the
 * banner and the profile report; loggp_live_knobs gives those in force. */
void loggp_live_wanted(loggp_knobs *out);
/* The program changed region: republishes the knobs in force (region.c). */
void loggp_live_region_changed(void);

/* The run's topology has per-pair values (set once, after MPI_Init, by
 * topology_live.c): they apply wherever the knobs do, scope included. */
void loggp_live_set_topology(int has_values, int has_G);

/* Calls fn (from the publishing thread) each time the knobs go from all zero
 * to some nonzero or back: the libfabric layer switches tables then. */
void loggp_live_on_change(void (*fn)(void));

#endif

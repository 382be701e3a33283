/* Per-rank traffic profile: counters kept per thread (no atomics on the
 * message path), summed and written as JSON at MPI_Finalize. */
#ifndef LOGGP_PROFILE_H
#define LOGGP_PROFILE_H

#include <stdint.h>

#include <stdatomic.h>

#include "knobs.h"
#include "pmpi/wrapped.h"
#include "region.h"

enum {
#define LOGGP_ENUM(name) LOGGP_FN_##name,
    LOGGP_P2P_FUNCTIONS(LOGGP_ENUM) LOGGP_FN_COUNT
};
enum {
    LOGGP_COLL_FUNCTIONS_START = -1,
    LOGGP_COLLECTIVES(LOGGP_ENUM) LOGGP_COLL_COUNT
#undef LOGGP_ENUM
};

/* Size buckets: 0 bytes, then [2^(b-1), 2^b - 1] for b = 1..63. */
#define LOGGP_BUCKETS 64

static inline int loggp_bucket(uint64_t bytes)
{
    return bytes ? 64 - __builtin_clzll(bytes) : 0;
}

/* Delay actually added, per knob (o_s, o_r, g, G, L). */
enum { LOGGP_INJ_O_S, LOGGP_INJ_O_R, LOGGP_INJ_GAP, LOGGP_INJ_GAP_PER_BYTE, LOGGP_INJ_LATENCY, LOGGP_INJ_COUNT };

typedef struct loggp_counters {
    uint64_t calls[LOGGP_FN_COUNT];
    uint64_t coll_calls[LOGGP_COLL_COUNT];
    uint64_t coll_bytes[LOGGP_COLL_COUNT];
    uint64_t sent_msgs[LOGGP_BUCKETS], sent_bytes[LOGGP_BUCKETS];
    uint64_t recv_msgs[LOGGP_BUCKETS], recv_bytes[LOGGP_BUCKETS];
    uint64_t self_msgs, self_bytes; /* of the sent: to the sending rank itself, which MPI copies */
    uint64_t injected_ns[LOGGP_INJ_COUNT];
    struct loggp_counters *next;
    int region; /* which of the program's regions these count (region.h) */
} loggp_counters;

/* This thread's counters, one block per region (created on first use and
 * never freed before exit, so counts of threads that ended are kept). */
loggp_counters *loggp_counters_slow(void);
extern __thread loggp_counters *loggp_tls_counters __attribute__((tls_model("initial-exec")));

static inline loggp_counters *loggp_my_counters(void)
{
    loggp_counters *c = loggp_tls_counters;
    c = __builtin_expect(c != NULL, 1) ? c : loggp_counters_slow();
    return c + atomic_load_explicit(&loggp_region, memory_order_relaxed);
}

/* Adds every thread's counters of region (LOGGP_REGION_*, or -1 for all) into *sum. */
void loggp_counters_sum(loggp_counters *sum, int region);

/* The clock synchronisation at MPI_Init, as the profile reports it. */
typedef struct {
    int synchronised;
    int64_t offset_ns; /* rank 0's clock minus this rank's, as estimated */
    int64_t rtt_ns;    /* round trip of the exchange the estimate came from */
    int64_t skew_ns;   /* test-injected offset of this rank's clock */
} loggp_profile_clock;

/* What the profile says about the run besides the counters. */
typedef struct {
    int rank, size;
    const char *host;
    const char *engine; /* "pmpi" or "libfabric:<provider>" */
    loggp_knobs knobs;
    double wall_seconds;
    loggp_profile_clock clock;
    int scope_kernel; /* knobs applied inside the kernel region only */
    int outside_armed; /* and outside it, each knob set at its smallest step */
    const char *topology_json; /* per-pair classes and values, or NULL */
} loggp_profile_run;

/* Writes every thread's counters and *run to dir/profile.<rank>.json
 * atomically (creating dir); on failure says why on stderr, leaving no file. */
void loggp_profile_write(const char *dir, const loggp_profile_run *run);

#endif

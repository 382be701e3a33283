/* Per-rank traffic profile: counters kept per thread (no atomics on the
 * message path), summed and written as JSON at MPI_Finalize. */
#ifndef LOGGP_PROFILE_H
#define LOGGP_PROFILE_H

#include <stdint.h>
#include <stdio.h>

/* Every MPI function the PMPI layer wraps, in one list: X(name). */
#define LOGGP_P2P_FUNCTIONS(X) \
    X(Send) X(Bsend) X(Ssend) X(Rsend) X(Isend) X(Ibsend) X(Issend) X(Irsend) \
    X(Recv) X(Irecv) X(Sendrecv) X(Sendrecv_replace) \
    X(Send_init) X(Bsend_init) X(Ssend_init) X(Rsend_init) X(Recv_init) X(Start) X(Startall) \
    X(Request_free) X(Probe) X(Iprobe) \
    X(Wait) X(Waitany) X(Waitall) X(Waitsome) X(Test) X(Testany) X(Testall) X(Testsome)

#define LOGGP_COLLECTIVES(X) \
    X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Gather) X(Gatherv) X(Scatter) X(Scatterv) \
    X(Allgather) X(Allgatherv) X(Alltoall) X(Alltoallv) X(Alltoallw) X(Reduce_scatter) \
    X(Reduce_scatter_block) X(Scan) X(Exscan) \
    X(Ibarrier) X(Ibcast) X(Ireduce) X(Iallreduce) X(Igather) X(Iscatter) X(Iallgather) X(Ialltoall) \
    X(Ialltoallv)

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
enum { LOGGP_INJ_OS, LOGGP_INJ_OR, LOGGP_INJ_G, LOGGP_INJ_GBYTE, LOGGP_INJ_L, LOGGP_INJ_COUNT };

typedef struct loggp_counters {
    uint64_t calls[LOGGP_FN_COUNT];
    uint64_t coll_calls[LOGGP_COLL_COUNT];
    uint64_t coll_bytes[LOGGP_COLL_COUNT];
    uint64_t sent_msgs[LOGGP_BUCKETS], sent_bytes[LOGGP_BUCKETS];
    uint64_t recv_msgs[LOGGP_BUCKETS], recv_bytes[LOGGP_BUCKETS];
    uint64_t injected_ns[LOGGP_INJ_COUNT];
    struct loggp_counters *next;
} loggp_counters;

/* This thread's counters (created on first use and never freed before exit,
 * so counts of threads that ended are kept). */
loggp_counters *loggp_counters_slow(void);
extern __thread loggp_counters *loggp_tls_counters __attribute__((tls_model("initial-exec")));

static inline loggp_counters *loggp_my_counters(void)
{
    loggp_counters *c = loggp_tls_counters;
    return __builtin_expect(c != NULL, 1) ? c : loggp_counters_slow();
}

/* Adds every thread's counters into *sum. */
void loggp_counters_sum(loggp_counters *sum);

/* Names for JSON ("MPI_Send"). */
extern const char *const loggp_fn_names[LOGGP_FN_COUNT];
extern const char *const loggp_coll_names[LOGGP_COLL_COUNT];

/* Injected delay reported by the libfabric layer (process-wide totals). */
void loggp_profile_add_injected(int which, uint64_t ns);

#endif

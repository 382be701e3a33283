/* Clock synchronisation at MPI_Init, for the libfabric layer's send stamps:
 * each rank's offset to rank 0, estimated from the exchange with the smallest
 * round trip (the SKaMPI/ReproMPI method), so that stamps read in one time
 * base across hosts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "ofi.h"
#include "pmpi.h"

static loggp_profile_clock result;

void loggp_clock_sync_result(loggp_profile_clock *out)
{
    *out = result;
}

/* LOGGP_TEST_CLOCK_SKEW=RANK:NS shifts one rank's stamping clock, so tests on
 * one host can check that the synchronisation finds and removes an offset. */
static int64_t injected_skew(void)
{
    const char *spec = getenv("LOGGP_TEST_CLOCK_SKEW");
    if (!spec || !*spec)
        return 0;
    char *end;
    long rank = strtol(spec, &end, 10);
    long long ns = *end == ':' ? strtoll(end + 1, &end, 10) : 0;
    int bad = *end || rank < 0;
    if (bad && loggp_world_rank == 0)
        fprintf(stderr, "loggp: LOGGP_TEST_CLOCK_SKEW=%s: expected RANK:NANOSECONDS\n", spec);
    loggp_stop_if_any_failed(bad);
    return rank == loggp_world_rank ? (int64_t)ns : 0;
}

/* This rank's (offset, round trip) against rank 0, from `exchanges` round trips. */
static void exchange_with_root(MPI_Comm comm, int exchanges, int64_t *offset, int64_t *rtt)
{
    enum { TAG = 1 };
    int rank = loggp_world_rank;
    int64_t best_rtt = INT64_MAX, best_offset = 0, skew = result.skew_ns;
    for (int peer = 1; peer < loggp_world_size; peer++) {
        if (rank != 0 && rank != peer)
            continue;
        for (int k = 0; k < exchanges; k++) {
            int64_t t1, t0, t2;
            if (rank == 0) {
                pmpi.Recv(&t1, 1, MPI_INT64_T, peer, TAG, comm, MPI_STATUS_IGNORE);
                t0 = (int64_t)loggp_now_ns() + skew;
                pmpi.Send(&t0, 1, MPI_INT64_T, peer, TAG, comm);
            } else {
                t1 = (int64_t)loggp_now_ns() + skew;
                pmpi.Send(&t1, 1, MPI_INT64_T, 0, TAG, comm);
                pmpi.Recv(&t0, 1, MPI_INT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
                t2 = (int64_t)loggp_now_ns() + skew;
                if (t2 - t1 < best_rtt) {
                    best_rtt = t2 - t1;
                    best_offset = t0 - (t1 + t2) / 2;
                }
            }
        }
    }
    *offset = rank ? best_offset : 0;
    *rtt = rank ? best_rtt : 0;
}

void loggp_synchronise_clocks(void)
{
    result.skew_ns = injected_skew();
    const char *sync = getenv("LOGGP_CLOCK_SYNC");
    int enabled = !sync || strcmp(sync, "0") != 0;
    if (enabled && loggp_world_size > 1) {
        MPI_Comm comm;
        pmpi.Comm_dup(MPI_COMM_WORLD, &comm);
        exchange_with_root(comm, 16, &result.offset_ns, &result.rtt_ns);
        pmpi.Comm_free(&comm);
        result.synchronised = 1;
    }
    /* One host: CLOCK_MONOTONIC is shared, so the true offset is exactly 0 and
     * the estimate (kept in the profile) would only add its own error. */
    int shared = loggp_single_node() && !getenv("LOGGP_TEST_CLOCK_SKEW");
    loggp_ofi_set_clock(shared ? 0 : result.skew_ns + result.offset_ns, shared);
}

/* The PMPI layer's outstanding receives and persistent requests, so that a
 * completion call knows which of its requests were receives (counted, and
 * charged o_r under the fallback engine) and a persistent send its size. */
#include "pmpi.h"

loggp_table loggp_requests =
    LOGGP_TABLE_INIT((1 << LOGGP_REQ_PERSISTENT_SEND) | (1 << LOGGP_REQ_PERSISTENT_SELF_SEND) |
                     (1 << LOGGP_REQ_PERSISTENT_RECV));

loggp_req_info loggp_claim(MPI_Request r)
{
    loggp_req_info info = {0, 0};
    if (r == MPI_REQUEST_NULL || !loggp_table_take(&loggp_requests, request_key(r), &info))
        info.kind = 0;
    return info;
}

void loggp_unclaim(MPI_Request r, MPI_Request after, loggp_req_info info)
{
    if (info.kind == LOGGP_REQ_RECV && after != MPI_REQUEST_NULL)
        loggp_table_put(&loggp_requests, request_key(r), info.kind, info.bytes);
}

void loggp_completed(loggp_counters *c, loggp_req_info info, const MPI_Status *st)
{
    if (info.kind == LOGGP_REQ_RECV || info.kind == LOGGP_REQ_PERSISTENT_RECV)
        loggp_received(c, st);
}

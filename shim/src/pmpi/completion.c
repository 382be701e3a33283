/* Completion wrappers (Wait, Test and their any/all/some forms): a receive
 * completing is counted, and under the fallback engine charged o_r. */
#include <stdlib.h>

#include "pmpi.h"

/* For the array calls: the handles as they were (they become MPI_REQUEST_NULL
 * on completion), their claimed entries, and statuses (the caller may ignore
 * them). */
typedef struct {
    MPI_Request small_reqs[32];
    loggp_req_info small_infos[32];
    MPI_Status small_stats[32];
    MPI_Request *before;
    loggp_req_info *infos;
    MPI_Status *stats;
    MPI_Request *reqs;
    int count, heap;
} completion_scratch;

static int scratch_open(completion_scratch *s, int count, MPI_Request *reqs, MPI_Status *caller_stats)
{
    s->heap = 0;
    s->count = count > 0 ? count : 0;
    s->reqs = reqs;
    s->before = s->small_reqs;
    s->infos = s->small_infos;
    s->stats = caller_stats;
    if (count > 32) {
        s->before = malloc((size_t)count * sizeof *s->before);
        s->infos = malloc((size_t)count * sizeof *s->infos);
        s->heap |= 1;
        if (!s->before || !s->infos) {
            free(s->before);
            free(s->infos);
            return -1;
        }
    }
    if (caller_stats == MPI_STATUSES_IGNORE) {
        s->stats = s->small_stats;
        if (count > 32) {
            s->stats = malloc((size_t)count * sizeof *s->stats);
            if (!s->stats) {
                free(s->before);
                free(s->infos);
                return -1;
            }
            s->heap |= 2;
        }
    }
    for (int i = 0; i < s->count; i++) {
        s->before[i] = reqs[i];
        s->infos[i] = loggp_claim(reqs[i]);
    }
    return 0;
}

static void scratch_close(completion_scratch *s)
{
    for (int i = 0; i < s->count; i++)
        loggp_unclaim(s->before[i], s->reqs[i], s->infos[i]);
    if (s->heap & 1) {
        free(s->before);
        free(s->infos);
    }
    if (s->heap & 2)
        free(s->stats);
}

/* Traces a completion call: its record, then one per request that completed
 * (done[k]: position; NULL with n = 1: position 0 of a single request). */
static void trace_completions(int call, uint64_t t0, const completion_scratch *s, const MPI_Status *stats,
                              int rc, int n, const int *done)
{
    uint64_t t1 = loggp_trace_call(call, t0, -1, -1, MPI_COMM_NULL, 0, 0);
    for (int k = 0; k < n; k++) {
        int i = done ? done[k] : k;
        if (i < 0 || i >= s->count || s->before[i] == MPI_REQUEST_NULL)
            continue;
        const MPI_Status *st = &stats[done ? k : i];
        if (rc == MPI_ERR_IN_STATUS && st->MPI_ERROR != MPI_SUCCESS)
            continue;
        int kind = s->infos[i].kind;
        int received = kind == LOGGP_REQ_RECV || kind == LOGGP_REQ_PERSISTENT_RECV;
        loggp_trace_completion(call, t0, t1, request_key(s->before[i]), i, received ? st : NULL);
    }
}

static int status_ok(int rc, const MPI_Status *st)
{
    return rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && st->MPI_ERROR == MPI_SUCCESS);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    if (loggp_pass_through())
        return pmpi.Wait(req, status);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Wait);
    if (nothing_tracked() && !loggp_tracing)
        return pmpi.Wait(req, status);
    uint64_t t0 = loggp_trace_now();
    MPI_Request before = *req;
    loggp_req_info info = loggp_claim(before);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = pmpi.Wait(req, st);
    if (rc == MPI_SUCCESS)
        loggp_completed(c, info, st);
    loggp_unclaim(before, *req, info);
    if (loggp_tracing) {
        completion_scratch one = {.before = &before, .infos = &info, .count = 1};
        trace_completions(TRACE_P2P(Wait), t0, &one, st, rc, rc == MPI_SUCCESS ? 1 : 0, NULL);
    }
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    if (loggp_pass_through())
        return pmpi.Test(req, flag, status);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Test);
    if (nothing_tracked() && !loggp_tracing)
        return pmpi.Test(req, flag, status);
    uint64_t t0 = loggp_trace_now();
    MPI_Request before = *req;
    loggp_req_info info = loggp_claim(before);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = pmpi.Test(req, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        loggp_completed(c, info, st);
    loggp_unclaim(before, *req, info);
    if (loggp_tracing) {
        completion_scratch one = {.before = &before, .infos = &info, .count = 1};
        trace_completions(TRACE_P2P(Test), t0, &one, st, rc, rc == MPI_SUCCESS && *flag ? 1 : 0, NULL);
    }
    return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    if (loggp_pass_through())
        return pmpi.Waitany(count, reqs, index, status);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Waitany);
    completion_scratch s;
    if ((nothing_tracked() && !loggp_tracing) || scratch_open(&s, count, reqs, MPI_STATUSES_IGNORE) != 0)
        return pmpi.Waitany(count, reqs, index, status);
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &s.small_stats[0] : status;
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Waitany(count, reqs, index, st);
    int done = rc == MPI_SUCCESS && *index != MPI_UNDEFINED;
    if (done)
        loggp_completed(c, s.infos[*index], st);
    if (loggp_tracing)
        trace_completions(TRACE_P2P(Waitany), t0, &s, st, rc, done, index);
    scratch_close(&s);
    return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    if (loggp_pass_through())
        return pmpi.Testany(count, reqs, index, flag, status);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Testany);
    completion_scratch s;
    if ((nothing_tracked() && !loggp_tracing) || scratch_open(&s, count, reqs, MPI_STATUSES_IGNORE) != 0)
        return pmpi.Testany(count, reqs, index, flag, status);
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &s.small_stats[0] : status;
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Testany(count, reqs, index, flag, st);
    int done = rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED;
    if (done)
        loggp_completed(c, s.infos[*index], st);
    if (loggp_tracing)
        trace_completions(TRACE_P2P(Testany), t0, &s, st, rc, done, index);
    scratch_close(&s);
    return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status stats[])
{
    if (loggp_pass_through())
        return pmpi.Waitall(count, reqs, stats);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Waitall);
    completion_scratch s;
    if ((nothing_tracked() && !loggp_tracing) || scratch_open(&s, count, reqs, stats) != 0)
        return pmpi.Waitall(count, reqs, stats);
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Waitall(count, reqs, s.stats);
    for (int i = 0; i < count && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS); i++)
        if (status_ok(rc, &s.stats[i]))
            loggp_completed(c, s.infos[i], &s.stats[i]);
    if (loggp_tracing)
        trace_completions(TRACE_P2P(Waitall), t0, &s, s.stats, rc,
                          rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS ? s.count : 0, NULL);
    scratch_close(&s);
    return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status stats[])
{
    if (loggp_pass_through())
        return pmpi.Testall(count, reqs, flag, stats);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Testall);
    completion_scratch s;
    if ((nothing_tracked() && !loggp_tracing) || scratch_open(&s, count, reqs, stats) != 0)
        return pmpi.Testall(count, reqs, flag, stats);
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Testall(count, reqs, flag, s.stats);
    for (int i = 0; i < count && *flag && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS); i++)
        if (status_ok(rc, &s.stats[i]))
            loggp_completed(c, s.infos[i], &s.stats[i]);
    if (loggp_tracing)
        trace_completions(TRACE_P2P(Testall), t0, &s, s.stats, rc,
                          *flag && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) ? s.count : 0, NULL);
    scratch_close(&s);
    return rc;
}

/* After Waitsome/Testsome: account for each request that completed. */
static int some_completed(loggp_counters *c, int rc, int outcount, const int *indices, completion_scratch *s,
                          int call, uint64_t t0)
{
    if (loggp_tracing)
        trace_completions(call, t0, s, s->stats, rc,
                          (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && outcount != MPI_UNDEFINED ? outcount : 0,
                          indices);
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && outcount != MPI_UNDEFINED)
        for (int k = 0; k < outcount; k++)
            if (status_ok(rc, &s->stats[k]))
                loggp_completed(c, s->infos[indices[k]], &s->stats[k]);
    scratch_close(s);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status stats[])
{
    if (loggp_pass_through())
        return pmpi.Waitsome(incount, reqs, outcount, indices, stats);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Waitsome);
    completion_scratch s;
    if ((nothing_tracked() && !loggp_tracing) || scratch_open(&s, incount, reqs, stats) != 0)
        return pmpi.Waitsome(incount, reqs, outcount, indices, stats);
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Waitsome(incount, reqs, outcount, indices, s.stats);
    return some_completed(c, rc, *outcount, indices, &s, TRACE_P2P(Waitsome), t0);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status stats[])
{
    if (loggp_pass_through())
        return pmpi.Testsome(incount, reqs, outcount, indices, stats);
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Testsome);
    completion_scratch s;
    if ((nothing_tracked() && !loggp_tracing) || scratch_open(&s, incount, reqs, stats) != 0)
        return pmpi.Testsome(incount, reqs, outcount, indices, stats);
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Testsome(incount, reqs, outcount, indices, s.stats);
    return some_completed(c, rc, *outcount, indices, &s, TRACE_P2P(Testsome), t0);
}

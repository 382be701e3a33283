/* Point-to-point wrappers: each call is counted for the profile, sends are
 * wrapped in o_s and the pacer under the fallback engine, receives are
 * counted (and charged o_r) when they complete. */
#include "pmpi.h"

/* A send call: count it, under the fallback engine wrap it in o_s and the
 * pacer, and trace it (req: the request it posts, or NULL). */
#define SEND_BODY(name, dest, count, type, tag, comm, req, call)            \
    uint64_t t0 = loggp_trace_now();                                         \
    loggp_counters *c = loggp_my_counters();                                 \
    COUNT_CALL(c, name);                                                     \
    int rc;                                                                  \
    uint64_t bytes = 0;                                                      \
    if ((dest) == MPI_PROC_NULL) {                                           \
        rc = call;                                                           \
    } else {                                                                 \
        bytes = type_bytes(count, type);                                     \
        count_sent(c, bytes);                                                \
        count_if_to_self(c, dest, comm, bytes);                              \
        if (!fallback_on()) {                                                \
            loggp_self_send(dest, comm);                                     \
            rc = call;                                                       \
        } else {                                                             \
            loggp_delays d;                                                  \
            loggp_fallback_before_send(c, &d);                               \
            rc = call;                                                       \
            loggp_fallback_after_send(&d, bytes);                            \
        }                                                                    \
    }                                                                        \
    if (loggp_tracing)                                                       \
        loggp_trace_call(TRACE_P2P(name), t0, dest, tag, comm, bytes,        \
                         (req) && rc == MPI_SUCCESS ? request_key(*(MPI_Request *)(req)) : 0); \
    return rc;

LOGGP_SEND_WRAPPER(Send, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
              (buf, count, type, dest, tag, comm))
{
    SEND_BODY(Send, dest, count, type, tag, comm, NULL, pmpi.Send(buf, count, type, dest, tag, comm))
}

LOGGP_SEND_WRAPPER(Bsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
              (buf, count, type, dest, tag, comm))
{
    SEND_BODY(Bsend, dest, count, type, tag, comm, NULL, pmpi.Bsend(buf, count, type, dest, tag, comm))
}

LOGGP_SEND_WRAPPER(Ssend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
              (buf, count, type, dest, tag, comm))
{
    SEND_BODY(Ssend, dest, count, type, tag, comm, NULL, pmpi.Ssend(buf, count, type, dest, tag, comm))
}

LOGGP_SEND_WRAPPER(Rsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm),
              (buf, count, type, dest, tag, comm))
{
    SEND_BODY(Rsend, dest, count, type, tag, comm, NULL, pmpi.Rsend(buf, count, type, dest, tag, comm))
}

LOGGP_SEND_WRAPPER(Isend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req),
              (buf, count, type, dest, tag, comm, req))
{
    SEND_BODY(Isend, dest, count, type, tag, comm, req, pmpi.Isend(buf, count, type, dest, tag, comm, req))
}

LOGGP_SEND_WRAPPER(Ibsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req),
              (buf, count, type, dest, tag, comm, req))
{
    SEND_BODY(Ibsend, dest, count, type, tag, comm, req, pmpi.Ibsend(buf, count, type, dest, tag, comm, req))
}

LOGGP_SEND_WRAPPER(Issend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req),
              (buf, count, type, dest, tag, comm, req))
{
    SEND_BODY(Issend, dest, count, type, tag, comm, req, pmpi.Issend(buf, count, type, dest, tag, comm, req))
}

LOGGP_SEND_WRAPPER(Irsend, (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req),
              (buf, count, type, dest, tag, comm, req))
{
    SEND_BODY(Irsend, dest, count, type, tag, comm, req, pmpi.Irsend(buf, count, type, dest, tag, comm, req))
}

LOGGP_WRAPPER(Recv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status),
              (buf, count, type, source, tag, comm, status))
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Recv);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Recv(buf, count, type, source, tag, comm, st);
    if (rc == MPI_SUCCESS)
        loggp_received(c, st);
    if (loggp_tracing) {
        uint64_t t1 = loggp_trace_call(TRACE_P2P(Recv), t0, source, tag, comm, type_bytes(count, type), 0);
        loggp_trace_completion(TRACE_P2P(Recv), t0, t1, 0, -1, rc == MPI_SUCCESS ? st : NULL);
    }
    return rc;
}

LOGGP_WRAPPER(Irecv, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req),
              (buf, count, type, source, tag, comm, req))
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Irecv);
    uint64_t t0 = loggp_trace_now();
    int rc = pmpi.Irecv(buf, count, type, source, tag, comm, req);
    if (rc == MPI_SUCCESS)
        loggp_table_put(&loggp_requests, request_key(*req), LOGGP_REQ_RECV, 0);
    if (loggp_tracing)
        loggp_trace_call(TRACE_P2P(Irecv), t0, source, tag, comm, type_bytes(count, type),
                         rc == MPI_SUCCESS ? request_key(*req) : 0);
    return rc;
}

/* Sendrecv and Sendrecv_replace: a send (counted, delayed under the fallback
 * engine) and a receive, around one call. */
#define SENDRECV_BODY(name, dest, count, type, sendtag, call)       \
    uint64_t t0 = loggp_trace_now();                                \
    loggp_counters *c = loggp_my_counters();                        \
    COUNT_CALL(c, name);                                            \
    MPI_Status local;                                               \
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status; \
    uint64_t bytes = type_bytes(count, type);                       \
    int delaying = (dest) != MPI_PROC_NULL && fallback_on();        \
    loggp_delays d;                                                 \
    if ((dest) != MPI_PROC_NULL) {                                  \
        count_sent(c, bytes);                                       \
        count_if_to_self(c, dest, comm, bytes);                     \
        loggp_self_send(dest, comm);                                \
    }                                                               \
    if (delaying)                                                   \
        loggp_fallback_before_send(c, &d);                          \
    int rc = call;                                                  \
    if (delaying)                                                   \
        loggp_fallback_after_send(&d, bytes);                       \
    if (rc == MPI_SUCCESS)                                          \
        loggp_received(c, st);                                      \
    if (loggp_tracing) {                                            \
        uint64_t t1 = loggp_trace_call(TRACE_P2P(name), t0, dest,    \
            sendtag, comm, (dest) == MPI_PROC_NULL ? 0 : bytes, 0);  \
        loggp_trace_completion(TRACE_P2P(name), t0, t1, 0, -1,       \
                               rc == MPI_SUCCESS ? st : NULL);       \
    }                                                               \
    return rc;

LOGGP_SEND_WRAPPER(Sendrecv, (const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status),
              (sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag, comm, status))
{
    SENDRECV_BODY(Sendrecv, dest, sendcount, sendtype, sendtag,
                  pmpi.Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                recvtag, comm, st))
}

LOGGP_SEND_WRAPPER(Sendrecv_replace, (void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status),
              (buf, count, type, dest, sendtag, source, recvtag, comm, status))
{
    SENDRECV_BODY(Sendrecv_replace, dest, count, type, sendtag,
                  pmpi.Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, st))
}

/* Persistent sends remember their size and whether they go to the rank itself
 * (the start knows no comm nor dest), or that they go nowhere: MPI_PROC_NULL.
 * On the pass-through the libfabric engine still files those to oneself, so
 * that their starts pay o_s + o_r once the knobs are set (loggp_self_start). */
#define PERSISTENT_SEND_PARAMS (const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, \
                                MPI_Request *req)
#define PERSISTENT_SEND_ARGS (buf, count, type, dest, tag, comm, req)
#define PERSISTENT_SEND_INIT(name)                                                                                   \
    static __attribute__((noinline)) int counted_##name PERSISTENT_SEND_PARAMS;                                     \
    static __attribute__((noinline)) int self_filed_##name PERSISTENT_SEND_PARAMS                                   \
    {                                                                                                                \
        int rc = pmpi.name PERSISTENT_SEND_ARGS;                                                                     \
        if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL && sends_to_self(dest, comm))                                 \
            loggp_table_put(&loggp_requests, request_key(*req), LOGGP_REQ_PERSISTENT_SELF_SEND,                      \
                            type_bytes(count, type));                                                                \
        return rc;                                                                                                   \
    }                                                                                                                \
    int MPI_##name PERSISTENT_SEND_PARAMS                                                                            \
    {                                                                                                                \
        if (loggp_pass_through()) {                                                                                  \
            if (loggp_engine == ENGINE_LIBFABRIC)                                                                    \
                return self_filed_##name PERSISTENT_SEND_ARGS;                                                       \
            return pmpi.name PERSISTENT_SEND_ARGS;                                                                   \
        }                                                                                                            \
        return counted_##name PERSISTENT_SEND_ARGS;                                                                  \
    }                                                                                                                \
    static __attribute__((noinline)) int counted_##name PERSISTENT_SEND_PARAMS                                      \
    {                                                                                                                \
        uint64_t t0 = loggp_trace_now();                                                                             \
        COUNT_CALL(loggp_my_counters(), name);                                                                       \
        int rc = pmpi.name PERSISTENT_SEND_ARGS;                                                                     \
        if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL)                                                              \
            loggp_table_put(&loggp_requests, request_key(*req),                                                      \
                            sends_to_self(dest, comm) ? LOGGP_REQ_PERSISTENT_SELF_SEND : LOGGP_REQ_PERSISTENT_SEND,  \
                            type_bytes(count, type));                                                                \
        if (loggp_tracing)                                                                                           \
            loggp_trace_call(TRACE_P2P(name), t0, dest, tag, comm, type_bytes(count, type),                          \
                             rc == MPI_SUCCESS ? request_key(*req) : 0);                                             \
        return rc;                                                                                                   \
    }
PERSISTENT_SEND_INIT(Send_init)
PERSISTENT_SEND_INIT(Bsend_init)
PERSISTENT_SEND_INIT(Ssend_init)
PERSISTENT_SEND_INIT(Rsend_init)

LOGGP_WRAPPER(Recv_init, (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req),
              (buf, count, type, source, tag, comm, req))
{
    uint64_t t0 = loggp_trace_now();
    COUNT_CALL(loggp_my_counters(), Recv_init);
    int rc = pmpi.Recv_init(buf, count, type, source, tag, comm, req);
    if (rc == MPI_SUCCESS)
        loggp_table_put(&loggp_requests, request_key(*req), LOGGP_REQ_PERSISTENT_RECV, 0);
    if (loggp_tracing)
        loggp_trace_call(TRACE_P2P(Recv_init), t0, source, tag, comm, type_bytes(count, type),
                         rc == MPI_SUCCESS ? request_key(*req) : 0);
    return rc;
}

static int start_untraced(loggp_counters *c, MPI_Request *req)
{
    loggp_req_info info;
    if (!loggp_table_peek(&loggp_requests, request_key(*req), &info) || !is_persistent_send(info.kind))
        return pmpi.Start(req);
    count_sent(c, info.bytes);
    if (info.kind == LOGGP_REQ_PERSISTENT_SELF_SEND)
        count_to_self(c, info.bytes);
    if (!fallback_on()) {
        if (info.kind == LOGGP_REQ_PERSISTENT_SELF_SEND)
            loggp_self_start();
        return pmpi.Start(req);
    }
    loggp_delays d;
    loggp_fallback_before_send(c, &d);
    int rc = pmpi.Start(req);
    loggp_fallback_after_send(&d, info.bytes);
    return rc;
}

/* A start is traced as a call of its own (Startall: one per request, call MPI_Startall). */
static int start_one(loggp_counters *c, MPI_Request *req, int call)
{
    if (!loggp_tracing)
        return start_untraced(c, req);
    uint64_t t0 = loggp_now_ns();
    uint64_t key = request_key(*req);
    loggp_req_info info = {0, 0};
    loggp_table_peek(&loggp_requests, key, &info);
    int rc = start_untraced(c, req);
    loggp_trace_call(call, t0, -1, -1, MPI_COMM_NULL, is_persistent_send(info.kind) ? info.bytes : 0, key);
    return rc;
}

/* On the pass-through under the libfabric engine with a knob set: a start of
 * a persistent send to oneself pays o_s + o_r. Handles are read only under
 * that engine (never under another MPI's ABI, as LOGGP_SEND_WRAPPER). */
static int self_starts_pay(void)
{
    return __builtin_expect(loggp_live_active(), 0) && loggp_engine == ENGINE_LIBFABRIC;
}

static void self_start_passing_through(MPI_Request req)
{
    loggp_req_info info;
    if (req != MPI_REQUEST_NULL && !nothing_tracked() &&
        loggp_table_peek(&loggp_requests, request_key(req), &info) && info.kind == LOGGP_REQ_PERSISTENT_SELF_SEND)
        loggp_self_start_slow();
}

int MPI_Start(MPI_Request *req)
{
    if (loggp_pass_through()) {
        if (self_starts_pay())
            self_start_passing_through(*req);
        return pmpi.Start(req);
    }
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Start);
    return start_one(c, req, TRACE_P2P(Start));
}

/* MPI_Startall is equivalent to MPI_Start on each request in turn. */
int MPI_Startall(int count, MPI_Request reqs[])
{
    if (loggp_pass_through()) {
        if (self_starts_pay())
            for (int i = 0; i < count; i++)
                self_start_passing_through(reqs[i]);
        return pmpi.Startall(count, reqs);
    }
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Startall);
    for (int i = 0; i < count; i++) {
        int rc = start_one(c, &reqs[i], TRACE_P2P(Startall));
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

/* Frees *req, forgetting its entry in the request table first (the handle can
 * be handed out again once freed); the entry comes back if the free fails. */
static int free_forgetting(MPI_Request *req)
{
    MPI_Request before = *req;
    loggp_req_info info;
    int tracked = before != MPI_REQUEST_NULL && loggp_table_peek(&loggp_requests, request_key(before), &info);
    if (tracked)
        loggp_table_remove(&loggp_requests, request_key(before));
    int rc = pmpi.Request_free(req);
    if (rc != MPI_SUCCESS && tracked)
        loggp_table_put(&loggp_requests, request_key(before), info.kind, info.bytes);
    return rc;
}

int MPI_Request_free(MPI_Request *req)
{
    if (loggp_pass_through()) {
        /* forgets a persistent send to oneself filed on the pass-through, as below */
        if (loggp_engine != ENGINE_LIBFABRIC || nothing_tracked())
            return pmpi.Request_free(req);
        return free_forgetting(req);
    }
    uint64_t t0 = loggp_trace_now();
    COUNT_CALL(loggp_my_counters(), Request_free);
    MPI_Request before = *req;
    int rc = free_forgetting(req);
    if (loggp_tracing)
        loggp_trace_call(TRACE_P2P(Request_free), t0, -1, -1, MPI_COMM_NULL, 0, request_key(before));
    return rc;
}

LOGGP_WRAPPER(Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status),
              (source, tag, comm, status))
{
    COUNT_CALL(loggp_my_counters(), Probe);
    if (!loggp_tracing)
        return pmpi.Probe(source, tag, comm, status);
    uint64_t t0 = loggp_now_ns();
    int rc = pmpi.Probe(source, tag, comm, status);
    loggp_trace_call(TRACE_P2P(Probe), t0, source, tag, comm, 0, 0);
    return rc;
}

LOGGP_WRAPPER(Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
              (source, tag, comm, flag, status))
{
    COUNT_CALL(loggp_my_counters(), Iprobe);
    if (!loggp_tracing)
        return pmpi.Iprobe(source, tag, comm, flag, status);
    uint64_t t0 = loggp_now_ns();
    int rc = pmpi.Iprobe(source, tag, comm, flag, status);
    loggp_trace_call(TRACE_P2P(Iprobe), t0, source, tag, comm, 0, 0);
    return rc;
}

/* The PMPI layer's private header: the PMPI entry points it forwards to, the
 * engine in force, and the helpers its files share.
 *
 * Every MPI function is reached through dlsym(RTLD_NEXT): the library has no
 * link-time dependency on libmpi, so preloading it into mpiexec, shells or
 * Python leaves them untouched. */
#ifndef LOGGP_PMPI_H
#define LOGGP_PMPI_H

#include <mpi.h>

#ifdef OPEN_MPI
/* Open MPI's predefined handles are data symbols of its libmpi. Weak: the
 * library must still load where no libmpi is (mpirun, shells it is
 * preloaded into); in an MPI program they resolve to the real ones. */
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_int64_t
#pragma weak ompi_mpi_op_max
#pragma weak ompi_request_null
#endif
#include <stdint.h>
#include <string.h>

#include "live.h"
#include "profile.h"
#include "reqtable.h"
#include "trace.h"
#include "wrapped.h"

/* Nothing below is exported from libloggp.so (and calls stay direct). */
#pragma GCC visibility push(hidden)

#define LOGGP_DECLARE(name) __typeof__(&PMPI_##name) name;
extern struct loggp_pmpi_functions {
    LOGGP_P2P_FUNCTIONS(LOGGP_DECLARE)
    LOGGP_COLLECTIVES(LOGGP_DECLARE)
    LOGGP_HELPERS(LOGGP_DECLARE)
    LOGGP_COMM_FUNCTIONS(LOGGP_DECLARE)
} pmpi;
#undef LOGGP_DECLARE

enum { ENGINE_NONE, ENGINE_PMPI, ENGINE_LIBFABRIC };

/* Whether the wrappers keep books (count calls and messages for a profile,
 * track requests for the fallback engine's o_r and persistent sends). Set at
 * MPI_Init; 0 with the libfabric engine and no profile (the libfabric layer
 * needs nothing from here), so each wrapper is one predictable branch and a
 * call: profile only what a profile needs. */
extern int loggp_bookkeeping;

static inline int loggp_pass_through(void)
{
    return __builtin_expect(!loggp_bookkeeping, 1);
}
extern int loggp_engine;
extern int loggp_world_rank, loggp_world_size;

/* Exits with "loggp: MPI_Init aborted: what" (before MPI can abort the job). */
_Noreturn void loggp_die_before_init(const char *what);

/* After MPI_Init, a setting the run cannot serve (each failing rank has
 * printed its reason): if any rank failed, every rank leaves through
 * MPI_Finalize with exit status 1, so the launcher forwards every line
 * before the job ends (an abort can cut them off). Collective. */
void loggp_stop_if_any_failed(int failed);

/* folders.c: LOGGP_PROFILE's or LOGGP_TRACE's folder, NULL if unset or empty. */
const char *loggp_output_folder(const char *variable);
/* Makes dir (with missing parents) and checks it is a folder; -1 with errno set. */
int loggp_ready_folder(const char *dir);
/* After MPI_Init, every rank: can it write its profile (the folder made if
 * missing)? On failure prints why and returns -1. */
int loggp_profile_check(void);
/* Rank 0, before any rank writes: removes the profile.<rank>.json and
 * trace.<rank>.bin files an earlier run left, and the unfinished ones
 * (<name>.tmp.<pid>) of a run whose process is dead. -1 after saying why. */
int loggp_clear_earlier_runs(void);

/* run_record.c: leaves DIR/<event>.<pid> (event "init" or "finalize") in
 * LOGGP_RUN_RECORD's folder, which `loggp run` reads after the run. */
void loggp_run_record(const char *event, int rank);

/* ---- sizes ---- */

/* MPICH's own ABI spells out a builtin datatype's size in its handle and a
 * status's byte count and cancel bit in its fields: read them directly, so the
 * zero-knob path makes no extra MPI calls. Other MPIs take the portable path. */
#if defined(MPICH_VERSION) && !defined(MPI_ABI_VERSION)
#define FAST_MPICH 1
static inline int builtin_size(MPI_Datatype type, int *size)
{
    unsigned handle = (unsigned)type;
    if ((handle >> 30) != 1)
        return 0;
    *size = (int)((handle >> 8) & 0xff);
    return 1;
}
#else
#define FAST_MPICH 0
#endif

static inline uint64_t type_bytes(MPI_Count count, MPI_Datatype type)
{
    int size = 0;
#if FAST_MPICH
    if (count > 0 && builtin_size(type, &size))
        return (uint64_t)count * (uint64_t)size;
#endif
    if (count <= 0 || pmpi.Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

static inline void count_sent(loggp_counters *c, uint64_t bytes)
{
    int b = loggp_bucket(bytes);
    c->sent_msgs[b]++;
    c->sent_bytes[b] += bytes;
}

/* Whether a send to dest on comm goes to the sending rank itself. */
static inline int sends_to_self(int dest, MPI_Comm comm)
{
    /* the world's own rank, known since MPI_Init: no MPI call on every send */
    if (comm == MPI_COMM_WORLD && loggp_world_size > 0)
        return dest == loggp_world_rank;
    int me = -1, inter = 1;
    if (pmpi.Comm_rank(comm, &me) != MPI_SUCCESS || me != dest)
        return 0;
    if (pmpi.Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
        return 0; /* dest names a rank of the remote group */
    return 1;
}

/* A send to the sending rank itself never reaches the network (MPI copies
 * it): counted apart too, so the profile's models leave it out of L, g and G
 * (analysis/loggp/analysis/models.py). Only on the counted path. */
static inline void count_to_self(loggp_counters *c, uint64_t bytes)
{
    c->self_msgs++;
    c->self_bytes += bytes;
}

static inline void count_if_to_self(loggp_counters *c, int dest, MPI_Comm comm, uint64_t bytes)
{
    if (sends_to_self(dest, comm))
        count_to_self(c, bytes);
}

/* A persistent send's entry in the request table (either kind). */
static inline int is_persistent_send(int kind)
{
    return kind == LOGGP_REQ_PERSISTENT_SEND || kind == LOGGP_REQ_PERSISTENT_SELF_SEND;
}

/* Defines MPI_<name> as the pass-through and a test, and opens counted_<name>
 * (the books, not inlined): the pass-through stays a bare tail call, so the
 * zero-knob path is one branch and handles reach PMPI untouched even under
 * another MPI's ABI (inert), where they are wider than MPICH's int. */
#define LOGGP_WRAPPER(name, params, args)                      \
    static __attribute__((noinline)) int counted_##name params; \
    int MPI_##name params                                      \
    {                                                          \
        if (loggp_pass_through())                              \
            return pmpi.name args;                             \
        return counted_##name args;                            \
    }                                                          \
    static __attribute__((noinline)) int counted_##name params

/* A send wrapper (its parameters name the destination `dest` and `comm`): as
 * LOGGP_WRAPPER, but with a knob set a message to oneself pays its o_s and o_r
 * even on the pass-through (loggp_self_send). With every knob zero, or under
 * another MPI's ABI, the pass-through stays a bare tail call: under Open MPI
 * the libfabric layer loads the knobs, but the engine stays unset, and a
 * call through self_checked_ (compiled for MPICH's int handles) could cut
 * Open MPI's pointer handles to 32 bits. */
#define LOGGP_SEND_WRAPPER(name, params, args)                 \
    static __attribute__((noinline)) int counted_##name params; \
    static __attribute__((noinline)) int self_checked_##name params \
    {                                                          \
        loggp_self_send(dest, comm);                           \
        return pmpi.name args;                                 \
    }                                                          \
    int MPI_##name params                                      \
    {                                                          \
        if (loggp_pass_through()) {                            \
            if (__builtin_expect(loggp_live_active(), 0) &&    \
                loggp_engine == ENGINE_LIBFABRIC)              \
                return self_checked_##name args;               \
            return pmpi.name args;                             \
        }                                                      \
        return counted_##name args;                            \
    }                                                          \
    static __attribute__((noinline)) int counted_##name params

#define COUNT_CALL(c, name) ((c)->calls[LOGGP_FN_##name]++)

/* A call's index in a trace's name table (trace.c lists them in this order). */
#define TRACE_P2P(name) LOGGP_FN_##name
#define TRACE_COLL(name) (LOGGP_FN_COUNT + LOGGP_FN_##name)
#define LOGGP_COMM_ENUM(name) LOGGP_TRACE_COMM_##name,
enum { LOGGP_TRACED_COMM_CALLS(LOGGP_COMM_ENUM) LOGGP_TRACE_COMM_COUNT };
#undef LOGGP_COMM_ENUM
#define TRACE_COMM(name) (LOGGP_FN_COUNT + LOGGP_COLL_COUNT + LOGGP_TRACE_COMM_##name)

/* ---- the fallback engine (fallback.c) ---- */

/* Whether the fallback engine delays messages now. */
static inline int fallback_on(void)
{
    return loggp_engine == ENGINE_PMPI && loggp_live_active();
}

/* o_s and the wait for the gap the previous injection left (d: the knobs used). */
void loggp_fallback_before_send(loggp_counters *c, loggp_delays *d);
/* The injection of a bytes-long message has ended. */
void loggp_fallback_after_send(const loggp_delays *d, uint64_t bytes);
/* A receive completed with status st: count it and charge o_r. */
void loggp_received(loggp_counters *c, const MPI_Status *st);

/* Under the libfabric engine, a send to the caller's own rank: MPICH copies
 * it locally and no libfabric call sees it, so o_s and the o_r of its
 * receive (on this same CPU) are spun here, once, at the send. One load
 * while every knob is zero. */
void loggp_self_send_slow(int dest, MPI_Comm comm);
static inline void loggp_self_send(int dest, MPI_Comm comm)
{
    if (__builtin_expect(loggp_live_active(), 0) && dest >= 0)
        loggp_self_send_slow(dest, comm);
}

/* The same for the start of a persistent send filed as one to oneself. */
void loggp_self_start_slow(void);
static inline void loggp_self_start(void)
{
    if (__builtin_expect(loggp_live_active(), 0))
        loggp_self_start_slow();
}

/* ---- outstanding requests (requests.c) ---- */

/* Outstanding receives and persistent requests (persistent ones survive completion). */
extern loggp_table loggp_requests;

static inline uint64_t request_key(MPI_Request r)
{
    uint64_t key = 0;
    memcpy(&key, &r, sizeof r < sizeof key ? sizeof r : sizeof key);
    return key;
}

static inline int nothing_tracked(void)
{
    return loggp_table_empty(&loggp_requests);
}

/* Completion calls take a request's entry before the MPI library may free
 * its handle: once freed, another thread can get the same handle from a new
 * call and file its own entry under it. kind 0: not tracked. */
loggp_req_info loggp_claim(MPI_Request r);
/* A claimed request the call left active goes back (persistent ones never left). */
void loggp_unclaim(MPI_Request r, MPI_Request after, loggp_req_info info);
/* A claimed request completed with st. */
void loggp_completed(loggp_counters *c, loggp_req_info info, const MPI_Status *st);

/* ---- MPI_Init's helpers ---- */

typedef enum {
    LOGGP_MPI_OTHER,    /* an ABI of its own (the MPI 5 standard ABI, unknown): inert */
    LOGGP_MPI_MPICH,    /* the ABI this layer was built for */
    LOGGP_MPI_OPEN_MPI, /* handles are pointers: the PMPI layer is inert, the libfabric layer can serve */
} loggp_mpi_family;

/* The ABI this library is compiled for: Open MPI's mpi.h defines OPEN_MPI
 * (libloggp-ompi.so), MPICH's does not (libloggp.so). */
#ifdef OPEN_MPI
#define LOGGP_BUILT_FOR LOGGP_MPI_OPEN_MPI
#define LOGGP_LIBRARY_NAME "libloggp-ompi.so"
#else
#define LOGGP_BUILT_FOR LOGGP_MPI_MPICH
#define LOGGP_LIBRARY_NAME "libloggp.so"
#endif

/* Which ABI the MPI library underneath has, found without touching a handle;
 * name: what the library calls itself (abi.c). */
loggp_mpi_family loggp_mpi_abi_supported(char *name, size_t len);
/* Says once per job (where the launcher's rank is 0) that the library runs inert under name. */
void loggp_refuse_mpi(const char *name);
/* Is this the launcher's rank 0, or is there no launcher rank to tell? (from its environment) */
int loggp_launcher_rank_zero(void);

/* Rank 0's one banner line: engine, provider, knobs (init.c). */
void loggp_print_banner(int rank, int engine);

/* libloggp.so under Open MPI: the libfabric layer alone, without touching a
 * handle (foreign.c). Before MPI_Init: 1 if it serves (knobs loaded, layer on),
 * 0 if the library stays inert (the line is said). After: the banner, or
 * one line saying why the knobs do nothing. */
int loggp_foreign_before_init(const char *library);
void loggp_foreign_after_init(const char *library);
void loggp_foreign_finalize(void);

/* Are all ranks of this job on this node? (Hydra and Slurm tell.) */
int loggp_single_node(void);
/* Asks MPI to send every message through libfabric (route.c). */
void loggp_route_through_libfabric(void);
/* Estimates this rank's clock offset to rank 0 and hands it to the libfabric layer (clocksync.c). */
void loggp_synchronise_clocks(void);

/* Per-pair L and G from LOGGP_TOPOLOGY or the short form (topology.c):
 * classes for every rank and libfabric address, then the values on. */
void loggp_setup_topology(void);
/* What each pair got, for the profile (NULL without a topology). */
const char *loggp_topology_profile_json(void);
/* What the profile reports about that (clocksync.c). */
void loggp_clock_sync_result(loggp_profile_clock *out);

/* ---- communicator ids (comms.c) ---- */

/* The id a trace records for comm: the same on every rank of it (docs/trace-format.md). */
uint32_t loggp_comm_id(MPI_Comm comm);
/* The id of the n-th communicator with these members made on the one with id parent. */
uint32_t loggp_derive_comm_id(uint32_t parent, uint64_t n, uint64_t members);
/* Frees what the ids needed (MPI_Finalize, after the trace is written). */
void loggp_comms_finalize(void);

/* ---- collectives' byte counts (collectives.c) ---- */

uint64_t comm_size_of(MPI_Comm comm);
uint64_t sum_counts(const int *counts, MPI_Comm comm);
uint64_t alltoallw_bytes(const int *counts, const MPI_Datatype *types, MPI_Comm comm);
int is_root(int root, MPI_Comm comm);
#define IN_PLACE(buf) ((buf) == MPI_IN_PLACE)

#pragma GCC visibility pop

#endif

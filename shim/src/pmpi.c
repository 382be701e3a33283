/* libloggp.so, PMPI layer: loads the knobs at MPI_Init, profiles the
 * application's traffic, reports, and (when the libfabric layer is not in the
 * message path) applies o, g and G to point-to-point messages itself.
 *
 * Every MPI function is reached through dlsym(RTLD_NEXT): the library has no
 * link-time dependency on libmpi, so preloading it into mpiexec, shells or
 * Python leaves them untouched. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "delay.h"
#include "live.h"
#include "ofi.h"
#include "profile.h"
#include "reqtable.h"

#ifndef LOGGP_VERSION
#define LOGGP_VERSION "0.0.0"
#endif

/* PMPI functions used by the layer itself, beyond the wrapped ones. */
#define LOGGP_HELPERS(X) \
    X(Init) X(Init_thread) X(Finalize) X(Get_count) X(Type_size) X(Comm_rank) X(Comm_size) \
    X(Test_cancelled) X(Abort) X(Get_processor_name) X(Comm_dup) X(Comm_free)

#define LOGGP_DECLARE(name) __typeof__(&PMPI_##name) name;
static struct {
    LOGGP_P2P_FUNCTIONS(LOGGP_DECLARE)
    LOGGP_COLLECTIVES(LOGGP_DECLARE)
    LOGGP_HELPERS(LOGGP_DECLARE)
} real;
#undef LOGGP_DECLARE

enum { ENGINE_NONE, ENGINE_PMPI, ENGINE_LIBFABRIC };
static int engine;
static int world_rank, world_size;
static uint64_t init_ns;
static loggp_pacer pacer;

static const char *missing_symbol;

/* Outstanding receives and persistent requests (persistent ones survive completion). */
static loggp_table requests =
    LOGGP_TABLE_INIT((1 << LOGGP_REQ_PERSISTENT_SEND) | (1 << LOGGP_REQ_PERSISTENT_RECV));

/* Clock synchronisation result, for the profile. */
static struct {
    int done;
    int64_t skew_ns;   /* test-injected offset of this rank's clock */
    int64_t offset_ns; /* rank 0's clock minus this rank's, as estimated */
    int64_t rtt_ns;    /* round trip of the exchange the estimate came from */
} clock_sync;

static int resolve(void)
{
    if (real.Init)
        return 0;
#define LOGGP_RESOLVE(name)                                           \
    do {                                                              \
        void *f = dlsym(RTLD_NEXT, "PMPI_" #name);                    \
        if (!f && !missing_symbol)                                    \
            missing_symbol = "PMPI_" #name;                           \
        memcpy(&real.name, &f, sizeof f);                             \
    } while (0);
    LOGGP_P2P_FUNCTIONS(LOGGP_RESOLVE)
    LOGGP_COLLECTIVES(LOGGP_RESOLVE)
    LOGGP_HELPERS(LOGGP_RESOLVE)
#undef LOGGP_RESOLVE
    return missing_symbol ? -1 : 0;
}

static void die_before_init(const char *what)
{
    const char *rank = getenv("PMI_RANK");
    fprintf(stderr, "loggp%s%s: MPI_Init aborted: %s\n", rank ? ": rank " : "", rank ? rank : "", what);
    fflush(stderr);
    exit(1);
}

/* ---- the fallback engine ------------------------------------------------- */

static inline int fallback_on(void)
{
    return engine == ENGINE_PMPI && loggp_live_active();
}

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
    if (count <= 0 || real.Type_size(type, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint64_t)count * (uint64_t)size;
}

static inline void count_sent(loggp_counters *c, uint64_t bytes)
{
    int b = loggp_bucket(bytes);
    c->sent_msgs[b]++;
    c->sent_bytes[b] += bytes;
}

/* o_s and the wait for the gap the previous injection left. */
static void fallback_before_send(loggp_counters *c, loggp_delays *d)
{
    loggp_live_get(d);
    loggp_gap_wait w = loggp_pacer_begin(&pacer, d->o_s);
    c->injected_ns[LOGGP_INJ_OS] += d->o_s;
    c->injected_ns[LOGGP_INJ_G] += w.g_ns;
    c->injected_ns[LOGGP_INJ_GBYTE] += w.bytes_ns;
}

static void fallback_after_send(const loggp_delays *d, uint64_t bytes)
{
    loggp_pacer_done(&pacer, d->g, loggp_bytes_delay_ns(d->G_ps, bytes));
}

/* A receive completed with status st: count it and charge o_r. */
static void received(loggp_counters *c, const MPI_Status *st)
{
    if (st->MPI_SOURCE == MPI_PROC_NULL)
        return;
#if FAST_MPICH
    if (st->count_hi_and_cancelled & 1)
        return;
    uint64_t n = (uint64_t)(unsigned)st->count_lo + ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32);
#else
    int cancelled = 0;
    real.Test_cancelled(st, &cancelled);
    if (cancelled)
        return;
    int count = 0;
    if (real.Get_count(st, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED || count < 0)
        count = 0;
    uint64_t n = (uint64_t)count;
#endif
    int b = loggp_bucket(n);
    c->recv_msgs[b]++;
    c->recv_bytes[b] += n;
    if (fallback_on()) {
        loggp_delays d;
        loggp_live_get(&d);
        if (d.o_r) {
            loggp_spin_ns(d.o_r);
            c->injected_ns[LOGGP_INJ_OR] += d.o_r;
        }
    }
}

static inline uint64_t request_key(MPI_Request r)
{
    uint64_t key = 0;
    memcpy(&key, &r, sizeof r < sizeof key ? sizeof r : sizeof key);
    return key;
}

/* Completion calls take a request's entry before the MPI library may free
 * its handle: once freed, another thread can get the same handle from a new
 * call and file its own entry under it. kind 0: not tracked. */
static loggp_req_info claim(MPI_Request r)
{
    loggp_req_info info = {0, 0};
    if (r == MPI_REQUEST_NULL || !loggp_table_take(&requests, request_key(r), &info))
        info.kind = 0;
    return info;
}

/* A claimed request the call left active goes back (persistent ones never left). */
static void unclaim(MPI_Request r, MPI_Request after, loggp_req_info info)
{
    if (info.kind == LOGGP_REQ_RECV && after != MPI_REQUEST_NULL)
        loggp_table_put(&requests, request_key(r), info.kind, info.bytes);
}

/* A claimed request completed with st. */
static void completed(loggp_counters *c, loggp_req_info info, const MPI_Status *st)
{
    if (info.kind == LOGGP_REQ_RECV || info.kind == LOGGP_REQ_PERSISTENT_RECV)
        received(c, st);
}

/* ---- init and finalize ----------------------------------------------------- */

static void print_banner(void)
{
    const char *quiet = getenv("LOGGP_QUIET");
    if (world_rank != 0 || (quiet && strcmp(quiet, "0") != 0))
        return;
    loggp_knobs k;
    loggp_live_knobs(&k);
    char line[1024];
    int n = snprintf(line, sizeof line, "loggp %s: engine %s%s%s; knobs", LOGGP_VERSION,
                     engine == ENGINE_LIBFABRIC ? "libfabric, provider " : "pmpi fallback",
                     engine == ENGINE_LIBFABRIC ? loggp_ofi_provider() : "", "");
    unsigned env = loggp_live_env_mask();
    for (int i = 0; i < LOGGP_KNOB_COUNT && n < (int)sizeof line; i++) {
        char v[64];
        loggp_format_knob((loggp_knob_id)i, k.ps[i], v, sizeof v);
        n += snprintf(line + n, sizeof line - (size_t)n, " %s=%s%s", loggp_knob_table[i].name, v,
                      env & (1u << i) ? "(env)" : "");
    }
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "%s%s", loggp_live_watching() ? "; live from " : "",
                 loggp_live_watching() ? loggp_live_file() : "");
    fprintf(stderr, "%s\n", line);
    if (engine == ENGINE_PMPI)
        fprintf(stderr, "loggp: warning: the pmpi fallback engine applies o, g and G to point-to-point "
                        "messages only; L and the messages inside collectives are not delayed\n");
    fflush(stderr);
}

/* LOGGP_ENGINE: auto (default), libfabric or pmpi. */
static int wanted_engine(void)
{
    const char *e = getenv("LOGGP_ENGINE");
    if (!e || !*e || strcmp(e, "auto") == 0)
        return ENGINE_NONE;
    if (strcmp(e, "libfabric") == 0)
        return ENGINE_LIBFABRIC;
    if (strcmp(e, "pmpi") == 0)
        return ENGINE_PMPI;
    char msg[256];
    snprintf(msg, sizeof msg, "LOGGP_ENGINE=%s: expected auto, libfabric or pmpi", e);
    die_before_init(msg);
    return ENGINE_NONE;
}

/* Are all ranks of this job on this node? (Hydra and Slurm tell.) */
static int single_node(void)
{
    const char *local = getenv("MPI_LOCALNRANKS"), *world = getenv("PMI_SIZE");
    if (local && world && strcmp(local, world) == 0)
        return 1;
    const char *nodes = getenv("SLURM_NNODES");
    return nodes && strcmp(nodes, "1") == 0;
}

/* libfabric's shm provider names its region after the process id. A region
 * left in /dev/shm by a killed process whose id this process now has makes
 * the provider pick a longer name, which MPICH, assuming equal name lengths
 * across ranks, truncates: the peers then wait for a region that never
 * appears. Nothing of this process can be there yet, so what is there is
 * stale. */
static void remove_stale_shm_regions(void)
{
    DIR *dir = opendir("/dev/shm");
    if (!dir)
        return;
    char prefix[32];
    int n = snprintf(prefix, sizeof prefix, "%ld:", (long)getpid());
    struct dirent *entry;
    while ((entry = readdir(dir))) {
        struct stat st;
        if (strncmp(entry->d_name, prefix, (size_t)n) != 0 ||
            fstatat(dirfd(dir), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != getuid())
            continue;
        unlinkat(dirfd(dir), entry->d_name, 0);
    }
    closedir(dir);
}

/* For the libfabric engine every message must cross libfabric, as in a
 * one-process-per-node cluster: ask MPICH for its ofi netmod with no shared
 * memory shortcut, and on one node the shm provider. Settings the user made
 * stay; LOGGP_ROUTE=0 turns this off. Only an MPI built on libfabric gets it. */
static void route_through_libfabric(void)
{
    const char *route = getenv("LOGGP_ROUTE");
    if (route && strcmp(route, "0") != 0 && strcmp(route, "1") != 0) {
        char msg[160];
        snprintf(msg, sizeof msg, "LOGGP_ROUTE=%s: expected 0 or 1", route);
        die_before_init(msg);
    }
    if ((route && strcmp(route, "0") == 0) || !dlsym(RTLD_DEFAULT, "fi_getinfo"))
        return;
    remove_stale_shm_regions();
    setenv("MPIR_CVAR_CH4_NETMOD", "ofi", 0);
    setenv("MPIR_CVAR_NOLOCAL", "1", 0);
    if (!getenv("FI_PROVIDER") && single_node())
        setenv("FI_PROVIDER", "shm", 0);
}

static void before_init(void)
{
    if (resolve() != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "the MPI library lacks %s", missing_symbol);
        die_before_init(msg);
    }
    int wanted = wanted_engine();
    char err[1024];
    if (loggp_live_start(err, sizeof err) != 0)
        die_before_init(err);
    loggp_ofi_enable(wanted != ENGINE_PMPI);
    if (wanted != ENGINE_PMPI)
        route_through_libfabric();
    engine = wanted;
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
    if (*end || rank < 0) {
        if (world_rank == 0)
            fprintf(stderr, "loggp: LOGGP_TEST_CLOCK_SKEW=%s: expected RANK:NANOSECONDS\n", spec);
        real.Abort(MPI_COMM_WORLD, 1);
    }
    return rank == world_rank ? (int64_t)ns : 0;
}

/* Estimates each rank's clock offset to rank 0 from the exchange with the
 * smallest round trip (the SKaMPI/ReproMPI method), so that send stamps read
 * in one time base across hosts. */
static void synchronise_clocks(void)
{
    enum { EXCHANGES = 16, TAG = 1 };
    clock_sync.skew_ns = injected_skew();
    const char *sync = getenv("LOGGP_CLOCK_SYNC");
    int enabled = !sync || strcmp(sync, "0") != 0;
    if (enabled && world_size > 1) {
        MPI_Comm comm;
        real.Comm_dup(MPI_COMM_WORLD, &comm);
        int64_t best_rtt = INT64_MAX, best_offset = 0;
        for (int peer = 1; peer < world_size; peer++) {
            if (world_rank != 0 && world_rank != peer)
                continue;
            for (int k = 0; k < EXCHANGES; k++) {
                int64_t t1, t0, t2;
                if (world_rank == 0) {
                    real.Recv(&t1, 1, MPI_INT64_T, peer, TAG, comm, MPI_STATUS_IGNORE);
                    t0 = (int64_t)loggp_now_ns() + clock_sync.skew_ns;
                    real.Send(&t0, 1, MPI_INT64_T, peer, TAG, comm);
                } else {
                    t1 = (int64_t)loggp_now_ns() + clock_sync.skew_ns;
                    real.Send(&t1, 1, MPI_INT64_T, 0, TAG, comm);
                    real.Recv(&t0, 1, MPI_INT64_T, 0, TAG, comm, MPI_STATUS_IGNORE);
                    t2 = (int64_t)loggp_now_ns() + clock_sync.skew_ns;
                    if (t2 - t1 < best_rtt) {
                        best_rtt = t2 - t1;
                        best_offset = t0 - (t1 + t2) / 2;
                    }
                }
            }
        }
        real.Comm_free(&comm);
        clock_sync.done = 1;
        clock_sync.offset_ns = world_rank ? best_offset : 0;
        clock_sync.rtt_ns = world_rank ? best_rtt : 0;
    }
    /* One host: CLOCK_MONOTONIC is shared, so the true offset is exactly 0 and
     * the estimate (kept in the profile) would only add its own error. */
    int shared = single_node() && !getenv("LOGGP_TEST_CLOCK_SKEW");
    loggp_ofi_set_clock(shared ? 0 : clock_sync.skew_ns + clock_sync.offset_ns, shared);
}

static void after_init(void)
{
    init_ns = loggp_now_ns();
    real.Comm_rank(MPI_COMM_WORLD, &world_rank);
    real.Comm_size(MPI_COMM_WORLD, &world_size);
    int ofi = loggp_ofi_active();
    if (engine == ENGINE_LIBFABRIC && !ofi) {
        if (world_rank == 0)
            fprintf(stderr, "loggp: LOGGP_ENGINE=libfabric, but MPI did not open a libfabric endpoint "
                            "(with MPICH set MPIR_CVAR_CH4_NETMOD=ofi, or use `loggp run`)\n");
        real.Abort(MPI_COMM_WORLD, 1);
    }
    engine = ofi ? ENGINE_LIBFABRIC : ENGINE_PMPI;
    if (engine == ENGINE_PMPI)
        loggp_ofi_enable(0);
    else
        synchronise_clocks();
    print_banner();
}

int MPI_Init(int *argc, char ***argv)
{
    before_init();
    int rc = real.Init(argc, argv);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    before_init();
    int rc = real.Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS)
        after_init();
    return rc;
}

static void json_buckets(FILE *f, const uint64_t *msgs, const uint64_t *bytes)
{
    uint64_t total_msgs = 0, total_bytes = 0;
    for (int b = 0; b < LOGGP_BUCKETS; b++) {
        total_msgs += msgs[b];
        total_bytes += bytes[b];
    }
    fprintf(f, "{\"messages\": %llu, \"bytes\": %llu, \"by_size\": [", (unsigned long long)total_msgs,
            (unsigned long long)total_bytes);
    int first = 1;
    for (int b = 0; b < LOGGP_BUCKETS; b++) {
        if (!msgs[b])
            continue;
        uint64_t lo = b ? UINT64_C(1) << (b - 1) : 0;
        uint64_t hi = b ? (b == 64 ? UINT64_MAX : (UINT64_C(1) << b) - 1) : 0;
        fprintf(f, "%s{\"min_bytes\": %llu, \"max_bytes\": %llu, \"messages\": %llu, \"bytes\": %llu}",
                first ? "" : ", ", (unsigned long long)lo, (unsigned long long)hi,
                (unsigned long long)msgs[b], (unsigned long long)bytes[b]);
        first = 0;
    }
    fprintf(f, "]}");
}

static int make_dirs(const char *dir)
{
    char path[PATH_MAX];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path)
        return -1;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

static void write_profile(double wall_seconds)
{
    const char *dir = getenv("LOGGP_PROFILE");
    if (!dir || !*dir)
        return;
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (make_dirs(dir) != 0 || snprintf(path, sizeof path, "%s/profile.%d.json", dir, world_rank) >= (int)sizeof path) {
        fprintf(stderr, "loggp: rank %d: cannot write the profile into LOGGP_PROFILE=%s: %s\n", world_rank, dir,
                strerror(errno));
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "loggp: rank %d: cannot write %s: %s\n", world_rank, tmp, strerror(errno));
        return;
    }
    loggp_counters sum;
    loggp_counters_sum(&sum);
    loggp_knobs k;
    loggp_live_knobs(&k);
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int host_len = 0;
    real.Get_processor_name(host, &host_len);
    fprintf(f, "{\"loggp_version\": \"%s\", \"rank\": %d, \"size\": %d, \"host\": \"", LOGGP_VERSION, world_rank,
            world_size);
    for (const char *p = host; *p; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            fputc(*p, f);
    fprintf(f, "\", \"engine\": \"%s%s\",\n \"knobs_ns\": {",
            engine == ENGINE_LIBFABRIC ? "libfabric:" : "pmpi", engine == ENGINE_LIBFABRIC ? loggp_ofi_provider() : "");
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char ns[48];
        loggp_format_ns(k.ps[i], ns, sizeof ns);
        fprintf(f, "%s\"%s\": %s", i ? ", " : "", i == LOGGP_KNOB_GAP_PER_BYTE ? "G_per_byte" : loggp_knob_table[i].name,
                ns);
    }
    fprintf(f, "},\n \"wall_seconds\": %.9f,\n \"sent\": ", wall_seconds);
    json_buckets(f, sum.sent_msgs, sum.sent_bytes);
    fprintf(f, ",\n \"received\": ");
    json_buckets(f, sum.recv_msgs, sum.recv_bytes);
    fprintf(f, ",\n \"calls\": {");
    int first = 1;
    for (int i = 0; i < LOGGP_FN_COUNT; i++) {
        if (!sum.calls[i])
            continue;
        fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", loggp_fn_names[i], (unsigned long long)sum.calls[i]);
        first = 0;
    }
    fprintf(f, "},\n \"collectives\": {");
    first = 1;
    for (int i = 0; i < LOGGP_COLL_COUNT; i++) {
        if (!sum.coll_calls[i])
            continue;
        fprintf(f, "%s\"%s\": {\"calls\": %llu, \"bytes\": %llu}", first ? "" : ", ", loggp_coll_names[i],
                (unsigned long long)sum.coll_calls[i], (unsigned long long)sum.coll_bytes[i]);
        first = 0;
    }
    fprintf(f, "},\n \"clock\": {\"synchronised\": %s, \"offset_ns\": %lld, \"sync_rtt_ns\": %lld, "
               "\"injected_skew_ns\": %lld", clock_sync.done ? "true" : "false", (long long)clock_sync.offset_ns,
            (long long)clock_sync.rtt_ns, (long long)clock_sync.skew_ns);
    static const char *const inj[LOGGP_INJ_COUNT] = {"o_s", "o_r", "g", "G", "L"};
    fprintf(f, "},\n \"injected_ns\": {");
    for (int i = 0; i < LOGGP_INJ_COUNT; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", inj[i], (unsigned long long)sum.injected_ns[i]);
    fprintf(f, "}}\n");
    int bad = ferror(f);
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "loggp: rank %d: cannot write %s: %s\n", world_rank, path, strerror(errno));
        unlink(tmp);
    }
}

int MPI_Finalize(void)
{
    if (!real.Finalize && resolve() != 0)
        return MPI_ERR_OTHER;
    double wall = init_ns ? (double)(loggp_now_ns() - init_ns) * 1e-9 : 0.0;
    loggp_live_stop();
    write_profile(wall);
    /* A freed request's completion may still be held, and MPI_Finalize need
     * not poll again: hand everything out and drive progress until it is out. */
    loggp_ofi_flush();
    uint64_t give_up = loggp_now_ns() + 1000000000u;
    while (loggp_ofi_held() > 0 && loggp_now_ns() < give_up) {
        int flag;
        real.Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    return real.Finalize();
}

/* ---- point-to-point ------------------------------------------------------ */

#define COUNT_CALL(c, name) ((c)->calls[LOGGP_FN_##name]++)

/* A send call: count it, and under the fallback engine wrap it in o_s and the pacer. */
#define SEND_BODY(name, dest, count, type, call)                   \
    loggp_counters *c = loggp_my_counters();                       \
    COUNT_CALL(c, name);                                           \
    if ((dest) == MPI_PROC_NULL)                                   \
        return call;                                               \
    uint64_t bytes = type_bytes(count, type);                      \
    count_sent(c, bytes);                                          \
    if (!fallback_on())                                            \
        return call;                                               \
    loggp_delays d;                                                \
    fallback_before_send(c, &d);                                   \
    int rc = call;                                                 \
    fallback_after_send(&d, bytes);                                \
    return rc;

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_BODY(Send, dest, count, type, real.Send(buf, count, type, dest, tag, comm))
}

int MPI_Bsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_BODY(Bsend, dest, count, type, real.Bsend(buf, count, type, dest, tag, comm))
}

int MPI_Ssend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_BODY(Ssend, dest, count, type, real.Ssend(buf, count, type, dest, tag, comm))
}

int MPI_Rsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    SEND_BODY(Rsend, dest, count, type, real.Rsend(buf, count, type, dest, tag, comm))
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    SEND_BODY(Isend, dest, count, type, real.Isend(buf, count, type, dest, tag, comm, req))
}

int MPI_Ibsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    SEND_BODY(Ibsend, dest, count, type, real.Ibsend(buf, count, type, dest, tag, comm, req))
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    SEND_BODY(Issend, dest, count, type, real.Issend(buf, count, type, dest, tag, comm, req))
}

int MPI_Irsend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *req)
{
    SEND_BODY(Irsend, dest, count, type, real.Irsend(buf, count, type, dest, tag, comm, req))
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Recv);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = real.Recv(buf, count, type, source, tag, comm, st);
    if (rc == MPI_SUCCESS)
        received(c, st);
    return rc;
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Irecv);
    int rc = real.Irecv(buf, count, type, source, tag, comm, req);
    if (rc == MPI_SUCCESS)
        loggp_table_put(&requests, request_key(*req), LOGGP_REQ_RECV, 0);
    return rc;
}

/* Sendrecv and Sendrecv_replace: a send (counted, delayed under the fallback
 * engine) and a receive, around one call. */
#define SENDRECV_BODY(name, dest, count, type, call)                        \
    loggp_counters *c = loggp_my_counters();                                \
    COUNT_CALL(c, name);                                                    \
    MPI_Status local;                                                       \
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;         \
    uint64_t bytes = type_bytes(count, type);                               \
    int delaying = (dest) != MPI_PROC_NULL && fallback_on();                \
    loggp_delays d;                                                         \
    if ((dest) != MPI_PROC_NULL)                                            \
        count_sent(c, bytes);                                               \
    if (delaying)                                                           \
        fallback_before_send(c, &d);                                        \
    int rc = call;                                                          \
    if (delaying)                                                           \
        fallback_after_send(&d, bytes);                                     \
    if (rc == MPI_SUCCESS)                                                  \
        received(c, st);                                                    \
    return rc;

int MPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    SENDRECV_BODY(Sendrecv, dest, sendcount, sendtype,
                  real.Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source,
                                recvtag, comm, st))
}

int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int sendtag, int source, int recvtag,
                         MPI_Comm comm, MPI_Status *status)
{
    SENDRECV_BODY(Sendrecv_replace, dest, count, type,
                  real.Sendrecv_replace(buf, count, type, dest, sendtag, source, recvtag, comm, st))
}

/* Persistent sends remember their size (or that they go nowhere: MPI_PROC_NULL). */
#define PERSISTENT_SEND_INIT(name)                                                                         \
    int MPI_##name(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,       \
                   MPI_Request *req)                                                                       \
    {                                                                                                      \
        COUNT_CALL(loggp_my_counters(), name);                                                             \
        int rc = real.name(buf, count, type, dest, tag, comm, req);                                       \
        if (rc == MPI_SUCCESS && dest != MPI_PROC_NULL)                                                    \
            loggp_table_put(&requests, request_key(*req), LOGGP_REQ_PERSISTENT_SEND, type_bytes(count, type));   \
        return rc;                                                                                         \
    }
PERSISTENT_SEND_INIT(Send_init)
PERSISTENT_SEND_INIT(Bsend_init)
PERSISTENT_SEND_INIT(Ssend_init)
PERSISTENT_SEND_INIT(Rsend_init)

int MPI_Recv_init(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *req)
{
    COUNT_CALL(loggp_my_counters(), Recv_init);
    int rc = real.Recv_init(buf, count, type, source, tag, comm, req);
    if (rc == MPI_SUCCESS)
        loggp_table_put(&requests, request_key(*req), LOGGP_REQ_PERSISTENT_RECV, 0);
    return rc;
}

static int start_one(loggp_counters *c, MPI_Request *req)
{
    loggp_req_info info;
    if (!loggp_table_peek(&requests, request_key(*req), &info) || info.kind != LOGGP_REQ_PERSISTENT_SEND)
        return real.Start(req);
    count_sent(c, info.bytes);
    if (!fallback_on())
        return real.Start(req);
    loggp_delays d;
    fallback_before_send(c, &d);
    int rc = real.Start(req);
    fallback_after_send(&d, info.bytes);
    return rc;
}

int MPI_Start(MPI_Request *req)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Start);
    return start_one(c, req);
}

/* MPI_Startall is equivalent to MPI_Start on each request in turn. */
int MPI_Startall(int count, MPI_Request reqs[])
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Startall);
    for (int i = 0; i < count; i++) {
        int rc = start_one(c, &reqs[i]);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int MPI_Request_free(MPI_Request *req)
{
    COUNT_CALL(loggp_my_counters(), Request_free);
    /* forgotten before the handle is freed and can be handed out again */
    MPI_Request before = *req;
    loggp_req_info info;
    int tracked = before != MPI_REQUEST_NULL && loggp_table_peek(&requests, request_key(before), &info);
    if (tracked)
        loggp_table_remove(&requests, request_key(before));
    int rc = real.Request_free(req);
    if (rc != MPI_SUCCESS && tracked)
        loggp_table_put(&requests, request_key(before), info.kind, info.bytes);
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    COUNT_CALL(loggp_my_counters(), Probe);
    return real.Probe(source, tag, comm, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    COUNT_CALL(loggp_my_counters(), Iprobe);
    return real.Iprobe(source, tag, comm, flag, status);
}

/* ---- completion ---------------------------------------------------------- */

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
        s->infos[i] = claim(reqs[i]);
    }
    return 0;
}

static void scratch_close(completion_scratch *s)
{
    for (int i = 0; i < s->count; i++)
        unclaim(s->before[i], s->reqs[i], s->infos[i]);
    if (s->heap & 1) {
        free(s->before);
        free(s->infos);
    }
    if (s->heap & 2)
        free(s->stats);
}

static int status_ok(int rc, const MPI_Status *st)
{
    return rc == MPI_SUCCESS || (rc == MPI_ERR_IN_STATUS && st->MPI_ERROR == MPI_SUCCESS);
}

static inline int nothing_tracked(void)
{
    return loggp_table_empty(&requests);
}

int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Wait);
    if (nothing_tracked())
        return real.Wait(req, status);
    MPI_Request before = *req;
    loggp_req_info info = claim(before);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = real.Wait(req, st);
    if (rc == MPI_SUCCESS)
        completed(c, info, st);
    unclaim(before, *req, info);
    return rc;
}

int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Test);
    if (nothing_tracked())
        return real.Test(req, flag, status);
    MPI_Request before = *req;
    loggp_req_info info = claim(before);
    MPI_Status local;
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &local : status;
    int rc = real.Test(req, flag, st);
    if (rc == MPI_SUCCESS && *flag)
        completed(c, info, st);
    unclaim(before, *req, info);
    return rc;
}

int MPI_Waitany(int count, MPI_Request reqs[], int *index, MPI_Status *status)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Waitany);
    completion_scratch s;
    if (nothing_tracked() || scratch_open(&s, count, reqs, MPI_STATUSES_IGNORE) != 0)
        return real.Waitany(count, reqs, index, status);
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &s.small_stats[0] : status;
    int rc = real.Waitany(count, reqs, index, st);
    if (rc == MPI_SUCCESS && *index != MPI_UNDEFINED)
        completed(c, s.infos[*index], st);
    scratch_close(&s);
    return rc;
}

int MPI_Testany(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Testany);
    completion_scratch s;
    if (nothing_tracked() || scratch_open(&s, count, reqs, MPI_STATUSES_IGNORE) != 0)
        return real.Testany(count, reqs, index, flag, status);
    MPI_Status *st = status == MPI_STATUS_IGNORE ? &s.small_stats[0] : status;
    int rc = real.Testany(count, reqs, index, flag, st);
    if (rc == MPI_SUCCESS && *flag && *index != MPI_UNDEFINED)
        completed(c, s.infos[*index], st);
    scratch_close(&s);
    return rc;
}

int MPI_Waitall(int count, MPI_Request reqs[], MPI_Status stats[])
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Waitall);
    completion_scratch s;
    if (nothing_tracked() || scratch_open(&s, count, reqs, stats) != 0)
        return real.Waitall(count, reqs, stats);
    int rc = real.Waitall(count, reqs, s.stats);
    for (int i = 0; i < count && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS); i++)
        if (status_ok(rc, &s.stats[i]))
            completed(c, s.infos[i], &s.stats[i]);
    scratch_close(&s);
    return rc;
}

int MPI_Testall(int count, MPI_Request reqs[], int *flag, MPI_Status stats[])
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Testall);
    completion_scratch s;
    if (nothing_tracked() || scratch_open(&s, count, reqs, stats) != 0)
        return real.Testall(count, reqs, flag, stats);
    int rc = real.Testall(count, reqs, flag, s.stats);
    for (int i = 0; i < count && *flag && (rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS); i++)
        if (status_ok(rc, &s.stats[i]))
            completed(c, s.infos[i], &s.stats[i]);
    scratch_close(&s);
    return rc;
}

/* After Waitsome/Testsome: account for each request that completed. */
static int some_completed(loggp_counters *c, int rc, int outcount, const int *indices, completion_scratch *s)
{
    if ((rc == MPI_SUCCESS || rc == MPI_ERR_IN_STATUS) && outcount != MPI_UNDEFINED)
        for (int k = 0; k < outcount; k++)
            if (status_ok(rc, &s->stats[k]))
                completed(c, s->infos[indices[k]], &s->stats[k]);
    scratch_close(s);
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status stats[])
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Waitsome);
    completion_scratch s;
    if (nothing_tracked() || scratch_open(&s, incount, reqs, stats) != 0)
        return real.Waitsome(incount, reqs, outcount, indices, stats);
    int rc = real.Waitsome(incount, reqs, outcount, indices, s.stats);
    return some_completed(c, rc, *outcount, indices, &s);
}

int MPI_Testsome(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status stats[])
{
    loggp_counters *c = loggp_my_counters();
    COUNT_CALL(c, Testsome);
    completion_scratch s;
    if (nothing_tracked() || scratch_open(&s, incount, reqs, stats) != 0)
        return real.Testsome(incount, reqs, outcount, indices, stats);
    int rc = real.Testsome(incount, reqs, outcount, indices, s.stats);
    return some_completed(c, rc, *outcount, indices, &s);
}

/* ---- collectives: counted (calls, and this rank's send payload) ---------- */

static uint64_t comm_size_of(MPI_Comm comm)
{
    int n = 0;
    real.Comm_size(comm, &n);
    return n > 0 ? (uint64_t)n : 0;
}

static uint64_t sum_counts(const int *counts, MPI_Comm comm)
{
    uint64_t n = comm_size_of(comm), total = 0;
    for (uint64_t i = 0; counts && i < n; i++)
        total += counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return total;
}

static uint64_t alltoallw_bytes(const int *counts, const MPI_Datatype *types, MPI_Comm comm)
{
    uint64_t n = comm_size_of(comm), total = 0;
    for (uint64_t i = 0; counts && types && i < n; i++)
        total += type_bytes(counts[i], types[i]);
    return total;
}

static int is_root(int root, MPI_Comm comm)
{
    int rank = -1;
    real.Comm_rank(comm, &rank);
    return rank == root;
}

#define IN_PLACE(buf) ((buf) == MPI_IN_PLACE)

#define COLLECTIVE(name, params, args, bytes_expr)                           \
    int MPI_##name params                                                    \
    {                                                                        \
        loggp_counters *c = loggp_my_counters();                             \
        c->coll_calls[LOGGP_FN_##name]++;                                    \
        c->coll_bytes[LOGGP_FN_##name] += (bytes_expr);                      \
        return real.name args;                                               \
    }

COLLECTIVE(Barrier, (MPI_Comm comm), (comm), 0)
COLLECTIVE(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm), (buf, count, type, root, comm),
           type_bytes(count, type))
COLLECTIVE(Reduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm),
           (sendbuf, recvbuf, count, type, op, root, comm), type_bytes(count, type))
COLLECTIVE(Allreduce, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
           (sendbuf, recvbuf, count, type, op, comm), type_bytes(count, type))
COLLECTIVE(Scan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
           (sendbuf, recvbuf, count, type, op, comm), type_bytes(count, type))
COLLECTIVE(Exscan, (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
           (sendbuf, recvbuf, count, type, op, comm), type_bytes(count, type))
COLLECTIVE(Gather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
           IN_PLACE(sendbuf) ? type_bytes(recvcount, recvtype) : type_bytes(sendcount, sendtype))
COLLECTIVE(Gatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
            const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm),
           IN_PLACE(sendbuf) ? 0 : type_bytes(sendcount, sendtype))
COLLECTIVE(Scatter,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm),
           is_root(root, comm) ? type_bytes(sendcount, sendtype) * comm_size_of(comm) : 0)
COLLECTIVE(Scatterv,
           (const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf,
            int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm),
           (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm),
           is_root(root, comm) ? type_bytes((MPI_Count)sum_counts(sendcounts, comm), sendtype) : 0)
COLLECTIVE(Allgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, MPI_Comm comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
           IN_PLACE(sendbuf) ? type_bytes(recvcount, recvtype) : type_bytes(sendcount, sendtype))
COLLECTIVE(Allgatherv,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
            const int displs[], MPI_Datatype recvtype, MPI_Comm comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm),
           IN_PLACE(sendbuf) ? 0 : type_bytes(sendcount, sendtype))
COLLECTIVE(Alltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, MPI_Comm comm),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm),
           (IN_PLACE(sendbuf) ? type_bytes(recvcount, recvtype) : type_bytes(sendcount, sendtype)) *
               comm_size_of(comm))
COLLECTIVE(Alltoallv,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
            const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm),
           (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm),
           IN_PLACE(sendbuf) ? type_bytes((MPI_Count)sum_counts(recvcounts, comm), recvtype)
                             : type_bytes((MPI_Count)sum_counts(sendcounts, comm), sendtype))
COLLECTIVE(Alltoallw,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[],
            void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[],
            MPI_Comm comm),
           (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm),
           IN_PLACE(sendbuf) ? 0 : alltoallw_bytes(sendcounts, sendtypes, comm))
COLLECTIVE(Reduce_scatter,
           (const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op, MPI_Comm comm),
           (sendbuf, recvbuf, recvcounts, type, op, comm), type_bytes((MPI_Count)sum_counts(recvcounts, comm), type))
COLLECTIVE(Reduce_scatter_block,
           (const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
           (sendbuf, recvbuf, recvcount, type, op, comm), type_bytes(recvcount, type) * comm_size_of(comm))
COLLECTIVE(Ibarrier, (MPI_Comm comm, MPI_Request *req), (comm, req), 0)
COLLECTIVE(Ibcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req),
           (buf, count, type, root, comm, req), type_bytes(count, type))
COLLECTIVE(Ireduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
            MPI_Request *req),
           (sendbuf, recvbuf, count, type, op, root, comm, req), type_bytes(count, type))
COLLECTIVE(Iallreduce,
           (const void *sendbuf, void *recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
            MPI_Request *req),
           (sendbuf, recvbuf, count, type, op, comm, req), type_bytes(count, type))
COLLECTIVE(Igather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req),
           IN_PLACE(sendbuf) ? type_bytes(recvcount, recvtype) : type_bytes(sendcount, sendtype))
COLLECTIVE(Iscatter,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *req),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, req),
           is_root(root, comm) ? type_bytes(sendcount, sendtype) * comm_size_of(comm) : 0)
COLLECTIVE(Iallgather,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req),
           IN_PLACE(sendbuf) ? type_bytes(recvcount, recvtype) : type_bytes(sendcount, sendtype))
COLLECTIVE(Ialltoall,
           (const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount,
            MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req),
           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, req),
           (IN_PLACE(sendbuf) ? type_bytes(recvcount, recvtype) : type_bytes(sendcount, sendtype)) *
               comm_size_of(comm))
COLLECTIVE(Ialltoallv,
           (const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
            const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *req),
           (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, req),
           IN_PLACE(sendbuf) ? type_bytes((MPI_Count)sum_counts(recvcounts, comm), recvtype)
                             : type_bytes((MPI_Count)sum_counts(sendcounts, comm), sendtype))

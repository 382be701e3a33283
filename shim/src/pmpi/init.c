/* libloggp.so, PMPI layer: MPI_Init loads the knobs, picks the engine (the
 * libfabric layer when MPI's messages cross libfabric, else the fallback
 * engine here), prints the banner, checks the profile's folder and opens the
 * trace (folders.c); MPI_Finalize writes the profile and the trace. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "jitter.h"
#include "topology_live.h"
#include "ofi.h"
#include "pmpi.h"
#include "region.h"
#include "runenv.h"

#ifndef LOGGP_VERSION
#define LOGGP_VERSION "0.0.0"
#endif

struct loggp_pmpi_functions pmpi;
int loggp_engine;
int loggp_bookkeeping;
int loggp_world_rank, loggp_world_size;

static uint64_t init_ns;
static int inert;   /* not an MPI of the ABI this layer was built for: pass everything through */
static int foreign; /* inert, but the libfabric layer serves (Open MPI) */
static char library[256];

/* LOGGP_PROFILE: the folder to write profile.<rank>.json into, or NULL (unset or empty: no profile). */
static const char *profile_dir(void)
{
    return loggp_output_folder("LOGGP_PROFILE");
}

static const char *missing_symbol;

static int resolve(void)
{
    if (pmpi.Init)
        return 0;
#define LOGGP_RESOLVE(name)                        \
    do {                                           \
        void *f = dlsym(RTLD_NEXT, "PMPI_" #name); \
        if (!f && !missing_symbol)                 \
            missing_symbol = "PMPI_" #name;        \
        memcpy(&pmpi.name, &f, sizeof f);          \
    } while (0);
    LOGGP_P2P_FUNCTIONS(LOGGP_RESOLVE)
    LOGGP_COLLECTIVES(LOGGP_RESOLVE)
    LOGGP_HELPERS(LOGGP_RESOLVE)
#undef LOGGP_RESOLVE
    /* a program calls only those its MPI has */
#define LOGGP_RESOLVE_PRESENT(name)                \
    do {                                           \
        void *f = dlsym(RTLD_NEXT, "PMPI_" #name); \
        memcpy(&pmpi.name, &f, sizeof f);          \
    } while (0);
    LOGGP_COMM_FUNCTIONS(LOGGP_RESOLVE_PRESENT)
#undef LOGGP_RESOLVE_PRESENT
    return missing_symbol ? -1 : 0;
}

void loggp_die_before_init(const char *what)
{
    const char *rank = getenv("PMI_RANK");
    fprintf(stderr, "loggp%s%s: MPI_Init aborted: %s\n", rank ? ": rank " : "", rank ? rank : "", what);
    fflush(stderr);
    exit(1);
}

/* What the fallback engine was asked for but cannot apply: "L=50us, per-pair
 * L and G, L jitter"; empty when nothing. */
static void not_applied_by_fallback(const loggp_knobs *k, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (k->ps[LOGGP_KNOB_LATENCY]) {
        char v[64];
        loggp_format_knob(LOGGP_KNOB_LATENCY, k->ps[LOGGP_KNOB_LATENCY], v, sizeof v);
        used += (size_t)snprintf(buf, len, "L=%s", v);
    }
    const char *more[] = {loggp_topology_configured() ? "per-pair L and G" : NULL,
                          loggp_jitter_L_on ? "L jitter" : NULL, loggp_jitter_o_on ? "o jitter" : NULL};
    for (size_t i = 0; i < sizeof more / sizeof more[0] && used < len; i++)
        if (more[i])
            used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", more[i]);
}

void loggp_print_banner(int rank, int engine)
{
    if (rank != 0)
        return;
    loggp_knobs k;
    loggp_live_wanted(&k);
    int fallback = engine == ENGINE_PMPI;
    char missing[256] = "";
    if (fallback)
        not_applied_by_fallback(&k, missing, sizeof missing);
    int quiet = 0;
    loggp_env_switch("LOGGP_QUIET", &quiet, NULL, 0); /* checked in before_init */
    if (!quiet) {
        char line[1024];
        int n = snprintf(line, sizeof line, "loggp %s: engine %s%s; knobs", LOGGP_VERSION,
                         fallback ? "pmpi fallback" : "libfabric, provider ", fallback ? "" : loggp_ofi_provider());
        unsigned env = loggp_live_env_mask();
        for (int i = 0; i < LOGGP_KNOB_COUNT && n < (int)sizeof line; i++) {
            char v[64];
            loggp_format_knob((loggp_knob_id)i, k.ps[i], v, sizeof v);
            int off = fallback && i == LOGGP_KNOB_LATENCY && k.ps[i];
            n += snprintf(line + n, sizeof line - (size_t)n, " %s=%s%s", loggp_knob_table[i].name, v,
                          off ? (env & (1u << i) ? "(env, not applied)" : "(not applied)")
                              : env & (1u << i) ? "(env)" : "");
        }
        char jitter[256] = "", pairs[256] = "";
        if (!fallback) { /* the fallback applies neither: the warning below names them */
            loggp_jitter_describe(jitter, sizeof jitter);
            loggp_topology_describe(pairs, sizeof pairs);
        }
        if (n < (int)sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", jitter, pairs);
        if (n < (int)sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", loggp_live_scoped_to_kernel()
                          ? " (inside the kernel region only: loggp_hint IN_KERNEL or MPI_Pcontrol)" : "",
                          loggp_live_scoped_to_kernel() && loggp_live_outside_armed()
                          ? " (outside it armed: each knob set at its smallest step)" : "");
        if (n < (int)sizeof line)
            snprintf(line + n, sizeof line - (size_t)n, "%s%s", loggp_live_watching() ? "; live from " : "",
                     loggp_live_watching() ? loggp_live_file() : "");
        fprintf(stderr, "%s\n", line);
        if (fallback && !missing[0])
            fprintf(stderr, "loggp: warning: the pmpi fallback engine applies o, g and G to point-to-point "
                            "messages only; L and the messages inside collectives are not delayed\n");
    }
    /* Asked for and silently absent would be a wrong result: said even when quiet. */
    const char *engine_env = getenv("LOGGP_ENGINE");
    if (missing[0] && engine_env && strcmp(engine_env, "pmpi") == 0)
        fprintf(stderr, "loggp: warning: NOT APPLIED: %s. The pmpi fallback engine (LOGGP_ENGINE=pmpi) "
                        "applies o, g and G to point-to-point messages only\n", missing);
    else if (missing[0])
        fprintf(stderr, "loggp: warning: NOT APPLIED: %s. MPI opened no libfabric endpoint, so the pmpi "
                        "fallback engine runs: it applies o, g and G to point-to-point messages only (%s; "
                        "docs/other-mpis.md)\n", missing, LOGGP_BUILT_FOR == LOGGP_MPI_OPEN_MPI
                            ? "start Open MPI with mpirun --mca pml cm --mca mtl ofi, as `loggp run` does"
                            : "`loggp run` runs MPICH-ABI programs on the venv's ch4:ofi MPICH, unless "
                              "--no-abi-swap");
    fflush(stderr);
}

/* LOGGP_ENGINE: auto (default), libfabric or pmpi. */
static int wanted_engine(void)
{
    int e = LOGGP_ENGINE_AUTO;
    char msg[256];
    if (loggp_env_engine(&e, msg, sizeof msg) != 0)
        loggp_die_before_init(msg);
    return e == LOGGP_ENGINE_LIBFABRIC ? ENGINE_LIBFABRIC : e == LOGGP_ENGINE_PMPI ? ENGINE_PMPI : ENGINE_NONE;
}

static void before_init(void)
{
    loggp_mpi_family family = loggp_mpi_abi_supported(library, sizeof library);
    if (family != LOGGP_BUILT_FOR) {
        /* A symbol the library lacks is one its programs never call. */
        resolve();
        inert = 1;
        if (LOGGP_BUILT_FOR == LOGGP_MPI_MPICH && family == LOGGP_MPI_OPEN_MPI)
            foreign = loggp_foreign_before_init(library);
        else
            loggp_refuse_mpi(library);
        return;
    }
    if (resolve() != 0) {
        char msg[256];
        snprintf(msg, sizeof msg, "the MPI library lacks %s", missing_symbol);
        loggp_die_before_init(msg);
    }
    int wanted = wanted_engine();
    char err[1024];
    /* every LOGGP_* variable, as `loggp-knobs show` checks them (runenv.h) */
    if (loggp_run_env_check(NULL, 0, err, sizeof err) != 0)
        loggp_die_before_init(err);
    /* MPI's own start-up messages and the layer's carry no knobs, until the
     * program gets control back (after_init) */
    loggp_live_suspend();
    if (loggp_live_start(err, sizeof err) != 0)
        loggp_die_before_init(err);
    if (loggp_jitter_start(err, sizeof err) != 0)
        loggp_die_before_init(err);
    if (loggp_topology_start(err, sizeof err) != 0)
        loggp_die_before_init(err);
    loggp_ofi_enable(wanted != ENGINE_PMPI);
    if (wanted != ENGINE_PMPI)
        loggp_route_through_libfabric();
    loggp_engine = wanted;
}

/* The layer's own messages here (clock sync, the checks, the run id) carry
 * no knobs, suspended since before_init, and the program's time starts where
 * they end: a knob's cost is the program's alone. */
static void after_init(void)
{
    pmpi.Comm_rank(MPI_COMM_WORLD, &loggp_world_rank);
    pmpi.Comm_size(MPI_COMM_WORLD, &loggp_world_size);
    int ofi = loggp_ofi_active();
    if (loggp_engine == ENGINE_LIBFABRIC && !ofi) {
        if (loggp_world_rank == 0)
            fprintf(stderr, "loggp: LOGGP_ENGINE=libfabric, but MPI did not open a libfabric endpoint "
                            "(%s, or use `loggp run`)\n", LOGGP_BUILT_FOR == LOGGP_MPI_OPEN_MPI
                                ? "start Open MPI with mpirun --mca pml cm --mca mtl ofi"
                                : "with MPICH set MPIR_CVAR_CH4_NETMOD=ofi");
        loggp_stop_if_any_failed(1);
    }
    loggp_engine = ofi ? ENGINE_LIBFABRIC : ENGINE_PMPI;
    if (loggp_engine == ENGINE_PMPI)
        loggp_ofi_enable(0);
    else
        loggp_synchronise_clocks();
    loggp_setup_topology();
    int failed = loggp_profile_check() != 0;
    failed |= loggp_trace_open() != 0;
    /* every rank waits in the check below, so no rank writes before this is done */
    if (!failed && loggp_world_rank == 0)
        failed = loggp_clear_earlier_runs() != 0;
    loggp_stop_if_any_failed(failed);
    loggp_trace_share_run_id();
    /* a trace needs the wrappers' books: the same one branch decides */
    loggp_bookkeeping = profile_dir() != NULL || loggp_engine == ENGINE_PMPI || loggp_tracing;
    loggp_print_banner(loggp_world_rank, loggp_engine);
    loggp_live_resume();
    init_ns = loggp_now_ns();
    loggp_trace_begin(init_ns);
}

void loggp_stop_if_any_failed(int failed)
{
    char mine = failed != 0, *all = malloc((size_t)loggp_world_size);
    int any = mine;
    if (all) {
        pmpi.Allgather(&mine, 1, MPI_BYTE, all, 1, MPI_BYTE, MPI_COMM_WORLD);
        for (int r = 0; r < loggp_world_size; r++)
            any |= all[r];
        free(all);
    }
    if (!any)
        return;
    loggp_trace_discard();
    fflush(stderr);
    pmpi.Finalize();
    exit(1);
}

int MPI_Init(int *argc, char ***argv)
{
    loggp_run_record("init", -1);
    before_init();
    int rc = pmpi.Init(argc, argv);
    if (rc == MPI_SUCCESS && foreign)
        loggp_foreign_after_init(library);
    if (rc == MPI_SUCCESS && !inert)
        after_init();
    return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    loggp_run_record("init", -1);
    before_init();
    int rc = pmpi.Init_thread(argc, argv, required, provided);
    if (rc == MPI_SUCCESS && foreign)
        loggp_foreign_after_init(library);
    if (rc == MPI_SUCCESS && !inert)
        after_init();
    return rc;
}

static void write_profile(double wall_seconds)
{
    const char *dir = profile_dir();
    if (!dir)
        return;
    char engine[128];
    snprintf(engine, sizeof engine, "%s%s", loggp_engine == ENGINE_LIBFABRIC ? "libfabric:" : "pmpi",
             loggp_engine == ENGINE_LIBFABRIC ? loggp_ofi_provider() : "");
    char host[MPI_MAX_PROCESSOR_NAME + 1] = "";
    int host_len = 0;
    pmpi.Get_processor_name(host, &host_len);
    loggp_profile_run run = {
        .rank = loggp_world_rank, .size = loggp_world_size, .host = host, .engine = engine,
        .wall_seconds = wall_seconds,
    };
    loggp_live_wanted(&run.knobs);
    run.scope_kernel = loggp_live_scoped_to_kernel();
    run.outside_armed = loggp_live_outside_armed();
    run.topology_json = loggp_topology_profile_json();
    loggp_clock_sync_result(&run.clock);
    loggp_profile_write(dir, &run);
}

/* Knobs scoped to a kernel region the program never marks apply nowhere: said
 * once, by rank 0, for the whole job (a rank marks for all, as the profile
 * counts). Collective, as MPI_Finalize is; after the profile and trace, which
 * it must not enter. */
static void warn_if_no_region_was_marked(void)
{
    char mine = atomic_load(&loggp_region_marked) != 0, *all = malloc((size_t)loggp_world_size);
    int any = mine || !all; /* no memory, no verdict: say nothing */
    if (all && pmpi.Allgather(&mine, 1, MPI_BYTE, all, 1, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS)
        for (int r = 0; r < loggp_world_size; r++)
            any |= all[r];
    else
        any = 1;
    free(all);
    if (any || loggp_world_rank != 0 || !loggp_live_scoped_to_kernel())
        return;
    loggp_knobs k;
    loggp_live_wanted(&k);
    int set = loggp_topology_configured() || loggp_jitter_L_on || loggp_jitter_o_on;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        set |= k.ps[i] != 0;
    if (!set)
        return;
    fprintf(stderr, "loggp: warning: nothing was applied: the knobs apply inside the kernel region only "
                    "(scope kernel), and the program marked no region (loggp_hint IN_KERNEL or MPI_Pcontrol); "
                    "use scope all, or mark the region\n");
    fflush(stderr);
}

int MPI_Finalize(void)
{
    if (!pmpi.Finalize && resolve() != 0)
        return MPI_ERR_OTHER;
    if (foreign)
        loggp_foreign_finalize();
    if (inert) {
        loggp_run_record("finalize", -1);
        return pmpi.Finalize();
    }
    /* the program's time ends here; what follows is the layer's own, without knobs */
    uint64_t finalize_ns = loggp_now_ns();
    loggp_live_suspend();
    loggp_live_stop();
    write_profile(init_ns ? (double)(finalize_ns - init_ns) * 1e-9 : 0.0);
    loggp_trace_close(finalize_ns);
    loggp_comms_finalize();
    warn_if_no_region_was_marked();
    loggp_run_record("finalize", loggp_world_rank);
    /* A freed request's completion may still be held, and MPI_Finalize need
     * not poll again: hand everything out and drive progress until it is out. */
    loggp_ofi_flush();
    uint64_t give_up = loggp_now_ns() + 1000000000u;
    while (loggp_ofi_held() > 0 && loggp_now_ns() < give_up) {
        int flag;
        pmpi.Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
    }
    return pmpi.Finalize();
}

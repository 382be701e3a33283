/* libloggp.so (built for MPICH's ABI) under Open MPI: its handles are
 * pointers, so the PMPI layer passes every call straight through, but the
 * libfabric layer never touches a handle and serves Open MPI's ofi MTL
 * (`--mca pml cm --mca mtl ofi`) as it serves MPICH's ch4:ofi. What needs
 * handles stays off: profile, trace, clock sync, the fallback engine; those
 * are in libloggp-ompi.so, the same sources built against Open MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ofi.h"
#include "pmpi.h"
#include "runenv.h"

static int set(const char *name)
{
    const char *v = getenv(name);
    return v && *v;
}

int loggp_foreign_before_init(const char *library)
{
    int engine = LOGGP_ENGINE_AUTO;
    char err[1024];
    if (loggp_run_env_check(NULL, 0, err, sizeof err) != 0)
        loggp_die_before_init(err);
    loggp_env_engine(&engine, NULL, 0);
    if (engine == LOGGP_ENGINE_PMPI) {
        if (loggp_launcher_rank_zero())
            fprintf(stderr, "loggp: LOGGP_ENGINE=pmpi: the fallback engine needs an MPICH-ABI MPI, not %s; "
                            "libloggp.so runs inert (use LOGGP_ENGINE=auto with Open MPI's ofi MTL)\n", library);
        return 0;
    }
    if (loggp_live_start(err, sizeof err) != 0)
        loggp_die_before_init(err);
    loggp_ofi_enable(1);
    return 1;
}

void loggp_foreign_after_init(const char *library)
{
    int rank0 = loggp_launcher_rank_zero();
    if (!loggp_ofi_active()) {
        loggp_ofi_enable(0);
        loggp_live_stop();
        if (rank0)
            fprintf(stderr, "loggp: %s sent nothing through libfabric, so the knobs do nothing: start it with "
                            "`mpirun --mca pml cm --mca mtl ofi` (`loggp run` does)\n", library);
        fflush(stderr);
        return;
    }
    loggp_print_banner(rank0 ? 0 : 1, ENGINE_LIBFABRIC);
    int quiet = 0;
    loggp_env_switch("LOGGP_QUIET", &quiet, NULL, 0); /* checked before MPI_Init */
    if (rank0 && !quiet)
        fprintf(stderr, "loggp: under %s libloggp.so serves through libfabric only: no clock sync (L needs one "
                        "clock, i.e. one host)%s; libloggp-ompi.so has them all\n", library,
                set("LOGGP_PROFILE") || set("LOGGP_TRACE") ? ", no profile, no trace" : "");
    fflush(stderr);
}

void loggp_foreign_finalize(void)
{
    if (!loggp_ofi_active())
        return;
    loggp_live_stop();
    loggp_ofi_flush(); /* nothing may stay held while Open MPI shuts down */
}

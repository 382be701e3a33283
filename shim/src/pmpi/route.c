/* Routing for the libfabric engine: every message must cross libfabric, as
 * in a one-process-per-node cluster. */
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmpi.h"
#include "runenv.h"

int loggp_single_node(void)
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

/* Ask MPICH for its ofi netmod with no shared memory shortcut, and on one
 * node the shm provider. Settings the user made stay; LOGGP_ROUTE=0 turns
 * this off. Only an MPI built on libfabric gets it. */
void loggp_route_through_libfabric(void)
{
    int route = 1;
    char msg[160];
    if (loggp_env_switch("LOGGP_ROUTE", &route, msg, sizeof msg) < 0)
        loggp_die_before_init(msg);
    if (!route || !dlsym(RTLD_DEFAULT, "fi_getinfo"))
        return;
    if (LOGGP_BUILT_FOR != LOGGP_MPI_MPICH)
        return; /* Open MPI picks its ofi MTL on mpirun's command line (`loggp run` does) */
    remove_stale_shm_regions();
    setenv("MPIR_CVAR_CH4_NETMOD", "ofi", 0);
    setenv("MPIR_CVAR_NOLOCAL", "1", 0);
    if (!getenv("FI_PROVIDER") && loggp_single_node())
        setenv("FI_PROVIDER", "shm", 0);
}

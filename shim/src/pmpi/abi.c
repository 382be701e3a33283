/* Which MPI library is underneath, found before any of its handles is
 * touched: this layer is compiled against MPICH's ABI (handles are ints,
 * MPI_COMM_WORLD is 0x44000000), shared by MPICH 3.x-5.x, Intel MPI,
 * MVAPICH and Cray MPICH. Open MPI's handles are pointers, and the MPI 5
 * standard ABI (libmpi_abi.so) has handles of its own: passing them ours
 * would crash, so under those the PMPI layer stays inert (under Open MPI the
 * libfabric layer may still serve, foreign.c). The same sources compiled
 * against Open MPI's mpi.h make libloggp-ompi.so, inert under the others. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmpi.h"

/* The library's name and version from its version string: the first line up
 * to a comma ("Open MPI v4.1.4"), runs of blanks made one. */
static void library_name(const char *s, char *out, size_t len)
{
    size_t n = 0;
    for (; *s && *s != '\n' && *s != '\r' && *s != ',' && n + 1 < len; s++) {
        int blank = *s == ' ' || *s == '\t';
        if (blank && (n == 0 || out[n - 1] == ' '))
            continue;
        out[n++] = blank ? ' ' : *s;
    }
    while (n && out[n - 1] == ' ')
        n--;
    out[n] = '\0';
}

loggp_mpi_family loggp_mpi_abi_supported(char *name, size_t len)
{
    int (*get_version)(char *, int *);
    void *f = dlsym(RTLD_NEXT, "PMPI_Get_library_version");
    memcpy(&get_version, &f, sizeof f);
    if (!get_version) {
        snprintf(name, len, "an MPI library without MPI_Get_library_version");
        return LOGGP_MPI_OTHER;
    }
    /* MPI allows this call before MPI_Init; the buffer outsizes every
     * library's MPI_MAX_LIBRARY_VERSION_STRING (MPICH's is 8192). */
    static char version[16384];
    int version_len = 0;
    if (get_version(version, &version_len) != 0)
        version[0] = '\0';
    version[sizeof version - 1] = '\0';
    library_name(version, name, len);
    if (!*name)
        snprintf(name, len, "an MPI library that does not say its name");

    /* A library on the standard ABI reports its version; an MPICH-ABI one -1. */
    int (*abi_version)(int *, int *);
    f = dlsym(RTLD_NEXT, "PMPI_Abi_get_version");
    memcpy(&abi_version, &f, sizeof f);
    int major = -1, minor = -1;
    if (abi_version && abi_version(&major, &minor) == 0 && major >= 0) {
        size_t n = strlen(name);
        snprintf(name + n, len - n, " (MPI standard ABI %d.%d)", major, minor);
        return LOGGP_MPI_OTHER;
    }
    if (dlsym(RTLD_DEFAULT, "ompi_mpi_comm_world") || strncmp(name, "Open MPI", 8) == 0)
        return LOGGP_MPI_OPEN_MPI;
    static const char *const mpich_family[] = {"MPICH", "MVAPICH", "Intel(R) MPI"};
    for (size_t i = 0; i < sizeof mpich_family / sizeof *mpich_family; i++)
        if (strstr(version, mpich_family[i]))
            return LOGGP_MPI_MPICH;
    return LOGGP_MPI_OTHER;
}

/* Is this the launcher's rank 0, or is there no launcher rank to tell? */
int loggp_launcher_rank_zero(void)
{
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof rank_vars / sizeof *rank_vars; i++) {
        const char *rank = getenv(rank_vars[i]);
        if (rank && *rank)
            return strcmp(rank, "0") == 0;
    }
    return 1;
}

void loggp_refuse_mpi(const char *name)
{
    if (!loggp_launcher_rank_zero())
        return;
    if (LOGGP_BUILT_FOR == LOGGP_MPI_OPEN_MPI)
        fprintf(stderr, "loggp: %s is not Open MPI; libloggp-ompi.so runs inert (no knobs, no profile). "
                        "Preload libloggp.so for MPICH-ABI programs (`loggp run` picks the right one).\n", name);
    else
        fprintf(stderr, "loggp: %s is not an MPICH-ABI MPI; libloggp.so runs inert (no knobs, no profile). "
                        "Build the program with loggp's mpicc and start it with `loggp run`.\n", name);
    fflush(stderr);
}

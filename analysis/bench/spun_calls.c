/* spun_calls.so: an LD_PRELOAD library that makes an MPI program spend CPU time of its own
 * around its point-to-point calls, with no knob set: SPUN_CALLS_NS before each send (Send,
 * Isend) and after each receive completes (Recv; Wait or Waitall on an Irecv). It wraps
 * the PMPI_ entry points, so loaded after libloggp.so its spins fall inside the calls
 * the trace records, as the o knobs' do; collectives are left alone, and the layer's own
 * exchanges at MPI_Init (its clock synchronisation) are spun too. At MPI_Finalize
 * each rank writes "<spins> <ns spun>" to SPUN_CALLS_OUT.<rank> when that is set.
 *
 *   mpicc -O2 -shared -fPIC -o spun_calls.so spun_calls.c -ldl
 *   SPUN_CALLS_NS=100000 loggp run -n 2 --trace DIR -- ./program   (env LD_PRELOAD=./spun_calls.so)
 *
 * analysis/loggp/analysis/spun_calls.py runs it against the o knobs (docs/prediction-against-emulation.md). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TRACKED_RECEIVES 4096

static uint64_t spin_ns, spun_ns, spins;
/* receives posted and not yet waited for: their completion is where the spin goes */
static MPI_Request receives[TRACKED_RECEIVES];
static int receive_count;

static uint64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Refuses a missing or malformed SPUN_CALLS_NS before the program starts. */
__attribute__((constructor)) static void read_spin(void)
{
    const char *text = getenv("SPUN_CALLS_NS");
    char *end = NULL;
    errno = 0;
    unsigned long long ns = text ? strtoull(text, &end, 10) : 0;
    if (!text || !*text || *end || errno || text[0] == '-' || ns > 1000000000ull) {
        fprintf(stderr, "spun_calls: SPUN_CALLS_NS='%s' is not a whole number of ns from 0 to 1000000000\n",
                text ? text : "");
        exit(2);
    }
    spin_ns = ns;
}

static void spin(void)
{
    uint64_t start = now_ns(), t;
    while ((t = now_ns()) < start + spin_ns)
        __builtin_ia32_pause();
    spun_ns += t - start;
    spins++;
}

/* Was this request a tracked receive? It is forgotten either way. */
static int took_receive(MPI_Request request)
{
    for (int i = 0; i < receive_count; i++)
        if (receives[i] == request) {
            receives[i] = receives[--receive_count];
            return 1;
        }
    return 0;
}

#define NEXT(name)                                                                                                    \
    static __typeof__(&name) next;                                                                                    \
    if (!next)                                                                                                        \
    next = (__typeof__(&name))dlsym(RTLD_NEXT, #name)

int PMPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    NEXT(PMPI_Send);
    spin();
    return next(buf, count, type, dest, tag, comm);
}

int PMPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    NEXT(PMPI_Isend);
    spin();
    return next(buf, count, type, dest, tag, comm, request);
}

int PMPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    NEXT(PMPI_Recv);
    int rc = next(buf, count, type, source, tag, comm, status);
    spin();
    return rc;
}

int PMPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *request)
{
    NEXT(PMPI_Irecv);
    int rc = next(buf, count, type, source, tag, comm, request);
    if (rc == MPI_SUCCESS) {
        if (receive_count == TRACKED_RECEIVES) {
            fprintf(stderr, "spun_calls: more than %d receives posted at once\n", TRACKED_RECEIVES);
            PMPI_Abort(MPI_COMM_WORLD, 2);
        }
        receives[receive_count++] = *request;
    }
    return rc;
}

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    NEXT(PMPI_Wait);
    MPI_Request waited = *request;
    int rc = next(request, status);
    if (took_receive(waited))
        spin();
    return rc;
}

int PMPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    NEXT(PMPI_Waitall);
    MPI_Request waited[count > 0 ? count : 1];
    for (int i = 0; i < count; i++)
        waited[i] = requests[i];
    int rc = next(count, requests, statuses);
    for (int i = 0; i < count; i++)
        if (took_receive(waited[i]))
            spin();
    return rc;
}

int PMPI_Finalize(void)
{
    NEXT(PMPI_Finalize);
    const char *out = getenv("SPUN_CALLS_OUT");
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (out && *out) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", out, rank);
        FILE *f = fopen(path, "w");
        if (!f || fprintf(f, "%llu %llu\n", (unsigned long long)spins, (unsigned long long)spun_ns) < 0 ||
            fclose(f) != 0)
            fprintf(stderr, "spun_calls: cannot write %s\n", path);
    }
    return next();
}

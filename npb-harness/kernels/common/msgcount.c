/* Test-only PMPI layer, linked into a copy of a kernel: counts each MPI
 * communication call by message size and prints the tally per rank at
 * MPI_Finalize, so tests can check a kernel's traffic against the reference
 * implementation's structure. Lines look like
 *   msgcount rank=1 MPI_Send bytes=5600 count=832 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

enum { MAX_KINDS = 256 };

static struct {
    const char *call;
    long bytes, count;
} tally[MAX_KINDS];
static int kinds, overflowed;

static void note(const char *call, long count, MPI_Datatype type)
{
    int size = 0;
    PMPI_Type_size(type, &size);
    long bytes = count * size;
    for (int i = 0; i < kinds; i++)
        if (tally[i].call == call && tally[i].bytes == bytes) {
            tally[i].count++;
            return;
        }
    if (kinds == MAX_KINDS) {
        overflowed = 1;
        return;
    }
    tally[kinds].call = call;
    tally[kinds].bytes = bytes;
    tally[kinds].count = 1;
    kinds++;
}

int MPI_Send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    note("MPI_Send", count, type);
    return PMPI_Send(buf, count, type, dest, tag, comm);
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    note("MPI_Isend", count, type);
    return PMPI_Isend(buf, count, type, dest, tag, comm, req);
}

int MPI_Irecv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    note("MPI_Irecv", count, type);
    return PMPI_Irecv(buf, count, type, src, tag, comm, req);
}

int MPI_Recv(void *buf, int count, MPI_Datatype type, int src, int tag, MPI_Comm comm,
             MPI_Status *status)
{
    note("MPI_Recv", count, type);
    return PMPI_Recv(buf, count, type, src, tag, comm, status);
}

int MPI_Allreduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op,
                  MPI_Comm comm)
{
    note("MPI_Allreduce", count, type);
    return PMPI_Allreduce(in, out, count, type, op, comm);
}

int MPI_Reduce(const void *in, void *out, int count, MPI_Datatype type, MPI_Op op, int root,
               MPI_Comm comm)
{
    note("MPI_Reduce", count, type);
    return PMPI_Reduce(in, out, count, type, op, root, comm);
}

int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
    note("MPI_Bcast", count, type);
    return PMPI_Bcast(buf, count, type, root, comm);
}

int MPI_Alltoall(const void *in, int in_count, MPI_Datatype in_type, void *out, int out_count,
                 MPI_Datatype out_type, MPI_Comm comm)
{
    note("MPI_Alltoall", in_count, in_type);
    return PMPI_Alltoall(in, in_count, in_type, out, out_count, out_type, comm);
}

int MPI_Alltoallv(const void *in, const int *in_counts, const int *in_displs,
                  MPI_Datatype in_type, void *out, const int *out_counts, const int *out_displs,
                  MPI_Datatype out_type, MPI_Comm comm)
{
    /* sizes vary with the data: count the calls only */
    note("MPI_Alltoallv", 0, in_type);
    return PMPI_Alltoallv(in, in_counts, in_displs, in_type, out, out_counts, out_displs,
                          out_type, comm);
}

int MPI_Barrier(MPI_Comm comm)
{
    note("MPI_Barrier", 0, MPI_BYTE);
    return PMPI_Barrier(comm);
}

int MPI_Finalize(void)
{
    int rank = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (int i = 0; i < kinds; i++) {
        char line[160];
        snprintf(line, sizeof line, "msgcount rank=%d %s bytes=%ld count=%ld\n", rank,
                 tally[i].call, tally[i].bytes, tally[i].count);
        fputs(line, stderr);
    }
    if (overflowed)
        fprintf(stderr, "msgcount rank=%d overflow: more than %d kinds\n", rank, MAX_KINDS);
    fflush(stderr);
    return PMPI_Finalize();
}

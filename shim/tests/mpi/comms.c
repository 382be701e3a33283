/* Communicators a program makes, each used by one ring exchange with a tag of
 * its own and one Barrier, so a trace can tell them apart: MPI_COMM_WORLD
 * (tag 0), a duplicate of it (1), a duplicate of that duplicate (2), a second
 * duplicate of the world (3), a split by rank parity (4), a duplicate made
 * after another was freed (5), one by MPI_Comm_idup (6), a periodic 2 x np/2
 * Cartesian grid (7), its rows by MPI_Cart_sub (8), an intercommunicator
 * between the two rows (9: each rank with its partner across) and their merge
 * (10), whose ranks are the world's in order.
 * Prints "comms OK <exchanges>". Needs an even number of ranks.
 * Usage: loggp-test-comms */
#include <mpi.h>
#include <stdio.h>

static int ring(MPI_Comm comm, int tag)
{
    int rank, size, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    MPI_Sendrecv(&rank, 1, MPI_INT, (rank + 1) % size, tag, &got, 1, MPI_INT, (rank + size - 1) % size, tag,
                 comm, MPI_STATUS_IGNORE);
    MPI_Barrier(comm);
    return got == (rank + size - 1) % size;
}

/* With the partner of the same rank in the other group of intercommunicator comm. */
static int across(MPI_Comm comm, int tag)
{
    int rank, got = -1;
    MPI_Comm_rank(comm, &rank);
    MPI_Sendrecv(&rank, 1, MPI_INT, rank, tag, &got, 1, MPI_INT, rank, tag, comm, MPI_STATUS_IGNORE);
    MPI_Barrier(comm);
    return got == rank;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np % 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-test-comms: needs an even number of ranks, got %d\n", np);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm dup, dup_of_dup, second, parity, freed, after_free, idup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_dup(dup, &dup_of_dup);
    MPI_Comm_dup(MPI_COMM_WORLD, &second);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &parity);
    MPI_Comm_dup(MPI_COMM_WORLD, &freed);
    MPI_Comm_free(&freed);
    MPI_Comm_dup(MPI_COMM_WORLD, &after_free);
    MPI_Request req;
    MPI_Comm_idup(MPI_COMM_WORLD, &idup, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    MPI_Comm grid, row, inter, merged;
    int dims[2] = {2, np / 2}, periods[2] = {1, 1}, keep[2] = {0, 1}, upper = rank >= np / 2;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &grid);
    MPI_Cart_sub(grid, keep, &row);
    MPI_Intercomm_create(row, 0, MPI_COMM_WORLD, upper ? 0 : np / 2, 77, &inter);
    MPI_Intercomm_merge(inter, upper, &merged);
    MPI_Comm comms[] = {MPI_COMM_WORLD, dup, dup_of_dup, second, parity, after_free, idup, grid, row, inter, merged};
    int n = (int)(sizeof comms / sizeof comms[0]), good = 0;
    for (int i = 0; i < n; i++)
        good += comms[i] == inter ? across(comms[i], i) : ring(comms[i], i);
    for (int i = 1; i < n; i++)
        MPI_Comm_free(&comms[i]);
    if (good == n)
        printf("comms OK %d\n", n);
    else
        fprintf(stderr, "rank %d: %d of %d ring exchanges got the wrong neighbour\n", rank, n - good, n);
    MPI_Finalize();
    return good == n ? 0 : 1;
}

/* A program that marks its kernel region (np=2): rank 0 sends BEFORE messages,
 * enters the region, sends INSIDE, leaves it and sends AFTER; rank 1 receives
 * them all. The region is marked with loggp_hint, or with MPI_Pcontrol when the
 * last argument is "pcontrol". Rank 0 also prints what loggp_hint answers to
 * an unknown key and a bad value.
 * usage: loggp-test-regions BEFORE INSIDE AFTER [hint|pcontrol] */
#include <loggp.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int use_pcontrol;

static void region(int inside)
{
    if (use_pcontrol)
        MPI_Pcontrol(inside);
    else if (loggp_hint("IN_KERNEL", inside ? "1" : "0") != 0)
        fprintf(stderr, "loggp_hint refused IN_KERNEL=%d\n", inside);
}

static void messages(int rank, int n)
{
    char byte = 0;
    for (int i = 0; i < n; i++) {
        if (rank == 0)
            MPI_Send(&byte, 1, MPI_CHAR, 1, 3, MPI_COMM_WORLD);
        else
            MPI_Recv(&byte, 1, MPI_CHAR, 0, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if ((argc != 4 && argc != 5) || size != 2) {
        if (rank == 0)
            fprintf(stderr, "usage: loggp-test-regions BEFORE INSIDE AFTER [hint|pcontrol] (np=2)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    use_pcontrol = argc == 5 && strcmp(argv[4], "pcontrol") == 0;
    if (rank == 0)
        printf("unknown_key=%d bad_value=%d\n", loggp_hint("NO_SUCH_KEY", "1"), loggp_hint("IN_KERNEL", "2"));
    messages(rank, atoi(argv[1]));
    region(1);
    messages(rank, atoi(argv[2]));
    region(0);
    messages(rank, atoi(argv[3]));
    MPI_Finalize();
    return 0;
}

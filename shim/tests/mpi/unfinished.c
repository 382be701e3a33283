/* A program that does not finish (np >= 2): every rank sends rank 0 one
 * message, then RANK leaves without MPI_Finalize, by exit(3) ("exit") or by
 * SIGKILL ("kill"); the others finalize, so their rank files get written.
 * usage: loggp-test-unfinished RANK exit|kill */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 3 || (strcmp(argv[2], "exit") != 0 && strcmp(argv[2], "kill") != 0)) {
        if (rank == 0)
            fprintf(stderr, "usage: loggp-test-unfinished RANK exit|kill\n");
        MPI_Finalize();
        return 2;
    }
    int leaver = atoi(argv[1]), byte = rank;
    if (rank == 0)
        for (int r = 1; r < size; r++)
            MPI_Recv(&byte, 1, MPI_INT, r, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    else
        MPI_Send(&byte, 1, MPI_INT, 0, 0, MPI_COMM_WORLD);
    if (rank == leaver) {
        fflush(stdout);
        if (strcmp(argv[2], "kill") == 0)
            raise(SIGKILL);
        exit(3);
    }
    /* the others do not wait for the leaver: MPI_Finalize alone, no collective */
    MPI_Finalize();
    return 0;
}

/* The program's first calls right after MPI_Init, and nothing else (np=2):
 * N barriers on MPI_COMM_WORLD, or N ping-pongs of 8 bytes (rank 0 sends
 * first), to show how the layer hands the ranks over at the program's start.
 * usage: loggp-test-firstcalls barrier|pingpong N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int n = argc == 3 ? atoi(argv[2]) : 0;
    int barrier = argc == 3 && strcmp(argv[1], "barrier") == 0;
    int pingpong = argc == 3 && strcmp(argv[1], "pingpong") == 0;
    if (n < 1 || !(barrier || pingpong)) {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fprintf(stderr, "usage: loggp-test-firstcalls barrier|pingpong N (N >= 1, np=2)\n");
        MPI_Finalize();
        return 2;
    }
    if (barrier) {
        for (int i = 0; i < n; i++)
            MPI_Barrier(MPI_COMM_WORLD);
    } else {
        int rank;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        char buf[8] = {0};
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                MPI_Send(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
                MPI_Recv(buf, 8, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, 8, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
            }
        }
    }
    MPI_Finalize();
    return 0;
}

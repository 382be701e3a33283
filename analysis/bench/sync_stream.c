/* An 8 B stream or ping-pong between two ranks with MPI_Send or MPI_Ssend: the pattern that
 * tells a synchronous send from a standard one (docs/predict.md). Prints rank 0's us per
 * message (stream) or per round trip (pingpong).
 *
 *   mpicc -O2 -o sync_stream analysis/bench/sync_stream.c
 *   loggp run -n 2 --quiet --L 20us -- ./sync_stream stream ssend 1000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    char *end = NULL;
    long n = argc == 4 ? strtol(argv[3], &end, 10) : 0;
    int stream = argc == 4 && strcmp(argv[1], "stream") == 0, ping = argc == 4 && strcmp(argv[1], "pingpong") == 0;
    int sync = argc == 4 && strcmp(argv[2], "ssend") == 0, standard = argc == 4 && strcmp(argv[2], "send") == 0;
    if (size != 2 || !(stream || ping) || !(sync || standard) || !end || *end || n < 1 || n > 100000000) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 sync_stream stream|pingpong send|ssend COUNT (1 to 1e8)\n");
        MPI_Finalize();
        return 2;
    }
    int (*send)(const void *, int, MPI_Datatype, int, int, MPI_Comm) = sync ? MPI_Ssend : MPI_Send;
    char buf[8] = {0};
    int peer = 1 - rank;
    double t0 = MPI_Wtime();
    for (long i = 0; i < n; i++) {
        if (rank == 0)
            send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
        if (rank == 1 || ping)
            MPI_Recv(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 1 && ping)
            send(buf, 8, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
    }
    double t = MPI_Wtime() - t0;
    if (rank == 0)
        printf("%.3f\n", t / (double)n * 1e6);
    MPI_Finalize();
    return 0;
}

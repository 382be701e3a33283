/* MPI_THREAD_MULTIPLE under the apparatus: several threads per rank exchange
 * messages on their own tags at once; every message must arrive intact and
 * the profile must count them all. Prints "threads OK". */
#include <mpi.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { THREADS = 4, ROUNDS = 300, N = 64 };

static int rank, peer;
static int failures[THREADS];

static void *worker(void *arg)
{
    int id = (int)(long)arg;
    int buf[N];
    for (int r = 0; r < ROUNDS; r++) {
        for (int i = 0; i < N; i++)
            buf[i] = rank * 100000 + id * 1000 + r + i;
        MPI_Request req;
        int in[N];
        MPI_Irecv(in, N, MPI_INT, peer, id, MPI_COMM_WORLD, &req);
        MPI_Send(buf, N, MPI_INT, peer, id, MPI_COMM_WORLD);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            failures[id] += in[i] != peer * 100000 + id * 1000 + r + i;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    if (provided < MPI_THREAD_MULTIPLE) {
        printf("threads SKIPPED: MPI_THREAD_MULTIPLE not provided\n");
        MPI_Finalize();
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    peer = rank ^ 1;
    pthread_t t[THREADS];
    for (long i = 0; i < THREADS; i++)
        pthread_create(&t[i], NULL, worker, (void *)i);
    int bad = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        bad += failures[i];
    }
    int total;
    MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf(total ? "threads FAILED (%d)\n" : "threads OK\n", total);
    MPI_Finalize();
    return total != 0;
}

/* pairs ITERS SIZE: rank 0 ping-pongs SIZE-byte messages ITERS times with
 * each other rank and prints the median half round trip per pair,
 * "pair 0 R US" (per-pair L and G: the topology tests).
 *
 * The runs put 4 ranks on 2 cores, so only one pair may spin at a time: the
 * peers not in play wait asleep for their turn. The turns go round in short
 * blocks, so every pair is timed under the same background load, and rank 0
 * keeps one CPU to itself while the peers share another, so that every pair
 * spans the same two CPUs (left to the scheduler, a pair sometimes shared
 * one, which took 5 us more per half round trip). */
#define _GNU_SOURCE
#include <mpi.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "order.h"

enum { TAG_DATA = 1, TAG_TURN = 2, TAG_READY = 3, ROUNDS = 8 };

/* a peer's wait for its next turn (how many round trips; 0 ends), asleep
 * between polls so it leaves the cores to the pair in play */
static int next_turn(void)
{
    int count;
    MPI_Request turn;
    MPI_Irecv(&count, 1, MPI_INT, 0, TAG_TURN, MPI_COMM_WORLD, &turn);
    for (int done = 0;;) {
        MPI_Test(&turn, &done, MPI_STATUS_IGNORE);
        if (done)
            return count;
        nanosleep(&(struct timespec){.tv_nsec = 1000000}, NULL);
    }
}

/* Rank 0 on the first CPU this process may use, every other rank on the
 * second; nothing changes where there is only one. */
static void place(int rank)
{
    cpu_set_t allowed, mine;
    if (sched_getaffinity(0, sizeof allowed, &allowed) != 0 || CPU_COUNT(&allowed) < 2)
        return;
    int seen = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, &allowed))
            continue;
        if (seen++ == (rank == 0 ? 0 : 1)) {
            CPU_ZERO(&mine);
            CPU_SET(cpu, &mine);
            sched_setaffinity(0, sizeof mine, &mine);
            return;
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 0, bytes = argc > 2 ? atoi(argv[2]) : 8;
    if (argc != 3 || iters < 1 || bytes < 1 || size < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n N (N >= 2) pairs ITERS SIZE (ITERS, SIZE >= 1)\n");
        MPI_Finalize();
        return 2;
    }
    place(rank);
    char *buf = calloc((size_t)bytes, 1);
    if (rank != 0) {
        for (int count; (count = next_turn()) > 0;) {
            MPI_Send(NULL, 0, MPI_BYTE, 0, TAG_READY, MPI_COMM_WORLD);
            for (int i = 0; i < count; i++) {
                MPI_Recv(buf, bytes, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(buf, bytes, MPI_BYTE, 0, TAG_DATA, MPI_COMM_WORLD);
            }
        }
    } else {
        double *half = calloc((size_t)iters * (size_t)size, sizeof *half);
        int block = iters < ROUNDS ? 1 : iters / ROUNDS;
        for (int done = 0; done < iters; done += block) {
            int count = done + block > iters ? iters - done : block;
            for (int peer = 1; peer < size; peer++) {
                MPI_Send(&count, 1, MPI_INT, peer, TAG_TURN, MPI_COMM_WORLD);
                MPI_Recv(NULL, 0, MPI_BYTE, peer, TAG_READY, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                double *own = half + (size_t)peer * (size_t)iters + (size_t)done;
                for (int i = 0; i < count; i++) {
                    double t0 = MPI_Wtime();
                    MPI_Send(buf, bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
                    MPI_Recv(buf, bytes, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                    own[i] = (MPI_Wtime() - t0) * 0.5e6;
                }
            }
        }
        int end = 0;
        for (int peer = 1; peer < size; peer++)
            MPI_Send(&end, 1, MPI_INT, peer, TAG_TURN, MPI_COMM_WORLD);
        for (int peer = 1; peer < size; peer++) {
            double *own = half + (size_t)peer * (size_t)iters;
            printf("pair 0 %d %.3f\n", peer, loggp_median(own, (size_t)iters));
        }
        free(half);
    }
    free(buf);
    MPI_Finalize();
    return 0;
}

/* Waitsome, Testsome and Waitany completing receives out of their array's order, for the trace:
 * rank 0 posts, per phase, a receive of tag 99 (sent last) and then three wildcard receives
 * (MPI_ANY_SOURCE, MPI_ANY_TAG); rank 1 sends tags 10, 11 and 12 (taken by the wildcard
 * receives in post order: MPI's non-overtaking rule), waits for rank 0's go-ahead, then sends
 * tag 99. So the completion call finds the wildcard receives at positions 1-3 done first: its
 * k-th status is position indices[k]'s, not position k's. Rank 0 checks what it got and prints
 * "somecalls OK" or the first difference. Phases: Waitsome, Testsome, Waitany.
 * Usage: loggp-test-somecalls */
#include <mpi.h>
#include <stdio.h>

#define N 4

static int bad;

static void check(int phase, int position, const MPI_Status *st)
{
    int want = position == 0 ? 99 : 9 + position;
    if (st->MPI_SOURCE != 1 || st->MPI_TAG != want) {
        if (!bad)
            printf("phase %d: position %d got source %d tag %d, expected source 1 tag %d\n", phase, position,
                   st->MPI_SOURCE, st->MPI_TAG, want);
        bad = 1;
    }
}

static void receive(int phase)
{
    MPI_Request reqs[N];
    MPI_Status stats[N];
    int bufs[N], indices[N], done = 0, go = 1;
    MPI_Irecv(&bufs[0], 1, MPI_INT, 1, 99, MPI_COMM_WORLD, &reqs[0]);
    for (int i = 1; i < N; i++)
        MPI_Irecv(&bufs[i], 1, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &reqs[i]);
    int sent_go = 0;
    while (done < N) {
        int outcount = 0;
        if (phase == 0) {
            MPI_Waitsome(N, reqs, &outcount, indices, stats);
        } else if (phase == 1) {
            MPI_Testsome(N, reqs, &outcount, indices, stats);
        } else {
            int index, flag;
            MPI_Waitany(N, reqs, &index, &stats[0]);
            flag = index != MPI_UNDEFINED;
            outcount = flag;
            indices[0] = index;
        }
        for (int k = 0; k < outcount; k++)
            check(phase, indices[k], &stats[k]);
        done += outcount;
        if (done == N - 1 && !sent_go) { /* the three wildcard receives are in: tag 99 may come */
            MPI_Send(&go, 1, MPI_INT, 1, 1, MPI_COMM_WORLD);
            sent_go = 1;
        }
    }
}

static void send(void)
{
    int v = 0, go;
    for (int tag = 10; tag < 13; tag++)
        MPI_Send(&v, 1, MPI_INT, 0, tag, MPI_COMM_WORLD);
    MPI_Recv(&go, 1, MPI_INT, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Send(&v, 1, MPI_INT, 0, 99, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    int rank, np;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-test-somecalls: needs 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    for (int phase = 0; phase < 3; phase++) {
        if (rank == 0)
            receive(phase);
        else
            send();
        MPI_Barrier(MPI_COMM_WORLD);
    }
    if (rank == 0)
        printf(bad ? "somecalls FAILED\n" : "somecalls OK\n");
    MPI_Finalize();
    return bad;
}

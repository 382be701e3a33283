/* MPI's non-overtaking rule under jitter: every rank sends N numbered
 * messages of mixed sizes (eager and rendezvous) to every other rank on
 * MPI_COMM_WORLD and on a duplicate, in windows of nonblocking sends, while
 * receiving with wildcards (Iprobe any source, any tag, then a receive of
 * that source and tag or a wildcard one, alternately) and checking that each
 * (source, communicator) sequence arrives 0, 1, 2, ...
 * Prints "ordering OK <messages>" or names the first violation.
 * Usage: loggp-test-ordering [N] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WINDOW 8
#define MAX_BYTES 20000

static const int sizes[] = {8, 64, 1000, 4000, 9000, MAX_BYTES};

static int size_of(int seq, int src, int dst)
{
    unsigned h = ((unsigned)seq * 2654435761u) ^ (unsigned)(src * 31 + dst);
    return sizes[(h >> 7) % (sizeof sizes / sizeof sizes[0])];
}

static int rank, np, bad;
static long received;
static int *next_seq; /* [source * 2 + comm]: the message expected next */
static char recvbuf[MAX_BYTES];

/* Takes one message from comm c if one has come; 1 if it did. */
static int poll_one(MPI_Comm comm, int c)
{
    int flag;
    MPI_Status st;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag, &st);
    if (!flag)
        return 0;
    if (received % 2)
        MPI_Recv(recvbuf, MAX_BYTES, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, comm, &st);
    else
        MPI_Recv(recvbuf, MAX_BYTES, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &st);
    int got;
    memcpy(&got, recvbuf, sizeof got);
    int *want = &next_seq[st.MPI_SOURCE * 2 + c];
    if (got != *want && !bad++)
        fprintf(stderr, "rank %d: from rank %d on communicator %d got message %d, expected %d\n", rank,
                st.MPI_SOURCE, c, got, *want);
    *want = got + 1;
    received++;
    return 1;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    MPI_Comm comms[2] = {MPI_COMM_WORLD, MPI_COMM_NULL};
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[1]);
    next_seq = calloc((size_t)np * 2, sizeof *next_seq);
    int per_window = WINDOW * 2 * (np - 1);
    char *sendbuf = malloc((size_t)per_window * MAX_BYTES);
    MPI_Request *req = malloc((size_t)per_window * sizeof *req);
    long expected = (long)n * 2 * (np - 1);
    for (int seq = 0; seq < n; seq += WINDOW) {
        int posted = 0;
        for (int k = 0; k < WINDOW && seq + k < n; k++)
            for (int c = 0; c < 2; c++)
                for (int peer = 0; peer < np; peer++) {
                    if (peer == rank)
                        continue;
                    char *b = sendbuf + (size_t)posted * MAX_BYTES;
                    int s = seq + k;
                    memcpy(b, &s, sizeof s);
                    MPI_Isend(b, size_of(s, rank, peer), MPI_BYTE, peer, s % 32000, comms[c], &req[posted++]);
                }
        /* receive while the sends complete, so no rank holds up another's rendezvous */
        int done = 0;
        while (!done) {
            MPI_Testall(posted, req, &done, MPI_STATUSES_IGNORE);
            for (int c = 0; c < 2; c++)
                poll_one(comms[c], c);
        }
    }
    while (received < expected)
        for (int c = 0; c < 2; c++)
            poll_one(comms[c], c);
    for (int p = 0; p < np; p++)
        for (int c = 0; c < 2; c++)
            if (p != rank && next_seq[p * 2 + c] != n && !bad++)
                fprintf(stderr, "rank %d: from rank %d on communicator %d ended at %d of %d\n", rank, p, c,
                        next_seq[p * 2 + c], n);
    int violations;
    long total;
    MPI_Allreduce(&bad, &violations, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Reduce(&received, &total, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        if (violations)
            printf("ordering FAILED: %d ranks saw messages out of order\n", violations);
        else
            printf("ordering OK %ld\n", total);
    }
    MPI_Comm_free(&comms[1]);
    free(next_seq);
    free(sendbuf);
    free(req);
    MPI_Finalize();
    return violations ? 1 : 0;
}

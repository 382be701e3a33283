/* Messages a rank sends itself by every kind of send, and a few to the other
 * rank, each of its own size, for the profile's sent_to_self. Every rank of
 * the two does the same:
 *   to itself on MPI_COMM_WORLD: Send_init started 3 times (100 B);
 *     Ssend_init (200 B) and Rsend_init (300 B) by one Startall;
 *     Bsend_init (400 B) started once; Sendrecv (50 B); Sendrecv_replace
 *     (60 B); Isend, Ibsend, Issend, Irsend (10, 20, 30, 40 B);
 *     a Send_init to MPI_PROC_NULL started once (no message);
 *   to itself on `reversed` (the world's ranks in reverse order, so its own
 *     rank there is the other's in the world): Send_init started once
 *     (700 B), Isend (800 B);
 *   to the other rank: on `reversed`, a Send_init to the rank's own world
 *     rank number (1000 B) started once; on the world, Send_init started
 *     twice (1500 B) and Sendrecv (3000 B).
 * Prints "selfsends OK". Needs 2 ranks.
 * Usage: loggp-test-selfsends */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char out[4096], in[4096];

/* A persistent send to oneself on comm started `starts` times, each received by a posted Irecv. */
static void persistent_to_self(MPI_Comm comm, int bytes, int starts)
{
    int me;
    MPI_Comm_rank(comm, &me);
    MPI_Request send, recv;
    MPI_Send_init(out, bytes, MPI_BYTE, me, bytes, comm, &send);
    for (int i = 0; i < starts; i++) {
        MPI_Irecv(in, bytes, MPI_BYTE, me, bytes, comm, &recv);
        MPI_Start(&send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        MPI_Wait(&recv, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&send);
}

/* A persistent send to peer on comm started `starts` times, and the peer's matching receives. */
static void persistent_to_peer(MPI_Comm comm, int peer, int bytes, int starts)
{
    MPI_Request send;
    MPI_Send_init(out, bytes, MPI_BYTE, peer, bytes, comm, &send);
    for (int i = 0; i < starts; i++) {
        MPI_Request recv;
        MPI_Irecv(in, bytes, MPI_BYTE, peer, bytes, comm, &recv);
        MPI_Start(&send);
        MPI_Wait(&send, MPI_STATUS_IGNORE);
        MPI_Wait(&recv, MPI_STATUS_IGNORE);
    }
    MPI_Request_free(&send);
}

static void startall_to_self(void)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Request sends[2], recvs[2];
    MPI_Irecv(in, 200, MPI_BYTE, me, 200, MPI_COMM_WORLD, &recvs[0]);
    MPI_Irecv(in + 200, 300, MPI_BYTE, me, 300, MPI_COMM_WORLD, &recvs[1]);
    MPI_Ssend_init(out, 200, MPI_BYTE, me, 200, MPI_COMM_WORLD, &sends[0]);
    MPI_Rsend_init(out, 300, MPI_BYTE, me, 300, MPI_COMM_WORLD, &sends[1]); /* its receive is posted */
    MPI_Startall(2, sends);
    MPI_Waitall(2, sends, MPI_STATUSES_IGNORE);
    MPI_Waitall(2, recvs, MPI_STATUSES_IGNORE);
    MPI_Request_free(&sends[0]);
    MPI_Request_free(&sends[1]);
}

/* Attaches a buffer for one buffered send of `bytes`; detach_and_free ends it. */
static void attach_for(int bytes)
{
    int size = 0;
    MPI_Pack_size(bytes, MPI_BYTE, MPI_COMM_WORLD, &size);
    size += MPI_BSEND_OVERHEAD;
    char *buffer = malloc((size_t)size);
    MPI_Buffer_attach(buffer, size);
}

static void detach_and_free(void)
{
    char *buffer;
    int size;
    MPI_Buffer_detach(&buffer, &size);
    free(buffer);
}

static void bsend_init_to_self(void)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    attach_for(400);
    MPI_Request send;
    MPI_Bsend_init(out, 400, MPI_BYTE, me, 400, MPI_COMM_WORLD, &send);
    MPI_Start(&send);
    MPI_Recv(in, 400, MPI_BYTE, me, 400, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Request_free(&send);
    detach_and_free();
}

static void nonblocking_to_self(void)
{
    int me;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    attach_for(20);
    MPI_Request recvs[4], sends[4];
    for (int i = 0; i < 4; i++)
        MPI_Irecv(in + 1000 * i, 10 * (i + 1), MPI_BYTE, me, i, MPI_COMM_WORLD, &recvs[i]);
    MPI_Isend(out, 10, MPI_BYTE, me, 0, MPI_COMM_WORLD, &sends[0]);
    MPI_Ibsend(out, 20, MPI_BYTE, me, 1, MPI_COMM_WORLD, &sends[1]);
    MPI_Issend(out, 30, MPI_BYTE, me, 2, MPI_COMM_WORLD, &sends[2]);
    MPI_Irsend(out, 40, MPI_BYTE, me, 3, MPI_COMM_WORLD, &sends[3]); /* its receive is posted */
    MPI_Waitall(4, sends, MPI_STATUSES_IGNORE);
    MPI_Waitall(4, recvs, MPI_STATUSES_IGNORE);
    detach_and_free();
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np != 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-test-selfsends: needs 2 ranks, got %d\n", np);
        MPI_Finalize();
        return 2;
    }
    int other = 1 - rank;
    memset(out, 'x', sizeof out);
    MPI_Comm reversed;
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - 1 - rank, &reversed);

    persistent_to_self(MPI_COMM_WORLD, 100, 3);
    startall_to_self();
    bsend_init_to_self();
    MPI_Sendrecv(out, 50, MPI_BYTE, rank, 50, in, 50, MPI_BYTE, rank, 50, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv_replace(in, 60, MPI_BYTE, rank, 60, rank, 60, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    nonblocking_to_self();
    MPI_Request nowhere;
    MPI_Send_init(out, 90, MPI_BYTE, MPI_PROC_NULL, 90, MPI_COMM_WORLD, &nowhere);
    MPI_Start(&nowhere);
    MPI_Wait(&nowhere, MPI_STATUS_IGNORE);
    MPI_Request_free(&nowhere);

    persistent_to_self(reversed, 700, 1);
    int me_reversed;
    MPI_Comm_rank(reversed, &me_reversed);
    MPI_Request send, recv;
    MPI_Irecv(in, 800, MPI_BYTE, me_reversed, 800, reversed, &recv);
    MPI_Isend(out, 800, MPI_BYTE, me_reversed, 800, reversed, &send);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    MPI_Wait(&recv, MPI_STATUS_IGNORE);

    persistent_to_peer(reversed, rank, 1000, 1); /* rank `rank` of reversed is the other process */
    persistent_to_peer(MPI_COMM_WORLD, other, 1500, 2);
    MPI_Sendrecv(out, 3000, MPI_BYTE, other, 3000, in, 3000, MPI_BYTE, other, 3000, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);

    MPI_Comm_free(&reversed);
    if (rank == 0)
        printf("selfsends OK\n");
    MPI_Finalize();
    return 0;
}

/* Communicators whose ranks are not the world's: a split of the world with
 * reversed keys (its rank k is world rank np-1-k) and a split into halves by
 * parity (world ranks 0, 2, ... and 1, 3, ...). On the reversed one each rank
 * sends 4 (world rank + 1) bytes to the next of its ranks and receives from the
 * one before (tag 1), then a Bcast from its rank 0 (world rank np-1) and an
 * Allreduce; on each half its rank 0 sends 16 bytes to its rank 1 (tag 2),
 * then a Barrier. Every rank checks what it got against the world ranks the
 * communicators should have. Prints "reorder OK" per rank. Needs an even
 * number of ranks, at most 64.
 * Usage: loggp-test-reorder */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (np % 2 || np > 64) {
        if (me == 0)
            fprintf(stderr, "loggp-test-reorder: needs an even number of ranks up to 64, got %d\n", np);
        MPI_Finalize();
        return 2;
    }
    MPI_Comm reversed, half;
    MPI_Comm_split(MPI_COMM_WORLD, 0, np - 1 - me, &reversed);
    MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
    int r, n, bad = 0;
    MPI_Comm_rank(reversed, &r);
    MPI_Comm_size(reversed, &n);
    bad += r != np - 1 - me;

    int out[64], in[64], count = 0;
    for (int i = 0; i < 64; i++)
        out[i] = me;
    MPI_Request rq[2];
    MPI_Status st[2];
    MPI_Irecv(in, 64, MPI_INT, (r + n - 1) % n, 1, reversed, &rq[0]);
    MPI_Isend(out, me + 1, MPI_INT, (r + 1) % n, 1, reversed, &rq[1]);
    MPI_Waitall(2, rq, st);
    MPI_Get_count(&st[0], MPI_INT, &count);
    int from = (me + 1) % np; /* the rank before mine in reversed order */
    bad += in[0] != from || count != from + 1;

    int root_value = me;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, reversed);
    bad += root_value != np - 1;
    int sum = 0;
    MPI_Allreduce(&me, &sum, 1, MPI_INT, MPI_SUM, reversed);
    bad += sum != np * (np - 1) / 2;

    int h;
    MPI_Comm_rank(half, &h);
    if (h == 0)
        MPI_Send(out, 4, MPI_INT, 1, 2, half);
    else if (h == 1) {
        MPI_Recv(in, 64, MPI_INT, 0, 2, half, &st[0]);
        bad += in[0] != me - 2;
    }
    MPI_Barrier(half);

    MPI_Comm_free(&reversed);
    MPI_Comm_free(&half);
    if (!bad)
        printf("reorder OK\n");
    else
        fprintf(stderr, "rank %d: %d of the exchanges on reordered communicators went wrong\n", me, bad);
    MPI_Finalize();
    return bad ? 1 : 0;
}

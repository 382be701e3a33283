/* A loop of one collective on MPI_COMM_WORLD, for analysis/bench/collective_flights.py:
 *     collective_loop NAME BYTES ITERS TYPE SYNC
 * TYPE d, i or c (double, int, signed char) for the reductions' elements; SYNC 1 puts a
 * barrier after each call (a rooted collective's loop would otherwise pipeline). BYTES is
 * the size the trace records (docs/predict.md): one rank's block, the root's whole buffer
 * for Scatter, everything one rank sends for Alltoall(v) and Reduce_scatter(_block).
 * Rank 0 prints the median time of one iteration in ns. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    if (argc != 6) {
        if (me == 0)
            fprintf(stderr, "usage: collective_loop NAME BYTES ITERS d|i|c 0|1\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    const char *name = argv[1];
    long nbytes = atol(argv[2]);
    int iters = atoi(argv[3]), sync = atoi(argv[5]);
    char kind = argv[4][0];
    MPI_Datatype type = kind == 'd' ? MPI_DOUBLE : kind == 'i' ? MPI_INT : MPI_SIGNED_CHAR;
    int width = kind == 'd' ? 8 : kind == 'i' ? 4 : 1;
    if (nbytes < 0 || iters < 1 || nbytes % width) {
        if (me == 0)
            fprintf(stderr, "collective_loop: %ld bytes of '%c' elements, %d iterations: not a loop\n", nbytes,
                    kind, iters);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    int count = (int)(nbytes / width);
    char *a = calloc((size_t)nbytes * np + 64, 1), *b = calloc((size_t)nbytes * np + 64, 1);
    int *counts = malloc(np * sizeof *counts), *displs = malloc(np * sizeof *displs);
    double *took = malloc(iters * sizeof *took);
    for (int r = 0; r < np; r++) {
        counts[r] = count / np;
        displs[r] = r * (count / np);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double prev = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (!strcmp(name, "Allreduce"))
            MPI_Allreduce(a, b, count, type, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(name, "Reduce"))
            MPI_Reduce(a, b, count, type, MPI_SUM, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "Scan"))
            MPI_Scan(a, b, count, type, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(name, "Exscan"))
            MPI_Exscan(a, b, count, type, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(name, "Reduce_scatter_block"))
            MPI_Reduce_scatter_block(a, b, count / np, type, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(name, "Reduce_scatter"))
            MPI_Reduce_scatter(a, b, counts, type, MPI_SUM, MPI_COMM_WORLD);
        else if (!strcmp(name, "Bcast"))
            MPI_Bcast(a, count, type, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "Gather"))
            MPI_Gather(a, count, type, b, count, type, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "Scatter"))
            MPI_Scatter(a, count / np, type, b, count / np, type, 0, MPI_COMM_WORLD);
        else if (!strcmp(name, "Allgather"))
            MPI_Allgather(a, count, type, b, count, type, MPI_COMM_WORLD);
        else if (!strcmp(name, "Alltoall"))
            MPI_Alltoall(a, count / np, type, b, count / np, type, MPI_COMM_WORLD);
        else if (!strcmp(name, "Alltoallv"))
            MPI_Alltoallv(a, counts, displs, type, b, counts, displs, type, MPI_COMM_WORLD);
        else if (!strcmp(name, "Barrier"))
            MPI_Barrier(MPI_COMM_WORLD);
        else {
            if (me == 0)
                fprintf(stderr, "collective_loop: unknown collective '%s'\n", name);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        if (sync)
            MPI_Barrier(MPI_COMM_WORLD);
        double now = MPI_Wtime();
        took[i] = now - prev;
        prev = now;
    }
    qsort(took, iters, sizeof *took, by_value);
    for (int i = 0; me == 0 && i < iters; i++) /* every call: the caller takes the median and its interval */
        printf("%.0f\n", took[i] * 1e9);
    free(a), free(b), free(counts), free(displs), free(took);
    MPI_Finalize();
    return 0;
}

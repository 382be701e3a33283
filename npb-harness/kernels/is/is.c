/* NPB IS (integer sort), written from the NPB specification: rank
 * 2^keys_log2 integer keys drawn from NPB's generator, ten times, with a
 * bucketed parallel counting sort. Communication per iteration, as in the
 * reference: one Allreduce of the bucket sizes, one Alltoall of the send
 * counts and one Alltoallv of the keys. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "npb.h"

enum { IS_ITERATIONS = 10, IS_TESTS = 5 };

static const double IS_SEED = 314159265.0;
static const double IS_MULT = 1220703125.0; /* 5^13 */

typedef struct {
    char cls;
    int keys_log2, max_key_log2, buckets_log2, max_procs;
    long test_index[IS_TESTS]; /* global positions of the partial-verification keys */
    long test_rank[IS_TESTS];  /* their published ranks, before the per-iteration shift */
} is_class;

/* NPB 3.4 class parameters and partial-verification data. */
static const is_class IS_CLASSES[] = {
    {'S', 16, 11, 9, 128, {48427, 17148, 23627, 62548, 4431}, {0, 18, 346, 64917, 65463}},
    {'W', 20, 16, 10, 1024, {357773, 934767, 875723, 898999, 404505},
     {1249, 11698, 1039987, 1043896, 1048018}},
    {'A', 23, 19, 10, 1024, {2112377, 662041, 5336171, 3642833, 4250760},
     {104, 17523, 123928, 8288932, 8388264}},
    {'B', 25, 21, 10, 1024, {41869, 812306, 5102857, 18232239, 26860214},
     {33422937, 10244, 59149, 33135281, 99}},
};

/* Each iteration alters two keys, so the expected rank of test key i moves
 * with the iteration; the direction is part of NPB's verification data. */
static long expected_rank(const is_class *c, int i, int iteration)
{
    long r = c->test_rank[i];
    switch (c->cls) {
    case 'S': return i <= 2 ? r + iteration : r - iteration;
    case 'W': return i < 2 ? r + iteration - 2 : r - iteration;
    case 'A': return i <= 2 ? r + iteration - 1 : r - (iteration - 1);
    case 'B': return (i == 1 || i == 2 || i == 4) ? r + iteration : r - iteration;
    }
    return -1;
}

typedef struct {
    const is_class *c;
    int rank, nprocs;
    long total_keys, my_keys;
    int max_key, nbuckets, shift;
    int *keys;          /* this process's share of the key sequence */
    int *by_bucket;     /* keys grouped by bucket, to be sent */
    int *received;      /* keys of this process's bucket range after the exchange */
    long received_cap;
    int *key_counts;    /* per-key population, then cumulative: the ranks */
    int *bucket_size, *bucket_totals, *bucket_ptr;
    int *first_bucket, *last_bucket;
    int *send_count, *send_displ, *recv_count, *recv_displ;
    int passed;
    /* kept from the last iteration for the full verification */
    long local_total;
    int min_key;
} is_state;

static void *checked_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "loggp-npb-is: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

/* Keys of process `rank`: a contiguous piece of one global sequence, each
 * key from four uniforms: key = (max_key/4) * (r1 + r2 + r3 + r4). */
static void generate_keys(is_state *s)
{
    long numbers_per_proc = 4 * s->my_keys;
    /* jump = a^numbers_per_proc; seed = IS_SEED * jump^rank */
    double jump = IS_MULT;
    for (long n = numbers_per_proc; n > 1; n /= 2)
        npb_randlc(&jump, jump);
    double seed = IS_SEED, power = jump;
    for (long k = s->rank; k > 0; k /= 2) {
        if (k & 1)
            npb_randlc(&seed, power);
        if (k > 1)
            npb_randlc(&power, power);
    }
    const double scale = s->max_key / 4;
    enum { CHUNK = 4096 };
    double r[4 * CHUNK];
    for (long done = 0; done < s->my_keys; done += CHUNK) {
        long n = s->my_keys - done < CHUNK ? s->my_keys - done : CHUNK;
        npb_vranlc((int)(4 * n), &seed, IS_MULT, r);
        for (long i = 0; i < n; i++) {
            double x = r[4 * i];
            x += r[4 * i + 1];
            x += r[4 * i + 2];
            x += r[4 * i + 3];
            s->keys[done + i] = (int)(scale * x);
        }
    }
}

static void rank_keys(is_state *s, int iteration)
{
    const int nb = s->nbuckets, shift = s->shift;

    if (s->rank == 0) {
        s->keys[iteration] = iteration;
        s->keys[iteration + IS_ITERATIONS] = s->max_key - iteration;
    }

    memset(s->bucket_size, 0, sizeof(int) * (nb + IS_TESTS));
    /* The test keys' values ride along in the bucket-size reduction. */
    for (int i = 0; i < IS_TESTS; i++)
        if (s->c->test_index[i] / s->my_keys == s->rank)
            s->bucket_size[nb + i] = s->keys[s->c->test_index[i] % s->my_keys];

    /* Locals for the hot loops: int stores through the arrays could
     * otherwise alias the int fields of *s and force reloads. */
    const int *keys = s->keys;
    const long my_keys = s->my_keys;
    int *bucket_size = s->bucket_size, *bucket_ptr = s->bucket_ptr, *by_bucket = s->by_bucket;
    for (long i = 0; i < my_keys; i++)
        bucket_size[keys[i] >> shift]++;
    bucket_ptr[0] = 0;
    for (int b = 1; b < nb; b++)
        bucket_ptr[b] = bucket_ptr[b - 1] + bucket_size[b - 1];
    for (long i = 0; i < my_keys; i++) {
        int key = keys[i];
        by_bucket[bucket_ptr[key >> shift]++] = key;
    }

    MPI_Allreduce(s->bucket_size, s->bucket_totals, nb + IS_TESTS, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);

    /* Whole buckets go to process p until the running total passes
     * (p+1) * keys-per-process: every process gets keys to rank. */
    long running_total = 0;
    int local_run = 0, p = 0;
    for (int b = 0; b < nb; b++) {
        running_total += s->bucket_totals[b];
        local_run += s->bucket_size[b];
        if (running_total >= (long)(p + 1) * s->my_keys) {
            s->send_count[p] = local_run;
            s->send_displ[p] = p == 0 ? 0 : s->send_displ[p - 1] + s->send_count[p - 1];
            s->first_bucket[p] = p == 0 ? 0 : s->last_bucket[p - 1] + 1;
            s->last_bucket[p] = b;
            p++;
            local_run = 0;
        }
    }
    for (; p < s->nprocs; p++) { /* processes left without buckets get an empty range */
        s->send_count[p] = 0;
        s->send_displ[p] = p == 0 ? 0 : s->send_displ[p - 1] + s->send_count[p - 1];
        s->first_bucket[p] = nb;
        s->last_bucket[p] = nb - 1;
    }

    MPI_Alltoall(s->send_count, 1, MPI_INT, s->recv_count, 1, MPI_INT, MPI_COMM_WORLD);
    long recv_total = 0;
    for (int q = 0; q < s->nprocs; q++) {
        s->recv_displ[q] = (int)recv_total;
        recv_total += s->recv_count[q];
    }
    if (recv_total > s->received_cap) {
        free(s->received);
        s->received_cap = recv_total + recv_total / 4;
        s->received = checked_malloc(sizeof(int) * s->received_cap);
    }
    MPI_Alltoallv(s->by_bucket, s->send_count, s->send_displ, MPI_INT, s->received,
                  s->recv_count, s->recv_displ, MPI_INT, MPI_COMM_WORLD);

    int min_key = s->first_bucket[s->rank] << shift;
    int max_key = ((s->last_bucket[s->rank] + 1) << shift) - 1;
    long range = (long)max_key - min_key + 1;
    int *count = s->key_counts;
    if (range > 0)
        memset(count, 0, sizeof(int) * range);

    long lesser = 0; /* keys held by lower-ranked processes */
    for (int q = 0; q < s->rank; q++)
        for (int b = s->first_bucket[q]; b <= s->last_bucket[q]; b++)
            lesser += s->bucket_totals[b];

    const int *received = s->received;
    int *count_at_key = count - min_key; /* indexed by key value */
    for (long i = 0; i < recv_total; i++)
        count_at_key[received[i]]++;
    for (long k = 1; k < range; k++)
        count[k] += count[k - 1];

    for (int i = 0; i < IS_TESTS; i++) {
        int key = s->bucket_totals[nb + i];
        if (key < min_key || key > max_key)
            continue;
        long rank = lesser + (key > min_key ? count[key - 1 - min_key] : 0);
        long want = expected_rank(s->c, i, iteration);
        if (rank == want)
            s->passed++;
        else
            printf(" Failed partial verification: iteration %d, process %d, test key %d,"
                   " rank %ld, expected %ld\n", iteration, s->rank, i, rank, want);
    }
    s->local_total = recv_total;
    s->min_key = min_key;
}

/* Sorts the last iteration's keys with their ranks and checks the order,
 * locally and across the process boundary. */
static void full_verify(is_state *s)
{
    int *sorted = s->keys; /* free to reuse now */
    if (s->local_total > s->my_keys) {
        sorted = checked_malloc(sizeof(int) * s->local_total);
    }
    for (long i = 0; i < s->local_total; i++) {
        int key = s->received[i];
        sorted[--s->key_counts[key - s->min_key]] = key;
    }
    int from_left = 0;
    MPI_Request req = MPI_REQUEST_NULL;
    if (s->rank > 0)
        MPI_Irecv(&from_left, 1, MPI_INT, s->rank - 1, 1000, MPI_COMM_WORLD, &req);
    if (s->rank < s->nprocs - 1) {
        int last = s->local_total > 0 ? sorted[s->local_total - 1] : 0;
        MPI_Send(&last, 1, MPI_INT, s->rank + 1, 1000, MPI_COMM_WORLD);
    }
    MPI_Wait(&req, MPI_STATUS_IGNORE);

    long out_of_order = 0;
    if (s->rank > 0 && s->local_total > 0 && from_left > sorted[0])
        out_of_order++;
    for (long i = 1; i < s->local_total; i++)
        if (sorted[i - 1] > sorted[i])
            out_of_order++;
    if (out_of_order)
        printf(" Process %d: full verification: %ld keys out of order\n", s->rank, out_of_order);
    else
        s->passed++;
    if (sorted != s->keys)
        free(sorted);
}

int main(int argc, char **argv)
{
    is_state s = {0};
    npb_args args;
    int status = npb_begin(&argc, &argv, "is", "SWAB", &s.rank, &s.nprocs, &args);
    if (status >= 0)
        return status;
    for (size_t i = 0; i < sizeof IS_CLASSES / sizeof IS_CLASSES[0]; i++)
        if (IS_CLASSES[i].cls == args.cls)
            s.c = &IS_CLASSES[i];
    const is_class *c = s.c;

    if (!npb_is_power_of_two(s.nprocs) || s.nprocs > c->max_procs) {
        if (s.rank == 0)
            fprintf(stderr, "loggp-npb-is: %d processes: class %c needs a power of two"
                    " from 1 to %d\n", s.nprocs, c->cls, c->max_procs);
        MPI_Finalize();
        return 2;
    }

    s.total_keys = 1L << c->keys_log2;
    s.my_keys = s.total_keys / s.nprocs;
    s.max_key = 1 << c->max_key_log2;
    s.nbuckets = 1 << c->buckets_log2;
    s.shift = c->max_key_log2 - c->buckets_log2;

    if (s.rank == 0) {
        printf("\n\n NAS Parallel Benchmarks 3.4 (loggp C+MPI) -- IS Benchmark\n\n");
        printf(" Size:  %ld  (class %c)\n", s.total_keys, c->cls);
        printf(" Iterations:   %d\n", IS_ITERATIONS);
        printf(" Total number of processes:  %d\n", s.nprocs);
    }

    s.keys = checked_malloc(sizeof(int) * s.my_keys);
    s.by_bucket = checked_malloc(sizeof(int) * s.my_keys);
    s.received_cap = s.my_keys + s.my_keys / 2;
    s.received = checked_malloc(sizeof(int) * s.received_cap);
    s.key_counts = checked_malloc(sizeof(int) * s.max_key);
    s.bucket_size = checked_malloc(sizeof(int) * (s.nbuckets + IS_TESTS));
    s.bucket_totals = checked_malloc(sizeof(int) * (s.nbuckets + IS_TESTS));
    s.bucket_ptr = checked_malloc(sizeof(int) * s.nbuckets);
    s.first_bucket = checked_malloc(sizeof(int) * s.nprocs);
    s.last_bucket = checked_malloc(sizeof(int) * s.nprocs);
    s.send_count = checked_malloc(sizeof(int) * s.nprocs);
    s.send_displ = checked_malloc(sizeof(int) * s.nprocs);
    s.recv_count = checked_malloc(sizeof(int) * s.nprocs);
    s.recv_displ = checked_malloc(sizeof(int) * s.nprocs);

    generate_keys(&s);
    if (args.perturb) {
        /* test only: move test key 2 to the far side of the key range */
        long at = c->test_index[2];
        if (at / s.my_keys == s.rank) {
            int *key = &s.keys[at % s.my_keys];
            *key = (*key + s.max_key / 2) % s.max_key;
        }
    }

    rank_keys(&s, 1); /* untimed warm-up, as in the reference */
    s.passed = 0;

    /* No barrier here: the reference starts its clock right after the
     * warm-up iteration, whose Alltoallv already lines the processes up. */
    double t_start = MPI_Wtime();
    MPI_Pcontrol(1); /* the timed section is the kernel region (a study's scope = "kernel") */
    for (int it = 1; it <= IS_ITERATIONS; it++)
        rank_keys(&s, it);
    MPI_Pcontrol(0);
    double elapsed = MPI_Wtime() - t_start, max_elapsed = 0.0;
    MPI_Reduce(&elapsed, &max_elapsed, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    full_verify(&s);
    int passed_total = 0;
    MPI_Reduce(&s.passed, &passed_total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);

    int verified = 0;
    if (s.rank == 0) {
        int want = IS_TESTS * IS_ITERATIONS + s.nprocs;
        verified = passed_total == want;
        printf("\n Verification checks passed: %d of %d\n", passed_total, want);
        npb_report report = {
            .name = "IS", .cls = c->cls, .size = {s.total_keys, 0, 0},
            .niter = IS_ITERATIONS, .time_s = max_elapsed,
            .mops = max_elapsed > 0 ? (double)IS_ITERATIONS * s.total_keys / max_elapsed / 1.0e6 : 0.0,
            .optype = "keys ranked", .verified = verified, .nprocs = s.nprocs,
        };
        npb_print_report(&report);
    }
    MPI_Bcast(&verified, 1, MPI_INT, 0, MPI_COMM_WORLD);

    free(s.keys); free(s.by_bucket); free(s.received); free(s.key_counts);
    free(s.bucket_size); free(s.bucket_totals); free(s.bucket_ptr);
    free(s.first_bucket); free(s.last_bucket);
    free(s.send_count); free(s.send_displ); free(s.recv_count); free(s.recv_displ);
    MPI_Finalize();
    return verified ? 0 : 1;
}

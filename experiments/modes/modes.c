/* loggp-modes: one-way and round-trip times of blocking and non-blocking
 * point-to-point calls per message size, side by side in one run (the table
 * Broxton and Kielmann measured by hand). np=2.
 *
 * Modes: send (MPI_Send / MPI_Recv), ssend (MPI_Ssend / MPI_Recv), isend
 * (MPI_Isend + MPI_Wait / MPI_Irecv + MPI_Wait). For each size, rounds
 * interleave the modes; each round takes REPS samples of each and reports
 * their medians.
 *   round trip: rank 0 sends, rank 1 sends back, both with the mode's calls
 *   one way:    from rank 0's call to rank 1's receive completing, on rank 0's
 *               clock (rank 1's clock offset estimated first from the
 *               fastest of 64 exchanges; zero when both share one host's clock)
 * Output: one JSON line per mode, size and round.
 * usage: loggp-modes [--modes send,ssend,isend] [--sizes 8,1K,64K] [--reps N] [--rounds N] */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { SEND, SSEND, ISEND, MODES };
static const char *const mode_names[MODES] = {"send", "ssend", "isend"};

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void send_with(int mode, char *buf, int n, int peer, int tag)
{
    MPI_Request r;
    switch (mode) {
    case SEND:
        MPI_Send(buf, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD);
        break;
    case SSEND:
        MPI_Ssend(buf, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD);
        break;
    default:
        MPI_Isend(buf, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
}

static void recv_with(int mode, char *buf, int n, int peer, int tag)
{
    if (mode == ISEND) {
        MPI_Request r;
        MPI_Irecv(buf, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    } else {
        MPI_Recv(buf, n, MPI_CHAR, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

static int cmp(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int64_t median(int64_t *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Rank 1's clock minus rank 0's, from the exchange with the shortest round
 * trip; 0 when both run on one host, whose CLOCK_MONOTONIC they share. */
static int64_t clock_offset(int rank)
{
    char mine[MPI_MAX_PROCESSOR_NAME] = "", other[MPI_MAX_PROCESSOR_NAME] = "";
    int len;
    MPI_Get_processor_name(mine, &len);
    MPI_Sendrecv(mine, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1 - rank, 89, other, MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                 1 - rank, 89, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (strcmp(mine, other) == 0)
        return 0;
    int64_t best_rtt = INT64_MAX, offset = 0, t1 = 0;
    for (int i = 0; i < 64; i++) {
        if (rank == 0) {
            int64_t t0 = now_ns();
            MPI_Send(&t0, 1, MPI_INT64_T, 1, 90, MPI_COMM_WORLD);
            MPI_Recv(&t1, 1, MPI_INT64_T, 1, 91, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            int64_t t2 = now_ns();
            if (t2 - t0 < best_rtt) {
                best_rtt = t2 - t0;
                offset = t1 - (t0 + t2) / 2;
            }
        } else {
            int64_t t0;
            MPI_Recv(&t0, 1, MPI_INT64_T, 0, 90, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            t1 = now_ns();
            MPI_Send(&t1, 1, MPI_INT64_T, 0, 91, MPI_COMM_WORLD);
        }
    }
    MPI_Bcast(&offset, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    return offset;
}

static long parse_size(const char *s)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || v < 0)
        return -1;
    if (*end == 'K' && !end[1])
        v <<= 10;
    else if (*end == 'M' && !end[1])
        v <<= 20;
    else if (*end)
        return -1;
    return v <= (1L << 26) ? v : -1;
}

static int usage(int rank, const char *what, const char *value)
{
    if (rank == 0)
        fprintf(stderr, "loggp-modes: bad %s '%s'\nusage: loggp-modes [--modes send,ssend,isend] "
                        "[--sizes 8,1K,64K] [--reps N] [--rounds N] (np=2)\n", what, value);
    return 2;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) /* before MPI_Init: help needs no ranks */
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: mpiexec -n 2 loggp-modes [--modes send,ssend,isend] [--sizes 8,1K,64K] [--reps N] "
                   "[--rounds N]\n"
                   "One-way and round-trip times of blocking and non-blocking point-to-point calls per\n"
                   "size: the program behind `loggp probe --modes`, which runs it under the knobs.\n"
                   "example: mpiexec -n 2 loggp-modes --sizes 8,1K --reps 20 --rounds 1\n");
            return 0;
        }
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int use[MODES] = {1, 1, 1}, reps = 50, rounds = 3, nsizes = 0;
    long sizes[64];
    int bad = size != 2 ? usage(rank, "number of ranks (np must be 2)", "") : 0;
    for (int i = 1; i < argc && !bad; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : "";
        if (strcmp(argv[i], "--modes") == 0) {
            memset(use, 0, sizeof use);
            char list[256];
            snprintf(list, sizeof list, "%s", v);
            for (char *tok = strtok(list, ","); tok && !bad; tok = strtok(NULL, ",")) {
                int found = 0;
                for (int m = 0; m < MODES; m++)
                    if (strcmp(tok, mode_names[m]) == 0)
                        use[m] = found = 1;
                if (strcmp(tok, "all") == 0)
                    use[SEND] = use[SSEND] = use[ISEND] = found = 1;
                if (!found)
                    bad = usage(rank, "--modes", tok);
            }
        } else if (strcmp(argv[i], "--sizes") == 0) {
            char list[512];
            snprintf(list, sizeof list, "%s", v);
            for (char *tok = strtok(list, ","); tok && !bad; tok = strtok(NULL, ",")) {
                long s = parse_size(tok);
                if (s < 0 || nsizes == 64)
                    bad = usage(rank, "--sizes", tok);
                else
                    sizes[nsizes++] = s;
            }
        } else if (strcmp(argv[i], "--reps") == 0 || strcmp(argv[i], "--rounds") == 0) {
            char *end;
            long n = strtol(v, &end, 10);
            if (!*v || *end || n < 1 || n > 100000)
                bad = usage(rank, argv[i], v);
            else if (argv[i][2] == 'r' && argv[i][3] == 'e')
                reps = (int)n;
            else
                rounds = (int)n;
        } else {
            bad = usage(rank, "option", argv[i]);
        }
    }
    if (bad) {
        MPI_Finalize();
        return bad;
    }
    if (!nsizes) {
        static const long defaults[] = {8, 1024, 8192, 65536};
        for (nsizes = 0; nsizes < 4; nsizes++)
            sizes[nsizes] = defaults[nsizes];
    }
    long largest = 0;
    for (int s = 0; s < nsizes; s++)
        largest = sizes[s] > largest ? sizes[s] : largest;
    char *buf = calloc((size_t)largest + 1, 1);
    int64_t *oneway = malloc(sizeof *oneway * (size_t)reps), *trip = malloc(sizeof *trip * (size_t)reps);
    int64_t offset = clock_offset(rank);
    for (int s = 0; s < nsizes; s++) {
        int n = (int)sizes[s];
        for (int round = 0; round < rounds; round++) {
            for (int k = 0; k < MODES; k++) {
                int m = (k + round) % MODES; /* a different mode first each round */
                if (!use[m])
                    continue;
                if (rank == 0) { /* warm-up, both ways (never two synchronous sends at once) */
                    send_with(m, buf, n, 1, 1);
                    recv_with(m, buf, n, 1, 1);
                } else {
                    recv_with(m, buf, n, 0, 1);
                    send_with(m, buf, n, 0, 1);
                }
                for (int i = 0; i < reps; i++) {
                    if (rank == 0) {
                        int64_t t0 = now_ns(), t_recv;
                        send_with(m, buf, n, 1, 2);
                        MPI_Recv(&t_recv, 1, MPI_INT64_T, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                        oneway[i] = t_recv - offset - t0;
                        t0 = now_ns();
                        send_with(m, buf, n, 1, 4);
                        recv_with(m, buf, n, 1, 4);
                        trip[i] = now_ns() - t0;
                    } else {
                        recv_with(m, buf, n, 0, 2);
                        int64_t t_recv = now_ns();
                        MPI_Send(&t_recv, 1, MPI_INT64_T, 0, 3, MPI_COMM_WORLD);
                        recv_with(m, buf, n, 0, 4);
                        send_with(m, buf, n, 0, 4);
                    }
                }
                if (rank == 0)
                    printf("{\"mode\": \"%s\", \"bytes\": %d, \"round\": %d, \"oneway_ns\": %lld, "
                           "\"roundtrip_ns\": %lld, \"reps\": %d}\n",
                           mode_names[m], n, round, (long long)median(oneway, reps), (long long)median(trip, reps),
                           reps);
            }
        }
    }
    if (rank == 0)
        printf("{\"clock_offset_ns\": %lld}\n", (long long)offset);
    free(buf);
    free(oneway);
    free(trip);
    MPI_Finalize();
    return 0;
}

/* loggp-packet: the packet-size tuning benchmark (Michel and Devaney's AutoLink
 * experiment). Rank 0 owns a linked structure of N records of R bytes, scattered
 * in memory; it walks it breadth first through the pointers, packs
 * BE = max(1, P div R) records per packet and sends each full packet (and the
 * last partial one). Rank 1 unpacks, rebuilds the links and, outside the timed
 * part, verifies payload and topology against rank 0's checksum.
 *
 * Wire record (R bytes): id, left child id, right child id (uint64, NONE for
 * none), then R - 24 payload bytes. Output: JSON lines on stdout (or --out). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HEADER 24u
#define NONE UINT64_MAX
#define TAG_PACKET 1
#define TAG_ACK 2
#define TAG_STATUS 3
#define MAX_SIZES 256

static int my_rank; /* only rank 0 reports bad usage */

struct record {
    struct record *child[2];
    uint64_t id;
    unsigned char payload[]; /* R - HEADER bytes */
};

struct options {
    uint64_t records;
    uint32_t record_size;
    uint64_t sizes[MAX_SIZES];
    int n_sizes;
    int reps;
    int corrupt;
    uint64_t seed;
    const char *out;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static unsigned char payload_byte(uint64_t id, uint32_t j)
{
    return (unsigned char)((id * 2654435761u + j * 40503u) >> 7);
}

static uint64_t mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* One block of N slots; logical record i lives at a shuffled slot, so that
 * following a pointer (and the breadth-first order) misses the cache. */
static struct record *slot(unsigned char *block, uint32_t rsize, uint64_t k)
{
    return (struct record *)(block + k * (uint64_t)rsize);
}

static struct record *build(unsigned char **block_out, const struct options *o)
{
    uint64_t n = o->records, s = o->seed | 1;
    uint32_t rs = o->record_size;
    unsigned char *block = malloc(n * rs);
    uint64_t *where = malloc(n * sizeof *where);
    if (!block || !where) {
        fprintf(stderr, "loggp-packet: out of memory for %" PRIu64 " records of %u B\n", n, rs);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (uint64_t i = 0; i < n; i++)
        where[i] = i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = rng_next(&s) % (i + 1), t = where[i];
        where[i] = where[j];
        where[j] = t;
    }
    for (uint64_t i = 0; i < n; i++) {
        struct record *r = slot(block, rs, where[i]);
        r->id = i;
        for (int c = 0; c < 2; c++)
            r->child[c] = 2 * i + 1 + c < n ? slot(block, rs, where[2 * i + 1 + c]) : NULL;
        for (uint32_t j = 0; j < rs - HEADER; j++)
            r->payload[j] = payload_byte(i, j);
    }
    struct record *root = slot(block, rs, where[0]);
    free(where);
    *block_out = block;
    return root;
}

/* Breadth-first walk; calls visit for each record in order. */
struct walk {
    struct record **queue;
    uint64_t head, tail;
};

static void walk_start(struct walk *w, struct record *root)
{
    w->head = 0;
    w->tail = 0;
    w->queue[w->tail++] = root;
}

static struct record *walk_next(struct walk *w)
{
    if (w->head == w->tail)
        return NULL;
    struct record *r = w->queue[w->head++];
    for (int c = 0; c < 2; c++)
        if (r->child[c])
            w->queue[w->tail++] = r->child[c];
    return r;
}

static void pack(unsigned char *dst, const struct record *r, uint32_t rs)
{
    uint64_t h[3] = {r->id, r->child[0] ? r->child[0]->id : NONE, r->child[1] ? r->child[1]->id : NONE};
    memcpy(dst, h, HEADER);
    memcpy(dst + HEADER, r->payload, rs - HEADER);
}

/* Unpacks one wire record into its slot of the receiver's array; links later. */
static void unpack(unsigned char *recs, uint64_t *links, const unsigned char *src, uint32_t rs, uint64_t n)
{
    uint64_t h[3];
    memcpy(h, src, HEADER);
    uint64_t id = h[0] < n ? h[0] : 0; /* a corrupt id must not write out of bounds */
    struct record *r = slot(recs, rs, id);
    r->id = h[0];
    links[2 * id] = h[1];
    links[2 * id + 1] = h[2];
    memcpy(r->payload, src + HEADER, rs - HEADER);
}

static int relink(unsigned char *recs, const uint64_t *links, uint32_t rs, uint64_t n)
{
    int bad = 0;
    for (uint64_t i = 0; i < n; i++)
        for (int c = 0; c < 2; c++) {
            uint64_t l = links[2 * i + c];
            if (l != NONE && l >= n)
                bad = 1;
            slot(recs, rs, i)->child[c] = l != NONE && l < n ? slot(recs, rs, l) : NULL;
        }
    return bad;
}

/* Checksum over payload and topology in breadth-first order; counts records. */
static uint64_t checksum(struct walk *w, struct record *root, uint32_t rs, uint64_t n, uint64_t *count)
{
    uint64_t h = 1469598103934665603ull, k = 0;
    walk_start(w, root);
    for (struct record *r; (r = walk_next(w)) && k <= n; k++) {
        h = mix(h, r->id);
        for (int c = 0; c < 2; c++)
            h = mix(h, r->child[c] ? r->child[c]->id : NONE);
        for (uint32_t j = 0; j < rs - HEADER; j++)
            h = mix(h, r->payload[j]);
        if (w->tail > n) /* a cycle in a corrupt structure */
            break;
    }
    *count = k;
    return h;
}

static uint64_t records_per_packet(uint64_t p, uint32_t rs)
{
    return p / rs > 0 ? p / rs : 1;
}

static void usage_error(const char *what, const char *value)
{
    if (my_rank != 0)
        return;
    fprintf(stderr, "loggp-packet: bad %s '%s'\n"
            "usage: loggp-packet [--records N] [--record-size R>=%u] [--sizes P,P,...] [--reps K] "
            "[--seed S] [--out FILE] [--corrupt]\n", what, value, HEADER);
}

static int parse_u64(const char *text, uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    uint64_t scale = 1;
    if (*end == 'K' || *end == 'k')
        scale = 1024, end++;
    else if (*end == 'M' || *end == 'm')
        scale = 1024 * 1024, end++;
    if (errno || end == text || *end || text[0] == '-' || v > max / scale || v * scale < min)
        return -1;
    *out = v * scale;
    return 0;
}

static int parse_options(int argc, char **argv, struct options *o)
{
    *o = (struct options){.records = 4096, .record_size = 64, .n_sizes = 0, .reps = 5, .seed = 12345};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        uint64_t x;
        if (!strcmp(a, "--corrupt")) {
            o->corrupt = 1;
            continue;
        }
        if (!v) {
            usage_error("option (needs a value)", a);
            return -1;
        }
        i++;
        if (!strcmp(a, "--records")) {
            if (parse_u64(v, 1, UINT64_C(1) << 28, &o->records))
                return usage_error("--records", v), -1;
        } else if (!strcmp(a, "--record-size")) {
            if (parse_u64(v, HEADER, 1 << 20, &x))
                return usage_error("--record-size", v), -1;
            o->record_size = (uint32_t)x;
        } else if (!strcmp(a, "--reps")) {
            if (parse_u64(v, 1, 100000, &x))
                return usage_error("--reps", v), -1;
            o->reps = (int)x;
        } else if (!strcmp(a, "--seed")) {
            if (parse_u64(v, 1, UINT64_MAX, &o->seed))
                return usage_error("--seed", v), -1;
        } else if (!strcmp(a, "--out")) {
            o->out = v;
        } else if (!strcmp(a, "--sizes")) {
            char buf[4096], *save = NULL;
            snprintf(buf, sizeof buf, "%s", v);
            for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
                if (o->n_sizes == MAX_SIZES || parse_u64(t, 1, UINT64_C(1) << 30, &x))
                    return usage_error("--sizes entry", t), -1;
                o->sizes[o->n_sizes++] = x;
            }
            if (!o->n_sizes)
                return usage_error("--sizes", v), -1;
        } else {
            return usage_error("option", a), -1;
        }
    }
    if (o->records * o->record_size > INT32_MAX) { /* one packet must fit an MPI count */
        char text[64];
        snprintf(text, sizeof text, "%" PRIu64 " x %u B", o->records, o->record_size);
        return usage_error("structure size (records x record size over 2 GiB)", text), -1;
    }
    if (!o->n_sizes) {
        for (uint64_t p = 64; p <= 1024 * 1024; p *= 2)
            o->sizes[o->n_sizes++] = p;
    }
    return 0;
}

/* One timed transfer at packet size p; returns the time on rank 0 (start of the
 * walk to the receiver's ack that the links are rebuilt). */
static double send_structure(struct walk *w, struct record *root, const struct options *o, uint64_t p,
                             unsigned char *buf, uint64_t *corrupt_at)
{
    uint32_t rs = o->record_size;
    uint64_t be = records_per_packet(p, rs), fill = 0, k = 0;
    int ack;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    walk_start(w, root);
    for (struct record *r; (r = walk_next(w)); k++) {
        pack(buf + fill * rs, r, rs);
        if (corrupt_at && k == *corrupt_at)
            buf[fill * rs + (rs > HEADER ? HEADER : 0)] ^= 0x5a; /* the test hook */
        if (++fill == be) {
            MPI_Send(buf, (int)(fill * rs), MPI_BYTE, 1, TAG_PACKET, MPI_COMM_WORLD);
            fill = 0;
        }
    }
    if (fill)
        MPI_Send(buf, (int)(fill * rs), MPI_BYTE, 1, TAG_PACKET, MPI_COMM_WORLD);
    MPI_Recv(&ack, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return now() - t0;
}

static void receive_structure(const struct options *o, uint64_t p, unsigned char *buf, unsigned char *recs,
                              uint64_t *links, int *bad_links)
{
    uint32_t rs = o->record_size;
    uint64_t be = records_per_packet(p, rs), left = o->records;
    int ack = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    while (left) {
        uint64_t take = left < be ? left : be;
        MPI_Recv(buf, (int)(take * rs), MPI_BYTE, 0, TAG_PACKET, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (uint64_t i = 0; i < take; i++)
            unpack(recs, links, buf + i * rs, rs, o->records);
        left -= take;
    }
    *bad_links = relink(recs, links, rs, o->records);
    MPI_Send(&ack, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD);
}

/* Pack and unpack cost per record, measured apart from any send (median of 5). */
static void pack_costs(struct walk *w, struct record *root, const struct options *o, double *pack_ns,
                       double *unpack_ns)
{
    uint32_t rs = o->record_size;
    uint64_t n = o->records;
    unsigned char *wire = malloc(n * rs), *recs = malloc(n * rs);
    uint64_t *links = malloc(2 * n * sizeof *links);
    double tp[5], tu[5];
    if (!wire || !recs || !links) {
        fprintf(stderr, "loggp-packet: out of memory measuring the pack cost\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int t = 0; t < 5; t++) {
        uint64_t k = 0;
        double t0 = now();
        walk_start(w, root);
        for (struct record *r; (r = walk_next(w)); k++)
            pack(wire + k * rs, r, rs);
        double t1 = now();
        for (uint64_t i = 0; i < n; i++)
            unpack(recs, links, wire + i * rs, rs, n);
        relink(recs, links, rs, n);
        double t2 = now();
        tp[t] = (t1 - t0) * 1e9 / (double)n;
        tu[t] = (t2 - t1) * 1e9 / (double)n;
    }
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && tp[j] < tp[j - 1]; j--) {
            double x = tp[j]; tp[j] = tp[j - 1]; tp[j - 1] = x;
        }
    for (int i = 1; i < 5; i++)
        for (int j = i; j > 0 && tu[j] < tu[j - 1]; j--) {
            double x = tu[j]; tu[j] = tu[j - 1]; tu[j - 1] = x;
        }
    *pack_ns = tp[2];
    *unpack_ns = tu[2];
    free(wire);
    free(recs);
    free(links);
}

int main(int argc, char **argv)
{
    int rank, size, failed = 0;
    struct options o;
    for (int i = 1; i < argc; i++) /* before MPI_Init: help needs no ranks */
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            printf("usage: mpiexec -n 2 loggp-packet [--records N] [--record-size R>=%u] [--sizes P,P,...] "
                   "[--reps K] [--seed S] [--out FILE] [--corrupt]\n"
                   "The packet-size benchmark behind `loggp tune packet`: a linked structure of N records\n"
                   "of R bytes, packed into packets of each size P and rebuilt by rank 1 (K repetitions),\n"
                   "verified outside the timed part; --corrupt damages one record to prove the check.\n"
                   "JSON lines on stdout (or --out). Use `loggp tune packet`; this is its program.\n"
                   "example: mpiexec -n 2 loggp-packet --records 1024 --sizes 1K,64K --reps 3\n", HEADER);
            return 0;
        }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    my_rank = rank;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse_options(argc, argv, &o)) {
        MPI_Finalize();
        return 2;
    }
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-packet: needs exactly 2 ranks, got %d\n", size);
        MPI_Finalize();
        return 2;
    }
    uint32_t rs = o.record_size;
    uint64_t n = o.records, biggest = 0;
    for (int i = 0; i < o.n_sizes; i++) {
        uint64_t be = records_per_packet(o.sizes[i], rs), b = (be < n ? be : n) * rs;
        biggest = b > biggest ? b : biggest;
    }
    unsigned char *buf = malloc(biggest);
    struct walk w = {.queue = malloc(n * sizeof(struct record *))};
    FILE *out = stdout;
    if (!buf || !w.queue) {
        fprintf(stderr, "loggp-packet: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        unsigned char *block;
        struct record *root = build(&block, &o);
        uint64_t count, sum = checksum(&w, root, rs, n, &count), corrupt_at = n / 2;
        if (o.out && !(out = fopen(o.out, "w"))) {
            fprintf(stderr, "loggp-packet: cannot write --out '%s': %s\n", o.out, strerror(errno));
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        double pack_ns, unpack_ns;
        pack_costs(&w, root, &o, &pack_ns, &unpack_ns);
        fprintf(out, "{\"kind\":\"setup\",\"records\":%" PRIu64 ",\"record_size\":%u,\"reps\":%d,"
                "\"pack_ns_per_record\":%.3f,\"unpack_ns_per_record\":%.3f}\n", n, rs, o.reps, pack_ns, unpack_ns);
        for (int rep = 0; rep < o.reps && !failed; rep++)
            for (int i = 0; i < o.n_sizes && !failed; i++) {
                uint64_t p = o.sizes[i], be = records_per_packet(p, rs), status[2];
                double t = send_structure(&w, root, &o, p, buf, o.corrupt ? &corrupt_at : NULL);
                MPI_Send(&sum, 1, MPI_UINT64_T, 1, TAG_STATUS, MPI_COMM_WORLD);
                MPI_Recv(status, 2, MPI_UINT64_T, 1, TAG_STATUS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                if (!status[0]) {
                    fprintf(stderr, "loggp-packet: VERIFY FAILED at packet size %" PRIu64 " (rep %d): the rebuilt "
                            "structure differs from the sent one (%" PRIu64 " of %" PRIu64 " records reached, "
                            "checksum mismatch)\n", p, rep, status[1], n);
                    failed = 1;
                    break;
                }
                fprintf(out, "{\"kind\":\"run\",\"packet_size\":%" PRIu64 ",\"records_per_packet\":%" PRIu64
                        ",\"packets\":%" PRIu64 ",\"bytes\":%" PRIu64 ",\"rep\":%d,\"time_s\":%.9f}\n",
                        p, be, (n + be - 1) / be, n * rs, rep, t);
            }
        int stop = -1;
        MPI_Send(&stop, 1, MPI_INT, 1, TAG_ACK, MPI_COMM_WORLD);
        if (out != stdout && fclose(out)) {
            fprintf(stderr, "loggp-packet: cannot write --out '%s': %s\n", o.out, strerror(errno));
            failed = 1;
        }
        free(block);
    } else {
        unsigned char *recs = malloc(n * rs);
        uint64_t *links = malloc(2 * n * sizeof *links);
        if (!recs || !links) {
            fprintf(stderr, "loggp-packet: out of memory on rank 1\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int rep = 0; rep < o.reps; rep++)
            for (int i = 0; i < o.n_sizes; i++) {
                uint64_t expected, count, status[2];
                int bad_links;
                memset(links, 0xff, 2 * n * sizeof *links);
                receive_structure(&o, o.sizes[i], buf, recs, links, &bad_links);
                MPI_Recv(&expected, 1, MPI_UINT64_T, 0, TAG_STATUS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                uint64_t sum = checksum(&w, slot(recs, rs, 0), rs, n, &count);
                status[0] = !bad_links && count == n && sum == expected;
                status[1] = count;
                MPI_Send(status, 2, MPI_UINT64_T, 0, TAG_STATUS, MPI_COMM_WORLD);
                if (!status[0])
                    goto done;
            }
    done:
        {
            int stop;
            MPI_Recv(&stop, 1, MPI_INT, 0, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        }
        free(recs);
        free(links);
    }
    free(buf);
    free(w.queue);
    MPI_Finalize();
    return failed ? 1 : 0;
}

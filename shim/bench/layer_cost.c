/* loggp-layer-cost: what the libfabric layer itself costs per call, on a
 * provider that does nothing (no MPI, no second rank, no transport). It
 * times the calls a message makes through the layer: a poll that finds
 * nothing, a receive posted and its completion read, a stamped send. Each
 * mode (the provider's own table at zero knobs, then each knob armed at its
 * smallest step) runs in every round, interleaved; the figure is the median
 * over rounds of ns per call, with its 95 % interval. On a shared 2-core machine whose MPI figures move by 5 %
 * between runs this resolves a few ns: what a change to the hot path gains
 * is read here first, then confirmed with `loggp bench transparency`. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer.h"
#include "order.h"

/* ---- a provider that hands out what the bench queued, at no cost ---- */

#define QUEUE 64
static struct fi_cq_tagged_entry queued[QUEUE];
static size_t queued_head, queued_count;

static ssize_t fake_cq_read(struct fid_cq *cq, void *buf, size_t count)
{
    (void)cq;
    size_t n = 0;
    for (; n < count && queued_count; n++, queued_count--, queued_head = (queued_head + 1) % QUEUE)
        ((struct fi_cq_tagged_entry *)buf)[n] = queued[queued_head];
    return n ? (ssize_t)n : -FI_EAGAIN;
}

static int fake_close(struct fid *fid)
{
    (void)fid;
    return 0;
}

static int fake_bind(struct fid *fid, struct fid *bfid, uint64_t flags)
{
    (void)fid, (void)bfid, (void)flags;
    return 0;
}

static ssize_t fake_injectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                               uint64_t tag)
{
    (void)ep, (void)buf, (void)len, (void)data, (void)dest, (void)tag;
    return 0; /* the receives stamp their own entries (receives below) */
}

static ssize_t fake_recv(struct fid_ep *ep, void *buf, size_t len, void *desc, fi_addr_t src, uint64_t tag,
                         uint64_t ignore, void *ctx)
{
    (void)ep, (void)buf, (void)len, (void)desc, (void)src, (void)tag, (void)ignore, (void)ctx;
    return 0;
}

static struct fi_ops_cq fake_cq_ops = {.size = sizeof(struct fi_ops_cq), .read = fake_cq_read};
static struct fi_ops fake_fid_ops = {.size = sizeof(struct fi_ops), .close = fake_close, .bind = fake_bind};
static struct fi_ops_tagged fake_tagged_ops = {
    .size = sizeof(struct fi_ops_tagged), .recv = fake_recv, .injectdata = fake_injectdata};
static struct fid_cq cq;
static struct fid_ep ep;

/* ---- what one message does through the layer ---- */

typedef enum { CALL_EMPTY_POLL, CALL_SEND, CALL_RECEIVE, CALL_RECEIVE_BATCH, CALL_COUNT } call_kind;
static const char *const call_names[CALL_COUNT] = {"empty poll", "send (injectdata)", "receive (post + read)",
                                                   "receive, 8 per read"};
#define BATCH 8

static char payload[8];
static uint64_t contexts[QUEUE];

/* A send the layer stamps (or not), left where the next receive reads it. */
static void one_send(void)
{
    fi_tinjectdata(&ep, payload, sizeof payload, 0, 0, 7);
}

/* n receives posted, their messages arriving (stamped as sent now), and the
 * reads until their completions come out: n = 1 is a ping-pong's receive,
 * n = BATCH a window's, where one read hands out several. */
static void receives(size_t i, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        void *ctx = &contexts[(i * n + k) % QUEUE];
        fi_trecv(&ep, payload, sizeof payload, NULL, 0, 7, 0, ctx);
        struct fi_cq_tagged_entry e = {.op_context = ctx, .flags = FI_RECV | FI_TAGGED, .len = sizeof payload};
        if (loggp_live_active()) { /* as the sender's layer would have sent it */
            e.flags |= FI_REMOTE_CQ_DATA;
            e.data = stamp_encode(0, 0, clock_ns(), 0);
        }
        queued[(queued_head + queued_count++) % QUEUE] = e;
    }
    struct fi_cq_tagged_entry out[BATCH];
    for (size_t got = 0; got < n;) {
        ssize_t rc = fi_cq_read(&cq, out, n - got);
        if (rc > 0)
            got += (size_t)rc;
    }
}

static double time_calls(call_kind kind, size_t n)
{
    struct fi_cq_tagged_entry out;
    uint64_t start = loggp_vdso_ns();
    for (size_t i = 0; i < n; i++) {
        switch (kind) {
        case CALL_EMPTY_POLL:
            (void)fi_cq_read(&cq, &out, 1);
            break;
        case CALL_SEND:
            one_send();
            break;
        case CALL_RECEIVE:
            receives(i, 1);
            break;
        default:
            receives(i, BATCH);
            break;
        }
    }
    return (double)(loggp_vdso_ns() - start) / (double)(kind == CALL_RECEIVE_BATCH ? n * BATCH : n);
}

/* ---- modes: the knob armed at its smallest step ---- */

typedef struct {
    const char *name;
    int knob[2];
    int64_t ps;
} mode;

static mode modes[] = {
    {"provider (zero knobs)", {-1, -1}, 0},
    {"armed o", {LOGGP_KNOB_O_S, LOGGP_KNOB_O_R}, 1000},
    {"armed g", {LOGGP_KNOB_GAP, -1}, 1000},
    {"armed G", {LOGGP_KNOB_GAP_PER_BYTE, -1}, 1},
    {"armed L", {LOGGP_KNOB_LATENCY, -1}, 1000},
};
#define MODES (sizeof modes / sizeof modes[0])

static void arm(const mode *m)
{
    loggp_knobs k = {0};
    for (int i = 0; i < 2; i++)
        if (m->knob[i] >= 0)
            k.ps[m->knob[i]] = m->ps;
    loggp_live_publish(&k);
}

/* One figure: the median of v[0..n) and its 95 % interval; low and high NAN with none. */
typedef struct {
    double median, low, high;
} figure;

static figure figure_of(const double *v, size_t n)
{
    double *sorted = malloc(n * sizeof *sorted);
    figure f = {NAN, NAN, NAN};
    if (!sorted)
        return f;
    memcpy(sorted, v, n * sizeof *sorted);
    f.median = loggp_median(sorted, n); /* sorts */
    loggp_median_interval_sorted(sorted, n, &f.low, &f.high); /* left NAN with no interval */
    free(sorted);
    return f;
}

static void usage(FILE *out)
{
    fprintf(out, "usage: loggp-layer-cost [--rounds N] [--calls N] [--o-ns NS] [--json]\n"
                 "The libfabric layer's own ns per call over a provider that does nothing, no MPI:\n"
                 "an empty poll, a send, a receive posted and read, eight receives per read; the\n"
                 "provider's own table and each knob armed, rounds interleaved (docs/benchmarks.md).\n"
                 "  --rounds N   interleaved rounds, medians over them (default 11)\n"
                 "  --calls N    calls timed per round and figure (default 200000)\n"
                 "  --o-ns NS    o for the \"armed o\" row, in ns (default 1: the smallest step)\n"
                 "  --json       one JSON object (every round's ns too) instead of the tables\n"
                 "example:\n  loggp-layer-cost --rounds 5\n");
}

/* An option's whole-number value within lo-hi; -1, with a message naming it, if not. */
static int option_value(const char *name, const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "loggp-layer-cost: %s must be %ld-%ld, not '%s'\n", name, lo, hi, text);
        return -1;
    }
    *out = v;
    return 0;
}

static const double *round_values(const double *ns, int rounds, int call, size_t mode)
{
    return &ns[((size_t)call * MODES + mode) * (size_t)rounds];
}

/* The medians' table, then their intervals' in the same layout. */
static void print_tables(const double *ns, int rounds, size_t calls)
{
    printf("layer cost on a provider that does nothing: median ns per call (per message with 8 per read) over %d "
           "rounds of %zu calls\n", rounds, calls);
    if (modes[1].ps != 1000)
        printf("armed o: o_s = o_r = %lld ns\n", (long long)(modes[1].ps / 1000));
    for (int table = 0; table < 2; table++) {
        if (table == 1)
            printf("\n95 %% interval of each median over the rounds (order statistics; none below 6 rounds)\n");
        printf("%-24s", "mode");
        for (int c = 0; c < CALL_COUNT; c++)
            printf("  %22s", call_names[c]);
        printf("\n");
        for (size_t m = 0; m < MODES; m++) {
            printf("%-24s", modes[m].name);
            for (int c = 0; c < CALL_COUNT; c++) {
                figure f = figure_of(round_values(ns, rounds, c, m), (size_t)rounds);
                char cell[64];
                if (table == 0)
                    snprintf(cell, sizeof cell, "%.1f", f.median);
                else if (isnan(f.low))
                    snprintf(cell, sizeof cell, "no interval");
                else
                    snprintf(cell, sizeof cell, "[%.1f, %.1f]", f.low, f.high);
                printf("  %22s", cell);
            }
            printf("\n");
        }
    }
}

static void print_json_number(double v)
{
    if (isnan(v))
        printf("null");
    else
        printf("%.3f", v);
}

static void print_json(const double *ns, int rounds, size_t calls)
{
    printf("{\"schema\": \"loggp-layer-cost/1\", \"rounds\": %d, \"calls\": %zu, \"o_ns\": %lld, \"modes\": [",
           rounds, calls, (long long)(modes[1].ps / 1000));
    for (size_t m = 0; m < MODES; m++) {
        printf("%s{\"mode\": \"%s\", \"calls\": [", m ? ", " : "", modes[m].name);
        for (int c = 0; c < CALL_COUNT; c++) {
            const double *v = round_values(ns, rounds, c, m);
            figure f = figure_of(v, (size_t)rounds);
            printf("%s{\"call\": \"%s\", \"median_ns\": ", c ? ", " : "", call_names[c]);
            print_json_number(f.median);
            printf(", \"low_ns\": ");
            print_json_number(f.low);
            printf(", \"high_ns\": ");
            print_json_number(f.high);
            printf(", \"rounds_ns\": [");
            for (int r = 0; r < rounds; r++)
                printf("%s%.3f", r ? ", " : "", v[r]);
            printf("]}");
        }
        printf("]}");
    }
    printf("]}\n");
}

int main(int argc, char **argv)
{
    int rounds = 11, json = 0;
    size_t calls = 200000;
    for (int i = 1; i < argc; i++) {
        long v;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            if (option_value("--rounds", argv[++i], 1, 1000, &v) != 0)
                return 2;
            rounds = (int)v;
        } else if (strcmp(argv[i], "--o-ns") == 0 && i + 1 < argc) {
            if (option_value("--o-ns", argv[++i], 1, 1000000, &v) != 0)
                return 2;
            modes[1].ps = (int64_t)v * 1000; /* "armed o": what a spin of that length costs beyond it */
        } else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) {
            if (option_value("--calls", argv[++i], 1000, 100000000, &v) != 0)
                return 2;
            calls = (size_t)v;
        } else {
            usage(stderr);
            fprintf(stderr, "loggp-layer-cost: unknown argument '%s'\n", argv[i]);
            return 2;
        }
    }

    cq.fid.fclass = FI_CLASS_CQ;
    cq.fid.ops = &fake_fid_ops;
    cq.ops = &fake_cq_ops;
    patch_cq(&cq, FI_CQ_FORMAT_TAGGED);
    ep.fid.fclass = FI_CLASS_EP;
    ep.fid.ops = &fake_fid_ops;
    ep.tagged = &fake_tagged_ops;
    patch_ep(&ep, 1);
    fi_ep_bind(&ep, &cq.fid, FI_RECV);

    double *ns = calloc((size_t)rounds * MODES * CALL_COUNT, sizeof *ns);
    if (!ns) {
        fprintf(stderr, "loggp-layer-cost: out of memory\n");
        return 1;
    }
    for (int r = 0; r < rounds; r++)
        for (size_t m = 0; m < MODES; m++) {
            size_t mi = r % 2 ? MODES - 1 - m : m; /* forward, then backward */
            arm(&modes[mi]);
            for (int c = 0; c < CALL_COUNT; c++) {
                time_calls((call_kind)c, calls / 10); /* warm the caches and the clock's anchor */
                size_t n = c == CALL_RECEIVE_BATCH ? calls / BATCH : calls; /* per message below */
            ns[((size_t)c * MODES + mi) * (size_t)rounds + (size_t)r] = time_calls((call_kind)c, n);
            }
        }
    loggp_knobs none = {0};
    loggp_live_publish(&none);

    if (json)
        print_json(ns, rounds, calls);
    else
        print_tables(ns, rounds, calls);
    free(ns);
    return 0;
}

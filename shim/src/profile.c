/* The profile: per-thread counters, and the JSON file they end in. */
#include "profile.h"
#include "runenv.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef LOGGP_VERSION
#define LOGGP_VERSION "0.0.0"
#endif

__thread loggp_counters *loggp_tls_counters __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static loggp_counters *registry;

static const char *const fn_names[LOGGP_FN_COUNT] = {
#define LOGGP_NAME(name) "MPI_" #name,
    LOGGP_P2P_FUNCTIONS(LOGGP_NAME)
};
static const char *const coll_names[LOGGP_COLL_COUNT] = {
    LOGGP_COLLECTIVES(LOGGP_NAME)
#undef LOGGP_NAME
};

loggp_counters *loggp_counters_slow(void)
{
    static loggp_counters fallback[LOGGP_REGIONS]; /* if calloc fails, share one set */
    loggp_counters *c = calloc(LOGGP_REGIONS, sizeof *c);
    if (!c)
        c = fallback;
    pthread_mutex_lock(&registry_lock);
    if (c != fallback || !fallback[0].next) {
        for (int r = 0; r < LOGGP_REGIONS; r++) {
            c[r].region = r;
            c[r].next = registry;
            registry = &c[r];
        }
    }
    pthread_mutex_unlock(&registry_lock);
    loggp_tls_counters = c;
    return c;
}

void loggp_counters_sum(loggp_counters *sum, int region)
{
    memset(sum, 0, sizeof *sum);
    pthread_mutex_lock(&registry_lock);
    for (loggp_counters *c = registry; c; c = c->next) {
        if (region >= 0 && c->region != region)
            continue;
        uint64_t *dst = (uint64_t *)sum, *src = (uint64_t *)c;
        size_t words = offsetof(loggp_counters, next) / sizeof(uint64_t);
        for (size_t i = 0; i < words; i++)
            dst[i] += src[i];
    }
    pthread_mutex_unlock(&registry_lock);
}

/* ---- the JSON file ---- */

static void json_buckets(FILE *f, const uint64_t *msgs, const uint64_t *bytes)
{
    uint64_t total_msgs = 0, total_bytes = 0;
    for (int b = 0; b < LOGGP_BUCKETS; b++) {
        total_msgs += msgs[b];
        total_bytes += bytes[b];
    }
    fprintf(f, "{\"messages\": %llu, \"bytes\": %llu, \"by_size\": [", (unsigned long long)total_msgs,
            (unsigned long long)total_bytes);
    int first = 1;
    for (int b = 0; b < LOGGP_BUCKETS; b++) {
        if (!msgs[b])
            continue;
        uint64_t lo = b ? UINT64_C(1) << (b - 1) : 0;
        uint64_t hi = b ? (b == 64 ? UINT64_MAX : (UINT64_C(1) << b) - 1) : 0;
        fprintf(f, "%s{\"min_bytes\": %llu, \"max_bytes\": %llu, \"messages\": %llu, \"bytes\": %llu}",
                first ? "" : ", ", (unsigned long long)lo, (unsigned long long)hi,
                (unsigned long long)msgs[b], (unsigned long long)bytes[b]);
        first = 0;
    }
    fprintf(f, "]}");
}

/* {"name": {"calls": n, "bytes": b}, ...} or {"name": n, ...} for nonzero calls. */
static void json_calls(FILE *f, int count, const char *const *names, const uint64_t *calls, const uint64_t *bytes)
{
    fputc('{', f);
    int first = 1;
    for (int i = 0; i < count; i++) {
        if (!calls[i])
            continue;
        if (bytes)
            fprintf(f, "%s\"%s\": {\"calls\": %llu, \"bytes\": %llu}", first ? "" : ", ", names[i],
                    (unsigned long long)calls[i], (unsigned long long)bytes[i]);
        else
            fprintf(f, "%s\"%s\": %llu", first ? "" : ", ", names[i], (unsigned long long)calls[i]);
        first = 0;
    }
    fputc('}', f);
}

static void json_injected(FILE *f, const loggp_counters *c)
{
    static const char *const inj[LOGGP_INJ_COUNT] = {"o_s", "o_r", "g", "G", "L"};
    fputc('{', f);
    for (int i = 0; i < LOGGP_INJ_COUNT; i++)
        fprintf(f, "%s\"%s\": %llu", i ? ", " : "", inj[i], (unsigned long long)c->injected_ns[i]);
    fputc('}', f);
}

static void json_document(FILE *f, const loggp_profile_run *run, const loggp_counters *sum)
{
    fprintf(f, "{\"loggp_version\": \"%s\", \"rank\": %d, \"size\": %d, \"host\": \"", LOGGP_VERSION, run->rank,
            run->size);
    for (const char *p = run->host; *p; p++)
        if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
            fputc(*p, f);
    fprintf(f, "\", \"engine\": \"%s\",\n \"knobs_ns\": {", run->engine);
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char ns[48];
        loggp_format_ns(run->knobs.ps[i], ns, sizeof ns);
        fprintf(f, "%s\"%s\": %s", i ? ", " : "", i == LOGGP_KNOB_GAP_PER_BYTE ? "G_per_byte" : loggp_knob_table[i].name,
                ns);
    }
    fprintf(f, "},\n \"wall_seconds\": %.9f,\n \"sent\": ", run->wall_seconds);
    json_buckets(f, sum->sent_msgs, sum->sent_bytes);
    fprintf(f, ",\n \"sent_to_self\": {\"messages\": %llu, \"bytes\": %llu}", (unsigned long long)sum->self_msgs,
            (unsigned long long)sum->self_bytes);
    fprintf(f, ",\n \"received\": ");
    json_buckets(f, sum->recv_msgs, sum->recv_bytes);
    fprintf(f, ",\n \"calls\": ");
    json_calls(f, LOGGP_FN_COUNT, fn_names, sum->calls, NULL);
    fprintf(f, ",\n \"collectives\": ");
    json_calls(f, LOGGP_COLL_COUNT, coll_names, sum->coll_calls, sum->coll_bytes);
    fprintf(f, ",\n \"clock\": {\"synchronised\": %s, \"offset_ns\": %lld, \"sync_rtt_ns\": %lld, "
               "\"injected_skew_ns\": %lld", run->clock.synchronised ? "true" : "false",
            (long long)run->clock.offset_ns, (long long)run->clock.rtt_ns, (long long)run->clock.skew_ns);
    fprintf(f, "},\n \"injected_ns\": ");
    json_injected(f, sum);
    fprintf(f, ",\n \"regions\": {\"marked\": %s, \"scope\": \"%s\", \"outside_knobs\": \"%s\"",
            atomic_load(&loggp_region_marked) ? "true" : "false", run->scope_kernel ? "kernel" : "all",
            run->scope_kernel && run->outside_armed ? "armed" : "zero");
    static const char *const region_names[LOGGP_REGIONS] = {"outside", "kernel"};
    for (int r = 0; r < LOGGP_REGIONS; r++) {
        loggp_counters part;
        loggp_counters_sum(&part, r);
        fprintf(f, ",\n  \"%s\": {\"sent\": ", region_names[r]);
        json_buckets(f, part.sent_msgs, part.sent_bytes);
        fprintf(f, ", \"received\": ");
        json_buckets(f, part.recv_msgs, part.recv_bytes);
        fprintf(f, ", \"injected_ns\": ");
        json_injected(f, &part);
        fputc('}', f);
    }
    fputc('}', f);
    if (run->topology_json) /* what each pair got (pmpi/topology.c) */
        fprintf(f, ",\n \"pairs\": %s", run->topology_json);
    fprintf(f, "}\n");
}

void loggp_profile_write(const char *dir, const loggp_profile_run *run)
{
    char path[PATH_MAX], tmp[PATH_MAX + 32];
    if (loggp_make_folder(dir) != 0 ||
        snprintf(path, sizeof path, "%s/profile.%d.json", dir, run->rank) >= (int)sizeof path) {
        fprintf(stderr, "loggp: rank %d: cannot write the profile into LOGGP_PROFILE=%s: %s\n", run->rank, dir,
                strerror(errno));
        return;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "loggp: rank %d: cannot write %s: %s\n", run->rank, tmp, strerror(errno));
        return;
    }
    loggp_counters sum;
    loggp_counters_sum(&sum, -1);
    json_document(f, run, &sum);
    int bad = ferror(f);
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "loggp: rank %d: cannot write %s: %s\n", run->rank, path, strerror(errno));
        unlink(tmp);
    }
}

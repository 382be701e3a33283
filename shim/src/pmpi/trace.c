/* Traces: one fixed-size record per MPI call (and per completed request),
 * collected in a bounded buffer, flushed to DIR/.trace.<rank>.bin.tmp.<pid>
 * in chunks and renamed to DIR/trace.<rank>.bin at MPI_Finalize once the
 * header says how many records there are; the memberships of the communicators
 * the rank belongs to follow the records. Format: docs/trace-format.md. */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ofi.h"
#include "pmpi.h"

/* 4096 records of 56 bytes: 224 KiB per rank, whatever the run's length. */
#define BUFFER_RECORDS 4096

int loggp_tracing;

static struct {
    atomic_flag lock;
    int fd;
    int failed; /* a write failed: errno kept, the file is dropped at close */
    int error;
    uint64_t records, init_ns, run_id;
    uint32_t names_bytes;
    size_t used;
    /* the memberships: 4 bytes per member of each communicator made, written after the records */
    char *comms;
    size_t comms_used, comms_cap;
    loggp_trace_record buffer[BUFFER_RECORDS];
    char path[PATH_MAX], tmp[PATH_MAX + 48];
} trace = {.lock = ATOMIC_FLAG_INIT, .fd = -1};

/* "MPI_Send\0MPI_Isend\0...": p2p functions in LOGGP_FN order, the collectives, the communicator calls. */
#define NAME(name) "MPI_" #name "\0"
static const char call_names[] = LOGGP_P2P_FUNCTIONS(NAME) LOGGP_COLLECTIVES(NAME) LOGGP_TRACED_COMM_CALLS(NAME);
#undef NAME

static int write_all(int fd, const void *data, size_t n, off_t at)
{
    const char *p = data;
    while (n > 0) {
        ssize_t w = pwrite(fd, p, n, at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
        at += w;
    }
    return 0;
}

/* Under the lock: the buffer goes to the file after the records already there. */
static void flush_locked(void)
{
    if (trace.used == 0)
        return;
    off_t at = (off_t)(sizeof(loggp_trace_header) + trace.names_bytes + trace.records * sizeof(loggp_trace_record));
    if (!trace.failed && write_all(trace.fd, trace.buffer, trace.used * sizeof(loggp_trace_record), at) != 0) {
        trace.failed = 1;
        trace.error = errno;
    }
    trace.records += trace.used;
    trace.used = 0;
}

void loggp_trace_add(const loggp_trace_record *r)
{
    while (atomic_flag_test_and_set_explicit(&trace.lock, memory_order_acquire))
        ;
    if (trace.used == BUFFER_RECORDS)
        flush_locked();
    trace.buffer[trace.used++] = *r;
    atomic_flag_clear_explicit(&trace.lock, memory_order_release);
}

void loggp_trace_members(uint32_t id, int n, const int *ranks)
{
    if (!loggp_tracing || n <= 0)
        return;
    uint32_t size = (uint32_t)n;
    size_t need = 2 * sizeof(uint32_t) + (size_t)n * sizeof(int32_t);
    while (atomic_flag_test_and_set_explicit(&trace.lock, memory_order_acquire))
        ;
    if (trace.comms_used + need > trace.comms_cap) {
        size_t cap = trace.comms_cap ? 2 * trace.comms_cap : 4096;
        while (cap < trace.comms_used + need)
            cap *= 2;
        char *grown = realloc(trace.comms, cap);
        if (!grown) { /* the trace would lie: it is dropped at MPI_Finalize, saying why */
            if (!trace.failed) {
                trace.failed = 1;
                trace.error = ENOMEM;
            }
            atomic_flag_clear_explicit(&trace.lock, memory_order_release);
            return;
        }
        trace.comms = grown;
        trace.comms_cap = cap;
    }
    char *at = trace.comms + trace.comms_used;
    memcpy(at, &id, sizeof id);
    memcpy(at + sizeof id, &size, sizeof size);
    memcpy(at + 2 * sizeof id, ranks, (size_t)n * sizeof(int32_t));
    trace.comms_used += need;
    atomic_flag_clear_explicit(&trace.lock, memory_order_release);
}

/* The size of comm (not cached for other communicators: a freed one's handle comes back for another). */
static uint32_t size_of(MPI_Comm comm)
{
    if (comm == MPI_COMM_WORLD)
        return (uint32_t)loggp_world_size;
    int size = 0;
    if (comm == MPI_COMM_NULL || pmpi.Comm_size(comm, &size) != MPI_SUCCESS || size < 0)
        return 0;
    return (uint32_t)size;
}

uint64_t loggp_trace_call(int call, uint64_t start_ns, int peer, int tag, MPI_Comm comm, uint64_t bytes,
                      uint64_t request)
{
    loggp_trace_record r = {
        .start_ns = start_ns, .end_ns = loggp_now_ns(), .bytes = bytes, .request = request, .peer = peer,
        .tag = tag, .comm_id = loggp_comm_id(comm), .comm_size = size_of(comm), .call = (uint16_t)call,
        .kind = LOGGP_TRACE_CALL, .index = -1,
    };
    loggp_trace_add(&r);
    return r.end_ns;
}

/* A status's byte count (0 for a cancelled or empty one). */
static uint64_t status_bytes(const MPI_Status *st)
{
#if FAST_MPICH
    if (st->count_hi_and_cancelled & 1)
        return 0;
    return (uint64_t)(unsigned)st->count_lo + ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32);
#else
    int count = 0;
    if (pmpi.Get_count(st, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED || count < 0)
        return 0;
    return (uint64_t)count;
#endif
}

void loggp_trace_completion(int call, uint64_t start_ns, uint64_t end_ns, uint64_t request, int index,
                            const MPI_Status *st)
{
    loggp_trace_record r = {
        .start_ns = start_ns, .end_ns = end_ns, .request = request, .peer = -1, .tag = -1,
        .call = (uint16_t)call, .kind = LOGGP_TRACE_COMPLETE, .index = index,
    };
    if (st && st->MPI_SOURCE != MPI_PROC_NULL && st->MPI_SOURCE >= 0) {
        r.peer = st->MPI_SOURCE;
        r.tag = st->MPI_TAG;
        r.bytes = status_bytes(st);
    }
    loggp_trace_add(&r);
}

/* LOGGP_TRACE: the folder, or NULL (unset or empty: no trace). */
static const char *trace_dir(void)
{
    return loggp_output_folder("LOGGP_TRACE");
}

int loggp_trace_open(void)
{
    const char *dir = trace_dir();
    if (!dir)
        return 0;
    trace.names_bytes = (uint32_t)sizeof call_names;
    int rank = loggp_world_rank;
    if (loggp_ready_folder(dir) != 0) /* with missing parents, as a profile's */
        goto fail;
    if (snprintf(trace.path, sizeof trace.path, "%s/trace.%d.bin", dir, rank) >= (int)sizeof trace.path) {
        errno = ENAMETOOLONG;
        goto fail;
    }
    snprintf(trace.tmp, sizeof trace.tmp, "%s/.trace.%d.bin.tmp.%ld", dir, rank, (long)getpid());
    trace.fd = open(trace.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (trace.fd < 0)
        goto fail;
    if (write_all(trace.fd, call_names, sizeof call_names, (off_t)sizeof(loggp_trace_header)) != 0) {
        int e = errno;
        close(trace.fd);
        unlink(trace.tmp);
        errno = e;
        goto fail;
    }
    loggp_tracing = 1;
    return 0;
fail:
    fprintf(stderr, "loggp: rank %d: cannot write a trace into LOGGP_TRACE=%s: %s\n", rank, dir, strerror(errno));
    fflush(stderr);
    return -1;
}

void loggp_trace_share_run_id(void)
{
    uint64_t id = 0;
    if (loggp_world_rank == 0) {
        if (getrandom(&id, sizeof id, 0) != (ssize_t)sizeof id) /* no entropy: time and pid differ per run */
            id = loggp_now_ns() ^ ((uint64_t)getpid() << 40) ^ (uint64_t)time(NULL);
        if (id == 0)
            id = 1;
    }
    pmpi.Bcast(&id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    trace.run_id = id;
}

void loggp_trace_begin(uint64_t init_ns)
{
    trace.init_ns = init_ns;
}

void loggp_trace_discard(void)
{
    if (!loggp_tracing)
        return;
    loggp_tracing = 0;
    close(trace.fd);
    unlink(trace.tmp);
    trace.fd = -1;
}

void loggp_trace_close(uint64_t finalize_ns)
{
    if (!loggp_tracing)
        return;
    while (atomic_flag_test_and_set_explicit(&trace.lock, memory_order_acquire))
        ;
    loggp_tracing = 0;
    flush_locked();
    loggp_profile_clock clock = {0};
    loggp_clock_sync_result(&clock);
    loggp_trace_header h = {
        .version = LOGGP_TRACE_VERSION, .header_bytes = sizeof h, .record_bytes = sizeof(loggp_trace_record),
        .names_bytes = trace.names_bytes, .rank = loggp_world_rank, .size = loggp_world_size,
        .clock = LOGGP_TRACE_CLOCK_MONOTONIC, .records = trace.records, .init_ns = trace.init_ns,
        .finalize_ns = finalize_ns, .clock_offset_ns = clock.synchronised ? -clock.offset_ns : 0,
        .run_id = trace.run_id, .comms_bytes = trace.comms_used,
    };
    memcpy(h.magic, LOGGP_TRACE_MAGIC, sizeof h.magic);
    if (loggp_engine == ENGINE_LIBFABRIC)
        snprintf(h.transport, sizeof h.transport, "libfabric:%s", loggp_ofi_provider());
    else
        snprintf(h.transport, sizeof h.transport, "pmpi");
    int bad = trace.failed;
    errno = trace.error;
    off_t comms_at = (off_t)(sizeof h + trace.names_bytes + trace.records * sizeof(loggp_trace_record));
    if (!bad && trace.comms_used)
        bad = write_all(trace.fd, trace.comms, trace.comms_used, comms_at) != 0;
    if (!bad)
        bad = write_all(trace.fd, &h, sizeof h, 0) != 0 || fsync(trace.fd) != 0;
    free(trace.comms);
    trace.comms = NULL;
    trace.comms_used = trace.comms_cap = 0;
    if (close(trace.fd) != 0 && !bad)
        bad = 1;
    if (bad || rename(trace.tmp, trace.path) != 0) {
        fprintf(stderr, "loggp: rank %d: cannot write %s: %s\n", loggp_world_rank, trace.path, strerror(errno));
        unlink(trace.tmp);
    }
    trace.fd = -1;
    atomic_flag_clear_explicit(&trace.lock, memory_order_release);
}

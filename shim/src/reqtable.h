/* A small hash table from 64-bit keys to (kind, value), safe under
 * MPI_THREAD_MULTIPLE. The PMPI layer keeps one for its outstanding receive
 * and persistent requests (so Wait/Test completions can be charged o_r and
 * counted); the libfabric layer keeps one for receive post times. */
#ifndef LOGGP_REQTABLE_H
#define LOGGP_REQTABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

enum {
    LOGGP_REQ_RECV = 1,
    LOGGP_REQ_PERSISTENT_SEND,
    LOGGP_REQ_PERSISTENT_RECV,
    LOGGP_REQ_RECV_POSTED, /* a libfabric receive; its value is when it was posted */
    LOGGP_REQ_PERSISTENT_SELF_SEND, /* a persistent send to the sending rank itself: never on the network */
};

typedef struct {
    int kind;
    uint64_t bytes; /* a persistent send's size (times go through the wrappers below) */
} loggp_req_info;

typedef struct loggp_table_slot loggp_table_slot;

typedef struct {
    atomic_flag lock;
    _Atomic long size; /* entries: lets callers skip lookups when there are none */
    loggp_table_slot *slots;
    size_t capacity; /* power of two */
    int persistent_kinds; /* bit k set: entries of kind k survive a take */
} loggp_table;

#define LOGGP_TABLE_INIT(persistent) {ATOMIC_FLAG_INIT, 0, NULL, 0, (persistent)}

static inline int loggp_table_empty(loggp_table *t)
{
    return atomic_load_explicit(&t->size, memory_order_relaxed) == 0;
}

void loggp_table_put(loggp_table *t, uint64_t key, int kind, uint64_t value);
/* Looks key up; removes the entry unless its kind is persistent. 0 if absent. */
int loggp_table_take(loggp_table *t, uint64_t key, loggp_req_info *info);
/* Looks key up without removing it. */
int loggp_table_peek(loggp_table *t, uint64_t key, loggp_req_info *info);
void loggp_table_remove(loggp_table *t, uint64_t key);

/* A table whose values are times (ns): what each key was done at. */
static inline void loggp_table_put_time(loggp_table *t, uint64_t key, uint64_t time_ns)
{
    loggp_table_put(t, key, LOGGP_REQ_RECV_POSTED, time_ns);
}

/* Takes the time filed under key into *time_ns; 0 if absent. */
static inline int loggp_table_take_time(loggp_table *t, uint64_t key, uint64_t *time_ns)
{
    loggp_req_info info;
    if (!loggp_table_take(t, key, &info))
        return 0;
    *time_ns = info.bytes;
    return 1;
}

#endif

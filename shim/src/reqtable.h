/* Which outstanding MPI requests are receives or persistent operations, so
 * that completions in the Wait/Test family can be charged o_r and counted.
 * Keyed by the request handle's bits; safe under MPI_THREAD_MULTIPLE. */
#ifndef LOGGP_REQTABLE_H
#define LOGGP_REQTABLE_H

#include <stdatomic.h>
#include <stdint.h>

enum { LOGGP_REQ_RECV = 1, LOGGP_REQ_PERSISTENT_SEND, LOGGP_REQ_PERSISTENT_RECV };

typedef struct {
    int kind;
    uint64_t bytes; /* persistent send: message size */
} loggp_req_info;

/* Number of entries: lets the completion path skip lookups when none exist. */
extern _Atomic long loggp_reqtable_size;

void loggp_reqtable_put(uint64_t key, int kind, uint64_t bytes);
/* Looks key up; removes a non-persistent entry. Returns 0 if absent. */
int loggp_reqtable_take(uint64_t key, loggp_req_info *info);
/* Looks key up without removing it. */
int loggp_reqtable_peek(uint64_t key, loggp_req_info *info);
void loggp_reqtable_remove(uint64_t key);

#endif

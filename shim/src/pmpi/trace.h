/* Traces (LOGGP_TRACE=DIR): every MPI call the PMPI layer sees, one fixed-size
 * record each, per rank, into DIR/trace.<rank>.bin. The format is documented
 * in docs/trace-format.md; analysis/loggp/analysis/trace.py reads it.
 *
 * Records collect in a bounded buffer that is flushed to a temporary file
 * when it fills; MPI_Finalize writes the header (with the record count) and
 * renames the file, so a trace is never half-written under its final name. */
#ifndef LOGGP_TRACE_H
#define LOGGP_TRACE_H

#include <mpi.h>
#include <stdint.h>

#include "delay.h"

#pragma GCC visibility push(hidden)

#define LOGGP_TRACE_MAGIC "LGPTRACE"
#define LOGGP_TRACE_VERSION 4u
#define LOGGP_TRACE_CLOCK_MONOTONIC 1u /* ns of CLOCK_MONOTONIC (TSC-extrapolated, delay.h) */

/* What a record says (its kind field). */
enum {
    LOGGP_TRACE_CALL = 0,     /* one MPI call: a blocking call, a post, or a completion call */
    LOGGP_TRACE_COMPLETE = 1, /* a request (or a Recv's/Sendrecv's message) completed in the call before */
};

/* The header, at offset 0, little-endian as the machine writes it (x86-64). */
typedef struct {
    char magic[8];         /* "LGPTRACE" */
    uint32_t version;      /* LOGGP_TRACE_VERSION */
    uint32_t header_bytes; /* sizeof this header */
    uint32_t record_bytes; /* sizeof(loggp_trace_record) */
    uint32_t names_bytes;  /* the call-name table after the header: NUL-terminated names */
    int32_t rank, size;    /* in MPI_COMM_WORLD */
    uint32_t clock;        /* LOGGP_TRACE_CLOCK_MONOTONIC */
    uint32_t reserved;
    uint64_t records;      /* how many records follow the names */
    uint64_t init_ns;      /* when MPI_Init returned */
    uint64_t finalize_ns;  /* when MPI_Finalize was called */
    int64_t clock_offset_ns; /* this rank's clock minus rank 0's (0: unknown or rank 0) */
    uint64_t run_id;       /* one value for every rank of one run, drawn by rank 0 (0: unknown) */
    char transport[32];    /* how the messages went: "libfabric:<provider>" or "pmpi", NUL-padded */
    uint64_t comms_bytes;  /* the memberships after the records: (id, size, size world ranks) each */
} loggp_trace_header;

typedef struct {
    uint64_t start_ns, end_ns; /* the call's entry and return (COMPLETE: the enclosing call's) */
    uint64_t bytes;            /* message or buffer bytes; collectives: bytes this rank sends */
    uint64_t request;          /* the request's handle; 0: none */
    int32_t peer;              /* rank in the communicator (root for rooted collectives); -1: none */
    int32_t tag;               /* -1: none (MPI_ANY_TAG is recorded as MPI defines it) */
    uint32_t comm_id;          /* the communicator's id, one value on all its ranks (comms.c) */
    uint32_t comm_size;
    uint16_t call;             /* index into the header's name table */
    uint16_t kind;             /* LOGGP_TRACE_CALL or LOGGP_TRACE_COMPLETE */
    int32_t index;             /* COMPLETE: the request's position in the call's array; else -1 */
} loggp_trace_record;

/* Whether this rank records a trace (set at MPI_Init). */
extern int loggp_tracing;

/* Opens this rank's trace if LOGGP_TRACE asks for one (after MPI_Init);
 * on failure prints why and returns -1. */
int loggp_trace_open(void);
/* Rank 0 draws the run's id and every rank takes it (collective over MPI_COMM_WORLD,
 * whether tracing or not, so no rank can wait for another that does not trace). */
void loggp_trace_share_run_id(void);
/* The traced span starts at init_ns: when MPI_Init hands control back to the
 * program, after the layer's own set-up messages. */
void loggp_trace_begin(uint64_t init_ns);
/* Writes the header (the span ends at finalize_ns: MPI_Finalize's entry) and
 * puts the file under its final name. */
void loggp_trace_close(uint64_t finalize_ns);
/* Drops an open trace's temporary file: the run stops before it began. */
void loggp_trace_discard(void);

/* Notes that this rank belongs to communicator id, whose members are the world ranks
 * ranks[0..n) in its rank order (thread-safe; written after the records at MPI_Finalize). */
void loggp_trace_members(uint32_t id, int n, const int *ranks);

/* Appends one record (thread-safe). */
void loggp_trace_add(const loggp_trace_record *r);

/* A call record; peer, tag, comm as the MPI call takes them (comm may be
 * MPI_COMM_NULL). Returns the call's end time, which its completions share. */
uint64_t loggp_trace_call(int call, uint64_t start_ns, int peer, int tag, MPI_Comm comm, uint64_t bytes,
                      uint64_t request);
/* A completion inside call [start, end]: request (0: a blocking receive), position, its status (may be NULL). */
void loggp_trace_completion(int call, uint64_t start_ns, uint64_t end_ns, uint64_t request, int index,
                            const MPI_Status *st);

/* The time a traced call starts (0, and no clock read, when not tracing). */
static inline uint64_t loggp_trace_now(void)
{
    return loggp_tracing ? loggp_now_ns() : 0;
}

#pragma GCC visibility pop

#endif

/* The libfabric layer's interface to the rest of libloggp.so. */
#ifndef LOGGP_OFI_H
#define LOGGP_OFI_H

#include <stddef.h>
#include <stdint.h>

/* Called by MPI_Init before the MPI library opens its fabric: whether the
 * libfabric layer may wrap what the process opens (an MPI process that chose
 * the libfabric engine). Fabrics opened while it is 0 pass through untouched. */
void loggp_ofi_enable(int enabled);

/* Nonzero once the layer wraps a reliable-datagram endpoint, i.e. MPI's
 * messages cross it. */
int loggp_ofi_active(void);

/* MPI_Finalize has begun: hand out everything held at once. */
void loggp_ofi_flush(void);

/* Receive completions held now, across all completion queues. */
long loggp_ofi_held(void);

/* Name of the wrapped provider ("shm", "tcp;ofi_rxm"), or "" if none. */
const char *loggp_ofi_provider(void);

/* The clock that send stamps and due times use: CLOCK_MONOTONIC plus a
 * correction that maps it onto rank 0's clock (set after the clock
 * synchronisation at MPI_Init; 0 before). On one host the clock is shared
 * and the correction is 0 unless a test injects an offset. */
void loggp_ofi_set_clock(int64_t correction_ns, int clocks_shared);

/* This rank's endpoint name (fi_getname of the first endpoint MPI opened)
 * into buf of *len bytes; *len is set to its length. -1 without one. */
int loggp_ofi_endpoint_name(void *buf, size_t *len);

/* Gives each address of that endpoint's address vector the topology class
 * of the rank whose name it holds (names: nranks names, name_len bytes each,
 * zero-padded). Returns how many ranks were found; -1 without an address
 * vector that can be looked up (the classes then stay 0). */
int loggp_ofi_set_peer_classes(const unsigned char *names, size_t name_len, int nranks,
                               const uint8_t *class_of_rank);

#endif

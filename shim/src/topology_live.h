/* The run's topology on the message path (loggp-knobs/core/topology.h): the
 * class of each destination and each class's L and G. Read from the
 * environment before MPI_Init; set up after it, once the ranks' hosts and
 * libfabric addresses are known (pmpi/topology.c). Class 0 takes the live
 * knobs; classes 1-3 their fixed values or, where unset, a closer class's. */
#ifndef LOGGP_TOPOLOGY_LIVE_H
#define LOGGP_TOPOLOGY_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "live.h"
#include "topology.h"

#pragma GCC visibility push(hidden)

/* Per class: the fixed value, or 1 in *_knob when the class takes the knob's. */
extern uint64_t loggp_topo_L_ns[LOGGP_TOPO_CLASSES];
extern int64_t loggp_topo_G_ps[LOGGP_TOPO_CLASSES];
extern uint8_t loggp_topo_L_knob[LOGGP_TOPO_CLASSES], loggp_topo_G_knob[LOGGP_TOPO_CLASSES];

/* d as a message of class c sees it. */
static inline void loggp_delays_for_class(loggp_delays *d, unsigned c)
{
    c &= LOGGP_TOPO_CLASSES - 1;
    if (!loggp_topo_L_knob[c])
        d->L = loggp_topo_L_ns[c];
    if (!loggp_topo_G_knob[c])
        d->G_ps_per_byte = loggp_topo_G_ps[c];
}

/* Reads LOGGP_TOPOLOGY or the short form; -1 with a message on bad input. */
int loggp_topology_start(char *err, size_t errlen);
int loggp_topology_configured(void);
const loggp_topology *loggp_topology_loaded(void);

/* After MPI_Init: this rank's class towards every rank (node_of: each rank's
 * host index) and the class values. -1 with a message if the run does not
 * fit the topology. */
int loggp_topology_setup(int rank, int size, const int *node_of, char *err, size_t errlen);
/* Once every address has its class: the values apply from now on. */
void loggp_topology_enable(void);

/* The class of messages from this rank to rank r (0 before setup). */
int loggp_topology_class_to(int r);
int loggp_topology_ranks(void);

/* "; per pair: inter-node L=5us" for the banner (empty without a topology). */
void loggp_topology_describe(char *buf, size_t len);

#pragma GCC visibility pop

#endif

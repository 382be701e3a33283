/* The run's topology (topology_live.h). */
#include "topology_live.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

uint64_t loggp_topo_L_ns[LOGGP_TOPO_CLASSES];
int64_t loggp_topo_G_ps[LOGGP_TOPO_CLASSES];
uint8_t loggp_topo_L_knob[LOGGP_TOPO_CLASSES] = {1, 1, 1, 1};
uint8_t loggp_topo_G_knob[LOGGP_TOPO_CLASSES] = {1, 1, 1, 1};

static loggp_topology topology;
static int configured;
static uint8_t *class_to; /* by destination rank */
static int nranks;

int loggp_topology_start(char *err, size_t errlen)
{
    return loggp_topology_from_env(&topology, &configured, err, errlen);
}

int loggp_topology_configured(void)
{
    return configured;
}

const loggp_topology *loggp_topology_loaded(void)
{
    return configured ? &topology : NULL;
}

int loggp_topology_setup(int rank, int size, const int *node_of, char *err, size_t errlen)
{
    if (!configured)
        return 0;
    if (loggp_topology_check_size(&topology, size, err, errlen) != 0)
        return -1;
    uint8_t *classes = calloc((size_t)size, 1);
    if (!classes) {
        snprintf(err, errlen, "no memory for the topology of %d ranks", size);
        return -1;
    }
    for (int r = 0; r < size; r++)
        classes[r] = (uint8_t)loggp_topology_class(&topology, rank, r, node_of ? node_of[rank] : 0,
                                                   node_of ? node_of[r] : 0);
    for (int c = 1; c < LOGGP_TOPO_CLASSES; c++) {
        int sL = loggp_topology_source(&topology, 0, c), sG = loggp_topology_source(&topology, 1, c);
        loggp_topo_L_knob[c] = sL == 0;
        loggp_topo_L_ns[c] = sL ? (uint64_t)(topology.L_ps[sL] + 500) / 1000 : 0;
        loggp_topo_G_knob[c] = sG == 0;
        loggp_topo_G_ps[c] = sG ? topology.G_ps[sG] : 0;
    }
    class_to = classes;
    nranks = size;
    return 0;
}

void loggp_topology_enable(void)
{
    if (configured)
        loggp_live_set_topology(loggp_topology_has_values(&topology), topology.G_set != 0);
}

int loggp_topology_class_to(int r)
{
    return class_to && r >= 0 && r < nranks ? class_to[r] : 0;
}

int loggp_topology_ranks(void)
{
    return class_to ? nranks : 0;
}

void loggp_topology_describe(char *buf, size_t len)
{
    buf[0] = '\0';
    if (!configured)
        return;
    size_t used = (size_t)snprintf(buf, len, "; per pair:");
    int shown = 0;
    for (int c = 1; c < LOGGP_TOPO_CLASSES && used < len; c++) {
        int sL = loggp_topology_source(&topology, 0, c), sG = loggp_topology_source(&topology, 1, c);
        int present = topology.matrix_n || c == 1 || topology.ranks_per[c - 1];
        if ((!sL && !sG) || !present)
            continue;
        char L[48] = "", G[48] = "";
        if (sL)
            loggp_format_knob(LOGGP_KNOB_LATENCY, topology.L_ps[sL], L, sizeof L);
        if (sG)
            loggp_format_knob(LOGGP_KNOB_GAP_PER_BYTE, topology.G_ps[sG], G, sizeof G);
        int n = snprintf(buf + used, len - used, " %s%s%s%s%s", loggp_topo_class_names[c], sL ? " L=" : "", L,
                         sG ? " G=" : "", G);
        if (n > 0)
            used += (size_t)n;
        shown++;
    }
    if (!shown && used < len) /* nodes given, but no level of its own L or G: every pair gets the knobs' */
        used += (size_t)snprintf(buf + used, len - used, " no L or G of its own");
    const int *r = topology.ranks_per;
    int n = topology.matrix_n ? snprintf(buf + used, used < len ? len - used : 0, " (from a %d-rank matrix)", topology.matrix_n)
            : r[0] ? snprintf(buf + used, used < len ? len - used : 0, " (%d rank%s per node%s)", r[0], r[0] == 1 ? "" : "s", r[1] ? ", ..." : "")
                   : snprintf(buf + used, used < len ? len - used : 0, " (nodes are the hosts)");
    (void)n;
}

/* Per-pair latency and per-byte gap from a topology: every ordered rank pair
 * falls into one of four classes by what separates the two ranks (same node,
 * another node on the same switch, another switch in the same group, another
 * group), and each class has its own L and G. Class 0 is the knobs' own L and
 * G, live as ever; classes 1-3 take fixed values from the topology, each
 * falling back to the nearest closer class that has one. The classes come
 * from blocks of consecutive ranks (ranks_per_node/switch/group), from the
 * hosts the ranks run on, or from an explicit rank-pair matrix. Shared by
 * loggp-knobs (which checks files and describes them as JSON) and libloggp.so;
 * docs/topology.md has the file format. */
#ifndef LOGGP_TOPOLOGY_H
#define LOGGP_TOPOLOGY_H

#include <stddef.h>
#include <stdint.h>

#define LOGGP_TOPO_CLASSES 4
#define LOGGP_TOPO_LEVELS 3 /* node, switch, group */

extern const char *const loggp_topo_class_names[LOGGP_TOPO_CLASSES];

typedef struct {
    int ranks_per[LOGGP_TOPO_LEVELS]; /* node, switch, group; 0: not given */
    int64_t L_ps[LOGGP_TOPO_CLASSES], G_ps[LOGGP_TOPO_CLASSES]; /* per class; index 0 unused */
    unsigned L_set, G_set; /* bit c: class c has its own value */
    int matrix_n;          /* ranks in the matrix; 0: none */
    uint8_t *matrix;       /* class of (sender, receiver) at [sender * n + receiver] */
} loggp_topology;

/* Parses a topology file's text. -1 with "line N: ..." naming the bad part. */
int loggp_topology_parse(const char *text, loggp_topology *t, char *err, size_t errlen);

/* Reads and parses a topology file; -1 with a message naming the path. */
int loggp_topology_load(const char *path, loggp_topology *t, char *err, size_t errlen);

/* The run's topology from LOGGP_TOPOLOGY (a file) or LOGGP_RANKS_PER_NODE,
 * LOGGP_L_INTER and LOGGP_G_INTER (the short form; not both). *configured is
 * 0 when none is set. -1 with a message naming the variable and value. */
int loggp_topology_from_env(loggp_topology *t, int *configured, char *err, size_t errlen);

/* Does a run of nranks ranks fit it (the matrix's size)? -1 with a message. */
int loggp_topology_check_size(const loggp_topology *t, int nranks, char *err, size_t errlen);

/* Does any class beyond 0 have a value of its own? */
int loggp_topology_has_values(const loggp_topology *t);

/* The class of a message from sender to receiver; node_of_* are the ranks'
 * host indices, used when the topology does not give ranks_per_node. */
int loggp_topology_class(const loggp_topology *t, int sender, int receiver, int node_of_sender,
                         int node_of_receiver);

/* The class whose value class c takes for L (is_G 0) or G (is_G 1): c
 * itself if set, else the nearest closer one; 0 means the knob's own. */
int loggp_topology_source(const loggp_topology *t, int is_G, int c);

/* Writes it as JSON (classes with their values, the levels, the matrix size). */
size_t loggp_topology_json(const loggp_topology *t, char *buf, size_t len);

void loggp_topology_free(loggp_topology *t);

#endif

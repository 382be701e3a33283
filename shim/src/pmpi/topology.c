/* Per-pair L and G (topology_live.h), set up once MPI runs: the ranks' hosts
 * (nodes are the hosts unless ranks_per_node says otherwise), this rank's
 * class towards each rank, and each libfabric address's class from the names
 * the ranks' endpoints publish. */
#include <stdio.h>
#include <stdlib.h>

#include "ofi.h"
#include "pmpi.h"
#include "topology_live.h"

#define NAME_BYTES 256 /* libfabric's longest address name, FI_NAME_MAX */
#define HOST_BYTES (MPI_MAX_PROCESSOR_NAME + 1)

static char topology_json[8192];

/* Each rank's host index: the first rank on the same host. */
static int *gather_nodes(int size)
{
    char host[HOST_BYTES] = "";
    int len = 0;
    pmpi.Get_processor_name(host, &len);
    char *hosts = calloc((size_t)size, HOST_BYTES);
    int *node_of = calloc((size_t)size, sizeof *node_of);
    if (!hosts || !node_of) {
        free(hosts);
        free(node_of);
        return NULL;
    }
    pmpi.Allgather(host, HOST_BYTES, MPI_BYTE, hosts, HOST_BYTES, MPI_BYTE, MPI_COMM_WORLD);
    for (int r = 0; r < size; r++) {
        node_of[r] = r;
        for (int q = 0; q < r; q++)
            if (strncmp(hosts + (size_t)q * HOST_BYTES, hosts + (size_t)r * HOST_BYTES, HOST_BYTES) == 0) {
                node_of[r] = q;
                break;
            }
    }
    free(hosts);
    return node_of;
}

/* Gives every libfabric address its class; how many ranks' addresses were found (-1: none could be). */
static int map_addresses(int size, const uint8_t *class_of_rank)
{
    unsigned char mine[NAME_BYTES] = {0};
    size_t len = sizeof mine;
    if (loggp_ofi_endpoint_name(mine, &len) != 0)
        len = 0;
    unsigned char *names = calloc((size_t)size, NAME_BYTES);
    if (!names)
        return -1;
    pmpi.Allgather(mine, NAME_BYTES, MPI_BYTE, names, NAME_BYTES, MPI_BYTE, MPI_COMM_WORLD);
    int found = len ? loggp_ofi_set_peer_classes(names, NAME_BYTES, size, class_of_rank) : -1;
    free(names);
    return found;
}

static void describe(int size, int found)
{
    const loggp_topology *t = loggp_topology_loaded();
    size_t used = (size_t)snprintf(topology_json, sizeof topology_json, "{\"topology\": ");
    used += loggp_topology_json(t, topology_json + used, sizeof topology_json - used);
    used += (size_t)snprintf(topology_json + used, sizeof topology_json - used,
                             ", \"addresses_found\": %d, \"class_to\": [", found);
    for (int r = 0; r < size && used < sizeof topology_json; r++)
        used += (size_t)snprintf(topology_json + used, sizeof topology_json - used, "%s%d", r ? ", " : "",
                                 loggp_topology_class_to(r));
    if (used < sizeof topology_json)
        snprintf(topology_json + used, sizeof topology_json - used, "]}");
}

void loggp_setup_topology(void)
{
    if (!loggp_topology_configured())
        return;
    int size = loggp_world_size, rank = loggp_world_rank;
    int *node_of = gather_nodes(size);
    char err[512];
    int failed = !node_of || loggp_topology_setup(rank, size, node_of, err, sizeof err) != 0;
    if (failed && rank == 0)
        fprintf(stderr, "loggp: %s\n", node_of ? err : "no memory for the topology");
    free(node_of);
    loggp_stop_if_any_failed(failed);
    int found = -1;
    if (loggp_engine == ENGINE_LIBFABRIC) {
        uint8_t *classes = malloc((size_t)size);
        if (classes) {
            for (int r = 0; r < size; r++)
                classes[r] = (uint8_t)loggp_topology_class_to(r);
            found = map_addresses(size, classes);
            free(classes);
        }
        loggp_topology_enable();
    }
    if (rank == 0 && loggp_engine == ENGINE_LIBFABRIC && found < size)
        fprintf(stderr, "loggp: warning: topology: the libfabric addresses of %d of %d ranks are unknown; "
                        "messages to them get the intra-node L and G\n", size - (found > 0 ? found : 0), size);
    describe(size, found);
}

const char *loggp_topology_profile_json(void)
{
    return topology_json[0] ? topology_json : NULL;
}

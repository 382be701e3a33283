/* The run's topology as each rank sets it up (src/topology_live.c): the class
 * of this rank's messages to each rank, and each class's L and G. Criterion
 * forks per test, so each test sets up its own topology once. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "topology_live.h"

/* live.c's, not linked here: what the layer was told */
static int told_values = -1, told_G = -1;
void loggp_live_set_topology(int has_values, int has_G)
{
    told_values = has_values;
    told_G = has_G;
}

static void clear_env(void)
{
    unsetenv("LOGGP_TOPOLOGY");
    unsetenv("LOGGP_RANKS_PER_NODE");
    unsetenv("LOGGP_L_INTER");
    unsetenv("LOGGP_G_INTER");
}

/* Loads a topology file of text for rank of size ranks. */
static void set_up_file(const char *text, int rank, int size, const int *node_of)
{
    char path[] = "/tmp/loggp-topology-live-XXXXXX";
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
    clear_env();
    setenv("LOGGP_TOPOLOGY", path, 1);
    char err[512] = "";
    cr_assert_eq(loggp_topology_start(err, sizeof err), 0, "%s", err);
    cr_assert_eq(loggp_topology_setup(rank, size, node_of, err, sizeof err), 0, "%s", err);
    unlink(path);
    unsetenv("LOGGP_TOPOLOGY");
}

Test(topology_live, a_rank_takes_its_own_row_of_the_matrix)
{
    /* not symmetric: rank 1 sends to 0 as class 2, though 0 sends to 1 as class 1 */
    set_up_file("matrix =\n0 1 3\n2 0 1\n3 1 0\nL_inter_node = 1us\nL_inter_switch = 2us\n", 1, 3, NULL);
    cr_assert_eq(loggp_topology_class_to(0), 2);
    cr_assert_eq(loggp_topology_class_to(1), 0);
    cr_assert_eq(loggp_topology_class_to(2), 1);
    cr_assert_eq(loggp_topology_ranks(), 3);
    /* ranks outside the run: class 0 */
    cr_assert_eq(loggp_topology_class_to(3), 0);
    cr_assert_eq(loggp_topology_class_to(-1), 0);
}

Test(topology_live, without_ranks_per_node_the_hosts_decide)
{
    /* ranks 0, 1 on host 5; 2, 3 on host 9: as seen from rank 2 */
    const int node_of[] = {5, 5, 9, 9};
    set_up_file("L_inter_node = 4us\n", 2, 4, node_of);
    cr_assert_eq(loggp_topology_class_to(0), 1);
    cr_assert_eq(loggp_topology_class_to(1), 1);
    cr_assert_eq(loggp_topology_class_to(2), 0);
    cr_assert_eq(loggp_topology_class_to(3), 0);
}

Test(topology_live, the_last_rank_of_a_node_and_the_first_of_the_next)
{
    set_up_file("ranks_per_node = 3\nL_inter_node = 4us\n", 2, 6, NULL);
    cr_assert_eq(loggp_topology_class_to(0), 0);
    cr_assert_eq(loggp_topology_class_to(1), 0);
    cr_assert_eq(loggp_topology_class_to(3), 1);
    cr_assert_eq(loggp_topology_class_to(5), 1);
}

Test(topology_live, each_class_takes_its_own_value_or_the_nearest_closer_one)
{
    set_up_file("ranks_per_node = 2\nranks_per_switch = 4\nranks_per_group = 8\n"
                "L_inter_node = 3us\nL_inter_group = 7us\nG_inter_switch = 0.25ns/B\n",
                0, 16, NULL);
    /* L: node's own, switch falls back to node's, group's own */
    cr_assert_not(loggp_topo_L_knob[1]);
    cr_assert_not(loggp_topo_L_knob[2]);
    cr_assert_not(loggp_topo_L_knob[3]);
    cr_assert_eq(loggp_topo_L_ns[1], 3000);
    cr_assert_eq(loggp_topo_L_ns[2], 3000);
    cr_assert_eq(loggp_topo_L_ns[3], 7000);
    /* G: none between nodes of a switch (the knob's), switch's own, group falls back to switch's */
    cr_assert(loggp_topo_G_knob[1]);
    cr_assert_not(loggp_topo_G_knob[2]);
    cr_assert_not(loggp_topo_G_knob[3]);
    cr_assert_eq(loggp_topo_G_ps[2], 250);
    cr_assert_eq(loggp_topo_G_ps[3], 250);
    /* pairs on one node always keep the knobs */
    cr_assert(loggp_topo_L_knob[0]);
    cr_assert(loggp_topo_G_knob[0]);
    loggp_topology_enable();
    cr_assert_eq(told_values, 1);
    cr_assert_eq(told_G, 1);
}

Test(topology_live, a_class_L_rounds_to_the_nearest_ns)
{
    set_up_file("ranks_per_node = 2\nranks_per_switch = 4\nL_inter_node = 1.499ns\nL_inter_switch = 1.501ns\n", 0, 4,
                NULL);
    cr_assert_eq(loggp_topo_L_ns[1], 1);
    cr_assert_eq(loggp_topo_L_ns[2], 2);
}

Test(topology_live, delays_for_a_class_replace_only_the_values_it_has)
{
    set_up_file("ranks_per_node = 2\nG_inter_node = 2ns/B\n", 0, 4, NULL);
    loggp_delays d = {0};
    d.L = 10000;
    d.G_ps_per_byte = 100;
    loggp_delays_for_class(&d, 1);
    cr_assert_eq(d.L, 10000, "no L between nodes: the knob's");
    cr_assert_eq(d.G_ps_per_byte, 2000);
    loggp_delays same = {0};
    same.L = 10000;
    same.G_ps_per_byte = 100;
    loggp_delays_for_class(&same, 0);
    cr_assert_eq(same.L, 10000);
    cr_assert_eq(same.G_ps_per_byte, 100);
    loggp_topology_enable();
    cr_assert_eq(told_values, 1);
    cr_assert_eq(told_G, 1);
}

Test(topology_live, an_L_alone_tells_the_layer_no_G)
{
    clear_env();
    setenv("LOGGP_RANKS_PER_NODE", "2", 1);
    setenv("LOGGP_L_INTER", "5us", 1);
    char err[256] = "";
    cr_assert_eq(loggp_topology_start(err, sizeof err), 0, "%s", err);
    cr_assert(loggp_topology_configured());
    cr_assert_eq(loggp_topology_setup(3, 4, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(loggp_topology_class_to(2), 0);
    cr_assert_eq(loggp_topology_class_to(1), 1);
    loggp_topology_enable();
    cr_assert_eq(told_values, 1);
    cr_assert_eq(told_G, 0);
    clear_env();
}

Test(topology_live, a_matrix_of_another_size_stops_the_set_up)
{
    char path[] = "/tmp/loggp-topology-live-XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fdopen(fd, "w");
    fputs("matrix =\n0 1\n1 0\nL_inter_node = 1us\n", f);
    fclose(f);
    clear_env();
    setenv("LOGGP_TOPOLOGY", path, 1);
    char err[512] = "";
    cr_assert_eq(loggp_topology_start(err, sizeof err), 0, "%s", err);
    cr_assert_eq(loggp_topology_setup(0, 3, NULL, err, sizeof err), -1);
    cr_assert(strstr(err, "2 ranks, the run 3"), "%s", err);
    unlink(path);
    clear_env();
}

Test(topology_live, the_banner_names_each_level_with_a_value_and_where_the_nodes_come_from)
{
    /* docs/topology.md's banner line */
    clear_env();
    setenv("LOGGP_RANKS_PER_NODE", "2", 1);
    setenv("LOGGP_L_INTER", "50us", 1);
    char err[256] = "", line[512];
    cr_assert_eq(loggp_topology_start(err, sizeof err), 0, "%s", err);
    loggp_topology_describe(line, sizeof line);
    cr_assert_str_eq(line, "; per pair: inter-node L=50us (2 ranks per node)");
    clear_env();
}

Test(topology_live, the_banner_leaves_out_a_level_the_file_does_not_make)
{
    /* switches of 4 ranks: inter-switch shown; no groups: inter-group, which
     * would fall back to the switch's values, is not */
    set_up_file("ranks_per_node = 1\nranks_per_switch = 4\nL_inter_switch = 3us\n", 0, 8, NULL);
    char line[512];
    loggp_topology_describe(line, sizeof line);
    cr_assert_str_eq(line, "; per pair: inter-switch L=3us (1 rank per node, ...)");
}

Test(topology_live, an_inter_node_L_of_zero_takes_the_knob_off_those_pairs)
{
    /* docs/topology.md: a class's value is absolute, so --L 1us --L-inter 0 leaves the
     * pairs between nodes without L: the layer must apply the class, not the knob */
    clear_env();
    setenv("LOGGP_RANKS_PER_NODE", "1", 1);
    setenv("LOGGP_L_INTER", "0", 1);
    char err[256] = "";
    cr_assert_eq(loggp_topology_start(err, sizeof err), 0, "%s", err);
    cr_assert_eq(loggp_topology_setup(0, 2, NULL, err, sizeof err), 0, "%s", err);
    cr_assert_eq(loggp_topology_class_to(1), 1);
    cr_assert(!loggp_topo_L_knob[1]);
    cr_assert_eq(loggp_topo_L_ns[1], 0);
    told_values = -1;
    loggp_topology_enable();
    cr_assert_eq(told_values, 1);
    clear_env();
}

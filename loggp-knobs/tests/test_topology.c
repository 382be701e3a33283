/* Topology files and pair classes (core/topology.c). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

static loggp_topology parsed(const char *text)
{
    loggp_topology t;
    char err[512] = "";
    cr_assert_eq(loggp_topology_parse(text, &t, err, sizeof err), 0, "%s", err);
    return t;
}

static void refused(const char *text, const char *named)
{
    loggp_topology t;
    char err[512] = "";
    cr_assert_eq(loggp_topology_parse(text, &t, err, sizeof err), -1, "accepted: %s", text);
    cr_assert(strstr(err, named), "'%s' not in '%s'", named, err);
}

Test(topology, blocks_of_ranks_give_node_switch_and_group_classes)
{
    loggp_topology t = parsed("ranks_per_node = 2\nranks_per_switch = 4\nranks_per_group = 8\n"
                              "L_inter_node = 1us # comment\nL_inter_group = 9us\n");
    cr_assert_eq(loggp_topology_class(&t, 0, 1, 0, 0), 0);
    cr_assert_eq(loggp_topology_class(&t, 1, 2, 0, 0), 1);
    cr_assert_eq(loggp_topology_class(&t, 3, 4, 0, 0), 2);
    cr_assert_eq(loggp_topology_class(&t, 7, 8, 0, 0), 3);
    cr_assert_eq(loggp_topology_class(&t, 5, 5, 0, 0), 0);
    /* inter-switch has no L of its own: it takes inter-node's; no G anywhere: the knob's */
    cr_assert_eq(loggp_topology_source(&t, 0, 2), 1);
    cr_assert_eq(loggp_topology_source(&t, 0, 3), 3);
    cr_assert_eq(loggp_topology_source(&t, 1, 3), 0);
    cr_assert_eq(t.L_ps[3], 9000000);
    cr_assert(loggp_topology_has_values(&t));
    loggp_topology_free(&t);
}

Test(topology, without_ranks_per_node_the_hosts_are_the_nodes)
{
    loggp_topology t = parsed("L_inter_node = 5us\n");
    cr_assert_eq(loggp_topology_class(&t, 0, 1, 7, 7), 0);
    cr_assert_eq(loggp_topology_class(&t, 0, 1, 7, 8), 1);
    loggp_topology_free(&t);
}

Test(topology, a_matrix_names_each_ordered_pair)
{
    loggp_topology t = parsed("matrix =\n 0 1 3\n 2 0 1\n 3 1 0\nG_inter_node = 0.5ns/B\n");
    cr_assert_eq(t.matrix_n, 3);
    cr_assert_eq(loggp_topology_class(&t, 0, 2, 0, 0), 3);
    cr_assert_eq(loggp_topology_class(&t, 1, 0, 0, 0), 2);
    cr_assert_eq(loggp_topology_source(&t, 1, 3), 1);
    cr_assert_eq(t.G_ps[1], 500);
    char err[256];
    cr_assert_eq(loggp_topology_check_size(&t, 3, err, sizeof err), 0);
    cr_assert_eq(loggp_topology_check_size(&t, 4, err, sizeof err), -1);
    cr_assert(strstr(err, "3 ranks, the run 4"));
    loggp_topology_free(&t);
}

Test(topology, bad_files_are_refused_naming_the_line_and_value)
{
    refused("ranks_per_node = 2\nL_inter_node = 5\n", "line 2: L_inter_node: '5'");
    refused("ranks_per_node = two\n", "ranks_per_node = 'two'");
    refused("ranks_per_node = 2\nranks_per_node = 4\n", "given twice");
    refused("ranks_per_node = 2\nlatency = 1us\n", "unknown key 'latency'");
    refused("ranks_per_node = 3\nranks_per_switch = 4\n", "not a multiple");
    refused("ranks_per_node = 2\nranks_per_group = 4\n", "needs ranks_per_switch");
    refused("matrix =\n0 1\n1 0 1\n", "must be square");
    refused("matrix =\n0 1\n", "1 rows for 2 columns");
    refused("matrix =\n0 4\n4 0\n", "class numbers 0-3");
    refused("matrix =\n1 0\n0 0\n", "class 0");
    refused("matrix =\n0 1\n1 0\nranks_per_node = 1\n", "exclude each other");
    refused("# nothing\n", "nothing in it");
    refused("ranks_per_node 2\n", "not key = value");
}

Test(topology, the_short_form_comes_from_the_environment)
{
    setenv("LOGGP_RANKS_PER_NODE", "4", 1);
    setenv("LOGGP_L_INTER", "3us", 1);
    unsetenv("LOGGP_TOPOLOGY");
    loggp_topology t;
    int configured = 0;
    char err[256] = "";
    cr_assert_eq(loggp_topology_from_env(&t, &configured, err, sizeof err), 0, "%s", err);
    cr_assert(configured);
    cr_assert_eq(t.ranks_per[0], 4);
    cr_assert_eq(loggp_topology_class(&t, 3, 4, 0, 0), 1);
    setenv("LOGGP_L_INTER", "3", 1);
    cr_assert_eq(loggp_topology_from_env(&t, &configured, err, sizeof err), -1);
    cr_assert(strstr(err, "LOGGP_L_INTER=3"));
    setenv("LOGGP_TOPOLOGY", "/nonexistent.topo", 1);
    cr_assert_eq(loggp_topology_from_env(&t, &configured, err, sizeof err), -1);
    cr_assert(strstr(err, "put the values in the file"));
    unsetenv("LOGGP_TOPOLOGY");
    unsetenv("LOGGP_RANKS_PER_NODE");
    unsetenv("LOGGP_L_INTER");
    cr_assert_eq(loggp_topology_from_env(&t, &configured, err, sizeof err), 0);
    cr_assert_not(configured);
}

Test(topology, every_level_must_be_a_multiple_of_the_one_just_below)
{
    /* group 6 is a multiple of the node's 2 but not of the switch's 4 */
    refused("ranks_per_node = 2\nranks_per_switch = 4\nranks_per_group = 6\n", "ranks_per_group = 6");
    loggp_topology t = parsed("ranks_per_node = 2\nranks_per_switch = 4\nranks_per_group = 12\nL_inter_node = 1us\n");
    loggp_topology_free(&t);
}

Test(topology, one_rank_per_node_puts_every_pair_on_two_nodes)
{
    /* ranks_per_node = 1 is a node per rank, even when all ranks share one host */
    loggp_topology t = parsed("ranks_per_node = 1\nL_inter_node = 5us\n");
    cr_assert_eq(loggp_topology_class(&t, 0, 1, 0, 0), 1);
    cr_assert_eq(loggp_topology_class(&t, 1, 0, 0, 0), 1);
    cr_assert_eq(loggp_topology_class(&t, 1, 1, 0, 0), 0);
    loggp_topology_free(&t);
    refused("ranks_per_node = 0\nL_inter_node = 5us\n", "ranks_per_node = '0'");
}

Test(topology, a_value_at_any_level_counts_and_ranks_per_node_alone_is_none)
{
    /* docs/topology.md: ranks per node alone changes nothing */
    const struct {
        const char *text;
        int has;
    } cases[] = {
        {"ranks_per_node = 2\n", 0},
        {"ranks_per_node = 2\nL_inter_node = 1ns\n", 1},
        {"ranks_per_node = 2\nG_inter_node = 0.001ns/B\n", 1},
        {"ranks_per_node = 2\nranks_per_switch = 4\nL_inter_switch = 1us\n", 1},
        /* a value of 0 replaces the knob's as any other does */
        {"ranks_per_node = 2\nL_inter_node = 0\n", 1},
        {"ranks_per_node = 2\nG_inter_node = 0\n", 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        loggp_topology t = parsed(cases[i].text);
        cr_assert_eq(loggp_topology_has_values(&t), cases[i].has, "%s", cases[i].text);
        loggp_topology_free(&t);
    }
}

Test(topology, L_and_G_of_one_level_are_two_keys_and_G_alone_is_enough)
{
    loggp_topology t = parsed("L_inter_node = 2us\nG_inter_node = 0.5ns/B\n");
    cr_assert_eq(t.L_ps[1], 2000000);
    cr_assert_eq(t.G_ps[1], 500);
    loggp_topology_free(&t);
    /* nodes from the hosts, a per-byte gap between them and nothing else */
    t = parsed("G_inter_node = 0.5ns/B\n");
    cr_assert_eq(loggp_topology_source(&t, 1, 1), 1);
    cr_assert_eq(loggp_topology_source(&t, 0, 1), 0);
    loggp_topology_free(&t);
}

Test(topology, a_matrix_fits_only_a_run_of_its_own_size)
{
    loggp_topology t = parsed("matrix =\n 0 1 1\n 1 0 1\n 1 1 0\nL_inter_node = 1us\n");
    char err[256];
    cr_assert_eq(loggp_topology_check_size(&t, 2, err, sizeof err), -1, "a 3-rank matrix taken for 2 ranks");
    cr_assert(strstr(err, "3 ranks, the run 2"), "%s", err);
    cr_assert_eq(loggp_topology_check_size(&t, 3, err, sizeof err), 0);
    loggp_topology_free(&t);
}

Test(topology, the_short_forms_values_are_inter_node_ones)
{
    /* --L-inter and --G-inter are class 1's own values, not the knobs' */
    unsetenv("LOGGP_TOPOLOGY");
    setenv("LOGGP_RANKS_PER_NODE", "2", 1);
    setenv("LOGGP_L_INTER", "3us", 1);
    setenv("LOGGP_G_INTER", "0.25ns/B", 1);
    loggp_topology t;
    int configured = 0;
    char err[256] = "";
    cr_assert_eq(loggp_topology_from_env(&t, &configured, err, sizeof err), 0, "%s", err);
    cr_assert_eq(loggp_topology_source(&t, 0, 1), 1);
    cr_assert_eq(loggp_topology_source(&t, 1, 1), 1);
    cr_assert_eq(t.L_ps[1], 3000000);
    cr_assert_eq(t.G_ps[1], 250);
    cr_assert(loggp_topology_has_values(&t));
    /* pairs on one node keep the knobs */
    cr_assert_eq(loggp_topology_source(&t, 0, 0), 0);
    cr_assert_eq(loggp_topology_class(&t, 1, 2, 0, 0), 1);
    cr_assert_eq(loggp_topology_class(&t, 2, 3, 0, 0), 0);
    unsetenv("LOGGP_RANKS_PER_NODE");
    unsetenv("LOGGP_L_INTER");
    unsetenv("LOGGP_G_INTER");
}

Test(topology, the_json_gives_each_class_its_value_or_null_for_the_knob)
{
    /* docs/topology.md: each class's L_ns and G_ns_per_byte, null where the class takes the knob */
    loggp_topology t = parsed("ranks_per_node = 2\nranks_per_switch = 4\nranks_per_group = 8\n"
                              "L_inter_node = 1.5us\nG_inter_switch = 0.25ns/B\nL_inter_group = 4us\n");
    char json[1024];
    loggp_topology_json(&t, json, sizeof json);
    const char *classes[] = {
        "{\"class\": 0, \"name\": \"intra-node\", \"L_ns\": null, \"G_ns_per_byte\": null}",
        "{\"class\": 1, \"name\": \"inter-node\", \"L_ns\": 1500, \"G_ns_per_byte\": null}",
        "{\"class\": 2, \"name\": \"inter-switch\", \"L_ns\": 1500, \"G_ns_per_byte\": 0.25}",
        "{\"class\": 3, \"name\": \"inter-group\", \"L_ns\": 4000, \"G_ns_per_byte\": 0.25}",
    };
    for (size_t c = 0; c < 4; c++)
        cr_assert(strstr(json, classes[c]), "'%s' not in %s", classes[c], json);
    cr_assert(strstr(json, "\"ranks_per_node\": 2, \"ranks_per_switch\": 4, \"ranks_per_group\": 8"), "%s", json);
    loggp_topology_free(&t);
}

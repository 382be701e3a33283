/* Settings that would do nothing (core/unused.c): the closest known variable
 * name, and the per-pair classes no pair of a run reaches. */
#include <criterion/criterion.h>
#include <string.h>

#include "topology.h"
#include "unused.h"

Test(unused, every_variable_loggp_reads_is_known_and_others_are_not)
{
    cr_assert(loggp_known_variable("LOGGP_LATENCY"), "a knob's own variable");
    cr_assert(loggp_known_variable("LOGGP_TRACE"));
    cr_assert(loggp_known_variable("LOGGP_RUN_RECORD"));
    cr_assert_not(loggp_known_variable("LOGGP_LATENCEY"));
    cr_assert_not(loggp_known_variable("LOGGP_"));
}

Test(unused, the_closest_name_is_one_or_two_edits_away)
{
    cr_assert_str_eq(loggp_closest_variable("LOGGP_LATENCEY"), "LOGGP_LATENCY");
    cr_assert_str_eq(loggp_closest_variable("LOGGP_L_JITER"), "LOGGP_L_JITTER");
    cr_assert_str_eq(loggp_closest_variable("LOGGP_GAPP"), "LOGGP_GAP");
    cr_assert_str_eq(loggp_closest_variable("LOGGP_PROFLIE"), "LOGGP_PROFILE", "a swap is two edits");
    /* the common prefix counts for nothing: a short stranger is not "close" to LOGGP_OS */
    cr_assert_null(loggp_closest_variable("LOGGP_ZZZ"));
    cr_assert_null(loggp_closest_variable("LOGGP_WHATEVER"));
}

static int said;
static char last[512];

static void keep(const char *line, void *arg)
{
    (void)arg;
    said++;
    snprintf(last, sizeof last, "%s", line);
}

Test(unused, only_unknown_loggp_variables_are_named)
{
    char *env[] = {"PATH=/bin", "LOGGP_OS=1us", "LOGGP_SEED=3", "LOGGP_L_JITER=normal:5us", "XLOGGP_FOO=1", NULL};
    said = 0;
    cr_assert_eq(loggp_unknown_variables(env, keep, NULL), 1);
    cr_assert_eq(said, 1);
    cr_assert_str_eq(last, "LOGGP_L_JITER=normal:5us: loggp reads no variable LOGGP_L_JITER, so it does nothing "
                           "(did you mean LOGGP_L_JITTER?)");
}

static loggp_topology parsed(const char *text)
{
    loggp_topology t;
    char err[256];
    cr_assert_eq(loggp_topology_parse(text, &t, err, sizeof err), 0, "%s", err);
    return t;
}

Test(unused, a_level_without_its_ranks_reaches_no_pair)
{
    loggp_topology t = parsed("ranks_per_node = 2\nL_inter_switch = 20us\n");
    char why[384];
    int certain;
    cr_assert_null(loggp_topology_unreached(&t, 1, 8, 1, 0, why, sizeof why, &certain), "nodes of 2 of 8 ranks");
    cr_assert_not_null(loggp_topology_unreached(&t, 2, 8, 1, 0, why, sizeof why, &certain));
    cr_assert(certain);
    cr_assert(strstr(why, "without ranks_per_switch no pair is inter-switch"), "%s", why);
    loggp_topology_free(&t);
}

Test(unused, blocks_holding_every_rank_reach_no_pair)
{
    loggp_topology t = parsed("ranks_per_node = 2\nranks_per_switch = 4\nL_inter_switch = 20us\n");
    char why[384];
    int certain;
    cr_assert_null(loggp_topology_unreached(&t, 2, 8, 1, 0, why, sizeof why, &certain));
    cr_assert_null(loggp_topology_unreached(&t, 2, 0, 1, 0, why, sizeof why, &certain), "rank count unknown");
    cr_assert_not_null(loggp_topology_unreached(&t, 2, 4, 1, 0, why, sizeof why, &certain));
    cr_assert(strstr(why, "ranks_per_switch = 4 puts all 4 ranks on one switch"), "%s", why);
    cr_assert_not_null(loggp_topology_unreached(&t, 1, 2, 1, 0, why, sizeof why, &certain));
    cr_assert(strstr(why, "ranks_per_node = 2 puts all 2 ranks on one node"), "%s", why);
    loggp_topology_free(&t);
}

Test(unused, without_ranks_per_node_one_host_is_one_node)
{
    loggp_topology t = parsed("ranks_per_switch = 4\nL_inter_node = 5us\n");
    char why[384];
    int certain;
    cr_assert_not_null(loggp_topology_unreached(&t, 1, 8, 1, 0, why, sizeof why, &certain));
    cr_assert(certain && strstr(why, "the nodes are the hosts"), "%s", why);
    cr_assert_null(loggp_topology_unreached(&t, 1, 8, 0, 0, why, sizeof why, &certain), "several hosts");
    cr_assert_not_null(loggp_topology_unreached(&t, 1, 8, -1, 0, why, sizeof why, &certain));
    cr_assert_not(certain, "hosts not known: a condition");
    loggp_topology_free(&t);
}

Test(unused, a_matrix_reaches_the_classes_it_names)
{
    loggp_topology t = parsed("matrix =\n0 1\n1 0\nL_inter_node = 5us\nL_inter_switch = 9us\n");
    char why[384];
    int certain;
    cr_assert_null(loggp_topology_unreached(&t, 1, 2, 1, 0, why, sizeof why, &certain));
    cr_assert_not_null(loggp_topology_unreached(&t, 2, 2, 1, 0, why, sizeof why, &certain));
    cr_assert(strstr(why, "the matrix has no inter-switch pair"), "%s", why);
    loggp_topology_free(&t);
}

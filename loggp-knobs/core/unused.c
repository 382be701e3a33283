/* Settings that would do nothing (unused.h). */
#define _GNU_SOURCE
#include "unused.h"
#include "knobs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const loggp_other_variables[] = {
    /* read by libloggp.so at MPI_Init (runenv.h, knobs.h, topology.h) */
    "LOGGP_SCOPE", "LOGGP_OUTSIDE", "LOGGP_KNOB_FILE", "LOGGP_ENGINE", "LOGGP_LIVE", "LOGGP_ROUTE", "LOGGP_QUIET",
    "LOGGP_L_JITTER", "LOGGP_O_JITTER", "LOGGP_SEED", "LOGGP_TOPOLOGY", "LOGGP_RANKS_PER_NODE", "LOGGP_L_INTER",
    "LOGGP_G_INTER", "LOGGP_PROFILE", "LOGGP_TRACE", "LOGGP_CLOCK_SYNC", "LOGGP_TEST_CLOCK_SKEW",
    "LOGGP_RUN_RECORD",
    /* read by the loggp command and setup.sh */
    "LOGGP_LIBRARY", "LOGGP_COMMAND", "LOGGP_TESTBED", "LOGGP_TESTBED_RUN_DIR", "LOGGP_TESTBED_FAIL_AT",
    "LOGGP_VENV", "LOGGP_BUILD_DIR", "LOGGP_MPICH_CACHE",
    NULL,
};

int loggp_known_variable(const char *name)
{
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (strcmp(name, loggp_knob_table[i].env) == 0)
            return 1;
    for (int i = 0; loggp_other_variables[i]; i++)
        if (strcmp(name, loggp_other_variables[i]) == 0)
            return 1;
    return 0;
}

/* Levenshtein distance, for names of at most 63 characters (longer: far). */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63)
        return 64;
    size_t row[64];
    for (size_t j = 0; j <= m; j++)
        row[j] = j;
    for (size_t i = 1; i <= n; i++) {
        size_t diagonal = row[0];
        row[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t above = row[j];
            size_t best = diagonal + (a[i - 1] != b[j - 1]);
            if (above + 1 < best)
                best = above + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            row[j] = best;
            diagonal = above;
        }
    }
    return row[m];
}

const char *loggp_closest_variable(const char *name)
{
    /* compared without the common prefix, which would make any two names look close */
    name += strncmp(name, "LOGGP_", 6) == 0 ? 6 : 0;
    size_t limit = strlen(name) / 3 > 1 ? strlen(name) / 3 : 1, best = limit + 1;
    const char *closest = NULL;
    for (int i = 0; i < LOGGP_KNOB_COUNT + 64; i++) {
        const char *known = i < LOGGP_KNOB_COUNT ? loggp_knob_table[i].env : loggp_other_variables[i - LOGGP_KNOB_COUNT];
        if (!known)
            break;
        size_t d = distance(name, known + 6);
        if (d < best) {
            best = d;
            closest = known;
        }
    }
    return closest;
}

int loggp_unknown_variables(char *const *env, void (*say)(const char *line, void *arg), void *arg)
{
    int count = 0;
    for (; env && *env; env++) {
        const char *eq = strchr(*env, '=');
        if (strncmp(*env, "LOGGP_", 6) != 0 || !eq)
            continue;
        char name[128];
        size_t n = (size_t)(eq - *env);
        if (n >= sizeof name)
            n = sizeof name - 1;
        memcpy(name, *env, n);
        name[n] = '\0';
        if (loggp_known_variable(name))
            continue;
        const char *closest = loggp_closest_variable(name);
        char line[512];
        snprintf(line, sizeof line, "%.200s: loggp reads no variable %s, so it does nothing%s%s%s", *env, name,
                 closest ? " (did you mean " : "", closest ? closest : "", closest ? "?)" : "");
        say(line, arg);
        count++;
    }
    return count;
}

static const char *const level_keys[2][LOGGP_TOPO_LEVELS] = {
    {"ranks_per_node", "ranks_per_switch", "ranks_per_group"},
    {"LOGGP_RANKS_PER_NODE", "ranks_per_switch", "ranks_per_group"},
};
static const char *const level_words[LOGGP_TOPO_LEVELS] = {"node", "switch", "group"};

const char *loggp_topology_unreached(const loggp_topology *t, int c, int nranks, int one_host, int short_form,
                                     char *why, size_t len, int *certain)
{
    *certain = 1;
    const char *const *keys = level_keys[short_form ? 1 : 0];
    const char *class_name = loggp_topo_class_names[c];
    if (t->matrix_n) {
        for (int i = 0; i < t->matrix_n * t->matrix_n; i++)
            if (t->matrix[i] == c)
                return NULL;
        snprintf(why, len, "the matrix has no %s pair (class %d)", class_name, c);
        return why;
    }
    if (c >= 2 && !t->ranks_per[c - 1]) {
        snprintf(why, len, "without %s no pair is %s (pairs on different %ss all count as %s)", keys[c - 1],
                 class_name, level_words[c - 2], loggp_topo_class_names[c - 1]);
        return why;
    }
    /* every level from the node up to the one that separates class c's pairs */
    for (int level = 0; level < c; level++) {
        int r = t->ranks_per[level];
        if (!r && level == 0) {
            if (one_host == 1)
                snprintf(why, len, "every rank runs on this one host, and without %s (ranks per emulated node) "
                         "the nodes are the hosts: every pair is intra-node", keys[0]);
            else if (one_host == -1 && (*certain = 0) == 0)
                snprintf(why, len, "without %s (ranks per emulated node) the nodes are the hosts: ranks "
                         "all started on one host get none of it", keys[0]);
            if (one_host != 0)
                return why;
            continue;
        }
        if (nranks > 0 && r >= nranks) {
            snprintf(why, len, "%s%s%d puts all %d ranks on one %s: no pair is %s", keys[level],
                     short_form && level == 0 ? "=" : " = ", r, nranks, level_words[level], class_name);
            return why;
        }
    }
    return NULL;
}

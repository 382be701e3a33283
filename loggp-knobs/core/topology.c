/* Topologies (topology.h): the file parser, the pair classes, the JSON form. */
#define _GNU_SOURCE
#include "topology.h"
#include "knobs.h"
#include "knobs_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPOLOGY_FILE_MAX (1 << 20)
#define MATRIX_MAX_RANKS 4096

const char *const loggp_topo_class_names[LOGGP_TOPO_CLASSES] = {"intra-node", "inter-node", "inter-switch",
                                                                 "inter-group"};
static const char *const level_names[LOGGP_TOPO_LEVELS] = {"node", "switch", "group"};

static int parse_count(const char *text, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end || v < 1 || v > INT_MAX / 2)
        return -1;
    *out = (int)v;
    return 0;
}

/* "L_inter_switch" -> knob L, class 2; -1 if not a value key. */
static int value_key(const char *key, int *is_G)
{
    if ((key[0] != 'L' && key[0] != 'G') || strncmp(key + 1, "_inter_", 7) != 0)
        return -1;
    *is_G = key[0] == 'G';
    for (int level = 0; level < LOGGP_TOPO_LEVELS; level++)
        if (strcmp(key + 8, level_names[level]) == 0)
            return level + 1;
    return -1;
}

static int level_key(const char *key)
{
    for (int level = 0; level < LOGGP_TOPO_LEVELS; level++)
        if (strncmp(key, "ranks_per_", 10) == 0 && strcmp(key + 10, level_names[level]) == 0)
            return level;
    return -1;
}

/* One matrix row of class digits; its length in *n. */
static int parse_row(char *line, uint8_t *row, int cap, int *n)
{
    *n = 0;
    char *save = NULL;
    for (char *tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
        if (strlen(tok) != 1 || tok[0] < '0' || tok[0] > '3' || *n >= cap)
            return -1;
        row[(*n)++] = (uint8_t)(tok[0] - '0');
    }
    return 0;
}

static int check_levels(const loggp_topology *t, char *err, size_t errlen)
{
    const int *r = t->ranks_per;
    if (r[2] && !r[1]) {
        loggp_set_err(err, errlen, "ranks_per_group needs ranks_per_switch");
        return -1;
    }
    for (int level = 1; level < LOGGP_TOPO_LEVELS; level++)
        if (r[level] && r[level - 1] && r[level] % r[level - 1]) {
            loggp_set_err(err, errlen, "ranks_per_%s = %d is not a multiple of ranks_per_%s = %d",
                          level_names[level], r[level], level_names[level - 1], r[level - 1]);
            return -1;
        }
    if (t->matrix_n && (r[0] || r[1] || r[2])) {
        loggp_set_err(err, errlen, "a matrix and ranks_per_* exclude each other");
        return -1;
    }
    for (int i = 0; i < t->matrix_n; i++)
        if (t->matrix[i * t->matrix_n + i]) {
            loggp_set_err(err, errlen, "matrix row %d: a rank to itself must be class 0", i);
            return -1;
        }
    return 0;
}

/* One "key = value" line. */
static int parse_item(loggp_topology *t, char *key, char *value, unsigned *seen, int *in_matrix, char *err,
                      size_t errlen)
{
    int is_G = 0, level = level_key(key), cls = value_key(key, &is_G);
    unsigned bit = level >= 0 ? 1u << level : cls > 0 ? 1u << (4 + cls + 4 * is_G) : strcmp(key, "matrix") ? 0 : 1u << 15;
    if (!bit) {
        loggp_set_err(err, errlen, "unknown key '%s' (known: ranks_per_node, ranks_per_switch, ranks_per_group, "
                      "L_inter_node, L_inter_switch, L_inter_group, G_inter_*, matrix)", key);
        return -1;
    }
    if (*seen & bit) {
        loggp_set_err(err, errlen, "'%s' given twice", key);
        return -1;
    }
    *seen |= bit;
    if (level >= 0) {
        if (parse_count(value, &t->ranks_per[level]) != 0) {
            loggp_set_err(err, errlen, "%s = '%s': expected a whole number of ranks >= 1", key, value);
            return -1;
        }
        return 0;
    }
    if (cls > 0) {
        char kerr[256];
        int64_t *slot = is_G ? &t->G_ps[cls] : &t->L_ps[cls];
        if (loggp_parse_knob(is_G ? LOGGP_KNOB_GAP_PER_BYTE : LOGGP_KNOB_LATENCY, value, slot, kerr, sizeof kerr) != 0) {
            loggp_set_err(err, errlen, "%s: %s", key, kerr);
            return -1;
        }
        *(is_G ? &t->G_set : &t->L_set) |= 1u << cls;
        return 0;
    }
    if (*value) {
        loggp_set_err(err, errlen, "matrix: its rows go on the lines after 'matrix =', one per sending rank");
        return -1;
    }
    *in_matrix = 1;
    return 0;
}

static int add_row(loggp_topology *t, char *line, int *rows, char *err, size_t errlen)
{
    uint8_t row[MATRIX_MAX_RANKS];
    int n;
    if (parse_row(line, row, MATRIX_MAX_RANKS, &n) != 0 || n == 0) {
        loggp_set_err(err, errlen, "matrix row %d: expected class numbers 0-3 separated by spaces, at most %d",
                      *rows, MATRIX_MAX_RANKS);
        return -1;
    }
    if (*rows == 0) {
        t->matrix = calloc((size_t)n * (size_t)n, 1);
        if (!t->matrix) {
            loggp_set_err(err, errlen, "no memory for a %d-rank matrix", n);
            return -1;
        }
        t->matrix_n = n;
    }
    if (n != t->matrix_n || *rows >= t->matrix_n) {
        loggp_set_err(err, errlen, "matrix row %d: %d columns in a %d-rank matrix (it must be square)", *rows, n,
                      t->matrix_n);
        return -1;
    }
    memcpy(t->matrix + (size_t)*rows * (size_t)n, row, (size_t)n);
    (*rows)++;
    return 0;
}

int loggp_topology_parse(const char *text, loggp_topology *t, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    char *copy = strdup(text), lerr[384];
    if (!copy) {
        loggp_set_err(err, errlen, "no memory");
        return -1;
    }
    unsigned seen = 0;
    int in_matrix = 0, rows = 0, lineno = 0, rc = 0;
    for (char *p = copy; p && rc == 0; lineno++) {
        char *line = p, *nl = strchr(p, '\n');
        if (nl)
            *nl = '\0';
        p = nl ? nl + 1 : NULL;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        line = loggp_trim(line);
        if (!*line)
            continue;
        char *eq = strchr(line, '=');
        if (eq) {
            *eq = '\0';
            in_matrix = 0;
            rc = parse_item(t, loggp_trim(line), loggp_trim(eq + 1), &seen, &in_matrix, lerr, sizeof lerr);
        } else if (in_matrix) {
            rc = add_row(t, line, &rows, lerr, sizeof lerr);
        } else {
            loggp_set_err(lerr, sizeof lerr, "'%s' is not key = value", line);
            rc = -1;
        }
        if (rc != 0)
            loggp_set_err(err, errlen, "line %d: %s", lineno + 1, lerr);
    }
    free(copy);
    if (rc == 0 && t->matrix_n && rows != t->matrix_n) {
        loggp_set_err(err, errlen, "matrix: %d rows for %d columns (it must be square)", rows, t->matrix_n);
        rc = -1;
    }
    if (rc == 0 && (seen & 1u << 15) && !t->matrix_n) {
        loggp_set_err(err, errlen, "matrix: no rows");
        rc = -1;
    }
    if (rc == 0 && !t->matrix_n && !t->ranks_per[0] && !t->ranks_per[1] && !(seen & 0xff0)) {
        loggp_set_err(err, errlen, "nothing in it: give ranks_per_* or a matrix, and L_inter_* or G_inter_* values");
        rc = -1;
    }
    if (rc == 0)
        rc = check_levels(t, err, errlen);
    if (rc != 0)
        loggp_topology_free(t);
    return rc;
}

int loggp_topology_load(const char *path, loggp_topology *t, char *err, size_t errlen)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        loggp_set_err(err, errlen, "topology file %s: %s", path, strerror(errno));
        return -1;
    }
    char *text = malloc(TOPOLOGY_FILE_MAX + 1);
    size_t n = text ? fread(text, 1, TOPOLOGY_FILE_MAX + 1, f) : 0;
    int bad = ferror(f);
    fclose(f);
    if (!text || bad || n > TOPOLOGY_FILE_MAX || memchr(text, '\0', n)) {
        loggp_set_err(err, errlen, "topology file %s: %s", path,
                      !text ? "no memory" : bad ? "unreadable" : n > TOPOLOGY_FILE_MAX ? "larger than 1 MiB" : "not text");
        free(text);
        return -1;
    }
    text[n] = '\0';
    char perr[512];
    int rc = loggp_topology_parse(text, t, perr, sizeof perr);
    free(text);
    if (rc != 0)
        loggp_set_err(err, errlen, "topology file %s: %s", path, perr);
    return rc;
}

int loggp_topology_from_env(loggp_topology *t, int *configured, char *err, size_t errlen)
{
    memset(t, 0, sizeof *t);
    const char *file = getenv("LOGGP_TOPOLOGY");
    const char *short_form[] = {"LOGGP_RANKS_PER_NODE", "LOGGP_L_INTER", "LOGGP_G_INTER"};
    const char *given = NULL;
    for (int i = 0; i < 3; i++)
        if (getenv(short_form[i]) && *getenv(short_form[i]))
            given = short_form[i];
    *configured = (file && *file) || given;
    if (file && *file) {
        if (given) {
            loggp_set_err(err, errlen, "LOGGP_TOPOLOGY=%s and %s: put the values in the file instead", file, given);
            return -1;
        }
        char why[768];
        if (loggp_topology_load(file, t, why, sizeof why) != 0) {
            loggp_set_err(err, errlen, "LOGGP_TOPOLOGY=%s: %s", file, why);
            return -1;
        }
        return 0;
    }
    if (!given)
        return 0;
    const char *rpn = getenv(short_form[0]), *L = getenv(short_form[1]), *G = getenv(short_form[2]);
    char kerr[256];
    if (rpn && *rpn && parse_count(rpn, &t->ranks_per[0]) != 0) {
        loggp_set_err(err, errlen, "LOGGP_RANKS_PER_NODE=%s: expected a whole number of ranks >= 1", rpn);
        return -1;
    }
    if (L && *L) {
        if (loggp_parse_knob(LOGGP_KNOB_LATENCY, L, &t->L_ps[1], kerr, sizeof kerr) != 0) {
            loggp_set_err(err, errlen, "LOGGP_L_INTER=%s: %s", L, kerr);
            return -1;
        }
        t->L_set |= 2u;
    }
    if (G && *G) {
        if (loggp_parse_knob(LOGGP_KNOB_GAP_PER_BYTE, G, &t->G_ps[1], kerr, sizeof kerr) != 0) {
            loggp_set_err(err, errlen, "LOGGP_G_INTER=%s: %s", G, kerr);
            return -1;
        }
        t->G_set |= 2u;
    }
    return 0;
}

int loggp_topology_check_size(const loggp_topology *t, int nranks, char *err, size_t errlen)
{
    if (t->matrix_n && t->matrix_n != nranks) {
        loggp_set_err(err, errlen, "the topology's matrix has %d ranks, the run %d", t->matrix_n, nranks);
        return -1;
    }
    return 0;
}

int loggp_topology_has_values(const loggp_topology *t)
{
    /* a class's value replaces the knob's, so a 0 of its own counts: with --L 1us,
     * L_inter_node = 0 takes L off the pairs between nodes */
    return (t->L_set >> 1) != 0 || (t->G_set >> 1) != 0;
}

int loggp_topology_class(const loggp_topology *t, int sender, int receiver, int node_of_sender, int node_of_receiver)
{
    if (sender == receiver)
        return 0;
    if (t->matrix_n)
        return sender < t->matrix_n && receiver < t->matrix_n ? t->matrix[sender * t->matrix_n + receiver] : 0;
    const int *r = t->ranks_per;
    int same_node = r[0] ? sender / r[0] == receiver / r[0] : node_of_sender == node_of_receiver;
    if (same_node)
        return 0;
    if (!r[1] || sender / r[1] == receiver / r[1])
        return 1;
    if (!r[2] || sender / r[2] == receiver / r[2])
        return 2;
    return 3;
}

int loggp_topology_source(const loggp_topology *t, int is_G, int c)
{
    unsigned set = is_G ? t->G_set : t->L_set;
    while (c > 0 && !((set >> c) & 1))
        c--;
    return c;
}

size_t loggp_topology_json(const loggp_topology *t, char *buf, size_t len)
{
    size_t used = 0;
#define PUT(...)                                                                  \
    do {                                                                          \
        int n_ = snprintf(buf + used, used < len ? len - used : 0, __VA_ARGS__); \
        if (n_ > 0)                                                               \
            used += (size_t)n_;                                                   \
    } while (0)
    PUT("{\"levels\": {");
    for (int level = 0; level < LOGGP_TOPO_LEVELS; level++)
        PUT("%s\"ranks_per_%s\": %d", level ? ", " : "", level_names[level], t->ranks_per[level]);
    PUT("}, \"matrix_ranks\": %d, \"classes\": [", t->matrix_n);
    for (int c = 0; c < LOGGP_TOPO_CLASSES; c++) {
        char L[32] = "null", G[32] = "null";
        int sL = loggp_topology_source(t, 0, c), sG = loggp_topology_source(t, 1, c);
        if (sL)
            loggp_format_ns(t->L_ps[sL], L, sizeof L);
        if (sG)
            loggp_format_ns(t->G_ps[sG], G, sizeof G);
        PUT("%s{\"class\": %d, \"name\": \"%s\", \"L_ns\": %s, \"G_ns_per_byte\": %s}", c ? ", " : "", c,
            loggp_topo_class_names[c], L, G);
    }
    PUT("]}");
#undef PUT
    return used < len ? used : (len ? len - 1 : 0);
}

void loggp_topology_free(loggp_topology *t)
{
    free(t->matrix);
    t->matrix = NULL;
    t->matrix_n = 0;
}

/* `loggp-knobs show`: the knobs programs started from this shell get, and
 * where each comes from, as a table (also printed by set and reset) or JSON;
 * it refuses every LOGGP_* variable MPI_Init would (so `loggp run` asks it). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"
#include "runenv.h"
#include "topology.h"
#include "unused.h"

extern char **environ;

/* Warnings: settings programs started from this shell would accept and then
 * not apply (unused.h). Said on stderr, and in the JSON for `loggp run`. */
#define MAX_WARNINGS 16
static char warnings[MAX_WARNINGS][640];
static int warning_count;

static void warn(const char *line, void *arg)
{
    (void)arg;
    if (warning_count < MAX_WARNINGS)
        snprintf(warnings[warning_count++], sizeof warnings[0], "%s", line);
}

/* Per-pair values of the environment's topology that no pair would get. nranks
 * 0: not known; one_host as loggp_topology_unreached takes it. */
static void warn_unreached_pairs(int nranks, int one_host)
{
    loggp_topology t;
    int configured = 0;
    char err[1024];
    if (loggp_topology_from_env(&t, &configured, err, sizeof err) != 0 || !configured)
        return;
    const char *file = getenv("LOGGP_TOPOLOGY");
    int short_form = !(file && *file);
    static const char *const short_vars[2] = {"LOGGP_L_INTER", "LOGGP_G_INTER"};
    static const char *const levels[LOGGP_TOPO_CLASSES] = {"", "node", "switch", "group"};
    for (int c = 1; c < LOGGP_TOPO_CLASSES; c++) {
        char values[256] = "", why[384];
        size_t used = 0;
        int n = 0;
        for (int is_G = 0; is_G < 2; is_G++) {
            int64_t v = is_G ? t.G_ps[c] : t.L_ps[c];
            if (!(((is_G ? t.G_set : t.L_set) >> c) & 1) || !v)
                continue;
            char text[64];
            loggp_format_knob(is_G ? LOGGP_KNOB_GAP_PER_BYTE : LOGGP_KNOB_LATENCY, v, text, sizeof text);
            if (short_form)
                used += (size_t)snprintf(values + used, sizeof values - used, "%s%s=%s", n ? " and " : "",
                                         short_vars[is_G], getenv(short_vars[is_G]));
            else
                used += (size_t)snprintf(values + used, sizeof values - used, "%s%c_inter_%s = %s",
                                         n ? " and " : "", is_G ? 'G' : 'L', levels[c], text);
            n++;
        }
        int certain;
        if (!n || !loggp_topology_unreached(&t, c, nranks, one_host, short_form, why, sizeof why, &certain))
            continue;
        char line[900];
        snprintf(line, sizeof line, "%s%s%s%s %s: %s", short_form ? "" : "LOGGP_TOPOLOGY=", short_form ? "" : file,
                 short_form ? "" : ": ", values,
                 certain ? (n > 1 ? "are never applied" : "is never applied")
                         : (n > 1 ? "apply between nodes only" : "applies between nodes only"), why);
        warn(line, NULL);
    }
    loggp_topology_free(&t);
}

/* Where a knob's effective value comes from: the environment variable that
 * overrides the file for programs started from this shell, the file, or no
 * file yet (0). */
static const char *source_of(int i, unsigned from_env, int exists)
{
    if (from_env & (1u << i))
        return loggp_knob_table[i].env;
    return exists ? "file" : "default";
}

/* The table: each knob's effective value (environment over file) and where it
 * comes from. */
void print_table(const loggp_knobs *knobs, const char *path, int exists, unsigned from_env)
{
    printf("%-4s %-12s %-19s %s\n", "knob", "value", "from", "meaning");
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char value[64];
        loggp_format_knob((loggp_knob_id)i, knobs->ps[i], value, sizeof value);
        printf("%-4s %-12s %-19s %s\n", loggp_knob_table[i].name, value, source_of(i, from_env, exists),
               loggp_knob_table[i].meaning);
    }
    printf("scope: %s\n", knobs->scope == LOGGP_SCOPE_KERNEL
                               ? "kernel (the knobs apply inside the program's kernel region only: loggp_hint "
                                 "IN_KERNEL or MPI_Pcontrol)"
                               : "all (the knobs apply everywhere)");
    if (!path[0])
        printf("file: none (neither LOGGP_KNOB_FILE, XDG_CONFIG_HOME nor HOME is set: only the environment "
               "gives knobs)\n");
    else
        printf("file: %s%s\n", path, exists ? "" : " (not written yet: every knob is 0)");
    if (from_env)
        printf("programs started from this shell get these values: the environment overrides the file "
               "for the knobs it names, and fixes them for the run\n");
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* The jitter line for the table, only when some jitter is on. */
static void print_jitter(const loggp_run_env *run)
{
    if (run->L_jitter.kind == JITTER_NONE && run->o_jitter.kind == JITTER_NONE)
        return;
    char L[96], o[96];
    loggp_jitter_format(&run->L_jitter, L, sizeof L);
    loggp_jitter_format(&run->o_jitter, o, sizeof o);
    printf("jitter: L %s, o %s, seed %llu (LOGGP_L_JITTER, LOGGP_O_JITTER, LOGGP_SEED)\n", L, o,
           (unsigned long long)run->seed);
}

static void print_json(const loggp_knobs *file, const loggp_knobs *effective, unsigned from_env,
                       const char *path, int exists, const loggp_run_env *run)
{
    printf("{\"file\": ");
    if (path[0])
        json_string(path);
    else
        printf("null");
    printf(", \"exists\": %s, \"knobs\": {", exists ? "true" : "false");
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char value[64];
        loggp_format_knob((loggp_knob_id)i, file->ps[i], value, sizeof value);
        printf("%s\"%s\": \"%s\"", i ? ", " : "", loggp_knob_table[i].name, value);
    }
    printf("}, \"knobs_ns\": {");
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char ns[48];
        loggp_format_ns(file->ps[i], ns, sizeof ns);
        printf("%s\"%s\": %s", i ? ", " : "",
               i == LOGGP_KNOB_GAP_PER_BYTE ? "G_per_byte" : loggp_knob_table[i].name, ns);
    }
    printf("}, \"effective\": {");
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char value[64];
        loggp_format_knob((loggp_knob_id)i, effective->ps[i], value, sizeof value);
        printf("%s\"%s\": {\"value\": \"%s\", \"from\": \"%s\"}", i ? ", " : "", loggp_knob_table[i].name,
               value, source_of(i, from_env, exists));
    }
    printf("}, \"scope\": \"%s\", \"effective_scope\": \"%s\", \"environment\": {",
           loggp_scope_names[file->scope], loggp_scope_names[effective->scope]);
    int any = 0;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        const char *v = getenv(loggp_knob_table[i].env);
        if (v) {
            printf("%s\"%s\": ", any ? ", " : "", loggp_knob_table[i].env);
            json_string(v);
            any = 1;
        }
    }
    char L[96], o[96];
    loggp_jitter_format(&run->L_jitter, L, sizeof L);
    loggp_jitter_format(&run->o_jitter, o, sizeof o);
    /* per_pair_L: a topology gives some pairs an L of their own, which jitter draws around too */
    printf("}, \"jitter\": {\"L\": \"%s\", \"o\": \"%s\", \"seed\": %llu}, \"per_pair_L\": %s, "
           "\"outside\": \"%s\", \"warnings\": [", L, o, (unsigned long long)run->seed,
           run->topology_L ? "true" : "false", loggp_outside_names[run->outside]);
    for (int i = 0; i < warning_count; i++) {
        printf("%s", i ? ", " : "");
        json_string(warnings[i]);
    }
    printf("]}\n");
}

int cmd_show(int argc, char **argv)
{
    int json = 0, folders = 1;
    long ranks = 0;
    const char *via = "loggp";
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s show [--json] [--ranks N] [--ranks-elsewhere] [--via loggp|netem]\n"
                   "Prints the values programs started from this shell get: the environment's LOGGP_*\n"
                   "variables over the knob file, each marked with where it comes from (a table, or\n"
                   "JSON: \"knobs\" the file's values, \"effective\" with \"from\", \"jitter\"). A variable\n"
                   "MPI_Init would refuse (knobs, scope, LOGGP_OUTSIDE, jitter, seed, topology, engine, LOGGP_QUIET,\n"
                   "LOGGP_LIVE, LOGGP_ROUTE, the LOGGP_PROFILE and LOGGP_TRACE folders) exits 1 naming it.\n"
                   "A warning on stderr (and in the JSON's \"warnings\") names a setting that would do\n"
                   "nothing: a LOGGP_* variable loggp does not read, per-pair L or G no pair gets.\n"
                   "  --json      JSON instead of a table (default: a table)\n"
                   "  --ranks N   the run's rank count, all on this host unless --ranks-elsewhere: per-pair\n"
                   "              values no pair of N ranks gets are named (default: not known)\n"
                   "  --ranks-elsewhere  the ranks run on other hosts: their output folders are not\n"
                   "              checked here (default: checked)\n"
                   "  --via loggp|netem  default loggp; netem: what tc/netem applies on the testbed's links\n"
                   "example: LOGGP_LATENCY=5us %s show\n", prog, prog);
            return 0;
        }
        int v = parse_via(argc, argv, &i, &via);
        if (v < 0)
            return EXIT_USAGE;
        if (v)
            continue;
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (strcmp(argv[i], "--ranks-elsewhere") == 0)
            folders = 0;
        else if (strcmp(argv[i], "--ranks") == 0) {
            char *end;
            if (i + 1 >= argc)
                return usage_error("show: --ranks needs a number%s", "");
            ranks = strtol(argv[++i], &end, 10);
            if (*end || end == argv[i] || ranks < 1 || ranks > 1 << 24)
                return usage_error("show: --ranks '%s': expected a whole number >= 1", argv[i]);
        }
        else
            return usage_error("show: unknown option '%s'", argv[i]);
    }
    if (strcmp(via, "netem") == 0)
        return run_netem("show", argc, argv);
    char path[4096], where[512];
    loggp_knobs knobs = {0};
    int exists = 0;
    if (loggp_knob_file_path(path, sizeof path, where, sizeof where) != 0)
        path[0] = '\0'; /* no place for a file: as at MPI_Init, only the environment gives knobs */
    else if (load_or_report(path, &knobs, &exists) != 0)
        return 1;
    /* What an MPI program started from this shell gets: a bad variable would
     * stop its MPI_Init, so it stops show too. */
    loggp_knobs effective = knobs;
    unsigned from_env = 0;
    char err[1024];
    int env_scope = 0, scope_set = loggp_scope_from_env(&env_scope, err, sizeof err);
    if (scope_set > 0)
        effective.scope = env_scope;
    loggp_run_env run;
    if (scope_set < 0 || loggp_knobs_apply_env(&effective, &from_env, err, sizeof err) != 0 ||
        loggp_run_env_check(&run, folders, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n(MPI programs started from this shell would stop at MPI_Init; fix or unset it)\n",
                prog, err);
        return 1;
    }
    loggp_unknown_variables(environ, warn, NULL);
    warn_unreached_pairs((int)ranks, !folders ? 0 : ranks ? 1 : -1);
    for (int i = 0; i < warning_count; i++)
        fprintf(stderr, "%s: warning: %s\n", prog, warnings[i]);
    if (json) {
        print_json(&knobs, &effective, from_env, path, exists, &run);
    } else {
        print_table(&effective, path, exists, from_env);
        print_jitter(&run);
        if (run.outside == LOGGP_OUTSIDE_ARMED)
            printf("outside the kernel region: armed (LOGGP_OUTSIDE): each knob set applies its smallest step "
                   "(1 ns, G 0.001 ns/B)%s\n", effective.scope == LOGGP_SCOPE_KERNEL
                       ? "" : "; no effect while the scope is all");
    }
    return 0;
}

/* loggp-knobs: set, show and reset the LogGP knobs that libloggp.so applies,
 * and print the environment that carries them to ranks on other nodes. */
#include "cli.h"
#include "knobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


const char *prog = "loggp-knobs";

static void usage_main(FILE *out)
{
    fprintf(out,
            "usage: %s <command> [options]\n"
            "\n"
            "commands:\n"
            "  set [--o T] [--os T] [--or T] [--g T] [--G T/B] [--L T]   change the knobs given\n"
            "      [--via netem]                                        (L, G on the testbed's links)\n"
            "  show [--json]                                            print the knobs\n"
            "  reset                                                    set every knob to 0\n"
            "  env [--format sh|mpiexec|srun] [knob options]            environment for remote ranks\n"
            "  path                                                     print the knob file's path\n"
            "  parse [knob options]                                     check values, print them as JSON\n"
            "  topology FILE [--ranks N]                                check a topology file, print it as JSON\n"
            "\n"
            "Knobs are increments over the machine's own LogGP parameters, with units:\n"
            "  times: ps, ns, us (or \xc2\xb5s), ms, s, right after the number (10us, 1.5us); 0 needs no unit;\n"
            "  G: time per byte (0.5ns/B, 2us/KiB). Units are case-sensitive; no sign, no spaces.\n"
            "  --o sets both o_s and o_r. Running applications pick changes up within ~10 ms.\n"
            "The knob file is $LOGGP_KNOB_FILE, else $XDG_CONFIG_HOME/loggp/knobs, else ~/.config/loggp/knobs.\n"
            "`%s <command> --help` for a command's options; `%s --version` for the version.\n"
            "example: %s set --L 10us && %s show\n",
            prog, prog, prog, prog, prog);
}

int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see `%s --help`)\n", prog);
    return EXIT_USAGE;
}

int is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

/* Knob options given on a command line: values and which were set. */
typedef struct {
    loggp_knobs values;
    unsigned given;
    int scope_given; /* values.scope was given (--scope) */
} knob_options;

/* "--scope all|kernel" at argv[*i]: 1 if consumed, 0 if not it, -1 after an error. */
static int parse_scope_option(int argc, char **argv, int *i, knob_options *opts)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--scope") != 0 && strncmp(arg, "--scope=", 8) != 0)
        return 0;
    const char *value = arg[7] == '=' ? arg + 8 : (*i + 1 < argc ? argv[++*i] : "");
    char err[128];
    if (loggp_parse_scope(value, &opts->values.scope, err, sizeof err) != 0) {
        fprintf(stderr, "%s: --%s\n", prog, err);
        return -1;
    }
    opts->scope_given = 1;
    return 1;
}

/* Parses one knob option at argv[*i] ("--os 5us" or "--os=5us"). Returns 1 if
 * consumed, 0 if argv[*i] is not a knob option, -1 after printing an error. */
static int parse_knob_option(int argc, char **argv, int *i, knob_options *opts)
{
    const char *arg = argv[*i];
    if (strncmp(arg, "--", 2) != 0)
        return 0;
    char flag[16];
    const char *eq = strchr(arg + 2, '=');
    size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    if (n == 0 || n >= sizeof flag)
        return 0;
    memcpy(flag, arg + 2, n);
    flag[n] = '\0';
    int both = strcmp(flag, "o") == 0;
    int id = both ? LOGGP_KNOB_O_S : loggp_knob_by_flag(flag);
    if (id < 0)
        return 0;
    const char *value = eq ? eq + 1 : NULL;
    if (!value) {
        if (*i + 1 >= argc) {
            fprintf(stderr, "%s: --%s needs a value (e.g. --%s %s)\n", prog, flag, flag,
                    loggp_knob_table[id].per_byte ? "0.5ns/B" : "10us");
            return -1;
        }
        value = argv[++*i];
    }
    int64_t ps;
    char why[256];
    if (loggp_parse_knob((loggp_knob_id)id, value, &ps, why, sizeof why) != 0) {
        fprintf(stderr, "%s: --%s: %s\n", prog, flag, why);
        return -1;
    }
    int ids[2] = {id, both ? LOGGP_KNOB_O_R : -1};
    for (int k = 0; k < 2 && ids[k] >= 0; k++) {
        if (opts->given & (1u << ids[k])) {
            fprintf(stderr, "%s: knob %s is given twice (--o sets both o_s and o_r)\n", prog,
                    loggp_knob_table[ids[k]].name);
            return -1;
        }
        opts->values.ps[ids[k]] = ps;
        opts->given |= 1u << ids[k];
    }
    return 1;
}

/* `--via netem` hands L and G to the testbed's kernel emulation instead of
 * libloggp.so: runs `loggp testbed netem <action> ...`. Returns 1 if argv[*i]
 * was --via (setting *via), 0 if not, -1 on error. */
static int parse_via(int argc, char **argv, int *i, const char **via)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--via") != 0 && strncmp(arg, "--via=", 6) != 0)
        return 0;
    const char *value = arg[5] == '=' ? arg + 6 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!value || (strcmp(value, "loggp") != 0 && strcmp(value, "netem") != 0)) {
        fprintf(stderr, "%s: --via '%s': expected loggp (libloggp.so, the default) or netem (the testbed's links)\n",
                prog, value ? value : "");
        return -1;
    }
    *via = value;
    return 1;
}

static int run_netem(const char *action, int argc, char **argv)
{
    char *args[32];
    int n = 0;
    args[n++] = "loggp";
    args[n++] = "testbed";
    args[n++] = "netem";
    args[n++] = (char *)action;
    for (int i = 0; i < argc && n < 31; i++) {
        if (strcmp(argv[i], "--via") == 0) {
            i++;
            continue;
        }
        if (strncmp(argv[i], "--via=", 6) == 0)
            continue;
        args[n++] = argv[i];
    }
    args[n] = NULL;
    fflush(stdout);
    execvp("loggp", args);
    fprintf(stderr, "%s: --via netem needs the `loggp` command on PATH (the venv's bin): %s\n", prog, strerror(errno));
    return 1;
}

static void apply_options(loggp_knobs *knobs, const knob_options *opts)
{
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (opts->given & (1u << i))
            knobs->ps[i] = opts->values.ps[i];
    if (opts->scope_given)
        knobs->scope = opts->values.scope;
}

static int knob_path(char *path, size_t len)
{
    char err[512];
    if (loggp_knob_file_path(path, len, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    return 0;
}

static int load_or_report(const char *path, loggp_knobs *knobs, int *exists)
{
    char err[768];
    if (loggp_knobs_load(path, knobs, exists, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n(`%s reset` writes a fresh file with every knob at 0)\n", prog, err, prog);
        return -1;
    }
    return 0;
}

static void print_table(const loggp_knobs *knobs, const char *path, int exists, unsigned from_env);

/* Read-modify-write of the knob file under its lock: the options given go on
 * top of the file's values (or of zeros, for reset, which also replaces a
 * corrupt file). Prints the result. */
static int write_knobs(const knob_options *opts, int from_zero)
{
    char path[4096], err[768];
    if (knob_path(path, sizeof path) != 0)
        return 1;
    int lock = loggp_knobs_lock(path, err, sizeof err);
    if (lock < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    loggp_knobs knobs = {0};
    int exists;
    if (!from_zero && load_or_report(path, &knobs, &exists) != 0) {
        loggp_knobs_unlock(lock);
        return 1;
    }
    apply_options(&knobs, opts);
    int rc = loggp_knobs_save(path, &knobs, err, sizeof err);
    loggp_knobs_unlock(lock);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    /* The environment is not applied here: set reports what the file now holds,
     * and says which knobs programs from this shell will get elsewhere. */
    print_table(&knobs, path, 1, 0);
    unsigned overridden = 0;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (getenv(loggp_knob_table[i].env))
            overridden |= 1u << i;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (overridden & (1u << i))
            printf("note: %s=%s in this shell overrides the file's %s for programs started from it\n",
                   loggp_knob_table[i].env, getenv(loggp_knob_table[i].env), loggp_knob_table[i].name);
    return 0;
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
static void print_table(const loggp_knobs *knobs, const char *path, int exists, unsigned from_env)
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

static void print_json(const loggp_knobs *file, const loggp_knobs *effective, unsigned from_env,
                       const char *path, int exists)
{
    printf("{\"file\": ");
    json_string(path);
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
    printf("}}\n");
}

static int cmd_set(int argc, char **argv)
{
    knob_options opts = {0};
    const char *via = "loggp";
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s set [--o T] [--os T] [--or T] [--g T] [--G T/B] [--L T] [--scope all|kernel]\n"
                   "       [--via loggp|netem]\n"
                   "Changes only the knobs given; the others keep their values (0 if never set).\n"
                   "  --o T       o_s and o_r together      --os T, --or T  send, receive overhead\n"
                   "  --g T       gap between injections    --L T           latency\n"
                   "  --G T/B     gap per byte\n"
                   "  --scope all|kernel  where the knobs apply: everywhere (all, the default) or inside the\n"
                   "              program's kernel region only (loggp_hint IN_KERNEL or MPI_Pcontrol); live\n"
                   "  --via loggp|netem  who applies them (default loggp: libloggp.so); netem: L and G with\n"
                   "              tc/netem on the testbed's links (`loggp testbed`)\n"
                   "Times: 0, 250ns, 1.5us, 2ms; G: 0, 0.5ns/B, 2us/KiB.\n"
                   "example: %s set --o 1us --L 10us\n", prog, prog);
            return 0;
        }
        int v = parse_via(argc, argv, &i, &via);
        if (v < 0)
            return EXIT_USAGE;
        if (v)
            continue;
        int r = parse_scope_option(argc, argv, &i, &opts);
        if (r == 0)
            r = parse_knob_option(argc, argv, &i, &opts);
        if (r < 0)
            return EXIT_USAGE;
        if (r == 0)
            return usage_error("set: unknown option '%s'", argv[i]);
    }
    if (!opts.given && !opts.scope_given)
        return usage_error("set: give at least one knob, e.g. `set --o 10us`%s", "");
    if (opts.scope_given && strcmp(via, "netem") == 0)
        return usage_error("set: --via netem has no scope: the kernel's emulation cannot see regions%s", "");
    if (strcmp(via, "netem") == 0) {
        unsigned netem_ok = (1u << LOGGP_KNOB_LATENCY) | (1u << LOGGP_KNOB_GAP_PER_BYTE);
        if (opts.given & ~netem_ok)
            return usage_error("set: --via netem emulates only L and G (in the kernel); o and g need libloggp.so%s", "");
        return run_netem("set", argc, argv);
    }
    return write_knobs(&opts, 0);
}

static int cmd_show(int argc, char **argv)
{
    int json = 0;
    const char *via = "loggp";
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s show [--json] [--via loggp|netem]\n"
                   "Prints the values programs started from this shell get: the environment's LOGGP_*\n"
                   "variables over the knob file, each marked with where it comes from (a table, or\n"
                   "JSON: \"knobs\" the file's values, \"effective\" with \"from\"). A bad variable exits 1.\n"
                   "  --json      JSON instead of a table (default: a table)\n"
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
        else
            return usage_error("show: unknown option '%s'", argv[i]);
    }
    if (strcmp(via, "netem") == 0)
        return run_netem("show", argc, argv);
    char path[4096];
    if (knob_path(path, sizeof path) != 0)
        return 1;
    loggp_knobs knobs;
    int exists;
    if (load_or_report(path, &knobs, &exists) != 0)
        return 1;
    /* What an MPI program started from this shell gets: a bad variable would
     * stop its MPI_Init, so it stops show too. */
    loggp_knobs effective = knobs;
    unsigned from_env = 0;
    char err[512];
    int env_scope = 0, scope_set = loggp_scope_from_env(&env_scope, err, sizeof err);
    if (scope_set > 0)
        effective.scope = env_scope;
    if (scope_set < 0 || loggp_knobs_apply_env(&effective, &from_env, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n(MPI programs started from this shell would stop at MPI_Init; fix or unset it)\n",
                prog, err);
        return 1;
    }
    if (json)
        print_json(&knobs, &effective, from_env, path, exists);
    else
        print_table(&effective, path, exists, from_env);
    return 0;
}

static int cmd_reset(int argc, char **argv)
{
    const char *via = "loggp";
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s reset [--via loggp|netem]\nSets every knob to 0 (also replaces a corrupt knob file);\n"
                   "  --via loggp|netem  default loggp; netem removes the testbed's tc/netem settings\n"
                   "example: %s reset\n", prog, prog);
            return 0;
        }
        int v = parse_via(argc, argv, &i, &via);
        if (v < 0)
            return EXIT_USAGE;
        if (!v)
            return usage_error("reset: unexpected argument '%s'", argv[i]);
    }
    if (strcmp(via, "netem") == 0)
        return run_netem("reset", argc, argv);
    knob_options none = {0};
    return write_knobs(&none, 1);
}

static int cmd_env(int argc, char **argv)
{
    const char *format = "sh";
    knob_options opts = {0};
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s env [--format sh|mpiexec|srun] [--o T] [--os T] [--or T] [--g T] [--G T/B] [--L T]\n"
                   "Prints the environment that gives ranks started elsewhere the current knobs\n"
                   "(the knob file's values, with any knob options given here applied on top):\n"
                   "  sh:      export lines, for eval or a job script\n"
                   "  mpiexec: -genv pairs:  mpiexec $(%s env --format mpiexec) -n 4 ./app\n"
                   "  srun:    --export list: srun $(%s env --format srun) -n 4 ./app\n"
                   "  (default --format sh). Knob options as for set (default: the file's values).\n"
                   "Ranks given knobs this way keep them fixed: the environment overrides the file.\n"
                   "example: eval \"$(%s env --L 10us)\"\n",
                   prog, prog, prog, prog);
            return 0;
        }
        if (strcmp(argv[i], "--format") == 0 || strncmp(argv[i], "--format=", 9) == 0) {
            if (argv[i][8] == '=')
                format = argv[i] + 9;
            else if (i + 1 < argc)
                format = argv[++i];
            else
                return usage_error("env: --format needs a value (sh, mpiexec or srun)%s", "");
            if (strcmp(format, "sh") && strcmp(format, "mpiexec") && strcmp(format, "srun"))
                return usage_error("env: unknown format '%s' (expected sh, mpiexec or srun)", format);
            continue;
        }
        int r = parse_knob_option(argc, argv, &i, &opts);
        if (r < 0)
            return EXIT_USAGE;
        if (r == 0)
            return usage_error("env: unknown option '%s'", argv[i]);
    }
    char path[4096];
    if (knob_path(path, sizeof path) != 0)
        return 1;
    loggp_knobs knobs;
    int exists;
    if (load_or_report(path, &knobs, &exists) != 0)
        return 1;
    apply_options(&knobs, &opts);
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        char value[64];
        loggp_format_knob((loggp_knob_id)i, knobs.ps[i], value, sizeof value);
        const char *name = loggp_knob_table[i].env;
        if (strcmp(format, "sh") == 0)
            printf("export %s=%s\n", name, value);
        else if (strcmp(format, "mpiexec") == 0)
            printf("%s-genv %s %s", i ? " " : "", name, value);
        else
            printf("%s%s=%s", i ? "," : "--export=ALL,", name, value);
    }
    if (knobs.scope == LOGGP_SCOPE_KERNEL) {
        if (strcmp(format, "sh") == 0)
            printf("export LOGGP_SCOPE=kernel\n");
        else
            printf(strcmp(format, "mpiexec") == 0 ? " -genv LOGGP_SCOPE kernel" : ",LOGGP_SCOPE=kernel");
    }
    if (strcmp(format, "sh") != 0)
        printf("\n");
    return 0;
}

/* Validates knob values and prints them as numbers, for programs that need
 * the values (the study runner, the analysis) without a parser of their own. */
static int cmd_parse(int argc, char **argv)
{
    knob_options opts = {0};
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s parse [--o T] [--os T] [--or T] [--g T] [--G T/B] [--L T]\n"
                   "Checks the values given and prints them as JSON: nanoseconds, G in ns per byte\n"
                   "(knobs not given are left out).\n"
                   "example: %s parse --L 10us --G 0.5ns/B\n", prog, prog);
            return 0;
        }
        int r = parse_knob_option(argc, argv, &i, &opts);
        if (r < 0)
            return EXIT_USAGE;
        if (r == 0)
            return usage_error("parse: unknown option '%s'", argv[i]);
    }
    printf("{");
    int first = 1;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        if (!(opts.given & (1u << i)))
            continue;
        char ns[48], text[64];
        loggp_format_ns(opts.values.ps[i], ns, sizeof ns);
        loggp_format_knob((loggp_knob_id)i, opts.values.ps[i], text, sizeof text);
        printf("%s\"%s\": {\"ns\": %s, \"text\": \"%s\"}", first ? "" : ", ", loggp_knob_table[i].name, ns, text);
        first = 0;
    }
    printf("}\n");
    return 0;
}

static int cmd_path(int argc, char **argv)
{
    if (argc > 0) {
        if (is_help(argv[0])) {
            printf("usage: %s path\nPrints the knob file's path ($LOGGP_KNOB_FILE, else $XDG_CONFIG_HOME/loggp/knobs,\n"
                   "else ~/.config/loggp/knobs). No options.\nexample: %s path\n", prog, prog);
            return 0;
        }
        return usage_error("path: unexpected argument '%s'", argv[0]);
    }
    char path[4096];
    if (knob_path(path, sizeof path) != 0)
        return 1;
    printf("%s\n", path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage_main(stderr);
        return EXIT_USAGE;
    }
    const char *cmd = argv[1];
    if (is_help(cmd) || strcmp(cmd, "help") == 0) {
        usage_main(stdout);
        return 0;
    }
    if (strcmp(cmd, "--version") == 0) {
        printf("%s %s\n", prog, LOGGP_VERSION);
        return 0;
    }
    static const struct {
        const char *name;
        int (*run)(int, char **);
    } commands[] = {
        {"set", cmd_set}, {"show", cmd_show}, {"reset", cmd_reset}, {"env", cmd_env}, {"path", cmd_path},
        {"parse", cmd_parse}, {"topology", cmd_topology},
    };
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(cmd, commands[i].name) == 0)
            return commands[i].run(argc - 2, argv + 2);
    return usage_error("unknown command '%s' (expected set, show, reset, env, path, parse or topology)", cmd);
}

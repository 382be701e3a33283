/* The options several loggp-knobs commands take: knob values, --scope,
 * --via, and the hand-over to `loggp testbed netem`. */
#include <errno.h>
#include <unistd.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"

/* "--scope all|kernel" at argv[*i]: 1 if consumed, 0 if not it, -1 after an error. */
int parse_scope_option(int argc, char **argv, int *i, knob_options *opts)
{
    const char *arg = argv[*i];
    if (strcmp(arg, "--scope") != 0 && strncmp(arg, "--scope=", 8) != 0)
        return 0;
    const char *value = arg[7] == '=' ? arg + 8 : (*i + 1 < argc ? argv[++*i] : NULL);
    if (!value) {
        fprintf(stderr, "%s: --scope needs a value (all or kernel)\n", prog);
        return -1;
    }
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
int parse_knob_option(int argc, char **argv, int *i, knob_options *opts)
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
            /* the hint only where --o is one of the two */
            fprintf(stderr, "%s: knob %s is given twice%s\n", prog, loggp_knob_table[ids[k]].name,
                    both || opts->o_given ? " (--o sets both o_s and o_r)" : "");
            return -1;
        }
        opts->values.ps[ids[k]] = ps;
        opts->given |= 1u << ids[k];
    }
    opts->o_given |= both;
    return 1;
}

/* `--via netem` hands L and G to the testbed's kernel emulation instead of
 * libloggp.so: runs `loggp testbed netem <action> ...`. Returns 1 if argv[*i]
 * was --via (setting *via), 0 if not, -1 on error. */
int parse_via(int argc, char **argv, int *i, const char **via)
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

int run_netem(const char *action, int argc, char **argv)
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

void apply_options(loggp_knobs *knobs, const knob_options *opts)
{
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (opts->given & (1u << i))
            knobs->ps[i] = opts->values.ps[i];
    if (opts->scope_given)
        knobs->scope = opts->values.scope;
}

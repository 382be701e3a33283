/* What the loggp-knobs command's files share: its name, its usage error and
 * help test, the options several commands take, the knob file's access, and
 * one command per file beside the main one (the dispatch). */
#ifndef LOGGP_KNOBS_CLI_H
#define LOGGP_KNOBS_CLI_H

#include <stddef.h>

#include "knobs.h"

#define EXIT_USAGE 2

extern const char *prog;

/* Prints "loggp-knobs: " fmt (with arg) and a pointer to --help; returns EXIT_USAGE. */
int usage_error(const char *fmt, const char *arg);
int is_help(const char *arg);

/* The commands, a file each: main dispatches on the name. */
int cmd_set(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_reset(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_parse(int argc, char **argv);
int cmd_path(int argc, char **argv);
int cmd_topology(int argc, char **argv);

/* options.c. Knob options given on a command line: values and which were set. */
typedef struct {
    loggp_knobs values;
    unsigned given;
    int scope_given; /* values.scope was given (--scope) */
    int o_given;     /* --o set o_s and o_r */
} knob_options;

/* Each parser looks at argv[*i] and returns 1 if it consumed it (and its
 * value), 0 if it is not its option, -1 after printing an error. */
int parse_scope_option(int argc, char **argv, int *i, knob_options *opts); /* --scope all|kernel */
int parse_knob_option(int argc, char **argv, int *i, knob_options *opts);  /* --os 5us, --os=5us */
int parse_via(int argc, char **argv, int *i, const char **via);            /* --via loggp|netem */
/* Runs `loggp testbed netem ACTION` with argv minus --via; returns only on failure. */
int run_netem(const char *action, int argc, char **argv);
/* The options given, on top of knobs. */
void apply_options(loggp_knobs *knobs, const knob_options *opts);

/* knob_file.c: the file's path and a load, each printing why on failure (-1);
 * write_knobs: the options on top of the file's values (or of zeros) under its
 * lock, then the resulting table; an exit status. */
int knob_path(char *path, size_t len);
int load_or_report(const char *path, loggp_knobs *knobs, int *exists);
/* Both: the file's path into path[len] and its knobs. */
int load_knob_file(char *path, size_t len, loggp_knobs *knobs, int *exists);
int write_knobs(const knob_options *opts, int from_zero);

/* show.c: the knobs' table, each value with where it comes from. */
void print_table(const loggp_knobs *knobs, const char *path, int exists, unsigned from_env);

#endif

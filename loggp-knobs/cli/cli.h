/* What the loggp-knobs command's files share: its name, its usage error
 * and help test, and one subcommand per file beside the main one. */
#ifndef LOGGP_KNOBS_CLI_H
#define LOGGP_KNOBS_CLI_H

#define EXIT_USAGE 2

extern const char *prog;

/* Prints "loggp-knobs: " fmt (with arg) and a pointer to --help; returns EXIT_USAGE. */
int usage_error(const char *fmt, const char *arg);
int is_help(const char *arg);

/* topology.c */
int cmd_topology(int argc, char **argv);

#endif

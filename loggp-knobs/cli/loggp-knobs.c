/* loggp-knobs: set, show and reset the LogGP knobs that libloggp.so applies,
 * and print the environment that carries them to ranks on other nodes. This
 * file: the command's name, its help, its usage errors and the dispatch; each
 * command is a file of its own (cli.h). */
#include "cli.h"

#include <stdio.h>
#include <string.h>


const char *prog = "loggp-knobs";

static void usage_main(FILE *out)
{
    fprintf(out,
            "usage: %s <command> [options]\n"
            "\n"
            "commands:\n"
            "  set [--o T] [--os T] [--or T] [--g T] [--G T/B] [--L T]   change the knobs given\n"
            "      [--scope all|kernel] [--via netem]                   (kernel: inside the kernel region only;\n"
            "                                                           netem: L, G on the testbed's links)\n"
            "  show [--json]                                            print the knobs\n"
            "  reset                                                    set every knob to 0\n"
            "  env [--format sh|mpiexec|srun] [knob options]            environment for remote ranks\n"
            "  path                                                     print the knob file's path\n"
            "  parse [knob options]                                     check values, print them as JSON\n"
            "  topology FILE [--ranks N]                                check a topology file, print it as JSON\n"
            "\n"
            "Knobs are increments over the machine's own LogGP parameters, with units:\n"
            "  times: ps, ns, us (or \xc2\xb5s: micro sign or Greek mu), ms, s, right after the number\n"
            "  (10us, 1.5us); 0 needs no unit;\n"
            "  G: time per byte (0.5ns/B, 2us/KiB). Units are case-sensitive; no sign, no spaces.\n"
            "  --o sets both o_s and o_r. Running applications pick changes up at once (inotify).\n"
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

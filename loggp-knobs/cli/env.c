/* `loggp-knobs env`: the environment that carries the knobs to ranks
 * started elsewhere (sh, mpiexec or srun form). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"

int cmd_env(int argc, char **argv)
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
    loggp_knobs knobs;
    int exists;
    if (load_knob_file(path, sizeof path, &knobs, &exists) != 0)
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

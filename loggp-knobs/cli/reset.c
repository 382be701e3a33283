/* `loggp-knobs reset`: every knob to 0 (a corrupt file replaced too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"

int cmd_reset(int argc, char **argv)
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

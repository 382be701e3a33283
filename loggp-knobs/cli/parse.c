/* `loggp-knobs parse`: validates knob values and prints them as numbers, for
 * programs that need the values (the study runner, the analysis) without a
 * parser of their own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"

int cmd_parse(int argc, char **argv)
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

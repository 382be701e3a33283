/* `loggp-knobs set`: changes the knobs given, in the file or, with --via
 * netem, on the testbed's links. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"

int cmd_set(int argc, char **argv)
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

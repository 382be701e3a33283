/* `loggp-knobs topology`: checks a topology file and prints it as JSON. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "topology.h"

/* Checks a topology file (per-pair L and G, docs/topology.md) and prints it
 * as JSON, so `loggp run` refuses a bad file before any rank starts. */
int cmd_topology(int argc, char **argv)
{
    const char *file = NULL;
    long ranks = 0;
    for (int i = 0; i < argc; i++) {
        if (is_help(argv[i])) {
            printf("usage: %s topology FILE [--ranks N]\n"
                   "Checks a topology file (per-pair L and G by node, switch and group, or a rank-pair matrix;\n"
                   "docs/topology.md) and prints its classes as JSON; with --ranks, also that a run of N ranks\n"
                   "fits it and the class of every (sender, receiver) pair when ranks_per_node is given.\n"
                   "example: %s topology fat-tree.topo --ranks 8\n", prog, prog);
            return 0;
        }
        if (strcmp(argv[i], "--ranks") == 0) {
            char *end;
            if (i + 1 >= argc)
                return usage_error("topology: --ranks needs a number%s", "");
            errno = 0;
            ranks = strtol(argv[++i], &end, 10);
            if (errno || *end || end == argv[i] || ranks < 1 || ranks > 1000000)
                return usage_error("topology: --ranks '%s': expected a whole number >= 1", argv[i]);
        } else if (argv[i][0] == '-' || file) {
            return usage_error("topology: unexpected argument '%s'", argv[i]);
        } else {
            file = argv[i];
        }
    }
    if (!file)
        return usage_error("topology: give the file, e.g. `topology fat-tree.topo`%s", "");
    loggp_topology t;
    char err[1024];
    if (loggp_topology_load(file, &t, err, sizeof err) != 0 ||
        (ranks && loggp_topology_check_size(&t, (int)ranks, err, sizeof err) != 0)) {
        fprintf(stderr, "%s: %s\n", prog, err);
        loggp_topology_free(&t);
        return EXIT_USAGE;
    }
    char json[2048];
    loggp_topology_json(&t, json, sizeof json);
    json[strlen(json) - 1] = '\0'; /* reopen the object for the pairs */
    printf("%s", json);
    if (ranks && (t.ranks_per[0] || t.matrix_n)) {
        printf(", \"pairs\": [");
        for (int a = 0; a < ranks; a++) {
            printf("%s[", a ? ", " : "");
            for (int b = 0; b < ranks; b++)
                printf("%s%d", b ? ", " : "", loggp_topology_class(&t, a, b, 0, 0));
            printf("]");
        }
        printf("]");
    }
    printf("}\n");
    loggp_topology_free(&t);
    return 0;
}


/* `loggp-knobs path`: where the knob file is. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knobs.h"

int cmd_path(int argc, char **argv)
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

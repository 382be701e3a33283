/* The knob file as the loggp-knobs commands use it: its path, a load that
 * says how to recover from a bad file, and the locked read-modify-write. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "knobs.h"

int knob_path(char *path, size_t len)
{
    char err[512];
    if (loggp_knob_file_path(path, len, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return -1;
    }
    return 0;
}

int load_or_report(const char *path, loggp_knobs *knobs, int *exists)
{
    char err[768];
    if (loggp_knobs_load(path, knobs, exists, err, sizeof err) != 0) {
        /* reset replaces a bad file, but cannot rename over a folder */
        struct stat st;
        if (lstat(path, &st) == 0 && S_ISDIR(st.st_mode))
            fprintf(stderr, "%s: %s\n(a folder is where the knob file goes: move it away, or set LOGGP_KNOB_FILE "
                            "to a file's path)\n", prog, err);
        else
            fprintf(stderr, "%s: %s\n(`%s reset` writes a fresh file with every knob at 0)\n", prog, err, prog);
        return -1;
    }
    return 0;
}

int load_knob_file(char *path, size_t len, loggp_knobs *knobs, int *exists)
{
    return knob_path(path, len) != 0 || load_or_report(path, knobs, exists) != 0 ? -1 : 0;
}

/* Read-modify-write of the knob file under its lock: the options given go on
 * top of the file's values (or of zeros, for reset, which also replaces a
 * corrupt file). Prints the result. */
int write_knobs(const knob_options *opts, int from_zero)
{
    char path[4096], err[768];
    if (knob_path(path, sizeof path) != 0)
        return 1;
    int lock = loggp_knobs_lock(path, err, sizeof err);
    if (lock < 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    loggp_knobs knobs = {0};
    int exists;
    if (!from_zero && load_or_report(path, &knobs, &exists) != 0) {
        loggp_knobs_unlock(lock);
        return 1;
    }
    apply_options(&knobs, opts);
    int rc = loggp_knobs_save(path, &knobs, err, sizeof err);
    loggp_knobs_unlock(lock);
    if (rc != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        return 1;
    }
    /* The environment is not applied here: set reports what the file now holds,
     * and says which knobs programs from this shell will get elsewhere. */
    print_table(&knobs, path, 1, 0);
    unsigned overridden = 0;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (getenv(loggp_knob_table[i].env))
            overridden |= 1u << i;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (overridden & (1u << i))
            printf("note: %s=%s in this shell overrides the file's %s for programs started from it\n",
                   loggp_knob_table[i].env, getenv(loggp_knob_table[i].env), loggp_knob_table[i].name);
    return 0;
}

/* Knob sets side by side: rewriting the private knob file, confirming on both ranks
 * that libloggp has taken a set up, and measuring every set in interleaved rounds. */
#define _POSIX_C_SOURCE 200809L

#include "probe.h"

#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* libloggp rereads its knob file every 4 ms; a set not in force after this is an error. */
#define KNOB_TAKEUP_LIMIT_US 2e6

/* The knobs in force on this rank: libloggp's own view when preloaded (1), else none
 * apply and every knob is zero (0). */
int knobs_in_force(loggp_knobs *out)
{
    memset(out, 0, sizeof *out);
    if (!loggp_live_knobs)
        return 0;
    loggp_live_knobs(out);
    return 1;
}

/* Waits until this rank's libloggp has knob set k in force; -1 after the limit. */
int await_knob_set(int k)
{
    double give_up = now_us() + KNOB_TAKEUP_LIMIT_US;
    for (;;) {
        loggp_knobs now;
        loggp_live_knobs(&now);
        if (!memcmp(now.ps, opt.sets[k].ps, sizeof now.ps))
            return 0;
        if (now_us() > give_up)
            return -1;
        struct timespec nap = {0, 500000};
        nanosleep(&nap, NULL);
    }
}

/* Puts knob set k in force: rewrites the knob file, then waits until libloggp on this
 * rank and on the server reports the set (its watcher rereads the file every 4 ms). */
static int apply_knob_set(int k)
{
    char path[PATH_MAX], err[1024];
    if (loggp_knob_file_path(path, sizeof path, err, sizeof err) != 0 ||
        loggp_knobs_save(path, &opt.sets[k], err, sizeof err) != 0) {
        fprintf(stderr, "loggp-probe: cannot apply --knob-set '%s': %s\n", opt.set_specs[k], err);
        return -1;
    }
    int mine = await_knob_set(k), theirs = 0;
    command_server(CMD_KNOBS, 0, k, 0);
    MPI_Recv(&theirs, 1, MPI_INT, SERVER_RANK, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (mine != 0 || !theirs) {
        fprintf(stderr, "loggp-probe: libloggp on rank %d did not take up --knob-set '%s' from %s within %.0f s "
                        "(is another process rewriting the file?)\n",
                mine != 0 ? 0 : SERVER_RANK, opt.set_specs[k], path, KNOB_TAKEUP_LIMIT_US * 1e-6);
        return -1;
    }
    return 0;
}

/* The signature per knob set: rounds interleave the sets, so slow drifts of the machine
 * fall on every set alike, and the sets are compared side by side. */
int drive_sets(int np, double start)
{
    int sets = opt.n_sets, rounds = opt.rounds, rc = 0;
    size_t per = (size_t)MAX_SIZES;
    size_result *raw = calloc((size_t)sets * (size_t)rounds * per, sizeof *raw);
    size_result *combined = calloc((size_t)sets * per, sizeof *combined);
    const size_result **round_ptr = calloc((size_t)sets * (size_t)rounds, sizeof *round_ptr);
    const size_result *set_ptr[MAX_KNOB_SETS];
    int n[MAX_KNOB_SETS];
    summary s[MAX_KNOB_SETS];
    round_view rv[MAX_KNOB_SETS];
    if (!raw || !combined || !round_ptr) {
        fprintf(stderr, "loggp-probe: out of memory for %d knob sets x %d rounds\n", sets, rounds);
        rc = 1;
        goto done;
    }
    for (int r = 0; r < rounds && !rc; r++)
        for (int k = 0; k < sets && !rc; k++) {
            size_result *into = raw + ((size_t)k * (size_t)rounds + (size_t)r) * per;
            rc = apply_knob_set(k);
            current_set = k;
            if (!rc)
                n[k] = measure_signature(into, sets * rounds);
            round_ptr[k * rounds + r] = into;
        }
    if (rc)
        goto done;
    for (int k = 0; k < sets; k++) {
        size_result *c = combined + (size_t)k * per;
        const size_result *const *rs = round_ptr + k * rounds;
        for (int i = 0; i < n[k]; i++) {
            c[i].bytes = rs[0][i].bytes;
            c[i].T = combine_rounds(rs, rounds, i, offsetof(size_result, T));
            c[i].o_s = combine_rounds(rs, rounds, i, offsetof(size_result, o_s));
            c[i].o_r = combine_rounds(rs, rounds, i, offsetof(size_result, o_r));
            c[i].g = combine_rounds(rs, rounds, i, offsetof(size_result, g));
            c[i].L_us = c[i].T.median - c[i].o_s.median - c[i].o_r.median;
        }
        set_ptr[k] = c;
        s[k] = summarize_signature(c, n[k], opt.max_size);
        rv[k] = (round_view){rs, rounds};
    }
    double elapsed = (now_us() - start) * 1e-6;
    if (!opt.quiet) {
        for (int k = 0; k < sets; k++)
            print_table(set_ptr[k], n[k], &s[k], np, opt.set_specs[k]);
        printf("%d knob sets x %d rounds in %.2f s\n", sets, rounds, elapsed);
        fflush(stdout);
    }
    results out = {.res = set_ptr, .n = n, .s = s, .rv = rv, .sets = sets, .elapsed_s = elapsed};
    if (opt.json_path && write_json(opt.json_path, &out, np) != 0)
        rc = 1;
done:
    free(raw);
    free(combined);
    free(round_ptr);
    return rc;
}

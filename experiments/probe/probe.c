/* loggp-probe: measures the LogGP signature of an MPI library between rank 0 and rank 1.
 *
 * Rank 0 drives every measurement; rank 1 is a server that runs whatever rank 0 asks
 * (one control message per batch), so that rank 0 alone decides when a median is
 * precise enough. Per message size m it measures, with the methods of Kielmann et al.
 * and Netgauge's parameterized round trips (see experiments/README.md):
 *   T(m)   half round trip of a ping-pong, sends spaced so the gap never stalls them
 *   g(m)   (t(n) - t(1)) / (n - 1) for a burst of n back-to-back sends plus one ack;
 *          the ack's latency appears in both terms and cancels
 *   o_s(m) duration of the send call, sender idle for longer than the gap beforehand
 *   o_r(m) duration of the receive call after waiting long enough for the message
 *          to have arrived, so latency cannot leak into it
 *   L      T(m) - o_s(m) - o_r(m) - (m-1)G on small messages before the protocol
 *          switch, clamped at 0 (past the switch o_r, and a blocking o_s, include the
 *          transfer: those columns are marked, not read as overheads or latencies)
 *   G      least-squares slope of g(m) against m over the largest sizes
 * With --knob-set it measures the whole signature once per libloggp knob set, in
 * interleaved rounds within one run, so sets are compared side by side.
 * This file dispatches; probe.h lists the parts.
 */
#include "probe.h"

#include <stdlib.h>
#include <string.h>

options opt;

/* One run without knob sets: measure, stop the server, report. */
static int drive(int np)
{
    double start = now_us();
    int rc;
    if (opt.n_sets) {
        rc = drive_sets(np, start);
        command_server(CMD_QUIT, 0, 0, 0);
        return rc;
    }
    static size_result res[MAX_SIZES];
    /* The knobs are recorded so that a fit need not be told them; a change while the
     * probe measured (loggp-knobs set) leaves them unknown. */
    loggp_knobs before, after;
    int preloaded = knobs_in_force(&before);
    int n = measure_signature(res, 1);
    knobs_in_force(&after);
    int steady = !memcmp(before.ps, after.ps, sizeof before.ps);
    command_server(CMD_QUIT, 0, 0, 0);
    summary s = summarize_signature(res, n, opt.max_size);
    double elapsed = (now_us() - start) * 1e-6;
    if (!opt.quiet) {
        print_table(res, n, &s, np, NULL);
        printf("measured in %.2f s\n", elapsed);
        fflush(stdout);
    }
    const size_result *set_ptr[1] = {res};
    const char *source = !preloaded ? "no libloggp.so preloaded: no knobs apply"
                         : steady ? "libloggp.so on rank 0, in force from start to end"
                                  : "unknown: the knobs changed while the probe measured";
    results out = {.res = set_ptr, .n = &n, .s = &s, .knobs = steady ? &before : NULL,
                   .knobs_source = source, .elapsed_s = elapsed};
    if (opt.json_path && write_json(opt.json_path, &out, np) != 0)
        return 1;
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);

    int parsed = parse_args(argc, argv, &opt, rank == 0);
    if (parsed != 0) {
        if (parsed > 0 && rank == 0)
            usage(stdout);
        MPI_Finalize();
        return parsed > 0 ? 0 : EXIT_USAGE;
    }
    if (np < 2) {
        if (rank == 0)
            fprintf(stderr, "loggp-probe: needs at least 2 ranks, got %d (run it with mpiexec -n 2)\n", np);
        MPI_Finalize();
        return EXIT_USAGE;
    }
    if (transport_open() != 0)
        MPI_Abort(MPI_COMM_WORLD, 1);

    int rc = 0;
    if (rank == DRIVER_RANK)
        rc = drive(np);
    else if (rank == SERVER_RANK)
        serve();
    MPI_Bcast(&rc, 1, MPI_INT, DRIVER_RANK, MPI_COMM_WORLD);
    transport_close();
    MPI_Finalize();
    return rc;
}

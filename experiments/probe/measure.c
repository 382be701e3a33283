/* Rank 0's measurements: batches of samples until a value is precise enough, the
 * phases of one size, every size, and the sizes added where the curves bend. */
#include "probe.h"
#include "sampling.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int current_set = -1;
static double phase_budget_s;
static double t_zero_us; /* half round trip of an empty message, for receive waits */

/* One batch of `count` samples of a phase; samples are written to out (and out2 for the
 * burst phase, which alternates t(n) and t(1)). */
static void run_batch(int cmd, long m, int count, double recv_wait_us, double *out, double *out2)
{
    const int server = SERVER_RANK;
    command_server(cmd, m, count, opt.burst);
    MPI_Request req;
    for (int i = 0; i < count; i++) {
        double t0, t1;
        switch (cmd) {
        case CMD_BURST: {
            int n = (i % 2 == 0) ? opt.burst : 1;
            pace();
            t0 = now_us();
            send_burst(m, n, server);
            recv_control(server, TAG_ACK);
            t1 = now_us();
            /* the next burst starts a pace after the last reception, not the last
             * send, so a receiver-side gap left by this one cannot stall it */
            last_send_end_us = t1;
            if (i % 2 == 0)
                out[i / 2] = t1 - t0;
            else
                out2[i / 2] = t1 - t0;
            break;
        }
        case CMD_PINGPONG:
            prepost_receive(m, server, &req);
            pace();
            t0 = now_us();
            send_message(m, server);
            finish_receive(m, server, &req);
            t1 = now_us();
            out[i] = 0.5 * (t1 - t0);
            break;
        case CMD_SEND_OVERHEAD:
            recv_control(server, TAG_TOKEN);
            pace();
            out[i] = timed_send_call(m, server);
            break;
        case CMD_RECV_OVERHEAD:
            prepost_receive(m, server, &req);
            pace();
            send_control(server, TAG_TOKEN);
            /* Long enough for the token to arrive and the message to come back. */
            wait_until(now_us() + recv_wait_us);
            t0 = now_us();
            finish_receive(m, server, &req);
            t1 = now_us();
            out[i] = t1 - t0;
            break;
        }
    }
}

static median_ci summarize(const double *x, size_t n, double *scratch)
{
    memcpy(scratch, x, n * sizeof *x);
    return median_with_ci(scratch, n);
}

/* Samples a phase in growing batches until the median's CI meets the target, the sample
 * cap is reached, or the phase's time budget is spent (never fewer than min_samples). */
static median_ci measure_once(int cmd, long m, double recv_wait_us)
{
    size_t cap = (size_t)opt.max_samples;
    sampling_target target = {opt.rel_ci, opt.abs_ci_us, (size_t)opt.min_samples, cap, phase_budget_s};
    double *a = malloc(cap * sizeof *a), *b = malloc(cap * sizeof *b), *s = malloc(cap * sizeof *s);
    if (!a || !b || !s) {
        fprintf(stderr, "loggp-probe: out of memory for %zu samples\n", cap);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    size_t n = 0;
    int batch = FIRST_BATCH < cap ? FIRST_BATCH : (int)cap;
    double start = now_us();
    median_ci r;
    for (;;) {
        if (cmd == CMD_BURST) {
            run_batch(cmd, m, 2 * batch, recv_wait_us, a + n, b + n);
            n += (size_t)batch;
            r = gap_from_bursts(summarize(a, n, s), summarize(b, n, s), opt.burst, n);
        } else {
            run_batch(cmd, m, batch, recv_wait_us, a + n, NULL);
            n += (size_t)batch;
            r = summarize(a, n, s);
        }
        if (sampling_done(r, n, (now_us() - start) * 1e-6, &target))
            break;
        batch = next_batch_size(batch, n, cap);
    }
    free(a);
    free(b);
    free(s);
    return r;
}

/* A phase that was probably stalled as a whole is measured again, at most twice, and the
 * attempt with the narrowest CI is kept. */
static median_ci measure(int cmd, long m, double recv_wait_us)
{
    median_ci best = measure_once(cmd, m, recv_wait_us);
    for (int attempt = 0; attempt < 2 && phase_needs_retry(best, opt.abs_ci_us); attempt++) {
        median_ci again = measure_once(cmd, m, recv_wait_us);
        if (!(again.ci_half >= best.ci_half))
            best = again;
    }
    return best;
}

static void measure_size(long m, size_result *res)
{
    res->bytes = m;
    /* The gap first: its estimate paces every later timed send. */
    res->g = measure(CMD_BURST, m, 0);
    pace_us = pace_for_gap(res->g.median);
    res->T = measure(CMD_PINGPONG, m, 0);
    res->o_s = measure(CMD_SEND_OVERHEAD, m, 0);
    double wait = receive_wait_us(t_zero_us, res->T.median, pace_us,
                                  idle_equalizer_us(opt.sets, opt.n_sets, current_set, m));
    res->o_r = measure(CMD_RECV_OVERHEAD, m, wait);
    res->L_us = res->T.median - res->o_s.median - res->o_r.median;
}

/* Bisects the interval (lo, hi) of a bend `steps` times, each time keeping the half where
 * T changes more, so a protocol switch is located to 1/2^steps of the interval. */
static int bisect_bend(size_result lo, size_result hi, int steps, size_result *out)
{
    int k = 0;
    for (int step = 0; step < steps; step++) {
        long mid = bisection_midpoint(lo.bytes, hi.bytes);
        if (mid < 0)
            break;
        measure_size(mid, &out[k]);
        out[k].refined = 1;
        if (bend_in_lower_half(lo.T.median, out[k].T.median, hi.T.median))
            hi = out[k];
        else
            lo = out[k];
        k++;
    }
    return k;
}

int measure_signature(size_result *res, int shares)
{
    /* Warm-up and the empty message's half round trip, for the receive-overhead waits. */
    pace_us = 0.5;
    median_ci t0 = measure(CMD_PINGPONG, 0, 0);
    t_zero_us = t0.median;

    int planned = opt.n_sizes + (opt.refine ? 9 : 0);
    phase_budget_s = opt.time_limit_s / shares / planned / 4.0;
    int n = 0;
    for (int i = 0; i < opt.n_sizes; i++)
        measure_size(opt.sizes[i], &res[n++]);
    qsort(res, (size_t)n, sizeof res[0], size_result_by_bytes);
    if (opt.refine) {
        int at[3];
        int bends = find_bends(res, n, at, 3);
        size_result bounds[3][2];
        for (int b = 0; b < bends; b++) {
            bounds[b][0] = res[at[b] - 1];
            bounds[b][1] = res[at[b]];
        }
        for (int b = 0; b < bends && n + 3 <= MAX_SIZES; b++)
            n += bisect_bend(bounds[b][0], bounds[b][1], 3, &res[n]);
        qsort(res, (size_t)n, sizeof res[0], size_result_by_bytes);
    }
    return n;
}

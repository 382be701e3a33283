/* The fallback engine, for when MPI's messages do not cross libfabric: o, g
 * and G applied around point-to-point calls (L cannot be: nothing here sees a
 * message arrive). Also the receive accounting both engines' profiles use. */
#include "delay.h"
#include "pmpi.h"

static loggp_pacer pacer;

void loggp_fallback_before_send(loggp_counters *c, loggp_delays *d)
{
    loggp_live_get(d);
    loggp_gap_wait w = loggp_pacer_begin(&pacer, d->o_s);
    c->injected_ns[LOGGP_INJ_O_S] += d->o_s;
    c->injected_ns[LOGGP_INJ_GAP] += w.g_ns;
    c->injected_ns[LOGGP_INJ_GAP_PER_BYTE] += w.bytes_ns;
}

void loggp_fallback_after_send(const loggp_delays *d, uint64_t bytes)
{
    loggp_pacer_done(&pacer, d->g, loggp_bytes_delay_ns(d->G_ps_per_byte, bytes));
}

void loggp_received(loggp_counters *c, const MPI_Status *st)
{
    if (st->MPI_SOURCE == MPI_PROC_NULL)
        return;
#if FAST_MPICH
    if (st->count_hi_and_cancelled & 1)
        return;
    uint64_t n = (uint64_t)(unsigned)st->count_lo + ((uint64_t)((unsigned)st->count_hi_and_cancelled >> 1) << 32);
#else
    int cancelled = 0;
    pmpi.Test_cancelled(st, &cancelled);
    if (cancelled)
        return;
    int count = 0;
    if (pmpi.Get_count(st, MPI_BYTE, &count) != MPI_SUCCESS || count == MPI_UNDEFINED || count < 0)
        count = 0;
    uint64_t n = (uint64_t)count;
#endif
    int b = loggp_bucket(n);
    c->recv_msgs[b]++;
    c->recv_bytes[b] += n;
    if (fallback_on()) {
        loggp_delays d;
        loggp_live_get(&d);
        if (d.o_r) {
            loggp_spin_overhead_until(loggp_now_ns() + d.o_r);
            c->injected_ns[LOGGP_INJ_O_R] += d.o_r;
        }
    }
}

/* The knobs a message to oneself pays under the libfabric engine, into d;
 * 0 when it pays nothing (another engine, or o_s and o_r zero). */
static int self_delays(loggp_delays *d)
{
    if (loggp_engine != ENGINE_LIBFABRIC)
        return 0;
    loggp_live_get(d);
    return d->o_s || d->o_r;
}

static void charge_self(const loggp_delays *d)
{
    loggp_spin_overhead_until(loggp_now_ns() + d->o_s + d->o_r);
    loggp_counters *c = loggp_my_counters();
    c->injected_ns[LOGGP_INJ_O_S] += d->o_s;
    c->injected_ns[LOGGP_INJ_O_R] += d->o_r;
}

/* Both overheads of a message to oneself, which the libfabric layer never
 * sees; the fallback engine charges its own sends and receives already. */
void loggp_self_send_slow(int dest, MPI_Comm comm)
{
    loggp_delays d;
    /* on the world the answer is one comparison: asked before the knobs' snapshot */
    if (comm == MPI_COMM_WORLD && loggp_world_size > 0 && dest != loggp_world_rank)
        return;
    if (self_delays(&d) && sends_to_self(dest, comm))
        charge_self(&d);
}

void loggp_self_start_slow(void)
{
    loggp_delays d;
    if (self_delays(&d))
        charge_self(&d);
}

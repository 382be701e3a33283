/* The delay arithmetic both engines share: the clock, busy-waiting, and the
 * pacer that adds g + (k-1)*G to the interval between successive injections. */
#ifndef LOGGP_DELAY_H
#define LOGGP_DELAY_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC is served by the vDSO (no system call) and shared by all
 * processes of a host, so send timestamps can be compared across ranks. */
static inline uint64_t loggp_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Busy-waits on the calling CPU until the clock reaches t (the o knobs must
 * consume CPU time, not sleep). Returns the time reached. */
uint64_t loggp_spin_until(uint64_t t);

/* Busy-waits ns nanoseconds; returns the time reached. */
uint64_t loggp_spin_ns(uint64_t ns);

/* Time per byte applied to a k-byte message: (k-1)*G for k >= 1, in ns. */
static inline uint64_t loggp_bytes_delay_ns(int64_t G_ps_per_byte, uint64_t bytes)
{
    if (G_ps_per_byte <= 0 || bytes <= 1)
        return 0;
    return (uint64_t)(((unsigned __int128)(bytes - 1) * (uint64_t)G_ps_per_byte + 500) / 1000);
}

/* The gap adds to a message stream's natural interval, as a NIC's gap does
 * when the NIC is the bottleneck: of the caller's own time between two
 * messages (MPI's processing, a loop around the call), up to this much is
 * per-message work the gap adds to; anything longer (computing, waiting for
 * other messages) the gap overlaps. */
#define LOGGP_OWN_WORK_NS 2000u

/* When a message owing owed_ns after an injector (or receiver) was last free
 * at free_at may go, if it is wanted at `wanted`. */
static inline uint64_t loggp_gap_due(uint64_t free_at, uint64_t owed_ns, uint64_t wanted)
{
    uint64_t own_work_end = free_at + LOGGP_OWN_WORK_NS;
    return (wanted < own_work_end ? wanted : own_work_end) + owed_ns;
}

/* The injector is busy until its last send completes: when a completion of a
 * send is handed to the caller, the time it naturally arrived. */
void loggp_send_completed(uint64_t at);

/* One injector: when its last injection ended and the g and (k-1)*G it
 * owes the next. */
typedef struct {
    _Atomic uint64_t end_ns;
    _Atomic uint64_t g_ns, bytes_ns;
} loggp_pacer;

/* Time waited for a gap, by knob. */
typedef struct {
    uint64_t g_ns, bytes_ns;
} loggp_gap_wait;

/* Before an injection: o_s_ns on the CPU and the wait for the gap the last
 * injection left, overlapping, as LogGP's o and g do. The gap counts from
 * the end of that injection or the natural completion of a send after it,
 * whichever is later. Returns the wait beyond o_s. */
loggp_gap_wait loggp_pacer_begin(loggp_pacer *pacer, uint64_t o_s_ns);

/* Records an injection that ended now and owes g + (k-1)*G (0: nothing). */
void loggp_pacer_done(loggp_pacer *pacer, uint64_t g_ns, uint64_t bytes_ns);

#endif

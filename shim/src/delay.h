/* The delay arithmetic both engines share: the clock, busy-waiting, and the
 * pacer that keeps successive injections at least g + (k-1)*G beyond the
 * machine's own time per message apart (LogP's gap). */
#ifndef LOGGP_DELAY_H
#define LOGGP_DELAY_H

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

/* CLOCK_MONOTONIC through the vDSO (no system call, ~20 ns here), shared by
 * all processes of a host, so send timestamps can be compared across ranks. */
static inline uint64_t loggp_vdso_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The same clock from the TSC where the kernel itself keeps CLOCK_MONOTONIC
 * on it (so it is invariant and in step across CPUs): each thread extends
 * its last CLOCK_MONOTONIC reading (its anchor) by ticks x ns-per-tick and
 * takes a fresh anchor every LOGGP_TSC_ANCHOR_NS, so ranks agree with each
 * other and with CLOCK_MONOTONIC to within the rate error over that span.
 * ns per tick is measured against CLOCK_MONOTONIC over the process's life so
 * far, refined each time that base doubles. A thread reads nothing shared
 * until its anchor expires, and a fresh anchor costs one vDSO reading (more
 * only when that one was preempted): it falls on the first message after
 * every idle spell longer than the span. */
#define LOGGP_TSC_ANCHOR_NS 100000u
#define LOGGP_TSC_SHIFT 32

typedef struct {
    uint64_t tsc, ns; /* a CLOCK_MONOTONIC reading and the tick count at it */
    uint64_t mult;    /* ns per tick << LOGGP_TSC_SHIFT when it was taken */
    uint64_t span;    /* LOGGP_TSC_ANCHOR_NS in ticks; 0: no anchor */
} loggp_tsc_anchor;

extern __thread loggp_tsc_anchor loggp_tls_anchor __attribute__((tls_model("initial-exec")));

/* ns after an anchor taken at anchor_ns, ticks later, at mult (pure). */
static inline uint64_t loggp_tsc_extend(uint64_t anchor_ns, uint64_t ticks, uint64_t mult)
{
    return anchor_ns + (uint64_t)(((unsigned __int128)ticks * mult) >> LOGGP_TSC_SHIFT);
}

/* The anchor a thread takes at a reading (tsc, ns) at rate mult, after its
 * anchor old: never behind what old gives at tsc, so the thread's clock does
 * not go back when old ran a little fast (pure). */
static inline loggp_tsc_anchor loggp_tsc_reanchor(const loggp_tsc_anchor *old, uint64_t tsc, uint64_t ns,
                                                  uint64_t mult)
{
    if (old->span && tsc >= old->tsc) {
        uint64_t extended = loggp_tsc_extend(old->ns, tsc - old->tsc, old->mult);
        if (extended > ns)
            ns = extended;
    }
    loggp_tsc_anchor a = {tsc, ns, mult, ((uint64_t)LOGGP_TSC_ANCHOR_NS << LOGGP_TSC_SHIFT) / mult};
    return a;
}

/* ns per tick << LOGGP_TSC_SHIFT between two (ticks, CLOCK_MONOTONIC)
 * readings; 0 if they are less than 10 us apart or out of order (pure). */
uint64_t loggp_tsc_rate(uint64_t tsc0, uint64_t ns0, uint64_t tsc1, uint64_t ns1);

/* Is loggp_now_ns on the TSC (else the vDSO)? */
int loggp_clock_uses_tsc(void);

/* Takes a fresh anchor (or reads the vDSO when there is no TSC clock). */
uint64_t loggp_now_ns_anchor(void);

static inline uint64_t loggp_now_ns(void)
{
#if defined(__x86_64__)
    const loggp_tsc_anchor *a = &loggp_tls_anchor;
    uint64_t ticks = __builtin_ia32_rdtsc() - a->tsc;
    /* a thread without an anchor, or one older than its span, takes one */
    if (ticks < a->span)
        return loggp_tsc_extend(a->ns, ticks, a->mult);
    return loggp_now_ns_anchor();
#else
    return loggp_vdso_ns();
#endif
}

/* Busy-waits on the calling CPU until the clock reaches t (the o knobs must
 * consume CPU time, not sleep). Returns the time reached. */
uint64_t loggp_spin_until(uint64_t t);

/* Busy-waits ns nanoseconds; returns the time reached. */
uint64_t loggp_spin_ns(uint64_t ns);

/* Busy-waits until t without pausing between clock reads: for the holding
 * read's waits of a clock read or two up to a polling period, where a pause
 * would add its own length. Returns the time reached. */
uint64_t loggp_spin_until_unpaused(uint64_t t);

/* A host that preempts its vCPUs (tens of us, hundreds of times a second on
 * a shared virtual machine) lengthens a spin whenever the preemption ends after the spin's
 * target. A spin that spends o gives such an overshoot back from its thread's
 * next o spins, so the o a run adds stays the o set (docs/benchmarks.md).
 * Overshoots below LOGGP_SPIN_CREDIT_MIN_NS are the loop's own granularity and
 * are not owed back, so tiny spins build up no credit; at most
 * LOGGP_SPIN_CREDIT_MAX_NS is owed at once. A gap's wait takes no credit: g is
 * a minimum spacing, which a late injection does not shorten. */
#define LOGGP_SPIN_CREDIT_MIN_NS 1000u
#define LOGGP_SPIN_CREDIT_MAX_NS 1000000u

/* Where a spin meant to end at t ends when *credit ns are owed back and it is
 * now: earlier by the credit, never before now; *credit keeps the rest. A
 * spin with no room left (t already past: o too small to pay anything back)
 * drops the credit, so a later, longer o does not start owed (pure). */
static inline uint64_t loggp_credit_target(uint64_t t, uint64_t now, uint64_t *credit)
{
    if (t <= now) {
        *credit = 0;
        return t;
    }
    uint64_t used = *credit < t - now ? *credit : t - now;
    *credit -= used;
    return t - used;
}

/* The credit after a spin aimed at target ended at end (pure). */
static inline uint64_t loggp_credit_after(uint64_t credit, uint64_t target, uint64_t end)
{
    uint64_t over = end > target ? end - target : 0;
    if (over < LOGGP_SPIN_CREDIT_MIN_NS)
        return credit;
    credit += over;
    return credit < LOGGP_SPIN_CREDIT_MAX_NS ? credit : LOGGP_SPIN_CREDIT_MAX_NS;
}

/* Busy-waits until t for an o, less what the thread is owed (above). Returns
 * the time reached. */
uint64_t loggp_spin_overhead_until(uint64_t t);

/* The same for ns from now, with one clock read fewer than until(now + ns). */
uint64_t loggp_spin_overhead_ns(uint64_t ns);

/* Time per byte applied to a k-byte message: (k-1)*G for k >= 1, in ns. */
static inline uint64_t loggp_bytes_delay_ns(int64_t G_ps_per_byte, uint64_t bytes)
{
    if (G_ps_per_byte <= 0 || bytes <= 1)
        return 0;
    /* runs on every message: a 64-bit product where it fits, so the division
     * by 1000 is a multiply rather than a call to the 128-bit divide */
    if (bytes - 1 <= UINT32_MAX && G_ps_per_byte <= INT32_MAX)
        return ((bytes - 1) * (uint64_t)G_ps_per_byte + 500) / 1000;
    return (uint64_t)(((unsigned __int128)(bytes - 1) * (uint64_t)G_ps_per_byte + 500) / 1000);
}

/* LogP's gap: consecutive injections at a process are at least
 * g_total = g_machine + g apart (and consecutive receptions likewise). It is
 * a minimum spacing, not a wait added to the natural interval: a ping-pong
 * whose round trip is already >= g_total is unaffected, a shorter one takes
 * g_total per round trip, and a stream runs at max(natural, g_total).
 * g_machine is the time the machine itself is busy with one message: for an
 * injection, from the start of its post call to its end (or to the natural
 * completion of a send after it, e.g. a rendezvous transfer); for a
 * reception, the provider's time to hand over one completion. So the owed
 * g + (k-1)G counts from when the injector was last free, and anything the
 * caller does meanwhile (o, MPI's own processing, computing, waiting for
 * other messages) overlaps it. */

/* When an injection (or reception) owing owed_ns may start, if the injector
 * was last free at free_at. */
static inline uint64_t loggp_gap_next(uint64_t free_at, uint64_t owed_ns)
{
    return owed_ns ? free_at + owed_ns : 0;
}

/* When the injector was last free, at `now`: the end of its last post, or
 * the natural completion of a send after it if that has happened by now. */
static inline uint64_t loggp_injector_free_at(uint64_t post_end, uint64_t send_completed, uint64_t now)
{
    return send_completed > post_end && send_completed <= now ? send_completed : post_end;
}

/* When a post called at `called` may call down: after o_s (spun from the
 * start of the call) and after the gap, the two overlapping. */
static inline uint64_t loggp_post_go(uint64_t called, uint64_t o_s_ns, uint64_t gap_due)
{
    return called + o_s_ns > gap_due ? called + o_s_ns : gap_due;
}

/* When a reception owing g_ns and bytes_ns ((k-1)G) may be handed over, if
 * the previous one was received at released_at (0: none; loggp_reception_at).
 * g is a minimum spacing over the machine's own per-message time, hand_ns
 * (what the provider takes to hand over any one completion); (k-1)G adds to
 * the machine's own time for this message's bytes, take_ns (its share of
 * the read that returned it, which holds a copy done inside the read), as
 * LogGP's receptions are (k-1)(G_machine + G) apart. The two overlap, as g
 * and (k-1)G do in LogGP. 0 when nothing is owed. */
static inline uint64_t loggp_receive_gap_due(uint64_t released_at, uint64_t g_ns, uint64_t bytes_ns,
                                             uint64_t hand_ns, uint64_t take_ns)
{
    if ((!g_ns && !bytes_ns) || !released_at)
        return 0;
    uint64_t for_g = g_ns ? hand_ns + g_ns : 0, for_bytes = bytes_ns ? take_ns + bytes_ns : 0;
    return released_at + (for_g > for_bytes ? for_g : for_bytes);
}

/* When a reception handed over at `now` counts as received, for the next
 * one's gap: its arrival bound (the emulated arrival, or when the queue was
 * last seen empty before it) or its gap due, whichever is later; now when
 * neither is known. Counting from receptions, not from hand-overs, lets a
 * receiver that was away (computing, descheduled) take a backlog that the
 * gap already spaced at once, as a NIC would have received it meanwhile. */
static inline uint64_t loggp_reception_at(uint64_t arrival_bound, uint64_t gap_due, uint64_t now)
{
    uint64_t at = arrival_bound > gap_due ? arrival_bound : gap_due;
    return at && at <= now ? at : now;
}

/* When a receive of a message the provider moves by rendezvous (the data
 * leaves the sender only after the receiver matched; docs/protocols.md)
 * completes on the emulated network: its request to send lands L after the
 * message's natural arrival, the handshake starts once that has landed and
 * the receive is posted (posted: 0 if unknown), and takes the machine's own
 * handshake (handshake_ns: what the provider took after a late post; 0 when
 * the arrival is its completion already) and two more flights, the pull and
 * the data, plus (k-1)G. A pre-posted receive so pays 3L after the send, a
 * late one 2L after its post and its own copy. */
static inline uint64_t loggp_rendezvous_due(uint64_t arrival, uint64_t posted, uint64_t L_ns, uint64_t bytes_ns,
                                            uint64_t handshake_ns)
{
    uint64_t landed = arrival + L_ns;
    return (landed > posted ? landed : posted) + handshake_ns + 2 * L_ns + bytes_ns;
}

/* When the sender's completion of such a send appears on the emulated
 * network: the request to send, the pull and the data take two flights after
 * the post, and word of the data's delivery a flight after the provider's own
 * completion (natural), plus (k-1)G. Without it a rank whose send returned at
 * once would start its next message while its peer's receive was still held
 * (docs/protocols.md). */
static inline uint64_t loggp_rendezvous_send_due(uint64_t posted, uint64_t natural, uint64_t L_ns, uint64_t bytes_ns)
{
    uint64_t handshake = posted + 2 * L_ns, delivered = natural + L_ns;
    return (handshake > delivered ? handshake : delivered) + bytes_ns;
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

/* The plan for a post called at `called` with o_s_ns to spend: when it may
 * call down, and how much of the wait beyond o_s is the gap's, by knob. */
typedef struct {
    uint64_t go_ns;
    loggp_gap_wait waits;
} loggp_post_plan;

loggp_post_plan loggp_pacer_plan(const loggp_pacer *pacer, uint64_t called, uint64_t o_s_ns);

/* Before an injection: o_s_ns on the CPU and the wait for the gap, overlapping
 * (loggp_pacer_plan). Returns the wait beyond o_s. */
loggp_gap_wait loggp_pacer_begin(loggp_pacer *pacer, uint64_t o_s_ns);

/* Records an injection that ended at end_ns and owes g + (k-1)*G (0: nothing). */
void loggp_pacer_done_at(loggp_pacer *pacer, uint64_t end_ns, uint64_t g_ns, uint64_t bytes_ns);

/* Records an injection that ended now. */
void loggp_pacer_done(loggp_pacer *pacer, uint64_t g_ns, uint64_t bytes_ns);

#endif

"""LogGP's prediction for the packet-size benchmark (loggp-packet), pure arithmetic.

A structure of N records of R bytes goes out in packets of BE = max(1, P div R)
records. Three resources work as a pipeline (docs/packet.md derives it): the
sender's CPU packs BE records (c each) then spends o_s on the send; its network
interface is busy max(g, (m-1)G) with the message (the next one starts no
earlier); the message arrives (m-1)G + L later; the receiver's CPU spends o_r,
then unpacks BE records (u each). Messages in a later protocol regime of the
machine's T(m) (rendezvous) add that regime's rise in T0 and in G. The run ends
with a small acknowledgement back (o_s + L + o_r), as the benchmark times it.

Units: the LogGP set's (ns, ns per byte for G), ns per record for c and u; the
predicted times come out in microseconds, as the benchmark reports its own.
"""
import math
from dataclasses import dataclass

from loggp.knobs.params import LogGP


@dataclass(frozen=True)
class Params(LogGP):
    """The LogGP set (loggp.knobs.params; plus() adds knob increments in ns) and the
    structure's own costs."""
    pack_ns: float = 0.0    # sender's cost per record (walk + copy), ns
    unpack_ns: float = 0.0  # receiver's cost per record (copy + relink), ns
    # The machine's protocol regimes of T(m) = T0 + m/B beyond the first, as
    # (m_min bytes, T0 rise ns, G rise ns/B) over the first: a message in such a
    # regime (a rendezvous, say) costs that much more, and a blocking send waits for it.
    regimes: tuple = ()

    def regime_extra(self, m):
        """(extra ns per message, extra ns/B) for a message of m bytes."""
        extra = (0.0, 0.0)
        for m_min, t0_rise, g_rise in sorted(self.regimes):
            if m >= m_min:
                extra = (max(t0_rise, 0.0), g_rise)
        return extra


def params_from_machine(machine, pack_ns, unpack_ns):
    """Params from a machine dict as tune packet stores it (o_s, o_r, g, L in us, G in
    ns/B, regimes as (m_min, T0 rise us, G rise ns/B))."""
    return Params(o_s=1e3 * machine["o_s"], o_r=1e3 * machine["o_r"], g=1e3 * machine["g"], G=machine["G"],
                  L=1e3 * machine["L"], pack_ns=pack_ns, unpack_ns=unpack_ns,
                  regimes=tuple((m_min, 1e3 * rise, g_rise) for m_min, rise, g_rise in machine.get("regimes", ())))


def records_per_packet(packet_size, record_size):
    """BE = max(1, PacketSize div RecordSize)."""
    return max(1, packet_size // record_size)


def packets(records, packet_size, record_size):
    return -(-records // records_per_packet(packet_size, record_size))


def transfer_time_us(packet_size, records, record_size, p):
    """Predicted time (us) to send the structure at this packet size: the pipeline
    recurrence, packet by packet (full packets are alike, so it is short-cut)."""
    if records < 1 or record_size < 1 or packet_size < 1:
        raise ValueError("records, record size and packet size must be >= 1")
    be = records_per_packet(packet_size, record_size)
    c, u, G = p.pack_ns, p.unpack_ns, p.G
    full, last = divmod(records, be)
    sender = link = receiver = 0.0

    def one(sender, link, receiver, b):
        m = b * record_size
        t0_rise, g_rise = p.regime_extra(m)
        per_byte = max(G + g_rise, 0.0)
        start = max(sender + b * c, link)       # packed, and the interface free
        arrive = start + p.o_s + t0_rise + (m - 1) * per_byte + p.L
        receiver = max(arrive, receiver) + p.o_r + b * u
        return start + p.o_s + t0_rise, start + max(p.g, (m - 1) * per_byte), receiver

    # After the first packet the pipeline is in its steady state: each further full
    # packet adds the same period (the slowest stage) to every clock.
    if full:
        sender, link, receiver = one(sender, link, receiver, be)
        if full > 1:
            s2, l2, r2 = one(sender, link, receiver, be)
            period_s, period_r = s2 - sender, r2 - receiver
            steps = full - 1
            # Stage periods are constant from the 2nd packet on; the receiver lags by a
            # constant once it is not the bottleneck, so one step is enough to extrapolate.
            s3, l3, r3 = one(s2, l2, r2, be)
            if math.isclose(s3 - s2, period_s, rel_tol=1e-9, abs_tol=1e-9) and \
                    math.isclose(r3 - r2, period_r, rel_tol=1e-9, abs_tol=1e-9):
                sender += steps * period_s
                link += steps * (l2 - link)
                receiver += steps * period_r
            else:
                for _ in range(steps):
                    sender, link, receiver = one(sender, link, receiver, be)
    if last:
        sender, link, receiver = one(sender, link, receiver, last)
    return (receiver + p.o_s + p.L + p.o_r) / 1000.0


def steady_state_best_be(records, record_size, p):
    """The closed form when the sender is the bottleneck (docs/packet.md):
    T(BE) ~ N c + (N / BE) o_s + BE (R G + u) + const, least at
    BE* = sqrt(N o_s / (R G + u)). Infinite when nothing grows with BE."""
    per_be = record_size * p.G + p.unpack_ns
    if per_be <= 0:
        return math.inf
    return math.sqrt(records * p.o_s / per_be)


def candidate_sizes(record_size, max_size, steps_per_octave=8):
    """Packet sizes from one record to max_size, geometric, as multiples of R. Each step's BE
    is 2^(k/steps) from its own k: a product of steps drifts past 2^octaves and loses max_size."""
    sizes, k = [], 0
    while (be := 2 ** (k / steps_per_octave)) * record_size <= max_size:
        s = int(round(be)) * record_size
        if not sizes or s != sizes[-1]:
            sizes.append(s)
        k += 1
    return sizes


def predicted_best(records, record_size, p, max_size):
    """(best packet size in bytes, its predicted time in us) over a fine grid."""
    grid = candidate_sizes(record_size, max(max_size, record_size))
    times = [transfer_time_us(s, records, record_size, p) for s in grid]
    i = min(range(len(grid)), key=times.__getitem__)
    return grid[i], times[i]


def within_one_octave(a, b):
    """Whether two sizes are within a factor of two of each other."""
    return max(a, b) <= 2 * min(a, b)

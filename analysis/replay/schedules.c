/* MPICH's collective schedules (schedules.py mirrors them, and says why; docs/predict.md):
 * one rank's sends and receives, round by round, for each collective's algorithm. */
#include "replay_internal.h"

enum { B_BARRIER, B_BCAST, B_REDUCE, B_ALLREDUCE, B_ALLGATHER, B_ALLGATHERV, B_ALLTOALL, B_ALLTOALLV, B_ALLTOALLW,
       B_GATHER, B_GATHERV, B_SCATTER, B_SCATTERV, B_REDUCE_SCATTER, B_REDUCE_SCATTER_BLOCK, B_SCAN, B_EXSCAN,
       B_COUNT };
#define ALLREDUCE_SHORT 8
#define REDUCE_SHORT 2048
#define BCAST_SHORT 12288
#define BCAST_MEDIUM 524288
#define BCAST_MIN_RANKS 8
#define ALLGATHER_LONG 524288
#define ALLGATHER_BRUCK 81920
#define REDUCE_SCATTER_LONG 524288
#define ALLTOALL_SHORT 256
#define ALLTOALL_MEDIUM 32768
#define ALLTOALL_MIN_BRUCK_RANKS 8
#define ALLTOALL_THROTTLE 32

enum { SEND = 0, RECV = 1 };

typedef struct {
    int32_t *rounds, *ops, *peers;
    uint64_t *bytes;
    int n, cap, round;
} sched;

static void put(sched *sc, int op, int peer, uint64_t bytes)
{
    if (sc->n == sc->cap)
        return;
    sc->rounds[sc->n] = sc->round;
    sc->ops[sc->n] = op;
    sc->peers[sc->n] = peer;
    sc->bytes[sc->n] = bytes;
    sc->n++;
}

static void next_round(sched *sc) { sc->round++; }
static int pow2(int n) { return n > 0 && (n & (n - 1)) == 0; }
static int mod(int a, int n) { return ((a % n) + n) % n; }
static int bits(int n) { int b = 0; while (n) { b++; n >>= 1; } return b; }
static int floor_pow2(int n) { int p = 1; while (p <= n / 2) p <<= 1; return p; }
static uint64_t block(uint64_t nbytes, int size) { return size ? nbytes / (uint64_t)size : 0; }

/* The element count behind a size (the trace keeps bytes): 8-byte elements when 8 divides
 * it, else 4-byte ones, else bytes. */
static uint64_t element_count(uint64_t nbytes)
{
    return nbytes % 8 == 0 ? nbytes / 8 : nbytes % 4 == 0 ? nbytes / 4 : nbytes;
}

static void one(sched *sc, int op, int peer, uint64_t bytes)
{
    put(sc, op, peer, bytes);
    next_round(sc);
}

static void exchange(sched *sc, int peer, uint64_t bytes)
{
    put(sc, SEND, peer, bytes);
    put(sc, RECV, peer, bytes);
    next_round(sc);
}

/* Send to rank + k, receive from rank - k. */
static void shift(sched *sc, int rank, int size, int k, uint64_t bytes)
{
    put(sc, SEND, mod(rank + k, size), bytes);
    put(sc, RECV, mod(rank - k, size), bytes);
    next_round(sc);
}

static int subtree(int vr, int size)
{
    if (vr == 0)
        return size;
    int low = vr & -vr;
    return low < size - vr ? low : size - vr;
}

/* The binomial tree rooted at root: receive from the parent, then send to each child,
 * farthest first. Each edge carries nbytes, or (blocks) nbytes per rank of the child's
 * subtree; up: walked leaves to root, sends and receives swapped (reduce, gather). */
static void binomial(sched *sc, int rank, int size, uint64_t nbytes, int root, int blocks, int up)
{
    int vr = mod(rank - root, size);
    int peer[64], op[64], child[64], n = 0;
    int mask = 1;
    while (mask < size) {
        if (vr & mask) {
            op[n] = RECV;
            child[n] = vr;
            peer[n++] = mod(vr - mask + root, size);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (vr + mask < size) {
            op[n] = SEND;
            child[n] = vr + mask;
            peer[n++] = mod(vr + mask + root, size);
        }
        mask >>= 1;
    }
    for (int k = 0; k < n; k++) {
        int at = up ? n - 1 - k : k;
        uint64_t bytes = blocks ? nbytes * (uint64_t)subtree(child[at], size) : nbytes;
        one(sc, up ? !op[at] : op[at], peer[at], bytes);
    }
}

/* Exchange with rank ^ 2^k, nbytes << k (grow) or nbytes; partners beyond the size skipped. */
static void doubling(sched *sc, int rank, int size, uint64_t nbytes, int grow)
{
    int k = 0;
    for (int mask = 1; mask < size; mask <<= 1, k++) {
        int peer = rank ^ mask;
        if (peer < size)
            exchange(sc, peer, grow ? nbytes << k : nbytes);
    }
}

static void ring(sched *sc, int rank, int size, uint64_t nbytes)
{
    for (int k = 0; k < size - 1; k++)
        shift(sc, rank, size, 1, nbytes);
}

/* MPICH's fold onto pof2 ranks (schedules.py's folded()): with rem = size - pof2, the first
 * 2 rem ranks pair up; the even one (odd_joins) or the odd one hands its whole vector to
 * the other and sits out. Returns the joined rank's newrank, or -1 for one that sat out
 * (its part then written, with `back` bytes coming back unless 0). */
typedef struct { int pof2, rem, odd_joins; } fold;

static int real_rank(const fold *f, int newrank)
{
    if (newrank < f->rem)
        return f->odd_joins ? 2 * newrank + 1 : 2 * newrank;
    return newrank + f->rem;
}

static int fold_in(sched *sc, const fold *f, int rank, uint64_t nbytes, uint64_t back)
{
    if (rank >= 2 * f->rem)
        return rank - f->rem;
    int partner = rank % 2 == 0 ? rank + 1 : rank - 1;
    if ((rank % 2 == 1) != f->odd_joins) {
        one(sc, SEND, partner, nbytes);
        if (back)
            one(sc, RECV, partner, back);
        return -1;
    }
    one(sc, RECV, partner, nbytes);
    return rank / 2;
}

static void fold_out(sched *sc, const fold *f, int rank, uint64_t back)
{
    if (rank < 2 * f->rem && back)
        one(sc, SEND, rank % 2 == 0 ? rank + 1 : rank - 1, back);
}

/* Recursive halving among the folded ranks, partners 1, 2, 4, ... apart. */
static void halving(sched *sc, const fold *f, int me, uint64_t nbytes)
{
    for (int k = 0; k < bits(f->pof2) - 1; k++)
        exchange(sc, real_rank(f, me ^ (1 << k)), nbytes >> (k + 1));
}

static void allreduce(sched *sc, int rank, int size, uint64_t nbytes)
{
    if (size < 1)
        return;
    fold f = {floor_pow2(size), size - floor_pow2(size), 1};
    int steps = bits(f.pof2) - 1;
    int halves = nbytes > ALLREDUCE_SHORT && element_count(nbytes) >= (uint64_t)f.pof2;
    int me = fold_in(sc, &f, rank, nbytes, nbytes);
    if (me < 0)
        return;
    if (!halves)
        for (int k = 0; k < steps; k++)
            exchange(sc, real_rank(&f, me ^ (1 << k)), nbytes);
    else {
        halving(sc, &f, me, nbytes);
        for (int k = steps - 1; k >= 0; k--)
            exchange(sc, real_rank(&f, me ^ (1 << k)), nbytes >> (k + 1));
    }
    fold_out(sc, &f, rank, nbytes);
}

/* schedules.py's reduce_scatter_gather. */
static void reduce_scatter_gather(sched *sc, int rank, int size, uint64_t nbytes, int root)
{
    fold f = {floor_pow2(size), size - floor_pow2(size), 0};
    int steps = bits(f.pof2) - 1;
    int root_sat_out = root < 2 * f.rem && root % 2 == 1;
    int newroot = root_sat_out ? 0 : root < 2 * f.rem ? root / 2 : root - f.rem;
    int me;
    if (root_sat_out && rank == root) {
        one(sc, SEND, root - 1, nbytes);
        one(sc, RECV, 0, nbytes / (uint64_t)f.pof2);
        me = 0;
    } else {
        me = fold_in(sc, &f, rank, nbytes, 0);
        if (me < 0)
            return;
        halving(sc, &f, me, nbytes);
        if (root_sat_out && me == 0) {
            one(sc, SEND, root, nbytes / (uint64_t)f.pof2);
            return;
        }
    }
    for (int k = steps - 1; k >= 0; k--) {
        int partner = me ^ (1 << k);
        int peer = partner == 0 && root_sat_out ? root : real_rank(&f, partner);
        if (partner >> k == newroot >> k) {
            one(sc, SEND, peer, nbytes >> (k + 1));
            break;
        }
        one(sc, RECV, peer, nbytes >> (k + 1));
    }
}

static void reduce_scatter(sched *sc, int rank, int size, uint64_t nbytes)
{
    if (size < 1)
        return;
    if (nbytes >= REDUCE_SCATTER_LONG) {
        for (int i = 1; i < size; i++)
            shift(sc, rank, size, i, block(nbytes, size));
        return;
    }
    fold f = {floor_pow2(size), size - floor_pow2(size), 1};
    int me = fold_in(sc, &f, rank, nbytes, block(nbytes, size));
    if (me < 0)
        return;
    for (int k = 0; k < bits(f.pof2) - 1; k++)
        exchange(sc, real_rank(&f, me ^ (f.pof2 >> (k + 1))), nbytes >> (k + 1));
    fold_out(sc, &f, rank, block(nbytes, size));
}

static void allgather(sched *sc, int rank, int size, uint64_t nbytes)
{
    uint64_t total = nbytes * (uint64_t)size;
    if (pow2(size) && total < ALLGATHER_LONG)
        doubling(sc, rank, size, nbytes, 1);
    else if (!pow2(size) && total < ALLGATHER_BRUCK) {
        int k = 1;
        for (; k <= size / 2; k *= 2)
            shift(sc, rank, size, -k, nbytes * (uint64_t)k);
        if (size - k)
            shift(sc, rank, size, -k, nbytes * (uint64_t)(size - k));
    } else
        ring(sc, rank, size, nbytes);
}

/* Every peer at once, ALLTOALL_THROTTLE a round, itself left out. */
static void scattered(sched *sc, int rank, int size, uint64_t each)
{
    for (int start = 0; start < size; start += ALLTOALL_THROTTLE) {
        int end = start + ALLTOALL_THROTTLE < size ? start + ALLTOALL_THROTTLE : size, any = 0;
        for (int k = start; k < end; k++)
            if (k) {
                put(sc, RECV, mod(rank + k, size), each);
                any = 1;
            }
        for (int k = start; k < end; k++)
            if (k)
                put(sc, SEND, mod(rank - k, size), each);
        if (any)
            next_round(sc);
    }
}

static void alltoall(sched *sc, int rank, int size, uint64_t nbytes)
{
    uint64_t each = block(nbytes, size);
    if (size >= ALLTOALL_MIN_BRUCK_RANKS && each <= ALLTOALL_SHORT)
        for (int k = 1; k < size; k <<= 1) {
            uint64_t blocks = 0;
            for (int b = 1; b < size; b++)
                blocks += (b & k) != 0;
            shift(sc, rank, size, k, each * blocks);
        }
    else if (each <= ALLTOALL_MEDIUM)
        scattered(sc, rank, size, each);
    else
        for (int i = 1; i < size; i++) {
            if (pow2(size))
                exchange(sc, rank ^ i, each);
            else
                shift(sc, rank, size, i, each);
        }
}

static void linear(sched *sc, int rank, int size, uint64_t each, int root, int scatter)
{
    if (rank == root) {
        for (int peer = 0; peer < size; peer++)
            if (peer != root)
                put(sc, scatter ? SEND : RECV, peer, each);
    } else
        put(sc, scatter ? RECV : SEND, root, each);
    next_round(sc);
}

static void bcast(sched *sc, int rank, int size, uint64_t nbytes, int root)
{
    if (size < BCAST_MIN_RANKS || nbytes <= BCAST_SHORT) {
        binomial(sc, rank, size, nbytes, root, 0, 0);
        return;
    }
    uint64_t each = block(nbytes, size);
    binomial(sc, rank, size, each, root, 1, 0);
    if (pow2(size) && nbytes <= BCAST_MEDIUM) {
        int vr = mod(rank - root, size);
        for (int k = 0; (1 << k) < size; k++)
            exchange(sc, mod((vr ^ (1 << k)) + root, size), each << k);
    } else
        ring(sc, rank, size, each);
}

int schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
                    int32_t *peers, uint64_t *bytes, int cap)
{
    sched sc = {rounds, ops, peers, bytes, 0, cap, 0};
    if (root < 0)
        root = 0;
    if (size < 1)
        return 0;
    switch (base) {
    case B_BARRIER:
        for (int k = 1; k < size; k <<= 1)
            shift(&sc, rank, size, k, 0);
        break;
    case B_BCAST:
        bcast(&sc, rank, size, nbytes, root);
        break;
    case B_REDUCE:
        if (nbytes > REDUCE_SHORT && element_count(nbytes) >= (uint64_t)floor_pow2(size))
            reduce_scatter_gather(&sc, rank, size, nbytes, root);
        else
            binomial(&sc, rank, size, nbytes, root, 0, 1);
        break;
    case B_ALLREDUCE:
        allreduce(&sc, rank, size, nbytes);
        break;
    case B_ALLGATHER:
    case B_ALLGATHERV:
        allgather(&sc, rank, size, nbytes);
        break;
    case B_ALLTOALL:
        alltoall(&sc, rank, size, nbytes);
        break;
    case B_ALLTOALLV:
    case B_ALLTOALLW:
        scattered(&sc, rank, size, block(nbytes, size));
        break;
    case B_GATHER:
        binomial(&sc, rank, size, nbytes, root, 1, 1);
        break;
    case B_GATHERV:
        linear(&sc, rank, size, nbytes, root, 0);
        break;
    case B_SCATTER:
        binomial(&sc, rank, size, block(nbytes, size), root, 1, 0);
        break;
    case B_SCATTERV:
        linear(&sc, rank, size, block(nbytes, size), root, 1);
        break;
    case B_REDUCE_SCATTER:
    case B_REDUCE_SCATTER_BLOCK:
        reduce_scatter(&sc, rank, size, nbytes);
        break;
    case B_SCAN:
    case B_EXSCAN:
        doubling(&sc, rank, size, nbytes, 0);
        break;
    default:
        break;
    }
    return sc.n;
}

/* The schedule, for tests against schedules.py. */
API int lr_schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
                    int32_t *peers, uint64_t *bytes, int cap)
{
    return schedule(base, rank, size, nbytes, root, rounds, ops, peers, bytes, cap);
}

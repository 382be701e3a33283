/* MPICH's collective schedules (schedules.py; docs/predict.md): one rank's sends and
 * receives, round by round, for each collective's algorithm. */
#include "replay_internal.h"

enum { B_BARRIER, B_BCAST, B_REDUCE, B_ALLREDUCE, B_ALLGATHER, B_ALLGATHERV, B_ALLTOALL, B_ALLTOALLV, B_ALLTOALLW,
       B_GATHER, B_GATHERV, B_SCATTER, B_SCATTERV, B_REDUCE_SCATTER, B_REDUCE_SCATTER_BLOCK, B_SCAN, B_EXSCAN,
       B_COUNT };
#define ALLREDUCE_SHORT 8
#define BCAST_SHORT 12288

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

static void exchange(sched *sc, int peer, uint64_t bytes)
{
    put(sc, 0, peer, bytes);
    put(sc, 1, peer, bytes);
    next_round(sc);
}

/* Binomial broadcast; reversed (leaves to root, sends and receives swapped) for a reduce. */
static void binomial(sched *sc, int rank, int size, uint64_t nbytes, int root, int reversed)
{
    int vr = mod(rank - root, size);
    int steps_peer[64], steps_op[64], n = 0;
    int mask = 1;
    while (mask < size) {
        if (vr & mask) {
            steps_op[n] = 1;
            steps_peer[n++] = mod(vr - mask + root, size);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while (mask > 0) {
        if (vr + mask < size) {
            steps_op[n] = 0;
            steps_peer[n++] = mod(vr + mask + root, size);
        }
        mask >>= 1;
    }
    for (int k = 0; k < n; k++) {
        int at = reversed ? n - 1 - k : k;
        put(sc, reversed ? !steps_op[at] : steps_op[at], steps_peer[at], nbytes);
        next_round(sc);
    }
}

static void doubling(sched *sc, int rank, int size, uint64_t nbytes, int grow)
{
    int k = 0;
    for (int mask = 1; mask < size; mask <<= 1, k++) {
        int peer = rank ^ mask;
        if (peer < size)
            exchange(sc, peer, grow ? nbytes << k : nbytes);
    }
}

static void halving(sched *sc, int rank, int size, uint64_t nbytes)
{
    for (int k = 0; k < bits(size) - 1; k++)
        exchange(sc, rank ^ (size >> (k + 1)), nbytes >> (k + 1));
}

static int floor_pow2(int n)
{
    int p = 1;
    while (p <= n / 2)
        p <<= 1;
    return p;
}

/* The element count behind a size (the trace keeps bytes): 8-byte elements when 8
 * divides it, else 4-byte ones, else bytes. */
static uint64_t element_count(uint64_t nbytes)
{
    return nbytes % 8 == 0 ? nbytes / 8 : nbytes % 4 == 0 ? nbytes / 4 : nbytes;
}

/* A rank's partner newrank ^ mask among MPICH's pof2 folded ranks, as a real rank. */
static int unfold(int newrank, int rem) { return newrank < rem ? 2 * newrank + 1 : newrank + rem; }

/* MPICH's allreduce, folded onto pof2 ranks (schedules.py's folded()): recursive
 * doubling of the whole vector, or (halves) reduce-scatter by recursive halving
 * + allgather by recursive doubling. */
static void allreduce(sched *sc, int rank, int size, uint64_t nbytes)
{
    if (size < 1)
        return;
    int pof2 = floor_pow2(size), rem = size - pof2, steps = bits(pof2) - 1;
    int halves = nbytes > ALLREDUCE_SHORT && element_count(nbytes) >= (uint64_t)pof2;
    if (rank < 2 * rem && rank % 2 == 0) {
        put(sc, 0, rank + 1, nbytes);
        next_round(sc);
        put(sc, 1, rank + 1, nbytes);
        next_round(sc);
        return;
    }
    int me = rank < 2 * rem ? rank / 2 : rank - rem;
    if (rank < 2 * rem) {
        put(sc, 1, rank - 1, nbytes);
        next_round(sc);
    }
    if (!halves)
        for (int k = 0; k < steps; k++)
            exchange(sc, unfold(me ^ (1 << k), rem), nbytes);
    else {
        for (int k = 0; k < steps; k++)
            exchange(sc, unfold(me ^ (1 << k), rem), nbytes >> (k + 1));
        for (int k = steps - 1; k >= 0; k--)
            exchange(sc, unfold(me ^ (1 << k), rem), nbytes >> (k + 1));
    }
    if (rank < 2 * rem) {
        put(sc, 0, rank - 1, nbytes);
        next_round(sc);
    }
}

static void allgather(sched *sc, int rank, int size, uint64_t nbytes)
{
    if (pow2(size)) {
        doubling(sc, rank, size, nbytes, 1);
        return;
    }
    for (int k = 0; k < size - 1; k++) {
        put(sc, 0, mod(rank + 1, size), nbytes);
        put(sc, 1, mod(rank - 1, size), nbytes);
        next_round(sc);
    }
}

static void gather(sched *sc, int rank, int size, uint64_t nbytes, int root, int scatter)
{
    uint64_t each = scatter ? (size ? nbytes / (uint64_t)size : 0) : nbytes;
    if (rank == root) {
        for (int peer = 0; peer < size; peer++)
            if (peer != root)
                put(sc, scatter ? 0 : 1, peer, each);
    } else
        put(sc, scatter ? 1 : 0, root, each);
    next_round(sc);
}

int schedule(int base, int rank, int size, uint64_t nbytes, int root, int32_t *rounds, int32_t *ops,
                    int32_t *peers, uint64_t *bytes, int cap)
{
    sched sc = {rounds, ops, peers, bytes, 0, cap, 0};
    if (root < 0)
        root = 0;
    switch (base) {
    case B_BARRIER:
        for (int k = 1; k < size; k <<= 1) {
            put(&sc, 0, mod(rank + k, size), 0);
            put(&sc, 1, mod(rank - k, size), 0);
            next_round(&sc);
        }
        break;
    case B_BCAST:
        if (nbytes <= BCAST_SHORT || size < 3)
            binomial(&sc, rank, size, nbytes, root, 0);
        else {
            gather(&sc, rank, size, nbytes, root, 1);
            allgather(&sc, rank, size, nbytes / (uint64_t)size);
        }
        break;
    case B_REDUCE:
        binomial(&sc, rank, size, nbytes, root, 1);
        break;
    case B_ALLREDUCE:
        allreduce(&sc, rank, size, nbytes);
        break;
    case B_ALLGATHER:
    case B_ALLGATHERV:
        allgather(&sc, rank, size, nbytes);
        break;
    case B_ALLTOALL:
    case B_ALLTOALLV:
    case B_ALLTOALLW: {
        uint64_t each = size ? nbytes / (uint64_t)size : 0;
        for (int i = 1; i < size; i++) {
            put(&sc, 0, mod(rank + i, size), each);
            put(&sc, 1, mod(rank - i, size), each);
            next_round(&sc);
        }
        break;
    }
    case B_GATHER:
    case B_GATHERV:
        gather(&sc, rank, size, nbytes, root, 0);
        break;
    case B_SCATTER:
    case B_SCATTERV:
        gather(&sc, rank, size, nbytes, root, 1);
        break;
    case B_REDUCE_SCATTER:
    case B_REDUCE_SCATTER_BLOCK:
        if (!pow2(size))
            allreduce(&sc, rank, size, nbytes);
        else
            halving(&sc, rank, size, nbytes);
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

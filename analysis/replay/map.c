/* The replay's map: open addressing over three 64-bit words, a 32-bit value each. */
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

static size_t slot_of(const map3 *m, key3 k)
{
    uint64_t h = k.a * 0x9e3779b97f4a7c15ull ^ k.b * 0xc2b2ae3d27d4eb4full ^ k.c * 0x165667b19e3779f9ull;
    h ^= h >> 32;
    h *= 0xd6e8feb86659fd93ull;
    h ^= h >> 32;
    return (size_t)h & (m->cap - 1);
}

static int same(key3 x, key3 y) { return x.a == y.a && x.b == y.b && x.c == y.c; }

void map_clear(map3 *m)
{
    if (m->used)
        memset(m->used, 0, m->cap);
    m->n = 0;
}

void map_free(map3 *m)
{
    free(m->keys);
    free(m->vals);
    free(m->used);
    memset(m, 0, sizeof *m);
}

long map_find(const map3 *m, key3 k)
{
    if (!m->cap)
        return -1;
    for (size_t s = slot_of(m, k);; s = (s + 1) & (m->cap - 1)) {
        if (!m->used[s])
            return -1;
        if (same(m->keys[s], k))
            return (long)s;
    }
}

static int map_grow(map3 *m)
{
    map3 bigger = {0};
    bigger.cap = m->cap ? m->cap * 2 : 16;
    bigger.keys = malloc(bigger.cap * sizeof *bigger.keys);
    bigger.vals = malloc(bigger.cap * sizeof *bigger.vals);
    bigger.used = calloc(bigger.cap, 1);
    if (!bigger.keys || !bigger.vals || !bigger.used) {
        map_free(&bigger);
        return -1;
    }
    for (size_t s = 0; s < m->cap; s++) {
        if (!m->used[s])
            continue;
        size_t t = slot_of(&bigger, m->keys[s]);
        while (bigger.used[t])
            t = (t + 1) & (bigger.cap - 1);
        bigger.used[t] = 1;
        bigger.keys[t] = m->keys[s];
        bigger.vals[t] = m->vals[s];
    }
    bigger.n = m->n;
    map_free(m);
    *m = bigger;
    return 0;
}

int map_put(map3 *m, key3 k, uint32_t v)
{
    if (2 * (m->n + 1) > m->cap && map_grow(m) != 0)
        return -1;
    size_t s = slot_of(m, k);
    while (m->used[s])
        s = (s + 1) & (m->cap - 1);
    m->used[s] = 1;
    m->keys[s] = k;
    m->vals[s] = v;
    m->n++;
    return 0;
}

void map_del(map3 *m, long slot)
{
    size_t hole = (size_t)slot, mask = m->cap - 1;
    m->used[hole] = 0;
    m->n--;
    for (size_t s = (hole + 1) & mask; m->used[s]; s = (s + 1) & mask) {
        size_t home = slot_of(m, m->keys[s]);
        /* the entry at s may move into the hole if its home is not in (hole, s] */
        int between = hole <= s ? (home > hole && home <= s) : (home > hole || home <= s);
        if (between)
            continue;
        m->used[hole] = 1;
        m->keys[hole] = m->keys[s];
        m->vals[hole] = m->vals[s];
        m->used[s] = 0;
        hole = s;
    }
}

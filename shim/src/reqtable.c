#include "reqtable.h"

#include <stdlib.h>

struct loggp_table_slot {
    uint64_t key;
    uint64_t bytes;
    int kind; /* 0: empty slot */
};
typedef loggp_table_slot slot;

static void acquire(loggp_table *t)
{
    while (atomic_flag_test_and_set_explicit(&t->lock, memory_order_acquire))
        ;
}

static void release(loggp_table *t)
{
    atomic_flag_clear_explicit(&t->lock, memory_order_release);
}

static size_t home(const loggp_table *t, uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (t->capacity - 1);
}

static void insert_slot(slot *table, size_t cap, slot s)
{
    size_t i = (size_t)((s.key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (table[i].kind && table[i].key != s.key)
        i = (i + 1) & (cap - 1);
    table[i] = s;
}

/* Keeps the load under one half. Returns -1 if memory ran out. */
static int grow(loggp_table *t)
{
    long size = atomic_load_explicit(&t->size, memory_order_relaxed);
    if (t->capacity && (size_t)(size + 1) * 2 <= t->capacity)
        return 0;
    size_t cap = t->capacity ? t->capacity * 2 : 256;
    slot *table = calloc(cap, sizeof *table);
    if (!table)
        return -1;
    for (size_t i = 0; i < t->capacity; i++)
        if (t->slots[i].kind)
            insert_slot(table, cap, t->slots[i]);
    free(t->slots);
    t->slots = table;
    t->capacity = cap;
    return 0;
}

static long find(const loggp_table *t, uint64_t key)
{
    if (!t->capacity)
        return -1;
    for (size_t i = home(t, key);; i = (i + 1) & (t->capacity - 1)) {
        if (!t->slots[i].kind)
            return -1;
        if (t->slots[i].key == key)
            return (long)i;
    }
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void erase(loggp_table *t, size_t i)
{
    size_t j = i;
    for (;;) {
        j = (j + 1) & (t->capacity - 1);
        if (!t->slots[j].kind)
            break;
        size_t h = home(t, t->slots[j].key);
        int between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!between) {
            t->slots[i] = t->slots[j];
            i = j;
        }
    }
    t->slots[i].kind = 0;
    atomic_fetch_sub_explicit(&t->size, 1, memory_order_relaxed);
}

void loggp_table_put(loggp_table *t, uint64_t key, int kind, uint64_t value)
{
    acquire(t);
    long at = find(t, key);
    if (at >= 0) {
        t->slots[at].kind = kind;
        t->slots[at].bytes = value;
    } else if (grow(t) == 0) {
        insert_slot(t->slots, t->capacity, (slot){key, value, kind});
        atomic_fetch_add_explicit(&t->size, 1, memory_order_relaxed);
    }
    release(t);
}

static int lookup(loggp_table *t, uint64_t key, loggp_req_info *info, int take)
{
    if (loggp_table_empty(t))
        return 0;
    acquire(t);
    long at = find(t, key);
    int found = at >= 0;
    if (found) {
        info->kind = t->slots[at].kind;
        info->bytes = t->slots[at].bytes;
        if (take && !(t->persistent_kinds & (1 << info->kind)))
            erase(t, (size_t)at);
    }
    release(t);
    return found;
}

int loggp_table_take(loggp_table *t, uint64_t key, loggp_req_info *info)
{
    return lookup(t, key, info, 1);
}

int loggp_table_peek(loggp_table *t, uint64_t key, loggp_req_info *info)
{
    return lookup(t, key, info, 0);
}

void loggp_table_remove(loggp_table *t, uint64_t key)
{
    if (loggp_table_empty(t))
        return;
    acquire(t);
    long at = find(t, key);
    if (at >= 0)
        erase(t, (size_t)at);
    release(t);
}

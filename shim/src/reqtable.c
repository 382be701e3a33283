#include "reqtable.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t key;
    uint64_t bytes;
    int kind; /* 0: empty slot */
} slot;

_Atomic long loggp_reqtable_size;

static atomic_flag lock = ATOMIC_FLAG_INIT;
static slot *slots;
static size_t capacity; /* power of two */

static void acquire(void)
{
    while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
        ;
}

static void release(void)
{
    atomic_flag_clear_explicit(&lock, memory_order_release);
}

static size_t home(uint64_t key)
{
    return (size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) & (capacity - 1);
}

static void insert_slot(slot *table, size_t cap, slot s)
{
    size_t i = (size_t)((s.key * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
    while (table[i].kind && table[i].key != s.key)
        i = (i + 1) & (cap - 1);
    table[i] = s;
}

/* Keeps the load under one half. Returns -1 if memory ran out. */
static int grow(void)
{
    long size = atomic_load_explicit(&loggp_reqtable_size, memory_order_relaxed);
    if (capacity && (size_t)(size + 1) * 2 <= capacity)
        return 0;
    size_t cap = capacity ? capacity * 2 : 256;
    slot *table = calloc(cap, sizeof *table);
    if (!table)
        return -1;
    for (size_t i = 0; i < capacity; i++)
        if (slots[i].kind)
            insert_slot(table, cap, slots[i]);
    free(slots);
    slots = table;
    capacity = cap;
    return 0;
}

static long find(uint64_t key)
{
    if (!capacity)
        return -1;
    for (size_t i = home(key);; i = (i + 1) & (capacity - 1)) {
        if (!slots[i].kind)
            return -1;
        if (slots[i].key == key)
            return (long)i;
    }
}

/* Backward-shift deletion keeps probe chains intact without tombstones. */
static void erase(size_t i)
{
    size_t j = i;
    for (;;) {
        j = (j + 1) & (capacity - 1);
        if (!slots[j].kind)
            break;
        size_t h = home(slots[j].key);
        int between = i <= j ? (i < h && h <= j) : (i < h || h <= j);
        if (!between) {
            slots[i] = slots[j];
            i = j;
        }
    }
    slots[i].kind = 0;
    atomic_fetch_sub_explicit(&loggp_reqtable_size, 1, memory_order_relaxed);
}

void loggp_reqtable_put(uint64_t key, int kind, uint64_t bytes)
{
    acquire();
    long at = find(key);
    if (at >= 0) {
        slots[at].kind = kind;
        slots[at].bytes = bytes;
    } else if (grow() == 0) {
        insert_slot(slots, capacity, (slot){key, bytes, kind});
        atomic_fetch_add_explicit(&loggp_reqtable_size, 1, memory_order_relaxed);
    }
    release();
}

static int lookup(uint64_t key, loggp_req_info *info, int take)
{
    if (!atomic_load_explicit(&loggp_reqtable_size, memory_order_relaxed))
        return 0;
    acquire();
    long at = find(key);
    int found = at >= 0;
    if (found) {
        info->kind = slots[at].kind;
        info->bytes = slots[at].bytes;
        if (take && info->kind == LOGGP_REQ_RECV)
            erase((size_t)at);
    }
    release();
    return found;
}

int loggp_reqtable_take(uint64_t key, loggp_req_info *info)
{
    return lookup(key, info, 1);
}

int loggp_reqtable_peek(uint64_t key, loggp_req_info *info)
{
    return lookup(key, info, 0);
}

void loggp_reqtable_remove(uint64_t key)
{
    if (!atomic_load_explicit(&loggp_reqtable_size, memory_order_relaxed))
        return;
    acquire();
    long at = find(key);
    if (at >= 0)
        erase((size_t)at);
    release();
}

/* The replay's pools: growable arrays of fixed-size items, a free list threaded through
 * the free items' first word. */
#include <stdlib.h>
#include <string.h>

#include "replay_internal.h"

int64_t pool_take(pool *p)
{
    if (p->free_head >= 0) {
        int64_t i = p->free_head;
        memcpy(&p->free_head, p->items + (size_t)i * p->size, sizeof p->free_head);
        return i;
    }
    if (p->n == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 256;
        char *items = realloc(p->items, cap * p->size);
        if (!items)
            return -1;
        p->items = items;
        p->cap = cap;
    }
    return (int64_t)p->n++;
}

void pool_give(pool *p, int64_t i)
{
    memcpy(p->items + (size_t)i * p->size, &p->free_head, sizeof p->free_head);
    p->free_head = i;
}

void pool_reset(pool *p)
{
    p->n = 0;
    p->free_head = -1;
}

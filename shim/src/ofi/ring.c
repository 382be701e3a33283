/* FIFO ring growth (ring.h): pure, unit-tested in test_ofi_ring.c. */
#include "ring.h"

#include <stdlib.h>
#include <string.h>

int ring_reserve(void **ring, size_t *cap, size_t *head, size_t count, size_t elem)
{
    if (count < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 64;
    char *n = malloc(ncap * elem);
    if (!n)
        return -1;
    for (size_t i = 0; i < count; i++)
        memcpy(n + i * elem, (char *)*ring + ring_index(*head, i, *cap) * elem, elem);
    free(*ring);
    *ring = n;
    *cap = ncap;
    *head = 0;
    return 0;
}

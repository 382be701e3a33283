/* What the layer's FIFO rings (held completions, counter due times) share: a
 * spin lock and growth that keeps the entries' order. */
#ifndef LOGGP_OFI_RING_H
#define LOGGP_OFI_RING_H

#include <stdatomic.h>
#include <stddef.h>

static inline void spin_lock(atomic_flag *f)
{
    while (atomic_flag_test_and_set_explicit(f, memory_order_acquire))
        ;
}

static inline void spin_unlock(atomic_flag *f)
{
    atomic_flag_clear_explicit(f, memory_order_release);
}

#pragma GCC visibility push(hidden)

/* Makes room for one more entry in a FIFO ring of `elem` bytes per entry
 * holding `count` entries from *head: a full ring doubles (64 entries at
 * first), its entries moved in order to the front of the new one (so *head
 * becomes 0). -1 if memory ran out (the ring is then unchanged). */
int ring_reserve(void **ring, size_t *cap, size_t *head, size_t count, size_t elem);

#pragma GCC visibility pop

/* Index of the i-th entry after the head. */
static inline size_t ring_index(size_t head, size_t i, size_t cap)
{
    return (head + i) % cap;
}

/* The head after its entry is released. */
static inline size_t ring_next(size_t head, size_t cap)
{
    return (head + 1) % cap;
}

#endif

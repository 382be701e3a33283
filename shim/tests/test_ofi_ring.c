/* The FIFO ring behind held completions and counter due times
 * (src/ofi/ring.c): growth keeps the order wherever the head is, and entries
 * come out in the order they went in across wraparound and growth. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "ring.h"

/* A FIFO of ints built on the ring, as cq_hold.c and cntr.c use it. */
typedef struct {
    int *slots;
    size_t cap, head, count;
} fifo;

static void push(fifo *f, int v)
{
    cr_assert_eq(ring_reserve((void **)&f->slots, &f->cap, &f->head, f->count, sizeof *f->slots), 0);
    f->slots[ring_index(f->head, f->count, f->cap)] = v;
    f->count++;
}

static int pop(fifo *f)
{
    cr_assert(f->count > 0);
    int v = f->slots[f->head];
    f->head = ring_next(f->head, f->cap);
    f->count--;
    return v;
}

Test(ring, first_reserve_makes_room)
{
    fifo f = {0};
    push(&f, 7);
    cr_assert_eq(f.cap, 64);
    cr_assert_eq(pop(&f), 7);
    free(f.slots);
}

Test(ring, a_ring_with_room_is_left_alone)
{
    fifo f = {0};
    push(&f, 1);
    int *before = f.slots;
    size_t cap = f.cap;
    cr_assert_eq(ring_reserve((void **)&f.slots, &f.cap, &f.head, f.count, sizeof *f.slots), 0);
    cr_assert_eq(f.slots, before);
    cr_assert_eq(f.cap, cap);
    free(f.slots);
}

Test(ring, growth_with_the_head_inside_keeps_the_order)
{
    fifo f = {0};
    push(&f, -1);
    /* move the head to 40, then fill the ring: the oldest entry sits at 40 */
    for (int i = 0; i < 40; i++) {
        push(&f, -1);
        pop(&f);
    }
    pop(&f);
    cr_assert_eq(f.head, 41 % 64);
    f.head = 40;
    for (int i = 0; i < 64; i++)
        f.slots[ring_index(f.head, (size_t)i, f.cap)] = i;
    f.count = 64;
    cr_assert_eq(ring_reserve((void **)&f.slots, &f.cap, &f.head, f.count, sizeof *f.slots), 0);
    cr_assert_eq(f.cap, 128);
    cr_assert_eq(f.head, 0);
    for (int i = 0; i < 64; i++)
        cr_assert_eq(f.slots[i], i, "slot %d holds %d", i, f.slots[i]);
    free(f.slots);
}

Test(ring, fifo_order_across_wraparound_growth_and_release)
{
    fifo f = {0};
    int next_in = 0, next_out = 0;
    /* uneven pushes and pops: the head wraps many times and the ring grows
     * while it is away from slot 0 */
    for (int round = 0; round < 200; round++) {
        int pushes = 3 + round % 7, pops = 2 + round % 5;
        for (int i = 0; i < pushes; i++)
            push(&f, next_in++);
        for (int i = 0; i < pops && f.count; i++)
            cr_assert_eq(pop(&f), next_out++);
    }
    while (f.count)
        cr_assert_eq(pop(&f), next_out++);
    cr_assert_eq(next_out, next_in);
    cr_assert(f.cap >= 256, "the ring grew (cap %zu)", f.cap);
    free(f.slots);
}

Test(ring, release_wraps_to_slot_zero)
{
    cr_assert_eq(ring_next(63, 64), 0);
    cr_assert_eq(ring_next(5, 64), 6);
    cr_assert_eq(ring_index(60, 10, 64), 6);
}

/* The replay core's containers (analysis/replay/map.c, pool.c): the map finds every key it
 * holds through growth and deletions (deletion shifts entries back over the hole), and a pool
 * reuses freed items last in, first out, keeping items across its growth. */
#include "replay_internal.h"

#include <criterion/criterion.h>
#include <stdlib.h>

#define KEYS 3000

static key3 key_of(uint64_t i) { return (key3){i * 7919u, i % 5, i & 1}; }

Test(replay_map, finds_every_key_it_holds_and_none_it_does_not)
{
    map3 m = {0};
    cr_expect_eq(map_find(&m, key_of(1)), -1, "an empty map finds nothing");
    for (uint32_t i = 0; i < KEYS; i++)
        cr_assert_eq(map_put(&m, key_of(i), i * 3), 0);
    cr_expect_eq(m.n, KEYS);
    cr_expect(m.cap >= 2 * KEYS && (m.cap & (m.cap - 1)) == 0, "cap %zu: a power of two, at most half full", m.cap);
    for (uint32_t i = 0; i < KEYS; i++) {
        long s = map_find(&m, key_of(i));
        cr_assert_geq(s, 0, "key %u lost", i);
        cr_expect_eq(m.vals[s], i * 3);
    }
    /* differing in one word only is another key */
    cr_expect_eq(map_find(&m, (key3){7919u, 1, 0}), -1);
    cr_expect_eq(map_find(&m, key_of(KEYS)), -1);
    map_free(&m);
}

Test(replay_map, deleting_in_any_order_keeps_the_others_reachable)
{
    map3 m = {0};
    for (uint32_t i = 0; i < KEYS; i++)
        cr_assert_eq(map_put(&m, key_of(i), i), 0);
    /* every third key, in a scattered order: entries of colliding runs must shift back */
    srand(7);
    uint32_t order[KEYS];
    for (uint32_t i = 0; i < KEYS; i++)
        order[i] = i;
    for (uint32_t i = KEYS - 1; i > 0; i--) {
        uint32_t j = (uint32_t)rand() % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    size_t left = KEYS;
    for (uint32_t k = 0; k < KEYS; k++) {
        uint32_t i = order[k];
        if (i % 3)
            continue;
        long s = map_find(&m, key_of(i));
        cr_assert_geq(s, 0);
        map_del(&m, s);
        left--;
    }
    cr_expect_eq(m.n, left);
    for (uint32_t i = 0; i < KEYS; i++) {
        long s = map_find(&m, key_of(i));
        if (i % 3 == 0)
            cr_expect_eq(s, -1, "deleted key %u still found", i);
        else {
            cr_assert_geq(s, 0, "key %u lost after deletions", i);
            cr_expect_eq(m.vals[s], i);
        }
    }
    map_free(&m);
}

/* The slot a key takes in an empty map of 16 slots: its home. */
static long home_of(key3 k)
{
    map3 m = {0};
    map_put(&m, k, 0);
    long s = map_find(&m, k);
    cr_assert_eq(m.cap, 16);
    map_free(&m);
    return s;
}

/* The first key from i on whose home is slot h (of 16). */
static key3 key_at_home(uint64_t *i, long h)
{
    while (home_of(key_of(*i)) != h)
        ++*i;
    return key_of((*i)++);
}

Test(replay_map, deleting_before_a_run_that_wraps_past_the_last_slot_keeps_it_reachable)
{
    /* a run from slot 14 over 15 into 0: z's home (15) lies between the hole (14) and its slot (0)
     * going round, so it stays; w sits at its own home 0 after a hole at 15, so it stays too */
    uint64_t i = 0;
    key3 x = key_at_home(&i, 14), y = key_at_home(&i, 15), z = key_at_home(&i, 15);
    map3 m = {0};
    map_put(&m, x, 1), map_put(&m, y, 2), map_put(&m, z, 3);
    cr_assert_eq(m.cap, 16);
    cr_assert_eq(map_find(&m, z), 0, "the run wraps to slot 0");
    map_del(&m, map_find(&m, x));
    cr_expect_eq(map_find(&m, x), -1);
    cr_assert_geq(map_find(&m, y), 0, "y lost");
    cr_assert_geq(map_find(&m, z), 0, "z lost: moved before its home");
    cr_expect_eq(m.vals[map_find(&m, z)], 3);
    map_free(&m);

    key3 v = key_at_home(&i, 15), w = key_at_home(&i, 0);
    m = (map3){0};
    map_put(&m, v, 1), map_put(&m, w, 2);
    cr_assert_eq(map_find(&m, w), 0);
    map_del(&m, map_find(&m, v));
    cr_assert_eq(map_find(&m, w), 0, "w left its home");
    map_free(&m);
}

Test(replay_map, a_cleared_map_is_empty_and_takes_keys_again)
{
    map3 m = {0};
    for (uint32_t i = 0; i < 100; i++)
        map_put(&m, key_of(i), i);
    size_t cap = m.cap;
    map_clear(&m);
    cr_expect_eq(m.n, 0);
    cr_expect_eq(m.cap, cap, "clearing keeps the table");
    for (uint32_t i = 0; i < 100; i++)
        cr_expect_eq(map_find(&m, key_of(i)), -1);
    cr_assert_eq(map_put(&m, key_of(5), 50), 0);
    cr_expect_eq(m.vals[map_find(&m, key_of(5))], 50);
    map_free(&m);
}

typedef struct {
    int64_t link; /* a free item's first word holds the free list */
    int64_t value;
} item;

Test(replay_pool, freed_items_come_back_last_in_first_out)
{
    pool p = {.size = sizeof(item)};
    pool_reset(&p);
    for (int64_t i = 0; i < 4; i++)
        cr_expect_eq(pool_take(&p), i);
    pool_give(&p, 1);
    pool_give(&p, 3);
    cr_expect_eq(pool_take(&p), 3);
    cr_expect_eq(pool_take(&p), 1);
    cr_expect_eq(pool_take(&p), 4, "no item free: a new one");
    pool_reset(&p);
    cr_expect_eq(pool_take(&p), 0, "a reset pool starts over");
    free(p.items);
}

Test(replay_pool, items_keep_their_values_as_the_pool_grows)
{
    pool p = {.size = sizeof(item)};
    pool_reset(&p);
    for (int64_t i = 0; i < 1000; i++) {
        int64_t at = pool_take(&p);
        cr_assert_eq(at, i);
        AT(&p, item, at)->value = 10 * i;
    }
    cr_expect_geq(p.cap, 1000);
    for (int64_t i = 0; i < 1000; i++)
        cr_expect_eq(AT(&p, item, i)->value, 10 * i, "item %ld", (long)i);
    free(p.items);
}

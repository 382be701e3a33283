/* The request table (src/reqtable.c) against a plain list of what was put:
 * open addressing with backward-shift deletion, so every lookup after a
 * removal inside a probe chain (and one wrapping past the table's end) must
 * still find the keys behind it. */
#include <criterion/criterion.h>
#include <string.h>

#include "reqtable.h"

#define POOL 600

/* Keys whose home slot in a table of `cap` slots is `slot` (the table's own hash). */
static size_t keys_homed_at(size_t slot, size_t cap, uint64_t *out, size_t want)
{
    size_t n = 0;
    for (uint64_t key = 1; n < want; key++)
        if ((size_t)((key * 0x9E3779B97F4A7C15ull) >> 20) % cap == slot)
            out[n++] = key;
    return n;
}

static void expect_found(loggp_table *t, uint64_t key, int kind, uint64_t bytes)
{
    loggp_req_info info = {0};
    cr_assert(loggp_table_peek(t, key, &info), "key %llu was put and is not found", (unsigned long long)key);
    cr_assert_eq(info.kind, kind);
    cr_assert_eq(info.bytes, bytes);
}

Test(reqtable, a_removal_in_a_chain_that_wraps_past_the_end_keeps_the_rest)
{
    loggp_table t = LOGGP_TABLE_INIT(0);
    uint64_t last[4], first[2];
    keys_homed_at(255, 256, last, 4); /* the table starts with 256 slots: these wrap to 0, 1, 2 */
    keys_homed_at(0, 256, first, 2);  /* homed at 0: they sit behind the wrapped ones */
    for (int i = 0; i < 4; i++)
        loggp_table_put(&t, last[i], LOGGP_REQ_RECV, 100 + (uint64_t)i);
    for (int i = 0; i < 2; i++)
        loggp_table_put(&t, first[i], LOGGP_REQ_RECV, 200 + (uint64_t)i);
    /* take each in turn from the front of the chain; the rest stay reachable */
    for (int i = 0; i < 4; i++) {
        loggp_req_info info;
        cr_assert(loggp_table_take(&t, last[i], &info));
        cr_assert_eq(info.bytes, 100 + (uint64_t)i);
        cr_assert_not(loggp_table_peek(&t, last[i], &info), "a taken key is gone");
        for (int j = i + 1; j < 4; j++)
            expect_found(&t, last[j], LOGGP_REQ_RECV, 100 + (uint64_t)j);
        for (int j = 0; j < 2; j++)
            expect_found(&t, first[j], LOGGP_REQ_RECV, 200 + (uint64_t)j);
    }
    cr_assert_eq(atomic_load(&t.size), 2);
}

Test(reqtable, a_removal_mid_chain_keeps_the_keys_homed_at_its_end)
{
    loggp_table t = LOGGP_TABLE_INIT(0);
    uint64_t a[3], b[2];
    keys_homed_at(40, 256, a, 3); /* slots 40, 41, 42 */
    keys_homed_at(42, 256, b, 2); /* homed at 42, pushed to 43, 44 */
    for (int i = 0; i < 3; i++)
        loggp_table_put(&t, a[i], LOGGP_REQ_RECV, (uint64_t)i);
    for (int i = 0; i < 2; i++)
        loggp_table_put(&t, b[i], LOGGP_REQ_RECV, 10 + (uint64_t)i);
    loggp_table_remove(&t, a[1]);
    expect_found(&t, a[0], LOGGP_REQ_RECV, 0);
    expect_found(&t, a[2], LOGGP_REQ_RECV, 2);
    for (int i = 0; i < 2; i++)
        expect_found(&t, b[i], LOGGP_REQ_RECV, 10 + (uint64_t)i);
}

Test(reqtable, persistent_kinds_survive_a_take_and_others_do_not)
{
    loggp_table t = LOGGP_TABLE_INIT(1 << LOGGP_REQ_PERSISTENT_SEND);
    loggp_table_put(&t, 7, LOGGP_REQ_PERSISTENT_SEND, 64);
    loggp_table_put(&t, 8, LOGGP_REQ_RECV, 0);
    loggp_req_info info;
    cr_assert(loggp_table_take(&t, 7, &info));
    cr_assert(loggp_table_take(&t, 7, &info), "a persistent request is started again and again");
    cr_assert_eq(info.bytes, 64);
    cr_assert(loggp_table_take(&t, 8, &info));
    cr_assert_not(loggp_table_take(&t, 8, &info), "a receive is taken once");
}

/* Many puts, takes and removals of keys from a pool small enough to collide
 * and to grow the table several times, each checked against a plain list. */
Test(reqtable, agrees_with_a_plain_list_over_random_work)
{
    loggp_table t = LOGGP_TABLE_INIT(0);
    static int kind[POOL];
    static uint64_t value[POOL], key[POOL];
    uint64_t x = 12345;
    for (int i = 0; i < POOL; i++)
        key[i] = (uint64_t)i * 4096 + 17; /* request handles are aligned addresses */
    long live = 0;
    for (int step = 0; step < 200000; step++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        int i = (int)((x >> 33) % POOL), op = (int)((x >> 20) % 4);
        loggp_req_info info = {0};
        if (op < 2) {
            live += !kind[i];
            kind[i] = LOGGP_REQ_RECV;
            value[i] = x >> 40;
            loggp_table_put(&t, key[i], kind[i], value[i]);
        } else if (op == 2) {
            int found = loggp_table_take(&t, key[i], &info);
            cr_assert_eq(found, kind[i] != 0, "step %d: take of key %d found %d", step, i, found);
            if (found)
                cr_assert_eq(info.bytes, value[i], "step %d: key %d's value", step, i);
            live -= found;
            kind[i] = 0;
        } else {
            loggp_table_remove(&t, key[i]);
            live -= kind[i] != 0;
            kind[i] = 0;
        }
        cr_assert_eq(atomic_load(&t.size), live, "step %d: size", step);
    }
    for (int i = 0; i < POOL; i++) {
        loggp_req_info info;
        cr_assert_eq(loggp_table_peek(&t, key[i], &info), kind[i] != 0, "key %d at the end", i);
    }
}

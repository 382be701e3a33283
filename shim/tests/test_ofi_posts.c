/* The receive-post table (src/ofi/posts.c): which post each outstanding
 * receive was, and whether it came before the CQ's last drained read. */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "posts.h"

static void put(post_slot *s, uint64_t context, uint64_t seq, uint64_t posted_ns)
{
    post_put(s, &(post_slot){.context = context, .seq = seq, .posted_ns = posted_ns});
}

static int take(post_slot *s, uint64_t context, uint64_t *seq, uint64_t *posted_ns)
{
    post_slot p;
    if (!post_take(s, context, &p))
        return 0;
    *seq = p.seq;
    *posted_ns = p.posted_ns;
    return 1;
}

static post_slot *fresh(void)
{
    post_slot *s = calloc(POST_SLOTS, sizeof *s);
    cr_assert_not_null(s);
    return s;
}

Test(posts, a_receive_is_found_once_with_its_post_number)
{
    post_slot *s = fresh();
    put(s, 0x7f0000001000, 41, 0);
    put(s, 0x7f0000001080, 42, 0);
    uint64_t seq = 0, at = 0;
    cr_assert(take(s, 0x7f0000001080, &seq, &at));
    cr_assert_eq(seq, 42);
    cr_assert(take(s, 0x7f0000001000, &seq, &at));
    cr_assert_eq(seq, 41);
    cr_assert(!take(s, 0x7f0000001000, &seq, &at), "taken already");
    free(s);
}

Test(posts, a_large_receive_keeps_its_post_time)
{
    post_slot *s = fresh();
    put(s, 0x9000, 5, 123456);
    uint64_t seq = 0, at = 0;
    cr_assert(take(s, 0x9000, &seq, &at));
    cr_assert_eq(seq, 5);
    cr_assert_eq(at, 123456);
    free(s);
}

Test(posts, a_context_posted_again_takes_its_new_number)
{
    post_slot *s = fresh();
    put(s, 0x5000, 3, 0); /* never taken (no stamp came) */
    put(s, 0x5000, 9, 0);
    uint64_t seq = 0, at = 0;
    cr_assert(take(s, 0x5000, &seq, &at));
    cr_assert_eq(seq, 9);
    cr_assert(!take(s, 0x5000, &seq, &at), "one entry per context");
    free(s);
}

Test(posts, many_in_flight_are_all_found)
{
    /* MPICH requests: one pool, a fixed stride */
    post_slot *s = fresh();
    enum { N = 512 };
    for (uint64_t i = 0; i < N; i++)
        put(s, 0x7f1234560000 + i * 0x140, 1000 + i, 0);
    int found = 0;
    for (uint64_t i = 0; i < N; i++) {
        uint64_t seq, at;
        if (take(s, 0x7f1234560000 + i * 0x140, &seq, &at) && seq == 1000 + i)
            found++;
    }
    cr_assert_geq(found, N - 8, "found %d of %d", found, N);
    free(s);
}

Test(posts, a_full_neighbourhood_forgets_one_and_never_mixes_them_up)
{
    post_slot *s = fresh();
    /* more receives in flight than slots: some are forgotten, none is confused */
    for (unsigned i = 0; i < 3 * POST_SLOTS; i++)
        put(s, 0x10000 + 16 * (uint64_t)i, i, 0);
    int held = 0;
    for (unsigned i = 0; i < POST_SLOTS; i++)
        held += s[i].context != 0;
    int wrong = 0, found = 0;
    for (unsigned i = 0; i < 3 * POST_SLOTS; i++) {
        uint64_t seq, at;
        if (take(s, 0x10000 + 16 * (uint64_t)i, &seq, &at)) {
            found++;
            wrong += seq != i;
        }
    }
    cr_assert_eq(wrong, 0);
    /* every entry the table holds is found, wherever in its probes it sits */
    cr_assert_eq(found, held, "found %d of the %d held", found, held);
    cr_assert_leq(found, POST_SLOTS);
    cr_assert_geq(found, POST_SLOTS / 2);
    free(s);
}

Test(posted_before_drain, compares_post_numbers_and_counts_unknown_as_early)
{
    cr_assert(posted_before_drain(1, 4, 5), "posted 5th, the drained read began after 5 posts");
    cr_assert(!posted_before_drain(1, 5, 5), "posted after the drained read began");
    cr_assert(!posted_before_drain(1, 9, 5));
    cr_assert(posted_before_drain(0, 9, 5), "unknown: posted long ago");
}

Test(posts, a_send_keeps_its_flight_and_per_byte_time)
{
    post_slot *s = fresh();
    post_put(s, &(post_slot){.context = 0x7000, .L_ns = 10000, .posted_ns = 555, .bytes_ns = 983});
    post_slot p = {0};
    cr_assert(post_take(s, 0x7000, &p));
    cr_assert_eq(p.L_ns, 10000);
    cr_assert_eq(p.posted_ns, 555);
    cr_assert_eq(p.bytes_ns, 983);
    cr_assert(!post_take(s, 0x7000, &p), "taken already");
    free(s);
}

Test(post_table, is_made_at_its_first_use_and_kept)
{
    _Atomic(post_slot *) table = NULL;
    post_slot *first = post_table(&table);
    cr_assert_not_null(first);
    cr_assert_eq(post_table(&table), first);
    cr_assert_eq(atomic_load(&table), first);
    free(first);
}

/* Receive post times: when each tagged receive was posted, by its context. A
 * receive seen after the CQ was found drained since its post arrived after
 * that read (due.h, receive_arrival). */
#include "layer.h"
#include "reqtable.h"

static loggp_table receive_posts = LOGGP_TABLE_INIT(0);

void note_receive_post_at(void *context)
{
    loggp_delays d;
    loggp_live_get(&d);
    if (d.L || d.G_ps) /* only a hold needs it */
        loggp_table_put(&receive_posts, (uint64_t)(uintptr_t)context, 1, clock_ns());
}

uint64_t take_receive_post_time(void *context)
{
    loggp_req_info posted;
    if (loggp_table_empty(&receive_posts) || !loggp_table_take(&receive_posts, (uint64_t)(uintptr_t)context, &posted))
        return 0;
    return posted.bytes;
}

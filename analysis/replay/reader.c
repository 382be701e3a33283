/* Reading a rank's trace in chunks: a window of records that slides as the replay moves
 * on, so memory follows what is still needed, not the trace's length. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "replay_internal.h"

int rec_load(sim *s, int32_t r, int64_t i)
{
    reader *rd = &s->ranks[r].rd;
    {
        int64_t drop = rd->keep - rd->base;
        if (drop > rd->len)
            drop = rd->len;
        if (drop > 0) {
            memmove(rd->win, rd->win + drop, (size_t)(rd->len - drop) * sizeof *rd->win);
            rd->base += drop;
            rd->len -= drop;
        }
        if (rd->base + rd->len < rd->keep) { /* nothing held is needed: jump */
            rd->base = rd->keep;
            rd->len = 0;
        }
        while (i >= rd->base + rd->len) {
            int64_t want = rd->n - (rd->base + rd->len);
            if (rd->len == rd->cap) { /* full of records still needed (a long look-ahead): one chunk more */
                lr_rec *win = realloc(rd->win, (size_t)(rd->cap + rd->chunk) * sizeof *win);
                if (!win) {
                    fail(s, ERR_MEMORY, r, i);
                    return -1;
                }
                rd->win = win;
                rd->cap += rd->chunk;
            }
            if (want > rd->cap - rd->len)
                want = rd->cap - rd->len;
            if (rd->cap > rd->peak)
                rd->peak = rd->cap;
            int64_t first = rd->base + rd->len;
            size_t bytes = (size_t)want * sizeof(lr_rec), got = 0;
            char *to = (char *)(rd->win + rd->len);
            int fd = open(rd->path, O_RDONLY | O_CLOEXEC);
            if (fd < 0) {
                fail(s, ERR_IO, r, -1);
                s->err.value = (uint64_t)errno;
                return -1;
            }
            while (got < bytes) {
                ssize_t n = pread(fd, to + got, bytes - got,
                                  (off_t)(rd->records_offset + (uint64_t)first * sizeof(lr_rec) + got));
                if (n < 0 && errno == EINTR)
                    continue;
                if (n < 0) {
                    fail(s, ERR_IO, r, first);
                    s->err.value = (uint64_t)errno;
                    close(fd);
                    return -1;
                }
                if (n == 0) {
                    fail(s, ERR_TRUNCATED, r, first + (int64_t)(got / sizeof(lr_rec)));
                    close(fd);
                    return -1;
                }
                got += (size_t)n;
            }
            close(fd);
            rd->reads++;
            int32_t ncalls = s->cls_start[r + 1] - s->cls_start[r];
            for (int64_t k = 0; k < want; k++) {
                const lr_rec *x = &rd->win[rd->len + k];
                if (x->call >= ncalls || x->kind > 1 || x->end_ns < x->start_ns) {
                    fail(s, ERR_CORRUPT, r, first + k);
                    s->err.value = x->call;
                    s->err.value2 = x->kind;
                    s->err.start = x->start_ns;
                    s->err.end = x->end_ns;
                    return -1;
                }
            }
            rd->len += want;
        }
    }
    return 0;
}

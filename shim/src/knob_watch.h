/* Waiting for the knob file to change without waking a CPU the ranks spin
 * on: inotify on the deepest existing folder of the file's path, and a slow
 * poll for changes inotify cannot see (a network file system changed from
 * another host). */
#ifndef LOGGP_KNOB_WATCH_H
#define LOGGP_KNOB_WATCH_H

#include <stdatomic.h>

typedef struct {
    int inotify_fd; /* -1: inotify unavailable, waits are plain sleeps */
    int stop_fd;    /* eventfd: knob_watch_stop wakes a wait at once (-1: none could be made) */
    _Atomic int stopped; /* set by knob_watch_stop: read by waits without an eventfd */
    int watch;      /* the watch on the folder now watched, or -1 */
    int depth;      /* how many path components that folder lacks; 0: the file's own folder */
} knob_watch;

enum { KNOB_WATCH_CHANGED, KNOB_WATCH_TIMEOUT, KNOB_WATCH_STOPPED };

/* Opens the watch for path (a file that need not exist, nor its folder).
 * Never fails: without inotify, waits only time out. */
void knob_watch_open(knob_watch *w, const char *path);
/* Waits up to timeout_ms for something in the watched folder to change, or
 * for a stop. CHANGED may be a change to another file: the caller compares. */
int knob_watch_wait(knob_watch *w, const char *path, int timeout_ms);
/* From another thread: makes the current and every later wait return STOPPED. */
void knob_watch_stop(knob_watch *w);
void knob_watch_close(knob_watch *w);

#endif

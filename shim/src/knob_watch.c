#include "knob_watch.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <unistd.h>

/* What changes a folder's entry for the file: written in place, replaced by
 * rename (loggp-knobs writes a temporary file and renames it), created,
 * removed; for an ancestor, the next folder down appearing. */
/* Without an eventfd, how often a wait looks for a stop. */
#define STOP_SLICE_MS 20

#define FOLDER_EVENTS                                                                                       \
    (IN_CLOSE_WRITE | IN_MODIFY | IN_ATTRIB | IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO |         \
     IN_DELETE_SELF | IN_MOVE_SELF)

/* Watches the deepest folder of path that exists (the file's own, when it
 * does). The old watch goes only once the new one stands, and only if it
 * differs: its removal queues an event, which drain then ignores. */
static void arm(knob_watch *w, const char *path)
{
    if (w->inotify_fd < 0)
        return;
    char folder[PATH_MAX];
    size_t len = strlen(path);
    if (len >= sizeof folder)
        return;
    memcpy(folder, path, len + 1);
    int watch = -1;
    for (int depth = 0;; depth++) {
        char *slash = strrchr(folder, '/');
        if (!slash)
            break; /* a relative name with no folder left: the slow poll covers it */
        if (slash == folder)
            slash[1] = '\0'; /* the root itself */
        else
            *slash = '\0';
        watch = inotify_add_watch(w->inotify_fd, folder, FOLDER_EVENTS | IN_ONLYDIR);
        w->depth = depth;
        if (watch >= 0 || slash == folder || (errno != ENOENT && errno != ENOTDIR))
            break;
    }
    if (w->watch >= 0 && w->watch != watch)
        inotify_rm_watch(w->inotify_fd, w->watch);
    w->watch = watch;
}
void knob_watch_open(knob_watch *w, const char *path)
{
    w->inotify_fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
    w->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    atomic_store(&w->stopped, 0);
    w->watch = -1;
    w->depth = 0;
    arm(w, path);
}

/* Reads every queued event. Returns 1 if one may concern the file, and sets
 * *rearm if the watched folder went away or, watching an ancestor, an entry
 * appeared there (perhaps the next folder down). */
static int drain(knob_watch *w, int *rearm)
{
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    int relevant = 0;
    ssize_t n;
    while ((n = read(w->inotify_fd, buf, sizeof buf)) > 0) {
        for (char *p = buf; p < buf + n;) {
            const struct inotify_event *ev = (const struct inotify_event *)p;
            p += sizeof *ev + ev->len;
            if (ev->wd != w->watch)
                continue; /* a watch given up already */
            relevant = 1;
            if (ev->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT) ||
                (w->depth > 0 && ev->mask & (IN_CREATE | IN_MOVED_TO)))
                *rearm = 1;
        }
    }
    return relevant;
}

int knob_watch_wait(knob_watch *w, const char *path, int timeout_ms)
{
    struct pollfd fds[2] = {{.fd = w->stop_fd, .events = POLLIN}, {.fd = w->inotify_fd, .events = POLLIN}};
    int nfds = w->inotify_fd >= 0 ? 2 : 1;
    if (atomic_load(&w->stopped))
        return KNOB_WATCH_STOPPED;
    if (w->stop_fd < 0) {
        /* no eventfd (descriptors ran out): sleep in slices, so a stop is seen within one and
         * MPI_Finalize, which joins this thread, never waits for ever */
        for (int slept = 0; slept < timeout_ms; slept += STOP_SLICE_MS) {
            usleep(STOP_SLICE_MS * 1000u);
            if (atomic_load(&w->stopped))
                return KNOB_WATCH_STOPPED;
        }
        return KNOB_WATCH_TIMEOUT;
    }
    int rc;
    do
        rc = poll(fds, (nfds_t)nfds, timeout_ms);
    while (rc < 0 && errno == EINTR);
    if (fds[0].revents & POLLIN)
        return KNOB_WATCH_STOPPED;
    if (rc <= 0)
        return KNOB_WATCH_TIMEOUT;
    int rearm = 0;
    if (nfds == 2 && (fds[1].revents & POLLIN) && drain(w, &rearm)) {
        if (rearm)
            arm(w, path);
        return KNOB_WATCH_CHANGED;
    }
    return KNOB_WATCH_TIMEOUT;
}

void knob_watch_stop(knob_watch *w)
{
    atomic_store(&w->stopped, 1);
    if (w->stop_fd >= 0) {
        uint64_t one = 1;
        ssize_t n = write(w->stop_fd, &one, sizeof one);
        (void)n;
    }
}

void knob_watch_close(knob_watch *w)
{
    if (w->inotify_fd >= 0)
        close(w->inotify_fd);
    if (w->stop_fd >= 0)
        close(w->stop_fd);
    w->inotify_fd = w->stop_fd = w->watch = -1;
}

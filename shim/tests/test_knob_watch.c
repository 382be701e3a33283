/* The knob watcher's waits: a change to the file, its folder appearing
 * later, a stop, and quiet (a timeout, no wake-up). */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "knob_watch.h"

static char root[] = "/tmp/loggp-knob-watch-XXXXXX";
static char path[512];

static void make_root(void)
{
    cr_assert_not_null(mkdtemp(root));
}

static void remove_tree(void)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    cr_assert_eq(system(cmd), 0);
}

TestSuite(knob_watch, .init = make_root, .fini = remove_tree);

static void write_file(const char *p)
{
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", p);
    FILE *f = fopen(tmp, "w");
    cr_assert_not_null(f);
    fputs("o_s = 1us\n", f);
    fclose(f);
    cr_assert_eq(rename(tmp, p), 0); /* as loggp-knobs writes it */
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

Test(knob_watch, quiet_folder_times_out_without_waking)
{
    snprintf(path, sizeof path, "%s/knobs", root);
    knob_watch w;
    knob_watch_open(&w, path);
    cr_assert_geq(w.inotify_fd, 0);
    double start = now_s();
    cr_assert_eq(knob_watch_wait(&w, path, 200), KNOB_WATCH_TIMEOUT);
    cr_assert_geq(now_s() - start, 0.19);
    knob_watch_close(&w);
}

Test(knob_watch, a_replaced_file_wakes_the_wait)
{
    snprintf(path, sizeof path, "%s/knobs", root);
    knob_watch w;
    knob_watch_open(&w, path);
    write_file(path);
    cr_assert_eq(knob_watch_wait(&w, path, 5000), KNOB_WATCH_CHANGED);
    /* the events are consumed: the next wait is quiet again */
    cr_assert_eq(knob_watch_wait(&w, path, 100), KNOB_WATCH_TIMEOUT);
    knob_watch_close(&w);
}

Test(knob_watch, folders_made_later_are_followed_down_to_the_file)
{
    char a[512], b[512];
    snprintf(a, sizeof a, "%s/a", root);
    snprintf(b, sizeof b, "%s/a/b", root);
    snprintf(path, sizeof path, "%s/a/b/knobs", root);
    knob_watch w;
    knob_watch_open(&w, path);
    cr_assert_eq(w.depth, 2);
    cr_assert_eq(mkdir(a, 0700), 0);
    cr_assert_eq(knob_watch_wait(&w, path, 5000), KNOB_WATCH_CHANGED);
    cr_assert_eq(w.depth, 1);
    cr_assert_eq(mkdir(b, 0700), 0);
    cr_assert_eq(knob_watch_wait(&w, path, 5000), KNOB_WATCH_CHANGED);
    cr_assert_eq(w.depth, 0);
    write_file(path);
    cr_assert_eq(knob_watch_wait(&w, path, 5000), KNOB_WATCH_CHANGED);
    knob_watch_close(&w);
}

static void *stop_later(void *arg)
{
    usleep(50000);
    knob_watch_stop(arg);
    return NULL;
}

/* A stop from another thread 50 ms on ends a wait of 10 s well before its end. */
static void stopped_from_another_thread(knob_watch *w)
{
    pthread_t t;
    cr_assert_eq(pthread_create(&t, NULL, stop_later, w), 0);
    double start = now_s();
    cr_assert_eq(knob_watch_wait(w, path, 10000), KNOB_WATCH_STOPPED);
    cr_assert_lt(now_s() - start, 5.0);
    pthread_join(t, NULL);
}

Test(knob_watch, a_stop_ends_the_wait_at_once)
{
    snprintf(path, sizeof path, "%s/knobs", root);
    knob_watch w;
    knob_watch_open(&w, path);
    stopped_from_another_thread(&w);
    knob_watch_close(&w);
}

/* Descriptors ran out at the open (no eventfd): a stop must still end the wait, since
 * MPI_Finalize joins the watcher thread. */
Test(knob_watch, a_stop_ends_the_wait_without_an_eventfd)
{
    snprintf(path, sizeof path, "%s/knobs", root);
    knob_watch w;
    knob_watch_open(&w, path);
    close(w.stop_fd);
    w.stop_fd = -1;
    stopped_from_another_thread(&w);
    /* and every later wait */
    cr_assert_eq(knob_watch_wait(&w, path, 10000), KNOB_WATCH_STOPPED);
    knob_watch_close(&w);
}

#include "live.h"

#include "jitter.h"
#include "knob_watch.h"
#include "region.h"
#include "runenv.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The watcher sleeps on inotify (knob_watch.h); this slow poll only catches
 * what inotify cannot see, such as a network file system changed elsewhere. */
#define WATCH_POLL_MS 1000

_Atomic int loggp_live_any;
static void (*_Atomic on_change)(void);

/* Seqlock: odd while the watcher writes; readers retry on a change. It
 * guards the knobs in ps and the same knobs as the message path uses them. */
_Atomic unsigned loggp_live_seq;
static _Atomic int64_t current_ps[LOGGP_KNOB_COUNT];
_Atomic uint64_t loggp_live_ns[4];
_Atomic int64_t loggp_live_G_ps_per_byte;
_Atomic int loggp_live_topo;
_Atomic int loggp_live_stamp_only;
static int topology_values, topology_G;

static uint64_t ps_to_ns(int64_t ps);

static unsigned env_mask;
static loggp_knobs env_values;
static char knob_file[PATH_MAX];
static pthread_t watcher;
static _Atomic int watcher_running;
static knob_watch watcher_events;

static pthread_mutex_t publish_lock = PTHREAD_MUTEX_INITIALIZER; /* one writer of the seqlock */
static loggp_knobs wanted;
static _Atomic int scope_kernel; /* the knobs' scope: the file's, or LOGGP_SCOPE's */
static int env_scope = -1;       /* LOGGP_SCOPE, or -1 */
static int outside_armed;        /* LOGGP_OUTSIDE=armed */
static int suspended;            /* the layer's own messages fly: zero in force (live.h) */

static void publish_in_force(const loggp_knobs *knobs, int topo);

/* Under publish_lock: publishes what the knobs, the region and the topology
 * call for now; nothing at all while the layer's own messages fly. */
static void publish_wanted(void)
{
    if (suspended) {
        static const loggp_knobs none = {0};
        atomic_store(&loggp_jitter_held, 1);
        publish_in_force(&none, 0);
        return;
    }
    int off = scope_kernel && atomic_load(&loggp_region) != LOGGP_REGION_KERNEL;
    atomic_store(&loggp_jitter_held, off && outside_armed);
    if (!off) {
        publish_in_force(&wanted, topology_values);
    } else {
        /* outside the kernel: nothing, or each knob set at its smallest step; a
         * topology's per-pair L or G counts as that knob set */
        loggp_knobs set = wanted, outside = {0};
        if (topology_values && !set.ps[LOGGP_KNOB_LATENCY])
            set.ps[LOGGP_KNOB_LATENCY] = 1;
        if (topology_G && !set.ps[LOGGP_KNOB_GAP_PER_BYTE])
            set.ps[LOGGP_KNOB_GAP_PER_BYTE] = 1;
        if (outside_armed)
            loggp_knobs_armed(&set, &outside);
        publish_in_force(&outside, 0);
    }
}

void loggp_live_publish(const loggp_knobs *knobs)
{
    pthread_mutex_lock(&publish_lock);
    wanted = *knobs;
    atomic_store(&scope_kernel, knobs->scope == LOGGP_SCOPE_KERNEL);
    publish_wanted();
    pthread_mutex_unlock(&publish_lock);
}

void loggp_live_suspend(void)
{
    pthread_mutex_lock(&publish_lock);
    suspended = 1;
    publish_wanted();
    pthread_mutex_unlock(&publish_lock);
}

void loggp_live_resume(void)
{
    pthread_mutex_lock(&publish_lock);
    suspended = 0;
    publish_wanted();
    pthread_mutex_unlock(&publish_lock);
}

void loggp_live_set_topology(int has_values, int has_G)
{
    pthread_mutex_lock(&publish_lock);
    topology_values = has_values;
    topology_G = has_G;
    publish_wanted();
    pthread_mutex_unlock(&publish_lock);
}

void loggp_live_region_changed(void)
{
    if (!scope_kernel)
        return;
    pthread_mutex_lock(&publish_lock);
    publish_wanted();
    pthread_mutex_unlock(&publish_lock);
}

int loggp_live_scoped_to_kernel(void)
{
    return scope_kernel;
}

int loggp_live_outside_armed(void)
{
    return outside_armed;
}

void loggp_live_wanted(loggp_knobs *out)
{
    pthread_mutex_lock(&publish_lock);
    *out = wanted;
    pthread_mutex_unlock(&publish_lock);
}

static void publish_in_force(const loggp_knobs *knobs, int topo)
{
    unsigned s = atomic_load_explicit(&loggp_live_seq, memory_order_relaxed);
    atomic_store_explicit(&loggp_live_seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    int any = 0;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++) {
        atomic_store_explicit(&current_ps[i], knobs->ps[i], memory_order_relaxed);
        any |= knobs->ps[i] != 0;
    }
    atomic_store_explicit(&loggp_live_ns[0], ps_to_ns(knobs->ps[LOGGP_KNOB_O_S]), memory_order_relaxed);
    atomic_store_explicit(&loggp_live_ns[1], ps_to_ns(knobs->ps[LOGGP_KNOB_O_R]), memory_order_relaxed);
    atomic_store_explicit(&loggp_live_ns[2], ps_to_ns(knobs->ps[LOGGP_KNOB_GAP]), memory_order_relaxed);
    atomic_store_explicit(&loggp_live_ns[3], ps_to_ns(knobs->ps[LOGGP_KNOB_LATENCY]), memory_order_relaxed);
    atomic_store_explicit(&loggp_live_G_ps_per_byte, knobs->ps[LOGGP_KNOB_GAP_PER_BYTE], memory_order_relaxed);
    atomic_store_explicit(&loggp_live_topo, topo, memory_order_relaxed);
    any |= topo;
    const int64_t *ps = knobs->ps;
    atomic_store_explicit(&loggp_live_stamp_only,
                          !ps[LOGGP_KNOB_O_S] && !ps[LOGGP_KNOB_GAP] && !ps[LOGGP_KNOB_GAP_PER_BYTE] &&
                              !(topo && topology_G) && (ps[LOGGP_KNOB_LATENCY] || topo),
                          memory_order_relaxed);
    atomic_store_explicit(&loggp_live_seq, s + 2, memory_order_release);
    int was = atomic_exchange(&loggp_live_any, any);
    void (*fn)(void) = atomic_load(&on_change);
    if (was != any && fn)
        fn();
}

void loggp_live_on_change(void (*fn)(void))
{
    atomic_store(&on_change, fn);
}

void loggp_live_knobs(loggp_knobs *out)
{
    unsigned s1, s2;
    do {
        s1 = atomic_load_explicit(&loggp_live_seq, memory_order_acquire);
        for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
            out->ps[i] = atomic_load_explicit(&current_ps[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        s2 = atomic_load_explicit(&loggp_live_seq, memory_order_relaxed);
    } while ((s1 & 1) || s1 != s2);
}

static uint64_t ps_to_ns(int64_t ps)
{
    return (uint64_t)((ps + 500) / 1000);
}


unsigned loggp_live_env_mask(void)
{
    return env_mask;
}

const char *loggp_live_file(void)
{
    return knob_file;
}

int loggp_live_watching(void)
{
    return atomic_load(&watcher_running);
}

typedef struct {
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
    int exists;
} file_id;

static file_id identify(const char *path)
{
    file_id id = {0};
    struct stat st;
    if (lstat(path, &st) == 0) {
        id.dev = st.st_dev;
        id.ino = st.st_ino;
        id.size = st.st_size;
        id.mtime = st.st_mtim;
        id.exists = 1;
    }
    return id;
}

static int same_file(const file_id *a, const file_id *b)
{
    return a->exists == b->exists && a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
           a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* File values with the environment's on top. */
static int load_effective(loggp_knobs *out, char *err, size_t errlen)
{
    int exists;
    if (loggp_knobs_load(knob_file, out, &exists, err, errlen) != 0)
        return -1;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (env_mask & (1u << i))
            out->ps[i] = env_values.ps[i];
    if (env_scope >= 0)
        out->scope = env_scope;
    return 0;
}

static void *watch(void *arg)
{
    (void)arg;
    file_id last = identify(knob_file);
    int warned = 0;
    while (knob_watch_wait(&watcher_events, knob_file, WATCH_POLL_MS) != KNOB_WATCH_STOPPED) {
        file_id now = identify(knob_file);
        if (same_file(&now, &last))
            continue;
        last = now;
        loggp_knobs k;
        char err[768];
        if (load_effective(&k, err, sizeof err) != 0) {
            /* Keep running with the knobs last read; say so once per bad version. */
            if (!warned)
                fprintf(stderr, "loggp: ignoring a changed knob file, keeping the previous knobs: %s\n", err);
            warned = 1;
            continue;
        }
        warned = 0;
        loggp_live_publish(&k);
    }
    return NULL;
}

int loggp_live_start(char *err, size_t errlen)
{
    int scope;
    int scope_set = loggp_scope_from_env(&scope, err, errlen);
    if (scope_set < 0)
        return -1;
    env_scope = scope_set ? scope : -1;
    int outside;
    if (loggp_env_outside(&outside, err, errlen) != 0)
        return -1;
    outside_armed = outside == LOGGP_OUTSIDE_ARMED;
    memset(&env_values, 0, sizeof env_values);
    if (loggp_knobs_apply_env(&env_values, &env_mask, err, errlen) != 0)
        return -1;
    env_values.scope = scope_set ? scope : LOGGP_SCOPE_ALL;
    if (loggp_knob_file_path(knob_file, sizeof knob_file, err, errlen) != 0) {
        /* No place for a file: only the environment can give knobs. */
        knob_file[0] = '\0';
        loggp_live_publish(&env_values);
        return 0;
    }
    loggp_knobs k;
    if (load_effective(&k, err, errlen) != 0)
        return -1;
    loggp_live_publish(&k);

    int live = 1;
    if (loggp_env_switch("LOGGP_LIVE", &live, err, errlen) < 0)
        return -1;
    int all_from_env = env_mask == (1u << LOGGP_KNOB_COUNT) - 1 && env_scope >= 0;
    if (!live || all_from_env)
        return 0;
    knob_watch_open(&watcher_events, knob_file);
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    if (pthread_create(&watcher, &attr, watch, NULL) == 0) {
        atomic_store(&watcher_running, 1);
    } else {
        knob_watch_close(&watcher_events);
        fprintf(stderr, "loggp: cannot start the knob watcher; knobs stay as loaded at start\n");
    }
    pthread_attr_destroy(&attr);
    return 0;
}

void loggp_live_stop(void)
{
    if (!atomic_load(&watcher_running))
        return;
    knob_watch_stop(&watcher_events);
    pthread_join(watcher, NULL);
    knob_watch_close(&watcher_events);
    atomic_store(&watcher_running, 0);
}

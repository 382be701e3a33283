/* The run's environment beyond the knobs (runenv.h). */
#define _GNU_SOURCE
#include "runenv.h"
#include "knobs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "topology.h"

int loggp_env_switch(const char *name, int *on, char *err, size_t errlen)
{
    const char *value = getenv(name);
    if (!value || !*value) /* empty is unset, as for every other LOGGP_* variable */
        return 0;
    if (strcmp(value, "0") != 0 && strcmp(value, "1") != 0) {
        loggp_set_err(err, errlen, "%s=%s: expected 0 or 1", name, value);
        return -1;
    }
    *on = value[0] == '1';
    return 1;
}

int loggp_env_engine(int *engine, char *err, size_t errlen)
{
    static const char *const names[] = {"auto", "libfabric", "pmpi"};
    const char *value = getenv("LOGGP_ENGINE");
    if (!value || !*value) {
        *engine = LOGGP_ENGINE_AUTO;
        return 0;
    }
    for (int e = 0; e < 3; e++)
        if (strcmp(value, names[e]) == 0) {
            *engine = e;
            return 0;
        }
    loggp_set_err(err, errlen, "LOGGP_ENGINE=%s: expected auto, libfabric or pmpi", value);
    return -1;
}

const char *const loggp_outside_names[2] = {"zero", "armed"};

int loggp_env_outside(int *outside, char *err, size_t errlen)
{
    const char *value = getenv("LOGGP_OUTSIDE");
    *outside = LOGGP_OUTSIDE_ZERO;
    if (!value || !*value)
        return 0;
    for (int i = 0; i < 2; i++)
        if (strcmp(value, loggp_outside_names[i]) == 0) {
            *outside = i;
            return 0;
        }
    loggp_set_err(err, errlen, "LOGGP_OUTSIDE=%s: expected zero or armed", value);
    return -1;
}

void loggp_knobs_armed(const loggp_knobs *set, loggp_knobs *armed)
{
    loggp_knobs out = {0};
    out.scope = set->scope;
    for (int i = 0; i < LOGGP_KNOB_COUNT; i++)
        if (set->ps[i])
            out.ps[i] = loggp_knob_table[i].per_byte ? LOGGP_ARMED_STEP_PS_PER_BYTE : LOGGP_ARMED_STEP_PS;
    *armed = out;
}

int loggp_parse_seed(const char *text, uint64_t *seed, char *err, size_t errlen)
{
    /* strtoull takes blanks, a sign and saturates: only digits, and ERANGE refused */
    if (!text || *text < '0' || *text > '9') {
        loggp_set_err(err, errlen, "expected a whole number >= 0");
        return -1;
    }
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*end) {
        loggp_set_err(err, errlen, "expected a whole number >= 0");
        return -1;
    }
    if (errno == ERANGE) {
        loggp_set_err(err, errlen, "over the largest seed, %llu (2^64 - 1)", (unsigned long long)UINT64_MAX);
        return -1;
    }
    *seed = (uint64_t)v;
    return 0;
}

int loggp_env_seed(uint64_t *seed, char *err, size_t errlen)
{
    const char *value = getenv("LOGGP_SEED");
    *seed = 0;
    if (!value || !*value)
        return 0;
    char why[128];
    if (loggp_parse_seed(value, seed, why, sizeof why) != 0) {
        loggp_set_err(err, errlen, "LOGGP_SEED=%s: %s", value, why);
        return -1;
    }
    return 0;
}

int loggp_env_jitter(const char *name, jitter_spec *spec, char *err, size_t errlen)
{
    const char *value = getenv(name);
    char why[384];
    if (loggp_jitter_parse(value, spec, why, sizeof why) != 0) {
        loggp_set_err(err, errlen, "%s=%s: %s", name, value, why);
        return -1;
    }
    return 0;
}

int loggp_make_folder(const char *dir)
{
    char path[PATH_MAX];
    if (!*dir) {
        errno = EINVAL;
        return -1;
    }
    if (strlen(dir) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(path, dir);
    for (char *p = path + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(path, 0755) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    return mkdir(path, 0755) != 0 && errno != EEXIST ? -1 : 0;
}

/* path without its last component ("a/b" -> "a", "b" -> ".", "/b" -> "/"). */
static void parent_of(char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        path[--n] = '\0';
    char *slash = strrchr(path, '/');
    if (!slash)
        strcpy(path, ".");
    else if (slash == path)
        path[1] = '\0';
    else
        *slash = '\0';
}

int loggp_env_output_folder(const char *name, char *err, size_t errlen)
{
    const char *dir = getenv(name);
    if (!dir || !*dir)
        return 0;
    char path[PATH_MAX];
    if (strlen(dir) >= sizeof path) {
        loggp_set_err(err, errlen, "%s=%.80s...: path too long", name, dir);
        return -1;
    }
    strcpy(path, dir);
    struct stat st;
    /* the folder, or the nearest part of its path that exists: a rank makes the rest */
    while (stat(path, &st) != 0) {
        int top = strcmp(path, ".") == 0 || strcmp(path, "/") == 0;
        if ((errno != ENOENT && errno != ENOTDIR) || top) {
            loggp_set_err(err, errlen, "%s=%s: cannot reach %s: %s", name, dir, path, strerror(errno));
            return -1;
        }
        parent_of(path);
    }
    int itself = strcmp(path, dir) == 0;
    if (!S_ISDIR(st.st_mode)) {
        loggp_set_err(err, errlen, "%s=%s: %s%s is not a folder", name, dir, itself ? "it" : path,
                      itself ? "" : ", on its path,");
        return -1;
    }
    /* a file made and removed tells; access() says yes to root even on /proc */
    char probe[PATH_MAX + 32];
    snprintf(probe, sizeof probe, "%s/.loggp-check-XXXXXX", path);
    int fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0) {
        loggp_set_err(err, errlen, "%s=%s: cannot write into %s: %s", name, dir, itself ? "it" : path,
                      strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}

int loggp_run_env_check(loggp_run_env *out, int folders, char *err, size_t errlen)
{
    static const char *const switches[] = {"LOGGP_LIVE", "LOGGP_ROUTE", "LOGGP_QUIET"};
    loggp_run_env env = {0};
    int on;
    for (size_t i = 0; i < sizeof switches / sizeof switches[0]; i++)
        if (loggp_env_switch(switches[i], &on, err, errlen) < 0)
            return -1;
    if (loggp_env_engine(&env.engine, err, errlen) != 0 ||
        loggp_env_jitter("LOGGP_L_JITTER", &env.L_jitter, err, errlen) != 0 ||
        loggp_env_jitter("LOGGP_O_JITTER", &env.o_jitter, err, errlen) != 0 ||
        loggp_env_seed(&env.seed, err, errlen) != 0 || loggp_env_outside(&env.outside, err, errlen) != 0)
        return -1;
    loggp_topology t;
    int rc = loggp_topology_from_env(&t, &env.topology, err, errlen);
    for (int c = 1; rc == 0 && c < LOGGP_TOPO_CLASSES; c++)
        if ((t.L_set >> c) & 1 && t.L_ps[c])
            env.topology_L = 1;
    loggp_topology_free(&t);
    if (rc != 0)
        return -1;
    if (folders && (loggp_env_output_folder("LOGGP_PROFILE", err, errlen) != 0 ||
                    loggp_env_output_folder("LOGGP_TRACE", err, errlen) != 0))
        return -1;
    if (out)
        *out = env;
    return 0;
}

/* The per-user knob file: strict text format, safe to read and written
 * atomically. It is read by libloggp.so's watcher thread too, so it only uses
 * calls that are safe there (no stdio buffering shared with the application). */
#define _GNU_SOURCE
#include "knobs.h"
#include "knobs_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define KNOB_FILE_MAX 16384 /* with the NUL: the text is at most 16383 bytes */

int loggp_knob_file_path(char *buf, size_t len, char *err, size_t errlen)
{
    const char *override = getenv("LOGGP_KNOB_FILE");
    int n;
    if (override && *override) {
        n = snprintf(buf, len, "%s", override);
    } else {
        const char *xdg = getenv("XDG_CONFIG_HOME");
        const char *home = getenv("HOME");
        if (xdg && xdg[0] == '/')
            n = snprintf(buf, len, "%s/loggp/knobs", xdg);
        else if (home && *home)
            n = snprintf(buf, len, "%s/.config/loggp/knobs", home);
        else {
            loggp_set_err(err, errlen, "cannot place the knob file: neither LOGGP_KNOB_FILE, XDG_CONFIG_HOME nor HOME is set");
            return -1;
        }
    }
    if (n < 0 || (size_t)n >= len) {
        loggp_set_err(err, errlen, "knob file path too long");
        return -1;
    }
    return 0;
}

size_t loggp_knobs_serialise(const loggp_knobs *knobs, char *buf, size_t len)
{
    size_t used = 0;
    int n = snprintf(buf, len, "# loggp knobs: increments over the machine's own LogGP parameters.\n"
                               "# Written by `loggp-knobs set`; running applications pick changes up live.\n");
    used = n > 0 ? (size_t)n : 0;
    for (int i = 0; i < LOGGP_KNOB_COUNT && used < len; i++) {
        char value[64];
        loggp_format_knob((loggp_knob_id)i, knobs->ps[i], value, sizeof value);
        n = snprintf(buf + used, len - used, "%s = %s\n", loggp_knob_table[i].name, value);
        if (n > 0)
            used += (size_t)n;
    }
    if (knobs->scope == LOGGP_SCOPE_KERNEL && used < len) {
        n = snprintf(buf + used, len - used, "scope = kernel\n");
        if (n > 0)
            used += (size_t)n;
    }
    return used < len ? used : len - 1;
}

int loggp_knobs_parse_item(char *item, int o_alias, loggp_knobs *knobs, unsigned *seen, char *err, size_t errlen)
{
    char *eq = strchr(item, '=');
    if (!eq) {
        loggp_set_err(err, errlen, "'%s' is not name=value", loggp_trim(item));
        return -1;
    }
    *eq = '\0';
    char *key = loggp_trim(item), *value = loggp_trim(eq + 1);
    if (!strcmp(key, "scope")) {
        unsigned bit = 1u << LOGGP_KNOB_COUNT;
        if (*seen & bit) {
            loggp_set_err(err, errlen, "'scope' given twice");
            return -1;
        }
        *seen |= bit;
        return loggp_parse_scope(value, &knobs->scope, err, errlen);
    }
    int both = o_alias && !strcmp(key, "o");
    int id = both ? LOGGP_KNOB_O_S : loggp_knob_by_name(key);
    if (id < 0) {
        loggp_set_err(err, errlen, "unknown knob '%s' (known: %so_s, o_r, g, G, L, scope)", key, o_alias ? "o, " : "");
        return -1;
    }
    unsigned bits = both ? (1u << LOGGP_KNOB_O_S) | (1u << LOGGP_KNOB_O_R) : 1u << id;
    if (*seen & bits) {
        loggp_set_err(err, errlen, "knob '%s' given twice", key);
        return -1;
    }
    char why[256];
    if (loggp_parse_knob((loggp_knob_id)id, value, &knobs->ps[id], why, sizeof why) != 0) {
        loggp_set_err(err, errlen, "%s: %s", key, why);
        return -1;
    }
    if (both)
        knobs->ps[LOGGP_KNOB_O_R] = knobs->ps[LOGGP_KNOB_O_S];
    *seen |= bits;
    return 0;
}

int loggp_knobs_parse_text(const char *text, loggp_knobs *knobs, char *err, size_t errlen)
{
    loggp_knobs parsed = {0};
    unsigned seen = 0;
    size_t textlen = strlen(text);
    if (textlen >= KNOB_FILE_MAX) {
        loggp_set_err(err, errlen, "larger than %d bytes", KNOB_FILE_MAX - 1);
        return -1;
    }
    char copy[KNOB_FILE_MAX];
    memcpy(copy, text, textlen + 1);
    int lineno = 0;
    char *line = copy;
    while (line) {
        char *next = strchr(line, '\n');
        if (next)
            *next++ = '\0';
        lineno++;
        char *hash = strchr(line, '#'); /* a comment, as in topology files */
        if (hash)
            *hash = '\0';
        char *s = loggp_trim(line);
        if (*s != '\0') {
            char why[320], shown[4 * sizeof why];
            if (loggp_knobs_parse_item(s, 0, &parsed, &seen, why, sizeof why) != 0) {
                /* the line may be any bytes: none of them reaches the terminal raw */
                loggp_escape_text(why, shown, sizeof shown);
                loggp_set_err(err, errlen, "line %d: %s", lineno, shown);
                return -1;
            }
        }
        line = next;
    }
    /* A knob the file does not name (a hand-edited file) is zero, as in a file
     * never written. */
    *knobs = parsed;
    return 0;
}

int loggp_knobs_load(const char *path, loggp_knobs *knobs, int *exists, char *err, size_t errlen)
{
    char why[320];
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        if (errno == ENOENT) {
            memset(knobs, 0, sizeof *knobs);
            if (exists)
                *exists = 0;
            return 0;
        }
        if (errno == ELOOP)
            loggp_set_err(err, errlen, "knob file %s is a symbolic link; refusing to follow it", path);
        else
            loggp_set_err(err, errlen, "cannot open knob file %s: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        loggp_set_err(err, errlen, "cannot stat knob file %s: %s", path, strerror(errno));
        close(fd);
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        loggp_set_err(err, errlen, "knob file %s is not a regular file", path);
        close(fd);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        loggp_set_err(err, errlen, "knob file %s is owned by uid %u, not by you (uid %u); refusing it",
                path, (unsigned)st.st_uid, (unsigned)geteuid());
        close(fd);
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        loggp_set_err(err, errlen, "knob file %s is writable by others (mode %03o); refusing it (chmod 600)",
                path, (unsigned)(st.st_mode & 0777));
        close(fd);
        return -1;
    }
    if (st.st_size >= KNOB_FILE_MAX) {
        loggp_set_err(err, errlen, "knob file %s is corrupt: larger than %d bytes", path, KNOB_FILE_MAX - 1);
        close(fd);
        return -1;
    }
    char text[KNOB_FILE_MAX];
    size_t used = 0;
    for (;;) {
        ssize_t n = read(fd, text + used, sizeof text - 1 - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            loggp_set_err(err, errlen, "cannot read knob file %s: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        if (n == 0)
            break;
        used += (size_t)n;
        if (used >= sizeof text - 1)
            break;
    }
    close(fd);
    text[used] = '\0';
    if (memchr(text, '\0', used)) {
        loggp_set_err(err, errlen, "knob file %s is corrupt: it contains NUL bytes", path);
        return -1;
    }
    if (loggp_knobs_parse_text(text, knobs, why, sizeof why) != 0) {
        loggp_set_err(err, errlen, "knob file %s is corrupt: %s", path, why);
        return -1;
    }
    if (exists)
        *exists = 1;
    return 0;
}

/* Splits path into its directory (written to dir). */
static int parent_dir(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return snprintf(dir, len, ".") < (int)len ? 0 : -1;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= len)
        return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

/* Creates dir and missing parents with mode 0700, then checks that dir is a
 * real directory of ours that nobody else can write into. */
static int ensure_private_dir(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (lstat(dir, &st) != 0) {
        if (errno != ENOENT) {
            loggp_set_err(err, errlen, "cannot inspect directory %s: %s", dir, strerror(errno));
            return -1;
        }
        char parent[PATH_MAX];
        if (parent_dir(dir, parent, sizeof parent) == 0 && strcmp(parent, dir) != 0 &&
            lstat(parent, &st) != 0 && errno == ENOENT &&
            ensure_private_dir(parent, err, errlen) != 0)
            return -1;
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            loggp_set_err(err, errlen, "cannot create directory %s: %s", dir, strerror(errno));
            return -1;
        }
        if (lstat(dir, &st) != 0) {
            loggp_set_err(err, errlen, "cannot inspect directory %s: %s", dir, strerror(errno));
            return -1;
        }
    }
    if (!S_ISDIR(st.st_mode)) {
        loggp_set_err(err, errlen, "%s is not a directory (a symbolic link or a file); refusing to write the knob file there", dir);
        return -1;
    }
    if (st.st_uid != geteuid()) {
        loggp_set_err(err, errlen, "directory %s is owned by uid %u, not by you; refusing to write the knob file there",
                dir, (unsigned)st.st_uid);
        return -1;
    }
    if (st.st_mode & (S_IWGRP | S_IWOTH)) {
        loggp_set_err(err, errlen, "directory %s is writable by others (mode %03o); refusing to write the knob file there",
                dir, (unsigned)(st.st_mode & 0777));
        return -1;
    }
    return 0;
}

int loggp_knobs_save(const char *path, const loggp_knobs *knobs, char *err, size_t errlen)
{
    char dir[PATH_MAX];
    if (parent_dir(path, dir, sizeof dir) != 0) {
        loggp_set_err(err, errlen, "knob file path too long: %s", path);
        return -1;
    }
    if (ensure_private_dir(dir, err, errlen) != 0)
        return -1;
    char tmp[PATH_MAX];
    if (snprintf(tmp, sizeof tmp, "%s/.knobs.XXXXXX", dir) >= (int)sizeof tmp) {
        loggp_set_err(err, errlen, "knob file path too long: %s", path);
        return -1;
    }
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        loggp_set_err(err, errlen, "cannot create a temporary file in %s: %s", dir, strerror(errno));
        return -1;
    }
    char text[4096];
    size_t len = loggp_knobs_serialise(knobs, text, sizeof text);
    size_t done = 0;
    int failed = fchmod(fd, 0600) != 0;
    while (!failed && done < len) {
        ssize_t n = write(fd, text + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            failed = 1;
        else
            done += (size_t)n;
    }
    if (!failed && fsync(fd) != 0)
        failed = 1;
    int saved_errno = errno;
    if (close(fd) != 0 && !failed) {
        failed = 1;
        saved_errno = errno;
    }
    if (failed || rename(tmp, path) != 0) {
        if (!failed)
            saved_errno = errno;
        unlink(tmp);
        loggp_set_err(err, errlen, "cannot write knob file %s: %s", path, strerror(saved_errno));
        return -1;
    }
    return 0;
}

int loggp_knobs_lock(const char *path, char *err, size_t errlen)
{
    char dir[PATH_MAX], lock[PATH_MAX];
    if (parent_dir(path, dir, sizeof dir) != 0 ||
        snprintf(lock, sizeof lock, "%s/.knobs.lock", dir) >= (int)sizeof lock) {
        loggp_set_err(err, errlen, "knob file path too long: %s", path);
        return -1;
    }
    if (ensure_private_dir(dir, err, errlen) != 0)
        return -1;
    int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) {
        loggp_set_err(err, errlen, "cannot open lock file %s: %s", lock, strerror(errno));
        return -1;
    }
    while (flock(fd, LOCK_EX) != 0) {
        if (errno != EINTR) {
            loggp_set_err(err, errlen, "cannot lock %s: %s", lock, strerror(errno));
            close(fd);
            return -1;
        }
    }
    return fd;
}

void loggp_knobs_unlock(int fd)
{
    if (fd >= 0)
        close(fd);
}

/* The run's output folders (LOGGP_PROFILE, LOGGP_TRACE) at MPI_Init: the
 * profile's is checked as the trace's is, so a profile that could not be
 * written stops the run at its start rather than being lost at its end; and
 * rank 0 removes the rank files an earlier run left, so that a folder never
 * mixes two runs' ranks (docs/profile.md, docs/trace-format.md). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pmpi.h"
#include "runenv.h"

const char *loggp_output_folder(const char *variable)
{
    const char *dir = getenv(variable);
    return dir && *dir ? dir : NULL;
}

int loggp_ready_folder(const char *dir)
{
    struct stat st;
    if (loggp_make_folder(dir) != 0 || stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int loggp_profile_check(void)
{
    const char *dir = loggp_output_folder("LOGGP_PROFILE");
    if (!dir)
        return 0;
    char probe[PATH_MAX];
    if (loggp_ready_folder(dir) != 0)
        goto fail;
    if (snprintf(probe, sizeof probe, "%s/.profile.%d.check.XXXXXX", dir, loggp_world_rank) >= (int)sizeof probe) {
        errno = ENAMETOOLONG;
        goto fail;
    }
    int fd = mkostemp(probe, O_CLOEXEC);
    if (fd < 0)
        goto fail;
    close(fd);
    unlink(probe);
    return 0;
fail:
    fprintf(stderr, "loggp: rank %d: cannot write a profile into LOGGP_PROFILE=%s: %s\n", loggp_world_rank, dir,
            strerror(errno));
    fflush(stderr);
    return -1;
}

/* Is name "<stem>.<rank><suffix>", the rank in plain decimal (what a rank writes)? */
static int rank_file(const char *name, const char *stem, const char *suffix)
{
    size_t n = strlen(stem);
    if (strncmp(name, stem, n) != 0 || name[n] != '.')
        return 0;
    const char *digits = name + n + 1, *p = digits;
    while (*p >= '0' && *p <= '9')
        p++;
    return p > digits && (*digits != '0' || p == digits + 1) && strcmp(p, suffix) == 0;
}

/* Is name "<prefix><stem>.<rank><suffix>.tmp.<pid>" (a rank's file being
 * written) of a process that no longer exists here? A dead run leaves these;
 * a live one's are kept. */
static int dead_run_file(const char *name, const char *stem, const char *suffix)
{
    const char *tmp = strstr(name, ".tmp.");
    char base[256];
    if (!tmp || (size_t)(tmp - name) >= sizeof base)
        return 0;
    memcpy(base, name, (size_t)(tmp - name));
    base[tmp - name] = '\0';
    const char *rank_part = base[0] == '.' ? base + 1 : base;
    if (!rank_file(rank_part, stem, suffix))
        return 0;
    char *end;
    long pid = strtol(tmp + 5, &end, 10);
    if (*end || end == tmp + 5 || pid <= 0)
        return 0;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Removes dir's rank files (regular files or links to them; nothing else),
 * and the unfinished ones of runs that died. */
static int clear(const char *variable, const char *stem, const char *suffix)
{
    const char *dir = loggp_output_folder(variable);
    if (!dir)
        return 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "loggp: rank 0: cannot read %s=%s: %s\n", variable, dir, strerror(errno));
        return -1;
    }
    int failed = 0;
    struct dirent *entry;
    while ((entry = readdir(d))) {
        struct stat st;
        if (!(rank_file(entry->d_name, stem, suffix) || dead_run_file(entry->d_name, stem, suffix)) ||
            fstatat(dirfd(d), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
            !(S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)))
            continue;
        if (unlinkat(dirfd(d), entry->d_name, 0) != 0 && errno != ENOENT) {
            fprintf(stderr, "loggp: rank 0: cannot remove an earlier run's %s/%s: %s\n", dir, entry->d_name,
                    strerror(errno));
            failed = 1;
        }
    }
    closedir(d);
    return failed ? -1 : 0;
}

int loggp_clear_earlier_runs(void)
{
    int failed = clear("LOGGP_PROFILE", "profile", ".json");
    failed |= clear("LOGGP_TRACE", "trace", ".bin");
    if (failed)
        fflush(stderr);
    return failed ? -1 : 0;
}

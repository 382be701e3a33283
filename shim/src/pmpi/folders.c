/* The run's output folders (LOGGP_PROFILE, LOGGP_TRACE) at MPI_Init: the
 * profile's is checked as the trace's is, so a profile that could not be
 * written stops the run at its start rather than being lost at its end
 * (docs/profile.md, docs/trace-format.md). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

int loggp_profile_check(void)
{
    const char *dir = loggp_output_folder("LOGGP_PROFILE");
    if (!dir)
        return 0;
    struct stat st;
    char probe[PATH_MAX];
    if (loggp_make_folder(dir) != 0 || stat(dir, &st) != 0)
        goto fail;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        goto fail;
    }
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

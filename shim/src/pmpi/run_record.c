/* LOGGP_RUN_RECORD=DIR, set by `loggp run` to a folder of its own: every
 * process that calls MPI_Init leaves DIR/init.<pid>, and DIR/finalize.<pid>
 * once in MPI_Finalize, so that after the run `loggp run` can say that the
 * program never called MPI_Init (no knob applied), or that it did not finish
 * (the requested profile and trace were not written). Best effort: a record
 * that cannot be left never stops the run. */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pmpi.h"

void loggp_run_record(const char *event, int rank)
{
    const char *dir = loggp_output_folder("LOGGP_RUN_RECORD");
    char path[PATH_MAX], line[32];
    if (!dir || snprintf(path, sizeof path, "%s/%s.%ld", dir, event, (long)getpid()) >= (int)sizeof path)
        return;
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return;
    int n = snprintf(line, sizeof line, "%d\n", rank);
    if (write(fd, line, (size_t)n) != n) {
        /* nothing to do: `loggp run` reads the file's presence, the rank is a detail */
    }
    close(fd);
}

/* Program regions (Nanri's Hint API): where a program says its kernel runs,
 * through loggp_hint("IN_KERNEL", "1"/"0") or MPI_Pcontrol(level). The
 * profile counts each region apart, and knobs scoped to the kernel
 * (LOGGP_SCOPE=kernel) apply inside it only. */
#ifndef LOGGP_REGION_H
#define LOGGP_REGION_H

enum { LOGGP_REGION_OUTSIDE, LOGGP_REGION_KERNEL, LOGGP_REGIONS };

extern _Atomic int loggp_region;        /* the region the program is in now */
extern _Atomic int loggp_region_marked; /* the program marked a region at least once */

/* Enters region (LOGGP_REGION_*); with knobs scoped to the kernel, the knobs
 * in force change with it (live.c). */
void loggp_region_enter(int region);

#endif

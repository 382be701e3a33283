/* MPI_Pcontrol as the kernel-region switch for programs that already call it
 * (profiling libraries' convention): level 0 leaves the kernel region, any
 * other level enters it (region.h). MPI passes the call on as usual. */
#include "pmpi.h"
#include "region.h"

int MPI_Pcontrol(const int level, ...)
{
    loggp_region_enter(level ? LOGGP_REGION_KERNEL : LOGGP_REGION_OUTSIDE);
    if (!pmpi.Pcontrol)
        return MPI_SUCCESS; /* called before MPI_Init resolved the library: MPI's own does nothing either */
    return pmpi.Pcontrol(level);
}

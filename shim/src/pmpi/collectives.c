/* What the generated collective wrappers (collectives.tbl) count: the bytes
 * this rank sends, from counts, types and the communicator. */
#include "pmpi.h"

uint64_t comm_size_of(MPI_Comm comm)
{
    int n = 0;
    pmpi.Comm_size(comm, &n);
    return n > 0 ? (uint64_t)n : 0;
}

uint64_t sum_counts(const int *counts, MPI_Comm comm)
{
    uint64_t n = comm_size_of(comm), total = 0;
    for (uint64_t i = 0; counts && i < n; i++)
        total += counts[i] > 0 ? (uint64_t)counts[i] : 0;
    return total;
}

uint64_t alltoallw_bytes(const int *counts, const MPI_Datatype *types, MPI_Comm comm)
{
    uint64_t n = comm_size_of(comm), total = 0;
    for (uint64_t i = 0; counts && types && i < n; i++)
        total += type_bytes(counts[i], types[i]);
    return total;
}

int is_root(int root, MPI_Comm comm)
{
    int rank = -1;
    pmpi.Comm_rank(comm, &rank);
    return rank == root;
}

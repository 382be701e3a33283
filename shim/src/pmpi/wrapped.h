/* Every MPI function the PMPI layer wraps, as X-macro lists X(name).
 * Point-to-point and completion calls are written by hand (p2p.c,
 * completion.c); the collectives are generated at build time, one per row of
 * collectives.tbl, which also yields LOGGP_COLLECTIVES. */
#ifndef LOGGP_WRAPPED_H
#define LOGGP_WRAPPED_H

#include "collectives_list.h" /* generated: LOGGP_COLLECTIVES(X) */

#define LOGGP_P2P_FUNCTIONS(X) \
    X(Send) X(Bsend) X(Ssend) X(Rsend) X(Isend) X(Ibsend) X(Issend) X(Irsend) \
    X(Recv) X(Irecv) X(Sendrecv) X(Sendrecv_replace) \
    X(Send_init) X(Bsend_init) X(Ssend_init) X(Rsend_init) X(Recv_init) X(Start) X(Startall) \
    X(Request_free) X(Probe) X(Iprobe) \
    X(Wait) X(Waitany) X(Waitall) X(Waitsome) X(Test) X(Testany) X(Testall) X(Testsome)

/* PMPI functions the layer calls itself, beyond the wrapped ones. */
#define LOGGP_HELPERS(X) \
    X(Init) X(Init_thread) X(Finalize) X(Get_count) X(Type_size) X(Comm_rank) X(Comm_size) \
    X(Test_cancelled) X(Abort) X(Get_processor_name) X(Comm_dup) X(Comm_free) X(Comm_test_inter) \
    X(Pcontrol)

/* Communicator constructors and destructors (comms.c: ids the ranks share) and the group
 * calls it asks; resolved where present, as MPI-4's Comm_idup_with_info is not everywhere. */
#if MPI_VERSION >= 4
#define LOGGP_COMM_MPI4(X) X(Comm_idup_with_info)
#else
#define LOGGP_COMM_MPI4(X)
#endif
#define LOGGP_COMM_FUNCTIONS(X) \
    X(Comm_dup_with_info) X(Comm_idup) X(Comm_split) X(Comm_split_type) X(Comm_create) \
    X(Comm_create_group) X(Cart_create) X(Cart_sub) X(Graph_create) X(Dist_graph_create) \
    X(Dist_graph_create_adjacent) X(Intercomm_create) X(Intercomm_merge) X(Comm_disconnect) \
    X(Comm_group) X(Group_size) X(Group_translate_ranks) X(Group_free) \
    LOGGP_COMM_MPI4(X)

/* The communicator calls a trace records: those that start a request a traced Wait completes. */
#define LOGGP_TRACED_COMM_CALLS(X) X(Comm_idup) LOGGP_COMM_MPI4(X)

#endif

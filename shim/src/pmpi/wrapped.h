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

#endif

/* How bytes move between the ranks, apart from what is timed (as Netgauge keeps its
 * transport modules apart from its patterns): the clock, pacing, sends and receives in
 * the chosen modes, bursts, and the control messages between driver and server. */
#define _POSIX_C_SOURCE 200809L

#include "probe.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double last_send_end_us;
double pace_us;
static char *send_buf, *recv_buf; /* recv_buf holds one slot per burst message */
static MPI_Request *burst_reqs;

double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* Waits before timed operations need no precision, only "at least this long"; yielding
 * lets the peer rank run when both share a core on a busy machine (otherwise it would
 * get the CPU only at the end of our time slice, milliseconds later). */
void wait_until(double t_us)
{
    while (now_us() < t_us)
        sched_yield();
}

/* Sends of this process are spaced by at least `pace_us` (from the end of one posting
 * call to the start of the next) outside bursts, so a gap knob never stalls a timed send. */
void pace(void) { wait_until(last_send_end_us + pace_us); }

int transport_open(void)
{
    size_t largest = (size_t)(opt.max_size > 0 ? opt.max_size : 1);
    size_t slots = (size_t)opt.burst * largest;
    send_buf = malloc(largest);
    recv_buf = malloc(slots);
    burst_reqs = malloc((size_t)opt.burst * sizeof *burst_reqs);
    if (!send_buf || !recv_buf || !burst_reqs) {
        fprintf(stderr, "loggp-probe: out of memory for %zu-byte buffers\n", slots);
        return -1;
    }
    /* Touch every page now so page faults do not land in the first samples. */
    memset(send_buf, 1, largest);
    memset(recv_buf, 0, slots);
    return 0;
}

void transport_close(void)
{
    free(send_buf);
    free(recv_buf);
    free(burst_reqs);
}

/* A complete send in the chosen mode; returns when the posting call returned. */
void send_message(long m, int peer)
{
    MPI_Request req;
    switch (opt.send_mode) {
    case SEND_BLOCKING:
        MPI_Send(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        last_send_end_us = now_us();
        break;
    case SEND_SYNCHRONOUS:
        MPI_Ssend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        last_send_end_us = now_us();
        break;
    case SEND_NONBLOCKING:
        MPI_Isend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req);
        last_send_end_us = now_us();
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    }
}

double timed_send_call(long m, int peer)
{
    MPI_Request req;
    double t0 = now_us();
    switch (opt.send_mode) {
    case SEND_BLOCKING:
        MPI_Send(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        break;
    case SEND_SYNCHRONOUS:
        MPI_Ssend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD);
        break;
    case SEND_NONBLOCKING:
        MPI_Isend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &req);
        break;
    }
    double t1 = now_us();
    last_send_end_us = t1;
    if (opt.send_mode == SEND_NONBLOCKING)
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    return t1 - t0;
}

/* Posts a receive in irecv mode (to be completed by finish_receive); no-op in recv mode. */
void prepost_receive(long m, int peer, MPI_Request *req)
{
    if (opt.recv_mode == RECV_NONBLOCKING)
        MPI_Irecv(recv_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, req);
}

void finish_receive(long m, int peer, MPI_Request *req)
{
    if (opt.recv_mode == RECV_NONBLOCKING)
        MPI_Wait(req, MPI_STATUS_IGNORE);
    else
        MPI_Recv(recv_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

void send_control(int peer, int tag)
{
    MPI_Send(NULL, 0, MPI_BYTE, peer, tag, MPI_COMM_WORLD);
    last_send_end_us = now_us();
}

void recv_control(int peer, int tag)
{
    MPI_Recv(NULL, 0, MPI_BYTE, peer, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

/* Receives a burst of n messages of m bytes (rank 1 side). */
void receive_burst(long m, int n, int peer)
{
    if (opt.recv_mode == RECV_NONBLOCKING) {
        for (int i = 0; i < n; i++)
            MPI_Irecv(recv_buf + (size_t)i * (size_t)opt.max_size, (int)m, MPI_BYTE, peer, TAG_DATA,
                      MPI_COMM_WORLD, &burst_reqs[i]);
        MPI_Waitall(n, burst_reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < n; i++)
            MPI_Recv(recv_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
}

/* Sends a burst of n messages back to back (rank 0 side). */
void send_burst(long m, int n, int peer)
{
    if (opt.send_mode == SEND_NONBLOCKING) {
        for (int i = 0; i < n; i++)
            MPI_Isend(send_buf, (int)m, MPI_BYTE, peer, TAG_DATA, MPI_COMM_WORLD, &burst_reqs[i]);
        last_send_end_us = now_us();
        MPI_Waitall(n, burst_reqs, MPI_STATUSES_IGNORE);
    } else {
        for (int i = 0; i < n; i++)
            send_message(m, peer);
    }
}

void command_server(int cmd, long m, int count, int burst)
{
    command c = {cmd, (double)m, count, pace_us, burst};
    pace();
    MPI_Send(&c, 5, MPI_DOUBLE, SERVER_RANK, TAG_CTRL, MPI_COMM_WORLD);
    last_send_end_us = now_us();
}

command receive_command(void)
{
    command c;
    MPI_Recv(&c, 5, MPI_DOUBLE, DRIVER_RANK, TAG_CTRL, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    return c;
}

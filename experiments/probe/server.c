/* Rank 1: a server that runs whatever rank 0 asks, one control message per batch, so
 * that rank 0 alone decides when a value is precise enough. */
#include "probe.h"

void serve(void)
{
    for (;;) {
        command c = receive_command();
        int cmd = (int)c.cmd, count = (int)c.count, burst = (int)c.burst;
        long m = (long)c.bytes;
        /* The driver's sends, which start every exchange, are spaced by the full pace, so
         * ours follow at about that spacing; pacing ours at 0.8 of it (still gap + 2.4 us)
         * leaves room for jitter, so we never wait inside a timed round trip. */
        pace_us = 0.8 * c.pace_us;
        MPI_Request req;
        switch (cmd) {
        case CMD_QUIT:
            return;
        case CMD_KNOBS: {
            int ok = count >= 0 && count < opt.n_sets && await_knob_set(count) == 0;
            MPI_Send(&ok, 1, MPI_INT, DRIVER_RANK, TAG_ACK, MPI_COMM_WORLD);
            break;
        }
        case CMD_BURST:
            /* Iterations alternate a burst of `burst` messages and a single message. */
            for (int i = 0; i < count; i++) {
                receive_burst(m, (i % 2 == 0) ? burst : 1, DRIVER_RANK);
                pace();
                send_control(DRIVER_RANK, TAG_ACK);
            }
            break;
        case CMD_PINGPONG:
            for (int i = 0; i < count; i++) {
                prepost_receive(m, DRIVER_RANK, &req);
                finish_receive(m, DRIVER_RANK, &req);
                pace();
                send_message(m, DRIVER_RANK);
            }
            break;
        case CMD_SEND_OVERHEAD:
            for (int i = 0; i < count; i++) {
                prepost_receive(m, DRIVER_RANK, &req);
                pace();
                send_control(DRIVER_RANK, TAG_TOKEN);
                finish_receive(m, DRIVER_RANK, &req);
            }
            break;
        case CMD_RECV_OVERHEAD:
            for (int i = 0; i < count; i++) {
                recv_control(DRIVER_RANK, TAG_TOKEN);
                pace();
                send_message(m, DRIVER_RANK);
            }
            break;
        }
    }
}

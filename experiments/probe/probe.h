/* loggp-probe's private header: the options, and what each part offers the others.
 * Parts: options.c (arguments), transport.c (moving bytes between the ranks),
 * server.c (rank 1), measure.c (sampling, sizes, bends), report.c (table, JSON),
 * knobsets.c (knob sets side by side), probe.c (main). */
#ifndef LOGGP_PROBE_H
#define LOGGP_PROBE_H

#include "knobs.h"
#include "signature.h"

#include <mpi.h>
#include <stddef.h>
#include <stdio.h>

#define PROBE_VERSION "0.1.0"
#define MAX_KNOB_SETS 16
#define EXIT_USAGE 2

enum { TAG_DATA = 1, TAG_ACK = 2, TAG_TOKEN = 3, TAG_CTRL = 4 };
enum { CMD_QUIT = 0, CMD_BURST, CMD_PINGPONG, CMD_SEND_OVERHEAD, CMD_RECV_OVERHEAD, CMD_KNOBS };
enum send_mode { SEND_BLOCKING, SEND_NONBLOCKING, SEND_SYNCHRONOUS };
enum recv_mode { RECV_BLOCKING, RECV_NONBLOCKING };
extern const char *const send_mode_names[3];
extern const char *const recv_mode_names[2];

typedef struct {
    long sizes[MAX_SIZES];
    int n_sizes;
    int explicit_sizes;
    long min_size, max_size;
    int refine;
    enum send_mode send_mode;
    enum recv_mode recv_mode;
    const char *json_path;
    double rel_ci;       /* CI half-width target, relative */
    double abs_ci_us;    /* ... or absolute, whichever is larger */
    int min_samples, max_samples;
    double time_limit_s; /* measurement budget; min_samples always wins */
    int burst;
    int quiet;
    int n_sets, rounds; /* knob sets measured side by side, in this many rounds */
    loggp_knobs sets[MAX_KNOB_SETS];
    const char *set_specs[MAX_KNOB_SETS];
} options;

/* The run's options, parsed once by every rank. */
extern options opt;

/* ---- options.c */
/* Returns 0 to run, 1 for --help, -1 on a usage error (message already printed when
 * `verbose`, i.e. on rank 0). */
int parse_args(int argc, char **argv, options *o, int verbose);
void usage(FILE *out);

/* ---- transport.c: the messages themselves, apart from what is timed */
#define DRIVER_RANK 0
#define SERVER_RANK 1
/* End of this process's last send, and the spacing kept after it (see pace()). */
extern double last_send_end_us;
extern double pace_us;
double now_us(void);
void wait_until(double t_us);
void pace(void);
int transport_open(void);   /* buffers for the largest size and a burst; -1 out of memory */
void transport_close(void);
void send_message(long m, int peer);
double timed_send_call(long m, int peer); /* duration of the posting call alone */
void prepost_receive(long m, int peer, MPI_Request *req);
void finish_receive(long m, int peer, MPI_Request *req);
void send_control(int peer, int tag);
void recv_control(int peer, int tag);
void send_burst(long m, int n, int peer);
void receive_burst(long m, int n, int peer);
/* What rank 0 asks of rank 1: one control message per batch. */
typedef struct {
    double cmd, bytes, count, pace_us, burst;
} command;
/* Rank 0 tells rank 1 what to do next (paced like any send). */
void command_server(int cmd, long m, int count, int burst);
command receive_command(void);

/* ---- server.c */
void serve(void);

/* ---- measure.c */
/* Knob set in force (--knob-set), -1: none; the receive waits equalize idles over sets. */
extern int current_set;
/* Every size (and, when refining, sizes added at bends), ascending; returns how many.
 * `shares` divides the time budget (sets x rounds). */
int measure_signature(size_result *res, int shares);

/* ---- knobsets.c */
/* The libloggp.so knobs in force in this process, when preloaded (weak: NULL otherwise). */
extern void loggp_live_knobs(loggp_knobs *out) __attribute__((weak));
int await_knob_set(int k);
int knobs_in_force(loggp_knobs *out); /* 1: libloggp's view; 0: not preloaded, all zero */
int drive_sets(int np, double start);

/* ---- report.c */
/* One set's results over rounds: the medians of each round, per size. */
typedef struct {
    const size_result *const *rounds;
    int n_rounds;
} round_view;

/* A measured signature: one run (sets == 0), or per knob set. */
typedef struct {
    const size_result *const *res; /* [set] */
    const int *n;
    const summary *s;
    const round_view *rv; /* NULL for one run */
    const loggp_knobs *knobs; /* one run: the knobs in force throughout, NULL if they changed */
    const char *knobs_source; /* one run: where the knobs come from */
    int sets;
    double elapsed_s;
} results;

void print_table(const size_result *res, int n, const summary *s, int np, const char *set_spec);
int write_json(const char *path, const results *out, int np);

#endif

/* loggp knobs: the five LogGP increments, their units, the per-user knob file
 * and the environment that carries them to ranks. Shared by the loggp-knobs
 * command and libloggp.so. */
#ifndef LOGGP_KNOBS_H
#define LOGGP_KNOBS_H

#include <stddef.h>
#include <stdint.h>

typedef enum {
    LOGGP_KNOB_O_S,  /* send overhead, busy-wait on the sending CPU */
    LOGGP_KNOB_O_R,  /* receive overhead, busy-wait on the receiving CPU */
    LOGGP_KNOB_GAP,  /* g: minimum spacing between injections */
    LOGGP_KNOB_GAP_PER_BYTE, /* G: time per byte of a message */
    LOGGP_KNOB_LATENCY, /* L: time in flight */
    LOGGP_KNOB_COUNT
} loggp_knob_id;

typedef struct {
    const char *name;    /* name in the file and in JSON: "o_s", "G" */
    const char *flag;    /* command-line flag without dashes: "os", "G" */
    const char *env;     /* environment variable: "LOGGP_OS" */
    int per_byte;        /* value is time per byte (G) */
    const char *meaning;
} loggp_knob_info;

extern const loggp_knob_info loggp_knob_table[LOGGP_KNOB_COUNT];

/* Knob values: times in picoseconds, G in picoseconds per byte. Each is an
 * increment >= 0 over what the machine itself costs. */
typedef struct {
    int64_t ps[LOGGP_KNOB_COUNT];
    int scope; /* where they apply: LOGGP_SCOPE_ALL or LOGGP_SCOPE_KERNEL */
} loggp_knobs;

/* Scope: everywhere (the default), or inside the program's kernel region only
 * (loggp_hint IN_KERNEL or MPI_Pcontrol). File item "scope = kernel",
 * environment LOGGP_SCOPE. */
enum { LOGGP_SCOPE_ALL, LOGGP_SCOPE_KERNEL };
extern const char *const loggp_scope_names[2];

/* Parses "all" or "kernel"; -1 with a message naming the value. */
int loggp_parse_scope(const char *text, int *scope, char *err, size_t errlen);

/* LOGGP_SCOPE: 1 and *scope if set, 0 if not, -1 with a message if bad. */
int loggp_scope_from_env(int *scope, char *err, size_t errlen);

/* Largest accepted value: 10 s (per byte for G). */
#define LOGGP_KNOB_MAX_PS INT64_C(10000000000000)

/* Parses a knob value: "250ns", "1.5us", "2ms", "0.1s", "800ps" for times;
 * "0.5ns/B", "2us/KiB", "1ms/MB" for G. Refuses bare numbers, signs, NaN,
 * unknown units, overflow and values over 10 s. On error returns -1 and
 * writes a message naming the bad token into err. */
int loggp_parse_knob(loggp_knob_id id, const char *text, int64_t *out, char *err, size_t errlen);

/* Formats a value exactly, in the largest unit that keeps it >= 1:
 * "10us", "1.5us", "0ns", "0.5ns/B". Parsing the result gives the value back. */
void loggp_format_knob(loggp_knob_id id, int64_t value, char *buf, size_t len);

/* Writes ps / 1000 as a plain decimal number of nanoseconds ("10000", "0.5"). */
void loggp_format_ns(int64_t ps, char *buf, size_t len);

/* Finds a knob by file/JSON name ("o_s") or flag ("os"); -1 if none. */
int loggp_knob_by_name(const char *name);
int loggp_knob_by_flag(const char *flag);

/* Knob file path: $LOGGP_KNOB_FILE, else $XDG_CONFIG_HOME/loggp/knobs, else
 * $HOME/.config/loggp/knobs. Returns -1 with a message if none can be made. */
int loggp_knob_file_path(char *buf, size_t len, char *err, size_t errlen);

/* Loads the knob file. A missing file gives all zeros and *exists = 0. A file
 * that is corrupt, not a regular file, a symlink, owned by another user or
 * writable by others is refused: -1 with a message naming the path (and the
 * line, for a parse error). */
int loggp_knobs_load(const char *path, loggp_knobs *knobs, int *exists, char *err, size_t errlen);

/* Writes the knob file atomically (temporary file + rename, mode 0600),
 * creating its directory with mode 0700 if missing. Refuses a directory owned
 * by another user or writable by others. */
int loggp_knobs_save(const char *path, const loggp_knobs *knobs, char *err, size_t errlen);

/* Serialises knobs in the file's format into buf; returns the length. */
size_t loggp_knobs_serialise(const loggp_knobs *knobs, char *buf, size_t len);

/* Parses one "name = value" item (modified in place) into *knobs, with the
 * file's names and, if o_alias, "o" for o_s and o_r together; the knobs it
 * sets are added to *seen, and one already there is refused. -1 with a
 * message naming the bad part. */
int loggp_knobs_parse_item(char *item, int o_alias, loggp_knobs *knobs, unsigned *seen, char *err, size_t errlen);

/* Parses the file's text. -1 with "line N: ..." on error. */
int loggp_knobs_parse_text(const char *text, loggp_knobs *knobs, char *err, size_t errlen);

/* Applies LOGGP_OS, LOGGP_OR, LOGGP_GAP, LOGGP_GAP_PER_BYTE and LOGGP_LATENCY
 * from the environment over *knobs; sets bit i of *from_env for each one set.
 * A malformed value gives -1 and a message naming the variable and value. */
int loggp_knobs_apply_env(loggp_knobs *knobs, unsigned *from_env, char *err, size_t errlen);

/* Takes an exclusive advisory lock beside the knob file so that concurrent
 * read-modify-write updates do not lose each other; returns an fd to pass to
 * loggp_knobs_unlock, or -1 with a message. */
int loggp_knobs_lock(const char *path, char *err, size_t errlen);
void loggp_knobs_unlock(int fd);

#endif

/* The process's jitter (jitter.h): the settings read at MPI_Init and one
 * xoshiro stream per thread, seeded from the seed, the world rank and the
 * thread's order of first draw, so a rank's draws repeat run to run. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitter.h"
#include "runenv.h"

int loggp_jitter_L_on, loggp_jitter_o_on;
_Atomic int loggp_jitter_held;

static jitter_spec L_spec, o_spec;
static uint64_t seed;
static uint64_t rank;
static _Atomic uint64_t threads_seen;

static __thread jitter_rng rng;
static __thread int rng_ready;

static jitter_rng *my_rng(void)
{
    if (!rng_ready) {
        uint64_t thread = atomic_fetch_add(&threads_seen, 1);
        jitter_seed(&rng, seed, (rank << 20) | thread);
        rng_ready = 1;
    }
    return &rng;
}

uint64_t loggp_jitter_draw_L(uint64_t L_ns)
{
    return jitter_apply(L_ns, jitter_offset(&L_spec, my_rng()));
}

uint64_t loggp_jitter_draw_o(uint64_t o_ns)
{
    return jitter_apply(o_ns, jitter_offset(&o_spec, my_rng()));
}

/* The launcher's rank: MPICH's Hydra sets PMI_RANK, Open MPI and Slurm their own. */
static uint64_t launcher_rank(void)
{
    static const char *names[] = {"PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return strtoull(v, NULL, 10);
    }
    return 0;
}

int loggp_jitter_start(char *err, size_t errlen)
{
    if (loggp_env_jitter("LOGGP_L_JITTER", &L_spec, err, errlen) ||
        loggp_env_jitter("LOGGP_O_JITTER", &o_spec, err, errlen) || loggp_env_seed(&seed, err, errlen))
        return -1;
    rank = launcher_rank();
    loggp_jitter_L_on = L_spec.kind != JITTER_NONE;
    loggp_jitter_o_on = o_spec.kind != JITTER_NONE;
    return 0;
}

void loggp_jitter_describe(char *buf, size_t len)
{
    buf[0] = '\0';
    if (!loggp_jitter_L_on && !loggp_jitter_o_on)
        return;
    char l[96], o[96];
    loggp_jitter_format(&L_spec, l, sizeof l);
    loggp_jitter_format(&o_spec, o, sizeof o);
    snprintf(buf, len, "; jitter L %s, o %s, seed %llu", l, o, (unsigned long long)seed);
}

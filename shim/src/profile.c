#include "profile.h"

#include <pthread.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

__thread loggp_counters *loggp_tls_counters __attribute__((tls_model("initial-exec")));

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static loggp_counters *registry;
static _Atomic uint64_t shared_injected[LOGGP_INJ_COUNT];

const char *const loggp_fn_names[LOGGP_FN_COUNT] = {
#define LOGGP_NAME(name) "MPI_" #name,
    LOGGP_P2P_FUNCTIONS(LOGGP_NAME)
};
const char *const loggp_coll_names[LOGGP_COLL_COUNT] = {
    LOGGP_COLLECTIVES(LOGGP_NAME)
#undef LOGGP_NAME
};

loggp_counters *loggp_counters_slow(void)
{
    static loggp_counters fallback; /* if calloc fails, share one block */
    loggp_counters *c = calloc(1, sizeof *c);
    if (!c)
        c = &fallback;
    pthread_mutex_lock(&registry_lock);
    if (c != &fallback || !fallback.next) {
        c->next = registry;
        registry = c;
    }
    pthread_mutex_unlock(&registry_lock);
    loggp_tls_counters = c;
    return c;
}

void loggp_counters_sum(loggp_counters *sum)
{
    memset(sum, 0, sizeof *sum);
    pthread_mutex_lock(&registry_lock);
    for (loggp_counters *c = registry; c; c = c->next) {
        uint64_t *dst = (uint64_t *)sum, *src = (uint64_t *)c;
        size_t words = offsetof(loggp_counters, next) / sizeof(uint64_t);
        for (size_t i = 0; i < words; i++)
            dst[i] += src[i];
    }
    pthread_mutex_unlock(&registry_lock);
    for (int i = 0; i < LOGGP_INJ_COUNT; i++)
        sum->injected_ns[i] += atomic_load(&shared_injected[i]);
}

void loggp_profile_add_injected(int which, uint64_t ns)
{
    atomic_fetch_add_explicit(&shared_injected[which], ns, memory_order_relaxed);
}

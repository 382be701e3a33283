#include "region.h"

#include <stdatomic.h>
#include <string.h>

#include "live.h"
#include "loggp.h"

_Atomic int loggp_region = LOGGP_REGION_OUTSIDE;
_Atomic int loggp_region_marked;

void loggp_region_enter(int region)
{
    atomic_store(&loggp_region_marked, 1);
    if (atomic_exchange(&loggp_region, region) != region)
        loggp_live_region_changed();
}

/* The Hint API, exported: 0 when applied, -1 for an unknown key or value.
 * Without libloggp.so preloaded, libloggp-hint.so answers 0 and does nothing. */
__attribute__((visibility("default"))) int loggp_hint(const char *key, const char *value)
{
    if (!key || !value || strcmp(key, "IN_KERNEL") != 0)
        return -1;
    if (strcmp(value, "1") == 0)
        loggp_region_enter(LOGGP_REGION_KERNEL);
    else if (strcmp(value, "0") == 0)
        loggp_region_enter(LOGGP_REGION_OUTSIDE);
    else
        return -1;
    return 0;
}

/* libloggp-hint.so: what a program using the Hint API links against. It does
 * nothing; under LD_PRELOAD=libloggp.so the library's own loggp_hint, found
 * first, takes the calls (region.c). */
#include "loggp.h"

int loggp_hint(const char *key, const char *value)
{
    (void)key;
    (void)value;
    return 0;
}

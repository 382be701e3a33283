/* Prints "n j" for every n in [FIRST, LAST]: the median interval's rank from
 * core/order.c, which a Python test holds to loggp.experiments.precision's. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "order.h"

static int read_count(const char *text, size_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (errno || end == text || *end || text[0] == '-')
        return -1;
    *out = (size_t)v;
    return 0;
}

int main(int argc, char **argv)
{
    size_t first, last;
    if (argc != 3 || read_count(argv[1], &first) || read_count(argv[2], &last) || first > last) {
        fprintf(stderr, "usage: loggp-test-median-ranks FIRST LAST (counts, FIRST <= LAST)\n");
        return 2;
    }
    for (size_t n = first;; n++) {
        printf("%zu %zu\n", n, loggp_median_interval_rank(n));
        if (n == last)
            break;
    }
    return 0;
}

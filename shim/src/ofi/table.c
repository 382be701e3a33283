/* Patched ops tables: a copy of a provider's table behind a table_header
 * (layer.h). Copies are made with the table's run-time size, so a newer
 * libfabric's longer tables keep their tail. */
#include <stdlib.h>
#include <string.h>

#include "layer.h"

/* Replaces *slot (a table pointer inside a provider object) by a copy. */
void *patch_table(void *slot_ptr, size_t known_size, void *state)
{
    void **slot = slot_ptr;
    void *orig = *slot;
    if (!orig)
        return NULL;
    size_t size = *(const size_t *)orig;
    size_t bytes = size > known_size ? size : known_size;
    table_header *h = calloc(1, sizeof *h + bytes);
    if (!h)
        return NULL;
    h->orig = orig;
    h->state = state;
    memcpy(h + 1, orig, size);
    *slot = h + 1;
    return h + 1;
}

void free_table(void *table)
{
    if (table)
        free(HEADER(table));
}

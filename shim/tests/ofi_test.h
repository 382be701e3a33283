/* What the tests of the layer on a fake provider share (test_ofi_cq.c,
 * test_ofi_rma.c, test_ofi_send.c). */
#ifndef LOGGP_OFI_TEST_H
#define LOGGP_OFI_TEST_H

#include "layer.h"

#define MS 1000000u

/* Only `knob` in force, at ns; every other knob zero. */
static inline void set_knob(int knob, uint64_t ns)
{
    loggp_knobs k = {0};
    k.ps[knob] = (int64_t)ns * 1000;
    loggp_live_publish(&k);
}

/* A fake provider object's close: nothing to free. */
static inline int fake_close(struct fid *fid)
{
    (void)fid;
    return 0;
}

#endif

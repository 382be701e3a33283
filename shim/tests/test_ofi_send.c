/* Sends through the layer to a fake provider's endpoint (src/ofi/tagged.c,
 * msg.c, layer.h): which knobs make a send carry its stamp, o_s paid once
 * over a retry, no gap owed after a failed post, the caller's CQ data kept. */
#include <criterion/criterion.h>
#include <string.h>

#include "layer.h"
#include "ofi_test.h"

/* ---- tagged sends through the layer to a fake provider: stamps, o_s and the pacer ---- */

static ssize_t provider_rc;
static uint64_t provider_data;
static int provider_calls, provider_stamped;

static ssize_t fake_tsend(struct fid_ep *ep, const void *buf, size_t len, void *desc, fi_addr_t dest, uint64_t tag,
                          void *ctx)
{
    (void)ep, (void)buf, (void)len, (void)desc, (void)dest, (void)tag, (void)ctx;
    provider_calls++;
    return provider_rc;
}

static ssize_t fake_tsenddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
                              fi_addr_t dest, uint64_t tag, void *ctx)
{
    (void)ep, (void)buf, (void)len, (void)desc, (void)dest, (void)tag, (void)ctx;
    provider_calls++;
    provider_stamped++;
    provider_data = data;
    return provider_rc;
}

static ssize_t fake_tinjectdata(struct fid_ep *ep, const void *buf, size_t len, uint64_t data, fi_addr_t dest,
                                uint64_t tag)
{
    (void)ep, (void)buf, (void)len, (void)data, (void)dest, (void)tag;
    return 0;
}

static uint64_t provider_flags;

static ssize_t fake_tsendmsg(struct fid_ep *ep, const struct fi_msg_tagged *msg, uint64_t flags)
{
    (void)ep;
    provider_calls++;
    provider_flags = flags;
    provider_data = msg->data;
    return provider_rc;
}

/* A fresh endpoint whose sends carry stamps. */
static struct fid_ep *stamping_endpoint(void)
{
    static struct fi_ops fid_ops = {.size = sizeof(struct fi_ops), .close = fake_close};
    static struct fi_ops_tagged tagged_ops = {.size = sizeof(struct fi_ops_tagged), .send = fake_tsend,
                                              .senddata = fake_tsenddata, .injectdata = fake_tinjectdata,
                                              .sendmsg = fake_tsendmsg};
    struct fid_ep *ep = calloc(1, sizeof *ep);
    cr_assert_not_null(ep);
    ep->fid.fclass = FI_CLASS_EP;
    ep->fid.ops = &fid_ops;
    ep->tagged = &tagged_ops;
    patch_ep(ep, 1);
    provider_rc = 0;
    provider_calls = provider_stamped = 0;
    return ep;
}

Test(ofi_send, each_knob_a_receiver_holds_or_spaces_by_makes_sends_carry_their_stamp)
{
    /* L and G hold a receive from its send; g spaces receptions from their arrivals: all read the stamp */
    static const int knobs_read_stamps[] = {LOGGP_KNOB_LATENCY, LOGGP_KNOB_GAP, LOGGP_KNOB_GAP_PER_BYTE};
    for (size_t i = 0; i < sizeof knobs_read_stamps / sizeof knobs_read_stamps[0]; i++) {
        struct fid_ep *ep = stamping_endpoint();
        set_knob(knobs_read_stamps[i], 1);
        char buf[8];
        cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), 0);
        cr_expect_eq(provider_stamped, 1, "knob %d: the send went unstamped", knobs_read_stamps[i]);
        cr_expect(provider_data & STAMP_MARK, "knob %d: no stamp in the CQ data", knobs_read_stamps[i]);
    }
    /* o_s alone: nothing reads a stamp, the provider's own send */
    struct fid_ep *ep = stamping_endpoint();
    set_knob(LOGGP_KNOB_O_S, 1);
    char buf[8];
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), 0);
    cr_expect_eq(provider_calls, 1);
    cr_expect_eq(provider_stamped, 0, "o_s alone stamped the send");
}

Test(ofi_send, a_post_the_provider_refuses_for_now_pays_o_s_once_over_its_retry)
{
    struct fid_ep *ep = stamping_endpoint();
    set_knob(LOGGP_KNOB_O_S, 2 * MS);
    loggp_counters *c = loggp_my_counters();
    uint64_t before = c->injected_ns[LOGGP_INJ_O_S];
    char buf[8];
    provider_rc = -FI_EAGAIN;
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), -FI_EAGAIN);
    provider_rc = 0;
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), 0);
    cr_expect_eq(c->injected_ns[LOGGP_INJ_O_S] - before, 2 * MS, "one message, its retry included, paid %llu ns of o_s",
                 (unsigned long long)(c->injected_ns[LOGGP_INJ_O_S] - before));
    /* the next message pays its own */
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), 0);
    cr_expect_eq(c->injected_ns[LOGGP_INJ_O_S] - before, 4 * MS);
}

Test(ofi_send, a_failed_post_leaves_no_gap_owed)
{
    struct fid_ep *ep = stamping_endpoint();
    set_knob(LOGGP_KNOB_GAP, 200 * MS);
    loggp_counters *c = loggp_my_counters();
    char buf[8];
    provider_rc = -FI_EINVAL; /* nothing was injected */
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), -FI_EINVAL);
    provider_rc = 0;
    uint64_t before = c->injected_ns[LOGGP_INJ_GAP];
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), 0);
    cr_expect_eq(c->injected_ns[LOGGP_INJ_GAP] - before, 0, "the send after a failed post waited %llu ns for a gap",
                 (unsigned long long)(c->injected_ns[LOGGP_INJ_GAP] - before));
    /* an injection does leave one: the next send waits (most of) g */
    cr_assert_eq(fi_tsend(ep, buf, sizeof buf, NULL, 0, 0, NULL), 0);
    cr_expect_gt(c->injected_ns[LOGGP_INJ_GAP] - before, 100 * MS);
}

/* The caller's own CQ data: bits 0-31 ride with the stamp; a caller using bits 32-63 keeps them, unstamped. */
Test(ofi_send, a_stamp_keeps_the_callers_cq_data_or_stands_aside)
{
    struct fid_ep *ep = stamping_endpoint();
    set_knob(LOGGP_KNOB_LATENCY, 1);
    char buf[8];
    cr_assert_eq(fi_tsenddata(ep, buf, sizeof buf, NULL, 0x1234, 0, 0, NULL), 0);
    cr_expect(provider_data & STAMP_MARK, "low CQ data: stamped");
    cr_expect_eq(provider_data & 0xffffffffu, 0x1234, "the caller's bits 0-31 kept");
    cr_expect_not(provider_data & STAMP_NO_DATA, "the caller gave data: not marked as none");
    uint64_t upper = UINT64_C(0x100000005);
    cr_assert_eq(fi_tsenddata(ep, buf, sizeof buf, NULL, upper, 0, 0, NULL), 0);
    cr_expect_eq(provider_data, upper, "a caller's upper bits were overwritten by a stamp");

    struct iovec iov = {buf, sizeof buf};
    struct fi_msg_tagged msg = {.msg_iov = &iov, .iov_count = 1, .data = 0x77};
    cr_assert_eq(fi_tsendmsg(ep, &msg, 0), 0);
    cr_expect(provider_flags & FI_REMOTE_CQ_DATA, "a sendmsg without CQ data gets the stamp's");
    cr_expect(provider_data & STAMP_MARK);
    cr_expect(provider_data & STAMP_NO_DATA, "the receiver must learn the caller gave no data");
    cr_expect_eq(provider_data & 0xffffffffu, 0, "data the caller did not send (flag unset) went out");
    cr_assert_eq(fi_tsendmsg(ep, &msg, FI_REMOTE_CQ_DATA), 0);
    cr_expect_eq(provider_data & 0xffffffffu, 0x77);
    cr_expect_not(provider_data & STAMP_NO_DATA);
    msg.data = upper;
    cr_assert_eq(fi_tsendmsg(ep, &msg, FI_REMOTE_CQ_DATA), 0);
    cr_expect_eq(provider_data, upper, "a sendmsg's upper bits were overwritten by a stamp");
    cr_expect_eq(provider_flags, FI_REMOTE_CQ_DATA);
}

/* The same for untagged messages (MPICH's active messages), which have hooks of their own. */
static ssize_t fake_senddata(struct fid_ep *ep, const void *buf, size_t len, void *desc, uint64_t data,
                             fi_addr_t dest, void *ctx)
{
    (void)ep, (void)buf, (void)len, (void)desc, (void)dest, (void)ctx;
    provider_calls++;
    provider_data = data;
    return provider_rc;
}

static ssize_t fake_sendmsg(struct fid_ep *ep, const struct fi_msg *msg, uint64_t flags)
{
    (void)ep;
    provider_calls++;
    provider_flags = flags;
    provider_data = msg->data;
    return provider_rc;
}

Test(ofi_send, an_untagged_stamp_keeps_the_callers_cq_data_or_stands_aside)
{
    static struct fi_ops fid_ops = {.size = sizeof(struct fi_ops), .close = fake_close};
    static struct fi_ops_msg msg_ops = {.size = sizeof(struct fi_ops_msg), .senddata = fake_senddata,
                                        .sendmsg = fake_sendmsg};
    struct fid_ep *ep = calloc(1, sizeof *ep);
    cr_assert_not_null(ep);
    ep->fid.fclass = FI_CLASS_EP;
    ep->fid.ops = &fid_ops;
    ep->msg = &msg_ops;
    patch_ep(ep, 1);
    set_knob(LOGGP_KNOB_LATENCY, 1);
    char buf[8];
    uint64_t upper = UINT64_C(0x100000005);
    cr_assert_eq(fi_senddata(ep, buf, sizeof buf, NULL, 0x1234, 0, NULL), 0);
    cr_expect(provider_data & STAMP_MARK);
    cr_expect_eq(provider_data & 0xffffffffu, 0x1234);
    cr_assert_eq(fi_senddata(ep, buf, sizeof buf, NULL, upper, 0, NULL), 0);
    cr_expect_eq(provider_data, upper, "a caller's upper bits were overwritten by a stamp");
    struct iovec iov = {buf, sizeof buf};
    struct fi_msg msg = {.msg_iov = &iov, .iov_count = 1, .data = 0x77};
    cr_assert_eq(fi_sendmsg(ep, &msg, 0), 0);
    cr_expect(provider_flags & FI_REMOTE_CQ_DATA);
    cr_expect(provider_data & STAMP_NO_DATA, "the receiver must learn the caller gave no data");
    cr_expect_eq(provider_data & 0xffffffffu, 0, "data the caller did not send (flag unset) went out");
    msg.data = upper;
    cr_assert_eq(fi_sendmsg(ep, &msg, FI_REMOTE_CQ_DATA), 0);
    cr_expect_eq(provider_data, upper);
}

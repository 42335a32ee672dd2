/*
 * Native tests of the C order-summary plugin: fold events through the
 * projection as the host would, without Wasm.
 *
 *     cc -std=c11 -I ../../../sdk-guest/c -o /tmp/order-summary-test \
 *        order_summary_test.c order_summary.c ../../../sdk-guest/c/dynafold.c && /tmp/order-summary-test
 */
#include "order_summary.h"

#include <stdio.h>
#include <string.h>

static void sums_exactly(df_test *t) {
    df_tev *e = df_test_event(t, "Order", "o-1", 1, "OrderPlaced");
    df_tev_s(e, "customer", "Ada");
    const char *prices[] = {"0.1", "2.25", "1.5", "0.2", "1.5"};
    for (int i = 0; i < 5; i++) {
        e = df_test_event(t, "Order", "o-1", (uint64_t)i + 2, "ItemAdded");
        df_tev_n(e, "price", prices[i]);
    }
    df_trow *r = df_test_row(t, "pk", "OrderSummary#o-1", "sk", "OrderSummary");
    df_trow_s(r, "orderId", "o-1");
    df_trow_s(r, "customer", "Ada");
    df_trow_s(r, "status", "placed");
    df_trow_n(r, "items", "5");
    df_trow_n(r, "total", "5.55");
    df_trow_n(r, "version", "0");
    df_trow_s(r, "gsi1pk", "placed");
    df_trow_s(r, "gsi1sk", "o-1");
}

static void unknown_event_fails(df_test *t) {
    df_tev_s(df_test_event(t, "Order", "o-2", 1, "OrderPlaced"), "customer", "Bob");
    df_test_event(t, "Order", "o-2", 2, "OrderRefunded");
    /* no row expected: a failed row is not written */
}

static const df_case cases[] = {
    {"prices sum exactly", sums_exactly},
};

static const df_case failing = {"an unknown event fails the row", unknown_event_fails};

int main(void) {
    int rc = df_test_main(dynafold_projection(), cases, sizeof cases / sizeof cases[0]);
    /* a failed row is reported with the event and the error */
    const char *d = df_test_case(dynafold_projection(), &failing);
    if (!d || !strstr(d, "UnknownEvent: order-summary does not fold \"OrderRefunded\"")) {
        printf("FAIL the unknown event's row: %s\n", d ? d : "(no difference)");
        return 1;
    }
    return rc;
}

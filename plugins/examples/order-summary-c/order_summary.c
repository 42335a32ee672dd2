/*
 * The order-summary projection (plugins/examples/order-summary) in C, on
 * the dynafold C guest SDK (sdk-guest/c): the "Order" stream folded into
 * one OrderSummary row per order. It writes exactly the rows of the Go
 * plugin: the same attributes in the same order, totals summed exactly,
 * the same error tags and messages.
 *
 * Build the module (from the repository root; `make plugins` does it):
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -std=c11 -O2 -Wl,--strip-debug -I sdk-guest/c \
 *           -o build/plugins/order-summary-c.wasm \
 *           plugins/examples/order-summary-c/order_summary.c sdk-guest/c/dynafold.c
 */
#include "order_summary.h"

#include <string.h>

static const df_field state_fields[] = {
    DF_FIELD(order_summary, order_id, "orderId", DF_T_STR),
    DF_FIELD(order_summary, customer, "customer", DF_T_STR),
    DF_FIELD(order_summary, status, "status", DF_T_STR),
    DF_FIELD(order_summary, items, "items", DF_T_I64),
    DF_FIELD(order_summary, total, "total", DF_T_DECIMAL), /* exact: prices are money */
    DF_FIELD(order_summary, version, "version", DF_T_I64), /* the checkpoint, written by the host */
};
static const df_fields state = {state_fields, sizeof state_fields / sizeof state_fields[0]};

/* order_placed is the data of an OrderPlaced event. */
typedef struct order_placed {
    df_str customer;
} order_placed;

static const df_field placed_fields[] = {DF_FIELD(order_placed, customer, "customer", DF_T_STR)};
static const df_fields placed = {placed_fields, 1};

static const char *const event_types[] = {"OrderPlaced", "ItemAdded", "OrderShipped"};
static const df_source sources[] = {{"Order", "Order", event_types, 3, "fold", NULL, 0}};

static int key(const df_event *e, const df_ctx *ctx, df_attrs *k, df_error *err) {
    (void)ctx;
    (void)err;
    df_attrs_s(k, "pk", df_sprintf(ENTITY_TYPE "#%.*s", (int)e->stream_id.len, e->stream_id.ptr));
    df_attrs_cs(k, "sk", ENTITY_TYPE);
    return DF_KEY;
}

static void initial(void *st, const df_event *e, const df_ctx *ctx) {
    (void)e;
    order_summary *s = (order_summary *)st;
    s->order_id = ctx->stream_id;
    s->status = df_cstr("new");
}

static df_step evolve(void *st, const df_event *e, const df_ctx *ctx, df_error *err) {
    (void)ctx;
    order_summary *s = (order_summary *)st;
    if (df_eq(e->type, "ItemAdded")) {
        /* the hot path: one attribute, read in place, as an exact decimal
         * (a double would sum 0.1 + 2.25 + … to 5.550000000000001) */
        df_decimal price;
        if (!df_event_decimal(e, "price", &price))
            return df_fail(err, "BadEvent", "ItemAdded v%llu: price is not a number", (unsigned long long)e->version);
        df_decimal total = df_decimal_add(&s->total, &price);
        int bad = df_decimal_valid(&total);
        if (bad) return df_fail(err, "BadTotal", "ItemAdded v%llu: total %s", (unsigned long long)e->version, df_decimal_error(bad));
        s->items++;
        s->total = total;
        return DF_APPLIED;
    }
    if (df_eq(e->type, "OrderPlaced")) {
        order_placed d = {{"", 0}};
        if (!df_event_decode(e, &placed, &d, err)) return DF_FAILED;
        s->customer = d.customer;
        s->status = df_cstr("placed");
        return DF_APPLIED;
    }
    if (df_eq(e->type, "OrderShipped")) {
        s->status = df_cstr("shipped");
        return DF_APPLIED;
    }
    df_str q = df_quote(e->type);
    return df_fail(err, "UnknownEvent", "order-summary does not fold %.*s", (int)q.len, q.ptr);
}

/* to_item stores the state plus the byStatus index keys (gsi1). */
static void to_item(const void *st, const df_ctx *ctx, df_attrs *item) {
    (void)ctx;
    const order_summary *s = (const order_summary *)st;
    df_attrs_fields(item, &state, s);
    df_attrs_s(item, "gsi1pk", s->status);
    df_attrs_s(item, "gsi1sk", s->order_id);
}

static const df_projection projection = {
    "order-summary", "1.0.0", sources, 1, false, sizeof(order_summary), &state, key, initial, evolve, NULL, to_item, NULL,
};

const df_projection *dynafold_projection(void) { return &projection; }

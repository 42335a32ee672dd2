/*
 * A test guest of the SDK's codec (sdk-guest/langtest): evolve decodes each
 * event's data into a df_item (every value kind) and makes it the state,
 * which to_item writes back in ascending name order; a data item the
 * decoder rejects fails the event with the decoder's message.
 */
#include "dynafold.h"

typedef struct echo_state {
    df_item data;
} echo_state;

static const df_fields no_fields = {NULL, 0};
static const char *const types[] = {"Echo"};
static const df_source sources[] = {{"Echo", "Echo", types, 1, "fold", NULL, 0}};

static int key(const df_event *e, const df_ctx *ctx, df_attrs *k, df_error *err) {
    (void)ctx;
    (void)err;
    df_attrs_s(k, "pk", e->stream_id);
    return DF_KEY;
}

static void initial(void *st, const df_event *e, const df_ctx *ctx) {
    (void)st;
    (void)e;
    (void)ctx;
}

static df_step evolve(void *st, const df_event *e, const df_ctx *ctx, df_error *err) {
    (void)ctx;
    echo_state *s = (echo_state *)st;
    const char *bad = df_item_decode(e->data, &s->data);
    if (bad) return df_fail(err, "Error", "%s", bad);
    return DF_APPLIED;
}

static void to_item(const void *st, const df_ctx *ctx, df_attrs *item) {
    (void)ctx;
    df_attrs_item(item, &((const echo_state *)st)->data);
}

static const df_projection echo = {"echo", "0.0.1", sources, 1, false, sizeof(echo_state), &no_fields, key, initial, evolve, NULL, to_item, NULL};

const df_projection *dynafold_projection(void) { return &echo; }

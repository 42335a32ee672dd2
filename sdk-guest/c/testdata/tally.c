/*
 * A small multi-source plugin on the SDK, for tests: two sources, a
 * (stream Alpha) and b (stream Beta), fold into one row {pk: "Tally", sk:
 * "T"} with state {count, last}:
 *   Ping  → count + 1, last = "<source>#<streamId>", effect
 *           {from: "<source>#<streamId>", kind: "ping", v: <version>};
 *   Close → removeRow, effect {from: …, kind: "closed"}.
 * The same plugin as the AssemblyScript tally.ts.
 */
#include "dynafold.h"

typedef struct tally {
    int64_t count;
    df_str last;
} tally;

static const df_field tally_fields[] = {
    DF_FIELD(tally, count, "count", DF_T_I64),
    DF_FIELD(tally, last, "last", DF_T_STR),
};
static const df_fields state = {tally_fields, 2};
static const char *const types[] = {"Ping", "Close"};
static const df_source sources[] = {
    {"a", "Alpha", types, 2, "fold", NULL, 0},
    {"b", "Beta", types, 2, "fold", NULL, 0},
};

static df_str from(const df_ctx *ctx) {
    return df_sprintf("%.*s#%.*s", (int)ctx->source_name.len, ctx->source_name.ptr, (int)ctx->stream_id.len, ctx->stream_id.ptr);
}

static int key(const df_event *e, const df_ctx *ctx, df_attrs *k, df_error *err) {
    (void)e;
    (void)ctx;
    (void)err;
    df_attrs_cs(k, "pk", "Tally");
    df_attrs_cs(k, "sk", "T");
    return DF_KEY;
}

static void initial(void *st, const df_event *e, const df_ctx *ctx) {
    (void)st; /* zeroed: count 0, last "" */
    (void)e;
    (void)ctx;
}

static df_step evolve(void *st, const df_event *e, const df_ctx *ctx, df_error *err) {
    (void)err;
    tally *s = (tally *)st;
    if (df_eq(e->type, "Ping")) {
        s->count++;
        s->last = from(ctx);
        return DF_APPLIED;
    }
    if (df_eq(e->type, "Close")) return DF_REMOVE_ROW;
    return DF_SKIP;
}

static void effects(const df_event *e, const void *next, const df_ctx *ctx, df_effects *fx) {
    df_attrs m;
    df_effects_map_begin(fx, &m);
    df_attrs_s(&m, "from", from(ctx));
    if (next) {
        df_attrs_cs(&m, "kind", "ping");
        df_attrs_int(&m, "v", (int64_t)e->version);
    } else {
        df_attrs_cs(&m, "kind", "closed");
    }
    df_effects_map_end(fx, &m);
}

static const df_projection tallies = {"tally", "1.0.0", sources, 2, true, sizeof(tally), &state, key, initial, evolve, NULL, NULL, effects};

const df_projection *dynafold_projection(void) { return &tallies; }

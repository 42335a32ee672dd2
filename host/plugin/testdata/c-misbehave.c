/*
 * A C plugin on the SDK that misbehaves on demand, for the host's
 * containment tests (w7_test.go): evolve of an event of type Boom reads
 * outside linear memory, Trap executes unreachable, Loop never returns, Hog
 * allocates without bound; a request holding an event of type Garbage,
 * OutOfBounds, Undecodable or GuestError gets a malformed result (an
 * unknown status byte, a pointer outside memory, a body that does not
 * decode, status 1). Any other event counts: the state is {count: N}.
 * Built with -DDYNAFOLD_NO_EVOLVE_EXPORT: the evolve export is its own.
 */
#include "dynafold.h"

#include <stdlib.h>
#include <string.h>

typedef struct count_state {
    int64_t count;
} count_state;

static const df_field count_fields[] = {DF_FIELD(count_state, count, "count", DF_T_I64)};
static const df_fields state = {count_fields, 1};
static const char *const types[] = {"Placed"};
static const df_source sources[] = {{"Order", "Order", types, 1, "fold", NULL, 0}};

static volatile uint64_t spins;
static void *volatile hoard;

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
    (void)err;
    count_state *s = (count_state *)st;
    if (df_eq(e->type, "Boom")) {
        s->count += *(volatile uint8_t *)(uintptr_t)0xfffffff0u; /* the Wasm trap */
    } else if (df_eq(e->type, "Trap")) {
        __builtin_trap();
    } else if (df_eq(e->type, "Loop")) {
        for (;;) spins++;
    } else if (df_eq(e->type, "Hog")) {
        for (;;) {
            char *chunk = (char *)malloc(1 << 20);
            if (!chunk) df_out_of_memory();
            for (int i = 0; i < 1 << 20; i++) chunk[i] = (char)i;
            *(void **)chunk = hoard;
            hoard = chunk;
        }
    } else {
        s->count++;
    }
    return DF_APPLIED;
}

static const df_projection misbehave = {"c-misbehave", "0.0.1", sources, 1, false, sizeof(count_state), &state, key, initial, evolve, NULL, NULL, NULL};

const df_projection *dynafold_projection(void) { return &misbehave; }

static bool holds(const uint8_t *in, size_t n, const char *typ) {
    size_t l = strlen(typ);
    for (size_t i = 0; i + l + 1 <= n; i++)
        if (in[i] == l && memcmp(in + i + 1, typ, l) == 0) return true;
    return false;
}

static const uint8_t garbage[] = {7, 0xde, 0xad, 0xbe, 0xef};
static const uint8_t undecodable[] = {0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
static const char guest_error[] = "\001cannot fold GuestError";

static int64_t pack(const void *p, size_t n) { return (int64_t)((uint64_t)(uintptr_t)p << 32 | n); }

__attribute__((export_name("evolve"))) int64_t misbehave_evolve(int32_t ptr, int32_t len) {
    const uint8_t *in = (const uint8_t *)(uintptr_t)ptr;
    size_t n = (size_t)len;
    if (holds(in, n, "Garbage")) return pack(garbage, sizeof garbage);
    if (holds(in, n, "OutOfBounds")) return (int64_t)0x7fff0000 << 32 | 4096;
    if (holds(in, n, "Undecodable")) return pack(undecodable, sizeof undecodable);
    if (holds(in, n, "GuestError")) return pack(guest_error, sizeof guest_error - 1);
    return df_export_call("evolve", ptr, len);
}

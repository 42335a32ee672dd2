/*
 * dynafold.h: the C guest SDK of dynafold (plugin ABI 1.2, abi/ABI.md).
 *
 * One header and one source file (dynafold.c), C11, nothing beyond
 * wasi-libc (malloc, string.h, stdio.h). Usable from C++ (the header is
 * extern "C") and from Zig (@cImport): no bit-fields, no variable-length
 * structs, plain function pointers.
 *
 * A plugin defines one df_projection (its name, sources, the state's field
 * table and its callbacks) and a function returning it:
 *
 *     const df_projection *dynafold_projection(void) { return &orders; }
 *
 * dynafold.c holds the module's exports (dynafold_abi_version,
 * dynafold_alloc, describe, key, evolve, initial, terminal, to_item,
 * effects, and self_test when built with -DDYNAFOLD_SELF_TEST), the
 * decoding of requests, the fold loop and the encoding of responses.
 *
 * Build a module (Debian/Ubuntu: apt-get install clang lld wasi-libc
 * libclang-rt-dev-wasm32):
 *
 *     clang --target=wasm32-wasi -mexec-model=reactor -std=c11 -O2 -Wl,--strip-debug \
 *           -I sdk-guest/c -o plugin.wasm plugin.c sdk-guest/c/dynafold.c
 *
 * (-Wl,--strip-debug drops the DWARF sections wasi-libc brings, and keeps
 * the name section, with which a trap names functions.)
 *
 * Strings (df_str) are views: of the request (valid during the call), of
 * constants, or of memory from df_alloc (freed when the call ends). A state
 * is plain data (views, numbers, df_decimal): the fold copies it with
 * memcpy and keeps nothing between calls.
 *
 * The same sources compile natively (cc, no Wasm): the df_test_* functions
 * fold events through the projection as the host would, for tests run as
 * an ordinary program.
 */
#ifndef DYNAFOLD_H
#define DYNAFOLD_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DF_ABI_MAJOR 1
#define DF_ABI_MINOR 2

/* ---- strings ---- */

/* df_str is a string or byte string: a pointer and a length, not owned. */
typedef struct df_str {
    const char *ptr;
    size_t len;
} df_str;

/* df_cstr is the view of a NUL-terminated string. */
df_str df_cstr(const char *s);

/* df_eq reports whether a holds exactly the NUL-terminated string lit
 * (inline: with a literal, its length is known at compile time). */
static inline bool df_eq(df_str a, const char *lit) {
    size_t n = 0;
    while (lit[n]) n++;
    if (a.len != n) return false;
    for (size_t i = 0; i < n; i++)
        if (a.ptr[i] != lit[i]) return false;
    return true;
}
/* df_str_equal reports whether a and b hold the same bytes. */
bool df_str_equal(df_str a, df_str b);

/* df_alloc returns n bytes valid until the current call into the module
 * ends (malloc'd, freed at the next call); NULL when memory runs out. */
void *df_alloc(size_t n);
/* df_sprintf formats into df_alloc'd memory. */
df_str df_sprintf(const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* df_quote quotes s as Go's %q does (so messages read the same as the Go
 * SDK's), into df_alloc'd memory. */
df_str df_quote(df_str s);

/* ---- values (ABI.md §3.1) ---- */

enum {
    DF_ABSENT = 0,
    DF_S = 1,
    DF_N = 2,
    DF_B = 3,
    DF_BOOL = 4,
    DF_NULL = 5,
    DF_M = 6,
    DF_L = 7,
    DF_SS = 8,
    DF_NS = 9,
    DF_BS = 10
};

/* df_kind_name is "S", "N", … for a kind byte. */
const char *df_kind_name(int kind);

typedef struct df_value df_value;

/* df_attr is one attribute of an item or a map. */
typedef struct df_attr {
    df_str name;
    df_value *value;
} df_attr;

/* df_value is a decoded value: kind, then the fields of that kind. */
struct df_value {
    uint8_t kind;
    bool b;          /* BOOL */
    df_str s;        /* S, N (the exact decimal text), B */
    size_t n;        /* the count of attrs (M), items (L) or strs (SS, NS, BS) */
    df_attr *attrs;  /* M */
    df_value *items; /* L */
    df_str *strs;    /* SS, NS, BS */
};

/* df_item is an item: attributes, or absent (present false). */
typedef struct df_item {
    bool present;
    size_t n;
    df_attr *attrs;
} df_item;

/* df_item_decode decodes an encoded optional item into df_alloc'd memory;
 * it returns NULL, or the error (what ABI.md §3 says decoders reject:
 * truncation, unknown kinds, bad bools, duplicate names, nesting deeper
 * than 64 levels). */
const char *df_item_decode(df_str raw, df_item *out);
/* df_item_get returns the value of attribute name, or NULL. */
const df_value *df_item_get(const df_item *it, const char *name);
/* df_item_put adds (or replaces) attribute name of a present item. */
void df_item_put(df_item *it, const char *name, df_value *v);
/* df_value_s, df_value_n, … make values in df_alloc'd memory. */
df_value *df_value_s(const char *s);
df_value *df_value_n(const char *text);
df_value *df_value_bool(bool b);
df_value *df_value_null(void);
/* df_value_equal compares two values (sets in order). */
bool df_value_equal(const df_value *a, const df_value *b);
/* df_item_equal compares two items. */
bool df_item_equal(const df_item *a, const df_item *b);

/* ---- reading in place ---- */

/* df_reader reads the encoding; the first error is kept in err and every
 * later read returns a zero value. */
typedef struct df_reader {
    const uint8_t *buf;
    size_t len, off;
    bool failed;
    char err[200];
} df_reader;

void df_reader_init(df_reader *r, df_str in);
void df_reader_fail(df_reader *r, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
uint8_t df_read_byte(df_reader *r);
uint64_t df_read_uvarint(df_reader *r);
df_str df_read_str(df_reader *r);
bool df_read_bool(df_reader *r);
uint32_t df_read_u32(df_reader *r);
df_str df_read_sized(df_reader *r);
/* df_read_count reads a count of elements of at least min bytes each,
 * checked against the bytes left. */
size_t df_read_count(df_reader *r, size_t min);
void df_skip_payload(df_reader *r, int kind, int depth);

/* df_ref is a value read in place: its kind, its payload's bytes, and the
 * payload's offset in the item it was read from. */
typedef struct df_ref {
    int kind;
    df_str payload;
    size_t at;
} df_ref;

/* df_find finds attribute name of an encoded optional item; false when
 * absent. */
bool df_find(df_str item, const char *name, df_ref *out);
/* df_ref_str, df_ref_number, df_ref_bytes: the text of an S, N or B
 * value (false for another kind); df_ref_bool the value of a BOOL. */
bool df_ref_str(const df_ref *v, df_str *out);
bool df_ref_number(const df_ref *v, df_str *out);
bool df_ref_bytes(const df_ref *v, df_str *out);
bool df_ref_bool(const df_ref *v, bool *out);

/* ---- exact decimals ---- */

/* df_decimal is an exact decimal number, the arithmetic type of DynamoDB's
 * N: ±coef × 10^exp with a coefficient of at most 38 digits (what DynamoDB
 * stores), kept in one normal form (no trailing zeros), so equal numbers
 * have equal fields. A result that needs more than 38 significant digits
 * is never rounded: it is marked too long (df_decimal_valid reports
 * DF_DECIMAL_DIGITS) and stays marked through further arithmetic. Copy it
 * by assignment. */
typedef struct df_decimal {
    uint64_t hi, lo; /* the coefficient, hi * 2^64 + lo, below 10^38 */
    int32_t exp;
    uint8_t neg;
    uint8_t too_long; /* more than 38 significant digits */
} df_decimal;

enum {
    DF_DECIMAL_OK = 0,
    DF_DECIMAL_SYNTAX = 1, /* "decimal: not a number" */
    DF_DECIMAL_DIGITS = 2, /* "decimal: more than 38 significant digits" */
    DF_DECIMAL_RANGE = 3   /* "decimal: outside the range DynamoDB stores (1E-130 to 1E+126)" */
};

/* The rounding modes of df_decimal_round. */
enum { DF_HALF_EVEN = 0, DF_HALF_UP = 1, DF_DOWN = 2 };

/* df_decimal_parse parses a DynamoDB number (an optional sign, digits with
 * an optional point, an optional exponent): DF_DECIMAL_OK, or why not. */
int df_decimal_parse(df_str text, df_decimal *out);
/* df_decimal_valid reports whether DynamoDB can store d. */
int df_decimal_valid(const df_decimal *d);
/* df_decimal_error is the message of a DF_DECIMAL_* code. */
const char *df_decimal_error(int code);
df_decimal df_decimal_from_int(int64_t v);
df_decimal df_decimal_add(const df_decimal *a, const df_decimal *b);
df_decimal df_decimal_sub(const df_decimal *a, const df_decimal *b);
df_decimal df_decimal_mul(const df_decimal *a, const df_decimal *b);
df_decimal df_decimal_neg(const df_decimal *a);
/* df_decimal_round rounds to places digits after the point (negative:
 * tens, hundreds…) by mode. */
df_decimal df_decimal_round(const df_decimal *a, int places, int mode);
/* df_decimal_cmp is -1, 0 or +1. */
int df_decimal_cmp(const df_decimal *a, const df_decimal *b);
int df_decimal_sign(const df_decimal *a);
/* df_decimal_text writes d in plain notation (as DynamoDB returns numbers:
 * "12.5", "-0.001", "300") into buf and returns its length (the length it
 * needs when cap is smaller; "too long" for a marked result). */
size_t df_decimal_text(const df_decimal *d, char *buf, size_t cap);
/* df_decimal_str is the text in df_alloc'd memory. */
df_str df_decimal_str(const df_decimal *d);

/* ---- numbers ---- */

/* df_parse_i64 parses an integer in any form DynamoDB writes ("12",
 * "1e3"), as the Go SDK does; df_parse_f64 a float. */
bool df_parse_i64(df_str text, int64_t *out);
bool df_parse_f64(df_str text, double *out);
/* df_format_f64 writes f as Go's strconv.FormatFloat(f, 'g', -1, 64). */
df_str df_format_f64(double f);

/* ---- errors ---- */

/* df_error is a typed domain error: its tag names its type. */
typedef struct df_error {
    df_str tag;
    df_str message;
} df_error;

/* ---- writing a response ---- */

/* df_buf is a growable byte buffer (malloc/realloc). */
typedef struct df_buf {
    uint8_t *p;
    size_t len, cap;
} df_buf;

void df_buf_byte(df_buf *b, uint8_t c);
void df_buf_write(df_buf *b, const void *p, size_t n);
void df_buf_uvarint(df_buf *b, uint64_t x);
void df_buf_str(df_buf *b, df_str s);

/* df_attrs writes an item's attributes (a key, a to_item item, a map
 * effect) in the order given; give each name once. */
typedef struct df_attrs {
    df_buf *b;
    size_t at;
    uint64_t n;
    bool opt;
    df_str err; /* the first error (ptr NULL: none) */
} df_attrs;

void df_attrs_s(df_attrs *a, const char *name, df_str v);
void df_attrs_cs(df_attrs *a, const char *name, const char *v);
void df_attrs_n(df_attrs *a, const char *name, df_str text);
void df_attrs_int(df_attrs *a, const char *name, int64_t v);
void df_attrs_f64(df_attrs *a, const char *name, double v);
/* df_attrs_decimal fails the item when DynamoDB cannot store v. */
void df_attrs_decimal(df_attrs *a, const char *name, const df_decimal *v);
void df_attrs_bool(df_attrs *a, const char *name, bool v);
void df_attrs_null(df_attrs *a, const char *name);
void df_attrs_bytes(df_attrs *a, const char *name, df_str v);
void df_attrs_value(df_attrs *a, const char *name, const df_value *v);
/* df_attrs_item writes every attribute of an item, in ascending name
 * order. */
void df_attrs_item(df_attrs *a, const df_item *it);
/* df_attrs_map_begin starts map attribute name, written through m and
 * ended by df_attrs_map_end(a, m). */
void df_attrs_map_begin(df_attrs *a, const char *name, df_attrs *m);
void df_attrs_map_end(df_attrs *a, df_attrs *m);

/* df_effects writes an applied event's outbox effects: a list of values,
 * usually maps. */
typedef struct df_effects {
    df_buf *b;
    size_t at;
    uint64_t n;
    df_str err;
} df_effects;

void df_effects_value(df_effects *fx, const df_value *v);
/* df_effects_map_begin starts a map effect, written through m and ended
 * by df_effects_map_end(fx, m). */
void df_effects_map_begin(df_effects *fx, df_attrs *m);
void df_effects_map_end(df_effects *fx, df_attrs *m);

/* ---- typed fields: a struct mapped to an item's attributes ---- */

/* The field types of a df_field, as the Go SDK maps Go types. */
enum {
    DF_T_STR = 1,     /* df_str, an S (read as a view of the request) */
    DF_T_I64 = 2,     /* int64_t, an N */
    DF_T_F64 = 3,     /* double, an N (Go's shortest form) */
    DF_T_BOOL = 4,    /* bool, a BOOL */
    DF_T_DECIMAL = 5, /* df_decimal, an N, exactly */
    DF_T_NUMBER = 6,  /* df_str, an N kept as its text */
    DF_T_BYTES = 7    /* df_str, a B */
};

/* df_field maps one member of a struct to an attribute. */
typedef struct df_field {
    const char *name;
    int type;
    size_t offset;
} df_field;

/* DF_FIELD(struct, member, "name", DF_T_…) builds a df_field. */
#define DF_FIELD(s, member, name, type) { (name), (type), offsetof(s, member) }

/* df_fields is a struct's field table. Attributes are written in its
 * order; on reading, attributes without a field are ignored, fields
 * without an attribute keep their value, and NULL reads as zero. */
typedef struct df_fields {
    const df_field *fields;
    size_t n;
} df_fields;

/* df_decode_fields reads an encoded optional item into the struct at dst;
 * false with *err set (tag "Error", the Go SDK's decoding message) when a
 * value does not fit its field. */
bool df_decode_fields(const df_fields *f, void *dst, df_str item, df_error *err);
/* df_attrs_fields writes the struct at src's attributes. */
void df_attrs_fields(df_attrs *a, const df_fields *f, const void *src);

/* ---- the projection ---- */

/* df_source is one source: a stream, the event types it folds, its mode
 * ("fold" or "latest"; NULL: "fold"), and optionally the composite fields
 * of its stream ids. */
typedef struct df_source {
    const char *name;
    const char *stream;
    const char *const *event_types;
    size_t n_event_types;
    const char *mode;
    const char *const *composite;
    size_t n_composite;
} df_source;

/* df_event is one event, its strings views of the request. data and
 * metadata are encoded optional items (len 0: absent). */
typedef struct df_event {
    df_str stream, stream_id, type, timestamp;
    uint64_t version;
    df_str data, metadata;
    const df_source *source;
} df_event;

/* df_ctx is what a callback knows besides event and state: the source,
 * the stream instance and the row's key (an encoded optional item; len 0
 * in key calls). */
typedef struct df_ctx {
    const df_source *source;
    df_str source_name, stream_id, key;
} df_ctx;

/* The data accessors of an event: false when the attribute is absent or of
 * another kind (df_event_decimal also when it is not a number DynamoDB
 * stores). */
bool df_event_str(const df_event *e, const char *name, df_str *out);
bool df_event_num(const df_event *e, const char *name, df_str *out);
bool df_event_decimal(const df_event *e, const char *name, df_decimal *out);
bool df_event_int(const df_event *e, const char *name, int64_t *out);
bool df_event_f64(const df_event *e, const char *name, double *out);
bool df_event_bool(const df_event *e, const char *name, bool *out);
/* df_event_decode maps the data into the struct at dst (see df_fields); a
 * value that does not fit its field fails with "event data: attribute
 * \"qty\": cannot decode S into int64 (the event's data does not match the
 * plugin's type)", as the Go SDK's Event.Decode. */
bool df_event_decode(const df_event *e, const df_fields *f, void *dst, df_error *err);

/* df_stream_key splits a stream id into the source's composite fields
 * (values[i] for composite[i], at most max of them): false with *err set
 * when it does not split. */
bool df_stream_key(const df_ctx *ctx, df_str *values, size_t max, df_error *err);

/* What evolve did with an event. */
typedef enum df_step {
    DF_APPLIED = 1,    /* the state is the new one */
    DF_SKIP = 2,       /* the state is unchanged (changes are dropped) */
    DF_REMOVE_ROW = 3, /* the row becomes a tombstone */
    DF_FAILED = 4      /* *err says why: rejected if terminal accepts it, else the row fails */
} df_step;

/* df_fail sets *err (the message formatted into df_alloc'd memory) and
 * returns DF_FAILED. */
df_step df_fail(df_error *err, const char *tag, const char *fmt, ...)
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* What key decided. */
enum { DF_KEY_ERROR = -1, DF_KEY_NONE = 0, DF_KEY = 1 };

/* df_projection is a plugin: name, version, sources (single-source: one,
 * and multi false), the state's size and field table, and the callbacks.
 * key, initial and evolve are required; the others may be NULL. */
typedef struct df_projection {
    const char *name;
    const char *version;
    const df_source *sources;
    size_t n_sources;
    bool multi;
    size_t state_size;
    const df_fields *state;
    /* key writes the row's key and returns DF_KEY, or DF_KEY_NONE (no
     * row), or DF_KEY_ERROR with *err set. */
    int (*key)(const df_event *e, const df_ctx *ctx, df_attrs *key, df_error *err);
    /* initial fills a zeroed state: single-source before e, the first
     * event of the row (ctx->stream_id its instance); multi-source from
     * the key alone (e NULL). */
    void (*initial)(void *state, const df_event *e, const df_ctx *ctx);
    /* evolve folds e into state. */
    df_step (*evolve)(void *state, const df_event *e, const df_ctx *ctx, df_error *err);
    /* terminal: whether an evolve error rejects its event (NULL: none). */
    bool (*terminal)(const df_error *err, const df_ctx *ctx);
    /* to_item writes the stored item (NULL: the state's fields). */
    void (*to_item)(const void *state, const df_ctx *ctx, df_attrs *item);
    /* effects writes an applied event's effects (next NULL: the row was
     * removed). NULL: none. */
    void (*effects)(const df_event *e, const void *next, const df_ctx *ctx, df_effects *fx);
} df_projection;

/* dynafold_projection is defined by the plugin: the projection the module
 * exports. */
const df_projection *dynafold_projection(void);

/* df_call runs export name ("describe", "key", "evolve", "initial",
 * "terminal", "to_item", "effects") of p on request in, appending the
 * response to out; it returns NULL, or the guest-level error (status 1). */
const char *df_call(const df_projection *p, const char *name, df_str in, df_buf *out);

/* df_export_call runs export name on the request at ptr (len bytes, from
 * dynafold_alloc) with the raw calling convention (ABI.md §2), for a
 * plugin that defines an export itself: built with
 * -DDYNAFOLD_NO_EVOLVE_EXPORT, dynafold.c leaves the evolve export to the
 * plugin, which may call df_export_call("evolve", ptr, len). Wasm only. */
int64_t df_export_call(const char *name, int32_t ptr, int32_t len);

/* df_out_of_memory writes "out of memory" to stderr and traps: the host
 * then reports the plugin's memory limit reached (the SDK calls it when
 * malloc fails; so may a plugin). */
void df_out_of_memory(void);

/* ---- logging (ABI.md §7) ---- */

enum { DF_LOG_DEBUG = 0, DF_LOG_INFO = 1, DF_LOG_WARN = 2, DF_LOG_ERROR = 3 };

/* df_log sends msg to the host's log (imported as dynafold.log only when a
 * plugin calls it; natively it goes to stderr). */
void df_log(int level, df_str msg);

/* ---- tests: folding natively, and the self_test export ---- */

/* df_test builds a test of a projection: events, then the rows they give. */
typedef struct df_test df_test;
/* df_tev is an event of a test, built by df_test_event. */
typedef struct df_tev df_tev;
/* df_trow is an expected row, built by df_test_row. */
typedef struct df_trow df_trow;

/* df_test_event adds version v of stream instance id of stream, of type
 * typ (data {_tag: typ}, read by the first source of stream). */
df_tev *df_test_event(df_test *t, const char *stream, const char *id, uint64_t v, const char *typ);
void df_tev_s(df_tev *e, const char *name, const char *v);
void df_tev_n(df_tev *e, const char *name, const char *text);
void df_tev_bool(df_tev *e, const char *name, bool v);
void df_tev_value(df_tev *e, const char *name, df_value *v);
/* df_tev_source sets the source that reads the event. */
void df_tev_source(df_tev *e, const char *source);
/* df_test_row expects a row with key {pk, sk} (S attributes; sk NULL: a
 * key of pk alone). */
df_trow *df_test_row(df_test *t, const char *pk_name, const char *pk, const char *sk_name, const char *sk);
void df_trow_s(df_trow *r, const char *name, const char *v);
void df_trow_n(df_trow *r, const char *name, const char *text);
void df_trow_bool(df_trow *r, const char *name, bool v);
void df_trow_value(df_trow *r, const char *name, df_value *v);

/* df_case is a named test: build adds its events and expected rows. */
typedef struct df_case {
    const char *name;
    void (*build)(df_test *t);
} df_case;

/* df_test_case folds a case's events through p as the host folds a batch
 * into an empty read model, and returns NULL when the rows are as
 * expected, else the differences, one per line. */
const char *df_test_case(const df_projection *p, const df_case *c);
/* df_test_main runs cases natively, prints one line each, and returns 0
 * when all passed (for a test program's main). */
int df_test_main(const df_projection *p, const df_case *cases, size_t n);
/* With -DDYNAFOLD_SELF_TEST the module exports self_test, which runs the
 * cases dynafold_self_tests returns (defined by the plugin) when the host
 * validates the module or before a hot swap. */
const df_case *dynafold_self_tests(size_t *n);

#ifdef __cplusplus
}
#endif

#endif /* DYNAFOLD_H */

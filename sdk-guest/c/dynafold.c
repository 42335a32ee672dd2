/*
 * dynafold.c: the C guest SDK of dynafold (see dynafold.h).
 *
 * Sections: memory and strings; the encoding (reading and writing);
 * values and items; exact decimals; numbers; typed fields; events; the
 * exports on encoded messages (df_call); the Wasm glue; logging; tests.
 */
#include "dynafold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __wasm__
#include <sched.h>
#endif

#define DF_MAX_DEPTH 64

typedef unsigned __int128 df_u128;

void df_out_of_memory(void) {
    /* the host reports "out of memory" as its memory limit reached */
    static const char msg[] = "dynafold: out of memory\n";
    fwrite(msg, 1, sizeof msg - 1, stderr);
#if defined(__clang__) || defined(__GNUC__)
    __builtin_trap();
#else
    abort();
#endif
}

static void df_oom(void) { df_out_of_memory(); }

/* ---- memory: an arena freed when a call into the module starts ---- */

typedef struct df_chunk {
    struct df_chunk *next;
    size_t used, cap;
} df_chunk;

static df_chunk *df_arena;

static void df_arena_reset(void) {
    if (!df_arena) return;
    df_chunk *c = df_arena->next;
    while (c) {
        df_chunk *n = c->next;
        free(c);
        c = n;
    }
    df_arena->next = NULL;
    df_arena->used = 0;
}

void *df_alloc(size_t n) {
    n = (n + 15) & ~(size_t)15;
    if (!df_arena || df_arena->used + n > df_arena->cap) {
        size_t cap = n > 65536 ? n : 65536;
        df_chunk *c = (df_chunk *)malloc(sizeof(df_chunk) + 16 + cap);
        if (!c) return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = df_arena;
        df_arena = c; /* the newest chunk is the one a reset keeps */
    }
    char *base = (char *)(df_arena + 1);
    base += (16 - ((uintptr_t)base & 15)) & 15;
    void *p = base + df_arena->used;
    df_arena->used += n;
    return p;
}

static void *df_xalloc(size_t n) {
    void *p = df_alloc(n ? n : 1);
    if (!p) df_oom();
    return p;
}

/* ---- strings ---- */

df_str df_cstr(const char *s) {
    df_str r = {s, s ? strlen(s) : 0};
    return r;
}

bool df_str_equal(df_str a, df_str b) {
    if (a.len != b.len) return false;
    for (size_t i = 0; i < a.len; i++) /* short names: cheaper than a call to memcmp */
        if (a.ptr[i] != b.ptr[i]) return false;
    return true;
}

static df_str df_vsprintf(const char *fmt, va_list ap) {
    va_list ap2;
    va_copy(ap2, ap);
    char small[256];
    int n = vsnprintf(small, sizeof small, fmt, ap);
    df_str r = {"", 0};
    if (n < 0) {
        va_end(ap2);
        return r;
    }
    char *p = (char *)df_xalloc((size_t)n + 1);
    if ((size_t)n < sizeof small) {
        memcpy(p, small, (size_t)n + 1);
    } else {
        vsnprintf(p, (size_t)n + 1, fmt, ap2);
    }
    va_end(ap2);
    r.ptr = p;
    r.len = (size_t)n;
    return r;
}

df_str df_sprintf(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    df_str r = df_vsprintf(fmt, ap);
    va_end(ap);
    return r;
}

static bool df_printable(uint32_t r) {
    return !(r < 0xa0 || r == 0xad || (r >= 0x200b && r <= 0x200f) || (r >= 0x2028 && r <= 0x202e) ||
             (r >= 0x2060 && r <= 0x206f) || r == 0xfeff || (r >= 0xfff9 && r <= 0xfffb) ||
             (r >= 0x2000 && r <= 0x200a) || r == 0x3000 || r == 0x1680 || r == 0x205f);
}

df_str df_quote(df_str s) {
    char *out = (char *)df_xalloc(s.len * 10 + 3);
    size_t o = 0;
    const uint8_t *b = (const uint8_t *)s.ptr;
    out[o++] = '"';
    size_t i = 0;
    while (i < s.len) {
        uint32_t c = b[i];
        if (c < 0x80) {
            i++;
            if (c == '"' || c == '\\') {
                out[o++] = '\\';
                out[o++] = (char)c;
            } else if (c >= 0x20 && c < 0x7f) {
                out[o++] = (char)c;
            } else {
                const char *esc = NULL;
                switch (c) {
                case 7: esc = "\\a"; break;
                case 8: esc = "\\b"; break;
                case 12: esc = "\\f"; break;
                case 10: esc = "\\n"; break;
                case 13: esc = "\\r"; break;
                case 9: esc = "\\t"; break;
                case 11: esc = "\\v"; break;
                }
                if (esc) {
                    out[o++] = esc[0];
                    out[o++] = esc[1];
                } else {
                    o += (size_t)sprintf(out + o, "\\x%02x", c);
                }
            }
            continue;
        }
        size_t size = 0;
        uint32_t r = 0;
        if (c >= 0xc2 && c <= 0xdf) {
            size = 2;
            r = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            size = 3;
            r = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            size = 4;
            r = c & 0x07;
        }
        bool valid = size > 0 && i + size <= s.len;
        for (size_t j = 1; valid && j < size; j++) {
            uint32_t x = b[i + j];
            if ((x & 0xc0) != 0x80) valid = false;
            r = (r << 6) | (x & 0x3f);
        }
        if (valid && ((size == 3 && (r < 0x800 || (r >= 0xd800 && r <= 0xdfff))) || (size == 4 && (r < 0x10000 || r > 0x10ffff))))
            valid = false;
        if (!valid) {
            o += (size_t)sprintf(out + o, "\\x%02x", c);
            i++;
            continue;
        }
        if (!df_printable(r)) {
            if (r < 0x10000)
                o += (size_t)sprintf(out + o, "\\u%04x", r);
            else
                o += (size_t)sprintf(out + o, "\\U%08x", r);
        } else {
            memcpy(out + o, b + i, size);
            o += size;
        }
        i += size;
    }
    out[o++] = '"';
    out[o] = 0;
    df_str q = {out, o};
    return q;
}

/* ---- writing ---- */

static void df_buf_grow(df_buf *b, size_t n) {
    if (b->len + n <= b->cap) return;
    size_t cap = b->cap ? b->cap * 2 : 256;
    while (cap < b->len + n) cap *= 2;
    uint8_t *p = (uint8_t *)realloc(b->p, cap);
    if (!p) df_oom();
    b->p = p;
    b->cap = cap;
}

void df_buf_byte(df_buf *b, uint8_t c) {
    if (b->len == b->cap) df_buf_grow(b, 1);
    b->p[b->len++] = c;
}

void df_buf_write(df_buf *b, const void *p, size_t n) {
    if (n == 0) return;
    df_buf_grow(b, n);
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

void df_buf_uvarint(df_buf *b, uint64_t x) {
    df_buf_grow(b, 10);
    while (x >= 0x80) {
        b->p[b->len++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    b->p[b->len++] = (uint8_t)x;
}

void df_buf_str(df_buf *b, df_str s) {
    df_buf_grow(b, s.len + 10);
    if (s.len < 0x80) {
        b->p[b->len++] = (uint8_t)s.len;
    } else {
        df_buf_uvarint(b, s.len);
    }
    if (s.len) memcpy(b->p + b->len, s.ptr, s.len);
    b->len += s.len;
}

static void df_buf_cstr(df_buf *b, const char *s) { df_buf_str(b, df_cstr(s)); }

/* df_patch_count writes count n at offset at, where one byte was reserved. */
static void df_patch_count(df_buf *b, size_t at, uint64_t n) {
    if (n < 0x80) {
        b->p[at] = (uint8_t)n;
        return;
    }
    uint8_t v[10];
    size_t k = 0;
    uint64_t x = n;
    while (x >= 0x80) {
        v[k++] = (uint8_t)(x | 0x80);
        x >>= 7;
    }
    v[k++] = (uint8_t)x;
    df_buf_grow(b, k - 1);
    memmove(b->p + at + k, b->p + at + 1, b->len - at - 1);
    memcpy(b->p + at, v, k);
    b->len += k - 1;
}

/* ---- reading ---- */

void df_reader_init(df_reader *r, df_str in) {
    r->buf = (const uint8_t *)in.ptr;
    r->len = in.len;
    r->off = 0;
    r->failed = false;
    r->err[0] = 0;
}

void df_reader_fail(df_reader *r, const char *fmt, ...) {
    if (!r->failed) {
        char what[160];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        snprintf(r->err, sizeof r->err, "abi: malformed encoding: %s at byte %zu", what, r->off);
        r->failed = true;
    }
    r->off = r->len;
}

uint8_t df_read_byte(df_reader *r) {
    if (r->off < r->len) return r->buf[r->off++];
    df_reader_fail(r, "unexpected end");
    return 0;
}

uint64_t df_read_uvarint(df_reader *r) {
    if (r->off < r->len && r->buf[r->off] < 0x80) return r->buf[r->off++];
    uint64_t x = 0;
    unsigned shift = 0;
    for (int i = 0;; i++) {
        if (r->off >= r->len) {
            df_reader_fail(r, "unexpected end in varint");
            return 0;
        }
        uint8_t b = r->buf[r->off++];
        if (i == 9 && b > 1) {
            df_reader_fail(r, "varint overflows 64 bits");
            return 0;
        }
        if (b < 0x80) return x | (uint64_t)b << shift;
        x |= (uint64_t)(b & 0x7f) << shift;
        shift += 7;
    }
}

df_str df_read_str(df_reader *r) {
    df_str s = {"", 0};
    size_t o = r->off;
    if (o < r->len) {
        size_t n = r->buf[o];
        if (n < 0x80 && n < r->len - o) {
            r->off = o + 1 + n;
            s.ptr = (const char *)r->buf + o + 1;
            s.len = n;
            return s;
        }
    }
    uint64_t n = df_read_uvarint(r);
    if (r->failed) return s;
    if (n > r->len - r->off) {
        df_reader_fail(r, "length %llu exceeds the input", (unsigned long long)n);
        return s;
    }
    s.ptr = (const char *)r->buf + r->off;
    s.len = (size_t)n;
    r->off += (size_t)n;
    return s;
}

bool df_read_bool(df_reader *r) {
    uint8_t b = df_read_byte(r);
    if (b > 1) {
        df_reader_fail(r, "bad bool");
        return false;
    }
    return b == 1;
}

uint32_t df_read_u32(df_reader *r) {
    if (r->off + 4 <= r->len) {
        const uint8_t *b = r->buf + r->off;
        r->off += 4;
        return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
    }
    df_reader_fail(r, "unexpected end");
    return 0;
}

df_str df_read_sized(df_reader *r) {
    df_str s = {"", 0};
    uint32_t n = df_read_u32(r);
    if (r->failed) return s;
    if (n > r->len - r->off) {
        df_reader_fail(r, "unexpected end");
        return s;
    }
    s.ptr = (const char *)r->buf + r->off;
    s.len = n;
    r->off += n;
    return s;
}

size_t df_read_count(df_reader *r, size_t min) {
    uint64_t n = df_read_uvarint(r);
    if (min < 1) min = 1;
    if (n > (r->len - r->off) / min) {
        df_reader_fail(r, "count %llu exceeds the input", (unsigned long long)n);
        return 0;
    }
    return (size_t)n;
}

static void df_skip(df_reader *r, int depth);

void df_skip_payload(df_reader *r, int kind, int depth) {
    if (r->failed) return;
    switch (kind) {
    case DF_ABSENT:
    case DF_NULL:
        break;
    case DF_S:
    case DF_N:
    case DF_B:
        df_read_str(r);
        break;
    case DF_BOOL:
        df_read_bool(r);
        break;
    case DF_M: {
        if (depth + 1 > DF_MAX_DEPTH) {
            df_reader_fail(r, "nesting deeper than %d", DF_MAX_DEPTH);
            return;
        }
        size_t n = df_read_count(r, 2);
        for (size_t i = 0; i < n && !r->failed; i++) {
            df_read_str(r);
            df_skip(r, depth + 1);
        }
        break;
    }
    case DF_L: {
        size_t n = df_read_count(r, 1);
        for (size_t i = 0; i < n && !r->failed; i++) df_skip(r, depth + 1);
        break;
    }
    case DF_SS:
    case DF_NS:
    case DF_BS: {
        size_t n = df_read_count(r, 1);
        for (size_t i = 0; i < n && !r->failed; i++) df_read_str(r);
        break;
    }
    default:
        df_reader_fail(r, "unknown kind %d", kind);
    }
}

static void df_skip(df_reader *r, int depth) {
    if (depth > DF_MAX_DEPTH) {
        df_reader_fail(r, "nesting deeper than %d", DF_MAX_DEPTH);
        return;
    }
    df_skip_payload(r, df_read_byte(r), depth);
}

/* df_read_opt_count reads an optional item's header: false when absent. */
static bool df_read_opt_count(df_reader *r, size_t *n) {
    uint64_t c = df_read_uvarint(r);
    if (c == 0 || r->failed) return false;
    if (c - 1 > (r->len - r->off) / 2) {
        df_reader_fail(r, "count %llu exceeds the input", (unsigned long long)(c - 1));
        return false;
    }
    *n = (size_t)(c - 1);
    return true;
}

/* df_skip_opt_item skips an optional item and returns its bytes. */
static df_str df_skip_opt_item(df_reader *r) {
    size_t start = r->off, n = 0;
    if (df_read_opt_count(r, &n)) {
        for (size_t i = 0; i < n && !r->failed; i++) {
            df_read_str(r);
            df_skip(r, 1);
        }
    }
    df_str s = {(const char *)r->buf + start, r->off - start};
    return s;
}

const char *df_kind_name(int k) {
    static const char *const names[] = {"", "S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"};
    return k >= 0 && k <= 10 ? names[k] : "?";
}

/* ---- values and items ---- */

static bool df_read_value(df_reader *r, df_value *v, int depth);

static int df_name_cmp(df_str a, df_str b) {
    size_t n = a.len < b.len ? a.len : b.len;
    int c = n ? memcmp(a.ptr, b.ptr, n) : 0;
    if (c) return c;
    return a.len < b.len ? -1 : a.len > b.len;
}

static int df_attr_cmp(const void *a, const void *b) {
    return df_name_cmp(((const df_attr *)a)->name, ((const df_attr *)b)->name);
}

static bool df_read_entries(df_reader *r, size_t n, int depth, df_attr **out) {
    if (depth > DF_MAX_DEPTH) {
        df_reader_fail(r, "nesting deeper than %d", DF_MAX_DEPTH);
        return false;
    }
    df_attr *a = (df_attr *)df_xalloc(n * sizeof(df_attr));
    for (size_t i = 0; i < n; i++) {
        a[i].name = df_read_str(r);
        a[i].value = (df_value *)df_xalloc(sizeof(df_value));
        if (!df_read_value(r, a[i].value, depth)) return false;
    }
    if (n > 1) {
        df_attr *sorted = (df_attr *)df_xalloc(n * sizeof(df_attr));
        memcpy(sorted, a, n * sizeof(df_attr));
        qsort(sorted, n, sizeof(df_attr), df_attr_cmp);
        for (size_t i = 1; i < n; i++) {
            if (df_name_cmp(sorted[i - 1].name, sorted[i].name) == 0) {
                df_str q = df_quote(sorted[i].name);
                df_reader_fail(r, "duplicate attribute %.*s", (int)q.len, q.ptr);
                return false;
            }
        }
    }
    *out = a;
    return !r->failed;
}

static bool df_read_payload(df_reader *r, int k, df_value *v, int depth) {
    memset(v, 0, sizeof *v);
    v->kind = (uint8_t)k;
    if (r->failed) return false;
    switch (k) {
    case DF_S:
    case DF_N:
    case DF_B:
        v->s = df_read_str(r);
        break;
    case DF_BOOL:
        v->b = df_read_bool(r);
        break;
    case DF_NULL:
        break;
    case DF_M:
        v->n = df_read_count(r, 2);
        if (!df_read_entries(r, v->n, depth + 1, &v->attrs)) return false;
        break;
    case DF_L:
        if (depth >= DF_MAX_DEPTH) {
            df_reader_fail(r, "nesting deeper than %d", DF_MAX_DEPTH);
            return false;
        }
        v->n = df_read_count(r, 1);
        v->items = (df_value *)df_xalloc(v->n * sizeof(df_value));
        for (size_t i = 0; i < v->n; i++)
            if (!df_read_value(r, &v->items[i], depth + 1)) return false;
        break;
    case DF_SS:
    case DF_NS:
    case DF_BS:
        v->n = df_read_count(r, 1);
        v->strs = (df_str *)df_xalloc(v->n * sizeof(df_str));
        for (size_t i = 0; i < v->n; i++) v->strs[i] = df_read_str(r);
        break;
    case DF_ABSENT:
        df_reader_fail(r, "an absent value inside an item");
        return false;
    default:
        df_reader_fail(r, "unknown kind %d", k);
        return false;
    }
    return !r->failed;
}

static bool df_read_value(df_reader *r, df_value *v, int depth) {
    int k = df_read_byte(r);
    return df_read_payload(r, k, v, depth);
}

static bool df_read_opt_item(df_reader *r, df_item *out) {
    memset(out, 0, sizeof *out);
    size_t n = 0;
    if (!df_read_opt_count(r, &n)) return !r->failed;
    out->present = true;
    out->n = n;
    return df_read_entries(r, n, 0, &out->attrs);
}

const char *df_item_decode(df_str raw, df_item *out) {
    df_reader r;
    df_reader_init(&r, raw);
    df_read_opt_item(&r, out);
    if (!r.failed && r.off != r.len) df_reader_fail(&r, "%zu trailing bytes", r.len - r.off);
    if (!r.failed) return NULL;
    char *e = (char *)df_xalloc(strlen(r.err) + 1);
    strcpy(e, r.err);
    return e;
}

static void df_value_encode(df_buf *b, const df_value *v);

static void df_entries_encode(df_buf *b, const df_attr *attrs, size_t n) {
    const df_attr *a = attrs;
    if (n > 1) {
        df_attr *sorted = (df_attr *)df_xalloc(n * sizeof(df_attr));
        memcpy(sorted, attrs, n * sizeof(df_attr));
        qsort(sorted, n, sizeof(df_attr), df_attr_cmp);
        a = sorted;
    }
    for (size_t i = 0; i < n; i++) {
        df_buf_str(b, a[i].name);
        df_value_encode(b, a[i].value);
    }
}

static void df_value_encode(df_buf *b, const df_value *v) {
    df_buf_byte(b, v->kind);
    switch (v->kind) {
    case DF_S:
    case DF_N:
    case DF_B:
        df_buf_str(b, v->s);
        break;
    case DF_BOOL:
        df_buf_byte(b, v->b ? 1 : 0);
        break;
    case DF_M:
        df_buf_uvarint(b, v->n);
        df_entries_encode(b, v->attrs, v->n);
        break;
    case DF_L:
        df_buf_uvarint(b, v->n);
        for (size_t i = 0; i < v->n; i++) df_value_encode(b, &v->items[i]);
        break;
    case DF_SS:
    case DF_NS:
    case DF_BS:
        df_buf_uvarint(b, v->n);
        for (size_t i = 0; i < v->n; i++) df_buf_str(b, v->strs[i]);
        break;
    }
}

/* df_item_encode appends an optional item, names in ascending byte order. */
static void df_item_encode(df_buf *b, const df_item *it) {
    if (!it->present) {
        df_buf_byte(b, 0);
        return;
    }
    df_buf_uvarint(b, it->n + 1);
    df_entries_encode(b, it->attrs, it->n);
}

const df_value *df_item_get(const df_item *it, const char *name) {
    for (size_t i = 0; i < it->n; i++)
        if (df_eq(it->attrs[i].name, name)) return it->attrs[i].value;
    return NULL;
}

void df_item_put(df_item *it, const char *name, df_value *v) {
    it->present = true;
    for (size_t i = 0; i < it->n; i++) {
        if (df_eq(it->attrs[i].name, name)) {
            it->attrs[i].value = v;
            return;
        }
    }
    df_attr *a = (df_attr *)df_xalloc((it->n + 1) * sizeof(df_attr));
    if (it->n) memcpy(a, it->attrs, it->n * sizeof(df_attr));
    size_t len = strlen(name);
    char *copy = (char *)df_xalloc(len + 1);
    memcpy(copy, name, len + 1);
    a[it->n].name.ptr = copy;
    a[it->n].name.len = len;
    a[it->n].value = v;
    it->attrs = a;
    it->n++;
}

static df_value *df_value_new(int kind) {
    df_value *v = (df_value *)df_xalloc(sizeof(df_value));
    memset(v, 0, sizeof *v);
    v->kind = (uint8_t)kind;
    return v;
}

static df_str df_copy(const char *s) {
    size_t n = strlen(s);
    char *p = (char *)df_xalloc(n + 1);
    memcpy(p, s, n + 1);
    df_str r = {p, n};
    return r;
}

df_value *df_value_s(const char *s) {
    df_value *v = df_value_new(DF_S);
    v->s = df_copy(s);
    return v;
}

df_value *df_value_n(const char *text) {
    df_value *v = df_value_new(DF_N);
    v->s = df_copy(text);
    return v;
}

df_value *df_value_bool(bool b) {
    df_value *v = df_value_new(DF_BOOL);
    v->b = b;
    return v;
}

df_value *df_value_null(void) { return df_value_new(DF_NULL); }

bool df_item_equal(const df_item *a, const df_item *b) {
    if (a->present != b->present || a->n != b->n) return false;
    for (size_t i = 0; i < a->n; i++) {
        const df_value *w = NULL;
        for (size_t j = 0; j < b->n; j++) {
            if (df_str_equal(a->attrs[i].name, b->attrs[j].name)) {
                w = b->attrs[j].value;
                break;
            }
        }
        if (!w || !df_value_equal(a->attrs[i].value, w)) return false;
    }
    return true;
}

bool df_value_equal(const df_value *a, const df_value *b) {
    if (a->kind != b->kind) return false;
    switch (a->kind) {
    case DF_S:
    case DF_N:
    case DF_B:
        return df_str_equal(a->s, b->s);
    case DF_BOOL:
        return a->b == b->b;
    case DF_M: {
        df_item x = {true, a->n, a->attrs}, y = {true, b->n, b->attrs};
        return df_item_equal(&x, &y);
    }
    case DF_L:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (!df_value_equal(&a->items[i], &b->items[i])) return false;
        return true;
    case DF_SS:
    case DF_NS:
    case DF_BS:
        if (a->n != b->n) return false;
        for (size_t i = 0; i < a->n; i++)
            if (!df_str_equal(a->strs[i], b->strs[i])) return false;
        return true;
    }
    return true;
}

/* ---- values read in place ---- */

static size_t df_payload_len(int kind, df_str payload) {
    df_reader r;
    df_reader_init(&r, payload);
    df_skip_payload(&r, kind, 1);
    return r.off;
}

static inline bool df_bytes_eq(const uint8_t *a, const char *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (a[i] != (uint8_t)b[i]) return false;
    return true;
}

bool df_find(df_str item, const char *name, df_ref *out) {
    size_t nl = 0;
    while (name[nl]) nl++;
    const uint8_t *b = (const uint8_t *)item.ptr;
    size_t len = item.len;
    /* the common case inline: short names, scalar values */
    if (len > 0 && b[0] < 0x80) {
        size_t n = b[0] ? b[0] - 1u : 0, o = 1;
        for (size_t i = 0; i < n; i++) {
            if (o >= len || b[o] >= 0x80) goto slow;
            size_t kl = b[o];
            if (o + 1 + kl >= len) goto slow;
            const uint8_t *key = b + o + 1;
            o += 1 + kl;
            int k = b[o++];
            size_t end;
            switch (k) {
            case DF_S:
            case DF_N:
            case DF_B:
                if (o >= len || b[o] >= 0x80 || (size_t)b[o] >= len - o) goto slow;
                end = o + 1 + b[o];
                break;
            case DF_NULL:
                end = o;
                break;
            case DF_BOOL:
                if (o >= len) goto slow;
                end = o + 1;
                break;
            default:
                goto slow;
            }
            if (kl == nl && df_bytes_eq(key, name, nl)) {
                out->kind = k;
                out->payload.ptr = (const char *)b + o;
                out->payload.len = end - o;
                out->at = o;
                return true;
            }
            o = end;
        }
        return false;
    }
slow:;
    df_reader r;
    df_reader_init(&r, item);
    size_t n = 0;
    if (!df_read_opt_count(&r, &n)) return false;
    for (size_t i = 0; i < n; i++) {
        df_str key = df_read_str(&r);
        int k = df_read_byte(&r);
        size_t at = r.off;
        df_skip_payload(&r, k, 1);
        if (r.failed) return false;
        if (key.len == nl && memcmp(key.ptr, name, nl) == 0) {
            out->kind = k;
            out->payload.ptr = (const char *)r.buf + at;
            out->payload.len = r.off - at;
            out->at = at;
            return true;
        }
    }
    return false;
}

static df_str df_ref_text(const df_ref *v) {
    df_reader r;
    df_reader_init(&r, v->payload);
    return df_read_str(&r);
}

bool df_ref_str(const df_ref *v, df_str *out) {
    if (v->kind != DF_S) return false;
    *out = df_ref_text(v);
    return true;
}

bool df_ref_number(const df_ref *v, df_str *out) {
    if (v->kind != DF_N) return false;
    *out = df_ref_text(v);
    return true;
}

bool df_ref_bytes(const df_ref *v, df_str *out) {
    if (v->kind != DF_B) return false;
    *out = df_ref_text(v);
    return true;
}

bool df_ref_bool(const df_ref *v, bool *out) {
    if (v->kind != DF_BOOL || v->payload.len < 1) return false;
    uint8_t b = (uint8_t)v->payload.ptr[0];
    if (b > 1) return false;
    *out = b == 1;
    return true;
}

/* ---- exact decimals ---- */

#define DF_DIGITS 38
#define DF_MAX_EXPONENT 1000000

static const uint64_t df_pow10_64[20] = {1ULL,
                                         10ULL,
                                         100ULL,
                                         1000ULL,
                                         10000ULL,
                                         100000ULL,
                                         1000000ULL,
                                         10000000ULL,
                                         100000000ULL,
                                         1000000000ULL,
                                         10000000000ULL,
                                         100000000000ULL,
                                         1000000000000ULL,
                                         10000000000000ULL,
                                         100000000000000ULL,
                                         1000000000000000ULL,
                                         10000000000000000ULL,
                                         100000000000000000ULL,
                                         1000000000000000000ULL,
                                         10000000000000000000ULL};

static df_u128 df_pow10(int k) {
    if (k < 20) return df_pow10_64[k];
    return (df_u128)df_pow10_64[19] * df_pow10_64[k - 19];
}

/* 10^38: coefficients are below it */
#define DF_LIMIT ((df_u128)10000000000000000000ULL * 10000000000000000000ULL)

static df_u128 df_coef(const df_decimal *d) { return (df_u128)d->hi << 64 | d->lo; }

static df_decimal df_zero(void) {
    df_decimal z;
    memset(&z, 0, sizeof z);
    return z;
}

static df_decimal df_too_long(void) {
    df_decimal z = df_zero();
    z.too_long = 1;
    return z;
}

/* df_mk returns ±v × 10^exp in normal form (no trailing zeros), marked too
 * long when the coefficient needs more than 38 digits. */
/* df_mk64 is df_mk of a coefficient that fits 64 bits: native divisions
 * only (a 128-bit one is a call into compiler-rt in a Wasm guest). */
static inline df_decimal df_mk64(bool neg, uint64_t s, int64_t exp) {
    df_decimal d = df_zero();
    if (s == 0) return d;
    while (s % 10 == 0) {
        s /= 10;
        exp++;
    }
    if (exp < INT32_MIN || exp > INT32_MAX) return df_too_long();
    d.lo = s;
    d.exp = (int32_t)exp;
    d.neg = neg ? 1 : 0;
    return d;
}

static df_decimal df_mk(bool neg, df_u128 v, int64_t exp) {
    if (v >> 64 == 0) return df_mk64(neg, (uint64_t)v, exp);
    while (v > UINT64_MAX && v % 10 == 0) {
        v /= 10;
        exp++;
    }
    if (v <= UINT64_MAX) return df_mk64(neg, (uint64_t)v, exp);
    if (v >= DF_LIMIT || exp < INT32_MIN || exp > INT32_MAX) return df_too_long();
    df_decimal d;
    d.hi = (uint64_t)(v >> 64);
    d.lo = (uint64_t)v;
    d.exp = (int32_t)exp;
    d.neg = neg ? 1 : 0;
    d.too_long = 0;
    return d;
}

static int df_ndigits(df_u128 v) {
    int n = 0;
    if (v <= UINT64_MAX) {
        uint64_t s = (uint64_t)v;
        while (n < 20 && s >= df_pow10_64[n]) n++;
        return n;
    }
    n = 20;
    while (n < 39 && v >= df_pow10(n)) n++;
    return n;
}

/* df_parse_any parses a decimal text; false when it is not a number. A
 * number with more than 38 significant digits is marked too long. */
static bool df_parse_any(df_str t, df_decimal *out) {
    const char *s = t.ptr;
    size_t i = 0, len = t.len;
    bool neg = false;
    if (i < len && (s[i] == '-' || s[i] == '+')) {
        neg = s[i] == '-';
        i++;
    }
    df_u128 v = 0;
    int sig = 0, zeros = 0; /* significant digits kept, zeros pending after them */
    int64_t n = 0, frac = 0;
    bool point = false, started = false;
    for (; i < len; i++) {
        char c = s[i];
        if (c >= '0' && c <= '9') {
            n++;
            if (point) frac++;
            if (c == '0') {
                if (started) zeros++;
                continue;
            }
            started = true;
            if (sig + zeros + 1 > DF_DIGITS) {
                sig = DF_DIGITS + 1; /* too long, whatever follows */
                zeros = 0;
                continue;
            }
            for (; zeros > 0; zeros--) {
                v = sig < 19 ? (df_u128)((uint64_t)v * 10) : v * 10;
                sig++;
            }
            v = sig < 19 ? (df_u128)((uint64_t)v * 10 + (unsigned)(c - '0')) : v * 10 + (unsigned)(c - '0');
            sig++;
        } else if (c == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (n == 0) return false;
    int64_t exp = 0;
    if (i < len) {
        if (s[i] != 'e' && s[i] != 'E') return false;
        i++;
        bool eneg = false;
        if (i < len && (s[i] == '-' || s[i] == '+')) {
            eneg = s[i] == '-';
            i++;
        }
        if (i == len) return false;
        for (; i < len; i++) {
            if (s[i] < '0' || s[i] > '9') return false;
            if (exp < DF_MAX_EXPONENT) exp = exp * 10 + (s[i] - '0');
        }
        if (eneg) exp = -exp;
    }
    if (sig > DF_DIGITS) {
        *out = df_too_long();
        return true;
    }
    /* the trailing zeros pending raise the exponent */
    *out = df_mk(neg, v, exp - frac + zeros);
    return true;
}

int df_decimal_valid(const df_decimal *d) {
    /* a coefficient below 10^19 with an exponent from -130 to 107 always
     * fits (zero's exponent is 0): no digit count */
    if (!d->too_long && d->hi == 0 && d->lo < 10000000000000000000ULL && d->exp >= -130 && d->exp <= 107) return DF_DECIMAL_OK;
    if (d->too_long) return DF_DECIMAL_DIGITS;
    df_u128 c = df_coef(d);
    if (c == 0) return DF_DECIMAL_OK;
    int n = df_ndigits(c);
    if (d->exp < -130 || (int64_t)d->exp + n - 1 > 125) return DF_DECIMAL_RANGE;
    return DF_DECIMAL_OK;
}

int df_decimal_parse(df_str text, df_decimal *out) {
    df_decimal d;
    if (!df_parse_any(text, &d)) return DF_DECIMAL_SYNTAX;
    int v = df_decimal_valid(&d);
    if (v != DF_DECIMAL_OK) return v;
    *out = d;
    return DF_DECIMAL_OK;
}

const char *df_decimal_error(int code) {
    switch (code) {
    case DF_DECIMAL_SYNTAX:
        return "decimal: not a number";
    case DF_DECIMAL_DIGITS:
        return "decimal: more than 38 significant digits";
    case DF_DECIMAL_RANGE:
        return "decimal: outside the range DynamoDB stores (1E-130 to 1E+126)";
    }
    return "";
}

df_decimal df_decimal_from_int(int64_t v) {
    uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    return df_mk(v < 0, m, 0);
}

df_decimal df_decimal_neg(const df_decimal *a) {
    df_decimal d = *a;
    if (df_coef(&d) != 0) d.neg = !d.neg;
    return d;
}

int df_decimal_sign(const df_decimal *a) {
    if (df_coef(a) == 0 && !a->too_long) return 0;
    return a->neg ? -1 : 1;
}

/* df_max_scalable[k] is the largest coefficient that can be scaled by
 * 10^k within 64 bits. */
static const uint64_t df_max_scalable[20] = {
    UINT64_MAX / 1ULL, UINT64_MAX / 10ULL, UINT64_MAX / 100ULL, UINT64_MAX / 1000ULL, UINT64_MAX / 10000ULL,
    UINT64_MAX / 100000ULL, UINT64_MAX / 1000000ULL, UINT64_MAX / 10000000ULL, UINT64_MAX / 100000000ULL,
    UINT64_MAX / 1000000000ULL, UINT64_MAX / 10000000000ULL, UINT64_MAX / 100000000000ULL, UINT64_MAX / 1000000000000ULL,
    UINT64_MAX / 10000000000000ULL, UINT64_MAX / 100000000000000ULL, UINT64_MAX / 1000000000000000ULL,
    UINT64_MAX / 10000000000000000ULL, UINT64_MAX / 100000000000000000ULL, UINT64_MAX / 1000000000000000000ULL,
    UINT64_MAX / 10000000000000000000ULL};

df_decimal df_decimal_add(const df_decimal *a, const df_decimal *b) {
    /* The common case: both coefficients and the one scaled fit 64 bits;
     * native arithmetic only. */
    if (!a->too_long && !b->too_long && a->hi == 0 && b->hi == 0 && a->lo != 0 && b->lo != 0) {
        uint64_t x = a->lo, y = b->lo;
        int64_t k = (int64_t)a->exp - b->exp;
        bool ok = true;
        if (k > 0) {
            ok = k < 20 && x <= df_max_scalable[k];
            if (ok) x *= df_pow10_64[k];
        } else if (k < 0) {
            ok = -k < 20 && y <= df_max_scalable[-k];
            if (ok) y *= df_pow10_64[-k];
        }
        if (ok) {
            int64_t exp = a->exp < b->exp ? a->exp : b->exp;
            if (a->neg == b->neg) {
                uint64_t sum = x + y;
                if (sum >= x) return df_mk64(a->neg, sum, exp);
                return df_mk(a->neg, (df_u128)x + y, exp);
            }
            if (x > y) return df_mk64(a->neg, x - y, exp);
            if (x < y) return df_mk64(b->neg, y - x, exp);
            return df_zero();
        }
    }
    if (a->too_long || b->too_long) return df_too_long();
    df_u128 x = df_coef(a), y = df_coef(b);
    if (y == 0) return *a;
    if (x == 0) return *b;
    int64_t ea = a->exp, eb = b->exp, exp = ea < eb ? ea : eb;
    int64_t k = ea > eb ? ea - eb : eb - ea;
    /* Aligning a coefficient beyond 128 bits means a result of more than
     * 38 digits (the other's last digit, not zero, is the result's). */
    if (k > DF_DIGITS) return df_too_long();
    df_u128 p = df_pow10((int)k), max = ~(df_u128)0;
    if (ea > eb) {
        if (x > max / p) return df_too_long();
        x *= p;
    } else if (eb > ea) {
        if (y > max / p) return df_too_long();
        y *= p;
    }
    if (a->neg == b->neg) {
        if (x > max - y) return df_too_long();
        return df_mk(a->neg, x + y, exp);
    }
    if (x > y) return df_mk(a->neg, x - y, exp);
    if (x < y) return df_mk(b->neg, y - x, exp);
    return df_zero();
}

df_decimal df_decimal_sub(const df_decimal *a, const df_decimal *b) {
    df_decimal nb = df_decimal_neg(b);
    return df_decimal_add(a, &nb);
}

/* df_digits writes v's decimal digits (most significant first) and returns
 * how many. */
static int df_digits(df_u128 v, uint8_t *out) {
    uint8_t tmp[40];
    int n = 0;
    do {
        tmp[n++] = (uint8_t)(v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++) out[i] = tmp[n - 1 - i];
    return n;
}

/* df_from_digits returns ±digits × 10^exp (digits 0–9, any zeros). */
static df_decimal df_from_digits(bool neg, const uint8_t *d, int n, int64_t exp) {
    int lo = 0, hi = n;
    while (lo < hi && d[lo] == 0) lo++;
    while (hi > lo && d[hi - 1] == 0) {
        hi--;
        exp++;
    }
    if (lo == hi) return df_zero();
    if (hi - lo > DF_DIGITS) return df_too_long();
    df_u128 v = 0;
    for (int i = lo; i < hi; i++) v = v * 10 + d[i];
    return df_mk(neg, v, exp);
}

df_decimal df_decimal_mul(const df_decimal *a, const df_decimal *b) {
    if (a->too_long || b->too_long) return df_too_long();
    df_u128 x = df_coef(a), y = df_coef(b);
    if (x == 0 || y == 0) return df_zero();
    int64_t exp = (int64_t)a->exp + b->exp;
    bool neg = a->neg != b->neg;
    if (x <= UINT64_MAX && y <= UINT64_MAX) return df_mk(neg, x * y, exp);
    uint8_t da[40], db[40], acc[80];
    int na = df_digits(x, da), nb = df_digits(y, db);
    unsigned sum[80];
    memset(sum, 0, sizeof sum);
    for (int i = na - 1; i >= 0; i--)
        for (int j = nb - 1; j >= 0; j--) sum[i + j + 1] += (unsigned)da[i] * db[j];
    for (int k = na + nb - 1; k > 0; k--) {
        sum[k - 1] += sum[k] / 10;
        sum[k] %= 10;
    }
    for (int k = 0; k < na + nb; k++) acc[k] = (uint8_t)sum[k];
    return df_from_digits(neg, acc, na + nb, exp);
}

df_decimal df_decimal_round(const df_decimal *a, int places, int mode) {
    if (a->too_long) return *a;
    df_u128 c = df_coef(a);
    int64_t target = -(int64_t)places;
    if (c == 0 || a->exp >= target) return *a;
    uint8_t d[41];
    int n = df_digits(c, d + 1);
    int64_t drop = target - a->exp; /* >= 1 */
    uint8_t first = 0;
    bool rest_zero = false;
    int kept = 0;
    if (drop <= n) {
        first = d[1 + n - drop];
        rest_zero = drop == 1;
        kept = (int)(n - drop);
    }
    /* d[0] is room for a carry; the kept digits are d[1..kept] */
    d[0] = 0;
    bool up = false;
    if (mode == DF_HALF_UP) {
        up = first >= 5;
    } else if (mode == DF_HALF_EVEN) {
        uint8_t last = kept > 0 ? d[kept] : 0;
        up = first > 5 || (first == 5 && (!rest_zero || last % 2 == 1));
    }
    if (up) {
        int i = kept;
        for (;;) {
            if (i == 0) {
                d[0] = 1;
                break;
            }
            if (d[i] < 9) {
                d[i]++;
                break;
            }
            d[i] = 0;
            i--;
        }
    }
    return df_from_digits(a->neg, d, kept + 1, target);
}

/* df_cmp_mag compares |a| and |b|. */
static int df_cmp_mag(const df_decimal *a, const df_decimal *b) {
    df_u128 x = df_coef(a), y = df_coef(b);
    if (x == 0 || y == 0) return (x != 0) - (y != 0);
    int64_t ma = (int64_t)a->exp + df_ndigits(x), mb = (int64_t)b->exp + df_ndigits(y);
    if (ma != mb) return ma < mb ? -1 : 1;
    /* the same magnitude: aligning takes at most 37 digits */
    if (a->exp > b->exp)
        x *= df_pow10((int)(a->exp - b->exp));
    else if (b->exp > a->exp)
        y *= df_pow10((int)(b->exp - a->exp));
    return x < y ? -1 : x > y;
}

int df_decimal_cmp(const df_decimal *a, const df_decimal *b) {
    int sa = df_decimal_sign(a), sb = df_decimal_sign(b);
    if (sa != sb) return sa < sb ? -1 : 1;
    int c = df_cmp_mag(a, b);
    return a->neg ? -c : c;
}

size_t df_decimal_text(const df_decimal *d, char *buf, size_t cap) {
    char tmp[64];
    size_t n = 0;
#define DF_PUT(ch)                 \
    do {                           \
        if (n < cap) buf[n] = (ch); \
        n++;                       \
    } while (0)
    if (d->too_long) {
        const char *t = "too long";
        for (; *t; t++) DF_PUT(*t);
        return n;
    }
    df_u128 c = df_coef(d);
    if (c == 0) {
        DF_PUT('0');
        return n;
    }
    if (d->neg) DF_PUT('-');
    uint8_t dig[40];
    int nd = df_digits(c, dig);
    for (int i = 0; i < nd; i++) tmp[i] = (char)('0' + dig[i]);
    int64_t exp = d->exp, p = nd + exp;
    if (exp >= 0) {
        for (int i = 0; i < nd; i++) DF_PUT(tmp[i]);
        for (int64_t i = 0; i < exp; i++) DF_PUT('0');
    } else if (p > 0) {
        for (int64_t i = 0; i < p; i++) DF_PUT(tmp[i]);
        DF_PUT('.');
        for (int64_t i = p; i < nd; i++) DF_PUT(tmp[i]);
    } else {
        DF_PUT('0');
        DF_PUT('.');
        for (int64_t i = 0; i < -p; i++) DF_PUT('0');
        for (int i = 0; i < nd; i++) DF_PUT(tmp[i]);
    }
#undef DF_PUT
    return n;
}

df_str df_decimal_str(const df_decimal *d) {
    char small[64];
    size_t n = df_decimal_text(d, small, sizeof small);
    char *p = (char *)df_xalloc(n + 1);
    if (n <= sizeof small)
        memcpy(p, small, n);
    else
        df_decimal_text(d, p, n);
    p[n] = 0;
    df_str s = {p, n};
    return s;
}

/* ---- numbers ---- */

static bool df_number_chars(df_str t) {
    if (t.len == 0) return false;
    for (size_t i = 0; i < t.len; i++) {
        char c = t.ptr[i];
        if (!((c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-')) return false;
    }
    char c = t.ptr[0] == '-' || t.ptr[0] == '+' ? (t.len > 1 ? t.ptr[1] : 0) : t.ptr[0];
    return (c >= '0' && c <= '9') || c == '.';
}

bool df_parse_f64(df_str t, double *out) {
    if (!df_number_chars(t) || t.len > 400) return false;
    char buf[401];
    memcpy(buf, t.ptr, t.len);
    buf[t.len] = 0;
    char *end = NULL;
    double f = strtod(buf, &end);
    if (end != buf + t.len) return false;
    if (f != f || f - f != 0) return false; /* NaN, ±Inf */
    *out = f;
    return true;
}

bool df_parse_i64(df_str t, int64_t *out) {
    size_t i = 0;
    bool neg = false;
    if (t.len > 0 && t.ptr[0] == '-') {
        neg = true;
        i = 1;
    }
    if (i < t.len && t.len - i <= 18) {
        int64_t v = 0;
        size_t j = i;
        for (; j < t.len && t.ptr[j] >= '0' && t.ptr[j] <= '9'; j++) v = v * 10 + (t.ptr[j] - '0');
        if (j == t.len && (t.len > 1 || !neg)) {
            *out = neg ? -v : v;
            return true;
        }
    }
    if (!df_number_chars(t) || t.len > 400) return false;
    char buf[401];
    memcpy(buf, t.ptr, t.len);
    buf[t.len] = 0;
    bool plain = true;
    for (size_t j = (buf[0] == '-' || buf[0] == '+') ? 1 : 0; j < t.len; j++)
        if (buf[j] < '0' || buf[j] > '9') plain = false;
    if (plain) {
        /* an integer too long for the fast path: exact, or out of range */
        df_decimal d;
        if (!df_parse_any(t, &d) || d.too_long || d.exp < 0) return false;
        df_u128 c = df_coef(&d);
        for (int32_t k = 0; k < d.exp; k++) {
            if (c > (df_u128)INT64_MAX + 1) return false;
            c *= 10;
        }
        if (c > (df_u128)INT64_MAX + (d.neg ? 1 : 0)) return false;
        *out = d.neg ? (int64_t)(0 - (uint64_t)c) : (int64_t)c;
        return true;
    }
    double f;
    if (!df_parse_f64(t, &f)) return false;
    if (f < -9.2233720368547758e18 || f >= 9.2233720368547758e18) return false;
    if ((double)(int64_t)f != f) return false; /* not an integer */
    *out = (int64_t)f;
    return true;
}

df_str df_format_f64(double f) {
    if (f == 0 && !__builtin_signbit(f)) return df_cstr("0");
    /* the shortest digits that read back as f: %.*e, fewest first */
    char e[40];
    int p = 1;
    for (; p <= 17; p++) {
        snprintf(e, sizeof e, "%.*e", p - 1, f);
        if (strtod(e, NULL) == f) break;
    }
    /* e is [-]d[.ddd]e±x */
    const char *s = e;
    bool neg = *s == '-';
    if (neg) s++;
    char digits[24] = {0};
    int nd = 0;
    for (; *s && *s != 'e'; s++)
        if (*s != '.') digits[nd++] = *s;
    int exp = atoi(s + 1);
    char *out = (char *)df_xalloc(48);
    size_t o = 0;
    if (neg) out[o++] = '-';
    if (exp < -4 || exp >= 6) {
        out[o++] = digits[0];
        if (nd > 1) {
            out[o++] = '.';
            memcpy(out + o, digits + 1, (size_t)nd - 1);
            o += (size_t)nd - 1;
        }
        o += (size_t)sprintf(out + o, "e%c%02d", exp < 0 ? '-' : '+', exp < 0 ? -exp : exp);
    } else {
        int dp = exp + 1;
        if (dp <= 0) {
            out[o++] = '0';
            out[o++] = '.';
            for (int i = 0; i < -dp; i++) out[o++] = '0';
            memcpy(out + o, digits, (size_t)nd);
            o += (size_t)nd;
        } else if (dp >= nd) {
            memcpy(out + o, digits, (size_t)nd);
            o += (size_t)nd;
            for (int i = 0; i < dp - nd; i++) out[o++] = '0';
        } else {
            memcpy(out + o, digits, (size_t)dp);
            o += (size_t)dp;
            out[o++] = '.';
            memcpy(out + o, digits + dp, (size_t)(nd - dp));
            o += (size_t)(nd - dp);
        }
    }
    out[o] = 0;
    df_str r = {out, o};
    return r;
}

/* ---- writing attributes ---- */

static df_attrs df_attrs_start(df_buf *b, bool opt) {
    df_attrs a;
    a.b = b;
    a.at = b->len;
    a.n = 0;
    a.opt = opt;
    a.err.ptr = NULL;
    a.err.len = 0;
    df_buf_byte(b, 0);
    return a;
}

/* df_attrs_finish writes the count; false when an attribute failed. */
static bool df_attrs_finish(df_attrs *a) {
    if (a->err.ptr) return false;
    df_patch_count(a->b, a->at, a->opt ? a->n + 1 : a->n);
    return true;
}

static void df_attrs_fail(df_attrs *a, df_str why) {
    if (!a->err.ptr) a->err = why;
}

static void df_attrs_name(df_attrs *a, const char *name) {
    a->n++;
    df_buf_cstr(a->b, name);
}

void df_attrs_s(df_attrs *a, const char *name, df_str v) {
    df_attrs_name(a, name);
    df_buf_byte(a->b, DF_S);
    df_buf_str(a->b, v);
}

void df_attrs_cs(df_attrs *a, const char *name, const char *v) { df_attrs_s(a, name, df_cstr(v)); }

void df_attrs_n(df_attrs *a, const char *name, df_str text) {
    df_attrs_name(a, name);
    df_buf_byte(a->b, DF_N);
    df_buf_str(a->b, text);
}

static void df_buf_int_n(df_buf *b, int64_t v) {
    char tmp[24];
    int i = sizeof tmp;
    uint64_t x = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + x % 10);
        x /= 10;
    } while (x);
    if (v < 0) tmp[--i] = '-';
    df_buf_byte(b, DF_N);
    df_buf_byte(b, (uint8_t)(sizeof tmp - (size_t)i));
    df_buf_write(b, tmp + i, sizeof tmp - (size_t)i);
}

void df_attrs_int(df_attrs *a, const char *name, int64_t v) {
    df_attrs_name(a, name);
    df_buf_int_n(a->b, v);
}

void df_attrs_f64(df_attrs *a, const char *name, double v) {
    if (v != v || v - v != 0) {
        df_attrs_fail(a, df_sprintf("guest: mapping float64: %s cannot be stored as a DynamoDB number", v != v ? "NaN" : v > 0 ? "+Inf" : "-Inf"));
        return;
    }
    df_attrs_n(a, name, df_format_f64(v));
}

static bool df_buf_decimal_n(df_buf *b, const df_decimal *v, df_str *why) {
    int e = df_decimal_valid(v);
    if (e != DF_DECIMAL_OK) {
        df_str t = df_decimal_str(v);
        *why = df_sprintf("guest: mapping decimal: %.*s: %s (round it first, or store it as a string)", (int)t.len, t.ptr, df_decimal_error(e));
        return false;
    }
    char tmp[200];
    size_t n = df_decimal_text(v, tmp, sizeof tmp);
    df_buf_byte(b, DF_N);
    if (n <= sizeof tmp) {
        df_buf_str(b, (df_str){tmp, n});
    } else {
        df_buf_str(b, df_decimal_str(v));
    }
    return true;
}

void df_attrs_decimal(df_attrs *a, const char *name, const df_decimal *v) {
    size_t at = a->b->len;
    df_attrs_name(a, name);
    df_str why;
    if (!df_buf_decimal_n(a->b, v, &why)) {
        a->b->len = at;
        a->n--;
        df_attrs_fail(a, why);
    }
}

void df_attrs_bool(df_attrs *a, const char *name, bool v) {
    df_attrs_name(a, name);
    df_buf_byte(a->b, DF_BOOL);
    df_buf_byte(a->b, v ? 1 : 0);
}

void df_attrs_null(df_attrs *a, const char *name) {
    df_attrs_name(a, name);
    df_buf_byte(a->b, DF_NULL);
}

void df_attrs_bytes(df_attrs *a, const char *name, df_str v) {
    df_attrs_name(a, name);
    df_buf_byte(a->b, DF_B);
    df_buf_str(a->b, v);
}

void df_attrs_value(df_attrs *a, const char *name, const df_value *v) {
    df_attrs_name(a, name);
    df_value_encode(a->b, v);
}

void df_attrs_item(df_attrs *a, const df_item *it) {
    if (it->n == 0) return;
    df_attr *sorted = (df_attr *)df_xalloc(it->n * sizeof(df_attr));
    memcpy(sorted, it->attrs, it->n * sizeof(df_attr));
    qsort(sorted, it->n, sizeof(df_attr), df_attr_cmp);
    for (size_t i = 0; i < it->n; i++) {
        a->n++;
        df_buf_str(a->b, sorted[i].name);
        df_value_encode(a->b, sorted[i].value);
    }
}

void df_attrs_map_begin(df_attrs *a, const char *name, df_attrs *m) {
    df_attrs_name(a, name);
    df_buf_byte(a->b, DF_M);
    *m = df_attrs_start(a->b, false);
}

void df_attrs_map_end(df_attrs *a, df_attrs *m) {
    if (!df_attrs_finish(m)) df_attrs_fail(a, m->err);
}

static df_effects df_effects_start(df_buf *b) {
    df_effects fx;
    fx.b = b;
    fx.at = b->len;
    fx.n = 0;
    fx.err.ptr = NULL;
    fx.err.len = 0;
    df_buf_byte(b, 0);
    return fx;
}

void df_effects_value(df_effects *fx, const df_value *v) {
    fx->n++;
    df_value_encode(fx->b, v);
}

void df_effects_map_begin(df_effects *fx, df_attrs *m) {
    fx->n++;
    df_buf_byte(fx->b, DF_M);
    *m = df_attrs_start(fx->b, false);
}

void df_effects_map_end(df_effects *fx, df_attrs *m) {
    if (!df_attrs_finish(m) && !fx->err.ptr) fx->err = m->err;
}

/* ---- typed fields ---- */

/* The type names of decoding errors: the Go SDK's (guest.Decimal,
 * guest.Number), so a module built from any SDK fails with the same bytes. */
static const char *df_type_name(int t) {
    switch (t) {
    case DF_T_STR:
        return "string";
    case DF_T_I64:
        return "int64";
    case DF_T_F64:
        return "float64";
    case DF_T_BOOL:
        return "bool";
    case DF_T_DECIMAL:
        return "guest.Decimal";
    case DF_T_NUMBER:
        return "guest.Number";
    case DF_T_BYTES:
        return "bytes";
    }
    return "?";
}

/* df_decode_error words a value that does not fit its field: as the ABI's
 * decoding error, or, decoding an event's part ("data", "metadata"), as
 * the event not matching the plugin's type (the Go SDK's EventDataError),
 * or, decoding a row's stored state as read (part "state"), as the row not
 * matching it (the Go SDK's StateDataError). */
static df_str df_decode_error(const char *what, size_t at, const char *part) {
    if (part && strcmp(part, "state") == 0)
        return df_sprintf("%s (the row's stored state does not match the plugin's type: a row written by another version of the plugin or edited by hand; rebuild the row)", what);
    if (part) return df_sprintf("event %s: %s (the event's %s does not match the plugin's type)", part, what, part);
    return df_sprintf("abi: malformed encoding: %s at byte %zu", what, at);
}

/* df_field_decode reads v into the field at p: NULL reads as zero. */
static bool df_field_decode(const df_field *f, void *p, const df_ref *v, df_str *why, const char *part) {
    char what[200];
    if (v->kind == DF_NULL) {
        switch (f->type) {
        case DF_T_STR:
        case DF_T_NUMBER:
        case DF_T_BYTES:
            *(df_str *)p = df_cstr("");
            break;
        case DF_T_I64:
            *(int64_t *)p = 0;
            break;
        case DF_T_F64:
            *(double *)p = 0;
            break;
        case DF_T_BOOL:
            *(bool *)p = false;
            break;
        case DF_T_DECIMAL:
            *(df_decimal *)p = df_zero();
            break;
        }
        return true;
    }
    int want = f->type == DF_T_STR ? DF_S : f->type == DF_T_BOOL ? DF_BOOL : f->type == DF_T_BYTES ? DF_B : DF_N;
    if (v->kind != want) {
        snprintf(what, sizeof what, "attribute \"%s\": cannot decode %s into %s", f->name, df_kind_name(v->kind), df_type_name(f->type));
        *why = df_decode_error(what, v->at, part);
        return false;
    }
    df_str t = {"", 0};
    bool ok = true;
    switch (f->type) {
    case DF_T_STR:
    case DF_T_NUMBER:
    case DF_T_BYTES:
        *(df_str *)p = df_ref_text(v);
        return true;
    case DF_T_BOOL:
        return df_ref_bool(v, (bool *)p);
    case DF_T_I64:
        t = df_ref_text(v);
        ok = df_parse_i64(t, (int64_t *)p);
        break;
    case DF_T_F64:
        t = df_ref_text(v);
        ok = df_parse_f64(t, (double *)p);
        break;
    case DF_T_DECIMAL:
        t = df_ref_text(v);
        ok = df_decimal_parse(t, (df_decimal *)p) == DF_DECIMAL_OK;
        break;
    }
    if (!ok) {
        df_str q = df_quote(t);
        snprintf(what, sizeof what, "attribute \"%s\": number %.*s does not fit %s", f->name, (int)q.len, q.ptr, df_type_name(f->type));
        *why = df_decode_error(what, v->at + df_payload_len(v->kind, v->payload), part);
    }
    return ok;
}

static bool df_decode_part(const df_fields *f, void *dst, df_str item, df_error *err, const char *part);

bool df_decode_fields(const df_fields *f, void *dst, df_str item, df_error *err) {
    return df_decode_part(f, dst, item, err, NULL);
}

/* df_decode_part is df_decode_fields of an event's part ("data"), of a
 * row's stored state as read ("state"), or of another item (part NULL). */
static bool df_decode_part(const df_fields *f, void *dst, df_str item, df_error *err, const char *part) {
    if (item.len == 0) return true;
    df_reader r;
    df_reader_init(&r, item);
    size_t n = 0;
    if (df_read_opt_count(&r, &n)) {
        for (size_t i = 0; i < n && !r.failed; i++) {
            df_str name = df_read_str(&r);
            df_ref v;
            v.kind = df_read_byte(&r);
            v.at = r.off;
            df_skip_payload(&r, v.kind, 1);
            if (r.failed) break;
            v.payload.ptr = (const char *)r.buf + v.at;
            v.payload.len = r.off - v.at;
            for (size_t j = 0; j < f->n; j++) {
                if (!df_eq(name, f->fields[j].name)) continue;
                df_str why;
                if (!df_field_decode(&f->fields[j], (char *)dst + f->fields[j].offset, &v, &why, part)) {
                    err->tag = df_cstr("Error");
                    err->message = why;
                    return false;
                }
                break;
            }
        }
    }
    if (!r.failed && r.off != r.len) df_reader_fail(&r, "%zu trailing bytes", r.len - r.off);
    if (r.failed) {
        err->tag = df_cstr("Error");
        err->message = df_sprintf("%s", r.err);
        return false;
    }
    return true;
}

void df_attrs_fields(df_attrs *a, const df_fields *f, const void *src) {
    for (size_t i = 0; i < f->n; i++) {
        const df_field *x = &f->fields[i];
        const void *p = (const char *)src + x->offset;
        switch (x->type) {
        case DF_T_STR:
            df_attrs_s(a, x->name, *(const df_str *)p);
            break;
        case DF_T_NUMBER:
            df_attrs_n(a, x->name, *(const df_str *)p);
            break;
        case DF_T_BYTES:
            df_attrs_bytes(a, x->name, *(const df_str *)p);
            break;
        case DF_T_I64:
            df_attrs_int(a, x->name, *(const int64_t *)p);
            break;
        case DF_T_F64:
            df_attrs_f64(a, x->name, *(const double *)p);
            break;
        case DF_T_BOOL:
            df_attrs_bool(a, x->name, *(const bool *)p);
            break;
        case DF_T_DECIMAL:
            df_attrs_decimal(a, x->name, (const df_decimal *)p);
            break;
        }
    }
}

/* ---- events ---- */

bool df_event_str(const df_event *e, const char *name, df_str *out) {
    df_ref v;
    return df_find(e->data, name, &v) && df_ref_str(&v, out);
}

bool df_event_num(const df_event *e, const char *name, df_str *out) {
    df_ref v;
    return df_find(e->data, name, &v) && df_ref_number(&v, out);
}

bool df_event_decimal(const df_event *e, const char *name, df_decimal *out) {
    df_str t;
    return df_event_num(e, name, &t) && df_decimal_parse(t, out) == DF_DECIMAL_OK;
}

bool df_event_int(const df_event *e, const char *name, int64_t *out) {
    df_str t;
    return df_event_num(e, name, &t) && df_parse_i64(t, out);
}

bool df_event_f64(const df_event *e, const char *name, double *out) {
    df_str t;
    return df_event_num(e, name, &t) && df_parse_f64(t, out);
}

bool df_event_bool(const df_event *e, const char *name, bool *out) {
    df_ref v;
    return df_find(e->data, name, &v) && df_ref_bool(&v, out);
}

bool df_event_decode(const df_event *e, const df_fields *f, void *dst, df_error *err) {
    return df_decode_part(f, dst, e->data, err, "data");
}

df_step df_fail(df_error *err, const char *tag, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    err->tag = df_cstr(tag);
    err->message = df_vsprintf(fmt, ap);
    va_end(ap);
    return DF_FAILED;
}

bool df_stream_key(const df_ctx *ctx, df_str *values, size_t max, df_error *err) {
    const df_source *s = ctx->source;
    size_t nf = s ? s->n_composite : 0;
    df_str id = ctx->stream_id, q = df_quote(id);
    if (nf == 0) {
        df_fail(err, "Error", "guest: stream id %.*s (composite []): no composite fields declared: declare them on the source (the names of the stream's composite in the host's configuration)", (int)q.len, q.ptr);
        return false;
    }
    df_str comp = {"", 0};
    for (size_t i = 0; i < nf; i++) {
        df_str f = df_quote(df_cstr(s->composite[i]));
        comp = i == 0 ? f : df_sprintf("%.*s %.*s", (int)comp.len, comp.ptr, (int)f.len, f.ptr);
    }
    size_t parts = 1;
    if (nf > 1)
        for (size_t i = 0; i < id.len; i++)
            if (id.ptr[i] == '#') parts++;
    if (parts != nf) {
        df_fail(err, "Error", "guest: stream id %.*s (composite [%.*s]): has %zu parts, want %zu; a value containing \"#\" is ambiguous",
                (int)q.len, q.ptr, (int)comp.len, comp.ptr, parts, nf);
        return false;
    }
    size_t start = 0, k = 0;
    for (size_t i = 0; i <= id.len; i++) {
        if (nf > 1 && i < id.len && id.ptr[i] != '#') continue;
        if (nf == 1 && i < id.len) continue;
        df_str v = {id.ptr + start, i - start};
        if (v.len == 0) {
            df_str f = df_quote(df_cstr(s->composite[k]));
            df_fail(err, "Error", "guest: stream id %.*s (composite [%.*s]): the value of %.*s is empty", (int)q.len, q.ptr,
                    (int)comp.len, comp.ptr, (int)f.len, f.ptr);
            return false;
        }
        if (k < max) values[k] = v;
        k++;
        start = i + 1;
    }
    return true;
}

/* ---- the exports on encoded messages ---- */

static const df_source *df_source_named(const df_projection *p, df_str name, const char **err) {
    /* the source of the previous event, the common case, without strlen */
    static const df_projection *last_p;
    static const df_source *last;
    static df_str last_name;
    if (last_p == p && df_str_equal(name, last_name)) return last;
    if (!p->multi && p->n_sources > 0 && name.len == 0) return &p->sources[0];
    for (size_t i = 0; i < p->n_sources; i++) {
        if (df_eq(name, p->sources[i].name)) {
            last_p = p;
            last = &p->sources[i];
            last_name = df_cstr(last->name);
            return last;
        }
    }
    if (err) {
        df_str pn = df_quote(df_cstr(p->name)), sn = df_quote(name);
        *err = df_sprintf("guest: projection %.*s has no source %.*s", (int)pn.len, pn.ptr, (int)sn.len, sn.ptr).ptr;
    }
    return NULL;
}

static void df_read_event(df_reader *r, df_event *e) {
    e->stream = df_read_str(r);
    e->stream_id = df_read_str(r);
    e->version = df_read_uvarint(r);
    e->type = df_read_str(r);
    e->data = df_read_sized(r);
    e->metadata = df_read_sized(r);
    e->timestamp = df_read_str(r);
    e->source = NULL;
}

static void df_buf_error(df_buf *b, const df_error *e) {
    df_buf_byte(b, 1);
    df_buf_str(b, e->tag);
    df_buf_str(b, e->message);
}

static void df_describe(const df_projection *p, df_buf *out) {
    df_buf_cstr(out, p->name);
    df_buf_cstr(out, p->version);
    df_buf_uvarint(out, DF_ABI_MAJOR);
    df_buf_uvarint(out, DF_ABI_MINOR);
    df_buf_uvarint(out, p->n_sources);
    size_t declared = 0;
    for (size_t i = 0; i < p->n_sources; i++) {
        const df_source *s = &p->sources[i];
        df_buf_cstr(out, s->name);
        df_buf_cstr(out, s->stream);
        df_buf_uvarint(out, s->n_event_types);
        for (size_t j = 0; j < s->n_event_types; j++) df_buf_cstr(out, s->event_types[j]);
        df_buf_cstr(out, s->mode ? s->mode : "fold");
        if (s->n_composite) declared++;
    }
    static const char *const caps[] = {"describe", "key", "evolve", "initial", "terminal", "to_item", "effects", "self_test"};
#ifdef DYNAFOLD_SELF_TEST
    size_t ncaps = 8;
#else
    size_t ncaps = 7;
#endif
    df_buf_uvarint(out, ncaps);
    for (size_t i = 0; i < ncaps; i++) df_buf_cstr(out, caps[i]);
    if (declared) {
        df_buf_uvarint(out, declared);
        for (size_t i = 0; i < p->n_sources; i++) {
            const df_source *s = &p->sources[i];
            if (!s->n_composite) continue;
            df_buf_cstr(out, s->name);
            df_buf_uvarint(out, s->n_composite);
            for (size_t j = 0; j < s->n_composite; j++) df_buf_cstr(out, s->composite[j]);
        }
    }
}

static const char *df_key(const df_projection *p, df_str in, df_buf *out) {
    df_reader r;
    df_reader_init(&r, in);
    const char *err = NULL;
    const df_source *src = df_source_named(p, df_read_str(&r), &err);
    if (!src) return err;
    size_t n = df_read_count(&r, 12);
    df_buf_uvarint(out, n);
    for (size_t i = 0; i < n; i++) {
        df_event e;
        df_read_event(&r, &e);
        if (r.failed) break;
        e.source = src;
        df_ctx ctx = {src, df_cstr(src->name), e.stream_id, {"", 0}};
        size_t mark = out->len;
        df_attrs k = df_attrs_start(out, true);
        df_error de = {{"", 0}, {"", 0}};
        int got = p->key(&e, &ctx, &k, &de);
        if (got == DF_KEY) {
            if (!df_attrs_finish(&k))
                return df_sprintf("guest: key of %.*s v%llu: %.*s", (int)e.stream_id.len, e.stream_id.ptr, (unsigned long long)e.version,
                                  (int)k.err.len, k.err.ptr).ptr;
            df_buf_byte(out, 0);
        } else if (got == DF_KEY_NONE) {
            out->len = mark;
            df_buf_byte(out, 0);
            df_buf_byte(out, 0);
        } else {
            out->len = mark;
            df_buf_byte(out, 0);
            df_buf_error(out, &de);
        }
    }
    if (r.failed) return df_sprintf("guest: key request: %s", r.err).ptr;
    return NULL;
}

static const char *df_write_state(const df_projection *p, df_buf *out, const void *st) {
    df_attrs a = df_attrs_start(out, true);
    df_attrs_fields(&a, p->state, st);
    if (!df_attrs_finish(&a)) return a.err.ptr;
    return NULL;
}

static const char *df_write_item(const df_projection *p, df_buf *out, const void *st, const df_ctx *ctx) {
    df_attrs a = df_attrs_start(out, true);
    if (p->to_item)
        p->to_item(st, ctx, &a);
    else
        df_attrs_fields(&a, p->state, st);
    if (!df_attrs_finish(&a)) return a.err.ptr;
    return NULL;
}

static const char *df_write_effects(const df_projection *p, df_buf *out, const df_event *e, const void *next, const df_ctx *ctx) {
    if (!p->effects) {
        df_buf_byte(out, 0);
        return NULL;
    }
    df_effects fx = df_effects_start(out);
    if (p->effects) p->effects(e, next, ctx, &fx);
    if (fx.err.ptr)
        return df_sprintf("guest: effects of %.*s v%llu: %.*s", (int)e->stream_id.len, e->stream_id.ptr, (unsigned long long)e->version,
                          (int)fx.err.len, fx.err.ptr).ptr;
    df_patch_count(out, fx.at, fx.n);
    return NULL;
}

static const char *df_evolve(const df_projection *p, df_str in, df_buf *out) {
    df_reader r;
    df_reader_init(&r, in);
    df_str key = df_read_sized(&r);
    df_str stream_id = df_read_str(&r);
    df_str state = df_read_sized(&r);
    size_t n = df_read_count(&r, 13);
    if (!r.failed && (key.len == 0 || state.len == 0)) df_reader_fail(&r, "evolve request: key or state missing");
    if (r.failed) return df_sprintf("guest: evolve request: %s", r.err).ptr;
    size_t size = p->state_size ? p->state_size : 1;
    char *st = (char *)df_xalloc(size), *next = (char *)df_xalloc(size);
    memset(st, 0, size);
    bool present = state.ptr[0] != 0, removed = false;
    df_error de;
    if (present && !df_decode_part(p->state, st, state, &de, "state"))
        return df_sprintf("guest: state as read: %.*s", (int)de.message.len, de.message.ptr).ptr;
    bool all = n == 0; /* every event was read: the flags byte may follow */
    for (size_t i = 0; i < n; i++) {
        df_str name = df_read_str(&r);
        df_event e;
        df_read_event(&r, &e);
        if (r.failed) return df_sprintf("guest: evolve request: %s", r.err).ptr;
        const char *serr = NULL;
        const df_source *src = df_source_named(p, name, &serr);
        if (!src) return serr;
        e.source = src;
        if (stream_id.len == 0) stream_id = e.stream_id;
        df_ctx ctx = {src, name.len ? name : df_cstr(src->name), e.stream_id, key};
        if (!present) {
            memset(st, 0, size);
            if (p->multi) {
                df_ctx mctx = {src, df_cstr(src->name), {"", 0}, key};
                p->initial(st, NULL, &mctx);
            } else {
                p->initial(st, &e, &ctx);
            }
        }
        memcpy(next, st, size);
        de.tag = df_cstr("");
        de.message = df_cstr("");
        df_step step = p->evolve(next, &e, &ctx, &de);
        const char *ferr;
        if (step == DF_APPLIED) {
            df_buf_byte(out, 1);
            df_buf_byte(out, 0);
            df_buf_byte(out, 0);
            if ((ferr = df_write_effects(p, out, &e, next, &ctx))) return ferr;
            char *t = st;
            st = next;
            next = t;
            present = true;
            removed = false;
        } else if (step == DF_SKIP) {
            df_buf_byte(out, 2);
            df_buf_byte(out, 0);
            df_buf_byte(out, 0);
            df_buf_byte(out, 0);
        } else if (step == DF_REMOVE_ROW) {
            df_buf_byte(out, 1);
            df_buf_byte(out, 1);
            df_buf_byte(out, 0);
            if ((ferr = df_write_effects(p, out, &e, NULL, &ctx))) return ferr;
            present = false;
            removed = true;
        } else {
            bool rejected = p->terminal && p->terminal(&de, &ctx);
            df_buf_byte(out, rejected ? 3 : 4);
            df_buf_byte(out, 0);
            df_buf_error(out, &de);
            df_buf_byte(out, 0);
            if (!rejected) {
                all = i == n - 1;
                break;
            }
        }
        if (i == n - 1) all = true;
    }
    df_buf_byte(out, 0); /* the end of the decisions */
    /* ABI 1.1: after the events, an optional flags byte; omitState (bit 0)
     * asks only whether the state exists. */
    bool omit = all && r.off < r.len && (r.buf[r.off] & 1) != 0;
    const char *werr;
    if (present && omit) {
        df_buf_byte(out, 1);
    } else if (present) {
        if ((werr = df_write_state(p, out, st))) return df_sprintf("guest: state: %s", werr).ptr;
    } else {
        df_buf_byte(out, 0);
    }
    df_buf_byte(out, removed && !present);
    if (present) {
        df_ctx ictx = {&p->sources[0], df_cstr(p->sources[0].name), stream_id, key};
        if ((werr = df_write_item(p, out, st, &ictx))) return df_sprintf("guest: to_item: %s", werr).ptr;
    } else {
        df_buf_byte(out, 0);
    }
    return NULL;
}

static const char *df_end(df_reader *r) {
    if (!r->failed && r->off != r->len) df_reader_fail(r, "%zu trailing bytes", r->len - r->off);
    return r->failed ? df_sprintf("%s", r->err).ptr : NULL;
}

static const char *df_initial(const df_projection *p, df_str in, df_buf *out) {
    df_reader r;
    df_reader_init(&r, in);
    df_str sname = df_read_str(&r);
    df_str stream_id = df_read_str(&r);
    df_str key = df_skip_opt_item(&r);
    bool has = df_read_bool(&r);
    df_event e;
    if (has) df_read_event(&r, &e);
    const char *err = df_end(&r);
    if (err) return err;
    const df_source *src = df_source_named(p, sname, NULL);
    if (!src) src = &p->sources[0];
    size_t size = p->state_size ? p->state_size : 1;
    void *st = df_xalloc(size);
    memset(st, 0, size);
    if (p->multi) {
        df_ctx ctx = {src, sname, {"", 0}, key};
        p->initial(st, NULL, &ctx);
    } else {
        if (!has) return "guest: initial of a single-source projection needs the event";
        e.source = src;
        df_ctx ctx = {src, df_cstr(src->name), stream_id, key};
        p->initial(st, &e, &ctx);
    }
    return df_write_state(p, out, st);
}

static const char *df_terminal(const df_projection *p, df_str in, df_buf *out) {
    df_reader r;
    df_reader_init(&r, in);
    df_str sname = df_read_str(&r);
    df_error e;
    e.tag = df_read_str(&r);
    e.message = df_read_str(&r);
    const char *err = df_end(&r);
    if (err) return err;
    const df_source *src = df_source_named(p, sname, &err);
    if (!src) return err;
    df_ctx ctx = {src, df_cstr(src->name), {"", 0}, {"", 0}};
    df_buf_byte(out, p->terminal && p->terminal(&e, &ctx) ? 1 : 0);
    return NULL;
}

static const char *df_to_item(const df_projection *p, df_str in, df_buf *out) {
    df_reader r;
    df_reader_init(&r, in);
    df_str state = df_skip_opt_item(&r);
    df_str stream_id = df_read_str(&r);
    df_str key = df_skip_opt_item(&r);
    const char *err = df_end(&r);
    if (err) return err;
    if (state.len == 0 || state.ptr[0] == 0) {
        df_buf_byte(out, 0);
        return NULL;
    }
    size_t size = p->state_size ? p->state_size : 1;
    void *st = df_xalloc(size);
    memset(st, 0, size);
    df_error de;
    if (!df_decode_fields(p->state, st, state, &de)) return df_sprintf("%.*s", (int)de.message.len, de.message.ptr).ptr;
    df_ctx ctx = {&p->sources[0], df_cstr(p->sources[0].name), stream_id, key};
    return df_write_item(p, out, st, &ctx);
}

static const char *df_effects_call(const df_projection *p, df_str in, df_buf *out) {
    df_reader r;
    df_reader_init(&r, in);
    df_str sname = df_read_str(&r);
    df_str stream_id = df_read_str(&r);
    df_str key = df_skip_opt_item(&r);
    df_event e;
    df_read_event(&r, &e);
    df_str nraw = df_skip_opt_item(&r);
    const char *err = df_end(&r);
    if (err) return err;
    const df_source *src = df_source_named(p, sname, NULL);
    e.source = src;
    void *next = NULL;
    if (nraw.len > 0 && nraw.ptr[0] != 0) {
        size_t size = p->state_size ? p->state_size : 1;
        next = df_xalloc(size);
        memset(next, 0, size);
        df_error de;
        if (!df_decode_fields(p->state, next, nraw, &de)) return df_sprintf("%.*s", (int)de.message.len, de.message.ptr).ptr;
    }
    df_ctx ctx = {src, sname, stream_id, key};
    df_effects fx = df_effects_start(out);
    if (p->effects) p->effects(&e, next, &ctx, &fx);
    if (fx.err.ptr) return fx.err.ptr;
    df_patch_count(out, fx.at, fx.n);
    return NULL;
}

const char *df_call(const df_projection *p, const char *name, df_str in, df_buf *out) {
    const char *err;
    if (strcmp(name, "describe") == 0) {
        df_describe(p, out);
        return NULL;
    } else if (strcmp(name, "key") == 0) {
        err = df_key(p, in, out);
    } else if (strcmp(name, "evolve") == 0) {
        err = df_evolve(p, in, out);
    } else if (strcmp(name, "initial") == 0) {
        err = df_initial(p, in, out);
    } else if (strcmp(name, "terminal") == 0) {
        err = df_terminal(p, in, out);
    } else if (strcmp(name, "to_item") == 0) {
        err = df_to_item(p, in, out);
    } else if (strcmp(name, "effects") == 0) {
        err = df_effects_call(p, in, out);
    } else {
        err = "no such export";
    }
    if (err) return df_sprintf("%s: %s", name, err).ptr;
    return NULL;
}

/* ---- the Wasm glue (ABI.md §2) ---- */

#ifdef __wasm__

/* Debian's compiler-rt builtins for wasm32 (libclang-rt-dev-wasm32: the
 * 128-bit division the decimals use) are built with the stack protector,
 * which wasi-libc does not provide: weak definitions that a libc
 * providing them overrides. */
__attribute__((weak)) uintptr_t __stack_chk_guard = 0x5a17c0de;
__attribute__((weak)) void __stack_chk_fail(void) { df_oom(); }

static uint8_t *df_in;
static size_t df_in_cap, df_in_len;
static df_buf df_out;

/* The host calls dynafold_abi_version once, first: it also yields once, so
 * that the module imports wasi_snapshot_preview1.sched_yield, the import the
 * host's loop instrumentation calls (without it, the host enforces timeouts
 * by a slower mechanism and cannot apply a loop budget). */
__attribute__((export_name("dynafold_abi_version"))) int32_t df_export_abi_version(void) {
    sched_yield();
    return DF_ABI_MAJOR << 16 | DF_ABI_MINOR;
}

__attribute__((export_name("dynafold_alloc"))) int32_t df_export_alloc(int32_t size) {
    if (size <= 0) return 0;
    if ((size_t)size > df_in_cap) {
        free(df_in);
        df_in_cap = (size_t)size + (size_t)size / 4;
        df_in = (uint8_t *)malloc(df_in_cap);
        if (!df_in) df_oom();
    }
    df_in_len = (size_t)size;
    return (int32_t)(uintptr_t)df_in;
}

static int64_t df_result(void) { return (int64_t)((uint64_t)(uintptr_t)df_out.p << 32 | (uint64_t)df_out.len); }

int64_t df_export_call(const char *name, int32_t ptr, int32_t len) {
    df_arena_reset();
    df_out.len = 0;
    df_str in = {"", 0};
    if (len > 0) {
        if (!df_in || (int32_t)(uintptr_t)df_in != ptr || (size_t)len > df_in_len) {
            df_buf_byte(&df_out, 1);
            df_buf_write(&df_out, "input buffer was not obtained from dynafold_alloc", 49);
            return df_result();
        }
        in.ptr = (const char *)df_in;
        in.len = (size_t)len;
    }
    df_buf_byte(&df_out, 0);
    const char *err = df_call(dynafold_projection(), name, in, &df_out);
    if (err) {
        df_out.len = 0;
        df_buf_byte(&df_out, 1);
        df_buf_write(&df_out, err, strlen(err));
    }
    return df_result();
}

__attribute__((export_name("describe"))) int64_t df_export_describe(int32_t p, int32_t n) { return df_export_call("describe", p, n); }
__attribute__((export_name("key"))) int64_t df_export_key(int32_t p, int32_t n) { return df_export_call("key", p, n); }
#ifndef DYNAFOLD_NO_EVOLVE_EXPORT
__attribute__((export_name("evolve"))) int64_t df_export_evolve(int32_t p, int32_t n) { return df_export_call("evolve", p, n); }
#endif
__attribute__((export_name("initial"))) int64_t df_export_initial(int32_t p, int32_t n) { return df_export_call("initial", p, n); }
__attribute__((export_name("terminal"))) int64_t df_export_terminal(int32_t p, int32_t n) { return df_export_call("terminal", p, n); }
__attribute__((export_name("to_item"))) int64_t df_export_to_item(int32_t p, int32_t n) { return df_export_call("to_item", p, n); }
__attribute__((export_name("effects"))) int64_t df_export_effects(int32_t p, int32_t n) { return df_export_call("effects", p, n); }

#ifdef DYNAFOLD_SELF_TEST
__attribute__((export_name("self_test"))) int64_t df_export_self_test(int32_t p, int32_t n) {
    (void)p;
    (void)n;
    df_arena_reset();
    size_t count = 0;
    const df_case *cases = dynafold_self_tests(&count);
    const df_projection *proj = dynafold_projection();
    const char **fails = (const char **)df_xalloc((count ? count : 1) * sizeof(char *));
    size_t nf = 0;
    for (size_t i = 0; i < count; i++) {
        const char *d = df_test_case(proj, &cases[i]);
        if (d) fails[nf++] = df_sprintf("%s: %s", cases[i].name, d).ptr;
    }
    df_out.len = 0;
    df_buf_byte(&df_out, 0);
    df_buf_uvarint(&df_out, nf);
    for (size_t i = 0; i < nf; i++) df_buf_cstr(&df_out, fails[i]);
    return df_result();
}
#endif

__attribute__((import_module("dynafold"), import_name("log"))) void df_host_log(int32_t level, const char *ptr, int32_t len);

void df_log(int level, df_str msg) { df_host_log(level, msg.ptr, (int32_t)msg.len); }

#else

void df_log(int level, df_str msg) {
    static const char *const names[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    fprintf(stderr, "%s: %.*s\n", names[level < 0 ? 0 : level > 3 ? 3 : level], (int)msg.len, msg.ptr);
}

#endif

/* ---- tests: folding natively, as the host folds a batch ---- */

struct df_tev {
    const char *source, *stream, *id, *type;
    uint64_t version;
    df_item data;
};

struct df_trow {
    df_item item;
};

struct df_test {
    df_tev *events[256];
    size_t n_events;
    df_trow *rows[64];
    size_t n_rows;
};

df_tev *df_test_event(df_test *t, const char *stream, const char *id, uint64_t v, const char *typ) {
    df_tev *e = (df_tev *)df_xalloc(sizeof(df_tev));
    memset(e, 0, sizeof *e);
    e->stream = stream;
    e->id = id;
    e->version = v;
    e->type = typ;
    e->data.present = true;
    df_item_put(&e->data, "_tag", df_value_s(typ));
    if (t->n_events < sizeof t->events / sizeof t->events[0]) t->events[t->n_events++] = e;
    return e;
}

void df_tev_s(df_tev *e, const char *name, const char *v) { df_item_put(&e->data, name, df_value_s(v)); }
void df_tev_n(df_tev *e, const char *name, const char *text) { df_item_put(&e->data, name, df_value_n(text)); }
void df_tev_bool(df_tev *e, const char *name, bool v) { df_item_put(&e->data, name, df_value_bool(v)); }
void df_tev_value(df_tev *e, const char *name, df_value *v) { df_item_put(&e->data, name, v); }
void df_tev_source(df_tev *e, const char *source) { e->source = source; }

df_trow *df_test_row(df_test *t, const char *pk_name, const char *pk, const char *sk_name, const char *sk) {
    df_trow *r = (df_trow *)df_xalloc(sizeof(df_trow));
    memset(r, 0, sizeof *r);
    r->item.present = true;
    df_item_put(&r->item, pk_name, df_value_s(pk));
    if (sk_name) df_item_put(&r->item, sk_name, df_value_s(sk));
    if (t->n_rows < sizeof t->rows / sizeof t->rows[0]) t->rows[t->n_rows++] = r;
    return r;
}

void df_trow_s(df_trow *r, const char *name, const char *v) { df_item_put(&r->item, name, df_value_s(v)); }
void df_trow_n(df_trow *r, const char *name, const char *text) { df_item_put(&r->item, name, df_value_n(text)); }
void df_trow_bool(df_trow *r, const char *name, bool v) { df_item_put(&r->item, name, df_value_bool(v)); }
void df_trow_value(df_trow *r, const char *name, df_value *v) { df_item_put(&r->item, name, v); }

static void df_tev_encode(df_buf *b, const df_tev *e) {
    df_buf_cstr(b, e->stream);
    df_buf_cstr(b, e->id);
    df_buf_uvarint(b, e->version);
    df_buf_cstr(b, e->type);
    df_buf tmp = {0};
    df_item_encode(&tmp, &e->data);
    uint8_t size[4] = {(uint8_t)tmp.len, (uint8_t)(tmp.len >> 8), (uint8_t)(tmp.len >> 16), (uint8_t)(tmp.len >> 24)};
    df_buf_write(b, size, 4);
    df_buf_write(b, tmp.p, tmp.len);
    free(tmp.p);
    uint8_t none[5] = {1, 0, 0, 0, 0};
    df_buf_write(b, none, 5); /* no metadata */
    df_buf_cstr(b, "2026-01-01T00:00:00Z");
}

/* A row being folded: its key, its events, and after the fold its item
 * and what failed it. */
typedef struct df_trun {
    df_item key;
    df_str key_text;
    const df_tev *events[256];
    size_t order[256];
    size_t n;
    df_item item;
    df_str fail;
} df_trun;

static df_str df_key_text(const df_item *k) {
    df_attr *a = (df_attr *)df_xalloc((k->n ? k->n : 1) * sizeof(df_attr));
    if (k->n) memcpy(a, k->attrs, k->n * sizeof(df_attr));
    qsort(a, k->n, sizeof(df_attr), df_attr_cmp);
    df_str s = {"", 0};
    for (size_t i = 0; i < k->n; i++)
        s = df_sprintf("%.*s%s%.*s=%.*s", (int)s.len, s.ptr, i ? "," : "", (int)a[i].name.len, a[i].name.ptr, (int)a[i].value->s.len,
                       a[i].value->s.ptr);
    return s;
}

static size_t df_source_index(const df_projection *p, const char *name) {
    for (size_t i = 0; i < p->n_sources; i++)
        if (strcmp(p->sources[i].name, name) == 0) return i;
    return (size_t)-1;
}

static int df_tev_cmp(const df_trun *r, size_t a, size_t b) {
    if (r->order[a] != r->order[b]) return r->order[a] < r->order[b] ? -1 : 1;
    int c = strcmp(r->events[a]->id, r->events[b]->id);
    if (c) return c;
    return r->events[a]->version < r->events[b]->version ? -1 : r->events[a]->version > r->events[b]->version;
}

static void df_trun_fold(const df_projection *p, df_trun *row) {
    /* sort by source order, stream id, version (insertion sort: few) */
    for (size_t i = 1; i < row->n; i++) {
        for (size_t j = i; j > 0 && df_tev_cmp(row, j - 1, j) > 0; j--) {
            const df_tev *e = row->events[j];
            row->events[j] = row->events[j - 1];
            row->events[j - 1] = e;
            size_t o = row->order[j];
            row->order[j] = row->order[j - 1];
            row->order[j - 1] = o;
        }
    }
    while (row->n > 0) {
        df_buf q = {0}, out = {0};
        df_buf k = {0};
        df_item_encode(&k, &row->key);
        uint8_t size[4] = {(uint8_t)k.len, (uint8_t)(k.len >> 8), (uint8_t)(k.len >> 16), (uint8_t)(k.len >> 24)};
        df_buf_write(&q, size, 4);
        df_buf_write(&q, k.p, k.len);
        free(k.p);
        df_buf_cstr(&q, p->multi ? "" : row->events[0]->id);
        uint8_t absent[5] = {1, 0, 0, 0, 0};
        df_buf_write(&q, absent, 5);
        df_buf_uvarint(&q, row->n);
        for (size_t i = 0; i < row->n; i++) {
            df_buf_cstr(&q, p->sources[row->order[i]].name);
            df_tev_encode(&q, row->events[i]);
        }
        df_str in = {(const char *)q.p, q.len};
        const char *err = df_call(p, "evolve", in, &out);
        if (err) {
            row->fail = df_cstr(err);
            free(q.p);
            free(out.p);
            return;
        }
        df_reader r;
        df_str res = {(const char *)out.p, out.len};
        df_reader_init(&r, res);
        size_t i = 0, failed_at = (size_t)-1;
        df_error last = {{"", 0}, {"", 0}};
        for (;; i++) {
            int o = df_read_byte(&r);
            if (o == 0 || r.failed) break;
            df_read_bool(&r);
            if (df_read_bool(&r)) {
                last.tag = df_read_str(&r);
                last.message = df_read_str(&r);
            }
            size_t nfx = df_read_count(&r, 1);
            for (size_t j = 0; j < nfx; j++) df_skip(&r, 0);
            if (o == 4) failed_at = i;
        }
        df_item state, item;
        df_read_opt_item(&r, &state);
        df_read_bool(&r);
        df_read_opt_item(&r, &item);
        if (r.failed) {
            row->fail = df_sprintf("evolve response: %s", r.err);
        } else if (failed_at != (size_t)-1) {
            const df_tev *bad = row->events[failed_at];
            df_str f = df_sprintf("%s v%llu: %.*s: %.*s", bad->type, (unsigned long long)bad->version, (int)last.tag.len, last.tag.ptr,
                                  (int)last.message.len, last.message.ptr);
            row->fail = row->fail.len ? df_sprintf("%.*s; %.*s", (int)row->fail.len, row->fail.ptr, (int)f.len, f.ptr) : f;
            if (p->multi) {
                /* drop that source instance's events, fold the others */
                size_t w = 0;
                size_t bo = row->order[failed_at];
                for (size_t j = 0; j < row->n; j++) {
                    if (row->order[j] == bo && strcmp(row->events[j]->id, bad->id) == 0) continue;
                    row->events[w] = row->events[j];
                    row->order[w] = row->order[j];
                    w++;
                }
                row->n = w;
                free(q.p);
                free(out.p);
                continue;
            }
        } else if (state.present) {
            /* copy what aliases the response before it is freed */
            df_buf copy = {0};
            df_item_encode(&copy, &item);
            char *keep = (char *)df_xalloc(copy.len);
            memcpy(keep, copy.p, copy.len);
            df_str kept = {keep, copy.len};
            free(copy.p);
            df_item_decode(kept, &row->item);
            for (size_t j = 0; j < row->key.n; j++) df_item_put(&row->item, df_sprintf("%.*s", (int)row->key.attrs[j].name.len, row->key.attrs[j].name.ptr).ptr, row->key.attrs[j].value);
        }
        free(q.p);
        free(out.p);
        return;
    }
}

static df_str df_value_text(const df_value *v) {
    switch (v->kind) {
    case DF_S:
        return df_quote(v->s);
    case DF_N:
        return v->s;
    case DF_BOOL:
        return df_cstr(v->b ? "true" : "false");
    case DF_NULL:
        return df_cstr("NULL");
    }
    return df_sprintf("(%s)", df_kind_name(v->kind));
}

static df_str df_append_line(df_str s, df_str line) {
    return s.len ? df_sprintf("%.*s\n%.*s", (int)s.len, s.ptr, (int)line.len, line.ptr) : line;
}

const char *df_test_case(const df_projection *p, const df_case *c) {
    df_test *t = (df_test *)df_xalloc(sizeof(df_test));
    memset(t, 0, sizeof *t);
    c->build(t);
    df_trun *rows = (df_trun *)df_xalloc(sizeof(df_trun) * (t->n_events ? t->n_events : 1));
    size_t nrows = 0;
    df_str diff = {"", 0};
    for (size_t i = 0; i < t->n_events; i++) {
        df_tev *e = t->events[i];
        size_t si = (size_t)-1;
        if (e->source) {
            si = df_source_index(p, e->source);
        } else {
            for (size_t j = 0; j < p->n_sources; j++)
                if (strcmp(p->sources[j].stream, e->stream) == 0) {
                    si = j;
                    break;
                }
        }
        if (si == (size_t)-1) return df_sprintf("%s %s v%llu: no source of %s reads it", e->stream, e->id, (unsigned long long)e->version, p->name).ptr;
        bool dup = false;
        for (size_t j = 0; j < i && !dup; j++) {
            df_tev *x = t->events[j];
            dup = x->version == e->version && strcmp(x->id, e->id) == 0 && strcmp(x->stream, e->stream) == 0 &&
                  (x->source == e->source || (x->source && e->source && strcmp(x->source, e->source) == 0));
        }
        if (dup) continue; /* at least once: the host folds a duplicate once */
        df_buf q = {0}, out = {0};
        df_buf_cstr(&q, p->sources[si].name);
        df_buf_uvarint(&q, 1);
        df_tev_encode(&q, e);
        df_str in = {(const char *)q.p, q.len};
        const char *err = df_call(p, "key", in, &out);
        free(q.p);
        if (err) {
            free(out.p);
            return df_sprintf("key of %s %s v%llu: %s", e->stream, e->id, (unsigned long long)e->version, err).ptr;
        }
        /* the response aliases out: copy it into the arena */
        char *keep = (char *)df_xalloc(out.len);
        memcpy(keep, out.p, out.len);
        df_str res = {keep, out.len};
        free(out.p);
        df_reader r;
        df_reader_init(&r, res);
        df_read_uvarint(&r);
        df_item key;
        df_read_opt_item(&r, &key);
        if (df_read_bool(&r)) {
            df_str tag = df_read_str(&r), msg = df_read_str(&r);
            return df_sprintf("key of %s %s v%llu: %.*s: %.*s", e->stream, e->id, (unsigned long long)e->version, (int)tag.len, tag.ptr,
                              (int)msg.len, msg.ptr).ptr;
        }
        if (r.failed) return df_sprintf("key response: %s", r.err).ptr;
        if (!key.present) continue; /* the event addresses no row */
        df_str ks = df_key_text(&key);
        df_trun *row = NULL;
        for (size_t j = 0; j < nrows; j++)
            if (df_str_equal(rows[j].key_text, ks)) row = &rows[j];
        if (!row) {
            row = &rows[nrows++];
            memset(row, 0, sizeof *row);
            row->key = key;
            row->key_text = ks;
        }
        if (row->n < 256) {
            row->events[row->n] = e;
            row->order[row->n] = si;
            row->n++;
        }
    }
    for (size_t i = 0; i < nrows; i++) df_trun_fold(p, &rows[i]);
    /* compare: each expected row with the folded row its key names */
    bool *matched = (bool *)df_xalloc(nrows + 1);
    memset(matched, 0, nrows + 1);
    for (size_t i = 0; i < t->n_rows; i++) {
        const df_item *w = &t->rows[i]->item;
        df_trun *got = NULL;
        for (size_t j = 0; j < nrows && !got; j++) {
            bool all = true;
            for (size_t a = 0; a < rows[j].key.n && all; a++) {
                const df_value *x = NULL;
                for (size_t b = 0; b < w->n; b++)
                    if (df_str_equal(w->attrs[b].name, rows[j].key.attrs[a].name)) x = w->attrs[b].value;
                all = x && df_value_equal(x, rows[j].key.attrs[a].value);
            }
            if (all) {
                got = &rows[j];
                matched[j] = true;
            }
        }
        if (!got) {
            diff = df_append_line(diff, df_sprintf("row %zu: expected, but no event folds into it", i));
            continue;
        }
        df_str ks = got->key_text;
        if (got->fail.len) {
            diff = df_append_line(diff, df_sprintf("row %.*s: failed: %.*s", (int)ks.len, ks.ptr, (int)got->fail.len, got->fail.ptr));
            continue;
        }
        if (!got->item.present) {
            diff = df_append_line(diff, df_sprintf("row %.*s: expected, but the fold leaves it absent", (int)ks.len, ks.ptr));
            continue;
        }
        for (size_t a = 0; a < w->n; a++) {
            const df_attr *x = &w->attrs[a];
            const df_value *g = NULL;
            for (size_t b = 0; b < got->item.n; b++)
                if (df_str_equal(got->item.attrs[b].name, x->name)) g = got->item.attrs[b].value;
            df_str wt = df_value_text(x->value);
            if (!g) {
                diff = df_append_line(diff, df_sprintf("row %.*s: %.*s: missing, want %.*s", (int)ks.len, ks.ptr, (int)x->name.len, x->name.ptr, (int)wt.len, wt.ptr));
            } else if (!df_value_equal(g, x->value)) {
                df_str gt = df_value_text(g);
                diff = df_append_line(diff, df_sprintf("row %.*s: %.*s: got %.*s, want %.*s", (int)ks.len, ks.ptr, (int)x->name.len, x->name.ptr,
                                                       (int)gt.len, gt.ptr, (int)wt.len, wt.ptr));
            }
        }
        for (size_t b = 0; b < got->item.n; b++) {
            const df_attr *g = &got->item.attrs[b];
            bool want = false;
            for (size_t a = 0; a < w->n && !want; a++) want = df_str_equal(w->attrs[a].name, g->name);
            if (!want) {
                df_str gt = df_value_text(g->value);
                diff = df_append_line(diff, df_sprintf("row %.*s: %.*s: unexpected %.*s", (int)ks.len, ks.ptr, (int)g->name.len, g->name.ptr, (int)gt.len, gt.ptr));
            }
        }
    }
    for (size_t j = 0; j < nrows; j++) {
        if (matched[j]) continue;
        df_str ks = rows[j].key_text;
        if (rows[j].fail.len)
            diff = df_append_line(diff, df_sprintf("row %.*s: not expected, and failed: %.*s", (int)ks.len, ks.ptr, (int)rows[j].fail.len, rows[j].fail.ptr));
        else if (rows[j].item.present)
            diff = df_append_line(diff, df_sprintf("row %.*s: not expected", (int)ks.len, ks.ptr));
    }
    return diff.len ? diff.ptr : NULL;
}

int df_test_main(const df_projection *p, const df_case *cases, size_t n) {
    int failed = 0;
    for (size_t i = 0; i < n; i++) {
        df_arena_reset(); /* each case's memory, freed before the next */
        const char *d = df_test_case(p, &cases[i]);
        if (d) {
            printf("FAIL %s\n%s\n", cases[i].name, d);
            failed++;
        } else {
            printf("ok   %s\n", cases[i].name);
        }
    }
    printf("%s: %zu cases, %d failed\n", failed ? "FAIL" : "PASS", n, failed);
    return failed ? 1 : 0;
}

/* fuzz_ragged.c — a libFuzzer target for ragged: the input bytes choose an
 * operation, segment lengths, content values, a strategy or policy, a thread
 * count and sometimes a corruption of the offsets; the target runs the
 * operation and checks it against a plain sequential reference, or, for bad
 * input, that the call fails with a message and leaves its outputs as they
 * were.  tests/fuzz/run.sh builds it with the library under ASan and UBSan
 * and runs it; any mismatch aborts with a description, and libFuzzer keeps
 * the input that found it.
 *
 * The context is OpenMP unless FUZZ_BACKEND=opencl.  Values are small
 * integers, powers of two and the float specials, so that sums and products
 * are exact in every summation order and the reference can demand equality. */

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "ragged.h"

#define MAX_SEGS 600
#define MAX_ELEMS 20000

static rg_context *ctx;

static void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "fuzz_ragged: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  last message: %s\n", rg_context_error(ctx));
    abort();
}

#define CHECK_OK(call)                                                      \
    do {                                                                    \
        rg_status st_ = (call);                                             \
        if (st_ != RG_OK)                                                   \
            fail("%s:%d: %s -> %s", __FILE__, __LINE__, #call, rg_strerror(st_)); \
    } while (0)

/* ---- reading the input ---------------------------------------------------- */

typedef struct {
    const uint8_t *p;
    size_t n;
} input;

static unsigned take(input *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

static unsigned take16(input *in)
{
    unsigned lo = take(in);
    return lo | take(in) << 8;
}

/* ---- dtypes --------------------------------------------------------------- */

static const rg_dtype all_dtypes[] = {RG_BOOL,   RG_INT8,   RG_INT16,  RG_INT32,
                                      RG_INT64,  RG_UINT8,  RG_UINT16, RG_UINT32,
                                      RG_UINT64, RG_FLOAT32, RG_FLOAT64};
#define NDTYPES (sizeof all_dtypes / sizeof all_dtypes[0])

static int is_float(rg_dtype t) { return t == RG_FLOAT32 || t == RG_FLOAT64; }
static int is_unsigned(rg_dtype t)
{
    return t == RG_UINT8 || t == RG_UINT16 || t == RG_UINT32 || t == RG_UINT64;
}

/* A value of any dtype, kept in the widest type of its kind. */
typedef struct {
    int64_t i;  /* signed integers, bool */
    uint64_t u; /* unsigned integers */
    double f;   /* floats */
} value;

static value get(rg_dtype t, const void *base, size_t k)
{
    value v = {0, 0, 0.0};
    switch (t) {
    case RG_BOOL: v.i = ((const uint8_t *)base)[k]; break;
    case RG_INT8: v.i = ((const int8_t *)base)[k]; break;
    case RG_INT16: v.i = ((const int16_t *)base)[k]; break;
    case RG_INT32: v.i = ((const int32_t *)base)[k]; break;
    case RG_INT64: v.i = ((const int64_t *)base)[k]; break;
    case RG_UINT8: v.u = ((const uint8_t *)base)[k]; break;
    case RG_UINT16: v.u = ((const uint16_t *)base)[k]; break;
    case RG_UINT32: v.u = ((const uint32_t *)base)[k]; break;
    case RG_UINT64: v.u = ((const uint64_t *)base)[k]; break;
    case RG_FLOAT32: v.f = ((const float *)base)[k]; break;
    case RG_FLOAT64: v.f = ((const double *)base)[k]; break;
    }
    return v;
}

static void put(rg_dtype t, void *base, size_t k, value v)
{
    switch (t) {
    case RG_BOOL: ((uint8_t *)base)[k] = (uint8_t)v.i; break;
    case RG_INT8: ((int8_t *)base)[k] = (int8_t)v.i; break;
    case RG_INT16: ((int16_t *)base)[k] = (int16_t)v.i; break;
    case RG_INT32: ((int32_t *)base)[k] = (int32_t)v.i; break;
    case RG_INT64: ((int64_t *)base)[k] = v.i; break;
    case RG_UINT8: ((uint8_t *)base)[k] = (uint8_t)v.u; break;
    case RG_UINT16: ((uint16_t *)base)[k] = (uint16_t)v.u; break;
    case RG_UINT32: ((uint32_t *)base)[k] = (uint32_t)v.u; break;
    case RG_UINT64: ((uint64_t *)base)[k] = v.u; break;
    case RG_FLOAT32: ((float *)base)[k] = (float)v.f; break;
    case RG_FLOAT64: ((double *)base)[k] = v.f; break;
    }
}

static int is_nonzero(rg_dtype t, value v)
{
    return is_float(t) ? v.f != 0.0 : is_unsigned(t) ? v.u != 0 : v.i != 0;
}

/* A content value from one input byte: mostly small, sometimes extreme. */
static value gen_value(rg_dtype t, unsigned b)
{
    static const double fs[] = {0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 4.0, -4.0};
    value v = {0, 0, 0.0};
    if (t == RG_BOOL) {
        v.i = b & 1;
    } else if (is_float(t)) {
        if (b >= 250)
            v.f = b == 250 ? NAN : b == 251 ? -NAN : b <= 253 ? INFINITY : -INFINITY;
        else
            v.f = fs[b % 10];
    } else if (is_unsigned(t)) {
        size_t bits = rg_dtype_size(t) * 8;
        uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
        v.u = b >= 248 ? max - (b - 248) : b % 6;
    } else {
        size_t bits = rg_dtype_size(t) * 8;
        int64_t max = bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1;
        v.i = b >= 252 ? max - (b - 252) : b >= 248 ? -max - 1 + (b - 248) : (int64_t)(b % 9) - 4;
    }
    return v;
}

/* ---- segments --------------------------------------------------------------- */

/* Up to max_segs lengths from the input (mostly short, some empty, a few
 * long), their total at most max_elems; returns the count. */
static size_t gen_lengths(input *in, int64_t *len, size_t max_segs, int64_t max_elems)
{
    size_t n = take16(in) % (max_segs + 1);
    int64_t total = 0;
    unsigned mode = take(in) % 4;
    for (size_t i = 0; i < n; i++) {
        unsigned b = take(in);
        int64_t l;
        if (mode == 0)
            l = b % 9; /* short */
        else if (mode == 1)
            l = b < 128 ? 0 : b % 9; /* half empty */
        else if (mode == 2)
            l = 1; /* all length 1 */
        else
            l = b < 200 ? b % 5 : (int64_t)(b - 199) * (b - 199) * 7; /* heavy tail */
        if (total + l > max_elems)
            l = max_elems - total;
        len[i] = l;
        total += l;
    }
    return n;
}

static int64_t off_total(const int64_t *len, size_t n)
{
    int64_t t = 0;
    for (size_t i = 0; i < n; i++)
        t += len[i];
    return t;
}

static void offsets_of(int64_t *off, const int64_t *len, size_t n)
{
    off[0] = 0;
    for (size_t i = 0; i < n; i++)
        off[i + 1] = off[i] + len[i];
}

/* Breaks valid offsets off[0 .. n] in one of several ways (c = 1 .. 5);
 * returns whether they are now invalid for content of length nelems. */
static int corrupt(int64_t *off, size_t n, unsigned c, unsigned where)
{
    size_t i = n == 0 ? 0 : where % (n + 1);
    switch (c) {
    case 1: off[0] = 1 + where % 3; return 1; /* does not start at 0 */
    case 2:                               /* decreases at i */
        if (n < 1 || i == 0)
            return 0;
        off[i] = off[i - 1] - 1 - (int64_t)(where % 2);
        return 1;
    case 3: off[n] += 1 + where % 2; return 1; /* ends past the content */
    case 4: off[i] = -1 - (int64_t)(where % 5); return 1;
    case 5: off[i] = where % 2 ? INT32_MAX : INT64_MAX; return 1;
    default: return 0;
    }
}

/* An offsets array of dtype t (int32 or int64) holding off[0 .. n]. */
static rg_array *offsets_array(rg_dtype t, const int64_t *off, size_t n)
{
    rg_array *a = NULL;
    if (t == RG_INT32) {
        int32_t *o32 = malloc((n + 1) * sizeof *o32);
        for (size_t i = 0; i <= n; i++)
            o32[i] = (int32_t)off[i]; /* corrupt() may wrap INT64_MAX: still invalid */
        CHECK_OK(rg_array_from_host(&a, ctx, t, o32, n + 1));
        free(o32);
    } else {
        CHECK_OK(rg_array_from_host(&a, ctx, t, off, n + 1));
    }
    return a;
}

/* ---- arrays ------------------------------------------------------------------ */

/* A new array of n elements of t, every byte 0xA5 (so untouched outputs show). */
static rg_array *sentinel_array(rg_dtype t, size_t n)
{
    rg_array *a = NULL;
    size_t bytes = n * rg_dtype_size(t);
    unsigned char *buf = malloc(bytes ? bytes : 1);
    memset(buf, 0xA5, bytes);
    CHECK_OK(rg_array_from_host(&a, ctx, t, buf, n));
    free(buf);
    return a;
}

static void *read_all(const rg_array *a)
{
    size_t n = rg_array_length(a), bytes = n * rg_dtype_size(rg_array_dtype(a));
    void *buf = malloc(bytes ? bytes : 1);
    CHECK_OK(rg_array_read(buf, a, 0, n));
    return buf;
}

static void expect_sentinel(const rg_array *a, const char *what)
{
    size_t bytes = rg_array_length(a) * rg_dtype_size(rg_array_dtype(a));
    unsigned char *buf = read_all(a);
    for (size_t k = 0; k < bytes; k++)
        if (buf[k] != 0xA5)
            fail("%s: a failing call wrote its output (byte %zu)", what, k);
    free(buf);
}

static void expect_i64(const rg_array *a, const int64_t *want, size_t n, const char *what)
{
    if (rg_array_length(a) != n)
        fail("%s: length %zu, want %zu", what, rg_array_length(a), n);
    rg_dtype t = rg_array_dtype(a);
    void *buf = read_all(a);
    for (size_t k = 0; k < n; k++) {
        value v = get(t, buf, k);
        int64_t got = is_float(t) ? (int64_t)v.f : is_unsigned(t) ? (int64_t)v.u : v.i;
        if (got != want[k])
            fail("%s: [%zu] = %" PRId64 ", want %" PRId64, what, k, got, want[k]);
    }
    free(buf);
}

static void expect_failed(rg_status st, const char *what)
{
    if (st == RG_OK)
        fail("%s: accepted bad input", what);
    if (st == RG_EDEVICE || st == RG_ENOMEM || st == RG_EDEVMEM)
        fail("%s: bad input gave %s", what, rg_strerror(st));
    if (rg_context_error(ctx)[0] == '\0')
        fail("%s: failed (%s) with no message", what, rg_strerror(st));
}

/* ---- offsets, parents, local index, starts, lengths ------------------------ */

/* Swaps lengths i and i + 1 (i from where), if there are two, and fixes off. */
static void swap_lengths(int64_t *len, int64_t *off, size_t n, unsigned where)
{
    if (n < 2)
        return;
    size_t i = where % (n - 1);
    int64_t l = len[i];
    len[i] = len[i + 1];
    len[i + 1] = l;
    off[i + 1] = off[i] + len[i];
}

/* parents (kind 0), local index (1), starts (2) or lengths (3). */
static rg_status elem_op(unsigned kind, rg_array *out, const rg_array *o, rg_strategy strategy,
                         rg_strategy *used)
{
    if (kind == 0)
        return rg_parents(out, o, strategy, used);
    if (kind == 1)
        return rg_local_index(out, o, strategy, used);
    if (kind == 2)
        return rg_segment_starts(out, o, strategy, used);
    return rg_lengths(out, o);
}

/* Writes into the int32/int64 array a the range where now[] differs from was[]. */
static void write_changed(rg_array *a, const int64_t *was, const int64_t *now, size_t n)
{
    size_t lo = 0, hi = n;
    while (lo < n && was[lo] == now[lo])
        lo++;
    while (hi > lo && was[hi - 1] == now[hi - 1])
        hi--;
    if (lo == hi)
        return;
    if (rg_array_dtype(a) == RG_INT32) {
        int32_t *b = malloc((hi - lo) * sizeof *b);
        for (size_t i = lo; i < hi; i++)
            b[i - lo] = (int32_t)now[i];
        CHECK_OK(rg_array_write(a, lo, b, hi - lo));
        free(b);
    } else {
        CHECK_OK(rg_array_write(a, lo, now + lo, hi - lo));
    }
}

static void fuzz_parents(input *in)
{
    static int64_t len[MAX_SEGS], off[MAX_SEGS + 1], want[MAX_ELEMS];
    size_t n = gen_lengths(in, len, MAX_SEGS, MAX_ELEMS);
    offsets_of(off, len, n);
    int64_t nelems = off[n];
    rg_dtype ot = take(in) & 1 ? RG_INT32 : RG_INT64;
    rg_dtype outt = take(in) & 1 ? RG_INT32 : RG_INT64;
    unsigned kind = take(in) % 4; /* parents, local index, starts, lengths */
    rg_strategy strategy = (rg_strategy)(take(in) % 5);
    unsigned c = take(in) % 8, where = take16(in);
    if (kind == 3 && (c == 3 || c == 5))
        c = 0; /* lengths read no content: a last offset past it is no error */
    static int64_t good[MAX_SEGS + 1];
    memcpy(good, off, (n + 1) * sizeof off[0]);
    int bad = corrupt(off, n, c, where);
    /* Now and then the offsets change after a check and a use, by
     * rg_array_write of the changed range: the ops must not trust what they
     * knew of them before.  Unbroken ones then change too, validly: two
     * neighbouring lengths swap. */
    int late = take(in) % 3 == 0;
    if (late && !bad)
        swap_lengths(len, off, n, where);
    size_t outlen = kind == 3 ? n : (size_t)nelems;
    rg_array *o = offsets_array(ot, late ? good : off, n), *out = sentinel_array(outt, outlen);
    rg_strategy used = (rg_strategy)-1;
    rg_status st;
    if (late) {
        CHECK_OK(rg_offsets_validate(o, (size_t)nelems));
        CHECK_OK(elem_op(kind, out, o, strategy, &used));
        rg_array_free(out);
        out = sentinel_array(outt, outlen);
        write_changed(o, good, off, n + 1);
    } else if (take(in) % 3 == 0) {
        /* Checked first now and then: the ops then trust what the check found. */
        st = rg_offsets_validate(o, (size_t)nelems);
        if (bad)
            expect_failed(st, "rg_offsets_validate");
        else if (st != RG_OK)
            fail("rg_offsets_validate rejected valid offsets: %s", rg_strerror(st));
    }
    st = elem_op(kind, out, o, strategy, &used);
    static const char *names[] = {"parents", "local index", "starts", "lengths"};
    if (bad) {
        expect_failed(st, names[kind]);
        expect_sentinel(out, names[kind]);
    } else {
        if (st != RG_OK)
            fail("%s (strategy %d, %zu segments): %s", names[kind], strategy, n, rg_strerror(st));
        if (kind < 3 && (used < RG_STRATEGY_BSEARCH || used > RG_STRATEGY_MERGE_PATH ||
                         (strategy != RG_STRATEGY_AUTO && used != strategy)))
            fail("%s: asked for strategy %d, used %d", names[kind], strategy, used);
        for (size_t i = 0; i < n; i++) {
            if (kind == 3)
                want[i] = len[i];
            else
                for (int64_t k = off[i]; k < off[i + 1]; k++)
                    want[k] = kind == 0 ? (int64_t)i : kind == 1 ? k - off[i] : off[i];
        }
        expect_i64(out, want, outlen, names[kind]);
        if (kind == 3) { /* and back: offsets from those lengths */
            rg_array *back = sentinel_array(take(in) & 1 ? RG_INT32 : RG_INT64, n + 1);
            CHECK_OK(rg_offsets_from_lengths(back, out));
            expect_i64(back, off, n + 1, "offsets from lengths");
            rg_array_free(back);
        }
    }
    rg_array_free(out);
    rg_array_free(o);
}

/* Offsets from lengths, some of them negative or summing past the dtype. */
static void fuzz_from_lengths(input *in)
{
    static int64_t len[MAX_SEGS], off[MAX_SEGS + 1];
    size_t n = gen_lengths(in, len, MAX_SEGS, MAX_ELEMS);
    rg_dtype lt = take(in) & 1 ? RG_INT32 : RG_INT64;
    rg_dtype ot = take(in) & 1 ? RG_INT32 : RG_INT64;
    unsigned c = take(in) % 4, where = take16(in);
    int bad = 0;
    if (n > 0 && c == 1) { /* a negative length */
        len[where % n] = -1 - (int64_t)(where % 7);
        bad = 1;
    } else if (n > 0 && c == 2) { /* the largest length of lt: does the total fit ot? */
        size_t j = where % n;
        int64_t others = off_total(len, n) - len[j];
        len[j] = lt == RG_INT32 ? INT32_MAX : INT64_MAX;
        bad = others > 0 ? lt == RG_INT64 || ot == RG_INT32 : lt == RG_INT64 && ot == RG_INT32;
    }
    rg_array *l = NULL;
    if (lt == RG_INT32) {
        int32_t l32[MAX_SEGS];
        for (size_t i = 0; i < n; i++)
            l32[i] = (int32_t)len[i];
        CHECK_OK(rg_array_from_host(&l, ctx, lt, l32, n));
    } else {
        CHECK_OK(rg_array_from_host(&l, ctx, lt, len, n));
    }
    rg_array *o = sentinel_array(ot, n + 1);
    rg_status st = rg_offsets_from_lengths(o, l);
    if (bad) {
        expect_failed(st, "rg_offsets_from_lengths");
        expect_sentinel(o, "rg_offsets_from_lengths");
    } else {
        CHECK_OK(st);
        offsets_of(off, len, n);
        expect_i64(o, off, n + 1, "offsets from lengths");
    }
    rg_array_free(o);
    rg_array_free(l);
}

/* ---- reductions ---------------------------------------------------------- */

static rg_dtype ref_reduce_dtype(rg_reduce_op op, rg_dtype t)
{
    switch (op) {
    case RG_REDUCE_SUM:
    case RG_REDUCE_PROD:
        return is_float(t) ? t : is_unsigned(t) ? RG_UINT64 : RG_INT64;
    case RG_REDUCE_MIN:
    case RG_REDUCE_MAX: return t;
    case RG_REDUCE_ANY:
    case RG_REDUCE_ALL: return RG_BOOL;
    default: return RG_INT64;
    }
}

/* The identity of MIN (max = 0) or MAX (max = 1) for t. */
static value extreme(rg_dtype t, int largest)
{
    value v = {0, 0, 0.0};
    size_t bits = rg_dtype_size(t) * 8;
    if (t == RG_BOOL)
        v.i = largest;
    else if (is_float(t))
        v.f = largest ? INFINITY : -INFINITY;
    else if (is_unsigned(t))
        v.u = largest ? (bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1) : 0;
    else
        v.i = largest ? (bits == 64 ? INT64_MAX : ((int64_t)1 << (bits - 1)) - 1)
                      : (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1)));
    return v;
}

/* a < b in t's order (floats: NaN never compares). */
static int less(rg_dtype t, value a, value b)
{
    return is_float(t) ? a.f < b.f : is_unsigned(t) ? a.u < b.u : a.i < b.i;
}

/* op over content[lo .. hi) of dtype t, as ragged.h specifies. */
static value ref_reduce(rg_reduce_op op, rg_dtype t, const void *content, int64_t lo, int64_t hi)
{
    value r = {0, 0, 0.0};
    int64_t n = hi - lo;
    switch (op) {
    case RG_REDUCE_SUM:
    case RG_REDUCE_PROD: {
        int prod = op == RG_REDUCE_PROD;
        uint64_t acc = prod;
        double facc = prod;
        for (int64_t k = lo; k < hi; k++) {
            value v = get(t, content, (size_t)k);
            uint64_t x = is_unsigned(t) ? v.u : (uint64_t)v.i;
            acc = prod ? acc * x : acc + x; /* wraps modulo 2^64, as documented */
            facc = prod ? facc * v.f : facc + v.f;
        }
        if (is_float(t))
            r.f = facc;
        else if (is_unsigned(t))
            r.u = acc;
        else
            r.i = (int64_t)acc;
        return r;
    }
    case RG_REDUCE_MIN:
    case RG_REDUCE_MAX:
    case RG_REDUCE_ARGMIN:
    case RG_REDUCE_ARGMAX: {
        int max = op == RG_REDUCE_MAX || op == RG_REDUCE_ARGMAX;
        int64_t best = -1;
        value bv = extreme(t, !max);
        for (int64_t k = lo; k < hi; k++) {
            value v = get(t, content, (size_t)k);
            if (is_float(t) && isnan(v.f)) { /* the first NaN wins */
                best = k - lo;
                bv = v;
                break;
            }
            if (best < 0 || (max ? less(t, bv, v) : less(t, v, bv))) {
                best = k - lo;
                bv = v;
            }
        }
        if (op == RG_REDUCE_ARGMIN || op == RG_REDUCE_ARGMAX)
            r.i = best;
        else
            r = bv;
        return r;
    }
    case RG_REDUCE_COUNT: r.i = n; return r;
    case RG_REDUCE_COUNT_NONZERO:
    case RG_REDUCE_ANY:
    case RG_REDUCE_ALL: {
        int64_t nz = 0;
        for (int64_t k = lo; k < hi; k++)
            nz += is_nonzero(t, get(t, content, (size_t)k));
        r.i = op == RG_REDUCE_COUNT_NONZERO ? nz : op == RG_REDUCE_ANY ? nz > 0 : nz == n;
        return r;
    }
    }
    return r;
}

/* got equals want in dtype t: floats bit for bit (so -0.0 and +0.0 differ)
 * for MIN and MAX, by value for sums and products; NaN equals NaN. */
static int same(rg_dtype t, rg_reduce_op op, value got, value want)
{
    if (!is_float(t))
        return is_unsigned(t) ? got.u == want.u : got.i == want.i;
    if (isnan(got.f) || isnan(want.f))
        return isnan(got.f) && isnan(want.f);
    if (op == RG_REDUCE_MIN || op == RG_REDUCE_MAX)
        return signbit(got.f) == signbit(want.f) && got.f == want.f;
    return got.f == want.f;
}

/* Whether a float product over [lo, hi) could leave the dtype's range in
 * some order (values are 0, +-0.5, +-1, +-2, +-4 and the specials): then
 * the order decides between inf, 0 and a finite value, and only NaN-ness
 * is checked. */
static int prod_order_dependent(rg_dtype t, const void *content, int64_t lo, int64_t hi)
{
    int64_t up = 0, down = 0;
    for (int64_t k = lo; k < hi; k++) {
        double f = fabs(get(t, content, (size_t)k).f);
        up += f == 2.0 ? 1 : f == 4.0 ? 2 : 0;
        down += f == 0.5;
    }
    int64_t limit = t == RG_FLOAT32 ? 100 : 900;
    return up > limit || down > limit;
}

static void check_reduce(const rg_array *out, rg_reduce_op op, rg_dtype t, const void *content,
                         const int64_t *off, size_t n, const char *what)
{
    rg_dtype rt = ref_reduce_dtype(op, t);
    if (rg_array_dtype(out) != rt || rg_array_length(out) != n)
        fail("%s: output of %s x %zu", what, rg_dtype_name(rg_array_dtype(out)),
             rg_array_length(out));
    void *got = read_all(out);
    for (size_t i = 0; i < n; i++) {
        value w = ref_reduce(op, t, content, off[i], off[i + 1]), g = get(rt, got, i);
        if (is_float(rt)) /* the reference is exact in double; round as the dtype */
            w.f = rt == RG_FLOAT32 ? (double)(float)w.f : w.f;
        if (op == RG_REDUCE_PROD && is_float(t) &&
            prod_order_dependent(t, content, off[i], off[i + 1])) {
            if (isnan(w.f) != isnan(g.f))
                fail("%s: segment %zu: %g, want %g", what, i, g.f, w.f);
            continue;
        }
        if (!same(rt, op, g, w))
            fail("%s %s of %s, segment %zu [%" PRId64 ", %" PRId64 "): got %" PRId64 "/%" PRIu64
                 "/%g, want %" PRId64 "/%" PRIu64 "/%g",
                 what, rg_reduce_op_name(op), rg_dtype_name(t), i, off[i], off[i + 1], g.i, g.u,
                 g.f, w.i, w.u, w.f);
    }
    free(got);
}

/* Content of n elements of t from the input. */
static void *gen_content(input *in, rg_dtype t, size_t n)
{
    void *c = malloc(n * rg_dtype_size(t) + 1);
    unsigned step = take(in), b = take(in);
    for (size_t k = 0; k < n; k++) {
        /* After the input runs out, a cheap generator keeps varying the values. */
        b = in->n ? take(in) : (b * 73u + step + (unsigned)k) & 255u;
        put(t, c, k, gen_value(t, b));
    }
    return c;
}

static void fuzz_reduce(input *in)
{
    static int64_t len[MAX_SEGS], off[MAX_SEGS + 1];
    size_t n = gen_lengths(in, len, MAX_SEGS, MAX_ELEMS);
    offsets_of(off, len, n);
    size_t nelems = (size_t)off[n];
    rg_dtype t = all_dtypes[take(in) % NDTYPES];
    rg_reduce_op op = (rg_reduce_op)(take(in) % 10);
    rg_reduce_policy policy = (rg_reduce_policy)(take(in) % 3);
    rg_dtype ot = take(in) & 1 ? RG_INT32 : RG_INT64;
    unsigned c = take(in) % 10, where = take16(in);
    static int64_t good[MAX_SEGS + 1];
    memcpy(good, off, (n + 1) * sizeof off[0]);
    int bad = corrupt(off, n, c, where);
    int late = c < 6 && take(in) % 3 == 0; /* as in fuzz_parents */
    if (late && !bad)
        swap_lengths(len, off, n, where);
    /* A wrong output dtype or length now and then (c = 6, 7). */
    rg_dtype rt = ref_reduce_dtype(op, t);
    rg_dtype outt = c == 6 ? (rt == RG_INT64 ? RG_INT32 : RG_INT64) : rt;
    size_t outlen = c == 7 ? n + 1 : n;
    bad |= c == 6 || c == 7;
    void *content = gen_content(in, t, nelems);
    rg_array *a = NULL, *o = offsets_array(ot, late ? good : off, n);
    rg_array *out = sentinel_array(outt, outlen);
    CHECK_OK(rg_array_from_host(&a, ctx, t, content, nelems));
    rg_reduce_policy used = (rg_reduce_policy)-1;
    if (late) {
        CHECK_OK(rg_offsets_validate(o, nelems));
        CHECK_OK(rg_segment_reduce(out, a, o, op, policy, &used));
        rg_array_free(out);
        out = sentinel_array(outt, outlen);
        write_changed(o, good, off, n + 1);
    }
    rg_status st = rg_segment_reduce(out, a, o, op, policy, &used);
    if (bad) {
        expect_failed(st, "rg_segment_reduce");
        expect_sentinel(out, "rg_segment_reduce");
    } else {
        if (st != RG_OK)
            fail("rg_segment_reduce %s of %s (policy %d, %zu segments): %s",
                 rg_reduce_op_name(op), rg_dtype_name(t), policy, n, rg_strerror(st));
        if (used < RG_REDUCE_POLICY_PER_SEGMENT || used > RG_REDUCE_POLICY_MERGE_PATH ||
            (policy != RG_REDUCE_POLICY_AUTO && used != policy))
            fail("rg_segment_reduce: asked for policy %d, used %d", policy, used);
        check_reduce(out, op, t, content, off, n, "rg_segment_reduce");
    }
    rg_array_free(out);
    rg_array_free(o);
    rg_array_free(a);
    free(content);
}

/* ---- nonzero ------------------------------------------------------------------- */

static void fuzz_nonzero(input *in)
{
    size_t ndim = 1 + take(in) % 4;
    int64_t shape[4];
    size_t len = 1;
    for (size_t d = 0; d < ndim; d++) {
        unsigned b = take(in);
        shape[d] = d == 0 && b >= 200 ? (int64_t)(b - 199) * 300 : (int64_t)(b % 12);
        len *= (size_t)shape[d];
    }
    if (len > 4 * MAX_ELEMS) { /* keep the first dimension small then */
        len /= (size_t)shape[0];
        shape[0] = 1 + shape[0] % 7;
        len *= (size_t)shape[0];
    }
    rg_dtype t = all_dtypes[take(in) % NDTYPES];
    unsigned mode = take(in) % 6;
    void *content = gen_content(in, t, len);
    /* Sparse or dense runs, whatever the value generator gave. */
    if (mode == 1) {
        value zero = {0, 0, 0.0};
        for (size_t k = 0; k < len; k++)
            if (k % 17)
                put(t, content, k, zero);
    }
    rg_array *a = NULL;
    CHECK_OK(rg_array_from_host(&a, ctx, t, content, len));
    int64_t nnz = 0, *want = malloc((len * ndim + 1) * sizeof *want);
    for (size_t k = 0; k < len; k++) {
        if (!is_nonzero(t, get(t, content, k)))
            continue;
        size_t rest = k;
        for (size_t d = ndim; d-- > 0;) {
            want[nnz * (int64_t)ndim + (int64_t)d] = (int64_t)(rest % (size_t)shape[d]);
            rest /= (size_t)shape[d];
        }
        nnz++;
    }
    int64_t count = -1;
    CHECK_OK(rg_count_nonzero(&count, a));
    if (count != nnz)
        fail("rg_count_nonzero: %" PRId64 ", want %" PRId64, count, nnz);
    unsigned how = take(in) % 4;
    if (how < 2) { /* rg_nonzero, without a bound or with one (maybe too small) */
        int64_t bound = how == 0 ? -1 : nnz + (int64_t)(take(in) % 4) - 1;
        rg_array *coords = (rg_array *)&count; /* must stay as it is on failure */
        int64_t got = -7;
        rg_status st = rg_nonzero(&coords, &got, a, shape, ndim, bound);
        if (bound >= 0 && bound < nnz) {
            expect_failed(st, "rg_nonzero under its bound");
            if (coords != (rg_array *)&count || got != -7)
                fail("rg_nonzero under its bound wrote its outputs");
        } else {
            if (st != RG_OK)
                fail("rg_nonzero (%zu dims, bound %" PRId64 "): %s", ndim, bound, rg_strerror(st));
            if (got != nnz)
                fail("rg_nonzero: nnz %" PRId64 ", want %" PRId64, got, nnz);
            expect_i64(coords, want, (size_t)nnz * ndim, "rg_nonzero");
            rg_array_free(coords);
        }
    } else { /* rg_nonzero_into an array with room for some rows more or fewer */
        int64_t room = nnz + (int64_t)(take(in) % 4) - 1;
        if (how == 3)
            room = (int64_t)len; /* a row per element: the one-pass path */
        if (room < 0)
            room = 0;
        rg_array *coords = sentinel_array(RG_INT64, (size_t)room * ndim);
        int64_t got = -7;
        rg_status st = rg_nonzero_into(coords, &got, a, shape, ndim);
        if (room < nnz) {
            expect_failed(st, "rg_nonzero_into");
            expect_sentinel(coords, "rg_nonzero_into");
            if (got != -7)
                fail("rg_nonzero_into: failing call wrote *nnz");
        } else {
            CHECK_OK(st);
            if (got != nnz)
                fail("rg_nonzero_into: nnz %" PRId64 ", want %" PRId64, got, nnz);
            int64_t *all = read_all(coords);
            for (size_t k = 0; k < (size_t)nnz * ndim; k++)
                if (all[k] != want[k])
                    fail("rg_nonzero_into: [%zu] = %" PRId64 ", want %" PRId64, k, all[k], want[k]);
            /* The rows past nnz keep their values. */
            const unsigned char *rest = (const unsigned char *)(all + (size_t)nnz * ndim);
            for (size_t k = 0; k < ((size_t)room - (size_t)nnz) * ndim * 8; k++)
                if (rest[k] != 0xA5)
                    fail("rg_nonzero_into wrote past its rows");
            free(all);
        }
        rg_array_free(coords);
    }
    free(want);
    rg_array_free(a);
    free(content);
}

static void fuzz_segment_nonzero(input *in)
{
    static int64_t len[MAX_SEGS], off[MAX_SEGS + 1], woff[MAX_SEGS + 1];
    size_t n = gen_lengths(in, len, MAX_SEGS, MAX_ELEMS);
    offsets_of(off, len, n);
    size_t nelems = (size_t)off[n];
    rg_dtype t = all_dtypes[take(in) % NDTYPES];
    rg_dtype ot = take(in) & 1 ? RG_INT32 : RG_INT64;
    unsigned c = take(in) % 8, where = take16(in);
    int bad = corrupt(off, n, c, where);
    void *content = gen_content(in, t, nelems);
    rg_array *a = NULL, *o = offsets_array(ot, off, n);
    CHECK_OK(rg_array_from_host(&a, ctx, t, content, nelems));
    rg_array *ro = (rg_array *)&where, *rp = (rg_array *)&where;
    rg_status st = rg_segment_nonzero(&ro, &rp, a, o);
    if (bad) {
        expect_failed(st, "rg_segment_nonzero");
        if (ro != (rg_array *)&where || rp != (rg_array *)&where)
            fail("rg_segment_nonzero: failing call wrote its outputs");
    } else {
        CHECK_OK(st);
        int64_t *want = malloc((nelems + 1) * sizeof *want);
        woff[0] = 0;
        for (size_t i = 0; i < n; i++) {
            woff[i + 1] = woff[i];
            for (int64_t k = off[i]; k < off[i + 1]; k++)
                if (is_nonzero(t, get(t, content, (size_t)k)))
                    want[woff[i + 1]++] = k - off[i];
        }
        expect_i64(ro, woff, n + 1, "rg_segment_nonzero offsets");
        expect_i64(rp, want, (size_t)woff[n], "rg_segment_nonzero positions");
        free(want);
        rg_array_free(ro);
        rg_array_free(rp);
    }
    rg_array_free(o);
    rg_array_free(a);
    free(content);
}

/* ---- nested ---------------------------------------------------------------- */

static void fuzz_nested(input *in)
{
    enum { MAXL = 3, NMAX = 200 };
    static int64_t len[MAXL][NMAX], off[MAXL][NMAX + 1];
    size_t nl = 1 + take(in) % MAXL, cnt[MAXL + 1];
    /* Outermost first: level d splits cnt[d + 1] items into cnt[d] lists. */
    cnt[0] = gen_lengths(in, len[0], NMAX, NMAX);
    offsets_of(off[0], len[0], cnt[0]);
    for (size_t d = 1; d <= nl; d++) {
        cnt[d] = (size_t)off[d - 1][cnt[d - 1]];
        if (d == nl)
            break;
        for (size_t i = 0; i < cnt[d]; i++)
            len[d][i] = take(in) % 5;
        offsets_of(off[d], len[d], cnt[d]);
        if (off[d][cnt[d]] > NMAX) { /* keep every level within NMAX items */
            for (size_t i = 0; i < cnt[d]; i++)
                len[d][i] = i < NMAX ? (int64_t)(i % 2) : 0;
            offsets_of(off[d], len[d], cnt[d]);
        }
    }
    size_t nelems = cnt[nl];
    rg_dtype ot = take(in) & 1 ? RG_INT32 : RG_INT64;
    unsigned c = take(in) % 8, where = take16(in), at = take(in) % nl;
    unsigned what = take(in) % 4;
    /* Only validate and reduce know the content length: to the others the
     * innermost level's last offset is the content length. */
    if (at == nl - 1 && (what == 1 || what == 2) && (c == 3 || c == 5))
        c = 0;
    int bad = corrupt(off[at], cnt[at], c, where);
    rg_array *levels[MAXL];
    for (size_t d = 0; d < nl; d++)
        levels[d] = offsets_array(ot, off[d], cnt[d]);
    const rg_array *const *lv = (const rg_array *const *)levels;
    size_t outer = take(in) % nl, inner = outer + 1 + take(in) % (nl - outer);
    /* The reference: the offsets of depth-outer items into depth-inner items. */
    int64_t comp[NMAX + 1];
    for (size_t i = 0; i <= cnt[outer]; i++) {
        int64_t x = off[outer][i];
        for (size_t d = outer + 1; d < inner && !bad; d++)
            x = off[d][x];
        comp[i] = x;
    }
    rg_status st;
    rg_array *out;
    if (what == 0) {
        st = rg_nested_validate(lv, nl, nelems);
        if (bad)
            expect_failed(st, "rg_nested_validate");
        else
            CHECK_OK(st);
        out = NULL;
    } else if (what == 1) {
        out = sentinel_array(take(in) & 1 ? RG_INT32 : RG_INT64, cnt[outer] + 1);
        /* Two levels by rg_offsets_compose now and then, which sees only
         * those two: a break elsewhere is not its to find. */
        int compose = inner == outer + 2 && (!bad || at == outer) && take(in) & 1;
        st = compose ? rg_offsets_compose(out, levels[outer], levels[outer + 1])
                     : rg_nested_offsets(out, lv, nl, outer, inner);
        if (!bad) {
            CHECK_OK(st);
            expect_i64(out, comp, cnt[outer] + 1, compose ? "rg_offsets_compose" : "rg_nested_offsets");
        }
    } else if (what == 2) {
        int local = take(in) & 1;
        rg_strategy s = (rg_strategy)(take(in) % 5);
        out = sentinel_array(take(in) & 1 ? RG_INT32 : RG_INT64, cnt[inner]);
        st = local ? rg_nested_local_index(out, lv, nl, outer, inner, s, NULL)
                   : rg_nested_parents(out, lv, nl, outer, inner, s, NULL);
        if (!bad) {
            CHECK_OK(st);
            int64_t want[NMAX];
            for (size_t i = 0; i < cnt[outer]; i++)
                for (int64_t j = comp[i]; j < comp[i + 1]; j++)
                    want[j] = local ? j - comp[i] : (int64_t)i;
            expect_i64(out, want, cnt[inner], local ? "rg_nested_local_index" : "rg_nested_parents");
        }
    } else {
        rg_dtype t = all_dtypes[take(in) % NDTYPES];
        rg_reduce_op op = (rg_reduce_op)(take(in) % 10);
        void *content = gen_content(in, t, nelems);
        rg_array *a = NULL;
        CHECK_OK(rg_array_from_host(&a, ctx, t, content, nelems));
        out = sentinel_array(ref_reduce_dtype(op, t), cnt[nl - 1]);
        st = rg_nested_reduce(out, lv, nl, a, op, (rg_reduce_policy)(take(in) % 3), NULL);
        if (!bad) {
            CHECK_OK(st);
            check_reduce(out, op, t, content, off[nl - 1], cnt[nl - 1], "rg_nested_reduce");
        }
        rg_array_free(a);
        free(content);
    }
    if (bad && out != NULL) {
        char desc[160];
        snprintf(desc, sizeof desc,
                 "nested op %u (levels %zu, outer %zu, inner %zu; level %u broken by %u at %u)",
                 what, nl, outer, inner, at, c, where);
        expect_failed(st, desc);
        expect_sentinel(out, desc);
    }
    rg_array_free(out);
    for (size_t d = 0; d < nl; d++)
        rg_array_free(levels[d]);
}

/* ---- segment descriptors ---------------------------------------------------- */

static void fuzz_segd(input *in)
{
    static int64_t len[MAX_SEGS], off[MAX_SEGS + 1], pl[MAX_SEGS + 64];
    size_t n = gen_lengths(in, len, MAX_SEGS, MAX_ELEMS);
    offsets_of(off, len, n);
    size_t nw = take(in) % 9; /* 0 workers must fail */
    int by_elems = take(in) & 1;
    rg_segd *s = NULL;
    /* From lengths, from offsets or from an offsets array; now and then from
     * broken offsets first, which must fail and leave *out alone. */
    unsigned from = take(in) % 3, c = take(in) % 8, where = take16(in);
    if (from > 0 && c >= 1 && c <= 5) {
        static int64_t broken[MAX_SEGS + 1];
        memcpy(broken, off, (n + 1) * sizeof off[0]);
        /* No content to end at: a last offset past it, or huge, is valid. */
        int last = c == 3 || (c == 5 && where % (n + 1) == n);
        if (!last && corrupt(broken, n, c, where)) {
            rg_segd *none = (rg_segd *)&where;
            rg_array *o = from == 2 ? offsets_array(RG_INT64, broken, n) : NULL;
            rg_status st = from == 1 ? rg_segd_from_offsets(&none, ctx, broken, n + 1)
                                     : rg_segd_from_array(&none, o);
            rg_array_free(o);
            expect_failed(st, "rg_segd from broken offsets");
            if (none != (rg_segd *)&where)
                fail("rg_segd from broken offsets wrote its output");
        }
    }
    if (from == 0) {
        CHECK_OK(rg_segd_from_lengths(&s, ctx, len, n));
    } else if (from == 1) {
        CHECK_OK(rg_segd_from_offsets(&s, ctx, off, n + 1));
    } else {
        rg_array *o = offsets_array(where & 1 ? RG_INT32 : RG_INT64, off, n);
        CHECK_OK(rg_segd_from_array(&s, o));
        rg_array_free(o);
    }
    if (rg_segd_nsegs(s) != n || rg_segd_nelems(s) != off[n])
        fail("segd: %zu segments of %" PRId64 " elements", rg_segd_nsegs(s), rg_segd_nelems(s));
    for (size_t i = 0; i < n; i++)
        if (rg_segd_lengths(s)[i] != len[i] || rg_segd_offsets(s)[i + 1] != off[i + 1])
            fail("segd: segment %zu", i);
    rg_dsegd *ds = (rg_dsegd *)&nw;
    rg_status st = by_elems ? rg_segd_split_elems(&ds, s, nw) : rg_segd_split_segs(&ds, s, nw);
    if (nw == 0) {
        expect_failed(st, "split on 0 workers");
        if (ds != (rg_dsegd *)&nw)
            fail("split on 0 workers wrote its output");
        rg_segd_free(s);
        return;
    }
    CHECK_OK(st);
    if (rg_dsegd_nworkers(ds) != nw)
        fail("split: %zu workers, want %zu", rg_dsegd_nworkers(ds), nw);
    int64_t elem = 0, total = off[n];
    size_t npl = 0;
    for (size_t w = 0; w < nw; w++) {
        rg_segd_part p;
        CHECK_OK(rg_dsegd_part(&p, ds, w));
        if (p.first_elem != elem)
            fail("split: worker %zu starts at element %" PRId64 ", want %" PRId64, w,
                 p.first_elem, elem);
        if (by_elems) {
            int64_t share = total / (int64_t)nw + ((int64_t)w < total % (int64_t)nw);
            if (p.nelems != share)
                fail("split_elems: worker %zu has %" PRId64 " elements, want %" PRId64, w,
                     p.nelems, share);
        }
        if (npl + p.npieces > sizeof pl / sizeof pl[0])
            fail("split: %zu pieces, more than segments + workers", npl + p.npieces);
        CHECK_OK(rg_dsegd_lengths(pl + npl, ds, w));
        int64_t sum = 0;
        for (size_t j = 0; j < p.npieces; j++) {
            sum += pl[npl + j];
            if (pl[npl + j] < 0)
                fail("split: negative piece");
        }
        if (sum != p.nelems)
            fail("split: worker %zu pieces sum to %" PRId64 ", want %" PRId64, w, sum, p.nelems);
        if (p.npieces > 0) { /* the first piece lies inside segment first_seg */
            if (p.first_seg >= n || p.first_offset < 0 ||
                p.first_offset + pl[npl] > len[p.first_seg] ||
                off[p.first_seg] + p.first_offset != p.first_elem)
                fail("split: worker %zu's first piece does not fit segment %zu", w, p.first_seg);
            if (!by_elems && (p.first_offset != 0 || pl[npl] != len[p.first_seg]))
                fail("split_segs: worker %zu cut a segment", w);
        }
        npl += p.npieces;
        elem += p.nelems;
    }
    if (elem != total)
        fail("split: workers hold %" PRId64 " elements, want %" PRId64, elem, total);
    rg_segd_part p;
    if (rg_dsegd_part(&p, ds, nw) != RG_ERANGE)
        fail("rg_dsegd_part past the last worker");
    if (!by_elems && npl != n)
        fail("split_segs: %zu pieces of %zu segments", npl, n);
    rg_segd *j = NULL, *g = NULL;
    CHECK_OK(rg_dsegd_join(&j, ds));
    CHECK_OK(rg_dsegd_glue(&g, ds));
    if (rg_segd_nsegs(j) != npl || rg_segd_nelems(j) != total)
        fail("join: %zu segments, want %zu", rg_segd_nsegs(j), npl);
    for (size_t i = 0; i < npl; i++)
        if (rg_segd_lengths(j)[i] != pl[i])
            fail("join: segment %zu", i);
    if (rg_segd_nsegs(g) != n || rg_segd_nelems(g) != total)
        fail("glue: %zu segments, want %zu", rg_segd_nsegs(g), n);
    for (size_t i = 0; i < n; i++)
        if (rg_segd_lengths(g)[i] != len[i])
            fail("glue: segment %zu", i);
    rg_segd_free(g);
    rg_segd_free(j);
    rg_dsegd_free(ds);
    rg_segd_free(s);
}

/* ---- lists ------------------------------------------------------------------------ */

/* The model: items of int64 values, wrapped to the list's dtype. */
typedef struct {
    int64_t *v[128];
    size_t len[128];
    size_t n;
} model;

static int64_t wrap(rg_dtype t, int64_t x)
{
    switch (t) {
    case RG_INT8: return (int8_t)x;
    case RG_UINT8: return (uint8_t)x;
    case RG_INT32: return (int32_t)x;
    default: return x;
    }
}

static void model_insert(model *m, size_t at, const int64_t *v, size_t len)
{
    memmove(m->v + at + 1, m->v + at, (m->n - at) * sizeof m->v[0]);
    memmove(m->len + at + 1, m->len + at, (m->n - at) * sizeof m->len[0]);
    m->v[at] = malloc((len + 1) * sizeof *v);
    memcpy(m->v[at], v, len * sizeof *v);
    m->len[at] = len;
    m->n++;
}

static void model_delete(model *m, size_t at)
{
    free(m->v[at]);
    memmove(m->v + at, m->v + at + 1, (m->n - at - 1) * sizeof m->v[0]);
    memmove(m->len + at, m->len + at + 1, (m->n - at - 1) * sizeof m->len[0]);
    m->n--;
}

static void model_check(const model *m, rg_list *l, const char *what)
{
    if (rg_list_nitems(l) != m->n)
        fail("%s: %zu items, want %zu", what, rg_list_nitems(l), m->n);
    int64_t off[129], flat[128 * 40];
    size_t total = 0;
    off[0] = 0;
    for (size_t i = 0; i < m->n; i++) {
        memcpy(flat + total, m->v[i], m->len[i] * sizeof flat[0]);
        total += m->len[i];
        off[i + 1] = (int64_t)total;
    }
    if (rg_list_nelems(l) != total)
        fail("%s: %zu elements, want %zu", what, rg_list_nelems(l), total);
    expect_i64(rg_list_offsets(l), off, m->n + 1, what);
    expect_i64(rg_list_content(l), flat, total, what);
    CHECK_OK(rg_offsets_validate(rg_list_offsets(l), total));
}

/* Python's slice bounds clamped to [0, n]. */
static size_t clamp(ptrdiff_t i, size_t n)
{
    if (i < 0)
        i += (ptrdiff_t)n;
    return i < 0 ? 0 : (size_t)i > n ? n : (size_t)i;
}

/* len item values (0 .. 49) from the input: into vals for the model, into
 * buf as elements of t for the list. */
static void list_values(input *in, rg_dtype t, int64_t *vals, unsigned char *buf, size_t len)
{
    for (size_t k = 0; k < len; k++) {
        vals[k] = (int64_t)(take(in) % 50);
        value v = {vals[k], (uint64_t)vals[k], (double)vals[k]};
        put(t, buf, k, v);
    }
}

/* A list made from bad sizes must fail with *out (l) unwritten; an empty
 * list goes on in its place. */
static rg_list *list_not_made(rg_status st, const rg_list *l, rg_dtype t, const char *what)
{
    expect_failed(st, what);
    if (l != NULL)
        fail("%s: *out written", what);
    rg_list *empty = NULL;
    CHECK_OK(rg_list_create(&empty, ctx, t, 0));
    return empty;
}

static void fuzz_list(input *in)
{
    static const rg_dtype lt[] = {RG_INT8, RG_UINT8, RG_INT32, RG_INT64, RG_FLOAT64};
    rg_dtype t = lt[take(in) % 5];
    size_t es = rg_dtype_size(t);
    model m = {.n = 0};
    rg_list *l = NULL;
    int64_t vals[40];
    unsigned char buf[40 * 8];
    /* Empty, or made from items of one size, or of the sizes given. */
    unsigned how = take(in) % 3;
    size_t len0 = take(in) % 40, size0 = take(in) % 6, sizes0[40], n0 = 0;
    list_values(in, t, vals, buf, len0);
    if (how == 0) {
        CHECK_OK(rg_list_create(&l, ctx, t, take(in) % 20));
    } else if (how == 1) {
        rg_status st = rg_list_from_item_size(&l, ctx, t, buf, len0, size0);
        if (size0 == 0 ? len0 != 0 : len0 % size0 != 0) {
            l = list_not_made(st, l, t, "rg_list_from_item_size of a size that does not divide");
        } else {
            CHECK_OK(st);
            for (size_t k = 0; size0 > 0 && k < len0 / size0; k++)
                model_insert(&m, m.n, vals + k * size0, size0);
        }
    } else {
        /* Item 40 takes what is left; up to 3 empty items may follow. */
        for (size_t left = len0; left > 0 || (n0 < 3 && take(in) & 1);) {
            size_t sz = take(in) % 5;
            sz = sz > left || n0 == 39 ? left : sz;
            sizes0[n0++] = sz;
            left -= sz;
        }
        int wrong = n0 > 0 && take(in) % 4 == 0;
        if (wrong)
            sizes0[n0 - 1]++;
        rg_status st = rg_list_from_sizes(&l, ctx, t, buf, len0, sizes0, n0);
        if (wrong) {
            l = list_not_made(st, l, t, "rg_list_from_sizes with sizes past the data");
        } else {
            CHECK_OK(st);
            for (size_t k = 0, pos = 0; k < n0; pos += sizes0[k++])
                model_insert(&m, m.n, vals + pos, sizes0[k]);
        }
    }
    model_check(&m, l, "list made");
    unsigned nops = 1 + take(in) % 24;
    for (unsigned opn = 0; opn < nops && in->n > 0; opn++) {
        unsigned op = take(in) % 9;
        size_t len = take(in) % 40;
        ptrdiff_t idx = (ptrdiff_t)(take(in) % 80) - 40;
        list_values(in, t, vals, buf, len);
        ptrdiff_t n = (ptrdiff_t)m.n;
        ptrdiff_t at = idx < 0 ? idx + n : idx; /* the item an index names */
        int in_range = at >= 0 && at < n;
        rg_status st;
        if (m.n >= 60 && (op == 0 || op == 1 || op == 6 || op == 7))
            op = 2; /* keep the model small */
        switch (op) {
        case 0:
            CHECK_OK(rg_list_append(l, buf, len));
            model_insert(&m, m.n, vals, len);
            break;
        case 1: /* insert: index nitems appends; -n is the front */
            st = rg_list_insert(l, idx, buf, len);
            if (at >= 0 && at <= n) {
                CHECK_OK(st);
                model_insert(&m, (size_t)at, vals, len);
            } else if (st != RG_ERANGE) {
                fail("rg_list_insert(%td) of %td items: %s", idx, n, rg_strerror(st));
            }
            break;
        case 2:
            st = rg_list_delete(l, idx);
            if (in_range) {
                CHECK_OK(st);
                model_delete(&m, (size_t)at);
            } else if (st != RG_ERANGE) {
                fail("rg_list_delete(%td) of %td items: %s", idx, n, rg_strerror(st));
            }
            break;
        case 3:
            st = rg_list_set(l, idx, buf, len);
            if (in_range) {
                CHECK_OK(st);
                model_delete(&m, (size_t)at);
                model_insert(&m, (size_t)at, vals, len);
            } else if (st != RG_ERANGE) {
                fail("rg_list_set(%td) of %td items: %s", idx, n, rg_strerror(st));
            }
            break;
        case 4: { /* get, with room for a few elements fewer now and then */
            size_t cap = len, got = 12345;
            int64_t *dst = calloc(64, es);
            st = rg_list_get(dst, cap, &got, l, idx);
            if (!in_range) {
                if (st != RG_ERANGE)
                    fail("rg_list_get(%td) of %td items: %s", idx, n, rg_strerror(st));
            } else if (m.len[at] > cap) {
                expect_failed(st, "rg_list_get into too little room");
            } else {
                CHECK_OK(st);
                if (got != m.len[at])
                    fail("rg_list_get(%td): length %zu, want %zu", idx, got, m.len[at]);
                size_t vs = 0, vl = 0, before = 0;
                for (ptrdiff_t i = 0; i < at; i++)
                    before += m.len[i];
                CHECK_OK(rg_list_item_view(&vs, &vl, l, idx));
                if (vs != before || vl != m.len[at])
                    fail("rg_list_item_view(%td): [%zu, +%zu), want [%zu, +%zu)", idx, vs, vl,
                         before, m.len[at]);
                for (size_t k = 0; k < got; k++) {
                    value v = get(t, dst, k);
                    int64_t g = is_float(t) ? (int64_t)v.f : is_unsigned(t) ? (int64_t)v.u : v.i;
                    if (g != m.v[at][k])
                        fail("rg_list_get(%td)[%zu] = %" PRId64 ", want %" PRId64, idx, k, g,
                             m.v[at][k]);
                }
            }
            free(dst);
            break;
        }
        case 5: { /* delete a slice */
            ptrdiff_t end = (ptrdiff_t)(take(in) % 80) - 40;
            size_t b = clamp(idx, m.n), e = clamp(end, m.n);
            CHECK_OK(rg_list_delete_slice(l, idx, end));
            for (size_t k = b; k < e; k++)
                model_delete(&m, b);
            break;
        }
        case 6: { /* extend by a slice of itself, or by itself whole */
            ptrdiff_t end = (ptrdiff_t)(take(in) % 80) - 40;
            size_t b = clamp(idx, m.n), e = clamp(end, m.n);
            if (len % 3 == 0) {
                CHECK_OK(rg_list_extend(l, l));
                b = 0;
                e = m.n;
            } else {
                rg_list *s = NULL;
                CHECK_OK(rg_list_slice(&s, l, idx, end));
                model sm = {.n = 0};
                for (size_t k = b; k < e; k++)
                    model_insert(&sm, sm.n, m.v[k], m.len[k]);
                model_check(&sm, s, "rg_list_slice");
                for (size_t k = 0; k < sm.n; k++)
                    free(sm.v[k]);
                CHECK_OK(rg_list_extend(l, s));
                rg_list_free(s);
            }
            size_t stop = e > b ? e : b;
            for (size_t k = b; k < stop; k++) /* at most 59 more items */
                model_insert(&m, m.n, m.v[k], m.len[k]);
            break;
        }
        case 7: { /* extend by sizes: len elements as items of 0..3 */
            size_t sizes[40], ns = 0, left = len;
            while (left > 0) {
                size_t s = take(in) % 4;
                if (s > left || ns == 39 || in->n == 0) /* at most 40 items, all of len */
                    s = left;
                sizes[ns++] = s;
                left -= s;
            }
            int wrong = take(in) % 5 == 0 && ns > 0;
            if (wrong)
                sizes[0]++;
            st = rg_list_extend_sizes(l, buf, len, sizes, ns);
            if (wrong) {
                expect_failed(st, "rg_list_extend_sizes with sizes past the data");
            } else {
                CHECK_OK(st);
                size_t pos = 0;
                for (size_t k = 0; k < ns; k++) {
                    model_insert(&m, m.n, vals + pos, sizes[k]);
                    pos += sizes[k];
                }
            }
            break;
        }
        default: { /* scalar arithmetic */
            rg_arith a = (rg_arith)(RG_ARITH_ADD + take(in) % 3); /* add, sub, mul */
            int64_t v = (int64_t)(take(in) % 4) - (a == RG_ARITH_MUL ? 1 : 0);
            st = rg_list_scalar(l, a, (double)v);
            if (t == RG_UINT8 && v < 0) {
                expect_failed(st, "rg_list_scalar of a negative value on uint8");
                break;
            }
            CHECK_OK(st);
            for (size_t i = 0; i < m.n; i++)
                for (size_t k = 0; k < m.len[i]; k++) {
                    int64_t x = m.v[i][k];
                    x = a == RG_ARITH_ADD ? x + v : a == RG_ARITH_SUB ? x - v : x * v;
                    m.v[i][k] = wrap(t, x);
                }
            break;
        }
        }
        model_check(&m, l, "list");
    }
    rg_list_free(l);
    for (size_t i = 0; i < m.n; i++)
        free(m.v[i]);
}

/* ---- arrays: writes, reads, kernels and copies against a model -------------- */

/* x op y in dtype t, as rg_array_scalar documents: integers wrap, divide
 * truncating toward zero (MIN / -1 = MIN); floats round in their own type. */
static value arith(rg_dtype t, rg_arith op, value x, value y)
{
    value r = {0, 0, 0.0};
    if (t == RG_FLOAT32) {
        float a = (float)x.f, b = (float)y.f;
        r.f = op == RG_ARITH_ADD ? a + b : op == RG_ARITH_SUB ? a - b : op == RG_ARITH_MUL ? a * b : a / b;
        r.f = (float)r.f;
    } else if (t == RG_FLOAT64) {
        double a = x.f, b = y.f;
        r.f = op == RG_ARITH_ADD ? a + b : op == RG_ARITH_SUB ? a - b : op == RG_ARITH_MUL ? a * b : a / b;
    } else {
        int sgn = !is_unsigned(t);
        uint64_t a = sgn ? (uint64_t)x.i : x.u, b = sgn ? (uint64_t)y.i : y.u, v;
        if (op == RG_ARITH_ADD)
            v = a + b;
        else if (op == RG_ARITH_SUB)
            v = a - b;
        else if (op == RG_ARITH_MUL)
            v = a * b;
        else if (sgn)
            v = y.i == -1 ? 0 - a : (uint64_t)(x.i / y.i);
        else
            v = a / b;
        /* Back to the dtype's width: put and get wrap and sign-extend. */
        unsigned char buf[8];
        value w = {(int64_t)v, v, 0.0};
        put(t, buf, 0, w);
        r = get(t, buf, 0);
    }
    return r;
}

static void model_array_check(const rg_array *a, const unsigned char *m, size_t start,
                              size_t count, const char *what)
{
    rg_dtype t = rg_array_dtype(a);
    size_t es = rg_dtype_size(t);
    unsigned char *buf = malloc(count * es + 1);
    CHECK_OK(rg_array_read(buf, a, start, count));
    for (size_t k = 0; k < count; k++) {
        value g = get(t, buf, k), w = get(t, m, start + k);
        int ok = is_float(t) ? (isnan(g.f) && isnan(w.f)) || memcmp(buf + k * es, m + (start + k) * es, es) == 0
                             : memcmp(buf + k * es, m + (start + k) * es, es) == 0;
        if (!ok)
            fail("%s: %s element %zu of [%zu, +%zu) = %" PRId64 "/%" PRIu64 "/%g, want %" PRId64
                 "/%" PRIu64 "/%g",
                 what, rg_dtype_name(t), start + k, start, count, g.i, g.u, g.f, w.i, w.u, w.f);
    }
    free(buf);
}

/* A range [*start, *start + *count) from the input, sometimes past n. */
static void gen_range(input *in, size_t n, size_t *start, size_t *count)
{
    unsigned b = take(in);
    *start = n ? take16(in) % (n + (b & 1)) : b & 1; /* b & 1: maybe one past the end */
    size_t room = n > *start ? n - *start : 0;
    *count = b & 2 ? room + 1 + (b >> 6) : room ? take16(in) % (room + 1) : 0;
}

static void fuzz_array(input *in)
{
    rg_dtype t = all_dtypes[take(in) % NDTYPES];
    size_t es = rg_dtype_size(t), n = take16(in) % 3000;
    unsigned char *m = calloc(n + 1, es), *buf = malloc((n + 260) * es);
    rg_array *a = NULL, *b = NULL;
    /* From zeros (rg_array_create) or from host data (no mirror until a write). */
    if (take(in) & 1) {
        CHECK_OK(rg_array_create(&a, ctx, t, n));
    } else {
        for (size_t k = 0; k < n; k++)
            put(t, m, k, gen_value(t, take(in)));
        CHECK_OK(rg_array_from_host(&a, ctx, t, m, n));
    }
    unsigned nops = 1 + take(in) % 30;
    for (unsigned opn = 0; opn < nops && in->n > 0; opn++) {
        unsigned op = take(in) % 8;
        size_t start, count;
        rg_status st;
        if (op == 0) { /* write */
            gen_range(in, n, &start, &count);
            for (size_t k = 0; k < count; k++)
                put(t, buf, k, gen_value(t, take(in)));
            st = rg_array_write(a, start, buf, count);
            if (start + count > n) {
                if (st != RG_ERANGE)
                    fail("rg_array_write [%zu, +%zu) of %zu: %s", start, count, n, rg_strerror(st));
            } else {
                CHECK_OK(st);
                memcpy(m + start * es, buf, count * es);
            }
        } else if (op == 1) { /* read */
            gen_range(in, n, &start, &count);
            if (start + count > n) {
                memset(buf, 0x5A, count * es);
                st = rg_array_read(buf, a, start, count);
                if (st != RG_ERANGE)
                    fail("rg_array_read [%zu, +%zu) of %zu: %s", start, count, n, rg_strerror(st));
                for (size_t k = 0; k < count * es; k++)
                    if (buf[k] != 0x5A)
                        fail("rg_array_read out of range wrote its output");
            } else {
                model_array_check(a, m, start, count, "rg_array_read");
            }
        } else if (op == 2 || op == 3) { /* arithmetic (a kernel on OpenCL GPUs and CPUs) */
            rg_arith ar = (rg_arith)(RG_ARITH_ADD + take(in) % 4);
            value y = gen_value(t, take(in));
            put(t, buf, 0, y);
            y = get(t, buf, 0);
            st = rg_array_scalar(a, ar, buf);
            int zero_div = ar == RG_ARITH_DIV && !is_float(t) && !is_nonzero(t, y);
            if (t == RG_BOOL || zero_div) {
                expect_failed(st, "rg_array_scalar on bool or by 0");
            } else {
                CHECK_OK(st);
                for (size_t k = 0; k < n; k++)
                    put(t, m, k, arith(t, ar, get(t, m, k), y));
            }
        } else if (op == 4) { /* fill */
            value y = gen_value(t, take(in));
            put(t, buf, 0, y);
            CHECK_OK(rg_array_fill(a, buf));
            for (size_t k = 0; k < n; k++)
                memcpy(m + k * es, buf, es);
        } else if (op == 5) { /* copy in from a new array, or out to one and back */
            rg_array_free(b);
            b = NULL;
            if (take(in) & 1) {
                for (size_t k = 0; k < n; k++)
                    put(t, buf, k, gen_value(t, take(in)));
                CHECK_OK(rg_array_from_host(&b, ctx, t, buf, n));
                CHECK_OK(rg_array_copy(a, b));
                memcpy(m, buf, n * es);
            } else {
                CHECK_OK(rg_array_create(&b, ctx, t, n));
                CHECK_OK(rg_array_copy(b, a));
                model_array_check(b, m, 0, n, "rg_array_copy");
            }
        } else if (op == 6) { /* a kernel that reads it: count and sum its elements */
            int64_t nz = -1, want = 0;
            CHECK_OK(rg_count_nonzero(&nz, a));
            for (size_t k = 0; k < n; k++)
                want += is_nonzero(t, get(t, m, k));
            if (nz != want)
                fail("rg_count_nonzero after edits: %" PRId64 ", want %" PRId64, nz, want);
            int64_t off[2] = {0, (int64_t)n};
            rg_array *o = NULL, *out = NULL;
            rg_reduce_op rop = (rg_reduce_op)(take(in) % 10);
            if (is_float(t) && (rop == RG_REDUCE_SUM || rop == RG_REDUCE_PROD))
                rop = RG_REDUCE_MAX; /* values from arithmetic round differently by order */
            CHECK_OK(rg_array_from_host(&o, ctx, RG_INT64, off, 2));
            CHECK_OK(rg_array_create(&out, ctx, ref_reduce_dtype(rop, t), 1));
            CHECK_OK(rg_segment_reduce(out, a, o, rop, RG_REDUCE_POLICY_AUTO, NULL));
            check_reduce(out, rop, t, m, off, 1, "reduction after edits");
            rg_array_free(out);
            rg_array_free(o);
        } else { /* a read of all of it */
            model_array_check(a, m, 0, n, "rg_array_read (all)");
        }
    }
    model_array_check(a, m, 0, n, "array at the end");
    rg_array_free(b);
    rg_array_free(a);
    free(buf);
    free(m);
}

/* ---- entry points ------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *b = getenv("FUZZ_BACKEND");
    rg_backend want = b && strcmp(b, "opencl") == 0 ? RG_BACKEND_OPENCL : RG_BACKEND_OPENMP;
    rg_status st = rg_context_create(&ctx, want);
    if (st != RG_OK) {
        fprintf(stderr, "fuzz_ragged: no context: %s\n", rg_context_error(NULL));
        exit(st == RG_ENODEVICE ? 77 : 1); /* 77: run.sh skips OpenCL without a device */
    }
    fprintf(stderr, "fuzz_ragged: on %s\n", rg_context_device(ctx));
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size};
    unsigned what = take(&in), threads = take(&in);
#ifdef _OPENMP
    omp_set_num_threads(1 + (int)(threads % 5));
#else
    (void)threads;
#endif
    switch (what % 9) {
    case 0: fuzz_parents(&in); break;
    case 1: fuzz_from_lengths(&in); break;
    case 2: fuzz_reduce(&in); break;
    case 3: fuzz_nonzero(&in); break;
    case 4: fuzz_segment_nonzero(&in); break;
    case 5: fuzz_nested(&in); break;
    case 6: fuzz_segd(&in); break;
    case 7: fuzz_list(&in); break;
    default: fuzz_array(&in); break;
    }
    return 0;
}

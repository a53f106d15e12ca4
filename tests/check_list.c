/* check_list.c — rg_list against a reference list kept here: each operation, errors, a long random sequence, arithmetic. */
#include <float.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

/* ---- the reference: a vector of int64 vectors ------------------------------ */

typedef struct ref_item {
    int64_t *v;
    size_t n;
} ref_item;

typedef struct ref_list {
    ref_item *items;
    size_t n, cap;
} ref_list;

static ref_item item_copy(const int64_t *v, size_t n)
{
    ref_item it = {malloc((n + 1) * sizeof *v), n};
    ck_assert_ptr_nonnull(it.v);
    if (n > 0)
        memcpy(it.v, v, n * sizeof *v);
    return it;
}

static void ref_insert(ref_list *r, size_t at, const int64_t *v, size_t n)
{
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->items = realloc(r->items, r->cap * sizeof *r->items);
        ck_assert_ptr_nonnull(r->items);
    }
    memmove(r->items + at + 1, r->items + at, (r->n - at) * sizeof *r->items);
    r->items[at] = item_copy(v, n);
    r->n++;
}

static void ref_delete(ref_list *r, size_t b, size_t e)
{
    for (size_t i = b; i < e; i++)
        free(r->items[i].v);
    memmove(r->items + b, r->items + e, (r->n - e) * sizeof *r->items);
    r->n -= e - b;
}

/* Empties r for reuse. */
static void ref_free(ref_list *r)
{
    ref_delete(r, 0, r->n);
    free(r->items);
    r->items = NULL;
    r->n = r->cap = 0;
}

/* Fails unless list (int64) equals r: counts, every item, and the content and
 * offsets arrays as a primitive would see them. */
static void expect_list(const rg_list *list, const ref_list *r, const char *what)
{
    size_t nitems = rg_list_nitems(list), total = 0;
    if (nitems != r->n)
        ck_abort_msg("%s: %zu items, expected %zu", what, nitems, r->n);
    int64_t *want_off = malloc((r->n + 1) * sizeof *want_off);
    ck_assert_ptr_nonnull(want_off);
    want_off[0] = 0;
    for (size_t i = 0; i < r->n; i++) {
        total += r->items[i].n;
        want_off[i + 1] = (int64_t)total;
    }
    if (rg_list_nelems(list) != total)
        ck_abort_msg("%s: %zu elements, expected %zu", what, rg_list_nelems(list), total);
    const rg_array *off = rg_list_offsets(list);
    if (rg_array_length(off) != r->n + 1)
        ck_abort_msg("%s: offsets length %zu", what, rg_array_length(off));
    int64_t *got_off = test_read_i64(off);
    test_expect_i64(got_off, want_off, r->n + 1, what);
    int64_t *got = test_read_i64(rg_list_content((rg_list *)list));
    for (size_t i = 0; i < r->n; i++)
        test_expect_i64(got + want_off[i], r->items[i].v, r->items[i].n, what);
    free(got);
    free(got_off);
    free(want_off);
}

/* Every item read back one by one with rg_list_get (positive and negative indices). */
static void expect_items(const rg_list *list, const ref_list *r, const char *what)
{
    int64_t buf[64];
    for (size_t i = 0; i < r->n; i++) {
        size_t len = 999;
        ptrdiff_t idx = (i % 2) ? (ptrdiff_t)i - (ptrdiff_t)r->n : (ptrdiff_t)i;
        rg_status st = rg_list_get(buf, 64, &len, list, idx);
        if (st != RG_OK || len != r->items[i].n)
            ck_abort_msg("%s: get(%td) = %d, length %zu, expected %zu", what, idx, (int)st, len,
                         r->items[i].n);
        test_expect_i64(buf, r->items[i].v, len, what);
    }
}

static rg_list *list_from_ref(rg_context *ctx, const ref_list *r)
{
    rg_list *l = NULL;
    ck_assert_int_eq(rg_list_create(&l, ctx, RG_INT64, 0), RG_OK);
    for (size_t i = 0; i < r->n; i++)
        ck_assert_int_eq(rg_list_append(l, r->items[i].v, r->items[i].n), RG_OK);
    return l;
}

/* ---- each operation ------------------------------------------------------------ */

START_TEST(test_create)
{
    TEST_CONTEXT(ctx, _i);
    rg_list *l = NULL;
    ck_assert_int_eq(rg_list_create(&l, ctx, RG_FLOAT32, 1000), RG_OK);
    ck_assert_uint_eq(rg_list_nitems(l), 0);
    ck_assert_uint_eq(rg_list_nelems(l), 0);
    ck_assert_int_eq(rg_list_dtype(l), RG_FLOAT32);
    ck_assert_ptr_eq(rg_list_context(l), ctx);
    ck_assert_uint_eq(rg_array_length(rg_list_content(l)), 0);
    ck_assert_uint_eq(rg_array_length(rg_list_offsets(l)), 1);
    ck_assert_int_eq(rg_offsets_validate(rg_list_offsets(l), 0), RG_OK);
    rg_list_free(l);
    rg_list_free(NULL);

    /* Equal items; an item size that does not divide the data is an error. */
    const int64_t data[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    rg_list *u = (rg_list *)(uintptr_t)0x5A5A5A50u, *keep = u;
    ck_assert_int_eq(rg_list_from_item_size(&u, ctx, RG_INT64, data, 10, 3), RG_ESIZE);
    ck_assert_ptr_eq(u, keep);
    ck_assert_int_eq(rg_list_from_item_size(&u, ctx, RG_INT64, data, 10, 0), RG_ESIZE);
    /* More items than memory can count: refused before anything is made. */
    size_t too_many = ((size_t)1 << 61) + 1;
    ck_assert_int_eq(rg_list_from_item_size(&u, ctx, RG_INT8, NULL, too_many, 1), RG_EINVAL);
    ck_assert(test_contains(rg_context_error(ctx), "data is NULL"));
    ck_assert_int_eq(rg_list_from_item_size(&u, ctx, RG_INT8, data, too_many, 1), RG_EOVERFLOW);
    ck_assert_int_eq(rg_list_from_item_size(&u, ctx, (rg_dtype)99, data, too_many, 1), RG_EDTYPE);
    ck_assert_ptr_eq(u, keep);
    ck_assert_int_eq(rg_list_from_item_size(&u, ctx, RG_INT64, data, 10, 2), RG_OK);
    ref_list r = {0};
    for (size_t i = 0; i < 5; i++)
        ref_insert(&r, i, data + 2 * i, 2);
    expect_list(u, &r, "from_item_size");
    rg_list_free(u);
    ref_free(&r);

    /* Sizes [1, 2, 3, 4] (the seed's example); sums that miss are errors. */
    const size_t sizes[4] = {1, 2, 3, 4}, bad[3] = {1, 2, 3};
    rg_list *s = keep;
    ck_assert_int_eq(rg_list_from_sizes(&s, ctx, RG_INT64, data, 10, bad, 3), RG_ESIZE);
    ck_assert_ptr_eq(s, keep);
    ck_assert_msg(test_contains(rg_context_error(ctx), "add up to 6"), "%s", rg_context_error(ctx));
    const size_t huge[2] = {SIZE_MAX, 11};
    ck_assert_int_eq(rg_list_from_sizes(&s, ctx, RG_INT64, data, 10, huge, 2), RG_ESIZE);
    ck_assert_int_eq(rg_list_from_sizes(&s, ctx, RG_INT64, NULL, 10, sizes, 4), RG_EINVAL);
    ck_assert_int_eq(rg_list_from_sizes(&s, ctx, RG_INT64, data, 10, sizes, 4), RG_OK);
    size_t start = 0, len = 0;
    for (size_t i = 0, at = 0; i < 4; at += sizes[i], i++) {
        ref_insert(&r, i, data + at, sizes[i]);
        ck_assert_int_eq(rg_list_item_view(&start, &len, s, (ptrdiff_t)i), RG_OK);
        ck_assert_uint_eq(start, at);
        ck_assert_uint_eq(len, sizes[i]);
        ck_assert_int_eq(rg_list_item_length(&len, s, -(ptrdiff_t)(4 - i)), RG_OK);
        ck_assert_uint_eq(len, sizes[i]);
    }
    expect_list(s, &r, "from_sizes");
    expect_items(s, &r, "from_sizes");
    ck_assert_int_eq(rg_offsets_validate(rg_list_offsets(s), 10), RG_OK);
    rg_list_free(s);
    ref_free(&r);
    ck_assert_int_eq(rg_list_create(&s, ctx, (rg_dtype)99, 0), RG_EDTYPE);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_each_op)
{
    TEST_CONTEXT(ctx, _i);
    ref_list r = {0};
    const int64_t a[3] = {1, 2, 3}, b[1] = {40}, c[5] = {-5, -6, -7, -8, -9};
    rg_list *l = list_from_ref(ctx, &r);

    ck_assert_int_eq(rg_list_append(l, a, 3), RG_OK);
    ref_insert(&r, r.n, a, 3);
    ck_assert_int_eq(rg_list_append(l, NULL, 0), RG_OK); /* an empty item */
    ref_insert(&r, r.n, NULL, 0);
    ck_assert_int_eq(rg_list_insert(l, 0, b, 1), RG_OK);
    ref_insert(&r, 0, b, 1);
    ck_assert_int_eq(rg_list_insert(l, -1, c, 5), RG_OK); /* before the last, as Python */
    ref_insert(&r, r.n - 1, c, 5);
    ck_assert_int_eq(rg_list_insert(l, (ptrdiff_t)r.n, b, 1), RG_OK); /* at the end */
    ref_insert(&r, r.n, b, 1);
    expect_list(l, &r, "append/insert");

    /* set to a longer, a shorter and an equal length */
    ck_assert_int_eq(rg_list_set(l, 1, c, 5), RG_OK);
    ref_delete(&r, 1, 2);
    ref_insert(&r, 1, c, 5);
    ck_assert_int_eq(rg_list_set(l, -2, b, 1), RG_OK);
    ref_delete(&r, r.n - 2, r.n - 1);
    ref_insert(&r, r.n - 1, b, 1);
    ck_assert_int_eq(rg_list_set(l, 0, a + 1, 1), RG_OK);
    ref_delete(&r, 0, 1);
    ref_insert(&r, 0, a + 1, 1);
    expect_list(l, &r, "set");
    expect_items(l, &r, "set");

    /* slices: Python bounds */
    rg_list *s = NULL;
    ck_assert_int_eq(rg_list_slice(&s, l, 1, -1), RG_OK);
    ref_list rs = {0};
    for (size_t i = 1; i + 1 < r.n; i++)
        ref_insert(&rs, rs.n, r.items[i].v, r.items[i].n);
    expect_list(s, &rs, "slice 1:-1");
    rg_list_free(s);
    ref_free(&rs);
    ck_assert_int_eq(rg_list_slice(&s, l, 4, 2), RG_OK);
    ck_assert_uint_eq(rg_list_nitems(s), 0);
    rg_list_free(s);
    ck_assert_int_eq(rg_list_slice(&s, l, -100, 100), RG_OK);
    expect_list(s, &r, "slice all");

    /* extend with another list, with itself, and with data + sizes */
    ck_assert_int_eq(rg_list_extend(l, s), RG_OK);
    size_t n0 = r.n;
    for (size_t i = 0; i < n0; i++)
        ref_insert(&r, r.n, r.items[i].v, r.items[i].n);
    ck_assert_int_eq(rg_list_extend(l, l), RG_OK);
    n0 = r.n;
    for (size_t i = 0; i < n0; i++)
        ref_insert(&r, r.n, r.items[i].v, r.items[i].n);
    /* and with a list of another context, on the other backend */
    rg_context *other = test_context(1 - _i);
    if (other) {
        rg_list *o = NULL;
        ck_assert_int_eq(rg_list_from_item_size(&o, other, RG_INT64, c, 4, 2), RG_OK);
        ck_assert_int_eq(rg_list_extend(l, o), RG_OK);
        ref_insert(&r, r.n, c, 2);
        ref_insert(&r, r.n, c + 2, 2);
        expect_list(l, &r, "extend with another context's list");
        rg_list_free(o);
        rg_context_free(other);
    }
    const size_t sz[3] = {2, 0, 3};
    ck_assert_int_eq(rg_list_extend_sizes(l, c, 5, sz, 3), RG_OK);
    ref_insert(&r, r.n, c, 2);
    ref_insert(&r, r.n, c, 0);
    ref_insert(&r, r.n, c + 2, 3);
    ck_assert_int_eq(rg_list_extend_sizes(l, c, 4, sz, 3), RG_ESIZE);
    expect_list(l, &r, "extend");
    rg_list_free(s);

    /* delete: one item, negative, slices */
    ck_assert_int_eq(rg_list_delete(l, 2), RG_OK);
    ref_delete(&r, 2, 3);
    ck_assert_int_eq(rg_list_delete(l, -1), RG_OK);
    ref_delete(&r, r.n - 1, r.n);
    ck_assert_int_eq(rg_list_delete_slice(l, 3, 7), RG_OK);
    ref_delete(&r, 3, 7);
    ck_assert_int_eq(rg_list_delete_slice(l, -3, -1), RG_OK);
    ref_delete(&r, r.n - 3, r.n - 1);
    ck_assert_int_eq(rg_list_delete_slice(l, 5, 2), RG_OK); /* empty: nothing */
    expect_list(l, &r, "delete");
    expect_items(l, &r, "delete");
    ck_assert_int_eq(rg_list_delete_slice(l, 0, PTRDIFF_MAX), RG_OK);
    ref_delete(&r, 0, r.n);
    expect_list(l, &r, "delete all");
    rg_list_free(l);
    ref_free(&r);
    rg_context_free(ctx);
}
END_TEST

/* Every failing call leaves the list exactly as it was. */
START_TEST(test_errors_leave_list)
{
    TEST_CONTEXT(ctx, _i);
    ref_list r = {0};
    const int64_t v[4] = {7, 8, 9, 10};
    for (size_t i = 0; i < 4; i++)
        ref_insert(&r, i, v, i + 1);
    rg_list *l = list_from_ref(ctx, &r);
    const ptrdiff_t bad[] = {4, 5, -5, -6, PTRDIFF_MAX, PTRDIFF_MIN};
    int64_t dst[8] = {0};
    size_t len = 77;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ck_assert_int_eq(rg_list_get(dst, 8, &len, l, bad[k]), RG_ERANGE);
        ck_assert_uint_eq(len, 77);
        ck_assert(test_contains(rg_context_error(ctx), "rg_list_get: "));
        ck_assert_int_eq(rg_list_item_length(&len, l, bad[k]), RG_ERANGE);
        ck_assert(test_contains(rg_context_error(ctx), "rg_list_item_length: "));
        ck_assert_int_eq(rg_list_set(l, bad[k], v, 2), RG_ERANGE);
        ck_assert_int_eq(rg_list_delete(l, bad[k]), RG_ERANGE);
        if (bad[k] != 4) /* inserting at position nitems appends */
            ck_assert_int_eq(rg_list_insert(l, bad[k], v, 2), RG_ERANGE);
        ck_assert_msg(test_contains(rg_context_error(ctx), "out of range"), "%s",
                      rg_context_error(ctx));
        expect_list(l, &r, "after RG_ERANGE");
    }
    ck_assert_int_eq(rg_list_insert(l, 6, v, 2), RG_ERANGE);
    ck_assert_int_eq(rg_list_insert(l, -6, v, 2), RG_ERANGE);
    ck_assert_int_eq(rg_list_get(dst, 3, &len, l, 3), RG_ESIZE); /* 4 elements, room for 3 */
    ck_assert_int_eq(rg_list_set(l, 0, NULL, 2), RG_EINVAL);
    ck_assert_int_eq(rg_list_append(l, NULL, 1), RG_EINVAL);
    ck_assert_int_eq(rg_list_extend(l, NULL), RG_EINVAL);
    rg_list *f = NULL;
    ck_assert_int_eq(rg_list_create(&f, ctx, RG_FLOAT64, 0), RG_OK);
    ck_assert_int_eq(rg_list_extend(l, f), RG_EDTYPE);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_DIV, 0.0), RG_EINVAL);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 2.5), RG_EINVAL);
    ck_assert_int_eq(rg_list_scalar(l, (rg_arith)9, 1.0), RG_EINVAL);
    expect_list(l, &r, "after errors");
    /* -nitems inserts at the front, nitems at the end */
    ck_assert_int_eq(rg_list_insert(l, -4, v, 1), RG_OK);
    ref_insert(&r, 0, v, 1);
    ck_assert_int_eq(rg_list_insert(l, 5, v, 1), RG_OK);
    ref_insert(&r, 5, v, 1);
    expect_list(l, &r, "insert at the bounds");
    rg_list_free(f);
    rg_list_free(l);
    ref_free(&r);
    rg_context_free(ctx);
}
END_TEST

/* ---- random sequence ---------------------------------------------------------- */

/* Python's clamping of a slice bound to [0, n]. */
static size_t ref_clamp(ptrdiff_t b, size_t n)
{
    if (b < 0)
        return (size_t)-b >= n ? 0 : n - (size_t)-b;
    return (size_t)b > n ? n : (size_t)b;
}

static void random_sequence(int backend, size_t steps, uint64_t seed)
{
    TEST_CONTEXT(ctx, backend);
    uint64_t state = seed;
    ref_list r = {0};
    rg_list *l = list_from_ref(ctx, &r);
    int64_t item[16];
    char what[96];
    for (size_t step = 0; step < steps; step++) {
        size_t n = r.n, len = test_rand(&state) % 9;
        for (size_t k = 0; k < len; k++)
            item[k] = (int64_t)(test_rand(&state) % 2001) - 1000;
        /* A signed position in [-(n + 2), n + 2): sometimes out of range. */
        ptrdiff_t idx = (ptrdiff_t)(test_rand(&state) % (2 * n + 4)) - (ptrdiff_t)n - 2;
        size_t at = idx < 0 ? (size_t)((ptrdiff_t)n + idx) : (size_t)idx;
        bool in_range = idx < 0 ? -idx <= (ptrdiff_t)n : (size_t)idx < n;
        unsigned op = (unsigned)(test_rand(&state) % (n > 150 ? 12 : 10));
        rg_status st;
        snprintf(what, sizeof what, "step %zu (op %u, index %td, %zu items)", step, op, idx, n);
        switch (op) {
        case 0: case 1:
            st = rg_list_append(l, item, len);
            ref_insert(&r, n, item, len);
            break;
        case 2: {
            bool ok = idx < 0 ? -idx <= (ptrdiff_t)n : (size_t)idx <= n;
            size_t pos = idx < 0 ? (size_t)((ptrdiff_t)n + idx) : (size_t)idx;
            st = rg_list_insert(l, idx, item, len);
            if (ok)
                ref_insert(&r, pos, item, len);
            else if (st == RG_ERANGE)
                st = RG_OK;
            break;
        }
        case 3:
            st = rg_list_set(l, idx, item, len);
            if (in_range) {
                ref_delete(&r, at, at + 1);
                ref_insert(&r, at, item, len);
            } else if (st == RG_ERANGE) {
                st = RG_OK;
            }
            break;
        case 4: case 10: case 11:
            st = rg_list_delete(l, idx);
            if (in_range)
                ref_delete(&r, at, at + 1);
            else if (st == RG_ERANGE)
                st = RG_OK;
            break;
        case 5: {
            ptrdiff_t e = idx + (ptrdiff_t)(test_rand(&state) % 6);
            size_t b0 = ref_clamp(idx, n), e0 = ref_clamp(e, n);
            st = rg_list_delete_slice(l, idx, e);
            if (e0 > b0)
                ref_delete(&r, b0, e0);
            break;
        }
        case 6: {
            const size_t sizes[2] = {len / 2, len - len / 2};
            st = rg_list_extend_sizes(l, item, len, sizes, 2);
            ref_insert(&r, r.n, item, sizes[0]);
            ref_insert(&r, r.n, item + sizes[0], sizes[1]);
            break;
        }
        case 7: {
            int64_t got[16];
            size_t glen = 99;
            st = rg_list_get(got, 16, &glen, l, idx);
            if (in_range) {
                ck_assert_uint_eq(glen, r.items[at].n);
                test_expect_i64(got, r.items[at].v, glen, what);
            } else if (st == RG_ERANGE) {
                st = RG_OK;
            }
            break;
        }
        case 8: {
            int64_t d = (int64_t)(test_rand(&state) % 7) - 3;
            st = rg_list_scalar(l, RG_ARITH_ADD, (double)d);
            for (size_t i = 0; i < r.n; i++)
                for (size_t k = 0; k < r.items[i].n; k++)
                    r.items[i].v[k] += d;
            break;
        }
        default: {
            rg_list *s = NULL;
            st = rg_list_slice(&s, l, idx, idx + 3);
            if (st == RG_OK && step % 8 == 0) {
                st = rg_list_extend(l, s);
                size_t b0 = ref_clamp(idx, n), e0 = ref_clamp(idx + 3, n);
                for (size_t i = b0; i < e0; i++)
                    ref_insert(&r, r.n, r.items[i].v, r.items[i].n);
            }
            rg_list_free(s);
            break;
        }
        }
        if (st != RG_OK)
            ck_abort_msg("%s: status %d: %s", what, (int)st, rg_context_error(ctx));
        expect_list(l, &r, what);
    }
    expect_items(l, &r, "end of the sequence");
    rg_list_free(l);
    ref_free(&r);
    rg_context_free(ctx);
}

START_TEST(test_random_openmp)
{
    random_sequence(TEST_BACKEND_OPENMP, 10000, 12345);
}
END_TEST

START_TEST(test_random_opencl)
{
    random_sequence(TEST_BACKEND_OPENCL, 600, 777);
}
END_TEST

/* ---- arithmetic ------------------------------------------------------------------ */

/* Applies op to int64 values as a dtype of `bits` bits would, wrapping. */
static int64_t wrap_to(int64_t x, int bits, bool is_signed)
{
    if (bits == 64)
        return x;
    uint64_t m = ((uint64_t)1 << bits) - 1, u = (uint64_t)x & m;
    if (is_signed && (u >> (bits - 1)))
        return (int64_t)(u | ~m);
    return (int64_t)u;
}

/* Items [5 elements] [] [7 elements] over the 12 base values, REPEAT
 * times: enough elements for several rounds of the OpenCL kernel's loop
 * with few work-groups. */
enum { REPEAT = 300, NVALS = 12 * REPEAT };

START_TEST(test_scalar_integers)
{
    TEST_CONTEXT(ctx, test_backend_plain(_i));
    size_t sizes[3 * REPEAT];
    for (size_t r = 0; r < REPEAT; r++) {
        sizes[3 * r] = 5;
        sizes[3 * r + 1] = 0;
        sizes[3 * r + 2] = 7;
    }
    static const struct { rg_dtype dtype; int bits; bool is_signed; } types[] = {
        {RG_INT8, 8, true}, {RG_UINT16, 16, false}, {RG_INT32, 32, true}, {RG_UINT64, 64, false},
        {RG_INT64, 64, true}};
    static const rg_arith ops[] = {RG_ARITH_ADD, RG_ARITH_SUB, RG_ARITH_MUL, RG_ARITH_DIV};
    static const double values[] = {3, -1, 100, 7};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        rg_dtype dt = types[t].dtype;
        int bits = types[t].bits;
        int64_t lo = types[t].is_signed ? (bits == 64 ? INT64_MIN : -((int64_t)1 << (bits - 1))) : 0;
        int64_t hi = bits == 64 ? INT64_MAX : types[t].is_signed ? ((int64_t)1 << (bits - 1)) - 1
                                                                  : ((int64_t)1 << bits) - 1;
        int64_t base[12] = {0, 1, -1, 5, -7, 100, lo, hi, lo + 1, hi - 1, 42, -300};
        for (size_t o = 0; o < 4; o++) {
            for (size_t vi = 0; vi < 4; vi++) {
                double value = values[vi];
                if (!types[t].is_signed && value < 0)
                    continue;
                int64_t vals[NVALS];
                for (size_t k = 0; k < NVALS; k++)
                    vals[k] = wrap_to(base[k % 12], bits, types[t].is_signed);
                void *packed = test_pack(dt, vals, NVALS);
                rg_list *l = NULL;
                ck_assert_int_eq(rg_list_from_sizes(&l, ctx, dt, packed, NVALS, sizes, 3 * REPEAT),
                                 RG_OK);
                free(packed);
                rg_status st = rg_list_scalar(l, ops[o], value);
                ck_assert_msg(st == RG_OK, "%s op %d: %s", rg_dtype_name(dt), (int)ops[o],
                              rg_context_error(ctx));
                int64_t *got = test_read_i64(rg_list_content(l));
                int64_t v = (int64_t)value;
                for (size_t k = 0; k < NVALS; k++) {
                    int64_t x = vals[k], want;
                    uint64_t ux = (uint64_t)x, uv = (uint64_t)v;
                    if (!types[t].is_signed && bits == 64) {
                        /* uint64 read back as int64: compare the bits */
                        switch (ops[o]) {
                        case RG_ARITH_ADD: want = (int64_t)(ux + uv); break;
                        case RG_ARITH_SUB: want = (int64_t)(ux - uv); break;
                        case RG_ARITH_MUL: want = (int64_t)(ux * uv); break;
                        default: want = (int64_t)(ux / uv); break;
                        }
                    } else {
                        switch (ops[o]) {
                        case RG_ARITH_ADD: want = (int64_t)(ux + uv); break;
                        case RG_ARITH_SUB: want = (int64_t)(ux - uv); break;
                        case RG_ARITH_MUL: want = (int64_t)(ux * uv); break;
                        default: want = v == -1 ? (int64_t)(0 - ux) : x / v; break;
                        }
                        want = wrap_to(want, bits, types[t].is_signed);
                    }
                    if (got[k] != want)
                        ck_abort_msg("%s: element %zu: %lld op%d %g = %lld, expected %lld",
                                     rg_dtype_name(dt), k, (long long)x, (int)ops[o], value,
                                     (long long)got[k], (long long)want);
                }
                free(got);
                rg_list_free(l);
            }
        }
        /* division by zero and values the dtype cannot hold change nothing */
        int64_t one = 9;
        rg_list *l = NULL;
        void *packed = test_pack(dt, &one, 1);
        ck_assert_int_eq(rg_list_from_item_size(&l, ctx, dt, packed, 1, 1), RG_OK);
        ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_DIV, 0), RG_EINVAL);
        ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 0.5), RG_EINVAL);
        ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 1e30), RG_EINVAL);
        ck_assert_int_eq(rg_array_scalar(rg_list_content(l), RG_ARITH_DIV, packed), RG_OK);
        int64_t *got = test_read_i64(rg_list_content(l));
        ck_assert_int_eq(got[0], 1);
        free(got);
        free(packed);
        rg_list_free(l);
    }
    rg_list *b = NULL;
    uint8_t t1 = 1;
    ck_assert_int_eq(rg_list_from_item_size(&b, ctx, RG_BOOL, &t1, 1, 1), RG_OK);
    ck_assert_int_eq(rg_list_scalar(b, RG_ARITH_ADD, 1), RG_EDTYPE);
    ck_assert_int_eq(rg_array_scalar(rg_list_content(b), RG_ARITH_ADD, &t1), RG_EDTYPE);
    rg_list_free(b);
    rg_context_free(ctx);
}
END_TEST

START_TEST(test_scalar_floats)
{
    TEST_CONTEXT(ctx, _i);
    float f[6] = {1.0f, -2.5f, 3.0f, 1e-3f, 7.0f, 0.0f};
    double d[6] = {1.0, -2.5, 3.0, 1e-3, 7.0, 0.0};
    const size_t sizes[2] = {4, 2};
    static const rg_arith ops[] = {RG_ARITH_ADD, RG_ARITH_SUB, RG_ARITH_MUL, RG_ARITH_DIV};
    for (size_t o = 0; o < 4; o++) {
        rg_list *lf = NULL, *ld = NULL;
        ck_assert_int_eq(rg_list_from_sizes(&lf, ctx, RG_FLOAT32, f, 6, sizes, 2), RG_OK);
        ck_assert_int_eq(rg_list_from_sizes(&ld, ctx, RG_FLOAT64, d, 6, sizes, 2), RG_OK);
        ck_assert_int_eq(rg_list_scalar(lf, ops[o], 3.0), RG_OK);
        ck_assert_int_eq(rg_list_scalar(ld, ops[o], 3.0), RG_OK);
        float gf[6];
        double gd[6];
        size_t len;
        ck_assert_int_eq(rg_list_get(gf, 6, &len, lf, 0), RG_OK);
        ck_assert_int_eq(rg_list_get(gf + 4, 2, &len, lf, -1), RG_OK);
        ck_assert_int_eq(rg_array_read(gd, rg_list_content(ld), 0, 6), RG_OK);
        for (int k = 0; k < 6; k++) {
            /* volatile: the reference rounds to float like the backends */
            volatile float wf = ops[o] == RG_ARITH_ADD ? f[k] + 3.0f : ops[o] == RG_ARITH_SUB ? f[k] - 3.0f
                              : ops[o] == RG_ARITH_MUL ? f[k] * 3.0f : f[k] / 3.0f;
            double wd = ops[o] == RG_ARITH_ADD ? d[k] + 3.0 : ops[o] == RG_ARITH_SUB ? d[k] - 3.0
                        : ops[o] == RG_ARITH_MUL ? d[k] * 3.0 : d[k] / 3.0;
            ck_assert_msg(memcmp(&gf[k], (const void *)&wf, 4) == 0, "float32 op%d [%d]: %a, expected %a",
                          (int)ops[o], k, (double)gf[k], (double)wf);
            ck_assert_msg(memcmp(&gd[k], &wd, 8) == 0, "float64 op%d [%d]: %a, expected %a",
                          (int)ops[o], k, gd[k], wd);
        }
        rg_list_free(lf);
        rg_list_free(ld);
    }
    /* float division by zero is IEEE, not an error; a value beyond float32 is */
    rg_list *l = NULL;
    ck_assert_int_eq(rg_list_from_item_size(&l, ctx, RG_FLOAT32, f, 6, 3), RG_OK);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 1e300), RG_EINVAL);
    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_DIV, 0.0), RG_OK);
    float g[3];
    ck_assert_int_eq(rg_list_get(g, 3, NULL, l, 0), RG_OK);
    ck_assert(g[0] > FLT_MAX && g[1] < -FLT_MAX);
    rg_list_free(l);
    rg_context_free(ctx);
}
END_TEST

/* The list's arrays feed the primitives directly. */
START_TEST(test_primitives_on_list)
{
    TEST_CONTEXT(ctx, _i);
    const int64_t data[7] = {1, 2, 3, 4, 5, 6, 7};
    const size_t sizes[4] = {3, 0, 1, 3};
    rg_list *l = NULL;
    ck_assert_int_eq(rg_list_from_sizes(&l, ctx, RG_INT64, data, 7, sizes, 4), RG_OK);
    ck_assert_int_eq(rg_list_append(l, data, 2), RG_OK);
    rg_array *len = test_array_filled(ctx, RG_INT64, 5, -1);
    rg_array *par = test_array_filled(ctx, RG_INT32, 9, -1);
    ck_assert_int_eq(rg_lengths(len, rg_list_offsets(l)), RG_OK);
    ck_assert_int_eq(rg_parents(par, rg_list_offsets(l), RG_STRATEGY_AUTO, NULL), RG_OK);
    const int64_t want_len[5] = {3, 0, 1, 3, 2}, want_par[9] = {0, 0, 0, 2, 3, 3, 3, 4, 4};
    int64_t *got = test_read_i64(len);
    test_expect_i64(got, want_len, 5, "lengths of a list");
    free(got);
    got = test_read_i64(par);
    test_expect_i64(got, want_par, 9, "parents of a list");
    free(got);
    /* ... and the list follows later changes */
    ck_assert_int_eq(rg_list_delete(l, 0), RG_OK);
    rg_array_free(len);
    ck_assert_int_eq(rg_array_create(&len, ctx, RG_INT64, 4), RG_OK);
    ck_assert_int_eq(rg_lengths(len, rg_list_offsets(l)), RG_OK);
    got = test_read_i64(len);
    test_expect_i64(got, want_len + 1, 4, "lengths after a delete");
    free(got);
    rg_array_free(len);
    rg_array_free(par);
    rg_list_free(l);
    rg_context_free(ctx);
}
END_TEST

/* Appends to lists of every element size keep each item's bytes, with and
 * without room for them, and after an insert in front of them. */
START_TEST(test_append_dtypes)
{
    TEST_CONTEXT(ctx, _i);
    static const rg_dtype types[] = {RG_BOOL, RG_INT8, RG_UINT16, RG_INT32, RG_FLOAT32,
                                     RG_FLOAT64, RG_UINT64};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
        rg_dtype dt = types[t];
        size_t es = rg_dtype_size(dt), nitems = 300, total = 0;
        unsigned char want[300 * 9 * 8], src[9 * 8];
        for (size_t reserve = 0; reserve <= 4096; reserve += 4096) {
            rg_list *l = NULL;
            ck_assert_int_eq(rg_list_create(&l, ctx, dt, reserve), RG_OK);
            total = 0;
            for (size_t i = 0; i < nitems; i++) {
                size_t len = (i * 7) % 10; /* 0 .. 9 elements */
                for (size_t b = 0; b < len * es; b++) /* bool: 0 or 1 */
                    src[b] = (unsigned char)(dt == RG_BOOL ? (i + b) % 2 : i * 31 + b);
                ck_assert_int_eq(rg_list_append(l, src, len), RG_OK);
                memcpy(want + total * es, src, len * es);
                total += len;
            }
            ck_assert_uint_eq(rg_list_nitems(l), nitems);
            ck_assert_uint_eq(rg_list_nelems(l), total);
            unsigned char *got = malloc(total * es + 1);
            ck_assert_ptr_nonnull(got);
            ck_assert_int_eq(rg_array_read(got, rg_list_content(l), 0, total), RG_OK);
            ck_assert_msg(memcmp(got, want, total * es) == 0, "%s appends (reserve %zu)",
                          rg_dtype_name(dt), reserve);
            ck_assert_int_eq(rg_offsets_validate(rg_list_offsets(l), total), RG_OK);
            /* an insert at the front, then one more append */
            ck_assert_int_eq(rg_list_insert(l, 0, src, 2), RG_OK);
            ck_assert_int_eq(rg_list_append(l, src + es, 3), RG_OK);
            size_t item_len = 0;
            ck_assert_int_eq(rg_list_get(got, total, &item_len, l, -1), RG_OK);
            ck_assert_uint_eq(item_len, 3);
            ck_assert_msg(memcmp(got, src + es, 3 * es) == 0, "%s last item", rg_dtype_name(dt));
            ck_assert_int_eq(rg_list_get(got, total, &item_len, l, 1), RG_OK);
            ck_assert_uint_eq(item_len, 0);
            ck_assert_int_eq(rg_list_get(got, total, &item_len, l, 2), RG_OK);
            ck_assert_msg(item_len == 7 && memcmp(got, want, 7 * es) == 0, "%s item 2",
                          rg_dtype_name(dt));
            ck_assert_int_eq(rg_offsets_validate(rg_list_offsets(l), total + 5), RG_OK);
            free(got);
            rg_list_free(l);
        }
    }
    rg_context_free(ctx);
}
END_TEST

/* A list whose arrays grew past 2 MiB leaves their memory to the context
 * when freed (OpenMP on Linux); the next lists, of other element sizes too,
 * grow into it and keep every element; rg_context_free_scratch gives it
 * back. */
START_TEST(test_growth_spares)
{
    TEST_CONTEXT(ctx, _i);
#ifdef __linux__
    bool keeps = rg_context_backend(ctx) == RG_BACKEND_OPENMP;
#else
    bool keeps = false;
#endif
    static const rg_dtype types[] = {RG_INT64, RG_INT16, RG_INT64, RG_UINT8, RG_INT32};
    enum { NITEMS = 400000, NTYPES = sizeof types / sizeof types[0] }; /* offsets: 3.2 MB */
    int64_t *vals = malloc((size_t)NITEMS * 5 * sizeof *vals);
    int64_t *want_off = malloc((NITEMS + 1) * sizeof *want_off);
    ck_assert_ptr_nonnull(vals);
    ck_assert_ptr_nonnull(want_off);
    for (size_t round = 0; round < NTYPES; round++) {
        rg_dtype dt = types[round];
        size_t es = rg_dtype_size(dt), total = 0;
        want_off[0] = 0;
        for (size_t i = 0; i < NITEMS; i++) {
            size_t len = (i * 7 + round) % 6; /* 0 .. 5 */
            for (size_t k = 0; k < len; k++)
                vals[total + k] = (int64_t)((i * 31 + k + round) % 100);
            total += len;
            want_off[i + 1] = (int64_t)total;
        }
        char *packed = test_pack(dt, vals, total);
        size_t before = rg_context_scratch_bytes(ctx);
        rg_list *l = NULL;
        ck_assert_int_eq(rg_list_create(&l, ctx, dt, 0), RG_OK);
        for (size_t i = 0; i < NITEMS; i++) {
            size_t at = (size_t)want_off[i], len = (size_t)(want_off[i + 1] - want_off[i]);
            if (rg_list_append(l, packed + at * es, len) != RG_OK)
                ck_abort_msg("round %zu, item %zu: %s", round, i, rg_context_error(ctx));
        }
        if (keeps && round > 0)
            ck_assert_msg(rg_context_scratch_bytes(ctx) < before,
                          "round %zu: the list took none of the %zu bytes kept", round, before);
        int64_t *got = test_read_i64(rg_list_content(l));
        int64_t *got_off = test_read_i64(rg_list_offsets(l));
        ck_assert_uint_eq(rg_list_nelems(l), total);
        ck_assert_msg(memcmp(got, vals, total * sizeof *vals) == 0, "round %zu: content", round);
        ck_assert_msg(memcmp(got_off, want_off, (NITEMS + 1) * sizeof *want_off) == 0,
                      "round %zu: offsets", round);
        ck_assert_int_eq(rg_offsets_validate(rg_list_offsets(l), total), RG_OK);
        free(got_off);
        free(got);
        free(packed);
        rg_list_free(l);
        if (keeps)
            ck_assert_msg(rg_context_scratch_bytes(ctx) >= (size_t)2 << 20,
                          "round %zu: %zu bytes kept after freeing a grown list", round,
                          rg_context_scratch_bytes(ctx));
    }
    ck_assert_int_eq(rg_context_free_scratch(ctx), RG_OK);
    ck_assert_uint_eq(rg_context_scratch_bytes(ctx), 0);
    free(want_off);
    free(vals);
    rg_context_free(ctx);
}
END_TEST

/* ---- past 32 MiB ------------------------------------------------------------------ */

/* The OpenMP backend maps arrays from 32 MiB up with huge pages; a list whose
 * content grows across that size (appends, an insert at the front that
 * moves it all, a self-extend, deletes and regrowth, a list made big from
 * the start) must keep every element where it was.  (A list's content
 * starts below 32 MiB, so on OpenMP it grows by realloc, not by mremap.) */
START_TEST(test_big_growth)
{
    TEST_CONTEXT(ctx, _i);
    ref_list r = {0};
    rg_list *l = NULL;
    ck_assert_int_eq(rg_list_create(&l, ctx, RG_INT64, 0), RG_OK);
    size_t big = ((size_t)1 << 20) + 5;
    int64_t *v = malloc(big * sizeof *v);
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < 70; i++) { /* ~4.6 Mi elements, 37 MiB */
        size_t n = 65536 + (i * 37) % 1001;
        for (size_t k = 0; k < n; k++)
            v[k] = (int64_t)((i + 1) << 32 | k);
        ck_assert_int_eq(rg_list_append(l, v, n), RG_OK);
        ref_insert(&r, r.n, v, n);
    }
    ck_assert_uint_ge(rg_list_nelems(l) * 8, (size_t)32 << 20);
    expect_list(l, &r, "appends past 32 MiB");

    ck_assert_int_eq(rg_list_delete_slice(l, 20, -10), RG_OK);
    ref_delete(&r, 20, r.n - 10);
    expect_list(l, &r, "after deleting the middle");

    for (size_t k = 0; k < big; k++)
        v[k] = -(int64_t)k - 1;
    ck_assert_int_eq(rg_list_insert(l, 0, v, big), RG_OK);
    ref_insert(&r, 0, v, big);
    for (size_t i = 0; i < 50; i++) { /* back past 32 MiB */
        size_t n = 65536 + 3 * i;
        for (size_t k = 0; k < n; k++)
            v[k] = (int64_t)((i + 100) << 32 | k);
        ck_assert_int_eq(rg_list_insert(l, -1, v, n), RG_OK);
        ref_insert(&r, r.n - 1, v, n);
    }
    expect_list(l, &r, "insert at the front, regrowth past 32 MiB");

    size_t n0 = r.n;
    ck_assert_int_eq(rg_list_extend(l, l), RG_OK);
    for (size_t i = 0; i < n0; i++)
        ref_insert(&r, r.n, r.items[i].v, r.items[i].n);
    expect_list(l, &r, "self-extend to ~90 MiB");

    ck_assert_int_eq(rg_list_scalar(l, RG_ARITH_ADD, 3.0), RG_OK);
    for (size_t i = 0; i < r.n; i++)
        for (size_t k = 0; k < r.items[i].n; k++)
            r.items[i].v[k] += 3;
    expect_list(l, &r, "big list + 3");
    rg_list_free(l);
    ref_free(&r);

    /* Made with 33 MiB + 24 bytes of content, then grown by one item. */
    size_t n = (((size_t)33 << 20) / 8 + 3) / 3 * 3;
    int64_t *data = malloc(n * sizeof *data);
    ck_assert_ptr_nonnull(data);
    for (size_t k = 0; k < n; k++)
        data[k] = (int64_t)(k * 2654435761u);
    ck_assert_int_eq(rg_list_from_item_size(&l, ctx, RG_INT64, data, n, 3), RG_OK);
    for (size_t i = 0; i < n / 3; i++)
        ref_insert(&r, r.n, data + 3 * i, 3);
    ck_assert_int_eq(rg_list_append(l, v, 7), RG_OK);
    ref_insert(&r, r.n, v, 7);
    expect_list(l, &r, "33 MiB list, one more item");
    rg_list_free(l);
    ref_free(&r);
    free(data);
    free(v);
    rg_context_free(ctx);
}
END_TEST

Suite *list_suite(void)
{
    Suite *s = test_suite("list");
    TCase *tc = test_tcase("operations");
    tcase_add_loop_test(tc, test_create, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_each_op, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_errors_leave_list, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_primitives_on_list, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_append_dtypes, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_growth_spares, 0, TEST_NBACKENDS);
    tcase_add_loop_test(tc, test_big_growth, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);

    tc = test_tcase("random");
    tcase_add_test(tc, test_random_openmp);
    tcase_add_test(tc, test_random_opencl);
    suite_add_tcase(s, tc);

    tc = test_tcase("arithmetic");
    tcase_add_loop_test(tc, test_scalar_integers, 0, TEST_NBACKENDS_GPU_KERNELS);
    tcase_add_loop_test(tc, test_scalar_floats, 0, TEST_NBACKENDS);
    suite_add_tcase(s, tc);
    return s;
}

/* nested.c — nested ragged arrays: checking a stack of offsets levels, composing
 * levels, and parents / local index of any depth relative to any outer depth. */
#include "config.h"

#include <stdio.h>

#include "internal.h"

/* Every level is valid offsets and ends where the next one begins to count;
 * *nelems receives the item count of depth nlevels (the last level's end). */
static rg_status check_levels(const rg_array *const *levels, size_t nlevels, const char *fn,
                              int64_t *nelems)
{
    if (!levels || nlevels == 0 || !levels[0])
        return RG_EINVAL; /* no context to hold a message */
    rg_context *ctx = levels[0]->ctx;
    char name[48];
    int64_t end = 0;
    for (size_t d = 0; d < nlevels; d++) {
        snprintf(name, sizeof name, "levels[%zu]", d);
        rg_status st = rg_check_index_array(ctx, levels[d], fn, name, "levels[0]");
        if (st == RG_OK && levels[d]->length == 0)
            st = rg_set_error(ctx, RG_ESIZE, "%s: %s is empty; offsets need nsegs + 1 >= 1 "
                              "elements", fn, name);
        if (st == RG_OK && d > 0 && (uint64_t)end != (uint64_t)levels[d]->length - 1)
            st = rg_set_error(ctx, RG_EOFFSETS,
                              "%s: levels[%zu] ends at %lld, but levels[%zu] splits %zu items",
                              fn, d - 1, (long long)end, d, levels[d]->length - 1);
        if (st == RG_OK)
            st = rg_check_offsets(levels[d], fn, &end);
        if (st != RG_OK)
            return st;
    }
    *nelems = end;
    return RG_OK;
}

/* out is none of the levels. */
static rg_status check_not_level(const rg_array *out, const rg_array *const *levels,
                                 size_t nlevels, const char *fn)
{
    char name[48];
    rg_status st = RG_OK;
    for (size_t d = 0; st == RG_OK && d < nlevels; d++) {
        snprintf(name, sizeof name, "levels[%zu]", d);
        st = rg_check_not_input(levels[0]->ctx, out, fn, "out", levels[d], name);
    }
    return st;
}

/* outer < inner <= nlevels. */
static rg_status check_depths(rg_context *ctx, size_t nlevels, size_t outer, size_t inner,
                              const char *fn)
{
    if (outer >= inner || inner > nlevels)
        return rg_set_error(ctx, RG_EINVAL,
                            "%s: depths outer %zu and inner %zu must satisfy outer < inner <= "
                            "nlevels (%zu)",
                            fn, outer, inner, nlevels);
    return RG_OK;
}

/* The levels fit together and the last one ends at content_length. */
static rg_status check_nested(const rg_array *const *levels, size_t nlevels,
                              size_t content_length, const char *fn)
{
    int64_t nelems = 0;
    rg_status st = check_levels(levels, nlevels, fn, &nelems);
    if (st == RG_OK && (uint64_t)nelems != (uint64_t)content_length)
        st = rg_set_error(levels[0]->ctx, RG_EOFFSETS,
                          "%s: the last level ends at %lld, but the content has %zu elements",
                          fn, (long long)nelems, content_length);
    return st;
}

rg_status rg_nested_validate(const rg_array *const *levels, size_t nlevels,
                             size_t content_length)
{
    return check_nested(levels, nlevels, content_length, "rg_nested_validate");
}

rg_status rg_offsets_compose(rg_array *out, const rg_array *outer, const rg_array *inner)
{
    static const char fn[] = "rg_offsets_compose";
    if (!outer)
        return rg_null_arg(out ? out : inner, fn, "outer");
    rg_context *ctx = outer->ctx;
    const rg_array *levels[2] = {outer, inner};
    int64_t nelems = 0;
    rg_status st = rg_check_index_array(ctx, inner, fn, "inner", "outer");
    if (st == RG_OK)
        st = rg_check_index_array(ctx, out, fn, "out", "outer");
    if (st == RG_OK)
        st = rg_check_not_input(ctx, out, fn, "out", outer, "outer");
    if (st == RG_OK)
        st = rg_check_not_input(ctx, out, fn, "out", inner, "inner");
    if (st == RG_OK)
        st = check_levels(levels, 2, fn, &nelems);
    if (st == RG_OK)
        st = rg_check_length(out, fn, "out", outer->length, "outer's length");
    if (st == RG_OK)
        st = rg_check_fits(out, fn, "out", nelems);
    if (st != RG_OK)
        return st;
    rg_op_begin(out);
    st = rg_op_end(ctx, ctx->ops->compose(out, outer, inner));
    if (st == RG_OK) /* inner[outer[i]] of valid levels: valid, ending where inner ends */
        rg_array_offsets_known(out, nelems);
    return st;
}

/* Offsets from depth outer into depth inner, in a new int64 array (or the
 * level itself, borrowed, when inner == outer + 1: then *owned is NULL). */
static rg_status compose_range(const rg_array **result, rg_array **owned,
                               const rg_array *const *levels, size_t outer, size_t inner)
{
    rg_context *ctx = levels[0]->ctx;
    const rg_array *cur = levels[outer];
    rg_array *tmp = NULL;
    *owned = NULL;
    for (size_t d = outer + 1; d < inner; d++) {
        rg_array *next; /* written whole: not zeroed first (fresh pages cost more than the op) */
        rg_status st = rg_array_create_uninit(&next, ctx, RG_INT64, cur->length);
        if (st == RG_OK)
            st = ctx->ops->compose(next, cur, levels[d]);
        if (st == RG_OK) /* valid levels compose to valid offsets */
            rg_array_offsets_known(next, levels[d]->offsets_last);
        rg_array_free(tmp);
        if (st != RG_OK) {
            rg_array_free(next);
            return st;
        }
        tmp = next;
        cur = next;
    }
    *owned = tmp;
    *result = cur;
    return RG_OK;
}

/* The item count of depth `depth`. */
static int64_t items_at(const rg_array *const *levels, size_t nlevels, size_t depth,
                        int64_t nelems)
{
    return depth == nlevels ? nelems : (int64_t)levels[depth]->length - 1;
}

rg_status rg_nested_offsets(rg_array *out, const rg_array *const *levels, size_t nlevels,
                            size_t outer, size_t inner)
{
    static const char fn[] = "rg_nested_offsets";
    int64_t nelems;
    rg_status st = check_levels(levels, nlevels, fn, &nelems);
    if (st != RG_OK)
        return st;
    rg_context *ctx = levels[0]->ctx;
    st = check_depths(ctx, nlevels, outer, inner, fn);
    if (st == RG_OK)
        st = rg_check_index_array(ctx, out, fn, "out", "levels[0]");
    if (st == RG_OK)
        st = check_not_level(out, levels, nlevels, fn);
    if (st == RG_OK)
        st = rg_check_length(out, fn, "out", levels[outer]->length, "levels[outer]'s length");
    if (st == RG_OK)
        st = rg_check_fits(out, fn, "out", items_at(levels, nlevels, inner, nelems));
    if (st != RG_OK)
        return st;
    const rg_array *offsets;
    rg_array *owned;
    st = compose_range(&offsets, &owned, levels, outer, inner);
    if (st == RG_OK) {
        rg_op_begin(out);
        st = rg_op_end(ctx, ctx->ops->compose(out, offsets, NULL)); /* copy, converting the dtype */
    }
    if (st == RG_OK)
        rg_array_offsets_known(out, items_at(levels, nlevels, inner, nelems));
    rg_array_free(owned);
    return st;
}

/* Parents or local index of depth inner within depth outer: the per-element
 * primitives over the composed offsets, which check out themselves. */
static rg_status nested_elems(rg_array *out, const rg_array *const *levels, size_t nlevels,
                              size_t outer, size_t inner, rg_strategy strategy,
                              rg_strategy *used, bool local, const char *fn)
{
    int64_t nelems;
    rg_status st = check_levels(levels, nlevels, fn, &nelems);
    if (st == RG_OK)
        st = check_depths(levels[0]->ctx, nlevels, outer, inner, fn);
    if (st == RG_OK)
        st = rg_check_index_array(levels[0]->ctx, out, fn, "out", "levels[0]");
    if (st == RG_OK)
        st = check_not_level(out, levels, nlevels, fn);
    if (st != RG_OK)
        return st;
    const rg_array *offsets;
    rg_array *owned;
    st = compose_range(&offsets, &owned, levels, outer, inner);
    if (st == RG_OK)
        st = local ? rg_local_index(out, offsets, strategy, used)
                   : rg_parents(out, offsets, strategy, used);
    rg_array_free(owned);
    return rg_prefix_error(levels[0]->ctx, st, fn);
}

rg_status rg_nested_parents(rg_array *out, const rg_array *const *levels, size_t nlevels,
                            size_t outer, size_t inner, rg_strategy strategy, rg_strategy *used)
{
    return nested_elems(out, levels, nlevels, outer, inner, strategy, used, false,
                        "rg_nested_parents");
}

rg_status rg_nested_local_index(rg_array *out, const rg_array *const *levels, size_t nlevels,
                                size_t outer, size_t inner, rg_strategy strategy,
                                rg_strategy *used)
{
    return nested_elems(out, levels, nlevels, outer, inner, strategy, used, true,
                        "rg_nested_local_index");
}

rg_status rg_nested_reduce(rg_array *out, const rg_array *const *levels, size_t nlevels,
                           const rg_array *content, rg_reduce_op op, rg_reduce_policy policy,
                           rg_reduce_policy *used)
{
    static const char fn[] = "rg_nested_reduce";
    if (!content && levels && nlevels > 0 && levels[0])
        return rg_set_error(levels[0]->ctx, RG_EINVAL, "%s: content is NULL", fn);
    rg_status st = check_nested(levels, nlevels, content ? content->length : 0, fn);
    if (st == RG_OK) /* rg_segment_reduce sees only the innermost level */
        st = check_not_level(out, levels, nlevels, fn);
    if (st != RG_OK)
        return st;
    /* The innermost level splits the content: a flat segmented reduction. */
    st = rg_segment_reduce(out, content, levels[nlevels - 1], op, policy, used);
    return rg_prefix_error(levels[0]->ctx, st, fn);
}

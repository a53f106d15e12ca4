/* offsets.c — front end of the offsets primitives: checks arguments, picks the
 * strategy, and leaves the work to the context's backend. */
#include "config.h"

#include "internal.h"

rg_status rg_check_not_input(rg_context *ctx, const rg_array *out, const char *fn,
                             const char *name, const rg_array *in, const char *in_name)
{
    if (out == in)
        return rg_set_error(ctx, RG_EINVAL, "%s: %s is %s too; an output must be an array of "
                            "its own", fn, name, in_name);
    return RG_OK;
}

rg_status rg_check_index_array(rg_context *ctx, const rg_array *a, const char *fn,
                                   const char *name, const char *ref)
{
    if (!a)
        return rg_set_error(ctx, RG_EINVAL, "%s: %s is NULL", fn, name);
    if (a->ctx != ctx)
        return rg_foreign_array(ctx, a, fn, name, ref);
    if (a->dtype != RG_INT32 && a->dtype != RG_INT64)
        return rg_set_error(ctx, RG_EDTYPE, "%s: %s must be int32 or int64, not %s", fn, name,
                            rg_dtype_name(a->dtype));
    return RG_OK;
}

rg_status rg_check_offsets(const rg_array *offsets, const char *fn, int64_t *nelems)
{
    rg_context *ctx = offsets->ctx;
    if (offsets->length == 0)
        return rg_set_error(ctx, RG_ESIZE,
                            "%s: offsets is empty; it needs nsegs + 1 >= 1 elements", fn);
    if (offsets->offsets_ok) { /* unchanged since they passed */
        *nelems = offsets->offsets_last;
        return RG_OK;
    }
    int64_t bad = -1, value = 0, before = 0, longest = -1;
    rg_status st = ctx->ops->offsets_check(offsets, &bad, &longest);
    if (st == RG_OK && bad >= 0)
        st = rg_read_index(offsets, (size_t)bad, &value);
    if (st == RG_OK && bad > 0)
        st = rg_read_index(offsets, (size_t)bad - 1, &before);
    if (st != RG_OK)
        return st;
    if (bad == 0)
        return rg_set_error(ctx, RG_EOFFSETS, "%s: offsets[0] = %lld, must be 0", fn,
                            (long long)value);
    if (bad > 0)
        return rg_set_error(ctx, RG_EOFFSETS,
                            "%s: offsets decrease at index %lld: offsets[%lld] = %lld is less "
                            "than offsets[%lld] = %lld",
                            fn, (long long)bad, (long long)bad, (long long)value,
                            (long long)(bad - 1), (long long)before);
    st = rg_read_index(offsets, offsets->length - 1, nelems);
    if (st == RG_OK) {
        rg_array_offsets_known(offsets, *nelems);
        rg_array_offsets_longest(offsets, longest);
    }
    return st;
}

rg_status rg_check_fits(const rg_array *out, const char *fn, const char *name,
                            int64_t max_value)
{
    if (out->dtype == RG_INT32 && max_value > INT32_MAX)
        return rg_set_error(out->ctx, RG_EOVERFLOW,
                            "%s: an int32 %s is refused when values may reach %lld; use int64", fn,
                            name, (long long)max_value);
    return RG_OK;
}

rg_status rg_check_length(const rg_array *a, const char *fn, const char *name,
                              size_t expected, const char *why)
{
    if (a->length != expected)
        return rg_set_error(a->ctx, RG_ESIZE, "%s: %s has %zu elements, expected %zu (%s)", fn,
                            name, a->length, expected, why);
    return RG_OK;
}

rg_status rg_check_offsets_for(rg_context *ctx, const rg_array *offsets, size_t content_length,
                               const char *fn)
{
    int64_t last = 0;
    rg_status st = rg_check_index_array(ctx, offsets, fn, "offsets", "offsets");
    if (st == RG_OK)
        st = rg_check_offsets(offsets, fn, &last);
    if (st == RG_OK && (uint64_t)last != (uint64_t)content_length)
        st = rg_set_error(ctx, RG_EOFFSETS,
                          "%s: the last offset, offsets[%zu] = %lld, must equal the content "
                          "length %zu",
                          fn, offsets->length - 1, (long long)last, content_length);
    return st;
}

rg_status rg_offsets_validate(const rg_array *offsets, size_t content_length)
{
    if (!offsets)
        return RG_EINVAL;
    return rg_check_offsets_for(offsets->ctx, offsets, content_length, "rg_offsets_validate");
}

rg_status rg_lengths(rg_array *lengths, const rg_array *offsets)
{
    static const char fn[] = "rg_lengths";
    if (!offsets)
        return rg_null_arg(lengths, fn, "offsets");
    rg_context *ctx = offsets->ctx;
    int64_t nelems = 0;
    rg_status st = rg_check_index_array(ctx, offsets, fn, "offsets", "offsets");
    if (st == RG_OK)
        st = rg_check_index_array(ctx, lengths, fn, "lengths", "offsets");
    if (st == RG_OK) /* also refuses empty offsets, before nsegs is derived */
        st = rg_check_offsets(offsets, fn, &nelems);
    if (st == RG_OK)
        st = rg_check_length(lengths, fn, "lengths", offsets->length - 1, "nsegs");
    if (st == RG_OK)
        st = rg_check_fits(lengths, fn, "lengths", nelems);
    if (st != RG_OK || lengths->length == 0)
        return st;
    rg_op_begin(lengths);
    return rg_op_end(ctx, ctx->ops->lengths(lengths, offsets));
}

rg_status rg_offsets_from_lengths(rg_array *offsets, const rg_array *lengths)
{
    static const char fn[] = "rg_offsets_from_lengths";
    if (!lengths)
        return rg_null_arg(offsets, fn, "lengths");
    rg_context *ctx = lengths->ctx;
    rg_status st = rg_check_index_array(ctx, lengths, fn, "lengths", "lengths");
    if (st == RG_OK)
        st = rg_check_index_array(ctx, offsets, fn, "offsets", "lengths");
    if (st == RG_OK)
        st = rg_check_length(offsets, fn, "offsets", lengths->length + 1, "nsegs + 1");
    int64_t negative = -1, value = 0, longest = 0;
    uint64_t total = 0;
    if (st == RG_OK && lengths->length > 0)
        st = ctx->ops->lengths_total(lengths, &negative, &total, &longest);
    if (st == RG_OK && negative >= 0) {
        st = rg_read_index(lengths, (size_t)negative, &value);
        if (st == RG_OK)
            return rg_set_error(ctx, RG_EINVAL, "%s: lengths[%lld] = %lld is negative", fn,
                                (long long)negative, (long long)value);
    }
    if (st == RG_OK && total > INT64_MAX)
        return rg_set_error(ctx, RG_EOVERFLOW, "%s: the lengths add up past INT64_MAX", fn);
    if (st == RG_OK)
        st = rg_check_fits(offsets, fn, "offsets", (int64_t)total);
    if (st != RG_OK)
        return st;
    rg_op_begin(offsets);
    if (lengths->length == 0) {
        const int64_t zero = 0; /* all-zero bytes: serves int32 too */
        st = ctx->ops->array_write(offsets, 0, &zero, rg_dtype_size(offsets->dtype));
    } else {
        st = ctx->ops->offsets_from_lengths(offsets, lengths);
    }
    st = rg_op_end(ctx, st);
    if (st == RG_OK) { /* non-negative lengths that fit: valid by construction */
        rg_array_offsets_known(offsets, (int64_t)total);
        rg_array_offsets_longest(offsets, longest);
    }
    return st;
}

/* Shared by parents, local index and starts: they differ only in what is written. */
static rg_status elem_segments(rg_array *out, const rg_array *offsets, rg_strategy strategy,
                               rg_strategy *used, rg_elem_kind kind, const char *fn)
{
    if (!offsets)
        return rg_null_arg(out, fn, "offsets");
    rg_context *ctx = offsets->ctx;
    int64_t nelems = 0;
    rg_status st = rg_check_index_array(ctx, offsets, fn, "offsets", "offsets");
    if (st == RG_OK)
        st = rg_check_index_array(ctx, out, fn, "output", "offsets");
    if (st == RG_OK)
        st = rg_check_not_input(ctx, out, fn, "output", offsets, "offsets");
    if (st == RG_OK && (strategy < RG_STRATEGY_AUTO || strategy > RG_STRATEGY_MERGE_PATH))
        st = rg_set_error(ctx, RG_EINVAL, "%s: unknown strategy %d", fn, (int)strategy);
    if (st == RG_OK)
        st = rg_check_offsets(offsets, fn, &nelems);
    if (st == RG_OK)
        st = rg_check_length(out, fn, "output", (size_t)nelems, "the last offset");
    if (st != RG_OK)
        return st;
    size_t nsegs = offsets->length - 1;
    int64_t max_value = kind == RG_ELEM_PARENTS ? (int64_t)nsegs - 1 : nelems;
    st = rg_check_fits(out, fn, "output", max_value);
    if (st != RG_OK)
        return st;
    if (strategy == RG_STRATEGY_AUTO)
        strategy = rg_strategy_pick(ctx, nsegs, (size_t)nelems, offsets->offsets_longest, NULL);
    if (nelems > 0) {
        rg_op_begin(out);
        st = rg_op_end(ctx, ctx->ops->elem_segments(out, offsets, strategy, kind));
    }
    if (st == RG_OK && used)
        *used = strategy;
    return st;
}

rg_status rg_parents(rg_array *parents, const rg_array *offsets, rg_strategy strategy,
                     rg_strategy *used)
{
    return elem_segments(parents, offsets, strategy, used, RG_ELEM_PARENTS, "rg_parents");
}

rg_status rg_local_index(rg_array *local, const rg_array *offsets, rg_strategy strategy,
                         rg_strategy *used)
{
    return elem_segments(local, offsets, strategy, used, RG_ELEM_LOCAL, "rg_local_index");
}

rg_status rg_segment_starts(rg_array *starts, const rg_array *offsets, rg_strategy strategy,
                            rg_strategy *used)
{
    return elem_segments(starts, offsets, strategy, used, RG_ELEM_STARTS,
                         "rg_segment_starts");
}

/* demo.c — a first tour of ragged: offsets, lengths, parents, local index and strategies. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <ragged.h>

/* Every ragged call returns a status; on failure the context's last error
 * says what went wrong in detail (rg_context_error(NULL) when there is no
 * context yet). */
static void check(rg_status status, const rg_context *ctx, const char *what)
{
    if (status == RG_OK)
        return;
    fprintf(stderr, "demo: %s failed: %s: %s\n", what, rg_strerror(status),
            rg_context_error(ctx));
    exit(1);
}

/* Copies an int64 array back to the host and prints it. */
static void print_array(const char *name, const rg_array *a, const rg_context *ctx)
{
    int64_t values[64];
    size_t n = rg_array_length(a);
    if (n > 64)
        n = 64; /* enough for this demo */
    check(rg_array_read(values, a, 0, n), ctx, name);
    printf("  %-14s [", name);
    for (size_t i = 0; i < n; i++)
        printf("%s%" PRId64, i ? ", " : "", values[i]);
    printf("]\n");
}

int main(void)
{
    /* 1. A context: RG_BACKEND_AUTO takes an OpenCL GPU when there is one and
     *    OpenMP otherwise (RAGGED_BACKEND=opencl|openmp overrides). */
    rg_context *ctx = NULL;
    check(rg_context_create(&ctx, RG_BACKEND_AUTO), NULL, "rg_context_create");
    printf("ragged %s\n", rg_version_string());
    printf("backend: %s\n", rg_backend_name(rg_context_backend(ctx)));
    printf("device:  %s\n\n", rg_context_device(ctx));

    /* 2. A ragged array of 5 segments holding 10 elements, described by its
     *    segment lengths.  Arrays live in the context (on an OpenCL device,
     *    in device memory); data moves on rg_array_from_host / rg_array_read. */
    const int64_t lengths_host[] = {3, 0, 2, 1, 4};
    const size_t nsegs = sizeof lengths_host / sizeof lengths_host[0];
    const size_t nelems = 10;
    rg_array *lengths = NULL, *offsets = NULL, *again = NULL;
    check(rg_array_from_host(&lengths, ctx, RG_INT64, lengths_host, nsegs), ctx, "lengths");
    check(rg_array_create(&offsets, ctx, RG_INT64, nsegs + 1), ctx, "offsets");

    /* offsets = [0, running sums of lengths]: segment i is
     * content[offsets[i] .. offsets[i+1]). */
    check(rg_offsets_from_lengths(offsets, lengths), ctx, "rg_offsets_from_lengths");
    /* ... and back: lengths[i] = offsets[i+1] - offsets[i]. */
    check(rg_array_create(&again, ctx, RG_INT64, nsegs), ctx, "lengths again");
    check(rg_lengths(again, offsets), ctx, "rg_lengths");

    printf("a ragged array of %zu segments, %zu elements:\n", nsegs, nelems);
    print_array("offsets", offsets, ctx);
    print_array("lengths", again, ctx);

    /* 3. Per-element arrays, one value for each of the 10 elements:
     *    parents[k] = the segment holding element k,
     *    local[k]   = the position of k inside its segment,
     *    starts[k]  = the offset where k's segment starts. */
    rg_array *parents = NULL, *local = NULL, *starts = NULL;
    check(rg_array_create(&parents, ctx, RG_INT64, nelems), ctx, "parents");
    check(rg_array_create(&local, ctx, RG_INT64, nelems), ctx, "local");
    check(rg_array_create(&starts, ctx, RG_INT64, nelems), ctx, "starts");

    rg_strategy used = RG_STRATEGY_AUTO;
    check(rg_parents(parents, offsets, RG_STRATEGY_AUTO, &used), ctx, "rg_parents");
    check(rg_local_index(local, offsets, RG_STRATEGY_AUTO, NULL), ctx, "rg_local_index");
    check(rg_segment_starts(starts, offsets, RG_STRATEGY_AUTO, NULL), ctx, "rg_segment_starts");
    print_array("parents", parents, ctx);
    print_array("local index", local, ctx);
    print_array("segment starts", starts, ctx);

    /* 4. How parents were computed.  RG_STRATEGY_AUTO asks rg_strategy_choose;
     *    any strategy can be named instead, and all give the same result. */
    const char *why = NULL;
    rg_strategy_choose(ctx, nsegs, nelems, &why);
    printf("\nparents strategy: %s\n  because: %s\n", rg_strategy_name(used), why);

    /* The choice depends on the sizes and the device: a large case. */
    const size_t big_segs = 1000000, big_elems = 100000000;
    rg_strategy big = rg_strategy_choose(ctx, big_segs, big_elems, &why);
    printf("for %zu segments and %zu elements auto would take: %s\n  because: %s\n",
           big_segs, big_elems, rg_strategy_name(big), why);

    /* 5. Everything is freed explicitly; _free(NULL) is allowed. */
    rg_array_free(starts);
    rg_array_free(local);
    rg_array_free(parents);
    rg_array_free(again);
    rg_array_free(offsets);
    rg_array_free(lengths);
    rg_context_free(ctx);
    return 0;
}

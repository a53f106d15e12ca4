/* consumer.c — the smallest program using an installed ragged, built with
 *     cc consumer.c $(pkg-config --cflags --libs ragged)   (or Makefile.consumer) */
#include <stdint.h>
#include <stdio.h>

#include <ragged.h>

static int fail(rg_status status, const rg_context *ctx, const char *what)
{
    fprintf(stderr, "consumer: %s: %s: %s\n", what, rg_strerror(status), rg_context_error(ctx));
    return 1;
}

int main(void)
{
    /* Segments of lengths 3, 0, 2, 1, 4 over 10 elements. */
    const int64_t offsets_host[] = {0, 3, 3, 5, 6, 10};
    const int64_t expected[] = {0, 0, 0, 2, 2, 3, 4, 4, 4, 4};
    enum { NSEGS = 5, NELEMS = 10 };
    int64_t parents_host[NELEMS];

    rg_context *ctx = NULL;
    rg_status st = rg_context_create(&ctx, RG_BACKEND_AUTO);
    if (st != RG_OK)
        return fail(st, NULL, "rg_context_create");

    rg_array *offsets = NULL, *parents = NULL;
    st = rg_array_from_host(&offsets, ctx, RG_INT64, offsets_host, NSEGS + 1);
    if (st == RG_OK)
        st = rg_array_create(&parents, ctx, RG_INT64, NELEMS);
    if (st == RG_OK)
        st = rg_parents(parents, offsets, RG_STRATEGY_AUTO, NULL);
    if (st == RG_OK)
        st = rg_array_read(parents_host, parents, 0, NELEMS);
    int rc = st != RG_OK ? fail(st, ctx, "computing parents") : 0;

    if (rc == 0) {
        printf("ragged %s on %s: parents =", rg_version_string(), rg_context_device(ctx));
        for (int k = 0; k < NELEMS; k++) {
            printf(" %lld", (long long)parents_host[k]);
            if (parents_host[k] != expected[k])
                rc = 1;
        }
        printf(rc ? "  (MISMATCH)\n" : "  (as expected)\n");
    }

    rg_array_free(parents);
    rg_array_free(offsets);
    rg_context_free(ctx);
    return rc;
}

/* check_main.c — runs every Check suite of ragged (forked tests; no context is made here). */
#include <stdlib.h>

#include "common.h"

/* Read by AddressSanitizer when the tests are built with it (ignored
 * otherwise): test_huge_alloc asks for more memory than exists and expects
 * RG_ENOMEM, which needs malloc to return NULL rather than ASan to abort.
 * ASAN_OPTIONS in the environment still overrides this. */
const char *__asan_default_options(void);
__attribute__((visibility("default"), used)) const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

int main(void)
{
    /* Contexts and OpenMP threads are only ever made inside the forked tests. */
    SRunner *sr = srunner_create(context_suite());
    srunner_add_suite(sr, array_suite());
    srunner_add_suite(sr, offsets_suite());
    srunner_add_suite(sr, parents_suite());
    srunner_add_suite(sr, segd_suite());
    srunner_add_suite(sr, nested_suite());
    srunner_add_suite(sr, nonzero_suite());
    srunner_add_suite(sr, list_suite());
    srunner_add_suite(sr, transfers_suite());
    srunner_add_suite(sr, reduce_suite());
    srunner_add_suite(sr, faults_suite());

    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

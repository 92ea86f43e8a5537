/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-strmap.c — the string hash map: random puts, replaces and removes
 * checked against a plain array, case-insensitive keys, iteration.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/strmap.h"
#include "test-util.h"

#define N_KEYS 3000

static void test_random_ops(void) {
        static char keys[N_KEYS][16];
        static int present[N_KEYS];
        static int values[N_KEYS];
        GleanStrMap *m = NULL;
        unsigned seed = 42;
        size_t n = 0, pos = 0, seen = 0;
        const char *k;
        void *v;

        CU_ASSERT_FATAL(glean_strmap_new(false, &m) == 0);
        for (int i = 0; i < N_KEYS; i++)
                snprintf(keys[i], sizeof(keys[i]), "k%d@x", i);
        for (int step = 0; step < 200000; step++) {
                int i = rand_r(&seed) % N_KEYS;
                if (rand_r(&seed) % 3) {
                        n += !present[i];
                        present[i] = 1;
                        values[i] = step;
                        CU_ASSERT_FATAL(glean_strmap_put(m, keys[i], &values[i]) == 0);
                } else {
                        void *got = glean_strmap_remove(m, keys[i]);
                        GLEAN_TEST_CHECK_FATAL(got == (present[i] ? &values[i] : NULL), "step %d: remove %s", step,
                                               keys[i]);
                        n -= present[i];
                        present[i] = 0;
                }
                if (step % 997 == 0)
                        for (int j = 0; j < N_KEYS; j++)
                                GLEAN_TEST_CHECK_FATAL(glean_strmap_get(m, keys[j]) == (present[j] ? &values[j] : NULL),
                                                       "step %d: get %s", step, keys[j]);
        }
        CU_ASSERT_EQUAL(glean_strmap_size(m), n);
        while (glean_strmap_next(m, &pos, &k, &v)) {
                int i = atoi(k + 1);
                GLEAN_TEST_CHECK(present[i] && v == &values[i], "iteration gave %s", k);
                seen++;
        }
        CU_ASSERT_EQUAL(seen, n);
        CU_ASSERT_PTR_NULL(glean_strmap_get(m, "K1@x"));
        glean_strmap_free(m);
}

static void test_icase(void) {
        GleanStrMap *m = NULL;
        int a = 1, b = 2;

        CU_ASSERT_FATAL(glean_strmap_new(true, &m) == 0);
        CU_ASSERT_PTR_NULL(glean_strmap_get(m, "x"));
        CU_ASSERT_PTR_NULL(glean_strmap_remove(m, "x"));
        CU_ASSERT(glean_strmap_put(m, "Group_Physics", &a) == 0);
        CU_ASSERT_PTR_EQUAL(glean_strmap_get(m, "group_physics"), &a);
        CU_ASSERT_PTR_EQUAL(glean_strmap_get(m, "GROUP_PHYSICS"), &a);
        CU_ASSERT(glean_strmap_put(m, "group_PHYSICS", &b) == 0);
        CU_ASSERT_EQUAL(glean_strmap_size(m), 1);
        CU_ASSERT_PTR_EQUAL(glean_strmap_get(m, "Group_Physics"), &b);
        CU_ASSERT_PTR_EQUAL(glean_strmap_remove(m, "group_physics"), &b);
        CU_ASSERT_EQUAL(glean_strmap_size(m), 0);
        glean_strmap_free(m);
        glean_strmap_free(NULL);
}

static CU_TestInfo tests[] = {
        { "random_ops", test_random_ops },
        { "icase", test_icase },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "strmap", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

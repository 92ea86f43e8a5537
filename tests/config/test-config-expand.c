/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-expand.c — macro expansion at lookup: $(NAME),
 * $(NAME:default), $ENV(VAR), $(DOLLAR), $$, undefined names, bindings
 * to the latest definition, loops and limits; config_expand() and
 * config_expand_with() over another namespace.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config.h"
#include "test-util.h"

typedef struct ExpandCase {
        const char *text;
        const char *name;
        const char *value; /* expected expansion when r == 0 */
        int r;
        int line;          /* of the error */
        const char *msg;   /* the reason starts with this */
} ExpandCase;

static const ExpandCase expand_cases[] = {
        /* the manual's examples (Introduction to Configuration) */
        { "A = xxx\nC = $(A)", "C", "xxx", 0, 0, NULL },
        { "A = xxx\nC = $(A)\nA = yyy", "C", "yyy", 0, 0, NULL },
        { "A = xxx\nB = $(A)\nA = $(A)yyy\nA = $(A)zzz", "A", "xxxyyyzzz", 0, 0, NULL },
        { "A = xxx\nB = $(A)\nA = $(A)yyy\nA = $(A)zzz", "B", "xxxyyyzzz", 0, 0, NULL },
        { "MAX_ALLOC_CPUS = $(NUMCPUS)-1", "MAX_ALLOC_CPUS", "-1", 0, 0, NULL },
        { "MAX_ALLOC_CPUS = $(NUMCPUS:4)-1", "MAX_ALLOC_CPUS", "4-1", 0, 0, NULL },
        { "D = 7\nM = $(NUMCPUS:$(D))-1", "M", "7-1", 0, 0, NULL },
        { "NUMCPUS = 2\nM = $(NUMCPUS:4)-1", "M", "2-1", 0, 0, NULL },
        /* defaults: used when undefined or empty, expanded, nested */
        { "E =\nM = $(E:x)", "M", "x", 0, 0, NULL },
        { "E = $(U)\nM = $(E:x)", "M", "", 0, 0, NULL },
        { "M = $(B:$(C:z))", "M", "z", 0, 0, NULL },
        { "C = c\nM = $(B:$(C:z))", "M", "c", 0, 0, NULL },
        { "M = $(B:(x))", "M", "(x)", 0, 0, NULL },
        { "M = $(B:x)y)", "M", "xy)", 0, 0, NULL },
        { "M = $(B:)", "M", "", 0, 0, NULL },
        { "M = $(B:a, b $ c)", "M", "a, b $ c", 0, 0, NULL },
        /* names */
        { "M = $(minute)", "M", "60", 0, 0, NULL },
        { "m = 1\nN = $(M)$(m)", "N", "11", 0, 0, NULL },
        { "MASTER.X = 5\nM = $(master.x)", "M", "5", 0, 0, NULL },
        { "E =\nM = [$(E)]", "M", "[]", 0, 0, NULL },
        { "M = $(UNDEFINED_NAME)", "M", "", 0, 0, NULL },
        /* dollars */
        { "M = $(DOLLAR)(A)", "M", "$(A)", 0, 0, NULL },
        { "M = $(dollar)$(Dollar)", "M", "$$", 0, 0, NULL },
        { "M = $(DOLLAR:x)", "M", "x", 0, 0, NULL },
        { "DOLLAR = 5\nM = $(DOLLAR)", "M", "$", 0, 0, NULL },
        { "P = $(DOLLAR)(MINUTE)\nM = $(P)", "M", "$(MINUTE)", 0, 0, NULL },
        { "M = a$$(Memory)b", "M", "a$$(Memory)b", 0, 0, NULL },
        { "M = $$([Memory * 2])", "M", "$$([Memory * 2])", 0, 0, NULL },
        { "M = $$$(MINUTE)", "M", "$$60", 0, 0, NULL },
        { "M = cost $5, $x and $", "M", "cost $5, $x and $", 0, 0, NULL },
        { "M = $foo(x)", "M", "$foo(x)", 0, 0, NULL },
        /* the environment */
        { "M = $ENV(GLEAN_TEST_VAR)", "M", "from env", 0, 0, NULL },
        { "M = $ENV(GLEAN_TEST_VAR:fallback)", "M", "from env", 0, 0, NULL },
        { "M = $ENV(GLEAN_TEST_UNSET)", "M", "UNDEFINED", 0, 0, NULL },
        { "M = $ENV(GLEAN_TEST_UNSET:fallback)", "M", "fallback", 0, 0, NULL },
        { "M = $ENV(GLEAN_TEST_UNSET:$(MINUTE))", "M", "60", 0, 0, NULL },
        { "M = $ENV(GLEAN_TEST_EMPTY:fallback)", "M", "fallback", 0, 0, NULL },
        { "M = [$ENV(GLEAN_TEST_EMPTY)]", "M", "[]", 0, 0, NULL },
        { "M = $ENV(GLEAN_TEST_MACRO)", "M", "$(MINUTE)", 0, 0, NULL },
        { "M = $env(GLEAN_TEST_VAR)", "M", "$env(GLEAN_TEST_VAR)", 0, 0, NULL },
        /* the same macro twice, deep but finite chains */
        { "B = 1\nM = $(B)$(B)$(B)", "M", "111", 0, 0, NULL },
        { "A = $(B) $(B)\nB = $(C) $(C)\nC = x", "A", "x x x x", 0, 0, NULL },
        { "A = $(B)\nB = $(C)\nC = $(D)\nD = end", "A", "end", 0, 0, NULL },
        /* loops */
        { "A = $(B)\nB = $(A)", "A", NULL, -ELOOP, 2, "macro expansion loop: A -> B -> A" },
        { "A = $(B)\nB = $(A)", "B", NULL, -ELOOP, 1, "macro expansion loop: B -> A -> B" },
        { "A = x $(B)\nB = y $(C)\nC = $(a)", "A", NULL, -ELOOP, 3, "macro expansion loop: A -> B -> C -> A" },
        { "A = $(B)\nB = $(C)\nC = $(B)", "A", NULL, -ELOOP, 3, "macro expansion loop: B -> C -> B" },
        { "A = $(B:$(A))", "A", "", 0, 0, NULL },
        { "B = $(B)\nA = $(B)", "A", "", 0, 0, NULL },
        { "A = $(C:$(B))\nB = $(A)", "A", NULL, -ELOOP, 2, "macro expansion loop: A -> B -> A" },
        /* undefined */
        { "A = 1", "NOPE", NULL, -ENOENT, 0, "" },
};

static void test_expand(void) {
        setenv("GLEAN_TEST_VAR", "from env", 1);
        setenv("GLEAN_TEST_EMPTY", "", 1);
        setenv("GLEAN_TEST_MACRO", "$(MINUTE)", 1);
        unsetenv("GLEAN_TEST_UNSET");

        for (size_t i = 0; i < sizeof(expand_cases) / sizeof(expand_cases[0]); i++) {
                const ExpandCase *c = &expand_cases[i];
                Config *cfg = NULL;
                ConfigError err = {};
                char *v = NULL;
                int r;

                GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
                r = config_load_string(cfg, c->text, "x.conf", &err);
                GLEAN_TEST_CHECK(r == 0, "case %zu: loading gave %d: %d: %s", i, r, err.line, err.msg);
                r = config_get(cfg, c->name, &v, &err);
                GLEAN_TEST_CHECK(r == c->r, "case %zu: config_get(%s) gave %d, want %d (%s)", i, c->name, r, c->r,
                                 err.msg);
                if (c->r == 0 && r == 0)
                        GLEAN_TEST_CHECK(strcmp(v, c->value) == 0, "case %zu: %s expands to '%s', want '%s'", i,
                                         c->name, v, c->value);
                if (c->r < 0 && c->msg && c->msg[0]) {
                        GLEAN_TEST_CHECK(strncmp(err.msg, c->msg, strlen(c->msg)) == 0,
                                         "case %zu: reason '%s', want '%s'", i, err.msg, c->msg);
                        GLEAN_TEST_CHECK(strcmp(err.file, "x.conf") == 0 && err.line == c->line,
                                         "case %zu: error at %s:%d, want x.conf:%d", i, err.file, err.line, c->line);
                }
                free(v);
                config_free(cfg);
        }
}

/* A chain a0 -> a1 -> ... -> aN: too deep past 64 references. */
static void test_depth(void) {
        static const struct {
                int n;
                int r;
        } cases[] = { { 10, 0 }, { 63, 0 }, { 70, -ELOOP }, { 500, -ELOOP } };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Config *cfg = NULL;
                ConfigError err = {};
                char name[32], value[32], *v = NULL;
                int r;

                GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
                for (int k = 0; k < cases[i].n; k++) {
                        snprintf(name, sizeof(name), "a%d", k);
                        snprintf(value, sizeof(value), "$(a%d)", k + 1);
                        GLEAN_TEST_CHECK_FATAL(config_set(cfg, name, value) == 0, "config_set(%s) failed", name);
                }
                r = config_get(cfg, "a0", &v, &err);
                GLEAN_TEST_CHECK(r == cases[i].r, "chain of %d: %d, want %d (%s)", cases[i].n, r, cases[i].r, err.msg);
                if (r < 0)
                        GLEAN_TEST_CHECK(strstr(err.msg, "nested more than 64 levels deep") != NULL, "reason '%s'",
                                         err.msg);
                free(v);
                config_free(cfg);
        }
}

/* Doubling at every level: the output limit, not the memory, stops it. */
static void test_size(void) {
        Config *cfg = NULL;
        ConfigError err = {};
        char name[32], value[64], *v = NULL;
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "d0", "0123456789abcdef0123456789abcdef") == 0, "config_set failed");
        for (int k = 1; k <= 40; k++) {
                snprintf(name, sizeof(name), "d%d", k);
                snprintf(value, sizeof(value), "$(d%d)$(d%d)", k - 1, k - 1);
                GLEAN_TEST_CHECK_FATAL(config_set(cfg, name, value) == 0, "config_set(%s) failed", name);
        }
        r = config_get(cfg, "d10", &v, &err);
        GLEAN_TEST_CHECK(r == 0 && v && strlen(v) == 32u << 10, "d10: %d, length %zu", r, v ? strlen(v) : 0);
        free(v);
        v = NULL;
        r = config_get(cfg, "d40", &v, &err);
        GLEAN_TEST_CHECK(r == -E2BIG && strstr(err.msg, "expansion produces more than"), "d40: %d (%s)", r, err.msg);
        free(v);

        /* 40 levels of doubling with nothing in them: one result per name
         * per lookup keeps it linear. */
        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "d0", "") == 0, "config_set failed");
        v = NULL;
        r = config_get(cfg, "d40", &v, &err);
        GLEAN_TEST_CHECK(r == 0 && v && !v[0], "empty d40: %d '%s'", r, v);
        free(v);
        config_free(cfg);
}

static void test_config_expand(void) {
        static const struct {
                const char *text;
                const char *value;
                int r;
                const char *msg;
        } cases[] = {
                { "plain", "plain", 0, NULL },
                { "", "", 0, NULL },
                { "$(MINUTE) * 2", "60 * 2", 0, NULL },
                { "[$(NOPE)]", "[]", 0, NULL },
                { "$(HOUR)", "(60 * 60)", 0, NULL },
                { "$(", NULL, -EINVAL, "'$(' names no macro" },
                { "x $(A B) y", NULL, -EINVAL, "'$(A B)': ' ' cannot be part of a macro name" },
                { "$(A", NULL, -EINVAL, "'$(A' has no closing ')'" },
                { "$ENV(", NULL, -EINVAL, "'$ENV(' names no environment variable" },
                { "$CHOICE(1,a,b)", "b", 0, NULL },
                { "$CHOICE(2,a,b)", NULL, -EINVAL, "$CHOICE(2,a,b): index 2 is out of range" },
                { "$(L1)", NULL, -ELOOP, "macro expansion loop: L1 -> L2 -> L1" },
        };
        Config *cfg = NULL;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "L1", "$(L2)") == 0 && config_set(cfg, "L2", "$(L1)") == 0,
                               "config_set failed");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int r;

                r = config_expand(cfg, cases[i].text, &v, &err);
                GLEAN_TEST_CHECK(r == cases[i].r, "case %zu: '%s' gave %d, want %d (%s)", i, cases[i].text, r,
                                 cases[i].r, err.msg);
                if (r == 0 && cases[i].value)
                        GLEAN_TEST_CHECK(strcmp(v, cases[i].value) == 0, "case %zu: '%s', want '%s'", i, v,
                                         cases[i].value);
                if (cases[i].msg)
                        GLEAN_TEST_CHECK(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
                                         "case %zu: reason '%s', want '%s'", i, err.msg, cases[i].msg);
                free(v);
        }
        config_free(cfg);
}

/* config_expand_with(): another namespace, as the submit parser has. */
static const char *lookup_table(void *userdata, const char *name) {
        static const char *const table[][2] = {
                { "Cluster", "42" }, { "Process", "7" }, { "base", "job.$(Cluster)" },
                { "empty", "" },     { "loop", "$(Loop)" }, { "a", "$(b)" }, { "b", "$(a)" },
        };
        int *calls = userdata;

        (*calls)++;
        for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
                if (strcasecmp(table[i][0], name) == 0)
                        return table[i][1];
        return NULL;
}

static void test_expand_with(void) {
        static const struct {
                const char *text;
                const char *value;
                int r;
        } cases[] = {
                { "out.$(Cluster).$(Process)", "out.42.7", 0 },
                { "$(base).log", "job.42.log", 0 },
                { "$(CLUSTER)", "42", 0 },
                { "$(nope:default)", "default", 0 },
                { "$(empty:default)", "default", 0 },
                { "$(DOLLAR)(Cluster)", "$(Cluster)", 0 },
                { "$$(OpSys)", "$$(OpSys)", 0 },
                { "$(loop)", NULL, -ELOOP },
                { "$(a)", NULL, -ELOOP },
                { "$(a b)", NULL, -EINVAL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int calls = 0, r;

                r = config_expand_with(cases[i].text, lookup_table, &calls, &v, &err);
                GLEAN_TEST_CHECK(r == cases[i].r, "case %zu: '%s' gave %d, want %d (%s)", i, cases[i].text, r,
                                 cases[i].r, err.msg);
                if (r == 0)
                        GLEAN_TEST_CHECK(strcmp(v, cases[i].value) == 0, "case %zu: '%s', want '%s'", i, v,
                                         cases[i].value);
                free(v);
        }
}

static CU_TestInfo tests[] = {
        { "expand", test_expand },
        { "depth", test_depth },
        { "size", test_size },
        { "config_expand", test_config_expand },
        { "config_expand_with", test_expand_with },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "expand", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit-values.c — the value syntaxes of submit descriptions, one
 * function at a time: arguments and environment in both syntaxes and
 * their canonical form, sizes with units, signals, booleans, integer
 * expressions, slices and the splitting of queue items.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "submit-internal.h"
#include "test-util.h"

#define MAX_WORDS 6

/* ---- arguments ---- */

typedef struct ArgsCase {
        const char *in;
        int r;
        bool v2;                      /* new syntax */
        const char *words[MAX_WORDS]; /* NULL-terminated */
        const char *joined;           /* Args (old) or Arguments (new); NULL: error */
} ArgsCase;

static void test_args(void) {
        static const ArgsCase cases[] = {
                { "", 0, false, { NULL }, "" },
                { "a b", 0, false, { "a", "b" }, "a b" },
                { "  a \t b\n", 0, false, { "a", "b" }, "a b" },
                { "say \\\"hi\\\"", 0, false, { "say", "\"hi\"" }, "say \"hi\"" },
                { "it's a\\b", 0, false, { "it's", "a\\b" }, "it's a\\b" },
                { "a \"b\"", -EINVAL, false, { NULL }, NULL },
                { "\"\"", 0, true, { NULL }, "" },
                { "\"a b\"", 0, true, { "a", "b" }, "a b" },
                { " \"a b\" ", 0, true, { "a", "b" }, "a b" },
                { "\"'a b' c\"", 0, true, { "a b", "c" }, "a' 'b c" },
                { "\"'' x\"", 0, true, { "", "x" }, "'' x" },
                { "\"'it''s'\"", 0, true, { "it's" }, "it''''s" },
                { "\"a''b\"", 0, true, { "ab" }, "ab" },
                { "\"x'y z'w\"", 0, true, { "xy zw" }, "xy' 'zw" },
                { "\"say \"\"hi\"\"\"", 0, true, { "say", "\"hi\"" }, "say \"hi\"" },
                { "\"'a  b'\"", 0, true, { "a  b" }, "a'  'b" },
                { "\"' lead' 'trail '\"", 0, true, { " lead", "trail " }, "' 'lead trail' '" },
                { "\"a", -EINVAL, true, { NULL }, NULL },
                { "\"a\" b", -EINVAL, true, { NULL }, NULL },
                { "\"a 'b\"", -EINVAL, true, { NULL }, NULL },
                { "\"\"\"\"", 0, true, { "\"" }, "\"" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const ArgsCase *c = &cases[i];
                ConfigStrv args = {};
                char msg[256] = "", *joined = NULL;
                bool v2 = !c->v2;
                size_t n = 0;
                int r;

                r = submit_args_parse(c->in, &args, &v2, msg, sizeof(msg));
                GLEAN_TEST_CHECK(r == c->r, "args row %zu '%s': %d, want %d (%s)", i, c->in, r, c->r, msg);
                if (r < 0) {
                        GLEAN_TEST_CHECK(msg[0], "args row %zu: error without a reason", i);
                        continue;
                }
                GLEAN_TEST_CHECK(v2 == c->v2, "args row %zu '%s': new syntax %d", i, c->in, v2);
                while (n < MAX_WORDS && c->words[n])
                        n++;
                GLEAN_TEST_CHECK(args.n == n, "args row %zu '%s': %zu words, want %zu", i, c->in, args.n, n);
                for (size_t k = 0; k < n && k < args.n; k++)
                        GLEAN_TEST_CHECK(strcmp(args.v[k], c->words[k]) == 0, "args row %zu word %zu: '%s', want '%s'",
                                         i, k, args.v[k], c->words[k]);
                r = v2 ? config_args_join_v2(&args, &joined) : config_args_join_v1(&args, &joined);
                GLEAN_TEST_CHECK(r == 0 && strcmp(joined, c->joined) == 0, "args row %zu: joined '%s', want '%s'", i,
                                 joined, c->joined);
                /* the new syntax reads back what it wrote */
                if (v2) {
                        ConfigStrv again = {};
                        char *quoted;
                        bool v2b;

                        char *q;

                        /* "..." around it, its double quotes doubled */
                        quoted = q = malloc(2 * strlen(joined) + 3);
                        CU_ASSERT_FATAL(quoted != NULL);
                        *q++ = '"';
                        for (const char *p = joined; *p; p++) {
                                if (*p == '"')
                                        *q++ = '"';
                                *q++ = *p;
                        }
                        *q++ = '"';
                        *q = '\0';
                        r = submit_args_parse(quoted, &again, &v2b, msg, sizeof(msg));
                        GLEAN_TEST_CHECK(r == 0 && again.n == args.n, "args row %zu: '%s' does not read back", i, quoted);
                        for (size_t k = 0; r == 0 && k < args.n && k < again.n; k++)
                                GLEAN_TEST_CHECK(strcmp(args.v[k], again.v[k]) == 0, "args row %zu: round trip", i);
                        config_strv_done(&again);
                        free(quoted);
                }
                free(joined);
                config_strv_done(&args);
        }
}

/* ---- environment ---- */

typedef struct EnvCase {
        const char *in;
        int r;
        const char *joined; /* Environment; NULL: error */
} EnvCase;

static void test_env(void) {
        static const EnvCase cases[] = {
                { "", 0, "" },
                { "A=1", 0, "A=1" },
                { "A=1;B=2", 0, "A=1 B=2" },
                { "A=1;;B=2;", 0, "A=1 B=2" },
                { " A=1; B=2", 0, "A=1 B=2" },
                { "A=x y", 0, "A=x' 'y" },
                { "A=1;A=2", 0, "A=2" },
                { "A=1;B=2;A=3", 0, "A=3 B=2" },
                { "A==", 0, "A==" },
                { "PATH=/bin:/usr/bin", 0, "PATH=/bin:/usr/bin" },
                { "A", -EINVAL, NULL },
                { "=1", -EINVAL, NULL },
                { "A=1;B", -EINVAL, NULL },
                { "\"A=1 B=2\"", 0, "A=1 B=2" },
                { "\"A='x y' B=''\"", 0, "A=x' 'y B=" },
                { "\"A=it''s\"", 0, "A=its" },
                { "\"A='it''s'\"", 0, "A=it''''s" },
                { "\"A=\"\"q\"\"\"", 0, "A=\"q\"" },
                { "\"\"", 0, "" },
                { "\"A\"", -EINVAL, NULL },
                { "\"A=1", -EINVAL, NULL },
                { "\"A='1\"", -EINVAL, NULL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const EnvCase *c = &cases[i];
                ConfigStrv env = {};
                char msg[256] = "", *joined = NULL;
                int r;

                r = submit_env_parse(c->in, &env, msg, sizeof(msg));
                GLEAN_TEST_CHECK(r == c->r, "env row %zu '%s': %d, want %d (%s)", i, c->in, r, c->r, msg);
                if (r < 0)
                        continue;
                r = config_args_join_v2(&env, &joined);
                GLEAN_TEST_CHECK(r == 0 && strcmp(joined, c->joined) == 0, "env row %zu '%s': '%s', want '%s'", i,
                                 c->in, joined, c->joined);
                free(joined);
                config_strv_done(&env);
        }
}

static void test_env_import(void) {
        ConfigStrv env = {};
        char msg[64];
        bool mine = false, theirs = false;

        setenv("GLEAN_IMPORT_A", "a", 1);
        setenv("GLEAN_IMPORT_B", "b", 1);
        CU_ASSERT_FATAL(submit_env_parse("GLEAN_IMPORT_A=mine", &env, msg, sizeof(msg)) == 0);
        CU_ASSERT_FATAL(submit_env_import(&env) == 0);
        for (size_t i = 0; i < env.n; i++) {
                CU_ASSERT(strcmp(env.v[i], "GLEAN_IMPORT_A=a") != 0);
                mine |= strcmp(env.v[i], "GLEAN_IMPORT_A=mine") == 0;
                theirs |= strcmp(env.v[i], "GLEAN_IMPORT_B=b") == 0;
        }
        CU_ASSERT(mine && theirs);
        config_strv_done(&env);
}

/* ---- sizes ---- */

typedef struct SizeCase {
        const char *in;
        int64_t base;
        int r;
        int64_t want;
} SizeCase;

#define MB (INT64_C(1) << 20)
#define KB (INT64_C(1) << 10)

static void test_sizes(void) {
        static const SizeCase cases[] = {
                { "1024", MB, 1, 1024 },    { "0", MB, 1, 0 },          { " 7 ", KB, 1, 7 },
                { "2G", MB, 1, 2048 },      { "2g", MB, 1, 2048 },      { "2GB", MB, 1, 2048 },
                { "2gb", MB, 1, 2048 },     { "2 G", MB, 1, 2048 },     { "2Gb ", MB, 1, 2048 },
                { "1T", MB, 1, 1048576 },   { "1t", KB, 1, 1073741824 }, { "512K", MB, 1, 1 },
                { "1K", KB, 1, 1 },         { "1500K", KB, 1, 1500 },   { "1M", KB, 1, 1024 },
                { "1.5G", MB, 1, 1536 },    { ".5G", MB, 1, 512 },      { "1.", MB, 1, 1 },
                { "0.1", MB, 1, 1 },        { "1.5", KB, 1, 2 },        { "+3", MB, 1, 3 },
                { "-0", MB, 1, 0 },         { "3 MB", KB, 1, 3072 },    { "100m", MB, 1, 100 },
                { "-1", MB, -EINVAL, 0 },   { "-2G", KB, -EINVAL, 0 },  { "99999999999T", KB, -ERANGE, 0 },
                { "9223372036854775807", MB, -ERANGE, 0 },
                { "", MB, 0, 0 },           { ".", MB, 0, 0 },          { "G", MB, 0, 0 },
                { "2X", MB, 0, 0 },         { "2GiB", MB, 0, 0 },       { "2 G B", MB, 0, 0 },
                { "2*1024", MB, 0, 0 },     { "1e3", MB, 0, 0 },        { "0x10", MB, 0, 0 },
                { "Memory", MB, 0, 0 },     { "undefined", MB, 0, 0 },  { "- 1", MB, 0, 0 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int64_t v = -12345;
                int r = submit_parse_size(cases[i].in, cases[i].base, &v);

                GLEAN_TEST_CHECK(r == cases[i].r, "size row %zu '%s': %d, want %d", i, cases[i].in, r, cases[i].r);
                if (r > 0)
                        GLEAN_TEST_CHECK(v == cases[i].want, "size row %zu '%s': %lld, want %lld", i, cases[i].in,
                                         (long long) v, (long long) cases[i].want);
                else
                        GLEAN_TEST_CHECK(v == -12345, "size row %zu '%s': output set", i, cases[i].in);
        }
}

/* ---- signals, booleans, numbers ---- */

static void test_signals(void) {
        static const struct {
                const char *in, *want;
        } cases[] = {
                { "SIGTERM", "SIGTERM" }, { "TERM", "SIGTERM" }, { "term", "SIGTERM" }, { "sigkill", "SIGKILL" },
                { "9", "SIGKILL" },       { "15", "SIGTERM" },   { "SIGUSR1", "SIGUSR1" }, { "2", "SIGINT" },
                { "SIGHUP", "SIGHUP" },   { "cont", "SIGCONT" }, { "SIGFOO", NULL },     { "0", NULL },
                { "99", NULL },           { "9x", NULL },        { "", NULL },           { "SIG", NULL },
                { "-9", NULL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *got = submit_signal_name(cases[i].in);

                GLEAN_TEST_CHECK(cases[i].want ? got && strcmp(got, cases[i].want) == 0 : !got,
                                 "signal row %zu '%s': %s, want %s", i, cases[i].in, got ? got : "NULL",
                                 cases[i].want ? cases[i].want : "NULL");
        }
}

static void test_bools(void) {
        static const struct {
                const char *in;
                int r;
                bool want;
        } cases[] = {
                { "true", 0, true },   { "TRUE", 0, true },    { "True", 0, true }, { "yes", 0, true },
                { "t", 0, true },      { "Y", 0, true },       { "1", 0, true },    { "2", 0, true },
                { "false", 0, false }, { "FALSE", 0, false },  { "no", 0, false },  { "f", 0, false },
                { "N", 0, false },     { "0", 0, false },      { "0.0", 0, false }, { "1 == 1", 0, true },
                { "!true", 0, false }, { "maybe", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "\"true\"", -EINVAL, 0 },
                { "(", -EINVAL, 0 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                bool v = !cases[i].want;
                int r = submit_parse_bool(cases[i].in, &v);

                GLEAN_TEST_CHECK(r == cases[i].r && (r < 0 || v == cases[i].want), "bool row %zu '%s': %d %d", i,
                                 cases[i].in, r, v);
        }
}

static void test_ints(void) {
        static const struct {
                const char *in;
                int r;
                int64_t want;
        } cases[] = {
                { "0", 0, 0 },   { "42", 0, 42 },         { "-7", 0, -7 },          { "2 * 3 + 1", 0, 7 },
                { "4.0", 0, 4 }, { "10 / 4", 0, 2 },      { "1.5", -EINVAL, 0 },    { "x", -EINVAL, 0 },
                { "", -EINVAL, 0 }, { "\"3\"", -EINVAL, 0 }, { "1 +", -EINVAL, 0 }, { "true", -EINVAL, 0 },
                { "1e30", -EINVAL, 0 }, { "9223372036854775807", 0, INT64_MAX },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int64_t v = -1;
                int r = submit_eval_int(cases[i].in, &v);

                GLEAN_TEST_CHECK(r == cases[i].r && (r < 0 || v == cases[i].want), "int row %zu '%s': %d %lld", i,
                                 cases[i].in, r, (long long) v);
        }
}

/* ---- queue: slices and items ---- */

static void test_slices(void) {
        static const struct {
                SubmitSlice slice;
                size_t n;
                const char *want; /* '1' for each selected item */
        } cases[] = {
                { { .set = false }, 4, "1111" },
                { { .set = true }, 4, "1111" },
                { { .set = true, .has_start = true, .start = 1 }, 4, "0111" },
                { { .set = true, .has_end = true, .end = 2 }, 4, "1100" },
                { { .set = true, .has_start = true, .start = -1 }, 4, "0001" },
                { { .set = true, .has_end = true, .end = -1 }, 4, "1110" },
                { { .set = true, .has_step = true, .step = 2 }, 5, "10101" },
                { { .set = true, .has_start = true, .start = 1, .has_step = true, .step = 2 }, 5, "01010" },
                { { .set = true, .has_start = true, .start = 3, .has_end = true, .end = 1 }, 4, "0000" },
                { { .set = true, .has_start = true, .start = -10 }, 3, "111" },
                { { .set = true, .has_start = true, .start = 10 }, 3, "000" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char got[16] = "";

                for (size_t k = 0; k < cases[i].n; k++)
                        got[k] = submit_slice_selected(&cases[i].slice, k, cases[i].n) ? '1' : '0';
                GLEAN_TEST_CHECK(strcmp(got, cases[i].want) == 0, "slice row %zu: %s, want %s", i, got, cases[i].want);
        }
}

static void test_item_split(void) {
        static const struct {
                const char *vars[4];
                const char *item;
                const char *want[4];
        } cases[] = {
                { { "a" }, "x y, z", { "x y, z" } },
                { { "a", "b" }, "x y z", { "x", "y z" } },
                { { "a", "b" }, "x, y, z", { "x", "y, z" } },
                { { "a", "b" }, "  x\ty", { "x", "y" } },
                { { "a", "b", "c" }, "1,2", { "1", "2", "" } },
                { { "a", "b", "c" }, "1", { "1", "", "" } },
                { { "a", "b" }, "", { "", "" } },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                SubmitQueue q = { .vars = (char **) cases[i].vars };
                char **values = NULL;

                while (q.n_vars < 4 && cases[i].vars[q.n_vars])
                        q.n_vars++;
                CU_ASSERT_FATAL(submit_item_split(&q, cases[i].item, &values) == 0);
                for (size_t k = 0; k < q.n_vars; k++)
                        GLEAN_TEST_CHECK(values[k] && strcmp(values[k], cases[i].want[k]) == 0,
                                         "split row %zu var %zu: '%s', want '%s'", i, k, values[k], cases[i].want[k]);
                CU_ASSERT(values[q.n_vars] == NULL);
                config_strv_free(values);
        }
}

static CU_TestInfo value_tests[] = {
        { "args", test_args },
        { "env", test_env },
        { "env-import", test_env_import },
        { "sizes", test_sizes },
        { "signals", test_signals },
        { "bools", test_bools },
        { "ints", test_ints },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo queue_tests[] = {
        { "slices", test_slices },
        { "item-split", test_item_split },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "values", NULL, NULL, NULL, NULL, value_tests },
        { "queue", NULL, NULL, NULL, NULL, queue_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cli.c — the glean command as a user runs it: a subprocess, its
 * stdout, stderr and exit status. The binary is $GLEAN (make check sets it
 * to the flavour being tested), else build/bin/glean.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-util.h"

#define MAX_ARGS 8

typedef struct CliCase {
        const char *args[MAX_ARGS]; /* after "glean" */
        int status;
        const char *out;        /* exact stdout */
        const char *err_prefix; /* stderr starts with this; NULL: stderr empty */
} CliCase;

static const char *glean_path(void) {
        const char *p = getenv("GLEAN");

        return p && *p ? p : "build/bin/glean";
}

/* "glean 'eval' '1+2'": how a failure names the command. */
static void describe(char *const argv[], char *buf, size_t size) {
        size_t n = (size_t) snprintf(buf, size, "glean");

        for (size_t i = 1; argv[i] && n < size; i++)
                n += (size_t) snprintf(buf + n, size - n, " '%s'", argv[i]);
}

/* s with newlines and tabs written as \n and \t, for one-line messages. */
static const char *esc(const char *s, char *buf, size_t size) {
        size_t n = 0;

        for (; *s && n + 3 < size; s++) {
                if (*s == '\n' || *s == '\t') {
                        buf[n++] = '\\';
                        buf[n++] = *s == '\n' ? 'n' : 't';
                } else
                        buf[n++] = *s;
        }
        buf[n] = '\0';
        return buf;
}

static void check_case(const CliCase *c) {
        char *argv[MAX_ARGS + 2] = { (char *) glean_path() };
        char what[512], out[256], err[512], want[256];
        GleanTestRun run;
        size_t n = 1;
        int r;

        for (const char *const *a = c->args; *a && n <= MAX_ARGS; a++)
                argv[n++] = (char *) *a;
        describe(argv, what, sizeof(what));

        r = glean_test_run(argv, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: could not run: %s", what, strerror(-r));

        GLEAN_TEST_CHECK(run.status == c->status, "%s: exit status %d, want %d (stderr \"%s\")",
                         what, run.status, c->status, esc(run.err, err, sizeof(err)));
        GLEAN_TEST_CHECK(strcmp(run.out, c->out) == 0, "%s: stdout \"%s\", want \"%s\"",
                         what, esc(run.out, out, sizeof(out)), esc(c->out, want, sizeof(want)));
        if (c->err_prefix)
                GLEAN_TEST_CHECK(strncmp(run.err, c->err_prefix, strlen(c->err_prefix)) == 0,
                                 "%s: stderr \"%s\", want it to start with \"%s\"",
                                 what, esc(run.err, err, sizeof(err)), c->err_prefix);
        else
                GLEAN_TEST_CHECK(run.err_len == 0, "%s: stderr \"%s\", want nothing",
                                 what, esc(run.err, err, sizeof(err)));

        glean_test_run_done(&run);
}

static void check_cases(const CliCase *cases, size_t n) {
        for (size_t i = 0; i < n; i++)
                check_case(&cases[i]);
}

#define CHECK_CASES(cases) check_cases(cases, sizeof(cases) / sizeof((cases)[0]))

static void test_eval_values(void) {
        static const CliCase cases[] = {
                { { "eval", "1+2" }, 0, "3\n", NULL },
                { { "eval", "--", "-1" }, 0, "-1\n", NULL },
                { { "eval", "\"x\"" }, 0, "\"x\"\n", NULL },
                { { "eval", "true && false" }, 0, "false\n", NULL },
                { { "eval", "NoSuchAttribute" }, 0, "undefined\n", NULL },
                { { "eval", "--strict", "1+2" }, 0, "3\n", NULL },
                { { "eval", "--strict", "--", "2*3" }, 0, "6\n", NULL },
        };
        CHECK_CASES(cases);
}

static void test_eval_ads(void) {
        static const CliCase cases[] = {
                { { "eval", "--my", "[a=1]", "a+1" }, 0, "2\n", NULL },
                { { "eval", "--my=[a = 1; b = a * 10]", "MY.b" }, 0, "10\n", NULL },
                { { "eval", "--target", "[b=2]", "TARGET.b" }, 0, "2\n", NULL },
                { { "eval", "--my", "[a=1]", "--target", "[a=5]", "TARGET.a - MY.a" }, 0, "4\n", NULL },
                { { "eval", "--strict", "--my", "[a=1]", "a" }, 0, "1\n", NULL },
                /* Old semantics look an unqualified name up in TARGET when MY
                 * lacks it; strict ones do not: --strict reaches the library. */
                { { "eval", "--target", "[b=2]", "b" }, 0, "2\n", NULL },
                { { "eval", "--strict", "--target", "[b=2]", "b" }, 0, "undefined\n", NULL },
        };
        CHECK_CASES(cases);
}

static void test_eval_parse_errors(void) {
        static const CliCase cases[] = {
                { { "eval", "1+" }, 2, "", "glean eval: EXPR: line 1, column " },
                { { "eval", "(1" }, 2, "", "glean eval: EXPR: line 1, column " },
                { { "eval", "--my", "[a=", "1" }, 2, "", "glean eval: --my: line 1, column " },
                { { "eval", "--target", "[b=2", "1" }, 2, "", "glean eval: --target: line 1, column " },
                { { "eval", "--my", "not an ad", "1" }, 2, "", "glean eval: --my: line 1, column " },
        };
        CHECK_CASES(cases);
}

static void test_usage_errors(void) {
        static const CliCase cases[] = {
                { { NULL }, 2, "", "usage: glean" },
                { { "eval" }, 2, "", "glean eval: missing EXPR" },
                { { "eval", "1", "2" }, 2, "", "glean eval: one EXPR only" },
                { { "eval", "--bogus", "1" }, 2, "", "glean eval: unknown option '--bogus'" },
                { { "eval", "-1" }, 2, "", "glean eval: unknown option '-1'" },
                { { "eval", "1", "--my" }, 2, "", "glean eval: one EXPR only" },
                { { "eval", "--my" }, 2, "", "glean eval: option '--my' needs an argument" },
                { { "eval", "--strict=yes", "1" }, 2, "", "glean eval: option '--strict=yes' takes no argument" },
                { { "eval", "--my", "[]", "--my", "[]", "1" }, 2, "", "glean eval: --my given twice" },
                { { "frobnicate" }, 2, "", "glean: unknown verb 'frobnicate'" },
                { { "--frobnicate" }, 2, "", "glean: unknown option '--frobnicate'" },
        };
        CHECK_CASES(cases);
}

static void test_help_version(void) {
        static const char *const help_args[][2] = {
                { "--help" }, { "eval", "--help" }, { "eval", "-h" },
        };
        char *argv[4] = { (char *) glean_path() };
        GleanTestRun run;

        argv[1] = "--version";
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        CU_ASSERT_EQUAL(run.status, 0);
        CU_ASSERT_NSTRING_EQUAL(run.out, "glean ", 6);
        glean_test_run_done(&run);

        for (size_t i = 0; i < sizeof(help_args) / sizeof(help_args[0]); i++) {
                argv[1] = (char *) help_args[i][0];
                argv[2] = (char *) help_args[i][1];
                CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
                CU_ASSERT_EQUAL(run.status, 0);
                CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "usage: glean"));
                CU_ASSERT_EQUAL(run.err_len, 0);
                glean_test_run_done(&run);
        }
}

/* The example ads of examples/ match each other, as scripts/demo.sh shows. */
static void test_example_ads_match(void) {
        char *machine = NULL, *job = NULL;
        char *argv[8] = { (char *) glean_path(), "eval" };
        GleanTestRun run;

        CU_ASSERT_FATAL(glean_test_read_file("examples/machine.ad", &machine, NULL) == 0);
        CU_ASSERT_FATAL(glean_test_read_file("examples/job.ad", &job, NULL) == 0);

        argv[2] = "--my";
        argv[3] = job;
        argv[4] = "--target";
        argv[5] = machine;
        argv[6] = "MY.Requirements && TARGET.Requirements";
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        GLEAN_TEST_CHECK(run.status == 0 && strcmp(run.out, "true\n") == 0,
                         "job and machine of examples/ do not match: exit status %d, "
                         "stdout \"%s\", stderr \"%s\"", run.status, run.out, run.err);
        glean_test_run_done(&run);

        free(machine);
        free(job);
}

/* glean policy-replay checks the whole timeline first: a malformed line
 * near its end is reported as FILE:LINE with nothing on stdout, though the
 * lines before it would have printed transitions; fixed, it runs. */
static void test_policy_replay_checked_first(void) {
        static const char head[] = "---\n0 expect Unclaimed/Idle\n1m claim c1\n1m activate c1\n"
                                   "2m expect Claimed/Busy\n3m vacate fast\n3m expect Preempting/Killing\n"
                                   "4m job-exit\n";
        char path[] = "/tmp/glean-test-cli-replay-XXXXXX";
        int fd = mkstemp(path);
        CU_ASSERT_FATAL(fd >= 0);
        FILE *f = fdopen(fd, "w");
        CU_ASSERT_FATAL(f != NULL);
        fprintf(f, "%s5m expect-new-transition 25 x\n", head);
        fclose(f);
        char *argv[] = { (char *) glean_path(), "policy-replay", path, NULL };
        char want[128], err[512];
        GleanTestRun run;
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        snprintf(want, sizeof want, "glean policy-replay: %s:9: expect-new-transition: expected numbers, not 'x'\n",
                 path);
        GLEAN_TEST_CHECK(run.status == 2 && run.out_len == 0 && strcmp(run.err, want) == 0,
                         "a late malformed line: status %d, stdout \"%s\", stderr \"%s\"", run.status,
                         esc(run.out, err, sizeof err), run.err);
        glean_test_run_done(&run);

        f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fprintf(f, "%s5m expect-new-transition 25 1\n5m expect-no-transition\n", head);
        fclose(f);
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        GLEAN_TEST_CHECK(run.status == 0 && strstr(run.out, "[25] the job was killed") &&
                                 strstr(run.out, "all 5 expectations held") && run.err_len == 0,
                         "fixed: status %d, stdout \"%s\", stderr \"%s\"", run.status, esc(run.out, err, sizeof err),
                         run.err);
        glean_test_run_done(&run);
        unlink(path);
}

static CU_TestInfo eval_tests[] = {
        { "values", test_eval_values },
        { "ads", test_eval_ads },
        { "parse-errors", test_eval_parse_errors },
        { "example-ads-match", test_example_ads_match },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo main_tests[] = {
        { "usage-errors", test_usage_errors },
        { "help-version", test_help_version },
        { "policy-replay-checked-first", test_policy_replay_checked_first },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cli", NULL, NULL, NULL, NULL, main_tests },
        { "eval", NULL, NULL, NULL, NULL, eval_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit-files.c — whole submit description files of
 * tests/config/submit/: NAME.sub gives exactly the ads of NAME.ads (old
 * format, a blank line after each ad; @DIR@ and @ARCH@ as in
 * submit-test.h); and `glean submit` as a user runs it ($GLEAN, else
 * build/bin/glean), with GLEAN_CONFIG pointing at the test configuration.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "submit-internal.h"
#include "submit-test.h"

/* ---- the library on whole files ---- */

static char *ads_text(ClassAd **ads, size_t n) {
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);

        CU_ASSERT_FATAL(f != NULL);
        for (size_t i = 0; i < n; i++) {
                char *ad = classad_unparse_old(ads[i]);

                CU_ASSERT_FATAL(ad != NULL);
                fprintf(f, "%s\n", ad);
                free(ad);
        }
        fclose(f);
        return text;
}

static void check_golden(const char *name) {
        char sub_path[256], ads_path[256], *sub = NULL, *want_raw = NULL, *want, *got;
        ConfigError err = {};
        ClassAd **ads = NULL;
        size_t n = 0;
        int r;

        snprintf(sub_path, sizeof(sub_path), SUBMIT_TEST_DATA "/%s.sub", name);
        snprintf(ads_path, sizeof(ads_path), SUBMIT_TEST_DATA "/%s.ads", name);
        CU_ASSERT_FATAL(glean_test_read_file(sub_path, &sub, NULL) == 0);
        CU_ASSERT_FATAL(glean_test_read_file(ads_path, &want_raw, NULL) == 0);

        r = submit_test_parse(sub, NULL, true, &ads, &n, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %s:%d: %s", sub_path, err.file, err.line, err.msg);
        got = ads_text(ads, n);
        want = submit_test_subst(want_raw);
        if (strcmp(got, want) != 0) {
                char actual[256];
                FILE *f;

                /* The whole text, for a diff (too long for a message). */
                snprintf(actual, sizeof(actual), "/tmp/glean-test-%s.ads", name);
                f = fopen(actual, "w");
                if (f) {
                        fputs(got, f);
                        fclose(f);
                }
                GLEAN_TEST_CHECK(false, "%s: the ads differ from %s; see %s", sub_path, ads_path, actual);
        }

        free(got);
        free(want);
        free(want_raw);
        free(sub);
        config_submit_free(ads, n);
}

static void test_example(void) {
        check_golden("example");
}

static void test_old_syntax(void) {
        check_golden("old-syntax");
}

/* ---- the command ---- */

#define MAX_ARGS 8

typedef struct CliCase {
        const char *args[MAX_ARGS]; /* after "glean submit" */
        int status;
        const char *out;        /* a part of stdout; NULL: stdout empty */
        const char *err_prefix; /* stderr starts with this; NULL: stderr empty */
} CliCase;

static const char *glean_path(void) {
        const char *p = getenv("GLEAN");

        return p && *p ? p : "build/bin/glean";
}

static void check_cli_case(const CliCase *c, size_t row) {
        char *argv[MAX_ARGS + 3] = { (char *) glean_path(), "submit" };
        GleanTestRun run;
        size_t n = 2;
        int r;

        for (const char *const *a = c->args; *a && n < MAX_ARGS + 2; a++)
                argv[n++] = (char *) *a;
        r = glean_test_run(argv, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "cli row %zu: could not run %s", row, argv[0]);
        GLEAN_TEST_CHECK(run.status == c->status, "cli row %zu: exit status %d, want %d (stderr '%s')", row, run.status,
                         c->status, run.err);
        if (c->out)
                GLEAN_TEST_CHECK(strstr(run.out, c->out) != NULL, "cli row %zu: stdout '%s', want '%s' in it", row,
                                 run.out, c->out);
        else
                GLEAN_TEST_CHECK(run.out_len == 0, "cli row %zu: stdout '%s', want nothing", row, run.out);
        if (c->err_prefix)
                GLEAN_TEST_CHECK(strncmp(run.err, c->err_prefix, strlen(c->err_prefix)) == 0,
                                 "cli row %zu: stderr '%s', want it to start with '%s'", row, run.err, c->err_prefix);
        else
                GLEAN_TEST_CHECK(run.err_len == 0, "cli row %zu: stderr '%s', want nothing", row, run.err);
        glean_test_run_done(&run);
}

#define D SUBMIT_TEST_DATA "/"

static void test_cli(void) {
        static const CliCase cases[] = {
                { { "--dry-run", D "old-syntax.sub" }, 0, "\nClusterId = 1\nProcId = 1\n", NULL },
                { { "--dry-run", "--cluster", "9", D "old-syntax.sub" }, 0, "ClusterId = 9\nProcId = 2\n", NULL },
                { { "--dry-run", "--cluster=12", D "old-syntax.sub" }, 0, "Out = \"hello.2.out\"\n", NULL },
                { { "--dry-run", "--bracketed", D "old-syntax.sub" }, 0, "[ MyType = \"Job\"; ", NULL },
                /* JOB_DEFAULT_REQUESTMEMORY of $GLEAN_CONFIG */
                { { "--dry-run", D "old-syntax.sub" }, 0, "RequestMemory = 256\n", NULL },
                { { "--dry-run", D "bad.sub" }, 2, NULL,
                  "glean submit: " D "bad.sub:3: requirements: cannot parse 'Memory >='" },
                /* relative to the current directory, not to the file's */
                { { "--dry-run", D "example.sub" }, 2, NULL, "glean submit: " D "example.sub:19: queue from 'inputs.txt': No such file" },
                { { "--dry-run", "/no/such/file.sub" }, 2, NULL,
                  "glean submit: /no/such/file.sub: No such file or directory\n" },
                { { "--dry-run", "-" }, 2, NULL, "glean submit: <stdin>: no queue statement" },
                /* without --dry-run: queued, here with no central manager to take them */
                { { D "old-syntax.sub" }, 1, NULL, "glean submit: cannot reach the central manager:\n" },
                { { "--dry-run" }, 2, NULL, "glean submit: missing FILE\nusage: glean submit" },
                { { "--dry-run", "a", "b" }, 2, NULL, "glean submit: one FILE only, got also 'b'" },
                { { "--dry-run", "--cluster", "0", "a" }, 2, NULL, "glean submit: --cluster: '0' is not a cluster id" },
                { { "--dry-run", "--cluster", "x", "a" }, 2, NULL, "glean submit: --cluster: 'x' is not a cluster id" },
                { { "--dry-run", "--cluster" }, 2, NULL, "glean submit: option '--cluster' needs an argument" },
                { { "--dry-run", "--bogus", "a" }, 2, NULL, "glean submit: unknown option '--bogus'" },
                { { "--dry-run=yes", "a" }, 2, NULL, "glean submit: option '--dry-run=yes' takes no argument" },
                { { "-x", "a" }, 2, NULL, "glean submit: unknown option '-x'" },
                { { "--help" }, 0, "usage: glean submit [--socket PATH] FILE\n", NULL },
                { { "-h" }, 0, "       glean submit --dry-run [--cluster N]", NULL },
        };

        setenv("GLEAN_CONFIG", D "glean.conf", 1);
        setenv("GLEAN_NEGOTIATOR_SOCKET", "/nonexistent/negotiator.sock", 1);
        setenv("GLEAN_AGENT_SOCKET", "/nonexistent/agent.sock", 1);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check_cli_case(&cases[i], i);
}

/* Relative names are relative to the current directory, as in
 * condor_submit: run from the directory of the data. */
static void test_cli_directory(void) {
        char glean[4096], *argv[] = { "sh", "-c", "cd " SUBMIT_TEST_DATA " && exec \"$0\" submit --dry-run example.sub",
                                      glean, NULL };
        GleanTestRun run;
        char conf[4200];

        CU_ASSERT_FATAL(realpath(glean_path(), glean) != NULL);
        snprintf(conf, sizeof(conf), "%s/glean.conf", submit_test_data_dir());
        setenv("GLEAN_CONFIG", conf, 1);
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        GLEAN_TEST_CHECK(run.status == 0 && run.err_len == 0, "example.sub: exit status %d, stderr '%s'", run.status,
                         run.err);
        CU_ASSERT(strstr(run.out, "\nProcId = 1\n") != NULL);
        CU_ASSERT(strstr(run.out, "Arguments = \"--input b.dat --scale 1.0 --label run' '1\"\n") != NULL);
        CU_ASSERT(strstr(run.out, "/tests/config/submit/job.sh\"\n") != NULL);
        glean_test_run_done(&run);
}

/* The old format: one ad per job, a blank line after each; bracketed: one per line. */
static void test_cli_layout(void) {
        char *argv[] = { (char *) glean_path(), "submit", "--dry-run", D "old-syntax.sub", NULL, NULL };
        GleanTestRun run;
        size_t blank = 0, lines = 0;

        setenv("GLEAN_CONFIG", D "glean.conf", 1);
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        CU_ASSERT_EQUAL(run.status, 0);
        for (const char *p = run.out; (p = strstr(p, "\n\n")); p += 2)
                blank++;
        GLEAN_TEST_CHECK(blank == 3 && run.out_len > 2 && strcmp(run.out + run.out_len - 2, "\n\n") == 0,
                         "old format: %zu blank lines, want 3, the last at the end", blank);
        glean_test_run_done(&run);

        argv[3] = "--bracketed";
        argv[4] = D "old-syntax.sub";
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        CU_ASSERT_EQUAL(run.status, 0);
        for (const char *p = run.out; *p; p++)
                lines += *p == '\n';
        GLEAN_TEST_CHECK(lines == 3 && !strstr(run.out, "\n\n"), "bracketed: %zu lines, want 3", lines);
        glean_test_run_done(&run);
}

static CU_TestInfo file_tests[] = {
        { "example", test_example },
        { "old-syntax", test_old_syntax },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo cli_tests[] = {
        { "cases", test_cli },
        { "directory", test_cli_directory },
        { "layout", test_cli_layout },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "files", NULL, NULL, NULL, NULL, file_tests },
        { "cli", NULL, NULL, NULL, NULL, cli_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        submit_warning_stream = tmpfile();
        return glean_test_main(argc, argv, suites);
}

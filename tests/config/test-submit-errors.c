/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit-errors.c — submit descriptions that are rejected: every
 * error, with the line it names and the reason, and that nothing is
 * produced; warnings; errors that come from the configuration; files.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "submit-internal.h"
#include "submit-test.h"

typedef struct ErrorCase {
        const char *text;
        int line;        /* the line the error names (0: none) */
        const char *msg; /* a part of the reason */
} ErrorCase;

static void check_error_cases(const ErrorCase *cases, size_t n_cases, const char *table) {
        for (size_t i = 0; i < n_cases; i++) {
                const ErrorCase *c = &cases[i];
                ConfigError err = {};
                ClassAd **ads = (ClassAd **) &err; /* must stay untouched */
                size_t n = 12345;
                char *text = submit_test_subst(c->text);
                int r;

                r = submit_test_parse(text, NULL, true, &ads, &n, &err);
                free(text);
                GLEAN_TEST_CHECK(r < 0, "%s row %zu: parsed, want an error about '%s'", table, i, c->msg);
                if (r >= 0) {
                        config_submit_free(ads, n);
                        continue;
                }
                GLEAN_TEST_CHECK(ads == (ClassAd **) &err && n == 12345, "%s row %zu: outputs set on error", table, i);
                GLEAN_TEST_CHECK(strcmp(err.file, "test.sub") == 0 && err.line == c->line,
                                 "%s row %zu: error at %s:%d, want test.sub:%d (%s)", table, i, err.file, err.line,
                                 c->line, err.msg);
                GLEAN_TEST_CHECK(strstr(err.msg, c->msg) != NULL, "%s row %zu: error '%s', want it to contain '%s'",
                                 table, i, err.msg, c->msg);
        }
}

#define CHECK_ERRORS(cases) check_error_cases(cases, sizeof(cases) / sizeof((cases)[0]), #cases)

/* Lines that are not statements. */
static void test_syntax(void) {
        static const ErrorCase cases[] = {
                { "executable /bin/sh\nqueue", 1, "expected 'name = value' or a queue statement" },
                { "executable = /bin/sh\n\n  = 5\nqueue", 3, "missing name before '='" },
                { "executable = /bin/sh\nfoo bar = 1\nqueue", 2, "'foo bar' is not a variable name" },
                { "executable = /bin/sh\nfoo-bar = 1\nqueue", 2, "'foo-bar' is not a variable name" },
                { "executable = /bin/sh\n+ = 1\nqueue", 2, "is not an attribute name" },
                { "executable = /bin/sh\n+1x = 1\nqueue", 2, "'+1x' is not an attribute name" },
                { "executable = /bin/sh\nMY.a.b = 1\nqueue", 2, "'MY.a.b' is not an attribute name" },
                { "executable = /bin/sh\n", 0, "no queue statement" },
                { "# only a comment\n", 0, "no queue statement" },
                { "", 0, "no queue statement" },
                { "executable = /bin/sh\nif true\nqueue", 2, "expected 'name = value'" },
        };
        CHECK_ERRORS(cases);
}

/* queue statements that do not parse. */
static void test_queue(void) {
        static const ErrorCase cases[] = {
                { "executable = /bin/sh\nqueue abc", 2, "'abc' is not a number of jobs" },
                { "executable = /bin/sh\nqueue 1.5", 2, "'1.5' is not a number of jobs" },
                { "executable = /bin/sh\nqueue -1", 2, "negative number of jobs" },
                { "executable = /bin/sh\nqueue 3 4", 2, "is not a number of jobs" },
                { "executable = /bin/sh\nqueue \"x\" in (a)", 2, "is not a number of jobs" },
                { "executable = /bin/sh\nqueue X in [1:2 (a)", 2, "bad slice" },
                { "executable = /bin/sh\nqueue X in [::0] (a)", 2, "bad slice" },
                { "executable = /bin/sh\nqueue X in [a:b] (a)", 2, "bad slice" },
                { "executable = /bin/sh\nqueue X in [1] (a)", 2, "bad slice" },
                { "executable = /bin/sh\nqueue X matching *.c", 2, "matching is not supported" },
                { "executable = /bin/sh\nqueue from missing.txt", 2, "queue from 'missing.txt': No such file" },
                { "executable = /bin/sh\nqueue from /", 2, "not a regular file" },
                { "executable = /bin/sh\nqueue from", 2, "is not a number of jobs" },
                { "executable = /bin/sh\nqueue X from ", 2, "'X from' is not a number of jobs" },
                { "executable = /bin/sh\nqueue X from []", 2, "bad slice" },
                { "executable = /bin/sh\nqueue X from [1:2]", 2, "queue from: missing file name" },
                { "executable = /bin/sh\nqueue X from (", 2, "no ')' closes the list of items" },
                { "executable = /bin/sh\nqueue X in (a,\n b\n# c\n", 2, "no ')' closes the list of items" },
                { "executable = /bin/sh\nqueue X in (\na\n) extra\n", 4, "text after the ')'" },
                { "executable = /bin/sh\nqueue a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q,r,s,t,u,v,w,x,y,z,"
                  "aa,ab,ac,ad,ae,af,ag in (1)", 2, "more than 32 variables" },
                { "executable = /bin/sh\nqueue $(", 2, "'$(' names no macro" },
                /* the first job of the second statement fails: nothing is produced */
                { "executable = /bin/sh\nqueue 2\nexecutable = /no/such/program\nqueue", 3,
                  "executable '/no/such/program': No such file" },
        };
        CHECK_ERRORS(cases);
}

/* Commands with values that are wrong. */
static void test_values(void) {
        static const ErrorCase cases[] = {
                { "queue", 1, "no executable given" },
                { "arguments = x\nqueue 2", 2, "no executable given" },
                { "executable = /no/such/program\nqueue", 1, "executable '/no/such/program': No such file" },
                { "executable = /\nqueue", 1, "executable '/' is a directory" },
                { "executable = /bin/sh\ntransfer_executable = maybe\nqueue", 2, "transfer_executable: 'maybe' is not" },
                { "universe = docker\nexecutable = /bin/sh\nqueue", 1, "universe 'docker' is not supported" },
                { "universe = grid\nexecutable = /bin/sh\nqueue", 1, "universe 'grid' is not supported" },
                { "universe = purple\nexecutable = /bin/sh\nqueue", 1, "unknown universe 'purple'" },
                { "executable = /bin/sh\narguments = \"a b\nqueue", 2, "unterminated double quote" },
                { "executable = /bin/sh\narguments = a \"b\"\nqueue", 2, "double quote in old-syntax arguments" },
                { "executable = /bin/sh\narguments = \"a 'b\"\nqueue", 2, "unbalanced single quote" },
                { "executable = /bin/sh\narguments = \"a\" b\nqueue", 2, "unexpected characters after the closing" },
                { "executable = /bin/sh\nenvironment = A\nqueue", 2, "missing '=' after environment variable 'A'" },
                { "executable = /bin/sh\nenvironment = A=1;=2\nqueue", 2, "missing variable name in '=2'" },
                { "executable = /bin/sh\nenvironment = \"A=1 B\"\nqueue", 2, "missing '=' after environment variable 'B'" },
                { "executable = /bin/sh\nenvironment = \"A='1\"\nqueue", 2, "unbalanced single quote" },
                { "executable = /bin/sh\ngetenv = sometimes\nqueue", 2, "getenv: 'sometimes' is not a boolean" },
                { "executable = /bin/sh\ninput = a b\nqueue", 2, "input: one file name expected" },
                { "executable = /bin/sh\noutput = o \\\n u\nqueue", 2, "output: one file name expected" },
                { "executable = /bin/sh\nrequest_memory = 4X\nqueue", 2, "request_memory: cannot parse '4X'" },
                { "executable = /bin/sh\nrequest_memory = 4GiB\nqueue", 2, "request_memory: cannot parse '4GiB'" },
                { "executable = /bin/sh\nrequest_memory = -1\nqueue", 2, "request_memory: negative size '-1'" },
                { "executable = /bin/sh\nrequest_disk = -2G\nqueue", 2, "request_disk: negative size" },
                { "executable = /bin/sh\nrequest_disk = 99999999999T\nqueue", 2, "request_disk: size '99999999999T' is too large" },
                { "executable = /bin/sh\nrequest_cpus = 2 +\nqueue", 2, "request_cpus: cannot parse '2 +'" },
                { "executable = /bin/sh\nrequest_gpu = (1\nqueue", 2, "request_gpu: cannot parse '(1'" },
                { "executable = /bin/sh\nrequest_a.b = 1\nqueue", 2, "'A.b' is not a resource name" },
                { "executable = /bin/sh\n\nrequirements = Memory >< 1\nqueue", 3, "requirements: cannot parse 'Memory >< 1'" },
                { "executable = /bin/sh\nrequirements = (Memory > 1\nqueue", 2, "requirements: cannot parse" },
                { "executable = /bin/sh\nrank = 1 +* 2\nqueue", 2, "rank: cannot parse '1 +* 2'" },
                { "executable = /bin/sh\npriority = high\nqueue", 2, "priority: 'high' is not a whole number" },
                { "executable = /bin/sh\npriority = 1.5\nqueue", 2, "priority: '1.5' is not a whole number" },
                { "executable = /bin/sh\nnice_user = maybe\nqueue", 2, "nice_user: 'maybe' is not a boolean" },
                { "executable = /bin/sh\nmax_job_retirement_time = 1 )\nqueue", 2, "max_job_retirement_time: cannot parse" },
                { "executable = /bin/sh\nhold = sometimes\nqueue", 2, "hold: 'sometimes' is not a boolean" },
                { "executable = /bin/sh\nperiodic_remove = (JobStatus ==\nqueue", 2, "periodic_remove: cannot parse" },
                { "executable = /bin/sh\non_exit_hold = 1 +\nqueue", 2, "on_exit_hold: cannot parse" },
                { "executable = /bin/sh\nbatch_name = a\\b\nqueue", 2, "batch_name: 'a\\b' may not hold" },
                { "executable = /bin/sh\nkill_sig = SIGFOO\nqueue", 2, "kill_sig: unknown signal 'SIGFOO'" },
                { "executable = /bin/sh\nkill_sig = 99\nqueue", 2, "kill_sig: unknown signal '99'" },
                { "executable = /bin/sh\njob_lease_duration = -5\nqueue", 2, "job_lease_duration: negative duration" },
                { "executable = /bin/sh\njob_lease_duration = 5 +\nqueue", 2, "job_lease_duration: cannot parse" },
                { "executable = /bin/sh\naccounting_group = a b\nqueue", 2, "accounting_group: invalid name 'a b'" },
                { "executable = /bin/sh\naccounting_group_user = \"x\"\nqueue", 2, "accounting_group_user: invalid name" },
                /* 3.4.7: AccountingGroup is at most 40 characters, however given */
                { "executable = /bin/sh\naccounting_group = group_physics_and_astronomy_dept\n"
                  "accounting_group_user = newton_isaac\nqueue", 2,
                  "AccountingGroup 'group_physics_and_astronomy_dept.newton_isaac' is 45 characters long, at most 40" },
                { "executable = /bin/sh\n\n+AccountingGroup = \"a_group_name_that_is_much_too_long_to_use.x\"\nqueue", 3,
                  "is 43 characters long, at most 40 are allowed" },
                { "executable = /bin/sh\n+Foo =\nqueue", 2, "+Foo: missing value" },
                { "executable = /bin/sh\nMY.Foo = 1 +\nqueue", 2, "+Foo: cannot parse '1 +'" },
                { "executable = /bin/sh\n+Foo = $(bar)\nqueue", 2, "+Foo: missing value" },
        };
        CHECK_ERRORS(cases);
}

/* Macro references that do not expand. */
static void test_macros(void) {
        static const ErrorCase cases[] = {
                { "executable = /bin/sh\noutput = $(foo\nqueue", 2, "no closing ')'" },
                { "a = $(b)\nb = $(a)\nexecutable = /bin/sh\noutput = $(a)\nqueue", 2, "macro expansion loop: a -> b -> a" },
                { "executable = /bin/sh\narguments = $INT(x)\nqueue", 2, "$INT(x): 'x' does not evaluate to an integer" },
                { "executable = /bin/sh\narguments = $(a b)\nqueue", 2, "cannot be part of a macro name" },
                { "executable = /bin/sh\nx = $(\nqueue", 2, "names no macro" },
                { "executable = /bin/sh\nitems = $(oops\nqueue from $(items)", 2, "no closing ')'" },
        };
        CHECK_ERRORS(cases);
}

/* The configuration bounds a submission and supplies defaults. */
static void test_config(void) {
        ClassAd **ads = NULL;
        ConfigError err = {};
        Config *cfg = NULL;
        size_t n = 0;
        int r;

        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_set(cfg, "MAX_JOBS_PER_SUBMISSION", "5") == 0);
        r = submit_test_parse("executable = /bin/sh\nqueue 5\n", cfg, true, &ads, &n, &err);
        CU_ASSERT(r == 0 && n == 5);
        config_submit_free(ads, n);
        r = submit_test_parse("executable = /bin/sh\nqueue 3\nqueue in (a, b, c)\n", cfg, true, &ads, &n, &err);
        GLEAN_TEST_CHECK(r == -E2BIG && err.line == 3 && strstr(err.msg, "more than 5 jobs"),
                         "6 jobs of 5: %d at line %d: %s", r, err.line, err.msg);
        r = submit_test_parse("executable = /bin/sh\nqueue 1000000000000\n", cfg, true, &ads, &n, &err);
        CU_ASSERT(r == -E2BIG);
        /* 0 is no limit, as the central manager reads it */
        CU_ASSERT_FATAL(config_set(cfg, "MAX_JOBS_PER_SUBMISSION", "0") == 0);
        r = submit_test_parse("executable = /bin/sh\nqueue 30000\n", cfg, true, &ads, &n, &err);
        GLEAN_TEST_CHECK(r == 0 && n == 30000, "no limit: %d, %zu jobs: %s", r, n, err.msg);
        config_submit_free(ads, n);

        CU_ASSERT_FATAL(config_set(cfg, "JOB_DEFAULT_REQUESTMEMORY", "512") == 0);
        CU_ASSERT_FATAL(config_set(cfg, "JOB_DEFAULT_REQUESTCPUS", "undefined") == 0);
        CU_ASSERT_FATAL(config_set(cfg, "JOB_DEFAULT_LEASE_DURATION", "0") == 0);
        r = submit_test_parse("executable = /bin/sh\nqueue\n", cfg, true, &ads, &n, &err);
        CU_ASSERT_FATAL(r == 0 && n == 1);
        submit_test_expect(ads, n, "0:RequestMemory = 512", "config defaults");
        submit_test_expect(ads, n, "0:!RequestCpus", "config defaults");
        submit_test_expect(ads, n, "0:!JobLeaseDuration", "config defaults");
        config_submit_free(ads, n);

        CU_ASSERT_FATAL(config_load_string(cfg, "\n\nJOB_DEFAULT_REQUESTDISK = 1 +\n", "site.conf", &err) == 0);
        r = submit_test_parse("executable = /bin/sh\nqueue\n", cfg, true, &ads, &n, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, "site.conf") == 0 && err.line == 3 &&
                         strstr(err.msg, "JOB_DEFAULT_REQUESTDISK: cannot parse '1 +'"),
                         "bad default: %d %s:%d: %s", r, err.file, err.line, err.msg);

        CU_ASSERT_FATAL(config_set(cfg, "JOB_DEFAULT_REQUESTDISK", "100") == 0);
        CU_ASSERT_FATAL(config_set(cfg, "MAX_JOBS_PER_SUBMISSION", "many") == 0);
        r = submit_test_parse("executable = /bin/sh\nqueue\n", cfg, true, &ads, &n, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, "MAX_JOBS_PER_SUBMISSION"), "bad knob: %d %s", r, err.msg);
        config_free(cfg);
}

/* Warnings go to submit_warning_stream, errors never print. */
static void test_warnings(void) {
        static const struct {
                const char *text;
                const char *warning; /* NULL: none */
        } cases[] = {
                { "executable = /bin/sh\nqueue", NULL },
                { "executable = /bin/sh\nexecutabel = /bin/true\nqueue", "test.sub:2: warning: the line 'executabel = /bin/true' was not used; is it a typo?" },
                { "executable = /bin/sh\nnotification = never\nqueue", "test.sub:2: warning: 'notification' is not supported by glean and is ignored" },
                { "executable = /bin/sh\nqueue\nlate = 1", "test.sub:3: warning: the line 'late = 1'" },
                { "executable = /bin/sh\nrequest_cpu = 2\nqueue", "test.sub:2: warning: the line 'request_cpu = 2'" },
                { "executable = /bin/sh\njob_lease_duration = 1\nqueue 3", "test.sub:2: warning: job_lease_duration 1 is too short, using 20 seconds\n" },
                /* used through a macro, or by a queue statement */
                { "x = 1\nexecutable = /bin/sh\narguments = $(x)\nqueue", NULL },
                { "n = 2\nexecutable = /bin/sh\nqueue $(n)", NULL },
        };
        FILE *saved = submit_warning_stream;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *out = NULL;
                size_t size = 0;
                ClassAd **ads = NULL;
                ConfigError err = {};
                size_t n = 0;
                int r;

                submit_warning_stream = open_memstream(&out, &size);
                CU_ASSERT_FATAL(submit_warning_stream != NULL);
                r = submit_test_parse(cases[i].text, NULL, true, &ads, &n, &err);
                fclose(submit_warning_stream);
                GLEAN_TEST_CHECK(r == 0, "warnings row %zu: %s", i, err.msg);
                config_submit_free(ads, n);
                if (cases[i].warning)
                        GLEAN_TEST_CHECK(strncmp(out, cases[i].warning, strlen(cases[i].warning)) == 0,
                                         "warnings row %zu: got '%s', want '%s'", i, out, cases[i].warning);
                else
                        GLEAN_TEST_CHECK(size == 0, "warnings row %zu: got '%s', want none", i, out);
                /* one warning, said once however many jobs repeat it */
                GLEAN_TEST_CHECK(!strchr(out, '\n') || !strchr(strchr(out, '\n') + 1, '\n'),
                                 "warnings row %zu: more than one line: '%s'", i, out);
                free(out);
        }
        submit_warning_stream = saved;
}

/* Files: read, missing, holding a NUL byte; file names in errors. */
static void test_files(void) {
        char path[] = "/tmp/glean-submit-XXXXXX";
        ConfigError err = {};
        ClassAd **ads = NULL;
        char *msg;
        size_t n = 0;
        FILE *f;
        int fd, r;

        r = config_submit_parse_file("/no/such/file.sub", NULL, NULL, &ads, &n, &err);
        GLEAN_TEST_CHECK(r == -ENOENT && strcmp(err.file, "/no/such/file.sub") == 0, "missing file: %d %s", r, err.msg);
        msg = config_error_format(&err);
        GLEAN_TEST_CHECK(msg && strcmp(msg, "/no/such/file.sub: No such file or directory") == 0, "format: %s", msg);
        free(msg);

        fd = mkstemp(path);
        CU_ASSERT_FATAL(fd >= 0);
        f = fdopen(fd, "w");
        CU_ASSERT_FATAL(f != NULL);
        fputs("executable = /bin/sh\nqueue 2\nbad line\n", f);
        fclose(f);
        r = config_submit_parse_file(path, NULL, NULL, &ads, &n, &err);
        msg = config_error_format(&err);
        GLEAN_TEST_CHECK(r == -EINVAL && msg && strncmp(msg, path, strlen(path)) == 0 &&
                         strncmp(msg + strlen(path), ":3: expected", 12) == 0, "file:line: %s", msg);
        free(msg);

        f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fputs("executable = /bin/sh\nqueue", f);
        fputc('\0', f);
        fclose(f);
        r = config_submit_parse_file(path, NULL, NULL, &ads, &n, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, "NUL byte"), "NUL byte: %d %s", r, err.msg);

        f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        fputs("executable = /bin/sh\narguments = $(SUBMIT_FILE)\nqueue\n", f);
        fclose(f);
        r = config_submit_parse_file(path, NULL, NULL, &ads, &n, &err);
        CU_ASSERT_FATAL(r == 0 && n == 1);
        {
                char want[128];

                snprintf(want, sizeof(want), "0:Args = \"%s\"", path);
                submit_test_expect(ads, n, want, "SUBMIT_FILE");
                submit_test_expect(ads, n, "0:ClusterId = 1", "no options");
                submit_test_expect(ads, n, "0:QDate ~ ", "no options");
        }
        config_submit_free(ads, n);
        unlink(path);

        r = config_submit_parse_string(NULL, NULL, NULL, NULL, &ads, &n, &err);
        CU_ASSERT(r == -EINVAL);
        config_submit_free(NULL, 0);
}

static CU_TestInfo error_tests[] = {
        { "syntax", test_syntax },
        { "queue", test_queue },
        { "values", test_values },
        { "macros", test_macros },
        { "config", test_config },
        { "files", test_files },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo warning_tests[] = {
        { "warnings", test_warnings },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "errors", NULL, NULL, NULL, NULL, error_tests },
        { "warnings", NULL, NULL, NULL, NULL, warning_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        submit_warning_stream = tmpfile();
        return glean_test_main(argc, argv, suites);
}

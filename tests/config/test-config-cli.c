/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-cli.c — `glean config` as a user runs it: a subprocess, its
 * stdout, stderr and exit status. The binary is $GLEAN (make check sets
 * it to the flavour being tested), else build/bin/glean. "@F" in a case
 * stands for the test's configuration file, "@B" for a broken one, "@D"
 * for the temporary directory.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-util.h"

#define MAX_ARGS 8

typedef struct CliCase {
        const char *env;          /* GLEAN_CONFIG, NULL: unset */
        const char *args[MAX_ARGS]; /* after "glean config" */
        int status;
        const char *out;          /* exact stdout; NULL: not checked */
        const char *out_contains; /* NULL: not checked */
        const char *err;          /* stderr starts with this; NULL: stderr empty */
} CliCase;

static const char config_text[] = "# glean config test\n"
                                  "A = alpha\n"
                                  "START = ($(START)) || Owner == \"coltrane\"\n"
                                  "MULTI = one \\\n"
                                  "        two\n"
                                  "L1 = $(L2)\n"
                                  "L2 = $(L1)\n"
                                  "LOCAL_CONFIG_DIR =\n";

static const char broken_text[] = "A = 1\n"
                                  "B = 2\n"
                                  "oops\n";

static const CliCase cases[] = {
        { NULL, { "--file", "@F", "MINUTE", "HOUR" }, 0, "60\n(60 * 60)\n", NULL, NULL },
        { NULL, { "--file=@F", "A", "MULTI" }, 0, "alpha\none two\n", NULL, NULL },
        { NULL, { "-f", "@F", "minute" }, 0, "60\n", NULL, NULL },
        { NULL, { "--file", "@F", "--raw", "HOUR" }, 0, "(60 * $(MINUTE))\n", NULL, NULL },
        { NULL, { "--file", "@F", "START" }, 0,
          "(( (KeyboardIdle > 15 * 60) && ( (LoadAvg - CondorLoadAvg) <= 0.3 || (State != \"Unclaimed\" && "
          "State != \"Owner\")) )) || Owner == \"coltrane\"\n",
          NULL, NULL },
        { NULL, { "--file", "@F", "NOPE" }, 1, "", NULL, "NOPE is not defined\n" },
        { NULL, { "--file", "@F", "MINUTE", "NOPE", "HOUR" }, 1, "60\n(60 * 60)\n", NULL, "NOPE is not defined\n" },
        { NULL, { "--file", "@F", "--verbose", "A" }, 0, "A = alpha\n # at: @F, line 2\n", NULL, NULL },
        { NULL, { "--file", "@F", "-v", "MINUTE" }, 0, "MINUTE = 60\n # at: <default>\n", NULL, NULL },
        { NULL, { "--file", "@F", "-v", "hour" }, 0, "hour = (60 * 60)\n # at: <default>\n # raw: (60 * $(MINUTE))\n",
          NULL, NULL },
        { NULL, { "--file", "@F", "-v", "--raw", "HOUR" }, 0, "HOUR = (60 * $(MINUTE))\n # at: <default>\n", NULL,
          NULL },
        { NULL, { "--file", "@F", "L1" }, 2, "", NULL, "@F:7: macro expansion loop: L1 -> L2 -> L1\n" },
        { NULL, { "--file", "@F", "--raw", "L1" }, 0, "$(L2)\n", NULL, NULL },
        { NULL, { "--file", "@B", "A" }, 2, "", NULL, "@B:3: expected NAME = value, not 'oops'\n" },
        { NULL, { "--file", "@D/absent.conf", "A" }, 2, "", NULL,
          "@D/absent.conf: cannot read: No such file or directory\n" },
        { "@F", { "A" }, 0, "alpha\n", NULL, NULL },
        { "@B", { "A" }, 2, "", NULL, "@B:3: expected NAME = value" },
        { "@B", { "--file", "@F", "A" }, 0, "alpha\n", NULL, NULL },
        { NULL, { "--file", "@F", "--dump", "--raw" }, 0, NULL, "\nHOUR = (60 * $(MINUTE))\n", NULL },
        { NULL, { "--file", "@F", "--dump" }, 2, NULL, "A = alpha\nACCOUNTANT_LOCAL_DOMAIN = \n",
          "@F:7: macro expansion loop" },
        { NULL, { "--file", "@F", "--dump", "--verbose" }, 2, NULL, "\nMULTI = one two\n # at: @F, line 4\n",
          "@F:7: macro expansion loop" },
        { NULL, { "--dump", "--file", "@F", "A" }, 2, "", NULL, "glean config: --dump takes no names\n" },
        { NULL, { "--file", "@F" }, 2, "", NULL, "usage: glean config" },
        { NULL, { "--bogus" }, 2, "", NULL, "glean config: unknown option '--bogus'" },
        { NULL, { "--file" }, 2, "", NULL, "glean config: --file needs a file name\n" },
        { NULL, { "--help" }, 0, NULL, "usage: glean config", NULL },
};

static char dir[64], file[128], broken[128];

static const char *glean_path(void) {
        const char *p = getenv("GLEAN");

        return p && *p ? p : "build/bin/glean";
}

/* s with @F, @B and @D replaced; malloc'd. */
static char *subst(const char *s) {
        size_t size = strlen(s) * 4 + 256, n = 0;
        char *out = malloc(size);

        if (!out)
                return NULL;
        for (; *s && n + 130 < size; s++) {
                if (s[0] == '@' && (s[1] == 'F' || s[1] == 'B' || s[1] == 'D')) {
                        const char *with = s[1] == 'F' ? file : s[1] == 'B' ? broken : dir;

                        n += (size_t) snprintf(out + n, size - n, "%s", with);
                        s++;
                } else
                        out[n++] = *s;
        }
        out[n] = '\0';
        return out;
}

static void check_case(size_t i, const CliCase *c) {
        char *argv[MAX_ARGS + 3] = { (char *) glean_path(), (char *) "config" };
        char *out = NULL, *contains = NULL, *err = NULL;
        GleanTestRun run;
        size_t n = 2;
        int r;

        for (const char *const *a = c->args; *a && n < MAX_ARGS + 2; a++)
                argv[n++] = subst(*a);
        if (c->env) {
                char *env = subst(c->env);

                setenv("GLEAN_CONFIG", env, 1);
                free(env);
        } else
                unsetenv("GLEAN_CONFIG");

        r = glean_test_run(argv, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "case %zu: could not run %s", i, argv[0]);
        GLEAN_TEST_CHECK(run.status == c->status, "case %zu: exit status %d, want %d (stderr '%s')", i, run.status,
                         c->status, run.err);
        if (c->out) {
                out = subst(c->out);
                GLEAN_TEST_CHECK(strcmp(run.out, out) == 0, "case %zu: stdout '%s', want '%s'", i, run.out, out);
        }
        if (c->out_contains) {
                contains = subst(c->out_contains);
                GLEAN_TEST_CHECK(strstr(run.out, contains) != NULL, "case %zu: stdout lacks '%s'", i, contains);
        }
        if (c->err) {
                err = subst(c->err);
                GLEAN_TEST_CHECK(strncmp(run.err, err, strlen(err)) == 0, "case %zu: stderr '%s', want '%s...'", i,
                                 run.err, err);
        } else
                GLEAN_TEST_CHECK(run.err_len == 0, "case %zu: stderr '%s', want nothing", i, run.err);

        glean_test_run_done(&run);
        for (size_t k = 2; k < n; k++)
                free(argv[k]);
        free(out);
        free(contains);
        free(err);
}

static void test_cli(void) {
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                check_case(i, &cases[i]);
        unsetenv("GLEAN_CONFIG");
}

static int write_text(const char *path, const char *text) {
        FILE *f = fopen(path, "w");

        if (!f)
                return -1;
        fputs(text, f);
        return fclose(f);
}

static int init(void) {
        snprintf(dir, sizeof(dir), "/tmp/glean-config-cli.XXXXXX");
        if (!mkdtemp(dir))
                return 1;
        snprintf(file, sizeof(file), "%s/glean.conf", dir);
        snprintf(broken, sizeof(broken), "%s/broken.conf", dir);
        return write_text(file, config_text) < 0 || write_text(broken, broken_text) < 0;
}

static int cleanup(void) {
        unlink(file);
        unlink(broken);
        return rmdir(dir) < 0;
}

static CU_TestInfo tests[] = {
        { "config", test_cli },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cli", init, cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-cli.c — `glean config` as a user runs it: a subprocess, its
 * stdout, stderr and exit status. The binary is $GLEAN (make check sets
 * it to the flavour being tested), else build/bin/glean. "@F" in a case
 * stands for the test's configuration file, "@B" for a broken one, "@U"
 * for one with knobs glean reads nothing from, "@D" for the temporary
 * directory. Also: condor_config_val's options, -writeconfig read back to
 * the same values, and the name condor_config_val (a verb, and a link).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
        const char *out_lacks;    /* NULL: not checked */
} CliCase;

static const char config_text[] = "# glean config test\n"
                                  "A = alpha\n"
                                  "START = ($(START)) || Owner == \"coltrane\"\n"
                                  "MULTI = one \\\n"
                                  "        two\n"
                                  "L1 = $(L2)\n"
                                  "L2 = $(L1)\n"
                                  "LOCAL_CONFIG_DIR =\n";

static const char unused_text[] = "# knobs read and not\n"
                                  "A = alpha\n"
                                  "MINUTE = 60\n"
                                  "DEFRAG_INTERVAL = 100\n"
                                  "StartIdleTime = 5 * $(MINUTE)\n"
                                  "NEGOTIATOR_INTERVAL = 30\n"
                                  "HERE @=end\n"
                                  "line one\n"
                                  "line two\n"
                                  "@end\n"
                                  "LOCAL_CONFIG_DIR =\n"
                                  "# what a metaknob sets is not listed as unused\n"
                                  "use SECURITY : Recommended\n";

static const char broken_text[] = "A = 1\n"
                                  "B = 2\n"
                                  "oops\n";

static const CliCase cases[] = {
        { NULL, { "--file", "@F", "MINUTE", "HOUR" }, 0, "60\n(60 * 60)\n", NULL, NULL, NULL },
        { NULL, { "--file=@F", "A", "MULTI" }, 0, "alpha\none two\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "minute" }, 0, "60\n", NULL, NULL, NULL },
        { NULL, { "--file", "@F", "--raw", "HOUR" }, 0, "(60 * $(MINUTE))\n", NULL, NULL, NULL },
        { NULL, { "--file", "@F", "START" }, 0,
          "(( (KeyboardIdle > 15 * 60) && ( (LoadAvg - CondorLoadAvg) <= 0.3 || (State != \"Unclaimed\" && "
          "State != \"Owner\")) )) || Owner == \"coltrane\"\n",
          NULL, NULL, NULL },
        { NULL, { "--file", "@F", "NOPE" }, 1, "", NULL, "NOPE is not defined\n", NULL },
        { NULL, { "--file", "@F", "MINUTE", "NOPE", "HOUR" }, 1, "60\n(60 * 60)\n", NULL, "NOPE is not defined\n", NULL },
        { NULL, { "--file", "@F", "--verbose", "A" }, 0, "A = alpha\n # at: @F, line 2\n # raw: A = alpha\n\n", NULL,
          NULL, NULL },
        { NULL, { "--file", "@F", "-v", "MINUTE" }, 0,
          "MINUTE = 60\n # at: <default>\n # raw: MINUTE = 60\n # default: 60\n\n", NULL, NULL, NULL },
        { NULL, { "--file", "@F", "-v", "hour" }, 0,
          "hour = (60 * 60)\n # at: <default>\n # raw: hour = (60 * $(MINUTE))\n # default: (60 * $(MINUTE))\n\n",
          NULL, NULL, NULL },
        { NULL, { "--file", "@F", "-v", "--raw", "HOUR" }, 0,
          "HOUR = (60 * $(MINUTE))\n # at: <default>\n # default: (60 * $(MINUTE))\n\n", NULL, NULL, NULL },
        { NULL, { "--file", "@F", "L1" }, 2, "", NULL, "@F:7: macro expansion loop: L1 -> L2 -> L1\n", NULL },
        { NULL, { "--file", "@F", "--raw", "L1" }, 0, "$(L2)\n", NULL, NULL, NULL },
        { NULL, { "--file", "@B", "A" }, 2, "", NULL, "@B:3: expected NAME = value, not 'oops'\n", NULL },
        { NULL, { "--file", "@D/absent.conf", "A" }, 2, "", NULL,
          "@D/absent.conf: cannot read: No such file or directory\n", NULL },
        { "@F", { "A" }, 0, "alpha\n", NULL, NULL, NULL },
        { "@B", { "A" }, 2, "", NULL, "@B:3: expected NAME = value", NULL },
        { "@B", { "--file", "@F", "A" }, 0, "alpha\n", NULL, NULL, NULL },
        { NULL, { "--file", "@F", "--dump", "--raw" }, 0, NULL, "\nHOUR = (60 * $(MINUTE))\n", NULL, NULL },
        { NULL, { "--file", "@F", "--dump" }, 2, NULL, "A = alpha\nACCOUNTANT_LOCAL_DOMAIN = \n",
          "@F:7: macro expansion loop", NULL },
        { NULL, { "--file", "@F", "--dump", "--verbose" }, 2, NULL, "\nMULTI = one two\n # at: @F, line 4\n",
          "@F:7: macro expansion loop", NULL },
        { NULL, { "--dump", "--file", "@F", "A" }, 2, "", NULL, "glean config: --dump takes no names\n", NULL },
        { NULL, { "--file", "@F" }, 2, "", NULL, "usage: glean config", NULL },
        { NULL, { "--bogus" }, 2, "", NULL, "glean config: unknown option '--bogus'", NULL },
        { NULL, { "--file" }, 2, "", NULL, "glean config: --file needs a file name\n", NULL },
        { NULL, { "--help" }, 0, NULL, "usage: glean config", NULL, NULL },

        /* ---- condor_config_val's options ---- */
        /* views */
        { NULL, { "-f", "@F", "-expand", "HOUR" }, 0, "(60 * 60)\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-raw", "HOUR" }, 0, "(60 * $(MINUTE))\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-default", "HOUR" }, 0, "(60 * $(MINUTE))\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-default", "HOUR", "A" }, 1, "(60 * $(MINUTE))\n", NULL, "A has no default\n", NULL },
        { NULL, { "-f", "@F", "-default", "-v", "HOUR" }, 2, "", NULL,
          "glean config: -default cannot be used with -verbose\n", NULL },
        { NULL, { "-f", "@F", "-raw", "-expand", "HOUR" }, 2, "", NULL, "glean config: -expand cannot be used with", NULL },
        { NULL, { "-f", "@F", "-evaluate", "HOUR" }, 0, "3600\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-ev", "START" }, 0, "undefined\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-evaluate", "MULTI" }, 0, "one two\n", NULL,
          "Warning: Failed to evaluate 'one two', returning it as config value\n", NULL },
        /* options anywhere, as condor_config_val takes them; -root-config is --file */
        { NULL, { "A", "-root-config", "@F", "-raw", "HOUR" }, 0, "alpha\n(60 * $(MINUTE))\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-subsystem", "startd", "-local-name", "x", "A" }, 0, "alpha\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-mixedcase", "minute" }, 0, "60\n", NULL, NULL, NULL },
        { NULL, { "-f", "@F", "-subsystem" }, 2, "", NULL, "glean config: -subsystem needs a name\n", NULL },
        /* -dump: raw, patterns, the machine and the files */
        { NULL, { "-f", "@F", "-dump", "hour" }, 0, NULL,
          "\n# Parameters with names that match hour:\nDEFRAG_DRAINING_MACHINES_PER_HOUR = 0\n"
          "HOUR = (60 * $(MINUTE))\n# Contributing configuration file(s):\n#\t@F\n",
          NULL, NULL },
        { NULL, { "-f", "@F", "-dump", "-expand", "^hour$" }, 0, NULL,
          "match ^hour$:\nHOUR = (60 * 60)\n# Contributing", NULL, "DEFRAG" },
        { NULL, { "-f", "@F", "-d", "^multi$", "^a$" }, 0, NULL,
          "match ^multi$:\nMULTI = one two\n\n# Parameters with names that match ^a$:\nA = alpha\n#", NULL, NULL },
        { NULL, { "-f", "@F", "-dump", "-v", "^A$" }, 0, NULL,
          "\nA = alpha\n # at: @F, line 2\n # expanded: alpha\n", NULL, "Contributing" },
        { NULL, { "-f", "@F", "-dump", "-v", "^minute$" }, 0, NULL,
          "\nMINUTE = 60\n # at: <default>\n # expanded: 60\n # default: 60\n", NULL, NULL },
        { NULL, { "-f", "@F", "-dump", "-default", "^A$" }, 0, NULL, "\nA = \n", NULL, NULL },
        { NULL, { "-f", "@F", "-dump", "(" }, 2, NULL, NULL, "glean config: -dump: '(' is not a regular expression", NULL },
        { NULL, { "-f", "@F", "-dump" }, 0, NULL, "# Configuration from machine: ", NULL, NULL },
        /* -used, -unused (the knob registry) */
        { NULL, { "-f", "@U", "-unused" }, 0, NULL,
          "\nA = alpha\nDEFRAG_INTERVAL = 100\nHERE @=end\nline one\nline two\n@end\n"
          "# Contributing configuration file(s):\n#\t@U\n",
          NULL, "NEGOTIATOR_INTERVAL" },
        { NULL, { "-f", "@U", "-unused", "-v" }, 0, NULL, "\nDEFRAG_INTERVAL = 100\n # at: @U, line 4\n", NULL,
          "StartIdleTime" },
        { NULL, { "-f", "@U", "-used", "NEGOTIATOR_INTERVAL", "A", "StartIdleTime" }, 0, "30\n5 * 60\n", NULL, NULL, NULL },
        { NULL, { "-f", "@U", "-unused", "A", "NEGOTIATOR_INTERVAL", "NOPE" }, 1, "alpha\n", NULL, "NOPE is not defined\n",
          NULL },
        { NULL, { "-f", "@U", "-dump", "-used", "interval" }, 0, NULL, "\nNEGOTIATOR_INTERVAL = 30\n", NULL,
          "DEFRAG_INTERVAL" },
        /* -config: the files read (descriptions on stderr) */
        { NULL, { "-f", "@U", "-config" }, 0, "\t@U\n", NULL, "Configuration source:\n", NULL },
        { NULL, { "-f", "@U", "-config", "A" }, 0, "\t@U\nalpha\n", NULL, "Configuration source:\n", NULL },
        /* -summary: what the files change, by file; MINUTE is the default */
        { NULL, { "-f", "@U", "-summary" }, 0, NULL,
          "\n#\n# from @U\n#\nA = alpha\nDEFRAG_INTERVAL = 100\nStartIdleTime = 5 * $(MINUTE)\n"
          "NEGOTIATOR_INTERVAL = 30\nHERE @=end\nline one\nline two\n@end\nLOCAL_CONFIG_DIR = \n",
          NULL, "MINUTE = 60" },
        { NULL, { "-f", "@U", "-summary" }, 0, NULL, "# glean config ", NULL, NULL },
        /* -writeconfig: values equal to the default commented out, or left out */
        { NULL, { "-f", "@U", "-writeconfig", "-" }, 0, NULL, "\nA = alpha\n#MINUTE = 60\nDEFRAG_INTERVAL = 100\n",
          NULL, NULL },
        { NULL, { "-f", "@U", "-writeconfig:upgrade", "-" }, 0, NULL, "\nA = alpha\nDEFRAG_INTERVAL = 100\n", NULL,
          "MINUTE = " },
        { NULL, { "-f", "@U", "-writeconfig:bogus", "-" }, 2, "", NULL,
          "glean config: -writeconfig:bogus: glean knows the filter upgrade only\n", NULL },
        { NULL, { "-f", "@U", "-writeconfig" }, 2, "", NULL, "glean config: -writeconfig needs a file name", NULL },
        { NULL, { "-f", "@U", "-writeconfig", "@D/no/such/dir" }, 1, "", NULL,
          "glean config: -writeconfig: cannot create @D/no/such/dir: No such file or directory\n", NULL },
        { NULL, { "-f", "@U", "-summary", "-writeconfig", "-" }, 2, "", NULL,
          "glean config: -summary cannot be used with -writeconfig\n", NULL },
        /* refused: asking a daemon, setting at run time */
        { NULL, { "-name", "node1", "A" }, 2, "", NULL,
          "glean config: -name: glean config reads this machine's configuration files only", NULL },
        { NULL, { "-pool", "cm.example.org", "-name", "node1", "A" }, 2, "", NULL, "glean config: -pool: ", NULL },
        { NULL, { "-address", "<10.0.0.1:9618>", "A" }, 2, "", NULL, "glean config: -address: ", NULL },
        { NULL, { "-schedd", "A" }, 2, "", NULL, "glean config: -schedd: glean config reads this machine's", NULL },
        { NULL, { "-startd", "A" }, 2, "", NULL, "glean config: -startd: ", NULL },
        { NULL, { "-negotiator", "A" }, 2, "", NULL, "glean config: -negotiator: ", NULL },
        { NULL, { "-set", "A = 1" }, 2, "", NULL,
          "glean config: -set: glean daemons have no protocol to set their configuration at run time; edit the "
          "configuration file", NULL },
        { NULL, { "-rset", "A = 1" }, 2, "", NULL, "glean config: -rset: glean daemons have no protocol", NULL },
        { NULL, { "-unset", "A" }, 2, "", NULL, "glean config: -unset: glean daemons have no protocol", NULL },
        { NULL, { "-runset", "A" }, 2, "", NULL, "glean config: -runset: glean daemons have no protocol", NULL },
        { NULL, { "-version" }, 0, NULL, "glean ", NULL, NULL },
        { NULL, { "-help" }, 0, NULL, "usage: glean config", NULL, NULL },
        { NULL, { "-bogus" }, 2, "", NULL, "glean config: unknown option '-bogus'", NULL },
};

static char dir[64], file[128], broken[128], unused[128];

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
                if (s[0] == '@' && (s[1] == 'F' || s[1] == 'B' || s[1] == 'U' || s[1] == 'D')) {
                        const char *with = s[1] == 'F' ? file : s[1] == 'B' ? broken : s[1] == 'U' ? unused : dir;

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
        if (c->out_lacks) {
                char *lacks = subst(c->out_lacks);

                GLEAN_TEST_CHECK(strstr(run.out, lacks) == NULL, "case %zu: stdout has '%s'", i, lacks);
                free(lacks);
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

/* Run glean with args (NULL-terminated, after argv[0] = exe); stdout in
 * *ret_out (malloc'd), the exit status returned, -1 if it could not run. */
static int run_out(const char *exe, const char *const *args, char **ret_out) {
        char *argv[16] = { (char *) exe };
        GleanTestRun run;
        size_t n = 1;
        int status;

        for (; *args && n < 15; args++)
                argv[n++] = (char *) *args;
        argv[n] = NULL;
        if (glean_test_run(argv, &run) != 0)
                return -1;
        status = run.status;
        *ret_out = strdup(run.out);
        glean_test_run_done(&run);
        return status;
}

/* -writeconfig FILE read back gives every name the same raw value (so the
 * same expanded one), with :upgrade too; also a value of several lines. */
static void test_writeconfig(void) {
        const char *sources[] = { file, unused };
        const char *modes[] = { "-writeconfig", "-writeconfig:upgrade" };
        char written[160];

        unsetenv("GLEAN_CONFIG");
        snprintf(written, sizeof written, "%s/written.conf", dir);
        for (size_t s = 0; s < 2; s++)
                for (size_t m = 0; m < 2; m++) {
                        const char *write[] = { "config", "-f", sources[s], modes[m], written, NULL };
                        const char *dump_src[] = { "config", "-f", sources[s], "--dump", "--raw", NULL };
                        const char *dump_new[] = { "config", "-f", written, "--dump", "--raw", NULL };
                        const char *here[] = { "config", "-f", written, "HERE", NULL };
                        char *out = NULL, *before = NULL, *after = NULL;

                        GLEAN_TEST_CHECK_FATAL(run_out(glean_path(), write, &out) == 0, "%s %s: written", modes[m],
                                               sources[s]);
                        free(out);
                        GLEAN_TEST_CHECK_FATAL(run_out(glean_path(), dump_src, &before) == 0, "dump of %s", sources[s]);
                        GLEAN_TEST_CHECK_FATAL(run_out(glean_path(), dump_new, &after) == 0, "dump of %s", written);
                        GLEAN_TEST_CHECK(before && after && strcmp(before, after) == 0,
                                         "%s of %s read back: the same values (%zu and %zu bytes)", modes[m],
                                         sources[s], before ? strlen(before) : 0, after ? strlen(after) : 0);
                        GLEAN_TEST_CHECK(before && strncmp(before, "A = alpha\n", 10) == 0, "the dump has A");
                        if (sources[s] == unused) {
                                GLEAN_TEST_CHECK(run_out(glean_path(), here, &out) == 0 && out &&
                                                         strcmp(out, "line one\nline two\n") == 0,
                                                 "HERE read back: '%s'", out ? out : "");
                                free(out);
                        }
                        free(before);
                        free(after);
                }
        unlink(written);
}

/* The name condor_config_val: a verb of glean, and a link to glean. */
static void test_condor_name(void) {
        char link_path[160], *target = realpath(glean_path(), NULL), *out = NULL;
        const char *verb[] = { "condor_config_val", "-f", file, "-raw", "HOUR", NULL };
        const char *linked[] = { "-f", file, "A", "MINUTE", NULL };
        const char *linked_bad[] = { "-set", "A = 1", NULL };

        unsetenv("GLEAN_CONFIG");
        GLEAN_TEST_CHECK(run_out(glean_path(), verb, &out) == 0 && out && strcmp(out, "(60 * $(MINUTE))\n") == 0,
                         "glean condor_config_val: '%s'", out ? out : "");
        free(out);
        out = NULL;

        GLEAN_TEST_CHECK_FATAL(target != NULL, "realpath of %s", glean_path());
        snprintf(link_path, sizeof link_path, "%s/condor_config_val", dir);
        GLEAN_TEST_CHECK_FATAL(symlink(target, link_path) == 0, "symlink %s", link_path);
        GLEAN_TEST_CHECK(run_out(link_path, linked, &out) == 0 && out && strcmp(out, "alpha\n60\n") == 0,
                         "condor_config_val link: '%s'", out ? out : "");
        free(out);
        out = NULL;
        GLEAN_TEST_CHECK(run_out(link_path, linked_bad, &out) == 2, "condor_config_val -set refused");
        free(out);
        unlink(link_path);
        free(target);
}

static int write_text(const char *path, const char *text);

/* Both daemons log each knob read by nothing as a warning at start (here
 * a start that fails soon after: no EXECUTE directory, no key). */
static void test_daemons_warn(void) {
        static const struct {
                const char *env, *fallback;
                const char *text;
        } daemons[] = {
                { "GLEAN_AGENT", "build/bin/glean-agent",
                  "EXECUTE = @D/no/such/dir\nAGENT_SOCKET = @D/agent.sock\nDEFRAG_INTERVAL = 100\nLOCAL_CONFIG_DIR =\n" },
                { "GLEAN_NEGOTIATOR", "build/bin/glean-negotiator",
                  "SPOOL = @D/no/such/dir\nNEGOTIATOR_SOCKET = @D/n.sock\nDEFRAG_INTERVAL = 100\nLOCAL_CONFIG_DIR =\n"
                  "COLLECTOR_PORT = 0\nNEGOTIATOR_ADDRESS = 127.0.0.1\nPOOL_KEY_FILE = @D/none.key\n"
                  "SEC_TOKEN_POOL_SIGNING_KEY_FILE = @D/none.signing\n" },
        };
        char conf[160];

        snprintf(conf, sizeof conf, "%s/daemon.conf", dir);
        for (size_t i = 0; i < sizeof daemons / sizeof *daemons; i++) {
                const char *exe = getenv(daemons[i].env);
                char *text = subst(daemons[i].text), *want = NULL;
                char *argv[] = { (char *) (exe && *exe ? exe : daemons[i].fallback), (char *) "--config", conf, NULL };
                GleanTestRun run;

                GLEAN_TEST_CHECK_FATAL(text && write_text(conf, text) == 0, "write %s", conf);
                GLEAN_TEST_CHECK_FATAL(asprintf(&want, "warning: %s:3: DEFRAG_INTERVAL is set but glean reads nothing "
                                                       "from it\n",
                                                conf) > 0,
                                       "asprintf");
                GLEAN_TEST_CHECK_FATAL(glean_test_run(argv, &run) == 0, "run %s", argv[0]);
                GLEAN_TEST_CHECK(run.status != 0, "%s: does not start (status %d)", argv[0], run.status);
                GLEAN_TEST_CHECK(strstr(run.err, want) != NULL, "%s: stderr lacks '%s': '%s'", argv[0], want, run.err);
                glean_test_run_done(&run);
                free(text);
                free(want);
        }
        unlink(conf);
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
        snprintf(unused, sizeof(unused), "%s/unused.conf", dir);
        return write_text(file, config_text) < 0 || write_text(broken, broken_text) < 0 ||
               write_text(unused, unused_text) < 0;
}

static int cleanup(void) {
        unlink(file);
        unlink(broken);
        unlink(unused);
        return rmdir(dir) < 0;
}

static CU_TestInfo tests[] = {
        { "config", test_cli },
        { "writeconfig read back", test_writeconfig },
        { "condor_config_val", test_condor_name },
        { "daemons warn of knobs read by nothing", test_daemons_warn },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cli", init, cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-jobspec.c — job ads turned into what to execute: HTCondor's argument
 * and environment syntaxes read back exactly (also from ads that the submit
 * parser wrote), relative paths, the environment the job gets, KillSig,
 * and which account a job runs as (as root, and as an agent that is not).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "agent/exec.h"
#include "config/argsyntax.h"
#include "config/config.h"
#include "test-util.h"

#define PARENT "/var/lib/glean/execute"
#define SLOT "slot1_2"
#define NONE ((const char *) 1) /* marks the end of an expected vector */

/* ---- helpers ---- */

/* An ad from name, value pairs (string values), NULL-terminated. */
static ClassAd *ad_of(const char *name, ...) {
        ClassAd *ad = NULL;
        va_list ap;

        CU_ASSERT_FATAL(classad_new(&ad) == 0);
        va_start(ap, name);
        for (const char *n = name; n; n = va_arg(ap, const char *)) {
                const char *v = va_arg(ap, const char *);

                CU_ASSERT_FATAL(classad_set_string(ad, n, v) == 0);
        }
        va_end(ap);
        return ad;
}

/* The owner a test ad names: one the job may run as here. */
static const char *usable_owner(void) {
        static char name[256];

        if (geteuid() == 0)
                return "nobody";
        if (!name[0]) {
                struct passwd *pw = getpwuid(geteuid());

                CU_ASSERT_FATAL(pw != NULL);
                snprintf(name, sizeof(name), "%s", pw->pw_name);
        }
        return name;
}

static const char *env_get(char **envp, const char *name) {
        size_t n = strlen(name);

        for (char **e = envp; e && *e; e++)
                if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
                        return *e + n + 1;
        return NULL;
}

static size_t strv_len(char **v) {
        size_t n = 0;

        while (v && v[n])
                n++;
        return n;
}

/* v equals the expected strings (up to NONE). */
static bool strv_is(char **v, const char *const *want, const char *what) {
        size_t n = 0;

        while (want[n] != NONE)
                n++;
        if (strv_len(v) != n) {
                GLEAN_TEST_CHECK(false, "%s: %zu words, want %zu", what, strv_len(v), n);
                return false;
        }
        for (size_t i = 0; i < n; i++)
                if (strcmp(v[i], want[i]) != 0) {
                        GLEAN_TEST_CHECK(false, "%s: word %zu is '%s', want '%s'", what, i, v[i], want[i]);
                        return false;
                }
        return true;
}

static int spec_of(const ClassAd *ad, const AgentRunAs *runas, AgentJobSpec **ret, char *why, size_t whylen) {
        return agent_jobspec_from_ad(ad, runas, PARENT, SLOT, ret, why, whylen);
}

/* ---- syntaxes ---- */

typedef struct SplitCase {
        const char *in;
        const char *want[8];
} SplitCase;

static void test_args_v2(void) {
        static const SplitCase cases[] = {
                { "", { NONE } },
                { "   \t ", { NONE } },
                { "a b  c", { "a", "b", "c", NONE } },
                { "'a b' c", { "a b", "c", NONE } },
                { "'it''s' x", { "it's", "x", NONE } },
                { "'' x ''", { "", "x", "", NONE } },
                { "a'b c'd", { "ab cd", NONE } },
                { "''''", { "'", NONE } },
                { "\"dq\" back\\slash", { "\"dq\"", "back\\slash", NONE } },
                { "tab\there\nnl", { "tab", "here", "nl", NONE } },
                { "'  lead' 'trail  '", { "  lead", "trail  ", NONE } },
                { "$(X) ${HOME}", { "$(X)", "${HOME}", NONE } },
        };
        char what[128], why[256];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigStrv v = {};
                int r = config_args_split_v2(cases[i].in, &v, why, sizeof(why));

                snprintf(what, sizeof(what), "row %zu \"%s\"", i, cases[i].in);
                GLEAN_TEST_CHECK(r == 0, "%s: %d", what, r);
                if (r == 0)
                        strv_is(v.v, cases[i].want, what);
                config_strv_done(&v);
        }

        /* added to what the list holds */
        static const char *const want_added[] = { "cmd", "a b", "c", NONE };
        ConfigStrv v = {};
        CU_ASSERT_FATAL(config_strv_push(&v, strdup("cmd")) == 0);
        CU_ASSERT_EQUAL(config_args_split_v2("'a b' c", &v, why, sizeof(why)), 0);
        strv_is(v.v, want_added, "added");
        config_strv_done(&v);

        CU_ASSERT_EQUAL(config_args_split_v2("ok 'not closed", &v, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "unbalanced single quote") && strstr(why, "'not closed"), "why: %s", why);
        config_strv_done(&v);
        CU_ASSERT_EQUAL(config_args_split_v2("'''", &v, NULL, 0), -EINVAL);
        config_strv_done(&v);
}

static void test_args_v1(void) {
        static const SplitCase cases[] = {
                { "", { NONE } },
                { "hello world", { "hello", "world", NONE } },
                { "  a\t\tb \n c  ", { "a", "b", "c", NONE } },
                { "'not' \"grouped\" a\\ b", { "'not'", "\"grouped\"", "a\\", "b", NONE } },
        };
        char what[128];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigStrv v = {};

                snprintf(what, sizeof(what), "row %zu \"%s\"", i, cases[i].in);
                CU_ASSERT_FATAL(config_args_split_v1(cases[i].in, &v) == 0);
                strv_is(v.v, cases[i].want, what);
                config_strv_done(&v);
        }
}

static void test_env_syntaxes(void) {
        static const struct {
                const char *in;
                bool v2;
                char delim;
                const char *want[8];
        } cases[] = {
                { "FOO=bar BAZ='a b' EMPTY= Q='it''s'", true, 0, { "FOO=bar", "BAZ=a b", "EMPTY=", "Q=it's", NONE } },
                { "A=1 B=2 A=3", true, 0, { "A=3", "B=2", NONE } },
                { "X='x=y z'", true, 0, { "X=x=y z", NONE } },
                { "", true, 0, { NONE } },
                { "A=1;B=2 3; C=4;;", false, ';', { "A=1", "B=2 3", "C=4", NONE } },
                { "|A=1|B=x;y", false, ';', { "A=1", "B=x;y", NONE } },
                { "A=1|B=2", false, '|', { "A=1", "B=2", NONE } },
                { "A=1\nB=2", false, ';', { "A=1", "B=2", NONE } },
                { "A=1;A=2", false, ';', { "A=2", NONE } },
        };
        char what[128], why[256];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigStrv v = {};
                int r = cases[i].v2 ? config_env_split_v2(cases[i].in, &v, why, sizeof(why))
                                    : config_env_split_ad_v1(cases[i].in, cases[i].delim, &v, why, sizeof(why));

                snprintf(what, sizeof(what), "row %zu \"%s\"", i, cases[i].in);
                GLEAN_TEST_CHECK(r == 0, "%s: %d (%s)", what, r, why);
                if (r == 0)
                        strv_is(v.v, cases[i].want, what);
                config_strv_done(&v);
        }

        ConfigStrv v = {};
        CU_ASSERT_EQUAL(config_env_split_v2("FOO=1 BAR", &v, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "BAR") != NULL, "why: %s", why);
        config_strv_done(&v);
        CU_ASSERT_EQUAL(config_env_split_v2("=1", &v, why, sizeof(why)), -EINVAL);
        config_strv_done(&v);
        CU_ASSERT_EQUAL(config_env_split_ad_v1("A=1;NOEQUALS", ';', &v, why, sizeof(why)), -EINVAL);
        config_strv_done(&v);
        CU_ASSERT_EQUAL(config_env_split_v2("A='x", &v, why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(v.n, 0); /* nothing set when the words do not split */
        config_strv_done(&v);
}

static void test_signal_names(void) {
        static const struct {
                const char *name;
                int want;
        } cases[] = {
                { "SIGTERM", SIGTERM }, { "TERM", SIGTERM }, { "term", SIGTERM }, { "15", SIGTERM },
                { "SIGKILL", SIGKILL }, { "sigint", SIGINT }, { "HUP", SIGHUP },  { "SIGUSR2", SIGUSR2 },
                { "9", SIGKILL },       { "SIGCLD", SIGCHLD }, { "64", 64 },
                { "", -EINVAL },        { "SIG", -EINVAL },    { "SIGFOO", -EINVAL }, { "0", -EINVAL },
                { "-15", -EINVAL },     { "15x", -EINVAL },    { "65", -EINVAL }, { "99999999999999999999", -EINVAL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int sig = -1, r = agent_signal_from_name(cases[i].name, &sig);

                if (cases[i].want < 0)
                        GLEAN_TEST_CHECK(r == cases[i].want && sig == -1, "'%s': %d/%d, want an error", cases[i].name,
                                         r, sig);
                else
                        GLEAN_TEST_CHECK(r == 0 && sig == cases[i].want, "'%s': %d/%d, want %d", cases[i].name, r,
                                         sig, cases[i].want);
        }
        CU_ASSERT_STRING_EQUAL(agent_signal_name(SIGTERM), "SIGTERM");
        CU_ASSERT_STRING_EQUAL(agent_signal_name(SIGKILL), "SIGKILL");
        CU_ASSERT_PTR_NULL(agent_signal_name(0));
}

/* ---- the spec ---- */

static void test_argv_from_ad(void) {
        static const char *const want_v2[] = { "/bin/echo", "one", "two three", "it's", "", "\"dq\"", NONE };
        static const char *const want_v1[] = { "/bin/echo", "hello", "world", NONE };
        static const char *const want_none[] = { "/bin/echo", NONE };
        AgentJobSpec *spec = NULL;
        char why[256];
        ClassAd *ad;

        ad = ad_of("Cmd", "/bin/echo", "Owner", usable_owner(), "Arguments", "one 'two three' 'it''s' '' \"dq\"",
                   "Args", "ignored when Arguments is there", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        strv_is(spec->argv, want_v2, "Arguments");
        agent_jobspec_free(spec);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/echo", "Owner", usable_owner(), "Args", "hello   world", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        strv_is(spec->argv, want_v1, "Args");
        agent_jobspec_free(spec);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/echo", "Owner", usable_owner(), NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        strv_is(spec->argv, want_none, "no arguments");
        agent_jobspec_free(spec);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/echo", "Owner", usable_owner(), "Arguments", "a 'b", NULL);
        spec = NULL;
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        CU_ASSERT_PTR_NULL(spec);
        GLEAN_TEST_CHECK(strstr(why, "Arguments") && strstr(why, "unbalanced"), "why: %s", why);
        classad_free(ad);

        /* Arguments of another type */
        CU_ASSERT_FATAL(classad_new(&ad) == 0);
        classad_set_string(ad, "Cmd", "/bin/echo");
        classad_set_string(ad, "Owner", usable_owner());
        classad_set_int(ad, "Arguments", 3);
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "Arguments") != NULL, "why: %s", why);
        classad_free(ad);
}

/* What the submit parser writes comes back as the words that were meant. */
static void test_submit_round_trip(void) {
        static const struct {
                const char *submit;
                const char *argv[8];
                const char *env[4]; /* NAME=value expected in the environment */
        } cases[] = {
                { "arguments = \"one 'two three' 'it''s' '' \"\"dq\"\"\"\n",
                  { "/opt/x/prog", "one", "two three", "it's", "", "\"dq\"", NONE }, { NULL } },
                { "arguments = hello   \\\"world\\\"\n", { "/opt/x/prog", "hello", "\"world\"", NONE }, { NULL } },
                { "arguments = \"'a  b'c 'x''y'\"\n", { "/opt/x/prog", "a  bc", "x'y", NONE }, { NULL } },
                { "environment = \"A=1 B='x y' C='it''s'\"\n", { "/opt/x/prog", NONE },
                  { "A=1", "B=x y", "C=it's", NULL } },
                { "environment = A=1;B=two words\n", { "/opt/x/prog", NONE }, { "A=1", "B=two words", NULL } },
        };
        ConfigSubmitOptions opts = { .cluster_id = 7, .qdate = 1700000000, .owner = usable_owner(), .iwd = "/tmp" };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                AgentJobSpec *spec = NULL;
                ConfigError err = {};
                ClassAd **ads = NULL;
                size_t n = 0;
                char text[1024], why[256], what[64];
                int r;

                snprintf(what, sizeof(what), "row %zu", i);
                snprintf(text, sizeof(text), "executable = /opt/x/prog\ntransfer_executable = false\n%squeue\n",
                         cases[i].submit);
                r = config_submit_parse_string(text, "round-trip.sub", NULL, &opts, &ads, &n, &err);
                GLEAN_TEST_CHECK(r == 0 && n == 1, "%s: submit: %d %s", what, r, err.msg);
                if (r < 0)
                        continue;
                r = spec_of(ads[0], NULL, &spec, why, sizeof(why));
                GLEAN_TEST_CHECK(r == 0, "%s: spec: %d %s", what, r, why);
                if (r == 0) {
                        strv_is(spec->argv, cases[i].argv, what);
                        for (size_t k = 0; cases[i].env[k]; k++) {
                                const char *e = cases[i].env[k], *eq = strchr(e, '=');
                                char name[64];
                                const char *got;

                                snprintf(name, sizeof(name), "%.*s", (int) (eq - e), e);
                                got = env_get(spec->envp, name);
                                GLEAN_TEST_CHECK(got && strcmp(got, eq + 1) == 0, "%s: %s is '%s', want '%s'", what,
                                                 name, got ? got : "(unset)", eq + 1);
                        }
                }
                agent_jobspec_free(spec);
                config_submit_free(ads, n);
        }
}

static void test_paths(void) {
        AgentJobSpec *spec = NULL;
        char why[256];
        ClassAd *ad;

        ad = ad_of("Cmd", "bin/prog", "Owner", usable_owner(), "Iwd", "/data/work", "In", "/dev/null", "Out",
                   "out.txt", "Err", "/logs/err.txt", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(spec->argv[0], "/data/work/bin/prog");
        CU_ASSERT_STRING_EQUAL(spec->iwd, "/data/work");
        CU_ASSERT_PTR_NULL(spec->in);
        CU_ASSERT_STRING_EQUAL(spec->out, "/data/work/out.txt");
        CU_ASSERT_STRING_EQUAL(spec->err, "/logs/err.txt");
        GLEAN_TEST_CHECK(strncmp(spec->scratch, PARENT "/dir_" SLOT "_", strlen(PARENT "/dir_" SLOT "_")) == 0,
                         "scratch '%s'", spec->scratch);
        agent_jobspec_free(spec);
        classad_free(ad);

        ad = ad_of("Cmd", "./prog", "Owner", usable_owner(), "Iwd", "/data/work/", "In", "./in", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(spec->argv[0], "/data/work/prog");
        CU_ASSERT_STRING_EQUAL(spec->in, "/data/work/in");
        CU_ASSERT_PTR_NULL(spec->out);
        CU_ASSERT_PTR_NULL(spec->err);
        agent_jobspec_free(spec);
        classad_free(ad);

        /* No Iwd: the scratch directory, and relative names live there. */
        ad = ad_of("Cmd", "prog", "Owner", usable_owner(), "Out", "o", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(spec->iwd, spec->scratch);
        GLEAN_TEST_CHECK(strncmp(spec->argv[0], spec->scratch, strlen(spec->scratch)) == 0 &&
                         strcmp(spec->argv[0] + strlen(spec->scratch), "/prog") == 0, "argv[0] '%s'", spec->argv[0]);
        agent_jobspec_free(spec);
        classad_free(ad);

        /* Two specs never share a scratch directory. */
        AgentJobSpec *other = NULL;
        ad = ad_of("Cmd", "/bin/true", "Owner", usable_owner(), NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &other, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_NOT_EQUAL(spec->scratch, other->scratch);
        agent_jobspec_free(spec);
        agent_jobspec_free(other);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/true", "Owner", usable_owner(), "Iwd", "relative/dir", NULL);
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "Iwd") != NULL, "why: %s", why);
        classad_free(ad);

        /* bad calls */
        ad = ad_of("Cmd", "/bin/true", "Owner", usable_owner(), NULL);
        CU_ASSERT_EQUAL(agent_jobspec_from_ad(ad, NULL, "relative", SLOT, &spec, why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(agent_jobspec_from_ad(ad, NULL, PARENT, "../x", &spec, why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(agent_jobspec_from_ad(ad, NULL, PARENT, NULL, &spec, NULL, 0), -EINVAL);
        classad_free(ad);
}

static void test_missing_cmd(void) {
        AgentJobSpec *spec = NULL;
        char why[256];
        ClassAd *ad;

        ad = ad_of("Owner", usable_owner(), "Arguments", "x", NULL);
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        CU_ASSERT_PTR_NULL(spec);
        GLEAN_TEST_CHECK(strstr(why, "Cmd") != NULL, "why: %s", why);
        classad_free(ad);

        ad = ad_of("Cmd", "", "Owner", usable_owner(), NULL);
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "Cmd") != NULL, "why: %s", why);
        classad_free(ad);

        CU_ASSERT_FATAL(classad_new(&ad) == 0);
        classad_set_int(ad, "Cmd", 42);
        classad_set_string(ad, "Owner", usable_owner());
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "Cmd") != NULL, "why: %s", why);
        classad_free(ad);
}

static void test_environment(void) {
        AgentJobSpec *spec = NULL;
        char why[256];
        ClassAd *ad;

        ad = ad_of("Cmd", "/bin/env", "Owner", usable_owner(), "Environment",
                   "FOO=bar BAZ='a b' _CONDOR_SLOT=bogus EMPTY=", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "FOO"), "bar");
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "BAZ"), "a b");
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "EMPTY"), "");
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "_CONDOR_SLOT"), SLOT);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "_CONDOR_SCRATCH_DIR"), spec->scratch);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "GLEAN_SCRATCH_DIR"), spec->scratch);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "TMPDIR"), spec->scratch);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "USER"), spec->user);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "PATH"), "/usr/local/bin:/usr/bin:/bin");
        CU_ASSERT_PTR_NOT_NULL(env_get(spec->envp, "HOME"));
        /* nothing of the agent's own environment leaks in */
        setenv("GLEAN_TEST_LEAK", "1", 1);
        CU_ASSERT_PTR_NULL(env_get(spec->envp, "GLEAN_TEST_LEAK"));
        agent_jobspec_free(spec);
        classad_free(ad);

        /* the job's own PATH, HOME, TMPDIR win */
        ad = ad_of("Cmd", "/bin/env", "Owner", usable_owner(), "Environment", "PATH=/opt/bin HOME=/h TMPDIR=/t",
                   NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "PATH"), "/opt/bin");
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "HOME"), "/h");
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "TMPDIR"), "/t");
        agent_jobspec_free(spec);
        classad_free(ad);

        /* old syntax, with EnvDelim; Environment wins over Env */
        ad = ad_of("Cmd", "/bin/env", "Owner", usable_owner(), "Env", "A=1|B=2;3", "EnvDelim", "|", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "A"), "1");
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "B"), "2;3");
        agent_jobspec_free(spec);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/env", "Owner", usable_owner(), "Env", "A=1", "Environment", "A=2", NULL);
        CU_ASSERT_FATAL(spec_of(ad, NULL, &spec, why, sizeof(why)) == 0);
        CU_ASSERT_STRING_EQUAL(env_get(spec->envp, "A"), "2");
        agent_jobspec_free(spec);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/env", "Owner", usable_owner(), "Environment", "GOOD=1 BAD", NULL);
        spec = NULL;
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        CU_ASSERT_PTR_NULL(spec);
        GLEAN_TEST_CHECK(strstr(why, "Environment") && strstr(why, "BAD"), "why: %s", why);
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/env", "Owner", usable_owner(), "Env", "A=1;B", NULL);
        CU_ASSERT_EQUAL(spec_of(ad, NULL, &spec, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "Env") != NULL, "why: %s", why);
        classad_free(ad);
}

static void test_kill_sig(void) {
        static const struct {
                const char *text; /* the KillSig expression; NULL: absent */
                int want;         /* signal, or -EINVAL */
        } cases[] = {
                { NULL, SIGTERM },       { "\"SIGINT\"", SIGINT }, { "\"KILL\"", SIGKILL }, { "\"9\"", SIGKILL },
                { "3", SIGQUIT },        { "\"SIGFOO\"", -EINVAL }, { "0", -EINVAL },       { "true", -EINVAL },
                { "\"\"", -EINVAL },     { "1000", -EINVAL },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                AgentJobSpec *spec = NULL;
                ClassAd *ad = ad_of("Cmd", "/bin/true", "Owner", usable_owner(), NULL);
                char why[256] = "";
                int r;

                CaError caerr = {};

                if (cases[i].text)
                        CU_ASSERT_FATAL(classad_set_expr_text(ad, "KillSig", cases[i].text, CA_MODE_OLD, &caerr) == 0);
                r = spec_of(ad, NULL, &spec, why, sizeof(why));
                if (cases[i].want < 0)
                        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "KillSig"), "KillSig %s: %d '%s', want -EINVAL",
                                         cases[i].text, r, why);
                else
                        GLEAN_TEST_CHECK(r == 0 && spec->kill_sig == cases[i].want, "KillSig %s: %d %d, want %d",
                                         cases[i].text ? cases[i].text : "(absent)", r, r == 0 ? spec->kill_sig : 0,
                                         cases[i].want);
                agent_jobspec_free(spec);
                classad_free(ad);
        }
}

static void test_umask(void) {
        static const struct {
                const char *text; /* the Umask expression; NULL: absent */
                int want;         /* the umask, -1: none (022), or -EINVAL */
        } cases[] = {
                { NULL, -1 },         { "18", 022 },         { "63", 077 },          { "0", 0 },
                { "511", 0777 },      { "512", -EINVAL },    { "-1", -EINVAL },      { "\"077\"", -EINVAL },
                { "2.5", -EINVAL },   { "undefined", -1 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                AgentJobSpec *spec = NULL;
                ClassAd *ad = ad_of("Cmd", "/bin/true", "Owner", usable_owner(), NULL);
                char why[256] = "";
                CaError caerr = {};
                int r;

                if (cases[i].text)
                        CU_ASSERT_FATAL(classad_set_expr_text(ad, "Umask", cases[i].text, CA_MODE_OLD, &caerr) == 0);
                r = spec_of(ad, NULL, &spec, why, sizeof(why));
                if (cases[i].want == -EINVAL)
                        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "Umask"), "Umask %s: %d '%s', want -EINVAL",
                                         cases[i].text, r, why);
                else if (cases[i].want < 0)
                        GLEAN_TEST_CHECK(r == 0 && !spec->has_umask, "Umask %s: %d, want none",
                                         cases[i].text ? cases[i].text : "(absent)", r);
                else
                        GLEAN_TEST_CHECK(r == 0 && spec->has_umask && spec->umask == (mode_t) cases[i].want,
                                         "Umask %s: %d %o, want %o", cases[i].text, r,
                                         r == 0 ? (unsigned) spec->umask : 0u, (unsigned) cases[i].want);
                agent_jobspec_free(spec);
                classad_free(ad);
        }
}

/* Identity attributes are literal strings: the one reading is the value. */
static void test_identity_literals(void) {
        static const struct {
                const char *attr, *text;
                bool ok;
        } cases[] = {
                { "Owner", "\"@OWNER@\"", true },
                { "Owner", "ifThenElse(random(2) == 0, \"@OWNER@\", \"daemon\")", false },
                { "Owner", "strcat(\"@OWNER@\", \"\")", false },
                { "Owner", "ifThenElse(true, \"@OWNER@\", \"x\")", false },
                { "Owner", "OtherAttr", false },
                { "Owner", "undefined", false },
                { "Owner", "42", false },
                { "User", "\"a@b\"", true },
                { "User", "strcat(\"a\", \"@b\")", false },
                { "AcctGroup", "\"group_a\"", true },
                { "AcctGroup", "toLower(\"GROUP_A\")", false },
                { "AcctGroupUser", "ifThenElse(random(2) == 0, \"a\", \"b\")", false },
                { "AccountingGroup", "\"group_a.x\"", true },
                { "AccountingGroup", "strcat(\"group_a\", \".x\")", false },
                { "Owner", "\"with \\\"quote\\\" and \\\\ slash\"", true },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                AgentJobSpec *spec = NULL;
                ClassAd *ad = ad_of("Cmd", "/bin/true", "Owner", usable_owner(), "OtherAttr", usable_owner(), NULL);
                char text[256], why[256] = "";
                CaError caerr = {};
                const char *at = strstr(cases[i].text, "@OWNER@");
                if (at)
                        snprintf(text, sizeof(text), "%.*s%s%s", (int) (at - cases[i].text), cases[i].text,
                                 usable_owner(), at + 7);
                else
                        snprintf(text, sizeof(text), "%s", cases[i].text);
                CU_ASSERT_FATAL(classad_set_expr_text(ad, cases[i].attr, text, CA_MODE_OLD, &caerr) == 0);
                int c = agent_job_identity_check(ad, why, sizeof(why));
                if (cases[i].ok)
                        GLEAN_TEST_CHECK(c == 0, "%s = %s: refused: %s", cases[i].attr, text, why);
                else
                        GLEAN_TEST_CHECK(c == -EINVAL && strstr(why, cases[i].attr) && strstr(why, "literal string"),
                                         "%s = %s: %d '%s', want a refusal naming it", cases[i].attr, text, c, why);
                /* The spec refuses what the check refuses (a literal Owner "with ..." names no account: skipped). */
                if (strcmp(cases[i].attr, "Owner") == 0 && !cases[i].ok) {
                        int r = spec_of(ad, NULL, &spec, why, sizeof(why));
                        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "literal string"), "spec of Owner = %s: %d '%s'",
                                         text, r, why);
                        agent_jobspec_free(spec);
                }
                if (cases[i].ok && strcmp(cases[i].attr, "Owner") == 0 && at) {
                        int r = spec_of(ad, NULL, &spec, why, sizeof(why));
                        GLEAN_TEST_CHECK(r == 0 && spec->owner && strcmp(spec->owner, usable_owner()) == 0,
                                         "spec of a literal Owner: %d '%s'", r, why);
                        agent_jobspec_free(spec);
                }
                classad_free(ad);
        }
        /* Absent: no Owner, no refusal. */
        ClassAd *ad = ad_of("Cmd", "/bin/true", NULL);
        char *v = (char *) 1;
        char why[256] = "";
        CU_ASSERT(agent_job_literal_string(ad, "Owner", &v, why, sizeof(why)) == 0 && v == NULL);
        CU_ASSERT(agent_job_identity_check(ad, why, sizeof(why)) == 0);
        classad_free(ad);
}

/* ---- accounts ---- */

typedef struct OwnerCase {
        const char *owner;      /* NULL: no Owner attribute */
        AgentRunAs runas;
        const char *want_user;  /* NULL: an error */
        int want_r;
} OwnerCase;

static void check_owner_cases(const OwnerCase *cases, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const OwnerCase *c = &cases[i];
                AgentJobSpec *spec = NULL;
                ClassAd *ad = ad_of("Cmd", "/bin/true", NULL);
                char why[256] = "";
                int r;

                if (c->owner)
                        classad_set_string(ad, "Owner", c->owner);
                r = spec_of(ad, &c->runas, &spec, why, sizeof(why));
                if (c->want_user) {
                        struct passwd *pw = getpwnam(c->want_user);

                        GLEAN_TEST_CHECK(r == 0 && strcmp(spec->user, c->want_user) == 0,
                                         "owner row %zu (%s): %d %s (%s), want %s", i, c->owner ? c->owner : "absent", r,
                                         r == 0 ? spec->user : "-", why, c->want_user);
                        if (r == 0 && pw) {
                                CU_ASSERT_EQUAL(spec->uid, pw->pw_uid);
                                CU_ASSERT_EQUAL(spec->gid, pw->pw_gid);
                                CU_ASSERT_NOT_EQUAL(spec->uid, 0);
                                for (size_t k = 0; k < spec->n_groups; k++)
                                        CU_ASSERT_NOT_EQUAL(spec->groups[k], 0);
                        }
                } else
                        GLEAN_TEST_CHECK(r == c->want_r && why[0] && strstr(why, "Owner"),
                                         "owner row %zu (%s): %d '%s', want %d and a reason naming Owner", i,
                                         c->owner ? c->owner : "absent", r, why, c->want_r);
                agent_jobspec_free(spec);
                classad_free(ad);
        }
}

static void test_owner_as_root(void) {
        const struct passwd *pw;
        char other[64] = "";

        if (geteuid() != 0) {
                printf("(not root: the root owner checks are skipped) ");
                return;
        }
        /* An account other than nobody that is not root, if there is one. */
        static const char *const candidates[] = { "daemon", "bin", "sys", "games", "man", "mail", "www-data" };
        for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]) && !other[0]; i++) {
                pw = getpwnam(candidates[i]);
                if (pw && pw->pw_uid != 0 && pw->pw_gid != 0)
                        snprintf(other, sizeof(other), "%s", candidates[i]);
        }

        const AgentRunAs dflt = { .allow_runas_owner = true };
        const AgentRunAs refuse = { .allow_runas_owner = true, .refuse_unknown_owner = true };
        const AgentRunAs no_owner = { .allow_runas_owner = false };
        const AgentRunAs slot_root = { .slot_user = "root", .allow_runas_owner = true };
        const AgentRunAs slot_missing = { .slot_user = "no-such-user-glean", .allow_runas_owner = true };
        const OwnerCase cases[] = {
                { "nobody", dflt, "nobody", 0 },
                { "root", dflt, "nobody", 0 },                /* never root: the slot user instead */
                { "root", refuse, "nobody", 0 },              /* root is known, just not usable */
                { "no-such-user-glean", dflt, "nobody", 0 },  /* unknown: the slot user */
                { "no-such-user-glean", refuse, NULL, -ENOENT },
                { NULL, dflt, "nobody", 0 },
                { NULL, refuse, NULL, -ENOENT },
                { "root", slot_root, NULL, -EPERM },          /* no fallback */
                { "no-such-user-glean", slot_root, NULL, -EPERM },
                { "root", slot_missing, NULL, -ENOENT },
                { other[0] ? other : "nobody", dflt, other[0] ? other : "nobody", 0 },
                { other[0] ? other : "nobody", no_owner, "nobody", 0 }, /* STARTER_ALLOW_RUNAS_OWNER = false */
        };
        check_owner_cases(cases, sizeof(cases) / sizeof(cases[0]));

        if (other[0]) {
                const AgentRunAs slot_other = { .slot_user = other, .allow_runas_owner = true };
                const OwnerCase more[] = { { "root", slot_other, other, 0 } };
                check_owner_cases(more, 1);
        }
}

/* Checks as an agent that is not root; returns a bit per failed check. */
static int non_root_checks(const char *self) {
        const AgentRunAs dflt = { .allow_runas_owner = true };
        AgentJobSpec *spec = NULL;
        char why[256];
        ClassAd *ad;
        int failed = 0, r;

        ad = ad_of("Cmd", "/bin/true", "Owner", self, NULL);
        r = spec_of(ad, &dflt, &spec, why, sizeof(why));
        if (r != 0 || strcmp(spec->user, self) != 0 || spec->uid != geteuid())
                failed |= 1;
        agent_jobspec_free(spec);
        spec = NULL;
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/true", "Owner", strcmp(self, "root") == 0 ? "nobody" : "root", NULL);
        r = spec_of(ad, &dflt, &spec, why, sizeof(why));
        if (r != -EPERM || !strstr(why, "Owner"))
                failed |= 2;
        agent_jobspec_free(spec);
        spec = NULL;
        classad_free(ad);

        ad = ad_of("Cmd", "/bin/true", NULL);
        r = spec_of(ad, &dflt, &spec, why, sizeof(why));
        if (r != 0 || spec->uid != geteuid())
                failed |= 4;
        agent_jobspec_free(spec);
        classad_free(ad);
        return failed;
}

static void test_owner_as_non_root(void) {
        struct passwd *pw;
        int status = 0;
        pid_t pid;

        if (geteuid() != 0) {
                pw = getpwuid(geteuid());
                CU_ASSERT_FATAL(pw != NULL);
                int failed = non_root_checks(pw->pw_name);
                GLEAN_TEST_CHECK(failed == 0, "non-root checks failed: mask %d", failed);
                return;
        }
        /* As root: the same checks in a child that became nobody. */
        pw = getpwnam("nobody");
        CU_ASSERT_FATAL(pw != NULL);
        uid_t uid = pw->pw_uid;
        gid_t gid = pw->pw_gid;
        fflush(NULL);
        pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
                if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
                        _exit(100);
                _exit(non_root_checks("nobody"));
        }
        CU_ASSERT_FATAL(waitpid(pid, &status, 0) == pid);
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "non-root checks (as nobody) failed: status %d",
                         status);
}

static CU_TestInfo syntax_tests[] = {
        { "args_v2", test_args_v2 },
        { "args_v1", test_args_v1 },
        { "env", test_env_syntaxes },
        { "signal_names", test_signal_names },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo spec_tests[] = {
        { "argv", test_argv_from_ad },
        { "submit_round_trip", test_submit_round_trip },
        { "paths", test_paths },
        { "missing_cmd", test_missing_cmd },
        { "environment", test_environment },
        { "kill_sig", test_kill_sig },
        { "umask", test_umask },
        { "identity attributes are literal strings", test_identity_literals },
        { "owner_as_root", test_owner_as_root },
        { "owner_as_non_root", test_owner_as_non_root },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "syntax", NULL, NULL, NULL, NULL, syntax_tests },
        { "jobspec", NULL, NULL, NULL, NULL, spec_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

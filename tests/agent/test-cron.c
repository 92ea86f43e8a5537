/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cron.c — the startd cron (agent/cron.h): the knob reader (a table
 * of good configurations, a table of broken ones each with the file and
 * line it must name, the unhonoured knobs warned), the output parser (good
 * output, '-' separators with tags and update:, per-slot ads, and hostile
 * output: past 64 KiB, lines past 8 KiB, NUL bytes, more than 256
 * attributes, protected attributes, malformed expressions), the merge into
 * slot ads and out again, the next-start rule, and a real shell script run
 * through the runner on an sd-event loop (as nobody when the test runs as
 * root) whose attributes end up in a slot ad.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cron.h"
#include "config.h"
#include "test-util.h"

/* ---- helpers ---- */

static Config *load(const char *text) {
        Config *cfg = NULL;
        ConfigError err = { 0 };
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) >= 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "cron.conf", &err) >= 0, "load: %s", err.msg);
        return cfg;
}

typedef struct Ads {
        AgentCronAd *ad[64];
        size_t n;
} Ads;

static void collect(void *userdata, AgentCronAd *ad) {
        Ads *a = userdata;
        if (a->n < 64)
                a->ad[a->n++] = ad;
        else
                agent_cron_ad_free(ad);
}

static void ads_free(Ads *a) {
        for (size_t i = 0; i < a->n; i++)
                agent_cron_ad_free(a->ad[i]);
        a->n = 0;
}

static int64_t ad_int(const ClassAd *ad, const char *name) {
        int64_t v = -999;
        (void) classad_eval_int(ad, name, CA_MODE_OLD, &v);
        return v;
}

/* ---- the knobs ---- */

static void test_knobs_good(void) {
        Config *cfg = load("STARTD_CRON_JOBLIST = date, test\n"
                           "STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) foo\n"
                           "STARTD_CRON_DATE_EXECUTABLE = /usr/local/bin/date\n"
                           "STARTD_CRON_DATE_PERIOD = 15s\n"
                           "STARTD_CRON_TEST_MODE = OneShot\n"
                           "STARTD_CRON_TEST_EXECUTABLE = /m/test\n"
                           "STARTD_CRON_TEST_ARGS = abc 123\n"
                           "STARTD_CRON_TEST_PREFIX = test_\n"
                           "STARTD_CRON_TEST_KILL = True\n"
                           "STARTD_CRON_TEST_SLOTS = 1, 3\n"
                           "STARTD_CRON_TEST_ENV = A=1;B=two\n"
                           "STARTD_CRON_FOO_EXECUTABLE = /m/foo\n"
                           "STARTD_CRON_FOO_MODE = waitforexit\n"
                           "STARTD_CRON_FOO_PERIOD = 10m\n"
                           "STARTD_CRON_FOO_JOB_LOAD = 0.2\n"
                           "STARTD_CRON_FOO_ARGS = \"'a b' \"\"c\"\"\"\n"
                           "STARTD_CRON_FOO_ENV = \"X='1 2' Y=3\"\n"
                           "STARTD_CRON_FOO_CWD = /tmp\n"
                           "STARTD_CRON_MAX_JOB_LOAD = 0.2\n"
                           "STARTD_CRON_AUTOPUBLISH = If_Changed\n");
        AgentCronTable *t = NULL;
        ConfigError err = { 0 };
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(t->n == 3, "3 jobs, got %zu", t->n);
        const AgentCronJob *d = &t->jobs[0], *x = &t->jobs[1], *f = &t->jobs[2];
        CU_ASSERT_STRING_EQUAL(d->name, "date");
        CU_ASSERT_EQUAL(d->mode, AGENT_CRON_PERIODIC);
        CU_ASSERT_EQUAL(d->period, 15);
        CU_ASSERT_STRING_EQUAL(d->argv[0], "date");
        CU_ASSERT_PTR_NULL(d->argv[1]);
        CU_ASSERT_STRING_EQUAL(d->prefix, "");
        CU_ASSERT_DOUBLE_EQUAL(d->job_load, 0.01, 1e-12);
        CU_ASSERT_STRING_EQUAL(d->file, "cron.conf");
        CU_ASSERT_EQUAL(d->line, 3);
        CU_ASSERT_EQUAL(x->mode, AGENT_CRON_ONE_SHOT);
        CU_ASSERT_EQUAL(x->period, 0);
        CU_ASSERT_STRING_EQUAL(x->argv[1], "abc");
        CU_ASSERT_STRING_EQUAL(x->argv[2], "123");
        CU_ASSERT_STRING_EQUAL(x->prefix, "test_");
        CU_ASSERT(x->kill);
        CU_ASSERT_EQUAL(x->n_slots, 2);
        CU_ASSERT_EQUAL(x->slots[1], 3);
        CU_ASSERT_STRING_EQUAL(x->env[0], "A=1");
        CU_ASSERT_STRING_EQUAL(x->env[1], "B=two");
        CU_ASSERT_EQUAL(f->mode, AGENT_CRON_WAIT_FOR_EXIT);
        CU_ASSERT_EQUAL(f->period, 600);
        CU_ASSERT_DOUBLE_EQUAL(f->job_load, 0.2, 1e-12);
        CU_ASSERT_STRING_EQUAL(f->argv[1], "a b");
        CU_ASSERT_STRING_EQUAL(f->argv[2], "\"c\"");
        CU_ASSERT_STRING_EQUAL(f->env[0], "X=1 2");
        CU_ASSERT_STRING_EQUAL(f->env[1], "Y=3");
        CU_ASSERT_STRING_EQUAL(f->cwd, "/tmp");
        CU_ASSERT_DOUBLE_EQUAL(t->max_job_load, 0.2, 1e-12);
        CU_ASSERT_EQUAL(t->autopublish, AGENT_CRON_PUBLISH_IF_CHANGED);
        CU_ASSERT_STRING_EQUAL(t->user, "nobody");
        CU_ASSERT_STRING_EQUAL(t->user_at, ""); /* the default: nothing to warn of as non-root */
        agent_cron_table_free(t);
        config_free(cfg);

        /* STARTD_CRON_USER set: where, for the warning a non-root agent gives */
        cfg = load("STARTD_CRON_JOBLIST = a\nSTARTD_CRON_a_EXECUTABLE = /bin/true\nSTARTD_CRON_USER = daemon\n"
                   "STARTD_CRON_a_PERIOD = 60\n");
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read: %s", err.msg);
        CU_ASSERT_STRING_EQUAL(t->user, "daemon");
        CU_ASSERT_STRING_EQUAL(t->user_at, "cron.conf:3");
        agent_cron_table_free(t);
        config_free(cfg);

        /* HTCondor's templates (FEATURE : StartdCronOneShot, ...Continuous)
         * as they expand: RECONFIG_RERUN without a warning, PERIOD 0. */
        cfg = load("STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) cloud\n"
                   "STARTD_CRON_cloud_MODE=OneShot\nSTARTD_CRON_cloud_KILL=true\n"
                   "STARTD_CRON_cloud_RECONFIG_RERUN=true\nSTARTD_CRON_cloud_EXECUTABLE=/usr/libexec/cloud\n"
                   "STARTD_CRON_cloud_PREFIX = Cloud\n"
                   "STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) stream\n"
                   "STARTD_CRON_stream_MODE=WaitForExit\nSTARTD_CRON_stream_PERIOD=0\n"
                   "STARTD_CRON_stream_EXECUTABLE=/usr/libexec/stream\n");
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "templates: %s", err.msg);
        CU_ASSERT(t->n == 2 && t->jobs[0].mode == AGENT_CRON_ONE_SHOT && t->jobs[1].period == 0);
        char **w = NULL;
        CU_ASSERT_EQUAL(config_warnings(cfg, &w), 0);
        config_strv_free(w);
        CU_ASSERT_EQUAL(agent_cron_next_start(&t->jobs[1], 100, 100, false, 100), 101); /* not a busy loop */
        agent_cron_table_free(t);
        config_free(cfg);

        /* None configured: an empty table, defaults. */
        cfg = load("");
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read empty");
        CU_ASSERT_EQUAL(t->n, 0);
        CU_ASSERT_DOUBLE_EQUAL(t->max_job_load, 0.1, 1e-12);
        CU_ASSERT_EQUAL(t->autopublish, AGENT_CRON_PUBLISH_NEVER);
        agent_cron_table_free(t);
        config_free(cfg);
}

static void test_knobs_bad(void) {
        static const struct {
                const char *text;
                int line;          /* the line err must name */
                const char *says;  /* and a word of its reason */
        } rows[] = {
                { "STARTD_CRON_JOBLIST = a\n", 1, "no STARTD_CRON_A_EXECUTABLE" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = bin/x\nSTARTD_CRON_A_PERIOD = 1\n", 2,
                  "absolute" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = Hourly\n", 3,
                  "unknown mode" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\n", 1, "no STARTD_CRON_A_PERIOD" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_PERIOD = 5d\n", 3,
                  "period" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_PERIOD = 0\n", 3, "period" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_PERIOD = -5\n", 3,
                  "period" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_PERIOD = 99999999999999999999\n",
                  3, "period" },
                { "STARTD_CRON_JOBLIST = a a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n", 1, "twice" },
                { "STARTD_CRON_JOBLIST = a-b\n", 1, "letters" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_PREFIX = my-\n", 4, "prefix" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_ARGS = \"unterminated\n", 4, "unterminated" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_ARGS = \"'open\"\n", 4, "ARGS" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_ENV = =novalue\n", 4, "ENV" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_CWD = tmp\n", 4, "absolute" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_KILL = maybe\n", 4, "boolean" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_JOB_LOAD = lots\n", 4, "number" },
                { "STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                  "STARTD_CRON_A_SLOTS = 1, slot2\n", 4, "slot number" },
                { "STARTD_CRON_AUTOPUBLISH = sometimes\n", 1, "If_Changed" },
                { "\nSTARTD_CRON_MAX_JOB_LOAD = -1\n", 2, "number" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                Config *cfg = load(rows[i].text);
                AgentCronTable *t = NULL;
                ConfigError err = { 0 };
                int r = agent_cron_read(cfg, &t, &err);
                GLEAN_TEST_CHECK(r == -EINVAL, "row %zu: gave %d", i, r);
                GLEAN_TEST_CHECK(!strcmp(err.file, "cron.conf") && err.line == rows[i].line,
                                 "row %zu: at %s:%d, want cron.conf:%d (%s)", i, err.file, err.line, rows[i].line,
                                 err.msg);
                GLEAN_TEST_CHECK(strstr(err.msg, rows[i].says) != NULL, "row %zu: '%s' lacks '%s'", i, err.msg,
                                 rows[i].says);
                CU_ASSERT_PTR_NULL(t);
                config_free(cfg);
        }
}

static void test_knobs_warned(void) {
        Config *cfg = load("STARTD_CRON_JOBLIST = a b\n"
                           "STARTD_CRON_A_EXECUTABLE = /x\n"
                           "STARTD_CRON_A_MODE = OneShot\n"
                           "STARTD_CRON_A_PERIOD = 5m\n"
                           "STARTD_CRON_A_CONDITION = true\n"
                           "STARTD_CRON_B_EXECUTABLE = /y\n"
                           "STARTD_CRON_B_MODE = OnDemand\n"
                           "STARTD_CRON_B_METRICS = SUM:X\n");
        AgentCronTable *t = NULL;
        ConfigError err = { 0 };
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read: %s", err.msg);
        char **w = NULL;
        int n = config_warnings(cfg, &w);
        GLEAN_TEST_CHECK(n == 4, "4 warnings, got %d", n);
        static const char *const want[] = { "cron.conf:4:", "cron.conf:5:", "cron.conf:7:", "cron.conf:8:" };
        for (size_t i = 0; i < 4; i++) {
                bool found = false;
                for (char **m = w; m && *m; m++)
                        if (!strncmp(*m, want[i], strlen(want[i])))
                                found = true;
                GLEAN_TEST_CHECK(found, "a warning at %s", want[i]);
        }
        config_strv_free(w);
        agent_cron_table_free(t);
        config_free(cfg);
}

/* The manual's two configuration blocks (tests/config/htcondor/manual/). */
static void test_knobs_manual(void) {
        Config *cfg = NULL;
        ConfigError err = { 0 };
        AgentCronTable *t = NULL;
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) >= 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(
                config_load_file(cfg, "tests/config/htcondor/manual/ep-policy-configuration-43.conf", &err) >= 0,
                "load: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(t->n == 3, "test, date, foo: %zu", t->n);
        CU_ASSERT_STRING_EQUAL(t->jobs[0].name, "test");
        CU_ASSERT_EQUAL(t->jobs[0].mode, AGENT_CRON_ONE_SHOT);
        CU_ASSERT_STRING_EQUAL(t->jobs[0].prefix, "test_");
        CU_ASSERT(t->jobs[0].kill && t->jobs[0].n_slots == 1 && t->jobs[0].slots[0] == 1);
        CU_ASSERT_STRING_EQUAL(t->jobs[0].argv[1], "abc");
        CU_ASSERT_EQUAL(t->jobs[1].period, 15);
        CU_ASSERT_EQUAL(t->jobs[2].period, 600);
        CU_ASSERT_STRING_EQUAL(t->jobs[2].prefix, "Foo");
        CU_ASSERT_DOUBLE_EQUAL(t->max_job_load, 0.2, 1e-12);
        CU_ASSERT(t->log_non_zero_exit);
        CU_ASSERT_PTR_NOT_NULL(t->config_val);
        agent_cron_table_free(t);
        config_free(cfg);

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) >= 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(
                config_load_file(cfg, "tests/config/htcondor/manual/configuration-hooks-01.conf", &err) >= 0,
                "load: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read: %s", err.msg);
        CU_ASSERT(t->n == 1 && t->jobs[0].period == 10);
        char **w = NULL;
        config_warnings(cfg, &w);
        bool metrics = false;
        for (char **m = w; m && *m; m++)
                if (strstr(*m, "configuration-hooks-01.conf:8:") && strstr(*m, "METRICS"))
                        metrics = true;
        GLEAN_TEST_CHECK(metrics, "METRICS warned with its line");
        config_strv_free(w);
        agent_cron_table_free(t);
        config_free(cfg);
}

static void test_period(void) {
        static const struct {
                const char *in;
                int r;
                int64_t v;
        } rows[] = {
                { "30", 0, 30 }, { "30s", 0, 30 }, { "5m", 0, 300 }, { "2H", 0, 7200 }, { " 7 ", 0, 7 },
                { "", -EINVAL, 0 }, { "m", -EINVAL, 0 }, { "5x", -EINVAL, 0 }, { "5mm", -EINVAL, 0 },
                { "-1", -EINVAL, 0 }, { "1.5m", -EINVAL, 0 }, { "9223372036854775807h", -EINVAL, 0 },
                { "2147483647", 0, 2147483647 }, { "2147483648", -EINVAL, 0 }, { "596524h", -EINVAL, 0 },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                int64_t v = -1;
                int r = agent_cron_parse_period(rows[i].in, &v);
                GLEAN_TEST_CHECK(r == rows[i].r && (r < 0 || v == rows[i].v), "'%s': %d %lld", rows[i].in, r,
                                 (long long) v);
        }
}

/* ---- the output ---- */

static void test_output_good(void) {
        static const char out[] = "Value = 1\n"
                                  "SlotId=1\n"
                                  "-s1\n"
                                  "Value=2\n"
                                  "SlotId = 2\n"
                                  "- s2\n"
                                  "# a comment\n"
                                  "\n"
                                  "Value = 10\r\n"
                                  "Colour = \"blue\"\n"
                                  "Big = p_Value * 2 + 1\n"
                                  "- update:true\n"
                                  "Tail = true";
        Ads a = { 0 };
        AgentCronParseStats st;
        GLEAN_TEST_CHECK_FATAL(agent_cron_parse_text(out, strlen(out), "p_", 1000, collect, &a, &st) == 0, "parse");
        GLEAN_TEST_CHECK_FATAL(a.n == 4, "4 ads, got %zu", a.n);
        CU_ASSERT_STRING_EQUAL(a.ad[0]->tag, "s1");
        CU_ASSERT_EQUAL(ad_int(a.ad[0]->attrs, "p_Value"), 1);
        CU_ASSERT_EQUAL(ad_int(a.ad[0]->attrs, "p_LastUpdate"), 1000);
        /* Prefixed, SlotId is an attribute like any other (HTCondor prefixes the whole line). */
        CU_ASSERT_EQUAL(ad_int(a.ad[0]->attrs, "p_SlotId"), 1);
        CU_ASSERT_STRING_EQUAL(a.ad[1]->tag, "s2");
        CU_ASSERT_STRING_EQUAL(a.ad[2]->tag, "");
        CU_ASSERT_EQUAL(a.ad[2]->update, 1);
        CU_ASSERT_EQUAL(ad_int(a.ad[2]->attrs, "p_Big"), 21);
        char *s = NULL;
        CU_ASSERT(classad_eval_string(a.ad[2]->attrs, "p_Colour", CA_MODE_OLD, &s) >= 0 && s && !strcmp(s, "blue"));
        free(s);
        CU_ASSERT_EQUAL(a.ad[3]->update, -1);
        CU_ASSERT(classad_has(a.ad[3]->attrs, "p_Tail"));
        CU_ASSERT_EQUAL(st.malformed, 0);
        CU_ASSERT_EQUAL(st.attrs, 8);
        ads_free(&a);

        /* Without a prefix the selectors are selectors, not attributes. */
        static const char sel[] = "Value=1\nSlotId=1\n-s1\nValue=3\nSlotMergeConstraint = TARGET.Cpus > 2\n- big\n"
                                  "Name = \"slot2\"\nValue = 4\n-\n";
        GLEAN_TEST_CHECK_FATAL(agent_cron_parse_text(sel, strlen(sel), NULL, 5, collect, &a, &st) == 0, "parse");
        GLEAN_TEST_CHECK_FATAL(a.n == 3, "3 ads, got %zu", a.n);
        CU_ASSERT(!classad_has(a.ad[0]->attrs, "SlotId") && classad_has(a.ad[0]->select, "SlotId"));
        CU_ASSERT(classad_has(a.ad[1]->select, "SlotMergeConstraint"));
        CU_ASSERT(classad_has(a.ad[2]->select, "Name") && !classad_has(a.ad[2]->attrs, "Name"));
        CU_ASSERT_EQUAL(st.refused, 0);
        ads_free(&a);

        /* Nothing but separators: no ad. */
        GLEAN_TEST_CHECK(agent_cron_parse_text("-\n-\n- x\n", 9, NULL, 5, collect, &a, &st) == 0 && a.n == 0,
                         "no ad from separators alone, got %zu", a.n);
        ads_free(&a);
}

static void test_output_hostile(void) {
        AgentCronParser *p_cont = NULL;
        Ads a = { 0 };
        AgentCronParseStats st;

        /* Malformed lines and protected attributes: skipped, counted. */
        static const char bad[] = "Good = 1\n"
                                  "no equals sign\n"
                                  "9Lives = 1\n"
                                  "Broken = (1 +\n"
                                  "Str = \"unterminated\n"
                                  " = 3\n"
                                  "Cpus = 64\n"
                                  "Memory = 1000000\n"
                                  "State = \"Claimed\"\n"
                                  "Requirements = true\n"
                                  "START = true\n"
                                  "TotalCpus = 1\n"
                                  "RemoteUser = \"root\"\n"
                                  "Also = Good + 1\n";
        GLEAN_TEST_CHECK_FATAL(agent_cron_parse_text(bad, strlen(bad), NULL, 5, collect, &a, &st) == 0, "parse");
        GLEAN_TEST_CHECK_FATAL(a.n == 1, "1 ad, got %zu", a.n);
        CU_ASSERT_EQUAL(st.malformed, 5);
        CU_ASSERT_EQUAL(st.refused, 7);
        CU_ASSERT_EQUAL(st.attrs, 2);
        CU_ASSERT_EQUAL(classad_size(a.ad[0]->attrs), 3); /* Good, Also, LastUpdate */
        GLEAN_TEST_CHECK(strstr(st.first_problem, "line 2") != NULL, "first problem: %s", st.first_problem);
        ads_free(&a);

        /* A prefix makes a name harmless: test_Cpus is not Cpus. */
        GLEAN_TEST_CHECK(agent_cron_parse_text("Cpus = 64\n", 10, "test_", 5, collect, &a, &st) == 0 && a.n == 1 &&
                                 classad_has(a.ad[0]->attrs, "test_Cpus") && st.refused == 0,
                         "prefixed Cpus");
        ads_free(&a);

        /* NUL bytes: the line is skipped. */
        static const char nul[] = "A = 1\nB = \"x\0y\"\nC = 2\n";
        GLEAN_TEST_CHECK_FATAL(agent_cron_parse_text(nul, sizeof nul - 1, NULL, 5, collect, &a, &st) == 0, "nul");
        CU_ASSERT_EQUAL(st.malformed, 1);
        CU_ASSERT(a.n == 1 && classad_has(a.ad[0]->attrs, "A") && !classad_has(a.ad[0]->attrs, "B") &&
                  classad_has(a.ad[0]->attrs, "C"));
        ads_free(&a);

        /* A line past 8 KiB: skipped; the next one is read. */
        size_t n = 20000;
        char *big = malloc(n + 64);
        memcpy(big, "Long = \"", 8);
        memset(big + 8, 'x', n - 8);
        strcpy(big + n, "\"\nAfter = 1\n");
        GLEAN_TEST_CHECK_FATAL(agent_cron_parse_text(big, strlen(big), NULL, 5, collect, &a, &st) == 0, "long");
        CU_ASSERT_EQUAL(st.malformed, 1);
        CU_ASSERT(a.n == 1 && classad_has(a.ad[0]->attrs, "After") && !classad_has(a.ad[0]->attrs, "Long"));
        ads_free(&a);
        free(big);

        /* Output past 64 KiB: -E2BIG; what ended before the limit is kept. */
        size_t total = 200000;
        char *flood = malloc(total + 1);
        size_t len = (size_t) snprintf(flood, total, "First = 1\n-\n");
        while (len + 16 < total)
                len += (size_t) snprintf(flood + len, total - len, "X%06zu = 1\n", len);
        int r = agent_cron_parse_text(flood, len, NULL, 5, collect, &a, &st);
        CU_ASSERT_EQUAL(r, -E2BIG);
        CU_ASSERT(st.truncated);
        GLEAN_TEST_CHECK(a.n == 1 && classad_has(a.ad[0]->attrs, "First"), "the ad before the flood, %zu ads", a.n);
        CU_ASSERT(st.lines < 8000);
        ads_free(&a);

        /* More than 256 attributes: the rest is skipped. */
        len = 0;
        for (int i = 0; i < 300; i++)
                len += (size_t) snprintf(flood + len, total - len, "A%d = %d\n", i, i);
        r = agent_cron_parse_text(flood, len, NULL, 5, collect, &a, &st);
        CU_ASSERT_EQUAL(r, 0);
        CU_ASSERT_EQUAL(st.attrs, AGENT_CRON_MAX_ATTRS);
        CU_ASSERT_EQUAL(st.over_attrs, 300 - AGENT_CRON_MAX_ATTRS);
        CU_ASSERT(a.n == 1 && classad_size(a.ad[0]->attrs) == AGENT_CRON_MAX_ATTRS + 1);
        ads_free(&a);
        free(flood);

        /* A continuous (WaitForExit) job: the budget counts from each ad,
         * so 5 ads of 40 KiB each are all read. */
        GLEAN_TEST_CHECK_FATAL(agent_cron_parser_new("", 5, collect, &a, &p_cont) == 0, "parser");
        agent_cron_parser_set_continuous(p_cont);
        char chunk[64];
        int fed = 0;
        for (int round = 0; round < 5; round++) {
                for (int i = 0; i < 2000; i++) {
                        int k = snprintf(chunk, sizeof chunk, "R%d_%04d = %d\n", round, i % 100, i);
                        fed |= agent_cron_parser_feed(p_cont, chunk, (size_t) k);
                }
                fed |= agent_cron_parser_feed(p_cont, "-\n", 2);
        }
        CU_ASSERT_EQUAL(fed, 0);
        CU_ASSERT_EQUAL(a.n, 5);
        CU_ASSERT(!agent_cron_parser_stats(p_cont)->truncated);
        CU_ASSERT(a.n == 5 && ad_int(a.ad[4]->attrs, "LastUpdate") > 1000000000); /* time() */
        /* ... but one ad past 64 KiB is cut all the same. */
        for (int i = 0; i < 8000 && agent_cron_parser_feed(p_cont, "Flood = 1\n", 10) == 0; i++)
                ;
        CU_ASSERT(agent_cron_parser_stats(p_cont)->truncated);
        agent_cron_parser_free(p_cont);
        ads_free(&a);

        /* Fed a byte at a time: the same as all at once. */
        AgentCronParser *p = NULL;
        GLEAN_TEST_CHECK_FATAL(agent_cron_parser_new("", 5, collect, &a, &p) == 0, "parser");
        static const char drip[] = "A = 1\n- one\nB = 2\n";
        for (size_t i = 0; i < sizeof drip - 1; i++)
                CU_ASSERT_EQUAL(agent_cron_parser_feed(p, drip + i, 1), 0);
        CU_ASSERT_EQUAL(a.n, 1);
        CU_ASSERT_EQUAL(agent_cron_parser_finish(p), 0);
        CU_ASSERT_EQUAL(a.n, 2);
        agent_cron_parser_free(p);
        ads_free(&a);
}

/* ---- the merge ---- */

static ClassAd *slot_ad(unsigned id, unsigned type, const char *name) {
        ClassAd *ad = NULL;
        classad_new(&ad);
        classad_set_string(ad, "Name", name);
        classad_set_int(ad, "SlotID", id);
        classad_set_int(ad, "SlotTypeID", type);
        classad_set_int(ad, "Cpus", id == 3 ? 4 : 1);
        classad_set_string(ad, "HasThing", "default");
        classad_set_real(ad, "LoadAvg", 0.5);
        classad_set_int(ad, "OwnAttr", 5);
        return ad;
}

static void put_text(AgentCronStore *st, size_t job, const char *text) {
        Ads a = { 0 };
        GLEAN_TEST_CHECK_FATAL(agent_cron_parse_text(text, strlen(text), NULL, 7, collect, &a, NULL) == 0, "parse");
        agent_cron_store_begin(st, job);
        for (size_t i = 0; i < a.n; i++)
                GLEAN_TEST_CHECK_FATAL(agent_cron_store_put(st, job, a.ad[i], NULL) == 0, "put");
        agent_cron_store_end(st, job);
}

static void test_merge(void) {
        AgentCronStore *st = NULL;
        GLEAN_TEST_CHECK_FATAL(agent_cron_store_new(&st) == 0, "store");
        /* The manual's example: Value 1 and 2 on slot1 and slot2, 10 elsewhere. */
        put_text(st, 0, "Value=1\nSlotId=1\n-s1\nValue=2\nSlotId=2\n-s2\nValue=10\n- update:true\n");
        ClassAd *s[4];
        AgentCronMerged *m[4] = { 0 };
        const char *names[4] = { "slot1@h", "slot2@h", "slot3@h", "gpu1@h" };
        for (unsigned i = 0; i < 4; i++)
                s[i] = slot_ad(i + 1, i == 3 ? 2 : 1, names[i]);
        static const char *const over[] = { "HasThing", NULL };
        for (unsigned i = 0; i < 4; i++)
                CU_ASSERT_EQUAL(agent_cron_merge(st, NULL, s[i], over, &m[i]), 0);
        CU_ASSERT_EQUAL(ad_int(s[0], "Value"), 1);
        CU_ASSERT_EQUAL(ad_int(s[1], "Value"), 2);
        CU_ASSERT_EQUAL(ad_int(s[2], "Value"), 10);
        CU_ASSERT_EQUAL(ad_int(s[2], "LastUpdate"), 7);
        CU_ASSERT(!classad_has(s[0], "SlotId") || ad_int(s[0], "SlotId") == 1); /* selectors are not merged */

        /* A second job: constraint, name prefix, type id; the agent's own
         * attributes refused, an overridable one replaced. */
        put_text(st, 1, "Big = true\nSlotMergeConstraint = TARGET.Cpus > 2\n- big\n"
                        "Gpu = true\nSlotName = \"gpu\"\n- gpu\n"
                        "Typed = 2\nSlotTypeId = 2\n- t2\n"
                        "OwnAttr = 99\nHasThing = \"cron\"\n");
        int refused[4];
        for (unsigned i = 0; i < 4; i++)
                refused[i] = agent_cron_merge(st, NULL, s[i], over, &m[i]);
        for (unsigned i = 0; i < 4; i++)
                GLEAN_TEST_CHECK(refused[i] == 1, "slot %u: OwnAttr refused (1), got %d", i + 1, refused[i]);
        CU_ASSERT(classad_has(s[2], "Big") && !classad_has(s[0], "Big"));
        CU_ASSERT(classad_has(s[3], "Gpu") && !classad_has(s[1], "Gpu"));
        CU_ASSERT(ad_int(s[3], "Typed") == 2 && !classad_has(s[0], "Typed"));
        CU_ASSERT_EQUAL(ad_int(s[0], "OwnAttr"), 5);
        char *v = NULL;
        CU_ASSERT(classad_eval_string(s[0], "HasThing", CA_MODE_OLD, &v) >= 0 && !strcmp(v, "cron"));
        free(v);

        /* Job 1's next run says less: what it stopped saying goes, the
         * overridden attribute gets its own value back. */
        put_text(st, 1, "Quiet = 1\n");
        for (unsigned i = 0; i < 4; i++)
                CU_ASSERT_EQUAL(agent_cron_merge(st, NULL, s[i], over, &m[i]), 0);
        CU_ASSERT(!classad_has(s[2], "Big") && !classad_has(s[3], "Gpu") && !classad_has(s[3], "Typed"));
        CU_ASSERT(ad_int(s[0], "Quiet") == 1);
        v = NULL;
        CU_ASSERT(classad_eval_string(s[0], "HasThing", CA_MODE_OLD, &v) >= 0 && !strcmp(v, "default"));
        free(v);
        CU_ASSERT_EQUAL(ad_int(s[0], "Value"), 1);

        /* At most AGENT_CRON_MAX_ADS tags a job. */
        size_t before = agent_cron_store_count(st);
        int last = 0;
        for (unsigned i = 0; i < AGENT_CRON_MAX_ADS + 5; i++) {
                Ads b = { 0 };
                char text[64];
                int k = snprintf(text, sizeof text, "T = %u\n- tag%u\n", i, i);
                agent_cron_parse_text(text, (size_t) k, NULL, 7, collect, &b, NULL);
                if (b.n == 1)
                        last = agent_cron_store_put(st, 2, b.ad[0], NULL);
        }
        CU_ASSERT_EQUAL(last, -E2BIG);
        CU_ASSERT_EQUAL(agent_cron_store_count(st), before + AGENT_CRON_MAX_ADS);
        agent_cron_store_drop(st, 2);
        CU_ASSERT_EQUAL(agent_cron_store_count(st), before);

        /* A run that publishes nothing keeps the last ads; dropping the job removes them. */
        agent_cron_store_begin(st, 1);
        agent_cron_store_end(st, 1);
        CU_ASSERT_EQUAL(agent_cron_merge(st, NULL, s[0], over, &m[0]), 0);
        CU_ASSERT(classad_has(s[0], "Quiet"));
        agent_cron_store_drop(st, 1);
        agent_cron_store_drop(st, 0);
        CU_ASSERT_EQUAL(agent_cron_store_count(st), 0);
        CU_ASSERT_EQUAL(agent_cron_merge(st, NULL, s[0], over, &m[0]), 0);
        CU_ASSERT(!classad_has(s[0], "Quiet") && !classad_has(s[0], "Value") && !classad_has(s[0], "LastUpdate"));
        CU_ASSERT(classad_has(s[0], "Cpus") && classad_has(s[0], "Name"));
        CU_ASSERT_EQUAL(agent_cron_merged_count(m[0]), 0);

        for (unsigned i = 0; i < 4; i++) {
                agent_cron_merged_free(m[i]);
                classad_free(s[i]);
        }
        agent_cron_store_free(st);
}

static void test_merge_slots_and_changes(void) {
        /* SLOTS restricts a job to slot ids; IF_CHANGED sees LastUpdate aside. */
        Config *cfg = load("STARTD_CRON_JOBLIST = a\nSTARTD_CRON_A_EXECUTABLE = /x\nSTARTD_CRON_A_MODE = OneShot\n"
                           "STARTD_CRON_A_SLOTS = 2\n");
        AgentCronTable *t = NULL;
        ConfigError err;
        GLEAN_TEST_CHECK_FATAL(agent_cron_read(cfg, &t, &err) == 0, "read");
        AgentCronStore *st = NULL;
        agent_cron_store_new(&st);
        Ads a = { 0 };
        agent_cron_parse_text("X = 1\n", 6, NULL, 1, collect, &a, NULL);
        agent_cron_parse_text("X = 1\n", 6, NULL, 2, collect, &a, NULL);
        agent_cron_parse_text("X = 2\n", 6, NULL, 3, collect, &a, NULL);
        bool changed = false;
        CU_ASSERT(agent_cron_store_put(st, 0, a.ad[0], &changed) == 0 && changed);
        CU_ASSERT(agent_cron_store_put(st, 0, a.ad[1], &changed) == 0 && !changed);
        CU_ASSERT(agent_cron_store_put(st, 0, a.ad[2], &changed) == 0 && changed);
        ClassAd *s1 = slot_ad(1, 1, "slot1@h"), *s2 = slot_ad(2, 1, "slot2@h");
        AgentCronMerged *m1 = NULL, *m2 = NULL;
        CU_ASSERT_EQUAL(agent_cron_merge(st, t, s1, NULL, &m1), 0);
        CU_ASSERT_EQUAL(agent_cron_merge(st, t, s2, NULL, &m2), 0);
        CU_ASSERT(!classad_has(s1, "X") && ad_int(s2, "X") == 2);
        agent_cron_merged_free(m1);
        agent_cron_merged_free(m2);
        classad_free(s1);
        classad_free(s2);
        agent_cron_store_free(st);
        agent_cron_table_free(t);
        config_free(cfg);
}

/* ---- the schedule ---- */

static void test_schedule(void) {
        AgentCronJob p = { .mode = AGENT_CRON_PERIODIC, .period = 60 };
        CU_ASSERT_EQUAL(agent_cron_next_start(&p, 0, 0, false, 1000), 1000);
        CU_ASSERT_EQUAL(agent_cron_next_start(&p, 1000, 0, true, 1010), 1060);
        CU_ASSERT_EQUAL(agent_cron_next_start(&p, 1000, 1005, false, 1010), 1060);
        CU_ASSERT_EQUAL(agent_cron_next_start(&p, INT64_MAX - 5, 0, false, 0), INT64_MAX);
        AgentCronJob w = { .mode = AGENT_CRON_WAIT_FOR_EXIT, .period = 5 };
        CU_ASSERT_EQUAL(agent_cron_next_start(&w, 0, 0, false, 1000), 1000);
        CU_ASSERT_EQUAL(agent_cron_next_start(&w, 1000, 0, true, 2000), INT64_MAX);
        CU_ASSERT_EQUAL(agent_cron_next_start(&w, 1000, 1700, false, 2000), 1705);
        AgentCronJob o = { .mode = AGENT_CRON_ONE_SHOT };
        CU_ASSERT_EQUAL(agent_cron_next_start(&o, 0, 0, false, 1000), 1000);
        CU_ASSERT_EQUAL(agent_cron_next_start(&o, 1000, 1001, false, 2000), INT64_MAX);
        AgentCronJob d = { .mode = AGENT_CRON_ON_DEMAND };
        CU_ASSERT_EQUAL(agent_cron_next_start(&d, 0, 0, false, 1000), INT64_MAX);
        /* update: in the output wins; else STARTD_CRON_AUTOPUBLISH. */
        CU_ASSERT(agent_cron_wants_publish(AGENT_CRON_PUBLISH_NEVER, 1, false));
        CU_ASSERT(!agent_cron_wants_publish(AGENT_CRON_PUBLISH_ALWAYS, 0, true));
        CU_ASSERT(!agent_cron_wants_publish(AGENT_CRON_PUBLISH_NEVER, -1, true));
        CU_ASSERT(agent_cron_wants_publish(AGENT_CRON_PUBLISH_ALWAYS, -1, false));
        CU_ASSERT(agent_cron_wants_publish(AGENT_CRON_PUBLISH_IF_CHANGED, -1, true));
        CU_ASSERT(!agent_cron_wants_publish(AGENT_CRON_PUBLISH_IF_CHANGED, -1, false));
        CU_ASSERT(agent_cron_may_start(0, 5, 0.1));     /* nothing runs: always */
        CU_ASSERT(agent_cron_may_start(0.09, 0.01, 0.1));
        CU_ASSERT(!agent_cron_may_start(0.1, 0.01, 0.1));
}

/* ---- a real run ---- */

typedef struct RunCtx {
        sd_event *e;
        AgentCronStore *st;
        size_t ads;
        bool done;
        AgentCronExit ex;
        char err[AGENT_CRON_MAX_STDERR + 1];
        size_t malformed;
} RunCtx;

static void run_ad(void *userdata, AgentCronAd *ad) {
        RunCtx *c = userdata;
        c->ads++;
        agent_cron_store_put(c->st, 0, ad, NULL);
}

static void run_exited(void *userdata, const AgentCronExit *ex) {
        RunCtx *c = userdata;
        c->done = true;
        c->ex = *ex;
        snprintf(c->err, sizeof c->err, "%s", ex->err);
        c->malformed = ex->stats->malformed;
        c->ex.err = c->err;
        sd_event_exit(c->e, 0);
}

static int run_script(const char *dir, const char *name, const char *script, const char *prefix, RunCtx *c,
                      AgentCronRun **ret_run) {
        /* A loop that exited cannot take sources again: one per run. */
        sd_event_unref(c->e);
        GLEAN_TEST_CHECK_FATAL(sd_event_new(&c->e) >= 0, "sd_event_new");
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        FILE *f = fopen(path, "w");
        GLEAN_TEST_CHECK_FATAL(f != NULL, "write %s", path);
        fputs(script, f);
        fclose(f);
        chmod(path, 0755);
        char *argv[] = { (char *) name, (char *) "one", (char *) "two words", NULL };
        char *env[] = { (char *) "CRON_TEST=from-env", NULL };
        AgentCronJob job = { .name = (char *) name, .executable = path, .argv = argv, .env = env,
                             .prefix = (char *) prefix, .mode = AGENT_CRON_ONE_SHOT, .cwd = (char *) dir };
        AgentCronCred cred;
        char *buf = NULL, why[200] = "";
        GLEAN_TEST_CHECK_FATAL(agent_cron_cred(NULL, &cred, &buf, why, sizeof why) == 0, "cred: %s", why);
        CU_ASSERT(cred.uid != 0);
        char *extra[] = { (char *) "STARTD_CRON_CONFIG_VAL=/bin/false", NULL };
        AgentCronRunFns fns = { .ad = run_ad, .exited = run_exited };
        int r = agent_cron_run_start(c->e, &job, &cred, extra, 42, &fns, c, ret_run);
        free(buf);
        return r;
}

static void test_real_run(void) {
        char dir[] = "/tmp/glean-cron-XXXXXX";
        GLEAN_TEST_CHECK_FATAL(mkdtemp(dir) != NULL, "mkdtemp");
        chmod(dir, 0755); /* nobody must reach the script */
        RunCtx c = { 0 };
        agent_cron_store_new(&c.st);
        AgentCronRun *run = NULL;
        int r = run_script(dir, "probe",
                           "#!/bin/sh\n"
                           "echo \"Uid = $(id -u)\"\n"
                           "echo \"Args = \\\"$1|$2\\\"\"\n"
                           "echo \"Env = \\\"$CRON_TEST $STARTD_CRON_CONFIG_VAL\\\"\"\n"
                           "echo \"Cwd = \\\"$(pwd)\\\"\"\n"
                           "echo 'Cpus = 1000'\n"
                           "echo 'not an attribute'\n"
                           "read x && echo 'StdinHadData = true'\n"
                           "echo 'on stderr' >&2\n"
                           "echo 'Works = true'\n"
                           "exit 3\n",
                           "cron_", &c, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "start: %s", strerror(-r));
        CU_ASSERT(agent_cron_run_pid(run) > 0);
        sd_event_loop(c.e);
        GLEAN_TEST_CHECK_FATAL(c.done, "the run ended");
        CU_ASSERT_EQUAL(c.ex.code, 3);
        CU_ASSERT(!c.ex.killed);
        GLEAN_TEST_CHECK(strstr(c.err, "on stderr") != NULL, "stderr: %s", c.err);
        CU_ASSERT_EQUAL(c.malformed, 1);
        CU_ASSERT_EQUAL(c.ads, 1);
        agent_cron_run_free(run);

        /* Its attributes in a slot ad. */
        ClassAd *s = slot_ad(1, 1, "slot1@h");
        AgentCronMerged *m = NULL;
        CU_ASSERT_EQUAL(agent_cron_merge(c.st, NULL, s, NULL, &m), 0);
        int64_t uid = ad_int(s, "cron_Uid");
        GLEAN_TEST_CHECK(uid != 0 && uid != -999, "ran as uid %lld (not root)", (long long) uid);
        if (geteuid() == 0) {
                struct passwd *pw = getpwnam("nobody");
                CU_ASSERT(pw && uid == (int64_t) pw->pw_uid);
        } else
                CU_ASSERT(uid == (int64_t) geteuid());
        char *v = NULL;
        CU_ASSERT(classad_eval_string(s, "cron_Args", CA_MODE_OLD, &v) >= 0 && v && !strcmp(v, "one|two words"));
        free(v);
        v = NULL;
        CU_ASSERT(classad_eval_string(s, "cron_Env", CA_MODE_OLD, &v) >= 0 && v && !strcmp(v, "from-env /bin/false"));
        free(v);
        v = NULL;
        CU_ASSERT(classad_eval_string(s, "cron_Cwd", CA_MODE_OLD, &v) >= 0 && v && !strcmp(v, dir));
        free(v);
        CU_ASSERT(classad_has(s, "cron_Works") && classad_has(s, "cron_Cpus") && !classad_has(s, "cron_StdinHadData"));
        CU_ASSERT_EQUAL(ad_int(s, "cron_LastUpdate"), 42);
        CU_ASSERT_EQUAL(ad_int(s, "Cpus"), 1);
        agent_cron_merged_free(m);
        classad_free(s);

        /* A flood: killed at the limit, what came before the limit kept. */
        memset(&c.ex, 0, sizeof c.ex);
        c.done = false;
        c.ads = 0;
        r = run_script(dir, "flood", "#!/bin/sh\necho 'Before = 1'\necho '-'\nwhile :; do echo 'Spam = 1'; done\n",
                       NULL, &c, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "start flood: %s", strerror(-r));
        sd_event_loop(c.e);
        CU_ASSERT(c.done && c.ex.killed);
        CU_ASSERT_EQUAL(c.ads, 1);
        agent_cron_run_free(run);

        /* What the script left running in its group dies with it, and does
         * not hold the run open by its stdout. */
        c.done = false;
        c.ads = 0;
        agent_cron_store_drop(c.st, 0);
        r = run_script(dir, "bg", "#!/bin/sh\nsleep 100 &\necho \"BgPid = $!\"\n", NULL, &c, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "start bg");
        sd_event_loop(c.e);
        CU_ASSERT(c.done && c.ex.code == 0 && c.ads == 1);
        agent_cron_run_free(run);
        s = slot_ad(1, 1, "slot1@h");
        m = NULL;
        agent_cron_merge(c.st, NULL, s, NULL, &m);
        int64_t bg = ad_int(s, "BgPid");
        bool gone = false;
        for (int i = 0; i < 100 && bg > 0 && !gone; i++) {
                char st[64], *text = NULL;
                snprintf(st, sizeof st, "/proc/%lld/stat", (long long) bg);
                /* Gone, or a zombie for init to reap. */
                gone = glean_test_read_file(st, &text, NULL) < 0 || (strchr(text, ')') && strchr(text, ')')[2] == 'Z');
                free(text);
                if (!gone)
                        usleep(20000);
        }
        GLEAN_TEST_CHECK(bg > 0 && gone, "the background sleep %lld was killed", (long long) bg);
        agent_cron_merged_free(m);
        classad_free(s);

        /* Killed on request (a hanging job, _KILL). */
        c.done = false;
        r = run_script(dir, "hang", "#!/bin/sh\necho 'Started = 1'\nexec sleep 60\n", NULL, &c, &run);
        GLEAN_TEST_CHECK_FATAL(r == 0, "start hang");
        agent_cron_run_kill(run, 200);
        sd_event_loop(c.e);
        CU_ASSERT(c.done && c.ex.killed && c.ex.signal != 0);
        agent_cron_run_free(run);

        /* A program that does not exist: exit 127, the reason on stderr. */
        c.done = false;
        char missing[600];
        snprintf(missing, sizeof missing, "%s/missing", dir);
        char *argv[] = { (char *) "missing", NULL }, *env[] = { NULL };
        AgentCronJob job = { .name = (char *) "missing", .executable = missing, .argv = argv, .env = env,
                             .prefix = (char *) "" };
        AgentCronCred cred;
        char *buf = NULL, why[200];
        agent_cron_cred(NULL, &cred, &buf, why, sizeof why);
        sd_event_unref(c.e);
        GLEAN_TEST_CHECK_FATAL(sd_event_new(&c.e) >= 0, "sd_event_new");
        AgentCronRunFns fns = { .ad = run_ad, .exited = run_exited };
        GLEAN_TEST_CHECK_FATAL(agent_cron_run_start(c.e, &job, &cred, NULL, 1, &fns, &c, &run) == 0, "start missing");
        free(buf);
        sd_event_loop(c.e);
        CU_ASSERT(c.done && c.ex.code == 127);
        GLEAN_TEST_CHECK(strstr(c.err, "cannot execute") != NULL, "stderr: %s", c.err);
        agent_cron_run_free(run);

        /* Root is never the account. */
        if (geteuid() == 0) {
                char *b = NULL;
                CU_ASSERT_EQUAL(agent_cron_cred("root", &cred, &b, why, sizeof why), -EPERM);
                CU_ASSERT_EQUAL(agent_cron_cred("no-such-user-glean", &cred, &b, why, sizeof why), -ENOENT);
                AgentCronCred asroot = { .change = false };
                CU_ASSERT_EQUAL(agent_cron_run_start(c.e, &job, &asroot, NULL, 1, &fns, &c, &run), -EPERM);
        }

        agent_cron_store_free(c.st);
        sd_event_unref(c.e);
        char cmd[600];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CU_ASSERT_EQUAL(system(cmd), 0);
}

static CU_TestInfo knob_tests[] = {
        { "good", test_knobs_good },
        { "bad, with file:line", test_knobs_bad },
        { "unhonoured knobs warned", test_knobs_warned },
        { "the manual's examples", test_knobs_manual },
        { "period", test_period },
        CU_TEST_INFO_NULL,
};
static CU_TestInfo output_tests[] = {
        { "good", test_output_good },
        { "hostile", test_output_hostile },
        CU_TEST_INFO_NULL,
};
static CU_TestInfo merge_tests[] = {
        { "slots, selectors, removal", test_merge },
        { "SLOTS and changes", test_merge_slots_and_changes },
        { "next start", test_schedule },
        CU_TEST_INFO_NULL,
};
static CU_TestInfo run_tests[] = {
        { "a real script", test_real_run },
        CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
        { "knobs", NULL, NULL, NULL, NULL, knob_tests },
        { "output", NULL, NULL, NULL, NULL, output_tests },
        { "merge", NULL, NULL, NULL, NULL, merge_tests },
        { "run", NULL, NULL, NULL, NULL, run_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

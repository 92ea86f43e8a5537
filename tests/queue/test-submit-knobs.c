/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit-knobs.c — HTCondor's knobs of the submit and of the schedd
 * that the central manager's queue does (queue/submit-knobs.c,
 * queue/jobcmd-policy.c, queue/queue-limits.c), through jobcmd_submit as
 * the daemon calls it:
 *
 *   - SUBMIT_ATTRS (SUBMIT_EXPRS, SYSTEM_SUBMIT_ATTRS): the macros' values
 *     in every job, a job's own value kept; naming Owner, User, an
 *     accounting attribute or NiceUser, a value or a name that does not
 *     parse: refused at the start with the file and line;
 *   - APPEND_REQ_VANILLA over APPEND_REQUIREMENTS, and'ed to the cluster's
 *     and each proc's own Requirements whatever the ad says (a Requirements
 *     of "true || ..." included); one that does not parse: file:line;
 *   - SUBMIT_REQUIREMENT_<Name> as condor_schedd: JOB./TARGET. the job,
 *     SCHEDD./MY. the scheduler, a number counts as a boolean, UNDEFINED
 *     refuses, _IS_WARNING accepts with the reason as Warning, NAMES in the
 *     list is passed over; the manual's own examples (tests/config/htcondor);
 *   - the warnings of the queue's knobs (HISTORY naming a file, ...);
 *   - MAX_JOBS_RUNNING: queue_run_room over starts, holds and exits, 0,
 *     unset, HTCondor's default and the manual's example;
 *   - the history bounded in bytes (MAX_HISTORY_LOG x (MAX_HISTORY_ROTATIONS
 *     + 1)), the count kept exact across a reopen, rotation off: unbounded;
 *     HISTORY = "": nothing kept.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "common/proto.h"
#include "queue/jobcmd.h"
#include "queue-test.h"
#include "test-util.h"

/* ---- a sink keeping the replies ---- */

typedef struct Got {
        ClassAd *replies[8];
        size_t n;
} Got;

static int got_send(void *userdata, const char *payload, size_t len) {
        Got *g = userdata;
        ClassAd *msg = NULL;
        GleanCommand cmd;
        char why[256] = "";

        GLEAN_TEST_CHECK_FATAL(glean_msg_parse(payload, len, &msg, &cmd, why, sizeof why) == 0, "reply: %s", why);
        if (g->n < 8)
                g->replies[g->n++] = msg;
        else
                classad_free(msg);
        return 0;
}

static void got_clear(Got *g) {
        for (size_t i = 0; i < g->n; i++)
                classad_free(g->replies[i]);
        *g = (Got) {};
}

/* A configuration from text (fatal when it does not load). */
static Config *cfg_of(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "<test>", &err) == 0, "config: %s", err.msg);
        return cfg;
}

static JobCmdPolicy *policy_of(const char *text) {
        Config *cfg = cfg_of(text);
        JobCmdPolicy *p = NULL;
        ConfigError err = {};
        int r = jobcmd_policy_from_config(cfg, &p, &err);

        config_free(cfg);
        GLEAN_TEST_CHECK_FATAL(r == 0, "policy: %d %s:%d: %s", r, err.file, err.line, err.msg);
        return p;
}

/* One Submit (one part) by alice with the policy: jobcmd_submit's result;
 * the reply in g. */
static int submit(JobQueue *q, const JobCmdPolicy *p, Got *g, const char *cluster, const char *procs) {
        char text[4096];
        JobCmdSubmit *pending = NULL;
        JobCmdSink sink = { got_send, NULL, g, p };
        ClassAd *req = NULL;
        GleanCommand cmd;
        char why[256] = "";
        int r;

        snprintf(text, sizeof text, "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; %s ]; Procs = { %s } ]",
                 cluster, procs ? procs : "[]");
        GLEAN_TEST_CHECK_FATAL(glean_msg_parse(text, strlen(text), &req, &cmd, why, sizeof why) == 0, "%s: %s", text,
                               why);
        r = jobcmd_submit(&pending, q, qt_user("alice"), req, QT_T0, &sink);
        classad_free(req);
        jobcmd_submit_free(pending);
        return r;
}

static bool ok_of(const Got *g) {
        bool ok = false;
        return g->n == 1 && classad_eval_bool(g->replies[0], "Ok", CA_MODE_OLD, &ok) >= 0 && ok;
}

/* Requirements of job c.p against a slot ad (text): 1 true, 0 false, -1 neither. */
static int matches(JobQueue *q, int64_t c, int64_t p, const char *slot_text) {
        Job *j = qt_job(q, c, p);
        ClassAd *slot = qt_ad(slot_text);
        CaValue v = ca_undefined();
        int res = -1;

        GLEAN_TEST_CHECK_FATAL(j != NULL, "job %" PRId64 ".%" PRId64, c, p);
        if (classad_eval_attr_with(j->ad, "Requirements", slot, CA_MODE_OLD, &v) >= 0 && v.type == CA_BOOL)
                res = v.u.b;
        ca_value_clear(&v);
        classad_free(slot);
        return res;
}

/* ---- SUBMIT_ATTRS ---- */

static void test_submit_attrs(void) {
        QT t;
        Got g = {};
        JobCmdPolicy *p = policy_of("SUBMIT_ATTRS = Site, +Project\n"
                                    "SUBMIT_EXPRS = MY.Weight\n"
                                    "SYSTEM_SUBMIT_ATTRS = Tier Nowhere\n"
                                    "Site = \"wisconsin\"\n"
                                    "Project = strcat(\"p\", \"1\")\n"
                                    "Weight = 2 * 3\n"
                                    "Tier = RequestMemory > 100\n");

        CU_ASSERT_EQUAL(jobcmd_knobs_attrs(jobcmd_policy_knobs(p)), 4); /* Nowhere is undefined: skipped */
        qt_open(&t, qt_new_db(), NULL);
        CU_ASSERT_EQUAL(submit(t.q, p, &g, "Requirements = true; RequestMemory = 128", "[], [ Site = \"mine\" ]"), 1);
        CU_ASSERT_TRUE(ok_of(&g));
        got_clear(&g);
        Job *j0 = qt_job(t.q, 1, 0), *j1 = qt_job(t.q, 1, 1);
        CU_ASSERT_FATAL(j0 && j1);
        CU_ASSERT_STRING_EQUAL(qt_str(j0->ad, "Site"), "wisconsin");
        CU_ASSERT_STRING_EQUAL(qt_str(j1->ad, "Site"), "mine"); /* a proc's own wins */
        CU_ASSERT_STRING_EQUAL(qt_str(j0->ad, "Project"), "p1");
        CU_ASSERT_EQUAL(qt_int(j0->ad, "Weight"), 6);
        bool tier = false;
        CU_ASSERT(classad_eval_bool(j0->ad, "Tier", CA_MODE_OLD, &tier) >= 0 && tier); /* an expression over the job */
        CU_ASSERT_FALSE(classad_has(j0->ad, "Nowhere"));

        /* The cluster's own value wins too. */
        CU_ASSERT_EQUAL(submit(t.q, p, &g, "Requirements = true; Site = \"theirs\"", NULL), 1);
        got_clear(&g);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 2, 0)->ad, "Site"), "theirs");
        qt_close(&t);
        jobcmd_policy_free(p);
}

/* A configuration file that must not load: the error names file:line and says why. */
static void expect_config_error(const char *text, int line, const char *needle) {
        char path[128];
        Config *cfg = NULL;
        ConfigError err = {};
        JobCmdPolicy *p = NULL;
        FILE *f;
        int r;

        snprintf(path, sizeof path, "%s/knobs.conf", qt_dir());
        f = fopen(path, "we");
        CU_ASSERT_FATAL(f != NULL);
        fputs(text, f);
        fclose(f);
        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        GLEAN_TEST_CHECK_FATAL(config_load_file(cfg, path, &err) == 0, "load: %s", err.msg);
        r = jobcmd_policy_from_config(cfg, &p, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && p == NULL, "%s: refused (%d)", text, r);
        GLEAN_TEST_CHECK(strcmp(err.file, path) == 0 && err.line == line && strstr(err.msg, needle),
                         "%s: error at %s:%d (want line %d) '%s' (want '%s')", text, err.file, err.line, line,
                         err.msg, needle);
        jobcmd_policy_free(p);
        config_free(cfg);
        unlink(path);
}

static void test_hostile_config(void) {
        /* Who a job is: never a default of the configuration. */
        expect_config_error("X = 1\nSUBMIT_ATTRS = Site, Owner\nSite = 1\n", 2, "SUBMIT_ATTRS names Owner");
        expect_config_error("SUBMIT_ATTRS = +AccountingGroup\nAccountingGroup = \"group_x.bob\"\n", 1,
                            "names AccountingGroup");
        expect_config_error("SUBMIT_EXPRS = MY.user\nuser = \"bob@x\"\n", 1, "SUBMIT_EXPRS names user");
        expect_config_error("\nSYSTEM_SUBMIT_ATTRS = NiceUser\nNiceUser = true\n", 2, "names NiceUser");
        expect_config_error("SUBMIT_ATTRS = AcctGroupUser\n", 1, "who a job is");
        expect_config_error("SUBMIT_ATTRS = AcctGroup\n", 1, "who a job is");
        /* Values and names that do not parse. */
        expect_config_error("SUBMIT_ATTRS = Site\nSite = my site\n", 2, "Site");
        expect_config_error("SUBMIT_ATTRS = Site-Name\n", 1, "not an attribute name");
        expect_config_error("# a comment\nAPPEND_REQUIREMENTS = (TARGET.Memory > \n", 2, "APPEND_REQUIREMENTS");
        expect_config_error("APPEND_REQ_VANILLA = TARGET.Arch == \"X86_64\" &&\n", 1, "APPEND_REQ_VANILLA");
        expect_config_error("SUBMIT_REQUIREMENT_NAMES = A\n", 1, "SUBMIT_REQUIREMENT_A is not defined");
}

/* ---- APPEND_REQUIREMENTS ---- */

static void test_append_requirements(void) {
        static const char linux_foo[] = "[ OpSys = \"LINUX\"; HasFoo = true ]";
        static const char linux_nofoo[] = "[ OpSys = \"LINUX\"; HasFoo = false ]";
        QT t;
        Got g = {};
        JobCmdPolicy *p = policy_of("APPEND_REQUIREMENTS = TARGET.HasFoo\n");

        CU_ASSERT_STRING_EQUAL(jobcmd_knobs_append(jobcmd_policy_knobs(p)), "TARGET.HasFoo");
        qt_open(&t, qt_new_db(), NULL);
        /* A pre-built ad that tries to make itself always true: still and'ed. */
        CU_ASSERT_EQUAL(submit(t.q, p, &g, "Requirements = true || false", "[], [ Requirements = TARGET.OpSys == \"LINUX\" ]"),
                        1);
        got_clear(&g);
        CU_ASSERT_EQUAL(matches(t.q, 1, 0, linux_foo), 1);
        CU_ASSERT_EQUAL(matches(t.q, 1, 0, linux_nofoo), 0);
        CU_ASSERT_EQUAL(matches(t.q, 1, 1, linux_foo), 1); /* a proc's own Requirements too */
        CU_ASSERT_EQUAL(matches(t.q, 1, 1, linux_nofoo), 0);
        CU_ASSERT_EQUAL(matches(t.q, 1, 1, "[ OpSys = \"WINDOWS\"; HasFoo = true ]"), 0);
        /* In parts: the cluster's and'ed once, each part's procs too. */
        {
                JobCmdSubmit *pending = NULL;
                JobCmdSink sink = { got_send, NULL, &g, p };
                static const char *const parts[] = {
                        "[ Command = \"Submit\"; More = true; Cluster = [ Cmd = \"/bin/true\"; Requirements = true ]; "
                        "Procs = { [] } ]",
                        "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true ]; "
                        "Procs = { [ Requirements = true ] } ]",
                };
                int64_t c = queue_next_cluster(t.q);
                for (size_t i = 0; i < 2; i++) {
                        ClassAd *req = NULL;
                        GleanCommand cmd;
                        char why[128];
                        CU_ASSERT_FATAL(glean_msg_parse(parts[i], strlen(parts[i]), &req, &cmd, why, sizeof why) == 0);
                        CU_ASSERT_EQUAL(jobcmd_submit(&pending, t.q, qt_user("alice"), req, QT_T0, &sink), i == 1);
                        classad_free(req);
                }
                CU_ASSERT_TRUE(ok_of(&g));
                got_clear(&g);
                char *r0 = classad_unparse_attr(qt_job(t.q, c, 0)->ad, "Requirements");
                char *r1 = classad_unparse_attr(qt_job(t.q, c, 1)->ad, "Requirements");
                CU_ASSERT_STRING_EQUAL(r0, "(true) && (TARGET.HasFoo)");
                CU_ASSERT_STRING_EQUAL(r1, "(true) && (TARGET.HasFoo)");
                free(r0);
                free(r1);
        }
        /* Without Requirements the queue refuses the job (nothing to and with). */
        CU_ASSERT_EQUAL(submit(t.q, p, &g, "RequestCpus = 1", NULL), 0);
        CU_ASSERT_FALSE(ok_of(&g));
        got_clear(&g);
        jobcmd_policy_free(p);

        /* APPEND_REQ_VANILLA first (glean's jobs are vanilla); empty: APPEND_REQUIREMENTS. */
        p = policy_of("APPEND_REQUIREMENTS = TARGET.HasFoo\nAPPEND_REQ_VANILLA = TARGET.HasBar =?= true\n");
        int64_t c = queue_next_cluster(t.q);
        CU_ASSERT_EQUAL(submit(t.q, p, &g, "Requirements = true", NULL), 1);
        got_clear(&g);
        CU_ASSERT_EQUAL(matches(t.q, c, 0, linux_foo), 0);
        CU_ASSERT_EQUAL(matches(t.q, c, 0, "[ HasBar = true; HasFoo = false ]"), 1);
        jobcmd_policy_free(p);
        p = policy_of("APPEND_REQUIREMENTS = TARGET.HasFoo\nAPPEND_REQ_VANILLA =\n");
        CU_ASSERT_STRING_EQUAL(jobcmd_knobs_append(jobcmd_policy_knobs(p)), "TARGET.HasFoo");
        jobcmd_policy_free(p);
        /* Neither: nothing appended. */
        p = policy_of("X = 1\n");
        CU_ASSERT_PTR_NULL(jobcmd_knobs_append(jobcmd_policy_knobs(p)));
        jobcmd_policy_free(p);
        qt_close(&t);
}

/* ---- SUBMIT_REQUIREMENT_<Name> ---- */

static void expect_submit(JobQueue *q, const JobCmdPolicy *p, const char *cluster, const char *procs, bool ok,
                          const char *needle, const char *warning) {
        Got g = {};
        int r = submit(q, p, &g, cluster, procs);
        const char *why = g.n ? qt_str(g.replies[0], "Reason") : "";
        const char *warn = g.n ? qt_str(g.replies[0], "Warning") : "";

        GLEAN_TEST_CHECK(r == (ok ? 1 : 0) && ok_of(&g) == ok, "%s: %s (r %d): %s", cluster,
                         ok ? "accepted" : "refused", r, why);
        if (needle)
                GLEAN_TEST_CHECK(strstr(why, needle) != NULL, "%s: reason '%s' has '%s'", cluster, why, needle);
        if (warning)
                GLEAN_TEST_CHECK(strstr(warn, warning) != NULL, "%s: warning '%s' has '%s'", cluster, warn, warning);
        else
                GLEAN_TEST_CHECK(!g.n || !classad_has(g.replies[0], "Warning"), "%s: no warning (%s)", cluster, warn);
        got_clear(&g);
}

static void test_submit_requirements(void) {
        QT t;
        JobCmdPolicy *p = policy_of("SUBMIT_REQUIREMENT_NAMES = Scoped NAMES Number Scheduler\n"
                                    "SUBMIT_REQUIREMENT_Scoped = JOB.RequestMemory >= 64 && TARGET.RequestCpus >= 1 "
                                    "&& RequestMemory < 100000\n"
                                    "SUBMIT_REQUIREMENT_Number = ifThenElse(RequestCpus > 8, 0, 1)\n"
                                    "SUBMIT_REQUIREMENT_Scheduler = MY.MyType == \"Scheduler\" && SCHEDD.MyType == "
                                    "\"Scheduler\" && TARGET.Owner == \"alice\"\n");

        qt_open(&t, qt_new_db(), NULL);
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 128; RequestCpus = 1", NULL, true, NULL, NULL);
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 32; RequestCpus = 1", NULL, false,
                      "the job does not meet SUBMIT_REQUIREMENT_Scoped", NULL);
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 128; RequestCpus = 16", NULL, false,
                      "SUBMIT_REQUIREMENT_Number", NULL);
        /* UNDEFINED (no RequestCpus): neither true nor false, refused. */
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 128", NULL, false,
                      "SUBMIT_REQUIREMENT_Scoped evaluated to neither true nor false", NULL);
        /* A proc of its own is its job. */
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 128; RequestCpus = 1",
                      "[], [ RequestMemory = 8 ]", false, "SUBMIT_REQUIREMENT_Scoped", NULL);
        CU_ASSERT_EQUAL(queue_size(t.q), 1);
        jobcmd_policy_free(p);

        /* Warnings: accepted with the (last) reason; a requirement after them still refuses. */
        p = policy_of("SUBMIT_REQUIREMENT_NAMES = OneGig Cpus Hard\n"
                      "SUBMIT_REQUIREMENT_OneGig = RequestMemory > 1024\n"
                      "SUBMIT_REQUIREMENT_OneGig_REASON = \"As of <date>, the minimum requested memory will be 1024.\"\n"
                      "SUBMIT_REQUIREMENT_OneGig_IS_WARNING = TRUE\n"
                      "SUBMIT_REQUIREMENT_Cpus = RequestCpus > 1\n"
                      "SUBMIT_REQUIREMENT_Cpus_IS_WARNING = true\n"
                      "SUBMIT_REQUIREMENT_Hard = RequestMemory > 16\n");
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 512; RequestCpus = 4", NULL, true, NULL,
                      "the minimum requested memory will be 1024");
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 512; RequestCpus = 1", NULL, true, NULL,
                      "SUBMIT_REQUIREMENT_Cpus");
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 2048; RequestCpus = 2", NULL, true, NULL, NULL);
        expect_submit(t.q, p, "Requirements = true; RequestMemory = 8; RequestCpus = 1", NULL, false,
                      "SUBMIT_REQUIREMENT_Hard", NULL);
        CU_ASSERT_EQUAL(queue_size(t.q), 4);
        jobcmd_policy_free(p);
        qt_close(&t);
}

/* The manual's examples (ap-policy-configuration.rst), as shipped in tests/config/htcondor/manual. */
static void test_manual_requirements(void) {
        static const char *const files[] = {
                "tests/config/htcondor/manual/ap-policy-configuration-02.conf",
                "tests/config/htcondor/manual/ap-policy-configuration-03.conf",
                "tests/config/htcondor/manual/ap-policy-configuration-04.conf",
                "tests/config/htcondor/manual/ap-policy-configuration-05.conf",
        };
        Config *cfg = NULL;
        ConfigError err = {};
        JobCmdPolicy *p = NULL;
        QT t;

        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        for (size_t i = 0; i < sizeof files / sizeof *files; i++)
                GLEAN_TEST_CHECK_FATAL(config_load_file(cfg, files[i], &err) == 0, "%s: %s", files[i], err.msg);
        GLEAN_TEST_CHECK_FATAL(jobcmd_policy_from_config(cfg, &p, &err) == 0, "%s:%d: %s", err.file, err.line,
                               err.msg);
        config_free(cfg);
        qt_open(&t, qt_new_db(), NULL);
        expect_submit(t.q, p, "Requirements = true; JobUniverse = 5; RequestMemory = 2048", NULL, true, NULL, NULL);
        expect_submit(t.q, p, "Requirements = true; JobUniverse = 5; RequestMemory = 768", NULL, true, NULL,
                      "As of <date>, the minimum requested memory will be 1024.");
        expect_submit(t.q, p, "Requirements = true; JobUniverse = 1; RequestMemory = 2048", NULL, false,
                      "This pool does not accept standard universe jobs.", NULL);
        expect_submit(t.q, p, "Requirements = true; JobUniverse = 5; RequestMemory = 100", NULL, false,
                      "The job only requested 100 Megabytes.", NULL);
        jobcmd_policy_free(p);
        qt_close(&t);
}

/* ---- the warnings of the configuration ---- */

static void test_config_warnings(void) {
        Config *cfg = cfg_of("X = 1\n");
        char **w = NULL;

        CU_ASSERT_EQUAL(jobcmd_config_warnings(cfg, &w), 0); /* the defaults: nothing to say */
        CU_ASSERT_PTR_NULL(w);
        config_free(cfg);

        cfg = cfg_of("HISTORY = /var/lib/condor/spool/history\n"
                     "SUBMIT_ATTRS = Site, ClusterId, Nowhere\n"
                     "Site = 1\n"
                     "ROTATE_HISTORY_DAILY = true\n");
        int n = jobcmd_config_warnings(cfg, &w);
        CU_ASSERT_EQUAL(n, 4);
        char all[4096] = "";
        for (int i = 0; i < n; i++) {
                strncat(all, w[i], sizeof all - strlen(all) - 2);
                strcat(all, "\n");
        }
        GLEAN_TEST_CHECK(strstr(all, "<test>:1: HISTORY = /var/lib/condor/spool/history: glean keeps the history") &&
                                 strstr(all, "<test>:2: SUBMIT_ATTRS names ClusterId, which the queue sets") &&
                                 strstr(all, "<test>:2: SUBMIT_ATTRS names Nowhere, which is not defined") &&
                                 strstr(all, "<test>:4: ROTATE_HISTORY_DAILY"),
                         "warnings:\n%s", all);
        config_strv_free(w);
        config_free(cfg);
}

/* ---- MAX_JOBS_RUNNING ---- */

static const QueueSettings *settings_of(QT *t) {
        return queue_settings(t->q);
}

static void test_max_jobs_running(void) {
        QT t;
        char why[256];

        qt_open(&t, qt_new_db(), "MAX_JOBS_RUNNING = 2\n");
        qt_submit(t.q, "alice", "", 4, QT_T0);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 2);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 1), 1); /* a match on its way counts */
        CU_ASSERT_EQUAL(queue_run_room(t.q, 5), 0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { 1, 0 }, "c0", "slot1@a", QT_T0 + 1), 0);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 1);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { 1, 1 }, "c1", "slot2@a", QT_T0 + 1), 0);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 0);
        CU_ASSERT_EQUAL(queue_claimed(t.q), 2);
        /* Held while running: still counted until its claim is gone (a shadow being vacated). */
        bool was_running = false;
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_user("alice"), (JobId) { 1, 1 }, NULL, 1, 0, QT_T0 + 2, &was_running,
                                       why, sizeof why),
                        0);
        CU_ASSERT_TRUE(was_running);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 0);
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { 1, 1 }, "vacated", QT_T0 + 3, NULL), 0);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 1);
        ClassAd *exit_msg = qt_exit(0, "");
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { 1, 0 }, exit_msg, QT_T0 + 4, NULL, NULL, why, sizeof why), 0);
        classad_free(exit_msg);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 2);
        qt_close(&t);

        /* 0: nothing starts (an administrator draining the queue). */
        qt_open(&t, NULL, "MAX_JOBS_RUNNING = 0\n");
        CU_ASSERT_TRUE(settings_of(&t)->limit_running);
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 0);
        qt_close(&t);
        /* Empty: no limit. */
        qt_open(&t, NULL, "MAX_JOBS_RUNNING =\n");
        CU_ASSERT_EQUAL(queue_run_room(t.q, 1000000), SIZE_MAX);
        qt_close(&t);
        /* HTCondor's default, MIN({$(DETECTED_MEMORY), 10000}). */
        qt_open(&t, NULL, NULL);
        CU_ASSERT_TRUE(settings_of(&t)->limit_running);
        GLEAN_TEST_CHECK(settings_of(&t)->max_jobs_running >= 1 && settings_of(&t)->max_jobs_running <= 10000,
                         "default MAX_JOBS_RUNNING %" PRId64, settings_of(&t)->max_jobs_running);
        qt_close(&t);
        /* Less than 0: none starts either (condor_schedd: "less than or equal to 0"). */
        qt_open(&t, NULL, "MAX_JOBS_RUNNING = -5\n");
        CU_ASSERT_EQUAL(queue_run_room(t.q, 0), 0);
        qt_close(&t);
        /* Not a number: an error naming it. */
        char why2[512] = "";
        GLEAN_TEST_CHECK(!qt_open_why(&t, NULL, "MAX_JOBS_RUNNING = lots\n", why2, sizeof why2) &&
                                 strstr(why2, "MAX_JOBS_RUNNING"),
                         "MAX_JOBS_RUNNING = lots: %s", why2);

        /* The manual's example (configuration/schedd.rst), the expression chain as written. */
        Config *cfg = NULL;
        ConfigError err = {};
        QueueSettings qs = {};
        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_file(cfg, "tests/config/htcondor/manual/configuration-schedd-05.conf", &err) == 0);
        GLEAN_TEST_CHECK(queue_settings_from_config(cfg, &qs, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK(qs.limit_running && qs.max_jobs_running >= 1 && qs.max_jobs_running <= 10000,
                         "the manual's MAX_JOBS_RUNNING: %" PRId64, qs.max_jobs_running);
        queue_settings_clear(&qs);
        config_free(cfg);
}

/* ---- MAX_JOBS_SUBMITTED, MAX_JOBS_PER_OWNER, MAX_JOBS_PER_SUBMISSION: 0 or less, none ---- */

static void expect_refused_by(const char *knobs, const char *needle) {
        QT t;
        Got g = {};
        char why[512] = "";
        ClassAd *c;
        int64_t id = 0;

        qt_open(&t, NULL, knobs);
        c = qt_cluster_ad("");
        GLEAN_TEST_CHECK(queue_submit(t.q, qt_user("alice"), c, NULL, 1, QT_T0, &id, why, sizeof why) == -EDQUOT &&
                                 strstr(why, needle),
                         "%s: refused: %s", knobs, why);
        classad_free(c);
        /* and through the Submit command */
        CU_ASSERT_EQUAL(submit(t.q, NULL, &g, "Requirements = true", NULL), 0);
        const char *reason = g.n ? qt_str(g.replies[0], "Reason") : "";
        GLEAN_TEST_CHECK(!ok_of(&g) && strstr(reason, needle), "%s: Submit refused: %s", knobs, reason);
        got_clear(&g);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        qt_close(&t);
}

static void test_queue_limits_zero(void) {
        expect_refused_by("MAX_JOBS_SUBMITTED = 0\n", "MAX_JOBS_SUBMITTED (0)");
        expect_refused_by("MAX_JOBS_PER_OWNER = 0\n", "MAX_JOBS_PER_OWNER (0)");
        expect_refused_by("MAX_JOBS_PER_SUBMISSION = 0\n", "MAX_JOBS_PER_SUBMISSION (0)");
        expect_refused_by("MAX_JOBS_SUBMITTED = -3\n", "MAX_JOBS_SUBMITTED (0)");

        /* The manual's "disable new submissions" (installation-startup-shutdown-reconfiguration.rst). */
        Config *cfg = NULL;
        ConfigError err = {};
        QueueSettings qs = {};
        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_file(cfg,
                                         "tests/config/htcondor/manual/installation-startup-shutdown-reconfiguration-01.conf",
                                         &err) == 0);
        CU_ASSERT_EQUAL(queue_settings_from_config(cfg, &qs, &err), 0);
        CU_ASSERT_TRUE(queue_over_limit(qs.max_jobs_submitted, 1));
        queue_settings_clear(&qs);
        config_free(cfg);

        /* Empty: no limit; the defaults: HTCondor's numbers. */
        QT t;
        qt_open(&t, NULL, "MAX_JOBS_SUBMITTED =\nMAX_JOBS_PER_OWNER =\n");
        CU_ASSERT_EQUAL(settings_of(&t)->max_jobs_submitted, 0);
        CU_ASSERT_EQUAL(settings_of(&t)->max_jobs_per_owner, 0);
        CU_ASSERT_EQUAL(settings_of(&t)->max_jobs_per_submission, 20000);
        qt_submit(t.q, "alice", "", 3, QT_T0);
        qt_close(&t);
}

/* ---- the history in bytes ---- */

/* n jobs of alice (each with a padding of pad bytes) removed: to the history. */
static void retire(JobQueue *q, size_t n, size_t pad, double now) {
        char extra[2048];
        char *fill = malloc(pad + 1);

        memset(fill, 'x', pad);
        fill[pad] = 0;
        snprintf(extra, sizeof extra, "Pad = \"%s\"", fill);
        free(fill);
        int64_t c = qt_submit(q, "alice", extra, n, now);
        for (size_t i = 0; i < n; i++)
                CU_ASSERT_EQUAL(queue_job_remove(q, qt_user("alice"), (JobId) { c, (int64_t) i }, NULL, now, NULL,
                                                 NULL, 0),
                                0);
}

static int oldest_fn(void *userdata, const ClassAd *ad) {
        *(int64_t *) userdata = qt_int(ad, "ClusterId");
        return 0;
}

static void test_history_bytes(void) {
        const char *path = qt_new_db();
        QT t;

        /* 4 KiB x (1 + 1): at most 8 KiB of ads. */
        const char *knobs = "MAX_HISTORY_LOG = 4096\nMAX_HISTORY_ROTATIONS = 1\n";
        qt_open(&t, path, knobs);
        CU_ASSERT_EQUAL(settings_of(&t)->history_max_bytes, 8192);
        for (int k = 0; k < 20; k++)
                retire(t.q, 1, 600, QT_T0 + k);
        CU_ASSERT_EQUAL(qt_history_count(t.q), 20);
        int64_t before = queue_history_bytes(t.q);
        GLEAN_TEST_CHECK(before > 8192, "20 ads of about 1 KB: %" PRId64 " bytes", before);
        int gone = queue_history_trim(t.q, QT_T0 + 30);
        int64_t after = queue_history_bytes(t.q);
        size_t kept = qt_history_count(t.q);
        GLEAN_TEST_CHECK(gone > 0 && after <= 8192 && (size_t) gone + kept == 20, "trimmed %d, kept %zu, %" PRId64 " bytes",
                         gone, kept, after);
        fprintf(stderr, "history by bytes: 20 ads, %" PRId64 " bytes -> %zu ads, %" PRId64 " bytes (limit 8192)\n",
                before, kept, after);
        /* The newest stayed: the oldest left is cluster 20 - kept + 1. */
        int64_t oldest = 0;
        CU_ASSERT(queue_history(t.q, (JobId) { 0, -1 }, NULL, 0, oldest_fn, &oldest) == 0);
        CU_ASSERT_EQUAL(oldest, (int64_t) (20 - kept + 1));
        /* More, trimmed again: the count kept up with writes and trims is the scan's after a reopen. */
        retire(t.q, 3, 600, QT_T0 + 40);
        CU_ASSERT(queue_history_trim(t.q, QT_T0 + 41) >= 3);
        int64_t counted = queue_history_bytes(t.q);
        qt_close(&t);
        qt_open(&t, path, knobs);
        CU_ASSERT_EQUAL(queue_history_bytes(t.q), counted);
        CU_ASSERT(counted <= 8192);
        qt_close(&t);

        /* Rotation off: HTCondor's file grows without bound; so does the history (HISTORY_MAX_JOBS aside). */
        qt_open(&t, qt_new_db(), "MAX_HISTORY_LOG = 1024\nENABLE_HISTORY_ROTATION = false\n");
        CU_ASSERT_EQUAL(settings_of(&t)->history_max_bytes, 0);
        retire(t.q, 10, 600, QT_T0);
        CU_ASSERT_EQUAL(queue_history_trim(t.q, QT_T0 + 1), 0);
        CU_ASSERT_EQUAL(qt_history_count(t.q), 10);
        qt_close(&t);

        /* HTCondor's defaults: 20 MiB x 3. */
        qt_open(&t, NULL, NULL);
        CU_ASSERT_EQUAL(settings_of(&t)->history_max_bytes, 3 * 20971520LL);
        CU_ASSERT_FALSE(settings_of(&t)->history_off);
        qt_close(&t);

        /* HISTORY = "": none kept (and Wait finds nothing). */
        qt_open(&t, qt_new_db(), "HISTORY =\n");
        CU_ASSERT_TRUE(settings_of(&t)->history_off);
        retire(t.q, 3, 10, QT_T0);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        CU_ASSERT_EQUAL(qt_history_count(t.q), 0);
        ClassAd *h = NULL;
        CU_ASSERT_EQUAL(queue_history_find(t.q, (JobId) { 1, 0 }, &h), -ENOENT);
        qt_close(&t);
        /* A path: kept (in the database). */
        qt_open(&t, qt_new_db(), "HISTORY = /nonexistent/history\n");
        retire(t.q, 2, 10, QT_T0);
        CU_ASSERT_EQUAL(qt_history_count(t.q), 2);
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "SUBMIT_ATTRS, SUBMIT_EXPRS, SYSTEM_SUBMIT_ATTRS", test_submit_attrs },
        { "hostile configuration: identity attributes, parse errors at file:line", test_hostile_config },
        { "APPEND_REQUIREMENTS and APPEND_REQ_VANILLA, not to be bypassed", test_append_requirements },
        { "SUBMIT_REQUIREMENT_<Name>: scopes, numbers, UNDEFINED, warnings", test_submit_requirements },
        { "the manual's submit requirements and warning", test_manual_requirements },
        { "warnings of the queue's knobs", test_config_warnings },
        { "MAX_JOBS_RUNNING", test_max_jobs_running },
        { "MAX_JOBS_SUBMITTED, _PER_OWNER, _PER_SUBMISSION of 0: none", test_queue_limits_zero },
        { "MAX_HISTORY_LOG, MAX_HISTORY_ROTATIONS, HISTORY", test_history_bytes },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "submit-knobs", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

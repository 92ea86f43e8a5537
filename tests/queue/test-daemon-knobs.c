/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-knobs.c — the queue's HTCondor knobs on the real
 * glean-negotiator (tests/negotiator/daemon-test.h: the daemon on a
 * private configuration, a fake agent, a user on the unix socket):
 *
 *   - MAX_JOBS_RUNNING = 1 with two free slots and two jobs: one claim is
 *     asked for, the other match waits (its LastRejMatchReason says why);
 *     the claim takes the next job when the first exits; a SIGHUP raising
 *     the limit to 2 lets a waiting job be claimed at once, one lowering it
 *     to 1 vacates the newest of the two runs;
 *   - a user who sends a pre-built ad over the protocol (Requirements =
 *     true, no glean submit) still gets APPEND_REQUIREMENTS and'ed and the
 *     SUBMIT_ATTRS attribute; a submit warning comes back as the Reply's
 *     Warning, the job queued;
 *   - a configuration with SUBMIT_ATTRS naming Owner, or an
 *     APPEND_REQUIREMENTS that does not parse, keeps the daemon from
 *     starting, the log naming glean.conf:line.
 */
#define _GNU_SOURCE
#include "tests/negotiator/daemon-test.h"

#define RIG_LINES 13 /* the lines rig_init writes before the extra ones */

static char *job_text(int fd, int64_t c, int64_t p, const char *attr) {
        ClassAd *ad = user_job(fd, c, p);
        char *t = ad ? classad_unparse_attr(ad, attr) : NULL;
        classad_free(ad);
        return t ? t : strdup("");
}

static void test_max_jobs_running(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "MAX_JOBS_RUNNING = 1\n"
                                     "APPEND_REQUIREMENTS = TARGET.Arch == \"X86_64\"\n"
                                     "SUBMIT_ATTRS = Site\n"
                                     "Site = \"here\"\n"
                                     "SUBMIT_REQUIREMENT_NAMES = Big\n"
                                     "SUBMIT_REQUIREMENT_Big = RequestMemory >= 1024\n"
                                     "SUBMIT_REQUIREMENT_Big_REASON = \"ask for 1 GB from next month\"\n"
                                     "SUBMIT_REQUIREMENT_Big_IS_WARNING = true\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "m1"));
        int fd = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0);

        /* A pre-built ad straight over the protocol. */
        char text[1024];
        snprintf(text, sizeof text, "[ Command = \"Submit\"; RequestId = 7; Cluster = [ %s ]; Procs = { [], [] } ]",
                 submit_cluster);
        ClassAd *rep = user_call(fd, text);
        char *warning = NULL;
        int64_t c = ad_int(rep, "ClusterId");
        if (rep)
                classad_eval_string(rep, "Warning", MODE, &warning);
        GLEAN_TEST_CHECK(reply_ok(rep) && c > 0 && warning && strcmp(warning, "SUBMIT_REQUIREMENT_Big: ask for 1 GB "
                                                                               "from next month") == 0,
                         "accepted with the warning: %s", warning ? warning : "(none)");
        free(warning);
        classad_free(rep);
        char *req = job_text(fd, c, 0, "Requirements"), *site = job_text(fd, c, 1, "Site");
        GLEAN_TEST_CHECK(strcmp(req, "(true) && (TARGET.Arch == \"X86_64\")") == 0, "Requirements: %s", req);
        CU_ASSERT_STRING_EQUAL(site, "\"here\"");
        free(req);
        free(site);

        /* Two free slots, two jobs: one claim at a time. */
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        agent_slot(&a, "slot2", "Unclaimed", "Idle", NULL);
        char *claim = run_one(&a, "slot1", c);
        CU_ASSERT_FATAL(claim != NULL);
        ClassAd *more = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 3.5);
        GLEAN_TEST_CHECK(more == NULL, "no second claim under MAX_JOBS_RUNNING = 1");
        classad_free(more);
        CU_ASSERT(log_has(&r, "MAX_JOBS_RUNNING (1)", 2));
        CU_ASSERT_EQUAL(job_status(fd, c, 0) + job_status(fd, c, 1), 2 + 1); /* one Running, one Idle */

        /* The first exits: the claim runs the other (still one at a time). */
        agent_exit(&a, claim, 0);
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        GLEAN_TEST_CHECK(act != NULL, "the claim takes the next job");
        if (act)
                agent_reply(&a, act, true, NULL);
        classad_free(act);
        CU_ASSERT(wait_status(fd, c, 1, 2, 5));

        /* A third job waits; MAX_JOBS_RUNNING = 2 by SIGHUP: claimed at once. */
        int64_t c2 = user_submit(fd, 1);
        CU_ASSERT_FATAL(c2 > 0);
        more = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 2.5);
        GLEAN_TEST_CHECK(more == NULL, "the third job waits");
        classad_free(more);
        char *why = job_text(fd, c2, 0, "LastRejMatchReason");
        GLEAN_TEST_CHECK(strstr(why, "MAX_JOBS_RUNNING") != NULL || !*why, "its reason: %s", why);
        free(why);
        FILE *f = fopen(r.conf, "ae");
        CU_ASSERT_FATAL(f != NULL);
        fputs("MAX_JOBS_RUNNING = 2\n", f);
        fclose(f);
        kill(r.pid, SIGHUP);
        more = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 6);
        GLEAN_TEST_CHECK(more != NULL, "claimed once MAX_JOBS_RUNNING is 2");
        char *claim2 = more ? agent_grant(&a, more, "slot2", 30) : NULL;
        classad_free(more);
        act = claim2 ? agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5) : NULL;
        if (act)
                agent_reply(&a, act, true, NULL);
        classad_free(act);
        CU_ASSERT(wait_status(fd, c2, 0, 2, 5));

        /* Lowered to 1 below the 2 running: the newest run is vacated (condor_schedd aborts jobs over it). */
        f = fopen(r.conf, "ae");
        CU_ASSERT_FATAL(f != NULL);
        fputs("MAX_JOBS_RUNNING = 1\n", f);
        fclose(f);
        kill(r.pid, SIGHUP);
        ClassAd *deact = agent_expect(&a, GLEAN_CMD_DEACTIVATE, 6);
        char *gone = NULL;
        if (deact)
                classad_eval_string(deact, "ClaimId", MODE, &gone);
        GLEAN_TEST_CHECK(gone && claim2 && strcmp(gone, claim2) == 0, "the newest run is vacated: %s (want %s)",
                         gone ? gone : "(none)", claim2 ? claim2 : "?");
        CU_ASSERT(log_has(&r, "vacating the 1 newest", 2));
        free(gone);
        classad_free(deact);
        free(claim2);

        free(claim);
        close(fd);
        agent_close(&a);
        rig_done(&r, false);
}

/* The daemon does not start; its log names where. */
static void expect_no_start(const char *extra, const char *needle) {
        Rig r;
        char where[64];
        CU_ASSERT_FATAL(rig_init(&r, extra));
        GLEAN_TEST_CHECK(!rig_start(&r), "%s: refused to start", extra);
        snprintf(where, sizeof where, "glean.conf:%d: ", RIG_LINES + 1);
        char *log = rig_log(&r);
        GLEAN_TEST_CHECK(strstr(log, where) && strstr(log, needle), "%s: the log names %s and '%s':\n%s", extra, where,
                         needle, log);
        free(log);
        rig_done(&r, false);
}

static void test_refused_start(void) {
        expect_no_start("SUBMIT_ATTRS = Site Owner\nSite = 1\n", "SUBMIT_ATTRS names Owner");
        expect_no_start("APPEND_REQUIREMENTS = (TARGET.Memory > \n", "APPEND_REQUIREMENTS");
}

static CU_TestInfo tests[] = {
        { "MAX_JOBS_RUNNING, APPEND_REQUIREMENTS over the protocol, a submit warning", test_max_jobs_running },
        { "SUBMIT_ATTRS = Owner, APPEND_REQUIREMENTS broken: no start", test_refused_start },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "daemon-knobs", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        atexit(kill_leftovers);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-budget.c — the real glean-negotiator with a job whose
 * Requirements run out of the ClassAd evaluation budget (issue 20, item
 * 3: 20 eval(unparse(Requirements)) a level, 15 s an evaluation before
 * the budget, and more than a minute of the daemon's time per cycle):
 * submitted over the users' socket beside an ordinary job, it is Held
 * within the first cycle with HoldReasonCode 5 and a reason that names
 * the budget, the ordinary job is matched, the daemon answers a Query at
 * once; restarted, it is still Held (the hold is stored) and the daemon
 * answers at once again.
 */
#define _GNU_SOURCE
#include "daemon-test.h"

static int64_t submit_text(int fd, const char *requirements) {
        char *text = NULL;
        if (asprintf(&text,
                     "[ Command = \"Submit\"; RequestId = 7; Cluster = [ Cmd = \"/bin/echo\"; JobUniverse = 5; "
                     "RequestCpus = 1; RequestMemory = 64; Iwd = \"/tmp\"; Requirements = %s ]; Procs = { [] } ]",
                     requirements) < 0)
                return -1;
        ClassAd *m = user_call(fd, text);
        bool ok = false;
        int64_t cluster = -1;
        if (m) {
                classad_eval_bool(m, "Ok", MODE, &ok);
                classad_eval_int(m, "ClusterId", MODE, &cluster);
        }
        classad_free(m);
        free(text);
        return ok ? cluster : -1;
}

/* A Query answered: how long it took (seconds), -1 without an answer. */
static double query_time(int fd, int64_t cluster) {
        double t0 = now_mono();
        ClassAd *ad = user_job(fd, cluster, 0);
        double dt = now_mono() - t0;
        bool got = ad != NULL;
        classad_free(ad);
        return got ? dt : -1;
}

static void check_held(int fd, int64_t cluster) {
        ClassAd *ad = user_job(fd, cluster, 0);
        char *reason = NULL;
        CU_ASSERT_FATAL(ad != NULL);
        CU_ASSERT_EQUAL(ad_int(ad, "JobStatus"), 5);
        CU_ASSERT_EQUAL(ad_int(ad, "HoldReasonCode"), 5);
        classad_eval_string(ad, "HoldReason", MODE, &reason);
        GLEAN_TEST_CHECK(reason && strcmp(reason, "Requirements too expensive to evaluate: exceeded the evaluation "
                                                  "budget of 1048576 steps") == 0,
                         "HoldReason: %s", reason ? reason : "(none)");
        free(reason);
        classad_free(ad);
}

static void test_expensive_requirements_held(void) {
        Rig r;
        Agent a;
        char bomb[1024];
        size_t len = (size_t) snprintf(bomb, sizeof bomb, "(");
        for (int i = 0; i < 20; i++)
                len += (size_t) snprintf(bomb + len, sizeof bomb - len, "%seval(unparse(Requirements))", i ? " + " : "");
        snprintf(bomb + len, sizeof bomb - len, ") >= 0 || true");

        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake1"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        CU_ASSERT(agent_send_text(&a, "[ Command = \"QuerySlots\"; RequestId = 3 ]"));
        ClassAd *q = agent_expect(&a, GLEAN_CMD_REPLY, 5);
        CU_ASSERT_FATAL(q != NULL);
        classad_free(q);
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);

        int64_t bad = submit_text(u, bomb);
        CU_ASSERT_FATAL(bad > 0);
        int64_t good = submit_text(u, "true");
        CU_ASSERT_FATAL(good > 0);
        /* the first cycle holds the one and matches the other */
        GLEAN_TEST_CHECK(wait_status(u, bad, 0, 5, 10), "job %" PRId64 ".0 Held within 10 s (status %" PRId64 ")",
                         bad, job_status(u, bad, 0));
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
        GLEAN_TEST_CHECK(req != NULL, "the ordinary job is matched");
        classad_free(req);
        check_held(u, bad);
        double dt = query_time(u, bad);
        GLEAN_TEST_CHECK(dt >= 0 && dt < 2, "a Query answered in %.3f s", dt);
        fprintf(stderr, "held in the first cycle; a Query answered in %.3f s\n", dt);
        GLEAN_TEST_CHECK(log_has(&r, "too expensive to evaluate", 1), "the hold is in the log");
        close(u);
        agent_close(&a);

        /* Restarted: still Held, from the database; the daemon answers at once. */
        CU_ASSERT(rig_stop(&r) == 0);
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        check_held(u, bad);
        dt = query_time(u, bad);
        GLEAN_TEST_CHECK(dt >= 0 && dt < 2, "after the restart, a Query answered in %.3f s", dt);
        close(u);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "a job whose Requirements run out of the evaluation budget is held", test_expensive_requirements_held },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator budget", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

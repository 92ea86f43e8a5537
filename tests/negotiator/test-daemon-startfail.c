/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-startfail.c — the real glean-negotiator and a fake agent
 * (daemon-test.h) that cannot start the job it is given:
 *
 *   - a refusal of ActivateClaim with HoldReasonCode (the agent could not
 *     open the job's input) holds the job with that code, subcode and
 *     reason, after that one attempt, and the claim is released;
 *   - a refusal without one (a transient failure) puts the job back to
 *     Idle and out of the cycles for 5 s, then 10 s: the RequestClaims
 *     come that far apart, not ~30 times a second.
 */
#define _GNU_SOURCE
#include "daemon-test.h"

/* Matched, granted, ActivateClaim: answered with Ok = false and extra. */
static bool refuse_start(Agent *a, const char *extra, double seconds) {
        ClassAd *req = agent_expect(a, GLEAN_CMD_REQUEST_CLAIM, seconds);
        if (!req)
                return false;
        char *claim = agent_grant(a, req, "slot1", 30);
        classad_free(req);
        ClassAd *act = agent_expect(a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        bool ok = act != NULL;
        if (act)
                agent_reply(a, act, false, extra);
        classad_free(act);
        free(claim);
        agent_slot(a, "slot1", "Claimed", "Idle", NULL);
        return ok;
}

static void test_start_fail_holds(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake1"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        CU_ASSERT_FATAL(refuse_start(&a,
                                     "[ Hold = true; HoldReasonCode = 8; HoldReasonSubCode = 13; HoldReason = \"Error "
                                     "from slot1@fake1: cannot open its input '/in' as ann (uid 1000): Permission "
                                     "denied (errno 13)\" ]",
                                     10));
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 5, 5), "job %" PRId64 ".0 is held", cluster);
        ClassAd *job = user_job(u, cluster, 0);
        char *reason = NULL;
        if (job)
                classad_eval_string(job, "HoldReason", MODE, &reason);
        GLEAN_TEST_CHECK(job && ad_int(job, "HoldReasonCode") == 8 && ad_int(job, "HoldReasonSubCode") == 13 &&
                                 ad_int(job, "NumJobStarts") == 1 && reason && strstr(reason, "'/in'"),
                         "HoldReasonCode %" PRId64 ", subcode %" PRId64 ", NumJobStarts %" PRId64 ", HoldReason %s",
                         job ? ad_int(job, "HoldReasonCode") : -1, job ? ad_int(job, "HoldReasonSubCode") : -1,
                         job ? ad_int(job, "NumJobStarts") : -1, reason ? reason : "-");
        free(reason);
        classad_free(job);
        ClassAd *rel = agent_expect(&a, GLEAN_CMD_RELEASE, 5);
        GLEAN_TEST_CHECK(rel != NULL, "the claim is released");
        classad_free(rel);
        ClassAd *again = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 3);
        GLEAN_TEST_CHECK(!again, "the held job was matched again");
        classad_free(again);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static void test_start_fail_backs_off(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake2"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        CU_ASSERT_FATAL(refuse_start(&a, "[ Reason = \"cannot start the job: fork: Resource temporarily unavailable\" ]",
                                     10));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        double t0 = now_mono();
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 1, 5), "job %" PRId64 ".0 is Idle again", cluster);
        /* 5 s out of the cycles, then tried again. */
        ClassAd *early = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 4);
        GLEAN_TEST_CHECK(!early, "matched again %.1f s after its start failed", now_mono() - t0);
        classad_free(early);
        CU_ASSERT_FATAL(refuse_start(&a, NULL, 6));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        double t1 = now_mono();
        GLEAN_TEST_CHECK(t1 - t0 >= 4.5, "tried again after %.1f s, want 5", t1 - t0);
        /* Then 10 s. */
        early = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 8);
        GLEAN_TEST_CHECK(!early, "matched again %.1f s after its second failure", now_mono() - t1);
        classad_free(early);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "a start that would fail again holds the job", test_start_fail_holds },
        { "a transient start failure backs off", test_start_fail_backs_off },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator start failures", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

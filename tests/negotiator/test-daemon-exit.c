/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-exit.c — the real glean-negotiator and the exits an agent
 * keeps for it (daemon-test.h's rig and fake agent):
 *
 *   - a JobExit (and the end of a claim) with a RequestId is answered,
 *     and only once what it changed is committed: killed (GLEAN_FAULT)
 *     between taking the exit and committing it, the daemon never
 *     answers; restarted, it relearns the claim, takes the exit the agent
 *     sends again and answers it; killed right after that answer and
 *     restarted, the job is Completed once, with its exit code;
 *   - an exit heard twice changes nothing: after the job completed and its
 *     claim ended (one history entry, its usage once, nothing charged);
 *     on a claim reused since for the next job (which runs on); of an
 *     earlier run of the job the claim runs now (NumJobStarts): a job that
 *     its OnExitRemove sends back to Idle runs again on the same claim,
 *     and its first exit heard again neither ends nor restarts the second
 *     run.
 */
#define _GNU_SOURCE
#include "daemon-test.h"

/* The daemon ended by itself within seconds: its wait status (-1: still running). */
static int rig_wait_death(Rig *r, int seconds) {
        for (int i = 0; r->pid > 0 && i < seconds * 20; i++) {
                int status;
                if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
                        r->pid = 0;
                        return status;
                }
                usleep(50000);
        }
        return -1;
}

/* A reply that says Ok. */
static bool acknowledged(ClassAd *reply) {
        bool ok = reply_ok(reply);
        classad_free(reply);
        return ok;
}

/* Job C.P's history ads: how many, and the first (*ret, may be NULL). */
static size_t history(int fd, int64_t cluster, int64_t proc, ClassAd **ret) {
        char text[256];
        snprintf(text, sizeof text, "[ Command = \"History\"; RequestId = 31; Ids = \"%" PRId64 ".%" PRId64 "\" ]",
                 cluster, proc);
        ClassAd *m = user_call(fd, text), **ads = NULL;
        size_t n = 0;
        if (m && glean_msg_get_ad_list(m, "Ads", &ads, &n) >= 0 && n > 0 && ret) {
                *ret = ads[0];
                ads[0] = NULL;
        } else if (ret)
                *ret = NULL;
        glean_ad_list_free(ads, n);
        classad_free(m);
        return n;
}

/* The test's user's account: claims held (ResourcesUsed) and usage so far. */
static bool account(int fd, int64_t *ret_in_use, double *ret_usage) {
        char want[128];
        snprintf(want, sizeof want, "%s@test.pool", me());
        ClassAd *m = user_call(fd, "[ Command = \"UserPrio\"; RequestId = 32 ]"), **ads = NULL;
        size_t n = 0;
        bool found = false;
        if (m && glean_msg_get_ad_list(m, "Ads", &ads, &n) >= 0)
                for (size_t i = 0; i < n && !found; i++) {
                        char *name = NULL;
                        classad_eval_string(ads[i], "Name", MODE, &name);
                        if (name && strcmp(name, want) == 0) {
                                found = true;
                                *ret_in_use = ad_int(ads[i], "ResourcesUsed");
                                *ret_usage = ad_real(ads[i], "AccumulatedUsage");
                        }
                        free(name);
                }
        if (!found) {
                char *t = m ? classad_unparse(m) : NULL;
                fprintf(stderr, "no account %s in the UserPrio reply: %s\n", want, t ? t : "(none)");
                free(t);
        }
        glean_ad_list_free(ads, n);
        classad_free(m);
        return found;
}

/* A job of the test's user that never runs: the accounts keep the user
 * while it waits (an account without claims or jobs is forgotten once its
 * priority is back to the least). */
static void user_submit_idle(int fd) {
        ClassAd *m = user_call(fd, "[ Command = \"Submit\"; RequestId = 34; Cluster = [ Cmd = \"/bin/echo\"; "
                                   "Requirements = false; JobUniverse = 5; RequestCpus = 1; RequestMemory = 64; "
                                   "Iwd = \"/tmp\" ]; Procs = { [] } ]");
        GLEAN_TEST_CHECK(reply_ok(m), "a job that never runs is submitted");
        classad_free(m);
}

/* ---- the answer leaves after the commit ---- */

static void test_reply_after_commit(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "JOB_DEFAULT_LEASE_DURATION = 60\n"));
        setenv("GLEAN_FAULT", "kill-before-commit:JobExit", 1);
        bool up = rig_start(&r);
        unsetenv("GLEAN_FAULT");
        CU_ASSERT_FATAL(up);
        GLEAN_TEST_CHECK(log_has(&r, "GLEAN_FAULT=kill-before-commit:JobExit: this daemon kills itself", 2),
                         "the fault is announced");
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake21"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        user_submit_idle(u);
        char *claim = run_one(&a, "slot1", cluster);
        CU_ASSERT_FATAL(claim != NULL);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        CU_ASSERT_FATAL(wait_status(u, cluster, 0, 2, 5));
        close(u);

        /* The exit: taken, then the daemon dies before its commit. No answer comes. */
        agent_exit_run(&a, claim, 3, cluster, 0, 1, 501);
        int status = rig_wait_death(&r, 10);
        GLEAN_TEST_CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                         "the daemon killed itself before the commit (wait status %d)", status);
        ClassAd *reply = agent_wait_reply(&a, 501, 2);
        GLEAN_TEST_CHECK(!reply, "no Reply to an exit that was not committed");
        classad_free(reply);
        GLEAN_TEST_CHECK(log_has(&r, "GLEAN_FAULT: killed before committing a batch that took a JobExit", 1),
                         "the record of the fault");
        agent_close(&a);

        /* Back (without the fault): the job is still Running; the agent
         * re-advertises the claim (the slot Claimed/Idle: the job ended)
         * and sends the exit again; it is taken and answered. */
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        GLEAN_TEST_CHECK(job_status(u, cluster, 0) == 2, "Running after the restart: the exit was not committed");
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake21"));
        agent_slot(&a, "slot1", "Claimed", "Idle", claim);
        agent_exit_run(&a, claim, 3, cluster, 0, 1, 501);
        reply = agent_wait_reply(&a, 501, 10);
        GLEAN_TEST_CHECK(acknowledged(reply), "the exit sent again is acknowledged");
        /* Answered means committed: killed at once, the exit is there after a restart. */
        rig_kill(&r);
        agent_close(&a);
        close(u);
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        ClassAd *h = NULL;
        size_t n = history(u, cluster, 0, &h);
        GLEAN_TEST_CHECK(n == 1 && ad_int(h, "JobStatus") == 4 && ad_int(h, "ExitCode") == 3 &&
                                 ad_int(h, "NumJobStarts") == 1 && ad_real(h, "RemoteWallClockTime") == 4.0,
                         "after the kill: %zu history entries, JobStatus %" PRId64 ", ExitCode %" PRId64
                         ", NumJobStarts %" PRId64 ", RemoteWallClockTime %g",
                         n, ad_int(h, "JobStatus"), ad_int(h, "ExitCode"), ad_int(h, "NumJobStarts"),
                         ad_real(h, "RemoteWallClockTime"));
        classad_free(h);
        int64_t in_use = -1;
        double usage = -1;
        GLEAN_TEST_CHECK(account(u, &in_use, &usage) && in_use == 0, "no claim left charged: %" PRId64, in_use);
        free(claim);
        close(u);
        rig_done(&r, false);
}

/* ---- exits heard twice ---- */

static void test_duplicate_after_completion(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake22"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        user_submit_idle(u);
        char *claim = run_one(&a, "slot1", cluster);
        CU_ASSERT_FATAL(claim != NULL);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        CU_ASSERT_FATAL(wait_status(u, cluster, 0, 2, 5));
        agent_exit_run(&a, claim, 3, cluster, 0, 1, 601);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 601, 5)), "the exit is acknowledged");
        /* Its Release came before the answer (answered on the way). */
        GLEAN_TEST_CHECK(a.releases == 1, "nothing else to run: the claim is released (%d)", a.releases);
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        CU_ASSERT_FATAL(wait_status(u, cluster, 0, -1, 5));
        int64_t in_use = -1;
        double usage = -1;
        CU_ASSERT_FATAL(account(u, &in_use, &usage));
        GLEAN_TEST_CHECK(in_use == 0 && usage > 0, "charged while it ran: %" PRId64 " claims, usage %g", in_use, usage);

        /* The same exit again (the agent did not hear the answer), and
         * the end of the claim: both answered, nothing changes. */
        agent_exit_run(&a, claim, 3, cluster, 0, 1, 602);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 602, 5)), "the exit heard twice is acknowledged");
        char text[512];
        snprintf(text, sizeof text,
                 "[ Command = \"Event\"; RequestId = 603; Slot = \"slot1\"; State = \"Unclaimed\"; "
                 "Activity = \"Idle\"; ClaimId = \"%s\"; ClaimEnded = true; Reason = \"released\" ]",
                 claim);
        CU_ASSERT(agent_send_text(&a, text));
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 603, 5)), "the end of the claim is acknowledged");
        ClassAd *h = NULL;
        size_t n = history(u, cluster, 0, &h);
        GLEAN_TEST_CHECK(n == 1 && ad_int(h, "JobStatus") == 4 && ad_int(h, "ExitCode") == 3 &&
                                 ad_int(h, "NumJobStarts") == 1 && ad_real(h, "RemoteWallClockTime") == 4.0 &&
                                 ad_real(h, "RemoteUserCpu") == 1.5,
                         "%zu history entries, JobStatus %" PRId64 ", NumJobStarts %" PRId64
                         ", RemoteWallClockTime %g, RemoteUserCpu %g",
                         n, ad_int(h, "JobStatus"), ad_int(h, "NumJobStarts"), ad_real(h, "RemoteWallClockTime"),
                         ad_real(h, "RemoteUserCpu"));
        classad_free(h);
        int64_t in_use2 = -1;
        double usage2 = -1;
        GLEAN_TEST_CHECK(account(u, &in_use2, &usage2) && in_use2 == 0 && usage2 == usage,
                         "usage charged once: %" PRId64 " claims, usage %g then %g", in_use2, usage, usage2);
        GLEAN_TEST_CHECK(log_has(&r, "which we do not hold (any more): nothing to do", 1), "a record of the duplicate");
        GLEAN_TEST_CHECK(a.request_claims == 1 && a.activations == 1, "%d claims, %d activations", a.request_claims,
                         a.activations);
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static void test_duplicate_on_reused_claim(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "CLAIM_WORKLIFE = 3600\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake23"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 2);
        CU_ASSERT_FATAL(cluster > 0);
        char *claim = run_one(&a, "slot1", cluster);
        CU_ASSERT_FATAL(claim != NULL);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        CU_ASSERT_FATAL(wait_status(u, cluster, 0, 2, 5));
        /* Job .0 ends: the claim runs job .1 (its ActivateClaim comes before the answer). */
        agent_exit_run(&a, claim, 0, cluster, 0, 1, 701);
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5), *job = NULL;
        CU_ASSERT_FATAL(act != NULL);
        glean_msg_get_ad(act, "JobAd", &job);
        GLEAN_TEST_CHECK(ad_int(job, "ProcId") == 1 && ad_int(job, "NumJobStarts") == 1,
                         "the claim runs job .1 (start %" PRId64 ")", ad_int(job, "NumJobStarts"));
        classad_free(job);
        agent_reply(&a, act, true, NULL);
        classad_free(act);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 701, 5)), "job .0's exit is acknowledged");
        CU_ASSERT_FATAL(wait_status(u, cluster, 1, 2, 5));
        int64_t in_use = -1;
        double usage = -1;
        GLEAN_TEST_CHECK(account(u, &in_use, &usage) && in_use == 1, "one claim charged: %" PRId64, in_use);

        /* Job .0's exit again, on the claim that runs .1 now: answered, ignored. */
        agent_exit_run(&a, claim, 0, cluster, 0, 1, 702);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 702, 5)), "the exit heard twice is acknowledged");
        /* An exit of an earlier run of .1 (its start 2, which it has not had): ignored too. */
        agent_exit_run(&a, claim, 9, cluster, 1, 2, 703);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 703, 5)), "the exit of another run is acknowledged");
        ClassAd *other = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 1.5);
        GLEAN_TEST_CHECK(!other && a.releases == 0, "nothing else is started or released");
        classad_free(other);
        ClassAd *j1 = user_job(u, cluster, 1);
        GLEAN_TEST_CHECK(ad_int(j1, "JobStatus") == 2 && ad_int(j1, "NumJobStarts") == 1,
                         "job .1 runs on: JobStatus %" PRId64 ", NumJobStarts %" PRId64, ad_int(j1, "JobStatus"),
                         ad_int(j1, "NumJobStarts"));
        classad_free(j1);
        ClassAd *h = NULL;
        size_t n = history(u, cluster, 0, &h);
        GLEAN_TEST_CHECK(n == 1 && ad_int(h, "ExitCode") == 0 && ad_int(h, "NumJobStarts") == 1 &&
                                 ad_real(h, "RemoteWallClockTime") == 4.0,
                         "job .0: %zu history entries, NumJobStarts %" PRId64 ", RemoteWallClockTime %g", n,
                         ad_int(h, "NumJobStarts"), ad_real(h, "RemoteWallClockTime"));
        classad_free(h);
        GLEAN_TEST_CHECK(history(u, cluster, 1, NULL) == 0, "job .1 is not in the history");
        GLEAN_TEST_CHECK(account(u, &in_use, &usage) && in_use == 1, "still one claim charged: %" PRId64, in_use);
        GLEAN_TEST_CHECK(log_has(&r, "a JobExit heard again on slot1@fake23", 1), "a record of the duplicates");

        /* .1's own exit is taken. */
        agent_exit_run(&a, claim, 5, cluster, 1, 1, 704);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 704, 5)), "job .1's exit is acknowledged");
        GLEAN_TEST_CHECK(wait_status(u, cluster, 1, -1, 5), "job .1 completes");
        n = history(u, cluster, 1, &h);
        GLEAN_TEST_CHECK(n == 1 && ad_int(h, "ExitCode") == 5, "job .1: %zu history entries, ExitCode %" PRId64, n,
                         ad_int(h, "ExitCode"));
        classad_free(h);
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* OnExitRemove false: the job is Idle again after its exit and the claim
 * runs it again. Its first exit heard twice is of start 1 while the job is
 * at start 2: nothing changes (taken, it would end the second run and
 * start a third). */
static void test_duplicate_of_earlier_run(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "CLAIM_WORKLIFE = 3600\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake24"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit_with(u, 1, "OnExitRemove = ExitCode =?= 0");
        CU_ASSERT_FATAL(cluster > 0);
        char *claim = run_one(&a, "slot1", cluster);
        CU_ASSERT_FATAL(claim != NULL);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        CU_ASSERT_FATAL(wait_status(u, cluster, 0, 2, 5));
        /* Exit 1: not removed, Idle, and at once the claim's next job: itself. */
        agent_exit_run(&a, claim, 1, cluster, 0, 1, 801);
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5), *job = NULL;
        CU_ASSERT_FATAL(act != NULL);
        glean_msg_get_ad(act, "JobAd", &job);
        GLEAN_TEST_CHECK(ad_int(job, "ClusterId") == cluster && ad_int(job, "ProcId") == 0 &&
                                 ad_int(job, "NumJobStarts") == 2,
                         "the claim runs the job again: %" PRId64 ".%" PRId64 ", start %" PRId64,
                         ad_int(job, "ClusterId"), ad_int(job, "ProcId"), ad_int(job, "NumJobStarts"));
        classad_free(job);
        agent_reply(&a, act, true, NULL);
        classad_free(act);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 801, 5)), "the first exit is acknowledged");
        /* The first exit again: the second run goes on. */
        agent_exit_run(&a, claim, 1, cluster, 0, 1, 802);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 802, 5)), "the exit heard twice is acknowledged");
        ClassAd *again = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 1.5);
        GLEAN_TEST_CHECK(!again && a.activations == 2, "no third start (%d activations)", a.activations);
        classad_free(again);
        ClassAd *j = user_job(u, cluster, 0);
        GLEAN_TEST_CHECK(ad_int(j, "JobStatus") == 2 && ad_int(j, "NumJobStarts") == 2 &&
                                 ad_real(j, "RemoteWallClockTime") == 4.0,
                         "the second run goes on: JobStatus %" PRId64 ", NumJobStarts %" PRId64
                         ", RemoteWallClockTime %g (one run's)",
                         ad_int(j, "JobStatus"), ad_int(j, "NumJobStarts"), ad_real(j, "RemoteWallClockTime"));
        classad_free(j);
        GLEAN_TEST_CHECK(log_has(&r, "it is of start 1 of job", 1), "a record of the duplicate");
        /* The second run's own exit (0): removed from the queue, once. */
        agent_exit_run(&a, claim, 0, cluster, 0, 2, 803);
        GLEAN_TEST_CHECK(acknowledged(agent_wait_reply(&a, 803, 5)), "the second exit is acknowledged");
        ClassAd *h = NULL;
        size_t n = history(u, cluster, 0, &h);
        GLEAN_TEST_CHECK(n == 1 && ad_int(h, "ExitCode") == 0 && ad_int(h, "NumJobStarts") == 2 &&
                                 ad_real(h, "RemoteWallClockTime") == 8.0,
                         "%zu history entries, ExitCode %" PRId64 ", NumJobStarts %" PRId64
                         ", RemoteWallClockTime %g (two runs')",
                         n, ad_int(h, "ExitCode"), ad_int(h, "NumJobStarts"), ad_real(h, "RemoteWallClockTime"));
        classad_free(h);
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "the answer to an exit leaves after its commit", test_reply_after_commit },
        { "an exit heard twice after the job completed", test_duplicate_after_completion },
        { "an exit heard twice on a claim reused since", test_duplicate_on_reused_claim },
        { "an exit heard twice of an earlier run of the claim's job", test_duplicate_of_earlier_run },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator exits", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

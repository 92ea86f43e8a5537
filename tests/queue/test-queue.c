/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-queue.c — the job queue (queue/queue.h): submitting, the
 * attributes the queue keeps, lookups, the life of a job (start, exit,
 * requeue), rm / hold / release / prio and who may, the exit and periodic
 * policy with HTCondor's reasons and codes, the idle jobs per submitter,
 * and the history.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "queue-test.h"
#include "test-util.h"

/* ---- names and ids ---- */

static void test_ids(void) {
        static const struct {
                const char *text;
                int r;
                int64_t c, p;
        } cases[] = {
                { "3.0", 0, 3, 0 },     { "12.345", 0, 12, 345 }, { " 7 ", 0, 7, -1 }, { "0.1", -EINVAL, 0, 0 },
                { "-1.0", -EINVAL, 0, 0 }, { "3.", -EINVAL, 0, 0 }, { "3.x", -EINVAL, 0, 0 }, { "", -EINVAL, 0, 0 },
                { "99999999999999999999", -EINVAL, 0, 0 }, { "3.0.1", -EINVAL, 0, 0 },
        };
        char buf[JOB_ID_STRLEN];

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                JobId id = { -9, -9 };
                int r = job_id_parse(cases[i].text, &id);
                GLEAN_TEST_CHECK(r == cases[i].r && (r < 0 || (id.cluster == cases[i].c && id.proc == cases[i].p)),
                                 "'%s': %d %ld.%ld", cases[i].text, r, (long) id.cluster, (long) id.proc);
        }
        CU_ASSERT_STRING_EQUAL(job_id_format((JobId) { 12, 3 }, buf), "12.3");
        CU_ASSERT_STRING_EQUAL(job_id_format((JobId) { 12, -1 }, buf), "12");
        CU_ASSERT_STRING_EQUAL(job_status_name(JOB_HELD), "Held");
        CU_ASSERT_PTR_NULL(job_status_name(0));
        CU_ASSERT_EQUAL(job_status_letter(JOB_REMOVED), 'X');
        CU_ASSERT_EQUAL(job_status_letter(JOB_COMPLETED), 'C');
}

/* ---- submitting ---- */

static void test_submit(void) {
        QT t;
        ClassAd *c = qt_cluster_ad("JobPrio = 3; JobStatus = 1; NumJobStarts = 7; RemoteHost = \"x\"");
        ClassAd *p1 = qt_ad("[ Args = \"one\"; ProcId = 55; Owner = \"eve\" ]");
        ClassAd *p2 = qt_ad("[ Args = \"two\"; JobPrio = -2 ]");
        ClassAd *procs[] = { p1, p2, NULL };
        char why[256] = "";
        int64_t id = 0;

        qt_open(&t, qt_new_db(), NULL);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 1);
        CU_ASSERT_EQUAL_FATAL(queue_submit(t.q, qt_user("alice"), c, procs, 3, QT_T0 + 5, &id, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(id, 1);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 2);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        CU_ASSERT_EQUAL(queue_count(t.q, JOB_IDLE), 3);

        for (int p = 0; p < 3; p++) {
                Job *j = qt_job(t.q, 1, p);
                CU_ASSERT_PTR_NOT_NULL_FATAL(j);
                CU_ASSERT_EQUAL(j->status, JOB_IDLE);
                CU_ASSERT_EQUAL(qt_int(j->ad, "ClusterId"), 1);
                CU_ASSERT_EQUAL(qt_int(j->ad, "ProcId"), p);
                CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "Owner"), "alice");
                CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "User"), "alice@" QT_DOMAIN);
                CU_ASSERT_STRING_EQUAL(j->owner, "alice");
                CU_ASSERT_STRING_EQUAL(j->submitter, "alice@" QT_DOMAIN);
                CU_ASSERT_EQUAL(qt_int(j->ad, "QDate"), (int64_t) QT_T0 + 5);
                CU_ASSERT_EQUAL(qt_int(j->ad, "EnteredCurrentStatus"), (int64_t) QT_T0 + 5);
                CU_ASSERT_EQUAL(qt_int(j->ad, "JobStatus"), 1);
                CU_ASSERT_EQUAL(qt_int(j->ad, "NumJobStarts"), 0);
                CU_ASSERT_FALSE(classad_has(j->ad, "RemoteHost"));
                CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "Cmd"), "/bin/true");
                CU_ASSERT_PTR_NULL(j->claim_id);
        }
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 0)->ad, "Args"), "one");
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 1)->ad, "Args"), "two");
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, 1, 0)->ad, "JobPrio"), 3);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, 1, 1)->ad, "JobPrio"), -2);
        CU_ASSERT_PTR_NULL(qt_job(t.q, 1, 3));
        CU_ASSERT_PTR_NULL(qt_job(t.q, 2, 0));
        CU_ASSERT(queue_submitter_has_jobs(t.q, "alice@" QT_DOMAIN));
        CU_ASSERT_FALSE(queue_submitter_has_jobs(t.q, "bob@" QT_DOMAIN));

        /* The next cluster. */
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 2, QT_T0 + 6), 2);
        CU_ASSERT_EQUAL(queue_size(t.q), 5);
        classad_free(c);
        classad_free(p1);
        classad_free(p2);
        qt_close(&t);
}

static void test_submit_refused(void) {
        static const struct {
                const char *user;
                const char *extra;
                int r;
                const char *why;
        } cases[] = {
                { "alice", "Cmd = undefined", -EINVAL, "job 1.0: no Cmd" },
                { "alice", "Cmd = 3", -EINVAL, "job 1.0: no Cmd" },
                { "alice", "JobPrio = \"high\"", -EINVAL, "JobPrio is not an integer" },
                { "alice", "AccountingGroup = \"has space\"", -EINVAL, "" },
                { "al ice", "", -EINVAL, "no user name" },
                { "", "", -EINVAL, "no user name" },
                { "carol", "", -EDQUOT, "MAX_JOBS_PER_OWNER (3)" },
        };
        QT t;

        qt_open(&t, qt_new_db(), "MAX_JOBS_PER_OWNER = 3\n");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ClassAd *c = qt_cluster_ad(cases[i].extra);
                char why[256] = "";
                int64_t id = 0, next = queue_next_cluster(t.q);
                size_t size = queue_size(t.q);
                size_t n = cases[i].r == -EDQUOT ? 4 : 2;
                int r = queue_submit(t.q, qt_user(cases[i].user), c, NULL, n, QT_T0, &id, why, sizeof(why));

                GLEAN_TEST_CHECK(r == cases[i].r && strstr(why, cases[i].why), "case %zu: %d (%s)", i, r, why);
                GLEAN_TEST_CHECK(queue_size(t.q) == size && queue_next_cluster(t.q) == next,
                                 "case %zu: the queue changed", i);
                classad_free(c);
        }
        /* No Requirements at all. */
        {
                ClassAd *c = qt_ad("[ Cmd = \"/bin/true\" ]");
                char why[256] = "";
                int64_t id;
                CU_ASSERT_EQUAL(queue_submit(t.q, qt_user("alice"), c, NULL, 1, QT_T0, &id, why, sizeof(why)),
                                -EINVAL);
                CU_ASSERT_PTR_NOT_NULL(strstr(why, "no Requirements"));
                classad_free(c);
        }
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        CU_ASSERT_EQUAL(qt_submit(t.q, "carol", "", 3, QT_T0), 1);
        qt_close(&t);
}

static void test_submit_on_hold(void) {
        QT t;
        int64_t c;

        qt_open(&t, qt_new_db(), NULL);
        c = qt_submit(t.q, "alice", "JobStatus = 5", 2, QT_T0);
        for (int p = 0; p < 2; p++) {
                Job *j = qt_job(t.q, c, p);
                CU_ASSERT_EQUAL(j->status, JOB_HELD);
                CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_SUBMITTED_ON_HOLD);
                CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"), "submitted on hold");
        }
        CU_ASSERT_EQUAL(queue_count(t.q, JOB_HELD), 2);
        CU_ASSERT_EQUAL(queue_job_release(t.q, qt_user("alice"), (JobId) { c, 0 }, NULL, QT_T0 + 1, NULL, 0), 0);
        CU_ASSERT_EQUAL(qt_job(t.q, c, 0)->status, JOB_IDLE);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "LastHoldReasonCode"), 15);
        CU_ASSERT_FALSE(classad_has(qt_job(t.q, c, 0)->ad, "HoldReason"));
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, c, 0)->ad, "ReleaseReason"), "via glean release (by user alice)");
        qt_close(&t);
}

/* ---- the life of a job ---- */

static void test_run_complete(void) {
        QT t;
        ClassAd *ex, *h = NULL;
        JobStatus st = 0;
        const char *reason = "x";
        char why[256] = "";
        Job *j;
        int64_t c;

        qt_open(&t, qt_new_db(), NULL);
        c = qt_submit(t.q, "alice", "", 1, QT_T0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-1", "slot1@host", QT_T0 + 10), 0);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_EQUAL(j->status, JOB_RUNNING);
        CU_ASSERT_STRING_EQUAL(j->claim_id, "claim-1");
        CU_ASSERT_STRING_EQUAL(j->slot, "slot1@host");
        CU_ASSERT_PTR_EQUAL(queue_find_claim(t.q, "claim-1"), j);
        CU_ASSERT_EQUAL(qt_int(j->ad, "NumJobStarts"), 1);
        CU_ASSERT_EQUAL(qt_int(j->ad, "JobStartDate"), (int64_t) QT_T0 + 10);
        CU_ASSERT_EQUAL(qt_int(j->ad, "JobCurrentStartDate"), (int64_t) QT_T0 + 10);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "RemoteHost"), "slot1@host");
        CU_ASSERT_EQUAL(queue_count(t.q, JOB_RUNNING), 1);
        /* Never twice at once. */
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-2", "slot2@host", QT_T0 + 11), -EBUSY);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 1 }, "claim-2", "slot2@host", QT_T0 + 11), -ENOENT);

        ex = qt_exit(3, "RemoteUserCpu = 4.5; RemoteSysCpu = 0.5; ResidentSetSize = 2048; ImageSize = 4096");
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, ex, QT_T0 + 70, &st, &reason, why, sizeof(why)), 0);
        classad_free(ex);
        CU_ASSERT_EQUAL(st, JOB_COMPLETED);
        CU_ASSERT_PTR_NULL(reason);
        CU_ASSERT_PTR_NULL(qt_job(t.q, c, 0));
        CU_ASSERT_PTR_NULL(queue_find_claim(t.q, "claim-1"));
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        CU_ASSERT_FALSE(queue_submitter_has_jobs(t.q, "alice@" QT_DOMAIN));
        CU_ASSERT_EQUAL_FATAL(queue_history_find(t.q, (JobId) { c, 0 }, &h), 0);
        CU_ASSERT_EQUAL(qt_int(h, "JobStatus"), JOB_COMPLETED);
        CU_ASSERT_EQUAL(qt_int(h, "ExitCode"), 3);
        CU_ASSERT_EQUAL(qt_int(h, "CompletionDate"), (int64_t) QT_T0 + 70);
        CU_ASSERT_DOUBLE_EQUAL(qt_real(h, "RemoteWallClockTime"), 60, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(qt_real(h, "RemoteUserCpu"), 4.5, 1e-9);
        CU_ASSERT_EQUAL(qt_int(h, "ResidentSetSize"), 2048);
        CU_ASSERT_STRING_EQUAL(qt_str(h, "LastRemoteHost"), "slot1@host");
        CU_ASSERT_FALSE(classad_has(h, "RemoteHost"));
        CU_ASSERT_STRING_EQUAL(qt_str(h, "Cmd"), "/bin/true");
        classad_free(h);
        CU_ASSERT_EQUAL(queue_history_find(t.q, (JobId) { c, 1 }, &h), -ENOENT);
        qt_close(&t);
}

static void test_requeue(void) {
        QT t;
        JobStatus st = 0;
        Job *j;
        int64_t c;

        qt_open(&t, qt_new_db(), NULL);
        c = qt_submit(t.q, "alice", "", 1, QT_T0);
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { c, 0 }, "lost", QT_T0, NULL), -EINVAL);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-1", "slot1@a", QT_T0 + 10), 0);
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { c, 0 }, "the claim's lease expired", QT_T0 + 40, &st), 0);
        CU_ASSERT_EQUAL(st, JOB_IDLE);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_EQUAL(j->status, JOB_IDLE);
        CU_ASSERT_PTR_NULL(j->claim_id);
        CU_ASSERT_EQUAL(qt_int(j->ad, "NumJobStarts"), 1);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "LastVacateReason"), "the claim's lease expired");
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "LastRemoteHost"), "slot1@a");
        CU_ASSERT_DOUBLE_EQUAL(qt_real(j->ad, "RemoteWallClockTime"), 30, 1e-9);
        /* Again, elsewhere. */
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-2", "slot1@b", QT_T0 + 50), 0);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_EQUAL(qt_int(j->ad, "NumJobStarts"), 2);
        CU_ASSERT_EQUAL(qt_int(j->ad, "JobStartDate"), (int64_t) QT_T0 + 10);
        CU_ASSERT_EQUAL(qt_int(j->ad, "JobCurrentStartDate"), (int64_t) QT_T0 + 50);
        qt_close(&t);
}

/* Runs job c.0 under a claim and reports an exit with report; what it became. */
static JobStatus run_and_exit(JobQueue *q, int64_t c, const char *report_extra, int code, const char **ret_reason) {
        ClassAd *ex = qt_exit(code, report_extra);
        JobStatus st = 0;
        char why[256] = "";
        char claim[32];
        int r;

        snprintf(claim, sizeof(claim), "claim-%ld", (long) c);
        CU_ASSERT_EQUAL(queue_job_start(q, (JobId) { c, 0 }, claim, "slot1@h", QT_T0 + 10), 0);
        r = queue_job_exit(q, (JobId) { c, 0 }, ex, QT_T0 + 20, &st, ret_reason, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0, "exit of %ld: %d (%s)", (long) c, r, why);
        classad_free(ex);
        return st;
}

static void test_exit_policy(void) {
        QT t;
        const char *reason = NULL;
        int64_t c;
        Job *j;

        qt_open(&t, qt_new_db(), NULL);
        /* OnExitRemove false: back to Idle. */
        c = qt_submit(t.q, "alice", "OnExitRemove = ExitCode == 0", 1, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 1, &reason), JOB_IDLE);
        CU_ASSERT_PTR_NULL(reason);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "ExitCode"), 1);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 0, &reason), JOB_COMPLETED);

        /* OnExitHold: code 3, HTCondor's sentence. */
        c = qt_submit(t.q, "alice", "OnExitHold = ExitCode != 0", 1, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 2, &reason), JOB_HELD);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_JOB_POLICY);
        GLEAN_TEST_CHECK(strcmp(qt_str(j->ad, "HoldReason"),
                                "The job attribute OnExitHold expression 'ExitCode != 0' evaluated to TRUE") == 0,
                         "HoldReason '%s'", qt_str(j->ad, "HoldReason"));
        CU_ASSERT_STRING_EQUAL(reason, qt_str(j->ad, "HoldReason"));
        CU_ASSERT_EQUAL(qt_int(j->ad, "NumHolds"), 1);
        CU_ASSERT_PTR_NULL(j->claim_id);

        /* Its own reason and subcode. */
        c = qt_submit(t.q, "alice",
                      "OnExitHold = true; OnExitHoldReason = strcat(\"exit \", ExitCode); OnExitHoldSubCode = 42", 1,
                      QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 9, NULL), JOB_HELD);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"), "exit 9");
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonSubCode"), 42);

        /* Undefined: held with code 5. */
        c = qt_submit(t.q, "alice", "OnExitRemove = NoSuchAttribute > 3", 1, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 0, NULL), JOB_HELD);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_JOB_POLICY_UNDEFINED);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"),
                               "The job attribute OnExitRemove expression 'NoSuchAttribute > 3' evaluated to UNDEFINED");

        /* The literal UNDEFINED is false. */
        c = qt_submit(t.q, "alice", "OnExitRemove = UNDEFINED", 1, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 0, NULL), JOB_IDLE);

        /* The agent's hold: out of memory. */
        c = qt_submit(t.q, "alice", "", 1, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, "HoldReasonCode = 34; HoldReason = \"memory usage exceeded\"", 137,
                                     &reason),
                        JOB_HELD);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_OUT_OF_RESOURCES);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"), "memory usage exceeded");

        /* Periodic remove at exit comes before OnExitRemove. */
        c = qt_submit(t.q, "alice", "PeriodicRemove = ExitCode == 7", 1, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 7, &reason), JOB_REMOVED);
        CU_ASSERT_PTR_NULL(qt_job(t.q, c, 0));

        /* A malformed report is refused, the job untouched. */
        {
                ClassAd *bad = qt_ad("[ ExitBySignal = false; ExitCode = 300 ]");
                char why[256] = "";
                c = qt_submit(t.q, "alice", "", 1, QT_T0);
                CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "cl", "slot1@h", QT_T0), 0);
                CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, bad, QT_T0, NULL, NULL, why, sizeof(why)),
                                -EINVAL);
                CU_ASSERT_PTR_NOT_NULL(strstr(why, "ExitCode"));
                CU_ASSERT_EQUAL(qt_job(t.q, c, 0)->status, JOB_RUNNING);
                classad_free(bad);
        }
        qt_close(&t);
}

/* ---- users and administrators ---- */

static void test_permissions(void) {
        QT t;
        char why[256] = "";
        bool was = true;
        int64_t c;

        qt_open(&t, qt_new_db(), NULL);
        c = qt_submit(t.q, "alice", "", 2, QT_T0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("bob"), (JobId) { c, 0 }, NULL, QT_T0, &was, why, sizeof(why)),
                        -EPERM);
        CU_ASSERT_STRING_EQUAL(why, "job 1.0 belongs to alice");
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_user("bob"), (JobId) { c, 0 }, NULL, 0, 0, QT_T0, NULL, why, sizeof(why)),
                        -EPERM);
        CU_ASSERT_EQUAL(queue_job_set_prio(t.q, qt_user("bob"), (JobId) { c, 0 }, 5, why, sizeof(why)), -EPERM);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("bob"), (JobId) { c, 7 }, NULL, QT_T0, &was, why, sizeof(why)),
                        -ENOENT);
        CU_ASSERT_STRING_EQUAL(why, "job 1.7 is not in the queue");
        CU_ASSERT_EQUAL(queue_size(t.q), 2);

        CU_ASSERT_EQUAL(queue_job_set_prio(t.q, qt_user("alice"), (JobId) { c, 0 }, 5, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "JobPrio"), 5);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 1)->ad, "JobPrio"), 0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("alice"), (JobId) { c, 0 }, NULL, QT_T0 + 1, &was, why,
                                         sizeof(why)),
                        0);
        CU_ASSERT_FALSE(was);
        CU_ASSERT_PTR_NULL(qt_job(t.q, c, 0));
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_admin(), (JobId) { c, 1 }, "cleanup", QT_T0 + 2, &was, why,
                                         sizeof(why)),
                        0);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        {
                ClassAd *h = NULL;
                CU_ASSERT_EQUAL_FATAL(queue_history_find(t.q, (JobId) { c, 0 }, &h), 0);
                CU_ASSERT_EQUAL(qt_int(h, "JobStatus"), JOB_REMOVED);
                CU_ASSERT_STRING_EQUAL(qt_str(h, "RemoveReason"), "via glean rm (by user alice)");
                classad_free(h);
                CU_ASSERT_EQUAL_FATAL(queue_history_find(t.q, (JobId) { c, 1 }, &h), 0);
                CU_ASSERT_STRING_EQUAL(qt_str(h, "RemoveReason"), "cleanup");
                classad_free(h);
        }
        qt_close(&t);
}

static void test_rm_hold_running(void) {
        QT t;
        char why[256] = "";
        bool was = false;
        JobStatus st = 0;
        ClassAd *ex;
        int64_t c;
        Job *j;

        qt_open(&t, qt_new_db(), NULL);
        c = qt_submit(t.q, "alice", "", 2, QT_T0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-a", "slot1@h", QT_T0), 0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 1 }, "claim-b", "slot2@h", QT_T0), 0);

        /* rm: Removed at once, the claim kept until it ends. */
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("alice"), (JobId) { c, 0 }, NULL, QT_T0 + 5, &was, why,
                                         sizeof(why)),
                        0);
        CU_ASSERT_TRUE(was);
        j = qt_job(t.q, c, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        CU_ASSERT_EQUAL(j->status, JOB_REMOVED);
        CU_ASSERT_STRING_EQUAL(j->claim_id, "claim-a");
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("alice"), (JobId) { c, 0 }, NULL, QT_T0 + 5, &was, why,
                                         sizeof(why)),
                        -EINVAL);
        ex = qt_exit(143, NULL);
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, ex, QT_T0 + 9, &st, NULL, why, sizeof(why)), 0);
        classad_free(ex);
        CU_ASSERT_EQUAL(st, JOB_REMOVED);
        CU_ASSERT_PTR_NULL(qt_job(t.q, c, 0));
        CU_ASSERT_PTR_NULL(queue_find_claim(t.q, "claim-a"));

        /* hold: Held at once, the claim until it ends; not startable meanwhile, even released. */
        was = false;
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_user("alice"), (JobId) { c, 1 }, "wait", 0, 0, QT_T0 + 5, &was, why,
                                       sizeof(why)),
                        0);
        CU_ASSERT_TRUE(was);
        j = qt_job(t.q, c, 1);
        CU_ASSERT_EQUAL(j->status, JOB_HELD);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_USER_REQUEST);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"), "wait");
        CU_ASSERT_EQUAL(queue_job_release(t.q, qt_user("alice"), (JobId) { c, 1 }, NULL, QT_T0 + 6, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 1 }, "claim-c", "slot3@h", QT_T0 + 6), -EBUSY);
        {
                QueueIdle idle = {};
                CU_ASSERT_EQUAL(queue_idle(t.q, &idle), 0);
                CU_ASSERT_EQUAL(idle.n, 0);
                queue_idle_clear(&idle);
        }
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { c, 1 }, "vacated", QT_T0 + 7, &st), 0);
        CU_ASSERT_EQUAL(st, JOB_IDLE);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 1 }, "claim-c", "slot3@h", QT_T0 + 8), 0);

        /* hold then the claim ends: stays Held. */
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_admin(), (JobId) { c, 1 }, NULL, 0, 0, QT_T0 + 9, &was, why,
                                       sizeof(why)),
                        0);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, c, 1)->ad, "HoldReason"), "via glean hold (by user root)");
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { c, 1 }, "vacated", QT_T0 + 10, &st), 0);
        CU_ASSERT_EQUAL(st, JOB_HELD);
        CU_ASSERT_PTR_NULL(qt_job(t.q, c, 1)->claim_id);
        CU_ASSERT_EQUAL(queue_job_release(t.q, qt_user("alice"), (JobId) { c, 1 }, NULL, QT_T0 + 11, why, sizeof(why)),
                        0);
        CU_ASSERT_EQUAL(queue_job_release(t.q, qt_user("alice"), (JobId) { c, 1 }, NULL, QT_T0 + 11, why, sizeof(why)),
                        -EINVAL);
        CU_ASSERT_STRING_EQUAL(why, "job 1.1 is not held");
        qt_close(&t);
}

/* ---- periodic policy ---- */

typedef struct Told {
        int n;
        JobId id[8];
        JobStatus from[8], to[8];
        bool had_claim[8];
        char reason[8][256];
} Told;

static void told(void *userdata, Job *job, JobStatus from, JobStatus to, const char *reason) {
        Told *t = userdata;

        if (t->n < 8) {
                t->id[t->n] = job->id;
                t->from[t->n] = from;
                t->to[t->n] = to;
                t->had_claim[t->n] = job->claim_id != NULL;
                snprintf(t->reason[t->n], sizeof(t->reason[t->n]), "%s", reason ? reason : "");
        }
        t->n++;
}

static void test_periodic(void) {
        QT t;
        Told tl = {};
        int64_t c1, c2, c3, c4;
        Job *j;

        classad_set_now((int64_t) QT_T0 + 100);
        qt_open(&t, qt_new_db(), NULL);
        c1 = qt_submit(t.q, "alice", "PeriodicHold = time() - QDate > 50", 1, QT_T0);
        c2 = qt_submit(t.q, "alice", "PeriodicRemove = JobStatus == 5", 1, QT_T0);
        c3 = qt_submit(t.q, "alice", "PeriodicHold = NumJobStarts > 0; PeriodicHoldReason = \"started\"", 1, QT_T0);
        c4 = qt_submit(t.q, "alice", "PeriodicRelease = true", 1, QT_T0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c3, 0 }, "claim-3", "slot1@h", QT_T0), 0);
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_user("alice"), (JobId) { c2, 0 }, NULL, 0, 0, QT_T0, NULL, NULL, 0), 0);

        CU_ASSERT_EQUAL(queue_periodic(t.q, QT_T0 + 100, told, &tl), 3);
        CU_ASSERT_EQUAL(tl.n, 3);
        j = qt_job(t.q, c1, 0);
        CU_ASSERT_EQUAL(j->status, JOB_HELD);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_JOB_POLICY);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"),
                               "The job attribute PeriodicHold expression 'time() - QDate > 50' evaluated to TRUE");
        CU_ASSERT_PTR_NULL(qt_job(t.q, c2, 0)); /* removed: in the history */
        j = qt_job(t.q, c3, 0);
        CU_ASSERT_EQUAL(j->status, JOB_HELD);
        CU_ASSERT_STRING_EQUAL(j->claim_id, "claim-3"); /* the daemon vacates it */
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"), "started");
        for (int i = 0; i < tl.n && i < 8; i++) {
                if (tl.id[i].cluster == c3) {
                        CU_ASSERT_TRUE(tl.had_claim[i]);
                        CU_ASSERT_EQUAL(tl.from[i], JOB_RUNNING);
                        CU_ASSERT_EQUAL(tl.to[i], JOB_HELD);
                } else if (tl.id[i].cluster == c2) {
                        CU_ASSERT_EQUAL(tl.to[i], JOB_REMOVED);
                        CU_ASSERT_STRING_EQUAL(tl.reason[i],
                                               "The job attribute PeriodicRemove expression 'JobStatus == 5' "
                                               "evaluated to TRUE");
                } else
                        CU_ASSERT_EQUAL(tl.id[i].cluster, c1);
        }
        CU_ASSERT_EQUAL(qt_job(t.q, c4, 0)->status, JOB_IDLE); /* not held: PeriodicRelease says nothing */
        /* A job being vacated is left alone; c1 stays held (PeriodicHold is not looked at). */
        tl = (Told) {};
        CU_ASSERT_EQUAL(queue_periodic(t.q, QT_T0 + 101, told, &tl), 0);
        qt_close(&t);
        classad_set_now(0);
}

static void test_system_periodic(void) {
        QT t;
        int64_t c1, c2;
        Job *j;

        qt_open(&t, qt_new_db(),
                "SYSTEM_PERIODIC_HOLD = RequestMemory > 1000\n"
                "SYSTEM_PERIODIC_RELEASE = HoldReasonCode == 26 && NumHolds < 2\n"
                "SYSTEM_PERIODIC_REMOVE = NumHolds > 1\n"
                "SYSTEM_PERIODIC_HOLD_SUBCODE = 7\n");
        c1 = qt_submit(t.q, "alice", "RequestMemory = 1500", 1, QT_T0);
        c2 = qt_submit(t.q, "alice", "RequestMemory = 500; PeriodicHold = undefined", 1, QT_T0);
        CU_ASSERT_EQUAL(queue_periodic(t.q, QT_T0 + 60, NULL, NULL), 1);
        j = qt_job(t.q, c1, 0);
        CU_ASSERT_EQUAL(j->status, JOB_HELD);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), QUEUE_HOLD_SYSTEM_POLICY);
        CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonSubCode"), 7);
        CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"),
                               "The system macro SYSTEM_PERIODIC_HOLD expression 'RequestMemory > 1000' evaluated to "
                               "TRUE");
        CU_ASSERT_EQUAL(qt_job(t.q, c2, 0)->status, JOB_IDLE);
        /* Released by the system's policy, held again, then removed (NumHolds 2). */
        CU_ASSERT_EQUAL(queue_periodic(t.q, QT_T0 + 120, NULL, NULL), 1);
        CU_ASSERT_EQUAL(qt_job(t.q, c1, 0)->status, JOB_IDLE);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, c1, 0)->ad, "ReleaseReason"),
                               "The system macro SYSTEM_PERIODIC_RELEASE expression 'HoldReasonCode == 26 && "
                               "NumHolds < 2' evaluated to TRUE");
        CU_ASSERT_EQUAL(queue_periodic(t.q, QT_T0 + 180, NULL, NULL), 1);
        CU_ASSERT_EQUAL(qt_job(t.q, c1, 0)->status, JOB_HELD);
        CU_ASSERT_EQUAL(queue_periodic(t.q, QT_T0 + 240, NULL, NULL), 1);
        CU_ASSERT_PTR_NULL(qt_job(t.q, c1, 0));
        qt_close(&t);
}

/* ---- the matchmaker's view ---- */

static void test_idle(void) {
        QT t;
        QueueIdle idle = {};
        int64_t a1, b1, a2;

        qt_open(&t, qt_new_db(), NULL);
        a1 = qt_submit(t.q, "alice", "", 3, QT_T0);
        b1 = qt_submit(t.q, "bob", "AccountingGroup = \"group_physics.bob\"", 2, QT_T0);
        a2 = qt_submit(t.q, "alice", "", 1, QT_T0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { a1, 1 }, "c1", "slot1@h", QT_T0), 0);
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_user("bob"), (JobId) { b1, 0 }, NULL, 0, 0, QT_T0, NULL, NULL, 0), 0);
        CU_ASSERT_EQUAL_FATAL(queue_idle(t.q, &idle), 0);
        CU_ASSERT_EQUAL_FATAL(idle.n, 2);
        CU_ASSERT_STRING_EQUAL(idle.names[0], "alice@" QT_DOMAIN);
        CU_ASSERT_EQUAL_FATAL(idle.counts[0], 3);
        CU_ASSERT_PTR_EQUAL(idle.jobs[0][0], qt_job(t.q, a1, 0));
        CU_ASSERT_PTR_EQUAL(idle.jobs[0][1], qt_job(t.q, a1, 2));
        CU_ASSERT_PTR_EQUAL(idle.jobs[0][2], qt_job(t.q, a2, 0));
        CU_ASSERT_PTR_EQUAL(idle.ads[0][2], qt_job(t.q, a2, 0)->ad);
        CU_ASSERT_STRING_EQUAL(idle.names[1], "group_physics.bob@" QT_DOMAIN);
        CU_ASSERT_EQUAL(idle.counts[1], 1);
        CU_ASSERT_PTR_EQUAL(idle.jobs[1][0], qt_job(t.q, b1, 1));
        queue_idle_clear(&idle);
        CU_ASSERT_TRUE(queue_has_jobs_fn(t.q, "group_physics.bob@" QT_DOMAIN));
        CU_ASSERT_EQUAL(queue_job_rejected(t.q, (JobId) { a2, 0 }, "no match found", QT_T0 + 3), 0);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, a2, 0)->ad, "LastRejMatchReason"), "no match found");
        qt_close(&t);
}

/* ---- the next job for a reused claim ---- */

/* fit(): the jobs named in fits[] fit, those in skip[] are passed over,
 * every other does not fit; each call counted. */
typedef struct FitTable {
        const char *fits[4], *skip[4];
        int calls;
        char asked[64][JOB_ID_STRLEN];
} FitTable;

static QueueFit table_fit(const Job *j, void *userdata) {
        FitTable *t = userdata;
        char id[JOB_ID_STRLEN];

        job_id_format(j->id, id);
        if (t->calls < 64)
                snprintf(t->asked[t->calls], JOB_ID_STRLEN, "%s", id);
        t->calls++;
        for (size_t i = 0; i < 4; i++)
                if (t->skip[i] && strcmp(t->skip[i], id) == 0)
                        return QUEUE_FIT_SKIP;
        for (size_t i = 0; i < 4; i++)
                if (t->fits[i] && strcmp(t->fits[i], id) == 0)
                        return QUEUE_FITS;
        return QUEUE_FITS_NOT;
}

static const char *next_id(JobQueue *q, const char *submitter, FitTable *t, char buf[static JOB_ID_STRLEN]) {
        Job *j = queue_next_idle(q, submitter, table_fit, t);
        return j ? job_id_format(j->id, buf) : "none";
}

static void test_next_idle(void) {
        const char *alice = "alice@" QT_DOMAIN;
        char buf[JOB_ID_STRLEN];
        QT t;

        qt_open(&t, qt_new_db(), NULL);
        int64_t backlog = qt_submit(t.q, "alice", "", 1000, QT_T0); /* 1 */
        int64_t bob = qt_submit(t.q, "bob", "", 5, QT_T0);          /* 2 */
        int64_t small = qt_submit(t.q, "alice", "", 3, QT_T0);      /* 3 */
        int64_t urgent = qt_submit(t.q, "alice", "JobPrio = 10", 2, QT_T0); /* 4 */
        CU_ASSERT_FATAL(backlog == 1 && bob == 2 && small == 3 && urgent == 4);

        /* A backlog that fits nowhere costs one question, not a thousand. */
        FitTable none = {};
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &none, buf), "none");
        CU_ASSERT_EQUAL(none.calls, 3); /* 1.0, 3.0, 4.0: one per cluster of alike procs; never bob's */

        /* The highest JobPrio first, then the lowest id. */
        FitTable some = { .fits = { "3.0", "4.0", "4.1" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &some, buf), "4.0");
        FitTable low = { .fits = { "3.1", "3.2" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &low, buf), "none"); /* 3.0 said no for its alike procs */
        FitTable first = { .fits = { "3.0" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &first, buf), "3.0");
        CU_ASSERT_EQUAL(first.calls, 3); /* 1.0, 3.0, 4.0 */

        /* A job whose own claim is on the way is passed over, not its cluster. */
        FitTable skip = { .fits = { "3.0", "3.1" }, .skip = { "3.0" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &skip, buf), "3.1");

        /* A proc given its own JobPrio is unlike its cluster: asked alone. */
        char why[256];
        CU_ASSERT_EQUAL(queue_job_set_prio(t.q, qt_user("alice"), (JobId) { backlog, 500 }, 20, why, sizeof why), 0);
        FitTable raised = { .fits = { "1.500", "4.0" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &raised, buf), "1.500");
        CU_ASSERT(raised.calls <= 4);

        /* Running or held jobs are not idle; a requeued job ran (unlike). */
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { small, 0 }, "c1", "slot1@h", QT_T0), 0);
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_user("alice"), (JobId) { small, 1 }, NULL, 0, 0, QT_T0, NULL, NULL, 0),
                        0);
        FitTable rest = { .fits = { "3.0", "3.1", "3.2" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &rest, buf), "3.2");
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { small, 0 }, "evicted", QT_T0 + 1, NULL), 0);
        FitTable back = { .fits = { "3.0" } };
        CU_ASSERT_STRING_EQUAL(next_id(t.q, alice, &back, buf), "3.0");
        qt_close(&t);
}

/* ---- the history ---- */

typedef struct Collected {
        int n;
        char ids[16][JOB_ID_STRLEN];
} Collected;

static int collect(void *userdata, const ClassAd *ad) {
        Collected *c = userdata;

        if (c->n < 16)
                job_id_format((JobId) { qt_int(ad, "ClusterId"), qt_int(ad, "ProcId") }, c->ids[c->n]);
        c->n++;
        return 0;
}

static void test_history(void) {
        QT t;
        Collected got = {};
        ClassAdExpr *e = NULL;
        int64_t c;

        qt_open(&t, qt_new_db(), "HISTORY_MAX_JOBS = 4\nHISTORY_DURATION = 1000\n");
        c = qt_submit(t.q, "alice", "", 6, QT_T0);
        for (int p = 0; p < 6; p++)
                CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("alice"), (JobId) { c, p }, NULL, QT_T0 + 10 * p, NULL,
                                                 NULL, 0),
                                0);
        CU_ASSERT_EQUAL(queue_history_size(t.q), 6);
        CU_ASSERT_EQUAL(queue_history(t.q, (JobId) { 0, -1 }, NULL, 3, collect, &got), 0);
        CU_ASSERT_EQUAL_FATAL(got.n, 3);
        CU_ASSERT_STRING_EQUAL(got.ids[0], "1.5");
        CU_ASSERT_STRING_EQUAL(got.ids[2], "1.3");
        CU_ASSERT_EQUAL_FATAL(classad_expr_parse("ProcId % 2 == 0", 15, CA_MODE_OLD, &e, NULL), 0);
        got = (Collected) {};
        CU_ASSERT_EQUAL(queue_history(t.q, (JobId) { c, -1 }, e, 0, collect, &got), 0);
        CU_ASSERT_EQUAL(got.n, 3);
        CU_ASSERT_STRING_EQUAL(got.ids[0], "1.4");
        classad_expr_free(e);
        got = (Collected) {};
        CU_ASSERT_EQUAL(queue_history(t.q, (JobId) { c, 2 }, NULL, 0, collect, &got), 0);
        CU_ASSERT_EQUAL(got.n, 1);

        /* Beyond HISTORY_MAX_JOBS, then older than HISTORY_DURATION. */
        CU_ASSERT_EQUAL(queue_history_trim(t.q, QT_T0 + 60), 2);
        CU_ASSERT_EQUAL(queue_history_size(t.q), 4);
        CU_ASSERT_EQUAL(queue_history_trim(t.q, QT_T0 + 1035), 2);
        got = (Collected) {};
        CU_ASSERT_EQUAL(queue_history(t.q, (JobId) { 0, -1 }, NULL, 0, collect, &got), 0);
        CU_ASSERT_EQUAL_FATAL(got.n, 2);
        CU_ASSERT_STRING_EQUAL(got.ids[1], "1.4");
        qt_close(&t);
}

static void test_memory_only(void) {
        QT t;
        int64_t c;

        qt_open(&t, NULL, NULL);
        c = qt_submit(t.q, "alice", "", 2, QT_T0);
        CU_ASSERT_EQUAL(run_and_exit(t.q, c, NULL, 0, NULL), JOB_COMPLETED);
        CU_ASSERT_EQUAL(queue_size(t.q), 1);
        CU_ASSERT_EQUAL(qt_history_count(t.q), 0);
        CU_ASSERT_EQUAL(queue_batch_begin(t.q), 0);
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 2, QT_T0), 2);
        CU_ASSERT_EQUAL(queue_batch_commit(t.q, NULL, 0), 0);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "ids", test_ids },
        { "submit", test_submit },
        { "submit_refused", test_submit_refused },
        { "submit_on_hold", test_submit_on_hold },
        { "run_complete", test_run_complete },
        { "requeue", test_requeue },
        { "exit_policy", test_exit_policy },
        { "permissions", test_permissions },
        { "rm_hold_running", test_rm_hold_running },
        { "periodic", test_periodic },
        { "system_periodic", test_system_periodic },
        { "idle", test_idle },
        { "next_idle", test_next_idle },
        { "history", test_history },
        { "memory_only", test_memory_only },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "queue", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

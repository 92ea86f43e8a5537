/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-queue-transfer.c — the queue's side of jobs that carry their files
 * (docs/transfer.md):
 *
 *   - a JobExit whose files could not travel (HoldReasonCode 13 input,
 *     12 output) holds the job with that code, subcode and the reason; it
 *     is no completion: no ExitCode, nothing in the history; NumHolds
 *     counts it; BytesSent/BytesRecvd add up over runs;
 *   - the bytes of a run that ended otherwise (queue_job_add_bytes);
 *   - the job ad's TransferringInput/TransferringOutput while it runs,
 *     gone when the run ends; refused for a job that does not run;
 *   - submit-time checks: should_transfer_files = YES on the central
 *     manager's own socket refused with a reason that says why (a proc's
 *     own attribute too), accepted when an agent relayed it; UserLog there
 *     accepted with a warning; BytesSent and Transferring* submitted are
 *     the queue's (dropped).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "common/proto.h"
#include "queue/jobcmd.h"
#include "queue-test.h"
#include "test-util.h"

/* ---- the life of a job ---- */

static int64_t start(QT *t, const char *extra, const char *claim) {
        int64_t c = qt_submit(t->q, "alice", extra, 1, QT_T0);
        CU_ASSERT_EQUAL_FATAL(queue_job_start(t->q, (JobId) { c, 0 }, claim, "slot1@host", QT_T0 + 10), 0);
        return c;
}

static void test_exit_transfer_hold(void) {
        QT t;
        JobStatus st;
        const char *reason = NULL;
        char why[512] = "";
        ClassAd *h = NULL;

        qt_open(&t, qt_new_db(), NULL);
        static const struct {
                int code, sub;
                const char *reason;
        } cases[] = {
                { 13, 2, "cannot read input file 'data/a.txt': No such file or directory" },
                { 12, 27, "output file 'big.out' is over MAX_TRANSFER_OUTPUT_MB" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int64_t c = start(&t, "ShouldTransferFiles = \"YES\"", i ? "claim-b" : "claim-a");
                char extra[512];
                snprintf(extra, sizeof extra,
                         "HoldReasonCode = %d; HoldReasonSubCode = %d; HoldReason = \"%s\"; Reason = \"%s\"; "
                         "BytesSent = 100; BytesRecvd = 7; RemoteWallClockTime = 5",
                         cases[i].code, cases[i].sub, cases[i].reason, cases[i].reason);
                ClassAd *ex = qt_exit(0, extra);
                CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, ex, QT_T0 + 20, &st, &reason, why, sizeof why),
                                0);
                classad_free(ex);
                Job *j = qt_job(t.q, c, 0);
                CU_ASSERT_EQUAL_FATAL(st, JOB_HELD);
                CU_ASSERT_PTR_NOT_NULL_FATAL(j);
                CU_ASSERT_EQUAL(j->status, JOB_HELD);
                CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonCode"), cases[i].code);
                CU_ASSERT_EQUAL(qt_int(j->ad, "HoldReasonSubCode"), cases[i].sub);
                CU_ASSERT_STRING_EQUAL(qt_str(j->ad, "HoldReason"), cases[i].reason);
                CU_ASSERT(reason && strcmp(reason, cases[i].reason) == 0);
                CU_ASSERT_EQUAL(qt_int(j->ad, "NumHolds"), 1);
                /* no completion: no exit status, not in the history */
                GLEAN_TEST_CHECK(!classad_has(j->ad, "ExitCode") && !classad_has(j->ad, "ExitBySignal"),
                                 "code %d: no ExitCode (%" PRId64 ")", cases[i].code, qt_int(j->ad, "ExitCode"));
                CU_ASSERT_NOT_EQUAL(queue_history_find(t.q, (JobId) { c, 0 }, &h), 0);
                CU_ASSERT_PTR_NULL(j->claim_id);
                CU_ASSERT_EQUAL(qt_int(j->ad, "BytesSent"), 100);
                CU_ASSERT_EQUAL(qt_int(j->ad, "BytesRecvd"), 7);
                CU_ASSERT_DOUBLE_EQUAL(qt_real(j->ad, "RemoteWallClockTime"), 5, 1e-9);
        }
        qt_close(&t);
}

static void test_exit_bytes_cumulative(void) {
        QT t;
        JobStatus st;
        char why[512] = "";
        ClassAd *h = NULL;

        qt_open(&t, qt_new_db(), NULL);
        int64_t c = start(&t, "OnExitRemove = false", "claim-1");
        ClassAd *ex = qt_exit(1, "BytesSent = 1000; BytesRecvd = 10");
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, ex, QT_T0 + 20, &st, NULL, why, sizeof why), 0);
        classad_free(ex);
        CU_ASSERT_EQUAL(st, JOB_IDLE);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-2", "slot1@host", QT_T0 + 30), 0);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "BytesSent"), 1000);
        ex = qt_exit(0, "BytesSent = 24; BytesRecvd = 5; OnExitRemove = true");
        /* The job's OnExitRemove is false: idle again; its bytes add up. */
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, ex, QT_T0 + 40, &st, NULL, why, sizeof why), 0);
        classad_free(ex);
        Job *j = qt_job(t.q, c, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        CU_ASSERT_EQUAL(qt_int(j->ad, "BytesSent"), 1024);
        CU_ASSERT_EQUAL(qt_int(j->ad, "BytesRecvd"), 15);
        CU_ASSERT_EQUAL(qt_int(j->ad, "ExitCode"), 0); /* a real exit keeps its status */
        /* a negative count is refused as any malformed exit report */
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { c, 0 }, "claim-3", "slot1@host", QT_T0 + 50), 0);
        ex = qt_exit(0, "BytesSent = -5");
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { c, 0 }, ex, QT_T0 + 60, &st, NULL, why, sizeof why), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "BytesSent") != NULL, "the reason names BytesSent: %s", why);
        classad_free(ex);
        (void) h;
        qt_close(&t);
}

static void test_transferring(void) {
        QT t;
        JobStatus st;
        char why[512] = "";

        qt_open(&t, qt_new_db(), NULL);
        int64_t idle = qt_submit(t.q, "alice", NULL, 1, QT_T0);
        CU_ASSERT_EQUAL(queue_job_set_transferring(t.q, (JobId) { idle, 0 }, true, false), -EINVAL);
        CU_ASSERT_EQUAL(queue_job_set_transferring(t.q, (JobId) { 999, 0 }, true, false), -ENOENT);
        int64_t c = start(&t, NULL, "claim-1");
        CU_ASSERT_EQUAL(queue_job_set_transferring(t.q, (JobId) { c, 0 }, true, false), 0);
        Job *j = qt_job(t.q, c, 0);
        bool b = false;
        CU_ASSERT(classad_eval_bool(j->ad, "TransferringInput", CA_MODE_OLD, &b) >= 0 && b);
        CU_ASSERT(classad_eval_bool(j->ad, "TransferringOutput", CA_MODE_OLD, &b) >= 0 && !b);
        CU_ASSERT_EQUAL(queue_job_set_transferring(t.q, (JobId) { c, 0 }, false, true), 0);
        CU_ASSERT(classad_eval_bool(j->ad, "TransferringOutput", CA_MODE_OLD, &b) >= 0 && b);
        /* the run ends (requeued): the slot's state goes with it */
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId) { c, 0 }, "vacated", QT_T0 + 30, &st), 0);
        j = qt_job(t.q, c, 0);
        CU_ASSERT(!classad_has(j->ad, "TransferringInput") && !classad_has(j->ad, "TransferringOutput"));
        (void) why;
        qt_close(&t);
}

static void test_add_bytes(void) {
        QT t;

        qt_open(&t, qt_new_db(), NULL);
        int64_t c = qt_submit(t.q, "alice", NULL, 1, QT_T0);
        JobId id = { c, 0 };
        CU_ASSERT_EQUAL(queue_job_add_bytes(t.q, id, -1, 0), -EINVAL);
        CU_ASSERT_EQUAL(queue_job_add_bytes(t.q, (JobId) { 999, 0 }, 1, 1), -ENOENT);
        CU_ASSERT_EQUAL(queue_job_add_bytes(t.q, id, 0, 0), 0);
        CU_ASSERT(!classad_has(qt_job(t.q, c, 0)->ad, "BytesSent"));
        CU_ASSERT_EQUAL(queue_job_add_bytes(t.q, id, 10, 0), 0);
        CU_ASSERT_EQUAL(queue_job_add_bytes(t.q, id, 5, 3), 0);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "BytesSent"), 15);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "BytesRecvd"), 3);
        /* saturates rather than wraps */
        CU_ASSERT_EQUAL(queue_job_add_bytes(t.q, id, INT64_MAX, 0), 0);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, c, 0)->ad, "BytesSent"), INT64_MAX);
        qt_close(&t);
}

/* ---- submit-time checks ---- */

typedef struct Got {
        ClassAd *reply;
} Got;

static int got_send(void *userdata, const char *payload, size_t len) {
        Got *g = userdata;
        GleanCommand cmd;
        char why[256] = "";
        classad_free(g->reply);
        g->reply = NULL;
        int r = glean_msg_parse(payload, len, &g->reply, &cmd, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0 && cmd == GLEAN_CMD_REPLY, "reply does not parse: %s", why);
        return 0;
}

static void got_vacate(void *userdata, const Job *job, const char *claim_id, const char *reason) {
        (void) userdata;
        (void) job;
        (void) claim_id;
        (void) reason;
}

/* The reply to a Submit of cluster/procs text by who. */
static ClassAd *submit_as(JobQueue *q, const QueueRequester *who, const char *cluster, const char *procs) {
        Got g = { NULL };
        JobCmdSink sink = { got_send, got_vacate, &g, NULL };
        JobCmdSubmit *pending = NULL;
        char text[2048];
        snprintf(text, sizeof text,
                 "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; Iwd = \"/tmp\"; "
                 "%s ]; Procs = { %s } ]",
                 cluster, procs ? procs : "[]");
        ClassAd *req = NULL;
        GleanCommand cmd;
        char why[256];
        CU_ASSERT_FATAL(glean_msg_parse(text, strlen(text), &req, &cmd, why, sizeof why) == 0);
        (void) jobcmd_submit(&pending, q, who, req, QT_T0, &sink);
        classad_free(req);
        CU_ASSERT_PTR_NULL(pending);
        return g.reply;
}

static bool ok_of(const ClassAd *reply) {
        bool ok = false;
        (void) classad_eval_bool(reply, "Ok", CA_MODE_OLD, &ok);
        return ok;
}

static void test_submit_checks(void) {
        QT t;
        QueueRequester local = { .user = "alice", .uid = 1000 };
        QueueRequester relayed = { .user = "alice", .uid = 1000, .machine = "submit.example.org" };

        qt_open(&t, qt_new_db(), NULL);
        static const struct {
                const char *cluster, *procs;
        } refused[] = {
                { "ShouldTransferFiles = \"YES\"", NULL },
                { "ShouldTransferFiles = \"yes\"; TransferInput = \"a.txt\"", NULL },
                { "ShouldTransferFiles = \"NO\"", "[], [ ShouldTransferFiles = \"YES\" ]" },
        };
        for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
                ClassAd *m = submit_as(t.q, &local, refused[i].cluster, refused[i].procs);
                const char *why = qt_str(m, "Reason");
                GLEAN_TEST_CHECK(m && !ok_of(m) && strstr(why, "should_transfer_files = YES") &&
                                         strstr(why, "glean-agent"),
                                 "%s: refused on the central manager's socket: %s", refused[i].cluster, why);
                classad_free(m);
        }
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        /* relayed by an agent: queued, its SubmitMachine the agent's */
        ClassAd *m = submit_as(t.q, &relayed, "ShouldTransferFiles = \"YES\"; SubmitMachine = \"evil\"", NULL);
        CU_ASSERT(ok_of(m));
        classad_free(m);
        CU_ASSERT_EQUAL(queue_size(t.q), 1);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 0)->ad, "SubmitMachine"), "submit.example.org");
        /* IF_NEEDED and NO: accepted here (a run that must transfer is held at its start) */
        m = submit_as(t.q, &local, "ShouldTransferFiles = \"IF_NEEDED\"", NULL);
        CU_ASSERT(ok_of(m) && !classad_has(m, "Warning"));
        classad_free(m);
        /* a UserLog without an agent: accepted, with a warning that says why */
        m = submit_as(t.q, &local, "UserLog = \"/tmp/job.log\"", NULL);
        const char *warn = qt_str(m, "Warning");
        GLEAN_TEST_CHECK(ok_of(m) && strstr(warn, "event log") && strstr(warn, "no agent relayed"),
                         "UserLog on the central manager's socket: accepted with a warning: %s", warn);
        classad_free(m);
        m = submit_as(t.q, &relayed, "UserLog = \"/tmp/job.log\"", NULL);
        CU_ASSERT(ok_of(m) && !classad_has(m, "Warning"));
        classad_free(m);
        /* what the queue keeps of a run is its own */
        m = submit_as(t.q, &relayed,
                      "BytesSent = 5; BytesRecvd = 6; TransferringInput = true; TransferringOutput = true", NULL);
        CU_ASSERT(ok_of(m));
        int64_t c = qt_int(m, "ClusterId");
        classad_free(m);
        Job *j = qt_job(t.q, c, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(j);
        CU_ASSERT(!classad_has(j->ad, "BytesSent") && !classad_has(j->ad, "BytesRecvd") &&
                  !classad_has(j->ad, "TransferringInput") && !classad_has(j->ad, "TransferringOutput"));
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "exit_transfer_hold", test_exit_transfer_hold },
        { "exit_bytes_cumulative", test_exit_bytes_cumulative },
        { "transferring", test_transferring },
        { "add_bytes", test_add_bytes },
        { "submit_checks", test_submit_checks },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "queue-transfer", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

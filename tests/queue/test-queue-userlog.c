/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-queue-userlog.c — the queue's outbox of job event log events
 * (queue.h, queue-userlog.c): a job's life (submit, start, exit; hold and
 * release; remove; requeue; a hold at exit) gives HTCondor's events in
 * order, only for a job with UserLog and SubmitMachine; they survive a
 * restart until done, done ones do not; a relative UserLog is made
 * absolute against Iwd; the events read back with the userlog reader.
 */
#define _GNU_SOURCE
#include "queue-test.h"
#include "userlog/userlog.h"

static const QueueRequester *relayed(const char *user, const char *machine) {
        static QueueRequester r;
        r = (QueueRequester){ .user = user, .uid = 1000, .machine = machine };
        return &r;
}

static int64_t submit(QT *t, const char *extra, size_t n, const char *machine) {
        ClassAd *c = qt_cluster_ad(extra);
        char why[512] = "";
        int64_t id = 0;
        int r = queue_submit(t->q, relayed("alice", machine), c, NULL, n, QT_T0, &id, why, sizeof(why));

        classad_free(c);
        GLEAN_TEST_CHECK_FATAL(r == 0, "submit: %s", why);
        return id;
}

/* The types of the pending events of machine, in order, as "000 001 005". */
static const char *types(JobQueue *q, const char *machine, char *buf, size_t n) {
        const QueueUserlogEvent *e;
        int64_t after = 0;
        size_t len = 0;

        buf[0] = 0;
        while ((e = queue_userlog_next(q, machine, after)) && len + 5 < n) {
                len += (size_t) snprintf(buf + len, n - len, "%s%.3s", len ? " " : "", e->text);
                after = e->seq;
        }
        return buf;
}

static void done_all(JobQueue *q, const char *machine) {
        const QueueUserlogEvent *e;
        char why[256];
        while ((e = queue_userlog_next(q, machine, 0)))
                GLEAN_TEST_CHECK_FATAL(queue_userlog_done(q, e->seq, why, sizeof(why)) == 0, "done: %s", why);
}

static void test_life(void) {
        const char *db = qt_new_db();
        ClassAd *ex;
        char buf[256], why[256];
        const QueueUserlogEvent *e;
        UserlogEvent ev;
        int64_t c;
        QT t;

        qt_open(&t, db, NULL);
        c = submit(&t, "UserLog = \"/home/alice/job.log\"; RequestDisk = 1000", 1, "submit.example");
        GLEAN_TEST_CHECK(strcmp(types(t.q, "submit.example", buf, sizeof(buf)), "000") == 0, "after submit: %s", buf);
        e = queue_userlog_next(t.q, "SUBMIT.example", 0);
        GLEAN_TEST_CHECK_FATAL(e != NULL, "machine names are case-insensitive");
        GLEAN_TEST_CHECK(strcmp(e->path, "/home/alice/job.log") == 0 && strcmp(e->owner, "alice") == 0 &&
                                 e->job.cluster == c && e->job.proc == 0,
                         "path %s owner %s", e->path, e->owner);
        GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 0 &&
                                 strcmp(ev.host, "<submit.example>") == 0 && ev.cluster == c &&
                                 ev.time == (time_t) QT_T0,
                         "submit event: %s", e->text);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId){ c, 0 }, "claim-1", "slot1_1@exec.example", QT_T0 + 10), 0);
        ex = qt_exit(3, "RemoteUserCpu = 4.5; RemoteSysCpu = 1.5; ResidentSetSize = 20480; BytesSent = 12; "
                        "BytesRecvd = 34");
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId){ c, 0 }, ex, QT_T0 + 70, NULL, NULL, why, sizeof(why)), 0);
        classad_free(ex);
        GLEAN_TEST_CHECK(strcmp(types(t.q, "submit.example", buf, sizeof(buf)), "000 001 006 005") == 0, "life: %s", buf);
        e = queue_userlog_next(t.q, "submit.example", queue_userlog_next(t.q, "submit.example", 0)->seq);
        GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 1 &&
                                 strcmp(ev.host, "<exec.example>") == 0 &&
                                 strcmp(ev.slot_name, "slot1_1@exec.example") == 0,
                         "execute event: %s", e->text);
        e = queue_userlog_next(t.q, "submit.example", e->seq);
        GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 6 &&
                                 ev.image_size_kb == 20480 && ev.memory_mb == 20 && ev.rss_kb == 20480,
                         "image size event: %s", e->text);
        e = queue_userlog_next(t.q, "submit.example", e->seq);
        /* the job received its input (BytesSent) and sent its output (BytesRecvd) */
        GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 5 &&
                                 ev.normal && ev.return_value == 3 && ev.run_remote.usr == 4 &&
                                 ev.run_remote.sys == 1 && ev.sent_bytes == 34 && ev.recvd_bytes == 12 &&
                                 ev.n_resources == 3,
                         "terminated event: %s", e->text);
        GLEAN_TEST_CHECK(queue_userlog_next(t.q, "other.example", 0) == NULL, "another machine's");
        qt_close(&t);

        /* a restart keeps them; done ones are gone for good */
        qt_open(&t, db, NULL);
        GLEAN_TEST_CHECK(strcmp(types(t.q, "submit.example", buf, sizeof(buf)), "000 001 006 005") == 0, "reopened: %s",
                         buf);
        {
                int64_t seq = queue_userlog_next(t.q, "submit.example", 0)->seq; /* e is valid until a change */
                CU_ASSERT_EQUAL(queue_userlog_done(t.q, seq, why, sizeof(why)), 0);
                CU_ASSERT_EQUAL(queue_userlog_done(t.q, seq, why, sizeof(why)), -ENOENT);
        }
        qt_close(&t);
        qt_open(&t, db, NULL);
        GLEAN_TEST_CHECK(strcmp(types(t.q, "submit.example", buf, sizeof(buf)), "001 006 005") == 0, "after done: %s", buf);
        done_all(t.q, "submit.example");
        CU_ASSERT_EQUAL(queue_userlog_pending(t.q), 0);
        qt_close(&t);
}

static void test_hold_release_remove(void) {
        char buf[256], why[256];
        int64_t c;
        QT t;

        qt_open(&t, qt_new_db(), NULL);
        c = submit(&t, "UserLog = \"/l/a.log\"", 2, "s");
        CU_ASSERT_EQUAL(queue_job_hold(t.q, qt_admin(), (JobId){ c, 0 }, "because", 0, 0, QT_T0 + 1, NULL, why,
                                       sizeof(why)),
                        0);
        CU_ASSERT_EQUAL(queue_job_release(t.q, qt_admin(), (JobId){ c, 0 }, NULL, QT_T0 + 2, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_admin(), (JobId){ c, 1 }, NULL, QT_T0 + 3, NULL, why, sizeof(why)),
                        0);
        GLEAN_TEST_CHECK(strcmp(types(t.q, "s", buf, sizeof(buf)), "000 000 012 013 009") == 0, "%s", buf);
        {
                const QueueUserlogEvent *e = queue_userlog_next(t.q, "s", 0);
                UserlogEvent ev;
                for (int k = 0; k < 2; k++)
                        e = queue_userlog_next(t.q, "s", e->seq);
                GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 12 &&
                                         strcmp(ev.reason, "because") == 0 && ev.code == 1 && ev.subcode == 0,
                                 "held: %s", e->text);
                e = queue_userlog_next(t.q, "s", e->seq);
                GLEAN_TEST_CHECK(strstr(e->text, "Job was released.\n\tvia glean release (by user root)\n") != NULL,
                                 "released: %s", e->text);
                e = queue_userlog_next(t.q, "s", e->seq);
                GLEAN_TEST_CHECK(e->job.proc == 1 && strstr(e->text, "Job was aborted.\n\tvia glean rm (by user root)\n"),
                                 "aborted: %s", e->text);
        }
        qt_close(&t);
}

static void test_requeue_and_exit_hold(void) {
        char buf[256], why[256];
        ClassAd *ex;
        int64_t c;
        QT t;

        qt_open(&t, NULL, NULL); /* in memory too */
        c = submit(&t, "UserLog = \"job.log\"; Iwd = \"/home/alice/run\"", 1, "s");
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId){ c, 0 }, "claim-1", "slot1@x", QT_T0 + 1), 0);
        CU_ASSERT_EQUAL(queue_job_requeue(t.q, (JobId){ c, 0 }, "the claim was lost", QT_T0 + 2, NULL), 0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId){ c, 0 }, "claim-2", "slot1@x", QT_T0 + 3), 0);
        ex = qt_exit(1, "HoldReasonCode = 13; HoldReasonSubCode = 2; HoldReason = \"input missing\"");
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId){ c, 0 }, ex, QT_T0 + 4, NULL, NULL, why, sizeof(why)), 0);
        classad_free(ex);
        GLEAN_TEST_CHECK(strcmp(types(t.q, "s", buf, sizeof(buf)), "000 001 004 001 012") == 0, "%s", buf);
        {
                const QueueUserlogEvent *e = queue_userlog_next(t.q, "s", 0);
                UserlogEvent ev;
                GLEAN_TEST_CHECK(strcmp(e->path, "/home/alice/run/job.log") == 0, "relative UserLog: %s", e->path);
                for (int k = 0; k < 2; k++)
                        e = queue_userlog_next(t.q, "s", e->seq);
                GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 4 &&
                                         strcmp(ev.reason, "the claim was lost") == 0 && !ev.requeued,
                                 "evicted: %s", e->text);
                for (int k = 0; k < 2; k++)
                        e = queue_userlog_next(t.q, "s", e->seq);
                GLEAN_TEST_CHECK(userlog_parse_event(e->text, strlen(e->text), &ev, NULL, 0) == 0 && ev.type == 12 &&
                                         ev.code == 13 && ev.subcode == 2 && strcmp(ev.reason, "input missing") == 0,
                                 "held at exit: %s", e->text);
        }
        done_all(t.q, "s");
        CU_ASSERT_EQUAL(queue_userlog_pending(t.q), 0);
        qt_close(&t);
}

static void test_suspension(void) {
        char buf[256], why[256];
        int64_t c;
        QT t;

        qt_open(&t, qt_new_db(), NULL);
        c = submit(&t, "UserLog = \"/l/s.log\"", 2, "s");
        CU_ASSERT_EQUAL(queue_job_log_suspension(t.q, (JobId){ c, 0 }, true, QT_T0 + 1, why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(queue_job_log_suspension(t.q, (JobId){ c, 7 }, true, QT_T0 + 1, why, sizeof(why)), -ENOENT);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId){ c, 0 }, "claim-1", "slot1@x", QT_T0 + 1), 0);
        CU_ASSERT_EQUAL(queue_job_log_suspension(t.q, (JobId){ c, 0 }, true, QT_T0 + 2, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(queue_job_log_suspension(t.q, (JobId){ c, 0 }, false, QT_T0 + 3, why, sizeof(why)), 0);
        GLEAN_TEST_CHECK(strcmp(types(t.q, "s", buf, sizeof(buf)), "000 000 001 010 011") == 0, "%s", buf);
        {
                const QueueUserlogEvent *e = queue_userlog_next(t.q, "s", 0);
                for (int k = 0; k < 3; k++)
                        e = queue_userlog_next(t.q, "s", e->seq);
                GLEAN_TEST_CHECK(strstr(e->text, "Job was suspended.\n\tNumber of processes actually suspended: 1\n"),
                                 "%s", e->text);
        }
        qt_close(&t);
}

static void test_no_log(void) {
        char buf[256];
        QT t;

        qt_open(&t, qt_new_db(), NULL);
        /* no SubmitMachine (the central manager's own socket): nobody to write it */
        (void) submit(&t, "UserLog = \"/l/a.log\"", 1, NULL);
        /* no UserLog */
        (void) submit(&t, "", 1, "s");
        /* a relative UserLog without an absolute Iwd */
        (void) submit(&t, "UserLog = \"a.log\"; Iwd = \"rel\"", 1, "s");
        GLEAN_TEST_CHECK(queue_userlog_pending(t.q) == 0 && strcmp(types(t.q, "s", buf, sizeof(buf)), "") == 0,
                         "events for jobs without a log: %s", buf);
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "life", test_life },
        { "hold-release-remove", test_hold_release_remove },
        { "requeue-and-exit-hold", test_requeue_and_exit_hold },
        { "suspension", test_suspension },
        { "no-log", test_no_log },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "queue-userlog", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

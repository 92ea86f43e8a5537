/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-queue-submit.c — submissions taken in slices (queue-submit.c):
 * nothing of one is seen before its last step, others are queued (and
 * seen) meanwhile, the limits count what is being taken, a proc refused
 * half-way leaves nothing and uses no id, a batch that fails takes a
 * step's rows and the submission writes them again, a full disk fails it
 * cleanly, and a daemon killed half-way leaves rows that the next open
 * drops, never giving the id again.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include <CUnit/CUnit.h>

#include "queue-test.h"
#include "test-util.h"

/* n procs with an attribute of their own each (bad: proc bad gets a
 * JobPrio that is not an integer). */
static ClassAd **procs_of(size_t n, size_t bad) {
        ClassAd **p = calloc(n, sizeof(*p));
        char text[96];
        for (size_t i = 0; p && i < n; i++) {
                if (i == bad)
                        snprintf(text, sizeof text, "[ Item = %zu; JobPrio = \"high\" ]", i);
                else
                        snprintf(text, sizeof text, "[ Item = %zu ]", i);
                p[i] = qt_ad(text);
        }
        return p;
}

static QueueSubmission *begin(JobQueue *q, const char *user, const char *id, size_t n, size_t bad) {
        ClassAd *c = qt_cluster_ad("");
        QueueSubmission *s = NULL;
        char why[256] = "";
        int r = queue_submission_begin(q, qt_user(user), id, c, procs_of(n, bad), n, QT_T0, &s, why, sizeof why);
        classad_free(c);
        GLEAN_TEST_CHECK(r == 0, "begin: %d (%s)", r, why);
        return r == 0 ? s : NULL;
}

/* Steps s by work until it ends: 1 (queued) or < 0; *steps counted. */
static int run(JobQueue *q, QueueSubmission *s, size_t work, size_t *steps, int64_t *cluster, char *why,
               size_t whylen) {
        int r;
        *steps = 0;
        while ((r = queue_submission_step(q, s, work, cluster, why, whylen)) == 0)
                (*steps)++;
        return r;
}

/* The open batch made to fail by another change of it (a hold of job
 * 1.0 whose write is refused), and its commit refused. */
static void fail_batch(QT *t) {
        sqlite3 *db = acct_sqlite(t->a);
        char why[256] = "";
        CU_ASSERT_EQUAL(sqlite3_exec(db, "PRAGMA query_only = 1", NULL, NULL, NULL), SQLITE_OK);
        int r = queue_job_hold(t->q, qt_admin(), (JobId) { 1, 0 }, "held", 0, 0, QT_T0 + 1, NULL, why, sizeof why);
        GLEAN_TEST_CHECK(r < 0, "the hold that fails the batch: %d", r);
        CU_ASSERT_EQUAL(sqlite3_exec(db, "PRAGMA query_only = 0", NULL, NULL, NULL), SQLITE_OK);
        CU_ASSERT(queue_batch_commit(t->q, why, sizeof why) < 0);
}

/* Nothing seen before the last step; a small submit meanwhile is queued
 * and seen at once, with the next id; both in id order afterwards. */
static void test_slices(void) {
        QT t;
        char why[256] = "";
        int64_t cluster = 0;
        size_t steps = 0;

        qt_open(&t, qt_new_db(), NULL);
        QueueSubmission *s = begin(t.q, "alice", "slices-0123456789", 10000, SIZE_MAX);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_EQUAL(queue_submission_cluster(s), 1);
        CU_ASSERT_PTR_EQUAL(queue_submission_find(t.q, "alice", "slices-0123456789"), s);
        CU_ASSERT_PTR_NULL(queue_submission_find(t.q, "bob", "slices-0123456789"));
        for (int i = 0; i < 12; i++) /* made (10 steps), then 2 steps of rows */
                CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 1000, &cluster, why, sizeof why), 0);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        CU_ASSERT_PTR_NULL(queue_find(t.q, (JobId) { 1, 0 }));
        /* another user's small submit meanwhile: id 2, seen now */
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 3, QT_T0), 2);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        int r = run(t.q, s, 1000, &steps, &cluster, why, sizeof why);
        GLEAN_TEST_CHECK(r == 1 && cluster == 1, "the last steps: %d (%s), cluster %lld", r, why, (long long) cluster);
        GLEAN_TEST_CHECK(steps == 8, "%zu more steps of rows, want 8", steps);
        CU_ASSERT_EQUAL(queue_size(t.q), 10003);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, 1, 9999)->ad, "Item"), 9999);
        CU_ASSERT_STRING_EQUAL(qt_job(t.q, 1, 0)->owner, "alice");
        CU_ASSERT_EQUAL(qt_job(t.q, 2, 2)->status, JOB_IDLE);
        /* its id is remembered as one submission's */
        int64_t rc = 0, rp = 0;
        CU_ASSERT_EQUAL(queue_submit_id_find(t.q, "alice", "slices-0123456789", QT_T0, &rc, &rp), 1);
        CU_ASSERT(rc == 1 && rp == 10000);
        CU_ASSERT_PTR_NULL(queue_submission_find(t.q, "alice", "slices-0123456789"));
        queue_submission_free(t.q, s);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 3);
        qt_close(&t);
}

/* MAX_JOBS_PER_OWNER and MAX_JOBS_SUBMITTED count the procs being taken. */
static void test_limits_count_in_progress(void) {
        QT t;
        char why[256] = "";
        int64_t id;

        qt_open(&t, qt_new_db(), "MAX_JOBS_PER_OWNER = 10\nMAX_JOBS_SUBMITTED = 15\n");
        QueueSubmission *s = begin(t.q, "alice", NULL, 8, SIZE_MAX);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        ClassAd *c = qt_cluster_ad("");
        int r = queue_submit(t.q, qt_user("alice"), c, NULL, 3, QT_T0, &id, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EDQUOT && strstr(why, "has 8 jobs") && strstr(why, "MAX_JOBS_PER_OWNER (10)"),
                         "alice's second submit: %d (%s)", r, why);
        r = queue_submit(t.q, qt_user("bob"), c, NULL, 8, QT_T0, &id, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EDQUOT && strstr(why, "MAX_JOBS_SUBMITTED (15)"), "bob's: %d (%s)", r, why);
        CU_ASSERT_EQUAL(queue_submit(t.q, qt_user("bob"), c, NULL, 7, QT_T0, &id, why, sizeof why), 0);
        classad_free(c);
        size_t steps;
        int64_t cluster;
        CU_ASSERT_EQUAL(run(t.q, s, 3, &steps, &cluster, why, sizeof why), 1);
        CU_ASSERT_EQUAL(queue_size(t.q), 15);
        queue_submission_free(t.q, s);
        qt_close(&t);
}

/* Proc 7,000 refused: nothing queued, nothing written, the id given again. */
static void test_refused_half_way(void) {
        const char *path = qt_new_db();
        QT t;
        char why[256] = "";
        int64_t cluster = 0;
        size_t steps = 0;

        qt_open(&t, path, NULL);
        QueueSubmission *s = begin(t.q, "alice", NULL, 10000, 7000);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        int r = run(t.q, s, 1000, &steps, &cluster, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "job 1.7000: JobPrio is not an integer"), "%d (%s)", r, why);
        CU_ASSERT_EQUAL(steps, 7); /* it stopped at the step that met it */
        queue_submission_free(t.q, s);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 1);
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 2, QT_T0), 1);
        qt_close(&t);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 0);
        CU_ASSERT_EQUAL(queue_size(t.q), 2);
        qt_close(&t);
}

/* A batch that fails after a step wrote rows takes them: the next steps
 * write them again and the submission is whole. */
static void test_batch_failure_rewinds(void) {
        const char *path = qt_new_db();
        QT t;
        char why[256] = "";
        int64_t cluster = 0;

        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 1, QT_T0), 1);
        QueueSubmission *s = begin(t.q, "alice", NULL, 3000, SIZE_MAX);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 0, &cluster, why, sizeof why), 0); /* all made */
        /* a batch: rows 0..999 written, then its own write refused (as a
         * full disk would): it fails, and the batch with it */
        CU_ASSERT_EQUAL_FATAL(queue_batch_begin(t.q), 0);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 1000, &cluster, why, sizeof why), 0);
        sqlite3 *db = acct_sqlite(t.a);
        CU_ASSERT_EQUAL(sqlite3_exec(db, "PRAGMA query_only = 1", NULL, NULL, NULL), SQLITE_OK);
        CU_ASSERT(queue_submission_step(t.q, s, 1000, &cluster, why, sizeof why) < 0);
        CU_ASSERT(queue_batch_commit(t.q, why, sizeof why) < 0);
        CU_ASSERT_EQUAL(sqlite3_exec(db, "PRAGMA query_only = 0", NULL, NULL, NULL), SQLITE_OK);
        queue_submission_free(t.q, s);
        CU_ASSERT_EQUAL(queue_size(t.q), 1);

        /* The same again, another change of the batch failing after the
         * step: the step is written again afterwards. */
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 1, QT_T0), 2);
        s = begin(t.q, "alice", NULL, 3000, SIZE_MAX);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 0, &cluster, why, sizeof why), 0);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 1000, &cluster, why, sizeof why), 0); /* committed alone */
        CU_ASSERT_EQUAL_FATAL(queue_batch_begin(t.q), 0);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 1000, &cluster, why, sizeof why), 0);
        fail_batch(&t);
        size_t steps;
        int r = run(t.q, s, 1000, &steps, &cluster, why, sizeof why);
        GLEAN_TEST_CHECK(r == 1, "after the failed batch: %d (%s)", r, why);
        GLEAN_TEST_CHECK(steps == 2, "%zu steps to write the rest, want 2 (rows 1000-2999)", steps);
        queue_submission_free(t.q, s);
        CU_ASSERT_EQUAL(queue_size(t.q), 3002);
        qt_close(&t);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_size(t.q), 3002);
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 0);
        CU_ASSERT_PTR_NOT_NULL(queue_find(t.q, (JobId) { cluster, 1500 }));
        qt_close(&t);
}

/* The publishing batch fails: the jobs leave memory again. */
static void test_publish_rolled_back(void) {
        const char *path = qt_new_db();
        QT t;
        char why[256] = "";
        int64_t cluster = 0;

        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 2, QT_T0), 1);
        QueueSubmission *s = begin(t.q, "alice", "publish-0123456789", 500, SIZE_MAX);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 0, &cluster, why, sizeof why), 0);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 0, &cluster, why, sizeof why), 0);
        CU_ASSERT_EQUAL_FATAL(queue_batch_begin(t.q), 0);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 0, &cluster, why, sizeof why), 1);
        CU_ASSERT_EQUAL(queue_size(t.q), 502);
        queue_submission_free(t.q, s);
        fail_batch(&t);
        CU_ASSERT_EQUAL(queue_size(t.q), 2);
        CU_ASSERT_PTR_NULL(queue_find(t.q, (JobId) { 2, 0 }));
        CU_ASSERT_PTR_NOT_NULL(queue_find(t.q, (JobId) { 1, 1 }));
        int64_t rc, rp;
        CU_ASSERT_EQUAL(queue_submit_id_find(t.q, "alice", "publish-0123456789", QT_T0, &rc, &rp), 0);
        /* and the queue goes on */
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 1, QT_T0), 3);
        qt_close(&t);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 500);
        qt_close(&t);
}

/* Killed half-way (the child _exits with rows written): the next open
 * drops them and gives the id to no one. */
static void test_killed_half_way(void) {
        const char *path = qt_new_db();
        QT t;

        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(qt_submit(t.q, "bob", "", 1, QT_T0), 1);
        qt_close(&t);
        pid_t pid = fork();
        if (pid == 0) {
                QT c;
                char why[256];
                int64_t cluster;
                if (!qt_open_why(&c, path, NULL, why, sizeof why))
                        _exit(3);
                ClassAd *ad = qt_cluster_ad("");
                QueueSubmission *s = NULL;
                if (queue_submission_begin(c.q, qt_user("alice"), NULL, ad, procs_of(5000, SIZE_MAX), 5000, QT_T0, &s,
                                           why, sizeof why) < 0)
                        _exit(4);
                for (int i = 0; i < 3; i++) /* made, 2 steps of 2,000 rows: 4,000 of 5,000 */
                        if (queue_submission_step(c.q, s, i == 0 ? 0 : 2000, &cluster, why, sizeof why) != 0)
                                _exit(5);
                _exit(0); /* as a kill -9 would: nothing closed */
        }
        int status = -1;
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        CU_ASSERT_EQUAL_FATAL(status, 0);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 4000);
        CU_ASSERT_EQUAL(queue_size(t.q), 1);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 3); /* 2 was reserved: not given again */
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 2, QT_T0), 3);
        qt_close(&t);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 0);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        qt_close(&t);
}

/* The queue closed with a submission being taken: its rows deleted. */
static void test_close_in_progress(void) {
        const char *path = qt_new_db();
        QT t;
        char why[256];
        int64_t cluster;

        qt_open(&t, path, NULL);
        QueueSubmission *s = begin(t.q, "alice", NULL, 3000, SIZE_MAX);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 0, &cluster, why, sizeof why), 0);
        CU_ASSERT_EQUAL(queue_submission_step(t.q, s, 1000, &cluster, why, sizeof why), 0);
        qt_close(&t); /* frees s */
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 0);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "nothing seen before the last step; others queued meanwhile", test_slices },
        { "the limits count the procs being taken", test_limits_count_in_progress },
        { "a proc refused half-way: nothing queued or written, no id used", test_refused_half_way },
        { "a failed batch takes a step's rows: written again", test_batch_failure_rewinds },
        { "the publishing batch fails: the jobs leave memory", test_publish_rolled_back },
        { "killed half-way: the rows dropped at the next open, the id not given again", test_killed_half_way },
        { "closed half-way: the rows deleted", test_close_in_progress },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "queue submit", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-queue-store.c — the job queue in the database: everything survives
 * a close and reopen (running claims too), the next cluster id is never
 * given twice, a version-1 file (accounts only) is migrated in place, a
 * failed commit (a full database: PRAGMA max_page_count) leaves memory as
 * the last commit and the file intact, a batch covers the queue and the
 * accounts together, and a row that does not read refuses the database.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include <CUnit/CUnit.h>

#include "queue-test.h"
#include "test-util.h"

/* ---- a snapshot of the queue in memory ---- */

typedef struct SnapJob {
        JobId id;
        JobStatus status;
        char *ad;    /* classad_unparse of the ad, attributes sorted */
        char *claim; /* "" none */
        char *slot;
} SnapJob;

typedef struct Snap {
        SnapJob *jobs;
        size_t n;
        int64_t next;
        size_t counts[6];
        size_t history;
} Snap;

static int cmp_str(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* "name = expr" of every attribute, sorted, joined: the ad whatever the order. */
static char *canonical(const ClassAd *ad) {
        ClassAdIter it = classad_iter(ad);
        char **lines = NULL, *out = NULL, *expr = NULL;
        const char *name;
        size_t n = 0, len = 1;

        while (classad_iter_next(&it, &name, &expr)) {
                char *line = NULL;
                CU_ASSERT_FATAL(asprintf(&line, "%s = %s", name, expr ? expr : "?") > 0);
                free(expr);
                lines = realloc(lines, (n + 1) * sizeof(*lines));
                lines[n++] = line;
                len += strlen(line) + 2;
        }
        qsort(lines, n, sizeof(*lines), cmp_str);
        out = calloc(1, len);
        for (size_t i = 0; i < n; i++) {
                strcat(out, lines[i]);
                strcat(out, "; ");
                free(lines[i]);
        }
        free(lines);
        return out;
}

static int snap_job(void *userdata, Job *job) {
        Snap *s = userdata;

        s->jobs = realloc(s->jobs, (s->n + 1) * sizeof(*s->jobs));
        s->jobs[s->n++] = (SnapJob) {
                .id = job->id,
                .status = job->status,
                .ad = canonical(job->ad),
                .claim = strdup(job->claim_id ? job->claim_id : ""),
                .slot = strdup(job->slot ? job->slot : ""),
        };
        return 0;
}

static Snap snap_of(JobQueue *q) {
        Snap s = { .next = queue_next_cluster(q), .history = queue_history_size(q) };

        for (int k = 1; k <= 5; k++)
                s.counts[k] = queue_count(q, (JobStatus) k);
        CU_ASSERT_EQUAL(queue_foreach(q, snap_job, &s), 0);
        CU_ASSERT_EQUAL(s.n, queue_size(q));
        return s;
}

static void snap_clear(Snap *s) {
        for (size_t i = 0; i < s->n; i++) {
                free(s->jobs[i].ad);
                free(s->jobs[i].claim);
                free(s->jobs[i].slot);
        }
        free(s->jobs);
        *s = (Snap) {};
}

static bool snap_eq(const Snap *a, const Snap *b, const char *what) {
        if (!GLEAN_TEST_CHECK(a->n == b->n && a->next == b->next && a->history == b->history &&
                                      memcmp(a->counts, b->counts, sizeof(a->counts)) == 0,
                              "%s: %zu jobs, next %ld, history %zu; then %zu, %ld, %zu", what, a->n, (long) a->next,
                              a->history, b->n, (long) b->next, b->history))
                return false;
        for (size_t i = 0; i < a->n; i++) {
                const SnapJob *x = &a->jobs[i], *y = &b->jobs[i];
                if (!GLEAN_TEST_CHECK(x->id.cluster == y->id.cluster && x->id.proc == y->id.proc &&
                                              x->status == y->status && strcmp(x->ad, y->ad) == 0 &&
                                              strcmp(x->claim, y->claim) == 0 && strcmp(x->slot, y->slot) == 0,
                                      "%s: job %ld.%ld differs:\n  %s [%s]\n  %s [%s]", what, (long) x->id.cluster,
                                      (long) x->id.proc, x->ad, x->claim, y->ad, y->claim))
                        return false;
        }
        return true;
}

/* A queue with jobs in every state. */
static void populate(JobQueue *q) {
        int64_t c1 = qt_submit(q, "alice", "PeriodicRemove = false", 3, QT_T0);
        int64_t c2 = qt_submit(q, "bob", "AccountingGroup = \"group_a.bob\"", 2, QT_T0 + 1);
        int64_t c3 = qt_submit(q, "carol", "JobStatus = 5", 1, QT_T0 + 2);
        ClassAd *ex = qt_exit(0, "RemoteUserCpu = 2");

        CU_ASSERT_EQUAL(queue_job_start(q, (JobId) { c1, 0 }, "claim-a", "slot1@h1", QT_T0 + 10), 0);
        CU_ASSERT_EQUAL(queue_job_start(q, (JobId) { c1, 1 }, "claim-b", "slot2@h1", QT_T0 + 10), 0);
        CU_ASSERT_EQUAL(queue_job_remove(q, qt_user("alice"), (JobId) { c1, 1 }, NULL, QT_T0 + 11, NULL, NULL, 0), 0);
        CU_ASSERT_EQUAL(queue_job_set_prio(q, qt_user("bob"), (JobId) { c2, 1 }, 10, NULL, 0), 0);
        CU_ASSERT_EQUAL(queue_job_start(q, (JobId) { c2, 0 }, "claim-c", "slot1@h2", QT_T0 + 12), 0);
        CU_ASSERT_EQUAL(queue_job_exit(q, (JobId) { c2, 0 }, ex, QT_T0 + 20, NULL, NULL, NULL, 0), 0);
        CU_ASSERT_EQUAL(queue_job_hold(q, qt_user("alice"), (JobId) { c1, 2 }, "why not", 0, 3, QT_T0 + 21, NULL,
                                       NULL, 0),
                        0);
        (void) c3;
        classad_free(ex);
}

static void test_reopen(void) {
        const char *path = qt_new_db();
        QT t;
        Snap before, after;

        qt_open(&t, path, NULL);
        populate(t.q);
        before = snap_of(t.q);
        CU_ASSERT_EQUAL(before.n, 5);
        CU_ASSERT_EQUAL(before.history, 1);
        qt_close(&t);

        qt_open(&t, path, NULL);
        after = snap_of(t.q);
        snap_eq(&before, &after, "reopened");
        CU_ASSERT_PTR_NOT_NULL(queue_find_claim(t.q, "claim-a"));
        CU_ASSERT_PTR_NOT_NULL_FATAL(queue_find_claim(t.q, "claim-b"));
        CU_ASSERT_EQUAL(queue_find_claim(t.q, "claim-b")->status, JOB_REMOVED);
        CU_ASSERT_TRUE(queue_submitter_has_jobs(t.q, "group_a.bob@" QT_DOMAIN));
        /* It goes on where it was. */
        CU_ASSERT_EQUAL(qt_submit(t.q, "dave", "", 1, QT_T0 + 30), 4);
        qt_close(&t);
        snap_clear(&before);
        snap_clear(&after);
}

static void test_next_cluster_durable(void) {
        const char *path = qt_new_db();
        QT t;
        int64_t c;

        qt_open(&t, path, "HISTORY_MAX_JOBS = 0\n");
        c = qt_submit(t.q, "alice", "", 2, QT_T0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_admin(), (JobId) { c, 0 }, NULL, QT_T0, NULL, NULL, 0), 0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_admin(), (JobId) { c, 1 }, NULL, QT_T0, NULL, NULL, 0), 0);
        CU_ASSERT_EQUAL(queue_history_trim(t.q, QT_T0), 2);
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        qt_close(&t);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), c + 1);
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 1, QT_T0), c + 1);
        qt_close(&t);
}

/* ---- raw SQLite ---- */

static void raw_exec(const char *path, const char *sql) {
        sqlite3 *db = NULL;
        char *err = NULL;

        CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
        GLEAN_TEST_CHECK(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "");
        sqlite3_free(err);
        sqlite3_close(db);
}

static int64_t raw_int(const char *path, const char *sql) {
        sqlite3 *db = NULL;
        sqlite3_stmt *st = NULL;
        int64_t v = -1;

        CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        sqlite3_close(db);
        return v;
}

/* A file as a release of schema 1 wrote it: accounts only. */
static const char schema_1[] =
        "PRAGMA journal_mode = WAL;"
        "BEGIN;"
        "CREATE TABLE schema_version (version INTEGER NOT NULL);"
        "INSERT INTO schema_version (version) VALUES (1);"
        "CREATE TABLE acct_records (name TEXT PRIMARY KEY NOT NULL, is_group INTEGER NOT NULL,"
        " priority REAL NOT NULL, as_of REAL NOT NULL, accumulated REAL NOT NULL,"
        " weighted_accumulated REAL NOT NULL, begin_usage REAL NOT NULL, last_usage REAL NOT NULL,"
        " factor REAL NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE acct_claims (id TEXT PRIMARY KEY NOT NULL, submitter TEXT NOT NULL, weight REAL NOT NULL,"
        " begin REAL NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE acct_meta (key TEXT PRIMARY KEY NOT NULL, value REAL NOT NULL) WITHOUT ROWID;"
        "INSERT INTO acct_records VALUES ('alice@pool.example', 0, 7.5, 1700000000, 3600, 3600, 1690000000,"
        " 1700000000, 2);"
        "INSERT INTO acct_records VALUES ('<none>', 1, 7.5, 1700000000, 3600, 3600, 1690000000, 1700000000, 0);"
        "INSERT INTO acct_meta VALUES ('pool_size', 24);"
        "COMMIT;";

static void test_migrate_v1(void) {
        const char *path = qt_new_db();
        AcctEntry e;
        double v = 0;
        QT t;

        raw_exec(path, schema_1);
        CU_ASSERT_EQUAL(raw_int(path, "SELECT version FROM schema_version"), 1);
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(raw_int(path, "SELECT version FROM schema_version"), 4); /* through 2 and 3 to 4 */
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 1);
        CU_ASSERT_EQUAL_FATAL(acct_get(t.a, "alice@pool.example", &e), 0);
        CU_ASSERT_DOUBLE_EQUAL(e.factor, 2, 0);
        CU_ASSERT_DOUBLE_EQUAL(e.accumulated, 3600, 0);
        CU_ASSERT_EQUAL(acct_get_meta(t.a, "pool_size", &v), 0);
        CU_ASSERT_DOUBLE_EQUAL(v, 24, 0);
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 3, QT_T0), 1);
        qt_close(&t);
        CU_ASSERT_EQUAL(raw_int(path, "SELECT count(*) FROM queue_jobs"), 3);
        CU_ASSERT_EQUAL(raw_int(path, "SELECT count(*) FROM queue_clusters"), 1);
        CU_ASSERT_EQUAL(raw_int(path, "SELECT count(*) FROM acct_records WHERE name = 'alice@pool.example'"), 1);
        /* Opened again: nothing to migrate, the jobs there. */
        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        qt_close(&t);
}

/* ---- a full database ---- */

/* Caps the database at its pages now plus room (on the connection the
 * queue writes through: max_page_count is the connection's). */
static void cap_pages(QT *t, int room) {
        sqlite3 *db = acct_sqlite(t->a);
        sqlite3_stmt *st = NULL;
        int64_t pages = 0;
        char sql[64];

        CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db, "PRAGMA page_count", -1, &st, NULL), SQLITE_OK);
        if (sqlite3_step(st) == SQLITE_ROW)
                pages = sqlite3_column_int64(st, 0);
        sqlite3_finalize(st);
        snprintf(sql, sizeof(sql), "PRAGMA max_page_count = %ld", (long) (pages + room));
        CU_ASSERT_EQUAL_FATAL(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
}

static void uncap_pages(QT *t) {
        CU_ASSERT_EQUAL(sqlite3_exec(acct_sqlite(t->a), "PRAGMA max_page_count = 1073741823", NULL, NULL, NULL),
                        SQLITE_OK);
}

/* A cluster of n procs with a big attribute each: too much for a few pages. */
static int submit_big(JobQueue *q, size_t n, char *why, size_t whylen) {
        ClassAd *c = qt_cluster_ad("");
        ClassAd **procs = calloc(n, sizeof(*procs));
        char *text = malloc(3000);
        int64_t id = 0;
        int r;

        memset(text, 0, 3000);
        strcpy(text, "[ Args = \"");
        memset(text + strlen(text), 'x', 2000);
        strcat(text, "\" ]");
        for (size_t i = 0; i < n; i++)
                procs[i] = qt_ad(text);
        r = queue_submit(q, qt_user("alice"), c, procs, n, QT_T0 + 50, &id, why, whylen);
        for (size_t i = 0; i < n; i++)
                classad_free(procs[i]);
        free(procs);
        free(text);
        classad_free(c);
        return r;
}

static void test_full_disk(void) {
        const char *path = qt_new_db();
        char why[512] = "";
        Snap before, now, reopened;
        QT t;
        int r;

        qt_open(&t, path, NULL);
        populate(t.q);
        before = snap_of(t.q);

        cap_pages(&t, 2);
        r = submit_big(t.q, 500, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ENOSPC && strstr(why, "full"), "submit: %d (%s)", r, why);
        now = snap_of(t.q);
        snap_eq(&before, &now, "after the failed submit");
        snap_clear(&now);

        /* A removal that would go to the history, refused the same way. */
        memset(why, 0, sizeof(why));
        cap_pages(&t, 0);
        {
                char *big = malloc(200000);
                memset(big, 'y', 199999);
                big[199999] = 0;
                r = queue_job_hold(t.q, qt_admin(), (JobId) { 2, 1 }, big, 0, 0, QT_T0 + 60, NULL, why, sizeof(why));
                free(big);
        }
        GLEAN_TEST_CHECK(r == -ENOSPC, "hold: %d (%s)", r, why);
        now = snap_of(t.q);
        snap_eq(&before, &now, "after the failed hold");
        snap_clear(&now);

        /* Room again: the same cluster id is given, nothing was lost. */
        uncap_pages(&t);
        CU_ASSERT_EQUAL(submit_big(t.q, 50, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(queue_find(t.q, (JobId) { 4, 49 })->status, JOB_IDLE);
        now = snap_of(t.q);
        qt_close(&t);

        qt_open(&t, path, NULL); /* quick_check passes at open */
        reopened = snap_of(t.q);
        snap_eq(&now, &reopened, "reopened after the failures");
        qt_close(&t);
        snap_clear(&before);
        snap_clear(&now);
        snap_clear(&reopened);
}

static void test_batch(void) {
        const char *path = qt_new_db();
        char why[512] = "";
        Snap before, now;
        ClassAd *ex = qt_exit(0, NULL);
        AcctEntry e;
        QT t;
        int r;

        qt_open(&t, path, NULL);
        populate(t.q);
        /* A start and its claim's usage, committed together. */
        CU_ASSERT_EQUAL(queue_batch_begin(t.q), 0);
        CU_ASSERT_EQUAL(acct_claim_begin(t.a, "claim-z", "alice@" QT_DOMAIN, 1, QT_T0 + 100), 0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { 2, 1 }, "claim-z", "slot9@h", QT_T0 + 100), 0);
        CU_ASSERT_EQUAL(queue_batch_commit(t.q, why, sizeof(why)), 0);
        before = snap_of(t.q);

        /* A batch that fails: the exit, the claim's end, a removal and a
         * submit all undone, and the batch void to its end. */
        CU_ASSERT_EQUAL(acct_batch_begin(t.a), 0);
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { 2, 1 }, ex, QT_T0 + 160, NULL, NULL, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(acct_claim_end(t.a, "claim-z", QT_T0 + 160), 0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_admin(), (JobId) { 3, 0 }, NULL, QT_T0 + 160, NULL, why, sizeof(why)),
                        0);
        CU_ASSERT_PTR_NULL(queue_find(t.q, (JobId) { 2, 1 }));
        CU_ASSERT_PTR_NULL(queue_find(t.q, (JobId) { 3, 0 }));
        cap_pages(&t, 0);
        r = submit_big(t.q, 500, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ENOSPC, "submit in the batch: %d (%s)", r, why);
        uncap_pages(&t);
        now = snap_of(t.q);
        snap_eq(&before, &now, "after the failed batch");
        snap_clear(&now);
        CU_ASSERT_EQUAL(acct_claims_count(t.a), 1);
        CU_ASSERT_EQUAL(acct_get(t.a, "alice@" QT_DOMAIN, &e), 0);
        CU_ASSERT_EQUAL(e.in_use, 1);
        CU_ASSERT_EQUAL(queue_job_set_prio(t.q, qt_admin(), (JobId) { 1, 0 }, 1, why, sizeof(why)), -ENOSPC);
        CU_ASSERT_EQUAL(queue_batch_commit(t.q, why, sizeof(why)), -ENOSPC);

        /* Afterwards, changes commit again; the exit and the claim's end together. */
        CU_ASSERT_EQUAL(queue_batch_begin(t.q), 0);
        CU_ASSERT_EQUAL(queue_job_exit(t.q, (JobId) { 2, 1 }, ex, QT_T0 + 170, NULL, NULL, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(acct_claim_end(t.a, "claim-z", QT_T0 + 170), 0);
        CU_ASSERT_EQUAL(queue_batch_commit(t.q, why, sizeof(why)), 0);
        now = snap_of(t.q);
        qt_close(&t);
        qt_open(&t, path, NULL);
        {
                Snap again = snap_of(t.q);
                snap_eq(&now, &again, "reopened after the batch");
                snap_clear(&again);
        }
        CU_ASSERT_EQUAL(acct_claims_count(t.a), 0);
        CU_ASSERT_PTR_NULL(queue_find(t.q, (JobId) { 2, 1 }));
        qt_close(&t);
        classad_free(ex);
        snap_clear(&before);
        snap_clear(&now);
}

static void test_bad_rows(void) {
        static const struct {
                const char *sql;
                const char *why;
        } cases[] = {
                { "UPDATE queue_jobs SET ad = '[ ProcId = 0; JobStatus = ' WHERE proc = 0", "job 1.0: not an ad" },
                { "UPDATE queue_jobs SET ad = '[ ProcId = 7; JobStatus = 1 ]' WHERE proc = 0", "its ProcId is not 0" },
                { "UPDATE queue_jobs SET ad = '[ ProcId = 0; JobStatus = 4 ]' WHERE proc = 0",
                  "JobStatus is not that of a job in the queue" },
                { "UPDATE queue_jobs SET ad = '[ ProcId = 0; JobStatus = 2 ]' WHERE proc = 0", "Running without a claim" },
                { "UPDATE queue_clusters SET ad = '[ ClusterId = 1 ]'", "no Owner" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                const char *path = qt_new_db();
                char why[512] = "";
                QT t;

                qt_open(&t, path, NULL);
                qt_submit(t.q, "alice", "", 2, QT_T0);
                qt_close(&t);
                raw_exec(path, cases[i].sql);
                GLEAN_TEST_CHECK(!qt_open_why(&t, path, NULL, why, sizeof(why)) && strstr(why, cases[i].why) &&
                                         strstr(why, "queue database"),
                                 "case %zu: %s", i, why);
        }
}

/* Job rows without their cluster's row are what a submission taken in
 * slices leaves when the daemon stops before its last step: never
 * acknowledged, dropped at the open (and deleted), not a broken queue. */
static void test_unfinished_rows(void) {
        const char *path = qt_new_db();
        char why[512] = "";
        QT t;

        qt_open(&t, path, NULL);
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 2, QT_T0), 1);
        CU_ASSERT_EQUAL(qt_submit(t.q, "alice", "", 3, QT_T0), 2);
        qt_close(&t);
        raw_exec(path, "DELETE FROM queue_clusters WHERE id = 2");
        CU_ASSERT_TRUE_FATAL(qt_open_why(&t, path, NULL, why, sizeof(why)));
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 3);
        CU_ASSERT_EQUAL(queue_size(t.q), 2);
        CU_ASSERT_PTR_NOT_NULL(queue_find(t.q, (JobId) { 1, 1 }));
        CU_ASSERT_PTR_NULL(queue_find(t.q, (JobId) { 2, 0 }));
        /* the id is not given again */
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 3);
        qt_close(&t);
        /* deleted: the next open finds none */
        CU_ASSERT_TRUE_FATAL(qt_open_why(&t, path, NULL, why, sizeof(why)));
        CU_ASSERT_EQUAL(queue_unfinished_rows(t.q), 0);
        CU_ASSERT_EQUAL(queue_size(t.q), 2);
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "reopen", test_reopen },
        { "next_cluster_durable", test_next_cluster_durable },
        { "migrate_v1", test_migrate_v1 },
        { "full_disk", test_full_disk },
        { "batch", test_batch },
        { "bad_rows", test_bad_rows },
        { "unfinished_rows", test_unfinished_rows },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "queue_store", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

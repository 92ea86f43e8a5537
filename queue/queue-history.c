/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-history.c — the jobs that left the queue (queue_history): read
 * from the database, newest first; trimmed to HISTORY_DURATION,
 * HISTORY_MAX_JOBS and MAX_HISTORY_LOG x (MAX_HISTORY_ROTATIONS + 1) bytes
 * (queue-limits.c keeps the count of bytes). Without a database, or with
 * HISTORY = "", there is no history.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/cleanup.h"
#include "queue-internal.h"

/* 1 or 0; -E2BIG when e ran out of the evaluation budget on ad (the
 * listing stops there: one constraint costs one budget, not one a row). */
static int constraint_holds(const ClassAdExpr *e, const ClassAd *ad) {
        CaValue v = ca_undefined();
        uint64_t hits = classad_budget_hits();
        bool yes;

        if (!e)
                return 1;
        yes = classad_expr_eval(e, ad, NULL, QUEUE_MODE, &v) >= 0 && v.type == CA_BOOL && v.u.b;
        ca_value_clear(&v);
        return classad_budget_hits() != hits ? -E2BIG : yes;
}

int queue_history(JobQueue *q, JobId only, const ClassAdExpr *constraint, size_t limit, QueueHistoryFn fn,
                  void *userdata) {
        sqlite3_stmt *st = NULL;
        size_t given = 0;
        int rc, r = 0;

        if (!q->db)
                return 0;
        if (only.cluster > 0 && only.proc >= 0)
                rc = sqlite3_prepare_v2(q->db,
                                        "SELECT ad FROM queue_history WHERE cluster = ?1 AND proc = ?2", -1, &st,
                                        NULL);
        else if (only.cluster > 0)
                rc = sqlite3_prepare_v2(q->db,
                                        "SELECT ad FROM queue_history WHERE cluster = ?1"
                                        " ORDER BY left_at DESC, cluster DESC, proc DESC",
                                        -1, &st, NULL);
        else
                rc = sqlite3_prepare_v2(q->db,
                                        "SELECT ad FROM queue_history ORDER BY left_at DESC, cluster DESC, proc DESC",
                                        -1, &st, NULL);
        if (rc != SQLITE_OK)
                return -EIO;
        if (only.cluster > 0)
                sqlite3_bind_int64(st, 1, only.cluster);
        if (only.cluster > 0 && only.proc >= 0)
                sqlite3_bind_int64(st, 2, only.proc);
        while ((limit == 0 || given < limit) && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *text = (const char *) sqlite3_column_text(st, 0);
                ClassAd *ad = NULL;

                if (!text || classad_parse(text, strlen(text), QUEUE_MODE, &ad, NULL) < 0)
                        continue; /* a row that does not read is skipped: the rest still shows */
                r = constraint_holds(constraint, ad);
                if (r > 0) {
                        given++;
                        r = fn(userdata, ad);
                }
                classad_free(ad);
                if (r < 0)
                        break;
        }
        if (r >= 0 && rc != SQLITE_ROW && rc != SQLITE_DONE)
                r = -EIO;
        sqlite3_finalize(st);
        return r < 0 ? r : 0;
}

int queue_history_find(JobQueue *q, JobId id, ClassAd **ret) {
        sqlite3_stmt *st;
        char *text = NULL;
        int rc, r;

        if (!q->db)
                return -ENOENT;
        st = q->stmt[QS_FIND_HISTORY];
        sqlite3_bind_int64(st, 1, id.cluster);
        sqlite3_bind_int64(st, 2, id.proc);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
                text = strdup((const char *) sqlite3_column_text(st, 0));
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (rc == SQLITE_DONE)
                return -ENOENT;
        if (rc != SQLITE_ROW)
                return -EIO;
        if (!text)
                return -ENOMEM;
        r = classad_parse(text, strlen(text), QUEUE_MODE, ret, NULL);
        free(text);
        return r == -ENOMEM ? r : r < 0 ? -EBADMSG : 0;
}

size_t queue_history_size(JobQueue *q) {
        sqlite3_stmt *st;
        size_t n = 0;

        if (!q->db)
                return 0;
        st = q->stmt[QS_COUNT_HISTORY];
        if (sqlite3_step(st) == SQLITE_ROW)
                n = (size_t) sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return n;
}

/* Runs a cached delete; the rows it deleted, or -errno with write_why. */
static int run_delete(JobQueue *q, sqlite3_stmt *st, const char *what) {
        int rc;

        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
                if (sqlite3_column_count(st) > 0) /* RETURNING the bytes of the ad forgotten */
                        q->history_bytes_pending -= sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (rc != SQLITE_DONE) {
                snprintf(q->write_why, sizeof(q->write_why), "queue database %s: %s: %s", q->path, what,
                         sqlite3_errmsg(q->db));
                return rc == SQLITE_FULL ? -ENOSPC : -EIO;
        }
        return sqlite3_changes(q->db);
}

/* How many of the oldest ads to forget so that excess bytes go; -EIO. */
static int64_t oldest_covering(JobQueue *q, int64_t excess) {
        sqlite3_stmt *st = NULL;
        int64_t k = 0, got = 0;
        int rc = sqlite3_prepare_v2(q->db,
                                    "SELECT length(CAST(ad AS BLOB)) FROM queue_history ORDER BY left_at, cluster, proc",
                                    -1, &st, NULL);

        if (rc != SQLITE_OK)
                return -EIO;
        while (got < excess && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                got += sqlite3_column_int64(st, 0);
                k++;
        }
        sqlite3_finalize(st);
        return rc == SQLITE_ROW || rc == SQLITE_DONE || got >= excess ? k : -EIO;
}

/* MAX_HISTORY_LOG x (MAX_HISTORY_ROTATIONS + 1): the oldest go first. */
static int trim_bytes(JobQueue *q) {
        int64_t bytes = 0, k;
        int r = qhistory_bytes(q, &bytes);

        if (r < 0 || bytes <= q->settings.history_max_bytes)
                return r < 0 ? r : 0;
        k = oldest_covering(q, bytes - q->settings.history_max_bytes);
        if (k <= 0)
                return k < 0 ? (int) k : 0;
        sqlite3_bind_int64(q->stmt[QS_TRIM_HISTORY_COUNT], 1, (sqlite3_int64) k);
        return run_delete(q, q->stmt[QS_TRIM_HISTORY_COUNT],
                          "forgetting history beyond MAX_HISTORY_LOG x (MAX_HISTORY_ROTATIONS + 1) bytes");
}

int queue_history_trim(JobQueue *q, double now) {
        size_t n;
        int r, gone = 0;

        if (!q->db)
                return 0;
        r = queue_change_begin(q);
        if (r < 0)
                return r;
        if (q->settings.history_duration > 0) {
                sqlite3_bind_double(q->stmt[QS_TRIM_HISTORY_TIME], 1, now - (double) q->settings.history_duration);
                r = run_delete(q, q->stmt[QS_TRIM_HISTORY_TIME], "forgetting old history");
                if (r > 0)
                        gone += r;
        }
        if (r >= 0 && (n = queue_history_size(q)) > (size_t) q->settings.history_max_jobs) {
                sqlite3_bind_int64(q->stmt[QS_TRIM_HISTORY_COUNT], 1, (sqlite3_int64) (n - q->settings.history_max_jobs));
                r = run_delete(q, q->stmt[QS_TRIM_HISTORY_COUNT], "forgetting history beyond HISTORY_MAX_JOBS");
                if (r > 0)
                        gone += r;
        }
        if (r >= 0 && q->settings.history_max_bytes > 0) {
                r = trim_bytes(q);
                if (r > 0)
                        gone += r;
        }
        r = queue_change_end(q, r < 0 ? r : 0, NULL, 0);
        return r < 0 ? r : gone;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-store.c — the job queue's rows (schema step 2 of
 * accounting/store.c): queue_clusters (a cluster's shared attributes, once),
 * queue_jobs (each proc's own attributes, and the claim it runs under),
 * queue_history (the whole ad of each job that left, with when) and
 * queue_meta (next_cluster). Ads are stored as classad_unparse() writes
 * them and parsed back in CA_MODE_OLD.
 *
 * Every write runs inside the Accountant's transaction (queue.c opens it);
 * a failure is returned and its reason kept in q->write_why, and the
 * change that made it is undone by the rollback. Rows are outside input
 * when read back: one that does not parse, or is not as written, refuses
 * the database at open with a reason naming it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/cleanup.h"
#include "queue-internal.h"

static const char *const stmt_sql[_QS_MAX] = {
        [QS_PUT_CLUSTER] = "INSERT OR REPLACE INTO queue_clusters (id, ad) VALUES (?1, ?2)",
        [QS_DELETE_CLUSTER] = "DELETE FROM queue_clusters WHERE id = ?1",
        [QS_GET_CLUSTER] = "SELECT ad FROM queue_clusters WHERE id = ?1",
        [QS_PUT_JOB] = "INSERT OR REPLACE INTO queue_jobs (cluster, proc, ad, claim, slot) VALUES (?1, ?2, ?3, ?4, ?5)",
        [QS_DELETE_JOB] = "DELETE FROM queue_jobs WHERE cluster = ?1 AND proc = ?2",
        [QS_GET_JOB] = "SELECT ad, claim, slot FROM queue_jobs WHERE cluster = ?1 AND proc = ?2",
        [QS_PUT_HISTORY] = "INSERT OR REPLACE INTO queue_history (cluster, proc, left_at, ad) VALUES (?1, ?2, ?3, ?4)",
        [QS_FIND_HISTORY] = "SELECT ad FROM queue_history WHERE cluster = ?1 AND proc = ?2",
        /* The trims say the bytes of each ad they forget (queue-limits.c). */
        [QS_TRIM_HISTORY_TIME] = "DELETE FROM queue_history WHERE left_at < ?1 RETURNING length(CAST(ad AS BLOB))",
        [QS_TRIM_HISTORY_COUNT] = ("DELETE FROM queue_history WHERE (cluster, proc) IN (SELECT cluster, proc FROM "
                                   "queue_history ORDER BY left_at, cluster, proc LIMIT ?1)"
                                   " RETURNING length(CAST(ad AS BLOB))"),
        [QS_COUNT_HISTORY] = "SELECT count(*) FROM queue_history",
        [QS_SET_META] = "INSERT OR REPLACE INTO queue_meta (key, value) VALUES (?1, ?2)",
        [QS_GET_META] = "SELECT value FROM queue_meta WHERE key = ?1",
        [QS_MAX_HISTORY_CLUSTER] = "SELECT coalesce(max(cluster), 0) FROM queue_history",
        [QS_PUT_SUBMIT_ID] = "INSERT OR REPLACE INTO queue_submits (user, id, cluster, procs, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        [QS_TRIM_SUBMIT_IDS] = "DELETE FROM queue_submits WHERE at < ?1",
        [QS_DELETE_CLUSTER_JOBS] = "DELETE FROM queue_jobs WHERE cluster = ?1",
};

int qstore_prepare(JobQueue *q, char *why, size_t whylen) {
        const char *p = sqlite3_db_filename(q->db, "main");

        q->path = p && *p ? p : "(temporary)";
        for (size_t i = 0; i < _QS_MAX; i++) {
                int rc = sqlite3_prepare_v3(q->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &q->stmt[i], NULL);
                if (rc != SQLITE_OK)
                        return glean_why(acct_sqlite_errno(q->db, rc), why, whylen,
                                         "queue database %s: preparing the statements: %s", q->path,
                                         sqlite3_errmsg(q->db));
        }
        return 0;
}

void qstore_finalize(JobQueue *q) {
        for (size_t i = 0; i < _QS_MAX; i++) {
                sqlite3_finalize(q->stmt[i]);
                q->stmt[i] = NULL;
        }
}

/* ---- writes ---- */

/* Runs st (its parameters bound), resets it; -errno with write_why. */
static int run(JobQueue *q, sqlite3_stmt *st, const char *what, JobId id) {
        char idbuf[JOB_ID_STRLEN];
        int rc;

        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
                ;
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (rc == SQLITE_DONE)
                return 0;
        snprintf(q->write_why, sizeof(q->write_why), "queue database %s: %s %s: %s", q->path, what,
                 job_id_format(id, idbuf), sqlite3_errmsg(q->db));
        return acct_sqlite_errno(q->db, rc);
}

/* Binds ad's text as parameter i; the text is returned to be freed after
 * the statement ran. */
/* An ad's text: whole, or (own) a chained proc ad's own attributes only,
 * its cluster's row having the rest. */
static int bind_ad(JobQueue *q, sqlite3_stmt *st, int i, const ClassAd *ad, bool own, char **ret_text) {
        char *text = own ? classad_unparse_own(ad) : classad_unparse(ad);

        if (!text) {
                snprintf(q->write_why, sizeof(q->write_why), "queue database %s: out of memory", q->path);
                return -ENOMEM;
        }
        if (sqlite3_bind_text(st, i, text, -1, SQLITE_STATIC) != SQLITE_OK) {
                free(text);
                return -ENOMEM;
        }
        *ret_text = text;
        return 0;
}

int qstore_put_cluster(JobQueue *q, const QCluster *c) {
        _cleanup_free_ char *text = NULL;
        sqlite3_stmt *st = q->stmt[QS_PUT_CLUSTER];
        int r;

        if (!q->db)
                return 0;
        sqlite3_bind_int64(st, 1, c->id);
        r = bind_ad(q, st, 2, c->ad, false, &text);
        if (r < 0) {
                sqlite3_clear_bindings(st);
                return r;
        }
        return run(q, st, "writing cluster", (JobId) { c->id, -1 });
}

int qstore_delete_cluster(JobQueue *q, int64_t id) {
        sqlite3_stmt *st = q->stmt[QS_DELETE_CLUSTER];

        if (!q->db)
                return 0;
        sqlite3_bind_int64(st, 1, id);
        return run(q, st, "deleting cluster", (JobId) { id, -1 });
}

int qstore_put_job(JobQueue *q, const QJob *j) {
        _cleanup_free_ char *text = NULL;
        sqlite3_stmt *st = q->stmt[QS_PUT_JOB];
        int r;

        if (!q->db)
                return 0;
        sqlite3_bind_int64(st, 1, j->pub.id.cluster);
        sqlite3_bind_int64(st, 2, j->pub.id.proc);
        r = bind_ad(q, st, 3, j->proc, true, &text);
        if (r < 0) {
                sqlite3_clear_bindings(st);
                return r;
        }
        if (j->claim) {
                sqlite3_bind_text(st, 4, j->claim, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 5, j->slot ? j->slot : "", -1, SQLITE_STATIC);
        }
        return run(q, st, "writing job", j->pub.id);
}

int qstore_delete_job(JobQueue *q, JobId id) {
        sqlite3_stmt *st = q->stmt[QS_DELETE_JOB];

        if (!q->db)
                return 0;
        sqlite3_bind_int64(st, 1, id.cluster);
        sqlite3_bind_int64(st, 2, id.proc);
        return run(q, st, "deleting job", id);
}

int qstore_delete_cluster_jobs(JobQueue *q, int64_t cluster) {
        sqlite3_stmt *st = q->stmt[QS_DELETE_CLUSTER_JOBS];

        if (!q->db)
                return 0;
        sqlite3_bind_int64(st, 1, cluster);
        return run(q, st, "deleting the rows of the unfinished submission of cluster", (JobId) { cluster, -1 });
}

int qstore_put_history(JobQueue *q, const QJob *j, double left_at) {
        _cleanup_free_ char *text = NULL;
        sqlite3_stmt *st = q->stmt[QS_PUT_HISTORY];
        int r;

        if (!q->db || q->settings.history_off)
                return 0; /* HISTORY = "": none kept */
        sqlite3_bind_int64(st, 1, j->pub.id.cluster);
        sqlite3_bind_int64(st, 2, j->pub.id.proc);
        sqlite3_bind_double(st, 3, left_at);
        r = bind_ad(q, st, 4, j->pub.ad, false, &text);
        if (r < 0) {
                sqlite3_clear_bindings(st);
                return r;
        }
        r = run(q, st, "writing the history of job", j->pub.id);
        if (r >= 0)
                q->history_bytes_pending += (int64_t) strlen(text);
        return r;
}

int qstore_set_next_cluster(JobQueue *q, int64_t next) {
        sqlite3_stmt *st = q->stmt[QS_SET_META];

        if (!q->db)
                return 0;
        q->touched_meta = true;
        sqlite3_bind_text(st, 1, "next_cluster", -1, SQLITE_STATIC);
        sqlite3_bind_int64(st, 2, next);
        return run(q, st, "writing next_cluster after cluster", (JobId) { next - 1, -1 });
}

/* ---- reading ---- */

static const char *column_text(sqlite3_stmt *st, int i) {
        return sqlite3_column_type(st, i) == SQLITE_TEXT ? (const char *) sqlite3_column_text(st, i) : NULL;
}

static int parse_row_ad(JobQueue *q, const char *text, const char *what, JobId id, ClassAd **ret, char *why,
                        size_t whylen) {
        char idbuf[JOB_ID_STRLEN];
        CaError err = {};
        int r;

        if (!text)
                return glean_why(-EBADMSG, why, whylen, "queue database %s: %s %s: no ad", q->path, what,
                                 job_id_format(id, idbuf));
        r = classad_parse(text, strlen(text), QUEUE_MODE, ret, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return glean_why(-EBADMSG, why, whylen, "queue database %s: %s %s: not an ad (column %d: %s)",
                                 q->path, what, job_id_format(id, idbuf), err.column, err.msg);
        return 0;
}

/* Takes ad. */
int qcluster_from_ad(JobQueue *q, int64_t id, ClassAd *ad, QCluster **ret, char *why, size_t whylen) {
        QCluster *c = calloc(1, sizeof(*c));
        int64_t cid = 0;
        int r;

        if (!c) {
                classad_free(ad);
                return -ENOMEM;
        }
        c->id = id;
        c->ad = ad;
        if (classad_eval_int(ad, "ClusterId", QUEUE_MODE, &cid) < 0 || cid != id ||
            classad_eval_string(ad, "Owner", QUEUE_MODE, &c->owner) < 0) {
                r = glean_why(-EBADMSG, why, whylen, "queue database %s: cluster %" PRId64 ": no ClusterId %" PRId64
                              " or no Owner", q->path, id, id);
                qcluster_free(c);
                return r;
        }
        r = acct_job_submitter(ad, q->settings.uid_domain, &c->submitter, why, whylen);
        if (r < 0) {
                qcluster_free(c);
                return r;
        }
        *ret = c;
        return 0;
}

/* One row of queue_jobs into memory; cluster c (NULL: looked up, or read). */
static int job_from_row(JobQueue *q, QCluster *c, int64_t cluster, int64_t proc, const char *ad_text,
                        const char *claim, const char *slot, char *why, size_t whylen) {
        ClassAd *proc_ad = NULL;
        JobId id = { cluster, proc };
        int64_t pid = -1;
        int r;

        r = parse_row_ad(q, ad_text, "job", id, &proc_ad, why, whylen);
        if (r < 0)
                return r;
        if (classad_eval_int(proc_ad, "ProcId", QUEUE_MODE, &pid) < 0 || pid != proc) {
                char idbuf[JOB_ID_STRLEN];
                classad_free(proc_ad);
                return glean_why(-EBADMSG, why, whylen, "queue database %s: job %s: its ProcId is not %" PRId64,
                                 q->path, job_id_format(id, idbuf), proc);
        }
        if (claim && !*claim)
                claim = NULL;
        r = queue_insert_job(q, c, proc, proc_ad, claim, slot, why, whylen);
        if (r < 0 && why && whylen > 0 && r != -ENOMEM && strncmp(why, "queue database", 14) != 0) {
                char rest[400];
                snprintf(rest, sizeof(rest), "%s", why);
                snprintf(why, whylen, "queue database %s: %s", q->path, rest);
        }
        return r;
}

static int get_meta(JobQueue *q, const char *key, int64_t *ret) {
        sqlite3_stmt *st = q->stmt[QS_GET_META];
        int rc, r = -ENOENT;

        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                *ret = sqlite3_column_int64(st, 0);
                r = 0;
        } else if (rc != SQLITE_DONE)
                r = acct_sqlite_errno(q->db, rc);
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        return r;
}

static int64_t max_history_cluster(JobQueue *q) {
        sqlite3_stmt *st = q->stmt[QS_MAX_HISTORY_CLUSTER];
        int64_t v = 0;

        if (sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        return v;
}

/* next_cluster: never one given before (the meta value, and past every
 * cluster in the queue and the history). */
static int load_next_cluster(JobQueue *q, char *why, size_t whylen) {
        int64_t next = 1, h;
        int r;

        r = get_meta(q, "next_cluster", &next);
        if (r < 0 && r != -ENOENT)
                return glean_why(r, why, whylen, "queue database %s: reading next_cluster: %s", q->path,
                                 sqlite3_errmsg(q->db));
        if (next < 1)
                next = 1;
        if (q->n_entries > 0 && q->entries[q->n_entries - 1].cluster >= next)
                next = q->entries[q->n_entries - 1].cluster + 1;
        h = max_history_cluster(q);
        if (h >= next)
                next = h + 1;
        q->next_cluster = next;
        return 0;
}

/* The clusters of a load, by id (rows come in id order). */
typedef struct ClusterList {
        QCluster **c;
        size_t n, cap;
} ClusterList;

static QCluster *cluster_list_find(const ClusterList *l, int64_t id) {
        size_t lo = 0, hi = l->n;

        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (l->c[mid]->id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo < l->n && l->c[lo]->id == id ? l->c[lo] : NULL;
}

int qstore_load(JobQueue *q, char *why, size_t whylen) {
        ClusterList clusters = {};
        sqlite3_stmt *st = NULL;
        int rc, r = 0;

        /* One read transaction: clusters and jobs as of one commit. */
        rc = sqlite3_exec(q->db, "BEGIN", NULL, NULL, NULL);
        if (rc != SQLITE_OK)
                return glean_why(acct_sqlite_errno(q->db, rc), why, whylen, "queue database %s: reading: %s", q->path,
                                 sqlite3_errmsg(q->db));

        rc = sqlite3_prepare_v2(q->db, "SELECT id, ad FROM queue_clusters ORDER BY id", -1, &st, NULL);
        while (st && r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t id = sqlite3_column_int64(st, 0);
                ClassAd *ad = NULL;
                QCluster *c = NULL;

                if (clusters.n == clusters.cap) {
                        size_t cap = clusters.cap ? 2 * clusters.cap : 256;
                        QCluster **n = realloc(clusters.c, cap * sizeof(*n));
                        if (!n) {
                                r = -ENOMEM;
                                break;
                        }
                        clusters.c = n;
                        clusters.cap = cap;
                }
                r = parse_row_ad(q, column_text(st, 1), "cluster", (JobId) { id, -1 }, &ad, why, whylen);
                if (r >= 0)
                        r = qcluster_from_ad(q, id, ad, &c, why, whylen);
                if (r >= 0)
                        clusters.c[clusters.n++] = c;
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = glean_why(acct_sqlite_errno(q->db, rc), why, whylen, "queue database %s: reading the clusters: %s",
                              q->path, sqlite3_errmsg(q->db));
        sqlite3_finalize(st);
        st = NULL;

        if (r >= 0)
                rc = sqlite3_prepare_v2(q->db,
                                        "SELECT cluster, proc, ad, claim, slot FROM queue_jobs ORDER BY cluster, proc",
                                        -1, &st, NULL);
        while (r >= 0 && st && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                int64_t cluster = sqlite3_column_int64(st, 0), proc = sqlite3_column_int64(st, 1);
                QCluster *c = cluster_list_find(&clusters, cluster);

                if (!c) {
                        /* The rows of a submission that was not finished:
                         * never acknowledged, deleted below. */
                        q->unfinished_rows++;
                        continue;
                }
                r = job_from_row(q, c, cluster, proc, column_text(st, 2), column_text(st, 3), column_text(st, 4), why,
                                 whylen);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = glean_why(acct_sqlite_errno(q->db, rc), why, whylen, "queue database %s: reading the jobs: %s", q->path,
                              sqlite3_errmsg(q->db));
        sqlite3_finalize(st);

        /* Clusters without a job (none written so) are dropped. */
        for (size_t i = 0; i < clusters.n; i++)
                if (clusters.c[i]->n_procs == 0)
                        qcluster_free(clusters.c[i]);
        free(clusters.c);

        if (r >= 0)
                r = load_next_cluster(q, why, whylen);
        if (r >= 0)
                r = qsubmit_ids_load(q, why, whylen);
        (void) sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
        if (r >= 0 && q->unfinished_rows > 0 && !q->readonly) {
                rc = sqlite3_exec(q->db,
                                  "BEGIN IMMEDIATE; DELETE FROM queue_jobs WHERE cluster NOT IN "
                                  "(SELECT id FROM queue_clusters); COMMIT",
                                  NULL, NULL, NULL);
                if (rc != SQLITE_OK) {
                        r = glean_why(acct_sqlite_errno(q->db, rc), why, whylen,
                                      "queue database %s: deleting the rows of an unfinished submission: %s", q->path,
                                      sqlite3_errmsg(q->db));
                        (void) sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
                }
        }
        return r;
}

static int id_order(const void *a, const void *b) {
        const JobId *x = a, *y = b;
        return x->cluster < y->cluster ? -1 : x->cluster > y->cluster ? 1 : x->proc < y->proc ? -1 : x->proc > y->proc;
}

/* One job's rows, read into memory (nothing when it has none). */
static int reload_job(JobQueue *q, JobId id, char *why, size_t whylen) {
        sqlite3_stmt *st = q->stmt[QS_GET_JOB];
        _cleanup_free_ char *ad = NULL, *claim = NULL, *slot = NULL;
        QCluster *c;
        int rc, r;

        sqlite3_bind_int64(st, 1, id.cluster);
        sqlite3_bind_int64(st, 2, id.proc);
        rc = sqlite3_step(st);
        if (rc == SQLITE_ROW) {
                const char *a = column_text(st, 0), *cl = column_text(st, 1), *sl = column_text(st, 2);
                ad = a ? strdup(a) : NULL;
                claim = cl ? strdup(cl) : NULL;
                slot = sl ? strdup(sl) : NULL;
        }
        sqlite3_reset(st);
        sqlite3_clear_bindings(st);
        if (rc == SQLITE_DONE)
                return 0;
        if (rc != SQLITE_ROW)
                return acct_sqlite_errno(q->db, rc);

        c = queue_cluster(q, id.cluster);
        if (!c) {
                ClassAd *cad = NULL;
                char *text = NULL;

                st = q->stmt[QS_GET_CLUSTER];
                sqlite3_bind_int64(st, 1, id.cluster);
                if ((rc = sqlite3_step(st)) == SQLITE_ROW && column_text(st, 0))
                        text = strdup(column_text(st, 0));
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
                if (rc == SQLITE_DONE)
                        return 0; /* a row of an unfinished submission: not in the queue */
                if (!text)
                        return rc == SQLITE_ROW ? -EBADMSG : acct_sqlite_errno(q->db, rc);
                r = parse_row_ad(q, text, "cluster", (JobId) { id.cluster, -1 }, &cad, why, whylen);
                free(text);
                if (r < 0)
                        return r;
                r = qcluster_from_ad(q, id.cluster, cad, &c, why, whylen);
                if (r < 0)
                        return r;
                r = job_from_row(q, c, id.cluster, id.proc, ad, claim, slot, why, whylen);
                if (r < 0 && c->n_procs == 0)
                        qcluster_free(c);
                return r;
        }
        return job_from_row(q, c, id.cluster, id.proc, ad, claim, slot, why, whylen);
}

int qstore_reload_touched(JobQueue *q, char *why, size_t whylen) {
        size_t n = 0;
        int r = 0;

        if (q->n_touched > 1)
                qsort(q->touched, q->n_touched, sizeof(*q->touched), id_order);
        for (size_t i = 0; i < q->n_touched; i++)
                if (n == 0 || id_order(&q->touched[n - 1], &q->touched[i]) != 0)
                        q->touched[n++] = q->touched[i];
        q->n_touched = n;

        /* Out first (a cluster whose procs all go is freed), then in again. */
        for (size_t i = 0; i < n; i++) {
                QJob *j = queue_lookup(q, q->touched[i].cluster, q->touched[i].proc);
                if (j)
                        queue_drop_job(q, j);
        }
        for (size_t i = 0; i < n; i++) {
                int k = reload_job(q, q->touched[i], why, whylen);
                if (k < 0 && r >= 0)
                        r = k;
        }
        if (q->touched_meta) {
                int k = load_next_cluster(q, why, whylen);
                if (k < 0 && r >= 0)
                        r = k;
        }
        return r;
}

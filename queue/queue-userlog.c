/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-userlog.c — the queue's outbox of job event log events
 * (docs/transfer.md, "The event log"): the events of a job's life
 * (userlog/userlog.h) made where the change that causes them is made
 * (queue-life.c, queue-submit.c call qlog_*), each stored in queue_userlog
 * (schema step 4) in that change's transaction, and kept in memory in seq
 * order until the job's submit agent has appended it to the log
 * (queue_userlog_done). Only for jobs whose ad has UserLog and
 * SubmitMachine (a job submitted on the central manager's own socket has
 * no agent to write it).
 *
 * seq is the row's AUTOINCREMENT id: increasing, never given twice, so
 * that an agent may tell an event it wrote already from a new one. A
 * transaction that fails takes its events with it (qlog_tx_end), and
 * gives back the ones it marked done.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sqlite3.h>

#include "common/cleanup.h"
#include "queue-internal.h"
#include "userlog/userlog.h"

struct QLog {
        QueueUserlogEvent *v; /* by seq */
        size_t n, cap;
        size_t tx_mark;       /* v[tx_mark..] were added in the open transaction */
        int64_t *tx_done;     /* seqs marked done in it */
        size_t n_done, cap_done;
        size_t n_gone;        /* entries marked done (compacted away) */
        int64_t next_seq;     /* without a database */
        uint64_t generation;
        sqlite3_stmt *put, *del;

        /* The run that just ended (queue_job_exit): its figures for the
         * 005 or 004 that follows. */
        bool have_run;
        double run_user, run_sys, run_sent, run_recvd, run_image, run_rss;
};

static void entry_clear(QueueUserlogEvent *e) {
        free(e->machine);
        free(e->owner);
        free(e->path);
        free(e->text);
        memset(e, 0, sizeof(*e));
}

static int entry_add(QLog *l, int64_t seq, JobId job, const char *machine, const char *owner, const char *path,
                     const char *text) {
        QueueUserlogEvent *e;

        if (l->n == l->cap) {
                size_t cap = l->cap ? 2 * l->cap : 64;
                QueueUserlogEvent *v = realloc(l->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                l->v = v, l->cap = cap;
        }
        e = &l->v[l->n];
        *e = (QueueUserlogEvent){ .seq = seq, .job = job };
        e->machine = strdup(machine), e->owner = strdup(owner), e->path = strdup(path), e->text = strdup(text);
        if (!e->machine || !e->owner || !e->path || !e->text) {
                entry_clear(e);
                return -ENOMEM;
        }
        l->n++;
        l->generation++;
        return 0;
}

static void compact(QLog *l) {
        size_t k = 0;

        if (l->n_gone == 0)
                return;
        for (size_t i = 0; i < l->n; i++) {
                if (l->v[i].done)
                        entry_clear(&l->v[i]);
                else
                        l->v[k++] = l->v[i];
        }
        l->n = k;
        l->n_gone = 0;
        l->tx_mark = l->n;
}

int qlog_open(JobQueue *q, char *why, size_t whylen) {
        QLog *l = calloc(1, sizeof(*l));
        sqlite3_stmt *st = NULL;
        int rc, r = 0;

        if (!l)
                return -ENOMEM;
        q->ulog = l;
        l->next_seq = 1;
        if (!q->db)
                return 0;
        if (sqlite3_prepare_v3(q->db,
                               "INSERT INTO queue_userlog (cluster, proc, machine, owner, path, text) "
                               "VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                               -1, SQLITE_PREPARE_PERSISTENT, &l->put, NULL) != SQLITE_OK ||
            sqlite3_prepare_v3(q->db, "DELETE FROM queue_userlog WHERE seq = ?1", -1, SQLITE_PREPARE_PERSISTENT,
                               &l->del, NULL) != SQLITE_OK)
                return glean_why(-EIO, why, whylen, "queue database %s: preparing the event log's statements: %s",
                                 q->path, sqlite3_errmsg(q->db));
        rc = sqlite3_prepare_v2(q->db,
                                "SELECT seq, cluster, proc, machine, owner, path, text FROM queue_userlog ORDER BY seq",
                                -1, &st, NULL);
        if (rc != SQLITE_OK)
                return glean_why(acct_sqlite_errno(q->db, rc), why, whylen,
                                 "queue database %s: reading the event log's outbox: %s", q->path,
                                 sqlite3_errmsg(q->db));
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *m = (const char *) sqlite3_column_text(st, 3), *o = (const char *) sqlite3_column_text(st, 4),
                           *p = (const char *) sqlite3_column_text(st, 5), *t = (const char *) sqlite3_column_text(st, 6);
                JobId id = { sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2) };
                if (!m || !o || !p || !t) {
                        r = glean_why(-EBADMSG, why, whylen, "queue database %s: an event log row is not as written",
                                      q->path);
                        break;
                }
                r = entry_add(l, sqlite3_column_int64(st, 0), id, m, o, p, t);
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = glean_why(acct_sqlite_errno(q->db, rc), why, whylen,
                              "queue database %s: reading the event log's outbox: %s", q->path, sqlite3_errmsg(q->db));
        sqlite3_finalize(st);
        l->tx_mark = l->n;
        return r;
}

void qlog_free(JobQueue *q) {
        QLog *l = q->ulog;

        if (!l)
                return;
        for (size_t i = 0; i < l->n; i++)
                entry_clear(&l->v[i]);
        sqlite3_finalize(l->put);
        sqlite3_finalize(l->del);
        free(l->v);
        free(l->tx_done);
        free(l);
        q->ulog = NULL;
}

void qlog_tx_end(JobQueue *q, bool committed) {
        QLog *l = q->ulog;

        if (!l)
                return;
        if (!committed) {
                /* the events of the failed transaction never were */
                while (l->n > l->tx_mark)
                        entry_clear(&l->v[--l->n]);
                for (size_t i = 0; i < l->n_done; i++)
                        for (size_t k = 0; k < l->n; k++)
                                if (l->v[k].seq == l->tx_done[i] && l->v[k].done) {
                                        l->v[k].done = false;
                                        l->n_gone--;
                                }
                l->generation++;
        }
        l->n_done = 0;
        l->have_run = false;
        compact(l);
        l->tx_mark = l->n;
}

/* ---- the events of a job ---- */

static char *ad_string(const ClassAd *ad, const char *name) {
        char *v = NULL;
        return classad_eval_string(ad, name, QUEUE_MODE, &v) >= 0 ? v : NULL;
}

static double ad_real(const ClassAd *ad, const char *name, double def) {
        double v;
        return classad_eval_real(ad, name, QUEUE_MODE, &v) >= 0 && isfinite(v) ? v : def;
}

/* The log's path (UserLog, made absolute against Iwd) and the submit
 * machine; false when the job has no log glean can write. */
static bool job_log(const QJob *j, char **ret_path, char **ret_machine) {
        _cleanup_free_ char *log = ad_string(j->pub.ad, "UserLog"), *machine = ad_string(j->pub.ad, "SubmitMachine");
        char *path;

        if (!log || !*log || !machine || !*machine)
                return false;
        if (log[0] == '/')
                path = TAKE_PTR(log);
        else {
                _cleanup_free_ char *iwd = ad_string(j->pub.ad, "Iwd");
                if (!iwd || iwd[0] != '/' || asprintf(&path, "%s/%s", iwd, log) < 0)
                        return false;
        }
        *ret_path = path;
        *ret_machine = TAKE_PTR(machine);
        return true;
}

int qlog_event(JobQueue *q, const QJob *j, const UserlogEvent *ev) {
        QLog *l = q->ulog;
        _cleanup_free_ char *path = NULL, *machine = NULL, *text = NULL;
        int64_t seq;
        int r;

        if (!l || !job_log(j, &path, &machine))
                return 0;
        r = userlog_format(ev, false, &text);
        if (r < 0)
                return r;
        if (q->db) {
                sqlite3_stmt *st = l->put;
                int rc;
                sqlite3_bind_int64(st, 1, j->pub.id.cluster);
                sqlite3_bind_int64(st, 2, j->pub.id.proc);
                sqlite3_bind_text(st, 3, machine, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 4, j->pub.owner, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 5, path, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 6, text, -1, SQLITE_STATIC);
                rc = sqlite3_step(st);
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
                if (rc != SQLITE_DONE) {
                        snprintf(q->write_why, sizeof(q->write_why), "queue database %s: an event of %s: %s", q->path,
                                 path, sqlite3_errmsg(q->db));
                        return acct_sqlite_errno(q->db, rc);
                }
                seq = sqlite3_last_insert_rowid(q->db);
        } else
                seq = l->next_seq++;
        return entry_add(l, seq, j->pub.id, machine, j->pub.owner, path, text);
}

static void init(UserlogEvent *ev, int type, const QJob *j, double now) {
        userlog_event_init(ev, type, j->pub.id.cluster, j->pub.id.proc, (time_t) now);
}

static void set_text(char *dst, size_t size, const char *s) {
        snprintf(dst, size, "%s", s ? s : "");
}

int qlog_submitted(JobQueue *q, QJob *const *jobs, size_t n, double now) {
        static UserlogEvent ev;
        int r = 0;

        /* SubmitMachine is the cluster's (queue-submit.c): none, no agent
         * to write any proc's log, and a big submit pays nothing here */
        if (n == 0 || !classad_has(jobs[0]->cluster->ad, "SubmitMachine"))
                return 0;
        for (size_t i = 0; r >= 0 && i < n; i++) {
                _cleanup_free_ char *machine = ad_string(jobs[i]->pub.ad, "SubmitMachine");
                _cleanup_free_ char *notes = ad_string(jobs[i]->pub.ad, "SubmitEventNotes");
                if (!machine || !classad_has(jobs[i]->pub.ad, "UserLog"))
                        continue;
                init(&ev, USERLOG_SUBMIT, jobs[i], now);
                snprintf(ev.host, sizeof(ev.host), "<%s>", machine);
                set_text(ev.notes, sizeof(ev.notes), notes);
                r = qlog_event(q, jobs[i], &ev);
        }
        return r;
}

int qlog_executing(JobQueue *q, const QJob *j, const char *slot, double now) {
        static UserlogEvent ev;
        const char *at = slot ? strchr(slot, '@') : NULL;

        init(&ev, USERLOG_EXECUTE, j, now);
        snprintf(ev.host, sizeof(ev.host), "<%s>", at ? at + 1 : slot ? slot : "");
        set_text(ev.slot_name, sizeof(ev.slot_name), slot);
        return qlog_event(q, j, &ev);
}

void qlog_note_run(JobQueue *q, const ClassAd *exit_msg) {
        QLog *l = q->ulog;

        if (!l)
                return;
        l->have_run = exit_msg != NULL;
        if (!exit_msg)
                return;
        l->run_user = ad_real(exit_msg, "RemoteUserCpu", 0);
        l->run_sys = ad_real(exit_msg, "RemoteSysCpu", 0);
        l->run_sent = ad_real(exit_msg, "BytesSent", 0);
        l->run_recvd = ad_real(exit_msg, "BytesRecvd", 0);
        l->run_image = ad_real(exit_msg, "ImageSize", 0);
        l->run_rss = ad_real(exit_msg, "ResidentSetSize", 0);
}

int qlog_image_size(JobQueue *q, const QJob *j, double now) {
        static UserlogEvent ev;
        const QLog *l = q->ulog;

        if (!l || !l->have_run || (l->run_image <= 0 && l->run_rss <= 0))
                return 0;
        init(&ev, USERLOG_IMAGE_SIZE, j, now);
        ev.image_size_kb = (int64_t) (l->run_image > 0 ? l->run_image : l->run_rss);
        if (l->run_rss > 0) {
                ev.memory_mb = (int64_t) ceil(l->run_rss / 1024);
                ev.rss_kb = (int64_t) l->run_rss;
        }
        return qlog_event(q, j, &ev);
}

/* The usage and bytes of this run (qlog_note_run) and of all. */
static void usage(const JobQueue *q, const QJob *j, UserlogEvent *ev) {
        const QLog *l = q->ulog;
        double user = ad_real(j->pub.ad, "RemoteUserCpu", 0), sys = ad_real(j->pub.ad, "RemoteSysCpu", 0);

        ev->run_remote.usr = (int64_t) (l->have_run ? l->run_user : 0);
        ev->run_remote.sys = (int64_t) (l->have_run ? l->run_sys : 0);
        ev->total_remote.usr = (int64_t) user;
        ev->total_remote.sys = (int64_t) sys;
        /* The event speaks for the job (HTCondor's shadow: sent_bytes =
         * bytesReceived()): what the job sent is the output, BytesRecvd;
         * what it received is the input, BytesSent. */
        ev->sent_bytes = l->have_run ? l->run_recvd : 0;
        ev->recvd_bytes = l->have_run ? l->run_sent : 0;
        ev->total_sent_bytes = ad_real(j->pub.ad, "BytesRecvd", ev->sent_bytes);
        ev->total_recvd_bytes = ad_real(j->pub.ad, "BytesSent", ev->recvd_bytes);
}

/* The Partitionable Resources rows HTCondor's shadow writes: Request*
 * from the job, the usage the agent reported. */
static void resources(const QJob *j, UserlogEvent *ev) {
        double cpus = ad_real(j->pub.ad, "RequestCpus", -1), mem = ad_real(j->pub.ad, "RequestMemory", -1),
               disk = ad_real(j->pub.ad, "RequestDisk", -1), rss = ad_real(j->pub.ad, "ResidentSetSize", -1),
               du = ad_real(j->pub.ad, "DiskUsage", -1);

        if (cpus >= 0)
                (void) userlog_event_set_resource(ev, "Cpus", 0, false, cpus, true, 0, false);
        if (disk >= 0 || du >= 0)
                (void) userlog_event_set_resource(ev, "Disk", du, du >= 0, disk, disk >= 0, 0, false);
        if (mem >= 0 || rss >= 0)
                (void) userlog_event_set_resource(ev, "Memory", rss >= 0 ? ceil(rss / 1024) : 0, rss >= 0, mem,
                                                  mem >= 0, 0, false);
}

int qlog_terminated(JobQueue *q, const QJob *j, double now) {
        static UserlogEvent ev;
        bool by_signal = false;
        double v;

        init(&ev, USERLOG_TERMINATED, j, now);
        (void) classad_eval_bool(j->pub.ad, "ExitBySignal", QUEUE_MODE, &by_signal);
        ev.normal = !by_signal;
        v = ad_real(j->pub.ad, by_signal ? "ExitSignal" : "ExitCode", 0);
        if (by_signal)
                ev.signal = (int) v;
        else
                ev.return_value = (int) v;
        usage(q, j, &ev);
        resources(j, &ev);
        return qlog_event(q, j, &ev);
}

int qlog_evicted(JobQueue *q, const QJob *j, bool requeued, double now) {
        static UserlogEvent ev;
        _cleanup_free_ char *reason = ad_string(j->pub.ad, "LastVacateReason");

        init(&ev, USERLOG_EVICTED, j, now);
        ev.requeued = requeued;
        if (requeued) {
                bool by_signal = false;
                (void) classad_eval_bool(j->pub.ad, "ExitBySignal", QUEUE_MODE, &by_signal);
                ev.normal = !by_signal;
                if (by_signal)
                        ev.signal = (int) ad_real(j->pub.ad, "ExitSignal", 0);
                else
                        ev.return_value = (int) ad_real(j->pub.ad, "ExitCode", 0);
        } else
                set_text(ev.reason, sizeof(ev.reason), reason);
        usage(q, j, &ev);
        return qlog_event(q, j, &ev);
}

int qlog_held(JobQueue *q, const QJob *j, const char *reason, int code, int subcode, double now) {
        static UserlogEvent ev;

        init(&ev, USERLOG_HELD, j, now);
        set_text(ev.reason, sizeof(ev.reason), reason);
        ev.code = code, ev.subcode = subcode;
        return qlog_event(q, j, &ev);
}

int qlog_released(JobQueue *q, const QJob *j, const char *reason, double now) {
        static UserlogEvent ev;

        init(&ev, USERLOG_RELEASED, j, now);
        set_text(ev.reason, sizeof(ev.reason), reason);
        return qlog_event(q, j, &ev);
}

int qlog_aborted(JobQueue *q, const QJob *j, const char *reason, double now) {
        static UserlogEvent ev;

        init(&ev, USERLOG_ABORTED, j, now);
        set_text(ev.reason, sizeof(ev.reason), reason);
        return qlog_event(q, j, &ev);
}

int queue_job_log_suspension(JobQueue *q, JobId id, bool suspended, double now, char *why, size_t whylen) {
        static UserlogEvent ev;
        QJob *j = queue_lookup(q, id.cluster, id.proc);
        int r;

        if (!j)
                return -ENOENT;
        if (j->pub.status != JOB_RUNNING)
                return -EINVAL;
        r = queue_change_begin(q);
        if (r < 0)
                return glean_why(r, why, whylen, "%s", acct_last_error(q->acct));
        init(&ev, suspended ? USERLOG_SUSPENDED : USERLOG_UNSUSPENDED, j, now);
        ev.num_pids = 1;
        r = qlog_event(q, j, &ev);
        return queue_change_end(q, r, why, whylen);
}

/* ---- the outbox ---- */

const QueueUserlogEvent *queue_userlog_next(const JobQueue *q, const char *machine, int64_t after_seq) {
        const QLog *l = q->ulog;
        size_t lo = 0, hi;

        if (!l || !machine)
                return NULL;
        hi = l->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (l->v[mid].seq <= after_seq)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        for (size_t i = lo; i < l->n; i++)
                if (!l->v[i].done && strcasecmp(l->v[i].machine, machine) == 0)
                        return &l->v[i];
        return NULL;
}

uint64_t queue_userlog_generation(const JobQueue *q) {
        return q->ulog ? q->ulog->generation : 0;
}

size_t queue_userlog_pending(const JobQueue *q) {
        return q->ulog ? q->ulog->n - q->ulog->n_gone : 0;
}

int queue_userlog_done(JobQueue *q, int64_t seq, char *why, size_t whylen) {
        QLog *l = q->ulog;
        QueueUserlogEvent *e = NULL;
        int r;

        if (!l)
                return -ENOENT;
        {
                size_t lo = 0, hi = l->n; /* v is sorted by seq */
                while (lo < hi) {
                        size_t mid = lo + (hi - lo) / 2;
                        if (l->v[mid].seq < seq)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo < l->n && l->v[lo].seq == seq && !l->v[lo].done)
                        e = &l->v[lo];
        }
        if (!e)
                return -ENOENT;
        if (q->readonly)
                return -EROFS;
        r = queue_change_begin(q);
        if (r < 0)
                return glean_why(r, why, whylen, "%s", acct_last_error(q->acct));
        if (q->db) {
                int rc;
                if (l->n_done == l->cap_done) {
                        size_t cap = l->cap_done ? 2 * l->cap_done : 16;
                        int64_t *d = realloc(l->tx_done, cap * sizeof(*d));
                        if (!d)
                                return queue_change_end(q, -ENOMEM, why, whylen);
                        l->tx_done = d, l->cap_done = cap;
                }
                sqlite3_bind_int64(l->del, 1, seq);
                rc = sqlite3_step(l->del);
                sqlite3_reset(l->del);
                if (rc != SQLITE_DONE) {
                        snprintf(q->write_why, sizeof(q->write_why), "queue database %s: an event log row: %s", q->path,
                                 sqlite3_errmsg(q->db));
                        return queue_change_end(q, acct_sqlite_errno(q->db, rc), why, whylen);
                }
                l->tx_done[l->n_done++] = seq;
        }
        e->done = true;
        l->n_gone++;
        r = queue_change_end(q, 0, why, whylen);
        if (r >= 0 && !q->db)
                compact(l);
        return r;
}

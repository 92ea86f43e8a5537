/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-internal.h — what the files of the job queue share: the queue in
 * memory (queue.c), its rows in the database (queue-store.c), the life of
 * a job and its policy (queue-life.c, queue-policy.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/strmap.h"
#include "queue.h"

struct sqlite3;
struct sqlite3_stmt;

#define QUEUE_MODE CA_MODE_OLD /* how job ads are parsed and evaluated: as condor_schedd does */

/* A cluster: the attributes its procs share, stored once. */
typedef struct QCluster {
        int64_t id;
        ClassAd *ad;     /* ClusterId, Owner, User, QDate and what was submitted for every proc */
        char *owner;     /* Owner */
        char *submitter; /* the accounting name of its procs (unless one overrides it) */
        size_t n_procs;  /* in the queue (in memory) */
        size_t n_leaving; /* of them, leaving in the change being made (their rows are gone) */
        size_t n_unlike;  /* of them, procs not alike (queue_next_idle: see qjob_alike_name) */
} QCluster;

/* A job: Job first, so that a Job * is a QJob *. */
typedef struct QJob {
        Job pub;
        QCluster *cluster;
        ClassAd *proc;         /* its own attributes: what its row holds */
        char *claim;           /* pub.claim_id */
        char *slot;            /* pub.slot */
        char *own_submitter;   /* when it differs from the cluster's */
        bool leaving;          /* its rows went to the history in this change: dropped at its end */
        bool unlike;           /* its own attributes hold more than qjob_alike_name()s */
        bool counted;          /* in its cluster's n_procs and n_unlike */
} QJob;

/* The jobs by id: sorted entries; a job that left keeps its entry (j NULL)
 * until the next compaction, so that a rollback finds its place. */
typedef struct QEntry {
        int64_t cluster, proc;
        QJob *j;
} QEntry;

enum {
        QS_PUT_CLUSTER,
        QS_DELETE_CLUSTER,
        QS_GET_CLUSTER,
        QS_PUT_JOB,
        QS_DELETE_JOB,
        QS_GET_JOB,
        QS_PUT_HISTORY,
        QS_FIND_HISTORY,
        QS_TRIM_HISTORY_TIME,
        QS_TRIM_HISTORY_COUNT,
        QS_COUNT_HISTORY,
        QS_SET_META,
        QS_GET_META,
        QS_MAX_HISTORY_CLUSTER,
        QS_PUT_SUBMIT_ID,
        QS_TRIM_SUBMIT_IDS,
        QS_DELETE_CLUSTER_JOBS,
        _QS_MAX,
};

struct JobQueue {
        Accountant *acct;
        struct sqlite3 *db; /* NULL: in memory only */
        const char *path;   /* the database's, for reasons */
        bool readonly;
        QueueSettings settings;
        struct sqlite3_stmt *stmt[_QS_MAX];

        QEntry *entries; /* sorted by id */
        size_t n_entries, cap_entries, n_jobs;
        size_t counts[JOB_HELD + 1];
        GleanStrMap *claims;     /* claim id -> QJob */
        GleanStrMap *owners;     /* Owner -> QCount */
        GleanStrMap *submitters; /* accounting name -> QCount */
        int64_t next_cluster;

        /* What the open transaction changed (only with a database), to read
         * back when it fails. */
        JobId *touched;
        size_t n_touched, cap_touched;
        bool touched_meta;
        int64_t *placed; /* clusters placed whole (queue_place_cluster): dropped when it fails */
        size_t n_placed, cap_placed;
        QJob **leaving; /* the jobs that leave in the change being made */
        size_t n_leaving, cap_leaving;

        /* Submission ids (queue-submitid.c): "user\nid" -> QSubmitId. */
        GleanStrMap *submit_ids;
        GleanStrMap *submit_id_users; /* user -> QCount: how many ids each has remembered */
        struct QSubmitId **new_ids; /* put in the open transaction (forgotten if it fails) */
        size_t n_new_ids, cap_new_ids;
        double submit_ids_trimmed; /* when the old ones were last forgotten */

        /* Submissions being taken in slices (queue-submit.c), newest first. */
        QueueSubmission *submissions;
        size_t unfinished_rows; /* job rows without their cluster's row, dropped at the open */

        /* The bytes of the history's ads (queue-limits.c): what the last
         * commit holds (when known) and what the open transaction added
         * (negative: removed). A rollback makes it unknown: counted again. */
        int64_t history_bytes, history_bytes_pending;
        bool history_bytes_known;

        struct QLog *ulog;   /* the job event log's outbox (queue-userlog.c) */

        char reason[512];    /* ret_reason of queue_job_exit */
        char write_why[512]; /* what the failed write of this change was ("" none) */
};

typedef struct QCount {
        size_t n;
        char name[];
} QCount;

/* ---- queue-limits.c ---- */

/* MAX_JOBS_RUNNING, HISTORY, MAX_HISTORY_LOG, MAX_HISTORY_ROTATIONS,
 * ENABLE_HISTORY_ROTATION into s. */
int queue_limits_from_config(const Config *cfg, QueueSettings *s, ConfigError *err);
/* A count knob: def when unset or empty; -EINVAL when below 0, err naming
 * the knob's file and line. */
int queue_knob_count(const Config *cfg, const char *name, int64_t def, int64_t *ret, ConfigError *err);

/* ---- queue.c ---- */

/* The ad *ad copied into memory of its size (an ad built by classad_set_*
 * starts with 4 KiB of it), replacing it. */
int queue_fit_ad(ClassAd **ad);
/* The job's ad from its cluster's and its own attributes. */
int queue_make_job_ad(ClassAd *cluster_ad, ClassAd *proc_ad, ClassAd **ret);
/* Sets / deletes an attribute of a job (its own attributes and its ad). */
int qjob_set_int(QJob *j, const char *name, int64_t v);
int qjob_set_real(QJob *j, const char *name, double v);
int qjob_set_bool(QJob *j, const char *name, bool v);
int qjob_set_string(QJob *j, const char *name, const char *v);
int qjob_set_value(QJob *j, const char *name, const CaValue *v);
void qjob_delete(QJob *j, const char *name);
/* Whether a proc's own attribute name is one that procs of a cluster that
 * never ran differ in without a match seeing it: the queue's bookkeeping
 * (ProcId, JobStatus, ...) and what the matchmaker writes of the submitter.
 * A proc with any other attribute of its own is "unlike" its cluster. */
bool qjob_alike_name(const char *name);
/* JobStatus, LastJobStatus and EnteredCurrentStatus (counts kept). */
int qjob_set_status(JobQueue *q, QJob *j, JobStatus s, double now);
/* Attaches a claim (NULL detaches). */
int qjob_set_claim(JobQueue *q, QJob *j, const char *claim, const char *slot);

QJob *queue_lookup(const JobQueue *q, int64_t cluster, int64_t proc);
QCluster *queue_cluster(const JobQueue *q, int64_t id);
/* Puts a job built from its rows into memory (cluster found or given). */
int queue_insert_job(JobQueue *q, QCluster *c, int64_t proc, ClassAd *proc_ad, const char *claim, const char *slot,
                     char *why, size_t whylen);
/* queue_insert_job's first half: the job made and checked, not linked in
 * (free with qjob_free). */
int queue_make_job(JobQueue *q, QCluster *c, int64_t proc, ClassAd *proc_ad, QJob **ret, char *why, size_t whylen);
void qjob_free(QJob *j);
/* The n jobs of cluster c (procs 0..n-1, made by queue_make_job, none of
 * c in the queue yet) linked in at once, with what t says of them (so
 * that a million jobs need not be visited again); -EEXIST when c is
 * there. Should the transaction fail, they are dropped again. */
typedef struct QPlaceTally {
        size_t counts[JOB_HELD + 1]; /* by status */
        size_t unlike;               /* of them unlike (QJob.unlike) */
        size_t *own;                 /* the procs with a submitter of their own */
        size_t n_own;
} QPlaceTally;
int queue_place_cluster(JobQueue *q, QCluster *c, QJob **jobs, size_t n, const QPlaceTally *t);
/* Takes a job out of memory and frees it (its cluster too when empty). */
void queue_drop_job(JobQueue *q, QJob *j);
int queue_touch(JobQueue *q, JobId id);

/* Begin and end of a change (a transaction of its own unless in a batch):
 * end(r < 0) undoes it (why: the failed write's reason, else r's);
 * end(0) commits (unless in a batch) and then drops the jobs that left.
 * After a failure no QJob pointer taken before is valid. */
int queue_change_begin(JobQueue *q);
int queue_change_end(JobQueue *q, int r, char *why, size_t whylen);
/* The same, calling then(userdata) once it went well, before the drop. */
int queue_change_end_then(JobQueue *q, int r, char *why, size_t whylen, void (*then)(void *), void *userdata);

/* The job leaves the queue for the history: its rows are written now, it
 * is dropped from memory when the change ends well. */
int queue_retire(JobQueue *q, QJob *j, double now);

/* ---- queue-store.c ---- */

int qstore_prepare(JobQueue *q, char *why, size_t whylen);
void qstore_finalize(JobQueue *q);
int qstore_load(JobQueue *q, char *why, size_t whylen);
/* Reads the touched jobs back after a rollback. */
int qstore_reload_touched(JobQueue *q, char *why, size_t whylen);
/* Writes: nothing without a database; a failure's reason goes to
 * q->write_why. */
int qstore_put_cluster(JobQueue *q, const QCluster *c);
int qstore_delete_cluster(JobQueue *q, int64_t id);
int qstore_put_job(JobQueue *q, const QJob *j);
int qstore_delete_job(JobQueue *q, JobId id);
int qstore_delete_cluster_jobs(JobQueue *q, int64_t cluster); /* the rows of an unpublished submission */
int qstore_put_history(JobQueue *q, const QJob *j, double left_at);
int qstore_set_next_cluster(JobQueue *q, int64_t next);
/* A cluster row parsed: its ad and the names from it. */
int qcluster_from_ad(JobQueue *q, int64_t id, ClassAd *ad, QCluster **ret, char *why, size_t whylen);
void qcluster_free(QCluster *c);

/* ---- queue-submitid.c ---- */

/* The id -> cluster rows, loaded at open (within qstore_load's read). */
int qsubmit_ids_load(JobQueue *q, char *why, size_t whylen);
/* Inside the submit's change: the row written, the entry in memory
 * (forgotten again when the transaction fails: qsubmit_ids_tx_end). Also
 * forgets the ids older than SUBMIT_ID_LIFETIME, now and then. */
int qsubmit_id_record(JobQueue *q, const char *user, const char *id, int64_t cluster, int64_t procs, double now);
void qsubmit_ids_tx_end(JobQueue *q, bool committed);
/* -EDQUOT with why when user has SUBMIT_IDS_PER_USER ids remembered. */
int qsubmit_id_check(const JobQueue *q, const char *user, char *why, size_t whylen);
void qsubmit_ids_free(JobQueue *q);

/* queue-limits.c: a transaction ended (the history's bytes). */
void qhistory_bytes_tx_end(JobQueue *q, bool committed);
/* The history's bytes now, counted when not known: -EIO. */
int qhistory_bytes(JobQueue *q, int64_t *ret);

/* queue-submit.c: a transaction ended (rolled back: the submissions write
 * again what it took). */
void queue_submissions_tx_end(JobQueue *q, bool committed);

/* ---- queue-policy.c ---- */

typedef enum QPolicyAction {
        QP_NONE,
        QP_HOLD,
        QP_RELEASE,
        QP_REMOVE,
        QP_COMPLETE, /* at exit: OnExitRemove */
        QP_REQUEUE,  /* at exit: OnExitRemove false */
} QPolicyAction;

typedef struct QPolicyResult {
        QPolicyAction action;
        int code, subcode;  /* a hold's */
        char reason[512];
} QPolicyResult;

/* The periodic policy of a job (at_exit false), or the whole exit policy
 * (at_exit true: the ad holds the exit's attributes). */
void queue_policy(const JobQueue *q, const ClassAd *ad, JobStatus status, bool at_exit, QPolicyResult *ret);

/* ---- queue-userlog.c: the job event log's outbox ---- */

typedef struct QLog QLog;
struct UserlogEvent;
/* At open (after qstore_load): the events not yet written, read back. */
int qlog_open(JobQueue *q, char *why, size_t whylen);
void qlog_free(JobQueue *q);
/* A transaction ended: a failed one's events forgotten, its dones undone. */
void qlog_tx_end(JobQueue *q, bool committed);
/* Inside a change: ev stored for j's log (nothing for a job without
 * UserLog or SubmitMachine); a write failure fails the change. */
int qlog_event(JobQueue *q, const QJob *j, const struct UserlogEvent *ev);
/* The events of a job's life, each made from its ad as the change left it. */
int qlog_submitted(JobQueue *q, QJob *const *jobs, size_t n, double now);          /* 000 */
int qlog_executing(JobQueue *q, const QJob *j, const char *slot, double now);      /* 001 */
int qlog_terminated(JobQueue *q, const QJob *j, double now);                       /* 005 */
int qlog_image_size(JobQueue *q, const QJob *j, double now);  /* 006, of the run that ends (qlog_note_run) */
int qlog_evicted(JobQueue *q, const QJob *j, bool requeued, double now);           /* 004 */
int qlog_held(JobQueue *q, const QJob *j, const char *reason, int code, int subcode, double now); /* 012 */
int qlog_released(JobQueue *q, const QJob *j, const char *reason, double now);     /* 013 */
int qlog_aborted(JobQueue *q, const QJob *j, const char *reason, double now);      /* 009 */
/* The exit message of the run that ends in this change (NULL: none): the
 * run's usage and bytes for its 005 or 004. */
void qlog_note_run(JobQueue *q, const ClassAd *exit_msg);

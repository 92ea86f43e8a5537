/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.h — the central manager's job queue: clusters and procs with
 * HTCondor's job states and attributes, durable in the negotiator's SQLite
 * database (the accounts' file: schema step 2 of accounting/store.c), and
 * the history of the jobs that left it.
 *
 * A job is a proc of a cluster: its ad is the proc's own attributes chained
 * to the cluster's shared ones (what a `queue N` has in common is stored and
 * held once). Its id is "C.P". Job states and their numbers are HTCondor's:
 * Idle 1, Running 2, Removed 3, Completed 4, Held 5.
 *
 * What the queue keeps in each job's ad (HTCondor's names): ClusterId,
 * ProcId, Owner, User, QDate, JobStatus, EnteredCurrentStatus, JobPrio,
 * NumJobStarts, JobStartDate, JobCurrentStartDate, CompletionDate,
 * RemoteHost, LastRemoteHost, HoldReason, HoldReasonCode,
 * HoldReasonSubCode, NumHolds?, ExitCode, ExitBySignal, ExitSignal,
 * RemoteUserCpu, RemoteSysCpu, RemoteWallClockTime, ResidentSetSize,
 * ImageSize, LastMatchTime, LastRejMatchReason, LastRejMatchTime, ...
 *
 * Durability. Every change is written to the database before the call
 * returns success, in its own transaction, unless the caller holds a batch
 * (queue_batch_begin .. queue_batch_commit, which the daemon opens around
 * one event-loop iteration, and which the accounts share: acct_batch_*),
 * in which case everything commits at once. When a commit fails, the queue
 * in memory is brought back to what the database holds (the last commit)
 * and the error is returned: nothing acknowledged is lost, nothing
 * unacknowledged shows.
 *
 * Periodic and exit policy, as condor_schedd evaluates them: PeriodicHold,
 * PeriodicRelease, PeriodicRemove (every PERIODIC_EXPR_INTERVAL, and the
 * SYSTEM_PERIODIC_* knobs), OnExitRemove and OnExitHold (at exit), with the
 * reasons and HoldReasonCodes HTCondor gives (3 for periodic hold, 1 for a
 * user's hold, ...).
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last (ret_*),
 * set only on success; why buffers get one line saying what was wrong.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "accounting.h"
#include "classad.h"
#include "config.h"

typedef enum JobStatus {
        JOB_IDLE = 1,
        JOB_RUNNING = 2,
        JOB_REMOVED = 3,
        JOB_COMPLETED = 4,
        JOB_HELD = 5,
} JobStatus;

const char *job_status_name(JobStatus s); /* "Idle", "Running", ...; NULL out of range */
char job_status_letter(JobStatus s);      /* condor_q's: I R X C H */

typedef struct JobId {
        int64_t cluster, proc;
} JobId;

/* "C.P" and "C" (every proc of C: proc = -1). -EINVAL otherwise. */
int job_id_parse(const char *s, JobId *ret);

typedef struct JobQueue JobQueue;

typedef struct Job {
        JobId id;
        JobStatus status;
        ClassAd *ad;           /* every attribute (read it; change it through queue_* only) */
        const char *owner;     /* Owner */
        const char *submitter; /* the accounting name (acct_job_submitter) */
        const char *claim_id;  /* while Running: the claim it runs under (never shown); else NULL */
        const char *slot;      /* while Running: the slot's Name ("slot1_1@host"); else NULL */
} Job;

typedef struct QueueSettings {
        char *uid_domain;          /* UID_DOMAIN */
        int64_t history_duration;  /* HISTORY_DURATION: seconds a job stays in the history */
        int64_t history_max_jobs;  /* HISTORY_MAX_JOBS: at most so many (oldest go first) */
        int64_t max_jobs_per_owner;/* MAX_JOBS_PER_OWNER (0: no limit) */
        ClassAdExpr *system_periodic_hold, *system_periodic_release, *system_periodic_remove;
        /* ... what else the implementation reads from the configuration */
} QueueSettings;

int queue_settings_from_config(const Config *cfg, QueueSettings *ret, ConfigError *err);
void queue_settings_clear(QueueSettings *s);

/* The queue of the database a's store writes (the same file and
 * connection; a must not be in-memory only... or: in memory only when the
 * Accountant is), loaded. Takes settings' contents. */
int queue_open(Accountant *a, QueueSettings *settings, JobQueue **ret, char *why, size_t whylen);
void queue_close(JobQueue *q); /* accepts NULL */

/* ---- submitting ---- */

/* Who asks: the caller's user name (and uid) as the daemon knows it
 * (SO_PEERCRED, or the RelayUser of an agent), and whether it may
 * administer (root, ADMINISTRATORS). */
typedef struct QueueRequester {
        const char *user;
        uid_t uid;
        bool admin;
} QueueRequester;

/* A new cluster from the attributes its procs share and each proc's own
 * (n >= 1): Owner and User come from who (a user never submits as
 * another), ClusterId/ProcId are assigned, QDate and EnteredCurrentStatus
 * are now, JobStatus 1 (or 5 when the ad says hold = true: HoldReasonCode
 * 15 "submitted on hold"), NumJobStarts 0, ... One transaction (or the
 * caller's batch). -EINVAL with why for a job the queue cannot take
 * (e.g. no Cmd, a Requirements that is not an expression, an accounting
 * name the accounting library refuses); -EDQUOT over MAX_JOBS_PER_OWNER;
 * -ENOSPC / -EIO from the database, with why. */
int queue_submit(JobQueue *q, const QueueRequester *who, const ClassAd *cluster, ClassAd *const *procs, size_t n,
                 double now, int64_t *ret_cluster, char *why, size_t whylen);

/* ---- looking ---- */

Job *queue_find(const JobQueue *q, JobId id); /* NULL when not in the queue */
size_t queue_size(const JobQueue *q);
size_t queue_count(const JobQueue *q, JobStatus s);

/* Every job in id order; fn returning < 0 stops and is returned. */
typedef int (*QueueJobFn)(void *userdata, Job *job);
int queue_foreach(const JobQueue *q, QueueJobFn fn, void *userdata);

/* The idle jobs of each submitter, as the matchmaker takes them
 * (NegoSubmitter: name, jobs[]): arrays owned by the queue, valid until the
 * next change of the queue. ret_jobs[i] is the Job of ret_subs[s].jobs[k]
 * in the same order, flattened: submitter s's jobs start at the sum of
 * the counts before it. */
typedef struct QueueIdle {
        const char **names;      /* per submitter */
        ClassAd ***ads;          /* per submitter: its idle jobs' ads */
        Job ***jobs;             /* per submitter: the same jobs */
        size_t *counts;
        size_t n;
} QueueIdle;
int queue_idle(JobQueue *q, QueueIdle *ret);
void queue_idle_clear(QueueIdle *q);
/* Whether name has any job in the queue (for acct_update's forgetting). */
bool queue_submitter_has_jobs(const JobQueue *q, const char *name);

/* ---- the life of a job (each durable as above) ---- */

/* Idle -> Running under claim_id on slot (its Name), host its machine:
 * NumJobStarts + 1, JobStartDate (first start only), JobCurrentStartDate,
 * RemoteHost = slot, LastMatchTime. -EBUSY when it is not Idle: a job never
 * runs twice at once. */
int queue_job_start(JobQueue *q, JobId id, const char *claim_id, const char *slot, double now);

/* The job's exit as the agent reports it (a JobExit message: ExitCode or
 * ExitSignal, usage, and Hold/HoldReason when the agent held it, e.g. out
 * of memory). Applies OnExitHold / OnExitRemove: the job becomes Completed
 * (and goes to the history), Held (with the reason and code), or Idle
 * again (OnExitRemove false). ret_status: what it became. */
int queue_job_exit(JobQueue *q, JobId id, const ClassAd *exit_msg, double now, JobStatus *ret_status);

/* A lost claim (lease expired, agent gone, agent restarted without it) or
 * a vacate: Running -> Idle, NumJobStarts kept, LastRemoteHost, RemoteHost
 * removed, usage of the run added to RemoteWallClockTime when known. reason
 * goes to the log and LastVacateReason?. -EINVAL when not Running. */
int queue_job_requeue(JobQueue *q, JobId id, const char *reason, double now);

/* The matchmaker's reason for not matching it this cycle (for -analyze):
 * LastRejMatchReason, LastRejMatchTime. In memory only (not durable). */
int queue_job_rejected(JobQueue *q, JobId id, const char *reason, double now);

/* ---- what users and administrators do (condor_rm, _hold, _release,
 * _prio). who may act on their own jobs only, unless admin: -EPERM with
 * why "job 3.0 belongs to bob". rm of a Running job: Removed at once in
 * the queue? No: the job is marked to be removed and ret_was_running tells
 * the caller to vacate its claim; the job reaches Removed and the history
 * when the claim ends (queue_job_exit / queue_job_requeue see the mark).
 * -ENOENT: no such job; -EINVAL: not in a state the action takes (release
 * of a job that is not Held). ---- */
int queue_job_remove(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, double now,
                     bool *ret_was_running, char *why, size_t whylen);
int queue_job_hold(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, int code, double now,
                   bool *ret_was_running, char *why, size_t whylen);
int queue_job_release(JobQueue *q, const QueueRequester *who, JobId id, double now, char *why, size_t whylen);
int queue_job_set_prio(JobQueue *q, const QueueRequester *who, JobId id, int64_t prio, char *why, size_t whylen);

/* PeriodicHold/Release/Remove and the SYSTEM_PERIODIC_* knobs over every
 * job; fn is told of each job that changed (so that a Running job being
 * held or removed gets its claim vacated). Returns the number changed. */
typedef void (*QueueChangeFn)(void *userdata, Job *job, JobStatus from, JobStatus to, const char *reason);
int queue_periodic(JobQueue *q, double now, QueueChangeFn fn, void *userdata);

/* ---- history ---- */

/* Jobs that left the queue (Completed, Removed), newest first; fn < 0
 * stops. Ads are valid during the call. constraint may be NULL. */
typedef int (*QueueHistoryFn)(void *userdata, const ClassAd *ad);
int queue_history(JobQueue *q, const ClassAdExpr *constraint, size_t limit, QueueHistoryFn fn, void *userdata);
/* The history ad of one job (for Wait): -ENOENT when not there. */
int queue_history_find(JobQueue *q, JobId id, ClassAd **ret);
/* Forgets what is older than HISTORY_DURATION and beyond HISTORY_MAX_JOBS. */
int queue_history_trim(JobQueue *q, double now);

/* ---- batches ---- */

int queue_batch_begin(JobQueue *q);
int queue_batch_commit(JobQueue *q, char *why, size_t whylen);

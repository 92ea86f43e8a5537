/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.h — the central manager's job queue: clusters and procs with
 * HTCondor's job states and attributes, durable in the negotiator's SQLite
 * database (the accounts' file and connection; its tables are the steps of
 * queue_schema(), queue-schema.c), and the history of the jobs that left
 * it.
 *
 * The folder: queue/ is the job queue (queue*.c, its tables in
 * queue-schema.c) and the user commands over it (jobcmd*.c, jobcmd.h),
 * over accounting/, classad/ and config/; the matchmaker (negotiator/)
 * never sees it: the daemon hands the cycle the queue's idle jobs.
 *
 * A job is a proc of a cluster: its ad is the proc's own attributes over
 * the cluster's shared ones (what a `queue N` has in common is stored
 * and held once: in memory the proc's ad is chained to its cluster's,
 * classad_chain). Its id is "C.P". Job states and their numbers
 * are HTCondor's: Idle 1, Running 2, Removed 3, Completed 4, Held 5.
 *
 * What the queue keeps in each job's ad (HTCondor's names; a submitted
 * value of any of them is replaced, see queue_submit): ClusterId, ProcId,
 * Owner, User, QDate, JobStatus, LastJobStatus, EnteredCurrentStatus,
 * JobPrio (the user's, default 0), NumJobStarts, JobRunCount,
 * JobStartDate (first start), JobCurrentStartDate, LastMatchTime,
 * RemoteHost (while a claim is attached), LastRemoteHost, CompletionDate
 * (Completed), ExitBySignal, ExitCode or ExitSignal, JobCoreDumped,
 * RemoteUserCpu, RemoteSysCpu, RemoteWallClockTime (summed
 * over runs), ResidentSetSize, ImageSize (largest seen), HoldReason,
 * HoldReasonCode, HoldReasonSubCode, NumHolds, LastHoldReason,
 * LastHoldReasonCode, ReleaseReason, RemoveReason, LastVacateTime,
 * LastVacateReason, LastRejMatchReason, LastRejMatchTime, BytesSent,
 * BytesRecvd (summed over runs), TransferringInput, TransferringOutput
 * (the slot's, while the job runs: queue_job_set_transferring).
 *
 * Running, vacating. A job runs under a claim (queue_job_start). rm or
 * hold of a Running job changes its JobStatus at once (Removed, Held: as
 * condor_schedd, condor_q shows X or H) but the job keeps its claim
 * (Job.claim_id) until that claim ends: the caller (told by
 * ret_was_running or QueueChangeFn) vacates it, and when the claim ends
 * (queue_job_exit or queue_job_requeue) a Removed job leaves for the
 * history and a Held one stays Held, its claim gone. A job with a claim
 * attached never starts again (queue_job_start is -EBUSY) and is not idle
 * for the matchmaker, whatever its JobStatus (a job released while its
 * claim is still being vacated is Idle but waits for the claim's end).
 *
 * Durability. Every change is written to the database before the call
 * returns success, in its own transaction, unless the caller holds a batch
 * (queue_batch_begin .. queue_batch_commit, which the daemon opens around
 * one event-loop iteration; it is the Accountant's batch: acct_batch_begin
 * and queue_batch_begin are the same thing, either pair may be used, and
 * the accounts' and the queue's writes commit together: a job's exit and
 * the end of its claim's usage land in one transaction). When a write or
 * a commit fails (a full disk: -ENOSPC), everything since the last commit
 * is undone — the jobs the transaction touched are read back from the
 * database, so memory is what the last commit holds — and the error
 * returned with why: nothing acknowledged is lost, nothing unacknowledged
 * shows. Inside a batch this voids the whole batch: every later change of
 * it fails with the same error, and queue_batch_commit returns it. A reply
 * that acknowledges a change made inside a batch (a Submit's) must wait
 * until the batch has committed. Job pointers (and their ads) taken before
 * a failed transaction may be stale: look the jobs up again.
 *
 * Periodic and exit policy, as condor_schedd and condor_shadow evaluate
 * them (HTCondor's UserPolicy): PeriodicHold (when not Held), then
 * PeriodicRelease (when Held), then PeriodicRemove, each first as the
 * job's attribute, then as the SYSTEM_PERIODIC_* knob; at exit the same,
 * then OnExitHold, then OnExitRemove (absent: true). A job attribute that
 * evaluates to neither a number nor a boolean (UNDEFINED, ERROR, ...;
 * except the literal UNDEFINED, which is false) holds the job with code 5;
 * a knob fires only on true. Reasons and HoldReasonCodes are HTCondor's:
 *   1  UserRequest        "via glean hold (by user alice)" unless a reason is given
 *   3  JobPolicy          <Attr>Reason if the job has it, else "The job attribute
 *                         PeriodicHold expression 'X' evaluated to TRUE"; subcode <Attr>SubCode
 *   5  JobPolicyUndefined "... evaluated to UNDEFINED"
 *   15 SubmittedOnHold    "submitted on hold"
 *   26 SystemPolicy       SYSTEM_PERIODIC_HOLD_REASON if set, else "The system macro
 *                         SYSTEM_PERIODIC_HOLD expression 'X' evaluated to TRUE";
 *                         subcode SYSTEM_PERIODIC_HOLD_SUBCODE
 *   34 JobOutOfResources  what the exit report says (the agent's out-of-memory hold)
 * Removal and release by policy set RemoveReason / ReleaseReason the same
 * way. Evaluation reads the ClassAd clock (time(), CurrentTime).
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last (ret_*),
 * set only on success; why buffers get one line saying what was wrong.
 * Single-threaded.
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

/* HoldReasonCode values the queue gives (HTCondor's condor_holdcodes.h). */
enum {
        QUEUE_HOLD_USER_REQUEST = 1,
        QUEUE_HOLD_JOB_POLICY = 3,
        QUEUE_HOLD_JOB_POLICY_UNDEFINED = 5,
        QUEUE_HOLD_TRANSFER_OUTPUT = 12, /* TransferOutputError: the run's output could not come back */
        QUEUE_HOLD_TRANSFER_INPUT = 13,  /* TransferInputError: its input could not go (or cannot travel) */
        QUEUE_HOLD_SUBMITTED_ON_HOLD = 15,
        QUEUE_HOLD_SYSTEM_POLICY = 26,
        QUEUE_HOLD_SYSTEM_POLICY_UNDEFINED = 27,
        QUEUE_HOLD_OUT_OF_RESOURCES = 34,
};

const char *job_status_name(JobStatus s); /* "Idle", "Running", ...; NULL out of range */
char job_status_letter(JobStatus s);      /* condor_q's: I R X C H; '?' out of range */

typedef struct JobId {
        int64_t cluster, proc;
} JobId;

/* "C.P", and "C" (every proc of C: proc = -1); C >= 1, P >= 0, decimal,
 * white space around allowed. -EINVAL otherwise. */
int job_id_parse(const char *s, JobId *ret);
#define JOB_ID_STRLEN 42 /* "C.P" of two int64 and the NUL */
/* "C.P" (or "C" when proc < 0) into buf; returns buf. */
const char *job_id_format(JobId id, char buf[static JOB_ID_STRLEN]);

typedef struct JobQueue JobQueue;

typedef struct Job {
        JobId id;
        JobStatus status;      /* the same as the ad's JobStatus */
        ClassAd *ad;           /* every attribute (read it; change it through queue_* only): the same
                                  object as long as the job is in the queue */
        const char *owner;     /* Owner */
        const char *submitter; /* the accounting name (acct_job_submitter) */
        const char *claim_id;  /* the claim it runs under (never shown in the ad): while Running, and
                                  while a run that rm or hold stopped is being vacated; else NULL */
        const char *slot;      /* the slot's Name ("slot1_1@host") while claim_id is set; else NULL */
} Job;

typedef struct QueueSettings {
        char *uid_domain;            /* UID_DOMAIN: User = Owner@uid_domain */
        int64_t history_duration;    /* HISTORY_DURATION: seconds a job stays in the history (0: no limit) */
        int64_t history_max_jobs;    /* HISTORY_MAX_JOBS: at most so many (oldest go first; 0: none kept) */
        /* The queue's limits (queue_over_limit): 0 no limit (unset); < 0 a
         * limit of none (HTCondor's 0 or less: MAX_JOBS_SUBMITTED = 0 is how
         * an administrator stops submissions). */
        int64_t max_jobs_per_submission; /* MAX_JOBS_PER_SUBMISSION: procs of one cluster */
        int64_t max_jobs_per_owner;  /* MAX_JOBS_PER_OWNER */
        int64_t max_jobs_submitted;  /* MAX_JOBS_SUBMITTED: the whole queue */
        int64_t submit_id_lifetime;  /* SUBMIT_ID_LIFETIME: seconds a submission id is remembered (0: no limit) */
        int64_t submit_ids_per_user; /* SUBMIT_IDS_PER_USER: ids one user may have remembered (0: no limit) */
        ClassAdExpr *system_periodic_hold, *system_periodic_release, *system_periodic_remove; /* NULL: unset */
        ClassAdExpr *system_periodic_hold_reason, *system_periodic_release_reason,
                *system_periodic_remove_reason;          /* SYSTEM_PERIODIC_*_REASON */
        ClassAdExpr *system_periodic_hold_subcode;       /* SYSTEM_PERIODIC_HOLD_SUBCODE */
        /* HTCondor's schedd knobs of the running jobs and the history file
         * (queue-limits.c; zeroed: no limit, history kept). */
        bool limit_running;          /* MAX_JOBS_RUNNING is set */
        int64_t max_jobs_running;    /* MAX_JOBS_RUNNING: jobs with a claim at once (0: none starts) */
        bool history_off;            /* HISTORY = "": no history kept (as HTCondor without a history file) */
        int64_t history_max_bytes;   /* MAX_HISTORY_LOG x (MAX_HISTORY_ROTATIONS + 1) when
                                        ENABLE_HISTORY_ROTATION: bytes of history ads kept (0: no limit) */
} QueueSettings;

/* Whether the queue sets attribute name itself (a submitted value is
 * replaced): ClusterId, ProcId, Owner, QDate, JobStatus, ... (above). */
bool queue_managed_attr(const char *name);

/* MAX_JOBS_RUNNING, as condor_schedd's cap on its running jobs (its
 * shadows): how many more jobs may be given a claim now, on_the_way being
 * the matches whose claims are on their way (not started yet): the limit
 * less the jobs with a claim attached (Running, or removed or held while
 * running and not vacated yet) less on_the_way; 0 at or over it; SIZE_MAX
 * without a limit. The daemon asks before it claims slots for matches and
 * before a claim takes its next job. */
size_t queue_run_room(const JobQueue *q, size_t on_the_way);
size_t queue_claimed(const JobQueue *q); /* jobs with a claim attached */

/* Whether n jobs pass limit (a QueueSettings limit: 0 none, < 0 nothing
 * allowed), and the limit as configured (for reasons). */
static inline bool queue_over_limit(int64_t limit, uint64_t n) {
        return limit != 0 && (limit < 0 || n > (uint64_t) limit);
}
static inline int64_t queue_limit_shown(int64_t limit) {
        return limit < 0 ? 0 : limit;
}

/* Reads the knobs above (built-in defaults apply); a knob set to an
 * expression that does not parse, or a number out of range, is -EINVAL
 * with err saying where. */
int queue_settings_from_config(const Config *cfg, QueueSettings *ret, ConfigError *err);
void queue_settings_clear(QueueSettings *s);

/* The queue's tables, for acct_open(): whoever opens the central
 * manager's database gives them, so that the file is brought up to (and
 * checked against) the queue's schema too. */
const AcctSchema *queue_schema(void);

/* The queue kept in a's database (the same file and connection; a opened
 * with queue_schema()), loaded;
 * in memory only when a is. Takes settings' contents (cleared, also on
 * failure). A read-only Accountant gives a read-only queue (every change
 * -EROFS). A row that cannot be read back is -EBADMSG with why naming it.
 * The queue registers itself as a's partner (acct_set_partner): close the
 * queue before the Accountant. */
int queue_open(Accountant *a, QueueSettings *settings, JobQueue **ret, char *why, size_t whylen);
void queue_close(JobQueue *q); /* accepts NULL */
/* New settings (a reconfiguration), taken as queue_open takes them. */
void queue_reconfigure(JobQueue *q, QueueSettings *settings);
const QueueSettings *queue_settings(const JobQueue *q);

/* ---- submitting ---- */

/* Who asks: the caller's user name (and uid) as the daemon knows it
 * (SO_PEERCRED, or the RelayUser of an agent), and whether it may
 * administer (root, ADMINISTRATORS). */
typedef struct QueueRequester {
        const char *user;
        uid_t uid;
        bool admin;
        /* The Machine of the agent that relayed the request (its identity
         * on its sealed connection), NULL on the central manager's own
         * socket: a submit records it as the jobs' SubmitMachine, where
         * their files and event log live (docs/transfer.md). */
        const char *machine;
} QueueRequester;

/* A new cluster from the attributes its procs share and each proc's own
 * (n >= 1; a proc's attribute overrides the cluster's). Owner is who->user
 * and User Owner@UID_DOMAIN (a user never submits as another, root
 * included); ClusterId (the next one: never given twice, even after the
 * cluster left) and ProcId 0..n-1 are assigned; QDate and
 * EnteredCurrentStatus are now; JobStatus 1, or 5 with HoldReasonCode 15
 * "submitted on hold" when the submitted ad says JobStatus = 5 (what
 * condor_submit writes for `hold = true`); NumJobStarts 0, JobPrio 0 when
 * absent. Every other attribute the queue keeps (list above) is dropped
 * from what was submitted. One transaction (or the caller's batch).
 * -EINVAL with why for a job the queue cannot take: no Cmd string, no
 * Requirements, a JobPrio that is not an integer, an accounting name the
 * accounting library refuses (a bad AccountingGroup); -EDQUOT over
 * MAX_JOBS_PER_OWNER or MAX_JOBS_SUBMITTED; -ENOSPC / -EIO ... from the
 * database, with why. procs[i] may be NULL (no attributes of its own). */
int queue_submit(JobQueue *q, const QueueRequester *who, const ClassAd *cluster, ClassAd *const *procs, size_t n,
                 double now, int64_t *ret_cluster, char *why, size_t whylen);

/* Submission ids: what makes a submit idempotent. The client names each
 * submission with an id of its own (random, 128 bits); queue_submit_as
 * keeps id -> (cluster, procs) for who->user in the same transaction as
 * the submit, and puts the id in the cluster's ad as GleanSubmitId (what
 * a user looks for when the answer was lost: glean q -constraint
 * 'GleanSubmitId == "..."'). A submission sent again with the same id by
 * the same user is answered from queue_submit_id_find, with what the
 * first got, and queues nothing; another user's same id is another
 * submission. Ids are kept SUBMIT_ID_LIFETIME seconds (a day), survive a
 * restart, and are forgotten with the transaction when it fails. A user
 * with SUBMIT_IDS_PER_USER ids remembered is refused (-EDQUOT, naming the
 * knob) until old ones are forgotten: what one user makes the daemon
 * keep is bounded.
 * queue_submit_id_valid: 16 to 64 characters of [0-9A-Za-z_-]. */
bool queue_submit_id_valid(const char *id);
int queue_submit_as(JobQueue *q, const QueueRequester *who, const char *submit_id, const ClassAd *cluster,
                    ClassAd *const *procs, size_t n, double now, int64_t *ret_cluster, char *why, size_t whylen);
/* Submitting in slices: what queue_submit_as does at once, in steps the
 * daemon takes between its other work, so that a submission of a million
 * procs does not keep it from answering. queue_submission_begin makes the
 * checks that need no proc (who, how many, the limits, which count the
 * procs of submissions still being taken too) and reserves the cluster
 * id; it takes procs (the array and its ads, any may be NULL) whatever it
 * returns. queue_submission_step does up to work procs' part (0: all):
 * first each proc is made and checked in memory, then the rows are
 * written, a change per step, invisible until the last step publishes
 * the cluster (its row, its submission id, the jobs in memory) in one
 * change. It returns 0 while there is more to do, 1 when queued
 * (*ret_cluster), < 0 with why when refused or not written (the
 * submission is then of no use but to be freed). A batch that fails
 * after a step wrote takes those rows with it: the next steps write them
 * again. queue_submission_free gives up one not queued (its rows are
 * deleted; a daemon stopped meanwhile deletes them at its next open:
 * queue_unfinished_rows says how many) and frees it; queue_close frees
 * those left. queue_submission_find: user's submission of that id still
 * being taken (a repeat waits for it), else NULL. */
typedef struct QueueSubmission QueueSubmission;
int queue_submission_begin(JobQueue *q, const QueueRequester *who, const char *submit_id, const ClassAd *cluster,
                           ClassAd **procs, size_t n, double now, QueueSubmission **ret, char *why, size_t whylen);
int queue_submission_step(JobQueue *q, QueueSubmission *s, size_t work, int64_t *ret_cluster, char *why,
                          size_t whylen);
void queue_submission_free(JobQueue *q, QueueSubmission *s); /* accepts NULL */
QueueSubmission *queue_submission_find(const JobQueue *q, const char *user, const char *submit_id);
int64_t queue_submission_cluster(const QueueSubmission *s);
size_t queue_submission_procs(const QueueSubmission *s);
const char *queue_submission_user(const QueueSubmission *s);
void queue_submission_set_userdata(QueueSubmission *s, void *userdata);
void *queue_submission_userdata(const QueueSubmission *s);
/* A submit warning for the answer (jobcmd_submit_answer_warned); NULL: none. */
int queue_submission_set_warning(QueueSubmission *s, const char *warning);
const char *queue_submission_warning(const QueueSubmission *s);
size_t queue_unfinished_rows(const JobQueue *q);

/* 1 with *ret_cluster and *ret_procs when user's id is known, else 0. */
int queue_submit_id_find(const JobQueue *q, const char *user, const char *id, double now, int64_t *ret_cluster,
                         int64_t *ret_procs);

/* ---- looking ---- */

Job *queue_find(const JobQueue *q, JobId id);                   /* NULL when not in the queue */
Job *queue_find_claim(const JobQueue *q, const char *claim_id); /* the job a claim is attached to */
size_t queue_size(const JobQueue *q);
size_t queue_count(const JobQueue *q, JobStatus s); /* by JobStatus */
int64_t queue_next_cluster(const JobQueue *q);      /* the id the next submit gets */

/* Every job in id order (of the cluster C only when cluster > 0); fn
 * returning < 0 stops and is returned. fn must not change the queue. */
typedef int (*QueueJobFn)(void *userdata, Job *job);
int queue_foreach(const JobQueue *q, QueueJobFn fn, void *userdata);
int queue_foreach_cluster(const JobQueue *q, int64_t cluster, QueueJobFn fn, void *userdata);

/* The idle jobs of each submitter, as the matchmaker takes them
 * (NegoSubmitter { names[s], ads[s], counts[s] }): jobs that are Idle and
 * have no claim attached, in id order within a submitter, submitters in
 * the order of their first job. The arrays are the QueueIdle's (freed by
 * queue_idle_clear); the Jobs and ads they point to are the queue's and
 * stay valid while those jobs stay in the queue. */
typedef struct QueueIdle {
        const char **names; /* per submitter */
        ClassAd ***ads;     /* per submitter: its idle jobs' ads */
        Job ***jobs;        /* per submitter: the same jobs, in the same order */
        size_t *counts;
        size_t n;
} QueueIdle;
int queue_idle(JobQueue *q, QueueIdle *ret);
void queue_idle_clear(QueueIdle *q);
/* The idle job of submitter a claim takes next (claim reuse): the one
 * with the highest JobPrio, then the lowest id, that fit() says fits. The
 * procs of a cluster that never ran and whose own attributes are only the
 * queue's bookkeeping are alike: once fit() refuses one of them
 * (QUEUE_FITS_NOT) the others of that cluster are not asked, so that a
 * backlog of jobs that fit nowhere costs a call per cluster, not per job.
 * QUEUE_FIT_SKIP passes over that job alone. NULL when none fits. */
typedef enum QueueFit { QUEUE_FITS, QUEUE_FITS_NOT, QUEUE_FIT_SKIP } QueueFit;
typedef QueueFit (*QueueFitFn)(const Job *job, void *userdata);
Job *queue_next_idle(JobQueue *q, const char *submitter, QueueFitFn fit, void *userdata);
/* Whether name has any job in the queue (for acct_update's forgetting);
 * the signature of AcctHasJobsFn with q as userdata: queue_has_jobs_fn. */
bool queue_submitter_has_jobs(const JobQueue *q, const char *name);
bool queue_has_jobs_fn(void *q, const char *submitter);

/* ---- the life of a job (each durable as above) ---- */

/* Idle -> Running under claim_id on slot (its Name): NumJobStarts and
 * JobRunCount + 1, JobStartDate (first start only), JobCurrentStartDate,
 * LastMatchTime, RemoteHost = slot. -EBUSY when it is not Idle or has a
 * claim attached (a job never runs twice at once), -EEXIST when claim_id
 * is attached to another job, -ENOENT no such job, -EINVAL empty ids. */
int queue_job_start(JobQueue *q, JobId id, const char *claim_id, const char *slot, double now);

/* The end of a run as the agent reports it (a JobExit message: ExitBySignal,
 * ExitCode or ExitSignal, CoreDumped, RemoteUserCpu, RemoteSysCpu,
 * RemoteWallClockTime of this run (now - JobCurrentStartDate when absent),
 * ResidentSetSize, ImageSize; and HoldReasonCode int > 0, HoldReason
 * string, HoldReasonSubCode int when the run is to hold the job, e.g. 34
 * for out of memory, 12 or 13 when its files could not travel: then the
 * exit status is not the job's and is not kept; BytesSent, BytesRecvd of
 * the run's files, added to the job's). Usage is added to the job's totals, the claim is
 * detached. A job Running: held when the message says so, else the exit
 * policy decides: Held (periodic hold, OnExitHold: code 3, 26 or 5),
 * Removed (periodic remove; to the history), Completed (OnExitRemove true
 * or absent: CompletionDate, to the history) or Idle again (OnExitRemove
 * false). A job removed or held during the run: Removed (history) or
 * stays Held. ret_status (may be NULL): what it became; ret_reason (may be
 * NULL, valid until the next call): the hold or remove reason, NULL for
 * Completed and Idle. -ENOENT no such job; -EINVAL no claim attached or a
 * malformed exit message (why). */
int queue_job_exit(JobQueue *q, JobId id, const ClassAd *exit_msg, double now, JobStatus *ret_status,
                   const char **ret_reason, char *why, size_t whylen);

/* A claim that ended without an exit report (lease expired, agent gone,
 * agent restarted without the job, preempted, vacated): the claim is
 * detached; a Running job goes back to Idle (NumJobStarts kept,
 * LastVacateTime, LastVacateReason = reason, RemoteWallClockTime + the
 * run's time, LastRemoteHost); a job removed during the run leaves for
 * the history; a Held one stays Held. ret_status as above (may be NULL).
 * -ENOENT no such job; -EINVAL no claim attached. */
int queue_job_requeue(JobQueue *q, JobId id, const char *reason, double now, JobStatus *ret_status);
/* A Running job's TransferringInput and TransferringOutput, as its slot
 * says them (removed when the run ends). -EINVAL when it does not run. */
int queue_job_set_transferring(JobQueue *q, JobId id, bool input, bool output);
/* The bytes a run moved that ended without queue_job_exit (evicted,
 * requeued), added to BytesSent and BytesRecvd. -EINVAL when negative. */
int queue_job_add_bytes(JobQueue *q, JobId id, int64_t sent, int64_t recvd);

/* The matchmaker's reason for not matching it this cycle (for -analyze):
 * LastRejMatchReason, LastRejMatchTime. Not a change of its own: nothing
 * is written (the attributes are kept when the job is next written).
 * -ENOENT. */
int queue_job_rejected(JobQueue *q, JobId id, const char *reason, double now);

/* ---- what users and administrators do (condor_rm, _hold, _release,
 * _prio). who acts on their own jobs only (Owner == who->user), unless
 * admin: -EPERM with why "job 3.0 belongs to bob". -ENOENT: no such job;
 * -EINVAL (why): not in a state the action takes: rm of a job already
 * Removed, hold of a Held one, release of one not Held.
 * rm: JobStatus 3 with RemoveReason (reason, or "via glean rm (by user
 * U)"); a job without a claim leaves for the history at once. hold:
 * JobStatus 5 with HoldReason (reason, or "via glean hold (by user U)"),
 * HoldReasonCode code (1 for a user, or the caller's), subcode. A job
 * with a claim keeps it: *ret_was_running (may be NULL) is set true and
 * the caller vacates the claim (Job.claim_id, read before the call: find
 * the job again after it); the claim's end settles the job (see above).
 * release: JobStatus 1 (or back to the status it had), ReleaseReason,
 * LastHoldReason(Code) kept, HoldReason* removed. set_prio: JobPrio. ---- */
int queue_job_remove(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, double now,
                     bool *ret_was_running, char *why, size_t whylen);
int queue_job_hold(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, int code, int subcode,
                   double now, bool *ret_was_running, char *why, size_t whylen);
int queue_job_release(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, double now, char *why,
                      size_t whylen);
int queue_job_set_prio(JobQueue *q, const QueueRequester *who, JobId id, int64_t prio, char *why, size_t whylen);

/* PeriodicHold/Release/Remove and the SYSTEM_PERIODIC_* knobs over every
 * job that is Idle, Running or Held and not being vacated (the daemon's
 * PERIODIC_EXPR_INTERVAL timer). fn (may be NULL) is told of each job
 * that changed, after the change, with its JobStatus before; a job with
 * job->claim_id set was running: vacate the claim. A job that left for
 * the history is shown as it left (do not keep the pointer). All changes
 * are one transaction (or the caller's batch). Returns the number of jobs
 * changed, or -errno (nothing changed). */
typedef void (*QueueChangeFn)(void *userdata, Job *job, JobStatus from, JobStatus to, const char *reason);
int queue_periodic(JobQueue *q, double now, QueueChangeFn fn, void *userdata);

/* ---- history ---- */

/* Jobs that left the queue (Completed, Removed), newest first (by the time
 * they left, then id); constraint (may be NULL) is evaluated against each
 * ad (true only); cluster > 0 keeps that cluster's alone (and proc >= 0
 * that job alone). At most limit ads (0: no limit). fn < 0 stops and is
 * returned, and so is -E2BIG when constraint runs out of the ClassAd
 * evaluation budget on an ad; ads are valid during the call only. Reads what is written
 * (inside a batch: the batch's writes too). */
typedef int (*QueueHistoryFn)(void *userdata, const ClassAd *ad);
int queue_history(JobQueue *q, JobId only, const ClassAdExpr *constraint, size_t limit, QueueHistoryFn fn,
                  void *userdata);
/* The history ad of one job (for Wait; free it): -ENOENT when not there. */
int queue_history_find(JobQueue *q, JobId id, ClassAd **ret);
/* Forgets what left before now - HISTORY_DURATION, what is beyond the
 * newest HISTORY_MAX_JOBS, then the oldest until the ads kept (their text
 * as stored, in bytes) total at most history_max_bytes (MAX_HISTORY_LOG
 * and MAX_HISTORY_ROTATIONS: what HTCondor's rotated history files would
 * hold). A change. Returns the number forgotten. With HISTORY = "" no job
 * is written to the history (what is there ages out as above). */
int queue_history_trim(JobQueue *q, double now);
size_t queue_history_size(JobQueue *q);
int64_t queue_history_bytes(JobQueue *q); /* the bytes of the ads kept (a scan when not known) */

/* ---- batches (the Accountant's: acct_batch_begin / acct_batch_commit) ---- */

int queue_batch_begin(JobQueue *q);
int queue_batch_commit(JobQueue *q, char *why, size_t whylen);
bool queue_in_batch(const JobQueue *q); /* whichever of the two opened it */

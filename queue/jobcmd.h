/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd.h — the central manager's user commands (common/proto.h): Submit,
 * Query, History, JobAction (Remove, Hold, Release, SetPrio) and UserPrio,
 * as functions the daemon calls with a validated request
 * (glean_msg_parse), who asks, the queue, the accounts and the time, and
 * a sink that takes the replies. QuerySlots, Wait and JobAction Vacate
 * are the daemon's (it has the collector and the claims); the listing
 * writer below (JobCmdListing) and jobcmd_wait_done serve them.
 *
 * Replies are frame payloads (text: one ClassAd each, under
 * GLEAN_FRAME_MAX bytes) handed to sink->send in order; every reply
 * echoes the request's RequestId. A listing (Query, History, UserPrio
 * list, JobAction's Results) comes in pieces: every piece but the last has
 * More = true; the last has Count.
 *
 * Batches. A handler that changes the queue or the accounts does so in
 * its own transaction, or inside the daemon's batch when one is open
 * (queue_batch_begin). Such a handler returns 1: its replies acknowledge
 * the change, so when a batch is open the daemon holds them until the
 * batch commits, and when the commit fails it sends instead one Reply
 * Ok = false with the commit's reason (glean_msg_reply(request, false,
 * why)). Without a batch open, a JobAction over many jobs takes one
 * transaction of its own (a batch), and claims are vacated (sink->vacate)
 * only once it committed; inside the daemon's batch, sink->vacate is
 * called at once.
 *
 * Conventions: >= 0 on success, -errno on failure (a refused request is
 * not a failure: it gets an Ok = false reply and the handler returns 0);
 * a handler returns < 0 only when sink->send did (the connection is gone)
 * or memory ran out before any reply could be made.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "classad.h"
#include "queue.h"

typedef struct JobCmdSink {
        /* One reply: the payload of one frame (len bytes, < GLEAN_FRAME_MAX;
         * NUL-terminated too), valid during the call. < 0 stops the handler
         * and is returned. */
        int (*send)(void *userdata, const char *payload, size_t len);
        /* A running job was held or removed: vacate its claim. The job's
         * final state follows when the claim ends (queue_job_exit or
         * queue_job_requeue). job is valid during the call. May be NULL. */
        void (*vacate)(void *userdata, const Job *job, const char *claim_id, const char *reason);
        void *userdata;
        /* What a Submit may say of who it is (jobcmd_policy_check); NULL:
         * the literal checks only, no accounting group allowed. */
        const struct JobCmdPolicy *policy;
} JobCmdSink;

/* ---- who a submitted job may say it is (jobcmd-policy.c) ---- */

/* ACCOUNTING_GROUPS_ALLOWED, ACCOUNTING_GROUPS_ALLOWED_<user>,
 * SUBMIT_REQUIREMENT_NAMES / SUBMIT_REQUIREMENT_<Name>[_REASON] and
 * JOB_TRANSFORM_NAMES / JOB_TRANSFORM_<Name> (transform.h, applied by
 * jobcmd_submit before these checks) of cfg; err says which knob is
 * broken. */
#define JOBCMD_SUBMIT_POLICY 1 /* for bench/submit-identity.c, built against older trees too */
typedef struct JobCmdPolicy JobCmdPolicy;
int jobcmd_policy_from_config(const Config *cfg, JobCmdPolicy **ret, ConfigError *err);
void jobcmd_policy_free(JobCmdPolicy *p); /* accepts NULL */
/* A submit of who (procs[i] may be NULL): Owner, User, AccountingGroup,
 * AcctGroup, AcctGroupUser literal strings and NiceUser a literal bool,
 * the accounting ones the same for every proc; the accounting user who's
 * own and the group one p lets who use (root and ADMINISTRATORS: any);
 * every SUBMIT_REQUIREMENT true of every job. -EINVAL / -EPERM with why
 * naming the rule, -ENOMEM.
 *
 * SUBMIT_REQUIREMENT_<Name> as condor_schedd evaluates it: in the listed
 * order, with a scheduler ad as MY (MyType "Scheduler"; SCHEDD. names it)
 * and the job as TARGET (JOB. names it; a plain name not in the
 * scheduler's ad is the job's), Owner and User the caller's. false (or a
 * number 0) refuses the submission with SUBMIT_REQUIREMENT_<Name>_REASON
 * (when it is a string; else "the job does not meet
 * SUBMIT_REQUIREMENT_<Name>"); a value that is no boolean nor number
 * (UNDEFINED, ERROR, a string) refuses it, saying so. A requirement with
 * SUBMIT_REQUIREMENT_<Name>_IS_WARNING true does not refuse: the
 * evaluation goes on and 1 is returned with why holding the last such
 * reason (the submission is accepted with that warning). A name NAMES in
 * the list is skipped, as HTCondor does. */
int jobcmd_policy_check(const JobCmdPolicy *p, const QueueRequester *who, const char *uid_domain,
                        const ClassAd *cluster, ClassAd *const *procs, size_t n, char *why, size_t whylen);
/* The same of one part of a submission: procs are procs first.. of it
 * (the numbers its reasons give); a submission is checked part by part
 * as its parts come, every part with the same cluster. */
int jobcmd_policy_check_part(const JobCmdPolicy *p, const QueueRequester *who, const char *uid_domain,
                             const ClassAd *cluster, ClassAd *const *procs, size_t n, size_t first, char *why,
                             size_t whylen);

/* The knobs of what the configuration adds to every job (submit-knobs.c),
 * held by the policy (jobcmd_policy_knobs; NULL policy: none). */
typedef struct JobCmdKnobs JobCmdKnobs;
const JobCmdKnobs *jobcmd_policy_knobs(const JobCmdPolicy *p);

/* ---- what the configuration adds to every job (submit-knobs.c) ---- */

/* SUBMIT_ATTRS, SUBMIT_EXPRS and SYSTEM_SUBMIT_ATTRS (names of macros,
 * "+Name" and "MY.Name" the same as Name; each macro's value a ClassAd
 * expression, an undefined one skipped) and the expression and'ed to
 * every job's Requirements: APPEND_REQ_VANILLA, or APPEND_REQUIREMENTS when
 * that is unset or empty. A value that does not parse, a name that is not
 * an attribute name, or a name that decides who a job is (Owner, User,
 * AccountingGroup, AcctGroup, AcctGroupUser, NiceUser) is -EINVAL with err
 * naming the knob's file and line. */
int jobcmd_knobs_from_config(const Config *cfg, JobCmdKnobs **ret, ConfigError *err);
void jobcmd_knobs_free(JobCmdKnobs *k); /* accepts NULL */
const char *jobcmd_knobs_append(const JobCmdKnobs *k); /* the appended expression, NULL: none */
size_t jobcmd_knobs_attrs(const JobCmdKnobs *k);        /* how many SUBMIT_ATTRS */
/* On a submission as it arrives, before SUBMIT_REQUIREMENT_<Name>: each
 * SUBMIT_ATTRS attribute the cluster ad lacks set on it (a job's own value
 * wins, as "+Name" does over condor_submit's); the Requirements of the
 * cluster and of each proc that has its own become (theirs) && (append).
 * k NULL: nothing. -ENOMEM, -EINVAL (a Requirements that no longer parses
 * once and'ed: not met). */
int jobcmd_knobs_apply_cluster(const JobCmdKnobs *k, ClassAd *cluster);
int jobcmd_knobs_apply_procs(const JobCmdKnobs *k, ClassAd *const *procs, size_t n);
/* Both, for one part of a submission: the cluster at its first part. */
int jobcmd_knobs_apply_part(const JobCmdKnobs *k, ClassAd *cluster, bool first, ClassAd *const *procs, size_t n);
/* What the central manager's configuration says of the queue's knobs that
 * glean cannot do as written: SUBMIT_ATTRS naming an undefined macro or an
 * attribute the queue sets itself, HISTORY naming a file (the history is
 * in the database), ROTATE_HISTORY_*. "file:line: reason" each, *ret
 * NULL-terminated (NULL when none; config_strv_free), the count returned;
 * -ENOMEM. The daemon logs them at start and at each reload. */
int jobcmd_config_warnings(const Config *cfg, char ***ret);

/* ---- Submit ---- */

/* The parts of one multi-part submit received so far (per connection). */
typedef struct JobCmdSubmit JobCmdSubmit;
void jobcmd_submit_free(JobCmdSubmit *s); /* accepts NULL */

#define JOBCMD_SUBMIT_MAX_PARTS 1024 /* parts of one submit (each a frame: 1 GiB at most) */

/* One Submit part. *pending is the connection's submit in progress: NULL
 * before its first part; the handler creates it for a part with More =
 * true and frees it (NULL again) at the last part. The caller keeps it
 * between parts and frees it with jobcmd_submit_free() when the
 * connection closes. Every part must come from the same requester and
 * carry the same Cluster ad. Exactly one Reply per submit, to its last
 * part (More absent or false): Ok with ClusterId and NumProcs, or Ok =
 * false with the first error of any part (later parts are read and
 * dropped). Returns 1 when that reply acknowledges a new cluster (see
 * Batches), 0 otherwise. */
int jobcmd_submit(JobCmdSubmit **pending, JobQueue *q, const QueueRequester *who, const ClassAd *request,
                  double now, const JobCmdSink *sink);

/* jobcmd_submit for a daemon that takes big submissions in slices
 * (queue.h, "Submitting in slices"): a submission of more than
 * JOBCMD_SUBMIT_SLICE procs, and a repeat of one still being taken, is
 * not answered now but parked: JOBCMD_SUBMIT_PARKED with *parked. The
 * caller steps parked->s (queue_submission_step, JOBCMD_SUBMIT_SLICE
 * procs at a time, between its other work) and answers the request
 * then, with jobcmd_submit_answer (Repeated when parked->repeat) or
 * jobcmd_submit_refusal; it frees a new submission once answered
 * (queue_submission_free), never a repeat's (the first request's). */
#define JOBCMD_SUBMIT_SLICE 4096
#define JOBCMD_SUBMIT_PARKED 2
typedef struct JobCmdParked {
        QueueSubmission *s;
        bool repeat;
} JobCmdParked;
int jobcmd_submit_parking(JobCmdSubmit **pending, JobQueue *q, const QueueRequester *who, const ClassAd *request,
                          double now, const JobCmdSink *sink, JobCmdParked *parked);
int jobcmd_submit_answer(const ClassAd *request, int64_t cluster, int64_t procs, bool repeated,
                         const JobCmdSink *sink);
int jobcmd_submit_refusal(const ClassAd *request, const char *why, const JobCmdSink *sink);
/* jobcmd_submit_answer with Warning = warning when it is not NULL (a
 * submit warning the submission did not meet: accepted all the same). A
 * parked submission keeps its warning (queue_submission_warning). */
int jobcmd_submit_answer_warned(const ClassAd *request, int64_t cluster, int64_t procs, bool repeated,
                                const char *warning, const JobCmdSink *sink);

/* For the client (glean submit): the Submit messages of the jobs of one
 * cluster, as config_submit_parse_* makes them (one ad per proc, in
 * ProcId order): the attributes every job has alike (same expression)
 * go to Cluster, the rest to each proc's ad; the procs are packed into
 * parts under GLEAN_FRAME_MAX, every part but the last with More = true.
 * request_id (>= 0) goes into every part. *ret: malloc'd array of
 * *ret_n messages; free with glean_ad_list_free(). -EINVAL n == 0,
 * -E2BIG a job alone too big for a frame. */
int jobcmd_submit_messages(ClassAd *const *jobs, size_t n, int64_t request_id, ClassAd ***ret, size_t *ret_n);

/* ---- Query, History ---- */

/* Ids ("C" and "C.P", separated by spaces or commas), Constraint (an
 * expression: jobs for which it is true), Attrs (names: the ads carry
 * those alone), Limit (at most so many ads; 0: Count only). Query's
 * Count: every job that matches; History's: the ads it returned (the
 * history is read newest first and no further than Limit). A malformed
 * Ids, Constraint or Attrs: Ok = false saying which and why. Anyone may
 * look at every job (condor_q's default READ access). */
int jobcmd_query(JobQueue *q, const ClassAd *request, const JobCmdSink *sink);
int jobcmd_history(JobQueue *q, const ClassAd *request, const JobCmdSink *sink);

/* ---- JobAction ---- */

/* Remove, Hold, Release, SetPrio (Prio) of the jobs named by Ids and/or
 * matching Constraint (both: the named jobs that match), with Reason.
 * Results: one [ Id = "C.P"; Ok; Reason ] per job acted on or refused,
 * and one per Id that names nothing ("C" with no job, "C.P" not in the
 * queue); Count: jobs changed; Ok false when some target was not found
 * or refused. A user acts on their own jobs only (other users' named
 * jobs are refused; other users' jobs a Constraint matches are passed
 * over); root and administrators on every job. Vacate:
 * -EOPNOTSUPP and no reply (the daemon's). Returns 1 when a job changed. */
int jobcmd_job_action(JobQueue *q, const QueueRequester *who, const ClassAd *request, double now,
                      const JobCmdSink *sink);

/* ---- UserPrio ---- */

/* list (the default): one ad per account entry: Name, Priority (the
 * effective priority, as HTCondor's Accountant ads), RealPriority,
 * EffectivePriority (= Priority), PriorityFactor, PriorityFactorSet, ResourcesUsed,
 * WeightedResourcesUsed, AccumulatedUsage, WeightedAccumulatedUsage,
 * BeginUsageTime, LastUsageTime, IsAccountingGroup, AccountingGroup.
 * setprio, setfactor (Submitter, Value), resetusage, delete (Submitter):
 * administrators only; Ok = false with the reason otherwise. Returns 1
 * when the accounts changed. */
int jobcmd_user_prio(Accountant *a, const QueueRequester *who, const ClassAd *request, double now,
                     const JobCmdSink *sink);

/* ---- helpers for the daemon's commands ---- */

/* A listing in pieces: begin with the request (its RequestId is echoed)
 * and the name of the list ("Ads", "Results"); add each ad (or its
 * projection on attrs, a NULL-terminated list; NULL: every attribute);
 * end with the Count. Pieces are sent as they fill. An ad too big for a
 * frame alone goes as its ClusterId, ProcId, Name and GleanTruncated =
 * true. The functions return < 0 when sending failed (the listing is
 * over: free it). */
typedef struct JobCmdListing JobCmdListing;
int jobcmd_listing_begin(const ClassAd *request, const char *list_name, const JobCmdSink *sink,
                         JobCmdListing **ret);
int jobcmd_listing_add(JobCmdListing *l, const ClassAd *ad, char *const *attrs);
int jobcmd_listing_end(JobCmdListing *l, int64_t count); /* sends the last piece and frees l */
void jobcmd_listing_free(JobCmdListing *l);              /* accepts NULL; sends nothing */

/* A reply Ok = ok with Reason (may be NULL), sent. */
int jobcmd_reply(const ClassAd *request, bool ok, const char *reason, const JobCmdSink *sink);

/* Wait: when job id has left the queue, sends the Reply with its history
 * ad (Ad) and returns 1; 0 while it is still in the queue (the daemon
 * waits, and calls again when it leaves or sends ETIMEDOUT); a job in
 * neither: Ok = false "job C.P is not in the queue or its history", 1. */
int jobcmd_wait_done(JobQueue *q, JobId id, const ClassAd *request, const JobCmdSink *sink);

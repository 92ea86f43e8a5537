/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-life.c — the life of a job after its submit (queue-submit.c):
 * start, exit, requeue, what users and administrators do (rm, hold, release, prio) and the periodic
 * policy, each one change (queue.c's pattern: begin, touch and write,
 * end).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "queue-internal.h"

/* ---- helpers of the changes below ---- */

static int find_job(JobQueue *q, JobId id, QJob **ret, char *why, size_t whylen) {
        char idbuf[JOB_ID_STRLEN];
        QJob *j = queue_lookup(q, id.cluster, id.proc);

        if (!j)
                return glean_why(-ENOENT, why, whylen, "job %s is not in the queue", job_id_format(id, idbuf));
        *ret = j;
        return 0;
}

static int begin(JobQueue *q, char *why, size_t whylen) {
        int r = queue_change_begin(q);

        if (r < 0) {
                const char *err = acct_last_error(q->acct);
                return glean_why(r, why, whylen, "%s",
                                 r == -EROFS ? "the queue is read-only here" : *err ? err : strerror(-r));
        }
        return 0;
}

static int add_real(QJob *j, const char *name, double v) {
        double have = 0;

        (void) classad_eval_real(j->pub.ad, name, QUEUE_MODE, &have);
        return qjob_set_real(j, name, have + v);
}

static int add_int(QJob *j, const char *name, int64_t v) {
        int64_t have = 0;

        (void) classad_eval_int(j->pub.ad, name, QUEUE_MODE, &have);
        return qjob_set_int(j, name, have > INT64_MAX - v ? INT64_MAX : have + v);
}

static int hold_job(JobQueue *q, QJob *j, const char *reason, int code, int subcode, double now) {
        int64_t holds = 0;
        int r;

        (void) classad_eval_int(j->pub.ad, "NumHolds", QUEUE_MODE, &holds);
        r = qjob_set_status(q, j, JOB_HELD, now);
        if (r >= 0)
                r = qjob_set_string(j, "HoldReason", reason);
        if (r >= 0)
                r = qjob_set_int(j, "HoldReasonCode", code);
        if (r >= 0)
                r = qjob_set_int(j, "HoldReasonSubCode", subcode);
        if (r >= 0)
                r = qjob_set_int(j, "NumHolds", holds + 1);
        return r;
}

static int release_job(JobQueue *q, QJob *j, const char *reason, double now) {
        int64_t code = 0;
        char *hold = NULL;
        int r;

        (void) classad_eval_string(j->pub.ad, "HoldReason", QUEUE_MODE, &hold);
        (void) classad_eval_int(j->pub.ad, "HoldReasonCode", QUEUE_MODE, &code);
        r = qjob_set_status(q, j, JOB_IDLE, now);
        if (r >= 0 && hold)
                r = qjob_set_string(j, "LastHoldReason", hold);
        if (r >= 0)
                r = qjob_set_int(j, "LastHoldReasonCode", code);
        if (r >= 0)
                r = qjob_set_string(j, "ReleaseReason", reason);
        free(hold);
        qjob_delete(j, "HoldReason");
        qjob_delete(j, "HoldReasonCode");
        qjob_delete(j, "HoldReasonSubCode");
        return r;
}

/* Removed; a job without a claim leaves for the history. */
static int remove_job(JobQueue *q, QJob *j, const char *reason, double now) {
        int r = qjob_set_status(q, j, JOB_REMOVED, now);

        if (r >= 0)
                r = qjob_set_string(j, "RemoveReason", reason);
        if (r >= 0 && !j->claim)
                r = queue_retire(q, j, now);
        return r;
}

static int complete_job(JobQueue *q, QJob *j, double now) {
        int r = qjob_set_status(q, j, JOB_COMPLETED, now);

        if (r >= 0)
                r = qjob_set_int(j, "CompletionDate", (int64_t) now);
        if (r >= 0)
                r = queue_retire(q, j, now);
        return r;
}

/* Writes the job's row unless it left. */
static int put(JobQueue *q, QJob *j) {
        return j->leaving ? 0 : qstore_put_job(q, j);
}

/* A change of job `id` begun and the job touched; nothing begun on failure. */
static int change_begin(JobQueue *q, JobId id, char *why, size_t whylen) {
        int r = begin(q, why, whylen);

        if (r < 0)
                return r;
        r = queue_touch(q, id);
        return r < 0 ? queue_change_end(q, r, why, whylen) : 0;
}

/* The change ended: the job's row written first unless r says it failed. */
static int put_end(JobQueue *q, QJob *j, int r, char *why, size_t whylen) {
        if (r >= 0)
                r = put(q, j);
        return queue_change_end(q, r, why, whylen);
}

/* Applies a policy's decision to a job whose run is not in the way. */
static int apply_policy(JobQueue *q, QJob *j, const QPolicyResult *p, double now) {
        switch (p->action) {
        case QP_HOLD:
                return hold_job(q, j, p->reason, p->code, p->subcode, now);
        case QP_RELEASE:
                return release_job(q, j, p->reason, now);
        case QP_REMOVE:
                return remove_job(q, j, p->reason, now);
        case QP_COMPLETE:
                return complete_job(q, j, now);
        case QP_REQUEUE:
                return qjob_set_status(q, j, JOB_IDLE, now);
        default:
                return 0;
        }
}

/* ---- start, exit, requeue ---- */

int queue_job_start(JobQueue *q, JobId id, const char *claim_id, const char *slot, double now) {
        QJob *j = NULL;
        int64_t starts = 0, runs = 0;
        int r;

        if (!claim_id || !*claim_id || !slot || !*slot)
                return -EINVAL;
        r = find_job(q, id, &j, NULL, 0);
        if (r < 0)
                return r;
        if (j->pub.status != JOB_IDLE || j->claim)
                return -EBUSY;
        if (glean_strmap_get(q->claims, claim_id))
                return -EEXIST;
        r = change_begin(q, id, NULL, 0);
        if (r < 0)
                return r;
        (void) classad_eval_int(j->pub.ad, "NumJobStarts", QUEUE_MODE, &starts);
        (void) classad_eval_int(j->pub.ad, "JobRunCount", QUEUE_MODE, &runs);
        r = qjob_set_claim(q, j, claim_id, slot);
        if (r >= 0)
                r = qjob_set_status(q, j, JOB_RUNNING, now);
        if (r >= 0)
                r = qjob_set_int(j, "NumJobStarts", starts + 1);
        if (r >= 0)
                r = qjob_set_int(j, "JobRunCount", runs + 1);
        if (r >= 0 && !classad_has(j->proc, "JobStartDate"))
                r = qjob_set_int(j, "JobStartDate", (int64_t) now);
        if (r >= 0)
                r = qjob_set_int(j, "JobCurrentStartDate", (int64_t) now);
        if (r >= 0)
                r = qjob_set_int(j, "LastMatchTime", (int64_t) now);
        if (r >= 0)
                r = qjob_set_string(j, "RemoteHost", slot);
        if (r >= 0)
                r = qstore_put_job(q, j);
        return queue_change_end(q, r, NULL, 0);
}

/* The run is over: its time, the claim detached, LastRemoteHost. */
static int end_run(JobQueue *q, QJob *j, double wall, double now) {
        int64_t started = 0;
        int r;

        if (wall < 0) {
                (void) classad_eval_int(j->pub.ad, "JobCurrentStartDate", QUEUE_MODE, &started);
                wall = started > 0 && now > (double) started ? now - (double) started : 0;
        }
        r = add_real(j, "RemoteWallClockTime", wall);
        if (r >= 0 && j->slot && *j->slot)
                r = qjob_set_string(j, "LastRemoteHost", j->slot);
        if (r >= 0) {
                qjob_delete(j, "RemoteHost");
                qjob_delete(j, "TransferringInput"); /* its slot's, while it ran */
                qjob_delete(j, "TransferringOutput");
        }
        if (r >= 0)
                r = qjob_set_claim(q, j, NULL, NULL);
        return r;
}

/* A number attribute of the exit message: absent is fine (*ret untouched),
 * otherwise it must be finite and within [min, max]. */
static int exit_number(const ClassAd *m, const char *name, double min, double max, double *ret, char *why,
                       size_t whylen) {
        CaValue v = ca_undefined();
        double d;
        int r = 0;

        if (classad_eval_attr(m, name, QUEUE_MODE, &v) < 0)
                return -ENOMEM;
        if (v.type != CA_UNDEFINED) {
                if ((v.type != CA_INT && v.type != CA_REAL) || !ca_to_real(&v, &d) || !isfinite(d) || d < min ||
                    d > max)
                        r = glean_why(-EINVAL, why, whylen, "exit report: %s is not a number from %g to %g", name, min,
                                      max);
                else
                        *ret = d;
        }
        ca_value_clear(&v);
        return r;
}

typedef struct ExitReport {
        bool by_signal, core;
        double code, signal, user_cpu, sys_cpu, wall, rss, image, hold_code, hold_subcode, sent, recvd;
        char *hold_reason;
} ExitReport;

/* A run held because its files could not travel: the job did not end by
 * itself (its input never came, or its output could not go back), so
 * the report's exit status is none of the job's and is not kept. */
static bool transfer_hold(const ExitReport *e) {
        return e->hold_code == QUEUE_HOLD_TRANSFER_INPUT || e->hold_code == QUEUE_HOLD_TRANSFER_OUTPUT;
}

static int parse_exit(const ClassAd *m, ExitReport *e, char *why, size_t whylen) {
        int r;

        *e = (ExitReport) { .code = -1, .signal = -1, .user_cpu = 0, .sys_cpu = 0, .wall = -1, .rss = -1,
                            .image = -1, .hold_code = 0, .hold_subcode = 0, .sent = 0, .recvd = 0 };
        if (!m || classad_eval_bool(m, "ExitBySignal", QUEUE_MODE, &e->by_signal) < 0)
                return glean_why(-EINVAL, why, whylen, "exit report: no ExitBySignal (true or false)");
        if (classad_has(m, "CoreDumped") && classad_eval_bool(m, "CoreDumped", QUEUE_MODE, &e->core) < 0)
                return glean_why(-EINVAL, why, whylen, "exit report: CoreDumped is not true or false");
        if ((r = exit_number(m, "ExitCode", 0, 255, &e->code, why, whylen)) < 0 ||
            (r = exit_number(m, "ExitSignal", 1, 64, &e->signal, why, whylen)) < 0 ||
            (r = exit_number(m, "RemoteUserCpu", 0, 1e15, &e->user_cpu, why, whylen)) < 0 ||
            (r = exit_number(m, "RemoteSysCpu", 0, 1e15, &e->sys_cpu, why, whylen)) < 0 ||
            (r = exit_number(m, "RemoteWallClockTime", 0, 1e15, &e->wall, why, whylen)) < 0 ||
            (r = exit_number(m, "ResidentSetSize", 0, 9e15, &e->rss, why, whylen)) < 0 ||
            (r = exit_number(m, "ImageSize", 0, 9e15, &e->image, why, whylen)) < 0 ||
            (r = exit_number(m, "HoldReasonCode", 0, 1e9, &e->hold_code, why, whylen)) < 0 ||
            (r = exit_number(m, "HoldReasonSubCode", -1e9, 1e9, &e->hold_subcode, why, whylen)) < 0 ||
            (r = exit_number(m, "BytesSent", 0, 9e18, &e->sent, why, whylen)) < 0 ||
            (r = exit_number(m, "BytesRecvd", 0, 9e18, &e->recvd, why, whylen)) < 0)
                return r;
        if (!transfer_hold(e) && (e->by_signal ? e->signal < 0 : e->code < 0))
                return glean_why(-EINVAL, why, whylen, "exit report: no %s",
                                 e->by_signal ? "ExitSignal (1 to 64)" : "ExitCode (0 to 255)");
        if (e->hold_code > 0 && classad_eval_string(m, "HoldReason", QUEUE_MODE, &e->hold_reason) < 0 &&
            !(e->hold_reason = strdup("held by the execute machine")))
                return -ENOMEM;
        return 0;
}

static int record_exit(QJob *j, const ExitReport *e) {
        double image = 0;
        int r;

        /* The bytes moved, over every run (HTCondor's BytesSent, BytesRecvd). */
        r = e->sent > 0 ? add_int(j, "BytesSent", (int64_t) e->sent) : 0;
        if (r >= 0 && e->recvd > 0)
                r = add_int(j, "BytesRecvd", (int64_t) e->recvd);
        if (r >= 0 && transfer_hold(e))
                goto usage;
        if (r >= 0)
                r = qjob_set_bool(j, "ExitBySignal", e->by_signal);
        if (r >= 0 && e->by_signal) {
                r = qjob_set_int(j, "ExitSignal", (int64_t) e->signal);
                qjob_delete(j, "ExitCode");
        } else if (r >= 0) {
                r = qjob_set_int(j, "ExitCode", (int64_t) e->code);
                qjob_delete(j, "ExitSignal");
        }
        if (r >= 0)
                r = qjob_set_bool(j, "JobCoreDumped", e->core);
usage:
        if (r >= 0)
                r = add_real(j, "RemoteUserCpu", e->user_cpu);
        if (r >= 0)
                r = add_real(j, "RemoteSysCpu", e->sys_cpu);
        if (r >= 0 && e->rss >= 0)
                r = qjob_set_int(j, "ResidentSetSize", (int64_t) e->rss);
        if (r >= 0 && e->image >= 0) {
                (void) classad_eval_real(j->pub.ad, "ImageSize", QUEUE_MODE, &image);
                if (e->image > image)
                        r = qjob_set_int(j, "ImageSize", (int64_t) e->image);
        }
        return r;
}

int queue_job_exit(JobQueue *q, JobId id, const ClassAd *exit_msg, double now, JobStatus *ret_status,
                   const char **ret_reason, char *why, size_t whylen) {
        char idbuf[JOB_ID_STRLEN];
        QPolicyResult p = { .action = QP_NONE };
        ExitReport e;
        JobStatus became;
        QJob *j = NULL;
        int r;

        r = find_job(q, id, &j, why, whylen);
        if (r < 0)
                return r;
        if (!j->claim)
                return glean_why(-EINVAL, why, whylen, "job %s has no claim attached", job_id_format(id, idbuf));
        r = parse_exit(exit_msg, &e, why, whylen);
        if (r < 0)
                return r;
        r = change_begin(q, id, why, whylen);
        if (r < 0) {
                free(e.hold_reason);
                return r;
        }
        r = record_exit(j, &e);
        if (r >= 0 && j->pub.status == JOB_RUNNING) {
                /* Decided while the ad still says Running, as the shadow does. */
                if (e.hold_code > 0)
                        p = (QPolicyResult) { .action = QP_HOLD, .code = (int) e.hold_code,
                                              .subcode = (int) e.hold_subcode };
                else
                        queue_policy(q, j->pub.ad, JOB_RUNNING, true, &p);
                if (e.hold_code > 0)
                        snprintf(p.reason, sizeof(p.reason), "%s", e.hold_reason);
        }
        if (r >= 0)
                r = end_run(q, j, e.wall, now);
        if (r >= 0) {
                if (j->pub.status == JOB_RUNNING)
                        r = apply_policy(q, j, &p, now);
                else if (j->pub.status == JOB_REMOVED)
                        r = queue_retire(q, j, now);
        }
        became = j->pub.status;
        if (r >= 0)
                r = put(q, j);
        free(e.hold_reason);
        r = queue_change_end(q, r, why, whylen);
        if (r < 0)
                return r;
        snprintf(q->reason, sizeof(q->reason), "%s", p.reason);
        if (ret_status)
                *ret_status = became;
        if (ret_reason)
                *ret_reason = (p.action == QP_HOLD || p.action == QP_REMOVE) && *q->reason ? q->reason : NULL;
        return 0;
}

int queue_job_add_bytes(JobQueue *q, JobId id, int64_t sent, int64_t recvd) {
        QJob *j = NULL;
        int r;

        if (sent < 0 || recvd < 0)
                return -EINVAL;
        if (sent == 0 && recvd == 0)
                return 0;
        r = find_job(q, id, &j, NULL, 0);
        if (r < 0)
                return r;
        r = change_begin(q, id, NULL, 0);
        if (r < 0)
                return r;
        r = sent > 0 ? add_int(j, "BytesSent", sent) : 0;
        if (r >= 0 && recvd > 0)
                r = add_int(j, "BytesRecvd", recvd);
        return put_end(q, j, r, NULL, 0);
}

int queue_job_set_transferring(JobQueue *q, JobId id, bool input, bool output) {
        QJob *j = NULL;
        int r;

        r = find_job(q, id, &j, NULL, 0);
        if (r < 0)
                return r;
        if (!j->claim || j->pub.status != JOB_RUNNING)
                return -EINVAL;
        r = change_begin(q, id, NULL, 0);
        if (r < 0)
                return r;
        r = qjob_set_bool(j, "TransferringInput", input);
        if (r >= 0)
                r = qjob_set_bool(j, "TransferringOutput", output);
        return put_end(q, j, r, NULL, 0);
}

int queue_job_requeue(JobQueue *q, JobId id, const char *reason, double now, JobStatus *ret_status) {
        JobStatus became;
        QJob *j = NULL;
        int r;

        r = find_job(q, id, &j, NULL, 0);
        if (r < 0)
                return r;
        if (!j->claim)
                return -EINVAL;
        r = change_begin(q, id, NULL, 0);
        if (r < 0)
                return r;
        r = qjob_set_int(j, "LastVacateTime", (int64_t) now);
        if (r >= 0)
                r = qjob_set_string(j, "LastVacateReason", reason && *reason ? reason : "the claim ended");
        if (r >= 0)
                r = end_run(q, j, -1, now);
        if (r >= 0 && j->pub.status == JOB_RUNNING)
                r = qjob_set_status(q, j, JOB_IDLE, now);
        else if (r >= 0 && j->pub.status == JOB_REMOVED)
                r = queue_retire(q, j, now);
        became = j->pub.status;
        r = put_end(q, j, r, NULL, 0);
        if (r >= 0 && ret_status)
                *ret_status = became;
        return r;
}

int queue_job_rejected(JobQueue *q, JobId id, const char *reason, double now) {
        QJob *j = queue_lookup(q, id.cluster, id.proc);
        int r;

        if (!j)
                return -ENOENT;
        r = qjob_set_string(j, "LastRejMatchReason", reason ? reason : "no match found");
        if (r >= 0)
                r = qjob_set_int(j, "LastRejMatchTime", (int64_t) now);
        return r;
}

/* ---- users and administrators ---- */

static int may_act(const QJob *j, const QueueRequester *who, char *why, size_t whylen) {
        char idbuf[JOB_ID_STRLEN];

        if (!who || !who->user)
                return glean_why(-EPERM, why, whylen, "no user asks");
        if (who->admin || strcmp(who->user, j->pub.owner) == 0)
                return 0;
        return glean_why(-EPERM, why, whylen, "job %s belongs to %s", job_id_format(j->pub.id, idbuf), j->pub.owner);
}

/* "via glean VERB (by user U)" unless the caller gave one. */
static const char *reason_or(const char *reason, const char *verb, const QueueRequester *who, char *buf, size_t len) {
        if (reason && *reason)
                return reason;
        snprintf(buf, len, "via glean %s (by user %s)", verb, who->user);
        return buf;
}

/* The job a user's command acts on: in the queue, and `who` its owner or an
 * administrator. */
static int user_job(JobQueue *q, const QueueRequester *who, JobId id, QJob **ret, char *why, size_t whylen) {
        QJob *j = NULL;
        int r;

        r = find_job(q, id, &j, why, whylen);
        if (r < 0)
                return r;
        r = may_act(j, who, why, whylen);
        if (r < 0)
                return r;
        *ret = j;
        return 0;
}

/* A user's remove (to JOB_REMOVED) or hold (to JOB_HELD, with code and
 * subcode): a job being removed is refused both, a held job a hold. */
static int user_stop(JobQueue *q, const QueueRequester *who, JobId id, JobStatus to, const char *reason, int code,
                     int subcode, double now, bool *ret_was_running, char *why, size_t whylen) {
        char idbuf[JOB_ID_STRLEN], buf[256];
        bool running;
        QJob *j = NULL;
        int r;

        r = user_job(q, who, id, &j, why, whylen);
        if (r < 0)
                return r;
        if (j->pub.status == JOB_REMOVED || (to == JOB_HELD && j->pub.status == JOB_HELD))
                return glean_why(-EINVAL, why, whylen, "job %s is %s already", job_id_format(id, idbuf),
                                 j->pub.status == JOB_HELD ? "held" : "being removed");
        r = change_begin(q, id, why, whylen);
        if (r < 0)
                return r;
        running = j->claim != NULL;
        if (to == JOB_REMOVED)
                r = remove_job(q, j, reason_or(reason, "rm", who, buf, sizeof(buf)), now);
        else
                r = hold_job(q, j, reason_or(reason, "hold", who, buf, sizeof(buf)),
                             code > 0 ? code : QUEUE_HOLD_USER_REQUEST, subcode, now);
        r = put_end(q, j, r, why, whylen);
        if (r >= 0 && ret_was_running)
                *ret_was_running = running;
        return r;
}

int queue_job_remove(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, double now,
                     bool *ret_was_running, char *why, size_t whylen) {
        return user_stop(q, who, id, JOB_REMOVED, reason, 0, 0, now, ret_was_running, why, whylen);
}

int queue_job_hold(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, int code, int subcode,
                   double now, bool *ret_was_running, char *why, size_t whylen) {
        return user_stop(q, who, id, JOB_HELD, reason, code, subcode, now, ret_was_running, why, whylen);
}

int queue_job_release(JobQueue *q, const QueueRequester *who, JobId id, const char *reason, double now, char *why,
                      size_t whylen) {
        char idbuf[JOB_ID_STRLEN], buf[256];
        QJob *j = NULL;
        int r;

        r = user_job(q, who, id, &j, why, whylen);
        if (r < 0)
                return r;
        if (j->pub.status != JOB_HELD)
                return glean_why(-EINVAL, why, whylen, "job %s is not held", job_id_format(id, idbuf));
        r = change_begin(q, id, why, whylen);
        if (r < 0)
                return r;
        r = release_job(q, j, reason_or(reason, "release", who, buf, sizeof(buf)), now);
        return put_end(q, j, r, why, whylen);
}

int queue_job_set_prio(JobQueue *q, const QueueRequester *who, JobId id, int64_t prio, char *why, size_t whylen) {
        QJob *j = NULL;
        int r;

        r = user_job(q, who, id, &j, why, whylen);
        if (r < 0)
                return r;
        if (prio < INT32_MIN || prio > INT32_MAX)
                return glean_why(-EINVAL, why, whylen, "priority %" PRId64 " is out of range", prio);
        r = change_begin(q, id, why, whylen);
        if (r < 0)
                return r;
        r = qjob_set_int(j, "JobPrio", prio);
        return put_end(q, j, r, why, whylen);
}

/* ---- the periodic policy ---- */

typedef struct Changed {
        JobId id;
        JobStatus from, to;
        char *reason;
} Changed;

typedef struct PeriodicTell {
        JobQueue *q;
        Changed *changed;
        size_t n;
        QueueChangeFn fn;
        void *userdata;
} PeriodicTell;

/* After the commit, before the jobs that left are dropped. */
static void tell(void *userdata) {
        PeriodicTell *t = userdata;

        for (size_t i = 0; i < t->n; i++) {
                QJob *j = queue_lookup(t->q, t->changed[i].id.cluster, t->changed[i].id.proc);
                if (j)
                        t->fn(t->userdata, &j->pub, t->changed[i].from, t->changed[i].to, t->changed[i].reason);
        }
}

int queue_periodic(JobQueue *q, double now, QueueChangeFn fn, void *userdata) {
        Changed *changed = NULL;
        size_t n = 0, cap = 0;
        int r;

        r = queue_change_begin(q);
        if (r < 0)
                return r;
        for (size_t i = 0; r >= 0 && i < q->n_entries; i++) {
                QJob *j = q->entries[i].j;
                QPolicyResult p;
                JobStatus from;

                if (!j || j->leaving || (j->claim && j->pub.status != JOB_RUNNING) ||
                    (j->pub.status != JOB_IDLE && j->pub.status != JOB_RUNNING && j->pub.status != JOB_HELD))
                        continue;
                queue_policy(q, j->pub.ad, j->pub.status, false, &p);
                if (p.action == QP_NONE)
                        continue;
                if (n == cap) {
                        size_t ncap = cap ? 2 * cap : 16;
                        Changed *c = realloc(changed, ncap * sizeof(*c));
                        if (!c) {
                                r = -ENOMEM;
                                break;
                        }
                        changed = c;
                        cap = ncap;
                }
                from = j->pub.status;
                r = queue_touch(q, j->pub.id);
                if (r >= 0)
                        r = apply_policy(q, j, &p, now);
                if (r >= 0)
                        r = put(q, j);
                if (r >= 0) {
                        changed[n] = (Changed) { j->pub.id, from, j->pub.status, strdup(p.reason) };
                        n++;
                }
        }
        {
                PeriodicTell t = { q, changed, n, fn, userdata };
                r = queue_change_end_then(q, r, NULL, 0, fn ? tell : NULL, &t);
        }
        for (size_t i = 0; i < n; i++)
                free(changed[i].reason);
        free(changed);
        return r < 0 ? r : (int) n;
}

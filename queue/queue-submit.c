/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-submit.c — a submission, taken in slices (queue.h, "Submitting").
 *
 * queue_submission_begin checks what can be checked at once (who, how
 * many, the limits counting what is being submitted too) and reserves
 * the cluster id: next_cluster is written at once, so that no other
 * submission, now or after a restart, gets it. Each step then makes and
 * checks some procs in memory (nothing written while a proc may still
 * be refused), then writes some procs' rows; the rows of a cluster whose
 * own row is not there yet are invisible (qstore_load deletes them: an
 * unfinished submission of a daemon that stopped). The last step
 * publishes: the cluster's row, its submission id and the jobs linked
 * into memory, in one change. Between steps the daemon answers others.
 *
 * A transaction that fails after a step wrote (its batch, or another
 * change of the batch) took the step's rows with it: the submission
 * writes them again (queue_submissions_tx_end rewinds it). Its own write
 * failing fails it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/proto.h"
#include "queue-internal.h"

#define QUEUE_MAX_PROCS 10000000 /* in one submit */

struct QueueSubmission {
        QueueSubmission *next; /* JobQueue.submissions */
        char *user, *submit_id;
        char *machine; /* SubmitMachine: the relaying agent's, NULL on our own socket */
        int64_t id; /* the cluster's (reserved) */
        double now;
        bool hold_all;
        QCluster *c;      /* ours until published */
        ClassAd **procs;  /* as submitted (taken); each freed as its job is made */
        QJob **jobs;      /* made: 0..made-1 */
        size_t n, made, written;
        size_t written_committed; /* of written, committed (a rollback goes back to it) */
        bool reserved, reserved_committed; /* next_cluster written past id */
        bool published;
        QPlaceTally tally; /* of the jobs made */
        size_t cap_own;
        void *userdata;
        char *warning; /* a submit warning for the answer */
};

/* What the queue sets: dropped from what is submitted. */
static const char *const managed_attrs[] = {
        "ClusterId",           "ProcId",           "Owner",          "User",
        "QDate",               "JobStatus",        "LastJobStatus",  "EnteredCurrentStatus",
        "NumJobStarts",        "JobRunCount",      "JobStartDate",   "JobCurrentStartDate",
        "LastMatchTime",       "RemoteHost",       "LastRemoteHost", "CompletionDate",
        "ExitBySignal",        "ExitCode",         "ExitSignal",     "JobCoreDumped",
        "RemoteUserCpu",       "RemoteSysCpu",     "RemoteWallClockTime", "ResidentSetSize",
        "HoldReason",          "HoldReasonCode",   "HoldReasonSubCode", "NumHolds",
        "LastHoldReason",      "LastHoldReasonCode", "ReleaseReason", "RemoveReason",
        "LastVacateTime",      "LastVacateReason", "LastRejMatchReason", "LastRejMatchTime",
        "ClaimId",             "GleanSubmitId",    "SubmitMachine",
        "BytesSent",           "BytesRecvd",       "TransferringInput", "TransferringOutput",
};

bool queue_managed_attr(const char *name) {
        for (size_t i = 0; name && i < sizeof(managed_attrs) / sizeof(managed_attrs[0]); i++)
                if (strcasecmp(name, managed_attrs[i]) == 0)
                        return true;
        return false;
}

int queue_submission_set_warning(QueueSubmission *s, const char *warning) {
        char *w = warning ? strdup(warning) : NULL;
        if (warning && !w)
                return -ENOMEM;
        free(s->warning);
        s->warning = w;
        return 0;
}

const char *queue_submission_warning(const QueueSubmission *s) {
        return s ? s->warning : NULL;
}

static void strip_managed(ClassAd *ad) {
        for (size_t i = 0; i < sizeof(managed_attrs) / sizeof(managed_attrs[0]); i++)
                (void) classad_delete(ad, managed_attrs[i]);
}

static bool wants_hold(const ClassAd *ad) {
        int64_t s = 0;
        return ad && classad_eval_int(ad, "JobStatus", QUEUE_MODE, &s) >= 0 && s == JOB_HELD;
}

static bool plain_user(const char *u) {
        return u && *u && strlen(u) < 256 && !strpbrk(u, " \t\r\n\"'\\@");
}

/* Checks what the queue needs of a job's ad. */
static int check_job(const Job *job, char *why, size_t whylen) {
        char idbuf[JOB_ID_STRLEN];
        _cleanup_free_ char *cmd = NULL;
        int64_t prio;

        if (classad_eval_string(job->ad, "Cmd", QUEUE_MODE, &cmd) < 0 || !*cmd)
                return glean_why(-EINVAL, why, whylen, "job %s: no Cmd (the executable) as a string",
                                 job_id_format(job->id, idbuf));
        if (!classad_has(job->ad, "Requirements"))
                return glean_why(-EINVAL, why, whylen, "job %s: no Requirements", job_id_format(job->id, idbuf));
        if (classad_eval_int(job->ad, "JobPrio", QUEUE_MODE, &prio) < 0)
                return glean_why(-EINVAL, why, whylen, "job %s: JobPrio is not an integer",
                                 job_id_format(job->id, idbuf));
        return 0;
}

static int why_db(JobQueue *q, int r, char *why, size_t whylen) {
        const char *err = acct_last_error(q->acct);
        return glean_why(r, why, whylen, "%s", *err ? err : strerror(-r));
}

/* The procs of user being submitted (not yet in the queue), and of all. */
static size_t in_progress(const JobQueue *q, const char *user) {
        size_t n = 0;
        for (const QueueSubmission *s = q->submissions; s; s = s->next)
                if (!user || strcmp(s->user, user) == 0)
                        n += s->n;
        return n;
}

QueueSubmission *queue_submission_find(const JobQueue *q, const char *user, const char *submit_id) {
        for (QueueSubmission *s = q->submissions; s && user && submit_id; s = s->next)
                if (!s->published && s->submit_id && strcmp(s->user, user) == 0 &&
                    strcmp(s->submit_id, submit_id) == 0)
                        return s;
        return NULL;
}

/* The checks of begin that need no ad: -EINVAL, -EDQUOT, -EROFS ... */
static int check_begin(JobQueue *q, const QueueRequester *who, const char *submit_id, size_t n, char *why,
                       size_t whylen) {
        int r;

        if (q->readonly)
                return glean_why(-EROFS, why, whylen, "the queue is read-only here");
        if (!who || !plain_user(who->user))
                return glean_why(-EINVAL, why, whylen, "no user name to submit as");
        if (n == 0 || n > QUEUE_MAX_PROCS)
                return glean_why(-EINVAL, why, whylen, "%zu procs (1 to %d in one cluster)", n, QUEUE_MAX_PROCS);
        if (submit_id && !queue_submit_id_valid(submit_id))
                return glean_why(-EINVAL, why, whylen, "SubmitId is not 16 to 64 letters, digits, '-' or '_'");
        if (submit_id && queue_submission_find(q, who->user, submit_id))
                return glean_why(-EBUSY, why, whylen, "submission %s is being queued", submit_id);
        if (submit_id && (r = qsubmit_id_check(q, who->user, why, whylen)) < 0)
                return r;
        if (queue_over_limit(q->settings.max_jobs_per_submission, n))
                return glean_why(-EDQUOT, why, whylen,
                                 "submit refused: %zu jobs in one submission exceed MAX_JOBS_PER_SUBMISSION (%" PRId64 ")",
                                 n, queue_limit_shown(q->settings.max_jobs_per_submission));
        if (q->settings.max_jobs_per_owner != 0) {
                QCount *cnt = glean_strmap_get(q->owners, who->user);
                size_t have = (cnt ? cnt->n : 0) + in_progress(q, who->user);
                if (queue_over_limit(q->settings.max_jobs_per_owner, have + n))
                        return glean_why(-EDQUOT, why, whylen,
                                         "%s has %zu jobs in the queue; %zu more would pass MAX_JOBS_PER_OWNER (%" PRId64
                                         ")", who->user, have, n, queue_limit_shown(q->settings.max_jobs_per_owner));
        }
        if (q->settings.max_jobs_submitted != 0) {
                size_t have = q->n_jobs + in_progress(q, NULL);
                if (queue_over_limit(q->settings.max_jobs_submitted, have + n))
                        return glean_why(-EDQUOT, why, whylen,
                                         "the queue holds %zu jobs; %zu more would pass MAX_JOBS_SUBMITTED (%" PRId64 ")",
                                         have, n, queue_limit_shown(q->settings.max_jobs_submitted));
        }
        return 0;
}

/* The cluster's ad: what was submitted for every proc, and what the
 * queue says (ClusterId, Owner, User, QDate, GleanSubmitId). */
static int make_cluster(JobQueue *q, QueueSubmission *s, const ClassAd *cluster, char *why, size_t whylen) {
        _cleanup_free_ char *user = NULL;
        ClassAd *cad = NULL;
        int r = cluster ? classad_copy(cluster, &cad) : classad_new(&cad);

        if (r < 0)
                return r;
        s->hold_all = wants_hold(cluster);
        strip_managed(cad);
        if (asprintf(&user, "%s%s%s", s->user, *q->settings.uid_domain ? "@" : "", q->settings.uid_domain) < 0) {
                user = NULL;
                r = -ENOMEM;
        }
        if (r >= 0 && (r = classad_set_int(cad, "ClusterId", s->id)) >= 0 &&
            (r = classad_set_string(cad, "Owner", s->user)) >= 0 && (r = classad_set_int(cad, "QDate", (int64_t) s->now)) >= 0 &&
            (!s->submit_id || (r = classad_set_string(cad, "GleanSubmitId", s->submit_id)) >= 0) &&
            (!s->machine || (r = classad_set_string(cad, "SubmitMachine", s->machine)) >= 0) &&
            (r = classad_set_string(cad, "User", user)) >= 0 && !classad_has(cad, "JobPrio"))
                r = classad_set_int(cad, "JobPrio", 0);
        if (r < 0) {
                classad_free(cad);
                return r;
        }
        r = qcluster_from_ad(q, s->id, cad, &s->c, why, whylen);
        return r == -EBADMSG ? -EINVAL : r;
}

int queue_submission_begin(JobQueue *q, const QueueRequester *who, const char *submit_id, const ClassAd *cluster,
                           ClassAd **procs, size_t n, double now, QueueSubmission **ret, char *why, size_t whylen) {
        QueueSubmission *s;
        int r = check_begin(q, who, submit_id, n, why, whylen);

        if (r < 0) {
                glean_ad_list_free(procs, n);
                return r;
        }
        s = calloc(1, sizeof(*s));
        if (!s || !(s->user = strdup(who->user)) || (submit_id && !(s->submit_id = strdup(submit_id))) ||
            (who->machine && !(s->machine = strdup(who->machine))) || !(s->jobs = calloc(n, sizeof(*s->jobs)))) {
                if (s) {
                        free(s->user);
                        free(s->submit_id);
                        free(s->machine);
                        free(s);
                }
                glean_ad_list_free(procs, n);
                return -ENOMEM;
        }
        s->procs = procs;
        s->n = n;
        s->now = now;
        s->id = q->next_cluster;
        r = make_cluster(q, s, cluster, why, whylen);
        if (r < 0) {
                s->next = NULL;
                queue_submission_free(q, s);
                return r;
        }
        q->next_cluster = s->id + 1; /* reserved (written by the first step) */
        s->next = q->submissions;
        q->submissions = s;
        *ret = s;
        return 0;
}

/* Up to work procs made (and checked) in memory. */
static int make_procs(JobQueue *q, QueueSubmission *s, size_t work, char *why, size_t whylen) {
        for (size_t end = s->made + work < s->n ? s->made + work : s->n; s->made < end; s->made++) {
                size_t i = s->made;
                ClassAd *pad = s->procs ? s->procs[i] : NULL;
                bool hold = s->hold_all || wants_hold(pad);
                int r = pad ? 0 : classad_new(&pad);

                if (s->procs)
                        s->procs[i] = NULL;
                if (r < 0)
                        return r;
                strip_managed(pad);
                if ((r = classad_set_int(pad, "ProcId", (int64_t) i)) < 0 ||
                    (r = classad_set_int(pad, "JobStatus", hold ? JOB_HELD : JOB_IDLE)) < 0 ||
                    (r = classad_set_int(pad, "EnteredCurrentStatus", (int64_t) s->now)) < 0 ||
                    (r = classad_set_int(pad, "NumJobStarts", 0)) < 0 ||
                    (hold && ((r = classad_set_string(pad, "HoldReason", "submitted on hold")) < 0 ||
                              (r = classad_set_int(pad, "HoldReasonCode", QUEUE_HOLD_SUBMITTED_ON_HOLD)) < 0 ||
                              (r = classad_set_int(pad, "HoldReasonSubCode", 0)) < 0)) ||
                    (r = queue_fit_ad(&pad)) < 0) {
                        classad_free(pad);
                        return r;
                }
                r = queue_make_job(q, s->c, (int64_t) i, pad, &s->jobs[i], why, whylen);
                if (r < 0)
                        return r == -EBADMSG ? -EINVAL : r;
                QJob *j = s->jobs[i];
                r = check_job(&j->pub, why, whylen);
                if (r < 0)
                        return r;
                if (j->pub.submitter != s->c->submitter) {
                        if (s->tally.n_own == s->cap_own) {
                                size_t cap = s->cap_own ? 2 * s->cap_own : 16;
                                size_t *own = realloc(s->tally.own, cap * sizeof(*own));
                                if (!own)
                                        return -ENOMEM;
                                s->tally.own = own;
                                s->cap_own = cap;
                        }
                        s->tally.own[s->tally.n_own++] = i;
                }
                s->tally.counts[j->pub.status]++;
                s->tally.unlike += j->unlike;
                j->counted = true; /* in n_procs once placed (freed unplaced, it does not matter) */
        }
        if (s->made == s->n) {
                free(s->procs);
                s->procs = NULL;
        }
        return 0;
}

/* One change: next_cluster past the id (once) and up to work rows. */
static int write_rows(JobQueue *q, QueueSubmission *s, size_t work, char *why, size_t whylen) {
        size_t end = s->written + work < s->n ? s->written + work : s->n, at = s->written;
        bool batch = acct_in_batch(q->acct);
        int r = queue_change_begin(q);

        if (r < 0)
                return why_db(q, r, why, whylen);
        if (!s->reserved)
                r = qstore_set_next_cluster(q, q->next_cluster);
        for (; r >= 0 && at < end; at++)
                r = qstore_put_job(q, s->jobs[at]);
        r = queue_change_end(q, r, why, whylen);
        if (r < 0)
                return r;
        s->reserved = true;
        s->written = at;
        if (!batch) {
                s->reserved_committed = true;
                s->written_committed = at;
        }
        return 0;
}

/* The last change: the cluster's row and its submission id; the jobs
 * linked into memory (dropped again should the transaction fail:
 * queue_place_cluster). */
static int publish(JobQueue *q, QueueSubmission *s, char *why, size_t whylen) {
        QCluster *c = s->c;
        bool placed = false;
        int r = queue_change_begin(q);

        if (r < 0)
                return why_db(q, r, why, whylen);
        if (!s->reserved)
                r = qstore_set_next_cluster(q, q->next_cluster);
        if (r >= 0)
                r = queue_place_cluster(q, c, s->jobs, s->n, &s->tally);
        if (r >= 0) {
                placed = true; /* the queue's now */
                s->c = NULL;
                r = qstore_put_cluster(q, c);
        }
        if (r >= 0 && s->submit_id)
                r = qsubmit_id_record(q, s->user, s->submit_id, s->id, (int64_t) s->n, s->now);
        if (placed) {
                if (r < 0 && !q->db)
                        for (size_t i = s->n; i-- > 0;)
                                queue_drop_job(q, s->jobs[i]);
                free(s->jobs);
                s->jobs = NULL;
                s->made = 0;
        }
        r = queue_change_end(q, r, why, whylen);
        if (r >= 0)
                s->published = true;
        return r;
}

int queue_submission_step(JobQueue *q, QueueSubmission *s, size_t work, int64_t *ret_cluster, char *why,
                          size_t whylen) {
        int r;

        if (s->published)
                return glean_why(-EINVAL, why, whylen, "the submission was queued already");
        if (work == 0)
                work = SIZE_MAX;
        if (s->made < s->n) {
                r = make_procs(q, s, work, why, whylen);
                if (r < 0 || s->made < s->n)
                        return r < 0 ? r : 0;
                if (!q->db)
                        s->written = s->n;
                return 0;
        }
        if (s->written < s->n) {
                r = write_rows(q, s, work, why, whylen);
                return r < 0 ? r : 0;
        }
        r = publish(q, s, why, whylen);
        if (r < 0)
                return r;
        *ret_cluster = s->id;
        return 1;
}

int64_t queue_submission_cluster(const QueueSubmission *s) {
        return s->id;
}

size_t queue_submission_procs(const QueueSubmission *s) {
        return s->n;
}

void queue_submission_set_userdata(QueueSubmission *s, void *userdata) {
        s->userdata = userdata;
}

void *queue_submission_userdata(const QueueSubmission *s) {
        return s->userdata;
}

const char *queue_submission_user(const QueueSubmission *s) {
        return s->user;
}

void queue_submission_free(JobQueue *q, QueueSubmission *s) {
        if (!s)
                return;
        for (QueueSubmission **pp = &q->submissions; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                        *pp = s->next;
                        break;
                }
        /* Rows written of a submission never published: deleted now (else
         * at the next start). */
        if (!s->published && s->written > 0 && q->db && !q->readonly) {
                char why[256];
                int r = queue_change_begin(q);
                if (r >= 0)
                        r = qstore_delete_cluster_jobs(q, s->id);
                (void) queue_change_end(q, r, why, sizeof why);
        }
        /* Nothing of it ever written, and no later id given: its id is
         * given again (a refused submit uses none). */
        if (!s->published && s->written_committed == 0 && !s->reserved_committed && q->next_cluster == s->id + 1 &&
            !s->reserved)
                q->next_cluster = s->id;
        for (size_t i = 0; s->jobs && i < s->n; i++) /* made, and the one that failed */
                qjob_free(s->jobs[i]);
        free(s->jobs);
        free(s->tally.own);
        if (s->procs)
                glean_ad_list_free(s->procs, s->n);
        if (s->c)
                qcluster_free(s->c);
        free(s->user);
        free(s->submit_id);
        free(s->machine);
        free(s->warning);
        free(s);
}

void queue_submissions_tx_end(JobQueue *q, bool committed) {
        for (QueueSubmission *s = q->submissions; s; s = s->next) {
                if (committed) {
                        s->written_committed = s->written;
                        s->reserved_committed = s->reserved;
                } else {
                        s->written = s->written_committed;
                        s->reserved = s->reserved_committed;
                }
                /* next_cluster read back: never below an id being used */
                if (q->next_cluster <= s->id)
                        q->next_cluster = s->id + 1;
        }
}

/* ---- all at once ---- */

int queue_submit(JobQueue *q, const QueueRequester *who, const ClassAd *cluster, ClassAd *const *procs, size_t n,
                 double now, int64_t *ret_cluster, char *why, size_t whylen) {
        return queue_submit_as(q, who, NULL, cluster, procs, n, now, ret_cluster, why, whylen);
}

int queue_submit_as(JobQueue *q, const QueueRequester *who, const char *submit_id, const ClassAd *cluster,
                    ClassAd *const *procs, size_t n, double now, int64_t *ret_cluster, char *why, size_t whylen) {
        QueueSubmission *s = NULL;
        ClassAd **copies = NULL;
        int r;

        if (n > 0 && n <= QUEUE_MAX_PROCS && procs) {
                copies = calloc(n, sizeof(*copies));
                if (!copies)
                        return -ENOMEM;
                for (size_t i = 0; i < n; i++)
                        if (procs[i] && classad_copy(procs[i], &copies[i]) < 0) {
                                glean_ad_list_free(copies, n);
                                return -ENOMEM;
                        }
        }
        r = queue_submission_begin(q, who, submit_id, cluster, copies, n, now, &s, why, whylen);
        if (r < 0)
                return r;
        /* One transaction, as a change: all of it or nothing, no id used
         * by a submission that failed. */
        bool own_batch = q->db && !acct_in_batch(q->acct);
        if (own_batch && (r = queue_batch_begin(q)) < 0) {
                queue_submission_free(q, s);
                return why_db(q, r, why, whylen);
        }
        while ((r = queue_submission_step(q, s, 0, ret_cluster, why, whylen)) == 0)
                ;
        queue_submission_free(q, s);
        if (own_batch) {
                char commit_why[512] = "";
                int k = queue_batch_commit(q, commit_why, sizeof commit_why);
                if (r >= 0 && k < 0)
                        r = glean_why(k, why, whylen, "%s", commit_why);
        }
        return r < 0 ? r : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd-submit.c — Submit in parts (the server's side) and the Submit
 * messages of a cluster (the client's side).
 *
 * A Submit may carry SubmitId (the client's name for the submission,
 * queue.h): a submission whose id the queue knows for its user is
 * answered with the first answer (ClusterId, NumProcs, Repeated = true)
 * and queues nothing; its parts' procs are not even gathered. The limit
 * MAX_JOBS_PER_SUBMISSION is checked before any proc is kept: against
 * TotalProcs (the procs of every part, which the client may declare in
 * its first part and which must then be what the parts hold), and as the
 * parts come; once refused, the later parts are dropped unread.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strmap.h"
#include "jobcmd-internal.h"

#define SUBMIT_MAX_PROCS 10000000

struct JobCmdSubmit {
        char *user;    /* who sent the first part */
        char *submit_id; /* SubmitId of the first part (NULL: none) */
        bool repeated;   /* the queue knows submit_id: answered with repeat_cluster, repeat_procs */
        bool in_progress; /* the queue is taking submit_id: the answer is its */
        int64_t repeat_cluster, repeat_procs;
        int64_t max_procs; /* MAX_JOBS_PER_SUBMISSION (queue_over_limit) */
        int64_t total;     /* TotalProcs of the first part (-1: not declared) */
        ClassAd *cluster;
        char *cluster_text;
        ClassAd **procs;
        size_t n, cap, parts;
        QueueXformSubmit *xform; /* JOB_TRANSFORM_NAMES over this submit (jobcmd-transform.c) */
        int error;     /* the first error: later parts are dropped */
        char why[512];
        char warning[512]; /* a submit warning not met (the last): told in the answer */
};

void jobcmd_submit_free(JobCmdSubmit *s) {
        if (!s)
                return;
        free(s->user);
        free(s->submit_id);
        classad_free(s->cluster);
        free(s->cluster_text);
        glean_ad_list_free(s->procs, s->n);
        queue_xform_submit_free(s->xform);
        free(s);
}

__attribute__((format(printf, 3, 4))) static void fail(JobCmdSubmit *s, int r, const char *fmt, ...) {
        va_list ap;

        if (s->error)
                return;
        s->error = r;
        va_start(ap, fmt);
        vsnprintf(s->why, sizeof(s->why), fmt, ap);
        va_end(ap);
        /* What was gathered is of no use any more. */
        glean_ad_list_free(s->procs, s->n);
        s->procs = NULL;
        s->n = s->cap = 0;
}

/* Who the part's jobs say they are and the pool's submit requirements
 * (jobcmd-policy.c), as the part comes, before anything is queued. */
static int check_identity(JobCmdSubmit *s, JobQueue *q, const QueueRequester *who, ClassAd **procs, size_t n,
                          const JobCmdSink *sink) {
        char why[512] = "";
        /* What the configuration adds first (submit-knobs.c), as condor_submit
         * would have; then the job transforms (jobcmd-transform.c); then the
         * submit requirements, as condor_schedd orders them. */
        int r = jobcmd_knobs_apply_part(jobcmd_policy_knobs(sink->policy), s->cluster, s->parts == 1, procs, n);
        if (r >= 0)
                r = jobcmd_transform_part(sink->policy, &s->xform, who, queue_settings(q)->uid_domain, &s->cluster,
                                          procs, n, s->n, why, sizeof why);
        if (r >= 0)
                r = jobcmd_policy_check_part(sink->policy, who, queue_settings(q)->uid_domain, s->cluster, procs, n,
                                             s->n, why, sizeof why);
        if (r == 1)
                snprintf(s->warning, sizeof s->warning, "%s", why);
        if (r >= 0) {
                /* Files and event logs need an agent that relayed the submit. */
                why[0] = '\0';
                int t = jobcmd_transfer_check_part(who, s->cluster, procs, n, why, sizeof why);
                if (t == 1)
                        snprintf(s->warning, sizeof s->warning, "%s", why);
                if (t < 0)
                        r = t;
        }
        if (r < 0)
                fail(s, r, "%s", r == -ENOMEM ? "out of memory" : why[0] ? why : "a Requirements that does not parse");
        return r;
}

/* Adds one part to s (or records why it cannot be). */
static void take_part(JobCmdSubmit *s, JobQueue *q, const QueueRequester *who, const ClassAd *request,
                      const JobCmdSink *sink) {
        ClassAd *cluster = NULL, **procs = NULL;
        size_t n = 0;
        int r;

        if (s->error)
                return;
        if (++s->parts > JOBCMD_SUBMIT_MAX_PARTS) {
                fail(s, -E2BIG, "more than %d parts in one submit", JOBCMD_SUBMIT_MAX_PARTS);
                return;
        }
        if (!who || !who->user || strcmp(who->user, s->user) != 0) {
                fail(s, -EPERM, "a part of the submit came from another user");
                return;
        }
        if (s->repeated || s->in_progress)
                return; /* answered from the first submission: nothing to gather */
        r = glean_msg_get_ad(request, "Cluster", &cluster);
        if (r < 0) {
                fail(s, r == -ENOMEM ? r : -EINVAL, "Cluster is not an ad");
                return;
        }
        if (!s->cluster) {
                s->cluster_text = classad_unparse(cluster);
                s->cluster = cluster;
                if (!s->cluster_text) {
                        fail(s, -ENOMEM, "out of memory");
                        return;
                }
        } else {
                _cleanup_free_ char *text = classad_unparse(cluster);
                classad_free(cluster);
                if (!text || strcmp(text, s->cluster_text) != 0) {
                        fail(s, -EINVAL, "part %zu's Cluster differs from the first part's", s->parts);
                        return;
                }
        }
        r = glean_msg_get_ad_list(request, "Procs", &procs, &n);
        if (r < 0) {
                fail(s, r == -ENOMEM ? r : -EINVAL, "Procs is not a list of ads");
                return;
        }
        if (queue_over_limit(s->max_procs, s->n + n)) {
                glean_ad_list_free(procs, n);
                fail(s, -EDQUOT, "submit refused: %zu jobs in one submission exceed MAX_JOBS_PER_SUBMISSION (%" PRId64 ")",
                     s->n + n, queue_limit_shown(s->max_procs));
                return;
        }
        if (s->n + n > SUBMIT_MAX_PROCS) {
                glean_ad_list_free(procs, n);
                fail(s, -E2BIG, "more than %d procs in one cluster", SUBMIT_MAX_PROCS);
                return;
        }
        if (check_identity(s, q, who, procs, n, sink) < 0) {
                glean_ad_list_free(procs, n);
                return;
        }
        if (s->n + n > s->cap) {
                size_t cap = s->cap ? s->cap : 64;
                while (cap < s->n + n)
                        cap *= 2;
                ClassAd **p = realloc(s->procs, cap * sizeof(*p));
                if (!p) {
                        glean_ad_list_free(procs, n);
                        fail(s, -ENOMEM, "out of memory");
                        return;
                }
                s->procs = p;
                s->cap = cap;
        }
        if (n > 0)
                memcpy(s->procs + s->n, procs, n * sizeof(*procs));
        s->n += n;
        free(procs);
}

/* SubmitId: read from the first part (and looked up in the queue);
 * every later part must carry the same. */
static void take_submit_id(JobCmdSubmit *s, const JobQueue *q, const ClassAd *request, double now) {
        _cleanup_free_ char *id = NULL;
        bool first = s->parts == 0;

        if (s->error)
                return;
        if (classad_has(request, "SubmitId") &&
            (classad_eval_string(request, "SubmitId", JOBCMD_MODE, &id) < 0 || !queue_submit_id_valid(id))) {
                fail(s, -EINVAL, "SubmitId is not a string of 16 to 64 letters, digits, '-' or '_'");
                return;
        }
        if (!first) {
                if ((id == NULL) != (s->submit_id == NULL) || (id && strcmp(id, s->submit_id) != 0))
                        fail(s, -EINVAL, "part %zu's SubmitId differs from the first part's", s->parts + 1);
                return;
        }
        if (classad_has(request, "TotalProcs") &&
            (classad_eval_int(request, "TotalProcs", JOBCMD_MODE, &s->total) < 0 || s->total < 1)) {
                fail(s, -EINVAL, "TotalProcs is not a number of procs");
                return;
        }
        if (s->total > 0 && queue_over_limit(s->max_procs, (uint64_t) s->total)) {
                fail(s, -EDQUOT,
                     "submit refused: %" PRId64 " jobs in one submission exceed MAX_JOBS_PER_SUBMISSION (%" PRId64 ")",
                     s->total, queue_limit_shown(s->max_procs));
                return;
        }
        s->submit_id = TAKE_PTR(id);
        if (s->submit_id)
                s->repeated = queue_submit_id_find(q, s->user, s->submit_id, now, &s->repeat_cluster,
                                                   &s->repeat_procs) > 0;
        s->in_progress = s->submit_id && !s->repeated && queue_submission_find(q, s->user, s->submit_id);
}

/* The answer to the last part: the cluster made (or made by the first
 * submission of the same id). */
int jobcmd_submit_answer(const ClassAd *request, int64_t cluster, int64_t procs, bool repeated,
                         const JobCmdSink *sink) {
        return jobcmd_submit_answer_warned(request, cluster, procs, repeated, NULL, sink);
}

int jobcmd_submit_answer_warned(const ClassAd *request, int64_t cluster, int64_t procs, bool repeated,
                                const char *warning, const JobCmdSink *sink) {
        ClassAd *reply = NULL;
        int r = glean_msg_reply(request, true, NULL, &reply);

        if (r >= 0 && warning && *warning)
                r = classad_set_string(reply, "Warning", warning);

        if (r >= 0)
                r = classad_set_int(reply, "ClusterId", cluster);
        if (r >= 0)
                r = classad_set_int(reply, "NumProcs", procs);
        if (r >= 0 && repeated)
                r = classad_set_bool(reply, "Repeated", true);
        if (r >= 0)
                r = jobcmd_send_ad(reply, sink);
        classad_free(reply);
        return r;
}

int jobcmd_submit_refusal(const ClassAd *request, const char *why, const JobCmdSink *sink) {
        return jobcmd_reply(request, false, why, sink);
}

static int reply_cluster(const ClassAd *request, int64_t cluster, int64_t procs, bool repeated,
                         const JobCmdSink *sink) {
        return jobcmd_submit_answer(request, cluster, procs, repeated, sink);
}

/* The whole submission now (no parking), for the callers that have no
 * loop to step it in. */
static int submit_now(JobQueue *q, QueueSubmission *qs, int64_t *id, char *why, size_t whylen) {
        int r;

        while ((r = queue_submission_step(q, qs, 0, id, why, whylen)) == 0)
                ;
        queue_submission_free(q, qs);
        return r < 0 ? r : 0;
}

int jobcmd_submit_parking(JobCmdSubmit **pending, JobQueue *q, const QueueRequester *who, const ClassAd *request,
                          double now, const JobCmdSink *sink, JobCmdParked *parked) {
        JobCmdSubmit *s = *pending;
        QueueSubmission *qs = NULL;
        bool more = false;
        int64_t id = 0;
        size_t n;
        int r;

        if (!s) {
                s = calloc(1, sizeof(*s));
                if (!s || !(s->user = strdup(who && who->user ? who->user : ""))) {
                        free(s);
                        return -ENOMEM;
                }
                s->max_procs = queue_settings(q)->max_jobs_per_submission;
                s->total = -1;
        }
        if (classad_has(request, "More") && classad_eval_bool(request, "More", JOBCMD_MODE, &more) < 0)
                fail(s, -EINVAL, "More is not true or false");
        take_submit_id(s, q, request, now);
        take_part(s, q, who, request, sink);
        if (more) {
                *pending = s;
                return 0;
        }
        *pending = NULL;

        if (!s->error && s->in_progress) {
                /* Still being taken: its answer is this one's too. Done
                 * meanwhile: answered as a repeat. */
                qs = queue_submission_find(q, s->user, s->submit_id);
                if (qs && parked) {
                        *parked = (JobCmdParked) { qs, true };
                        jobcmd_submit_free(s);
                        return JOBCMD_SUBMIT_PARKED;
                }
                s->repeated = queue_submit_id_find(q, s->user, s->submit_id, now, &s->repeat_cluster,
                                                   &s->repeat_procs) > 0;
                if (!s->repeated)
                        fail(s, -EAGAIN, "submission %s is %s; send it again", s->submit_id,
                             qs ? "being queued" : "refused meanwhile");
        }
        if (!s->error && s->repeated) {
                r = reply_cluster(request, s->repeat_cluster, s->repeat_procs, true, sink);
                jobcmd_submit_free(s);
                return r < 0 ? r : 0;
        }
        if (!s->error && s->n == 0)
                fail(s, -EINVAL, "no procs to queue (Procs is empty)");
        if (!s->error && s->total >= 0 && (uint64_t) s->total != s->n)
                fail(s, -EINVAL, "TotalProcs says %" PRId64 " procs, the parts held %zu", s->total, s->n);
        n = s->n;
        if (!s->error) {
                char why[512] = "";
                /* The procs go to the queue's submission. */
                r = queue_submission_begin(q, who, s->submit_id, s->cluster, s->procs, s->n, now, &qs, why,
                                           sizeof(why));
                s->procs = NULL;
                s->n = s->cap = 0;
                if (r >= 0 && s->warning[0] && queue_submission_set_warning(qs, s->warning) < 0) {
                        queue_submission_free(q, qs);
                        r = glean_why(-ENOMEM, why, sizeof why, "out of memory");
                }
                if (r >= 0 && parked && n > JOBCMD_SUBMIT_SLICE) {
                        *parked = (JobCmdParked) { qs, false };
                        jobcmd_submit_free(s);
                        return JOBCMD_SUBMIT_PARKED;
                }
                if (r >= 0)
                        r = submit_now(q, qs, &id, why, sizeof(why));
                if (r < 0)
                        fail(s, r, "%s", why);
        }
        if (s->error) {
                r = jobcmd_reply(request, false, s->why, sink);
                jobcmd_submit_free(s);
                return r < 0 ? r : 0;
        }
        r = jobcmd_submit_answer_warned(request, id, (int64_t) n, false, s->warning, sink);
        jobcmd_submit_free(s);
        return r < 0 ? r : 1;
}

int jobcmd_submit(JobCmdSubmit **pending, JobQueue *q, const QueueRequester *who, const ClassAd *request,
                  double now, const JobCmdSink *sink) {
        return jobcmd_submit_parking(pending, q, who, request, now, sink, NULL);
}

/* ---- the client's side ---- */

/* Copies attribute name of src into dst (its expression). */
static int copy_attr(ClassAd *dst, const ClassAd *src, const char *name) {
        _cleanup_free_ char *text = classad_unparse_attr(src, name);
        CaError err = {};
        int r;

        if (!text)
                return -ENOENT;
        r = classad_set_expr_text(dst, name, text, JOBCMD_MODE, &err);
        return r == -ENOMEM ? r : r < 0 ? -EINVAL : 0;
}

/* One message: Cluster, the procs' texts from..to-1, More. */
static int make_message(const char *cluster_text, char **texts, size_t from, size_t to, bool more, int64_t rid,
                        ClassAd **ret) {
        size_t len = strlen(cluster_text) + 160;
        char *buf, *p;
        CaError err = {};
        int r;

        for (size_t i = from; i < to; i++)
                len += strlen(texts[i]) + 2;
        buf = malloc(len);
        if (!buf)
                return -ENOMEM;
        p = buf;
        p += sprintf(p, "[ Command = \"Submit\"; ");
        if (rid >= 0)
                p += sprintf(p, "RequestId = %" PRId64 "; ", rid);
        p += sprintf(p, "Cluster = %s; Procs = {", cluster_text);
        for (size_t i = from; i < to; i++)
                p += sprintf(p, "%s%s", i > from ? ", " : " ", texts[i]);
        p += sprintf(p, " }; More = %s ]", more ? "true" : "false");
        r = classad_parse(buf, (size_t) (p - buf), GLEAN_CA_MODE, ret, &err);
        free(buf);
        return r == -ENOMEM ? r : r < 0 ? -EINVAL : 0;
}

int jobcmd_submit_messages(ClassAd *const *jobs, size_t n, int64_t request_id, ClassAd ***ret, size_t *ret_n) {
        GleanStrMap *shared = NULL;
        ClassAd *cluster = NULL, **msgs = NULL;
        char **texts = NULL, *cluster_text = NULL;
        size_t n_msgs = 0, budget;
        ClassAdIter it;
        const char *name;
        int r;

        if (n == 0 || !jobs)
                return -EINVAL;
        r = glean_strmap_new(true, &shared);
        if (r < 0)
                return r;
        /* Shared: what job 0 has and every other job has alike. */
        it = classad_iter(jobs[0]);
        while (classad_iter_next(&it, &name, NULL)) {
                const CaName *cn = classad_name(name);
                bool same = cn != NULL;

                for (size_t i = 1; same && i < n; i++)
                        same = classad_attr_same(jobs[0], jobs[i], cn);
                if (same && (r = glean_strmap_put(shared, classad_name_str(cn), (void *) cn)) < 0)
                        goto out;
        }
        r = classad_new(&cluster);
        it = classad_iter(jobs[0]);
        while (r >= 0 && classad_iter_next(&it, &name, NULL))
                if (glean_strmap_get(shared, name))
                        r = copy_attr(cluster, jobs[0], name);
        if (r < 0)
                goto out;
        cluster_text = classad_unparse(cluster);
        texts = calloc(n, sizeof(*texts));
        if (!cluster_text || !texts) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < n; i++) {
                ClassAd *own = NULL;

                r = classad_new(&own);
                it = classad_iter(jobs[i]);
                while (r >= 0 && classad_iter_next(&it, &name, NULL))
                        if (!glean_strmap_get(shared, name))
                                r = copy_attr(own, jobs[i], name);
                if (r >= 0 && !(texts[i] = classad_unparse(own)))
                        r = -ENOMEM;
                classad_free(own);
                if (r < 0)
                        goto out;
        }

        /* Packed into parts under the frame's size. */
        budget = GLEAN_FRAME_MAX - 256;
        if (strlen(cluster_text) >= budget) {
                r = -E2BIG;
                goto out;
        }
        for (size_t from = 0; from < n;) {
                size_t to = from, size = strlen(cluster_text);
                ClassAd **m;

                while (to < n && size + strlen(texts[to]) + 2 < budget)
                        size += strlen(texts[to++]) + 2;
                if (to == from) {
                        r = -E2BIG;
                        goto out;
                }
                m = realloc(msgs, (n_msgs + 1) * sizeof(*m));
                if (!m) {
                        r = -ENOMEM;
                        goto out;
                }
                msgs = m;
                r = make_message(cluster_text, texts, from, to, to < n, request_id, &msgs[n_msgs]);
                if (r < 0)
                        goto out;
                n_msgs++;
                from = to;
        }
        *ret = msgs;
        *ret_n = n_msgs;
        msgs = NULL;
        n_msgs = 0;
        r = 0;
out:
        glean_ad_list_free(msgs, n_msgs);
        for (size_t i = 0; texts && i < n; i++)
                free(texts[i]);
        free(texts);
        free(cluster_text);
        classad_free(cluster);
        glean_strmap_free(shared);
        return r;
}

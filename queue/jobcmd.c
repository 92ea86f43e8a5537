/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd.c — Query, History, JobAction, UserPrio and Wait (jobcmd.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "jobcmd-internal.h"

/* What a Query or History asks. */
typedef struct Ask {
        JobCmdIds ids;
        ClassAdExpr *constraint;
        char **attrs;
        int64_t limit; /* -1: none */
} Ask;

static void ask_clear(Ask *a) {
        free(a->ids.ids);
        classad_expr_free(a->constraint);
        jobcmd_strv_free(a->attrs);
        *a = (Ask) {};
}

/* 0, or -EINVAL with why. */
static int ask_parse(const ClassAd *request, Ask *ret, char *why, size_t whylen) {
        Ask a = { .limit = -1 };
        int r;

        r = jobcmd_parse_ids(request, &a.ids, why, whylen);
        if (r >= 0)
                r = jobcmd_parse_constraint(request, &a.constraint, why, whylen);
        if (r >= 0)
                r = jobcmd_parse_attrs(request, &a.attrs, why, whylen);
        if (r >= 0 && classad_has(request, "Limit") &&
            (classad_eval_int(request, "Limit", JOBCMD_MODE, &a.limit) < 0 || a.limit < 0))
                r = glean_why(-EINVAL, why, whylen, "Limit is not a count");
        if (r < 0) {
                ask_clear(&a);
                return r;
        }
        *ret = a;
        return 0;
}

typedef struct QueryRun {
        Ask *ask;
        JobCmdListing *l;
        int64_t count, given;
} QueryRun;

/* Adds what the request asks for to run->l (counting in run->count). */
typedef int AskFill(JobQueue *q, QueryRun *run);

/* A Query or History: the request parsed (refused with a Reply when it
 * does not), its listing filled by `fill` and ended with the Count. */
static int ask_listing(JobQueue *q, const ClassAd *request, const JobCmdSink *sink, AskFill *fill) {
        char why[512] = "";
        Ask ask;
        QueryRun run = { .ask = &ask };
        int r;

        r = ask_parse(request, &ask, why, sizeof(why));
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return jobcmd_reply(request, false, why, sink);
        r = jobcmd_listing_begin(request, "Ads", sink, &run.l);
        if (r >= 0) {
                r = fill(q, &run);
                if (r >= 0)
                        r = jobcmd_listing_end(run.l, run.count);
                else if (r == -E2BIG)
                        r = jobcmd_listing_end_ok(run.l, run.count, false, JOBCMD_COSTLY);
                else
                        jobcmd_listing_free(run.l);
        }
        ask_clear(&ask);
        return r < 0 ? r : 0;
}

/* ---- Query ---- */

static int query_one(void *userdata, Job *job) {
        QueryRun *q = userdata;
        int r = jobcmd_holds(q->ask->constraint, job->ad);

        if (r <= 0)
                return r;
        q->count++;
        if (q->ask->limit >= 0 && q->given >= q->ask->limit)
                return 0;
        q->given++;
        return jobcmd_listing_add(q->l, job->ad, q->ask->attrs);
}

static int query_fill(JobQueue *q, QueryRun *run) {
        const Ask *ask = run->ask;
        int r = 0;

        if (ask->ids.n == 0)
                r = queue_foreach(q, query_one, run);
        for (size_t i = 0; r >= 0 && i < ask->ids.n; i++) {
                JobId id = ask->ids.ids[i];
                if (id.proc < 0)
                        r = queue_foreach_cluster(q, id.cluster, query_one, run);
                else {
                        Job *j = queue_find(q, id);
                        r = j ? query_one(run, j) : 0;
                }
        }
        return r;
}

int jobcmd_query(JobQueue *q, const ClassAd *request, const JobCmdSink *sink) {
        return ask_listing(q, request, sink, query_fill);
}

/* ---- History ---- */

static int history_one(void *userdata, const ClassAd *ad) {
        QueryRun *h = userdata;

        h->count++;
        h->given++;
        return jobcmd_listing_add(h->l, ad, h->ask->attrs);
}

static int history_fill(JobQueue *q, QueryRun *run) {
        const Ask *ask = run->ask;
        int r = 0;

        if (ask->limit == 0)
                return 0;
        if (ask->ids.n == 0)
                r = queue_history(q, (JobId) { 0, -1 }, ask->constraint, ask->limit < 0 ? 0 : (size_t) ask->limit,
                                  history_one, run);
        for (size_t i = 0; r >= 0 && i < ask->ids.n; i++) {
                size_t left = ask->limit < 0 ? 0 : (size_t) (ask->limit - run->given);
                if (ask->limit >= 0 && run->given >= ask->limit)
                        break;
                r = queue_history(q, ask->ids.ids[i], ask->constraint, left, history_one, run);
        }
        return r;
}

int jobcmd_history(JobQueue *q, const ClassAd *request, const JobCmdSink *sink) {
        return ask_listing(q, request, sink, history_fill);
}

/* ---- JobAction ---- */

typedef enum Action { ACT_REMOVE, ACT_HOLD, ACT_RELEASE, ACT_SETPRIO } Action;

typedef struct Target {
        JobId id;
        bool found;   /* false: an Id that names nothing */
        bool refused; /* by who may act */
} Target;

typedef struct Targets {
        Target *t;
        size_t n, cap;
        const ClassAdExpr *constraint;
        const QueueRequester *who;
        bool named; /* from Ids: others' jobs refused, not passed over */
        size_t others; /* others' jobs a constraint matched, passed over */
} Targets;

static int target_add(Targets *ts, JobId id, bool found) {
        if (ts->n == ts->cap) {
                size_t cap = ts->cap ? 2 * ts->cap : 64;
                Target *t = realloc(ts->t, cap * sizeof(*t));
                if (!t)
                        return -ENOMEM;
                ts->t = t;
                ts->cap = cap;
        }
        ts->t[ts->n++] = (Target) { .id = id, .found = found };
        return 0;
}

static int target_job(void *userdata, Job *job) {
        Targets *ts = userdata;
        int r = jobcmd_holds(ts->constraint, job->ad);

        if (r <= 0)
                return r;
        if (!ts->named && !ts->who->admin && strcmp(job->owner, ts->who->user) != 0) {
                ts->others++; /* another's job a constraint matched: passed over */
                return 0;
        }
        return target_add(ts, job->id, true);
}

typedef struct Vacate {
        JobId id;
        char *claim;
        char *reason;
} Vacate;

static int result_ad(JobCmdListing *l, JobId id, bool ok, const char *reason) {
        char idbuf[JOB_ID_STRLEN];
        ClassAd *ad = NULL;
        int r = classad_new(&ad);

        if (r >= 0)
                r = classad_set_string(ad, "Id", job_id_format(id, idbuf));
        if (r >= 0)
                r = classad_set_bool(ad, "Ok", ok);
        if (r >= 0 && reason)
                r = classad_set_string(ad, "Reason", reason);
        if (r >= 0)
                r = jobcmd_listing_add(l, ad, NULL);
        classad_free(ad);
        return r;
}

static int parse_action(const char *s, Action *ret) {
        static const char *const names[] = { "Remove", "Hold", "Release", "SetPrio" };

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                if (strcasecmp(s, names[i]) == 0) {
                        *ret = (Action) i;
                        return 0;
                }
        return -EINVAL;
}

int jobcmd_job_action(JobQueue *q, const QueueRequester *who, const ClassAd *request, double now,
                      const JobCmdSink *sink) {
        _cleanup_free_ char *action_s = NULL, *reason = NULL;
        char why[512] = "";
        Targets ts = { .who = who };
        JobCmdIds ids = {};
        ClassAdExpr *constraint = NULL;
        Vacate *vac = NULL;
        size_t n_vac = 0;
        JobCmdListing *l = NULL;
        bool own_batch = false, all_ok = true;
        int64_t prio = 0, changed = 0;
        Action act;
        int r;

        if (classad_eval_string(request, "Action", JOBCMD_MODE, &action_s) < 0)
                return jobcmd_reply(request, false, "no Action", sink);
        if (strcasecmp(action_s, "Vacate") == 0)
                return -EOPNOTSUPP;
        if (parse_action(action_s, &act) < 0) {
                snprintf(why, sizeof(why), "Action '%.64s' is not Remove, Hold, Release, SetPrio or Vacate", action_s);
                return jobcmd_reply(request, false, why, sink);
        }
        if (act == ACT_SETPRIO && classad_eval_int(request, "Prio", JOBCMD_MODE, &prio) < 0)
                return jobcmd_reply(request, false, "SetPrio needs Prio (an integer)", sink);
        if (classad_has(request, "Reason") && classad_eval_string(request, "Reason", JOBCMD_MODE, &reason) < 0)
                return jobcmd_reply(request, false, "Reason is not a string", sink);
        r = jobcmd_parse_ids(request, &ids, why, sizeof(why));
        if (r >= 0)
                r = jobcmd_parse_constraint(request, &constraint, why, sizeof(why));
        if (r == -ENOMEM)
                goto out;
        if (r < 0) {
                r = jobcmd_reply(request, false, why, sink);
                goto out;
        }
        if (ids.n == 0 && !constraint) {
                r = jobcmd_reply(request, false, "no target: give Ids or Constraint", sink);
                goto out;
        }

        /* The targets, before anything changes. */
        ts.constraint = constraint;
        ts.named = ids.n > 0;
        r = 0;
        if (ids.n == 0)
                r = queue_foreach(q, target_job, &ts);
        for (size_t i = 0; r >= 0 && i < ids.n; i++) {
                size_t before = ts.n;
                if (ids.ids[i].proc < 0)
                        r = queue_foreach_cluster(q, ids.ids[i].cluster, target_job, &ts);
                else {
                        Job *j = queue_find(q, ids.ids[i]);
                        r = j ? target_job(&ts, j) : 0;
                }
                if (r >= 0 && ts.n == before && !constraint)
                        r = target_add(&ts, ids.ids[i], false);
        }
        if (r == -E2BIG) {
                r = jobcmd_reply(request, false, JOBCMD_COSTLY, sink);
                goto out;
        }
        if (r < 0)
                goto out;

        /* Many changes: one transaction, unless the daemon's batch is open. */
        if (!queue_in_batch(q)) {
                r = queue_batch_begin(q);
                if (r < 0) {
                        snprintf(why, sizeof(why), "the queue cannot be changed now: %s", strerror(-r));
                        r = jobcmd_reply(request, false, why, sink);
                        goto out;
                }
                own_batch = true;
        }
        r = jobcmd_listing_begin(request, "Results", sink, &l);
        if (r < 0)
                goto out;
        for (size_t i = 0; i < ts.n; i++) {
                Target *t = &ts.t[i];
                char twhy[512] = "", claim[256] = "";
                bool was_running = false;
                Job *j;

                if (!t->found) {
                        char idbuf[JOB_ID_STRLEN];
                        snprintf(twhy, sizeof(twhy), t->id.proc < 0 ? "cluster %s has no job in the queue"
                                                                    : "job %s is not in the queue",
                                 job_id_format(t->id, idbuf));
                        all_ok = false;
                        r = result_ad(l, t->id, false, twhy);
                        if (r < 0)
                                goto out;
                        continue;
                }
                j = queue_find(q, t->id);
                if (j && j->claim_id)
                        snprintf(claim, sizeof(claim), "%s", j->claim_id);
                switch (act) {
                case ACT_REMOVE:
                        r = queue_job_remove(q, who, t->id, reason, now, &was_running, twhy, sizeof(twhy));
                        break;
                case ACT_HOLD:
                        r = queue_job_hold(q, who, t->id, reason, QUEUE_HOLD_USER_REQUEST, 0, now, &was_running,
                                           twhy, sizeof(twhy));
                        break;
                case ACT_RELEASE:
                        r = queue_job_release(q, who, t->id, reason, now, twhy, sizeof(twhy));
                        break;
                case ACT_SETPRIO:
                        r = queue_job_set_prio(q, who, t->id, prio, twhy, sizeof(twhy));
                        break;
                }
                if (r >= 0) {
                        changed++;
                        if (was_running && *claim) {
                                Vacate *nv = realloc(vac, (n_vac + 1) * sizeof(*nv));
                                if (nv) {
                                        vac = nv;
                                        vac[n_vac++] = (Vacate) { t->id, strdup(claim),
                                                                  reason ? strdup(reason) : NULL };
                                }
                        }
                } else
                        all_ok = false;
                r = result_ad(l, t->id, r >= 0, r >= 0 ? NULL : twhy);
                if (r < 0)
                        goto out;
        }
        if (own_batch) {
                own_batch = false;
                r = queue_batch_commit(q, why, sizeof(why));
                if (r < 0) {
                        /* Nothing changed after all: one refusal, no results. */
                        jobcmd_listing_free(l);
                        l = NULL;
                        changed = 0;
                        for (size_t i = 0; i < n_vac; i++) {
                                free(vac[i].claim);
                                free(vac[i].reason);
                        }
                        n_vac = 0;
                        r = jobcmd_reply(request, false, why, sink);
                        goto out;
                }
        }
        /* Vacated once the change is durable (or inside the daemon's batch). */
        for (size_t i = 0; i < n_vac; i++) {
                Job *j = queue_find(q, vac[i].id);
                if (j && sink->vacate && j->claim_id && strcmp(j->claim_id, vac[i].claim) == 0)
                        sink->vacate(sink->userdata, j, vac[i].claim, vac[i].reason);
        }
        {
                /* Ok of the whole: false when some target was not found or refused. */
                JobCmdListing *last = l;
                l = NULL;
                size_t bad = 0;
                for (size_t i = 0; i < ts.n; i++)
                        bad += !ts.t[i].found;
                snprintf(why, sizeof(why), "some of the %zu targets were not found or refused (%zu not found)", ts.n,
                         bad);
                if (ts.n == 0 && ts.others > 0) { /* all it matched are others' */
                        all_ok = false;
                        if (ts.others == 1)
                                snprintf(why, sizeof(why), "the 1 job that matches is not yours: only its owner, "
                                                           "root and ADMINISTRATORS may change it");
                        else
                                snprintf(why, sizeof(why),
                                         "the %zu jobs that match are not yours: only their owners, root and "
                                         "ADMINISTRATORS may change them",
                                         ts.others);
                }
                r = jobcmd_listing_end_ok(last, changed, all_ok, all_ok ? NULL : why);
        }
        if (r >= 0)
                r = changed > 0;
out:
        if (own_batch)
                (void) queue_batch_commit(q, NULL, 0);
        jobcmd_listing_free(l);
        for (size_t i = 0; i < n_vac; i++) {
                free(vac[i].claim);
                free(vac[i].reason);
        }
        free(vac);
        free(ts.t);
        free(ids.ids);
        classad_expr_free(constraint);
        return r;
}

/* ---- UserPrio ---- */

static int entry_ad(const AcctEntry *e, const Accountant *a, ClassAd **ret) {
        const AcctGroup *g = acct_groups_get(acct_groups(a), e->group);
        ClassAd *ad = NULL;
        int r = classad_new(&ad);

        if (r >= 0)
                r = classad_set_string(ad, "Name", e->name);
        if (r >= 0)
                r = classad_set_real(ad, "Priority", e->eup); /* effective, as HTCondor's Accountant ad */
        if (r >= 0)
                r = classad_set_real(ad, "RealPriority", e->rup);
        if (r >= 0)
                r = classad_set_real(ad, "EffectivePriority", e->eup);
        if (r >= 0)
                r = classad_set_real(ad, "PriorityFactor", e->factor);
        if (r >= 0)
                r = classad_set_bool(ad, "PriorityFactorSet", e->factor_set);
        if (r >= 0)
                r = classad_set_int(ad, "ResourcesUsed", e->in_use);
        if (r >= 0)
                r = classad_set_real(ad, "WeightedResourcesUsed", e->weighted_in_use);
        if (r >= 0)
                r = classad_set_real(ad, "AccumulatedUsage", e->accumulated);
        if (r >= 0)
                r = classad_set_real(ad, "WeightedAccumulatedUsage", e->weighted_accumulated);
        if (r >= 0)
                r = classad_set_int(ad, "BeginUsageTime", (int64_t) e->begin_usage);
        if (r >= 0)
                r = classad_set_int(ad, "LastUsageTime", (int64_t) e->last_usage);
        if (r >= 0)
                r = classad_set_bool(ad, "IsAccountingGroup", e->is_group);
        if (r >= 0)
                r = classad_set_string(ad, "AccountingGroup", g ? g->name : ACCT_NONE_GROUP);
        if (r < 0) {
                classad_free(ad);
                return r;
        }
        *ret = ad;
        return 0;
}

int jobcmd_user_prio(Accountant *a, const QueueRequester *who, const ClassAd *request, double now,
                     const JobCmdSink *sink) {
        _cleanup_free_ char *action = NULL, *name = NULL;
        char why[512] = "";
        double value = 0;
        int r;

        if (classad_has(request, "Action") && classad_eval_string(request, "Action", JOBCMD_MODE, &action) < 0)
                return jobcmd_reply(request, false, "Action is not a string", sink);
        if (!action || strcasecmp(action, "list") == 0) {
                _cleanup_free_ AcctEntry *entries = NULL;
                JobCmdListing *l = NULL;
                size_t n = 0;

                r = acct_list(a, &entries, &n);
                if (r >= 0)
                        r = jobcmd_listing_begin(request, "Ads", sink, &l);
                for (size_t i = 0; r >= 0 && i < n; i++) {
                        ClassAd *ad = NULL;
                        r = entry_ad(&entries[i], a, &ad);
                        if (r >= 0)
                                r = jobcmd_listing_add(l, ad, NULL);
                        classad_free(ad);
                }
                if (r >= 0)
                        return jobcmd_listing_end(l, (int64_t) n) < 0 ? -EPIPE : 0;
                jobcmd_listing_free(l);
                return r;
        }
        if (!who || !who->admin) {
                snprintf(why, sizeof(why), "only root and ADMINISTRATORS may %s", action);
                return jobcmd_reply(request, false, why, sink);
        }
        /* The account changed: a name as written, never an expression's value. */
        r = acct_literal_string(request, "Submitter", &name);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return jobcmd_reply(request, false, "Submitter must be a literal string", sink);
        if (r == 0 || !*name)
                return jobcmd_reply(request, false, "no Submitter", sink);
        if ((strcasecmp(action, "setprio") == 0 || strcasecmp(action, "setfactor") == 0) &&
            classad_eval_real(request, "Value", JOBCMD_MODE, &value) < 0)
                return jobcmd_reply(request, false, "no Value", sink);
        if (strcasecmp(action, "setprio") == 0)
                r = acct_set_priority(a, name, value, now);
        else if (strcasecmp(action, "setfactor") == 0)
                r = acct_set_factor(a, name, value, now);
        else if (strcasecmp(action, "resetusage") == 0)
                r = acct_reset_usage(a, name, now);
        else if (strcasecmp(action, "delete") == 0)
                r = acct_delete(a, name, now);
        else {
                snprintf(why, sizeof(why), "Action '%.64s' is not list, setprio, setfactor, resetusage or delete",
                         action);
                return jobcmd_reply(request, false, why, sink);
        }
        if (r < 0) {
                switch (r) {
                case -ENOENT:
                        snprintf(why, sizeof(why), "%s is not in the accounts%s", name,
                                 strchr(name, '@') ? "" : " (a submitter not seen yet is named user@domain)");
                        break;
                case -EINVAL:
                        snprintf(why, sizeof(why), "%g is not a valid %s (a factor is >= 1, a priority >= 0.5)",
                                 value, strcasecmp(action, "setprio") == 0 ? "priority" : "factor");
                        break;
                case -EBUSY:
                        snprintf(why, sizeof(why), "%s holds claims: it can be deleted once they end", name);
                        break;
                case -EPERM:
                        snprintf(why, sizeof(why), "%s is a group: groups cannot be deleted", name);
                        break;
                default:
                        snprintf(why, sizeof(why), "%s",
                                 *acct_last_error(a) ? acct_last_error(a) : strerror(-r));
                }
                return jobcmd_reply(request, false, why, sink);
        }
        r = jobcmd_reply(request, true, NULL, sink);
        return r < 0 ? r : 1;
}

/* ---- Wait ---- */

int jobcmd_wait_done(JobQueue *q, JobId id, const ClassAd *request, const JobCmdSink *sink) {
        char idbuf[JOB_ID_STRLEN], why[128];
        ClassAd *h = NULL, *reply = NULL;
        int r;

        if (queue_find(q, id))
                return 0;
        r = queue_history_find(q, id, &h);
        if (r == -ENOENT) {
                snprintf(why, sizeof(why), "job %s is not in the queue or its history", job_id_format(id, idbuf));
                r = jobcmd_reply(request, false, why, sink);
                return r < 0 ? r : 1;
        }
        if (r < 0)
                return r;
        r = glean_msg_reply(request, true, NULL, &reply);
        if (r >= 0)
                r = glean_msg_set_ad(reply, "Ad", h);
        if (r >= 0)
                r = jobcmd_send_ad(reply, sink);
        classad_free(reply);
        classad_free(h);
        return r < 0 ? r : 1;
}

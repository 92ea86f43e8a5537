/* SPDX-License-Identifier: Apache-2.0 */
/*
 * users.c — what users ask the central manager, on its unix socket (the
 * caller from SO_PEERCRED) or relayed by an agent (RelayUser, RelayUid;
 * no RelayUser: the pool itself, as root):
 *
 *   Submit, Query, History, JobAction Remove/Hold/Release/SetPrio,
 *   UserPrio   the job queue's and the accounts' (queue/jobcmd.h);
 *              rm or hold of a running job vacates its claim
 *   JobAction Vacate   the claims of the jobs named are deactivated (the
 *              jobs go back to Idle); one's own jobs, or any for admins
 *   QuerySlots the collector's ads
 *   Wait       parked until the job leaves the queue: the Reply carries its
 *              history ad; Timeout runs out: Ok false, Errno "ETIMEDOUT"
 *   Vacate, Drain, CancelDrain   (root and ADMINISTRATORS) forwarded to the
 *              agent of Machine (or of Slot's machine); its Reply comes back
 *
 * Every refusal is a Reply with Ok = false and a Reason.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "daemon.h"
#include "jobcmd.h"

static int reply(Conn *c, const ClassAd *req, bool ok, const char *reason, const char *errname, ClassAd *extra) {
        ClassAd *msg = NULL;
        int r = glean_msg_reply(req, ok, reason, &msg);
        if (r >= 0 && errname)
                r = classad_set_string(msg, "Errno", errname);
        if (r >= 0 && extra)
                r = classad_update(msg, extra);
        if (r >= 0)
                r = nego_send(c, msg);
        classad_free(msg);
        return r;
}

static int refuse(Conn *c, const ClassAd *req, const QueueRequester *who, const char *what, const char *errname,
                  const char *reason) {
        GleanLogField f[] = { { "GLEAN_USER", who->user }, { "GLEAN_COMMAND", what }, { "GLEAN_REASON", reason } };
        glean_log(LOG_INFO, NULL, f, 3, "refused %s of %s: %s", what, who->user, reason);
        return reply(c, req, false, reason, errname, NULL);
}

static char *get_string(const ClassAd *ad, const char *name) {
        char *v = NULL;
        return classad_eval_string(ad, name, GLEAN_CA_MODE, &v) >= 0 ? v : NULL;
}

/* ---- Wait ---- */

static int sink_send(void *userdata, const char *payload, size_t len) {
        return nego_send_text(userdata, payload, len);
}

static void sink_vacate(void *userdata, const Job *job, const char *claim_id, const char *reason) {
        Conn *c = userdata;
        Claim *cl = nego_claim(c->nego, claim_id);
        (void) job;
        if (cl)
                nego_claim_vacate(c->nego, cl, false, reason ? reason : "removed or held");
}

static JobCmdSink sink_of(Conn *c) {
        return (JobCmdSink){
                .send = sink_send, .vacate = sink_vacate, .userdata = c, .policy = c->nego->k.submit_policy
        };
}

/* 1 when the job left the queue (and the Reply went), 0 while it is there. */
static int wait_answer(Nego *n, Conn *c, const ClassAd *req, JobId id) {
        JobCmdSink sink = sink_of(c);
        return jobcmd_wait_done(n->queue, id, req, &sink);
}

static int on_wait(Nego *n, Conn *c, const ClassAd *req, const QueueRequester *who) {
        char *text = get_string(req, "Id");
        JobId id;
        double timeout = -1;
        if ((text ? job_id_parse(text, &id) : -EINVAL) < 0 || id.proc < 0) {
                free(text);
                return refuse(c, req, who, "Wait", "EINVAL", "Id must be a job id C.P");
        }
        free(text);
        if (classad_eval_real(req, "Timeout", GLEAN_CA_MODE, &timeout) < 0)
                timeout = -1;
        int r = wait_answer(n, c, req, id);
        if (r != 0)
                return r < 0 ? r : 0;
        /* Parked: it counts against its user's Waits. */
        char why[300];
        NetUser *u = NULL;
        if ((r = nego_net_wait_begin(n, c, who->user, &u, why, sizeof why)) == -EUSERS)
                return refuse(c, req, who, "Wait", "EAGAIN", why);
        if (r < 0)
                return r;
        Waiter *w = calloc(1, sizeof *w);
        if (!w || classad_copy(req, &w->req) < 0) {
                free(w);
                nego_net_wait_end(n, c->id, u);
                return -ENOMEM;
        }
        w->user = u;
        w->conn = c->id;
        w->job = id;
        w->deadline = timeout >= 0 ? nego_now() + timeout : 0;
        w->next = n->waiters;
        n->waiters = w;
        return 0;
}

static void waiter_free(Nego *n, Waiter *w) {
        nego_net_wait_end(n, w->conn, w->user);
        classad_free(w->req);
        free(w);
}

void nego_waiters_check(Nego *n, double now) {
        for (Waiter **pp = &n->waiters, *w; (w = *pp);) {
                Conn *c = nego_conn_by_id(n, w->conn);
                bool done = true;
                if (!c)
                        ;
                else if (wait_answer(n, c, w->req, w->job) != 0)
                        ;
                else if (w->deadline > 0 && now >= w->deadline)
                        reply(c, w->req, false, "the job is still in the queue", "ETIMEDOUT", NULL);
                else
                        done = false;
                if (!done) {
                        pp = &w->next;
                        continue;
                }
                *pp = w->next;
                waiter_free(n, w);
        }
}

void nego_waiters_free(Nego *n) {
        /* At the stop: the users' counts go with net.c's records. */
        while (n->waiters) {
                Waiter *w = n->waiters;
                n->waiters = w->next;
                classad_free(w->req);
                free(w);
        }
}

void nego_user_gone(Conn *c) {
        Nego *n = c->nego;
        for (Waiter **pp = &n->waiters, *w; c->waits > 0 && (w = *pp);) {
                if (w->conn != c->id) {
                        pp = &w->next;
                        continue;
                }
                *pp = w->next;
                waiter_free(n, w);
                c->waits--; /* c is dead: not found by its id any more */
        }
        jobcmd_submit_free(c->submit);
        c->submit = NULL;
}

/* ---- Vacate, Drain, CancelDrain: to the agent ---- */

static int on_forward(Nego *n, Conn *c, const ClassAd *req, GleanCommand cmd, const QueueRequester *who) {
        const char *what = glean_command_name(cmd);
        char why[300];
        if (!who->admin) {
                snprintf(why, sizeof why, "only root and ADMINISTRATORS may %s", what);
                return refuse(c, req, who, what, "EPERM", why);
        }
        char *machine = get_string(req, "Machine"), *slot = get_string(req, "Slot");
        int r = 0;
        if (!machine && slot) {
                SlotRec *s = nego_slot(n, slot);
                const char *at = strrchr(slot, '@');
                machine = s ? strdup(s->machine) : at ? strdup(at + 1) : NULL;
        }
        if (!machine) {
                r = refuse(c, req, who, what, "EINVAL", "name the target with Machine or Slot (slot1@host)");
                goto out;
        }
        ClassAd *fwd = NULL;
        if ((r = classad_copy(req, &fwd)) < 0)
                goto out;
        static const char *const strip[] = { "Machine", "RelayUser", "RelayUid", "RequestId" };
        for (size_t i = 0; i < sizeof strip / sizeof *strip; i++)
                classad_delete(fwd, strip[i]);
        if (cmd != GLEAN_CMD_VACATE)
                classad_delete(fwd, "Slot"); /* a drain is the machine's */
        Pending *p = NULL;
        r = nego_agent_request(n, machine, fwd, PEND_FORWARD, NULL, &p);
        classad_free(fwd);
        if (r == -ENOTCONN) {
                snprintf(why, sizeof why, "the agent of %s is not connected", machine);
                r = refuse(c, req, who, what, "ENOENT", why);
                goto out;
        }
        if (r < 0)
                goto out;
        p->user_conn = c->id;
        classad_copy(req, &p->user_req);
        GleanLogField f[] = { { "GLEAN_USER", who->user }, { "GLEAN_MACHINE", machine } };
        glean_log(LOG_NOTICE, NULL, f, 2, "%s of %s by %s", what, slot ? slot : machine, who->user);
out:
        free(machine);
        free(slot);
        return r;
}

/* ---- JobAction Vacate ---- */

typedef struct Targets {
        JobId *ids;
        size_t n, cap;
        ClassAdExpr *constraint;
} Targets;

static int ids_push(Targets *t, JobId id) {
        if (t->n == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 16;
                JobId *a = realloc(t->ids, cap * sizeof *a);
                if (!a)
                        return -ENOMEM;
                t->ids = a;
                t->cap = cap;
        }
        t->ids[t->n++] = id;
        return 0;
}

static int target_add(void *userdata, Job *job) {
        Targets *t = userdata;
        if (t->constraint) {
                CaValue v;
                bool yes = false;
                if (classad_expr_eval(t->constraint, job->ad, NULL, GLEAN_CA_MODE, &v) >= 0) {
                        yes = v.type == CA_BOOL && v.u.b;
                        ca_value_clear(&v);
                }
                if (!yes)
                        return 0;
        }
        return ids_push(t, job->id);
}

static int on_job_vacate(Nego *n, Conn *c, const ClassAd *req, const QueueRequester *who) {
        char *ids = get_string(req, "Ids"), *cons = get_string(req, "Constraint"), *reason = get_string(req, "Reason");
        bool fast = false;
        classad_eval_bool(req, "Fast", GLEAN_CA_MODE, &fast);
        Targets t = { 0 };
        ClassAd **results = NULL;
        size_t n_results = 0, changed = 0;
        bool all_ok = true;
        int r = 0;
        char why[300];
        if (!ids && !cons) {
                r = refuse(c, req, who, "JobAction", "EINVAL", "name the jobs with Ids or Constraint");
                goto out;
        }
        if (cons) {
                CaError err;
                if (classad_expr_parse(cons, strlen(cons), GLEAN_CA_MODE, &t.constraint, &err) < 0) {
                        snprintf(why, sizeof why, "Constraint: %s", err.msg);
                        r = refuse(c, req, who, "JobAction", "EINVAL", why);
                        goto out;
                }
        }
        if (ids) {
                for (char *save = NULL, *w = strtok_r(ids, " ,\t", &save); w && r >= 0;
                     w = strtok_r(NULL, " ,\t", &save)) {
                        JobId id;
                        if (job_id_parse(w, &id) < 0) {
                                snprintf(why, sizeof why, "'%s' is not a job id (C or C.P)", w);
                                r = refuse(c, req, who, "JobAction", "EINVAL", why);
                                goto out;
                        }
                        if (id.proc >= 0) {
                                Job *j = queue_find(n->queue, id);
                                /* One that is not there gets a result of its own. */
                                r = j ? target_add(&t, j) : ids_push(&t, id);
                        } else
                                r = queue_foreach_cluster(n->queue, id.cluster, target_add, &t);
                }
        } else
                r = queue_foreach(n->queue, target_add, &t);
        if (r < 0)
                goto out;
        results = calloc(t.n ? t.n : 1, sizeof *results);
        if (!results) {
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < t.n; i++) {
                char idtext[JOB_ID_STRLEN];
                job_id_format(t.ids[i], idtext);
                Job *j = queue_find(n->queue, t.ids[i]);
                Claim *cl = j && j->claim_id ? nego_claim(n, j->claim_id) : NULL;
                const char *fail = NULL;
                if (!j)
                        fail = "no such job";
                else if (!who->admin && strcmp(j->owner, who->user) != 0) {
                        snprintf(why, sizeof why, "job %s belongs to %s", idtext, j->owner);
                        fail = why;
                } else if (!cl)
                        fail = "the job is not running";
                ClassAd *res = NULL;
                if (classad_new(&res) < 0) {
                        r = -ENOMEM;
                        goto out;
                }
                results[n_results++] = res;
                classad_set_string(res, "Id", idtext);
                classad_set_bool(res, "Ok", !fail);
                if (fail) {
                        classad_set_string(res, "Reason", fail);
                        all_ok = false;
                        continue;
                }
                char because[300];
                snprintf(because, sizeof because, "vacated by %s%s%s", who->user, reason ? ": " : "",
                         reason ? reason : "");
                nego_claim_vacate(n, cl, fast, because);
                changed++;
        }
        ClassAd *extra = NULL;
        if ((r = classad_new(&extra)) >= 0 && (r = glean_msg_set_ad_list(extra, "Results", results, n_results)) >= 0 &&
            (r = classad_set_int(extra, "Count", (int64_t) changed)) >= 0)
                r = reply(c, req, all_ok, all_ok ? NULL : "some jobs were not found or refused", NULL, extra);
        classad_free(extra);
out:
        for (size_t i = 0; i < n_results; i++)
                classad_free(results[i]);
        free(results);
        free(t.ids);
        classad_expr_free(t.constraint);
        free(ids);
        free(cons);
        free(reason);
        return r;
}

/* ---- submissions taken in slices ----
 *
 * A Submit of more than JOBCMD_SUBMIT_SLICE procs is parked: a defer
 * source steps one parked submission JOBCMD_SUBMIT_SLICE procs at a time,
 * in turn, each step inside its iteration's batch, so that the loop
 * answers everyone else between steps. Who waits for it (the request and
 * its connection, by id: a connection that closed is not answered; a
 * repeat of the same SubmitId waits too) is answered when it is queued or
 * refused. One user may have NEGO_PARKED_PER_USER submissions parked. */

#define NEGO_PARKED_PER_USER 16
#define NEGO_PARKED_WAITERS 8

typedef struct Parked {
        struct Parked *next;
        QueueSubmission *s;
        size_t n;
        struct {
                uint64_t conn;
                ClassAd *req;
                bool repeat;
        } w[NEGO_PARKED_WAITERS];
} Parked;

static void parked_free(Nego *n, Parked *p) {
        for (size_t i = 0; i < p->n; i++)
                classad_free(p->w[i].req);
        queue_submission_free(n->queue, p->s);
        free(p);
}

void nego_parked_free(Nego *n) {
        while (n->parked) {
                Parked *p = n->parked;
                n->parked = p->next;
                parked_free(n, p);
        }
        n->submit_work = sd_event_source_unref(n->submit_work);
}

/* The parked submission p answered: its waiters told, p freed. */
static void parked_done(Nego *n, Parked *p, int r, int64_t cluster, const char *why) {
        size_t procs = queue_submission_procs(p->s);
        GleanLogField f[] = { { "GLEAN_USER", queue_submission_user(p->s) }, { "GLEAN_COMMAND", "Submit" } };
        if (r < 0)
                glean_log(LOG_INFO, NULL, f, 2, "refused Submit of %s (%zu procs, taken in slices): %s",
                          queue_submission_user(p->s), procs, why);
        for (size_t i = 0; i < p->n; i++) {
                Conn *c = nego_conn_by_id(n, p->w[i].conn);
                if (!c)
                        continue;
                JobCmdSink sink = sink_of(c);
                if (r < 0)
                        (void) jobcmd_submit_refusal(p->w[i].req, why, &sink);
                else
                        (void) jobcmd_submit_answer_warned(p->w[i].req, cluster, (int64_t) procs, p->w[i].repeat,
                                                           queue_submission_warning(p->s), &sink);
        }
        for (Parked **pp = &n->parked; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        break;
                }
        parked_free(n, p);
        if (r >= 0)
                nego_want_cycle(n);
        if (r >= 0 && n->fault == NEGO_FAULT_KILL_AFTER_COMMIT_SUBMIT)
                n->fault_due = true; /* main.c: SIGKILL after this batch's commit */
}

static int on_submit_work(sd_event_source *src, void *userdata) {
        Nego *n = userdata;
        Parked *p = n->parked;
        char why[512] = "";
        int64_t cluster = 0;
        (void) src;
        if (!p) {
                sd_event_source_set_enabled(n->submit_work, SD_EVENT_OFF);
                return 0;
        }
        nego_batch_queue(n);
        int r = queue_submission_step(n->queue, p->s, JOBCMD_SUBMIT_SLICE, &cluster, why, sizeof why);
        if (r != 0)
                parked_done(n, p, r, cluster, why[0] ? why : strerror(-r));
        else if (p->next) {
                /* its turn is over: to the end of the line */
                Parked **tail = &n->parked;
                n->parked = p->next;
                while (*tail)
                        tail = &(*tail)->next;
                *tail = p;
                p->next = NULL;
        }
        if (!n->parked)
                sd_event_source_set_enabled(n->submit_work, SD_EVENT_OFF);
        return 0;
}

/* req of c waits for the parked submission of x. */
static int park(Nego *n, Conn *c, const ClassAd *req, const QueueRequester *who, const JobCmdParked *x) {
        Parked *p = NULL;
        char why[300];
        size_t mine = 0;
        for (Parked *q = n->parked; q; q = q->next) {
                if (q->s == x->s)
                        p = q;
                mine += strcmp(queue_submission_user(q->s), who->user) == 0;
        }
        if (!x->repeat && mine >= NEGO_PARKED_PER_USER) {
                snprintf(why, sizeof why,
                         "%s has %zu submissions being queued, the most the central manager takes at once; "
                         "wait for their answers", who->user, mine);
                queue_submission_free(n->queue, x->s);
                return refuse(c, req, who, "Submit", "EAGAIN", why);
        }
        if (x->repeat && (!p || p->n == NEGO_PARKED_WAITERS))
                return refuse(c, req, who, "Submit", "EAGAIN",
                              "this submission is being queued and has as many waiting for it as it may; ask again");
        if (!p) {
                int r = -ENOMEM;
                /* After everything else, the post work too: each step's
                 * batch commits (and its replies leave) before the next. */
                if (!n->submit_work &&
                    ((r = sd_event_add_defer(n->event, &n->submit_work, on_submit_work, n)) < 0 ||
                     (r = sd_event_source_set_priority(n->submit_work, SD_EVENT_PRIORITY_IDLE + 10)) < 0)) {
                        n->submit_work = sd_event_source_unref(n->submit_work);
                        queue_submission_free(n->queue, x->s);
                        return r;
                }
                if (!(p = calloc(1, sizeof *p))) {
                        queue_submission_free(n->queue, x->s);
                        return -ENOMEM;
                }
                p->s = x->s;
                Parked **tail = &n->parked;
                while (*tail)
                        tail = &(*tail)->next;
                *tail = p;
                sd_event_source_set_enabled(n->submit_work, SD_EVENT_ON);
        }
        if (classad_copy(req, &p->w[p->n].req) < 0)
                return -ENOMEM;
        p->w[p->n].conn = c->id;
        p->w[p->n].repeat = x->repeat;
        p->n++;
        return 0;
}

/* ---- the queue's commands ---- */

static int on_jobcmd(Nego *n, Conn *c, const ClassAd *req, GleanCommand cmd, const QueueRequester *who) {
        JobCmdSink sink = sink_of(c);
        double now = nego_now();
        int r;
        /* Inside the iteration's batch: what acknowledges a change leaves
         * after the commit (the post work), as everything we send. A rm or
         * hold of a running job vacates its claim (nego_batch there). */
        nego_batch_queue(n);
        switch (cmd) {
        case GLEAN_CMD_SUBMIT:
                JobCmdParked parked = {};
                r = jobcmd_submit_parking(&c->submit, n->queue, who, req, now, &sink, &parked);
                if (r == JOBCMD_SUBMIT_PARKED)
                        return park(n, c, req, who, &parked);
                if (r > 0)
                        nego_want_cycle(n);
                if (r > 0 && n->fault == NEGO_FAULT_KILL_AFTER_COMMIT_SUBMIT)
                        n->fault_due = true; /* main.c: SIGKILL after this batch's commit */
                break;
        case GLEAN_CMD_QUERY:
                r = jobcmd_query(n->queue, req, &sink);
                break;
        case GLEAN_CMD_HISTORY:
                r = jobcmd_history(n->queue, req, &sink);
                break;
        case GLEAN_CMD_JOB_ACTION:
                r = jobcmd_job_action(n->queue, who, req, now, &sink);
                if (r > 0)
                        nego_want_cycle(n); /* a release */
                if (n->waiters)
                        nego_waiters_check(n, now); /* jobs removed: their Waits answered now */
                break;
        case GLEAN_CMD_USER_PRIO:
                r = jobcmd_user_prio(n->acct, who, req, now, &sink);
                break;
        default:
                r = -EOPNOTSUPP;
        }
        return r < 0 ? r : 0;
}

int nego_user_message(Conn *c, const ClassAd *msg, GleanCommand cmd, const QueueRequester *who) {
        Nego *n = c->nego;
        /* ALLOW_READ / ALLOW_WRITE / ALLOW_ADMINISTRATOR and their DENY_s. */
        bool reads = cmd == GLEAN_CMD_QUERY || cmd == GLEAN_CMD_HISTORY || cmd == GLEAN_CMD_QUERY_SLOTS ||
                     cmd == GLEAN_CMD_WAIT || cmd == GLEAN_CMD_USER_PRIO;
        QueueRequester w = *who;
        char why[700];
        if (nego_authz_user(c, who->user, reads ? GLEAN_AUTHZ_READ : GLEAN_AUTHZ_WRITE, &w.admin, why, sizeof why) <
            0)
                return refuse(c, msg, who, glean_command_name(cmd), "EACCES", why);
        who = &w;
        switch (cmd) {
        case GLEAN_CMD_QUERY_SLOTS:
                return nego_query_slots(n, c, msg);
        case GLEAN_CMD_WAIT:
                return on_wait(n, c, msg, who);
        case GLEAN_CMD_VACATE:
        case GLEAN_CMD_DRAIN:
        case GLEAN_CMD_CANCEL_DRAIN:
                return on_forward(n, c, msg, cmd, who);
        case GLEAN_CMD_JOB_ACTION: {
                char *action = get_string(msg, "Action");
                bool vacate = action && strcasecmp(action, "Vacate") == 0;
                free(action);
                if (vacate)
                        return on_job_vacate(n, c, msg, who);
                return on_jobcmd(n, c, msg, cmd, who);
        }
        case GLEAN_CMD_SUBMIT:
        case GLEAN_CMD_QUERY:
        case GLEAN_CMD_HISTORY:
        case GLEAN_CMD_USER_PRIO:
                return on_jobcmd(n, c, msg, cmd, who);
        default:
                snprintf(why, sizeof why, "the central manager does not take %s", glean_command_name(cmd));
                return refuse(c, msg, who, glean_command_name(cmd), "EOPNOTSUPP", why);
        }
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * server.c — glean-agent's unix socket: connections, the Hello handshake,
 * and the message set of common/proto.h turned into events of the slots'
 * state machines.
 *
 * Who may do what (SO_PEERCRED): root and ADMINISTRATORS everything; any
 * user may ask for the status, and claim, activate, keep alive, deactivate
 * and release claims on their own behalf (the job's Owner must be the
 * caller, and a claim is used only by the user who made it). Every refusal
 * is a Reply with Ok = false and a Reason, and a log record; nothing
 * changes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"

static void forget_conn(Agent *a, Conn *c) {
        agent_relay_forget_conn(a, c);
        for (Slot *s = a->slots; s; s = s->next) {
                if (s->claimant == c)
                        s->claimant = NULL; /* the claim lives on until its lease ends */
                if (s->pre_claimant == c)
                        s->pre_claimant = NULL;
        }
}

/* Sending never blocks the agent: a frame goes into the connection's
 * outgoing buffer, which is written as the socket takes it (EPOLLOUT). A
 * peer that lets more than OUT_MAX bytes pile up, or whose socket fails, is
 * marked dead and freed later, from the deferred work (agent_server_reap),
 * never under a caller's feet. */
#define OUT_MAX (8u * 1024 * 1024)

static void conn_fail(Conn *c, const char *why) {
        glean_log(LOG_WARNING, NULL, NULL, 0, "closing the connection of %s (pid %d): %s", c->peer.user,
                  (int) c->peer.pid, why);
        c->dead = true;
        forget_conn(c->agent, c);
        agent_request_defer(c->agent);
}

static int conn_flush(Conn *c) {
        int r = glean_usock_conn_flush(c->uc);
        if (r < 0) {
                conn_fail(c, strerror(-r));
                return -EPIPE;
        }
        return 0;
}

int agent_conn_send(Conn *c, const ClassAd *msg) {
        if (c->upstream)
                return agent_upstream_send(c->agent, msg);
        if (c->dead)
                return -EPIPE;
        char *text = classad_unparse(msg);
        if (!text)
                return -ENOMEM;
        size_t len = strlen(text);
        int r = glean_usock_conn_queue(c->uc, text, len, OUT_MAX);
        if (r == -EMSGSIZE || r == -ENOBUFS) {
                free(text);
                conn_fail(c, r == -EMSGSIZE ? "message larger than a frame" : "it does not read its messages");
                return -ENOBUFS;
        }
        if (r < 0) {
                free(text);
                return r;
        }
        free(text);
        return conn_flush(c);
}

void agent_server_reap(Agent *a) {
        for (Conn *c = a->conns, *next; c; c = next) {
                next = c->next;
                if (c->dead)
                        agent_conn_drop(c);
        }
}

void agent_conn_drop(Conn *c) {
        Agent *a = c->agent;
        agent_conns_remove(a, c);
        forget_conn(a, c);
        glean_usock_conn_free(c->uc);
        free(c);
}

void agent_notify_claimant(Slot *s, GleanCommand cmd, ClassAd *msg) {
        (void) cmd;
        if (s->claimant)
                agent_conn_send(s->claimant, msg);
        classad_free(msg);
}

void agent_publish(Agent *a, Slot *s) {
        agent_upstream_publish(a, s);
        for (Conn *c = a->conns; c; c = c->next) {
                if (!c->manager || c->dead)
                        continue;
                ClassAd *msg = NULL;
                if (glean_msg_new(GLEAN_CMD_SLOT_UPDATE, &msg) < 0)
                        return;
                glean_msg_set_ad(msg, "SlotAd", s->ad);
                agent_conn_send(c, msg);
                classad_free(msg);
        }
}

/* ---- replies ---- */

int agent_reply(Conn *c, const ClassAd *req, bool ok, const char *reason, const ClassAd *extra) {
        ClassAd *msg = NULL;
        int r = glean_msg_reply(req, ok, reason, &msg);
        if (r >= 0 && extra)
                classad_update(msg, extra);
        if (r >= 0)
                r = agent_conn_send(c, msg);
        classad_free(msg);
        return r;
}

static int reply(Conn *c, const ClassAd *req, bool ok, const char *reason, const ClassAd *extra) {
        return agent_reply(c, req, ok, reason, extra);
}

static int refuse(Conn *c, const ClassAd *req, const char *what, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int vrefuse(Conn *c, const ClassAd *req, const char *what, int code, const char *fmt, va_list ap) {
        char reason[512];
        vsnprintf(reason, sizeof reason, fmt, ap);
        GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user }, { "GLEAN_COMMAND", what } };
        glean_log(LOG_NOTICE, NULL, f, 2, "refused %s from %s (pid %d): %s", what, c->peer.user, (int) c->peer.pid,
                  reason);
        ClassAd *extra = NULL;
        const char *name = code < 0 ? strerrorname_np(-code) : NULL;
        if (name && classad_new(&extra) >= 0)
                classad_set_string(extra, "Errno", name);
        int r = reply(c, req, false, reason, extra);
        classad_free(extra);
        return r;
}

static int refuse(Conn *c, const ClassAd *req, const char *what, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vrefuse(c, req, what, 0, fmt, ap);
        va_end(ap);
        return r;
}

/* A refusal of the slot's state machine: code is agent_sm_handle()'s
 * -errno, which the reply names too (Errno = "EBUSY", ...). */
static int refuse_code(Conn *c, const ClassAd *req, const char *what, int code, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));

static int refuse_code(Conn *c, const ClassAd *req, const char *what, int code, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        int r = vrefuse(c, req, what, code, fmt, ap);
        va_end(ap);
        return r;
}

static bool is_admin(const Conn *c) {
        return glean_peer_is_admin(&c->peer, c->agent->admins);
}

static char *get_string(const ClassAd *ad, const char *name) {
        char *v = NULL;
        if (classad_eval_string(ad, name, CA_MODE_OLD, &v) < 0)
                return NULL;
        return v;
}

static bool get_bool(const ClassAd *ad, const char *name, bool def) {
        bool b;
        return classad_eval_bool(ad, name, CA_MODE_OLD, &b) >= 0 ? b : def;
}

/* The job must be the caller's own, unless the caller is an administrator:
 * its Owner a literal string (agent_job_identity_check(), done for every
 * caller) naming the caller. */
static int check_owner(Conn *c, const ClassAd *job, char *why, size_t whylen) {
        int r = agent_job_identity_check(job, why, whylen);
        if (r < 0 || is_admin(c))
                return r;
        char *owner = NULL;
        r = agent_job_literal_string(job, "Owner", &owner, why, whylen);
        if (r < 0)
                return r;
        bool ok = owner && strcmp(owner, c->peer.user) == 0;
        if (!ok)
                snprintf(why, whylen, "the job's Owner (%s) is not you (%s)", owner ? owner : "undefined",
                         c->peer.user);
        free(owner);
        return ok ? 0 : -EPERM;
}

/* The spec built for an activation runs as the caller (or as the slot
 * user): the account checked is the account used, from the one reading of
 * Owner that chose it. */
static int check_spec_owner(Conn *c, const AgentJobSpec *spec, char *why, size_t whylen) {
        if (is_admin(c))
                return 0;
        if (!spec->owner || strcmp(spec->owner, c->peer.user) != 0) {
                snprintf(why, whylen, "the job's Owner (%s) is not you (%s)", spec->owner ? spec->owner : "undefined",
                         c->peer.user);
                return -EPERM;
        }
        if (spec->as_owner && spec->uid != c->peer.uid) {
                snprintf(why, whylen, "the account %s is uid %u here, not yours (%u)", spec->user,
                         (unsigned) spec->uid, (unsigned) c->peer.uid);
                return -EPERM;
        }
        return 0;
}

/* The request's JobAd, which must be the caller's own job; NULL after a
 * refusal, *ret_r then the status of sending it. */
static ClassAd *owned_job(Conn *c, const ClassAd *req, const char *what, int *ret_r) {
        ClassAd *job = NULL;
        char why[512] = "";
        if (glean_msg_get_ad(req, "JobAd", &job) < 0) {
                *ret_r = refuse(c, req, what, "JobAd is not a ClassAd");
                return NULL;
        }
        if (check_owner(c, job, why, sizeof why) < 0) {
                classad_free(job);
                *ret_r = refuse(c, req, what, "%s", why);
                return NULL;
        }
        return job;
}

static Slot *claimed_slot(Conn *c, const ClassAd *req, const char *what, char **ret_id) {
        char *id = get_string(req, "ClaimId");
        Slot *s = id ? agent_slot_by_claim(c->agent, id) : NULL;
        if (!s) {
                refuse(c, req, what, "no such claim");
                free(id);
                return NULL;
        }
        bool pre = s->pre_claim_id[0] && strcmp(s->pre_claim_id, id) == 0;
        if (!is_admin(c) && (pre ? s->pre_claimant_uid : s->claimant_uid) != c->peer.uid) {
                refuse(c, req, what, "the claim is not yours");
                free(id);
                return NULL;
        }
        *ret_id = id;
        return s;
}

/* ---- commands ---- */

static int on_status(Conn *c, const ClassAd *req) {
        Agent *a = c->agent;
        agent_refresh_ads(a);
        char *only = get_string(req, "Slot");
        size_t n = 0;
        for (Slot *s = a->slots; s; s = s->next)
                n++;
        ClassAd **ads = calloc(n ? n : 1, sizeof *ads);
        if (!ads) {
                free(only);
                return -ENOMEM;
        }
        size_t k = 0;
        for (Slot *s = a->slots; s; s = s->next)
                if (!s->release && (!only || agent_slot_find(a, only) == s))
                        ads[k++] = s->ad;
        ClassAd *extra = NULL;
        int r = classad_new(&extra);
        if (r >= 0)
                r = glean_msg_set_ad_list(extra, "Slots", ads, k);
        if (r >= 0)
                r = reply(c, req, true, NULL, extra);
        classad_free(extra);
        free(ads);
        free(only);
        return r;
}

/* Does the job match the slot? A Matched slot advertises Requirements =
 * FALSE to keep other matches away (3.5.7.3), yet the claim of its match
 * must get it (9): for that claim the slot's Requirements are START, as
 * they would be unmatched (the state machine checks the claim id). */
static bool slot_matches(Slot *s, const ClassAd *job) {
        if (agent_sm_state(s->sm) != AGENT_STATE_MATCHED)
                return classad_match(s->ad, job, CA_MODE_OLD);
        ClassAd *copy = NULL;
        CaError cerr;
        bool ok = classad_copy(s->ad, &copy) >= 0 &&
                  classad_set_expr_text(copy, "Requirements", "START", CA_MODE_OLD, &cerr) >= 0 &&
                  classad_match(copy, job, CA_MODE_OLD);
        classad_free(copy);
        return ok;
}

static int on_request_claim(Conn *c, const ClassAd *req) {
        Agent *a = c->agent;
        const char *what = "RequestClaim";
        char *slot_name = get_string(req, "Slot");
        char *id = get_string(req, "ClaimId");
        ClassAd *job = NULL;
        char why[512] = "";
        Slot *target = NULL;
        int r = 0;

        Slot *s = slot_name ? agent_slot_find(a, slot_name) : NULL;
        if (!s || s->dynamic) {
                r = refuse(c, req, what, "no slot %s here (claim a static or partitionable slot)",
                           slot_name ? slot_name : "");
                goto out;
        }
        if (!id || strlen(id) < 16 || strlen(id) >= sizeof s->claim_id) {
                r = refuse(c, req, what, "a claim id of 16 to %zu characters is needed", sizeof s->claim_id - 1);
                goto out;
        }
        if (agent_slot_by_claim(a, id)) {
                r = refuse(c, req, what, "claim id already in use");
                goto out;
        }
        /* Preempting another user's job for user priority is the central
         * manager's decision, not a user's. */
        bool by_priority = get_bool(req, "ByPriority", false);
        if (by_priority && !is_admin(c)) {
                r = refuse(c, req, what, "only the central manager (root and ADMINISTRATORS) may preempt by priority");
                goto out;
        }
        /* A pooled agent's slots are the pool's: claimed through the
         * central manager (which charges them to their user), directly only
         * by root and ADMINISTRATORS. */
        if (a->up && !c->upstream && !is_admin(c)) {
                r = refuse(c, req, what,
                           "this machine belongs to a pool (COLLECTOR_HOST is set): its slots are claimed through the "
                           "central manager (glean submit); only root and ADMINISTRATORS may claim them directly");
                goto out;
        }
        if (!(job = owned_job(c, req, what, &r)))
                goto out;
        if (agent_sm_broken(s->sm)) {
                r = refuse(c, req, what, "%s is broken: %s", s->name, agent_sm_broken(s->sm));
                goto out;
        }
        agent_refresh_ads(a);
        if (!slot_matches(s, job)) {
                r = refuse(c, req, what, "%s and the job do not match (Requirements of one or the other)", s->name);
                goto out;
        }
        target = s;
        if (s->partitionable) {
                AgentRes want;
                if (agent_pslot_carve(a->carve, &a->machine, s->ad, job, &s->res, &want, why, sizeof why) < 0) {
                        r = refuse(c, req, what, "%s: %s", s->name, why);
                        goto out;
                }
                r = agent_slot_new_dynamic(s, &want, &target);
                if (r < 0) {
                        r = refuse(c, req, what, "%s: cannot create a dynamic slot", s->name);
                        goto out;
                }
                agent_refresh_ads(a);
        }
        /* A claim on a claimed slot is a preempting one (a better RANK, or
         * by priority one no worse): the current claimant keeps the slot,
         * and hears of its job's eviction, until the preempting claim takes
         * over (23, 24: perhaps at once). */
        bool preempting = agent_sm_claim_id(target->sm) != NULL;
        Conn *old_pre = target->pre_claimant;
        uid_t old_pre_uid = target->pre_claimant_uid;
        char old_pre_id[sizeof target->pre_claim_id];
        memcpy(old_pre_id, target->pre_claim_id, sizeof old_pre_id);
        if (preempting) {
                target->pre_claimant = c;
                target->pre_claimant_uid = c->peer.uid;
                snprintf(target->pre_claim_id, sizeof target->pre_claim_id, "%s", id);
        }
        AgentEvent ev = { .type = AGENT_EV_CLAIM, .claim_id = id, .job = job, .by_priority = by_priority };
        r = agent_sm_handle(target->sm, agent_now(), &ev, why, sizeof why);
        if (r < 0) {
                target->pre_claimant = old_pre; /* refused: nothing changes */
                target->pre_claimant_uid = old_pre_uid;
                memcpy(target->pre_claim_id, old_pre_id, sizeof old_pre_id);
                if (target != s)
                        agent_slot_destroy(target);
                r = refuse_code(c, req, what, r, "%s", why);
                goto out;
        }
        if (preempting)
                agent_slot_sync_claims(target);
        else {
                target->claimant = c;
                target->claimant_uid = c->peer.uid;
                snprintf(target->claim_id, sizeof target->claim_id, "%s", id);
        }
        GleanLogField f[] = { { "GLEAN_SLOT", target->name }, { "GLEAN_PEER_USER", c->peer.user } };
        glean_log(LOG_INFO, NULL, f, 2, "%s: %s by %s", target->name, preempting ? "preempting claim" : "claimed",
                  c->peer.user);
        /* What is left of a partitionable slot, before the Reply: a central
         * manager that hears of the claim knows the room left already (its
         * next cycle does not match jobs to the CPUs just given away). */
        if (target != s)
                agent_publish(a, s);

        ClassAd *extra = NULL;
        r = classad_new(&extra);
        if (r >= 0) {
                /* The lease the state machine keeps (bounded by
                 * MAX_CLAIM_LEASE_DURATION), not a second reading of the job's. */
                int64_t lease = 0, asked = 0;
                agent_sm_claim_lease(target->sm, id, &lease, &asked);
                if (asked != lease) {
                        char note[200];
                        snprintf(note, sizeof note,
                                 "the lease of %lld s asked for is more than MAX_CLAIM_LEASE_DURATION: %lld s",
                                 (long long) asked, (long long) lease);
                        classad_set_string(extra, "LeaseNote", note);
                        glean_log(LOG_NOTICE, NULL, f, 2, "%s: %s", target->name, note);
                }
                char wire[AGENT_WIRE_NAME_MAX];
                classad_set_string(extra, "Slot", agent_slot_wire_name(target, wire, sizeof wire));
                classad_set_string(extra, "ClaimId", id);
                /* Claimed, or still ending a backfill command (Claimed once it is gone). */
                classad_set_string(extra, "State", agent_state_name(agent_sm_state(target->sm)));
                classad_set_string(extra, "Activity", agent_activity_name(agent_sm_activity(target->sm)));
                classad_set_int(extra, "LeaseDuration", lease);
                r = reply(c, req, true, NULL, extra);
        }
        classad_free(extra);
        agent_schedule(a);
out:
        classad_free(job);
        free(slot_name);
        free(id);
        return r;
}

static int on_activate(Conn *c, const ClassAd *req) {
        Agent *a = c->agent;
        const char *what = "ActivateClaim";
        char *id = NULL;
        Slot *s = claimed_slot(c, req, what, &id);
        if (!s)
                return 0;
        ClassAd *job = NULL;
        char why[512] = "";
        int r;
        if (!(job = owned_job(c, req, what, &r)))
                goto out;
        if (s->spec || s->job) {
                r = refuse(c, req, what, "%s already runs a job", s->name);
                goto out;
        }
        r = agent_jobspec_from_ad(job, &a->runas, a->execute, s->name, &s->spec, why, sizeof why);
        if (r < 0) {
                s->spec = NULL;
                r = refuse(c, req, what, "the job cannot run: %s", why);
                goto out;
        }
        if (check_spec_owner(c, s->spec, why, sizeof why) < 0) {
                agent_jobspec_free(s->spec);
                s->spec = NULL;
                r = refuse(c, req, what, "%s", why);
                goto out;
        }
        /* Transfer: the job's files travel (xrun.c); from the central
         * manager, or root and ADMINISTRATORS (who could run anything). */
        if (classad_has(req, "Transfer") && !c->upstream && !is_admin(c)) {
                agent_jobspec_free(s->spec);
                s->spec = NULL;
                r = refuse(c, req, what, "only the central manager names where a job's files are (Transfer)");
                goto out;
        }
        if ((r = agent_xrun_prepare(s, req, job, why, sizeof why)) < 0) {
                agent_jobspec_free(s->spec);
                s->spec = NULL;
                r = refuse(c, req, what, "%s", why);
                goto out;
        }
        if (a->cgroot) {
                s->spec->cgroup = agent_slot_cgroup_leaf(s, "job");
                if (!s->spec->cgroup) {
                        agent_xrun_free(s);
                        agent_jobspec_free(s->spec);
                        s->spec = NULL;
                        r = refuse(c, req, what, "out of memory");
                        goto out;
                }
        }
        Conn *before = s->claimant;
        s->claimant = c; /* the activating connection hears of the job's end */
        AgentEvent ev = { .type = AGENT_EV_ACTIVATE, .claim_id = id, .job = job };
        r = agent_sm_handle(s->sm, agent_now(), &ev, why, sizeof why);
        if (r < 0) {
                s->claimant = before; /* refused: nothing changes */
                agent_xrun_free(s);
                agent_jobspec_free(s->spec);
                s->spec = NULL;
                r = refuse_code(c, req, what, r, "%s", why);
                goto out;
        }
        if (!s->job && !agent_xrun_busy(s)) {
                agent_xrun_free(s);
                /* The state machine started it, the executor could not. */
                char err[300];
                snprintf(err, sizeof err, "%s", s->start_error);
                /* One that will fail again holds the job (HoldReasonCode). */
                ClassAd *hold = agent_slot_start_hold(s);
                AgentEvent exit_ev = { .type = AGENT_EV_JOB_EXIT };
                agent_jobspec_free(s->spec);
                s->spec = NULL;
                agent_sm_handle(s->sm, agent_now(), &exit_ev, NULL, 0);
                if (hold) {
                        GleanLogField f[] = { { "GLEAN_SLOT", s->name }, { "GLEAN_COMMAND", what } };
                        glean_log(LOG_NOTICE, NULL, f, 2, "%s: cannot start the job: %s; the job is to be held",
                                  s->name, err);
                        char reason[400];
                        snprintf(reason, sizeof reason, "cannot start the job: %.300s", err);
                        r = reply(c, req, false, reason, hold);
                        classad_free(hold);
                } else
                        r = refuse(c, req, what, "cannot start the job: %s", err);
                goto out;
        }
        ClassAd *extra = NULL;
        r = classad_new(&extra);
        if (r >= 0) {
                char wire[AGENT_WIRE_NAME_MAX];
                classad_set_string(extra, "Slot", agent_slot_wire_name(s, wire, sizeof wire));
                if (s->job)
                        classad_set_int(extra, "JobPid", agent_job_pid(s->job));
                else
                        classad_set_bool(extra, "TransferringInput", true); /* it starts once its input is there */
                classad_set_string(extra, "RunAs", s->spec->user);
                r = reply(c, req, true, NULL, extra);
        }
        classad_free(extra);
        agent_schedule(a);
out:
        classad_free(job);
        free(id);
        return r;
}

static int on_claim_event(Conn *c, const ClassAd *req, AgentEventType type, const char *what) {
        char *id = NULL;
        Slot *s = claimed_slot(c, req, what, &id);
        if (!s)
                return 0;
        AgentEvent ev = { .type = type, .claim_id = id, .fast = !get_bool(req, "Graceful", true) };
        char why[512] = "";
        const char *exit_reason = s->exit_reason;
        if (type == AGENT_EV_DEACTIVATE && s->job && !s->exit_reason)
                s->exit_reason = "deactivated";
        int r = agent_sm_handle(s->sm, agent_now(), &ev, why, sizeof why);
        agent_slot_sync_claims(s); /* a released preempting claim is gone */
        if (r < 0) {
                s->exit_reason = exit_reason; /* refused: nothing changes */
                r = refuse_code(c, req, what, r, "%s", why);
        } else
                r = reply(c, req, true, NULL, NULL);
        free(id);
        agent_schedule(c->agent);
        return r;
}

static int on_admin(Conn *c, const ClassAd *req, GleanCommand cmd) {
        Agent *a = c->agent;
        const char *what = glean_command_name(cmd);
        if (!is_admin(c))
                return refuse(c, req, what, "only root and ADMINISTRATORS may %s", what);
        char *only = get_string(req, "Slot");
        AgentEvent ev = { 0 };
        const char *reason = "vacated";
        switch (cmd) {
        case GLEAN_CMD_VACATE:
                ev.type = AGENT_EV_VACATE;
                ev.fast = get_bool(req, "Fast", false);
                break;
        case GLEAN_CMD_DRAIN: {
                ev.type = AGENT_EV_DRAIN;
                char *how = get_string(req, "How");
                if (!how || strcmp(how, "graceful") == 0)
                        ev.drain = AGENT_DRAIN_GRACEFUL;
                else if (strcmp(how, "quick") == 0)
                        ev.drain = AGENT_DRAIN_QUICK;
                else if (strcmp(how, "fast") == 0)
                        ev.drain = AGENT_DRAIN_FAST;
                else {
                        free(how);
                        free(only);
                        return refuse(c, req, what, "How must be graceful, quick or fast");
                }
                free(how);
                if (a->draining) {
                        free(only);
                        return refuse(c, req, what, "the machine is already draining");
                }
                a->draining = true;
                a->drain_last = agent_now();
                reason = "draining";
                break;
        }
        case GLEAN_CMD_CANCEL_DRAIN:
                if (!a->draining) {
                        free(only);
                        return refuse(c, req, what, "the machine is not draining");
                }
                ev.type = AGENT_EV_CANCEL_DRAIN;
                a->draining = false;
                break;
        case GLEAN_CMD_SHUTDOWN:
                ev.type = AGENT_EV_SHUTDOWN;
                ev.shutdown = get_bool(req, "Fast", false)       ? AGENT_SHUTDOWN_FAST
                              : get_bool(req, "Peaceful", false) ? AGENT_SHUTDOWN_PEACEFUL
                                                                 : AGENT_SHUTDOWN_GRACEFUL;
                a->shutting_down = true;
                a->shutdown_how = ev.shutdown;
                reason = "agent shutting down";
                break;
        default:
                free(only);
                return refuse(c, req, what, "not an administrative command");
        }
        unsigned count = 0;
        for (Slot *s = a->slots; s; s = s->next) {
                if (s->release || (only && cmd == GLEAN_CMD_VACATE && agent_slot_find(a, only) != s))
                        continue;
                if (s->job && !s->exit_reason)
                        s->exit_reason = reason;
                agent_sm_handle(s->sm, agent_now(), &ev, NULL, 0);
                count++;
        }
        free(only);
        GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user }, { "GLEAN_COMMAND", what } };
        glean_log(LOG_NOTICE, NULL, f, 2, "%s by %s: %u slots", what, c->peer.user, count);
        agent_schedule(a);
        agent_request_defer(a);
        return reply(c, req, true, NULL, NULL);
}

int agent_dispatch(Conn *c, const ClassAd *req, GleanCommand cmd) {
        if (!c->upstream && agent_relay_wanted(c->agent, req, cmd))
                return agent_relay(c, req, cmd);
        switch (cmd) {
        case GLEAN_CMD_STATUS:
                return on_status(c, req);
        case GLEAN_CMD_REQUEST_CLAIM:
                return on_request_claim(c, req);
        case GLEAN_CMD_ACTIVATE_CLAIM:
                return on_activate(c, req);
        case GLEAN_CMD_KEEP_ALIVE:
                return on_claim_event(c, req, AGENT_EV_KEEP_ALIVE, "KeepAlive");
        case GLEAN_CMD_DEACTIVATE:
                return on_claim_event(c, req, AGENT_EV_DEACTIVATE, "Deactivate");
        case GLEAN_CMD_RELEASE:
                return on_claim_event(c, req, AGENT_EV_RELEASE, "Release");
        case GLEAN_CMD_MATCH: {
                if (!is_admin(c))
                        return refuse(c, req, "Match", "only the central manager (root) may announce matches");
                char *name = get_string(req, "Slot"), *id = get_string(req, "ClaimId");
                Slot *s = name ? agent_slot_find(c->agent, name) : NULL;
                char why[256] = "";
                int r;
                AgentEvent ev = { .type = AGENT_EV_MATCH, .claim_id = id };
                if (!s)
                        r = refuse(c, req, "Match", "no slot %s", name ? name : "");
                else if ((r = agent_sm_handle(s->sm, agent_now(), &ev, why, sizeof why)) < 0)
                        r = refuse_code(c, req, "Match", r, "%s", why);
                else
                        r = reply(c, req, true, NULL, NULL);
                free(name);
                free(id);
                agent_schedule(c->agent);
                return r;
        }
        case GLEAN_CMD_USER_LOG_EVENT:
                return agent_userlog_event(c, req); /* userlog.c: from the upstream connection only */
        case GLEAN_CMD_TRANSFER_GRANT:
        case GLEAN_CMD_TRANSFER_REVOKE: {
                /* The central manager's, on its connection only: a grant
                 * opens a job's files to whoever holds its key. */
                const char *what = glean_command_name(cmd);
                if (!c->upstream)
                        return refuse(c, req, what, "grants come from the central manager's connection only");
                char why[512] = "";
                int r = cmd == GLEAN_CMD_TRANSFER_GRANT ? agent_transfer_grant(c->agent, req, why, sizeof why)
                                                         : agent_transfer_revoke(c->agent, req, why, sizeof why);
                if (!classad_has(req, "RequestId"))
                        return 0;
                return r < 0 ? reply(c, req, false, why, NULL) : reply(c, req, true, NULL, NULL);
        }
        case GLEAN_CMD_SHUTDOWN:
                if (c->upstream)
                        return refuse(c, req, "Shutdown", "the agent is shut down on its own machine only");
                return on_admin(c, req, cmd);
        case GLEAN_CMD_VACATE:
        case GLEAN_CMD_DRAIN:
        case GLEAN_CMD_CANCEL_DRAIN:
                return on_admin(c, req, cmd);
        default:
                return refuse(c, req, glean_command_name(cmd), "the agent does not take %s",
                              glean_command_name(cmd));
        }
}

/* One frame from a connection. Returns < 0 to drop the connection. */
static int on_frame(Conn *c, const char *payload, size_t len) {
        ClassAd *req = NULL;
        GleanCommand cmd;
        char why[512];
        int r = glean_msg_parse(payload, len, &req, &cmd, why, sizeof why);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user } };
                glean_log(LOG_NOTICE, NULL, f, 1, "bad message from %s (pid %d): %s", c->peer.user, (int) c->peer.pid,
                          why);
                ClassAd *msg = NULL;
                if (glean_msg_reply_invalid(payload, len, why, &msg) >= 0)
                        agent_conn_send(c, msg);
                classad_free(msg);
                return c->hello ? 0 : -EBADMSG;
        }
        if (!c->hello) {
                if (cmd != GLEAN_CMD_HELLO || glean_hello_check(req, why, sizeof why) < 0) {
                        if (cmd != GLEAN_CMD_HELLO)
                                snprintf(why, sizeof why, "Hello first, please");
                        reply(c, req, false, why, NULL);
                        classad_free(req);
                        return -EPROTO;
                }
                char *peer = get_string(req, "Peer");
                c->manager = peer && strcmp(peer, "glean-negotiator") == 0 && is_admin(c);
                free(peer);
                ClassAd *hello = NULL;
                r = glean_hello_new("glean-agent", &hello);
                if (r >= 0)
                        r = agent_conn_send(c, hello);
                classad_free(hello);
                classad_free(req);
                c->hello = true;
                agent_conn_touch(c); /* the idle timeout from now on */
                if (r >= 0 && c->manager)
                        for (Slot *s = c->agent->slots; s; s = s->next)
                                agent_publish(c->agent, s);
                return r;
        }
        r = agent_dispatch(c, req, cmd);
        classad_free(req);
        return r == -EPIPE || r == -ECONNRESET || r == -ETIMEDOUT ? r : 0;
}

/* ---- the socket's callbacks (common/usock.h) ---- */

/* After a frame: a connection that failed, or whose handling asked for
 * its end, goes now. */
static int on_conn_frame(GleanUsockConn *uc, const char *payload, size_t len) {
        Conn *c = glean_usock_conn_data(uc);
        agent_conn_touch(c);
        int r = on_frame(c, payload, len);
        if (r < 0 || c->dead) {
                agent_conn_drop(c);
                return -1;
        }
        return 0;
}

static void on_conn_gone(GleanUsockConn *uc, int err) {
        Conn *c = glean_usock_conn_data(uc);
        if (err != -EPIPE) {
                GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user } };
                glean_log(LOG_NOTICE, NULL, f, 1, "dropping the connection of %s (pid %d): %s", c->peer.user,
                          (int) c->peer.pid, strerror(-err));
        }
        agent_conn_drop(c);
}

static int on_conn_writable(GleanUsockConn *uc) {
        Conn *c = glean_usock_conn_data(uc);
        conn_flush(c);
        if (c->dead) {
                agent_conn_drop(c);
                return -1;
        }
        return 0;
}

static int on_admit(void *userdata, const GleanPeer *peer, char *why, size_t whylen) {
        Agent *a = userdata;
        return agent_conns_admit(a, peer, glean_peer_is_admin(peer, a->admins), why, whylen);
}

/* A connection the limits refuse is told why (a Reply instead of the
 * Hello it waits for), then closed; recorded at most once a second. */
static void on_refused(void *userdata, const GleanPeer *peer, const char *why) {
        (void) userdata;
        static int64_t last;
        static unsigned unlogged;
        if (!peer)
                return; /* its credentials unknown: closed without a word */
        int64_t now = agent_now();
        if (now != last) {
                glean_log(LOG_WARNING, NULL, NULL, 0, "refusing a connection of %s (pid %d): %s%s", peer->user,
                          (int) peer->pid, why, unlogged ? " (and others not logged)" : "");
                last = now;
                unlogged = 0;
        } else
                unlogged++;
}

/* At the descriptor limit the listening socket stays readable: it is not
 * watched for a while, or the loop spins. */
static void on_exhausted(void *userdata, int err) {
        agent_conns_accept_pause(userdata, err);
}

static int on_open(void *userdata, GleanUsockConn *uc) {
        Agent *a = userdata;
        Conn *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->uc = uc;
        c->peer = *glean_usock_conn_peer(uc);
        c->agent = a;
        glean_usock_conn_set_data(uc, c);
        agent_conns_add(a, c);
        agent_conn_touch(c);
        return 0;
}

static const GleanUsockOps server_ops = {
        .admit = on_admit,
        .refused = on_refused,
        .exhausted = on_exhausted,
        .open = on_open,
        .frame = on_conn_frame,
        .gone = on_conn_gone,
        .writable = on_conn_writable,
};

int agent_server_start(Agent *a) {
        int r = glean_usock_new(a->event, a->socket_path, 0666, &server_ops, a, &a->server);
        if (r < 0)
                return r;
        /* Its socket is new and empty: the frame goes at once. */
        glean_usock_set_refuse_timeout(a->server, 100);
        return 0;
}

void agent_server_stop(Agent *a) {
        /* What is still queued (the last replies and job exits) gets a moment to go out. */
        for (Conn *c = a->conns; c; c = c->next)
                for (int i = 0; i < 50 && glean_usock_conn_queued(c->uc) && !c->dead; i++)
                        if (glean_usock_fd_writable(glean_usock_conn_fd(c->uc), 10))
                                conn_flush(c);
        while (a->conns)
                agent_conn_drop(a->conns);
        a->server = glean_usock_free(a->server);
}

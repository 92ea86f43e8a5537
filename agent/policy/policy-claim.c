/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy-claim.c — the claims of a slot's state machine: the claim
 * attributes of the slot ad, the actions asked of the caller, claims made
 * and dropped, and the arithmetic of retirement, vacating and the claim's
 * worklife (seed 002, 3.5.8: MAXJOBRETIREMENTTIME, MachineMaxVacateTime,
 * CLAIM_WORKLIFE; 3.5.5.1: the lease).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

/* A seconds value, clamped to [0, INT_MAX] (HTCondor's are ints). */
static int64_t clamp_seconds(double v) {
        if (!(v > 0))
                return 0;
        return v >= (double) INT_MAX ? INT_MAX : (int64_t) v;
}

/* ---- the ad's state attributes ---- */

void pol_publish(AgentSlotSM *sm) {
        ClassAd *ad = sm->ad;
        classad_set_string(ad, "State", agent_state_name(sm->state));
        classad_set_string(ad, "Activity", agent_activity_name(sm->act));
        classad_set_int(ad, "EnteredCurrentState", sm->entered_state);
        classad_set_int(ad, "EnteredCurrentActivity", sm->entered_act);
        /* 3.5.7.3, 3.5.7.5: Matched and Preempting say Requirements are FALSE. */
        bool unavailable = sm->state == AGENT_STATE_MATCHED || sm->state == AGENT_STATE_PREEMPTING ||
                           sm->state == AGENT_STATE_DRAINED || sm->draining || sm->shutting_down || sm->broken;
        if (unavailable)
                classad_set_bool(ad, "Requirements", false);
        else {
                CaError cerr;
                classad_set_expr_text(ad, "Requirements", "START", CA_MODE_OLD, &cerr);
        }

        Claim *c = sm->cur;
        bool claimed = c && (sm->state == AGENT_STATE_CLAIMED || sm->state == AGENT_STATE_PREEMPTING);
        if (claimed && c->active)
                classad_set_int(ad, "JobStart", c->job_start);
        else
                classad_delete(ad, "JobStart");
        static const char *const claim_attrs[] = { "RemoteUser", "RemoteOwner", "JobId", "GlobalJobId",
                                                   "CurrentRank", "RemoteAccountingGroup", "AccountingGroup" };
        for (size_t i = 0; i < sizeof claim_attrs / sizeof *claim_attrs; i++)
                classad_delete(ad, claim_attrs[i]);
        if (!claimed)
                return;
        char *owner = NULL, *user = NULL, *gid = NULL, *group = NULL;
        if (c->job) {
                classad_eval_string(c->job, "Owner", CA_MODE_OLD, &owner);
                classad_eval_string(c->job, "User", CA_MODE_OLD, &user);
                classad_eval_string(c->job, "GlobalJobId", CA_MODE_OLD, &gid);
                classad_eval_string(c->job, "AcctGroup", CA_MODE_OLD, &group);
        }
        if (owner)
                classad_set_string(ad, "RemoteOwner", owner);
        if (user || owner)
                classad_set_string(ad, "RemoteUser", user ? user : owner);
        if (gid)
                classad_set_string(ad, "GlobalJobId", gid);
        if (group)
                classad_set_string(ad, "RemoteAccountingGroup", group);
        /* The submitter the claim is charged to when it is not RemoteUser:
         * a job of an accounting group ("group_a.bob") is "group_a.bob@"
         * its User's domain, which the negotiator reads before RemoteUser
         * to weigh a preemption by priority (as HTCondor's startd and
         * negotiator do). */
        char *acct = NULL;
        if (c->job && classad_eval_string(c->job, "AccountingGroup", CA_MODE_OLD, &acct) >= 0 && acct && *acct) {
                const char *at = user ? strchr(user, '@') : NULL;
                char *name = NULL;
                if (strchr(acct, '@'))
                        classad_set_string(ad, "AccountingGroup", acct);
                else if (asprintf(&name, "%s%s", acct, at ? at : "") >= 0) {
                        classad_set_string(ad, "AccountingGroup", name);
                        free(name);
                }
        }
        free(acct);
        if (c->job_id[0])
                classad_set_string(ad, "JobId", c->job_id);
        classad_set_real(ad, "CurrentRank", c->rank);
        free(owner);
        free(user);
        free(gid);
        free(group);
}

void pol_action(AgentSlotSM *sm, AgentActionType type, const Claim *c, const char *reason) {
        if (!sm->hooks.action)
                return;
        AgentAction a = {
                .type = type,
                .claim_id = c ? c->id : NULL,
                .job = c ? c->job : NULL,
                .reason = reason,
        };
        sm->hooks.action(sm->userdata, &a);
}

/* ---- claims ---- */

void pol_claim_free(Claim *c) {
        if (!c)
                return;
        free(c->id);
        classad_free(c->job);
        free(c);
}

void pol_claim_set_job_id(Claim *c) {
        int64_t cluster = 0, proc = 0;
        c->job_id[0] = 0;
        if (c->job && classad_eval_int(c->job, "ClusterId", CA_MODE_OLD, &cluster) >= 0 &&
            classad_eval_int(c->job, "ProcId", CA_MODE_OLD, &proc) >= 0)
                snprintf(c->job_id, sizeof c->job_id, "%lld.%lld", (long long) cluster, (long long) proc);
}

bool pol_job_is_vanilla(const ClassAd *job) {
        int64_t u = 5;
        if (job && classad_eval_int(job, "JobUniverse", CA_MODE_OLD, &u) < 0)
                u = 5;
        return u == 5;
}

void pol_claim_set_lease(const AgentSlotSM *sm, Claim *c, const ClassAd *job) {
        /* 3.5.5.1: JobLeaseDuration; 0 or undefined: MAX_CLAIM_ALIVES_MISSED x
         * ALIVE_INTERVAL. Evaluated once per claim or activation: the lease
         * the claimant hears of is the one kept. */
        int64_t lease = 0;
        if (job && classad_eval_int(job, "JobLeaseDuration", CA_MODE_OLD, &lease) >= 0 && lease > 0)
                lease = lease > INT_MAX ? INT_MAX : lease;
        else {
                lease = sm->knobs.max_claim_alives_missed * sm->knobs.alive_interval;
                lease = lease > 0 ? lease : 0;
        }
        c->lease_asked = lease;
        /* A claim made on the agent's socket keeps its slot for as long as
         * its lease: bounded, so that a claimant who asked for 10^9 s and
         * went away does not hold it for ever. */
        if (sm->knobs.max_claim_lease > 0 && (lease == 0 || lease > sm->knobs.max_claim_lease))
                lease = sm->knobs.max_claim_lease;
        c->lease = lease;
}

int64_t pol_lease_end(const Claim *c) {
        /* HTCondor resets a timer of the lease at each keep-alive and fires
         * it when its time has come (<= now): T + L, not a second later. */
        return c->lease > 0 ? c->last_alive + c->lease : INT64_MAX;
}

Claim *pol_claim_new(AgentSlotSM *sm, const char *id, const ClassAd *job) {
        Claim *c = calloc(1, sizeof *c);
        if (!c)
                return NULL;
        c->id = strdup(id ? id : "");
        if (job && classad_copy(job, &c->job) < 0)
                c->job = NULL;
        if (!c->id || (job && !c->job)) {
                pol_claim_free(c);
                return NULL;
        }
        double rank = 0;
        if (job && pol_eval_number(sm->ad, "RANK", job, &rank))
                c->rank = rank;
        c->begun = sm->now;
        pol_claim_set_lease(sm, c, job);
        c->last_alive = sm->now;
        c->vanilla = pol_job_is_vanilla(job);
        pol_claim_set_job_id(c);
        return c;
}

void pol_drop_pre(AgentSlotSM *sm, const char *reason) {
        Claim *c = sm->pre;
        if (!c)
                return;
        sm->pre = NULL;
        sm->unretire_why = "the preempting claim went away";
        pol_action(sm, AGENT_DO_CLAIM_ENDED, c, reason);
        pol_claim_free(c);
}

void pol_drop_pending(AgentSlotSM *sm, const char *reason) {
        Claim *c = sm->pending;
        if (!c)
                return;
        sm->pending = NULL;
        pol_action(sm, AGENT_DO_CLAIM_ENDED, c, reason);
        pol_claim_free(c);
}

/* ---- retirement and vacating (3.5.8: MAXJOBRETIREMENTTIME, MachineMaxVacateTime) ---- */

/* How long the job has run, suspension not counted. */
static int64_t job_age(const AgentSlotSM *sm, const Claim *c) {
        int64_t age = sm->now - c->job_start - c->suspended_total;
        if (c->suspended_since)
                age -= sm->now - c->suspended_since;
        return age < 0 ? 0 : age;
}

int64_t pol_retirement_remaining(const AgentSlotSM *sm) {
        const Claim *c = sm->cur;
        if (!c || !c->active)
                return 0;
        double v = 0;
        int64_t mjrt = pol_eval_number(sm->ad, "MaxJobRetirementTime", c->job, &v) ? clamp_seconds(v) : 0;
        /* A peaceful shutdown makes the machine's offer infinite (3.5.7.4). */
        if (sm->shutting_down && sm->shutdown_how == AGENT_SHUTDOWN_PEACEFUL)
                mjrt = INT_MAX;
        /* The job's own value can only shorten it (3.5.8). */
        if (c->job && classad_has(c->job, "MaxJobRetirementTime") &&
            pol_eval_number(c->job, "MaxJobRetirementTime", sm->ad, &v) && clamp_seconds(v) < mjrt)
                mjrt = clamp_seconds(v);
        /* A quick drain and a fast shutdown grant none. */
        if ((sm->draining && sm->drain_how != AGENT_DRAIN_GRACEFUL) ||
            (sm->shutting_down && sm->shutdown_how == AGENT_SHUTDOWN_FAST))
                mjrt = 0;
        int64_t rem = mjrt - job_age(sm, c);
        return rem < 0 ? 0 : rem;
}

/* MachineMaxVacateTime, or the job's JobMaxVacateTime when shorter, or
 * longer when the job has that much retirement time left (3.5.8). */
int64_t pol_max_vacate_time(const AgentSlotSM *sm) {
        const Claim *c = sm->cur;
        if (!c || !c->active)
                return 0;
        double v = 0;
        int64_t mvt = pol_eval_number(sm->ad, "MachineMaxVacateTime", c->job, &v) ? clamp_seconds(v) : 0;
        if (c->job && classad_has(c->job, "JobMaxVacateTime")) {
                int64_t j = pol_eval_number(c->job, "JobMaxVacateTime", sm->ad, &v) ? clamp_seconds(v) : 0;
                if (j <= mvt)
                        mvt = j;
                else {
                        int64_t rem = pol_retirement_remaining(sm);
                        if (rem >= j)
                                mvt = j;
                        else if (rem > mvt)
                                mvt = rem;
                }
        }
        return mvt;
}

bool pol_retirement_expired(const AgentSlotSM *sm) {
        int64_t rem = pol_retirement_remaining(sm);
        return rem <= 0 || pol_max_vacate_time(sm) >= rem;
}

bool pol_in_retirement(const AgentSlotSM *sm) {
        return sm->pre || sm->draining || sm->shutting_down ||
               (sm->cur && (sm->cur->preempt_was_true || sm->cur->irreversible));
}

const char *pol_retirement_reason(const AgentSlotSM *sm) {
        if (sm->cur && sm->cur->end_reason)
                return sm->cur->end_reason;
        if (sm->pre)
                return "a preempting claim";
        if (sm->draining)
                return "draining";
        if (sm->shutting_down)
                return "shutting down";
        return "retirement";
}

bool pol_worklife_expired(const AgentSlotSM *sm) {
        /* 3.5.8: the worklife runs from the claim's start and ends the claim
         * once its job is done; a claim that never ran a job is not closed
         * by it (so CLAIM_WORKLIFE = 0 allows exactly one job). */
        const Claim *c = sm->cur;
        return c && c->activations > 0 && sm->knobs.claim_worklife >= 0 &&
               sm->now - c->begun > sm->knobs.claim_worklife;
}

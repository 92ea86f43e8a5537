/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c — the state machine of one slot (seed 002, 3.5.5 to 3.5.8):
 * evaluation of the policy expressions, state changes with their entry and
 * exit actions, the periodic evaluation of every state, and the queries.
 * The events are in policy-events.c, the configuration in policy-config.c.
 *
 * The order of the checks in the Claimed state and the meaning of
 * "retirement" follow HTCondor's startd where the manual says nothing:
 * PREEMPT and a graceful vacate put the claim into irreversible
 * retirement; a preempting claim (a better RANK, or a preemption the
 * manager decided) or draining into reversible retirement, undone when
 * that claim goes away or the draining is cancelled (transition 19);
 * retirement ends when the job has run (suspension not counted)
 * MaxJobRetirementTime, or earlier by the vacate time the job will be
 * granted, so that a hard kill happens no later than the end of the
 * retirement (3.5.8).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "policy-internal.h"

/* ---- the evaluator's clock ---- */

static int eval_bool_local(const AgentSlotSM *sm, const char *name);

/* The attributes that follow from the clock: ClockMin, ClockDay (3.5.9.3),
 * CpuIsBusy and CpuBusyTime (how long CpuBusy has been TRUE, 0 when it is
 * not). */
static void update_clock_attrs(AgentSlotSM *sm) {
        time_t t = (time_t) sm->now;
        struct tm tm;
        if (sm->knobs.clock_utc ? gmtime_r(&t, &tm) != NULL : localtime_r(&t, &tm) != NULL) {
                classad_set_int(sm->ad, "ClockMin", tm.tm_hour * 60 + tm.tm_min);
                classad_set_int(sm->ad, "ClockDay", tm.tm_wday);
        }
        bool busy = eval_bool_local(sm, "CpuBusy") == 1;
        if (busy && !sm->cpu_busy_since)
                sm->cpu_busy_since = sm->now;
        else if (!busy)
                sm->cpu_busy_since = 0;
        classad_set_bool(sm->ad, "CpuIsBusy", busy);
        classad_set_int(sm->ad, "CpuBusyTime", busy ? sm->now - sm->cpu_busy_since : 0);
}

void pol_begin(AgentSlotSM *sm, int64_t now) {
        if (now > sm->now)
                sm->now = now;
        if (sm->depth++ == 0) {
                sm->cascade = 0;
                classad_set_now(sm->now);
                update_clock_attrs(sm);
        }
}

void pol_end(AgentSlotSM *sm) {
        if (--sm->depth == 0)
                classad_set_now(0);
}

/* ---- evaluation ---- */

static int eval_attr(const ClassAd *my, const char *name, const ClassAd *target, CaValue *ret) {
        char text[96];
        int n = snprintf(text, sizeof text, "MY.%s", name);
        if (n < 0 || (size_t) n >= sizeof text)
                return -EINVAL;
        ClassAdExpr *e = NULL;
        CaError cerr;
        if (classad_expr_parse(text, (size_t) n, CA_MODE_OLD, &e, &cerr) < 0)
                return -EINVAL;
        int r = classad_expr_eval(e, my, target, CA_MODE_OLD, ret);
        classad_expr_free(e);
        return r;
}

int pol_eval_bool(const AgentSlotSM *sm, const char *name, const ClassAd *job) {
        CaValue v = ca_undefined();
        int out = -1;
        if (eval_attr(sm->ad, name, job, &v) >= 0) {
                if (v.type == CA_BOOL)
                        out = v.u.b;
                else if (v.type == CA_INT)
                        out = v.u.i != 0;
                else if (v.type == CA_REAL)
                        out = v.u.r != 0.0;
        }
        ca_value_clear(&v);
        return out;
}

bool pol_eval_number(const ClassAd *my, const char *name, const ClassAd *target, double *ret) {
        CaValue v = ca_undefined();
        bool ok = false;
        if (eval_attr(my, name, target, &v) >= 0) {
                ok = true;
                if (v.type == CA_INT)
                        *ret = (double) v.u.i;
                else if (v.type == CA_REAL && v.u.r == v.u.r)
                        *ret = v.u.r;
                else if (v.type == CA_BOOL)
                        *ret = v.u.b;
                else
                        ok = false;
        }
        ca_value_clear(&v);
        return ok;
}

static const ClassAd *cur_job(const AgentSlotSM *sm) {
        return sm->cur ? sm->cur->job : NULL;
}

int pol_eval_policy(const AgentSlotSM *sm, const char *name) {
        const ClassAd *job = cur_job(sm);
        if (sm->cur && sm->cur->vanilla) {
                char v[64];
                snprintf(v, sizeof v, "%s_VANILLA", name);
                if (classad_has(sm->ad, v)) {
                        int r = pol_eval_bool(sm, v, job);
                        if (r >= 0)
                                return r;
                }
        }
        return pol_eval_bool(sm, name, job);
}

static int eval_bool_local(const AgentSlotSM *sm, const char *name) {
        return pol_eval_bool(sm, name, NULL);
}

/* IS_OWNER: UNDEFINED or ERROR keeps the machine to its owner. */
static bool eval_is_owner(const AgentSlotSM *sm) {
        return pol_eval_bool(sm, "IS_OWNER", NULL) != 0;
}

/* ---- changing state ---- */

void pol_enter_preempting(AgentSlotSM *sm, int number, const char *reason) {
        Claim *c = sm->cur;
        /* WANT_VACATE is consulted only when PREEMPT sent the claim here and
         * a job is still there to vacate (3.5.8); otherwise vacate. */
        bool kill = sm->fast_kill ||
                    (c && c->active && c->preempt_was_true && pol_eval_policy(sm, "WANT_VACATE") != 1);
        if (c && !c->end_reason)
                c->end_reason = reason;
        pol_change(sm, AGENT_STATE_PREEMPTING, kill ? AGENT_ACT_KILLING : AGENT_ACT_VACATING, number, reason);
}

/* The job is gone (or there was none): where Preempting leads (3.5.7.5). */
void pol_leave_preempting(AgentSlotSM *sm, const char *reason) {
        bool killing = sm->act == AGENT_ACT_KILLING;
        Claim *old = sm->cur;
        /* The preempting claim gets the slot unless the slot is going away
         * or START refuses its job (HTCondor's leave_preempting_state). */
        bool start_ok = sm->pre && pol_eval_bool(sm, "START", sm->pre->job) != 0;
        bool takeover = sm->pre && start_ok && !sm->shutting_down && !sm->draining;
        if (old)
                pol_action(sm, AGENT_DO_CLAIM_ENDED, old,
                           takeover ? "preempted by a better claim" : old->end_reason ? old->end_reason : reason);
        if (takeover) {
                sm->cur = sm->pre;
                sm->pre = NULL;
                sm->cur->begun = sm->now;
                sm->cur->last_alive = sm->now;
                pol_claim_free(old);
                sm->fast_kill = false;
                /* 23 from Vacating, 24 from Killing. */
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, killing ? 24 : 23, "the preempting claim takes over");
                return;
        }
        if (sm->pre)
                pol_drop_pre(sm, !start_ok ? "START is not TRUE for the preempting claim's job"
                                           : sm->draining ? "draining" : "shutting down");
        /* 22 from Vacating, 25 from Killing. */
        pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, killing ? 25 : 22, reason);
}

void pol_retire_claim(AgentSlotSM *sm, int number, const char *reason) {
        if (sm->cur && !sm->cur->end_reason)
                sm->cur->end_reason = reason;
        if (sm->act == AGENT_ACT_RETIRING) {
                pol_eval(sm);
                return;
        }
        if (sm->act == AGENT_ACT_IDLE) {
                pol_enter_preempting(sm, 10, reason);
                return;
        }
        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, number, reason);
}

/* Entry actions; they may change state again (returns true then). */
static bool enter_action(AgentSlotSM *sm, AgentState from_s, bool statechange) {
        Claim *c = sm->cur;
        switch (sm->state) {
        case AGENT_STATE_OWNER:
                if (statechange) {
                        /* Whatever was pending has been told already. */
                        pol_claim_free(sm->cur);
                        sm->cur = NULL;
                        pol_claim_free(sm->pre);
                        sm->pre = NULL;
                        pol_claim_free(sm->pending);
                        sm->pending = NULL;
                        free(sm->match_id);
                        sm->match_id = NULL;
                        sm->fast_kill = false;
                        sm->backfill_dest = AGENT_STATE_BACKFILL;
                }
                return false;
        case AGENT_STATE_UNCLAIMED:
                if (sm->act == AGENT_ACT_BENCHMARKING)
                        pol_action(sm, AGENT_DO_RUN_BENCHMARKS, NULL, "RunBenchmarks is TRUE");
                return false;
        case AGENT_STATE_CLAIMED:
                if (sm->act == AGENT_ACT_SUSPENDED) {
                        c->suspended_since = sm->now;
                        pol_action(sm, AGENT_DO_SUSPEND_JOB, c, "SUSPEND is TRUE");
                } else if (sm->act == AGENT_ACT_RETIRING && !c->active) {
                        pol_enter_preempting(sm, 18, "the job is gone");
                        return true;
                }
                return false;
        case AGENT_STATE_PREEMPTING:
                if (from_s == AGENT_STATE_PREEMPTING && sm->act == AGENT_ACT_KILLING) {
                        /* 21: the vacate time ran out or KILL became TRUE. */
                        sm->killing_deadline = sm->now + sm->knobs.killing_timeout;
                        pol_action(sm, AGENT_DO_HARD_KILL, c, "killing");
                        return false;
                }
                if (!c || !c->active) {
                        pol_leave_preempting(sm, "no job to evict");
                        return true;
                }
                if (sm->act == AGENT_ACT_VACATING) {
                        sm->vacate_deadline = sm->now + pol_max_vacate_time(sm);
                        pol_action(sm, AGENT_DO_SOFT_KILL, c, "vacating");
                } else {
                        sm->killing_deadline = sm->now + sm->knobs.killing_timeout;
                        pol_action(sm, AGENT_DO_HARD_KILL, c, "killing");
                }
                return false;
        case AGENT_STATE_BACKFILL:
                /* Backfill/Idle on its way out (29) spawns nothing. */
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running && sm->backfill_dest == AGENT_STATE_BACKFILL &&
                    !sm->broken)
                        pol_action(sm, AGENT_DO_START_BACKFILL, NULL, "START_BACKFILL is TRUE");
                else if (sm->act == AGENT_ACT_KILLING)
                        pol_action(sm, AGENT_DO_KILL_BACKFILL, NULL, "evicting the backfill");
                return false;
        default:
                return false;
        }
}

static void leave_action(AgentSlotSM *sm, AgentState from_s, AgentActivity from_a, AgentState to_s) {
        Claim *c = sm->cur;
        if (from_s == AGENT_STATE_CLAIMED && from_a == AGENT_ACT_SUSPENDED && c) {
                if (c->suspended_since) {
                        c->suspended_total += sm->now - c->suspended_since;
                        c->suspended_since = 0;
                }
                /* Resume a job that is still there (to run, or to be vacated). */
                if (c->active)
                        pol_action(sm, AGENT_DO_CONTINUE_JOB, c, "continue");
        }
        if (from_s == AGENT_STATE_PREEMPTING && to_s != AGENT_STATE_PREEMPTING) {
                sm->vacate_deadline = 0;
                sm->killing_deadline = 0;
        }
}

void pol_change(AgentSlotSM *sm, AgentState s, AgentActivity a, int number, const char *reason) {
        if (s == sm->state && a == sm->act)
                return;
        if (++sm->cascade > POL_MAX_CASCADE)
                return;
        bool statechange = s != sm->state;
        AgentTransition t = {
                .time = sm->now,
                .from_state = sm->state,
                .from_act = sm->act,
                .to_state = s,
                .to_act = a,
                .number = number,
                .reason = reason,
                .claim_id = sm->cur ? sm->cur->id : NULL,
                .job_id = sm->cur && sm->cur->job_id[0] ? sm->cur->job_id : NULL,
        };
        sm->state = s;
        sm->act = a;
        sm->entered_act = sm->now;
        if (statechange)
                sm->entered_state = sm->now;
        pol_publish(sm);
        if (sm->hooks.transition)
                sm->hooks.transition(sm->userdata, &t);
        leave_action(sm, t.from_state, t.from_act, s);
        if (enter_action(sm, t.from_state, statechange))
                return;
        /* Entering idleness or retirement: see at once whether to move on, as
         * the startd does. A hook may have moved the slot on already. */
        if (sm->state == s && sm->act == a && (a == AGENT_ACT_IDLE || a == AGENT_ACT_RETIRING) &&
            s != AGENT_STATE_BACKFILL)
                pol_eval(sm);
}

/* ---- periodic evaluation ---- */

static bool lease_expired(const AgentSlotSM *sm, const Claim *c) {
        return c && sm->now >= pol_lease_end(c);
}

static bool all_drained(AgentSlotSM *sm) {
        return sm->hooks.all_drained ? sm->hooks.all_drained(sm->userdata) : true;
}

/* 3.5.7.4, in the order of HTCondor's startd. */
static void eval_claimed(AgentSlotSM *sm) {
        Claim *c = sm->cur;
        if (lease_expired(sm, c)) {
                /* 3.5.5.1: the claim is dropped and its job evicted. */
                c->irreversible = true;
                sm->fast_kill = true;
                pol_enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, "claim lease expired");
                return;
        }
        if (lease_expired(sm, sm->pre))
                pol_drop_pre(sm, "claim lease expired");
        if (pol_in_retirement(sm) && sm->act != AGENT_ACT_IDLE && pol_retirement_expired(sm)) {
                /* A busy job that is to be evicted retires first, if only for an instant (13). */
                if (sm->act == AGENT_ACT_BUSY) {
                        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, 13, pol_retirement_reason(sm));
                        return;
                }
                if (pol_eval_policy(sm, "PREEMPT") == 1)
                        c->preempt_was_true = true;
                pol_enter_preempting(sm, sm->act == AGENT_ACT_SUSPENDED ? 17 : 18, "retirement ended");
                return;
        }
        bool want_suspend = pol_eval_policy(sm, "WANT_SUSPEND") == 1;
        if ((sm->act == AGENT_ACT_BUSY && !want_suspend) ||
            (sm->act == AGENT_ACT_RETIRING && !c->preempt_was_true && !want_suspend) ||
            (sm->act == AGENT_ACT_SUSPENDED && !c->preempt_was_true)) {
                if (pol_eval_policy(sm, "PREEMPT") == 1) {
                        c->preempt_was_true = true;
                        c->end_reason = "PREEMPT is TRUE";
                        pol_retire_claim(sm, sm->act == AGENT_ACT_SUSPENDED ? 16 : 13, "PREEMPT is TRUE");
                        return;
                }
        }
        if (sm->act == AGENT_ACT_RETIRING) {
                if (!pol_in_retirement(sm)) {
                        c->end_reason = NULL;
                        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY, 19,
                                   sm->unretire_why ? sm->unretire_why : "no more reason to retire");
                        return;
                }
                if (pol_retirement_expired(sm)) {
                        pol_enter_preempting(sm, 18, "retirement ended");
                        return;
                }
        }
        if ((sm->act == AGENT_ACT_BUSY || sm->act == AGENT_ACT_RETIRING) && want_suspend &&
            pol_eval_policy(sm, "SUSPEND") == 1) {
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_SUSPENDED, sm->act == AGENT_ACT_BUSY ? 14 : 20,
                           "SUSPEND is TRUE");
                return;
        }
        if (sm->act == AGENT_ACT_SUSPENDED && pol_eval_policy(sm, "CONTINUE") == 1) {
                if (pol_in_retirement(sm))
                        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, 16, "CONTINUE is TRUE");
                else {
                        c->end_reason = NULL;
                        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY, 15, "CONTINUE is TRUE");
                }
                return;
        }
        if (sm->act == AGENT_ACT_BUSY && pol_in_retirement(sm)) {
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, 13, pol_retirement_reason(sm));
                return;
        }
        if (sm->act == AGENT_ACT_IDLE) {
                if (sm->pre) {
                        pol_enter_preempting(sm, 10, "a preempting claim");
                        return;
                }
                if (pol_eval_bool(sm, "START", c->job) == 0) {
                        pol_enter_preempting(sm, 10, "START is FALSE");
                        return;
                }
                if (pol_worklife_expired(sm)) {
                        pol_enter_preempting(sm, 10, "CLAIM_WORKLIFE expired");
                        return;
                }
                if (sm->draining || sm->shutting_down || c->irreversible) {
                        pol_enter_preempting(sm, 10, pol_retirement_reason(sm));
                        return;
                }
        }
}

static void eval_preempting(AgentSlotSM *sm) {
        if (sm->act == AGENT_ACT_VACATING) {
                if (pol_eval_policy(sm, "KILL") == 1) {
                        pol_change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, "KILL is TRUE");
                        return;
                }
                if (sm->vacate_deadline && sm->now >= sm->vacate_deadline) {
                        pol_change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, "vacate time expired");
                        return;
                }
        } else if (sm->act == AGENT_ACT_KILLING && sm->killing_deadline && sm->now >= sm->killing_deadline) {
                /* 3.5.7.5: something has gone seriously wrong; kill again. */
                sm->killing_deadline = sm->now + sm->knobs.killing_timeout;
                pol_action(sm, AGENT_DO_KILLING_TIMEOUT, sm->cur, "KILLING_TIMEOUT expired");
        }
}

static void eval_unclaimed(AgentSlotSM *sm) {
        if (sm->draining) {
                /* 37 from Unclaimed/Idle; unnumbered from Benchmarking. */
                pol_change(sm, AGENT_STATE_DRAINED, AGENT_ACT_RETIRING, sm->act == AGENT_ACT_IDLE ? 37 : 0,
                           "draining");
                return;
        }
        if (sm->shutting_down || eval_is_owner(sm)) {
                pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 2,
                           sm->shutting_down ? "shutting down" : "IS_OWNER is TRUE");
                return;
        }
        if (sm->act != AGENT_ACT_IDLE || sm->broken)
                return; /* Benchmarking: until the benchmarks are done (4); broken: nothing runs */
        /* 3.5.7.2: RunBenchmarks, though not in the evaluation that ends a run. */
        if (sm->knobs.benchmarks && sm->benchmarked_at != sm->now && pol_eval_bool(sm, "RunBenchmarks", NULL) == 1) {
                pol_change(sm, AGENT_STATE_UNCLAIMED, AGENT_ACT_BENCHMARKING, 3, "RunBenchmarks is TRUE");
                return;
        }
        if (sm->knobs.backfill && pol_eval_bool(sm, "START_BACKFILL", NULL) == 1)
                pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_IDLE, 7, "START_BACKFILL is TRUE");
}

void agent_sm_eval(AgentSlotSM *sm, int64_t now) {
        pol_begin(sm, now);
        pol_eval(sm);
        pol_end(sm);
}

void pol_eval(AgentSlotSM *sm) {
        switch (sm->state) {
        case AGENT_STATE_OWNER:
                if (sm->knobs.dynamic && !sm->broken) {
                        pol_action(sm, AGENT_DO_RELEASE_SLOT, NULL, "dynamic slot no longer claimed");
                        return;
                }
                if (sm->draining) {
                        pol_change(sm, AGENT_STATE_DRAINED, AGENT_ACT_RETIRING, 36, "draining");
                        return;
                }
                if (!sm->shutting_down && !eval_is_owner(sm))
                        pol_change(sm, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE, 1, "IS_OWNER is FALSE");
                return;
        case AGENT_STATE_UNCLAIMED:
                if (sm->knobs.dynamic && !sm->broken) {
                        pol_action(sm, AGENT_DO_RELEASE_SLOT, NULL, "dynamic slot no longer claimed");
                        return;
                }
                eval_unclaimed(sm);
                return;
        case AGENT_STATE_MATCHED:
                /* 3.5.7.3: START locally FALSE, or MATCH_TIMEOUT. */
                if (pol_eval_bool(sm, "START", NULL) == 0) {
                        pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, "START is FALSE");
                        return;
                }
                if (sm->now - sm->entered_state >= sm->knobs.match_timeout)
                        pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, "MATCH_TIMEOUT expired");
                return;
        case AGENT_STATE_CLAIMED:
                eval_claimed(sm);
                return;
        case AGENT_STATE_PREEMPTING:
                eval_preempting(sm);
                return;
        case AGENT_STATE_BACKFILL:
                /* 3.5.7.6: EVICT_BACKFILL; nothing to do while the command is being killed. */
                if (sm->act == AGENT_ACT_KILLING)
                        return;
                if (sm->broken || pol_eval_bool(sm, "EVICT_BACKFILL", NULL) == 1) {
                        const char *why = sm->broken ? "the slot is broken" : "EVICT_BACKFILL is TRUE";
                        if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                                pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 30, why);
                        else {
                                sm->backfill_dest = AGENT_STATE_OWNER;
                                pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, why);
                        }
                }
                return;
        case AGENT_STATE_DRAINED:
                /* 3.5.7.7 */
                if (!sm->draining) {
                        pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, sm->act == AGENT_ACT_IDLE ? 34 : 35,
                                   "draining ended");
                        return;
                }
                if (sm->act == AGENT_ACT_RETIRING && all_drained(sm))
                        pol_change(sm, AGENT_STATE_DRAINED, AGENT_ACT_IDLE, 33, "draining is complete");
                return;
        default:
                return;
        }
}

/* ---- life cycle and queries ---- */

int agent_sm_new(const char *slot_name, ClassAd *ad, const AgentPolicyKnobs *knobs, const AgentPolicyHooks *hooks,
                 void *userdata, int64_t now, AgentSlotSM **ret) {
        AgentSlotSM *sm = calloc(1, sizeof *sm);
        if (!sm)
                return -ENOMEM;
        sm->name = strdup(slot_name ? slot_name : "slot");
        if (!sm->name) {
                free(sm);
                return -ENOMEM;
        }
        sm->ad = ad;
        sm->knobs = *knobs;
        if (hooks)
                sm->hooks = *hooks;
        sm->userdata = userdata;
        sm->state = AGENT_STATE_OWNER;
        sm->act = AGENT_ACT_IDLE;
        sm->now = now;
        sm->entered_state = sm->entered_act = now;
        sm->backfill_dest = AGENT_STATE_BACKFILL;
        sm->benchmarked_at = INT64_MIN;
        /* 3.5.7.2: LastBenchmark is 0 until benchmarks have run. */
        if (!classad_has(ad, "LastBenchmark"))
                classad_set_int(ad, "LastBenchmark", 0);
        pol_publish(sm);
        *ret = sm;
        return 0;
}

void agent_sm_free(AgentSlotSM *sm) {
        if (!sm)
                return;
        pol_claim_free(sm->cur);
        pol_claim_free(sm->pre);
        pol_claim_free(sm->pending);
        free(sm->match_id);
        free(sm->broken);
        free(sm->name);
        free(sm);
}

int agent_sm_set_broken(AgentSlotSM *sm, int64_t now, const char *reason) {
        if (!reason || !*reason)
                return -EINVAL;
        if (sm->broken)
                return 0;
        sm->broken = strdup(reason);
        if (!sm->broken)
                return -ENOMEM;
        pol_begin(sm, now);
        classad_set_string(sm->ad, "SlotBrokenReason", sm->broken);
        classad_set_bool(sm->ad, "START", false);
        pol_publish(sm);
        pol_eval(sm);
        pol_end(sm);
        return 0;
}

const char *agent_sm_broken(const AgentSlotSM *sm) {
        return sm->broken;
}

static int64_t min64(int64_t a, int64_t b) {
        return a < b ? a : b;
}

int64_t agent_sm_next_deadline(const AgentSlotSM *sm) {
        int64_t t = INT64_MAX;
        if (sm->state == AGENT_STATE_MATCHED)
                t = min64(t, sm->entered_state + sm->knobs.match_timeout);
        if (sm->state == AGENT_STATE_PREEMPTING && sm->act == AGENT_ACT_VACATING && sm->vacate_deadline)
                t = min64(t, sm->vacate_deadline);
        if (sm->state == AGENT_STATE_PREEMPTING && sm->act == AGENT_ACT_KILLING && sm->killing_deadline)
                t = min64(t, sm->killing_deadline);
        if (sm->state == AGENT_STATE_CLAIMED) {
                const Claim *c = sm->cur;
                if (c)
                        t = min64(t, pol_lease_end(c));
                if (sm->pre)
                        t = min64(t, pol_lease_end(sm->pre));
                if (sm->act == AGENT_ACT_IDLE && c && c->activations > 0 && sm->knobs.claim_worklife >= 0)
                        t = min64(t, c->begun + sm->knobs.claim_worklife + 1);
                if (sm->act == AGENT_ACT_RETIRING && c && c->active) {
                        /* Evaluated at sm->now, the time of the last call. */
                        bool pin = sm->depth == 0;
                        if (pin)
                                classad_set_now(sm->now);
                        int64_t rem = pol_retirement_remaining(sm) - pol_max_vacate_time(sm);
                        if (pin)
                                classad_set_now(0);
                        t = min64(t, sm->now + (rem > 0 ? rem : 0));
                }
        }
        return t;
}

AgentState agent_sm_state(const AgentSlotSM *sm) {
        return sm->state;
}

AgentActivity agent_sm_activity(const AgentSlotSM *sm) {
        return sm->act;
}

const char *agent_sm_claim_id(const AgentSlotSM *sm) {
        return sm->cur ? sm->cur->id : NULL;
}

const ClassAd *agent_sm_job(const AgentSlotSM *sm) {
        return sm->cur ? sm->cur->job : NULL;
}

int agent_sm_claim_lease(const AgentSlotSM *sm, const char *claim_id, int64_t *ret_lease, int64_t *ret_asked) {
        const Claim *const claims[] = { sm->cur, sm->pre, sm->pending };
        for (size_t i = 0; claim_id && i < sizeof claims / sizeof *claims; i++)
                if (claims[i] && strcmp(claims[i]->id, claim_id) == 0) {
                        *ret_lease = claims[i]->lease;
                        *ret_asked = claims[i]->lease_asked;
                        return 0;
                }
        return -ENOENT;
}

bool agent_sm_claim_alive(const AgentSlotSM *sm, int64_t *ret_last_alive, int64_t *ret_lease) {
        if (!sm->cur)
                return false;
        *ret_last_alive = sm->cur->last_alive;
        *ret_lease = sm->cur->lease;
        return true;
}

int agent_sm_set_claim_alive(AgentSlotSM *sm, int64_t when) {
        if (!sm->cur)
                return -ENOENT;
        sm->cur->last_alive = when;
        return 0;
}

bool agent_sm_job_active(const AgentSlotSM *sm) {
        return sm->cur && sm->cur->active;
}

bool agent_sm_has_claim(const AgentSlotSM *sm, const char *claim_id) {
        if (!claim_id)
                return false;
        return (sm->cur && strcmp(sm->cur->id, claim_id) == 0) || (sm->pre && strcmp(sm->pre->id, claim_id) == 0) ||
               (sm->pending && strcmp(sm->pending->id, claim_id) == 0);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy-events.c — the events of a slot's state machine: the claiming
 * protocol (match, claim, activate, keep-alive, deactivate, release), the
 * job's and the backfill command's exits, benchmarks, and the
 * administrator's vacate, drain and shutdown (seed 002, 3.5.5.1, 3.5.7).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy-internal.h"

static int refuse(char *why, size_t whylen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static int refuse(char *why, size_t whylen, int r, const char *fmt, ...) {
        if (why && whylen) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(why, whylen, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* ---- the claiming protocol ---- */

static int on_claim(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (!ev->claim_id || !*ev->claim_id || !ev->job)
                return refuse(why, whylen, -EINVAL, "a claim needs a claim id and a job ad");
        if (agent_sm_has_claim(sm, ev->claim_id) || (sm->pending && strcmp(sm->pending->id, ev->claim_id) == 0))
                return refuse(why, whylen, -EEXIST, "claim %s is already on %s", ev->claim_id, sm->name);
        if (sm->broken)
                return refuse(why, whylen, -EPERM, "%s is broken: %s", sm->name, sm->broken);
        if (sm->draining)
                return refuse(why, whylen, -EPERM, "%s is draining", sm->name);
        if (sm->shutting_down)
                return refuse(why, whylen, -EPERM, "%s is shutting down", sm->name);

        switch (sm->state) {
        case AGENT_STATE_MATCHED:
                if (sm->match_id && strcmp(sm->match_id, ev->claim_id) != 0)
                        return refuse(why, whylen, -ENOENT, "%s is matched with another claim id", sm->name);
                break;
        case AGENT_STATE_OWNER:
        case AGENT_STATE_UNCLAIMED:
        case AGENT_STATE_CLAIMED:
                break;
        case AGENT_STATE_BACKFILL:
                if (sm->pending)
                        return refuse(why, whylen, -EBUSY, "%s is already leaving backfill for a claim", sm->name);
                break;
        default:
                return refuse(why, whylen, -EBUSY, "%s is %s and takes no claim", sm->name,
                              agent_state_name(sm->state));
        }
        if (sm->state == AGENT_STATE_CLAIMED && sm->pre)
                return refuse(why, whylen, -EBUSY, "%s already has a preempting claim", sm->name);
        /* 3.5.7.1: whether Owner or Unclaimed, a job START accepts may claim the slot. */
        if (pol_eval_bool(sm, "START", ev->job) != 1)
                return refuse(why, whylen, -EPERM, "%s: START is not TRUE for this job", sm->name);

        Claim *c = pol_claim_new(sm, ev->claim_id, ev->job);
        if (!c)
                return -ENOMEM;
        switch (sm->state) {
        case AGENT_STATE_CLAIMED:
                /* 3.5.8 RANK: a better request preempts the current one. One
                 * the manager preempts for user priority needs a RANK no worse
                 * (3.4.5; HTCondor's startd: "Preempting claim doesn't have
                 * sufficient rank"). */
                if (ev->by_priority ? c->rank < sm->cur->rank : !(c->rank > sm->cur->rank)) {
                        char buf[128];
                        snprintf(buf, sizeof buf, "RANK %g is %s the current claim's %g", c->rank,
                                 ev->by_priority ? "below" : "not above", sm->cur->rank);
                        pol_claim_free(c);
                        return refuse(why, whylen, -EBUSY, "%s is claimed: %s", sm->name, buf);
                }
                sm->pre = c;
                pol_eval(sm);
                return 0;
        case AGENT_STATE_BACKFILL:
                /* 3.5.7.6: the backfill command goes first (28), then 29 and 31. */
                free(sm->match_id);
                sm->match_id = NULL;
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running) {
                        sm->cur = c;
                        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 31, "claimed");
                        return 0;
                }
                sm->pending = c;
                sm->backfill_dest = AGENT_STATE_CLAIMED;
                if (sm->act != AGENT_ACT_KILLING)
                        pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, "claimed for a job");
                return 0;
        default: {
                /* 5 from Unclaimed, 9 from Matched; from Owner the figure has no number. */
                int number = sm->state == AGENT_STATE_MATCHED ? 9 : sm->state == AGENT_STATE_UNCLAIMED ? 5 : 0;
                sm->cur = c;
                free(sm->match_id);
                sm->match_id = NULL;
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, number, "claimed");
                return 0;
        }
        }
}

static int on_match(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (sm->broken)
                return refuse(why, whylen, -EPERM, "%s is broken: %s", sm->name, sm->broken);
        if (sm->draining || sm->shutting_down)
                return refuse(why, whylen, -EPERM, "%s is %s", sm->name, sm->draining ? "draining" : "shutting down");
        if (sm->state == AGENT_STATE_BACKFILL) {
                if (sm->backfill_dest != AGENT_STATE_BACKFILL)
                        return refuse(why, whylen, -EBUSY, "%s is already leaving backfill", sm->name);
                char *id = NULL;
                if (ev->claim_id && !(id = strdup(ev->claim_id)))
                        return -ENOMEM;
                free(sm->match_id);
                sm->match_id = id;
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                        pol_change(sm, AGENT_STATE_MATCHED, AGENT_ACT_IDLE, 32, "matched");
                else {
                        sm->backfill_dest = AGENT_STATE_MATCHED;
                        pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, "matched for a job");
                }
                return 0;
        }
        if (sm->state != AGENT_STATE_UNCLAIMED && sm->state != AGENT_STATE_OWNER)
                return refuse(why, whylen, -EBUSY, "%s is %s and cannot be matched", sm->name,
                              agent_state_name(sm->state));
        char *id = NULL;
        if (ev->claim_id && !(id = strdup(ev->claim_id)))
                return -ENOMEM;
        free(sm->match_id);
        sm->match_id = id;
        /* 6 from Unclaimed; from Owner the figure has no number. */
        pol_change(sm, AGENT_STATE_MATCHED, AGENT_ACT_IDLE, sm->state == AGENT_STATE_UNCLAIMED ? 6 : 0, "matched");
        return 0;
}

static int check_cur_claim(AgentSlotSM *sm, const char *claim_id, char *why, size_t whylen) {
        if (!sm->cur || !claim_id || strcmp(sm->cur->id, claim_id) != 0)
                return refuse(why, whylen, -ENOENT, "no claim %s on %s", claim_id ? claim_id : "(none)", sm->name);
        return 0;
}

static int on_activate(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        int r = check_cur_claim(sm, ev->claim_id, why, whylen);
        if (r < 0)
                return r;
        if (sm->state != AGENT_STATE_CLAIMED)
                return refuse(why, whylen, -EINVAL, "%s is %s, not Claimed/Idle", sm->name, agent_state_name(sm->state));
        if (sm->act != AGENT_ACT_IDLE)
                return refuse(why, whylen, -EBUSY, "%s is Claimed/%s, not Claimed/Idle", sm->name,
                              agent_activity_name(sm->act));
        if (!ev->job)
                return refuse(why, whylen, -EINVAL, "activation without a job ad");
        if (sm->pre || sm->draining || sm->shutting_down)
                return refuse(why, whylen, -EPERM, "%s is being preempted", sm->name);
        if (pol_worklife_expired(sm))
                return refuse(why, whylen, -EPERM, "%s: the claim's CLAIM_WORKLIFE has expired", sm->name);
        if (pol_eval_bool(sm, "START", ev->job) != 1)
                return refuse(why, whylen, -EPERM, "%s: START is not TRUE for this job", sm->name);
        ClassAd *copy = NULL;
        if (classad_copy(ev->job, &copy) < 0)
                return -ENOMEM;
        Claim *c = sm->cur;
        classad_free(c->job);
        c->job = copy;
        c->vanilla = pol_job_is_vanilla(copy);
        pol_claim_set_job_id(c);
        double rank;
        if (pol_eval_number(sm->ad, "RANK", copy, &rank))
                c->rank = rank;
        pol_claim_set_lease(sm, c, copy);
        c->last_alive = sm->now; /* an activation is a keep-alive too */
        c->active = true;
        c->activations++;
        c->job_start = sm->now;
        c->suspended_total = 0;
        c->suspended_since = 0;
        /* What concerned the previous job does not concern this one. */
        c->preempt_was_true = false;
        c->end_reason = NULL;
        pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY, 11, "claim activated");
        if (sm->cur == c && c->active)
                pol_action(sm, AGENT_DO_START_JOB, c, "activate");
        return 0;
}

static int on_job_exit(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        Claim *c = sm->cur;
        if (ev->claim_id && (!c || strcmp(ev->claim_id, c->id) != 0))
                return refuse(why, whylen, -ENOENT, "no claim %s on %s", ev->claim_id, sm->name);
        if (!c || !c->active)
                return refuse(why, whylen, -EINVAL, "%s runs no job", sm->name);
        c->active = false;
        if (c->suspended_since) {
                c->suspended_total += sm->now - c->suspended_since;
                c->suspended_since = 0;
        }
        if (sm->state == AGENT_STATE_PREEMPTING) {
                pol_leave_preempting(sm, sm->act == AGENT_ACT_VACATING ? "the job vacated" : "the job was killed");
                return 0;
        }
        switch (sm->act) {
        case AGENT_ACT_BUSY:
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 12, "the job exited");
                return 0;
        case AGENT_ACT_SUSPENDED:
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 0, "the job exited while suspended");
                return 0;
        case AGENT_ACT_RETIRING:
                /* 3.5.7.4: the job finished in retirement. */
                pol_enter_preempting(sm, 18, "the job exited in retirement");
                return 0;
        default:
                return 0;
        }
}

static int on_keep_alive(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (sm->pre && ev->claim_id && strcmp(sm->pre->id, ev->claim_id) == 0) {
                sm->pre->last_alive = sm->now;
                return 0;
        }
        if (sm->pending && ev->claim_id && strcmp(sm->pending->id, ev->claim_id) == 0) {
                sm->pending->last_alive = sm->now;
                return 0;
        }
        int r = check_cur_claim(sm, ev->claim_id, why, whylen);
        if (r < 0)
                return r;
        sm->cur->last_alive = sm->now;
        return 0;
}

static int on_deactivate(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        int r = check_cur_claim(sm, ev->claim_id, why, whylen);
        if (r < 0)
                return r;
        if (!sm->cur->active)
                return refuse(why, whylen, -EINVAL, "%s runs no job", sm->name);
        /* The claim stays; the job goes, and its exit brings Claimed/Idle (12). */
        if (sm->act == AGENT_ACT_SUSPENDED)
                pol_action(sm, AGENT_DO_CONTINUE_JOB, sm->cur, "deactivate");
        pol_action(sm, ev->fast ? AGENT_DO_HARD_KILL : AGENT_DO_SOFT_KILL, sm->cur, "deactivate");
        return 0;
}

static int on_release(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (sm->pre && ev->claim_id && strcmp(sm->pre->id, ev->claim_id) == 0) {
                /* The preempting claim goes away: the current one may unretire (19). */
                pol_claim_free(sm->pre);
                sm->pre = NULL;
                sm->unretire_why = "the preempting claim went away";
                pol_eval(sm);
                return 0;
        }
        if (sm->pending && ev->claim_id && strcmp(sm->pending->id, ev->claim_id) == 0) {
                pol_claim_free(sm->pending);
                sm->pending = NULL;
                sm->backfill_dest = AGENT_STATE_OWNER;
                return 0;
        }
        int r = check_cur_claim(sm, ev->claim_id, why, whylen);
        if (r < 0)
                return r;
        if (sm->state == AGENT_STATE_PREEMPTING)
                return 0; /* already on its way out */
        sm->cur->irreversible = true;
        pol_drop_pre(sm, "the current claim was released");
        pol_enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, "the claim was released");
        return 0;
}

/* ---- the administrator ---- */

static void evict_backfill(AgentSlotSM *sm, const char *reason) {
        pol_drop_pending(sm, reason);
        free(sm->match_id);
        sm->match_id = NULL;
        if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 30, reason);
        else {
                sm->backfill_dest = AGENT_STATE_OWNER;
                if (sm->act != AGENT_ACT_KILLING)
                        pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, reason);
        }
}

static int on_vacate(AgentSlotSM *sm, const AgentEvent *ev) {
        switch (sm->state) {
        case AGENT_STATE_CLAIMED:
                sm->cur->irreversible = true;
                sm->cur->end_reason = "vacate";
                pol_drop_pre(sm, "vacate");
                if (ev->fast) {
                        sm->fast_kill = true;
                        pol_enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, "fast vacate");
                } else
                        /* HTCondor's VACATE_CLAIM takes the retire-claim path: the job
                         * keeps the MaxJobRetirementTime it has left (for good: no
                         * unretiring), then is vacated. */
                        pol_retire_claim(sm, sm->act == AGENT_ACT_SUSPENDED ? 16 : 13, "vacate");
                return 0;
        case AGENT_STATE_PREEMPTING:
                if (sm->cur)
                        sm->cur->irreversible = true;
                pol_drop_pre(sm, "vacate");
                if (ev->fast && sm->act == AGENT_ACT_VACATING)
                        pol_change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, "fast vacate");
                return 0;
        case AGENT_STATE_MATCHED:
                pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, "vacate");
                return 0;
        case AGENT_STATE_BACKFILL:
                evict_backfill(sm, "vacate");
                return 0;
        default:
                return 0;
        }
}

/* Draining or shutting down: every claim retires, then the slot stops taking work. */
static void wind_down(AgentSlotSM *sm, bool fast, const char *reason) {
        switch (sm->state) {
        case AGENT_STATE_CLAIMED:
                pol_drop_pre(sm, reason);
                if (fast) {
                        sm->cur->irreversible = true;
                        sm->cur->end_reason = reason;
                        sm->fast_kill = true;
                        pol_enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, reason);
                } else
                        pol_retire_claim(sm, sm->act == AGENT_ACT_SUSPENDED ? 16 : 13, reason);
                return;
        case AGENT_STATE_PREEMPTING:
                pol_drop_pre(sm, reason);
                if (fast && sm->act == AGENT_ACT_VACATING)
                        pol_change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, reason);
                return;
        case AGENT_STATE_MATCHED:
                pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, reason);
                return;
        case AGENT_STATE_BACKFILL:
                /* Retirement means nothing to a backfill command: it goes at once. */
                evict_backfill(sm, reason);
                return;
        default:
                pol_eval(sm);
                return;
        }
}

static int on_drain(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (sm->draining)
                return refuse(why, whylen, -EALREADY, "%s is already draining", sm->name);
        if ((unsigned) ev->drain > AGENT_DRAIN_FAST)
                return refuse(why, whylen, -EINVAL, "unknown way of draining");
        sm->draining = true;
        sm->drain_how = ev->drain;
        pol_publish(sm);
        wind_down(sm, ev->drain == AGENT_DRAIN_FAST, "draining");
        return 0;
}

static int on_cancel_drain(AgentSlotSM *sm, char *why, size_t whylen) {
        if (!sm->draining)
                return refuse(why, whylen, -EALREADY, "%s is not draining", sm->name);
        sm->draining = false;
        sm->unretire_why = "draining was cancelled";
        /* A claim retiring only for the draining goes back to work (19). */
        if (sm->cur && !sm->cur->irreversible && !sm->cur->preempt_was_true)
                sm->cur->end_reason = NULL;
        pol_publish(sm);
        pol_eval(sm);
        return 0;
}

static int on_shutdown(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if ((unsigned) ev->shutdown > AGENT_SHUTDOWN_FAST)
                return refuse(why, whylen, -EINVAL, "unknown way of shutting down");
        sm->shutting_down = true;
        sm->shutdown_how = ev->shutdown;
        /* 3.5.7.4: no unretirement once the startd is being shut down. */
        if (sm->cur && (sm->state == AGENT_STATE_CLAIMED || sm->state == AGENT_STATE_PREEMPTING))
                sm->cur->irreversible = true;
        pol_publish(sm);
        wind_down(sm, ev->shutdown == AGENT_SHUTDOWN_FAST, "shutting down");
        return 0;
}

/* ---- backfill and benchmarks ---- */

static int on_backfill(AgentSlotSM *sm, bool started) {
        if (started) {
                if (sm->state != AGENT_STATE_BACKFILL || sm->act == AGENT_ACT_KILLING) {
                        /* Started too late: the slot wants it gone. */
                        sm->backfill_running = sm->state == AGENT_STATE_BACKFILL;
                        pol_action(sm, AGENT_DO_KILL_BACKFILL, NULL, "the slot no longer runs backfill");
                        return 0;
                }
                sm->backfill_running = true;
                if (sm->act == AGENT_ACT_IDLE)
                        pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_BUSY, 26, "backfill command started");
                return 0;
        }
        sm->backfill_running = false;
        if (sm->state != AGENT_STATE_BACKFILL)
                return 0;
        if (sm->act == AGENT_ACT_BUSY) {
                /* 27, and Backfill/Idle spawns it again. */
                pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_IDLE, 27, "backfill command exited");
                return 0;
        }
        if (sm->act != AGENT_ACT_KILLING)
                return 0;
        /* Backfill/Killing -> Backfill/Idle (29), then on to the destination. */
        AgentState dest = sm->backfill_dest;
        pol_change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_IDLE, 29, "backfill command gone");
        if (sm->state != AGENT_STATE_BACKFILL || sm->act != AGENT_ACT_IDLE)
                return 0;
        sm->backfill_dest = AGENT_STATE_BACKFILL;
        if (dest == AGENT_STATE_CLAIMED && sm->pending) {
                sm->cur = sm->pending;
                sm->pending = NULL;
                pol_change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 31, "claimed");
        } else if (dest == AGENT_STATE_MATCHED)
                pol_change(sm, AGENT_STATE_MATCHED, AGENT_ACT_IDLE, 32, "matched");
        else
                pol_change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 30, "backfill evicted");
        return 0;
}

static int on_benchmarks_done(AgentSlotSM *sm) {
        /* 3.5.7.2: LastBenchmark records the run, wherever the slot went meanwhile. */
        classad_set_int(sm->ad, "LastBenchmark", sm->now);
        if (sm->state == AGENT_STATE_UNCLAIMED && sm->act == AGENT_ACT_BENCHMARKING) {
                sm->benchmarked_at = sm->now;
                pol_change(sm, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE, 4, "benchmarks done");
        }
        return 0;
}

static int sm_handle(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        switch (ev->type) {
        case AGENT_EV_MATCH:
                return on_match(sm, ev, why, whylen);
        case AGENT_EV_CLAIM:
                return on_claim(sm, ev, why, whylen);
        case AGENT_EV_ACTIVATE:
                return on_activate(sm, ev, why, whylen);
        case AGENT_EV_JOB_EXIT:
                return on_job_exit(sm, ev, why, whylen);
        case AGENT_EV_KEEP_ALIVE:
                return on_keep_alive(sm, ev, why, whylen);
        case AGENT_EV_DEACTIVATE:
                return on_deactivate(sm, ev, why, whylen);
        case AGENT_EV_RELEASE:
                return on_release(sm, ev, why, whylen);
        case AGENT_EV_VACATE:
                return on_vacate(sm, ev);
        case AGENT_EV_DRAIN:
                return on_drain(sm, ev, why, whylen);
        case AGENT_EV_CANCEL_DRAIN:
                return on_cancel_drain(sm, why, whylen);
        case AGENT_EV_SHUTDOWN:
                return on_shutdown(sm, ev, why, whylen);
        case AGENT_EV_BACKFILL_STARTED:
                return on_backfill(sm, true);
        case AGENT_EV_BACKFILL_EXIT:
                return on_backfill(sm, false);
        case AGENT_EV_BENCHMARKS_DONE:
                return on_benchmarks_done(sm);
        default:
                return refuse(why, whylen, -EINVAL, "unknown event");
        }
}

int agent_sm_handle(AgentSlotSM *sm, int64_t now, const AgentEvent *ev, char *why, size_t whylen) {
        if (why && whylen)
                why[0] = 0;
        pol_begin(sm, now);
        int r = sm_handle(sm, ev, why, whylen);
        pol_end(sm);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.c — the state machine of one slot (seed 002, 3.5.5 to 3.5.8).
 *
 * The order of the checks in the Claimed state and the meaning of
 * "retirement" follow HTCondor's startd: PREEMPT puts the claim into
 * irreversible retirement; a preempting claim (a better RANK, or a
 * preemption the manager decided) into reversible retirement, undone if
 * that claim goes away (transition 19); retirement ends when the job has
 * run (suspension not counted) MaxJobRetirementTime, or earlier by the
 * vacate time the job will be granted, so that a hard kill happens no later
 * than the end of the retirement.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "policy.h"

#define MAX_CASCADE 32 /* transitions one evaluation may chain */

typedef struct Claim {
        char *id;
        ClassAd *job;           /* the request ad, then the job ad once activated */
        double rank;            /* RANK of the slot for this job */
        int64_t begun;          /* for CLAIM_WORKLIFE */
        int64_t lease;          /* seconds */
        int64_t last_alive;
        bool active;            /* a job runs */
        int64_t job_start;
        int64_t suspended_total;
        int64_t suspended_since;/* 0: not suspended */
        bool preempt_was_true;  /* PREEMPT became TRUE: irreversible retirement */
        bool irreversible;      /* vacate, drain or shutdown: no unretiring */
        bool peaceful;          /* retirement without limit */
        bool no_retirement;     /* retirement of 0 (fast shutdown, quick drain) */
        bool vanilla;
        char job_id[48];        /* "ClusterId.ProcId" of the job, "" if unknown */
} Claim;

struct AgentSlotSM {
        char *name;
        ClassAd *ad;
        AgentPolicyKnobs knobs;
        AgentPolicyHooks hooks;
        void *userdata;

        AgentState state;
        AgentActivity act;
        int64_t now;
        int64_t entered_state, entered_act;

        Claim *cur;             /* the claim (Claimed, Preempting) */
        Claim *pre;             /* a preempting claim waiting for the slot */
        char *match_id;         /* Matched: the claim id the match announced */
        Claim *pending;         /* Backfill: a claim or match waiting for the backfill to end */
        AgentState backfill_dest; /* where Backfill/Killing goes: Owner, Matched, Claimed */

        bool draining, shutting_down, fast_kill;
        AgentDrainHow drain_how;
        AgentShutdownHow shutdown_how;

        int64_t vacate_deadline;
        int64_t killing_deadline;
        bool backfill_running;
        int64_t cpu_busy_since; /* 0: CpuBusy is not TRUE */
        int cascade;
};

/* ---- names ---- */

static const char *const event_names[AGENT_EV__MAX] = {
        [AGENT_EV_MATCH] = "match",           [AGENT_EV_CLAIM] = "claim",
        [AGENT_EV_ACTIVATE] = "activate",     [AGENT_EV_JOB_EXIT] = "job-exit",
        [AGENT_EV_KEEP_ALIVE] = "keep-alive", [AGENT_EV_DEACTIVATE] = "deactivate",
        [AGENT_EV_RELEASE] = "release",       [AGENT_EV_VACATE] = "vacate",
        [AGENT_EV_DRAIN] = "drain",           [AGENT_EV_CANCEL_DRAIN] = "cancel-drain",
        [AGENT_EV_SHUTDOWN] = "shutdown",     [AGENT_EV_BACKFILL_STARTED] = "backfill-started",
        [AGENT_EV_BACKFILL_EXIT] = "backfill-exit",
};

static const char *const action_names[AGENT_DO__MAX] = {
        [AGENT_DO_START_JOB] = "start-job",         [AGENT_DO_SUSPEND_JOB] = "suspend-job",
        [AGENT_DO_CONTINUE_JOB] = "continue-job",   [AGENT_DO_SOFT_KILL] = "soft-kill",
        [AGENT_DO_HARD_KILL] = "hard-kill",         [AGENT_DO_KILLING_TIMEOUT] = "killing-timeout",
        [AGENT_DO_CLAIM_ENDED] = "claim-ended",     [AGENT_DO_START_BACKFILL] = "start-backfill",
        [AGENT_DO_KILL_BACKFILL] = "kill-backfill", [AGENT_DO_RELEASE_SLOT] = "release-slot",
};

const char *agent_event_name(AgentEventType t) {
        return (unsigned) t < AGENT_EV__MAX ? event_names[t] : NULL;
}

int agent_event_from_name(const char *name, AgentEventType *ret) {
        for (unsigned i = 0; i < AGENT_EV__MAX; i++)
                if (strcasecmp(name, event_names[i]) == 0) {
                        *ret = (AgentEventType) i;
                        return 0;
                }
        return -EINVAL;
}

const char *agent_action_name(AgentActionType t) {
        return (unsigned) t < AGENT_DO__MAX ? action_names[t] : NULL;
}

/* ---- knobs and expressions from the configuration ---- */

static int knob_int(const Config *cfg, unsigned slot, const char *name, int64_t def, int64_t *ret,
                    ConfigError *err) {
        char *v = NULL;
        int r = config_get_slot(cfg, slot, name, &v, err);
        if (r == -ENOENT || (r >= 0 && !*v)) {
                free(v);
                *ret = def;
                return 0;
        }
        if (r < 0)
                return r;
        /* A knob may be an expression of constants ("10 * 60"). */
        ClassAdExpr *e = NULL;
        CaError cerr;
        CaValue val = ca_undefined();
        r = classad_expr_parse(v, strlen(v), CA_MODE_OLD, &e, &cerr);
        if (r >= 0)
                r = classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &val);
        classad_expr_free(e);
        if (r < 0 || (val.type != CA_INT && val.type != CA_REAL)) {
                snprintf(err->msg, sizeof err->msg, "%s = %s: not a number", name, v);
                err->file[0] = 0;
                err->line = 0;
                const char *f;
                int line;
                if (config_where(cfg, name, &f, &line) >= 0) {
                        snprintf(err->file, sizeof err->file, "%s", f);
                        err->line = line;
                }
                ca_value_clear(&val);
                free(v);
                return -EINVAL;
        }
        *ret = val.type == CA_INT ? val.u.i : (int64_t) val.u.r;
        free(v);
        return 0;
}

int agent_policy_knobs(const Config *cfg, unsigned slot_id, AgentPolicyKnobs *ret, ConfigError *err) {
        AgentPolicyKnobs k = { 0 };
        int r;
        if ((r = knob_int(cfg, slot_id, "MATCH_TIMEOUT", 120, &k.match_timeout, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "KILLING_TIMEOUT", 30, &k.killing_timeout, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "CLAIM_WORKLIFE", -1, &k.claim_worklife, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "ALIVE_INTERVAL", 300, &k.alive_interval, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "MAX_CLAIM_ALIVES_MISSED", 6, &k.max_claim_alives_missed, err)) < 0)
                return r;
        bool enable = false;
        r = config_get_bool(cfg, "ENABLE_BACKFILL", &enable, err);
        if (r < 0 && r != -ENOENT)
                return r;
        const char *cmd = config_raw(cfg, "BACKFILL_COMMAND");
        k.backfill = enable && cmd && *cmd;
        *ret = k;
        return 0;
}

static const char *const policy_exprs[] = {
        "START",       "IS_OWNER",       "WANT_SUSPEND",   "SUSPEND",
        "CONTINUE",    "PREEMPT",        "WANT_VACATE",    "KILL",
        "RANK",        "MaxJobRetirementTime", "MachineMaxVacateTime", "START_BACKFILL",
        "EVICT_BACKFILL", "PERIODIC_CHECKPOINT",
};

/* Expressions that have a _VANILLA variant (3.5.7.4). */
static const char *const vanilla_exprs[] = {
        "WANT_SUSPEND", "SUSPEND", "CONTINUE", "PREEMPT", "WANT_VACATE", "KILL",
};

static int set_expr_from_config(const Config *cfg, unsigned slot, ClassAd *ad, const char *knob,
                                const char *attr, ConfigError *err) {
        char *v = NULL;
        int r = config_get_slot(cfg, slot, knob, &v, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        CaError cerr;
        r = classad_set_expr_text(ad, attr, *v ? v : "UNDEFINED", CA_MODE_OLD, &cerr);
        if (r < 0) {
                const char *f;
                int line;
                err->file[0] = 0;
                err->line = 0;
                if (config_where(cfg, knob, &f, &line) >= 0) {
                        snprintf(err->file, sizeof err->file, "%s", f);
                        err->line = line;
                }
                snprintf(err->msg, sizeof err->msg, "%s: not a ClassAd expression (column %d: %s)", knob,
                         cerr.column, cerr.msg);
        }
        free(v);
        return r < 0 ? -EINVAL : 0;
}

int agent_policy_fill_ad(const Config *cfg, unsigned slot_id, ClassAd *ad, ConfigError *err) {
        int r;
        for (size_t i = 0; i < sizeof policy_exprs / sizeof *policy_exprs; i++) {
                /* MAXJOBRETIREMENTTIME is the knob's name; the ad says MaxJobRetirementTime
                 * (names are case-insensitive, so one lookup serves both). */
                r = set_expr_from_config(cfg, slot_id, ad, policy_exprs[i], policy_exprs[i], err);
                if (r < 0)
                        return r;
        }
        /* CpuBusy: what "the CPU is busy" means (HTCondor's CPU_BUSY, else the CPUBusy macro). */
        char *busy = NULL;
        if (config_get(cfg, "CPU_BUSY", &busy, err) < 0 || !*busy) {
                free(busy);
                busy = NULL;
                if (config_expand(cfg, "$(CPUBusy)", &busy, err) < 0 || !*busy) {
                        free(busy);
                        busy = strdup("((LoadAvg - CondorLoadAvg) >= 0.5)");
                        if (!busy)
                                return -ENOMEM;
                }
        }
        CaError cerr;
        r = classad_set_expr_text(ad, "CpuBusy", busy, CA_MODE_OLD, &cerr);
        if (r < 0) {
                snprintf(err->msg, sizeof err->msg, "CPU_BUSY / CPUBusy: not a ClassAd expression: %s", busy);
                err->file[0] = 0;
                err->line = 0;
                free(busy);
                return -EINVAL;
        }
        free(busy);
        for (size_t i = 0; i < sizeof vanilla_exprs / sizeof *vanilla_exprs; i++) {
                char name[64];
                snprintf(name, sizeof name, "%s_VANILLA", vanilla_exprs[i]);
                r = set_expr_from_config(cfg, slot_id, ad, name, name, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- evaluation ---- */

/* Evaluates attribute `name` of the slot ad with the claim's job as
 * TARGET (when with_job and there is one). -1 UNDEFINED/ERROR, 0, 1. */
static int eval_bool_attr(AgentSlotSM *sm, const char *name, const ClassAd *job) {
        char text[80];
        snprintf(text, sizeof text, "MY.%s", name);
        ClassAdExpr *e = NULL;
        CaError cerr;
        if (classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &cerr) < 0)
                return -1;
        CaValue v = ca_undefined();
        int r = classad_expr_eval(e, sm->ad, job, CA_MODE_OLD, &v);
        classad_expr_free(e);
        int out = -1;
        if (r >= 0) {
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

static bool eval_number_attr(const ClassAd *my, const char *name, const ClassAd *target, double *ret) {
        char text[80];
        snprintf(text, sizeof text, "MY.%s", name);
        ClassAdExpr *e = NULL;
        CaError cerr;
        if (classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &cerr) < 0)
                return false;
        CaValue v = ca_undefined();
        int r = classad_expr_eval(e, my, target, CA_MODE_OLD, &v);
        classad_expr_free(e);
        bool ok = false;
        if (r >= 0 && v.type == CA_INT) {
                *ret = (double) v.u.i;
                ok = true;
        } else if (r >= 0 && v.type == CA_REAL) {
                *ret = v.u.r;
                ok = true;
        } else if (r >= 0 && v.type == CA_BOOL) {
                *ret = v.u.b;
                ok = true;
        }
        ca_value_clear(&v);
        return ok;
}

static const ClassAd *cur_job(const AgentSlotSM *sm) {
        return sm->cur ? sm->cur->job : NULL;
}

/* A policy expression in the claim's context: NAME_VANILLA first for a
 * vanilla job when it is defined and evaluates, then NAME (3.5.7.4). */
static int eval_policy(AgentSlotSM *sm, const char *name) {
        const ClassAd *job = cur_job(sm);
        if (sm->cur && sm->cur->vanilla) {
                char v[64];
                snprintf(v, sizeof v, "%s_VANILLA", name);
                if (classad_has(sm->ad, v)) {
                        int r = eval_bool_attr(sm, v, job);
                        if (r >= 0)
                                return r;
                }
        }
        return eval_bool_attr(sm, name, job);
}

/* START evaluated "locally": without a job. */
static int eval_start_local(AgentSlotSM *sm) {
        return eval_bool_attr(sm, "START", NULL);
}

static bool eval_is_owner(AgentSlotSM *sm) {
        /* UNDEFINED or ERROR keeps the machine to its owner. */
        return eval_bool_attr(sm, "IS_OWNER", NULL) != 0;
}

/* ---- the ad's state attributes ---- */

static void publish_state(AgentSlotSM *sm) {
        ClassAd *ad = sm->ad;
        classad_set_string(ad, "State", agent_state_name(sm->state));
        classad_set_string(ad, "Activity", agent_activity_name(sm->act));
        classad_set_int(ad, "EnteredCurrentState", sm->entered_state);
        classad_set_int(ad, "EnteredCurrentActivity", sm->entered_act);
        CaError cerr;
        bool unavailable = sm->state == AGENT_STATE_MATCHED || sm->state == AGENT_STATE_PREEMPTING ||
                           sm->state == AGENT_STATE_DRAINED || sm->draining || sm->shutting_down;
        if (unavailable)
                classad_set_bool(ad, "Requirements", false);
        else
                classad_set_expr_text(ad, "Requirements", "START", CA_MODE_OLD, &cerr);

        Claim *c = sm->cur;
        bool claimed = c && (sm->state == AGENT_STATE_CLAIMED || sm->state == AGENT_STATE_PREEMPTING);
        if (claimed && c->active)
                classad_set_int(ad, "JobStart", c->job_start);
        else
                classad_delete(ad, "JobStart");
        static const char *const claim_attrs[] = { "RemoteUser", "RemoteOwner", "JobId", "GlobalJobId",
                                                   "CurrentRank", "RemoteAccountingGroup" };
        if (!claimed) {
                for (size_t i = 0; i < sizeof claim_attrs / sizeof *claim_attrs; i++)
                        classad_delete(ad, claim_attrs[i]);
                return;
        }
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
        if (c->job_id[0])
                classad_set_string(ad, "JobId", c->job_id);
        classad_set_real(ad, "CurrentRank", c->rank);
        free(owner);
        free(user);
        free(gid);
        free(group);
}

static void set_job_id(Claim *c) {
        int64_t cluster = 0, proc = 0;
        c->job_id[0] = 0;
        if (c->job && classad_eval_int(c->job, "ClusterId", CA_MODE_OLD, &cluster) >= 0 &&
            classad_eval_int(c->job, "ProcId", CA_MODE_OLD, &proc) >= 0)
                snprintf(c->job_id, sizeof c->job_id, "%lld.%lld", (long long) cluster, (long long) proc);
}

static const char *job_id_of(const AgentSlotSM *sm) {
        return sm->cur && sm->cur->job_id[0] ? sm->cur->job_id : NULL;
}

static void action(AgentSlotSM *sm, AgentActionType type, const Claim *c, const char *reason) {
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

static void claim_free(Claim *c) {
        if (!c)
                return;
        free(c->id);
        classad_free(c->job);
        free(c);
}

static bool job_is_vanilla(const ClassAd *job) {
        int64_t u = 5;
        if (job && classad_eval_int(job, "JobUniverse", CA_MODE_OLD, &u) < 0)
                u = 5;
        return u == 5;
}

static int64_t lease_of(const AgentSlotSM *sm, const ClassAd *job) {
        /* 3.5.5.1: JobLeaseDuration; 0 or undefined: MAX_CLAIM_ALIVES_MISSED x ALIVE_INTERVAL. */
        int64_t lease = 0;
        if (job && classad_eval_int(job, "JobLeaseDuration", CA_MODE_OLD, &lease) >= 0 && lease > 0)
                return lease;
        return sm->knobs.max_claim_alives_missed * sm->knobs.alive_interval;
}

static Claim *claim_new(AgentSlotSM *sm, const char *id, const ClassAd *job) {
        Claim *c = calloc(1, sizeof *c);
        if (!c)
                return NULL;
        c->id = strdup(id ? id : "");
        if (job && classad_copy(job, &c->job) < 0)
                c->job = NULL;
        if (!c->id || (job && !c->job)) {
                claim_free(c);
                return NULL;
        }
        double rank = 0;
        if (job && eval_number_attr(sm->ad, "RANK", job, &rank))
                c->rank = rank;
        c->begun = sm->now;
        c->lease = lease_of(sm, job);
        c->last_alive = sm->now;
        c->vanilla = job_is_vanilla(job);
        set_job_id(c);
        return c;
}

/* ---- retirement and vacating (3.5.8: MAXJOBRETIREMENTTIME, MachineMaxVacateTime) ---- */

static int64_t job_age(const AgentSlotSM *sm, const Claim *c) {
        int64_t age = sm->now - c->job_start - c->suspended_total;
        if (c->suspended_since)
                age -= sm->now - c->suspended_since;
        return age < 0 ? 0 : age;
}

static int64_t retirement_remaining(const AgentSlotSM *sm) {
        const Claim *c = sm->cur;
        if (!c || !c->active)
                return 0;
        double mjrt = 0;
        if (!eval_number_attr(sm->ad, "MaxJobRetirementTime", c->job, &mjrt))
                mjrt = 0;
        if (c->peaceful)
                mjrt = (double) INT_MAX;
        double job_mjrt;
        /* The job's own value can only shorten it. */
        if (c->job && classad_has(c->job, "MaxJobRetirementTime") &&
            eval_number_attr(c->job, "MaxJobRetirementTime", sm->ad, &job_mjrt) && job_mjrt < mjrt)
                mjrt = job_mjrt;
        if (c->no_retirement)
                mjrt = 0;
        int64_t rem = (int64_t) mjrt - job_age(sm, c);
        return rem < 0 ? 0 : rem;
}

static int64_t max_vacate_time(const AgentSlotSM *sm) {
        const Claim *c = sm->cur;
        double machine = 0, job;
        if (!eval_number_attr(sm->ad, "MachineMaxVacateTime", c ? c->job : NULL, &machine))
                machine = 0;
        int64_t mvt = (int64_t) machine;
        if (c && c->job && classad_has(c->job, "JobMaxVacateTime") &&
            eval_number_attr(c->job, "JobMaxVacateTime", sm->ad, &job)) {
                int64_t j = (int64_t) job;
                if (j <= mvt)
                        mvt = j;
                else {
                        /* More than the machine offers: from retirement time left, if any. */
                        int64_t rem = retirement_remaining(sm);
                        if (rem >= j)
                                mvt = j;
                        else if (rem > mvt)
                                mvt = rem;
                }
        }
        return mvt < 0 ? 0 : mvt;
}

static bool retirement_expired(const AgentSlotSM *sm) {
        int64_t rem = retirement_remaining(sm);
        if (rem <= 0)
                return true;
        return max_vacate_time(sm) >= rem;
}

static bool in_retirement(const AgentSlotSM *sm) {
        return sm->pre || (sm->cur && (sm->cur->preempt_was_true || sm->cur->irreversible));
}

static bool may_unretire(const AgentSlotSM *sm) {
        return sm->cur && !sm->cur->preempt_was_true && !sm->cur->irreversible && !sm->pre;
}

/* ---- changing state ---- */

static void change(AgentSlotSM *sm, AgentState s, AgentActivity a, int number, const char *reason);
static void sm_eval(AgentSlotSM *sm);

static void leave_preempting(AgentSlotSM *sm, const char *reason);

static void enter_preempting(AgentSlotSM *sm, int number, const char *reason) {
        bool kill = sm->fast_kill || (sm->cur && sm->cur->preempt_was_true && eval_policy(sm, "WANT_VACATE") != 1);
        change(sm, AGENT_STATE_PREEMPTING, kill ? AGENT_ACT_KILLING : AGENT_ACT_VACATING, number, reason);
}

/* Entry actions; they may change state again (returns true then). */
static bool enter_action(AgentSlotSM *sm, bool statechange) {
        Claim *c = sm->cur;
        switch (sm->state) {
        case AGENT_STATE_OWNER:
                if (statechange) {
                        claim_free(sm->cur);
                        sm->cur = NULL;
                        claim_free(sm->pre);
                        sm->pre = NULL;
                        free(sm->match_id);
                        sm->match_id = NULL;
                        sm->fast_kill = false;
                }
                return false;
        case AGENT_STATE_CLAIMED:
                if (sm->act == AGENT_ACT_SUSPENDED) {
                        c->suspended_since = sm->now;
                        action(sm, AGENT_DO_SUSPEND_JOB, c, "suspend");
                } else if (sm->act == AGENT_ACT_RETIRING && !c->active) {
                        enter_preempting(sm, 18, "the job is gone");
                        return true;
                }
                return false;
        case AGENT_STATE_PREEMPTING:
                if (!c || !c->active) {
                        leave_preempting(sm, "no job to evict");
                        return true;
                }
                if (sm->act == AGENT_ACT_VACATING) {
                        sm->vacate_deadline = sm->now + max_vacate_time(sm);
                        action(sm, AGENT_DO_SOFT_KILL, c, "vacating");
                } else {
                        sm->killing_deadline = sm->now + sm->knobs.killing_timeout;
                        action(sm, AGENT_DO_HARD_KILL, c, "killing");
                }
                return false;
        case AGENT_STATE_BACKFILL:
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                        action(sm, AGENT_DO_START_BACKFILL, NULL, "backfill");
                else if (sm->act == AGENT_ACT_KILLING)
                        action(sm, AGENT_DO_KILL_BACKFILL, NULL, "evicting the backfill");
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
                action(sm, AGENT_DO_CONTINUE_JOB, c, "continue");
        }
        if (from_s == AGENT_STATE_PREEMPTING && to_s != AGENT_STATE_PREEMPTING) {
                sm->vacate_deadline = 0;
                sm->killing_deadline = 0;
        }
}

static void change(AgentSlotSM *sm, AgentState s, AgentActivity a, int number, const char *reason) {
        if (s == sm->state && a == sm->act)
                return;
        if (++sm->cascade > MAX_CASCADE)
                return; /* a policy that flips back and forth: settle at the next evaluation */
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
                .job_id = job_id_of(sm),
        };
        sm->state = s;
        sm->act = a;
        sm->entered_act = sm->now;
        if (statechange)
                sm->entered_state = sm->now;
        publish_state(sm);
        if (sm->hooks.transition)
                sm->hooks.transition(sm->userdata, &t);
        leave_action(sm, t.from_state, t.from_act, s);
        if (enter_action(sm, statechange))
                return;
        /* Entering idleness or retirement: see at once whether to move on, as the startd does. */
        if ((a == AGENT_ACT_IDLE || a == AGENT_ACT_RETIRING) && s != AGENT_STATE_BACKFILL)
                sm_eval(sm);
}

/* The job is gone (or there was none): where Preempting leads (3.5.7.5). */
static void leave_preempting(AgentSlotSM *sm, const char *reason) {
        bool killing = sm->act == AGENT_ACT_KILLING;
        Claim *old = sm->cur;
        if (old)
                action(sm, AGENT_DO_CLAIM_ENDED, old, sm->pre ? "preempted by a better claim" : reason);
        if (sm->pre && !sm->shutting_down && !sm->draining) {
                sm->cur = sm->pre;
                sm->pre = NULL;
                sm->cur->begun = sm->now;
                sm->cur->last_alive = sm->now;
                claim_free(old);
                sm->fast_kill = false;
                /* 23 from Vacating, 24 from Killing. */
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, killing ? 24 : 23, "preempting claim takes over");
                return;
        }
        /* 22 from Vacating, 25 from Killing. */
        change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, killing ? 25 : 22, reason);
}

/* Claim goes into retirement (PREEMPT, a vacate, drain, shutdown). */
static void retire_claim(AgentSlotSM *sm, int number, const char *reason) {
        if (sm->act == AGENT_ACT_RETIRING) {
                sm_eval(sm);
                return;
        }
        if (sm->act == AGENT_ACT_IDLE) {
                enter_preempting(sm, 10, reason);
                return;
        }
        change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, number, reason);
}

/* ---- periodic evaluation ---- */

static bool lease_expired(const AgentSlotSM *sm, const Claim *c) {
        return c && c->lease > 0 && sm->now - c->last_alive > c->lease;
}

static bool worklife_expired(const AgentSlotSM *sm) {
        return sm->cur && sm->knobs.claim_worklife >= 0 && sm->now - sm->cur->begun > sm->knobs.claim_worklife;
}

static bool all_drained(AgentSlotSM *sm) {
        return sm->hooks.all_drained ? sm->hooks.all_drained(sm->userdata) : true;
}

static void eval_claimed(AgentSlotSM *sm) {
        Claim *c = sm->cur;
        if (lease_expired(sm, c)) {
                /* 3.5.5.1: the claim is dropped and its job evicted. */
                c->irreversible = true;
                sm->fast_kill = true;
                enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, "claim lease expired");
                return;
        }
        if (lease_expired(sm, sm->pre)) {
                claim_free(sm->pre);
                sm->pre = NULL;
        }
        if (in_retirement(sm) && sm->act != AGENT_ACT_IDLE && retirement_expired(sm)) {
                if (eval_policy(sm, "PREEMPT") == 1)
                        c->preempt_was_true = true;
                enter_preempting(sm, sm->act == AGENT_ACT_SUSPENDED ? 17 : 18, "retirement ended");
                return;
        }
        bool want_suspend = eval_policy(sm, "WANT_SUSPEND") == 1;
        if ((sm->act == AGENT_ACT_BUSY && !want_suspend) ||
            (sm->act == AGENT_ACT_RETIRING && !c->preempt_was_true && !want_suspend) ||
            (sm->act == AGENT_ACT_SUSPENDED && !c->preempt_was_true)) {
                if (eval_policy(sm, "PREEMPT") == 1) {
                        c->preempt_was_true = true;
                        retire_claim(sm, sm->act == AGENT_ACT_SUSPENDED ? 16 : 13, "PREEMPT is TRUE");
                        return;
                }
        }
        if (sm->act == AGENT_ACT_RETIRING) {
                if (may_unretire(sm)) {
                        change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY, 19, "the preempting claim went away");
                        return;
                }
                if (retirement_expired(sm)) {
                        enter_preempting(sm, 18, "retirement ended");
                        return;
                }
        }
        if ((sm->act == AGENT_ACT_BUSY || sm->act == AGENT_ACT_RETIRING) && want_suspend &&
            eval_policy(sm, "SUSPEND") == 1) {
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_SUSPENDED, sm->act == AGENT_ACT_BUSY ? 14 : 20,
                       "SUSPEND is TRUE");
                return;
        }
        if (sm->act == AGENT_ACT_SUSPENDED && eval_policy(sm, "CONTINUE") == 1) {
                if (in_retirement(sm))
                        change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, 16, "CONTINUE is TRUE");
                else
                        change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY, 15, "CONTINUE is TRUE");
                return;
        }
        if (sm->act == AGENT_ACT_BUSY && sm->pre) {
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING, 13, "retiring for a preempting claim");
                return;
        }
        if (sm->act == AGENT_ACT_IDLE) {
                if (sm->pre) {
                        enter_preempting(sm, 10, "preempting the idle claim");
                        return;
                }
                if (eval_bool_attr(sm, "START", c->job) == 0) {
                        enter_preempting(sm, 10, "START is FALSE");
                        return;
                }
                if (worklife_expired(sm)) {
                        enter_preempting(sm, 10, "CLAIM_WORKLIFE expired");
                        return;
                }
                if (sm->draining || sm->shutting_down) {
                        enter_preempting(sm, 10, sm->draining ? "draining" : "shutting down");
                        return;
                }
        }
}

static void eval_preempting(AgentSlotSM *sm) {
        if (sm->act == AGENT_ACT_VACATING) {
                if (eval_policy(sm, "KILL") == 1) {
                        change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, "KILL is TRUE");
                        return;
                }
                if (sm->vacate_deadline && sm->now >= sm->vacate_deadline) {
                        change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, "vacate time expired");
                        return;
                }
        } else if (sm->act == AGENT_ACT_KILLING && sm->killing_deadline && sm->now >= sm->killing_deadline) {
                action(sm, AGENT_DO_KILLING_TIMEOUT, sm->cur, "KILLING_TIMEOUT expired");
                sm->killing_deadline = sm->now + sm->knobs.killing_timeout;
        }
}

/* The attributes that follow from the clock: ClockMin, ClockDay (local
 * time, 3.5.9.3), CpuIsBusy and CpuBusyTime (how long CpuBusy has been
 * TRUE, 0 when it is not). */
static void update_clock_attrs(AgentSlotSM *sm) {
        time_t t = (time_t) sm->now;
        struct tm tm;
        if (localtime_r(&t, &tm)) {
                classad_set_int(sm->ad, "ClockMin", tm.tm_hour * 60 + tm.tm_min);
                classad_set_int(sm->ad, "ClockDay", tm.tm_wday);
        }
        bool busy = eval_bool_attr(sm, "CpuBusy", NULL) == 1;
        if (busy && !sm->cpu_busy_since)
                sm->cpu_busy_since = sm->now;
        else if (!busy)
                sm->cpu_busy_since = 0;
        classad_set_bool(sm->ad, "CpuIsBusy", busy);
        classad_set_int(sm->ad, "CpuBusyTime", busy ? sm->now - sm->cpu_busy_since : 0);
}

void agent_sm_eval(AgentSlotSM *sm, int64_t now) {
        if (now > sm->now)
                sm->now = now;
        sm->cascade = 0;
        classad_set_now(sm->now);
        update_clock_attrs(sm);
        sm_eval(sm);
        classad_set_now(0);
}

static void sm_eval(AgentSlotSM *sm) {
        switch (sm->state) {
        case AGENT_STATE_OWNER:
                if (sm->knobs.dynamic) {
                        action(sm, AGENT_DO_RELEASE_SLOT, NULL, "dynamic slot no longer claimed");
                        return;
                }
                if (sm->draining) {
                        change(sm, AGENT_STATE_DRAINED, AGENT_ACT_RETIRING, 36, "draining");
                        return;
                }
                if (!sm->shutting_down && !eval_is_owner(sm))
                        change(sm, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE, 1, "IS_OWNER is FALSE");
                return;
        case AGENT_STATE_UNCLAIMED:
                if (sm->knobs.dynamic) {
                        action(sm, AGENT_DO_RELEASE_SLOT, NULL, "dynamic slot no longer claimed");
                        return;
                }
                if (sm->draining) {
                        change(sm, AGENT_STATE_DRAINED, AGENT_ACT_RETIRING, 37, "draining");
                        return;
                }
                if (sm->shutting_down || eval_is_owner(sm)) {
                        change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 2,
                               sm->shutting_down ? "shutting down" : "IS_OWNER is TRUE");
                        return;
                }
                if (sm->knobs.backfill && eval_bool_attr(sm, "START_BACKFILL", NULL) == 1)
                        change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_IDLE, 7, "START_BACKFILL is TRUE");
                return;
        case AGENT_STATE_MATCHED:
                if (eval_start_local(sm) == 0) {
                        change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, "START is FALSE");
                        return;
                }
                if (sm->now - sm->entered_state >= sm->knobs.match_timeout)
                        change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, "MATCH_TIMEOUT expired");
                return;
        case AGENT_STATE_CLAIMED:
                eval_claimed(sm);
                return;
        case AGENT_STATE_PREEMPTING:
                eval_preempting(sm);
                return;
        case AGENT_STATE_BACKFILL:
                if (sm->act == AGENT_ACT_KILLING)
                        return;
                if (eval_bool_attr(sm, "EVICT_BACKFILL", NULL) == 1) {
                        sm->backfill_dest = AGENT_STATE_OWNER;
                        if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                                change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 30, "EVICT_BACKFILL is TRUE");
                        else
                                change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, "EVICT_BACKFILL is TRUE");
                }
                return;
        case AGENT_STATE_DRAINED:
                if (!sm->draining) {
                        change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, sm->act == AGENT_ACT_IDLE ? 34 : 35,
                               "draining ended");
                        return;
                }
                if (sm->act == AGENT_ACT_RETIRING && all_drained(sm))
                        change(sm, AGENT_STATE_DRAINED, AGENT_ACT_IDLE, 33, "draining is complete");
                return;
        default:
                return;
        }
}

/* ---- events ---- */

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

static int on_claim(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        const char *sname = agent_state_name(sm->state);
        if (!ev->claim_id || !*ev->claim_id || !ev->job)
                return refuse(why, whylen, -EINVAL, "a claim needs a claim id and a job ad");
        if (sm->draining)
                return refuse(why, whylen, -EPERM, "%s is draining", sm->name);
        if (sm->shutting_down)
                return refuse(why, whylen, -EPERM, "%s is shutting down", sm->name);
        if (eval_bool_attr(sm, "START", ev->job) != 1)
                return refuse(why, whylen, -EPERM, "%s: START is not TRUE for this job", sm->name);

        switch (sm->state) {
        case AGENT_STATE_MATCHED:
                if (sm->match_id && strcmp(sm->match_id, ev->claim_id) != 0)
                        return refuse(why, whylen, -ENOENT, "%s is matched with another claim id", sm->name);
                __attribute__((fallthrough));
        case AGENT_STATE_OWNER:
        case AGENT_STATE_UNCLAIMED: {
                Claim *c = claim_new(sm, ev->claim_id, ev->job);
                if (!c)
                        return -ENOMEM;
                sm->cur = c;
                free(sm->match_id);
                sm->match_id = NULL;
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, sm->state == AGENT_STATE_MATCHED ? 9 : 5,
                       "claimed");
                return 0;
        }
        case AGENT_STATE_BACKFILL: {
                if (sm->pending)
                        return refuse(why, whylen, -EBUSY, "%s is already leaving backfill for a claim", sm->name);
                Claim *c = claim_new(sm, ev->claim_id, ev->job);
                if (!c)
                        return -ENOMEM;
                sm->pending = c;
                sm->backfill_dest = AGENT_STATE_CLAIMED;
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running) {
                        sm->cur = sm->pending;
                        sm->pending = NULL;
                        change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 31, "claimed");
                } else if (sm->act != AGENT_ACT_KILLING)
                        change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, "claimed for a job");
                return 0;
        }
        case AGENT_STATE_CLAIMED: {
                if (agent_sm_has_claim(sm, ev->claim_id))
                        return refuse(why, whylen, -EEXIST, "claim %s is already on %s", ev->claim_id, sm->name);
                if (sm->pre)
                        return refuse(why, whylen, -EBUSY, "%s already has a preempting claim", sm->name);
                Claim *c = claim_new(sm, ev->claim_id, ev->job);
                if (!c)
                        return -ENOMEM;
                if (!ev->by_priority && !(c->rank > sm->cur->rank)) {
                        char buf[96];
                        snprintf(buf, sizeof buf, "RANK %g is not above the current claim's %g", c->rank,
                                 sm->cur->rank);
                        claim_free(c);
                        return refuse(why, whylen, -EBUSY, "%s is claimed: %s", sm->name, buf);
                }
                sm->pre = c;
                sm_eval(sm);
                return 0;
        }
        default:
                return refuse(why, whylen, -EBUSY, "%s is %s and takes no claim", sm->name, sname);
        }
}

static int on_match(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (sm->draining || sm->shutting_down)
                return refuse(why, whylen, -EPERM, "%s is %s", sm->name, sm->draining ? "draining" : "shutting down");
        if (sm->state == AGENT_STATE_BACKFILL) {
                free(sm->match_id);
                sm->match_id = ev->claim_id ? strdup(ev->claim_id) : NULL;
                sm->backfill_dest = AGENT_STATE_MATCHED;
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                        change(sm, AGENT_STATE_MATCHED, AGENT_ACT_IDLE, 32, "matched");
                else if (sm->act != AGENT_ACT_KILLING)
                        change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, "matched for a job");
                return 0;
        }
        if (sm->state != AGENT_STATE_UNCLAIMED && sm->state != AGENT_STATE_OWNER)
                return refuse(why, whylen, -EBUSY, "%s is %s and cannot be matched", sm->name,
                              agent_state_name(sm->state));
        free(sm->match_id);
        sm->match_id = ev->claim_id ? strdup(ev->claim_id) : NULL;
        change(sm, AGENT_STATE_MATCHED, AGENT_ACT_IDLE, 6, "matched");
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
        if (sm->state != AGENT_STATE_CLAIMED || sm->act != AGENT_ACT_IDLE)
                return refuse(why, whylen, -EBUSY, "%s is %s, not Claimed/Idle", sm->name,
                              agent_state_name(sm->state));
        if (!ev->job)
                return refuse(why, whylen, -EINVAL, "activation without a job ad");
        if (sm->pre || sm->draining || sm->shutting_down)
                return refuse(why, whylen, -EPERM, "%s is being preempted", sm->name);
        if (worklife_expired(sm))
                return refuse(why, whylen, -EPERM, "%s: the claim's CLAIM_WORKLIFE has expired", sm->name);
        if (eval_bool_attr(sm, "START", ev->job) != 1)
                return refuse(why, whylen, -EPERM, "%s: START is not TRUE for this job", sm->name);
        ClassAd *copy = NULL;
        if (classad_copy(ev->job, &copy) < 0)
                return -ENOMEM;
        Claim *c = sm->cur;
        classad_free(c->job);
        c->job = copy;
        c->vanilla = job_is_vanilla(copy);
        set_job_id(c);
        double rank;
        if (eval_number_attr(sm->ad, "RANK", copy, &rank))
                c->rank = rank;
        c->lease = lease_of(sm, copy);
        c->last_alive = sm->now;
        c->active = true;
        c->job_start = sm->now;
        c->suspended_total = 0;
        c->suspended_since = 0;
        change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY, 11, "claim activated");
        action(sm, AGENT_DO_START_JOB, c, "activate");
        return 0;
}

static int on_job_exit(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        Claim *c = sm->cur;
        if (!c || !c->active)
                return refuse(why, whylen, -EINVAL, "%s runs no job", sm->name);
        if (ev->claim_id && strcmp(ev->claim_id, c->id) != 0)
                return refuse(why, whylen, -ENOENT, "no claim %s on %s", ev->claim_id, sm->name);
        c->active = false;
        if (c->suspended_since) {
                c->suspended_total += sm->now - c->suspended_since;
                c->suspended_since = 0;
        }
        if (sm->state == AGENT_STATE_PREEMPTING) {
                leave_preempting(sm, sm->act == AGENT_ACT_VACATING ? "the job vacated" : "the job was killed");
                return 0;
        }
        switch (sm->act) {
        case AGENT_ACT_BUSY:
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 12, "the job exited");
                return 0;
        case AGENT_ACT_SUSPENDED:
                /* The continue the job no longer needs is still asked for: harmless. */
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 0, "the job exited while suspended");
                return 0;
        case AGENT_ACT_RETIRING:
                enter_preempting(sm, 18, "the job exited in retirement");
                return 0;
        default:
                return 0;
        }
}

static int on_release(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen) {
        if (sm->pre && ev->claim_id && strcmp(sm->pre->id, ev->claim_id) == 0) {
                claim_free(sm->pre);
                sm->pre = NULL;
                sm_eval(sm);
                return 0;
        }
        if (sm->state == AGENT_STATE_BACKFILL && sm->pending && ev->claim_id &&
            strcmp(sm->pending->id, ev->claim_id) == 0) {
                claim_free(sm->pending);
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
        claim_free(sm->pre);
        sm->pre = NULL;
        enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, "the claim was released");
        return 0;
}

static int on_vacate(AgentSlotSM *sm, const AgentEvent *ev) {
        switch (sm->state) {
        case AGENT_STATE_CLAIMED:
                sm->cur->irreversible = true;
                claim_free(sm->pre);
                sm->pre = NULL;
                if (ev->fast) {
                        sm->fast_kill = true;
                        enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, "fast vacate");
                } else {
                        /* A graceful vacate evicts at once (MachineMaxVacateTime applies), no retirement. */
                        sm->cur->no_retirement = true;
                        retire_claim(sm, sm->act == AGENT_ACT_SUSPENDED ? 16 : 13, "vacate");
                }
                return 0;
        case AGENT_STATE_PREEMPTING:
                claim_free(sm->pre);
                sm->pre = NULL;
                if (ev->fast && sm->act == AGENT_ACT_VACATING)
                        change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, "fast vacate");
                return 0;
        case AGENT_STATE_MATCHED:
                change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, "vacate");
                return 0;
        case AGENT_STATE_BACKFILL:
                sm->backfill_dest = AGENT_STATE_OWNER;
                claim_free(sm->pending);
                sm->pending = NULL;
                if (sm->act == AGENT_ACT_IDLE && !sm->backfill_running)
                        change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 30, "vacate");
                else if (sm->act != AGENT_ACT_KILLING)
                        change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING, 28, "vacate");
                return 0;
        default:
                return 0;
        }
}

/* Draining or shutting down: every claim retires, then the slot stops taking work. */
static void wind_down(AgentSlotSM *sm, bool fast, bool quick, bool peaceful, const char *reason) {
        if (sm->state == AGENT_STATE_CLAIMED || sm->state == AGENT_STATE_PREEMPTING) {
                Claim *c = sm->cur;
                c->irreversible = true;
                c->peaceful = peaceful;
                c->no_retirement = fast || quick;
                claim_free(sm->pre);
                sm->pre = NULL;
                if (sm->state == AGENT_STATE_PREEMPTING) {
                        if (fast && sm->act == AGENT_ACT_VACATING)
                                change(sm, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING, 21, reason);
                        return;
                }
                if (fast) {
                        sm->fast_kill = true;
                        enter_preempting(sm, sm->act == AGENT_ACT_IDLE ? 10 : 0, reason);
                } else
                        retire_claim(sm, sm->act == AGENT_ACT_SUSPENDED ? 16 : 13, reason);
                return;
        }
        if (sm->state == AGENT_STATE_MATCHED) {
                change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 8, reason);
                return;
        }
        if (sm->state == AGENT_STATE_BACKFILL) {
                AgentEvent v = { .type = AGENT_EV_VACATE, .fast = true };
                on_vacate(sm, &v);
                return;
        }
        sm_eval(sm);
}

static int sm_handle(AgentSlotSM *sm, const AgentEvent *ev, char *why, size_t whylen);

static int on_backfill(AgentSlotSM *sm, bool started) {
        if (sm->state != AGENT_STATE_BACKFILL)
                return 0;
        if (started) {
                sm->backfill_running = true;
                if (sm->act == AGENT_ACT_IDLE)
                        change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_BUSY, 26, "backfill command started");
                return 0;
        }
        sm->backfill_running = false;
        if (sm->act == AGENT_ACT_BUSY) {
                change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_IDLE, 27, "backfill command exited");
                return 0;
        }
        if (sm->act != AGENT_ACT_KILLING)
                return 0;
        /* Backfill/Killing -> Backfill/Idle (29), then on to the destination. */
        AgentState dest = sm->backfill_dest;
        sm->backfill_dest = AGENT_STATE_OWNER;
        sm->cascade = 0;
        change(sm, AGENT_STATE_BACKFILL, AGENT_ACT_IDLE, 29, "backfill command gone");
        if (sm->state != AGENT_STATE_BACKFILL)
                return 0;
        if (dest == AGENT_STATE_CLAIMED && sm->pending) {
                sm->cur = sm->pending;
                sm->pending = NULL;
                change(sm, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE, 31, "claimed");
        } else if (dest == AGENT_STATE_MATCHED)
                change(sm, AGENT_STATE_MATCHED, AGENT_ACT_IDLE, 32, "matched");
        else
                change(sm, AGENT_STATE_OWNER, AGENT_ACT_IDLE, 30, "backfill evicted");
        return 0;
}

int agent_sm_handle(AgentSlotSM *sm, int64_t now, const AgentEvent *ev, char *why, size_t whylen) {
        if (why && whylen)
                why[0] = 0;
        if (now > sm->now)
                sm->now = now;
        sm->cascade = 0;
        classad_set_now(sm->now);
        update_clock_attrs(sm);
        int r = sm_handle(sm, ev, why, whylen);
        classad_set_now(0);
        return r;
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
                if (sm->pre && ev->claim_id && strcmp(sm->pre->id, ev->claim_id) == 0) {
                        sm->pre->last_alive = sm->now;
                        return 0;
                }
                if (check_cur_claim(sm, ev->claim_id, why, whylen) < 0)
                        return -ENOENT;
                sm->cur->last_alive = sm->now;
                return 0;
        case AGENT_EV_DEACTIVATE: {
                int r = check_cur_claim(sm, ev->claim_id, why, whylen);
                if (r < 0)
                        return r;
                if (!sm->cur->active)
                        return refuse(why, whylen, -EINVAL, "%s runs no job", sm->name);
                if (sm->act == AGENT_ACT_SUSPENDED)
                        action(sm, AGENT_DO_CONTINUE_JOB, sm->cur, "deactivate");
                action(sm, ev->fast ? AGENT_DO_HARD_KILL : AGENT_DO_SOFT_KILL, sm->cur, "deactivate");
                return 0;
        }
        case AGENT_EV_RELEASE:
                return on_release(sm, ev, why, whylen);
        case AGENT_EV_VACATE:
                return on_vacate(sm, ev);
        case AGENT_EV_DRAIN:
                if (sm->draining)
                        return refuse(why, whylen, -EALREADY, "%s is already draining", sm->name);
                sm->draining = true;
                sm->drain_how = ev->drain;
                publish_state(sm);
                wind_down(sm, ev->drain == AGENT_DRAIN_FAST, ev->drain == AGENT_DRAIN_QUICK, false, "draining");
                return 0;
        case AGENT_EV_CANCEL_DRAIN:
                if (!sm->draining)
                        return refuse(why, whylen, -EALREADY, "%s is not draining", sm->name);
                sm->draining = false;
                if (sm->cur && !sm->cur->preempt_was_true && !sm->shutting_down)
                        sm->cur->irreversible = false;
                publish_state(sm);
                sm_eval(sm);
                return 0;
        case AGENT_EV_SHUTDOWN:
                sm->shutting_down = true;
                sm->shutdown_how = ev->shutdown;
                publish_state(sm);
                wind_down(sm, ev->shutdown == AGENT_SHUTDOWN_FAST, false, ev->shutdown == AGENT_SHUTDOWN_PEACEFUL,
                          "shutting down");
                return 0;
        case AGENT_EV_BACKFILL_STARTED:
                return on_backfill(sm, true);
        case AGENT_EV_BACKFILL_EXIT:
                return on_backfill(sm, false);
        default:
                return refuse(why, whylen, -EINVAL, "unknown event");
        }
}

/* ---- life cycle and queries ---- */

int agent_sm_new(const char *slot_name, ClassAd *ad, const AgentPolicyKnobs *knobs, const AgentPolicyHooks *hooks,
                 void *userdata, int64_t now, AgentSlotSM **ret) {
        AgentSlotSM *sm = calloc(1, sizeof *sm);
        if (!sm)
                return -ENOMEM;
        sm->name = strdup(slot_name);
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
        sm->backfill_dest = AGENT_STATE_OWNER;
        publish_state(sm);
        *ret = sm;
        return 0;
}

void agent_sm_free(AgentSlotSM *sm) {
        if (!sm)
                return;
        claim_free(sm->cur);
        claim_free(sm->pre);
        claim_free(sm->pending);
        free(sm->match_id);
        free(sm->name);
        free(sm);
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
        if (sm->cur && sm->cur->lease > 0 && (sm->state == AGENT_STATE_CLAIMED))
                t = min64(t, sm->cur->last_alive + sm->cur->lease + 1);
        if (sm->pre && sm->pre->lease > 0)
                t = min64(t, sm->pre->last_alive + sm->pre->lease + 1);
        if (sm->state == AGENT_STATE_CLAIMED && sm->act == AGENT_ACT_IDLE && sm->cur &&
            sm->knobs.claim_worklife >= 0)
                t = min64(t, sm->cur->begun + sm->knobs.claim_worklife + 1);
        if (sm->state == AGENT_STATE_CLAIMED && sm->act == AGENT_ACT_RETIRING && sm->cur && sm->cur->active) {
                int64_t rem = retirement_remaining(sm) - max_vacate_time(sm);
                t = min64(t, sm->now + (rem > 0 ? rem : 0));
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

bool agent_sm_job_active(const AgentSlotSM *sm) {
        return sm->cur && sm->cur->active;
}

bool agent_sm_has_claim(const AgentSlotSM *sm, const char *claim_id) {
        if (!claim_id)
                return false;
        return (sm->cur && strcmp(sm->cur->id, claim_id) == 0) || (sm->pre && strcmp(sm->pre->id, claim_id) == 0);
}

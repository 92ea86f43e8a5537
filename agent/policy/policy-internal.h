/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy-internal.h — what the files of the slot state machine share:
 * policy.c (evaluation, state changes, the periodic evaluation, queries),
 * policy-claim.c (claims, the slot ad's claim attributes, retirement and
 * vacate times), policy-events.c (the events of agent_sm_handle) and
 * policy-config.c (names, knobs, the policy expressions of the slot ad).
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "policy.h"

#define POL_MAX_CASCADE 32 /* transitions one call may chain: a policy that flips settles next time */

/* A claim: the current one, a preempting one waiting for the slot, or one
 * waiting for the backfill command to go. */
typedef struct Claim {
        char *id;
        ClassAd *job;            /* the request ad, then the job ad once activated */
        double rank;             /* RANK of the slot for this job */
        int64_t begun;           /* when the claim began (CLAIM_WORKLIFE) */
        int64_t lease;           /* seconds; 0: none */
        int64_t lease_asked;     /* what the job asked for (more than lease when MAX_CLAIM_LEASE_DURATION cut it) */
        int64_t last_alive;      /* the last keep-alive: the lease ends at last_alive + lease */
        unsigned activations;    /* jobs started under this claim */
        bool active;             /* a job runs */
        int64_t job_start;
        int64_t suspended_total; /* seconds the current job spent suspended */
        int64_t suspended_since; /* 0: not suspended */
        bool preempt_was_true;   /* PREEMPT became TRUE for this job: irreversible retirement */
        bool irreversible;       /* vacate, release, lease expiry, shutdown: no unretiring */
        bool vanilla;
        const char *end_reason;  /* why the claim is being taken away (a string literal) */
        char job_id[48];         /* "ClusterId.ProcId" of the job, "" if unknown */
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

        Claim *cur;               /* the claim (Claimed, Preempting) */
        Claim *pre;               /* a preempting claim waiting for the slot */
        char *match_id;           /* Matched: the claim id the match announced (NULL: any) */
        Claim *pending;           /* Backfill/Killing: the claim waiting for the backfill to end */
        AgentState backfill_dest; /* where Backfill/Killing leads; AGENT_STATE_BACKFILL: nowhere yet */

        bool draining, shutting_down;
        char *broken;             /* why the slot is broken (agent_sm_set_broken), NULL: it is not */
        bool fast_kill;           /* evict with a hard kill, no vacating */
        AgentDrainHow drain_how;
        AgentShutdownHow shutdown_how;

        int64_t vacate_deadline;
        int64_t killing_deadline;
        bool backfill_running;
        int64_t benchmarked_at;   /* when benchmarks last ended (no new run in that evaluation) */
        int64_t cpu_busy_since;   /* 0: CpuBusy is not TRUE */
        const char *unretire_why; /* why a retiring claim may go back to Busy (19) */
        int cascade;
        int depth;                /* nesting of agent_sm_eval / agent_sm_handle (hooks may call back) */
};

/* ---- policy.c ---- */

/* Entering and leaving a public entry point: the clock of the ClassAd
 * evaluator is pinned to sm->now while the outermost call runs. */
void pol_begin(AgentSlotSM *sm, int64_t now);
void pol_end(AgentSlotSM *sm);

/* Attribute `name` of the slot ad with job as TARGET (job may be NULL: a
 * local evaluation). -1 UNDEFINED/ERROR/not a boolean or number, 0, 1. */
int pol_eval_bool(const AgentSlotSM *sm, const char *name, const ClassAd *job);
/* Attribute `name` of `my` as a number (booleans count 0 or 1). */
bool pol_eval_number(const ClassAd *my, const char *name, const ClassAd *target, double *ret);
/* A policy expression in the current claim's context, NAME_VANILLA first
 * for a vanilla job when it evaluates (3.5.7.4). */
int pol_eval_policy(const AgentSlotSM *sm, const char *name);

/* ---- policy-claim.c ---- */

void pol_publish(AgentSlotSM *sm);
void pol_action(AgentSlotSM *sm, AgentActionType type, const Claim *c, const char *reason);

Claim *pol_claim_new(AgentSlotSM *sm, const char *id, const ClassAd *job);
void pol_claim_free(Claim *c);
void pol_claim_set_job_id(Claim *c);
bool pol_job_is_vanilla(const ClassAd *job);
/* Sets c->lease (bounded by MAX_CLAIM_LEASE_DURATION) and c->lease_asked from job. */
void pol_claim_set_lease(const AgentSlotSM *sm, Claim *c, const ClassAd *job);
/* When the claim's lease runs out: its last keep-alive (or activation) plus
 * the lease, the first second at which it has expired; INT64_MAX with no
 * lease. The expiry and agent_sm_next_deadline() both use it. */
int64_t pol_lease_end(const Claim *c);
/* Forget the preempting (or the pending backfill) claim, telling its claimant. */
void pol_drop_pre(AgentSlotSM *sm, const char *reason);
void pol_drop_pending(AgentSlotSM *sm, const char *reason);

bool pol_worklife_expired(const AgentSlotSM *sm);
/* Is the claim retiring (a preempting claim, PREEMPT, vacate, release,
 * draining, shutting down)? */
bool pol_in_retirement(const AgentSlotSM *sm);
const char *pol_retirement_reason(const AgentSlotSM *sm);
/* Seconds of MaxJobRetirementTime the job has left (0 with no job). */
int64_t pol_retirement_remaining(const AgentSlotSM *sm);
/* The vacate time the job will be granted. */
int64_t pol_max_vacate_time(const AgentSlotSM *sm);
/* Retirement is over: no time left, or no more than the vacate time. */
bool pol_retirement_expired(const AgentSlotSM *sm);

/* ---- policy.c: changing state ---- */

void pol_change(AgentSlotSM *sm, AgentState s, AgentActivity a, int number, const char *reason);
void pol_eval(AgentSlotSM *sm);
void pol_enter_preempting(AgentSlotSM *sm, int number, const char *reason);
void pol_leave_preempting(AgentSlotSM *sm, const char *reason);
/* The claim retires (PREEMPT, vacate, drain, shutdown): from Busy or
 * Suspended into Retiring (number), from Idle straight to Preempting (10). */
void pol_retire_claim(AgentSlotSM *sm, int number, const char *reason);

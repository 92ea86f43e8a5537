/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.h — the policy state machine of one slot (seed 002, 3.5.5 to
 * 3.5.8): states, activities and the numbered transitions of the manual's
 * figure 3.2, driven by the administrator's expressions (START, IS_OWNER,
 * WANT_SUSPEND, SUSPEND, CONTINUE, PREEMPT, WANT_VACATE, KILL, RANK,
 * MAXJOBRETIREMENTTIME, MachineMaxVacateTime and their _VANILLA variants).
 *
 * Pure: the clock and every event are injected; the machine's sensor
 * values (KeyboardIdle, LoadAvg, ...) are attributes of the slot's ad,
 * which the caller keeps current. The machine never touches a process: it
 * asks for actions (start the job, suspend it, soft-kill it, ...) through
 * a hook, and learns of their outcome through events (job-exit, ...).
 *
 * The slot ad belongs to the caller; the state machine keeps its state
 * attributes current (State, Activity, EnteredCurrentState,
 * EnteredCurrentActivity, Requirements, JobStart, RemoteUser, RemoteOwner,
 * RemoteAccountingGroup, GlobalJobId, JobId, CurrentRank, LastBenchmark,
 * and at every evaluation ClockMin, ClockDay, CpuIsBusy, CpuBusyTime) and
 * evaluates the policy expressions as attributes of that ad with the job
 * ad as TARGET, as HTCondor's startd does (so PREEMPT may refer to SUSPEND).
 *
 * The code is in policy.c (evaluation, state changes, the periodic
 * evaluation), policy-claim.c (claims, retirement), policy-events.c
 * (agent_sm_handle) and policy-config.c (names, knobs, the expressions of
 * the slot ad).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "classad.h"
#include "config.h"
#include "state.h"

typedef enum AgentEventType {
        AGENT_EV_MATCH,        /* the central manager matched the slot (claim_id) */
        AGENT_EV_CLAIM,        /* request to claim (claim_id, job = the request ad) */
        AGENT_EV_ACTIVATE,     /* activate the claim (claim_id, job = the job ad) */
        AGENT_EV_JOB_EXIT,     /* the job of the slot ended (claim_id may be NULL) */
        AGENT_EV_KEEP_ALIVE,   /* claim_id */
        AGENT_EV_DEACTIVATE,   /* stop the job, keep the claim (claim_id, fast) */
        AGENT_EV_RELEASE,      /* the claimant gives the claim back (claim_id) */
        AGENT_EV_VACATE,       /* administrator: retire the claim, then evict (fast: hard kill at once) */
        AGENT_EV_DRAIN,        /* drain (drain) */
        AGENT_EV_CANCEL_DRAIN,
        AGENT_EV_SHUTDOWN,     /* the agent is stopping (shutdown) */
        AGENT_EV_BACKFILL_STARTED, /* the backfill command runs */
        AGENT_EV_BACKFILL_EXIT,    /* the backfill command ended */
        AGENT_EV_BENCHMARKS_DONE,  /* the benchmarks asked for by AGENT_DO_RUN_BENCHMARKS ended */
        AGENT_EV__MAX,
} AgentEventType;

typedef enum AgentDrainHow {
        AGENT_DRAIN_GRACEFUL, /* retirement first (MaxJobRetirementTime), then vacate */
        AGENT_DRAIN_QUICK,    /* vacate now (soft kill, then MachineMaxVacateTime) */
        AGENT_DRAIN_FAST,     /* hard kill now */
} AgentDrainHow;

typedef enum AgentShutdownHow {
        AGENT_SHUTDOWN_GRACEFUL, /* retirement as configured, then vacate */
        AGENT_SHUTDOWN_PEACEFUL, /* unlimited retirement: jobs run to the end */
        AGENT_SHUTDOWN_FAST,     /* hard kill now, no retirement */
} AgentShutdownHow;

typedef struct AgentEvent {
        AgentEventType type;
        const char *claim_id;
        const ClassAd *job;   /* CLAIM, ACTIVATE: copied */
        bool fast;            /* VACATE, DEACTIVATE */
        bool by_priority;     /* CLAIM on a claimed slot: preemption the manager decided
                               * for user priority (its reason Priority): a RANK no worse
                               * than the current claim's is enough */
        AgentDrainHow drain;
        AgentShutdownHow shutdown;
} AgentEvent;

const char *agent_event_name(AgentEventType t);
int agent_event_from_name(const char *name, AgentEventType *ret);

/* What the state machine asks of its caller. */
typedef enum AgentActionType {
        AGENT_DO_START_JOB,      /* start the claim's job (job ad in .job) */
        AGENT_DO_SUSPEND_JOB,
        AGENT_DO_CONTINUE_JOB,
        AGENT_DO_SOFT_KILL,      /* the job's KillSig to all its processes */
        AGENT_DO_HARD_KILL,      /* SIGKILL to all its processes */
        AGENT_DO_KILLING_TIMEOUT,/* KILLING_TIMEOUT passed in Killing: the job will not die */
        AGENT_DO_CLAIM_ENDED,    /* tell the claimant (claim_id) its claim is over (reason) */
        AGENT_DO_START_BACKFILL,
        AGENT_DO_KILL_BACKFILL,
        AGENT_DO_RELEASE_SLOT,   /* a dynamic slot is done: give its resources back */
        AGENT_DO_RUN_BENCHMARKS, /* run the benchmarks, then send AGENT_EV_BENCHMARKS_DONE
                                  * (only with knobs.benchmarks) */
        AGENT_DO__MAX,
} AgentActionType;

const char *agent_action_name(AgentActionType t);
int agent_action_from_name(const char *name, AgentActionType *ret);

/* AGENT_DO_CLAIM_ENDED names the claim that ended: usually the current
 * one, but also a preempting claim that will never get the slot (the slot
 * is vacated, drained or shut down, or START refuses its job when the
 * slot is free). */
typedef struct AgentAction {
        AgentActionType type;
        const char *claim_id; /* the claim concerned, when there is one */
        const ClassAd *job;   /* AGENT_DO_START_JOB: the job ad */
        const char *reason;   /* a short sentence */
} AgentAction;

typedef struct AgentTransition {
        int64_t time;
        AgentState from_state, to_state;
        AgentActivity from_act, to_act;
        int number;           /* the transition of figure 3.2; 0 when it has none */
        const char *reason;   /* e.g. "SUSPEND is TRUE", "MATCH_TIMEOUT expired" */
        const char *claim_id; /* the current claim, if any */
        const char *job_id;   /* the current job (JobId / GlobalJobId), if any */
} AgentTransition;

typedef struct AgentPolicyHooks {
        void (*transition)(void *userdata, const AgentTransition *t);
        void (*action)(void *userdata, const AgentAction *a);
        /* Draining: are all slots of the machine drained (in Drained)? NULL:
         * this slot alone counts. */
        bool (*all_drained)(void *userdata);
} AgentPolicyHooks;

/* Knobs read once per slot (SLOT<N>_ forms honoured). */
typedef struct AgentPolicyKnobs {
        int64_t match_timeout;          /* MATCH_TIMEOUT, 120 */
        int64_t killing_timeout;        /* KILLING_TIMEOUT, 30 */
        int64_t claim_worklife;         /* CLAIM_WORKLIFE, -1: infinite */
        int64_t alive_interval;         /* ALIVE_INTERVAL, 300 */
        int64_t max_claim_alives_missed;/* MAX_CLAIM_ALIVES_MISSED, 6 */
        int64_t max_claim_lease;        /* MAX_CLAIM_LEASE_DURATION, 7200: the longest lease a claim gets
                                         * (a longer JobLeaseDuration is cut to it); <= 0: no bound */
        bool backfill;                  /* ENABLE_BACKFILL and BACKFILL_COMMAND set */
        bool dynamic;                   /* a dynamic slot: released when unclaimed */
        /* Set by the caller, never by agent_policy_knobs(): */
        bool benchmarks;                /* the caller answers AGENT_DO_RUN_BENCHMARKS (else
                                         * RunBenchmarks is not evaluated) */
        bool clock_utc;                 /* ClockMin and ClockDay in UTC rather than local time */
} AgentPolicyKnobs;

int agent_policy_knobs(const Config *cfg, unsigned slot_id, AgentPolicyKnobs *ret, ConfigError *err);

/* Puts the policy expressions of slot slot_id into ad (START, IS_OWNER,
 * WANT_SUSPEND, SUSPEND, CONTINUE, PREEMPT, WANT_VACATE, KILL, RANK,
 * MaxJobRetirementTime, MachineMaxVacateTime, START_BACKFILL,
 * EVICT_BACKFILL, PERIODIC_CHECKPOINT, RunBenchmarks, CpuBusy, and each
 * NAME_VANILLA that the configuration defines). A malformed expression:
 * -EINVAL with err. */
int agent_policy_fill_ad(const Config *cfg, unsigned slot_id, ClassAd *ad, ConfigError *err);

typedef struct AgentSlotSM AgentSlotSM;

/* A slot in Owner/Idle at time now; the first agent_sm_eval() may move it
 * on to Unclaimed. ad is borrowed and must outlive the machine. The hooks
 * may call agent_sm_handle() or agent_sm_eval() on the same machine (an
 * action answered at once, as a backfill command that has started). */
int agent_sm_new(const char *slot_name, ClassAd *ad, const AgentPolicyKnobs *knobs, const AgentPolicyHooks *hooks,
                 void *userdata, int64_t now, AgentSlotSM **ret);
void agent_sm_free(AgentSlotSM *sm);

/* Evaluate the policy at now (the periodic evaluation). */
void agent_sm_eval(AgentSlotSM *sm, int64_t now);

/* An event at now. A refusal returns a negative errno with why filled and
 * changes nothing:
 *   -ENOENT    no such claim on the slot (activate, keep-alive, release,
 *              deactivate, job-exit with another claim id; a claim whose id
 *              is not the one the match announced);
 *   -EBUSY     the slot is taken: a claim on a claimed slot without a
 *              better RANK, or by_priority with a worse one, on a slot that
 *              already has a preempting claim, or in a state that takes
 *              none; an activation of a claim that is not Claimed/Idle; a
 *              match of a slot that is not Owner, Unclaimed or Backfill;
 *   -EPERM     START is not TRUE for the job, the slot is draining or
 *              shutting down, the claim is being preempted or its
 *              CLAIM_WORKLIFE has expired;
 *   -EEXIST    a claim with an id the slot already holds;
 *   -EALREADY  drain of a draining slot, cancel-drain of one that is not;
 *   -EINVAL    an event that needs what it lacks (a claim id, a job ad) or
 *              makes no sense now (job-exit or deactivate with no job, an
 *              activation in a state other than Claimed). */
int agent_sm_handle(AgentSlotSM *sm, int64_t now, const AgentEvent *ev, char *why, size_t whylen);

/* The earliest time at which a timer could move the slot (match timeout,
 * vacate time, killing timeout, lease expiry, CLAIM_WORKLIFE of an idle
 * claim, retirement end); INT64_MAX when none. Expressions that change
 * with the clock (START, SUSPEND, ...) are not timers: evaluate
 * periodically as well. */
int64_t agent_sm_next_deadline(const AgentSlotSM *sm);

/* The slot is broken (HTCondor's broken slots: a job's cgroup that would
 * not empty, a process the kernel would not let die): it never runs
 * another job. From now on the ad has SlotBrokenReason = reason, START and
 * Requirements are FALSE, a match or a claim is refused (-EPERM, "slot1 is
 * broken: ..."), an idle claim ends (START is FALSE), and a dynamic slot
 * is not released when its claim ends (its resources stay out of use).
 * A job that runs is not touched here: its exit ends its claim as usual
 * and the slot settles in Owner (IS_OWNER's default is START =?= FALSE).
 * Nothing undoes it (a new agent starts afresh); a second call keeps the
 * first reason. -ENOMEM, -EINVAL (no reason). */
int agent_sm_set_broken(AgentSlotSM *sm, int64_t now, const char *reason);
/* Why the slot is broken; NULL when it is not. */
const char *agent_sm_broken(const AgentSlotSM *sm);

AgentState agent_sm_state(const AgentSlotSM *sm);
AgentActivity agent_sm_activity(const AgentSlotSM *sm);
/* The current claim's id and job ad (NULL when unclaimed). */
const char *agent_sm_claim_id(const AgentSlotSM *sm);
const ClassAd *agent_sm_job(const AgentSlotSM *sm);
/* The lease of the claim claim_id (current, preempting or pending) in
 * seconds (0: none), and *ret_asked what its job asked for (the same
 * unless MAX_CLAIM_LEASE_DURATION cut it); -ENOENT for no such claim. */
int agent_sm_claim_lease(const AgentSlotSM *sm, const char *claim_id, int64_t *ret_lease, int64_t *ret_asked);
/* The current claim's last keep-alive (an activation counts as one) and
 * its lease in seconds (0: none): false when unclaimed. */
bool agent_sm_claim_alive(const AgentSlotSM *sm, int64_t *ret_last_alive, int64_t *ret_lease);
/* Sets the current claim's last keep-alive to when (a claim re-adopted
 * after a restart: the last keep-alive an earlier run of the agent heard),
 * so that its lease ends when it would have; the next evaluation ends a
 * claim whose lease is over. -ENOENT when unclaimed. */
int agent_sm_set_claim_alive(AgentSlotSM *sm, int64_t when);
/* Is a job running (activated and not yet exited)? */
bool agent_sm_job_active(const AgentSlotSM *sm);
/* Does this claim id belong to the slot (current or preempting claim, or a
 * claim waiting for the backfill command to end)? */
bool agent_sm_has_claim(const AgentSlotSM *sm, const char *claim_id);

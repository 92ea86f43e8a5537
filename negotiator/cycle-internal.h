/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cycle-internal.h — the state of one negotiation cycle, shared by
 * cycle.c (groups, the pie, submitters) and match.c (one job against the
 * pool).
 */
#pragma once

#include "carve/carve.h"
#include "negotiator-internal.h"

#define NEGO_MAX_RES CARVE_MAX_RES /* Cpus, Memory, Disk and the pool's custom resources (c->res) */
#define NEGO_N_KEEP 6          /* the NegoKeep reasons */
#define NEGO_MAX_BREAKDOWNS 32 /* rejections explained clause by clause, per cycle */

typedef struct NegoSlot {
        ClassAd *ad;        /* the input's; an owned copy for a partitionable slot */
        bool own_copy;
        bool skip;          /* Claimed without a job, Matched, Preempting: no candidate */
        bool running;       /* Claimed with a job: a candidate only by preemption */
        bool partitionable;
        bool taken;         /* matched this cycle */
        bool promised;      /* a claim of an earlier cycle is on its way to it (NegoPending) */
        bool in_retirement; /* RetirementTimeRemaining > 0 */
        char *remote_user;  /* the running job's submitter */
        size_t remote_sub;  /* that submitter's first namesake among the input's, or SIZE_MAX */
        size_t remote_group; /* and its group */
        double remote_in_use; /* its weight in use */
        double remote_eup;
        double current_rank;
        double weight;
        uint32_t res_set;   /* a partitionable slot's resources: c->res_sets */
} NegoSlot;

/* The resources a p-slot is carved by (carve_resources: its
 * MachineResources), each's place in the cycle's (-1: past NEGO_MAX_RES). */
typedef struct NegoResSet {
        CarveResources res;
        int8_t at[CARVE_MAX_RES];
        uint32_t mask;  /* the cycle's resources it has */
        bool untracked; /* a resource past NEGO_MAX_RES: the p-slot is never carved */
} NegoResSet;

/* Why a running slot that both Requirements accept is no candidate. */
typedef enum NegoKeep {
        NEGO_KEEP_NONE,
        NEGO_KEEP_EARLY,     /* in its retirement time */
        NEGO_KEEP_SAME_USER, /* runs the submitter's own job */
        NEGO_KEEP_PRIORITY,  /* the running job's submitter has the better EUP */
        NEGO_KEEP_POLICY,    /* PREEMPTION_REQUIREMENTS false */
        NEGO_KEEP_RANK,      /* the slot's RANK prefers its job */
} NegoKeep;

/* Why a job matched nothing: counts over the slots considered. */
typedef struct NegoWhy {
        size_t slots;      /* considered */
        size_t job_false;  /* the job's Requirements false */
        size_t slot_false; /* the job's true, the slot's false */
        size_t taken;      /* both true, taken this cycle (or the p-slot too small now) */
        size_t kept[NEGO_N_KEEP]; /* running, not preemptible, by reason */
} NegoWhy;

typedef enum NegoJobState {
        JOB_IDLE,      /* not tried yet (or only stopped by a limit) */
        JOB_MATCHED,
        JOB_REJECTED,  /* matched nothing this cycle */
} NegoJobState;

typedef struct NegoJob {
        ClassAd *ad;
        size_t index; /* in the submitter's jobs */
        int64_t prio, qdate, cluster, proc;
        double demand; /* its weight in the demand */
        NegoJobState state;
        char *reason; /* rejection */
        bool hold;    /* its own Requirements or Rank ran out of the evaluation budget: reason says so */
        int limit;    /* the last limit that stopped it: 0 none, 1 submitter's share, 2 group quota */
        uint32_t ac;  /* its autocluster (the fast path) */
} NegoJob;

typedef struct NegoSub {
        const char *name;
        size_t index;  /* in the input */
        size_t same;   /* the first submitter of the input with this name (usually itself) */
        size_t next_same; /* the next one with this name, or SIZE_MAX */
        size_t group;
        double eup;
        double *used;  /* weight in use now (points into the cycle's usage table) */
        NegoJob *jobs; /* sorted: JobPrio desc, QDate, ClusterId, ProcId */
        size_t n_jobs;
        size_t n_left; /* jobs neither matched nor rejected */
} NegoSub;

typedef struct NegoPick {
        size_t slot;
        int reason;
        double amounts[NEGO_MAX_RES]; /* c->res */
} NegoPick;

typedef struct NegoCycle {
        const NegoInput *in;
        const NegoSettings *s;
        const AcctGroups *groups;
        NegoSlot *slots;
        size_t n_slots;
        CarveResources res;  /* the resources of the pool's p-slots: Cpus, Memory, Disk, then custom ones */
        NegoResSet *res_sets; /* the distinct resource lists of the p-slots */
        uint32_t n_res_sets, cap_res_sets;
        size_t slots_left;   /* not taken (p-slots count while they have room) */
        double pool_weight;
        double min_weight;   /* the smallest slot weight > 0 */
        NegoSub *subs;
        size_t n_subs;
        double *usage;       /* weight in use per submitter of the input (+ remote users below) */
        struct NegoAdjust *adjust; /* the usage claims on their way add (or take), by name */
        size_t n_adjust;
        double *group_usage; /* per group: its own submitters' weight in use */
        double *group_quota; /* per group: its own quota (0 outside groups) */
        double *group_alloc;
        NegoMatch *matches;
        size_t n_matches, cap_matches;
        size_t breakdowns;
        NegoWhy why;         /* why the job being matched matched nothing */
        bool over_budget;    /* the job being matched: its Requirements or Rank against a slot ran out
                                of the evaluation budget; its search stops (nothing more evaluated) */
        size_t over_budget_slot; /* the slot it was evaluated against */
        NegoStats stats;
        struct NegoFast *fast; /* the fast path's state; NULL: plain */
} NegoCycle;

/* Resource i of c->res of a slot ad, 0 when not a number. */
double nego_slot_amount(const NegoCycle *c, const ClassAd *slot, size_t i);
/* Slot i's resources (a partitionable slot's, at the cycle's start). */
int nego_pslot_resources(NegoCycle *c, size_t i);
/* What job asks of p-slot i as it is now (whole: as given), in c->res's
 * order: false when it cannot be told (carve_ask refuses). */
bool nego_pslot_ask(const NegoCycle *c, size_t i, bool whole, const ClassAd *job, CarveAsk *ret);
/* What of ask is taken from have (amounts of c->res): false when it does
 * not fit (carve_fit). */
bool nego_ask_take(const NegoCycle *c, const CarveAsk *ask, const double *have, double *ret);
/* Both, against what is left of p-slot i (whole: as given). */
bool nego_pslot_fits(const NegoCycle *c, size_t i, bool whole, const ClassAd *job, double *amounts);
/* Whether p-slot slot is carved by resource i of c->res. */
bool nego_pslot_has(const NegoCycle *c, const NegoSlot *slot, size_t i);
/* What is left of a p-slot, saved and put back (a match the limit refused). */
void nego_pslot_save(const NegoCycle *c, const NegoSlot *slot, double *saved);
int nego_pslot_restore(const NegoCycle *c, NegoSlot *slot, const double *saved);
int nego_pslot_consume(const NegoCycle *c, NegoSlot *slot, const double *amounts, double *ret_cost);
/* A candidate's ranks: NaN counts as 0 (no preference), so that the
 * order of candidates is total. */
static inline double nego_rank_value(double d) {
        return d != d ? 0 : d;
}

/* The submitter's ephemeral attributes of 3.4.3, written into job. */
void nego_job_ephemeral(const NegoCycle *c, const NegoSub *sub, ClassAd *job);
/* Whether PREEMPTION_REQUIREMENTS holds (asked only when it matters). */
typedef bool (*NegoPreqFn)(void *userdata);
/* The reason a running slot is a candidate for a job of sub, given the
 * slot's Rank for the job; or -1 and why not in *keep. */
int nego_preemption_reason(const NegoCycle *c, const NegoSlot *slot, const NegoSub *sub, double rank, NegoPreqFn preq,
                           void *userdata, NegoKeep *keep);
/* The best slot for job: 0 and *ret, or -ENOENT with c->why filled. */
int nego_best_slot(NegoCycle *c, NegoSub *sub, NegoJob *job, NegoPick *ret);
/* The job's Requirements (or Rank, rank true) against slot, noting in c
 * whether the evaluation ran out of its budget; false (0) once it has. */
bool nego_job_req(NegoCycle *c, const ClassAd *job, size_t slot);
double nego_job_rank(NegoCycle *c, const ClassAd *job, size_t slot);
/* Whether job's own Requirements or Rank, evaluated alone (no TARGET),
 * run out of the evaluation budget: then the hold reason (malloc'd) in
 * *ret_reason (may be NULL), and true. */
bool nego_job_too_expensive(const ClassAd *job, char **ret_reason);
/* The words for c->why, job's (malloc'd). */
char *nego_why_text(NegoCycle *c, const NegoJob *job);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiator.h — the matchmaker: one negotiation cycle as a pure function
 * (seed 000, 3.4.3, 3.4.5, 3.4.6; seed 001; seed 003). Slot ads, the
 * submitters with their idle jobs, the accounts and the configuration go
 * in; matches (with their reason and cost), the preemptions they imply and
 * a reason for every job that did not match come out. No socket, no clock
 * read, no database write: the accounts are only read.
 *
 * The folder: negotiator/ is the matchmaker alone (cycle*.c, match.c,
 * settings.c, the fast path: intern.c, autocluster.c, lists.c, shape.c,
 * pslot-tree.c, analysis.c), over accounting/, classad/ and config/. The
 * job queue and the user commands are queue/'s, the simulator sim/'s,
 * the daemon negotiator/daemon/'s (glean-negotiator, the one that uses
 * all three).
 *
 * The cycle, as 3.4.5 and 3.4.6 tell it and HTCondor's negotiator does it:
 *   - quota groups (GROUP_NAMES) in GROUP_SORT_EXPR order, each bounded by
 *     its allocation from the accounting library (acct_quotas_compute),
 *     up to GROUP_QUOTA_MAX_ALLOCATION_ROUNDS rounds so that what one group
 *     cannot use goes to the others; without groups, the whole pool;
 *   - within a group, the pie: each submitter's slice is its share
 *     (inverse to EUP) of the pie less what it already holds; submitters
 *     in EUP order, best first, each offered its slice; spins repeat with
 *     what is left until no slot or no job is left or a spin matched
 *     nothing;
 *   - a submitter's jobs by JobPrio (higher first), QDate (older first),
 *     ClusterId, ProcId; a job that does not match does not block the next
 *     (seed 001); after a job of a cluster fails to match, the rest of the
 *     cluster is skipped in that spin unless NEGOTIATE_ALL_JOBS_IN_CLUSTER;
 *   - a job's candidates: the slots where both Requirements hold; a slot
 *     Claimed and not running a job is skipped; an idle slot is a candidate
 *     by reason No Preemption; a running one by reason Rank when its RANK
 *     prefers the job to the running one (CurrentRank), or by reason
 *     Priority when the job's submitter has a better EUP than the running
 *     one's, PREEMPTION_REQUIREMENTS holds and the slot's RANK is not worse;
 *     sorted by NEGOTIATOR_PRE_JOB_RANK, the job's Rank,
 *     NEGOTIATOR_POST_JOB_RANK, the reason, PREEMPTION_RANK; the best wins;
 *   - a partitionable slot is matched many times: each match consumes what
 *     its Consumption<Res> expressions (or the MODIFY_REQUEST_EXPR_*
 *     defaults) give, the rest stays matchable, and the match costs
 *     SlotWeight before less SlotWeight after (seed 003).
 *
 * Ads are borrowed. The cycle writes the ephemeral attributes of 3.4.3
 * (SubmitterUserPrio, RemoteUserPrio, ... SubmitterGroup, RemoteGroup)
 * into the ads it is given, as HTCondor's negotiator does into its copies
 * (the fast path writes the Submitter* ones into a job's ad only when an
 * expression in play reads them).
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, ret_*.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "carve/carve.h"
#include "classad.h"
#include "config.h"

/* ---- settings ---- */

typedef struct NegoSettings NegoSettings;

/* The negotiator's knobs from cfg: NEGOTIATOR_PRE_JOB_RANK,
 * NEGOTIATOR_POST_JOB_RANK, PREEMPTION_REQUIREMENTS(_STABLE),
 * PREEMPTION_RANK(_STABLE), NEGOTIATOR_CONSIDER_PREEMPTION,
 * NEGOTIATOR_CONSIDER_EARLY_PREEMPTION, NEGOTIATE_ALL_JOBS_IN_CLUSTER,
 * NEGOTIATOR_USE_SLOT_WEIGHTS, SLOT_WEIGHT, GROUP_SORT_EXPR,
 * GROUP_QUOTA_MAX_ALLOCATION_ROUNDS, MODIFY_REQUEST_EXPR_REQUEST*,
 * NEGOTIATOR_MATCHLIST_CACHING, PREEMPTION_REQUIREMENTS_STABLE,
 * PREEMPTION_RANK_STABLE. A malformed one: -EINVAL, err says where. */
int nego_settings_from_config(const Config *cfg, NegoSettings **ret, ConfigError *err);
void nego_settings_free(NegoSettings *s); /* accepts NULL */

/* What a slot weighs, the one rule of the matchmaker, the pie and the
 * accounts: 1 without NEGOTIATOR_USE_SLOT_WEIGHTS; else the slot's own
 * SlotWeight when its ad has one, else SLOT_WEIGHT evaluated against the
 * slot, else its Cpus (HTCondor's default SLOT_WEIGHT); 1 for a weight
 * that is not a number, is negative or not finite. A claim is charged its
 * slot's weight: a dynamic slot's own, once its ad is known (HTCondor's
 * accountant rebuilds usage from the claimed slots each cycle), the
 * match's cost W(S) - W(S') of the partitionable slot until then. */
double nego_settings_slot_weight(const NegoSettings *s, const ClassAd *slot);

/* ---- one cycle ---- */

typedef struct NegoSubmitter {
        const char *name;  /* the accounting name: "alice@pool", "group_a.bob@pool", "nice-user.x@pool" */
        ClassAd **jobs;    /* its idle jobs, in any order (borrowed) */
        size_t n_jobs;
} NegoSubmitter;

/* A claim on its way to a slot of the input, matched by an earlier cycle
 * and not charged by the accounts yet: its RequestClaim unanswered, or
 * granted and waiting for the job it preempts to go. Its slot stays in the
 * pie but is not matched again, whatever its ad says by now; its
 * submitter counts cost in use, and the submitter of the job it preempts
 * (victim, whose claim the accounts charge until that job is gone; NULL
 * when none) no longer counts victim_weight: each slot counts once, for
 * the submitter it is promised to, as HTCondor's accountant moves a
 * preempted slot to its new user at the match. */
typedef struct NegoPending {
        size_t slot;           /* index into slots */
        const char *submitter; /* the accounting name the claim is charged to */
        double cost;
        const char *victim;
        double victim_weight;
} NegoPending;

typedef struct NegoInput {
        ClassAd **slots; /* every slot ad of the pool (borrowed), whatever its state */
        size_t n_slots;
        const NegoPending *pending; /* claims on their way (NULL when none) */
        size_t n_pending;
        NegoSubmitter *submitters;
        size_t n_submitters;
        const Accountant *accounts; /* priorities, usage in force, groups and their quotas */
        const NegoSettings *settings;
        bool plain;                 /* the plain algorithm: no autoclusters, no cached candidate
                                       lists (the reference the fast path is tested against; the
                                       fast path gives the same matches and reasons, at a cost per
                                       job shape and slot shape rather than per job and slot) */
} NegoInput;

typedef enum NegoReason {
        NEGO_NO_PREEMPTION = 0,
        NEGO_RANK = 1,
        NEGO_PRIORITY = 2,
} NegoReason;

const char *nego_reason_name(NegoReason r); /* "No Preemption", "Rank", "Priority" */

typedef struct NegoMatch {
        size_t submitter;   /* index into input->submitters */
        size_t job;         /* index into that submitter's jobs */
        size_t slot;        /* index into input->slots */
        NegoReason reason;
        double cost;        /* slot weight charged (W(S) - W(S') for a partitionable slot) */
        char *preempted_user; /* the running job's RemoteUser when reason != No Preemption
                                 (malloc'd; freed with the result) */
        /* For a partitionable slot: what the match takes from it. */
        bool partitionable;
        double cpus, memory, disk;
        double custom[CARVE_MAX_CUSTOM]; /* its custom resources, in the p-slot's MachineResources order */
} NegoMatch;

typedef struct NegoRejection {
        size_t submitter, job;
        char *reason;       /* words people understand, with counts */
        bool hold;          /* hold the job (HoldReasonCode 5, JobPolicyUndefined) with reason: its
                               own Requirements or Rank run out of the evaluation budget
                               (CLASSAD_EVAL_BUDGET), and would in every cycle */
} NegoRejection;

typedef struct NegoStats {
        size_t spins;                 /* pie spins, over all groups and rounds */
        size_t jobs_considered;       /* jobs the cycle tried to match */
        size_t autoclusters;          /* distinct job shapes: jobs agreeing on every attribute the
                                         expressions in play read (each job its own when those
                                         expressions read what cannot be named, eval() ...) */
        size_t slot_shapes;           /* distinct slot shapes for the jobs' Requirements, likewise */
        size_t evaluations;           /* Requirements evaluated (a job's or a slot's) */
} NegoStats;

typedef struct NegoResult {
        NegoMatch *matches;
        size_t n_matches;
        NegoRejection *rejections;
        size_t n_rejections;
        NegoStats stats;
        /* Per group (as acct_groups_get numbers them): its allocation this
         * cycle and the slot weight in use once the matches are made. */
        double *group_allocated;
        double *group_in_use;
        size_t n_groups;
} NegoResult;

int nego_cycle(const NegoInput *in, NegoResult *ret);
void nego_result_clear(NegoResult *r);

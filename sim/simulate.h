/* SPDX-License-Identifier: Apache-2.0 */
/*
 * simulate.h — the matchmaker run over a scenario (scenario.h), cycle
 * after cycle, as `glean negotiate --simulate` does: a pool of slots that
 * jobs claim and leave, an accountant in memory charging their usage, and
 * nego_cycle() deciding every NEGOTIATOR_INTERVAL.
 *
 * The folder: sim/ is the simulator (scenario*.c reads the files,
 * simulate.c runs them), over the matchmaker (negotiator/) and the
 * accounts (accounting/, in memory); `glean negotiate` (cli/negotiate*.c)
 * prints what it reports.
 *
 * A step is one negotiation cycle at the simulated time now:
 *   1. time advances by the interval (not before the first cycle): the
 *      jobs whose run time is over finish, in the order they finish, each
 *      claim ending at that second; slots and jobs arriving by now join;
 *   2. the accounts are brought to now (acct_update);
 *   3. nego_cycle() runs on every slot ad and every submitter's idle jobs,
 *      the ClassAd clock pinned to now;
 *   4. its matches are applied in order: a running job a match preempts
 *      (Rank, Priority) goes back to idle, its run time to start again;
 *      a static slot becomes Claimed/Busy with RemoteUser, RemoteOwner,
 *      JobId, CurrentRank (the slot's RANK of the job), JobStart and
 *      EnteredCurrentState; a partitionable slot gives a dynamic slot
 *      (slot1_1@M, ...) what the match takes of its Cpus, Memory and
 *      Disk, which come back when the job leaves; each claim begins with
 *      the match's cost as its weight.
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, ret_*.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "negotiator.h"
#include "scenario.h"

typedef struct Sim Sim;

/* The state of the pool after sc (borrowed: it must outlive the
 * simulation) at time 0, with a cycle every interval seconds (0: the
 * scenario's NEGOTIATOR_INTERVAL): the accounts opened in memory, each
 * submitter known, its usage before time 0 charged, its factor and RUP
 * set. A configuration the negotiator refuses, or a submitter the
 * accountant refuses, is -EINVAL with err saying where and why. */
int sim_new(const SimScenario *sc, int64_t interval, Sim **ret, ConfigError *err);
void sim_free(Sim *sim); /* accepts NULL */

/* What one cycle did and where it left the pool. Names are the
 * simulation's, valid until the next step. */
typedef struct SimMatch {
        const char *job;       /* "CLUSTER.PROC" */
        const char *slot;      /* the slot the job runs on (a partitionable slot's: the dynamic one) */
        const char *submitter;
        NegoReason reason;
        double cost;
} SimMatch;

typedef struct SimPreemption {
        const char *job;       /* the job sent back to idle */
        const char *slot;
        const char *submitter; /* its submitter */
        const char *by_job;    /* the job that takes the slot */
        const char *by_submitter;
        NegoReason reason;     /* Rank or Priority */
} SimPreemption;

typedef struct SimRejection {
        const char *job;
        const char *submitter;
        const char *reason;
} SimRejection;

typedef struct SimSubmitter {
        const char *name;       /* the accounting name */
        double rup, eup, factor;
        unsigned in_use;        /* claims (slots) held */
        double weight_in_use;   /* their slot weight */
        size_t idle, running, done;
} SimSubmitter;

typedef struct SimGroup {
        const char *name;       /* as GROUP_NAMES spells it; "<none>" */
        double quota;           /* its effective quota (acct_quotas_compute) on the pool of now;
                                   "<none>": what is left to submitters in no group */
        double allocated;       /* what the cycle allocated its own submitters */
        double in_use;          /* slot weight in use, subgroups included */
} SimGroup;

typedef struct SimReport {
        unsigned cycle;         /* 1, 2, ... */
        int64_t time;           /* seconds after time 0 */
        size_t finished;        /* jobs that finished since the previous cycle */
        size_t slots, slots_busy; /* in the pool (a partitionable slot counts once); running a job */
        double pool_weight;     /* the pool's total slot weight */
        SimMatch *matches;
        size_t n_matches;
        SimPreemption *preemptions;
        size_t n_preemptions;
        SimRejection *rejections;
        size_t n_rejections;
        SimSubmitter *submitters; /* every submitter of the scenario, in its order */
        size_t n_submitters;
        SimGroup *groups;   /* as acct_groups_get() numbers them; none without GROUP_NAMES */
        size_t n_groups;
        NegoStats stats;
} SimReport;

/* One cycle (the steps above). *ret stays valid until the next step or
 * sim_free(). */
int sim_step(Sim *sim, const SimReport **ret);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiator-internal.h — what the matchmaker's files share.
 */
#pragma once

#include "carve/carve.h"
#include "common/cleanup.h"
#include "negotiator.h"

#define NEGO_MODE CA_MODE_OLD /* how the negotiator evaluates, as HTCondor's daemons */

struct NegoSettings {
        ClassAdExpr *pre_job_rank;   /* NEGOTIATOR_PRE_JOB_RANK; NULL: 0 */
        ClassAdExpr *post_job_rank;  /* NEGOTIATOR_POST_JOB_RANK */
        ClassAdExpr *preemption_req; /* PREEMPTION_REQUIREMENTS; NULL: False */
        ClassAdExpr *preemption_rank;
        ClassAdExpr *slot_weight;    /* SLOT_WEIGHT, for slots without SlotWeight */
        ClassAdExpr *group_sort;     /* GROUP_SORT_EXPR */
        CarvePolicy *carve;          /* what a job takes of a p-slot: MODIFY_REQUEST_EXPR_*, MUST_MODIFY_REQUEST_EXPRS */
        bool consider_preemption;
        bool consider_early_preemption;
        bool all_jobs_in_cluster;
        bool use_slot_weights;
        bool matchlist_caching;
        bool preemption_req_stable;  /* PREEMPTION_REQUIREMENTS_STABLE */
        bool preemption_rank_stable; /* PREEMPTION_RANK_STABLE */
        int max_allocation_rounds;
};

/* e evaluated with my as MY and target as TARGET: a number, else def. */
double nego_eval_number(const ClassAdExpr *e, const ClassAd *my, const ClassAd *target, double def);
/* e is TRUE there (UNDEFINED, ERROR, non-booleans: false). */
bool nego_eval_true(const ClassAdExpr *e, const ClassAd *my, const ClassAd *target);

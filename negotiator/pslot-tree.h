/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pslot-tree.h — the partitionable slots of one candidate order, best
 * first, searchable by what a job needs (pslot-tree.c).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "carve/carve.h"

#define NEGO_PTREE_MAX_RES CARVE_MAX_RES

typedef struct NegoPTree NegoPTree;

/* Room for n p-slots, numbered 0..n-1 (their ordinals), of n_res
 * resources each (at most NEGO_PTREE_MAX_RES); none in it yet. */
int nego_ptree_new(uint32_t n, size_t n_res, NegoPTree **ret);
void nego_ptree_free(NegoPTree *t); /* accepts NULL */
/* Puts p-slot `ordinal` (slot number `slot`) in, or moves it: key is its
 * pre-job rank, the job's Rank and post-job rank; rem what is left. */
void nego_ptree_set(NegoPTree *t, uint32_t ordinal, uint32_t slot, const double key[3], const double *rem);

/* Whether the p-slot is a candidate for the job being matched. */
typedef bool (*NegoPTreeVisit)(void *userdata, uint32_t slot);
/* The first p-slot, best first, that comes before (bound_key, bound_slot)
 * (NULL bound_key: no bound), has at least need[r] - 1e-9 of each
 * resource r, and that visit accepts. */
bool nego_ptree_search(const NegoPTree *t, const double *bound_key, uint32_t bound_slot, const double *need,
                       NegoPTreeVisit visit, void *userdata, uint32_t *ret_slot);
/* How many p-slots with at least need[r] - 1e-9 of each resource fits accepts. */
size_t nego_ptree_count(const NegoPTree *t, const double *need, NegoPTreeVisit fits, void *userdata);

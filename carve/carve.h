/* SPDX-License-Identifier: Apache-2.0 */
/*
 * carve.h — what a job takes from a partitionable slot (seed 002, 3.5.10.6
 * and 3.5.10.7; seed 003): the one rule the execute agent carves dynamic
 * slots by and the matchmaker consumes p-slots by.
 *
 * The resources carved are Cpus, Memory, Disk and the machine's custom
 * resources (MACHINE_RESOURCE_<name>); swap is not carved. Two ways, as in
 * HTCondor:
 *
 *   - a consumption policy: the p-slot advertises Consumption<Res> for
 *     every resource carved; each is evaluated with the p-slot as MY and
 *     the job as TARGET, the job's _condor_Request<Res> standing for its
 *     Request<Res> and a missing Request<Res> counting as 0;
 *   - else the job's requests: _condor_Request<Res> as it is when the job
 *     has it (what the schedd asks for), else Request<Res> rewritten by
 *     MODIFY_REQUEST_EXPR_REQUESTCPUS/MEMORY/DISK (MY the job, TARGET the
 *     p-slot; a result that is not a number leaves the request as it is).
 *     A missing RequestCpus is 1, a missing Request<custom> 0; a job
 *     without RequestMemory or RequestDisk is refused. When the rewritten
 *     request does not fit what is left but the job's own does, and
 *     MUST_MODIFY_REQUEST_EXPRS is false, the job's own is taken.
 *
 * Every amount is a number >= 0, rounded up to a whole one. A job that
 * asks for nothing at all is refused.
 *
 * The policy is built once from the configuration (the knobs parsed then);
 * a p-slot's Consumption<Res> are read from its ad at each carve.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "classad/classad.h"
#include "config/config.h"

#define CARVE_MAX_CUSTOM 16 /* custom resources of a machine */
#define CARVE_MAX_RES (3 + CARVE_MAX_CUSTOM)
#define CARVE_NAME_MAX 64   /* a resource's name, with its NUL */

enum { CARVE_CPUS, CARVE_MEMORY, CARVE_DISK, CARVE_N_STD };

typedef struct CarvePolicy CarvePolicy;

/* The resources of one p-slot, in the order of every amount array:
 * Cpus, Memory, Disk, then the custom ones. */
typedef struct CarveResources {
        size_t n;
        char name[CARVE_MAX_RES][CARVE_NAME_MAX];
} CarveResources;

/* What a job asks of a p-slot, before it is held against what is left. */
typedef struct CarveAsk {
        double want[CARVE_MAX_RES];       /* the consumption policy's, or the requests as rewritten */
        double unmodified[CARVE_MAX_RES]; /* the requests as the job wrote them (= want: a policy) */
        bool fallback;                    /* unmodified may stand in when want does not fit */
} CarveAsk;

/* MUST_MODIFY_REQUEST_EXPRS and MODIFY_REQUEST_EXPR_REQUEST{CPUS,MEMORY,
 * DISK} of cfg (NULL: none of them), and the custom resources: custom[0..
 * n_custom) when custom is not NULL (the agent: its machine's), else each
 * p-slot's own, from its MachineResources (the matchmaker). -EINVAL with
 * err naming the knob when one is malformed; -E2BIG past CARVE_MAX_CUSTOM. */
int carve_policy_new(const Config *cfg, const char *const *custom, size_t n_custom, CarvePolicy **ret,
                     ConfigError *err);
void carve_policy_free(CarvePolicy *p); /* accepts NULL */
/* MODIFY_REQUEST_EXPR_REQUEST<RES> of standard resource i (CARVE_CPUS ...),
 * NULL when none: for a matchmaker's analysis of what is read. */
const ClassAdExpr *carve_policy_modify(const CarvePolicy *p, size_t i);

/* The resources carved from pslot under p. */
void carve_resources(const CarvePolicy *p, const ClassAd *pslot, CarveResources *ret);
/* The amounts of res the ad has (Cpus, Memory, ...; 0 when not a number). */
void carve_available(const CarveResources *res, const ClassAd *pslot, double *ret);

/* What job asks of pslot (resources res), whatever is left: 0 and *ret,
 * or -EINVAL with why (a sentence) when it cannot be told (a request
 * missing, not a number, negative, or nothing at all). */
int carve_ask(const CarvePolicy *p, const CarveResources *res, const ClassAd *pslot, const ClassAd *job, CarveAsk *ret,
              char *why, size_t whylen);
/* What of ask is taken from avail (amounts of res): 0 and ret[0..res->n),
 * or -ENOSPC with why ("the job needs 4 CPUs; the partitionable slot has 2
 * CPUs left"), or -EINVAL when what fits is nothing at all. */
int carve_fit(const CarveResources *res, const CarveAsk *ask, const double *avail, double *ret, char *why,
              size_t whylen);
/* Both: what job takes of pslot with avail left (avail NULL: the ad's own
 * amounts). res may be NULL when the caller does not need the names. */
int carve_amounts(const CarvePolicy *p, const ClassAd *pslot, const ClassAd *job, const double *avail,
                  CarveResources *ret_res, double *ret, char *why, size_t whylen);

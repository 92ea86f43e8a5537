/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scenario.h — the scenario files of `glean negotiate --simulate`: a pool,
 * its submitters and their jobs, and how long to run (docs/simulate.md
 * has the format with a worked example; scenario.c the grammar).
 *
 *     PRIORITY_HALFLIFE = 3600          # configuration, on top of the defaults
 *     ---
 *     cycles 30
 *     slots 10 [ Cpus = 1; Memory = 2048 ]
 *     submitter alice
 *     submitter bob factor 2 rup 10
 *     jobs alice 20 runtime 1h [ RequestMemory = 1024 ]
 *     at 30m jobs bob 10 runtime 2h
 *
 * The reader checks the whole scenario before anything runs: every slot
 * and job ad is complete (the defaults filled in), every submitter known,
 * the configuration's accounting knobs and groups readable. An error
 * names the file, the line and the reason.
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, ret_*.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "accounting.h"
#include "classad.h"
#include "config.h"

/* Time 0 of every scenario (seconds since the Unix epoch): QDate,
 * EnteredCurrentState and the ClassAd clock count from it. */
#define NEGO_SCENARIO_EPOCH 1767225600 /* 2026-01-01T00:00:00Z */
/* The longest time a scenario speaks of: a century. */
#define NEGO_SCENARIO_MAX_TIME (100LL * 366 * 86400)

typedef struct SimScenarioSlot {
        ClassAd *ad;     /* complete: Name, Machine, SlotID, State, Requirements, Cpus, SlotWeight, ... */
        char *name;      /* its Name */
        bool partitionable;
        double cpus, memory, disk; /* what it has (a p-slot: to carve) */
        int64_t at;      /* when it joins the pool, seconds after time 0 */
        int line;
} SimScenarioSlot;

typedef struct SimScenarioSubmitter {
        char *label;     /* as the scenario names it: "alice" */
        char *name;      /* its accounting name: "alice@sim", "group_a.bob@sim", "nice-user.carol@sim" */
        char *user;      /* User of its jobs: "alice@sim" */
        char *group;     /* AccountingGroup is GROUP.OWNER; NULL: none */
        bool nice;
        bool has_factor, has_rup;
        double factor, rup;
        double usage_weight;  /* slot weight it held ... */
        int64_t usage_time;   /* ... for this long before time 0 (0: none) */
        int line;
} SimScenarioSubmitter;

#define NEGO_RUNTIME_FOREVER INT64_MAX

typedef struct SimScenarioJobs {
        size_t submitter; /* index into submitters */
        ClassAd *ad;      /* complete but for ProcId (0): Owner, User, QDate, ClusterId, Request*, ... */
        int64_t cluster;
        size_t count;     /* ProcId 0 .. count - 1 */
        int64_t runtime;  /* seconds; NEGO_RUNTIME_FOREVER: until the end */
        int64_t at;       /* when they are submitted, seconds after time 0 */
        int line;
} SimScenarioJobs;

typedef struct SimScenario {
        char *source;
        Config *cfg;      /* the configuration part on top of the defaults (and UID_DOMAIN = sim) */
        char *domain;     /* UID_DOMAIN */
        SimScenarioSlot *slots;
        size_t n_slots;
        SimScenarioSubmitter *submitters;
        size_t n_submitters;
        SimScenarioJobs *jobs;
        size_t n_jobs;
        size_t total_jobs; /* the sum of the counts */
        unsigned cycles;   /* the "cycles" line; 0: none */
        int64_t interval;  /* NEGOTIATOR_INTERVAL, seconds */
} SimScenario;

typedef struct SimScenarioLimits {
        size_t max_slots; /* 0: NEGO_SCENARIO_MAX_SLOTS */
        size_t max_jobs;  /* 0: NEGO_SCENARIO_MAX_JOBS */
} SimScenarioLimits;

#define NEGO_SCENARIO_MAX_SLOTS 1000000
#define NEGO_SCENARIO_MAX_JOBS 10000000
#define NEGO_SCENARIO_MAX_CYCLES 1000000

/* Reads the scenario text (named source_name in messages; limits may be
 * NULL). -EINVAL (-E2BIG: over a limit) with err saying where and why;
 * -ENOMEM. */
int sim_scenario_parse(const char *text, const char *source_name, const SimScenarioLimits *limits,
                        SimScenario **ret, ConfigError *err);
/* The same for a file (at most 16 MiB of text). */
int sim_scenario_load(const char *path, SimScenario **ret, ConfigError *err);
void sim_scenario_free(SimScenario *sc); /* accepts NULL */

/* A duration: "90", "90s", "30m", "1h30m", "2d" (units add up), at most
 * NEGO_SCENARIO_MAX_TIME. -EINVAL otherwise. */
int sim_scenario_parse_duration(const char *s, int64_t *ret);

/* The submitter the scenario calls label (or whose accounting name is
 * label, with or without "@domain"): -ENOENT when none, -EEXIST when the
 * label names several (then give the accounting name). */
int sim_scenario_find_submitter(const SimScenario *sc, const char *label, size_t *ret);

/* The settings and groups of the accountant the scenario describes
 * (acct_open takes them). */
int sim_scenario_accounts(const SimScenario *sc, AcctSettings *ret_settings, AcctGroups **ret_groups,
                           ConfigError *err);

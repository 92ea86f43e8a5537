/* SPDX-License-Identifier: Apache-2.0 */
/*
 * nego-test.h — a small pool for the matchmaker's tests: configuration,
 * accounts in memory, slot and job ads from text, one cycle run.
 */
#pragma once

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "negotiator/negotiator.h"
#include "test-util.h"

#define NT_MAX_SLOTS 256
#define NT_MAX_SUBS 8
#define NT_MAX_JOBS 256
#define NT_T0 1.8e9

typedef struct NegoTest {
        Config *cfg;
        Accountant *acct;
        NegoSettings *settings;
        ClassAd *slots[NT_MAX_SLOTS];
        size_t n_slots;
        NegoSubmitter subs[NT_MAX_SUBS];
        ClassAd *jobs[NT_MAX_SUBS][NT_MAX_JOBS];
        char names[NT_MAX_SUBS][64];
        size_t n_subs;
        NegoResult res;
} NegoTest;

static inline void nt_init(NegoTest *t, const char *config) {
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        char why[256] = "";

        *t = (NegoTest){};
        CU_ASSERT_FATAL(config_new(&t->cfg) == 0);
        GLEAN_TEST_CHECK_FATAL(config_load_string(t->cfg, "UID_DOMAIN = pool\n", "<base>", &err) == 0, "%s", err.msg);
        if (config)
                GLEAN_TEST_CHECK_FATAL(config_load_string(t->cfg, config, "<test>", &err) == 0, "config: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(acct_settings_from_config(t->cfg, &s, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK_FATAL(acct_groups_from_config(t->cfg, &g, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK_FATAL(acct_open(NULL, 0, NULL, &s, g, NT_T0, &t->acct, why, sizeof(why)) == 0, "%s", why);
        GLEAN_TEST_CHECK_FATAL(nego_settings_from_config(t->cfg, &t->settings, &err) == 0, "%s", err.msg);
}

static inline void nt_done(NegoTest *t) {
        nego_result_clear(&t->res);
        for (size_t i = 0; i < t->n_slots; i++)
                classad_free(t->slots[i]);
        for (size_t s = 0; s < t->n_subs; s++)
                for (size_t j = 0; j < t->subs[s].n_jobs; j++)
                        classad_free(t->jobs[s][j]);
        nego_settings_free(t->settings);
        acct_close(t->acct);
        config_free(t->cfg);
}

static inline ClassAd *nt_ad(const char *text) {
        ClassAd *ad = NULL;
        CaError err = {};

        GLEAN_TEST_CHECK_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) == 0, "ad '%s': %s", text,
                               err.msg);
        return ad;
}

/* n slots "slotK@m" from one ad's text (attributes after the defaults). */
static inline void nt_slots(NegoTest *t, size_t n, const char *extra) {
        for (size_t i = 0; i < n; i++) {
                char text[2048];
                size_t k = t->n_slots + 1;
                snprintf(text, sizeof(text),
                         "[ Name = \"slot%zu@m%zu\"; Machine = \"m%zu\"; SlotID = 1; State = \"Unclaimed\"; "
                         "Activity = \"Idle\"; Cpus = 1; Memory = 1024; Disk = 100000; Arch = \"X86_64\"; "
                         "OpSys = \"LINUX\"; Start = true; Requirements = START; Rank = 0; %s ]",
                         k, k, k, extra ? extra : "");
                CU_ASSERT_FATAL(t->n_slots < NT_MAX_SLOTS);
                t->slots[t->n_slots++] = nt_ad(text);
        }
}

/* The submitter "name@pool" (index returned), with its EUP set when prio > 0. */
static inline size_t nt_sub(NegoTest *t, const char *name, double prio) {
        size_t s = t->n_subs++;

        CU_ASSERT_FATAL(s < NT_MAX_SUBS);
        snprintf(t->names[s], sizeof(t->names[s]), "%s", name);
        t->subs[s] = (NegoSubmitter){ .name = t->names[s], .jobs = t->jobs[s] };
        CU_ASSERT(acct_ensure(t->acct, name, NT_T0) >= 0);
        if (prio > 0)
                CU_ASSERT(acct_set_priority(t->acct, name, prio, NT_T0) == 0);
        return s;
}

/* n jobs of submitter s, ClusterId cluster, ProcId 0..n-1, with extra attributes. */
static inline void nt_jobs(NegoTest *t, size_t s, size_t n, int cluster, const char *extra) {
        for (size_t i = 0; i < n; i++) {
                char text[2048];
                snprintf(text, sizeof(text),
                         "[ Owner = \"%.32s\"; ClusterId = %d; ProcId = %zu; QDate = %d; JobPrio = 0; "
                         "RequestCpus = 1; RequestMemory = 100; RequestDisk = 1000; Requirements = true; Rank = 0; %s ]",
                         t->names[s], cluster, i, 1000 + cluster, extra ? extra : "");
                CU_ASSERT_FATAL(t->subs[s].n_jobs < NT_MAX_JOBS);
                t->jobs[s][t->subs[s].n_jobs++] = nt_ad(text);
        }
}

static inline int nt_cycle(NegoTest *t, bool plain) {
        NegoInput in = {
                .slots = t->slots,
                .n_slots = t->n_slots,
                .submitters = t->subs,
                .n_submitters = t->n_subs,
                .accounts = t->acct,
                .settings = t->settings,
                .plain = plain,
        };

        nego_result_clear(&t->res);
        return nego_cycle(&in, &t->res);
}

/* Matches of submitter s. */
static inline size_t nt_count(const NegoTest *t, size_t s) {
        size_t n = 0;

        for (size_t i = 0; i < t->res.n_matches; i++)
                n += t->res.matches[i].submitter == s;
        return n;
}

/* The rejection of job j of submitter s, "" when it matched. */
static inline const char *nt_why(const NegoTest *t, size_t s, size_t j) {
        for (size_t i = 0; i < t->res.n_rejections; i++)
                if (t->res.rejections[i].submitter == s && t->res.rejections[i].job == j)
                        return t->res.rejections[i].reason;
        return "";
}

/* The match of job j of submitter s, or NULL. */
static inline const NegoMatch *nt_match(const NegoTest *t, size_t s, size_t j) {
        for (size_t i = 0; i < t->res.n_matches; i++)
                if (t->res.matches[i].submitter == s && t->res.matches[i].job == j)
                        return &t->res.matches[i];
        return NULL;
}

/* Makes slot i Claimed/Busy by submitter user (a claim of that weight in
 * the accounts too). */
static inline void nt_running_weight(NegoTest *t, size_t i, const char *user, double current_rank, double weight) {
        char id[32];

        classad_set_string(t->slots[i], "State", "Claimed");
        classad_set_string(t->slots[i], "Activity", "Busy");
        classad_set_string(t->slots[i], "RemoteUser", user);
        classad_set_string(t->slots[i], "RemoteOwner", user);
        classad_set_real(t->slots[i], "CurrentRank", current_rank);
        snprintf(id, sizeof(id), "claim%zu", i);
        CU_ASSERT(acct_claim_begin(t->acct, id, user, weight, NT_T0) == 0);
}

static inline void nt_running(NegoTest *t, size_t i, const char *user, double current_rank) {
        nt_running_weight(t, i, user, current_rank, 1);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy-config.c — the names of events and actions, the knobs of a slot's
 * state machine and the policy expressions it evaluates, read from the
 * configuration into the slot ad (seed 002, 3.5.8).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "policy-internal.h"

/* ---- names ---- */

static const char *const event_names[AGENT_EV__MAX] = {
        [AGENT_EV_MATCH] = "match",
        [AGENT_EV_CLAIM] = "claim",
        [AGENT_EV_ACTIVATE] = "activate",
        [AGENT_EV_JOB_EXIT] = "job-exit",
        [AGENT_EV_KEEP_ALIVE] = "keep-alive",
        [AGENT_EV_DEACTIVATE] = "deactivate",
        [AGENT_EV_RELEASE] = "release",
        [AGENT_EV_VACATE] = "vacate",
        [AGENT_EV_DRAIN] = "drain",
        [AGENT_EV_CANCEL_DRAIN] = "cancel-drain",
        [AGENT_EV_SHUTDOWN] = "shutdown",
        [AGENT_EV_BACKFILL_STARTED] = "backfill-started",
        [AGENT_EV_BACKFILL_EXIT] = "backfill-exit",
        [AGENT_EV_BENCHMARKS_DONE] = "benchmarks-done",
};

static const char *const action_names[AGENT_DO__MAX] = {
        [AGENT_DO_START_JOB] = "start-job",
        [AGENT_DO_SUSPEND_JOB] = "suspend-job",
        [AGENT_DO_CONTINUE_JOB] = "continue-job",
        [AGENT_DO_SOFT_KILL] = "soft-kill",
        [AGENT_DO_HARD_KILL] = "hard-kill",
        [AGENT_DO_KILLING_TIMEOUT] = "killing-timeout",
        [AGENT_DO_CLAIM_ENDED] = "claim-ended",
        [AGENT_DO_START_BACKFILL] = "start-backfill",
        [AGENT_DO_KILL_BACKFILL] = "kill-backfill",
        [AGENT_DO_RELEASE_SLOT] = "release-slot",
        [AGENT_DO_RUN_BENCHMARKS] = "run-benchmarks",
};

const char *agent_event_name(AgentEventType t) {
        return (unsigned) t < AGENT_EV__MAX ? event_names[t] : NULL;
}

int agent_event_from_name(const char *name, AgentEventType *ret) {
        for (unsigned i = 0; name && i < AGENT_EV__MAX; i++)
                if (strcasecmp(name, event_names[i]) == 0) {
                        *ret = (AgentEventType) i;
                        return 0;
                }
        return -EINVAL;
}

const char *agent_action_name(AgentActionType t) {
        return (unsigned) t < AGENT_DO__MAX ? action_names[t] : NULL;
}

int agent_action_from_name(const char *name, AgentActionType *ret) {
        for (unsigned i = 0; name && i < AGENT_DO__MAX; i++)
                if (strcasecmp(name, action_names[i]) == 0) {
                        *ret = (AgentActionType) i;
                        return 0;
                }
        return -EINVAL;
}

/* ---- knobs ---- */

static void where(const Config *cfg, const char *name, ConfigError *err) {
        const char *f;
        int line;
        err->file[0] = 0;
        err->line = 0;
        if (config_where(cfg, name, &f, &line) >= 0) {
                snprintf(err->file, sizeof err->file, "%s", f);
                err->line = line;
        }
}

static int knob_int(const Config *cfg, unsigned slot, const char *name, int64_t def, int64_t *ret,
                    ConfigError *err) {
        char *v = NULL;
        int r = config_get_slot(cfg, slot, name, &v, err);
        if (r == -ENOENT || (r >= 0 && !*v)) {
                free(v);
                *ret = def;
                return 0;
        }
        if (r < 0)
                return r;
        /* A knob may be an expression of constants ("10 * 60"). */
        ClassAdExpr *e = NULL;
        CaError cerr;
        CaValue val = ca_undefined();
        r = classad_expr_parse(v, strlen(v), CA_MODE_OLD, &e, &cerr);
        if (r >= 0)
                r = classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &val);
        classad_expr_free(e);
        if (r < 0 || (val.type != CA_INT && val.type != CA_REAL)) {
                where(cfg, name, err);
                snprintf(err->msg, sizeof err->msg, "%s = %s: not a number", name, v);
                ca_value_clear(&val);
                free(v);
                return -EINVAL;
        }
        if (val.type == CA_INT)
                *ret = val.u.i;
        else if (val.u.r >= 9.2e18 || val.u.r <= -9.2e18 || val.u.r != val.u.r)
                *ret = val.u.r < 0 ? INT64_MIN : INT64_MAX;
        else
                *ret = (int64_t) val.u.r;
        free(v);
        return 0;
}

int agent_policy_knobs(const Config *cfg, unsigned slot_id, AgentPolicyKnobs *ret, ConfigError *err) {
        AgentPolicyKnobs k = { 0 };
        int r;
        if ((r = knob_int(cfg, slot_id, "MATCH_TIMEOUT", 120, &k.match_timeout, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "KILLING_TIMEOUT", 30, &k.killing_timeout, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "CLAIM_WORKLIFE", -1, &k.claim_worklife, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "ALIVE_INTERVAL", 300, &k.alive_interval, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "MAX_CLAIM_ALIVES_MISSED", 6, &k.max_claim_alives_missed, err)) < 0 ||
            (r = knob_int(cfg, slot_id, "MAX_CLAIM_LEASE_DURATION", 7200, &k.max_claim_lease, err)) < 0)
                return r;
        /* Timers of more than ten years are as good as none, and keep the
         * arithmetic on them far from overflowing. */
        static const int64_t cap = 10LL * 366 * 86400;
        int64_t *timers[] = { &k.match_timeout, &k.killing_timeout, &k.claim_worklife, &k.alive_interval,
                              &k.max_claim_alives_missed, &k.max_claim_lease };
        for (size_t i = 0; i < sizeof timers / sizeof *timers; i++)
                if (*timers[i] > cap)
                        *timers[i] = cap;
        if (k.match_timeout < 0)
                k.match_timeout = 0;
        if (k.killing_timeout < 1)
                k.killing_timeout = 1;
        if (k.claim_worklife < 0)
                k.claim_worklife = -1;
        bool enable = false;
        r = config_get_bool(cfg, "ENABLE_BACKFILL", &enable, err);
        if (r < 0 && r != -ENOENT)
                return r;
        const char *cmd = config_raw(cfg, "BACKFILL_COMMAND");
        k.backfill = enable && cmd && *cmd;
        *ret = k;
        return 0;
}

/* ---- the policy expressions of the slot ad ---- */

static const char *const policy_exprs[] = {
        "START",          "IS_OWNER",           "WANT_SUSPEND",
        "SUSPEND",        "CONTINUE",           "PREEMPT",
        "WANT_VACATE",    "KILL",               "RANK",
        /* MAXJOBRETIREMENTTIME is the knob's name; the ad says MaxJobRetirementTime
         * (names are case-insensitive, so one lookup serves both). */
        "MaxJobRetirementTime", "MachineMaxVacateTime", "START_BACKFILL",
        "EVICT_BACKFILL", "PERIODIC_CHECKPOINT", "RunBenchmarks",
};

/* Expressions that have a _VANILLA variant (3.5.7.4). */
static const char *const vanilla_exprs[] = {
        "WANT_SUSPEND", "SUSPEND", "CONTINUE", "PREEMPT", "WANT_VACATE", "KILL",
};

static int set_expr_from_config(const Config *cfg, unsigned slot, ClassAd *ad, const char *knob, ConfigError *err) {
        char *v = NULL;
        int r = config_get_slot(cfg, slot, knob, &v, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        CaError cerr;
        r = classad_set_expr_text(ad, knob, *v ? v : "UNDEFINED", CA_MODE_OLD, &cerr);
        if (r < 0) {
                where(cfg, knob, err);
                snprintf(err->msg, sizeof err->msg, "%s: not a ClassAd expression (column %d: %s)", knob, cerr.column,
                         cerr.msg);
        }
        free(v);
        return r < 0 ? -EINVAL : 0;
}

int agent_policy_fill_ad(const Config *cfg, unsigned slot_id, ClassAd *ad, ConfigError *err) {
        int r;
        for (size_t i = 0; i < sizeof policy_exprs / sizeof *policy_exprs; i++) {
                r = set_expr_from_config(cfg, slot_id, ad, policy_exprs[i], err);
                if (r < 0)
                        return r;
        }
        /* CpuBusy: what "the CPU is busy" means (HTCondor's CPU_BUSY, else the CPUBusy macro). */
        char *busy = NULL;
        if (config_get(cfg, "CPU_BUSY", &busy, err) < 0 || !*busy) {
                free(busy);
                busy = NULL;
                if (config_expand(cfg, "$(CPUBusy)", &busy, err) < 0 || !*busy) {
                        free(busy);
                        busy = strdup("((LoadAvg - CondorLoadAvg) >= 0.5)");
                        if (!busy)
                                return -ENOMEM;
                }
        }
        CaError cerr;
        r = classad_set_expr_text(ad, "CpuBusy", busy, CA_MODE_OLD, &cerr);
        if (r < 0) {
                where(cfg, config_raw(cfg, "CPU_BUSY") ? "CPU_BUSY" : "CPUBusy", err);
                snprintf(err->msg, sizeof err->msg, "CPU_BUSY / CPUBusy: not a ClassAd expression: %.200s", busy);
                free(busy);
                return -EINVAL;
        }
        free(busy);
        for (size_t i = 0; i < sizeof vanilla_exprs / sizeof *vanilla_exprs; i++) {
                char name[64];
                snprintf(name, sizeof name, "%s_VANILLA", vanilla_exprs[i]);
                r = set_expr_from_config(cfg, slot_id, ad, name, err);
                if (r < 0)
                        return r;
        }
        return 0;
}

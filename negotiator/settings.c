/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.c — the negotiator's knobs, and the evaluation helpers the
 * cycle uses.
 */
#include <errno.h>
#include <stdlib.h>

#include "negotiator-internal.h"

double nego_eval_number(const ClassAdExpr *e, const ClassAd *my, const ClassAd *target, double def) {
        CaValue v = ca_undefined();
        double d = def;

        if (e && classad_expr_eval(e, my, target, NEGO_MODE, &v) >= 0 && !ca_to_real(&v, &d))
                d = def;
        ca_value_clear(&v);
        return d;
}

bool nego_eval_true(const ClassAdExpr *e, const ClassAd *my, const ClassAd *target) {
        CaValue v = ca_undefined();
        bool yes = false;

        if (e && classad_expr_eval(e, my, target, NEGO_MODE, &v) >= 0)
                yes = (v.type == CA_BOOL && v.u.b) || (v.type == CA_INT && v.u.i != 0) ||
                      (v.type == CA_REAL && v.u.r != 0);
        ca_value_clear(&v);
        return yes;
}

/* An expression knob; undefined or empty leaves *ret NULL. */
static int get_expr(const Config *cfg, const char *name, ClassAdExpr **ret, ConfigError *err) {
        int r = config_get_expr(cfg, name, NEGO_MODE, ret, err);

        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        return r;
}

static int get_bool(const Config *cfg, const char *name, bool def, bool *ret, ConfigError *err) {
        int r = config_get_bool(cfg, name, ret, err);

        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        return r;
}

int nego_settings_from_config(const Config *cfg, NegoSettings **ret, ConfigError *err) {
        NegoSettings *s = calloc(1, sizeof(*s));
        int64_t rounds = 3;
        int r;

        if (!s)
                return -ENOMEM;
        if ((r = get_expr(cfg, "NEGOTIATOR_PRE_JOB_RANK", &s->pre_job_rank, err)) < 0 ||
            (r = get_expr(cfg, "NEGOTIATOR_POST_JOB_RANK", &s->post_job_rank, err)) < 0 ||
            (r = get_expr(cfg, "PREEMPTION_REQUIREMENTS", &s->preemption_req, err)) < 0 ||
            (r = get_expr(cfg, "PREEMPTION_RANK", &s->preemption_rank, err)) < 0 ||
            (r = get_expr(cfg, "SLOT_WEIGHT", &s->slot_weight, err)) < 0 ||
            (r = get_expr(cfg, "GROUP_SORT_EXPR", &s->group_sort, err)) < 0)
                goto fail;
        /* the custom resources are each p-slot's own (MachineResources) */
        if ((r = carve_policy_new(cfg, NULL, 0, &s->carve, err)) < 0)
                goto fail;
        if ((r = get_bool(cfg, "NEGOTIATOR_CONSIDER_PREEMPTION", true, &s->consider_preemption, err)) < 0 ||
            (r = get_bool(cfg, "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION", false, &s->consider_early_preemption, err)) < 0 ||
            (r = get_bool(cfg, "NEGOTIATE_ALL_JOBS_IN_CLUSTER", false, &s->all_jobs_in_cluster, err)) < 0 ||
            (r = get_bool(cfg, "NEGOTIATOR_USE_SLOT_WEIGHTS", true, &s->use_slot_weights, err)) < 0 ||
            (r = get_bool(cfg, "NEGOTIATOR_MATCHLIST_CACHING", true, &s->matchlist_caching, err)) < 0 ||
            (r = get_bool(cfg, "PREEMPTION_REQUIREMENTS_STABLE", true, &s->preemption_req_stable, err)) < 0 ||
            (r = get_bool(cfg, "PREEMPTION_RANK_STABLE", true, &s->preemption_rank_stable, err)) < 0)
                goto fail;
        r = config_get_int(cfg, "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS", &rounds, err);
        if (r < 0 && r != -ENOENT)
                goto fail;
        s->max_allocation_rounds = rounds < 1 ? 1 : rounds > 100 ? 100 : (int) rounds;
        *ret = s;
        return 0;
fail:
        nego_settings_free(s);
        return r;
}

void nego_settings_free(NegoSettings *s) {
        if (!s)
                return;
        classad_expr_free(s->pre_job_rank);
        classad_expr_free(s->post_job_rank);
        classad_expr_free(s->preemption_req);
        classad_expr_free(s->preemption_rank);
        classad_expr_free(s->slot_weight);
        classad_expr_free(s->group_sort);
        carve_policy_free(s->carve);
        free(s);
}

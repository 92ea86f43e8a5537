/* SPDX-License-Identifier: Apache-2.0 */
/*
 * carve.c — what a job takes from a partitionable slot (carve.h): the
 * policy from the configuration, the resources of a p-slot, what a job
 * asks (a consumption policy, or its requests rewritten), and what of it
 * is taken from what is left.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "carve.h"
#include "common/cleanup.h"

#define MODE CA_MODE_OLD
#define MAX_AMOUNT 9.0e15 /* past it a number is no amount (and no longer exact) */

/* d >= 0 rounded up to a whole amount (a hair over one is still one; never -0). */
static double whole(double d) {
        d = ceil(d - 1e-9);
        return d > 0 ? d : 0;
}

static const char *const std_name[CARVE_N_STD] = { "Cpus", "Memory", "Disk" };
static const char *const modify_knob[CARVE_N_STD] = { "MODIFY_REQUEST_EXPR_REQUESTCPUS",
                                                      "MODIFY_REQUEST_EXPR_REQUESTMEMORY",
                                                      "MODIFY_REQUEST_EXPR_REQUESTDISK" };

struct CarvePolicy {
        ClassAdExpr *modify[CARVE_N_STD]; /* NULL: the request as it is */
        bool must_modify;                 /* MUST_MODIFY_REQUEST_EXPRS */
        bool custom_from_ad;              /* the custom resources are each p-slot's (MachineResources) */
        CarveResources res;               /* else these */
};

static void res_add(CarveResources *res, const char *name) {
        snprintf(res->name[res->n], CARVE_NAME_MAX, "%s", name);
        res->n++;
}

static void res_std(CarveResources *res) {
        res->n = 0;
        for (size_t i = 0; i < CARVE_N_STD; i++)
                res_add(res, std_name[i]);
}

int carve_policy_new(const Config *cfg, const char *const *custom, size_t n_custom, CarvePolicy **ret,
                     ConfigError *err) {
        CarvePolicy *p;
        int r;

        if (!ret || n_custom > CARVE_MAX_CUSTOM)
                return n_custom > CARVE_MAX_CUSTOM ? -E2BIG : -EINVAL;
        if (!(p = calloc(1, sizeof(*p))))
                return -ENOMEM;
        res_std(&p->res);
        p->custom_from_ad = !custom;
        for (size_t i = 0; custom && i < n_custom; i++)
                res_add(&p->res, custom[i]);
        for (size_t i = 0; cfg && i < CARVE_N_STD; i++) {
                r = config_get_expr(cfg, modify_knob[i], MODE, &p->modify[i], err);
                if (r < 0 && r != -ENOENT) {
                        carve_policy_free(p);
                        return r;
                }
        }
        if (cfg) {
                r = config_get_bool(cfg, "MUST_MODIFY_REQUEST_EXPRS", &p->must_modify, err);
                if (r < 0 && r != -ENOENT) {
                        carve_policy_free(p);
                        return r;
                }
        }
        *ret = p;
        return 0;
}

void carve_policy_free(CarvePolicy *p) {
        if (!p)
                return;
        for (size_t i = 0; i < CARVE_N_STD; i++)
                classad_expr_free(p->modify[i]);
        free(p);
}

const ClassAdExpr *carve_policy_modify(const CarvePolicy *p, size_t i) {
        return p && i < CARVE_N_STD ? p->modify[i] : NULL;
}

/* ---- the resources ---- */

void carve_resources(const CarvePolicy *p, const ClassAd *pslot, CarveResources *ret) {
        _cleanup_free_ char *list = NULL;
        char *save = NULL;

        if (!p->custom_from_ad) {
                *ret = p->res;
                return;
        }
        res_std(ret);
        /* "Cpus Memory Disk Swap Gpus": what the agent advertises */
        if (!pslot || classad_eval_string(pslot, "MachineResources", MODE, &list) < 0 || !list)
                return;
        for (char *w = strtok_r(list, " ,\t", &save); w && ret->n < CARVE_MAX_RES; w = strtok_r(NULL, " ,\t", &save)) {
                bool known = strcasecmp(w, "Swap") == 0;

                for (size_t i = 0; i < ret->n && !known; i++)
                        known = strcasecmp(w, ret->name[i]) == 0;
                if (!known && strlen(w) < CARVE_NAME_MAX)
                        res_add(ret, w);
        }
}

static bool is_number(const CaValue *v) {
        return v->type == CA_INT || (v->type == CA_REAL && isfinite(v->u.r));
}

static double number_of(const CaValue *v) {
        return v->type == CA_INT ? (double) v->u.i : v->u.r;
}

void carve_available(const CarveResources *res, const ClassAd *pslot, double *ret) {
        for (size_t i = 0; i < res->n; i++) {
                CaValue v = ca_undefined();

                ret[i] = classad_eval_attr(pslot, res->name[i], MODE, &v) >= 0 && is_number(&v) ? number_of(&v) : 0;
                ca_value_clear(&v);
        }
}

/* ---- what the job asks ---- */

/* v as an amount: a number, >= 0, not absurd; rounded up. */
static int amount_of(const CaValue *v, const char *what, double *ret, char *why, size_t whylen) {
        _cleanup_free_ char *text = NULL;
        double d;

        if (!is_number(v)) {
                text = ca_value_unparse(v);
                return glean_why(-EINVAL, why, whylen, "%s is not a number (%.100s)", what, text ? text : "?");
        }
        d = number_of(v);
        if (d < 0)
                return glean_why(-EINVAL, why, whylen, "%s is negative (%g)", what, d);
        if (d > MAX_AMOUNT)
                return glean_why(-EINVAL, why, whylen, "%s is too large (%g)", what, d);
        *ret = whole(d);
        return 0;
}

/* The job as a consumption policy sees it: _condor_Request<Res> standing
 * for Request<Res>, a missing request 0. *ret is job itself when nothing
 * needs to change (no copy), else a copy (*ret_copy, the caller's). */
static int policy_job(const CarveResources *res, const ClassAd *job, const ClassAd **ret, ClassAd **ret_copy,
                      char *why, size_t whylen) {
        ClassAd *jc = NULL;
        bool same = true;
        int r = 0;

        for (size_t i = 0; i < res->n && same; i++) {
                char req[96], over[128];

                snprintf(req, sizeof(req), "Request%s", res->name[i]);
                snprintf(over, sizeof(over), "_condor_%s", req);
                same = !classad_has(job, over) && classad_has(job, req);
        }
        *ret_copy = NULL;
        *ret = job;
        if (same)
                return 0;
        if (classad_copy(job, &jc) < 0)
                return glean_why(-ENOMEM, why, whylen, "out of memory");
        for (size_t i = 0; i < res->n && r >= 0; i++) {
                char req[96], over[128];
                _cleanup_free_ char *text = NULL;

                snprintf(req, sizeof(req), "Request%s", res->name[i]);
                snprintf(over, sizeof(over), "_condor_%s", req);
                text = classad_unparse_attr(jc, over);
                if (text)
                        r = classad_set_expr_text(jc, req, text, MODE, NULL);
                else if (!classad_has(jc, req))
                        r = classad_set_int(jc, req, 0);
                if (r < 0)
                        r = glean_why(r, why, whylen, "cannot set %s in a copy of the job", req);
        }
        if (r < 0) {
                classad_free(jc);
                return r;
        }
        *ret = *ret_copy = jc;
        return 0;
}

static bool has_policy(const CarveResources *res, const ClassAd *pslot) {
        char attr[96];

        for (size_t i = 0; i < res->n; i++) {
                snprintf(attr, sizeof(attr), "Consumption%s", res->name[i]);
                if (!classad_has(pslot, attr))
                        return false;
        }
        return true;
}

static int consume(const CarveResources *res, const ClassAd *pslot, const ClassAd *job, CarveAsk *ret, char *why,
                   size_t whylen) {
        const ClassAd *target;
        ClassAd *copy = NULL;
        int r;

        r = policy_job(res, job, &target, &copy, why, whylen);
        for (size_t i = 0; i < res->n && r >= 0; i++) {
                char attr[128];
                CaValue v = ca_undefined();

                snprintf(attr, sizeof(attr), "Consumption%s", res->name[i]);
                if (classad_eval_attr_with(pslot, attr, target, MODE, &v) < 0) {
                        r = glean_why(-EINVAL, why, whylen, "%s of the partitionable slot cannot be evaluated", attr);
                        break;
                }
                snprintf(attr + strlen(attr), sizeof(attr) - strlen(attr), " of the partitionable slot");
                r = amount_of(&v, attr, &ret->want[i], why, whylen);
                ret->unmodified[i] = ret->want[i];
                ca_value_clear(&v);
        }
        classad_free(copy);
        ret->fallback = false;
        return r;
}

/* MODIFY_REQUEST_EXPR_REQUEST<RES> of request orig: MY the job, TARGET
 * the p-slot; not a number (or none): orig. */
static double modified(const CarvePolicy *p, size_t i, const ClassAd *job, const ClassAd *pslot, double orig) {
        CaValue v = ca_undefined();
        double d = orig;

        if (i >= CARVE_N_STD || !p->modify[i])
                return orig;
        if (classad_expr_eval(p->modify[i], job, pslot, MODE, &v) >= 0 && is_number(&v) && number_of(&v) >= 0 &&
            number_of(&v) <= MAX_AMOUNT)
                d = whole(number_of(&v));
        ca_value_clear(&v);
        return d;
}

static int request(const CarvePolicy *p, const CarveResources *res, const ClassAd *pslot, const ClassAd *job,
                   CarveAsk *ret, char *why, size_t whylen) {
        for (size_t i = 0; i < res->n; i++) {
                char req[96], over[128];
                CaValue v = ca_undefined();
                int r;

                snprintf(req, sizeof(req), "Request%s", res->name[i]);
                snprintf(over, sizeof(over), "_condor_%s", req);
                /* What the schedd asks for (_condor_Request<Res>) is taken as it is. */
                if (classad_eval_attr_with(job, over, pslot, MODE, &v) >= 0 && v.type != CA_UNDEFINED) {
                        r = amount_of(&v, over, &ret->unmodified[i], why, whylen);
                        ca_value_clear(&v);
                        if (r < 0)
                                return r;
                        ret->want[i] = ret->unmodified[i];
                        continue;
                }
                ca_value_clear(&v);
                if (classad_eval_attr_with(job, req, pslot, MODE, &v) < 0)
                        return glean_why(-EINVAL, why, whylen, "%s of the job cannot be evaluated", req);
                if (v.type == CA_UNDEFINED) {
                        if (i == CARVE_MEMORY || i == CARVE_DISK)
                                return glean_why(-EINVAL, why, whylen,
                                                 "the job has no %s: a dynamic slot cannot be sized", req);
                        ret->unmodified[i] = i == CARVE_CPUS ? 1 : 0; /* one CPU; none of a custom resource */
                } else {
                        r = amount_of(&v, req, &ret->unmodified[i], why, whylen);
                        ca_value_clear(&v);
                        if (r < 0)
                                return r;
                }
                ret->want[i] = modified(p, i, job, pslot, ret->unmodified[i]);
        }
        ret->fallback = !p->must_modify;
        return 0;
}

static bool all_zero(const CarveResources *res, const double *a) {
        for (size_t i = 0; i < res->n; i++)
                if (a[i] > 0)
                        return false;
        return true;
}

int carve_ask(const CarvePolicy *p, const CarveResources *res, const ClassAd *pslot, const ClassAd *job, CarveAsk *ret,
              char *why, size_t whylen) {
        int r;

        if (why && whylen)
                why[0] = '\0';
        if (!p || !res || !pslot || !job || !ret || res->n > CARVE_MAX_RES)
                return -EINVAL;
        *ret = (CarveAsk){};
        r = has_policy(res, pslot) ? consume(res, pslot, job, ret, why, whylen)
                                   : request(p, res, pslot, job, ret, why, whylen);
        if (r < 0)
                return r;
        if (all_zero(res, ret->unmodified))
                return glean_why(-EINVAL, why, whylen, "the job asks for no CPU, memory, disk or other resource");
        return 0;
}

/* ---- what is taken ---- */

static bool fits(const CarveResources *res, const double *want, const double *avail) {
        for (size_t i = 0; i < res->n; i++)
                if (want[i] > avail[i] + 1e-9)
                        return false;
        return true;
}

static void describe(const CarveResources *res, size_t i, double v, char *buf, size_t size) {
        switch (i) {
        case CARVE_CPUS: snprintf(buf, size, "%.0f CPU%s", v, v == 1 ? "" : "s"); break;
        case CARVE_MEMORY: snprintf(buf, size, "%.0f MB of memory", v); break;
        case CARVE_DISK: snprintf(buf, size, "%.0f KB of disk", v); break;
        default: snprintf(buf, size, "%.6g %s", v, res->name[i]); break;
        }
}

/* "the job needs 4 CPUs and 2048 MB of memory; the partitionable slot has
 * 2 CPUs and 1024 MB of memory left" — the resources that are short. */
static int no_space(const CarveResources *res, const double *want, const double *avail, char *why, size_t whylen) {
        char needs[256] = "", has[256] = "", one[96];
        size_t nn = 0, nh = 0, k = 0, n_short = 0;

        for (size_t i = 0; i < res->n; i++)
                n_short += want[i] > avail[i] + 1e-9;
        for (size_t i = 0; i < res->n; i++) {
                const char *sep;

                if (want[i] <= avail[i] + 1e-9)
                        continue;
                sep = k == 0 ? "" : k + 1 == n_short ? " and " : ", ";
                k++;
                describe(res, i, want[i], one, sizeof(one));
                if (nn < sizeof(needs))
                        nn += (size_t) snprintf(needs + nn, sizeof(needs) - nn, "%s%s", sep, one);
                describe(res, i, avail[i] < 0 ? 0 : avail[i], one, sizeof(one));
                if (nh < sizeof(has))
                        nh += (size_t) snprintf(has + nh, sizeof(has) - nh, "%s%s", sep, one);
        }
        return glean_why(-ENOSPC, why, whylen, "the job needs %s; the partitionable slot has %s left", needs, has);
}

int carve_fit(const CarveResources *res, const CarveAsk *ask, const double *avail, double *ret, char *why,
              size_t whylen) {
        const double *take = ask->want;

        if (why && whylen)
                why[0] = '\0';
        /* As HTCondor: a rewritten request that no longer fits is retried
         * as the job wrote it, unless MUST_MODIFY_REQUEST_EXPRS. */
        if (!fits(res, take, avail)) {
                if (!ask->fallback || !fits(res, ask->unmodified, avail))
                        return no_space(res, ask->want, avail, why, whylen);
                take = ask->unmodified;
        }
        if (all_zero(res, take))
                return glean_why(-EINVAL, why, whylen, "the job asks for no CPU, memory, disk or other resource");
        memcpy(ret, take, res->n * sizeof(double));
        return 0;
}

int carve_amounts(const CarvePolicy *p, const ClassAd *pslot, const ClassAd *job, const double *avail,
                  CarveResources *ret_res, double *ret, char *why, size_t whylen) {
        CarveResources own, *res = ret_res ? ret_res : &own;
        double left[CARVE_MAX_RES];
        CarveAsk ask;
        int r;

        if (!p || !pslot || !job || !ret)
                return -EINVAL;
        carve_resources(p, pslot, res);
        r = carve_ask(p, res, pslot, job, &ask, why, whylen);
        if (r < 0)
                return r;
        if (!avail) {
                carve_available(res, pslot, left);
                avail = left;
        }
        return carve_fit(res, &ask, avail, ret, why, whylen);
}

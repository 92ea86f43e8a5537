/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pslot.c — what a dynamic slot carved out of a partitionable slot gets
 * for a job (seed 002, 3.5.10.6 and 3.5.10.7; seed 003).
 *
 * Two ways, as in HTCondor: a consumption policy (the p-slot advertises a
 * Consumption<Res> expression for every resource but swap; MY is the
 * p-slot, TARGET the job), or the job's requests, which the startd first
 * rewrites with MODIFY_REQUEST_EXPR_REQUEST{CPUS,MEMORY,DISK} (MY is the
 * job, TARGET the p-slot) so that d-slots come in reusable sizes.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "slots-internal.h"

#define N_STD 3 /* cpus, memory, disk: swap is not carved */
#define N_RES (N_STD + AGENT_MAX_CUSTOM)

static const char *const std_attr[N_STD] = { "Cpus", "Memory", "Disk" };

typedef struct Carve {
        const AgentMachine *m;
        size_t n;              /* N_STD + m->n_custom */
        char *why;
        size_t whylen;
} Carve;

static const char *attr_of(const Carve *c, size_t r) {
        return r < N_STD ? std_attr[r] : c->m->custom_name[r - N_STD];
}

static int fail(Carve *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Carve *c, int r, const char *fmt, ...) {
        va_list ap;

        if (c->why && c->whylen > 0) {
                va_start(ap, fmt);
                vsnprintf(c->why, c->whylen, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* Evaluates text (an expression) with my and target. */
static int eval_text(const char *text, const ClassAd *my, const ClassAd *target, CaValue *ret) {
        ClassAdExpr *e = NULL;
        CaError cerr = {};
        int r;

        r = classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &cerr);
        if (r < 0)
                return r;
        r = classad_expr_eval(e, my, target, CA_MODE_OLD, ret);
        classad_expr_free(e);
        return r;
}

static bool is_number(const CaValue *v) {
        return (v->type == CA_INT) || (v->type == CA_REAL && isfinite(v->u.r));
}

static double number_of(const CaValue *v) {
        return v->type == CA_INT ? (double) v->u.i : v->u.r;
}

/* v as an amount: a number, >= 0, not absurd; rounded up. */
static int amount_of(Carve *c, const CaValue *v, const char *what, double *ret) {
        _cleanup_free_ char *text = NULL;
        double d;

        if (!is_number(v)) {
                text = ca_value_unparse(v);
                return fail(c, -EINVAL, "%s is not a number (%.100s)", what, text ? text : "?");
        }
        d = number_of(v);
        if (d < 0)
                return fail(c, -EINVAL, "%s is negative (%g)", what, d);
        if (d > 9.0e15)
                return fail(c, -EINVAL, "%s is too large (%g)", what, d);
        *ret = ceil(d - 1e-9);
        return 0;
}

/* ---- consumption policy ---- */

static bool has_consumption_policy(const Carve *c, const ClassAd *pslot_ad) {
        char attr[96];

        for (size_t r = 0; r < c->n; r++) {
                snprintf(attr, sizeof(attr), "Consumption%s", attr_of(c, r));
                if (!classad_has(pslot_ad, attr))
                        return false;
        }
        return true;
}

static int consume(Carve *c, const ClassAd *pslot_ad, const ClassAd *job, double *amounts) {
        ClassAd *jc = NULL;
        int r = 0;

        if (classad_copy(job, &jc) < 0)
                return fail(c, -ENOMEM, "out of memory");
        /* _condor_Request<Res> stands for Request<Res>; a missing request is 0. */
        for (size_t i = 0; i < c->n && r >= 0; i++) {
                char req[96], over[128];
                _cleanup_free_ char *text = NULL;

                snprintf(req, sizeof(req), "Request%s", attr_of(c, i));
                snprintf(over, sizeof(over), "_condor_%s", req);
                text = classad_unparse_attr(jc, over);
                if (text)
                        r = classad_set_expr_text(jc, req, text, CA_MODE_OLD, NULL);
                else if (!classad_has(jc, req))
                        r = classad_set_int(jc, req, 0);
                if (r < 0)
                        r = fail(c, r, "cannot set %s in a copy of the job", req);
        }
        for (size_t i = 0; i < c->n && r >= 0; i++) {
                char attr[96];
                _cleanup_free_ char *text = NULL;
                CaValue v = ca_undefined();

                snprintf(attr, sizeof(attr), "Consumption%s", attr_of(c, i));
                text = classad_unparse_attr(pslot_ad, attr);
                if (!text || eval_text(text, pslot_ad, jc, &v) < 0) {
                        r = fail(c, -EINVAL, "%s of the partitionable slot cannot be evaluated", attr);
                        break;
                }
                snprintf(attr + strlen(attr), sizeof(attr) - strlen(attr), " of the partitionable slot");
                r = amount_of(c, &v, attr, &amounts[i]);
                ca_value_clear(&v);
        }
        classad_free(jc);
        return r;
}

/* ---- requests, rewritten ---- */

/* MY.<attr> of the job, with the p-slot as TARGET. */
static int job_attr(const ClassAd *job, const ClassAd *pslot_ad, const char *attr, CaValue *ret) {
        char text[160];

        snprintf(text, sizeof(text), "MY.%s", attr);
        return eval_text(text, job, pslot_ad, ret);
}

static int modify(const Config *cfg, size_t r, const ClassAd *job, const ClassAd *pslot_ad, double orig,
                  double *ret) {
        static const char *const knobs[N_STD] = { "MODIFY_REQUEST_EXPR_REQUESTCPUS",
                                                  "MODIFY_REQUEST_EXPR_REQUESTMEMORY",
                                                  "MODIFY_REQUEST_EXPR_REQUESTDISK" };
        ClassAdExpr *e = NULL;
        ConfigError err = {};
        CaValue v = ca_undefined();

        *ret = orig;
        if (!cfg || config_get_expr(cfg, knobs[r], CA_MODE_OLD, &e, &err) < 0)
                return 0; /* undefined or malformed: the request as it is */
        if (classad_expr_eval(e, job, pslot_ad, CA_MODE_OLD, &v) >= 0 && is_number(&v) && number_of(&v) >= 0 &&
            number_of(&v) <= 9.0e15)
                *ret = ceil(number_of(&v) - 1e-9);
        ca_value_clear(&v);
        classad_expr_free(e);
        return 0;
}

static int request(Carve *c, const Config *cfg, const ClassAd *pslot_ad, const ClassAd *job, double *orig,
                   double *mod) {
        for (size_t i = 0; i < c->n; i++) {
                char req[96], over[128];
                CaValue v = ca_undefined();
                int r;

                snprintf(req, sizeof(req), "Request%s", attr_of(c, i));
                snprintf(over, sizeof(over), "_condor_%s", req);
                /* What the schedd asks for (_condor_Request<Res>) is taken as it is. */
                if (job_attr(job, pslot_ad, over, &v) >= 0 && v.type != CA_UNDEFINED) {
                        r = amount_of(c, &v, over, &orig[i]);
                        ca_value_clear(&v);
                        if (r < 0)
                                return r;
                        mod[i] = orig[i];
                        continue;
                }
                ca_value_clear(&v);
                if (job_attr(job, pslot_ad, req, &v) < 0)
                        return fail(c, -EINVAL, "%s of the job cannot be evaluated", req);
                if (v.type == CA_UNDEFINED) {
                        if (i == 1 || i == 2)
                                return fail(c, -EINVAL, "the job has no %s: a dynamic slot cannot be sized", req);
                        orig[i] = i == 0 ? 1 : 0; /* one CPU; none of a custom resource */
                } else {
                        r = amount_of(c, &v, req, &orig[i]);
                        ca_value_clear(&v);
                        if (r < 0)
                                return r;
                }
                mod[i] = orig[i];
                if (i < N_STD && modify(cfg, i, job, pslot_ad, orig[i], &mod[i]) < 0)
                        return fail(c, -EINVAL, "cannot evaluate MODIFY_REQUEST_EXPR_%s", req);
        }
        return 0;
}

static void to_res(const Carve *c, const double *a, AgentRes *ret) {
        *ret = (AgentRes){ .cpus = (int64_t) a[0], .memory = (int64_t) a[1], .disk = (int64_t) a[2] };
        for (size_t i = N_STD; i < c->n; i++)
                ret->custom[i - N_STD] = a[i];
}

static void describe(const Carve *c, size_t r, double v, char *buf, size_t size) {
        switch (r) {
        case 0: snprintf(buf, size, "%.0f CPU%s", v, v == 1 ? "" : "s"); break;
        case 1: snprintf(buf, size, "%.0f MB of memory", v); break;
        case 2: snprintf(buf, size, "%.0f KB of disk", v); break;
        default: snprintf(buf, size, "%.6g %s", v, attr_of(c, r)); break;
        }
}

/* "the job needs 4 CPUs and 2048 MB of memory; the partitionable slot has
 * 2 CPUs and 1024 MB of memory left" — the resources that are short. */
static int no_space(Carve *c, const AgentRes *want, const AgentRes *avail) {
        double w[N_RES], a[N_RES];
        char needs[256] = "", has[256] = "", one[96];
        size_t nn = 0, nh = 0, k = 0, n_short = 0;

        w[0] = (double) want->cpus, w[1] = (double) want->memory, w[2] = (double) want->disk;
        a[0] = (double) avail->cpus, a[1] = (double) avail->memory, a[2] = (double) avail->disk;
        for (size_t i = N_STD; i < c->n; i++)
                w[i] = want->custom[i - N_STD], a[i] = avail->custom[i - N_STD];
        for (size_t i = 0; i < c->n; i++)
                if (w[i] > a[i] + 1e-9)
                        n_short++;
        for (size_t i = 0; i < c->n; i++) {
                const char *sep;

                if (w[i] <= a[i] + 1e-9)
                        continue;
                sep = k == 0 ? "" : k + 1 == n_short ? " and " : ", ";
                k++;
                describe(c, i, w[i], one, sizeof(one));
                if (nn < sizeof(needs))
                        nn += (size_t) snprintf(needs + nn, sizeof(needs) - nn, "%s%s", sep, one);
                describe(c, i, a[i] < 0 ? 0 : a[i], one, sizeof(one));
                if (nh < sizeof(has))
                        nh += (size_t) snprintf(has + nh, sizeof(has) - nh, "%s%s", sep, one);
        }
        return fail(c, -ENOSPC, "the job needs %s; the partitionable slot has %s left", needs, has);
}

int agent_pslot_carve(const Config *cfg, const AgentMachine *m, const ClassAd *pslot_ad, const ClassAd *job,
                      const AgentRes *avail, AgentRes *ret, char *why, size_t whylen) {
        Carve c = { .m = m, .why = why, .whylen = whylen };
        double orig[N_RES] = {}, mod[N_RES] = {};
        AgentRes want, unmodified;
        bool all_zero = true;
        int r;

        if (why && whylen)
                why[0] = '\0';
        if (!m || !pslot_ad || !job || !avail || !ret || m->n_custom > AGENT_MAX_CUSTOM)
                return -EINVAL;
        c.n = N_STD + m->n_custom;

        if (has_consumption_policy(&c, pslot_ad)) {
                r = consume(&c, pslot_ad, job, mod);
                if (r < 0)
                        return r;
                memcpy(orig, mod, sizeof(orig));
        } else {
                r = request(&c, cfg, pslot_ad, job, orig, mod);
                if (r < 0)
                        return r;
        }
        for (size_t i = 0; i < c.n; i++)
                if (orig[i] > 0)
                        all_zero = false;
        if (all_zero)
                return fail(&c, -EINVAL, "the job asks for no CPU, memory, disk or other resource");

        to_res(&c, mod, &want);
        to_res(&c, orig, &unmodified);
        if (!agent_res_fits(&want, avail, m->n_custom)) {
                bool must = false;

                /* As HTCondor: a rewritten request that no longer fits is
                 * retried as the job wrote it, unless MUST_MODIFY_REQUEST_EXPRS. */
                if (cfg && config_get_bool(cfg, "MUST_MODIFY_REQUEST_EXPRS", &must, NULL) < 0)
                        must = false;
                if (must || !agent_res_fits(&unmodified, avail, m->n_custom))
                        return no_space(&c, &want, avail);
                want = unmodified;
        }
        if (want.cpus == 0 && want.memory == 0 && want.disk == 0) {
                bool any = false;

                for (size_t i = 0; i < m->n_custom; i++)
                        any = any || want.custom[i] > 0;
                if (!any)
                        return fail(&c, -EINVAL, "the job asks for no CPU, memory, disk or other resource");
        }
        *ret = want;
        return 0;
}

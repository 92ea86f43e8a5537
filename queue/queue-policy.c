/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-policy.c — a job's periodic and exit policy as HTCondor's
 * UserPolicy analyses it (condor_utils/user_job_policy.cpp): the first
 * that fires of PeriodicHold (not Held), PeriodicRelease (Held),
 * PeriodicRemove — each the job's attribute, then the SYSTEM_PERIODIC_*
 * knob — then, at exit, OnExitHold and OnExitRemove.
 *
 * A job's expression fires on a number or boolean that is not zero; one
 * that evaluates to anything else (UNDEFINED, ERROR, a string) fires as
 * "undefined" (the job is held, code 5), except an expression that is the
 * literal UNDEFINED, which is false. A knob fires only on a non-zero
 * number or true.
 *
 * An expression whose evaluation runs out of the evaluation budget
 * (CLASSAD_EVAL_BUDGET) would in every pass: the job is held, with code 5
 * (JobPolicyUndefined) for its own attribute and 27
 * (SystemPolicyUndefined) for a knob, and a reason that says so.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "queue-internal.h"

#define OVER_BUDGET (-2)

/* 1 true, 0 false, -1 undefined, OVER_BUDGET; absent: 0 with *ret_present false. */
static int eval_job_expr(const ClassAd *ad, const char *attr, bool *ret_present) {
        CaValue v = ca_undefined();
        double d;
        int res = -1;
        uint64_t hits = classad_budget_hits();

        *ret_present = classad_has(ad, attr);
        if (!*ret_present)
                return 0;
        if (classad_eval_attr(ad, attr, QUEUE_MODE, &v) >= 0 && ca_to_real(&v, &d))
                res = d != 0;
        ca_value_clear(&v);
        if (classad_budget_hits() != hits)
                return OVER_BUDGET;
        if (res < 0) {
                char *text = classad_unparse_attr(ad, attr);
                const char *t = text ? text : "";
                while (isspace((unsigned char) *t))
                        t++;
                if (strncasecmp(t, "undefined", 9) == 0 && !t[9 + strspn(t + 9, " \t")])
                        res = 0;
                free(text);
        }
        return res;
}

/* 1 fires, 0 not, OVER_BUDGET. */
static int eval_knob(const ClassAdExpr *e, const ClassAd *ad) {
        CaValue v = ca_undefined();
        double d = 0;
        bool yes;
        uint64_t hits = classad_budget_hits();

        if (!e)
                return 0;
        yes = classad_expr_eval(e, ad, NULL, QUEUE_MODE, &v) >= 0 && ca_to_real(&v, &d) && d != 0;
        ca_value_clear(&v);
        if (classad_budget_hits() != hits)
                return OVER_BUDGET;
        return yes;
}

static void over_budget(QPolicyResult *res, int code, const char *what) {
        *res = (QPolicyResult) { .action = QP_HOLD, .code = code };
        snprintf(res->reason, sizeof(res->reason),
                 "%s too expensive to evaluate: exceeded the evaluation budget of %u steps", what,
                 (unsigned) CLASSAD_EVAL_BUDGET);
}

/* The reason written when none is given: HTCondor's sentence. */
static void default_reason(QPolicyResult *res, const char *source, const char *name, const char *text, int val) {
        snprintf(res->reason, sizeof(res->reason), "The %s %s expression '%s' evaluated to %s", source, name,
                 text ? text : "", val > 0 ? "TRUE" : val == 0 ? "FALSE" : "UNDEFINED");
}

/* A string attribute or knob giving the reason (empty: none). */
static bool string_of_attr(const ClassAd *ad, const char *attr, char *buf, size_t len) {
        char *s = NULL;
        bool ok = classad_eval_string(ad, attr, QUEUE_MODE, &s) >= 0 && s && *s;

        if (ok)
                snprintf(buf, len, "%s", s);
        free(s);
        return ok;
}

static bool string_of_knob(const ClassAdExpr *e, const ClassAd *ad, char *buf, size_t len) {
        CaValue v = ca_undefined();
        bool ok = false;

        if (e && classad_expr_eval(e, ad, NULL, QUEUE_MODE, &v) >= 0 && v.type == CA_STRING && v.u.s->len > 0) {
                snprintf(buf, len, "%s", v.u.s->s);
                ok = true;
        }
        ca_value_clear(&v);
        return ok;
}

/* One policy: the job's attribute, then the knob. true when it decided. */
static bool single(const ClassAd *ad, const char *attr, const ClassAdExpr *knob, const char *knob_name,
                   const ClassAdExpr *knob_reason, const ClassAdExpr *knob_subcode, QPolicyAction on_true,
                   int hold_code, QPolicyResult *res) {
        bool present;
        int val = eval_job_expr(ad, attr, &present), k;

        if (val == OVER_BUDGET) {
                over_budget(res, QUEUE_HOLD_JOB_POLICY_UNDEFINED, attr);
                return true;
        }
        if (present && val != 0) {
                char *text = classad_unparse_attr(ad, attr);
                char name[64];

                *res = (QPolicyResult) { .action = val > 0 ? on_true : QP_HOLD };
                if (val < 0) {
                        res->code = QUEUE_HOLD_JOB_POLICY_UNDEFINED;
                        default_reason(res, "job attribute", attr, text, -1);
                } else {
                        int64_t sub = 0;
                        res->code = hold_code;
                        snprintf(name, sizeof(name), "%sSubCode", attr);
                        if (classad_eval_int(ad, name, QUEUE_MODE, &sub) >= 0)
                                res->subcode = (int) sub;
                        snprintf(name, sizeof(name), "%sReason", attr);
                        if (!string_of_attr(ad, name, res->reason, sizeof(res->reason)))
                                default_reason(res, "job attribute", attr, text, 1);
                }
                free(text);
                return true;
        }
        k = knob ? eval_knob(knob, ad) : 0;
        if (k == OVER_BUDGET) {
                char what[96];
                snprintf(what, sizeof(what), "%s for this job", knob_name);
                over_budget(res, QUEUE_HOLD_SYSTEM_POLICY_UNDEFINED, what);
                return true;
        }
        if (k > 0) {
                char *text = classad_expr_unparse(knob);
                CaValue v = ca_undefined();
                double d;

                *res = (QPolicyResult) { .action = on_true, .code = QUEUE_HOLD_SYSTEM_POLICY };
                if (knob_subcode && classad_expr_eval(knob_subcode, ad, NULL, QUEUE_MODE, &v) >= 0 &&
                    ca_to_real(&v, &d))
                        res->subcode = (int) d;
                ca_value_clear(&v);
                if (!string_of_knob(knob_reason, ad, res->reason, sizeof(res->reason)))
                        default_reason(res, "system macro", knob_name, text, 1);
                free(text);
                return true;
        }
        return false;
}

void queue_policy(const JobQueue *q, const ClassAd *ad, JobStatus status, bool at_exit, QPolicyResult *ret) {
        const QueueSettings *s = &q->settings;
        bool present;
        int val;

        *ret = (QPolicyResult) { .action = QP_NONE };
        if (status != JOB_HELD &&
            single(ad, "PeriodicHold", s->system_periodic_hold, "SYSTEM_PERIODIC_HOLD", s->system_periodic_hold_reason,
                   s->system_periodic_hold_subcode, QP_HOLD, QUEUE_HOLD_JOB_POLICY, ret))
                return;
        if (status == JOB_HELD &&
            single(ad, "PeriodicRelease", s->system_periodic_release, "SYSTEM_PERIODIC_RELEASE",
                   s->system_periodic_release_reason, NULL, QP_RELEASE, 0, ret)) {
                if (ret->action == QP_HOLD) /* undefined: it is held already */
                        *ret = (QPolicyResult) { .action = QP_NONE };
                return;
        }
        if (single(ad, "PeriodicRemove", s->system_periodic_remove, "SYSTEM_PERIODIC_REMOVE",
                   s->system_periodic_remove_reason, NULL, QP_REMOVE, 0, ret)) {
                if (ret->action == QP_HOLD && status == JOB_HELD)
                        *ret = (QPolicyResult) { .action = QP_NONE };
                return;
        }
        if (!at_exit)
                return;
        if (single(ad, "OnExitHold", NULL, NULL, NULL, NULL, QP_HOLD, QUEUE_HOLD_JOB_POLICY, ret))
                return;
        val = eval_job_expr(ad, "OnExitRemove", &present);
        if (val == OVER_BUDGET)
                over_budget(ret, QUEUE_HOLD_JOB_POLICY_UNDEFINED, "OnExitRemove");
        else if (!present || val > 0)
                *ret = (QPolicyResult) { .action = QP_COMPLETE };
        else if (val == 0)
                *ret = (QPolicyResult) { .action = QP_REQUEUE };
        else {
                char *text = classad_unparse_attr(ad, "OnExitRemove");
                *ret = (QPolicyResult) { .action = QP_HOLD, .code = QUEUE_HOLD_JOB_POLICY_UNDEFINED };
                default_reason(ret, "job attribute", "OnExitRemove", text, -1);
                free(text);
        }
}

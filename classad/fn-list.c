/* SPDX-License-Identifier: Apache-2.0 */
/* fn-list.c — member, identicalMember, size, sum, avg, min, max,
 * anyCompare, allCompare (fnCall.cpp testMember, size, sumAvg, minMax,
 * listCompare). */
#include "fn-internal.h"

static bool is_true(const CaValue *v) {
        return v->type == CA_BOOL && v->u.b;
}

/* member(x, L) compares with ==, identicalMember(x, L) with =?=. UNDEFINED
 * list is UNDEFINED, as is an UNDEFINED x for member(); a non-list L, or a
 * list or ad x, is ERROR, as is an ERROR x for member(). */
static void test_member(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool identical) {
        if (!fn_arity(nargs, 2, 2, ret))
                return;
        CaValue x, l;
        ca_eval(ev, args[0], &x);
        ca_eval(ev, args[1], &l);
        if (l.type == CA_UNDEFINED || (!identical && x.type == CA_UNDEFINED)) {
                *ret = ca_undefined();
        } else if (l.type != CA_LIST || x.type == CA_LIST || x.type == CA_AD ||
                   (!identical && x.type == CA_ERROR)) {
                *ret = ca_error();
        } else {
                *ret = ca_bool(false);
                uint32_t n = ca_list_len(&l);
                for (uint32_t i = 0; i < n; i++) {
                        CaValue e, r;
                        ca_list_elem(ev, &l, i, &e);
                        ca_op_apply(identical ? CA_OP_IS : CA_OP_EQ, &e, &x, &r);
                        bool hit = is_true(&r);
                        ca_value_clear(&r);
                        ca_value_clear(&e);
                        if (hit) {
                                *ret = ca_bool(true);
                                break;
                        }
                }
        }
        ca_value_clear(&x);
        ca_value_clear(&l);
}

static void fn_member(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        test_member(ev, args, nargs, ret, false);
}

static void fn_identicalmember(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        test_member(ev, args, nargs, ret, true);
}

/* size(): elements of a list, attributes of an ad, bytes of a string;
 * UNDEFINED stays UNDEFINED, anything else is ERROR. */
static void fn_size(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ca_eval(ev, args[0], &v);
        switch (v.type) {
        case CA_UNDEFINED:
                *ret = ca_undefined();
                break;
        case CA_LIST:
                *ret = ca_int(ca_list_len(&v));
                break;
        case CA_AD:
                *ret = ca_int((int64_t) classad_size(v.u.ad));
                break;
        case CA_STRING:
                *ret = ca_int(fn_strlen(&v));
                break;
        default:
                *ret = ca_error();
                break;
        }
        ca_value_clear(&v);
}

/* The list argument of the aggregate functions: true with *l a list, or
 * false with *ret set (UNDEFINED list is UNDEFINED, non-list ERROR). */
static bool list_arg(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *l, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return false;
        ca_eval(ev, args[0], l);
        if (l->type == CA_LIST)
                return true;
        *ret = l->type == CA_UNDEFINED ? ca_undefined() : ca_error();
        ca_value_clear(l);
        return false;
}

/* Value::IsNumber(): integers, reals and booleans. */
static bool is_number(const CaValue *v) {
        return ca_is_number(v) || v->type == CA_BOOL;
}

/* sum() and avg() skip UNDEFINED elements; any other non-number is
 * ERROR (booleans count as numbers: sum({true}) is true, sum({1, true})
 * 2). sum({}) is 0; avg() divides by the count as a real, and with
 * nothing to count returns the integer 0 (sumAvg). */
static void sum_avg(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool avg) {
        CaValue l;
        if (!list_arg(ev, args, nargs, &l, ret))
                return;
        CaValue acc = ca_int(0);
        int64_t count = 0;
        uint32_t n = ca_list_len(&l);
        for (uint32_t i = 0; i < n; i++) {
                CaValue e;
                ca_list_elem(ev, &l, i, &e);
                if (e.type == CA_UNDEFINED)
                        continue;
                if (!is_number(&e)) {
                        ca_value_clear(&e);
                        ca_value_clear(&acc);
                        ca_value_clear(&l);
                        *ret = ca_error();
                        return;
                }
                if (count++ == 0) {
                        acc = e;
                } else {
                        CaValue sum;
                        ca_op_apply(CA_OP_ADD, &acc, &e, &sum);
                        ca_value_clear(&acc);
                        acc = sum;
                }
        }
        ca_value_clear(&l);
        if (avg && count > 0) {
                CaValue divisor = ca_real((double) count);
                ca_op_apply(CA_OP_DIV, &acc, &divisor, ret);
                ca_value_clear(&acc);
        } else {
                *ret = acc;
        }
}

static void fn_sum(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        sum_avg(ev, args, nargs, ret, false);
}

static void fn_avg(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        sum_avg(ev, args, nargs, ret, true);
}

/* min() and max() skip UNDEFINED elements, ERROR on other non-numbers
 * (booleans are numbers);
 * an element replaces the bound when it is < (>) it; nothing left to
 * compare is UNDEFINED (minMax). */
static void min_max(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool want_min) {
        CaValue l;
        if (!list_arg(ev, args, nargs, &l, ret))
                return;
        CaValue bound = ca_undefined();
        bool first = true;
        uint32_t n = ca_list_len(&l);
        for (uint32_t i = 0; i < n; i++) {
                CaValue e, cmp;
                ca_list_elem(ev, &l, i, &e);
                if (e.type == CA_UNDEFINED)
                        continue;
                if (!is_number(&e)) {
                        ca_value_clear(&e);
                        ca_value_clear(&bound);
                        ca_value_clear(&l);
                        *ret = ca_error();
                        return;
                }
                if (first) {
                        bound = e;
                        first = false;
                        continue;
                }
                ca_op_apply(want_min ? CA_OP_LT : CA_OP_GT, &e, &bound, &cmp);
                if (is_true(&cmp)) {
                        ca_value_clear(&bound);
                        bound = e;
                } else {
                        ca_value_clear(&e);
                }
                ca_value_clear(&cmp);
        }
        ca_value_clear(&l);
        *ret = bound;
}

static void fn_min(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        min_max(ev, args, nargs, ret, true);
}

static void fn_max(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        min_max(ev, args, nargs, ret, false);
}

/* anyCompare(op, L, x) / allCompare(op, L, x): op is one of < <= != ==
 * > >= is isnt (exactly; UNDEFINED op is UNDEFINED, others ERROR), L a
 * list (UNDEFINED is UNDEFINED). Each element is compared as `e op x`.
 * As in listCompare, the first comparison that is neither true nor false
 * ends the walk: UNDEFINED gives false, anything else ERROR. */
static void list_compare(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool all) {
        static const struct {
                const char *name;
                CaOp op;
        } ops[] = {
                { "<", CA_OP_LT },  { "<=", CA_OP_LE }, { "!=", CA_OP_NE }, { "==", CA_OP_EQ },
                { ">", CA_OP_GT },  { ">=", CA_OP_GE }, { "is", CA_OP_IS }, { "isnt", CA_OP_ISNT },
        };
        if (!fn_arity(nargs, 3, 3, ret))
                return;
        CaValue opv, l = ca_undefined(), x = ca_undefined();
        CaOp op = CA_OP_EQ;
        bool found = false;

        ca_eval(ev, args[0], &opv);
        if (opv.type != CA_STRING) {
                *ret = opv.type == CA_UNDEFINED ? ca_undefined() : ca_error();
                goto out;
        }
        for (size_t i = 0; i < ELEMENTSOF(ops); i++)
                if (strcmp(fn_str(&opv), ops[i].name) == 0) {
                        op = ops[i].op;
                        found = true;
                }
        if (!found) {
                *ret = ca_error();
                goto out;
        }
        ca_eval(ev, args[1], &l);
        if (l.type != CA_LIST) {
                *ret = l.type == CA_UNDEFINED ? ca_undefined() : ca_error();
                goto out;
        }
        ca_eval(ev, args[2], &x);

        *ret = ca_bool(all);
        uint32_t n = ca_list_len(&l);
        for (uint32_t i = 0; i < n; i++) {
                CaValue e, r;
                ca_list_elem(ev, &l, i, &e);
                ca_op_apply(op, &e, &x, &r);
                ca_value_clear(&e);
                if (r.type != CA_BOOL) {
                        *ret = r.type == CA_UNDEFINED ? ca_bool(false) : ca_error();
                        ca_value_clear(&r);
                        break;
                }
                if (r.u.b != all) { /* anyCompare: first true; allCompare: first false */
                        *ret = ca_bool(!all);
                        break;
                }
        }
out:
        ca_value_clear(&opv);
        ca_value_clear(&l);
        ca_value_clear(&x);
}

static void fn_anycompare(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        list_compare(ev, args, nargs, ret, false);
}

static void fn_allcompare(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        list_compare(ev, args, nargs, ret, true);
}

static const CaFunc fns[] = {
        { "member", fn_member, CA_FN_PURE },
        { "identicalMember", fn_identicalmember, CA_FN_PURE },
        { "size", fn_size, CA_FN_PURE },
        { "sum", fn_sum, CA_FN_PURE },
        { "avg", fn_avg, CA_FN_PURE },
        { "min", fn_min, CA_FN_PURE },
        { "max", fn_max, CA_FN_PURE },
        { "anyCompare", fn_anycompare, CA_FN_PURE },
        { "allCompare", fn_allcompare, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_list = { fns, ELEMENTSOF(fns) };

/* SPDX-License-Identifier: Apache-2.0 */
/* fn-type.c — type predicates and conversions: isUndefined ... isReltime,
 * int, real, string, bool (fnCall.cpp isType, convInt, convReal,
 * convString, convBool). */
#include "fn-internal.h"

static void is_type(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, CaType t) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ca_eval(ev, args[0], &v);
        *ret = ca_bool(v.type == t);
        ca_value_clear(&v);
}

static void fn_isundefined(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_UNDEFINED);
}

static void fn_iserror(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_ERROR);
}

static void fn_isstring(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_STRING);
}

static void fn_isinteger(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_INT);
}

static void fn_isreal(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_REAL);
}

static void fn_islist(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_LIST);
}

static void fn_isclassad(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_AD);
}

/* Only true booleans: isBoolean(1) is false (Value::IsBooleanValue). */
static void fn_isboolean(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_BOOL);
}

static void fn_isabstime(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_ABSTIME);
}

static void fn_isreltime(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        is_type(ev, args, nargs, ret, CA_RELTIME);
}

/* int(): UNDEFINED stays UNDEFINED; strings go through strtod and are
 * truncated ("3.9" -> 3), unparsable strings, lists, ads are ERROR
 * (convertValueToIntegerValue). */
static void fn_int(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        int64_t i = 0;
        ca_eval(ev, args[0], &v);
        switch (fn_conv_int(&v, &i)) {
        case FN_CONV_OK:
                *ret = ca_int(i);
                break;
        case FN_CONV_UNDEF:
                *ret = ca_undefined();
                break;
        default:
                *ret = ca_error();
                break;
        }
        ca_value_clear(&v);
}

/* real(): as int() without truncation; real("INF"), real("NaN") work
 * because strtod accepts them (convertValueToRealValue). */
static void fn_real(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        double r = 0;
        ca_eval(ev, args[0], &v);
        switch (fn_conv_real(&v, &r)) {
        case FN_CONV_OK:
                *ret = ca_real(r);
                break;
        case FN_CONV_UNDEF:
                *ret = ca_undefined();
                break;
        default:
                *ret = ca_error();
                break;
        }
        ca_value_clear(&v);
}

/* string(): unparses non-strings; absolute and relative times give their
 * text without the absTime("...") wrapper (convertValueToStringValue). */
static void fn_string(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ca_eval(ev, args[0], &v);
        fn_conv_string(&v, ret);
        ca_value_clear(&v);
}

/* bool(): numbers are true when non-zero, relative times when their whole
 * seconds are non-zero, strings "true"/"false" in any case, any other
 * string UNDEFINED; lists, ads, absolute times ERROR (convBool). */
static void fn_bool(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ca_eval(ev, args[0], &v);
        switch (v.type) {
        case CA_UNDEFINED:
                *ret = ca_undefined();
                break;
        case CA_BOOL:
                *ret = ca_bool(v.u.b);
                break;
        case CA_INT:
                *ret = ca_bool(v.u.i != 0);
                break;
        case CA_REAL:
                *ret = ca_bool(v.u.r != 0.0);
                break;
        case CA_RELTIME:
                *ret = ca_bool(fn_reltime_secs(&v) != 0);
                break;
        case CA_STRING:
                if (strcasecmp(fn_str(&v), "false") == 0)
                        *ret = ca_bool(false);
                else if (strcasecmp(fn_str(&v), "true") == 0)
                        *ret = ca_bool(true);
                else
                        *ret = ca_undefined();
                break;
        default:
                *ret = ca_error();
                break;
        }
        ca_value_clear(&v);
}

static const CaFunc fns[] = {
        { "isUndefined", fn_isundefined, CA_FN_PURE },
        { "isError", fn_iserror, CA_FN_PURE },
        { "isString", fn_isstring, CA_FN_PURE },
        { "isInteger", fn_isinteger, CA_FN_PURE },
        { "isReal", fn_isreal, CA_FN_PURE },
        { "isList", fn_islist, CA_FN_PURE },
        { "isClassAd", fn_isclassad, CA_FN_PURE },
        { "isBoolean", fn_isboolean, CA_FN_PURE },
        { "isAbstime", fn_isabstime, CA_FN_PURE },
        { "isReltime", fn_isreltime, CA_FN_PURE },
        { "int", fn_int, CA_FN_PURE },
        { "real", fn_real, CA_FN_PURE },
        { "string", fn_string, CA_FN_PURE },
        { "bool", fn_bool, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_type = { fns, ELEMENTSOF(fns) };

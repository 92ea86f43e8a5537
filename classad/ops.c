/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops.c — HTCondor's strict operators on values: arithmetic, comparison,
 * bitwise, and the meta-comparisons =?= and =!=.
 *
 * Strict operators give ERROR if either operand is ERROR, else UNDEFINED if
 * either is UNDEFINED. Booleans promote to integers in arithmetic; a string
 * compared with a number is ERROR; == on strings ignores case, =?= does not.
 */
#include "classad-internal.h"

#include <math.h>
#include <stdlib.h>
#include <strings.h>

static bool is_numeric(const CaValue *v) {
        return v->type == CA_INT || v->type == CA_REAL || v->type == CA_BOOL;
}

static int64_t as_int(const CaValue *v) {
        return v->type == CA_BOOL ? (int64_t) v->u.b : v->u.i;
}

static double as_real(const CaValue *v) {
        return v->type == CA_REAL ? v->u.r : (double) as_int(v);
}

static CaValue int_arith(CaOp op, int64_t a, int64_t b) {
        uint64_t ua = (uint64_t) a, ub = (uint64_t) b;
        switch (op) {
        case CA_OP_ADD: return ca_int((int64_t) (ua + ub));
        case CA_OP_SUB: return ca_int((int64_t) (ua - ub));
        case CA_OP_MUL: return ca_int((int64_t) (ua * ub));
        case CA_OP_DIV:
                if (b == 0)
                        return ca_error();
                if (a == INT64_MIN && b == -1)
                        return ca_int(INT64_MAX);
                return ca_int(a / b);
        case CA_OP_MOD:
                if (b == 0)
                        return ca_error();
                if (a == INT64_MIN && b == -1)
                        return ca_int(0);
                return ca_int(a % b);
        default: return ca_error();
        }
}

/* HTCondor turns a result of +HUGE_VAL into ERROR (so 1.0/0 is ERROR while
 * -1.0/0 is -INF and 0.0/0 is NaN); real modulus is ERROR. */
static CaValue real_arith(CaOp op, double a, double b) {
        double r;
        switch (op) {
        case CA_OP_ADD: r = a + b; break;
        case CA_OP_SUB: r = a - b; break;
        case CA_OP_MUL: r = a * b; break;
        case CA_OP_DIV: r = a / b; break;
        default: return ca_error();
        }
        if (r == HUGE_VAL)
                return ca_error();
        return ca_real(r);
}

static CaValue time_arith(CaOp op, const CaValue *a, const CaValue *b) {
        CaType ta = a->type, tb = b->type;
        if (ta == CA_ABSTIME && tb == CA_RELTIME && (op == CA_OP_ADD || op == CA_OP_SUB)) {
                double d = op == CA_OP_ADD ? b->u.rt : -b->u.rt;
                return ca_abstime(a->u.at.secs + (int64_t) d, a->u.at.offset);
        }
        if (ta == CA_RELTIME && tb == CA_ABSTIME && op == CA_OP_ADD)
                return ca_abstime(b->u.at.secs + (int64_t) a->u.rt, b->u.at.offset);
        if (ta == CA_ABSTIME && tb == CA_ABSTIME && op == CA_OP_SUB)
                return ca_reltime((double) (a->u.at.secs - b->u.at.secs));
        if (ta == CA_RELTIME && tb == CA_RELTIME && (op == CA_OP_ADD || op == CA_OP_SUB))
                return ca_reltime(op == CA_OP_ADD ? a->u.rt + b->u.rt : a->u.rt - b->u.rt);
        if (ta == CA_RELTIME && is_numeric(b) && (op == CA_OP_MUL || op == CA_OP_DIV)) {
                double d = as_real(b);
                if (op == CA_OP_DIV && d == 0.0)
                        return ca_error();
                return ca_reltime(op == CA_OP_MUL ? a->u.rt * d : a->u.rt / d);
        }
        if (tb == CA_RELTIME && is_numeric(a) && op == CA_OP_MUL)
                return ca_reltime(b->u.rt * as_real(a));
        return ca_error();
}

static CaValue arith(CaOp op, const CaValue *a, const CaValue *b) {
        if (a->type == CA_ABSTIME || a->type == CA_RELTIME || b->type == CA_ABSTIME || b->type == CA_RELTIME)
                return time_arith(op, a, b);
        if (!is_numeric(a) || !is_numeric(b))
                return ca_error();
        if (a->type == CA_REAL || b->type == CA_REAL)
                return real_arith(op, as_real(a), as_real(b));
        return int_arith(op, as_int(a), as_int(b));
}

static CaValue cmp_result(CaOp op, int c) {
        return ca_bool(ca_cmp_holds(op, c));
}

static int cmp_real(double a, double b) {
        return a < b ? -1 : a > b ? 1 : 0;
}

static CaValue compare(CaOp op, const CaValue *a, const CaValue *b) {
        if (a->type == CA_STRING && b->type == CA_STRING)
                return cmp_result(op, strcasecmp(a->u.s->s, b->u.s->s));
        if (a->type == CA_ABSTIME && b->type == CA_ABSTIME)
                return cmp_result(op, a->u.at.secs < b->u.at.secs ? -1 : a->u.at.secs > b->u.at.secs);
        if (a->type == CA_RELTIME && b->type == CA_RELTIME)
                return cmp_result(op, cmp_real(a->u.rt, b->u.rt));
        if (a->type == CA_BOOL && b->type == CA_BOOL)
                return cmp_result(op, (int) a->u.b - (int) b->u.b);
        if (is_numeric(a) && is_numeric(b)) {
                if (a->type == CA_REAL || b->type == CA_REAL) {
                        double x = as_real(a), y = as_real(b);
                        if (isnan(x) || isnan(y)) /* unordered: only != holds */
                                return ca_bool(op == CA_OP_NE);
                        return cmp_result(op, cmp_real(x, y));
                }
                int64_t x = as_int(a), y = as_int(b);
                return cmp_result(op, x < y ? -1 : x > y);
        }
        return ca_error();
}

/* =?= : identical in type and value; never UNDEFINED. */
static bool identical(const CaValue *a, const CaValue *b) {
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case CA_UNDEFINED:
        case CA_ERROR: return true;
        case CA_BOOL: return a->u.b == b->u.b;
        case CA_INT: return a->u.i == b->u.i;
        case CA_REAL: return a->u.r == b->u.r; /* NaN is not identical to itself */
        case CA_STRING: return a->u.s->len == b->u.s->len && memcmp(a->u.s->s, b->u.s->s, a->u.s->len) == 0;
        case CA_ABSTIME: return a->u.at.secs == b->u.at.secs && a->u.at.offset == b->u.at.offset;
        case CA_RELTIME: return a->u.rt == b->u.rt;
        case CA_LIST:
        case CA_AD:
                break; /* handled by the caller: ERROR */
        }
        return false;
}

/* Integers only, as HTCondor's doBitwise: booleans are ERROR here. */
static CaValue bitwise(CaOp op, const CaValue *a, const CaValue *b) {
        if (a->type != CA_INT || b->type != CA_INT)
                return ca_error();
        uint64_t x = (uint64_t) a->u.i, y = (uint64_t) b->u.i;
        switch (op) {
        case CA_OP_BAND: return ca_int((int64_t) (x & y));
        case CA_OP_BOR: return ca_int((int64_t) (x | y));
        case CA_OP_BXOR: return ca_int((int64_t) (x ^ y));
        case CA_OP_SHL: return ca_int((int64_t) (x << (y & 63)));
        case CA_OP_SHR: return ca_int(a->u.i >> (y & 63)); /* arithmetic */
        case CA_OP_USHR: return ca_int((int64_t) (x >> (y & 63)));
        default: return ca_error();
        }
}

static CaValue unary(CaOp op, const CaValue *a) {
        switch (op) {
        case CA_OP_NEG:
                if (a->type == CA_INT)
                        return ca_int((int64_t) (0 - (uint64_t) a->u.i));
                if (a->type == CA_REAL)
                        return ca_real(-a->u.r);
                if (a->type == CA_RELTIME)
                        return ca_reltime(-a->u.rt);
                return ca_error();
        case CA_OP_POS:
                if (a->type == CA_INT || a->type == CA_REAL || a->type == CA_RELTIME)
                        return *a;
                return ca_error();
        case CA_OP_NOT: {
                bool b;
                return ca_to_bool(a, &b) ? ca_bool(!b) : ca_error();
        }
        case CA_OP_BNOT:
                if (a->type == CA_INT)
                        return ca_int(~a->u.i);
                return ca_error();
        default:
                return ca_error();
        }
}

void ca_op_apply(CaOp op, const CaValue *a, const CaValue *b, CaValue *ret) {
        if (op == CA_OP_IS || op == CA_OP_ISNT) {
                /* lists and ads cannot be compared, not even for identity */
                if (a->type == b->type && (a->type == CA_LIST || a->type == CA_AD)) {
                        *ret = ca_error();
                        return;
                }
                bool same = identical(a, b);
                *ret = ca_bool(op == CA_OP_IS ? same : !same);
                return;
        }
        if (a->type == CA_ERROR || (b && b->type == CA_ERROR)) {
                *ret = ca_error();
                return;
        }
        if (a->type == CA_UNDEFINED || (b && b->type == CA_UNDEFINED)) {
                *ret = ca_undefined();
                return;
        }
        switch (op) {
        case CA_OP_NEG: case CA_OP_POS: case CA_OP_NOT: case CA_OP_BNOT:
                *ret = unary(op, a);
                return;
        case CA_OP_ADD: case CA_OP_SUB: case CA_OP_MUL: case CA_OP_DIV: case CA_OP_MOD:
                *ret = arith(op, a, b);
                return;
        case CA_OP_LT: case CA_OP_LE: case CA_OP_GT: case CA_OP_GE: case CA_OP_EQ: case CA_OP_NE:
                *ret = compare(op, a, b);
                return;
        case CA_OP_BAND: case CA_OP_BOR: case CA_OP_BXOR: case CA_OP_SHL: case CA_OP_SHR: case CA_OP_USHR:
                *ret = bitwise(op, a, b);
                return;
        default:
                *ret = ca_error();
                return;
        }
}

/* SPDX-License-Identifier: Apache-2.0 */
/* fn-math.c — floor, ceil, ceiling, round, pow, quantize, random
 * (fnCall.cpp doRound, doMath2, random). */
#include "fn-internal.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

typedef enum RoundKind { ROUND_FLOOR, ROUND_CEIL, ROUND_NEAREST } RoundKind;

/* Integers pass through unchanged; anything else goes through real()
 * (so "3.9" and true work, UNDEFINED is ERROR) and is rounded to an
 * integer; round() is rint(), i.e. halves go to the even neighbour. */
static void do_round(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, RoundKind kind) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        double r;
        ca_eval(ev, args[0], &v);
        if (v.type == CA_INT)
                *ret = ca_int(v.u.i);
        else if (fn_conv_real(&v, &r) != FN_CONV_OK)
                *ret = ca_error();
        else
                *ret = ca_int(fn_d2ll(kind == ROUND_FLOOR ? floor(r) : kind == ROUND_CEIL ? ceil(r) : rint(r)));
        ca_value_clear(&v);
}

static void fn_floor(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        do_round(ev, args, nargs, ret, ROUND_FLOOR);
}

static void fn_ceil(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        do_round(ev, args, nargs, ret, ROUND_CEIL);
}

static void fn_round(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        do_round(ev, args, nargs, ret, ROUND_NEAREST);
}

/* pow(int, int >= 0) is an integer computed in floating point and then
 * (long long)(x + 0.5), so pow(-2, 3) is -7 as in HTCondor; every other
 * combination converts both sides with real() and returns a real. */
static void fn_pow(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 2, 2, ret))
                return;
        CaValue v[2];
        double base, expo;
        ca_eval(ev, args[0], &v[0]);
        ca_eval(ev, args[1], &v[1]);
        if (v[0].type == CA_INT && v[1].type == CA_INT && v[1].u.i >= 0)
                *ret = ca_int(fn_d2ll(pow((double) v[0].u.i, (double) v[1].u.i) + 0.5));
        else if (fn_conv_real(&v[0], &base) != FN_CONV_OK || fn_conv_real(&v[1], &expo) != FN_CONV_OK)
                *ret = ca_error();
        else
                *ret = ca_real(pow(base, expo));
        fn_clear(v, 2);
}

/* Multiple of b at least a: integer when both are integers, else real.
 * b == 0 (or |b| <= 1e-8 for reals) returns a unchanged. */
static void quantize_by(const CaValue *a, double ra, const CaValue *b, double rb, CaValue *ret) {
        if (b->type == CA_INT) {
                int64_t ib = b->u.i;
                if (ib == 0)
                        *ret = ca_value_copy(a);
                else if (a->type == CA_INT) { /* C division truncates: quantize(-5, 4) is 0 */
                        int64_t sum = (int64_t) ((uint64_t) a->u.i + (uint64_t) ib - 1);
                        int64_t q = ib == -1 ? (int64_t) (0 - (uint64_t) sum) : sum / ib;
                        *ret = ca_int((int64_t) ((uint64_t) q * (uint64_t) ib));
                } else
                        *ret = ca_real(ceil(ra / (double) ib) * (double) ib);
        } else if (rb >= -1e-8 && rb <= 1e-8) {
                *ret = ca_value_copy(a);
        } else {
                *ret = ca_real(ceil(ra / rb) * rb);
        }
}

/* quantize(a, b): a goes through real(); a list b yields its first member
 * >= a, else quantizes by its last member; a member that real() rejects
 * before that is ERROR (doMath2). */
static void fn_quantize(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 2, 2, ret))
                return;
        CaValue a, b;
        double ra, rb = 0;
        ca_eval(ev, args[0], &a);
        ca_eval(ev, args[1], &b);
        if (fn_conv_real(&a, &ra) != FN_CONV_OK) {
                *ret = ca_error();
                goto out;
        }
        if (b.type == CA_LIST) {
                CaValue last = ca_real(0.0); /* an empty list: do not quantize */
                uint32_t n = ca_list_len(&b);
                for (uint32_t i = 0; i < n; i++) {
                        ca_value_clear(&last);
                        ca_list_elem(ev, &b, i, &last);
                        if (fn_conv_real(&last, &rb) != FN_CONV_OK) {
                                ca_value_clear(&last);
                                *ret = ca_error();
                                goto out;
                        }
                        if (rb >= ra) {
                                *ret = last;
                                goto out;
                        }
                }
                quantize_by(&a, ra, &last, rb, ret);
                ca_value_clear(&last);
        } else if (fn_conv_real(&b, &rb) != FN_CONV_OK) {
                *ret = ca_error();
        } else {
                quantize_by(&a, ra, &b, rb, ret);
        }
out:
        ca_value_clear(&a);
        ca_value_clear(&b);
}

/* xorshift64*, seeded from the clock and pid at first use. */
static uint64_t rng_state;

static uint64_t rng_next(void) {
        if (rng_state == 0) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                rng_state = ((uint64_t) ts.tv_sec * 1000000007u) ^ (uint64_t) ts.tv_nsec ^
                            ((uint64_t) getpid() << 32) ^ 0x9e3779b97f4a7c15u;
                if (rng_state == 0)
                        rng_state = 1;
        }
        rng_state ^= rng_state >> 12;
        rng_state ^= rng_state << 25;
        rng_state ^= rng_state >> 27;
        return rng_state * 0x2545f4914f6cdd1du;
}

/* random([x]): integer x > 0 gives 0 <= r < x, real x > 0 gives a real in
 * [0, x); no argument is random(1.0); x <= 0 and other types are ERROR. */
static void fn_random(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 0, 1, ret))
                return;
        CaValue v = ca_real(1.0);
        if (nargs == 1)
                ca_eval(ev, args[0], &v);
        if (v.type == CA_INT && v.u.i > 0)
                *ret = ca_int((int64_t) (rng_next() % (uint64_t) v.u.i));
        else if (v.type == CA_REAL && v.u.r > 0)
                *ret = ca_real(v.u.r * ((double) (rng_next() >> 11) / 9007199254740992.0));
        else
                *ret = ca_error();
        ca_value_clear(&v);
}

static const CaFunc fns[] = {
        { "floor", fn_floor, CA_FN_PURE },
        { "ceil", fn_ceil, CA_FN_PURE },
        { "ceiling", fn_ceil, CA_FN_PURE },
        { "round", fn_round, CA_FN_PURE },
        { "pow", fn_pow, CA_FN_PURE },
        { "quantize", fn_quantize, CA_FN_PURE },
        { "random", fn_random, 0 },
};

const CaFnGroup ca_fn_group_math = { fns, ELEMENTSOF(fns) };

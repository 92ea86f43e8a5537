/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-classad — libFuzzer target for the ClassAd parsers, unparser and
 * evaluator (public API of classad/classad.h only).
 *
 * Input: the first byte selects what to do, the rest is the text.
 *
 *   bit 0            mode: 0 CA_MODE_OLD, 1 CA_MODE_STRICT
 *   (byte >> 1) % 3  parser: 0 expression (classad_expr_parse)
 *                            1 bracketed ad (classad_parse)
 *                            2 old-format ad (classad_parse_old)
 *
 * With ASCII digits as the first byte: '0'/'1' expression, '2'/'3'
 * bracketed ad, '4'/'5' old-format ad; even old mode, odd strict mode.
 *
 * Whatever parses must round-trip: the unparsed text parses again (in the
 * same mode, with the parser that matches the unparser) and unparsing that
 * gives the identical text; otherwise the target prints both texts and
 * calls abort().  Then everything is evaluated and every value unparsed:
 *
 *   expression  classad_expr_eval() with a copy of a fixed small ad as MY
 *               and that same ad (holding the expression as attribute
 *               Fuzz) as TARGET; the expression is also used as
 *               Requirements and Rank of that ad and matched against the
 *               fixed ad.
 *   ad          every attribute with classad_eval_attr(), the ad matched
 *               against itself, its Rank against itself.
 *
 * Time functions read the real clock (the public API has no way to pin it),
 * so values may differ between runs; only the round-trip is checked.
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "classad.h"
#include "common/cleanup.h"

#define FUZZ_MAX_LIST_ITEMS 16

#define _cleanup_classad_ _cleanup_(classad_freep)
#define _cleanup_expr_ _cleanup_(classad_expr_freep)

static inline void classad_freep(ClassAd **ad) {
        classad_free(*ad);
}

static inline void classad_expr_freep(ClassAdExpr **e) {
        classad_expr_free(*e);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef enum FuzzParser {
        FUZZ_EXPR,
        FUZZ_AD,
        FUZZ_AD_OLD,
} FuzzParser;

static const char fixed_ad_text[] =
        "[ A = 1; B = 2.5; S = \"str\"; L = { 1, \"two\", 3.0, { 4 } }; "
        "N = [ x = 1; y = \"z\"; L2 = { x, y } ]; Owner = \"alice\"; "
        "Memory = 2048; Cpus = 4; Department = \"physics\"; "
        "Requirements = TARGET.Memory >= 1024; Rank = Memory / 1024.0 ]";

/* The fixed ad, parsed once per mode. */
static const ClassAd *fixed_ad(CaMode mode) {
        static ClassAd *ads[2];
        CaError err = {};
        int r;

        if (ads[mode])
                return ads[mode];
        r = classad_parse(fixed_ad_text, strlen(fixed_ad_text), mode, &ads[mode], &err);
        if (r < 0) {
                fprintf(stderr, "fixed ad does not parse: %d:%d: %s (%s)\n", err.line, err.column, err.msg, strerror(-r));
                abort();
        }
        return ads[mode];
}

static _Noreturn void fail_roundtrip(const char *what, CaMode mode, const char *first, const char *second,
                                     const CaError *err) {
        fprintf(stderr, "ROUND-TRIP FAILURE (%s, %s mode)\n", what, mode == CA_MODE_STRICT ? "strict" : "old");
        fprintf(stderr, "first unparse:  <<%s>>\n", first);
        if (second)
                fprintf(stderr, "second unparse: <<%s>>\n", second);
        if (err)
                fprintf(stderr, "re-parse error: %d:%d: %s\n", err->line, err->column, err->msg);
        abort();
}

/* A library call that cannot fail except on ENOMEM returned NULL. */
static _Noreturn void fail_null(const char *what) {
        fprintf(stderr, "%s returned NULL\n", what);
        abort();
}

/* ---- values ---- */

static void unparse_value(const CaValue *v) {
        _cleanup_free_ char *s = ca_value_unparse(v);

        if (!s)
                fail_null("ca_value_unparse()");
}

/* Unparse v, copy it, and walk into lists and ads a little. */
static void exercise_value(const CaValue *v, CaMode mode) {
        CaValue copy;
        int64_t n;

        unparse_value(v);

        copy = ca_value_copy(v);
        if (ca_value_detach(&copy) >= 0)
                unparse_value(&copy);
        ca_value_clear(&copy);

        (void) ca_type_name(v->type);

        n = ca_list_size(v);
        for (int64_t i = 0; i < n && i < FUZZ_MAX_LIST_ITEMS; i++) {
                CaValue item = ca_undefined();

                if (ca_list_get(v, i, mode, &item) < 0)
                        continue;
                unparse_value(&item);
                ca_value_clear(&item);
        }

        if (v->type == CA_AD && v->u.ad) {
                _cleanup_free_ char *s = classad_unparse(v->u.ad);

                if (!s)
                        fail_null("classad_unparse() of a value");
        }
}

/* ---- expressions ---- */

static void expr_roundtrip(const ClassAdExpr *e, CaMode mode) {
        _cleanup_expr_ ClassAdExpr *e2 = NULL;
        _cleanup_free_ char *u1 = NULL, *u2 = NULL;
        CaError err = {};

        u1 = classad_expr_unparse(e);
        if (!u1)
                fail_null("classad_expr_unparse()");
        if (classad_expr_parse(u1, strlen(u1), mode, &e2, &err) < 0)
                fail_roundtrip("expression", mode, u1, NULL, &err);
        u2 = classad_expr_unparse(e2);
        if (!u2)
                fail_null("classad_expr_unparse()");
        if (strcmp(u1, u2) != 0)
                fail_roundtrip("expression", mode, u1, u2, NULL);
}

static void expr_evaluate(const ClassAdExpr *e, CaMode mode) {
        _cleanup_classad_ ClassAd *ad = NULL;
        const ClassAd *fixed = fixed_ad(mode);
        CaValue v = ca_undefined();

        if (classad_copy(fixed, &ad) < 0)
                return;
        if (classad_set_expr(ad, "Fuzz", e) < 0)
                return;

        if (classad_expr_eval(e, ad, ad, mode, &v) >= 0) {
                exercise_value(&v, mode);
                ca_value_clear(&v);
        }
        if (classad_eval_attr(ad, "Fuzz", mode, &v) >= 0) {
                exercise_value(&v, mode);
                ca_value_clear(&v);
        }

        if (classad_set_expr(ad, "Requirements", e) < 0 || classad_set_expr(ad, "Rank", e) < 0)
                return;
        (void) classad_match(ad, fixed, mode);
        (void) classad_rank(ad, fixed, mode);
        (void) classad_rank(fixed, ad, mode);
}

static void fuzz_expr(const char *text, size_t len, CaMode mode) {
        _cleanup_expr_ ClassAdExpr *e = NULL;
        CaError err = {};

        if (classad_expr_parse(text, len, mode, &e, &err) < 0)
                return;
        expr_roundtrip(e, mode);
        expr_evaluate(e, mode);
}

/* ---- ads ---- */

typedef int (*AdParser)(const char *text, size_t len, CaMode mode, ClassAd **ret, CaError *err);
typedef char *(*AdUnparser)(const ClassAd *ad);

static void ad_roundtrip(const ClassAd *ad, CaMode mode, AdParser parse, AdUnparser unparse, const char *what) {
        _cleanup_classad_ ClassAd *ad2 = NULL;
        _cleanup_free_ char *u1 = NULL, *u2 = NULL;
        CaError err = {};

        u1 = unparse(ad);
        if (!u1)
                fail_null(what);
        if (parse(u1, strlen(u1), mode, &ad2, &err) < 0)
                fail_roundtrip(what, mode, u1, NULL, &err);
        u2 = unparse(ad2);
        if (!u2)
                fail_null(what);
        if (strcmp(u1, u2) != 0)
                fail_roundtrip(what, mode, u1, u2, NULL);
}

static void ad_evaluate(const ClassAd *ad, CaMode mode) {
        ClassAdIter it = classad_iter(ad);
        const char *name;
        char *expr_text;

        while (classad_iter_next(&it, &name, &expr_text)) {
                CaValue v = ca_undefined();
                _cleanup_free_ char *attr_text = NULL;

                free(expr_text);
                if (classad_eval_attr(ad, name, mode, &v) >= 0) {
                        exercise_value(&v, mode);
                        ca_value_clear(&v);
                }
                attr_text = classad_unparse_attr(ad, name);
                if (!attr_text)
                        fail_null("classad_unparse_attr() of an attribute the iterator named");
        }

        (void) classad_match(ad, ad, mode);
        (void) classad_requirements_met(ad, ad, mode);
        (void) classad_rank(ad, ad, mode);
}

static void fuzz_ad(const char *text, size_t len, CaMode mode, bool old_format) {
        _cleanup_classad_ ClassAd *ad = NULL;
        CaError err = {};
        int r;

        if (old_format)
                r = classad_parse_old(text, len, mode, &ad, &err);
        else
                r = classad_parse(text, len, mode, &ad, &err);
        if (r < 0)
                return;

        ad_roundtrip(ad, mode, classad_parse, classad_unparse, "classad_unparse()");
        if (old_format)
                ad_roundtrip(ad, mode, classad_parse_old, classad_unparse_old, "classad_unparse_old()");
        ad_evaluate(ad, mode);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *text;
        CaMode mode;
        FuzzParser parser;

        if (size < 1)
                return 0;
        mode = (data[0] & 1) ? CA_MODE_STRICT : CA_MODE_OLD;
        parser = (FuzzParser) ((data[0] >> 1) % 3);
        text = (const char *) data + 1;
        size--;

        switch (parser) {
        case FUZZ_EXPR:
                fuzz_expr(text, size, mode);
                break;
        case FUZZ_AD:
                fuzz_ad(text, size, mode, false);
                break;
        case FUZZ_AD_OLD:
                fuzz_ad(text, size, mode, true);
                break;
        }
        return 0;
}

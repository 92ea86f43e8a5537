/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-budget.c — the work hostile ClassAd text can cause (issue 20,
 * items 2 and 3): parsing runs no function (a regexp() of constants is
 * kept as a call, not evaluated), a regular expression's match is bounded
 * (past the limit it is ERROR) and its compiled pattern cached by pattern
 * and options, and every evaluation has a budget that counts the work of
 * nested eval() and unparse() and the text eval() parses, ending in ERROR
 * (even where the expression would hide it) and counted by
 * classad_budget_hits(). The outcomes only: the times are bench/
 * classad-hostile's.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "classad-internal.h"
#include "test-util.h"

/* Backtracks exponentially in the number of a's: 33 of them take PCRE2's
 * default limit (10 million, a sixth of a second) and more. */
#define CATASTROPHIC "regexp(\"(\\\\w+\\\\s?)+$\",\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\")"
/* 18 a's need 655,360 steps: within PCRE2's default limit (false), past ours. */
#define LONG_BACKTRACK "regexp(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaa!\")"

static CaValue eval_text(const char *text, CaMode mode) {
        ClassAdExpr *e = NULL;
        CaError err = { 0 };
        CaValue v = ca_undefined();

        CU_ASSERT_EQUAL_FATAL(classad_expr_parse(text, strlen(text), mode, &e, &err), 0);
        CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, NULL, mode, &v), 0);
        classad_expr_free(e);
        return v;
}

static CaType type_of(const char *text) {
        CaValue v = eval_text(text, CA_MODE_OLD);
        CaType t = v.type;
        ca_value_clear(&v);
        return t;
}

static bool bool_of(const char *text, bool *ret) {
        CaValue v = eval_text(text, CA_MODE_OLD);
        bool ok = v.type == CA_BOOL;
        if (ok)
                *ret = v.u.b;
        ca_value_clear(&v);
        return ok;
}

/* An ad of 20 catastrophic calls, as a hostile Hello would carry them:
 * parsing keeps every one a call (nothing evaluated), the text comes back
 * as it was written, and each evaluates to ERROR. */
static void test_parse_runs_no_function(void) {
        char text[4096];
        size_t len = (size_t) snprintf(text, sizeof(text), "[ MyType = \"Machine\"");
        for (int i = 0; i < 20; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "; R%d = %s", i, CATASTROPHIC);
        snprintf(text + len, sizeof(text) - len, " ]");

        ClassAd *ad = NULL;
        CaError err = { 0 };
        CU_ASSERT_EQUAL_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err), 0);
        for (int i = 0; i < 20; i++) {
                char name[16];
                snprintf(name, sizeof(name), "R%d", i);
                const CaAtom *atom = ca_atom(name, strlen(name));
                const CaAttr *a = ca_ad_lookup(ad, atom);
                CU_ASSERT_PTR_NOT_NULL_FATAL(a);
                CU_ASSERT_EQUAL(a->expr->kind, CA_N_CALL); /* not CA_N_FOLDED: not run */
                CU_ASSERT_FALSE(a->is_const);
                char *t = classad_unparse_attr(ad, name);
                CU_ASSERT_STRING_EQUAL(t, CATASTROPHIC);
                free(t);
        }
        CaValue v;
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "R7", CA_MODE_OLD, &v), 0);
        CU_ASSERT_EQUAL(v.type, CA_ERROR);
        ca_value_clear(&v);
        classad_free(ad);

        /* a stand-alone expression the same; operators of constants and
         * time literals are still folded (bounded work) */
        ClassAdExpr *e = NULL;
        CU_ASSERT_EQUAL_FATAL(classad_expr_parse(CATASTROPHIC, strlen(CATASTROPHIC), CA_MODE_OLD, &e, &err), 0);
        CU_ASSERT_EQUAL(ca_expr_root(e)->kind, CA_N_CALL);
        classad_expr_free(e);
        const char *folded[] = { "1 + 2 * 3", "absTime(\"2020-01-01T00:00:00Z\")", "relTime(\"1:00\")" };
        for (size_t i = 0; i < ELEMENTSOF(folded); i++) {
                CU_ASSERT_EQUAL_FATAL(classad_expr_parse(folded[i], strlen(folded[i]), CA_MODE_OLD, &e, &err), 0);
                CU_ASSERT_EQUAL(ca_expr_root(e)->kind, CA_N_FOLDED);
                char *t = classad_expr_unparse(e);
                CU_ASSERT_STRING_EQUAL(t, folded[i]);
                free(t);
                classad_expr_free(e);
        }
}

/* A match past the limit is ERROR, whether or not PCRE2's own default
 * would have given up; ordinary patterns, backtracking a little (past the
 * short first try), match as before. The other regular expression
 * functions are bounded alike. */
static void test_regexp_limits(void) {
        bool b = true;

        CU_ASSERT_EQUAL(type_of(CATASTROPHIC), CA_ERROR);
        CU_ASSERT_EQUAL(type_of(LONG_BACKTRACK), CA_ERROR);
        CU_ASSERT_TRUE(bool_of("regexp(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaa!\")", &b)); /* 2,560 steps */
        CU_ASSERT_FALSE(b);
        CU_ASSERT_TRUE(bool_of("regexp(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaa aaa\")", &b));
        CU_ASSERT_TRUE(b);
        CU_ASSERT_EQUAL(type_of("replaceAll(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaa!\", \"x\")"), CA_ERROR);
        CU_ASSERT_EQUAL(type_of("regexps(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaa!\", \"x\")"), CA_ERROR);
        CU_ASSERT_EQUAL(type_of("stringList_regexpMember(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaa!\")"), CA_ERROR);
        CU_ASSERT_EQUAL(type_of("regexpMember(\"(\\\\w+\\\\s?)+$\", { \"aaaaaaaaaaaaaaaaaa!\" })"), CA_ERROR);
        CU_ASSERT_TRUE(bool_of("regexpMember(\"^b\", { \"a\", \"b\" })", &b));
        CU_ASSERT_TRUE(b);
        CU_ASSERT_TRUE(bool_of("stringList_regexpMember(\"^b\", \"a, b\")", &b));
        CU_ASSERT_TRUE(b);
}

/* The cache is keyed on the pattern and the options: the same pattern
 * compiled caseless and not gives each its own answer, in any order, and
 * more patterns than the cache holds still all match right. */
static void test_regexp_cache(void) {
        bool b;

        for (int round = 0; round < 3; round++) {
                CU_ASSERT_TRUE(bool_of("regexp(\"abc\", \"ABC\")", &b));
                CU_ASSERT_FALSE(b);
                CU_ASSERT_TRUE(bool_of("regexp(\"abc\", \"ABC\", \"i\")", &b));
                CU_ASSERT_TRUE(b);
                CU_ASSERT_TRUE(bool_of("regexp(\"^b\", \"a\\nb\", \"m\")", &b));
                CU_ASSERT_TRUE(b);
                CU_ASSERT_TRUE(bool_of("regexp(\"^b\", \"a\\nb\")", &b));
                CU_ASSERT_FALSE(b);
        }
        for (int i = 0; i < 100; i++) {
                char text[128];
                snprintf(text, sizeof(text), "regexp(\"^p%d$\", \"p%d\") && !regexp(\"^p%d$\", \"p%d\")", i, i, i, i + 1);
                CU_ASSERT_TRUE(bool_of(text, &b));
                CU_ASSERT_TRUE(b);
        }
}

/* The issue's Requirements: 20 eval(unparse(Requirements)) a level. The
 * evaluation ends in ERROR and is counted as out of its budget; so does
 * one that would hide the ERROR (isError), which without the budget on
 * the nested work is true. */
static void test_nested_eval_budget(void) {
        char text[2048];
        size_t len = (size_t) snprintf(text, sizeof(text), "[ requirements = (");
        for (int i = 0; i < 20; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "%seval(unparse(Requirements))", i ? " + " : "");
        len += (size_t) snprintf(text + len, sizeof(text) - len,
                                 ") >= 0 || true; Hidden = ifThenElse(isError(Requirements), true, true) ]");
        ClassAd *ad = NULL;
        CaError err = { 0 };
        CU_ASSERT_EQUAL_FATAL(classad_parse(text, len, CA_MODE_OLD, &ad, &err), 0);

        CaValue v;
        uint64_t hits = classad_budget_hits();
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "requirements", CA_MODE_OLD, &v), 0);
        CU_ASSERT_EQUAL(v.type, CA_ERROR);
        ca_value_clear(&v);
        CU_ASSERT_EQUAL(classad_budget_hits(), hits + 1);

        CU_ASSERT_EQUAL(classad_eval_attr(ad, "Hidden", CA_MODE_OLD, &v), 0);
        CU_ASSERT_EQUAL(v.type, CA_ERROR);
        ca_value_clear(&v);
        CU_ASSERT_EQUAL(classad_budget_hits(), hits + 2);

        /* through the matchmaking calls too: no match, and counted */
        CU_ASSERT_FALSE(classad_requirements_met(ad, ad, CA_MODE_OLD));
        CU_ASSERT_EQUAL(classad_budget_hits(), hits + 3);
        classad_free(ad);

        /* an ordinary evaluation spends nothing of the count */
        hits = classad_budget_hits();
        CU_ASSERT_EQUAL(type_of("eval(\"1 + 2\") == 3 && size(split(\"a b c\")) == 3"), CA_BOOL);
        CU_ASSERT_EQUAL(classad_budget_hits(), hits);
}

/* The text eval() parses counts a step a byte: a string longer than the
 * budget is ERROR without being parsed; one well within it is fine. */
static void test_eval_parse_counts(void) {
        size_t n = CLASSAD_EVAL_BUDGET + 1000;
        char *s = malloc(n + 64);
        CU_ASSERT_PTR_NOT_NULL_FATAL(s);
        ClassAd *ad = NULL;
        CU_ASSERT_EQUAL_FATAL(classad_new(&ad), 0);
        memset(s, ' ', n);
        memcpy(s + n - 1, "7", 2);
        CU_ASSERT_EQUAL(classad_set_string(ad, "S", s), 0);
        memcpy(s + 1000 - 1, "7", 2);
        CU_ASSERT_EQUAL(classad_set_string(ad, "Small", s), 0);
        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "R", "eval(S)", CA_MODE_OLD, NULL), 0);
        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "RSmall", "eval(Small)", CA_MODE_OLD, NULL), 0);

        CaValue v;
        uint64_t hits = classad_budget_hits();
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "R", CA_MODE_OLD, &v), 0);
        CU_ASSERT_EQUAL(v.type, CA_ERROR);
        ca_value_clear(&v);
        CU_ASSERT_EQUAL(classad_budget_hits(), hits + 1);
        int64_t i = 0;
        CU_ASSERT_EQUAL(classad_eval_int(ad, "RSmall", CA_MODE_OLD, &i), 0);
        CU_ASSERT_EQUAL(i, 7);
        classad_free(ad);
        free(s);
}

static CU_TestInfo budget_tests[] = {
        { "parse_runs_no_function", test_parse_runs_no_function },
        { "regexp_limits", test_regexp_limits },
        { "regexp_cache", test_regexp_cache },
        { "nested_eval_budget", test_nested_eval_budget },
        { "eval_parse_counts", test_eval_parse_counts },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "budget", NULL, NULL, NULL, NULL, budget_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

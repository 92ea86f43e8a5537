/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-api.c — the C API of the ClassAd library (classad/classad.h): values
 * and their reference counts, ads (set, evaluate, delete, copy, update,
 * iterate), parsing in both syntaxes with located errors, unparsing,
 * matchmaking, and the limits that protect against hostile input.
 *
 * Tests that could crash or run away on a broken library (deep nesting,
 * huge input, long chains) run in a child process, so that a crash is
 * reported as a failure of that test instead of ending the suite.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "classad.h"
#include "test-util.h"

#if defined(__SANITIZE_ADDRESS__)
#define UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define UNDER_ASAN 1
#endif
#endif
#ifndef UNDER_ASAN
#define UNDER_ASAN 0
#endif

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* ---- helpers ---- */

static ClassAd *parse_ad(const char *text, CaMode mode) {
        ClassAd *ad = NULL;
        CaError err = {};
        int r = classad_parse(text, strlen(text), mode, &ad, &err);

        GLEAN_TEST_CHECK(r >= 0 && ad, "classad_parse(%s) = %d (line %d, column %d: %s)", text, r,
                         err.line, err.column, err.msg);
        return r >= 0 ? ad : NULL;
}

/* Printed value of attribute name of ad ("<eval failed>" on an API error). */
static char *attr_value_text(const ClassAd *ad, const char *name, CaMode mode) {
        CaValue v = ca_undefined();
        char *s;

        if (classad_eval_attr(ad, name, mode, &v) < 0)
                return strdup("<eval failed>");
        s = ca_value_unparse(&v);
        ca_value_clear(&v);
        return s ? s : strdup("<unparse failed>");
}

static void check_attr_text(const ClassAd *ad, const char *name, CaMode mode, const char *want) {
        char *got = attr_value_text(ad, name, mode);

        GLEAN_TEST_CHECK(got && strcmp(got, want) == 0, "attribute %s: got %s, want %s", name,
                         got ? got : "(null)", want);
        free(got);
}

static void check_unparse(const ClassAd *ad, const char *want) {
        char *got = classad_unparse(ad);

        GLEAN_TEST_CHECK(got && strcmp(got, want) == 0, "classad_unparse: got %s, want %s",
                         got ? got : "(null)", want);
        free(got);
}

static char *value_text_of(const CaValue *v) {
        char *s = ca_value_unparse(v);

        return s ? s : strdup("<unparse failed>");
}

/* Runs fn in a child process, with a time limit; a crash, a timeout or a
 * false return is a failure. fn writes why it failed into why. */
typedef bool (*ChildFn)(char *why, size_t n);

static void run_isolated(const char *name, ChildFn fn, unsigned timeout) {
        int status = 0;
        pid_t pid;

        fflush(NULL);
        pid = fork();
        GLEAN_TEST_CHECK_FATAL(pid >= 0, "%s: fork: %s", name, strerror(errno));
        if (pid == 0) {
                char why[1024] = "";
                bool ok;

                alarm(timeout);
                ok = fn(why, sizeof(why));
                if (!ok)
                        fprintf(stderr, "  %s: %s\n", name, why);
                fflush(NULL);
                exit(ok ? 0 : 1);
        }
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        break;

        if (WIFSIGNALED(status))
                GLEAN_TEST_CHECK(false, "%s: the child was killed by signal %d (%s)%s", name,
                                 WTERMSIG(status), strsignal(WTERMSIG(status)),
                                 WTERMSIG(status) == SIGALRM ? ": it ran too long" : "");
        else
                GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                                 "%s: failed (exit %d, see stderr)", name, WEXITSTATUS(status));
}

/* ---- values ---- */

static void test_value_printing(void) {
        static const struct {
                CaValue v;
                const char *want;
        } rows[] = {
                { { .type = CA_UNDEFINED }, "undefined" },
                { { .type = CA_ERROR }, "error" },
                { { .type = CA_BOOL, .u.b = true }, "true" },
                { { .type = CA_BOOL, .u.b = false }, "false" },
                { { .type = CA_INT, .u.i = 0 }, "0" },
                { { .type = CA_INT, .u.i = -42 }, "-42" },
                { { .type = CA_INT, .u.i = INT64_MAX }, "9223372036854775807" },
                { { .type = CA_INT, .u.i = INT64_MIN }, "-9223372036854775808" },
                { { .type = CA_REAL, .u.r = 2.5 }, "2.500000000000000E+00" },
                { { .type = CA_REAL, .u.r = -0.001 }, "-1.000000000000000E-03" },
                { { .type = CA_REAL, .u.r = 0.0 }, "0.0" },
                { { .type = CA_REAL, .u.r = -0.0 }, "-0.0" },
                { { .type = CA_REAL, .u.r = INFINITY }, "real(\"INF\")" },
                { { .type = CA_REAL, .u.r = -INFINITY }, "real(\"-INF\")" },
                { { .type = CA_REAL, .u.r = NAN }, "real(\"NaN\")" },
                { { .type = CA_RELTIME, .u.rt = 65 }, "relTime(\"01:05\")" },
                { { .type = CA_RELTIME, .u.rt = 90061 }, "relTime(\"1+01:01:01\")" },
                { { .type = CA_ABSTIME, .u.at = { 0, 3600 } }, "absTime(\"1970-01-01T01:00:00+01:00\")" },
                { { .type = CA_ABSTIME, .u.at = { 1700000000, -21600 } },
                  "absTime(\"2023-11-14T16:13:20-06:00\")" },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                char *got = ca_value_unparse(&rows[i].v);

                GLEAN_TEST_CHECK(got && strcmp(got, rows[i].want) == 0, "row %zu: got %s, want %s",
                                 i, got ? got : "(null)", rows[i].want);
                free(got);
        }
}

static void test_value_constructors(void) {
        static const struct {
                const char *s;
                const char *want;
        } rows[] = {
                { "", "\"\"" },
                { "hello", "\"hello\"" },
                { "say \"hi\"", "\"say \\\"hi\\\"\"" },
                { "back\\slash", "\"back\\\\slash\"" },
                { "tab\there", "\"tab\\there\"" },
                { "it's", "\"it's\"" },
                { "\x01", "\"\\001\"" },
        };
        CaValue v;
        char *s;

        for (size_t i = 0; i < ELEMS(rows); i++) {
                v = ca_string(rows[i].s);
                GLEAN_TEST_CHECK(v.type == CA_STRING, "row %zu: ca_string gave type %d", i, v.type);
                s = value_text_of(&v);
                GLEAN_TEST_CHECK(strcmp(s, rows[i].want) == 0, "row %zu: got %s, want %s", i, s,
                                 rows[i].want);
                free(s);
                ca_value_clear(&v);
                CU_ASSERT_EQUAL(v.type, CA_UNDEFINED);
        }

        v = ca_string_n("abcdef", 3);
        CU_ASSERT_EQUAL_FATAL(v.type, CA_STRING);
        CU_ASSERT_EQUAL(v.u.s->len, 3);
        CU_ASSERT_STRING_EQUAL(v.u.s->s, "abc");
        ca_value_clear(&v);

        v = ca_string_take(ca_str_new("xyz", 3));
        CU_ASSERT_EQUAL_FATAL(v.type, CA_STRING);
        CU_ASSERT_STRING_EQUAL(v.u.s->s, "xyz");
        CU_ASSERT_EQUAL(v.u.s->refs, 1);
        ca_value_clear(&v);

        /* every type has a distinct name */
        for (int a = CA_UNDEFINED; a <= CA_RELTIME; a++) {
                const char *na = ca_type_name((CaType) a);

                GLEAN_TEST_CHECK(na && *na, "ca_type_name(%d) is empty", a);
                for (int b = CA_UNDEFINED; b < a; b++)
                        GLEAN_TEST_CHECK(na && ca_type_name((CaType) b) &&
                                                 strcmp(na, ca_type_name((CaType) b)) != 0,
                                         "types %d and %d share the name %s", a, b, na ? na : "");
        }

        /* ca_list_size is -1 for what is not a list */
        v = ca_int(3);
        CU_ASSERT_EQUAL(ca_list_size(&v), -1);
        v = ca_undefined();
        CU_ASSERT_EQUAL(ca_list_size(&v), -1);
}

static void test_value_refcount(void) {
        CaValue a = ca_string("shared"), b, c;
        CaStr *str;
        char *s;

        CU_ASSERT_EQUAL_FATAL(a.type, CA_STRING);
        str = a.u.s;
        CU_ASSERT_EQUAL(str->refs, 1);

        b = ca_value_copy(&a);
        CU_ASSERT_EQUAL(b.type, CA_STRING);
        CU_ASSERT_PTR_EQUAL(b.u.s, str);
        CU_ASSERT_EQUAL(str->refs, 2);
        c = ca_value_copy(&b);
        CU_ASSERT_EQUAL(str->refs, 3);

        ca_value_clear(&a);
        CU_ASSERT_EQUAL(a.type, CA_UNDEFINED);
        CU_ASSERT_EQUAL(str->refs, 2);
        ca_value_clear(&a);     /* clearing twice is harmless */
        CU_ASSERT_EQUAL(str->refs, 2);

        ca_value_clear(&b);
        CU_ASSERT_EQUAL(str->refs, 1);
        s = value_text_of(&c);
        CU_ASSERT_STRING_EQUAL(s, "\"shared\"");
        free(s);
        ca_value_clear(&c);

        /* ca_str_ref / ca_str_unref */
        str = ca_str_new("abc", 3);
        CU_ASSERT_PTR_NOT_NULL_FATAL(str);
        CU_ASSERT_EQUAL(str->refs, 1);
        CU_ASSERT_PTR_EQUAL(ca_str_ref(str), str);
        CU_ASSERT_EQUAL(str->refs, 2);
        ca_str_unref(str);
        CU_ASSERT_EQUAL(str->refs, 1);
        CU_ASSERT_STRING_EQUAL(str->s, "abc");
        ca_str_unref(str);

        /* copying a scalar is a plain copy */
        a = ca_real(1.5);
        b = ca_value_copy(&a);
        CU_ASSERT_EQUAL(b.type, CA_REAL);
        CU_ASSERT_DOUBLE_EQUAL(b.u.r, 1.5, 0.0);
        ca_value_clear(&b);
        ca_value_clear(&a);

        /* list values obtained from an ad survive copies and clears */
        {
                ClassAd *ad = parse_ad("[ l = { 1, \"two\", 3.0 } ]", CA_MODE_OLD);
                CaValue l = ca_undefined(), l2;

                CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
                CU_ASSERT_EQUAL_FATAL(classad_eval_attr(ad, "l", CA_MODE_OLD, &l), 0);
                CU_ASSERT_EQUAL_FATAL(l.type, CA_LIST);
                l2 = ca_value_copy(&l);
                ca_value_clear(&l);
                classad_free(ad);
                CU_ASSERT_EQUAL(ca_list_size(&l2), 3);
                s = value_text_of(&l2);
                CU_ASSERT_STRING_EQUAL(s, "{ 1,\"two\",3.000000000000000E+00 }");
                free(s);
                ca_value_clear(&l2);
        }
}

/* Values returned by the public evaluation functions outlive their ad. */
static void test_value_detach(void) {
        ClassAd *ad = parse_ad("[ s = \"text\"; l = { 10, 20, { 30 } }; n = [ x = 1; y = \"why\" ]; "
                               "r = 2.5; sl = { \"a\", \"b\" }[1] ]",
                               CA_MODE_OLD);
        CaValue s = ca_undefined(), l = ca_undefined(), n = ca_undefined(), sl = ca_undefined();
        CaValue elem = ca_undefined();
        char *t;

        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "s", CA_MODE_OLD, &s), 0);
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "l", CA_MODE_OLD, &l), 0);
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "n", CA_MODE_OLD, &n), 0);
        CU_ASSERT_EQUAL(classad_eval_attr(ad, "sl", CA_MODE_OLD, &sl), 0);

        /* detaching an already detached value is harmless */
        CU_ASSERT(ca_value_detach(&s) >= 0);
        CU_ASSERT(ca_value_detach(&l) >= 0);
        CU_ASSERT(ca_value_detach(&n) >= 0);
        CU_ASSERT(ca_value_detach(&sl) >= 0);

        /* scribble over the ad, then free it */
        CU_ASSERT_EQUAL(classad_set_string(ad, "s", "other"), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "l", 0), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "n", 0), 0);
        classad_free(ad);

        CU_ASSERT_EQUAL(s.type, CA_STRING);
        t = value_text_of(&s);
        CU_ASSERT_STRING_EQUAL(t, "\"text\"");
        free(t);

        CU_ASSERT_EQUAL(sl.type, CA_STRING);
        t = value_text_of(&sl);
        CU_ASSERT_STRING_EQUAL(t, "\"b\"");
        free(t);

        CU_ASSERT_EQUAL_FATAL(l.type, CA_LIST);
        CU_ASSERT_EQUAL(ca_list_size(&l), 3);
        CU_ASSERT_EQUAL(ca_list_get(&l, 1, CA_MODE_OLD, &elem), 0);
        CU_ASSERT(elem.type == CA_INT && elem.u.i == 20);
        ca_value_clear(&elem);
        CU_ASSERT_EQUAL(ca_list_get(&l, 2, CA_MODE_OLD, &elem), 0);
        CU_ASSERT_EQUAL(elem.type, CA_LIST);
        CU_ASSERT_EQUAL(ca_list_size(&elem), 1);
        ca_value_clear(&elem);
        t = value_text_of(&l);
        CU_ASSERT_STRING_EQUAL(t, "{ 10,20,{ 30 } }");
        free(t);

        CU_ASSERT_EQUAL(n.type, CA_AD);
        t = value_text_of(&n);
        CU_ASSERT_STRING_EQUAL(t, "[ x = 1; y = \"why\" ]");
        free(t);

        ca_value_clear(&s);
        ca_value_clear(&l);
        ca_value_clear(&n);
        ca_value_clear(&sl);

        /* the same through a stand-alone expression */
        {
                ClassAdExpr *e = NULL;
                CaError err = {};
                CaValue v = ca_undefined();
                const char *text = "{ \"x\", 1 + 1, [ a = 1 ] }";

                CU_ASSERT_EQUAL_FATAL(classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &err), 0);
                CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v), 0);
                classad_expr_free(e);
                CU_ASSERT(ca_value_detach(&v) >= 0);
                CU_ASSERT_EQUAL_FATAL(v.type, CA_LIST);
                CU_ASSERT_EQUAL(ca_list_size(&v), 3);
                CU_ASSERT_EQUAL(ca_list_get(&v, 1, CA_MODE_OLD, &elem), 0);
                CU_ASSERT(elem.type == CA_INT && elem.u.i == 2);
                ca_value_clear(&elem);
                CU_ASSERT_EQUAL(ca_list_get(&v, 0, CA_MODE_OLD, &elem), 0);
                CU_ASSERT(elem.type == CA_STRING && strcmp(elem.u.s->s, "x") == 0);
                ca_value_clear(&elem);
                ca_value_clear(&v);
        }
}

/* ---- ads ---- */

static void test_ad_set_eval(void) {
        ClassAd *ad = NULL;
        int64_t i = 0;
        double r = 0;
        bool b = false;
        char *s = NULL;
        CaValue v = ca_int(5);

        CU_ASSERT_EQUAL_FATAL(classad_new(&ad), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        CU_ASSERT_EQUAL(classad_size(ad), 0);
        check_unparse(ad, "[  ]");

        CU_ASSERT_EQUAL(classad_set_int(ad, "A", 1), 0);
        CU_ASSERT_EQUAL(classad_set_real(ad, "B", 2.5), 0);
        CU_ASSERT_EQUAL(classad_set_bool(ad, "C", true), 0);
        CU_ASSERT_EQUAL(classad_set_string(ad, "D", "x\"y"), 0);
        CU_ASSERT_EQUAL(classad_set_value(ad, "E", &v), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "Neg", -7), 0);
        CU_ASSERT_EQUAL(classad_size(ad), 6);
        check_unparse(ad, "[ A = 1; B = 2.500000000000000E+00; C = true; D = \"x\\\"y\"; E = 5; Neg = -7 ]");

        CU_ASSERT(classad_has(ad, "A"));
        CU_ASSERT(classad_has(ad, "a"));
        CU_ASSERT(classad_has(ad, "neg"));
        CU_ASSERT(!classad_has(ad, "F"));

        CU_ASSERT_EQUAL(classad_eval_int(ad, "a", CA_MODE_OLD, &i), 0);
        CU_ASSERT_EQUAL(i, 1);
        CU_ASSERT_EQUAL(classad_eval_int(ad, "NEG", CA_MODE_STRICT, &i), 0);
        CU_ASSERT_EQUAL(i, -7);
        CU_ASSERT_EQUAL(classad_eval_real(ad, "b", CA_MODE_OLD, &r), 0);
        CU_ASSERT_DOUBLE_EQUAL(r, 2.5, 0.0);
        CU_ASSERT_EQUAL(classad_eval_real(ad, "a", CA_MODE_OLD, &r), 0);   /* int promotes */
        CU_ASSERT_DOUBLE_EQUAL(r, 1.0, 0.0);
        CU_ASSERT_EQUAL(classad_eval_bool(ad, "c", CA_MODE_OLD, &b), 0);
        CU_ASSERT(b);
        b = false;
        CU_ASSERT_EQUAL(classad_eval_bool(ad, "a", CA_MODE_OLD, &b), 0);   /* numbers: != 0 */
        CU_ASSERT(b);
        CU_ASSERT_EQUAL(classad_eval_string(ad, "d", CA_MODE_OLD, &s), 0);
        CU_ASSERT_PTR_NOT_NULL(s);
        if (s)
                CU_ASSERT_STRING_EQUAL(s, "x\"y");
        free(s);
        s = NULL;

        /* reals truncate and booleans are 0/1, as HTCondor's EvalInteger()
         * (condor_utils/compat_classad.cpp) does */
        CU_ASSERT_EQUAL(classad_eval_int(ad, "b", CA_MODE_OLD, &i), 0);
        CU_ASSERT_EQUAL(i, 2);
        CU_ASSERT_EQUAL(classad_eval_int(ad, "c", CA_MODE_OLD, &i), 0);
        CU_ASSERT_EQUAL(i, 1);
        CU_ASSERT_EQUAL(classad_eval_real(ad, "c", CA_MODE_OLD, &r), 0);
        CU_ASSERT_DOUBLE_EQUAL(r, 1.0, 0.0);

        /* wrong type and absent; outputs untouched on failure */
        i = 99;
        CU_ASSERT_EQUAL(classad_eval_int(ad, "d", CA_MODE_OLD, &i), -EINVAL);
        CU_ASSERT_EQUAL(classad_eval_int(ad, "missing", CA_MODE_OLD, &i), -ENOENT);
        CU_ASSERT_EQUAL(i, 99);
        CU_ASSERT_EQUAL(classad_eval_real(ad, "d", CA_MODE_OLD, &r), -EINVAL);
        CU_ASSERT_EQUAL(classad_eval_bool(ad, "d", CA_MODE_OLD, &b), -EINVAL);
        CU_ASSERT_EQUAL(classad_eval_string(ad, "a", CA_MODE_OLD, &s), -EINVAL);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_EQUAL(classad_eval_string(ad, "missing", CA_MODE_OLD, &s), -ENOENT);

        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "U", "undefined", CA_MODE_OLD, NULL), 0);
        CU_ASSERT_EQUAL(classad_eval_int(ad, "u", CA_MODE_OLD, &i), -ENOENT);
        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "Err", "1 / 0", CA_MODE_OLD, NULL), 0);
        CU_ASSERT_EQUAL(classad_eval_int(ad, "err", CA_MODE_OLD, &i), -EINVAL);

        check_attr_text(ad, "missing", CA_MODE_OLD, "undefined");
        check_attr_text(ad, "err", CA_MODE_OLD, "error");

        /* delete */
        CU_ASSERT_EQUAL(classad_delete(ad, "a"), 0);
        CU_ASSERT_EQUAL(classad_delete(ad, "A"), -ENOENT);
        CU_ASSERT_EQUAL(classad_delete(ad, "never"), -ENOENT);
        CU_ASSERT(!classad_has(ad, "A"));
        CU_ASSERT_EQUAL(classad_size(ad), 7);
        check_attr_text(ad, "a", CA_MODE_OLD, "undefined");
        CU_ASSERT_EQUAL(classad_set_int(ad, "a", 3), 0);
        CU_ASSERT_EQUAL(classad_size(ad), 8);
        check_attr_text(ad, "A", CA_MODE_OLD, "3");

        /* unparse_attr */
        s = classad_unparse_attr(ad, "b");
        CU_ASSERT_PTR_NOT_NULL(s);
        if (s)
                CU_ASSERT_STRING_EQUAL(s, "2.500000000000000E+00");
        free(s);
        s = classad_unparse_attr(ad, "ERR");
        CU_ASSERT_PTR_NOT_NULL(s);
        if (s)
                CU_ASSERT_STRING_EQUAL(s, "1 / 0");
        free(s);
        CU_ASSERT_PTR_NULL(classad_unparse_attr(ad, "nothing"));

        classad_free(ad);
        classad_free(NULL);
}

static void test_ad_names_case_insensitive(void) {
        ClassAd *ad = NULL;
        const char *name = NULL;
        char *text = NULL;
        ClassAdIter it;

        CU_ASSERT_EQUAL_FATAL(classad_new(&ad), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "Memory", 1), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "MEMORY", 2), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "memory", 3), 0);
        CU_ASSERT_EQUAL(classad_size(ad), 1);
        check_attr_text(ad, "mEmOrY", CA_MODE_OLD, "3");
        check_attr_text(ad, "MEMORY", CA_MODE_STRICT, "3");
        /* the spelling of the latest insert is kept (classad.h) */
        check_unparse(ad, "[ memory = 3 ]");
        it = classad_iter(ad);
        CU_ASSERT(classad_iter_next(&it, &name, &text));
        CU_ASSERT(name && strcmp(name, "memory") == 0);
        free(text);
        CU_ASSERT(!classad_iter_next(&it, &name, &text));

        /* references are case-insensitive too */
        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "Twice", "MEMORY * 2 + MY.Memory", CA_MODE_OLD, NULL), 0);
        check_attr_text(ad, "twice", CA_MODE_OLD, "9");
        CU_ASSERT_EQUAL(classad_delete(ad, "MeMoRy"), 0);
        CU_ASSERT_EQUAL(classad_size(ad), 1);
        check_attr_text(ad, "twice", CA_MODE_OLD, "undefined");
        classad_free(ad);
}

static void test_ad_set_expr(void) {
        ClassAd *ad = NULL;
        ClassAdExpr *e = NULL;
        CaError err = {};
        CaValue v = ca_undefined();
        char *s;
        const char *text;

        CU_ASSERT_EQUAL_FATAL(classad_new(&ad), 0);
        CU_ASSERT_EQUAL(classad_set_int(ad, "a", 1), 0);

        /* text */
        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "x", "a + 1", CA_MODE_OLD, &err), 0);
        check_attr_text(ad, "x", CA_MODE_OLD, "2");
        s = classad_unparse_attr(ad, "x");
        CU_ASSERT(s && strcmp(s, "a + 1") == 0);
        free(s);

        /* bad text: an error, located, and the ad unchanged */
        memset(&err, 0, sizeof(err));
        CU_ASSERT(classad_set_expr_text(ad, "y", "a +", CA_MODE_OLD, &err) < 0);
        CU_ASSERT(err.msg[0] != '\0');
        CU_ASSERT(err.line >= 1);
        CU_ASSERT(!classad_has(ad, "y"));
        memset(&err, 0, sizeof(err));
        CU_ASSERT(classad_set_expr_text(ad, "x", "(((", CA_MODE_OLD, &err) < 0);
        check_attr_text(ad, "x", CA_MODE_OLD, "2");
        CU_ASSERT(classad_set_expr_text(ad, "z", "", CA_MODE_OLD, NULL) < 0);
        CU_ASSERT(!classad_has(ad, "z"));
        /* the mode decides about leading zeros */
        CU_ASSERT(classad_set_expr_text(ad, "o", "017", CA_MODE_OLD, NULL) < 0);
        CU_ASSERT_EQUAL(classad_set_expr_text(ad, "o", "017", CA_MODE_STRICT, NULL), 0);
        check_attr_text(ad, "o", CA_MODE_STRICT, "15");

        /* a parsed expression is copied in: the original may go */
        text = "a * 10 + { 1, 2 }[1]";
        CU_ASSERT_EQUAL_FATAL(classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &err), 0);
        CU_ASSERT_EQUAL(classad_set_expr(ad, "e", e), 0);
        CU_ASSERT_EQUAL(classad_set_expr(ad, "e2", e), 0);
        classad_expr_free(e);
        check_attr_text(ad, "e", CA_MODE_OLD, "12");
        check_attr_text(ad, "e2", CA_MODE_OLD, "12");
        CU_ASSERT_EQUAL(classad_set_int(ad, "a", 2), 0);
        check_attr_text(ad, "e", CA_MODE_OLD, "22");

        /* a value: list, string, nested ad */
        text = "{ 1, \"q\\\"\" }";
        CU_ASSERT_EQUAL_FATAL(classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &err), 0);
        CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v), 0);
        classad_expr_free(e);
        CU_ASSERT_EQUAL(classad_set_value(ad, "l", &v), 0);
        ca_value_clear(&v);
        check_attr_text(ad, "l", CA_MODE_OLD, "{ 1,\"q\\\"\" }");
        v = ca_string("a\nb");
        CU_ASSERT_EQUAL(classad_set_value(ad, "s", &v), 0);
        ca_value_clear(&v);
        s = classad_unparse_attr(ad, "s");
        CU_ASSERT(s && strcmp(s, "\"a\\nb\"") == 0);
        free(s);
        v = ca_undefined();
        CU_ASSERT_EQUAL(classad_set_value(ad, "u", &v), 0);
        check_attr_text(ad, "u", CA_MODE_OLD, "undefined");
        v = ca_error();
        CU_ASSERT_EQUAL(classad_set_value(ad, "er", &v), 0);
        check_attr_text(ad, "er", CA_MODE_OLD, "error");

        classad_free(ad);
}

static void test_ad_iter(void) {
        static const struct {
                const char *name, *text;
        } want[] = {
                { "b", "1" },
                { "A", "2" },
                { "c", "A + b" },
                { "Str", "\"x y\"" },
                { "l", "{ 1,2 }" },
        };
        ClassAd *ad = parse_ad("[ b = 1; A = 2; c = A + b; Str = \"x y\"; l = {1, 2} ]", CA_MODE_OLD);
        ClassAdIter it;
        const char *name;
        char *text;
        size_t n = 0;

        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        it = classad_iter(ad);
        while (classad_iter_next(&it, &name, &text)) {
                if (n < ELEMS(want))
                        GLEAN_TEST_CHECK(name && text && strcmp(name, want[n].name) == 0 &&
                                                 strcmp(text, want[n].text) == 0,
                                         "attribute %zu: got %s = %s, want %s = %s", n,
                                         name ? name : "(null)", text ? text : "(null)",
                                         want[n].name, want[n].text);
                free(text);
                n++;
        }
        CU_ASSERT_EQUAL(n, ELEMS(want));
        CU_ASSERT(!classad_iter_next(&it, &name, &text));

        /* a replaced attribute keeps its place; a deleted one leaves */
        CU_ASSERT_EQUAL(classad_set_int(ad, "B", 10), 0);
        CU_ASSERT_EQUAL(classad_delete(ad, "c"), 0);
        check_unparse(ad, "[ B = 10; A = 2; Str = \"x y\"; l = { 1,2 } ]");
        classad_free(ad);
}

/* classad_eval_ad_list: a message's listing, each ad copied out standalone. */
static void test_ad_eval_ad_list(void) {
        ClassAd *msg = parse_ad("[ Outer = 7; Ads = { [ a = 1; b = a + 1 ], [ a = 2; c = Outer ] };"
                                " Empty = {}; Nums = { 1, 2 }; Mixed = { [ a = 1 ], 3 }; Str = \"x\" ]",
                                CA_MODE_OLD);
        ClassAd **ads = NULL;
        size_t n = 99;

        CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
        CU_ASSERT_EQUAL_FATAL(classad_eval_ad_list(msg, "ads", CA_MODE_OLD, &ads, &n), 0);
        CU_ASSERT_EQUAL_FATAL(n, 2);
        /* the message may go: the copies are the caller's */
        classad_free(msg);
        check_unparse(ads[0], "[ a = 1; b = a + 1 ]");
        check_attr_text(ads[0], "b", CA_MODE_OLD, "2");
        /* standalone: a name the element lacks is not looked up in the message */
        check_attr_text(ads[1], "c", CA_MODE_OLD, "undefined");
        CU_ASSERT_EQUAL(classad_set_int(ads[0], "a", 10), 0);
        check_attr_text(ads[0], "b", CA_MODE_OLD, "11");
        for (size_t i = 0; i < n; i++)
                classad_free(ads[i]);
        free(ads);

        msg = parse_ad("[ Empty = {}; Nums = { 1, 2 }; Mixed = { [ a = 1 ], 3 }; Str = \"x\" ]", CA_MODE_OLD);
        CU_ASSERT_PTR_NOT_NULL_FATAL(msg);
        ads = NULL;
        CU_ASSERT_EQUAL(classad_eval_ad_list(msg, "Empty", CA_MODE_OLD, &ads, &n), 0);
        CU_ASSERT_EQUAL(n, 0);
        free(ads);
        n = 99;
        CU_ASSERT_EQUAL(classad_eval_ad_list(msg, "Missing", CA_MODE_OLD, &ads, &n), -ENOENT);
        CU_ASSERT_EQUAL(classad_eval_ad_list(msg, "Str", CA_MODE_OLD, &ads, &n), -EINVAL);
        CU_ASSERT_EQUAL(classad_eval_ad_list(msg, "Nums", CA_MODE_OLD, &ads, &n), -EINVAL);
        CU_ASSERT_EQUAL(classad_eval_ad_list(msg, "Mixed", CA_MODE_OLD, &ads, &n), -EINVAL);
        CU_ASSERT_EQUAL(n, 99); /* untouched on failure */
        classad_free(msg);
}

static void test_ad_copy_update(void) {
        ClassAd *a = parse_ad("[ x = 1; y = x + 1; n = [ z = 3 ]; l = { x, 2 } ]", CA_MODE_OLD);
        ClassAd *b = NULL, *c = NULL, *src, *dst;

        CU_ASSERT_PTR_NOT_NULL_FATAL(a);
        CU_ASSERT_EQUAL_FATAL(classad_copy(a, &b), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(b);
        CU_ASSERT_PTR_NOT_EQUAL(a, b);
        check_unparse(b, "[ x = 1; y = x + 1; n = [ z = 3 ]; l = { x,2 } ]");

        /* independent both ways */
        CU_ASSERT_EQUAL(classad_set_int(b, "x", 10), 0);
        check_attr_text(a, "y", CA_MODE_OLD, "2");
        check_attr_text(b, "y", CA_MODE_OLD, "11");
        CU_ASSERT_EQUAL(classad_set_int(a, "w", 5), 0);
        CU_ASSERT(!classad_has(b, "w"));
        classad_free(a);
        check_attr_text(b, "n", CA_MODE_OLD, "[ z = 3 ]");
        check_attr_text(b, "l", CA_MODE_OLD, "{ x,2 }");

        /* references */
        c = classad_ref(b);
        CU_ASSERT_PTR_EQUAL(c, b);
        classad_free(b);
        check_attr_text(c, "x", CA_MODE_OLD, "10");
        classad_free(c);

        /* update: replaces same-named attributes, adds the others */
        dst = parse_ad("[ a = 1; b = 2; Keep = \"k\" ]", CA_MODE_OLD);
        src = parse_ad("[ B = 20; c = 30; d = a + c ]", CA_MODE_OLD);
        CU_ASSERT_PTR_NOT_NULL_FATAL(dst);
        CU_ASSERT_PTR_NOT_NULL_FATAL(src);
        CU_ASSERT_EQUAL(classad_update(dst, src), 0);
        CU_ASSERT_EQUAL(classad_size(dst), 5);
        CU_ASSERT_EQUAL(classad_size(src), 3);
        classad_free(src);
        check_attr_text(dst, "b", CA_MODE_OLD, "20");
        check_attr_text(dst, "c", CA_MODE_OLD, "30");
        check_attr_text(dst, "d", CA_MODE_OLD, "31");   /* evaluated in dst */
        check_attr_text(dst, "keep", CA_MODE_OLD, "\"k\"");
        /* updating with oneself changes nothing */
        CU_ASSERT_EQUAL(classad_update(dst, dst), 0);
        CU_ASSERT_EQUAL(classad_size(dst), 5);
        check_attr_text(dst, "d", CA_MODE_OLD, "31");
        classad_free(dst);
}

/* ---- parsing ---- */

static void test_parse_good(void) {
        static const struct {
                const char *text, *want;
        } rows[] = {
                { "[ a = 1; b = \"x\" ]", "[ a = 1; b = \"x\" ]" },
                { "[a=1]", "[ a = 1 ]" },
                { "  \n\t[ a = 1 ]  \n", "[ a = 1 ]" },
                { "[]", "[  ]" },
                { "[ ]", "[  ]" },
                { "[;]", "[  ]" },
                { "[ ;; a = 3;; b = 4;; ]", "[ a = 3; b = 4 ]" },
                { "[ a = 1; ]", "[ a = 1 ]" },
                { "[ a = [ b = 1 ]; c = { 1, 2 } ]", "[ a = [ b = 1 ]; c = { 1,2 } ]" },
                { "[\n  a = 1;\n  // comment\n  b = 2 /* more */;\n]", "[ a = 1; b = 2 ]" },
                { "[ 'a b' = 1; 'true' = 2 ]", "[ 'a b' = 1; 'true' = 2 ]" },
                { "[ a = 1; A = 2 ]", "[ A = 2 ]" },
                { "[ r = -1.5e1; s = \"\\t\"; t = TARGET.x ]",
                  "[ r = -1.500000000000000E+01; s = \"\\t\"; t = TARGET.x ]" },
                { "[ x = a ? b : c; y = a ?: b ]", "[ x = a ? b : c; y = a ?: b ]" },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *ad = NULL;
                CaError err = {};
                char *got;
                int r = classad_parse(rows[i].text, strlen(rows[i].text), CA_MODE_OLD, &ad, &err);

                GLEAN_TEST_CHECK(r >= 0 && ad, "row %zu: classad_parse = %d (%d:%d %s)", i, r,
                                 err.line, err.column, err.msg);
                if (r < 0 || !ad)
                        continue;
                got = classad_unparse(ad);
                GLEAN_TEST_CHECK(got && strcmp(got, rows[i].want) == 0, "row %zu: got %s, want %s",
                                 i, got ? got : "(null)", rows[i].want);
                free(got);
                classad_free(ad);
        }

        /* a length that ends before the NUL */
        {
                const char *text = "[ a = 1 ]garbage";
                ClassAd *ad = NULL;

                CU_ASSERT_EQUAL(classad_parse(text, 9, CA_MODE_OLD, &ad, NULL), 0);
                if (ad)
                        check_unparse(ad, "[ a = 1 ]");
                classad_free(ad);
        }
}

static void test_parse_bad(void) {
        static const struct {
                const char *text;
                int line;               /* 0: any */
                int col_min, col_max;   /* 0: any */
        } rows[] = {
                { "", 0, 0, 0 },
                { "   ", 0, 0, 0 },
                { "a = 1", 1, 0, 0 },
                { "[ a = 1", 1, 0, 0 },
                { "[ a = 1; b = ]", 1, 0, 0 },
                { "[ a = 1 b = 2 ]", 1, 0, 0 },
                { "[ 1 = 2 ]", 1, 0, 0 },
                { "[ a ]", 1, 0, 0 },
                { "[ = 1 ]", 1, 0, 0 },
                { "[ a = 1 ] extra", 1, 0, 0 },
                { "[ a = 1 ] [ b = 2 ]", 1, 0, 0 },
                { "[ a = \"unterminated ]", 1, 0, 0 },
                { "{ 1, 2 }", 1, 0, 0 },
                { "[ a = 1;\n  b = 2;\n  c = @ ]", 3, 6, 8 },
                { "[ a = 1;\n\n\n b = (1 + ]", 4, 0, 0 },
                { "[\n a = 1;\n b = 2\n c = 3\n]", 4, 0, 0 },
                { "[ a = 017 ]", 1, 0, 0 },
                { "[ a = /* unterminated ]", 1, 0, 0 },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *ad = NULL;
                CaError err = {};
                int r = classad_parse(rows[i].text, strlen(rows[i].text), CA_MODE_OLD, &ad, &err);

                GLEAN_TEST_CHECK(r < 0, "row %zu: '%s' parsed", i, rows[i].text);
                GLEAN_TEST_CHECK(ad == NULL, "row %zu: the output was set on failure", i);
                if (r >= 0) {
                        classad_free(ad);
                        continue;
                }
                GLEAN_TEST_CHECK(err.msg[0] != '\0', "row %zu: no error message", i);
                GLEAN_TEST_CHECK(err.line >= 1 && err.column >= 1, "row %zu: error at %d:%d", i,
                                 err.line, err.column);
                if (rows[i].line)
                        GLEAN_TEST_CHECK(err.line == rows[i].line, "row %zu: error on line %d, want %d (%s)",
                                         i, err.line, rows[i].line, err.msg);
                if (rows[i].col_min)
                        GLEAN_TEST_CHECK(err.column >= rows[i].col_min && err.column <= rows[i].col_max,
                                         "row %zu: error in column %d, want %d..%d (%s)", i,
                                         err.column, rows[i].col_min, rows[i].col_max, err.msg);
        }

        /* strict mode accepts octal, so the same ad parses there */
        {
                ClassAd *ad = NULL;

                CU_ASSERT_EQUAL(classad_parse("[ a = 017 ]", 11, CA_MODE_STRICT, &ad, NULL), 0);
                if (ad)
                        check_attr_text(ad, "a", CA_MODE_STRICT, "15");
                classad_free(ad);
        }
        /* NULL for the error is allowed */
        {
                ClassAd *ad = NULL;

                CU_ASSERT(classad_parse("[", 1, CA_MODE_OLD, &ad, NULL) < 0);
                CU_ASSERT_PTR_NULL(ad);
        }
}

static void test_parse_old(void) {
        const char *text =
                "MyType = \"Job\"\n"
                "# a comment\n"
                "\n"
                "  Cmd = \"/bin/true\"\n"
                "ImageSize = 100\n"
                "   # indented comment\n"
                "Requirements = TARGET.Memory > ImageSize && Arch == \"X86_64\"\n"
                "Rate=2.5\n"
                "Args = \"a = b\"\n";
        ClassAd *ad = NULL;
        CaError err = {};
        int64_t i = 0;
        char *s = NULL;
        int r;

        r = classad_parse_old(text, strlen(text), CA_MODE_OLD, &ad, &err);
        GLEAN_TEST_CHECK_FATAL(r >= 0 && ad, "classad_parse_old = %d (%d:%d %s)", r, err.line,
                               err.column, err.msg);
        CU_ASSERT_EQUAL(classad_size(ad), 6);
        CU_ASSERT_EQUAL(classad_eval_int(ad, "imagesize", CA_MODE_OLD, &i), 0);
        CU_ASSERT_EQUAL(i, 100);
        CU_ASSERT_EQUAL(classad_eval_string(ad, "Cmd", CA_MODE_OLD, &s), 0);
        CU_ASSERT(s && strcmp(s, "/bin/true") == 0);
        free(s);
        s = NULL;
        CU_ASSERT_EQUAL(classad_eval_string(ad, "args", CA_MODE_OLD, &s), 0);
        CU_ASSERT(s && strcmp(s, "a = b") == 0);
        free(s);
        s = classad_unparse_attr(ad, "requirements");
        CU_ASSERT(s && strcmp(s, "TARGET.Memory > ImageSize && Arch == \"X86_64\"") == 0);
        free(s);
        check_attr_text(ad, "rate", CA_MODE_OLD, "2.500000000000000E+00");
        classad_free(ad);

        /* without a final newline; with CRLF-free single line */
        ad = NULL;
        CU_ASSERT_EQUAL(classad_parse_old("a = 1", 5, CA_MODE_OLD, &ad, NULL), 0);
        CU_ASSERT(ad && classad_size(ad) == 1);
        classad_free(ad);

        /* empty input: an empty ad */
        ad = NULL;
        CU_ASSERT_EQUAL(classad_parse_old("", 0, CA_MODE_OLD, &ad, NULL), 0);
        CU_ASSERT(ad && classad_size(ad) == 0);
        classad_free(ad);
}

static void test_parse_old_bad(void) {
        static const struct {
                const char *text;
                int line;
        } rows[] = {
                { "a = 1\nthis is not valid\nb = 2\n", 2 },
                { "a = 1\n= 2\n", 2 },
                { "a = (1 +\nb = 2\n", 1 },
                { "# c\n\n\na = 1\nb = \n", 5 },
                { "a = 1\nb = 2\nc = 3 4\n", 3 },
                { "a = 1\nb == 2\n", 2 },
                { "[ a = 1 ]\n", 1 },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *ad = NULL;
                CaError err = {};
                int r = classad_parse_old(rows[i].text, strlen(rows[i].text), CA_MODE_OLD, &ad, &err);

                GLEAN_TEST_CHECK(r < 0, "row %zu: parsed", i);
                GLEAN_TEST_CHECK(ad == NULL, "row %zu: the output was set on failure", i);
                if (r >= 0) {
                        classad_free(ad);
                        continue;
                }
                GLEAN_TEST_CHECK(err.msg[0] != '\0', "row %zu: no error message", i);
                GLEAN_TEST_CHECK(err.line == rows[i].line, "row %zu: error on line %d, want %d (%s)",
                                 i, err.line, rows[i].line, err.msg);
        }
}

/* Old-syntax strings: a backslash is literal unless it precedes a quote
 * (HTCondor lexer.cpp tokenizeStringOld()), as condor_q -l prints them. */
static void test_parse_old_backslash(void) {
        const char *text = "Cmd = \"C:\\temp\\new\"\nQ = \"say \\\"hi\\\" now\"\n";
        ClassAd *ad = NULL;
        CaError err = {};
        char *s = NULL;
        int r = classad_parse_old(text, strlen(text), CA_MODE_OLD, &ad, &err);

        GLEAN_TEST_CHECK_FATAL(r >= 0 && ad, "classad_parse_old = %d (%d:%d %s)", r, err.line,
                               err.column, err.msg);
        CU_ASSERT_EQUAL(classad_eval_string(ad, "cmd", CA_MODE_OLD, &s), 0);
        GLEAN_TEST_CHECK(s && strcmp(s, "C:\\temp\\new") == 0, "Cmd is '%s'", s ? s : "(null)");
        free(s);
        s = NULL;
        CU_ASSERT_EQUAL(classad_eval_string(ad, "q", CA_MODE_OLD, &s), 0);
        GLEAN_TEST_CHECK(s && strcmp(s, "say \"hi\" now") == 0, "Q is '%s'", s ? s : "(null)");
        free(s);
        classad_free(ad);
}

/* ---- unparsing ---- */

static void test_unparse_old(void) {
        ClassAd *ad = parse_ad("[ a = 1; b = \"x\"; c = a + 1; d = true ]", CA_MODE_OLD), *back = NULL;
        char *old, *again;

        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        old = classad_unparse_old(ad);
        CU_ASSERT_PTR_NOT_NULL_FATAL(old);
        CU_ASSERT_STRING_EQUAL(old, "a = 1\nb = \"x\"\nc = a + 1\nd = true\n");

        CU_ASSERT_EQUAL(classad_parse_old(old, strlen(old), CA_MODE_OLD, &back, NULL), 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(back);
        again = classad_unparse_old(back);
        CU_ASSERT(again && strcmp(again, old) == 0);
        free(again);
        free(old);
        classad_free(back);
        classad_free(ad);

        /* reals as the old unparser prints them: "%.16G", with ".0" added when
         * that looks like an integer (sink.cpp, oldClassAd) */
        ad = parse_ad("[ r = 2.5; s = 100.0; t = 1e20 ]", CA_MODE_OLD);
        CU_ASSERT_PTR_NOT_NULL_FATAL(ad);
        old = classad_unparse_old(ad);
        GLEAN_TEST_CHECK(old && strcmp(old, "r = 2.5\ns = 100.0\nt = 1E+20\n") == 0,
                         "classad_unparse_old: %s", old ? old : "(null)");
        free(old);
        classad_free(ad);

        /* an empty ad */
        CU_ASSERT_EQUAL(classad_new(&ad), 0);
        old = classad_unparse_old(ad);
        CU_ASSERT(old && strcmp(old, "") == 0);
        free(old);
        classad_free(ad);
}

static void test_unparse_roundtrip(void) {
        static const char *const ads[] = {
                "[ a = 1; b = 2.5; c = \"s\\n\\\"q\\\"\"; d = true; e = undefined; f = error ]",
                "[ l = { 1, { 2, 3 }, [ x = 1 ], \"s\" }; n = [ m = [ o = 1 ] ] ]",
                "[ r = MY.x > TARGET.y && !(z =?= undefined) || w isnt 3 ]",
                "[ t = a ? b : c ? d : e; u = f(1, g(2), \"h\"); v = -x + ~y * +z ]",
                "[ s = a[1].b[\"c\"]; p = (1 + 2) * 3; q = .root; e = x ?: y ]",
                "[ 'odd name' = 1; 'true' = 'odd name' + 1 ]",
                "[ big = 9223372036854775807; small = -9223372036854775808; tiny = 5e-324 ]",
                "[ sh = 1 << 2 >> 1 >>> 0; bits = 1 & 2 | 3 ^ 4 ]",
        };

        for (size_t i = 0; i < ELEMS(ads); i++) {
                ClassAd *a = NULL, *b = NULL;
                char *t1 = NULL, *t2 = NULL;
                CaError err = {};
                int r = classad_parse(ads[i], strlen(ads[i]), CA_MODE_OLD, &a, &err);

                GLEAN_TEST_CHECK(r >= 0, "row %zu: parse: %d (%d:%d %s)", i, r, err.line, err.column, err.msg);
                if (r < 0)
                        continue;
                t1 = classad_unparse(a);
                r = t1 ? classad_parse(t1, strlen(t1), CA_MODE_OLD, &b, &err) : -ENOMEM;
                GLEAN_TEST_CHECK(r >= 0, "row %zu: the unparsed '%s' does not parse: %s", i,
                                 t1 ? t1 : "(null)", err.msg);
                if (r >= 0) {
                        t2 = classad_unparse(b);
                        GLEAN_TEST_CHECK(t2 && strcmp(t1, t2) == 0, "row %zu: '%s' became '%s'", i, t1,
                                         t2 ? t2 : "(null)");
                }
                free(t1);
                free(t2);
                classad_free(a);
                classad_free(b);
        }
}

static void test_expr_api(void) {
        static const struct {
                const char *text, *unparsed, *value;
        } rows[] = {
                { "1 + 1", "1 + 1", "2" },
                { "  (1+1)*3  ", "(1 + 1) * 3", "6" },
                { "f(a,b)", "f(a,b)", "error" },
                { "strcat(\"a\", \"b\")", "strcat(\"a\",\"b\")", "\"ab\"" },
                { "{1,2}[0]", "{ 1,2 }[0]", "1" },
                { "[a=1].a", "[ a = 1 ].a", "1" },
                { "x", "x", "undefined" },
                { "MY.x", "MY.x", "undefined" },
                { "a=?=b", "a is b", "true" },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAdExpr *e = NULL;
                CaError err = {};
                CaValue v = ca_int(12345);
                char *u = NULL, *val = NULL;
                int r = classad_expr_parse(rows[i].text, strlen(rows[i].text), CA_MODE_OLD, &e, &err);

                GLEAN_TEST_CHECK(r >= 0 && e, "row %zu: parse %d (%s)", i, r, err.msg);
                if (r < 0)
                        continue;
                u = classad_expr_unparse(e);
                GLEAN_TEST_CHECK(u && strcmp(u, rows[i].unparsed) == 0, "row %zu: unparsed %s, want %s",
                                 i, u ? u : "(null)", rows[i].unparsed);
                CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v), 0);
                val = value_text_of(&v);
                GLEAN_TEST_CHECK(strcmp(val, rows[i].value) == 0, "row %zu: value %s, want %s", i, val,
                                 rows[i].value);
                free(val);
                free(u);
                ca_value_clear(&v);
                /* evaluating twice gives the same */
                CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v), 0);
                val = value_text_of(&v);
                GLEAN_TEST_CHECK(strcmp(val, rows[i].value) == 0, "row %zu: second value %s", i, val);
                free(val);
                ca_value_clear(&v);
                classad_expr_free(e);
        }
        classad_expr_free(NULL);

        /* an expression evaluated against different ads */
        {
                ClassAd *one = parse_ad("[ x = 1 ]", CA_MODE_OLD), *two = parse_ad("[ x = \"two\" ]", CA_MODE_OLD);
                ClassAdExpr *e = NULL;
                CaValue v = ca_undefined();

                CU_ASSERT_EQUAL_FATAL(classad_expr_parse("x", 1, CA_MODE_OLD, &e, NULL), 0);
                CU_ASSERT_EQUAL(classad_expr_eval(e, one, NULL, CA_MODE_OLD, &v), 0);
                CU_ASSERT(v.type == CA_INT && v.u.i == 1);
                ca_value_clear(&v);
                CU_ASSERT_EQUAL(classad_expr_eval(e, two, NULL, CA_MODE_OLD, &v), 0);
                CU_ASSERT(v.type == CA_STRING && strcmp(v.u.s->s, "two") == 0);
                ca_value_clear(&v);
                CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, two, CA_MODE_OLD, &v), 0);
                CU_ASSERT(v.type == CA_STRING);   /* old mode: falls back to the target */
                ca_value_clear(&v);
                CU_ASSERT_EQUAL(classad_expr_eval(e, NULL, two, CA_MODE_STRICT, &v), 0);
                CU_ASSERT(v.type == CA_UNDEFINED);
                ca_value_clear(&v);
                classad_expr_free(e);
                classad_free(one);
                classad_free(two);
        }
}

/* ---- matchmaking ---- */

static void test_match(void) {
        static const struct {
                const char *job, *machine;
                CaMode mode;
                bool match, job_met, machine_met;
        } rows[] = {
                /* both sides satisfied */
                { "[ Requirements = TARGET.Memory >= 1024 && TARGET.Arch == \"X86_64\"; ImageSize = 100 ]",
                  "[ Memory = 2048; Arch = \"x86_64\"; Requirements = TARGET.ImageSize < 1000 ]",
                  CA_MODE_OLD, true, true, true },
                /* the job refuses the machine */
                { "[ Requirements = TARGET.Memory >= 1024; ImageSize = 100 ]",
                  "[ Memory = 512; Requirements = TARGET.ImageSize < 1000 ]", CA_MODE_OLD, false, false, true },
                /* the machine refuses the job */
                { "[ Requirements = TARGET.Memory >= 1024; ImageSize = 100 ]",
                  "[ Memory = 2048; Requirements = TARGET.ImageSize < 50 ]", CA_MODE_OLD, false, true, false },
                /* no Requirements: UNDEFINED, no match */
                { "[ ImageSize = 100 ]", "[ Memory = 2048; Requirements = true ]", CA_MODE_OLD, false, false, true },
                { "[ Requirements = true ]", "[ Memory = 2048 ]", CA_MODE_OLD, false, true, false },
                { "[ ]", "[ ]", CA_MODE_OLD, false, false, false },
                /* UNDEFINED, ERROR, strings and reals are not true */
                { "[ Requirements = TARGET.Missing > 1 ]", "[ Requirements = true ]", CA_MODE_OLD, false, false, true },
                { "[ Requirements = 1 / 0 ]", "[ Requirements = true ]", CA_MODE_OLD, false, false, true },
                { "[ Requirements = \"yes\" ]", "[ Requirements = true ]", CA_MODE_OLD, false, false, true },
                { "[ Requirements = false ]", "[ Requirements = true ]", CA_MODE_OLD, false, false, true },
                /* an integer is (matchClassad.cpp EvalMatchExpr) */
                { "[ Requirements = 1 ]", "[ Requirements = 1 ]", CA_MODE_OLD, true, true, true },
                { "[ Requirements = 0 ]", "[ Requirements = true ]", CA_MODE_OLD, false, false, true },
                /* the name is case-insensitive */
                { "[ requirements = TARGET.x == 1 ]", "[ x = 1; REQUIREMENTS = true ]", CA_MODE_OLD, true, true, true },
                /* unqualified names fall back to the other ad in old mode only */
                { "[ Requirements = Memory >= 1024 ]", "[ Memory = 2048; Requirements = true ]",
                  CA_MODE_OLD, true, true, true },
                { "[ Requirements = Memory >= 1024 ]", "[ Memory = 2048; Requirements = true ]",
                  CA_MODE_STRICT, false, false, true },
                /* MY and TARGET both ways, both modes */
                { "[ Requirements = MY.ImageSize <= TARGET.Memory; ImageSize = 100 ]",
                  "[ Memory = 200; Requirements = TARGET.ImageSize <= MY.Memory ]", CA_MODE_OLD, true, true, true },
                { "[ Requirements = MY.ImageSize <= TARGET.Memory; ImageSize = 100 ]",
                  "[ Memory = 200; Requirements = TARGET.ImageSize <= MY.Memory ]", CA_MODE_STRICT, true, true, true },
                { "[ Requirements = MY.ImageSize <= TARGET.Memory; ImageSize = 300 ]",
                  "[ Memory = 200; Requirements = TARGET.ImageSize <= MY.Memory ]", CA_MODE_STRICT, false, false, false },
                /* my own attribute wins over the other's */
                { "[ Requirements = x == 1; x = 1 ]", "[ x = 2; Requirements = x == 2 ]", CA_MODE_OLD, true, true, true },
                /* Requirements referring to other attributes of its ad */
                { "[ Requirements = Good; Good = TARGET.Kind == \"m\" ]", "[ Kind = \"M\"; Requirements = true ]",
                  CA_MODE_OLD, true, true, true },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *job = parse_ad(rows[i].job, rows[i].mode);
                ClassAd *machine = parse_ad(rows[i].machine, rows[i].mode);
                bool m1, m2, jm, mm;

                if (!job || !machine) {
                        classad_free(job);
                        classad_free(machine);
                        continue;
                }
                m1 = classad_match(job, machine, rows[i].mode);
                m2 = classad_match(machine, job, rows[i].mode);
                jm = classad_requirements_met(job, machine, rows[i].mode);
                mm = classad_requirements_met(machine, job, rows[i].mode);
                GLEAN_TEST_CHECK(m1 == rows[i].match, "row %zu: classad_match(job, machine) = %d", i, m1);
                GLEAN_TEST_CHECK(m2 == rows[i].match, "row %zu: classad_match(machine, job) = %d", i, m2);
                GLEAN_TEST_CHECK(jm == rows[i].job_met, "row %zu: job requirements met = %d", i, jm);
                GLEAN_TEST_CHECK(mm == rows[i].machine_met, "row %zu: machine requirements met = %d", i, mm);
                classad_free(job);
                classad_free(machine);
        }
}

/* classad_eval_attr_with: MY.name of one ad with the other as TARGET. */
static void test_eval_attr_with(void) {
        static const struct {
                const char *ad, *name, *want; /* want: the value's text */
                bool with_target;
        } rows[] = {
                { "[ C = quantize(TARGET.RequestCpus, {4}) ]", "C", "4", true },
                { "[ C = TARGET.RequestCpus ]", "C", "undefined", false },
                { "[ C = Memory * 2 ]", "C", "4096", true },        /* old mode: Memory falls back to the target */
                { "[ C = MY.Memory; Memory = 7 ]", "C", "7", true },
                { "[ X = 1 ]", "Memory", "undefined", true },          /* the target's own is never read */
                { "[ c = TARGET.Memory ]", "C", "2048", true },        /* names are case-insensitive */
                { "[ C = TARGET.Missing + 1 ]", "C", "undefined", true },
                { "[ C = \"s\" ]", "C", "\"s\"", true },
        };
        ClassAd *job = parse_ad("[ RequestCpus = 3; Memory = 2048 ]", CA_MODE_OLD);

        CU_ASSERT_PTR_NOT_NULL_FATAL(job);
        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *ad = parse_ad(rows[i].ad, CA_MODE_OLD);
                CaValue v = ca_undefined();
                char *text;
                int r;

                if (!ad)
                        continue;
                r = classad_eval_attr_with(ad, rows[i].name, rows[i].with_target ? job : NULL, CA_MODE_OLD, &v);
                text = ca_value_unparse(&v);
                GLEAN_TEST_CHECK(r == 0 && text && strcmp(text, rows[i].want) == 0, "row %zu: %s: %s = %s (%d), want %s",
                                 i, rows[i].ad, rows[i].name, text ? text : "?", r, rows[i].want);
                free(text);
                ca_value_clear(&v);
                classad_free(ad);
        }
        classad_free(job);
}

static void test_rank(void) {
        static const struct {
                const char *ad;
                double want;
        } rows[] = {
                { "[ Rank = TARGET.Memory ]", 2048.0 },
                { "[ Rank = TARGET.Memory / 3 ]", 682.0 },
                { "[ Rank = TARGET.Memory / 3.0 ]", 2048.0 / 3.0 },
                { "[ Rank = 1.5 ]", 1.5 },
                { "[ Rank = -3 ]", -3.0 },
                { "[ Rank = Memory ]", 2048.0 },     /* old mode: falls back to the target */
                { "[ Rank = MY.Memory; Memory = 7 ]", 7.0 },
                { "[ ]", 0.0 },
                { "[ Rank = \"high\" ]", 0.0 },
                { "[ Rank = undefined ]", 0.0 },
                { "[ Rank = TARGET.Missing ]", 0.0 },
                { "[ Rank = 1 / 0 ]", 0.0 },
                { "[ Rank = { 1 } ]", 0.0 },
                { "[ rank = 4 ]", 4.0 },
        };
        ClassAd *machine = parse_ad("[ Memory = 2048; Requirements = true ]", CA_MODE_OLD);

        CU_ASSERT_PTR_NOT_NULL_FATAL(machine);
        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *ad = parse_ad(rows[i].ad, CA_MODE_OLD);
                double got;

                if (!ad)
                        continue;
                got = classad_rank(ad, machine, CA_MODE_OLD);
                GLEAN_TEST_CHECK(got == rows[i].want, "row %zu: %s: rank %.17g, want %.17g", i,
                                 rows[i].ad, got, rows[i].want);
                classad_free(ad);
        }
        classad_free(machine);
}

/* ---- limits, each in a child process ---- */

static char *repeat(const char *head, size_t n_head, const char *middle, const char *tail, size_t n_tail) {
        size_t lh = strlen(head), lm = strlen(middle), lt = strlen(tail);
        char *s = malloc(lh * n_head + lm + lt * n_tail + 1), *p = s;

        if (!s)
                return NULL;
        for (size_t i = 0; i < n_head; i++, p += lh)
                memcpy(p, head, lh);
        memcpy(p, middle, lm);
        p += lm;
        for (size_t i = 0; i < n_tail; i++, p += lt)
                memcpy(p, tail, lt);
        *p = '\0';
        return s;
}

/* Parses text that must be refused, with an explained error. */
static bool must_not_parse(const char *what, const char *text, char *why, size_t n) {
        ClassAdExpr *e = NULL;
        CaError err = {};
        int r;

        if (!text) {
                snprintf(why, n, "%s: out of memory", what);
                return false;
        }
        r = classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &err);
        if (r >= 0) {
                classad_expr_free(e);
                snprintf(why, n, "%s: parsed", what);
                return false;
        }
        if (err.msg[0] == '\0') {
                snprintf(why, n, "%s: no error message", what);
                return false;
        }
        return true;
}

/* Parses and evaluates text; either may fail cleanly. On success the value
 * must print as want (when want is not NULL). */
static bool may_parse(const char *what, const char *text, const char *want, char *why, size_t n) {
        ClassAdExpr *e = NULL;
        CaError err = {};
        CaValue v = ca_undefined();
        char *s, *u;
        int r;

        if (!text) {
                snprintf(why, n, "%s: out of memory", what);
                return false;
        }
        r = classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &err);
        if (r < 0)
                return err.msg[0] != '\0';
        u = classad_expr_unparse(e);
        free(u);
        r = classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v);
        classad_expr_free(e);
        if (r < 0)
                return true;
        s = ca_value_unparse(&v);
        ca_value_clear(&v);
        if (want && (!s || (strcmp(s, want) != 0 && strcmp(s, "error") != 0))) {
                snprintf(why, n, "%s: evaluated to %s, want %s or error", what, s ? s : "(null)", want);
                free(s);
                return false;
        }
        free(s);
        return true;
}

static bool child_deep_nesting(char *why, size_t n) {
        const size_t deep = 100000;
        bool ok = true;
        char *s;

        s = repeat("(", deep, "1", ")", deep);
        ok = ok && must_not_parse("100000 parentheses", s, why, n);
        free(s);
        s = repeat("{", deep, "1", "}", deep);
        ok = ok && must_not_parse("100000 braces", s, why, n);
        free(s);
        s = repeat("[a=", deep, "1", "]", deep);
        ok = ok && must_not_parse("100000 nested ads", s, why, n);
        free(s);
        s = repeat("f(", deep, "1", ")", deep);
        ok = ok && must_not_parse("100000 nested calls", s, why, n);
        free(s);
        s = repeat("x[", deep, "1", "]", deep);
        ok = ok && must_not_parse("100000 nested subscripts", s, why, n);
        free(s);
        s = repeat("true ? ", deep, "1", " : 0", deep);
        ok = ok && must_not_parse("100000 nested ?:", s, why, n);
        free(s);
        s = repeat("(", CA_MAX_PARSE_DEPTH + 1, "1", ")", CA_MAX_PARSE_DEPTH + 1);
        ok = ok && must_not_parse("CA_MAX_PARSE_DEPTH + 1 parentheses", s, why, n);
        free(s);

        /* unary chains: refused or evaluated, never a crash */
        s = repeat("!", deep, "true", "", 0);
        ok = ok && may_parse("100000 '!'", s, "true", why, n);
        free(s);
        s = repeat("~", deep, "5", "", 0);
        ok = ok && may_parse("100000 '~'", s, "5", why, n);
        free(s);
        s = repeat("- ", deep, "a", "", 0);
        ok = ok && may_parse("100000 '-'", s, "undefined", why, n);
        free(s);

        /* reasonable nesting parses and evaluates */
        s = repeat("(", 50, "1", ")", 50);
        ok = ok && may_parse("50 parentheses", s, "1", why, n);
        if (ok) {
                ClassAdExpr *e = NULL;

                if (classad_expr_parse(s, strlen(s), CA_MODE_OLD, &e, NULL) < 0) {
                        snprintf(why, n, "50 nested parentheses are refused");
                        ok = false;
                }
                classad_expr_free(e);
        }
        free(s);

        /* the same in a bracketed ad */
        if (ok) {
                ClassAd *ad = NULL;
                CaError err = {};

                s = repeat("[a=", deep, "1", "]", deep);
                if (s && classad_parse(s, strlen(s), CA_MODE_OLD, &ad, &err) >= 0) {
                        snprintf(why, n, "classad_parse of 100000 nested ads succeeded");
                        classad_free(ad);
                        ok = false;
                }
                free(s);
        }
        return ok;
}

static bool child_long_chains(char *why, size_t n) {
        const size_t len = 100000;
        bool ok = true;
        char *s;

        /* left-deep trees: 100000 binary operators */
        s = repeat("1+", len - 1, "1", "", 0);
        ok = ok && may_parse("1+1+...+1", s, "100000", why, n);
        free(s);
        s = repeat("true&&", len - 1, "true", "", 0);
        ok = ok && may_parse("true&&...&&true", s, "true", why, n);
        free(s);
        s = repeat("false||", len - 1, "true", "", 0);
        ok = ok && may_parse("false||...||true", s, "true", why, n);
        free(s);
        s = repeat("x.", len, "y", "", 0);
        ok = ok && may_parse("x.x.x...y", s, "undefined", why, n);
        free(s);
        s = repeat("undefined ?: ", len, "3", "", 0);
        ok = ok && may_parse("undefined ?: ... 3", s, "3", why, n);
        free(s);
        return ok;
}

/* Fills s (of big + 1 bytes) with head, 'a's, tail. */
static void fill(char *s, size_t big, const char *head, const char *tail) {
        size_t lh = strlen(head), lt = strlen(tail);

        memset(s, 'a', big);
        memcpy(s, head, lh);
        memcpy(s + big - lt, tail, lt);
        s[big] = '\0';
}

static bool child_input_size(char *why, size_t n) {
        size_t big = (size_t) CA_MAX_INPUT_SIZE + 1;
        char *s = malloc(big + 1);
        ClassAdExpr *e = NULL;
        ClassAd *ad = NULL;
        CaError err = {};
        CaValue v = ca_undefined();

        if (!s) {
                snprintf(why, n, "out of memory");
                return false;
        }
        /* one byte too long: a string literal, an ad, an old ad */
        fill(s, big, "\"", "\"");
        if (classad_expr_parse(s, big, CA_MODE_OLD, &e, &err) >= 0) {
                classad_expr_free(e);
                free(s);
                snprintf(why, n, "an expression of CA_MAX_INPUT_SIZE + 1 bytes parsed");
                return false;
        }
        fill(s, big, "[ a = \"", "\" ]");
        if (classad_parse(s, big, CA_MODE_OLD, &ad, &err) >= 0) {
                classad_free(ad);
                free(s);
                snprintf(why, n, "an ad of CA_MAX_INPUT_SIZE + 1 bytes parsed");
                return false;
        }
        fill(s, big, "a = \"", "\"\n");
        if (classad_parse_old(s, big, CA_MODE_OLD, &ad, &err) >= 0) {
                classad_free(ad);
                free(s);
                snprintf(why, n, "an old ad of CA_MAX_INPUT_SIZE + 1 bytes parsed");
                return false;
        }
        /* the same text just under the limit parses */
        fill(s, big - 1, "\"", "\"");
        if (classad_expr_parse(s, big - 1, CA_MODE_OLD, &e, &err) < 0) {
                free(s);
                snprintf(why, n, "an expression of CA_MAX_INPUT_SIZE bytes does not parse: %s", err.msg);
                return false;
        }
        classad_expr_free(e);
        e = NULL;

        /* one megabyte is fine, and evaluates */
        fill(s, 1 << 20, "\"", "\"");
        if (classad_expr_parse(s, 1 << 20, CA_MODE_OLD, &e, &err) < 0) {
                free(s);
                snprintf(why, n, "a 1 MiB string literal does not parse: %s", err.msg);
                return false;
        }
        free(s);
        if (classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v) < 0 || v.type != CA_STRING ||
            v.u.s->len != (1u << 20) - 2) {
                snprintf(why, n, "a 1 MiB string literal evaluates to type %d", v.type);
                ca_value_clear(&v);
                classad_expr_free(e);
                return false;
        }
        ca_value_clear(&v);
        classad_expr_free(e);
        return true;
}

static bool child_big_list(char *why, size_t n) {
        const int count = 100000;
        size_t cap = (size_t) count * 8 + 16, len = 0;
        char *s = malloc(cap);
        ClassAdExpr *e = NULL;
        ClassAd *ad = NULL;
        CaError err = {};
        CaValue v = ca_undefined(), elem = ca_undefined();
        bool ok = true;

        if (!s) {
                snprintf(why, n, "out of memory");
                return false;
        }
        len += (size_t) sprintf(s + len, "{");
        for (int i = 0; i < count; i++)
                len += (size_t) sprintf(s + len, i ? ",%d" : "%d", i);
        len += (size_t) sprintf(s + len, "}");

        if (classad_expr_parse(s, len, CA_MODE_OLD, &e, &err) < 0) {
                snprintf(why, n, "a list of 100000 elements does not parse: %s", err.msg);
                free(s);
                return false;
        }
        if (classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v) < 0 || ca_list_size(&v) != count) {
                snprintf(why, n, "the list has %" PRId64 " elements", ca_list_size(&v));
                ok = false;
        } else if (ca_list_get(&v, count - 1, CA_MODE_OLD, &elem) < 0 || elem.type != CA_INT ||
                   elem.u.i != count - 1) {
                snprintf(why, n, "the last element is wrong");
                ok = false;
        }
        ca_value_clear(&elem);
        ca_value_clear(&v);
        classad_expr_free(e);

        /* as an attribute */
        if (ok) {
                char *text = malloc(len + 32);

                if (!text) {
                        free(s);
                        snprintf(why, n, "out of memory");
                        return false;
                }
                sprintf(text, "[ l = %s; n = size(l) ]", s);
                if (classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) < 0) {
                        snprintf(why, n, "an ad with a list of 100000 elements does not parse: %s", err.msg);
                        ok = false;
                } else {
                        int64_t size = 0;

                        if (classad_eval_int(ad, "n", CA_MODE_OLD, &size) < 0 || size != count) {
                                snprintf(why, n, "size(l) = %" PRId64, size);
                                ok = false;
                        }
                        classad_free(ad);
                }
                free(text);
        }
        free(s);
        return ok;
}

/* a1 = a2 + 1; ...; a10000 = 0: too deep to evaluate, or 9999; no crash */
static bool child_deep_eval(char *why, size_t n) {
        const int count = 10000;
        size_t cap = (size_t) count * 32 + 16, len = 0;
        char *s = malloc(cap);
        ClassAd *ad = NULL;
        CaError err = {};
        CaValue v = ca_undefined();
        char *t;
        bool ok = true;

        if (!s)
                return false;
        len += (size_t) sprintf(s, "[ ");
        for (int i = 1; i < count; i++)
                len += (size_t) sprintf(s + len, "a%d = a%d + 1; ", i, i + 1);
        len += (size_t) sprintf(s + len, "a%d = 0 ]", count);
        if (classad_parse(s, len, CA_MODE_OLD, &ad, &err) < 0) {
                snprintf(why, n, "the ad does not parse: %s", err.msg);
                free(s);
                return false;
        }
        free(s);

        if (classad_eval_attr(ad, "a1", CA_MODE_OLD, &v) >= 0) {
                t = ca_value_unparse(&v);
                if (!t || (strcmp(t, "9999") != 0 && strcmp(t, "error") != 0)) {
                        snprintf(why, n, "a1 = %s", t ? t : "(null)");
                        ok = false;
                }
                free(t);
                ca_value_clear(&v);
        }
        /* short chains near the end still work */
        if (ok && (classad_eval_attr(ad, "a9990", CA_MODE_OLD, &v) < 0 || v.type != CA_INT || v.u.i != 10)) {
                snprintf(why, n, "a9990 is not 10");
                ok = false;
        }
        ca_value_clear(&v);
        /* and so does the same through a match */
        if (ok) {
                ClassAd *other = NULL;

                classad_new(&other);
                (void) classad_match(ad, other, CA_MODE_OLD);
                (void) classad_rank(ad, other, CA_MODE_OLD);
                classad_free(other);
        }
        classad_free(ad);
        return ok;
}

/* a0 = 1; a_i = a_(i-1) + a_(i-1): 2^60 evaluations unless the evaluator
 * caches or gives up; it must finish. */
static bool child_exponential(char *why, size_t n) {
        char text[4096];
        size_t len = 0;
        ClassAd *ad = NULL;
        CaValue v = ca_undefined();
        char *t;
        bool ok = true;

        len += (size_t) snprintf(text + len, sizeof(text) - len, "[ a0 = 1");
        for (int i = 1; i <= 60; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "; a%d = a%d + a%d", i, i - 1, i - 1);
        len += (size_t) snprintf(text + len, sizeof(text) - len, " ]");
        if (classad_parse(text, len, CA_MODE_OLD, &ad, NULL) < 0) {
                snprintf(why, n, "the ad does not parse");
                return false;
        }
        if (classad_eval_attr(ad, "a60", CA_MODE_OLD, &v) >= 0) {
                t = ca_value_unparse(&v);
                if (!t || (strcmp(t, "1152921504606846976") != 0 && strcmp(t, "error") != 0)) {
                        snprintf(why, n, "a60 = %s", t ? t : "(null)");
                        ok = false;
                }
                free(t);
                ca_value_clear(&v);
        }
        if (ok && (classad_eval_attr(ad, "a10", CA_MODE_OLD, &v) < 0 || v.type != CA_INT || v.u.i != 1024)) {
                snprintf(why, n, "a10 is not 1024");
                ok = false;
        }
        ca_value_clear(&v);
        classad_free(ad);
        return ok;
}

static long vm_size_bytes(void) {
        FILE *f = fopen("/proc/self/statm", "re");
        long pages = -1;

        if (!f)
                return -1;
        if (fscanf(f, "%ld", &pages) != 1)
                pages = -1;
        fclose(f);
        return pages < 0 ? -1 : pages * sysconf(_SC_PAGESIZE);
}

/* Replacing one attribute a million times must not make the ad grow without
 * bound: under an address-space limit of what the process has plus 256 MiB
 * (a million 500-byte strings kept would need twice that), every replacement
 * must succeed. Under ASan the limit cannot be used; the loop runs anyway. */
static bool child_replace_many(char *why, size_t n) {
        const long rounds = UNDER_ASAN ? 100000 : 1000000;
        char big[512], text[600];
        ClassAd *ad = NULL;
        char *s = NULL;
        int64_t i64 = 0;

        memset(big, 'x', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        snprintf(text, sizeof(text), "\"%.500s\" + 0", big);

        if (classad_new(&ad) < 0 || classad_set_int(ad, "Other", 7) < 0) {
                snprintf(why, n, "classad_new failed");
                return false;
        }
        if (!UNDER_ASAN) {
                long vm = vm_size_bytes();
                struct rlimit rl;

                if (vm > 0) {
                        rl.rlim_cur = rl.rlim_max = (rlim_t) vm + (256L << 20);
                        if (setrlimit(RLIMIT_AS, &rl) < 0) {
                                snprintf(why, n, "setrlimit: %s", strerror(errno));
                                return false;
                        }
                }
        }

        for (long i = 0; i < rounds; i++) {
                int r;

                big[i % 500] = (char) ('a' + i % 26);
                switch (i % 4) {
                case 0:
                        r = classad_set_string(ad, "Attr", big);
                        break;
                case 1:
                        r = classad_set_expr_text(ad, "ATTR", text, CA_MODE_OLD, NULL);
                        break;
                case 2:
                        r = classad_set_int(ad, "attr", i);
                        break;
                default:
                        r = classad_set_string(ad, "aTTr", big);
                        break;
                }
                if (r < 0) {
                        snprintf(why, n, "replacement %ld failed: %s (the ad grows without bound?)", i,
                                 strerror(-r));
                        classad_free(ad);
                        return false;
                }
        }
        if (classad_size(ad) != 2 || classad_eval_string(ad, "attr", CA_MODE_OLD, &s) < 0 ||
            strcmp(s, big) != 0 || classad_eval_int(ad, "other", CA_MODE_OLD, &i64) < 0 || i64 != 7) {
                snprintf(why, n, "wrong content after the replacements");
                free(s);
                classad_free(ad);
                return false;
        }
        free(s);
        classad_free(ad);
        return true;
}

static bool child_many_attributes(char *why, size_t n) {
        const int count = 100000;
        ClassAd *ad = NULL;
        char name[32];

        if (classad_new(&ad) < 0)
                return false;
        for (int i = 0; i < count; i++) {
                snprintf(name, sizeof(name), "Attr%d", i);
                if (classad_set_int(ad, name, i) < 0) {
                        snprintf(why, n, "set %s failed", name);
                        classad_free(ad);
                        return false;
                }
        }
        if (classad_size(ad) != (size_t) count) {
                snprintf(why, n, "size %zu", classad_size(ad));
                classad_free(ad);
                return false;
        }
        for (int i = 0; i < count; i += 997) {
                int64_t v = -1;

                snprintf(name, sizeof(name), "ATTR%d", i);
                if (classad_eval_int(ad, name, CA_MODE_OLD, &v) < 0 || v != i) {
                        snprintf(why, n, "%s = %" PRId64, name, v);
                        classad_free(ad);
                        return false;
                }
        }
        for (int i = 0; i < count; i += 2) {
                snprintf(name, sizeof(name), "attr%d", i);
                if (classad_delete(ad, name) < 0) {
                        snprintf(why, n, "delete %s failed", name);
                        classad_free(ad);
                        return false;
                }
        }
        if (classad_size(ad) != (size_t) count / 2 || classad_has(ad, "attr0") || !classad_has(ad, "attr1")) {
                snprintf(why, n, "wrong content after deleting half");
                classad_free(ad);
                return false;
        }
        classad_free(ad);
        return true;
}

static void test_limit_nesting(void) {
        run_isolated("deep nesting", child_deep_nesting, 120);
}

static void test_limit_chains(void) {
        run_isolated("long operator chains", child_long_chains, 120);
}

static void test_limit_input_size(void) {
        run_isolated("input size", child_input_size, 120);
}

static void test_limit_big_list(void) {
        run_isolated("100000-element list", child_big_list, 120);
}

static void test_limit_deep_eval(void) {
        run_isolated("10000-deep evaluation", child_deep_eval, 120);
}

static void test_limit_exponential(void) {
        run_isolated("exponential evaluation", child_exponential, 120);
}

static void test_limit_replace(void) {
        run_isolated("replace an attribute 1000000 times", child_replace_many, 300);
}

static void test_limit_many_attributes(void) {
        run_isolated("100000 attributes", child_many_attributes, 60);
}

static CU_TestInfo value_tests[] = {
        { "printing", test_value_printing },
        { "constructors", test_value_constructors },
        { "refcount", test_value_refcount },
        { "detach", test_value_detach },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo ad_tests[] = {
        { "set_eval", test_ad_set_eval },
        { "names_case_insensitive", test_ad_names_case_insensitive },
        { "set_expr", test_ad_set_expr },
        { "iter", test_ad_iter },
        { "copy_update", test_ad_copy_update },
        { "eval_ad_list", test_ad_eval_ad_list },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo parse_tests[] = {
        { "good", test_parse_good },
        { "bad", test_parse_bad },
        { "old", test_parse_old },
        { "old_bad", test_parse_old_bad },
        { "old_backslash", test_parse_old_backslash },
        { "unparse_old", test_unparse_old },
        { "unparse_roundtrip", test_unparse_roundtrip },
        { "expr", test_expr_api },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo match_tests[] = {
        { "match", test_match },
        { "rank", test_rank },
        { "eval_attr_with", test_eval_attr_with },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo limit_tests[] = {
        { "nesting", test_limit_nesting },
        { "chains", test_limit_chains },
        { "input_size", test_limit_input_size },
        { "big_list", test_limit_big_list },
        { "deep_eval", test_limit_deep_eval },
        { "exponential", test_limit_exponential },
        { "replace", test_limit_replace },
        { "many_attributes", test_limit_many_attributes },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "values", NULL, NULL, NULL, NULL, value_tests },
        { "ads", NULL, NULL, NULL, NULL, ad_tests },
        { "parse", NULL, NULL, NULL, NULL, parse_tests },
        { "match", NULL, NULL, NULL, NULL, match_tests },
        { "limits", NULL, NULL, NULL, NULL, limit_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-refs.c — what an expression reads (classad_expr_refs,
 * classad_attr_refs) and whether two ads agree on an attribute
 * (classad_attr_fingerprint, classad_attr_same): the analysis a
 * matchmaker's autoclusters rest on.
 */
#define _GNU_SOURCE

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "classad.h"
#include "test-util.h"

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

typedef struct Seen {
        char text[512];
} Seen;

static void record(const CaName *name, CaRefKind kind, void *userdata) {
        static const char *const kinds[] = { "", "my.", "target.", "?" };
        Seen *s = userdata;
        size_t len = strlen(s->text);

        snprintf(s->text + len, sizeof(s->text) - len, "%s%s%s", len ? " " : "", kinds[kind],
                 name ? classad_name_str(name) : "");
}

/* The references of an expression, in tree order. */
static void test_expr_refs(void) {
        static const struct {
                const char *expr, *want;
        } rows[] = {
                { "1 + 2", "" },
                { "Memory >= RequestMemory", "Memory RequestMemory" },
                { "TARGET.Memory >= MY.RequestMemory && other.Disk > self.x", "target.Memory my.RequestMemory target.Disk my.x" },
                { "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk)",
                  "target.Arch target.OpSys target.Disk RequestDisk" },
                { ".Root > 1", "my.Root" },
                { "ifThenElse(isUndefined(KFlops), 1000, Kflops) - SlotID", "KFlops KFlops SlotID" }, /* names as first spelt */
                { "{ a, b }[c]", "a b c" },
                { "[ x = y; z = 1 ].x", "? y" }, /* an attribute of a value: opaque, and the record's reads */
                { "PARENT.x", "?" },
                { "eval(\"Memory\") > 1", "?" },
                { "unresolved(Requirements)", "? Requirements" },
                { "isUndefined(TARGET)", "?" },
                { "strcat(Owner, \"x\") == \"ax\" ? KeyboardIdle : LoadAvg", "Owner KeyboardIdle LoadAvg" },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAdExpr *e = NULL;
                Seen seen = {};
                CaError err = {};

                GLEAN_TEST_CHECK_FATAL(classad_expr_parse(rows[i].expr, strlen(rows[i].expr), CA_MODE_OLD, &e, &err) == 0,
                                       "row %zu: %s", i, err.msg);
                classad_expr_refs(e, record, &seen);
                GLEAN_TEST_CHECK(strcmp(seen.text, rows[i].want) == 0, "row %zu: '%s' reads '%s', want '%s'", i,
                                 rows[i].expr, seen.text, rows[i].want);
                classad_expr_free(e);
        }
}

/* classad_attr_refs: the attribute's own tree; nothing when literal; false when absent. */
static void test_attr_refs(void) {
        const char text[] = "[ Requirements = START && Cpus > 0; START = KeyboardIdle > 900; Cpus = 4 ]";
        ClassAd *ad = NULL;
        Seen seen = {};

        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, NULL) == 0);
        classad_attr_refs(ad, classad_name("requirements"), record, &seen);
        GLEAN_TEST_CHECK(strcmp(seen.text, "START Cpus") == 0, "Requirements reads '%s'", seen.text);
        seen = (Seen){};
        CU_ASSERT(classad_attr_refs(ad, classad_name("Cpus"), record, &seen));
        CU_ASSERT(!classad_attr_refs(ad, classad_name("NoSuchThing"), record, &seen));
        CU_ASSERT_STRING_EQUAL(seen.text, "");
        CU_ASSERT(classad_name("CPUS") == classad_name("cpus"));
        classad_free(ad);
}

/* Fingerprints and equality: the same tree (spelling included), the same
 * number; absence is 0; a different value, operator or name differs. */
static void test_fingerprint(void) {
        static const struct {
                const char *a, *b;
                bool same;
        } rows[] = {
                { "1", "1", true },
                { "1", "1.0", false },
                { "\"x\"", "\"x\"", true },
                { "\"x\"", "\"X\"", false },
                { "Memory >= 1024", "Memory >= 1024", true },
                { "Memory >= 1024", "Memory > 1024", false },
                { "Memory >= 1024", "memory >= 1024", false }, /* unparse() would tell them apart */
                { "TARGET.Memory >= 1024", "MY.Memory >= 1024", false },
                { "1 + 1", "2", false },                       /* folded alike, written differently */
                { "{ 1, \"a\" }", "{ 1, \"a\" }", true },
                { "{ 1, \"a\" }", "{ 1, \"b\" }", false },
                { "[ a = 1; b = x ]", "[ a = 1; b = x ]", true },
                { "[ a = 1; b = x ]", "[ b = x; a = 1 ]", false },
                { "f(1, 2)", "f(1, 2)", true },
                { "strcat(1, 2)", "strcat(2, 1)", false },
                { "a ? b : c", "a ?: c", false },
                { "undefined", "error", false },
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                ClassAd *a = NULL, *b = NULL;
                const CaName *x = classad_name("X");
                char ta[256], tb[256];

                snprintf(ta, sizeof(ta), "[ X = %s; Y = 1 ]", rows[i].a);
                snprintf(tb, sizeof(tb), "[ Z = 2; X = %s ]", rows[i].b);
                GLEAN_TEST_CHECK_FATAL(classad_parse(ta, strlen(ta), CA_MODE_OLD, &a, NULL) == 0, "row %zu: %s", i, ta);
                GLEAN_TEST_CHECK_FATAL(classad_parse(tb, strlen(tb), CA_MODE_OLD, &b, NULL) == 0, "row %zu: %s", i, tb);
                GLEAN_TEST_CHECK(classad_attr_same(a, b, x) == rows[i].same, "row %zu: '%s' vs '%s'", i, rows[i].a,
                                 rows[i].b);
                if (rows[i].same)
                        GLEAN_TEST_CHECK(classad_attr_fingerprint(a, x) == classad_attr_fingerprint(b, x),
                                         "row %zu: equal trees, different fingerprints", i);
                else
                        GLEAN_TEST_CHECK(classad_attr_fingerprint(a, x) != classad_attr_fingerprint(b, x),
                                         "row %zu: '%s' and '%s' collide", i, rows[i].a, rows[i].b);
                CU_ASSERT(classad_attr_fingerprint(a, x) != 0);
                CU_ASSERT(classad_attr_fingerprint(a, classad_name("Z")) == 0);
                CU_ASSERT(classad_attr_same(a, b, classad_name("W"))); /* absent from both */
                CU_ASSERT(!classad_attr_same(a, b, classad_name("Y")));
                classad_free(a);
                classad_free(b);
        }
}

/* A copy's trees are the same trees: the same fingerprints. */
static void test_fingerprint_copy(void) {
        const char text[] = "[ Requirements = TARGET.Memory >= RequestMemory && Arch == \"X86_64\"; memory = 1 ]";
        const CaName *req = classad_name("Requirements");
        ClassAd *a = NULL, *b = NULL;

        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &a, NULL) == 0);
        CU_ASSERT_FATAL(classad_copy(a, &b) == 0);
        CU_ASSERT(classad_attr_same(a, b, req));
        CU_ASSERT(classad_attr_fingerprint(a, req) == classad_attr_fingerprint(b, req));
        classad_free(a);
        classad_free(b);
}

/* A value set from C is the same tree as the same literal parsed. */
static void test_fingerprint_set(void) {
        ClassAd *a = NULL, *b = NULL;
        const CaName *m = classad_name("Memory");

        CU_ASSERT_FATAL(classad_parse("[ Memory = 2048 ]", 17, CA_MODE_OLD, &a, NULL) == 0);
        CU_ASSERT_FATAL(classad_new(&b) == 0);
        classad_set_int(b, "Memory", 2048);
        CU_ASSERT(classad_attr_same(a, b, m));
        CU_ASSERT(classad_attr_fingerprint(a, m) == classad_attr_fingerprint(b, m));
        classad_set_int(b, "Memory", 1024);
        CU_ASSERT(!classad_attr_same(a, b, m));
        classad_free(a);
        classad_free(b);
}

/* classad_requirements_may_hold: false only when a conjunct that reads
 * none of the varying attributes (through either ad) is false. */
static void test_may_hold(void) {
        static const struct {
                const char *a, *b, *vary;
                bool want;
        } rows[] = {
                { "Requirements = TARGET.Arch == \"X86_64\" && TARGET.Cpus >= 2", "Arch = \"aarch64\"; Cpus = 8", "Cpus", false },
                { "Requirements = TARGET.Arch == \"X86_64\" && TARGET.Cpus >= 2", "Arch = \"X86_64\"; Cpus = 1", "Cpus", true },
                { "Requirements = TARGET.Arch == \"X86_64\" && TARGET.Cpus >= 2", "Arch = \"X86_64\"; Cpus = 1", "", false },
                { "Requirements = (TARGET.Memory >= 1000) && Foo; Foo = TARGET.Cpus > 1", "Memory = 500; Cpus = 4", "Cpus", false },
                { "Requirements = Foo && (TARGET.Memory >= 1000); Foo = TARGET.Cpus > 1", "Memory = 2000; Cpus = 1", "Cpus", true },
                { "Requirements = (TARGET.Memory >= 1000) && Foo; Foo = TARGET.Cpus > 1", "Memory = 500; Cpus = 4", "Memory", true },
                { "Requirements = Arch == \"X86_64\"", "Arch = \"aarch64\"", "", false },   /* plain: TARGET's */
                { "Requirements = TARGET.Free > 0", "Free = Cpus - 1; Cpus = 1", "Cpus", true },  /* read through b */
                { "Requirements = TARGET.Free > 0", "Free = Cpus - 1; Cpus = 1", "", false },
                { "Requirements = TARGET.Arch == \"aarch64\" || TARGET.Cpus > 1", "Arch = \"X86_64\"; Cpus = 1", "Cpus", true },
                { "Requirements = TARGET.Arch == \"aarch64\" && eval(\"Cpus > 1\")", "Arch = \"X86_64\"; Cpus = 1", "Cpus",
                  false }, /* the first conjunct alone says it */
                { "Requirements = eval(\"TARGET.Arch\") == \"aarch64\"", "Arch = \"X86_64\"", "", true }, /* cannot tell */
                { "Rank = 1", "Cpus = 1", "", false }, /* no Requirements: never met */
        };

        for (size_t i = 0; i < ELEMS(rows); i++) {
                char ta[512], tb[512];
                ClassAd *a = NULL, *b = NULL;
                const CaName *vary[2];
                size_t n = 0;

                snprintf(ta, sizeof(ta), "[ %s ]", rows[i].a);
                snprintf(tb, sizeof(tb), "[ %s ]", rows[i].b);
                GLEAN_TEST_CHECK_FATAL(classad_parse(ta, strlen(ta), CA_MODE_OLD, &a, NULL) == 0, "row %zu: %s", i, ta);
                GLEAN_TEST_CHECK_FATAL(classad_parse(tb, strlen(tb), CA_MODE_OLD, &b, NULL) == 0, "row %zu: %s", i, tb);
                if (rows[i].vary[0])
                        vary[n++] = classad_name(rows[i].vary);
                GLEAN_TEST_CHECK(classad_requirements_may_hold(a, b, vary, n, CA_MODE_OLD) == rows[i].want,
                                 "row %zu: '%s' against '%s' varying '%s': want %d", i, rows[i].a, rows[i].b,
                                 rows[i].vary, rows[i].want);
                /* never false where the Requirements hold */
                if (classad_requirements_met(a, b, CA_MODE_OLD))
                        CU_ASSERT(classad_requirements_may_hold(a, b, vary, n, CA_MODE_OLD));
                classad_free(a);
                classad_free(b);
        }
}

static CU_TestInfo tests[] = {
        { "expr_refs", test_expr_refs },
        { "attr_refs", test_attr_refs },
        { "fingerprint", test_fingerprint },
        { "fingerprint_copy", test_fingerprint_copy },
        { "fingerprint_set", test_fingerprint_set },
        { "may_hold", test_may_hold },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "refs", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

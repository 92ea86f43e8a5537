/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-chain.c — chained ads (classad_chain): a proc's own attributes
 * chained to its cluster's. Lookups and overriding, the child as MY of
 * what it inherits, matching a chained job against a slot, the flattened
 * and the own-only listings, references and fingerprints through the
 * chain, deleting, replacing the chain, reference counts (freeing the
 * parent first), and writes that never reach the parent.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "classad.h"
#include "test-util.h"

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* ---- helpers ---- */

static ClassAd *parse_ad(const char *text) {
        ClassAd *ad = NULL;
        CaError err = {};
        int r = classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err);

        GLEAN_TEST_CHECK_FATAL(r >= 0 && ad, "classad_parse(%s) = %d (column %d: %s)", text, r, err.column, err.msg);
        return ad;
}

/* ad parsed from text, chained to parent. */
static ClassAd *chained_ad(const char *text, ClassAd *parent) {
        ClassAd *ad = parse_ad(text);
        int r = classad_chain(ad, parent);

        GLEAN_TEST_CHECK_FATAL(r == 0, "classad_chain(%s) = %d", text, r);
        return ad;
}

/* Printed value of attribute name; malloc'd. */
static char *attr_text(const ClassAd *ad, const char *name, CaMode mode) {
        CaValue v = ca_undefined();
        char *s;

        if (classad_eval_attr(ad, name, mode, &v) < 0)
                return strdup("<eval failed>");
        s = ca_value_unparse(&v);
        ca_value_clear(&v);
        return s ? s : strdup("<unparse failed>");
}

static void check_attr(const ClassAd *ad, const char *name, CaMode mode, const char *want) {
        char *got = attr_text(ad, name, mode);

        GLEAN_TEST_CHECK(strcmp(got, want) == 0, "%s: got %s, want %s", name, got, want);
        free(got);
}

static void check_text(char *got, const char *what, const char *want) {
        GLEAN_TEST_CHECK(got && strcmp(got, want) == 0, "%s: got '%s', want '%s'", what, got ? got : "(null)", want);
        free(got);
}

/* Names and texts of an iteration, "name=text name=text". */
static char *iter_text(ClassAdIter it) {
        char *out = strdup(""), *text, *next;
        const char *name;

        while (out && classad_iter_next(&it, &name, &text)) {
                if (asprintf(&next, "%s%s%s=%s", out, *out ? " " : "", name, text ? text : "?") < 0)
                        next = NULL;
                free(text);
                free(out);
                out = next;
        }
        return out;
}

/* ---- lookups ---- */

static const char cluster_text[] =
        "[ ClusterId = 7; Owner = \"alice\"; Cmd = \"/bin/sim\"; RequestMemory = 1024; RequestCpus = 1; "
        "Desc = strcat(Owner, \".\", ClusterId, \".\", ProcId); Doubled = RequestMemory * 2; "
        "MyMem = MY.RequestMemory; Requirements = TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus; "
        "Rank = TARGET.Memory ]";

/* The child shows the parent's attributes; the parent never the child's. */
static void test_lookup(void) {
        ClassAd *cluster = parse_ad(cluster_text), *proc = chained_ad("[ ProcId = 3; JobStatus = 1 ]", cluster);

        CU_ASSERT(classad_chained_parent(proc) == cluster);
        CU_ASSERT(classad_chained_parent(cluster) == NULL);
        CU_ASSERT(classad_has(proc, "Cmd"));
        CU_ASSERT(classad_has(proc, "cmd"));
        CU_ASSERT(classad_has(proc, "ProcId"));
        CU_ASSERT(!classad_has(proc, "NoSuchThing"));
        CU_ASSERT(!classad_has(cluster, "ProcId"));
        int64_t i = 0;
        CU_ASSERT(classad_eval_int(proc, "ClusterId", CA_MODE_OLD, &i) == 0 && i == 7);
        CU_ASSERT(classad_eval_int(proc, "ProcId", CA_MODE_STRICT, &i) == 0 && i == 3);
        CU_ASSERT(classad_eval_int(cluster, "ProcId", CA_MODE_OLD, &i) == -ENOENT);
        char *s = NULL;
        CU_ASSERT(classad_eval_string(proc, "Cmd", CA_MODE_OLD, &s) == 0 && s && strcmp(s, "/bin/sim") == 0);
        free(s);
        check_text(classad_unparse_attr(proc, "Cmd"), "unparse_attr Cmd", "\"/bin/sim\"");
        check_text(classad_unparse_attr(proc, "ProcId"), "unparse_attr ProcId", "3");
        CU_ASSERT(classad_unparse_attr(cluster, "ProcId") == NULL);
        classad_free(proc);
        classad_free(cluster);
}

/* An attribute of the child hides the parent's of the same name (any case). */
static void test_override(void) {
        ClassAd *cluster = parse_ad(cluster_text), *proc = chained_ad("[ ProcId = 3; requestmemory = 4096 ]", cluster);

        check_attr(proc, "RequestMemory", CA_MODE_OLD, "4096");
        check_attr(cluster, "RequestMemory", CA_MODE_OLD, "1024");
        CU_ASSERT(classad_set_int(proc, "RequestCpus", 8) == 0);
        check_attr(proc, "RequestCpus", CA_MODE_OLD, "8");
        check_attr(cluster, "RequestCpus", CA_MODE_OLD, "1");
        /* a change of the parent shows in every child that does not override it */
        CU_ASSERT(classad_set_string(cluster, "Cmd", "/bin/other") == 0);
        CU_ASSERT(classad_set_int(cluster, "RequestMemory", 2) == 0);
        check_attr(proc, "Cmd", CA_MODE_OLD, "\"/bin/other\"");
        check_attr(proc, "RequestMemory", CA_MODE_OLD, "4096");
        classad_free(proc);
        classad_free(cluster);
}

/* Inherited expressions see the child as MY: its overrides, its own names. */
static void test_my_scope(void) {
        static const struct {
                const char *attr;
                CaMode mode;
                const char *proc, *cluster; /* value through the proc, through the cluster */
        } rows[] = {
                { "Doubled", CA_MODE_OLD, "8192", "2048" },
                { "Doubled", CA_MODE_STRICT, "8192", "2048" },
                { "MyMem", CA_MODE_OLD, "4096", "1024" },
                { "Desc", CA_MODE_OLD, "\"alice.7.3\"", "undefined" },
                { "Total", CA_MODE_OLD, "4103", "undefined" },  /* the proc's own, reading inherited ClusterId */
                { "Loop", CA_MODE_OLD, "error", "undefined" },  /* proc Loop = Back, cluster Back = Loop */
                { "Back", CA_MODE_OLD, "error", "undefined" },
                { "Size", CA_MODE_OLD, "15", "undefined" },     /* size(SELF): the flattened view, 11 + 5 - 1 */
        };
        ClassAd *cluster = parse_ad(cluster_text), *proc;

        CU_ASSERT_FATAL(classad_set_expr_text(cluster, "Back", "Loop", CA_MODE_OLD, NULL) == 0);
        proc = chained_ad("[ ProcId = 3; RequestMemory = 4096; Total = RequestMemory + ClusterId; Loop = Back; "
                          "Size = size(SELF) ]",
                          cluster);
        for (size_t i = 0; i < ELEMS(rows); i++) {
                char *got = attr_text(proc, rows[i].attr, rows[i].mode);
                GLEAN_TEST_CHECK(strcmp(got, rows[i].proc) == 0, "row %zu: proc %s = %s, want %s", i, rows[i].attr,
                                 got, rows[i].proc);
                free(got);
                got = attr_text(cluster, rows[i].attr, rows[i].mode);
                GLEAN_TEST_CHECK(strcmp(got, rows[i].cluster) == 0, "row %zu: cluster %s = %s, want %s", i,
                                 rows[i].attr, got, rows[i].cluster);
                free(got);
        }
        /* a stand-alone expression with the proc as MY */
        ClassAdExpr *e = NULL;
        CaValue v = ca_undefined();
        CU_ASSERT_FATAL(classad_expr_parse("Doubled + ProcId", 16, CA_MODE_OLD, &e, NULL) == 0);
        CU_ASSERT(classad_expr_eval(e, proc, NULL, CA_MODE_OLD, &v) == 0 && v.type == CA_INT && v.u.i == 8195);
        classad_expr_free(e);
        classad_free(proc);
        classad_free(cluster);
}

/* Every expression gives through the chain what it gives in the flattened
 * copy: alone and in a match, in both modes. */
static void test_same_as_flat(void) {
        static const char *const exprs[] = {
                "RequestMemory", "MY.RequestMemory", "SELF.ProcId", "Doubled", "Desc", "Requirements", "Rank",
                "TARGET.Memory", "Memory", "Memory >= RequestMemory", "size(MY)", "unparse(Doubled)",
                "ifThenElse(ProcId == 3, Cmd, Owner)", "[ a = RequestMemory ].a", "{ ProcId, ClusterId }[1]",
                "Special.x", "MY.Special.x", "NoSuch", "strcat(Owner, TARGET.Name)", "eval(\"Doubled\")",
        };
        ClassAd *cluster = parse_ad(cluster_text);
        ClassAd *proc = chained_ad("[ ProcId = 3; RequestMemory = 4096; Special = [ x = 5 ] ]", cluster);
        ClassAd *slot = parse_ad("[ Name = \"slot1@a\"; Memory = 8192; Cpus = 4; Requirements = true ]");
        ClassAd *flat = NULL;

        CU_ASSERT_FATAL(classad_copy(proc, &flat) == 0);
        CU_ASSERT(classad_chained_parent(flat) == NULL);
        for (size_t i = 0; i < ELEMS(exprs); i++)
                for (int m = 0; m < 2; m++)
                        for (int in_match = 0; in_match < 2; in_match++) {
                                CaMode mode = m ? CA_MODE_STRICT : CA_MODE_OLD;
                                ClassAdExpr *e = NULL;
                                CaValue a = ca_undefined(), b = ca_undefined();
                                const ClassAd *target = in_match ? slot : NULL;

                                int r = classad_expr_parse(exprs[i], strlen(exprs[i]), mode, &e, NULL);

                                GLEAN_TEST_CHECK_FATAL(r == 0, "parse %s", exprs[i]);
                                CU_ASSERT(classad_expr_eval(e, proc, target, mode, &a) == 0);
                                CU_ASSERT(classad_expr_eval(e, flat, target, mode, &b) == 0);
                                char *ta = ca_value_unparse(&a), *tb = ca_value_unparse(&b);
                                GLEAN_TEST_CHECK(ta && tb && strcmp(ta, tb) == 0,
                                                 "%s (mode %d, match %d): chained %s, flattened %s", exprs[i], m,
                                                 in_match, ta, tb);
                                free(ta);
                                free(tb);
                                ca_value_clear(&a);
                                ca_value_clear(&b);
                                classad_expr_free(e);
                        }
        classad_free(flat);
        classad_free(slot);
        classad_free(proc);
        classad_free(cluster);
}

/* A parent that defines a scope name as an attribute (Target = [...]):
 * TARGET.x in the child reads it, as in the flattened copy, also when the
 * parent gains it after the chain was made. */
static void test_scope_names(void) {
        ClassAd *cluster = parse_ad("[ RequestMemory = 1024; Rank = TARGET.Memory; "
                                    "Requirements = TARGET.Memory >= RequestMemory ]");
        ClassAd *proc = chained_ad("[ ProcId = 0 ]", cluster);
        ClassAd *slot = parse_ad("[ Memory = 8192; Requirements = true ]");
        ClassAd *flat = NULL;

        CU_ASSERT(classad_rank(proc, slot, CA_MODE_OLD) == 8192.0);
        CU_ASSERT(classad_match(proc, slot, CA_MODE_OLD));
        CU_ASSERT(classad_set_expr_text(cluster, "Target", "[ Memory = 7 ]", CA_MODE_OLD, NULL) == 0);
        CU_ASSERT_FATAL(classad_copy(proc, &flat) == 0);
        GLEAN_TEST_CHECK(classad_rank(flat, slot, CA_MODE_OLD) == 7.0, "flattened Rank %g",
                         classad_rank(flat, slot, CA_MODE_OLD));
        GLEAN_TEST_CHECK(classad_rank(proc, slot, CA_MODE_OLD) == 7.0, "chained Rank %g",
                         classad_rank(proc, slot, CA_MODE_OLD));
        CU_ASSERT(classad_match(proc, slot, CA_MODE_OLD) == classad_match(flat, slot, CA_MODE_OLD));
        /* the slot's TARGET is the proc still */
        CU_ASSERT(classad_set_expr_text(slot, "Rank", "TARGET.RequestMemory + TARGET.ProcId", CA_MODE_OLD, NULL) == 0);
        CU_ASSERT(classad_rank(slot, proc, CA_MODE_OLD) == 1024.0);
        /* and once unchained, the proc sees TARGET as the other ad again */
        classad_unchain(proc);
        CU_ASSERT(classad_set_expr_text(proc, "Rank", "TARGET.Memory", CA_MODE_OLD, NULL) == 0);
        CU_ASSERT(classad_rank(proc, slot, CA_MODE_OLD) == 8192.0);
        classad_free(flat);
        classad_free(slot);
        classad_free(proc);
        classad_free(cluster);
}

/* ---- matching ---- */

/* A chained job against slot ads: the cluster's Requirements and Rank read
 * each proc's own RequestMemory; the slot's read the proc through TARGET. */
static void test_match(void) {
        static const struct {
                const char *cluster_req;
                CaMode mode;
        } reqs[] = {
                { "TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus", CA_MODE_OLD },
                { "TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus", CA_MODE_STRICT },
                { "Memory >= RequestMemory && Cpus >= RequestCpus", CA_MODE_OLD }, /* old mode's TARGET fallback */
                { "TARGET.Memory >= MY.RequestMemory && TARGET.Cpus >= MY.RequestCpus", CA_MODE_OLD },
        };
        ClassAd *slot = parse_ad("[ Name = \"slot1@a\"; Memory = 2048; Cpus = 4; "
                                 "Requirements = TARGET.RequestMemory <= Memory; Rank = TARGET.JobPrio ]");

        for (size_t i = 0; i < ELEMS(reqs); i++) {
                CaMode mode = reqs[i].mode;
                ClassAd *cluster = parse_ad("[ ClusterId = 1; RequestMemory = 1024; RequestCpus = 1; JobPrio = 1; "
                                            "Rank = TARGET.Memory - RequestMemory ]");
                CU_ASSERT_FATAL(classad_set_expr_text(cluster, "Requirements", reqs[i].cluster_req, mode, NULL) == 0);
                ClassAd *small = chained_ad("[ ProcId = 0 ]", cluster);
                ClassAd *big = chained_ad("[ ProcId = 1; RequestMemory = 4096; JobPrio = 5 ]", cluster);
                ClassAd *many = chained_ad("[ ProcId = 2; RequestCpus = 16 ]", cluster);

                GLEAN_TEST_CHECK(classad_match(small, slot, mode), "row %zu: proc 0 should match", i);
                GLEAN_TEST_CHECK(classad_match(slot, small, mode), "row %zu: proc 0 should match (slot first)", i);
                GLEAN_TEST_CHECK(!classad_requirements_met(big, slot, mode), "row %zu: proc 1's own Requirements", i);
                GLEAN_TEST_CHECK(!classad_requirements_met(slot, big, mode), "row %zu: slot against proc 1", i);
                GLEAN_TEST_CHECK(!classad_match(big, slot, mode), "row %zu: proc 1 should not match", i);
                GLEAN_TEST_CHECK(!classad_requirements_met(many, slot, mode), "row %zu: proc 2's Requirements", i);
                GLEAN_TEST_CHECK(classad_requirements_met(slot, many, mode), "row %zu: slot against proc 2", i);
                GLEAN_TEST_CHECK(classad_rank(small, slot, mode) == 1024.0, "row %zu: proc 0's Rank %g", i,
                                 classad_rank(small, slot, mode));
                GLEAN_TEST_CHECK(classad_rank(big, slot, mode) == -2048.0, "row %zu: proc 1's Rank %g", i,
                                 classad_rank(big, slot, mode));
                GLEAN_TEST_CHECK(classad_rank(slot, big, mode) == 5.0, "row %zu: slot's Rank of proc 1", i);
                GLEAN_TEST_CHECK(classad_rank(slot, small, mode) == 1.0, "row %zu: slot's Rank of proc 0", i);
                /* the cluster itself matches as proc 0 does */
                GLEAN_TEST_CHECK(classad_match(cluster, slot, mode), "row %zu: the cluster ad", i);
                classad_free(small);
                classad_free(big);
                classad_free(many);
                classad_free(cluster);
        }
        /* a proc with a Requirements of its own, the cluster without one */
        ClassAd *cluster = parse_ad("[ RequestMemory = 1024 ]");
        ClassAd *proc = chained_ad("[ Requirements = TARGET.Memory >= RequestMemory ]", cluster);
        CU_ASSERT(classad_match(proc, slot, CA_MODE_OLD));
        CU_ASSERT(!classad_requirements_met(cluster, slot, CA_MODE_OLD)); /* no Requirements: not met */
        classad_free(proc);
        classad_free(cluster);
        classad_free(slot);
}

/* ---- listings ---- */

/* Size, iteration, unparsing and copies: flattened (the parent's first,
 * overridden names once, at the child's place) or the child's own. */
static void test_flattened(void) {
        ClassAd *cluster = parse_ad("[ A = 1; B = 2; C = \"c\" ]");
        ClassAd *proc = chained_ad("[ b = 20; D = A + 1 ]", cluster);
        ClassAd *copy = NULL, *own = NULL, *dst = NULL;

        CU_ASSERT(classad_size(proc) == 4);
        CU_ASSERT(classad_size_own(proc) == 2);
        CU_ASSERT(classad_size(cluster) == 3);
        CU_ASSERT(classad_size_own(cluster) == 3);
        check_text(iter_text(classad_iter(proc)), "iteration", "A=1 C=\"c\" b=20 D=A + 1");
        check_text(iter_text(classad_iter_own(proc)), "own iteration", "b=20 D=A + 1");
        check_text(iter_text(classad_iter_own(cluster)), "own iteration of the parent", "A=1 B=2 C=\"c\"");
        check_text(classad_unparse(proc), "unparse", "[ A = 1; C = \"c\"; b = 20; D = A + 1 ]");
        check_text(classad_unparse_old(proc), "unparse_old", "A = 1\nC = \"c\"\nb = 20\nD = A + 1\n");
        check_text(classad_unparse_own(proc), "unparse_own", "[ b = 20; D = A + 1 ]");
        check_text(classad_unparse_own(cluster), "unparse_own of the parent", "[ A = 1; B = 2; C = \"c\" ]");

        CU_ASSERT_FATAL(classad_copy(proc, &copy) == 0);
        CU_ASSERT(classad_chained_parent(copy) == NULL);
        CU_ASSERT(classad_size(copy) == 4);
        check_text(classad_unparse(copy), "copy", "[ A = 1; C = \"c\"; b = 20; D = A + 1 ]");
        check_attr(copy, "D", CA_MODE_OLD, "2");

        CU_ASSERT_FATAL(classad_copy_own(proc, &own) == 0);
        CU_ASSERT(classad_chained_parent(own) == NULL);
        check_text(classad_unparse(own), "copy_own", "[ b = 20; D = A + 1 ]");
        check_attr(own, "D", CA_MODE_OLD, "undefined");
        CU_ASSERT(classad_chain(own, cluster) == 0); /* the view back */
        check_text(classad_unparse(own), "copy_own chained", "[ A = 1; C = \"c\"; b = 20; D = A + 1 ]");

        CU_ASSERT_FATAL(classad_new(&dst) == 0);
        CU_ASSERT(classad_set_int(dst, "A", 100) == 0);
        CU_ASSERT(classad_update(dst, proc) == 0);
        check_text(classad_unparse(dst), "update", "[ A = 1; C = \"c\"; b = 20; D = A + 1 ]");
        /* updating a chained ad from itself or into its parent */
        CU_ASSERT(classad_update(proc, proc) == 0);
        check_text(classad_unparse(proc), "update from itself", "[ A = 1; C = \"c\"; b = 20; D = A + 1 ]");
        CU_ASSERT(classad_update(cluster, proc) == 0);
        /* (the spelling of the latest insert) */
        check_text(classad_unparse(cluster), "update of the parent", "[ A = 1; b = 20; C = \"c\"; D = A + 1 ]");
        check_text(classad_unparse(proc), "after updating the parent", "[ A = 1; C = \"c\"; b = 20; D = A + 1 ]");

        classad_free(dst);
        classad_free(own);
        classad_free(copy);
        classad_free(proc);
        classad_free(cluster);
}

/* ---- analysis ---- */

typedef struct Seen {
        char text[256];
} Seen;

static void record(const CaName *name, CaRefKind kind, void *userdata) {
        Seen *s = userdata;
        size_t len = strlen(s->text);

        snprintf(s->text + len, sizeof(s->text) - len, "%s%s%s", len ? " " : "", kind == CA_REF_TARGET ? "TARGET." : "",
                 name ? classad_name_str(name) : "?");
}

/* References, fingerprints and equality look through the chain. */
static void test_refs(void) {
        ClassAd *cluster = parse_ad(cluster_text);
        ClassAd *p0 = chained_ad("[ ProcId = 0 ]", cluster), *p1 = chained_ad("[ ProcId = 1 ]", cluster);
        ClassAd *p2 = chained_ad("[ ProcId = 2; Requirements = TARGET.Memory >= RequestMemory ]", cluster);
        ClassAd *flat = NULL;
        const CaName *req = classad_name("Requirements"), *proc_id = classad_name("ProcId");
        const CaName *cmd = classad_name("Cmd");
        Seen seen = {};

        CU_ASSERT(classad_attr_refs(p0, req, record, &seen));
        GLEAN_TEST_CHECK(strcmp(seen.text, "TARGET.Memory RequestMemory TARGET.Cpus RequestCpus") == 0,
                         "Requirements through the chain reads '%s'", seen.text);
        CU_ASSERT(!classad_attr_refs(p0, classad_name("NoSuch"), record, &seen));
        CU_ASSERT(classad_attr_fingerprint(p0, req) != 0);
        CU_ASSERT(classad_attr_fingerprint(p0, req) == classad_attr_fingerprint(cluster, req));
        CU_ASSERT(classad_attr_fingerprint(p0, req) != classad_attr_fingerprint(p2, req));
        CU_ASSERT(classad_attr_fingerprint(p0, proc_id) != 0);
        CU_ASSERT(classad_attr_fingerprint(cluster, proc_id) == 0);
        CU_ASSERT(classad_attr_fingerprint(p0, proc_id) != classad_attr_fingerprint(p1, proc_id));
        CU_ASSERT(classad_attr_same(p0, p1, req));
        CU_ASSERT(classad_attr_same(p0, p1, cmd));
        CU_ASSERT(!classad_attr_same(p0, p1, proc_id));
        CU_ASSERT(!classad_attr_same(p0, p2, req));
        CU_ASSERT(!classad_attr_same(p0, cluster, proc_id));
        CU_ASSERT_FATAL(classad_copy(p2, &flat) == 0);
        ClassAdIter it = classad_iter(p2);
        const char *name;
        while (classad_iter_next(&it, &name, NULL)) {
                const CaName *n = classad_name(name);
                GLEAN_TEST_CHECK(classad_attr_same(p2, flat, n) &&
                                         classad_attr_fingerprint(p2, n) == classad_attr_fingerprint(flat, n),
                                 "%s differs between the chained ad and its flattened copy", name);
        }
        classad_free(flat);
        classad_free(p0);
        classad_free(p1);
        classad_free(p2);
        classad_free(cluster);
}

/* Whether Requirements may hold reads the child's attributes. */
static void test_may_hold(void) {
        ClassAd *cluster = parse_ad("[ RequestMemory = 1024; "
                                    "Requirements = TARGET.Memory >= RequestMemory && TARGET.Arch == \"X86_64\" && "
                                    "RequestMemory < 8000 ]");
        ClassAd *small = chained_ad("[ ProcId = 0 ]", cluster);
        ClassAd *huge = chained_ad("[ ProcId = 1; RequestMemory = 9000 ]", cluster);
        ClassAd *x86 = parse_ad("[ Arch = \"X86_64\"; Memory = 1 ]"), *arm = parse_ad("[ Arch = \"ARM\"; Memory = 1 ]");
        const CaName *vary[] = { classad_name("Memory") };

        CU_ASSERT(classad_requirements_may_hold(small, x86, vary, 1, CA_MODE_OLD));
        CU_ASSERT(!classad_requirements_may_hold(small, arm, vary, 1, CA_MODE_OLD));
        CU_ASSERT(!classad_requirements_may_hold(huge, x86, vary, 1, CA_MODE_OLD));
        CU_ASSERT(classad_requirements_may_hold(cluster, x86, vary, 1, CA_MODE_OLD));
        classad_free(x86);
        classad_free(arm);
        classad_free(small);
        classad_free(huge);
        classad_free(cluster);
}

/* ---- writing ---- */

/* Deleting from the child: its own attribute (the parent's shows again);
 * a name only the parent has cannot be deleted through the child. */
static void test_delete(void) {
        ClassAd *cluster = parse_ad("[ A = 1; B = 2 ]"), *proc = chained_ad("[ B = 20; C = 3 ]", cluster);

        CU_ASSERT(classad_delete(proc, "A") == -ENOENT);
        CU_ASSERT(classad_has(proc, "A"));
        CU_ASSERT(classad_has(cluster, "A"));
        CU_ASSERT(classad_delete(proc, "b") == 0);
        check_attr(proc, "B", CA_MODE_OLD, "2");
        CU_ASSERT(classad_delete(proc, "B") == -ENOENT);
        check_attr(cluster, "B", CA_MODE_OLD, "2");
        CU_ASSERT(classad_delete(proc, "C") == 0);
        CU_ASSERT(!classad_has(proc, "C"));
        CU_ASSERT(classad_delete(proc, "NoSuchName") == -ENOENT);
        CU_ASSERT(classad_size(proc) == 2);
        CU_ASSERT(classad_size_own(proc) == 0);
        check_text(classad_unparse(proc), "after the deletes", "[ A = 1; B = 2 ]");
        /* deleting from the parent shows in the child */
        CU_ASSERT(classad_delete(cluster, "A") == 0);
        CU_ASSERT(!classad_has(proc, "A"));
        classad_free(proc);
        classad_free(cluster);
}

/* classad_set_* on the child never changes the parent, whatever the kind
 * of value replaced (numbers are replaced in place when spelt alike). */
static void test_set_never_parent(void) {
        static const char cluster_text2[] =
                "[ I = 1; R = 1.5; Bo = true; S = \"s\"; E = I + 1; V = 7; L = { 1, 2 } ]";
        ClassAd *cluster = parse_ad(cluster_text2), *proc = NULL;
        char *before = classad_unparse(cluster);
        CaValue v = ca_int(70);

        CU_ASSERT_FATAL(classad_new(&proc) == 0);
        CU_ASSERT_FATAL(classad_chain(proc, cluster) == 0);
        CU_ASSERT(classad_set_int(proc, "I", 100) == 0);
        CU_ASSERT(classad_set_real(proc, "R", 2.5) == 0);
        CU_ASSERT(classad_set_bool(proc, "Bo", false) == 0);
        CU_ASSERT(classad_set_string(proc, "S", "t") == 0);
        CU_ASSERT(classad_set_expr_text(proc, "E", "I * 10", CA_MODE_OLD, NULL) == 0);
        CU_ASSERT(classad_set_value(proc, "V", &v) == 0);
        CU_ASSERT(classad_set_int(proc, "L", 3) == 0);
        CU_ASSERT(classad_set_int(proc, "New", 1) == 0);
        check_text(classad_unparse(cluster), "the parent after setting the child", before);
        check_text(classad_unparse_own(proc), "the child's own",
                   "[ I = 100; R = 2.500000000000000E+00; Bo = false; S = \"t\"; E = I * 10; V = 70; L = 3; "
                   "New = 1 ]");
        check_attr(proc, "E", CA_MODE_OLD, "1000");
        check_attr(cluster, "E", CA_MODE_OLD, "2");
        /* again, now replacing the child's own (in place for numbers) */
        CU_ASSERT(classad_set_int(proc, "I", 101) == 0);
        CU_ASSERT(classad_set_real(proc, "R", 3.5) == 0);
        check_attr(proc, "I", CA_MODE_OLD, "101");
        check_text(classad_unparse(cluster), "the parent after replacing in the child", before);
        free(before);
        classad_free(proc);
        classad_free(cluster);
}

/* ---- the link itself ---- */

/* A later chain replaces the earlier; unchaining; what may not chain. */
static void test_chain_replace(void) {
        ClassAd *c1 = parse_ad("[ Cluster = 1; Only1 = true ]"), *c2 = parse_ad("[ Cluster = 2 ]");
        ClassAd *proc = parse_ad("[ ProcId = 0 ]"), *other = parse_ad("[ X = 1 ]");

        CU_ASSERT(classad_chain(proc, c1) == 0);
        CU_ASSERT(classad_chain(proc, c1) == 0); /* the same again: one reference still */
        check_attr(proc, "Cluster", CA_MODE_OLD, "1");
        CU_ASSERT(classad_chain(proc, c2) == 0);
        CU_ASSERT(classad_chained_parent(proc) == c2);
        check_attr(proc, "Cluster", CA_MODE_OLD, "2");
        CU_ASSERT(!classad_has(proc, "Only1"));
        classad_free(c1); /* proc holds no reference on it any more: really freed */

        CU_ASSERT(classad_chain(proc, proc) == -EINVAL);
        CU_ASSERT(classad_chain(other, proc) == -EINVAL); /* proc is chained: one level */
        CU_ASSERT(classad_chain(c2, other) == -EINVAL);   /* c2 is a parent */
        CU_ASSERT(classad_chain(NULL, c2) == -EINVAL);
        CU_ASSERT(classad_chain(other, NULL) == -EINVAL);
        CU_ASSERT(classad_chained_parent(proc) == c2);
        CU_ASSERT(classad_chained_parent(other) == NULL);

        classad_unchain(proc);
        CU_ASSERT(classad_chained_parent(proc) == NULL);
        CU_ASSERT(!classad_has(proc, "Cluster"));
        classad_unchain(proc); /* nothing */
        classad_unchain(NULL);
        /* c2 is no parent any more: it may now chain */
        CU_ASSERT(classad_chain(c2, other) == 0);
        check_attr(c2, "X", CA_MODE_OLD, "1");
        CU_ASSERT(classad_chain(proc, c2) == -EINVAL);
        classad_free(other); /* c2 holds it */
        check_attr(c2, "X", CA_MODE_OLD, "1");
        classad_free(c2);
        classad_free(proc);
}

/* The child's reference keeps the parent alive: freeing the parent first
 * is safe (ASan and LeakSanitizer check the rest). */
static void test_refcount(void) {
        ClassAd *cluster = parse_ad(cluster_text), *procs[3];

        for (int i = 0; i < 3; i++) {
                char text[64];
                snprintf(text, sizeof(text), "[ ProcId = %d ]", i);
                procs[i] = chained_ad(text, cluster);
        }
        classad_free(cluster);
        check_attr(procs[0], "Desc", CA_MODE_OLD, "\"alice.7.0\"");
        classad_free(procs[1]);
        check_attr(procs[2], "Desc", CA_MODE_OLD, "\"alice.7.2\"");
        classad_free(procs[0]);
        check_attr(procs[2], "Owner", CA_MODE_OLD, "\"alice\"");
        /* a value of the ad (MY) holds it too */
        ClassAdExpr *e = NULL;
        CaValue v = ca_undefined();
        CU_ASSERT_FATAL(classad_expr_parse("SELF", 4, CA_MODE_OLD, &e, NULL) == 0);
        CU_ASSERT(classad_expr_eval(e, procs[2], NULL, CA_MODE_OLD, &v) == 0 && v.type == CA_AD);
        classad_expr_free(e);
        classad_free(procs[2]);
        if (v.type == CA_AD) {
                CU_ASSERT(classad_has(v.u.ad, "Owner"));
                CU_ASSERT(classad_size(v.u.ad) == 11);
        }
        ca_value_clear(&v);
}

/* ---- memory ---- */

/* classad_shrink leaves what the ad shows as it was, and later writes work. */
static void test_shrink(void) {
        ClassAd *cluster = parse_ad(cluster_text), *proc = NULL;

        CU_ASSERT_FATAL(classad_new(&proc) == 0);
        for (int i = 0; i < 12; i++) {
                char name[16];
                snprintf(name, sizeof(name), "A%d", i);
                CU_ASSERT(classad_set_int(proc, name, i) == 0);
        }
        CU_ASSERT(classad_set_string(proc, "S", "a string long enough to take some room in the arena") == 0);
        CU_ASSERT(classad_set_expr_text(proc, "E", "[ x = A3 + 1; y = { A1, A2 } ]", CA_MODE_OLD, NULL) == 0);
        CU_ASSERT(classad_set_string(proc, "S", "replaced") == 0);
        CU_ASSERT(classad_delete(proc, "A5") == 0);
        CU_ASSERT_FATAL(classad_chain(proc, cluster) == 0);
        char *before = classad_unparse(proc);
        classad_shrink(proc);
        classad_shrink(proc); /* already tight */
        classad_shrink(cluster);
        classad_shrink(NULL);
        check_text(classad_unparse(proc), "after shrinking", before);
        free(before);
        check_attr(proc, "E", CA_MODE_OLD, "[ x = A3 + 1; y = { A1,A2 } ]");
        ClassAdExpr *e = NULL;
        CaValue v = ca_undefined();
        CU_ASSERT_FATAL(classad_expr_parse("E.x + E.y[1] + Doubled", 22, CA_MODE_OLD, &e, NULL) == 0);
        CU_ASSERT(classad_expr_eval(e, proc, NULL, CA_MODE_OLD, &v) == 0 && v.type == CA_INT && v.u.i == 4 + 2 + 2048);
        classad_expr_free(e);
        CU_ASSERT(classad_set_string(proc, "T", "after") == 0);
        CU_ASSERT(classad_set_int(proc, "A0", 100) == 0);
        check_attr(proc, "T", CA_MODE_OLD, "\"after\"");
        check_attr(proc, "A0", CA_MODE_OLD, "100");
        CU_ASSERT(classad_size_own(proc) == 14);
        /* an ad emptied, then shrunk, takes attributes again */
        ClassAd *empty = parse_ad("[ a = 1 ]");
        CU_ASSERT(classad_delete(empty, "a") == 0);
        classad_shrink(empty);
        CU_ASSERT(classad_size(empty) == 0);
        CU_ASSERT(classad_set_int(empty, "b", 2) == 0);
        check_attr(empty, "b", CA_MODE_OLD, "2");
        classad_free(empty);
        classad_free(proc);
        classad_free(cluster);
}

static CU_TestInfo tests[] = {
        { "lookup", test_lookup },
        { "override", test_override },
        { "my_scope", test_my_scope },
        { "same_as_flat", test_same_as_flat },
        { "scope_names", test_scope_names },
        { "match", test_match },
        { "flattened", test_flattened },
        { "refs", test_refs },
        { "may_hold", test_may_hold },
        { "delete", test_delete },
        { "set_never_parent", test_set_never_parent },
        { "chain_replace", test_chain_replace },
        { "refcount", test_refcount },
        { "shrink", test_shrink },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "chain", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

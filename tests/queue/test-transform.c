/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-transform.c — job transforms (queue/transform.h): the manual's
 * examples, each statement, REQUIREMENTS, macros, the order of several
 * transforms, the old ClassAd form, load errors with their file, line and
 * line inside the value, what a hostile job ad cannot make of them (huge
 * attributes, text that looks like macros or expression code, names
 * that point at Owner), regex bombs refused at load, the limits; and the
 * queue's submit path (jobcmd_submit): transforms before the identity
 * checks and SUBMIT_REQUIREMENT, a failure refusing the submit.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "common/proto.h"
#include "queue/jobcmd.h"
#include "queue/transform.h"
#include "queue-test.h"
#include "test-util.h"

/* ---- helpers ---- */

/* Transforms from a configuration text (JOB_TRANSFORM_NAMES ...): r, and err. */
static int load(const char *conf, QueueXforms **ret, ConfigError *err) {
        Config *cfg = NULL;
        int r;

        *err = (ConfigError){ 0 };
        if (config_new(&cfg) < 0)
                return -ENOMEM;
        r = config_load_string(cfg, conf, "xf.conf", err);
        if (r >= 0)
                r = queue_xforms_from_config(cfg, ret, err);
        config_free(cfg);
        return r;
}

static QueueXforms *load_ok(const char *conf) {
        QueueXforms *xs = NULL;
        ConfigError err;
        int r = load(conf, &xs, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "load: %d %s:%d: %s\n%s", r, err.file, err.line, err.msg, conf);
        return xs;
}

static ClassAd *ad_of(const char *text) {
        ClassAd *ad = NULL;
        CaError e = { 0 };
        int r = classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &e);
        GLEAN_TEST_CHECK_FATAL(r == 0, "ad '%s': %s", text, e.msg);
        return ad;
}

/* The text of attribute name ("(absent)"), a static buffer. */
static const char *attr(const ClassAd *ad, const char *name) {
        static char buf[4][2048];
        static int k;
        char *b = buf[k++ % 4], *t = classad_unparse_attr(ad, name);
        snprintf(b, 2048, "%s", t ? t : "(absent)");
        free(t);
        return b;
}

/* conf's transforms on the job adtext: the job after them, and why. */
static ClassAd *xform(const char *conf, const char *adtext, int *ret_r, char *why, size_t whylen) {
        QueueXforms *xs = load_ok(conf);
        ClassAd *ad = ad_of(adtext);
        why[0] = '\0';
        *ret_r = queue_xforms_apply(xs, ad, NULL, why, whylen);
        queue_xforms_free(xs);
        return ad;
}

/* One transform T (its statements) on adtext: applied, the ad back. */
static ClassAd *xf_ok(const char *stmts, const char *adtext) {
        char conf[8192], why[512];
        int r;
        snprintf(conf, sizeof conf, "JOB_TRANSFORM_NAMES = T\nJOB_TRANSFORM_T @=end\n%s\n@end\n", stmts);
        ClassAd *ad = xform(conf, adtext, &r, why, sizeof why);
        GLEAN_TEST_CHECK(r == 0, "apply: %d %s\n%s", r, why, stmts);
        return ad;
}

/* The same, expected to fail: the reason must hold want. */
static void xf_fails(const char *stmts, const char *adtext, const char *want) {
        char conf[8192], why[512];
        int r;
        snprintf(conf, sizeof conf, "JOB_TRANSFORM_NAMES = T\nJOB_TRANSFORM_T @=end\n%s\n@end\n", stmts);
        ClassAd *ad = xform(conf, adtext, &r, why, sizeof why);
        GLEAN_TEST_CHECK(r < 0 && strstr(why, want), "want failure '%s', got %d '%s'\n%s", want, r, why, stmts);
        classad_free(ad);
}

#define CHECK_ATTR(ad, name, want)                                                                              \
        do {                                                                                                    \
                const char *got_ = attr(ad, name);                                                              \
                GLEAN_TEST_CHECK(strcmp(got_, want) == 0, "%s = %s, want %s", name, got_, want);                \
        } while (0)

/* ---- the manual's examples ---- */

static void test_manual_examples(void) {
        static const char conf[] =
                "JOB_TRANSFORM_NAMES = AssignGroup, SL6ToDocker\n"
                "JOB_TRANSFORM_AssignGroup @=end\n"
                "   # map Owner to group using the existing accounting group attribute as requested group\n"
                "   EVALSET AcctGroup = ifThenElse(AcctGroup =?= undefined, \"group_default\", AcctGroup)\n"
                "   EVALSET AccountingGroup = join(\".\",AcctGroup,Owner)\n"
                "@end\n"
                "JOB_TRANSFORM_SL6ToDocker @=end\n"
                "   # match only vanilla jobs that have WantSL6 and do not already have a DockerImage\n"
                "   REQUIREMENTS JobUniverse==5 && WantSL6 && DockerImage =?= undefined\n"
                "   SET  WantDocker = true\n"
                "   SET  DockerImage = \"SL6\"\n"
                "   SET  Requirements = TARGET.HasDocker && $(MY.Requirements)\n"
                "@end\n";
        char why[512];
        int r;
        ClassAd *ad = xform(conf, "[ Owner = \"alice\"; JobUniverse = 5; WantSL6 = true; Requirements = "
                                  "TARGET.Memory > 10 || TARGET.Big ]",
                            &r, why, sizeof why);
        CU_ASSERT_EQUAL(r, 0);
        CHECK_ATTR(ad, "AcctGroup", "\"group_default\"");
        CHECK_ATTR(ad, "AccountingGroup", "\"group_default.alice\"");
        CHECK_ATTR(ad, "WantDocker", "true");
        CHECK_ATTR(ad, "DockerImage", "\"SL6\"");
        /* The job's Requirements stays one operand. */
        CHECK_ATTR(ad, "Requirements", "TARGET.HasDocker && (TARGET.Memory > 10 || TARGET.Big)");
        classad_free(ad);
        /* Not vanilla: SL6ToDocker does not apply; the user's group is kept. */
        ad = xform(conf, "[ Owner = \"bob\"; JobUniverse = 7; WantSL6 = true; AcctGroup = \"group_x\"; "
                         "Requirements = true ]",
                   &r, why, sizeof why);
        CU_ASSERT_EQUAL(r, 0);
        CHECK_ATTR(ad, "AccountingGroup", "\"group_x.bob\"");
        CHECK_ATTR(ad, "WantDocker", "(absent)");
        CHECK_ATTR(ad, "Requirements", "true");
        classad_free(ad);

        /* userMap() is not a function glean knows: refused at load, not at each submit. */
        QueueXforms *xs = NULL;
        ConfigError err;
        r = load("JOB_TRANSFORM_NAMES = G\nJOB_TRANSFORM_G @=end\n"
                 "EVALSET AcctGroup = userMap(\"Groups\",Owner,AcctGroup)\n@end\n",
                 &xs, &err);
        if (r == 0) {
                /* If the library takes unknown functions as ERROR at run time, the job fails instead. */
                ClassAd *job = ad_of("[ Owner = \"alice\" ]");
                r = queue_xforms_apply(xs, job, NULL, why, sizeof why);
                classad_free(job);
                queue_xforms_free(xs);
                GLEAN_TEST_CHECK(r == 0, "userMap at run time: %d %s", r, why);
        } else
                GLEAN_TEST_CHECK(strstr(err.msg, "line 1 of its value") && err.line == 2, "%s:%d: %s", err.file,
                                 err.line, err.msg);

        /* The manual's regex copy. */
        ad = xf_ok("COPY /Resource(.+)/ OriginalResource\\1",
                   "[ ResourceCpus = 2; ResourceMemory = RequestMemory * 2; Other = 1 ]");
        CHECK_ATTR(ad, "OriginalResourceCpus", "2");
        CHECK_ATTR(ad, "OriginalResourceMemory", "RequestMemory * 2");
        CHECK_ATTR(ad, "ResourceCpus", "2");
        CHECK_ATTR(ad, "OriginalOther", "(absent)");
        classad_free(ad);
}

/* The manual's transform blocks as shipped in the fixtures (tests/config/htcondor/manual). */
static void test_manual_fixtures(void) {
        static const struct {
                const char *file, *job, *attr, *want;
        } cases[] = {
                { "tests/config/htcondor/manual/ap-policy-configuration-01.conf",
                  "[ Owner = \"alice\"; JobUniverse = 5; WantSL6 = true; Requirements = TARGET.Memory > 1 ]",
                  "Requirements", "TARGET.HasDocker && (TARGET.Memory > 1)" },
                { "tests/config/htcondor/manual/file-and-cred-transfer-11.conf",
                  "[ Owner = \"alice\"; JobUniverse = 5; OAuthServicesNeeded = \"box\" ]", "OAuthServicesNeeded",
                  "\"scitokens box\"" },
                { "tests/config/htcondor/manual/file-and-cred-transfer-11.conf", "[ Owner = \"alice\"; JobUniverse = 7 ]",
                  "OAuthServicesNeeded", "(absent)" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                Config *cfg = NULL;
                ConfigError err = { 0 };
                QueueXforms *xs = NULL;
                char why[512] = "";
                CU_ASSERT_FATAL(config_new(&cfg) == 0);
                int r = config_load_file(cfg, cases[i].file, &err);
                if (r >= 0)
                        r = queue_xforms_from_config(cfg, &xs, &err);
                config_free(cfg);
                GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %s:%d: %s", cases[i].file, err.file, err.line, err.msg);
                ClassAd *ad = ad_of(cases[i].job);
                r = queue_xforms_apply(xs, ad, NULL, why, sizeof why);
                GLEAN_TEST_CHECK(r == 0, "%s: %s", cases[i].file, why);
                CHECK_ATTR(ad, cases[i].attr, cases[i].want);
                classad_free(ad);
                queue_xforms_free(xs);
        }
}

/* ---- each statement ---- */

static void test_statements(void) {
        ClassAd *ad;

        ad = xf_ok("SET A 1 + 2\nSET B = \"x\"\nset C, D * 2", "[ D = 4 ]");
        CHECK_ATTR(ad, "A", "1 + 2");
        CHECK_ATTR(ad, "B", "\"x\"");
        CHECK_ATTR(ad, "C", "D * 2");
        classad_free(ad);

        ad = xf_ok("DEFAULT A 10\nDEFAULT B 20\nDEFAULT C 30", "[ A = 1; B = undefined ]");
        CHECK_ATTR(ad, "A", "1");
        CHECK_ATTR(ad, "B", "20");
        CHECK_ATTR(ad, "C", "30");
        classad_free(ad);

        ad = xf_ok("EVALSET A = D * 2\nEVALSET L = { D, D + 1 }\nEVALSET S = strcat(\"a\", D)", "[ D = 4 ]");
        CHECK_ATTR(ad, "A", "8");
        CHECK_ATTR(ad, "L", "{ D,D + 1 }"); /* a list value's expressions, as HTCondor copies them */
        CHECK_ATTR(ad, "S", "\"a4\"");
        classad_free(ad);

        ad = xf_ok("EVALMACRO n = D * 3\nSET A = $(n) + 1\nSET B = \"n=$(n)\"", "[ D = 4 ]");
        CHECK_ATTR(ad, "A", "(12) + 1");
        CHECK_ATTR(ad, "B", "\"n=12\"");
        classad_free(ad);

        ad = xf_ok("COPY D E\nRENAME F G\nCOPY Missing H\nDELETE K\nDELETE Missing", "[ D = 4; F = 5; K = 6 ]");
        CHECK_ATTR(ad, "E", "4");
        CHECK_ATTR(ad, "D", "4");
        CHECK_ATTR(ad, "G", "5");
        CHECK_ATTR(ad, "F", "(absent)");
        CHECK_ATTR(ad, "H", "(absent)");
        CHECK_ATTR(ad, "K", "(absent)");
        classad_free(ad);

        ad = xf_ok("RENAME /^x_(.*)$/ y_\\1\nDELETE /^tmp/", "[ x_a = 1; x_b = 2; tmp1 = 3; TMP2 = 4; keep = 5 ]");
        CHECK_ATTR(ad, "y_a", "1");
        CHECK_ATTR(ad, "y_b", "2");
        CHECK_ATTR(ad, "x_a", "(absent)");
        CHECK_ATTR(ad, "tmp1", "(absent)");
        CHECK_ATTR(ad, "TMP2", "(absent)"); /* caseless, as HTCondor's */
        CHECK_ATTR(ad, "keep", "5");
        classad_free(ad);

        /* Macros: defaults, the latest definition, self reference, $(DOLLAR), $INT, $STRING. */
        ad = xf_ok("a = 1\nb = $(a)+$(a)\nSET A $(b)\na = 2\nSET B $(b)\nc = x\nc = $(c)y\nSET C \"$(c)\"\n"
                   "SET Dflt \"$(nothing:none) $(MY.Missing:dflt) $(DOLLAR)\"\nSET E $INT(MY.D) * 2\n"
                   "SET F \"$STRING(MY.S)\"\nSET G \"$(MY.S)\"\nSET H \"$(MY.D)\"",
                   "[ D = 3 + 4; S = \"str\" ]");
        CHECK_ATTR(ad, "A", "1 + 1");
        CHECK_ATTR(ad, "B", "2 + 2");
        CHECK_ATTR(ad, "C", "\"xy\"");
        CHECK_ATTR(ad, "Dflt", "\"none dflt $\"");
        CHECK_ATTR(ad, "E", "(7) * 2");
        CHECK_ATTR(ad, "F", "\"str\"");
        CHECK_ATTR(ad, "G", "\"str\"");
        CHECK_ATTR(ad, "H", "\"3 + 4\""); /* an expression's text, not its value */
        classad_free(ad);

        /* if / elif / else, defined. */
        static const char ifs[] = "if defined MY.A\n  SET R 1\nelif $(flag:false)\n  SET R 2\nelse\n  SET R 3\nendif\n"
                                  "if ! defined MY.A\n  if $(MY.N)\n    SET S 1\n  endif\nendif";
        ad = xf_ok(ifs, "[ A = 1 ]");
        CHECK_ATTR(ad, "R", "1");
        CHECK_ATTR(ad, "S", "(absent)");
        classad_free(ad);
        ad = xf_ok(ifs, "[ N = 3 ]");
        CHECK_ATTR(ad, "R", "3");
        CHECK_ATTR(ad, "S", "1");
        classad_free(ad);
        char stmts[600];
        snprintf(stmts, sizeof stmts, "flag = yes\n%s", ifs);
        ad = xf_ok(stmts, "[ N = 0 ]");
        CHECK_ATTR(ad, "R", "2");
        CHECK_ATTR(ad, "S", "(absent)");
        classad_free(ad);
        xf_fails("if $(MY.N)\nSET S 1\nendif", "[ N = \"maybe\" ]", "line 1 (if $(MY.N)): if 'maybe'");

        /* NAME, UNIVERSE: nothing; TRANSFORM: the end. */
        ad = xf_ok("NAME Other\nUNIVERSE vanilla\nSET A 1\nTRANSFORM\nSET B 2", "[ ]");
        CHECK_ATTR(ad, "A", "1");
        CHECK_ATTR(ad, "B", "(absent)");
        classad_free(ad);

        /* A chained job: deleting the parent's attribute hides it. */
        {
                QueueXforms *xs = load_ok("JOB_TRANSFORM_NAMES = T\nJOB_TRANSFORM_T = DELETE X\n");
                ClassAd *parent = ad_of("[ X = 1; Y = 2 ]"), *child = ad_of("[ Z = 3 ]");
                char why[256];
                CU_ASSERT_EQUAL_FATAL(classad_chain(child, parent), 0);
                CU_ASSERT_EQUAL(queue_xforms_apply(xs, child, NULL, why, sizeof why), 0);
                CHECK_ATTR(child, "X", "undefined");
                CHECK_ATTR(parent, "X", "1");
                classad_free(child);
                classad_free(parent);
                queue_xforms_free(xs);
        }
}

/* ---- REQUIREMENTS and the order of transforms ---- */

static void test_requirements_order(void) {
        static const char conf[] = "JOB_TRANSFORM_NAMES = One Two, Three\n"
                                   "JOB_TRANSFORM_One @=end\nREQUIREMENTS RequestCpus > 1\nSET Big = true\n"
                                   "SET Steps = \"one\"\n@end\n"
                                   "JOB_TRANSFORM_Two @=end\nSET Steps = strcat(\"$(MY.Steps)\", \",two\")\n@end\n"
                                   "JOB_TRANSFORM_Three @=end\nREQUIREMENTS Big =?= true\nEVALSET Steps = "
                                   "strcat(Steps, \",three\")\n@end\n";
        char why[512];
        int r;
        size_t applied = 0;
        QueueXforms *xs = load_ok(conf);
        ClassAd *ad = ad_of("[ RequestCpus = 4 ]");

        CU_ASSERT_EQUAL(queue_xforms_count(xs), 3);
        CU_ASSERT_EQUAL(queue_xforms_apply(xs, ad, &applied, why, sizeof why), 0);
        CU_ASSERT_EQUAL(applied, 3);
        CHECK_ATTR(ad, "Steps", "\"one,two,three\"");
        classad_free(ad);
        ad = ad_of("[ RequestCpus = 1 ]");
        CU_ASSERT_EQUAL(queue_xforms_apply(xs, ad, &applied, why, sizeof why), 0);
        CU_ASSERT_EQUAL(applied, 1);
        CHECK_ATTR(ad, "Big", "(absent)");
        CHECK_ATTR(ad, "Steps", "strcat(\"\",\",two\")");
        classad_free(ad);
        /* REQUIREMENTS that is UNDEFINED or not a boolean: not applied. */
        ad = ad_of("[ ]");
        CU_ASSERT_EQUAL(queue_xforms_apply(xs, ad, &applied, why, sizeof why), 0);
        CU_ASSERT_EQUAL(applied, 1);
        classad_free(ad);
        queue_xforms_free(xs);

        /* Empty and unset lists. */
        xs = load_ok("X = 1\n");
        CU_ASSERT_EQUAL(queue_xforms_count(xs), 0);
        queue_xforms_free(xs);
        xs = load_ok("JOB_TRANSFORM_NAMES = E\nJOB_TRANSFORM_E =\n");
        CU_ASSERT_EQUAL(queue_xforms_count(xs), 0);
        queue_xforms_free(xs);
        (void) r;
}

/* ---- the old ClassAd form ---- */

static void test_classad_form(void) {
        static const char conf[] =
                "JOB_TRANSFORM_NAMES = Old\n"
                "PREFIX = pre\n"
                "JOB_TRANSFORM_Old = [ Name = \"old\"; Requirements = target.JobUniverse == 5; "
                "set_Flag = true; eval_set_Twice = RequestCpus * 2; copy_Cmd = \"OrigCmd\"; delete_Junk = true; "
                "set_Tag = \"$(PREFIX)-x\"; Site = \"here\" ]\n";
        char why[512];
        int r;
        ClassAd *ad = xform(conf, "[ JobUniverse = 5; RequestCpus = 3; Cmd = \"/bin/true\"; Junk = 1 ]", &r, why,
                            sizeof why);
        GLEAN_TEST_CHECK(r == 0, "%s", why);
        CHECK_ATTR(ad, "Flag", "true");
        CHECK_ATTR(ad, "Twice", "6");
        CHECK_ATTR(ad, "OrigCmd", "\"/bin/true\"");
        CHECK_ATTR(ad, "Junk", "(absent)");
        CHECK_ATTR(ad, "Tag", "\"pre-x\"");
        classad_free(ad);
        ad = xform(conf, "[ JobUniverse = 7; Junk = 1 ]", &r, why, sizeof why);
        CU_ASSERT_EQUAL(r, 0);
        CHECK_ATTR(ad, "Flag", "(absent)");
        CHECK_ATTR(ad, "Junk", "1");
        classad_free(ad);
}

/* ---- load errors: file, line, line in the value ---- */

static void test_load_errors(void) {
        static const struct {
                const char *conf;
                int line;
                const char *want;
        } cases[] = {
                { "JOB_TRANSFORM_NAMES = A\n", 1, "names A, but JOB_TRANSFORM_A is not defined" },
                { "JOB_TRANSFORM_NAMES = A a\nJOB_TRANSFORM_A = SET X 1\n", 1, "lists a twice" },
                { "JOB_TRANSFORM_NAMES = A\n\nJOB_TRANSFORM_A @=end\nSET X 1\nBOGUS X 1\n@end\n", 3,
                  "line 2 of its value ('BOGUS X 1'): 'BOGUS X 1' is neither a transform statement" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X\n@end\n", 2, "line 1 of its value ('SET X'): SET needs 2 arguments" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET 1X 2\n@end\n", 2, "'1X' is not an attribute name" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X 1 +\n@end\n", 2, "'1 +' is not an expression" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X 1\nSET Owner \"mallory\"\n@end\n", 2,
                  "line 2 of its value ('SET Owner \"mallory\"'): SET Owner: a transform may not change Owner" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nEVALSET user = \"x\"\n@end\n", 2, "may not change user" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nCOPY AcctGroup Owner\n@end\n", 2, "may not change Owner" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nRENAME Owner Foo\n@end\n", 2, "may not change Owner" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nDELETE User\n@end\n", 2, "may not change User" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nREQUIREMENTS x ==\n@end\n", 2, "REQUIREMENTS 'x ==' is not an expression" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nREQUIREMENTS true\nREQUIREMENTS false\n@end\n", 2, "line 2 of its value ('REQUIREMENTS false'): a second REQUIREMENTS" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nREQUIREMENTS $(X)\n@end\n", 2, "not macro-expanded" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nRequirements = x\n@end\n", 2, "would define a macro" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X 1\nif true\nSET Y 1\n@end\n", 2, "line 2 of its value ('if'): if without endif" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nelse\n@end\n", 2, "else without if" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nif true\nelse\nelif true\nendif\n@end\n", 2, "line 3 of its value ('elif true'): elif after else" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nif version > 9.0\nendif\n@end\n", 2, "'version' conditions" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nTRANSFORM 3\n@end\n", 2, "TRANSFORM 3: iterating a transform" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nTRANSFORM Item FROM (a b)\n@end\n", 2, "iterating a transform" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X \"$ENV(HOME)\"\n@end\n", 2, "$ENV() is not available" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X \"$F(MY.Cmd)\"\n@end\n", 2, "$F() is not a macro function" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X \"$INT(MY.Cmd,%d)\"\n@end\n", 2, "a format argument is not supported" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X \"$(MY.Cmd\"\n@end\n", 2, "has no closing ')'" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nSET X \"$(a b)\"\n@end\n", 2, "not a macro name" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nDELETE /(a/\n@end\n", 2, "does not compile" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nDELETE /a/z\n@end\n", 2, "not a regex option" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nDELETE X Y\n@end\n", 2, "unexpected 'Y'" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\nCOPY X not-a-name\n@end\n", 2, "'not-a-name' is not an attribute name" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A = [ Requirements = ; ]\n", 2, "the ClassAd form does not parse" },
                { "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A = [ copy_X = 3 ]\n", 2, "copy_X is not a string" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                QueueXforms *xs = NULL;
                ConfigError err;
                int r = load(cases[i].conf, &xs, &err);
                GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, "xf.conf") == 0 && err.line == cases[i].line &&
                                         strstr(err.msg, cases[i].want),
                                 "case %zu: want xf.conf:%d: ...%s..., got %d %s:%d: %s", i, cases[i].line,
                                 cases[i].want, r, err.file, err.line, err.msg);
                queue_xforms_free(xs);
        }
}

/* ---- hostile jobs ---- */

static void test_hostile_jobs(void) {
        ClassAd *ad;
        char *big = NULL;

        /* Text that looks like a macro is the job's, not expanded again. */
        ad = xf_ok("secret = hidden\nSET A \"$(MY.Cmd)\"\nSET B \"$(secret)\"", "[ Cmd = \"$(secret) $(MY.Cmd)\"; secret = 1 ]");
        CHECK_ATTR(ad, "A", "\"$(secret) $(MY.Cmd)\"");
        CHECK_ATTR(ad, "B", "\"hidden\""); /* $(secret) is the transform's, never the job's attribute */
        classad_free(ad);

        /* Quotes in a string stay inside the string. */
        ad = xf_ok("SET Requirements = TARGET.Pool == \"$(MY.WantPool)\"",
                   "[ WantPool = \"a\\\" || true || \\\"b\" ]");
        CHECK_ATTR(ad, "Requirements", "TARGET.Pool == \"a\\\" || true || \\\"b\"");
        classad_free(ad);
        /* Outside quotes: one operand, or refused. */
        ad = xf_ok("SET Requirements = TARGET.HasDocker && $(MY.Requirements)", "[ Requirements = x || true ]");
        CHECK_ATTR(ad, "Requirements", "TARGET.HasDocker && (x || true)");
        classad_free(ad);
        xf_fails("SET Requirements = TARGET.HasDocker && $(MY.Want)", "[ Want = \"a) || (true\" ]",
                 "is not an expression of its own");
        xf_fails("EVALMACRO m = Want\nSET X = 1 + $(m)", "[ Want = \"1 || true ||\" ]", "is not an expression of its own");

        /* A new name from the job's data may not be Owner. */
        xf_fails("COPY Want $(MY.NewName)", "[ Want = \"mallory\"; NewName = \"Owner\" ]", "a transform may not change Owner");
        xf_fails("RENAME /^X(.*)$/ \\1", "[ XOwner = \"mallory\" ]", "a transform may not change Owner");
        xf_fails("COPY Want $(MY.NewName)", "[ Want = 1; NewName = \"a b\" ]", "'a b' is not an attribute name");
        /* Regex DELETE and RENAME pass over Owner and User. */
        ad = xf_ok("DELETE /.*/", "[ Owner = \"alice\"; User = \"alice@x\"; A = 1 ]");
        CHECK_ATTR(ad, "Owner", "\"alice\"");
        CHECK_ATTR(ad, "User", "\"alice@x\"");
        CHECK_ATTR(ad, "A", "(absent)");
        classad_free(ad);

        /* A huge attribute: expansion bounded. */
        big = malloc(400 * 1024);
        CU_ASSERT_FATAL(big != NULL);
        memset(big, 'x', 400 * 1024 - 1);
        big[400 * 1024 - 1] = '\0';
        {
                char *text = NULL;
                CU_ASSERT_FATAL(asprintf(&text, "[ Big = \"%s\" ]", big) > 0);
                xf_fails("SET Copy = \"$(MY.Big)\"", text, "macro expansion makes more than");
                /* Writes bounded: five copies of 400 KiB are more than 1 MiB. */
                xf_fails("COPY Big B1\nCOPY Big B2\nCOPY Big B3", text, "wrote more than");
                free(text);
        }
        free(big);

        /* A macro that refers to itself through another: bounded. */
        xf_fails("a = $(b)\nb = $(a)\nSET X $(a)", "[ ]", "macros nested more than");
        /* An evaluation past the budget fails the job, never hangs it. */
        {
                char deep[4096], *p = deep;
                p += sprintf(p, "[ A0 = 1");
                for (int i = 1; i <= 40; i++)
                        p += sprintf(p, "; A%d = A%d + A%d", i, i - 1, i - 1);
                sprintf(p, " ]");
                xf_fails("EVALSET X = A40", deep, "evaluation budget");
        }
}

/* ---- regexes refused at load ---- */

static void test_regex_bombs(void) {
        static const char *const bombs[] = { "(a+)+$", "(a*)*b", "(x|xy*)+z", "((ab)+)*", "(a{2,})+", "(.*a){3,}" };
        static const char *const fine[] = { "^Resource(.+)$", "(ab)+", "a+b+", "[(+]+", "x{2,5}", "(a|b){1,3}" };
        char conf[2600];
        for (size_t i = 0; i < sizeof bombs / sizeof *bombs; i++) {
                QueueXforms *xs = NULL;
                ConfigError err;
                snprintf(conf, sizeof conf, "JOB_TRANSFORM_NAMES = R\nJOB_TRANSFORM_R = DELETE /%s/\n", bombs[i]);
                int r = load(conf, &xs, &err);
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, "repeats without bound"), "/%s/: %d %s", bombs[i],
                                 r, err.msg);
                queue_xforms_free(xs);
        }
        for (size_t i = 0; i < sizeof fine / sizeof *fine; i++) {
                snprintf(conf, sizeof conf, "JOB_TRANSFORM_NAMES = R\nJOB_TRANSFORM_R = DELETE /%s/\n", fine[i]);
                queue_xforms_free(load_ok(conf));
        }
        /* Too long. */
        {
                QueueXforms *xs = NULL;
                ConfigError err;
                char pat[1100];
                memset(pat, 'a', sizeof pat - 1);
                pat[sizeof pat - 1] = '\0';
                snprintf(conf, sizeof conf, "JOB_TRANSFORM_NAMES = R\nJOB_TRANSFORM_R = DELETE /%s/\n", pat);
                CU_ASSERT_EQUAL(load(conf, &xs, &err), -EINVAL);
                CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "a regex of more than 1024 bytes"));
        }
        /* Statements bounded. */
        {
                size_t len = 5000 * 12 + 100;
                char *c = malloc(len), *p = c;
                QueueXforms *xs = NULL;
                ConfigError err;
                p += sprintf(p, "JOB_TRANSFORM_NAMES = R\nJOB_TRANSFORM_R @=end\n");
                for (int i = 0; i < 5000; i++)
                        p += sprintf(p, "SET A%d 1\n", i);
                sprintf(p, "@end\n");
                CU_ASSERT_EQUAL(load(c, &xs, &err), -EINVAL);
                GLEAN_TEST_CHECK(strstr(err.msg, "line 4097 of its value") && strstr(err.msg, "more than 4096"),
                                 "%s", err.msg);
                free(c);
        }
}

/* ---- through the queue's submit path ---- */

typedef struct Got {
        char reason[1024];
        bool ok;
        int n;
} Got;

static int got_send(void *userdata, const char *payload, size_t len) {
        Got *g = userdata;
        ClassAd *msg = NULL;
        GleanCommand cmd;
        if (glean_msg_parse(payload, len, &msg, &cmd, NULL, 0) < 0)
                return -EBADMSG;
        g->n++;
        g->ok = false;
        (void) classad_eval_bool(msg, "Ok", CA_MODE_OLD, &g->ok);
        snprintf(g->reason, sizeof g->reason, "%s", qt_str(msg, "Reason"));
        classad_free(msg);
        return 0;
}

static int submit_text(JobQueue *q, const JobCmdPolicy *p, const char *text, Got *g) {
        JobCmdSink sink = { got_send, NULL, g, p };
        JobCmdSubmit *pending = NULL;
        ClassAd *req = NULL;
        GleanCommand cmd;
        *g = (Got){ 0 };
        int r = glean_msg_parse(text, strlen(text), &req, &cmd, NULL, 0);
        GLEAN_TEST_CHECK_FATAL(r == 0, "request %s", text);
        r = jobcmd_submit(&pending, q, qt_user("alice"), req, QT_T0, &sink);
        classad_free(req);
        jobcmd_submit_free(pending);
        return r;
}

static void test_submit_path(void) {
        static const char conf[] =
                "JOB_TRANSFORM_NAMES = Group, Mem, Tag\n"
                "JOB_TRANSFORM_Group @=end\n"
                "REQUIREMENTS WantGroup isnt undefined\n"
                "EVALSET AccountingGroup = strcat(WantGroup, \".\", Owner)\n"
                "@end\n"
                "JOB_TRANSFORM_Mem @=end\n"
                "DEFAULT RequestMemory 2048\n"
                "@end\n"
                "JOB_TRANSFORM_Tag @=end\n"
                "REQUIREMENTS ProcId == 1\n"
                "SET Tagged = \"$(MY.Owner) $(MY.User)\"\n"
                "@end\n"
                "ACCOUNTING_GROUPS_ALLOWED = group_ok\n"
                "SUBMIT_REQUIREMENT_NAMES = Mem\n"
                "SUBMIT_REQUIREMENT_Mem = RequestMemory >= 1024\n"
                "SUBMIT_REQUIREMENT_Mem_REASON = \"too little memory\"\n";
        Config *cfg = NULL;
        ConfigError err = { 0 };
        JobCmdPolicy *p = NULL;
        QT t;
        Got g;

        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_string(cfg, conf, "xf.conf", &err) == 0);
        GLEAN_TEST_CHECK_FATAL(jobcmd_policy_from_config(cfg, &p, &err) == 0, "%s", err.msg);
        config_free(cfg);
        qt_open(&t, qt_new_db(), NULL);

        /* SUBMIT_REQUIREMENT sees the transformed job (the default memory). */
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true ]; "
                                    "Procs = { [ ProcId = 0 ], [ ProcId = 1 ], [ ProcId = 2; RequestMemory = 4096 ] } ]",
                                    &g),
                        1);
        GLEAN_TEST_CHECK(g.n == 1 && g.ok, "refused: %s", g.reason);
        CU_ASSERT_EQUAL_FATAL(queue_size(t.q), 3);
        Job *j0 = qt_job(t.q, 1, 0), *j1 = qt_job(t.q, 1, 1), *j2 = qt_job(t.q, 1, 2);
        CU_ASSERT_FATAL(j0 && j1 && j2);
        CHECK_ATTR(j0->ad, "RequestMemory", "2048");
        CHECK_ATTR(j2->ad, "RequestMemory", "4096");
        CHECK_ATTR(j0->ad, "Tagged", "(absent)");
        CHECK_ATTR(j1->ad, "Tagged", "\"alice alice@" QT_DOMAIN "\"");
        CHECK_ATTR(j0->ad, "Owner", "\"alice\"");

        /* A group the transform gives is checked as a user's. */
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                                    "WantGroup = \"group_bad\" ]; Procs = { [ ProcId = 0 ] } ]",
                                    &g),
                        0);
        GLEAN_TEST_CHECK(g.n == 1 && !g.ok && strstr(g.reason, "may not use the accounting group \"group_bad\""), "%s",
                         g.reason);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                                    "WantGroup = \"group_ok\" ]; Procs = { [ ProcId = 0 ], [ ProcId = 1 ] } ]",
                                    &g),
                        1);
        GLEAN_TEST_CHECK(g.n == 1 && g.ok, "%s", g.reason);
        Job *k = qt_job(t.q, 2, 1);
        CU_ASSERT_FATAL(k != NULL);
        CHECK_ATTR(k->ad, "AccountingGroup", "\"group_ok.alice\"");
        CU_ASSERT_STRING_EQUAL(k->submitter, "group_ok.alice@" QT_DOMAIN);

        /* What a transform gives an identity attribute must be a literal, as a user's. */
        {
                JobCmdPolicy *p2 = NULL;
                Got g2;
                CU_ASSERT_FATAL(config_new(&cfg) == 0);
                CU_ASSERT_FATAL(config_load_string(cfg,
                                                   "ACCOUNTING_GROUPS_ALLOWED = group_ok\n"
                                                   "JOB_TRANSFORM_NAMES = G\nJOB_TRANSFORM_G @=end\n"
                                                   "SET AccountingGroup = strcat(\"group_ok.\", Owner)\n@end\n",
                                                   "xf.conf", &err) == 0);
                CU_ASSERT_FATAL(jobcmd_policy_from_config(cfg, &p2, &err) == 0);
                config_free(cfg);
                CU_ASSERT_EQUAL(submit_text(t.q, p2,
                                            "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; "
                                            "Requirements = true; RequestMemory = 2048 ]; Procs = { [ ProcId = 0 ] } ]",
                                            &g2),
                                0);
                GLEAN_TEST_CHECK(!g2.ok && strstr(g2.reason, "AccountingGroup must be a literal string"), "%s",
                                 g2.reason);
                jobcmd_policy_free(p2);
        }

        /* A user's RequestMemory that the default leaves alone: SUBMIT_REQUIREMENT refuses. */
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                                    "RequestMemory = 1 ]; Procs = { [ ProcId = 0 ] } ]",
                                    &g),
                        0);
        GLEAN_TEST_CHECK(g.n == 1 && !g.ok && strstr(g.reason, "too little memory"), "%s", g.reason);
        CU_ASSERT_EQUAL(queue_size(t.q), 5);
        jobcmd_policy_free(p);

        /* A transform that fails on a job refuses the submit, naming it; nothing queued. */
        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_string(cfg,
                                           "JOB_TRANSFORM_NAMES = Bad\nJOB_TRANSFORM_Bad @=end\n"
                                           "SET Requirements = TARGET.X && $(MY.Want)\n@end\n",
                                           "xf.conf", &err) == 0);
        CU_ASSERT_FATAL(jobcmd_policy_from_config(cfg, &p, &err) == 0);
        config_free(cfg);
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true ]; "
                                    "Procs = { [ ProcId = 0; Want = true ], [ ProcId = 1; Want = \"a) || (b\" ] } ]",
                                    &g),
                        0);
        GLEAN_TEST_CHECK(g.n == 1 && !g.ok && strstr(g.reason, "proc 1: JOB_TRANSFORM_Bad line 1"), "%s", g.reason);
        CU_ASSERT_EQUAL(queue_size(t.q), 5);
        /* Procs without attributes of their own are the cluster's job. */
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                                    "Want = Foo ]; Procs = { [ ], [ ] } ]",
                                    &g),
                        1);
        GLEAN_TEST_CHECK(g.ok, "%s", g.reason);
        Job *c = qt_job(t.q, 3, 1); /* the refused submits took no id */
        CU_ASSERT_FATAL(c != NULL);
        CHECK_ATTR(c->ad, "Requirements", "TARGET.X && (Foo)");
        CU_ASSERT_EQUAL(queue_size(t.q), 7);
        jobcmd_policy_free(p);

        /* ProcId is the queue's number, also for procs without attributes of their own;
         * read through an evaluated attribute too. */
        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_string(cfg,
                                           "JOB_TRANSFORM_NAMES = First Eval\n"
                                           "JOB_TRANSFORM_First @=end\nREQUIREMENTS ProcId == 1\n"
                                           "SET Second = true\n@end\n"
                                           "JOB_TRANSFORM_Eval @=end\nEVALSET Slot = Which\n@end\n",
                                           "xf.conf", &err) == 0);
        CU_ASSERT_FATAL(jobcmd_policy_from_config(cfg, &p, &err) == 0);
        config_free(cfg);
        CU_ASSERT_EQUAL(submit_text(t.q, p,
                                    "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                                    "Which = ProcId * 10 ]; Procs = { [ ], [ ], [ ] } ]",
                                    &g),
                        1);
        GLEAN_TEST_CHECK(g.ok, "%s", g.reason);
        for (int64_t i = 0; i < 3; i++) {
                Job *j = qt_job(t.q, 4, i);
                char want[16];
                CU_ASSERT_FATAL(j != NULL);
                CHECK_ATTR(j->ad, "Second", i == 1 ? "true" : "(absent)");
                snprintf(want, sizeof want, "%d", (int) (10 * i));
                CHECK_ATTR(j->ad, "Slot", want);
                CU_ASSERT_EQUAL(qt_int(j->ad, "ProcId"), i);
        }
        jobcmd_policy_free(p);
        qt_close(&t);
}

/* A submission in many parts: the cluster transformed once, every part's procs over it. */
static void test_submit_parts(void) {
        Config *cfg = NULL;
        ConfigError err = { 0 };
        JobCmdPolicy *p = NULL;
        ClassAd **jobs = NULL, **msgs = NULL;
        size_t n = 0, n_msgs = 0;
        char *text = NULL;
        QT t;
        Got g = { 0 };
        JobCmdSink sink = { got_send, NULL, &g, NULL };
        JobCmdSubmit *pending = NULL;

        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_string(cfg,
                                           "JOB_TRANSFORM_NAMES = T\nJOB_TRANSFORM_T @=end\n"
                                           "SET Tag = \"job-$(MY.ProcId)\"\nEVALSET Site = \"here\"\n"
                                           "DELETE RequestDisk\n@end\n",
                                           "xf.conf", &err) == 0);
        GLEAN_TEST_CHECK_FATAL(jobcmd_policy_from_config(cfg, &p, &err) == 0, "%s", err.msg);
        config_free(cfg);
        sink.policy = p;
        CU_ASSERT_FATAL(asprintf(&text,
                                 "executable = /bin/echo\nuniverse = vanilla\narguments = %0600d $(Process)\n"
                                 "request_memory = 64\nqueue 3000\n",
                                 7) > 0);
        int r = config_submit_parse_string(text, "<test>", NULL,
                                           &(ConfigSubmitOptions){ .owner = "alice", .iwd = "/tmp" }, &jobs, &n, &err);
        free(text);
        GLEAN_TEST_CHECK_FATAL(r == 0 && n == 3000, "submit text: %d %s", r, err.msg);
        CU_ASSERT_TRUE(classad_has(jobs[0], "RequestDisk")); /* what DELETE takes away */
        CU_ASSERT_EQUAL_FATAL(jobcmd_submit_messages(jobs, n, 5, &msgs, &n_msgs), 0);
        CU_ASSERT(n_msgs >= 2);
        qt_open(&t, qt_new_db(), NULL);
        for (size_t i = 0; i < n_msgs; i++)
                CU_ASSERT_EQUAL(jobcmd_submit(&pending, t.q, qt_user("alice"), msgs[i], QT_T0, &sink),
                                i + 1 == n_msgs ? 1 : 0);
        GLEAN_TEST_CHECK(g.n == 1 && g.ok, "%s", g.reason);
        CU_ASSERT_EQUAL_FATAL(queue_size(t.q), 3000);
        for (int64_t i = 0; i < 3000; i += 1499) {
                Job *j = qt_job(t.q, 1, i);
                char want[32];
                CU_ASSERT_FATAL(j != NULL);
                snprintf(want, sizeof want, "\"job-%d\"", (int) i);
                CHECK_ATTR(j->ad, "Tag", want);
                CHECK_ATTR(j->ad, "Site", "\"here\"");
                CHECK_ATTR(j->ad, "RequestDisk", "(absent)");
                /* The proc's own attributes stay few: the cluster holds what they share. */
                GLEAN_TEST_CHECK(classad_size_own(j->ad) < 20, "job %d: %zu own attributes", (int) i,
                                 classad_size_own(j->ad));
        }
        glean_ad_list_free(msgs, n_msgs);
        config_submit_free(jobs, n);
        jobcmd_policy_free(p);
        qt_close(&t);
}

/* JOB_TRANSFORM_<Name> is kept and looked up as written; other knobs are not. */
static void test_config_verbatim(void) {
        Config *cfg = NULL;
        ConfigError err = { 0 };
        char *v = NULL;

        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_EQUAL(config_load_string(cfg,
                                           "JOB_TRANSFORM_NAMES = A\nJOB_TRANSFORM_A @=end\n"
                                           "SET X $INT(MY.RequestCpus) * 2\nSET Y \"$(MY.Owner) $(KNOWN)\"\n@end\n"
                                           "KNOWN = k\n",
                                           "xf.conf", &err),
                        0);
        CU_ASSERT_EQUAL(config_get(cfg, "JOB_TRANSFORM_A", &v, &err), 0);
        CU_ASSERT_STRING_EQUAL(v, "SET X $INT(MY.RequestCpus) * 2\nSET Y \"$(MY.Owner) $(KNOWN)\"");
        free(v);
        /* another knob's $INT() and $(...) are the configuration's */
        CU_ASSERT_EQUAL(config_load_string(cfg, "X = 3 + 4\nOTHER = $INT(X) $(KNOWN)\n", "xf2.conf", &err), 0);
        CU_ASSERT_EQUAL(config_get(cfg, "OTHER", &v, &err), 0);
        CU_ASSERT_STRING_EQUAL(v, "7 k");
        free(v);
        config_free(cfg);
}

static CU_TestInfo tests[] = {
        { "manual_examples", test_manual_examples },
        { "manual_fixtures", test_manual_fixtures },
        { "statements", test_statements },
        { "requirements_order", test_requirements_order },
        { "classad_form", test_classad_form },
        { "load_errors", test_load_errors },
        { "hostile_jobs", test_hostile_jobs },
        { "regex_bombs", test_regex_bombs },
        { "submit_path", test_submit_path },
        { "submit_parts", test_submit_parts },
        { "config_verbatim", test_config_verbatim },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "transform", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-groups.c — the accounting groups of GROUP_NAMES (seed 000, 3.4.8):
 * the tree, each group's knobs and their defaults, configuration errors
 * with file, line and reason, lookups by name and the quota group of a
 * submitter (longest dotted prefix, case-insensitive, dot-less names and
 * nice users in no group).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups-test.h"

static const AcctGroup *named(const AcctGroups *g, const char *name) {
        size_t i = 0;

        GLEAN_TEST_CHECK_FATAL(acct_groups_find(g, name, &i) == 0, "no group '%s'", name);
        return acct_groups_get(g, i);
}

/* ---- the tree and the knobs ---- */

static void test_tree(void) {
        AcctGroups *g = groups_test_groups("GROUP_NAMES = group_physics, group_chemistry group_physics.lab2,\\\n"
                                  "    group_physics.lab1, group_physics.lab1.sub\n");
        static const struct {
                const char *name, *parent;
                unsigned depth;
                const char *children;
        } want[] = {
                { "<none>", "<none>", 0, "group_physics group_chemistry" },
                { "group_physics", "<none>", 1, "group_physics.lab2 group_physics.lab1" },
                { "group_chemistry", "<none>", 1, "" },
                { "group_physics.lab2", "group_physics", 2, "" },
                { "group_physics.lab1", "group_physics", 2, "group_physics.lab1.sub" },
                { "group_physics.lab1.sub", "group_physics.lab1", 3, "" },
        };

        GLEAN_TEST_CHECK_FATAL(acct_groups_count(g) == 6, "%zu groups, want 6", acct_groups_count(g));
        for (size_t i = 0; i < 6; i++) {
                const AcctGroup *grp = acct_groups_get(g, i);
                char children[256] = "";
                size_t n = 0;

                GLEAN_TEST_CHECK(strcmp(grp->name, want[i].name) == 0, "group %zu is '%s', want '%s' (GROUP_NAMES order)",
                                 i, grp->name, want[i].name);
                GLEAN_TEST_CHECK(strcmp(acct_groups_get(g, grp->parent)->name, want[i].parent) == 0,
                                 "parent of %s: %s, want %s", grp->name, acct_groups_get(g, grp->parent)->name,
                                 want[i].parent);
                GLEAN_TEST_CHECK(grp->depth == want[i].depth, "depth of %s: %u, want %u", grp->name, grp->depth,
                                 want[i].depth);
                for (size_t j = 0; j < grp->n_children; j++)
                        n += (size_t) snprintf(children + n, sizeof children - n, "%s%s", j ? " " : "",
                                               acct_groups_get(g, grp->children[j])->name);
                GLEAN_TEST_CHECK(strcmp(children, want[i].children) == 0, "children of %s: '%s', want '%s'",
                                 grp->name, children, want[i].children);
        }
        GLEAN_TEST_CHECK(acct_groups_get(g, 6) == NULL, "a group past the end");
        acct_groups_free(g);
}

static void test_knobs(void) {
        AcctGroups *g = groups_test_groups("GROUP_NAMES = a, a.b, c, d\n"
                                  "GROUP_QUOTA_a = 10\n"
                                  "group_quota_A.B = 2.5\n" /* names of knobs are case-insensitive too */
                                  "GROUP_QUOTA_DYNAMIC_a.b = 0.5\n"
                                  "GROUP_QUOTA_DYNAMIC_c = $(HALF)\n"
                                  "HALF = 0.5\n"
                                  "GROUP_ACCEPT_SURPLUS = True\n"
                                  "GROUP_ACCEPT_SURPLUS_c = False\n"
                                  "GROUP_AUTOREGROUP_d = True\n"
                                  "GROUP_PRIO_FACTOR_a = 100\n");
        const AcctGroup *a = named(g, "a"), *ab = named(g, "a.b"), *c = named(g, "c"), *d = named(g, "d");
        const AcctGroup *root = acct_groups_get(g, 0);

        GLEAN_TEST_CHECK(a->has_static && a->static_quota == 10 && !a->has_dynamic, "a: static 10");
        GLEAN_TEST_CHECK(ab->has_static && ab->static_quota == 2.5 && ab->has_dynamic && ab->dynamic_quota == 0.5,
                         "a.b: both kinds read (the static one wins in the quotas)");
        GLEAN_TEST_CHECK(!c->has_static && c->has_dynamic && c->dynamic_quota == 0.5, "c: dynamic 0.5 by a macro");
        GLEAN_TEST_CHECK(!d->has_static && !d->has_dynamic, "d: no quota");
        GLEAN_TEST_CHECK(a->accept_surplus && ab->accept_surplus && !c->accept_surplus && d->accept_surplus,
                         "GROUP_ACCEPT_SURPLUS, GROUP_ACCEPT_SURPLUS_c over it");
        GLEAN_TEST_CHECK(!a->autoregroup && d->autoregroup, "GROUP_AUTOREGROUP_d");
        GLEAN_TEST_CHECK(root->autoregroup, "the root autoregroups when a group does (as HTCondor)");
        GLEAN_TEST_CHECK(root->accept_surplus && !root->has_static && !root->has_dynamic, "the root");
        GLEAN_TEST_CHECK(a->prio_factor == 100 && ab->prio_factor == 0, "GROUP_PRIO_FACTOR_a; 0 when unset");
        GLEAN_TEST_CHECK(!acct_groups_allow_oversubscription(g), "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION: False");
        acct_groups_free(g);

        g = groups_test_groups("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = true\nGROUP_AUTOREGROUP = TRUE\nGROUP_NAMES = x\n");
        GLEAN_TEST_CHECK(acct_groups_allow_oversubscription(g), "oversubscription set");
        GLEAN_TEST_CHECK(named(g, "x")->autoregroup && !named(g, "x")->accept_surplus,
                         "GROUP_AUTOREGROUP default; GROUP_ACCEPT_SURPLUS False by default");
        acct_groups_free(g);
}

static void test_no_groups(void) {
        static const char *const texts[] = { "", "GROUP_NAMES =\n", "GROUP_NAMES = , ,\n" };

        for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
                AcctGroups *g = groups_test_groups(texts[i]);
                size_t k = 99;

                GLEAN_TEST_CHECK(acct_groups_count(g) == 1, "'%s': %zu groups", texts[i], acct_groups_count(g));
                GLEAN_TEST_CHECK(strcmp(acct_groups_get(g, 0)->name, ACCT_NONE_GROUP) == 0 &&
                                         acct_groups_get(g, 0)->n_children == 0,
                                 "'%s': the root alone", texts[i]);
                GLEAN_TEST_CHECK(acct_groups_find(g, "<none>", &k) == 0 && k == 0, "find <none>");
                GLEAN_TEST_CHECK(acct_groups_of_submitter(g, "a.b@c") == 0, "of_submitter");
                acct_groups_free(g);
        }
        acct_groups_free(NULL);
        GLEAN_TEST_CHECK(acct_groups_count(NULL) == 0 && acct_groups_get(NULL, 0) == NULL &&
                                 !acct_groups_allow_oversubscription(NULL) && acct_groups_of_submitter(NULL, "a.b") == 0,
                         "NULL groups");
}

/* ---- errors ---- */

static const struct {
        const char *text;
        int line;
        const char *msg; /* the reason starts so */
} error_cases[] = {
        { "\nGROUP_NAMES = a.b\n", 2, "GROUP_NAMES: group 'a.b' has no parent: 'a' is not listed" },
        { "GROUP_NAMES = a, a.b.c\n", 1, "GROUP_NAMES: group 'a.b.c' has no parent: 'a.b' is not listed" },
        { "GROUP_NAMES = Physics, a,\\\n  physics\n", 1,
          "GROUP_NAMES: group 'physics' is listed twice (names are case-insensitive: 'Physics')" },
        { "GROUP_NAMES = a, a\n", 1, "GROUP_NAMES: group 'a' is listed twice" },
        { "GROUP_NAMES = a23456789012345678901234567890123456789012\n", 1,
          "GROUP_NAMES: group name 'a23456789012345678901234567890123456789012' is longer than 40 characters" },
        { "GROUP_NAMES = a@example.org\n", 1, "GROUP_NAMES: group name 'a@example.org' contains '@'" },
        { "GROUP_NAMES = \"a\"\n", 1, "GROUP_NAMES: group name '\"a\"' contains '\"'" },
        { "GROUP_NAMES = a, a..b\n", 1, "GROUP_NAMES: group name 'a..b' has an empty part" },
        { "GROUP_NAMES = a.\n", 1, "GROUP_NAMES: group name 'a.' has an empty part" },
        { "GROUP_NAMES = .a\n", 1, "GROUP_NAMES: group name '.a' has an empty part" },
        { "GROUP_NAMES = <none>\n", 1, "GROUP_NAMES: '<none>' is the name of the root group" },
        { "GROUP_NAMES = Nice-User\n", 1, "GROUP_NAMES: group name 'Nice-User': 'nice-user' is reserved" },
        { "GROUP_NAMES = nice-user, nice-user.x\n", 1, "GROUP_NAMES: group name 'nice-user': 'nice-user' is reserved" },
        { "GROUP_NAMES = a\nGROUP_QUOTA_a = -1\n", 2,
          "GROUP_QUOTA_a = -1: a static quota is a number of slots, from 0 to 2147483647" },
        { "GROUP_NAMES = a\nGROUP_QUOTA_a = 3e9\n", 2, "GROUP_QUOTA_a = 3e+09: a static quota" },
        { "GROUP_NAMES = a\n\nGROUP_QUOTA_a = ten\n", 3, "GROUP_QUOTA_a = 'ten' is not a number" },
        { "GROUP_NAMES = a\nGROUP_QUOTA_DYNAMIC_a = 1.5\n", 2,
          "GROUP_QUOTA_DYNAMIC_a = 1.5: a dynamic quota is a fraction, from 0.0 to 1.0" },
        { "GROUP_NAMES = a\nGROUP_QUOTA_DYNAMIC_a = -0.1\n", 2, "GROUP_QUOTA_DYNAMIC_a = -0.1: a dynamic quota" },
        { "GROUP_NAMES = a\nGROUP_QUOTA_a = 1\nGROUP_QUOTA_DYNAMIC_a = 2\n", 3,
          "GROUP_QUOTA_DYNAMIC_a = 2: a dynamic quota" },
        { "GROUP_NAMES = a\nGROUP_ACCEPT_SURPLUS_a = sometimes\n", 2,
          "GROUP_ACCEPT_SURPLUS_a = 'sometimes' is not a boolean" },
        { "GROUP_NAMES = a\nGROUP_AUTOREGROUP_a = 7 +\n", 2, "GROUP_AUTOREGROUP_a = '7 +' is not a boolean" },
        { "GROUP_NAMES = a\nGROUP_PRIO_FACTOR_a = -2\n", 2,
          "GROUP_PRIO_FACTOR_a = -2: a priority factor cannot be negative" },
        { "GROUP_ACCEPT_SURPLUS = maybe\n", 1, "GROUP_ACCEPT_SURPLUS = 'maybe' is not a boolean" },
        { "GROUP_AUTOREGROUP = maybe\n", 1, "GROUP_AUTOREGROUP = 'maybe' is not a boolean" },
        { "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = x y\n", 1,
          "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = 'x y' is not a boolean" },
};

static void test_errors(void) {
        for (size_t i = 0; i < sizeof error_cases / sizeof *error_cases; i++) {
                Config *cfg = groups_test_config(error_cases[i].text);
                AcctGroups *g = (AcctGroups *) &g; /* must stay as it is */
                ConfigError err = {};
                int r;

                r = acct_groups_from_config(cfg, &g, &err);
                GLEAN_TEST_CHECK(r == -EINVAL, "case %zu: %d, want -EINVAL", i, r);
                GLEAN_TEST_CHECK(g == (AcctGroups *) &g, "case %zu: ret set on failure", i);
                GLEAN_TEST_CHECK(strcmp(err.file, "t.conf") == 0 && err.line == error_cases[i].line,
                                 "case %zu: at %s:%d, want t.conf:%d", i, err.file, err.line, error_cases[i].line);
                GLEAN_TEST_CHECK(strncmp(err.msg, error_cases[i].msg, strlen(error_cases[i].msg)) == 0,
                                 "case %zu: '%s', want '%s...'", i, err.msg, error_cases[i].msg);
                config_free(cfg);
        }
}

static void test_parent_listed_later(void) {
        AcctGroups *g = groups_test_groups("GROUP_NAMES = a.b.c, a.b, A\n");
        const AcctGroup *abc = named(g, "a.b.c");

        GLEAN_TEST_CHECK(strcmp(acct_groups_get(g, abc->parent)->name, "a.b") == 0 && abc->depth == 3,
                         "a.b.c under a.b");
        GLEAN_TEST_CHECK(strcmp(acct_groups_get(g, named(g, "a.b")->parent)->name, "A") == 0,
                         "a.b under A (case-insensitive)");
        acct_groups_free(g);
}

/* ---- lookups ---- */

static void test_find(void) {
        AcctGroups *g = groups_test_groups("GROUP_NAMES = group_Physics, group_physics.Lab1\n");
        size_t i = 99;

        GLEAN_TEST_CHECK(acct_groups_find(g, "GROUP_PHYSICS", &i) == 0 && i == 1, "case-insensitive: %zu", i);
        GLEAN_TEST_CHECK(strcmp(acct_groups_get(g, 1)->name, "group_Physics") == 0, "spelled as GROUP_NAMES has it");
        GLEAN_TEST_CHECK(acct_groups_find(g, "group_physics.lab1", &i) == 0 && i == 2, "subgroup: %zu", i);
        i = 99;
        GLEAN_TEST_CHECK(acct_groups_find(g, "group_physics.lab", &i) == -ENOENT && i == 99, "a prefix is no group");
        GLEAN_TEST_CHECK(acct_groups_find(g, "lab1", &i) == -ENOENT, "a last part is no group");
        GLEAN_TEST_CHECK(acct_groups_find(g, "", &i) == -ENOENT, "empty");
        GLEAN_TEST_CHECK(acct_groups_find(g, NULL, &i) == -EINVAL, "NULL");
        acct_groups_free(g);
}

static void test_of_submitter(void) {
        AcctGroups *g = groups_test_groups("GROUP_NAMES = group_physics, group_physics.lab1, group_physics.lab1.deep, "
                                  "group_chemistry, a, a.b, a.b.c, a.b.c.d\n");
        static const struct {
                const char *submitter, *group;
        } cases[] = {
                { "group_physics.lab1.alice@example.org", "group_physics.lab1" },
                { "GROUP_PHYSICS.Lab1.Alice@example.org", "group_physics.lab1" },
                { "group_physics.alice@example.org", "group_physics" },
                { "group_physics.lab1@example.org", "group_physics" }, /* lab1 is the user here */
                { "group_physics.lab1.deep.x@example.org", "group_physics.lab1.deep" },
                { "group_physics.lab1.notagroup.alice@example.org", "group_physics.lab1" },
                { "group_physics.unknown.alice@example.org", "group_physics" },
                { "group_physics@example.org", "<none>" }, /* no dot: group accounting (3.4.7) */
                { "group_physics", "<none>" },
                { "alice@example.org", "<none>" },
                { "alice@dom.with.dots", "<none>" },
                { "unknown.alice@example.org", "<none>" },
                { "unknown.group_physics.alice@example.org", "<none>" },
                { "nice-user.alice@example.org", "<none>" },
                { "nice-user.group_physics.alice@example.org", "<none>" },
                { "NICE-USER.group_physics.alice@example.org", "<none>" },
                { "group_chemistry.curie@example.org", "group_chemistry" },
                { "group_chemistry.curie", "group_chemistry" }, /* no domain */
                { "group_chemistry.curie@a@b", "group_chemistry" },
                { "group_chemistry.@example.org", "group_chemistry" },
                { ".group_chemistry.x@example.org", "<none>" },
                { "a.b.c.d.e.f.u@d", "a.b.c.d" },
                { "a.b.c.u@d", "a.b.c" },
                { "a.x.c.u@d", "a" },
                { "", "<none>" },
                { "@", "<none>" },
                { ".", "<none>" },
                { "group_physics.a-user-name-much-longer-than-forty-characters-for-sure@d", "group_physics" },
                { "group_physics_and_a_very_long_name_beyond_40.u@d", "<none>" },
        };

        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                size_t k = acct_groups_of_submitter(g, cases[i].submitter);
                const AcctGroup *grp = acct_groups_get(g, k);

                GLEAN_TEST_CHECK(grp && strcmp(grp->name, cases[i].group) == 0, "'%s': %s, want %s",
                                 cases[i].submitter, grp ? grp->name : "(none)", cases[i].group);
        }
        acct_groups_free(g);
}

/* Many groups: every one found, by its name and by a member. */
static void test_many(void) {
        enum { N = 3000 };
        char *text = malloc(N * 24 + 32), member[64];
        size_t len;

        GLEAN_TEST_CHECK_FATAL(text != NULL, "out of memory");
        len = (size_t) sprintf(text, "GROUP_NAMES =");
        for (unsigned i = 0; i < N; i++)
                len += (size_t) sprintf(text + len, i % 3 == 0 ? " g%u" : " g%u.s%u", i - i % 3, i);
        text[len++] = '\n';
        text[len] = '\0';

        AcctGroups *g = groups_test_groups(text);
        GLEAN_TEST_CHECK_FATAL(acct_groups_count(g) == N + 1, "%zu groups", acct_groups_count(g));
        for (size_t i = 1; i <= N; i++) {
                const AcctGroup *grp = acct_groups_get(g, i);
                size_t k = 0;

                GLEAN_TEST_CHECK(acct_groups_find(g, grp->name, &k) == 0 && k == i, "find %s", grp->name);
                snprintf(member, sizeof member, "%s.user@d", grp->name);
                GLEAN_TEST_CHECK(acct_groups_of_submitter(g, member) == i, "%s", member);
        }
        acct_groups_free(g);
        free(text);
}

static CU_TestInfo tree_tests[] = {
        { "tree", test_tree },
        { "knobs", test_knobs },
        { "no-groups", test_no_groups },
        { "errors", test_errors },
        { "parent-listed-later", test_parent_listed_later },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo lookup_tests[] = {
        { "find", test_find },
        { "of-submitter", test_of_submitter },
        { "many", test_many },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "groups", NULL, NULL, NULL, NULL, tree_tests },
        { "lookups", NULL, NULL, NULL, NULL, lookup_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

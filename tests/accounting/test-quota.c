/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-quota.c — hierarchical group quotas (seed 000, 3.4.8): every worked
 * example of the manual to the slot (physics, chemistry, econ, stat) and
 * seed 003's, then surplus (accepted or not, globally and per group,
 * shared in proportion to quotas, leftovers shared equally among groups
 * without a quota, handed up to the parent and the root), oversubscription,
 * mixed static and dynamic siblings, a four-level tree, an empty pool, no
 * GROUP_NAMES; the warnings; and invariants over random trees.
 */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "groups-test.h"

/* "group=demand group=demand ..." into one demand per group. */
static double *demands_of(const AcctGroups *g, const char *spec) {
        double *d = calloc(acct_groups_count(g), sizeof *d);
        char *copy = strdup(spec ? spec : ""), *save = NULL;

        GLEAN_TEST_CHECK_FATAL(d && copy, "out of memory");
        for (char *item = strtok_r(copy, " ", &save); item; item = strtok_r(NULL, " ", &save)) {
                char *eq = strrchr(item, '=');
                size_t k;

                GLEAN_TEST_CHECK_FATAL(eq != NULL, "bad demand '%s'", item);
                *eq = '\0';
                GLEAN_TEST_CHECK_FATAL(acct_groups_find(g, item, &k) == 0, "demand of unknown group '%s'", item);
                d[k] = strtod(eq + 1, NULL);
        }
        free(copy);
        return d;
}

/* ---- the table ---- */

typedef struct Want {
        const char *group;
        double quota, own, allocated;
} Want;

typedef struct QuotaCase {
        const char *name;
        const char *config;
        double pool;
        const char *demand; /* NULL: no demand */
        Want want[10];
        const char *warnings[4]; /* every line, in order */
} QuotaCase;

#define PHYSICS                                                        \
        "GROUP_NAMES = group_physics, group_physics.experiment1, group_physics.experiment2\n" \
        "GROUP_QUOTA_group_physics = 100\n"                            \
        "GROUP_QUOTA_group_physics.experiment1 = 20\n"                 \
        "GROUP_QUOTA_group_physics.experiment2 = 70\n"
#define CHEMISTRY                                                      \
        "GROUP_NAMES = group_chemistry, group_chemistry.lab1, group_chemistry.lab2\n" \
        "GROUP_QUOTA_group_chemistry = 100\n"                          \
        "GROUP_QUOTA_group_chemistry.lab1 = 40\n"                      \
        "GROUP_QUOTA_group_chemistry.lab2 = 80\n"
#define ECON                                                                                             \
        "GROUP_NAMES = group_econ, group_econ.project1, group_econ.project2, group_econ.project3\n"     \
        "GROUP_QUOTA_DYNAMIC_group_econ = .6\n"                                                          \
        "GROUP_QUOTA_DYNAMIC_group_econ.project1 = .2\n"                                                 \
        "GROUP_QUOTA_DYNAMIC_group_econ.project2 = .15\n"                                                \
        "GROUP_QUOTA_DYNAMIC_group_econ.project3 = .2\n"
#define STAT                                                                                             \
        "GROUP_NAMES = group_stat, group_stat.project1, group_stat.project2, group_stat.project3\n"     \
        "GROUP_QUOTA_DYNAMIC_group_stat = .5\n"                                                          \
        "GROUP_QUOTA_DYNAMIC_group_stat.project1 = .4\n"                                                 \
        "GROUP_QUOTA_DYNAMIC_group_stat.project2 = .3\n"                                                 \
        "GROUP_QUOTA_DYNAMIC_group_stat.project3 = .4\n"
#define FOUR_LEVELS                                                                       \
        "GROUP_NAMES = a, a.b, a.b.c, a.b.c.d\n"                                          \
        "GROUP_QUOTA_DYNAMIC_a = .5\nGROUP_QUOTA_DYNAMIC_a.b = .5\n"                      \
        "GROUP_QUOTA_DYNAMIC_a.b.c = .5\nGROUP_QUOTA_DYNAMIC_a.b.c.d = .5\n"

static const QuotaCase cases[] = {
        /* ---- the manual's examples (3.4.8) ---- */
        { "physics: 100/20/70 leaves 10 to group_physics", PHYSICS, 100, NULL,
          .want = { { "<none>", 100, 0, 0 },
            { "group_physics", 100, 10, 0 },
            { "group_physics.experiment1", 20, 20, 0 },
            { "group_physics.experiment2", 70, 70, 0 } } },
        { "physics, a bigger pool and demand everywhere", PHYSICS, 150,
          "<none>=100 group_physics=100 group_physics.experiment1=100 group_physics.experiment2=5",
          .want = { { "<none>", 150, 50, 50 },
            /* experiment2's 65 unused go to group_physics' own
             * submitters; experiment1 would share them if it accepted
             * surplus */
            { "group_physics", 100, 10, 75 },
            { "group_physics.experiment1", 20, 20, 20 },
            { "group_physics.experiment2", 70, 70, 5 } } },
        { "chemistry: 40 and 80 of 100 scaled to 33.333 and 66.667, truncated, 1 to the parent", CHEMISTRY, 100, NULL,
          .want = { { "<none>", 100, 0, 0 },
            { "group_chemistry", 100, 1, 0 },
            { "group_chemistry.lab1", 33, 33, 0 },
            { "group_chemistry.lab2", 66, 66, 0 } },
          .warnings = { "group quotas: static quota of group_chemistry.lab1 rescaled from 40 to 33.333",
            "group quotas: static quota of group_chemistry.lab2 rescaled from 80 to 66.667" } },
        { "econ: .6/.2/.15/.2 of 100 give 12, 9, 12 and 27 to the parent", ECON, 100, NULL,
          .want = { { "<none>", 100, 40, 0 },
            { "group_econ", 60, 27, 0 },
            { "group_econ.project1", 12, 12, 0 },
            { "group_econ.project2", 9, 9, 0 },
            { "group_econ.project3", 12, 12, 0 } } },
        { "stat: .5/.4/.3/.4 of 100 give 18, 13, 18 and 1 to the parent", STAT, 100, NULL,
          .want = { { "<none>", 100, 50, 0 },
            { "group_stat", 50, 1, 0 },
            { "group_stat.project1", 18, 18, 0 },
            { "group_stat.project2", 13, 13, 0 },
            { "group_stat.project3", 18, 18, 0 } },
          .warnings = { "group quotas: dynamic quota of group_stat.project1 rescaled from 0.4 to 0.3636",
            "group quotas: dynamic quota of group_stat.project2 rescaled from 0.3 to 0.2727",
            "group quotas: dynamic quota of group_stat.project3 rescaled from 0.4 to 0.3636" } },
        { "seed 003: a has 1 of 10 and gets 1 for 2, no surplus",
          "GROUP_NAMES = a\nGROUP_QUOTA_a = 1\nGROUP_ACCEPT_SURPLUS = False\nGROUP_AUTOREGROUP = False\n", 10, "a=2",
          .want = { { "<none>", 10, 9, 0 }, { "a", 1, 1, 1 } } },

        /* ---- surplus ---- */
        { "surplus accepted (GROUP_ACCEPT_SURPLUS)",
          "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 6\nGROUP_QUOTA_b = 4\nGROUP_ACCEPT_SURPLUS = True\n", 10, "a=10",
          .want = { { "<none>", 10, 0, 0 }, { "a", 6, 6, 10 }, { "b", 4, 4, 0 } } },
        { "surplus refused (the default)", "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 6\nGROUP_QUOTA_b = 4\n", 10, "a=10",
          .want = { { "<none>", 10, 0, 0 }, { "a", 6, 6, 6 }, { "b", 4, 4, 0 } } },
        { "surplus accepted per group (GROUP_ACCEPT_SURPLUS_b)",
          "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 6\nGROUP_QUOTA_b = 4\nGROUP_ACCEPT_SURPLUS = False\n"
          "GROUP_ACCEPT_SURPLUS_b = True\n",
          10, "a=1 b=20",
          .want = { { "<none>", 10, 0, 0 }, { "a", 6, 6, 1 }, { "b", 4, 4, 9 } } },
        { "surplus refused per group (GROUP_ACCEPT_SURPLUS_a = False)",
          "GROUP_NAMES = a, b, c\nGROUP_QUOTA_a = 6\nGROUP_QUOTA_b = 4\nGROUP_QUOTA_c = 10\n"
          "GROUP_ACCEPT_SURPLUS = True\nGROUP_ACCEPT_SURPLUS_a = False\n",
          20, "a=20 b=20",
          .want = { { "<none>", 20, 0, 0 }, { "a", 6, 6, 6 }, { "b", 4, 4, 14 }, { "c", 10, 10, 0 } } },
        { "surplus shared in proportion to quotas",
          "GROUP_NAMES = a, b, c\nGROUP_QUOTA_a = 30\nGROUP_QUOTA_b = 10\nGROUP_QUOTA_c = 60\n"
          "GROUP_ACCEPT_SURPLUS = True\n",
          100, "a=100 b=100",
          .want = { { "<none>", 100, 0, 0 }, { "a", 30, 30, 75 }, { "b", 10, 10, 25 }, { "c", 60, 60, 0 } } },
        { "surplus in proportion, capped at demand, the rest to the others",
          "GROUP_NAMES = a, b, c\nGROUP_QUOTA_a = 30\nGROUP_QUOTA_b = 10\nGROUP_QUOTA_c = 60\n"
          "GROUP_ACCEPT_SURPLUS = True\n",
          100, "a=35 b=100",
          .want = { { "<none>", 100, 0, 0 }, { "a", 30, 30, 35 }, { "b", 10, 10, 65 }, { "c", 60, 60, 0 } } },
        { "groups without a quota share the leftovers equally",
          "GROUP_NAMES = a, z1, z2\nGROUP_QUOTA_a = 50\nGROUP_ACCEPT_SURPLUS = True\n", 100, "a=60 z1=100 z2=10",
          .want = { { "<none>", 100, 50, 0 }, { "a", 50, 50, 60 }, { "z1", 0, 0, 30 }, { "z2", 0, 0, 10 } } },
        { "groups with a quota before those without",
          "GROUP_NAMES = a, z\nGROUP_QUOTA_a = 50\nGROUP_ACCEPT_SURPLUS = True\n", 100, "a=200 z=100",
          .want = { { "<none>", 100, 50, 0 }, { "a", 50, 50, 100 }, { "z", 0, 0, 0 } } },
        { "demand under quota: the surplus goes to the root",
          "GROUP_NAMES = a\nGROUP_QUOTA_a = 6\n", 10, "a=2 <none>=10",
          .want = { { "<none>", 10, 4, 8 }, { "a", 6, 6, 2 } } },
        { "demand under quota: a subgroup's surplus goes to its parent",
          "GROUP_NAMES = p, p.c\nGROUP_QUOTA_p = 50\nGROUP_QUOTA_p.c = 30\n", 100, "p=40 p.c=10 <none>=100",
          .want = { { "<none>", 100, 50, 50 }, { "p", 50, 20, 40 }, { "p.c", 30, 30, 10 } } },
        { "a parent shares its surplus with its subgroups in proportion",
          "GROUP_NAMES = p, p.a, p.b\nGROUP_QUOTA_p = 40\nGROUP_QUOTA_p.a = 10\nGROUP_QUOTA_p.b = 10\n"
          "GROUP_ACCEPT_SURPLUS = True\n",
          40, "p=0 p.a=100 p.b=5",
          .want = { { "<none>", 40, 0, 0 }, { "p", 40, 20, 0 }, { "p.a", 10, 10, 35 }, { "p.b", 10, 10, 5 } } },
        { "surplus down a refusing parent stays there",
          "GROUP_NAMES = p, p.a, q\nGROUP_QUOTA_p = 10\nGROUP_QUOTA_p.a = 10\nGROUP_QUOTA_q = 10\n"
          "GROUP_ACCEPT_SURPLUS = True\nGROUP_ACCEPT_SURPLUS_p = False\n",
          20, "p.a=100",
          .want = { { "<none>", 20, 0, 0 }, { "p", 10, 0, 0 }, { "p.a", 10, 10, 10 }, { "q", 10, 10, 0 } } },

        /* ---- oversubscription, mixed quotas, deep trees ---- */
        { "oversubscription allowed: nothing scaled",
          CHEMISTRY "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = True\n", 100, NULL,
          .want = { { "<none>", 100, 0, 0 },
            { "group_chemistry", 100, 0, 0 },
            { "group_chemistry.lab1", 40, 40, 0 },
            { "group_chemistry.lab2", 80, 80, 0 } } },
        { "oversubscription at the top", "GROUP_NAMES = a, b\nGROUP_QUOTA_a = 8\nGROUP_QUOTA_b = 8\n"
                                         "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = True\n",
          10, "a=10 b=10",
          .want = { { "<none>", 10, 0, 0 }, { "a", 8, 8, 8 }, { "b", 8, 8, 8 } } },
        { "mixed: static first, dynamic from the rest (as HTCondor)",
          "GROUP_NAMES = p, p.s, p.d1, p.d2, p.both\nGROUP_QUOTA_p = 60\nGROUP_QUOTA_p.s = 15\n"
          "GROUP_QUOTA_DYNAMIC_p.d1 = .5\nGROUP_QUOTA_DYNAMIC_p.d2 = .25\n"
          "GROUP_QUOTA_p.both = 5\nGROUP_QUOTA_DYNAMIC_p.both = .9\n",
          100, NULL,
          .want = { { "<none>", 100, 40, 0 },
            { "p", 60, 10, 0 },
            { "p.s", 15, 15, 0 },
            { "p.d1", 20, 20, 0 },
            { "p.d2", 10, 10, 0 },
            { "p.both", 5, 5, 0 } } },
        { "mixed: static over the parent leaves nothing to dynamic",
          "GROUP_NAMES = p, p.s, p.d\nGROUP_QUOTA_p = 50\nGROUP_QUOTA_p.s = 60\nGROUP_QUOTA_DYNAMIC_p.d = .5\n", 100,
          NULL,
          .want = { { "<none>", 100, 50, 0 }, { "p", 50, 0, 0 }, { "p.s", 50, 50, 0 }, { "p.d", 0, 0, 0 } },
          .warnings = { "group quotas: static quota of p.s rescaled from 60 to 50" } },
        { "mixed at the top: dynamic of what static leaves of the pool",
          "GROUP_NAMES = s, d\nGROUP_QUOTA_s = 20\nGROUP_QUOTA_DYNAMIC_d = .5\n", 100, NULL,
          .want = { { "<none>", 100, 40, 0 }, { "s", 20, 20, 0 }, { "d", 40, 40, 0 } } },
        { "four levels, each half of its parent, truncated", FOUR_LEVELS, 100, NULL,
          .want = { { "<none>", 100, 50, 0 }, { "a", 50, 25, 0 }, { "a.b", 25, 13, 0 }, { "a.b.c", 12, 6, 0 },
            { "a.b.c.d", 6, 6, 0 } } },
        { "four levels, surplus from every level down to the leaf", FOUR_LEVELS "GROUP_ACCEPT_SURPLUS = True\n", 100,
          "a.b.c.d=1000",
          .want = { { "<none>", 100, 50, 0 }, { "a", 50, 25, 0 }, { "a.b", 25, 13, 0 }, { "a.b.c", 12, 6, 0 },
            { "a.b.c.d", 6, 6, 100 } } },
        { "a fractional pool: the root keeps the fraction",
          "GROUP_NAMES = a\nGROUP_QUOTA_DYNAMIC_a = .5\n", 10.5, "<none>=100 a=100",
          .want = { { "<none>", 10.5, 5.5, 5.5 }, { "a", 5, 5, 5 } } },

        /* ---- edges ---- */
        { "an empty pool", CHEMISTRY, 0, "group_chemistry.lab1=5 <none>=5",
          .want = { { "<none>", 0, 0, 0 },
            { "group_chemistry", 0, 0, 0 },
            { "group_chemistry.lab1", 0, 0, 0 },
            { "group_chemistry.lab2", 0, 0, 0 } } },
        { "no GROUP_NAMES: <none> has the pool", "", 42, "<none>=100", .want = { { "<none>", 42, 42, 42 } } },
        { "no GROUP_NAMES, an empty pool", "", 0, "<none>=100", .want = { { "<none>", 0, 0, 0 } } },
        { "no GROUP_NAMES, less demand than pool", "", 42, "<none>=7.5", .want = { { "<none>", 42, 42, 7.5 } } },
};

static bool near(double a, double b) {
        return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static void test_table(void) {
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
                const QuotaCase *qc = &cases[c];
                AcctGroups *g = groups_test_groups(qc->config);
                double *demand = qc->demand ? demands_of(g, qc->demand) : NULL;
                AcctQuotaResult res = {};
                size_t n_want = 0, n_scaled = 0;
                int r;

                r = acct_quotas_compute(g, qc->pool, demand, &res);
                GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %d", qc->name, r);
                GLEAN_TEST_CHECK(res.n == acct_groups_count(g), "%s: %zu quotas", qc->name, res.n);
                for (const Want *w = qc->want; w < qc->want + 10 && w->group; w++, n_want++) {
                        size_t k;

                        GLEAN_TEST_CHECK_FATAL(acct_groups_find(g, w->group, &k) == 0, "%s: no %s", qc->name,
                                               w->group);
                        const AcctQuota *q = &res.q[k];
                        GLEAN_TEST_CHECK(near(q->quota, w->quota) && near(q->own, w->own) &&
                                                 near(q->allocated, w->allocated),
                                         "%s: %s: quota %.17g own %.17g allocated %.17g, want %g %g %g", qc->name,
                                         w->group, q->quota, q->own, q->allocated, w->quota, w->own, w->allocated);
                        GLEAN_TEST_CHECK(q->demand == (demand ? demand[k] : 0), "%s: %s: demand", qc->name, w->group);
                }
                GLEAN_TEST_CHECK(n_want == res.n, "%s: the table names %zu of %zu groups", qc->name, n_want, res.n);

                size_t n_lines = 0;
                while (n_lines < 4 && qc->warnings[n_lines])
                        n_lines++;
                GLEAN_TEST_CHECK(res.n_warnings == n_lines, "%s: %zu warnings, want %zu%s%s", qc->name,
                                 res.n_warnings, n_lines, res.n_warnings ? ": " : "",
                                 res.n_warnings ? res.warnings[0] : "");
                for (size_t i = 0; i < n_lines && i < res.n_warnings; i++)
                        GLEAN_TEST_CHECK(strcmp(res.warnings[i], qc->warnings[i]) == 0, "%s: '%s', want '%s'",
                                         qc->name, res.warnings[i], qc->warnings[i]);
                for (size_t i = 0; i < res.n; i++)
                        n_scaled += res.q[i].scaled;
                GLEAN_TEST_CHECK(n_scaled == res.n_warnings, "%s: %zu scaled, %zu warnings", qc->name, n_scaled,
                                 res.n_warnings);

                acct_quota_result_clear(&res);
                GLEAN_TEST_CHECK(res.q == NULL && res.n == 0 && res.warnings == NULL && res.n_warnings == 0,
                                 "cleared");
                free(demand);
                acct_groups_free(g);
        }
}

/* The other fields: configured, scaled, subtree_allocated. */
static void test_fields(void) {
        AcctGroups *g = groups_test_groups(ECON);
        AcctQuotaResult res = {};
        size_t k;

        GLEAN_TEST_CHECK_FATAL(acct_quotas_compute(g, 200, NULL, &res) == 0, "compute");
        GLEAN_TEST_CHECK(res.q[0].configured == 200, "root: the pool");
        GLEAN_TEST_CHECK(acct_groups_find(g, "group_econ", &k) == 0 && near(res.q[k].configured, 120) &&
                                 res.q[k].quota == 120 && !res.q[k].scaled,
                         "econ: .6 of 200");
        GLEAN_TEST_CHECK(acct_groups_find(g, "group_econ.project2", &k) == 0 && near(res.q[k].configured, 18) &&
                                 res.q[k].quota == 18,
                         "project2: .15 of 120");
        acct_quota_result_clear(&res);
        acct_groups_free(g);

        g = groups_test_groups(CHEMISTRY "GROUP_ACCEPT_SURPLUS = True\n");
        double demand[4] = { 3, 0, 10, 100 }; /* <none>, chemistry, lab1, lab2 */
        GLEAN_TEST_CHECK_FATAL(acct_quotas_compute(g, 110, demand, &res) == 0, "compute");
        GLEAN_TEST_CHECK(res.q[2].configured == 40 && res.q[2].scaled && res.q[3].configured == 80 &&
                                 res.q[3].scaled && !res.q[1].scaled && !res.q[0].scaled,
                         "configured 40 and 80, both scaled");
        /* chemistry 100: own 1, lab1 33 (uses 10), lab2 66 (wants 100);
         * root 10 (uses 3): 23 + 1 of chemistry go to lab2, 7 of the root too */
        GLEAN_TEST_CHECK(res.q[0].allocated == 3 && near(res.q[3].allocated, 97) && res.q[2].allocated == 10,
                         "allocated: %g %g %g %g", res.q[0].allocated, res.q[1].allocated, res.q[2].allocated,
                         res.q[3].allocated);
        GLEAN_TEST_CHECK(near(res.q[1].subtree_allocated, 107) && near(res.q[0].subtree_allocated, 110),
                         "subtree_allocated: %g %g", res.q[1].subtree_allocated, res.q[0].subtree_allocated);
        acct_quota_result_clear(&res);
        acct_groups_free(g);
}

static void test_bad_input(void) {
        AcctGroups *g = groups_test_groups("GROUP_NAMES = a\n");
        AcctQuotaResult res = { .n = 77 };
        double bad[][2] = { { -1, 0 }, { NAN, 0 }, { 1, 1 } };

        GLEAN_TEST_CHECK(acct_quotas_compute(g, -1, NULL, &res) == -EINVAL, "negative pool");
        GLEAN_TEST_CHECK(acct_quotas_compute(g, NAN, NULL, &res) == -EINVAL, "NaN pool");
        GLEAN_TEST_CHECK(acct_quotas_compute(g, INFINITY, NULL, &res) == -EINVAL, "infinite pool");
        GLEAN_TEST_CHECK(acct_quotas_compute(g, 1e300, NULL, &res) == -EINVAL, "a pool beyond 2^53");
        GLEAN_TEST_CHECK(acct_quotas_compute(g, 10, bad[0], &res) == -EINVAL, "negative demand");
        GLEAN_TEST_CHECK(acct_quotas_compute(g, 10, bad[1], &res) == -EINVAL, "NaN demand");
        GLEAN_TEST_CHECK(acct_quotas_compute(NULL, 10, NULL, &res) == -EINVAL, "no groups");
        GLEAN_TEST_CHECK(res.n == 77 && res.q == NULL, "ret untouched on failure");
        GLEAN_TEST_CHECK(acct_quotas_compute(g, 10, bad[2], &res) == 0 && res.n == 2, "good demand");
        acct_quota_result_clear(&res);
        acct_quota_result_clear(NULL);
        acct_groups_free(g);
}

/* ---- invariants over random trees ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15;

static uint64_t rnd(void) { /* splitmix64 */
        uint64_t z = (rng_state += 0x9e3779b97f4a7c15);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9;
        z = (z ^ (z >> 27)) * 0x94d049bb133111eb;
        return z ^ (z >> 31);
}

static unsigned below(unsigned n) {
        return (unsigned) (rnd() % n);
}

/* A random tree of up to 40 groups, each with a random kind of quota and
 * surplus policy, as a configuration text. */
static char *random_config(bool oversubscribe) {
        size_t cap = 16384, len = 0;
        char *text = malloc(cap), names[40][48];
        unsigned n = 1 + below(40);

        GLEAN_TEST_CHECK_FATAL(text != NULL, "out of memory");
#define ADD(...) (len += (size_t) snprintf(text + len, cap - len, __VA_ARGS__))
        ADD("NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION = %s\n", oversubscribe ? "True" : "False");
        ADD("GROUP_ACCEPT_SURPLUS = %s\n", below(2) ? "True" : "False");
        for (unsigned i = 0; i < n; i++) {
                unsigned parent = below(i + 1); /* i: a top-level group */
                if (parent < i && strlen(names[parent]) < 36)
                        snprintf(names[i], sizeof names[i], "%s.g%u", names[parent], i);
                else
                        snprintf(names[i], sizeof names[i], "g%u", i);
                switch (below(4)) {
                case 0:
                        ADD("GROUP_QUOTA_%s = %u\n", names[i], below(60));
                        break;
                case 1:
                        ADD("GROUP_QUOTA_DYNAMIC_%s = %.3f\n", names[i], below(1001) / 1000.0);
                        break;
                case 2:
                        ADD("GROUP_QUOTA_%s = %.2f\nGROUP_QUOTA_DYNAMIC_%s = .5\n", names[i], below(1000) / 10.0,
                            names[i]);
                        break;
                default:
                        break;
                }
                if (below(3) == 0)
                        ADD("GROUP_ACCEPT_SURPLUS_%s = %s\n", names[i], below(2) ? "True" : "False");
        }
        ADD("GROUP_NAMES =");
        for (unsigned i = 0; i < n; i++)
                ADD(" %s", names[i]);
        ADD("\n");
#undef ADD
        GLEAN_TEST_CHECK_FATAL(len < cap, "config text too long");
        return text;
}

static void test_random_invariants(void) {
        for (unsigned round = 0; round < 2000; round++) {
                bool oversubscribe = round % 4 == 3;
                char *text = random_config(oversubscribe);
                AcctGroups *g = groups_test_groups(text);
                size_t n = acct_groups_count(g);
                double *demand = calloc(n, sizeof *demand);
                double pool = below(4) == 0 ? below(20) : below(500) + below(100) / 8.0;
                double sum_own = 0, sum_allocated = 0;
                AcctQuotaResult res = {};

                GLEAN_TEST_CHECK_FATAL(demand != NULL, "out of memory");
                for (size_t i = 0; i < n; i++)
                        demand[i] = below(3) == 0 ? 0 : below(200) / (below(2) ? 1.0 : 3.0);
                GLEAN_TEST_CHECK_FATAL(acct_quotas_compute(g, pool, demand, &res) == 0, "round %u", round);
                for (size_t i = 0; i < n; i++) {
                        const AcctQuota *q = &res.q[i];
                        const AcctGroup *grp = acct_groups_get(g, i);
                        double children = 0;

                        GLEAN_TEST_CHECK(isfinite(q->quota) && isfinite(q->own) && isfinite(q->allocated) &&
                                                 isfinite(q->subtree_allocated) && isfinite(q->configured) &&
                                                 q->quota >= 0 && q->own >= 0 && q->allocated >= 0 &&
                                                 q->configured >= 0,
                                         "round %u: %s: a NaN or negative figure", round, grp->name);
                        GLEAN_TEST_CHECK(q->allocated <= q->demand, "round %u: %s: allocated %.17g > demand %.17g",
                                         round, grp->name, q->allocated, q->demand);
                        GLEAN_TEST_CHECK(i == 0 || q->quota == floor(q->quota), "round %u: %s: quota %.17g not whole",
                                         round, grp->name, q->quota);
                        for (size_t j = 0; j < grp->n_children; j++)
                                children += res.q[grp->children[j]].quota;
                        if (!oversubscribe)
                                GLEAN_TEST_CHECK(children <= q->quota + 1e-9 && near(q->own, q->quota - children),
                                                 "round %u: %s: subgroups %g of %g, own %g", round, grp->name,
                                                 children, q->quota, q->own);
                        sum_own += q->own;
                        sum_allocated += q->allocated;
                }
                GLEAN_TEST_CHECK(near(res.q[0].subtree_allocated, sum_allocated), "round %u: subtree_allocated",
                                 round);
                if (!oversubscribe) {
                        GLEAN_TEST_CHECK(near(sum_own, pool), "round %u: own quotas sum to %.17g, pool %.17g", round,
                                         sum_own, pool);
                        GLEAN_TEST_CHECK(sum_allocated <= pool * (1 + 1e-12) + 1e-9,
                                         "round %u: %.17g allocated of %.17g", round, sum_allocated, pool);
                }
                acct_quota_result_clear(&res);
                acct_groups_free(g);
                free(demand);
                free(text);
        }
}

static CU_TestInfo quota_tests[] = {
        { "table", test_table },
        { "fields", test_fields },
        { "bad-input", test_bad_input },
        { "random-invariants", test_random_invariants },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "quotas", NULL, NULL, NULL, NULL, quota_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

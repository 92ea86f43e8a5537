/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-accounts.c — the Accountant: claims charged exactly for the time
 * they are held, priorities independent of when they are brought up to
 * date, group roll-ups, the priority factor chain (3.4.2: nice and remote
 * users, groups, administrators), forgetting idle entries, administrators'
 * changes and their errors, the accounts surviving a close and a kill -9
 * at any moment, read-only readers.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "accounting/accounting.h"
#include "test-util.h"

#define DAY 86400.0
#define T0 1.8e9 /* a time in 2027 */

static char tmpdir[64];

static int suite_init(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-acct-XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

static const char base_config[] = "UID_DOMAIN = pool.test\n"
                                  "PRIORITY_HALFLIFE = 86400\n";

/* The accounts with base_config + config; NULL (why says) on failure.
 * No CUnit assertion: a forked writer uses it too. */
static Accountant *open_acct_or_null(const char *config, const char *path, unsigned flags, double now, char *why,
                                     size_t whylen) {
        Config *cfg = NULL;
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        Accountant *a = NULL;
        int r;

        if (config_new(&cfg) < 0)
                return NULL;
        r = config_load_string(cfg, base_config, "<base>", &err);
        if (r >= 0 && config)
                r = config_load_string(cfg, config, "<test>", &err);
        if (r >= 0)
                r = acct_settings_from_config(cfg, &s, &err);
        if (r >= 0 && (r = acct_groups_from_config(cfg, &g, &err)) < 0)
                acct_settings_clear(&s);
        config_free(cfg);
        if (r < 0) {
                snprintf(why, whylen, "config: %.200s", err.msg);
                return NULL;
        }
        return acct_open(path, flags, NULL, &s, g, now, &a, why, whylen) < 0 ? NULL : a;
}

static Accountant *open_acct(const char *config, const char *path, unsigned flags, double now) {
        char why[512] = "";
        Accountant *a = open_acct_or_null(config, path, flags, now, why, sizeof(why));

        GLEAN_TEST_CHECK_FATAL(a, "open %s: %s", path ? path : "(memory)", why);
        return a;
}

static AcctEntry get(const Accountant *a, const char *name) {
        AcctEntry e;

        CU_ASSERT(acct_get(a, name, &e) == 0);
        return e;
}

static bool near(double x, double y, double tol) {
        return fabs(x - y) <= tol * fmax(1.0, fabs(y));
}

/* A claim is charged from begin to end, to the second; what it adds to
 * the priority is the manual's formula over that stretch. */
static void test_claim_charge(void) {
        Accountant *a = open_acct(NULL, NULL, 0, T0);
        AcctEntry e;

        CU_ASSERT(acct_update(a, T0, NULL, NULL) == 0);
        CU_ASSERT(acct_claim_begin(a, "c1", "alice@pool.test", 4, T0 + 100) == 0);
        CU_ASSERT(acct_update(a, T0 + 300, NULL, NULL) == 0);
        e = get(a, "alice@pool.test");
        GLEAN_TEST_CHECK(e.accumulated == 200 && e.weighted_accumulated == 800 && e.in_use == 1 &&
                                 e.weighted_in_use == 4 && e.begin_usage == T0 + 100 && e.last_usage == T0 + 300,
                         "after 200 s: acc %g wacc %g in_use %u/%g begin %g last %g", e.accumulated,
                         e.weighted_accumulated, e.in_use, e.weighted_in_use, e.begin_usage - T0, e.last_usage - T0);
        CU_ASSERT(acct_claim_end(a, "c1", T0 + 400.5) == 0);
        CU_ASSERT(acct_update(a, T0 + 600, NULL, NULL) == 0);
        e = get(a, "alice@pool.test");
        GLEAN_TEST_CHECK(e.accumulated == 300.5 && e.weighted_accumulated == 1202 && e.in_use == 0 &&
                                 e.weighted_in_use == 0 && e.last_usage == T0 + 400.5,
                         "ended: acc %g wacc %g last %g", e.accumulated, e.weighted_accumulated, e.last_usage - T0);
        double want = acct_rup_advance(acct_rup_advance(0.5, 4, 300.5, DAY), 0, 199.5, DAY);
        GLEAN_TEST_CHECK(near(e.rup, want, 1e-12) && near(e.eup, want, 1e-12), "rup %.15g eup %.15g want %.15g",
                         e.rup, e.eup, want);

        /* Never counted twice. */
        CU_ASSERT(acct_claim_end(a, "c1", T0 + 700) == -ENOENT);
        CU_ASSERT(acct_claim_begin(a, "c2", "alice@pool.test", 1, T0 + 700) == 0);
        CU_ASSERT(acct_claim_begin(a, "c2", "bob@pool.test", 1, T0 + 700) == -EEXIST);
        CU_ASSERT(acct_claim_begin(a, "c3", "", 1, T0 + 700) == -EINVAL);
        CU_ASSERT(acct_claim_begin(a, "c3", "bob@pool.test", -1, T0 + 700) == -EINVAL);
        CU_ASSERT(acct_claim_begin(a, "c3", "bob@pool.test", NAN, T0 + 700) == -EINVAL);
        CU_ASSERT(acct_claims_count(a) == 1);
        acct_close(a);
}

/* A claim's weight changed while it runs (the match's cost replaced by
 * its dynamic slot's own weight): what it used until then stays charged
 * at the old weight, the new one counts from then on, for the submitter
 * and its group's roll-up alike; it still counts as one claim. */
static void test_claim_set_weight(void) {
        Accountant *a = open_acct("GROUP_NAMES = group_a\nGROUP_QUOTA_group_a = 10\n", NULL, 0, T0);
        AcctEntry e, g;

        CU_ASSERT(acct_claim_begin(a, "c1", "group_a.alice@pool.test", 3, T0) == 0);
        CU_ASSERT(acct_claim_set_weight(a, "c1", 0.5, T0 + 100) == 0);
        CU_ASSERT(acct_update(a, T0 + 300, NULL, NULL) == 0);
        e = get(a, "group_a.alice@pool.test");
        g = get(a, "group_a");
        GLEAN_TEST_CHECK(e.in_use == 1 && e.weighted_in_use == 0.5 && e.accumulated == 300 &&
                                 e.weighted_accumulated == 3 * 100 + 0.5 * 200,
                         "alice: in_use %u/%g acc %g wacc %g", e.in_use, e.weighted_in_use, e.accumulated,
                         e.weighted_accumulated);
        GLEAN_TEST_CHECK(g.in_use == 1 && g.weighted_in_use == 0.5 && g.weighted_accumulated == 400,
                         "group_a: in_use %u/%g wacc %g", g.in_use, g.weighted_in_use, g.weighted_accumulated);
        double w = 0, begin = 0;
        CU_ASSERT(acct_claim_get(a, "c1", NULL, &w, &begin) == 0 && w == 0.5 && begin == T0);
        CU_ASSERT(acct_claim_set_weight(a, "c1", 0.5, T0 + 400) == 0); /* the same: nothing changes */
        CU_ASSERT(acct_claim_set_weight(a, "nope", 1, T0 + 400) == -ENOENT);
        CU_ASSERT(acct_claim_set_weight(a, "c1", -1, T0 + 400) == -EINVAL);
        CU_ASSERT(acct_claim_set_weight(a, "c1", NAN, T0 + 400) == -EINVAL);
        CU_ASSERT(acct_claim_end(a, "c1", T0 + 500) == 0);
        e = get(a, "group_a.alice@pool.test");
        GLEAN_TEST_CHECK(e.in_use == 0 && e.weighted_in_use == 0 && e.weighted_accumulated == 300 + 0.5 * 400,
                         "ended: in_use %u/%g wacc %g", e.in_use, e.weighted_in_use, e.weighted_accumulated);
        acct_close(a);
}

/* The same usage history with priority updates at random moments, or at
 * none, gives the same priorities (3.4.4: non-uniform intervals). */
static void test_updates_do_not_matter(void) {
        Accountant *many = open_acct(NULL, NULL, 0, T0), *none = open_acct(NULL, NULL, 0, T0);
        unsigned seed = 7;
        double t = T0;
        char id[32];

        for (int i = 0; i < 2000; i++) {
                int op = rand_r(&seed) % 4;
                t += rand_r(&seed) % 5000 + rand_r(&seed) % 1000 / 1000.0;
                snprintf(id, sizeof(id), "c%d", rand_r(&seed) % 40);
                const char *who = (const char *[]){ "a@pool.test", "b@pool.test", "c@x.org" }[rand_r(&seed) % 3];
                double w = 1 + rand_r(&seed) % 8;
                if (op < 2) {
                        int r1 = acct_claim_begin(many, id, who, w, t), r2 = acct_claim_begin(none, id, who, w, t);
                        CU_ASSERT(r1 == r2);
                } else if (op == 2) {
                        CU_ASSERT(acct_claim_end(many, id, t) == acct_claim_end(none, id, t));
                } else
                        CU_ASSERT(acct_update(many, t, NULL, NULL) == 0);
        }
        t += 3 * DAY;
        CU_ASSERT(acct_update(many, t, NULL, NULL) == 0);
        CU_ASSERT(acct_update(none, t, NULL, NULL) == 0);
        for (int i = 0; i < 3; i++) {
                const char *who = (const char *[]){ "a@pool.test", "b@pool.test", "c@x.org" }[i];
                AcctEntry x = {}, y = {};
                acct_get(many, who, &x);
                acct_get(none, who, &y);
                GLEAN_TEST_CHECK(fabs(x.rup - y.rup) <= 1e-9 && near(x.weighted_accumulated, y.weighted_accumulated, 1e-12),
                                 "%s: rup %.15g vs %.15g, usage %.15g vs %.15g", who, x.rup, y.rup,
                                 x.weighted_accumulated, y.weighted_accumulated);
        }
        acct_close(many);
        acct_close(none);
}

/* 3.4.1: steadily using ten slots, the priority stabilises at ten; all
 * jobs removed, it halves every half-life. */
static void test_steady_usage(void) {
        Accountant *a = open_acct(NULL, NULL, 0, T0);
        char id[16];
        AcctEntry e;

        for (int i = 0; i < 10; i++) {
                snprintf(id, sizeof(id), "c%d", i);
                CU_ASSERT(acct_claim_begin(a, id, "alice@pool.test", 1, T0) == 0);
        }
        for (int d = 1; d <= 60; d++)
                CU_ASSERT(acct_update(a, T0 + d * DAY, NULL, NULL) == 0);
        e = get(a, "alice@pool.test");
        GLEAN_TEST_CHECK(near(e.rup, 10, 1e-12) && e.weighted_in_use == 10, "after 60 days: %.15g", e.rup);
        for (int i = 0; i < 10; i++) {
                snprintf(id, sizeof(id), "c%d", i);
                CU_ASSERT(acct_claim_end(a, id, T0 + 60 * DAY) == 0);
        }
        CU_ASSERT(acct_update(a, T0 + 61 * DAY, NULL, NULL) == 0);
        GLEAN_TEST_CHECK(near(get(a, "alice@pool.test").rup, 5, 1e-12), "a day later: %.15g",
                         get(a, "alice@pool.test").rup);
        CU_ASSERT(acct_update(a, T0 + 62 * DAY, NULL, NULL) == 0);
        GLEAN_TEST_CHECK(near(get(a, "alice@pool.test").rup, 2.5, 1e-12), "two days later: %.15g",
                         get(a, "alice@pool.test").rup);
        acct_close(a);
}

/* Seed 004: with a tiny half-life the priority is the current usage. */
static void test_short_halflife(void) {
        Accountant *a = open_acct("PRIORITY_HALFLIFE = 0.0001", NULL, 0, T0);

        CU_ASSERT(acct_claim_begin(a, "c1", "u@pool.test", 3, T0) == 0);
        CU_ASSERT(acct_claim_begin(a, "c2", "u@pool.test", 4, T0 + 10) == 0);
        CU_ASSERT(acct_update(a, T0 + 20, NULL, NULL) == 0);
        GLEAN_TEST_CHECK(near(get(a, "u@pool.test").rup, 7, 1e-12), "7 slots: %g", get(a, "u@pool.test").rup);
        CU_ASSERT(acct_claim_end(a, "c1", T0 + 30) == 0);
        CU_ASSERT(acct_claim_end(a, "c2", T0 + 30) == 0);
        CU_ASSERT(acct_update(a, T0 + 31, NULL, NULL) == 0);
        /* Back to the baseline at once, and so forgotten. */
        AcctEntry e;
        CU_ASSERT(acct_get(a, "u@pool.test", &e) == -ENOENT);
        GLEAN_TEST_CHECK(e.rup == 0.5 && e.eup == 0.5, "new: %g %g", e.rup, e.eup);
        acct_close(a);
}

static const char group_config[] = "GROUP_NAMES = group_physics, group_physics.lab1, group_chem\n"
                                   "GROUP_QUOTA_group_physics = 10\n"
                                   "GROUP_PRIO_FACTOR_group_chem = 3\n";

/* Usage rolls up: a submitter, its quota group and the group's ancestors;
 * what is in no group to <none>. */
static void test_group_rollup(void) {
        Accountant *a = open_acct(group_config, NULL, 0, T0);
        const AcctGroups *g = acct_groups(a);
        size_t lab1, phys, chem;
        AcctEntry e;

        CU_ASSERT_FATAL(acct_groups_find(g, "group_physics.lab1", &lab1) == 0);
        CU_ASSERT_FATAL(acct_groups_find(g, "GROUP_PHYSICS", &phys) == 0);
        CU_ASSERT_FATAL(acct_groups_find(g, "group_chem", &chem) == 0);
        CU_ASSERT(acct_claim_begin(a, "c1", "group_physics.lab1.alice@pool.test", 2, T0) == 0);
        CU_ASSERT(acct_claim_begin(a, "c2", "group_physics.bob@pool.test", 1, T0) == 0);
        CU_ASSERT(acct_claim_begin(a, "c3", "carol@pool.test", 4, T0) == 0);
        CU_ASSERT(acct_claim_begin(a, "c4", "group_chem.dave@pool.test", 8, T0) == 0);
        CU_ASSERT(acct_update(a, T0 + 3600, NULL, NULL) == 0);

        static const struct {
                const char *name;
                double in_use;
                unsigned claims;
        } want[] = {
                { "group_physics.lab1.alice@pool.test", 2, 1 }, { "group_physics.lab1", 2, 1 },
                { "group_physics", 3, 2 },  { "group_chem", 8, 1 },
                { "<none>", 4, 1 },         { "carol@pool.test", 4, 1 },
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                e = get(a, want[i].name);
                GLEAN_TEST_CHECK(e.weighted_in_use == want[i].in_use && e.in_use == want[i].claims &&
                                         e.weighted_accumulated == want[i].in_use * 3600,
                                 "%s: in use %g (%u), usage %g", want[i].name, e.weighted_in_use, e.in_use,
                                 e.weighted_accumulated);
        }
        CU_ASSERT(get(a, "group_physics.lab1.alice@pool.test").group == lab1);
        CU_ASSERT(get(a, "group_physics.bob@pool.test").group == phys);
        CU_ASSERT(get(a, "carol@pool.test").group == 0);
        CU_ASSERT(get(a, "group_physics").is_group && get(a, "<none>").is_group);
        /* GROUP_PRIO_FACTOR_<g> for the group's submitters and its roll-up. */
        e = get(a, "group_chem.dave@pool.test");
        GLEAN_TEST_CHECK(e.factor == 3 && near(e.eup, 3 * e.rup, 1e-15), "group factor: %g", e.factor);
        CU_ASSERT(get(a, "group_chem").factor == 3);
        acct_close(a);
}

/* 3.4.2: the factor chain, and EUP = RUP * factor. */
static void test_factors(void) {
        static const struct {
                const char *config, *name;
                double want;
        } rows[] = {
                { "", "alice@pool.test", 1.0 },
                { "DEFAULT_PRIO_FACTOR = 1000", "alice@pool.test", 1000 },
                { "", "nice-user.alice@pool.test", 1e7 },
                { "NICE_USER_PRIO_FACTOR = 1e10", "nice-user.alice@pool.test", 1e10 },
                { "", "eve@elsewhere.org", 1e7 },
                { "REMOTE_PRIO_FACTOR = 50", "eve@elsewhere.org", 50 },
                { "", "eve@POOL.TEST", 1.0 },
                { "ACCOUNTANT_LOCAL_DOMAIN = elsewhere.org", "eve@elsewhere.org", 1.0 },
                { "ACCOUNTANT_LOCAL_DOMAIN = elsewhere.org", "alice@pool.test", 1e7 },
                { "GROUP_NAMES = g\nGROUP_PRIO_FACTOR_g = 4", "g.alice@pool.test", 4 },
                { "GROUP_NAMES = g\nGROUP_PRIO_FACTOR_g = 4", "g.eve@elsewhere.org", 4 },
                { "GROUP_NAMES = g\nGROUP_PRIO_FACTOR_g = 4", "nice-user.g.alice@pool.test", 1e7 },
                { "GROUP_NAMES = g", "g.alice@pool.test", 1.0 },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                Accountant *a = open_acct(rows[i].config, NULL, 0, T0);
                AcctEntry e;

                CU_ASSERT(acct_claim_begin(a, "c", rows[i].name, 1, T0) == 0);
                CU_ASSERT(acct_update(a, T0 + DAY, NULL, NULL) == 0);
                e = get(a, rows[i].name);
                GLEAN_TEST_CHECK(e.factor == rows[i].want && !e.factor_set && near(e.eup, e.rup * rows[i].want, 1e-15),
                                 "row %zu (%s): factor %g, want %g", i, rows[i].name, e.factor, rows[i].want);
                CU_ASSERT(acct_default_factor(a, rows[i].name) == rows[i].want);
                /* An administrator's factor wins over the chain. */
                CU_ASSERT(acct_set_factor(a, rows[i].name, 2.5, T0 + DAY) == 0);
                e = get(a, rows[i].name);
                GLEAN_TEST_CHECK(e.factor == 2.5 && e.factor_set, "row %zu: set factor %g", i, e.factor);
                acct_close(a);
        }
}

static bool has_jobs_bob(void *userdata, const char *name) {
        (void) userdata;
        return strcmp(name, "bob@pool.test") == 0;
}

/* Entries that carry nothing are forgotten; those with claims, jobs or an
 * administrator's factor are kept, and configured groups stay listed. */
static void test_forget(void) {
        Accountant *a = open_acct("GROUP_NAMES = g", NULL, 0, T0);
        AcctEntry *list = NULL, e;
        size_t n = 0;

        for (int i = 0; i < 4; i++) {
                const char *who = (const char *[]){ "alice@pool.test", "bob@pool.test", "carol@pool.test",
                                                     "g.dave@pool.test" }[i];
                char id[16];
                snprintf(id, sizeof(id), "c%d", i);
                CU_ASSERT(acct_claim_begin(a, id, who, 1, T0) == 0);
                CU_ASSERT(acct_claim_end(a, id, T0 + 3600) == 0);
        }
        CU_ASSERT(acct_set_factor(a, "carol@pool.test", 2, T0 + 3600) == 0);
        CU_ASSERT(acct_update(a, T0 + 3600, has_jobs_bob, NULL) == 0);
        CU_ASSERT(acct_get(a, "alice@pool.test", &e) == 0); /* still above 0.5 */
        CU_ASSERT(acct_update(a, T0 + 30 * DAY, has_jobs_bob, NULL) == 0);
        CU_ASSERT(acct_get(a, "alice@pool.test", &e) == -ENOENT);
        CU_ASSERT(acct_get(a, "g.dave@pool.test", &e) == -ENOENT);
        CU_ASSERT(acct_get(a, "bob@pool.test", &e) == 0);   /* has jobs */
        CU_ASSERT(acct_get(a, "carol@pool.test", &e) == 0); /* a factor set */
        CU_ASSERT(acct_get(a, "g", &e) == 0 && e.is_group && e.weighted_accumulated == 0 && e.rup == 0.5);
        CU_ASSERT(acct_list(a, &list, &n) == 0);
        CU_ASSERT(n == 4); /* bob, carol, g, <none> */
        free(list);
        acct_close(a);
}

static void test_admin(void) {
        Accountant *a = open_acct("GROUP_NAMES = g", NULL, 0, T0);
        AcctEntry e;

        CU_ASSERT(acct_claim_begin(a, "c1", "alice@pool.test", 2, T0) == 0);
        CU_ASSERT(acct_claim_begin(a, "c2", "bob@pool.test", 1, T0) == 0);
        CU_ASSERT(acct_claim_end(a, "c2", T0 + 100) == 0);
        /* A user@domain not seen yet is made known by a factor or priority
         * (HTCondor's accountant); a name without a domain is not. */
        CU_ASSERT(acct_set_factor(a, "nobody@pool.test", 0.5, T0) == -EINVAL);
        CU_ASSERT(acct_set_factor(a, "nobody", 2, T0) == -ENOENT);
        CU_ASSERT(acct_set_factor(a, "@pool.test", 2, T0) == -ENOENT);
        CU_ASSERT(acct_set_factor(a, "a@b@c", 2, T0) == -ENOENT);
        CU_ASSERT(acct_set_priority(a, "x y@pool.test", 2, T0) == -ENOENT);
        CU_ASSERT(acct_set_factor(a, "nobody@pool.test", 2, T0) == 0);
        CU_ASSERT(get(a, "nobody@pool.test").factor == 2 && get(a, "nobody@pool.test").rup == 0.5);
        CU_ASSERT(acct_set_priority(a, "frank@pool.test", 3, T0) == 0);
        CU_ASSERT(get(a, "frank@pool.test").rup == 3 && get(a, "frank@pool.test").factor == 1);
        /* A submitter made known (with jobs, before any claim) can be given a factor. */
        CU_ASSERT(acct_ensure(a, "erin@pool.test", T0) == 1);
        CU_ASSERT(acct_ensure(a, "erin@pool.test", T0) == 0);
        CU_ASSERT(acct_ensure(a, "bad name", T0) == -EINVAL);
        CU_ASSERT(acct_set_factor(a, "erin@pool.test", 7, T0) == 0);
        CU_ASSERT(get(a, "erin@pool.test").factor == 7 && get(a, "erin@pool.test").rup == 0.5);
        CU_ASSERT(acct_reset_usage(a, "ghost@pool.test", T0) == -ENOENT);
        CU_ASSERT(acct_delete(a, "ghost@pool.test", T0) == -ENOENT);
        CU_ASSERT(acct_set_factor(a, "alice@pool.test", 0.5, T0) == -EINVAL);
        CU_ASSERT(acct_set_factor(a, "alice@pool.test", -3, T0) == -EINVAL);
        CU_ASSERT(acct_set_factor(a, "alice@pool.test", NAN, T0) == -EINVAL);
        CU_ASSERT(acct_set_factor(a, "alice@pool.test", INFINITY, T0) == -EINVAL);
        CU_ASSERT(acct_set_priority(a, "alice@pool.test", 0.25, T0) == -EINVAL);
        CU_ASSERT(acct_set_priority(a, "alice@pool.test", NAN, T0) == -EINVAL);
        CU_ASSERT(get(a, "alice@pool.test").factor == 1.0 && !get(a, "alice@pool.test").factor_set);

        CU_ASSERT(acct_set_priority(a, "alice@pool.test", 40, T0 + 1000) == 0);
        e = get(a, "alice@pool.test");
        CU_ASSERT(e.rup == 40 && e.eup == 40);
        /* It moves on from there with the usage: half way to 2 a day later. */
        CU_ASSERT(acct_update(a, T0 + 1000 + DAY, NULL, NULL) == 0);
        GLEAN_TEST_CHECK(near(get(a, "alice@pool.test").rup, 21, 1e-12), "a day after setprio 40: %.15g",
                         get(a, "alice@pool.test").rup);

        CU_ASSERT(acct_reset_usage(a, "alice@pool.test", T0 + 1000 + DAY) == 0);
        e = get(a, "alice@pool.test");
        CU_ASSERT(e.accumulated == 0 && e.weighted_accumulated == 0 && e.begin_usage == T0 + 1000 + DAY && e.in_use == 1);
        CU_ASSERT(acct_delete(a, "alice@pool.test", T0 + 1000 + DAY) == -EBUSY);
        CU_ASSERT(acct_delete(a, "g", T0 + 1000 + DAY) == -EPERM);
        /* bob, back at 0.5 and idle, was forgotten by the update; dan is deleted. */
        CU_ASSERT(acct_get(a, "bob@pool.test", &e) == -ENOENT);
        CU_ASSERT(acct_claim_begin(a, "c3", "dan@pool.test", 1, T0 + 1000 + DAY) == 0);
        CU_ASSERT(acct_claim_end(a, "c3", T0 + 2000 + DAY) == 0);
        CU_ASSERT(acct_delete(a, "dan@pool.test", T0 + 2000 + DAY) == 0);
        CU_ASSERT(acct_get(a, "dan@pool.test", &e) == -ENOENT);
        CU_ASSERT(acct_delete(a, "dan@pool.test", T0 + 2000 + DAY) == -ENOENT);
        acct_close(a);
}

static int by_name(const void *x, const void *y) {
        return strcmp(((const AcctEntry *) x)->name, ((const AcctEntry *) y)->name);
}

/* Two accountants hold the same accounts (within tol). */
static bool same_accounts(Accountant *x, Accountant *y, double tol, char *why, size_t whylen) {
        AcctEntry *lx = NULL, *ly = NULL;
        size_t nx = 0, ny = 0;
        bool ok = true;

        CU_ASSERT_FATAL(acct_list(x, &lx, &nx) == 0 && acct_list(y, &ly, &ny) == 0);
        qsort(lx, nx, sizeof(*lx), by_name);
        qsort(ly, ny, sizeof(*ly), by_name);
        if (nx != ny) {
                snprintf(why, whylen, "%zu entries vs %zu", nx, ny);
                ok = false;
        }
        for (size_t i = 0; ok && i < nx; i++) {
                const AcctEntry *a = &lx[i], *b = &ly[i];
                if (strcmp(a->name, b->name) || a->in_use != b->in_use || !near(a->rup, b->rup, tol) ||
                    a->factor != b->factor || !near(a->weighted_in_use, b->weighted_in_use, tol) ||
                    !near(a->accumulated, b->accumulated, tol) || !near(a->weighted_accumulated, b->weighted_accumulated, tol) ||
                    a->begin_usage != b->begin_usage || !near(a->last_usage, b->last_usage, tol)) {
                        snprintf(why, whylen, "%s/%s: rup %.15g/%.15g in use %u/%u factor %g/%g acc %.15g/%.15g", a->name,
                                 b->name, a->rup, b->rup, a->in_use, b->in_use, a->factor, b->factor,
                                 a->weighted_accumulated, b->weighted_accumulated);
                        ok = false;
                }
        }
        if (ok && acct_claims_count(x) != acct_claims_count(y)) {
                snprintf(why, whylen, "%zu claims vs %zu", acct_claims_count(x), acct_claims_count(y));
                ok = false;
        }
        free(lx);
        free(ly);
        return ok;
}

/* Operation i of a deterministic history (the same for every seed use). */
static int apply_op(Accountant *a, unsigned i) {
        unsigned seed = i * 2654435761u + 1;
        double t = T0 + i * 37.25;
        char id[16], who[40];
        int op = rand_r(&seed) % 10;

        snprintf(id, sizeof(id), "c%d", rand_r(&seed) % 64);
        snprintf(who, sizeof(who), "%su%d@pool.test", rand_r(&seed) % 3 ? "g.h." : "", rand_r(&seed) % 9);
        if (op < 5)
                return acct_claim_begin(a, id, who, 1 + rand_r(&seed) % 4, t);
        if (op < 8)
                return acct_claim_end(a, id, t);
        if (op == 8)
                return acct_set_factor(a, who, 1 + rand_r(&seed) % 5, t);
        return acct_update(a, t, NULL, NULL);
}

static const char kill_config[] = "GROUP_NAMES = g, g.h\n";

/* The accounts after a close and a reopen are the ones before. */
static void test_reopen(void) {
        char path[128];
        Accountant *a, *mem, *b;
        char why[256] = "";

        snprintf(path, sizeof(path), "%s/reopen.db", tmpdir);
        a = open_acct(kill_config, path, 0, T0);
        mem = open_acct(kill_config, NULL, 0, T0);
        for (unsigned i = 0; i < 500; i++) {
                int r1 = apply_op(a, i), r2 = apply_op(mem, i);
                CU_ASSERT(r1 == r2);
        }
        acct_close(a);
        b = open_acct(kill_config, path, 0, T0);
        CU_ASSERT(acct_update(b, T0 + 500 * 37.25 + 10, NULL, NULL) == 0);
        CU_ASSERT(acct_update(mem, T0 + 500 * 37.25 + 10, NULL, NULL) == 0);
        GLEAN_TEST_CHECK(same_accounts(b, mem, 1e-9, why, sizeof(why)), "reopened: %s", why);
        CU_ASSERT(acct_claims_count(b) > 0);

        /* A reader sees them too, and may not change them. */
        Accountant *ro = open_acct(kill_config, path, ACCT_OPEN_READONLY, T0);
        CU_ASSERT(acct_update(ro, T0 + 500 * 37.25 + 10, NULL, NULL) == 0);
        GLEAN_TEST_CHECK(same_accounts(ro, mem, 1e-9, why, sizeof(why)), "read-only: %s", why);
        CU_ASSERT(acct_claim_begin(ro, "x", "u@pool.test", 1, T0 + 1e6) == -EROFS);
        CU_ASSERT(acct_set_factor(ro, "u1@pool.test", 3, T0 + 1e6) == -EROFS || acct_set_factor(ro, "u1@pool.test", 3, T0 + 1e6) == -ENOENT);
        CU_ASSERT(acct_batch_begin(ro) == -EROFS);
        acct_close(ro);

        /* A batch is one transaction, and lands whole. */
        CU_ASSERT(acct_batch_begin(b) == 0);
        CU_ASSERT(acct_batch_begin(b) == -EBUSY);
        CU_ASSERT(acct_claim_begin(b, "batch1", "zed@pool.test", 1, T0 + 1e6) == 0);
        CU_ASSERT(acct_claim_begin(b, "batch2", "zed@pool.test", 1, T0 + 1e6) == 0);
        CU_ASSERT(acct_batch_commit(b) == 0);
        CU_ASSERT(acct_batch_commit(b) == -EINVAL);
        acct_close(b);
        b = open_acct(kill_config, path, ACCT_OPEN_READONLY, T0);
        CU_ASSERT(acct_claim_get(b, "batch2", NULL, NULL, NULL) == 0);
        CU_ASSERT(get(b, "zed@pool.test").in_use == 2);
        acct_close(b);
        acct_close(mem);

        /* A read-only open of a database that does not exist fails, saying which. */
        {
                Config *cfg = NULL;
                ConfigError err = {};
                AcctSettings s = {};
                AcctGroups *g = NULL;
                Accountant *none = NULL;
                char missing[160];
                int r;

                snprintf(missing, sizeof(missing), "%s/missing.db", tmpdir);
                CU_ASSERT_FATAL(config_new(&cfg) == 0);
                CU_ASSERT_FATAL(acct_settings_from_config(cfg, &s, &err) == 0 && acct_groups_from_config(cfg, &g, &err) == 0);
                r = acct_open(missing, ACCT_OPEN_READONLY, NULL, &s, g, T0, &none, why, sizeof(why));
                GLEAN_TEST_CHECK(r < 0 && !none && strstr(why, missing), "missing: %d '%s'", r, why);
                CU_ASSERT(access(missing, F_OK) < 0);
                config_free(cfg);
        }
}

/* Copies a database and its write-ahead log (no process has them open);
 * none, when a child was killed before it made the file. */
static void copy_db(const char *from, const char *to) {
        char cmd[2048];

        snprintf(cmd, sizeof(cmd),
                 "rm -f '%s' '%s-wal' '%s-shm'; [ ! -e '%s' ] || { cp '%s' '%s' && { [ ! -e '%s-wal' ] || cp '%s-wal' '%s-wal'; }; }",
                 to, to, to, from, from, to, from, from, to);
        CU_ASSERT_FATAL(system(cmd) == 0);
}

/* kill -9 at any moment: the accounts reopened are exactly those after
 * the last change that committed (n, or n + 1 when the commit landed but
 * its report did not reach us). */
static void test_kill9(void) {
        char path[128], check[128], why[256] = "";
        unsigned next = 0;
        unsigned seed = 99;

        snprintf(path, sizeof(path), "%s/kill.db", tmpdir);
        snprintf(check, sizeof(check), "%s/check.db", tmpdir);
        for (int round = 0; round < 12; round++) {
                int fds[2];
                pid_t pid;
                unsigned last = next, got;
                bool any = false;

                CU_ASSERT_FATAL(pipe(fds) == 0);
                pid = fork();
                CU_ASSERT_FATAL(pid >= 0);
                if (pid == 0) {
                        char cwhy[256];
                        Accountant *a = open_acct_or_null(kill_config, path, 0, T0, cwhy, sizeof(cwhy));
                        if (!a)
                                _exit(5);
                        close(fds[0]);
                        for (unsigned i = next;; i++) {
                                int r = apply_op(a, i);
                                if (r < 0 && r != -ENOENT && r != -EEXIST)
                                        _exit(3);
                                if (write(fds[1], &i, sizeof(i)) != sizeof(i))
                                        _exit(4);
                        }
                }
                close(fds[1]);
                struct timespec d = { 0, (long) (rand_r(&seed) % 40 + 5) * 1000000L };
                nanosleep(&d, NULL);
                kill(pid, SIGKILL);
                while (read(fds[0], &got, sizeof(got)) == sizeof(got)) {
                        last = got;
                        any = true;
                }
                close(fds[0]);
                int status;
                waitpid(pid, &status, 0);
                CU_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

                /* Replay 0..last in memory; the store holds that or one more. */
                unsigned done = any ? last + 1 : next;
                /* Checked on a copy: the next child goes on from the original
                 * at the times of its changes, not at those of this check. */
                copy_db(path, check);
                Accountant *mem = open_acct(kill_config, NULL, 0, T0), *disk = open_acct(kill_config, check, 0, T0);
                for (unsigned i = 0; i < done; i++)
                        (void) apply_op(mem, i);
                double t = T0 + (done + 2) * 37.25;
                CU_ASSERT(acct_update(disk, t, NULL, NULL) == 0 && acct_update(mem, t, NULL, NULL) == 0);
                bool ok = same_accounts(disk, mem, 1e-9, why, sizeof(why));
                if (!ok) {
                        /* The change after the last reported one committed. */
                        acct_close(mem);
                        mem = open_acct(kill_config, NULL, 0, T0);
                        for (unsigned i = 0; i <= done; i++)
                                (void) apply_op(mem, i);
                        CU_ASSERT(acct_update(mem, t, NULL, NULL) == 0);
                        ok = same_accounts(disk, mem, 1e-9, why, sizeof(why));
                        done++;
                }
                GLEAN_TEST_CHECK(ok, "round %d, after change %u: %s", round, done, why);
                acct_close(mem);
                acct_close(disk);
                next = done;
                if (!ok)
                        break;
        }
        printf("(%u changes over 12 kills) ", next);
}

/* Rows no write of ours could have made (the file is outside input):
 * the database is refused, saying which row and why, and left as it is. */
static void test_bad_rows(void) {
        static const struct {
                const char *sql, *why;
        } rows[] = {
                { "UPDATE acct_records SET priority = -5 WHERE name = 'alice@pool.test'",
                  "entry 'alice@pool.test': priority -5 is not possible" },
                { "UPDATE acct_records SET priority = 1e999 WHERE name = 'alice@pool.test'", "priority inf" },
                { "UPDATE acct_records SET factor = 0.25 WHERE name = 'alice@pool.test'", "factor 0.25" },
                { "UPDATE acct_records SET as_of = -1e999 WHERE name = 'alice@pool.test'", "time -inf" },
                { "UPDATE acct_records SET weighted_accumulated = -3 WHERE name = 'alice@pool.test'", "usage -3" },
                { "UPDATE acct_records SET name = 'al ice' WHERE name = 'alice@pool.test'", "an entry named 'al ice'" },
                { "UPDATE acct_claims SET weight = -2", "claim 'c1': weight -2" },
                { "UPDATE acct_claims SET begin = 1e999", "claim 'c1': begin time inf" },
                { "INSERT INTO acct_meta VALUES ('pool_size', 1e999)", "value 'pool_size': number inf" },
        };
        char path[128], why[512];

        snprintf(path, sizeof(path), "%s/rows.db", tmpdir);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                Accountant *a;
                sqlite3 *db = NULL;
                char *err = NULL;

                unlink(path);
                a = open_acct(NULL, path, 0, T0);
                CU_ASSERT(acct_claim_begin(a, "c1", "alice@pool.test", 2, T0) == 0);
                acct_close(a);
                CU_ASSERT_FATAL(sqlite3_open(path, &db) == SQLITE_OK);
                GLEAN_TEST_CHECK(sqlite3_exec(db, rows[i].sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", rows[i].sql,
                                 err ? err : "");
                sqlite3_free(err);
                sqlite3_close(db);
                why[0] = '\0';
                a = open_acct_or_null(NULL, path, 0, T0, why, sizeof(why));
                GLEAN_TEST_CHECK(!a && strstr(why, rows[i].why) && strstr(why, path), "row %zu: opened %p, '%s'", i,
                                 (void *) a, why);
                acct_close(a);
        }
}

/* A reconfiguration: a new group takes its submitters' claims in its
 * roll-up, usage charged so far stays charged, and the store agrees. */
static void test_reconfigure(void) {
        char path[128];
        Accountant *a, *b;
        Config *cfg = NULL;
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        AcctEntry e;
        size_t gi;

        snprintf(path, sizeof(path), "%s/reconf.db", tmpdir);
        a = open_acct(NULL, path, 0, T0);
        CU_ASSERT(acct_claim_begin(a, "c1", "g.alice@pool.test", 2, T0) == 0);
        CU_ASSERT(acct_update(a, T0 + 3600, NULL, NULL) == 0);
        CU_ASSERT(get(a, "<none>").weighted_in_use == 2);

        CU_ASSERT_FATAL(config_new(&cfg) == 0);
        CU_ASSERT_FATAL(config_load_string(cfg, "UID_DOMAIN = pool.test\nGROUP_NAMES = g\nPRIORITY_HALFLIFE = 86400\n",
                                           "<t>", &err) == 0);
        CU_ASSERT_FATAL(acct_settings_from_config(cfg, &s, &err) == 0 && acct_groups_from_config(cfg, &g, &err) == 0);
        config_free(cfg);
        CU_ASSERT_FATAL(acct_reconfigure(a, &s, g, T0 + 3600) == 0);
        CU_ASSERT_FATAL(acct_groups_find(acct_groups(a), "g", &gi) == 0);
        e = get(a, "g.alice@pool.test");
        GLEAN_TEST_CHECK(e.group == gi && e.weighted_accumulated == 7200, "alice: group %zu usage %g", e.group,
                         e.weighted_accumulated);
        GLEAN_TEST_CHECK(get(a, "g").weighted_in_use == 2 && get(a, "<none>").weighted_in_use == 0,
                         "g %g <none> %g", get(a, "g").weighted_in_use, get(a, "<none>").weighted_in_use);
        CU_ASSERT(acct_claim_end(a, "c1", T0 + 7200) == 0);
        CU_ASSERT(acct_update(a, T0 + 7200, NULL, NULL) == 0);
        acct_close(a);

        b = open_acct("GROUP_NAMES = g", path, 0, T0);
        e = get(b, "g.alice@pool.test");
        GLEAN_TEST_CHECK(e.weighted_accumulated == 14400 && get(b, "g").weighted_accumulated == 7200,
                         "reopened: alice %g, g %g", e.weighted_accumulated, get(b, "g").weighted_accumulated);
        acct_close(b);
}

static CU_TestInfo tests[] = {
        { "claim_charge", test_claim_charge },
        { "claim_set_weight", test_claim_set_weight },
        { "updates_do_not_matter", test_updates_do_not_matter },
        { "steady_usage", test_steady_usage },
        { "short_halflife", test_short_halflife },
        { "group_rollup", test_group_rollup },
        { "factors", test_factors },
        { "forget", test_forget },
        { "admin", test_admin },
        { "reopen", test_reopen },
        { "kill9", test_kill9 },
        { "bad_rows", test_bad_rows },
        { "reconfigure", test_reconfigure },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "accounts", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-prio.c — the priority arithmetic (seed 000, 3.4.1, 3.4.2, 3.4.4 and
 * 3.4.6; seed 001; seed 004) and who a job is charged to (3.4.7).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting/accounting.h"
#include "test-util.h"

#define DAY 86400.0

static bool near(double a, double b, double tol) {
        return fabs(a - b) <= tol * fmax(1.0, fabs(b));
}

static void test_decay(void) {
        static const struct {
                double dt, h, want;
        } rows[] = {
                { 0, DAY, 1.0 },         { DAY, DAY, 0.5 },     { 2 * DAY, DAY, 0.25 },
                { DAY / 2, DAY, M_SQRT1_2 }, { 60, 0, 0.0 },    { 60, -1, 0.0 },
                { 60, 1e-4, 0.0 },       { -5, DAY, 1.0 },      { 0, 0, 1.0 },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                double got = acct_decay(rows[i].dt, rows[i].h);
                GLEAN_TEST_CHECK(near(got, rows[i].want, 1e-15), "row %zu: decay(%g, %g) = %.17g, want %.17g", i,
                                 rows[i].dt, rows[i].h, got, rows[i].want);
        }
}

/* 3.4.1: RUP 10, no more usage: 5 a half-life later, 2.5 after two; seed
 * 001: 100 then 50 then 25; never below 0.5; the short-half-life limit of
 * seed 004: the priority follows the current usage. */
static void test_rup_rows(void) {
        static const struct {
                const char *what;
                double rup, usage, dt, h, want;
        } rows[] = {
                { "3.4.1 one half-life", 10, 0, DAY, DAY, 5 },
                { "3.4.1 two half-lives", 10, 0, 2 * DAY, DAY, 2.5 },
                { "seed 001 one day", 100, 0, DAY, DAY, 50 },
                { "seed 001 two days", 100, 0, 2 * DAY, DAY, 25 },
                { "floor", 0.6, 0, 10 * DAY, DAY, 0.5 },
                { "floor from the start", 0.5, 0, DAY, DAY, 0.5 },
                { "half way to the usage", 0.5, 10.5, DAY, DAY, 5.5 },
                { "no time, no change", 7, 100, 0, DAY, 7 },
                { "seed 004: follows usage", 100, 7, 60, 1e-4, 7 },
                { "seed 004: no usage, baseline at once", 100, 0, 60, 1e-4, 0.5 },
                { "seed 004: usage rises", 0.5, 12, 1, 1e-4, 12 },
                { "fractional usage below the floor", 3, 0.25, 100 * DAY, DAY, 0.5 },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                double got = acct_rup_advance(rows[i].rup, rows[i].usage, rows[i].dt, rows[i].h);
                GLEAN_TEST_CHECK(near(got, rows[i].want, 1e-12), "%s: got %.15g, want %.15g", rows[i].what, got,
                                 rows[i].want);
        }
}

/* 3.4.1: a user continuously using ten resources stabilises at ten. */
static void test_rup_converges(void) {
        double rup = ACCT_MIN_PRIORITY;

        for (int hour = 0; hour < 60 * 24; hour++) /* 60 days of hourly updates */
                rup = acct_rup_advance(rup, 10, 3600, DAY);
        GLEAN_TEST_CHECK(near(rup, 10, 1e-12), "after 60 half-lives: %.15g", rup);
        rup = acct_rup_advance(ACCT_MIN_PRIORITY, 10, 60 * DAY, DAY);
        GLEAN_TEST_CHECK(near(rup, 10, 1e-12), "in one step: %.15g", rup);
}

/* 3.4.4: beta = 0.5^(dt/h) makes the formula the same over non-uniform
 * intervals: a constant usage applied in one step or in many random ones. */
static void test_rup_steps(void) {
        unsigned seed = 12345;

        for (int trial = 0; trial < 200; trial++) {
                double start = 0.5 + rand_r(&seed) % 1000 / 7.0;
                double usage = rand_r(&seed) % 100 / 3.0;
                double total = 1 + rand_r(&seed) % (10 * 86400);
                double one = acct_rup_advance(start, usage, total, DAY);
                double many = start, left = total;

                while (left > 0) {
                        double dt = fmin(left, 1 + rand_r(&seed) % 7200 + rand_r(&seed) % 1000 / 1000.0);
                        many = acct_rup_advance(many, usage, dt, DAY);
                        left -= dt;
                }
                GLEAN_TEST_CHECK(fabs(one - many) <= 1e-9, "trial %d: start %g usage %g over %g s: %.15g vs %.15g",
                                 trial, start, usage, total, one, many);
        }
}

static void test_shares(void) {
        double eup[] = { 5, 10, 20 }, shares[3], sum = 0;
        double bad[][2] = { { 5, 0 }, { 5, -1 }, { 5, NAN }, { 5, INFINITY } };

        /* 3.4.2: A with EUP 5 gets twice B's (10) and four times C's (20). */
        CU_ASSERT_EQUAL_FATAL(acct_shares(eup, 3, shares), 0);
        GLEAN_TEST_CHECK(near(shares[0] * 70, 40, 1e-12) && near(shares[1] * 70, 20, 1e-12) &&
                                 near(shares[2] * 70, 10, 1e-12),
                         "70 slots: %g %g %g, want 40 20 10", shares[0] * 70, shares[1] * 70, shares[2] * 70);
        for (int i = 0; i < 3; i++)
                sum += shares[i];
        GLEAN_TEST_CHECK(near(sum, 1, 1e-15), "shares sum to %.17g", sum);

        /* A nice user (EUP 0.5 * 1e7) next to a user at 0.5: next to nothing. */
        double nice[] = { 0.5, 0.5 * 1e7 };
        CU_ASSERT_EQUAL(acct_shares(nice, 2, shares), 0);
        GLEAN_TEST_CHECK(shares[1] < 1e-6 && shares[0] > 0.999999, "nice share %g", shares[1]);

        CU_ASSERT_EQUAL(acct_shares(NULL, 0, NULL), 0);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                double out[2] = { -7, -7 };
                GLEAN_TEST_CHECK(acct_shares(bad[i], 2, out) == -EINVAL && out[0] == -7 && out[1] == -7,
                                 "EUP %g refused, output untouched", bad[i][1]);
        }
}

static void test_group_names(void) {
        static const struct {
                const char *name;
                int want;
                const char *why;
        } rows[] = {
                { "group_physics", 0, NULL },
                { "group_physics.newton", 0, NULL },
                { "a234567890123456789012345678901234567890", 0, NULL }, /* 40 */
                { "a2345678901234567890123456789012345678901", -EINVAL, "41 characters long, at most 40" },
                { "", -EINVAL, "cannot be empty" },
                { "group physics", -EINVAL, "white space" },
                { "group_physics@example.com", -EINVAL, "'@'" },
                { "g\"x", -EINVAL, "quote" },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                char why[256] = "";
                int r = acct_check_group_name(rows[i].name, why, sizeof(why));
                GLEAN_TEST_CHECK(r == rows[i].want, "'%s': %d, want %d", rows[i].name, r, rows[i].want);
                if (rows[i].why)
                        GLEAN_TEST_CHECK(strstr(why, rows[i].why), "'%s': reason '%s' lacks '%s'", rows[i].name, why,
                                         rows[i].why);
        }
}

static void test_job_submitter(void) {
        static const struct {
                const char *ad, *want, *why;
        } rows[] = {
                { "[ Owner = \"alice\"; User = \"alice@example.com\" ]", "alice@example.com", NULL },
                { "[ Owner = \"bob\" ]", "bob@pool.test", NULL },
                { "[ Owner = \"alice\"; AccountingGroup = \"group_physics.newton\" ]",
                  "group_physics.newton@pool.test", NULL },
                { "[ Owner = \"alice\"; AccountingGroup = \"group_physics\" ]", "group_physics@pool.test", NULL },
                { "[ User = \"alice@example.com\"; NiceUser = true ]", "nice-user.alice@example.com", NULL },
                { "[ Owner = \"alice\"; NiceUser = false ]", "alice@pool.test", NULL },
                { "[ Owner = \"a\"; NiceUser = true; AccountingGroup = \"g.a\" ]", "nice-user.g.a@pool.test", NULL },
                { "[ JobPrio = 3 ]", NULL, "no User or Owner" },
                { "[ Owner = \"\" ]", NULL, "no User or Owner" },
                { "[ Owner = \"a\"; AccountingGroup = 3 ]", NULL, "not a string" },
                { "[ Owner = \"a\"; AccountingGroup = \"group_with_a_name_much_longer_than_forty.u\" ]", NULL,
                  "at most 40" },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                ClassAd *ad = NULL;
                CaError perr = {};
                char why[256] = "", *got = NULL;
                int r;

                CU_ASSERT_FATAL(classad_parse(rows[i].ad, strlen(rows[i].ad), CA_MODE_OLD, &ad, &perr) == 0);
                r = acct_job_submitter(ad, "pool.test", &got, why, sizeof(why));
                if (rows[i].want)
                        GLEAN_TEST_CHECK(r == 0 && got && strcmp(got, rows[i].want) == 0, "%s: %d '%s', want '%s'",
                                         rows[i].ad, r, got ? got : "(null)", rows[i].want);
                else
                        GLEAN_TEST_CHECK(r == -EINVAL && !got && strstr(why, rows[i].why),
                                         "%s: %d '%s', want an error with '%s'", rows[i].ad, r, why, rows[i].why);
                free(got);
                classad_free(ad);
        }
}

static CU_TestInfo tests[] = {
        { "decay", test_decay },
        { "rup_rows", test_rup_rows },
        { "rup_converges", test_rup_converges },
        { "rup_steps", test_rup_steps },
        { "shares", test_shares },
        { "group_names", test_group_names },
        { "job_submitter", test_job_submitter },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "prio", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

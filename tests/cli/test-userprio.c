/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-userprio.c — `glean userprio` end to end on an accounts database
 * the test fills through the accounting library: the listing and its
 * options, --json, -quotas with and without a database, administrators'
 * changes, and bad input refused with the reason and nothing changed.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accounting/accounting.h"
#include "queue/queue.h"
#include "test-util.h"

static char tmpdir[64], db[128], conf[128];
static const char *glean;

static const char config_text[] = "UID_DOMAIN = pool.test\n"
                                  "GROUP_NAMES = group_physics, group_physics.lab1, group_physics.lab2, group_chem\n"
                                  "GROUP_QUOTA_group_physics = 100\n"
                                  "GROUP_QUOTA_group_physics.lab1 = 40\n"
                                  "GROUP_QUOTA_group_physics.lab2 = 80\n"
                                  "GROUP_QUOTA_DYNAMIC_group_chem = .2\n"
                                  "GROUP_ACCEPT_SURPLUS_group_chem = True\n";

/* The test's accounts, NULL (why says) when they cannot be opened. */
static Accountant *open_db_or_null(unsigned flags, double now, char *why, size_t whylen) {
        Config *cfg = NULL;
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        Accountant *a = NULL;

        if (config_new(&cfg) < 0 || config_load_string(cfg, config_text, "<test>", &err) < 0 ||
            acct_settings_from_config(cfg, &s, &err) < 0 || acct_groups_from_config(cfg, &g, &err) < 0) {
                snprintf(why, whylen, "config: %.400s", err.msg);
                acct_settings_clear(&s);
                config_free(cfg);
                return NULL;
        }
        config_free(cfg);
        return acct_open(db, flags, queue_schema(), &s, g, now, &a, why, whylen) < 0 ? NULL : a;
}

static Accountant *open_db(unsigned flags) {
        char why[512] = "";
        Accountant *a = open_db_or_null(flags, (double) time(NULL), why, sizeof(why));

        GLEAN_TEST_CHECK_FATAL(a, "%s", why);
        return a;
}

static int suite_init(void) {
        double now = (double) time(NULL);
        FILE *f;

        glean = getenv("GLEAN") ? getenv("GLEAN") : "build/bin/glean";
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-userprio-XXXXXX");
        if (!mkdtemp(tmpdir))
                return -1;
        chmod(tmpdir, 0755);
        snprintf(db, sizeof(db), "%s/accounts.db", tmpdir);
        snprintf(conf, sizeof(conf), "%s/glean.conf", tmpdir);
        f = fopen(conf, "w");
        if (!f)
                return -1;
        fputs(config_text, f);
        fclose(f);

        /* alice: 4 slots for the last hour; bob: 1 slot for 10 minutes an
         * hour ago; carol: 2 slots two days ago; lab1 and chem users. */
        char why[512] = "";
        Accountant *a = open_db_or_null(0, now - 3 * 86400, why, sizeof(why));
        if (!a) {
                fprintf(stderr, "%s\n", why);
                return -1;
        }
        /* (In time order: the accounts' clock never goes back.) */
        if (acct_claim_begin(a, "c1", "carol@pool.test", 2, now - 3 * 86400) < 0 ||
            acct_claim_end(a, "c1", now - 2 * 86400) < 0 ||
            acct_set_factor(a, "carol@pool.test", 3, now - 2 * 86400) < 0 ||
            acct_claim_begin(a, "a1", "alice@pool.test", 4, now - 3600) < 0 ||
            acct_claim_begin(a, "b1", "bob@pool.test", 1, now - 3600) < 0 ||
            acct_claim_end(a, "b1", now - 3000) < 0 ||
            acct_claim_begin(a, "l1", "group_physics.lab1.newton@pool.test", 8, now - 1800) < 0 ||
            acct_claim_begin(a, "h1", "group_chem.curie@pool.test", 2, now - 600) < 0 ||
            acct_set_meta(a, "pool_size", 300) < 0) {
                acct_close(a);
                return -1;
        }
        acct_close(a);
        return 0;
}

static int suite_clean(void) {
        char cmd[128];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
        return system(cmd) == 0 ? 0 : -1;
}

/* Runs glean userprio --config CONF --db DB ARGS... */
static GleanTestRun run(const char *a1, const char *a2, const char *a3, const char *a4) {
        char *argv[12] = { (char *) glean, "userprio", "--config", conf, "--db", db };
        const char *extra[] = { a1, a2, a3, a4 };
        GleanTestRun r = {};
        int n = 6;

        for (int i = 0; i < 4 && extra[i]; i++)
                argv[n++] = (char *) extra[i];
        argv[n] = NULL;
        CU_ASSERT_FATAL(glean_test_run(argv, &r) == 0);
        return r;
}

static const char *line_of(const char *out, const char *name) {
        const char *p = strstr(out, name);
        return p ? p : "";
}

static void test_list(void) {
        GleanTestRun r = run(NULL, NULL, NULL, NULL);
        const char *alice, *bob;

        GLEAN_TEST_CHECK(r.status == 0, "status %d: %s", r.status, r.err);
        CU_ASSERT(strstr(r.out, "Effective") && strstr(r.out, "Priority") && strstr(r.out, "Factor"));
        alice = strstr(r.out, "alice@pool.test");
        bob = strstr(r.out, "bob@pool.test");
        GLEAN_TEST_CHECK(alice && bob, "both active users listed:\n%s", r.out);
        /* By effective priority, best first: bob used less than alice. */
        GLEAN_TEST_CHECK(bob && alice && bob < alice, "bob before alice:\n%s", r.out);
        /* alice holds 4 slots now: "<now>" for her last usage, 4.00 in use. */
        GLEAN_TEST_CHECK(strstr(line_of(r.out, "alice@pool.test"), "<now>") &&
                                 strstr(line_of(r.out, "alice@pool.test"), "4.00"),
                         "alice's row: %.160s", line_of(r.out, "alice@pool.test"));
        /* carol was active two days ago: only with -allusers. */
        GLEAN_TEST_CHECK(!strstr(r.out, "carol@pool.test"), "carol hidden by default:\n%s", r.out);
        CU_ASSERT(strstr(r.out, "Number of users: 4") != NULL);
        glean_test_run_done(&r);

        r = run("-allusers", NULL, NULL, NULL);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "carol@pool.test") && strstr(r.out, "Number of users: 5"),
                         "-allusers:\n%s", r.out);
        GLEAN_TEST_CHECK(strstr(line_of(r.out, "carol@pool.test"), "3.00"), "carol's factor 3: %.120s",
                         line_of(r.out, "carol@pool.test"));
        glean_test_run_done(&r);

        r = run("--usage", NULL, NULL, NULL);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "Accumulated") && !strstr(r.out, "Effective"), "-usage:\n%s",
                         r.out);
        glean_test_run_done(&r);

        r = run("-grouprollup", NULL, NULL, NULL);
        const char *phys = strstr(r.out, "group_physics "), *lab1 = strstr(r.out, "  group_physics.lab1 "),
                   *newton = strstr(r.out, "group_physics.lab1.newton@pool.test"), *none = strstr(r.out, "<none>");
        GLEAN_TEST_CHECK(r.status == 0 && phys && lab1 && newton && none && phys < lab1 && lab1 < newton && newton < none,
                         "-grouprollup: the tree, then <none>:\n%s", r.out);
        /* group_physics rolls up lab1's 8 slots. */
        GLEAN_TEST_CHECK(phys && strstr(line_of(r.out, "group_physics "), "8.00"), "physics row: %.140s",
                         line_of(r.out, "group_physics "));
        glean_test_run_done(&r);
}

static void test_json(void) {
        GleanTestRun r = run("--json", "-allusers", NULL, NULL);
        static const char *keys[] = { "\"name\": \"alice@pool.test\"", "\"effective_priority\":", "\"real_priority\":",
                                      "\"priority_factor\": 1,", "\"resources_in_use\": 1,",
                                      "\"weighted_resources_in_use\": 4,", "\"accumulated_usage_hours\":",
                                      "\"weighted_accumulated_usage_hours\":", "\"begin_usage_time\":",
                                      "\"last_usage_time\":", "\"factor_set\": true", "\"is_group\": false",
                                      "\"group\": \"<none>\"" };

        GLEAN_TEST_CHECK(r.status == 0 && r.out[0] == '[', "status %d: %s", r.status, r.err);
        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                GLEAN_TEST_CHECK(strstr(r.out, keys[i]), "--json lacks %s:\n%s", keys[i], r.out);
        glean_test_run_done(&r);
}

static void test_quotas(void) {
        GleanTestRun r = run("-quotas", NULL, NULL, NULL);

        /* The pool size from the database (300): physics's 100/40/80 scaled;
         * chem's .2 of what the static quotas leave (HTCondor's rule). */
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "Pool size: 300"), "status %d\n%s%s", r.status, r.out, r.err);
        GLEAN_TEST_CHECK(strstr(line_of(r.out, "group_physics.lab1"), "33") &&
                                 strstr(line_of(r.out, "group_physics.lab2"), "66") &&
                                 strstr(line_of(r.out, "group_chem"), " 40 "),
                         "quotas:\n%s", r.out);
        GLEAN_TEST_CHECK(strstr(r.err, "rescaled from 40 to 33.333"), "warning: %s", r.err);
        glean_test_run_done(&r);

        r = run("-quotas", "--pool-size", "200", "--json");
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "\"name\": \"group_chem\"") &&
                                 strstr(r.out, "\"effective_quota\": 20,") && strstr(r.out, "\"accept_surplus\": true"),
                         "--json:\n%s", r.out);
        glean_test_run_done(&r);

        /* Offline: no database at all. */
        {
                char *argv[] = { (char *) glean, "userprio", "--config", conf, "-quotas", "--pool-size", "10", NULL };
                char *argv2[] = { (char *) glean, "userprio", "--config", conf, "-quotas", NULL };
                char env[256];
                snprintf(env, sizeof(env), "NEGOTIATOR_DATABASE = %s/none.db\n", tmpdir);
                FILE *f = fopen(conf, "a");
                CU_ASSERT_FATAL(f != NULL);
                fputs(env, f);
                fclose(f);
                CU_ASSERT_FATAL(glean_test_run(argv, &r) == 0);
                GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "Pool size: 10") && strstr(r.out, "group_physics.lab2"),
                                 "offline: %d\n%s%s", r.status, r.out, r.err);
                glean_test_run_done(&r);
                CU_ASSERT_FATAL(glean_test_run(argv2, &r) == 0);
                GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "does not exist"), "no pool size, no database: %d %s",
                                 r.status, r.err);
                glean_test_run_done(&r);
        }
}

static double factor_of(const char *name) {
        Accountant *a = open_db(ACCT_OPEN_READONLY);
        AcctEntry e;
        double f = acct_get(a, name, &e) == 0 ? e.factor : NAN;

        acct_close(a);
        return f;
}

static void test_admin(void) {
        static const struct {
                const char *a1, *a2, *a3, *why;
                int status;
        } bad[] = {
                { "-setfactor", "alice@pool.test", "nan", "'nan' is not a number", 2 },
                { "-setfactor", "alice@pool.test", "-2", "at least 1", 2 },
                { "-setfactor", "alice@pool.test", "0.5", "at least 1", 2 },
                { "-setfactor", "alice@pool.test", "2x", "'2x' is not a number", 2 },
                { "-setfactor", "alice@pool.test", "inf", "'inf' is not a number", 2 },
                { "-setfactor", "nobody", "2", "'nobody' is not in the accounts", 2 },
                { "-setprio", "alice@pool.test", "0.1", "at least 0.5", 2 },
                { "-setfactor", "alice@pool.test", NULL, "missing argument '-setfactor'", 2 },
                { "-resetusage", "ghost@pool.test", NULL, "not in the accounts", 2 },
                { "-delete", "alice@pool.test", NULL, "holds claims", 1 },
                { "-delete", "group_chem", NULL, "configured group", 1 },
                { "-bogus", NULL, NULL, "unknown option", 2 },
                { "-quotas", "-delete", "x", "only one of", 2 },
        };
        GleanTestRun r;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                r = run(bad[i].a1, bad[i].a2, bad[i].a3, NULL);
                GLEAN_TEST_CHECK(r.status == bad[i].status && strstr(r.err, bad[i].why) && !r.out[0],
                                 "%s %s %s: status %d, stderr '%s', want %d and '%s'", bad[i].a1,
                                 bad[i].a2 ? bad[i].a2 : "", bad[i].a3 ? bad[i].a3 : "", r.status, r.err,
                                 bad[i].status, bad[i].why);
                glean_test_run_done(&r);
        }
        CU_ASSERT(factor_of("alice@pool.test") == 1.0); /* nothing changed */

        if (geteuid() == 0) {
                /* Only root and ADMINISTRATORS change anything. */
                char *argv[] = { "setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", (char *) glean,
                                 "userprio", "--config", conf, "--db", db, "-setfactor", "alice@pool.test", "5", NULL };
                CU_ASSERT_FATAL(glean_test_run(argv, &r) == 0);
                GLEAN_TEST_CHECK(r.status == 1 && strstr(r.err, "only root and ADMINISTRATORS"), "nobody: %d %s",
                                 r.status, r.err);
                glean_test_run_done(&r);
                CU_ASSERT(factor_of("alice@pool.test") == 1.0);
        }

        /* a submitter not seen yet gets its factor before its first job */
        r = run("-setfactor", "newcomer@pool.test", "4", NULL);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "newcomer@pool.test was set to 4"), "newcomer: %d %s%s",
                         r.status, r.out, r.err);
        glean_test_run_done(&r);
        CU_ASSERT(factor_of("newcomer@pool.test") == 4.0);

        r = run("-setfactor", "alice@pool.test", "2.5", NULL);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "The priority factor of alice@pool.test was set to 2.5"),
                         "setfactor: %d %s%s", r.status, r.out, r.err);
        glean_test_run_done(&r);
        CU_ASSERT(factor_of("alice@pool.test") == 2.5);

        r = run("-setprio", "bob@pool.test", "12", NULL);
        GLEAN_TEST_CHECK(r.status == 0, "setprio: %d %s", r.status, r.err);
        glean_test_run_done(&r);
        {
                Accountant *a = open_db(ACCT_OPEN_READONLY);
                AcctEntry e;
                CU_ASSERT(acct_get(a, "bob@pool.test", &e) == 0 && fabs(e.rup - 12) < 0.01);
                acct_close(a);
        }

        r = run("-resetusage", "bob@pool.test", NULL, NULL);
        GLEAN_TEST_CHECK(r.status == 0, "resetusage: %d %s", r.status, r.err);
        glean_test_run_done(&r);
        r = run("-delete", "bob@pool.test", NULL, NULL);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "deleted"), "delete: %d %s", r.status, r.err);
        glean_test_run_done(&r);
        CU_ASSERT(isnan(factor_of("bob@pool.test")));
}

static void test_bad_database(void) {
        char path[160];
        FILE *f;
        GleanTestRun r;

        snprintf(path, sizeof(path), "%s/garbage.db", tmpdir);
        f = fopen(path, "w");
        CU_ASSERT_FATAL(f != NULL);
        for (int i = 0; i < 4096; i++)
                fputc((i * 7919) & 0xff, f);
        fclose(f);
        char *argv[] = { (char *) glean, "userprio", "--config", conf, "--db", path, NULL };
        CU_ASSERT_FATAL(glean_test_run(argv, &r) == 0);
        GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "accounts database") && strstr(r.err, path), "garbage: %d %s",
                         r.status, r.err);
        glean_test_run_done(&r);
}

static CU_TestInfo tests[] = {
        { "list", test_list },
        { "json", test_json },
        { "admin", test_admin },
        { "bad_database", test_bad_database },
        { "quotas", test_quotas },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "userprio", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

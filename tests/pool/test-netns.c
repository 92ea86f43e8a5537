/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-netns.c — a pool of several machines for real: the central manager
 * in a network namespace of its own and four agents, each in another,
 * joined to it by veth pairs the test makes with libnl (pool-test.h's
 * NetPool: 10.231.K.0/30 per pair, nothing left behind). Three users
 * (nobody, daemon and bin submit as themselves) with priority factors 1,
 * 2 and 4 and more jobs than slots: over many cycles each holds the
 * share of the slots its inverse EUP gives it. Preemption for user
 * priority when PREEMPTION_REQUIREMENTS allows it, up to the better
 * user's share (within one slot) and no further, and none when it does
 * not.
 *
 * Needs root (namespaces, other users): skipped, loudly, otherwise.
 */
#define _GNU_SOURCE

#include <math.h>

#include "pool-test.h"

#define NODES 4
#define CPUS 3 /* slots per agent: 12 in all */
#define SLOTS (NODES * CPUS)

static const char *const users[] = { "nobody", "daemon", "bin" };
static const double factors[] = { 1, 2, 4 };
#define NUSERS (sizeof users / sizeof *users)

static const char manager_config[] = "NEGOTIATOR_ADDRESS =\n"
                                     "NEGOTIATOR_INTERVAL = 1\n"
                                     "UPDATE_INTERVAL = 1\n"
                                     "ALIVE_INTERVAL = 1\n";

typedef struct Rig {
        NetPool np;
        Manager m;
        Pool a[NODES];
        size_t agents;
} Rig;

/* The namespaces and the central manager with extra after its base. */
static bool rig_start(Rig *r, const char *extra) {
        char *conf = NULL;
        memset(r, 0, sizeof *r);
        if (!netpool_new(&r->np, NODES))
                return false;
        if (asprintf(&conf, "%s%s", manager_config, extra ? extra : "") < 0 ||
            !manager_start_ns(&r->m, conf, r->np.cm)) {
                free(conf);
                netpool_free(&r->np);
                return false;
        }
        free(conf);
        return true;
}

static bool rig_agents(Rig *r) {
        for (size_t k = 0; k < NODES; k++) {
                char name[32], extra[96];
                snprintf(name, sizeof name, "node%zu.test", k + 1);
                snprintf(extra, sizeof extra, "NUM_CPUS = %d\nUPDATE_INTERVAL = 1\n", CPUS);
                if (!GLEAN_TEST_CHECK(netpool_agent(&r->np, k, &r->m, &r->a[k], name, extra), "agent %s", name))
                        return false;
                r->agents = k + 1;
        }
        return true;
}

static void rig_stop(Rig *r) {
        /* What runs in the namespaces (agents, jobs) first: the jobs of
         * other users would outlive a graceful stop's grace. */
        for (size_t k = 0; k < r->agents; k++)
                pool_stop(&r->a[k]);
        manager_stop(&r->m);
        netpool_free(&r->np);
}

/* Running jobs per owner (users[] order), from `glean q -constraint "JobStatus == 2" -af Owner`; false when q failed. */
static bool running_per_user(size_t counts[NUSERS]) {
        for (size_t u = 0; u < NUSERS; u++)
                counts[u] = 0;
        char *out = gl_out("q", "-allusers", "-constraint", "JobStatus == 2", "-af", "Owner", NULL);
        if (!out)
                return false;
        for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
                for (size_t u = 0; u < NUSERS; u++)
                        if (strcmp(pool_trim(line), users[u]) == 0)
                                counts[u]++;
        free(out);
        return true;
}

/* A number of submitter's entry in `glean userprio -allusers --json`; NAN when absent. */
static double userprio_number(const char *submitter, const char *key) {
        char *out = gl_out("userprio", "-allusers", "--json", NULL), name[96], k[64];
        snprintf(name, sizeof name, "\"name\": \"%s\"", submitter);
        snprintf(k, sizeof k, "\"%s\": ", key);
        const char *e = out ? strstr(out, name) : NULL, *v = e ? strstr(e, k) : NULL;
        double x = v ? strtod(v + strlen(k), NULL) : NAN;
        free(out);
        return x;
}

static bool users_exist(void) {
        for (size_t u = 0; u < NUSERS; u++)
                if (!getpwnam(users[u]))
                        return false;
        return true;
}

/* Submits n jobs of user u: "sleep seconds". The cluster, or -1. */
static int64_t submit_sleepers(Rig *r, size_t u, int n, int seconds) {
        char body[256], name[64];
        snprintf(body, sizeof body, "executable = /bin/sleep\narguments = %d\nqueue %d\n", seconds, n);
        snprintf(name, sizeof name, "%s-%d.sub", users[u], seconds);
        int64_t c = submit_as(&r->m, users[u], name, body, NULL, 0);
        GLEAN_TEST_CHECK(c > 0, "submit as %s", users[u]);
        return c > 0 ? c : -1;
}

/* Waits until the accounts know submitter (a cycle saw its idle jobs). */
static bool wait_known(const char *submitter, int seconds) {
        for (int i = 0; i < seconds * 10; i++) {
                if (!isnan(userprio_number(submitter, "effective_priority")))
                        return true;
                usleep(100000);
        }
        return GLEAN_TEST_CHECK(false, "%s not in the accounts after %d s", submitter, seconds);
}

static bool set_factor(size_t u) {
        char sub[64], f[16];
        snprintf(sub, sizeof sub, "%s@test.pool", users[u]);
        snprintf(f, sizeof f, "%g", factors[u]);
        if (!wait_known(sub, 10))
                return false;
        char *out = gl_out("userprio", "-setfactor", sub, f, NULL);
        free(out);
        return out != NULL;
}

/* ---- fair share over cycles ---- */

static void test_fair_share(void) {
        Rig r;
        /* One job per claim: every slot freed is negotiated again. The
         * default PRIORITY_HALFLIFE (a day): the real priorities stay at
         * 0.5 over the test, so the EUPs are 0.5 x the factors. */
        CU_ASSERT_TRUE_FATAL(rig_start(&r, "CLAIM_WORKLIFE = 0\n"));
        /* The jobs first, so that the accounts know the users, then their factors, then the machines. */
        for (size_t u = 0; u < NUSERS; u++)
                if (submit_sleepers(&r, u, 60, 2) < 0)
                        goto out;
        for (size_t u = 0; u < NUSERS; u++)
                if (!set_factor(u))
                        goto out;
        if (!rig_agents(&r))
                goto out;

        /* The pool fills, then 12 s of samples (about six generations of jobs). */
        size_t c[NUSERS], total = 0;
        for (int i = 0; i < 200 && total < SLOTS; i++) {
                usleep(100000);
                total = 0;
                if (running_per_user(c))
                        for (size_t u = 0; u < NUSERS; u++)
                                total += c[u];
        }
        GLEAN_TEST_CHECK(total == SLOTS, "%zu of %d slots busy after 20 s", total, SLOTS);
        double sum[NUSERS] = { 0 };
        int samples = 0;
        for (int i = 0; i < 48; i++) {
                usleep(250000);
                if (!running_per_user(c))
                        continue;
                samples++;
                for (size_t u = 0; u < NUSERS; u++)
                        sum[u] += (double) c[u];
        }
        CU_ASSERT_FATAL(samples > 40);
        /* Expected: each its inverse EUP's share of the slots. */
        double inv[NUSERS], inv_sum = 0;
        for (size_t u = 0; u < NUSERS; u++) {
                char sub[64];
                snprintf(sub, sizeof sub, "%s@test.pool", users[u]);
                double eup = userprio_number(sub, "effective_priority");
                GLEAN_TEST_CHECK(eup > 0, "EUP of %s: %g", sub, eup);
                inv[u] = eup > 0 ? 1 / eup : 0;
                inv_sum += inv[u];
        }
        printf("\n");
        for (size_t u = 0; u < NUSERS; u++) {
                double want = SLOTS * inv[u] / inv_sum, got = sum[u] / samples;
                double tol = fmax(1.0, 0.15 * want);
                printf("    %-7s factor %g: %.2f slots on average over %d samples, inverse-EUP share %.2f (+-%.2f)\n",
                       users[u], factors[u], got, samples, want, tol);
                GLEAN_TEST_CHECK(fabs(got - want) <= tol, "%s held %.2f slots on average, its share is %.2f +- %.2f",
                                 users[u], got, want, tol);
        }
        /* And each user's jobs ran on several machines. */
        char *out = gl_out("history", "-af", "LastRemoteHost", NULL);
        size_t machines = 0;
        for (size_t k = 0; out && k < NODES; k++) {
                char host[32];
                snprintf(host, sizeof host, "@node%zu.test", k + 1);
                machines += strstr(out, host) != NULL;
        }
        GLEAN_TEST_CHECK(machines == NODES, "jobs ran on %zu of %d machines", machines, NODES);
        free(out);
out:
        rig_stop(&r);
}

/* ---- preemption for priority, as PREEMPTION_REQUIREMENTS says ---- */

/* bin (factor 4) fills the pool with long jobs; then nobody (factor 1)
 * submits as many. allow: PREEMPTION_REQUIREMENTS lets a user whose
 * priority is better by 20% preempt; else it is False. */
static void preemption(bool allow) {
        Rig r;
        CU_ASSERT_TRUE_FATAL(rig_start(&r, allow ? "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2\n"
                                                 : "PREEMPTION_REQUIREMENTS = False\n"));
        const size_t nobody = 0, bin = 2;
        /* More than the slots: bin has idle jobs, so it is a submitter
         * of every cycle and its share counts in the pie. */
        int64_t low = submit_sleepers(&r, bin, SLOTS + 4, 120);
        if (low < 0 || !set_factor(bin))
                goto out;
        if (!rig_agents(&r))
                goto out;
        size_t c[NUSERS] = { 0 };
        for (int i = 0; i < 200 && c[bin] < SLOTS; i++) {
                usleep(100000);
                running_per_user(c);
        }
        if (!GLEAN_TEST_CHECK(c[bin] == SLOTS, "bin runs %zu of %d after 20 s", c[bin], SLOTS))
                goto out;
        int64_t high = submit_sleepers(&r, nobody, SLOTS, 120);
        if (high < 0 || !set_factor(nobody))
                goto out;
        /* EUPs 0.5 (nobody) and 2 (bin): nobody's share is 80%, 9.6 slots,
         * within one slot: 9 in the first cycle, and one more the next
         * (a submitter with some of its share left gets one match "to
         * avoid crumbs", as HTCondor's SubmitterLimitPermits), never more
         * (docs/negotiator.md, "Preemption and the share"). */
        if (allow) {
                const double want = 0.8 * SLOTS, tol = 1;
                size_t most = 0;
                for (int i = 0; i < 150 && c[nobody] < 9; i++) {
                        usleep(100000);
                        running_per_user(c);
                }
                /* Three seconds more, sampled: three cycles, the preemptions
                 * under way finish, nobody never beyond its share. */
                for (int i = 0; i < 12; i++) {
                        usleep(250000);
                        running_per_user(c);
                        most = c[nobody] > most ? c[nobody] : most;
                }
                printf("\n    preemption allowed: nobody runs %zu (at most %zu), bin %zu of %d; nobody's share %.1f +- %.0f\n",
                       c[nobody], most, c[bin], SLOTS, want, tol);
                GLEAN_TEST_CHECK(c[nobody] >= 9 && fabs((double) c[nobody] - want) <= tol &&
                                         (double) most <= want + tol && c[nobody] + c[bin] == SLOTS,
                                 "nobody runs %zu, at most %zu (its share %.1f +- %.0f), bin %zu", c[nobody], most,
                                 want, tol, c[bin]);
                /* bin's preempted jobs are Idle again, each started once so far. */
                char cons[64];
                snprintf(cons, sizeof cons, "ClusterId == %lld && JobStatus == 1", (long long) low);
                char *out = gl_out("q", "-allusers", "-constraint", cons, "-af", "NumJobStarts", NULL);
                size_t idle = out ? count(out, "1\n") : 0;
                GLEAN_TEST_CHECK(idle >= 9 && idle == SLOTS - c[bin], "bin's preempted jobs Idle: %zu\n%s", idle,
                                 out ? out : "");
                free(out);
        } else {
                /* Five seconds is five cycles: nobody waits, bin runs on. */
                for (int i = 0; i < 10; i++) {
                        usleep(500000);
                        running_per_user(c);
                        if (!GLEAN_TEST_CHECK(c[nobody] == 0 && c[bin] == SLOTS,
                                              "PREEMPTION_REQUIREMENTS False, yet nobody runs %zu, bin %zu", c[nobody],
                                              c[bin]))
                                break;
                }
                printf("\n    preemption not allowed: nobody runs %zu, bin %zu of %d after 5 s\n", c[nobody], c[bin],
                       SLOTS);
                char cl[24];
                snprintf(cl, sizeof cl, "%lld", (long long) low);
                char *out = gl_out("q", "-allusers", cl, "-af", "JobStatus", "NumJobStarts", NULL);
                GLEAN_TEST_CHECK(out && count(out, "2 1\n") == SLOTS && count(out, "1 0\n") == 4,
                                 "bin's jobs (status, starts):\n%s", out ? out : "");
                free(out);
        }
out:
        rig_stop(&r);
}

static void test_preemption_allowed(void) {
        preemption(true);
}

static void test_preemption_refused(void) {
        preemption(false);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "three users, factors 1, 2, 4, more jobs than slots on four machines: shares follow the inverse EUPs",
                  test_fair_share },
                { "preemption for priority when PREEMPTION_REQUIREMENTS allows it", test_preemption_allowed },
                { "no preemption when PREEMPTION_REQUIREMENTS is False", test_preemption_refused },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "netns", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        char why[200];
        if (netpool_unavailable(why, sizeof why))
                return glean_test_skip("%s", why);
        if (!users_exist())
                return glean_test_skip("needs the users nobody, daemon and bin");
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-trust.c — the real glean-agent attacked by a local user who is
 * not an administrator (nobody): identity attributes that are expressions
 * (a random Owner that is checked as the caller and run as someone else),
 * direct claims on an agent that belongs to a pool, claim leases past
 * MAX_CLAIM_LEASE_DURATION.
 *
 * Needs root (to be nobody in a child); skipped otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-test.h"

/* Runs fn(p) in a child as nobody: its exit status (0: every check held;
 * the child says on stderr what did not). */
static int as_nobody(Pool *p, int (*fn)(Pool *p)) {
        struct passwd *nobody = getpwnam("nobody");
        CU_ASSERT_FATAL(nobody != NULL);
        uid_t uid = nobody->pw_uid;
        gid_t gid = nobody->pw_gid;
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
                if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
                        _exit(100);
                _exit(fn(p));
        }
        int status;
        if (waitpid(child, &status, 0) != child)
                return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static bool root_or_skip(void) {
        if (getuid() == 0)
                return true;
        printf("(not root: these checks need a user who is not an administrator; skipped)\n");
        return false;
}

static int connect_quiet(Pool *p) {
        int fd = -1;
        char why[256];
        if (glean_client_connect(p->sock, "glean", 5000, &fd, why, sizeof why) < 0) {
                fprintf(stderr, "connect: %s\n", why);
                return -1;
        }
        return fd;
}

static ClassAd *job_with(const Pool *p, const char *attr, const char *expr) {
        ClassAd *job = job_ad(p, "/bin/sh", "-c 'id -un'", NULL);
        CaError err;
        if (job && attr && classad_set_expr_text(job, attr, expr, CA_MODE_OLD, &err) < 0) {
                classad_free(job);
                return NULL;
        }
        return job;
}

/* ---- 1: identity attributes are literal strings, decided once ---- */

#define ATTACK_TRIES 40
#define RANDOM_OWNER "ifThenElse(random(2) == 0, \"nobody\", \"daemon\")"

static int release_quiet(int fd, const char *id) {
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL);
        bool ok = reply_ok(r, NULL);
        classad_free(r);
        return ok ? 0 : -1;
}

/* Waits until slot1 is Unclaimed again (a released claim's job ends first). */
static void wait_unclaimed(Pool *p) {
        for (int i = 0; i < 100; i++) {
                char st[64];
                slot_state(p, "slot1", st, sizeof st);
                if (strncmp(st, "Unclaimed", 9) == 0)
                        return;
                usleep(100000);
        }
}

static int attack_random_owner(Pool *p) {
        int fd = connect_quiet(p);
        if (fd < 0)
                return 10;
        unsigned accepted = 0, as_other = 0, refused_literal = 0;
        for (int i = 0; i < ATTACK_TRIES; i++) {
                ClassAd *job = job_with(p, "Owner", RANDOM_OWNER);
                char id[64], why[512];
                snprintf(id, sizeof id, "attack-claim-%06d", i);
                if (!job)
                        return 11;
                if (!ok_why(claim(fd, "slot1", id, job), why, sizeof why)) {
                        refused_literal += strstr(why, "Owner must be a literal string") != NULL;
                        classad_free(job);
                        continue;
                }
                accepted++;
                ClassAd *r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, id, job);
                char *runas = r ? ad_string(r, "RunAs") : NULL;
                if (reply_ok(r, NULL) && runas && strcmp(runas, "nobody") != 0) {
                        fprintf(stderr, "try %d: nobody's job ran as %s\n", i, runas);
                        as_other++;
                }
                free(runas);
                classad_free(r);
                classad_free(job);
                release_quiet(fd, id);
                wait_unclaimed(p);
        }
        close(fd);
        if (accepted || as_other) {
                fprintf(stderr, "%u of %d claims with Owner = %s accepted, %u jobs ran as another account\n", accepted,
                        ATTACK_TRIES, RANDOM_OWNER, as_other);
                return 12;
        }
        if (refused_literal != ATTACK_TRIES) {
                fprintf(stderr, "only %u refusals name the literal string\n", refused_literal);
                return 13;
        }
        return 0;
}

/* The claim is the caller's own, the activation's job is the attack. */
static int attack_activation(Pool *p) {
        int fd = connect_quiet(p);
        if (fd < 0)
                return 20;
        char why[512];
        ClassAd *good = job_with(p, NULL, NULL);
        if (!ok_why(claim(fd, "slot1", "own-claim-00000001", good), why, sizeof why)) {
                fprintf(stderr, "a claim of nobody's own job: %s\n", why);
                return 21;
        }
        for (int i = 0; i < ATTACK_TRIES; i++) {
                ClassAd *job = job_with(p, "Owner", RANDOM_OWNER);
                ClassAd *r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, "own-claim-00000001", job);
                classad_free(job);
                char *runas = r ? ad_string(r, "RunAs") : NULL;
                bool ok = ok_why(r, why, sizeof why);
                if (ok) {
                        fprintf(stderr, "activation %d with Owner = %s accepted (RunAs %s)\n", i, RANDOM_OWNER,
                                runas ? runas : "?");
                        free(runas);
                        return 22;
                }
                free(runas);
                if (!strstr(why, "Owner must be a literal string")) {
                        fprintf(stderr, "activation %d refused for another reason: %s\n", i, why);
                        return 23;
                }
        }
        /* Its own literal Owner: the job runs, as nobody. */
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, "own-claim-00000001", good);
        char *runas = r ? ad_string(r, "RunAs") : NULL;
        bool ok = ok_why(r, why, sizeof why) && runas && strcmp(runas, "nobody") == 0;
        if (!ok)
                fprintf(stderr, "nobody's own job: %s (RunAs %s)\n", why, runas ? runas : "?");
        free(runas);
        classad_free(good);
        release_quiet(fd, "own-claim-00000001");
        wait_unclaimed(p);
        close(fd);
        return ok ? 0 : 24;
}

/* Expressions that evaluate to the caller, and identity attributes beside Owner. */
static int attack_other_forms(Pool *p) {
        static const struct {
                const char *attr, *expr, *reason;
        } rows[] = {
                { "Owner", "strcat(\"nob\", \"ody\")", "Owner must be a literal string" },
                { "Owner", "ifThenElse(true, \"nobody\", \"daemon\")", "Owner must be a literal string" },
                { "Owner", "MyOwner", "Owner must be a literal string" },
                { "User", "ifThenElse(random(2) == 0, \"nobody@x\", \"daemon@x\")", "User must be a literal string" },
                { "AcctGroup", "strcat(\"group_\", \"a\")", "AcctGroup must be a literal string" },
                { "AcctGroupUser", "toLower(\"NOBODY\")", "AcctGroupUser must be a literal string" },
                { "AccountingGroup", "ifThenElse(random(2) == 0, \"a\", \"b\")",
                  "AccountingGroup must be a literal string" },
        };
        int fd = connect_quiet(p);
        if (fd < 0)
                return 30;
        int bad = 0;
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                ClassAd *job = job_with(p, rows[i].attr, rows[i].expr);
                if (job)
                        classad_set_string(job, "MyOwner", "nobody");
                char id[64], why[512];
                snprintf(id, sizeof id, "other-form-%06zu", i);
                if (ok_why(claim(fd, "slot1", id, job), why, sizeof why) || !strstr(why, rows[i].reason)) {
                        fprintf(stderr, "%s = %s: %s\n", rows[i].attr, rows[i].expr, why);
                        release_quiet(fd, id);
                        bad = 31;
                }
                classad_free(job);
        }
        close(fd);
        return bad;
}

static void test_identity_literal(void) {
        if (!root_or_skip())
                return;
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        int st = as_nobody(&p, attack_random_owner);
        GLEAN_TEST_CHECK(st == 0, "a random Owner over RequestClaim + ActivateClaim: child status %d", st);
        st = as_nobody(&p, attack_activation);
        GLEAN_TEST_CHECK(st == 0, "a random Owner in the activation of an own claim: child status %d", st);
        st = as_nobody(&p, attack_other_forms);
        GLEAN_TEST_CHECK(st == 0, "identity attributes that are expressions: child status %d", st);
        /* The central manager and administrators are held to it as well. */
        int fd = connect_agent(&p);
        ClassAd *job = job_with(&p, "Owner", "strcat(\"nob\", \"ody\")");
        char why[512];
        GLEAN_TEST_CHECK(!ok_why(claim(fd, "slot1", "root-claim-0000001", job), why, sizeof why) &&
                                 strstr(why, "Owner must be a literal string"),
                         "root's claim of a job with an expression for Owner: %s", why);
        classad_free(job);
        close(fd);
        char *log = read_log(&p);
        GLEAN_TEST_CHECK(!strstr(log, "by daemon") && !strstr(log, "as daemon"), "the log names daemon");
        free(log);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* ---- 8: a pooled agent takes claims from its central manager ---- */

static int pooled_claim(Pool *p) {
        int fd = connect_quiet(p);
        if (fd < 0)
                return 40;
        ClassAd *job = job_with(p, NULL, NULL);
        char why[512];
        bool ok = ok_why(claim(fd, "slot1", "direct-claim-000001", job), why, sizeof why);
        classad_free(job);
        close(fd);
        if (ok || !strstr(why, "belongs to a pool") || !strstr(why, "ADMINISTRATORS")) {
                fprintf(stderr, "nobody's direct claim on a pooled agent: %s\n", ok ? "accepted" : why);
                return 41;
        }
        return 0;
}

static int unpooled_run(Pool *p) {
        char sub[256], text[512];
        snprintf(sub, sizeof sub, "%s/nobody.sub", p->jobs);
        snprintf(text, sizeof text,
                 "executable = /bin/sh\narguments = \"-c 'id -un'\"\noutput = nobody.out\ninitialdir = %s\nqueue\n",
                 p->jobs);
        FILE *f = fopen(sub, "we");
        if (!f)
                return 50;
        fputs(text, f);
        fclose(f);
        GleanTestRun r;
        if (glean_cli(p, &r, "run", sub, NULL, NULL) < 0)
                return 51;
        int st = r.status;
        if (st != 0)
                fprintf(stderr, "glean agent run as nobody: status %d: %s\n", st, r.err);
        glean_test_run_done(&r);
        return st == 0 ? 0 : 52;
}

static void test_pooled_direct_claims(void) {
        if (!root_or_skip())
                return;
        Pool p;
        char conf[256];
        /* A central manager that is not there (and no key): the agent is
         * pooled all the same. */
        snprintf(conf, sizeof conf, "AGENT_EXECUTOR = fork\nCOLLECTOR_HOST = 127.0.0.1:1\nPOOL_KEY_FILE = /nonexistent/pool.key\n");
        CU_ASSERT_FATAL(pool_start(&p, conf));
        int st = as_nobody(&p, pooled_claim);
        GLEAN_TEST_CHECK(st == 0, "a non-administrator's direct claim on a pooled agent: child status %d", st);
        /* Root (an administrator) may. */
        int fd = connect_agent(&p);
        ClassAd *job = job_with(&p, NULL, NULL);
        char why[512];
        GLEAN_TEST_CHECK(ok_why(claim(fd, "slot1", "root-direct-000001", job), why, sizeof why),
                         "root's direct claim on a pooled agent: %s", why);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, "root-direct-000001", NULL), why, sizeof why),
                         "release: %s", why);
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");

        /* Without a central manager anyone runs jobs with glean agent run. */
        CU_ASSERT_FATAL(pool_start(&p, "AGENT_EXECUTOR = fork\n"));
        st = as_nobody(&p, unpooled_run);
        GLEAN_TEST_CHECK(st == 0, "glean agent run as nobody on an agent without a pool: child status %d", st);
        char path[256], *out = NULL;
        snprintf(path, sizeof path, "%s/nobody.out", p.jobs);
        GLEAN_TEST_CHECK(glean_test_read_file(path, &out, NULL) >= 0 && out && strcmp(out, "nobody\n") == 0,
                         "the job's output: %s", out ? out : "(none)");
        free(out);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* A lease of 10^9 s is cut to MAX_CLAIM_LEASE_DURATION, and the claimant told. */
static void test_lease_bounded(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "MAX_CLAIM_LEASE_DURATION = 3\n"));
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", "JobLeaseDuration = 1000000000");
        ClassAd *r = claim(fd, "slot1", "long-lease-0000001", job);
        int64_t lease = 0;
        if (r)
                classad_eval_int(r, "LeaseDuration", CA_MODE_OLD, &lease);
        char *note = r ? ad_string(r, "LeaseNote") : NULL;
        char why[512];
        GLEAN_TEST_CHECK(ok_why(r, why, sizeof why), "claim: %s", why);
        GLEAN_TEST_CHECK(lease == 3, "LeaseDuration %lld, want 3", (long long) lease);
        GLEAN_TEST_CHECK(note && strstr(note, "1000000000") && strstr(note, "MAX_CLAIM_LEASE_DURATION"),
                         "LeaseNote: %s", note ? note : "(none)");
        free(note);
        classad_free(job);
        /* No keep-alive: the claim is gone after its (bounded) lease. */
        GLEAN_TEST_CHECK(wait_state(&p, "slot1", "Unclaimed/Idle", 15), "the claim ends after 3 s");
        GLEAN_TEST_CHECK(wait_log(&p, 2, "slot1", "claim lease expired"), "no lease expiry in the log");
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static CU_TestInfo tests[] = {
        { "identity attributes must be literal strings", test_identity_literal },
        { "a pooled agent refuses direct claims of users", test_pooled_direct_claims },
        { "claim leases are bounded", test_lease_bounded },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent trust", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

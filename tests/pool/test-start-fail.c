/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-start-fail.c — jobs that cannot start (an input the job's user
 * cannot read, an output in a directory that does not exist, an initial
 * directory it cannot enter): the real glean-negotiator and glean-agent
 * (fork executor, one partitionable slot). Each is held within seconds
 * with HTCondor's HoldReasonCode (8 input, 7 output, 14 initial
 * directory), the errno as HoldReasonSubCode and a reason naming the file,
 * after one attempt (NumJobStarts <= 1, one line in the agent's log);
 * another job of the same user runs meanwhile, and `glean status` shows no
 * dynamic slot left behind. Before, each was retried ~30 times a second.
 *
 * Needs root (the files are root's, the jobs run as nobody): skipped
 * otherwise.
 */
#define _GNU_SOURCE

#include "pool-test.h"

static int slow(int seconds) {
        return seconds * agent_test_slowdown();
}

typedef struct Case {
        const char *name, *body, *code, *subcode, *path;
        char id[32];
} Case;

static char *q_attr(const char *id, const char *attr) {
        return pool_trim(gl_out("q", id, "-af", attr, NULL));
}

static void test_start_failures_hold(void) {
        if (geteuid() != 0) {
                glean_test_skip("needs root: the jobs' files are root's, the jobs run as nobody");
                return;
        }
        Manager m;
        Pool p;
        if (!manager_start(&m, "NEGOTIATOR_INTERVAL = 1\nALIVE_INTERVAL = 1\n"))
                return;
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &p, "a.test",
                                            "AGENT_EXECUTOR = fork\nUPDATE_INTERVAL = 1\nNUM_CPUS = 2\n"
                                            "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=2\n"
                                            "SLOT_TYPE_1_PARTITIONABLE = True\n"),
                              "agent")) {
                manager_stop(&m);
                return;
        }
        char secret[200], closed[200], body[3][600];
        snprintf(secret, sizeof secret, "%s/secret.in", m.jobs);
        write_file(secret, "root's\n");
        chmod(secret, 0600);
        snprintf(closed, sizeof closed, "%s/closed", m.jobs);
        mkdir(closed, 0700);
        snprintf(body[0], sizeof body[0], "executable = /bin/cat\ninput = %s\nqueue\n", secret);
        snprintf(body[1], sizeof body[1], "executable = /bin/true\noutput = %s/nosuch/out.txt\nqueue\n", m.jobs);
        snprintf(body[2], sizeof body[2], "executable = /bin/true\ninitialdir = %s\nqueue\n", closed);
        Case cases[] = {
                { "input.sub", body[0], "8", "13", secret, "" },
                { "output.sub", body[1], "7", "2", "nosuch/out.txt", "" },
                { "iwd.sub", body[2], "14", "13", closed, "" },
        };
        size_t n = sizeof cases / sizeof *cases;
        for (size_t i = 0; i < n; i++) {
                char why[2048] = "";
                int64_t c = submit_as(&m, NULL, cases[i].name, cases[i].body, why, sizeof why);
                GLEAN_TEST_CHECK(c > 0, "submit %s: %s", cases[i].name, why);
                snprintf(cases[i].id, sizeof cases[i].id, "%lld.0", (long long) c);
        }
        /* Another job of the same user, which runs meanwhile. */
        write_starts_script(&m);
        char good[300];
        snprintf(good, sizeof good, "executable = %s/starts.sh\narguments = $(Cluster).$(Process) 2 0\nqueue\n", m.jobs);
        int64_t g = submit_as(&m, NULL, "good.sub", good, NULL, 0);
        CU_ASSERT_FATAL(g > 0);
        char gid[32];
        snprintf(gid, sizeof gid, "%lld.0", (long long) g);

        for (size_t i = 0; i < n; i++) {
                const Case *k = &cases[i];
                if (!GLEAN_TEST_CHECK(wait_attr("q", k->id, "JobStatus", "5", slow(10)), "job %s (%s) is not held",
                                      k->id, k->name))
                        continue;
                char *code = q_attr(k->id, "HoldReasonCode"), *sub = q_attr(k->id, "HoldReasonSubCode");
                char *reason = q_attr(k->id, "HoldReason"), *starts = q_attr(k->id, "NumJobStarts");
                GLEAN_TEST_CHECK(code && strcmp(code, k->code) == 0, "job %s (%s): HoldReasonCode %s, want %s", k->id,
                                 k->name, code ? code : "-", k->code);
                GLEAN_TEST_CHECK(sub && strcmp(sub, k->subcode) == 0, "job %s (%s): HoldReasonSubCode %s, want %s",
                                 k->id, k->name, sub ? sub : "-", k->subcode);
                GLEAN_TEST_CHECK(reason && strstr(reason, k->path) && strstr(reason, strerror(atoi(k->subcode))),
                                 "job %s (%s): HoldReason \"%s\" names not %s and \"%s\"", k->id, k->name,
                                 reason ? reason : "-", k->path, strerror(atoi(k->subcode)));
                GLEAN_TEST_CHECK(starts && atoi(starts) <= 1, "job %s (%s): NumJobStarts %s", k->id, k->name,
                                 starts ? starts : "-");
                free(code);
                free(sub);
                free(reason);
                free(starts);
        }
        CU_ASSERT_TRUE(wait_attr("history", gid, "JobStatus", "4", slow(20)));
        /* One attempt each, in the agent's log. */
        char *log = read_log(&p);
        size_t attempts = log ? count(log, "cannot start the job") : 0;
        GLEAN_TEST_CHECK(attempts == n, "the agent tried %zu times to start the %zu jobs", attempts, n);
        free(log);
        /* No dynamic slot left behind: the partitionable slot alone. */
        char *names = NULL;
        for (int i = 0; i < slow(5) * 10; i++) {
                free(names);
                names = pool_trim(gl_out("status", "-af", "Name", NULL));
                if (names && strcmp(names, "slot1@a.test") == 0)
                        break;
                usleep(100000);
        }
        GLEAN_TEST_CHECK(names && strcmp(names, "slot1@a.test") == 0, "glean status lists \"%s\"", names ? names : "-");
        free(names);
        pool_stop(&p);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "jobs that cannot start are held with HTCondor's code after one attempt", test_start_failures_hold },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "start-fail", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-identity.c — who a user is, through the real `glean` command on a
 * real pool (pool-test.h): the central manager and an agent, users
 * "nobody" (an ordinary user) and root (the test).
 *
 *   - accounting names: nobody's submit file with accounting_group_user =
 *     alice, or +AccountingGroup = "alice", is refused with the rule's
 *     message; with accounting_group = group_x (ACCOUNTING_GROUPS_ALLOWED_nobody)
 *     it is queued and its run charged to group_x.nobody@test.pool
 *     (glean userprio); a group it may not use is refused; root (an
 *     administrator) may charge alice;
 *   - administrators relayed by the agent are names, and only from an
 *     agent the central manager lets relay them: nobody is in
 *     ADMINISTRATORS, yet `glean userprio -setfactor` through the agent is
 *     refused until ADMINISTRATORS_RELAYED_BY names the agent; root through
 *     the agent is no administrator of the central manager.
 */
#define _GNU_SOURCE
#include "pool-test.h"

static void test_cli_accounting_names(void) {
        Manager m;
        Pool a;
        if (!getpwnam("nobody")) {
                CU_PASS("no user nobody here");
                return;
        }
        CU_ASSERT_TRUE_FATAL(manager_start(&m, "ACCOUNTING_GROUPS_ALLOWED_nobody = group_x\n"));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        char why[2048];
        int64_t c = submit_as(&m, "nobody", "alice.sub", "executable = /bin/true\naccounting_group_user = alice\nqueue\n",
                              why, sizeof why);
        GLEAN_TEST_CHECK(c == 0 && strstr(why, "the accounting user \"alice\" is not nobody"),
                         "accounting_group_user = alice: refused: %s", c == 0 ? why : "(queued)");
        c = submit_as(&m, "nobody", "plus.sub", "executable = /bin/true\n+AccountingGroup = \"alice\"\nqueue\n", why,
                      sizeof why);
        GLEAN_TEST_CHECK(c == 0 && strstr(why, "the accounting user \"alice\" is not nobody"),
                         "+AccountingGroup = \"alice\": refused: %s", c == 0 ? why : "(queued)");
        c = submit_as(&m, "nobody", "expr.sub",
                      "executable = /bin/true\n+AccountingGroup = ifThenElse(random(2) == 0, \"nobody\", \"alice\")\n"
                      "queue\n",
                      why, sizeof why);
        GLEAN_TEST_CHECK(c == 0 && strstr(why, "AccountingGroup must be a literal string"),
                         "+AccountingGroup an expression: refused: %s", c == 0 ? why : "(queued)");
        c = submit_as(&m, "nobody", "y.sub", "executable = /bin/true\naccounting_group = group_y\nqueue\n", why,
                      sizeof why);
        GLEAN_TEST_CHECK(c == 0 && strstr(why, "nobody may not use the accounting group \"group_y\""),
                         "accounting_group = group_y: refused: %s", c == 0 ? why : "(queued)");

        /* An allowed group: queued, run, charged to group_x.nobody. */
        c = submit_as(&m, "nobody", "x.sub", "executable = /bin/sleep\narguments = 3\naccounting_group = group_x\nqueue\n",
                      why, sizeof why);
        GLEAN_TEST_CHECK(c > 0, "accounting_group = group_x: queued: %s", c > 0 ? "" : why);
        char id[32];
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        GLEAN_TEST_CHECK(wait_attr("q", id, "JobStatus", "2", 30), "the job of group_x.nobody runs");
        char *out = gl_out("userprio", "-allusers", NULL);
        GLEAN_TEST_CHECK(out && strstr(out, "group_x.nobody@test.pool"), "glean userprio shows group_x.nobody:\n%s",
                         out ? out : "(failed)");
        free(out);

        /* root, an administrator, may name alice. */
        c = submit_as(&m, NULL, "root.sub", "executable = /bin/true\naccounting_group_user = alice\nhold = true\nqueue\n",
                      why, sizeof why);
        GLEAN_TEST_CHECK(c > 0, "an administrator charges alice: %s", c > 0 ? "queued" : why);
        pool_stop(&a);
        manager_stop(&m);
}

/* `glean userprio -setfactor` through the agent, as user: 0 Ok, else refused. */
static int setfactor_via_agent(const Manager *m, const Pool *a, const char *user, char *out, size_t len) {
        char nosock[160];
        snprintf(nosock, sizeof nosock, "%s/not-here.sock", m->dir);
        setenv("GLEAN_NEGOTIATOR_SOCKET", nosock, 1);
        setenv("GLEAN_AGENT_SOCKET", a->sock, 1);
        const char *args[] = { "userprio", "-setfactor", "someone@test.pool", "3", NULL };
        int st = glean_as(user, out, len, args);
        unsetenv("GLEAN_AGENT_SOCKET");
        setenv("GLEAN_NEGOTIATOR_SOCKET", m->sock, 1);
        return st;
}

static void test_cli_relayed_admins(void) {
        Manager m;
        Pool a;
        char out[2048];
        if (!getpwnam("nobody")) {
                CU_PASS("no user nobody here");
                return;
        }
        /* The agent's socket must let nobody in: the pool's defaults do. */
        for (int allowed = 0; allowed < 2; allowed++) {
                CU_ASSERT_TRUE_FATAL(manager_start(&m, allowed ? "ADMINISTRATORS = nobody\n"
                                                                 "ADMINISTRATORS_RELAYED_BY = a.test\n"
                                                               : "ADMINISTRATORS = nobody\n"));
                if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                        manager_stop(&m);
                        return;
                }
                /* Relayed only once the agent has connected to the manager. */
                CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
                int st = setfactor_via_agent(&m, &a, "nobody", out, sizeof out);
                if (allowed)
                        GLEAN_TEST_CHECK(st == 0, "nobody relayed by a.test (ADMINISTRATORS_RELAYED_BY): an administrator: "
                                                  "exit %d: %s", st, out);
                else
                        GLEAN_TEST_CHECK(st != 0 && strstr(out, "only root and ADMINISTRATORS"),
                                         "nobody relayed by an agent not allowed to: refused: exit %d: %s", st, out);
                if (!allowed) {
                        st = setfactor_via_agent(&m, &a, NULL, out, sizeof out);
                        GLEAN_TEST_CHECK(st != 0 && strstr(out, "only root and ADMINISTRATORS"),
                                         "root relayed by the agent: no administrator: exit %d: %s", st, out);
                }
                pool_stop(&a);
                manager_stop(&m);
        }
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "accounting names through glean submit", test_cli_accounting_names },
                { "administrators relayed by the agent, through glean", test_cli_relayed_admins },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "pool identities", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-readopt.c — an agent of a whole pool restarted while its job runs,
 * with the cgroup executor (the job's cgroup outlives the agent): the real
 * glean-negotiator, a real glean-agent dialing it (AGENT_EXECUTOR =
 * cgroup in a test subtree of our own, tests/agent/cgroup-test.h), kill
 * -9 of the agent while the job runs, the agent started again on the same
 * base and EXECUTE: it re-adopts the job by its reaper, advertises its
 * claim again, the central manager keeps it, and the job completes once,
 * with its real end: it burns CPU and exits 7 after the restart, and
 * `glean history` shows ExitCode 7 and its RemoteUserCpu (the job is no
 * child of the new agent: its reaper wrote them, agent/exec/exec-reaper.c).
 *
 * It creates cgroups: it runs in the VM rig (GLEAN_VM=1, tests/vm/tests.txt),
 * and says it was skipped elsewhere.
 */
#define _GNU_SOURCE

#include <sys/statfs.h>

#include "pool-test.h"
#include "../agent/cgroup-test.h"

static CgTestEnv env;
static bool in_vm;

#include "../agent/agent-cgroup-test.h"

static void test_agent_restart_readopts(void) {
        Manager m;
        CgPool cp;
        char config[1024], extra[512], old_dir[sizeof cp.p.dir];
        CU_ASSERT_TRUE_FATAL(manager_start(&m, "NEGOTIATOR_INTERVAL = 1\nALIVE_INTERVAL = 1\n"));
        cgpool_config(&cp, "UPDATE_INTERVAL = 1\nNUM_CPUS = 1\n", config, sizeof config);
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &cp.p, "a.test", config), "agent")) {
                manager_stop(&m);
                return;
        }
        snprintf(old_dir, sizeof old_dir, "%s", cp.p.dir);
        write_release_script(&m);
        char body[512], id[32];
        snprintf(body, sizeof body, "executable = %s/release.sh\narguments = $(Cluster).$(Process) 20000 7\nqueue\n",
                 m.jobs);
        int64_t c = submit_as(&m, NULL, "readopt.sub", body, NULL, 0);
        CU_ASSERT_FATAL(c > 0);
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "2", slow(20)));
        pid_t pid = 0;
        for (int i = 0; i < slow(50) && job_starts(&m, id, &pid, 1) < 1; i++)
                usleep(100000);
        CU_ASSERT(pid > 0);
        /* Recorded: from now on the job outlives its agent (before, it would end with it). */
        CU_ASSERT(wait_job_recorded(old_dir, slow(10)));

        /* The agent dies; the job runs on in its cgroup. */
        int status;
        kill(cp.p.pid, SIGKILL);
        waitpid(cp.p.pid, &status, 0);
        pool_exited(&cp.p, status);
        GLEAN_TEST_CHECK(pid > 0 && kill(pid, 0) == 0, "the job %d runs on without its agent", (int) pid);

        /* Started again on the same base and EXECUTE: re-adopted, the claim relearned. */
        snprintf(extra, sizeof extra, "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\nEXECUTE = %s/execute\n"
                                      "UPDATE_INTERVAL = 1\nNUM_CPUS = 1\n",
                 cp.base, old_dir);
        CU_ASSERT_FATAL(manager_agent(&m, &cp.p, "a.test", extra));
        GLEAN_TEST_CHECK(wait_log(&cp.p, slow(10), "re-adopted", NULL), "the agent's log does not say it re-adopted the job");
        GLEAN_TEST_CHECK(pid > 0 && kill(pid, 0) == 0, "the job %d runs on after the restart", (int) pid);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "2", 1));
        /* Now it burns CPU and exits 7: it completes once, with its own
         * exit code and CPU (its reaper's record: the job is no child of
         * this agent), not requeued. */
        pool_release(&m, id);
        CU_ASSERT_TRUE(wait_attr("history", id, "JobStatus", "4", slow(60)));
        char *code = pool_trim(gl_out("history", id, "-af", "ExitCode", NULL));
        char *sig = pool_trim(gl_out("history", id, "-af", "ExitBySignal", NULL));
        char *cpu = pool_trim(gl_out("history", id, "-af", "RemoteUserCpu", NULL));
        GLEAN_TEST_CHECK(code && strcmp(code, "7") == 0, "job %s: ExitCode %s, want 7", id, code ? code : "-");
        GLEAN_TEST_CHECK(sig && strcasecmp(sig, "false") == 0, "job %s: ExitBySignal %s", id, sig ? sig : "-");
        GLEAN_TEST_CHECK(cpu && strtod(cpu, NULL) > 0, "job %s: RemoteUserCpu %s, want > 0", id, cpu ? cpu : "-");
        free(code);
        free(sig);
        free(cpu);
        char *out = pool_trim(gl_out("history", id, "-af", "NumJobStarts", NULL));
        pid_t pids[4];
        size_t runs = job_starts(&m, id, pids, 4);
        GLEAN_TEST_CHECK(out && strcmp(out, "1") == 0 && runs == 1, "job %s: NumJobStarts %s, %zu runs", id,
                         out ? out : "-", runs);
        free(out);
        char *log = NULL;
        glean_test_read_file(m.log, &log, NULL);
        GLEAN_TEST_CHECK(log && !strstr(log, "back to Idle"), "the job was requeued:\n%s", log ? log : "");
        free(log);
        cgpool_stop(&cp);
        remove_dir(old_dir);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "an agent restarted while its job runs re-adopts it; the job completes once, with its real exit code",
                  test_agent_restart_readopts },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "readopt", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        in_vm = cgtest_in_vm();
        if (!in_vm)
                return glean_test_skip("it creates cgroups: it runs in the VM rig (make check-vm, tests/vm/tests.txt)");
        signal(SIGPIPE, SIG_IGN);
        return cgtest_main(argc, argv, suites, &env, false);
}

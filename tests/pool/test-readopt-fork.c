/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-readopt-fork.c — an agent of a whole pool killed with SIGKILL while
 * its job runs, with the plain fork executor (no cgroup subtree, as on a
 * hybrid host): the real glean-negotiator, a real glean-agent dialing it
 * (AGENT_EXECUTOR = fork), kill -9 of the agent, the agent started again
 * on the same EXECUTE.
 *
 * - It re-adopts the job by its reaper (agent/exec/exec-child.c), and the job's
 *   real end is what `glean history` shows: ExitCode 7, the CPU it burned
 *   after the restart in RemoteUserCpu, one run.
 * - A job that cannot be re-adopted (its slot is gone from the new
 *   configuration) is killed, its process group and its reaper, and no
 *   process of it is left running.
 *
 * Runs on the host (no cgroups are made); the jobs run as nobody when the
 * tests run as root.
 */
#define _GNU_SOURCE

#include "pool-test.h"

static int slow(int seconds) {
        return seconds * agent_test_slowdown();
}

/* Waits up to seconds for pid to end (gone, or a zombie its new parent
 * has not reaped yet): 0, else its state letter. */
static char wait_ended(pid_t pid, int seconds) {
        char st = proc_state(pid);
        for (int i = 0; i < seconds * 50 && st && st != 'Z'; i++) {
                usleep(20000);
                st = proc_state(pid);
        }
        return st == 'Z' ? 0 : st;
}

/* The pid and process group of the process pid, from /proc (0: gone). */
static pid_t pgid_of(pid_t pid) {
        char path[64], *text = NULL;
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return 0;
        const char *p = strrchr(text, ')');
        int pgrp = 0;
        char state = '?';
        if (!p || sscanf(p + 1, " %c %*d %d", &state, &pgrp) != 2 || state == 'Z')
                pgrp = 0;
        free(text);
        return (pid_t) pgrp;
}

/* The reaper of job pid: its parent while the agent that started it lives. */
static pid_t ppid_of(pid_t pid) {
        char path[64], *text = NULL;
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return 0;
        const char *p = strrchr(text, ')');
        int ppid = 0;
        if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
                ppid = 0;
        free(text);
        return (pid_t) ppid;
}

/* Starts the job (release.sh ID iterations code) on a fresh pool: its id
 * and the job's pid. */
static bool start_job(Manager *m, Pool *p, const char *extra, int iterations, int code, char *id, size_t idlen,
                      pid_t *ret_pid) {
        if (!manager_start(m, "NEGOTIATOR_INTERVAL = 1\nALIVE_INTERVAL = 1\n"))
                return false;
        if (!GLEAN_TEST_CHECK(manager_agent(m, p, "a.test", extra), "agent")) {
                manager_stop(m);
                return false;
        }
        write_release_script(m);
        char body[512];
        snprintf(body, sizeof body, "executable = %s/release.sh\narguments = $(Cluster).$(Process) %d %d\nqueue\n",
                 m->jobs, iterations, code);
        int64_t c = submit_as(m, NULL, "readopt.sub", body, NULL, 0);
        CU_ASSERT_FATAL(c > 0);
        snprintf(id, idlen, "%lld.0", (long long) c);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "2", slow(20)));
        *ret_pid = 0;
        for (int i = 0; i < slow(100) && job_starts(m, id, ret_pid, 1) < 1; i++)
                usleep(50000);
        return GLEAN_TEST_CHECK(*ret_pid > 0, "job %s never ran", id) &&
               GLEAN_TEST_CHECK(wait_job_recorded(p->dir, slow(10)), "the agent never recorded job %s", id);
}

static void kill9(Pool *p) {
        int status;
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &status, 0);
        pool_exited(p, status);
}

static void test_fork_readopt_exit_code(void) {
        Manager m;
        Pool p;
        char extra[512], old_dir[sizeof p.dir], id[32];
        pid_t pid;
        if (!start_job(&m, &p, "AGENT_EXECUTOR = fork\nUPDATE_INTERVAL = 1\nNUM_CPUS = 1\n", 30000, 7, id, sizeof id,
                       &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        pid_t reaper = ppid_of(pid);
        GLEAN_TEST_CHECK(reaper > 0 && reaper != p.pid && ppid_of(reaper) == p.pid,
                         "job %d: its parent %d is not a reaper child of the agent %d", (int) pid, (int) reaper,
                         (int) p.pid);
        GLEAN_TEST_CHECK(pgid_of(pid) == pid, "job %d leads no process group of its own", (int) pid);

        /* The agent dies; the job and its reaper run on. */
        kill9(&p);
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the job %d runs on without its agent", (int) pid);
        GLEAN_TEST_CHECK(reaper > 0 && kill(reaper, 0) == 0, "the reaper %d runs on without its agent", (int) reaper);

        snprintf(extra, sizeof extra, "AGENT_EXECUTOR = fork\nEXECUTE = %s/execute\nUPDATE_INTERVAL = 1\nNUM_CPUS = 1\n",
                 old_dir);
        CU_ASSERT_FATAL(manager_agent(&m, &p, "a.test", extra));
        GLEAN_TEST_CHECK(wait_log(&p, slow(10), "re-adopted", NULL), "the agent's log does not say it re-adopted the job");
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the job %d runs on after the restart", (int) pid);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "2", 1));

        /* Now it burns CPU and exits 7: what the history says is the job's own. */
        pool_release(&m, id);
        CU_ASSERT_TRUE(wait_attr("history", id, "JobStatus", "4", slow(40)));
        char *code = pool_trim(gl_out("history", id, "-af", "ExitCode", NULL));
        char *sig = pool_trim(gl_out("history", id, "-af", "ExitBySignal", NULL));
        char *cpu = pool_trim(gl_out("history", id, "-af", "RemoteUserCpu", NULL));
        char *starts = pool_trim(gl_out("history", id, "-af", "NumJobStarts", NULL));
        GLEAN_TEST_CHECK(code && strcmp(code, "7") == 0, "job %s: ExitCode %s, want 7", id, code ? code : "-");
        GLEAN_TEST_CHECK(sig && strcasecmp(sig, "false") == 0, "job %s: ExitBySignal %s", id, sig ? sig : "-");
        GLEAN_TEST_CHECK(cpu && strtod(cpu, NULL) > 0, "job %s: RemoteUserCpu %s, want > 0", id, cpu ? cpu : "-");
        GLEAN_TEST_CHECK(starts && strcmp(starts, "1") == 0, "job %s: NumJobStarts %s", id, starts ? starts : "-");
        free(code);
        free(sig);
        free(cpu);
        free(starts);
        GLEAN_TEST_CHECK(wait_ended(pid, slow(5)) == 0, "the job %d is still there", (int) pid);
        GLEAN_TEST_CHECK(reaper > 0 && wait_ended(reaper, slow(5)) == 0, "its reaper %d is still there", (int) reaper);
        char *log = NULL;
        glean_test_read_file(m.log, &log, NULL);
        GLEAN_TEST_CHECK(log && !strstr(log, "back to Idle"), "the job was requeued:\n%s", log ? log : "");
        free(log);
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

static void test_fork_orphan_killed(void) {
        Manager m;
        Pool p;
        char extra[512], old_dir[sizeof p.dir], id[32];
        pid_t pid;
        if (!start_job(&m, &p, "AGENT_EXECUTOR = fork\nUPDATE_INTERVAL = 1\nNUM_CPUS = 1\n", 1, 0, id, sizeof id, &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        pid_t reaper = ppid_of(pid);
        /* A child of the job in its group, which outlives the job's shell. */
        kill9(&p);
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the job %d runs on without its agent", (int) pid);

        /* Its slot is partitionable now: slot1 cannot run it, it cannot be re-adopted. */
        snprintf(extra, sizeof extra,
                 "AGENT_EXECUTOR = fork\nEXECUTE = %s/execute\nUPDATE_INTERVAL = 1\nNUM_CPUS = 1\n"
                 "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = cpus=1\nSLOT_TYPE_1_PARTITIONABLE = True\n",
                 old_dir);
        CU_ASSERT_FATAL(manager_agent(&m, &p, "a.test", extra));
        GLEAN_TEST_CHECK(wait_log(&p, slow(10), "cannot re-adopt", NULL), "the agent's log does not say it could not re-adopt");
        GLEAN_TEST_CHECK(wait_log(&p, slow(10), "killed the process group", NULL),
                         "the agent's log does not say it killed the job");
        GLEAN_TEST_CHECK(wait_ended(pid, slow(5)) == 0, "the job %d that could not be re-adopted runs on", (int) pid);
        GLEAN_TEST_CHECK(reaper <= 0 || wait_ended(reaper, slow(5)) == 0, "its reaper %d runs on", (int) reaper);
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "an agent killed -9 re-adopts its job (fork executor); its real exit code and CPU are reported",
                  test_fork_readopt_exit_code },
                { "a job that cannot be re-adopted is killed (fork executor)", test_fork_orphan_killed },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "readopt-fork", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

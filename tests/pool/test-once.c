/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-once.c — a job runs once at a time, whatever the order in which an
 * agent killed with SIGKILL while its job runs comes back: the real
 * glean-negotiator, real glean-agents (the fork executor: the job and its
 * reaper outlive the agent), a job with a short lease (+JobLeaseDuration =
 * 6) that records each run (its pid in starts.ID when it begins, in done.ID
 * when it ends) and exits with the number of its run.
 *
 *   - the agent back before the lease ran out: the job goes on, completes
 *     once (NumJobStarts 1);
 *   - back after the central manager requeued the job, before it ran
 *     again: the old run is killed at once (the claim's lease ran out while
 *     no agent ran), the job runs once more from the queue: one run
 *     completes, the second (ExitCode 2);
 *   - back after the job started again on another machine: the old run was
 *     killed by its reaper at the end of the lease, the new one runs on,
 *     and only its exit counts;
 *   - never back, another agent up: the old run's reaper kills it when the
 *     claim's lease runs out, before the central manager starts the job
 *     on the other agent (HTCondor's starter without word from its shadow).
 *
 * Runs on the host (no cgroups are made); the jobs run as nobody when the
 * tests run as root.
 */
#define _GNU_SOURCE

#include "pool-test.h"

#define LEASE 6

static const char agent_config[] = "AGENT_EXECUTOR = fork\nUPDATE_INTERVAL = 1\nNUM_CPUS = 1\n";

static int slow(int seconds) {
        return seconds * agent_test_slowdown();
}

/* Waits up to seconds for pid to end (gone, or a zombie): true when it did. */
static bool wait_ended(pid_t pid, int seconds) {
        char st = proc_state(pid);
        for (int i = 0; i < seconds * 50 && st && st != 'Z'; i++) {
                usleep(20000);
                st = proc_state(pid);
        }
        return !st || st == 'Z';
}

static void kill9(Pool *p) {
        int status;
        kill(p->pid, SIGKILL);
        waitpid(p->pid, &status, 0);
        pool_exited(p, status);
}

/* jobs/once.sh ID SECONDS: its pid to starts.ID and its start time to
 * begin.ID, sleeps, its pid to done.ID, exits with the number of its run. */
static void write_once_script(const Manager *m) {
        char path[200];
        snprintf(path, sizeof path, "%s/once.sh", m->jobs);
        write_file(path, "#!/bin/sh\ndate +%s.%N >> begin.$1\necho $$ >> starts.$1\nn=$(wc -l < starts.$1)\nsleep $2\n"
                         "echo $$ >> done.$1\nexit $n\n");
        chmod(path, 0755);
}

/* Lines of jobs/NAME.ID. */
static size_t lines(const Manager *m, const char *name, const char *id) {
        char path[512], *text = NULL;
        snprintf(path, sizeof path, "%s/%s.%s", m->jobs, name, id);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return 0;
        size_t n = count(text, "\n");
        free(text);
        return n;
}

/* Waits up to seconds for job id to have recorded n runs: the pid of the
 * n-th, 0 if it did not. */
static pid_t wait_run(const Manager *m, const char *id, size_t n, int seconds) {
        pid_t pids[16] = { 0 };
        for (int i = 0; i < seconds * 20; i++) {
                if (job_starts(m, id, pids, 16) >= n)
                        return n <= 16 ? pids[n - 1] : 0;
                usleep(50000);
        }
        return 0;
}

/* A manager and agent a.test (p), and a job of seconds running there: its
 * id and the run's pid. */
static bool start_job(Manager *m, Pool *p, int seconds, char *id, size_t idlen, pid_t *ret_pid) {
        if (!manager_start(m, "NEGOTIATOR_INTERVAL = 1\nALIVE_INTERVAL = 1\n"))
                return false;
        if (!GLEAN_TEST_CHECK(manager_agent(m, p, "a.test", agent_config), "agent a.test")) {
                manager_stop(m);
                return false;
        }
        write_once_script(m);
        char body[512];
        snprintf(body, sizeof body,
                 "executable = %s/once.sh\narguments = $(Cluster).$(Process) %d\n+JobLeaseDuration = %d\nqueue\n",
                 m->jobs, seconds, LEASE);
        int64_t c = submit_as(m, NULL, "once.sub", body, NULL, 0);
        CU_ASSERT_FATAL(c > 0);
        snprintf(id, idlen, "%lld.0", (long long) c);
        *ret_pid = wait_run(m, id, 1, slow(20));
        return GLEAN_TEST_CHECK(*ret_pid > 0, "job %s never ran", id) &&
               GLEAN_TEST_CHECK(wait_job_recorded(p->dir, slow(10)), "the agent never recorded job %s", id);
}

/* The agent of old_dir (killed) started again on its EXECUTE, as name. */
static bool restart(Manager *m, Pool *p, const char *name, const char *old_dir) {
        char extra[512];
        snprintf(extra, sizeof extra, "%sEXECUTE = %s/execute\n", agent_config, old_dir);
        return GLEAN_TEST_CHECK(manager_agent(m, p, name, extra), "agent %s started again", name);
}

/* The job's history: Completed, NumJobStarts and ExitCode as wanted. */
static void check_history(const char *id, const char *starts, const char *code) {
        CU_ASSERT_TRUE(wait_attr("history", id, "JobStatus", "4", slow(45)));
        char *n = pool_trim(gl_out("history", id, "-af", "NumJobStarts", NULL));
        char *c = pool_trim(gl_out("history", id, "-af", "ExitCode", NULL));
        GLEAN_TEST_CHECK(n && strcmp(n, starts) == 0, "job %s: NumJobStarts %s, want %s", id, n ? n : "-", starts);
        GLEAN_TEST_CHECK(c && strcmp(c, code) == 0, "job %s: ExitCode %s, want %s", id, c ? c : "-", code);
        free(n);
        free(c);
}

static void test_back_before_requeue(void) {
        Manager m;
        Pool p;
        char old_dir[sizeof p.dir], id[32];
        pid_t pid;
        if (!start_job(&m, &p, 12, id, sizeof id, &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        kill9(&p);
        CU_ASSERT_FATAL(restart(&m, &p, "a.test", old_dir));
        GLEAN_TEST_CHECK(wait_log(&p, slow(10), "re-adopted", NULL), "the job was not re-adopted");
        GLEAN_TEST_CHECK(proc_state(pid) && proc_state(pid) != 'Z', "the run %d was ended", (int) pid);
        check_history(id, "1", "1");
        GLEAN_TEST_CHECK(lines(&m, "starts", id) == 1, "job %s ran %zu times", id, lines(&m, "starts", id));
        GLEAN_TEST_CHECK(lines(&m, "done", id) == 1, "job %s completed %zu runs", id, lines(&m, "done", id));
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

static void test_back_after_requeue(void) {
        Manager m;
        Pool p;
        char old_dir[sizeof p.dir], id[32];
        pid_t pid;
        if (!start_job(&m, &p, 20, id, sizeof id, &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        kill9(&p);
        /* The central manager gives the claim up at the end of its lease. */
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "1", slow(LEASE + 10)));
        /* Its reaper ended it at the end of the lease. */
        GLEAN_TEST_CHECK(wait_ended(pid, slow(2)), "the run %d of the expired claim runs on with no agent", (int) pid);
        CU_ASSERT_FATAL(restart(&m, &p, "a.test", old_dir));
        GLEAN_TEST_CHECK(wait_ended(pid, slow(5)), "the run %d of the expired claim runs on after the restart",
                         (int) pid);
        pid_t again = wait_run(&m, id, 2, slow(20));
        GLEAN_TEST_CHECK(again > 0, "job %s did not run again", id);
        char ids[1][32];
        snprintf(ids[0], sizeof ids[0], "%s", id);
        never_twice(&m, ids, 1, slow(3), NULL, NULL);
        check_history(id, "2", "2");
        GLEAN_TEST_CHECK(lines(&m, "starts", id) == 2, "job %s ran %zu times", id, lines(&m, "starts", id));
        GLEAN_TEST_CHECK(lines(&m, "done", id) == 1, "job %s completed %zu runs, want 1", id, lines(&m, "done", id));
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

static void test_back_after_new_run(void) {
        Manager m;
        Pool p, b;
        char old_dir[sizeof p.dir], id[32];
        pid_t pid;
        if (!start_job(&m, &p, 20, id, sizeof id, &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &b, "b.test", agent_config), "agent b.test")) {
                pool_stop(&p);
                manager_stop(&m);
                return;
        }
        kill9(&p);
        /* Requeued at the end of the lease, then run on b.test. */
        pid_t again = wait_run(&m, id, 2, slow(LEASE + 20));
        CU_ASSERT_FATAL(again > 0);
        /* Its reaper ended it at the end of the lease. */
        GLEAN_TEST_CHECK(wait_ended(pid, slow(2)), "the run %d of the expired claim runs on with no agent", (int) pid);
        CU_ASSERT_FATAL(restart(&m, &p, "a.test", old_dir));
        GLEAN_TEST_CHECK(wait_ended(pid, slow(5)), "the run %d of the expired claim runs on after the restart",
                         (int) pid);
        GLEAN_TEST_CHECK(proc_state(again) && proc_state(again) != 'Z', "the new run %d was ended", (int) again);
        char ids[1][32];
        snprintf(ids[0], sizeof ids[0], "%s", id);
        never_twice(&m, ids, 1, slow(3), NULL, NULL);
        check_history(id, "2", "2");
        GLEAN_TEST_CHECK(lines(&m, "starts", id) == 2, "job %s ran %zu times", id, lines(&m, "starts", id));
        GLEAN_TEST_CHECK(lines(&m, "done", id) == 1, "job %s completed %zu runs, want 1", id, lines(&m, "done", id));
        pool_stop(&b);
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

/* The agent's own check cannot tell (its record says the claim was kept
 * alive a moment ago: a clock set back, a lag): it re-adopts the job and
 * advertises the claim, which the central manager gave up; the manager
 * has it killed and released, and ignores its exit. */
static void test_manager_kills_unknown_claim(void) {
        Manager m;
        Pool p;
        char old_dir[sizeof p.dir], id[32], path[sizeof p.dir + 64];
        pid_t pid;
        if (!start_job(&m, &p, 20, id, sizeof id, &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        kill9(&p);
        /* The record kept fresh meanwhile (a clock that lags): its reaper
         * does not end the run. */
        snprintf(path, sizeof path, "%s/execute/.glean-state/slot1.ad", old_dir);
        bool idle = false;
        for (int i = 0; i < slow(LEASE + 10) && !idle; i++) {
                CU_ASSERT_FATAL(utimensat(AT_FDCWD, path, NULL, 0) == 0);
                idle = wait_attr("q", id, "JobStatus", "1", 1);
        }
        CU_ASSERT_TRUE(idle);
        CU_ASSERT_FATAL(utimensat(AT_FDCWD, path, NULL, 0) == 0);
        CU_ASSERT_TRUE(proc_state(pid) && proc_state(pid) != 'Z');
        CU_ASSERT_FATAL(restart(&m, &p, "a.test", old_dir));
        GLEAN_TEST_CHECK(wait_log(&p, slow(10), "re-adopted", NULL), "the job was not re-adopted");
        GLEAN_TEST_CHECK(wait_ended(pid, slow(5)), "the run %d of the claim the manager gave up runs on", (int) pid);
        char *log = NULL;
        glean_test_read_file(m.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "which the central manager does not hold"),
                         "the central manager did not say it does not hold the claim");
        free(log);
        GLEAN_TEST_CHECK(wait_run(&m, id, 2, slow(20)) > 0, "job %s did not run again", id);
        check_history(id, "2", "2");
        GLEAN_TEST_CHECK(lines(&m, "done", id) == 1, "job %s completed %zu runs, want 1", id, lines(&m, "done", id));
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

static double wall(void) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        return (double) t.tv_sec + (double) t.tv_nsec / 1e9;
}

/* The n-th line of jobs/begin.ID as a number (0: none). */
static double begin_time(const Manager *m, const char *id, size_t n) {
        char path[512], *text = NULL;
        snprintf(path, sizeof path, "%s/begin.%s", m->jobs, id);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return 0;
        double t = 0;
        char *line = text;
        for (size_t i = 1; line && i < n; i++) {
                line = strchr(line, '\n');
                if (line)
                        line++;
        }
        if (line && *line)
                t = strtod(line, NULL);
        free(text);
        return t;
}

static void test_no_agent(void) {
        Manager m;
        Pool p, b;
        char old_dir[sizeof p.dir], id[32], path[sizeof p.dir + 64];
        struct stat st;
        pid_t pid;
        if (!start_job(&m, &p, 30, id, sizeof id, &pid))
                return;
        snprintf(old_dir, sizeof old_dir, "%s", p.dir);
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &b, "b.test", agent_config), "agent b.test")) {
                pool_stop(&p);
                manager_stop(&m);
                return;
        }
        kill9(&p);
        snprintf(path, sizeof path, "%s/execute/.glean-state/slot1.ad", old_dir);
        CU_ASSERT_FATAL(stat(path, &st) == 0);
        double last_alive = (double) st.st_mtime, ended = 0;
        /* Gone within the lease (and 2 s) of the last keep-alive. */
        while (wall() < last_alive + LEASE + slow(2) + 1) {
                char c = proc_state(pid);
                if (!c || c == 'Z') {
                        ended = wall();
                        break;
                }
                usleep(20000);
        }
        GLEAN_TEST_CHECK(ended > 0 && ended <= last_alive + LEASE + slow(2),
                         "the old run %d ended %.1f s after the last keep-alive (lease %d s)", (int) pid,
                         (ended > 0 ? ended : wall()) - last_alive, LEASE);
        if (!ended && wait_ended(pid, slow(30)))
                ended = wall();
        pid_t again = wait_run(&m, id, 2, slow(LEASE + 20));
        CU_ASSERT_FATAL(again > 0);
        double started = begin_time(&m, id, 2);
        GLEAN_TEST_CHECK(started > 0 && ended > 0 && started >= ended,
                         "the new run began %.2f s before the old run ended", ended - started);
        GLEAN_TEST_CHECK(proc_state(again) && proc_state(again) != 'Z', "the new run %d was ended", (int) again);
        char ids[1][32];
        snprintf(ids[0], sizeof ids[0], "%s", id);
        never_twice(&m, ids, 1, slow(3), NULL, NULL);
        pool_stop(&b);
        pool_stop(&p);
        remove_dir(old_dir);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "the agent back before the lease ran out: the job goes on and completes once",
                  test_back_before_requeue },
                { "the agent back after the requeue: the old run is killed, the job runs once more",
                  test_back_after_requeue },
                { "the agent back after the new run started elsewhere: the old run is killed, the new one counts",
                  test_back_after_new_run },
                { "a run of a claim the central manager gave up is killed by the manager's word",
                  test_manager_kills_unknown_claim },
                { "no agent runs: the old run ends at its lease, before the new one starts", test_no_agent },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "once", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

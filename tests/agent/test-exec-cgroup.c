/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-exec-cgroup.c — the cgroup v2 executor with real processes, in a
 * test subtree of our own (tests/agent/cgroup-test.h: <cgroup2
 * mount>/glean-test-<pid>-<random>, removed at the end, a guard process
 * removing it if the suite dies): the exit code; the job's process in its
 * cgroup from the start; a child left behind killed when the main process
 * exits, the cgroup empty then and removed after; suspend and resume
 * through cgroup.freeze (the job makes no progress while frozen) with the
 * kernel's confirmation timed; signals and kill to the whole cgroup; CPU
 * usage from cpu.stat (of processes the main process never waited for);
 * the job's account (nobody when root) and its inability to write its own
 * cgroup's files; start failures and a busy cgroup; abandoned jobs and
 * the executor's end. With GLEAN_VM=1 (the VM rig, which has the memory
 * controller) an OOM kill under the slot's memory.max is reported; without
 * it that test says it was skipped and passes. Re-adoption: a job whose
 * executor was forgotten (agent_executor_forget: what a killed agent
 * leaves) adopted by another (suspend, signal, the exit with its status
 * unknown, the cgroup and scratch removed after), its main process
 * pinned only while it is in the cgroup; adoption of a missing or empty
 * cgroup refused; leftover cgroups killed and removed (agent_exec_cleanup).
 *
 * Needs root and a writable cgroup v2 (hybrid hosts: /sys/fs/cgroup/unified,
 * no controllers needed); exits 77 otherwise.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/exec.h"
#include "cgroup-test.h"

/* Seconds any single wait may take: more in the VM rig (qemu, maybe
 * without KVM). */
#define TIMEOUT (in_vm ? 60.0 : 10.0)
#define SLOT "slot1_2"

static CgTestEnv env;
static bool in_vm;
static CgRoot *root;
static sd_event *event;
static AgentExecutor *executor;
static char base[64];            /* /tmp/glean-test-exec-cgroup-XXXXXX, 0755 */
static char execute_dir[128];    /* base/execute: the scratch parent */
static char work[128];           /* base/work: 0777, the jobs' files */

typedef struct Run {
        int calls;
        AgentJobExit ex;
        AgentJob *job;
        char *scratch;
        char cg_abs[512];       /* the job's cgroup, absolute */
        bool scratch_in_callback;
        bool cg_in_callback;     /* the cgroup still there during the callback */
        char events_in_callback[128];
        bool free_in_callback;
} Run;

#include "exec-test.h"

/* ---- helpers ---- */

static void on_exit_cb(AgentJob *job, const AgentJobExit *ex, void *userdata) {
        Run *run = userdata;
        struct stat st;

        run->calls++;
        run->ex = *ex;
        GLEAN_TEST_CHECK(job == run->job, "the callback got another job");
        if (run->scratch)
                run->scratch_in_callback = lstat(run->scratch, &st) == 0 && S_ISDIR(st.st_mode);
        run->cg_in_callback = stat(run->cg_abs, &st) == 0;
        if (run->cg_in_callback) {
                char path[600];

                snprintf(path, sizeof(path), "%s/cgroup.events", run->cg_abs);
                if (cgtest_read(path, run->events_in_callback, sizeof(run->events_in_callback)) < 0)
                        run->events_in_callback[0] = '\0';
        }
        if (run->free_in_callback) {
                agent_job_free(job);
                run->job = NULL;
        }
}

static off_t work_size(const char *name) {
        char *p = path_in(work, name);
        struct stat st;
        off_t size = stat(p, &st) == 0 ? st.st_size : -1;

        free(p);
        return size;
}

static bool dir_is_empty(const char *path) {
        DIR *d = opendir(path);
        struct dirent *de;
        bool empty = true;

        if (!d)
                return false;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        empty = false;
        closedir(d);
        return empty;
}

/* "populated N" / "frozen N" of a cgroup.events text; -1 when absent. */
static int events_value(const char *text, const char *key) {
        const char *p = strstr(text, key);

        return p && p[strlen(key)] == ' ' ? atoi(p + strlen(key) + 1) : -1;
}

static int cg_file_value(const char *cg_abs, const char *key) {
        char path[600], text[256];

        snprintf(path, sizeof(path), "%s/cgroup.events", cg_abs);
        if (cgtest_read(path, text, sizeof(text)) < 0)
                return -1;
        return events_value(text, key);
}

static bool exists(const char *path) {
        struct stat st;

        return stat(path, &st) == 0;
}

static AgentJobSpec *spec_of(ClassAd *ad, const char *cgroup) {
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        int r;

        r = agent_jobspec_from_ad(ad, NULL, execute_dir, SLOT, &spec, why, sizeof(why));
        classad_free(ad);
        GLEAN_TEST_CHECK_FATAL(r == 0, "jobspec: %d %s", r, why);
        if (cgroup)
                CU_ASSERT_FATAL((spec->cgroup = strdup(cgroup)) != NULL);
        return spec;
}

/* Starts the job of spec (taken) with run. */
static int start_spec(AgentJobSpec *spec, Run *run) {
        int r;

        free(run->scratch);
        run->scratch = strdup(spec->scratch);
        snprintf(run->cg_abs, sizeof(run->cg_abs), "%s/slots/%s", env.abs, spec->cgroup ? spec->cgroup : SLOT "/job");
        r = agent_exec_start(executor, spec, on_exit_cb, run, &run->job);
        if (r < 0)
                run->job = NULL;
        agent_jobspec_free(spec);
        return r;
}

/* cgroup NULL: a fresh "tN/job" (a job a failed test left running does
 * not hold up the next ones); "": the default, <_CONDOR_SLOT>/job. */
static int start(ClassAd *ad, Run *run, const char *cgroup) {
        static unsigned n;
        char fresh[32];

        if (!cgroup) {
                snprintf(fresh, sizeof(fresh), "t%u/job", ++n);
                cgroup = fresh;
        } else if (!*cgroup)
                cgroup = NULL;
        return start_spec(spec_of(ad, cgroup), run);
}

static bool run_job(ClassAd *ad, Run *run) {
        return run_started(run, start(ad, run, NULL));
}

/* Runs the loop until the last suspend/resume is confirmed (or fails). */
static int wait_freeze(AgentJob *job) {
        double end = now() + TIMEOUT;
        int r;

        while ((r = agent_job_freeze_latency_us(job)) == -EINPROGRESS && now() < end)
                (void) sd_event_run(event, 20 * 1000);
        return r;
}

/* ---- suite set-up ---- */

static int suite_init(void) {
        char why[256] = "";

        if (cg_root_open(env.mount, env.base, false, &root, why, sizeof(why)) < 0) {
                fprintf(stderr, "cg_root_open: %s\n", why);
                return -1;
        }
        if (exec_test_dirs("/tmp/glean-test-exec-cgroup-XXXXXX") < 0)
                return -1;
        return agent_executor_cgroup_new(event, root, &executor) < 0 ? -1 : 0;
}

static int suite_cleanup(void) {
        int r = exec_test_cleanup();

        cg_root_free(root);
        root = NULL;
        return r;
}

/* ---- tests ---- */

static void test_exit_code(void) {
        Run *run = run_new();

        CU_ASSERT_STRING_EQUAL(agent_executor_name(executor), "cgroup");
        if (run_job(job_ad("exit 3", NULL), run)) {
                AgentJobExit u;

                CU_ASSERT_EQUAL(run->calls, 1);
                CU_ASSERT_FALSE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.exit_code, 3);
                CU_ASSERT_FALSE(run->ex.oom_killed);
                CU_ASSERT_STRING_EQUAL(run->ex.reason, "");
                CU_ASSERT(run->ex.wall_time >= 0 && run->ex.wall_time < TIMEOUT);
                CU_ASSERT_TRUE(agent_job_exited(run->job));
                CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), -ESRCH);
                CU_ASSERT_EQUAL(agent_job_suspend(run->job), -ESRCH);
                CU_ASSERT_EQUAL(agent_job_kill(run->job), -ESRCH);
                CU_ASSERT_EQUAL(agent_job_freeze_latency_us(run->job), -ENODATA);
                CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
                CU_ASSERT_EQUAL(u.exit_code, 3);
                /* There for the callback, removed after it. */
                CU_ASSERT_TRUE(run->scratch_in_callback);
                CU_ASSERT_TRUE(run->cg_in_callback);
                GLEAN_TEST_CHECK(!exists(run->cg_abs), "the job cgroup %s is still there", run->cg_abs);
                GLEAN_TEST_CHECK(!exists(run->scratch), "the scratch directory %s is still there", run->scratch);
        }
        spin(0.1);
        CU_ASSERT_EQUAL(run->calls, 1);
        run_done(run);

        if (run_job(job_ad("kill -USR1 $$; sleep 5", NULL), run)) {
                CU_ASSERT_TRUE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.signal, SIGUSR1);
        }
        run_done(run);
}

/* The job is in its cgroup, from its first instruction: the cgroup the
 * daemon names, or <_CONDOR_SLOT>/job. */
static void test_in_cgroup(void) {
        const char *paths[] = { "", "slot1/slot1_3/job" };
        Run *run = run_new();

        for (size_t i = 0; i < 2; i++) {
                char want[600], got[600] = "", *s;

                CU_ASSERT_FATAL(start(job_ad("cat /proc/self/cgroup > self-cg.txt; echo ready > cg-ready; sleep 30",
                                             NULL),
                                      run, paths[i]) == 0);
                snprintf(want, sizeof(want), "/%s/slots/%s", env.base, *paths[i] ? paths[i] : SLOT "/job");
                CU_ASSERT_FATAL(wait_file("cg-ready"));
                CU_ASSERT_EQUAL(cgtest_proc_cgroup(agent_job_pid(run->job), got, sizeof(got)), 0);
                GLEAN_TEST_CHECK(strcmp(got, want) == 0, "the job's main process is in %s, want %s", got, want);
                s = read_work("self-cg.txt");
                GLEAN_TEST_CHECK(strstr(s, want) != NULL, "the job saw itself in '%s', want %s", s, want);
                free(s);
                CU_ASSERT_EQUAL(cg_file_value(run->cg_abs, "populated"), 1);
                CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
                CU_ASSERT(wait_exit(run));
                CU_ASSERT_TRUE(run->ex.by_signal && run->ex.signal == SIGKILL);
                GLEAN_TEST_CHECK(!exists(run->cg_abs), "%s is still there", run->cg_abs);
                run_done(run);
                s = path_in(work, "cg-ready");
                (void) unlink(s);
                free(s);
        }
}

static void test_children_killed(void) {
        Run *run = run_new();
        pid_t child;
        int st;

        /* A child left behind in the background is killed when the main
         * process exits; the exit is reported once the cgroup is empty. */
        CU_ASSERT_FATAL(start(job_ad("sleep 1000 & echo $! > left.pid; exit 0", NULL), run, NULL) == 0);
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_EQUAL(run->ex.exit_code, 0);
        CU_ASSERT_STRING_EQUAL(run->ex.reason, "");
        GLEAN_TEST_CHECK(events_value(run->events_in_callback, "populated") == 0,
                         "cgroup.events during the callback: '%s'", run->events_in_callback);
        child = read_pid("left.pid");
        CU_ASSERT_FATAL(child > 0);
        st = reap_orphan(child);
        GLEAN_TEST_CHECK(st == -1 || (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL),
                         "the child left behind (%d) was not killed (%d)", (int) child, st);
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "%s is still there", run->cg_abs);
        run_done(run);

        /* A daemonised grandchild (setsid, its parent gone) too. */
        CU_ASSERT_FATAL(start(job_ad("(setsid sleep 1000 & echo $! > daemon.pid) ; sleep 0.1; exit 5", NULL), run,
                              NULL) == 0);
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_EQUAL(run->ex.exit_code, 5);
        GLEAN_TEST_CHECK(events_value(run->events_in_callback, "populated") == 0,
                         "cgroup.events during the callback: '%s'", run->events_in_callback);
        child = read_pid("daemon.pid");
        CU_ASSERT_FATAL(child > 0);
        st = reap_orphan(child);
        GLEAN_TEST_CHECK(st == -1 || (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL),
                         "the daemonised child (%d) was not killed (%d)", (int) child, st);
        run_done(run);
}

static void test_suspend_resume(void) {
        Run *run = run_new();
        off_t before, after;
        int lat;

        /* Progress: a line every 20 ms, from a child of the main process. */
        CU_ASSERT_FATAL(start(job_ad("(while :; do echo x >> progress.txt; sleep 0.02; done) & "
                                     "echo ready > prog-ready; wait",
                                     NULL),
                              run, NULL) == 0);
        CU_ASSERT_FATAL(wait_file("prog-ready"));
        spin(0.1);
        CU_ASSERT(work_size("progress.txt") > 0);

        CU_ASSERT_EQUAL(agent_job_suspend(run->job), 0);
        lat = wait_freeze(run->job);
        GLEAN_TEST_CHECK(lat >= 0, "freeze not confirmed: %d", lat);
        printf("\n    freeze confirmed in %d us", lat);
        CU_ASSERT_EQUAL(cg_file_value(run->cg_abs, "frozen"), 1);
        before = work_size("progress.txt");
        spin(0.5);
        after = work_size("progress.txt");
        GLEAN_TEST_CHECK(before == after, "the frozen job made progress: %lld -> %lld bytes", (long long) before,
                         (long long) after);
        CU_ASSERT_EQUAL(run->calls, 0);
        /* Asked again: already frozen, confirmed at once. */
        CU_ASSERT_EQUAL(agent_job_suspend(run->job), 0);
        CU_ASSERT(agent_job_freeze_latency_us(run->job) >= 0);

        AgentJobExit u;
        CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
        CU_ASSERT(u.wall_time >= 0.5);

        CU_ASSERT_EQUAL(agent_job_resume(run->job), 0);
        lat = wait_freeze(run->job);
        GLEAN_TEST_CHECK(lat >= 0, "thaw not confirmed: %d", lat);
        printf(", thaw in %d us\n", lat);
        CU_ASSERT_EQUAL(cg_file_value(run->cg_abs, "frozen"), 0);
        spin(0.3);
        GLEAN_TEST_CHECK(work_size("progress.txt") > after, "the job does not run again");

        /* A frozen job can be killed. */
        CU_ASSERT_EQUAL(agent_job_suspend(run->job), 0);
        CU_ASSERT(wait_freeze(run->job) >= 0);
        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        if (wait_exit(run)) {
                CU_ASSERT_TRUE(run->ex.by_signal && run->ex.signal == SIGKILL);
                CU_ASSERT_STRING_EQUAL(run->ex.reason, "");
        }
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "%s is still there", run->cg_abs);
        run_done(run);
}

static void test_signal_trapped(void) {
        Run *run = run_new();

        CU_ASSERT_FATAL(start(job_ad("trap \"exit 7\" TERM; echo ready > trap-ready; while :; do sleep 0.1; done", NULL),
                              run, NULL) == 0);
        CU_ASSERT_FATAL(wait_file("trap-ready"));
        CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), 0);
        if (wait_exit(run)) {
                CU_ASSERT_FALSE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.exit_code, 7);
        }
        run_done(run);
}

static void test_kill_ignoring_term(void) {
        Run *run = run_new();

        CU_ASSERT_FATAL(start(job_ad("trap \"\" TERM; echo ready > ign-ready; while :; do sleep 0.1; done", NULL), run,
                              NULL) == 0);
        CU_ASSERT_FATAL(wait_file("ign-ready"));
        CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), 0);
        spin(0.4);
        CU_ASSERT_EQUAL(run->calls, 0); /* still running */
        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        if (wait_exit(run)) {
                CU_ASSERT_TRUE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.signal, SIGKILL);
        }
        run_done(run);
}

/* The CPU of a process the main process never waits for counts. */
static void test_usage(void) {
        Run *run = run_new();
        AgentJobExit u = {};

        /* half a second of CPU (wall clock bounded: slow machines too) */
        CU_ASSERT_FATAL(start(job_ad("(timeout 0.5 sh -c \"while :; do :; done\"; echo ready > busy-ready; "
                                     "sleep 1000) & exec sleep 300",
                                     NULL),
                              run, NULL) == 0);
        CU_ASSERT_FATAL(wait_file("busy-ready"));
        CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
        GLEAN_TEST_CHECK(u.user_cpu + u.sys_cpu > 0.05, "cpu %.3f + %.3f", u.user_cpu, u.sys_cpu);
        CU_ASSERT(u.max_rss_kb > 0);
        CU_ASSERT(u.wall_time > 0);
        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        if (wait_exit(run)) {
                GLEAN_TEST_CHECK(run->ex.user_cpu + run->ex.sys_cpu > 0.05, "cpu at exit %.3f + %.3f",
                                 run->ex.user_cpu, run->ex.sys_cpu);
                GLEAN_TEST_CHECK(run->ex.user_cpu + run->ex.sys_cpu >= u.user_cpu + u.sys_cpu - 0.001,
                                 "cpu at exit %.3f below the live %.3f", run->ex.user_cpu + run->ex.sys_cpu,
                                 u.user_cpu + u.sys_cpu);
                CU_ASSERT(run->ex.max_rss_kb > 0);
                CU_ASSERT(run->ex.wall_time >= u.wall_time);
        }
        run_done(run);
}

static void test_identity(void) {
        Run *run = run_new();
        struct passwd *pw = getpwnam("nobody");
        char *s;

        CU_ASSERT_FATAL(pw != NULL);
        if (run_job(job_ad("id -u; id -g; grep NoNewPrivs /proc/self/status", "Out", "id.txt", NULL), run)) {
                unsigned uid = 0, gid = 0;
                char nnp[64] = "";

                s = read_work("id.txt");
                GLEAN_TEST_CHECK(sscanf(s, "%u\n%u\nNoNewPrivs:\t%63s", &uid, &gid, nnp) == 3, "id output: '%s'", s);
                CU_ASSERT_EQUAL(uid, pw->pw_uid);
                CU_ASSERT_NOT_EQUAL(uid, 0);
                CU_ASSERT_NOT_EQUAL(gid, 0);
                CU_ASSERT_STRING_EQUAL(nnp, "1");
                free(s);
        }
        run_done(run);
}

/* The job cannot freeze, kill or leave its own cgroup, nor raise its limits. */
static void test_cannot_write_own_cgroup(void) {
        Run *run = run_new();
        char *script, *s;

        CU_ASSERT_FATAL(asprintf(&script,
                                 "cg=%s$(sed -n \"s/^0:://p\" /proc/self/cgroup); "
                                 "for f in cgroup.kill cgroup.procs cgroup.subtree_control; do "
                                 "  if echo 1 > $cg/$f; then echo \"wrote $f\"; else echo \"refused $f\"; fi; "
                                 "done; "
                                 "if echo $$ > $cg/../cgroup.procs; then echo \"moved\"; else echo \"stayed\"; fi; "
                                 "echo 1 > $cg/cgroup.freeze",
                                 env.mount) >= 0);
        if (run_job(job_ad(script, "Out", "own-out.txt", "Err", "own-err.txt", NULL), run)) {
                GLEAN_TEST_CHECK(!run->ex.by_signal && run->ex.exit_code != 0,
                                 "writing its own cgroup.freeze: %s %d (want a failure)",
                                 run->ex.by_signal ? "signal" : "exit", run->ex.by_signal ? run->ex.signal : run->ex.exit_code);
                s = read_work("own-out.txt");
                GLEAN_TEST_CHECK(strcmp(s, "refused cgroup.kill\nrefused cgroup.procs\nrefused cgroup.subtree_control\n"
                                           "stayed\n") == 0,
                                 "the job's own account of its writes: '%s'", s);
                free(s);
                s = read_work("own-err.txt");
                GLEAN_TEST_CHECK(strstr(s, "cgroup.freeze") && strstr(s, "ermission denied"), "stderr: '%s'", s);
                free(s);
                CU_ASSERT_TRUE(run->cg_in_callback);
                GLEAN_TEST_CHECK(events_value(run->events_in_callback, "frozen") == 0,
                                 "the job froze itself: '%s'", run->events_in_callback);
        }
        free(script);
        run_done(run);
}

static void test_start_failures(void) {
        Run *run = run_new(), *other = run_new();
        AgentJobSpec *spec;
        const char *err;
        int r;

        r = start(job_ad("true", "Cmd", "/nonexistent/glean-no-such-program", "Arguments", "", NULL), run, NULL);
        err = agent_executor_last_error(executor);
        CU_ASSERT_EQUAL(r, -ENOENT);
        CU_ASSERT_PTR_NULL(run->job);
        GLEAN_TEST_CHECK(strstr(err, "execute") && strstr(err, "/nonexistent/glean-no-such-program"), "error: %s", err);
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "a failed start left %s", run->cg_abs);

        r = start(job_ad("true", "Iwd", "/nonexistent/glean-dir", NULL), run, NULL);
        CU_ASSERT_EQUAL(r, -ENOENT);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "initial directory") != NULL, "error: %s",
                         agent_executor_last_error(executor));

        /* A cgroup path the driver refuses. */
        r = start(job_ad("true", NULL), run, "slot1/../../escape");
        CU_ASSERT(r < 0);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "cgroup") != NULL, "error: %s",
                         agent_executor_last_error(executor));

        /* No cgroup and no _CONDOR_SLOT. */
        spec = spec_of(job_ad("true", NULL), NULL);
        for (char **e = spec->envp; *e; e++)
                if (strncmp(*e, "_CONDOR_SLOT=", 13) == 0)
                        (*e)[1] = 'X'; /* "_XONDOR_SLOT=" */
        r = start_spec(spec, run);
        CU_ASSERT_EQUAL(r, -EINVAL);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "_CONDOR_SLOT") != NULL, "error: %s",
                         agent_executor_last_error(executor));

        /* A cgroup that still has processes is not taken. */
        CU_ASSERT_FATAL(start(job_ad("echo ready > busy-cg; sleep 30", NULL), other, "slot9/job") == 0);
        CU_ASSERT_FATAL(wait_file("busy-cg"));
        r = start(job_ad("true", NULL), run, "slot9/job");
        CU_ASSERT_EQUAL(r, -EBUSY);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "still has processes") != NULL, "error: %s",
                         agent_executor_last_error(executor));
        CU_ASSERT_EQUAL(cg_file_value(other->cg_abs, "populated"), 1); /* left alone */
        CU_ASSERT_EQUAL(agent_job_kill(other->job), 0);
        CU_ASSERT(wait_exit(other));
        run_done(other);

        spin(0.2);
        CU_ASSERT_EQUAL(run->calls, 0);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "a scratch directory was left behind in %s", execute_dir);
        run_done(run);
}

/* Freeing a running job kills it; it is drained and cleaned up later. */
static void test_abandon(void) {
        Run *run = run_new();
        pid_t pid, child;
        double end;

        CU_ASSERT_FATAL(start(job_ad("sleep 1000 & echo $! > ab.pid; sleep 30", NULL), run, NULL) == 0);
        CU_ASSERT_FATAL(wait_file("ab.pid"));
        pid = agent_job_pid(run->job);
        child = read_pid("ab.pid");
        agent_job_free(run->job);
        run->job = NULL;
        end = now() + TIMEOUT;
        while ((kill(pid, 0) == 0 || exists(run->cg_abs)) && now() < end) {
                /* Its reaper killed with it, the job's zombie comes to us, the subreaper. */
                (void) waitpid(pid, NULL, WNOHANG);
                (void) sd_event_run(event, 20 * 1000);
        }
        GLEAN_TEST_CHECK(kill(pid, 0) < 0 && errno == ESRCH, "the abandoned job %d is still there", (int) pid);
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "the abandoned job's cgroup is still there");
        (void) reap_orphan(child);
        CU_ASSERT_EQUAL(run->calls, 0);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "the abandoned job's scratch directory is still there");
        run_done(run);

        run->free_in_callback = true;
        CU_ASSERT(run_job(job_ad("exit 2", NULL), run));
        CU_ASSERT_EQUAL(run->ex.exit_code, 2);
        CU_ASSERT_PTR_NULL(run->job);
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "cgroup left behind");
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "scratch left behind");
        run_done(run);
}

static void test_executor_free(void) {
        AgentExecutor *other = NULL;
        AgentJobSpec *spec;
        Run *run = run_new();
        char cg_abs[512];
        pid_t pid;

        CU_ASSERT_FATAL(agent_executor_cgroup_new(event, root, &other) == 0);
        spec = spec_of(job_ad("sleep 30", NULL), "slot5/job");
        snprintf(cg_abs, sizeof(cg_abs), "%s/slots/slot5/job", env.abs);
        CU_ASSERT_FATAL(agent_exec_start(other, spec, on_exit_cb, run, &run->job) == 0);
        pid = agent_job_pid(run->job);
        CU_ASSERT(exists(cg_abs));
        agent_executor_free(other);
        (void) reap_orphan(pid);
        GLEAN_TEST_CHECK(kill(pid, 0) < 0 && errno == ESRCH, "job %d outlived its executor", (int) pid);
        GLEAN_TEST_CHECK(!exists(cg_abs), "%s outlived its executor", cg_abs);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "scratch left behind");
        CU_ASSERT_EQUAL(run->calls, 0);
        agent_jobspec_free(spec);
        CU_ASSERT_EQUAL(agent_executor_cgroup_new(event, NULL, &other), -EINVAL);
        CU_ASSERT_EQUAL(agent_executor_cgroup_new(NULL, root, &other), -EINVAL);
}

/* A slot of 32 MB and a job that wants 200: the OOM killer, reported. */
static void test_oom(void) {
        const char *vm = getenv("GLEAN_VM");
        CgLimits l = { .memory_max = 32 * 1024 * 1024, .memory_swap_max = 4096 };
        char why[256] = "";
        unsigned applied = 0;
        Run *run = run_new();
        Cg *slot = NULL;
        int r;

        if (!vm || strcmp(vm, "1") != 0) {
                printf("\n    SKIPPED inside the suite: the OOM test runs in the VM rig only (GLEAN_VM=1)\n");
                return;
        }
        r = cg_open(root, "oomslot", &slot, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "cg_open(oomslot): %d %s", r, why);
        r = cg_set_limits(slot, &l, &applied, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && (applied & CG_MEMORY), "memory.max on %s: %d, applied %#x: %s", cg_path(slot), r,
                         applied, why);
        if (r == 0 && (applied & CG_MEMORY)) {
                CU_ASSERT_FATAL(start(job_ad("x=$(head -c 200000000 /dev/zero | tr \"\\0\" a); echo survived", "Out",
                                             "oom-out.txt", NULL),
                                      run, "oomslot/job") == 0);
                GLEAN_TEST_CHECK(wait_exit(run), "the job that wants 200 MB did not end within %.0f s", TIMEOUT);
                if (run->calls > 0) {
                        char *s = read_work("oom-out.txt");

                        GLEAN_TEST_CHECK(run->ex.oom_killed, "not reported as OOM-killed: %s %d, reason '%s'",
                                         run->ex.by_signal ? "signal" : "exit",
                                         run->ex.by_signal ? run->ex.signal : run->ex.exit_code, run->ex.reason);
                        GLEAN_TEST_CHECK(strncmp(run->ex.reason, "out of memory", 13) == 0, "reason '%s'",
                                         run->ex.reason);
                        CU_ASSERT_STRING_EQUAL(s, "");
                        free(s);
                        printf("\n    oom: %s %d, max_rss_kb %lld, reason: %s\n", run->ex.by_signal ? "signal" : "exit",
                               run->ex.by_signal ? run->ex.signal : run->ex.exit_code, (long long) run->ex.max_rss_kb,
                               run->ex.reason);
                }
                run_done(run);

                /* Within the limit: no OOM. */
                CU_ASSERT_FATAL(start(job_ad("x=$(head -c 1000000 /dev/zero | tr \"\\0\" a); exit 0", NULL), run,
                                      "oomslot/job") == 0);
                GLEAN_TEST_CHECK(wait_exit(run), "the job within its limit did not end");
                if (run->calls > 0) {
                        CU_ASSERT_EQUAL(run->ex.exit_code, 0);
                        CU_ASSERT_FALSE(run->ex.oom_killed);
                }
                run_done(run);
        }
        (void) cg_remove(slot);
        cg_free(slot);
}

/* ---- re-adoption ---- */

#define ADOPTED_REASON "the agent restarted while the job ran: its exit status is unknown"

static double wall_now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Creates an empty file (0644). */
static int touch_file(const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        if (fd < 0)
                return -errno;
        close(fd);
        return 0;
}

/* What a killed agent leaves: the job of script, started in cgroup by an
 * executor of its own that is then forgotten (nothing killed, nothing
 * removed). ready: the file the script writes once it runs. holder keeps
 * the scratch path and cg_abs; its callback never comes. */
static pid_t start_forgotten(const char *script, const char *ready, const char *cgroup, Run *holder) {
        AgentExecutor *other = NULL;
        AgentJobSpec *spec;
        struct stat st;
        pid_t pid;
        int r;

        CU_ASSERT_FATAL(agent_executor_cgroup_new(event, root, &other) == 0);
        spec = spec_of(job_ad(script, NULL), cgroup);
        free(holder->scratch);
        holder->scratch = strdup(spec->scratch);
        snprintf(holder->cg_abs, sizeof(holder->cg_abs), "%s/slots/%s", env.abs, cgroup);
        r = agent_exec_start(other, spec, on_exit_cb, holder, &holder->job);
        agent_jobspec_free(spec);
        GLEAN_TEST_CHECK_FATAL(r == 0, "start: %d %s", r, agent_executor_last_error(other));
        CU_ASSERT_FATAL(wait_file(ready));
        pid = agent_job_pid(holder->job);
        agent_executor_forget(other);
        holder->job = NULL; /* gone with the executor */
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the forgotten job %d was killed", (int) pid);
        CU_ASSERT_EQUAL(cg_file_value(holder->cg_abs, "populated"), 1);
        GLEAN_TEST_CHECK(lstat(holder->scratch, &st) == 0 && S_ISDIR(st.st_mode), "the forgotten job's scratch %s went",
                         holder->scratch);
        return pid;
}

/* Adopts the job in cgroup (scratch: its directory) with run. */
static int adopt(Run *run, const char *cgroup, const char *scratch, pid_t pid, double started_wall) {
        AgentJobSpec *spec = spec_of(job_ad("true", NULL), cgroup);
        int r;

        free(spec->scratch);
        spec->scratch = scratch ? strdup(scratch) : NULL;
        free(run->scratch);
        run->scratch = scratch ? strdup(scratch) : NULL;
        snprintf(run->cg_abs, sizeof(run->cg_abs), "%s/slots/%s", env.abs, cgroup);
        r = agent_exec_adopt(executor, spec, pid, started_wall, on_exit_cb, run, &run->job);
        if (r < 0)
                run->job = NULL;
        agent_jobspec_free(spec);
        return r;
}

static void test_adopt(void) {
        Run *first = run_new(), *run = run_new(), *again = run_new();
        double started = wall_now() - 5.0;
        AgentJobExit u = {};
        off_t before, after;
        pid_t pid, child;
        int r, lat;

        pid = start_forgotten("sleep 1000 & echo $! > adopt-child.pid; "
                              "while :; do echo x >> adopt-progress.txt; sleep 0.02; done & "
                              "echo ready > adopt-ready; while :; do sleep 0.1; done",
                              "adopt-ready", "adopt1/job", first);
        child = read_pid("adopt-child.pid");

        r = adopt(run, "adopt1/job", first->scratch, pid, started);
        GLEAN_TEST_CHECK_FATAL(r == 0, "adopt: %d %s", r, agent_executor_last_error(executor));
        CU_ASSERT_EQUAL(agent_job_pid(run->job), pid);
        CU_ASSERT_FALSE(agent_job_exited(run->job));
        /* Not twice. */
        CU_ASSERT_EQUAL(adopt(again, "adopt1/job", NULL, pid, started), -EBUSY);
        run_done(again);

        CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
        GLEAN_TEST_CHECK(u.wall_time >= 4.9 && u.wall_time < 5.0 + TIMEOUT, "wall time %.3f, started 5 s ago",
                         u.wall_time);

        /* suspend and resume, as for a job started here */
        CU_ASSERT_EQUAL(agent_job_suspend(run->job), 0);
        lat = wait_freeze(run->job);
        GLEAN_TEST_CHECK(lat >= 0, "freeze not confirmed: %d", lat);
        CU_ASSERT_EQUAL(cg_file_value(run->cg_abs, "frozen"), 1);
        before = work_size("adopt-progress.txt");
        spin(0.3);
        after = work_size("adopt-progress.txt");
        GLEAN_TEST_CHECK(before == after, "the frozen job made progress: %lld -> %lld bytes", (long long) before,
                         (long long) after);
        CU_ASSERT_EQUAL(agent_job_resume(run->job), 0);
        CU_ASSERT(wait_freeze(run->job) >= 0);
        CU_ASSERT_EQUAL(cg_file_value(run->cg_abs, "frozen"), 0);
        {
                double end = now() + TIMEOUT;

                while (work_size("adopt-progress.txt") <= after && now() < end)
                        (void) sd_event_run(event, 20 * 1000);
        }
        GLEAN_TEST_CHECK(work_size("adopt-progress.txt") > after, "the job does not run again");
        CU_ASSERT_EQUAL(run->calls, 0);

        /* SIGTERM to every process: the end, the status unknown. */
        CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), 0);
        if (wait_exit(run)) {
                CU_ASSERT_EQUAL(run->calls, 1);
                CU_ASSERT_TRUE(run->ex.status_unknown);
                CU_ASSERT_FALSE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.exit_code, 0);
                CU_ASSERT_FALSE(run->ex.oom_killed);
                CU_ASSERT_STRING_EQUAL(run->ex.reason, ADOPTED_REASON);
                GLEAN_TEST_CHECK(run->ex.wall_time >= 4.9, "wall time %.3f", run->ex.wall_time);
                CU_ASSERT(run->ex.user_cpu + run->ex.sys_cpu >= 0);
                CU_ASSERT_TRUE(run->cg_in_callback);
                CU_ASSERT_TRUE(run->scratch_in_callback);
                CU_ASSERT_TRUE(agent_job_exited(run->job));
                CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), -ESRCH);
                CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
                CU_ASSERT_TRUE(u.status_unknown);
        }
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "the adopted job's cgroup %s is still there", run->cg_abs);
        GLEAN_TEST_CHECK(!exists(run->scratch), "the adopted job's scratch %s is still there", run->scratch);
        CU_ASSERT_NOT_EQUAL(reap_orphan(pid), -2); /* our child: the forgotten executor started it */
        CU_ASSERT_NOT_EQUAL(reap_orphan(child), -2);
        spin(0.1);
        CU_ASSERT_EQUAL(run->calls, 1);
        CU_ASSERT_EQUAL(first->calls, 0);
        run_done(run);
        run_done(first);
}

/* The main pid is pinned only while it is in the job's cgroup. */
static void test_adopt_unpinned(void) {
        Run *first = run_new(), *run = run_new();
        pid_t pid, outside;
        int r, st;

        /* A pid of another cgroup (alive: ours; or a reused number): the
         * main process is gone, the rest is killed, the end reported. */
        pid = start_forgotten("echo ready > unpin-ready; while :; do sleep 0.1; done", "unpin-ready", "adopt2/job",
                              first);
        outside = fork();
        CU_ASSERT_FATAL(outside >= 0);
        if (outside == 0)
                cgtest_child_sleep(100);
        r = adopt(run, "adopt2/job", first->scratch, outside, 0);
        GLEAN_TEST_CHECK_FATAL(r == 0, "adopt: %d %s", r, agent_executor_last_error(executor));
        CU_ASSERT_EQUAL(agent_job_pid(run->job), 0);
        CU_ASSERT_EQUAL(run->calls, 0); /* never from within the call */
        if (wait_exit(run)) {
                CU_ASSERT_TRUE(run->ex.status_unknown);
                CU_ASSERT_STRING_EQUAL(run->ex.reason, ADOPTED_REASON);
                CU_ASSERT(run->ex.wall_time >= 0 && run->ex.wall_time < TIMEOUT);
        }
        GLEAN_TEST_CHECK(kill(outside, 0) == 0 && waitpid(outside, &st, WNOHANG) == 0,
                         "the process outside the cgroup was hit");
        CU_ASSERT_NOT_EQUAL(reap_orphan(pid), -2);
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "%s is still there", run->cg_abs);
        GLEAN_TEST_CHECK(!exists(first->scratch), "%s is still there", first->scratch);
        cgtest_reap(&outside, 1);
        run_done(run);
        run_done(first);

        /* No pid known: the job is its cgroup, and runs on until it empties. */
        pid = start_forgotten("echo ready > nopid-ready; while :; do sleep 0.1; done", "nopid-ready", "adopt3/job",
                              first);
        r = adopt(run, "adopt3/job", NULL, 0, 0);
        GLEAN_TEST_CHECK_FATAL(r == 0, "adopt: %d %s", r, agent_executor_last_error(executor));
        CU_ASSERT_EQUAL(agent_job_pid(run->job), 0);
        spin(0.3);
        CU_ASSERT_EQUAL(run->calls, 0);
        CU_ASSERT_EQUAL(kill(pid, 0), 0);
        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        if (wait_exit(run)) {
                CU_ASSERT_TRUE(run->ex.status_unknown);
                CU_ASSERT_FALSE(run->ex.by_signal);
        }
        CU_ASSERT_NOT_EQUAL(reap_orphan(pid), -2);
        GLEAN_TEST_CHECK(!exists(run->cg_abs), "%s is still there", run->cg_abs);
        /* No scratch given: the forgotten one is left alone. */
        CU_ASSERT_TRUE(exists(first->scratch));
        CU_ASSERT_EQUAL(agent_remove_tree(first->scratch), 0);
        run_done(run);
        run_done(first);
}

static void test_adopt_refused(void) {
        AgentExecutor *fx = NULL;
        Run *run = run_new();
        char why[256] = "";
        Cg *cg = NULL;

        /* Missing: -ESRCH, and not created. */
        CU_ASSERT_EQUAL(adopt(run, "nosuch/job", NULL, getpid(), 0), -ESRCH);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "does not exist") != NULL, "error: %s",
                         agent_executor_last_error(executor));
        CU_ASSERT_PTR_NULL(run->job);
        CU_ASSERT_FALSE(exists(run->cg_abs));

        /* Empty: -ESRCH, left as it is. */
        CU_ASSERT_FATAL(cg_open(root, "empty1/job", &cg, why, sizeof(why)) == 0);
        CU_ASSERT_EQUAL(adopt(run, "empty1/job", NULL, 0, 0), -ESRCH);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "no processes") != NULL, "error: %s",
                         agent_executor_last_error(executor));
        CU_ASSERT_TRUE(exists(run->cg_abs));
        CU_ASSERT_EQUAL(cg_remove(cg), 0);
        cg_free(cg);

        /* A path the driver refuses. */
        CU_ASSERT_EQUAL(adopt(run, "slot1/../../x", NULL, 0, 0), -EINVAL);

        /* The fork executor cannot. */
        CU_ASSERT_FATAL(agent_executor_fork_new(event, &fx) == 0);
        {
                AgentJobSpec *spec = spec_of(job_ad("true", NULL), "adopt1/job");
                AgentJob *job = NULL;

                CU_ASSERT_EQUAL(agent_exec_adopt(fx, spec, getpid(), 0, on_exit_cb, run, &job), -EOPNOTSUPP);
                CU_ASSERT_PTR_NULL(job);
                agent_jobspec_free(spec);
        }
        agent_executor_free(fx);
        spin(0.1);
        CU_ASSERT_EQUAL(run->calls, 0);
        run_done(run);
}

/* A leftover cgroup nobody adopts: killed (frozen or not) and removed. */
static void test_cleanup(void) {
        Run *first = run_new();
        char why[256] = "", path[600];
        pid_t kids[3] = { -1, -1, -1 }, pid;
        Cg *cg = NULL;
        int st, r;

        CU_ASSERT_FATAL(cg_open(root, "left1/job", &cg, why, sizeof(why)) == 0);
        for (size_t i = 0; i < 3; i++) {
                kids[i] = cgtest_clone_into(cg_dirfd(cg));
                CU_ASSERT_FATAL(kids[i] >= 0);
                if (kids[i] == 0)
                        cgtest_child_sleep(100);
        }
        CU_ASSERT_EQUAL(cg_freeze(cg, true), 0);
        snprintf(path, sizeof(path), "%s/slots/left1/job", env.abs);
        CU_ASSERT_EQUAL(agent_exec_cleanup(root, "left1/job", why, sizeof(why)), 3);
        CU_ASSERT_STRING_EQUAL(why, "");
        GLEAN_TEST_CHECK(!exists(path), "%s is still there", path);
        for (size_t i = 0; i < 3; i++) {
                GLEAN_TEST_CHECK(waitpid(kids[i], &st, 0) == kids[i] && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                                 "process %d was not killed", (int) kids[i]);
                kids[i] = -1;
        }
        cg_free(cg);

        /* A job of a forgotten executor: its reaper, its shell, its child (and the shell's sleep of the moment). */
        pid = start_forgotten("sleep 1000 & echo $! > left-child.pid; echo ready > left-ready; "
                              "while :; do sleep 0.1; done",
                              "left-ready", "left2/job", first);
        r = agent_exec_cleanup(root, "left2/job", why, sizeof(why));
        GLEAN_TEST_CHECK(r >= 3 && r <= 4,
                         "cleanup found %d processes (want the reaper, the shell, its child, its sleep): %s", r, why);
        GLEAN_TEST_CHECK(!exists(first->cg_abs), "%s is still there", first->cg_abs);
        CU_ASSERT_NOT_EQUAL(reap_orphan(pid), -2);
        CU_ASSERT_NOT_EQUAL(reap_orphan(read_pid("left-child.pid")), -2);
        CU_ASSERT_EQUAL(agent_remove_tree(first->scratch), 0);
        run_done(first);

        /* Empty: removed, 0. Missing: 0, and not created. Refused paths. */
        CU_ASSERT_FATAL(cg_open(root, "left3/job", &cg, why, sizeof(why)) == 0);
        cg_free(cg);
        snprintf(path, sizeof(path), "%s/slots/left3/job", env.abs);
        CU_ASSERT_EQUAL(agent_exec_cleanup(root, "left3/job", why, sizeof(why)), 0);
        CU_ASSERT_FALSE(exists(path));
        CU_ASSERT_EQUAL(agent_exec_cleanup(root, "left3/job", NULL, 0), 0);
        CU_ASSERT_FALSE(exists(path));
        CU_ASSERT_EQUAL(agent_exec_cleanup(root, "../escape", why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(agent_exec_cleanup(root, "/abs", why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(agent_exec_cleanup(NULL, "left3/job", why, sizeof(why)), -EINVAL);
}

/* VM rig only (the memory controller): an adopted job killed by the OOM
 * killer after its adoption is reported so (the status still unknown). */
static void test_adopt_oom(void) {
        const char *vm = getenv("GLEAN_VM");
        CgLimits l = { .memory_max = 32 * 1024 * 1024, .memory_swap_max = 4096 };
        Run *first = run_new(), *run = run_new();
        char why[256] = "", *go;
        unsigned applied = 0;
        Cg *slot = NULL;
        pid_t pid;
        int r;

        if (!vm || strcmp(vm, "1") != 0) {
                printf("\n    SKIPPED inside the suite: the OOM test runs in the VM rig only (GLEAN_VM=1)\n");
                return;
        }
        r = cg_open(root, "oomslot2", &slot, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "cg_open(oomslot2): %d %s", r, why);
        r = cg_set_limits(slot, &l, &applied, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && (applied & CG_MEMORY), "memory.max on %s: %d, applied %#x: %s", cg_path(slot), r,
                         applied, why);
        if (r == 0 && (applied & CG_MEMORY)) {
                pid = start_forgotten("echo ready > aoom-ready; while [ ! -e aoom-go ]; do sleep 0.05; done; "
                                      "x=$(head -c 200000000 /dev/zero | tr \"\\0\" a); echo survived",
                                      "aoom-ready", "oomslot2/job", first);
                r = adopt(run, "oomslot2/job", first->scratch, pid, wall_now());
                GLEAN_TEST_CHECK_FATAL(r == 0, "adopt: %d %s", r, agent_executor_last_error(executor));
                go = path_in(work, "aoom-go");
                CU_ASSERT_EQUAL(touch_file(go), 0);
                free(go);
                GLEAN_TEST_CHECK(wait_exit(run), "the adopted job that wants 200 MB did not end within %.0f s",
                                 TIMEOUT);
                if (run->calls > 0) {
                        CU_ASSERT_TRUE(run->ex.status_unknown);
                        GLEAN_TEST_CHECK(run->ex.oom_killed, "not reported as OOM-killed, reason '%s'", run->ex.reason);
                        GLEAN_TEST_CHECK(strncmp(run->ex.reason, "out of memory", 13) == 0 &&
                                                 strstr(run->ex.reason, ADOPTED_REASON) != NULL,
                                         "reason '%s'", run->ex.reason);
                        printf("\n    adopted oom: reason: %s\n", run->ex.reason);
                }
                (void) reap_orphan(pid);
                run_done(run);
                run_done(first);
        }
        (void) cg_remove(slot);
        cg_free(slot);
}

static CU_TestInfo tests[] = {
        { "exit_code", test_exit_code },
        { "in_cgroup", test_in_cgroup },
        { "children_killed", test_children_killed },
        { "suspend_resume", test_suspend_resume },
        { "signal_trapped", test_signal_trapped },
        { "kill_ignoring_term", test_kill_ignoring_term },
        { "usage", test_usage },
        { "identity", test_identity },
        { "cannot_write_own_cgroup", test_cannot_write_own_cgroup },
        { "start_failures", test_start_failures },
        { "abandon", test_abandon },
        { "executor_free", test_executor_free },
        { "oom", test_oom },
        { "adopt", test_adopt },
        { "adopt_unpinned", test_adopt_unpinned },
        { "adopt_refused", test_adopt_refused },
        { "cleanup", test_cleanup },
        { "adopt_oom", test_adopt_oom },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        int r;

        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return glean_test_skip("cannot become a child subreaper");
        in_vm = getenv("GLEAN_VM") && strcmp(getenv("GLEAN_VM"), "1") == 0;
        r = cgtest_setup(&env);
        if (r != 0)
                return r;
        r = glean_test_main(argc, argv, suites);
        cgtest_teardown(&env);
        return r;
}

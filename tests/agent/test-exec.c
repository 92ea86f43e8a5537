/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-exec.c — the fork executor with real processes: exit codes and
 * signals, standard files, initial directory, environment, suspend and
 * resume, signals to the whole job, kill, the job's children, start
 * failures reported by start(), the scratch directory (and symlinks
 * planted in it), the account the job runs as, and what the job inherits.
 *
 * Each test drives an sd-event loop until the exit callback fires, with a
 * timeout so that a bug cannot hang the suite. Files live in a directory
 * made with mkdtemp under /tmp and removed at the end. The test process is
 * a child subreaper, so that the orphaned children of a job come back to
 * it and their fate can be checked.
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
#include "test-util.h"

#define TIMEOUT 10.0 /* seconds any single wait may take */
#define SLOT "slot1_2"

static sd_event *event;
static AgentExecutor *executor;
static char base[64];            /* /tmp/glean-test-exec-XXXXXX, 0755 */
static char execute_dir[128];    /* base/execute: the scratch parent, 0755 */
static char work[128];           /* base/work: 0777, the jobs' files */

typedef struct Run {
        int calls;
        AgentJobExit ex;
        AgentJob *job;
        char *scratch;          /* checked from inside the callback */
        bool scratch_in_callback;
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
        if (run->free_in_callback) {
                agent_job_free(job);
                run->job = NULL;
        }
}

static AgentJobSpec *spec_of(const ClassAd *ad) {
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        int r;

        r = agent_jobspec_from_ad(ad, NULL, execute_dir, SLOT, &spec, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "jobspec: %d %s", r, why);
        return spec;
}

/* Starts the job of ad; the spec is returned through ret_spec if wanted. */
static int start(ClassAd *ad, Run *run, AgentJobSpec **ret_spec) {
        AgentJobSpec *spec = spec_of(ad);
        int r;

        free(run->scratch);
        run->scratch = strdup(spec->scratch);
        r = agent_exec_start(executor, spec, on_exit_cb, run, &run->job);
        if (r < 0)
                run->job = NULL;
        if (ret_spec)
                *ret_spec = spec;
        else
                agent_jobspec_free(spec);
        classad_free(ad);
        return r;
}

/* Starts the job and waits for its exit. */
static bool run_job(ClassAd *ad, Run *run) {
        return run_started(run, start(ad, run, NULL));
}

/* State letter of /proc/PID/stat, '?' when there is no such process. */
static char proc_state(pid_t pid) {
        char path[64], buf[512], *p;
        int fd;
        ssize_t n;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return '?';
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return '?';
        buf[n] = '\0';
        p = strrchr(buf, ')');
        return p && p[1] == ' ' ? p[2] : '?';
}

/* Waits until the state of pid is (or is not, when !is) one of states. */
static bool wait_state(pid_t pid, const char *states, bool is) {
        double end = now() + TIMEOUT;

        for (;;) {
                char s = proc_state(pid);

                if ((strchr(states, s) != NULL) == is)
                        return true;
                if (now() >= end)
                        return false;
                (void) sd_event_run(event, 20 * 1000);
        }
}

static bool dir_is_empty(const char *path) {
        char *cmd;
        GleanTestRun out = {};
        bool empty;

        CU_ASSERT_FATAL(asprintf(&cmd, "ls -A '%s'", path) >= 0);
        char *argv[] = { "sh", "-c", cmd, NULL };
        CU_ASSERT_FATAL(glean_test_run(argv, &out) == 0);
        empty = out.status == 0 && out.out_len == 0;
        glean_test_run_done(&out);
        free(cmd);
        return empty;
}

/* ---- suite set-up ---- */

static int suite_init(void) {
        if (exec_test_dirs("/tmp/glean-test-exec-XXXXXX") < 0)
                return -1;
        return agent_executor_fork_new(event, &executor) < 0 ? -1 : 0;
}

static int suite_cleanup(void) {
        return exec_test_cleanup();
}

/* ---- tests ---- */

static void test_exit_code(void) {
        Run *run = run_new();

        CU_ASSERT_STRING_EQUAL(agent_executor_name(executor), "fork");
        if (run_job(job_ad("exit 3", NULL), run)) {
                AgentJobExit u;

                CU_ASSERT_EQUAL(run->calls, 1);
                CU_ASSERT_FALSE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.exit_code, 3);
                CU_ASSERT(run->ex.wall_time >= 0 && run->ex.wall_time < TIMEOUT);
                CU_ASSERT_TRUE(agent_job_exited(run->job));
                CU_ASSERT(agent_job_pid(run->job) > 0);
                CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), -ESRCH);
                CU_ASSERT_EQUAL(agent_job_suspend(run->job), -ESRCH);
                CU_ASSERT_EQUAL(agent_job_freeze_latency_us(run->job), -EOPNOTSUPP); /* not measured here */
                CU_ASSERT_FALSE(run->ex.oom_killed);
                CU_ASSERT_STRING_EQUAL(run->ex.reason, "");
                CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
                CU_ASSERT_EQUAL(u.exit_code, 3);
        }
        spin(0.1);
        CU_ASSERT_EQUAL(run->calls, 1); /* once only */
        run_done(run);

        if (run_job(job_ad("exit 0", NULL), run))
                CU_ASSERT(!run->ex.by_signal && run->ex.exit_code == 0);
        run_done(run);
}

static void test_killed_by_signal(void) {
        Run *run = run_new();

        if (run_job(job_ad("kill -USR1 $$; sleep 5", NULL), run)) {
                CU_ASSERT_TRUE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.signal, SIGUSR1);
                CU_ASSERT_FALSE(run->ex.core_dumped);
        }
        run_done(run);
}

static void test_standard_files(void) {
        char *in = path_in(work, "in.txt"), *s;
        Run *run = run_new();

        write_file(in, "hello\n", 0644);
        if (run_job(job_ad("echo out; echo err >&2; read x; echo \"in:$x\"", "In", "in.txt", "Out", "out.txt", "Err",
                           "err.txt", NULL),
                    run)) {
                CU_ASSERT_EQUAL(run->ex.exit_code, 0);
                s = read_work("out.txt");
                CU_ASSERT_STRING_EQUAL(s, "out\nin:hello\n");
                free(s);
                s = read_work("err.txt");
                CU_ASSERT_STRING_EQUAL(s, "err\n");
                free(s);
        }
        run_done(run);

        /* Out and Err the same file: one offset, nothing overwritten. */
        if (run_job(job_ad("echo a; echo b >&2; echo c", "Out", "both.txt", "Err", "both.txt", NULL), run)) {
                s = read_work("both.txt");
                CU_ASSERT_STRING_EQUAL(s, "a\nb\nc\n");
                free(s);
        }
        run_done(run);

        /* No In/Out: /dev/null, and the output is truncated on a new run-> */
        write_file(in, "stale stale stale\n", 0666);
        if (run_job(job_ad("read x || echo eof; echo new", "Out", "in.txt", NULL), run)) {
                s = read_work("in.txt");
                CU_ASSERT_STRING_EQUAL(s, "eof\nnew\n");
                free(s);
        }
        run_done(run);
        free(in);
}

static void test_iwd(void) {
        char *sub = path_in(work, "sub"), *want, *s;
        AgentJobSpec *spec = NULL;
        Run *run = run_new();

        CU_ASSERT_FATAL(mkdir(sub, 0777) == 0 && chmod(sub, 0777) == 0);
        if (run_job(job_ad("pwd -P", "Iwd", sub, "Out", "pwd.txt", NULL), run)) {
                char *p = path_in(sub, "pwd.txt");

                CU_ASSERT_FATAL(asprintf(&want, "%s\n", sub) >= 0);
                CU_ASSERT_EQUAL(glean_test_read_file(p, &s, NULL), 0);
                GLEAN_TEST_CHECK(s && strcmp(s, want) == 0, "pwd '%s', want '%s'", s, want);
                free(s);
                free(want);
                free(p);
        }
        run_done(run);

        /* No Iwd: the job starts in its scratch directory. */
        char *out = path_in(work, "scratch-pwd.txt");
        CU_ASSERT_EQUAL(start(job_ad("pwd -P; echo \"$_CONDOR_SCRATCH_DIR\"", "Iwd", NULL, "Out", out, NULL), run,
                              &spec),
                        0);
        if (run->job && wait_exit(run)) {
                CU_ASSERT_FATAL(asprintf(&want, "%s\n%s\n", spec->scratch, spec->scratch) >= 0);
                s = read_work("scratch-pwd.txt");
                GLEAN_TEST_CHECK(strcmp(s, want) == 0, "got '%s', want '%s'", s, want);
                free(s);
                free(want);
        }
        run_done(run);
        agent_jobspec_free(spec);
        free(out);
        free(sub);
}

static void test_environment(void) {
        AgentJobSpec *spec = NULL;
        Run *run = run_new();

        setenv("GLEAN_TEST_SECRET", "agent-only", 1);
        CU_ASSERT_EQUAL(start(job_ad("echo \"$FOO|$BAZ|$_CONDOR_SLOT|$TMPDIR|$GLEAN_TEST_SECRET|$USER\"", "Environment",
                                     "FOO=bar BAZ='a b'", "Out", "env.txt", NULL),
                              run, &spec),
                        0);
        if (run->job && wait_exit(run)) {
                char *want, *s = read_work("env.txt");

                CU_ASSERT_FATAL(asprintf(&want, "bar|a b|%s|%s||%s\n", SLOT, spec->scratch, spec->user) >= 0);
                GLEAN_TEST_CHECK(strcmp(s, want) == 0, "got '%s', want '%s'", s, want);
                free(s);
                free(want);
        }
        run_done(run);
        agent_jobspec_free(spec);
        unsetenv("GLEAN_TEST_SECRET");
}

static void test_suspend_resume(void) {
        Run *run = run_new();
        pid_t pid, child;
        char *s;

        CU_ASSERT_FATAL(start(job_ad("sleep 0.5 & c=$!; echo $c > child.pid; wait $c; echo finished > done.txt; exit 4",
                                     NULL),
                              run, NULL) == 0);
        pid = agent_job_pid(run->job);
        CU_ASSERT_FATAL(wait_file("child.pid"));
        child = read_pid("child.pid");
        CU_ASSERT_FATAL(child > 0);

        CU_ASSERT_EQUAL(agent_job_suspend(run->job), 0);
        GLEAN_TEST_CHECK(wait_state(pid, "T", true), "the job is not stopped: state %c", proc_state(pid));
        GLEAN_TEST_CHECK(wait_state(child, "T", true), "the job's child is not stopped: state %c", proc_state(child));
        spin(1.0); /* longer than the job would take */
        CU_ASSERT_EQUAL(run->calls, 0);
        CU_ASSERT_EQUAL(proc_state(pid), 'T');
        s = read_work("done.txt");
        CU_ASSERT_STRING_EQUAL(s, "");
        free(s);

        AgentJobExit u;
        CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
        CU_ASSERT(u.wall_time >= 1.0);

        CU_ASSERT_EQUAL(agent_job_resume(run->job), 0);
        GLEAN_TEST_CHECK(wait_state(pid, "T", false), "the job is still stopped");
        if (wait_exit(run)) {
                CU_ASSERT_FALSE(run->ex.by_signal);
                CU_ASSERT_EQUAL(run->ex.exit_code, 4);
                s = read_work("done.txt");
                CU_ASSERT_STRING_EQUAL(s, "finished\n");
                free(s);
        }
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

static void test_children_killed(void) {
        Run *run = run_new();
        pid_t child;
        int st;

        /* kill() reaches a background child. */
        CU_ASSERT_FATAL(start(job_ad("sleep 1000 & echo $! > bg.pid; wait", NULL), run, NULL) == 0);
        CU_ASSERT_FATAL(wait_file("bg.pid"));
        child = read_pid("bg.pid");
        CU_ASSERT_FATAL(child > 0);
        CU_ASSERT(strchr("RSD", proc_state(child)) != NULL);
        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        CU_ASSERT(wait_exit(run));
        st = reap_orphan(child);
        GLEAN_TEST_CHECK(st == -1 || (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL),
                         "the background child %d was not killed (%d)", (int) child, st);
        run_done(run);

        /* A child left behind when the job exits is killed then. */
        CU_ASSERT_FATAL(start(job_ad("sleep 1000 & echo $! > left.pid; exit 0", NULL), run, NULL) == 0);
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_EQUAL(run->ex.exit_code, 0);
        child = read_pid("left.pid");
        CU_ASSERT_FATAL(child > 0);
        st = reap_orphan(child);
        GLEAN_TEST_CHECK(st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL,
                         "the child left behind (%d) was not killed (%d)", (int) child, st);
        run_done(run);
}

static void test_start_failures(void) {
        char *plain = path_in(work, "not-executable");
        const char *err;
        Run *run = run_new();
        int r;

        r = start(job_ad("true", "Cmd", "/nonexistent/glean-no-such-program", "Arguments", "", NULL), run, NULL);
        err = agent_executor_last_error(executor);
        CU_ASSERT_EQUAL(r, -ENOENT);
        CU_ASSERT_PTR_NULL(run->job);
        GLEAN_TEST_CHECK(strstr(err, "execute") && strstr(err, "/nonexistent/glean-no-such-program") &&
                         strstr(err, "No such file"), "error: %s", err);

        write_file(plain, "#!/bin/sh\n", 0644);
        r = start(job_ad("true", "Cmd", plain, "Arguments", "", NULL), run, NULL);
        CU_ASSERT_EQUAL(r, -EACCES);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), plain) != NULL, "error: %s",
                         agent_executor_last_error(executor));

        r = start(job_ad("true", "Iwd", "/nonexistent/glean-dir", NULL), run, NULL);
        CU_ASSERT_EQUAL(r, -ENOENT);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "initial directory") != NULL, "error: %s",
                         agent_executor_last_error(executor));

        r = start(job_ad("true", "In", "/nonexistent/glean-input", NULL), run, NULL);
        CU_ASSERT_EQUAL(r, -ENOENT);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "input") != NULL, "error: %s",
                         agent_executor_last_error(executor));

        spin(0.2);
        CU_ASSERT_EQUAL(run->calls, 0); /* no job, no exit */
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "a scratch directory was left behind in %s", execute_dir);

        /* A good start clears the error. */
        CU_ASSERT_EQUAL(start(job_ad("exit 0", NULL), run, NULL), 0);
        CU_ASSERT_STRING_EQUAL(agent_executor_last_error(executor), "");
        CU_ASSERT(wait_exit(run));
        run_done(run);
        free(plain);
}

static void test_scratch(void) {
        char *victim_dir = path_in(base, "victim"), *victim = path_in(victim_dir, "precious"), *script, *s;
        AgentJobSpec *spec = NULL;
        struct stat st;
        Run *run = run_new();

        CU_ASSERT_FATAL(mkdir(victim_dir, 0755) == 0);
        write_file(victim, "precious\n", 0644);
        CU_ASSERT_FATAL(asprintf(&script,
                                 "cd \"$_CONDOR_SCRATCH_DIR\" && ln -s %s link && ln -s %s dirlink && "
                                 "mkdir -p a/b/c && echo x > a/b/c/f && ln -s %s a/b/dl && echo ready > %s/scratch-ready"
                                 " && sleep 30",
                                 victim, victim_dir, victim_dir, work) >= 0);
        CU_ASSERT_FATAL(start(job_ad(script, NULL), run, &spec) == 0);
        free(script);
        CU_ASSERT_FATAL(wait_file("scratch-ready"));

        CU_ASSERT_EQUAL_FATAL(lstat(spec->scratch, &st), 0);
        CU_ASSERT_TRUE(S_ISDIR(st.st_mode));
        CU_ASSERT_EQUAL(st.st_mode & 07777, 0700);
        CU_ASSERT_EQUAL(st.st_uid, spec->uid);
        CU_ASSERT_EQUAL(st.st_gid, spec->gid);

        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        if (wait_exit(run)) {
                CU_ASSERT_TRUE(run->scratch_in_callback); /* still there for the callback */
                CU_ASSERT(lstat(spec->scratch, &st) < 0 && errno == ENOENT);
        }
        CU_ASSERT_EQUAL(glean_test_read_file(victim, &s, NULL), 0);
        CU_ASSERT_STRING_EQUAL(s, "precious\n");
        free(s);
        CU_ASSERT_EQUAL(lstat(victim_dir, &st), 0);
        run_done(run);
        agent_jobspec_free(spec);
        free(victim);
        free(victim_dir);
}

/* agent_remove_tree on its own: deep trees, symlinks out, odd modes. */
static void test_remove_tree(void) {
        char *top = path_in(base, "deep"), *victim = path_in(base, "victim2"), *s;
        struct stat st;
        int fd;

        write_file(victim, "keep\n", 0644);
        CU_ASSERT_FATAL(mkdir(top, 0700) == 0);
        fd = open(top, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        CU_ASSERT_FATAL(fd >= 0);
        for (int depth = 0; depth < 300; depth++) { /* deeper than the removal keeps open */
                int sub;

                CU_ASSERT_FATAL(symlinkat(victim, fd, "link") == 0);
                CU_ASSERT_FATAL(symlinkat(base, fd, "dirlink") == 0);
                sub = openat(fd, "f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                CU_ASSERT_FATAL(sub >= 0);
                close(sub);
                CU_ASSERT_FATAL(mkdirat(fd, "d", depth == 150 ? 0 : 0700) == 0);
                sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (sub < 0 && depth == 150) /* not root: a mode-0 directory cannot be opened */
                        CU_ASSERT_FATAL(fchmodat(fd, "d", 0700, 0) == 0 &&
                                        (sub = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0);
                CU_ASSERT_FATAL(sub >= 0);
                close(fd);
                fd = sub;
        }
        close(fd);

        CU_ASSERT_EQUAL(agent_remove_tree(top), 0);
        CU_ASSERT(lstat(top, &st) < 0 && errno == ENOENT);
        CU_ASSERT_EQUAL(glean_test_read_file(victim, &s, NULL), 0);
        CU_ASSERT_STRING_EQUAL(s, "keep\n");
        free(s);
        CU_ASSERT_EQUAL(lstat(base, &st), 0);
        CU_ASSERT_EQUAL(agent_remove_tree(top), -ENOENT);

        /* A symlink in place of the tree: only the link goes. */
        CU_ASSERT_FATAL(symlink(victim, top) == 0);
        CU_ASSERT_EQUAL(agent_remove_tree(top), 0);
        CU_ASSERT(lstat(top, &st) < 0 && errno == ENOENT);
        CU_ASSERT_EQUAL(lstat(victim, &st), 0);
        CU_ASSERT_EQUAL(agent_remove_tree("/"), -EINVAL);
        free(top);
        free(victim);
}

static void test_identity(void) {
        AgentJobSpec *spec = NULL;
        Run *run = run_new();
        char *s, *want;

        CU_ASSERT_FATAL(start(job_ad("id -u; id -g; id -G; grep NoNewPrivs /proc/self/status", "Out", "id.txt", NULL),
                              run, &spec) == 0);
        if (wait_exit(run)) {
                unsigned uid = 0, gid = 0;
                char groups[256] = "", nnp[64] = "";

                s = read_work("id.txt");
                GLEAN_TEST_CHECK(sscanf(s, "%u\n%u\n%255[^\n]\nNoNewPrivs:\t%63s", &uid, &gid, groups, nnp) == 4,
                                 "id output: '%s'", s);
                CU_ASSERT_EQUAL(uid, spec->uid);
                CU_ASSERT_EQUAL(gid, spec->gid);
                CU_ASSERT_STRING_EQUAL(nnp, "1");
                if (geteuid() == 0) {
                        struct passwd *pw = getpwnam("nobody");

                        CU_ASSERT_FATAL(pw != NULL);
                        CU_ASSERT_EQUAL(uid, pw->pw_uid);
                        CU_ASSERT_NOT_EQUAL(uid, 0);
                        CU_ASSERT_NOT_EQUAL(gid, 0);
                        CU_ASSERT_FATAL(asprintf(&want, " %s ", groups) >= 0);
                        GLEAN_TEST_CHECK(!strstr(want, " 0 "), "the job is in group 0: %s", groups);
                        free(want);
                } else
                        CU_ASSERT_EQUAL(uid, geteuid());
                free(s);
        }
        run_done(run);

        /* Never as root, whatever the spec says. */
        spec->uid = 0;
        CU_ASSERT_EQUAL(agent_exec_start(executor, spec, on_exit_cb, run, &run->job), -EPERM);
        GLEAN_TEST_CHECK(strstr(agent_executor_last_error(executor), "root") != NULL, "error: %s",
                         agent_executor_last_error(executor));
        spec->uid = 65534;
        spec->gid = 0;
        CU_ASSERT_EQUAL(agent_exec_start(executor, spec, on_exit_cb, run, &run->job), -EPERM);
        CU_ASSERT_EQUAL(run->calls, 0);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "a scratch directory was left behind");
        agent_jobspec_free(spec);
}

/* Signals, mask and descriptors of the agent do not reach the job. */
static void test_clean_inheritance(void) {
        struct sigaction ign = { .sa_handler = SIG_IGN }, old_usr1;
        sigset_t block, old_mask;
        Run *run = run_new();
        int leak;

        sigemptyset(&block);
        sigaddset(&block, SIGUSR2);
        sigprocmask(SIG_BLOCK, &block, &old_mask);
        sigaction(SIGUSR1, &ign, &old_usr1);
        leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC on purpose */
        CU_ASSERT_FATAL(leak >= 0);

        /* exec: the shell's own forks block signals for a moment */
        if (run_job(job_ad("exec grep -E \"^Sig(Blk|Ign)\" /proc/self/status", "Out", "inherit.txt", NULL), run)) {
                const char *want = "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n";
                char *s = read_work("inherit.txt");

                GLEAN_TEST_CHECK(strcmp(s, want) == 0, "got '%s', want '%s'", s, want);
                free(s);
        }
        run_done(run);
        /* 0-2 and the one ls reads the directory with */
        if (run_job(job_ad("exec ls /proc/self/fd", "Out", "fds.txt", NULL), run)) {
                char *s = read_work("fds.txt");

                GLEAN_TEST_CHECK(strcmp(s, "0\n1\n2\n3\n") == 0, "descriptors: '%s'", s);
                free(s);
        }
        run_done(run);
        close(leak);
        sigaction(SIGUSR1, &old_usr1, NULL);
        sigprocmask(SIG_SETMASK, &old_mask, NULL);
}

static void test_usage(void) {
        Run *run = run_new();
        AgentJobExit u = {};

        CU_ASSERT_FATAL(start(job_ad("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; echo ready > busy-ready; "
                                     "sleep 30",
                                     NULL),
                              run, NULL) == 0);
        CU_ASSERT_FATAL(wait_file("busy-ready"));
        CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
        GLEAN_TEST_CHECK(u.user_cpu + u.sys_cpu > 0.05, "cpu %.3f + %.3f", u.user_cpu, u.sys_cpu);
        CU_ASSERT(u.max_rss_kb > 0);
        CU_ASSERT(u.wall_time > 0);
        CU_ASSERT_FALSE(u.by_signal);
        CU_ASSERT_EQUAL(agent_job_kill(run->job), 0);
        if (wait_exit(run)) {
                GLEAN_TEST_CHECK(run->ex.user_cpu + run->ex.sys_cpu > 0.05, "cpu at exit %.3f + %.3f", run->ex.user_cpu,
                                 run->ex.sys_cpu);
                CU_ASSERT(run->ex.max_rss_kb > 0);
                CU_ASSERT(run->ex.wall_time >= u.wall_time);
        }
        run_done(run);
}

/* Freeing a running job kills it; it is reaped and cleaned up later. */
static void test_abandon(void) {
        Run *run = run_new();
        pid_t pid;
        double end;

        CU_ASSERT_FATAL(start(job_ad("sleep 30", NULL), run, NULL) == 0);
        pid = agent_job_pid(run->job);
        agent_job_free(run->job);
        run->job = NULL;
        end = now() + TIMEOUT;
        while (kill(pid, 0) == 0 && now() < end)
                (void) sd_event_run(event, 20 * 1000);
        GLEAN_TEST_CHECK(kill(pid, 0) < 0 && errno == ESRCH, "the abandoned job %d is still there", (int) pid);
        CU_ASSERT_EQUAL(run->calls, 0);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "the abandoned job's scratch directory is still there");
        run_done(run);

        /* The callback may free its job. */
        run->free_in_callback = true;
        CU_ASSERT(run_job(job_ad("exit 2", NULL), run));
        CU_ASSERT_EQUAL(run->ex.exit_code, 2);
        CU_ASSERT_PTR_NULL(run->job);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "scratch left behind");
        run_done(run);
}

/* Freeing the executor ends what it still runs. */
static void test_executor_free(void) {
        AgentExecutor *other = NULL;
        AgentJobSpec *spec;
        Run *run = run_new();
        pid_t pid;

        CU_ASSERT_FATAL(agent_executor_fork_new(event, &other) == 0);
        ClassAd *ad = job_ad("sleep 30", NULL);
        spec = spec_of(ad);
        classad_free(ad);
        CU_ASSERT_FATAL(agent_exec_start(other, spec, on_exit_cb, run, &run->job) == 0);
        pid = agent_job_pid(run->job);
        agent_executor_free(other);
        GLEAN_TEST_CHECK(kill(pid, 0) < 0 && errno == ESRCH, "job %d outlived its executor", (int) pid);
        GLEAN_TEST_CHECK(dir_is_empty(execute_dir), "scratch left behind");
        CU_ASSERT_EQUAL(run->calls, 0);
        agent_jobspec_free(spec);
        CU_ASSERT_EQUAL(agent_executor_fork_new(NULL, &other), -EINVAL);
}

static CU_TestInfo tests[] = {
        { "exit_code", test_exit_code },
        { "killed_by_signal", test_killed_by_signal },
        { "standard_files", test_standard_files },
        { "iwd", test_iwd },
        { "environment", test_environment },
        { "suspend_resume", test_suspend_resume },
        { "signal_trapped", test_signal_trapped },
        { "kill_ignoring_term", test_kill_ignoring_term },
        { "children_killed", test_children_killed },
        { "start_failures", test_start_failures },
        { "scratch", test_scratch },
        { "remove_tree", test_remove_tree },
        { "identity", test_identity },
        { "clean_inheritance", test_clean_inheritance },
        { "usage", test_usage },
        { "abandon", test_abandon },
        { "executor_free", test_executor_free },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "fork", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return glean_test_skip("cannot become a child subreaper");
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-exec-reaper.c — the job's reaper and its exit file, with real
 * processes and the fork executor: the exit code, the signal and the
 * rusage written by the reaper and read back; torn, malformed, foreign
 * and writable exit files refused with their reason; the reaper's place
 * (the agent's child, the job's parent, root's, its own session, every
 * signal blocked); a job dies with an agent that never recorded it
 * (agent_job_keep), and outlives one that did; an "agent" (a process of
 * the test using the executor) killed with SIGKILL while its job runs:
 * a new executor re-adopts the job by its reaper and reports its real
 * exit code and CPU; agent_exec_kill_orphan() ends a job nobody adopts.
 *
 * Files live in a directory made with mkdtemp under /tmp and removed at
 * the end.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/exec/exec-internal.h"
#include "test-util.h"

#define TIMEOUT 10.0 /* seconds any single wait may take */
#define SLOT "slot1_3"

static sd_event *event;
static AgentExecutor *executor;
static char base[64];            /* /tmp/glean-test-reaper-XXXXXX, 0755 */
static char execute_dir[128];    /* base/execute: the scratch parent, 0755 */
static char work[128];           /* base/work: 0777, the jobs' files */
static char state_dir[128];      /* base/state: 0700, the exit files */

typedef struct Run {
        int calls;
        AgentJobExit ex;
        AgentJob *job;
        char *scratch;
} Run;

#include "exec-test.h"

static void on_exit_cb(AgentJob *job, const AgentJobExit *ex, void *userdata) {
        Run *run = userdata;

        (void) job;
        run->calls++;
        run->ex = *ex;
}

static char *exit_path(const char *name) {
        return path_in(state_dir, name);
}

/* The spec of ad, writing its end to state_dir/exit_name. */
static AgentJobSpec *spec_with_exit(ClassAd *ad, const char *exit_name) {
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        int r;

        r = agent_jobspec_from_ad(ad, NULL, execute_dir, SLOT, &spec, why, sizeof(why));
        classad_free(ad);
        GLEAN_TEST_CHECK_FATAL(r == 0, "jobspec: %d %s", r, why);
        spec->exit_file = exit_path(exit_name);
        (void) unlink(spec->exit_file);
        return spec;
}

static AgentJobSpec *spec_of_plain(ClassAd *ad) {
        AgentJobSpec *spec = spec_with_exit(ad, "plain.exit");

        free(spec->exit_file);
        spec->exit_file = NULL;
        return spec;
}

static int start_with_exit(AgentExecutor *ex, ClassAd *ad, const char *exit_name, Run *run) {
        AgentJobSpec *spec = spec_with_exit(ad, exit_name);
        int r;

        free(run->scratch);
        run->scratch = strdup(spec->scratch);
        r = agent_exec_start(ex, spec, on_exit_cb, run, &run->job);
        if (r < 0)
                run->job = NULL;
        agent_jobspec_free(spec);
        return r;
}

/* Field 4 (ppid), 6 (session) of /proc/PID/stat; 0 when gone. */
static pid_t stat_field(pid_t pid, int field) {
        char path[64], *text = NULL;
        int ppid = 0, session = 0;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return 0;
        const char *p = strrchr(text, ')');
        if (!p || sscanf(p + 1, " %*c %d %*d %d", &ppid, &session) != 2)
                ppid = session = 0;
        free(text);
        return field == 4 ? ppid : session;
}

/* Waits (running the loop) until pid is gone or a zombie. */
static bool wait_gone(pid_t pid) {
        double end = now() + TIMEOUT;

        for (;;) {
                char path[64], *text = NULL;
                bool gone;

                snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
                gone = glean_test_read_file(path, &text, NULL) < 0 || (strrchr(text, ')') && strrchr(text, ')')[2] == 'Z');
                free(text);
                if (gone)
                        return true;
                if (now() >= end)
                        return false;
                (void) sd_event_run(event, 20 * 1000);
        }
}

static void release(const char *name) {
        char *p = path_in(work, name);

        write_file(p, "go\n", 0644);
        free(p);
}

/* ---- the exit file ---- */

static void test_exit_code_file(void) {
        Run *run = run_new();
        AgentJobId id = {};
        AgentJobExit fx = {};
        char why[512] = "", *path = exit_path("code.exit");

        CU_ASSERT_FATAL(start_with_exit(executor,
                                        job_ad("while [ ! -e code.go ]; do sleep 0.02; done; "
                                               "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 3",
                                               NULL),
                                        "code.exit", run) == 0);
        CU_ASSERT_EQUAL_FATAL(agent_job_id(run->job, &id), 0);
        CU_ASSERT_EQUAL(id.pid, agent_job_pid(run->job));
        CU_ASSERT(id.start > 0 && id.reaper_pid > 0 && id.reaper_start > 0 && id.token != 0);
        release("code.go");
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_FALSE(run->ex.status_unknown);
        CU_ASSERT_FALSE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.exit_code, 3);
        GLEAN_TEST_CHECK(run->ex.user_cpu + run->ex.sys_cpu > 0, "no CPU: user %.3f sys %.3f", run->ex.user_cpu,
                         run->ex.sys_cpu);
        CU_ASSERT_STRING_EQUAL(run->ex.reason, "");

        /* What the reaper wrote is the job's end, its own. */
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), 0);
        CU_ASSERT_FALSE(fx.by_signal);
        CU_ASSERT_EQUAL(fx.exit_code, 3);
        CU_ASSERT_DOUBLE_EQUAL(fx.user_cpu, run->ex.user_cpu, 1e-6);
        CU_ASSERT_DOUBLE_EQUAL(fx.sys_cpu, run->ex.sys_cpu, 1e-6);
        GLEAN_TEST_CHECK(fx.user_cpu > 0.001, "the file's user CPU %.6f s (20,000 iterations of sh)", fx.user_cpu);
        CU_ASSERT(fx.max_rss_kb > 0);
        {
                struct stat st;

                CU_ASSERT_EQUAL(stat(path, &st), 0);
                CU_ASSERT_EQUAL(st.st_mode & 0777, 0600);
                CU_ASSERT_EQUAL(st.st_uid, geteuid());
        }
        free(path);
        run_done(run);
}

static void test_signal_file(void) {
        Run *run = run_new();
        AgentJobId id = {};
        AgentJobExit fx = {};
        char why[512] = "", *path = exit_path("sig.exit");

        CU_ASSERT_FATAL(start_with_exit(executor, job_ad("while [ ! -e sig.go ]; do sleep 0.02; done; kill -USR1 $$", NULL),
                                        "sig.exit", run) == 0);
        CU_ASSERT_EQUAL_FATAL(agent_job_id(run->job, &id), 0);
        release("sig.go");
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_TRUE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.signal, SIGUSR1);
        CU_ASSERT_FALSE(run->ex.core_dumped);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), 0);
        CU_ASSERT_TRUE(fx.by_signal);
        CU_ASSERT_EQUAL(fx.signal, SIGUSR1);
        CU_ASSERT_EQUAL(fx.exit_code, 0);
        free(path);
        run_done(run);

        /* No exit file: the reaper's own end mirrors the job's. */
        run = run_new();
        {
                AgentJobSpec *spec = spec_of_plain(job_ad("kill -TERM $$", NULL));

                CU_ASSERT_FATAL(agent_exec_start(executor, spec, on_exit_cb, run, &run->job) == 0);
                agent_jobspec_free(spec);
        }
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_TRUE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.signal, SIGTERM);
        run_done(run);
        run = run_new();
        {
                AgentJobSpec *spec = spec_of_plain(job_ad("exit 42", NULL));

                CU_ASSERT_FATAL(agent_exec_start(executor, spec, on_exit_cb, run, &run->job) == 0);
                agent_jobspec_free(spec);
        }
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_FALSE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.exit_code, 42);
        run_done(run);
}

static void write_text(const char *path, const char *text, mode_t mode) {
        (void) unlink(path);
        write_file(path, text, mode);
}

/* body (the lines before "sum") with its sum and end, as the reaper writes it. */
static void write_record(const char *path, const char *body, mode_t mode) {
        char text[EXIT_FILE_MAX];

        snprintf(text, sizeof(text), "%ssum %x\nend\n", body, (unsigned) exec_exit_file_sum(body, strlen(body)));
        write_text(path, text, mode);
}

static void test_refused_files(void) {
        AgentJobId id = { .pid = 100, .reaper_pid = 99, .token = 0x1f };
        struct rusage ru = { .ru_utime = { 0, 250000 }, .ru_stime = { 0, 1000 }, .ru_maxrss = 2048 };
        AgentJobExit fx;
        char why[512], *path = exit_path("test.exit"), *good = NULL;
        size_t good_len = 0;
        struct stat st;

        (void) unlink(path);
        CU_ASSERT_EQUAL_FATAL(exec_exit_file_write(path, &id, CLD_EXITED, 5, &ru), 0);
        CU_ASSERT_EQUAL(stat(path, &st), 0);
        CU_ASSERT_EQUAL(st.st_size, EXIT_FILE_RECORD);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), 0);
        CU_ASSERT_FALSE(fx.by_signal);
        CU_ASSERT_EQUAL(fx.exit_code, 5);
        CU_ASSERT_DOUBLE_EQUAL(fx.user_cpu, 0.25, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(fx.sys_cpu, 0.001, 1e-9);
        CU_ASSERT_EQUAL(fx.max_rss_kb, 2048);
        CU_ASSERT_FATAL(glean_test_read_file(path, &good, &good_len) == 0);

        /* Written over in place by the next job: its record only. */
        {
                AgentJobId next = { .pid = 200, .reaper_pid = 199, .token = 0x2f };

                CU_ASSERT_EQUAL(exec_exit_file_write(path, &next, CLD_KILLED, SIGTERM, &ru), 0);
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &next, &fx, why, sizeof(why)), 0);
                CU_ASSERT_TRUE(fx.by_signal);
                CU_ASSERT_EQUAL(fx.signal, SIGTERM);
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -ESTALE);
        }

        /* Torn: cut anywhere before its end, the file is refused. */
        {
                size_t content = (size_t) (strstr(good, "end\n") - good) + 4;

                for (size_t cut = 0; cut < content; cut += 5) {
                        char *torn = strndup(good, cut);

                        write_text(path, torn, 0600);
                        why[0] = '\0';
                        GLEAN_TEST_CHECK(agent_exit_file_read(path, &id, &fx, why, sizeof(why)) == -EBADMSG,
                                         "a file cut at %zu bytes was taken", cut);
                        GLEAN_TEST_CHECK(strstr(why, "torn") != NULL, "reason: %s", why);
                        free(torn);
                }
        }
        /* A byte changed (half of two records): its sum says so. */
        {
                char *changed = strdup(good), *status = strstr(changed, "status 5");

                CU_ASSERT_FATAL(status != NULL);
                status[7] = '6';
                write_text(path, changed, 0600);
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -EBADMSG);
                GLEAN_TEST_CHECK(strstr(why, "sum does not match") != NULL, "reason: %s", why);
                free(changed);
        }
        /* Malformed. */
        write_text(path, "glean-exit 1\ntoken zz\n", 0600);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -EBADMSG);
        write_record(path, "glean-exit 2\ntoken 1f\njob 100\nreaper 99\ncode 1\nstatus 5\nutime_us 0\nstime_us 0\n"
                           "maxrss_kb 0\n", 0600);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -EBADMSG);
        GLEAN_TEST_CHECK(strstr(why, "format 2") != NULL, "reason: %s", why);
        write_record(path, "glean-exit 1\ntoken 1f\njob 100\nreaper 99\ncode 2\nstatus 0\nutime_us 0\nstime_us 0\n"
                           "maxrss_kb 0\n", 0600);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -EBADMSG);
        GLEAN_TEST_CHECK(strstr(why, "no end of a process") != NULL, "reason: %s", why);
        {
                char more[EXIT_FILE_MAX];

                snprintf(more, sizeof(more), "%.*smore\n", (int) ((size_t) (strstr(good, "end\n") - good) + 4), good);
                write_text(path, more, 0600);
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -EBADMSG);
        }

        /* Another job's: its token, job or reaper pid differ. */
        write_text(path, good, 0600);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), 0);
        {
                AgentJobId other = id;

                other.token = 0x20;
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &other, &fx, why, sizeof(why)), -ESTALE);
                GLEAN_TEST_CHECK(strstr(why, "another job's") != NULL, "reason: %s", why);
                other = id;
                other.pid = 101;
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &other, &fx, why, sizeof(why)), -ESTALE);
                other = id;
                other.reaper_pid = 98;
                CU_ASSERT_EQUAL(agent_exit_file_read(path, &other, &fx, why, sizeof(why)), -ESTALE);
        }
        /* Writable by others, not a regular file, missing. */
        write_text(path, good, 0666);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -EPERM);
        GLEAN_TEST_CHECK(strstr(why, "only it may write") != NULL, "reason: %s", why);
        CU_ASSERT_EQUAL(unlink(path), 0);
        CU_ASSERT_EQUAL(symlink("/etc/passwd", path), 0);
        CU_ASSERT(agent_exit_file_read(path, &id, &fx, why, sizeof(why)) < 0);
        CU_ASSERT_EQUAL(unlink(path), 0);
        CU_ASSERT_EQUAL(agent_exit_file_read(path, &id, &fx, why, sizeof(why)), -ENOENT);
        free(good);
        free(path);
}

/* ---- the reaper ---- */

static char proc_state_of(pid_t pid) {
        char path[64], *text = NULL, st = '?';

        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        if (glean_test_read_file(path, &text, NULL) >= 0 && strrchr(text, ')'))
                st = strrchr(text, ')')[2];
        free(text);
        return st;
}

static bool all_blocked(pid_t pid) {
        char path[64], *text = NULL, *p;
        bool all = false;

        snprintf(path, sizeof(path), "/proc/%d/status", (int) pid);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return false;
        p = strstr(text, "\nSigBlk:");
        if (p) {
                unsigned long long mask = strtoull(p + 8, NULL, 16);

                /* Every signal but SIGKILL and SIGSTOP (which cannot be), and
                 * those it is waiting for in sigwaitinfo() (unblocked while it
                 * waits: SIGCHLD and two real-time ones of its own, taken, not
                 * acted on). */
                unsigned long long want = ~0ULL & ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)) |
                                                    (1ULL << (SIGCHLD - 1)) | (1ULL << (SIGRTMIN + 2 - 1)) |
                                                    (1ULL << (SIGRTMIN + 3 - 1)));

                all = (mask & want) == want;
        }
        free(text);
        return all;
}

static void test_reaper_place(void) {
        Run *run = run_new();
        pid_t pid, reaper;

        CU_ASSERT_FATAL(start_with_exit(executor, job_ad("while [ ! -e place.go ]; do sleep 0.02; done; exit 0", NULL),
                                        "place.exit", run) == 0);
        pid = agent_job_pid(run->job);
        reaper = stat_field(pid, 4);
        GLEAN_TEST_CHECK(reaper > 0 && reaper != getpid() && stat_field(reaper, 4) == getpid(),
                         "the job %d's parent %d is not a child of the agent %d", (int) pid, (int) reaper,
                         (int) getpid());
        {
                /* glean-reaper when there is one ($GLEAN_REAPER: make check sets it), else the agent's copy */
                const char *want = getenv("GLEAN_REAPER");
                char exe[PATH_MAX] = "", real[PATH_MAX] = "", link[64];
                ssize_t n;

                snprintf(link, sizeof(link), "/proc/%d/exe", (int) reaper);
                n = readlink(link, exe, sizeof(exe) - 1);
                if (n > 0)
                        exe[n] = '\0';
                if (want && strcmp(want, "none") != 0 && realpath(want, real))
                        GLEAN_TEST_CHECK(strcmp(exe, real) == 0, "the reaper runs %s, not %s", exe, real);
                else if (want && strcmp(want, "none") == 0) {
                        char self[PATH_MAX] = "";

                        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
                        if (n > 0)
                                self[n] = '\0';
                        GLEAN_TEST_CHECK(strcmp(exe, self) == 0, "the reaper runs %s, not a copy of %s", exe, self);
                }
        }
        /* The reaper may have shared the agent's memory until its exec: the agent stays as it was. */
        CU_ASSERT_EQUAL(prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), 1);
        CU_ASSERT_EQUAL(stat_field(reaper, 6), reaper); /* its own session */
        CU_ASSERT_EQUAL(stat_field(pid, 6), pid);       /* the job's own, apart from it */
        GLEAN_TEST_CHECK(all_blocked(reaper), "the reaper %d does not block every signal (state %c)", (int) reaper,
                         proc_state_of(reaper));
        /* A signal to it is held, not its end. */
        CU_ASSERT_EQUAL(kill(reaper, SIGTERM), 0);
        CU_ASSERT_EQUAL(kill(reaper, SIGINT), 0);
        spin(0.1);
        CU_ASSERT_EQUAL(kill(reaper, 0), 0);
        if (geteuid() == 0) {
                /* The job's user can neither signal nor trace it. */
                struct passwd *pw = getpwnam("nobody");
                pid_t c = fork();
                int st = -1;

                CU_ASSERT_FATAL(pw != NULL && c >= 0);
                if (c == 0) {
                        if (setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
                                _exit(2);
                        _exit(kill(reaper, SIGKILL) < 0 && errno == EPERM ? 0 : 1);
                }
                CU_ASSERT_EQUAL(waitpid(c, &st, 0), c);
                GLEAN_TEST_CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "nobody could signal the reaper: %d", st);
        }
        release("place.go");
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_EQUAL(run->ex.exit_code, 0);
        CU_ASSERT_FALSE(run->ex.by_signal);
        CU_ASSERT(wait_gone(reaper));
        run_done(run);
}

/* ---- an agent that dies ---- */

typedef struct Died {
        AgentJobId id;
        char scratch[256];
} Died;

/* A process of ours plays the agent: starts script with the exit file
 * exit_name, keeps the job (or not), tells us who it is, and dies with
 * SIGKILL. */
static bool agent_dies(const char *script, const char *exit_name, bool keep, Died *ret) {
        int p[2];
        pid_t agent;
        ssize_t n;
        int st;

        CU_ASSERT_FATAL(pipe2(p, O_CLOEXEC) == 0);
        agent = fork();
        CU_ASSERT_FATAL(agent >= 0);
        if (agent == 0) {
                AgentExecutor *ex = NULL;
                sd_event *ev = NULL;
                Run *run = run_new();
                Died d = {};

                if (sd_event_new(&ev) < 0 || agent_executor_fork_new(ev, &ex) < 0)
                        _exit(3);
                event = ev;
                if (start_with_exit(ex, job_ad(script, NULL), exit_name, run) < 0 || agent_job_id(run->job, &d.id) < 0)
                        _exit(4);
                if (keep && agent_job_keep(run->job) < 0)
                        _exit(5);
                snprintf(d.scratch, sizeof(d.scratch), "%s", run->scratch);
                if (write(p[1], &d, sizeof(d)) != (ssize_t) sizeof(d))
                        _exit(6);
                raise(SIGKILL);
                _exit(7);
        }
        close(p[1]);
        n = read(p[0], ret, sizeof(*ret));
        close(p[0]);
        CU_ASSERT_EQUAL(waitpid(agent, &st, 0), agent);
        return GLEAN_TEST_CHECK(n == (ssize_t) sizeof(*ret), "the agent process failed: %d", st);
}

static void test_dies_with_unrecording_agent(void) {
        Died d;

        if (!agent_dies("sleep 100", "unkept.exit", false, &d))
                return;
        GLEAN_TEST_CHECK(wait_gone(d.id.reaper_pid), "the reaper %d of a job never kept outlived its agent",
                         (int) d.id.reaper_pid);
        GLEAN_TEST_CHECK(wait_gone(d.id.pid), "the job %d never kept outlived its agent", (int) d.id.pid);
        (void) agent_remove_tree(d.scratch);
}

static void test_adopt_after_sigkill(void) {
        Run *run = run_new(), *again = run_new();
        AgentExecutor *fresh = NULL;
        AgentJobSpec *spec;
        Died d;
        int r;

        if (!agent_dies("while [ ! -e adopt.go ]; do sleep 0.02; done; "
                        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; exit 7",
                        "adopt.exit", true, &d))
                return;
        spin(0.1);
        GLEAN_TEST_CHECK_FATAL(kill(d.id.pid, 0) == 0 && kill(d.id.reaper_pid, 0) == 0,
                               "the kept job %d (reaper %d) did not outlive its agent", (int) d.id.pid,
                               (int) d.id.reaper_pid);

        CU_ASSERT_FATAL(agent_executor_fork_new(event, &fresh) == 0);
        spec = spec_with_exit(job_ad("true", NULL), "adopt.exit");
        free(spec->scratch);
        spec->scratch = strdup(d.scratch);
        r = agent_exec_adopt_id(fresh, spec, &d.id, 0, on_exit_cb, run, &run->job);
        GLEAN_TEST_CHECK_FATAL(r == 0, "adopt: %d %s", r, agent_executor_last_error(fresh));
        CU_ASSERT_EQUAL(agent_job_pid(run->job), d.id.pid);
        /* Not twice. */
        CU_ASSERT_EQUAL(agent_exec_adopt_id(fresh, spec, &d.id, 0, on_exit_cb, again, &again->job), -EBUSY);
        /* A reaper's pid with a wrong start time is another process: not adopted. */
        {
                AgentJobId wrong = d.id;
                AgentExecutor *other = NULL;

                CU_ASSERT_FATAL(agent_executor_fork_new(event, &other) == 0);
                wrong.reaper_start++;
                CU_ASSERT_EQUAL(agent_exec_adopt_id(other, spec, &wrong, 0, on_exit_cb, again, &again->job), -ESRCH);
                GLEAN_TEST_CHECK(strstr(agent_executor_last_error(other), "gone") != NULL, "error: %s",
                                 agent_executor_last_error(other));
                wrong = d.id;
                wrong.reaper_pid = 0;
                CU_ASSERT_EQUAL(agent_exec_adopt_id(other, spec, &wrong, 0, on_exit_cb, again, &again->job),
                                -EOPNOTSUPP);
                agent_executor_free(other);
                CU_ASSERT_EQUAL(kill(d.id.pid, 0), 0);
        }
        {
                AgentJobExit u;

                CU_ASSERT_EQUAL(agent_job_usage(run->job, &u), 0);
        }
        release("adopt.go");
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_FALSE(run->ex.status_unknown);
        CU_ASSERT_FALSE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.exit_code, 7);
        GLEAN_TEST_CHECK(run->ex.user_cpu > 0.001, "the re-adopted job's user CPU %.6f s", run->ex.user_cpu);
        CU_ASSERT_STRING_EQUAL(run->ex.reason, "");
        GLEAN_TEST_CHECK(access(d.scratch, F_OK) < 0, "the scratch %s stays", d.scratch);
        agent_jobspec_free(spec);
        run_done(run);
        run_done(again);
        agent_executor_free(fresh);
}

static void test_kill_orphan(void) {
        AgentJobId bad = {};
        Died d;
        int r;

        if (!agent_dies("sleep 100 & sleep 100", "orphan.exit", true, &d))
                return;
        spin(0.1);
        CU_ASSERT_EQUAL(kill(d.id.pid, 0), 0);
        /* Only by its start time. */
        bad = d.id;
        bad.start = 0;
        CU_ASSERT_EQUAL(agent_exec_kill_orphan(&bad), -EINVAL);
        bad = d.id;
        bad.start++;
        bad.reaper_start++;
        CU_ASSERT_EQUAL(agent_exec_kill_orphan(&bad), 0);
        CU_ASSERT_EQUAL(kill(d.id.pid, 0), 0);
        r = agent_exec_kill_orphan(&d.id);
        GLEAN_TEST_CHECK(r == 2, "kill_orphan: %d (job %d start %llu, reaper %d start %llu)", r, (int) d.id.pid,
                         (unsigned long long) d.id.start, (int) d.id.reaper_pid, (unsigned long long) d.id.reaper_start);
        GLEAN_TEST_CHECK(wait_gone(d.id.pid), "the orphan %d runs on", (int) d.id.pid);
        GLEAN_TEST_CHECK(wait_gone(d.id.reaper_pid), "its reaper %d runs on", (int) d.id.reaper_pid);
        CU_ASSERT_EQUAL(agent_exec_kill_orphan(&d.id), 0); /* gone: nothing else is hit */
        (void) agent_remove_tree(d.scratch);
}

static int suite_init(void) {
        if (exec_test_dirs("/tmp/glean-test-reaper-XXXXXX") < 0)
                return -1;
        snprintf(state_dir, sizeof(state_dir), "%s/state", base);
        if (mkdir(state_dir, 0700) < 0)
                return -1;
        return agent_executor_fork_new(event, &executor) < 0 ? -1 : 0;
}

static int suite_cleanup(void) {
        return exec_test_cleanup();
}

static CU_TestInfo tests[] = {
        { "exit code and rusage in the exit file", test_exit_code_file },
        { "a signal in the exit file, the reaper's mirror without one", test_signal_file },
        { "torn, malformed, foreign and writable exit files are refused", test_refused_files },
        { "the reaper: the agent's child, the job's parent, deaf to signals", test_reaper_place },
        { "a job its agent never recorded dies with it", test_dies_with_unrecording_agent },
        { "an agent killed with SIGKILL: its job re-adopted, its real exit code", test_adopt_after_sigkill },
        { "a job nobody adopts is killed, and only it", test_kill_orphan },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "reaper", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

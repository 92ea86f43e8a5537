/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-exec-cgroup-end.c — how the cgroup executor ends a job that cannot
 * end well, in the VM rig (GLEAN_VM=1: the memory controller, the fuse
 * module):
 *
 * - out of memory while the job runs: a child of the job outgrows the
 *   slot's memory.max and the OOM killer ends it while the main process
 *   sleeps on (300 s). The executor sees memory.events change, kills the
 *   rest of the job at once and reports it OOM-killed, seconds after the
 *   kill, not when the main process would have ended;
 * - a cgroup that will not empty: a process of the job stuck in the kernel
 *   (it waits for a FUSE server that never answers: tests/agent/fuse-test.h)
 *   outlives the kill when the main process exits; the exit is reported
 *   after the job's kill_timeout with cgroup_stuck and a reason, the
 *   cgroup left in place, and once the process can die the cgroup empties.
 *
 * Exits 77 outside the VM rig, and where it is not root or has no cgroup v2.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
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
#include "fuse-test.h"

#define TIMEOUT 60.0

static CgTestEnv env;
static CgRoot *root;
static sd_event *event;
static AgentExecutor *executor;
static char base[64];
static char execute_dir[128];
static char work[128];

typedef struct Run {
        int calls;
        AgentJobExit ex;
        AgentJob *job;
        char *scratch;
        char cg_abs[512];
        char events_in_callback[128];
        double exited_at; /* now() of the callback */
} Run;

#include "exec-test.h"

static void on_exit_cb(AgentJob *job, const AgentJobExit *ex, void *userdata) {
        Run *run = userdata;

        run->calls++;
        run->ex = *ex;
        run->exited_at = now();
        GLEAN_TEST_CHECK(job == run->job, "the callback got another job");
        char path[600];
        snprintf(path, sizeof(path), "%s/cgroup.events", run->cg_abs);
        if (cgtest_read(path, run->events_in_callback, sizeof(run->events_in_callback)) < 0)
                run->events_in_callback[0] = '\0';
}

/* Starts the job of ad in <slots>/cgroup with kill_timeout (seconds, 0: the default). */
static int start(ClassAd *ad, Run *run, const char *cgroup, int kill_timeout) {
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        int r = agent_jobspec_from_ad(ad, NULL, execute_dir, "slot1", &spec, why, sizeof(why));

        classad_free(ad);
        GLEAN_TEST_CHECK_FATAL(r == 0, "jobspec: %d %s", r, why);
        CU_ASSERT_FATAL((spec->cgroup = strdup(cgroup)) != NULL);
        spec->kill_timeout = kill_timeout;
        run->scratch = strdup(spec->scratch);
        snprintf(run->cg_abs, sizeof(run->cg_abs), "%s/slots/%s", env.abs, cgroup);
        r = agent_exec_start(executor, spec, on_exit_cb, run, &run->job);
        if (r < 0) {
                fprintf(stderr, "start: %s\n", agent_executor_last_error(executor));
                run->job = NULL;
        }
        agent_jobspec_free(spec);
        return r;
}

/* "populated N" of a cgroup: N, or -1 when unreadable (gone). */
static int populated(const char *cg_abs) {
        char path[600], text[256];
        const char *p;

        snprintf(path, sizeof(path), "%s/cgroup.events", cg_abs);
        if (cgtest_read(path, text, sizeof(text)) < 0 || !(p = strstr(text, "populated ")))
                return -1;
        return atoi(p + 10);
}

/* A slot cgroup with memory.max, for the jobs below it. */
static Cg *memory_slot(const char *name, int64_t bytes) {
        CgLimits l = { .memory_max = bytes, .memory_swap_max = CG_ZERO };
        char why[256] = "";
        unsigned applied = 0;
        Cg *slot = cgtest_open(root, name);
        int r = cg_set_limits(slot, &l, &applied, why, sizeof(why));

        GLEAN_TEST_CHECK(r == 0 && (applied & CG_MEMORY), "memory.max on %s: %d, applied %#x: %s", cg_path(slot), r,
                         applied, why);
        return slot;
}

/* ---- out of memory ---- */

/* A child outgrows memory.max while the main process sleeps 300 s: the
 * OOM killer takes the child, the executor the rest, at once. */
static void test_oom_child(void) {
        Run *run = run_new();
        Cg *slot = memory_slot("oomchild", 32 * 1024 * 1024);
        double t0 = now();

        CU_ASSERT_FATAL(start(job_ad("(x=$(head -c 200000000 /dev/zero | tr \"\\0\" a); echo child survived) & "
                                     "sleep 300; echo survived",
                                     "Out", "oomchild-out.txt", NULL),
                              run, "oomchild/job", 0) == 0);
        GLEAN_TEST_CHECK(wait_exit(run), "the job whose child ran out of memory did not end within %.0f s", TIMEOUT);
        if (run->calls > 0) {
                char *out = read_work("oomchild-out.txt");

                GLEAN_TEST_CHECK(run->ex.oom_killed, "not reported as OOM-killed: reason '%s'", run->ex.reason);
                GLEAN_TEST_CHECK(strncmp(run->ex.reason, "out of memory", 13) == 0, "reason '%s'", run->ex.reason);
                /* The main process was killed (by the executor), not left to its sleep. */
                GLEAN_TEST_CHECK(run->ex.by_signal && run->ex.signal == SIGKILL, "main process: %s %d",
                                 run->ex.by_signal ? "signal" : "exit",
                                 run->ex.by_signal ? run->ex.signal : run->ex.exit_code);
                GLEAN_TEST_CHECK(run->ex.wall_time < 100 && run->exited_at - t0 < 100,
                                 "reported after %.1f s (wall time %.1f s): the sleep was waited for",
                                 run->exited_at - t0, run->ex.wall_time);
                GLEAN_TEST_CHECK(!strstr(out, "survived"), "the job went on: '%s'", out);
                GLEAN_TEST_CHECK(strstr(run->events_in_callback, "populated 0"),
                                 "cgroup.events during the callback: '%s'", run->events_in_callback);
                printf("\n    child OOM-killed: the job reported after %.1f s: %s\n", run->exited_at - t0,
                       run->ex.reason);
                free(out);
        }
        run_done(run);
        (void) cg_remove(slot);
        cg_free(slot);
}

/* ---- a cgroup that will not empty ---- */

/* The main process exits; its child is stuck in the kernel (a FUSE read
 * never answered) and outlives cgroup.kill: reported after kill_timeout
 * with cgroup_stuck, the cgroup left; it empties once the child can die. */
static void test_stuck(void) {
        Run *run = run_new();
        FuseTest f;
        char why[256] = "", script[512];
        int r = fusetest_mount(&f, why, sizeof(why));

        GLEAN_TEST_CHECK(r == 0, "the FUSE file system: %s", why);
        if (r < 0) {
                fusetest_release(&f);
                return;
        }
        snprintf(script, sizeof(script),
                 "cat %s > /dev/null 2>&1 & echo $! > stuck.pid; while [ ! -e stuck-go ]; do sleep 0.05; done; exit 3",
                 f.file);
        r = start(job_ad(script, NULL), run, "stuck/job", 1);
        GLEAN_TEST_CHECK(r == 0, "start: %d", r);
        int op = r == 0 ? fusetest_hold_next(&f, (int) TIMEOUT * 1000) : -1;
        GLEAN_TEST_CHECK(op > 0, "no request from the job's cat: %d", op);
        if (op > 0) {
                char *go = path_in(work, "stuck-go");
                double t0;

                write_file(go, "", 0644);
                free(go);
                t0 = now();
                GLEAN_TEST_CHECK(wait_exit(run), "no exit within %.0f s", TIMEOUT);
                pid_t child = read_pid("stuck.pid");
                if (run->calls > 0) {
                        GLEAN_TEST_CHECK(run->ex.cgroup_stuck, "not cgroup_stuck: reason '%s'", run->ex.reason);
                        GLEAN_TEST_CHECK(!run->ex.by_signal && run->ex.exit_code == 3, "the main process: %s %d",
                                         run->ex.by_signal ? "signal" : "exit",
                                         run->ex.by_signal ? run->ex.signal : run->ex.exit_code);
                        GLEAN_TEST_CHECK(strstr(run->ex.reason, "would not empty within 1 s") != NULL, "reason '%s'",
                                         run->ex.reason);
                        GLEAN_TEST_CHECK(run->exited_at - t0 >= 0.9, "reported %.2f s after the main process",
                                         run->exited_at - t0);
                        GLEAN_TEST_CHECK(strstr(run->events_in_callback, "populated 1"),
                                         "cgroup.events during the callback: '%s'", run->events_in_callback);
                        printf("\n    stuck: reported %.1f s after the main process exited: %s\n",
                               run->exited_at - t0, run->ex.reason);
                }
                spin(0.2);
                /* Left in place, with the stuck process (state D). */
                GLEAN_TEST_CHECK(populated(run->cg_abs) == 1, "%s: populated %d after the report", run->cg_abs,
                                 populated(run->cg_abs));
                char st = 0, path[64], buf[512];
                snprintf(path, sizeof(path), "/proc/%d/stat", (int) child);
                if (child > 0 && cgtest_read(path, buf, sizeof(buf)) == 0 && strrchr(buf, ')'))
                        st = strrchr(buf, ')')[2];
                GLEAN_TEST_CHECK(st == 'D', "the stuck child %d is in state '%c', not D", (int) child, st ? st : '-');
                /* The FUSE server goes: the process can die, the cgroup
                 * empties and the executor, which watched it, removes it. */
                fusetest_release(&f);
                double end = now() + TIMEOUT;
                while (access(run->cg_abs, F_OK) == 0 && now() < end)
                        spin(0.05);
                int gone = access(run->cg_abs, F_OK) < 0 ? errno : 0;
                GLEAN_TEST_CHECK(gone == ENOENT, "%s: still there (populated %d) %.0f s after the child could die",
                                 run->cg_abs, populated(run->cg_abs), TIMEOUT);
                (void) reap_orphan(child);
        }
        fusetest_release(&f);
        run_done(run);
        char slot[256];
        snprintf(slot, sizeof(slot), "%s/slots/stuck", env.abs);
        cgtest_destroy(slot);
}

/* ---- suite ---- */

static int suite_init(void) {
        char why[256] = "";

        if (cg_root_open(env.mount, env.base, false, &root, why, sizeof(why)) < 0) {
                fprintf(stderr, "cg_root_open: %s\n", why);
                return -1;
        }
        if (exec_test_dirs("/tmp/glean-test-exec-end-XXXXXX") < 0)
                return -1;
        return agent_executor_cgroup_new(event, root, &executor) < 0 ? -1 : 0;
}

static int suite_cleanup(void) {
        int r = exec_test_cleanup();

        cg_root_free(root);
        root = NULL;
        return r;
}

static CU_TestInfo tests[] = {
        { "a child out of memory ends the job at once", test_oom_child },
        { "a cgroup that will not empty", test_stuck },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup executor: hard ends", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        int r;

        if (!getenv("GLEAN_VM") || strcmp(getenv("GLEAN_VM"), "1") != 0)
                return glean_test_skip("the VM rig only (GLEAN_VM=1): the memory controller and a FUSE mount");
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return glean_test_skip("cannot become a child subreaper");
        r = cgtest_setup(&env);
        if (r != 0)
                return r;
        r = glean_test_main(argc, argv, suites);
        cgtest_teardown(&env);
        return r;
}

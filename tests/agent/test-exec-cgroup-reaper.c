/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-exec-cgroup-reaper.c — the cgroup executor's jobs and their reapers,
 * in the VM rig (GLEAN_VM=1):
 *
 * - the reaper sits in the job's cgroup beside the job; a signal to every
 *   process of the cgroup (the soft kill) ends the job, not the reaper,
 *   and the job's own end is reported; suspend (cgroup.freeze) and resume
 *   leave it working;
 * - a job of a "dead agent" (an executor forgotten: nothing killed) is
 *   re-adopted by its reaper (agent_exec_adopt_id): its real exit code
 *   comes from the exit file, with no "unknown" reason; and so for a job
 *   that ended while no agent watched (its cgroup empty, its reaper gone);
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

#define TIMEOUT 60.0

static CgTestEnv env;
static CgRoot *root;
static sd_event *event;
static AgentExecutor *executor;
static char base[64];
static char execute_dir[128];
static char work[128];
static char state_dir[128];

typedef struct Run {
        int calls;
        AgentJobExit ex;
        AgentJob *job;
        char *scratch;
        char cg_abs[512];
} Run;

#include "exec-test.h"

static void on_exit_cb(AgentJob *job, const AgentJobExit *ex, void *userdata) {
        Run *run = userdata;

        (void) job;
        run->calls++;
        run->ex = *ex;
}

static AgentJobSpec *spec_of(ClassAd *ad, const char *cgroup, const char *exit_name) {
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        int r = agent_jobspec_from_ad(ad, NULL, execute_dir, "slot1", &spec, why, sizeof(why));

        classad_free(ad);
        GLEAN_TEST_CHECK_FATAL(r == 0, "jobspec: %d %s", r, why);
        CU_ASSERT_FATAL((spec->cgroup = strdup(cgroup)) != NULL);
        spec->exit_file = path_in(state_dir, exit_name);
        return spec;
}

static int start_with(AgentExecutor *ex, ClassAd *ad, const char *cgroup, const char *exit_name, Run *run) {
        AgentJobSpec *spec = spec_of(ad, cgroup, exit_name);
        int r;

        free(run->scratch);
        run->scratch = strdup(spec->scratch);
        snprintf(run->cg_abs, sizeof(run->cg_abs), "%s/slots/%s", env.abs, cgroup);
        r = agent_exec_start(ex, spec, on_exit_cb, run, &run->job);
        if (r < 0) {
                fprintf(stderr, "start: %s\n", agent_executor_last_error(ex));
                run->job = NULL;
        }
        agent_jobspec_free(spec);
        return r;
}

static bool in_cgroup(const char *cg_abs, pid_t pid) {
        char path[600], *text = NULL, want[24];
        bool found = false;

        snprintf(path, sizeof(path), "%s/cgroup.procs", cg_abs);
        snprintf(want, sizeof(want), "%d\n", (int) pid);
        if (glean_test_read_file(path, &text, NULL) == 0)
                for (char *line = text; line && *line && !found; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
                        found = strncmp(line, want, strlen(want)) == 0;
        free(text);
        return found;
}

static void release(const char *name) {
        char *p = path_in(work, name);

        write_file(p, "go\n", 0644);
        free(p);
}

/* ---- tests ---- */

static void test_soft_kill_spares_reaper(void) {
        Run *run = run_new();
        AgentJobId id;

        CU_ASSERT_FATAL(start_with(executor,
                                   job_ad("trap \"exit 9\" TERM; echo ready > soft.ready; "
                                          "while :; do sleep 0.05; done",
                                          NULL),
                                   "soft1/job", "soft.exit", run) == 0);
        CU_ASSERT_FATAL(wait_file("soft.ready"));
        CU_ASSERT_EQUAL_FATAL(agent_job_id(run->job, &id), 0);
        GLEAN_TEST_CHECK(in_cgroup(run->cg_abs, id.reaper_pid), "the reaper %d is not in %s", (int) id.reaper_pid,
                         run->cg_abs);
        GLEAN_TEST_CHECK(in_cgroup(run->cg_abs, id.pid), "the job %d is not in %s", (int) id.pid, run->cg_abs);
        /* Frozen and thawed, the reaper waits on. */
        CU_ASSERT_EQUAL(agent_job_suspend(run->job), 0);
        spin(0.3);
        CU_ASSERT_EQUAL(agent_job_resume(run->job), 0);
        spin(0.2);
        CU_ASSERT_EQUAL(run->calls, 0);
        /* SIGTERM to every process of the cgroup: the job's trap decides its end. */
        CU_ASSERT_EQUAL(agent_job_signal(run->job, SIGTERM), 0);
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_FALSE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.exit_code, 9);
        CU_ASSERT_FALSE(run->ex.status_unknown);
        run_done(run);
}

/* What a dead agent leaves: the job started by an executor of its own,
 * kept, then forgotten. */
static AgentJobId start_forgotten(const char *script, const char *cgroup, const char *exit_name, Run *holder) {
        AgentExecutor *other = NULL;
        AgentJobId id = {};

        CU_ASSERT_FATAL(agent_executor_cgroup_new(event, root, &other) == 0);
        CU_ASSERT_FATAL(start_with(other, job_ad(script, NULL), cgroup, exit_name, holder) == 0);
        CU_ASSERT_EQUAL_FATAL(agent_job_id(holder->job, &id), 0);
        CU_ASSERT_EQUAL(agent_job_keep(holder->job), 0);
        agent_executor_forget(other);
        holder->job = NULL;
        return id;
}

static int adopt(Run *run, const char *cgroup, const char *exit_name, const char *scratch, const AgentJobId *id) {
        AgentJobSpec *spec = spec_of(job_ad("true", NULL), cgroup, exit_name);
        int r;

        free(spec->scratch);
        spec->scratch = scratch ? strdup(scratch) : NULL;
        snprintf(run->cg_abs, sizeof(run->cg_abs), "%s/slots/%s", env.abs, cgroup);
        r = agent_exec_adopt_id(executor, spec, id, 0, on_exit_cb, run, &run->job);
        if (r < 0) {
                fprintf(stderr, "adopt: %s\n", agent_executor_last_error(executor));
                run->job = NULL;
        }
        agent_jobspec_free(spec);
        return r;
}

static void test_adopt_real_exit(void) {
        Run *first = run_new(), *run = run_new(), *again = run_new();
        AgentJobId id;

        id = start_forgotten("echo ready > adopt2.ready; while [ ! -e adopt2.go ]; do sleep 0.05; done; "
                             "i=0; while [ $i -lt 2000 ]; do i=$((i+1)); done; exit 5",
                             "ra2/job", "ra2.exit", first);
        CU_ASSERT_FATAL(wait_file("adopt2.ready"));
        CU_ASSERT_EQUAL_FATAL(adopt(run, "ra2/job", "ra2.exit", first->scratch, &id), 0);
        CU_ASSERT_EQUAL(agent_job_pid(run->job), id.pid);
        /* Not twice. */
        CU_ASSERT_EQUAL(adopt(again, "ra2/job", "ra2.exit", NULL, &id), -EBUSY);
        run_done(again);
        spin(0.2);
        CU_ASSERT_EQUAL(run->calls, 0);
        release("adopt2.go");
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_FALSE(run->ex.status_unknown);
        CU_ASSERT_FALSE(run->ex.by_signal);
        CU_ASSERT_EQUAL(run->ex.exit_code, 5);
        CU_ASSERT_STRING_EQUAL(run->ex.reason, "");
        GLEAN_TEST_CHECK(run->ex.user_cpu + run->ex.sys_cpu > 0, "no CPU: %.3f + %.3f", run->ex.user_cpu,
                         run->ex.sys_cpu);
        GLEAN_TEST_CHECK(access(run->cg_abs, F_OK) < 0, "%s is still there", run->cg_abs);
        (void) reap_orphan(id.reaper_pid); /* the forgotten executor's child: ours */
        run_done(run);
        run_done(first);
}

static void test_adopt_ended_meanwhile(void) {
        Run *first = run_new(), *run = run_new();
        AgentJobId id;
        double end;
        char *exit_file = path_in(state_dir, "ra3.exit");

        (void) unlink(exit_file);
        id = start_forgotten("while [ ! -e ended.go ]; do sleep 0.05; done; exit 6", "ra3/job", "ra3.exit", first);
        release("ended.go");
        /* It ends while no agent watches: its reaper writes the exit file and goes. */
        end = now() + TIMEOUT;
        while (access(exit_file, F_OK) < 0 && now() < end)
                (void) sd_event_run(event, 20 * 1000);
        CU_ASSERT_FATAL(access(exit_file, F_OK) == 0);
        (void) reap_orphan(id.reaper_pid); /* the forgotten executor's child: ours */
        CU_ASSERT_EQUAL_FATAL(adopt(run, "ra3/job", "ra3.exit", first->scratch, &id), 0);
        CU_ASSERT_EQUAL(run->calls, 0); /* from the event loop, never from within the call */
        CU_ASSERT_FATAL(wait_exit(run));
        CU_ASSERT_FALSE(run->ex.status_unknown);
        CU_ASSERT_EQUAL(run->ex.exit_code, 6);
        GLEAN_TEST_CHECK(access(run->cg_abs, F_OK) < 0, "%s is still there", run->cg_abs);
        GLEAN_TEST_CHECK(access(first->scratch, F_OK) < 0, "%s is still there", first->scratch);
        free(exit_file);
        run_done(run);
        run_done(first);
}

/* ---- suite ---- */

static int suite_init(void) {
        char why[256] = "";

        if (cg_root_open(env.mount, env.base, false, &root, why, sizeof(why)) < 0) {
                fprintf(stderr, "cg_root_open: %s\n", why);
                return -1;
        }
        if (exec_test_dirs("/tmp/glean-test-exec-reaper-XXXXXX") < 0)
                return -1;
        snprintf(state_dir, sizeof(state_dir), "%s/state", base);
        if (mkdir(state_dir, 0700) < 0)
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
        { "the reaper in the job's cgroup: spared by signals, frozen and thawed", test_soft_kill_spares_reaper },
        { "a job re-adopted by its reaper: its real exit code", test_adopt_real_exit },
        { "a job that ended while no agent watched: its exit file", test_adopt_ended_meanwhile },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup executor: reapers", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        int r;

        if (!getenv("GLEAN_VM") || strcmp(getenv("GLEAN_VM"), "1") != 0)
                return glean_test_skip("the VM rig only (GLEAN_VM=1): it creates cgroups");
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return glean_test_skip("cannot become a child subreaper");
        r = cgtest_setup(&env);
        if (r != 0)
                return r;
        r = glean_test_main(argc, argv, suites);
        cgtest_teardown(&env);
        return r;
}

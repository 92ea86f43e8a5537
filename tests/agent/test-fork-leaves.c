/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-fork-leaves.c — the real glean-agent with the fork executor on a
 * host whose cgroup v2 hierarchy (/sys/fs/cgroup/unified on a hybrid host)
 * has no controllers: each job in a cgroup v2 leaf of its own
 * (FORK_EXECUTOR_CGROUP), so that a job that calls setsid and leaves a
 * process in the background ends whole when it is vacated or deactivated:
 * nothing of it remains (checked by pid), and its leaf is gone.
 *
 * Needs root and a writable cgroup2 mount at /sys/fs/cgroup/unified;
 * skipped otherwise. Creates (and removes) only its own cgroups.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <linux/magic.h>
#include <time.h>
#include <unistd.h>

#include "agent-test.h"

#define MOUNT "/sys/fs/cgroup/unified"

static char base[128];

static bool usable(void) {
        struct statfs fs;
        if (getuid() != 0 || statfs(MOUNT, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC ||
            access(MOUNT, W_OK) < 0) {
                printf("(needs root and cgroup v2 at " MOUNT "; skipped)\n");
                return false;
        }
        return true;
}

/* The leaves left under the base's slots. */
static int leaves_left(void) {
        char path[256];
        snprintf(path, sizeof path, MOUNT "%s/slots", base);
        DIR *d = opendir(path);
        int n = 0;
        for (struct dirent *de; d && (de = readdir(d));)
                n += strncmp(de->d_name, "job-", 4) == 0;
        if (d)
                closedir(d);
        return n;
}

static void remove_base(void) {
        char path[256];
        snprintf(path, sizeof path, MOUNT "%s/slots", base);
        rmdir(path);
        snprintf(path, sizeof path, MOUNT "%s", base);
        rmdir(path);
}

/* Waits for path to hold a pid: the pid, or 0. */
static pid_t read_pid(const char *path, int seconds) {
        for (int i = 0; i < seconds * 20; i++) {
                char *text = NULL;
                long pid = 0;
                if (glean_test_read_file(path, &text, NULL) >= 0 && text && strchr(text, '\n'))
                        pid = strtol(text, NULL, 10);
                free(text);
                if (pid > 0)
                        return (pid_t) pid;
                usleep(50000);
        }
        return 0;
}

static bool gone(pid_t pid, int seconds) {
        for (int i = 0; i < seconds * 50; i++) {
                char st = proc_state(pid);
                if (!st || st == 'Z')
                        return true;
                usleep(20000);
        }
        return false;
}

/* Starts on slot the job that escapes its group; *ret_job and *ret_escaped its pids. */
static bool start_escaper(Pool *p, int fd, const char *slot, const char *id, pid_t *ret_job, pid_t *ret_escaped) {
        char args[512], pidfile[256];
        snprintf(pidfile, sizeof pidfile, "%s/escaped-%s.pid", p->jobs, slot);
        unlink(pidfile);
        /* The pid written from inside the new session, once setsid is done. */
        snprintf(args, sizeof args, "-c 'setsid sh -c \\\"echo \\\\$\\\\$ > %s; exec sleep 300\\\" & sleep 300'",
                 pidfile);
        ClassAd *job = job_ad(p, "/bin/sh", args, NULL);
        pid_t pid = claim_and_run(fd, slot, id, job);
        classad_free(job);
        pid_t esc = pid > 0 ? read_pid(pidfile, 10) : 0;
        *ret_job = pid;
        *ret_escaped = esc;
        if (!GLEAN_TEST_CHECK(pid > 0 && esc > 0, "%s: job %d, escaped %d", slot, (int) pid, (int) esc))
                return false;
        /* It did escape the group, into its own session, and it is in the job's leaf. */
        char path[64], *cg = NULL;
        snprintf(path, sizeof path, "/proc/%d/cgroup", (int) esc);
        glean_test_read_file(path, &cg, NULL);
        char want[160];
        snprintf(want, sizeof want, "0::%s/slots/job-", base);
        bool in_leaf = cg && strstr(cg, want);
        GLEAN_TEST_CHECK(getsid(esc) == esc && getsid(esc) != pid, "the background process left the job's session: sid %d, job %d, pid %d", (int) getsid(esc), (int) pid, (int) esc);
        GLEAN_TEST_CHECK(in_leaf, "the escaped process is in the job's leaf: %s", cg ? cg : "?");
        free(cg);
        return true;
}

static void test_setsid_escape(void) {
        if (!usable())
                return;
        snprintf(base, sizeof base, "/glean-agent-test-leaves-%d", (int) getpid());
        char conf[256];
        snprintf(conf, sizeof conf, "AGENT_EXECUTOR = fork\nFORK_EXECUTOR_CGROUP = %s\n", base);
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, conf));
        GLEAN_TEST_CHECK(wait_log(&p, 2, "fork executor: each job in a cgroup v2 leaf", base),
                         "no log of the leaves");
        int fd = connect_agent(&p);
        pid_t job1 = 0, esc1 = 0, job2 = 0, esc2 = 0;
        bool ok1 = start_escaper(&p, fd, "slot1", "leaf-claim-0000001", &job1, &esc1);
        bool ok2 = start_escaper(&p, fd, "slot2", "leaf-claim-0000002", &job2, &esc2);
        GLEAN_TEST_CHECK(leaves_left() == 2, "%d leaves for two jobs", leaves_left());
        char why[512];
        /* A fast vacate of slot1 (what rm of a job whose claim is held comes to). */
        ClassAd *m = NULL;
        glean_msg_new(GLEAN_CMD_VACATE, &m);
        classad_set_string(m, "Slot", "slot1");
        classad_set_bool(m, "Fast", true);
        GLEAN_TEST_CHECK(ok_why(call(fd, m), why, sizeof why), "vacate: %s", why);
        classad_free(m);
        if (ok1) {
                GLEAN_TEST_CHECK(gone(job1, 10), "the vacated job %d is still there", (int) job1);
                GLEAN_TEST_CHECK(gone(esc1, 10), "the vacated job's escaped process %d is still there", (int) esc1);
        }
        /* A deactivation of slot2's claim (glean rm through the central manager). */
        m = NULL;
        glean_msg_new(GLEAN_CMD_DEACTIVATE, &m);
        classad_set_string(m, "ClaimId", "leaf-claim-0000002");
        GLEAN_TEST_CHECK(ok_why(call(fd, m), why, sizeof why), "deactivate: %s", why);
        classad_free(m);
        if (ok2) {
                GLEAN_TEST_CHECK(gone(job2, 15), "the deactivated job %d is still there", (int) job2);
                GLEAN_TEST_CHECK(gone(esc2, 15), "the deactivated job's escaped process %d is still there",
                                 (int) esc2);
        }
        for (int i = 0; i < 50 && leaves_left() > 0; i++)
                usleep(100000);
        GLEAN_TEST_CHECK(leaves_left() == 0, "%d leaves left after the jobs' end", leaves_left());
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        /* Whatever happened, nothing of ours stays. */
        if (esc1 > 0 && !gone(esc1, 0))
                kill(esc1, SIGKILL);
        if (esc2 > 0 && !gone(esc2, 0))
                kill(esc2, SIGKILL);
        remove_base();
}

/* Where the leaves cannot be had the agent says so and runs its jobs in their groups. */
static void test_fallback_logged(void) {
        if (!usable())
                return;
        Pool p;
        /* A file where the base would be: not a cgroup. */
        CU_ASSERT_FATAL(pool_start(&p, "AGENT_EXECUTOR = fork\nFORK_EXECUTOR_CGROUP = /cgroup.procs/x\n"));
        GLEAN_TEST_CHECK(wait_log(&p, 2, "FORK_EXECUTOR_CGROUP = /cgroup.procs/x", "process groups"),
                         "no log of the fallback");
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        pid_t pid = claim_and_run(fd, "slot1", "fallback-claim-001", job);
        GLEAN_TEST_CHECK(pid > 0, "a job runs without leaves");
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static CU_TestInfo tests[] = {
        { "a job that calls setsid ends whole (vacate, deactivate)", test_setsid_escape },
        { "no leaves: logged, jobs run in their groups", test_fallback_logged },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "fork executor leaves", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

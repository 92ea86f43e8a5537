/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-cgroup.c — the real glean-agent with the cgroup executor
 * (AGENT_EXECUTOR = cgroup, BASE_CGROUP in a test subtree of our own): the
 * slot ads say so, every slot has its cgroup, jobs run in <slot>/job (a
 * dynamic slot's inside its partitionable slot's), cgroups go with their
 * jobs and released dynamic slots, SUSPEND freezes the job's cgroup, a
 * vacate ends the job and what it left behind, the backfill command runs
 * in its slot's cgroup, a restarted agent ends the jobs a dead one left
 * running, and the agent refuses a base
 * it cannot use (AGENT_EXECUTOR = cgroup) or falls back to the fork
 * executor (auto, in the root cgroup). In the VM rig (GLEAN_VM=1, every
 * controller): the slots' memory.max and cpu.weight, and a job the OOM
 * killer ends is put on hold.
 *
 * Each test starts its own agent with BASE_CGROUP = <test subtree>/agent-N;
 * the subtree (tests/agent/cgroup-test.h) goes at the end, or with the
 * guard process if the suite dies. Root only (77 otherwise).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-test.h"
#include "cgroup-test.h"

static CgTestEnv env;
static bool in_vm;
static unsigned n_agents;

/* ---- an agent in the test subtree ---- */

typedef struct CgPool {
        Pool p;
        char base[128]; /* BASE_CGROUP, relative to the mount */
        char abs[256];  /* <mount>/<base> */
} CgPool;

static void cgpool_config(CgPool *cp, const char *extra, char *buf, size_t len) {
        snprintf(cp->base, sizeof cp->base, "%s/agent-%u", env.base, ++n_agents);
        snprintf(cp->abs, sizeof cp->abs, "%s/%s", env.mount, cp->base);
        snprintf(buf, len, "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\n%s", cp->base, extra ? extra : "");
}

static bool cgpool_start(CgPool *cp, const char *extra) {
        char config[1024];
        cgpool_config(cp, extra, config, sizeof config);
        return pool_start(&cp->p, config);
}

/* Another agent on the base of cp (its configuration directory is new). */
static bool cgpool_restart(CgPool *cp, const char *extra) {
        char config[1024];
        snprintf(config, sizeof config, "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\n%s", cp->base, extra ? extra : "");
        return pool_start(&cp->p, config);
}

/* Stops the agent (it must exit 0), checks that its slots' cgroups went
 * with it, and removes what is left of its base. */
static void cgpool_stop(CgPool *cp) {
        char path[320];
        GLEAN_TEST_CHECK(pool_stop(&cp->p) == 0, "the agent exits 0 after SIGTERM");
        snprintf(path, sizeof path, "%s/slots/slot1", cp->abs);
        GLEAN_TEST_CHECK(access(path, F_OK) < 0, "%s outlives the agent", path);
        cgtest_destroy(cp->abs);
}

static int slow(int seconds) {
        return seconds * agent_test_slowdown();
}

static bool exists(const char *path) {
        return access(path, F_OK) == 0;
}

/* Waits up to seconds for path to be gone. */
static bool wait_gone(const char *path, int seconds) {
        for (int i = 0; i < seconds * 50 && exists(path); i++)
                usleep(20000);
        return !exists(path);
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

/* A file of a cgroup of the agent: <abs>/slots/<rel>/<file>, "" when unreadable. */
static void cg_file(const CgPool *cp, const char *rel, const char *file, char *buf, size_t len) {
        char path[512];
        snprintf(path, sizeof path, "%s/slots/%s/%s", cp->abs, rel, file);
        if (cgtest_read(path, buf, len) < 0)
                buf[0] = 0;
        buf[strcspn(buf, "\n")] = 0;
}

/* "frozen 1" / "frozen 0" of <abs>/slots/<rel>/cgroup.events: 1, 0, or -1 when unreadable. */
static int cg_frozen(const CgPool *cp, const char *rel) {
        char path[512], buf[256];
        snprintf(path, sizeof path, "%s/slots/%s/cgroup.events", cp->abs, rel);
        if (cgtest_read(path, buf, sizeof buf) < 0)
                return -1;
        const char *f = strstr(buf, "frozen ");
        return f ? f[7] == '1' : -1;
}

/* What the slots' CgroupControllers should say: the controllers of the
 * test subtree, in cg_controllers_string()'s order. */
static void expected_controllers(char *buf, size_t len) {
        static const struct {
                const char *name;
                unsigned bit;
        } table[] = { { "cpu", CG_CPU }, { "cpuset", CG_CPUSET }, { "io", CG_IO }, { "memory", CG_MEMORY },
                      { "pids", CG_PIDS } };
        char path[256], text[512];
        unsigned mask = 0;
        snprintf(path, sizeof path, "%s/cgroup.controllers", env.abs);
        if (cgtest_read(path, text, sizeof text) < 0)
                text[0] = 0;
        for (char *save = NULL, *tok = strtok_r(text, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
                for (size_t i = 0; i < sizeof table / sizeof *table; i++)
                        if (strcmp(tok, table[i].name) == 0)
                                mask |= table[i].bit;
        cg_controllers_string(mask, buf, len);
}

/* A submit file in the jobs directory running /bin/sh -c script; its path into sub. */
static void write_sub(const Pool *p, const char *name, const char *script, char *sub, size_t len) {
        char text[1024];
        snprintf(sub, len, "%s/%s", p->jobs, name);
        snprintf(text, sizeof text,
                 "executable = /bin/sh\narguments = \"-c '%s'\"\noutput = out.txt\nerror = err.txt\n"
                 "initialdir = %s\nqueue\n",
                 script, p->jobs);
        write_file(sub, text);
}

static char *read_job_file(const Pool *p, const char *name) {
        char path[256], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", p->jobs, name);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return strdup("");
        return text;
}

/* ---- tests ---- */

/* The slot ads name the executor and the controllers; the agent lives in
 * <base>/agent, each slot has <base>/slots/slotN. */
static void test_status(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, NULL));
        GleanTestRun r;
        char want[128], line[192];
        expected_controllers(want, sizeof want);
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "status", "-l", "slot1", NULL) >= 0);
        snprintf(line, sizeof line, "CgroupControllers = \"%s\"", want);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "ExecutorName = \"cgroup\"") &&
                                 strstr(r.out, "HasCgroups = true") && strstr(r.out, line),
                         "status -l slot1 lacks ExecutorName = \"cgroup\", HasCgroups = true or %s:\n%s", line, r.out);
        glean_test_run_done(&r);
        if (in_vm)
                GLEAN_TEST_CHECK(strcmp(want, "cpu cpuset io memory pids") == 0,
                                 "the VM rig offers the controllers '%s', not all five", want);
        printf("\n    CgroupControllers = \"%s\"\n", want);

        char path[512], own[256], wantcg[256];
        GLEAN_TEST_CHECK(cgtest_proc_cgroup(cp.p.pid, own, sizeof own) == 0, "no cgroup for the agent");
        snprintf(wantcg, sizeof wantcg, "/%s/agent", cp.base);
        GLEAN_TEST_CHECK(strcmp(own, wantcg) == 0, "the agent is in %s, not %s", own, wantcg);
        for (int i = 1; i <= 2; i++) {
                snprintf(path, sizeof path, "%s/slots/slot%d", cp.abs, i);
                GLEAN_TEST_CHECK(exists(path), "no cgroup %s", path);
        }
        char *log = read_log(&cp.p);
        GLEAN_TEST_CHECK(strstr(log, "executor cgroup"), "the log does not name the executor:\n%s", log);
        free(log);
        cgpool_stop(&cp);
}

/* A job in slot1/job: /proc/self/cgroup says so, its exit code comes
 * back, and its cgroup goes with it. */
static void test_job_cgroup(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, NULL));
        char sub[256], want[256], job[320];
        write_sub(&cp.p, "cg.sub", "cat /proc/self/cgroup; exit 5", sub, sizeof sub);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", sub, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 5 && strstr(r.out, "exited with status 5"), "run: status %d: %s %s", r.status,
                         r.out, r.err);
        glean_test_run_done(&r);
        char *out = read_job_file(&cp.p, "out.txt");
        snprintf(want, sizeof want, "0::/%s/slots/slot1/job\n", cp.base);
        GLEAN_TEST_CHECK(strstr(out, want), "the job's /proc/self/cgroup: '%s', want '%s'", out, want);
        free(out);
        snprintf(job, sizeof job, "%s/slots/slot1/job", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(job, slow(2)), "%s outlives its job", job);
        snprintf(job, sizeof job, "%s/slots/slot1", cp.abs);
        GLEAN_TEST_CHECK(exists(job), "the slot's cgroup %s went with the job", job);
        wait_state(&cp.p, "slot1", "Unclaimed/Idle", slow(5));
        cgpool_stop(&cp);
}

/* A dynamic slot's cgroup lives inside its partitionable slot's, and goes
 * when the d-slot is released. */
static void test_partitionable(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "NUM_SLOTS = 1\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                                          "SLOT_TYPE_1_PARTITIONABLE = True\n"));
        char path[320], why[512], buf[64];
        /* Claimed by hand: the d-slot's cgroup, and its limits in the VM. */
        int fd = connect_agent(&cp.p);
        ClassAd *job = job_ad(&cp.p, "/bin/true", "", NULL);
        const char *id = "cgroup-pslot-claim-01";
        ClassAd *reply = claim(fd, "slot1", id, job);
        char *slot = ad_string(reply, "Slot");
        GLEAN_TEST_CHECK(ok_why(reply, why, sizeof why) && strcmp(slot, "slot1_1") == 0, "claim: %s (%s)", why, slot);
        free(slot);
        snprintf(path, sizeof path, "%s/slots/slot1/slot1_1", cp.abs);
        GLEAN_TEST_CHECK(exists(path), "no cgroup %s for the dynamic slot", path);
        if (in_vm) {
                int64_t mem = slot_int(&cp.p, "slot1_1", "Memory"), cpus = slot_int(&cp.p, "slot1_1", "Cpus");
                char want[64];
                cg_file(&cp, "slot1/slot1_1", "memory.max", buf, sizeof buf);
                snprintf(want, sizeof want, "%lld", (long long) mem * 1024 * 1024);
                GLEAN_TEST_CHECK(mem > 0 && strcmp(buf, want) == 0, "slot1_1: memory.max %s, Memory %lld MB", buf,
                                 (long long) mem);
                cg_file(&cp, "slot1/slot1_1", "cpu.weight", buf, sizeof buf);
                snprintf(want, sizeof want, "%lld", (long long) cpus * 100);
                GLEAN_TEST_CHECK(strcmp(buf, want) == 0, "slot1_1: cpu.weight %s, Cpus %lld", buf, (long long) cpus);
        }
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        GLEAN_TEST_CHECK(wait_gone(path, slow(5)), "%s outlives the release of its dynamic slot", path);
        classad_free(job);
        close(fd);

        /* glean agent run: the job in slot1/slot1_1/job, both gone after it. */
        char sub[256], want[256];
        write_sub(&cp.p, "cg.sub", "cat /proc/self/cgroup; exit 3", sub, sizeof sub);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", sub, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 3, "run: status %d: %s %s", r.status, r.out, r.err);
        glean_test_run_done(&r);
        char *out = read_job_file(&cp.p, "out.txt");
        snprintf(want, sizeof want, "0::/%s/slots/slot1/slot1_", cp.base);
        const char *at = strstr(out, want);
        GLEAN_TEST_CHECK(at && strstr(at, "/job\n"), "the job's /proc/self/cgroup: '%s', want '%s<N>/job'", out, want);
        /* The d-slot of this claim: slot1_2 (slot1_1 was the first). */
        snprintf(want, sizeof want, "0::/%s/slots/slot1/slot1_2/job\n", cp.base);
        GLEAN_TEST_CHECK(strstr(out, want), "the job's /proc/self/cgroup: '%s', want '%s'", out, want);
        free(out);
        snprintf(path, sizeof path, "%s/slots/slot1/slot1_2", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(path, slow(5)), "%s outlives its dynamic slot", path);
        snprintf(path, sizeof path, "%s/slots/slot1", cp.abs);
        GLEAN_TEST_CHECK(exists(path), "the partitionable slot's cgroup %s is gone", path);
        cgpool_stop(&cp);
}

/* SUSPEND freezes the job's cgroup, CONTINUE thaws it; a release while
 * frozen still ends the job. */
static void test_suspend(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "WANT_SUSPEND = True\n"
                                          "SUSPEND = (CurrentTime - JobStart) > 1\n"
                                          "CONTINUE = (CurrentTime - EnteredCurrentActivity) > 2\n"));
        int fd = connect_agent(&cp.p);
        char why[512], st[64];
        ClassAd *job = job_ad(&cp.p, "/bin/sh", "-c 'while :; do sleep 0.1; done'", NULL);
        const char *id = "cgroup-suspend-claim1";
        pid_t pid = claim_and_run(fd, "slot1", id, job);
        CU_ASSERT_FATAL(pid > 0);
        GLEAN_TEST_CHECK(cg_frozen(&cp, "slot1/job") == 0, "the job's cgroup is frozen before SUSPEND");

        /* Suspended: frozen 1 in cgroup.events (the kernel confirms it a moment later). */
        CU_ASSERT_FATAL(wait_state(&cp.p, "slot1", "Claimed/Suspended", slow(8)));
        int frozen = -1;
        for (int i = 0; i < slow(2) * 50 && frozen != 1; i++) {
                frozen = cg_frozen(&cp, "slot1/job");
                if (frozen != 1)
                        usleep(20000);
        }
        slot_state(&cp.p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(frozen == 1 && strcmp(st, "Claimed/Suspended") == 0,
                         "cgroup.events frozen %d while the slot is %s", frozen, st);
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the suspended job is gone");

        /* CONTINUE: thawed while Claimed/Busy (SUSPEND comes back a second later). */
        CU_ASSERT(wait_state(&cp.p, "slot1", "Claimed/Busy", slow(8)));
        frozen = -1;
        for (int i = 0; i < 50 && frozen != 0; i++) {
                frozen = cg_frozen(&cp, "slot1/job");
                if (frozen != 0)
                        usleep(10000);
        }
        GLEAN_TEST_CHECK(frozen == 0, "cgroup.events frozen %d after CONTINUE", frozen);
        CU_ASSERT(log_transition(&cp.p, "slot1", "Claimed/Suspended", "Claimed/Busy", 15));

        /* Released while frozen again: the job ends all the same, and its cgroup goes. */
        CU_ASSERT(wait_state(&cp.p, "slot1", "Claimed/Suspended", slow(8)));
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, slow(10), NULL, 0, 0);
        GLEAN_TEST_CHECK(ex != NULL, "no JobExit after the release of a suspended job");
        classad_free(ex);
        wait_state(&cp.p, "slot1", "Unclaimed/Idle", slow(5));
        char path[320];
        snprintf(path, sizeof path, "%s/slots/slot1/job", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(path, slow(2)), "%s outlives its suspended job", path);
        GLEAN_TEST_CHECK(kill(pid, 0) < 0 && errno == ESRCH, "the job's process %d is still there", (int) pid);
        classad_free(job);
        close(fd);
        cgpool_stop(&cp);
}

/* glean agent vacate: the job's TERM trap ends it, and the child it left
 * in the background (deaf to SIGTERM) goes with its cgroup. */
static void test_vacate(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, NULL));
        char sub[256], outp[256];
        write_sub(&cp.p, "vacate.sub",
                  "(trap \"\"\"\" TERM; exec sleep 300) & echo $! >bg.pid; trap \"\"exit 7\"\" TERM; "
                  "while :; do sleep 0.1; done",
                  sub, sizeof sub);
        snprintf(outp, sizeof outp, "%s/run.out", cp.p.dir);
        pid_t run = fork();
        if (run == 0) {
                int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                dup2(fd, 1);
                dup2(fd, 2);
                const char *g = bin("GLEAN", "build/bin/glean");
                execl(g, g, "agent", "--socket", cp.p.sock, "run", sub, (char *) NULL);
                _exit(127);
        }
        bool busy = wait_state(&cp.p, "slot1", "Claimed/Busy", slow(10));
        pid_t bg = 0;
        for (int i = 0; i < slow(5) * 20 && bg <= 0; i++) {
                char *text = read_job_file(&cp.p, "bg.pid");
                bg = (pid_t) atoi(text);
                free(text);
                if (bg <= 0)
                        usleep(50000);
        }
        GLEAN_TEST_CHECK(bg > 0, "the job did not write the pid of its background child");
        usleep(300000); /* the shell sets its trap */
        char own[256], want[256];
        snprintf(want, sizeof want, "/%s/slots/slot1/job", cp.base);
        GLEAN_TEST_CHECK(bg > 0 && cgtest_proc_cgroup(bg, own, sizeof own) == 0 && strcmp(own, want) == 0,
                         "the background child %d is in '%s', not %s", (int) bg, bg > 0 ? own : "", want);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "vacate", NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0, "vacate: %s", r.err);
        glean_test_run_done(&r);
        int status = -1;
        for (int i = 0; i < slow(10) * 10 && waitpid(run, &status, WNOHANG) != run; i++)
                usleep(100000), status = -1;
        if (status == -1) {
                kill(run, SIGKILL);
                waitpid(run, &status, 0);
        }
        char *out = NULL;
        glean_test_read_file(outp, &out, NULL);
        GLEAN_TEST_CHECK(busy && WIFEXITED(status) && WEXITSTATUS(status) == 7 && out && strstr(out, "(vacated)"),
                         "the vacated job exits 7 from its TERM trap: status %d, run: %s", status, out ? out : "");
        free(out);
        char path[320];
        snprintf(path, sizeof path, "%s/slots/slot1/job", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(path, slow(2)), "%s outlives the vacated job", path);
        char bst = bg > 0 ? wait_ended(bg, slow(2)) : '?';
        GLEAN_TEST_CHECK(!bst, "the background child %d outlives the job (state %c)", (int) bg, bst);
        wait_state(&cp.p, "slot1", "Unclaimed/Idle", slow(5));
        cgpool_stop(&cp);
}

/* The backfill command runs inside its slot's cgroup, and its cgroup goes
 * when a claim ends it. */
static void test_backfill(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "NUM_CPUS = 1\nENABLE_BACKFILL = True\nBACKFILL_COMMAND = /bin/sleep 120\n"
                                          "START_BACKFILL = True\nEVICT_BACKFILL = False\n"));
        CU_ASSERT_FATAL(wait_state(&cp.p, "slot1", "Backfill/Busy", slow(5)));
        char path[320], procs[64] = "", want[256], own[256] = "";
        snprintf(path, sizeof path, "%s/slots/slot1/backfill/cgroup.procs", cp.abs);
        for (int i = 0; i < slow(2) * 50 && !procs[0]; i++) {
                if (cgtest_read(path, procs, sizeof procs) < 0)
                        procs[0] = 0;
                if (!procs[0])
                        usleep(20000);
        }
        pid_t pid = (pid_t) atoi(procs);
        snprintf(want, sizeof want, "/%s/slots/slot1/backfill", cp.base);
        GLEAN_TEST_CHECK(pid > 0 && cgtest_proc_cgroup(pid, own, sizeof own) == 0 && strcmp(own, want) == 0,
                         "the backfill command (pid %d) is in '%s', not %s", (int) pid, own, want);
        int fd = connect_agent(&cp.p);
        ClassAd *job = job_ad(&cp.p, "/bin/true", "", NULL);
        char why[512];
        const char *id = "cgroup-backfill-claim1";
        GLEAN_TEST_CHECK(ok_why(claim(fd, "slot1", id, job), why, sizeof why), "claim: %s", why);
        wait_state(&cp.p, "slot1", "Claimed/Idle", slow(5));
        snprintf(path, sizeof path, "%s/slots/slot1/backfill", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(path, slow(2)), "%s outlives the backfill command", path);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        classad_free(job);
        close(fd);
        cgpool_stop(&cp);
}

/* An agent that died (SIGKILL) leaves its job running in slot1/job; the
 * next agent on the same base ends it, and slot1 takes jobs again. */
static void test_restart(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, NULL));
        int fd = connect_agent(&cp.p);
        ClassAd *job = job_ad(&cp.p, "/bin/sleep", "300", NULL);
        pid_t pid = claim_and_run(fd, "slot1", "cgroup-restart-claim1", job);
        classad_free(job);
        close(fd);
        CU_ASSERT_FATAL(pid > 0);
        int status;
        kill(cp.p.pid, SIGKILL);
        waitpid(cp.p.pid, &status, 0);
        pool_exited(&cp.p, status);
        remove_dir(cp.p.dir);
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the job %d died with its agent", (int) pid);

        CU_ASSERT_FATAL(cgpool_restart(&cp, NULL));
        char st = wait_ended(pid, slow(2));
        GLEAN_TEST_CHECK(!st, "the job %d of the dead agent still runs (state %c)", (int) pid, st);
        GLEAN_TEST_CHECK(log_line(&cp.p, "left behind", NULL), "the log does not mention what was left behind");
        char sub[256], want[256];
        write_sub(&cp.p, "cg.sub", "cat /proc/self/cgroup; exit 4", sub, sizeof sub);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", "--slot", "slot1", sub, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 4, "run on slot1 after the restart: status %d: %s %s", r.status, r.out, r.err);
        glean_test_run_done(&r);
        char *out = read_job_file(&cp.p, "out.txt");
        snprintf(want, sizeof want, "0::/%s/slots/slot1/job\n", cp.base);
        GLEAN_TEST_CHECK(strstr(out, want), "the job's /proc/self/cgroup: '%s', want '%s'", out, want);
        free(out);
        cgpool_stop(&cp);
}

/* An agent killed while its job runs, started again on the same base and
 * EXECUTE: the job runs on under the same claim, which its claimant can
 * keep alive and release. */
static void test_readopt(void) {
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, NULL));
        char old_dir[sizeof cp.p.dir];
        snprintf(old_dir, sizeof old_dir, "%s", cp.p.dir);
        int fd = connect_agent(&cp.p);
        ClassAd *job = job_ad(&cp.p, "/bin/sleep", "300", NULL);
        pid_t pid = claim_and_run(fd, "slot1", "cgroup-readopt-claim1", job);
        classad_free(job);
        close(fd);
        CU_ASSERT_FATAL(pid > 0);
        int status;
        kill(cp.p.pid, SIGKILL);
        waitpid(cp.p.pid, &status, 0);
        pool_exited(&cp.p, status);

        char extra[256];
        snprintf(extra, sizeof extra, "EXECUTE = %s/execute\n", old_dir);
        CU_ASSERT_FATAL(cgpool_restart(&cp, extra));
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the job %d runs on after the restart", (int) pid);
        CU_ASSERT(wait_state(&cp.p, "slot1", "Claimed/Busy", slow(5)));
        GLEAN_TEST_CHECK(log_line(&cp.p, "re-adopted", NULL), "the log does not say the job was re-adopted");
        fd = connect_agent(&cp.p);
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_KEEP_ALIVE, "cgroup-readopt-claim1", NULL);
        CU_ASSERT(reply_ok(r, NULL));
        classad_free(r);
        r = claim_cmd(fd, GLEAN_CMD_RELEASE, "cgroup-readopt-claim1", NULL);
        CU_ASSERT(reply_ok(r, NULL));
        classad_free(r);
        char st = wait_ended(pid, slow(10));
        GLEAN_TEST_CHECK(!st, "the re-adopted job %d ends with its claim (state %c)", (int) pid, st);
        CU_ASSERT(wait_state(&cp.p, "slot1", "Unclaimed/Idle", slow(5)));
        close(fd);
        cgpool_stop(&cp);
        remove_dir(old_dir);
}

/* AGENT_EXECUTOR = cgroup without a usable base: the agent says why and exits 1. */
static void refused(const char *what, const char *base, const char *want) {
        Pool p;
        char config[512];
        snprintf(config, sizeof config, "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\n", base);
        CU_ASSERT_FATAL(pool_launch(&p, config, true));
        char *log = read_log(&p);
        GLEAN_TEST_CHECK(p.exit_status == 1, "%s: the agent exits %d, not 1", what, p.exit_status);
        GLEAN_TEST_CHECK(strstr(log, "AGENT_EXECUTOR = cgroup: ") && strstr(log, want),
                         "%s: the log does not say why (%s):\n%s", what, want, log);
        free(log);
        pool_stop(&p);
}

static void test_refused(void) {
        char base[256], path[320];
        /* A path that leaves the cgroup2 mount for /proc. */
        snprintf(base, sizeof base, "%s/../../../../proc/self", env.base);
        refused("a base under /proc", base, "'..'");
        /* A base that cannot be created (cgroup.max.depth = 0 above it). */
        snprintf(path, sizeof path, "%s/shallow", env.abs);
        CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
        snprintf(path, sizeof path, "%s/shallow/cgroup.max.depth", env.abs);
        CU_ASSERT_FATAL(cgtest_write(path, "0") == 0);
        snprintf(base, sizeof base, "%s/shallow/agent", env.base);
        refused("a base that cannot be created", base, "cannot create the base");
        snprintf(path, sizeof path, "%s/shallow", env.abs);
        cgtest_destroy(path);
}

/* AGENT_EXECUTOR = auto without BASE_CGROUP, in the root cgroup: the fork
 * executor, and the log says why. */
static void test_auto_root(void) {
        char own[256] = "?";
        if (cgtest_proc_cgroup(getpid(), own, sizeof own) < 0 || strcmp(own, "/") != 0) {
                printf("\n    SKIPPED inside the suite: the suite runs in the cgroup '%s', not the root one (the "
                       "agent would take it)\n",
                       own);
                return;
        }
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "AGENT_EXECUTOR = auto\n"));
        char *s = slot_string(&p, "slot1", "ExecutorName");
        GLEAN_TEST_CHECK(strcmp(s, "fork") == 0, "ExecutorName '%s'", s);
        free(s);
        ClassAd *ad = slot_ad(&p, "slot1");
        bool has = true;
        GLEAN_TEST_CHECK(ad && classad_eval_bool(ad, "HasCgroups", CA_MODE_OLD, &has) >= 0 && !has,
                         "HasCgroups is not false");
        classad_free(ad);
        GLEAN_TEST_CHECK(log_line(&p, "jobs run without cgroups", "root cgroup", NULL),
                         "the log does not say why the cgroups are not used");
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* The VM rig: memory.max = Memory in bytes, cpu.weight = 100 x Cpus. */
static void test_limits(void) {
        if (!in_vm) {
                printf("\n    SKIPPED inside the suite: memory.max and cpu.weight are checked in the VM rig only "
                       "(GLEAN_VM=1)\n");
                return;
        }
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "SLOT_TYPE_1 = cpus=1, memory=25%\nNUM_SLOTS_TYPE_1 = 1\n"
                                          "SLOT_TYPE_2 = cpus=2, memory=50%\nNUM_SLOTS_TYPE_2 = 1\n"
                                          "NUM_CPUS = 3\n"));
        for (int i = 1; i <= 2; i++) {
                char slot[16], buf[64], want[64];
                snprintf(slot, sizeof slot, "slot%d", i);
                int64_t mem = slot_int(&cp.p, slot, "Memory"), cpus = slot_int(&cp.p, slot, "Cpus");
                GLEAN_TEST_CHECK(cpus == i, "%s: Cpus %lld", slot, (long long) cpus);
                cg_file(&cp, slot, "memory.max", buf, sizeof buf);
                snprintf(want, sizeof want, "%lld", (long long) mem * 1024 * 1024);
                GLEAN_TEST_CHECK(mem > 0 && strcmp(buf, want) == 0, "%s: memory.max '%s', Memory %lld MB = %s", slot,
                                 buf, (long long) mem, want);
                cg_file(&cp, slot, "cpu.weight", buf, sizeof buf);
                snprintf(want, sizeof want, "%lld", (long long) cpus * 100);
                GLEAN_TEST_CHECK(strcmp(buf, want) == 0, "%s: cpu.weight '%s', Cpus %lld", slot, buf,
                                 (long long) cpus);
                printf("\n    %s: Memory %lld MB, Cpus %lld: memory.max %lld, cpu.weight %s", slot, (long long) mem,
                       (long long) cpus, (long long) mem * 1024 * 1024, buf);
        }
        printf("\n");
        char *limits = slot_string(&cp.p, "slot1", "CgroupLimits");
        GLEAN_TEST_CHECK(strstr(limits, "memory") && strstr(limits, "cpu"), "CgroupLimits '%s'", limits);
        free(limits);
        cgpool_stop(&cp);
}

/* The VM rig: a job that wants far more than its slot's 64 MB is ended by
 * the OOM killer and put on hold. */
static void test_oom(void) {
        if (!in_vm) {
                printf("\n    SKIPPED inside the suite: the OOM test runs in the VM rig only (GLEAN_VM=1)\n");
                return;
        }
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "NUM_CPUS = 1\nMEMORY = 64\n"));
        char sub[256];
        write_sub(&cp.p, "oom.sub", "x=`head -c 200000000 /dev/zero | tr \"\"\\0\"\" a`; echo survived", sub,
                  sizeof sub);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", sub, NULL) >= 0);
        GLEAN_TEST_CHECK(strstr(r.out, "is held: out of memory"), "run: status %d:\n%s%s", r.status, r.out, r.err);
        printf("\n    %s", r.out);
        glean_test_run_done(&r);
        char *out = read_job_file(&cp.p, "out.txt");
        GLEAN_TEST_CHECK(!strstr(out, "survived"), "the job survived: %s", out);
        free(out);
        char path[320];
        snprintf(path, sizeof path, "%s/slots/slot1/job", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(path, slow(2)), "%s outlives the OOM-killed job", path);
        GLEAN_TEST_CHECK(log_line(&cp.p, "slot1: job", "out of memory", NULL), "the log does not record the OOM kill");
        cgpool_stop(&cp);
}

static CU_TestInfo tests[] = {
        { "status: the cgroup executor and the slots' cgroups", test_status },
        { "a job in its slot's cgroup", test_job_cgroup },
        { "dynamic slots' cgroups", test_partitionable },
        { "SUSPEND freezes the job's cgroup", test_suspend },
        { "a vacate empties the job's cgroup", test_vacate },
        { "the backfill command in its slot's cgroup", test_backfill },
        { "a restarted agent kills the jobs it has no record of", test_restart },
        { "a restarted agent re-adopts the job of the dead one", test_readopt },
        { "AGENT_EXECUTOR = cgroup without a usable base", test_refused },
        { "AGENT_EXECUTOR = auto in the root cgroup", test_auto_root },
        { "slot limits (VM)", test_limits },
        { "out of memory: held (VM)", test_oom },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent cgroup", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        in_vm = getenv("GLEAN_VM") && strcmp(getenv("GLEAN_VM"), "1") == 0;
        int r = cgtest_setup(&env);
        if (r != 0)
                return r;
        /* The agents' bases are made below the test subtree: they get the
         * controllers it passes down (the agent writes nothing above its base). */
        char path[256], ctl[256], line[256] = "";
        snprintf(path, sizeof path, "%s/cgroup.controllers", env.abs);
        if (cgtest_read(path, ctl, sizeof ctl) == 0)
                for (char *save = NULL, *tok = strtok_r(ctl, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save))
                        snprintf(line + strlen(line), sizeof line - strlen(line), "%s+%s", line[0] ? " " : "", tok);
        snprintf(path, sizeof path, "%s/cgroup.subtree_control", env.abs);
        if (line[0] && (r = cgtest_write(path, line)) < 0) {
                fprintf(stderr, "cannot enable '%s' in %s: %s\n", line, path, strerror(-r));
                cgtest_teardown(&env);
                return 1;
        }
        r = glean_test_main(argc, argv, suites);
        cgtest_teardown(&env);
        return r;
}

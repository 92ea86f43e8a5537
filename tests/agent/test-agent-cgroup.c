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
 * executor (auto, in the root cgroup). ASSIGN_CPU_AFFINITY: static slots
 * get CPUs of their own (cpuset.cpus, AssignedCpus, the job's
 * Cpus_allowed_list), or, without the cpuset controller, the agent says so
 * once and goes on. In the VM rig (GLEAN_VM=1, every controller, the fuse
 * module): the slots' memory.max and cpu.weight; a job the OOM killer ends
 * is put on hold, and so is one whose child it ends while the main process
 * sleeps on, at once; dynamic slots take their CPUs from their
 * partitionable slot and give them back; a job that cannot be killed (a
 * process stuck on a FUSE server that never answers: tests/agent/
 * fuse-test.h) breaks its slot after KILLING_TIMEOUT, whether the main
 * process or a child of it is stuck (SlotBrokenReason, START FALSE, one
 * log record, claims refused).
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
#include "agent/slots.h"
#include "cgroup-test.h"
#include "fuse-test.h"

static CgTestEnv env;
static bool in_vm;

#include "agent-cgroup-test.h"
#include "../pool/pool-test.h"

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

/* The VM rig, a whole pool: a job the central manager ran on an agent's
 * 64 MB slot outgrows it; the agent's hold reaches the queue: Held with
 * HoldReasonCode 34 (out of memory) and the agent's reason. */
static void test_pool_oom(void) {
        if (!in_vm) {
                printf("\n    SKIPPED inside the suite: the pool's OOM hold runs in the VM rig only (GLEAN_VM=1)\n");
                return;
        }
        Manager m;
        CgPool cp;
        char extra[512], sub[256];
        CU_ASSERT_FATAL(manager_start(&m, NULL));
        snprintf(extra, sizeof extra,
                 "NUM_CPUS = 1\nMEMORY = 64\nCOLLECTOR_HOST = 127.0.0.1:%d\nPOOL_KEY_FILE = %s\n"
                 "UID_DOMAIN = test.pool\nFILESYSTEM_DOMAIN = test.pool\nNEGOTIATOR_RECONNECT_MAX = 1\n",
                 m.port, m.key);
        if (!GLEAN_TEST_CHECK(cgpool_start(&cp, extra), "the agent")) {
                manager_stop(&m);
                return;
        }
        write_sub(&cp.p, "oom.sub", "x=`head -c 200000000 /dev/zero | tr \"\"\\0\"\" a`; echo survived", sub,
                  sizeof sub);
        char *out = gl_out("submit", sub, NULL);
        const char *at = out ? strstr(out, "submitted to cluster ") : NULL;
        char id[32];
        snprintf(id, sizeof id, "%lld.0", at ? strtoll(at + strlen("submitted to cluster "), NULL, 10) : 0LL);
        free(out);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "5", slow(60)));
        CU_ASSERT_TRUE(wait_attr("q", id, "HoldReasonCode", "34", 5));
        out = gl_out("q", id, "-af", "HoldReason", NULL);
        GLEAN_TEST_CHECK(out && strstr(out, "out of memory"), "HoldReason: %s", out ? out : "-");
        free(out);
        out = read_job_file(&cp.p, "out.txt");
        GLEAN_TEST_CHECK(!strstr(out, "survived"), "the job survived: %s", out);
        free(out);
        cgpool_stop(&cp);
        manager_stop(&m);
}

/* The time (seconds since the epoch) of the first log line with both
 * strings (b may be NULL); -1 when there is none. */
static double log_time(const Pool *p, const char *a, const char *b) {
        char *log = read_log(p);
        double t = -1;
        for (char *line = log, *next; line && *line && t < 0; line = next) {
                next = strchr(line, '\n');
                if (next)
                        *next++ = 0;
                if (!strstr(line, a) || (b && !strstr(line, b)))
                        continue;
                struct tm tm = { 0 };
                double sec = 0;
                if (sscanf(line, "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour, &tm.tm_min,
                           &sec) == 6) {
                        tm.tm_year -= 1900;
                        tm.tm_mon -= 1;
                        t = (double) timegm(&tm) + sec;
                }
        }
        free(log);
        return t;
}

/* The CPUs of a "Cpus_allowed_list:\t0-1" line in text; false when there is none. */
static bool allowed_list(const char *text, AgentCpus *ret) {
        const char *l = strstr(text, "Cpus_allowed_list:");
        char buf[256];
        if (!l)
                return false;
        l += strlen("Cpus_allowed_list:");
        snprintf(buf, sizeof buf, "%.*s", (int) strcspn(l, "\n"), l);
        return agent_cpus_parse(buf, ret) == 0;
}

/* An attribute of a slot's ad that is a list of CPUs ("0,1"); false when
 * it is missing or not one. */
static bool slot_cpus(CgPool *cp, const char *slot, AgentCpus *ret, char *text, size_t len) {
        char *v = slot_string(&cp->p, slot, "AssignedCpus");
        snprintf(text, len, "%s", v);
        bool ok = *v && agent_cpus_parse(v, ret) == 0;
        free(v);
        return ok;
}

static bool cpus_disjoint(const AgentCpus *a, const AgentCpus *b) {
        for (unsigned c = 0; c < AGENT_MAX_CPUS; c++)
                if (agent_cpus_has(a, c) && agent_cpus_has(b, c))
                        return false;
        return true;
}

/* ASSIGN_CPU_AFFINITY = True: each static slot gets CPUs of its own, in
 * its cgroup's cpuset.cpus and its ad's AssignedCpus, and a job there runs
 * on them alone (its Cpus_allowed_list). Without the cpuset controller (a
 * hybrid host) the agent says so once and the jobs run as ever. */
static void test_affinity(void) {
        char ctl[128];
        expected_controllers(ctl, sizeof ctl);
        bool cpuset = strstr(ctl, "cpuset") != NULL;
        if (in_vm)
                GLEAN_TEST_CHECK(cpuset, "no cpuset controller in the VM rig: '%s'", ctl);
        AgentCpus mine;
        CU_ASSERT_FATAL(agent_cpus_allowed(&mine) == 0);
        if (agent_cpus_count(&mine) < 2) {
                GLEAN_TEST_CHECK(!in_vm, "the VM rig has %u CPUs", agent_cpus_count(&mine));
                printf("\n    SKIPPED inside the suite: fewer than 2 CPUs here\n");
                return;
        }
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "ASSIGN_CPU_AFFINITY = True\n"));
        char sub[256], text[2][64];
        write_sub(&cp.p, "aff.sub", "grep Cpus_allowed_list /proc/self/status", sub, sizeof sub);
        if (!cpuset) {
                char *log = read_log(&cp.p);
                GLEAN_TEST_CHECK(count(log, "ASSIGN_CPU_AFFINITY = True, but") == 1,
                                 "the missing cpuset controller is not said once:\n%s", log);
                free(log);
                char *v = slot_string(&cp.p, "slot1", "AssignedCpus");
                GLEAN_TEST_CHECK(!*v, "AssignedCpus = '%s' without cpuset", v);
                free(v);
                GleanTestRun r;
                CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", "--slot", "slot2", sub, NULL) >= 0);
                GLEAN_TEST_CHECK(r.status == 0, "run: status %d: %s %s", r.status, r.out, r.err);
                glean_test_run_done(&r);
                printf("\n    no cpuset controller here: said once, jobs run on every CPU\n");
                cgpool_stop(&cp);
                return;
        }
        AgentCpus set[2], file[2];
        for (int i = 0; i < 2; i++) {
                char slot[16], buf[64];
                snprintf(slot, sizeof slot, "slot%d", i + 1);
                GLEAN_TEST_CHECK_FATAL(slot_cpus(&cp, slot, &set[i], text[i], sizeof text[i]), "%s: AssignedCpus '%s'",
                                       slot, text[i]);
                GLEAN_TEST_CHECK(agent_cpus_count(&set[i]) == 1, "%s (Cpus 1): AssignedCpus '%s'", slot, text[i]);
                for (unsigned c = 0; c < AGENT_MAX_CPUS; c++)
                        if (agent_cpus_has(&set[i], c))
                                GLEAN_TEST_CHECK(agent_cpus_has(&mine, c), "%s: CPU %u is not the agent's", slot, c);
                cg_file(&cp, slot, "cpuset.cpus", buf, sizeof buf);
                GLEAN_TEST_CHECK(agent_cpus_parse(buf, &file[i]) == 0 && memcmp(&file[i], &set[i], sizeof set[i]) == 0,
                                 "%s: cpuset.cpus '%s', AssignedCpus '%s'", slot, buf, text[i]);
                /* A job of the slot runs on its CPUs alone. */
                GleanTestRun r;
                CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", "--slot", slot, sub, NULL) >= 0);
                GLEAN_TEST_CHECK(r.status == 0, "run on %s: status %d: %s %s", slot, r.status, r.out, r.err);
                glean_test_run_done(&r);
                char *out = read_job_file(&cp.p, "out.txt");
                AgentCpus job;
                GLEAN_TEST_CHECK(allowed_list(out, &job) && memcmp(&job, &set[i], sizeof job) == 0,
                                 "the job of %s: '%s', its slot has '%s'", slot, out, text[i]);
                printf("\n    %s: AssignedCpus \"%s\", cpuset.cpus %s, the job's %s", slot, text[i], buf,
                       strstr(out, "Cpus_allowed_list") ? strstr(out, "Cpus_allowed_list") : "?");
                free(out);
        }
        GLEAN_TEST_CHECK(cpus_disjoint(&set[0], &set[1]), "slot1 '%s' and slot2 '%s' share CPUs", text[0], text[1]);
        GLEAN_TEST_CHECK(log_line(&cp.p, "ASSIGN_CPU_AFFINITY: each slot gets CPUs of its own", NULL),
                         "the log does not say the CPUs are assigned");
        cgpool_stop(&cp);
}

/* A claim on slot1 (partitionable) for a job of the Pool's jobs
 * directory: the d-slot's name into slot (NULL: refused). */
static char *claim_dslot(int fd, const char *id, const ClassAd *job) {
        ClassAd *reply = claim(fd, "slot1", id, job);
        char why[256];
        char *slot = reply_ok(reply, NULL) ? ad_string(reply, "Slot") : NULL;
        if (!slot) {
                ok_why(reply, why, sizeof why);
                GLEAN_TEST_CHECK(false, "claim %s: %s", id, why);
        } else
                classad_free(reply);
        return slot;
}

/* Waits up to seconds for the slot's AssignedCpus to be want. */
static bool wait_assigned(CgPool *cp, const char *slot, const char *want, int seconds) {
        char *v = NULL;
        for (int i = 0; i < seconds * 20; i++) {
                free(v);
                v = slot_string(&cp->p, slot, "AssignedCpus");
                if (strcmp(v, want) == 0)
                        break;
                usleep(50000);
        }
        bool ok = strcmp(v, want) == 0;
        GLEAN_TEST_CHECK(ok, "%s: AssignedCpus '%s', want '%s'", slot, v, want);
        free(v);
        return ok;
}

/* The VM rig: a partitionable slot of the agent's 2 CPUs; each dynamic
 * slot takes its CPU from it and gives it back when it ends. */
static void test_affinity_dynamic(void) {
        if (!in_vm) {
                printf("\n    SKIPPED inside the suite: the cpuset controller is in the VM rig only (GLEAN_VM=1)\n");
                return;
        }
        CgPool cp;
        CU_ASSERT_FATAL(cgpool_start(&cp, "NUM_SLOTS = 1\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                                          "SLOT_TYPE_1_PARTITIONABLE = True\nASSIGN_CPU_AFFINITY = True\n"));
        char buf[64];
        wait_assigned(&cp, "slot1", "0,1", 1);
        cg_file(&cp, "slot1", "cpuset.cpus", buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "0-1") == 0, "slot1: cpuset.cpus '%s'", buf);
        int fd = connect_agent(&cp.p);
        ClassAd *job = job_ad(&cp.p, "/bin/sh", "-c 'grep Cpus_allowed_list /proc/self/status'", NULL);
        char *a = claim_dslot(fd, "cgroup-affinity-claim-a", job);
        CU_ASSERT_FATAL(a != NULL);
        GLEAN_TEST_CHECK(strcmp(a, "slot1_1") == 0, "the first d-slot is %s", a);
        wait_assigned(&cp, "slot1_1", "0", 1);
        wait_assigned(&cp, "slot1", "1", 1);
        cg_file(&cp, "slot1/slot1_1", "cpuset.cpus", buf, sizeof buf);
        GLEAN_TEST_CHECK(strcmp(buf, "0") == 0, "slot1_1: cpuset.cpus '%s'", buf);
        char *b = claim_dslot(fd, "cgroup-affinity-claim-b", job);
        CU_ASSERT_FATAL(b != NULL);
        wait_assigned(&cp, b, "1", 1);
        wait_assigned(&cp, "slot1", "", 1);
        /* A job of the second d-slot runs on CPU 1 alone. */
        char why[256];
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, "cgroup-affinity-claim-b", job);
        GLEAN_TEST_CHECK(ok_why(r, why, sizeof why), "activate b: %s", why);
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, slow(10), NULL, 0, 0);
        GLEAN_TEST_CHECK(ex != NULL, "no JobExit of the job in %s", b);
        classad_free(ex);
        char *out = read_job_file(&cp.p, "out.txt");
        AgentCpus got, want = { 0 };
        agent_cpus_add(&want, 1);
        GLEAN_TEST_CHECK(allowed_list(out, &got) && memcmp(&got, &want, sizeof got) == 0, "the job of %s: '%s'", b,
                         out);
        free(out);
        /* The first d-slot goes: its CPU is the p-slot's again, and the next d-slot's. */
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, "cgroup-affinity-claim-a", NULL), why, sizeof why),
                         "release a: %s", why);
        wait_assigned(&cp, "slot1", "0", slow(5));
        char *c = claim_dslot(fd, "cgroup-affinity-claim-c", job);
        if (c)
                wait_assigned(&cp, c, "0", 1);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, "cgroup-affinity-claim-b", NULL), why, sizeof why),
                         "release b: %s", why);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, "cgroup-affinity-claim-c", NULL), why, sizeof why),
                         "release c: %s", why);
        wait_assigned(&cp, "slot1", "0,1", slow(5));
        free(a);
        free(b);
        free(c);
        classad_free(job);
        close(fd);
        cgpool_stop(&cp);
}

/* The VM rig: a child of the job outgrows the slot (64 MB) while the job's
 * main process sleeps 300 s: the job is held seconds after the OOM kill. */
static void test_oom_child(void) {
        if (!in_vm) {
                printf("\n    SKIPPED inside the suite: the OOM test runs in the VM rig only (GLEAN_VM=1)\n");
                return;
        }
        CgPool cp;
        /* memory.high = memory.max: straight to the OOM killer, no throttling first. */
        CU_ASSERT_FATAL(cgpool_start(&cp, "NUM_CPUS = 1\nMEMORY = 64\nCGROUP_MEMORY_HIGH_PERCENT = 100\n"));
        char sub[256];
        write_sub(&cp.p, "oomchild.sub",
                  "(x=`head -c 200000000 /dev/zero | tr \"\"\\0\"\" a`; echo child survived) & sleep 300; "
                  "echo survived",
                  sub, sizeof sub);
        time_t t0 = time(NULL);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&cp.p, &r, "run", sub, NULL) >= 0);
        time_t took = time(NULL) - t0;
        GLEAN_TEST_CHECK(strstr(r.out, "killed by signal 9") && strstr(r.out, "is held: out of memory"),
                         "run: status %d:\n%s%s", r.status, r.out, r.err);
        GLEAN_TEST_CHECK(took < 200, "the job ran %lld s: its sleep 300 was waited for", (long long) took);
        printf("\n    %s", r.out);
        glean_test_run_done(&r);
        char *out = read_job_file(&cp.p, "out.txt");
        GLEAN_TEST_CHECK(!strstr(out, "survived"), "the job went on: %s", out);
        free(out);
        double oom = log_time(&cp.p, "the OOM killer ended a process", "killing the rest of the job");
        double end = log_time(&cp.p, "slot1: job killed by signal 9", "out of memory");
        GLEAN_TEST_CHECK(oom > 0 && end > 0 && end - oom >= 0 && end - oom < slow(3),
                         "the OOM kill at %.3f, the job's end at %.3f", oom, end);
        printf("    held %.2f s after the OOM kill\n", end - oom);
        char path[320];
        snprintf(path, sizeof path, "%s/slots/slot1/job", cp.abs);
        GLEAN_TEST_CHECK(wait_gone(path, slow(2)), "%s outlives the OOM-killed job", path);
        cgpool_stop(&cp);
}

/* What a broken slot1 looks like: SlotBrokenReason saying want, START and
 * Requirements FALSE, Owner/Idle, one log record, claims refused. */
static void check_broken(CgPool *cp, int fd, const ClassAd *job, const char *want) {
        wait_state(&cp->p, "slot1", "Owner/Idle", slow(5));
        ClassAd *ad = slot_ad(&cp->p, "slot1");
        char *reason = ad_string(ad, "SlotBrokenReason");
        bool start = true, req = true;
        GLEAN_TEST_CHECK(strstr(reason, want), "SlotBrokenReason '%s', want '%s'", reason, want);
        GLEAN_TEST_CHECK(ad && classad_eval_bool(ad, "START", CA_MODE_OLD, &start) == 0 && !start, "START is not FALSE");
        GLEAN_TEST_CHECK(ad && classad_eval_bool(ad, "Requirements", CA_MODE_OLD, &req) == 0 && !req,
                         "Requirements is not FALSE");
        printf("\n    SlotBrokenReason = \"%s\"\n", reason);
        free(reason);
        classad_free(ad);
        char *log = read_log(&cp->p);
        GLEAN_TEST_CHECK(count(log, "slot1 is broken: ") == 1, "not one log record of the broken slot:\n%s", log);
        free(log);
        GLEAN_TEST_CHECK(log_line(&cp->p, "slot1 is broken: ", want, "GLEAN_SLOT=slot1", "GLEAN_REASON=", NULL),
                         "the log record lacks the slot or the reason");
        char why[512];
        GLEAN_TEST_CHECK(!ok_why(claim(fd, "slot1", "cgroup-broken-claim-again", job), why, sizeof why) &&
                                 strstr(why, "slot1 is broken"),
                         "a claim of the broken slot: '%s'", why);
        /* The other slot is not concerned. */
        GLEAN_TEST_CHECK(ok_why(claim(fd, "slot2", "cgroup-broken-claim-slot2", job), why, sizeof why),
                         "a claim of slot2: %s", why);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, "cgroup-broken-claim-slot2", NULL), why, sizeof why),
                         "release slot2: %s", why);
}

/* The start of the stuck-process tests (the VM rig only): the FUSE file
 * system whose reads never end, and an agent with KILLING_TIMEOUT = 2. */
static bool stuck_begin(FuseTest *f, CgPool *cp) {
        if (!in_vm) {
                printf("\n    SKIPPED inside the suite: processes that cannot be killed are made in the VM rig only "
                       "(GLEAN_VM=1)\n");
                return false;
        }
        char why[256] = "";
        int k = fusetest_mount(f, why, sizeof why);
        GLEAN_TEST_CHECK(k == 0, "the FUSE file system: %s", why);
        if (k < 0 || !cgpool_start(cp, "KILLING_TIMEOUT = 2\n")) {
                fusetest_release(f);
                CU_FAIL("no agent");
                return false;
        }
        return true;
}

#define STUCK "would not die within KILLING_TIMEOUT (2 s) of being killed"

/* The VM rig: the job's main process is stuck in the kernel (a FUSE read
 * never answered). A fast vacate kills it; KILLING_TIMEOUT (2 s) later it
 * is still there: the slot is broken, the claimant hears of the job's end.
 * Once the process can die, its cgroup goes; the slot stays broken. */
static void test_broken_stuck_job(void) {
        FuseTest f;
        CgPool cp;
        if (!stuck_begin(&f, &cp))
                return;
        int fd = connect_agent(&cp.p);
        ClassAd *job = job_ad(&cp.p, "/bin/cat", f.file, NULL);
        pid_t pid = claim_and_run(fd, "slot1", "cgroup-broken-claim-01", job);
        int op = pid > 0 ? fusetest_hold_next(&f, slow(10) * 1000) : -1;
        GLEAN_TEST_CHECK(op > 0, "no request from the job (pid %d): %d", (int) pid, op);
        if (op > 0) {
                GleanTestRun r;
                CU_ASSERT(glean_cli(&cp.p, &r, "vacate", "--fast", "slot1", NULL) >= 0 && r.status == 0);
                glean_test_run_done(&r);
                ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, slow(10), NULL, 0, 0);
                char *reason = ad_string(ex, "Reason");
                int64_t sig = 0;
                bool by_signal = false;
                GLEAN_TEST_CHECK(ex && classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &by_signal) == 0 &&
                                         by_signal && classad_eval_int(ex, "ExitSignal", CA_MODE_OLD, &sig) == 0 &&
                                         sig == SIGKILL && strstr(reason, STUCK),
                                 "the claimant's JobExit: signal %lld, Reason '%s'", (long long) sig, reason);
                free(reason);
                classad_free(ex);
                GLEAN_TEST_CHECK(proc_state(pid) == 'D', "the job's process %d is in state '%c', not D", (int) pid,
                                 proc_state(pid) ? proc_state(pid) : '-');
                check_broken(&cp, fd, job, "the job's processes (cgroup slot1/job) " STUCK);
                /* The FUSE server goes, later than the 5 s the agent waits for a
                 * cgroup to empty once its main process exited (a reaper's
                 * job: the main process can go first): the process dies, its
                 * cgroup goes all the same. */
                sleep((unsigned) slow(2));
                fusetest_release(&f);
                char st = wait_ended(pid, slow(5));
                GLEAN_TEST_CHECK(!st, "the job's process %d is still there (state %c)", (int) pid, st);
                char path[320];
                snprintf(path, sizeof path, "%s/slots/slot1/job", cp.abs);
                GLEAN_TEST_CHECK(wait_gone(path, slow(5)), "%s outlives its process", path);
                char *still = slot_string(&cp.p, "slot1", "SlotBrokenReason");
                GLEAN_TEST_CHECK(*still, "slot1 is no longer broken");
                free(still);
        }
        fusetest_release(&f);
        classad_free(job);
        close(fd);
        cgpool_stop(&cp);
}

/* The VM rig: the job's main process exits (status 3), a child of it is
 * stuck in the kernel: the cgroup will not empty within KILLING_TIMEOUT,
 * the exit is reported with the reason, the slot is broken. */
static void test_broken_stuck_child(void) {
        FuseTest f;
        CgPool cp;
        if (!stuck_begin(&f, &cp))
                return;
        int fd = connect_agent(&cp.p);
        char args[512], go[256];
        snprintf(go, sizeof go, "%s/stuck-go", cp.p.jobs);
        snprintf(args, sizeof args,
                 "-c 'cat %s >/dev/null 2>&1 & echo $! >cat.pid; while [ ! -e %s ]; do sleep 0.1; done; exit 3'",
                 f.file, go);
        ClassAd *job = job_ad(&cp.p, "/bin/sh", args, NULL);
        pid_t pid = claim_and_run(fd, "slot1", "cgroup-broken-claim-02", job);
        int op = pid > 0 ? fusetest_hold_next(&f, slow(10) * 1000) : -1;
        GLEAN_TEST_CHECK(op > 0, "no request from the job's child: %d", op);
        if (op > 0) {
                write_file(go, "");
                ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, slow(15), NULL, 0, 0);
                char *reason = ad_string(ex, "Reason");
                int64_t code = -1;
                GLEAN_TEST_CHECK(ex && classad_eval_int(ex, "ExitCode", CA_MODE_OLD, &code) == 0 && code == 3 &&
                                         strstr(reason, "would not empty within 2 s"),
                                 "the claimant's JobExit: ExitCode %lld, Reason '%s'", (long long) code, reason);
                free(reason);
                classad_free(ex);
                char *text = read_job_file(&cp.p, "cat.pid");
                pid_t child = (pid_t) atoi(text);
                free(text);
                GLEAN_TEST_CHECK(child > 0 && proc_state(child) == 'D', "the child %d is in state '%c', not D",
                                 (int) child, child > 0 && proc_state(child) ? proc_state(child) : '-');
                check_broken(&cp, fd, job, "processes of the job (cgroup slot1/job) " STUCK);
                fusetest_release(&f);
                char st = child > 0 ? wait_ended(child, slow(5)) : '?';
                GLEAN_TEST_CHECK(!st, "the child %d is still there (state %c)", (int) child, st);
        }
        fusetest_release(&f);
        classad_free(job);
        close(fd);
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
        { "out of memory in a pool: held in the central manager's queue (VM)", test_pool_oom },
        { "out of memory in a child: held at once (VM)", test_oom_child },
        { "ASSIGN_CPU_AFFINITY: static slots", test_affinity },
        { "ASSIGN_CPU_AFFINITY: dynamic slots (VM)", test_affinity_dynamic },
        { "a job that will not die breaks its slot (VM)", test_broken_stuck_job },
        { "a cgroup that will not empty breaks its slot (VM)", test_broken_stuck_child },
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

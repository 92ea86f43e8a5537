/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-daemon.c — the real glean-agent on a temporary configuration,
 * driven through `glean agent` and through the protocol itself: jobs run
 * and report their exit, a graceful vacate (which retires) and a fast one,
 * a claim lease that expires, refusals that change nothing, draining, a
 * partitionable slot carved and given back, and what a user who is not an
 * administrator may not do (preempting by priority among it).
 *
 * The binaries: $GLEAN and $GLEAN_AGENT (set by make check to the flavour
 * being tested), else build/bin/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-test.h"

/* ---- tests ---- */

static void test_run_job(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        char sub[256], text[512];
        snprintf(sub, sizeof sub, "%s/job.sub", p.jobs);
        snprintf(text, sizeof text,
                 "executable = /bin/sh\narguments = \"-c 'echo hello; id -u; exit 3'\"\noutput = out.txt\n"
                 "error = err.txt\ninitialdir = %s\nqueue\n",
                 p.jobs);
        write_file(sub, text);
        GleanTestRun r;
        mode_t old_mask = umask(077); /* glean agent run records it: the output files honour it */
        int k = glean_cli(&p, &r, "run", sub, NULL, NULL);
        umask(old_mask);
        CU_ASSERT_FATAL(k >= 0);
        GLEAN_TEST_CHECK(r.status == 3, "glean agent run: status %d, stderr: %s", r.status, r.err);
        GLEAN_TEST_CHECK(strstr(r.out, "job 1.0 exited with status 3"), "stdout: %s", r.out);
        for (int i = 0; i < 2; i++) {
                char file[256];
                struct stat st;
                snprintf(file, sizeof file, "%s/%s", p.jobs, i ? "err.txt" : "out.txt");
                GLEAN_TEST_CHECK(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600, "%s: mode %03o under umask 077",
                                 file, (unsigned) (st.st_mode & 0777));
        }
        GLEAN_TEST_CHECK(strstr(r.err, "transition 11"), "stderr: %s", r.err);
        glean_test_run_done(&r);
        char path[256], *out = NULL;
        snprintf(path, sizeof path, "%s/out.txt", p.jobs);
        CU_ASSERT_FATAL(glean_test_read_file(path, &out, NULL) >= 0);
        CU_ASSERT(strncmp(out, "hello\n", 6) == 0);
        if (getuid() == 0) {
                struct passwd *nobody = getpwnam("nobody");
                char want[32];
                snprintf(want, sizeof want, "\n%d\n", nobody ? (int) nobody->pw_uid : 65534);
                GLEAN_TEST_CHECK(strstr(out, want), "a job of root runs as nobody: %s", out);
        }
        free(out);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        /* The log has one record per transition, with its fields. */
        char *log = NULL;
        glean_test_read_file(p.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "GLEAN_SLOT=slot1 GLEAN_STATE=Claimed GLEAN_ACTIVITY=Busy"), "log: %s",
                         log ? log : "");
        GLEAN_TEST_CHECK(log && strstr(log, "GLEAN_TRANSITION=12"), "log lacks transition 12");
        free(log);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_status(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "STARTD_ATTRS = Colour\nColour = \"blue\"\n"));
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&p, &r, "status", NULL, NULL, NULL) >= 0);
        CU_ASSERT(r.status == 0);
        GLEAN_TEST_CHECK(strstr(r.out, "slot1@") && strstr(r.out, "slot2@") && strstr(r.out, "Unclaimed"),
                         "status: %s", r.out);
        glean_test_run_done(&r);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "status", "--json", NULL, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "\"Name\": \"slot1@") && strstr(r.out, "\"Cpus\": 1") &&
                                 strstr(r.out, "\"Colour\": \"blue\""),
                         "json: %s", r.out);
        glean_test_run_done(&r);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "status", "-l", "slot2", NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "SlotID = 2") && strstr(r.out, "OpSys = \"LINUX\"") &&
                                 strstr(r.out, "Requirements = START") && !strstr(r.out, "SlotID = 1"),
                         "-l slot2: %s", r.out);
        glean_test_run_done(&r);
        /* The attributes a policy needs, in every slot ad. */
        static const char *const attrs[] = { "Name = \"slot2@", "Machine = ", "State = \"Unclaimed\"",
                                             "Activity = \"Idle\"", "EnteredCurrentState = ",
                                             "EnteredCurrentActivity = ", "Cpus = 1", "TotalCpus = 2", "Memory = ",
                                             "Disk = ", "TotalMemory = ", "KeyboardIdle = ", "LoadAvg = ",
                                             "CondorLoadAvg = ", "TotalLoadAvg = ", "TotalCondorLoadAvg = ",
                                             "CpuBusyTime = ", "CpuIsBusy = ", "ClockMin = ", "ClockDay = ",
                                             "CurrentTime = time()", "START = true", "Rank = ", "Arch = ",
                                             "TotalMachineDrainingBadput = ", "TotalMachineDrainingUnclaimedTime = " };
        CU_ASSERT_FATAL(glean_cli(&p, &r, "status", "-l", "slot2", NULL) >= 0);
        for (size_t i = 0; i < sizeof attrs / sizeof *attrs; i++)
                GLEAN_TEST_CHECK(strcasestr(r.out, attrs[i]), "slot2's ad lacks '%s'", attrs[i]);
        glean_test_run_done(&r);
        /* Bad command lines and an agent that is not there: clear errors. */
        CU_ASSERT_FATAL(glean_cli(&p, &r, "bogus", NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "unknown command 'bogus'"), "agent bogus: %d %s", r.status,
                         r.err);
        glean_test_run_done(&r);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "drain", "--how", "slowly", NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "graceful, quick or fast"), "drain --how slowly: %d %s",
                         r.status, r.err);
        glean_test_run_done(&r);
        {
                const char *g = bin("GLEAN", "build/bin/glean");
                char nosock[200];
                snprintf(nosock, sizeof nosock, "%s/no-agent.sock", p.dir);
                char *argv[] = { (char *) g, "agent", "--socket", nosock, "status", NULL };
                CU_ASSERT_FATAL(glean_test_run(argv, &r) >= 0);
                GLEAN_TEST_CHECK(r.status == 1 && strstr(r.err, "cannot talk to the agent"), "no agent: %d %s",
                                 r.status, r.err);
                glean_test_run_done(&r);
        }
        CU_ASSERT_FATAL(glean_cli(&p, &r, "status", "slot9", NULL, NULL) >= 0);
        CU_ASSERT(r.status == 1);
        glean_test_run_done(&r);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_vacate(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        char sub[256], text[512], outp[256];
        snprintf(sub, sizeof sub, "%s/trap.sub", p.jobs);
        snprintf(text, sizeof text,
                 "executable = /bin/sh\narguments = \"-c 'trap \"\"echo got TERM; exit 7\"\" TERM; "
                 "while :; do sleep 0.1; done'\"\noutput = out.txt\ninitialdir = %s\nqueue\n",
                 p.jobs);
        write_file(sub, text);
        snprintf(outp, sizeof outp, "%s/run.out", p.dir);
        pid_t run = fork();
        if (run == 0) {
                int fd = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
                dup2(fd, 1);
                dup2(fd, 2);
                const char *g = bin("GLEAN", "build/bin/glean");
                execl(g, g, "agent", "--socket", p.sock, "run", sub, (char *) NULL);
                _exit(127);
        }
        bool busy = wait_state(&p, "slot1", "Claimed/Busy", 10);
        /* While it runs, the slot's ad says what the job uses. */
        ClassAd *sad = slot_ad(&p, "slot1");
        int64_t rss = -1, mem = -1, disk = -1;
        double cpus = -1;
        if (sad) {
                classad_eval_int(sad, "ResidentSetSize", CA_MODE_OLD, &rss);
                classad_eval_int(sad, "MemoryUsage", CA_MODE_OLD, &mem);
                classad_eval_int(sad, "DiskUsage", CA_MODE_OLD, &disk);
                classad_eval_real(sad, "CpusUsage", CA_MODE_OLD, &cpus);
        }
        GLEAN_TEST_CHECK(rss > 0 && mem >= 1 && disk >= 0 && cpus >= 0,
                         "usage in the slot ad: ResidentSetSize %lld, MemoryUsage %lld, DiskUsage %lld, CpusUsage %g",
                         (long long) rss, (long long) mem, (long long) disk, cpus);
        classad_free(sad);
        usleep(300000); /* the shell sets its trap */
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&p, &r, "vacate", NULL, NULL, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0, "vacate: %s", r.err);
        glean_test_run_done(&r);
        int status = -1;
        for (int i = 0; i < 100 && waitpid(run, &status, WNOHANG) != run; i++)
                usleep(100000), status = -1;
        if (status == -1) {
                kill(run, SIGKILL);
                waitpid(run, &status, 0);
        }
        char *out = NULL;
        glean_test_read_file(outp, &out, NULL);
        GLEAN_TEST_CHECK(busy && WIFEXITED(status) && WEXITSTATUS(status) == 7,
                         "the vacated job exits 7 from its TERM trap: status %d, run: %s", status, out ? out : "");
        GLEAN_TEST_CHECK(out && strstr(out, "exited with status 7") && strstr(out, "(vacated)"), "run: %s",
                         out ? out : "");
        free(out);
        char path[256];
        snprintf(path, sizeof path, "%s/out.txt", p.jobs);
        CU_ASSERT(glean_test_read_file(path, &out, NULL) >= 0 && strstr(out, "got TERM"));
        free(out);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* The JobExit of the claim on fd within seconds; its ExitCode (or 128 +
 * ExitSignal) in *ret_status, the seconds since start in *ret_after. */
static ClassAd *job_exit_of(int fd, int seconds, struct timespec start, int *ret_status, double *ret_after) {
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, seconds, NULL, 0, 0);
        struct timespec now;
        clock_gettime(CLOCK_MONOTONIC, &now);
        *ret_after = (double) (now.tv_sec - start.tv_sec) + (double) (now.tv_nsec - start.tv_nsec) / 1e9;
        bool sig = false;
        int64_t code = -1, signo = 0;
        if (ex) {
                classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &sig);
                classad_eval_int(ex, "ExitCode", CA_MODE_OLD, &code);
                classad_eval_int(ex, "ExitSignal", CA_MODE_OLD, &signo);
        }
        *ret_status = sig ? 128 + (int) signo : (int) code;
        return ex;
}

/* HTCondor's VACATE_CLAIM retires the claim: a graceful vacate leaves the
 * job MaxJobRetirementTime (4 s) of run time, and soft-kills it
 * MachineMaxVacateTime (1 s) before its end; --fast hard-kills at once,
 * whatever the retirement. The job traps TERM and exits 7. */
static void test_vacate_retires(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "MAXJOBRETIREMENTTIME = 4\nMachineMaxVacateTime = 1\n"));
        char script[256], cmd[300], why[512];
        snprintf(script, sizeof script, "%s/trap.sh", p.jobs);
        write_file(script, "#!/bin/sh\ntrap 'exit 7' TERM\nwhile :; do sleep 0.1; done\n");
        chmod(script, 0755);
        snprintf(cmd, sizeof cmd, "%s", script);
        ClassAd *job = job_ad(&p, cmd, "", NULL);
        int fd = connect_agent(&p);
        GleanTestRun r;

        struct timespec start;
        clock_gettime(CLOCK_MONOTONIC, &start);
        pid_t pid = claim_and_run(fd, "slot1", "vacate-retires-000001", job);
        CU_ASSERT_FATAL(pid > 0);
        wait_state(&p, "slot1", "Claimed/Busy", 5);
        usleep(300000); /* the shell sets its trap */
        CU_ASSERT_FATAL(glean_cli(&p, &r, "vacate", NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0, "vacate: %s", r.err);
        glean_test_run_done(&r);
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Retiring") == 0 && proc_state(pid) != 0,
                         "after a graceful vacate: %s, the job %s", st, proc_state(pid) ? "runs" : "is gone");
        int status;
        double after;
        ClassAd *ex = job_exit_of(fd, 10, start, &status, &after);
        char *reason = ad_string(ex, "Reason");
        /* The soft kill comes at 3 s of run time (whole seconds: 2 s at least). */
        GLEAN_TEST_CHECK(ex && status == 7 && after >= 2.0 && after < 8.0,
                         "the vacated job: status %d after %.1f s (want 7, its TERM trap, after 2 to 8 s)", status,
                         after);
        GLEAN_TEST_CHECK(strstr(reason, "vacate"), "JobExit Reason '%s'", reason);
        free(reason);
        classad_free(ex);
        GLEAN_TEST_CHECK(log_transition(&p, "slot1", "Claimed/Busy", "Claimed/Retiring", 13) &&
                                 log_transition(&p, "slot1", "Claimed/Retiring", "Preempting/Vacating", 18),
                         "no transitions 13 and 18 in the log");
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);

        /* --fast: SIGKILL at once, the retirement and the trap notwithstanding. */
        pid = claim_and_run(fd, "slot1", "vacate-fast-000000001", job);
        CU_ASSERT_FATAL(pid > 0);
        wait_state(&p, "slot1", "Claimed/Busy", 5);
        usleep(300000);
        clock_gettime(CLOCK_MONOTONIC, &start);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "vacate", "--fast", NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0, "vacate --fast: %s", r.err);
        glean_test_run_done(&r);
        ex = job_exit_of(fd, 10, start, &status, &after);
        GLEAN_TEST_CHECK(ex && status == 128 + SIGKILL && after < 2.0,
                         "the job of a fast vacate: status %d after %.1f s (want killed by SIGKILL at once)", status,
                         after);
        classad_free(ex);
        GLEAN_TEST_CHECK(log_transition(&p, "slot1", "Claimed/Busy", "Preempting/Killing", 0) ||
                                 log_line(&p, "slot1: Claimed/Busy -> Preempting/Killing", "fast vacate", NULL),
                         "no Busy -> Preempting/Killing in the log");
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(!ok_why(claim_cmd(fd, GLEAN_CMD_KEEP_ALIVE, "vacate-fast-000000001", NULL), why, sizeof why),
                         "the claim outlived a fast vacate");
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_lease_expiry(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/sleep", "60", "JobLeaseDuration = 2;");
        ClassAd *r = claim(fd, "slot1", "lease-test-claim-0001", job);
        char *why = NULL;
        GLEAN_TEST_CHECK(reply_ok(r, &why), "claim: %s", why ? why : "");
        int64_t lease = 0;
        classad_eval_int(r, "LeaseDuration", CA_MODE_OLD, &lease);
        CU_ASSERT(lease == 2);
        free(why);
        classad_free(r);
        r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, "lease-test-claim-0001", job);
        GLEAN_TEST_CHECK(reply_ok(r, &why), "activate: %s", why ? why : "");
        free(why);
        classad_free(r);
        /* No keep-alive: the lease ends, the job is killed and we hear of it. */
        ClassAd *ex = NULL;
        time_t start = time(NULL);
        while (!ex && time(NULL) - start < 20) {
                ClassAd *ad = NULL;
                GleanCommand cmd;
                char w[256];
                if (glean_msg_recv(fd, 20000, &ad, &cmd, w, sizeof w) < 0)
                        break;
                if (cmd == GLEAN_CMD_JOB_EXIT)
                        ex = ad;
                else
                        classad_free(ad);
        }
        CU_ASSERT_FATAL(ex != NULL);
        char *reason = NULL;
        bool sig = false;
        int64_t signo = 0;
        classad_eval_string(ex, "Reason", CA_MODE_OLD, &reason);
        classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &sig);
        classad_eval_int(ex, "ExitSignal", CA_MODE_OLD, &signo);
        GLEAN_TEST_CHECK(reason && strstr(reason, "lease"), "JobExit reason: %s", reason ? reason : "(none)");
        CU_ASSERT(sig && signo == SIGKILL);
        GLEAN_TEST_CHECK(time(NULL) - start <= 8, "evicted %ld s after the claim", (long) (time(NULL) - start));
        free(reason);
        classad_free(ex);
        classad_free(job);
        close(fd);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_refusals(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        int fd = connect_agent(&p);
        /* A frame that is no ClassAd: refused, the connection and the agent go on. */
        const char junk[] = "[ Command = ";
        CU_ASSERT(glean_frame_write(fd, junk, sizeof junk - 1, 5000) >= 0);
        ClassAd *ad = NULL;
        GleanCommand cmd;
        char w[256];
        CU_ASSERT_FATAL(glean_msg_recv(fd, 5000, &ad, &cmd, w, sizeof w) >= 0);
        char *why = NULL;
        CU_ASSERT(cmd == GLEAN_CMD_REPLY && !reply_ok(ad, &why) && why && *why);
        free(why);
        classad_free(ad);
        /* Keep-alive of an unknown claim. */
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_KEEP_ALIVE, "no-such-claim-000001", NULL);
        CU_ASSERT(r && !reply_ok(r, &why) && why && strstr(why, "no such claim"));
        free(why);
        classad_free(r);
        /* A claim on a claimed slot with no better rank. */
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        r = claim(fd, "slot1", "first-claim-0000001", job);
        CU_ASSERT(reply_ok(r, NULL));
        classad_free(r);
        r = claim(fd, "slot1", "second-claim-000001", job);
        CU_ASSERT(r && !reply_ok(r, &why) && why && strstr(why, "claimed"));
        free(why);
        classad_free(r);
        /* Short claim ids are refused; a job that does not fit the slot too. */
        r = claim(fd, "slot2", "short", job);
        CU_ASSERT(r && !reply_ok(r, NULL));
        classad_free(r);
        ClassAd *big = job_ad(&p, "/bin/true", "", "Requirements = TARGET.Memory > 100000000;");
        r = claim(fd, "slot2", "too-big-claim-00001", big);
        CU_ASSERT(r && !reply_ok(r, &why) && why && strstr(why, "match"));
        free(why);
        classad_free(r);
        classad_free(big);
        /* Activation of a job that cannot run: refused, the claim stays idle. */
        ClassAd *bad = job_ad(&p, "/nonexistent/program", "", NULL);
        r = claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, "first-claim-0000001", bad);
        CU_ASSERT(r && !reply_ok(r, &why) && why);
        free(why);
        classad_free(r);
        classad_free(bad);
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "slot1 after refusals: %s", st);
        slot_state(&p, "slot2", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Unclaimed/Idle") == 0, "slot2 after refusals: %s", st);
        r = claim_cmd(fd, GLEAN_CMD_RELEASE, "first-claim-0000001", NULL);
        CU_ASSERT(reply_ok(r, NULL));
        classad_free(r);
        classad_free(job);
        close(fd);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_drain(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&p, &r, "drain", NULL, NULL, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0, "drain: %s", r.err);
        glean_test_run_done(&r);
        wait_state(&p, "slot1", "Drained/Idle", 5);
        wait_state(&p, "slot2", "Drained/Idle", 5);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "drain", NULL, NULL, NULL) >= 0);
        CU_ASSERT(r.status == 1 && strstr(r.err, "already draining"));
        glean_test_run_done(&r);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "drain", "--cancel", NULL, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0, "drain --cancel: %s", r.err);
        glean_test_run_done(&r);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_partitionable(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "NUM_SLOTS = 1\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                                       "SLOT_TYPE_1_PARTITIONABLE = True\n"));
        int64_t cpus = slot_int(&p, "slot1", "Cpus"), mem = slot_int(&p, "slot1", "Memory");
        CU_ASSERT(cpus == 2);
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        ClassAd *r = claim(fd, "slot1", "pslot-claim-0000001", job);
        char *why = NULL, *slot = NULL;
        GLEAN_TEST_CHECK(reply_ok(r, &why), "claim: %s", why ? why : "");
        classad_eval_string(r, "Slot", CA_MODE_OLD, &slot);
        GLEAN_TEST_CHECK(slot && strcmp(slot, "slot1_1") == 0, "claimed %s", slot ? slot : "(none)");
        free(why);
        free(slot);
        classad_free(r);
        CU_ASSERT(slot_int(&p, "slot1", "Cpus") == cpus - 1);
        CU_ASSERT(slot_int(&p, "slot1_1", "Cpus") == 1);
        /* 64 MB asked, rounded up by MODIFY_REQUEST_EXPR_REQUESTMEMORY; what the d-slot has the p-slot lost. */
        int64_t dmem = slot_int(&p, "slot1_1", "Memory");
        GLEAN_TEST_CHECK(dmem >= 64 && slot_int(&p, "slot1", "Memory") == mem - dmem, "d-slot memory %lld",
                         (long long) dmem);
        r = claim_cmd(fd, GLEAN_CMD_RELEASE, "pslot-claim-0000001", NULL);
        CU_ASSERT(reply_ok(r, NULL));
        classad_free(r);
        char st[64] = "x";
        for (int i = 0; i < 50 && st[0]; i++) {
                slot_state(&p, "slot1_1", st, sizeof st);
                usleep(100000);
        }
        GLEAN_TEST_CHECK(st[0] == 0, "slot1_1 is gone after the release (%s)", st);
        CU_ASSERT(slot_int(&p, "slot1", "Cpus") == cpus);
        CU_ASSERT(slot_int(&p, "slot1", "Memory") == mem);
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_not_admin(void) {
        if (getuid() != 0) {
                printf("(not root: the administrator checks need another user; skipped)\n");
                return;
        }
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        struct passwd *nobody = getpwnam("nobody");
        CU_ASSERT_FATAL(nobody != NULL);
        pid_t child = fork();
        if (child == 0) {
                if (setgid(nobody->pw_gid) < 0 || setuid(nobody->pw_uid) < 0)
                        _exit(10);
                int fd = -1;
                char why[256];
                if (glean_client_connect(p.sock, "glean", 5000, &fd, why, sizeof why) < 0)
                        _exit(11);
                ClassAd *m = NULL;
                glean_msg_new(GLEAN_CMD_VACATE, &m);
                ClassAd *r = call(fd, m);
                if (!r || reply_ok(r, NULL))
                        _exit(12); /* a user may not vacate */
                classad_free(r);
                classad_free(m);
                ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
                classad_set_string(job, "Owner", "root"); /* not nobody's */
                r = claim(fd, "slot1", "stolen-claim-000001", job);
                if (!r || reply_ok(r, NULL))
                        _exit(13);
                classad_free(r);
                classad_set_string(job, "Owner", "nobody");
                r = claim_full(fd, "slot1", "prio-claim-00000001", job, true);
                if (!r || reply_ok(r, NULL))
                        _exit(16); /* preempting by priority is the central manager's */
                classad_free(r);
                r = claim(fd, "slot1", "own-claim-000000001", job);
                if (!r || !reply_ok(r, NULL))
                        _exit(14); /* on their own behalf: fine */
                classad_free(r);
                r = claim_cmd(fd, GLEAN_CMD_RELEASE, "own-claim-000000001", NULL);
                if (!r || !reply_ok(r, NULL))
                        _exit(15);
                classad_free(r);
                classad_free(job);
                _exit(0);
        }
        int status;
        waitpid(child, &status, 0);
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the non-administrator's checks: exit %d",
                         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* The central manager's connection gets every slot ad at once, and again on
 * every state change. */
static void test_manager_updates(void) {
        if (getuid() != 0) {
                printf("(not root: only root may speak for the central manager; skipped)\n");
                return;
        }
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        int mfd = -1;
        char why[256];
        CU_ASSERT_FATAL(glean_client_connect(p.sock, "glean-negotiator", 5000, &mfd, why, sizeof why) >= 0);
        unsigned updates = 0;
        bool seen1 = false, seen2 = false, claimed = false;
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        for (int round = 0; round < 40 && !claimed; round++) {
                ClassAd *ad = NULL, *slot = NULL;
                GleanCommand cmd;
                if (glean_msg_recv(mfd, 5000, &ad, &cmd, why, sizeof why) < 0)
                        break;
                if (cmd == GLEAN_CMD_SLOT_UPDATE && glean_msg_get_ad(ad, "SlotAd", &slot) >= 0) {
                        updates++;
                        char *name = NULL, *state = NULL;
                        classad_eval_string(slot, "Name", CA_MODE_OLD, &name);
                        classad_eval_string(slot, "State", CA_MODE_OLD, &state);
                        seen1 |= name && strncmp(name, "slot1@", 6) == 0;
                        seen2 |= name && strncmp(name, "slot2@", 6) == 0;
                        claimed = name && state && strncmp(name, "slot2@", 6) == 0 && strcmp(state, "Claimed") == 0;
                        free(name);
                        free(state);
                        classad_free(slot);
                }
                classad_free(ad);
                if (seen1 && seen2 && updates == 2) {
                        ClassAd *r = claim(fd, "slot2", "manager-test-claim-01", job);
                        CU_ASSERT(reply_ok(r, NULL));
                        classad_free(r);
                }
        }
        GLEAN_TEST_CHECK(seen1 && seen2 && claimed, "updates: %u, slot1 %d, slot2 %d, slot2 claimed %d", updates,
                         seen1, seen2, claimed);
        classad_free(job);
        close(fd);
        close(mfd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* A claim on a partitionable slot: the central manager hears what is left
 * of the p-slot before the claim's Reply, so that its next cycle does not
 * match jobs to the CPUs just given to the d-slot. */
static void test_pslot_left_before_reply(void) {
        if (getuid() != 0) {
                printf("(not root: only root may speak for the central manager; skipped)\n");
                return;
        }
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "NUM_SLOTS = 1\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                                       "SLOT_TYPE_1_PARTITIONABLE = True\n"));
        int64_t cpus = slot_int(&p, "slot1", "Cpus");
        CU_ASSERT_FATAL(cpus == 2);
        int mfd = -1;
        char why[256];
        CU_ASSERT_FATAL(glean_client_connect(p.sock, "glean-negotiator", 5000, &mfd, why, sizeof why) >= 0);
        /* The first updates, after the Hello: slot1 whole. */
        ClassAd *first = wait_msg(mfd, GLEAN_CMD_SLOT_UPDATE, 5, NULL, 0, 0);
        CU_ASSERT_PTR_NOT_NULL(first);
        classad_free(first);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL), *m = NULL;
        glean_msg_new(GLEAN_CMD_REQUEST_CLAIM, &m);
        classad_set_string(m, "Slot", "slot1");
        classad_set_string(m, "ClaimId", "pslot-left-claim-0001");
        classad_set_int(m, "RequestId", 41);
        glean_msg_set_ad(m, "JobAd", job);
        CU_ASSERT_FATAL(glean_msg_send(mfd, m, 5000) >= 0);
        classad_free(m);
        int64_t left = -1;
        bool replied = false, ok = false;
        for (int i = 0; i < 50 && !replied; i++) {
                ClassAd *ad = NULL, *slot = NULL;
                GleanCommand cmd;
                if (glean_msg_recv(mfd, 5000, &ad, &cmd, why, sizeof why) < 0)
                        break;
                if (cmd == GLEAN_CMD_REPLY) {
                        replied = true;
                        classad_eval_bool(ad, "Ok", CA_MODE_OLD, &ok);
                } else if (cmd == GLEAN_CMD_SLOT_UPDATE && glean_msg_get_ad(ad, "SlotAd", &slot) >= 0) {
                        char *name = NULL;
                        classad_eval_string(slot, "Name", CA_MODE_OLD, &name);
                        if (name && strncmp(name, "slot1@", 6) == 0)
                                classad_eval_int(slot, "Cpus", CA_MODE_OLD, &left);
                        free(name);
                        classad_free(slot);
                }
                classad_free(ad);
        }
        GLEAN_TEST_CHECK(replied && ok, "the claim is granted");
        GLEAN_TEST_CHECK(left == cpus - 1, "before the Reply, slot1 was advertised with %lld Cpus (want %lld)",
                         (long long) left, (long long) (cpus - 1));
        classad_free(job);
        close(mfd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* A slot that runs its backfill command takes a job from glean agent run:
 * the command is killed, the slot is Claimed (31), the job runs, and the
 * slot goes back to backfill. */
static void test_backfill_run(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "NUM_CPUS = 1\nENABLE_BACKFILL = True\nBACKFILL_COMMAND = /bin/sleep 120\n"
                                       "START_BACKFILL = True\nEVICT_BACKFILL = False\n"));
        wait_state(&p, "slot1", "Backfill/Busy", 5);
        char sub[256], text[512];
        snprintf(sub, sizeof sub, "%s/job.sub", p.jobs);
        snprintf(text, sizeof text, "executable = /bin/echo\narguments = hi\noutput = out.txt\ninitialdir = %s\nqueue\n",
                 p.jobs);
        write_file(sub, text);
        GleanTestRun r;
        CU_ASSERT_FATAL(glean_cli(&p, &r, "run", sub, NULL, NULL) >= 0);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.err, "transition 31"), "run: status %d, stderr: %s", r.status,
                         r.err);
        glean_test_run_done(&r);
        wait_state(&p, "slot1", "Backfill/Busy", 5);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* A client that asks and never reads cannot stall the agent: another
 * client is answered at once, and the reader is dropped once its backlog
 * passes the limit. */
static void test_slow_reader(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        int slow = connect_agent(&p);
        ClassAd *m = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &m);
        char *text = classad_unparse(m);
        int sent = 0;
        for (int i = 0; i < 20000; i++) {
                if (glean_frame_write(slow, text, strlen(text), 1000) < 0)
                        break;
                sent++;
        }
        free(text);
        classad_free(m);
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double ms = (double) (t1.tv_sec - t0.tv_sec) * 1e3 + (double) (t1.tv_nsec - t0.tv_nsec) / 1e6;
        GLEAN_TEST_CHECK(strcmp(st, "Unclaimed/Idle") == 0, "another client is served (%s)", st);
        GLEAN_TEST_CHECK(ms < 2000, "and promptly: %.0f ms after %d unread requests", ms, sent);
        close(slow);
        char *log = NULL;
        glean_test_read_file(p.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "does not read its messages"), "the slow reader is dropped (%d sent)",
                         sent);
        free(log);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static void test_impossible_layout(void) {
        Pool p;
        /* Four slots of two CPUs on a machine of two: the agent stops and says why. */
        CU_ASSERT(pool_launch(&p, "SLOT_TYPE_1 = cpus=2, memory=10%\nNUM_SLOTS_TYPE_1 = 4\n", true));
        char *log = NULL;
        glean_test_read_file(p.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "SLOT_TYPE_1") && strstr(log, "CPU"), "log: %s", log ? log : "");
        free(log);
        GLEAN_TEST_CHECK(p.exit_status == 1, "the agent exits 1, not %d", p.exit_status);
        pool_stop(&p);
}

static CU_TestInfo tests[] = {
        { "run a job", test_run_job },
        { "status", test_status },
        { "graceful vacate", test_vacate },
        { "a graceful vacate retires, --fast kills at once", test_vacate_retires },
        { "claim lease expiry", test_lease_expiry },
        { "refusals change nothing", test_refusals },
        { "drain and cancel", test_drain },
        { "partitionable slot", test_partitionable },
        { "not an administrator", test_not_admin },
        { "an impossible slot layout stops the agent", test_impossible_layout },
        { "the central manager hears of every state change", test_manager_updates },
        { "a p-slot's room left is advertised before its claim's Reply", test_pslot_left_before_reply },
        { "glean agent run on a slot running backfill", test_backfill_run },
        { "a client that never reads", test_slow_reader },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent daemon", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

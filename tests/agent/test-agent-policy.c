/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-policy.c — the policy a running pool shows, on the real
 * glean-agent (seed 002, 3.5.5 to 3.5.9): preemption for a better RANK and
 * by priority, a match and its MATCH_TIMEOUT, suspension of a real job by
 * SUSPEND and CONTINUE, keep-alives that keep a short lease, the three
 * ways of shutting down, backfill, garbage on the socket and a flood of
 * connections, and STARTD_SLOT_ATTRS.
 *
 * Each test starts its own agent on a temporary configuration with
 * POLLING_INTERVAL = 1. The binaries: $GLEAN and $GLEAN_AGENT (set by make
 * check to the flavour being tested), else build/bin/.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-test.h"

/* ---- processes ---- */

/* The parent of pid when pid is a job's reaper (glean-reaper), else -1. */
static long reaper_parent(long pid) {
        char path[64], buf[256], name[64] = "";
        long pp = -1;
        snprintf(path, sizeof path, "/proc/%ld/status", pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        while (fgets(buf, sizeof buf, f)) {
                if (strncmp(buf, "Name:", 5) == 0)
                        sscanf(buf + 5, "%63s", name);
                else if (strncmp(buf, "PPid:", 5) == 0)
                        pp = strtol(buf + 5, NULL, 10);
        }
        fclose(f);
        return strcmp(name, "glean-reaper") == 0 ? pp : -1;
}

/* The children of ppid whose command is comm (or its jobs': their reaper
 * is its child): up to max pids (and their real uids); their number. */
static size_t children(pid_t ppid, const char *comm, pid_t *pids, uid_t *uids, size_t max) {
        DIR *d = opendir("/proc");
        size_t n = 0;
        if (!d)
                return 0;
        struct dirent *e;
        while ((e = readdir(d))) {
                char *end;
                long pid = strtol(e->d_name, &end, 10);
                if (*end || pid <= 0)
                        continue;
                char path[64], buf[2048];
                snprintf(path, sizeof path, "/proc/%ld/status", pid);
                FILE *f = fopen(path, "re");
                if (!f)
                        continue;
                char name[64] = "";
                long pp = -1, uid = -1;
                bool zombie = false;
                while (fgets(buf, sizeof buf, f)) {
                        if (strncmp(buf, "Name:", 5) == 0)
                                sscanf(buf + 5, "%63s", name);
                        else if (strncmp(buf, "PPid:", 5) == 0)
                                pp = strtol(buf + 5, NULL, 10);
                        else if (strncmp(buf, "Uid:", 4) == 0)
                                uid = strtol(buf + 4, NULL, 10);
                        else if (strncmp(buf, "State:", 6) == 0)
                                zombie = strchr(buf, 'Z') != NULL;
                }
                fclose(f);
                if (pp != ppid && pp > 0 && strcmp(name, comm) == 0 && !zombie)
                        pp = reaper_parent(pp); /* a job: its reaper is the agent's child */
                if (pp == ppid && strcmp(name, comm) == 0 && !zombie) {
                        if (n < max) {
                                pids[n] = (pid_t) pid;
                                uids[n] = (uid_t) uid;
                        }
                        n++;
                }
        }
        closedir(d);
        return n;
}

static size_t wait_children(pid_t ppid, const char *comm, size_t want, int seconds, pid_t *pids, uid_t *uids,
                            size_t max) {
        size_t n = 0;
        for (int i = 0; i < seconds * 20; i++) {
                n = children(ppid, comm, pids, uids, max);
                if (n == want)
                        break;
                usleep(50000);
        }
        return n;
}

static off_t file_size(const char *path) {
        struct stat st;
        return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- tests ---- */

/* A claim for a job of an accounting group: the slot ad names the
 * submitter the central manager charges (AccountingGroup, the group's
 * name at the User's domain) beside RemoteUser; both go with the claim. */
static void test_claim_accounting_group(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        char why[512];
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", "User = \"bob@pool\"; AccountingGroup = \"group_a.bob\";");
        const char *id = "acct-group-claim-0001";
        CU_ASSERT(ok_why(claim(fd, "slot1", id, job), why, sizeof why));
        ClassAd *ad = slot_ad(&p, "slot1");
        char *group = ad_string(ad, "AccountingGroup"), *user = ad_string(ad, "RemoteUser");
        GLEAN_TEST_CHECK(group && strcmp(group, "group_a.bob@pool") == 0, "AccountingGroup %s", group ? group : "-");
        GLEAN_TEST_CHECK(user && strcmp(user, "bob@pool") == 0, "RemoteUser %s", user ? user : "-");
        free(group);
        free(user);
        classad_free(ad);
        CU_ASSERT(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why));
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        ad = slot_ad(&p, "slot1");
        CU_ASSERT_FALSE(classad_has(ad, "AccountingGroup"));
        classad_free(ad);
        classad_free(job);
        close(fd);
        pool_stop(&p);
}

/* 3.5.8 RANK: a request the slot ranks higher preempts the current one
 * (Claimed/Busy -> Retiring (13) -> Preempting/Vacating (18) -> Claimed/Idle
 * (23) with the new claim); a lower one is refused. */
static void test_rank_preemption(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "RANK = TARGET.Prio\n"));
        char why[512];
        int fda = connect_agent(&p), fdb = connect_agent(&p), fdc = connect_agent(&p);
        ClassAd *low = job_ad(&p, "/bin/sleep", "60", "Prio = 1;");
        ClassAd *high = job_ad(&p, "/bin/sh", "-c 'exit 4'", "Prio = 5;");
        ClassAd *mid = job_ad(&p, "/bin/true", "", "Prio = 3;");
        const char *ida = "rank-claim-low-000001", *idb = "rank-claim-high-00001";
        pid_t pid = claim_and_run(fda, "slot1", ida, low);
        CU_ASSERT_FATAL(pid > 0);
        wait_state(&p, "slot1", "Claimed/Busy", 5);
        ClassAd *ad = slot_ad(&p, "slot1");
        double cur = -1;
        classad_eval_real(ad, "CurrentRank", CA_MODE_OLD, &cur);
        classad_free(ad);
        GLEAN_TEST_CHECK(cur == 1, "CurrentRank %g with the Prio 1 job", cur);

        /* The better request: accepted as a preempting claim. */
        ClassAd *r = claim(fdb, "slot1", idb, high);
        char *slot = ad_string(r, "Slot");
        GLEAN_TEST_CHECK(ok_why(r, why, sizeof why), "the preempting claim: %s", why);
        CU_ASSERT(strcmp(slot, "slot1") == 0);
        free(slot);

        /* The first job is vacated; its own connection hears of it. */
        ClassAd *ex = wait_msg(fda, GLEAN_CMD_JOB_EXIT, 10, NULL, 0, 0);
        GLEAN_TEST_CHECK(ex != NULL, "no JobExit for the preempted job");
        char *reason = ad_string(ex, "Reason"), *id = ad_string(ex, "ClaimId");
        bool sig = false;
        int64_t signo = 0;
        classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &sig);
        classad_eval_int(ex, "ExitSignal", CA_MODE_OLD, &signo);
        GLEAN_TEST_CHECK(ex && strcasestr(reason, "preempt"), "JobExit Reason: '%s'", reason);
        GLEAN_TEST_CHECK(ex && strcmp(id, ida) == 0, "JobExit ClaimId: '%s'", id);
        GLEAN_TEST_CHECK(ex && sig && signo == SIGTERM, "vacated with the soft kill signal: signal %lld",
                         (long long) signo);
        free(reason);
        free(id);
        classad_free(ex);
        /* ... and that its claim is over. */
        ex = wait_msg(fda, GLEAN_CMD_EVENT, 5, "ClaimEnded", 0, 0);
        id = ad_string(ex, "ClaimId");
        GLEAN_TEST_CHECK(ex && strcmp(id, ida) == 0, "no ClaimEnded event for the preempted claim (%s)", id);
        free(id);
        classad_free(ex);
        /* The preempting claim has the slot (23 from Vacating, 24 from Killing), and its
         * claimant hears of it. */
        wait_state(&p, "slot1", "Claimed/Idle", 5);
        GLEAN_TEST_CHECK(log_transition(&p, "slot1", "Claimed/Busy", "Claimed/Retiring", 13),
                         "no transition 13 for the preempting claim");
        GLEAN_TEST_CHECK(log_transition(&p, "slot1", "Preempting/Vacating", "Claimed/Idle", 23) ||
                                 log_transition(&p, "slot1", "Preempting/Killing", "Claimed/Idle", 24),
                         "no transition 23 or 24 in the log");
        ex = wait_msg(fdb, GLEAN_CMD_EVENT, 5, "Transition", 23, 24);
        GLEAN_TEST_CHECK(ex != NULL, "the preempting claimant was not told of transition 23/24");
        classad_free(ex);
        ad = slot_ad(&p, "slot1");
        cur = -1;
        classad_eval_real(ad, "CurrentRank", CA_MODE_OLD, &cur);
        classad_free(ad);
        GLEAN_TEST_CHECK(cur == 5, "CurrentRank %g with the Prio 5 claim", cur);

        /* The old claim is gone, the new one can be activated and hears of its job. */
        GLEAN_TEST_CHECK(!ok_why(claim_cmd(fda, GLEAN_CMD_KEEP_ALIVE, ida, NULL), why, sizeof why),
                         "a keep-alive of the preempted claim is accepted");
        r = claim_cmd(fdb, GLEAN_CMD_ACTIVATE_CLAIM, idb, high);
        GLEAN_TEST_CHECK(ok_why(r, why, sizeof why), "activating the preempting claim: %s", why);
        ex = wait_msg(fdb, GLEAN_CMD_JOB_EXIT, 10, NULL, 0, 0);
        int64_t code = -1;
        id = ad_string(ex, "ClaimId");
        classad_eval_int(ex, "ExitCode", CA_MODE_OLD, &code);
        GLEAN_TEST_CHECK(ex && code == 4 && strcmp(id, idb) == 0, "the second job's JobExit: code %lld, claim '%s'",
                         (long long) code, id);
        free(id);
        classad_free(ex);
        wait_state(&p, "slot1", "Claimed/Idle", 5);

        /* A request of a lower RANK is refused, and changes nothing. */
        GLEAN_TEST_CHECK(!ok_why(claim(fdc, "slot1", "rank-claim-mid-000001", mid), why, sizeof why) &&
                                 strstr(why, "RANK"),
                         "a claim of lower RANK: %s", why);
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "slot1 after the refusal: %s", st);

        /* A better one while the claim is idle takes the slot at once (10, 23). */
        ClassAd *best = job_ad(&p, "/bin/true", "", "Prio = 9;");
        const char *idc = "rank-claim-best-00001";
        GLEAN_TEST_CHECK(ok_why(claim(fdc, "slot1", idc, best), why, sizeof why), "a claim of RANK 9: %s", why);
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "slot1 after the idle claim was preempted: %s", st);
        ex = wait_msg(fdb, GLEAN_CMD_EVENT, 5, "ClaimEnded", 0, 0);
        id = ad_string(ex, "ClaimId");
        GLEAN_TEST_CHECK(ex && strcmp(id, idb) == 0, "no ClaimEnded event for the idle preempted claim (%s)", id);
        free(id);
        classad_free(ex);
        GLEAN_TEST_CHECK(!ok_why(claim_cmd(fdb, GLEAN_CMD_KEEP_ALIVE, idb, NULL), why, sizeof why),
                         "a keep-alive of the preempted idle claim is accepted");
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fdc, GLEAN_CMD_KEEP_ALIVE, idc, NULL), why, sizeof why),
                         "a keep-alive of the new claim: %s", why);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fdc, GLEAN_CMD_RELEASE, idc, NULL), why, sizeof why), "release: %s", why);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        classad_free(low);
        classad_free(high);
        classad_free(mid);
        classad_free(best);
        close(fda);
        close(fdb);
        close(fdc);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* Seed 000, 3.4.5: a claim by priority (ByPriority, the negotiator's
 * reason Priority) of a worse RANK is refused with EBUSY and the running
 * job goes on; one of an equal RANK preempts it (no retirement here: the
 * job is vacated at once and the new claim takes the slot, 23). */
static void test_priority_preemption(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "RANK = TARGET.Prio\n"));
        char why[512];
        int fda = connect_agent(&p), fdb = connect_agent(&p);
        ClassAd *running = job_ad(&p, "/bin/sleep", "60", "Prio = 5;");
        ClassAd *worse = job_ad(&p, "/bin/true", "", "Prio = 4;");
        ClassAd *equal = job_ad(&p, "/bin/true", "", "Prio = 5;");
        const char *ida = "prio-claim-running-01", *idw = "prio-claim-worse-0001", *ide = "prio-claim-equal-0001";
        pid_t pid = claim_and_run(fda, "slot1", ida, running);
        CU_ASSERT_FATAL(pid > 0);
        wait_state(&p, "slot1", "Claimed/Busy", 5);

        /* Worse: refused with EBUSY; the job runs on, its claim untouched. */
        ClassAd *r = claim_full(fdb, "slot1", idw, worse, true);
        char *err = ad_string(r, "Errno");
        GLEAN_TEST_CHECK(!ok_why(r, why, sizeof why) && strstr(why, "RANK 4 is below"), "a worse claim by priority: %s",
                         why);
        GLEAN_TEST_CHECK(strcmp(err, "EBUSY") == 0, "refused with Errno '%s', want EBUSY", err);
        free(err);
        ClassAd *ex = wait_msg(fda, GLEAN_CMD_JOB_EXIT, 1, NULL, 0, 0);
        GLEAN_TEST_CHECK(ex == NULL, "the running job was ended by a refused claim");
        classad_free(ex);
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Busy") == 0 && proc_state(pid) != 0 && proc_state(pid) != 'T',
                         "after the refusal: %s, the job's state '%c'", st, proc_state(pid));
        GLEAN_TEST_CHECK(slot_int(&p, "slot1", "CurrentRank") == 5, "CurrentRank after the refusal");
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fda, GLEAN_CMD_KEEP_ALIVE, ida, NULL), why, sizeof why),
                         "the running claim after the refusal: %s", why);
        GLEAN_TEST_CHECK(!ok_why(claim_cmd(fdb, GLEAN_CMD_KEEP_ALIVE, idw, NULL), why, sizeof why),
                         "the refused claim is kept alive");

        /* Equal: accepted; the running job is vacated and the new claim takes the slot. */
        GLEAN_TEST_CHECK(ok_why(claim_full(fdb, "slot1", ide, equal, true), why, sizeof why),
                         "an equal claim by priority: %s", why);
        ex = wait_msg(fda, GLEAN_CMD_JOB_EXIT, 10, NULL, 0, 0);
        char *id = ad_string(ex, "ClaimId");
        GLEAN_TEST_CHECK(ex && strcmp(id, ida) == 0, "no JobExit for the job preempted by priority (%s)", id);
        free(id);
        classad_free(ex);
        wait_state(&p, "slot1", "Claimed/Idle", 5);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fdb, GLEAN_CMD_KEEP_ALIVE, ide, NULL), why, sizeof why),
                         "the claim by priority holds the slot: %s", why);
        GLEAN_TEST_CHECK(log_transition(&p, "slot1", "Preempting/Vacating", "Claimed/Idle", 23) ||
                                 log_transition(&p, "slot1", "Preempting/Killing", "Claimed/Idle", 24),
                         "no transition 23 or 24 in the log");
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fdb, GLEAN_CMD_RELEASE, ide, NULL), why, sizeof why), "release: %s", why);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        classad_free(running);
        classad_free(worse);
        classad_free(equal);
        close(fda);
        close(fdb);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* 3.5.7.3: Matched/Idle (6), MATCH_TIMEOUT back to Owner (8) and Unclaimed
 * (1); the matched claim id claims the slot (9), another one does not. */
static void test_match(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "MATCH_TIMEOUT = 2\n"));
        char why[512], st[64];
        int fd = connect_agent(&p);
        time_t t0 = time(NULL);
        GLEAN_TEST_CHECK(ok_why(match(fd, "slot2", "match-claim-id-000001"), why, sizeof why), "match: %s", why);
        slot_state(&p, "slot2", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Matched/Idle") == 0, "slot2 after the match: %s", st);
        CU_ASSERT(log_transition(&p, "slot2", "Unclaimed/Idle", "Matched/Idle", 6));
        /* A matched slot says its Requirements are FALSE. */
        ClassAd *ad = slot_ad(&p, "slot2");
        bool req = true;
        GLEAN_TEST_CHECK(ad && classad_eval_bool(ad, "Requirements", CA_MODE_OLD, &req) >= 0 && !req,
                         "Requirements of a matched slot");
        classad_free(ad);
        /* A second match of a matched slot is refused. */
        GLEAN_TEST_CHECK(!ok_why(match(fd, "slot2", "match-claim-id-000002"), why, sizeof why),
                         "a second match is accepted");
        wait_state(&p, "slot2", "Unclaimed/Idle", 6);
        long took = (long) (time(NULL) - t0);
        GLEAN_TEST_CHECK(took >= 1 && took <= 4, "MATCH_TIMEOUT = 2 ended the match after %ld s", took);
        GLEAN_TEST_CHECK(log_transition(&p, "slot2", "Matched/Idle", "Owner/Idle", 8) &&
                                 log_line(&p, "slot2: Matched/Idle -> Owner/Idle", "MATCH_TIMEOUT", NULL),
                         "no transition 8 for MATCH_TIMEOUT in the log");
        char *log = read_log(&p);
        char *t8 = strstr(log, "slot2: Matched/Idle -> Owner/Idle (transition 8");
        GLEAN_TEST_CHECK(t8 && strstr(t8, "slot2: Owner/Idle -> Unclaimed/Idle (transition 1"),
                         "no transition 1 after transition 8");
        free(log);

        /* Matched again: only the announced claim id claims it. */
        const char *id = "match-claim-id-000003";
        GLEAN_TEST_CHECK(ok_why(match(fd, "slot2", id), why, sizeof why), "match: %s", why);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        GLEAN_TEST_CHECK(!ok_why(claim(fd, "slot2", "some-other-claim-0001", job), why, sizeof why),
                         "a claim with another id while Matched is accepted");
        slot_state(&p, "slot2", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Matched/Idle") == 0, "slot2 after the refusal: %s", st);
        GLEAN_TEST_CHECK(ok_why(claim(fd, "slot2", id, job), why, sizeof why), "the matched claim: %s", why);
        slot_state(&p, "slot2", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "slot2 after the matched claim: %s", st);
        CU_ASSERT(log_transition(&p, "slot2", "Matched/Idle", "Claimed/Idle", 9));
        /* A claimed slot is not matched; and the claim outlives MATCH_TIMEOUT. */
        GLEAN_TEST_CHECK(!ok_why(match(fd, "slot2", "match-claim-id-000004"), why, sizeof why),
                         "a match of a claimed slot is accepted");
        sleep(3);
        slot_state(&p, "slot2", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "slot2 3 s after the claim: %s", st);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        wait_state(&p, "slot2", "Unclaimed/Idle", 5);
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* 3.5.7.4: WANT_SUSPEND and SUSPEND stop the job (14), CONTINUE resumes it (15). */
static void test_suspend(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "WANT_SUSPEND = True\n"
                                       "SUSPEND = (CurrentTime - JobStart) > 2\n"
                                       "CONTINUE = (CurrentTime - EnteredCurrentActivity) > 3\n"
                                       "PREEMPT = False\n"));
        int fd = connect_agent(&p);
        char why[512], ticks[200];
        snprintf(ticks, sizeof ticks, "%s/ticks", p.jobs);
        ClassAd *job = job_ad(&p, "/bin/sh", "-c 'while :; do echo . >>ticks; sleep 0.1; done'", NULL);
        const char *id = "suspend-claim-0000001";
        pid_t pid = claim_and_run(fd, "slot1", id, job);
        CU_ASSERT_FATAL(pid > 0);
        GLEAN_TEST_CHECK(wait_proc_state(pid, false, 500) != 'T', "the job is stopped before SUSPEND");

        /* Suspended: the whole job stops, and stays stopped. */
        CU_ASSERT_FATAL(wait_state(&p, "slot1", "Claimed/Suspended", 8));
        char st = wait_proc_state(pid, true, 5000); /* D (disk) before T on a busy machine */
        GLEAN_TEST_CHECK(st == 'T', "the job's state while Claimed/Suspended: '%c'", st ? st : '0');
        usleep(200000);
        off_t before = file_size(ticks);
        usleep(500000);
        off_t after = file_size(ticks);
        char s[64];
        slot_state(&p, "slot1", s, sizeof s);
        GLEAN_TEST_CHECK(before > 0 && (after == before || strcmp(s, "Claimed/Suspended") != 0),
                         "the suspended job went on writing: %lld -> %lld bytes", (long long) before,
                         (long long) after);
        CU_ASSERT(log_transition(&p, "slot1", "Claimed/Busy", "Claimed/Suspended", 14));

        /* CONTINUE: it runs again. */
        CU_ASSERT(wait_state(&p, "slot1", "Claimed/Busy", 8));
        st = wait_proc_state(pid, false, 500);
        GLEAN_TEST_CHECK(st && st != 'T', "the job's state after CONTINUE: '%c'", st ? st : '0');
        before = file_size(ticks);
        after = before;
        for (int i = 0; i < 30 && after == before; i++) {
                usleep(50000);
                after = file_size(ticks);
        }
        GLEAN_TEST_CHECK(after > before, "the continued job does not write: %lld bytes", (long long) after);
        CU_ASSERT(log_transition(&p, "slot1", "Claimed/Suspended", "Claimed/Busy", 15));

        /* A release evicts it, stopped or not. */
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 10, NULL, 0, 0);
        GLEAN_TEST_CHECK(ex != NULL, "no JobExit after the release");
        classad_free(ex);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(proc_state(pid) == 0, "the job's process is still there");
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* 3.5.5.1: keep-alives reset the lease; `glean agent run` sends one every lease/3 s. */
static void test_keepalive(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        char sub[256], text[512];
        snprintf(sub, sizeof sub, "%s/lease.sub", p.jobs);
        snprintf(text, sizeof text,
                 "executable = /bin/sleep\narguments = 6\n+JobLeaseDuration = 3\noutput = out.txt\n"
                 "initialdir = %s\nqueue\n",
                 p.jobs);
        write_file(sub, text);
        GleanTestRun r;
        time_t t0 = time(NULL);
        CU_ASSERT_FATAL(glean_cli(&p, &r, "run", sub, NULL) >= 0);
        long took = (long) (time(NULL) - t0);
        GLEAN_TEST_CHECK(r.status == 0, "glean agent run: status %d, stdout: %s stderr: %s", r.status, r.out, r.err);
        GLEAN_TEST_CHECK(strstr(r.err, "lease 3 s, keep-alive every 1 s"), "stderr: %s", r.err);
        GLEAN_TEST_CHECK(strstr(r.out, "exited with status 0"), "stdout: %s", r.out);
        GLEAN_TEST_CHECK(took >= 5, "the 6-second job ended after %ld s", took);
        glean_test_run_done(&r);
        GLEAN_TEST_CHECK(!log_line(&p, "lease expired", NULL), "a lease expired");
        GLEAN_TEST_CHECK(log_transition(&p, "slot1", "Claimed/Busy", "Claimed/Idle", 12), "no transition 12");
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

typedef enum { SHUT_CLI, SHUT_CLI_FAST, SHUT_SIGTERM } ShutHow;

static void shutdown_case(ShutHow how) {
        static const char *const names[] = { "glean agent shutdown", "glean agent shutdown --fast", "SIGTERM" };
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/sleep", "60", NULL);
        pid_t pid = claim_and_run(fd, "slot1", "shutdown-claim-000001", job);
        CU_ASSERT_FATAL(pid > 0);
        wait_state(&p, "slot1", "Claimed/Busy", 5);
        if (how == SHUT_SIGTERM)
                kill(p.pid, SIGTERM);
        else {
                GleanTestRun r;
                CU_ASSERT_FATAL(glean_cli(&p, &r, "shutdown", how == SHUT_CLI_FAST ? "--fast" : NULL, NULL) >= 0);
                GLEAN_TEST_CHECK(r.status == 0, "%s: status %d: %s", names[how], r.status, r.err);
                glean_test_run_done(&r);
        }
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 10, NULL, 0, 0);
        GLEAN_TEST_CHECK(ex != NULL, "%s: no JobExit", names[how]);
        char *reason = ad_string(ex, "Reason");
        bool sig = false;
        int64_t signo = 0;
        classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &sig);
        classad_eval_int(ex, "ExitSignal", CA_MODE_OLD, &signo);
        int want = how == SHUT_CLI_FAST ? SIGKILL : SIGTERM;
        GLEAN_TEST_CHECK(ex && sig && signo == want, "%s: the job ended by signal %lld, want %d", names[how],
                         (long long) signo, want);
        GLEAN_TEST_CHECK(ex && strstr(reason, "shutting down"), "%s: JobExit Reason '%s'", names[how], reason);
        free(reason);
        classad_free(ex);
        int status = pool_wait_exit(&p, 5);
        GLEAN_TEST_CHECK(status != -1, "%s: the agent is still running 5 s after the job's end", names[how]);
        GLEAN_TEST_CHECK(status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
                         "%s: the agent's wait status %d", names[how], status);
        struct stat sst;
        GLEAN_TEST_CHECK(status == -1 || stat(p.sock, &sst) < 0, "%s: the socket is left behind", names[how]);
        GLEAN_TEST_CHECK(proc_state(pid) == 0, "%s: the job is still there", names[how]);
        GLEAN_TEST_CHECK(log_line(&p, how == SHUT_SIGTERM ? "graceful shutdown" : "Shutdown by", NULL),
                         "%s: the log does not record the shutdown", names[how]);
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "%s: the agent's exit status", names[how]);
}

/* 3.5.7.4: a graceful shutdown vacates (MaxJobRetirementTime 0), a fast one
 * kills; SIGTERM is a graceful shutdown. The agent exits 0 once the jobs are gone. */
static void test_shutdown(void) {
        shutdown_case(SHUT_CLI);
        shutdown_case(SHUT_CLI_FAST);
        shutdown_case(SHUT_SIGTERM);
}

static const char backfill_config[] = "ENABLE_BACKFILL = True\n"
                                      "BACKFILL_COMMAND = /bin/sleep 120\n"
                                      "START_BACKFILL = True\n";

/* 3.5.7.6: Unclaimed -> Backfill/Idle (7) -> Backfill/Busy (26); a claim
 * kills the backfill (28, 29) and takes the slot (31). */
static void test_backfill(void) {
        Pool p;
        char config[512];
        snprintf(config, sizeof config, "%sEVICT_BACKFILL = False\n", backfill_config);
        CU_ASSERT_FATAL(pool_start(&p, config));
        char why[512];
        wait_state(&p, "slot1", "Backfill/Busy", 5);
        wait_state(&p, "slot2", "Backfill/Busy", 5);
        CU_ASSERT(log_transition(&p, "slot1", "Unclaimed/Idle", "Backfill/Idle", 7));
        CU_ASSERT(log_transition(&p, "slot1", "Backfill/Idle", "Backfill/Busy", 26));
        pid_t pids[8];
        uid_t uids[8];
        size_t n = wait_children(p.pid, "sleep", 2, 3, pids, uids, 8);
        GLEAN_TEST_CHECK(n == 2, "%zu backfill commands run, want one per slot", n);
        for (size_t i = 0; i < n && i < 8; i++)
                GLEAN_TEST_CHECK(getuid() != 0 || uids[i] == nobody_uid(),
                                 "the backfill command runs as uid %d, not as the slot user", (int) uids[i]);

        /* A claim ends the backfill of its slot only. */
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        const char *id = "backfill-claim-000001";
        GLEAN_TEST_CHECK(ok_why(claim(fd, "slot1", id, job), why, sizeof why), "claim: %s", why);
        wait_state(&p, "slot1", "Claimed/Idle", 5);
        CU_ASSERT(log_transition(&p, "slot1", "Backfill/Busy", "Backfill/Killing", 28));
        CU_ASSERT(log_transition(&p, "slot1", "Backfill/Killing", "Backfill/Idle", 29));
        CU_ASSERT(log_transition(&p, "slot1", "Backfill/Idle", "Claimed/Idle", 31));
        pid_t left[8];
        n = wait_children(p.pid, "sleep", 1, 3, left, uids, 8);
        GLEAN_TEST_CHECK(n == 1, "%zu backfill commands run after the claim, want 1", n);
        char st[64];
        slot_state(&p, "slot2", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Backfill/Busy") == 0, "slot2 during slot1's claim: %s", st);
        /* The claim works as any other, and once released the slot goes back to backfill. */
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_ACTIVATE_CLAIM, id, job), why, sizeof why), "activate: %s",
                         why);
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 10, NULL, 0, 0);
        GLEAN_TEST_CHECK(ex != NULL, "no JobExit");
        classad_free(ex);
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        wait_state(&p, "slot1", "Backfill/Busy", 5);
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM (the backfill is killed)");
        for (size_t i = 0; i < 2; i++)
                GLEAN_TEST_CHECK(kill(pids[i], 0) < 0 && errno == ESRCH, "backfill pid %d outlives the agent",
                                 (int) pids[i]);

        /* EVICT_BACKFILL: the command is killed (28, 29), the slot goes to Owner
         * (30) and, START_BACKFILL still TRUE, back into backfill (1, 7, 26). */
        snprintf(config, sizeof config, "%sNUM_CPUS = 1\nEVICT_BACKFILL = (CurrentTime - EnteredCurrentState) > 2\n",
                 backfill_config);
        CU_ASSERT_FATAL(pool_start(&p, config));
        wait_state(&p, "slot1", "Backfill/Busy", 5);
        n = wait_children(p.pid, "sleep", 1, 3, pids, uids, 8);
        CU_ASSERT(n == 1);
        GLEAN_TEST_CHECK(wait_log(&p, 8, "slot1: Backfill/Killing -> Owner/Idle", "(transition 30:") ||
                                 wait_log(&p, 1, "slot1: Backfill/Idle -> Owner/Idle", "(transition 30:"),
                         "no transition 30");
        GLEAN_TEST_CHECK(log_line(&p, "slot1: Backfill/Busy -> Backfill/Killing (transition 28", "EVICT_BACKFILL", NULL),
                         "no transition 28 for EVICT_BACKFILL");
        bool again = false;
        for (int i = 0; i < 50 && !again; i++) {
                char *log = read_log(&p);
                again = count(log, "slot1: Backfill/Idle -> Backfill/Busy (transition 26") >= 2;
                free(log);
                if (!again)
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(again, "the slot does not go back to backfill after the eviction");
        GLEAN_TEST_CHECK(n == 1 && (kill(pids[0], 0) < 0 && errno == ESRCH), "the evicted backfill command lives on");
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* What the agent does with garbage: refuses it, drops what cannot be
 * resynchronised, and goes on answering. */
static void test_garbage(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        srand(20240611);
        /* 1,000 frames of random bytes over four connections: each refused with a Reply. */
        size_t refused = 0, other = 0;
        for (int c = 0; c < 4; c++) {
                int fd = connect_agent(&p);
                CU_ASSERT_FATAL(fd >= 0);
                for (int i = 0; i < 250; i++) {
                        char buf[600];
                        size_t len = 1 + (size_t) rand() % sizeof buf;
                        for (size_t k = 0; k < len; k++)
                                buf[k] = (char) rand();
                        if (glean_frame_write(fd, buf, len, 5000) < 0) {
                                other++;
                                break;
                        }
                        ClassAd *ad = NULL;
                        GleanCommand cmd;
                        char why[256];
                        if (glean_msg_recv(fd, 5000, &ad, &cmd, why, sizeof why) >= 0 && cmd == GLEAN_CMD_REPLY &&
                            !reply_ok(ad, NULL))
                                refused++;
                        else
                                other++;
                        classad_free(ad);
                }
                /* Fifty bad frames in one write: as many replies, in order. */
                static const char junk[] = "[ Command = 1";
                char batch[50 * (4 + sizeof junk)];
                size_t off = 0;
                for (int i = 0; i < 50; i++) {
                        uint32_t n = htonl(sizeof junk - 1);
                        memcpy(batch + off, &n, 4);
                        memcpy(batch + off + 4, junk, sizeof junk - 1);
                        off += 4 + sizeof junk - 1;
                }
                CU_ASSERT(send(fd, batch, off, MSG_NOSIGNAL) == (ssize_t) off);
                size_t replies = 0;
                for (int i = 0; i < 50; i++) {
                        ClassAd *ad = NULL;
                        GleanCommand cmd;
                        char why[256];
                        if (glean_msg_recv(fd, 5000, &ad, &cmd, why, sizeof why) >= 0 && cmd == GLEAN_CMD_REPLY &&
                            !reply_ok(ad, NULL))
                                replies++;
                        classad_free(ad);
                }
                GLEAN_TEST_CHECK(replies == 50, "%zu replies to 50 frames sent at once", replies);
                /* A good request after all that is served. */
                ClassAd *m = NULL;
                glean_msg_new(GLEAN_CMD_STATUS, &m);
                ClassAd *r = call(fd, m);
                CU_ASSERT(reply_ok(r, NULL));
                classad_free(r);
                classad_free(m);
                close(fd);
        }
        GLEAN_TEST_CHECK(refused == 1000 && other == 0, "%zu of 1000 random frames refused, %zu other outcomes",
                         refused, other);

        /* Frames the stream cannot recover from: the connection is closed. */
        static const struct {
                const char *what;
                bool hello;
                unsigned char bytes[16];
                size_t len;
                bool close_early;
        } cases[] = {
                { "a 4 GiB declared length", true, { 0xff, 0xff, 0xff, 0xff, 'x' }, 5, false },
                { "a length above GLEAN_FRAME_MAX", true, { 0x00, 0x10, 0x00, 0x01, '[' }, 5, false },
                { "a zero length", true, { 0, 0, 0, 0, 0, 0, 0, 1, ']' }, 9, false },
                { "garbage before Hello", false, { 0, 0, 0, 3, 'a', 'b', 'c' }, 7, false },
                { "a request before Hello", false, { 0 }, 0, false },
                { "random bytes before Hello", false, { 0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0, 9, 9 }, 10, false },
                { "a frame cut short", true, { 0, 0, 0, 100, '[', ' ', 'C', 'o' }, 8, true },
                { "a frame cut short before Hello", false, { 0, 0, 0, 100, '[' }, 5, true },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int fd = -1;
                if (cases[i].hello)
                        fd = connect_agent(&p);
                else
                        glean_sock_connect_unix(p.sock, 5000, &fd);
                if (!GLEAN_TEST_CHECK(fd >= 0, "%s: cannot connect", cases[i].what))
                        continue;
                if (cases[i].len) {
                        CU_ASSERT(send(fd, cases[i].bytes, cases[i].len, MSG_NOSIGNAL) == (ssize_t) cases[i].len);
                } else {
                        ClassAd *m = NULL;
                        glean_msg_new(GLEAN_CMD_STATUS, &m);
                        CU_ASSERT(glean_msg_send(fd, m, 5000) >= 0);
                        classad_free(m);
                }
                if (cases[i].close_early) {
                        close(fd);
                        continue;
                }
                /* At most a refusal, then the end of the stream. */
                char *payload = NULL;
                int r = glean_frame_recv(fd, 0, 5000, &payload, NULL);
                if (r >= 0) {
                        ClassAd *ad = NULL;
                        GleanCommand cmd;
                        char why[256];
                        bool refusal = glean_msg_parse(payload, strlen(payload), &ad, &cmd, why, sizeof why) >= 0 &&
                                       cmd == GLEAN_CMD_REPLY && !reply_ok(ad, NULL);
                        GLEAN_TEST_CHECK(refusal, "%s: answered %s", cases[i].what, payload);
                        classad_free(ad);
                        free(payload);
                        r = glean_frame_recv(fd, 0, 5000, &payload, NULL);
                        if (r >= 0)
                                free(payload);
                }
                GLEAN_TEST_CHECK(r == -EPIPE || r == -ECONNRESET, "%s: the connection is not closed (%s)",
                                 cases[i].what, strerror(-r));
                close(fd);
        }

        /* 300 connections at once: each is served or refused. */
        enum { N = 300 };
        int fds[N];
        size_t served = 0, dropped = 0, opened = 0;
        for (int i = 0; i < N; i++) {
                fds[i] = -1;
                if (glean_sock_connect_unix(p.sock, 5000, &fds[i]) >= 0)
                        opened++;
        }
        for (int i = 0; i < N; i++) {
                ClassAd *hello = NULL, *m = NULL;
                glean_hello_new("glean", &hello);
                glean_msg_new(GLEAN_CMD_STATUS, &m);
                classad_set_int(m, "RequestId", i);
                if (fds[i] >= 0 && (glean_msg_send(fds[i], hello, 2000) < 0 || glean_msg_send(fds[i], m, 2000) < 0)) {
                        close(fds[i]);
                        fds[i] = -1;
                        dropped++;
                }
                classad_free(hello);
                classad_free(m);
        }
        for (int i = 0; i < N; i++) {
                if (fds[i] < 0)
                        continue;
                ClassAd *ad = NULL, *ad2 = NULL;
                GleanCommand c1 = GLEAN_CMD__MAX, c2 = GLEAN_CMD__MAX;
                char why[256];
                if (glean_msg_recv(fds[i], 5000, &ad, &c1, why, sizeof why) >= 0 && c1 == GLEAN_CMD_HELLO &&
                    glean_msg_recv(fds[i], 5000, &ad2, &c2, why, sizeof why) >= 0 && c2 == GLEAN_CMD_REPLY &&
                    reply_ok(ad2, NULL))
                        served++;
                else
                        dropped++;
                classad_free(ad);
                classad_free(ad2);
        }
        GLEAN_TEST_CHECK(opened == N && served + dropped == N && served > 0,
                         "%d connections: %zu opened, %zu served, %zu refused", N, opened, served, dropped);
        GLEAN_TEST_CHECK(dropped == 0 || log_line(&p, "refusing a connection", NULL),
                         "%zu connections refused, the log does not say so", dropped);
        for (int i = 0; i < N; i++)
                if (fds[i] >= 0)
                        close(fds[i]);

        /* The agent lives, answers, and its log shows the refusals. */
        int status;
        CU_ASSERT_FATAL(waitpid(p.pid, &status, WNOHANG) == 0);
        char st[64] = "";
        for (int i = 0; i < 20 && strcmp(st, "Unclaimed/Idle") != 0; i++) {
                slot_state(&p, "slot1", st, sizeof st);
                if (strcmp(st, "Unclaimed/Idle") != 0)
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(strcmp(st, "Unclaimed/Idle") == 0, "slot1 after the garbage: '%s'", st);
        char *log = read_log(&p);
        GLEAN_TEST_CHECK(count(log, "bad message from") >= 1000 + 200, "%zu bad messages logged",
                         count(log, "bad message from"));
        GLEAN_TEST_CHECK(strstr(log, "dropping the connection") && strstr(log, "Message too long") &&
                                 strstr(log, "Bad message"),
                         "the log lacks the dropped connections");
        free(log);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* 3.5.10.5 STARTD_SLOT_ATTRS: slotN_State in every slot's ad, usable by
 * another slot's policy. */
static void test_slot_attrs(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "STARTD_SLOT_ATTRS = State\nSLOT2_START = slot1_State =!= \"Claimed\"\n"));
        char why[512], st[64];
        char *s = slot_string(&p, "slot2", "slot1_State");
        GLEAN_TEST_CHECK(strcmp(s, "Unclaimed") == 0, "slot2's slot1_State: '%s'", s);
        free(s);
        s = slot_string(&p, "slot1", "slot2_State");
        GLEAN_TEST_CHECK(strcmp(s, "Unclaimed") == 0, "slot1's slot2_State: '%s'", s);
        free(s);
        int fd = connect_agent(&p);
        ClassAd *job = job_ad(&p, "/bin/true", "", NULL);
        const char *id = "slot-attrs-claim-0001";
        GLEAN_TEST_CHECK(ok_why(claim(fd, "slot1", id, job), why, sizeof why), "claim: %s", why);
        s = slot_string(&p, "slot2", "slot1_State");
        GLEAN_TEST_CHECK(strcmp(s, "Claimed") == 0, "slot2's slot1_State with slot1 claimed: '%s'", s);
        free(s);
        /* slot2's START refers to it: slot2 goes to its owner while slot1 is claimed. */
        wait_state(&p, "slot2", "Owner/Idle", 4);
        GLEAN_TEST_CHECK(!ok_why(claim(fd, "slot2", "slot-attrs-claim-0002", job), why, sizeof why),
                         "slot2 takes a claim while slot1 is claimed");
        GLEAN_TEST_CHECK(ok_why(claim_cmd(fd, GLEAN_CMD_RELEASE, id, NULL), why, sizeof why), "release: %s", why);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        s = slot_string(&p, "slot2", "slot1_State");
        GLEAN_TEST_CHECK(strcmp(s, "Unclaimed") == 0, "slot2's slot1_State after the release: '%s'", s);
        free(s);
        wait_state(&p, "slot2", "Unclaimed/Idle", 8);
        slot_state(&p, "slot1", st, sizeof st);
        CU_ASSERT(strcmp(st, "Unclaimed/Idle") == 0);
        classad_free(job);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static CU_TestInfo tests[] = {
        { "preemption for a better RANK", test_rank_preemption },
        { "a claim of an accounting group's job names its submitter", test_claim_accounting_group },
        { "preemption by priority needs a RANK no worse", test_priority_preemption },
        { "match and MATCH_TIMEOUT", test_match },
        { "suspension of a real job", test_suspend },
        { "keep-alives keep a short lease", test_keepalive },
        { "shutdown: graceful, fast, SIGTERM", test_shutdown },
        { "backfill", test_backfill },
        { "garbage and a flood of connections", test_garbage },
        { "STARTD_SLOT_ATTRS", test_slot_attrs },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent policy", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

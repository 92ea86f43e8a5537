/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-pool.c — a whole pool on this machine: the real glean-negotiator,
 * real glean-agents dialing it over TCP with the pool key (the fork
 * executor: no cgroups), and users driving both with the real `glean`:
 * submit, match, claim, real jobs, exit codes and usage in the history,
 * claim reuse, a user's commands relayed by the agent of a machine
 * without the central manager, a lost claim requeued and run elsewhere,
 * rm of a running job, a user refused on another's job, priorities
 * following usage, and kill -9 of the central manager in a burst of
 * submits and while jobs run.
 */
#define _GNU_SOURCE

#include <ctype.h>

#include "pool-test.h"

/* A submit file in m->jobs: "%s" is the body before queue. */
static char *submit_file(const Manager *m, const char *name, const char *body) {
        char *path = NULL, *text = NULL;
        if (asprintf(&path, "%s/%s", m->jobs, name) < 0 ||
            asprintf(&text, "universe = vanilla\ninitialdir = %s\nrequest_memory = 16\nrequest_disk = 16\n%s",
                     m->jobs, body) < 0)
                return NULL;
        write_file(path, text);
        free(text);
        return path;
}

/* `glean submit FILE`: the cluster it made, or -1. */
static int64_t submit(const Manager *m, const char *name, const char *body) {
        char *path = submit_file(m, name, body);
        char *out = gl_out("submit", path, NULL);
        int64_t cluster = -1;
        const char *p = out ? strstr(out, "submitted to cluster ") : NULL;
        if (p)
                cluster = strtoll(p + strlen("submitted to cluster "), NULL, 10);
        GLEAN_TEST_CHECK(cluster > 0, "glean submit %s: %s", path, out ? out : "(failed)");
        free(out);
        free(path);
        return cluster;
}

static char *trimmed(char *s) {
        if (!s)
                return s;
        size_t n = strlen(s);
        while (n && isspace((unsigned char) s[n - 1]))
                s[--n] = 0;
        return s;
}

static bool pid_alive(pid_t pid) {
        return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/* The n-th pid (from 1) the job wrote to the file name in m->jobs, or 0
 * after seconds. */
static pid_t read_pid(const Manager *m, const char *name, int n, int seconds) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", m->jobs, name);
        for (int i = 0; i < seconds * 10; i++) {
                char *text = NULL;
                pid_t pid = 0;
                if (glean_test_read_file(path, &text, NULL) >= 0) {
                        char *line = text;
                        for (int k = 1; k < n && line; k++)
                                line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL;
                        if (line)
                                pid = (pid_t) strtol(line, NULL, 10);
                        free(text);
                        if (pid > 0)
                                return pid;
                }
                usleep(100000);
        }
        return 0;
}

/* The jobs these tests start write their pid; whatever still runs at the
 * end (a test that failed half-way) is ended here. Only pids our jobs
 * wrote, never by name. */
static void kill_job(pid_t pid) {
        if (pid_alive(pid))
                kill(pid, SIGKILL);
}

/* ---- submit, run, exit codes, usage, claim reuse, priorities ---- */

static void test_jobs_run_and_complete(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, "PRIORITY_HALFLIFE = 10\n"));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        /* Three jobs on one slot: one claim, reused for each (CLAIM_WORKLIFE). */
        int64_t c = submit(&m, "three.sub",
                           "executable = /bin/sh\n"
                           "arguments = \"-c 'sleep 0.3; exit $(Process)'\"\n"
                           "output = out.$(Process)\nerror = err.$(Process)\n"
                           "queue 3\n");
        CU_ASSERT_FATAL(c > 0);
        char id[3][32];
        for (int i = 0; i < 3; i++)
                snprintf(id[i], sizeof id[i], "%lld.%d", (long long) c, i);

        GleanTestRun r;
        /* glean wait: the job's exit code is its exit status */
        for (int i = 0; i < 3; i++) {
                char t[8] = "60";
                CU_ASSERT_EQUAL(gl(&r, "wait", "--timeout", t, id[i], NULL), 0);
                GLEAN_TEST_CHECK(r.status == i, "glean wait %s: exit %d, want %d\n%s%s", id[i], r.status, i, r.out,
                                 r.err);
                glean_test_run_done(&r);
        }
        /* exit codes and usage in the history */
        char *out = trimmed(gl_out("history", id[2], "-af", "ProcId", "JobStatus", "ExitCode", "NumJobStarts", NULL));
        GLEAN_TEST_CHECK(out && strcmp(out, "2 4 2 1") == 0, "history of %s: \"%s\"", id[2], out ? out : "");
        free(out);
        out = trimmed(gl_out("history", id[0], "-af", "RemoteWallClockTime", NULL));
        GLEAN_TEST_CHECK(out && strtod(out, NULL) >= 0.25, "RemoteWallClockTime of %s: \"%s\"", id[0],
                         out ? out : "");
        free(out);
        out = trimmed(gl_out("history", id[1], "-af", "LastRemoteHost", NULL));
        GLEAN_TEST_CHECK(out && strstr(out, "@a.test"), "LastRemoteHost of %s: \"%s\"", id[1], out ? out : "");
        free(out);
        /* the output files, written as the job's owner where it ran */
        char path[200], *text = NULL;
        snprintf(path, sizeof path, "%s/out.2", m.jobs);
        GLEAN_TEST_CHECK(access(path, F_OK) == 0, "%s missing", path);
        /* one claim for the three jobs */
        text = read_log(&a);
        GLEAN_TEST_CHECK(count(text, "slot1: claimed by") == 1, "claims on the agent: %zu\n%s",
                         count(text, "slot1: claimed by"), text);
        free(text);
        /* the queue is empty; the user's priority moved off 0.5 with the usage */
        out = trimmed(gl_out("q", "-af", "ClusterId", NULL));
        GLEAN_TEST_CHECK(out && *out == 0, "queue not empty: \"%s\"", out ? out : "");
        free(out);
        /* the user's priority moved off 0.5 with the usage (half-life 10 s) */
        char name[128];
        snprintf(name, sizeof name, "\"name\": \"%s@test.pool\"", me());
        out = gl_out("userprio", "-allusers", "--json", NULL);
        const char *entry = out ? strstr(out, name) : NULL;
        const char *rup = entry ? strstr(entry, "\"real_priority\": ") : NULL;
        const char *acc = entry ? strstr(entry, "\"accumulated_usage_hours\": ") : NULL;
        GLEAN_TEST_CHECK(rup && strtod(rup + strlen("\"real_priority\": "), NULL) > 0.51 && acc &&
                                 strtod(acc + strlen("\"accumulated_usage_hours\": "), NULL) * 3600 > 0.8,
                         "userprio of %s: %s", name, out ? out : "(failed)");
        free(out);

        pool_stop(&a);
        manager_stop(&m);
}

/* ---- what a claim on a dynamic slot is charged ---- */

/* `glean q` jobs of cluster c in JobStatus status. */
static int count_status(int64_t c, int status) {
        char cl[32];
        snprintf(cl, sizeof cl, "%lld", (long long) c);
        char *out = gl_out("q", cl, "-af", "JobStatus", NULL);
        int n = 0;
        for (const char *p = out; p && *p; p++)
                n += (p == out || p[-1] == '\n') && atoi(p) == status && isdigit((unsigned char) *p);
        free(out);
        return n;
}

/* Issue 22's scenario on real daemons: a partitionable slot of 16 CPUs and
 * 32 GB whose SLOT_WEIGHT is floor(Memory / 4096) (weight 8), 3 GB jobs
 * (dynamic slots of weight 0), claims not reused (each job through the
 * matchmaker). Ten run at once; when the five short ones end, the five
 * still idle must start (11 CPUs and 17 GB free) while the long ones run:
 * the running claims count their slots' own weight (0) in the pie, not
 * their matches' costs (4), which filled the pie of 4 ("submitter's share
 * reached") until the long jobs ended. With groups, the same for two users
 * of one quota group (a dynamic quota of the whole pool, no surplus:
 * "group quota reached" before). */
static void dslot_weight(bool groups) {
        Manager m;
        Pool a;
        if (groups && !getpwnam("nobody")) {
                CU_PASS("no user nobody here");
                return;
        }
        CU_ASSERT_TRUE_FATAL(manager_start(&m, groups ? "SLOT_WEIGHT = floor(Memory / 4096)\nCLAIM_WORKLIFE = 0\n"
                                                        "NEGOTIATOR_INTERVAL = 1\nGROUP_NAMES = group_a\n"
                                                        "GROUP_QUOTA_DYNAMIC_group_a = 1.0\n"
                                                        "GROUP_ACCEPT_SURPLUS = False\nACCOUNTING_GROUPS_ALLOWED = group_a\n"
                                                      : "SLOT_WEIGHT = floor(Memory / 4096)\nCLAIM_WORKLIFE = 0\n"
                                                        "NEGOTIATOR_INTERVAL = 1\n"));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test",
                                            "AGENT_EXECUTOR = fork\nUPDATE_INTERVAL = 1\nNUM_CPUS = 16\n"
                                            "MEMORY = 32768\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                                            "SLOT_TYPE_1_PARTITIONABLE = True\n"),
                              "agent")) {
                manager_stop(&m);
                return;
        }
        /* short and long jobs: all the test's own, or 3 + 2 short and 5 + 5
         * long of the test's user and nobody, in group_a */
        const char *users[2] = { NULL, groups ? "nobody" : NULL };
        int n_short[2] = { groups ? 3 : 5, groups ? 2 : 0 }, n_long[2] = { groups ? 5 : 10, groups ? 5 : 0 };
        int64_t shorts[2] = { 0, 0 }, longs[2] = { 0, 0 };
        char why[2048] = "";
        for (int k = 0; k < 2 * 2; k++) {
                int who = k / 2, seconds = k % 2 ? 60 : 2, count = k % 2 ? n_long[who] : n_short[who];
                int64_t *cluster = k % 2 ? &longs[who] : &shorts[who];
                char body[512], name[32];
                if (!count)
                        continue;
                snprintf(body, sizeof body,
                         "%sexecutable = /bin/sleep\narguments = %d\nrequest_cpus = 1\n"
                         "request_memory = 3072\nrequest_disk = 1024\nqueue %d\n",
                         groups ? "accounting_group = group_a\n" : "", seconds, count);
                snprintf(name, sizeof name, "sleep%d-%d.sub", seconds, who);
                *cluster = submit_as(&m, users[who], name, body, why, sizeof why);
                GLEAN_TEST_CHECK(*cluster > 0, "submit %s: %s", name, why);
        }
        /* the short ones end (leaving the queue) */
        int left = 1;
        for (int i = 0; i < 300 && left > 0; i++) {
                left = 0;
                for (int k = 0; k < 2; k++)
                        if (shorts[k] > 0)
                                left += count_status(shorts[k], 1) + count_status(shorts[k], 2);
                if (left)
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(left == 0, "the short jobs did not end within 30 s: %d left", left);
        /* all ten long ones run at once, well before the first ends */
        int running = 0;
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < 200; i++) {
                running = 0;
                for (int k = 0; k < 2; k++)
                        if (longs[k] > 0)
                                running += count_status(longs[k], 2);
                if (running >= 10)
                        break;
                usleep(100000);
        }
        clock_gettime(CLOCK_MONOTONIC, &t1);
        GLEAN_TEST_CHECK(running == 10, "%d of the 10 long jobs run 20 s after the short ones ended", running);
        fprintf(stderr, "\n    the 10 long jobs all ran %.1f s after the short ones had left\n",
                (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9);
        /* and what is charged is what the pie holds: claims of weight 0 */
        char name[128];
        snprintf(name, sizeof name, "\"name\": \"%s%s@test.pool\"", groups ? "group_a." : "", me());
        char *out = NULL;
        const char *w = NULL;
        for (int i = 0; i < 50; i++) { /* the next cycle re-weighs the latest claims */
                free(out);
                out = gl_out("userprio", "-allusers", "--json", NULL);
                const char *entry = out ? strstr(out, name) : NULL;
                w = entry ? strstr(entry, "\"weighted_resources_in_use\": ") : NULL;
                if (w && strtod(w + strlen("\"weighted_resources_in_use\": "), NULL) == 0)
                        break;
                usleep(100000);
        }
        GLEAN_TEST_CHECK(w && strtod(w + strlen("\"weighted_resources_in_use\": "), NULL) == 0,
                         "weighted resources in use: %s", out ? out : "(failed)");
        free(out);
        for (int k = 0; k < 2; k++)
                if (longs[k] > 0) {
                        char cl[32];
                        snprintf(cl, sizeof cl, "%lld", (long long) longs[k]);
                        free(gl_out("rm", cl, NULL));
                }
        pool_stop(&a);
        manager_stop(&m);
}

static void test_dslot_weight(void) {
        dslot_weight(false);
}

static void test_dslot_weight_groups(void) {
        dslot_weight(true);
}

/* ---- the submit file's own policy: hold, on_exit_hold, periodic_remove ---- */

static void test_submit_policy(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, "PERIODIC_EXPR_INTERVAL = 1\n"));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 2\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        /* hold = true: held on arrival, runs once released */
        int64_t held = submit(&m, "held.sub", "executable = /bin/sh\narguments = \"-c 'exit 4'\"\nhold = true\n"
                                              "batch_name = nightly\nqueue\n");
        /* on_exit_hold: a failing exit is held with the job's reason */
        int64_t failing = submit(&m, "failing.sub",
                                 "executable = /bin/sh\narguments = \"-c 'exit 3'\"\n"
                                 "on_exit_hold = ExitCode != 0\n"
                                 "on_exit_hold_reason = strcat(\"failed with \", ExitCode)\n"
                                 "on_exit_hold_subcode = ExitCode\nqueue\n");
        /* periodic_remove: removed once it has run for a second */
        int64_t endless = submit(&m, "endless.sub",
                                 "executable = /bin/sh\narguments = \"-c 'echo $$ > endless.pid; exec sleep 60'\"\n"
                                 "periodic_remove = JobStatus == 2 && time() - JobCurrentStartDate >= 1\nqueue\n");
        CU_ASSERT_FATAL(held > 0 && failing > 0 && endless > 0);
        char hid[32], fid[32], eid[32];
        snprintf(hid, sizeof hid, "%lld.0", (long long) held);
        snprintf(fid, sizeof fid, "%lld.0", (long long) failing);
        snprintf(eid, sizeof eid, "%lld.0", (long long) endless);

        CU_ASSERT_TRUE(wait_attr("q", hid, "HoldReasonCode", "15", 10));
        char *out = trimmed(gl_out("q", hid, "-af", "JobStatus", "HoldReason", "JobBatchName", NULL));
        GLEAN_TEST_CHECK(out && strcmp(out, "5 submitted on hold nightly") == 0, "held on submit: \"%s\"",
                         out ? out : "");
        free(out);

        CU_ASSERT_TRUE(wait_attr("q", fid, "HoldReason", "failed with 3", 30));
        out = trimmed(gl_out("q", fid, "-af", "JobStatus", "HoldReasonCode", "HoldReasonSubCode", "ExitCode", NULL));
        GLEAN_TEST_CHECK(out && strcmp(out, "5 3 3 3") == 0, "held on exit: \"%s\"", out ? out : "");
        free(out);

        CU_ASSERT_TRUE(wait_attr("history", eid, "JobStatus", "3", 30));
        pid_t pid = read_pid(&m, "endless.pid", 1, 1);
        for (int i = 0; i < 50 && pid_alive(pid); i++)
                usleep(100000);
        GLEAN_TEST_CHECK(pid > 0 && !pid_alive(pid), "the removed job's process %d still runs", (int) pid);
        kill_job(pid);

        /* released, the held job runs and its exit is its own */
        GleanTestRun r;
        CU_ASSERT_EQUAL(gl(&r, "release", hid, NULL), 0);
        glean_test_run_done(&r);
        CU_ASSERT_EQUAL(gl(&r, "wait", "--timeout", "60", hid, NULL), 0);
        GLEAN_TEST_CHECK(r.status == 4, "glean wait %s: exit %d, want 4\n%s%s", hid, r.status, r.out, r.err);
        glean_test_run_done(&r);

        pool_stop(&a);
        manager_stop(&m);
}

/* ---- a machine that is not the central manager: through its agent ---- */

static void test_relay_through_agent(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        /* the agent relays only once it is connected to the central manager */
        CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
        /* no central manager's socket here: glean goes through the agent */
        char nosock[160];
        snprintf(nosock, sizeof nosock, "%s/not-here.sock", m.dir);
        setenv("GLEAN_NEGOTIATOR_SOCKET", nosock, 1);
        setenv("GLEAN_AGENT_SOCKET", a.sock, 1);
        int64_t c = submit(&m, "relay.sub", "executable = /bin/sh\narguments = \"-c 'exit 5'\"\nqueue\n");
        char id[32];
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        GleanTestRun r;
        CU_ASSERT_EQUAL(gl(&r, "wait", "--timeout", "60", id, NULL), 0);
        GLEAN_TEST_CHECK(r.status == 5, "glean wait %s through the agent: exit %d\n%s%s", id, r.status, r.out, r.err);
        glean_test_run_done(&r);
        /* the job is the caller's (the agent relayed who asked), not the agent's */
        char *out = trimmed(gl_out("history", id, "-af", "Owner", "ExitCode", NULL));
        char want[96];
        snprintf(want, sizeof want, "%s 5", me());
        GLEAN_TEST_CHECK(out && strcmp(out, want) == 0, "history through the agent: \"%s\", want \"%s\"",
                         out ? out : "", want);
        free(out);
        unsetenv("GLEAN_AGENT_SOCKET");
        setenv("GLEAN_NEGOTIATOR_SOCKET", m.sock, 1);
        pool_stop(&a);
        manager_stop(&m);
}

/* ---- a lost claim: the agent killed, the job runs elsewhere ---- */

static void test_lost_claim_requeued(void) {
        Manager m;
        Pool a, b;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent a")) {
                manager_stop(&m);
                return;
        }
        /* the job writes its pid (a line per run) and sleeps */
        char script[200];
        snprintf(script, sizeof script, "%s/sleeper.sh", m.jobs);
        write_file(script, "#!/bin/sh\necho $$ >> pids.$1\nexec sleep 30\n");
        chmod(script, 0755);
        char body[512];
        snprintf(body, sizeof body, "executable = %s\narguments = $(Cluster)\njob_lease_duration = 3\nqueue\n",
                 script);
        int64_t c = submit(&m, "lost.sub", body);
        CU_ASSERT_FATAL(c > 0);
        char id[32], pidfile[64];
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        snprintf(pidfile, sizeof pidfile, "pids.%lld", (long long) c);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "2", 30));
        pid_t first = read_pid(&m, pidfile, 1, 10);
        CU_ASSERT(first > 0);

        /* the only agent goes away: kill -9; a second one arrives */
        kill(a.pid, SIGKILL);
        waitpid(a.pid, NULL, 0);
        a.pid = 0;
        kill_job(first); /* the orphaned job would run on; it is ours */
        CU_ASSERT_TRUE_FATAL(manager_agent(&m, &b, "b.test", "NUM_CPUS = 1\n"));
        /* lease 3 s: back to Idle, then run on b; NumJobStarts kept and counted */
        CU_ASSERT_TRUE(wait_attr("q", id, "RemoteHost", "slot1@b.test", 40));
        CU_ASSERT_TRUE(wait_attr("q", id, "NumJobStarts", "2", 5));
        pid_t second = read_pid(&m, pidfile, 2, 10);
        GLEAN_TEST_CHECK(second > 0 && second != first, "the second run's pid %d (first %d)", (int) second,
                         (int) first);

        /* rm of the running job: its process ends, it goes to the history as Removed */
        char *out = gl_out("rm", id, NULL);
        free(out);
        CU_ASSERT_TRUE(wait_attr("history", id, "JobStatus", "3", 30));
        for (int i = 0; i < 100 && pid_alive(second); i++)
                usleep(100000);
        GLEAN_TEST_CHECK(!pid_alive(second), "the removed job (pid %d) still runs", (int) second);
        kill_job(second);
        pool_stop(&b);
        remove_dir(a.dir);
        manager_stop(&m);
}

/* ---- another user's job ---- */

static void test_other_user_refused(void) {
        if (geteuid() != 0) {
                glean_test_skip("needs root to act as another user");
                return;
        }
        Manager m;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        int64_t c = submit(&m, "idle.sub", "executable = /bin/true\nrequirements = false\nqueue\n");
        char id[32];
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        pid_t pid = fork();
        if (pid == 0) {
                uid_t nobody = nobody_uid();
                if (setgid(nobody) < 0 || setuid(nobody) < 0)
                        _exit(99);
                int fd = open("/dev/null", O_WRONLY);
                dup2(fd, 1);
                dup2(fd, 2);
                execl(bin("GLEAN", "build/bin/glean"), "glean", "rm", id, (char *) NULL);
                _exit(98);
        }
        int status = -1;
        waitpid(pid, &status, 0);
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1, "nobody's glean rm %s: wait status %d", id,
                         status);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "1", 5)); /* untouched */
        /* all of the owner's jobs, by name: refused as not theirs, not "no such jobs" */
        char out[1024];
        const char *rm_owner[] = { "rm", me(), NULL };
        int st = glean_as("nobody", out, sizeof out, rm_owner);
        GLEAN_TEST_CHECK(st != 0 && strstr(out, "the 1 job that matches is not yours") && !strstr(out, "no such jobs"),
                         "nobody's glean rm %s: exit %d: %s", me(), st, out);
        CU_ASSERT_TRUE(wait_attr("q", id, "JobStatus", "1", 5));
        manager_stop(&m);
}

/* ---- kill -9 of the central manager in a burst of submits ---- */

static void test_manager_killed_during_submits(void) {
        Manager m;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        char *path = submit_file(&m, "one.sub", "executable = /bin/true\nrequirements = false\nqueue 3\n");
        int pipefd[2];
        CU_ASSERT_FATAL(pipe(pipefd) == 0);
        pid_t child = fork();
        if (child == 0) {
                close(pipefd[0]);
                for (;;) {
                        char *argv[] = { (char *) bin("GLEAN", "build/bin/glean"), "submit", path, NULL };
                        GleanTestRun r;
                        if (glean_test_run(argv, &r) < 0)
                                _exit(1);
                        const char *p = strstr(r.out, "submitted to cluster ");
                        if (r.status == 0 && p) {
                                char line[32];
                                int n = snprintf(line, sizeof line, "%lld\n",
                                                 strtoll(p + strlen("submitted to cluster "), NULL, 10));
                                if (write(pipefd[1], line, (size_t) n) != n)
                                        _exit(1);
                        }
                        glean_test_run_done(&r);
                }
        }
        close(pipefd[1]);
        usleep(1500000);
        manager_kill9(&m);
        usleep(200000);
        kill(child, SIGKILL);
        waitpid(child, NULL, 0);
        char buf[65536];
        size_t len = 0;
        ssize_t n;
        while ((n = read(pipefd[0], buf + len, sizeof buf - 1 - len)) > 0)
                len += (size_t) n;
        buf[len] = 0;
        close(pipefd[0]);
        CU_ASSERT_TRUE_FATAL(manager_launch(&m));
        size_t acked = 0, missing = 0;
        for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                acked++;
                char *out = trimmed(gl_out("q", line, "-af", "ProcId", NULL));
                if (!out || strcmp(out, "0\n1\n2") != 0) {
                        missing++;
                        fprintf(stderr, "cluster %s after the restart: \"%s\"\n", line, out ? out : "");
                }
                free(out);
        }
        GLEAN_TEST_CHECK(acked > 0, "no submit acknowledged in 1.5 s");
        GLEAN_TEST_CHECK(missing == 0, "%zu of %zu acknowledged clusters lost", missing, acked);
        free(path);
        manager_stop(&m);
}

/* ---- the central manager killed while jobs run: they run on, once ---- */

static void test_manager_killed_while_jobs_run(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", NULL), "agent")) {
                manager_stop(&m);
                return;
        }
        char script[200], body[512];
        snprintf(script, sizeof script, "%s/runs.sh", m.jobs);
        write_file(script, "#!/bin/sh\necho $$ >> runs.$1\nsleep 4\nexit 7\n");
        chmod(script, 0755);
        snprintf(body, sizeof body, "executable = %s\narguments = $(Cluster).$(Process)\nqueue 2\n", script);
        int64_t c = submit(&m, "runs.sub", body);
        CU_ASSERT_FATAL(c > 0);
        char id[2][32];
        for (int i = 0; i < 2; i++) {
                snprintf(id[i], sizeof id[i], "%lld.%d", (long long) c, i);
                CU_ASSERT_TRUE(wait_attr("q", id[i], "JobStatus", "2", 30));
        }
        manager_kill9(&m);
        usleep(500000);
        CU_ASSERT_TRUE_FATAL(manager_launch(&m));
        /* the agent reconnects; the claims are relearned; both complete */
        for (int i = 0; i < 2; i++) {
                CU_ASSERT_TRUE(wait_attr("history", id[i], "ExitCode", "7", 60));
                char *out = trimmed(gl_out("history", id[i], "-af", "NumJobStarts", NULL));
                GLEAN_TEST_CHECK(out && strcmp(out, "1") == 0, "%s: NumJobStarts %s", id[i], out ? out : "-");
                free(out);
                char path[256], *runs = NULL;
                snprintf(path, sizeof path, "%s/runs.%s", m.jobs, id[i]);
                CU_ASSERT(glean_test_read_file(path, &runs, NULL) >= 0);
                GLEAN_TEST_CHECK(runs && count(runs, "\n") == 1, "%s ran %zu times", id[i],
                                 runs ? count(runs, "\n") : 0);
                free(runs);
        }
        pool_stop(&a);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "jobs run and complete, exit codes and usage, one claim reused", test_jobs_run_and_complete },
                { "the submit file's hold, on_exit_hold, periodic_remove and batch_name", test_submit_policy },
                { "claims on dynamic slots are charged the slots' own weight, as the pie counts them",
                  test_dslot_weight },
                { "the same for two users of a quota group", test_dslot_weight_groups },
                { "a user's commands through the agent of a machine without the central manager",
                  test_relay_through_agent },
                { "a lost claim is requeued and runs elsewhere; rm of a running job", test_lost_claim_requeued },
                { "a user is refused on another user's job", test_other_user_refused },
                { "kill -9 of the central manager during submits loses no acknowledged job",
                  test_manager_killed_during_submits },
                { "kill -9 of the central manager while jobs run: they complete, each run once",
                  test_manager_killed_while_jobs_run },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "pool", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

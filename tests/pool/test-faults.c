/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-faults.c — a pool of several machines (pool-test.h's NetPool: the
 * central manager and each agent in network namespaces of their own,
 * joined by veth pairs) under faults, each a test:
 *
 *   - a machine dies while its jobs run (kill -9 of its agent and of
 *     everything in its namespace: with the fork executor there is no
 *     cgroup to take the jobs down with the agent): the claims expire by
 *     their lease, the jobs go back to Idle and run elsewhere;
 *   - kill -9 of the central manager during cycles: the queue and the
 *     accounts intact, the running jobs run on, their claims relearned,
 *     each job run once;
 *   - kill -9 of the central manager after it read a JobExit and before it
 *     committed it (GLEAN_FAULT=kill-before-commit:JobExit): restarted, it
 *     has the exit from the agent, which kept it unacknowledged; the job
 *     completes once, with its exit code, its usage charged once;
 *   - an agent's link cut inside its namespace and restored: the jobs
 *     survive a cut shorter than their lease, and are requeued and run
 *     elsewhere after a cut longer than it;
 *   - the central manager's disk full (a small tmpfs in a mount namespace
 *     of its own): submits refused with the reason, the daemon running on,
 *     nothing lost or half-written, and submits taken again once there is
 *     room.
 *
 * Every job records each of its runs (its pid, a line in starts.C.P), and
 * the tests watch that no job ever runs twice at once.
 *
 * Needs root: skipped, loudly, otherwise.
 */
#define _GNU_SOURCE

#include "pool-test.h"

static const char manager_config[] = "NEGOTIATOR_ADDRESS =\n"
                                     "NEGOTIATOR_INTERVAL = 1\n"
                                     "UPDATE_INTERVAL = 1\n"
                                     "ALIVE_INTERVAL = 1\n";

#define MAXNODES 3

typedef struct Rig {
        NetPool np;
        Manager m;
        Pool a[MAXNODES];
        bool up[MAXNODES];
} Rig;

static bool rig_start(Rig *r, size_t nodes, const char *extra) {
        char *conf = NULL;
        memset(r, 0, sizeof *r);
        if (!netpool_new(&r->np, nodes))
                return false;
        if (asprintf(&conf, "%s%s", manager_config, extra ? extra : "") < 0 ||
            !manager_start_ns(&r->m, conf, r->np.cm)) {
                free(conf);
                netpool_free(&r->np);
                return false;
        }
        free(conf);
        write_starts_script(&r->m);
        return true;
}

/* The agent of node k (from 0), "nodeK+1.test", with cpus slots. */
static bool rig_agent(Rig *r, size_t k, int cpus) {
        char name[32], extra[128];
        snprintf(name, sizeof name, "node%zu.test", k + 1);
        snprintf(extra, sizeof extra, "NUM_CPUS = %d\nUPDATE_INTERVAL = 1\nALIVE_INTERVAL = 1\n", cpus);
        r->up[k] = netpool_agent(&r->np, k, &r->m, &r->a[k], name, extra);
        return GLEAN_TEST_CHECK(r->up[k], "agent %s", name);
}

static void rig_stop(Rig *r) {
        for (size_t k = 0; k < MAXNODES; k++)
                if (r->up[k])
                        pool_stop(&r->a[k]);
        manager_stop(&r->m);
        netpool_free(&r->np);
}

/* Submits n jobs of the test's user running starts.sh (sleep seconds,
 * exit code) with a lease of lease seconds; their ids in ids[] ("C.P").
 * The cluster or -1. The lease is set as the job's attribute: submit's
 * job_lease_duration, as condor_submit's, is at least 20 s, which would
 * make the suite slow. */
static int64_t submit_runs(Rig *r, int n, int seconds, int lease, char ids[][32]) {
        char body[512];
        snprintf(body, sizeof body,
                 "executable = %s/starts.sh\narguments = $(Cluster).$(Process) %d 0\n+JobLeaseDuration = %d\n"
                 "queue %d\n",
                 r->m.jobs, seconds, lease, n);
        int64_t c = submit_as(&r->m, NULL, "runs.sub", body, NULL, 0);
        if (!GLEAN_TEST_CHECK(c > 0, "submit"))
                return -1;
        for (int i = 0; i < n; i++)
                snprintf(ids[i], 32, "%lld.%d", (long long) c, i);
        return c;
}

static char *attr(const char *verb, const char *id, const char *name) {
        return pool_trim(gl_out(verb, id, "-af", name, NULL));
}

typedef struct Done {
        char (*ids)[32];
        size_t n;
} Done;

/* Every job of d in the history. */
static bool all_done(void *arg) {
        Done *d = arg;
        for (size_t i = 0; i < d->n; i++) {
                char *argv[] = { (char *) bin("GLEAN", "build/bin/glean"), "history", d->ids[i], "-af", "JobStatus", NULL };
                GleanTestRun run;
                bool done = glean_test_run(argv, &run) == 0 && run.status == 0 && strncmp(run.out, "4", 1) == 0;
                if (run.out)
                        glean_test_run_done(&run);
                if (!done)
                        return false;
        }
        return true;
}

/* ---- a machine dies while its jobs run ---- */

static void test_agent_killed(void) {
        Rig r;
        char ids[2][32];
        CU_ASSERT_TRUE_FATAL(rig_start(&r, 2, NULL));
        if (!rig_agent(&r, 0, 2) || submit_runs(&r, 2, 3, 4, ids) < 0)
                goto out;
        for (int i = 0; i < 2; i++)
                if (!wait_attr("q", ids[i], "JobStatus", "2", 20))
                        goto out;
        for (int i = 0; i < 2; i++) {
                pid_t pid = 0;
                for (int k = 0; k < 50 && job_starts(&r.m, ids[i], &pid, 1) < 1; k++)
                        usleep(100000);
                GLEAN_TEST_CHECK(pid > 0, "job %s did not record its start", ids[i]);
        }
        if (!rig_agent(&r, 1, 2))
                goto out;
        /* node1 dies: its agent and everything else in its namespace. */
        netns_kill_all(r.np.node[0].ns);
        waitpid(r.a[0].pid, NULL, 0);
        r.a[0].pid = 0;
        pool_stop(&r.a[0]);
        r.up[0] = false;
        /* Lease 4 s: back to Idle, then on node2; never twice at once. */
        Done d = { ids, 2 };
        CU_ASSERT_TRUE(never_twice(&r.m, ids, 2, 40, all_done, &d));
        for (int i = 0; i < 2; i++) {
                char *host = attr("history", ids[i], "LastRemoteHost"), *starts = attr("history", ids[i], "NumJobStarts");
                pid_t pids[4];
                size_t runs = job_starts(&r.m, ids[i], pids, 4);
                GLEAN_TEST_CHECK(host && strstr(host, "@node2.test") && starts && strcmp(starts, "2") == 0 && runs == 2,
                                 "job %s: last on %s, NumJobStarts %s, %zu runs recorded", ids[i], host ? host : "-",
                                 starts ? starts : "-", runs);
                free(host);
                free(starts);
        }
out:
        rig_stop(&r);
}

/* ---- kill -9 of the central manager during cycles ---- */

static void test_manager_killed(void) {
        Rig r;
        char ids[8][32], more[2][32];
        CU_ASSERT_TRUE_FATAL(rig_start(&r, 2, NULL));
        if (!rig_agent(&r, 0, 2) || !rig_agent(&r, 1, 2) || submit_runs(&r, 8, 3, 30, ids) < 0)
                goto out;
        /* The accounts: a factor set for the user. */
        char sub[96];
        snprintf(sub, sizeof sub, "%s@test.pool", me());
        for (int i = 0; i < 50; i++) {
                char *o = gl_out("userprio", "-allusers", NULL);
                bool known = o && strstr(o, sub);
                free(o);
                if (known)
                        break;
                usleep(100000);
        }
        char *o = gl_out("userprio", "-setfactor", sub, "3", NULL);
        free(o);
        /* Four run, four wait. */
        size_t running = 0;
        for (int i = 0; i < 100 && running < 4; i++) {
                char *q = gl_out("q", "-constraint", "JobStatus == 2", "-af", "ClusterId", NULL);
                running = q ? count(q, "\n") : 0;
                free(q);
                usleep(100000);
        }
        GLEAN_TEST_CHECK(running == 4, "%zu of 8 jobs running, want 4", running);
        /* Killed right after a submit (which asks for a cycle at once), twice. */
        for (int round = 0; round < 2; round++) {
                char body[256], name[32];
                snprintf(body, sizeof body, "executable = %s/starts.sh\narguments = $(Cluster).$(Process) 1 0\nqueue\n",
                         r.m.jobs);
                snprintf(name, sizeof name, "more%d.sub", round);
                int64_t c = submit_as(&r.m, NULL, name, body, NULL, 0);
                usleep((useconds_t) (round * 30000));
                manager_kill9(&r.m);
                GLEAN_TEST_CHECK(c > 0, "submit before the kill");
                snprintf(more[round], sizeof more[round], "%lld.0", (long long) c);
                usleep(300000);
                CU_ASSERT_TRUE_FATAL(manager_launch(&r.m));
                /* Acknowledged: there (queue or history). */
                char *q = attr("q", more[round], "ProcId"), *h = q && *q ? NULL : attr("history", more[round], "ProcId");
                GLEAN_TEST_CHECK((q && strcmp(q, "0") == 0) || (h && strcmp(h, "0") == 0),
                                 "job %s acknowledged, not there after the restart", more[round]);
                free(q);
                free(h);
        }
        /* The accounts: the factor kept. */
        o = gl_out("userprio", "-allusers", "--json", NULL);
        const char *e = o ? strstr(o, sub) : NULL, *f = e ? strstr(e, "\"priority_factor\": ") : NULL;
        GLEAN_TEST_CHECK(f && strtod(f + strlen("\"priority_factor\": "), NULL) == 3, "the factor of %s lost:\n%s", sub,
                         o ? o : "");
        free(o);
        /* Every job completes, each run once, never twice at once. */
        char all[10][32];
        memcpy(all, ids, sizeof ids);
        memcpy(all[8], more[0], 32);
        memcpy(all[9], more[1], 32);
        Done d = { all, 10 };
        CU_ASSERT_TRUE(never_twice(&r.m, all, 10, 60, all_done, &d));
        for (int i = 0; i < 10; i++) {
                pid_t pids[4];
                size_t runs = job_starts(&r.m, all[i], pids, 4);
                char *s = attr("history", all[i], "NumJobStarts");
                GLEAN_TEST_CHECK(runs == 1 && s && strcmp(s, "1") == 0, "job %s: %zu runs, NumJobStarts %s", all[i], runs,
                                 s ? s : "-");
                free(s);
        }
out:
        rig_stop(&r);
}

/* ---- kill -9 of the central manager between a JobExit and its commit ---- */

static double mono_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The test's user's account in `glean userprio --json`: claims in use and
 * usage (seconds). */
static bool user_usage(double *ret_in_use, double *ret_usage) {
        char sub[96];
        snprintf(sub, sizeof sub, "\"%s@test.pool\"", me());
        char *o = gl_out("userprio", "-allusers", "--json", NULL);
        const char *e = o ? strstr(o, sub) : NULL;
        const char *in_use = e ? strstr(e, "\"weighted_resources_in_use\": ") : NULL;
        const char *usage = e ? strstr(e, "\"accumulated_usage_hours\": ") : NULL;
        bool ok = in_use && usage;
        if (ok) {
                *ret_in_use = strtod(in_use + strlen("\"weighted_resources_in_use\": "), NULL);
                *ret_usage = 3600 * strtod(usage + strlen("\"accumulated_usage_hours\": "), NULL);
        } else
                fprintf(stderr, "no account %s in:\n%s", sub, o ? o : "");
        free(o);
        return ok;
}

static void test_manager_killed_before_commit(void) {
        Rig r;
        char ids[1][32], body[512];
        /* The fault for the central manager's first start only. */
        setenv("GLEAN_FAULT", "kill-before-commit:JobExit", 1);
        bool up = rig_start(&r, 1, NULL);
        unsetenv("GLEAN_FAULT");
        CU_ASSERT_TRUE_FATAL(up);
        if (!rig_agent(&r, 0, 1))
                goto out;
        /* One job: a line in starts.C.P, 2 s, exit 7. Another that never
         * runs keeps the user's account while the first is done. */
        double t0 = mono_now();
        snprintf(body, sizeof body,
                 "executable = %s/starts.sh\narguments = $(Cluster).$(Process) 2 7\n+JobLeaseDuration = 60\nqueue\n",
                 r.m.jobs);
        int64_t c = submit_as(&r.m, NULL, "exit7.sub", body, NULL, 0);
        int64_t idle = submit_as(&r.m, NULL, "idle.sub", "executable = /bin/true\nrequirements = false\nqueue\n", NULL,
                                 0);
        if (!GLEAN_TEST_CHECK(c > 0 && idle > 0, "submit"))
                goto out;
        snprintf(ids[0], sizeof ids[0], "%lld.0", (long long) c);
        /* Its exit read, the central manager dies before committing it. */
        int status = -1;
        for (int i = 0; i < 400 && r.m.pid > 0; i++) {
                if (waitpid(r.m.pid, &status, WNOHANG) == r.m.pid)
                        r.m.pid = 0;
                else
                        usleep(50000);
        }
        if (!GLEAN_TEST_CHECK(r.m.pid == 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                              "the central manager did not kill itself at the job's exit (wait status %d)", status))
                goto out;
        char *log = NULL;
        glean_test_read_file(r.m.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "GLEAN_FAULT: killed before committing a batch that took a JobExit"),
                         "the fault's record:\n%s", log ? log : "");
        free(log);
        pid_t pids[4];
        GLEAN_TEST_CHECK(job_starts(&r.m, ids[0], pids, 4) == 1 && job_running_now(&r.m, ids[0]) == 0,
                         "job %s ran once and ended before the kill", ids[0]);
        /* Back: the agent's claim relearned, the exit it kept taken. */
        CU_ASSERT_TRUE_FATAL(manager_launch(&r.m));
        Done d = { ids, 1 };
        CU_ASSERT_TRUE(never_twice(&r.m, ids, 1, 60, all_done, &d));
        double t1 = mono_now();
        size_t runs = job_starts(&r.m, ids[0], pids, 4);
        char *h = gl_out("history", ids[0], "-af", "ClusterId", NULL);
        char *code = attr("history", ids[0], "ExitCode"), *starts = attr("history", ids[0], "NumJobStarts");
        GLEAN_TEST_CHECK(runs == 1 && h && count(h, "\n") == 1 && code && strcmp(code, "7") == 0 && starts &&
                                 strcmp(starts, "1") == 0,
                         "job %s: %zu runs, %zu history entries, ExitCode %s, NumJobStarts %s", ids[0], runs,
                         h ? count(h, "\n") : 0, code ? code : "-", starts ? starts : "-");
        free(h);
        free(code);
        free(starts);
        /* Charged once: no claim left, no more usage than the time it could have run. */
        double in_use = -1, usage = -1;
        GLEAN_TEST_CHECK(user_usage(&in_use, &usage) && in_use == 0 && usage > 0 && usage <= t1 - t0 + 1,
                         "the account: %g claims, usage %.1f s over %.1f s", in_use, usage, t1 - t0);
out:
        rig_stop(&r);
}

/* ---- an agent's link cut and restored ---- */

/* Runs one job (sleep seconds, lease lease) on node1, cuts node1's link
 * for cut seconds, restores it. node2 is there to run it elsewhere. */
static void link_cut(int seconds, int lease, int cut, bool requeued) {
        Rig r;
        char ids[1][32];
        CU_ASSERT_TRUE_FATAL(rig_start(&r, 2, NULL));
        if (!rig_agent(&r, 0, 1) || submit_runs(&r, 1, seconds, lease, ids) < 0)
                goto out;
        if (!wait_attr("q", ids[0], "RemoteHost", "slot1@node1.test", 20))
                goto out;
        pid_t first = 0;
        for (int k = 0; k < 50 && job_starts(&r.m, ids[0], &first, 1) < 1; k++)
                usleep(100000);
        if (!rig_agent(&r, 1, 1) || !netpool_link(&r.np, 0, false))
                goto out;
        CU_ASSERT_TRUE(never_twice(&r.m, ids, 1, cut, NULL, NULL));
        netpool_link(&r.np, 0, true);
        Done d = { ids, 1 };
        CU_ASSERT_TRUE(never_twice(&r.m, ids, 1, 60, all_done, &d));
        pid_t pids[4];
        size_t runs = job_starts(&r.m, ids[0], pids, 4);
        char *host = attr("history", ids[0], "LastRemoteHost"), *starts = attr("history", ids[0], "NumJobStarts");
        if (requeued)
                GLEAN_TEST_CHECK(runs == 2 && host && strstr(host, "@node2.test") && starts && strcmp(starts, "2") == 0,
                                 "a cut of %d s, lease %d s: %zu runs, last on %s, NumJobStarts %s", cut, lease, runs,
                                 host ? host : "-", starts ? starts : "-");
        else
                GLEAN_TEST_CHECK(runs == 1 && host && strstr(host, "@node1.test") && starts && strcmp(starts, "1") == 0,
                                 "a cut of %d s, lease %d s: %zu runs, last on %s, NumJobStarts %s", cut, lease, runs,
                                 host ? host : "-", starts ? starts : "-");
        free(host);
        free(starts);
out:
        rig_stop(&r);
}

static void test_link_cut_short(void) {
        link_cut(6, 8, 3, false);
}

static void test_link_cut_long(void) {
        /* The first run would sleep 30 s: it is the agent that ends it, at its lease. */
        link_cut(30, 4, 10, true);
}

/* ---- kill -9 of the central manager around submits ---- */

/* `glean submit [--socket S] m->jobs/NAME` started, its output to
 * m->jobs/NAME.out; its pid. */
static pid_t submit_start(const Manager *m, const char *socket, const char *name, const char *body) {
        char path[256], out[300], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", m->jobs, name);
        snprintf(out, sizeof out, "%s.out", path);
        if (asprintf(&text, "universe = vanilla\ninitialdir = %s\nrequest_memory = 16\nrequest_disk = 16\n%s", m->jobs,
                     body) < 0)
                return -1;
        write_file(path, text);
        free(text);
        pid_t pid = fork();
        if (pid == 0) {
                int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
                if (fd < 0)
                        _exit(126);
                dup2(fd, 1);
                dup2(fd, 2);
                const char *g = bin("GLEAN", "build/bin/glean");
                if (socket)
                        execl(g, g, "submit", "--socket", socket, path, (char *) NULL);
                else
                        execl(g, g, "submit", path, (char *) NULL);
                _exit(127);
        }
        return pid;
}

/* Waits for the submit started as pid (up to seconds): its exit code
 * (-1: still running, killed) and its output in *ret_out. */
static int submit_wait(const Manager *m, pid_t pid, const char *name, int seconds, char **ret_out) {
        char out[300];
        int status = -1, code = -1;
        for (int i = 0; i < seconds * 20; i++) {
                if (waitpid(pid, &status, WNOHANG) == pid) {
                        code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                        break;
                }
                usleep(50000);
        }
        if (code == -1) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
        snprintf(out, sizeof out, "%s/%s.out", m->jobs, name);
        *ret_out = NULL;
        if (glean_test_read_file(out, ret_out, NULL) < 0)
                *ret_out = strdup("");
        return code;
}

/* The clusters in the queue whose TestRound is round: how many, and
 * their jobs (lines of `glean q -af ClusterId`) in *ret_jobs. */
static size_t round_clusters(int round, size_t *ret_jobs) {
        char cons[64];
        snprintf(cons, sizeof cons, "TestRound == %d", round);
        char *q = gl_out("q", "-constraint", cons, "-af", "ClusterId", NULL);
        size_t jobs = 0, clusters = 0;
        long last = -1;
        for (char *p = q; p && *p;) {
                long c = strtol(p, &p, 10);
                jobs++;
                clusters += c != last;
                last = c;
                while (*p == '\n')
                        p++;
        }
        free(q);
        *ret_jobs = jobs;
        return clusters;
}

/* The manager killed itself (the fault) within seconds. */
static bool manager_died(Manager *m, int seconds) {
        for (int i = 0; m->pid > 0 && i < seconds * 20; i++) {
                int status;
                if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
                        m->pid = 0;
                        return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
                }
                usleep(50000);
        }
        return false;
}

/* One submit whose answer the manager never sent (killed right after its
 * commit): glean submit sends it again, with its id, to the manager
 * started again, and reports the cluster; the jobs are there once. */
static void submit_answer_lost(Manager *m, const char *socket, int round, int procs, const char *args) {
        char body[512], name[32], *out = NULL;
        size_t jobs = 0;
        snprintf(body, sizeof body,
                 "executable = /bin/true\narguments = $(Process) %s\nrequirements = false\n+TestRound = %d\nqueue %d\n",
                 args, round, procs);
        snprintf(name, sizeof name, "lost%d.sub", round);
        manager_kill9(m); /* to start it again with the fault armed */
        setenv("GLEAN_FAULT", "kill-after-commit:Submit", 1);
        bool up = manager_launch(m);
        unsetenv("GLEAN_FAULT");
        if (!GLEAN_TEST_CHECK(up, "round %d: the manager did not start", round))
                return;
        /* Through an agent: once it is connected to the manager again. */
        for (int i = 0; socket && i < 100; i++) {
                GleanTestRun run;
                bool ready = gl(&run, "q", "--socket", socket, NULL) == 0 && run.status == 0;
                if (run.out)
                        glean_test_run_done(&run);
                if (ready)
                        break;
                usleep(100000);
        }
        pid_t pid = submit_start(m, socket, name, body);
        bool died = manager_died(m, 20);
        GLEAN_TEST_CHECK(died, "round %d: the manager did not kill itself after the submit's commit", round);
        usleep(300000);
        if (!GLEAN_TEST_CHECK(manager_launch(m), "round %d: restart", round))
                return;
        int code = submit_wait(m, pid, name, 60, &out);
        /* The retries are told apart from a first try: a repeat. */
        GLEAN_TEST_CHECK(strstr(out, "sending the submission again"), "round %d: no retry said:\n%s", round, out);
        char want[64];
        snprintf(want, sizeof want, "%d job(s) submitted to cluster ", procs);
        size_t clusters = round_clusters(round, &jobs);
        GLEAN_TEST_CHECK(code == 0 && strstr(out, want) && !strstr(out, "nothing was queued"),
                         "round %d%s: glean submit exit %d:\n%s", round, socket ? " (through the agent)" : "", code,
                         out);
        GLEAN_TEST_CHECK(clusters == 1 && jobs == (size_t) procs, "round %d: %zu clusters, %zu jobs in the queue, want 1, %d",
                         round, clusters, jobs, procs);
        free(out);
}

static void test_submit_answer_lost(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, "SUBMIT_RETRY_TIME = 60\nNEGOTIATOR_INTERVAL = 1\n"));
        /* Straight to the manager's socket, one part. */
        submit_answer_lost(&m, NULL, 1, 3, "x");
        /* Through the agent, in several parts (each under the frame limit):
         * the agent says the connection was lost, the client sends again. */
        bool agent = GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\nUPDATE_INTERVAL = 1\n"), "agent");
        if (agent) {
                char pad[301];
                memset(pad, 'p', 300);
                pad[300] = 0;
                submit_answer_lost(&m, a.sock, 2, 5000, pad);
                char *log = NULL;
                glean_test_read_file(m.log, &log, NULL);
                GLEAN_TEST_CHECK(log && strstr(log, "GLEAN_FAULT: killed after committing a batch that queued a Submit"),
                                 "the fault did not happen");
                free(log);
                pool_stop(&a);
        }
        manager_stop(&m);
}

#define KILLS_PROCS 3000

/* kill -9 of the manager at moments around submits, round after round:
 * every submit glean reports queued is in the queue once, none it reports
 * not queued is there, and no retry made a second cluster. */
static void test_submit_kills(void) {
        Manager m;
        int queued = 0, refused = 0, unknown = 0, retried = 0;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, "SUBMIT_RETRY_TIME = 60\n"));
        for (int round = 1; round <= 12; round++) {
                char body[256], name[32], *out = NULL;
                size_t jobs = 0;
                snprintf(body, sizeof body,
                         "executable = /bin/true\narguments = $(Process)\nrequirements = false\n+TestRound = %d\n"
                         "queue %d\n",
                         round, KILLS_PROCS);
                snprintf(name, sizeof name, "kill%d.sub", round);
                pid_t pid = submit_start(&m, NULL, name, body);
                /* 0 to 550 ms: before, during and after the submit's commit
                 * (its KILLS_PROCS procs take tens of ms to apply). */
                usleep((useconds_t) ((round * 50) % 600) * 1000);
                manager_kill9(&m);
                usleep(200000);
                CU_ASSERT_TRUE_FATAL(manager_launch(&m));
                int code = submit_wait(&m, pid, name, 90, &out);
                size_t clusters = round_clusters(round, &jobs);
                char want[64];
                snprintf(want, sizeof want, "%d job(s) submitted to cluster ", KILLS_PROCS);
                bool said_queued = code == 0 && strstr(out, want);
                bool said_not = strstr(out, "nothing was queued") != NULL;
                bool said_unknown = strstr(out, "outcome is unknown") != NULL;
                retried += strstr(out, "sending the submission again") != NULL;
                queued += said_queued;
                refused += said_not;
                unknown += said_unknown;
                GLEAN_TEST_CHECK(said_queued || said_not || said_unknown, "round %d: exit %d:\n%s", round, code, out);
                GLEAN_TEST_CHECK(clusters <= 1 && jobs == KILLS_PROCS * clusters, "round %d: %zu clusters (%zu jobs): a duplicate",
                                 round, clusters, jobs);
                GLEAN_TEST_CHECK(!said_queued || clusters == 1, "round %d: reported queued, not in the queue:\n%s", round,
                                 out);
                GLEAN_TEST_CHECK(!said_not || clusters == 0, "round %d: reported not queued, but it is:\n%s", round,
                                 out);
                free(out);
        }
        fprintf(stderr, "(%d queued, %d of them after a lost answer; %d not queued, %d unknown of 12) ", queued, retried,
                refused, unknown);
        GLEAN_TEST_CHECK(unknown == 0, "%d outcomes unknown although the manager came back at once", unknown);
        manager_stop(&m);
}

/* ---- the central manager's disk full ---- */

static bool manager_alive(Manager *m) {
        int status;
        return m->pid > 0 && waitpid(m->pid, &status, WNOHANG) == 0;
}

static void test_disk_full(void) {
        Manager m;
        Pool a;
        char state[160], filler[256];
        int mntns = -1;
        pid_t holder = 0;
        /* The database on a small tmpfs only the central manager sees. */
        CU_ASSERT_TRUE_FATAL(manager_prepare(&m, NULL));
        snprintf(state, sizeof state, "%s/state", m.dir);
        mkdir(state, 0755);
        char *conf = NULL;
        if (asprintf(&conf, "NEGOTIATOR_DATABASE = %s/negotiator.db\nNEGOTIATOR_INTERVAL = 1\n", state) < 0)
                return;
        FILE *f = fopen(m.conf, "ae");
        fputs(conf, f);
        fclose(f);
        free(conf);
        holder = tmpfs_ns(state, "8m", &mntns);
        CU_ASSERT_FATAL(holder > 0);
        m.mntns = mntns;
        if (!manager_launch(&m)) {
                tmpfs_ns_end(holder, mntns);
                manager_stop(&m);
                CU_FAIL_FATAL("the central manager did not start");
        }
        /* Invisible here: the tmpfs is the manager's alone. */
        char dbpath[200];
        snprintf(dbpath, sizeof dbpath, "%s/negotiator.db", state);
        GLEAN_TEST_CHECK(access(dbpath, F_OK) < 0, "%s is visible outside the central manager's namespace", dbpath);
        bool agent = GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\nUPDATE_INTERVAL = 1\n"), "agent");
        write_starts_script(&m);
        char run_id[1][32];
        char body[512];
        /* It ends while the disk is full: its exit is recorded once there is room. */
        snprintf(body, sizeof body, "executable = %s/starts.sh\narguments = $(Cluster).$(Process) 3 0\nqueue\n", m.jobs);
        int64_t c = submit_as(&m, NULL, "run.sub", body, NULL, 0);
        snprintf(run_id[0], sizeof run_id[0], "%lld.0", (long long) c);
        int64_t idle = submit_as(&m, NULL, "idle.sub", "executable = /bin/true\nrequirements = false\nqueue 3\n", NULL, 0);
        CU_ASSERT(c > 0 && idle > 0);
        wait_attr("q", run_id[0], "JobStatus", "2", 20);

        /* Fill it, through the manager's root. */
        snprintf(filler, sizeof filler, "/proc/%d/root%s/filler", (int) holder, state);
        int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        CU_ASSERT_FATAL(fd >= 0);
        static char block[65536];
        ssize_t k;
        while ((k = write(fd, block, sizeof block)) > 0)
                ;
        while ((k = write(fd, block, 512)) > 0)
                ;
        close(fd);
        /* Submits: refused with the reason (the first ones may still fit in
         * what the database's log holds), the daemon running on. */
        size_t n_acked = 0;
        char why[2048] = "";
        bool refused = false;
        for (int i = 0; i < 8 && !refused; i++) {
                int64_t x = submit_as(&m, NULL, "more.sub", "executable = /bin/true\nrequirements = false\nqueue 50\n",
                                      why, sizeof why);
                if (x > 0)
                        n_acked++;
                refused = x == 0;
        }
        GLEAN_TEST_CHECK(refused && strstr(why, "disk is full") && strstr(why, "cannot write its database"),
                         "a submit on a full disk: %s", refused ? why : "never refused");
        GLEAN_TEST_CHECK(manager_alive(&m), "the central manager stopped on a full disk");
        /* Reads still answer; what was acknowledged is there, nothing else. */
        char *q = gl_out("q", "-af", "ClusterId", NULL);
        size_t want = 1 + 3 + 50 * n_acked;
        GLEAN_TEST_CHECK(q && count(q, "\n") == want, "%zu jobs in the queue, want %zu:\n%s", q ? count(q, "\n") : 0,
                         want, q ? q : "");
        free(q);
        char *log = NULL;
        glean_test_read_file(m.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "cannot commit to") && strstr(log, "running on"), "the log:\n%s",
                         log ? log : "");
        free(log);

        /* The job ends on the full disk: its exit cannot be recorded yet. */
        for (int i = 0; i < 50 && job_running_now(&m, run_id[0]) > 0; i++)
                usleep(100000);
        sleep(2);
        GLEAN_TEST_CHECK(manager_alive(&m), "the central manager stopped on a full disk");

        /* Room again: submits taken. */
        CU_ASSERT(unlink(filler) == 0);
        int64_t after = 0;
        for (int i = 0; i < 20 && after <= 0; i++) {
                after = submit_as(&m, NULL, "after.sub", "executable = /bin/true\nrequirements = false\nqueue\n", why,
                                  sizeof why);
                if (after <= 0)
                        usleep(250000);
        }
        GLEAN_TEST_CHECK(after > 0, "no submit taken once there was room: %s", why);
        /* The running job ran on and completed, once. */
        Done d = { run_id, 1 };
        CU_ASSERT_TRUE(never_twice(&m, run_id, 1, 40, all_done, &d));
        pid_t pids[4];
        size_t runs = job_starts(&m, run_id[0], pids, 4);
        char *s = attr("history", run_id[0], "NumJobStarts");
        GLEAN_TEST_CHECK(runs == 1 && s && strcmp(s, "1") == 0, "job %s: %zu runs, NumJobStarts %s", run_id[0], runs,
                         s ? s : "-");
        free(s);
        /* Nothing half-written: a restart (kill -9) opens the database and finds it all. */
        manager_kill9(&m);
        if (GLEAN_TEST_CHECK(manager_launch(&m), "restart after the full disk")) {
                q = gl_out("q", "-af", "ClusterId", NULL);
                want = 3 + 50 * n_acked + 1;
                GLEAN_TEST_CHECK(q && count(q, "\n") == want, "after the restart %zu jobs in the queue, want %zu:\n%s",
                                 q ? count(q, "\n") : 0, want, q ? q : "");
                free(q);
        }
        if (agent)
                pool_stop(&a);
        manager_stop(&m);
        tmpfs_ns_end(holder, mntns);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "a machine dies while its jobs run: requeued at the end of their lease, run elsewhere, never twice",
                  test_agent_killed },
                { "kill -9 of the central manager during cycles: queue and accounts intact, jobs run on, once",
                  test_manager_killed },
                { "kill -9 of the central manager between a JobExit and its commit: the job completes once",
                  test_manager_killed_before_commit },
                { "an agent's link cut for less than the lease: its job survives", test_link_cut_short },
                { "an agent's link cut for longer than the lease: its job is requeued and runs elsewhere, never twice",
                  test_link_cut_long },
                { "the central manager's disk full: submits refused with the reason, nothing lost, taken again after",
                  test_disk_full },
                { "a submit's answer lost (kill -9 after its commit): sent again, queued once, reported queued",
                  test_submit_answer_lost },
                { "kill -9 of the central manager around submits: what glean reports is what the queue holds, once",
                  test_submit_kills },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "faults", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        char why[200];
        if (netpool_unavailable(why, sizeof why))
                return glean_test_skip("%s", why);
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-jobclient.c — the job verbs as a user runs them (the real glean
 * binary: $GLEAN, else build/bin/glean) against a fake central manager:
 * a forked process of this test that listens on a unix socket in a
 * private directory and answers each request as the test scripts it
 * (listings in pieces, refusals, exits, malformed frames). Also: nothing
 * listening, and usage errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classad/classad.h"
#include "common/proto.h"
#include "test-util.h"

static char dir[64], sock_path[96], agent_path[96], conf_path[96];
static const char *glean;

/* ---- the fake central manager ---- */

/* Answers one request on fd; returns < 0 to close the connection. */
typedef int (*Handler)(int fd, const ClassAd *req, GleanCommand cmd);

static ClassAd *parse(const char *text) {
        ClassAd *a = NULL;

        if (classad_parse(text, strlen(text), CA_MODE_OLD, &a, NULL) < 0)
                abort();
        return a;
}

/* A Reply to req with the attributes of extra ("[ ... ]") added. */
static int reply(int fd, const ClassAd *req, bool ok, const char *reason, const char *extra) {
        ClassAd *rep = NULL;
        int r = glean_msg_reply(req, ok, reason, &rep);

        if (r < 0)
                return r;
        if (extra) {
                ClassAd *x = parse(extra);
                classad_update(rep, x);
                classad_free(x);
        }
        r = glean_msg_send(fd, rep, 5000);
        classad_free(rep);
        return r;
}

static void serve_connection(int fd, Handler h) {
        ClassAd *msg = NULL, *hello = NULL;
        GleanCommand cmd;
        char why[256];

        if (glean_msg_recv(fd, 5000, &msg, &cmd, why, sizeof why) < 0 || cmd != GLEAN_CMD_HELLO)
                return;
        classad_free(msg);
        if (glean_hello_new("glean-negotiator", &hello) < 0 || glean_msg_send(fd, hello, 5000) < 0)
                return;
        classad_free(hello);
        while (glean_msg_recv(fd, 10000, &msg, &cmd, why, sizeof why) >= 0) {
                int r = h(fd, msg, cmd);
                classad_free(msg);
                if (r < 0)
                        break;
        }
}

/* Forks the server: it accepts connections on path until killed. */
static pid_t start_server_at(const char *path, Handler h) {
        int lfd;
        pid_t pid;

        unlink(path);
        GLEAN_TEST_CHECK_FATAL(glean_sock_listen_unix(path, 0666, &lfd) == 0, "listen on %s", path);
        fflush(NULL);
        pid = fork();
        if (pid == 0) {
                for (;;) {
                        struct pollfd p = { .fd = lfd, .events = POLLIN };
                        if (poll(&p, 1, 30000) <= 0)
                                _exit(0);
                        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                        if (fd < 0)
                                continue;
                        serve_connection(fd, h);
                        close(fd);
                }
        }
        close(lfd);
        CU_ASSERT_FATAL(pid > 0);
        return pid;
}

static pid_t start_server(Handler h) {
        return start_server_at(sock_path, h);
}

static void stop_server_at(pid_t pid, const char *path) {
        int status;

        kill(pid, SIGTERM);
        waitpid(pid, &status, 0);
        unlink(path);
}

static void stop_server(pid_t pid) {
        stop_server_at(pid, sock_path);
}

/* Runs glean with up to 8 arguments. */
static void run(GleanTestRun *out, const char *a1, const char *a2, const char *a3, const char *a4, const char *a5) {
        char *argv[8] = { (char *) glean, (char *) a1, (char *) a2, (char *) a3, (char *) a4, (char *) a5, NULL };

        GLEAN_TEST_CHECK_FATAL(glean_test_run(argv, out) == 0, "could not run %s", glean);
}

#define EXPECT(run, st, what)                                                                              \
        GLEAN_TEST_CHECK((run).status == (st), "%s: exit %d, want %d; stdout:\n%s\nstderr:\n%s", what,   \
                         (run).status, (st), (run).out, (run).err)

/* ---- glean q: a listing in three pieces ---- */

static int q_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        int64_t limit = -1;

        if (cmd != GLEAN_CMD_QUERY)
                return reply(fd, req, false, "unexpected command", NULL);
        if (classad_eval_int(req, "Limit", CA_MODE_OLD, &limit) >= 0 && limit == 0)
                return reply(fd, req, true, NULL, "[ Ads = {}; Count = 10 ]"); /* every state: 10 */
        if (reply(fd, req, true, NULL,
                  "[ More = true; Ads = { [ ClusterId = 3; ProcId = 0; Owner = \"alice\"; QDate = 1795570000; "
                  "JobStatus = 1 ] } ]") < 0 ||
            reply(fd, req, true, NULL,
                  "[ More = true; Ads = { [ ClusterId = 3; ProcId = 1; Owner = \"alice\"; QDate = 1795570000; "
                  "JobStatus = 2 ] } ]") < 0)
                return -1;
        return reply(fd, req, true, NULL,
                     "[ More = false; Count = 3; Ads = { [ ClusterId = 3; ProcId = 2; Owner = \"alice\"; "
                     "QDate = 1795570000; JobStatus = 1; Cmd = \"/bin/sleep\"; Args = \"5\" ] } ]");
}

static void test_q_pieces(void) {
        pid_t pid = start_server(q_handler);
        GleanTestRun r;

        run(&r, "q", "-allusers", NULL, NULL, NULL);
        EXPECT(r, 0, "glean q");
        GLEAN_TEST_CHECK(strstr(r.out, "OWNER BATCH_NAME     SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS\n") &&
                                 strstr(r.out, "alice ID: 3        11/25 01:26      _      1      2      3 3.0-2\n") &&
                                 strstr(r.out, "\nTotal for query: 3 jobs; 0 completed, 0 removed, 2 idle, 1 running, "
                                               "0 held, 0 suspended\n") &&
                                 strstr(r.out, "Total for all users: 60 jobs; 10 completed, 10 removed, 10 idle, "
                                               "10 running, 10 held, 10 suspended\n") &&
                                 strncmp(r.out, "-- Schedd: ", 11) == 0,
                         "glean q:\n%s", r.out);
        glean_test_run_done(&r);

        run(&r, "condor_q", "-nobatch", "-allusers", NULL, NULL);
        EXPECT(r, 0, "glean condor_q -nobatch");
        GLEAN_TEST_CHECK(strstr(r.out, "   3.2   alice          11/25 01:26   0+00:00:00 I  0   0.0  sleep 5\n") != NULL,
                         "-nobatch:\n%s", r.out);
        glean_test_run_done(&r);

        run(&r, "q", "-af", "ProcId", "Owner", "--json");
        EXPECT(r, 2, "-af then --json: one view at a time");
        glean_test_run_done(&r);

        run(&r, "q", "-af", "ProcId", "Owner", NULL);
        EXPECT(r, 0, "glean q -af");
        CU_ASSERT_STRING_EQUAL(r.out, "0 alice\n1 alice\n2 alice\n");
        glean_test_run_done(&r);

        run(&r, "q", "--json", "3", NULL, NULL);
        EXPECT(r, 0, "glean q --json");
        GLEAN_TEST_CHECK(strncmp(r.out, "[\n{\n  \"ClusterId\": 3,\n  \"ProcId\": 0,", 36) == 0 &&
                                 strstr(r.out, "\"Args\": \"5\"\n}\n]\n"),
                         "--json:\n%s", r.out);
        glean_test_run_done(&r);
        stop_server(pid);
}

/* ---- rm: one target refused ---- */

static int rm_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        char *ids = NULL, *action = NULL;
        int r;

        if (cmd != GLEAN_CMD_JOB_ACTION)
                return reply(fd, req, false, "unexpected command", NULL);
        classad_eval_string(req, "Ids", CA_MODE_OLD, &ids);
        classad_eval_string(req, "Action", CA_MODE_OLD, &action);
        if (!action || strcmp(action, "Remove") != 0)
                r = reply(fd, req, false, "unexpected action", NULL);
        else if (ids && strcmp(ids, "3.0") == 0)
                r = reply(fd, req, true, NULL, "[ Results = { [ Id = \"3.0\"; Ok = true ] }; Count = 1 ]");
        else if (ids && strcmp(ids, "5") == 0)
                r = reply(fd, req, true, NULL,
                          "[ Results = { [ Id = \"5.0\"; Ok = true ], [ Id = \"5.1\"; Ok = true ] }; Count = 2 ]");
        else if (ids && strcmp(ids, "4.1") == 0)
                r = reply(fd, req, false, "some jobs were refused",
                          "[ Results = { [ Id = \"4.1\"; Ok = false; Reason = \"job 4.1 belongs to bob\" ] }; "
                          "Count = 0 ]");
        else
                r = reply(fd, req, true, NULL, "[ Results = {}; Count = 0 ]");
        free(ids);
        free(action);
        return r;
}

static void test_rm(void) {
        pid_t pid = start_server(rm_handler);
        GleanTestRun r;

        run(&r, "rm", "3.0", "5", NULL, NULL);
        EXPECT(r, 0, "glean rm 3.0 5");
        CU_ASSERT_STRING_EQUAL(r.out, "Job 3.0 marked for removal\nAll jobs in cluster 5 have been marked for removal\n");
        CU_ASSERT_EQUAL(r.err_len, 0);
        glean_test_run_done(&r);

        run(&r, "rm", "3.0", "4.1", NULL, NULL);
        EXPECT(r, 1, "glean rm 3.0 4.1 (4.1 refused)");
        CU_ASSERT_STRING_EQUAL(r.out, "Job 3.0 marked for removal\n");
        GLEAN_TEST_CHECK(strstr(r.err, "Job 4.1: job 4.1 belongs to bob\n") != NULL, "stderr:\n%s", r.err);
        glean_test_run_done(&r);

        run(&r, "rm", "9", NULL, NULL, NULL);
        EXPECT(r, 1, "glean rm 9 (no such cluster)");
        GLEAN_TEST_CHECK(strstr(r.err, "All jobs in cluster 9: no such jobs") != NULL, "stderr:\n%s", r.err);
        glean_test_run_done(&r);

        run(&r, "rm", "-constraint", "JobStatus ==", NULL, NULL);
        EXPECT(r, 2, "glean rm -constraint 'JobStatus ==' (parse error)");
        glean_test_run_done(&r);
        stop_server(pid);
}

/* ---- wait ---- */

static int wait_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        char *id = NULL;
        int r;

        if (cmd != GLEAN_CMD_WAIT)
                return reply(fd, req, false, "unexpected command", NULL);
        classad_eval_string(req, "Id", CA_MODE_OLD, &id);
        if (strcmp(id, "7.0") == 0)
                r = reply(fd, req, true, NULL, "[ Ad = [ ClusterId = 7; ProcId = 0; JobStatus = 4; ExitCode = 3; "
                                               "ExitBySignal = false ] ]");
        else if (strcmp(id, "7.1") == 0)
                r = reply(fd, req, true, NULL, "[ Ad = [ JobStatus = 3; RemoveReason = \"via glean rm\" ] ]");
        else if (strcmp(id, "7.2") == 0)
                r = reply(fd, req, false, "the job is still in the queue", "[ Errno = \"ETIMEDOUT\" ]");
        else
                r = reply(fd, req, false, "no job 7.9", "[ Errno = \"ENOENT\" ]");
        free(id);
        return r;
}

static void test_wait(void) {
        pid_t pid = start_server(wait_handler);
        GleanTestRun r;

        run(&r, "wait", "7.0", NULL, NULL, NULL);
        EXPECT(r, 3, "glean wait 7.0 (exit code 3)");
        CU_ASSERT_STRING_EQUAL(r.out, "Job 7.0 completed with exit code 3.\n");
        glean_test_run_done(&r);

        run(&r, "wait", "7.1", NULL, NULL, NULL);
        EXPECT(r, 1, "glean wait 7.1 (removed)");
        CU_ASSERT_STRING_EQUAL(r.out, "Job 7.1 was removed: via glean rm.\n");
        glean_test_run_done(&r);

        run(&r, "wait", "--timeout", "1.5", "7.2", NULL);
        EXPECT(r, 1, "glean wait --timeout 1.5 7.2");
        CU_ASSERT_STRING_EQUAL(r.out, "Job 7.2 is still in the queue after 1.5 s: timed out.\n");
        glean_test_run_done(&r);

        run(&r, "wait", "7.9", NULL, NULL, NULL);
        EXPECT(r, 1, "glean wait 7.9 (no such job)");
        GLEAN_TEST_CHECK(strstr(r.err, "no job 7.9") != NULL, "stderr:\n%s", r.err);
        glean_test_run_done(&r);

        run(&r, "wait", "7", NULL, NULL, NULL);
        EXPECT(r, 2, "glean wait 7 (not a job id)");
        glean_test_run_done(&r);
        stop_server(pid);
}

/* ---- submit: parts, $(Cluster) ---- */

static int parts_seen, procs_seen;

/* Checks what a submission carries; answers the last part with
 * ClusterId = the number of parts (so the test sees it) and NumProcs. */
static int submit_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        ClassAd *cluster = NULL, **procs = NULL;
        size_t n = 0;
        bool more = false;
        char *cmd_attr = NULL, extra[128];
        int r;

        if (cmd != GLEAN_CMD_SUBMIT)
                return reply(fd, req, false, "unexpected command", NULL);
        glean_msg_get_ad(req, "Cluster", &cluster);
        glean_msg_get_ad_list(req, "Procs", &procs, &n);
        classad_eval_bool(req, "More", CA_MODE_OLD, &more);
        parts_seen++;
        procs_seen += (int) n;
        if (!cluster || classad_eval_string(cluster, "Cmd", CA_MODE_OLD, &cmd_attr) < 0 ||
            strcmp(cmd_attr, "/bin/echo") != 0)
                r = reply(fd, req, false, "test: the cluster ad lacks Cmd", NULL);
        else if (classad_has(cluster, "ClusterId") || classad_has(cluster, "ProcId") ||
                 (n > 0 && (classad_has(procs[0], "ProcId") || !classad_has(procs[0], "Args"))))
                r = reply(fd, req, false, "test: ids sent, or Args not per proc", NULL);
        else if (!more) {
                /* Out = out.$(Cluster).$(Process) comes as an expression of ClusterId. */
                char *out_text = n > 0 ? classad_unparse_attr(procs[n - 1], "Out") : NULL;
                if (!out_text || !strstr(out_text, "ClusterId"))
                        r = reply(fd, req, false, "test: Out does not read ClusterId", NULL);
                else {
                        snprintf(extra, sizeof extra, "[ ClusterId = %d; NumProcs = %d ]", parts_seen, procs_seen);
                        r = reply(fd, req, true, NULL, extra);
                }
                free(out_text);
                parts_seen = procs_seen = 0;
        } else
                r = reply(fd, req, true, NULL, NULL);
        free(cmd_attr);
        classad_free(cluster);
        glean_ad_list_free(procs, n);
        return r;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "w");

        CU_ASSERT_FATAL(f != NULL);
        fputs(text, f);
        fclose(f);
}

static void test_submit(void) {
        char small[192], big[192], bad[192];
        pid_t pid = start_server(submit_handler);
        GleanTestRun r;

        snprintf(small, sizeof small, "%s/small.sub", dir);
        snprintf(big, sizeof big, "%s/big.sub", dir);
        snprintf(bad, sizeof bad, "%s/bad.sub", dir);
        write_file(small, "executable = /bin/echo\narguments = $(Process)\noutput = out.$(Cluster).$(Process)\n"
                          "queue 3\n");
        /* 12,000 procs of ~190 bytes of their own: more than one frame. */
        write_file(big, "executable = /bin/echo\n"
                        "arguments = $(Process) aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n"
                        "output = out.$(Cluster).$(Process)\nqueue 12000\n");
        write_file(bad, "executable = /bin/echo\nqueue 1 frobnicate\n");

        run(&r, "submit", small, NULL, NULL, NULL);
        EXPECT(r, 0, "glean submit (3 jobs)");
        CU_ASSERT_STRING_EQUAL(r.out, "3 job(s) submitted to cluster 1.\n");
        glean_test_run_done(&r);

        run(&r, "submit", big, NULL, NULL, NULL);
        EXPECT(r, 0, "glean submit (12,000 jobs)");
        GLEAN_TEST_CHECK(strcmp(r.out, "12000 job(s) submitted to cluster 3.\n") == 0, /* cluster = parts: ~2.3 MB in 3 */
                         "stdout:\n%s\nstderr:\n%s", r.out, r.err);
        glean_test_run_done(&r);

        run(&r, "submit", bad, NULL, NULL, NULL);
        EXPECT(r, 2, "glean submit (a bad file)");
        GLEAN_TEST_CHECK(strstr(r.err, "bad.sub:2") != NULL, "the error names file and line:\n%s", r.err);
        CU_ASSERT_EQUAL(r.out_len, 0);
        glean_test_run_done(&r);
        stop_server(pid);
}

/* ---- submit: which socket ---- */

/* Each end answers with its own cluster: 100 the central manager, 200
 * this machine's agent. */
static int route_reply(int fd, const ClassAd *req, GleanCommand cmd, int cluster) {
        char extra[96];
        bool more = false;
        if (cmd != GLEAN_CMD_SUBMIT)
                return reply(fd, req, false, "unexpected command", NULL);
        if (classad_eval_bool(req, "More", CA_MODE_OLD, &more) >= 0 && more)
                return 0;
        snprintf(extra, sizeof extra, "[ ClusterId = %d; NumProcs = 1 ]", cluster);
        return reply(fd, req, true, NULL, extra);
}
static int route_cm(int fd, const ClassAd *req, GleanCommand cmd) {
        return route_reply(fd, req, cmd, 100);
}
static int route_agent(int fd, const ClassAd *req, GleanCommand cmd) {
        return route_reply(fd, req, cmd, 200);
}

/* A job whose files or event log live on this machine goes through its
 * agent (which then serves them); any other straight to the central
 * manager's socket when there is one; the agent is only a fallback then. */
static void test_submit_route(void) {
        static const struct {
                const char *body;
                bool agent;
        } cases[] = {
                { "executable = /bin/echo\nqueue\n", false },
                { "executable = /bin/echo\nlog = job.log\nqueue\n", true },
                { "executable = /bin/echo\nshould_transfer_files = YES\nqueue\n", true },
                { "executable = /bin/echo\nshould_transfer_files = IF_NEEDED\ntransfer_input_files = /bin/sh\nqueue\n",
                  true },
                { "executable = /bin/echo\ntransfer_output_files = out.txt\nqueue\n", true },
                { "executable = /bin/echo\nshould_transfer_files = NO\nqueue\n", false },
        };
        char sub[192];
        pid_t cm = start_server(route_cm), agent = start_server_at(agent_path, route_agent);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                GleanTestRun r;
                snprintf(sub, sizeof sub, "%s/route%zu.sub", dir, i);
                write_file(sub, cases[i].body);
                run(&r, "submit", sub, NULL, NULL, NULL);
                const char *want = cases[i].agent ? "1 job(s) submitted to cluster 200.\n"
                                                  : "1 job(s) submitted to cluster 100.\n";
                GLEAN_TEST_CHECK(r.status == 0 && strcmp(r.out, want) == 0, "%s: exit %d, want %s; got:\n%s%s",
                                 cases[i].body, r.status, want, r.out, r.err);
                glean_test_run_done(&r);
        }
        /* no agent here: the central manager's socket, which refuses what it must */
        stop_server_at(agent, agent_path);
        GleanTestRun r;
        snprintf(sub, sizeof sub, "%s/route1.sub", dir);
        run(&r, "submit", sub, NULL, NULL, NULL);
        EXPECT(r, 0, "glean submit with a log and no agent");
        CU_ASSERT_STRING_EQUAL(r.out, "1 job(s) submitted to cluster 100.\n");
        glean_test_run_done(&r);
        stop_server(cm);
}

/* ---- status ---- */

static int status_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        if (cmd != GLEAN_CMD_QUERY_SLOTS)
                return reply(fd, req, false, "unexpected command", NULL);
        return reply(fd, req, true, NULL,
                     "[ Ads = { [ Name = \"slot2@n1\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; State = \"Claimed\"; "
                     "Activity = \"Busy\"; Memory = 1024 ], [ Name = \"slot1@n1\"; OpSys = \"LINUX\"; "
                     "Arch = \"X86_64\"; State = \"Unclaimed\"; Activity = \"Idle\"; Memory = 1024 ] } ]");
}

static void test_status(void) {
        pid_t pid = start_server(status_handler);
        GleanTestRun r;

        run(&r, "status", NULL, NULL, NULL, NULL);
        EXPECT(r, 0, "glean status");
        GLEAN_TEST_CHECK(strstr(r.out, "Name     OpSys      Arch   State     Activity LoadAv Mem   ActvtyTime\n\n"
                                       "slot1@n1 LINUX      X86_64 Unclaimed Idle      0.000 1024 ") == r.out &&
                                 strstr(r.out, "  X86_64/LINUX     2     0       1         1       0          0     "
                                               "0        0      0\n") &&
                                 strstr(r.out, "         Total     2     0       1         1"),
                         "glean status:\n%s", r.out);
        glean_test_run_done(&r);

        run(&r, "status", "-af", "Name", "State", NULL);
        EXPECT(r, 0, "glean status -af");
        CU_ASSERT_STRING_EQUAL(r.out, "slot1@n1 Unclaimed\nslot2@n1 Claimed\n");
        glean_test_run_done(&r);
        stop_server(pid);
}

/* ---- userprio ---- */

static int userprio_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        char *action = NULL, *who = NULL;
        int r;

        if (cmd != GLEAN_CMD_USER_PRIO)
                return reply(fd, req, false, "unexpected command", NULL);
        classad_eval_string(req, "Action", CA_MODE_OLD, &action);
        classad_eval_string(req, "Submitter", CA_MODE_OLD, &who);
        if (!action || strcmp(action, "list") == 0) {
                /* Usage times relative to now: a submitter with nothing in use
                 * whose last usage is older than a day is not listed. */
                long long now = (long long) time(NULL);
                char *ads = NULL;
                if (asprintf(&ads,
                             "[ Ads = { [ Name = \"bob@pool\"; Priority = 5000.0; PriorityFactor = 1000.0; "
                             "ResourcesUsed = 2; WeightedResourcesUsed = 2.0; AccumulatedUsage = 7200.0; "
                             "WeightedAccumulatedUsage = 7200.0; BeginUsageTime = %lld; "
                             "LastUsageTime = %lld ], [ Name = \"alice@pool\"; Priority = 500.0; "
                             "PriorityFactor = 1000.0; ResourcesUsed = 0; AccumulatedUsage = 3600.0; "
                             "LastUsageTime = %lld ], [ Name = \"carol@pool\"; Priority = 2.0; "
                             "EffectivePriority = 2.0; RealPriority = 0.5; PriorityFactor = 4.0; "
                             "ResourcesUsed = 1 ] } ]",
                             now - 80000, now - 1700, now - 10000) < 0)
                        return -ENOMEM;
                r = reply(fd, req, true, NULL, ads);
                free(ads);
        } else if (strcmp(action, "setfactor") == 0 && who && strcmp(who, "alice@pool") == 0)
                r = reply(fd, req, true, NULL, NULL);
        else
                r = reply(fd, req, false, "only root and ADMINISTRATORS may change the accounts",
                          "[ Errno = \"EPERM\" ]");
        free(action);
        free(who);
        return r;
}

static void test_userprio(void) {
        pid_t pid = start_server(userprio_handler);
        GleanTestRun r;

        run(&r, "userprio", NULL, NULL, NULL, NULL);
        EXPECT(r, 0, "glean userprio");
        /* Best EUP first; Priority is the effective priority (HTCondor's
         * accountant ads, and glean-negotiator's), RUP = RealPriority, else
         * Priority / PriorityFactor. */
        const char *a = strstr(r.out, "alice@pool"), *b = strstr(r.out, "bob@pool"), *c = strstr(r.out, "carol@pool");
        GLEAN_TEST_CHECK(a && b && c && c < a && a < b && strstr(a, "      500.00        0.50    1000.00") &&
                                 strstr(c, "        2.00        0.50       4.00") &&
                                 strstr(r.out, "Number of users: 3") && r.err_len == 0,
                         "glean userprio:\n%s\nstderr:\n%s", r.out, r.err);
        glean_test_run_done(&r);

        run(&r, "userprio", "-setfactor", "alice@pool", "2000", NULL);
        EXPECT(r, 0, "glean userprio -setfactor");
        CU_ASSERT_STRING_EQUAL(r.out, "The priority factor of alice@pool was set to 2000\n");
        glean_test_run_done(&r);

        run(&r, "userprio", "-setfactor", "bob@pool", "2000", NULL);
        EXPECT(r, 1, "glean userprio -setfactor (refused)");
        GLEAN_TEST_CHECK(strstr(r.err, "refused: only root and ADMINISTRATORS") != NULL, "stderr:\n%s", r.err);
        glean_test_run_done(&r);
        stop_server(pid);

        /* No central manager: the database, said on stderr. */
        run(&r, "userprio", "--db", "/nonexistent/accounts.db", NULL, NULL);
        EXPECT(r, 2, "glean userprio --db MISSING");
        GLEAN_TEST_CHECK(strstr(r.err, "no central manager answered") == NULL, "--db goes to the file:\n%s", r.err);
        glean_test_run_done(&r);
        run(&r, "userprio", NULL, NULL, NULL, NULL);
        GLEAN_TEST_CHECK(strstr(r.err, "cannot reach the central manager") &&
                                 strstr(r.err, "glean userprio: no central manager answered: using the accounts "
                                               "database directly"),
                         "no daemon: exit %d, stderr:\n%s", r.status, r.err);
        glean_test_run_done(&r);
}

/* ---- failures ---- */

static int garbage_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        static const char junk[] = "this is not a ClassAd";

        (void) req;
        (void) cmd;
        glean_frame_write(fd, junk, sizeof junk - 1, 5000);
        return -1;
}

static int bad_list_handler(int fd, const ClassAd *req, GleanCommand cmd) {
        (void) cmd;
        return reply(fd, req, true, NULL, "[ Ads = { 1, 2 } ]");
}

static void test_malformed(void) {
        pid_t pid = start_server(garbage_handler);
        GleanTestRun r;

        run(&r, "q", "-allusers", NULL, NULL, NULL);
        EXPECT(r, 1, "glean q against a garbage reply");
        GLEAN_TEST_CHECK(strstr(r.err, "glean q: malformed reply from ") != NULL, "stderr:\n%s", r.err);
        CU_ASSERT_EQUAL(r.out_len, 0);
        glean_test_run_done(&r);
        stop_server(pid);

        pid = start_server(bad_list_handler);
        run(&r, "status", NULL, NULL, NULL, NULL);
        EXPECT(r, 1, "glean status against Ads that are not ads");
        GLEAN_TEST_CHECK(strstr(r.err, "glean status: malformed reply from ") && strstr(r.err, "Ads"), "stderr:\n%s", r.err);
        glean_test_run_done(&r);
        stop_server(pid);
}

/* A socket file nobody accepts on, and no agent: both named, with why. */
static void test_refused(void) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd = socket(AF_UNIX, SOCK_STREAM, 0);
        GleanTestRun r;

        unlink(sock_path);
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock_path);
        CU_ASSERT_FATAL(fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0); /* bound, not listening */
        run(&r, "rm", "3", NULL, NULL, NULL);
        EXPECT(r, 1, "glean rm with nothing listening");
        GLEAN_TEST_CHECK(strstr(r.err, "glean rm: cannot reach the central manager:\n") &&
                                 strstr(r.err, sock_path) && strstr(r.err, "(glean-negotiator is not running)") &&
                                 strstr(r.err, agent_path) && strstr(r.err, "(is glean-agent running on this machine?)"),
                         "stderr:\n%s", r.err);
        CU_ASSERT_EQUAL(r.out_len, 0);
        glean_test_run_done(&r);

        run(&r, "q", "--socket", agent_path, NULL, NULL);
        EXPECT(r, 1, "glean q --socket MISSING");
        GLEAN_TEST_CHECK(strncmp(r.err, "glean q: cannot talk to ", 24) == 0, "stderr:\n%s", r.err);
        glean_test_run_done(&r);
        close(fd);
        unlink(sock_path);
}

static void test_usage(void) {
        static const char *const cases[][4] = {
                { "q", "-frobnicate" }, { "rm" }, { "hold", "-reason" }, { "prio", "3" }, { "prio", "-p", "x", "3" },
                { "status", "-constraint", "(" }, { "vacate" }, { "drain", "--how", "slowly", "n1" },
                { "drain", "--cancel", "--how", "fast" }, { "wait" }, { "history", "-limit", "-3" },
                { "submit" },
        };
        static const char *const helps[] = { "q", "history", "rm", "hold", "release", "prio", "status",
                                             "vacate", "drain", "wait", "submit", "userprio" };
        GleanTestRun r;

        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                run(&r, cases[i][0], cases[i][1], cases[i][2], cases[i][3], NULL);
                GLEAN_TEST_CHECK(r.status == 2 && r.out_len == 0 && strstr(r.err, "usage: glean"),
                                 "glean %s %s: exit %d, stderr:\n%s", cases[i][0], cases[i][1] ? cases[i][1] : "",
                                 r.status, r.err);
                glean_test_run_done(&r);
        }
        for (size_t i = 0; i < sizeof helps / sizeof *helps; i++) {
                run(&r, helps[i], "--help", NULL, NULL, NULL);
                GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "usage: glean") && r.err_len == 0,
                                 "glean %s --help: exit %d, stderr:\n%s", helps[i], r.status, r.err);
                glean_test_run_done(&r);
        }
}

static int suite_init(void) {
        glean = getenv("GLEAN") && *getenv("GLEAN") ? getenv("GLEAN") : "build/bin/glean";
        snprintf(dir, sizeof dir, "/tmp/glean-jobclient-XXXXXX");
        if (!mkdtemp(dir))
                return -1;
        snprintf(sock_path, sizeof sock_path, "%s/negotiator.sock", dir);
        snprintf(agent_path, sizeof agent_path, "%s/agent.sock", dir);
        snprintf(conf_path, sizeof conf_path, "%s/glean.conf", dir);
        FILE *f = fopen(conf_path, "w");
        if (!f)
                return -1;
        fclose(f);
        setenv("GLEAN_NEGOTIATOR_SOCKET", sock_path, 1);
        setenv("GLEAN_AGENT_SOCKET", agent_path, 1); /* never created */
        setenv("GLEAN_CONFIG", conf_path, 1);
        setenv("TZ", "UTC", 1);
        return 0;
}

static int suite_clean(void) {
        char path[192];

        for (size_t i = 0; i < 4; i++) {
                static const char *const names[] = { "small.sub", "big.sub", "bad.sub", "glean.conf" };
                snprintf(path, sizeof path, "%s/%s", dir, names[i]);
                unlink(path);
        }
        unlink(sock_path);
        rmdir(dir);
        return 0;
}

static CU_TestInfo tests[] = {
        { "q-pieces", test_q_pieces },
        { "rm", test_rm },
        { "wait", test_wait },
        { "submit", test_submit },
        { "submit_route", test_submit_route },
        { "status", test_status },
        { "userprio", test_userprio },
        { "malformed", test_malformed },
        { "refused", test_refused },
        { "usage", test_usage },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "jobclient", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

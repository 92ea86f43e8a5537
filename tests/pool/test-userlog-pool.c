/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-userlog-pool.c — the job event log with the real daemons: a
 * one-machine pool where the user submits through the agent's socket
 * (GLEAN_AGENT_SOCKET), so that the jobs have a SubmitMachine and that
 * agent writes their `log =`. A job that runs and exits writes 000, 001,
 * 006, 005 in order, owned by the submitting user; a held and released job
 * 012 and 013; a removed one 009 — each compared event by event (type and
 * key fields) with the sequence HTCondor writes for the same life (a run:
 * 000 001 006 005, its quick-start guide's log); two
 * jobs share one log; `glean wait LOGFILE` returns when the jobs ended.
 * As root the user is nobody (the log written as nobody, never as root);
 * otherwise the test's own user.
 */
#define _GNU_SOURCE

#include "pool-test.h"
#include "userlog/userlog.h"

static const char *user(void) {
        return geteuid() == 0 ? "nobody" : NULL; /* NULL: as we are */
}

/* `glean ARGS` as user(), through the agent. Exit status, out filled. */
static int as_user(char *out, size_t len, const char *const *args) {
        return glean_as(user(), out, len, args);
}

typedef struct Events {
        UserlogEvent ev[32];
        size_t n;
} Events;

static int collect(const UserlogEvent *ev, const char *text, size_t len, void *userdata) {
        Events *e = userdata;
        (void) text, (void) len;
        if (e->n < 32)
                e->ev[e->n++] = *ev;
        return 0;
}

/* The events of the log at path with cluster (0: all), once there are
 * want of them (or after seconds). */
static size_t read_events(const char *path, int64_t cluster, size_t want, int seconds, Events *ret) {
        for (int i = 0; i <= seconds * 10; i++) {
                char *text = NULL;
                size_t len = 0;
                Events all = { 0 };
                UserlogReader *rd = NULL;

                ret->n = 0;
                if (glean_test_read_file(path, &text, &len) >= 0 && userlog_reader_new(&rd) >= 0) {
                        userlog_reader_feed(rd, text, len, collect, &all);
                        for (size_t k = 0; k < all.n; k++)
                                if (!cluster || all.ev[k].cluster == cluster)
                                        ret->ev[ret->n++] = all.ev[k];
                }
                userlog_reader_free(rd);
                free(text);
                if (ret->n >= want)
                        return ret->n;
                usleep(100000);
        }
        return ret->n;
}

static const char *type_list(const Events *e, char *buf, size_t n) {
        size_t len = 0;
        buf[0] = 0;
        for (size_t i = 0; i < e->n && len + 5 < n; i++)
                len += (size_t) snprintf(buf + len, n - len, "%s%03d", i ? " " : "", e->ev[i].type);
        return buf;
}

static int64_t submit_user(const Manager *m, const char *name, const char *body) {
        char path[256], *text = NULL, out[2048];
        snprintf(path, sizeof path, "%s/%s", m->jobs, name);
        if (asprintf(&text, "universe = vanilla\ninitialdir = %s\nrequest_memory = 16\nrequest_disk = 16\n%s", m->jobs,
                     body) < 0)
                return -1;
        write_file(path, text);
        free(text);
        const char *args[] = { "submit", path, NULL };
        int st = as_user(out, sizeof out, args);
        const char *p = strstr(out, "submitted to cluster ");
        int64_t c = p ? strtoll(p + strlen("submitted to cluster "), NULL, 10) : -1;
        GLEAN_TEST_CHECK(st == 0 && c > 0, "glean submit %s: exit %d: %s", name, st, out);
        return c;
}

static void test_userlog(void) {
        Manager m;
        Pool a;
        char log[160], nosock[192], buf[512], out[4096], id[32];
        Events e;
        struct stat st;
        int64_t c1, c2;

        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
        snprintf(nosock, sizeof nosock, "%s/not-here.sock", m.dir);
        setenv("GLEAN_NEGOTIATOR_SOCKET", nosock, 1);
        setenv("GLEAN_AGENT_SOCKET", a.sock, 1);
        snprintf(log, sizeof log, "%s/job.log", m.jobs);

        /* a job that runs and exits 3: 000, 001, 006 (its size at exit), 005 (return value 3) */
        snprintf(buf, sizeof buf, "executable = /bin/sh\narguments = \"-c 'sleep 0.5; exit 3'\"\nlog = %s\nqueue\n",
                 log);
        c1 = submit_user(&m, "run.sub", buf);
        CU_ASSERT_FATAL(c1 > 0);
        {
                const char *args[] = { "wait", "-wait", "60", log, NULL };
                snprintf(id, sizeof id, "%lld.0", (long long) c1);
                int s = as_user(out, sizeof out, args);
                GLEAN_TEST_CHECK(s == 0 && strstr(out, "All jobs done."), "glean wait %s: exit %d: %s", log, s, out);
        }
        read_events(log, c1, 4, 10, &e);
        GLEAN_TEST_CHECK(strcmp(type_list(&e, buf, sizeof buf), "000 001 006 005") == 0,
                         "the life of a job that ran: %s, HTCondor writes 000 001 006 005", buf);
        if (e.n == 4) {
                GLEAN_TEST_CHECK(strcmp(e.ev[0].host, "<a.test>") == 0, "000 from %s", e.ev[0].host);
                GLEAN_TEST_CHECK(strcmp(e.ev[1].slot_name, "slot1@a.test") == 0 && strcmp(e.ev[1].host, "<a.test>") == 0,
                                 "001 on %s (%s)", e.ev[1].host, e.ev[1].slot_name);
                GLEAN_TEST_CHECK(e.ev[2].image_size_kb > 0 && e.ev[2].rss_kb > 0 && e.ev[2].memory_mb > 0,
                                 "006: %lld KB, rss %lld KB", (long long) e.ev[2].image_size_kb,
                                 (long long) e.ev[2].rss_kb);
                GLEAN_TEST_CHECK(e.ev[3].normal && e.ev[3].return_value == 3, "005: normal %d return %d",
                                 e.ev[3].normal, e.ev[3].return_value);
                GLEAN_TEST_CHECK(e.ev[0].time <= e.ev[1].time && e.ev[1].time <= e.ev[3].time, "times out of order");
        }
        GLEAN_TEST_CHECK(stat(log, &st) == 0 && st.st_uid == (geteuid() == 0 ? nobody_uid() : geteuid()) &&
                                 (st.st_mode & 07777) == 0644,
                         "the log's owner %d, mode %o", (int) st.st_uid, st.st_mode & 07777);

        /* an idle job held, released, removed, sharing the log: 000 012 013 009 */
        snprintf(buf, sizeof buf, "executable = /bin/true\nrequirements = false\nlog = %s\nqueue\n", log);
        c2 = submit_user(&m, "idle.sub", buf);
        CU_ASSERT_FATAL(c2 > 0);
        snprintf(id, sizeof id, "%lld.0", (long long) c2);
        read_events(log, c2, 1, 20, &e);
        {
                const char *hold[] = { "hold", id, NULL }, *rel[] = { "release", id, NULL }, *rm[] = { "rm", id, NULL };
                GLEAN_TEST_CHECK(as_user(out, sizeof out, hold) == 0, "hold: %s", out);
                GLEAN_TEST_CHECK(as_user(out, sizeof out, rel) == 0, "release: %s", out);
                {
                        char idc[32];
                        snprintf(idc, sizeof idc, "%lld", (long long) c2);
                        const char *wait[] = { "wait", "-wait", "60", log, idc, NULL };
                        pid_t w = fork();
                        if (w == 0) {
                                char o[1024];
                                _exit(as_user(o, sizeof o, wait));
                        }
                        usleep(500000);
                        GLEAN_TEST_CHECK(waitpid(w, NULL, WNOHANG) == 0, "glean wait returned before the rm");
                        GLEAN_TEST_CHECK(as_user(out, sizeof out, rm) == 0, "rm: %s", out);
                        int ws = -1;
                        waitpid(w, &ws, 0);
                        GLEAN_TEST_CHECK(WIFEXITED(ws) && WEXITSTATUS(ws) == 0, "glean wait LOG %s: status %d", idc, ws);
                }
        }
        read_events(log, c2, 4, 20, &e);
        GLEAN_TEST_CHECK(strcmp(type_list(&e, buf, sizeof buf), "000 012 013 009") == 0,
                         "held, released, removed: %s, HTCondor writes 000 012 013 009", buf);
        if (e.n == 4) {
                GLEAN_TEST_CHECK(e.ev[1].code == 1 && strstr(e.ev[1].reason, "via glean hold"), "012: code %d '%s'",
                                 e.ev[1].code, e.ev[1].reason);
                GLEAN_TEST_CHECK(strstr(e.ev[2].reason, "via glean release") != NULL, "013: '%s'", e.ev[2].reason);
                GLEAN_TEST_CHECK(strstr(e.ev[3].reason, "via glean rm") != NULL, "009: '%s'", e.ev[3].reason);
        }
        /* the whole log: both jobs' events, none torn, nothing skipped */
        {
                char *text = NULL;
                size_t len = 0, skipped = 1;
                UserlogReader *rd = NULL;
                Events all = { 0 };
                CU_ASSERT_FATAL(glean_test_read_file(log, &text, &len) >= 0 && userlog_reader_new(&rd) >= 0);
                userlog_reader_feed(rd, text, len, collect, &all);
                skipped = userlog_reader_skipped(rd);
                GLEAN_TEST_CHECK(all.n == 8 && skipped == 0 && !userlog_reader_pending(rd),
                                 "%zu events, %zu skipped:\n%s", all.n, skipped, text);
                if (getenv("GLEAN_TEST_SHOW_LOG"))
                        printf("\n%s", text);
                userlog_reader_free(rd);
                free(text);
        }
        /* evicted and run again (glean vacate): 000 001 004 001 ... 005, the
         * issue's "submit, execute, evicted, execute, terminated" */
        {
                char script[200], marker[200];
                snprintf(script, sizeof script, "%s/twice.sh", m.jobs);
                snprintf(marker, sizeof marker, "%s/twice.ran", m.jobs);
                unlink(marker);
                snprintf(buf, sizeof buf, "#!/bin/sh\nif [ -e %s ]; then exit 0; fi\ntouch %s\nexec sleep 60\n", marker,
                         marker);
                write_file(script, buf);
                chmod(script, 0755);
                snprintf(buf, sizeof buf, "executable = %s\nlog = %s\nqueue\n", script, log);
                int64_t c4 = submit_user(&m, "twice.sub", buf);
                CU_ASSERT_FATAL(c4 > 0);
                read_events(log, c4, 2, 30, &e); /* running */
                for (int i = 0; i < 100 && access(marker, F_OK) < 0; i++)
                        usleep(100000);
                const char *vac[] = { "vacate", "slot1@a.test", NULL };
                GLEAN_TEST_CHECK(glean_as(NULL, out, sizeof out, vac) == 0, "glean vacate: %s", out);
                read_events(log, c4, 6, 60, &e);
                char want[64];
                snprintf(want, sizeof want, "000 001 004 001 006 005");
                if (e.n == 5)
                        snprintf(want, sizeof want, "000 001 004 001 005"); /* no size reported: no 006 */
                GLEAN_TEST_CHECK(strcmp(type_list(&e, buf, sizeof buf), want) == 0,
                                 "evicted and run again: %s, HTCondor writes 000 001 004 001 (006) 005", buf);
                if (e.n >= 3)
                        GLEAN_TEST_CHECK(strstr(e.ev[2].reason, "evicted from slot1@a.test") != NULL && !e.ev[2].requeued,
                                         "004: '%s'", e.ev[2].reason);
        }

        /* a log the agent cannot write (its directory is not there): the job
         * runs on, the failure is logged once for the job, not per event */
        {
                char bad[256], jid[32];
                snprintf(bad, sizeof bad, "%s/no-such-dir/job.log", m.jobs);
                snprintf(buf, sizeof buf, "executable = /bin/true\nlog = %s\nqueue\n", bad);
                int64_t c3 = submit_user(&m, "bad.sub", buf);
                CU_ASSERT_FATAL(c3 > 0);
                snprintf(jid, sizeof jid, "%lld.0", (long long) c3);
                const char *wait[] = { "wait", "--timeout", "60", jid, NULL };
                int s3 = as_user(out, sizeof out, wait);
                GLEAN_TEST_CHECK(s3 == 0, "glean wait %s (a log that cannot be written): exit %d: %s", jid, s3, out);
                char needle[96];
                snprintf(needle, sizeof needle, "of job %s: ", jid);
                GLEAN_TEST_CHECK(wait_log(&a, 10, "cannot write the event log", needle), "no record of the failure");
                usleep(1500000); /* its 001 and 005 come and go too */
                char *alog = read_log(&a);
                GLEAN_TEST_CHECK(count(alog, needle) == 1, "the failure logged %zu times", count(alog, needle));
                free(alog);
                GLEAN_TEST_CHECK(access(bad, F_OK) < 0, "the log was written after all");
        }

        /* a UserLogEvent on the agent's socket (a user forging one): refused, nothing written */
        {
                char forged[256];
                snprintf(forged, sizeof forged, "%s/forged.log", m.jobs);
                int fd = connect_agent(&a);
                ClassAd *msg = NULL, *rep;
                char *reason = NULL;
                CU_ASSERT_FATAL(fd >= 0 && glean_msg_new(GLEAN_CMD_USER_LOG_EVENT, &msg) >= 0);
                classad_set_int(msg, "ClusterId", 1);
                classad_set_int(msg, "ProcId", 0);
                classad_set_int(msg, "Seq", 999999);
                classad_set_string(msg, "Owner", me());
                classad_set_string(msg, "Path", forged);
                classad_set_string(msg, "Text", "011 (001.000.000) 2026-12-01 10:00:00 Job was unsuspended.\n...\n");
                rep = call(fd, msg);
                GLEAN_TEST_CHECK(rep && !reply_ok(rep, &reason) && reason && strstr(reason, "central manager only"),
                                 "a forged UserLogEvent: %s", reason ? reason : "accepted");
                GLEAN_TEST_CHECK(access(forged, F_OK) < 0, "a forged event was written");
                free(reason);
                classad_free(rep);
                classad_free(msg);
                close(fd);
        }
        unsetenv("GLEAN_AGENT_SOCKET");
        setenv("GLEAN_NEGOTIATOR_SOCKET", m.sock, 1);
        pool_stop(&a);
        manager_stop(&m);
}

/* The events wait in the central manager's database while the submit
 * agent is away, survive a kill -9 of the central manager, and reach the
 * log in order, once each, when the agent comes back. */
static void test_agent_away(void) {
        Manager m;
        Pool a, b;
        char log[160], nosock[192], buf[512], out[4096], id[32];
        Events e;
        int64_t c;

        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        CU_ASSERT_TRUE(wait_slot_listed("slot1@a.test", 20));
        snprintf(nosock, sizeof nosock, "%s/not-here.sock", m.dir);
        setenv("GLEAN_NEGOTIATOR_SOCKET", nosock, 1);
        setenv("GLEAN_AGENT_SOCKET", a.sock, 1);
        snprintf(log, sizeof log, "%s/away.log", m.jobs);
        snprintf(buf, sizeof buf, "executable = /bin/true\nrequirements = false\nlog = %s\nqueue\n", log);
        c = submit_user(&m, "away.sub", buf);
        CU_ASSERT_FATAL(c > 0);
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        GLEAN_TEST_CHECK(read_events(log, c, 1, 20, &e) == 1, "the 000 before the agent goes");

        /* the agent goes; the job is held and released on the central manager */
        pool_stop(&a);
        unsetenv("GLEAN_AGENT_SOCKET");
        setenv("GLEAN_NEGOTIATOR_SOCKET", m.sock, 1);
        const char *hold[] = { "hold", id, NULL }, *rel[] = { "release", id, NULL }, *rm[] = { "rm", id, NULL };
        GLEAN_TEST_CHECK(glean_as(NULL, out, sizeof out, hold) == 0, "hold: %s", out);
        GLEAN_TEST_CHECK(glean_as(NULL, out, sizeof out, rel) == 0, "release: %s", out);
        /* kill -9 of the central manager: the events are in its database */
        manager_kill9(&m);
        CU_ASSERT_TRUE_FATAL(manager_launch(&m));
        GLEAN_TEST_CHECK(glean_as(NULL, out, sizeof out, rm) == 0, "rm: %s", out);
        usleep(300000);
        GLEAN_TEST_CHECK(read_events(log, c, 1, 0, &e) == 1, "written while the agent was away");

        /* back: the rest, in order, once each */
        CU_ASSERT_TRUE_FATAL(manager_agent(&m, &b, "a.test", "NUM_CPUS = 1\n"));
        read_events(log, c, 4, 30, &e);
        usleep(500000);
        read_events(log, c, 4, 0, &e);
        GLEAN_TEST_CHECK(strcmp(type_list(&e, buf, sizeof buf), "000 012 013 009") == 0,
                         "after the agent came back: %s, want 000 012 013 009", buf);
        pool_stop(&b);
        remove_dir(a.dir);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "a job's event log written by its submit agent, as HTCondor writes it", test_userlog },
                { "events wait for an agent that is away, across a kill -9 of the central manager",
                  test_agent_away },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "userlog-pool", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-wait-log.c — `glean wait LOGFILE [JOBID]` (condor_wait) following a
 * job event log that the test appends to while it runs: it returns when
 * the jobs ended and not before, with condor_wait's words and exit codes;
 * -wait, -num, -echo, a named job, an event written in two pieces, a log
 * truncated and written again, garbage in the log, a missing log, usage
 * errors. The binary is $GLEAN, else build/bin/glean.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "test-util.h"

static const char *glean_path(void) {
        const char *p = getenv("GLEAN");
        return p && *p ? p : "build/bin/glean";
}

static char dir[] = "/tmp/glean-wait-log-XXXXXX";

static char *logpath(const char *name) {
        static char buf[256];
        snprintf(buf, sizeof(buf), "%s/%s", dir, name);
        return buf;
}

static void append(const char *path, const char *text) {
        int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        GLEAN_TEST_CHECK_FATAL(fd >= 0, "open %s: %s", path, strerror(errno));
        GLEAN_TEST_CHECK(write(fd, text, strlen(text)) == (ssize_t) strlen(text), "write");
        close(fd);
}

static void ev(char *buf, size_t n, int type, int cluster, int proc) {
        switch (type) {
        case 0:
                snprintf(buf, n, "000 (%03d.%03d.000) 2026-12-01 10:00:00 Job submitted from host: <10.0.0.1:9618>\n...\n",
                         cluster, proc);
                break;
        case 1:
                snprintf(buf, n, "001 (%03d.%03d.000) 2026-12-01 10:00:01 Job executing on host: <10.0.0.2:9618>\n...\n",
                         cluster, proc);
                break;
        case 5:
                snprintf(buf, n,
                         "005 (%03d.%03d.000) 2026-12-01 10:00:02 Job terminated.\n"
                         "\t(1) Normal termination (return value 0)\n"
                         "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Remote Usage\n"
                         "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Run Local Usage\n"
                         "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Remote Usage\n"
                         "\t\tUsr 0 00:00:00, Sys 0 00:00:00  -  Total Local Usage\n"
                         "\t0  -  Run Bytes Sent By Job\n"
                         "\t0  -  Run Bytes Received By Job\n"
                         "\t0  -  Total Bytes Sent By Job\n"
                         "\t0  -  Total Bytes Received By Job\n"
                         "...\n",
                         cluster, proc);
                break;
        case 9:
                snprintf(buf, n, "009 (%03d.%03d.000) 2026-12-01 10:00:03 Job was aborted.\n\tvia glean rm\n...\n",
                         cluster, proc);
                break;
        }
}

static void add(const char *path, int type, int cluster, int proc) {
        char buf[1024];
        ev(buf, sizeof(buf), type, cluster, proc);
        append(path, buf);
}

typedef struct Bg {
        pid_t pid;
        int out; /* read end of its stdout */
        int err;
} Bg;

static Bg start(const char *a1, const char *a2, const char *a3, const char *a4, const char *a5) {
        const char *argv[8] = { glean_path(), "wait", a1, a2, a3, a4, a5, NULL };
        int po[2], pe[2];
        Bg b = { -1, -1, -1 };

        if (pipe2(po, O_CLOEXEC) < 0 || pipe2(pe, O_CLOEXEC) < 0)
                return b;
        b.pid = fork();
        if (b.pid == 0) {
                dup2(po[1], 1);
                dup2(pe[1], 2);
                execv(argv[0], (char **) argv);
                _exit(127);
        }
        close(po[1]);
        close(pe[1]);
        b.out = po[0];
        b.err = pe[0];
        return b;
}

static void msleep(int ms) {
        nanosleep(&(struct timespec){ ms / 1000, (long) (ms % 1000) * 1000000 }, NULL);
}

/* Whether it is still running after ms. */
static bool running_after(Bg *b, int ms) {
        int status;
        msleep(ms);
        return waitpid(b->pid, &status, WNOHANG) == 0 ? true : (b->pid = -1, false);
}

/* Waits up to ms for it to end; its exit status (or -1 if still running:
 * then killed) and its stdout. */
static int finish(Bg *b, int ms, char *out, size_t n) {
        int status = 0, waited = 0;
        ssize_t k;
        size_t got = 0;

        if (b->pid < 0)
                return -2;
        while (waitpid(b->pid, &status, WNOHANG) == 0) {
                if (waited >= ms) {
                        kill(b->pid, SIGKILL);
                        waitpid(b->pid, &status, 0);
                        status = -1;
                        break;
                }
                msleep(20);
                waited += 20;
        }
        while (got + 1 < n && (k = read(b->out, out + got, n - 1 - got)) > 0)
                got += (size_t) k;
        out[got] = 0;
        close(b->out);
        close(b->err);
        return status < 0 ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_follow(void) {
        char *p = strdup(logpath("follow.log")), out[4096];
        Bg b;
        int r;

        add(p, 0, 1, 0);
        b = start(p, NULL, NULL, NULL, NULL);
        GLEAN_TEST_CHECK(running_after(&b, 400), "returned with the job only submitted");
        add(p, 1, 1, 0);
        GLEAN_TEST_CHECK(running_after(&b, 300), "returned with the job only executing");
        add(p, 5, 1, 0);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "All jobs done.\n") == 0, "exit %d, out '%s'", r, out);
        free(p);
}

static void test_two_jobs_named(void) {
        char *p = strdup(logpath("named.log")), out[4096];
        Bg b;
        int r;

        add(p, 0, 2, 0);
        add(p, 0, 2, 1);
        b = start(p, "2.1", NULL, NULL, NULL);
        GLEAN_TEST_CHECK(running_after(&b, 300), "returned early");
        add(p, 5, 2, 0); /* the other job */
        GLEAN_TEST_CHECK(running_after(&b, 400), "returned on another job's end");
        add(p, 9, 2, 1);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "All jobs done.\n") == 0, "exit %d, out '%s'", r, out);

        /* the whole cluster: both ended already */
        b = start(p, "2", NULL, NULL, NULL);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "All jobs done.\n") == 0, "cluster: exit %d, out '%s'", r, out);
        free(p);
}

static void test_num_and_wait(void) {
        char *p = strdup(logpath("num.log")), out[4096];
        Bg b;
        int r;
        time_t t;

        add(p, 0, 3, 0);
        add(p, 0, 3, 1);
        add(p, 0, 3, 2);
        b = start("-num", "2", p, NULL, NULL);
        add(p, 5, 3, 1);
        GLEAN_TEST_CHECK(running_after(&b, 400), "-num 2 returned after one");
        add(p, 9, 3, 2);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "Specified number of jobs (2) done.\n") == 0, "-num: exit %d, '%s'", r,
                         out);

        /* 3.0 never ends: -wait 1 gives up */
        t = time(NULL);
        b = start("-wait", "1", p, NULL, NULL);
        r = finish(&b, 5000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 1 && strcmp(out, "Time expired.\n") == 0 && time(NULL) - t >= 1,
                         "-wait 1: exit %d, '%s'", r, out);

        /* -wait 0: what is there, then stop */
        b = start("-wait", "0", p, NULL, NULL);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "") == 0, "-wait 0: exit %d, '%s'", r, out);
        free(p);
}

static void test_echo_and_pieces(void) {
        char *p = strdup(logpath("echo.log")), out[8192], want[8192] = "", buf[1024], *cut;
        size_t half;
        Bg b;
        int r;

        add(p, 0, 4, 0);
        ev(buf, sizeof(buf), 0, 4, 0);
        strcat(want, buf);
        b = start("-echo", p, "4.0", NULL, NULL);
        GLEAN_TEST_CHECK(running_after(&b, 300), "returned early");
        /* a 005 in two writes, 400 ms apart: not an event until whole */
        ev(buf, sizeof(buf), 5, 4, 0);
        strcat(want, buf);
        half = strlen(buf) / 2;
        cut = strndup(buf, half);
        append(p, cut);
        GLEAN_TEST_CHECK(running_after(&b, 400), "half an event ended the wait");
        append(p, buf + half);
        strcat(want, "All jobs done.\n");
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, want) == 0, "exit %d, out\n%s\nwant\n%s", r, out, want);
        free(cut);
        free(p);
}

static void test_truncate_and_garbage(void) {
        char *p = strdup(logpath("trunc.log")), out[4096];
        Bg b;
        int r;

        add(p, 0, 5, 0);
        add(p, 1, 5, 0);
        append(p, "\x01\x02 garbage \xff\n....\n");
        b = start(p, NULL, NULL, NULL, NULL);
        GLEAN_TEST_CHECK(running_after(&b, 300), "returned early");
        GLEAN_TEST_CHECK(truncate(p, 0) == 0, "truncate");
        add(p, 0, 6, 0);
        GLEAN_TEST_CHECK(running_after(&b, 300), "returned after the truncation");
        add(p, 5, 5, 0);
        add(p, 5, 6, 0);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "All jobs done.\n") == 0, "exit %d, out '%s'", r, out);
        free(p);
}

static void test_errors(void) {
        char out[4096];
        Bg b;
        int r;

        b = start("-wait", "1", logpath("missing.log"), NULL, NULL);
        r = finish(&b, 4000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 1, "missing log: exit %d", r);
        /* a log that appears a moment later (the agent writes the first event) */
        b = start(logpath("later.log"), NULL, NULL, NULL, NULL);
        GLEAN_TEST_CHECK(running_after(&b, 500), "gave up on a log not there yet");
        add(logpath("later.log"), 0, 8, 0);
        add(logpath("later.log"), 5, 8, 0);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 0 && strcmp(out, "All jobs done.\n") == 0, "a log that came later: exit %d, '%s'", r, out);
        append(logpath("e.log"), "");
        b = start("-num", "0", logpath("e.log"), NULL, NULL);
        GLEAN_TEST_CHECK(finish(&b, 3000, out, sizeof(out)) == 2, "-num 0");
        b = start("-num", "1", "-allevents", logpath("e.log"), NULL);
        GLEAN_TEST_CHECK(finish(&b, 3000, out, sizeof(out)) == 2, "-num with -allevents");
        b = start(logpath("e.log"), "1.x", NULL, NULL, NULL);
        GLEAN_TEST_CHECK(finish(&b, 3000, out, sizeof(out)) == 1, "bad job id");
        b = start(logpath("e.log"), "1.0", "2.0", NULL, NULL);
        GLEAN_TEST_CHECK(finish(&b, 3000, out, sizeof(out)) == 2, "extra argument");
        /* an empty log: waits for a job to appear, -wait bounds it */
        b = start("-wait", "1", logpath("e.log"), NULL, NULL);
        r = finish(&b, 4000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 1 && strcmp(out, "Time expired.\n") == 0, "empty log: exit %d, '%s'", r, out);
        /* `glean wait JOBID` still asks the queue */
        b = start("--socket", logpath("no-such.sock"), "7.0", NULL, NULL);
        r = finish(&b, 3000, out, sizeof(out));
        GLEAN_TEST_CHECK(r == 1, "glean wait 7.0 without a queue: exit %d", r);
}

static int setup(void) {
        return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void) {
        char cmd[300];
        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        return system(cmd) == 0 ? 0 : -1;
}

static CU_TestInfo tests[] = {
        { "follow", test_follow },
        { "named-job", test_two_jobs_named },
        { "num-and-wait", test_num_and_wait },
        { "echo-and-pieces", test_echo_and_pieces },
        { "truncate-and-garbage", test_truncate_and_garbage },
        { "errors", test_errors },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "wait-log", setup, teardown, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

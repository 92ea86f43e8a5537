/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-conns.c — what one client can make the real glean-agent's
 * socket spend: connections per user (AGENT_MAX_CONNECTIONS_PER_USER; root
 * and others still served), silent connections (AGENT_HELLO_TIMEOUT,
 * AGENT_CONNECTION_IDLE_TIMEOUT), and the descriptor limit: connections
 * that exhaust it do not make the agent spin, and it serves again once they
 * are gone.
 *
 * The per-user checks need root (to be nobody and daemon in children).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent-test.h"

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A Status over fd: true when it is answered Ok. */
static bool status_ok(int fd) {
        ClassAd *m = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &m);
        ClassAd *r = call(fd, m);
        classad_free(m);
        bool ok = reply_ok(r, NULL);
        classad_free(r);
        return ok;
}

/* Connects as the Hello says and asks for the status: true when served;
 * why says what went wrong. */
static bool served(Pool *p, char *why, size_t whylen) {
        int fd = -1;
        if (glean_client_connect(p->sock, "glean", 5000, &fd, why, whylen) < 0)
                return false;
        bool ok = status_ok(fd);
        if (!ok)
                snprintf(why, whylen, "Status not answered");
        close(fd);
        return ok;
}

/* A raw connection (no Hello): the fd, or -1. */
static int raw_connect(const char *path) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        snprintf(sa.sun_path, sizeof sa.sun_path, "%s", path);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

/* Has the peer closed fd within ms (EOF or an error)? */
static bool closed_within(int fd, int ms) {
        int64_t end = now_ms() + ms;
        for (;;) {
                int left = (int) (end - now_ms());
                if (left <= 0)
                        return false;
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, left) <= 0)
                        continue;
                char buf[4096];
                ssize_t n = read(fd, buf, sizeof buf);
                if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
                        return true;
        }
}

/* CPU seconds (user + system) the process has used. */
static double cpu_seconds(pid_t pid) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *s = strrchr(buf, ')');
        unsigned long long ut = 0, st = 0;
        if (!s || sscanf(s + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return -1;
        return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}

/* ---- per user ---- */

#define PER_USER 5

static int run_as(const char *user, Pool *p, int (*fn)(Pool *p, int ctl), int ctl) {
        struct passwd *pw = getpwnam(user);
        if (!pw)
                return -1;
        uid_t uid = pw->pw_uid;
        gid_t gid = pw->pw_gid;
        fflush(NULL);
        pid_t child = fork();
        if (child == 0) {
                if (setgroups(0, NULL) < 0 || setgid(gid) < 0 || setuid(uid) < 0)
                        _exit(100);
                _exit(fn(p, ctl));
        }
        return child;
}

static int child_status(pid_t child) {
        int status;
        if (waitpid(child, &status, 0) != child)
                return -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* nobody: its PER_USER connections, then one more (refused, and told why);
 * it says so on ctl (one byte) and keeps them until ctl closes. */
static int hog(Pool *p, int ctl) {
        int fds[PER_USER];
        char why[512];
        for (int i = 0; i < PER_USER; i++)
                if (glean_client_connect(p->sock, "glean", 5000, &fds[i], why, sizeof why) < 0) {
                        fprintf(stderr, "connection %d of nobody: %s\n", i + 1, why);
                        return 10;
                }
        int extra = -1;
        if (glean_client_connect(p->sock, "glean", 5000, &extra, why, sizeof why) >= 0) {
                fprintf(stderr, "connection %d of nobody was accepted\n", PER_USER + 1);
                return 11;
        }
        if (!strstr(why, "AGENT_MAX_CONNECTIONS_PER_USER") || !strstr(why, "nobody")) {
                fprintf(stderr, "the refusal does not say why: %s\n", why);
                return 12;
        }
        /* The ones it has still work. */
        if (!status_ok(fds[0]))
                return 13;
        if (write(ctl, "x", 1) != 1)
                return 14;
        char c;
        while (read(ctl, &c, 1) > 0)
                ;
        /* One closed, one more may come. */
        close(fds[0]);
        usleep(200000);
        if (glean_client_connect(p->sock, "glean", 5000, &fds[0], why, sizeof why) < 0) {
                fprintf(stderr, "after closing one: %s\n", why);
                return 15;
        }
        return 0;
}

static int other_user(Pool *p, int ctl) {
        (void) ctl;
        char why[512];
        if (!served(p, why, sizeof why)) {
                fprintf(stderr, "daemon is not served while nobody holds its connections: %s\n", why);
                return 20;
        }
        return 0;
}

static void test_per_user_cap(void) {
        if (getuid() != 0) {
                printf("(not root: needs other users; skipped)\n");
                return;
        }
        Pool p;
        char conf[128];
        snprintf(conf, sizeof conf, "AGENT_MAX_CONNECTIONS_PER_USER = %d\n", PER_USER);
        CU_ASSERT_FATAL(pool_start(&p, conf));
        int ctl[2];
        CU_ASSERT_FATAL(pipe2(ctl, O_CLOEXEC) == 0);
        pid_t h = run_as("nobody", &p, hog, ctl[1]);
        CU_ASSERT_FATAL(h > 0);
        close(ctl[1]);
        char c;
        GLEAN_TEST_CHECK(read(ctl[0], &c, 1) == 1, "nobody did not get to hold its connections");
        int st = child_status(run_as("daemon", &p, other_user, -1));
        GLEAN_TEST_CHECK(st == 0, "another user while nobody is at its limit: child status %d", st);
        char why[512];
        /* Root, and many of its connections: not held to the per-user limit. */
        int fds[PER_USER * 2];
        int n = 0;
        for (; n < PER_USER * 2; n++)
                if (glean_client_connect(p.sock, "glean", 5000, &fds[n], why, sizeof why) < 0)
                        break;
        GLEAN_TEST_CHECK(n == PER_USER * 2, "root's connection %d: %s", n + 1, why);
        GLEAN_TEST_CHECK(n > 0 && status_ok(fds[n - 1]), "root is served");
        for (int i = 0; i < n; i++)
                close(fds[i]);
        close(ctl[0]);
        st = child_status(h);
        GLEAN_TEST_CHECK(st == 0, "nobody's connections: child status %d", st);
        GLEAN_TEST_CHECK(wait_log(&p, 2, "refusing a connection of nobody", "AGENT_MAX_CONNECTIONS_PER_USER"),
                         "no log record of the refusal");
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* ---- silence ---- */

static void test_idle_timeout(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "AGENT_CONNECTION_IDLE_TIMEOUT = 2\nAGENT_HELLO_TIMEOUT = 1\n"));
        char why[512];
        int fd = -1;
        CU_ASSERT_FATAL(glean_client_connect(p.sock, "glean", 5000, &fd, why, sizeof why) >= 0);
        /* Talking keeps it open... */
        for (int i = 0; i < 3; i++) {
                usleep(1000000);
                GLEAN_TEST_CHECK(status_ok(fd), "a connection that talks every second, round %d", i);
        }
        /* ...silence closes it. */
        int64_t t0 = now_ms();
        bool closed = closed_within(fd, 5000);
        int64_t waited = now_ms() - t0;
        GLEAN_TEST_CHECK(closed && waited >= 1500, "an idle connection: closed %d after %lld ms", closed,
                         (long long) waited);
        close(fd);
        /* No Hello: closed after AGENT_HELLO_TIMEOUT. */
        int raw = raw_connect(p.sock);
        CU_ASSERT_FATAL(raw >= 0);
        GLEAN_TEST_CHECK(closed_within(raw, 4000), "a connection without a Hello stays open");
        close(raw);
        GLEAN_TEST_CHECK(wait_log(&p, 2, "closing the connection of", "idle for 2 s"), "no log of the idle close");
        GLEAN_TEST_CHECK(served(&p, why, sizeof why), "the agent serves on: %s", why);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

/* ---- the descriptor limit ---- */

#define FLOOD 200

static void test_fd_limit(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, NULL));
        /* A low hard limit for the agent (the test keeps its own). */
        struct rlimit rl = { .rlim_cur = 64, .rlim_max = 64 };
        if (prlimit(p.pid, RLIMIT_NOFILE, &rl, NULL) < 0) {
                printf("(prlimit: %s; skipped)\n", strerror(errno));
                pool_stop(&p);
                return;
        }
        struct rlimit mine;
        getrlimit(RLIMIT_NOFILE, &mine);
        if (mine.rlim_cur < FLOOD + 64) {
                mine.rlim_cur = mine.rlim_max < FLOOD + 64 ? mine.rlim_max : FLOOD + 64;
                setrlimit(RLIMIT_NOFILE, &mine);
        }
        int fds[FLOOD];
        int n = 0;
        for (int i = 0; i < FLOOD; i++) {
                int fd = raw_connect(p.sock);
                if (fd >= 0)
                        fds[n++] = fd;
        }
        printf("(%d connections made) ", n);
        usleep(500000);
        double c0 = cpu_seconds(p.pid);
        int64_t t0 = now_ms();
        usleep(3000000);
        double c1 = cpu_seconds(p.pid);
        double secs = (double) (now_ms() - t0) / 1000.0;
        double busy = (c1 - c0) / secs;
        printf("(the agent at its descriptor limit: %.1f%% of a core over %.1f s) ", busy * 100, secs);
        GLEAN_TEST_CHECK(c0 >= 0 && busy < 0.3, "the agent spins at its descriptor limit: %.0f%% of a core",
                         busy * 100);
        for (int i = 0; i < n; i++)
                close(fds[i]);
        /* Once they are gone it serves again (within a second or two). */
        char why[512] = "";
        bool ok = false;
        for (int i = 0; i < 30 && !ok; i++) {
                ok = served(&p, why, sizeof why);
                if (!ok)
                        usleep(200000);
        }
        GLEAN_TEST_CHECK(ok, "served after the flood: %s", why);
        GLEAN_TEST_CHECK(wait_log(&p, 1, "cannot accept connections", "accepting again"),
                         "no log record of the pause");
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
}

static CU_TestInfo tests[] = {
        { "one user's connections are capped, others served", test_per_user_cap },
        { "silent connections are closed", test_idle_timeout },
        { "at the descriptor limit: no spinning, served again after", test_fd_limit },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent connections", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool-test.h — a whole pool on this machine for the integration suites:
 * the real glean-negotiator on a private database, socket, port and pool
 * key (Manager), real glean-agents dialing it (agent-test.h's Pool with
 * the manager's address), and the real `glean` command against them.
 *
 * Needs _GNU_SOURCE before the first #include. The binaries: $GLEAN,
 * $GLEAN_AGENT, $GLEAN_NEGOTIATOR (make check sets them to the flavour
 * being tested), else build/bin/.
 */
#pragma once

#include <netinet/in.h>
#include <sys/socket.h>

#include "../agent/agent-test.h"
#include "common/secure.h"

typedef struct Manager {
        char dir[64];
        char conf[128];
        char sock[128];
        char log[128];
        char key[128];
        char jobs[128]; /* a directory every job may write (jobs of root run as nobody) */
        int port;
        pid_t pid;
} Manager;

static inline int pool_free_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
        if (fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0 &&
            getsockname(fd, (struct sockaddr *) &sa, &len) == 0)
                port = ntohs(sa.sin_port);
        if (fd >= 0)
                close(fd);
        return port;
}

/* Starts (or restarts, keeping its directory, database and port) the
 * central manager and waits until its socket answers. */
static inline bool manager_launch(Manager *m) {
        m->pid = fork();
        if (m->pid == 0) {
                int fd = open(m->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dup2(fd, 2);
                        dup2(fd, 1);
                }
                setenv("GLEAN_LOG", "stderr", 1);
                setenv("GLEAN_CONFIG", m->conf, 1);
                unsetenv("NOTIFY_SOCKET");
                const char *nego = bin("GLEAN_NEGOTIATOR", "build/bin/glean-negotiator");
                execl(nego, nego, "--config", m->conf, (char *) NULL);
                _exit(127);
        }
        for (int i = 0; i < 400; i++) {
                int fd = -1;
                char why[256];
                if (glean_client_connect(m->sock, "glean", 1000, &fd, why, sizeof why) >= 0) {
                        close(fd);
                        return true;
                }
                int status;
                if (waitpid(m->pid, &status, WNOHANG) == m->pid) {
                        m->pid = 0;
                        break;
                }
                usleep(25000);
        }
        char *log = NULL;
        glean_test_read_file(m->log, &log, NULL);
        fprintf(stderr, "the central manager did not start:\n%s", log ? log : "");
        free(log);
        return false;
}

static inline bool manager_start(Manager *m, const char *extra) {
        char why[256];
        GleanPoolKey key;

        memset(m, 0, sizeof *m);
        snprintf(m->dir, sizeof m->dir, "/tmp/glean-pool-test-XXXXXX");
        if (!mkdtemp(m->dir))
                return false;
        chmod(m->dir, 0755);
        snprintf(m->conf, sizeof m->conf, "%s/glean.conf", m->dir);
        snprintf(m->sock, sizeof m->sock, "%s/negotiator.sock", m->dir);
        snprintf(m->log, sizeof m->log, "%s/negotiator.log", m->dir);
        snprintf(m->key, sizeof m->key, "%s/pool.key", m->dir);
        snprintf(m->jobs, sizeof m->jobs, "%s/jobs", m->dir);
        mkdir(m->jobs, 0777);
        chmod(m->jobs, 0777);
        if (glean_pool_key_generate(&key) < 0 || glean_pool_key_save(m->key, &key, false, why, sizeof why) < 0)
                return false;
        m->port = pool_free_port();
        char *text = NULL;
        if (asprintf(&text,
                     "LOCAL_CONFIG_DIR =\n"
                     "SPOOL = %s\n"
                     "NEGOTIATOR_DATABASE = %s/negotiator.db\n"
                     "NEGOTIATOR_SOCKET = %s\n"
                     "NEGOTIATOR_ADDRESS = 127.0.0.1\n"
                     "COLLECTOR_PORT = %d\n"
                     "POOL_KEY_FILE = %s\n"
                     "UID_DOMAIN = test.pool\n"
                     "ADMINISTRATORS = %s\n"
                     "NEGOTIATOR_INTERVAL = 2\n"
                     "NEGOTIATOR_MIN_INTERVAL = 0\n"
                     "NEGOTIATOR_CYCLE_DELAY = 0\n"
                     "ALIVE_INTERVAL = 2\n"
                     "UPDATE_INTERVAL = 2\n"
                     "PERIODIC_EXPR_INTERVAL = 1\n"
                     "%s",
                     m->dir, m->dir, m->sock, m->port, m->key, me(), extra ? extra : "") < 0)
                return false;
        write_file(m->conf, text);
        free(text);
        setenv("GLEAN_NEGOTIATOR_SOCKET", m->sock, 1);
        setenv("GLEAN_CONFIG", m->conf, 1);
        return manager_launch(m);
}

/* An agent of the pool: agent-test.h's Pool, dialing m. extra after. */
static inline bool manager_agent(Manager *m, Pool *p, const char *name, const char *extra) {
        char *text = NULL;
        if (asprintf(&text,
                     "COLLECTOR_HOST = 127.0.0.1:%d\n"
                     "POOL_KEY_FILE = %s\n"
                     "UID_DOMAIN = test.pool\n"
                     "NEGOTIATOR_RECONNECT_MAX = 1\n"
                     "ALIVE_INTERVAL = 2\n"
                     "%s%s%s"
                     "%s",
                     m->port, m->key, name ? "FULL_HOSTNAME = " : "", name ? name : "", name ? "\n" : "",
                     extra ? extra : "") < 0)
                return false;
        bool ok = pool_start(p, text);
        free(text);
        return ok;
}

static inline void manager_kill9(Manager *m) {
        if (m->pid > 0) {
                kill(m->pid, SIGKILL);
                waitpid(m->pid, NULL, 0);
                m->pid = 0;
        }
}

static inline int manager_stop(Manager *m) {
        int status = -1;
        if (m->pid > 0) {
                kill(m->pid, SIGTERM);
                for (int i = 0; i < 400; i++) {
                        if (waitpid(m->pid, &status, WNOHANG) == m->pid)
                                break;
                        status = -1;
                        usleep(25000);
                }
                if (status == -1) {
                        kill(m->pid, SIGKILL);
                        waitpid(m->pid, NULL, 0);
                }
                m->pid = 0;
        }
        char *log = NULL;
        if (glean_test_read_file(m->log, &log, NULL) >= 0 && (status != 0 || getenv("GLEAN_TEST_VERBOSE")))
                fprintf(stderr, "--- central manager log ---\n%s--- end ---\n", log);
        free(log);
        remove_dir(m->dir);
        unsetenv("GLEAN_NEGOTIATOR_SOCKET");
        unsetenv("GLEAN_CONFIG");
        return status;
}

/* `glean ARG...` (NULL-terminated) against the pool's central manager. */
static inline int gl(GleanTestRun *r, ...) __attribute__((sentinel));
static inline int gl(GleanTestRun *r, ...) {
        char *argv[24] = { (char *) bin("GLEAN", "build/bin/glean") };
        size_t n = 1;
        va_list ap;
        va_start(ap, r);
        for (char *a; n < sizeof argv / sizeof *argv - 1 && (a = va_arg(ap, char *));)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        return glean_test_run(argv, r);
}

/* The output of `glean ARG...` when it exits 0, else NULL (and a failure
 * with its output). The caller frees. */
static inline char *gl_out(const char *first, ...) __attribute__((sentinel));
static inline char *gl_out(const char *first, ...) {
        char *argv[24] = { (char *) bin("GLEAN", "build/bin/glean"), (char *) first };
        size_t n = 2;
        va_list ap;
        va_start(ap, first);
        for (char *a; n < sizeof argv / sizeof *argv - 1 && (a = va_arg(ap, char *));)
                argv[n++] = a;
        va_end(ap);
        argv[n] = NULL;
        GleanTestRun r;
        if (glean_test_run(argv, &r) < 0)
                return NULL;
        char *out = NULL;
        if (GLEAN_TEST_CHECK(r.status == 0, "glean %s: exit %d\n%s%s", first, r.status, r.out, r.err))
                out = strdup(r.out);
        glean_test_run_done(&r);
        return out;
}

/* Polls `glean q JOB -af ATTR` / `glean history JOB -af ATTR` until its
 * output (trimmed) is want, for up to seconds. */
static inline bool wait_attr(const char *verb, const char *job, const char *attr, const char *want, int seconds) {
        char last[256] = "";
        for (int i = 0; i < seconds * 10; i++) {
                char *argv[] = { (char *) bin("GLEAN", "build/bin/glean"), (char *) verb, (char *) job, "-af",
                                 (char *) attr, NULL };
                GleanTestRun r;
                if (glean_test_run(argv, &r) == 0) {
                        snprintf(last, sizeof last, "%s", r.out);
                        size_t n = strlen(last);
                        while (n && (last[n - 1] == '\n' || last[n - 1] == ' '))
                                last[--n] = 0;
                        glean_test_run_done(&r);
                        if (strcmp(last, want) == 0)
                                return true;
                }
                usleep(100000);
        }
        fprintf(stderr, "glean %s -af %s %s: \"%s\", want \"%s\" (after %d s)\n", verb, attr, job, last, want,
                seconds);
        return false;
}

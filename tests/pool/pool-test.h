/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool-test.h — a whole pool on this machine for the integration suites:
 * the real glean-negotiator on a private database, socket, port and pool
 * key (Manager), real glean-agents dialing it (agent-test.h's Pool with
 * the manager's address), and the real `glean` command against them.
 *
 * Several machines (NetPool, needs root): the central manager in a
 * network namespace of its own and each agent in another, joined to it by
 * a veth pair the test makes with libnl-route (10.231.K.1/30 on the
 * central manager's end, 10.231.K.2/30 on the agent's). The namespaces
 * are anonymous: they live while the test holds their fds or a process
 * runs in them, so they and their links are gone when the test exits,
 * however it exits; netpool_free() (and an atexit hook) kill -9 whatever
 * still runs in them first (nothing else runs there: all of it is ours).
 *
 * Nothing outlives a test that fails half-way: every daemon started here
 * (the central manager, each agent, a tmpfs holder) is tracked by its pid,
 * and pool_test_teardown() — each suite's per-test teardown, run by CUnit
 * also after a fatal assertion ended the test —, pool_test_suite_cleanup(),
 * and an atexit hook stop those still running (SIGTERM, so that an agent
 * ends its jobs; SIGKILL after a grace) and reap them, by pid, only while
 * they are still children of this process, then remove the NetPool
 * namespaces and the daemons' directories left behind; on SIGINT, SIGTERM,
 * SIGHUP or SIGABRT a handler sends them SIGTERM before the process dies
 * (they stop by themselves; their directories stay).
 * tests/pool/test-cleanup.c proves each way.
 *
 * Needs _GNU_SOURCE before the first #include. The binaries: $GLEAN,
 * $GLEAN_AGENT, $GLEAN_NEGOTIATOR (make check sets them to the flavour
 * being tested), else build/bin/.
 */
#pragma once

#include <dirent.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include <netlink/netlink.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>

#include "../agent/agent-test.h"
#include "common/secure.h"

/* ---- what a test started, stopped whatever way the test ends ---- */

#define POOL_TEST_MAX_PIDS 64
#define POOL_TEST_MAX_DIRS 64

static pid_t pool_test_pids[POOL_TEST_MAX_PIDS];
static char pool_test_dirs[POOL_TEST_MAX_DIRS][64];

/* pid is a child of ours (running, or a zombie not reaped yet): only
 * those are ever signalled. Does not reap; async-signal-safe. */
static inline bool pool_test_is_child(pid_t pid, bool *ret_running) {
        siginfo_t si = { 0 };
        if (pid <= 0 || waitid(P_PID, (id_t) pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0)
                return false;
        if (ret_running)
                *ret_running = si.si_pid == 0;
        return true;
}

/* On a fatal signal: SIGTERM to the daemons still running (they end their
 * jobs and exit by themselves), then the signal's default action. */
static inline void pool_test_on_signal(int sig) {
        for (size_t i = 0; i < POOL_TEST_MAX_PIDS; i++) {
                bool running = false;
                if (pool_test_is_child(pool_test_pids[i], &running) && running)
                        kill(pool_test_pids[i], SIGTERM);
        }
        signal(sig, SIG_DFL);
        raise(sig);
}

/* Stops and reaps every tracked daemon still a child of ours: SIGTERM,
 * grace seconds, then SIGKILL. How many there were. */
static inline size_t pool_test_reap_all(int grace) {
        size_t n = 0;
        for (size_t i = 0; i < POOL_TEST_MAX_PIDS; i++) {
                bool running = false;
                if (!pool_test_is_child(pool_test_pids[i], &running)) {
                        pool_test_pids[i] = 0;
                        continue;
                }
                n++;
                if (running) {
                        fprintf(stderr, "pool-test: pid %d still runs after the test: stopped\n", (int) pool_test_pids[i]);
                        kill(pool_test_pids[i], SIGTERM);
                }
        }
        for (int t = 0; n > 0 && t <= grace * 20; t++) {
                size_t left = 0;
                for (size_t i = 0; i < POOL_TEST_MAX_PIDS; i++) {
                        if (pool_test_pids[i] <= 0)
                                continue;
                        if (t == grace * 20)
                                kill(pool_test_pids[i], SIGKILL);
                        if (waitpid(pool_test_pids[i], NULL, t == grace * 20 ? 0 : WNOHANG) == pool_test_pids[i])
                                pool_test_pids[i] = 0;
                        else
                                left++;
                }
                if (!left)
                        break;
                usleep(50000);
        }
        return n;
}

static inline void pool_test_teardown(void);

static inline void pool_test_exit_hook(void) {
        pool_test_teardown();
}

/* Tracks pid (a daemon just started). The first call sets the exit hook
 * and the signal handlers. */
static inline void pool_test_track(pid_t pid) {
        static bool hooked;
        if (!hooked) {
                hooked = atexit(pool_test_exit_hook) == 0;
                struct sigaction sa = { .sa_handler = pool_test_on_signal };
                sigemptyset(&sa.sa_mask);
                static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGABRT };
                for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
                        struct sigaction old;
                        /* Not over a handler the test set itself. */
                        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL)
                                sigaction(sigs[i], &sa, NULL);
                }
        }
        if (pid <= 0)
                return;
        for (size_t i = 0; i < POOL_TEST_MAX_PIDS; i++)
                if (pool_test_pids[i] == pid)
                        return;
        for (size_t i = 0; i < POOL_TEST_MAX_PIDS; i++)
                if (!pool_test_is_child(pool_test_pids[i], NULL)) {
                        pool_test_pids[i] = pid;
                        return;
                }
        fprintf(stderr, "pool-test: more than %d daemons at once: pid %d not tracked\n", POOL_TEST_MAX_PIDS, (int) pid);
}

/* Tracks a directory a daemon of the test works in, removed by the
 * teardown if still there. */
static inline void pool_test_track_dir(const char *dir) {
        size_t free_at = POOL_TEST_MAX_DIRS;
        for (size_t i = 0; i < POOL_TEST_MAX_DIRS; i++) {
                if (strcmp(pool_test_dirs[i], dir) == 0)
                        return;
                if (free_at == POOL_TEST_MAX_DIRS && (!pool_test_dirs[i][0] || access(pool_test_dirs[i], F_OK) < 0))
                        free_at = i;
        }
        if (free_at < POOL_TEST_MAX_DIRS)
                snprintf(pool_test_dirs[free_at], sizeof pool_test_dirs[free_at], "%s", dir);
}

typedef struct Manager {
        char dir[64];
        char conf[128];
        char sock[128];
        char log[128];
        char key[128];
        char jobs[128]; /* a directory every job may write (jobs of root run as nobody) */
        int port;
        pid_t pid;
        int ns;        /* the network namespace it runs in (an fd), -1: the test's */
        int mntns;     /* the mount namespace it runs in (an fd), -1: the test's */
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
                /* Joining a mount namespace moves to its root: back to where the test runs. */
                int cwd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if ((m->ns >= 0 && setns(m->ns, CLONE_NEWNET) < 0) ||
                    (m->mntns >= 0 && (setns(m->mntns, CLONE_NEWNS) < 0 || fchdir(cwd) < 0)))
                        _exit(126);
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
        pool_test_track(m->pid);
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

/* Its directory, configuration and pool key, not started yet (then
 * manager_launch). */
static inline bool manager_prepare(Manager *m, const char *extra) {
        char why[256];
        GleanPoolKey key;

        memset(m, 0, sizeof *m);
        m->ns = m->mntns = -1;
        snprintf(m->dir, sizeof m->dir, "/tmp/glean-pool-test-XXXXXX");
        if (!mkdtemp(m->dir))
                return false;
        pool_test_track_dir(m->dir);
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
                     /* one machine, one file system: jobs run in their
                      * Iwd unless they ask for transfer (IF_NEEDED) */
                     "FILESYSTEM_DOMAIN = test.pool\n"
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
        return true;
}

/* ns: the network namespace to run it in (an fd the caller keeps open
 * while it runs), -1 the test's. */
static inline bool manager_start_ns(Manager *m, const char *extra, int ns) {
        if (!manager_prepare(m, extra))
                return false;
        m->ns = ns;
        return manager_launch(m);
}

static inline bool manager_start(Manager *m, const char *extra) {
        return manager_start_ns(m, extra, -1);
}

/* An agent of the pool: agent-test.h's Pool, dialing m at host (an
 * address of m's). extra after. */
static inline bool manager_agent_at(Manager *m, Pool *p, const char *name, const char *host, const char *extra) {
        char *text = NULL;
        if (asprintf(&text,
                     "COLLECTOR_HOST = %s:%d\n"
                     "POOL_KEY_FILE = %s\n"
                     "UID_DOMAIN = test.pool\n"
                     "FILESYSTEM_DOMAIN = test.pool\n"
                     "NEGOTIATOR_RECONNECT_MAX = 1\n"
                     "ALIVE_INTERVAL = 2\n"
                     "%s%s%s"
                     "%s",
                     host, m->port, m->key, name ? "FULL_HOSTNAME = " : "", name ? name : "", name ? "\n" : "",
                     extra ? extra : "") < 0)
                return false;
        bool ok = pool_start(p, text);
        free(text);
        if (ok) {
                pool_test_track(p->pid);
                pool_test_track_dir(p->dir);
        }
        return ok;
}

static inline bool manager_agent(Manager *m, Pool *p, const char *name, const char *extra) {
        return manager_agent_at(m, p, name, "127.0.0.1", extra);
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

/* `glean ARGS...` as user (NULL: the test's own): its exit status, its
 * output (stdout and stderr) in out. */
static inline int glean_as(const char *user, char *out, size_t len, const char *const *args) {
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -1;
        pid_t pid = fork();
        if (pid == 0) {
                struct passwd *pw = user ? getpwnam(user) : NULL;
                if (user && (!pw || setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0))
                        _exit(125);
                dup2(pipefd[1], 1);
                dup2(pipefd[1], 2);
                const char *argv[16] = { bin("GLEAN", "build/bin/glean") };
                for (size_t i = 0; args[i] && i < 14; i++)
                        argv[i + 1] = args[i];
                execv(argv[0], (char *const *) argv);
                _exit(127);
        }
        close(pipefd[1]);
        size_t n = 0;
        ssize_t k;
        while (n + 1 < len && (k = read(pipefd[0], out + n, len - 1 - n)) > 0)
                n += (size_t) k;
        out[n] = 0;
        close(pipefd[0]);
        int status = -1;
        waitpid(pid, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Polls `glean status -af Name` until it lists slot (the agent has
 * connected to the central manager and advertised), for up to seconds. */
static inline bool wait_slot_listed(const char *slot, int seconds) {
        for (int i = 0; i < seconds * 10; i++) {
                char *argv[] = { (char *) bin("GLEAN", "build/bin/glean"), "status", "-af", "Name", NULL };
                GleanTestRun r;
                bool found = false;
                if (glean_test_run(argv, &r) == 0) {
                        for (char *line = strtok(r.out, "\n"); line && !found; line = strtok(NULL, "\n"))
                                found = strcmp(line, slot) == 0;
                        glean_test_run_done(&r);
                }
                if (found)
                        return true;
                usleep(100000);
        }
        fprintf(stderr, "glean status never listed %s (after %d s)\n", slot, seconds);
        return false;
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

/* ---- several machines: network namespaces joined by veth pairs ---- */

#define NETPOOL_MAX 8

typedef struct NetNode {
        int ns;                 /* its network namespace (an fd) */
        char cm_if[IFNAMSIZ];   /* "gcmK": the pair's end in the central manager's namespace */
        char ifname[IFNAMSIZ];  /* "gagK": its end in the node's */
        char cm_addr[16];       /* 10.231.K.1: the central manager as this node reaches it */
        char addr[16];          /* 10.231.K.2 */
} NetNode;

typedef struct NetPool {
        int home;               /* the test's own namespace */
        int cm;                 /* the central manager's */
        NetNode node[NETPOOL_MAX];
        size_t n;
} NetPool;

/* The namespaces made, for the exit hook (the fds of live NetPools). */
static int netpool_all[2 + NETPOOL_MAX] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };

/* Runs the rest of the calling (single-threaded) process in namespace ns. */
static inline int netns_enter(int ns) {
        return setns(ns, CLONE_NEWNET) < 0 ? -errno : 0;
}

/* A new anonymous network namespace, its fd in *ret; the caller stays in
 * home. */
static inline int netns_new(int home, int *ret) {
        if (unshare(CLONE_NEWNET) < 0)
                return -errno;
        int fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        int r = fd < 0 ? -errno : 0;
        if (netns_enter(home) < 0)
                abort(); /* cannot happen: home is the namespace we came from */
        if (r >= 0)
                *ret = fd;
        return r;
}

/* Kills (-9) every process whose network namespace is ns and waits a
 * moment for them to go (the test's own children to zombies: whoever
 * started them reaps them): all are the test's, none is anyone else's. */
static inline void netns_kill_all(int ns) {
        struct stat want;
        if (ns < 0 || fstat(ns, &want) < 0)
                return;
        for (int round = 0; round < 50; round++) {
                size_t found = 0;
                DIR *d = opendir("/proc");
                struct dirent *e;
                while (d && (e = readdir(d))) {
                        char path[64];
                        struct stat st;
                        pid_t pid = (pid_t) strtol(e->d_name, NULL, 10);
                        if (pid <= 1 || pid == getpid())
                                continue;
                        snprintf(path, sizeof path, "/proc/%d/ns/net", (int) pid);
                        if (stat(path, &st) < 0 || st.st_ino != want.st_ino || st.st_dev != want.st_dev)
                                continue;
                        char state = proc_state(pid);
                        if (state == 'Z' || state == 0)
                                continue;
                        kill(pid, SIGKILL);
                        found++;
                }
                if (d)
                        closedir(d);
                if (!found) /* our own children stay zombies for their Pool or Manager to reap */
                        return;
                usleep(20000);
        }
}

static inline void netpool_exit_hook(void) {
        for (size_t i = 0; i < sizeof netpool_all / sizeof *netpool_all; i++)
                if (netpool_all[i] >= 0) {
                        netns_kill_all(netpool_all[i]);
                        close(netpool_all[i]);
                        netpool_all[i] = -1;
                }
}

/* A netlink route socket in namespace ns (opened there, it stays there). */
static inline struct nl_sock *netns_nl(const NetPool *np, int ns) {
        if (netns_enter(ns) < 0)
                return NULL;
        struct nl_sock *sk = nl_socket_alloc();
        if (sk && nl_connect(sk, NETLINK_ROUTE) < 0) {
                nl_socket_free(sk);
                sk = NULL;
        }
        if (netns_enter(np->home) < 0)
                abort();
        return sk;
}

/* Sets link name up or down: 0 or a libnl error (negative). */
static inline int nl_link_set_up(struct nl_sock *sk, const char *name, bool up) {
        struct rtnl_link *link = NULL, *change = rtnl_link_alloc();
        int r = change ? rtnl_link_get_kernel(sk, 0, name, &link) : -NLE_NOMEM;
        if (r >= 0) {
                if (up)
                        rtnl_link_set_flags(change, IFF_UP);
                else
                        rtnl_link_unset_flags(change, IFF_UP);
                r = rtnl_link_change(sk, link, change, 0);
        }
        rtnl_link_put(link);
        rtnl_link_put(change);
        return r;
}

/* Adds (or deletes) the address cidr ("10.231.1.2/30") on link name. */
static inline int nl_addr_change(struct nl_sock *sk, const char *name, const char *cidr, bool add) {
        struct rtnl_link *link = NULL;
        struct nl_addr *local = NULL;
        struct rtnl_addr *a = rtnl_addr_alloc();
        int r = a ? rtnl_link_get_kernel(sk, 0, name, &link) : -NLE_NOMEM;
        if (r >= 0)
                r = nl_addr_parse(cidr, AF_INET, &local);
        if (r >= 0) {
                rtnl_addr_set_ifindex(a, rtnl_link_get_ifindex(link));
                r = rtnl_addr_set_local(a, local);
        }
        if (r >= 0)
                r = add ? rtnl_addr_add(sk, a, 0) : rtnl_addr_delete(sk, a, 0);
        nl_addr_put(local);
        rtnl_addr_put(a);
        rtnl_link_put(link);
        return r;
}

/* Why a NetPool cannot be had here (true, why filled in): root, network
 * and mount namespaces, veth pairs, tried in a child. */
static inline bool netpool_unavailable(char *why, size_t len) {
        why[0] = 0;
        if (geteuid() != 0) {
                snprintf(why, len, "needs root (network namespaces, veth pairs, setns)");
                return true;
        }
        pid_t pid = fork();
        if (pid == 0) {
                if (unshare(CLONE_NEWNET | CLONE_NEWNS) < 0)
                        _exit(1);
                struct nl_sock *sk = nl_socket_alloc();
                if (!sk || nl_connect(sk, NETLINK_ROUTE) < 0 || rtnl_link_veth_add(sk, "gtry0", "gtry1", getpid()) < 0)
                        _exit(2);
                _exit(0);
        }
        int status = -1;
        if (pid < 0 || waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
                snprintf(why, len, "cannot try namespaces here (fork)");
        else if (WEXITSTATUS(status) == 1)
                snprintf(why, len, "cannot make network and mount namespaces here (unshare: not permitted)");
        else if (WEXITSTATUS(status) == 2)
                snprintf(why, len, "cannot make a veth pair in a network namespace (no veth driver?)");
        return why[0] != 0;
}

/* The central manager's namespace and n nodes, each joined to it by a
 * veth pair with its /30. false with a message on failure (what was made
 * is undone). */
static inline bool netpool_new(NetPool *np, size_t n) {
        char msg[256] = "";
        memset(np, 0, sizeof *np);
        np->home = np->cm = -1;
        for (size_t i = 0; i < NETPOOL_MAX; i++)
                np->node[i].ns = -1;
        if (n > NETPOOL_MAX)
                return false;
        static bool hooked;
        if (!hooked && atexit(netpool_exit_hook) == 0)
                hooked = true;
        np->home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
        int r = np->home < 0 ? -errno : netns_new(np->home, &np->cm);
        if (r < 0) {
                snprintf(msg, sizeof msg, "a network namespace: %s", strerror(-r));
                goto fail;
        }
        netpool_all[0] = np->cm;
        struct nl_sock *cm = netns_nl(np, np->cm);
        if (!cm || nl_link_set_up(cm, "lo", true) < 0) {
                snprintf(msg, sizeof msg, "netlink in the central manager's namespace");
                nl_socket_free(cm);
                goto fail;
        }
        for (size_t k = 0; k < n; k++) {
                NetNode *d = &np->node[k];
                char cidr[32];
                if ((r = netns_new(np->home, &d->ns)) < 0) {
                        snprintf(msg, sizeof msg, "a network namespace: %s", strerror(-r));
                        break;
                }
                netpool_all[1 + k] = d->ns;
                np->n = k + 1;
                snprintf(d->cm_if, sizeof d->cm_if, "gcm%zu", k + 1);
                snprintf(d->ifname, sizeof d->ifname, "gag%zu", k + 1);
                snprintf(d->cm_addr, sizeof d->cm_addr, "10.231.%zu.1", k + 1);
                snprintf(d->addr, sizeof d->addr, "10.231.%zu.2", k + 1);
                /* The pair made in the central manager's namespace, its peer moved to the node's. */
                struct rtnl_link *veth = rtnl_link_veth_alloc();
                struct rtnl_link *peer = veth ? rtnl_link_veth_get_peer(veth) : NULL;
                r = peer ? 0 : -NLE_NOMEM;
                if (r >= 0) {
                        rtnl_link_set_name(veth, d->cm_if);
                        rtnl_link_set_name(peer, d->ifname);
                        rtnl_link_set_ns_fd(peer, d->ns);
                        r = rtnl_link_add(cm, veth, NLM_F_CREATE | NLM_F_EXCL);
                }
                rtnl_link_put(peer);
                rtnl_link_veth_release(veth);
                snprintf(cidr, sizeof cidr, "%s/30", d->cm_addr);
                if (r >= 0 && (r = nl_addr_change(cm, d->cm_if, cidr, true)) >= 0)
                        r = nl_link_set_up(cm, d->cm_if, true);
                struct nl_sock *sk = r >= 0 ? netns_nl(np, d->ns) : NULL;
                snprintf(cidr, sizeof cidr, "%s/30", d->addr);
                if (r >= 0 && !sk)
                        r = -NLE_FAILURE;
                if (r >= 0 && (r = nl_link_set_up(sk, "lo", true)) >= 0 &&
                    (r = nl_addr_change(sk, d->ifname, cidr, true)) >= 0)
                        r = nl_link_set_up(sk, d->ifname, true);
                nl_socket_free(sk);
                if (r < 0) {
                        snprintf(msg, sizeof msg, "the veth pair %s-%s: %s", d->cm_if, d->ifname, nl_geterror(r));
                        break;
                }
        }
        nl_socket_free(cm);
        if (!msg[0])
                return true;
fail:
        fprintf(stderr, "netpool: %s\n", msg);
        for (size_t k = 0; k < np->n; k++) {
                close(np->node[k].ns);
                netpool_all[1 + k] = -1;
        }
        if (np->cm >= 0)
                close(np->cm);
        netpool_all[0] = -1;
        if (np->home >= 0)
                close(np->home);
        return false;
}

/* Everything still running in the namespaces killed, the fds closed: the
 * namespaces and their links go with the last of their processes. */
static inline void netpool_free(NetPool *np) {
        for (size_t k = 0; k < np->n; k++) {
                netns_kill_all(np->node[k].ns);
                close(np->node[k].ns);
                netpool_all[1 + k] = -1;
        }
        netns_kill_all(np->cm);
        close(np->cm);
        netpool_all[0] = -1;
        close(np->home);
        np->n = 0;
}

/* The agent of node k (from 0) in its namespace, dialing m over its link. */
static inline bool netpool_agent(NetPool *np, size_t k, Manager *m, Pool *p, const char *name, const char *extra) {
        if (netns_enter(np->node[k].ns) < 0)
                return false;
        bool ok = manager_agent_at(m, p, name, np->node[k].cm_addr, extra);
        if (netns_enter(np->home) < 0)
                abort();
        return ok;
}

/* Node k's link, inside its namespace: up or down. */
static inline bool netpool_link(NetPool *np, size_t k, bool up) {
        struct nl_sock *sk = netns_nl(np, np->node[k].ns);
        int r = sk ? nl_link_set_up(sk, np->node[k].ifname, up) : -NLE_FAILURE;
        nl_socket_free(sk);
        return GLEAN_TEST_CHECK(r >= 0, "%s %s: %s", np->node[k].ifname, up ? "up" : "down", nl_geterror(r));
}

/* ---- jobs of several users, and how often each job runs ---- */

/* `glean submit` of the submit description body (universe, initialdir =
 * m->jobs and small requests put before it) written to m->jobs/name, as
 * user (a name from /etc/passwd; NULL: the test's own): the cluster made,
 * 0 when refused (why, may be NULL, gets glean's message), -1 when it
 * could not run. */
static inline int64_t submit_as(const Manager *m, const char *user, const char *name, const char *body, char *why,
                                size_t len) {
        char path[256], *text = NULL;
        snprintf(path, sizeof path, "%s/%s", m->jobs, name);
        if (asprintf(&text, "universe = vanilla\ninitialdir = %s\nrequest_memory = 16\nrequest_disk = 16\n%s", m->jobs,
                     body) < 0)
                return -1;
        write_file(path, text);
        free(text);
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -1;
        pid_t pid = fork();
        if (pid == 0) {
                struct passwd *pw = user ? getpwnam(user) : NULL;
                if (user && (!pw || setgroups(0, NULL) < 0 || setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0))
                        _exit(125);
                dup2(pipefd[1], 1);
                dup2(pipefd[1], 2);
                const char *g = bin("GLEAN", "build/bin/glean");
                execl(g, g, "submit", path, (char *) NULL);
                _exit(127);
        }
        close(pipefd[1]);
        char out[2048];
        size_t n = 0;
        ssize_t k;
        while ((k = read(pipefd[0], out + n, sizeof out - 1 - n)) > 0)
                n += (size_t) k;
        out[n] = 0;
        close(pipefd[0]);
        int status = -1;
        waitpid(pid, &status, 0);
        const char *p = strstr(out, "submitted to cluster ");
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && p)
                return strtoll(p + strlen("submitted to cluster "), NULL, 10);
        if (why)
                snprintf(why, len, "%s", out);
        if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
                return 0;
        fprintf(stderr, "glean submit %s as %s: wait status %d\n%s", path, user ? user : me(), status, out);
        return -1;
}

/* A job script in m->jobs that appends "$$" to starts.$1 (one line per
 * run, so that the test sees every run and its pid), sleeps $2 seconds
 * (a second on a later run) and exits $3. */
static inline void write_starts_script(const Manager *m) {
        char path[200];
        snprintf(path, sizeof path, "%s/starts.sh", m->jobs);
        write_file(path, "#!/bin/sh\necho $$ >> starts.$1\n"
                         "if [ \"$(wc -l < starts.$1)\" -gt 1 ]; then sleep 1; else sleep $2; fi\nexit $3\n");
        chmod(path, 0755);
}

/* jobs/release.sh ID N CODE: records its pid as starts.sh does, waits
 * for jobs/release.ID (pool_release), burns CPU (N iterations of sh's
 * arithmetic), exits CODE. */
static inline void write_release_script(const Manager *m) {
        char path[200];
        snprintf(path, sizeof path, "%s/release.sh", m->jobs);
        write_file(path, "#!/bin/sh\necho $$ >> starts.$1\n"
                         "while [ ! -e release.$1 ]; do sleep 0.05; done\n"
                         "i=0; while [ $i -lt $2 ]; do i=$((i+1)); done\nexit $3\n");
        chmod(path, 0755);
}

static inline void pool_release(const Manager *m, const char *job) {
        char path[256];
        snprintf(path, sizeof path, "%s/release.%s", m->jobs, job);
        write_file(path, "go\n");
}

/* Waits up to seconds until the agent of dir (a Pool's) has recorded a
 * running job (a state file in dir/execute/.glean-state): from then on the
 * job outlives the agent; before, it ends with it. */
static inline bool wait_job_recorded(const char *dir, int seconds) {
        char path[256];
        snprintf(path, sizeof path, "%s/execute/.glean-state", dir);
        for (int i = 0; i < seconds * 20; i++) {
                DIR *d = opendir(path);
                struct dirent *e;
                bool found = false;
                while (d && !found && (e = readdir(d))) {
                        size_t n = strlen(e->d_name);
                        found = n > 3 && strcmp(e->d_name + n - 3, ".ad") == 0;
                }
                if (d)
                        closedir(d);
                if (found)
                        return true;
                usleep(50000);
        }
        return false;
}

/* The pids job (its "C.P") recorded, up to max: how many. */
static inline size_t job_starts(const Manager *m, const char *job, pid_t *pids, size_t max) {
        char path[512], *text = NULL;
        snprintf(path, sizeof path, "%s/starts.%s", m->jobs, job);
        if (glean_test_read_file(path, &text, NULL) < 0)
                return 0;
        size_t n = 0;
        for (char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                pid_t pid = (pid_t) strtol(line, NULL, 10);
                if (pid > 0 && n < max)
                        pids[n] = pid;
                n += pid > 0;
        }
        free(text);
        return n;
}

/* Of the runs job recorded, how many run now (a zombie has ended). The
 * script's shell is the recorded pid: it lives while its run does. */
static inline size_t job_running_now(const Manager *m, const char *job) {
        pid_t pids[64];
        size_t n = job_starts(m, job, pids, 64), alive = 0;
        for (size_t i = 0; i < n && i < 64; i++) {
                char st = proc_state(pids[i]);
                alive += st != 0 && st != 'Z';
        }
        return alive;
}

/* Watches jobs (their "C.P"s) for seconds, every 50 ms: false (a failure
 * recorded) as soon as one runs twice at once. until, when not NULL,
 * ends the watch early once it returns true. */
static inline bool never_twice(const Manager *m, char ids[][32], size_t n, int seconds, bool (*until)(void *),
                               void *arg) {
        for (int i = 0; i < seconds * 20; i++) {
                for (size_t j = 0; j < n; j++) {
                        size_t k = job_running_now(m, ids[j]);
                        if (!GLEAN_TEST_CHECK(k <= 1, "job %s runs %zu times at once", ids[j], k))
                                return false;
                }
                if (until && until(arg))
                        return true;
                usleep(50000);
        }
        return true;
}

/* Trims trailing white space in place. */
static inline char *pool_trim(char *s) {
        if (!s)
                return s;
        size_t n = strlen(s);
        while (n && (s[n - 1] == '\n' || s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
                s[--n] = 0;
        return s;
}

/* ---- a small disk of the central manager's own ---- */

/* A mount namespace with a tmpfs of size ("8m") on dir (which exists),
 * held by a child that sleeps in it (and dies with the test): its pid, 0
 * on failure; the namespace's fd in *ret_ns, for manager_launch (m->mntns).
 * / is made private in it first: nothing is mounted in the test's
 * namespace. Its files: /proc/PID/root/DIR/... */
static inline pid_t tmpfs_ns(const char *dir, const char *size, int *ret_ns) {
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return 0;
        pid_t pid = fork();
        if (pid == 0) {
                char opts[64];
                snprintf(opts, sizeof opts, "size=%s,mode=0755", size);
                prctl(PR_SET_PDEATHSIG, SIGKILL);
                if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                    mount("tmpfs", dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0) {
                        fprintf(stderr, "tmpfs on %s in a mount namespace: %s\n", dir, strerror(errno));
                        _exit(1);
                }
                if (write(pipefd[1], "1", 1) != 1)
                        _exit(1);
                for (;;)
                        pause();
        }
        close(pipefd[1]);
        pool_test_track(pid);
        char c = 0;
        bool ok = pid > 0 && read(pipefd[0], &c, 1) == 1;
        close(pipefd[0]);
        char path[64];
        snprintf(path, sizeof path, "/proc/%d/ns/mnt", (int) pid);
        int fd = ok ? open(path, O_RDONLY | O_CLOEXEC) : -1;
        if (fd < 0) {
                if (pid > 0) {
                        kill(pid, SIGKILL);
                        waitpid(pid, NULL, 0);
                }
                return 0;
        }
        *ret_ns = fd;
        return pid;
}

static inline void tmpfs_ns_end(pid_t pid, int ns) {
        if (ns >= 0)
                close(ns);
        if (pid > 0) {
                kill(pid, SIGKILL);
                waitpid(pid, NULL, 0);
        }
}

/* ---- after each test ---- */

/* Each suite's per-test teardown (CU_SuiteInfo's pTearDownFunc): CUnit
 * runs it after the test, also when a fatal assertion ended it half-way.
 * The daemons still running stopped and reaped, the namespaces of NetPools
 * not freed removed (what runs in them killed, their fds closed: they and
 * their veth pairs go), the daemons' directories left behind removed. */
static inline void pool_test_teardown(void) {
        pool_test_reap_all(15);
        netpool_exit_hook();
        for (size_t i = 0; i < POOL_TEST_MAX_DIRS; i++)
                if (pool_test_dirs[i][0]) {
                        char dir[sizeof pool_test_dirs[i]];
                        memcpy(dir, pool_test_dirs[i], sizeof dir);
                        dir[sizeof dir - 1] = 0;
                        if (access(dir, F_OK) == 0)
                                remove_dir(dir);
                        pool_test_dirs[i][0] = 0;
                }
}

/* The same as a suite's cleanup (CU_SuiteInfo's pCleanupFunc). */
static inline int pool_test_suite_cleanup(void) {
        pool_test_teardown();
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool-common.h — what the pool benchmarks (bench/pool.c,
 * bench/pool-throughput.c) share: a private pool directory under
 * build/bench-data/, the central manager's configuration and process, and
 * requests over its unix socket as a user makes them.
 *
 * Header only: every bench/NAME.c is a program of its own. The includer
 * defines BENCH_NAME (the prefix of its messages) and TIMEOUT_MS (how long
 * a request may take, in ms) before including it, and on_die() after it:
 * what die() does last (ends the line with where the logs are, stops the
 * daemons).
 */
#ifndef GLEAN_BENCH_POOL_COMMON_H
#define GLEAN_BENCH_POOL_COMMON_H

#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"
#include "common/proto.h"
#include "common/secure.h"

/* The pool's directory and the central manager's files in it. */
static char dir[200], sock_path[300], nego_conf[300], nego_log[300], key_path[300];
static int port;
static pid_t nego_pid;
static GleanPoolKey pool_key;

static void on_die(void);

/* The monotonic clock, in seconds. */
static inline double mono(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* The wall clock (the daemons' records are stamped with it), in seconds. */
static double wall(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fprintf(stderr, BENCH_NAME ": ");
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        on_die();
        exit(1);
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fprintf(stderr, BENCH_NAME ": ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

/* ---- the pool's directory and configuration ---- */

static int free_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 ||
            getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                die("cannot find a free port: %m");
        close(fd);
        return ntohs(sa.sin_port);
}

/* The soft RLIMIT_NOFILE raised to the hard one; dies when that leaves
 * fewer than n descriptors and some to spare. */
static inline void raise_nofile(int n) {
        struct rlimit rl;

        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
                rl.rlim_cur = rl.rlim_max;
                setrlimit(RLIMIT_NOFILE, &rl);
        }
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t) n + 64)
                die("RLIMIT_NOFILE is %llu: too few for %d connections\n", (unsigned long long) rl.rlim_cur, n);
}

/* build/bench-data/NAME.XXXXXX with the central manager's paths in it, a
 * new pool key (pool_key, saved at key_path) and a free port. */
static void pool_dir(const char *name) {
        char why[512], cwd[160];

        mkdir("build/bench-data", 0755);
        snprintf(dir, sizeof dir, "%s/build/bench-data/%s.XXXXXX", getcwd(cwd, sizeof cwd) ? cwd : ".", name);
        if (!mkdtemp(dir))
                die("mkdtemp %s: %m", dir);
        snprintf(sock_path, sizeof sock_path, "%s/negotiator.sock", dir);
        snprintf(nego_conf, sizeof nego_conf, "%s/negotiator.conf", dir);
        snprintf(nego_log, sizeof nego_log, "%s/negotiator.log", dir);
        snprintf(key_path, sizeof key_path, "%s/pool.key", dir);
        if (glean_pool_key_generate(&pool_key) < 0 ||
            glean_pool_key_save(key_path, &pool_key, false, why, sizeof why) < 0)
                die("pool key: %s", why);
        port = free_port();
}

static FILE *conf_open(const char *path) {
        FILE *f = fopen(path, "w");

        if (!f)
                die("%s: %m", path);
        return f;
}

static void conf_close(FILE *f, const char *path) {
        if (fclose(f) != 0)
                die("%s: %m", path);
}

/* The central manager's configuration, its lines about the pool written:
 * the includer adds its own and calls conf_close(f, nego_conf). */
static FILE *nego_conf_open(void) {
        FILE *f = conf_open(nego_conf);

        fprintf(f,
                "LOCAL_CONFIG_DIR =\n"
                "SPOOL = %s\n"
                "NEGOTIATOR_DATABASE = %s/negotiator.db\n"
                "NEGOTIATOR_SOCKET = %s\n"
                "NEGOTIATOR_ADDRESS = 127.0.0.1\n"
                "COLLECTOR_PORT = %d\n"
                "POOL_KEY_FILE = %s\n"
                "UID_DOMAIN = bench.pool\n",
                dir, dir, sock_path, port, key_path);
        return f;
}

/* ---- the daemons ---- */

/* A daemon with its configuration, logging to `log` (stderr and stdout). */
static pid_t spawn(const char *prog, const char *conf, const char *log) {
        pid_t pid = fork();

        if (pid < 0)
                die("fork: %m");
        if (pid == 0) {
                int fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dup2(fd, STDERR_FILENO);
                        dup2(fd, STDOUT_FILENO);
                }
                setenv("GLEAN_LOG", "stderr", 1);
                setenv("GLEAN_CONFIG", conf, 1);
                unsetenv("NOTIFY_SOCKET");
                unsetenv("JOURNAL_STREAM");
                execl(prog, prog, "--config", conf, (char *) NULL);
                _exit(127);
        }
        return pid;
}

/* glean-negotiator ($GLEAN_NEGOTIATOR, else build/bin/glean-negotiator)
 * started (nego_pid), once it answers on its socket. */
static void start_negotiator(void) {
        const char *bin = getenv("GLEAN_NEGOTIATOR");
        nego_pid = spawn(bin && *bin ? bin : "build/bin/glean-negotiator", nego_conf, nego_log);
        for (int i = 0;; i++) {
                int fd = -1;
                char why[256] = "";
                if (glean_client_connect(sock_path, "glean", 1000, &fd, why, sizeof why) == 0) {
                        close(fd);
                        break;
                }
                if (waitpid(nego_pid, NULL, WNOHANG) == nego_pid) {
                        nego_pid = 0;
                        die("glean-negotiator exited at start");
                }
                if (i > 400)
                        die("glean-negotiator does not answer on %s: %s", sock_path, why);
                usleep(25000);
        }
}

/* ---- requests over the unix socket ---- */

static int connect_user(void) {
        int fd;
        char why[256];

        if (glean_client_connect(sock_path, "glean", 5000, &fd, why, sizeof why) < 0)
                die("connect %s: %s", sock_path, why);
        return fd;
}

/* Receives the Reply to the request just sent: Ok or die. */
static ClassAd *expect_ok(int fd, const char *what) {
        ClassAd *reply = NULL;
        GleanCommand cmd;
        char why[512] = "";
        bool ok = false;

        if (glean_msg_recv(fd, TIMEOUT_MS, &reply, &cmd, why, sizeof why) < 0)
                die("%s: %s", what, why);
        if (cmd != GLEAN_CMD_REPLY || classad_eval_bool(reply, "Ok", GLEAN_CA_MODE, &ok) < 0 || !ok) {
                char *reason = NULL;
                classad_eval_string(reply, "Reason", GLEAN_CA_MODE, &reason);
                die("%s refused: %s", what, reason ? reason : "(no reason)");
        }
        return reply;
}

static ClassAd *job_cluster_ad(void) {
        static const char text[] =
                "[ Cmd = \"/bin/true\"; Iwd = \"/\"; JobUniverse = 5; RequestCpus = 1; RequestMemory = 128; "
                "RequestDisk = 1024; Requirements = (TARGET.OpSys == \"LINUX\") && (TARGET.Memory >= RequestMemory) "
                "&& (TARGET.Cpus >= RequestCpus); Rank = 0.0; JobPrio = 0; Out = \"/dev/null\"; "
                "Err = \"/dev/null\"; In = \"/dev/null\"; Environment = \"\"; WantRemoteIO = true; "
                "OnExitRemove = true; OnExitHold = false; PeriodicHold = false; PeriodicRelease = false; "
                "PeriodicRemove = false; JobLeaseDuration = 2400; LeaveJobInQueue = false; ImageSize = 1; "
                "DiskUsage = 1; ShouldTransferFiles = \"NO\"; MaxHosts = 1; MinHosts = 1 ]";
        ClassAd *ad;
        CaError err;

        if (classad_parse(text, sizeof text - 1, GLEAN_CA_MODE, &ad, &err) < 0)
                die("the job ad does not parse");
        return ad;
}

/* One cluster of n jobs /bin/true (procs with Arguments = "i" when args),
 * sent in parts of at most `per_part` procs; the central manager answers
 * the last part. Its ClusterId (-1 when the Reply has none); *ret_sent
 * (when not NULL) the wall clock just before the first part went. */
static int64_t submit_cluster_cpus(int fd, size_t n, bool args, int64_t cpus, double *ret_sent);

static int64_t submit_cluster(int fd, size_t n, bool args, double *ret_sent) {
        return submit_cluster_cpus(fd, n, args, 0, ret_sent);
}

/* The same, each job asking for cpus CPUs (0: the cluster's one). */
static int64_t submit_cluster_cpus(int fd, size_t n, bool args, int64_t cpus, double *ret_sent) {
        const size_t per_part = 20000;
        ClassAd *cluster = job_cluster_ad();
        int64_t id = -1;

        if (cpus > 0)
                classad_set_int(cluster, "RequestCpus", cpus);
        for (size_t first = 0; first < n; first += per_part) {
                size_t k = n - first < per_part ? n - first : per_part;
                ClassAd **procs = calloc(k, sizeof *procs), *msg = NULL;
                if (!procs || glean_msg_new(GLEAN_CMD_SUBMIT, &msg) < 0)
                        die("out of memory");
                for (size_t i = 0; i < k; i++) {
                        char buf[32];
                        if (classad_new(&procs[i]) < 0)
                                die("out of memory");
                        if (args) {
                                snprintf(buf, sizeof buf, "%zu", first + i);
                                classad_set_string(procs[i], "Arguments", buf);
                        }
                }
                glean_msg_set_ad(msg, "Cluster", cluster);
                glean_msg_set_ad_list(msg, "Procs", procs, k);
                classad_set_bool(msg, "More", first + k < n);
                classad_set_int(msg, "RequestId", (int64_t) first + 1);
                if (ret_sent && first == 0)
                        *ret_sent = wall();
                int r = glean_msg_send(fd, msg, TIMEOUT_MS);
                if (r < 0)
                        die("Submit: %s", strerror(-r));
                /* one Reply per submit, to its last part */
                if (first + k >= n) {
                        ClassAd *reply = expect_ok(fd, "Submit");
                        classad_eval_int(reply, "ClusterId", GLEAN_CA_MODE, &id);
                        classad_free(reply);
                }
                for (size_t i = 0; i < k; i++)
                        classad_free(procs[i]);
                free(procs);
                classad_free(msg);
        }
        classad_free(cluster);
        return id;
}

/* Sends a listing request and collects every piece: the ads counted, or
 * their Count when limit is 0 (0 when the Reply has none). */
static size_t listing(int fd, GleanCommand c, const char *constraint, int64_t limit) {
        ClassAd *msg = NULL;
        size_t ads = 0;
        int64_t count = -1;

        if (glean_msg_new(c, &msg) < 0)
                die("out of memory");
        if (constraint)
                classad_set_string(msg, "Constraint", constraint);
        if (limit >= 0)
                classad_set_int(msg, "Limit", limit);
        classad_set_int(msg, "RequestId", 7);
        if (glean_msg_send(fd, msg, TIMEOUT_MS) < 0)
                die("%s: cannot send", glean_command_name(c));
        classad_free(msg);
        for (bool more = true; more;) {
                ClassAd *reply = expect_ok(fd, glean_command_name(c)), **list = NULL;
                size_t n = 0;
                more = false;
                classad_eval_bool(reply, "More", GLEAN_CA_MODE, &more);
                classad_eval_int(reply, "Count", GLEAN_CA_MODE, &count);
                if (glean_msg_get_ad_list(reply, "Ads", &list, &n) == 0)
                        glean_ad_list_free(list, n);
                ads += n;
                classad_free(reply);
        }
        return limit == 0 ? (size_t) (count < 0 ? 0 : count) : ads;
}

/* The number of ads of a listing on a connection of its own. */
static size_t count_where(GleanCommand c, const char *constraint) {
        int fd = connect_user();
        size_t n = listing(fd, c, constraint, 0);

        close(fd);
        return n;
}

/* ---- main ---- */

/* Reads the command line: --keep (*ret_keep), and options with a value,
 * each given to `option` (false: not one of its options). 0, or 2 (the
 * exit code) after a bad command line, said on stderr. */
static int bench_args(int argc, char **argv, bool (*option)(void *userdata, const char *name, const char *value),
                      void *userdata, bool *ret_keep) {
        bool keep = false;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(a, "--keep") == 0) {
                        keep = true;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "usage: see the head of " BENCH_NAME ".c\n");
                        return 2;
                }
                i++;
                if (!option(userdata, a, v)) {
                        fprintf(stderr, BENCH_NAME ": unknown option %s %s\n", a, v);
                        return 2;
                }
        }
        *ret_keep = keep;
        return 0;
}

/* Whether `phase` is one of the comma-separated phases of `skip`. */
static bool skipped(const char *skip, const char *phase) {
        size_t n = strlen(phase);

        for (const char *p = skip; p && (p = strstr(p, phase)); p += n)
                if ((p == skip || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

/* The pool's directory removed, or kept (and said so) when keep. */
static void pool_dir_remove(bool keep) {
        if (!keep) {
                char cmd[300];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, BENCH_NAME ": cannot remove %s\n", dir);
        } else
                fprintf(stderr, BENCH_NAME ": kept %s\n", dir);
}

#endif

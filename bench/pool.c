/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool.c — the central manager (glean-negotiator) driven over loopback, as
 * users and agents drive it: the figures of issue 14's performance goals.
 *
 *   build/bench/pool [--single N] [--clients C] [--queue N] [--q-jobs N]
 *                    [--mem-jobs N] [--agents A] [--slots S] [--rounds R]
 *                    [--skip submit,queue,q,memory,agents]
 *
 * It starts build/bin/glean-negotiator with a private configuration,
 * database, socket, port and pool key in build/bench-data/pool.XXXXXX
 * (removed at the end unless --keep), and measures:
 *
 *   submit  single submits acknowledged per second (each a Submit of one
 *           job, answered only once durable): one client in a loop, then
 *           C clients at once (default 8; their submits share commits);
 *   queue   jobs per second of one `queue N` (default 10,000 and 100,000:
 *           one cluster, sent in parts under the frame limit, one
 *           transaction);
 *   q       the time to list 100,000 queued jobs: a raw Query collecting
 *           every piece, and the real `glean q` (build/bin/glean) when it
 *           runs;
 *   memory  the daemon's resident memory with 1,000,000 queued jobs
 *           (--mem-jobs; VmRSS and VmHWM of /proc/PID/status);
 *   agents  A simulated agents (default 50) speaking the real protocol
 *           (sealed connection, Hello, SlotUpdate) with S slots each
 *           (default 100: 5,000 slots): slot updates per second (R rounds
 *           of every slot, timed until QuerySlots sees the last round in
 *           every ad), then as many idle jobs as slots: the time until all
 *           run (the simulated agents accept every claim and activation)
 *           and the daemon's own cycle records from its log.
 *
 * Figures go to stdout, one per line; progress to stderr. Nothing is
 * pass/fail: a missed goal is a finding.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"
#include "common/proto.h"
#include "common/secure.h"

#define TIMEOUT_MS 600000

static char dir[200], sock_path[300], conf_path[300], log_path[300];
static int port;
static pid_t daemon_pid;
static GleanPoolKey key;

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void stop_daemon(void) {
        if (daemon_pid > 0) {
                kill(daemon_pid, SIGTERM);
                waitpid(daemon_pid, NULL, 0);
                daemon_pid = 0;
        }
}

static _Noreturn void die(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static _Noreturn void die(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fprintf(stderr, "bench/pool: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, " (the daemon's log: %s)\n", log_path);
        va_end(ap);
        stop_daemon();
        exit(1);
}

static void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void progress(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        fprintf(stderr, "bench/pool: ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
}

/* ---- the daemon ---- */

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

static void setup(void) {
        char why[512], path[300], cwd[160];
        FILE *f;

        mkdir("build/bench-data", 0755);
        snprintf(dir, sizeof dir, "%s/build/bench-data/pool.XXXXXX", getcwd(cwd, sizeof cwd) ? cwd : ".");
        if (!mkdtemp(dir))
                die("mkdtemp %s: %m", dir);
        snprintf(sock_path, sizeof sock_path, "%s/negotiator.sock", dir);
        snprintf(conf_path, sizeof conf_path, "%s/glean.conf", dir);
        snprintf(log_path, sizeof log_path, "%s/negotiator.log", dir);
        snprintf(path, sizeof path, "%s/pool.key", dir);
        if (glean_pool_key_generate(&key) < 0 || glean_pool_key_save(path, &key, false, why, sizeof why) < 0)
                die("pool key: %s", why);
        port = free_port();
        if (!(f = fopen(conf_path, "w")))
                die("%s: %m", conf_path);
        fprintf(f,
                "LOCAL_CONFIG_DIR =\n"
                "SPOOL = %s\n"
                "NEGOTIATOR_DATABASE = %s/negotiator.db\n"
                "NEGOTIATOR_SOCKET = %s\n"
                "NEGOTIATOR_ADDRESS = 127.0.0.1\n"
                "COLLECTOR_PORT = %d\n"
                "POOL_KEY_FILE = %s\n"
                "UID_DOMAIN = bench.pool\n"
                "NEGOTIATOR_INTERVAL = 5\n"
                "NEGOTIATOR_MIN_INTERVAL = 1\n"
                "UPDATE_INTERVAL = 300\n"
                "ALIVE_INTERVAL = 300\n",
                dir, dir, sock_path, port, path);
        if (fclose(f) != 0)
                die("%s: %m", conf_path);
}

static void start_daemon(void) {
        int fd = -1;
        char why[256] = "";

        daemon_pid = fork();
        if (daemon_pid < 0)
                die("fork: %m");
        if (daemon_pid == 0) {
                int log = open(log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (log >= 0)
                        dup2(log, STDERR_FILENO);
                setenv("GLEAN_CONFIG", conf_path, 1);
                unsetenv("NOTIFY_SOCKET");
                unsetenv("JOURNAL_STREAM");
                execl("build/bin/glean-negotiator", "glean-negotiator", "--config", conf_path, (char *) NULL);
                _exit(127);
        }
        for (int i = 0; i < 300; i++) {
                if (glean_client_connect(sock_path, "glean", 1000, &fd, why, sizeof why) == 0) {
                        close(fd);
                        return;
                }
                if (waitpid(daemon_pid, NULL, WNOHANG) == daemon_pid) {
                        daemon_pid = 0;
                        die("glean-negotiator exited at start");
                }
                usleep(20000);
        }
        die("glean-negotiator does not answer on %s: %s", sock_path, why);
}

static long proc_kib(const char *field) {
        char path[64], line[256];
        long v = -1;
        size_t n = strlen(field);
        FILE *f;

        snprintf(path, sizeof path, "/proc/%d/status", (int) daemon_pid);
        if (!(f = fopen(path, "r")))
                return -1;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, field, n) == 0 && line[n] == ':')
                        v = strtol(line + n + 1, NULL, 10);
        fclose(f);
        return v;
}

/* ---- requests over the unix socket ---- */

static int connect_user(void) {
        int fd;
        char why[256];

        if (glean_client_connect(sock_path, "glean", 5000, &fd, why, sizeof why) < 0)
                die("connect %s: %s", sock_path, why);
        return fd;
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

/* One cluster of n procs (procs with Arguments = "i" when args), sent in
 * parts of at most `per_part` procs; the central manager answers the last
 * part. */
static void submit_cluster(int fd, size_t n, bool args) {
        const size_t per_part = 20000;
        ClassAd *cluster = job_cluster_ad();

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
                int r = glean_msg_send(fd, msg, TIMEOUT_MS);
                if (r < 0)
                        die("Submit: %s", strerror(-r));
                /* one Reply per submit, to its last part */
                if (first + k >= n)
                        classad_free(expect_ok(fd, "Submit"));
                for (size_t i = 0; i < k; i++)
                        classad_free(procs[i]);
                free(procs);
                classad_free(msg);
        }
        classad_free(cluster);
}

/* Sends a listing request and collects every piece: the ads counted, or
 * Count when ret_count_only. */
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

/* ---- phases ---- */

static void bench_single(size_t n, int clients) {
        int fd = connect_user();
        double t0 = now_s();

        for (size_t i = 0; i < n; i++)
                submit_cluster(fd, 1, false);
        double dt = now_s() - t0;
        close(fd);
        printf("single submits, 1 client: %zu in %.2f s = %.0f acknowledged/s\n", n, dt, (double) n / dt);
        fflush(stdout);

        t0 = now_s();
        for (int c = 0; c < clients; c++) {
                pid_t pid = fork();
                if (pid < 0)
                        die("fork: %m");
                if (pid == 0) {
                        int cfd = connect_user();
                        for (size_t i = 0; i < n / (size_t) clients; i++)
                                submit_cluster(cfd, 1, false);
                        _exit(0);
                }
        }
        int failed = 0, status;
        for (int c = 0; c < clients; c++)
                if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
                        failed++;
        dt = now_s() - t0;
        if (failed)
                die("%d submitting clients failed", failed);
        size_t total = n / (size_t) clients * (size_t) clients;
        printf("single submits, %d clients: %zu in %.2f s = %.0f acknowledged/s\n", clients, total, dt,
               (double) total / dt);
        fflush(stdout);
}

static void bench_queue(size_t n) {
        int fd = connect_user();
        double t0 = now_s();

        submit_cluster(fd, n, true);
        double dt = now_s() - t0;
        close(fd);
        printf("queue %zu: acknowledged in %.3f s = %.0f jobs/s\n", n, dt, (double) n / dt);
        fflush(stdout);
}

static size_t queued_jobs(void) {
        int fd = connect_user();
        size_t n = listing(fd, GLEAN_CMD_QUERY, NULL, 0);

        close(fd);
        return n;
}

static void bench_q(size_t want) {
        size_t have = queued_jobs();

        while (have < want) {
                size_t k = want - have < 100000 ? want - have : 100000;
                bench_queue(k);
                have += k;
        }
        int fd = connect_user();
        double t0 = now_s();
        size_t n = listing(fd, GLEAN_CMD_QUERY, NULL, -1);
        double dt = now_s() - t0;
        close(fd);
        printf("Query of every job: %zu ads in %.3f s\n", n, dt);

        char cmd[4096];
        snprintf(cmd, sizeof cmd,
                 "GLEAN_CONFIG=%s GLEAN_NEGOTIATOR_SOCKET=%s build/bin/glean q --socket %s > /dev/null 2>%s/q.err",
                 conf_path, sock_path, sock_path, dir);
        t0 = now_s();
        int status = system(cmd);
        dt = now_s() - t0;
        if (status == 0)
                printf("glean q of %zu jobs: %.3f s\n", n, dt);
        else
                printf("glean q of %zu jobs: did not run (exit %d; %s/q.err)\n", n, WEXITSTATUS(status), dir);
        fflush(stdout);
}

static void bench_memory(size_t want) {
        long before = proc_kib("VmRSS");
        size_t have = queued_jobs(), had = have;

        while (have < want) {
                size_t k = want - have < 100000 ? want - have : 100000;
                int fd = connect_user();
                submit_cluster(fd, k, true);
                close(fd);
                have += k;
                progress("%zu jobs queued", have);
        }
        printf("memory with %zu queued jobs: VmRSS %.1f MiB (%.0f bytes for each of the last %zu jobs), "
               "VmHWM %.1f MiB\n",
               have, proc_kib("VmRSS") / 1024.0,
               have > had ? (proc_kib("VmRSS") - before) * 1024.0 / (double) (have - had) : 0.0, have - had,
               proc_kib("VmHWM") / 1024.0);
        fflush(stdout);
}

/* ---- simulated agents ---- */

typedef struct SimAgent {
        int fd;
        GleanSecure *s;
        char machine[32];
} SimAgent;

static SimAgent *agents;
static int n_agents, slots_per;
static atomic_bool responder_stop;
static atomic_long claims, activations;

static void sim_send(SimAgent *a, const ClassAd *msg) {
        char *text = classad_unparse(msg);
        if (!text)
                die("out of memory");
        int r = glean_secure_send(a->s, a->fd, text, strlen(text), TIMEOUT_MS);
        free(text);
        if (r < 0)
                die("agent %s: send: %s", a->machine, glean_secure_reason(a->s));
}

static ClassAd *slot_ad(const SimAgent *a, int i, int64_t seq, const char *state, const char *activity) {
        char text[1024];
        ClassAd *ad;
        CaError err;

        snprintf(text, sizeof text,
                 "[ MyType = \"Machine\"; Name = \"slot%d@%s\"; Machine = \"%s\"; OpSys = \"LINUX\"; "
                 "Arch = \"X86_64\"; State = \"%s\"; Activity = \"%s\"; Cpus = 1; Memory = 2048; Disk = 1000000; "
                 "SlotType = \"Static\"; SlotID = %d; START = true; Requirements = START; Rank = 0.0; "
                 "CurrentRank = 0.0; LoadAvg = 0.0; CondorLoadAvg = 0.0; KeyboardIdle = 100000; "
                 "TotalCpus = %d; TotalMemory = %d; Seq = %lld ]",
                 i, a->machine, a->machine, state, activity, i, slots_per, slots_per * 2048, (long long) seq);
        if (classad_parse(text, strlen(text), GLEAN_CA_MODE, &ad, &err) < 0)
                die("slot ad does not parse");
        return ad;
}

static void sim_update(SimAgent *a, int i, int64_t seq) {
        ClassAd *msg = NULL, *ad = slot_ad(a, i, seq, "Unclaimed", "Idle");

        if (glean_msg_new(GLEAN_CMD_SLOT_UPDATE, &msg) < 0 || glean_msg_set_ad(msg, "SlotAd", ad) < 0)
                die("out of memory");
        sim_send(a, msg);
        classad_free(msg);
        classad_free(ad);
}

static void sim_connect(SimAgent *a, int idx) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        char why[256] = "";
        ClassAd *hello = NULL;

        snprintf(a->machine, sizeof a->machine, "sim%03d.bench", idx);
        a->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (a->fd < 0 || connect(a->fd, (struct sockaddr *) &sa, sizeof sa) < 0)
                die("agent %d: connect: %m", idx);
        if (glean_secure_handshake(a->fd, GLEAN_SECURE_AGENT, &key, 10000, &a->s, why, sizeof why) < 0)
                die("agent %d: handshake: %s", idx, why);
        if (glean_hello_new("glean-agent", &hello) < 0)
                die("out of memory");
        classad_set_string(hello, "Machine", a->machine);
        classad_set_int(hello, "AgentStartTime", (int64_t) time(NULL));
        sim_send(a, hello);
        classad_free(hello);
}

/* Answers whatever the central manager asks of a simulated agent: every
 * claim and activation accepted (the jobs "run" forever). */
static void sim_answer(SimAgent *a, const char *payload, size_t len) {
        ClassAd *req = NULL, *reply = NULL;
        GleanCommand cmd;
        char why[256];

        if (glean_msg_parse(payload, len, &req, &cmd, why, sizeof why) < 0)
                die("agent %s: the central manager sent a malformed message: %s", a->machine, why);
        if (cmd == GLEAN_CMD_HELLO || cmd == GLEAN_CMD_REPLY) {
                classad_free(req);
                return;
        }
        if (glean_msg_reply(req, true, NULL, &reply) < 0)
                die("out of memory");
        if (cmd == GLEAN_CMD_REQUEST_CLAIM) {
                char *slot = NULL, *id = NULL;
                classad_eval_string(req, "Slot", GLEAN_CA_MODE, &slot);
                classad_eval_string(req, "ClaimId", GLEAN_CA_MODE, &id);
                classad_set_string(reply, "Slot", slot ? slot : "");
                classad_set_string(reply, "ClaimId", id ? id : "");
                classad_set_string(reply, "State", "Claimed");
                classad_set_string(reply, "Activity", "Idle");
                classad_set_int(reply, "LeaseDuration", 2400);
                free(slot);
                free(id);
                atomic_fetch_add(&claims, 1);
        } else if (cmd == GLEAN_CMD_ACTIVATE_CLAIM)
                atomic_fetch_add(&activations, 1);
        sim_send(a, reply);
        classad_free(reply);
        classad_free(req);
}

static void *responder(void *arg) {
        (void) arg;
        struct pollfd *pfd = calloc((size_t) n_agents, sizeof *pfd);

        if (!pfd)
                die("out of memory");
        /* glean_secure_read reads until the fd would block: non-blocking
         * (glean_secure_send polls for room) */
        for (int i = 0; i < n_agents; i++) {
                fcntl(agents[i].fd, F_SETFL, fcntl(agents[i].fd, F_GETFL) | O_NONBLOCK);
                pfd[i] = (struct pollfd){ .fd = agents[i].fd, .events = POLLIN };
        }
        while (!atomic_load(&responder_stop)) {
                if (poll(pfd, (nfds_t) n_agents, 100) <= 0)
                        continue;
                for (int i = 0; i < n_agents; i++) {
                        if (!(pfd[i].revents & (POLLIN | POLLHUP | POLLERR)))
                                continue;
                        char *payload;
                        size_t len;
                        int r;
                        while ((r = glean_secure_read(agents[i].s, agents[i].fd, &payload, &len)) > 0) {
                                sim_answer(&agents[i], payload, len);
                                free(payload);
                        }
                        if (r < 0)
                                die("agent %s: %s", agents[i].machine, glean_secure_reason(agents[i].s));
                }
        }
        free(pfd);
        return NULL;
}

static size_t count_where(GleanCommand c, const char *constraint) {
        int fd = connect_user();
        size_t n = listing(fd, c, constraint, 0);

        close(fd);
        return n;
}

static void bench_agents(int rounds) {
        size_t total = (size_t) n_agents * (size_t) slots_per;

        agents = calloc((size_t) n_agents, sizeof *agents);
        if (!agents)
                die("out of memory");
        double t0 = now_s();
        for (int i = 0; i < n_agents; i++)
                sim_connect(&agents[i], i);
        printf("%d agents connected (handshake + Hello) in %.3f s\n", n_agents, now_s() - t0);

        for (int round = 0; round < rounds; round++) {
                char constraint[64];
                t0 = now_s();
                for (int s = 1; s <= slots_per; s++)
                        for (int i = 0; i < n_agents; i++)
                                sim_update(&agents[i], s, round);
                double sent = now_s() - t0;
                snprintf(constraint, sizeof constraint, "Seq == %d", round);
                size_t seen;
                while ((seen = count_where(GLEAN_CMD_QUERY_SLOTS, constraint)) < total) {
                        if (now_s() - t0 > 120)
                                die("after 120 s the collector has %zu of %zu slots of round %d", seen, total,
                                    round);
                        usleep(2000);
                }
                double dt = now_s() - t0;
                printf("slot updates, round %d: %zu in %.3f s (sent in %.3f s) = %.0f updates/s\n", round, total,
                       dt, sent, (double) total / dt);
                fflush(stdout);
        }

        pthread_t th;
        if (pthread_create(&th, NULL, responder, NULL) != 0)
                die("pthread_create failed");
        int fd = connect_user();
        t0 = now_s();
        submit_cluster(fd, total, true);
        close(fd);
        double submitted = now_s() - t0;
        size_t running = 0;
        while ((running = count_where(GLEAN_CMD_QUERY, "JobStatus == 2")) < total) {
                if (now_s() - t0 > 300) {
                        printf("after 300 s: %zu of %zu jobs running (claims %ld, activations %ld)\n", running,
                               total, atomic_load(&claims), atomic_load(&activations));
                        break;
                }
                usleep(20000);
        }
        if (running >= total)
                printf("%zu idle jobs onto %zu slots: submitted in %.3f s, all running after %.3f s "
                       "(claims %ld, activations %ld)\n",
                       total, total, submitted, now_s() - t0, atomic_load(&claims), atomic_load(&activations));
        atomic_store(&responder_stop, true);
        pthread_join(th, NULL);

        /* the daemon's own account of its cycles */
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "grep -i 'cycle' %s | tail -n 5 | sed 's/^/  daemon: /'", log_path);
        fflush(stdout);
        if (system(cmd) != 0)
                printf("  (no cycle record in the daemon's log)\n");
        for (int i = 0; i < n_agents; i++) {
                glean_secure_free(agents[i].s);
                close(agents[i].fd);
        }
        free(agents);
}

/* ---- main ---- */

static bool skipped(const char *skip, const char *phase) {
        size_t n = strlen(phase);

        for (const char *p = skip; p && (p = strstr(p, phase)); p += n)
                if ((p == skip || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
                        return true;
        return false;
}

int main(int argc, char **argv) {
        size_t single = 2000, q_jobs = 100000, mem_jobs = 1000000;
        int clients = 8, rounds = 3;
        const char *skip = "";
        bool keep = false;

        n_agents = 50;
        slots_per = 100;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (strcmp(a, "--keep") == 0) {
                        keep = true;
                        continue;
                }
                if (!v) {
                        fprintf(stderr, "usage: see the head of bench/pool.c\n");
                        return 2;
                }
                i++;
                if (strcmp(a, "--single") == 0)
                        single = strtoul(v, NULL, 10);
                else if (strcmp(a, "--clients") == 0)
                        clients = atoi(v);
                else if (strcmp(a, "--q-jobs") == 0)
                        q_jobs = strtoul(v, NULL, 10);
                else if (strcmp(a, "--mem-jobs") == 0)
                        mem_jobs = strtoul(v, NULL, 10);
                else if (strcmp(a, "--agents") == 0)
                        n_agents = atoi(v);
                else if (strcmp(a, "--slots") == 0)
                        slots_per = atoi(v);
                else if (strcmp(a, "--rounds") == 0)
                        rounds = atoi(v);
                else if (strcmp(a, "--skip") == 0)
                        skip = v;
                else {
                        fprintf(stderr, "bench/pool: unknown option %s\n", a);
                        return 2;
                }
        }
        if (clients < 1 || n_agents < 1 || slots_per < 1 || rounds < 1) {
                fprintf(stderr, "bench/pool: counts must be >= 1\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        setup();

        /* The agents first, on an empty queue: the cycle then matches
         * only their jobs. A fresh daemon for the queue figures. */
        if (!skipped(skip, "agents")) {
                start_daemon();
                bench_agents(rounds);
                stop_daemon();
                char db[1024];
                snprintf(db, sizeof db, "rm -f %s/negotiator.db %s/negotiator.db-wal %s/negotiator.db-shm", dir,
                         dir, dir);
                if (system(db) != 0)
                        die("cannot remove the database");
        }
        start_daemon();
        if (!skipped(skip, "submit"))
                bench_single(single, clients);
        if (!skipped(skip, "queue")) {
                bench_queue(10000);
                bench_queue(100000);
        }
        if (!skipped(skip, "q"))
                bench_q(q_jobs);
        if (!skipped(skip, "memory"))
                bench_memory(mem_jobs);
        stop_daemon();
        if (!keep) {
                char cmd[300];
                snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        fprintf(stderr, "bench/pool: cannot remove %s\n", dir);
        } else
                fprintf(stderr, "bench/pool: kept %s\n", dir);
        return 0;
}

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
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"
#include "common/proto.h"
#include "common/secure.h"

#define BENCH_NAME "bench/pool"
#define TIMEOUT_MS 600000

#include "pool-common.h"

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static void stop_daemon(void) {
        if (nego_pid > 0) {
                kill(nego_pid, SIGTERM);
                waitpid(nego_pid, NULL, 0);
                nego_pid = 0;
        }
}

static void on_die(void) {
        fprintf(stderr, " (the daemon's log: %s)\n", nego_log);
        stop_daemon();
}

/* ---- the daemon ---- */

static void setup(void) {
        pool_dir("pool");
        FILE *f = nego_conf_open();
        fprintf(f,
                "NEGOTIATOR_INTERVAL = 5\n"
                "NEGOTIATOR_MIN_INTERVAL = 1\n"
                "UPDATE_INTERVAL = 300\n"
                "ALIVE_INTERVAL = 300\n");
        conf_close(f, nego_conf);
}

static long proc_kib(const char *field) {
        char path[64], line[256];
        long v = -1;
        size_t n = strlen(field);
        FILE *f;

        snprintf(path, sizeof path, "/proc/%d/status", (int) nego_pid);
        if (!(f = fopen(path, "r")))
                return -1;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, field, n) == 0 && line[n] == ':')
                        v = strtol(line + n + 1, NULL, 10);
        fclose(f);
        return v;
}

/* ---- phases ---- */

static void bench_single(size_t n, int clients) {
        int fd = connect_user();
        double t0 = now_s();

        for (size_t i = 0; i < n; i++)
                submit_cluster(fd, 1, false, NULL);
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
                                submit_cluster(cfd, 1, false, NULL);
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

        submit_cluster(fd, n, true, NULL);
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
                 nego_conf, sock_path, sock_path, dir);
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
                submit_cluster(fd, k, true, NULL);
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
        if (glean_secure_handshake(a->fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(&pool_key), 10000, &a->s, why, sizeof why) < 0)
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
        submit_cluster(fd, total, true, NULL);
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
        snprintf(cmd, sizeof cmd, "grep -i 'cycle' %s | tail -n 5 | sed 's/^/  daemon: /'", nego_log);
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

typedef struct Options {
        size_t single, q_jobs, mem_jobs;
        int clients, rounds;
        const char *skip;
} Options;

static bool option(void *userdata, const char *a, const char *v) {
        Options *o = userdata;

        if (strcmp(a, "--single") == 0)
                o->single = strtoul(v, NULL, 10);
        else if (strcmp(a, "--clients") == 0)
                o->clients = atoi(v);
        else if (strcmp(a, "--q-jobs") == 0)
                o->q_jobs = strtoul(v, NULL, 10);
        else if (strcmp(a, "--mem-jobs") == 0)
                o->mem_jobs = strtoul(v, NULL, 10);
        else if (strcmp(a, "--agents") == 0)
                n_agents = atoi(v);
        else if (strcmp(a, "--slots") == 0)
                slots_per = atoi(v);
        else if (strcmp(a, "--rounds") == 0)
                o->rounds = atoi(v);
        else if (strcmp(a, "--skip") == 0)
                o->skip = v;
        else
                return false;
        return true;
}

int main(int argc, char **argv) {
        Options o = { .single = 2000, .q_jobs = 100000, .mem_jobs = 1000000, .clients = 8, .rounds = 3, .skip = "" };
        bool keep = false;

        n_agents = 50;
        slots_per = 100;
        int code = bench_args(argc, argv, option, &o, &keep);
        if (code != 0)
                return code;
        if (o.clients < 1 || n_agents < 1 || slots_per < 1 || o.rounds < 1) {
                fprintf(stderr, "bench/pool: counts must be >= 1\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        setup();

        /* The agents first, on an empty queue: the cycle then matches
         * only their jobs. A fresh daemon for the queue figures. */
        if (!skipped(o.skip, "agents")) {
                start_negotiator();
                bench_agents(o.rounds);
                stop_daemon();
                char db[1024];
                snprintf(db, sizeof db, "rm -f %s/negotiator.db %s/negotiator.db-wal %s/negotiator.db-shm", dir,
                         dir, dir);
                if (system(db) != 0)
                        die("cannot remove the database");
        }
        start_negotiator();
        if (!skipped(o.skip, "submit"))
                bench_single(o.single, o.clients);
        if (!skipped(o.skip, "queue")) {
                bench_queue(10000);
                bench_queue(100000);
        }
        if (!skipped(o.skip, "q"))
                bench_q(o.q_jobs);
        if (!skipped(o.skip, "memory"))
                bench_memory(o.mem_jobs);
        stop_daemon();
        pool_dir_remove(keep);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool-throughput.c — a real pool on this machine, timed as Slurm is: the
 * real glean-negotiator and one real glean-agent dialing it, with one
 * partitionable slot of 16 (pretend) cores, the fork executor, jobs
 * /bin/true.
 *
 *   build/bench/pool-throughput [--jobs N] [--runs R] [--cores C]
 *                               [--set NAME=VALUE]... [--agent-set NAME=VALUE]...
 *                               [--backlog N] [--skip latency,throughput] [--keep]
 *
 * Everything lives in build/bench-data/throughput.XXXXXX (a private
 * configuration, database, sockets, port and pool key; removed at the end
 * unless --keep). The daemons log to files there (GLEAN_LOG=stderr, lines
 * stamped to the millisecond); --set and --agent-set add knobs to the
 * central manager's and the agent's configuration (the defaults
 * otherwise), e.g. --set NEGOTIATOR_MIN_INTERVAL=0.
 *
 *   latency     R single jobs (default 20), one at a time on an idle pool:
 *               submit-to-start (the agent's "job started" record) and
 *               submit-to-completion (the central manager's record of the
 *               job's exit), median and 99th percentile; the submit's
 *               acknowledgement, the central manager's decision to start
 *               the job (its "starts on" record) and what a user sees (the
 *               Reply to a Wait sent right after the submit) beside them;
 *   throughput  N jobs (default 1,000) submitted at once (one cluster):
 *               jobs per second from the submit to the last completion (the
 *               queue polled every 10 ms, 100 ms with a backlog; the last
 *               exit record).
 *
 * --backlog N first queues N jobs of the same user that fit no slot (each
 * asks for more CPUs than the machine has): what a busy queue costs every
 * claim's reuse, which looks for the user's next idle job that fits.
 *
 * A job runs as the user running the benchmark (root's as nobody). The
 * submit time is the client's clock just before the Submit is sent; the
 * rest are the daemons' own records of the same clock. Figures go to
 * stdout; nothing is pass/fail.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
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

#define BENCH_NAME "bench/pool-throughput"
#define TIMEOUT_MS 120000
#define MAX_SETS 32

#include "pool-common.h"

static char agent_conf[300], agent_log[300], agent_sock[300];
static pid_t agent_pid;
static const char *nego_sets[MAX_SETS], *agent_sets[MAX_SETS];
static size_t n_nego_sets, n_agent_sets;

static void stop_one(pid_t *pid) {
        if (*pid > 0) {
                kill(*pid, SIGTERM);
                for (int i = 0; i < 200; i++) {
                        if (waitpid(*pid, NULL, WNOHANG) == *pid) {
                                *pid = 0;
                                return;
                        }
                        usleep(25000);
                }
                kill(*pid, SIGKILL);
                waitpid(*pid, NULL, 0);
                *pid = 0;
        }
}

static void stop_all(void) {
        stop_one(&agent_pid);
        stop_one(&nego_pid);
}

static void on_die(void) {
        fprintf(stderr, " (logs: %s, %s)\n", nego_log, agent_log);
        stop_all();
}

/* ---- the pool ---- */

static void write_sets(FILE *f, const char **sets, size_t n) {
        for (size_t i = 0; i < n; i++) {
                const char *eq = strchr(sets[i], '=');
                fprintf(f, "%.*s = %s\n", (int) (eq - sets[i]), sets[i], eq + 1);
        }
}

static void setup(int cores) {
        pool_dir("throughput");
        glean_pool_key_clear(&pool_key);
        chmod(dir, 0755); /* the jobs (nobody, when root runs this) go through it */
        snprintf(agent_conf, sizeof agent_conf, "%s/agent.conf", dir);
        snprintf(agent_log, sizeof agent_log, "%s/agent.log", dir);
        snprintf(agent_sock, sizeof agent_sock, "%s/agent.sock", dir);

        FILE *f = nego_conf_open();
        write_sets(f, nego_sets, n_nego_sets);
        conf_close(f, nego_conf);

        f = conf_open(agent_conf);
        fprintf(f,
                "LOCAL_CONFIG_DIR =\n"
                "EXECUTE = %s/execute\n"
                "AGENT_SOCKET = %s\n"
                "COLLECTOR_HOST = 127.0.0.1:%d\n"
                "POOL_KEY_FILE = %s\n"
                "UID_DOMAIN = bench.pool\n"
                "FULL_HOSTNAME = agent.bench.pool\n"
                "AGENT_EXECUTOR = fork\n"
                "NUM_CPUS = %d\n"
                "MEMORY = %d\n"
                "NUM_SLOTS_TYPE_1 = 1\n"
                "SLOT_TYPE_1 = 100%%\n"
                "SLOT_TYPE_1_PARTITIONABLE = True\n"
                "START = True\n"
                "SUSPEND = False\n"
                "PREEMPT = False\n"
                "KILL = False\n"
                "WANT_SUSPEND = False\n",
                dir, agent_sock, port, key_path, cores, cores * 1024);
        write_sets(f, agent_sets, n_agent_sets);
        conf_close(f, agent_conf);
}

static void start_pool(void) {
        start_negotiator();
        agent_pid = spawn("build/bin/glean-agent", agent_conf, agent_log);
        double t0 = wall();
        while (count_where(GLEAN_CMD_QUERY_SLOTS, "PartitionableSlot =?= true") < 1) {
                if (waitpid(agent_pid, NULL, WNOHANG) == agent_pid) {
                        agent_pid = 0;
                        die("glean-agent exited at start");
                }
                if (wall() - t0 > 30)
                        die("after 30 s the central manager has no slot of the agent");
                usleep(20000);
        }
        progress("the pool is up (glean-negotiator pid %d, glean-agent pid %d): the agent's slot is in the collector "
                 "after %.3f s",
                 (int) nego_pid, (int) agent_pid, wall() - t0);
}

/* One cluster of n jobs (a Submit for every 20,000): its ClusterId; *ret_sent the
 * clock just before the Submit went. */
static int64_t submit(int fd, size_t n, double *ret_sent) {
        int64_t id = submit_cluster(fd, n, false, ret_sent);

        if (id < 0)
                die("the Submit's Reply has no ClusterId");
        return id;
}

/* ---- the daemons' records ---- */

/* A log read as it grows, line by line. */
typedef struct Tail {
        const char *path;
        long off;
} Tail;

/* The time of a record ("2026-11-25T04:35:08.123Z glean-... "), or -1. */
static double line_time(const char *line) {
        struct tm tm = { 0 };
        unsigned ms = 0;

        if (sscanf(line, "%4d-%2d-%2dT%2d:%2d:%2d.%3uZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                   &tm.tm_min, &tm.tm_sec, &ms) != 7)
                return -1;
        tm.tm_year -= 1900;
        tm.tm_mon -= 1;
        return (double) timegm(&tm) + ms / 1000.0;
}

/* The next complete line of the log with every one of the needles (NULL
 * ends them): its time, or -1 when none yet. */
static double tail_find(Tail *t, const char *const *needles) {
        FILE *f = fopen(t->path, "r");
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        double at = -1;

        if (!f)
                return -1;
        fseek(f, t->off, SEEK_SET);
        while (at < 0 && (len = getline(&line, &cap, f)) > 0) {
                if (line[len - 1] != '\n')
                        break; /* not complete yet: again next time */
                t->off += len;
                bool all = true;
                for (size_t i = 0; needles[i] && all; i++)
                        all = strstr(line, needles[i]) != NULL;
                if (all)
                        at = line_time(line);
        }
        free(line);
        fclose(f);
        return at;
}

/* Waits (polling every 200 us) for a record with the needles: its time. */
static double tail_wait(Tail *t, const char *const *needles, double timeout) {
        double t0 = wall(), at;

        while ((at = tail_find(t, needles)) < 0) {
                if (wall() - t0 > timeout)
                        die("no record with \"%s\" in %s within %.0f s", needles[0], t->path, timeout);
                usleep(200);
        }
        return at;
}

static long file_size(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 ? (long) st.st_size : 0;
}

/* CPU seconds of a daemon (user + system) and of its reaped children. */
static void cpu_of(pid_t pid, double *ret_self, double *ret_children) {
        char path[64], buf[2048];
        unsigned long long ut = 0, st = 0;
        long long cut = 0, cst = 0;
        long hz = sysconf(_SC_CLK_TCK);
        FILE *f;

        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        *ret_self = *ret_children = 0;
        if (!(f = fopen(path, "r")))
                return;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        const char *p = strrchr(buf, ')');
        if (p && sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld", &ut, &st, &cut,
                        &cst) == 4) {
                *ret_self = (double) (ut + st) / (double) hz;
                *ret_children = (double) (cut + cst) / (double) hz;
        }
}

/* ---- figures ---- */

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* The p-th percentile (nearest rank) of v[0..n), sorted in place. */
static double percentile(double *v, size_t n, double p) {
        qsort(v, n, sizeof *v, cmp_double);
        size_t k = (size_t) (p / 100.0 * (double) n + 0.999999);
        return v[k == 0 ? 0 : k - 1 < n ? k - 1 : n - 1];
}

static void print_latency(const char *what, double *v, size_t n) {
        double med = percentile(v, n, 50), p99 = percentile(v, n, 99);

        printf("%-34s median %7.1f ms   p99 %7.1f ms   (min %.1f, max %.1f; %zu runs)\n", what, med * 1e3,
               p99 * 1e3, v[0] * 1e3, v[n - 1] * 1e3, n);
}

static void bench_latency(int runs) {
        double *ack = calloc((size_t) runs, sizeof *ack), *decide = calloc((size_t) runs, sizeof *decide),
               *start = calloc((size_t) runs, sizeof *start), *done = calloc((size_t) runs, sizeof *done),
               *waited = calloc((size_t) runs, sizeof *waited);
        Tail nl = { nego_log, 0 }, al = { agent_log, 0 };

        if (!ack || !decide || !start || !done || !waited)
                die("out of memory");
        for (int i = 0; i < runs; i++) {
                char job[64];
                double sent;
                nl.off = file_size(nego_log);
                al.off = file_size(agent_log);
                int fd = connect_user();
                int64_t cluster = submit(fd, 1, &sent);
                ack[i] = wall() - sent;
                /* what `glean wait` sees: the Reply to a Wait sent right after the submit */
                ClassAd *w = NULL;
                char id[48];
                snprintf(id, sizeof id, "%lld.0", (long long) cluster);
                if (glean_msg_new(GLEAN_CMD_WAIT, &w) < 0)
                        die("out of memory");
                classad_set_string(w, "Id", id);
                classad_set_int(w, "Timeout", 120);
                classad_set_int(w, "RequestId", 2);
                if (glean_msg_send(fd, w, TIMEOUT_MS) < 0)
                        die("Wait: cannot send");
                classad_free(w);
                classad_free(expect_ok(fd, "Wait"));
                waited[i] = wall() - sent;
                close(fd);
                snprintf(job, sizeof job, "job %lld.0 of ", (long long) cluster);
                const char *decided[] = { job, " starts on ", NULL };
                const char *started[] = { ": job started as ", NULL };
                const char *exited[] = { job, " exited with status ", NULL };
                decide[i] = tail_wait(&nl, decided, 120) - sent;
                start[i] = tail_wait(&al, started, 120) - sent;
                done[i] = tail_wait(&nl, exited, 120) - sent;
                /* idle again: the job gone from the queue, its claim ended or kept */
                char constraint[64];
                snprintf(constraint, sizeof constraint, "ClusterId == %lld", (long long) cluster);
                while (count_where(GLEAN_CMD_QUERY, constraint) > 0)
                        usleep(1000);
                usleep(100000);
                progress("run %d: decided %.1f ms, started %.1f ms, completed %.1f ms, Wait answered %.1f ms", i + 1,
                         decide[i] * 1e3, start[i] * 1e3, done[i] * 1e3, waited[i] * 1e3);
        }
        print_latency("submit acknowledged", ack, (size_t) runs);
        print_latency("submit to start decided (manager)", decide, (size_t) runs);
        print_latency("submit to start (agent forks)", start, (size_t) runs);
        print_latency("submit to completion (manager)", done, (size_t) runs);
        print_latency("submit to Wait's Reply (user)", waited, (size_t) runs);
        fflush(stdout);
        free(waited);
        free(ack);
        free(decide);
        free(start);
        free(done);
}

/* How often the throughput phase asks for the queue: 10 ms, or 100 ms with
 * a backlog (each Query evaluates its constraint on every queued job). */
static useconds_t poll_usec = 10000;

static void bench_throughput(size_t n) {
        char constraint[64];
        double sent;
        Tail nl = { nego_log, file_size(nego_log) };
        double nego0, agent0, jobs0, unused;
        cpu_of(nego_pid, &nego0, &unused);
        cpu_of(agent_pid, &agent0, &jobs0);
        int fd = connect_user();
        int64_t cluster = submit(fd, n, &sent);
        double acked = wall() - sent;
        close(fd);

        snprintf(constraint, sizeof constraint, "ClusterId == %lld", (long long) cluster);
        size_t left;
        double seen = 0;
        while ((left = count_where(GLEAN_CMD_QUERY, constraint)) > 0) {
                if (wall() - sent > 600)
                        die("after 600 s %zu of %zu jobs are still in the queue", left, n);
                usleep(poll_usec);
        }
        seen = wall() - sent;
        double nego1, agent1, jobs1;
        cpu_of(nego_pid, &nego1, &unused);
        cpu_of(agent_pid, &agent1, &jobs1);
        /* the last exit record of the cluster */
        char job[64];
        snprintf(job, sizeof job, "job %lld.", (long long) cluster);
        const char *exited[] = { job, " exited with status ", NULL };
        double last = 0, at;
        size_t exits = 0;
        while ((at = tail_find(&nl, exited)) >= 0) {
                last = at;
                exits++;
        }
        printf("%zu jobs submitted at once: acknowledged in %.3f s; the queue empty after %.3f s = %.1f jobs/s; "
               "%zu exit records, the last %.3f s after the submit = %.1f jobs/s\n",
               n, acked, seen, (double) n / seen, exits, last - sent, (double) n / (last - sent));
        printf("CPU per job: central manager %.2f ms, agent %.2f ms, the job itself %.2f ms (%.2f ms in all: "
               "%.0f jobs/s on one free core)\n",
               (nego1 - nego0) * 1e3 / (double) n, (agent1 - agent0) * 1e3 / (double) n,
               (jobs1 - jobs0) * 1e3 / (double) n, (nego1 - nego0 + agent1 - agent0 + jobs1 - jobs0) * 1e3 / (double) n,
               (double) n / (nego1 - nego0 + agent1 - agent0 + jobs1 - jobs0));
        fflush(stdout);
}

/* ---- main ---- */

typedef struct Options {
        size_t jobs, backlog;
        int runs, cores;
        const char *skip;
} Options;

static bool option(void *userdata, const char *a, const char *v) {
        Options *o = userdata;

        if (strcmp(a, "--jobs") == 0)
                o->jobs = strtoul(v, NULL, 10);
        else if (strcmp(a, "--backlog") == 0)
                o->backlog = strtoul(v, NULL, 10);
        else if (strcmp(a, "--runs") == 0)
                o->runs = atoi(v);
        else if (strcmp(a, "--cores") == 0)
                o->cores = atoi(v);
        else if (strcmp(a, "--skip") == 0)
                o->skip = v;
        else if ((strcmp(a, "--set") == 0 || strcmp(a, "--agent-set") == 0) && strchr(v, '=')) {
                bool nego = strcmp(a, "--set") == 0;
                if ((nego ? n_nego_sets : n_agent_sets) == MAX_SETS) {
                        fprintf(stderr, "bench/pool-throughput: at most %d of %s\n", MAX_SETS, a);
                        exit(2);
                }
                if (nego)
                        nego_sets[n_nego_sets++] = v;
                else
                        agent_sets[n_agent_sets++] = v;
        } else
                return false;
        return true;
}

int main(int argc, char **argv) {
        Options o = { .jobs = 1000, .runs = 20, .cores = 16, .skip = "" };
        bool keep = false;
        int code = bench_args(argc, argv, option, &o, &keep);

        if (code != 0)
                return code;
        if (o.jobs < 1 || o.runs < 1 || o.cores < 1) {
                fprintf(stderr, "bench/pool-throughput: counts must be >= 1\n");
                return 2;
        }
        signal(SIGPIPE, SIG_IGN);
        setup(o.cores);
        start_pool();
        for (size_t i = 0; i < n_nego_sets; i++)
                printf("central manager: %s\n", nego_sets[i]);
        for (size_t i = 0; i < n_agent_sets; i++)
                printf("agent: %s\n", agent_sets[i]);
        if (o.backlog > 0) {
                int fd = connect_user();
                double t0 = wall();
                submit_cluster_cpus(fd, o.backlog, false, (int64_t) o.cores * 1000, NULL);
                close(fd);
                printf("backlog: %zu idle jobs that fit no slot, queued in %.2f s\n", o.backlog, wall() - t0);
                poll_usec = 100000;
        }
        if (!skipped(o.skip, "latency"))
                bench_latency(o.runs);
        if (!skipped(o.skip, "throughput"))
                bench_throughput(o.jobs);
        stop_all();
        pool_dir_remove(keep);
        return 0;
}

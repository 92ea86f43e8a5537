/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue.c — the job queue at scale (queue/queue.h, jobcmd.h), on a
 * database file (WAL, synchronous=FULL: every commit fsync'd):
 *
 *   - single submits, each its own durable transaction (goal >= 2,000/s);
 *   - one `queue 10000` and one `queue 100000` (goal >= 100,000 jobs/s),
 *     the queue's part (queue_submit) and the whole server path
 *     (jobcmd_submit of the client's parts, as parsed from frames);
 *   - listing 100,000 jobs through the Query handler, every reply piece
 *     made (goal: the daemon's part of `glean q` well under 1 s);
 *   - the memory (RSS) with 1,000,000 jobs queued, and the time to load
 *     them at open (goal < 2 GB: needs chained ads; the copying stand-in's
 *     figure is printed).
 *
 * Jobs are what the submit language makes of a typical submit file.
 *
 *   build/bench/queue [DIR]   (default build/bench-data; the database is
 *                              made anew there)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "accounting/accounting.h"
#include "common/proto.h"
#include "config/config.h"
#include "queue/jobcmd.h"
#include "queue/queue.h"

#define T0 1.8e9

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static long rss_kib(void) {
        FILE *f = fopen("/proc/self/status", "r");
        char line[256];
        long kib = -1;

        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
                        break;
        if (f)
                fclose(f);
        return kib;
}

static void die(const char *what, int r, const char *why) {
        fprintf(stderr, "bench/queue: %s: %s (%s)\n", what, strerror(-r), why ? why : "");
        exit(1);
}

static void open_queue(const char *path, Accountant **ret_a, JobQueue **ret_q) {
        Config *cfg = NULL;
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        QueueSettings qs = {};
        char why[512] = "";
        int r;

        /* The queue's limits off: the bench queues 1,000,000 jobs of one owner. */
        if ((r = config_new(&cfg)) < 0 || (r = config_set(cfg, "UID_DOMAIN", "bench.example")) < 0 ||
            (r = config_set(cfg, "MAX_JOBS_PER_SUBMISSION", "0")) < 0 ||
            (r = config_set(cfg, "MAX_JOBS_PER_OWNER", "0")) < 0 ||
            (r = acct_settings_from_config(cfg, &s, &err)) < 0 || (r = acct_groups_from_config(cfg, &g, &err)) < 0 ||
            (r = queue_settings_from_config(cfg, &qs, &err)) < 0)
                die("configuration", r, err.msg);
        config_free(cfg);
        r = acct_open(path, 0, queue_schema(), &s, g, T0, ret_a, why, sizeof(why));
        if (r < 0)
                die("acct_open", r, why);
        r = queue_open(*ret_a, &qs, ret_q, why, sizeof(why));
        if (r < 0)
                die("queue_open", r, why);
}

/* The job ads of `queue n` of a typical submit file. */
static void jobs_of(size_t n, ClassAd ***ret, size_t *ret_n) {
        char text[1024];
        ConfigError err = {};
        Config *cfg = NULL;
        int r;

        if ((r = config_new(&cfg)) < 0 || (r = config_set(cfg, "MAX_JOBS_PER_SUBMISSION", "10000000")) < 0)
                die("configuration", r, NULL);

        snprintf(text, sizeof(text),
                 "universe = vanilla\nexecutable = /bin/true\ntransfer_executable = false\n"
                 "arguments = --seed $(Process) --steps 1000 --out out.$(Cluster).$(Process)\n"
                 "output = out/$(Cluster).$(Process).out\nerror = out/$(Cluster).$(Process).err\n"
                 "log = sim.log\nrequest_cpus = 1\nrequest_memory = 2048\nrequest_disk = 1048576\n"
                 "requirements = OpSys == \"LINUX\" && Arch == \"X86_64\"\n"
                 "+ProjectName = \"bench\"\nqueue %zu\n",
                 n);
        r = config_submit_parse_string(text, "<bench>", cfg,
                                       &(ConfigSubmitOptions) { .owner = "alice", .iwd = "/home/alice/sim" }, ret,
                                       ret_n, &err);
        config_free(cfg);
        if (r < 0)
                die("submit text", r, err.msg);
}

/* Cluster and proc ads of the jobs (as the server gets them), from the
 * client's messages. */
typedef struct Split {
        ClassAd **msgs; /* the Submit parts, parsed back from their text */
        size_t n_msgs;
        ClassAd *cluster;
        ClassAd **procs;
        size_t n;
} Split;

static Split split_of(size_t n) {
        Split s = {};
        ClassAd **jobs = NULL, **built = NULL;
        size_t nj = 0, nb = 0;
        int r;

        jobs_of(n, &jobs, &nj);
        r = jobcmd_submit_messages(jobs, nj, 1, &built, &nb);
        if (r < 0)
                die("jobcmd_submit_messages", r, NULL);
        s.msgs = calloc(nb, sizeof(*s.msgs));
        for (size_t i = 0; i < nb; i++) {
                char *text = classad_unparse(built[i]);
                GleanCommand cmd;
                char why[256] = "";
                r = glean_msg_parse(text, strlen(text), &s.msgs[i], &cmd, why, sizeof(why));
                if (r < 0)
                        die("a Submit part", r, why);
                free(text);
        }
        s.n_msgs = nb;
        glean_ad_list_free(built, nb);
        config_submit_free(jobs, nj);
        if (glean_msg_get_ad(s.msgs[0], "Cluster", &s.cluster) < 0)
                die("Cluster", -EINVAL, NULL);
        for (size_t i = 0; i < s.n_msgs; i++) {
                ClassAd **p = NULL;
                size_t k = 0;
                if (glean_msg_get_ad_list(s.msgs[i], "Procs", &p, &k) < 0)
                        die("Procs", -EINVAL, NULL);
                s.procs = realloc(s.procs, (s.n + k) * sizeof(*s.procs));
                memcpy(s.procs + s.n, p, k * sizeof(*p));
                s.n += k;
                free(p);
        }
        return s;
}

static void split_free(Split *s) {
        glean_ad_list_free(s->msgs, s->n_msgs);
        glean_ad_list_free(s->procs, s->n);
        classad_free(s->cluster);
}

static int null_send(void *userdata, const char *payload, size_t len) {
        size_t *bytes = userdata;
        (void) payload;
        *bytes += len;
        return 0;
}

static const QueueRequester alice = { .user = "alice", .uid = 1000 };

int main(int argc, char **argv) {
        const char *dir = argc > 1 ? argv[1] : "build/bench-data";
        char path[512], why[512] = "";
        Accountant *a = NULL;
        JobQueue *q = NULL;
        double t;
        int64_t id;
        int r;

        mkdir(dir, 0755);
        snprintf(path, sizeof(path), "%s/queue.db", dir);
        for (const char *suffix = ""; suffix; suffix = *suffix ? (strcmp(suffix, "-wal") ? NULL : "-shm") : "-wal") {
                char p[600];
                snprintf(p, sizeof(p), "%s%s", path, suffix);
                unlink(p);
        }
        open_queue(path, &a, &q);
        printf("bench/queue: database %s (WAL, synchronous=FULL)\n", path);

        /* Single submits, each durable. */
        {
                Split one = split_of(1);
                const int n = 2000;
                t = now_s();
                for (int i = 0; i < n; i++) {
                        r = queue_submit(q, &alice, one.cluster, one.procs, 1, T0 + i, &id, why, sizeof(why));
                        if (r < 0)
                                die("single submit", r, why);
                }
                t = now_s() - t;
                printf("  single submits, each its own transaction: %d in %.2f s = %.0f submits/s (goal >= 2,000)\n",
                       n, t, n / t);
                JobCmdSubmit *pending = NULL;
                size_t bytes = 0;
                JobCmdSink sink = { null_send, NULL, &bytes, NULL };
                t = now_s();
                for (int i = 0; i < n; i++)
                        if (jobcmd_submit(&pending, q, &alice, one.msgs[0], T0 + i, &sink) != 1)
                                die("jobcmd_submit", -EIO, NULL);
                t = now_s() - t;
                printf("  single submits through jobcmd_submit:    %d in %.2f s = %.0f submits/s\n", n, t, n / t);
                split_free(&one);
        }

        /* queue N. */
        for (size_t n = 10000; n <= 100000; n *= 10) {
                Split s = split_of(n);
                JobCmdSubmit *pending = NULL;
                size_t bytes = 0;
                JobCmdSink sink = { null_send, NULL, &bytes, NULL };

                t = now_s();
                r = queue_submit(q, &alice, s.cluster, s.procs, s.n, T0, &id, why, sizeof(why));
                t = now_s() - t;
                if (r < 0)
                        die("queue N", r, why);
                printf("  queue %zu: queue_submit %.3f s = %.0f jobs/s (goal >= 100,000)\n", n, t, n / t);
                t = now_s();
                for (size_t i = 0; i < s.n_msgs; i++) {
                        r = jobcmd_submit(&pending, q, &alice, s.msgs[i], T0, &sink);
                        if (r < 0 || (i + 1 == s.n_msgs && r != 1))
                                die("jobcmd_submit", r < 0 ? r : -EIO, NULL);
                }
                t = now_s() - t;
                printf("  queue %zu: jobcmd_submit of its %zu parts %.3f s = %.0f jobs/s\n", n, s.n_msgs, t, n / t);
                split_free(&s);
        }

        /* Listing 100,000 jobs (the queue holds more: the Query asks for them by Ids). */
        {
                char text[256];
                size_t bytes = 0;
                JobCmdSink sink = { null_send, NULL, &bytes, NULL };
                ClassAd *req = NULL;
                GleanCommand cmd;
                int64_t big = queue_next_cluster(q) - 1; /* the queue 100000 through jobcmd */

                snprintf(text, sizeof(text), "[ Command = \"Query\"; RequestId = 1; Ids = \"%ld\" ]", (long) big);
                if (glean_msg_parse(text, strlen(text), &req, &cmd, NULL, 0) < 0)
                        die("query", -EINVAL, NULL);
                t = now_s();
                r = jobcmd_query(q, req, &sink);
                t = now_s() - t;
                printf("  Query of 100,000 jobs (every attribute): %.3f s, %.1f MB of replies\n", t, bytes / 1e6);
                classad_free(req);
                snprintf(text, sizeof(text),
                         "[ Command = \"Query\"; Ids = \"%ld\"; Attrs = \"ClusterId ProcId Owner JobStatus QDate "
                         "RemoteUserCpu JobPrio ImageSize Cmd Args\" ]",
                         (long) big);
                glean_msg_parse(text, strlen(text), &req, &cmd, NULL, 0);
                bytes = 0;
                t = now_s();
                r = jobcmd_query(q, req, &sink);
                t = now_s() - t;
                printf("  Query of 100,000 jobs (condor_q's 10 attributes): %.3f s, %.1f MB of replies\n", t,
                       bytes / 1e6);
                classad_free(req);
        }

        /* 1,000,000 jobs. */
        {
                Split s = split_of(100000);
                long before = rss_kib();
                size_t have = queue_size(q);

                while (queue_size(q) < 1000000) {
                        r = queue_submit(q, &alice, s.cluster, s.procs, s.n, T0, &id, why, sizeof(why));
                        if (r < 0)
                                die("queue 100000", r, why);
                }
                split_free(&s);
                printf("  %zu jobs queued: RSS %.0f MB (%.0f MB before the last %zu; goal < 2,000 MB for 1,000,000; "
                       "each job's ad chained to its cluster's)\n",
                       queue_size(q), rss_kib() / 1024.0, before / 1024.0, queue_size(q) - have);
        }
        queue_close(q);
        acct_close(a);

        t = now_s();
        open_queue(path, &a, &q);
        t = now_s() - t;
        printf("  reopened: %zu jobs loaded in %.2f s, RSS %.0f MB\n", queue_size(q), t, rss_kib() / 1024.0);
        {
                QueueIdle idle = {};
                t = now_s();
                r = queue_idle(q, &idle);
                t = now_s() - t;
                printf("  queue_idle over them: %.3f s (%zu submitter(s))\n", t, idle.n);
                queue_idle_clear(&idle);
                t = now_s();
                r = queue_periodic(q, T0, NULL, NULL);
                t = now_s() - t;
                printf("  queue_periodic over them (no policy set): %.3f s\n", t);
        }
        queue_close(q);
        acct_close(a);
        return 0;
}

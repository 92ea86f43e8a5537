/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-identity.c — what deciding who a job is costs the central
 * manager (queue/jobcmd-policy.c, accounting/identity.c):
 *
 *   - acct_job_submitter on a job ad with an accounting group (every
 *     cluster, at submit and at each start of the daemon): ns per call;
 *   - the server path of a `queue 100000` (jobcmd_submit of the client's
 *     parts, as parsed from frames, into a queue on a database file),
 *     with the pool's default policy (the literal checks) and, where
 *     jobcmd.h has JOBCMD_SUBMIT_POLICY, with two SUBMIT_REQUIREMENTs and
 *     an allow-list, and the check alone (jobcmd_policy_check).
 *
 *   build/bench/submit-identity [DIR]   (default build/bench-data)
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
#define N_PROCS 100000

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int r, const char *why) {
        fprintf(stderr, "bench/submit-identity: %s: %s (%s)\n", what, strerror(-r), why ? why : "");
        exit(1);
}

static Config *config_of(const char *extra) {
        Config *cfg = NULL;
        ConfigError err = { 0 };
        int r;
        if ((r = config_new(&cfg)) < 0 || (r = config_set(cfg, "UID_DOMAIN", "bench.example")) < 0 ||
            (r = config_set(cfg, "MAX_JOBS_PER_SUBMISSION", "10000000")) < 0 ||
            (extra && (r = config_load_string(cfg, extra, "<bench>", &err)) < 0))
                die("configuration", r, err.msg);
        return cfg;
}

static void open_queue(const char *path, JobQueue **ret_q) {
        Config *cfg = config_of(NULL);
        ConfigError err = { 0 };
        AcctSettings s = { 0 };
        AcctGroups *g = NULL;
        QueueSettings qs = { 0 };
        Accountant *a = NULL;
        char why[512] = "";
        int r;
        if ((r = acct_settings_from_config(cfg, &s, &err)) < 0 || (r = acct_groups_from_config(cfg, &g, &err)) < 0 ||
            (r = queue_settings_from_config(cfg, &qs, &err)) < 0)
                die("configuration", r, err.msg);
        config_free(cfg);
        if ((r = acct_open(path, 0, queue_schema(), &s, g, T0, &a, why, sizeof why)) < 0)
                die("acct_open", r, why);
        if ((r = queue_open(a, &qs, ret_q, why, sizeof why)) < 0)
                die("queue_open", r, why);
}

/* The Submit parts of a `queue n` of alice's, parsed back from their text. */
static ClassAd **parts_of(size_t n, size_t *ret_n) {
        char text[1024];
        ConfigError err = { 0 };
        Config *cfg = config_of(NULL);
        ClassAd **jobs = NULL, **built = NULL;
        size_t nj = 0, nb = 0;
        int r;
        snprintf(text, sizeof text,
                 "universe = vanilla\nexecutable = /bin/true\narguments = --seed $(Process) --out out.$(Process)\n"
                 "output = out/$(Process).out\nrequest_cpus = 1\nrequest_memory = 2048\nrequest_disk = 1048576\n"
                 "requirements = OpSys == \"LINUX\"\naccounting_group = group_sim\n+ProjectName = \"bench\"\n"
                 "queue %zu\n",
                 n);
        r = config_submit_parse_string(text, "<bench>", cfg,
                                       &(ConfigSubmitOptions){ .owner = "alice", .iwd = "/home/alice" }, &jobs, &nj,
                                       &err);
        config_free(cfg);
        if (r < 0)
                die("submit text", r, err.msg);
        if ((r = jobcmd_submit_messages(jobs, nj, 1, &built, &nb)) < 0)
                die("jobcmd_submit_messages", r, NULL);
        ClassAd **msgs = calloc(nb, sizeof *msgs);
        for (size_t i = 0; i < nb; i++) {
                char *t = classad_unparse(built[i]), why[256] = "";
                GleanCommand cmd;
                if ((r = glean_msg_parse(t, strlen(t), &msgs[i], &cmd, why, sizeof why)) < 0)
                        die("a part", r, why);
                free(t);
        }
        glean_ad_list_free(built, nb);
        config_submit_free(jobs, nj);
        *ret_n = nb;
        return msgs;
}

static int null_send(void *userdata, const char *payload, size_t len) {
        (void) userdata;
        (void) payload;
        (void) len;
        return 0;
}

static const QueueRequester alice = { .user = "alice", .uid = 1000, .admin = false };

static double submit_all(JobQueue *q, ClassAd **msgs, size_t n, const JobCmdSink *sink) {
        JobCmdSubmit *pending = NULL;
        double t = now_s();
        for (size_t i = 0; i < n; i++) {
                int r = jobcmd_submit(&pending, q, &alice, msgs[i], T0, sink);
                if (r < 0 || (i + 1 == n && r != 1))
                        die("jobcmd_submit (refused?)", r < 0 ? r : -EIO, NULL);
        }
        return now_s() - t;
}

int main(int argc, char **argv) {
        const char *dir = argc > 1 ? argv[1] : "build/bench-data";
        char path[512];
        int r;

        /* acct_job_submitter */
        {
                ClassAd *job = NULL;
                CaError err;
                const char *text = "[ Owner = \"alice\"; User = \"alice@bench.example\"; AcctGroup = \"group_sim\"; "
                                   "AcctGroupUser = \"alice\"; AccountingGroup = \"group_sim.alice\"; NiceUser = false; "
                                   "Cmd = \"/bin/true\"; RequestCpus = 1; RequestMemory = 2048 ]";
                if (classad_parse(text, strlen(text), CA_MODE_OLD, &job, &err) < 0)
                        die("job ad", -EINVAL, err.msg);
                const int n = 1000000;
                char why[256];
                double t = now_s();
                for (int i = 0; i < n; i++) {
                        char *name = NULL;
                        if ((r = acct_job_submitter(job, "bench.example", &name, why, sizeof why)) < 0)
                                die("acct_job_submitter", r, why);
                        free(name);
                }
                t = now_s() - t;
                printf("bench/submit-identity: acct_job_submitter: %.0f ns per call (%d calls)\n", t / n * 1e9, n);
                classad_free(job);
        }

        mkdir(dir, 0755);
        size_t n_msgs = 0;
        ClassAd **msgs = parts_of(N_PROCS, &n_msgs);
        JobCmdSink sink = { .send = null_send, .vacate = NULL, .userdata = NULL };
        for (int round = 0; round < 2; round++) {
                JobQueue *q = NULL;
                snprintf(path, sizeof path, "%s/submit-identity-%d.db", dir, round);
                for (const char *sfx = ""; sfx; sfx = *sfx ? (strcmp(sfx, "-wal") ? NULL : "-shm") : "-wal") {
                        char p[600];
                        snprintf(p, sizeof p, "%s%s", path, sfx);
                        unlink(p);
                }
                open_queue(path, &q);
#ifdef JOBCMD_SUBMIT_POLICY
                JobCmdPolicy *policy = NULL;
                ConfigError err = { 0 };
                Config *cfg = config_of(round == 0 ? "ACCOUNTING_GROUPS_ALLOWED = group_sim\n"
                                                   : "ACCOUNTING_GROUPS_ALLOWED = group_sim\n"
                                                     "SUBMIT_REQUIREMENT_NAMES = Mem Proj\n"
                                                     "SUBMIT_REQUIREMENT_Mem = RequestMemory <= 65536\n"
                                                     "SUBMIT_REQUIREMENT_Proj = ProjectName =!= undefined\n");
                if ((r = jobcmd_policy_from_config(cfg, &policy, &err)) < 0)
                        die("policy", r, err.msg);
                config_free(cfg);
                sink.policy = policy;
#else
                if (round == 1)
                        break;
#endif
                double t = submit_all(q, msgs, n_msgs, &sink);
                printf("  queue %d through jobcmd_submit (%zu parts), %s: %.3f s = %.0f jobs/s\n", N_PROCS, n_msgs,
                       round == 0 ? "the literal checks and an allow-list" : "and two SUBMIT_REQUIREMENTs", t,
                       N_PROCS / t);
#ifdef JOBCMD_SUBMIT_POLICY
                /* The check alone, on the ads as the server gathered them. */
                ClassAd *cluster = NULL, **procs = NULL;
                size_t np = 0;
                glean_msg_get_ad(msgs[0], "Cluster", &cluster);
                for (size_t i = 0; i < n_msgs; i++) {
                        ClassAd **p = NULL;
                        size_t k = 0;
                        glean_msg_get_ad_list(msgs[i], "Procs", &p, &k);
                        procs = realloc(procs, (np + k) * sizeof *procs);
                        memcpy(procs + np, p, k * sizeof *p);
                        np += k;
                        free(p);
                }
                char why[512] = "";
                t = now_s();
                r = jobcmd_policy_check(policy, &alice, "bench.example", cluster, procs, np, why, sizeof why);
                t = now_s() - t;
                if (r < 0)
                        die("jobcmd_policy_check", r, why);
                printf("    of which jobcmd_policy_check: %.3f s (%.2f us per proc)\n", t, t / np * 1e6);
                glean_ad_list_free(procs, np);
                classad_free(cluster);
                jobcmd_policy_free(policy);
#endif
                queue_close(q);
        }
        glean_ad_list_free(msgs, n_msgs);
        return 0;
}

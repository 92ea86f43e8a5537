/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classad-chain — what job ads cost in memory, parsed whole or as a
 * proc's own attributes chained to a shared cluster ad (classad_chain),
 * and what matching costs through the chain.
 *
 * Usage: classad-chain [--ads N] [--procs N] [--match N] [--repeat K]
 *
 * Each figure is measured in a child process of its own, so that the heap
 * one leaves behind does not serve the next. Memory is the growth of the
 * child's resident set (VmRSS from /proc/self/statm) while it makes the
 * ads, divided by their number ("rss"), and the growth of malloc's bytes
 * in use, chunk headers included (mallinfo2: uordblks + hblkhd, "heap").
 * The array of pointers to the ads is made before and not counted.
 *
 *   job      --ads N (200,000) job ads of 50 attributes (about 1.4 KB of
 *            text), each parsed with classad_parse
 *   shrunk   the same, each then classad_shrink'd (table and arena trimmed)
 *   proc     --procs N (1,000,000) ads of a proc's 10 own attributes
 *            (ProcId, JobStatus, Arguments, GlobalJobId, ...) made with
 *            classad_set_* and shrunk, alone
 *   chained  one cluster ad (the same 50-attribute job ad) and --procs N
 *            proc ads as above chained to it: the job queue's layout;
 *            also the child's whole resident set at the end
 *   match    --match N (100,000) chained procs, each classad_match'ed
 *            against one slot ad --repeat K (5) times (the cluster's
 *            Requirements reading each proc's RequestMemory, a quarter of
 *            them too large for the slot), against the same done on
 *            flattened copies (classad_copy: unchained ads of every
 *            attribute)
 *
 * Progress lines go to stdout; the last line is always
 *
 *   job_bytes=B shrunk_bytes=B proc_bytes=B chained_bytes_per_proc=B chained_rss_mb=M
 *   match_chained_per_s=R match_flat_per_s=R matched=N
 *
 * (on one line), where *_bytes are rss per ad. Exit status 0, or 1 when
 * something fails (a parse, an allocation, a child, matches that differ
 * between the chained and the flattened ads).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"

#define BENCH_MODE CA_MODE_OLD

/* A vanilla job as condor_submit makes it: 50 attributes. %d: its ProcId. */
static const char job_fmt[] =
        "[ MyType = \"Job\"; TargetType = \"Machine\"; ClusterId = 4711; ProcId = %d; Owner = \"alice\"; "
        "User = \"alice@example.org\"; Cmd = \"/home/alice/sim/run.sh\"; Arguments = \"--seed %d\"; "
        "Iwd = \"/home/alice/sim\"; Out = \"out.%d\"; Err = \"err\"; UserLog = \"sim.log\"; JobUniverse = 5; "
        "JobStatus = 1; LastJobStatus = 0; EnteredCurrentStatus = 1700000000; QDate = 1700000000; JobPrio = 0; "
        "NiceUser = false; RequestCpus = 2; RequestMemory = 4096; RequestDisk = 20971520; ImageSize = 350000; "
        "DiskUsage = 2500000; ExecutableSize = 12; NumJobStarts = 0; NumRestarts = 0; NumShadowStarts = 0; "
        "JobRunCount = 0; ExitBySignal = false; CompletionDate = 0; RemoteWallClockTime = 0.0; "
        "RemoteUserCpu = 0.0; RemoteSysCpu = 0.0; ShouldTransferFiles = \"YES\"; "
        "WhenToTransferOutput = \"ON_EXIT\"; TransferInput = \"in.dat\"; FileSystemDomain = \"example.org\"; "
        "Department = \"physics\"; JobLeaseDuration = 2400; MaxHosts = 1; MinHosts = 1; CurrentHosts = 0; "
        "OnExitRemove = true; OnExitHold = false; PeriodicHold = false; PeriodicRelease = false; "
        "PeriodicRemove = JobStatus == 5 && time() - EnteredCurrentStatus > 86400; "
        "Requirements = TARGET.Arch == \"X86_64\" && TARGET.OpSys == \"LINUX\" && "
        "TARGET.Memory >= RequestMemory && TARGET.Cpus >= RequestCpus && TARGET.Disk >= RequestDisk && "
        "(TARGET.HasFileTransfer || TARGET.FileSystemDomain == MY.FileSystemDomain); "
        "Rank = TARGET.Mips + TARGET.KFlops / 1000.0 ]";

static const char slot_text[] =
        "[ MyType = \"Machine\"; Name = \"slot1@host-0001.example.org\"; Arch = \"X86_64\"; OpSys = \"LINUX\"; "
        "Cpus = 8; Memory = 8192; Disk = 100000000; HasFileTransfer = true; FileSystemDomain = \"example.org\"; "
        "Mips = 20000; KFlops = 1500000; State = \"Unclaimed\"; Activity = \"Idle\"; "
        "Requirements = TARGET.RequestMemory <= Memory && TARGET.RequestCpus <= Cpus; Rank = 0 ]";

typedef struct Options {
        size_t ads, procs, match;
        unsigned repeat;
} Options;

/* ---- measuring ---- */

static double now_seconds(void) {
        struct timespec ts;

        (void) clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec * 1e-9;
}

static uint64_t per_second(uint64_t n, double seconds) {
        return seconds > 0.0 ? (uint64_t) llround((double) n / seconds) : 0;
}

/* Resident set of this process, in bytes. */
static size_t rss_bytes(void) {
        unsigned long size = 0, resident = 0;
        FILE *f = fopen("/proc/self/statm", "re");

        if (f) {
                if (fscanf(f, "%lu %lu", &size, &resident) != 2)
                        resident = 0;
                fclose(f);
        }
        return (size_t) resident * (size_t) sysconf(_SC_PAGESIZE);
}

static size_t heap_bytes(void) {
        struct mallinfo2 mi = mallinfo2();

        return mi.uordblks + mi.hblkhd;
}

typedef struct Mark {
        size_t rss, heap;
        double t;
} Mark;

static Mark mark(void) {
        return (Mark){ rss_bytes(), heap_bytes(), now_seconds() };
}

/* ---- making ads ---- */

static ClassAd *parse_job(int proc) {
        char text[sizeof(job_fmt) + 64];
        int len = snprintf(text, sizeof(text), job_fmt, proc, proc, proc);
        ClassAd *ad = NULL;
        CaError err = {};

        if (classad_parse(text, (size_t) len, BENCH_MODE, &ad, &err) < 0) {
                fprintf(stderr, "job ad: column %d: %s\n", err.column, err.msg);
                return NULL;
        }
        return ad;
}

/* A proc's own attributes, as the queue sets them: 10; every fourth proc
 * asks for more memory than the cluster (and than the slot has). */
static ClassAd *make_proc(int proc) {
        char text[64];
        ClassAd *ad = NULL;
        int r;

        if (classad_new(&ad) < 0)
                return NULL;
        r = classad_set_int(ad, "ProcId", proc);
        if (r >= 0)
                r = classad_set_int(ad, "JobStatus", 1);
        if (r >= 0)
                r = classad_set_int(ad, "EnteredCurrentStatus", 1700000000 + proc);
        if (r >= 0) {
                snprintf(text, sizeof(text), "--seed %d --out out.%d", proc, proc);
                r = classad_set_string(ad, "Arguments", text);
        }
        if (r >= 0) {
                snprintf(text, sizeof(text), "cm.example.org#4711.%d#1700000000", proc);
                r = classad_set_string(ad, "GlobalJobId", text);
        }
        if (r >= 0)
                r = classad_set_int(ad, "NumJobStarts", 0);
        if (r >= 0)
                r = proc % 4 == 3 ? classad_set_int(ad, "RequestMemory", 16384)
                                  : classad_set_int(ad, "ImageSize", 350000);
        if (r >= 0)
                r = classad_set_int(ad, "ResidentSetSize", 0);
        if (r >= 0)
                r = classad_set_real(ad, "RemoteWallClockTime", 0.0);
        if (r >= 0)
                r = classad_set_int(ad, "LastJobStatus", 0);
        if (r < 0) {
                classad_free(ad);
                return NULL;
        }
        classad_shrink(ad);
        return ad;
}

/* ---- the measurements, each in a child ---- */

typedef enum Kind { KIND_JOB, KIND_SHRUNK, KIND_PROC, KIND_CHAINED, KIND_MATCH } Kind;

/* Makes n ads of kind k and prints (and writes to out) what they take. */
static int measure(Kind k, size_t n, FILE *out) {
        static const char *const names[] = { "job", "shrunk", "proc", "chained" };
        ClassAd **ads = calloc(n, sizeof(ClassAd *)), *cluster = NULL;
        Mark m0, m1;

        if (!ads)
                return -ENOMEM;
        if (k == KIND_CHAINED) {
                cluster = parse_job(0);
                if (!cluster)
                        return -EINVAL;
                (void) classad_delete(cluster, "ProcId"); /* each proc's own */
                classad_shrink(cluster);
        }
        m0 = mark();
        for (size_t i = 0; i < n; i++) {
                ads[i] = k == KIND_JOB || k == KIND_SHRUNK ? parse_job((int) i) : make_proc((int) i);
                if (!ads[i])
                        return -ENOMEM;
                if (k == KIND_SHRUNK)
                        classad_shrink(ads[i]);
                if (k == KIND_CHAINED && classad_chain(ads[i], cluster) < 0)
                        return -EINVAL;
        }
        m1 = mark();
        double rss = (double) (m1.rss - m0.rss) / (double) n, heap = (double) (m1.heap - m0.heap) / (double) n;
        printf("%-8s %zu ads: %.0f bytes/ad rss, %.0f bytes/ad heap, %" PRIu64 " ads/s made; process rss %.1f MB\n",
               names[k], n, rss, heap, per_second(n, m1.t - m0.t), (double) m1.rss / 1e6);
        if (k == KIND_CHAINED) {
                size_t size = classad_size(ads[n - 1]), own = classad_size_own(ads[n - 1]);
                printf("         (proc ads show %zu attributes, %zu of them their own)\n", size, own);
                fprintf(out, "chained_bytes_per_proc=%.0f chained_rss_mb=%.0f", rss, (double) m1.rss / 1e6);
        } else
                fprintf(out, "%s_bytes=%.0f", names[k], rss);
        return 0; /* the process ends: no need to free */
}

/* classad_match of each ad against slot, repeat times: matches, and rate. */
static uint64_t match_all(ClassAd *const *ads, size_t n, const ClassAd *slot, unsigned repeat, uint64_t *ret_rate) {
        uint64_t matched = 0;
        double t0 = now_seconds();

        for (unsigned r = 0; r < repeat; r++)
                for (size_t i = 0; i < n; i++)
                        matched += classad_match(ads[i], slot, BENCH_MODE);
        *ret_rate = per_second((uint64_t) n * repeat, now_seconds() - t0);
        return matched / repeat;
}

static int measure_match(size_t n, unsigned repeat, FILE *out) {
        ClassAd **chained = calloc(n, sizeof(ClassAd *)), **flat = calloc(n, sizeof(ClassAd *));
        ClassAd *cluster = parse_job(0), *slot = NULL;
        uint64_t rate_chained, rate_flat, m_chained, m_flat;

        if (!chained || !flat || !cluster || classad_parse(slot_text, strlen(slot_text), BENCH_MODE, &slot, NULL) < 0)
                return -ENOMEM;
        (void) classad_delete(cluster, "ProcId");
        for (size_t i = 0; i < n; i++) {
                chained[i] = make_proc((int) i);
                if (!chained[i] || classad_chain(chained[i], cluster) < 0 || classad_copy(chained[i], &flat[i]) < 0)
                        return -ENOMEM;
        }
        m_chained = match_all(chained, n, slot, repeat, &rate_chained);
        m_flat = match_all(flat, n, slot, repeat, &rate_flat);
        printf("match    %zu procs x %u: chained %" PRIu64 "/s, flattened copies %" PRIu64 "/s (%" PRIu64
               " and %" PRIu64 " match)\n",
               n, repeat, rate_chained, rate_flat, m_chained, m_flat);
        fprintf(out, "match_chained_per_s=%" PRIu64 " match_flat_per_s=%" PRIu64 " matched=%" PRIu64, rate_chained,
                rate_flat, m_chained);
        return m_chained == m_flat ? 0 : -EPROTO;
}

/* Runs one measurement in a child; appends its figures to summary. */
static int in_child(Kind k, size_t n, const Options *o, char *summary, size_t size) {
        int fds[2];
        pid_t pid;
        int status = 0;

        if (pipe(fds) < 0)
                return -errno;
        fflush(NULL);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0) {
                FILE *out = fdopen(fds[1], "w");
                int r;

                close(fds[0]);
                r = !out ? -errno : k == KIND_MATCH ? measure_match(o->match, o->repeat, out) : measure(k, n, out);
                if (r < 0)
                        fprintf(stderr, "classad-chain: %s\n", strerror(-r));
                fflush(NULL);
                _exit(r < 0 ? 1 : 0);
        }
        close(fds[1]);
        size_t len = strlen(summary);
        ssize_t got;
        if (len && len + 1 < size)
                summary[len++] = ' ';
        while (len + 1 < size && (got = read(fds[0], summary + len, size - 1 - len)) > 0)
                len += (size_t) got;
        summary[len] = '\0';
        close(fds[0]);
        while (waitpid(pid, &status, 0) < 0)
                if (errno != EINTR)
                        return -errno;
        return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

/* ---- main ---- */

static void usage(FILE *f) {
        fprintf(f, "Usage: classad-chain [--ads N] [--procs N] [--match N] [--repeat K]\n");
}

static bool parse_count(const char *s, size_t max, size_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s || *end || v == 0 || v > max)
                return false;
        *ret = (size_t) v;
        return true;
}

int main(int argc, char **argv) {
        static const struct option longopts[] = {
                { "ads", required_argument, NULL, 'a' },   { "procs", required_argument, NULL, 'p' },
                { "match", required_argument, NULL, 'm' }, { "repeat", required_argument, NULL, 'r' },
                { "help", no_argument, NULL, 'h' },        {},
        };
        Options o = { .ads = 200000, .procs = 1000000, .match = 100000, .repeat = 5 };
        char summary[1024] = "";
        size_t v;
        int c;

        while ((c = getopt_long(argc, argv, "h", longopts, NULL)) >= 0)
                switch (c) {
                case 'a':
                case 'p':
                case 'm':
                case 'r':
                        if (!parse_count(optarg, 100000000, &v)) {
                                fprintf(stderr, "classad-chain: bad count '%s'\n", optarg);
                                return 1;
                        }
                        if (c == 'a')
                                o.ads = v;
                        else if (c == 'p')
                                o.procs = v;
                        else if (c == 'm')
                                o.match = v;
                        else
                                o.repeat = (unsigned) v;
                        break;
                case 'h':
                        usage(stdout);
                        return 0;
                default:
                        usage(stderr);
                        return 1;
                }
        if (optind != argc) {
                usage(stderr);
                return 1;
        }

        if (in_child(KIND_JOB, o.ads, &o, summary, sizeof(summary)) < 0 ||
            in_child(KIND_SHRUNK, o.ads, &o, summary, sizeof(summary)) < 0 ||
            in_child(KIND_PROC, o.procs, &o, summary, sizeof(summary)) < 0 ||
            in_child(KIND_CHAINED, o.procs, &o, summary, sizeof(summary)) < 0 ||
            in_child(KIND_MATCH, 0, &o, summary, sizeof(summary)) < 0) {
                fprintf(stderr, "classad-chain: a measurement failed\n");
                return 1;
        }
        printf("%s\n", summary);
        return 0;
}

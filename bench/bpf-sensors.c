/* SPDX-License-Identifier: Apache-2.0 */
/*
 * bpf-sensors — what the load sensor's scheduler probes (bpf/load.bpf.c:
 * tp_btf on sched_switch, sched_wakeup, sched_wakeup_new,
 * sched_process_exit) cost the machine: the nanoseconds each program runs
 * per event (the kernel's run_time_ns / run_cnt, BPF_STATS_RUN_TIME), and a
 * context-switch microbenchmark, a pipe ping-pong, with and without them.
 *
 * Usage: bpf-sensors [-n ROUNDS] [-r REPEATS]   (as root)
 *
 * Two processes exchange one byte ROUNDS times (default 200,000 round
 * trips, after 1,000 untimed ones), both pinned to the same CPU (the
 * context-switch-heavy case) and, with two CPUs or more, each on its own
 * CPU (wake-ups across CPUs, which go idle in between). REPEATS cycles
 * (default 5) of five phases, so that a drift of the machine's speed
 * weighs on all of them alike:
 *
 *   a   no probes
 *   b0  the load sensor open, no slot registered: every program stops at
 *       its first check, the switch and exit programs after one look-up
 *       of the task's storage (what attaching them costs)
 *   b   a slot registered (<subtree>/slot), the ping-pong outside it in
 *       <subtree>/other/job: as deep as a job, so the programs walk the
 *       task's cgroups, look each one up and find nothing (the worst case
 *       of a task outside the slots; one in a shallower cgroup stops at the
 *       first level check)
 *   c   the ping-pong inside the slot, in <subtree>/slot/job: the programs
 *       find the slot one level up and count the tasks
 *   a2  the sensor closed again
 *
 * (a) and (a2) run in <subtree>/other/job too. The run-time statistics are
 * on only during one more run of (b0), (b) and (c) in each cycle
 * (bpf_enable_stats(), on while its descriptor is open; they cost a little
 * themselves, so the timed runs go without).
 *
 * Output: one "name = value" line each. Ping-pong figures in ns per round
 * trip, the median of the cycles with the smallest and the largest;
 * overheads in %, per cycle against the mean of its (a) and (a2), then the
 * median; per program, ns per event (run_time_ns / run_cnt) and events per
 * round trip, summed over the statistics runs (every event of the machine
 * during a run counts; the ping-pong's are nearly all of them), and the
 * programs' ns per round trip. Nothing is judged.
 *
 * Works in a cgroup v2 subtree of its own, <cgroup2 mount>/glean-bench-<pid>,
 * removed at the end. Exits 77 when not root, without a writable cgroup v2,
 * or when the kernel refuses the programs or their statistics; 1 when a run
 * fails.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include "bpf/sensors.h"

#define WARMUP 1000UL
#define MAX_PROGS 8

typedef enum Phase { PHASE_A, PHASE_B0, PHASE_B, PHASE_C, PHASE_A2, _PHASE_MAX } Phase;
typedef enum Mode { MODE_SAME, MODE_CROSS, _MODE_MAX } Mode;

static const char *const phase_names[] = { "a", "b0", "b", "c", "a2" };
static const char *const mode_names[] = { "same_cpu", "cross_cpu" };

typedef struct ProgStat {
        char name[BPF_OBJ_NAME_LEN];
        uint64_t run_ns, run_cnt;
} ProgStat;

static unsigned long rounds = 200000;
static unsigned repeats = 5;
static int cpus[2];
static unsigned n_modes = 1;

/* The subtree; fixed paths, so that teardown() is async-signal-safe. */
static char base[128], other[160], other_job[192], slot[160], slot_job[192];
static volatile pid_t workers[2];

static _Noreturn void die(const char *what, const char *detail) {
        fprintf(stderr, "bpf-sensors: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        exit(1);
}

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

/* Sorts v. */
static double median(double *v, size_t n) {
        qsort(v, n, sizeof(*v), cmp_double);
        return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the subtree ---- */

static void teardown(void) {
        for (size_t i = 0; i < 2; i++)
                if (workers[i] > 0) {
                        kill(workers[i], SIGKILL);
                        (void) waitpid(workers[i], NULL, 0);
                        workers[i] = 0;
                }
        if (!base[0])
                return;
        (void) rmdir(slot_job);
        (void) rmdir(slot);
        (void) rmdir(other_job);
        (void) rmdir(other);
        (void) rmdir(base);
}

static void on_signal(int sig) {
        teardown();
        signal(sig, SIG_DFL);
        raise(sig);
}

static int setup(void) {
        const char *mount = NULL;
        struct statfs fs;
        cpu_set_t set;

        if (geteuid() != 0) {
                fprintf(stderr, "bpf-sensors: needs root (BPF programs and their statistics, cgroups)\n");
                return 77;
        }
        if (access("/sys/kernel/btf/vmlinux", R_OK) < 0) {
                fprintf(stderr, "bpf-sensors: no kernel BTF (/sys/kernel/btf/vmlinux): tp_btf programs cannot load\n");
                return 77;
        }
        if (statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                mount = "/sys/fs/cgroup";
        else if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                mount = "/sys/fs/cgroup/unified";
        else {
                fprintf(stderr, "bpf-sensors: no cgroup2 mount\n");
                return 77;
        }
        snprintf(base, sizeof(base), "%s/glean-bench-%d", mount, (int) getpid());
        snprintf(other, sizeof(other), "%s/other", base);
        snprintf(other_job, sizeof(other_job), "%s/job", other);
        snprintf(slot, sizeof(slot), "%s/slot", base);
        snprintf(slot_job, sizeof(slot_job), "%s/job", slot);
        if (mkdir(base, 0755) < 0) {
                fprintf(stderr, "bpf-sensors: cgroup v2 not writable: mkdir %s: %s\n", base, strerror(errno));
                base[0] = '\0';
                return 77;
        }
        if (mkdir(other, 0755) < 0 || mkdir(other_job, 0755) < 0 || mkdir(slot, 0755) < 0 ||
            mkdir(slot_job, 0755) < 0) {
                fprintf(stderr, "bpf-sensors: mkdir in %s: %s\n", base, strerror(errno));
                teardown();
                base[0] = '\0';
                return 77;
        }

        /* The first two CPUs we may run on. */
        if (sched_getaffinity(0, sizeof(set), &set) < 0)
                die("sched_getaffinity", strerror(errno));
        for (int c = 0, k = 0; c < CPU_SETSIZE && k < 2; c++)
                if (CPU_ISSET(c, &set)) {
                        cpus[k++] = c;
                        n_modes = (unsigned) k;
                }
        return 0;
}

/* ---- BPF ---- */

static int stats_read(const int *fds, int n, ProgStat *ret) {
        for (int i = 0; i < n; i++) {
                struct bpf_prog_info info = {};
                __u32 len = sizeof(info);

                if (bpf_obj_get_info_by_fd(fds[i], &info, &len) < 0)
                        return -errno;
                snprintf(ret[i].name, sizeof(ret[i].name), "%s", info.name);
                ret[i].run_ns = info.run_time_ns;
                ret[i].run_cnt = info.run_cnt;
        }
        return 0;
}

static int stats_enable(void) {
        int fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

        return fd < 0 ? -errno : fd;
}

/* ---- ping-pong ---- */

static void join(const char *cgroup_dir, int cpu) {
        char path[256];
        cpu_set_t set;
        int fd;

        snprintf(path, sizeof(path), "%s/cgroup.procs", cgroup_dir);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, "0", 1) != 1)
                _exit(3);
        close(fd);
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        if (sched_setaffinity(0, sizeof(set), &set) < 0)
                _exit(3);
}

/* The two sides: the pinger times ROUNDS round trips and writes the ns to res. */
static _Noreturn void side(bool pinger, int rd, int wr, int res) {
        unsigned long total = WARMUP + rounds;
        uint64_t t0 = 0, dt;
        char c = 0;

        for (unsigned long i = 0; i < total; i++) {
                if (pinger) {
                        if (i == WARMUP)
                                t0 = now_ns();
                        if (write(wr, &c, 1) != 1 || read(rd, &c, 1) != 1)
                                _exit(4);
                } else if (read(rd, &c, 1) != 1 || write(wr, &c, 1) != 1)
                        _exit(4);
        }
        if (pinger) {
                dt = now_ns() - t0;
                if (write(res, &dt, sizeof(dt)) != (ssize_t) sizeof(dt))
                        _exit(4);
        }
        _exit(0);
}

/* One run in cgroup_dir; ns per round trip. With n_fds > 0, the programs'
 * statistics before and after the run in before[] and after[]. */
static double pingpong(Mode mode, const char *cgroup_dir, const int *fds, int n_fds, ProgStat *before,
                       ProgStat *after) {
        int ping[2], pong[2], ready[2], go[2], res[2];
        uint64_t dt = 0;
        char b[2];
        bool ok;

        if (pipe2(ping, O_CLOEXEC) < 0 || pipe2(pong, O_CLOEXEC) < 0 || pipe2(ready, O_CLOEXEC) < 0 ||
            pipe2(go, O_CLOEXEC) < 0 || pipe2(res, O_CLOEXEC) < 0)
                die("pipe", strerror(errno));
        for (size_t i = 0; i < 2; i++) {
                pid_t pid = fork();

                if (pid < 0)
                        die("fork", strerror(errno));
                if (pid == 0) {
                        bool pinger = i == 0;

                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                        join(cgroup_dir, mode == MODE_SAME ? cpus[1 % n_modes] : cpus[i]);
                        close(ready[0]);
                        close(go[1]);
                        close(res[0]);
                        close(pinger ? ping[0] : pong[0]);
                        close(pinger ? pong[1] : ping[1]);
                        if (write(ready[1], "r", 1) != 1)
                                _exit(3);
                        close(ready[1]);
                        if (read(go[0], b, 1) != 0) /* EOF: go */
                                _exit(3);
                        close(go[0]);
                        side(pinger, pinger ? pong[0] : ping[0], pinger ? ping[1] : pong[1], res[1]);
                }
                workers[i] = pid;
        }
        close(ping[0]);
        close(ping[1]);
        close(pong[0]);
        close(pong[1]);
        close(ready[1]);
        close(go[0]);
        close(res[1]);
        ok = read(ready[0], b, 1) == 1 && read(ready[0], b + 1, 1) == 1;
        close(ready[0]);
        if (ok && n_fds > 0 && stats_read(fds, n_fds, before) < 0)
                die("bpf_obj_get_info_by_fd", strerror(errno));
        close(go[1]); /* both sides start */
        ok = ok && read(res[0], &dt, sizeof(dt)) == (ssize_t) sizeof(dt);
        if (ok && n_fds > 0 && stats_read(fds, n_fds, after) < 0)
                die("bpf_obj_get_info_by_fd", strerror(errno));
        close(res[0]);
        for (size_t i = 0; i < 2; i++) {
                int st = 0;

                if (waitpid(workers[i], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
                        ok = false;
                workers[i] = 0;
        }
        if (!ok)
                die("a ping-pong run failed", mode_names[mode]);
        return (double) dt / (double) rounds;
}

/* ---- the probes ---- */

/* Opens the load sensor alone; its programs' descriptors in fds[], how many in *ret_n. */
static int sensors_open(GleanSensors **ret, int *fds, int *ret_n) {
        GleanSensorConfig cfg = { .input_methods = (char *[]){ NULL }, .tty_methods = (char *[]){ NULL }, .load = true };
        GleanSensors *s = NULL;
        int r, n;

        r = glean_sensors_open(&cfg, &s);
        if (r < 0) {
                fprintf(stderr, "bpf-sensors: glean_sensors_open: %s\n", strerror(-r));
                return 77;
        }
        if (strcmp(glean_sensors_method(s, GLEAN_SENSOR_LOAD), "tp_btf") != 0) {
                fprintf(stderr, "bpf-sensors: the load sensor is not available: %s\n",
                        glean_sensors_refused(s, GLEAN_SENSOR_LOAD));
                glean_sensors_free(s);
                return 77;
        }
        n = glean_sensors_prog_fds(s, GLEAN_SENSOR_LOAD, fds, MAX_PROGS);
        if (n <= 0)
                die("glean_sensors_prog_fds", "no programs");
        *ret = s;
        *ret_n = n;
        return 0;
}

/* ---- output ---- */

/* Median, smallest and largest of v (sorted). */
static void print_runs(const char *name, double *v, size_t n) {
        double med = median(v, n);

        printf("%s = %.1f\n", name, med);
        printf("%s_min = %.1f\n", name, v[0]);
        printf("%s_max = %.1f\n", name, v[n - 1]);
}

static void print_stats(Mode m, Phase p, const ProgStat *acc, int n, unsigned long total_rounds) {
        double total = 0;

        for (int i = 0; i < n; i++) {
                printf("bpf_%s_%s_%s_ns_per_event = %.1f\n", mode_names[m], phase_names[p], acc[i].name,
                       acc[i].run_cnt ? (double) acc[i].run_ns / (double) acc[i].run_cnt : 0.0);
                printf("bpf_%s_%s_%s_events_per_rt = %.2f\n", mode_names[m], phase_names[p], acc[i].name,
                       (double) acc[i].run_cnt / (double) total_rounds);
                total += (double) acc[i].run_ns;
        }
        printf("bpf_%s_%s_ns_per_rt = %.1f\n", mode_names[m], phase_names[p], total / (double) total_rounds);
}

static void usage(FILE *f) {
        fprintf(f, "usage: bpf-sensors [-n ROUNDS] [-r REPEATS]\n");
}

static int parse_args(int argc, char **argv) {
        unsigned long v;
        char *end;
        int opt;

        while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
                if (opt == 'h') {
                        usage(stdout);
                        exit(0);
                }
                if (opt != 'n' && opt != 'r')
                        goto bad;
                errno = 0;
                v = strtoul(optarg, &end, 10);
                if (errno || *end || v == 0 || (opt == 'r' && v > 1000))
                        goto bad;
                if (opt == 'n')
                        rounds = v;
                else
                        repeats = (unsigned) v;
        }
        if (optind == argc)
                return 0;
bad:
        usage(stderr);
        return 2;
}

int main(int argc, char **argv) {
        static ProgStat acc[_MODE_MAX][_PHASE_MAX][MAX_PROGS];
        double *t[_MODE_MAX][_PHASE_MAX] = {}, *ts[_MODE_MAX][_PHASE_MAX] = {}, *pct;
        GleanSensors *s = NULL;
        int fds[MAX_PROGS], n_progs = 0, r, fd;
        struct utsname un;
        char name[96];

        r = parse_args(argc, argv);
        if (r != 0)
                return r;
        r = setup();
        if (r != 0)
                return r;
        atexit(teardown);
        signal(SIGINT, on_signal);
        signal(SIGTERM, on_signal);
        signal(SIGHUP, on_signal);

        fd = stats_enable();
        if (fd < 0) {
                fprintf(stderr, "bpf-sensors: BPF run-time statistics not available: %s\n", strerror(-fd));
                return 77;
        }
        close(fd);
        fd = open("/proc/sys/kernel/bpf_stats_enabled", O_RDONLY | O_CLOEXEC);
        if (fd >= 0) {
                char c = '0';

                if (read(fd, &c, 1) == 1 && c != '0')
                        fprintf(stderr, "bpf-sensors: kernel.bpf_stats_enabled is on: every run pays for the "
                                        "statistics\n");
                close(fd);
        }

        for (unsigned m = 0; m < n_modes; m++)
                for (unsigned p = 0; p < _PHASE_MAX; p++)
                        if (!(t[m][p] = calloc(repeats, sizeof(double))) ||
                            !(ts[m][p] = calloc(repeats, sizeof(double))))
                                die("calloc", NULL);
        if (!(pct = calloc(repeats, sizeof(double))))
                die("calloc", NULL);

        /* Cycles of a, b0, b, c, a2, so that a drift of the machine's speed
         * weighs on every phase alike. */
        for (unsigned i = 0; i < repeats; i++)
                for (Phase p = 0; p < _PHASE_MAX; p++) {
                        const char *cg = p == PHASE_C ? slot_job : other_job;

                        if (p == PHASE_B0) {
                                r = sensors_open(&s, fds, &n_progs);
                                if (r != 0)
                                        return r;
                        } else if (p == PHASE_B) {
                                unsigned idx;
                                int dfd = open(slot, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

                                if (dfd < 0)
                                        die("open", slot);
                                r = glean_sensors_slot_add(s, dfd, &idx);
                                if (r < 0)
                                        die("glean_sensors_slot_add", strerror(-r));
                                close(dfd);
                        } else if (p == PHASE_A2) {
                                glean_sensors_free(s);
                                s = NULL;
                        }

                        fprintf(stderr, "bpf-sensors: cycle %u/%u, phase %s\n", i + 1, repeats, phase_names[p]);
                        for (unsigned m = 0; m < n_modes; m++)
                                t[m][p][i] = pingpong(m, cg, NULL, 0, NULL, NULL);
                        if (!s)
                                continue;
                        /* One more run with the statistics on. */
                        for (unsigned m = 0; m < n_modes; m++) {
                                ProgStat before[MAX_PROGS], after[MAX_PROGS];

                                fd = stats_enable();
                                if (fd < 0)
                                        die("bpf_enable_stats", strerror(-fd));
                                ts[m][p][i] = pingpong(m, cg, fds, n_progs, before, after);
                                close(fd);
                                for (int k = 0; k < n_progs; k++) {
                                        ProgStat *a = &acc[m][p][k];

                                        memcpy(a->name, after[k].name, sizeof(a->name));
                                        a->run_ns += after[k].run_ns - before[k].run_ns;
                                        a->run_cnt += after[k].run_cnt - before[k].run_cnt;
                                }
                        }
                }

        uname(&un);
        printf("kernel = %s\n", un.release);
        printf("cpus = %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
        printf("rounds = %lu\n", rounds);
        printf("repeats = %u\n", repeats);
        for (unsigned m = 0; m < n_modes; m++) {
                /* Overheads: per cycle against the mean of its a and a2, then the median. */
                for (Phase p = PHASE_B0; p <= PHASE_C; p++) {
                        for (unsigned i = 0; i < repeats; i++)
                                pct[i] = (t[m][p][i] / ((t[m][PHASE_A][i] + t[m][PHASE_A2][i]) / 2) - 1) * 100;
                        snprintf(name, sizeof(name), "pingpong_%s_overhead_pct_%s", mode_names[m], phase_names[p]);
                        print_runs(name, pct, repeats);
                }
                for (Phase p = 0; p < _PHASE_MAX; p++) {
                        snprintf(name, sizeof(name), "pingpong_%s_ns_%s", mode_names[m], phase_names[p]);
                        print_runs(name, t[m][p], repeats);
                }
                for (Phase p = PHASE_B0; p <= PHASE_C; p++) {
                        printf("pingpong_%s_ns_%s_stats_on = %.1f\n", mode_names[m], phase_names[p],
                               median(ts[m][p], repeats));
                        print_stats(m, p, acc[m][p], n_progs, rounds * repeats);
                }
                fflush(stdout);
        }
        for (unsigned m = 0; m < n_modes; m++)
                for (unsigned p = 0; p < _PHASE_MAX; p++) {
                        free(t[m][p]);
                        free(ts[m][p]);
                }
        free(pct);
        return 0;
}

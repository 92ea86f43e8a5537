/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-cgroup — what the cgroup v2 executor costs a job: freezing and
 * thawing a job of 100 processes (suspend/resume, write of cgroup.freeze to
 * the kernel's confirmation in cgroup.events seen by the event loop), and
 * the time from agent_exec_start() to the job's first instruction.
 *
 * Usage: exec-cgroup [--repeat K]      (as root, with a writable cgroup v2)
 *
 * Works in a subtree of its own, <cgroup2 mount>/glean-bench-<pid>, removed
 * at the end; jobs run as nobody. Figures, one "name = value" line each
 * (µs; medians of K runs, default 50, and the largest):
 *
 *   freeze_us_100_idle, thaw_us_100_idle (+ _max)   a job of 100 sleeping
 *                        processes (a shell and 99 `sleep`): suspend, the
 *                        confirmation; 20 ms later resume, the confirmation
 *   freeze_us_100_busy, thaw_us_100_busy (+ _max)   100 processes spinning
 *                        on the CPU (K/2 runs)
 *   first_instruction_us_cgroup (+ _max)  agent_exec_start() called ->
 *                        the job's first instruction: the job is a 200-byte
 *                        static x86-64 ELF written by this program whose
 *                        entry point's first system call is
 *                        clock_gettime(CLOCK_MONOTONIC), written to its
 *                        stdout (other architectures: this program re-run
 *                        with --stamp, timed at main())
 *   first_instruction_us_fork  the same with the fork executor, for scale
 *   start_call_us_cgroup how long agent_exec_start() itself takes (scratch
 *                        directory, cgroup mkdir, clone3 into it, until the
 *                        exec succeeded)
 *   first_main_us_dynamic_cgroup  to main() of a dynamically linked
 *                        program (this one, with --stamp)
 *
 * Exits 77 when not root or without a writable cgroup v2, 1 when its
 * set-up is not what it says (e.g. not 100 processes in the cgroup).
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "agent/exec.h"

#define TIMEOUT_S 20.0

static unsigned repeat = 50;
static char mount_path[64], base_rel[64], base_abs[192];
static char tmpdir[64], execute_dir[128], work[128];
static sd_event *event;
static CgRoot *root;

static _Noreturn void die(const char *what, const char *detail) {
        fprintf(stderr, "exec-cgroup: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        exit(1);
}

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *) a, y = *(const double *) b;

        return x < y ? -1 : x > y;
}

static double median(double *v, size_t n) {
        qsort(v, n, sizeof(*v), cmp_double);
        return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double maximum(const double *v, size_t n) {
        double m = 0;

        for (size_t i = 0; i < n; i++)
                if (v[i] > m)
                        m = v[i];
        return m;
}

static void figure(const char *name, double *v, size_t n, bool with_max) {
        double max = maximum(v, n);

        printf("%s = %.0f\n", name, median(v, n));
        if (with_max)
                printf("%s_max = %.0f\n", name, max);
        fflush(stdout);
}

static void spin(double seconds) {
        double end = now_s() + seconds;

        while (now_s() < end)
                (void) sd_event_run(event, 5 * 1000);
}

/* ---- the subtree ---- */

static void write_file(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);

        if (fd < 0)
                return;
        (void) !write(fd, value, strlen(value));
        close(fd);
}

static void rmdir_tree(const char *path, int depth) {
        DIR *d = depth < 16 ? opendir(path) : NULL;
        struct dirent *de;

        while (d && (de = readdir(d))) {
                char sub[512];

                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                snprintf(sub, sizeof(sub), "%s/%s", path, de->d_name);
                rmdir_tree(sub, depth + 1);
        }
        if (d)
                closedir(d);
        (void) rmdir(path);
}

static void teardown(void) {
        char path[256];

        if (!base_abs[0])
                return;
        snprintf(path, sizeof(path), "%s/cgroup.kill", base_abs);
        write_file(path, "1");
        usleep(100 * 1000);
        rmdir_tree(base_abs, 0);
        if (tmpdir[0])
                (void) agent_remove_tree(tmpdir);
}

static int setup(void) {
        struct statfs fs;
        char why[256] = "";

        if (geteuid() != 0) {
                fprintf(stderr, "exec-cgroup: needs root (cgroups, jobs as nobody)\n");
                return 77;
        }
        if (statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                snprintf(mount_path, sizeof(mount_path), "/sys/fs/cgroup");
        else if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                snprintf(mount_path, sizeof(mount_path), "/sys/fs/cgroup/unified");
        else {
                fprintf(stderr, "exec-cgroup: no cgroup2 mount\n");
                return 77;
        }
        snprintf(base_rel, sizeof(base_rel), "glean-bench-%d", (int) getpid());
        snprintf(base_abs, sizeof(base_abs), "%s/%s", mount_path, base_rel);
        if (cg_root_open(mount_path, base_rel, false, &root, why, sizeof(why)) < 0) {
                fprintf(stderr, "exec-cgroup: cgroup v2 not usable: %s\n", why);
                rmdir_tree(base_abs, 0);
                base_abs[0] = '\0';
                return 77;
        }
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-bench-exec-XXXXXX");
        if (!mkdtemp(tmpdir) || chmod(tmpdir, 0755) < 0)
                die("mkdtemp", strerror(errno));
        snprintf(execute_dir, sizeof(execute_dir), "%s/execute", tmpdir);
        snprintf(work, sizeof(work), "%s/work", tmpdir);
        if (mkdir(execute_dir, 0755) < 0 || mkdir(work, 0777) < 0 || chmod(work, 0777) < 0)
                die("mkdir", strerror(errno));
        if (sd_event_new(&event) < 0)
                die("sd_event_new", NULL);
        return 0;
}

/* ---- jobs ---- */

typedef struct Run {
        bool done;
        AgentJobExit ex;
} Run;

static void on_exit_cb(AgentJob *job, const AgentJobExit *ex, void *userdata) {
        Run *run = userdata;

        (void) job;
        run->done = true;
        run->ex = *ex;
}

static AgentJobSpec *spec_of(const char *cmd, const char *args, const char *out, const char *cgroup) {
        AgentJobSpec *spec = NULL;
        ClassAd *ad = NULL;
        char why[256] = "";

        if (classad_new(&ad) < 0 || classad_set_string(ad, "Cmd", cmd) < 0 ||
            classad_set_string(ad, "Arguments", args) < 0 || classad_set_string(ad, "Owner", "nobody") < 0 ||
            classad_set_string(ad, "Iwd", work) < 0 || (out && classad_set_string(ad, "Out", out) < 0))
                die("classad", NULL);
        if (agent_jobspec_from_ad(ad, NULL, execute_dir, "slot1", &spec, why, sizeof(why)) < 0)
                die("jobspec", why);
        classad_free(ad);
        if (cgroup && !(spec->cgroup = strdup(cgroup)))
                die("strdup", NULL);
        return spec;
}

static void wait_done(Run *run) {
        double end = now_s() + TIMEOUT_S;

        while (!run->done && now_s() < end)
                (void) sd_event_run(event, 50 * 1000);
        if (!run->done)
                die("a job did not end", NULL);
}

/* ---- freeze/thaw ---- */

static size_t count_lines(const char *path) {
        char buf[8192];
        size_t n = 0;
        ssize_t k;
        int fd = open(path, O_RDONLY | O_CLOEXEC);

        if (fd < 0)
                return 0;
        while ((k = read(fd, buf, sizeof(buf))) > 0)
                for (ssize_t i = 0; i < k; i++)
                        n += buf[i] == '\n';
        close(fd);
        return n;
}

static int wait_confirmed(AgentJob *job) {
        double end = now_s() + TIMEOUT_S;
        int r;

        while ((r = agent_job_freeze_latency_us(job)) == -EINPROGRESS && now_s() < end)
                (void) sd_event_run(event, 50 * 1000);
        return r;
}

static void bench_freeze(AgentExecutor *ex, bool busy, unsigned k) {
        const char *args = busy ? "-c 'for i in $(seq 99); do (while :; do :; done) & done; wait'"
                                : "-c 'for i in $(seq 99); do sleep 1000 & done; wait'";
        double *fr = calloc(k, sizeof(double)), *th = calloc(k, sizeof(double));
        char procs[512], name[64];
        AgentJob *job = NULL;
        Run run = {};
        AgentJobSpec *spec;
        double end;

        if (!fr || !th)
                die("calloc", NULL);
        spec = spec_of("/bin/sh", args, NULL, "bench/job");
        if (agent_exec_start(ex, spec, on_exit_cb, &run, &job) < 0)
                die("start", agent_executor_last_error(ex));
        agent_jobspec_free(spec);
        snprintf(procs, sizeof(procs), "%s/slots/bench/job/cgroup.procs", base_abs);
        end = now_s() + TIMEOUT_S;
        while (count_lines(procs) < 100 && now_s() < end)
                spin(0.02);
        if (count_lines(procs) != 100)
                die("the job does not have 100 processes", NULL);
        spin(0.1);

        for (unsigned i = 0; i < k; i++) {
                int r;

                if (agent_job_suspend(job) < 0)
                        die("suspend", NULL);
                r = wait_confirmed(job);
                if (r < 0)
                        die("freeze not confirmed", strerror(-r));
                fr[i] = r;
                spin(0.02); /* the kernel rate-limits cgroup.events notifications to one per 10 ms */
                if (agent_job_resume(job) < 0)
                        die("resume", NULL);
                r = wait_confirmed(job);
                if (r < 0)
                        die("thaw not confirmed", strerror(-r));
                th[i] = r;
                spin(0.02);
        }
        agent_job_kill(job);
        wait_done(&run);
        agent_job_free(job);

        snprintf(name, sizeof(name), "freeze_us_100_%s", busy ? "busy" : "idle");
        figure(name, fr, k, true);
        snprintf(name, sizeof(name), "thaw_us_100_%s", busy ? "busy" : "idle");
        figure(name, th, k, true);
        free(fr);
        free(th);
}

/* ---- start to first instruction ---- */

/* A static x86-64 ELF: clock_gettime(CLOCK_MONOTONIC, sp); write(1, sp, 16); exit(0). */
static int write_stamp_elf(const char *path) {
#if defined(__x86_64__)
        static const unsigned char code[] = {
                0x48, 0x83, 0xec, 0x10,       /* sub $16, %rsp */
                0xbf, 0x01, 0x00, 0x00, 0x00, /* mov $1 (CLOCK_MONOTONIC), %edi */
                0x48, 0x89, 0xe6,             /* mov %rsp, %rsi */
                0xb8, 0xe4, 0x00, 0x00, 0x00, /* mov $228 (clock_gettime), %eax */
                0x0f, 0x05,                   /* syscall */
                0xbf, 0x01, 0x00, 0x00, 0x00, /* mov $1, %edi */
                0x48, 0x89, 0xe6,             /* mov %rsp, %rsi */
                0xba, 0x10, 0x00, 0x00, 0x00, /* mov $16, %edx */
                0xb8, 0x01, 0x00, 0x00, 0x00, /* mov $1 (write), %eax */
                0x0f, 0x05,                   /* syscall */
                0x31, 0xff,                   /* xor %edi, %edi */
                0xb8, 0x3c, 0x00, 0x00, 0x00, /* mov $60 (exit), %eax */
                0x0f, 0x05,                   /* syscall */
        };
        const Elf64_Addr vaddr = 0x400000;
        const size_t hdrs = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr);
        unsigned char image[sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr) + sizeof(code)];
        Elf64_Ehdr eh = {
                .e_ident = { ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT, ELFOSABI_SYSV },
                .e_type = ET_EXEC,
                .e_machine = EM_X86_64,
                .e_version = EV_CURRENT,
                .e_entry = vaddr + hdrs,
                .e_phoff = sizeof(Elf64_Ehdr),
                .e_ehsize = sizeof(Elf64_Ehdr),
                .e_phentsize = sizeof(Elf64_Phdr),
                .e_phnum = 1,
        };
        Elf64_Phdr ph = {
                .p_type = PT_LOAD,
                .p_flags = PF_R | PF_X,
                .p_offset = 0,
                .p_vaddr = vaddr,
                .p_paddr = vaddr,
                .p_filesz = sizeof(image),
                .p_memsz = sizeof(image),
                .p_align = 0x1000,
        };
        int fd;
        bool ok;

        memcpy(image, &eh, sizeof(eh));
        memcpy(image + sizeof(eh), &ph, sizeof(ph));
        memcpy(image + hdrs, code, sizeof(code));
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        if (fd < 0)
                return -errno;
        ok = write(fd, image, sizeof(image)) == (ssize_t) sizeof(image);
        close(fd);
        return ok && chmod(path, 0755) == 0 ? 0 : -EIO;
#else
        (void) path;
        return -EOPNOTSUPP;
#endif
}

/* --stamp: what the job does when it is this program. */
static int stamp_main(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return write(1, &ts, sizeof(ts)) == (ssize_t) sizeof(ts) ? 0 : 1;
}

static double ts_s(const struct timespec *ts) {
        return (double) ts->tv_sec + (double) ts->tv_nsec / 1e9;
}

/* Runs cmd k times, each to its end; first[i]: start called -> stamp, call[i]: the call itself (µs). */
static void bench_first(AgentExecutor *ex, const char *cmd, const char *args, const char *cgroup, unsigned k,
                        double *first, double *call) {
        char out[256];

        snprintf(out, sizeof(out), "%s/stamp.bin", work);
        for (unsigned i = 0; i < k; i++) {
                AgentJobSpec *spec = spec_of(cmd, args, out, cgroup);
                struct timespec t0, t1, stamp = {};
                AgentJob *job = NULL;
                Run run = {};
                int fd;

                (void) unlink(out);
                clock_gettime(CLOCK_MONOTONIC, &t0);
                if (agent_exec_start(ex, spec, on_exit_cb, &run, &job) < 0)
                        die("start", agent_executor_last_error(ex));
                clock_gettime(CLOCK_MONOTONIC, &t1);
                agent_jobspec_free(spec);
                wait_done(&run);
                agent_job_free(job);
                if (run.ex.by_signal || run.ex.exit_code != 0)
                        die("the stamping job failed", NULL);
                fd = open(out, O_RDONLY | O_CLOEXEC);
                if (fd < 0 || read(fd, &stamp, sizeof(stamp)) != (ssize_t) sizeof(stamp))
                        die("the job wrote no time stamp", out);
                close(fd);
                first[i] = (ts_s(&stamp) - ts_s(&t0)) * 1e6;
                call[i] = (ts_s(&t1) - ts_s(&t0)) * 1e6;
        }
}

int main(int argc, char **argv) {
        AgentExecutor *cx = NULL, *fx = NULL;
        char elf[256], self[512];
        double *a, *b;
        ssize_t n;
        int r;

        if (argc == 2 && strcmp(argv[1], "--stamp") == 0)
                return stamp_main();
        if (argc == 3 && strcmp(argv[1], "--repeat") == 0 && atoi(argv[2]) > 0)
                repeat = (unsigned) atoi(argv[2]);
        else if (argc != 1) {
                fprintf(stderr, "usage: exec-cgroup [--repeat K]\n");
                return 2;
        }
        (void) prctl(PR_SET_CHILD_SUBREAPER, 1); /* the jobs' orphans come back to us */
        r = setup();
        if (r != 0)
                return r;
        atexit(teardown);
        if (agent_executor_cgroup_new(event, root, &cx) < 0 || agent_executor_fork_new(event, &fx) < 0)
                die("executor", NULL);
        a = calloc(repeat, sizeof(double));
        b = calloc(repeat, sizeof(double));
        if (!a || !b)
                die("calloc", NULL);

        bench_freeze(cx, false, repeat);
        bench_freeze(cx, true, repeat / 2 ? repeat / 2 : 1);

        snprintf(elf, sizeof(elf), "%s/stamp", tmpdir);
        if (write_stamp_elf(elf) == 0) {
                bench_first(cx, elf, "", "bench/job", repeat, a, b);
                figure("first_instruction_us_cgroup", a, repeat, true);
                figure("start_call_us_cgroup", b, repeat, false);
                bench_first(fx, elf, "", NULL, repeat, a, b);
                figure("first_instruction_us_fork", a, repeat, false);
        } else
                fprintf(stderr, "exec-cgroup: no hand-made ELF on this architecture, --stamp only\n");

        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n > 0) {
                self[n] = '\0';
                bench_first(cx, self, "--stamp", "bench/job", repeat, a, b);
                figure("first_main_us_dynamic_cgroup", a, repeat, false);
        }

        agent_executor_free(cx);
        agent_executor_free(fx);
        cg_root_free(root);
        root = NULL;
        sd_event_unref(event);
        free(a);
        free(b);
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        return 0;
}

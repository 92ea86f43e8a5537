/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-test.h — what the cgroup suites share: a test subtree of our own
 * (<cgroup2 mount>/glean-test-<pid>-<random>), a guard process that tears
 * it down if the suite dies, children born inside a cgroup, and waiting.
 *
 * The subtree is the only thing the suites touch: they never write in a
 * cgroup v1 hierarchy, nor in a cgroup they did not create, and they kill
 * only processes of their own subtree (through its cgroup.kill).
 */
#pragma once

/* Needs _GNU_SOURCE, defined before the first #include. */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "test-util.h"

typedef struct CgTestEnv {
        char mount[64];      /* the cgroup2 mount */
        char base[64];       /* glean-test-<pid>-<random>, relative to mount */
        char abs[192];       /* mount/base */
        pid_t guard;
} CgTestEnv;

/* Opens path under root; a fatal assertion when that fails. */
static inline Cg *cgtest_open(CgRoot *root, const char *path) {
        char why[256] = "";
        Cg *cg = NULL;
        int r;

        r = cg_open(root, path, &cg, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0 && cg, "cg_open('%s') = %d: %s", path, r, why);
        return cg;
}

static inline int64_t cgtest_now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline void cgtest_sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static inline int cgtest_write(const char *path, const char *value) {
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = write(fd, value, strlen(value));
        n = n < 0 ? -errno : 0;
        close(fd);
        return (int) n;
}

static inline int cgtest_read(const char *path, char *buf, size_t size) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        return 0;
}

/* rmdir of every cgroup under path, deepest first, then of path. */
static inline void cgtest_rmdir_tree(const char *path, int depth) {
        DIR *d = depth < 32 ? opendir(path) : NULL;
        struct dirent *de;

        while (d && (de = readdir(d))) {
                char sub[PATH_MAX];

                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                if (strlen(path) + 1 + strlen(de->d_name) >= sizeof(sub))
                        continue;
                memcpy(sub, path, strlen(path));
                sub[strlen(path)] = '/';
                strcpy(sub + strlen(path) + 1, de->d_name);
                cgtest_rmdir_tree(sub, depth + 1);
        }
        if (d)
                closedir(d);
        (void) rmdir(path);
}

/* Kills what is left in the subtree at abs (cgroup.kill: every process of
 * it and below, nothing else), waits for it to empty, removes it. */
static inline void cgtest_destroy(const char *abs) {
        char path[PATH_MAX], buf[256];

        snprintf(path, sizeof(path), "%s/cgroup.freeze", abs);
        (void) cgtest_write(path, "0");
        snprintf(path, sizeof(path), "%s/cgroup.kill", abs);
        if (cgtest_write(path, "1") == -ENOENT)
                return; /* gone already (or no cgroup.kill: left alone) */
        snprintf(path, sizeof(path), "%s/cgroup.events", abs);
        for (int i = 0; i < 500; i++) {
                if (cgtest_read(path, buf, sizeof(buf)) < 0 || strstr(buf, "populated 0"))
                        break;
                cgtest_sleep_ms(10);
        }
        cgtest_rmdir_tree(abs, 0);
}

/* A process that waits for the suite to end and then destroys the subtree
 * (it is gone already when the suite ended well). Not in the subtree. */
static inline pid_t cgtest_guard(const char *abs) {
        pid_t parent = getpid();
        pid_t pid = fork();

        if (pid != 0)
                return pid;
        int fd = pidfd_open(parent, 0);
        struct pollfd p = { .fd = fd, .events = POLLIN };
        int devnull = open("/dev/null", O_RDWR);

        if (devnull >= 0) {
                dup2(devnull, 0);
                dup2(devnull, 1);
        }
        if (fd >= 0 && getppid() == parent)
                while (poll(&p, 1, -1) < 0 && errno == EINTR)
                        ;
        else
                while (getppid() == parent)
                        cgtest_sleep_ms(100);
        cgtest_destroy(abs);
        _exit(0);
}

/* The exit status for an environment that lacks what a suite needs: 77
 * (skipped), except in the VM rig (GLEAN_VM=1), which is there to have
 * it: a failure then. */
static inline int cgtest_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int cgtest_skip(const char *fmt, ...) {
        const char *vm = getenv("GLEAN_VM");
        char why[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (vm && strcmp(vm, "1") == 0) {
                printf("FAILED: %s (GLEAN_VM=1: the VM rig must have it)\n", why);
                fflush(stdout);
                return 1;
        }
        return glean_test_skip("%s", why);
}

/* 0 and *env ready, or the exit status of a skip (77) or a failure. */
static inline int cgtest_setup(CgTestEnv *env) {
        struct statfs fs;
        char path[PATH_MAX];
        unsigned rnd = 0;
        int fd;

        memset(env, 0, sizeof(*env));
        if (geteuid() != 0)
                return cgtest_skip("not root: creating cgroups needs root");
        if (statfs("/sys/fs/cgroup", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                snprintf(env->mount, sizeof(env->mount), "/sys/fs/cgroup");
        else if (statfs("/sys/fs/cgroup/unified", &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC)
                snprintf(env->mount, sizeof(env->mount), "/sys/fs/cgroup/unified");
        else
                return cgtest_skip("no cgroup2 mount at /sys/fs/cgroup or /sys/fs/cgroup/unified");

        fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
        if (fd < 0 || read(fd, &rnd, sizeof(rnd)) != (ssize_t) sizeof(rnd))
                rnd = (unsigned) cgtest_now_us();
        if (fd >= 0)
                close(fd);
        snprintf(env->base, sizeof(env->base), "glean-test-%d-%08x", (int) getpid(), rnd);
        snprintf(env->abs, sizeof(env->abs), "%s/%s", env->mount, env->base);
        if (mkdir(env->abs, 0755) < 0) {
                if (errno == EACCES || errno == EPERM || errno == EROFS)
                        return cgtest_skip("cgroup v2 at %s is not writable: %s", env->mount, strerror(errno));
                fprintf(stderr, "cannot create %s: %s\n", env->abs, strerror(errno));
                return 1;
        }
        snprintf(path, sizeof(path), "%s/cgroup.freeze", env->abs);
        if (access(path, F_OK) < 0 || (snprintf(path, sizeof(path), "%s/cgroup.kill", env->abs), access(path, F_OK) < 0)) {
                (void) rmdir(env->abs);
                return cgtest_skip("the kernel's cgroup v2 lacks cgroup.freeze or cgroup.kill (before 5.14)");
        }
        env->guard = cgtest_guard(env->abs);
        if (env->guard < 0) {
                (void) rmdir(env->abs);
                fprintf(stderr, "fork: %s\n", strerror(errno));
                return 1;
        }
        printf("cgroup test subtree: %s\n", env->abs);
        return 0;
}

static inline void cgtest_teardown(CgTestEnv *env) {
        struct stat st;

        cgtest_destroy(env->abs);
        if (stat(env->abs, &st) == 0)
                fprintf(stderr, "warning: could not remove %s\n", env->abs);
        /* Nothing left for the guard to do. */
        if (env->guard > 0) {
                (void) kill(env->guard, SIGKILL);
                (void) waitpid(env->guard, NULL, 0);
                env->guard = -1;
        }
}

/* In the VM rig (GLEAN_VM=1)? */
static inline bool cgtest_in_vm(void) {
        const char *vm = getenv("GLEAN_VM");
        return vm && strcmp(vm, "1") == 0;
}

/* main() of a suite that needs the test subtree, and the kernel's BTF for
 * its BPF programs when need_btf: skips (77) without them. */
static inline int cgtest_main(int argc, char **argv, CU_SuiteInfo *suites, CgTestEnv *env, bool need_btf) {
        if (need_btf && access("/sys/kernel/btf/vmlinux", R_OK) < 0)
                return cgtest_skip("no kernel BTF (/sys/kernel/btf/vmlinux): the probes need it");
        int status = cgtest_setup(env);
        if (status != 0)
                return status;
        status = glean_test_main(argc, argv, suites);
        cgtest_teardown(env);
        return status;
}

/* A child born in the cgroup of cgfd (clone3 CLONE_INTO_CGROUP): returns
 * its pid in the parent, 0 in the child, like fork(). */
static inline pid_t cgtest_clone_into(int cgfd) {
        struct clone_args args = {
                .flags = CLONE_INTO_CGROUP,
                .exit_signal = SIGCHLD,
                .cgroup = (uint64_t) cgfd,
        };

        return (pid_t) syscall(SYS_clone3, &args, sizeof(args));
}

/* The "0::" path of pid in /proc/PID/cgroup, into buf. */
static inline int cgtest_proc_cgroup(pid_t pid, char *buf, size_t size) {
        char path[64], text[4096], *p;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int) pid);
        r = cgtest_read(path, text, sizeof(text));
        if (r < 0)
                return r;
        p = strstr(text, "0::");
        if (!p)
                return -ENOENT;
        p += 3;
        snprintf(buf, size, "%.*s", (int) strcspn(p, "\n"), p);
        return 0;
}

/* Kills (SIGKILL) and reaps children we started; pids <= 0 are skipped. */
static inline void cgtest_reap(pid_t *pids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (pids[i] > 0) {
                        (void) kill(pids[i], SIGKILL);
                        (void) waitpid(pids[i], NULL, 0);
                        pids[i] = -1;
                }
}

/* The child's bodies. */
static inline __attribute__((noreturn)) void cgtest_child_sleep(long ms) {
        for (;;)
                cgtest_sleep_ms(ms);
}

/* Burns CPU until this thread has used ms of it, then exits 0. */
static inline __attribute__((noreturn)) void cgtest_child_burn(long ms) {
        struct timespec ts;
        volatile uint64_t x = 0;

        for (;;) {
                for (int i = 0; i < 100000; i++)
                        x += (uint64_t) i;
                clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
                if ((int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000 >= ms)
                        _exit(0);
        }
}

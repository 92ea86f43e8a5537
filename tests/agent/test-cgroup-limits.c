/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cgroup-limits.c — the limits of the cgroup v2 driver, enforced by
 * the kernel: memory.max with an OOM kill counted in memory.events (and
 * seen through cg_watch), memory.peak, cpu.max throttling (counted in
 * cpu.stat), cpuset pinning (the affinity of a process in the cgroup),
 * pids.max refusing forks (pids.events), io.weight, and every file read
 * back as written.
 *
 * These need the controllers in cgroup v2: they run where
 * cg_root_controllers() has all of cpu, cpuset, io, memory and pids (the
 * VM rig of tests/vm/), and exit 77 elsewhere ("SKIPPED: no memory
 * controller in cgroup v2 here" on a hybrid host), never passing without
 * having checked; in the VM rig (GLEAN_VM=1) a missing controller is a
 * failure. Same test subtree and guard as test-cgroup.c.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-test.h"

#define MiB (1024 * 1024)

static CgTestEnv env;
static CgRoot *root;

static Cg *open_cg(const char *path) {
        return cgtest_open(root, path);
}

static void set_limits(Cg *cg, const CgLimits *l, unsigned want) {
        char why[256] = "";
        unsigned applied = 0;
        int r;

        r = cg_set_limits(cg, l, &applied, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "cg_set_limits on %s: %d %s", cg_path(cg), r, why);
        GLEAN_TEST_CHECK((applied & want) == want, "applied %#x, want %#x (%s)", applied, want, why);
}

/* The contents of a control file of cg, first line. */
static const char *file_of(Cg *cg, const char *file, char *buf, size_t size) {
        char path[PATH_MAX];

        snprintf(path, sizeof(path), "%s/%s", cg_path(cg), file);
        if (cgtest_read(path, buf, size) < 0)
                snprintf(buf, size, "(cannot read %s)", file);
        buf[strcspn(buf, "\n")] = '\0';
        return buf;
}

static uint64_t keyed(Cg *cg, const char *file, const char *key) {
        char path[PATH_MAX], text[1024], *p;

        snprintf(path, sizeof(path), "%s/%s", cg_path(cg), file);
        if (cgtest_read(path, text, sizeof(text)) < 0)
                return 0;
        for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, key, strlen(key)) == 0 && p[strlen(key)] == ' ')
                        return strtoull(p + strlen(key) + 1, NULL, 10);
        return 0;
}

static int run_child(pid_t pid, int timeout_ms) {
        int status = -1;

        for (int waited = 0; waited < timeout_ms; waited += 10) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid)
                        return status;
                cgtest_sleep_ms(10);
        }
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        return -1;
}

/* Touches size bytes of fresh memory, page by page; exits 0 if it could. */
static __attribute__((noreturn)) void child_hog(size_t size) {
        char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED)
                _exit(2);
        for (size_t i = 0; i < size; i += 4096)
                ((volatile char *) p)[i] = 1;
        _exit(0);
}

typedef struct MemWatch {
        unsigned calls;
        uint64_t oom_kill;
} MemWatch;

static void on_memory(Cg *cg, void *userdata) {
        MemWatch *w = userdata;

        w->calls++;
        (void) cg_memory_events(cg, NULL, &w->oom_kill);
}

/* ---- tests ---- */

static void test_controllers(void) {
        char names[64];

        cg_controllers_string(cg_root_controllers(root), names, sizeof(names));
        printf("\n    controllers: '%s'\n", names);
        GLEAN_TEST_CHECK(strcmp(names, "cpu cpuset io memory pids") == 0, "controllers '%s'", names);
}

static void test_memory_oom(void) {
        Cg *job = open_cg("slot1/job"), *small = open_cg("slot2/job");
        CgLimits l = { .memory_max = 64 * MiB, .memory_swap_max = CG_ZERO, .memory_high = CG_MAX };
        MemWatch w = {};
        sd_event *ev = NULL;
        uint64_t oom = 0, oom_kill = 0;
        CgUsage u;
        char buf[64];
        int status;
        pid_t pid;

        set_limits(job, &l, CG_MEMORY);
        set_limits(small, &l, CG_MEMORY);
        GLEAN_TEST_CHECK(strcmp(file_of(job, "memory.max", buf, sizeof(buf)), "67108864") == 0, "memory.max '%s'", buf);
        GLEAN_TEST_CHECK(strcmp(file_of(job, "memory.high", buf, sizeof(buf)), "max") == 0, "memory.high '%s'", buf);

        GLEAN_TEST_CHECK_FATAL(sd_event_new(&ev) >= 0, "sd_event_new");
        GLEAN_TEST_CHECK_FATAL(cg_watch(job, ev, on_memory, &w) == 0, "cg_watch");

        /* 200 MB under a 64 MB limit: killed. */
        pid = cgtest_clone_into(cg_dirfd(job));
        if (pid == 0)
                child_hog(200 * MiB);
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3");
        status = run_child(pid, 60000);
        GLEAN_TEST_CHECK(status != -1 && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                         "the 200 MB hog: status %#x, want SIGKILL", status);
        GLEAN_TEST_CHECK(cg_memory_events(job, &oom, &oom_kill) == 1, "cg_memory_events");
        printf("\n    oom %llu oom_kill %llu\n", (unsigned long long) oom, (unsigned long long) oom_kill);
        GLEAN_TEST_CHECK(oom >= 1 && oom_kill >= 1, "oom %llu oom_kill %llu", (unsigned long long) oom,
                         (unsigned long long) oom_kill);
        for (int i = 0; i < 100 && w.oom_kill == 0; i++)
                (void) sd_event_run(ev, 50000);
        GLEAN_TEST_CHECK(w.calls > 0 && w.oom_kill >= 1, "cg_watch: %u calls, oom_kill %llu", w.calls,
                         (unsigned long long) w.oom_kill);
        GLEAN_TEST_CHECK(cg_usage(job, &u) == 0, "cg_usage");
        printf("    memory_peak %lld memory_current %lld\n", (long long) u.memory_peak, (long long) u.memory_current);
        GLEAN_TEST_CHECK(u.memory_peak >= 32 * MiB && u.memory_peak <= 65 * MiB, "memory_peak %lld",
                         (long long) u.memory_peak);
        GLEAN_TEST_CHECK(u.memory_current >= 0 && u.memory_current <= 64 * MiB, "memory_current %lld",
                         (long long) u.memory_current);
        cg_unwatch(job);
        sd_event_unref(ev);

        /* 32 MB under the same limit: lives. */
        pid = cgtest_clone_into(cg_dirfd(small));
        if (pid == 0)
                child_hog(32 * MiB);
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3");
        status = run_child(pid, 60000);
        GLEAN_TEST_CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0, "the 32 MB hog: status %#x",
                         status);
        GLEAN_TEST_CHECK(cg_memory_events(small, &oom, &oom_kill) == 1 && oom_kill == 0, "oom_kill %llu",
                         (unsigned long long) oom_kill);
        cg_free(small);
        cg_free(job);
}

static void test_cpu_max(void) {
        Cg *job = open_cg("slot3/job");
        CgLimits l = { .cpu_max_quota = 20000, .cpu_max_period = 100000 };
        int64_t t0, wall;
        CgUsage u;
        char buf[64];
        int status;
        pid_t pid;

        set_limits(job, &l, CG_CPU);
        GLEAN_TEST_CHECK(strcmp(file_of(job, "cpu.max", buf, sizeof(buf)), "20000 100000") == 0, "cpu.max '%s'", buf);
        t0 = cgtest_now_us();
        pid = cgtest_clone_into(cg_dirfd(job));
        if (pid == 0)
                cgtest_child_burn(200);
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3");
        status = run_child(pid, 120000);
        wall = cgtest_now_us() - t0;
        GLEAN_TEST_CHECK(status != -1 && WIFEXITED(status), "the burner: status %#x", status);
        GLEAN_TEST_CHECK_FATAL(cg_usage(job, &u) == 0, "cg_usage");
        printf("\n    usage_usec %llu in %lld us of wall time (%.2f), nr_periods %llu nr_throttled %llu "
               "throttled_usec %llu\n",
               (unsigned long long) u.usage_usec, (long long) wall, (double) u.usage_usec / (double) wall,
               (unsigned long long) u.nr_periods, (unsigned long long) u.nr_throttled,
               (unsigned long long) u.throttled_usec);
        GLEAN_TEST_CHECK(u.nr_periods > 0, "nr_periods 0");
        GLEAN_TEST_CHECK(u.nr_throttled > 0, "nr_throttled 0 under cpu.max 20000 100000");
        GLEAN_TEST_CHECK(u.throttled_usec > 0, "throttled_usec 0");
        cg_free(job);
}

static void test_cpuset(void) {
        Cg *job = open_cg("slot4/job");
        CgLimits l = { .cpuset_cpus = "0" };
        cpu_set_t set;
        char buf[64];
        pid_t kid[1];

        set_limits(job, &l, CG_CPUSET);
        GLEAN_TEST_CHECK(strcmp(file_of(job, "cpuset.cpus.effective", buf, sizeof(buf)), "0") == 0,
                         "cpuset.cpus.effective '%s'", buf);
        kid[0] = cgtest_clone_into(cg_dirfd(job));
        if (kid[0] == 0)
                cgtest_child_sleep(1000);
        GLEAN_TEST_CHECK_FATAL(kid[0] > 0, "clone3");
        CPU_ZERO(&set);
        GLEAN_TEST_CHECK(sched_getaffinity(kid[0], sizeof(set), &set) == 0, "sched_getaffinity");
        GLEAN_TEST_CHECK(CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set), "affinity of a process in cpuset 0: %d CPUs",
                         CPU_COUNT(&set));
        cgtest_reap(kid, 1);
        cg_free(job);
}

static void test_pids_max(void) {
        Cg *job = open_cg("slot5/job");
        CgLimits l = { .pids_max = 5 };
        char buf[64];
        int status;
        pid_t pid;

        set_limits(job, &l, CG_PIDS);
        GLEAN_TEST_CHECK(strcmp(file_of(job, "pids.max", buf, sizeof(buf)), "5") == 0, "pids.max '%s'", buf);
        pid = cgtest_clone_into(cg_dirfd(job));
        if (pid == 0) {
                /* Forks until refused; exits with how many it got. */
                pid_t kids[20];
                int n = 0;

                for (int i = 0; i < 20; i++) {
                        pid_t k = fork();

                        if (k == 0)
                                cgtest_child_sleep(1000);
                        if (k > 0)
                                kids[n++] = k;
                }
                for (int i = 0; i < n; i++) {
                        kill(kids[i], SIGKILL);
                        waitpid(kids[i], NULL, 0);
                }
                _exit(n);
        }
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3");
        status = run_child(pid, 30000);
        GLEAN_TEST_CHECK(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 4,
                         "forks under pids.max 5: status %#x (exit = forks that worked, want 4)", status);
        GLEAN_TEST_CHECK(keyed(job, "pids.events", "max") >= 1, "pids.events max %llu",
                         (unsigned long long) keyed(job, "pids.events", "max"));
        cg_free(job);
}

static void test_io_weight(void) {
        Cg *job = open_cg("slot6/job");
        CgLimits l = { .io_weight = 200 };
        char buf[64];

        set_limits(job, &l, CG_IO);
        GLEAN_TEST_CHECK(strcmp(file_of(job, "io.weight", buf, sizeof(buf)), "default 200") == 0, "io.weight '%s'",
                         buf);
        cg_free(job);
}

/* Every field written, read back, then lifted with CG_MAX. */
static void test_readback(void) {
        Cg *job = open_cg("slot7/job");
        CgLimits l = {
                .cpu_weight = 300,
                .cpu_max_quota = 50000,
                .cpu_max_period = 200000,
                .cpuset_cpus = "0",
                .memory_max = 128 * MiB,
                .memory_high = 96 * MiB,
                .memory_swap_max = CG_ZERO,
                .pids_max = 50,
                .io_weight = 150,
        };
        CgLimits lift = { .cpu_max_quota = CG_MAX, .memory_max = CG_MAX, .memory_high = CG_MAX,
                          .memory_swap_max = CG_MAX, .pids_max = CG_MAX };
        static const struct {
                const char *file, *want;
        } rows[] = {
                { "cpu.weight", "300" },       { "cpu.max", "50000 200000" },   { "cpuset.cpus", "0" },
                { "memory.max", "134217728" }, { "memory.high", "100663296" }, { "memory.swap.max", "0" },
                { "pids.max", "50" },          { "io.weight", "default 150" },
        }, lifted[] = {
                { "cpu.max", "max 100000" }, { "memory.max", "max" },      { "memory.high", "max" },
                { "memory.swap.max", "max" }, { "pids.max", "max" },
        };
        char buf[64];

        set_limits(job, &l, CG_CPU | CG_CPUSET | CG_MEMORY | CG_PIDS | CG_IO);
        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
                GLEAN_TEST_CHECK(strcmp(file_of(job, rows[i].file, buf, sizeof(buf)), rows[i].want) == 0,
                                 "%s '%s', want '%s'", rows[i].file, buf, rows[i].want);
        set_limits(job, &lift, CG_CPU | CG_MEMORY | CG_PIDS);
        for (size_t i = 0; i < sizeof(lifted) / sizeof(lifted[0]); i++)
                GLEAN_TEST_CHECK(strcmp(file_of(job, lifted[i].file, buf, sizeof(buf)), lifted[i].want) == 0,
                                 "%s '%s', want '%s'", lifted[i].file, buf, lifted[i].want);
        cg_free(job);
}

static CU_TestInfo tests[] = {
        { "controllers", test_controllers },
        { "memory_oom", test_memory_oom },
        { "cpu_max", test_cpu_max },
        { "cpuset", test_cpuset },
        { "pids_max", test_pids_max },
        { "io_weight", test_io_weight },
        { "readback", test_readback },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup-limits", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        const unsigned need = CG_CPU | CG_CPUSET | CG_IO | CG_MEMORY | CG_PIDS;
        char why[256] = "", have[64], missing[64];
        unsigned ctl;
        int status, r;

        status = cgtest_setup(&env);
        if (status != 0)
                return status;
        r = cg_root_open(env.mount, env.base, false, &root, why, sizeof(why));
        if (r < 0) {
                fprintf(stderr, "cg_root_open(%s, %s): %s\n", env.mount, env.base, why);
                cgtest_teardown(&env);
                return 1;
        }
        ctl = cg_root_controllers(root);
        if ((ctl & need) != need) {
                cg_controllers_string(ctl, have, sizeof(have));
                cg_controllers_string(need & ~ctl, missing, sizeof(missing));
                cg_root_free(root);
                cgtest_teardown(&env);
                if (!(ctl & CG_MEMORY))
                        return cgtest_skip("no memory controller in cgroup v2 here");
                return cgtest_skip("no %s controller in cgroup v2 here (have '%s')", missing, have);
        }
        status = glean_test_main(argc, argv, suites);
        cg_root_free(root);
        cgtest_teardown(&env);
        return status;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cgroup.c — the cgroup v2 driver on the machine it runs on, in a
 * test subtree of its own (<cgroup2 mount>/glean-test-<pid>-<random>,
 * removed at the end, by a guard process if the suite dies): the root and
 * its controllers, nested cgroups and their ids, processes placed by
 * cgroup.procs and by clone3(CLONE_INTO_CGROUP), freezing seen through
 * cg_watch() and in the processes' progress, signals, kill (and its
 * fallback), removal, usage, limits where controllers are missing, and
 * refused paths. Works on a hybrid host (cgroup v2 with core files only)
 * and on a pure one. Prints freeze/thaw latencies (a figure, not asserted).
 *
 * Skips (77) when not root, without cgroup2, or when it is not writable.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cgroup-test.h"
#include "agent/cgroup/cgroup-internal.h"

static CgTestEnv env;
static CgRoot *root;

/* ---- helpers ---- */

static Cg *open_cg(const char *path) {
        return cgtest_open(root, path);
}

/* Whether a/b is a directory. */
static bool is_dir(const char *fmt, const char *a, const char *b) {
        char path[PATH_MAX];
        struct stat st;

        (void) fmt; /* "%s/%s", for the reader */
        snprintf(path, sizeof(path), "%s/%s", a, b);
        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* What a cg_watch() callback saw, and when it first saw what is wanted. */
typedef struct Watch {
        int want_populated, want_frozen; /* -1: any */
        unsigned calls;
        bool hit;
        int64_t hit_us;
} Watch;

static void on_change(Cg *cg, void *userdata) {
        Watch *w = userdata;
        bool populated, frozen;

        w->calls++;
        if (cg_events(cg, &populated, &frozen) < 0 || w->hit)
                return;
        if ((w->want_populated < 0 || w->want_populated == populated) &&
            (w->want_frozen < 0 || w->want_frozen == frozen)) {
                w->hit = true;
                w->hit_us = cgtest_now_us();
        }
}

static void watch_want(Watch *w, int populated, int frozen) {
        w->want_populated = populated;
        w->want_frozen = frozen;
        w->hit = false;
}

/* Runs ev until the watch saw what it wants or timeout_ms passed. */
static bool watch_until(sd_event *ev, Watch *w, int timeout_ms) {
        int64_t deadline = cgtest_now_us() + (int64_t) timeout_ms * 1000;

        while (!w->hit) {
                int64_t left = deadline - cgtest_now_us();

                if (left <= 0)
                        break;
                if (sd_event_run(ev, (uint64_t) left) < 0)
                        break;
        }
        return w->hit;
}

/* Polls cg_events() until frozen == want or timeout_ms passed. */
static bool poll_frozen(Cg *cg, bool want, int timeout_ms) {
        int64_t deadline = cgtest_now_us() + (int64_t) timeout_ms * 1000;
        bool frozen = !want;

        while (cg_events(cg, NULL, &frozen) == 0 && frozen != want && cgtest_now_us() < deadline)
                ;
        return frozen == want;
}

static bool pids_has(const pid_t *v, size_t n, pid_t pid) {
        for (size_t i = 0; i < n; i++)
                if (v[i] == pid)
                        return true;
        return false;
}

static pid_t spawn_sleeper(Cg *cg, long ms) {
        pid_t pid = cgtest_clone_into(cg_dirfd(cg));

        if (pid == 0)
                cgtest_child_sleep(ms);
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3(CLONE_INTO_CGROUP) into %s: %s", cg_path(cg), strerror(errno));
        return pid;
}

/* The "0::" path a process of the cgroup at rel (under slots/) shows. */
static void want_proc_path(const char *rel, char *buf, size_t size) {
        snprintf(buf, size, "/%s/slots/%s", env.base, rel);
}

/* ---- tests ---- */

static void test_controllers_string(void) {
        static const struct {
                unsigned mask;
                const char *want;
        } rows[] = {
                { 0, "" },
                { CG_CPU, "cpu" },
                { CG_MEMORY | CG_CPU | CG_PIDS, "cpu memory pids" },
                { CG_IO | CG_CPU | CG_MEMORY | CG_PIDS, "cpu io memory pids" },
                { CG_CPU | CG_CPUSET | CG_MEMORY | CG_PIDS | CG_IO, "cpu cpuset io memory pids" },
                { CG_PIDS | 1u << 20, "pids" },
        };
        char buf[64], small[8];

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                cg_controllers_string(rows[i].mask, buf, sizeof(buf));
                GLEAN_TEST_CHECK(strcmp(buf, rows[i].want) == 0, "row %zu: mask %#x gave '%s', want '%s'", i,
                                 rows[i].mask, buf, rows[i].want);
                GLEAN_TEST_CHECK(cg_mask_parse(rows[i].want) == (rows[i].mask & 0x1f), "row %zu: parse back", i);
        }
        /* A short buffer holds whole names only. */
        cg_controllers_string(CG_CPU | CG_MEMORY, small, sizeof(small));
        GLEAN_TEST_CHECK(strcmp(small, "cpu") == 0, "short buffer gave '%s'", small);
}

static void test_root_open(void) {
        char path[PATH_MAX], want[PATH_MAX], text[512], names[64], why[256] = "", base2[128];
        unsigned mask = cg_root_controllers(root), sub;
        CgRoot *r2 = NULL;
        int r;

        GLEAN_TEST_CHECK(strcmp(cg_root_path(root), env.abs) == 0, "cg_root_path '%s', want '%s'",
                         cg_root_path(root), env.abs);
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots"), "%s/slots was not created", env.abs);
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "agent"), "agent/ created without move_self");

        /* The mask is what slots/ passes on, and what the base offers. */
        snprintf(path, sizeof(path), "%s/slots/cgroup.subtree_control", env.abs);
        GLEAN_TEST_CHECK_FATAL(cgtest_read(path, text, sizeof(text)) == 0, "reading %s", path);
        sub = cg_mask_parse(text);
        GLEAN_TEST_CHECK(mask == sub, "cg_root_controllers %#x, slots/cgroup.subtree_control '%s'", mask, text);
        snprintf(path, sizeof(path), "%s/cgroup.controllers", env.abs);
        GLEAN_TEST_CHECK_FATAL(cgtest_read(path, text, sizeof(text)) == 0, "reading %s", path);
        GLEAN_TEST_CHECK(mask == cg_mask_parse(text), "controllers %#x, the base offers '%s'", mask, text);
        cg_controllers_string(mask, names, sizeof(names));
        printf("\n    controllers: '%s' (note: '%s')\n", names, cg_root_note(root));

        /* Re-adoption, with the base written as /proc/self/cgroup has it. */
        snprintf(base2, sizeof(base2), "/%s/", env.base);
        r = cg_root_open(env.mount, base2, false, &r2, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0, "reopening '%s': %d %s", base2, r, why);
        if (r2)
                GLEAN_TEST_CHECK(strcmp(cg_root_path(r2), env.abs) == 0, "reopened at '%s'", cg_root_path(r2));
        cg_root_free(r2);
        r2 = NULL;

        /* The mount found without an override is the one the tests found. */
        r = cg_root_open(NULL, env.base, false, &r2, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0, "no mount override: %d %s", r, why);
        if (r2)
                GLEAN_TEST_CHECK(strcmp(cg_root_path(r2), env.abs) == 0, "detected '%s'", cg_root_path(r2));
        cg_root_free(r2);
        r2 = NULL;
        cg_root_free(NULL);

        /* Not cgroup2 at all. */
        why[0] = '\0';
        r = cg_root_open("/tmp", "x", false, &r2, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ENOENT && !r2 && why[0], "/tmp as the mount: %d '%s'", r, why);

        /* A base that climbs out. */
        snprintf(want, sizeof(want), "%s/../x", env.base);
        r = cg_root_open(env.mount, want, false, &r2, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && !r2, "base '%s': %d", want, r);
        r = cg_root_open(env.mount, "..", false, &r2, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && !r2, "base '..': %d", r);
}

/* cg_root_open(move_self) in a child that we put into <base>/movebase:
 * the base is then its own cgroup, and it moves itself into agent/. */
static void test_root_move_self(void) {
        char path[PATH_MAX], pid_s[32], out[PATH_MAX];
        int go[2], status = -1;
        pid_t pid;

        snprintf(path, sizeof(path), "%s/movebase", env.abs);
        GLEAN_TEST_CHECK_FATAL(mkdir(path, 0755) == 0, "mkdir %s: %s", path, strerror(errno));
        GLEAN_TEST_CHECK_FATAL(pipe2(go, O_CLOEXEC) == 0, "pipe");
        pid = fork();
        GLEAN_TEST_CHECK_FATAL(pid >= 0, "fork");
        if (pid == 0) {
                char c, why[256] = "", want[PATH_MAX], now[PATH_MAX];
                CgRoot *r = NULL;
                int code = 0;

                close(go[1]);
                if (read(go[0], &c, 1) != 1)
                        _exit(10);
                if (cg_root_open(env.mount, NULL, true, &r, why, sizeof(why)) < 0) {
                        fprintf(stderr, "child: cg_root_open: %s\n", why);
                        _exit(11);
                }
                snprintf(want, sizeof(want), "%s/movebase", env.abs);
                if (strcmp(cg_root_path(r), want) != 0)
                        code = 12;
                snprintf(want, sizeof(want), "/%s/movebase/agent", env.base);
                if (cgtest_proc_cgroup(getpid(), now, sizeof(now)) < 0 || strcmp(now, want) != 0)
                        code = 13;
                cg_root_free(r);
                _exit(code);
        }
        close(go[0]);
        snprintf(pid_s, sizeof(pid_s), "%d", (int) pid);
        snprintf(path, sizeof(path), "%s/movebase/cgroup.procs", env.abs);
        GLEAN_TEST_CHECK(cgtest_write(path, pid_s) == 0, "placing the child in movebase");
        GLEAN_TEST_CHECK(cgtest_proc_cgroup(pid, out, sizeof(out)) == 0, "child's cgroup");
        GLEAN_TEST_CHECK(write(go[1], "g", 1) == 1, "go");
        close(go[1]);
        GLEAN_TEST_CHECK(waitpid(pid, &status, 0) == pid, "waitpid");
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                         "child: status %#x (11 open failed, 12 wrong base, 13 not moved into agent/)", status);
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "movebase/agent"), "movebase/agent missing");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "movebase/slots"), "movebase/slots missing");
        snprintf(path, sizeof(path), "%s/movebase", env.abs);
        cgtest_destroy(path);
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "movebase"), "movebase not removed");
}

static void test_open_nested(void) {
        char want[PATH_MAX];
        struct stat st;
        Cg *job = open_cg("slot1/slot1_2/job"), *again, *slot;
        char **names = NULL;

        snprintf(want, sizeof(want), "%s/slots/slot1/slot1_2/job", env.abs);
        GLEAN_TEST_CHECK(strcmp(cg_path(job), want) == 0, "cg_path '%s', want '%s'", cg_path(job), want);
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/slot1"), "slot1 missing");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/slot1/slot1_2"), "slot1_2 missing");
        GLEAN_TEST_CHECK_FATAL(stat(want, &st) == 0, "stat %s", want);
        GLEAN_TEST_CHECK(cg_id(job) == (uint64_t) st.st_ino, "cg_id %llu, st_ino %llu",
                         (unsigned long long) cg_id(job), (unsigned long long) st.st_ino);
        GLEAN_TEST_CHECK(cg_dirfd(job) >= 0, "cg_dirfd");
        GLEAN_TEST_CHECK(cg_controllers(job) == cg_root_controllers(root),
                         "the job has controllers %#x, slots pass on %#x", cg_controllers(job),
                         cg_root_controllers(root));

        /* An existing one is opened as it is. */
        again = open_cg("slot1/slot1_2/job");
        GLEAN_TEST_CHECK(cg_id(again) == cg_id(job), "reopened: id %llu, first %llu",
                         (unsigned long long) cg_id(again), (unsigned long long) cg_id(job));
        cg_free(again);

        slot = open_cg("slot1");
        GLEAN_TEST_CHECK_FATAL(cg_children(slot, &names) == 0, "cg_children");
        GLEAN_TEST_CHECK(names[0] && strcmp(names[0], "slot1_2") == 0 && !names[1], "slot1's children: '%s'...",
                         names[0] ? names[0] : "(none)");
        cg_strv_free(names);
        cg_free(slot);
        cg_free(job);
        cg_free(NULL);
}

static void test_bad_paths(void) {
        char longname[300], long_path[320];
        const char *rows[] = {
                "../x", "slot1/../../x", "/abs", "/sys/fs/cgroup/x", "", "a//b", "a/", ".", "slot1/./x",
                "cgroup.procs", "slot1/memory.max", "a\nb", longname, long_path, NULL,
        };
        char **before = NULL, **after = NULL, why[256];
        Cg *slots_probe = open_cg("probe"), *cg;
        size_t nb = 0, na = 0;
        int r;

        memset(longname, 'a', 256);
        longname[256] = '\0';
        snprintf(long_path, sizeof(long_path), "slot1/%s", longname);
        GLEAN_TEST_CHECK_FATAL(cg_children(slots_probe, &before) == 0, "children");
        for (size_t i = 0; rows[i]; i++) {
                cg = NULL;
                why[0] = '\0';
                r = cg_open(root, rows[i], &cg, why, sizeof(why));
                GLEAN_TEST_CHECK(r == -EINVAL && !cg && why[0], "path '%.20s' (%zu chars): %d, why '%s'", rows[i],
                                 strlen(rows[i]), r, why);
                cg_free(cg);
        }
        r = cg_open(root, NULL, &cg, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL, "NULL path: %d", r);
        /* Nothing was created anywhere. */
        GLEAN_TEST_CHECK(cg_children(slots_probe, &after) == 0, "children");
        for (; before && before[nb]; nb++)
                ;
        for (; after && after[na]; na++)
                ;
        GLEAN_TEST_CHECK(na == nb, "%zu children of probe before, %zu after", nb, na);
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "slots/a"), "slots/a created");
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "x"), "x created next to slots");
        cg_strv_free(before);
        cg_strv_free(after);
        GLEAN_TEST_CHECK(cg_remove(slots_probe) == 0, "removing probe");
        cg_free(slots_probe);
}

static void test_attach_and_clone(void) {
        Cg *job = open_cg("slot1/slot1_2/job"), *slot = open_cg("slot1");
        char want[PATH_MAX], now[PATH_MAX];
        pid_t kids[2] = { -1, -1 }, *pids = NULL;
        size_t n = 0;
        bool populated = true;

        /* Through cgroup.procs. */
        kids[0] = fork();
        if (kids[0] == 0)
                cgtest_child_sleep(1000);
        GLEAN_TEST_CHECK_FATAL(kids[0] > 0, "fork");
        GLEAN_TEST_CHECK(cg_attach(job, kids[0]) == 0, "cg_attach(%d)", (int) kids[0]);
        /* Born there. */
        kids[1] = spawn_sleeper(job, 1000);

        want_proc_path("slot1/slot1_2/job", want, sizeof(want));
        for (int i = 0; i < 2; i++) {
                GLEAN_TEST_CHECK(cgtest_proc_cgroup(kids[i], now, sizeof(now)) == 0, "reading cgroup of %d",
                                 (int) kids[i]);
                GLEAN_TEST_CHECK(strcmp(now, want) == 0, "%s child is in '%s', want '%s'",
                                 i == 0 ? "attached" : "cloned", now, want);
        }
        GLEAN_TEST_CHECK(cg_pids(job, &pids, &n) == 0, "cg_pids(job)");
        GLEAN_TEST_CHECK(n == 2 && pids_has(pids, n, kids[0]) && pids_has(pids, n, kids[1]), "job pids: n %zu", n);
        free(pids);
        GLEAN_TEST_CHECK(cg_pids(slot, &pids, &n) == 0, "cg_pids(slot1)");
        GLEAN_TEST_CHECK(n == 2 && pids_has(pids, n, kids[0]) && pids_has(pids, n, kids[1]),
                         "slot1 pids (from below): n %zu", n);
        free(pids);
        GLEAN_TEST_CHECK(cg_events(job, &populated, NULL) == 0 && populated, "populated 1");
        GLEAN_TEST_CHECK(cg_attach(job, 0) == -EINVAL, "pid 0");

        cgtest_reap(kids, 2);
        GLEAN_TEST_CHECK(cg_events(job, &populated, NULL) == 0 && !populated, "populated 0 after the children");
        GLEAN_TEST_CHECK(cg_pids(job, &pids, &n) == 0 && n == 0, "no pids left: %zu", n);
        free(pids);
        cg_free(slot);
        cg_free(job);
}

static void test_freeze(void) {
        Cg *job = open_cg("slot2/job");
        volatile uint64_t *counter;
        sd_event *ev = NULL;
        Watch w = {};
        uint64_t c1, c2, c3;
        bool frozen = false;
        pid_t kid[1];

        counter = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        GLEAN_TEST_CHECK_FATAL(counter != MAP_FAILED, "mmap");
        kid[0] = cgtest_clone_into(cg_dirfd(job));
        if (kid[0] == 0)
                for (;;)
                        __atomic_add_fetch(counter, 1, __ATOMIC_RELAXED);
        GLEAN_TEST_CHECK_FATAL(kid[0] > 0, "clone3");
        for (int i = 0; i < 500 && *counter == 0; i++)
                cgtest_sleep_ms(2);
        GLEAN_TEST_CHECK(*counter > 0, "the counter never started");

        GLEAN_TEST_CHECK_FATAL(sd_event_new(&ev) >= 0, "sd_event_new");
        GLEAN_TEST_CHECK_FATAL(cg_watch(job, ev, on_change, &w) == 0, "cg_watch");

        watch_want(&w, -1, 1);
        GLEAN_TEST_CHECK(cg_freeze(job, true) == 0, "cg_freeze(true)");
        GLEAN_TEST_CHECK(watch_until(ev, &w, 5000), "cg_watch never saw frozen 1 (%u calls)", w.calls);
        GLEAN_TEST_CHECK(poll_frozen(job, true, 5000), "cg_events: not frozen");
        GLEAN_TEST_CHECK(cg_events(job, NULL, &frozen) == 0 && frozen, "cg_events frozen 1");
        c1 = *counter;
        cgtest_sleep_ms(200);
        c2 = *counter;
        GLEAN_TEST_CHECK(c1 == c2, "a frozen process counted from %llu to %llu", (unsigned long long) c1,
                         (unsigned long long) c2);

        watch_want(&w, -1, 0);
        GLEAN_TEST_CHECK(cg_freeze(job, false) == 0, "cg_freeze(false)");
        GLEAN_TEST_CHECK(watch_until(ev, &w, 5000), "cg_watch never saw frozen 0");
        GLEAN_TEST_CHECK(poll_frozen(job, false, 5000), "cg_events: still frozen");
        cgtest_sleep_ms(50);
        c3 = *counter;
        GLEAN_TEST_CHECK(c3 > c2, "a thawed process made no progress (%llu)", (unsigned long long) c3);

        /* A second watch replaces the first; unwatch twice is harmless. */
        GLEAN_TEST_CHECK(cg_watch(job, ev, on_change, &w) == 0, "cg_watch again");
        cg_unwatch(job);
        cg_unwatch(job);
        cgtest_reap(kid, 1);
        munmap((void *) counter, 4096);
        sd_event_unref(ev);
        cg_free(job);
}

static void test_signal(void) {
        static const char script[] =
                "exec 2>/dev/null; trap 'echo TERM > \"$1\"; exit 3' TERM; echo ready > \"$2\"; while :; do sleep 0.05; done";
        char dir[] = "/tmp/glean-cgtest-XXXXXX", marker[PATH_MAX], ready[PATH_MAX], text[64] = "";
        Cg *job, *slot;
        int status = -1, n;
        pid_t pid, done = 0;

        GLEAN_TEST_CHECK_FATAL(mkdtemp(dir), "mkdtemp");
        snprintf(marker, sizeof(marker), "%s/marker", dir);
        snprintf(ready, sizeof(ready), "%s/ready", dir);
        job = open_cg("slot3/job");
        slot = open_cg("slot3");
        pid = cgtest_clone_into(cg_dirfd(job));
        if (pid == 0) {
                execl("/bin/sh", "sh", "-c", script, "sh", marker, ready, (char *) NULL);
                _exit(127);
        }
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3");
        for (int i = 0; i < 500 && access(ready, F_OK) < 0; i++)
                cgtest_sleep_ms(10);
        GLEAN_TEST_CHECK(access(ready, F_OK) == 0, "the shell never got ready");

        /* To the slot: reaches the job's processes below it. */
        n = cg_signal(slot, SIGTERM);
        GLEAN_TEST_CHECK(n >= 1, "cg_signal(SIGTERM) = %d", n);
        for (int i = 0; i < 500 && done == 0; i++) {
                done = waitpid(pid, &status, WNOHANG);
                if (done == 0)
                        cgtest_sleep_ms(10);
        }
        GLEAN_TEST_CHECK(done == pid, "the shell did not exit on SIGTERM");
        if (done != pid) {
                kill(pid, SIGKILL);
                waitpid(pid, &status, 0);
        }
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 3, "status %#x, want exit 3 from the trap",
                         status);
        GLEAN_TEST_CHECK(cgtest_read(marker, text, sizeof(text)) == 0 && strncmp(text, "TERM", 4) == 0,
                         "marker '%s'", text);
        GLEAN_TEST_CHECK(cg_signal(slot, 0) == 0, "nobody left to signal");
        GLEAN_TEST_CHECK(cg_signal(slot, -1) == -EINVAL, "signal -1");
        unlink(marker);
        unlink(ready);
        rmdir(dir);
        cg_free(slot);
        cg_free(job);
}

/* Kill empties the slot (processes in two cgroups below it); removal is
 * refused while populated and takes the children first after. */
static void test_kill_and_remove(void) {
        Cg *slot = open_cg("slot1"), *job = open_cg("slot1/slot1_2/job"), *job2 = open_cg("slot1/job2");
        pid_t kids[3];
        sd_event *ev = NULL;
        Watch w = {};
        bool populated = false;
        char **names = NULL;

        kids[0] = spawn_sleeper(job, 1000);
        kids[1] = spawn_sleeper(job, 1000);
        kids[2] = spawn_sleeper(job2, 1000);

        GLEAN_TEST_CHECK_FATAL(cg_children(slot, &names) == 0, "cg_children");
        GLEAN_TEST_CHECK(names[0] && names[1] && !names[2] && strcmp(names[0], "job2") == 0 &&
                                 strcmp(names[1], "slot1_2") == 0,
                         "slot1's children: %s %s", names[0] ? names[0] : "-", names[0] && names[1] ? names[1] : "-");
        cg_strv_free(names);

        GLEAN_TEST_CHECK(cg_remove(slot) == -EBUSY, "cg_remove of a populated cgroup");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/slot1/slot1_2/job"), "job removed by a refused remove");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/slot1/job2"), "job2 removed by a refused remove");

        GLEAN_TEST_CHECK_FATAL(sd_event_new(&ev) >= 0, "sd_event_new");
        GLEAN_TEST_CHECK_FATAL(cg_watch(slot, ev, on_change, &w) == 0, "cg_watch");
        watch_want(&w, 0, -1);
        GLEAN_TEST_CHECK(cg_kill(slot) == 0, "cg_kill");
        GLEAN_TEST_CHECK(watch_until(ev, &w, 5000), "cg_watch never saw populated 0 (%u calls)", w.calls);
        GLEAN_TEST_CHECK(cg_events(slot, &populated, NULL) == 0 && !populated, "still populated");
        for (int i = 0; i < 3; i++) {
                int status = 0;

                GLEAN_TEST_CHECK(waitpid(kids[i], &status, 0) == kids[i], "waitpid");
                GLEAN_TEST_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child %d: status %#x", i,
                                 status);
        }
        cg_unwatch(slot);
        sd_event_unref(ev);

        GLEAN_TEST_CHECK(cg_remove(job) == 0, "cg_remove(job)");
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "slots/slot1/slot1_2/job"), "job still there");
        GLEAN_TEST_CHECK(cg_remove(slot) == 0, "cg_remove(slot1)");
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "slots/slot1"), "slot1 still there");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots"), "slots went too");
        cg_free(job2);
        cg_free(job);
        cg_free(slot);
}

/* What cg_kill() does where the kernel lacks cgroup.kill. */
static void test_kill_fallback(void) {
        Cg *job = open_cg("slot5/job");
        char path[PATH_MAX], text[16] = "";
        pid_t kids[3];
        bool populated = true;

        for (int i = 0; i < 3; i++)
                kids[i] = spawn_sleeper(job, 5);
        GLEAN_TEST_CHECK(cg_kill_fallback(job) == 0, "cg_kill_fallback");
        GLEAN_TEST_CHECK(cg_events(job, &populated, NULL) == 0 && !populated, "still populated");
        for (int i = 0; i < 3; i++) {
                int status = 0;

                GLEAN_TEST_CHECK(waitpid(kids[i], &status, 0) == kids[i], "waitpid");
                GLEAN_TEST_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "child %d: status %#x", i,
                                 status);
        }
        snprintf(path, sizeof(path), "%s/cgroup.freeze", cg_path(job));
        GLEAN_TEST_CHECK(cgtest_read(path, text, sizeof(text)) == 0 && text[0] == '0', "left frozen: '%s'", text);
        GLEAN_TEST_CHECK(cg_kill_fallback(job) == 0, "on an empty cgroup");
        cg_free(job);
}

static void test_usage(void) {
        Cg *job = open_cg("slot4/job");
        unsigned ctl = cg_controllers(job);
        CgUsage u;
        int64_t sum, diff;
        int status = -1;
        pid_t pid;

        pid = cgtest_clone_into(cg_dirfd(job));
        if (pid == 0)
                cgtest_child_burn(200);
        GLEAN_TEST_CHECK_FATAL(pid > 0, "clone3");
        GLEAN_TEST_CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0,
                         "the burner: status %#x", status);
        GLEAN_TEST_CHECK_FATAL(cg_usage(job, &u) == 0, "cg_usage");
        sum = (int64_t) (u.user_usec + u.system_usec);
        diff = sum - (int64_t) u.usage_usec;
        printf("\n    usage_usec %llu user_usec %llu system_usec %llu nr_throttled %llu memory_current %lld "
               "pids_current %lld\n",
               (unsigned long long) u.usage_usec, (unsigned long long) u.user_usec,
               (unsigned long long) u.system_usec, (unsigned long long) u.nr_throttled,
               (long long) u.memory_current, (long long) u.pids_current);
        GLEAN_TEST_CHECK(u.usage_usec >= 190000, "usage_usec %llu after 200 ms of CPU",
                         (unsigned long long) u.usage_usec);
        GLEAN_TEST_CHECK(u.usage_usec < 60000000, "usage_usec %llu", (unsigned long long) u.usage_usec);
        GLEAN_TEST_CHECK((diff < 0 ? -diff : diff) <= (int64_t) (u.usage_usec / 10 + 20000),
                         "user + system = %lld, usage %llu", (long long) sum, (unsigned long long) u.usage_usec);
        GLEAN_TEST_CHECK(u.nr_throttled == 0, "throttled without a cpu.max");
        GLEAN_TEST_CHECK((u.memory_current >= 0) == !!(ctl & CG_MEMORY), "memory_current %lld with controllers %#x",
                         (long long) u.memory_current, ctl);
        GLEAN_TEST_CHECK((u.memory_peak >= 0) <= !!(ctl & CG_MEMORY), "memory_peak %lld",
                         (long long) u.memory_peak);
        GLEAN_TEST_CHECK((u.pids_current >= 0) == !!(ctl & CG_PIDS), "pids_current %lld with controllers %#x",
                         (long long) u.pids_current, ctl);
        GLEAN_TEST_CHECK(cg_usage(job, NULL) == -EINVAL, "NULL ret");
        cg_free(job);
}

/* Harmless values for every field: applied is what the job's controllers
 * allow (nothing on a hybrid host), and a missing file is no error. */
static void test_limits(void) {
        Cg *job = open_cg("slot4/job");
        unsigned ctl = cg_controllers(job), applied = 99;
        CgLimits all = {
                .cpu_weight = 100,
                .cpu_max_quota = CG_MAX,
                .cpuset_cpus = "0",
                .memory_max = CG_MAX,
                .memory_high = CG_MAX,
                .memory_swap_max = CG_MAX,
                .pids_max = CG_MAX,
                .io_weight = 100,
        };
        CgLimits none = {};
        const struct {
                CgLimits l;
                const char *file;
        } bad[] = {
                { { .cpu_weight = 10001 }, "cpu.weight" },
                { { .io_weight = 20000 }, "io.weight" },
                { { .memory_max = -5 }, "memory.max" },
                { { .memory_high = -1 }, "memory.high" },
                { { .pids_max = -2 }, "pids.max" },
                { { .cpu_max_quota = -3 }, "cpu.max" },
                { { .cpuset_cpus = "0\n1" }, "cpuset.cpus" },
        };
        char why[256] = "";
        int r;

        r = cg_set_limits(job, &all, &applied, why, sizeof(why));
        printf("\n    controllers %#x, applied %#x: '%s'\n", ctl, applied, why);
        GLEAN_TEST_CHECK(r == 0, "cg_set_limits: %d %s", r, why);
        GLEAN_TEST_CHECK((applied & ~ctl) == 0, "applied %#x beyond the controllers %#x", applied, ctl);
        GLEAN_TEST_CHECK((applied | CG_IO) == (ctl | CG_IO), "applied %#x, controllers %#x (io aside)", applied, ctl);
        if (ctl == 0) {
                GLEAN_TEST_CHECK(applied == 0, "applied %#x without controllers", applied);
                GLEAN_TEST_CHECK(strstr(why, "memory.max") && strstr(why, "cpu.weight"), "says what it skipped: '%s'",
                                 why);
        }

        r = cg_set_limits(job, &none, &applied, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && applied == 0 && why[0] == '\0', "no fields: %d %#x '%s'", r, applied, why);

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                why[0] = '\0';
                applied = 99;
                r = cg_set_limits(job, &bad[i].l, &applied, why, sizeof(why));
                GLEAN_TEST_CHECK(r == -EINVAL && applied == 0 && strstr(why, bad[i].file),
                                 "row %zu (%s): %d, applied %#x, '%s'", i, bad[i].file, r, applied, why);
        }
        GLEAN_TEST_CHECK(cg_set_limits(job, NULL, NULL, NULL, 0) == -EINVAL, "NULL limits");
        cg_free(job);
}

static void test_memory_events(void) {
        Cg *job = open_cg("slot4/job");
        uint64_t oom = 99, oom_kill = 99;
        int r = cg_memory_events(job, &oom, &oom_kill);

        if (cg_controllers(job) & CG_MEMORY)
                GLEAN_TEST_CHECK(r == 1, "cg_memory_events with memory.events: %d", r);
        else
                GLEAN_TEST_CHECK(r == 0, "cg_memory_events without a memory controller: %d", r);
        GLEAN_TEST_CHECK(oom == 0 && oom_kill == 0, "oom %llu oom_kill %llu", (unsigned long long) oom,
                         (unsigned long long) oom_kill);
        GLEAN_TEST_CHECK(cg_memory_events(job, NULL, NULL) >= 0, "NULL outputs");
        cg_free(job);
}

static void test_children(void) {
        Cg *b = open_cg("slot6/b"), *a = open_cg("slot6/a"), *d = open_cg("slot6/c/d"), *slot = open_cg("slot6");
        char **names = NULL;

        GLEAN_TEST_CHECK_FATAL(cg_children(slot, &names) == 0, "cg_children");
        GLEAN_TEST_CHECK(names[0] && names[1] && names[2] && !names[3] && strcmp(names[0], "a") == 0 &&
                                 strcmp(names[1], "b") == 0 && strcmp(names[2], "c") == 0,
                         "slot6's children not a b c");
        cg_strv_free(names);
        GLEAN_TEST_CHECK_FATAL(cg_children(d, &names) == 0, "cg_children(leaf)");
        GLEAN_TEST_CHECK(names[0] == NULL, "a leaf has children");
        cg_strv_free(names);
        cg_strv_free(NULL);
        GLEAN_TEST_CHECK(cg_remove(slot) == 0, "cg_remove(slot6) with a, b, c/d");
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "slots/slot6"), "slot6 still there");
        GLEAN_TEST_CHECK(cg_remove(a) == 0, "removing a removed cgroup again");
        cg_free(a);
        cg_free(b);
        cg_free(d);
        cg_free(slot);
}

/* cg_root_children(), cg_root_prune() and cg_root_agent_pids() in the
 * test subtree: only empty cgroups of the prefix go, never a populated one. */
static void test_root_helpers(void) {
        Cg *j1 = open_cg("job-1"), *j2 = open_cg("job-2"), *keep = open_cg("keep-job-3"), *d = open_cg("slot8/slot8_1");
        char **names = NULL, agent[PATH_MAX];
        pid_t kid, *pids = NULL;
        size_t n = 9;
        int status = 0;

        GLEAN_TEST_CHECK_FATAL(cg_root_children(root, "slot8", &names) == 0, "cg_root_children(slot8)");
        GLEAN_TEST_CHECK(names[0] && !names[1] && strcmp(names[0], "slot8_1") == 0, "slot8's children");
        cg_strv_free(names);
        GLEAN_TEST_CHECK(cg_root_children(root, "slot8/nothing", &names) == -ENOENT, "no such cgroup");
        GLEAN_TEST_CHECK(cg_root_children(root, "../..", &names) == -EINVAL, "a path out of slots/");
        GLEAN_TEST_CHECK(cg_root_children(root, "/slot8", &names) == -EINVAL, "an absolute path");

        kid = spawn_sleeper(j2, 5000);
        GLEAN_TEST_CHECK(cg_root_prune(root, "job-") == 1, "pruned one: job-1");
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "slots/job-1"), "job-1 still there");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/job-2"), "populated job-2 removed");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/keep-job-3"), "keep-job-3 removed");
        GLEAN_TEST_CHECK(is_dir("%s/%s", env.abs, "slots/slot8"), "slot8 removed");
        GLEAN_TEST_CHECK(cg_kill(j2) == 0, "cg_kill(job-2)");
        GLEAN_TEST_CHECK(waitpid(kid, &status, 0) == kid && WIFSIGNALED(status), "the sleeper");
        for (int i = 0; i < 500 && is_dir("%s/%s", env.abs, "slots/job-2"); i++) {
                (void) cg_root_prune(root, "job-");
                cgtest_sleep_ms(10);
        }
        GLEAN_TEST_CHECK(!is_dir("%s/%s", env.abs, "slots/job-2"), "job-2 still there once empty");

        GLEAN_TEST_CHECK(cg_root_agent_pids(root, &pids, &n) == -ENOENT, "no <base>/agent yet");
        snprintf(agent, sizeof(agent), "%s/agent", env.abs);
        GLEAN_TEST_CHECK_FATAL(mkdir(agent, 0755) == 0, "mkdir %s: %s", agent, strerror(errno));
        GLEAN_TEST_CHECK(cg_root_agent_pids(root, &pids, &n) == 0 && n == 0, "an empty <base>/agent: %zu", n);
        free(pids);
        (void) rmdir(agent);

        GLEAN_TEST_CHECK(cg_remove(keep) == 0 && cg_remove(d) == 0, "cg_remove");
        cg_free(j1);
        cg_free(j2);
        cg_free(keep);
        cg_free(d);
        d = open_cg("slot8");
        (void) cg_remove(d);
        cg_free(d);
}

/* ---- the figure: freeze and thaw of 100 processes ---- */

#define LAT_PROCS 100
#define LAT_ROUNDS 20

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *) a, y = *(const int64_t *) b;

        return x < y ? -1 : x > y;
}

static int64_t median(int64_t *v, size_t n) {
        qsort(v, n, sizeof(*v), cmp_i64);
        return v[n / 2];
}

static void test_freeze_latency(void) {
        Cg *job = open_cg("slot7/job");
        pid_t kids[LAT_PROCS];
        int64_t fr[LAT_ROUNDS], th[LAT_ROUNDS], fr_spin[LAT_ROUNDS], th_spin[LAT_ROUNDS];
        size_t nf = 0, nt = 0, nfs = 0, nts = 0;
        sd_event *ev = NULL;
        Watch w = {};
        pid_t *pids = NULL;
        size_t n = 0;

        for (int i = 0; i < LAT_PROCS; i++)
                kids[i] = spawn_sleeper(job, 10);
        GLEAN_TEST_CHECK(cg_pids(job, &pids, &n) == 0 && n == LAT_PROCS, "%zu processes", n);
        free(pids);
        GLEAN_TEST_CHECK_FATAL(sd_event_new(&ev) >= 0, "sd_event_new");
        GLEAN_TEST_CHECK_FATAL(cg_watch(job, ev, on_change, &w) == 0, "cg_watch");

        /* As the agent sees it: cgroup.events through cg_watch(). The
         * kernel sends at most one notification per 10 ms per file, so the
         * rounds are spaced out. */
        for (int i = 0; i < LAT_ROUNDS; i++) {
                int64_t t0;

                cgtest_sleep_ms(20);
                watch_want(&w, -1, 1);
                t0 = cgtest_now_us();
                if (cg_freeze(job, true) == 0 && watch_until(ev, &w, 5000))
                        fr[nf++] = w.hit_us - t0;
                cgtest_sleep_ms(20);
                watch_want(&w, -1, 0);
                t0 = cgtest_now_us();
                if (cg_freeze(job, false) == 0 && watch_until(ev, &w, 5000))
                        th[nt++] = w.hit_us - t0;
        }
        /* Reading cgroup.events in a loop instead. */
        for (int i = 0; i < LAT_ROUNDS; i++) {
                int64_t t0;

                cgtest_sleep_ms(20);
                t0 = cgtest_now_us();
                if (cg_freeze(job, true) == 0 && poll_frozen(job, true, 5000))
                        fr_spin[nfs++] = cgtest_now_us() - t0;
                cgtest_sleep_ms(20);
                t0 = cgtest_now_us();
                if (cg_freeze(job, false) == 0 && poll_frozen(job, false, 5000))
                        th_spin[nts++] = cgtest_now_us() - t0;
        }
        GLEAN_TEST_CHECK(nf == LAT_ROUNDS && nt == LAT_ROUNDS && nfs == LAT_ROUNDS && nts == LAT_ROUNDS,
                         "rounds that reached frozen: %zu %zu %zu %zu of %d", nf, nt, nfs, nts, LAT_ROUNDS);
        if (nf && nt && nfs && nts) {
                printf("\n    %d processes, median of %d (a figure; goal < 5000 us):\n", LAT_PROCS, LAT_ROUNDS);
                printf("    freeze_latency_us = %lld\n", (long long) median(fr, nf));
                printf("    thaw_latency_us = %lld\n", (long long) median(th, nt));
                printf("    freeze_latency_polled_us = %lld\n", (long long) median(fr_spin, nfs));
                printf("    thaw_latency_polled_us = %lld\n", (long long) median(th_spin, nts));
        }
        cg_unwatch(job);
        sd_event_unref(ev);
        GLEAN_TEST_CHECK(cg_kill(job) == 0, "cg_kill");
        for (int i = 0; i < LAT_PROCS; i++)
                (void) waitpid(kids[i], NULL, 0);
        GLEAN_TEST_CHECK(cg_remove(job) == 0, "cg_remove");
        cg_free(job);
}

static CU_TestInfo tests[] = {
        { "controllers_string", test_controllers_string },
        { "root_open", test_root_open },
        { "root_move_self", test_root_move_self },
        { "open_nested", test_open_nested },
        { "bad_paths", test_bad_paths },
        { "attach_and_clone", test_attach_and_clone },
        { "freeze", test_freeze },
        { "signal", test_signal },
        { "kill_and_remove", test_kill_and_remove },
        { "kill_fallback", test_kill_fallback },
        { "usage", test_usage },
        { "limits", test_limits },
        { "memory_events", test_memory_events },
        { "children", test_children },
        { "root_helpers", test_root_helpers },
        { "freeze_latency", test_freeze_latency },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        char why[256] = "";
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
        status = glean_test_main(argc, argv, suites);
        cg_root_free(root);
        cgtest_teardown(&env);
        return status;
}

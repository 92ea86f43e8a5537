/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cgroup-at.c — the cgroup driver's helpers relative to a directory
 * fd (agent/cgroup/cgroup-file.c, cgroup-tree.c, cgroup-ctl.c), on a temporary
 * directory tree that mimics cgroupfs with plain files (cgroup.events,
 * cgroup.procs, memory.max): no cgroup is touched, nothing needs root.
 * And the paths below <base>/slots as cg_open() takes them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent/cgroup/cgroup-internal.h"
#include "test-util.h"

static char top[PATH_MAX]; /* the fake cgroup tree, under TMPDIR */
static int top_fd = -1;

/* Writes text to top/rel (created). */
static void put(const char *rel, const char *text) {
        int fd = openat(top_fd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        GLEAN_TEST_CHECK_FATAL(fd >= 0, "create %s: %s", rel, strerror(errno));
        GLEAN_TEST_CHECK_FATAL(write(fd, text, strlen(text)) == (ssize_t) strlen(text), "write %s", rel);
        close(fd);
}

static int dir_at(const char *rel) {
        int fd = openat(top_fd, rel, O_PATH | O_DIRECTORY | O_CLOEXEC);

        GLEAN_TEST_CHECK_FATAL(fd >= 0, "open %s: %s", rel, strerror(errno));
        return fd;
}

static int setup(void) {
        const char *tmp = getenv("TMPDIR");
        static const char *const dirs[] = { "slots", "slots/slot1", "slots/slot1/slot1_1", "slots/slot1/job",
                                            "slots/slot2", "slots/.hidden", "empty" };

        snprintf(top, sizeof(top), "%s/glean-test-cgroup-at-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        if (!mkdtemp(top))
                return -1;
        top_fd = open(top, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (top_fd < 0)
                return -1;
        for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
                if (mkdirat(top_fd, dirs[i], 0755) < 0)
                        return -1;
        return 0;
}

static void rm_tree(int dirfd, const char *name, int depth) {
        char **kids = NULL;
        int fd = openat(dirfd, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        static const char *const files[] = { "cgroup.events", "cgroup.procs", "memory.max", "note" };

        if (fd < 0 || depth > 8) {
                if (fd >= 0)
                        close(fd);
                return;
        }
        if (cg_children_at(fd, &kids) == 0)
                for (char **p = kids; *p; p++)
                        rm_tree(fd, *p, depth + 1);
        cg_strv_free(kids);
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                (void) unlinkat(fd, files[i], 0);
        close(fd);
        (void) unlinkat(dirfd, name, AT_REMOVEDIR);
}

static int teardown(void) {
        if (top_fd >= 0) {
                rm_tree(AT_FDCWD, top, 0);
                close(top_fd);
        }
        return 0;
}

static void test_events_at(void) {
        static const struct {
                const char *text;
                int r;
                bool populated, frozen;
        } rows[] = {
                { "populated 1\nfrozen 0\n", 0, true, false },
                { "populated 0\nfrozen 1\n", 0, false, true },
                { "populated 1\n", 0, true, false }, /* before 5.2: no frozen */
                { "frozen 1\npopulated 0", 0, false, true },
                { "frozen 1\n", -ENOENT, false, false },
                { "", -ENOENT, false, false },
                { "populated x\n", -EINVAL, false, false },
                { "populatedness 1\n", -ENOENT, false, false },
        };
        int fd = dir_at("slots/slot1");

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                bool populated = !rows[i].populated, frozen = !rows[i].frozen;
                int r;

                put("slots/slot1/cgroup.events", rows[i].text);
                r = cg_events_at(fd, &populated, &frozen);
                GLEAN_TEST_CHECK(r == rows[i].r, "row %zu: %d, want %d", i, r, rows[i].r);
                if (r == 0)
                        GLEAN_TEST_CHECK(populated == rows[i].populated && frozen == rows[i].frozen,
                                         "row %zu: populated %d frozen %d", i, populated, frozen);
        }
        put("slots/slot1/cgroup.events", "populated 1\nfrozen 1\n");
        GLEAN_TEST_CHECK(cg_events_at(fd, NULL, NULL) == 0, "both outputs NULL");
        close(fd);
        fd = dir_at("empty");
        GLEAN_TEST_CHECK(cg_events_at(fd, NULL, NULL) == -ENODEV, "no cgroup.events: -ENODEV");
        close(fd);
        GLEAN_TEST_CHECK(cg_events_at(-1, NULL, NULL) == -EBADF, "a bad fd");
}

static void test_children_at(void) {
        char **names = NULL;
        int fd = dir_at("slots");

        put("slots/cgroup.procs", "");
        GLEAN_TEST_CHECK_FATAL(cg_children_at(fd, &names) == 0, "cg_children_at(slots)");
        /* Directories only, sorted; "." and ".." left out, ".hidden" kept. */
        GLEAN_TEST_CHECK(names[0] && names[1] && names[2] && !names[3], "three children");
        if (names[0] && names[1] && names[2])
                GLEAN_TEST_CHECK(strcmp(names[0], ".hidden") == 0 && strcmp(names[1], "slot1") == 0 &&
                                         strcmp(names[2], "slot2") == 0,
                                 "'%s' '%s' '%s'", names[0], names[1], names[2]);
        cg_strv_free(names);
        close(fd);
        fd = dir_at("empty");
        GLEAN_TEST_CHECK_FATAL(cg_children_at(fd, &names) == 0 && names && !names[0], "no children");
        cg_strv_free(names);
        close(fd);
}

static void test_procs_and_attach_at(void) {
        pid_t *v = NULL;
        size_t n = 9;
        char why[256] = "", *text = NULL, path[PATH_MAX + 32];
        int fd = dir_at("slots/slot2");

        put("slots/slot2/cgroup.procs", "12\n345\n6789\n");
        GLEAN_TEST_CHECK_FATAL(cg_procs_at(fd, &v, &n) == 0, "cg_procs_at");
        GLEAN_TEST_CHECK(n == 3 && v[0] == 12 && v[1] == 345 && v[2] == 6789, "%zu pids", n);
        free(v);
        put("slots/slot2/cgroup.procs", "12\nbad\n");
        GLEAN_TEST_CHECK(cg_procs_at(fd, &v, &n) == -EINVAL, "a line that is no pid");
        put("slots/slot2/cgroup.procs", "");
        GLEAN_TEST_CHECK(cg_procs_at(fd, &v, &n) == 0 && n == 0 && v, "empty");
        free(v);

        /* The write goes to the file that is there, whole. */
        GLEAN_TEST_CHECK(cg_attach_at(fd, "slot2", 4242, why, sizeof(why)) == 0, "cg_attach_at: %s", why);
        snprintf(path, sizeof(path), "%s/slots/slot2/cgroup.procs", top);
        GLEAN_TEST_CHECK(glean_test_read_file(path, &text, NULL) == 0 && strcmp(text, "4242") == 0, "wrote '%s'",
                         text ? text : "(nothing)");
        free(text);
        GLEAN_TEST_CHECK(cg_attach_at(fd, "slot2", 0, why, sizeof(why)) == -EINVAL && strstr(why, "slot2"),
                         "pid 0: '%s'", why);
        GLEAN_TEST_CHECK(cg_attach_at(fd, "slot2", -5, NULL, 0) == -EINVAL, "a negative pid");
        close(fd);

        /* Never O_CREAT: a cgroup without cgroup.procs stays without. */
        fd = dir_at("empty");
        GLEAN_TEST_CHECK(cg_attach_at(fd, "empty", 4242, why, sizeof(why)) == -ENODEV && strstr(why, "empty/cgroup.procs"),
                         "no cgroup.procs: '%s'", why);
        GLEAN_TEST_CHECK(faccessat(fd, "cgroup.procs", F_OK, 0) < 0 && errno == ENOENT, "cgroup.procs created");
        GLEAN_TEST_CHECK(cg_procs_at(fd, &v, &n) == 0 && n == 0, "no cgroup.procs: no pids");
        free(v);
        close(fd);
}

static void test_int64_at(void) {
        int fd = dir_at("slots/slot1/job");
        int64_t v = 0;

        put("slots/slot1/job/memory.max", "1073741824\n");
        GLEAN_TEST_CHECK(cg_read_int64_at(fd, "memory.max", &v) == 0 && v == 1073741824, "%lld", (long long) v);
        put("slots/slot1/job/memory.max", "max\n");
        GLEAN_TEST_CHECK(cg_read_int64_at(fd, "memory.max", &v) == 0 && v == INT64_MAX, "max");
        put("slots/slot1/job/memory.max", "lots\n");
        GLEAN_TEST_CHECK(cg_read_int64_at(fd, "memory.max", &v) == -EINVAL, "not a number");
        GLEAN_TEST_CHECK(cg_read_int64_at(fd, "memory.high", &v) == -ENOENT, "no such file");
        close(fd);
}

static void test_subpath(void) {
        static const struct {
                const char *parent, *name;
                size_t len;
                int r;
                const char *want;
        } rows[] = {
                { "slot1", "slot1_2", 64, 0, "slot1/slot1_2" },
                { "slot1/slot1_2", "job", 64, 0, "slot1/slot1_2/job" },
                { NULL, "slot1", 64, 0, "slot1" },
                { "", "slot1", 64, 0, "slot1" },
                { "slot1", "job", 10, 0, "slot1/job" },
                { "slot1", "job", 9, -ENAMETOOLONG, NULL },
                { "slot1", "", 64, -EINVAL, NULL },
                { "slot1", NULL, 64, -EINVAL, NULL },
        };
        char buf[64];

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int r = cg_subpath(buf, rows[i].len, rows[i].parent, rows[i].name);

                GLEAN_TEST_CHECK(r == rows[i].r, "row %zu: %d, want %d", i, r, rows[i].r);
                if (r == 0)
                        GLEAN_TEST_CHECK(strcmp(buf, rows[i].want) == 0, "row %zu: '%s'", i, buf);
        }
}

static void test_path_check(void) {
        static const struct {
                const char *path;
                bool allow_empty;
                int r;
        } rows[] = {
                { "slot1/slot1_2/job", false, 0 }, { "", true, 0 },          { "", false, -EINVAL },
                { "/slot1", false, -EINVAL },      { "a//b", false, -EINVAL }, { "a/", false, -EINVAL },
                { "a/../b", false, -EINVAL },      { ".", true, -EINVAL },     { "a/\x01", false, -EINVAL },
                { "cgroup.procs", false, -EINVAL }, { "memory.x", false, -EINVAL }, { NULL, true, -EINVAL },
        };
        char why[256];

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int r = cg_path_check(rows[i].path, rows[i].allow_empty, why, sizeof(why));

                GLEAN_TEST_CHECK(r == rows[i].r, "row %zu: %d, want %d", i, r, rows[i].r);
        }
}

static CU_TestInfo tests[] = {
        { "cgroup.events at a dir fd", test_events_at },
        { "children at a dir fd", test_children_at },
        { "cgroup.procs read and written at a dir fd", test_procs_and_attach_at },
        { "single values at a dir fd", test_int64_at },
        { "paths below slots", test_subpath },
        { "paths refused", test_path_check },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup-at", setup, teardown, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

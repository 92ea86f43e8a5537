/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cgroup-own.c — a process's own cgroup v2 (agent/cgroup/cgroup.c): the one
 * reading of the "0::" line of /proc/<pid>/cgroup, on friendly and hostile
 * texts, and the same on this host's /proc (read only: nothing is written).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/cgroup.h"
#include "test-util.h"

static void test_from_text(void) {
        static const struct {
                const char *text;
                int r;
                const char *path;
        } rows[] = {
                { "0::/system.slice/glean-agent.service\n", 0, "/system.slice/glean-agent.service" },
                { "12:pids:/x\n1:name=systemd:/y\n0::/a/b\n", 0, "/a/b" },
                { "0::/a\n12:pids:/x\n", 0, "/a" },
                { "0::/\n", 0, "/" },
                { "0::/no-newline", 0, "/no-newline" },
                { "1:cpu:/x\n0::/last-no-newline", 0, "/last-no-newline" },
                { "0::/with space/and:colon\n", 0, "/with space/and:colon" },
                /* v1 only, or nothing. */
                { "12:memory:/user.slice\n11:cpu,cpuacct:/\n1:name=systemd:/user.slice\n", -ENOENT, NULL },
                { "1:cpu:/x", -ENOENT, NULL },
                { "", -ENOENT, NULL },
                { "\n\n\n", -ENOENT, NULL },
                /* "0::" only at the start of a line. */
                { "10::/ten\n", -ENOENT, NULL },
                { "1:name=x:0::/y\n", -ENOENT, NULL },
                { " 0::/indented\n", -ENOENT, NULL },
                /* The line there, its path not. */
                { "0::\n", -EINVAL, NULL },
                { "0::", -EINVAL, NULL },
                { "0::relative\n", -EINVAL, NULL },
                { "0:: /space-first\n", -EINVAL, NULL },
        };
        char buf[256];

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                int r;

                memset(buf, 'x', sizeof(buf));
                r = cg_own_from_text(rows[i].text, buf, sizeof(buf));
                GLEAN_TEST_CHECK(r == rows[i].r, "row %zu: %d, want %d", i, r, rows[i].r);
                if (r == 0 && rows[i].path)
                        GLEAN_TEST_CHECK(strcmp(buf, rows[i].path) == 0, "row %zu: '%s'", i, buf);
        }
        GLEAN_TEST_CHECK(cg_own_from_text(NULL, buf, sizeof(buf)) == -EINVAL, "no text");
}

/* A path as long as the buffer, one shorter, and one of 64 KB. */
static void test_from_text_long(void) {
        char buf[8], *text, *out;
        size_t big = 1u << 16;

        GLEAN_TEST_CHECK(cg_own_from_text("0::/abcdef\n", buf, 4) == -ENAMETOOLONG, "7 in 4");
        GLEAN_TEST_CHECK(cg_own_from_text("0::/abcdefg\n", buf, sizeof(buf)) == -ENAMETOOLONG, "8 in 8");
        GLEAN_TEST_CHECK(cg_own_from_text("0::/abcdef\n", buf, sizeof(buf)) == 0 && strcmp(buf, "/abcdef") == 0,
                         "7 in 8: '%s'", buf);
        GLEAN_TEST_CHECK(cg_own_from_text("0::/a\n", buf, 0) == -ENAMETOOLONG, "no room at all");

        text = malloc(big + 16);
        out = malloc(big + 1);
        GLEAN_TEST_CHECK_FATAL(text && out, "malloc");
        memcpy(text, "1:cpu:/\n0::/", 12);
        memset(text + 12, 'a', big - 1);
        text[12 + big - 1] = '\0'; /* "/aaa...": big characters, no newline */
        GLEAN_TEST_CHECK(cg_own_from_text(text, out, PATH_MAX) == -ENAMETOOLONG, "64 KB in PATH_MAX");
        GLEAN_TEST_CHECK(cg_own_from_text(text, out, big + 1) == 0 && strlen(out) == big && out[0] == '/',
                         "64 KB in 64 KB + 1: %zu", strlen(out));
        free(text);
        free(out);
}

/* This process's own, out of the real /proc: what the kernel wrote. */
static void test_own_here(void) {
        char buf[PATH_MAX], *text = NULL, want[PATH_MAX];
        int r, w;

        GLEAN_TEST_CHECK_FATAL(glean_test_read_file("/proc/self/cgroup", &text, NULL) == 0, "/proc/self/cgroup");
        w = cg_own_from_text(text, want, sizeof(want));
        free(text);
        r = cg_own(0, buf, sizeof(buf));
        GLEAN_TEST_CHECK(r == w, "cg_own(0) = %d, the text says %d", r, w);
        if (r == 0) {
                GLEAN_TEST_CHECK(buf[0] == '/' && strcmp(buf, want) == 0, "'%s', want '%s'", buf, want);
                r = cg_own(getpid(), buf, sizeof(buf));
                GLEAN_TEST_CHECK(r == 0 && strcmp(buf, want) == 0, "cg_own(getpid()) = %d '%s'", r, buf);
        }
        GLEAN_TEST_CHECK(cg_own(-1, buf, sizeof(buf)) == -EINVAL, "a negative pid");
        GLEAN_TEST_CHECK(cg_own(0, buf, 1) == (w == 0 ? -ENAMETOOLONG : w), "a buffer of 1");
}

/* Whatever this host has, the answer is a limit or none; never a wrong one. */
static void test_memory_max_here(void) {
        int64_t v = -7;
        int r = cg_own_memory_max(&v);

        GLEAN_TEST_CHECK(r == 0 || r == -ENOENT, "cg_own_memory_max = %d", r);
        if (r == 0)
                GLEAN_TEST_CHECK(v > 0 && v != INT64_MAX, "memory.max %lld", (long long) v);
        else
                GLEAN_TEST_CHECK(v == -7, "*ret set on failure");
}

static CU_TestInfo tests[] = {
        { "0:: line of the text", test_from_text },
        { "0:: line too long", test_from_text_long },
        { "own cgroup of this process", test_own_here },
        { "memory.max above this process", test_memory_max_here },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cgroup-own", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

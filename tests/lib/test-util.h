/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-util.h — what every CUnit suite of glean shares: a main() that runs
 * the suites and reports, a way to skip, whole-file reading and running a
 * program with its output captured.
 *
 * A suite file tests/MODULE/test-NAME.c ends with:
 *
 *     static CU_TestInfo tests[] = {
 *             { "parse", test_parse },
 *             CU_TEST_INFO_NULL,
 *     };
 *     static CU_SuiteInfo suites[] = {
 *             { "lexer", NULL, NULL, NULL, NULL, tests },
 *             CU_SUITE_INFO_NULL,
 *     };
 *     int main(int argc, char **argv) {
 *             return glean_test_main(argc, argv, suites);
 *     }
 *
 * Run it as `build/tests/MODULE/test-NAME [SUITE [TEST]]` from the
 * repository root; `make check` runs every suite.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include <CUnit/CUnit.h>

/* Exit status of a test binary whose environment lacks what it needs
 * (root, cgroupfs, BPF, ...): counted as skipped, never as passed. */
#define GLEAN_TEST_SKIPPED 77

/* Registers the suites, runs all of them (or the suite argv[1], or only its
 * test argv[2]) with CUnit's basic interface in verbose mode, prints the
 * failures and CUnit's summary. Returns the process exit status: 0 when
 * every test passed, 1 on any failure, 2 on a usage error. */
int glean_test_main(int argc, char **argv, CU_SuiteInfo *suites);

/* Prints "SKIPPED: <why>" and returns GLEAN_TEST_SKIPPED, for main() to
 * return before glean_test_main() when the environment is unsuitable. */
int glean_test_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Records an assertion whose failure reads as a formatted sentence rather
 * than the C condition: table-driven tests name the failing row this way.
 *     GLEAN_TEST_CHECK(r == want, "row %zu: '%s' gave %d, want %d", i, in, r, want);
 * GLEAN_TEST_CHECK_FATAL also ends the test on failure. */
#define GLEAN_TEST_CHECK(cond, ...) \
        glean_test_check(!!(cond), false, __LINE__, __FILE__, __func__, __VA_ARGS__)
#define GLEAN_TEST_CHECK_FATAL(cond, ...) \
        glean_test_check(!!(cond), true, __LINE__, __FILE__, __func__, __VA_ARGS__)
bool glean_test_check(bool ok, bool fatal, unsigned line, const char *file, const char *func,
                      const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* Reads the whole file at path (relative to the repository root, where
 * tests run). *ret is malloc'd and NUL-terminated; ret_len may be NULL.
 * Returns 0, or -errno. */
int glean_test_read_file(const char *path, char **ret, size_t *ret_len);

/* The outcome of running a program: its exit status (128 + signal number
 * when killed by a signal) and everything it wrote, NUL-terminated. */
typedef struct GleanTestRun {
        int status;
        char *out;
        size_t out_len;
        char *err;
        size_t err_len;
} GleanTestRun;

/* Runs argv[0] (looked up in PATH when it has no '/') with argv, stdin from
 * /dev/null, and waits for it. Returns 0 and fills *ret, or -errno (the
 * program not existing shows as status 127). Free with
 * glean_test_run_done(). */
int glean_test_run(char *const argv[], GleanTestRun *ret);
void glean_test_run_done(GleanTestRun *r);

/* SPDX-License-Identifier: Apache-2.0 */
#define _GNU_SOURCE

#include "test-util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/Basic.h>

/* ---- running suites ---- */

static CU_ErrorCode run_selected(const char *suite_name, const char *test_name) {
        CU_pSuite suite;
        CU_pTest test;

        if (!suite_name)
                return CU_basic_run_tests();

        suite = CU_get_suite(suite_name);
        if (!suite) {
                fprintf(stderr, "no suite named '%s'\n", suite_name);
                return CUE_NOSUITE;
        }
        if (!test_name)
                return CU_basic_run_suite(suite);

        test = CU_get_test(suite, test_name);
        if (!test) {
                fprintf(stderr, "no test named '%s' in suite '%s'\n", test_name, suite_name);
                return CUE_NOTEST;
        }
        return CU_basic_run_test(suite, test);
}

static void show_failures(void) {
        if (CU_get_number_of_failure_records() == 0)
                return;
        printf("\nFailures:\n");
        CU_basic_show_failures(CU_get_failure_list());
        printf("\n");
}

int glean_test_main(int argc, char **argv, CU_SuiteInfo *suites) {
        CU_ErrorCode r;
        int status;

        if (argc > 3) {
                fprintf(stderr, "usage: %s [SUITE [TEST]]\n", argv[0]);
                return 2;
        }

        if (CU_initialize_registry() != CUE_SUCCESS) {
                fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
                return 1;
        }
        if (CU_register_suites(suites) != CUE_SUCCESS) {
                fprintf(stderr, "CUnit: %s\n", CU_get_error_msg());
                CU_cleanup_registry();
                return 1;
        }

        CU_basic_set_mode(CU_BRM_VERBOSE);
        r = run_selected(argc > 1 ? argv[1] : NULL, argc > 2 ? argv[2] : NULL);
        if (r == CUE_NOSUITE || r == CUE_NOTEST)
                status = 2;
        else {
                show_failures();
                status = r == CUE_SUCCESS && CU_get_number_of_failure_records() == 0 ? 0 : 1;
        }

        CU_cleanup_registry();
        fflush(stdout);
        return status;
}

int glean_test_skip(const char *fmt, ...) {
        va_list ap;

        printf("SKIPPED: ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        printf("\n");
        fflush(stdout);
        return GLEAN_TEST_SKIPPED;
}

bool glean_test_check(bool ok, bool fatal, unsigned line, const char *file, const char *func,
                      const char *fmt, ...) {
        char msg[1024];
        va_list ap;

        if (ok) {
                CU_assertImplementation(CU_TRUE, line, "", file, func, CU_FALSE);
                return true;
        }
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        /* CUnit copies the message into its failure record. */
        CU_assertImplementation(CU_FALSE, line, msg, file, func, fatal ? CU_TRUE : CU_FALSE);
        return false;
}

/* ---- files ---- */

/* Reads fd from its current position to the end. */
static int read_all(int fd, char **ret, size_t *ret_len) {
        size_t len = 0, cap = 4096;
        char *buf = malloc(cap);

        if (!buf)
                return -ENOMEM;

        for (;;) {
                ssize_t n;

                if (cap - len < 2) {
                        char *bigger = realloc(buf, cap * 2);

                        if (!bigger) {
                                free(buf);
                                return -ENOMEM;
                        }
                        buf = bigger;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;

                        free(buf);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t) n;
        }

        buf[len] = '\0';
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int glean_test_read_file(const char *path, char **ret, size_t *ret_len) {
        int fd, r;

        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        r = read_all(fd, ret, ret_len);
        close(fd);
        return r;
}

/* ---- running programs ---- */

static int rewind_and_read(int fd, char **ret, size_t *ret_len) {
        if (lseek(fd, 0, SEEK_SET) < 0)
                return -errno;
        return read_all(fd, ret, ret_len);
}

static int wait_for(pid_t pid, int *ret_status) {
        int ws;

        while (waitpid(pid, &ws, 0) < 0)
                if (errno != EINTR)
                        return -errno;

        *ret_status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
        return 0;
}

static void exec_child(char *const argv[], int out_fd, int err_fd) {
        int null_fd = open("/dev/null", O_RDONLY);

        if (null_fd < 0 || dup2(null_fd, STDIN_FILENO) < 0 ||
            dup2(out_fd, STDOUT_FILENO) < 0 || dup2(err_fd, STDERR_FILENO) < 0)
                _exit(126);
        execvp(argv[0], argv);
        dprintf(STDERR_FILENO, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
}

static int spawn_and_capture(char *const argv[], int out_fd, int err_fd, GleanTestRun *ret) {
        GleanTestRun run = {};
        pid_t pid;
        int r;

        fflush(NULL);
        pid = fork();
        if (pid < 0)
                return -errno;
        if (pid == 0)
                exec_child(argv, out_fd, err_fd);

        r = wait_for(pid, &run.status);
        if (r < 0)
                return r;
        r = rewind_and_read(out_fd, &run.out, &run.out_len);
        if (r < 0)
                return r;
        r = rewind_and_read(err_fd, &run.err, &run.err_len);
        if (r < 0) {
                free(run.out);
                return r;
        }
        *ret = run;
        return 0;
}

int glean_test_run(char *const argv[], GleanTestRun *ret) {
        int out_fd, err_fd, r;

        out_fd = memfd_create("glean-test-stdout", MFD_CLOEXEC);
        if (out_fd < 0)
                return -errno;
        err_fd = memfd_create("glean-test-stderr", MFD_CLOEXEC);
        if (err_fd < 0) {
                r = -errno;
                close(out_fd);
                return r;
        }

        r = spawn_and_capture(argv, out_fd, err_fd, ret);
        close(out_fd);
        close(err_fd);
        return r;
}

void glean_test_run_done(GleanTestRun *r) {
        if (!r)
                return;
        free(r->out);
        free(r->err);
        *r = (GleanTestRun) {};
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-start.c — the daemons' command line (--config, --set
 * NAME=VALUE in order, a daemon's own options, --help, and what is
 * refused), their signals and the log level of their knob.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "common/daemon-start.h"
#include "common/log.h"
#include "test-util.h"

static const char usage[] = "usage: glean-test [--config FILE] [--set NAME=VALUE]... [--socket PATH]\n";

/* Parses the NULL-ended words (argv[0] "glean-test" added) with --socket
 * (-s), --port-file (-p) and the flag --init (-i) of its own. */
static const char *init_flag;
static int parse(const char *const *words, const char **ret_socket, const char **ret_port, GleanDaemonArgs *ret) {
        char *argv[16] = { (char *) "glean-test" };
        int argc = 1;
        const GleanDaemonOption own[] = { { "socket", 's', ret_socket, false },
                                          { "port-file", 'p', ret_port, false },
                                          { "init", 'i', &init_flag, true } };

        for (; words[argc - 1]; argc++)
                argv[argc] = (char *) words[argc - 1];
        return glean_daemon_args(argc, argv, "glean-test", usage, own, 3, ret);
}

static void test_options(void) {
        const char *const words[] = { "--set", "A=1", "-c", "/x.conf", "--socket", "/s", "-S", "B=x=y",
                                      "--set", "C=", NULL };
        const char *socket = NULL, *port = NULL;
        GleanDaemonArgs a;

        CU_ASSERT_EQUAL_FATAL(parse(words, &socket, &port, &a), 0);
        CU_ASSERT_STRING_EQUAL(a.config_path, "/x.conf");
        CU_ASSERT_STRING_EQUAL(socket, "/s");
        CU_ASSERT_PTR_NULL(port);
        CU_ASSERT_EQUAL_FATAL(a.n_sets, 3);
        CU_ASSERT_STRING_EQUAL(a.sets[0].name, "A");
        CU_ASSERT_STRING_EQUAL(a.sets[0].value, "1");
        CU_ASSERT_STRING_EQUAL(a.sets[1].name, "B");
        CU_ASSERT_STRING_EQUAL(a.sets[1].value, "x=y");
        CU_ASSERT_STRING_EQUAL(a.sets[2].name, "C");
        CU_ASSERT_STRING_EQUAL(a.sets[2].value, "");
        glean_daemon_args_free(&a);
        CU_ASSERT_EQUAL(a.n_sets, 0);
        glean_daemon_args_free(NULL);

        /* nothing at all; then the other own option, short */
        const char *const none[] = { NULL }, *const p[] = { "-p", "/port", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(none, &socket, &port, &a), 0);
        CU_ASSERT_PTR_NULL(a.config_path);
        CU_ASSERT_EQUAL(a.n_sets, 0);
        glean_daemon_args_free(&a);
        socket = NULL;
        CU_ASSERT_EQUAL_FATAL(parse(p, &socket, &port, &a), 0);
        CU_ASSERT_STRING_EQUAL(port, "/port");
        CU_ASSERT_PTR_NULL(socket);
        CU_ASSERT_PTR_NULL(init_flag);
        glean_daemon_args_free(&a);

        /* a flag takes no argument: the next word is an option again */
        const char *const flag[] = { "--init", "-p", "/p2", NULL }, *const flag_arg[] = { "--init=x", NULL };
        CU_ASSERT_EQUAL_FATAL(parse(flag, &socket, &port, &a), 0);
        CU_ASSERT_PTR_NOT_NULL(init_flag);
        CU_ASSERT_STRING_EQUAL(port, "/p2");
        glean_daemon_args_free(&a);
        init_flag = NULL;
        CU_ASSERT_EQUAL(parse(flag_arg, &socket, &port, &a), -EINVAL);
        CU_ASSERT_PTR_NULL(init_flag);
}

static void test_refused(void) {
        const char *const help[] = { "--set", "A=1", "--help", NULL }, *const no_eq[] = { "--set", "A", NULL },
                          *const operand[] = { "-c", "/x", "extra", NULL }, *const unknown[] = { "--bogus", NULL },
                          *const no_arg[] = { "--socket", NULL },
                          *const late[] = { "--socket", "/s", "--set", "A", NULL };
        const char *socket = NULL, *port = NULL;
        GleanDaemonArgs a = { .n_sets = 99 };

        fprintf(stderr, "(the usage and reasons below are expected)\n");
        CU_ASSERT_EQUAL(parse(help, &socket, &port, &a), 1);
        CU_ASSERT_EQUAL(parse(no_eq, &socket, &port, &a), -EINVAL);
        CU_ASSERT_EQUAL(parse(operand, &socket, &port, &a), -EINVAL);
        CU_ASSERT_EQUAL(parse(unknown, &socket, &port, &a), -EINVAL);
        CU_ASSERT_EQUAL(parse(no_arg, &socket, &port, &a), -EINVAL);
        CU_ASSERT_EQUAL(parse(late, &socket, &port, &a), -EINVAL);
        /* outputs untouched on failure */
        CU_ASSERT_EQUAL(a.n_sets, 99);
        CU_ASSERT_PTR_NULL(socket);
}

static void test_begin(void) {
        struct sigaction old;
        sigset_t blocked;

        glean_daemon_begin("glean-test");
        CU_ASSERT(sigprocmask(SIG_BLOCK, NULL, &blocked) == 0);
        CU_ASSERT(sigismember(&blocked, SIGTERM) == 1);
        CU_ASSERT(sigismember(&blocked, SIGINT) == 1);
        CU_ASSERT(sigismember(&blocked, SIGHUP) == 1);
        CU_ASSERT(sigaction(SIGPIPE, NULL, &old) == 0);
        CU_ASSERT(old.sa_handler == SIG_IGN);

        glean_log_set_level(LOG_INFO);
        CU_ASSERT_EQUAL(glean_daemon_log_level("debug"), 0);
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_DEBUG);
        CU_ASSERT_EQUAL(glean_daemon_log_level(""), 0);
        CU_ASSERT_EQUAL(glean_daemon_log_level(NULL), 0);
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_DEBUG);
        CU_ASSERT_EQUAL(glean_daemon_log_level("chatty"), -EINVAL);
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_DEBUG);
        CU_ASSERT_EQUAL(glean_daemon_log_level("3"), 0);
        CU_ASSERT_EQUAL(glean_log_get_level(), LOG_ERR);
        glean_log_set_level(LOG_INFO);
}

/* The soft limit of open files goes up to the hard one (in a child: the
 * limits are the process's). */
static void test_fd_limit(void) {
        struct rlimit rl;
        CU_ASSERT_FATAL(getrlimit(RLIMIT_NOFILE, &rl) == 0);
        if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < 128) {
                fprintf(stderr, "the hard limit of open files is %llu: nothing to raise\n",
                        (unsigned long long) rl.rlim_max);
                return;
        }
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
                struct rlimit low = { .rlim_cur = 64, .rlim_max = rl.rlim_max }, now;
                uint64_t got = 0;
                if (setrlimit(RLIMIT_NOFILE, &low) < 0)
                        _exit(10);
                if (glean_daemon_raise_fd_limit(&got) < 0)
                        _exit(11);
                if (getrlimit(RLIMIT_NOFILE, &now) < 0 || now.rlim_cur != rl.rlim_max)
                        _exit(12);
                if (rl.rlim_max != RLIM_INFINITY && got != (uint64_t) rl.rlim_max)
                        _exit(13);
                /* Already there: nothing changes, the limit is said. */
                if (glean_daemon_raise_fd_limit(NULL) < 0 || glean_daemon_raise_fd_limit(&got) < 0 ||
                    (rl.rlim_max != RLIM_INFINITY && got != (uint64_t) rl.rlim_max))
                        _exit(14);
                _exit(0);
        }
        int status = -1;
        CU_ASSERT(waitpid(pid, &status, 0) == pid);
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "raise_fd_limit in the child: status %d",
                         status);
}

static CU_TestInfo tests[] = {
        { "fd limit raised", test_fd_limit },
        { "options", test_options },
        { "refused", test_refused },
        { "begin", test_begin },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "daemon-start", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

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
#include <syslog.h>

#include "common/daemon-start.h"
#include "common/log.h"
#include "test-util.h"

static const char usage[] = "usage: glean-test [--config FILE] [--set NAME=VALUE]... [--socket PATH]\n";

/* Parses the NULL-ended words (argv[0] "glean-test" added) with --socket
 * (-s) and --port-file (-p) of its own. */
static int parse(const char *const *words, const char **ret_socket, const char **ret_port, GleanDaemonArgs *ret) {
        char *argv[16] = { (char *) "glean-test" };
        int argc = 1;
        const GleanDaemonOption own[] = { { "socket", 's', ret_socket }, { "port-file", 'p', ret_port } };

        for (; words[argc - 1]; argc++)
                argv[argc] = (char *) words[argc - 1];
        return glean_daemon_args(argc, argv, "glean-test", usage, own, 2, ret);
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
        glean_daemon_args_free(&a);
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

static CU_TestInfo tests[] = {
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

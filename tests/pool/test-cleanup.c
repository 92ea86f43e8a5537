/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cleanup.c — a pool test that fails half-way leaves nothing behind
 * (pool-test.h's tracking): this binary runs itself as a child whose test
 * starts a central manager and an agent, runs a job, tells this one their
 * pids, directories and namespaces, and then fails — a fatal assertion
 * (the per-test teardown), exit() (the atexit hook), SIGTERM (the signal
 * handler), or a fatal assertion with the pool in network namespaces. This
 * one, a child subreaper (what the child leaves running comes back to it),
 * then finds none of those processes running, nothing of the child's left
 * as an orphan, the directories gone (but after a signal, where the
 * daemons stop by themselves) and no process in those namespaces (so they
 * and their veth pairs are gone). The child's output, failures on
 * purpose, goes to /dev/null unless GLEAN_TEST_VERBOSE is set.
 *
 * Needs root for the namespace case (skipped otherwise, the rest runs).
 */
#define _GNU_SOURCE

#include "pool-test.h"

/* ---- the child: a test that fails half-way ---- */

static int report_fd = -1;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void report(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vdprintf(report_fd, fmt, ap);
        va_end(ap);
}

/* A manager, an agent (in namespaces when np) and a running job, told to the parent. */
static void start_pool(Manager *m, Pool *a, NetPool *np) {
        struct stat st;
        if (np) {
                CU_ASSERT_FATAL(netpool_new(np, 1));
                if (fstat(np->cm, &st) == 0)
                        report("N %lu\n", (unsigned long) st.st_ino);
                if (fstat(np->node[0].ns, &st) == 0)
                        report("N %lu\n", (unsigned long) st.st_ino);
                CU_ASSERT_FATAL(manager_start_ns(m, "NEGOTIATOR_ADDRESS =\nNEGOTIATOR_INTERVAL = 1\n", np->cm));
        } else
                CU_ASSERT_FATAL(manager_start(m, "NEGOTIATOR_INTERVAL = 1\n"));
        report("P %d\nD %s\n", (int) m->pid, m->dir);
        bool ok = np ? netpool_agent(np, 0, m, a, "n1.test", "NUM_CPUS = 1\nUPDATE_INTERVAL = 1\n")
                     : manager_agent(m, a, "a.test", "NUM_CPUS = 1\nUPDATE_INTERVAL = 1\n");
        CU_ASSERT_FATAL(ok);
        report("P %d\nD %s\n", (int) a->pid, a->dir);
        CU_ASSERT_FATAL(submit_as(m, NULL, "sleep.sub", "executable = /bin/sleep\narguments = 300\nqueue\n", NULL, 0) ==
                        1);
        CU_ASSERT_FATAL(wait_attr("q", "1.0", "JobStatus", "2", 30));
        report("R\n"); /* all running */
}

static void child_fatal(void) {
        Manager m;
        Pool a;
        start_pool(&m, &a, NULL);
        CU_FAIL_FATAL("failing half-way, on purpose");
        pool_stop(&a); /* never reached */
        manager_stop(&m);
}

static void child_exit(void) {
        Manager m;
        Pool a;
        start_pool(&m, &a, NULL);
        exit(3);
}

static void child_signal(void) {
        Manager m;
        Pool a;
        start_pool(&m, &a, NULL);
        raise(SIGTERM);
        sleep(10); /* not reached: SIGTERM ends the process */
}

static void child_netns(void) {
        Manager m;
        Pool a;
        NetPool np;
        start_pool(&m, &a, &np);
        CU_FAIL_FATAL("failing half-way in the namespaces, on purpose");
}

static CU_TestInfo child_tests[] = {
        { "fatal", child_fatal },
        { "exit", child_exit },
        { "signal", child_signal },
        { "netns", child_netns },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo child_suites[] = {
        { "child", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, child_tests },
        CU_SUITE_INFO_NULL,
};

/* ---- the parent ---- */

typedef struct Left {
        pid_t pids[8];
        size_t n_pids;
        char dirs[8][64];
        size_t n_dirs;
        unsigned long ns[4];
        size_t n_ns;
        bool running; /* the child got as far as the running job */
        int status;   /* the child's wait status */
} Left;

static void parse_report(char *text, Left *l) {
        for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
                if (line[0] == 'P' && l->n_pids < 8)
                        l->pids[l->n_pids++] = (pid_t) strtol(line + 2, NULL, 10);
                else if (line[0] == 'D' && l->n_dirs < 8)
                        snprintf(l->dirs[l->n_dirs++], sizeof l->dirs[0], "%s", line + 2);
                else if (line[0] == 'N' && l->n_ns < 4)
                        l->ns[l->n_ns++] = strtoul(line + 2, NULL, 10);
                else if (line[0] == 'R')
                        l->running = true;
        }
}

/* The children of ours (orphans the child left come to us) still running. */
static size_t our_children_running(void) {
        size_t n = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
                char path[64], *text = NULL;
                pid_t pid = (pid_t) strtol(e->d_name, NULL, 10);
                if (pid <= 1)
                        continue;
                snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
                if (glean_test_read_file(path, &text, NULL) < 0)
                        continue;
                const char *pp = strstr(text, "\nPPid:"), *st = strstr(text, "\nState:");
                if (pp && strtol(pp + 6, NULL, 10) == getpid() && st && !strstr(st, "zombie")) {
                        fprintf(stderr, "left running: pid %d\n%.200s\n", (int) pid, text);
                        n++;
                }
                free(text);
        }
        if (d)
                closedir(d);
        return n;
}

/* Processes in the network namespace with inode ino. */
static size_t in_namespace(unsigned long ino) {
        size_t n = 0;
        DIR *d = opendir("/proc");
        struct dirent *e;
        while (d && (e = readdir(d))) {
                char path[64];
                struct stat st;
                pid_t pid = (pid_t) strtol(e->d_name, NULL, 10);
                if (pid <= 1)
                        continue;
                snprintf(path, sizeof path, "/proc/%d/ns/net", (int) pid);
                if (stat(path, &st) == 0 && (unsigned long) st.st_ino == ino)
                        n++;
        }
        if (d)
                closedir(d);
        return n;
}

/* Runs the child's test name; fills *l with what it reported and how it ended. */
static bool run_child(const char *name, Left *l) {
        int fds[2];
        memset(l, 0, sizeof *l);
        if (pipe2(fds, O_CLOEXEC) < 0)
                return false;
        pid_t pid = fork();
        if (pid == 0) {
                dup2(fds[1], 100); /* not close-on-exec */
                if (!getenv("GLEAN_TEST_VERBOSE")) { /* its failures are on purpose: not in the log */
                        int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
                        dup2(null, 1);
                        dup2(null, 2);
                }
                setenv("POOL_CLEANUP_CHILD", "100", 1);
                execl("/proc/self/exe", "test-cleanup", "child", name, (char *) NULL);
                _exit(127);
        }
        close(fds[1]);
        char buf[4096];
        size_t n = 0;
        ssize_t k;
        while (n < sizeof buf - 1 && (k = read(fds[0], buf + n, sizeof buf - 1 - n)) > 0)
                n += (size_t) k;
        buf[n] = 0;
        close(fds[0]);
        waitpid(pid, &l->status, 0);
        parse_report(buf, l);
        return true;
}

/* Waits up to seconds for the pids to be gone (reaping those that came to us). */
static size_t wait_gone(const Left *l, int seconds) {
        size_t alive = 0;
        for (int t = 0; t <= seconds * 10; t++) {
                alive = 0;
                for (size_t i = 0; i < l->n_pids; i++) {
                        waitpid(l->pids[i], NULL, WNOHANG); /* an orphan that came to us */
                        char st = proc_state(l->pids[i]);
                        alive += st != 0 && st != 'Z';
                }
                if (!alive)
                        break;
                usleep(100000);
        }
        return alive;
}

static void check_nothing_left(const char *name, const Left *l, int seconds, bool dirs) {
        GLEAN_TEST_CHECK(l->running && l->n_pids == 2, "%s: the child got as far as %zu daemons, running job %d", name,
                         l->n_pids, l->running);
        size_t alive = wait_gone(l, seconds);
        GLEAN_TEST_CHECK(alive == 0, "%s: %zu of the daemons still run after the child's end", name, alive);
        /* The job (the agent's child) and anything else of the child's. */
        size_t orphans = 0;
        for (int t = 0; t <= seconds * 10 && (orphans = our_children_running()) > 0; t++)
                usleep(100000);
        GLEAN_TEST_CHECK(orphans == 0, "%s: %zu processes of the child left running", name, orphans);
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        for (size_t i = 0; i < l->n_dirs; i++) {
                bool there = access(l->dirs[i], F_OK) == 0;
                if (dirs)
                        GLEAN_TEST_CHECK(!there, "%s: %s left behind", name, l->dirs[i]);
                if (there)
                        remove_dir(l->dirs[i]);
        }
        for (size_t i = 0; i < l->n_ns; i++)
                GLEAN_TEST_CHECK(in_namespace(l->ns[i]) == 0, "%s: processes left in network namespace %lu", name,
                                 l->ns[i]);
        printf("\n    %s: child's wait status %d; daemons %zu, gone; namespaces %zu, empty\n", name, l->status,
               l->n_pids, l->n_ns);
}

static void test_fatal_assertion(void) {
        Left l;
        CU_ASSERT_FATAL(run_child("fatal", &l));
        GLEAN_TEST_CHECK(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 1, "the child: wait status %d", l.status);
        check_nothing_left("fatal assertion", &l, 5, true);
}

static void test_exit(void) {
        Left l;
        CU_ASSERT_FATAL(run_child("exit", &l));
        GLEAN_TEST_CHECK(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 3, "the child: wait status %d", l.status);
        /* The atexit hook: the same as the teardown. */
        check_nothing_left("exit()", &l, 5, true);
}

static void test_signal(void) {
        Left l;
        CU_ASSERT_FATAL(run_child("signal", &l));
        GLEAN_TEST_CHECK(WIFSIGNALED(l.status) && WTERMSIG(l.status) == SIGTERM, "the child: wait status %d",
                         l.status);
        /* The daemons got SIGTERM and stop by themselves (their grace: 10 s). */
        check_nothing_left("SIGTERM", &l, 20, false);
}

static void test_netns(void) {
        char why[200];
        if (netpool_unavailable(why, sizeof why)) {
                printf("\n    skipped: %s\n", why);
                return;
        }
        Left l;
        CU_ASSERT_FATAL(run_child("netns", &l));
        GLEAN_TEST_CHECK(WIFEXITED(l.status) && WEXITSTATUS(l.status) == 1, "the child: wait status %d", l.status);
        GLEAN_TEST_CHECK(l.n_ns == 2, "the child made %zu namespaces", l.n_ns);
        check_nothing_left("fatal assertion in namespaces", &l, 5, true);
}

int main(int argc, char **argv) {
        const char *child = getenv("POOL_CLEANUP_CHILD");
        if (child) {
                report_fd = atoi(child);
                fcntl(report_fd, F_SETFD, FD_CLOEXEC); /* the daemons must not hold the parent's pipe */
                unsetenv("POOL_CLEANUP_CHILD");
                signal(SIGPIPE, SIG_IGN);
                return glean_test_main(argc, argv, child_suites);
        }
        static CU_TestInfo tests[] = {
                { "a fatal assertion half-way: the per-test teardown stops and reaps the daemons, removes their directories",
                  test_fatal_assertion },
                { "exit() half-way: the atexit hook stops and reaps them", test_exit },
                { "SIGTERM half-way: the daemons get SIGTERM and go", test_signal },
                { "a fatal assertion half-way in network namespaces: nothing left in them", test_netns },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "cleanup", NULL, NULL, NULL, NULL, tests },
                CU_SUITE_INFO_NULL,
        };
        if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return glean_test_skip("cannot be a child subreaper: %s", strerror(errno));
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

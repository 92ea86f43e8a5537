/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-demo.c — `make demo` works: scripts/demo.sh, run with the binaries
 * being tested ($GLEAN, $GLEAN_AGENT, $GLEAN_NEGOTIATOR) under a time
 * limit, exits 0 having shown each part (the pool, the users' jobs
 * matched and running, the share by priority factor, the jobs frozen and
 * thawed, a job whose files travel and its event log, the listings, the
 * plot), and leaves nothing behind: neither its
 * users and their groups, nor its temporary directory, nor a process.
 *
 * Root only (the demo creates users); about 35 s.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test-util.h"

static const char *const users[] = { "glean-demo-ann", "glean-demo-bob" };

static const char *bin(const char *env, const char *def) {
        const char *p = getenv(env);
        return p && *p ? p : def;
}

/* The first line of out after marker, up to its end (static buffer). */
static const char *line_after(const char *out, const char *marker) {
        static char buf[512];
        const char *p = strstr(out, marker);
        if (!p)
                return NULL;
        p += strlen(marker);
        size_t n = strcspn(p, "\n");
        snprintf(buf, sizeof buf, "%.*s", (int) (n < sizeof buf ? n : sizeof buf - 1), p);
        return buf;
}

/* A process (other than us) whose command line holds needle: its pid, else 0. */
static pid_t process_with(const char *needle) {
        DIR *d = opendir("/proc");
        struct dirent *e;
        pid_t found = 0;
        while (d && !found && (e = readdir(d))) {
                char *end;
                long pid = strtol(e->d_name, &end, 10);
                if (*end || pid <= 0 || pid == (long) getpid())
                        continue;
                char path[64], *cmd = NULL;
                size_t len = 0;
                snprintf(path, sizeof path, "/proc/%ld/cmdline", pid);
                if (glean_test_read_file(path, &cmd, &len) < 0)
                        continue;
                for (size_t i = 0; i < len; i++)
                        if (!cmd[i])
                                cmd[i] = ' ';
                if (strstr(cmd, needle))
                        found = (pid_t) pid;
                free(cmd);
        }
        if (d)
                closedir(d);
        return found;
}

static bool has(const char *out, const char *what) {
        return strstr(out, what) != NULL;
}

static void test_demo(void) {
        char *argv[] = { "timeout", "--kill-after=10", "150", "bash", "scripts/demo.sh",
                         (char *) bin("GLEAN", "build/bin/glean"), NULL };
        GleanTestRun r;
        struct timespec t0, t1;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        CU_ASSERT_EQUAL_FATAL(glean_test_run(argv, &r), 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        double took = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) / 1e9;
        printf("\n    the demo took %.1f s (exit %d)\n", took, r.status);
        const char *out = r.out;

        /* A failure's messages are cut short: the whole run first. */
        if (r.status != 0)
                fprintf(stderr, "---- the demo's output ----\n%s\n---- its stderr ----\n%s\n---- end ----\n", out,
                        r.err);
        GLEAN_TEST_CHECK(r.status == 0, "demo.sh: exit %d (its output above)", r.status);
        /* the pool and the users */
        GLEAN_TEST_CHECK(has(out, "glean-agent (pid ") && has(out, "slot1@"), "no pool:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "useradd glean-demo-ann") && has(out, "useradd glean-demo-bob"), "no users:\n%s",
                         out);
        /* their first jobs matched and running as themselves */
        GLEAN_TEST_CHECK(has(out, "1 job(s) submitted to cluster 1.") && has(out, "1 job(s) submitted to cluster 2."),
                         "no first jobs:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "glean-demo-ann on ") && has(out, "glean-demo-bob on "),
                         "the jobs did not run as their owners:\n%s", out);
        /* the factors, and the share they give: ann 3 CPUs, bob 1 (of 4) */
        GLEAN_TEST_CHECK(has(out, "The priority factor of glean-demo-bob@demo.glean was set to 4"),
                         "no factor:\n%s", out);
        /* the job that carries its files: run in its sandbox with its input,
         * its output back, its event log HTCondor's */
        GLEAN_TEST_CHECK(has(out, "1 job(s) submitted to cluster 3."), "no travelling job:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "/execute/dir_slot1_") && has(out, "arrived: ") && has(out, "words.txt"),
                         "the travelling job did not run in its sandbox with its input:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "counted 22 words into counts.txt") && has(out, "glean-demo-ann") &&
                                 has(out, "the\n") ,
                         "its output did not come back:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "000 (003.000.000) ") && has(out, "001 (003.000.000) ") &&
                                 has(out, "005 (003.000.000) ") && has(out, "Normal termination (return value 0)"),
                         "no event log:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "4 job(s) submitted to cluster 4.") && has(out, "4 job(s) submitted to cluster 5."),
                         "no second jobs:\n%s", out);
        const char *bob = line_after(out, "glean-demo-bob@demo.glean  ");
        GLEAN_TEST_CHECK(bob && has(bob, "4.00"), "bob's userprio line: %s\n%s", bob ? bob : "(none)", out);
        /* frozen, then thawed */
        GLEAN_TEST_CHECK(has(out, "Claimed Suspended"), "no suspended slot:\n%s", out);
        /* STATE T with SIGSTOP; FROZEN yes in a frozen cgroup */
        GLEAN_TEST_CHECK(has(out, " T     -      ") || has(out, " yes    "), "no stopped or frozen process:\n%s", out);
        const char *thawed = strstr(out, "... and leaves.");
        GLEAN_TEST_CHECK(thawed && has(thawed, "Claimed Busy"), "not thawed:\n%s", out);
        /* completed: the listings and the plot */
        GLEAN_TEST_CHECK(has(out, "tick 5 at "), "no completed job's output:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "Total for all users: 0 jobs"), "the queue is not empty at the end:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "$ glean history") && has(out, "$ glean status") && has(out, "$ glean userprio"),
                         "a listing is missing:\n%s", out);
        if (access("/usr/bin/gnuplot", X_OK) == 0)
                GLEAN_TEST_CHECK(has(out, "CPUs in use by each user") && has(out, "usage charged to each user"),
                                 "no plot:\n%s", out);
        GLEAN_TEST_CHECK(has(out, "done in "), "did not end:\n%s", out);

        /* nothing left behind */
        for (size_t i = 0; i < sizeof users / sizeof *users; i++) {
                GLEAN_TEST_CHECK(getpwnam(users[i]) == NULL, "the user %s is left", users[i]);
                GLEAN_TEST_CHECK(getgrnam(users[i]) == NULL, "the group %s is left", users[i]);
        }
        const char *dir = line_after(out, "A private pool in ");
        GLEAN_TEST_CHECK_FATAL(dir && strncmp(dir, "/tmp/glean-demo.", 16) == 0, "no temporary directory named:\n%s",
                               out);
        char where[256];
        snprintf(where, sizeof where, "%s", dir);
        struct stat st;
        GLEAN_TEST_CHECK(stat(where, &st) < 0, "%s is left", where);
        pid_t left = process_with(where);
        GLEAN_TEST_CHECK(left == 0, "process %d of the demo (its command line names %s) is left", (int) left, where);
        left = process_with("scripts/demo.sh");
        GLEAN_TEST_CHECK(left == 0, "process %d running scripts/demo.sh is left", (int) left);
        glean_test_run_done(&r);
}

static CU_TestInfo tests[] = {
        { "demo", test_demo },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "demo", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (geteuid() != 0)
                return glean_test_skip("the demo runs as root: it creates two users");
        if (access("/usr/sbin/useradd", X_OK) < 0 || access("/usr/sbin/runuser", X_OK) < 0)
                return glean_test_skip("no useradd or runuser here");
        return glean_test_main(argc, argv, suites);
}

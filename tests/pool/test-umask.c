/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-umask.c — a job's output files honour its owner's umask: glean
 * submit records the submitter's umask in the job ad (Umask), the agent's
 * job child takes it instead of forcing 022, and the files the job and its
 * standard output make get the mode it says (077: 0600, 002: 0664).
 * The real glean-negotiator, glean-agent and glean, as nobody (root
 * needed; skipped otherwise).
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <sys/stat.h>

#include "pool-test.h"

static char *trimmed(char *s) {
        size_t n = s ? strlen(s) : 0;
        while (n && isspace((unsigned char) s[n - 1]))
                s[--n] = 0;
        return s;
}

static bool mode_is(const char *path, mode_t want) {
        struct stat st;
        if (!GLEAN_TEST_CHECK(stat(path, &st) == 0, "%s: %s", path, strerror(errno)))
                return false;
        return GLEAN_TEST_CHECK((st.st_mode & 0777) == want, "%s: mode %03o, want %03o", path,
                                (unsigned) (st.st_mode & 0777), (unsigned) want);
}

static void run_with_umask(Manager *m, mode_t mask, const char *tag, mode_t want) {
        char body[512], why[2048] = "", name[64];
        snprintf(body, sizeof body,
                 "executable = /bin/sh\narguments = \"-c 'echo hi; : > own.%s'\"\noutput = out.%s\nqueue\n", tag, tag);
        snprintf(name, sizeof name, "umask-%s.sub", tag);
        /* The submit file made first, readable by nobody: submit_as()
         * rewrites it under the umask below, which keeps its mode. */
        char sub[256];
        snprintf(sub, sizeof sub, "%s/%s", m->jobs, name);
        write_file(sub, "");
        chmod(sub, 0644);
        mode_t old = umask(mask); /* glean submit runs with it */
        int64_t c = submit_as(m, "nobody", name, body, why, sizeof why);
        umask(old);
        if (!GLEAN_TEST_CHECK(c > 0, "glean submit as nobody: %s", why))
                return;
        char id[32];
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        GleanTestRun r;
        CU_ASSERT_EQUAL(gl(&r, "wait", "--timeout", "60", id, NULL), 0);
        GLEAN_TEST_CHECK(r.status == 0, "glean wait %s: exit %d\n%s%s", id, r.status, r.out, r.err);
        glean_test_run_done(&r);
        char *u = trimmed(gl_out("history", id, "-af", "Umask", NULL));
        GLEAN_TEST_CHECK(u && strtol(u, NULL, 10) == (long) mask, "Umask of %s: \"%s\", want %ld", id, u ? u : "",
                         (long) mask);
        free(u);
        char path[256];
        snprintf(path, sizeof path, "%s/out.%s", m->jobs, tag);
        mode_is(path, want);
        snprintf(path, sizeof path, "%s/own.%s", m->jobs, tag);
        mode_is(path, want);
}

static void test_output_umask(void) {
        if (getuid() != 0) {
                printf("(not root: the job must be another user's; skipped)\n");
                return;
        }
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test", "NUM_CPUS = 1\n"), "agent")) {
                manager_stop(&m);
                return;
        }
        run_with_umask(&m, 077, "077", 0600);
        run_with_umask(&m, 002, "002", 0664);
        run_with_umask(&m, 022, "022", 0644);
        pool_stop(&a);
        manager_stop(&m);
}

int main(int argc, char **argv) {
        static CU_TestInfo tests[] = {
                { "a job's output files honour its owner's umask", test_output_umask },
                CU_TEST_INFO_NULL,
        };
        static CU_SuiteInfo suites[] = {
                { "pool umask", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, tests },
                CU_SUITE_INFO_NULL,
        };
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

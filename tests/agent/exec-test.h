/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-test.h — what the executor suites (test-exec.c, test-exec-cgroup.c)
 * share: driving the sd-event loop with timeouts, a pool of Runs, the
 * scratch and work directories under /tmp, the jobs' files, job ads, and
 * the orphans that come back to a subreaper.
 *
 * Include it after defining, in the suite: TIMEOUT (seconds any single
 * wait may take), the Run type (with at least calls, job and scratch) and
 * the globals event (sd_event *), base[64], execute_dir[128] and work[128].
 */
#pragma once

/* Needs _GNU_SOURCE, defined before the first #include. */

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/exec.h"
#include "test-util.h"

static inline double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* Runs the loop for about `seconds`. */
static inline void spin(double seconds) {
        double end = now() + seconds;

        while (now() < end)
                (void) sd_event_run(event, 20 * 1000);
}

/* Runs live in static storage, never reused: a test that stops at a fatal
 * assertion leaves its job running, and its callback must not write into a
 * stack frame that is gone. */
static Run run_pool[64];
static size_t run_pool_used;

static inline Run *run_new(void) {
        CU_ASSERT_FATAL(run_pool_used < sizeof(run_pool) / sizeof(run_pool[0]));
        return &run_pool[run_pool_used++];
}

/* Runs the loop until the job's exit was reported (true) or TIMEOUT. */
static inline bool wait_exit(Run *run) {
        double end = now() + TIMEOUT;

        while (run->calls == 0 && now() < end)
                (void) sd_event_run(event, 50 * 1000);
        return run->calls > 0;
}

/* After start() returned r: waits for the job's exit. */
static inline bool run_started(Run *run, int r) {
        GLEAN_TEST_CHECK(r == 0, "start: %d %s", r, agent_executor_last_error(executor));
        if (r < 0)
                return false;
        GLEAN_TEST_CHECK(wait_exit(run), "the job did not exit within %.0f s", TIMEOUT);
        return run->calls > 0;
}

/* Frees the job; run can then start another one. */
static inline void run_done(Run *run) {
        agent_job_free(run->job);
        free(run->scratch);
        *run = (Run) {};
}

static inline char *path_in(const char *dir, const char *name) {
        char *p;

        CU_ASSERT_FATAL(asprintf(&p, "%s/%s", dir, name) >= 0);
        return p;
}

/* Waits (running the loop) until work/name exists. */
static inline bool wait_file(const char *name) {
        char *p = path_in(work, name);
        double end = now() + TIMEOUT;
        bool ok;

        while (!(ok = access(p, F_OK) == 0) && now() < end)
                (void) sd_event_run(event, 20 * 1000);
        free(p);
        return ok;
}

/* Contents of work/name, malloc'd ("" when unreadable). */
static inline char *read_work(const char *name) {
        char *p = path_in(work, name), *s = NULL;

        if (glean_test_read_file(p, &s, NULL) < 0)
                s = strdup("");
        free(p);
        CU_ASSERT_FATAL(s != NULL);
        return s;
}

/* The pid in work/name, once the line is whole (a shell's "echo $! > f"
 * makes the file before it writes it): 0 if it never is within TIMEOUT. */
static inline pid_t read_pid(const char *name) {
        double end = now() + TIMEOUT;
        pid_t pid = 0;

        for (;;) {
                char *s = read_work(name);
                bool whole = strchr(s, '\n') != NULL;

                pid = (pid_t) atoi(s);
                free(s);
                if (whole || now() >= end)
                        return whole ? pid : 0;
                (void) sd_event_run(event, 5 * 1000);
        }
}

static inline void write_file(const char *path, const char *text, mode_t mode) {
        FILE *f = fopen(path, "w");

        CU_ASSERT_FATAL(f != NULL);
        fputs(text, f);
        fclose(f);
        CU_ASSERT_FATAL(chmod(path, mode) == 0);
}

/* The jobs' account: nobody when root, else ourselves. */
static inline const char *usable_owner(void) {
        static char name[256];

        if (geteuid() == 0)
                return "nobody";
        if (!name[0]) {
                struct passwd *pw = getpwuid(geteuid());

                CU_ASSERT_FATAL(pw != NULL);
                snprintf(name, sizeof(name), "%s", pw->pw_name);
        }
        return name;
}

/* A job ad: /bin/sh -c script in work, owned by usable_owner(), then name,
 * value pairs (strings), NULL-terminated; a NULL value deletes the
 * attribute. */
static inline ClassAd *job_ad(const char *script, ...) {
        ClassAd *ad = NULL;
        char *args;
        size_t n = 0;
        va_list ap;

        args = malloc(strlen(script) * 2 + 8);
        CU_ASSERT_FATAL(args != NULL);
        n += (size_t) sprintf(args, "-c '");
        for (const char *p = script; *p; p++) {
                if (*p == '\'')
                        args[n++] = '\'';
                args[n++] = *p;
        }
        args[n++] = '\'';
        args[n] = '\0';

        CU_ASSERT_FATAL(classad_new(&ad) == 0);
        CU_ASSERT_FATAL(classad_set_string(ad, "Cmd", "/bin/sh") == 0);
        CU_ASSERT_FATAL(classad_set_string(ad, "Arguments", args) == 0);
        CU_ASSERT_FATAL(classad_set_string(ad, "Owner", usable_owner()) == 0);
        CU_ASSERT_FATAL(classad_set_string(ad, "Iwd", work) == 0);
        free(args);
        va_start(ap, script);
        for (const char *name = va_arg(ap, const char *); name; name = va_arg(ap, const char *)) {
                const char *v = va_arg(ap, const char *);

                if (v) {
                        CU_ASSERT_FATAL(classad_set_string(ad, name, v) == 0);
                } else
                        (void) classad_delete(ad, name);
        }
        va_end(ap);
        return ad;
}

/* How a background process of a job ended: as this process is a subreaper,
 * the orphan is ours to reap. Returns the wait status, or -1 when someone
 * else reaped it (its own shell) and it is gone, or -2 if still there. */
static inline int reap_orphan(pid_t pid) {
        double end = now() + TIMEOUT;
        int status;

        for (;;) {
                pid_t r = waitpid(pid, &status, WNOHANG);

                if (r == pid)
                        return status;
                if (r < 0 && errno == ECHILD)
                        return kill(pid, 0) < 0 && errno == ESRCH ? -1 : -2;
                if (now() >= end)
                        return -2;
                (void) sd_event_run(event, 20 * 1000);
        }
}

/* Makes base from tmpl (mkdtemp, 0755), base/execute (0755) and base/work
 * (0777), and the event loop: 0, or -1. */
static inline int exec_test_dirs(const char *tmpl) {
        snprintf(base, sizeof(base), "%s", tmpl);
        if (!mkdtemp(base) || chmod(base, 0755) < 0)
                return -1;
        snprintf(execute_dir, sizeof(execute_dir), "%s/execute", base);
        snprintf(work, sizeof(work), "%s/work", base);
        if (mkdir(execute_dir, 0755) < 0 || chmod(execute_dir, 0755) < 0 || mkdir(work, 0777) < 0 ||
            chmod(work, 0777) < 0)
                return -1;
        return sd_event_new(&event) < 0 ? -1 : 0;
}

/* The end common to both suites: the executor, the loop, base, and the
 * orphans that came to us. */
static inline int exec_test_cleanup(void) {
        agent_executor_free(executor);
        executor = NULL;
        event = sd_event_unref(event);
        if (base[0] && agent_remove_tree(base) < 0)
                return -1;
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
        return 0;
}

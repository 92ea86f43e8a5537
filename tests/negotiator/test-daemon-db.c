/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-db.c — the real glean-negotiator and its database file:
 *
 *   - an existing NEGOTIATOR_DATABASE of 0 bytes, or truncated to its
 *     first 100 bytes, is refused: the daemon exits non-zero at once, the
 *     reason naming the file, and the file is left as it was;
 *   - --init-db initialises the 0-byte file (and the daemon then queues
 *     jobs); a missing file is created without it;
 *   - started with umask 0, the database, its -wal and its -shm are mode
 *     0600.
 */
#define _GNU_SOURCE
#include "daemon-test.h"

/* The daemon ended by itself within seconds: its exit code (-1: still
 * running, 128 + signal when killed). */
static int exit_within(Rig *r, int seconds) {
        for (int i = 0; r->pid > 0 && i < seconds * 20; i++) {
                int status;
                if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
                        r->pid = 0;
                        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
                }
                usleep(50000);
        }
        return -1;
}

/* Starts the daemon without waiting for it to come up. */
static void start_bare(Rig *r) {
        r->pid = fork();
        if (r->pid == 0) {
                int fd = open(r->log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
                if (fd >= 0) {
                        dup2(fd, 1);
                        dup2(fd, 2);
                }
                setenv("GLEAN_LOG", "stderr", 1);
                unsetenv("NOTIFY_SOCKET");
                execl(nego_bin(), nego_bin(), "--config", r->conf, r->arg, (char *) NULL);
                _exit(127);
        }
        for (size_t i = 0; r->pid > 0 && i < sizeof started / sizeof *started; i++)
                if (started[i] <= 0) {
                        started[i] = r->pid;
                        break;
                }
}

static void db_path(const Rig *r, const char *suffix, char *buf, size_t len) {
        snprintf(buf, len, "%s/negotiator.db%s", r->dir, suffix);
}

static void write_file(const char *path, const char *data, size_t len) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_FATAL(write(fd, data, len) == (ssize_t) len);
        close(fd);
}

/* The daemon refuses the file at path as it is: exits 1 within 5 s, the
 * log naming the path with reason; the file unchanged. */
static void expect_refused(Rig *r, const char *path, const char *reason) {
        char *before = NULL, *after = NULL, *log;
        size_t before_len = 0, after_len = 0;
        char needle[512];

        CU_ASSERT_EQUAL_FATAL(glean_test_read_file(path, &before, &before_len), 0);
        start_bare(r);
        int code = exit_within(r, 5);
        log = rig_log(r);
        snprintf(needle, sizeof needle, "accounts database %s: %s", path, reason);
        GLEAN_TEST_CHECK(code == 1 && strstr(log, needle), "exit %d, want 1 with '%s' in the log:\n%s", code, needle,
                         log);
        free(log);
        CU_ASSERT_EQUAL(glean_test_read_file(path, &after, &after_len), 0);
        GLEAN_TEST_CHECK(after && after_len == before_len && memcmp(before, after, after_len) == 0,
                         "the refused file changed (%zu bytes, was %zu)", after_len, before_len);
        free(before);
        free(after);
        rig_kill(r);
}

static void test_empty_refused(void) {
        Rig r;
        char path[160];

        CU_ASSERT_FATAL(rig_init(&r, NULL));
        db_path(&r, "", path, sizeof path);
        write_file(path, "", 0);
        expect_refused(&r, path, "is empty (0 bytes) and holds no glean schema: refusing to start on it");
        rig_done(&r, false);
}

static void test_truncated_refused(void) {
        Rig r;
        char path[160], *data = NULL;
        size_t len = 0;

        CU_ASSERT_FATAL(rig_init(&r, NULL));
        /* A real database: the daemon made it, a job in its queue. */
        CU_ASSERT_FATAL(rig_start(&r));
        int u = user_connect(&r);
        CU_ASSERT(user_submit(u, 2) > 0);
        close(u);
        CU_ASSERT_EQUAL(rig_stop(&r), 0);
        db_path(&r, "", path, sizeof path);
        CU_ASSERT_EQUAL_FATAL(glean_test_read_file(path, &data, &len), 0);
        CU_ASSERT_FATAL(len > 100);
        write_file(path, data, 100);
        free(data);
        /* With --init-db too: a truncated file is not an empty one. */
        expect_refused(&r, path, "");
        r.arg = "--init-db";
        expect_refused(&r, path, "");
        rig_done(&r, false);
}

static void test_init_db(void) {
        Rig r;
        char path[160];
        struct stat st;

        CU_ASSERT_FATAL(rig_init(&r, NULL));
        db_path(&r, "", path, sizeof path);
        write_file(path, "", 0);
        r.arg = "--init-db";
        GLEAN_TEST_CHECK_FATAL(rig_start(&r), "--init-db on a 0-byte file did not start");
        int u = user_connect(&r);
        int64_t c = user_submit(u, 3);
        CU_ASSERT(c > 0);
        close(u);
        CU_ASSERT_EQUAL(rig_stop(&r), 0);
        CU_ASSERT(stat(path, &st) == 0 && st.st_size > 0);
        /* Started again without the flag: the queue is there. */
        r.arg = NULL;
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        CU_ASSERT_EQUAL(job_status(u, c, 2), 1);
        close(u);
        rig_done(&r, false);
}

static void test_modes(void) {
        Rig r;
        mode_t old;

        CU_ASSERT_FATAL(rig_init(&r, NULL));
        old = umask(0);
        bool up = rig_start(&r);
        umask(old);
        CU_ASSERT_FATAL(up);
        int u = user_connect(&r);
        CU_ASSERT(user_submit(u, 1) > 0); /* a commit: the WAL and its index exist */
        close(u);
        for (size_t i = 0; i < 3; i++) {
                const char *suffix = (const char *[]) { "", "-wal", "-shm" }[i];
                char path[160];
                struct stat st;

                db_path(&r, suffix, path, sizeof path);
                bool there = stat(path, &st) == 0;
                GLEAN_TEST_CHECK(there && (st.st_mode & 07777) == 0600, "%s: %s %o, want mode 600", path,
                                 there ? "mode" : "missing", there ? (unsigned) (st.st_mode & 07777) : 0u);
        }
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "a 0-byte database is refused", test_empty_refused },
        { "a truncated database is refused", test_truncated_refused },
        { "--init-db initialises a 0-byte database", test_init_db },
        { "the database, its WAL and SHM are mode 0600 under umask 0", test_modes },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator database", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

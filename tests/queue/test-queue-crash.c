/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-queue-crash.c — the kill -9 test of the job queue: no acknowledged
 * submission is lost and nothing is half-written, whenever the central
 * manager dies.
 *
 * A child opens the queue and submits cluster after cluster (cluster C has
 * 1 + C * 7919 % 13 procs, each with Args = "C.P"), every fourth pair in
 * one batch, and after each acknowledged submit (the batch's commit)
 * writes the cluster id to a pipe; every third cluster's proc 0 is then
 * removed (to the history). The parent kills it with SIGKILL after a
 * random delay (fixed seed), reopens the database as the daemon would and
 * checks: every acknowledged cluster has all its procs, in the queue or
 * the history, each with its own Args; the cluster after the last
 * acknowledged one is there whole or not at all (its commit may have
 * landed unreported); none beyond. The next round's child goes on from
 * the reopened queue.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "queue-test.h"
#include "test-util.h"

#define SEED UINT64_C(0x9ee0e00c4a5e11)
#define ROUNDS 24
#define MAX_DELAY_US 60000

static char tmpdir[64];

static int64_t procs_of(int64_t c) {
        return 1 + c * 7919 % 13;
}

static uint64_t splitmix64(uint64_t *x) {
        uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

static int submit_one(JobQueue *q, int64_t *ret) {
        int64_t c = queue_next_cluster(q), n = procs_of(c);
        ClassAd *cluster = qt_cluster_ad("Batch = \"crash\"");
        ClassAd **procs = calloc((size_t) n, sizeof(*procs));
        int r;

        for (int64_t p = 0; p < n; p++) {
                char text[96];
                snprintf(text, sizeof(text), "[ Args = \"%" PRId64 ".%" PRId64 "\" ]", c, p);
                procs[p] = qt_ad(text);
        }
        r = queue_submit(q, qt_user("alice"), cluster, procs, (size_t) n, QT_T0 + (double) c, ret, NULL, 0);
        if (r >= 0 && *ret != c)
                r = -EBADMSG;
        for (int64_t p = 0; p < n; p++)
                classad_free(procs[p]);
        free(procs);
        classad_free(cluster);
        return r;
}

static _Noreturn void crash_child(const char *path, int fd) {
        char why[512] = "";
        QT t;

        if (!qt_open_why(&t, path, NULL, why, sizeof(why)))
                _exit(10);
        for (unsigned k = 0;; k++) {
                int64_t ids[2];
                int n = k % 4 == 3 ? 2 : 1;

                if (n == 2 && queue_batch_begin(t.q) < 0)
                        _exit(11);
                for (int i = 0; i < n; i++)
                        if (submit_one(t.q, &ids[i]) < 0)
                                _exit(12);
                if (n == 2 && queue_batch_commit(t.q, NULL, 0) < 0)
                        _exit(13);
                for (int i = 0; i < n; i++) {
                        if (write(fd, &ids[i], sizeof(ids[i])) != (ssize_t) sizeof(ids[i]))
                                _exit(14);
                        if (ids[i] % 3 == 0 &&
                            queue_job_remove(t.q, qt_admin(), (JobId) { ids[i], 0 }, NULL, QT_T0, NULL, NULL, 0) < 0)
                                _exit(15);
                }
        }
}

static bool drain(int fd, uint64_t deadline_us, int64_t *last) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                struct timespec now, tmo;
                uint64_t now_us;
                int64_t v;
                ssize_t n;

                if (deadline_us) {
                        clock_gettime(CLOCK_MONOTONIC, &now);
                        now_us = (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000;
                        if (now_us >= deadline_us)
                                return true;
                        tmo = (struct timespec) { (time_t) ((deadline_us - now_us) / 1000000),
                                                  (long) ((deadline_us - now_us) % 1000000) * 1000 };
                        if (ppoll(&p, 1, &tmo, NULL) <= 0)
                                continue;
                }
                n = read(fd, &v, sizeof(v));
                if (n == 0)
                        return true;
                if (n < 0 && errno == EINTR)
                        continue;
                if (!GLEAN_TEST_CHECK(n == (ssize_t) sizeof(v) && v == *last + 1, "report %" PRId64 " after %" PRId64,
                                      v, *last))
                        return false;
                *last = v;
        }
}

/* Whether job c.p is there (queue or history) with its own Args. */
static bool job_there(JobQueue *q, int64_t c, int64_t p, bool *ret_bad) {
        char want[64];
        Job *j = queue_find(q, (JobId) { c, p });
        ClassAd *h = NULL;
        const ClassAd *ad = j ? j->ad : NULL;
        bool there;

        if (!ad && queue_history_find(q, (JobId) { c, p }, &h) == 0)
                ad = h;
        there = ad != NULL;
        snprintf(want, sizeof(want), "%" PRId64 ".%" PRId64, c, p);
        *ret_bad = there && (strcmp(qt_str(ad, "Args"), want) != 0 || qt_int(ad, "ClusterId") != c ||
                             qt_int(ad, "ProcId") != p);
        classad_free(h);
        return there;
}

/* 1: every proc of c there; 0: none; -1: some (half-written) or wrong. */
static int cluster_state(JobQueue *q, int64_t c) {
        int64_t n = procs_of(c), found = 0;

        for (int64_t p = 0; p < n; p++) {
                bool bad;
                found += job_there(q, c, p, &bad);
                if (bad)
                        return -1;
        }
        {
                bool bad;
                if (job_there(q, c, n, &bad))
                        return -1; /* a proc too many */
        }
        return found == n ? 1 : found == 0 ? 0 : -1;
}

static void test_kill9(void) {
        char path[128], why[512] = "";
        uint64_t x = SEED;
        int64_t acked = 0, landed_unreported = 0, early = 0;

        snprintf(path, sizeof(path), "%s/crash.db", tmpdir);
        for (int round = 0; round < ROUNDS; round++) {
                uint64_t delay = splitmix64(&x) % 4 == 0 ? splitmix64(&x) % 3000 : splitmix64(&x) % MAX_DELAY_US;
                int64_t last = acked, c;
                struct timespec now;
                int fds[2], status;
                pid_t pid;
                QT t;

                CU_ASSERT_EQUAL_FATAL(pipe2(fds, O_CLOEXEC), 0);
                fflush(NULL);
                pid = fork();
                CU_ASSERT_FATAL(pid >= 0);
                if (pid == 0) {
                        close(fds[0]);
                        crash_child(path, fds[1]);
                }
                close(fds[1]);
                clock_gettime(CLOCK_MONOTONIC, &now);
                bool ok = drain(fds[0], (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000 + delay, &last);
                CU_ASSERT_EQUAL(kill(pid, SIGKILL), 0);
                CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
                ok = ok && drain(fds[0], 0, &last);
                close(fds[0]);
                GLEAN_TEST_CHECK_FATAL(ok && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                                       "round %d: the child ended by itself (status %#x)", round, (unsigned) status);
                early += last == acked;

                GLEAN_TEST_CHECK_FATAL(qt_open_why(&t, path, NULL, why, sizeof(why)), "round %d: reopen: %s", round,
                                       why);
                for (c = 1; c <= last; c++)
                        GLEAN_TEST_CHECK_FATAL(cluster_state(t.q, c) == 1,
                                               "round %d: acknowledged cluster %" PRId64 " is not all there (%d)",
                                               round, c, cluster_state(t.q, c));
                int s1 = cluster_state(t.q, last + 1), s2 = cluster_state(t.q, last + 2),
                    s3 = cluster_state(t.q, last + 3);
                /* A batch of two may have landed unreported. */
                GLEAN_TEST_CHECK_FATAL(s1 >= 0 && s2 >= 0 && s3 == 0 && (s2 == 0 || s1 == 1),
                                       "round %d after %" PRId64 ": clusters after it %d %d %d", round, last, s1, s2,
                                       s3);
                acked = last + s1 + s2;
                landed_unreported += s1 + s2;
                CU_ASSERT_EQUAL(queue_next_cluster(t.q), acked + 1);
                qt_close(&t);
        }
        printf("\n      %d kills, %" PRId64 " clusters acknowledged; %" PRId64 " kills before the first of their "
               "round, %" PRId64 " clusters found committed but unreported\n    ",
               ROUNDS, acked, early, landed_unreported);
        CU_ASSERT(acked > 0);
}

static int suite_init(void) {
        return qt_mkdtemp(tmpdir, sizeof(tmpdir));
}

static int suite_cleanup(void) {
        return qt_rmtree(tmpdir);
}

static CU_TestInfo tests[] = {
        { "kill9", test_kill9 },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "queue_crash", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

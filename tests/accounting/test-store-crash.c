/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-store-crash.c — the kill -9 test of the accounts store
 * (accounting/store.h): after a SIGKILL at any moment, the store holds
 * exactly the state of its last committed change.
 *
 * A child process opens the store and applies changes 1, 2, 3, ...: each
 * is one transaction that puts and deletes a few records, claims and a
 * meta value, drawn from a pseudo-random generator seeded with the change's
 * number alone, and sets the meta value "seq" to that number; after each
 * commit it writes the number to a pipe. The parent kills it with SIGKILL
 * after a delay (from a fixed seed: the kill moments are the only thing
 * that is not deterministic), reopens the store as the central manager
 * would after a crash and compares every row, exactly, with the state
 * after change n, or n + 1 (its commit landed, the report did not), n
 * being the last number read from the pipe; the states are computed by
 * applying the same changes to a model in memory. The next round's child
 * resumes after the "seq" it finds at open, so the rounds make one
 * sequence.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
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

#include "store-test.h"
#include "test-util.h"

#define SEED UINT64_C(0x5eed00aacc0047)
#define ROUNDS 30
#define MAX_DELAY_US 50000
#define N_NAMES 40
#define N_CLAIMS 80

static char tmpdir[64];

/* The keys the changes draw from: a few with quotes and non-ASCII text. */
static char names[N_NAMES][64];
static char claim_ids[N_CLAIMS][64];

static void make_keys(void) {
        for (int i = 0; i < N_NAMES; i++) {
                if (i % 7 == 3)
                        snprintf(names[i], sizeof(names[i]), "o'brien \"%02d\"@pool.example", i);
                else if (i % 5 == 1)
                        snprintf(names[i], sizeof(names[i]), "zoë.%02d@例え.jp", i);
                else
                        snprintf(names[i], sizeof(names[i]), "group_%d.user%02d@pool.example", i % 3, i);
        }
        for (int i = 0; i < N_CLAIMS; i++)
                snprintf(claim_ids[i], sizeof(claim_ids[i]), "<10.0.%d.%d:9618>#1700000000#%d#...", i / 10,
                         i % 10, i);
}

/* ---- the changes and the model ---- */

typedef struct Model {
        uint64_t seq; /* the last change applied (0: none, and no "seq" meta value) */
        bool has_record[N_NAMES];
        AcctRecord record[N_NAMES]; /* names point into names[] */
        bool has_claim[N_CLAIMS];
        AcctClaimRow claim[N_CLAIMS];
        bool has_note;
        double note;
} Model;

static uint64_t splitmix64(uint64_t *x) {
        uint64_t z = (*x += UINT64_C(0x9e3779b97f4a7c15));
        z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
        return z ^ (z >> 31);
}

/* A double with all 53 bits of mantissa in use, of either sign. */
static double random_double(uint64_t *x) {
        double mantissa = (double) (splitmix64(x) >> 11);
        int exponent = (int) (splitmix64(x) % 64) - 32 - 53;
        double d = ldexp(mantissa, exponent);

        return splitmix64(x) & 1 ? -d : d;
}

/* Applies change k to m and, when s is not NULL, writes it to s (inside
 * a transaction the caller opened). Returns the store's error, or 0. */
static int apply_change(Model *m, uint64_t k, AcctStore *s) {
        uint64_t x = SEED ^ (k * UINT64_C(0xd1b54a32d192ed03));
        unsigned n_ops = 1 + (unsigned) (splitmix64(&x) % 5);
        int r = 0;

        for (unsigned op = 0; op < n_ops && r >= 0; op++) {
                unsigned kind = (unsigned) (splitmix64(&x) % 8);
                unsigned i = (unsigned) (splitmix64(&x) % N_NAMES), j = (unsigned) (splitmix64(&x) % N_CLAIMS);

                switch (kind) {
                case 0:
                case 1:
                case 2: {
                        AcctRecord rec = { .name = names[i], .is_group = splitmix64(&x) & 1 };
                        double *fields[] = { &rec.priority,    &rec.as_of,      &rec.accumulated, &rec.weighted_accumulated,
                                             &rec.begin_usage, &rec.last_usage, &rec.factor };
                        for (size_t f = 0; f < sizeof(fields) / sizeof(fields[0]); f++)
                                *fields[f] = random_double(&x);
                        m->has_record[i] = true;
                        m->record[i] = rec;
                        r = s ? acct_store_put_record(s, &rec) : 0;
                        break;
                }
                case 3:
                        m->has_record[i] = false;
                        r = s ? acct_store_delete_record(s, names[i]) : 0;
                        break;
                case 4:
                case 5: {
                        AcctClaimRow c = { claim_ids[j], names[i], 0, 0 };
                        c.weight = random_double(&x);
                        c.begin = random_double(&x);
                        m->has_claim[j] = true;
                        m->claim[j] = c;
                        r = s ? acct_store_put_claim(s, &c) : 0;
                        break;
                }
                case 6:
                        m->has_claim[j] = false;
                        r = s ? acct_store_delete_claim(s, claim_ids[j]) : 0;
                        break;
                default:
                        m->has_note = true;
                        m->note = random_double(&x);
                        r = s ? acct_store_set_meta(s, "note", m->note) : 0;
                        break;
                }
        }
        m->seq = k;
        if (r >= 0 && s)
                r = acct_store_set_meta(s, "seq", (double) k);
        return r;
}

static bool model_eq(const Model *a, const Model *b) {
        if (a->seq != b->seq || a->has_note != b->has_note || (a->has_note && !store_test_same(a->note, b->note)))
                return false;
        for (int i = 0; i < N_NAMES; i++)
                if (a->has_record[i] != b->has_record[i] ||
                    (a->has_record[i] && !store_test_record_eq(&a->record[i], &b->record[i])))
                        return false;
        for (int j = 0; j < N_CLAIMS; j++)
                if (a->has_claim[j] != b->has_claim[j] ||
                    (a->has_claim[j] && !store_test_claim_eq(&a->claim[j], &b->claim[j])))
                        return false;
        return true;
}

static int key_index(const char *key, const char (*keys)[64], int n) {
        for (int i = 0; i < n; i++)
                if (strcmp(key, keys[i]) == 0)
                        return i;
        return -1;
}

/* ---- the store read into a model ---- */

static int model_record(void *userdata, const AcctRecord *r) {
        Model *m = userdata;
        int i = key_index(r->name, names, N_NAMES);

        if (i < 0)
                return -EBADMSG;
        m->has_record[i] = true;
        m->record[i] = *r;
        m->record[i].name = names[i];
        return 0;
}

static int model_claim(void *userdata, const AcctClaimRow *c) {
        Model *m = userdata;
        int j = key_index(c->id, claim_ids, N_CLAIMS), i = key_index(c->submitter, names, N_NAMES);

        if (j < 0 || i < 0)
                return -EBADMSG;
        m->has_claim[j] = true;
        m->claim[j] = (AcctClaimRow) { claim_ids[j], names[i], c->weight, c->begin };
        return 0;
}

static int model_meta(void *userdata, const char *key, double value) {
        Model *m = userdata;

        if (strcmp(key, "seq") == 0 && value >= 1 && value == floor(value))
                m->seq = (uint64_t) value;
        else if (strcmp(key, "note") == 0) {
                m->has_note = true;
                m->note = value;
        } else
                return -EBADMSG;
        return 0;
}

static int model_load(AcctStore *s, Model *ret, char *why, size_t whylen) {
        *ret = (Model) {};
        return acct_store_load(s, &(AcctStoreLoad) { model_record, model_claim, model_meta, ret }, why, whylen);
}

/* ---- the child ---- */

/* Resumes the sequence after the store's "seq" and never stops: commits
 * change after change, reporting each on fd, until it is killed. */
static _Noreturn void crash_child(const char *path, int fd) {
        AcctStore *s = NULL;
        Model scratch;

        if (acct_store_open(path, false, NULL, &s, NULL, 0) < 0 || model_load(s, &scratch, NULL, 0) < 0)
                _exit(10);
        for (uint64_t k = scratch.seq + 1;; k++) {
                if (acct_store_begin(s) < 0 || apply_change(&scratch, k, s) < 0 || acct_store_commit(s, NULL, 0) < 0)
                        _exit(11);
                if (write(fd, &k, sizeof(k)) != (ssize_t) sizeof(k))
                        _exit(12);
        }
}

/* Reads the child's reports until the deadline (a CLOCK_MONOTONIC time in
 * µs; 0: until end of file), checking they follow each other from *last. */
static bool drain_reports(int fd, uint64_t deadline_us, uint64_t *last) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                struct timespec now, tmo;
                uint64_t now_us, v;
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
                if (!GLEAN_TEST_CHECK(n == (ssize_t) sizeof(v) && v == *last + 1,
                                      "report %" PRIu64 " after %" PRIu64 " (read %zd)", v, *last, n))
                        return false;
                *last = v;
        }
}

static void test_kill9(void) {
        char path[128];
        Model expect = {}, next, got;
        uint64_t stored = 0, x = SEED, landed_unreported = 0, killed_early = 0;

        snprintf(path, sizeof(path), "%s/accounts.db", tmpdir);
        make_keys();

        for (int round = 0; round < ROUNDS; round++) {
                /* A quarter of the kills early (in the open: recovery of the last crash), the rest anywhere. */
                uint64_t delay_us = splitmix64(&x) % 4 == 0 ? splitmix64(&x) % 2000 : splitmix64(&x) % (MAX_DELAY_US + 1);
                uint64_t n = stored, start_us;
                char why[512] = "";
                AcctStore *s = NULL;
                struct timespec now;
                int fds[2], status, r;
                pid_t pid;

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
                start_us = (uint64_t) now.tv_sec * 1000000 + (uint64_t) now.tv_nsec / 1000;
                bool ok = drain_reports(fds[0], start_us + delay_us, &n);
                CU_ASSERT_EQUAL(kill(pid, SIGKILL), 0);
                CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
                ok = ok && drain_reports(fds[0], 0, &n);
                close(fds[0]);
                GLEAN_TEST_CHECK_FATAL(ok && WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                                       "round %d: the child ended by itself (status %#x)", round, (unsigned) status);
                killed_early += n == stored;

                /* Reopened as after a crash: the state after change n, or n + 1. */
                r = acct_store_open(path, false, NULL, &s, why, sizeof(why));
                GLEAN_TEST_CHECK_FATAL(r == 0, "round %d: reopening: %d (%s)", round, r, why);
                r = model_load(s, &got, why, sizeof(why));
                acct_store_close(s);
                GLEAN_TEST_CHECK_FATAL(r == 0, "round %d: loading: %d (%s)", round, r, why);

                while (expect.seq < n)
                        apply_change(&expect, expect.seq + 1, NULL);
                next = expect;
                apply_change(&next, n + 1, NULL);
                if (model_eq(&got, &next)) {
                        expect = next;
                        landed_unreported++;
                } else
                        GLEAN_TEST_CHECK_FATAL(model_eq(&got, &expect),
                                               "round %d (killed after %" PRIu64 " µs): the store holds seq %" PRIu64
                                               " but not exactly the state after change %" PRIu64 " or %" PRIu64,
                                               round, delay_us, got.seq, n, n + 1);
                stored = expect.seq;
        }

        printf("\n      %d kills, %" PRIu64 " changes committed; %" PRIu64 " kills before the first commit of their "
               "round, %" PRIu64 " with the change in flight found committed (unreported)\n    ",
               ROUNDS, stored, killed_early, landed_unreported);
        CU_ASSERT(stored > 0);
}

static int suite_init(void) {
        return store_test_mkdtemp(tmpdir, sizeof(tmpdir));
}

static int suite_cleanup(void) {
        return store_test_rmtree(tmpdir);
}

static CU_TestInfo tests[] = {
        { "kill9", test_kill9 },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "store_crash", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

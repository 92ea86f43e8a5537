/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-test.h — what the job queue's suites share: a private directory,
 * an Accountant and a JobQueue opened on a database there (or in memory)
 * from a configuration text, job ads from submit-like text, and lookups.
 *
 * Every function is static inline. Needs _GNU_SOURCE before the first
 * #include.
 */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "accounting.h"
#include "classad.h"
#include "config.h"
#include "queue/queue.h"
#include "test-util.h"

#define QT_T0 1700000000.0
#define QT_DOMAIN "pool.example"

static inline int qt_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static inline int qt_mkdtemp(char *dir, size_t len) {
        snprintf(dir, len, "/tmp/glean-queue-test.XXXXXX");
        return mkdtemp(dir) ? 0 : 1;
}

static inline int qt_rmtree(const char *dir) {
        return nftw(dir, qt_remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : 1;
}

/* A scratch directory for the test program: qt_suite_init and
 * qt_suite_cleanup as its suite's init and cleanup; qt_new_db() a new
 * database path in it at each call. */
static inline char *qt_dir(void) {
        static char dir[64];
        return dir;
}

static inline int qt_suite_init(void) {
        return qt_mkdtemp(qt_dir(), 64);
}

static inline int qt_suite_cleanup(void) {
        return qt_rmtree(qt_dir());
}

static inline const char *qt_new_db(void) {
        static char path[128];
        static int seq;
        snprintf(path, sizeof(path), "%s/q%d.db", qt_dir(), ++seq);
        return path;
}

/* The pair a test works with. */
typedef struct QT {
        Accountant *a;
        JobQueue *q;
} QT;

/* Opens the accounts and the queue at path (NULL: in memory) with the
 * configuration text extra on top of UID_DOMAIN = pool.example; false and
 * why on failure. */
static inline bool qt_open_why(QT *t, const char *path, const char *extra, char *why, size_t whylen) {
        Config *cfg = NULL;
        ConfigError err = {};
        AcctSettings s = {};
        AcctGroups *g = NULL;
        QueueSettings qs = {};
        int r;

        *t = (QT) {};
        if (config_new(&cfg) < 0)
                return false;
        r = config_load_string(cfg, "UID_DOMAIN = " QT_DOMAIN "\n", "<base>", &err);
        if (r >= 0 && extra)
                r = config_load_string(cfg, extra, "<test>", &err);
        if (r >= 0)
                r = acct_settings_from_config(cfg, &s, &err);
        if (r >= 0 && (r = acct_groups_from_config(cfg, &g, &err)) < 0)
                acct_settings_clear(&s);
        if (r >= 0 && (r = queue_settings_from_config(cfg, &qs, &err)) < 0) {
                acct_settings_clear(&s);
                acct_groups_free(g);
        }
        config_free(cfg);
        if (r < 0) {
                snprintf(why, whylen, "config: %.400s", err.msg);
                return false;
        }
        r = acct_open(path, 0, queue_schema(), &s, g, QT_T0, &t->a, why, whylen);
        if (r < 0) {
                queue_settings_clear(&qs);
                return false;
        }
        r = queue_open(t->a, &qs, &t->q, why, whylen);
        if (r < 0) {
                acct_close(t->a);
                t->a = NULL;
                return false;
        }
        return true;
}

static inline void qt_open(QT *t, const char *path, const char *extra) {
        char why[512] = "";
        GLEAN_TEST_CHECK_FATAL(qt_open_why(t, path, extra, why, sizeof(why)), "open %s: %s", path ? path : "(memory)",
                               why);
}

static inline void qt_close(QT *t) {
        queue_close(t->q);
        acct_close(t->a);
        *t = (QT) {};
}

/* An ad from bracketed text; fatal on a parse error. */
static inline ClassAd *qt_ad(const char *text) {
        ClassAd *ad = NULL;
        CaError err = {};
        int r = classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err);

        GLEAN_TEST_CHECK_FATAL(r == 0, "parse '%s': %s", text, err.msg);
        return ad;
}

/* The cluster ad every test job shares, with extra attributes (bracketed
 * text's inside, may be ""). */
static inline ClassAd *qt_cluster_ad(const char *extra) {
        char text[4096];

        snprintf(text, sizeof(text),
                 "[ MyType = \"Job\"; TargetType = \"Machine\"; Cmd = \"/bin/true\"; Iwd = \"/tmp\";"
                 " Requirements = TARGET.OpSys == \"LINUX\"; RequestCpus = 1; RequestMemory = 128;"
                 " JobUniverse = 5; Owner = \"mallory\"; ClusterId = 999; %s ]",
                 extra ? extra : "");
        return qt_ad(text);
}

static inline const QueueRequester *qt_user(const char *name) {
        static QueueRequester r[4];
        static int k;
        QueueRequester *q = &r[k++ % 4];

        *q = (QueueRequester) { .user = name, .uid = 1000, .admin = false };
        return q;
}

static inline const QueueRequester *qt_admin(void) {
        static const QueueRequester root = { .user = "root", .uid = 0, .admin = true };
        return &root;
}

/* Submits n procs (each without its own attributes) of a cluster with
 * extra; returns the cluster id (fatal on failure). */
static inline int64_t qt_submit(JobQueue *q, const char *user, const char *extra, size_t n, double now) {
        ClassAd *c = qt_cluster_ad(extra);
        char why[512] = "";
        int64_t id = 0;
        int r = queue_submit(q, qt_user(user), c, NULL, n, now, &id, why, sizeof(why));

        classad_free(c);
        GLEAN_TEST_CHECK_FATAL(r == 0, "submit %zu for %s: %d (%s)", n, user, r, why);
        return id;
}

static inline Job *qt_job(JobQueue *q, int64_t c, int64_t p) {
        return queue_find(q, (JobId) { c, p });
}

static inline int64_t qt_int(const ClassAd *ad, const char *name) {
        int64_t v = -12345;
        (void) classad_eval_int(ad, name, CA_MODE_OLD, &v);
        return v;
}

static inline double qt_real(const ClassAd *ad, const char *name) {
        double v = -12345;
        (void) classad_eval_real(ad, name, CA_MODE_OLD, &v);
        return v;
}

/* A string attribute (static buffer, "" when absent). */
static inline const char *qt_str(const ClassAd *ad, const char *name) {
        static char buf[4][512];
        static int k;
        char *s = NULL, *b = buf[k++ % 4];

        b[0] = 0;
        if (classad_eval_string(ad, name, CA_MODE_OLD, &s) >= 0)
                snprintf(b, 512, "%s", s);
        free(s);
        return b;
}

/* An exit report: [ ExitBySignal = false; ExitCode = code; extra ]. */
static inline ClassAd *qt_exit(int code, const char *extra) {
        char text[1024];

        snprintf(text, sizeof(text), "[ Command = \"JobExit\"; ClaimId = \"x\"; ExitBySignal = false; ExitCode = %d; %s ]",
                 code, extra ? extra : "");
        return qt_ad(text);
}

static inline int qt_history_count_fn(void *userdata, const ClassAd *ad) {
        (void) ad;
        (*(size_t *) userdata)++;
        return 0;
}

static inline size_t qt_history_count(JobQueue *q) {
        size_t n = 0;
        CU_ASSERT(queue_history(q, (JobId) { 0, -1 }, NULL, 0, qt_history_count_fn, &n) == 0);
        return n;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-store.c — the accounts store (accounting/store.h): records, claims
 * and meta values read back exactly (every double, names with quotes and
 * non-ASCII text); replace, delete, rollback; writes outside a transaction
 * and a doomed transaction; every open error with its message, the file
 * left as it was; a reader beside a writer's open transaction; a full disk
 * (a small tmpfs, when it can be mounted); the file as plain SQLite; and
 * the figures of large transactions and of one durable commit (printed,
 * not judged). The kill -9 test is test-store-crash.c.
 *
 * Everything happens in a private directory made with mkdtemp under /tmp
 * and removed at the end.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "accounting.h"
#include "store-test.h"
#include "test-util.h"

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

static char tmpdir[64];

/* tmpdir/name, in a rotating set of buffers (a few live at once). */
static const char *tmp_path(const char *name) {
        static char bufs[4][256];
        static unsigned next;
        char *b = bufs[next++ % ELEMS(bufs)];

        snprintf(b, sizeof(bufs[0]), "%s/%s", tmpdir, name);
        return b;
}

/* The accounts' own schema step: what an open without other tables'
 * steps brings a file to. */
#define ACCOUNTS_VERSION 1

static AcctStore *open_ok(const char *path, unsigned flags) {
        bool readonly = flags & ACCT_OPEN_READONLY;
        AcctStore *s = NULL;
        char why[512] = "";
        int r = acct_store_open(path, flags, NULL, &s, why, sizeof(why));

        GLEAN_TEST_CHECK_FATAL(r == 0, "open %s%s: %d (%s)", path, readonly ? " read-only" : "", r, why);
        return s;
}

static void commit_ok(AcctStore *s) {
        char why[512] = "";
        int r = acct_store_commit(s, why, sizeof(why));

        GLEAN_TEST_CHECK_FATAL(r == 0, "commit: %d (%s)", r, why);
}

/* ---- the rows of the round trip ---- */

static const AcctRecord records[] = {
        { "alice@pool.example", false, 0.5, 1700000000.25, 3600.125, 7200.0625, 1699990000.5, 1700000000.25, 0 },
        { "o'brien \"the quote\"@pool.example", false, 10.1, 0.1, 1e-300, DBL_MAX, DBL_MIN, 5e-324, 1.0 },
        { "zoë.ünïcödé@例え.jp", false, 1.0 / 3.0, 2.0 / 3.0, M_PI, M_E, 1e308, -1e-308, 100.0 },
        { "group_physics.lab1", true, 123456.789, 9007199254740993.0, 9007199254740992.0, 4.5e15, 1.0, 2.0, 1e6 },
        { "nice-user.bob@pool.example", false, INFINITY, -INFINITY, 0x1.fffffffffffffp-1, 0x1p-1074, 0x1p+1023,
          0x1.0000000000001p0, 1e10 },
        { "", false, 0.5, 0, 0, 0, 0, 0, 0 },
        { "line\nbreak\ttab;DROP TABLE acct_records;--", false, 0.75, 1, 2, 3, 4, 5, 6 },
        { "<none>", true, 0.5, 1700000000, 0, 0, 0, 0, 0 },
};

static const AcctClaimRow claims[] = {
        { "<10.0.0.1:9618>#1700000000#1#...", "alice@pool.example", 1.0, 1700000000.125 },
        { "claim'with\"quotes", "o'brien \"the quote\"@pool.example", 0.1, 0.3 },
        { "réclamation-例", "zoë.ünïcödé@例え.jp", 64.0, 1e-9 },
        { "orphan", "nobody@nowhere", 0x1.fffffffffffffp+1023, 0x1p-1074 },
};

static const struct {
        const char *key;
        double value;
} metas[] = {
        { "last_update", 1700000000.123456789 },
        { "seq", 42 },
        { "ünïcödé 'key'", -0.1 },
        { "big", 0x1.fffffffffffffp+1023 },
};

/* Writes every row above in one transaction into the store at path. */
static void write_all(const char *path) {
        AcctStore *s = open_ok(path, false);

        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        for (size_t i = 0; i < ELEMS(records); i++)
                CU_ASSERT_EQUAL(acct_store_put_record(s, &records[i]), 0);
        for (size_t i = 0; i < ELEMS(claims); i++)
                CU_ASSERT_EQUAL(acct_store_put_claim(s, &claims[i]), 0);
        for (size_t i = 0; i < ELEMS(metas); i++)
                CU_ASSERT_EQUAL(acct_store_set_meta(s, metas[i].key, metas[i].value), 0);
        commit_ok(s);
        acct_store_close(s);
}

static const AcctRecord *find_record(const StoreSnap *snap, const char *name) {
        for (size_t i = 0; i < snap->n_records; i++)
                if (strcmp(snap->records[i].name, name) == 0)
                        return &snap->records[i];
        return NULL;
}

static const AcctClaimRow *find_claim(const StoreSnap *snap, const char *id) {
        for (size_t i = 0; i < snap->n_claims; i++)
                if (strcmp(snap->claims[i].id, id) == 0)
                        return &snap->claims[i];
        return NULL;
}

static const StoreTestMeta *find_meta(const StoreSnap *snap, const char *key) {
        for (size_t i = 0; i < snap->n_meta; i++)
                if (strcmp(snap->meta[i].key, key) == 0)
                        return &snap->meta[i];
        return NULL;
}

/* snap holds exactly the rows above. */
static void check_all(const StoreSnap *snap, const char *how) {
        GLEAN_TEST_CHECK(snap->n_records == ELEMS(records), "%s: %zu records, want %zu", how, snap->n_records,
                         ELEMS(records));
        for (size_t i = 0; i < ELEMS(records); i++) {
                const AcctRecord *r = find_record(snap, records[i].name);
                GLEAN_TEST_CHECK(r && store_test_record_eq(r, &records[i]), "%s: record '%s' %s", how,
                                 records[i].name, r ? "differs" : "missing");
        }
        GLEAN_TEST_CHECK(snap->n_claims == ELEMS(claims), "%s: %zu claims, want %zu", how, snap->n_claims,
                         ELEMS(claims));
        for (size_t i = 0; i < ELEMS(claims); i++) {
                const AcctClaimRow *c = find_claim(snap, claims[i].id);
                GLEAN_TEST_CHECK(c && store_test_claim_eq(c, &claims[i]), "%s: claim '%s' %s", how, claims[i].id,
                                 c ? "differs" : "missing");
        }
        GLEAN_TEST_CHECK(snap->n_meta == ELEMS(metas), "%s: %zu meta values, want %zu", how, snap->n_meta,
                         ELEMS(metas));
        for (size_t i = 0; i < ELEMS(metas); i++) {
                const StoreTestMeta *m = find_meta(snap, metas[i].key);
                GLEAN_TEST_CHECK(m && store_test_same(m->value, metas[i].value), "%s: meta '%s' %s", how,
                                 metas[i].key, m ? "differs" : "missing");
        }
}

/* ---- round trip, replace, delete, rollback ---- */

static void test_round_trip(void) {
        const char *path = tmp_path("round-trip.db");
        StoreSnap snap = {};
        AcctStore *s;
        char why[256];

        write_all(path);

        /* Read back by a read-write and by a read-only connection. */
        if (store_snap_of(path, false, &snap))
                check_all(&snap, "read-write");
        if (store_snap_of(path, true, &snap))
                check_all(&snap, "read-only");

        /* Load order: by name, by id, by key (byte order). */
        for (size_t i = 1; i < snap.n_records; i++)
                CU_ASSERT(strcmp(snap.records[i - 1].name, snap.records[i].name) < 0);

        /* The callbacks may be NULL; a negative return stops the load and is returned. */
        s = open_ok(path, true);
        CU_ASSERT_EQUAL(acct_store_load(s, &(AcctStoreLoad) {}, why, sizeof(why)), 0);
        CU_ASSERT_STRING_EQUAL(acct_store_path(s), path);
        acct_store_close(s);

        store_snap_clear(&snap);
}

static int stop_at_second(void *userdata, const AcctRecord *r) {
        unsigned *n = userdata;
        (void) r;
        return ++*n == 2 ? -ECANCELED : 0;
}

static void test_load_stops(void) {
        const char *path = tmp_path("load-stops.db");
        unsigned n = 0;
        char why[512] = "";
        AcctStore *s;
        int r;

        write_all(path);
        s = open_ok(path, false);
        r = acct_store_load(s, &(AcctStoreLoad) { .record = stop_at_second, .userdata = &n }, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ECANCELED && n == 2, "load: %d after %u records, want -ECANCELED after 2", r, n);
        GLEAN_TEST_CHECK(strstr(why, "accounts database ") == why, "why: %s", why);
        /* The read transaction is over: writes go on. */
        CU_ASSERT_EQUAL(acct_store_begin(s), 0);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "after", 1), 0);
        commit_ok(s);
        acct_store_close(s);
}

static void test_replace_delete(void) {
        const char *path = tmp_path("replace.db");
        AcctRecord rec = records[0];
        AcctClaimRow claim = claims[0];
        StoreSnap snap = {};
        AcctStore *s;

        write_all(path);
        s = open_ok(path, false);
        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        rec.priority = 77.5;
        rec.is_group = true;
        rec.factor = 3;
        CU_ASSERT_EQUAL(acct_store_put_record(s, &rec), 0);
        claim.submitter = records[2].name;
        claim.weight = 8;
        CU_ASSERT_EQUAL(acct_store_put_claim(s, &claim), 0);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", 43), 0);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "zero", -0.0), 0);
        /* Deletes say whether there was a row. */
        CU_ASSERT_EQUAL(acct_store_delete_record(s, records[1].name), 1);
        CU_ASSERT_EQUAL(acct_store_delete_record(s, records[1].name), 0);
        CU_ASSERT_EQUAL(acct_store_delete_record(s, "never@there"), 0);
        CU_ASSERT_EQUAL(acct_store_delete_claim(s, claims[1].id), 1);
        CU_ASSERT_EQUAL(acct_store_delete_claim(s, claims[1].id), 0);
        commit_ok(s);
        acct_store_close(s);

        if (!store_snap_of(path, true, &snap))
                return;
        CU_ASSERT_EQUAL(snap.n_records, ELEMS(records) - 1);
        CU_ASSERT_PTR_NULL(find_record(&snap, records[1].name));
        const AcctRecord *r = find_record(&snap, rec.name);
        CU_ASSERT(r && store_test_record_eq(r, &rec));
        CU_ASSERT_EQUAL(snap.n_claims, ELEMS(claims) - 1);
        CU_ASSERT_PTR_NULL(find_claim(&snap, claims[1].id));
        const AcctClaimRow *c = find_claim(&snap, claim.id);
        CU_ASSERT(c && store_test_claim_eq(c, &claim));
        CU_ASSERT_EQUAL(snap.n_meta, ELEMS(metas) + 1);
        const StoreTestMeta *m = find_meta(&snap, "seq");
        CU_ASSERT(m && m->value == 43);
        /* SQLite keeps no negative zero (store.h says so). */
        m = find_meta(&snap, "zero");
        CU_ASSERT(m && m->value == 0);
        store_snap_clear(&snap);
}

static void test_rollback(void) {
        const char *path = tmp_path("rollback.db");
        AcctRecord rec = { .name = "new@pool.example", .priority = 9 };
        StoreSnap snap = {};
        AcctStore *s;

        write_all(path);
        s = open_ok(path, false);

        /* Everything since begin is undone. */
        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        CU_ASSERT_EQUAL(acct_store_put_record(s, &rec), 0);
        CU_ASSERT_EQUAL(acct_store_delete_record(s, records[0].name), 1);
        CU_ASSERT_EQUAL(acct_store_delete_claim(s, claims[0].id), 1);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", 1000), 0);
        acct_store_rollback(s);
        acct_store_rollback(s); /* twice: nothing */
        if (store_snap_load(s, &snap, NULL, 0) == 0)
                check_all(&snap, "after rollback");

        /* Closing with a transaction open rolls it back too. */
        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        CU_ASSERT_EQUAL(acct_store_delete_record(s, records[3].name), 1);
        acct_store_close(s);
        if (store_snap_of(path, true, &snap))
                check_all(&snap, "after close in a transaction");
        store_snap_clear(&snap);
}

/* ---- misuse ---- */

static void test_outside_transaction(void) {
        const char *path = tmp_path("outside.db");
        char why[512] = "";
        AcctStore *s;

        write_all(path);
        s = open_ok(path, false);
        CU_ASSERT_EQUAL(acct_store_put_record(s, &records[0]), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_delete_record(s, records[0].name), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_put_claim(s, &claims[0]), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_delete_claim(s, claims[0].id), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", 1), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_commit(s, why, sizeof(why)), -EINVAL);
        GLEAN_TEST_CHECK(strstr(why, "outside a transaction"), "why: %s", why);

        /* No nesting; no load inside a write transaction (it reads what is committed). */
        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        CU_ASSERT_EQUAL(acct_store_begin(s), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_load(s, &(AcctStoreLoad) {}, why, sizeof(why)), -EINVAL);
        acct_store_rollback(s);

        /* After a commit, writes are outside again. */
        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        commit_ok(s);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", 1), -EINVAL);
        acct_store_close(s);

        /* A read-only store takes no transaction. */
        s = open_ok(path, true);
        CU_ASSERT_EQUAL(acct_store_begin(s), -EROFS);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", 1), -EINVAL);
        acct_store_close(s);

        StoreSnap snap = {};
        if (store_snap_of(path, true, &snap))
                check_all(&snap, "after refused writes");
        store_snap_clear(&snap);
}

/* A write that fails dooms its transaction: nothing of it is committed. */
static void test_doomed_transaction(void) {
        const char *path = tmp_path("doomed.db");
        AcctRecord nan_rec = { .name = "nan@pool.example", .priority = NAN };
        AcctClaimRow nan_claim = { .id = "c", .submitter = "x", .weight = NAN };
        char why[512] = "";
        StoreSnap snap = {};
        AcctStore *s;
        int r;

        write_all(path);
        s = open_ok(path, false);

        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        CU_ASSERT_EQUAL(acct_store_delete_record(s, records[0].name), 1);
        CU_ASSERT_EQUAL(acct_store_put_record(s, &nan_rec), -EINVAL);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "fine", 1), -EINVAL);
        r = acct_store_commit(s, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, "nan@pool.example") && strstr(why, "nothing committed"),
                         "commit: %d (%s)", r, why);

        /* Each kind of write refuses NaN and missing names. */
        static const int n_bad = 7;
        for (int i = 0; i < n_bad; i++) {
                CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
                switch (i) {
                case 0: r = acct_store_put_claim(s, &nan_claim); break;
                case 1: r = acct_store_set_meta(s, "m", NAN); break;
                case 2: r = acct_store_put_record(s, &(AcctRecord) {}); break;
                case 3: r = acct_store_put_claim(s, &(AcctClaimRow) { .id = "c" }); break;
                case 4: r = acct_store_delete_record(s, NULL); break;
                case 5: r = acct_store_delete_claim(s, NULL); break;
                default: r = acct_store_set_meta(s, NULL, 1); break;
                }
                GLEAN_TEST_CHECK(r == -EINVAL, "bad write %d: %d", i, r);
                GLEAN_TEST_CHECK(acct_store_commit(s, why, sizeof(why)) == -EINVAL, "bad write %d committed", i);
        }
        acct_store_close(s);

        if (store_snap_of(path, true, &snap))
                check_all(&snap, "after doomed transactions");
        store_snap_clear(&snap);
}

/* ---- open errors ---- */

static int read_whole(const char *path, char **ret, size_t *ret_len) {
        return glean_test_read_file(path, ret, ret_len);
}

static void write_bytes(const char *path, const void *data, size_t len) {
        FILE *f = fopen(path, "we");
        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        CU_ASSERT_EQUAL(fwrite(data, 1, len, f), len);
        CU_ASSERT_EQUAL(fclose(f), 0);
}

/* Runs SQL on path with plain SQLite (as an administrator's sqlite3 would). */
static void raw_sql(const char *path, const char *sql) {
        sqlite3 *db = NULL;
        char *err = NULL;

        CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
        GLEAN_TEST_CHECK(sqlite3_exec(db, sql, NULL, NULL, &err) == SQLITE_OK, "%s: %s", sql, err ? err : "");
        sqlite3_free(err);
        sqlite3_close(db);
}

static void make_random(const char *path) {
        unsigned char buf[16384];
        unsigned x = 12345;

        for (size_t i = 0; i < sizeof(buf); i++)
                buf[i] = (unsigned char) ((x = x * 1103515245 + 12345) >> 16);
        write_bytes(path, buf, sizeof(buf));
}

/* A glean database of many pages, then pages in its middle overwritten. */
static void make_corrupt(const char *path) {
        AcctStore *s = open_ok(path, false);
        char name[64], *data = NULL;
        size_t len = 0;
        struct stat st;

        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        for (int i = 0; i < 10000; i++) {
                snprintf(name, sizeof(name), "user%05d@pool.example", i);
                AcctRecord r = { .name = name, .priority = i, .as_of = i * 2.5 };
                CU_ASSERT_EQUAL(acct_store_put_record(s, &r), 0);
        }
        commit_ok(s);
        acct_store_close(s);

        /* Closed cleanly: everything is in the main file, no WAL left. */
        GLEAN_TEST_CHECK(stat(tmp_path("corrupt.db-wal"), &st) < 0 && errno == ENOENT, "a WAL was left");
        CU_ASSERT_EQUAL_FATAL(read_whole(path, &data, &len), 0);
        CU_ASSERT_FATAL(len > 40 * 4096);
        for (size_t i = 20 * 4096; i < 30 * 4096; i++)
                data[i] = (char) (i * 7 + (i >> 8));
        write_bytes(path, data, len);
        free(data);
}

static void make_newer(const char *path) {
        AcctStore *s = open_ok(path, false);
        acct_store_close(s);
        char sql[80];

        snprintf(sql, sizeof(sql), "UPDATE schema_version SET version = %d", ACCOUNTS_VERSION + 1);
        raw_sql(path, sql);
}

static void make_foreign(const char *path) {
        raw_sql(path, "CREATE TABLE jobs (id INTEGER PRIMARY KEY, owner TEXT); INSERT INTO jobs VALUES (1, 'x')");
}

static void make_two_versions(const char *path) {
        AcctStore *s = open_ok(path, false);
        acct_store_close(s);
        raw_sql(path, "INSERT INTO schema_version VALUES (1)");
}

static void make_text_version(const char *path) {
        AcctStore *s = open_ok(path, false);
        acct_store_close(s);
        raw_sql(path, "UPDATE schema_version SET version = 'one'");
}

static void make_dir(const char *path) {
        CU_ASSERT_EQUAL_FATAL(mkdir(path, 0755), 0);
}

static void make_empty(const char *path) {
        write_bytes(path, "", 0);
}

/* The first 100 bytes of a real database (its header alone). */
static void make_truncated(const char *path) {
        AcctStore *s = open_ok(path, false);
        char *data = NULL;
        size_t len = 0;

        acct_store_close(s);
        CU_ASSERT_EQUAL_FATAL(read_whole(path, &data, &len), 0);
        CU_ASSERT_FATAL(len > 100);
        write_bytes(path, data, 100);
        free(data);
}

/* An SQLite file with no table at all. */
static void make_no_table(const char *path) {
        raw_sql(path, "PRAGMA user_version = 7");
}

static void test_open_errors(void) {
        static const struct {
                const char *file;
                void (*make)(const char *path);
                bool readonly;
                int error;
                const char *reason;
        } cases[] = {
                { "random.db", make_random, false, -EINVAL, "file is not a database" },
                { "random.db", NULL, true, -EINVAL, "file is not a database" },
                { "corrupt.db", make_corrupt, false, -EBADMSG, "corrupt" },
                { "corrupt.db", NULL, true, -EBADMSG, "corrupt" },
                { "newer.db", make_newer, false, -EPROTO, "was written by a newer glean: schema " },
                { "newer.db", NULL, true, -EPROTO, "was written by a newer glean: schema " },
                { "foreign.db", make_foreign, false, -EINVAL,
                  "has tables but no schema_version: not a glean database" },
                { "foreign.db", NULL, true, -EINVAL, "has tables but no schema_version: not a glean database" },
                { "two-versions.db", make_two_versions, false, -EBADMSG,
                  "corrupt: schema_version does not hold one version number" },
                { "text-version.db", make_text_version, true, -EBADMSG,
                  "corrupt: schema_version does not hold one version number" },
                { "a-directory", make_dir, false, -EISDIR, "is a directory" },
                { "a-directory", NULL, true, -EISDIR, "is a directory" },
                { "missing.db", NULL, true, -ENOENT, "does not exist (a read-only open does not create it)" },
                { "no-such-dir/x.db", NULL, false, -ENOENT, "cannot open: cannot create it: No such file or directory" },
                { "empty.db", make_empty, true, -ENODATA, "holds no glean schema yet" },
                /* A read-write open refuses a file that exists without the
                 * schema: a lost database is not a new one. */
                { "empty.db", NULL, false, -ENODATA,
                  "is empty (0 bytes) and holds no glean schema: refusing to start on it with an empty queue" },
                { "no-table.db", make_no_table, false, -ENODATA,
                  "exists and holds no glean schema: refusing to start on it with an empty queue" },
                { "truncated.db", make_truncated, false, -EBADMSG, "" },
                { "truncated.db", NULL, true, -EBADMSG, "" },
        };

        for (size_t i = 0; i < ELEMS(cases); i++) {
                const char *path = tmp_path(cases[i].file);
                char *before = NULL, *after = NULL, why[512] = "", want[512];
                size_t before_len = 0, after_len = 0;
                AcctStore *s = NULL;
                struct stat st;
                int r;

                if (cases[i].make)
                        cases[i].make(path);
                bool existed = stat(path, &st) == 0;
                if (existed && S_ISREG(st.st_mode))
                        CU_ASSERT_EQUAL_FATAL(read_whole(path, &before, &before_len), 0);

                r = acct_store_open(path, cases[i].readonly, NULL, &s, why, sizeof(why));
                snprintf(want, sizeof(want), "accounts database %s: %s", path, cases[i].reason);
                GLEAN_TEST_CHECK(r == cases[i].error && strncmp(why, want, strlen(want)) == 0 && !strchr(why, '\n') &&
                                         !s,
                                 "%s%s: %d (%s), want %d (%s...)", cases[i].file,
                                 cases[i].readonly ? " read-only" : "", r, why, cases[i].error, want);
                acct_store_close(s);

                /* The file is as it was (or still absent). */
                if (before) {
                        CU_ASSERT_EQUAL_FATAL(read_whole(path, &after, &after_len), 0);
                        GLEAN_TEST_CHECK(after_len == before_len && memcmp(before, after, after_len) == 0,
                                         "%s: the file changed", cases[i].file);
                } else if (!existed)
                        GLEAN_TEST_CHECK(stat(path, &st) < 0 && errno == ENOENT, "%s: created", cases[i].file);
                free(before);
                free(after);
        }
}

/* A new file, and an empty one with ACCT_OPEN_INIT, get the schema, in
 * WAL mode; the file, its -wal and -shm are mode 0600 with umask 0. */
static void test_new_and_empty(void) {
        const char *names[] = { "new.db", "empty-rw.db" };

        make_empty(tmp_path(names[1]));
        for (size_t i = 0; i < ELEMS(names); i++) {
                const char *path = tmp_path(names[i]);
                unsigned char header[100];
                StoreSnap snap = {};
                mode_t old = umask(0);
                int fd;

                AcctStore *s = open_ok(path, i == 1 ? ACCT_OPEN_INIT : 0);
                umask(old);
                /* The WAL and its index exist while the store is open. */
                CU_ASSERT_EQUAL(acct_store_begin(s), 0);
                CU_ASSERT_EQUAL(acct_store_set_meta(s, "x", 1), 0);
                commit_ok(s);
                for (size_t k = 0; k < 3; k++) {
                        char p[300];
                        struct stat st;

                        snprintf(p, sizeof(p), "%s%s", path, (const char *[]) { "", "-wal", "-shm" }[k]);
                        GLEAN_TEST_CHECK(stat(p, &st) == 0 && (st.st_mode & 07777) == 0600, "%s: mode %o, want 600",
                                         p, stat(p, &st) == 0 ? (unsigned) (st.st_mode & 07777) : 0u);
                }
                acct_store_close(s);
                /* Byte 18 of the header: 2 is WAL. */
                fd = open(path, O_RDONLY | O_CLOEXEC);
                CU_ASSERT_FATAL(fd >= 0);
                CU_ASSERT_EQUAL(read(fd, header, sizeof(header)), (ssize_t) sizeof(header));
                close(fd);
                GLEAN_TEST_CHECK(memcmp(header, "SQLite format 3", 16) == 0 && header[18] == 2 && header[19] == 2,
                                 "%s: not an SQLite file in WAL mode", names[i]);
                if (store_snap_of(path, true, &snap))
                        CU_ASSERT(snap.n_records == 0 && snap.n_claims == 0 && snap.n_meta == 1);
                store_snap_clear(&snap);
        }
}

/* ---- a reader beside a writer ---- */

/* The writer: a transaction left open until the parent says 'c'. */
static void writer_child(const char *path, int ready_fd, int go_fd) {
        AcctStore *s = NULL;
        char c;

        if (acct_store_open(path, false, NULL, &s, NULL, 0) < 0 || acct_store_begin(s) < 0)
                _exit(2);
        for (int i = 0; i < 1000; i++) {
                char name[64];
                snprintf(name, sizeof(name), "writer%04d@pool.example", i);
                if (acct_store_put_record(s, &(AcctRecord) { .name = name, .priority = i }) < 0)
                        _exit(3);
        }
        if (acct_store_delete_record(s, records[0].name) != 1 || write(ready_fd, "r", 1) != 1 ||
            read(go_fd, &c, 1) != 1 || acct_store_commit(s, NULL, 0) < 0)
                _exit(4);
        acct_store_close(s);
        _exit(0);
}

static void test_reader_beside_writer(void) {
        const char *path = tmp_path("reader.db");
        int ready[2], go[2], status;
        StoreSnap snap = {};
        char why[512] = "", c;
        AcctStore *reader;
        double t0, ms;
        pid_t pid;

        write_all(path);
        CU_ASSERT_EQUAL_FATAL(pipe2(ready, O_CLOEXEC), 0);
        CU_ASSERT_EQUAL_FATAL(pipe2(go, O_CLOEXEC), 0);
        fflush(NULL);
        pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0)
                writer_child(path, ready[1], go[0]);
        close(ready[1]);
        close(go[0]);

        /* The writer holds its transaction: the reader opens and reads at once, the last commit. */
        CU_ASSERT_EQUAL(read(ready[0], &c, 1), 1);
        t0 = store_test_now_ms();
        reader = open_ok(path, true);
        if (store_snap_load(reader, &snap, why, sizeof(why)) == 0)
                check_all(&snap, "reader during the write transaction");
        ms = store_test_now_ms() - t0;
        GLEAN_TEST_CHECK(ms < 1000, "the reader waited %.0f ms for the writer", ms);

        /* The writer commits while the reader is open; the reader's next load sees it. */
        CU_ASSERT_EQUAL(write(go[1], "c", 1), 1);
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer: status %#x", (unsigned) status);
        GLEAN_TEST_CHECK(store_snap_load(reader, &snap, why, sizeof(why)) == 0, "load: %s", why);
        GLEAN_TEST_CHECK(snap.n_records == ELEMS(records) - 1 + 1000 && !find_record(&snap, records[0].name),
                         "after the writer's commit: %zu records", snap.n_records);
        acct_store_close(reader);
        close(ready[0]);
        close(go[1]);
        store_snap_clear(&snap);
}

/* ---- a full disk ---- */

static void test_disk_full(void) {
        const char *dir = tmp_path("small-fs"), *path = tmp_path("small-fs/acct.db");
        char name[600], why[512] = "";
        StoreSnap snap = {};
        AcctStore *s;
        int r = 0;

        CU_ASSERT_EQUAL_FATAL(mkdir(dir, 0755), 0);
        if (mount("glean-test", dir, "tmpfs", MS_NOSUID | MS_NODEV, "size=256k") < 0) {
                printf("\n    SKIPPED inside the suite: cannot mount a 256 KiB tmpfs (%s): the disk-full test "
                       "needs root and a mount namespace that allows it\n    ",
                       strerror(errno));
                return;
        }

        write_all(path);
        s = open_ok(path, false);
        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        memset(name, 'x', sizeof(name) - 1);
        name[sizeof(name) - 1] = 0;
        for (int i = 0; i < 2000 && r == 0; i++) {
                snprintf(name, 16, "%06d", i);
                name[6] = 'x';
                r = acct_store_put_record(s, &(AcctRecord) { .name = name, .priority = i });
        }
        /* The failure shows at the put that spilled, or at the commit. */
        GLEAN_TEST_CHECK(r == 0 || r == -ENOSPC, "put: %d", r);
        r = acct_store_commit(s, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ENOSPC && strstr(why, "full"), "commit on a full disk: %d (%s)", r, why);

        /* The store goes on; what was committed is all there. */
        CU_ASSERT_EQUAL(acct_store_begin(s), 0);
        CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", 42), 0);
        commit_ok(s);
        acct_store_close(s);
        if (store_snap_of(path, false, &snap))
                check_all(&snap, "after a full disk");
        store_snap_clear(&snap);

        GLEAN_TEST_CHECK(umount2(dir, MNT_DETACH) == 0, "umount %s: %s", dir, strerror(errno));
}

/* ---- the file as plain SQLite (what sqlite3(1) would show) ---- */

static sqlite3_int64 raw_int(sqlite3 *db, const char *sql) {
        sqlite3_stmt *st = NULL;
        sqlite3_int64 v = -1;

        if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
                v = sqlite3_column_int64(st, 0);
        GLEAN_TEST_CHECK(v != -1, "%s: %s", sql, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return v;
}

static void test_inspectable(void) {
        const char *path = tmp_path("inspect.db");
        sqlite3_stmt *st = NULL;
        sqlite3 *db = NULL;
        size_t n = 0;

        write_all(path);
        CU_ASSERT_EQUAL_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
        CU_ASSERT_EQUAL(raw_int(db, "SELECT version FROM schema_version"), ACCOUNTS_VERSION);
        CU_ASSERT_EQUAL(raw_int(db, "SELECT count(*) FROM acct_claims WHERE submitter = 'alice@pool.example'"), 1);
        CU_ASSERT_EQUAL(raw_int(db, "SELECT count(*) FROM acct_meta WHERE key = 'seq' AND value = 42"), 1);
        CU_ASSERT_EQUAL_FATAL(sqlite3_prepare_v2(db,
                                                 "SELECT name, is_group, priority, as_of, accumulated, "
                                                 "weighted_accumulated, begin_usage, last_usage, factor "
                                                 "FROM acct_records ORDER BY name",
                                                 -1, &st, NULL),
                              SQLITE_OK);
        while (sqlite3_step(st) == SQLITE_ROW) {
                AcctRecord r = {
                        (const char *) sqlite3_column_text(st, 0), sqlite3_column_int(st, 1) != 0,
                        sqlite3_column_double(st, 2),              sqlite3_column_double(st, 3),
                        sqlite3_column_double(st, 4),              sqlite3_column_double(st, 5),
                        sqlite3_column_double(st, 6),              sqlite3_column_double(st, 7),
                        sqlite3_column_double(st, 8),
                };
                bool found = false;
                for (size_t i = 0; i < ELEMS(records); i++)
                        found = found || store_test_record_eq(&r, &records[i]);
                GLEAN_TEST_CHECK(found, "row '%s' is not one that was written", r.name);
                n++;
        }
        CU_ASSERT_EQUAL(n, ELEMS(records));
        sqlite3_finalize(st);
        sqlite3_close(db);
}

/* ---- figures (printed, not judged) ---- */

/* One transaction of n record puts, by name order or scattered over the
 * names (the same n names either way); the time of the puts, of the commit. */
static void put_many(AcctStore *s, int n, bool in_order, double *ret_put_ms, double *ret_commit_ms) {
        char name[64];
        double t0 = store_test_now_ms(), t1;

        CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
        for (int i = 0; i < n; i++) {
                int k = in_order ? i : (int) ((long) i * 7919 % n);
                snprintf(name, sizeof(name), "group_%03d.user%07d@pool.example", k % 1000, k);
                AcctRecord r = { name, false, 0.5 + k, 1.7e9 + i, k * 3600.0, k * 7200.0, 1.6e9, 1.7e9, 1.0 };
                CU_ASSERT_EQUAL(acct_store_put_record(s, &r), 0);
        }
        t1 = store_test_now_ms();
        commit_ok(s);
        *ret_commit_ms = store_test_now_ms() - t1;
        *ret_put_ms = t1 - t0;
}

static void test_figures(void) {
        static const int sizes[] = { 10000, 100000 };
        static const struct {
                const char *what;
                bool in_order;
        } passes[] = { { "new, scattered", false }, { "replacing, scattered", false }, { "replacing, in order", true } };
        const int n_single = 50;
        double put_ms, commit_ms, t0;
        struct stat st;
        AcctStore *s;

        printf("\n");
        for (size_t i = 0; i < ELEMS(sizes); i++) {
                char file[32];

                snprintf(file, sizeof(file), "figures-%d.db", sizes[i]);
                s = open_ok(tmp_path(file), false);
                for (size_t p = 0; p < ELEMS(passes); p++) {
                        put_many(s, sizes[i], passes[p].in_order, &put_ms, &commit_ms);
                        printf("      %6d record puts in one transaction (%s): %6.1f ms puts + %5.1f ms commit\n",
                               sizes[i], passes[p].what, put_ms, commit_ms);
                }
                acct_store_close(s);
        }

        /* The last file: single-row transactions, then an open (its quick_check). */
        t0 = store_test_now_ms();
        s = open_ok(tmp_path("figures-100000.db"), false);
        printf("      opening the file of 100000 records (PRAGMA quick_check included): %.1f ms\n",
               store_test_now_ms() - t0);
        t0 = store_test_now_ms();
        for (int i = 0; i < n_single; i++) {
                CU_ASSERT_EQUAL_FATAL(acct_store_begin(s), 0);
                CU_ASSERT_EQUAL(acct_store_set_meta(s, "seq", i), 0);
                commit_ok(s);
        }
        printf("      one single-row transaction (begin, put, durable commit): %.2f ms (mean of %d)\n",
               (store_test_now_ms() - t0) / n_single, n_single);
        acct_store_close(s);
        CU_ASSERT_EQUAL(stat(tmp_path("figures-100000.db"), &st), 0);
        printf("      the file of 100000 records: %.1f MiB\n    ", (double) st.st_size / (1 << 20));
}

/* ---- the schema's parts ---- */

static int open_with(const char *path, unsigned flags, const AcctSchema *more, char *why, size_t whylen) {
        AcctStore *s = NULL;
        int r = acct_store_open(path, flags, more, &s, why, whylen);

        acct_store_close(s);
        return r;
}

static sqlite3_int64 raw_path_int(const char *path, const char *sql) {
        sqlite3 *db = NULL;
        sqlite3_int64 v = -1;

        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK)
                v = raw_int(db, sql);
        sqlite3_close(db);
        return v;
}

/* Another module's tables (as the job queue's, queue/queue-schema.c)
 * arrive as steps after the accounts' own: a new file gets all of them;
 * a file of the accounts' version only is brought up by an open that
 * gives them; an open that does not give them refuses the later file as
 * newer rather than writing it; steps that leave a gap or repeat a
 * version are refused before the file is touched. */
static void test_schema_parts(void) {
        static const AcctSchemaStep two[] = {
                { 2, "CREATE TABLE part_a (k TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;" },
                { 3, "CREATE TABLE part_b (k TEXT PRIMARY KEY NOT NULL) WITHOUT ROWID;" },
        };
        static const AcctSchemaStep gap[] = { { 3, "CREATE TABLE part_b (k TEXT);" } };
        static const AcctSchemaStep again[] = { { 1, "CREATE TABLE part_b (k TEXT);" } };
        const AcctSchema parts = { two, ELEMS(two) }, first = { two, 1 };
        const AcctSchema bad[] = { { gap, ELEMS(gap) }, { again, ELEMS(again) } };
        const char *fresh = tmp_path("parts-new.db"), *older = tmp_path("parts-old.db");
        char why[512] = "";

        /* A new file: every step. */
        CU_ASSERT_EQUAL_FATAL(open_with(fresh, 0, &parts, why, sizeof why), 0);
        CU_ASSERT_EQUAL(raw_path_int(fresh, "SELECT version FROM schema_version"), 3);
        CU_ASSERT_EQUAL(raw_path_int(fresh, "SELECT count(*) FROM sqlite_master WHERE name IN ('part_a', 'part_b')"),
                        2);
        CU_ASSERT_EQUAL(open_with(fresh, ACCT_OPEN_READONLY, &parts, why, sizeof why), 0);

        /* Without the parts: newer than what the opener knows, untouched. */
        CU_ASSERT_EQUAL(open_with(fresh, 0, NULL, why, sizeof why), -EPROTO);
        GLEAN_TEST_CHECK(strstr(why, "was written by a newer glean: schema 3, this build reads up to 1") != NULL,
                         "%s", why);
        CU_ASSERT_EQUAL(open_with(fresh, ACCT_OPEN_READONLY, &first, why, sizeof why), -EPROTO);
        CU_ASSERT_EQUAL(raw_path_int(fresh, "SELECT version FROM schema_version"), 3);

        /* The accounts' version only, then brought up step by step. */
        CU_ASSERT_EQUAL_FATAL(open_with(older, 0, NULL, why, sizeof why), 0);
        CU_ASSERT_EQUAL(raw_path_int(older, "SELECT version FROM schema_version"), ACCOUNTS_VERSION);
        CU_ASSERT_EQUAL(open_with(older, ACCT_OPEN_READONLY, &parts, why, sizeof why), -EPROTO);
        GLEAN_TEST_CHECK(strstr(why, "has schema 1, older than this build's 3") != NULL, "%s", why);
        CU_ASSERT_EQUAL_FATAL(open_with(older, 0, &first, why, sizeof why), 0);
        CU_ASSERT_EQUAL(raw_path_int(older, "SELECT version FROM schema_version"), 2);
        CU_ASSERT_EQUAL_FATAL(open_with(older, 0, &parts, why, sizeof why), 0);
        CU_ASSERT_EQUAL(raw_path_int(older, "SELECT version FROM schema_version"), 3);

        /* Steps that do not make one sequence. */
        for (size_t i = 0; i < ELEMS(bad); i++) {
                const char *path = tmp_path(i ? "parts-again.db" : "parts-gap.db");
                struct stat st;

                CU_ASSERT_EQUAL(open_with(path, 0, &bad[i], why, sizeof why), -EINVAL);
                GLEAN_TEST_CHECK(strstr(why, "the schema's steps leave a gap or repeat a version") != NULL, "%s", why);
                CU_ASSERT(stat(path, &st) < 0 && errno == ENOENT);
        }
}

static int suite_init(void) {
        return store_test_mkdtemp(tmpdir, sizeof(tmpdir));
}

static int suite_cleanup(void) {
        return store_test_rmtree(tmpdir);
}

static CU_TestInfo tests[] = {
        { "round_trip", test_round_trip },
        { "load_stops", test_load_stops },
        { "replace_delete", test_replace_delete },
        { "rollback", test_rollback },
        { "outside_transaction", test_outside_transaction },
        { "doomed_transaction", test_doomed_transaction },
        { "open_errors", test_open_errors },
        { "new_and_empty", test_new_and_empty },
        { "reader_beside_writer", test_reader_beside_writer },
        { "disk_full", test_disk_full },
        { "inspectable", test_inspectable },
        { "schema_parts", test_schema_parts },
        { "figures", test_figures },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "store", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

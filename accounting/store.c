/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.c — the central manager's SQLite database file (store.h): opening
 * and checking it, WAL, the schema's version and its steps (the accounts'
 * own here, the job queue's given by the opener, queue/queue-schema.c),
 * transactions; and the accounts' rows in it.
 *
 * The file is in WAL mode with synchronous=FULL: a commit has reached the
 * disk (the WAL, fsync'd) when acct_store_commit() returns, and a kill -9
 * at any moment leaves the last committed transaction. Readers (the CLI)
 * read the last committed snapshot and never wait for the writer; the
 * writer never waits for readers (checkpoints only copy what no reader
 * still needs).
 *
 * Opening reads before it writes anything: the first page (not a database:
 * SQLITE_NOTADB), PRAGMA quick_check (corrupt), the tables (not glean's) and
 * schema_version (newer than this build). Only then does a read-write open
 * switch the file to WAL and bring the schema up to the last version it
 * is given (the accounts' steps and the opener's, AcctSchema), so
 * a file refused at open is left as it was.
 *
 * A read-only open never creates, migrates or writes: a missing file, a
 * file without the schema yet, or one of an older schema is an error that
 * says to open it read-write once (the central manager does). Reading an
 * older schema as it is would mean keeping every past schema's reader.
 *
 * No foreign keys: a claim may name a submitter whose record is written
 * later in the same transaction (or not at all); the store keeps rows,
 * the Accountant their meaning.
 *
 * A store is used from one thread (SQLITE_OPEN_NOMUTEX).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "cleanup.h"
#include "accounting.h"
#include "store.h"

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* How long a connection waits for a lock held by another one: the WAL
 * recovery of a database that was not closed cleanly, or a second writer
 * (an administrator's command while the central manager writes). Readers
 * in WAL mode do not lock the writer out, so this is never waited for on
 * the writer's usual path. */
#define STORE_BUSY_TIMEOUT_MS 2000

/* Page cache per connection, in KiB (SQLite's convention for a negative
 * cache_size): a transaction of 100,000 records stays in memory until its
 * commit rather than spilling to the WAL half-way, and the B-tree pages of
 * a pool's accounts (67 MB for 100,000 submitters and 1,000,000 claims)
 * mostly stay cached: bench/accounting's cycle is ~10% faster than with
 * 32 MiB. */
#define STORE_CACHE_KIB 131072

/* The schema, as steps: a step brings a database from version v - 1 to
 * v, run in the one transaction that also records the new version, so
 * that a database is always at one version or the next. Version 0 is a new
 * (empty) file. The steps are those of the tables' owners: the accounts'
 * own (below) and those the opener adds (AcctSchema: the job queue's, in
 * queue/queue-schema.c), one sequence of versions for the one file. A
 * later release appends a step with the next version, wherever its
 * tables live. A step is never edited once released: databases in the
 * field went through it.
 *
 * Tables are WITHOUT ROWID: their key is their text primary key, stored
 * once. REAL columns keep every finite double and the infinities exactly
 * (-0.0 reads back as 0.0); NaN has no SQLite representation (it would be
 * NULL) and is refused by the writes. */
static const AcctSchemaStep accounts_steps[] = {
        { 1, "CREATE TABLE schema_version (version INTEGER NOT NULL);"
             "INSERT INTO schema_version (version) VALUES (0);"
             "CREATE TABLE acct_records ("
             "  name TEXT PRIMARY KEY NOT NULL,"
             "  is_group INTEGER NOT NULL,"
             "  priority REAL NOT NULL,"
             "  as_of REAL NOT NULL,"
             "  accumulated REAL NOT NULL,"
             "  weighted_accumulated REAL NOT NULL,"
             "  begin_usage REAL NOT NULL,"
             "  last_usage REAL NOT NULL,"
             "  factor REAL NOT NULL"
             ") WITHOUT ROWID;"
             "CREATE TABLE acct_claims ("
             "  id TEXT PRIMARY KEY NOT NULL,"
             "  submitter TEXT NOT NULL,"
             "  weight REAL NOT NULL,"
             "  begin REAL NOT NULL"
             ") WITHOUT ROWID;"
             "CREATE TABLE acct_meta ("
             "  key TEXT PRIMARY KEY NOT NULL,"
             "  value REAL NOT NULL"
             ") WITHOUT ROWID;" },
};

/* The step that brings a database to version v: the accounts' or the
 * opener's; NULL when neither has it. */
static const char *step_sql(const AcctSchema *more, int v) {
        for (size_t i = 0; i < ELEMENTSOF(accounts_steps); i++)
                if (accounts_steps[i].version == v)
                        return accounts_steps[i].sql;
        for (size_t i = 0; more && i < more->n_steps; i++)
                if (more->steps[i].version == v)
                        return more->steps[i].sql;
        return NULL;
}

/* The version this open brings a database to: the last of an unbroken
 * sequence 1, 2, ... of steps, each given once. -EINVAL (a bug of the
 * opener's) when the steps leave a gap or give a version twice. */
static int schema_last(const AcctSchema *more) {
        size_t n = ELEMENTSOF(accounts_steps) + (more ? more->n_steps : 0);

        for (size_t v = 1; v <= n; v++) {
                size_t seen = 0;
                for (size_t i = 0; i < ELEMENTSOF(accounts_steps); i++)
                        seen += (size_t) accounts_steps[i].version == v;
                for (size_t i = 0; more && i < more->n_steps; i++)
                        seen += more->steps[i].version > 0 && (size_t) more->steps[i].version == v &&
                                more->steps[i].sql;
                if (seen != 1)
                        return -EINVAL;
        }
        return (int) n;
}

/* Every statement the store runs more than once, prepared at open. */
enum {
        STMT_BEGIN_WRITE,
        STMT_BEGIN_READ,
        STMT_COMMIT,
        STMT_ROLLBACK,
        STMT_PUT_RECORD,
        STMT_DELETE_RECORD,
        STMT_PUT_CLAIM,
        STMT_DELETE_CLAIM,
        STMT_SET_META,
        STMT_LOAD_RECORDS,
        STMT_LOAD_CLAIMS,
        STMT_LOAD_META,
        _STMT_MAX,
};

static const char *const stmt_sql[_STMT_MAX] = {
        /* IMMEDIATE: the write lock is taken (or found busy) at begin,
         * never half-way through a transaction. */
        [STMT_BEGIN_WRITE] = "BEGIN IMMEDIATE",
        [STMT_BEGIN_READ] = "BEGIN",
        [STMT_COMMIT] = "COMMIT",
        [STMT_ROLLBACK] = "ROLLBACK",
        [STMT_PUT_RECORD] = ("INSERT OR REPLACE INTO acct_records (name, is_group, priority, as_of, accumulated,"
                             " weighted_accumulated, begin_usage, last_usage, factor)"
                             " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"),
        [STMT_DELETE_RECORD] = "DELETE FROM acct_records WHERE name = ?1",
        [STMT_PUT_CLAIM] = "INSERT OR REPLACE INTO acct_claims (id, submitter, weight, begin) VALUES (?1, ?2, ?3, ?4)",
        [STMT_DELETE_CLAIM] = "DELETE FROM acct_claims WHERE id = ?1",
        [STMT_SET_META] = "INSERT OR REPLACE INTO acct_meta (key, value) VALUES (?1, ?2)",
        [STMT_LOAD_RECORDS] = ("SELECT name, is_group, priority, as_of, accumulated, weighted_accumulated,"
                               " begin_usage, last_usage, factor FROM acct_records ORDER BY name"),
        [STMT_LOAD_CLAIMS] = "SELECT id, submitter, weight, begin FROM acct_claims ORDER BY id",
        [STMT_LOAD_META] = "SELECT key, value FROM acct_meta ORDER BY key",
};

struct AcctStore {
        sqlite3 *db;
        char *path;
        bool readonly;
        bool in_tx;
        const AcctSchema *more; /* the opener's steps (during the open only) */
        int schema;             /* the version the steps bring a database to */
        int tx_error;      /* the first failed write of the transaction, which dooms it */
        char tx_why[512];  /* what it was, for commit's why */
        sqlite3_stmt *stmt[_STMT_MAX];
};

/* ---- errors ---- */

int acct_sqlite_errno(sqlite3 *db, int rc) {
        switch (rc & 0xff) {
        case SQLITE_OK:
        case SQLITE_ROW:
        case SQLITE_DONE:
                return 0;
        case SQLITE_NOMEM:
                return -ENOMEM;
        case SQLITE_FULL:
                return -ENOSPC;
        case SQLITE_READONLY:
                return -EROFS;
        case SQLITE_PERM:
        case SQLITE_AUTH:
                return -EACCES;
        case SQLITE_BUSY:
        case SQLITE_LOCKED:
        case SQLITE_PROTOCOL: /* a WAL lock kept changing under us */
                return -EBUSY;
        case SQLITE_NOTADB:
        case SQLITE_CONSTRAINT:
        case SQLITE_MISMATCH:
        case SQLITE_RANGE:
        case SQLITE_MISUSE:
                return -EINVAL;
        case SQLITE_CORRUPT:
        case SQLITE_SCHEMA:
                return -EBADMSG;
        case SQLITE_TOOBIG:
                return -E2BIG;
        case SQLITE_NOLFS:
                return -EFBIG;
        case SQLITE_INTERRUPT:
                return -EINTR;
        case SQLITE_ABORT:
                return -ECANCELED;
        case SQLITE_CANTOPEN:
        case SQLITE_IOERR: {
                int e = db ? sqlite3_system_errno(db) : 0;
                return e > 0 ? -e : (rc & 0xff) == SQLITE_CANTOPEN ? -ENOENT : -EIO;
        }
        default:
                return -EIO;
        }
}

/* why = "accounts database PATH: " + the formatted rest; returns r. */
__attribute__((format(printf, 5, 6))) static int path_why(int r, const char *path, char *why, size_t whylen,
                                                         const char *fmt, ...) {
        char rest[512];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(rest, sizeof(rest), fmt, ap);
        va_end(ap);
        return glean_why(r, why, whylen, "accounts database %s: %s", path, rest);
}

/* The same for a failed SQLite call: "<what>: <sqlite3_errmsg>" (with the
 * system's reason when SQLite's own is vague about an I/O error). */
static int sqlite_why(const AcctStore *s, int rc, const char *what, char *why, size_t whylen) {
        int r = acct_sqlite_errno(s->db, rc);
        int code = rc & 0xff;

        if ((code == SQLITE_CANTOPEN || code == SQLITE_IOERR) && s->db && sqlite3_system_errno(s->db) > 0)
                return path_why(r, s->path, why, whylen, "%s: %s (%s)", what, sqlite3_errmsg(s->db),
                                strerror(sqlite3_system_errno(s->db)));
        return path_why(r, s->path, why, whylen, "%s: %s", what, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
}

/* ---- statements ---- */

/* Runs a cached statement whose rows (if any) are not wanted; returns an
 * SQLite result code (SQLITE_OK on success). The statement is reset, its
 * error left in sqlite3_errmsg(). */
static int stmt_run(sqlite3_stmt *st) {
        int rc;

        while ((rc = sqlite3_step(st)) == SQLITE_ROW)
                ;
        sqlite3_reset(st);
        return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int prepare_statements(AcctStore *s, char *why, size_t whylen) {
        for (size_t i = 0; i < _STMT_MAX; i++) {
                int rc = sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL);
                if (rc != SQLITE_OK)
                        return sqlite_why(s, rc, "preparing the statements", why, whylen);
        }
        return 0;
}

/* Runs one SQL text that returns one integer (or nothing: 0). */
static int query_int(AcctStore *s, const char *sql, sqlite3_int64 *ret, char *why, size_t whylen) {
        sqlite3_stmt *st = NULL;
        sqlite3_int64 v = 0;
        int rc;

        rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        if (rc == SQLITE_OK) {
                rc = sqlite3_step(st);
                if (rc == SQLITE_ROW) {
                        v = sqlite3_column_int64(st, 0);
                        rc = SQLITE_OK;
                } else if (rc == SQLITE_DONE)
                        rc = SQLITE_OK;
        }
        sqlite3_finalize(st);
        if ((rc & 0xff) == SQLITE_NOTADB)
                return path_why(-EINVAL, s->path, why, whylen, "%s", sqlite3_errmsg(s->db));
        if ((rc & 0xff) == SQLITE_CORRUPT)
                return path_why(-EBADMSG, s->path, why, whylen, "corrupt: %s", sqlite3_errmsg(s->db));
        if (rc != SQLITE_OK)
                return sqlite_why(s, rc, "reading", why, whylen);
        *ret = v;
        return 0;
}

/* ---- open ---- */

static void store_free(AcctStore *s) {
        if (!s)
                return;
        for (size_t i = 0; i < _STMT_MAX; i++)
                sqlite3_finalize(s->stmt[i]);
        sqlite3_close_v2(s->db);
        free(s->path);
        free(s);
}

static void store_freep(AcctStore **s) {
        store_free(*s);
}

/* What is at path, before SQLite looks: clearer reasons for the usual
 * mistakes than SQLite's "unable to open database file". Sets *ret_exists
 * and, when it exists, *ret_size. */
static int check_path(const char *path, bool readonly, bool *ret_exists, off_t *ret_size, char *why, size_t whylen) {
        struct stat st;

        if (stat(path, &st) < 0) {
                if (errno != ENOENT)
                        return path_why(-errno, path, why, whylen, "cannot be read: %s", strerror(errno));
                if (readonly)
                        return path_why(-ENOENT, path, why, whylen,
                                        "does not exist (a read-only open does not create it)");
                *ret_exists = false;
                return 0;
        }
        if (S_ISDIR(st.st_mode))
                return path_why(-EISDIR, path, why, whylen, "is a directory, not a database file");
        if (!S_ISREG(st.st_mode))
                return path_why(-EINVAL, path, why, whylen, "is not a regular file");
        *ret_exists = true;
        *ret_size = st.st_size;
        return 0;
}

/* A new database file, mode 0600 whatever the umask (SQLite gives its
 * -wal and -shm the main file's mode). */
static int create_file(const char *path, char *why, size_t whylen) {
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

        if (fd < 0 && errno == EEXIST)
                return 0; /* made meanwhile: SQLite opens it as it is */
        if (fd < 0)
                return path_why(-errno, path, why, whylen, "cannot open: cannot create it: %s", strerror(errno));
        if (fchmod(fd, 0600) < 0)
                return path_why(-errno, path, why, whylen, "cannot make it mode 0600: %s", strerror(errno));
        return 0;
}

static int sync_parent_dir(const char *path);

/* A missing database made whole before it takes its name: its schema
 * written in <path>.new (mode 0600; what an earlier crash left there is
 * removed first), closed (the WAL checkpointed into it), synced, renamed
 * to path. A crash at any point leaves path absent or complete, never the
 * empty file that a later open refuses. */
static int create_initialised(const char *path, const AcctSchema *more, char *why, size_t whylen) {
        static const char *const suffixes[] = { "", "-wal", "-shm" };
        char tmp[PATH_MAX];
        AcctStore *s = NULL;
        int fd, r;

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                if ((size_t) snprintf(tmp, sizeof(tmp), "%s.new%s", path, suffixes[i]) >= sizeof(tmp))
                        return path_why(-ENAMETOOLONG, path, why, whylen, "the path is too long");
                if (unlink(tmp) < 0 && errno != ENOENT)
                        return path_why(-errno, path, why, whylen, "cannot remove %s: %s", tmp, strerror(errno));
        }
        snprintf(tmp, sizeof(tmp), "%s.new", path);
        r = create_file(tmp, why, whylen);
        if (r < 0)
                return path_why(r, path, why, whylen, "cannot open: cannot create it: %s", strerror(-r));
        r = acct_store_open(tmp, ACCT_OPEN_INIT, more, &s, why, whylen);
        acct_store_close(s);
        if (r >= 0) {
                fd = open(tmp, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd < 0 || fsync(fd) < 0)
                        r = path_why(-errno, path, why, whylen, "cannot sync %s: %s", tmp, strerror(errno));
                if (fd >= 0)
                        close(fd);
        }
        if (r >= 0 && rename(tmp, path) < 0)
                r = path_why(-errno, path, why, whylen, "cannot rename %s to it: %s", tmp, strerror(errno));
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        r = sync_parent_dir(path);
        if (r < 0)
                return path_why(r, path, why, whylen, "syncing its directory: %s", strerror(-r));
        return 0;
}

/* The file and its -wal and -shm (those that exist) mode 0600: the queue
 * and the accounts are the central manager's alone. */
static int restrict_modes(const char *path, char *why, size_t whylen) {
        static const char *const suffixes[] = { "", "-wal", "-shm" };

        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++) {
                char p[PATH_MAX];
                struct stat st;

                if ((size_t) snprintf(p, sizeof(p), "%s%s", path, suffixes[i]) >= sizeof(p))
                        return path_why(-ENAMETOOLONG, path, why, whylen, "the path is too long");
                if (lstat(p, &st) < 0 || !S_ISREG(st.st_mode) || (st.st_mode & 07777) == 0600)
                        continue;
                if (chmod(p, 0600) < 0)
                        return path_why(-errno, path, why, whylen, "cannot make %s mode 0600: %s", p, strerror(errno));
        }
        return 0;
}

/* The schema version of the database: 0 when it holds no table at all (a
 * new or empty file). Refuses a file that is not a database, one with
 * tables but no schema_version (not glean's), and a schema_version that is
 * not one positive number. */
static int read_schema_version(AcctStore *s, int *ret, char *why, size_t whylen) {
        sqlite3_int64 n_objects, has_version, n_rows, version;
        int r;

        /* The first read of the file: SQLITE_NOTADB here for a file that is not a database. */
        r = query_int(s, "SELECT count(*) FROM sqlite_master", &n_objects, why, whylen);
        if (r < 0)
                return r;
        if (n_objects == 0) {
                *ret = 0;
                return 0;
        }
        r = query_int(s, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'",
                      &has_version, why, whylen);
        if (r < 0)
                return r;
        if (!has_version)
                return path_why(-EINVAL, s->path, why, whylen,
                                "has tables but no schema_version: not a glean database (left untouched)");
        r = query_int(s, "SELECT count(*) FROM schema_version", &n_rows, why, whylen);
        if (r < 0)
                return r;
        r = query_int(s, "SELECT CASE WHEN typeof(version) = 'integer' THEN version ELSE -1 END FROM schema_version",
                      &version, why, whylen);
        if (r < 0)
                return r;
        if (n_rows != 1 || version < 1 || version > INT_MAX)
                return path_why(-EBADMSG, s->path, why, whylen,
                                "corrupt: schema_version does not hold one version number");
        *ret = (int) version;
        return 0;
}

static int quick_check(AcctStore *s, char *why, size_t whylen) {
        _cleanup_free_ char *first = NULL;
        sqlite3_stmt *st = NULL;
        int rc;

        /* quick_check(1): stop at the first problem; one row "ok" when there is none. */
        rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *t = (const char *) sqlite3_column_text(st, 0);
                first = strdup(t ? t : "(no result)");
                rc = first ? SQLITE_OK : SQLITE_NOMEM;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_OK && rc != SQLITE_DONE) {
                if ((rc & 0xff) == SQLITE_CORRUPT)
                        return path_why(-EBADMSG, s->path, why, whylen, "corrupt: %s", sqlite3_errmsg(s->db));
                return sqlite_why(s, rc, "checking the file (PRAGMA quick_check)", why, whylen);
        }
        if (!first || strcmp(first, "ok") != 0) {
                /* One line: its report begins "*** in database main ***\n". */
                for (char *p = first; p && *p; p++)
                        if (*p == '\n')
                                *p = ' ';
                return path_why(-EBADMSG, s->path, why, whylen, "corrupt (PRAGMA quick_check: %s)",
                                first ? first : "no result");
        }
        return 0;
}

static int exec_sql(AcctStore *s, const char *sql, const char *what, char *why, size_t whylen) {
        int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
        return rc == SQLITE_OK ? 0 : sqlite_why(s, rc, what, why, whylen);
}

/* A PRAGMA that answers with the value in force: checks it is want. */
static int pragma_expect(AcctStore *s, const char *sql, const char *want, char *why, size_t whylen) {
        sqlite3_stmt *st = NULL;
        int rc, r = 0;

        rc = sqlite3_prepare_v2(s->db, sql, -1, &st, NULL);
        if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *got = (const char *) sqlite3_column_text(st, 0);
                if (!got || strcasecmp(got, want) != 0)
                        r = path_why(-EOPNOTSUPP, s->path, why, whylen, "%s gave '%s', not '%s'", sql,
                                     got ? got : "", want);
                rc = SQLITE_OK;
        }
        sqlite3_finalize(st);
        if (rc != SQLITE_OK && rc != SQLITE_DONE)
                return sqlite_why(s, rc, sql, why, whylen);
        return r;
}

/* Makes a new file's directory entry durable along with its content. */
static int sync_parent_dir(const char *path) {
        _cleanup_free_ char *copy = strdup(path);
        _cleanup_close_ int fd = -1;

        if (!copy)
                return -ENOMEM;
        fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0 || fsync(fd) < 0)
                return -errno;
        return 0;
}

/* Brings the schema up to s->schema in one
 * transaction. The version is read again once the write lock is held: a
 * second process may have created or migrated the file meanwhile. */
static int migrate(AcctStore *s, char *why, size_t whylen) {
        int version, r;

        r = exec_sql(s, "BEGIN IMMEDIATE", "starting the schema transaction", why, whylen);
        if (r < 0)
                return r;
        r = read_schema_version(s, &version, why, whylen);
        if (r >= 0 && version > s->schema)
                r = path_why(-EPROTO, s->path, why, whylen,
                             "was written by a newer glean: schema %d, this build reads up to %d", version,
                             s->schema);
        for (; r >= 0 && version < s->schema; version++) {
                char what[64], sql[96];

                snprintf(what, sizeof(what), "schema %d to %d", version, version + 1);
                r = exec_sql(s, step_sql(s->more, version + 1), what, why, whylen);
                if (r < 0)
                        break;
                snprintf(sql, sizeof(sql), "UPDATE schema_version SET version = %d", version + 1);
                r = exec_sql(s, sql, what, why, whylen);
        }
        if (r >= 0)
                r = exec_sql(s, "COMMIT", "committing the schema", why, whylen);
        if (r < 0 && !sqlite3_get_autocommit(s->db))
                (void) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        return r;
}

/* A read-write open: WAL, durable commits, the schema brought up to date. */
static int setup_writer(AcctStore *s, int version, bool existed, char *why, size_t whylen) {
        char sql[64];
        int r;

        if (sqlite3_db_readonly(s->db, "main") == 1)
                return path_why(-EACCES, s->path, why, whylen, "cannot be written (permission denied)");
        r = restrict_modes(s->path, why, whylen);
        if (r < 0)
                return r;
        r = pragma_expect(s, "PRAGMA journal_mode = WAL", "wal", why, whylen);
        if (r < 0)
                return r;
        r = exec_sql(s, "PRAGMA synchronous = FULL", "PRAGMA synchronous", why, whylen);
        if (r < 0)
                return r;
        snprintf(sql, sizeof(sql), "PRAGMA cache_size = -%d", STORE_CACHE_KIB);
        r = exec_sql(s, sql, "PRAGMA cache_size", why, whylen);
        if (r < 0)
                return r;
        if (version < s->schema) {
                r = migrate(s, why, whylen);
                if (r < 0)
                        return r;
        }
        if (!existed) {
                r = sync_parent_dir(s->path);
                if (r < 0)
                        return path_why(r, s->path, why, whylen, "syncing its directory: %s", strerror(-r));
        }
        return 0;
}

int acct_store_open(const char *path, unsigned flags, const AcctSchema *more, AcctStore **ret, char *why,
                    size_t whylen) {
        _cleanup_(store_freep) AcctStore *s = NULL;
        bool readonly = flags & ACCT_OPEN_READONLY, existed = false;
        int schema = schema_last(more);
        off_t size = 0;
        int version, rc, r;

        if (!path || !*path || !ret)
                return glean_why(-EINVAL, why, whylen, "accounts database: no path given");
        if (schema < 0)
                return path_why(-EINVAL, path, why, whylen, "the schema's steps leave a gap or repeat a version");

        r = check_path(path, readonly, &existed, &size, why, whylen);
        if (r < 0)
                return r;
        if (!existed && !readonly) {
                r = create_initialised(path, more, why, whylen);
                if (r < 0)
                        return r;
                existed = true;
        }

        s = calloc(1, sizeof(*s));
        if (!s || !(s->path = strdup(path)))
                return path_why(-ENOMEM, path, why, whylen, "out of memory");
        s->readonly = readonly;
        s->more = more;
        s->schema = schema;

        rc = sqlite3_open_v2(path, &s->db,
                             (readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
                                     SQLITE_OPEN_NOMUTEX,
                             NULL);
        if (rc != SQLITE_OK)
                return sqlite_why(s, rc, "cannot open", why, whylen);
        sqlite3_extended_result_codes(s->db, 1);
        sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);

        /* Read before anything is written. */
        r = read_schema_version(s, &version, why, whylen);
        if (r < 0)
                return r;
        r = quick_check(s, why, whylen);
        if (r < 0)
                return r;
        if (version > schema)
                return path_why(-EPROTO, path, why, whylen,
                                "was written by a newer glean: schema %d, this build reads up to %d", version,
                                schema);

        if (existed && version == 0 && !readonly && !(flags & ACCT_OPEN_INIT))
                return path_why(-ENODATA, path, why, whylen,
                                "%s and holds no glean schema: refusing to start on it with an empty queue "
                                "(a database that lost its contents?); to initialise it, start "
                                "glean-negotiator --init-db once",
                                size == 0 ? "is empty (0 bytes)" : "exists");
        if (readonly) {
                if (version == 0)
                        return path_why(-ENODATA, path, why, whylen,
                                        "holds no glean schema yet (a read-only open does not create it)");
                if (version < schema)
                        return path_why(-EPROTO, path, why, whylen,
                                        "has schema %d, older than this build's %d: open it read-write once to "
                                        "migrate it (a read-only open does not)",
                                        version, schema);
                r = exec_sql(s, "PRAGMA query_only = 1", "PRAGMA query_only", why, whylen);
        } else
                r = setup_writer(s, version, existed, why, whylen);
        if (r < 0)
                return r;

        r = prepare_statements(s, why, whylen);
        if (r < 0)
                return r;

        s->more = NULL; /* the opener's, not kept */
        *ret = TAKE_PTR(s);
        return 0;
}

void acct_store_close(AcctStore *s) {
        if (!s)
                return;
        acct_store_rollback(s);
        store_free(s);
}

const char *acct_store_path(const AcctStore *s) {
        return s ? s->path : NULL;
}

sqlite3 *acct_store_sqlite(AcctStore *s) {
        return s ? s->db : NULL;
}

bool acct_store_in_tx(const AcctStore *s) {
        return s && s->in_tx;
}

/* ---- transactions ---- */

int acct_store_begin(AcctStore *s) {
        int rc;

        if (!s || s->in_tx)
                return -EINVAL;
        if (s->readonly)
                return -EROFS;
        rc = stmt_run(s->stmt[STMT_BEGIN_WRITE]);
        if (rc != SQLITE_OK)
                return acct_sqlite_errno(s->db, rc);
        s->in_tx = true;
        s->tx_error = 0;
        s->tx_why[0] = 0;
        return 0;
}

/* Ends the transaction in SQLite if SQLite has not already (it rolls back
 * by itself after some I/O errors). */
static void end_tx(AcctStore *s) {
        if (!sqlite3_get_autocommit(s->db))
                (void) stmt_run(s->stmt[STMT_ROLLBACK]);
        s->in_tx = false;
}

int acct_store_commit(AcctStore *s, char *why, size_t whylen) {
        int rc, r;

        if (!s || !s->in_tx)
                return glean_why(-EINVAL, why, whylen, "accounts database %s: commit outside a transaction",
                                 s ? s->path : "(none)");
        if (s->tx_error < 0) {
                r = path_why(s->tx_error, s->path, why, whylen, "%s (nothing committed)", s->tx_why);
                end_tx(s);
                return r;
        }
        rc = stmt_run(s->stmt[STMT_COMMIT]);
        if (rc != SQLITE_OK) {
                r = sqlite_why(s, rc, "commit (nothing committed)", why, whylen);
                end_tx(s);
                return r;
        }
        s->in_tx = false;
        return 0;
}

void acct_store_rollback(AcctStore *s) {
        if (s && s->in_tx)
                end_tx(s);
}

/* ---- writes ---- */

/* Records that a write failed and dooms the transaction; returns r. */
__attribute__((format(printf, 3, 4))) static int write_failed(AcctStore *s, int r, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(s->tx_why, sizeof(s->tx_why), fmt, ap);
        va_end(ap);
        s->tx_error = r;
        return r;
}

/* -EINVAL for NULL (every column is NOT NULL). */
static int bind_text(AcctStore *s, sqlite3_stmt *st, int i, const char *v) {
        int rc;

        if (!v)
                return -EINVAL;
        rc = sqlite3_bind_text(st, i, v, -1, SQLITE_STATIC);
        return rc == SQLITE_OK ? 0 : acct_sqlite_errno(s->db, rc);
}

/* v[0] to v[n - 1] as parameters first, first + 1, ...; NaN is refused
 * (SQLite would store it as NULL). */
static int bind_reals(AcctStore *s, sqlite3_stmt *st, int first, const double *v, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int rc;

                if (isnan(v[i]))
                        return -EINVAL;
                rc = sqlite3_bind_double(st, first + (int) i, v[i]);
                if (rc != SQLITE_OK)
                        return acct_sqlite_errno(s->db, rc);
        }
        return 0;
}

/* The start of every write: a transaction that no failed write doomed
 * (SQLite may have rolled it back already: more writes would commit by
 * themselves), and the row's key bound as ?1. */
static int write_start(AcctStore *s, int stmt, const char *what, const char *key, sqlite3_stmt **ret) {
        if (!s || !s->in_tx)
                return -EINVAL;
        if (s->tx_error < 0)
                return s->tx_error;
        if (bind_text(s, s->stmt[stmt], 1, key) < 0)
                return write_failed(s, -EINVAL, "a %s without a key", what);
        *ret = s->stmt[stmt];
        return 0;
}

/* The end of every write: r is how binding the other parameters went.
 * Returns the rows the statement changed, or -errno (dooming the
 * transaction). The bindings are cleared: they point to the caller's
 * strings. */
static int write_finish(AcctStore *s, sqlite3_stmt *st, int r, const char *what, const char *key) {
        int rc;

        if (r < 0) {
                sqlite3_clear_bindings(st);
                return write_failed(s, r, "%s '%s': a value that cannot be stored (NULL or NaN)", what, key);
        }
        rc = stmt_run(st);
        sqlite3_clear_bindings(st);
        if (rc != SQLITE_OK)
                return write_failed(s, acct_sqlite_errno(s->db, rc), "%s '%s': %s", what, key, sqlite3_errmsg(s->db));
        return sqlite3_changes(s->db);
}

int acct_store_put_record(AcctStore *s, const AcctRecord *rec) {
        sqlite3_stmt *st = NULL;
        int r;

        r = write_start(s, STMT_PUT_RECORD, "record", rec ? rec->name : NULL, &st);
        if (r < 0)
                return r;
        const double reals[] = { rec->priority,    rec->as_of,      rec->accumulated, rec->weighted_accumulated,
                                 rec->begin_usage, rec->last_usage, rec->factor };
        r = acct_sqlite_errno(s->db, sqlite3_bind_int(st, 2, rec->is_group));
        if (r >= 0)
                r = bind_reals(s, st, 3, reals, ELEMENTSOF(reals));
        r = write_finish(s, st, r, "record", rec->name);
        return r < 0 ? r : 0;
}

int acct_store_delete_record(AcctStore *s, const char *name) {
        sqlite3_stmt *st = NULL;
        int r;

        r = write_start(s, STMT_DELETE_RECORD, "record to delete", name, &st);
        return r < 0 ? r : write_finish(s, st, 0, "deleting record", name);
}

int acct_store_put_claim(AcctStore *s, const AcctClaimRow *c) {
        sqlite3_stmt *st = NULL;
        int r;

        r = write_start(s, STMT_PUT_CLAIM, "claim", c ? c->id : NULL, &st);
        if (r < 0)
                return r;
        r = bind_text(s, st, 2, c->submitter);
        if (r >= 0)
                r = bind_reals(s, st, 3, (const double[]) { c->weight, c->begin }, 2);
        r = write_finish(s, st, r, "claim", c->id);
        return r < 0 ? r : 0;
}

int acct_store_delete_claim(AcctStore *s, const char *id) {
        sqlite3_stmt *st = NULL;
        int r;

        r = write_start(s, STMT_DELETE_CLAIM, "claim to delete", id, &st);
        return r < 0 ? r : write_finish(s, st, 0, "deleting claim", id);
}

int acct_store_set_meta(AcctStore *s, const char *key, double value) {
        sqlite3_stmt *st = NULL;
        int r;

        r = write_start(s, STMT_SET_META, "meta value", key, &st);
        if (r < 0)
                return r;
        r = bind_reals(s, st, 2, &value, 1);
        r = write_finish(s, st, r, "meta value", key);
        return r < 0 ? r : 0;
}

/* ---- load ---- */

/* Column i as a double: false when it holds something else than a number
 * (a row edited by hand). */
static bool column_real(sqlite3_stmt *st, int i, double *ret) {
        int t = sqlite3_column_type(st, i);

        if (t != SQLITE_FLOAT && t != SQLITE_INTEGER)
                return false;
        *ret = sqlite3_column_double(st, i);
        return true;
}

static const char *column_str(sqlite3_stmt *st, int i) {
        return sqlite3_column_type(st, i) == SQLITE_TEXT ? (const char *) sqlite3_column_text(st, i) : NULL;
}

/* Hands one row to the caller's callback; sets *ret_bad (and returns 0)
 * for a row that is not as the store writes them (edited by hand). */
static int load_row(int which, sqlite3_stmt *st, const AcctStoreLoad *load, bool *ret_bad) {
        *ret_bad = true;
        switch (which) {
        case STMT_LOAD_RECORDS: {
                AcctRecord rec = { .name = column_str(st, 0), .is_group = sqlite3_column_int(st, 1) != 0 };
                if (!rec.name || !column_real(st, 2, &rec.priority) || !column_real(st, 3, &rec.as_of) ||
                    !column_real(st, 4, &rec.accumulated) || !column_real(st, 5, &rec.weighted_accumulated) ||
                    !column_real(st, 6, &rec.begin_usage) || !column_real(st, 7, &rec.last_usage) ||
                    !column_real(st, 8, &rec.factor))
                        return 0;
                *ret_bad = false;
                return load->record ? load->record(load->userdata, &rec) : 0;
        }
        case STMT_LOAD_CLAIMS: {
                AcctClaimRow c = { .id = column_str(st, 0), .submitter = column_str(st, 1) };
                if (!c.id || !c.submitter || !column_real(st, 2, &c.weight) || !column_real(st, 3, &c.begin))
                        return 0;
                *ret_bad = false;
                return load->claim ? load->claim(load->userdata, &c) : 0;
        }
        default: {
                const char *key = column_str(st, 0);
                double value;
                if (!key || !column_real(st, 1, &value))
                        return 0;
                *ret_bad = false;
                return load->meta ? load->meta(load->userdata, key, value) : 0;
        }
        }
}

int acct_store_load(AcctStore *s, const AcctStoreLoad *load, char *why, size_t whylen) {
        static const struct {
                int stmt;
                const char *table;
        } tables[] = {
                { STMT_LOAD_RECORDS, "acct_records" },
                { STMT_LOAD_CLAIMS, "acct_claims" },
                { STMT_LOAD_META, "acct_meta" },
        };
        int rc, r = 0;

        if (!s || !load)
                return glean_why(-EINVAL, why, whylen, "accounts database: nothing to load");
        if (s->in_tx)
                return path_why(-EINVAL, s->path, why, whylen, "loading inside a write transaction");

        /* One read transaction: the three tables as of one commit. */
        rc = stmt_run(s->stmt[STMT_BEGIN_READ]);
        if (rc != SQLITE_OK)
                return sqlite_why(s, rc, "reading", why, whylen);

        for (size_t i = 0; r >= 0 && i < ELEMENTSOF(tables); i++) {
                sqlite3_stmt *st = s->stmt[tables[i].stmt];
                bool bad = false;

                while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
                        r = load_row(tables[i].stmt, st, load, &bad);
                        if (r < 0 || bad)
                                break;
                }
                if (bad)
                        r = path_why(-EBADMSG, s->path, why, whylen, "corrupt: a row of %s that is not as written",
                                     tables[i].table);
                else if (r < 0)
                        r = path_why(r, s->path, why, whylen, "loading %s: %s", tables[i].table, strerror(-r));
                else if (rc != SQLITE_DONE)
                        r = sqlite_why(s, rc, "reading", why, whylen);
                sqlite3_reset(st);
        }

        (void) stmt_run(s->stmt[STMT_ROLLBACK]);
        return r < 0 ? r : 0;
}

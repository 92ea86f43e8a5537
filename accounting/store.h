/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store.h — the accounts in the central manager's SQLite database (WAL):
 * the rows the Accountant keeps, written in transactions. Internal to
 * accounting/ (the Accountant is the public face).
 *
 * The database file is the central manager's: one schema for the accounts
 * and the job queue, each part's tables created by its owner's steps
 * (AcctSchema, accounting.h), with one version in the one-row table
 * schema_version so that later releases migrate it. Opening checks the
 * file: not a database, corrupt (PRAGMA quick_check), unreadable, or of a
 * newer schema than this build knows — each a clear error, and the file
 * is left as it was.
 *
 * Conventions: >= 0 on success, -errno on failure; why gets
 * "accounts database PATH: reason".
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "accounting.h"

typedef struct AcctStore AcctStore;

/* One entry as it is stored: its state at as_of. The usage it holds is
 * not stored here: it is the sum of its claims (below). */
typedef struct AcctRecord {
        const char *name;
        bool is_group;
        double priority;             /* RUP at as_of */
        double as_of;
        double accumulated;          /* at as_of */
        double weighted_accumulated; /* at as_of */
        double begin_usage;          /* 0: never */
        double last_usage;           /* at as_of; 0: never */
        double factor;               /* set by an administrator; 0: not set */
} AcctRecord;

typedef struct AcctClaimRow {
        const char *id;
        const char *submitter;
        double weight;
        double begin;
} AcctClaimRow;

/* Opens the database at path; flags and more are acct_open's (AcctOpenFlags):
 * ACCT_OPEN_READONLY, ACCT_OPEN_INIT. A read-write open creates a missing
 * file (mode 0600) with its schema; an existing file without the schema
 * (empty, 0 bytes, or a database with no table) is refused with -ENODATA
 * unless ACCT_OPEN_INIT says to initialise it: an empty file where a
 * database was expected is a lost database, not a new one. A read-write
 * open makes the file and its -wal and -shm mode 0600 (SQLite gives the
 * latter the main file's mode, whatever the umask). Read-only opens never
 * create or migrate: a missing file is -ENOENT, one without the schema yet
 * -ENODATA, one of an older schema -EPROTO (open it read-write once).
 * Errors: -EINVAL (not a database, or not glean's), -EBADMSG (corrupt,
 * truncated), -EPROTO (newer schema), -EISDIR, -EACCES, -ENOENT, ... */
int acct_store_open(const char *path, unsigned flags, const AcctSchema *more, AcctStore **ret, char *why,
                    size_t whylen);
void acct_store_close(AcctStore *s); /* accepts NULL */

/* Transactions: every write happens between begin and commit (the
 * functions below fail with -EINVAL outside one; begin with -EROFS on a
 * read-only store, -EBUSY when another writer holds the database).
 * rollback undoes what was written since begin. A write that fails dooms
 * its transaction: later writes return the same error and commit rolls it
 * back and returns it. A commit that fails has committed nothing, and the
 * transaction is over either way. */
int acct_store_begin(AcctStore *s);
int acct_store_commit(AcctStore *s, char *why, size_t whylen);
void acct_store_rollback(AcctStore *s);

/* Doubles are stored exactly (-0.0 reads back as 0.0); NaN cannot be
 * stored (-EINVAL). Deletes return 1 when there was a row, 0 when not. */
int acct_store_put_record(AcctStore *s, const AcctRecord *r); /* insert or replace by name */
int acct_store_delete_record(AcctStore *s, const char *name);
int acct_store_put_claim(AcctStore *s, const AcctClaimRow *c);  /* insert or replace by id */
int acct_store_delete_claim(AcctStore *s, const char *id);
int acct_store_set_meta(AcctStore *s, const char *key, double value);

/* Reads everything committed, as of one commit: each record (by name),
 * then each claim (by id), then the meta values (by key), through the
 * callbacks (which may be NULL; a negative return stops the load and is
 * returned). Strings are valid during the call only. -EINVAL inside a
 * write transaction. */
typedef struct AcctStoreLoad {
        int (*record)(void *userdata, const AcctRecord *r);
        int (*claim)(void *userdata, const AcctClaimRow *c);
        int (*meta)(void *userdata, const char *key, double value);
        void *userdata;
} AcctStoreLoad;
int acct_store_load(AcctStore *s, const AcctStoreLoad *load, char *why, size_t whylen);

/* The path it was opened with. */
const char *acct_store_path(const AcctStore *s);

/* The connection (for the queue's tables, written inside the store's
 * transactions), and whether a write transaction is open. */
struct sqlite3;
struct sqlite3 *acct_store_sqlite(AcctStore *s);
bool acct_store_in_tx(const AcctStore *s);

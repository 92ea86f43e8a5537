/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-submitid.c — the submissions' ids (queue.h): per user, the
 * cluster each submission id made, in memory ("user\nid" -> QSubmitId)
 * and in queue_submits (schema step 3 of accounting/store.c), written in
 * the submit's own transaction so that a kill -9 keeps both or neither.
 *
 * An entry put in a transaction that then fails is forgotten with it
 * (qsubmit_ids_tx_end): memory is what the last commit holds. Ids older
 * than SUBMIT_ID_LIFETIME are forgotten at most once a minute, in the
 * transaction of the submit that notices it; an entry whose time is past
 * is not found meanwhile. Each user's ids are counted (submit_id_users)
 * against SUBMIT_IDS_PER_USER.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "common/cleanup.h"
#include "queue-internal.h"

#define SUBMIT_ID_MIN 16
#define SUBMIT_ID_MAX 64
#define TRIM_INTERVAL 60.0

typedef struct QSubmitId {
        int64_t cluster, procs;
        double at;
        char key[]; /* "user\nid" */
} QSubmitId;

bool queue_submit_id_valid(const char *id) {
        size_t n = id ? strlen(id) : 0;

        if (n < SUBMIT_ID_MIN || n > SUBMIT_ID_MAX)
                return false;
        return strspn(id, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_-") == n;
}

/* "user\nid" into buf (a user name has no newline: plain_user). */
static bool make_key(const char *user, const char *id, char *buf, size_t len) {
        return user && id && (size_t) snprintf(buf, len, "%s\n%s", user, id) < len;
}

static bool expired(const JobQueue *q, const QSubmitId *e, double now) {
        return q->settings.submit_id_lifetime > 0 && e->at < now - (double) q->settings.submit_id_lifetime;
}

int queue_submit_id_find(const JobQueue *q, const char *user, const char *id, double now, int64_t *ret_cluster,
                         int64_t *ret_procs) {
        char key[512];
        QSubmitId *e;

        if (!q->submit_ids || !queue_submit_id_valid(id) || !make_key(user, id, key, sizeof(key)))
                return 0;
        e = glean_strmap_get(q->submit_ids, key);
        if (!e || expired(q, e, now))
                return 0;
        *ret_cluster = e->cluster;
        *ret_procs = e->procs;
        return 1;
}

static QSubmitId *entry_new(const char *key, int64_t cluster, int64_t procs, double at) {
        size_t len = strlen(key) + 1;
        QSubmitId *e = malloc(sizeof(*e) + len);

        if (!e)
                return NULL;
        e->cluster = cluster;
        e->procs = procs;
        e->at = at;
        memcpy(e->key, key, len);
        return e;
}

/* The count of the user of key ("user\nid") changed by delta. */
static int count_user(JobQueue *q, const char *key, int delta) {
        size_t ulen = (size_t) (strchr(key, '\n') - key);
        char user[256];
        QCount *c;
        int r;

        if (ulen >= sizeof(user))
                return -EINVAL;
        memcpy(user, key, ulen);
        user[ulen] = 0;
        c = glean_strmap_get(q->submit_id_users, user);
        if (!c && delta < 0)
                return 0;
        if (!c) {
                c = calloc(1, sizeof(*c) + ulen + 1);
                if (!c)
                        return -ENOMEM;
                memcpy(c->name, user, ulen + 1);
                r = glean_strmap_put(q->submit_id_users, c->name, c);
                if (r < 0) {
                        free(c);
                        return r;
                }
        }
        if (delta < 0 && c->n < (size_t) -delta)
                c->n = 0;
        else
                c->n += (size_t) delta;
        if (c->n == 0) {
                glean_strmap_remove(q->submit_id_users, c->name);
                free(c);
        }
        return 0;
}

int qsubmit_id_check(const JobQueue *q, const char *user, char *why, size_t whylen) {
        QCount *c = q->submit_id_users ? glean_strmap_get(q->submit_id_users, user) : NULL;

        if (q->settings.submit_ids_per_user > 0 && c && c->n >= (uint64_t) q->settings.submit_ids_per_user)
                return glean_why(-EDQUOT, why, whylen,
                                 "submit refused: %s made %zu submissions in the last SUBMIT_ID_LIFETIME (%" PRId64
                                 " s), the most SUBMIT_IDS_PER_USER (%" PRId64 ") lets the central manager remember",
                                 user, c->n, q->settings.submit_id_lifetime, q->settings.submit_ids_per_user);
        return 0;
}

/* Drops e from the map and frees it. */
static void entry_drop(JobQueue *q, QSubmitId *e) {
        glean_strmap_remove(q->submit_ids, e->key);
        (void) count_user(q, e->key, -1);
        free(e);
}

/* Puts e in the map, freeing what it replaces (never one of new_ids: a
 * key is put once per transaction, the submit being refused otherwise). */
static int entry_put(JobQueue *q, QSubmitId *e) {
        QSubmitId *old = glean_strmap_get(q->submit_ids, e->key);
        int r;

        if (old)
                entry_drop(q, old);
        r = count_user(q, e->key, +1);
        if (r >= 0)
                r = glean_strmap_put(q->submit_ids, e->key, e);
        if (r < 0) {
                (void) count_user(q, e->key, -1);
                free(e);
        }
        return r;
}

int qsubmit_ids_load(JobQueue *q, char *why, size_t whylen) {
        sqlite3_stmt *st = NULL;
        int rc, r = 0;

        rc = sqlite3_prepare_v2(q->db, "SELECT user, id, cluster, procs, at FROM queue_submits", -1, &st, NULL);
        if (rc != SQLITE_OK)
                return glean_why(acct_sqlite_errno(q->db, rc), why, whylen,
                                 "queue database %s: reading the submission ids: %s", q->path, sqlite3_errmsg(q->db));
        while (r >= 0 && (rc = sqlite3_step(st)) == SQLITE_ROW) {
                const char *user = (const char *) sqlite3_column_text(st, 0), *id = (const char *) sqlite3_column_text(st, 1);
                char key[512];
                QSubmitId *e;

                if (!user || !queue_submit_id_valid(id) || !make_key(user, id, key, sizeof(key))) {
                        r = glean_why(-EBADMSG, why, whylen, "queue database %s: a submission id row is not as written",
                                      q->path);
                        break;
                }
                e = entry_new(key, sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3),
                              sqlite3_column_double(st, 4));
                r = e ? entry_put(q, e) : -ENOMEM;
        }
        if (r >= 0 && rc != SQLITE_DONE)
                r = glean_why(acct_sqlite_errno(q->db, rc), why, whylen,
                              "queue database %s: reading the submission ids: %s", q->path, sqlite3_errmsg(q->db));
        sqlite3_finalize(st);
        return r;
}

/* Forgets the ids past their lifetime, in memory and (inside the open
 * change) in the database. */
static int trim(JobQueue *q, double now) {
        sqlite3_stmt *st = q->stmt[QS_TRIM_SUBMIT_IDS];
        double before = now - (double) q->settings.submit_id_lifetime;
        size_t pos = 0, n = 0;
        const char *key;
        void *v;
        int rc;

        if (q->settings.submit_id_lifetime <= 0 || now - q->submit_ids_trimmed < TRIM_INTERVAL)
                return 0;
        q->submit_ids_trimmed = now;
        if (q->db) {
                sqlite3_bind_double(st, 1, before);
                rc = sqlite3_step(st);
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
                if (rc != SQLITE_DONE) {
                        snprintf(q->write_why, sizeof(q->write_why), "queue database %s: forgetting old submission ids: %s",
                                 q->path, sqlite3_errmsg(q->db));
                        return acct_sqlite_errno(q->db, rc);
                }
        }
        /* The map must not change while it is walked: the old ones first
         * gathered (a pass per minute at most). */
        _cleanup_free_ QSubmitId **old = calloc(glean_strmap_size(q->submit_ids) + 1, sizeof(*old));
        if (!old)
                return 0; /* memory forgets them later; they are not found meanwhile */
        while (glean_strmap_next(q->submit_ids, &pos, &key, &v))
                if (((QSubmitId *) v)->at < before)
                        old[n++] = v;
        for (size_t i = 0; i < n; i++)
                entry_drop(q, old[i]);
        return 0;
}

int qsubmit_id_record(JobQueue *q, const char *user, const char *id, int64_t cluster, int64_t procs, double now) {
        sqlite3_stmt *st = q->stmt[QS_PUT_SUBMIT_ID];
        char key[512];
        QSubmitId *e;
        int rc, r;

        if (!queue_submit_id_valid(id) || !make_key(user, id, key, sizeof(key)))
                return -EINVAL;
        r = trim(q, now);
        if (r < 0)
                return r;
        if (q->db) {
                sqlite3_bind_text(st, 1, user, -1, SQLITE_STATIC);
                sqlite3_bind_text(st, 2, id, -1, SQLITE_STATIC);
                sqlite3_bind_int64(st, 3, cluster);
                sqlite3_bind_int64(st, 4, procs);
                sqlite3_bind_double(st, 5, now);
                rc = sqlite3_step(st);
                sqlite3_reset(st);
                sqlite3_clear_bindings(st);
                if (rc != SQLITE_DONE) {
                        snprintf(q->write_why, sizeof(q->write_why),
                                 "queue database %s: writing the submission id of cluster %" PRId64 ": %s", q->path,
                                 cluster, sqlite3_errmsg(q->db));
                        return acct_sqlite_errno(q->db, rc);
                }
        }
        /* Without a database there is no transaction to fail. */
        if (q->db && q->n_new_ids == q->cap_new_ids) {
                size_t cap = q->cap_new_ids ? 2 * q->cap_new_ids : 16;
                QSubmitId **p = realloc(q->new_ids, cap * sizeof(*p));
                if (!p)
                        return -ENOMEM;
                q->new_ids = p;
                q->cap_new_ids = cap;
        }
        e = entry_new(key, cluster, procs, now);
        if (!e)
                return -ENOMEM;
        r = entry_put(q, e);
        if (r < 0)
                return r;
        if (q->db)
                q->new_ids[q->n_new_ids++] = e;
        return 0;
}

void qsubmit_ids_tx_end(JobQueue *q, bool committed) {
        if (!committed)
                for (size_t i = 0; i < q->n_new_ids; i++)
                        entry_drop(q, q->new_ids[i]);
        q->n_new_ids = 0;
}

void qsubmit_ids_free(JobQueue *q) {
        size_t pos = 0;
        const char *key;
        void *v;

        while (q->submit_ids && glean_strmap_next(q->submit_ids, &pos, &key, &v))
                free(v);
        glean_strmap_free(q->submit_ids);
        q->submit_ids = NULL;
        pos = 0;
        while (q->submit_id_users && glean_strmap_next(q->submit_id_users, &pos, &key, &v))
                free(v);
        glean_strmap_free(q->submit_id_users);
        q->submit_id_users = NULL;
        free(q->new_ids);
        q->new_ids = NULL;
        q->n_new_ids = q->cap_new_ids = 0;
}

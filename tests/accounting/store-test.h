/* SPDX-License-Identifier: Apache-2.0 */
/*
 * store-test.h — what the suites of the accounts store (store.h) share: a
 * private temporary directory, a snapshot of everything a store holds
 * (loaded through acct_store_load) and exact comparisons of rows.
 *
 * Every function is static inline, so that a suite uses what it needs.
 * Needs _GNU_SOURCE, defined before the first #include.
 */
#pragma once

#include <errno.h>
#include <ftw.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <CUnit/CUnit.h>

#include "accounting/store.h"
#include "test-util.h"

/* ---- a private directory under /tmp ---- */

static inline int store_test_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

/* dir: at least 64 bytes. 0, or 1 (a CUnit suite init's failure). */
static inline int store_test_mkdtemp(char *dir, size_t len) {
        snprintf(dir, len, "/tmp/glean-store-test.XXXXXX");
        return mkdtemp(dir) ? 0 : 1;
}

static inline int store_test_rmtree(const char *dir) {
        return nftw(dir, store_test_remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : 1;
}

static inline double store_test_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec * 1e3 + (double) ts.tv_nsec / 1e6;
}

/* ---- exact comparisons ---- */

/* The same bits (a double read back must be the one written). */
static inline bool store_test_same(double a, double b) {
        return memcmp(&a, &b, sizeof(a)) == 0;
}

static inline bool store_test_record_eq(const AcctRecord *a, const AcctRecord *b) {
        return strcmp(a->name, b->name) == 0 && a->is_group == b->is_group &&
               store_test_same(a->priority, b->priority) && store_test_same(a->as_of, b->as_of) &&
               store_test_same(a->accumulated, b->accumulated) &&
               store_test_same(a->weighted_accumulated, b->weighted_accumulated) &&
               store_test_same(a->begin_usage, b->begin_usage) && store_test_same(a->last_usage, b->last_usage) &&
               store_test_same(a->factor, b->factor);
}

static inline bool store_test_claim_eq(const AcctClaimRow *a, const AcctClaimRow *b) {
        return strcmp(a->id, b->id) == 0 && strcmp(a->submitter, b->submitter) == 0 &&
               store_test_same(a->weight, b->weight) && store_test_same(a->begin, b->begin);
}

/* ---- a snapshot: everything a store holds, in load order ---- */

typedef struct StoreTestMeta {
        char *key;
        double value;
} StoreTestMeta;

typedef struct StoreSnap {
        AcctRecord *records; /* names malloc'd */
        size_t n_records;
        AcctClaimRow *claims; /* ids and submitters malloc'd */
        size_t n_claims;
        StoreTestMeta *meta;
        size_t n_meta;
} StoreSnap;

static inline void store_snap_clear(StoreSnap *snap) {
        for (size_t i = 0; i < snap->n_records; i++)
                free((char *) snap->records[i].name);
        for (size_t i = 0; i < snap->n_claims; i++) {
                free((char *) snap->claims[i].id);
                free((char *) snap->claims[i].submitter);
        }
        for (size_t i = 0; i < snap->n_meta; i++)
                free(snap->meta[i].key);
        free(snap->records);
        free(snap->claims);
        free(snap->meta);
        *snap = (StoreSnap) {};
}

/* Grows *array (of n elements of size) by one; the new element, zeroed. */
static inline void *store_snap_grow(void *array, size_t *n, size_t size) {
        void **a = array;
        char *na = realloc(*a, (*n + 1) * size);
        if (!na)
                return NULL;
        *a = na;
        memset(na + *n * size, 0, size);
        return na + (*n)++ * size;
}

static inline int store_snap_record(void *userdata, const AcctRecord *r) {
        StoreSnap *snap = userdata;
        AcctRecord *c = store_snap_grow(&snap->records, &snap->n_records, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = *r;
        return (c->name = strdup(r->name)) ? 0 : -ENOMEM;
}

static inline int store_snap_claim(void *userdata, const AcctClaimRow *r) {
        StoreSnap *snap = userdata;
        AcctClaimRow *c = store_snap_grow(&snap->claims, &snap->n_claims, sizeof(*c));
        if (!c)
                return -ENOMEM;
        *c = *r;
        c->id = strdup(r->id);
        c->submitter = strdup(r->submitter);
        return c->id && c->submitter ? 0 : -ENOMEM;
}

static inline int store_snap_meta(void *userdata, const char *key, double value) {
        StoreSnap *snap = userdata;
        StoreTestMeta *m = store_snap_grow(&snap->meta, &snap->n_meta, sizeof(*m));
        if (!m)
                return -ENOMEM;
        m->value = value;
        return (m->key = strdup(key)) ? 0 : -ENOMEM;
}

/* Loads everything s holds into *ret (cleared first); why as acct_store_load's. */
static inline int store_snap_load(AcctStore *s, StoreSnap *ret, char *why, size_t whylen) {
        const AcctStoreLoad load = {
                .record = store_snap_record,
                .claim = store_snap_claim,
                .meta = store_snap_meta,
                .userdata = ret,
        };
        int r;

        store_snap_clear(ret);
        r = acct_store_load(s, &load, why, whylen);
        if (r < 0)
                store_snap_clear(ret);
        return r;
}

/* Opens path (read-only or not), loads it and closes it; CUnit failures on the way. */
static inline bool store_snap_of(const char *path, bool readonly, StoreSnap *ret) {
        AcctStore *s = NULL;
        char why[512] = "";
        int r;

        r = acct_store_open(path, readonly, NULL, &s, why, sizeof(why));
        if (!GLEAN_TEST_CHECK(r == 0, "open %s%s: %d (%s)", path, readonly ? " read-only" : "", r, why))
                return false;
        r = store_snap_load(s, ret, why, sizeof(why));
        acct_store_close(s);
        return GLEAN_TEST_CHECK(r == 0, "load %s: %d (%s)", path, r, why);
}

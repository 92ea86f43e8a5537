/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accounts.c — the Accountant: entries (submitters and group roll-ups),
 * the claims they hold, and their durable copy (store.h).
 *
 * An entry is kept as its state at a time as_of (RUP, accumulated usage)
 * plus what it holds now (the sum of its claims). What it holds only
 * changes when a claim begins or ends, and each such change first brings
 * the entry to that moment (advance()), so the state at any later time
 * follows exactly from the stored one: the store is written at claim
 * changes and by administrators, never merely because time passed. A
 * stored entry's as_of is never earlier than the begin or end of any claim
 * it is charged for, which is what makes the reload exact.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "accounting.h"
#include "common/cleanup.h"
#include "common/strmap.h"
#include "store.h"

typedef struct Entry {
        char *name;
        bool is_group;
        bool configured; /* a group of the tree: kept in memory even when blank */
        size_t group;    /* its quota group; itself for a group */
        double rup;      /* at as_of */
        double as_of;
        double acc;  /* at as_of */
        double wacc; /* at as_of */
        double begin_usage;
        double last_usage; /* at as_of */
        double factor;     /* set by an administrator; 0: not set */
        unsigned in_use;   /* claims held (a group: its subtree's) */
        double usage;      /* their weight */
        bool dirty;        /* changed in this transaction, not written yet */
} Entry;

typedef struct Claim {
        char *id;
        Entry *submitter;
        double weight; /* SlotWeight as given */
        double begin;
} Claim;

typedef struct Meta {
        struct Meta *next;
        double value;
        char key[];
} Meta;

struct Accountant {
        AcctSettings settings;
        AcctGroups *groups;
        AcctStore *store; /* NULL: in memory only */
        bool readonly;
        GleanStrMap *entries; /* name -> Entry */
        Entry **group_entry;  /* per group index */
        GleanStrMap *claims;  /* id -> Claim */
        Meta *meta;
        Entry **dirty; /* written once each when the change or batch ends */
        size_t n_dirty, cap_dirty;
        double now;
        bool in_batch;
        int batch_error; /* a write of this batch failed: the batch is void */
        AcctPartner partner; /* the job queue, writing in the same transactions */
        char error[512];
};

/* ---- entries ---- */

/* Names go into keys and ads: no white space or quotes. */
static bool is_plain_name(const char *s) {
        return *s && !strpbrk(s, " \t\r\n\"'\\");
}

static void entry_free(Entry *e) {
        if (!e)
                return;
        free(e->name);
        free(e);
}

static Entry *entry_new(const char *name, bool is_group, size_t group, double t) {
        Entry *e = calloc(1, sizeof(*e));

        if (!e || !(e->name = strdup(name))) {
                free(e);
                return NULL;
        }
        e->is_group = is_group;
        e->group = group;
        e->rup = ACCT_MIN_PRIORITY;
        e->as_of = t;
        return e;
}

/* Resets an entry to what a new one holds (its claims stay). */
static void entry_blank(Entry *e, double t) {
        e->rup = ACCT_MIN_PRIORITY;
        e->as_of = t;
        e->acc = e->wacc = 0;
        e->begin_usage = e->last_usage = 0;
        e->factor = 0;
}

/* The state of e at t >= as_of, into *v (e itself when v == e). */
static void entry_at(const Accountant *a, const Entry *e, double t, Entry *v) {
        double dt = t - e->as_of;

        if (v != e)
                *v = *e;
        if (!(dt > 0))
                return;
        v->rup = acct_rup_advance(e->rup, e->usage, dt, a->settings.halflife);
        v->acc = e->acc + e->in_use * dt;
        v->wacc = e->wacc + e->usage * dt;
        if (e->in_use > 0)
                v->last_usage = t;
        v->as_of = t;
}

static void advance(const Accountant *a, Entry *e, double t) {
        entry_at(a, e, t, e);
}

static bool is_remote(const Accountant *a, const char *name) {
        const char *at = strrchr(name, '@');

        return at && *a->settings.local_domain && strcasecmp(at + 1, a->settings.local_domain) != 0;
}

/* HTCondor's chain: nice users, then the group's factor, then remote
 * submitters, then the default. */
static double default_factor(const Accountant *a, const Entry *e) {
        const AcctGroup *g = acct_groups_get(a->groups, e->group);

        if (!e->is_group && strncmp(e->name, ACCT_NICE_PREFIX, strlen(ACCT_NICE_PREFIX)) == 0)
                return a->settings.nice_factor;
        if (e->group != 0 && g->prio_factor > 0)
                return g->prio_factor;
        if (!e->is_group && is_remote(a, e->name))
                return a->settings.remote_factor;
        return a->settings.default_factor;
}

static double effective_weight(const Accountant *a, const Claim *c) {
        return a->settings.use_slot_weights ? c->weight : 1.0;
}

/* The entries a claim of submitter e is charged to: e, its quota group
 * and that group's ancestors below the root ("<none>" only for submitters
 * in no group). */
static size_t charge_chain(const Accountant *a, Entry *e, Entry **chain, size_t max) {
        size_t n = 0, g = e->group;

        chain[n++] = e;
        for (;;) {
                const AcctGroup *grp = acct_groups_get(a->groups, g);
                if (n < max)
                        chain[n++] = a->group_entry[g];
                if (g == 0 || grp->parent == 0)
                        break;
                g = grp->parent;
        }
        return n;
}

#define CHAIN_MAX 128 /* dotted names of 40 characters nest at most 20 deep */

static void charge(const Accountant *a, Entry *e, int claims, double weight, double t) {
        advance(a, e, t);
        if (claims > 0 && e->begin_usage == 0)
                e->begin_usage = t;
        if (claims > 0 || e->in_use > 0)
                e->last_usage = t;
        e->in_use += claims;
        e->usage += weight;
        if (e->in_use == 0 || e->usage < 0)
                e->usage = 0; /* no rounding residue once nothing is held */
}

/* ---- the store ---- */

/* An entry changed: it is written when the change (or the batch) ends,
 * once however often it changed (a group's roll-up changes with each of
 * its submitters' claims). */
static int write_entry(Accountant *a, Entry *e) {
        if (!a->store || e->dirty)
                return 0;
        if (a->n_dirty == a->cap_dirty) {
                size_t cap = a->cap_dirty ? 2 * a->cap_dirty : 256;
                Entry **d = realloc(a->dirty, cap * sizeof(*d));
                if (!d)
                        return -ENOMEM;
                a->dirty = d;
                a->cap_dirty = cap;
        }
        a->dirty[a->n_dirty++] = e;
        e->dirty = true;
        return 0;
}

/* Writes the changed entries (before a commit, and before any entry is
 * removed from memory). */
static int flush_dirty(Accountant *a) {
        int r = 0;

        for (size_t i = 0; i < a->n_dirty; i++) {
                Entry *e = a->dirty[i];
                AcctRecord rec = {
                        .name = e->name,
                        .is_group = e->is_group,
                        .priority = e->rup,
                        .as_of = e->as_of,
                        .accumulated = e->acc,
                        .weighted_accumulated = e->wacc,
                        .begin_usage = e->begin_usage,
                        .last_usage = e->last_usage,
                        .factor = e->factor,
                };

                e->dirty = false;
                if (r >= 0)
                        r = acct_store_put_record(a->store, &rec);
        }
        a->n_dirty = 0;
        return r;
}

static int write_claim(Accountant *a, const Claim *c) {
        AcctClaimRow row = { c->id, c->submitter->name, c->weight, c->begin };

        return a->store ? acct_store_put_claim(a->store, &row) : 0;
}

static void clear_memory(Accountant *a) {
        size_t pos = 0;
        void *v;

        if (a->claims) {
                while (glean_strmap_next(a->claims, &pos, NULL, &v)) {
                        Claim *c = v;
                        free(c->id);
                        free(c);
                }
                glean_strmap_free(a->claims);
                a->claims = NULL;
        }
        pos = 0;
        if (a->entries) {
                while (glean_strmap_next(a->entries, &pos, NULL, &v))
                        entry_free(v);
                glean_strmap_free(a->entries);
                a->entries = NULL;
        }
        free(a->group_entry);
        a->group_entry = NULL;
        free(a->dirty);
        a->dirty = NULL;
        a->n_dirty = a->cap_dirty = 0;
        while (a->meta) {
                Meta *m = a->meta;
                a->meta = m->next;
                free(m);
        }
}

static int add_entry(Accountant *a, Entry *e) {
        int r = glean_strmap_put(a->entries, e->name, e);

        if (r < 0)
                entry_free(e);
        return r;
}

/* The configured groups' entries, blank. */
static int make_group_entries(Accountant *a, double t) {
        size_t n = acct_groups_count(a->groups);

        a->group_entry = calloc(n, sizeof(Entry *));
        if (!a->group_entry)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                Entry *e = glean_strmap_get(a->entries, acct_groups_get(a->groups, i)->name);
                int r;

                if (!e) {
                        e = entry_new(acct_groups_get(a->groups, i)->name, true, i, t);
                        if (!e || (r = add_entry(a, e)) < 0)
                                return e ? r : -ENOMEM;
                }
                e->is_group = e->configured = true;
                e->group = i;
                a->group_entry[i] = e;
        }
        return 0;
}

/* A group entry of a group no longer configured keeps its own index 0
 * (it rolls nothing up any more); submitters get their group anew. */
static void assign_groups(Accountant *a) {
        size_t pos = 0;
        void *v;

        while (glean_strmap_next(a->entries, &pos, NULL, &v)) {
                Entry *e = v;
                if (!e->is_group)
                        e->group = acct_groups_of_submitter(a->groups, e->name);
                else if (!e->configured)
                        e->group = 0;
        }
}

/* What every entry holds, from the claims. */
static void sum_claims(Accountant *a) {
        size_t pos = 0;
        void *v;

        while (glean_strmap_next(a->entries, &pos, NULL, &v)) {
                Entry *e = v;
                e->in_use = 0;
                e->usage = 0;
        }
        pos = 0;
        while (glean_strmap_next(a->claims, &pos, NULL, &v)) {
                Claim *c = v;
                Entry *chain[CHAIN_MAX];
                size_t n = charge_chain(a, c->submitter, chain, CHAIN_MAX);

                for (size_t i = 0; i < n; i++) {
                        chain[i]->in_use++;
                        chain[i]->usage += effective_weight(a, c);
                }
        }
}

/* Rows are outside input: a value no write of ours could have stored
 * refuses the database rather than poisoning every priority after it. */
typedef struct LoadCtx {
        Accountant *a;
        char why[384]; /* what was wrong with a row ("" if nothing) */
} LoadCtx;

static bool time_ok(double t) {
        return isfinite(t) && t >= 0;
}

static int bad_row(LoadCtx *l, const char *what, const char *name, const char *field, double v) {
        return glean_why(-EBADMSG, l->why, sizeof(l->why), "accounts database %s: %s '%.80s': %s %g is not possible",
                         acct_store_path(l->a->store), what, name, field, v);
}

static int load_record(void *userdata, const AcctRecord *r) {
        LoadCtx *l = userdata;
        Accountant *a = l->a;
        Entry *e;

        if (!is_plain_name(r->name))
                return glean_why(-EBADMSG, l->why, sizeof(l->why), "accounts database %s: an entry named '%.80s'",
                                 acct_store_path(a->store), r->name);
        if (!isfinite(r->priority) || r->priority < ACCT_MIN_PRIORITY)
                return bad_row(l, "entry", r->name, "priority", r->priority);
        if (!time_ok(r->as_of) || !time_ok(r->begin_usage) || !time_ok(r->last_usage))
                return bad_row(l, "entry", r->name, "time", !time_ok(r->as_of) ? r->as_of
                                                            : !time_ok(r->begin_usage) ? r->begin_usage : r->last_usage);
        if (!isfinite(r->accumulated) || r->accumulated < 0 || !isfinite(r->weighted_accumulated) ||
            r->weighted_accumulated < 0)
                return bad_row(l, "entry", r->name, "usage", !isfinite(r->accumulated) || r->accumulated < 0
                                                                     ? r->accumulated
                                                                     : r->weighted_accumulated);
        if (!isfinite(r->factor) || (r->factor != 0 && r->factor < 1))
                return bad_row(l, "entry", r->name, "factor", r->factor);
        e = entry_new(r->name, r->is_group, 0, r->as_of);
        if (!e)
                return -ENOMEM;
        e->rup = r->priority;
        e->acc = r->accumulated;
        e->wacc = r->weighted_accumulated;
        e->begin_usage = r->begin_usage;
        e->last_usage = r->last_usage;
        e->factor = r->factor;
        return add_entry(a, e);
}

static int load_claim(void *userdata, const AcctClaimRow *row) {
        LoadCtx *l = userdata;
        Accountant *a = l->a;
        Entry *e;
        Claim *c;
        int r;

        if (!is_plain_name(row->id) || !is_plain_name(row->submitter))
                return glean_why(-EBADMSG, l->why, sizeof(l->why), "accounts database %s: a claim '%.80s' of '%.80s'",
                                 acct_store_path(a->store), row->id, row->submitter);
        if (!isfinite(row->weight) || row->weight < 0)
                return bad_row(l, "claim", row->id, "weight", row->weight);
        if (!time_ok(row->begin))
                return bad_row(l, "claim", row->id, "begin time", row->begin);
        e = glean_strmap_get(a->entries, row->submitter);

        if (!e) {
                /* Never written so, but a claim must not be lost. */
                e = entry_new(row->submitter, false, 0, row->begin);
                if (!e || (r = add_entry(a, e)) < 0)
                        return e ? r : -ENOMEM;
        }
        c = calloc(1, sizeof(*c));
        if (!c || !(c->id = strdup(row->id))) {
                free(c);
                return -ENOMEM;
        }
        c->submitter = e;
        c->weight = row->weight;
        c->begin = row->begin;
        r = glean_strmap_put(a->claims, c->id, c);
        if (r < 0) {
                free(c->id);
                free(c);
        }
        return r;
}

static Meta *meta_find(const Accountant *a, const char *key) {
        for (Meta *m = a->meta; m; m = m->next)
                if (strcmp(m->key, key) == 0)
                        return m;
        return NULL;
}

static int meta_put(Accountant *a, const char *key, double value) {
        Meta *m = meta_find(a, key);

        if (!m) {
                m = malloc(sizeof(*m) + strlen(key) + 1);
                if (!m)
                        return -ENOMEM;
                strcpy(m->key, key);
                m->next = a->meta;
                a->meta = m;
        }
        m->value = value;
        return 0;
}

static int load_meta(void *userdata, const char *key, double value) {
        LoadCtx *l = userdata;
        Accountant *a = l->a;

        if (!isfinite(value))
                return bad_row(l, "value", key, "number", value);

        if (strcmp(key, "last_update") == 0 && value > a->now)
                a->now = value;
        return meta_put(a, key, value);
}

/* Memory from the store (or empty without one). */
static int load(Accountant *a, char *why, size_t whylen) {
        LoadCtx ctx = { .a = a };
        AcctStoreLoad l = { load_record, load_claim, load_meta, &ctx };
        int r;

        clear_memory(a);
        if ((r = glean_strmap_new(false, &a->entries)) < 0 || (r = glean_strmap_new(false, &a->claims)) < 0)
                return r;
        if (a->store && (r = acct_store_load(a->store, &l, why, whylen)) < 0) {
                if (ctx.why[0])
                        snprintf(why, whylen, "%s", ctx.why);
                return r;
        }
        if ((r = make_group_entries(a, a->now)) < 0)
                return r;
        assign_groups(a);
        sum_claims(a);
        return 0;
}

/* A change starts: a transaction of its own unless in a batch. */
static int change_begin(Accountant *a) {
        if (a->readonly)
                return -EROFS;
        if (a->in_batch)
                return a->batch_error;
        return a->store ? acct_store_begin(a->store) : 0;
}

/* Undo a failed change: the memory is read back from the store; why
 * (may be NULL) says what failed. */
static int change_fail(Accountant *a, int r, const char *why) {
        char load_why[256] = "";

        if (!a->store)
                return r;
        if (why && *why)
                snprintf(a->error, sizeof(a->error), "%s", why);
        else
                snprintf(a->error, sizeof(a->error), "accounts database %s: write failed: %s",
                         acct_store_path(a->store), strerror(-r));
        acct_store_rollback(a->store);
        if (load(a, load_why, sizeof(load_why)) < 0)
                snprintf(a->error, sizeof(a->error), "%s", load_why);
        if (a->in_batch)
                a->batch_error = r;
        if (a->partner.tx_end)
                a->partner.tx_end(a->partner.userdata, false);
        return r;
}

/* A change ends: r < 0 undoes it; else it commits unless in a batch. */
static int change_end(Accountant *a, int r) {
        char why[256] = "";

        if (r < 0)
                return change_fail(a, r, NULL);
        if (!a->store || a->in_batch)
                return 0;
        if ((r = flush_dirty(a)) < 0)
                return change_fail(a, r, NULL);
        r = acct_store_commit(a->store, why, sizeof(why));
        if (r < 0)
                return change_fail(a, r, why);
        if (a->partner.tx_end)
                a->partner.tx_end(a->partner.userdata, true);
        return 0;
}

static double clock_to(Accountant *a, double now) {
        if (now > a->now)
                a->now = now;
        return a->now;
}

/* ---- opening ---- */

int acct_open(const char *path, unsigned flags, const AcctSchema *more, AcctSettings *settings, AcctGroups *groups,
              double now, Accountant **ret, char *why, size_t whylen) {
        Accountant *a = calloc(1, sizeof(*a));
        int r;

        if (!a) {
                acct_settings_clear(settings);
                acct_groups_free(groups);
                return -ENOMEM;
        }
        a->settings = *settings;
        *settings = (AcctSettings){};
        a->groups = groups;
        a->readonly = flags & ACCT_OPEN_READONLY;
        a->now = now;
        if (path && (r = acct_store_open(path, flags, more, &a->store, why, whylen)) < 0)
                goto fail;
        if ((r = load(a, why, whylen)) < 0)
                goto fail;
        *ret = a;
        return 0;
fail:
        acct_close(a);
        return r;
}

void acct_close(Accountant *a) {
        if (!a)
                return;
        if (a->in_batch && a->store)
                acct_store_rollback(a->store);
        clear_memory(a);
        acct_store_close(a->store);
        acct_groups_free(a->groups);
        acct_settings_clear(&a->settings);
        free(a);
}

int acct_reconfigure(Accountant *a, AcctSettings *settings, AcctGroups *groups, double now) {
        double t = clock_to(a, now);
        size_t pos = 0;
        void *v;
        int r;

        if (a->in_batch) {
                acct_settings_clear(settings);
                acct_groups_free(groups);
                return -EBUSY;
        }
        if (!a->readonly && (r = change_begin(a)) < 0) {
                acct_settings_clear(settings);
                acct_groups_free(groups);
                return r;
        }
        /* Bring everyone to now under the old rules (written, so that the
         * store's entries are as of now too), then switch. A failed write
         * reloads the store under the new rules at change_end(). */
        r = 0;
        while (glean_strmap_next(a->entries, &pos, NULL, &v)) {
                advance(a, v, t);
                ((Entry *) v)->configured = false;
                if (!a->readonly && r >= 0)
                        r = write_entry(a, v);
        }
        acct_settings_clear(&a->settings);
        a->settings = *settings;
        *settings = (AcctSettings){};
        acct_groups_free(a->groups);
        a->groups = groups;
        free(a->group_entry);
        a->group_entry = NULL;
        if (r >= 0 && (r = make_group_entries(a, t)) >= 0) {
                assign_groups(a);
                sum_claims(a);
        }
        return a->readonly ? r : change_end(a, r);
}

const AcctGroups *acct_groups(const Accountant *a) {
        return a->groups;
}

const AcctSettings *acct_settings(const Accountant *a) {
        return &a->settings;
}

double acct_now(const Accountant *a) {
        return a->now;
}

const char *acct_last_error(const Accountant *a) {
        return a->error;
}

/* ---- claims ---- */

/* Charge (sign +1) or uncharge (-1) a claim along its chain, writing each entry. */
static int charge_claim(Accountant *a, Claim *c, int sign, double t) {
        Entry *chain[CHAIN_MAX];
        size_t n = charge_chain(a, c->submitter, chain, CHAIN_MAX);
        double w = effective_weight(a, c);
        int r = 0;

        for (size_t i = 0; i < n && r >= 0; i++) {
                charge(a, chain[i], sign, sign * w, t);
                r = write_entry(a, chain[i]);
        }
        return r;
}

int acct_claim_begin(Accountant *a, const char *claim_id, const char *submitter, double weight, double now) {
        Entry *e;
        Claim *c;
        double t;
        int r;

        if (!is_plain_name(claim_id) || !is_plain_name(submitter) || !isfinite(weight) || weight < 0)
                return -EINVAL;
        if (glean_strmap_get(a->claims, claim_id))
                return -EEXIST;
        if ((r = change_begin(a)) < 0)
                return r;
        t = clock_to(a, now);
        e = glean_strmap_get(a->entries, submitter);
        if (!e) {
                e = entry_new(submitter, false, acct_groups_of_submitter(a->groups, submitter), t);
                if (!e || (r = add_entry(a, e)) < 0)
                        return change_end(a, e ? r : -ENOMEM);
        }
        c = calloc(1, sizeof(*c));
        if (!c || !(c->id = strdup(claim_id))) {
                free(c);
                return change_end(a, -ENOMEM);
        }
        c->submitter = e;
        c->weight = weight;
        c->begin = t;
        r = glean_strmap_put(a->claims, c->id, c);
        if (r < 0) {
                free(c->id);
                free(c);
                return change_end(a, r);
        }
        r = charge_claim(a, c, +1, t);
        if (r >= 0)
                r = write_claim(a, c);
        return change_end(a, r);
}

int acct_claim_end(Accountant *a, const char *claim_id, double now) {
        Claim *c = glean_strmap_get(a->claims, claim_id);
        double t;
        int r;

        if (!c)
                return -ENOENT;
        if ((r = change_begin(a)) < 0)
                return r;
        t = clock_to(a, now);
        r = charge_claim(a, c, -1, t);
        if (r >= 0 && a->store)
                r = acct_store_delete_claim(a->store, c->id);
        if (r >= 0) {
                glean_strmap_remove(a->claims, c->id);
                free(c->id);
                free(c);
        }
        return change_end(a, r);
}

int acct_claim_set_weight(Accountant *a, const char *claim_id, double weight, double now) {
        Claim *c = glean_strmap_get(a->claims, claim_id);
        double t;
        int r;

        if (!c)
                return -ENOENT;
        if (!isfinite(weight) || weight < 0)
                return -EINVAL;
        if (c->weight == weight)
                return 0;
        if ((r = change_begin(a)) < 0)
                return r;
        t = clock_to(a, now);
        r = charge_claim(a, c, -1, t);
        if (r >= 0) {
                c->weight = weight;
                r = charge_claim(a, c, +1, t);
        }
        if (r >= 0)
                r = write_claim(a, c);
        return change_end(a, r);
}

size_t acct_claims_count(const Accountant *a) {
        return glean_strmap_size(a->claims);
}

int acct_claim_get(const Accountant *a, const char *claim_id, const char **ret_submitter, double *ret_weight,
                   double *ret_begin) {
        const Claim *c = glean_strmap_get(a->claims, claim_id);

        if (!c)
                return -ENOENT;
        if (ret_submitter)
                *ret_submitter = c->submitter->name;
        if (ret_weight)
                *ret_weight = c->weight;
        if (ret_begin)
                *ret_begin = c->begin;
        return 0;
}

/* ---- the periodic update ---- */

/* Carries nothing: no claims, priority back at the floor, nothing set by
 * an administrator, no jobs. */
static bool forgettable(const Entry *e, AcctHasJobsFn has_jobs, void *userdata) {
        return e->in_use == 0 && e->rup <= ACCT_MIN_PRIORITY && e->factor == 0 &&
               !(has_jobs && !e->is_group && has_jobs(userdata, e->name));
}

static bool blank(const Entry *e) {
        return e->rup <= ACCT_MIN_PRIORITY && e->acc == 0 && e->wacc == 0 && e->begin_usage == 0 &&
               e->last_usage == 0 && e->factor == 0;
}

int acct_update(Accountant *a, double now, AcctHasJobsFn has_jobs, void *userdata) {
        _cleanup_free_ Entry **gone = NULL;
        size_t n_gone = 0, pos = 0;
        double t = clock_to(a, now);
        bool writing = !a->readonly;
        void *v;
        int r = 0;

        gone = calloc(glean_strmap_size(a->entries) + 1, sizeof(Entry *));
        if (!gone)
                return -ENOMEM;
        if (writing && (r = change_begin(a)) < 0)
                return r;
        while (glean_strmap_next(a->entries, &pos, NULL, &v)) {
                Entry *e = v;
                advance(a, e, t);
                if (writing && forgettable(e, has_jobs, userdata) && !(e->configured && blank(e)))
                        gone[n_gone++] = e;
        }
        if (n_gone > 0 && a->store && writing)
                r = flush_dirty(a);
        for (size_t i = 0; i < n_gone && r >= 0; i++) {
                Entry *e = gone[i];
                if (writing && a->store)
                        r = acct_store_delete_record(a->store, e->name);
                if (r < 0)
                        break;
                if (e->configured)
                        entry_blank(e, t);
                else
                        entry_free(glean_strmap_remove(a->entries, e->name));
        }
        if (r >= 0)
                r = meta_put(a, "last_update", t);
        if (writing && r >= 0 && a->store)
                r = acct_store_set_meta(a->store, "last_update", t);
        return writing ? change_end(a, r) : r;
}

/* ---- reading ---- */

static void fill(const Accountant *a, const Entry *e, AcctEntry *ret) {
        Entry v;

        entry_at(a, e, a->now, &v);
        *ret = (AcctEntry){
                .name = e->name,
                .is_group = e->is_group,
                .group = e->group,
                .rup = v.rup,
                .factor = e->factor > 0 ? e->factor : default_factor(a, e),
                .factor_set = e->factor > 0,
                .in_use = e->in_use,
                .weighted_in_use = e->usage,
                .accumulated = v.acc,
                .weighted_accumulated = v.wacc,
                .begin_usage = v.begin_usage,
                .last_usage = v.last_usage,
        };
        ret->eup = ret->rup * ret->factor;
}

int acct_list(const Accountant *a, AcctEntry **ret, size_t *ret_n) {
        size_t n = glean_strmap_size(a->entries), i = 0, pos = 0;
        AcctEntry *list = calloc(n + 1, sizeof(*list));
        void *v;

        if (!list)
                return -ENOMEM;
        while (glean_strmap_next(a->entries, &pos, NULL, &v))
                fill(a, v, &list[i++]);
        *ret = list;
        *ret_n = n;
        return 0;
}

int acct_get(const Accountant *a, const char *name, AcctEntry *ret) {
        const Entry *e = glean_strmap_get(a->entries, name);
        Entry fresh;

        if (e) {
                fill(a, e, ret);
                return 0;
        }
        fresh = (Entry){ .name = (char *) name, .group = acct_groups_of_submitter(a->groups, name),
                         .rup = ACCT_MIN_PRIORITY, .as_of = a->now };
        fill(a, &fresh, ret);
        return -ENOENT;
}

double acct_default_factor(const Accountant *a, const char *name) {
        const Entry *e = glean_strmap_get(a->entries, name);
        Entry fresh;

        if (e)
                return default_factor(a, e);
        fresh = (Entry){ .name = (char *) name, .group = acct_groups_of_submitter(a->groups, name) };
        return default_factor(a, &fresh);
}

/* ---- administrators ---- */

static int admin_change(Accountant *a, const char *name, double now, int (*apply)(Accountant *, Entry *, double, double),
                        double arg) {
        Entry *e = glean_strmap_get(a->entries, name);
        int r;

        if (!e)
                return -ENOENT;
        if ((r = change_begin(a)) < 0)
                return r;
        r = apply(a, e, clock_to(a, now), arg);
        return change_end(a, r);
}

static int apply_factor(Accountant *a, Entry *e, double t, double factor) {
        advance(a, e, t);
        e->factor = factor;
        return write_entry(a, e);
}

static int apply_priority(Accountant *a, Entry *e, double t, double priority) {
        advance(a, e, t);
        e->rup = priority;
        return write_entry(a, e);
}

static int apply_reset(Accountant *a, Entry *e, double t, double unused) {
        (void) unused;
        advance(a, e, t);
        e->acc = e->wacc = 0;
        e->begin_usage = e->in_use > 0 ? t : 0;
        return write_entry(a, e);
}

static int apply_delete(Accountant *a, Entry *e, double t, double unused) {
        int r;

        (void) t;
        (void) unused;
        if (e->configured)
                return -EPERM;
        if (e->in_use > 0)
                return -EBUSY;
        r = a->store ? flush_dirty(a) : 0;
        if (r >= 0 && a->store)
                r = acct_store_delete_record(a->store, e->name);
        if (r >= 0)
                entry_free(glean_strmap_remove(a->entries, e->name));
        return r;
}

int acct_ensure(Accountant *a, const char *name, double now) {
        Entry *e;
        int r;

        if (!is_plain_name(name))
                return -EINVAL;
        if (glean_strmap_get(a->entries, name))
                return 0;
        if ((r = change_begin(a)) < 0)
                return r;
        e = entry_new(name, false, acct_groups_of_submitter(a->groups, name), clock_to(a, now));
        if (!e)
                return change_end(a, -ENOMEM);
        r = add_entry(a, e);
        if (r >= 0)
                r = write_entry(a, e);
        r = change_end(a, r);
        return r < 0 ? r : 1;
}

/* As HTCondor's accountant, a factor or priority may be set before the
 * submitter is seen: a name of the form user@domain the accounts do not
 * know yet is made known first. Any other unknown name (a group is
 * configured, a bare "alice" is a typo for alice@domain) stays -ENOENT. */
static int admin_set(Accountant *a, const char *name, double now, int (*apply)(Accountant *, Entry *, double, double),
                     double arg) {
        const char *at = strchr(name, '@');
        int r;

        if (!glean_strmap_get(a->entries, name) && at && at != name && at[1] && !strchr(at + 1, '@') &&
            (r = acct_ensure(a, name, now)) < 0)
                return r == -EINVAL ? -ENOENT : r;
        return admin_change(a, name, now, apply, arg);
}

int acct_set_factor(Accountant *a, const char *name, double factor, double now) {
        if (!isfinite(factor) || factor < 1.0)
                return -EINVAL;
        return admin_set(a, name, now, apply_factor, factor);
}

int acct_set_priority(Accountant *a, const char *name, double priority, double now) {
        if (!isfinite(priority) || priority < ACCT_MIN_PRIORITY)
                return -EINVAL;
        return admin_set(a, name, now, apply_priority, priority);
}

int acct_reset_usage(Accountant *a, const char *name, double now) {
        return admin_change(a, name, now, apply_reset, 0);
}

int acct_delete(Accountant *a, const char *name, double now) {
        return admin_change(a, name, now, apply_delete, 0);
}

int acct_get_meta(const Accountant *a, const char *key, double *ret) {
        const Meta *m = meta_find(a, key);

        if (!m)
                return -ENOENT;
        *ret = m->value;
        return 0;
}

int acct_set_meta(Accountant *a, const char *key, double value) {
        int r = change_begin(a);

        if (r < 0)
                return r;
        r = meta_put(a, key, value);
        if (r >= 0 && a->store)
                r = acct_store_set_meta(a->store, key, value);
        return change_end(a, r);
}

/* ---- batches ---- */

int acct_batch_begin(Accountant *a) {
        int r;

        if (a->readonly)
                return -EROFS;
        if (a->in_batch)
                return -EBUSY;
        if (a->store && (r = acct_store_begin(a->store)) < 0)
                return r;
        a->in_batch = true;
        a->batch_error = 0;
        return 0;
}

int acct_batch_commit(Accountant *a) {
        int r = a->batch_error;

        if (!a->in_batch)
                return -EINVAL;
        a->in_batch = false;
        a->batch_error = 0;
        if (r < 0)
                return r; /* rolled back and reloaded when it failed */
        return change_end(a, 0);
}

/* ---- the partner (the job queue) ---- */

struct sqlite3 *acct_sqlite(Accountant *a) {
        return a->store ? acct_store_sqlite(a->store) : NULL;
}

bool acct_readonly(const Accountant *a) {
        return a->readonly;
}

void acct_set_partner(Accountant *a, const AcctPartner *p) {
        a->partner = p ? *p : (AcctPartner) {};
}

int acct_change_begin(Accountant *a) {
        return change_begin(a);
}

int acct_change_end(Accountant *a, int r, const char *why) {
        return r < 0 ? change_fail(a, r, why) : change_end(a, 0);
}

bool acct_in_batch(const Accountant *a) {
        return a->in_batch;
}

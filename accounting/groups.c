/* SPDX-License-Identifier: Apache-2.0 */
/*
 * groups.c — the accounting groups of GROUP_NAMES, each with its knobs
 * (seed 000, 3.4.8), and the quota group a submitter belongs to.
 *
 * Group names are case-insensitive. An open-addressing index keyed on a
 * hash of the lower-cased name finds a group by name, and every dotted
 * prefix of a submitter's name in one pass over it: the matchmaker asks
 * for each of its submitters, every cycle.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "cleanup.h"

/* GROUP_QUOTA_<g> is a number of slots; HTCondor reads it in 0..INT_MAX. */
#define STATIC_QUOTA_MAX ((double) INT_MAX)

typedef struct GroupKey {
        uint64_t hash; /* of the lower-cased name */
        size_t len;
} GroupKey;

struct AcctGroups {
        AcctGroup *groups; /* [0] is the root, "<none>" */
        GroupKey *keys;    /* one per group */
        size_t n;
        uint32_t *index;   /* group + 1 per slot, 0 when empty; mask + 1 slots, at least 2n */
        size_t mask;
        size_t *child_pool; /* every group's children, one array */
        bool allow_oversubscription;
};

/* ---- names ---- */

static inline unsigned char lower(unsigned char c) {
        return c >= 'A' && c <= 'Z' ? (unsigned char) (c - 'A' + 'a') : c;
}

#define HASH_INIT UINT64_C(0xcbf29ce484222325) /* FNV-1a, 64 bits */

static inline uint64_t hash_step(uint64_t h, unsigned char c) {
        return (h ^ lower(c)) * UINT64_C(0x100000001b3);
}

static uint64_t name_hash(const char *s, size_t len) {
        uint64_t h = HASH_INIT;
        for (size_t i = 0; i < len; i++)
                h = hash_step(h, (unsigned char) s[i]);
        return h;
}

static bool same_name(const char *a, const char *b, size_t len) {
        for (size_t i = 0; i < len; i++)
                if (lower((unsigned char) a[i]) != lower((unsigned char) b[i]))
                        return false;
        return true;
}

/* The group whose name is the len bytes at name (hash h), case-insensitive. */
static int index_find(const AcctGroups *g, const char *name, size_t len, uint64_t h, size_t *ret) {
        for (size_t pos = (size_t) h & g->mask;; pos = (pos + 1) & g->mask) {
                uint32_t slot = g->index[pos];
                if (slot == 0)
                        return -ENOENT;
                const GroupKey *k = &g->keys[slot - 1];
                if (k->hash == h && k->len == len && same_name(g->groups[slot - 1].name, name, len)) {
                        *ret = slot - 1;
                        return 0;
                }
        }
}

/* Enters group i; -EEXIST (ret: the group already there) when a group of
 * that name (any case) is. The index is never more than half full. */
static int index_add(AcctGroups *g, size_t i, size_t *ret_other) {
        const GroupKey *k = &g->keys[i];
        size_t pos = (size_t) k->hash & g->mask;

        if (index_find(g, g->groups[i].name, k->len, k->hash, ret_other) >= 0)
                return -EEXIST;
        while (g->index[pos] != 0)
                pos = (pos + 1) & g->mask;
        g->index[pos] = (uint32_t) (i + 1);
        return 0;
}

/* ---- reading the configuration ---- */

static void acct_groups_freep(AcctGroups **g) {
        acct_groups_free(*g);
}

static void strv_freep(char ***strv) {
        config_strv_free(*strv);
}

/* err = "FILE:LINE of name: reason" (config_where's file and line). */
__attribute__((format(printf, 4, 5))) static int knob_error(const Config *cfg, const char *name, ConfigError *err,
                                                            const char *fmt, ...) {
        const char *file = NULL;
        int line = 0;
        va_list ap;

        if (!err)
                return -EINVAL;
        if (config_where(cfg, name, &file, &line) < 0) {
                file = NULL;
                line = 0;
        }
        snprintf(err->file, sizeof err->file, "%s", file ? file : "");
        err->line = line;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* A name of GROUP_NAMES: 1 to 40 characters, dot-separated components
 * that are not empty, none of the characters an AccountingGroup cannot
 * hold, not the root's name, and not the nice users' prefix (a group
 * "nice-user" could never have members: nice-user.alice@dom is alice's
 * nice-user jobs, 3.4.8). */
static int check_name(const Config *cfg, const char *name, ConfigError *err) {
        size_t len = strlen(name);

        if (len == 0)
                return knob_error(cfg, "GROUP_NAMES", err, "GROUP_NAMES: a group name is empty");
        if (len > ACCT_GROUP_NAME_MAX)
                return knob_error(cfg, "GROUP_NAMES", err, "GROUP_NAMES: group name '%s' is longer than %d characters",
                                  name, ACCT_GROUP_NAME_MAX);
        if (strcmp(name, ACCT_NONE_GROUP) == 0)
                return knob_error(cfg, "GROUP_NAMES", err, "GROUP_NAMES: '%s' is the name of the root group", name);
        for (const char *p = name; *p; p++)
                if (*p == '@' || *p == '"' || *p == '\'' || *p == '\\')
                        return knob_error(cfg, "GROUP_NAMES", err, "GROUP_NAMES: group name '%s' contains '%c'", name,
                                          *p);
        if (name[0] == '.' || name[len - 1] == '.' || strstr(name, ".."))
                return knob_error(cfg, "GROUP_NAMES", err,
                                  "GROUP_NAMES: group name '%s' has an empty part (a dot at the start, at the end or "
                                  "after another dot)",
                                  name);
        size_t nice_len = strlen(ACCT_NICE_PREFIX) - 1; /* "nice-user" */
        if ((len == nice_len || (len > nice_len && name[nice_len] == '.')) && same_name(name, ACCT_NICE_PREFIX, nice_len))
                return knob_error(cfg, "GROUP_NAMES", err,
                                  "GROUP_NAMES: group name '%s': '%.*s' is reserved for nice_user jobs", name,
                                  (int) nice_len, ACCT_NICE_PREFIX);
        return 0;
}

/* A real knob: *has set when defined, -EINVAL when malformed. */
static int get_real(const Config *cfg, const char *knob, bool *has, double *ret, ConfigError *err) {
        int r = config_get_real(cfg, knob, ret, err);
        if (r == -ENOENT) {
                *has = false;
                return 0;
        }
        if (r < 0)
                return r;
        *has = true;
        return 0;
}

static int get_bool(const Config *cfg, const char *knob, bool def, bool *ret, ConfigError *err) {
        int r = config_get_bool(cfg, knob, ret, err);
        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        return r;
}

static int read_knobs(const Config *cfg, AcctGroup *grp, bool def_accept, bool def_autoregroup, ConfigError *err) {
        char knob[128];
        bool has_factor;
        int r;

        snprintf(knob, sizeof knob, "GROUP_QUOTA_%s", grp->name);
        r = get_real(cfg, knob, &grp->has_static, &grp->static_quota, err);
        if (r < 0)
                return r;
        if (grp->has_static && !(grp->static_quota >= 0 && grp->static_quota <= STATIC_QUOTA_MAX))
                return knob_error(cfg, knob, err, "%s = %g: a static quota is a number of slots, from 0 to %.0f", knob,
                                  grp->static_quota, STATIC_QUOTA_MAX);

        snprintf(knob, sizeof knob, "GROUP_QUOTA_DYNAMIC_%s", grp->name);
        r = get_real(cfg, knob, &grp->has_dynamic, &grp->dynamic_quota, err);
        if (r < 0)
                return r;
        if (grp->has_dynamic && !(grp->dynamic_quota >= 0 && grp->dynamic_quota <= 1))
                return knob_error(cfg, knob, err, "%s = %g: a dynamic quota is a fraction, from 0.0 to 1.0", knob,
                                  grp->dynamic_quota);

        snprintf(knob, sizeof knob, "GROUP_ACCEPT_SURPLUS_%s", grp->name);
        r = get_bool(cfg, knob, def_accept, &grp->accept_surplus, err);
        if (r < 0)
                return r;
        snprintf(knob, sizeof knob, "GROUP_AUTOREGROUP_%s", grp->name);
        r = get_bool(cfg, knob, def_autoregroup, &grp->autoregroup, err);
        if (r < 0)
                return r;

        snprintf(knob, sizeof knob, "GROUP_PRIO_FACTOR_%s", grp->name);
        r = get_real(cfg, knob, &has_factor, &grp->prio_factor, err);
        if (r < 0)
                return r;
        if (!has_factor)
                grp->prio_factor = 0;
        else if (grp->prio_factor < 0)
                return knob_error(cfg, knob, err, "%s = %g: a priority factor cannot be negative", knob,
                                  grp->prio_factor);
        return 0;
}

/* Parents and depths from the names (every parent is listed: checked),
 * then the children of each group, in GROUP_NAMES order. */
static int link_tree(const Config *cfg, AcctGroups *g, ConfigError *err) {
        size_t *n_children = calloc(g->n, sizeof *n_children);
        if (!n_children)
                return -ENOMEM;

        for (size_t i = 1; i < g->n; i++) {
                AcctGroup *grp = &g->groups[i];
                const char *dot = strrchr(grp->name, '.');
                size_t parent = 0;

                grp->depth = 1;
                for (const char *p = grp->name; *p; p++)
                        grp->depth += *p == '.';
                if (dot) {
                        size_t len = (size_t) (dot - grp->name);
                        if (index_find(g, grp->name, len, name_hash(grp->name, len), &parent) < 0) {
                                free(n_children);
                                return knob_error(cfg, "GROUP_NAMES", err,
                                                  "GROUP_NAMES: group '%s' has no parent: '%.*s' is not listed",
                                                  grp->name, (int) len, grp->name);
                        }
                }
                grp->parent = parent;
                n_children[parent]++;
        }

        g->child_pool = malloc((g->n > 1 ? g->n - 1 : 1) * sizeof *g->child_pool);
        if (!g->child_pool) {
                free(n_children);
                return -ENOMEM;
        }
        size_t used = 0;
        for (size_t i = 0; i < g->n; i++) {
                g->groups[i].children = g->child_pool + used;
                used += n_children[i];
        }
        for (size_t i = 1; i < g->n; i++) {
                AcctGroup *parent = &g->groups[g->groups[i].parent];
                parent->children[parent->n_children++] = i;
        }
        free(n_children);
        return 0;
}

int acct_groups_from_config(const Config *cfg, AcctGroups **ret, ConfigError *err) {
        _cleanup_(acct_groups_freep) AcctGroups *g = NULL;
        _cleanup_(strv_freep) char **names = NULL;
        bool def_accept, def_autoregroup, any_autoregroup;
        size_t n_names = 0, cap = 8;
        int r;

        if (!cfg || !ret)
                return -EINVAL;

        g = calloc(1, sizeof *g);
        if (!g)
                return -ENOMEM;
        if ((r = get_bool(cfg, "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", false, &g->allow_oversubscription, err)) <
                    0 ||
            (r = get_bool(cfg, "GROUP_ACCEPT_SURPLUS", false, &def_accept, err)) < 0 ||
            (r = get_bool(cfg, "GROUP_AUTOREGROUP", false, &def_autoregroup, err)) < 0)
                return r;

        r = config_get_list(cfg, "GROUP_NAMES", &names, err);
        if (r < 0 && r != -ENOENT)
                return r;
        while (names && names[n_names])
                n_names++;
        if (n_names >= UINT32_MAX / 2)
                return knob_error(cfg, "GROUP_NAMES", err, "GROUP_NAMES: too many groups (%zu)", n_names);

        g->n = n_names + 1;
        while (cap < 2 * g->n)
                cap *= 2;
        g->mask = cap - 1;
        g->groups = calloc(g->n, sizeof *g->groups);
        g->keys = calloc(g->n, sizeof *g->keys);
        g->index = calloc(cap, sizeof *g->index);
        if (!g->groups || !g->keys || !g->index)
                return -ENOMEM;

        for (size_t i = 0; i < g->n; i++) {
                AcctGroup *grp = &g->groups[i];
                size_t other;

                if (i > 0 && (r = check_name(cfg, names[i - 1], err)) < 0)
                        return r;
                grp->name = strdup(i == 0 ? ACCT_NONE_GROUP : names[i - 1]);
                if (!grp->name)
                        return -ENOMEM;
                g->keys[i].len = strlen(grp->name);
                g->keys[i].hash = name_hash(grp->name, g->keys[i].len);
                if (index_add(g, i, &other) < 0)
                        return knob_error(cfg, "GROUP_NAMES", err,
                                          "GROUP_NAMES: group '%s' is listed twice (names are case-insensitive: '%s')",
                                          grp->name, g->groups[other].name);
        }

        r = link_tree(cfg, g, err);
        if (r < 0)
                return r;

        any_autoregroup = def_autoregroup;
        for (size_t i = 1; i < g->n; i++) {
                r = read_knobs(cfg, &g->groups[i], def_accept, def_autoregroup, err);
                if (r < 0)
                        return r;
                any_autoregroup |= g->groups[i].autoregroup;
        }
        /* As HTCondor's hgq_construct_tree: the root takes whatever is
         * left over (surplus included), and autoregroups when any group
         * does, for the Accountant's benefit. */
        g->groups[0].accept_surplus = true;
        g->groups[0].autoregroup = any_autoregroup;

        *ret = TAKE_PTR(g);
        return 0;
}

void acct_groups_free(AcctGroups *g) {
        if (!g)
                return;
        for (size_t i = 0; g->groups && i < g->n; i++)
                free(g->groups[i].name);
        free(g->groups);
        free(g->keys);
        free(g->index);
        free(g->child_pool);
        free(g);
}

/* ---- lookups ---- */

size_t acct_groups_count(const AcctGroups *g) {
        return g ? g->n : 0;
}

const AcctGroup *acct_groups_get(const AcctGroups *g, size_t i) {
        return g && i < g->n ? &g->groups[i] : NULL;
}

bool acct_groups_allow_oversubscription(const AcctGroups *g) {
        return g && g->allow_oversubscription;
}

int acct_groups_find(const AcctGroups *g, const char *name, size_t *ret) {
        if (!g || !name || !ret)
                return -EINVAL;
        size_t len = strlen(name);
        return index_find(g, name, len, name_hash(name, len), ret);
}

size_t acct_groups_of_submitter(const AcctGroups *g, const char *submitter) {
        /* A group name is at most ACCT_GROUP_NAME_MAX characters, so only
         * the prefixes that end at a dot among the first that many + 1
         * characters can name one: their hashes, on the way. */
        uint64_t hashes[ACCT_GROUP_NAME_MAX + 1];
        size_t ends[ACCT_GROUP_NAME_MAX + 1], n = 0;
        uint64_t h = HASH_INIT;

        if (!g || !submitter)
                return 0;
        const char *at = strrchr(submitter, '@'); /* the user may hold one, a domain never does */
        size_t len = at ? (size_t) (at - submitter) : strlen(submitter);
        size_t nice_len = strlen(ACCT_NICE_PREFIX);
        if (len >= nice_len && same_name(submitter, ACCT_NICE_PREFIX, nice_len))
                return 0;

        for (size_t i = 0; i < len && i <= ACCT_GROUP_NAME_MAX; i++) {
                if (submitter[i] == '.' && i > 0) {
                        hashes[n] = h;
                        ends[n++] = i;
                }
                h = hash_step(h, (unsigned char) submitter[i]);
        }
        while (n > 0) {
                size_t found;
                n--;
                if (index_find(g, submitter, ends[n], hashes[n], &found) >= 0)
                        return found;
        }
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-quota — libFuzzer target for the accounting groups and the quota
 * function (accounting/groups.c, accounting/quota.c).
 *
 * Input: a first line of numbers, the pool size then one demand per group
 * in acct_groups_get() order (missing ones are 0); the rest is a
 * configuration text (NUL bytes read as newlines), loaded on top of the
 * built-in defaults with include refused. When the group tree loads, the
 * quotas are computed for that pool and those demands. Checks, each an
 * abort() when broken:
 *
 *   - a refused configuration says why; a tree that loads is a tree (the
 *     root "<none>" first, parents and children agree, depths count the
 *     dots), every group is found by its name and holds its members
 *     ("NAME.u@d");
 *   - a pool or demand that is negative, NaN or beyond 2^53 is -EINVAL,
 *     anything else computes;
 *   - no figure is NaN or negative, no group gets more than it demands,
 *     non-root quotas are whole slots, one warning per scaled group, and
 *     the subtree sums add up;
 *   - without oversubscription, subgroups never have more than their
 *     parent, every group's own quota is its quota less its subgroups',
 *     the own quotas sum to the pool, and no more than the pool is
 *     allocated (within 1e-9, relative);
 *   - the same input computes the same result twice.
 */

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "config-internal.h"

#define FUZZ_MAX_DEMANDS 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-QUOTA FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static const Config *base(void) {
        static Config *cfg;

        if (!cfg && config_new(&cfg) < 0)
                fail("config_new() failed", NULL);
        return cfg;
}

static bool near(double a, double b) {
        return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

static bool valid_amount(double x) {
        return x >= 0 && x <= ACCT_QUOTA_MAX_AMOUNT;
}

static void check_tree(const AcctGroups *g) {
        size_t n = acct_groups_count(g), k, n_children = 0;
        char member[ACCT_GROUP_NAME_MAX + 8];

        if (n == 0 || strcmp(acct_groups_get(g, 0)->name, ACCT_NONE_GROUP) != 0 || acct_groups_get(g, 0)->parent != 0)
                fail("no root", NULL);
        for (size_t i = 0; i < n; i++) {
                const AcctGroup *grp = acct_groups_get(g, i);

                for (size_t j = 0; j < grp->n_children; j++) {
                        const AcctGroup *child = acct_groups_get(g, grp->children[j]);
                        if (!child || child->parent != i || child->depth != grp->depth + 1)
                                fail("a child that is not its parent's", grp->name);
                }
                n_children += grp->n_children;
                if (i == 0)
                        continue;
                if (grp->parent >= n || grp->depth == 0 || strlen(grp->name) > ACCT_GROUP_NAME_MAX)
                        fail("a bad group", grp->name);
                if (acct_groups_find(g, grp->name, &k) < 0 || k != i)
                        fail("a group not found by its name", grp->name);
                snprintf(member, sizeof member, "%s.u@d", grp->name);
                if (acct_groups_of_submitter(g, member) != i)
                        fail("a member not in its group", member);
        }
        if (n_children != n - 1)
                fail("a group that is nobody's child", NULL);
}

static void check_result(const AcctGroups *g, double pool, const AcctQuotaResult *res) {
        bool oversubscribe = acct_groups_allow_oversubscription(g);
        double sum_own = 0, sum_allocated = 0;
        size_t n_scaled = 0;

        if (res->n != acct_groups_count(g))
                fail("not one quota per group", NULL);
        for (size_t i = 0; i < res->n; i++) {
                const AcctGroup *grp = acct_groups_get(g, i);
                const AcctQuota *q = &res->q[i];
                double children = 0, subtree = q->allocated;
                const double figures[] = { q->configured, q->quota, q->own, q->allocated, q->subtree_allocated };

                for (size_t f = 0; f < sizeof figures / sizeof *figures; f++)
                        if (!isfinite(figures[f]) || figures[f] < 0)
                                fail("a NaN, infinite or negative figure", grp->name);
                if (q->allocated > q->demand)
                        fail("more allocated than demanded", grp->name);
                if (i > 0 && q->quota != floor(q->quota))
                        fail("a quota that is not whole slots", grp->name);
                for (size_t j = 0; j < grp->n_children; j++) {
                        children += res->q[grp->children[j]].quota;
                        subtree += res->q[grp->children[j]].subtree_allocated;
                }
                if (!near(q->subtree_allocated, subtree))
                        fail("subtree_allocated does not add up", grp->name);
                if (!oversubscribe && (children > q->quota * (1 + 1e-12) || !near(q->own, q->quota - children)))
                        fail("subgroups with more than their parent", grp->name);
                sum_own += q->own;
                sum_allocated += q->allocated;
                n_scaled += q->scaled;
        }
        if (n_scaled != res->n_warnings)
                fail("not one warning per scaled group", NULL);
        for (size_t i = 0; i < res->n_warnings; i++)
                if (!res->warnings[i] || strncmp(res->warnings[i], "group quotas: ", 14) != 0)
                        fail("a bad warning", res->warnings[i]);
        if (!oversubscribe && !near(sum_own, pool))
                fail("the own quotas do not sum to the pool", NULL);
        if (!oversubscribe && sum_allocated > pool * (1 + 1e-9) + 1e-9)
                fail("more allocated than the pool", NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        double pool = 0, demand[FUZZ_MAX_DEMANDS] = { 0 }, *demands = NULL;
        AcctQuotaResult res = {}, again = {};
        AcctGroups *g = NULL;
        Config *cfg = NULL;
        ConfigError err = {};
        size_t n_numbers = 0, n;
        bool valid = true;
        char *text, *p, *end;
        int r;

        text = malloc(size + 1);
        if (!text)
                return 0;
        for (size_t i = 0; i < size; i++)
                text[i] = data[i] ? (char) data[i] : '\n';
        text[size] = '\0';

        /* the numbers of the first line */
        end = strchr(text, '\n');
        if (end)
                *end = '\0';
        for (p = text; n_numbers <= FUZZ_MAX_DEMANDS;) {
                char *next;
                double x = strtod(p, &next);
                if (next == p)
                        break;
                if (n_numbers == 0)
                        pool = x;
                else
                        demand[n_numbers - 1] = x;
                n_numbers++;
                p = next;
        }

        if (config_copy(base(), &cfg) < 0)
                fail("config_copy() failed", NULL);
        r = config_load_string_flags(cfg, end ? end + 1 : "", "<fuzz>", CONFIG_LOAD_NO_INCLUDE, &err);
        if (r < 0)
                goto out;

        err = (ConfigError){};
        r = acct_groups_from_config(cfg, &g, &err);
        if (r < 0) {
                if (r != -ENOMEM && (r != -EINVAL || !err.msg[0]))
                        fail("a refused configuration without a reason", err.msg);
                goto out;
        }
        check_tree(g);

        n = acct_groups_count(g);
        demands = calloc(n, sizeof *demands);
        if (!demands)
                goto out;
        valid = valid_amount(pool);
        for (size_t i = 0; i < n; i++) {
                demands[i] = i < FUZZ_MAX_DEMANDS ? demand[i] : 0;
                valid = valid && valid_amount(demands[i]);
        }
        r = acct_quotas_compute(g, pool, demands, &res);
        if (r == -ENOMEM)
                goto out;
        if (!valid) {
                if (r != -EINVAL || res.q)
                        fail("a bad pool or demand accepted", NULL);
                goto out;
        }
        if (r < 0)
                fail("acct_quotas_compute() failed", strerror(-r));
        check_result(g, pool, &res);

        if (acct_quotas_compute(g, pool, demands, &again) == 0) {
                if (again.n != res.n || again.n_warnings != res.n_warnings ||
                    memcmp(again.q, res.q, res.n * sizeof *res.q) != 0)
                        fail("two computations differ", NULL);
                for (size_t i = 0; i < res.n_warnings; i++)
                        if (strcmp(again.warnings[i], res.warnings[i]) != 0)
                                fail("two computations warn differently", res.warnings[i]);
        }

out:
        acct_quota_result_clear(&res);
        acct_quota_result_clear(&again);
        free(demands);
        acct_groups_free(g);
        config_free(cfg);
        free(text);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * quota.c — hierarchical group quotas (seed 000, 3.4.8): the quota of
 * every group for a pool of a given size, then what each group's own
 * submitters get for their demand, surplus included.
 *
 * The arithmetic is HTCondor's (GroupEntry.cpp: hgq_assign_quotas,
 * hgq_fairshare, hgq_allocate_surplus) with the seed's one difference:
 * every group's quota is truncated to whole slots, and the fractions its
 * subgroups lose that way are left to the group's own submitters (the
 * "next higher level"), because a parent's own submitters get its quota
 * less what its subgroups get. A subgroup's quota is computed from its
 * parent's truncated quota.
 *
 * Quotas, top down (assign_quotas):
 *   - static subgroups (GROUP_QUOTA_<g>) get first dibs: their quotas as
 *     configured when they fit in the parent's, else all scaled by
 *     parent / sum (one warning per scaled group), unless
 *     NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION;
 *   - dynamic subgroups (GROUP_QUOTA_DYNAMIC_<g>) share what the static
 *     ones left: fraction times that, the fractions scaled by their sum
 *     when it is over 1 (one warning each); a group with neither is a
 *     dynamic group of fraction 0, and one with both is static;
 *   - the root, "<none>", has the pool and keeps what the top-level groups
 *     do not get; it is the only quota that is not whole slots.
 * Mixed static and dynamic siblings: the seed's section is "not yet
 * completed"; this does what HTCondor's code does (static first, dynamic
 * from the rest), as the issue asks.
 *
 * Allocation, bottom up (fairshare): each group's own submitters get
 * min(demand, own quota); what a group does not use is surplus, handed up
 * to its parent with the surplus of its subgroups, and each group shares
 * the surplus that reaches it among itself and those of its subgroups
 * that accept surplus and still want more, itself "on equal footing with
 * its children" (allocate_surplus): everybody gets all they want when the
 * surplus suffices, else it is water-filled in proportion to the subtree
 * quotas among those with a quota, then equally among those without; a
 * subgroup's share is shared again inside its subtree the same way. What
 * nobody wants goes up; what reaches the root's level unwanted stays
 * unallocated.
 *
 * GROUP_AUTOREGROUP is not an input here: it lets a group's submitters
 * negotiate again in "<none>" (the matchmaker's business).
 */
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "cleanup.h"

/* Fractions of a slot lost to binary floating point: 100 * .6 * .2 is 12,
 * not 11.999999999999998 truncated to 11. A few operations per level of
 * at most 20 levels stay well within this relative margin. */
#define WHOLE_SLOT_SLACK (64 * DBL_EPSILON)
/* Dynamic fractions that sum to at most 1 plus rounding are not scaled. */
#define DYNAMIC_SUM_SLACK 1e-9

typedef struct QuotaWork {
        double requested;         /* demand of the own submitters not met yet */
        double subtree_requested; /* with that of the subgroups that accept surplus */
        double give;              /* surplus its parent's level hands its subtree */
} QuotaWork;

/* One taker of surplus at one level of the tree. */
typedef struct Taker {
        size_t group;
        double weight; /* subtree quota (own quota for the group whose level it is) */
        double need;
        double got;
} Taker;

typedef struct QuotaRun {
        const AcctGroups *groups;
        bool oversubscribe;
        const double *demand;
        AcctQuota *q;
        QuotaWork *w;
        Taker *takers; /* scratch for one level: the most children of a group, plus one */
        char **warnings;
        size_t n_warnings, cap_warnings;
} QuotaRun;

static double whole_slots(double x) {
        return floor(x * (1 + WHOLE_SLOT_SLACK));
}

/* x with at most `decimals` decimals, trailing zeros dropped: 40, 33.333. */
static const char *fmt_num(char *buf, size_t size, double x, int decimals) {
        snprintf(buf, size, "%.*f", decimals, x);
        if (strchr(buf, '.')) {
                char *end = buf + strlen(buf);
                while (end[-1] == '0')
                        *--end = '\0';
                if (end[-1] == '.')
                        end[-1] = '\0';
        }
        return buf;
}

__attribute__((format(printf, 2, 3))) static int warn(QuotaRun *run, const char *fmt, ...) {
        char line[256], **w;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(line, sizeof line, fmt, ap);
        va_end(ap);
        if (run->n_warnings == run->cap_warnings) {
                size_t cap = run->cap_warnings ? 2 * run->cap_warnings : 8;
                w = realloc(run->warnings, cap * sizeof *w);
                if (!w)
                        return -ENOMEM;
                run->warnings = w;
                run->cap_warnings = cap;
        }
        w = run->warnings;
        w[run->n_warnings] = strdup(line);
        if (!w[run->n_warnings])
                return -ENOMEM;
        run->n_warnings++;
        return 0;
}

/* ---- quotas ---- */

/* Group i's subtree gets quota (whole slots, or the pool at the root). */
static int assign_quotas(QuotaRun *run, size_t i, double quota) {
        const AcctGroup *grp = acct_groups_get(run->groups, i);
        double sqsum = 0, dqsum = 0, children = 0;
        char from[32], to[32];
        int r;

        run->q[i].quota = quota;
        for (size_t j = 0; j < grp->n_children; j++) {
                const AcctGroup *child = acct_groups_get(run->groups, grp->children[j]);
                if (child->has_static)
                        sqsum += child->static_quota;
                else if (child->has_dynamic)
                        dqsum += child->dynamic_quota;
        }

        bool static_scaled = !run->oversubscribe && sqsum > quota;
        double dynamic_left = fmax(0, quota - (static_scaled ? quota : sqsum));
        bool dynamic_scaled = dqsum > 1 + DYNAMIC_SUM_SLACK;

        for (size_t j = 0; j < grp->n_children; j++) {
                size_t k = grp->children[j];
                const AcctGroup *child = acct_groups_get(run->groups, k);
                AcctQuota *cq = &run->q[k];
                double share;

                if (child->has_static) {
                        cq->configured = child->static_quota;
                        share = static_scaled ? child->static_quota * (quota / sqsum) : child->static_quota;
                        /* As HTCondor: a subtree without quota is left at zero, unwarned. */
                        cq->scaled = static_scaled && child->static_quota > 0 && quota > 0;
                        if (cq->scaled &&
                            (r = warn(run, "group quotas: static quota of %s rescaled from %s to %s", child->name,
                                      fmt_num(from, sizeof from, child->static_quota, 3),
                                      fmt_num(to, sizeof to, share, 3))) < 0)
                                return r;
                } else {
                        double f = child->has_dynamic ? child->dynamic_quota : 0;
                        cq->configured = f * dynamic_left;
                        share = dynamic_scaled ? f * (dynamic_left / dqsum) : cq->configured;
                        cq->scaled = dynamic_scaled && f > 0 && dynamic_left > 0;
                        if (cq->scaled &&
                            (r = warn(run, "group quotas: dynamic quota of %s rescaled from %s to %s", child->name,
                                      fmt_num(from, sizeof from, f, 4), fmt_num(to, sizeof to, f / dqsum, 4))) < 0)
                                return r;
                }
                r = assign_quotas(run, k, whole_slots(share));
                if (r < 0)
                        return r;
                children += cq->quota;
        }
        /* With oversubscription the subgroups may take more than the
         * group has: its own submitters then have nothing of their own. */
        run->q[i].own = fmax(0, quota - children);
        return 0;
}

/* ---- surplus ---- */

/* Whether taker a reaches its need before b as the level of water rises
 * (each getting level * weight): need / weight ascending, then by group. */
static int cmp_fill_order(const void *x, const void *y) {
        const Taker *a = x, *b = y;
        double l = a->need * b->weight, r = b->need * a->weight;

        if (l != r)
                return l < r ? -1 : 1;
        return a->group < b->group ? -1 : a->group > b->group;
}

/* Water-filling: each of the n takers gets min(need, level * weight) for
 * the level that spends *surplus or fills every need. HTCondor iterates
 * to the same allocations (hgq_allocate_surplus_loop); sorted by need /
 * weight, one pass does it. */
static void fill(Taker *t, size_t n, double *surplus) {
        double z = 0;

        for (size_t i = 0; i < n; i++)
                z += t[i].weight;
        qsort(t, n, sizeof *t, cmp_fill_order);
        for (size_t i = 0; i < n && *surplus > 0; i++) {
                if (*surplus * (t[i].weight / z) >= t[i].need) {
                        t[i].got = t[i].need;
                        *surplus -= t[i].need;
                        z -= t[i].weight;
                        continue;
                }
                /* Nobody left reaches its need: all rise to the same level
                 * (capped all the same, against rounding). */
                double left = *surplus;
                for (size_t k = i; k < n; k++) {
                        t[k].got = fmin(t[k].need, left * (t[k].weight / z));
                        *surplus -= t[k].got;
                }
                break;
        }
        *surplus = fmax(0, *surplus);
}

/* Shares surplus, which reached group i, among i's own submitters and
 * its subgroups that accept surplus, on equal footing, each as much as
 * its subtree still wants; a subgroup's share is shared again inside it.
 * Returns what nobody here wants. */
static double allocate_surplus(QuotaRun *run, size_t i, double surplus) {
        const AcctGroup *grp = acct_groups_get(run->groups, i);
        QuotaWork *w = &run->w[i];
        Taker *t = run->takers;
        size_t n = 0, n_weighted = 0;
        double self_got = 0, given = 0;

        if (surplus <= 0)
                return 0;
        if (w->subtree_requested <= 0)
                return surplus;

        /* The takers, those with a quota first; the group itself last of its kind. */
        for (int with_quota = 1; with_quota >= 0; with_quota--) {
                for (size_t j = 0; j <= grp->n_children; j++) {
                        bool self = j == grp->n_children;
                        size_t k = self ? i : grp->children[j];
                        double need = self ? w->requested : run->w[k].subtree_requested;
                        double weight = self ? run->q[i].own : run->q[k].quota;

                        if (!self && with_quota)
                                run->w[k].give = 0;
                        if (need <= 0 || (weight > 0) != with_quota ||
                            (!self && !acct_groups_get(run->groups, k)->accept_surplus))
                                continue;
                        /* Those without a quota share equally. */
                        t[n++] = (Taker){ .group = k, .weight = with_quota ? weight : 1, .need = need };
                }
                if (with_quota)
                        n_weighted = n;
        }

        if (surplus >= w->subtree_requested) {
                for (size_t j = 0; j < n; j++)
                        t[j].got = t[j].need;
                surplus -= w->subtree_requested;
        } else {
                fill(t, n_weighted, &surplus);
                fill(t + n_weighted, n - n_weighted, &surplus);
        }

        for (size_t j = 0; j < n; j++) {
                given += t[j].got;
                if (t[j].group == i)
                        self_got = t[j].got;
                else
                        run->w[t[j].group].give = t[j].got;
        }
        /* (t is scratch the recursion reuses: done with it.) */
        for (size_t j = 0; j < grp->n_children; j++) {
                size_t k = grp->children[j];
                if (run->w[k].give > 0)
                        surplus += allocate_surplus(run, k, run->w[k].give);
        }

        AcctQuota *q = &run->q[i];
        q->allocated = self_got >= w->requested ? q->demand : fmin(q->demand, q->allocated + self_got);
        w->requested = fmax(0, w->requested - self_got);
        w->subtree_requested = fmax(0, w->subtree_requested - given);
        return surplus;
}

/* Group i's own submitters get min(demand, own quota); then the surplus of
 * the group and of its subtree is shared. Returns what is left over. */
static double fairshare(QuotaRun *run, size_t i) {
        const AcctGroup *grp = acct_groups_get(run->groups, i);
        AcctQuota *q = &run->q[i];
        QuotaWork *w = &run->w[i];

        q->demand = run->demand ? run->demand[i] : 0;
        q->allocated = fmin(q->demand, q->own);
        w->requested = q->demand - q->allocated;
        w->subtree_requested = w->requested;

        double surplus = q->own - q->allocated;
        for (size_t j = 0; j < grp->n_children; j++) {
                size_t k = grp->children[j];
                surplus += fairshare(run, k);
                if (acct_groups_get(run->groups, k)->accept_surplus)
                        w->subtree_requested += run->w[k].subtree_requested;
        }
        return grp->n_children > 0 ? allocate_surplus(run, i, surplus) : surplus;
}

static double sum_subtree(QuotaRun *run, size_t i) {
        const AcctGroup *grp = acct_groups_get(run->groups, i);
        double sum = run->q[i].allocated;

        for (size_t j = 0; j < grp->n_children; j++)
                sum += sum_subtree(run, grp->children[j]);
        run->q[i].subtree_allocated = sum;
        return sum;
}

/* ---- the function ---- */

static void quota_run_done(QuotaRun *run) {
        free(run->q);
        free(run->w);
        free(run->takers);
        for (size_t i = 0; i < run->n_warnings; i++)
                free(run->warnings[i]);
        free(run->warnings);
}

static bool valid_amount(double x) {
        return x >= 0 && x <= ACCT_QUOTA_MAX_AMOUNT; /* false for NaN too */
}

int acct_quotas_compute(const AcctGroups *g, double pool_size, const double *demand, AcctQuotaResult *ret) {
        _cleanup_(quota_run_done) QuotaRun run = { .groups = g, .demand = demand };
        size_t n = acct_groups_count(g), most_children = 0;
        int r;

        if (!g || !ret || n == 0 || !valid_amount(pool_size))
                return -EINVAL;
        for (size_t i = 0; i < n; i++) {
                if (demand && !valid_amount(demand[i]))
                        return -EINVAL;
                if (acct_groups_get(g, i)->n_children > most_children)
                        most_children = acct_groups_get(g, i)->n_children;
        }

        run.oversubscribe = acct_groups_allow_oversubscription(g);
        run.q = calloc(n, sizeof *run.q);
        run.w = calloc(n, sizeof *run.w);
        run.takers = calloc(most_children + 1, sizeof *run.takers);
        if (!run.q || !run.w || !run.takers)
                return -ENOMEM;

        run.q[0].configured = pool_size;
        r = assign_quotas(&run, 0, pool_size);
        if (r < 0)
                return r;
        (void) fairshare(&run, 0); /* what nobody wants stays unallocated */
        (void) sum_subtree(&run, 0);

        *ret = (AcctQuotaResult){
                .q = TAKE_PTR(run.q),
                .n = n,
                .warnings = TAKE_PTR(run.warnings),
                .n_warnings = run.n_warnings,
        };
        run.n_warnings = 0;
        return 0;
}

void acct_quota_result_clear(AcctQuotaResult *r) {
        if (!r)
                return;
        free(r->q);
        for (size_t i = 0; i < r->n_warnings; i++)
                free(r->warnings[i]);
        free(r->warnings);
        *r = (AcctQuotaResult){};
}

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
#include <inttypes.h>
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

/* A group as the computation sees it. The nodes are in breadth-first
 * order, so that a group's subgroups are one run of nodes and every
 * group comes after its parent: the quotas are one loop forwards, the
 * allocations one loop backwards, both over contiguous memory. */
typedef struct Node {
        AcctQuota q;              /* the result */
        size_t group;             /* acct_groups_get() index */
        size_t first, n_children; /* its subgroups: nodes[first .. first + n_children) */
        bool has_static, accept_surplus;
        double static_quota;      /* when has_static */
        double dynamic_quota;     /* otherwise; 0 when not set either */
        double requested;         /* demand of the own submitters not met yet */
        double subtree_requested; /* with that of the subgroups that accept surplus */
        double give;              /* surplus its parent's level hands its subtree */
        double left;              /* surplus its subtree hands up */
} Node;

/* One taker of surplus at one level of the tree. */
typedef struct Taker {
        size_t node;
        double weight; /* subtree quota (own quota for the group whose level it is) */
        double need;
        double got;
} Taker;

typedef struct QuotaRun {
        const AcctGroup *grp; /* every group: acct_groups_get(g, 0) is the array */
        bool oversubscribe;
        Node *nodes;
        size_t n;
        Taker *takers; /* scratch for one level: the most children of a group, plus one */
        char **warnings;
        size_t n_warnings, cap_warnings;
} QuotaRun;

static double whole_slots(double x) {
        return floor(x * (1 + WHOLE_SLOT_SLACK));
}

static inline double max0(double x) {
        return x > 0 ? x : 0;
}

static inline double min2(double a, double b) {
        return a < b ? a : b;
}

/* x (0 to 2^53) rounded to at most `decimals` (0 to 4) decimals, trailing
 * zeros dropped: 40, 33.333, 0.3636. (Integer arithmetic: printf's %f
 * was a quarter of the time of a tree with many scaled groups.) */
static const char *fmt_num(char buf[static 32], double x, unsigned decimals) {
        static const uint64_t scale[] = { 1, 10, 100, 1000, 10000 };
        uint64_t v = (uint64_t) (x * (double) scale[decimals] + 0.5);
        uint64_t frac = v % scale[decimals];
        int len = snprintf(buf, 32, "%" PRIu64, v / scale[decimals]);

        if (frac > 0) {
                buf[len++] = '.';
                for (uint64_t unit = scale[decimals] / 10; unit > 0; unit /= 10) {
                        buf[len++] = (char) ('0' + frac / unit);
                        frac %= unit;
                }
                while (buf[len - 1] == '0')
                        len--;
        }
        buf[len] = '\0';
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

/* Top down: each group's quota (set by its parent's turn; the pool for
 * the root) divided among its subgroups. */
static int assign_quotas(QuotaRun *run) {
        char from[32], to[32];
        int r;

        for (size_t i = 0; i < run->n; i++) {
                Node *p = &run->nodes[i], *c = run->nodes + p->first;
                double quota = p->q.quota, sqsum = 0, dqsum = 0, children = 0;

                for (size_t j = 0; j < p->n_children; j++)
                        if (c[j].has_static)
                                sqsum += c[j].static_quota;
                        else
                                dqsum += c[j].dynamic_quota;

                bool static_scaled = !run->oversubscribe && sqsum > quota;
                double dynamic_left = max0(quota - (static_scaled ? quota : sqsum));
                bool dynamic_scaled = dqsum > 1 + DYNAMIC_SUM_SLACK;

                for (size_t j = 0; j < p->n_children; j++) {
                        AcctQuota *cq = &c[j].q;
                        const char *name = run->grp[c[j].group].name;
                        double share;

                        if (c[j].has_static) {
                                cq->configured = c[j].static_quota;
                                share = static_scaled ? c[j].static_quota * (quota / sqsum) : c[j].static_quota;
                                /* As HTCondor: a subtree without quota is left at zero, unwarned. */
                                cq->scaled = static_scaled && c[j].static_quota > 0 && quota > 0;
                                if (cq->scaled &&
                                    (r = warn(run, "group quotas: static quota of %s rescaled from %s to %s", name,
                                              fmt_num(from, c[j].static_quota, 3), fmt_num(to, share, 3))) < 0)
                                        return r;
                        } else {
                                double f = c[j].dynamic_quota;
                                cq->configured = f * dynamic_left;
                                share = dynamic_scaled ? f * (dynamic_left / dqsum) : cq->configured;
                                cq->scaled = dynamic_scaled && f > 0 && dynamic_left > 0;
                                if (cq->scaled &&
                                    (r = warn(run, "group quotas: dynamic quota of %s rescaled from %s to %s", name,
                                              fmt_num(from, f, 4), fmt_num(to, f / dqsum, 4))) < 0)
                                        return r;
                        }
                        cq->quota = whole_slots(share);
                        children += cq->quota;
                }
                /* With oversubscription the subgroups may take more than the
                 * group has: its own submitters then have nothing of their own. */
                p->q.own = max0(quota - children);
        }
        return 0;
}

/* ---- surplus ---- */

/* Whether taker a reaches its need before b as the level of water rises
 * (each getting level * weight): need / weight ascending, then in node order. */
static int cmp_fill_order(const void *x, const void *y) {
        const Taker *a = x, *b = y;
        double l = a->need * b->weight, r = b->need * a->weight;

        if (l != r)
                return l < r ? -1 : 1;
        return a->node < b->node ? -1 : a->node > b->node;
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
                        t[k].got = min2(t[k].need, left * (t[k].weight / z));
                        *surplus -= t[k].got;
                }
                break;
        }
        *surplus = max0(*surplus);
}

/* Shares surplus, which reached node x, among x's own submitters and its
 * subgroups that accept surplus, on equal footing, each as much as its
 * subtree still wants; a subgroup's share is shared again inside it.
 * Returns what nobody here wants. */
static double allocate_surplus(QuotaRun *run, Node *x, double surplus) {
        Node *c = run->nodes + x->first;
        Taker *t = run->takers;
        size_t n = 0, n_weighted = 0, self = (size_t) (x - run->nodes);
        double self_got = 0, given = 0;

        if (surplus <= 0)
                return 0;
        if (x->subtree_requested <= 0)
                return surplus;

        /* The takers, those with a quota first; the group itself last of its kind. */
        for (size_t j = 0; j < x->n_children; j++)
                c[j].give = 0;
        for (int with_quota = 1; with_quota >= 0; with_quota--) {
                for (size_t j = 0; j <= x->n_children; j++) {
                        bool is_self = j == x->n_children;
                        const Node *k = is_self ? x : &c[j];
                        double need = is_self ? x->requested : k->subtree_requested;
                        double weight = is_self ? x->q.own : k->q.quota;

                        if (need <= 0 || (weight > 0) != with_quota || (!is_self && !k->accept_surplus))
                                continue;
                        /* Those without a quota share equally. */
                        t[n++] = (Taker){ .node = (size_t) (k - run->nodes), .weight = with_quota ? weight : 1, .need = need };
                }
                if (with_quota)
                        n_weighted = n;
        }

        if (surplus >= x->subtree_requested) {
                for (size_t j = 0; j < n; j++)
                        t[j].got = t[j].need;
                surplus -= x->subtree_requested;
        } else {
                fill(t, n_weighted, &surplus);
                fill(t + n_weighted, n - n_weighted, &surplus);
        }

        for (size_t j = 0; j < n; j++) {
                given += t[j].got;
                if (t[j].node == self)
                        self_got = t[j].got;
                else
                        run->nodes[t[j].node].give = t[j].got;
        }
        /* (t is scratch the recursion reuses: done with it.) */
        for (size_t j = 0; j < x->n_children; j++)
                if (c[j].give > 0)
                        surplus += allocate_surplus(run, &c[j], c[j].give);

        x->q.allocated = self_got >= x->requested ? x->q.demand : min2(x->q.demand, x->q.allocated + self_got);
        x->requested = max0(x->requested - self_got);
        x->subtree_requested = max0(x->subtree_requested - given);
        return surplus;
}

/* Bottom up: each group's own submitters get min(demand, own quota); then
 * the surplus of the group and of its subtree is shared, and what is left
 * over goes up. */
static void fairshare(QuotaRun *run) {
        for (size_t i = run->n; i-- > 0;) {
                Node *x = &run->nodes[i], *c = run->nodes + x->first;

                x->q.allocated = min2(x->q.demand, x->q.own);
                x->requested = x->q.demand - x->q.allocated;
                x->subtree_requested = x->requested;

                double surplus = x->q.own - x->q.allocated;
                for (size_t j = 0; j < x->n_children; j++) {
                        surplus += c[j].left;
                        if (c[j].accept_surplus)
                                x->subtree_requested += c[j].subtree_requested;
                }
                x->left = x->n_children > 0 ? allocate_surplus(run, x, surplus) : surplus;
        }
        /* What nobody wants, the root's left, stays unallocated. */
}

static void sum_subtrees(QuotaRun *run) {
        for (size_t i = run->n; i-- > 0;) {
                Node *x = &run->nodes[i];

                x->q.subtree_allocated = x->q.allocated;
                for (size_t j = 0; j < x->n_children; j++)
                        x->q.subtree_allocated += run->nodes[x->first + j].q.subtree_allocated;
        }
}

/* ---- the function ---- */

static void quota_run_done(QuotaRun *run) {
        free(run->nodes);
        free(run->takers);
        for (size_t i = 0; i < run->n_warnings; i++)
                free(run->warnings[i]);
        free(run->warnings);
}

static bool valid_amount(double x) {
        return x >= 0 && x <= ACCT_QUOTA_MAX_AMOUNT; /* false for NaN too */
}

static void node_init(Node *x, size_t group, const AcctGroup *grp, const double *demand) {
        *x = (Node){
                .group = group,
                .has_static = grp->has_static,
                .accept_surplus = grp->accept_surplus,
                .static_quota = grp->static_quota,
                .dynamic_quota = grp->has_dynamic ? grp->dynamic_quota : 0,
                .q.demand = demand ? demand[group] : 0,
        };
}

/* The nodes in breadth-first order; returns the most subgroups of a group. */
static size_t build_nodes(QuotaRun *run, const double *demand) {
        size_t tail = 1, most = 0;

        node_init(&run->nodes[0], 0, &run->grp[0], demand);
        for (size_t i = 0; i < tail; i++) {
                Node *x = &run->nodes[i];
                const AcctGroup *grp = &run->grp[x->group];

                x->first = tail;
                x->n_children = grp->n_children;
                if (grp->n_children > most)
                        most = grp->n_children;
                for (size_t j = 0; j < grp->n_children; j++, tail++)
                        node_init(&run->nodes[tail], grp->children[j], &run->grp[grp->children[j]], demand);
        }
        return most;
}

int acct_quotas_compute(const AcctGroups *g, double pool_size, const double *demand, AcctQuotaResult *ret) {
        _cleanup_(quota_run_done) QuotaRun run = { .grp = acct_groups_get(g, 0), .n = acct_groups_count(g) };
        _cleanup_free_ AcctQuota *q = NULL;
        int r;

        if (!g || !ret || run.n == 0 || !valid_amount(pool_size))
                return -EINVAL;
        for (size_t i = 0; demand && i < run.n; i++)
                if (!valid_amount(demand[i]))
                        return -EINVAL;

        run.oversubscribe = acct_groups_allow_oversubscription(g);
        run.nodes = malloc(run.n * sizeof *run.nodes);
        q = malloc(run.n * sizeof *q);
        if (!run.nodes || !q)
                return -ENOMEM;
        run.takers = malloc((build_nodes(&run, demand) + 1) * sizeof *run.takers);
        if (!run.takers)
                return -ENOMEM;

        run.nodes[0].q.configured = pool_size;
        run.nodes[0].q.quota = pool_size;
        r = assign_quotas(&run);
        if (r < 0)
                return r;
        fairshare(&run);
        sum_subtrees(&run);
        for (size_t i = 0; i < run.n; i++)
                q[run.nodes[i].group] = run.nodes[i].q;

        *ret = (AcctQuotaResult){
                .q = TAKE_PTR(q),
                .n = run.n,
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cycle.c — one negotiation cycle (negotiator.h): the slots and submitters
 * prepared, the quota groups in their order and allocation rounds, the pie
 * spins of a group, a submitter's jobs in order against its limit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast-internal.h"

const char *nego_reason_name(NegoReason r) {
        switch (r) {
        case NEGO_NO_PREEMPTION:
                return "No Preemption";
        case NEGO_RANK:
                return "Rank";
        case NEGO_PRIORITY:
                return "Priority";
        }
        return "?";
}

static char *ad_string(const ClassAd *ad, const char *name) {
        char *v = NULL;

        return classad_eval_string(ad, name, NEGO_MODE, &v) >= 0 ? v : NULL;
}

static bool ad_string_is(const ClassAd *ad, const char *name, const char *want) {
        char *v = ad_string(ad, name);
        bool yes = v && strcasecmp(v, want) == 0;

        free(v);
        return yes;
}

static double ad_number(const ClassAd *ad, const char *name, double def) {
        CaValue v = ca_undefined();
        double d = def;

        if (classad_eval_attr(ad, name, NEGO_MODE, &v) < 0 || !ca_to_real(&v, &d))
                d = def;
        ca_value_clear(&v);
        return d;
}

/* ---- claims on their way (NegoPending) ---- */

/* What the claims on their way change in a submitter's usage. */
typedef struct NegoAdjust {
        const char *name;
        double delta;
} NegoAdjust;

static int adjust_cmp(const void *x, const void *y) {
        return strcmp(((const NegoAdjust *) x)->name, ((const NegoAdjust *) y)->name);
}

/* The slots promised, and the usage each name gains or loses by the claims
 * on their way, merged by name (sorted, for pending_usage). */
static int pending_prepare(NegoCycle *c) {
        const NegoInput *in = c->in;
        size_t n = 0;

        if (in->n_pending == 0)
                return 0;
        c->adjust = calloc(2 * in->n_pending, sizeof(NegoAdjust));
        if (!c->adjust)
                return -ENOMEM;
        for (size_t i = 0; i < in->n_pending; i++) {
                const NegoPending *p = &in->pending[i];

                if (p->slot >= c->n_slots || !p->submitter || !(p->cost >= 0) || !(p->victim_weight >= 0))
                        return -EINVAL;
                c->slots[p->slot].promised = true;
                c->adjust[n++] = (NegoAdjust){ p->submitter, p->cost };
                if (p->victim)
                        c->adjust[n++] = (NegoAdjust){ p->victim, -p->victim_weight };
        }
        qsort(c->adjust, n, sizeof(NegoAdjust), adjust_cmp);
        c->n_adjust = 0;
        for (size_t i = 0; i < n; i++)
                if (c->n_adjust > 0 && strcmp(c->adjust[c->n_adjust - 1].name, c->adjust[i].name) == 0)
                        c->adjust[c->n_adjust - 1].delta += c->adjust[i].delta;
                else
                        c->adjust[c->n_adjust++] = c->adjust[i];
        return 0;
}

/* The usage name gains (or loses) by the claims on their way. */
static double pending_usage(const NegoCycle *c, const char *name) {
        const NegoAdjust key = { name, 0 }, *a;

        if (c->n_adjust == 0 || !name)
                return 0;
        a = bsearch(&key, c->adjust, c->n_adjust, sizeof(NegoAdjust), adjust_cmp);
        return a ? a->delta : 0;
}

/* ---- preparing the slots ---- */

static int prepare_slot(NegoCycle *c, size_t i) {
        NegoSlot *slot = &c->slots[i];
        ClassAd *ad = c->in->slots[i];
        bool claimed = ad_string_is(ad, "State", "Claimed");
        bool pslot = false;
        CaValue v = ca_undefined();
        int r;

        if (classad_eval_attr(ad, "PartitionableSlot", NEGO_MODE, &v) >= 0 && v.type == CA_BOOL)
                pslot = v.u.b;
        ca_value_clear(&v);
        slot->ad = ad;
        slot->weight = nego_settings_slot_weight(c->s, ad);
        if (slot->promised || ad_string_is(ad, "State", "Matched") || ad_string_is(ad, "State", "Preempting"))
                slot->skip = true;
        else if (claimed && !pslot) {
                /* Busy, Suspended and Retiring run a job; Idle does not. */
                slot->running = !ad_string_is(ad, "Activity", "Idle");
                slot->skip = !slot->running;
        }
        if (slot->running) {
                AcctEntry e;
                /* the submitter charged: an accounting group's name
                 * (AccountingGroup) before the user's (RemoteUser) */
                slot->remote_user = ad_string(ad, "AccountingGroup");
                if (!slot->remote_user)
                        slot->remote_user = ad_string(ad, "RemoteUser");
                slot->current_rank = ad_number(ad, "CurrentRank", 0);
                slot->in_retirement = ad_number(ad, "RetirementTimeRemaining", 0) > 0;
                if (slot->remote_user) {
                        (void) acct_get(c->in->accounts, slot->remote_user, &e);
                        slot->remote_eup = e.eup;
                        slot->remote_in_use = e.weighted_in_use + pending_usage(c, slot->remote_user);
                        slot->remote_group = e.group;
                } else
                        slot->remote_eup = INFINITY;
        }
        if (pslot && !slot->skip) {
                /* Matched many times in a cycle: consume from a copy. */
                r = classad_copy(ad, &slot->ad);
                if (r < 0)
                        return r;
                slot->own_copy = true;
                slot->partitionable = true;
                if ((r = nego_pslot_resources(c, i)) < 0)
                        return r;
        }
        return 0;
}

/* 3.4.3: the running job's user, as the policy sees it. */
static void slot_ephemeral(NegoCycle *c, size_t i) {
        const NegoSlot *slot = &c->slots[i];
        ClassAd *ad = c->in->slots[i];

        if (!slot->running || !slot->remote_user)
                return;
        classad_set_real(ad, "RemoteUserPrio", slot->remote_eup);
        classad_set_real(ad, "RemoteUserResourcesInUse", slot->remote_in_use);
        classad_set_string(ad, "RemoteGroup", acct_groups_get(c->groups, slot->remote_group)->name);
        if (slot->remote_group != 0) {
                classad_set_real(ad, "RemoteGroupResourcesInUse", c->group_usage[slot->remote_group]);
                classad_set_real(ad, "RemoteGroupQuota", c->group_quota[slot->remote_group]);
        }
}

typedef struct MachineSlot {
        char *machine;
        size_t slot;
} MachineSlot;

static int by_machine(const void *x, const void *y) {
        const MachineSlot *a = x, *b = y;
        int d = strcasecmp(a->machine, b->machine);

        return d ? d : a->slot < b->slot ? -1 : a->slot > b->slot;
}

/* Slot<N>_RemoteUserPrio in every slot of a machine (3.4.3): the slots
 * sorted by Machine, each machine's running slots written into its
 * slots. */
static int cross_slot_prios(NegoCycle *c) {
        _cleanup_free_ MachineSlot *v = calloc(c->n_slots + 1, sizeof(MachineSlot));
        size_t n = 0;

        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_slots; i++)
                if ((v[n].machine = ad_string(c->in->slots[i], "Machine")))
                        v[n++].slot = i;
        qsort(v, n, sizeof(*v), by_machine);
        for (size_t a = 0, b; a < n; a = b) {
                for (b = a + 1; b < n && strcasecmp(v[a].machine, v[b].machine) == 0; b++)
                        ;
                for (size_t x = a; x < b; x++) {
                        const NegoSlot *slot = &c->slots[v[x].slot];
                        int64_t id = (int64_t) ad_number(c->in->slots[v[x].slot], "SlotID", 0);
                        char attr[64];

                        if (!slot->running || !slot->remote_user || id <= 0)
                                continue;
                        snprintf(attr, sizeof(attr), "Slot%lld_RemoteUserPrio", (long long) id);
                        for (size_t y = a; y < b; y++) {
                                size_t j = v[y].slot;
                                classad_set_real(c->in->slots[j], attr, slot->remote_eup);
                                if (c->slots[j].own_copy)
                                        classad_set_real(c->slots[j].ad, attr, slot->remote_eup);
                        }
                }
        }
        for (size_t k = 0; k < n; k++)
                free(v[k].machine);
        return 0;
}

/* ---- preparing the submitters ---- */

static int job_cmp(const void *x, const void *y) {
        const NegoJob *a = x, *b = y;

        if (a->prio != b->prio)
                return a->prio > b->prio ? -1 : 1;
        if (a->qdate != b->qdate)
                return a->qdate < b->qdate ? -1 : 1;
        if (a->cluster != b->cluster)
                return a->cluster < b->cluster ? -1 : 1;
        if (a->proc != b->proc)
                return a->proc < b->proc ? -1 : 1;
        return a->index < b->index ? -1 : a->index > b->index;
}

static int prepare_sub(NegoCycle *c, size_t i) {
        const NegoSubmitter *in = &c->in->submitters[i];
        NegoSub *sub = &c->subs[i];
        AcctEntry e;

        sub->name = in->name;
        sub->index = i;
        (void) acct_get(c->in->accounts, in->name, &e);
        sub->eup = e.eup;
        sub->group = acct_groups_of_submitter(c->groups, in->name);
        sub->used = &c->usage[i];
        c->usage[i] = e.weighted_in_use + pending_usage(c, in->name);
        sub->jobs = calloc(in->n_jobs + 1, sizeof(NegoJob));
        if (!sub->jobs)
                return -ENOMEM;
        for (size_t j = 0; j < in->n_jobs; j++) {
                NegoJob *job = &sub->jobs[j];
                job->ad = in->jobs[j];
                job->index = j;
                job->prio = (int64_t) ad_number(job->ad, "JobPrio", 0);
                job->qdate = (int64_t) ad_number(job->ad, "QDate", 0);
                job->cluster = (int64_t) ad_number(job->ad, "ClusterId", 0);
                job->proc = (int64_t) ad_number(job->ad, "ProcId", 0);
                job->demand = c->s->use_slot_weights ? ad_number(job->ad, "RequestCpus", 1) : 1;
                if (!(job->demand > 0))
                        job->demand = 1;
        }
        qsort(sub->jobs, in->n_jobs, sizeof(NegoJob), job_cmp);
        sub->n_jobs = sub->n_left = in->n_jobs;
        return 0;
}

static int by_name(const void *x, const void *y, void *userdata) {
        const NegoCycle *c = userdata;
        size_t a = *(const size_t *) x, b = *(const size_t *) y;
        int d = strcmp(c->subs[a].name, c->subs[b].name);

        return d ? d : a < b ? -1 : a > b;
}

/* Submitters by name: each one's first namesake, and the submitter of
 * each running slot among them (compared by number, not by name, as
 * candidates are classified and preemptions charged). */
static int submitter_ids(NegoCycle *c) {
        _cleanup_free_ size_t *order = calloc(c->n_subs + 1, sizeof(size_t));

        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_subs; i++)
                order[i] = i;
        qsort_r(order, c->n_subs, sizeof(size_t), by_name, c);
        for (size_t k = 0; k < c->n_subs; k++) {
                NegoSub *sub = &c->subs[order[k]];
                bool first = k == 0 || strcmp(c->subs[order[k - 1]].name, sub->name) != 0;
                sub->same = first ? order[k] : c->subs[order[k - 1]].same;
                sub->next_same = k + 1 < c->n_subs && strcmp(c->subs[order[k + 1]].name, sub->name) == 0
                                         ? order[k + 1]
                                         : SIZE_MAX;
        }
        for (size_t i = 0; i < c->n_slots; i++) {
                NegoSlot *slot = &c->slots[i];
                size_t lo = 0, hi = c->n_subs;

                slot->remote_sub = SIZE_MAX;
                if (!slot->remote_user)
                        continue;
                while (lo < hi) { /* the first name not before remote_user */
                        size_t mid = (lo + hi) / 2;
                        if (strcmp(c->subs[order[mid]].name, slot->remote_user) < 0)
                                lo = mid + 1;
                        else
                                hi = mid;
                }
                if (lo < c->n_subs && strcmp(c->subs[order[lo]].name, slot->remote_user) == 0)
                        slot->remote_sub = order[lo];
        }
        return 0;
}

/* ---- matching a submitter's jobs ---- */

static int add_match(NegoCycle *c, NegoSub *sub, NegoJob *job, const NegoPick *p, double cost) {
        NegoSlot *slot = &c->slots[p->slot];
        NegoMatch *m;

        if (c->n_matches == c->cap_matches) {
                size_t cap = c->cap_matches ? 2 * c->cap_matches : 64;
                NegoMatch *v = realloc(c->matches, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                c->matches = v;
                c->cap_matches = cap;
        }
        m = &c->matches[c->n_matches++];
        *m = (NegoMatch){
                .submitter = sub->index,
                .job = job->index,
                .slot = p->slot,
                .reason = (NegoReason) p->reason,
                .cost = cost,
                .preempted_user = NULL,
                .partitionable = slot->partitionable,
                .cpus = p->amounts[0],
                .memory = p->amounts[1],
                .disk = p->amounts[2],
        };
        if (slot->partitionable) {
                const NegoResSet *set = &c->res_sets[slot->res_set];
                for (size_t j = CARVE_N_STD; j < set->res.n; j++)
                        m->custom[j - CARVE_N_STD] = p->amounts[set->at[j]];
        }
        if (p->reason != NEGO_NO_PREEMPTION && slot->remote_user &&
            !(m->preempted_user = strdup(slot->remote_user)))
                return -ENOMEM;
        job->state = JOB_MATCHED;
        sub->n_left--;
        *sub->used += cost;
        c->group_usage[sub->group] += cost;
        if (p->reason != NEGO_NO_PREEMPTION && slot->remote_user) {
                /* The preempted submitter gives the slot's weight back. */
                for (size_t k = slot->remote_sub; k != SIZE_MAX; k = c->subs[k].next_same) {
                        *c->subs[k].used -= slot->weight;
                        c->group_usage[c->subs[k].group] -= slot->weight;
                }
        }
        return 0;
}

typedef enum SubResult {
        SUB_DONE,   /* every job matched or matched nothing */
        SUB_LIMIT,  /* stopped by its limit (or the group's) */
} SubResult;

/* HTCondor's SubmitterLimitPermits: within the limit, or the first match
 * of the spin when any limit is left ("to avoid crumbs"). */
static bool limit_permits(double used, double cost, double limit) {
        return used + cost <= limit + 1e-9 || (used <= 0 && limit > 0);
}

/* Whether b has the same Requirements and Rank as a (as parsed). */
static bool same_expensive(const ClassAd *a, const ClassAd *b) {
        const CaName *req = classad_name("Requirements"), *rank = classad_name("Rank");
        return req && rank && classad_attr_same(a, b, req) && classad_attr_same(a, b, rank);
}

static int negotiate_sub(NegoCycle *c, NegoSub *sub, double limit, bool group_bound, double *group_left,
                         SubResult *ret) {
        double spent = 0;
        int64_t failed_cluster = -1;
        const NegoJob *failed = NULL;

        for (size_t j = 0; j < sub->n_jobs; j++) {
                NegoJob *job = &sub->jobs[j];
                NegoPick pick;
                double cost;
                int r;

                if (job->state != JOB_IDLE)
                        continue;
                if (c->slots_left == 0) {
                        *ret = SUB_DONE;
                        return 0;
                }
                /* 3.4.5: after a job of a cluster fails, the rest of the cluster is skipped. */
                if (!c->s->all_jobs_in_cluster && failed && job->cluster == failed_cluster) {
                        job->state = JOB_REJECTED;
                        job->reason = failed->reason ? strdup(failed->reason) : NULL;
                        /* held alike when it has the same expressions that ran out */
                        job->hold = failed->hold && same_expensive(failed->ad, job->ad);
                        sub->n_left--;
                        continue;
                }
                c->stats.jobs_considered++;
                c->over_budget = false;
                r = c->fast ? nego_fast_best_slot(c, sub, job, &pick) : nego_best_slot(c, sub, job, &pick);
                if (c->over_budget && r >= -ENOENT) {
                        /* Its Requirements or Rank ran out of the evaluation
                         * budget against a slot: its search stopped there.
                         * When they do alone too, they would every cycle:
                         * the job is held. Otherwise what the slot gave them
                         * to read did it: on the plain path that slot is
                         * left out of the cycle and the job tried again (a
                         * few times); else it waits for the next cycle. */
                        char *hold_reason = NULL;
                        bool own = nego_job_too_expensive(job->ad, &hold_reason);
                        for (int again = 0; !own && again < 4 && c->over_budget && r >= -ENOENT && !c->fast;
                             again++) {
                                c->slots[c->over_budget_slot].skip = true;
                                c->over_budget = false;
                                r = nego_best_slot(c, sub, job, &pick);
                        }
                        if (own || (c->over_budget && r >= -ENOENT)) {
                                c->over_budget = false;
                                job->state = JOB_REJECTED;
                                job->hold = own;
                                job->reason = hold_reason;
                                if (!own) {
                                        const char *name = NULL;
                                        char *slot_name = NULL;
                                        if (classad_eval_string(c->slots[c->over_budget_slot].ad, "Name", NEGO_MODE,
                                                                &slot_name) >= 0)
                                                name = slot_name;
                                        if (asprintf(&job->reason,
                                                     "its Requirements or Rank ran out of the evaluation budget "
                                                     "(%u steps) against slot %s",
                                                     (unsigned) CLASSAD_EVAL_BUDGET, name ? name : "?") < 0)
                                                job->reason = NULL;
                                        free(slot_name);
                                }
                                if (!job->reason)
                                        return -ENOMEM;
                                sub->n_left--;
                                failed = job;
                                failed_cluster = job->cluster;
                                continue;
                        }
                        free(hold_reason);
                }
                if (r == -ENOENT) {
                        job->state = JOB_REJECTED;
                        job->reason = nego_why_text(c, job);
                        if (!job->reason)
                                return -ENOMEM;
                        sub->n_left--;
                        failed = job;
                        failed_cluster = job->cluster;
                        continue;
                }
                if (r < 0)
                        return r;
                /* A partitionable slot gives what the job takes, and costs
                 * W(S) - W(S'); taken back when the limit says no. */
                NegoSlot *slot = &c->slots[pick.slot];
                double saved[NEGO_MAX_RES];
                cost = slot->weight;
                if (slot->partitionable) {
                        nego_pslot_save(c, slot, saved);
                        r = nego_pslot_consume(c, slot, pick.amounts, &cost);
                        if (r >= 0 && c->fast)
                                r = nego_fast_pslot_update(c->fast, pick.slot);
                        if (r < 0)
                                return r;
                }
                {
                        double lim = group_bound ? fmin(limit, *group_left + spent) : limit;
                        if (!limit_permits(spent, cost, lim)) {
                                if (slot->partitionable && ((r = nego_pslot_restore(c, slot, saved)) < 0 ||
                                                            (c->fast && (r = nego_fast_pslot_update(c->fast, pick.slot)) < 0)))
                                        return r;
                                job->limit = group_bound && *group_left < limit - spent ? 2 : 1;
                                *ret = SUB_LIMIT;
                                return 0;
                        }
                }
                if (!slot->partitionable) {
                        slot->taken = true;
                        c->slots_left--;
                }
                r = add_match(c, sub, job, &pick, cost);
                if (r < 0)
                        return r;
                spent += cost;
                *group_left -= cost;
        }
        *ret = SUB_DONE;
        return 0;
}

/* ---- the pie (3.4.2, 3.4.6) ---- */

static int by_eup(const void *x, const void *y) {
        const NegoSub *a = *(NegoSub *const *) x, *b = *(NegoSub *const *) y;

        if (a->eup != b->eup)
                return a->eup < b->eup ? -1 : 1;
        return strcmp(a->name, b->name);
}

/* Negotiates for subs[] (a group's submitters, or everyone), the pie being
 * min(pool, quota) and the group allowed group_left more weight. */
static int negotiate_group(NegoCycle *c, NegoSub **subs, size_t n, double quota, double group_left,
                           bool group_bound) {
        double pie = fmin(c->pool_weight, quota);
        _cleanup_free_ double *limits = calloc(n + 1, sizeof(double));
        _cleanup_free_ double *eups = calloc(n + 1, sizeof(double));
        _cleanup_free_ double *shares = calloc(n + 1, sizeof(double));
        size_t active = 0;
        double gone = 0; /* held by submitters done with this group's negotiation */
        int r;

        if (!limits || !eups || !shares)
                return -ENOMEM;
        for (size_t i = 0; i < n; i++)
                if (subs[i]->n_left > 0)
                        subs[active++] = subs[i];
        n = active;
        qsort(subs, n, sizeof(*subs), by_eup);

        for (int spin = 1; n > 0 && c->slots_left > 0; spin++) {
                bool progress = false;
                size_t kept = 0;

                c->stats.spins++;
                for (size_t i = 0; i < n; i++)
                        eups[i] = subs[i]->eup > 0 ? subs[i]->eup : ACCT_MIN_PRIORITY;
                if ((r = acct_shares(eups, n, shares)) < 0)
                        return r;
                for (size_t i = 0; i < n; i++) {
                        /* 3.4.2: what a submitter that got all it could use
                         * holds is out of the pie the others share. */
                        limits[i] = shares[i] * (pie - gone) - *subs[i]->used;
                        if (limits[i] < 0)
                                limits[i] = 0;
                }
                for (size_t i = 0; i < n; i++) {
                        NegoSub *sub = subs[i];
                        size_t before = c->n_matches;
                        SubResult res = SUB_DONE;

                        if (group_bound && group_left <= 0) {
                                for (size_t j = 0; j < sub->n_jobs; j++)
                                        if (sub->jobs[j].state == JOB_IDLE)
                                                sub->jobs[j].limit = 2;
                                subs[kept++] = sub;
                                continue;
                        }
                        if (spin > 1 && limits[i] < c->min_weight) {
                                subs[kept++] = sub;
                                continue;
                        }
                        r = negotiate_sub(c, sub, limits[i], group_bound, &group_left, &res);
                        if (r < 0)
                                return r;
                        if (c->n_matches > before)
                                progress = true;
                        if (res == SUB_LIMIT && sub->n_left > 0)
                                subs[kept++] = sub;
                        else
                                gone += *sub->used;
                }
                if (kept < n)
                        progress = true;
                n = kept;
                if (!progress)
                        break;
        }
        /* Those still idle were stopped by a limit. */
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < subs[i]->n_jobs; j++)
                        if (subs[i]->jobs[j].state == JOB_IDLE && !subs[i]->jobs[j].limit)
                                subs[i]->jobs[j].limit = 1;
        return 0;
}

/* ---- quota groups (3.4.8) ---- */

typedef struct GroupOrder {
        size_t group;
        double key;
} GroupOrder;

static int by_key(const void *x, const void *y) {
        const GroupOrder *a = x, *b = y;

        if (a->key != b->key)
                return a->key < b->key ? -1 : 1;
        return a->group < b->group ? -1 : a->group > b->group;
}

/* GROUP_SORT_EXPR over [AccountingGroup; GroupQuota; GroupResourcesInUse;
 * GroupResourcesAllocated]; HTCondor's default puts "<none>" last and the
 * most starved first. */
static double group_key(const NegoCycle *c, size_t g) {
        ClassAd *ad = NULL;
        double key = 3.3e38;

        if (classad_new(&ad) < 0)
                return key;
        classad_set_string(ad, "AccountingGroup", acct_groups_get(c->groups, g)->name);
        classad_set_real(ad, "GroupQuota", c->group_quota[g]);
        classad_set_real(ad, "GroupResourcesInUse", c->group_usage[g]);
        classad_set_real(ad, "GroupResourcesAllocated", c->group_alloc[g]);
        key = c->s->group_sort ? nego_eval_number(c->s->group_sort, ad, NULL, 3.3e38) : (g == 0 ? 3.4e38 : 0);
        classad_free(ad);
        return key;
}

static int negotiate_groups(NegoCycle *c) {
        size_t ng = acct_groups_count(c->groups);
        _cleanup_free_ double *demand = calloc(ng, sizeof(double));
        _cleanup_free_ GroupOrder *order = calloc(ng, sizeof(GroupOrder));
        _cleanup_free_ NegoSub **subs = calloc(c->n_subs + 1, sizeof(NegoSub *));
        int r;

        if (!demand || !order || !subs)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_subs; i++) {
                demand[c->subs[i].group] += *c->subs[i].used;
                for (size_t j = 0; j < c->subs[i].n_jobs; j++)
                        demand[c->subs[i].group] += c->subs[i].jobs[j].demand;
        }
        for (size_t g = 0; g < ng; g++)
                if (demand[g] < c->group_usage[g])
                        demand[g] = c->group_usage[g];

        for (int round = 0; round < c->s->max_allocation_rounds; round++) {
                AcctQuotaResult q = {};
                double allocated = 0, used = 0;

                r = acct_quotas_compute(c->groups, c->pool_weight, demand, &q);
                if (r < 0)
                        return r;
                for (size_t g = 0; g < ng; g++) {
                        c->group_quota[g] = g == 0 ? 0 : q.q[g].own;
                        c->group_alloc[g] = q.q[g].allocated;
                        order[g] = (GroupOrder){ g, 0 };
                }
                for (size_t g = 0; g < ng; g++)
                        order[g].key = group_key(c, g);
                qsort(order, ng, sizeof(*order), by_key);
                for (size_t k = 0; k < ng; k++) {
                        size_t g = order[k].group, n = 0;
                        double target = fmax(q.q[g].allocated, g == 0 ? 0 : q.q[g].own);

                        if (q.q[g].allocated <= 0)
                                continue;
                        for (size_t i = 0; i < c->n_subs; i++)
                                if (c->subs[i].group == g && c->subs[i].n_left > 0)
                                        subs[n++] = &c->subs[i];
                        if (n == 0)
                                continue;
                        r = negotiate_group(c, subs, n, target, target - c->group_usage[g], true);
                        if (r < 0) {
                                acct_quota_result_clear(&q);
                                return r;
                        }
                }
                for (size_t g = 0; g < ng; g++) {
                        allocated += q.q[g].allocated;
                        used += fmin(c->group_usage[g], q.q[g].allocated);
                        /* A group that could not use its allocation gives it to the
                         * others (what it holds can look negative when the
                         * accounts charged less than the slots it lost weigh). */
                        if (c->group_usage[g] < q.q[g].allocated)
                                demand[g] = fmax(c->group_usage[g], 0);
                }
                acct_quota_result_clear(&q);
                if (used >= allocated - 1e-9 || c->slots_left == 0)
                        break;
        }

        /* GROUP_AUTOREGROUP: what the groups left, their submitters may
         * take beside those of no group, by EUP alone. */
        {
                size_t n = 0;
                for (size_t i = 0; i < c->n_subs; i++)
                        if (c->subs[i].group != 0 && acct_groups_get(c->groups, c->subs[i].group)->autoregroup &&
                            c->subs[i].n_left > 0)
                                subs[n++] = &c->subs[i];
                if (n > 0 && c->slots_left > 0)
                        return negotiate_group(c, subs, n, c->pool_weight, INFINITY, false);
        }
        return 0;
}

/* ---- the cycle ---- */

static void cycle_free(NegoCycle *c) {
        nego_fast_free(c->fast);
        for (size_t i = 0; i < c->n_slots; i++) {
                if (c->slots[i].own_copy)
                        classad_free(c->slots[i].ad);
                free(c->slots[i].remote_user);
        }
        free(c->slots);
        free(c->res_sets);
        for (size_t i = 0; i < c->n_subs; i++) {
                for (size_t j = 0; j < c->subs[i].n_jobs; j++)
                        free(c->subs[i].jobs[j].reason);
                free(c->subs[i].jobs);
        }
        free(c->subs);
        free(c->usage);
        free(c->adjust);
        free(c->group_usage);
        free(c->group_quota);
        free(c->group_alloc);
        for (size_t i = 0; i < c->n_matches && c->matches; i++)
                free(c->matches[i].preempted_user);
        free(c->matches);
}

static int group_usage_from_accounts(NegoCycle *c) {
        _cleanup_free_ AcctEntry *list = NULL;
        size_t n = 0;
        int r = acct_list(c->in->accounts, &list, &n);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++)
                if (!list[i].is_group)
                        c->group_usage[list[i].group] += list[i].weighted_in_use;
        for (size_t i = 0; i < c->n_adjust; i++)
                c->group_usage[acct_groups_of_submitter(c->groups, c->adjust[i].name)] += c->adjust[i].delta;
        return 0;
}

static int collect(NegoCycle *c, NegoResult *ret) {
        size_t n_rej = 0, k = 0, ng = acct_groups_count(c->groups);
        NegoResult res = { .stats = c->stats, .n_groups = ng };

        for (size_t i = 0; i < c->n_subs; i++)
                for (size_t j = 0; j < c->subs[i].n_jobs; j++)
                        n_rej += c->subs[i].jobs[j].state != JOB_MATCHED;
        res.rejections = calloc(n_rej + 1, sizeof(NegoRejection));
        res.group_allocated = calloc(ng, sizeof(double));
        res.group_in_use = calloc(ng, sizeof(double));
        if (!res.rejections || !res.group_allocated || !res.group_in_use) {
                nego_result_clear(&res);
                return -ENOMEM;
        }
        for (size_t i = 0; i < c->n_subs; i++)
                for (size_t j = 0; j < c->subs[i].n_jobs; j++) {
                        NegoJob *job = &c->subs[i].jobs[j];
                        NegoRejection *rej;

                        if (job->state == JOB_MATCHED)
                                continue;
                        rej = &res.rejections[k++];
                        rej->submitter = i;
                        rej->job = job->index;
                        rej->hold = job->state == JOB_REJECTED && job->hold;
                        if (job->state == JOB_REJECTED && job->reason)
                                rej->reason = TAKE_PTR(job->reason);
                        else
                                rej->reason = strdup(job->limit == 2 ? "group quota reached"
                                                     : c->slots_left == 0 ? "no slot left this cycle"
                                                                          : "submitter's share reached");
                        if (!rej->reason) {
                                res.n_rejections = k;
                                nego_result_clear(&res);
                                return -ENOMEM;
                        }
                }
        res.n_rejections = k;
        res.matches = TAKE_PTR(c->matches);
        res.n_matches = c->n_matches;
        for (size_t g = 0; g < ng; g++) {
                res.group_allocated[g] = c->group_alloc[g];
                res.group_in_use[g] = c->group_usage[g];
        }
        *ret = res;
        return 0;
}

int nego_cycle(const NegoInput *in, NegoResult *ret) {
        NegoCycle c = { .in = in, .s = in->settings, .groups = acct_groups(in->accounts) };
        size_t ng = acct_groups_count(c.groups);
        int r = -ENOMEM;

        carve_resources(c.s->carve, NULL, &c.res); /* Cpus, Memory, Disk; the p-slots add theirs */
        c.n_slots = in->n_slots;
        c.n_subs = in->n_submitters;
        c.slots = calloc(c.n_slots + 1, sizeof(NegoSlot));
        c.subs = calloc(c.n_subs + 1, sizeof(NegoSub));
        c.usage = calloc(c.n_subs + 1, sizeof(double));
        c.group_usage = calloc(ng, sizeof(double));
        c.group_quota = calloc(ng, sizeof(double));
        c.group_alloc = calloc(ng, sizeof(double));
        if (!c.slots || !c.subs || !c.usage || !c.group_usage || !c.group_quota || !c.group_alloc)
                goto done;
        if ((r = pending_prepare(&c)) < 0 || (r = group_usage_from_accounts(&c)) < 0)
                goto done;
        c.min_weight = INFINITY;
        for (size_t i = 0; i < c.n_slots; i++) {
                if ((r = prepare_slot(&c, i)) < 0)
                        goto done;
                c.pool_weight += c.slots[i].weight;
                if (c.slots[i].weight > 0 && c.slots[i].weight < c.min_weight)
                        c.min_weight = c.slots[i].weight;
                if (!c.slots[i].skip)
                        c.slots_left++;
        }
        if (!isfinite(c.min_weight))
                c.min_weight = 1;
        for (size_t i = 0; i < c.n_subs; i++)
                if ((r = prepare_sub(&c, i)) < 0)
                        goto done;
        if ((r = submitter_ids(&c)) < 0)
                goto done;
        /* The autoclusters, then the slots' ephemeral attributes (the fast
         * path writes those that are read), then the slot shapes. The
         * plain path counts autoclusters and shapes for its statistics. */
        if ((r = nego_fast_new(&c, &c.fast)) < 0)
                goto done;
        if (in->plain || !c.fast || nego_fast_reads_remote(c.fast))
                for (size_t i = 0; i < c.n_slots; i++)
                        slot_ephemeral(&c, i);
        if ((in->plain || !c.fast || nego_fast_reads_slot_prios(c.fast)) && (r = cross_slot_prios(&c)) < 0)
                goto done;
        if (c.fast && (r = nego_fast_shapes(c.fast)) < 0)
                goto done;
        if (in->plain) {
                nego_fast_free(c.fast);
                c.fast = NULL;
        }

        if (ng <= 1) {
                _cleanup_free_ NegoSub **subs = calloc(c.n_subs + 1, sizeof(NegoSub *));
                if (!subs) {
                        r = -ENOMEM;
                        goto done;
                }
                for (size_t i = 0; i < c.n_subs; i++)
                        subs[i] = &c.subs[i];
                c.group_alloc[0] = c.pool_weight;
                r = negotiate_group(&c, subs, c.n_subs, c.pool_weight, INFINITY, false);
        } else
                r = negotiate_groups(&c);
        if (r >= 0)
                r = collect(&c, ret);
done:
        cycle_free(&c);
        return r;
}

void nego_result_clear(NegoResult *r) {
        if (!r)
                return;
        for (size_t i = 0; i < r->n_rejections; i++)
                free(r->rejections[i].reason);
        for (size_t i = 0; i < r->n_matches; i++)
                free(r->matches[i].preempted_user);
        free(r->rejections);
        free(r->matches);
        free(r->group_allocated);
        free(r->group_in_use);
        *r = (NegoResult){};
}

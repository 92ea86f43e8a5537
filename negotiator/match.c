/* SPDX-License-Identifier: Apache-2.0 */
/*
 * match.c — one job against the pool (3.4.5): the candidate slots and
 * their reasons, the ranking, what a partitionable slot gives (seed 003),
 * and why a job that matched nothing did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fast-internal.h"

/* ---- slot weights and partitionable slots ---- */

double nego_settings_slot_weight(const NegoSettings *s, const ClassAd *slot) {
        CaValue v = ca_undefined();
        double w = 1.0;

        if (!s->use_slot_weights)
                return 1.0;
        if (classad_has(slot, "SlotWeight")) {
                if (classad_eval_attr(slot, "SlotWeight", NEGO_MODE, &v) < 0 || !ca_to_real(&v, &w))
                        w = 1.0;
        } else if (s->slot_weight)
                w = nego_eval_number(s->slot_weight, slot, NULL, 1.0);
        else if (classad_eval_attr(slot, "Cpus", NEGO_MODE, &v) < 0 || !ca_to_real(&v, &w))
                w = 1.0;
        ca_value_clear(&v);
        return w >= 0 && isfinite(w) ? w : 1.0;
}

/* The p-slot's resources, interned, and the cycle's list grown by those
 * it has not seen. */
int nego_pslot_resources(NegoCycle *c, size_t i) {
        NegoResSet set = {};

        carve_resources(c->s->carve, c->slots[i].ad, &set.res);
        for (uint32_t k = 0; k < c->n_res_sets; k++) {
                const CarveResources *o = &c->res_sets[k].res;
                bool same = o->n == set.res.n;
                for (size_t j = 0; j < o->n && same; j++)
                        same = strcmp(o->name[j], set.res.name[j]) == 0;
                if (same) {
                        c->slots[i].res_set = k;
                        return 0;
                }
        }
        for (size_t j = 0; j < set.res.n; j++) {
                size_t at = 0;
                while (at < c->res.n && strcasecmp(c->res.name[at], set.res.name[j]) != 0)
                        at++;
                if (at == c->res.n && at < NEGO_MAX_RES)
                        snprintf(c->res.name[c->res.n++], CARVE_NAME_MAX, "%s", set.res.name[j]);
                set.at[j] = at < NEGO_MAX_RES ? (int8_t) at : -1;
                set.untracked |= at >= NEGO_MAX_RES;
                if (at < NEGO_MAX_RES)
                        set.mask |= 1u << at;
        }
        if (nego_grow((void **) &c->res_sets, &c->cap_res_sets, c->n_res_sets + 1, sizeof(NegoResSet)) < 0)
                return -ENOMEM;
        c->res_sets[c->n_res_sets] = set;
        c->slots[i].res_set = c->n_res_sets++;
        return 0;
}

/* What a job takes from a partitionable slot: carve_ask() (carve/), its
 * amounts put in the cycle's order of resources. */
bool nego_pslot_ask(const NegoCycle *c, size_t i, bool whole, const ClassAd *job, CarveAsk *ret) {
        const NegoResSet *set = &c->res_sets[c->slots[i].res_set];
        const ClassAd *ad = whole ? c->in->slots[i] : c->slots[i].ad;
        CarveAsk ask;

        if (set->untracked || carve_ask(c->s->carve, &set->res, ad, job, &ask, NULL, 0) < 0)
                return false;
        *ret = (CarveAsk){ .fallback = ask.fallback };
        for (size_t j = 0; j < set->res.n; j++) {
                ret->want[set->at[j]] = ask.want[j];
                ret->unmodified[set->at[j]] = ask.unmodified[j];
        }
        return true;
}

bool nego_ask_take(const NegoCycle *c, const CarveAsk *ask, const double *have, double *ret) {
        return carve_fit(&c->res, ask, have, ret, NULL, 0) >= 0;
}

double nego_slot_amount(const NegoCycle *c, const ClassAd *slot, size_t i) {
        CaValue v = ca_undefined();
        double d = 0;

        if (classad_eval_attr(slot, c->res.name[i], NEGO_MODE, &v) < 0 || !ca_to_real(&v, &d))
                d = 0;
        ca_value_clear(&v);
        return d;
}

bool nego_pslot_fits(const NegoCycle *c, size_t i, bool whole, const ClassAd *job, double *amounts) {
        double have[NEGO_MAX_RES];
        CarveAsk ask;

        if (!nego_pslot_ask(c, i, whole, job, &ask))
                return false;
        for (size_t k = 0; k < c->res.n; k++)
                have[k] = nego_slot_amount(c, whole ? c->in->slots[i] : c->slots[i].ad, k);
        return nego_ask_take(c, &ask, have, amounts);
}

bool nego_pslot_has(const NegoCycle *c, const NegoSlot *slot, size_t i) {
        return c->res_sets[slot->res_set].mask & (1u << i);
}

void nego_pslot_save(const NegoCycle *c, const NegoSlot *slot, double *saved) {
        for (size_t i = 0; i < c->res.n; i++)
                saved[i] = nego_slot_amount(c, slot->ad, i);
}

static int set_amount(const NegoCycle *c, ClassAd *ad, size_t i, double v) {
        return v == floor(v) && v >= 0 && v < 9e15 ? classad_set_int(ad, c->res.name[i], (int64_t) v)
                                                   : classad_set_real(ad, c->res.name[i], v);
}

int nego_pslot_restore(const NegoCycle *c, NegoSlot *slot, const double *saved) {
        int r = 0;

        for (size_t i = 0; i < c->res.n && r >= 0; i++)
                if (nego_pslot_has(c, slot, i))
                        r = set_amount(c, slot->ad, i, saved[i]);
        return r;
}

int nego_pslot_consume(const NegoCycle *c, NegoSlot *slot, const double *amounts, double *ret_cost) {
        double before = nego_settings_slot_weight(c->s, slot->ad), after;
        int r = 0;

        /* what the p-slot is not carved by (another machine's resource) is not written */
        for (size_t i = 0; i < c->res.n && r >= 0; i++) {
                double left;
                if (!nego_pslot_has(c, slot, i))
                        continue;
                left = nego_slot_amount(c, slot->ad, i) - amounts[i];
                if (left < 0)
                        left = 0;
                r = set_amount(c, slot->ad, i, left);
        }
        if (r < 0)
                return r;
        after = nego_settings_slot_weight(c->s, slot->ad);
        *ret_cost = c->s->use_slot_weights ? before - after : 1.0;
        if (*ret_cost < 0)
                *ret_cost = 0;
        return 0;
}

/* ---- candidates ---- */

typedef struct Cand {
        double pre, job_rank, post, order, prank;
} Cand;

static bool better(const Cand *a, const Cand *b) {
        if (a->pre != b->pre)
                return a->pre > b->pre;
        if (a->job_rank != b->job_rank)
                return a->job_rank > b->job_rank;
        if (a->post != b->post)
                return a->post > b->post;
        if (a->order != b->order)
                return a->order > b->order;
        return a->prank > b->prank;
}

int nego_preemption_reason(const NegoCycle *c, const NegoSlot *slot, const NegoSub *sub, double rank, NegoPreqFn preq,
                           void *userdata, NegoKeep *keep) {
        if (slot->in_retirement && !c->s->consider_early_preemption) {
                *keep = NEGO_KEEP_EARLY;
                return -1;
        }
        if (rank > slot->current_rank)
                return NEGO_RANK;
        if (slot->remote_sub != SIZE_MAX && slot->remote_sub == sub->same) {
                *keep = NEGO_KEEP_SAME_USER;
                return -1;
        }
        if (!(sub->eup < slot->remote_eup)) {
                *keep = NEGO_KEEP_PRIORITY;
                return -1;
        }
        if (!preq(userdata)) {
                *keep = NEGO_KEEP_POLICY;
                return -1;
        }
        if (rank < slot->current_rank) {
                *keep = NEGO_KEEP_RANK;
                return -1;
        }
        return NEGO_PRIORITY;
}

void nego_job_ephemeral(const NegoCycle *c, const NegoSub *sub, ClassAd *job) {
        classad_set_real(job, "SubmitterUserPrio", sub->eup);
        classad_set_real(job, "SubmitterUserResourcesInUse", *sub->used);
        classad_set_string(job, "SubmitterGroup", acct_groups_get(c->groups, sub->group)->name);
        if (sub->group != 0) {
                classad_set_real(job, "SubmitterGroupResourcesInUse", c->group_usage[sub->group]);
                classad_set_real(job, "SubmitterGroupQuota", c->group_quota[sub->group]);
        }
}

/* ---- the evaluation budget ---- */

bool nego_job_req(NegoCycle *c, const ClassAd *job, size_t slot) {
        uint64_t hits = classad_budget_hits();
        bool ok;

        if (c->over_budget)
                return false;
        ok = classad_requirements_met(job, c->slots[slot].ad, NEGO_MODE);
        if (classad_budget_hits() != hits) {
                c->over_budget = true;
                c->over_budget_slot = slot;
                return false;
        }
        return ok;
}

double nego_job_rank(NegoCycle *c, const ClassAd *job, size_t slot) {
        uint64_t hits = classad_budget_hits();
        double d;

        if (c->over_budget)
                return 0;
        d = classad_rank(job, c->slots[slot].ad, NEGO_MODE);
        if (classad_budget_hits() != hits) {
                c->over_budget = true;
                c->over_budget_slot = slot;
                return 0;
        }
        return d;
}

bool nego_job_too_expensive(const ClassAd *job, char **ret_reason) {
        static const char *const attrs[] = { "Requirements", "Rank" };

        for (size_t i = 0; i < sizeof(attrs) / sizeof(*attrs); i++) {
                uint64_t hits = classad_budget_hits();
                CaValue v = ca_undefined();
                if (!classad_has(job, attrs[i]))
                        continue;
                if (classad_eval_attr(job, attrs[i], NEGO_MODE, &v) >= 0)
                        ca_value_clear(&v);
                if (classad_budget_hits() == hits)
                        continue;
                if (ret_reason && asprintf(ret_reason, "%s too expensive to evaluate: exceeded the evaluation "
                                                       "budget of %u steps",
                                           attrs[i], (unsigned) CLASSAD_EVAL_BUDGET) < 0)
                        *ret_reason = NULL;
                return true;
        }
        return false;
}

typedef struct PreqArgs {
        const NegoCycle *c;
        const ClassAd *slot, *job;
} PreqArgs;

static bool plain_preq(void *userdata) {
        const PreqArgs *x = userdata;

        return nego_eval_true(x->c->s->preemption_req, x->slot, x->job);
}

int nego_best_slot(NegoCycle *c, NegoSub *sub, NegoJob *job, NegoPick *ret) {
        Cand best = {}, cand;
        NegoPick pick = { .slot = SIZE_MAX };
        NegoWhy *why = &c->why;

        *why = (NegoWhy){};
        nego_job_ephemeral(c, sub, job->ad);
        for (size_t i = 0; i < c->n_slots; i++) {
                NegoSlot *slot = &c->slots[i];
                double amounts[NEGO_MAX_RES] = { 0 };
                int reason = NEGO_NO_PREEMPTION;
                NegoKeep keep = NEGO_KEEP_NONE;
                bool job_ok, slot_ok;

                if (slot->skip || (slot->running && !c->s->consider_preemption))
                        continue;
                why->slots++;
                if (i + 4 < c->n_slots)
                        classad_prefetch(c->slots[i + 4].ad);
                /* What is left of a partitionable slot first: used up this
                 * cycle is "taken", too small from the start is the job's. */
                if (slot->partitionable && !nego_pslot_fits(c, i, false, job->ad, amounts)) {
                        if (nego_pslot_fits(c, i, true, job->ad, amounts))
                                why->taken++;
                        else
                                why->job_false++;
                        continue;
                }
                c->stats.evaluations += 1;
                job_ok = nego_job_req(c, job->ad, i);
                if (c->over_budget)
                        return -ENOENT; /* the caller holds the job, or gives up on it this cycle */
                c->stats.evaluations += job_ok;
                slot_ok = job_ok && classad_requirements_met(slot->ad, job->ad, NEGO_MODE);
                if (!job_ok) {
                        why->job_false++;
                        continue;
                }
                if (!slot_ok) {
                        why->slot_false++;
                        continue;
                }
                if (slot->taken) {
                        why->taken++;
                        continue;
                }
                if (slot->running) {
                        PreqArgs x = { c, slot->ad, job->ad };
                        reason = nego_preemption_reason(c, slot, sub,
                                                        nego_rank_value(classad_rank(slot->ad, job->ad, NEGO_MODE)),
                                                        plain_preq, &x, &keep);
                        if (reason < 0) {
                                why->kept[keep]++;
                                continue;
                        }
                }
                cand = (Cand){
                        .pre = nego_rank_value(nego_eval_number(c->s->pre_job_rank, slot->ad, job->ad, 0)),
                        .job_rank = nego_rank_value(nego_job_rank(c, job->ad, i)),
                        .post = nego_rank_value(nego_eval_number(c->s->post_job_rank, slot->ad, job->ad, 0)),
                        .order = 2 - reason,
                        .prank = reason == NEGO_NO_PREEMPTION
                                         ? 0
                                         : nego_rank_value(nego_eval_number(c->s->preemption_rank, slot->ad,
                                                                            job->ad, 0)),
                };
                if (c->over_budget)
                        return -ENOENT;
                if (pick.slot == SIZE_MAX || better(&cand, &best)) {
                        best = cand;
                        pick.slot = i;
                        pick.reason = reason;
                        memcpy(pick.amounts, amounts, sizeof(amounts));
                }
        }
        if (pick.slot == SIZE_MAX)
                return -ENOENT;
        *ret = pick;
        return 0;
}

/* ---- why not ---- */

/* The top-level && clauses of the job's Requirements, as text. */
static size_t split_clauses(const char *text, char **clauses, size_t max) {
        size_t n = 0, depth = 0, start = 0, len = strlen(text);
        bool quoted = false;

        for (size_t i = 0; i <= len && n < max; i++) {
                char ch = text[i];
                if (quoted) {
                        if (ch == '\\' && text[i + 1])
                                i++;
                        else if (ch == '"')
                                quoted = false;
                        continue;
                }
                if (ch == '"')
                        quoted = true;
                else if (ch == '(' || ch == '[' || ch == '{')
                        depth++;
                else if ((ch == ')' || ch == ']' || ch == '}') && depth > 0)
                        depth--;
                else if ((ch == '\0' || (depth == 0 && ch == '&' && text[i + 1] == '&'))) {
                        size_t b = start, e = i;
                        while (b < e && text[b] == ' ')
                                b++;
                        while (e > b && text[e - 1] == ' ')
                                e--;
                        if (e > b)
                                clauses[n++] = strndup(text + b, e - b);
                        start = i + 2;
                        i++;
                }
        }
        return n;
}

#define MAX_CLAUSES 16
/* What the reason analysis may spend on one job: evaluations of a clause
 * against a slot (or a fast-path slot group), and none more once one of
 * them runs out of the evaluation budget (then the counts are partial,
 * and say so). */
#define MAX_BREAKDOWN_EVALS 20000

/* "Memory >= RequestMemory false on 4,000; Arch == "aarch64" false on 800" */
static void clause_breakdown(const NegoCycle *c, const ClassAd *job, char *buf, size_t size) {
        char *text = classad_unparse_attr(job, "Requirements"), *clauses[MAX_CLAUSES];
        size_t counts[MAX_CLAUSES] = { 0 }, n, len = 0, n_groups = 0;
        _cleanup_free_ size_t *group_slots = NULL, *group_counts = NULL;
        ClassAdExpr *exprs[MAX_CLAUSES] = { 0 };

        buf[0] = '\0';
        if (!text)
                return;
        /* The fast path's slot shapes evaluate alike for the job's
         * Requirements, and so for each of its clauses. */
        if (c->fast && nego_fast_slot_groups((NegoCycle *) c, &group_slots, &group_counts, &n_groups) < 0) {
                free(text);
                return;
        }
        n = split_clauses(text, clauses, MAX_CLAUSES);
        for (size_t k = 0; k < n; k++)
                (void) classad_expr_parse(clauses[k], strlen(clauses[k]), NEGO_MODE, &exprs[k], NULL);
        size_t evals = 0;
        uint64_t hits = classad_budget_hits();
        bool cut = false;
        for (size_t g = 0; g < (c->fast ? n_groups : c->n_slots) && !cut; g++) {
                size_t i = c->fast ? group_slots[g] : g, weight = c->fast ? group_counts[g] : 1;
                const NegoSlot *slot = &c->slots[i];
                if (slot->skip || (slot->running && !c->s->consider_preemption))
                        continue;
                for (size_t k = 0; k < n && !cut; k++)
                        if (exprs[k]) {
                                CaValue v = ca_undefined();
                                if (++evals > MAX_BREAKDOWN_EVALS || classad_budget_hits() != hits) {
                                        cut = true;
                                        break;
                                }
                                classad_expr_eval(exprs[k], job, slot->ad, NEGO_MODE, &v);
                                if (!(v.type == CA_BOOL && v.u.b))
                                        counts[k] += weight;
                                ca_value_clear(&v);
                        }
        }
        for (size_t k = 0; k < n; k++) {
                if (counts[k] && len + 1 < size)
                        len += (size_t) snprintf(buf + len, size - len, "%s%s false on %zu", len ? "; " : "",
                                                 clauses[k], counts[k]);
                classad_expr_free(exprs[k]);
                free(clauses[k]);
        }
        if (cut && len + 1 < size)
                snprintf(buf + len, size - len, "%s(counts of the first %zu evaluations only)", len ? "; " : "",
                         evals - 1);
        free(text);
}

char *nego_why_text(NegoCycle *c, const NegoJob *job) {
        const NegoWhy *w = &c->why;
        char detail[768] = "", *s = NULL;
        size_t kept = 0;

        for (int k = 0; k < NEGO_N_KEEP; k++)
                kept += w->kept[k];
        if (w->slots == 0)
                return strdup("no slot to match: the pool has none that is not busy with its own claim");
        if (w->taken > 0)
                /* by this submitter's own jobs or another's: the cycle does
                 * not keep who took which */
                (void) asprintf(&s,
                                "the matching slots were taken this cycle by jobs matched before it (%zu matching "
                                "slot%s taken)",
                                w->taken, w->taken == 1 ? "" : "s");
        else if (w->kept[NEGO_KEEP_POLICY] > 0 && w->kept[NEGO_KEEP_POLICY] == kept)
                (void) asprintf(&s, "PREEMPTION_REQUIREMENTS false on the %zu running slot%s that match", kept,
                                kept == 1 ? "" : "s");
        else if (kept > 0) {
                /* only the counts that are not 0 */
                static const char *const why_kept[NEGO_N_KEEP] = {
                        [NEGO_KEEP_EARLY] = "in their retirement",
                        [NEGO_KEEP_SAME_USER] = "the submitter's own",
                        [NEGO_KEEP_PRIORITY] = "with a better priority",
                        [NEGO_KEEP_POLICY] = "refused by PREEMPTION_REQUIREMENTS",
                        [NEGO_KEEP_RANK] = "preferring their job by RANK",
                };
                char parts[256] = "";
                size_t len = 0;
                for (int k = 0; k < NEGO_N_KEEP && len + 1 < sizeof parts; k++)
                        if (w->kept[k] && why_kept[k])
                                len += (size_t) snprintf(parts + len, sizeof parts - len, "%s%zu %s", len ? ", " : "",
                                                         w->kept[k], why_kept[k]);
                (void) asprintf(&s, "the %zu slot%s that match run other jobs and are kept (%s)", kept,
                                kept == 1 ? "" : "s", parts);
        }
        else if (w->slot_false > 0)
                (void) asprintf(&s, "the slots that match refuse the job (START false on %zu)", w->slot_false);
        else {
                if (c->breakdowns < NEGO_MAX_BREAKDOWNS) {
                        c->breakdowns++;
                        clause_breakdown(c, job->ad, detail, sizeof(detail));
                }
                (void) asprintf(&s, "no slot satisfies the job's Requirements (%zu slot%s%s%s)", w->slots,
                                w->slots == 1 ? "" : "s", detail[0] ? ": " : "", detail);
        }
        return s;
}

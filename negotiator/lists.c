/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lists.c — the static slots' shared candidate lists (fast-internal.h):
 * the slots grouped by shape for the jobs' Requirements (those whose own
 * Requirements refuse every job left out), and for each candidate order
 * (the job's classes for NEGOTIATOR_PRE_JOB_RANK, its Rank,
 * NEGOTIATOR_POST_JOB_RANK and PREEMPTION_RANK) each group's idle slots
 * and its running ones sorted once, best first, shared by every
 * submitter's jobs of that order. A slot matched is skipped in all of
 * them at once: each list's "next not taken" is a union-find.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast-internal.h"
#include "pslot-tree.h"

bool nego_entry_before(const NegoEntry *a, const NegoEntry *b) {
        for (int i = 0; i < 3; i++)
                if (a->key[i] != b->key[i])
                        return a->key[i] > b->key[i];
        if (a->prank != b->prank)
                return a->prank > b->prank;
        return a->slot < b->slot;
}

static int entry_cmp(const void *x, const void *y) {
        return nego_entry_before(x, y) ? -1 : nego_entry_before(y, x) ? 1 : 0;
}

/* ---- groups of static slots ---- */

static int push_slot(uint32_t **v, uint32_t *n, uint32_t *cap, size_t slot) {
        if (nego_grow((void **) v, cap, *n + 1, sizeof(uint32_t)) < 0)
                return -ENOMEM;
        (*v)[(*n)++] = (uint32_t) slot;
        return 0;
}

/* Slot i (live, its Requirements reading the job) among its group's deps. */
static int group_dep(NegoFast *f, NegoGroup *g, size_t i, bool running) {
        uint32_t d = nego_fast_slot_deps(f, i);
        NegoDep *dep = NULL;

        for (uint32_t k = 0; k < g->n_deps && !dep; k++)
                if (g->deps[k].d == d)
                        dep = &g->deps[k];
        if (!dep) {
                if (nego_grow((void **) &g->deps, &g->cap_deps, g->n_deps + 1, sizeof(NegoDep)) < 0)
                        return -ENOMEM;
                dep = &g->deps[g->n_deps++];
                *dep = (NegoDep){ .d = d };
        }
        return running ? push_slot(&dep->running, &dep->n_running, &dep->cap_running, i)
                       : push_slot(&dep->idle, &dep->n_idle, &dep->cap_idle, i);
}

/* The static slots by shape for the jobs' Requirements; those whose own
 * Requirements are false whatever the job (a desktop in use) in no list. */
int nego_groups_make(NegoFast *f) {
        const NegoCycle *c = f->c;
        uint32_t n_shapes = f->shape_table[NEGO_F_JREQ].n;
        _cleanup_free_ uint32_t *group_of = malloc((n_shapes + 1) * sizeof(uint32_t));
        int r;

        if (!group_of)
                return -ENOMEM;
        memset(group_of, 0xff, (n_shapes + 1) * sizeof(uint32_t));
        f->groups = calloc(n_shapes + 1, sizeof(NegoGroup));
        if (!f->groups)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_slots; i++) {
                const NegoSlot *slot = &c->slots[i];
                uint32_t shape = f->shape[i * NEGO_N_FAM + NEGO_F_JREQ];
                NegoGroup *g;
                int fixed;

                if (slot->skip || slot->partitionable || (slot->running && !c->s->consider_preemption))
                        continue;
                if (group_of[shape] == UINT32_MAX) {
                        group_of[shape] = (uint32_t) f->n_groups++;
                        f->groups[group_of[shape]].rep = (uint32_t) i;
                }
                g = &f->groups[group_of[shape]];
                fixed = nego_fast_start_fixed(f, i);
                if (fixed == 0) {
                        g->n_dead++;
                        continue;
                }
                r = slot->running ? push_slot(&g->running, &g->n_running, &g->cap_running, i)
                                  : push_slot(&g->idle, &g->n_idle, &g->cap_idle, i);
                if (r >= 0 && fixed < 0)
                        r = group_dep(f, g, i, slot->running);
                if (r < 0)
                        return r;
        }
        return 0;
}

int nego_fast_slot_groups(NegoCycle *c, size_t **ret_slots, size_t **ret_counts, size_t *ret_n) {
        NegoFast *f = c->fast;
        size_t n = 0, *slots, *counts;
        int r;

        if (!f->groups && (r = nego_groups_make(f)) < 0)
                return r;
        slots = calloc(f->n_groups + f->n_pslots + 1, sizeof(size_t));
        counts = calloc(f->n_groups + f->n_pslots + 1, sizeof(size_t));
        if (!slots || !counts) {
                free(slots);
                free(counts);
                return -ENOMEM;
        }
        for (size_t g = 0; g < f->n_groups; g++) {
                slots[n] = f->groups[g].rep;
                counts[n++] = f->groups[g].n_idle + f->groups[g].n_running + f->groups[g].n_dead;
        }
        for (size_t k = 0; k < f->n_pslots; k++) {
                slots[n] = f->pslots[k];
                counts[n++] = 1;
        }
        *ret_slots = slots;
        *ret_counts = counts;
        *ret_n = n;
        return 0;
}

/* ---- candidate orders and their sorted lists ---- */

static bool same_order(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        (void) cand;
        return memcmp(f->order_key[id], extra, sizeof(f->order_key[id])) == 0;
}

int nego_order_get(NegoFast *f, const uint32_t *cls, NegoOrder **ret) {
        uint32_t key[4] = { cls[NEGO_F_PRE], cls[NEGO_F_JRANK], cls[NEGO_F_POST], cls[NEGO_F_PRANK] }, id;
        uint64_t h = ((uint64_t) key[0] * 0x9E3779B97F4A7C15ull) ^ ((uint64_t) key[1] << 21) ^
                     ((uint64_t) key[2] << 42) ^ ((uint64_t) key[3] * 0xBF58476D1CE4E5B9ull);
        bool fresh;
        int r;

        if ((r = nego_intern(f, &f->order_table, h, 0, same_order, key, &id, &fresh)) < 0)
                return r;
        if (fresh) {
                NegoOrder *o = calloc(1, sizeof(NegoOrder));
                if (!o || !(o->lists = calloc(2 * f->n_groups + 1, sizeof(NegoList *))) ||
                    nego_grow((void **) &f->orders, &f->cap_orders, id + 1, sizeof(NegoOrder *)) < 0 ||
                    nego_grow((void **) &f->order_key, &f->cap_order_key, id + 1, sizeof(*f->order_key)) < 0) {
                        if (o)
                                free(o->lists);
                        free(o);
                        return -ENOMEM;
                }
                memcpy(f->order_key[id], key, sizeof(key));
                f->orders[id] = o;
                f->n_orders = id + 1;
        }
        *ret = f->orders[id];
        return 0;
}

static void list_free(NegoList *l) {
        if (!l)
                return;
        free(l->e);
        free(l->jump);
        free(l->run_mins);
        free(l->mins);
        free(l);
}

/* A running list's runs of equal key, and in each the least CurrentRank
 * per slot Rank shape. */
static int list_runs(NegoFast *f, NegoList *l) {
        uint32_t runs = 0;

        l->run_mins = malloc((l->n + 2) * sizeof(uint32_t));
        if (!l->run_mins)
                return -ENOMEM;
        for (uint32_t i = 0; i < l->n; i++) {
                const NegoSlot *slot = &f->c->slots[l->e[i].slot];
                uint32_t shape = f->shape[l->e[i].slot * NEGO_N_FAM + NEGO_F_SRANK], k;

                if (i == 0 || memcmp(l->e[i].key, l->e[i - 1].key, sizeof(l->e[i].key)) != 0)
                        l->run_mins[runs++] = l->n_mins;
                l->e[i].run = runs - 1;
                for (k = l->run_mins[runs - 1]; k < l->n_mins && l->mins[k].shape != shape; k++)
                        ;
                if (k == l->n_mins) {
                        if (nego_grow((void **) &l->mins, &l->cap_mins, l->n_mins + 1, sizeof(RankMin)) < 0)
                                return -ENOMEM;
                        l->mins[l->n_mins++] = (RankMin){ shape, l->e[i].slot, INFINITY };
                }
                if (slot->current_rank < l->mins[k].min_current) /* a NaN CurrentRank is never exceeded */
                        l->mins[k].min_current = slot->current_rank;
        }
        l->run_mins[runs] = l->n_mins;
        return 0;
}

/* Group g's idle or running slots, best first for job (of classes cls). */
int nego_order_list(NegoFast *f, NegoOrder *o, size_t g, bool running, const uint32_t *cls, const ClassAd *job,
                      NegoList **ret) {
        const NegoGroup *grp = &f->groups[g];
        NegoList **at = &o->lists[2 * g + running], *l;
        const uint32_t *members = running ? grp->running : grp->idle;
        uint32_t n = running ? grp->n_running : grp->n_idle;

        if (*at) {
                *ret = *at;
                return 0;
        }
        l = calloc(1, sizeof(NegoList));
        if (!l || !(l->e = malloc((n + 1) * sizeof(NegoEntry))) || !(l->jump = malloc((n + 1) * sizeof(uint32_t)))) {
                list_free(l);
                return -ENOMEM;
        }
        for (uint32_t i = 0; i < n; i++) {
                NegoEntry *e = &l->e[i];
                *e = (NegoEntry){ .slot = members[i] };
                e->key[0] = nego_fast_number(f, NEGO_F_PRE, cls, job, e->slot);
                e->key[1] = nego_fast_number(f, NEGO_F_JRANK, cls, job, e->slot);
                e->key[2] = nego_fast_number(f, NEGO_F_POST, cls, job, e->slot);
                if (running)
                        e->prank = nego_fast_number(f, NEGO_F_PRANK, cls, job, e->slot);
        }
        if (n > 1)
                qsort(l->e, n, sizeof(NegoEntry), entry_cmp);
        for (uint32_t i = 0; i < n; i++)
                l->jump[i] = i + 1;
        l->n = n;
        if (running && list_runs(f, l) < 0) {
                list_free(l);
                return -ENOMEM;
        }
        *ret = *at = l;
        return 0;
}

/* The first entry at or after i whose slot is not taken (n: none). */
uint32_t nego_list_find(const NegoSlot *slots, NegoList *l, uint32_t i) {
        uint32_t r = i;

        while (r < l->n && slots[l->e[r].slot].taken)
                r = l->jump[r];
        while (i < r && slots[l->e[i].slot].taken) {
                uint32_t next = l->jump[i];
                l->jump[i] = r;
                i = next;
        }
        return r;
}

void nego_lists_free(NegoFast *f) {
        for (uint32_t k = 0; k < f->n_orders; k++) {
                for (size_t g = 0; g < 2 * f->n_groups; g++)
                        list_free(f->orders[k]->lists[g]);
                free(f->orders[k]->lists);
                for (uint32_t kind = 0; f->orders[k]->ptrees && kind < f->n_kinds; kind++)
                        nego_ptree_free(f->orders[k]->ptrees[kind]);
                free(f->orders[k]->ptrees);
                free(f->orders[k]);
        }
        free(f->orders);
        free(f->order_key);
        for (size_t g = 0; f->groups && g < f->n_groups; g++) {
                free(f->groups[g].idle);
                free(f->groups[g].running);
                for (uint32_t k = 0; k < f->groups[g].n_deps; k++) {
                        free(f->groups[g].deps[k].idle);
                        free(f->groups[g].deps[k].running);
                }
                free(f->groups[g].deps);
        }
        free(f->groups);
}

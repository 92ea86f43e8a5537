/* SPDX-License-Identifier: Apache-2.0 */
/*
 * autocluster.c — a job's best slot through cached candidate lists
 * (fast-internal.h), HTCondor's NEGOTIATOR_MATCHLIST_CACHING made exact.
 *
 * Per submitter and autocluster, a stream: the groups whose shape the
 * job's Requirements accept (evaluated once per group), their shared
 * sorted lists (lists.c) merged by a heap; a slot's own Requirements,
 * evaluated per what it reads of the job; running slots of the best ranks
 * left in plain matching's order (by Rank before by Priority, then
 * PREEMPTION_RANK), scanned lazily in the lists' order when no job of the
 * stream can preempt by Rank; the partitionable slots from the order's
 * tree (pslot-tree.c), checked for fit as they are now, a search that
 * found none remembered until a p-slot changes. The next job of the
 * autocluster takes the best candidate left: the list is worked out once,
 * not once per job.
 *
 * A job that matches nothing gets the plain path's counts of why: per
 * group for what does not run a job, slot by slot for what does (its
 * reason to be kept), from the search for the p-slots.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fast-internal.h"
#include "pslot-tree.h"

typedef struct Cursor {
        NegoList *l;
        uint32_t pos;
} Cursor;

typedef struct RunEntry {
        double prank;
        uint32_t slot;
        int reason;
} RunEntry;

enum { RUN_NONE, RUN_BUFFER, RUN_LAZY };

/* A candidate's place: plain matching's better() on (pre, rank, post,
 * reason, PREEMPTION_RANK), then the first slot seen. */
typedef struct Key {
        double k[3];
        int order; /* 2 - reason */
        double prank;
        uint32_t slot;
} Key;

struct NegoStream {
        uint64_t id;              /* submitter << 32 | autocluster */
        uint32_t cls[NEGO_N_CLS]; /* the job classes it was built for */
        bool built;
        NegoOrder *order;

        /* Static slots: the accepted groups' lists by their heads. */
        Cursor *heap[2]; /* idle, running */
        uint32_t n_heap[2], cap_heap[2];
        /* The running candidates of the best ranks left: all of them in a
         * heap (when some may preempt by Rank), or the next one found in
         * the lists' order, by PREEMPTION_RANK (when all are by Priority). */
        int run_mode;
        double run_key[3];
        RunEntry *run;
        uint32_t n_run, cap_run;
        RunEntry front;
        bool have_front;

        /* Partitionable slots. */
        uint8_t *kind_ok;          /* per kind: the jobs' Requirements may accept it */
        uint32_t cap_kind_ok;
        bool pslots;               /* some p-slot may fit */
        double need[NEGO_MAX_RES]; /* the least any p-slot would be asked for (c->res) */
        NegoAmt *amt;              /* what is asked of each consumption shape (when it is fixed) */
        uint32_t cap_amt;
        Key found;                 /* the best p-slot found so far in a search */
        bool pnone, pnone_bounded; /* a search found no p-slot (before pnone_bound) ... */
        uint64_t pnone_gen;        /* ... when the p-slots had changed that many times */
        Key pnone_bound;

        /* Why nothing matched. */
        size_t *kind_whole;  /* per kind, the p-slots the jobs fit as they were given (NULL: not counted) */
        uint8_t *pclass;     /* each p-slot's part in why (2 bits), as last counted */
        uint64_t pclass_gen; /* then: the p-slot changes so far */
        size_t pcount[4];    /* p-slots in each part */
        bool why_valid;      /* why, as it was when why_matches matches and why_pgen p-slot changes were made */
        size_t why_matches;
        uint64_t why_pgen;
        NegoWhy why;
};

static bool triple_before(const double *a, const double *b) {
        for (int i = 0; i < 3; i++)
                if (a[i] != b[i])
                        return a[i] > b[i];
        return false;
}

static bool key_before(const Key *a, const Key *b) {
        for (int i = 0; i < 3; i++)
                if (a->k[i] != b->k[i])
                        return a->k[i] > b->k[i];
        if (a->order != b->order)
                return a->order > b->order;
        if (a->prank != b->prank)
                return a->prank > b->prank;
        return a->slot < b->slot;
}

/* ---- the streams: heaps of cursors ---- */

static inline bool cursor_before(const Cursor *a, const Cursor *b) {
        return nego_entry_before(&a->l->e[a->pos], &b->l->e[b->pos]);
}

/* name(h, n, i): element i of binary heap h[n] sifted down, best first. */
#define DEFINE_HEAP_DOWN(name, type, before)                                  \
        static void name(type *h, uint32_t n, uint32_t i) {                  \
                for (;;) {                                                    \
                        uint32_t best = i, l = 2 * i + 1, r = l + 1;          \
                        type t;                                               \
                        if (l < n && before(&h[l], &h[best]))                 \
                                best = l;                                     \
                        if (r < n && before(&h[r], &h[best]))                 \
                                best = r;                                     \
                        if (best == i)                                        \
                                return;                                       \
                        t = h[i];                                             \
                        h[i] = h[best];                                       \
                        h[best] = t;                                          \
                        i = best;                                             \
                }                                                             \
        }

DEFINE_HEAP_DOWN(heap_down, Cursor, cursor_before)

static void heap_pop(Cursor *h, uint32_t *n) {
        h[0] = h[--*n];
        heap_down(h, *n, 0);
}

/* The head of heap k: the best slot not taken of the lists. */
static const NegoEntry *heap_peek(NegoFast *f, NegoStream *st, int k) {
        Cursor *h = st->heap[k];

        while (st->n_heap[k] > 0) {
                uint32_t p = nego_list_find(f->c->slots, h[0].l, h[0].pos);
                if (p >= h[0].l->n)
                        heap_pop(h, &st->n_heap[k]);
                else if (p != h[0].pos) {
                        h[0].pos = p;
                        heap_down(h, st->n_heap[k], 0);
                } else
                        return &h[0].l->e[p];
        }
        return NULL;
}

/* Past the head of heap k, for this stream only. */
static void heap_advance(NegoStream *st, int k) {
        Cursor *h = st->heap[k];

        if (++h[0].pos >= h[0].l->n)
                heap_pop(h, &st->n_heap[k]);
        else
                heap_down(h, st->n_heap[k], 0);
}

static bool same_stream_cls(const NegoStream *st, const uint32_t *cls) {
        return memcmp(st->cls, cls, sizeof(st->cls)) == 0;
}

static int stream_get(NegoFast *f, uint32_t sub, uint32_t ac, NegoStream **ret) {
        uint64_t id = ((uint64_t) sub << 32) | ac;
        size_t i;

        if (!f->streams || (f->n_streams + 1) * 2 > f->streams_mask + 1) {
                size_t size = f->streams_mask ? 2 * (f->streams_mask + 1) : 256;
                NegoStream **v = calloc(size, sizeof(NegoStream *));
                if (!v)
                        return -ENOMEM;
                for (size_t k = 0; f->streams && k <= f->streams_mask; k++)
                        if (f->streams[k]) {
                                for (i = (f->streams[k]->id * 0x9E3779B97F4A7C15ull >> 20) & (size - 1); v[i];
                                     i = (i + 1) & (size - 1))
                                        ;
                                v[i] = f->streams[k];
                        }
                free(f->streams);
                f->streams = v;
                f->streams_mask = size - 1;
        }
        for (i = (id * 0x9E3779B97F4A7C15ull >> 20) & f->streams_mask; f->streams[i]; i = (i + 1) & f->streams_mask)
                if (f->streams[i]->id == id) {
                        *ret = f->streams[i];
                        return 0;
                }
        if (!(f->streams[i] = calloc(1, sizeof(NegoStream))))
                return -ENOMEM;
        f->streams[i]->id = id;
        f->n_streams++;
        *ret = f->streams[i];
        return 0;
}

/* What the stream's jobs ask of each consumption shape of the p-slots
 * and the least of it (when what is asked does not depend on what is
 * left). */
static int stream_need(NegoFast *f, NegoStream *st, const ClassAd *job) {
        st->pslots = false;
        for (size_t r = 0; r < f->c->res.n; r++)
                st->need[r] = 0;
        if (f->n_pslots == 0)
                return 0;
        if (f->slot_dyn[NEGO_F_AMT]) {
                st->pslots = true;
                return 0;
        }
        if (nego_grow((void **) &st->amt, &st->cap_amt, f->n_amt_groups, sizeof(NegoAmt)) < 0)
                return -ENOMEM;
        for (uint32_t g = 0; g < f->n_amt_groups; g++) {
                NegoAmt *amt = &st->amt[g];
                nego_fast_amounts(f, st->cls, job, f->amt_reps[g], true, amt);
                if (!amt->ok)
                        continue;
                /* what is taken is what it wants or (the fallback) what it wrote */
                for (size_t r = 0; r < f->c->res.n; r++) {
                        double least = amt->ask.want[r];
                        if (amt->ask.fallback && amt->ask.unmodified[r] < least)
                                least = amt->ask.unmodified[r];
                        if (!st->pslots || least < st->need[r])
                                st->need[r] = least;
                }
                st->pslots = true;
        }
        return 0;
}

/* The kinds of p-slot the stream's jobs' Requirements may accept, whatever
 * is left of them (their resources vary). */
static int stream_kinds(NegoFast *f, NegoStream *st, const ClassAd *job) {
        const CaName *vary[NEGO_MAX_RES];

        for (size_t r = 0; r < f->c->res.n; r++)
                vary[r] = classad_name(f->c->res.name[r]);

        if (nego_grow((void **) &st->kind_ok, &st->cap_kind_ok, f->n_kinds + 1, 1) < 0)
                return -ENOMEM;
        for (uint32_t k = 0; k < f->n_kinds; k++)
                st->kind_ok[k] = classad_requirements_may_hold(job, f->c->in->slots[f->kind_reps[k]], vary, f->c->res.n,
                                                               NEGO_MODE);
        return 0;
}

static int stream_build(NegoFast *f, NegoStream *st, const uint32_t *cls, const ClassAd *job) {
        int r;

        memcpy(st->cls, cls, sizeof(st->cls));
        st->n_heap[0] = st->n_heap[1] = 0;
        st->run_mode = RUN_NONE;
        st->have_front = false;
        st->n_run = 0;
        st->why_valid = false;
        free(st->kind_whole);
        st->kind_whole = NULL;
        free(st->pclass);
        st->pclass = NULL;
        st->pnone = false;
        if ((r = nego_order_get(f, cls, &st->order)) < 0)
                return r;
        for (size_t g = 0; g < f->n_groups; g++) {
                const NegoGroup *grp = &f->groups[g];
                if (!nego_fast_job_ok(f, cls, job, grp->rep))
                        continue;
                for (int k = 0; k < 2; k++) {
                        NegoList *l;
                        if ((k ? grp->n_running : grp->n_idle) == 0)
                                continue;
                        if ((r = nego_order_list(f, st->order, g, k, cls, job, &l)) < 0)
                                return r;
                        if (nego_grow((void **) &st->heap[k], &st->cap_heap[k], st->n_heap[k] + 1, sizeof(Cursor)) < 0)
                                return -ENOMEM;
                        st->heap[k][st->n_heap[k]++] = (Cursor){ l, 0 };
                }
        }
        for (int k = 0; k < 2; k++)
                for (uint32_t i = st->n_heap[k] / 2; i-- > 0;)
                        heap_down(st->heap[k], st->n_heap[k], i);
        if ((r = stream_need(f, st, job)) < 0 || (r = stream_kinds(f, st, job)) < 0)
                return r;
        st->built = true;
        return 0;
}

/* ---- candidates ---- */

/* The best idle static slot whose Requirements accept the job. */
static const NegoEntry *idle_peek(NegoFast *f, NegoStream *st, const ClassAd *job) {
        const NegoEntry *e;

        while ((e = heap_peek(f, st, 0)) && !nego_fast_slot_ok(f, st->cls, job, e->slot))
                heap_advance(st, 0);
        return e;
}

typedef struct Preq {
        NegoFast *f;
        const uint32_t *cls;
        const ClassAd *job;
        size_t slot;
} Preq;

static bool fast_preq(void *userdata) {
        const Preq *x = userdata;

        return nego_fast_preq(x->f, x->cls, x->job, x->slot);
}

static int running_reason(NegoFast *f, const uint32_t *cls, const NegoSub *sub, const ClassAd *job, size_t slot,
                          NegoKeep *keep) {
        Preq x = { f, cls, job, slot };
        double rank = nego_fast_number(f, NEGO_F_SRANK, cls, job, slot);

        return nego_preemption_reason(f->c, &f->c->slots[slot], sub, rank, fast_preq, &x, keep);
}

/* Plain matching's order of running candidates of equal ranks: by Rank
 * before by Priority, then PREEMPTION_RANK, then the first slot. */
static bool run_before(const RunEntry *a, const RunEntry *b) {
        if (a->reason != b->reason)
                return a->reason < b->reason;
        if (a->prank != b->prank)
                return a->prank > b->prank;
        return a->slot < b->slot;
}

DEFINE_HEAP_DOWN(run_down, RunEntry, run_before)

/* Whether a job of the stream may preempt by Rank some running slot of
 * the run of key t: a slot Rank shape's RANK for it above the least
 * CurrentRank of that shape's slots in the run. */
static bool rank_possible(NegoFast *f, const NegoStream *st, const ClassAd *job, const double *t) {
        for (uint32_t k = 0; k < st->n_heap[1]; k++) {
                const Cursor *cur = &st->heap[1][k];
                const NegoEntry *e = &cur->l->e[cur->pos];
                if (memcmp(e->key, t, sizeof(e->key)) != 0)
                        continue;
                for (uint32_t m = cur->l->run_mins[e->run]; m < cur->l->run_mins[e->run + 1]; m++)
                        if (nego_fast_number(f, NEGO_F_SRANK, st->cls, job, cur->l->mins[m].rep) >
                            cur->l->mins[m].min_current)
                                return true;
        }
        return false;
}

/* The next running slot of the run of key t that is a candidate (*ret),
 * past those that are not; false at the end of the run. */
static bool run_next(NegoFast *f, NegoStream *st, const NegoSub *sub, const ClassAd *job, RunEntry *ret) {
        const NegoEntry *e;

        while ((e = heap_peek(f, st, 1)) && memcmp(e->key, st->run_key, sizeof(e->key)) == 0) {
                uint32_t slot = e->slot;
                double prank = e->prank;
                NegoKeep keep;
                int reason;

                heap_advance(st, 1);
                if (!nego_fast_slot_ok(f, st->cls, job, slot) ||
                    (reason = running_reason(f, st->cls, sub, job, slot, &keep)) < 0)
                        continue;
                *ret = (RunEntry){ .prank = prank, .slot = slot, .reason = reason };
                return true;
        }
        return false;
}

/* The best running candidate, if its ranks are better than bound's
 * (which, idle or partitionable, wins a tie of ranks). 1 and *ret, 0
 * none, or -errno. */
static int running_best(NegoFast *f, NegoStream *st, const NegoSub *sub, const ClassAd *job, const Key *bound,
                        Key *ret) {
        const NegoSlot *slots = f->c->slots;

        for (;;) {
                const NegoEntry *top;
                const RunEntry *e = NULL;

                if (st->run_mode == RUN_BUFFER) {
                        while (st->n_run > 0 && slots[st->run[0].slot].taken) {
                                st->run[0] = st->run[--st->n_run];
                                run_down(st->run, st->n_run, 0);
                        }
                        if (st->n_run > 0)
                                e = &st->run[0];
                } else if (st->run_mode == RUN_LAZY) {
                        if (st->have_front && slots[st->front.slot].taken)
                                st->have_front = false;
                        if (!st->have_front)
                                st->have_front = run_next(f, st, sub, job, &st->front);
                        if (st->have_front)
                                e = &st->front;
                }
                if (e) {
                        *ret = (Key){ { st->run_key[0], st->run_key[1], st->run_key[2] }, 2 - e->reason, e->prank,
                                      e->slot };
                        return 1;
                }
                /* the run is over: the next one, if it can beat bound */
                st->run_mode = RUN_NONE;
                top = heap_peek(f, st, 1);
                if (!top || (bound && !triple_before(top->key, bound->k)))
                        return 0;
                memcpy(st->run_key, top->key, sizeof(st->run_key));
                if (!rank_possible(f, st, job, st->run_key)) {
                        /* by Priority only: the lists' order is the candidates' */
                        st->run_mode = RUN_LAZY;
                        st->have_front = false;
                        continue;
                }
                st->n_run = 0;
                for (RunEntry x; run_next(f, st, sub, job, &x);) {
                        if (nego_grow((void **) &st->run, &st->cap_run, st->n_run + 1, sizeof(RunEntry)) < 0)
                                return -ENOMEM;
                        st->run[st->n_run++] = x;
                }
                for (uint32_t i = st->n_run / 2; i-- > 0;)
                        run_down(st->run, st->n_run, i);
                st->run_mode = RUN_BUFFER;
        }
}

/* ---- partitionable slots ---- */

static void pslot_key(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot, double *key) {
        key[0] = nego_fast_number(f, NEGO_F_PRE, cls, job, slot);
        key[1] = nego_fast_number(f, NEGO_F_JRANK, cls, job, slot);
        key[2] = nego_fast_number(f, NEGO_F_POST, cls, job, slot);
}

/* The order's trees, with the p-slots changed since they were last used
 * moved. */
static int ptree_sync(NegoFast *f, NegoStream *st, const ClassAd *job) {
        NegoOrder *o = st->order;
        double key[3];
        int r;

        if (!o->ptrees) {
                if (!(o->ptrees = calloc(f->n_kinds + 1, sizeof(NegoPTree *))))
                        return -ENOMEM;
                for (uint32_t k = 0; k < f->n_kinds; k++)
                        if ((r = nego_ptree_new(f->kind_size[k], f->c->res.n, &o->ptrees[k])) < 0)
                                return r;
                for (size_t k = 0; k < f->n_pslots; k++) {
                        const NegoPState *ps = &f->pstate[f->pslots[k]];
                        pslot_key(f, st->cls, job, f->pslots[k], key);
                        nego_ptree_set(o->ptrees[ps->kind], ps->kind_ordinal, (uint32_t) f->pslots[k], key, ps->rem);
                }
                o->psynced = f->n_plog;
                return 0;
        }
        for (; o->psynced < f->n_plog; o->psynced++) {
                size_t i = f->plog[o->psynced];
                const NegoPState *ps = &f->pstate[i];
                if (ps->gen != o->psynced + 1)
                        continue; /* changed again later */
                pslot_key(f, st->cls, job, i, key);
                nego_ptree_set(o->ptrees[ps->kind], ps->kind_ordinal, (uint32_t) i, key, ps->rem);
        }
        return 0;
}

/* Whether job fits what is left of p-slot i (or of it as given: whole);
 * what it takes in took[c->res.n]. */
static bool pslot_fits(NegoFast *f, const NegoStream *st, const ClassAd *job, size_t i, bool whole, double *took) {
        const double *have = whole ? f->pstate[i].orig : f->pstate[i].rem;
        NegoAmt amt;

        if (f->slot_dyn[NEGO_F_AMT])
                nego_fast_amounts(f, st->cls, job, i, whole, &amt);
        else
                amt = st->amt[f->pstate[i].amt_group];
        return amt.ok && nego_ask_take(f->c, &amt.ask, have, took);
}

typedef struct Visit {
        NegoFast *f;
        const NegoStream *st;
        const ClassAd *job;
        double took[NEGO_MAX_RES];         /* what the last p-slot that fits takes */
        size_t fit, job_false, slot_false; /* of the p-slots visited */
} Visit;

static bool pslot_visit(void *userdata, uint32_t slot) {
        Visit *v = userdata;

        if (!v->st->kind_ok[v->f->pstate[slot].kind])
                return false; /* the job's Requirements refuse the kind, whatever is left */
        if (!pslot_fits(v->f, v->st, v->job, slot, false, v->took))
                return false;
        v->fit++;
        if (!nego_fast_job_ok(v->f, v->st->cls, v->job, slot)) {
                v->job_false++;
                return false;
        }
        if (!nego_fast_slot_ok(v->f, v->st->cls, v->job, slot)) {
                v->slot_false++;
                return false;
        }
        return true;
}

/* The best p-slot before bound that is a candidate (*ret_slot, its amounts
 * in v->took). A search that found none is remembered: until the bound
 * gets looser, only the p-slots changed since can be candidates.
 * *ret_full: the whole tree was searched without a bound (v counts). */
static bool pslot_search(NegoFast *f, NegoStream *st, const Key *bound, Visit *v, uint32_t *ret_slot, bool *ret_full) {
        bool tighter = st->pnone && (!st->pnone_bounded || (bound && !key_before(&st->pnone_bound, bound)));
        bool found = false;

        *ret_full = false;
        if (tighter && f->pgen - st->pnone_gen <= f->n_pslots / 8 + 16) {
                Key best = {}, k = { .order = 2 };
                for (size_t e = st->pnone_gen; e < f->n_plog; e++) {
                        size_t i = f->plog[e];
                        if (f->pstate[i].gen != e + 1)
                                continue; /* changed again later */
                        k.slot = (uint32_t) i;
                        pslot_key(f, st->cls, v->job, i, k.k);
                        if ((bound && !key_before(&k, bound)) || (found && !key_before(&k, &best)) || !pslot_visit(v, k.slot))
                                continue;
                        best = k;
                        found = true;
                }
                if (!found) {
                        st->pnone_gen = f->pgen;
                        return false;
                }
                *ret_slot = best.slot;
                return pslot_fits(f, st, v->job, best.slot, false, v->took); /* its amounts */
        }
        /* each kind's tree the job's Requirements may accept, the bound
         * tightened by what is found */
        for (uint32_t kind = 0; kind < f->n_kinds; kind++) {
                Key k = { .order = 2 };
                if (!st->kind_ok[kind] ||
                    !nego_ptree_search(st->order->ptrees[kind], bound ? bound->k : NULL, bound ? bound->slot : 0,
                                       st->need, pslot_visit, v, &k.slot))
                        continue;
                pslot_key(f, st->cls, v->job, k.slot, k.k);
                *ret_slot = k.slot;
                st->found = k;
                bound = &st->found;
                found = true;
        }
        if (found && !pslot_fits(f, st, v->job, *ret_slot, false, v->took)) /* its amounts */
                return false;
        *ret_full = !bound;
        if (!found) {
                st->pnone = true;
                st->pnone_gen = f->pgen;
                st->pnone_bounded = bound != NULL;
                if (bound)
                        st->pnone_bound = *bound;
        }
        return found;
}

/* ---- why nothing matched ---- */

/* A p-slot's part in why, as plain matching counts it: what a job does
 * not fit as given is its Requirements' (PCLASS_JOB), what it fits as
 * given but not now is taken (PCLASS_TAKEN); of what it fits now, the job's
 * Requirements false, or the slot's. */
enum { PCLASS_JOB, PCLASS_TAKEN, PCLASS_SLOT, PCLASS_CANDIDATE };

static int pslot_class(NegoFast *f, const NegoStream *st, const ClassAd *job, size_t i) {
        double took[NEGO_MAX_RES];

        if (!pslot_fits(f, st, job, i, false, took))
                return pslot_fits(f, st, job, i, true, took) ? PCLASS_TAKEN : PCLASS_JOB;
        if (!st->kind_ok[f->pstate[i].kind] || !nego_fast_job_ok(f, st->cls, job, i))
                return PCLASS_JOB;
        return nego_fast_slot_ok(f, st->cls, job, i) ? PCLASS_CANDIDATE : PCLASS_SLOT;
}

static bool pslot_fits_now(void *userdata, uint32_t slot) {
        Visit *v = userdata;

        return pslot_fits(v->f, v->st, v->job, slot, false, v->took);
}

/* How many p-slots of each kind the stream's jobs fit as they were given. */
static int kinds_whole(NegoFast *f, NegoStream *st, const ClassAd *job) {
        double took[NEGO_MAX_RES];

        if (!(st->kind_whole = calloc(f->n_kinds + 1, sizeof(size_t))))
                return -ENOMEM;
        for (uint32_t k = 0; k < f->n_kinds; k++)
                if (f->kind_alike[k])
                        st->kind_whole[k] = pslot_fits(f, st, job, f->kind_reps[k], true, took) ? f->kind_size[k] : 0;
        for (size_t k = 0; k < f->n_pslots; k++) {
                const NegoPState *ps = &f->pstate[f->pslots[k]];
                if (!f->kind_alike[ps->kind])
                        st->kind_whole[ps->kind] += pslot_fits(f, st, job, f->pslots[k], true, took);
        }
        return 0;
}

/* The p-slots' part of why: from a search of the whole tree that found
 * none (when what a job takes does not depend on what is left, a p-slot
 * it fits now fits as given); else each p-slot's class (2 bits) as last
 * counted, counted anew for those changed since. */
static int why_pslots(NegoFast *f, NegoStream *st, const ClassAd *job, const Visit *v, NegoWhy *w) {
        int r;

        if (!f->slot_dyn[NEGO_F_AMT] && !st->pslots) { /* fits none, even as given */
                w->job_false += f->n_pslots;
                return 0;
        }
        if (v && !f->slot_dyn[NEGO_F_AMT]) {
                size_t n_ok = 0, whole_ok = 0;
                if (!st->kind_whole && (r = kinds_whole(f, st, job)) < 0)
                        return r;
                for (uint32_t k = 0; k < f->n_kinds; k++) {
                        Visit x = { f, st, job, { 0 }, 0, 0, 0 };
                        size_t now;
                        if (st->kind_ok[k]) {
                                n_ok += f->kind_size[k];
                                whole_ok += st->kind_whole[k];
                                continue;
                        }
                        /* refused whatever is left: taken when it fits as
                         * given but not now, else the job's Requirements' */
                        now = nego_ptree_count(st->order->ptrees[k], st->need, pslot_fits_now, &x);
                        w->taken += st->kind_whole[k] - now;
                        w->job_false += f->kind_size[k] - (st->kind_whole[k] - now);
                }
                w->job_false += n_ok - whole_ok + v->job_false;
                w->slot_false += v->slot_false;
                w->taken += whole_ok - v->fit;
                return 0;
        }
        if (!st->pclass || f->n_plog - st->pclass_gen > f->n_pslots) { /* counting all costs less */
                if (!st->pclass && !(st->pclass = malloc(f->n_pslots / 4 + 1)))
                        return -ENOMEM;
                memset(st->pclass, 0, f->n_pslots / 4 + 1);
                memset(st->pcount, 0, sizeof(st->pcount));
                for (size_t k = 0; k < f->n_pslots; k++) {
                        int x = pslot_class(f, st, job, f->pslots[k]);
                        st->pclass[k / 4] |= (uint8_t) (x << (2 * (k % 4)));
                        st->pcount[x]++;
                }
        } else
                for (size_t e = st->pclass_gen; e < f->n_plog; e++) {
                        size_t i = f->plog[e], k = f->pstate[i].ordinal;
                        int old = (st->pclass[k / 4] >> (2 * (k % 4))) & 3, x;
                        if (f->pstate[i].gen != e + 1)
                                continue; /* changed again later */
                        x = pslot_class(f, st, job, i);
                        st->pclass[k / 4] = (uint8_t) ((st->pclass[k / 4] & ~(3u << (2 * (k % 4)))) | (x << (2 * (k % 4))));
                        st->pcount[old]--;
                        st->pcount[x]++;
                }
        st->pclass_gen = f->n_plog;
        w->job_false += st->pcount[PCLASS_JOB];
        w->taken += st->pcount[PCLASS_TAKEN];
        w->slot_false += st->pcount[PCLASS_SLOT];
        return 0;
}

/* Of group g's slots that read set k of the job, how many, idle and
 * running, refuse the stream's jobs (the same for every job of the same
 * class for that set). */
static void dep_false(NegoFast *f, const NegoStream *st, size_t g, uint32_t k, const ClassAd *job, uint32_t *sf_idle,
                      uint32_t *sf_running) {
        const NegoDep *dep = &f->groups[g].deps[k];
        uint32_t cls = dep->d == NEGO_DEPS_ALL ? st->cls[NEGO_F_SREQ] : nego_fast_deps_class(f, st->cls[NEGO_CLS_AC], dep->d),
                 a = 0, b = 0;
        uint64_t key = ((uint64_t) g << 40) ^ ((uint64_t) k << 32) ^ cls, v;
        bool cache = g < (1u << 24) && k < 256 && cls < NEGO_FRESH_BASE;

        if (cache && nego_memo_get(&f->dep_false, key, &v)) {
                *sf_idle += (uint32_t) (v >> 32);
                *sf_running += (uint32_t) v;
                return;
        }
        for (uint32_t m = 0; m < dep->n_idle; m++)
                a += !nego_fast_slot_ok(f, st->cls, job, dep->idle[m]);
        for (uint32_t m = 0; m < dep->n_running; m++)
                b += !nego_fast_slot_ok(f, st->cls, job, dep->running[m]);
        if (cache)
                (void) nego_memo_put(&f->dep_false, key, ((uint64_t) a << 32) | b);
        *sf_idle += a;
        *sf_running += b;
}

static int why_nothing(NegoFast *f, NegoStream *st, const NegoSub *sub, const ClassAd *job, const Visit *v,
                       NegoWhy *w) {
        const NegoCycle *c = f->c;
        int r;

        if (st->why_valid && st->why_matches == c->n_matches && st->why_pgen == f->pgen) {
                *w = st->why;
                return 0;
        }
        *w = (NegoWhy){ .slots = f->considered };
        for (size_t g = 0; g < f->n_groups; g++) {
                const NegoGroup *grp = &f->groups[g];
                uint32_t sf_idle = 0, sf_running = 0;

                if (!nego_fast_job_ok(f, st->cls, job, grp->rep)) {
                        w->job_false += grp->n_idle + grp->n_running + grp->n_dead;
                        continue;
                }
                /* No candidate is left: every slot the job accepts refuses
                 * it, is taken, or runs a job it may not preempt. */
                for (uint32_t k = 0; k < grp->n_deps; k++)
                        dep_false(f, st, g, k, job, &sf_idle, &sf_running);
                w->slot_false += grp->n_dead + sf_idle + sf_running;
                w->taken += grp->n_idle - sf_idle;
                for (uint32_t m = 0; m < grp->n_running; m++) {
                        size_t i = grp->running[m];
                        NegoKeep keep = NEGO_KEEP_NONE;
                        if (!nego_fast_slot_ok(f, st->cls, job, i))
                                continue; /* counted above */
                        if (c->slots[i].taken)
                                w->taken++;
                        else if (running_reason(f, st->cls, sub, job, i, &keep) < 0)
                                w->kept[keep]++;
                }
        }
        if ((r = why_pslots(f, st, job, v, w)) < 0)
                return r;
        st->why = *w;
        st->why_valid = true;
        st->why_matches = c->n_matches;
        st->why_pgen = f->pgen;
        return 0;
}

/* ---- the best slot ---- */

int nego_fast_best_slot(NegoCycle *c, NegoSub *sub, NegoJob *job, NegoPick *ret) {
        NegoFast *f = c->fast;
        uint32_t cls[NEGO_N_CLS];
        NegoStream *st;
        const NegoEntry *idle;
        Key best, run;
        bool have = false, searched = false; /* the p-slots' trees searched whole: their counts in v */
        double took[NEGO_MAX_RES] = { 0 };
        Visit v;
        int r;

        if (f->eph_read)
                nego_job_ephemeral(c, sub, job->ad);
        if (!f->groups && (r = nego_groups_make(f)) < 0)
                return r;
        if ((r = stream_get(f, (uint32_t) sub->index, job->ac, &st)) < 0 ||
            (r = nego_fast_classes(f, job->ac, job->ad, cls)) < 0)
                return r;
        if (!st->built || !c->s->matchlist_caching || !same_stream_cls(st, cls))
                if ((r = stream_build(f, st, cls, job->ad)) < 0)
                        return r;

        v = (Visit){ f, st, job->ad, { 0 }, 0, 0, 0 };
        if ((idle = idle_peek(f, st, job->ad))) {
                best = (Key){ { idle->key[0], idle->key[1], idle->key[2] }, 2, 0, idle->slot };
                have = true;
        }
        if (st->pslots) {
                uint32_t slot;
                if ((r = ptree_sync(f, st, job->ad)) < 0)
                        return r;
                if (pslot_search(f, st, have ? &best : NULL, &v, &slot, &searched)) {
                        best = (Key){ .order = 2, .slot = slot };
                        pslot_key(f, st->cls, job->ad, slot, best.k);
                        memcpy(took, v.took, sizeof(took));
                        have = true;
                }
        }
        if ((r = running_best(f, st, sub, job->ad, have ? &best : NULL, &run)) < 0)
                return r;
        if (r > 0 && (!have || key_before(&run, &best))) {
                best = run;
                have = true;
        }
        if (!have) {
                if ((r = why_nothing(f, st, sub, job->ad, searched ? &v : NULL, &c->why)) < 0)
                        return r;
                return -ENOENT;
        }
        *ret = (NegoPick){ .slot = best.slot, .reason = 2 - best.order };
        if (c->slots[best.slot].partitionable)
                memcpy(ret->amounts, took, sizeof(ret->amounts));
        return 0;
}

void nego_fast_streams_free(NegoFast *f) {
        for (size_t i = 0; f->streams && i <= f->streams_mask; i++)
                if (f->streams[i]) {
                        free(f->streams[i]->heap[0]);
                        free(f->streams[i]->heap[1]);
                        free(f->streams[i]->run);
                        free(f->streams[i]->amt);
                        free(f->streams[i]->pclass);
                        free(f->streams[i]->kind_ok);
                        free(f->streams[i]->kind_whole);
                        free(f->streams[i]);
                }
        free(f->streams);
        nego_lists_free(f);
}

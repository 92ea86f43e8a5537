/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shape.c — the slots grouped by what is read of them, and each
 * evaluation memoised per (job class, slot shape) (fast-internal.h): the
 * slot shapes per family, what each slot's Requirements read of the job
 * (a desktop's START reads nothing of it: evaluated once), the memoised
 * evaluations, the p-slots' shapes anew as they are consumed.
 *
 * A partitionable slot's Cpus, Memory, Disk and custom resources are
 * rewritten as literals as it is consumed: its shapes are computed anew then. Slot ads come from
 * the pool's own agents: slots are grouped by the 64-bit fingerprints of
 * their attributes' trees.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fast-internal.h"

/* ---- slots: shapes per family ---- */

/* Which of the resources p-slots are carved by name is (-1: none). */
static int dyn_index(const NegoCycle *c, const CaName *name) {
        for (size_t i = 0; i < c->res.n; i++)
                if (classad_name(c->res.name[i]) == name)
                        return (int) i;
        return -1;
}

/* As set_amount writes it: an integer when it is one, else a real. */
static void literal_code(double v, uint64_t *ret_code, uint64_t *ret_tag) {
        if (v == floor(v) && v >= 0 && v < 9e15) {
                *ret_tag = 1;
                *ret_code = (uint64_t) (int64_t) v;
        } else {
                *ret_tag = 2;
                memcpy(ret_code, &v, sizeof(v));
        }
}

/* What stands for name of slot i in its shapes: the fingerprint of the
 * ad as given, or, for a p-slot's rewritten resources, the value. */
static uint64_t slot_code(const NegoFast *f, size_t i, uint32_t col, int dyn, uint64_t *ret_tag) {
        const NegoPState *ps = &f->pstate[i];
        const NegoSlot *slot = &f->c->slots[i];

        if (dyn >= 0 && slot->partitionable && ps->changed && nego_pslot_has(f->c, slot, (size_t) dyn)) {
                uint64_t code;
                literal_code(ps->rem[dyn], &code, ret_tag);
                return code;
        }
        *ret_tag = 0;
        return f->row[i * f->slot_all.n + col];
}

typedef struct ShapeCtx {
        NegoFamily fam;
        uint32_t n_res;
        uint64_t dyn[2 * NEGO_MAX_RES]; /* the candidate's codes, then tags (n_res of each) */
} ShapeCtx;

static bool same_shape(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        const ShapeCtx *x = extra;
        const NegoNames *names = &f->names[x->fam][NEGO_SIDE_SLOT];
        uint32_t rep = f->shape_table[x->fam].v[id].rep;
        const uint64_t *rep_dyn = f->shape_dyn + f->shape_table[x->fam].v[id].extra;

        for (uint32_t m = 0; m < names->n; m++) {
                int d = f->slot_res[x->fam][m];
                uint32_t n = x->n_res;
                if (d >= 0 && (rep_dyn[n + d] || x->dyn[n + d])) {
                        if (rep_dyn[n + d] != x->dyn[n + d] || rep_dyn[d] != x->dyn[d])
                                return false;
                } else if (f->row[(size_t) rep * f->slot_all.n + f->slot_col[x->fam][m]] !=
                           f->row[(size_t) cand * f->slot_all.n + f->slot_col[x->fam][m]])
                        return false;
        }
        return true;
}

static int slot_shape(NegoFast *f, NegoFamily fam, size_t i, uint32_t *ret) {
        const NegoNames *names = &f->names[fam][NEGO_SIDE_SLOT];
        const uint32_t *cols = f->slot_col[fam];
        const int *dyns = f->slot_res[fam];
        ShapeCtx x = { .fam = fam, .n_res = (uint32_t) f->c->res.n };
        uint64_t h = 0x736C6F74 + fam;
        bool fresh;
        int r;

        for (uint32_t m = 0; m < names->n; m++) {
                uint64_t tag, code = slot_code(f, i, cols[m], dyns[m], &tag);
                if (dyns[m] >= 0) {
                        x.dyn[dyns[m]] = tag ? code : 0;
                        x.dyn[x.n_res + dyns[m]] = tag;
                }
                h = nego_mix(nego_mix(h, code), tag);
        }
        if (nego_grow((void **) &f->shape_dyn, &f->cap_shape_dyn, f->n_shape_dyn + 2 * x.n_res, sizeof(uint64_t)) < 0)
                return -ENOMEM;
        r = nego_intern(f, &f->shape_table[fam], h, (uint32_t) i, same_shape, &x, ret, &fresh);
        if (r < 0 || !fresh)
                return r;
        f->shape_table[fam].v[*ret].extra = (uint32_t) f->n_shape_dyn;
        memcpy(f->shape_dyn + f->n_shape_dyn, x.dyn, 2 * x.n_res * sizeof(uint64_t));
        f->n_shape_dyn += 2 * x.n_res;
        return 0;
}

/* Where each family's slot-side names are in the rows, and which are
 * resources p-slots are carved by. */
static int columns(NegoFast *f) {
        for (int fam = 0; fam < NEGO_N_FAM; fam++) {
                const NegoNames *names = &f->names[fam][NEGO_SIDE_SLOT];
                f->slot_col[fam] = calloc(names->n + 1, sizeof(uint32_t));
                f->slot_res[fam] = calloc(names->n + 1, sizeof(int));
                if (!f->slot_col[fam] || !f->slot_res[fam])
                        return -ENOMEM;
                for (uint32_t m = 0; m < names->n; m++) {
                        for (uint32_t k = 0; k < f->slot_all.n; k++)
                                if (f->slot_all.v[k] == names->v[m])
                                        f->slot_col[fam][m] = k;
                        f->slot_res[fam][m] = dyn_index(f->c, names->v[m]);
                        if (f->slot_res[fam][m] >= 0)
                                f->slot_dyn[fam] = true;
                }
        }
        return 0;
}

static int amt_groups(NegoFast *f);
static int kinds(NegoFast *f);

static int slot_shapes(NegoFast *f) {
        NegoCycle *c = f->c;
        int r;

        if ((r = columns(f)) < 0)
                return r;
        f->row = calloc(c->n_slots * f->slot_all.n + 1, sizeof(uint64_t));
        f->shape = calloc(c->n_slots * NEGO_N_FAM + 1, sizeof(uint32_t));
        f->pstate = calloc(c->n_slots + 1, sizeof(NegoPState));
        f->pslots = calloc(c->n_slots + 1, sizeof(size_t));
        if (!f->row || !f->shape || !f->pstate || !f->pslots)
                return -ENOMEM;
        for (size_t i = 0; i < c->n_slots; i++) {
                const NegoSlot *slot = &c->slots[i];
                if (slot->skip || (slot->running && !c->s->consider_preemption))
                        continue;
                f->considered++;
                for (uint32_t k = 0; k < f->slot_all.n; k++)
                        f->row[i * f->slot_all.n + k] = classad_attr_fingerprint(c->in->slots[i], f->slot_all.v[k]);
                for (int fam = 0; fam < NEGO_N_FAM; fam++)
                        if ((r = slot_shape(f, (NegoFamily) fam, i, &f->shape[i * NEGO_N_FAM + fam])) < 0)
                                return r;
                if (slot->partitionable) {
                        NegoPState *ps = &f->pstate[i];
                        for (size_t k = 0; k < c->res.n; k++)
                                ps->rem[k] = ps->orig[k] = nego_slot_amount(c, slot->ad, k);
                        ps->amt_orig = f->shape[i * NEGO_N_FAM + NEGO_F_AMT];
                        ps->ordinal = (uint32_t) f->n_pslots;
                        f->pslots[f->n_pslots++] = i;
                }
        }
        r = amt_groups(f);
        return r < 0 ? r : kinds(f);
}

/* The p-slots' kinds: alike as given for the jobs' Requirements (what
 * tells them apart stays as they are consumed, but Cpus, Memory, Disk). */
static int kinds(NegoFast *f) {
        uint32_t n_shapes = f->shape_table[NEGO_F_JREQ].n;
        _cleanup_free_ uint32_t *kind_of = malloc((n_shapes + 1) * sizeof(uint32_t));

        f->kind_reps = calloc(f->n_pslots + 1, sizeof(size_t));
        f->kind_size = calloc(f->n_pslots + 1, sizeof(uint32_t));
        f->kind_alike = calloc(f->n_pslots + 1, sizeof(bool));
        if (!kind_of || !f->kind_reps || !f->kind_size || !f->kind_alike)
                return -ENOMEM;
        memset(kind_of, 0xff, (n_shapes + 1) * sizeof(uint32_t));
        for (size_t k = 0; k < f->n_pslots; k++) {
                size_t i = f->pslots[k];
                NegoPState *ps = &f->pstate[i];
                uint32_t shape = f->shape[i * NEGO_N_FAM + NEGO_F_JREQ];
                if (kind_of[shape] == UINT32_MAX) {
                        kind_of[shape] = f->n_kinds;
                        f->kind_alike[f->n_kinds] = true;
                        f->kind_reps[f->n_kinds++] = i;
                }
                ps->kind = kind_of[shape];
                /* alike: a job fits all or none of them as given */
                if (memcmp(ps->orig, f->pstate[f->kind_reps[ps->kind]].orig, sizeof(ps->orig)) != 0 ||
                    ps->amt_group != f->pstate[f->kind_reps[ps->kind]].amt_group)
                        f->kind_alike[ps->kind] = false;
                ps->kind_ordinal = f->kind_size[ps->kind]++;
        }
        return 0;
}

/* The distinct consumption shapes of the p-slots as given. */
static int amt_groups(NegoFast *f) {
        uint32_t n_shapes = f->shape_table[NEGO_F_AMT].n;
        _cleanup_free_ uint32_t *group_of = malloc((n_shapes + 1) * sizeof(uint32_t));

        f->amt_reps = calloc(f->n_pslots + 1, sizeof(size_t));
        if (!group_of || !f->amt_reps)
                return -ENOMEM;
        memset(group_of, 0xff, (n_shapes + 1) * sizeof(uint32_t));
        for (size_t k = 0; k < f->n_pslots; k++) {
                NegoPState *ps = &f->pstate[f->pslots[k]];
                if (group_of[ps->amt_orig] == UINT32_MAX) {
                        group_of[ps->amt_orig] = f->n_amt_groups;
                        f->amt_reps[f->n_amt_groups++] = f->pslots[k];
                }
                ps->amt_group = group_of[ps->amt_orig];
        }
        return 0;
}

int nego_fast_pslot_update(NegoFast *f, size_t i) {
        NegoPState *ps = &f->pstate[i];
        int r;

        for (size_t k = 0; k < f->c->res.n; k++)
                ps->rem[k] = nego_slot_amount(f->c, f->c->slots[i].ad, k);
        ps->changed = true;
        ps->gen = ++f->pgen;
        if (nego_grow((void **) &f->plog, &f->cap_plog, f->n_plog + 1, sizeof(size_t)) < 0)
                return -ENOMEM;
        f->plog[f->n_plog++] = i;
        for (int fam = 0; fam < NEGO_N_FAM; fam++)
                if (f->slot_dyn[fam] && (r = slot_shape(f, (NegoFamily) fam, i, &f->shape[i * NEGO_N_FAM + fam])) < 0)
                        return r;
        return 0;
}

/* ---- memoised evaluations ---- */

static inline uint64_t memo_key(const NegoFast *f, NegoFamily fam, const uint32_t *cls, size_t slot) {
        return ((uint64_t) cls[fam] << 32) | f->shape[slot * NEGO_N_FAM + fam];
}

static inline bool cached(const NegoFast *f, NegoFamily fam) {
        return !(f->nocache_mask & (1u << fam));
}

bool nego_fast_job_ok(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot) {
        uint64_t key = memo_key(f, NEGO_F_JREQ, cls, slot), v;
        bool ok;

        if (nego_memo_get(&f->memo[NEGO_F_JREQ], key, &v))
                return v;
        if (f->c->over_budget)
                return false; /* the job's search stops: nothing more evaluated, nothing kept */
        f->c->stats.evaluations++;
        ok = nego_job_req(f->c, job, slot);
        if (f->c->over_budget)
                return false;
        (void) nego_memo_put(&f->memo[NEGO_F_JREQ], key, ok); /* a memo that cannot grow only costs time */
        return ok;
}

/* ---- what a slot's Requirements read of the job ---- */

typedef struct DepWalk {
        NegoFast *f;
        const ClassAd *slot;
        NegoNames present, absent; /* the slot's names looked up */
        NegoNames deps;            /* the job's */
        bool all, oom;
} DepWalk;

static void dep_ref(const CaName *name, CaRefKind kind, void *userdata);

/* Follows name in the slot: false when the slot has no such attribute. */
static bool dep_follow(DepWalk *w, const CaName *name) {
        for (uint32_t i = 0; i < w->present.n; i++)
                if (w->present.v[i] == name)
                        return true;
        for (uint32_t i = 0; i < w->absent.n; i++)
                if (w->absent.v[i] == name)
                        return false;
        if (nego_names_add(&w->present, name) < 0) {
                w->oom = true;
                return true;
        }
        if (classad_attr_refs(w->slot, name, dep_ref, w))
                return true;
        w->present.n--; /* absent: nothing was walked, name is still the last one */
        if (nego_names_add(&w->absent, name) < 0)
                w->oom = true;
        return false;
}

static void dep_job(DepWalk *w, const CaName *name) {
        for (uint32_t i = 0; i < w->f->job_expr.n; i++)
                if (w->f->job_expr.v[i] == name)
                        w->all = true; /* the job's expression reads on */
        if (nego_is_ephemeral(name))
                w->all = true; /* written anew before each job */
        if (nego_names_add(&w->deps, name) < 0)
                w->oom = true;
}

static void dep_ref(const CaName *name, CaRefKind kind, void *userdata) {
        DepWalk *w = userdata;

        switch (kind) {
        case CA_REF_OPAQUE:
                w->all = true;
                break;
        case CA_REF_TARGET:
                dep_job(w, name);
                break;
        case CA_REF_MY:
                (void) dep_follow(w, name);
                break;
        case CA_REF_PLAIN:
                if (!dep_follow(w, name))
                        dep_job(w, name); /* in old mode, TARGET's */
                break;
        }
}

static int by_ptr(const void *x, const void *y) {
        uintptr_t a = (uintptr_t) *(const CaName *const *) x, b = (uintptr_t) *(const CaName *const *) y;

        return a < b ? -1 : a > b;
}

/* The set of job attributes slot ad's Requirements read, interned. */
static int deps_of(NegoFast *f, const ClassAd *slot, uint32_t *ret) {
        DepWalk w = { .f = f, .slot = slot };
        int r = 0;

        (void) dep_follow(&w, classad_name("Requirements"));
        if (w.oom) {
                r = -ENOMEM;
                goto done;
        }
        if (w.all) {
                *ret = NEGO_DEPS_ALL;
                goto done;
        }
        if (w.deps.n > 1)
                qsort(w.deps.v, w.deps.n, sizeof(*w.deps.v), by_ptr);
        for (uint32_t d = 1; d < f->n_deps; d++)
                if (f->deps[d].n == w.deps.n && (w.deps.n == 0 || memcmp(f->deps[d].v, w.deps.v, w.deps.n * sizeof(*w.deps.v)) == 0)) {
                        *ret = d;
                        goto done;
                }
        if ((r = nego_grow((void **) &f->deps, &f->cap_deps, f->n_deps + 2, sizeof(NegoNames))) < 0)
                goto done;
        if (f->n_deps == 0)
                f->deps[f->n_deps++] = (NegoNames){}; /* NEGO_DEPS_ALL */
        f->deps[f->n_deps] = w.deps;
        w.deps = (NegoNames){};
        *ret = f->n_deps++;
done:
        free(w.present.v);
        free(w.absent.v);
        free(w.deps.v);
        return r;
}

uint32_t nego_fast_slot_deps(NegoFast *f, size_t slot) {
        uint32_t shape = f->shape[slot * NEGO_N_FAM + NEGO_F_SREQ], d;
        uint32_t n = f->shape_table[NEGO_F_SREQ].n;

        if (shape >= f->cap_sreq_deps) {
                uint32_t old = f->cap_sreq_deps;
                if (nego_grow((void **) &f->sreq_deps, &f->cap_sreq_deps, n, sizeof(uint32_t)) < 0)
                        return NEGO_DEPS_ALL;
                memset(f->sreq_deps + old, 0xff, (f->cap_sreq_deps - old) * sizeof(uint32_t));
        }
        if (f->sreq_deps[shape] == UINT32_MAX) {
                /* the shape's first slot: its tree is the shape's (the
                 * rewritten Cpus/Memory/Disk of a p-slot are literals) */
                if (deps_of(f, f->c->in->slots[f->shape_table[NEGO_F_SREQ].v[shape].rep], &d) < 0)
                        return NEGO_DEPS_ALL;
                f->sreq_deps[shape] = d;
        }
        return f->sreq_deps[shape];
}

typedef struct DepKey {
        uint32_t d;
        const ClassAd *job;
} DepKey;

static bool same_dep(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        const DepKey *k = extra;
        uint32_t d = f->dep_table.v[id].extra;

        (void) cand;
        return d == k->d && nego_jobs_same(&f->deps[d], f->jobs[f->acs[f->dep_table.v[id].rep].rep], k->job);
}

uint32_t nego_fast_deps_class(NegoFast *f, uint32_t ac, uint32_t d) {
        uint64_t key = ((uint64_t) ac << 32) | d, v;
        DepKey k = { d, f->jobs[f->acs[ac].rep] };
        uint32_t id;
        bool fresh;

        if (nego_memo_get(&f->dep_of_ac, key, &v))
                return (uint32_t) v;
        if (nego_intern(f, &f->dep_table, nego_mix(nego_job_hash(&f->deps[d], k.job), d), ac, same_dep, &k, &id, &fresh) < 0)
                return NEGO_FRESH_BASE + f->fresh++; /* not shared: only time lost */
        if (fresh)
                f->dep_table.v[id].extra = d;
        (void) nego_memo_put(&f->dep_of_ac, key, id);
        return id;
}

bool nego_fast_slot_ok(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot) {
        uint32_t d = nego_fast_slot_deps(f, slot);
        NegoMemo *m = d == NEGO_DEPS_ALL ? &f->memo[NEGO_F_SREQ] : &f->memo_dep;
        uint64_t key = d == NEGO_DEPS_ALL ? memo_key(f, NEGO_F_SREQ, cls, slot)
                                          : ((uint64_t) nego_fast_deps_class(f, cls[NEGO_CLS_AC], d) << 32) |
                                                    f->shape[slot * NEGO_N_FAM + NEGO_F_SREQ],
                 v;
        bool ok;

        if (nego_memo_get(m, key, &v))
                return v;
        f->c->stats.evaluations++;
        ok = classad_requirements_met(f->c->slots[slot].ad, job, NEGO_MODE);
        (void) nego_memo_put(m, key, ok);
        return ok;
}

int nego_fast_start_fixed(NegoFast *f, size_t slot) {
        uint32_t d = nego_fast_slot_deps(f, slot), cls[NEGO_N_CLS] = {};

        if (d == NEGO_DEPS_ALL || f->deps[d].n > 0 || f->n_acs == 0)
                return -1;
        return nego_fast_slot_ok(f, cls, f->no_job, slot); /* autocluster 0 stands for any */
}

bool nego_fast_preq(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot) {
        uint64_t key = memo_key(f, NEGO_F_PREQ, cls, slot), v;
        bool ok;

        if (cached(f, NEGO_F_PREQ) && nego_memo_get(&f->memo[NEGO_F_PREQ], key, &v))
                return v;
        ok = nego_eval_true(f->c->s->preemption_req, f->c->slots[slot].ad, job);
        if (cached(f, NEGO_F_PREQ))
                (void) nego_memo_put(&f->memo[NEGO_F_PREQ], key, ok);
        return ok;
}

double nego_fast_number(NegoFast *f, NegoFamily fam, const uint32_t *cls, const ClassAd *job, size_t slot) {
        const ClassAd *ad = f->c->slots[slot].ad;
        uint64_t key = memo_key(f, fam, cls, slot), v;
        double d;

        if (cached(f, fam) && nego_memo_get(&f->memo[fam], key, &v)) {
                memcpy(&d, &v, sizeof(d));
                return d;
        }
        switch (fam) {
        case NEGO_F_JRANK:
                d = nego_job_rank(f->c, job, slot);
                if (f->c->over_budget)
                        return 0; /* not kept: the job's search stops */
                break;
        case NEGO_F_SRANK:
                d = classad_rank(ad, job, NEGO_MODE);
                break;
        case NEGO_F_PRE:
                d = nego_eval_number(f->c->s->pre_job_rank, ad, job, 0);
                break;
        case NEGO_F_POST:
                d = nego_eval_number(f->c->s->post_job_rank, ad, job, 0);
                break;
        default:
                d = nego_eval_number(f->c->s->preemption_rank, ad, job, 0);
                break;
        }
        if (isnan(d))
                d = 0;
        if (cached(f, fam)) {
                memcpy(&v, &d, sizeof(d));
                (void) nego_memo_put(&f->memo[fam], key, v);
        }
        return d;
}

void nego_fast_amounts(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot, bool whole, NegoAmt *ret) {
        uint32_t shape = whole ? f->pstate[slot].amt_orig : f->shape[slot * NEGO_N_FAM + NEGO_F_AMT];
        uint64_t key = ((uint64_t) cls[NEGO_F_AMT] << 32) | shape, v;

        if (cached(f, NEGO_F_AMT) && nego_memo_get(&f->memo[NEGO_F_AMT], key, &v)) {
                *ret = f->amts[v];
                return;
        }
        *ret = (NegoAmt){};
        ret->ok = nego_pslot_ask(f->c, slot, whole, job, &ret->ask);
        if (!cached(f, NEGO_F_AMT))
                return;
        if (f->n_amts == f->cap_amts) {
                size_t cap = f->cap_amts ? 2 * f->cap_amts : 256;
                NegoAmt *a = realloc(f->amts, cap * sizeof(NegoAmt));
                if (!a)
                        return; /* not memoised: only time lost */
                f->amts = a;
                f->cap_amts = cap;
        }
        f->amts[f->n_amts] = *ret;
        if (nego_memo_put(&f->memo[NEGO_F_AMT], key, f->n_amts) >= 0)
                f->n_amts++;
}

/* ---- the whole ---- */

bool nego_fast_reads_remote(const NegoFast *f) {
        static const char *const remote[] = { "RemoteUserPrio", "RemoteUserResourcesInUse", "RemoteGroup",
                                              "RemoteGroupResourcesInUse", "RemoteGroupQuota" };

        for (size_t k = 0; k < sizeof(remote) / sizeof(remote[0]); k++)
                for (uint32_t m = 0; m < f->slot_all.n; m++)
                        if (f->slot_all.v[m] == classad_name(remote[k]))
                                return true;
        return false;
}

bool nego_fast_reads_slot_prios(const NegoFast *f) {
        for (uint32_t m = 0; m < f->slot_all.n; m++) {
                const char *name = classad_name_str(f->slot_all.v[m]);
                size_t n = strlen(name), digits = strspn(name + 4, "0123456789");
                if (n > 4 + 15 && strncasecmp(name, "slot", 4) == 0 && digits > 0 &&
                    strcasecmp(name + 4 + digits, "_RemoteUserPrio") == 0)
                        return true;
        }
        return false;
}

int nego_fast_shapes(NegoFast *f) {
        int r;

        if ((r = classad_new(&f->no_job)) < 0 || (r = slot_shapes(f)) < 0)
                return r;
        f->c->stats.slot_shapes = f->shape_table[NEGO_F_JREQ].n;
        return 0;
}

void nego_fast_free(NegoFast *f) {
        if (!f)
                return;
        nego_fast_streams_free(f);
        for (int fam = 0; fam < NEGO_N_FAM; fam++) {
                free(f->names[fam][0].v);
                free(f->names[fam][1].v);
                nego_intern_free(&f->cls_table[fam]);
                nego_intern_free(&f->shape_table[fam]);
                free(f->slot_col[fam]);
                free(f->slot_res[fam]);
                free(f->memo[fam].keys);
                free(f->memo[fam].vals);
        }
        for (uint32_t i = 0; i < f->eph_table.n; i++)
                free(f->eph_text[i]);
        free(f->eph_text);
        nego_intern_free(&f->eph_table);
        nego_intern_free(&f->order_table);
        free(f->job_all.v);
        free(f->slot_all.v);
        free(f->jobs);
        free(f->acs);
        free(f->shape);
        free(f->row);
        free(f->shape_dyn);
        free(f->pstate);
        free(f->pslots);
        free(f->amt_reps);
        free(f->kind_reps);
        free(f->kind_size);
        free(f->kind_alike);
        free(f->plog);
        free(f->amts);
        free(f->job_expr.v);
        for (uint32_t d = 0; d < f->n_deps; d++)
                free(f->deps[d].v);
        free(f->deps);
        free(f->sreq_deps);
        nego_intern_free(&f->dep_table);
        free(f->dep_of_ac.keys);
        free(f->dep_of_ac.vals);
        free(f->memo_dep.keys);
        free(f->memo_dep.vals);
        free(f->dep_false.keys);
        free(f->dep_false.vals);
        classad_free(f->no_job);
        free(f);
}

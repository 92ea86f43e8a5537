/* SPDX-License-Identifier: Apache-2.0 */
/*
 * shape.c — what the expressions in play read, and the ads grouped by it
 * (fast-internal.h): the significant attributes of each evaluation family
 * on each side, the autoclusters (jobs agreeing on every job-side name),
 * the slot shapes per family, and each evaluation memoised per (job
 * class, slot shape).
 *
 * The names a family reads are a closure: an expression's references,
 * then, for each name found in an ad, the references of that ad's
 * expression for it, evaluated from that ad. A plain name is looked up
 * in MY and, in old mode, then in TARGET: it is taken to be read on both
 * sides. References the tree does not name (eval(), PARENT.x ...) make
 * the analysis give up: the cycle then runs the plain algorithm.
 *
 * What changes within the cycle:
 *   - the job's ephemeral attributes (SubmitterUserPrio,
 *     SubmitterUserResourcesInUse, SubmitterGroup,
 *     SubmitterGroupResourcesInUse, SubmitterGroupQuota), written before
 *     each job is matched: left out of the autoclusters; a family that
 *     reads them has, per job, a class that adds their values as the job
 *     has them then (so what is cached is keyed on the values, and stays
 *     exact whatever PREEMPTION_REQUIREMENTS_STABLE and
 *     PREEMPTION_RANK_STABLE say); with a _STABLE knob False and a
 *     ...ResourcesInUse or ...Quota read, that family is not cached at
 *     all, as HTCondor does;
 *   - a partitionable slot's Cpus, Memory and Disk, rewritten as
 *     literals as it is consumed: its shapes are computed anew then.
 *
 * Jobs are grouped only when their trees are the same (compared, not
 * just hashed): job ads are what users write. Slot ads come from the
 * pool's own agents: slots are grouped by the 64-bit fingerprints of
 * their attributes' trees.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fast-internal.h"

#define N_EPH 5
static const char *const eph_names[N_EPH] = {
        "SubmitterUserPrio",     "SubmitterGroup",      "SubmitterUserResourcesInUse",
        "SubmitterGroupResourcesInUse", "SubmitterGroupQuota",
};
#define EPH_VOLATILE 0x1c /* the last three change within the cycle */

static const char *const dyn_names[NEGO_N_RES] = { "Cpus", "Memory", "Disk" };

#define EFF_BASE 0x40000000u   /* ids of classes with ephemeral values */
#define FRESH_BASE NEGO_FRESH_BASE

int nego_grow(void **v, uint32_t *cap, size_t need, size_t elem) {
        size_t cap2;
        void *p;

        if (need <= *cap)
                return 0;
        cap2 = *cap ? 2 * (size_t) *cap : 16;
        while (cap2 < need)
                cap2 *= 2;
        if (cap2 > UINT32_MAX / 2 || !(p = realloc(*v, cap2 * elem)))
                return -ENOMEM;
        *v = p;
        *cap = (uint32_t) cap2;
        return 0;
}

static inline uint64_t mix(uint64_t h, uint64_t v) {
        h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        return h ^ (h >> 31);
}

static inline uint32_t slot_of_ptr(const void *p, uint32_t mask) {
        return (uint32_t) (((uintptr_t) p * 0x9E3779B97F4A7C15ull) >> 35) & mask;
}

static int names_add(NegoNames *s, const CaName *name) {
        for (uint32_t i = 0; i < s->n; i++)
                if (s->v[i] == name)
                        return 0;
        if (nego_grow((void **) &s->v, &s->cap, s->n + 1, sizeof(*s->v)) < 0)
                return -ENOMEM;
        s->v[s->n++] = name;
        return 1;
}

/* ---- interning ---- */

int nego_intern(NegoFast *f, NegoIntern *t, uint64_t hash, uint32_t cand, NegoSameFn same, const void *extra,
                uint32_t *ret_id, bool *ret_new) {
        uint32_t i;

        if (!t->index || (t->n + 1) * 2 > t->mask + 1) {
                uint32_t size = t->mask ? 2 * (t->mask + 1) : 64;
                uint32_t *index = calloc(size, sizeof(uint32_t));
                if (!index)
                        return -ENOMEM;
                for (uint32_t k = 0; k < t->n; k++) {
                        for (i = (uint32_t) t->v[k].hash & (size - 1); index[i]; i = (i + 1) & (size - 1))
                                ;
                        index[i] = k + 1;
                }
                free(t->index);
                t->index = index;
                t->mask = size - 1;
        }
        for (i = (uint32_t) hash & t->mask; t->index[i]; i = (i + 1) & t->mask) {
                uint32_t id = t->index[i] - 1;
                if (t->v[id].hash == hash && same(f, id, cand, extra)) {
                        *ret_id = id;
                        if (ret_new)
                                *ret_new = false;
                        return 0;
                }
        }
        if (nego_grow((void **) &t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
                return -ENOMEM;
        t->v[t->n] = (NegoInternRec){ .hash = hash, .rep = cand };
        t->index[i] = t->n + 1;
        *ret_id = t->n++;
        if (ret_new)
                *ret_new = true;
        return 0;
}

void nego_intern_free(NegoIntern *t) {
        free(t->v);
        free(t->index);
        *t = (NegoIntern){};
}

/* ---- memo ---- */

bool nego_memo_get(const NegoMemo *m, uint64_t key, uint64_t *ret) {
        if (!m->keys)
                return false;
        for (size_t i = mix(0, key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
                if (m->keys[i] == key + 1) {
                        *ret = m->vals[i];
                        return true;
                }
        return false;
}

int nego_memo_put(NegoMemo *m, uint64_t key, uint64_t val) {
        size_t i;

        if (!m->keys || (m->n + 1) * 2 > m->mask + 1) {
                size_t size = m->mask ? 2 * (m->mask + 1) : 1024;
                uint64_t *keys = calloc(size, sizeof(uint64_t)), *vals = malloc(size * sizeof(uint64_t));
                if (!keys || !vals) {
                        free(keys);
                        free(vals);
                        return -ENOMEM;
                }
                for (size_t k = 0; m->keys && k <= m->mask; k++)
                        if (m->keys[k]) {
                                for (i = mix(0, m->keys[k] - 1) & (size - 1); keys[i]; i = (i + 1) & (size - 1))
                                        ;
                                keys[i] = m->keys[k];
                                vals[i] = m->vals[k];
                        }
                free(m->keys);
                free(m->vals);
                m->keys = keys;
                m->vals = vals;
                m->mask = size - 1;
        }
        for (i = mix(0, key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
                if (m->keys[i] == key + 1)
                        break;
        if (!m->keys[i])
                m->n++;
        m->keys[i] = key + 1;
        m->vals[i] = val;
        return 0;
}

/* ---- the analysis: which names each family reads ---- */

typedef struct Ref {
        const CaName *name;
        uint8_t kind;
} Ref;

typedef struct NameInfo {
        const CaName *name;
        bool scanned, pending;
        bool missing; /* some ad of its side has no such attribute */
        Ref *refs;    /* of its expressions in the ads of its side */
        uint32_t n_refs, cap_refs;
} NameInfo;

typedef struct NameMap {
        NameInfo *v;
        uint32_t n, cap;
        uint32_t *index;
        uint32_t mask;
} NameMap;

typedef struct Work {
        uint8_t fam, side;
        bool plain; /* a plain reference: TARGET's when MY has no such attribute */
        const CaName *name;
} Work;

typedef struct Analysis {
        NegoFast *f;
        NameMap info[2];
        NegoNames plain[NEGO_N_FAM][2]; /* plain references followed */
        Work *work, *deferred;
        uint32_t n_work, cap_work, n_deferred, cap_deferred;
        bool opaque, oom;
        NegoFamily fam; /* for the callbacks */
        int side;
        NameInfo *scanning;
        /* The jobs, refined into autoclusters as job-side names are found. */
        uint32_t *job_ac;
        NegoIntern acs;
        uint32_t *parent; /* per entry of acs: the autocluster it refined */
        uint32_t cap_parent;
        const NegoNames *refining;
} Analysis;

static NameInfo *info_get(Analysis *a, int side, const CaName *name) {
        NameMap *m = &a->info[side];
        uint32_t i;

        if (!m->index || (m->n + 1) * 2 > m->mask + 1) {
                uint32_t size = m->mask ? 2 * (m->mask + 1) : 64;
                uint32_t *index = calloc(size, sizeof(uint32_t));
                if (!index)
                        return NULL;
                for (uint32_t k = 0; k < m->n; k++) {
                        for (i = slot_of_ptr(m->v[k].name, size - 1); index[i]; i = (i + 1) & (size - 1))
                                ;
                        index[i] = k + 1;
                }
                free(m->index);
                m->index = index;
                m->mask = size - 1;
        }
        for (i = slot_of_ptr(name, m->mask); m->index[i]; i = (i + 1) & m->mask)
                if (m->v[m->index[i] - 1].name == name)
                        return &m->v[m->index[i] - 1];
        if (nego_grow((void **) &m->v, &m->cap, m->n + 1, sizeof(*m->v)) < 0)
                return NULL;
        m->v[m->n] = (NameInfo){ .name = name };
        m->index[i] = m->n + 1;
        return &m->v[m->n++];
}

static void push_work(Analysis *a, Work **v, uint32_t *n, uint32_t *cap, Work w) {
        if (nego_grow((void **) v, cap, *n + 1, sizeof(Work)) < 0) {
                a->oom = true;
                return;
        }
        (*v)[(*n)++] = w;
}

static void reach(Analysis *a, NegoFamily fam, int side, const CaName *name) {
        int r = names_add(&a->f->names[fam][side], name);

        if (r < 0)
                a->oom = true;
        else if (r > 0)
                push_work(a, &a->work, &a->n_work, &a->cap_work, (Work){ fam, (uint8_t) side, false, name });
}

/* A reference read with MY on `side`. */
static void edge(Analysis *a, NegoFamily fam, int side, const CaName *name, CaRefKind kind) {
        int r;

        switch (kind) {
        case CA_REF_PLAIN:
                reach(a, fam, side, name);
                /* in old mode TARGET's when MY has none: known once the
                 * ads of side are scanned for it */
                if ((r = names_add(&a->plain[fam][side], name)) < 0)
                        a->oom = true;
                else if (r > 0)
                        push_work(a, &a->work, &a->n_work, &a->cap_work, (Work){ fam, (uint8_t) side, true, name });
                break;
        case CA_REF_MY:
                reach(a, fam, side, name);
                break;
        case CA_REF_TARGET:
                reach(a, fam, !side, name);
                break;
        case CA_REF_OPAQUE:
                a->opaque = true;
                break;
        }
}

static void on_seed_ref(const CaName *name, CaRefKind kind, void *userdata) {
        Analysis *a = userdata;

        edge(a, a->fam, a->side, name, kind);
}

static void seed_expr(Analysis *a, NegoFamily fam, int side, const ClassAdExpr *e) {
        a->fam = fam;
        a->side = side;
        classad_expr_refs(e, on_seed_ref, a);
}

static void on_scan_ref(const CaName *name, CaRefKind kind, void *userdata) {
        Analysis *a = userdata;
        NameInfo *info = a->scanning;

        for (uint32_t i = 0; i < info->n_refs; i++)
                if (info->refs[i].name == name && info->refs[i].kind == kind)
                        return;
        if (nego_grow((void **) &info->refs, &info->cap_refs, info->n_refs + 1, sizeof(Ref)) < 0) {
                a->oom = true;
                return;
        }
        info->refs[info->n_refs++] = (Ref){ name, (uint8_t) kind };
}

/* The references of name's expression in every slot that may be matched. */
static void scan_slots(Analysis *a, NameInfo *info) {
        const NegoCycle *c = a->f->c;

        a->scanning = info;
        for (size_t i = 0; i < c->n_slots; i++)
                if (!c->slots[i].skip && !classad_attr_refs(c->in->slots[i], info->name, on_scan_ref, a))
                        info->missing = true;
        info->scanned = true;
}

typedef struct Refine {
        Analysis *a;
        uint32_t parent;
} Refine;

static bool same_refined(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        const Refine *x = extra;
        const ClassAd *rep = f->jobs[x->a->acs.v[id].rep];

        if (x->a->parent[id] != x->parent)
                return false;
        for (uint32_t k = 0; k < x->a->refining->n; k++)
                if (!classad_attr_same(rep, f->jobs[cand], x->a->refining->v[k]))
                        return false;
        return true;
}

/* The jobs' autoclusters refined by the job-side names found since the
 * last pass (each job compared with its autocluster's first job), and
 * the references of those names' expressions in each autocluster. */
static int refine(Analysis *a) {
        NegoFast *f = a->f;
        NameMap *m = &a->info[NEGO_SIDE_JOB];
        NegoIntern old = a->acs;
        _cleanup_free_ uint32_t *old_parent = a->parent;
        NegoNames names = {};
        int r = 0;

        a->acs = (NegoIntern){};
        a->parent = NULL;
        a->cap_parent = 0;
        for (uint32_t k = 0; k < m->n; k++)
                if (m->v[k].pending && (r = names_add(&names, m->v[k].name)) < 0)
                        goto done;
        a->refining = &names;
        for (size_t j = 0; j < f->n_jobs; j++) {
                Refine x = { a, a->job_ac[j] };
                uint64_t h = mix(0x6A6F62, x.parent);
                uint32_t id;
                bool fresh;

                if (j > 0 && f->jobs[j] == f->jobs[j - 1]) { /* procs sharing their cluster's ad */
                        a->job_ac[j] = a->job_ac[j - 1];
                        continue;
                }
                for (uint32_t k = 0; k < names.n; k++)
                        h = mix(h, classad_attr_fingerprint(f->jobs[j], names.v[k]));
                if ((r = nego_intern(f, &a->acs, h, (uint32_t) j, same_refined, &x, &id, &fresh)) < 0)
                        goto done;
                if (fresh) {
                        if ((r = nego_grow((void **) &a->parent, &a->cap_parent, id + 1, sizeof(uint32_t))) < 0)
                                goto done;
                        a->parent[id] = x.parent;
                }
                a->job_ac[j] = id;
        }
        for (uint32_t k = 0; k < m->n; k++) {
                NameInfo *info = &m->v[k];
                if (!info->pending)
                        continue;
                a->scanning = info;
                for (uint32_t id = 0; id < a->acs.n; id++)
                        if (!classad_attr_refs(f->jobs[a->acs.v[id].rep], info->name, on_scan_ref, a))
                                info->missing = true;
                info->pending = false;
                info->scanned = true;
        }
done:
        free(names.v);
        nego_intern_free(&old);
        return r;
}

static void closure(Analysis *a) {
        for (;;) {
                while (a->n_work > 0 && !a->oom) {
                        Work w = a->work[--a->n_work];
                        NameInfo *info = info_get(a, w.side, w.name);

                        if (!info) {
                                a->oom = true;
                                return;
                        }
                        if (!info->scanned) {
                                if (w.side == NEGO_SIDE_SLOT)
                                        scan_slots(a, info);
                                else {
                                        info->pending = true;
                                        push_work(a, &a->deferred, &a->n_deferred, &a->cap_deferred, w);
                                        continue;
                                }
                        }
                        if (w.plain) {
                                if (info->missing)
                                        reach(a, (NegoFamily) w.fam, !w.side, w.name);
                                continue;
                        }
                        /* edge() only adds work: info and its refs stay put */
                        for (uint32_t i = 0; i < info->n_refs && !a->oom; i++)
                                edge(a, (NegoFamily) w.fam, w.side, info->refs[i].name, (CaRefKind) info->refs[i].kind);
                }
                if (a->oom || a->n_deferred == 0)
                        return;
                if (refine(a) < 0) {
                        a->oom = true;
                        return;
                }
                while (a->n_deferred > 0)
                        push_work(a, &a->work, &a->n_work, &a->cap_work, a->deferred[--a->n_deferred]);
        }
}

static void analysis_free(Analysis *a) {
        for (int s = 0; s < 2; s++) {
                for (uint32_t i = 0; i < a->info[s].n; i++)
                        free(a->info[s].v[i].refs);
                free(a->info[s].v);
                free(a->info[s].index);
                for (int fam = 0; fam < NEGO_N_FAM; fam++)
                        free(a->plain[fam][s].v);
        }
        free(a->work);
        free(a->deferred);
        free(a->job_ac);
        free(a->parent);
        nego_intern_free(&a->acs);
}

static bool is_eph(const CaName *name) {
        for (int k = 0; k < N_EPH; k++)
                if (classad_name(eph_names[k]) == name)
                        return true;
        return false;
}

/* ---- jobs: autoclusters and classes ---- */

static uint64_t job_hash(const NegoNames *names, const ClassAd *ad) {
        uint64_t h = 0x6A6F62;

        for (uint32_t i = 0; i < names->n; i++)
                h = mix(h, classad_attr_fingerprint(ad, names->v[i]));
        return h;
}

static bool jobs_same(const NegoNames *names, const ClassAd *a, const ClassAd *b) {
        for (uint32_t i = 0; i < names->n; i++)
                if (!classad_attr_same(a, b, names->v[i]))
                        return false;
        return true;
}

typedef struct ClsCtx {
        NegoFamily fam;
        const NegoNames *names;
} ClsCtx;

static bool same_cls(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        const ClsCtx *x = extra;

        return jobs_same(x->names, f->jobs[f->cls_table[x->fam].v[id].rep], f->jobs[cand]);
}

/* The autoclusters the analysis refined the jobs into, and each one's
 * class for every family. */
static int autoclusters(NegoFast *f, Analysis *a) {
        NegoNames fam_names[NEGO_N_FAM] = {};
        NegoCycle *c = f->c;
        size_t j = 0;
        int r = 0;

        for (int fam = 0; fam < NEGO_N_FAM && r >= 0; fam++)
                for (uint32_t i = 0; i < f->names[fam][NEGO_SIDE_JOB].n && r >= 0; i++) {
                        const CaName *name = f->names[fam][NEGO_SIDE_JOB].v[i];
                        for (int k = 0; k < N_EPH; k++)
                                if (classad_name(eph_names[k]) == name) {
                                        f->eph_mask[fam] |= (uint8_t) (1u << k);
                                        f->eph_read = true;
                                }
                        if (!is_eph(name) && (r = names_add(&fam_names[fam], name)) >= 0)
                                r = names_add(&f->job_all, name);
                }
        f->acs = calloc(a->acs.n + 1, sizeof(NegoAc));
        if (!f->acs)
                r = -ENOMEM;
        for (uint32_t id = 0; id < a->acs.n && r >= 0; id++) {
                NegoAc *ac = &f->acs[id];
                ac->rep = a->acs.v[id].rep;
                for (int fam = 0; fam < NEGO_N_FAM && r >= 0; fam++) {
                        ClsCtx x = { (NegoFamily) fam, &fam_names[fam] };
                        r = nego_intern(f, &f->cls_table[fam], job_hash(&fam_names[fam], f->jobs[ac->rep]), ac->rep,
                                        same_cls, &x, &ac->cls[fam], NULL);
                }
        }
        f->n_acs = a->acs.n;
        for (size_t s = 0; s < c->n_subs && r >= 0; s++)
                for (size_t k = 0; k < c->subs[s].n_jobs; k++, j++)
                        c->subs[s].jobs[k].ac = a->job_ac[j];
        for (int fam = 0; fam < NEGO_N_FAM; fam++)
                free(fam_names[fam].v);
        return r;
}

static int analyse(NegoFast *f) {
        static const char *const consumption[NEGO_N_RES] = { "ConsumptionCpus", "ConsumptionMemory", "ConsumptionDisk" };
        static const char *const requests[NEGO_N_RES] = { "RequestCpus", "RequestMemory", "RequestDisk" };
        const NegoSettings *s = f->c->s;
        Analysis a = { .f = f };
        int r = 0;

        a.job_ac = calloc(f->n_jobs + 1, sizeof(uint32_t));
        if (!a.job_ac) {
                r = -ENOMEM;
                goto done;
        }
        /* The ephemeral attributes are written before every evaluation:
         * what the ads hold of them is not read, and a job may lack some. */
        for (int k = 0; k < N_EPH; k++) {
                NameInfo *info = info_get(&a, NEGO_SIDE_JOB, classad_name(eph_names[k]));
                if (!info) {
                        r = -ENOMEM;
                        goto done;
                }
                info->scanned = info->missing = true;
        }
        reach(&a, NEGO_F_JREQ, NEGO_SIDE_JOB, classad_name("Requirements"));
        reach(&a, NEGO_F_JRANK, NEGO_SIDE_JOB, classad_name("Rank"));
        reach(&a, NEGO_F_SREQ, NEGO_SIDE_SLOT, classad_name("Requirements"));
        reach(&a, NEGO_F_SRANK, NEGO_SIDE_SLOT, classad_name("Rank"));
        seed_expr(&a, NEGO_F_PRE, NEGO_SIDE_SLOT, s->pre_job_rank);
        seed_expr(&a, NEGO_F_POST, NEGO_SIDE_SLOT, s->post_job_rank);
        seed_expr(&a, NEGO_F_PREQ, NEGO_SIDE_SLOT, s->preemption_req);
        seed_expr(&a, NEGO_F_PRANK, NEGO_SIDE_SLOT, s->preemption_rank);
        for (int i = 0; i < NEGO_N_RES; i++) {
                reach(&a, NEGO_F_AMT, NEGO_SIDE_SLOT, classad_name(consumption[i]));
                /* Request<Res> is read without a TARGET: a plain name of the job's */
                edge(&a, NEGO_F_AMT, NEGO_SIDE_JOB, classad_name(requests[i]), CA_REF_PLAIN);
                seed_expr(&a, NEGO_F_AMT, NEGO_SIDE_JOB, s->modify[i]);
        }
        closure(&a);
        /* what jobs define by expressions that read more */
        for (uint32_t k = 0; k < a.info[NEGO_SIDE_JOB].n && !a.oom; k++)
                if (a.info[NEGO_SIDE_JOB].v[k].n_refs > 0 && names_add(&f->job_expr, a.info[NEGO_SIDE_JOB].v[k].name) < 0)
                        a.oom = true;
        if (a.oom)
                r = -ENOMEM;
        else if (a.opaque)
                r = 1;
        else
                r = autoclusters(f, &a);
done:
        analysis_free(&a);
        return r;
}

/* The ephemeral attributes' text as the job has them now, for the
 * families that read them. */
typedef struct EphKey {
        uint32_t fam, base;
        const char *text;
} EphKey;

static bool same_eph(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        const EphKey *k = extra;
        const char *stored = f->eph_text[id];
        uint32_t fam, base;

        (void) cand;
        if (!stored)
                return false;
        memcpy(&fam, stored, 4);
        memcpy(&base, stored + 4, 4);
        return fam == k->fam && base == k->base && strcmp(stored + 8, k->text) == 0;
}

static uint64_t hash_str(uint64_t h, const char *s) {
        for (; *s; s++)
                h = (h ^ (unsigned char) *s) * 0x100000001B3ull;
        return h;
}

int nego_fast_classes(NegoFast *f, uint32_t ac_id, const ClassAd *job, uint32_t *ret) {
        const NegoAc *ac = &f->acs[ac_id];
        char *text[N_EPH] = {};
        int r = 0;

        ret[NEGO_CLS_AC] = ac_id;
        for (int fam = 0; fam < NEGO_N_FAM && r >= 0; fam++) {
                uint8_t mask = f->eph_mask[fam];
                char buf[1024];
                size_t len = 0;

                ret[fam] = ac->cls[fam];
                if (!mask)
                        continue;
                if (f->nocache_mask & (1u << fam)) {
                        ret[fam] = FRESH_BASE + f->fresh++;
                        continue;
                }
                for (int k = 0; k < N_EPH; k++)
                        if (mask & (1u << k)) {
                                if (!text[k] && !(text[k] = classad_unparse_attr(job, eph_names[k])) &&
                                    !(text[k] = strdup("")))
                                        r = -ENOMEM;
                                if (text[k] && len < sizeof(buf))
                                        len += (size_t) snprintf(buf + len, sizeof(buf) - len, "%s\n", text[k]);
                        }
                if (r < 0 || len >= sizeof(buf)) {
                        /* too long to key on: not cached */
                        ret[fam] = FRESH_BASE + f->fresh++;
                        continue;
                }
                EphKey key = { (uint32_t) fam, ac->cls[fam], buf };
                uint32_t id;
                bool fresh;
                if ((r = nego_grow((void **) &f->eph_text, &f->cap_eph_text, f->eph_table.n + 1, sizeof(char *))) < 0)
                        break;
                f->eph_text[f->eph_table.n] = NULL;
                r = nego_intern(f, &f->eph_table, mix(mix(fam, ac->cls[fam]), hash_str(0xCBF29CE484222325ull, buf)), 0,
                           same_eph, &key, &id, &fresh);
                if (r < 0)
                        break;
                if (fresh) {
                        char *stored = malloc(8 + len + 1);
                        if (!stored) {
                                r = -ENOMEM;
                                break;
                        }
                        memcpy(stored, &key.fam, 4);
                        memcpy(stored + 4, &key.base, 4);
                        memcpy(stored + 8, buf, len + 1);
                        f->eph_text[id] = stored;
                }
                ret[fam] = EFF_BASE + id;
        }
        for (int k = 0; k < N_EPH; k++)
                free(text[k]);
        return r;
}

/* ---- slots: shapes per family ---- */

static int dyn_index(const CaName *name) {
        for (int i = 0; i < NEGO_N_RES; i++)
                if (classad_name(dyn_names[i]) == name)
                        return i;
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
 * ad as given, or, for a p-slot's rewritten Cpus/Memory/Disk, the value. */
static uint64_t slot_code(const NegoFast *f, size_t i, uint32_t col, int dyn, uint64_t *ret_tag) {
        const NegoPState *ps = &f->pstate[i];

        if (dyn >= 0 && f->c->slots[i].partitionable && ps->changed) {
                uint64_t code;
                literal_code(ps->rem[dyn], &code, ret_tag);
                return code;
        }
        *ret_tag = 0;
        return f->row[i * f->slot_all.n + col];
}

typedef struct ShapeCtx {
        NegoFamily fam;
        uint64_t dyn[2 * NEGO_N_RES]; /* the candidate's codes and tags */
} ShapeCtx;

static bool same_shape(NegoFast *f, uint32_t id, uint32_t cand, const void *extra) {
        const ShapeCtx *x = extra;
        const NegoNames *names = &f->names[x->fam][NEGO_SIDE_SLOT];
        uint32_t rep = f->shape_table[x->fam].v[id].rep;
        const uint64_t *rep_dyn = f->shape_dyn + f->shape_table[x->fam].v[id].extra;

        for (uint32_t m = 0; m < names->n; m++) {
                int d = f->slot_res[x->fam][m];
                if (d >= 0 && (rep_dyn[NEGO_N_RES + d] || x->dyn[NEGO_N_RES + d])) {
                        if (rep_dyn[NEGO_N_RES + d] != x->dyn[NEGO_N_RES + d] || rep_dyn[d] != x->dyn[d])
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
        ShapeCtx x = { .fam = fam };
        uint64_t h = 0x736C6F74 + fam;
        bool fresh;
        int r;

        for (uint32_t m = 0; m < names->n; m++) {
                uint64_t tag, code = slot_code(f, i, cols[m], dyns[m], &tag);
                if (dyns[m] >= 0) {
                        x.dyn[dyns[m]] = tag ? code : 0;
                        x.dyn[NEGO_N_RES + dyns[m]] = tag;
                }
                h = mix(mix(h, code), tag);
        }
        if (f->n_shape_dyn + 2 * NEGO_N_RES > f->cap_shape_dyn) {
                size_t cap = f->cap_shape_dyn ? 2 * f->cap_shape_dyn : 1024;
                uint64_t *v = realloc(f->shape_dyn, cap * sizeof(uint64_t));
                if (!v)
                        return -ENOMEM;
                f->shape_dyn = v;
                f->cap_shape_dyn = cap;
        }
        r = nego_intern(f, &f->shape_table[fam], h, (uint32_t) i, same_shape, &x, ret, &fresh);
        if (r < 0 || !fresh)
                return r;
        f->shape_table[fam].v[*ret].extra = (uint32_t) f->n_shape_dyn;
        memcpy(f->shape_dyn + f->n_shape_dyn, x.dyn, sizeof(x.dyn));
        f->n_shape_dyn += 2 * NEGO_N_RES;
        return 0;
}

/* Where each family's slot-side names are in the rows, and which are
 * Cpus/Memory/Disk. */
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
                        f->slot_res[fam][m] = dyn_index(names->v[m]);
                        if (f->slot_res[fam][m] >= 0)
                                f->slot_dyn[fam] = true;
                }
        }
        return 0;
}

static int amt_groups(NegoFast *f);

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
                        for (int k = 0; k < NEGO_N_RES; k++)
                                ps->rem[k] = ps->orig[k] = nego_slot_amount(slot->ad, k);
                        ps->amt_orig = f->shape[i * NEGO_N_FAM + NEGO_F_AMT];
                        ps->ordinal = (uint32_t) f->n_pslots;
                        f->pslots[f->n_pslots++] = i;
                }
        }
        return amt_groups(f);
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

        for (int k = 0; k < NEGO_N_RES; k++)
                ps->rem[k] = nego_slot_amount(f->c->slots[i].ad, k);
        ps->changed = true;
        ps->gen = ++f->pgen;
        if (f->n_plog == f->cap_plog) {
                size_t cap = f->cap_plog ? 2 * f->cap_plog : 1024;
                size_t *v = realloc(f->plog, cap * sizeof(size_t));
                if (!v)
                        return -ENOMEM;
                f->plog = v;
                f->cap_plog = cap;
        }
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
        f->c->stats.evaluations++;
        ok = classad_requirements_met(job, f->c->slots[slot].ad, NEGO_MODE);
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
        if (names_add(&w->present, name) < 0) {
                w->oom = true;
                return true;
        }
        if (classad_attr_refs(w->slot, name, dep_ref, w))
                return true;
        w->present.n--; /* absent: nothing was walked, name is still the last one */
        if (names_add(&w->absent, name) < 0)
                w->oom = true;
        return false;
}

static void dep_job(DepWalk *w, const CaName *name) {
        for (uint32_t i = 0; i < w->f->job_expr.n; i++)
                if (w->f->job_expr.v[i] == name)
                        w->all = true; /* the job's expression reads on */
        if (is_eph(name))
                w->all = true; /* written anew before each job */
        if (names_add(&w->deps, name) < 0)
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
        return d == k->d && jobs_same(&f->deps[d], f->jobs[f->acs[f->dep_table.v[id].rep].rep], k->job);
}

uint32_t nego_fast_deps_class(NegoFast *f, uint32_t ac, uint32_t d) {
        uint64_t key = ((uint64_t) ac << 32) | d, v;
        DepKey k = { d, f->jobs[f->acs[ac].rep] };
        uint32_t id;
        bool fresh;

        if (nego_memo_get(&f->dep_of_ac, key, &v))
                return (uint32_t) v;
        if (nego_intern(f, &f->dep_table, mix(job_hash(&f->deps[d], k.job), d), ac, same_dep, &k, &id, &fresh) < 0)
                return FRESH_BASE + f->fresh++; /* not shared: only time lost */
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
                d = classad_rank(job, ad, NEGO_MODE);
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
        ret->ok = nego_consumption(f->c, whole ? f->c->in->slots[slot] : f->c->slots[slot].ad, job, ret->a);
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

int nego_fast_new(NegoCycle *c, NegoFast **ret) {
        NegoFast *f = calloc(1, sizeof(NegoFast));
        size_t n = 0;
        int r;

        if (!f)
                return -ENOMEM;
        f->c = c;
        for (size_t s = 0; s < c->n_subs; s++)
                n += c->subs[s].n_jobs;
        f->jobs = calloc(n + 1, sizeof(ClassAd *));
        if (!f->jobs) {
                r = -ENOMEM;
                goto fail;
        }
        for (size_t s = 0; s < c->n_subs; s++)
                for (size_t k = 0; k < c->subs[s].n_jobs; k++)
                        f->jobs[f->n_jobs++] = c->subs[s].jobs[k].ad;
        r = analyse(f); /* and the autoclusters */
        if (r != 0) {
                /* the plain path: every job and every slot its own */
                c->stats.autoclusters = f->n_jobs;
                for (size_t i = 0; i < c->n_slots; i++)
                        c->stats.slot_shapes += !c->slots[i].skip &&
                                                !(c->slots[i].running && !c->s->consider_preemption);
                goto fail;
        }
        for (int fam = NEGO_F_PREQ; fam <= NEGO_F_PRANK; fam++) {
                bool stable = fam == NEGO_F_PREQ ? c->s->preemption_req_stable : c->s->preemption_rank_stable;
                if (!stable && (f->eph_mask[fam] & EPH_VOLATILE))
                        f->nocache_mask |= (uint8_t) (1u << fam);
        }
        for (int fam = 0; fam < NEGO_N_FAM; fam++)
                for (uint32_t m = 0; m < f->names[fam][NEGO_SIDE_SLOT].n; m++)
                        if ((r = names_add(&f->slot_all, f->names[fam][NEGO_SIDE_SLOT].v[m])) < 0)
                                goto fail;
        c->stats.autoclusters = f->n_acs;
        *ret = f;
        return 0;
fail:
        nego_fast_free(f);
        *ret = NULL;
        return r < 0 ? r : 0;
}

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

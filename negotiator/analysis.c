/* SPDX-License-Identifier: Apache-2.0 */
/*
 * analysis.c — what the expressions in play read (fast-internal.h): the
 * significant attributes of each evaluation family on each side, the
 * jobs refined into autoclusters as the job-side names are found, and a
 * job's classes per family (with the ephemeral attributes it has then).
 *
 * The names a family reads are a closure: an expression's references,
 * then, for each name found in an ad, the references of that ad's
 * expression for it, evaluated from that ad. A plain name is looked up
 * in MY and, in old mode, then in TARGET: it is read on the other side
 * too when some ad of its side lacks it. References the tree does not
 * name (eval(), PARENT.x ...) make the analysis give up: the cycle then
 * runs the plain algorithm.
 *
 * The job's ephemeral attributes (SubmitterUserPrio,
 * SubmitterUserResourcesInUse, SubmitterGroup,
 * SubmitterGroupResourcesInUse, SubmitterGroupQuota) are written before
 * each job is matched, and some change within the cycle: they are left
 * out of the autoclusters; a family that reads them has, per job, a class
 * that adds their values as the job has them then (so what is cached is
 * keyed on the values, and stays exact whatever
 * PREEMPTION_REQUIREMENTS_STABLE and PREEMPTION_RANK_STABLE say); with a
 * _STABLE knob False and a ...ResourcesInUse or ...Quota read, that
 * family is not cached at all, as HTCondor does.
 *
 * Jobs are grouped only when their trees are the same (compared, not just
 * hashed): job ads are what users write.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fast-internal.h"

#define N_EPH 5
static const char *const eph_names[N_EPH] = {
        "SubmitterUserPrio",     "SubmitterGroup",      "SubmitterUserResourcesInUse",
        "SubmitterGroupResourcesInUse", "SubmitterGroupQuota",
};
#define EPH_VOLATILE 0x1c /* the last three change within the cycle */

#define EFF_BASE 0x40000000u /* ids of classes with ephemeral values */

static inline uint32_t slot_of_ptr(const void *p, uint32_t mask) {
        return (uint32_t) (((uintptr_t) p * 0x9E3779B97F4A7C15ull) >> 35) & mask;
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
        int r = nego_names_add(&a->f->names[fam][side], name);

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
                if ((r = nego_names_add(&a->plain[fam][side], name)) < 0)
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
        uint32_t *old_parent = a->parent; /* freed at the end: the new one is built beside it */
        NegoNames names = {};
        int r = 0;

        a->acs = (NegoIntern){};
        a->parent = NULL;
        a->cap_parent = 0;
        for (uint32_t k = 0; k < m->n; k++)
                if (m->v[k].pending && (r = nego_names_add(&names, m->v[k].name)) < 0)
                        goto done;
        a->refining = &names;
        for (size_t j = 0; j < f->n_jobs; j++) {
                Refine x = { a, a->job_ac[j] };
                uint64_t h = nego_mix(0x6A6F62, x.parent);
                uint32_t id;
                bool fresh;

                if (j > 0 && f->jobs[j] == f->jobs[j - 1]) { /* procs sharing their cluster's ad */
                        a->job_ac[j] = a->job_ac[j - 1];
                        continue;
                }
                for (uint32_t k = 0; k < names.n; k++)
                        h = nego_mix(h, classad_attr_fingerprint(f->jobs[j], names.v[k]));
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
        free(old_parent);
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

bool nego_is_ephemeral(const CaName *name) {
        for (int k = 0; k < N_EPH; k++)
                if (classad_name(eph_names[k]) == name)
                        return true;
        return false;
}

/* ---- jobs: autoclusters and classes ---- */

uint64_t nego_job_hash(const NegoNames *names, const ClassAd *ad) {
        uint64_t h = 0x6A6F62;

        for (uint32_t i = 0; i < names->n; i++)
                h = nego_mix(h, classad_attr_fingerprint(ad, names->v[i]));
        return h;
}

bool nego_jobs_same(const NegoNames *names, const ClassAd *a, const ClassAd *b) {
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

        return nego_jobs_same(x->names, f->jobs[f->cls_table[x->fam].v[id].rep], f->jobs[cand]);
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
                        if (!nego_is_ephemeral(name) && (r = nego_names_add(&fam_names[fam], name)) >= 0)
                                r = nego_names_add(&f->job_all, name);
                }
        f->acs = calloc(a->acs.n + 1, sizeof(NegoAc));
        if (!f->acs)
                r = -ENOMEM;
        for (uint32_t id = 0; id < a->acs.n && r >= 0; id++) {
                NegoAc *ac = &f->acs[id];
                ac->rep = a->acs.v[id].rep;
                for (int fam = 0; fam < NEGO_N_FAM && r >= 0; fam++) {
                        ClsCtx x = { (NegoFamily) fam, &fam_names[fam] };
                        r = nego_intern(f, &f->cls_table[fam], nego_job_hash(&fam_names[fam], f->jobs[ac->rep]), ac->rep,
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
        /* carve_ask(): which resources (MachineResources), their
         * Consumption<Res>, the job's Request<Res> and _condor_Request<Res>
         * (read as MY.name of the job), MODIFY_REQUEST_EXPR_* */
        reach(&a, NEGO_F_AMT, NEGO_SIDE_SLOT, classad_name("MachineResources"));
        for (size_t i = 0; i < f->c->res.n; i++) {
                char name[CARVE_NAME_MAX + 32];
                snprintf(name, sizeof(name), "Consumption%s", f->c->res.name[i]);
                reach(&a, NEGO_F_AMT, NEGO_SIDE_SLOT, classad_name(name));
                snprintf(name, sizeof(name), "Request%s", f->c->res.name[i]);
                reach(&a, NEGO_F_AMT, NEGO_SIDE_JOB, classad_name(name));
                snprintf(name, sizeof(name), "_condor_Request%s", f->c->res.name[i]);
                reach(&a, NEGO_F_AMT, NEGO_SIDE_JOB, classad_name(name));
                seed_expr(&a, NEGO_F_AMT, NEGO_SIDE_JOB, carve_policy_modify(s->carve, i));
        }
        closure(&a);
        /* what jobs define by expressions that read more */
        for (uint32_t k = 0; k < a.info[NEGO_SIDE_JOB].n && !a.oom; k++)
                if (a.info[NEGO_SIDE_JOB].v[k].n_refs > 0 && nego_names_add(&f->job_expr, a.info[NEGO_SIDE_JOB].v[k].name) < 0)
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
                        ret[fam] = NEGO_FRESH_BASE + f->fresh++;
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
                        ret[fam] = NEGO_FRESH_BASE + f->fresh++;
                        continue;
                }
                EphKey key = { (uint32_t) fam, ac->cls[fam], buf };
                uint32_t id;
                bool fresh;
                if ((r = nego_grow((void **) &f->eph_text, &f->cap_eph_text, f->eph_table.n + 1, sizeof(char *))) < 0)
                        break;
                f->eph_text[f->eph_table.n] = NULL;
                r = nego_intern(f, &f->eph_table, nego_mix(nego_mix(fam, ac->cls[fam]), hash_str(0xCBF29CE484222325ull, buf)), 0,
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
                        if ((r = nego_names_add(&f->slot_all, f->names[fam][NEGO_SIDE_SLOT].v[m])) < 0)
                                goto fail;
        c->stats.autoclusters = f->n_acs;
        *ret = f;
        return 0;
fail:
        nego_fast_free(f);
        *ret = NULL;
        return r < 0 ? r : 0;
}

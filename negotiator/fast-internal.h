/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fast-internal.h — the fast path of the matchmaker (NegoInput.plain
 * false): a cycle that costs work per distinct job shape and per distinct
 * slot shape, not per job times slot, and gives exactly the plain path's
 * matches and reasons.
 *
 * analysis.c finds what the expressions in play read (the significant
 * attributes) and groups the jobs into autoclusters; shape.c groups the
 * slots into shapes and evaluates each expression once per (job class,
 * slot shape) pair; lists.c sorts the static slots once per candidate
 * order; autocluster.c keeps, per submitter and autocluster, the
 * candidate list as a lazy merge of those lists (HTCondor's matchlist
 * caching) and says why a job matched nothing; pslot-tree.c orders the
 * partitionable slots, whose keys change as they are consumed; intern.c
 * holds the tables.
 *
 * Evaluation families: an expression evaluated with one ad as MY and the
 * other as TARGET. For each, the attribute names it may read in job ads
 * and in slot ads (following references through either ad, as old-mode
 * evaluation does). A job's class for a family is its projection on the
 * job-side names; a slot's shape, its projection on the slot-side names.
 */
#pragma once

#include "cycle-internal.h"

typedef enum NegoFamily {
        NEGO_F_JREQ,  /* the job's Requirements (MY job) */
        NEGO_F_JRANK, /* the job's Rank */
        NEGO_F_SREQ,  /* the slot's Requirements (MY slot) */
        NEGO_F_SRANK, /* the slot's Rank, against CurrentRank */
        NEGO_F_PRE,   /* NEGOTIATOR_PRE_JOB_RANK */
        NEGO_F_POST,  /* NEGOTIATOR_POST_JOB_RANK */
        NEGO_F_PREQ,  /* PREEMPTION_REQUIREMENTS */
        NEGO_F_PRANK, /* PREEMPTION_RANK */
        NEGO_F_AMT,   /* what a job takes of a partitionable slot: Consumption<Res>, MODIFY_REQUEST_EXPR_* */
        NEGO_N_FAM,
} NegoFamily;

enum { NEGO_SIDE_JOB, NEGO_SIDE_SLOT };

/* A job's classes: one per family, then its autocluster. */
#define NEGO_CLS_AC NEGO_N_FAM
#define NEGO_N_CLS (NEGO_N_FAM + 1)

typedef struct NegoNames {
        const CaName **v;
        uint32_t n, cap;
} NegoNames;

/* Interned projections: id = position; rep = the ad (job or slot number)
 * that first had it, to check a hash match against. */
typedef struct NegoInternRec {
        uint64_t hash;
        uint32_t rep;
        uint32_t extra; /* the user's: an offset into its own side table */
} NegoInternRec;

typedef struct NegoIntern {
        NegoInternRec *v;
        uint32_t n, cap;
        uint32_t *index; /* open addressing: 0 empty, else id + 1 */
        uint32_t mask;
} NegoIntern;

/* (job class, slot shape) -> a 64-bit result. */
typedef struct NegoMemo {
        uint64_t *keys; /* key + 1; 0 empty */
        uint64_t *vals;
        size_t mask, n;
} NegoMemo;

typedef struct NegoAmt {
        bool ok;      /* nego_pslot_ask() says the job can be told what it takes */
        CarveAsk ask; /* in c->res's order */
} NegoAmt;

typedef struct NegoAc {
        uint32_t rep; /* a job of it: index into NegoFast.jobs */
        uint32_t cls[NEGO_N_FAM];
} NegoAc;

/* What a slot's START reads of the job: a set of job attributes (that
 * every job defines without references), or all of the family's. */
#define NEGO_DEPS_ALL 0

/* A partitionable slot's state as the cycle consumes it. */
typedef struct NegoPState {
        double rem[NEGO_MAX_RES];  /* what is left (c->res: Cpus, Memory, Disk, custom ones) */
        double orig[NEGO_MAX_RES]; /* as given */
        uint32_t amt_orig;       /* NEGO_F_AMT shape of the ad as given */
        uint32_t amt_group;      /* which of the distinct amt_orig it has */
        uint32_t kind;           /* its kind: the p-slots alike as given for the jobs' Requirements */
        uint32_t kind_ordinal;   /* among its kind's */
        uint32_t ordinal;        /* among the partitionable slots */
        uint64_t gen;            /* the change that last touched it */
        bool changed;            /* its resources (c->res) rewritten as literals */
} NegoPState;

typedef struct NegoStream NegoStream;
typedef struct NegoOrder NegoOrder;
typedef struct NegoGroup NegoGroup;

typedef struct NegoFast {
        NegoCycle *c;

        /* ---- what is read (shape.c) ---- */
        NegoNames names[NEGO_N_FAM][2];
        NegoNames job_all, slot_all; /* unions (job side without the ephemeral names) */
        uint8_t eph_mask[NEGO_N_FAM];  /* which of the job's ephemeral attributes a family reads */
        bool eph_read;                 /* any: they are written into the job ad before matching */
        uint8_t nocache_mask;          /* families never memoised (unstable, reading what changes) */
        NegoNames job_expr;            /* job-side names some job defines by an expression with references */
        bool slot_dyn[NEGO_N_FAM];     /* reads a p-slot's Cpus/Memory/Disk (or custom resource) */

        /* ---- jobs ---- */
        ClassAd **jobs; /* every job of the input, submitter by submitter */
        size_t n_jobs;
        NegoAc *acs;
        uint32_t n_acs, cap_acs;
        NegoIntern cls_table[NEGO_N_FAM], eph_table;
        char **eph_text; /* per eph_table entry: family, base class, text */
        uint32_t cap_eph_text;
        uint32_t fresh;  /* ids for what is never cached */

        /* ---- slots ---- */
        uint32_t *shape;   /* [slot * NEGO_N_FAM + family] */
        uint64_t *row;     /* [slot * slot_all.n + k]: fingerprints of the ads as given */
        NegoIntern shape_table[NEGO_N_FAM];
        uint32_t *slot_col[NEGO_N_FAM]; /* each family's slot-side names: their column in row */
        int *slot_res[NEGO_N_FAM];      /* and which of c->res they are (-1: none) */
        uint64_t *shape_dyn; /* per shape record (extra): codes of c->res's resources, and tags */
        uint32_t n_shape_dyn, cap_shape_dyn;
        NegoPState *pstate; /* [slot] (partitionable slots only) */
        size_t *pslots;     /* the partitionable slots considered */
        size_t n_pslots;
        size_t *amt_reps;   /* a p-slot of each distinct amt_orig */
        uint32_t n_amt_groups;
        size_t *kind_reps;  /* a p-slot of each kind (NEGO_F_JREQ shape as given) */
        uint32_t *kind_size;
        bool *kind_alike;   /* its p-slots were given alike resources and consumption shapes */
        uint32_t n_kinds;
        uint64_t pgen;      /* p-slot changes so far */
        size_t *plog;       /* the slots changed, in order */
        uint32_t n_plog, cap_plog;
        size_t considered;  /* slots a job is matched against */

        /* ---- memoised evaluations ---- */
        NegoMemo memo[NEGO_N_FAM];
        /* The slots' Requirements per what each reads of the job: a slot
         * that reads nothing of it is evaluated once. */
        NegoNames *deps;    /* interned sets; [NEGO_DEPS_ALL] unused */
        uint32_t n_deps, cap_deps;
        uint32_t *sreq_deps; /* per NEGO_F_SREQ shape: its set (UINT32_MAX: not known yet) */
        uint32_t cap_sreq_deps;
        NegoIntern dep_table; /* (set, job's projection on it) -> class */
        NegoMemo dep_of_ac;   /* (autocluster, set) -> class */
        NegoMemo memo_dep;    /* (class, NEGO_F_SREQ shape) -> Requirements */
        NegoMemo dep_false;   /* (group, its set, class) -> how many of its slots refuse: idle << 32 | running */
        ClassAd *no_job;      /* an empty ad: the TARGET of what reads no job */
        NegoAmt *amts;
        size_t n_amts, cap_amts;

        /* ---- candidate lists (autocluster.c) ---- */
        NegoGroup *groups; /* static slots by NEGO_F_JREQ shape */
        size_t n_groups;
        NegoOrder **orders;
        uint32_t n_orders, cap_orders, cap_order_key;
        NegoIntern order_table;
        uint32_t (*order_key)[4]; /* its classes for PRE, JRANK, POST, PRANK */
        NegoStream **streams; /* open addressing on (submitter, autocluster) */
        size_t streams_mask, n_streams;
        uint64_t taken_gen; /* static slots taken so far (as last seen) */
} NegoFast;

/* ---- intern.c ---- */

static inline uint64_t nego_mix(uint64_t h, uint64_t v) {
        h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        return h ^ (h >> 31);
}

/* Room for need elements of elem bytes in *v (capacity *cap). */
int nego_grow(void **v, uint32_t *cap, size_t need, size_t elem);
/* Whether interned entry id is the same as the candidate. */
typedef bool (*NegoSameFn)(NegoFast *f, uint32_t id, uint32_t cand, const void *extra);
/* The id of what hashes to hash and same() says equal, or a new one
 * (*ret_new, with cand as its rep). */
int nego_intern(NegoFast *f, NegoIntern *t, uint64_t hash, uint32_t cand, NegoSameFn same, const void *extra,
                uint32_t *ret_id, bool *ret_new);
void nego_intern_free(NegoIntern *t);
/* Adds name to the set: 1, or 0 when it was there, or -ENOMEM. */
int nego_names_add(NegoNames *s, const CaName *name);
bool nego_memo_get(const NegoMemo *m, uint64_t key, uint64_t *ret);
int nego_memo_put(NegoMemo *m, uint64_t key, uint64_t val); /* -ENOMEM: not remembered */
#define NEGO_FRESH_BASE 0x80000000u /* class ids never seen twice: not cached */

/* ---- analysis.c ---- */

/* The analysis and the autoclusters; *ret NULL when an expression reads
 * what the analysis cannot name (the cycle runs plain). Fills
 * c->stats.autoclusters (and slot_shapes when *ret is NULL). */
int nego_fast_new(NegoCycle *c, NegoFast **ret);
/* The effective classes of job (of autocluster ac) for every family: the
 * autocluster's, with the ephemeral attributes it reads now; and ac
 * (ret[NEGO_N_CLS]). */
int nego_fast_classes(NegoFast *f, uint32_t ac, const ClassAd *job, uint32_t *ret);
/* One of the job's ephemeral attributes (SubmitterUserPrio ...). */
bool nego_is_ephemeral(const CaName *name);
/* A hash of an ad's trees for names, and whether two ads agree on them. */
uint64_t nego_job_hash(const NegoNames *names, const ClassAd *ad);
bool nego_jobs_same(const NegoNames *names, const ClassAd *a, const ClassAd *b);

/* ---- shape.c ---- */

/* Whether an expression in play reads RemoteUserPrio, RemoteGroup ... of
 * a slot; Slot<N>_RemoteUserPrio. */
bool nego_fast_reads_remote(const NegoFast *f);
bool nego_fast_reads_slot_prios(const NegoFast *f);
/* The slot shapes (the slots' ads complete), c->stats.slot_shapes. */
int nego_fast_shapes(NegoFast *f);
void nego_fast_free(NegoFast *f);

/* Whether slot's Requirements hold whatever the job (1), for none (0), or
 * depend on the job (-1). */
int nego_fast_start_fixed(NegoFast *f, size_t slot);
/* What slot's Requirements read of the job: a set of f->deps. */
uint32_t nego_fast_slot_deps(NegoFast *f, size_t slot);
/* The job's class (autocluster ac) for what set d reads. */
uint32_t nego_fast_deps_class(NegoFast *f, uint32_t ac, uint32_t d);
/* Memoised evaluations of job (classes cls) against slot. */
bool nego_fast_job_ok(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot);
bool nego_fast_slot_ok(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot);
bool nego_fast_preq(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot);
/* NEGO_F_JRANK, SRANK, PRE, POST, PRANK: the number (NaN taken as 0). */
double nego_fast_number(NegoFast *f, NegoFamily fam, const uint32_t *cls, const ClassAd *job, size_t slot);
/* What job asks of p-slot `slot` as it is now, or as given (whole). */
void nego_fast_amounts(NegoFast *f, const uint32_t *cls, const ClassAd *job, size_t slot, bool whole, NegoAmt *ret);
/* A p-slot was consumed or given back: its state and shapes anew. */
int nego_fast_pslot_update(NegoFast *f, size_t slot);

/* ---- lists.c ---- */

/* A group's live slots whose Requirements read the job, by what they read. */
typedef struct NegoDep {
        uint32_t d; /* the set of f->deps */
        uint32_t *idle, *running;
        uint32_t n_idle, n_running, cap_idle, cap_running;
} NegoDep;

struct NegoGroup {
        uint32_t *idle, *running; /* live slots (Requirements true for some job), ascending */
        uint32_t n_idle, n_running, cap_idle, cap_running;
        uint32_t n_dead; /* Requirements false whatever the job: in no list */
        uint32_t rep;    /* a slot of it */
        NegoDep *deps;
        uint32_t n_deps, cap_deps;
};

typedef struct NegoEntry {
        double key[3]; /* pre-job rank, the job's Rank, post-job rank */
        double prank;  /* PREEMPTION_RANK (running slots; 0 for idle ones) */
        uint32_t slot;
        uint32_t run;  /* running slots: its run of equal key */
} NegoEntry;

/* In a run of running slots of equal key: the least CurrentRank of those
 * of one NEGO_F_SRANK shape (a job can preempt one of them by Rank only
 * if the shape's RANK for it is above that). */
typedef struct RankMin {
        uint32_t shape, rep;
        double min_current;
} RankMin;

typedef struct NegoList {
        NegoEntry *e;
        uint32_t *jump; /* where to look past a taken entry */
        uint32_t n;
        uint32_t *run_mins; /* running lists: per run, its first RankMin (and the next run's) */
        RankMin *mins;
        uint32_t n_mins, cap_mins;
} NegoList;

struct NegoOrder {
        NegoList **lists;          /* [2 * group + running], sorted when first asked for */
        struct NegoPTree **ptrees; /* its p-slots, per kind (pslot-tree.c); NULL: not made yet */
        size_t psynced;            /* the p-slot changes applied to them */
};


/* Candidate order: better ranks first, then PREEMPTION_RANK, then the slot. */
bool nego_entry_before(const NegoEntry *a, const NegoEntry *b);
/* The static slots in groups (f->groups). */
int nego_groups_make(NegoFast *f);
/* The order of a job of classes cls (made when first asked for). */
int nego_order_get(NegoFast *f, const uint32_t *cls, NegoOrder **ret);
/* Group g's idle or running slots, best first for job (of classes cls). */
int nego_order_list(NegoFast *f, NegoOrder *o, size_t g, bool running, const uint32_t *cls, const ClassAd *job,
                    NegoList **ret);
/* The first entry of l at or after i whose slot is not taken (l->n: none). */
uint32_t nego_list_find(const NegoSlot *slots, NegoList *l, uint32_t i);
void nego_lists_free(NegoFast *f);

/* ---- autocluster.c ---- */

/* The plain path's nego_best_slot, through the cached candidate lists. */
int nego_fast_best_slot(NegoCycle *c, NegoSub *sub, NegoJob *job, NegoPick *ret);
/* The considered slots as (slot, count) pairs that evaluate alike for
 * job's Requirements: a static slot standing for its shape, each p-slot
 * for itself. *ret malloc'd. */
int nego_fast_slot_groups(NegoCycle *c, size_t **ret_slots, size_t **ret_counts, size_t *ret_n);
void nego_fast_streams_free(NegoFast *f);

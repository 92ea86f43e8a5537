/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classad.h — the ClassAd language as HTCondor defines it.
 *
 * Values, ads, expressions, parsing (bracketed "new" syntax and the old
 * one-attribute-per-line syntax), evaluation in HTCondor's strict and old
 * modes, unparsing to canonical text, and symmetric matchmaking.
 *
 * Conventions: functions return >= 0 on success and -errno on failure;
 * outputs come last, are named ret_*, and are set only on success.
 * UNDEFINED and ERROR are ClassAd values, never C errors.
 * Not thread-safe: one thread parses and evaluates at a time (attribute
 * names are interned in a process-wide table).
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct ClassAd ClassAd;         /* a record: attribute name -> expression */
typedef struct ClassAdExpr ClassAdExpr; /* an owned, stand-alone expression */
typedef struct CaStr CaStr;             /* reference-counted string */
typedef struct CaList CaList;           /* list value (lazy or materialised) */
typedef struct CaAtom CaName;           /* an attribute name, interned */

typedef enum CaMode {
        CA_MODE_OLD = 0,    /* HTCondor daemons' default ("old ClassAd" compatibility) */
        CA_MODE_STRICT = 1, /* strict new-ClassAd semantics */
} CaMode;

typedef enum CaType {
        CA_UNDEFINED = 0,
        CA_ERROR,
        CA_BOOL,
        CA_INT,
        CA_REAL,
        CA_STRING,
        CA_LIST,
        CA_AD,
        CA_ABSTIME,
        CA_RELTIME,
} CaType;

struct CaStr {
        int32_t refs; /* < 0: static or owned by an expression tree, never freed */
        uint32_t len;
        char s[];     /* NUL-terminated; may contain NUL only if built so */
};

typedef struct CaValue {
        CaType type;
        union {
                bool b;
                int64_t i;
                double r;       /* CA_REAL */
                double rt;      /* CA_RELTIME: seconds */
                CaStr *s;
                struct {
                        CaList *list;
                        const ClassAd *scope; /* where lazy elements evaluate */
                } l;
                ClassAd *ad;
                struct {
                        int64_t secs;  /* seconds since the epoch, UTC */
                        int32_t offset; /* seconds east of UTC */
                } at;
        } u;
} CaValue;

/* Parse errors: where and why. */
typedef struct CaError {
        int line;     /* 1-based */
        int column;   /* 1-based */
        size_t offset;
        char msg[160];
} CaError;

/* Hard limits against hostile input. */
#define CA_MAX_INPUT_SIZE (16u * 1024u * 1024u) /* bytes of text parsed at once */
#define CA_MAX_PARSE_DEPTH 200                  /* nesting of (), [], {}, operators */
#define CA_MAX_EVAL_DEPTH 10000                 /* recursion of nested evaluation, in tree levels */

/* ---- values ---- */

static inline CaValue ca_undefined(void) { return (CaValue){ .type = CA_UNDEFINED }; }
static inline CaValue ca_error(void) { return (CaValue){ .type = CA_ERROR }; }
static inline CaValue ca_bool(bool b) { return (CaValue){ .type = CA_BOOL, .u.b = b }; }
static inline CaValue ca_int(int64_t i) { return (CaValue){ .type = CA_INT, .u.i = i }; }
static inline CaValue ca_real(double r) { return (CaValue){ .type = CA_REAL, .u.r = r }; }
static inline CaValue ca_reltime(double secs) { return (CaValue){ .type = CA_RELTIME, .u.rt = secs }; }
static inline CaValue ca_abstime(int64_t secs, int32_t offset) {
        return (CaValue){ .type = CA_ABSTIME, .u.at = { secs, offset } };
}

/* New owned string value (copies). On allocation failure returns ERROR. */
CaValue ca_string(const char *s);
CaValue ca_string_n(const char *s, size_t len);
/* Takes one reference of str. */
CaValue ca_string_take(CaStr *str);

CaStr *ca_str_new(const char *s, size_t len); /* refs = 1; NULL on ENOMEM */
static inline CaStr *ca_str_ref(CaStr *s) { if (s && s->refs >= 0) s->refs++; return s; }
void ca_str_unref(CaStr *s);

/* Reference counting of values: copy adds a reference, clear drops it. */
CaValue ca_value_copy(const CaValue *v);
void ca_value_clear(CaValue *v); /* leaves UNDEFINED */

/* Make v independent of the ads and expressions it came from (strings
 * copied if borrowed, lazy lists materialised, nested ads deep-copied).
 * The public evaluation functions below already return detached values. */
int ca_value_detach(CaValue *v);

const char *ca_type_name(CaType t);

/* Value as the HTCondor unparser prints it; malloc'd, NULL on ENOMEM. */
char *ca_value_unparse(const CaValue *v);

/* A number (int, real, or bool as 0/1) as a double; false for any other type. */
bool ca_to_real(const CaValue *v, double *ret);

/* Number of elements of a list value; -1 if v is not a list. */
int64_t ca_list_size(const CaValue *v);
/* Element i of a list value, evaluated (detached). */
int ca_list_get(const CaValue *v, int64_t i, CaMode mode, CaValue *ret);

/* ---- ads ---- */

int classad_new(ClassAd **ret);
ClassAd *classad_ref(ClassAd *ad);
void classad_free(ClassAd *ad); /* drops a reference (and a chained ad's on its parent); accepts NULL */

/* Bracketed syntax "[ a = 1; b = "x" ]" (whitespace around it allowed). */
int classad_parse(const char *text, size_t len, CaMode mode, ClassAd **ret, CaError *err);
/* Old syntax: one "Name = expr" per line (condor_status -l); '#' comments
 * and blank lines ignored. */
int classad_parse_old(const char *text, size_t len, CaMode mode, ClassAd **ret, CaError *err);

/* Insert or replace attributes. Names are case-insensitive; the spelling of
 * the latest insert is kept for unparsing. */
int classad_set_expr_text(ClassAd *ad, const char *name, const char *expr_text, CaMode mode, CaError *err);
int classad_set_expr(ClassAd *ad, const char *name, const ClassAdExpr *e); /* deep copy */
int classad_set_int(ClassAd *ad, const char *name, int64_t v);
int classad_set_real(ClassAd *ad, const char *name, double v);
int classad_set_bool(ClassAd *ad, const char *name, bool v);
int classad_set_string(ClassAd *ad, const char *name, const char *v);
int classad_set_value(ClassAd *ad, const char *name, const CaValue *v);
int classad_delete(ClassAd *ad, const char *name); /* -ENOENT if absent (from ad itself: see chains) */
bool classad_has(const ClassAd *ad, const char *name);
/* name can be written without quotes: a letter or '_', then letters,
 * digits and '_', and not a reserved word (true, false, undefined, error,
 * is, isnt). */
bool classad_is_plain_name(const char *name);
size_t classad_size(const ClassAd *ad);
/* Copy all attributes of src into dst (replacing same-named ones). */
int classad_update(ClassAd *dst, const ClassAd *src);
int classad_copy(const ClassAd *src, ClassAd **ret); /* not chained; see chains */
/* For ads kept for long (a job queue's): trims the attribute table and the
 * arena to what the ad holds, at the cost of one copy of its expressions.
 * Attributes set afterwards take room again, a little at a time. Nothing
 * for an ad that is already tight; accepts NULL. */
void classad_shrink(ClassAd *ad);

/* Iterate in insertion order: returns false at the end. The ad (and the
 * ad it is chained to) must not change during the iteration. */
typedef struct ClassAdIter { const ClassAd *ad; size_t pos; bool own; } ClassAdIter;
static inline ClassAdIter classad_iter(const ClassAd *ad) { return (ClassAdIter){ ad, 0, false }; }
bool classad_iter_next(ClassAdIter *it, const char **ret_name, char **ret_expr_text /* malloc'd or NULL */);

/* ---- chained ads ----
 *
 * HTCondor's ChainToAd: a job queue keeps what the procs of a `queue N`
 * share in one cluster ad, and per proc a small ad of its own attributes
 * (ProcId, JobStatus, ...) chained to it. The child shows the parent's
 * attributes it does not define itself; one level only.
 *
 * Reading sees the chained view: classad_has, classad_eval_*,
 * classad_unparse_attr, classad_match, classad_requirements_met,
 * classad_rank, classad_attr_refs, classad_attr_fingerprint,
 * classad_attr_same, classad_requirements_may_hold and classad_expr_eval
 * with the child as MY. An inherited expression is evaluated with the
 * child as its scope (MY): the cluster's Requirements = TARGET.Memory >=
 * RequestMemory reads the proc's RequestMemory when the proc has one.
 * (A record written inside an inherited expression, [ a = x ], has the
 * parent as its enclosing ad: a name the record does not define is looked
 * up in the parent, not in the child.)
 *
 * Listing sees the flattened view, each name once, the parent's
 * attributes the child does not override first, then the child's own
 * (the order in which HTCondor sends a chained ad): classad_size, classad_iter,
 * classad_unparse, classad_unparse_old, classad_copy (an unchained ad
 * with all of them), classad_update with a chained src.
 *
 * Writing touches the child only: classad_set_* on the child adds or
 * replaces the child's own attribute (overriding the parent's), never
 * the parent; classad_delete on the child deletes the child's own
 * attribute, after which the parent's shows again, and a name only the
 * parent defines cannot be deleted through the child (-ENOENT).
 * Changing the parent changes what every child shows.
 */

/* Chain ad to parent, replacing an earlier chain. Takes a reference on
 * parent (dropped by classad_unchain, a later classad_chain, or freeing
 * ad), so parent may be freed by its owner first. -EINVAL when ad ==
 * parent, when parent is itself chained, when ad is the parent of a
 * chained ad (one level only), or for an ad that is part of an
 * expression (a record value). */
int classad_chain(ClassAd *ad, ClassAd *parent);
/* Drops the chain (and the reference); nothing when ad is not chained. */
void classad_unchain(ClassAd *ad);
/* What ad is chained to; NULL when none. */
const ClassAd *classad_chained_parent(const ClassAd *ad);
/* The child's own attributes only, what a queue stores per proc:
 * their number, an iteration, the canonical text, and an unchained copy
 * (chain it to get the view back). Equal to the plain calls for an ad
 * that is not chained. */
size_t classad_size_own(const ClassAd *ad);
static inline ClassAdIter classad_iter_own(const ClassAd *ad) { return (ClassAdIter){ ad, 0, true }; }
char *classad_unparse_own(const ClassAd *ad); /* malloc'd */
int classad_copy_own(const ClassAd *src, ClassAd **ret);

/* Evaluate attribute `name` of ad (UNDEFINED when absent), no match context. */
int classad_eval_attr(const ClassAd *ad, const char *name, CaMode mode, CaValue *ret);
/* A list of ads (a message's listing): each element evaluated and copied
 * once into a standalone ad, ret[0..ret_n) (free each with classad_free,
 * then the array). -ENOENT when name is undefined, -EINVAL when it is not
 * a list or an element is not an ad. */
int classad_eval_ad_list(const ClassAd *ad, const char *name, CaMode mode, ClassAd ***ret, size_t *ret_n);
/* Typed conveniences: -ENOENT absent/undefined, -EINVAL other type. */
int classad_eval_int(const ClassAd *ad, const char *name, CaMode mode, int64_t *ret);
int classad_eval_real(const ClassAd *ad, const char *name, CaMode mode, double *ret); /* int promotes */
int classad_eval_bool(const ClassAd *ad, const char *name, CaMode mode, bool *ret);   /* numbers: != 0 */
int classad_eval_string(const ClassAd *ad, const char *name, CaMode mode, char **ret);

/* Canonical text: "[ a = 1; b = \"x\" ]" on one line; malloc'd. */
char *classad_unparse(const ClassAd *ad);
/* Old format: "a = 1\nb = \"x\"\n"; malloc'd. */
char *classad_unparse_old(const ClassAd *ad);
/* Text of one attribute's expression, NULL when absent; malloc'd. */
char *classad_unparse_attr(const ClassAd *ad, const char *name);

/* ---- stand-alone expressions ---- */

int classad_expr_parse(const char *text, size_t len, CaMode mode, ClassAdExpr **ret, CaError *err);
void classad_expr_free(ClassAdExpr *e);
char *classad_expr_unparse(const ClassAdExpr *e);
/* Evaluate e with `my` as its scope (may be NULL: an empty ad) and, when
 * target is non-NULL, in a match context with target as TARGET. */
int classad_expr_eval(const ClassAdExpr *e, const ClassAd *my, const ClassAd *target, CaMode mode, CaValue *ret);
/* ---- the evaluation budget ----
 *
 * Every evaluation (each call above and below that evaluates, and each
 * element of classad_eval_ad_list or ca_list_get) has a budget of
 * CLASSAD_EVAL_BUDGET steps: an attribute hop, a list element or a
 * function call is one step, a regular expression's match 16 (and 20,000
 * more when it needs the long try, classad/fn-regex.c), compiling a
 * pattern that is not cached a step a byte, the text eval() parses
 * and unparse() writes one a byte, all nested work counted against the
 * outer evaluation. Past it the evaluation stops and its value is ERROR,
 * whatever the expression would have made of the ERROR inside. About
 * 30 ms of work on today's machines. */
#define CLASSAD_EVAL_BUDGET (1u << 20)
/* How many evaluations in this process ran out of their budget so far:
 * compare before and after an evaluation to know whether it did. */
uint64_t classad_budget_hits(void);

/* Pins the clock of time(), CurrentTime and the time functions to t
 * (seconds since the epoch); 0 returns to the real clock. For replays and
 * tests; the clock is process-wide. */
void classad_set_now(int64_t t);

/* ---- matchmaking ---- */

/* Symmetric match as HTCondor's matchmaker: each ad's Requirements evaluates
 * to true with the other ad as TARGET. A missing Requirements is UNDEFINED
 * and so does not match. */
bool classad_match(const ClassAd *a, const ClassAd *b, CaMode mode);
/* Hint that ad is about to be matched: start loading what matching reads
 * (its attribute table) into the cache. A loop over many ads calls it a
 * few ads ahead, as a matchmaker going through the slots does. */
void classad_prefetch(const ClassAd *ad);
/* Only a's Requirements against b. */
bool classad_requirements_met(const ClassAd *a, const ClassAd *b, CaMode mode);
/* Rank of `ad` evaluated against target; non-numeric gives 0.0. */
double classad_rank(const ClassAd *ad, const ClassAd *target, CaMode mode);
/* MY.name of ad evaluated with target as TARGET (a match context; NULL
 * target: none): UNDEFINED when ad has no such attribute (target's is
 * never looked at), as for classad_eval_attr. */
int classad_eval_attr_with(const ClassAd *ad, const char *name, const ClassAd *target, CaMode mode, CaValue *ret);

/* ---- analysis: what expressions read ---- */

/* An attribute name interned once (case-insensitive), for lookups
 * repeated over many ads; the same pointer for the same name, for the
 * life of the process. NULL on ENOMEM. */
const CaName *classad_name(const char *name);
const char *classad_name_str(const CaName *name); /* as first spelt */

typedef enum CaRefKind {
        CA_REF_PLAIN,  /* name: looked up in MY (and the ads around it), in old mode then in TARGET */
        CA_REF_MY,     /* MY.name, SELF.name, .name */
        CA_REF_TARGET, /* TARGET.name, OTHER.name */
        CA_REF_OPAQUE, /* a read the tree does not name: eval(), unresolved(), PARENT.x, ROOT.x,
                          LEFT.x, RIGHT.x, an attribute of an expression's value, MY or TARGET as a value */
} CaRefKind;

/* name is NULL for CA_REF_OPAQUE. */
typedef void (*CaRefFn)(const CaName *name, CaRefKind kind, void *userdata);

/* Calls fn for each attribute reference in e's tree, as written: the
 * references are not followed into any ad (HTCondor's external and
 * internal references together). A record written in the tree reports
 * its own attribute names too: more than is read, never less. */
void classad_expr_refs(const ClassAdExpr *e, CaRefFn fn, void *userdata);
/* The same for the expression of attribute name in ad; false (and no
 * call) when ad has no such attribute. */
bool classad_attr_refs(const ClassAd *ad, const CaName *name, CaRefFn fn, void *userdata);

/* Whether a's Requirements may hold against b whatever the attributes
 * vary[] of b are (b's other attributes, and a's, as they are): false
 * when a top-level && conjunct of them that reads none of vary, through
 * either ad, is false (then the whole is never true). A matchmaker asks
 * it of a slot whose Cpus and Memory shrink as it is carved up. */
bool classad_requirements_may_hold(const ClassAd *a, const ClassAd *b, const CaName *const *vary, size_t n_vary,
                                   CaMode mode);

/* A fingerprint of the expression of attribute name in ad: the same tree
 * as parsed (values, operators, names as spelt) gives the same number;
 * absent gives 0, present never does. */
uint64_t classad_attr_fingerprint(const ClassAd *ad, const CaName *name);
/* Whether a and b hold the same tree for name (both without it: true).
 * Ads that agree on every attribute an evaluation reads give it the same
 * result. */
bool classad_attr_same(const ClassAd *a, const ClassAd *b, const CaName *name);

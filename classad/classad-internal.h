/* SPDX-License-Identifier: Apache-2.0 */
/*
 * classad-internal.h — what the files of classad/ share: expression nodes,
 * the arena they live in, interned attribute names, the evaluator's state
 * and the interface between the evaluator and the built-in functions.
 */
#pragma once

#include "classad.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

#define _unused_ __attribute__((unused))
#define _noinline_ __attribute__((noinline))
#define _fallthrough_ __attribute__((fallthrough))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)
#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* ---- arena: expression trees of one ad or one stand-alone expression ---- */

typedef struct CaChunk CaChunk;
typedef struct CaArena {
        CaChunk *head;
        size_t bytes;          /* total handed out */
        size_t hint;           /* a parser's guess of the bytes still to come: the size of a next chunk; or 0 */
        ClassAd *nested;       /* ads embedded in the trees, freed with the arena */
} CaArena;

void *ca_arena_alloc(CaArena *a, size_t n);                  /* 8-aligned, zeroed; NULL on ENOMEM */
void ca_arena_reserve(CaArena *a, size_t n);                 /* size of the first chunk, if none yet */
size_t ca_arena_capacity(const CaArena *a);                  /* bytes of its chunks, used or not */
char *ca_arena_strndup(CaArena *a, const char *s, size_t n); /* NUL-terminated copy */
CaStr *ca_arena_str(CaArena *a, const char *s, size_t n);    /* static CaStr (refs = -1) */
void ca_arena_release(CaArena *a);                           /* frees everything, leaves it empty */
void ca_ad_destroy_embedded(ClassAd *ad);                    /* frees an embedded ad's tables */

/* ---- interned attribute names (case-insensitive) ---- */

/* The scope names: MY.x, TARGET.x ... (SELF/MY/TARGET/OTHER/LEFT/RIGHT/
 * PARENT/ROOT/TOPLEVEL, any case). */
typedef enum CaScope {
        CA_SCOPE_NONE, CA_SCOPE_SELF, CA_SCOPE_MY, CA_SCOPE_TARGET, CA_SCOPE_LEFT, CA_SCOPE_RIGHT,
        CA_SCOPE_PARENT, CA_SCOPE_ROOT,
} CaScope;

typedef struct CaAtom {
        uint32_t id;
        uint32_t hash;
        uint32_t len;
        uint8_t scope;        /* CaScope */
        const char *spelling; /* as first seen: the usual spelling, shared */
        char name[];          /* lower-cased, then the spelling */
} CaAtom;

/* ASCII lower case of every byte. */
extern const unsigned char ca_lower[256];
/* The hash ca_atom uses: FNV-1a over the lower-cased bytes; h starts at
 * CA_HASH_INIT and takes one byte at a time. */
#define CA_HASH_INIT 2166136261u
static inline uint32_t ca_hash_step(uint32_t h, unsigned char c) {
        return (h ^ ca_lower[c]) * 16777619u;
}

const CaAtom *ca_atom(const char *name, size_t len); /* NULL on ENOMEM */
const CaAtom *ca_atom_hashed(const char *name, size_t len, uint32_t hash); /* hash from ca_hash_step */
const CaAtom *ca_atom_find(const char *name, size_t len); /* NULL if never interned */
/* The atom's shared spelling when it is spelled so, else NULL. */
static inline const char *ca_atom_spelled(const CaAtom *a, const char *s, size_t len) {
        return a->len == len && memcmp(a->spelling, s, len) == 0 ? a->spelling : NULL;
}

/* Well-known atoms, interned at first use. */
typedef enum CaWellKnown {
        CA_WK_REQUIREMENTS,
        CA_WK_RANK,
        CA_WK_CURRENTTIME,
        _CA_WK_MAX,
} CaWellKnown;
const CaAtom *ca_atom_wk(CaWellKnown w);

/* ---- expression nodes ---- */

typedef enum CaNodeKind {
        CA_N_LITERAL,  /* lit */
        CA_N_ATTR,     /* attr: name, [base.]name or .name */
        CA_N_OP,       /* op: unary, binary, ternary */
        CA_N_CALL,     /* call */
        CA_N_LIST,     /* list: { a, b } */
        CA_N_AD,       /* ad: [ a = 1 ] */
        CA_N_FOLDED,   /* folded: a constant subtree and its value */
} CaNodeKind;

typedef enum CaOp {
        /* unary */
        CA_OP_NEG, CA_OP_POS, CA_OP_NOT, CA_OP_BNOT, CA_OP_PAREN,
        /* binary */
        CA_OP_MUL, CA_OP_DIV, CA_OP_MOD,
        CA_OP_ADD, CA_OP_SUB,
        CA_OP_SHL, CA_OP_SHR, CA_OP_USHR,
        CA_OP_LT, CA_OP_LE, CA_OP_GT, CA_OP_GE,
        CA_OP_EQ, CA_OP_NE, CA_OP_IS, CA_OP_ISNT,
        CA_OP_BAND, CA_OP_BXOR, CA_OP_BOR,
        CA_OP_AND, CA_OP_OR,
        CA_OP_SUBSCRIPT,   /* a[b] */
        CA_OP_ELVIS,       /* a ?: b */
        /* ternary */
        CA_OP_COND,        /* a ? b : c */
        _CA_OP_MAX,
} CaOp;

enum {
        CA_NF_CONST = 1 << 0,    /* u.lit holds the value (literals, folded subtrees) */
        CA_NF_ABSOLUTE = 1 << 1, /* CA_N_ATTR: .name (root scope) */
        CA_NF_SPACED = 1 << 2,   /* CA_OP_ELVIS written "a ? : b" (ternary level) */
};

typedef struct CaFunc CaFunc;
typedef struct CaNode CaNode;

/* 40 bytes: an ad's trees are mostly these. */
struct CaNode {
        uint8_t kind;   /* CaNodeKind */
        uint8_t op;     /* CaOp for CA_N_OP; scope code of the base for CA_N_ATTR */
        uint8_t flags;  /* CA_NF_* */
        uint16_t depth; /* height of the subtree, bounded by CA_MAX_TREE_DEPTH */
        uint16_t nargs; /* CA_N_CALL: at most CA_MAX_ARGS; CA_N_ATTR: where the name was found last + 1 */
        union {
                CaValue lit;   /* CA_N_LITERAL, and every CA_NF_CONST node: strings static (refs < 0) */
                struct {
                        CaValue k;            /* overlays lit */
                        const CaNode *orig;   /* what was written, for unparsing */
                } folded;
                struct {
                        const CaAtom *atom;
                        const char *spelling; /* as written, for unparsing */
                        CaNode *base;         /* base.name, or NULL */
                } attr;
                struct {
                        CaNode *a, *b, *c;
                } op;
                struct {
                        const CaFunc *fn;     /* NULL: unknown function (evaluates to ERROR) */
                        const char *name;     /* as written */
                        CaNode **args;
                } call;
                CaList *list;  /* CA_N_LIST: a lazy list owned by the tree */
                ClassAd *ad;   /* CA_N_AD: an ad owned by the tree */
        } u;
};
#define CA_MAX_ARGS 65535

/* ---- lists ---- */

struct CaList {
        int32_t refs;   /* < 0: owned by an expression tree */
        uint32_t n;
        bool lazy;      /* items are expressions (evaluated on access) */
        CaArena *arena; /* lazy lists detached from their tree own a copy; else NULL */
        union {
                CaNode **items;  /* lazy */
                CaValue *vals;   /* materialised */
        } u;
};

/* A new materialised list of n UNDEFINED values (refs = 1); NULL on ENOMEM.
 * Fill l->u.vals[i] directly (each slot owns its value). */
CaList *ca_list_new(uint32_t n);
void ca_list_unref(CaList *l);
static inline CaValue ca_list_value(CaList *l) { /* takes the reference */
        return (CaValue){ .type = CA_LIST, .u.l = { l, NULL } };
}

/* ---- ads ---- */

typedef struct CaAttr {
        const CaAtom *atom;
        CaNode *expr;       /* in the ad's arena */
        CaValue k;          /* copy of expr->k when expr is constant: one cache line per lookup */
        bool is_const;
        uint32_t bytes;     /* arena bytes the name and expression took */
        const char *name;   /* spelling of the latest insert (arena) */
} CaAttr;

/* Two different "parents": `parent` is lexical, the ad a nested record is
 * written in (PARENT.x, and where a name not found in the record is looked
 * up next); `chain` is the ad a top-level ad was chained to with
 * classad_chain (HTCondor's ChainToAd), whose attributes it shows as its
 * own unless it defines them itself. Only top-level ads chain, one level. */
struct ClassAd {
        int32_t refs;        /* < 0: embedded in an expression tree */
        uint32_t n, cap;     /* attrs[0..n) in insertion order; deleted ones have atom == NULL */
        uint32_t holes;      /* deleted entries among attrs[0..n) */
        CaAttr *attrs;
        uint32_t *index;     /* open addressing: 0 = empty, else attrs index + 1 */
        uint32_t index_mask; /* size - 1; 0 when index == NULL */
        uint32_t n_chained;  /* ads chained to this one */
        const ClassAd *parent; /* lexical: the ad this record is written in */
        ClassAd *chain;      /* chained to (one reference), or NULL */
        CaArena *arena;      /* where attribute expressions live */
        CaArena own_arena;   /* used when the ad is top-level */
        size_t garbage;      /* bytes of replaced expressions, for compaction */
        bool has_special;    /* defines a name such as TARGET or MY itself */
        bool no_fast;        /* has_special, or chained: the evaluator's fast leaves leave it alone */
        ClassAd *next_nested; /* chain in the owning arena */
};

/* name in ad itself, not what it is chained to: for changing ad. */
const CaAttr *ca_ad_lookup_own(const ClassAd *ad, const CaAtom *atom);
/* name as ad shows it: its own, else its chained parent's. For reading. */
static inline const CaAttr *ca_ad_lookup(const ClassAd *ad, const CaAtom *atom) {
        const CaAttr *a = ca_ad_lookup_own(ad, atom);
        if (a || !ad || _likely_(!ad->chain))
                return a;
        return ca_ad_lookup_own(ad->chain, atom);
}
/* The next attribute of ad's flattened view from *pos (which starts at
 * 0): the chained parent's that ad does not override, then ad's own; with
 * own, ad's own only. NULL at the end. ad and its parent must not change
 * in between. */
const CaAttr *ca_ad_next(const ClassAd *ad, size_t *pos, bool own);
/* Shrink the attribute table to what the ad holds (after parsing it). */
void ca_ad_fit(ClassAd *ad);
/* Insert expr (already in ad->arena, taking `bytes` of it) under name;
 * replaces. The spelling is copied into the arena. */
int ca_ad_insert(ClassAd *ad, const CaAtom *atom, const char *spelling, size_t spelling_len, CaNode *expr,
                 size_t bytes);
/* Parse "name = expr" (one attribute definition) into ad. */
int ca_parse_attr_def(ClassAd *ad, const char *text, size_t len, CaMode mode, CaError *err);
/* Whether name must be written 'quoted' (not an identifier, or reserved). */
bool ca_name_needs_quotes(const char *name);
/* A new ad embedded in arena (refs = -1), freed by ca_arena_release. */
ClassAd *ca_ad_new_embedded(CaArena *arena);

/* The tree of a stand-alone expression. */
const CaNode *ca_expr_root(const ClassAdExpr *e);

/* Deep copy of a tree into another arena; NULL on ENOMEM. */
CaNode *ca_node_copy(CaArena *dst, const CaNode *n, const ClassAd *new_parent);

/* ---- parser ---- */

typedef struct CaParseOptions {
        CaMode mode;
} CaParseOptions;

/* Parse one expression from text into arena. Trailing garbage is an error. */
int ca_parse_expr(CaArena *arena, const char *text, size_t len, CaMode mode, CaNode **ret, CaError *err);
/* Parse "[ ... ]" into ad (whose arena is used). */
int ca_parse_ad_into(ClassAd *ad, const char *text, size_t len, CaMode mode, CaError *err);

/* A node whose children are all constant, folded: a CA_N_FOLDED node
 * holding n and its value, or n itself when its value is not a scalar. */
CaNode *ca_fold(CaArena *arena, CaNode *n, CaMode mode);
#define CA_MAX_TREE_DEPTH 1000 /* height of one expression tree */
/* Bytes of tree per byte of text: about 3 for slot ads, up to 4 and a
 * little more for a job's Requirements of many comparisons. */
#define CA_TREE_PER_TEXT 4

/* ---- string buffer ---- */

typedef struct CaBuf {
        char *p;
        size_t len, cap;
        bool oom;
} CaBuf;

void ca_buf_putn(CaBuf *b, const char *s, size_t n);
static inline void ca_buf_puts(CaBuf *b, const char *s) { ca_buf_putn(b, s, strlen(s)); }
void ca_buf_putc(CaBuf *b, char c);
void ca_buf_printf(CaBuf *b, const char *fmt, ...) _printf_(2, 3);
char *ca_buf_steal(CaBuf *b);      /* malloc'd NUL-terminated, NULL if oom; resets b */
CaValue ca_buf_value(CaBuf *b);    /* string value (ERROR if oom); resets b */
void ca_buf_free(CaBuf *b);

/* ---- unparser ---- */

void ca_unparse_node(CaBuf *b, const CaNode *n);
void ca_unparse_value(CaBuf *b, const CaValue *v);
void ca_unparse_ad(CaBuf *b, const ClassAd *ad, bool own); /* own: without what it is chained to */
void ca_unparse_string(CaBuf *b, const char *s, size_t len); /* quoted, escaped */
void ca_unparse_name(CaBuf *b, const char *name);            /* 'quoted' when needed */
void ca_unparse_def_name(CaBuf *b, const char *name);        /* same, for a definition */
/* The old one-attribute-per-line style, for this thread, until reset. */
void ca_unparse_set_old_style(bool old);
void ca_unparse_real(CaBuf *b, double r);
void ca_unparse_abstime(CaBuf *b, int64_t secs, int32_t offset); /* absTime("...") */
void ca_unparse_reltime(CaBuf *b, double secs);                  /* relTime("...") */
/* The text inside the quotes, as used by string() on time values. */
void ca_format_abstime(CaBuf *b, int64_t secs, int32_t offset);  /* 2020-01-01T00:00:00-06:00 */
void ca_format_reltime(CaBuf *b, double secs);                   /* [-][D+]HH:MM:SS[.mmm] */
/* Parse those forms back; false if malformed. */
bool ca_parse_abstime(const char *s, int64_t *ret_secs, int32_t *ret_offset);
bool ca_parse_reltime(const char *s, double *ret_secs);

/* ---- evaluator ---- */

/* Something under evaluation: an attribute of an ad, or an element of a
 * lazy list (its expression) in the list's scope. Meeting one again while
 * it is on the stack is a cycle: ERROR. */
typedef struct CaEvalFrame {
        const ClassAd *ad;
        const void *key; /* the CaAttr, or the element's CaNode */
} CaEvalFrame;


typedef struct CaEval {
        CaMode mode;
        const ClassAd *left, *right; /* match context, or NULL */
        const ClassAd *cur;          /* current scope (may be NULL: empty) */
        int depth;                   /* nesting of evaluation */
        int nstack;
        CaEvalFrame stack[256];      /* attributes under evaluation (cycle detection) */
        uint64_t steps;              /* work budget spent */
} CaEval;

#define CA_MAX_EVAL_STEPS ((uint64_t) CLASSAD_EVAL_BUDGET)
/* Spend n steps of ev's budget; false when it is spent (the first time,
 * classad_budget_hits() counts it). */
bool ca_eval_charge_slow(CaEval *ev, uint64_t n);
static inline bool ca_eval_charge(CaEval *ev, uint64_t n) {
        if (_likely_(n <= CA_MAX_EVAL_STEPS - ev->steps && ev->steps <= CA_MAX_EVAL_STEPS)) {
                ev->steps += n;
                return true;
        }
        return ca_eval_charge_slow(ev, n);
}
/* At the end of a public evaluation: ERROR in place of *v when ev ran
 * out of its budget (an expression may have hidden the ERROR inside). */
static inline void ca_eval_settle(const CaEval *ev, CaValue *v) {
        if (_likely_(ev->steps <= CA_MAX_EVAL_STEPS))
                return;
        ca_value_clear(v);
        *v = ca_error();
}
/* Push what is about to be evaluated; false (and nothing pushed) on a
 * cycle or when the stack is full. */
bool ca_eval_enter(CaEval *ev, const ClassAd *ad, const void *key);
static inline void ca_eval_leave(CaEval *ev) {
        ev->nstack--;
}
/* What one nested evaluation (an attribute hop, a list element) costs of
 * CA_MAX_EVAL_DEPTH besides its tree's height: the C frames in between. */
#define CA_NESTED_EVAL_COST 8

void ca_eval_init(CaEval *ev, CaMode mode, const ClassAd *cur, const ClassAd *left, const ClassAd *right);
/* Evaluate n in ev->cur. ret is overwritten (not cleared first). Values may
 * borrow strings, lists and ads from the trees involved. */
void ca_eval_node(CaEval *ev, const CaNode *n, CaValue *ret);
static inline void ca_eval(CaEval *ev, const CaNode *n, CaValue *ret) {
        if (n->flags & CA_NF_CONST)
                *ret = n->u.lit; /* constants are static: no reference to take */
        else
                ca_eval_node(ev, n, ret);
}
/* The ad that is TARGET for expressions of ad (match context), or NULL. */
const ClassAd *ca_eval_target(const CaEval *ev, const ClassAd *ad);
/* Evaluate attribute atom as an unqualified reference from ev->cur. */
void ca_eval_attr_ref(CaEval *ev, const CaAtom *atom, CaValue *ret);
/* The expression an attribute-reference node names, and the ad it lives
 * in (for unparse() and the like); NULL when it names nothing. */
const CaNode *ca_resolve_ref(CaEval *ev, const CaNode *ref, const ClassAd **ret_scope);

/* Whether comparison op (< <= > >= == !=) holds for c < 0, == 0, > 0. */
static inline bool ca_cmp_holds(CaOp op, int c) {
        switch (op) {
        case CA_OP_LT: return c < 0;
        case CA_OP_LE: return c <= 0;
        case CA_OP_GT: return c > 0;
        case CA_OP_GE: return c >= 0;
        case CA_OP_EQ: return c == 0;
        default: return c != 0;
        }
}

/* Apply an operator to values already evaluated (strict operators and
 * comparisons; not &&, ||, ?: which need laziness). */
void ca_op_apply(CaOp op, const CaValue *a, const CaValue *b, CaValue *ret);

/* Number of elements of a list value; element i evaluated in the list's scope. */
static inline uint32_t ca_list_len(const CaValue *v) { return v->u.l.list->n; }
void ca_list_elem(CaEval *ev, const CaValue *list, uint32_t i, CaValue *ret);

/* ca_value_clear with the common no-op cases inline. */
static inline void ca_value_drop(CaValue *v) {
        if ((v->type == CA_STRING && v->u.s->refs >= 0) || v->type == CA_LIST || v->type == CA_AD)
                ca_value_clear(v);
}

/* Helpers for functions. */
static inline bool ca_is_number(const CaValue *v) { return v->type == CA_INT || v->type == CA_REAL; }
/* int, real or bool to double; false otherwise. */
/* "boolean equivalent": bool, or number (non-zero is true). */
static inline bool ca_to_bool(const CaValue *v, bool *ret) {
        switch (v->type) {
        case CA_BOOL: *ret = v->u.b; return true;
        case CA_INT: *ret = v->u.i != 0; return true;
        case CA_REAL: *ret = v->u.r != 0.0; return true;
        default: return false;
        }
}
/* A CA_N_ATTR node base.name where base is a plain scope name keeps that
 * name's CaScope in its `op`. */

/* ---- built-in functions ---- */

enum {
        CA_FN_PURE = 1 << 0, /* same arguments, same result (the parser folds no call but
                                absTime/relTime of a literal: a call may cost any time) */
};

typedef void (*CaFnImpl)(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret);

struct CaFunc {
        const char *name;
        CaFnImpl impl;
        unsigned flags;
};

/* Case-insensitive lookup; NULL if unknown. */
const CaFunc *ca_func_lookup(const char *name, size_t len);

/* Time source for time(), CurrentTime etc.; tests may pin it. */
int64_t ca_now(void);
void ca_set_now(int64_t t); /* 0: use the real clock */

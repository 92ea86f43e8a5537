/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval.c — evaluation of expression trees: scopes, attribute references,
 * the lazy operators (&&, ||, ?:, ?:), selection and subscripts.
 *
 * Scopes as HTCondor sets them up: an unqualified name is looked up in the
 * current ad, then its enclosing ads; in old-ClassAd mode, then in the
 * TARGET ad of a match, and CurrentTime means time(). MY/SELF is the
 * current ad, TARGET/OTHER the other ad of the match, LEFT/RIGHT the two
 * ads of the match, PARENT the enclosing ad, ROOT the outermost one.
 * An attribute that refers back to itself, directly or not, is ERROR.
 */
#include "classad-internal.h"

#include <stdlib.h>
#include <strings.h>
#include <time.h>

typedef CaScope Special;
#define SP_NONE CA_SCOPE_NONE
#define SP_SELF CA_SCOPE_SELF
#define SP_MY CA_SCOPE_MY
#define SP_TARGET CA_SCOPE_TARGET
#define SP_LEFT CA_SCOPE_LEFT
#define SP_RIGHT CA_SCOPE_RIGHT
#define SP_PARENT CA_SCOPE_PARENT
#define SP_ROOT CA_SCOPE_ROOT

static inline Special special_of(const CaAtom *a) {
        return (Special) a->scope;
}

static int64_t pinned_now;

int64_t ca_now(void) {
        return pinned_now ? pinned_now : (int64_t) time(NULL);
}

void ca_set_now(int64_t t) {
        pinned_now = t;
}

void classad_set_now(int64_t t) {
        pinned_now = t;
}

void ca_eval_init(CaEval *ev, CaMode mode, const ClassAd *cur, const ClassAd *left, const ClassAd *right) {
        ev->mode = mode;
        ev->cur = cur;
        ev->left = left;
        ev->right = right;
        ev->depth = 0;
        ev->nstack = 0;
        ev->steps = 0;
}

static const ClassAd *root_of(const ClassAd *ad) {
        while (ad && ad->parent)
                ad = ad->parent;
        return ad;
}

const ClassAd *ca_eval_target(const CaEval *ev, const ClassAd *ad) {
        if (!ev->left && !ev->right)
                return NULL;
        const ClassAd *root = root_of(ad);
        if (root == ev->left)
                return ev->right;
        if (root == ev->right)
                return ev->left;
        return NULL;
}

static CaValue ad_value(const ClassAd *ad) {
        if (!ad)
                return ca_undefined();
        return (CaValue){ .type = CA_AD, .u.ad = classad_ref((ClassAd *) ad) };
}

static bool in_match(const CaEval *ev) {
        return ev->left || ev->right;
}

/* The ad a special name stands for; false if the name is not special here. */
static bool special_ad(CaEval *ev, Special sp, const ClassAd **ret) {
        switch (sp) {
        case SP_SELF:
                *ret = ev->cur;
                return true;
        case SP_MY:
                /* strict new ClassAds know MY only inside a match */
                if (ev->mode == CA_MODE_STRICT && !in_match(ev))
                        return false;
                *ret = ev->cur;
                return true;
        case SP_TARGET:
                if (ev->mode == CA_MODE_STRICT && !in_match(ev))
                        return false;
                *ret = ca_eval_target(ev, ev->cur);
                return true;
        case SP_LEFT:
        case SP_RIGHT:
                if (!in_match(ev))
                        return false;
                *ret = sp == SP_LEFT ? ev->left : ev->right;
                return true;
        case SP_PARENT:
                *ret = ev->cur ? ev->cur->parent : NULL;
                return true;
        case SP_ROOT:
                *ret = root_of(ev->cur);
                return true;
        default:
                return false;
        }
}

/* Evaluate attribute a of ad `scope`, guarding against cycles. */
static void eval_attr_in(CaEval *ev, const ClassAd *scope, const CaAttr *a, CaValue *ret) {
        if (a->is_const) {
                *ret = a->k;
                return;
        }
        /* The guards against runaway evaluation live here, at the hops from
         * one attribute to another, since within one tree the work and the
         * recursion are bounded by its size and its height. */
        int cost = a->expr->depth + CA_NESTED_EVAL_COST;
        if (ev->depth + cost > CA_MAX_EVAL_DEPTH || !ca_eval_charge(ev, 1) ||
            !ca_eval_enter(ev, scope, a)) {
                *ret = ca_error(); /* runaway, or a reference cycle */
                return;
        }
        ev->depth += cost;
        const ClassAd *saved = ev->cur;
        ev->cur = scope;
        ca_eval(ev, a->expr, ret);
        ev->cur = saved;
        ev->depth -= cost;
        ca_eval_leave(ev);
}

static uint64_t budget_hits;

uint64_t classad_budget_hits(void) {
        return budget_hits;
}

bool ca_eval_charge_slow(CaEval *ev, uint64_t n) {
        if (ev->steps <= CA_MAX_EVAL_STEPS)
                budget_hits++; /* the first time this evaluation runs out */
        (void) n;
        ev->steps = CA_MAX_EVAL_STEPS + 1;
        return false;
}

bool ca_eval_enter(CaEval *ev, const ClassAd *ad, const void *key) {
        if (ev->nstack == (int) ELEMENTSOF(ev->stack))
                return false;
        for (int i = 0; i < ev->nstack; i++)
                if (ev->stack[i].key == key && ev->stack[i].ad == ad)
                        return false;
        ev->stack[ev->nstack++] = (CaEvalFrame){ ad, key };
        return true;
}

/* Look name up in ad and the ads enclosing it. */
static inline const CaAttr *lookup_chain(const ClassAd *ad, const CaAtom *atom, const ClassAd **ret_scope) {
        for (; ad; ad = ad->parent) {
                const CaAttr *a = ca_ad_lookup(ad, atom);
                if (a) {
                        *ret_scope = ad;
                        return a;
                }
        }
        return NULL;
}

/* Where an unqualified reference resolves: the attribute and its ad. */
static const CaAttr *resolve_unqualified(CaEval *ev, const CaAtom *atom, bool absolute, const ClassAd **ret_scope) {
        const ClassAd *start = absolute ? root_of(ev->cur) : ev->cur;
        const CaAttr *a = lookup_chain(start, atom, ret_scope);
        if (a || absolute || ev->mode != CA_MODE_OLD)
                return a;
        const ClassAd *target = ca_eval_target(ev, ev->cur);
        return target ? lookup_chain(target, atom, ret_scope) : NULL;
}

void ca_eval_attr_ref(CaEval *ev, const CaAtom *atom, CaValue *ret) {
        const ClassAd *scope;
        const CaAttr *a = resolve_unqualified(ev, atom, false, &scope);
        if (a) {
                eval_attr_in(ev, scope, a, ret);
                return;
        }
        const ClassAd *sp_ad;
        if (special_ad(ev, special_of(atom), &sp_ad)) {
                *ret = ad_value(sp_ad);
                return;
        }
        if (ev->mode == CA_MODE_OLD && atom == ca_atom_wk(CA_WK_CURRENTTIME)) {
                *ret = ca_int(ca_now());
                return;
        }
        *ret = ca_undefined();
}

/* base.name where base evaluated to v (consumed). */
_noinline_ static void select_attr(CaEval *ev, CaValue *v, const CaAtom *atom, CaValue *ret) {
        switch (v->type) {
        case CA_UNDEFINED:
                *ret = ca_undefined();
                return;
        case CA_AD: {
                const ClassAd *scope;
                const CaAttr *a = lookup_chain(v->u.ad, atom, &scope);
                if (a)
                        eval_attr_in(ev, scope, a, ret);
                else
                        *ret = ca_undefined();
                /* an ad made during evaluation dies with v: the value must not borrow from it */
                if (v->u.ad->refs == 1 && ca_value_detach(ret) < 0)
                        *ret = ca_error();
                ca_value_drop(v);
                return;
        }
        case CA_LIST: {
                /* {ad1, ad2}.name is the list of each ad's name */
                uint32_t n = ca_list_len(v);
                CaList *out = ca_list_new(n);
                if (!out) {
                        ca_value_drop(v);
                        *ret = ca_error();
                        return;
                }
                for (uint32_t i = 0; i < n; i++) {
                        CaValue elem;
                        ca_list_elem(ev, v, i, &elem);
                        if (elem.type == CA_AD)
                                select_attr(ev, &elem, atom, &out->u.vals[i]);
                        else {
                                ca_value_drop(&elem);
                                out->u.vals[i] = ca_error();
                        }
                        if (ca_value_detach(&out->u.vals[i]) < 0)
                                out->u.vals[i] = ca_error();
                }
                ca_value_drop(v);
                *ret = ca_list_value(out);
                return;
        }
        default:
                ca_value_drop(v);
                *ret = ca_error();
                return;
        }
}

/* Look up the name of reference node n in ad's own attributes, trying
 * first the position where the name was found last time: ads of one kind
 * (slot ads of one agent, say) list their attributes in the same order,
 * so the guess, checked against the entry, saves the hash lookup. */
static inline const CaAttr *lookup_own_at_guess(const ClassAd *ad, const CaNode *n) {
        uint32_t guess = n->nargs;
        if (guess && guess <= ad->n && ad->attrs[guess - 1].atom == n->u.attr.atom)
                return &ad->attrs[guess - 1];
        const CaAttr *a = ca_ad_lookup_own(ad, n->u.attr.atom);
        if (a && a - ad->attrs < CA_MAX_ARGS)
                ((CaNode *) n)->nargs = (uint16_t) (a - ad->attrs + 1); /* a hint only */
        return a;
}

/* What a chained ad inherits: the guess then holds the position in the
 * parent, shared by all the procs of a cluster. */
_noinline_ static const CaAttr *lookup_inherited(const ClassAd *up, const CaNode *n) {
        return lookup_own_at_guess(up, n);
}

/* The name of reference node n in ad alone (with what it is chained to). */
static inline const CaAttr *lookup_at_guess(const ClassAd *ad, const CaNode *n) {
        const CaAttr *a = lookup_own_at_guess(ad, n);
        if (a || _likely_(!ad->chain))
                return a;
        return lookup_inherited(ad->chain, n);
}

/* lookup_chain with the guess for the first ad. */
static inline const CaAttr *lookup_chain_guess(const ClassAd *ad, const CaNode *n, const ClassAd **ret_scope) {
        if (!ad)
                return NULL;
        const CaAttr *a = lookup_at_guess(ad, n);
        if (a) {
                *ret_scope = ad;
                return a;
        }
        return ad->parent ? lookup_chain(ad->parent, n->u.attr.atom, ret_scope) : NULL;
}

/* Whether ad or an enclosing ad (or what one is chained to) defines a
 * scope name as an attribute. */
static bool defines_scope_name(const ClassAd *ad, const CaAtom *atom) {
        for (; ad; ad = ad->parent)
                if ((ad->has_special || (ad->chain && ad->chain->has_special)) && ca_ad_lookup(ad, atom))
                        return true;
        return false;
}

/* Whether no attribute of ad, nor of what it is chained to, is called
 * TARGET, MY...: then TARGET.x is the other ad's x. */
static inline bool plain_scopes(const ClassAd *ad) {
        return !ad->no_fast || (!ad->has_special && ad->chain && !ad->chain->has_special);
}

_noinline_ static void eval_attr_node(CaEval *ev, const CaNode *n, CaValue *ret) {
        const CaAtom *atom = n->u.attr.atom;
        if (!n->u.attr.base) {
                if (n->flags & CA_NF_ABSOLUTE) {
                        const ClassAd *scope;
                        const CaAttr *a = resolve_unqualified(ev, atom, true, &scope);
                        if (a)
                                eval_attr_in(ev, scope, a, ret);
                        else
                                *ret = ca_undefined();
                        return;
                }
                /* the common case: found in the current ad or around it */
                const ClassAd *scope;
                const CaAttr *a = lookup_chain_guess(ev->cur, n, &scope);
                if (a)
                        eval_attr_in(ev, scope, a, ret);
                else
                        ca_eval_attr_ref(ev, atom, ret);
                return;
        }
        const CaNode *base = n->u.attr.base;
        /* Fast path for MY.x and TARGET.x: no value for the ad itself. */
        if (n->op == SP_TARGET && ev->cur && !ev->cur->parent && plain_scopes(ev->cur) &&
            (ev->cur == ev->left || ev->cur == ev->right)) {
                /* TARGET.x from the top of one of the two matched ads */
                const ClassAd *target = ev->cur == ev->left ? ev->right : ev->left, *scope;
                const CaAttr *a = lookup_chain_guess(target, n, &scope);
                if (a)
                        eval_attr_in(ev, scope, a, ret);
                else
                        *ret = ca_undefined();
                return;
        }
        if (n->op != SP_NONE) {
                Special sp = (Special) n->op;
                const ClassAd *sp_ad, *scope;
                if (!defines_scope_name(ev->cur, base->u.attr.atom) && special_ad(ev, sp, &sp_ad)) {
                        const CaAttr *a = lookup_chain_guess(sp_ad, n, &scope);
                        if (a)
                                eval_attr_in(ev, scope, a, ret);
                        else
                                *ret = ca_undefined();
                        return;
                }
        }
        CaValue v;
        ca_eval(ev, base, &v);
        select_attr(ev, &v, atom, ret);
}

/* The most common leaves of a policy, without the general machinery: a
 * name of the current ad or TARGET.name, when it names a constant. false:
 * take the general path (which also covers enclosing ads, the old-mode
 * TARGET fallback, expressions, cycles). */
static inline bool eval_ref_fast(CaEval *ev, const CaNode *n, CaValue *ret) {
        if (n->kind != CA_N_ATTR)
                return false;
        const ClassAd *cur = ev->cur, *ad;
        if (!cur || cur->no_fast) /* a chained ad too: what it inherits is not a fast leaf */
                return false;
        if (n->op == SP_TARGET) {
                if (cur->parent || (cur != ev->left && cur != ev->right))
                        return false;
                ad = cur == ev->left ? ev->right : ev->left;
        } else if (!n->u.attr.base && !(n->flags & CA_NF_ABSOLUTE))
                ad = cur;
        else
                return false;
        /* (the inherited attributes of a chained TARGET take the general path) */
        const CaAttr *a = lookup_own_at_guess(ad, n);
        if (!a || !a->is_const)
                return false;
        *ret = a->k;
        return true;
}

/* ca_eval with the fast leaves inline. */
static inline void eval_fast(CaEval *ev, const CaNode *n, CaValue *ret) {
        if (n->flags & CA_NF_CONST)
                *ret = n->u.lit;
        else if (!eval_ref_fast(ev, n, ret))
                ca_eval_node(ev, n, ret);
}

_noinline_ static void eval_subscript(CaEval *ev, const CaNode *n, CaValue *ret) {
        CaValue base, idx;
        ca_eval(ev, n->u.op.a, &base);
        ca_eval(ev, n->u.op.b, &idx);
        if (base.type == CA_ERROR || idx.type == CA_ERROR)
                *ret = ca_error();
        else if (base.type == CA_UNDEFINED || idx.type == CA_UNDEFINED)
                *ret = ca_undefined();
        else if (base.type == CA_LIST && idx.type == CA_INT) {
                if (idx.u.i < 0 || (uint64_t) idx.u.i >= ca_list_len(&base))
                        *ret = ca_error();
                else
                        ca_list_elem(ev, &base, (uint32_t) idx.u.i, ret);
        } else if (base.type == CA_AD && idx.type == CA_STRING) {
                const CaAtom *atom = ca_atom(idx.u.s->s, idx.u.s->len);
                const CaAttr *a = atom ? ca_ad_lookup(base.u.ad, atom) : NULL;
                if (a)
                        eval_attr_in(ev, base.u.ad, a, ret);
                else
                        *ret = atom ? ca_undefined() : ca_error();
                /* an ad made during evaluation dies with base: the value must not borrow from it */
                if (base.u.ad->refs == 1 && ca_value_detach(ret) < 0)
                        *ret = ca_error();
        } else
                *ret = ca_error();
        ca_value_drop(&base);
        ca_value_drop(&idx);
}

/* HTCondor's && and ||: short-circuit, UNDEFINED-aware, non-boolean is
 * ERROR. A chain a && b && c (left-deep as parsed) is walked in one loop,
 * operand by operand, which gives the nested result without recursing. */
typedef enum Tri { TRI_FALSE, TRI_TRUE, TRI_UNDEF, TRI_ERROR } Tri;

static inline Tri tri_of(CaValue *v) {
        bool b;
        Tri t;
        if (v->type == CA_UNDEFINED)
                return TRI_UNDEF;
        if (v->type == CA_ERROR)
                return TRI_ERROR;
        t = ca_to_bool(v, &b) ? (b ? TRI_TRUE : TRI_FALSE) : TRI_ERROR;
        ca_value_drop(v);
        return t;
}

/* A comparison (< <= > >= == !=) of two integers, two numbers or two
 * strings, as ca_op_apply decides it; false: other types, for the
 * general path. */
static inline bool cmp_scalars(CaOp op, const CaValue *a, const CaValue *b, bool *ret) {
        int c;
        if (a->type == CA_INT && b->type == CA_INT)
                c = a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
        else if ((a->type == CA_REAL || a->type == CA_INT) && (b->type == CA_REAL || b->type == CA_INT)) {
                double x = a->type == CA_REAL ? a->u.r : (double) a->u.i;
                double y = b->type == CA_REAL ? b->u.r : (double) b->u.i;
                if (x != x || y != y) { /* NaN is unordered: only != holds */
                        *ret = op == CA_OP_NE;
                        return true;
                }
                c = x < y ? -1 : x > y;
        } else if (a->type == CA_STRING && b->type == CA_STRING) {
                /* == on strings ignores case; lengths differ, strings differ */
                if (op == CA_OP_EQ || op == CA_OP_NE)
                        c = a->u.s->len != b->u.s->len || strcasecmp(a->u.s->s, b->u.s->s) != 0;
                else
                        c = strcasecmp(a->u.s->s, b->u.s->s);
        } else
                return false;
        *ret = ca_cmp_holds(op, c);
        return true;
}

/* The comparisons policies are made of (TARGET.Memory >= RequestMemory,
 * Arch == "X86_64") between two fast leaves, straight to a truth value.
 * false: not such a comparison, or not of two numbers or two strings. */
static inline bool cmp_fast(CaEval *ev, const CaNode *n, Tri *ret) {
        if (n->kind != CA_N_OP || n->op < CA_OP_LT || n->op > CA_OP_NE)
                return false;
        CaValue a, b;
        const CaNode *na = n->u.op.a, *nb = n->u.op.b;
        if (na->flags & CA_NF_CONST)
                a = na->u.lit;
        else if (!eval_ref_fast(ev, na, &a))
                return false;
        if (nb->flags & CA_NF_CONST)
                b = nb->u.lit;
        else if (!eval_ref_fast(ev, nb, &b))
                return false;
        bool r;
        if (!cmp_scalars(n->op, &a, &b, &r))
                return false; /* constants are static: nothing to release */
        *ret = r ? TRI_TRUE : TRI_FALSE;
        return true;
}

static inline Tri eval_tri(CaEval *ev, const CaNode *n) {
        Tri t;
        if (cmp_fast(ev, n, &t))
                return t;
        CaValue v;
        eval_fast(ev, n, &v);
        return tri_of(&v);
}

_noinline_ static void eval_logical(CaEval *ev, const CaNode *n, CaValue *ret) {
        bool is_and = n->op == CA_OP_AND;
        Tri stop = is_and ? TRI_FALSE : TRI_TRUE; /* false && x, true || x */
        const CaNode *spine[32];
        int k = 0;
        const CaNode *m = n;
        while (k < (int) ELEMENTSOF(spine) && m->kind == CA_N_OP && m->op == n->op && !(m->flags & CA_NF_CONST)) {
                spine[k++] = m;
                m = m->u.op.a;
        }
        Tri acc = eval_tri(ev, m);
        while (k > 0 && acc != TRI_ERROR && acc != stop) {
                Tri t = eval_tri(ev, spine[--k]->u.op.b);
                if (t == TRI_ERROR || t == TRI_UNDEF)
                        acc = t;
                else if (acc != TRI_UNDEF || t == stop)
                        acc = t; /* true && t is t; undefined && false is false */
                /* else: undefined && true stays undefined */
        }
        *ret = acc == TRI_ERROR ? ca_error() : acc == TRI_UNDEF ? ca_undefined() : ca_bool(acc == TRI_TRUE);
}

_noinline_ static void eval_op(CaEval *ev, const CaNode *n, CaValue *ret) {
        CaValue a, b;
        switch (n->op) {
        case CA_OP_PAREN:
                eval_fast(ev, n->u.op.a, ret);
                return;
        case CA_OP_AND:
        case CA_OP_OR:
                eval_logical(ev, n, ret);
                return;
        case CA_OP_COND: {
                eval_fast(ev, n->u.op.a, &a);
                bool c;
                if (a.type == CA_UNDEFINED || a.type == CA_ERROR)
                        *ret = a;
                else if (!ca_to_bool(&a, &c)) {
                        ca_value_drop(&a);
                        *ret = ca_error();
                } else
                        eval_fast(ev, c ? n->u.op.b : n->u.op.c, ret);
                return;
        }
        case CA_OP_ELVIS:
                ca_eval(ev, n->u.op.a, ret);
                if (ret->type == CA_UNDEFINED)
                        ca_eval(ev, n->u.op.b, ret);
                return;
        case CA_OP_SUBSCRIPT:
                eval_subscript(ev, n, ret);
                return;
        case CA_OP_NEG: case CA_OP_POS: case CA_OP_NOT: case CA_OP_BNOT:
                ca_eval(ev, n->u.op.a, &a);
                ca_op_apply(n->op, &a, NULL, ret);
                ca_value_drop(&a);
                return;
        default:
                eval_fast(ev, n->u.op.a, &a);
                eval_fast(ev, n->u.op.b, &b);
                bool r;
                if (n->op >= CA_OP_LT && n->op <= CA_OP_NE && cmp_scalars(n->op, &a, &b, &r)) {
                        *ret = ca_bool(r);
                        ca_value_drop(&a);
                        ca_value_drop(&b);
                        return;
                }
                ca_op_apply(n->op, &a, &b, ret);
                ca_value_drop(&a);
                ca_value_drop(&b);
                return;
        }
}

void ca_eval_node(CaEval *ev, const CaNode *n, CaValue *ret) {
        switch (n->kind) {
        case CA_N_LITERAL:
                *ret = n->u.lit;
                break;
        case CA_N_ATTR:
                eval_attr_node(ev, n, ret);
                break;
        case CA_N_OP:
                eval_op(ev, n, ret);
                break;
        case CA_N_CALL:
                if (n->u.call.fn && ca_eval_charge(ev, 1))
                        n->u.call.fn->impl(ev, (const CaNode *const *) n->u.call.args, n->nargs, ret);
                else
                        *ret = ca_error(); /* unknown function, or out of budget */
                break;
        case CA_N_LIST:
                *ret = (CaValue){ .type = CA_LIST, .u.l = { n->u.list, ev->cur } };
                break;
        case CA_N_AD:
                *ret = (CaValue){ .type = CA_AD, .u.ad = n->u.ad };
                break;
        default:
                *ret = ca_error();
                break;
        }
}

const CaNode *ca_resolve_ref(CaEval *ev, const CaNode *ref, const ClassAd **ret_scope) {
        if (ref->kind != CA_N_ATTR)
                return NULL;
        const ClassAd *scope;
        const CaAttr *a = NULL;
        if (!ref->u.attr.base)
                a = resolve_unqualified(ev, ref->u.attr.atom, ref->flags & CA_NF_ABSOLUTE, &scope);
        else {
                CaValue v;
                ca_eval(ev, ref->u.attr.base, &v);
                if (v.type == CA_AD) {
                        a = lookup_chain(v.u.ad, ref->u.attr.atom, &scope);
                        /* the ad outlives v: it belongs to a tree or to the caller */
                }
                ca_value_drop(&v);
        }
        if (!a)
                return NULL;
        if (ret_scope)
                *ret_scope = scope;
        return a->expr;
}

CaNode *ca_fold(CaArena *arena, CaNode *n, CaMode mode) {
        CaEval ev;
        ca_eval_init(&ev, mode, NULL, NULL, NULL);
        CaValue v;
        ca_eval(&ev, n, &v);
        if (v.type == CA_LIST || v.type == CA_AD) {
                ca_value_drop(&v);
                return n; /* structured results stay expressions */
        }
        if (v.type == CA_STRING && v.u.s->refs >= 0) {
                CaStr *s = ca_arena_str(arena, v.u.s->s, v.u.s->len);
                ca_value_drop(&v);
                if (!s)
                        return n;
                v = ca_string_take(s);
        }
        CaNode *f = ca_arena_alloc(arena, sizeof(CaNode));
        if (!f)
                return n; /* folding is an optimisation */
        f->kind = CA_N_FOLDED;
        f->flags = CA_NF_CONST;
        f->depth = n->depth;
        f->u.folded.k = v;
        f->u.folded.orig = n;
        return f;
}

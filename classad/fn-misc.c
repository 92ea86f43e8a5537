/* SPDX-License-Identifier: Apache-2.0 */
/* fn-misc.c — ifThenElse, eval, unparse, unresolved, debug (fnCall.cpp),
 * evalInEachContext, countMatches, userHome, userMap (compat_classad.cpp). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "fn-internal.h"

#include <pcre2.h>
#include <pwd.h>
#include <stdlib.h>

/* Make v independent of the trees it came from, for values that may
 * outlive them. Lazy lists are evaluated element by element here (in ev)
 * rather than copied, so that their elements keep the scope they had. */
static void own_value(CaEval *ev, CaValue *v) {
        if (v->type == CA_LIST && v->u.l.list->lazy) {
                uint32_t n = ca_list_len(v);
                CaList *l = ca_list_new(n);
                if (!l) {
                        ca_value_clear(v);
                        *v = ca_error();
                        return;
                }
                for (uint32_t i = 0; i < n; i++) {
                        ca_list_elem(ev, v, i, &l->u.vals[i]);
                        own_value(ev, &l->u.vals[i]);
                }
                ca_value_clear(v);
                *v = ca_list_value(l);
                return;
        }
        if (ca_value_detach(v) < 0) {
                ca_value_clear(v);
                *v = ca_error();
        }
}

/* The list literals of a tree (those a value may borrow from it). */
typedef struct ListSet {
        const CaList **l;
        size_t n, cap;
        bool oom;
} ListSet;

/* Collect the list literals of a tree; its ads that have no enclosing ad
 * get `scope`, as HTCondor's eval() gives the parsed expression the
 * current ad as parent scope. */
static void collect_lists(const CaNode *n, ListSet *set, const ClassAd *scope, int depth) {
        if (!n || depth > CA_MAX_PARSE_DEPTH + 10)
                return;
        switch (n->kind) {
        case CA_N_OP:
                collect_lists(n->u.op.a, set, scope, depth + 1);
                collect_lists(n->u.op.b, set, scope, depth + 1);
                collect_lists(n->u.op.c, set, scope, depth + 1);
                break;
        case CA_N_CALL:
                for (uint32_t i = 0; i < n->nargs; i++)
                        collect_lists(n->u.call.args[i], set, scope, depth + 1);
                break;
        case CA_N_ATTR:
                collect_lists(n->u.attr.base, set, scope, depth + 1);
                break;
        case CA_N_AD:
                if (!n->u.ad->parent)
                        n->u.ad->parent = scope;
                for (uint32_t i = 0; i < n->u.ad->n; i++)
                        collect_lists(n->u.ad->attrs[i].expr, set, n->u.ad, depth + 1);
                break;
        case CA_N_LIST:
                if (set->n == set->cap) {
                        size_t cap = set->cap ? 2 * set->cap : 8;
                        const CaList **nl = realloc(set->l, cap * sizeof(*nl));
                        if (!nl) {
                                set->oom = true;
                                return;
                        }
                        set->l = nl;
                        set->cap = cap;
                }
                set->l[set->n++] = n->u.list;
                if (n->u.list->lazy)
                        for (uint32_t i = 0; i < n->u.list->n; i++)
                                collect_lists(n->u.list->u.items[i], set, scope, depth + 1);
                break;
        default:
                break;
        }
}

static bool in_set(const ListSet *set, const CaList *l) {
        for (size_t i = 0; i < set->n; i++)
                if (set->l[i] == l)
                        return true;
        return false;
}

/* The result of eval() before its temporary tree goes: lists of that tree
 * are evaluated into values, strings and ads copied; a list of some other
 * tree (eval("L") for an attribute L) is kept as it is, as HTCondor keeps
 * it (and prints it as its expressions). */
static void own_eval_result(CaEval *ev, CaValue *v, const ListSet *tmp) {
        if (v->type == CA_LIST && v->u.l.list->lazy) {
                if (!tmp->oom && !in_set(tmp, v->u.l.list))
                        return;
                uint32_t n = ca_list_len(v);
                CaList *l = ca_list_new(n);
                if (!l) {
                        ca_value_clear(v);
                        *v = ca_error();
                        return;
                }
                for (uint32_t i = 0; i < n; i++) {
                        ca_list_elem(ev, v, i, &l->u.vals[i]);
                        own_eval_result(ev, &l->u.vals[i], tmp);
                }
                ca_value_clear(v);
                *v = ca_list_value(l);
                return;
        }
        if (v->type == CA_LIST) {
                for (uint32_t i = 0; i < v->u.l.list->n; i++)
                        own_eval_result(ev, &v->u.l.list->u.vals[i], tmp);
                return;
        }
        if (ca_value_detach(v) < 0) {
                ca_value_clear(v);
                *v = ca_error();
        }
}

/* ifThenElse(c, a, b): lazy; c may be boolean or a number (non-zero is
 * true); UNDEFINED c is UNDEFINED, any other type ERROR. */
static void fn_ifthenelse(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 3, 3, ret))
                return;
        CaValue c;
        bool b;
        ca_eval(ev, args[0], &c);
        if (c.type == CA_UNDEFINED)
                *ret = ca_undefined();
        else if (!ca_to_bool(&c, &b))
                *ret = ca_error();
        else
                ca_eval(ev, args[b ? 1 : 2], ret);
        ca_value_clear(&c);
}

/* eval(s): s through string() (so UNDEFINED is ERROR), parsed and
 * evaluated in the current scope; a parse error is ERROR. */
static void fn_eval(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v, s;
        ca_eval(ev, args[0], &v);
        FnConv c = fn_conv_string(&v, &s);
        ca_value_clear(&v);
        /* the text parsed counts against the budget, a step a byte */
        if (c != FN_CONV_OK || ev->depth >= CA_MAX_EVAL_DEPTH || !ca_eval_charge(ev, fn_strlen(&s))) {
                ca_value_clear(&s);
                *ret = ca_error();
                return;
        }
        CaArena arena = {};
        CaNode *n;
        CaError err;
        if (ca_parse_expr(&arena, fn_str(&s), fn_strlen(&s), ev->mode, &n, &err) < 0 ||
                ev->depth + n->depth + CA_NESTED_EVAL_COST > CA_MAX_EVAL_DEPTH) {
                *ret = ca_error();
        } else {
                ListSet tmp = {};
                collect_lists(n, &tmp, ev->cur, 0);
                /* the recursion this tree may add, and the frames in between */
                ev->depth += n->depth + CA_NESTED_EVAL_COST;
                ca_eval(ev, n, ret);
                own_eval_result(ev, ret, &tmp);
                ev->depth -= n->depth + CA_NESTED_EVAL_COST;
                free(tmp.l);
        }
        ca_arena_release(&arena);
        ca_value_clear(&s);
}

/* unparse(attr): the text of attr's expression in the current ad, not
 * evaluated; "" when the ad has no such attribute. HTCondor looks the
 * reference's own text up with ClassAd::Lookup, so only a plain name is
 * found there (not MY.x, not enclosing ads, not TARGET). ERROR unless the
 * one argument is an attribute reference. */
static void fn_unparse(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (nargs != 1 || args[0]->kind != CA_N_ATTR) {
                *ret = ca_error();
                return;
        }
        const CaNode *ref = args[0];
        const CaAttr *a = NULL;
        if (ev->cur && !ref->u.attr.base && !(ref->flags & CA_NF_ABSOLUTE))
                a = ca_ad_lookup(ev->cur, ref->u.attr.atom);
        CaBuf b = {};
        if (a)
                ca_unparse_node(&b, a->expr);
        /* the text written counts against the budget, a step a byte */
        if (!ca_eval_charge(ev, b.len)) {
                ca_buf_free(&b);
                *ret = ca_error();
                return;
        }
        *ret = ca_buf_value(&b);
}

/* ---- unresolved(): the external references of an expression ---- */

typedef struct Refs {
        char **s;
        size_t n, cap;
        bool oom;
} Refs;

/* Insert into a case-insensitive sorted set (classad::References). */
static void refs_add(Refs *r, const char *p, size_t len) {
        size_t lo = 0, hi = r->n;
        char *name = strndup(p, len);
        if (!name) {
                r->oom = true;
                return;
        }
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcasecmp(r->s[mid], name);
                if (c == 0) {
                        free(name);
                        return;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (r->n == r->cap) {
                size_t cap = r->cap ? 2 * r->cap : 8;
                char **ns = realloc(r->s, cap * sizeof(*ns));
                if (!ns) {
                        free(name);
                        r->oom = true;
                        return;
                }
                r->s = ns;
                r->cap = cap;
        }
        memmove(r->s + lo + 1, r->s + lo, (r->n - lo) * sizeof(char *));
        r->s[lo] = name;
        r->n++;
}

static void refs_free(Refs *r) {
        for (size_t i = 0; i < r->n; i++)
                free(r->s[i]);
        free(r->s);
}

static const CaAttr *find_in_chain(const ClassAd *ad, const CaAtom *atom, const ClassAd **ret_scope) {
        for (; ad; ad = ad->parent) {
                const CaAttr *a = ca_ad_lookup(ad, atom);
                if (a) {
                        *ret_scope = ad;
                        return a;
                }
        }
        return NULL;
}

/* ClassAd::_GetExternalReferences with full names: names looked up from
 * cur (and its enclosing ads) that are not found; found ones are followed
 * into their expressions. base.name with an UNDEFINED base (TARGET.x
 * outside a match) is recorded as "base.name". false: give up. */
static bool walk_refs(CaEval *ev, const CaNode *n, const ClassAd *cur, Refs *refs, int depth) {
        if (!n)
                return true;
        if (depth >= CA_MAX_EVAL_DEPTH)
                return false;
        switch (n->kind) {
        case CA_N_LITERAL:
        case CA_N_FOLDED: /* constant: no references */
                return true;
        case CA_N_ATTR: {
                const ClassAd *start = cur, *scope;
                CaValue b = ca_undefined(); /* holds the base ad while we walk */
                if (n->u.attr.base) {
                        const ClassAd *saved = ev->cur;
                        ev->cur = cur;
                        ca_eval(ev, n->u.attr.base, &b);
                        ev->cur = saved;
                        if (b.type == CA_UNDEFINED) {
                                CaBuf full = {};
                                ca_unparse_node(&full, n->u.attr.base);
                                ca_buf_putc(&full, '.');
                                ca_buf_puts(&full, n->u.attr.spelling);
                                if (full.oom)
                                        refs->oom = true;
                                else
                                        refs_add(refs, full.p, full.len);
                                ca_buf_free(&full);
                                return true;
                        }
                        if (b.type != CA_AD) {
                                ca_value_clear(&b);
                                return false;
                        }
                        start = b.u.ad;
                } else if (n->flags & CA_NF_ABSOLUTE) {
                        while (start && start->parent)
                                start = start->parent;
                }
                const CaAttr *a = find_in_chain(start, n->u.attr.atom, &scope);
                bool ok = true;
                if (!a)
                        refs_add(refs, n->u.attr.spelling, strlen(n->u.attr.spelling));
                else
                        ok = walk_refs(ev, a->expr, scope, refs, depth + 1);
                ca_value_clear(&b);
                return ok;
        }
        case CA_N_OP:
                return walk_refs(ev, n->u.op.a, cur, refs, depth + 1) && walk_refs(ev, n->u.op.b, cur, refs, depth + 1) &&
                       walk_refs(ev, n->u.op.c, cur, refs, depth + 1);
        case CA_N_CALL:
                for (uint32_t i = 0; i < n->nargs; i++)
                        if (!walk_refs(ev, n->u.call.args[i], cur, refs, depth + 1))
                                return false;
                return true;
        case CA_N_LIST:
                if (n->u.list->lazy)
                        for (uint32_t i = 0; i < n->u.list->n; i++)
                                if (!walk_refs(ev, n->u.list->u.items[i], cur, refs, depth + 1))
                                        return false;
                return true;
        case CA_N_AD:
                for (uint32_t i = 0; i < n->u.ad->n; i++)
                        if (!walk_refs(ev, n->u.ad->attrs[i].expr, cur, refs, depth + 1))
                                return false;
                return true;
        default:
                return false;
        }
}

/* unresolved(attr [, pattern]): the references of attr's expression that
 * do not resolve in this ad, sorted case-insensitively and joined with
 * "," (a TARGET. prefix removed); with a pattern, whether any of them
 * matches it (PCRE, caseless). UNDEFINED when attr names nothing; ERROR
 * unless the first argument is an attribute reference (hasRefs). */
static void fn_unresolved(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (nargs < 1 || nargs > 2 || args[0]->kind != CA_N_ATTR) {
                *ret = ca_error();
                return;
        }
        const ClassAd *scope = NULL;
        const CaNode *expr = ca_resolve_ref(ev, args[0], &scope);
        if (!expr) {
                *ret = ca_undefined();
                return;
        }
        pcre2_code *re = NULL;
        if (nargs == 2) {
                CaValue p;
                ca_eval(ev, args[1], &p);
                if (p.type == CA_STRING)
                        re = fn_re_compile_caseless(fn_str(&p));
                ca_value_clear(&p);
                if (!re) {
                        *ret = ca_error();
                        return;
                }
        }
        Refs refs = {};
        bool walked = ev->cur && walk_refs(ev, expr, scope, &refs, 0);
        CaBuf b = {};
        bool hit = false;
        for (size_t i = 0; walked && i < refs.n && !hit; i++) {
                const char *name = refs.s[i];
                if (strncasecmp(name, "target.", 7) == 0)
                        name += 7;
                if (re) {
                        hit = fn_re_match_notempty(ev, re, name, strlen(name));
                } else {
                        if (b.len)
                                ca_buf_putc(&b, ',');
                        ca_buf_puts(&b, name);
                }
        }
        if (re) {
                *ret = ca_bool(hit);
                ca_buf_free(&b);
                fn_re_free(re);
        } else {
                *ret = refs.oom ? (ca_buf_free(&b), ca_error()) : ca_buf_value(&b);
        }
        refs_free(&refs);
}

/* debug(x): x's value (HTCondor also logs the evaluation at D_FULLDEBUG). */
static void fn_debug(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (fn_arity(nargs, 1, 1, ret))
                ca_eval(ev, args[0], ret);
}

/* Evaluate n with the ad as the only scope (no match context), keeping
 * the caller's depth, budget and cycle detection (evaluateInContext). */
static void eval_in_ad(CaEval *ev, const CaNode *n, const ClassAd *ad, CaValue *ret) {
        CaEval *sub = malloc(sizeof(*sub));
        if (!sub) {
                *ret = ca_error();
                return;
        }
        ca_eval_init(sub, ev->mode, ad, NULL, NULL);
        sub->depth = ev->depth;
        sub->steps = ev->steps;
        sub->nstack = ev->nstack;
        memcpy(sub->stack, ev->stack, (size_t) ev->nstack * sizeof(ev->stack[0]));
        ca_eval(sub, n, ret);
        if (ad->refs >= 0) /* the ad may go with its list: do not borrow from it */
                own_value(sub, ret);
        ev->steps = sub->steps;
        free(sub);
}

/* evalInEachContext(expr, ads) / countMatches(expr, ads): expr (if an
 * attribute reference that resolves, the expression it names) evaluated
 * in each ad of the list. Elements that are not ads give ERROR, or
 * UNDEFINED when UNDEFINED. evalInEachContext returns the list of results
 * (UNDEFINED for an UNDEFINED list); countMatches the number of results
 * that are true or non-zero (0 for an UNDEFINED list). A non-list is
 * ERROR (evalInEachContext_func). */
static void eval_in_each(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool count) {
        if (!fn_arity(nargs, 2, 2, ret))
                return;
        const CaNode *expr = args[0];
        if (expr->kind == CA_N_ATTR) {
                const ClassAd *scope;
                const CaNode *target = ca_resolve_ref(ev, expr, &scope);
                if (target)
                        expr = target;
        }
        CaValue l;
        ca_eval(ev, args[1], &l);
        if (l.type != CA_LIST) {
                *ret = l.type != CA_UNDEFINED ? ca_error() : count ? ca_int(0) : ca_undefined();
                ca_value_clear(&l);
                return;
        }
        uint32_t n = ca_list_len(&l);
        CaList *out = count ? NULL : ca_list_new(n);
        int64_t matches = 0;
        if (!count && !out) {
                ca_value_clear(&l);
                *ret = ca_error();
                return;
        }
        for (uint32_t i = 0; i < n; i++) {
                CaValue e, r;
                bool b;
                ca_list_elem(ev, &l, i, &e);
                if (e.type == CA_AD)
                        eval_in_ad(ev, expr, e.u.ad, &r);
                else
                        r = e.type == CA_UNDEFINED ? ca_undefined() : ca_error();
                ca_value_clear(&e);
                if (count) {
                        if (ca_to_bool(&r, &b) && b)
                                matches++;
                        ca_value_clear(&r);
                } else {
                        out->u.vals[i] = r;
                }
        }
        ca_value_clear(&l);
        *ret = count ? ca_int(matches) : ca_list_value(out);
}

static void fn_evalineachcontext(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        eval_in_each(ev, args, nargs, ret, false);
}

static void fn_countmatches(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        eval_in_each(ev, args, nargs, ret, true);
}

/* HTCondor's CLASSAD_ENABLE_USER_HOME knob (default false), read the way
 * HTCondor reads configuration from the environment. */
static bool user_home_enabled(void) {
        const char *v = getenv("_CONDOR_CLASSAD_ENABLE_USER_HOME");
        return v && (strcasecmp(v, "true") == 0 || strcasecmp(v, "yes") == 0 || strcasecmp(v, "t") == 0 ||
                     strcasecmp(v, "y") == 0 || strcmp(v, "1") == 0);
}

/* userHome(user [, default]): the user's home directory from getpwnam();
 * when it cannot be had, a non-empty string default, else UNDEFINED (or
 * ERROR for a non-string user). Disabled unless CLASSAD_ENABLE_USER_HOME,
 * as in HTCondor (userHome_func). */
static void fn_userhome(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 2, ret))
                return;
        CaValue user, dflt = ca_undefined();
        if (nargs == 2)
                ca_eval(ev, args[1], &dflt);
        bool have_default = dflt.type == CA_STRING && fn_strlen(&dflt) > 0;
        ca_eval(ev, args[0], &user);

        if (user.type == CA_UNDEFINED && !have_default) {
                *ret = ca_undefined();
        } else if (user.type != CA_STRING) {
                *ret = have_default ? ca_value_copy(&dflt) : ca_error();
        } else {
                struct passwd *pw = user_home_enabled() ? getpwnam(fn_str(&user)) : NULL;
                if (pw && pw->pw_dir)
                        *ret = ca_string(pw->pw_dir);
                else
                        *ret = have_default ? ca_value_copy(&dflt) : ca_undefined();
        }
        ca_value_clear(&user);
        ca_value_clear(&dflt);
}

/* userMap(map, user [, preferred [, default]]): glean configures no user
 * maps, so every lookup misses: UNDEFINED, or the default when given.
 * Non-string map or user: ERROR if either is ERROR, else the same
 * (userMap_func). */
static void fn_usermap(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 2, 4, ret))
                return;
        CaValue v[4] = { ca_undefined(), ca_undefined(), ca_undefined(), ca_undefined() };
        for (uint32_t i = 0; i < nargs; i++)
                ca_eval(ev, args[i], &v[i]);
        if ((v[0].type != CA_STRING || v[1].type != CA_STRING) && (v[0].type == CA_ERROR || v[1].type == CA_ERROR))
                *ret = ca_error();
        else if (nargs < 4)
                *ret = ca_undefined();
        else {
                *ret = v[3];
                v[3] = ca_undefined();
        }
        fn_clear(v, 4);
}

static const CaFunc fns[] = {
        { "ifThenElse", fn_ifthenelse, CA_FN_PURE },
        { "eval", fn_eval, 0 },
        { "unparse", fn_unparse, 0 },
        { "unresolved", fn_unresolved, 0 },
        { "debug", fn_debug, 0 },
        { "evalInEachContext", fn_evalineachcontext, 0 },
        { "countMatches", fn_countmatches, 0 },
        { "userHome", fn_userhome, 0 },
        { "userMap", fn_usermap, 0 },
};

const CaFnGroup ca_fn_group_misc = { fns, ELEMENTSOF(fns) };

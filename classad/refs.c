/* SPDX-License-Identifier: Apache-2.0 */
/*
 * refs.c — what an expression reads, and whether two ads agree on an
 * attribute: the attribute references of a tree (as HTCondor's
 * GetExternalReferences lists them, without following them), and a
 * fingerprint and an equality of attribute expressions, for matchmakers
 * that group ads agreeing on the attributes in play (autoclusters).
 */
#include "classad-internal.h"

#include <strings.h>

const CaName *classad_name(const char *name) {
        return ca_atom(name, strlen(name));
}

const char *classad_name_str(const CaName *name) {
        return name->spelling;
}

/* ---- references ---- */

/* Functions whose reads the tree does not show: they look names up by
 * string, or walk the references themselves. */
static bool call_is_opaque(const CaNode *n) {
        static const char *const opaque[] = { "eval", "evalInEachContext", "countMatches", "unresolved" };

        if (!n->u.call.fn)
                return false; /* unknown: ERROR, reads nothing */
        for (size_t i = 0; i < ELEMENTSOF(opaque); i++)
                if (strcasecmp(n->u.call.fn->name, opaque[i]) == 0)
                        return true;
        return false;
}

static void walk(const CaNode *n, CaRefFn fn, void *userdata) {
        if (!n)
                return;
        switch (n->kind) {
        case CA_N_LITERAL:
                return;
        case CA_N_FOLDED: /* constant: reads nothing */
                return;
        case CA_N_ATTR:
                if (!n->u.attr.base) {
                        if (n->flags & CA_NF_ABSOLUTE)
                                fn(n->u.attr.atom, CA_REF_MY, userdata);
                        else if (n->u.attr.atom->scope != CA_SCOPE_NONE)
                                fn(NULL, CA_REF_OPAQUE, userdata); /* MY, TARGET ... as a value */
                        else
                                fn(n->u.attr.atom, CA_REF_PLAIN, userdata);
                        return;
                }
                switch (n->op) {
                case CA_SCOPE_MY:
                case CA_SCOPE_SELF:
                        fn(n->u.attr.atom, CA_REF_MY, userdata);
                        return;
                case CA_SCOPE_TARGET:
                        fn(n->u.attr.atom, CA_REF_TARGET, userdata);
                        return;
                default: /* PARENT, ROOT, LEFT, RIGHT, or an expression's attribute */
                        fn(NULL, CA_REF_OPAQUE, userdata);
                        if (n->op == CA_SCOPE_NONE)
                                walk(n->u.attr.base, fn, userdata); /* what the base itself reads */
                        return;
                }
        case CA_N_OP:
                walk(n->u.op.a, fn, userdata);
                walk(n->u.op.b, fn, userdata);
                walk(n->u.op.c, fn, userdata);
                return;
        case CA_N_CALL:
                if (call_is_opaque(n))
                        fn(NULL, CA_REF_OPAQUE, userdata);
                for (uint32_t i = 0; i < n->nargs; i++)
                        walk(n->u.call.args[i], fn, userdata);
                return;
        case CA_N_LIST:
                for (uint32_t i = 0; i < n->u.list->n; i++)
                        walk(n->u.list->u.items[i], fn, userdata);
                return;
        case CA_N_AD:
                /* A record's attributes are looked up by name from within
                 * it, then from MY: its own names are reported as plain
                 * references, which says more than is read, never less. */
                for (uint32_t i = 0; i < n->u.ad->n; i++)
                        if (n->u.ad->attrs[i].atom)
                                walk(n->u.ad->attrs[i].expr, fn, userdata);
                return;
        }
}

void classad_expr_refs(const ClassAdExpr *e, CaRefFn fn, void *userdata) {
        if (e)
                walk(ca_expr_root(e), fn, userdata);
}

bool classad_attr_refs(const ClassAd *ad, const CaName *name, CaRefFn fn, void *userdata) {
        const CaAttr *a = ca_ad_lookup(ad, name);

        if (!a)
                return false;
        walk(a->expr, fn, userdata);
        return true;
}

/* ---- whether Requirements can hold, whatever some attributes are ---- */

typedef struct Vary {
        const ClassAd *ad[2];     /* 0: a (MY of the Requirements), 1: b */
        const CaName *const *names; /* of b */
        size_t n_names;
        const CaAtom *seen[2][64];  /* the attributes followed, per side */
        size_t n_seen[2];
        int side;                   /* of the tree being walked */
        bool reads;                 /* reads one of names, or what cannot be told */
} Vary;

static void vary_ref(const CaName *name, CaRefKind kind, void *userdata);

/* Follows attribute name of side s's ad (false: it has none). */
static bool vary_follow(Vary *x, int s, const CaName *name) {
        const CaAttr *a = ca_ad_lookup(x->ad[s], name);
        int saved = x->side;

        if (!a)
                return false;
        for (size_t i = 0; i < x->n_seen[s]; i++)
                if (x->seen[s][i] == name)
                        return true;
        if (x->n_seen[s] == ELEMENTSOF(x->seen[s])) {
                x->reads = true; /* too deep to tell */
                return true;
        }
        x->seen[s][x->n_seen[s]++] = name;
        x->side = s;
        walk(a->expr, vary_ref, x);
        x->side = saved;
        return true;
}

/* name read in side s's ad: one of b's that vary, or what it reads in
 * turn. false: that ad has no such attribute. */
static bool vary_read(Vary *x, int s, const CaName *name) {
        if (s == 1)
                for (size_t i = 0; i < x->n_names; i++)
                        if (x->names[i] == name) {
                                x->reads = true;
                                return true;
                        }
        return vary_follow(x, s, name);
}

static void vary_ref(const CaName *name, CaRefKind kind, void *userdata) {
        Vary *x = userdata;
        int me = x->side;

        if (x->reads)
                return;
        switch (kind) {
        case CA_REF_OPAQUE:
                x->reads = true;
                break;
        case CA_REF_MY:
                (void) vary_read(x, me, name);
                break;
        case CA_REF_TARGET:
                (void) vary_read(x, !me, name);
                break;
        case CA_REF_PLAIN:
                if (!vary_read(x, me, name))
                        (void) vary_read(x, !me, name); /* in old mode, TARGET's */
                break;
        }
}

/* Whether some top-level conjunct of n (MY a, TARGET b) reads none of the
 * varying names and is false. */
static bool conjunct_false(Vary *x, const CaNode *n, CaMode mode) {
        CaEval ev;
        CaValue v;
        bool no;

        if (n->kind == CA_N_OP && (n->op == CA_OP_AND || n->op == CA_OP_PAREN))
                return conjunct_false(x, n->u.op.a, mode) || (n->op == CA_OP_AND && conjunct_false(x, n->u.op.b, mode));
        x->reads = false;
        x->n_seen[0] = x->n_seen[1] = 0;
        x->side = 0;
        walk(n, vary_ref, x);
        if (x->reads)
                return false;
        ca_eval_init(&ev, mode, x->ad[0], x->ad[0], x->ad[1]);
        ca_eval(&ev, n, &v);
        ca_eval_settle(&ev, &v);
        no = v.type == CA_BOOL && !v.u.b;
        ca_value_drop(&v);
        return no;
}

bool classad_requirements_may_hold(const ClassAd *a, const ClassAd *b, const CaName *const *vary, size_t n_vary,
                                   CaMode mode) {
        const CaAttr *req = ca_ad_lookup(a, ca_atom_wk(CA_WK_REQUIREMENTS));
        Vary x = { .ad = { a, b }, .names = vary, .n_names = n_vary };

        if (!req)
                return false; /* no Requirements: UNDEFINED, never met */
        return !conjunct_false(&x, req->expr, mode);
}

/* ---- fingerprints and equality of trees ---- */

static inline uint64_t mix(uint64_t h, uint64_t v) {
        h ^= v + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
        h *= 0xBF58476D1CE4E5B9ull;
        return h ^ (h >> 31);
}

static uint64_t hash_bytes(uint64_t h, const char *s, size_t n) {
        uint64_t x = 0x9E3779B97F4A7C15ull ^ n, w;

        for (; n >= 8; s += 8, n -= 8) {
                memcpy(&w, s, 8);
                x = mix(x, w);
        }
        w = 0;
        memcpy(&w, s, n);
        return mix(h, mix(x, w));
}

static uint64_t hash_value(uint64_t h, const CaValue *v) {
        uint64_t bits = 0;

        h = mix(h, (uint64_t) v->type);
        switch (v->type) {
        case CA_BOOL:
                return mix(h, v->u.b);
        case CA_INT:
                return mix(h, (uint64_t) v->u.i);
        case CA_REAL:
        case CA_RELTIME:
                memcpy(&bits, &v->u.r, sizeof(bits));
                return mix(h, bits);
        case CA_STRING:
                return hash_bytes(h, v->u.s->s, v->u.s->len);
        case CA_ABSTIME:
                return mix(mix(h, (uint64_t) v->u.at.secs), (uint64_t) (uint32_t) v->u.at.offset);
        default: /* UNDEFINED, ERROR; lists and ads are nodes of their own */
                return h;
        }
}

static bool value_same(const CaValue *a, const CaValue *b) {
        if (a->type != b->type)
                return false;
        switch (a->type) {
        case CA_BOOL:
                return a->u.b == b->u.b;
        case CA_INT:
                return a->u.i == b->u.i;
        case CA_REAL:
        case CA_RELTIME:
                return memcmp(&a->u.r, &b->u.r, sizeof(double)) == 0;
        case CA_STRING:
                return a->u.s->len == b->u.s->len && memcmp(a->u.s->s, b->u.s->s, a->u.s->len) == 0;
        case CA_ABSTIME:
                return a->u.at.secs == b->u.at.secs && a->u.at.offset == b->u.at.offset;
        case CA_UNDEFINED:
        case CA_ERROR:
                return true;
        default:
                return false;
        }
}

/* What of a node is its own (not derived, not a cache): kind, operator
 * or scope code, the flags that change meaning or spelling. */
#define NODE_FLAGS (CA_NF_ABSOLUTE | CA_NF_SPACED)

static uint64_t hash_node(uint64_t h, const CaNode *n) {
        if (!n)
                return mix(h, 0x51);
        h = mix(h, ((uint64_t) n->kind << 16) | ((uint64_t) n->op << 8) | (n->flags & NODE_FLAGS));
        switch (n->kind) {
        case CA_N_LITERAL:
                return hash_value(h, &n->u.lit);
        case CA_N_FOLDED:
                return hash_node(h, n->u.folded.orig);
        case CA_N_ATTR:
                /* most names are spelt as first seen (and share the atom's spelling) */
                if (n->u.attr.spelling == n->u.attr.atom->spelling ||
                    strcmp(n->u.attr.spelling, n->u.attr.atom->spelling) == 0)
                        h = mix(h, n->u.attr.atom->id);
                else
                        h = hash_bytes(h, n->u.attr.spelling, strlen(n->u.attr.spelling));
                return hash_node(h, n->u.attr.base);
        case CA_N_OP:
                return hash_node(hash_node(hash_node(h, n->u.op.a), n->u.op.b), n->u.op.c);
        case CA_N_CALL:
                h = hash_bytes(h, n->u.call.name, strlen(n->u.call.name));
                for (uint32_t i = 0; i < n->nargs; i++)
                        h = hash_node(h, n->u.call.args[i]);
                return mix(h, n->nargs);
        case CA_N_LIST:
                for (uint32_t i = 0; i < n->u.list->n; i++)
                        h = hash_node(h, n->u.list->u.items[i]);
                return mix(h, n->u.list->n);
        case CA_N_AD:
                for (uint32_t i = 0; i < n->u.ad->n; i++) {
                        const CaAttr *a = &n->u.ad->attrs[i];
                        if (a->atom)
                                h = hash_node(hash_bytes(h, a->name, strlen(a->name)), a->expr);
                }
                return h;
        }
        return h;
}

static bool attrs_same(const ClassAd *a, const ClassAd *b);

static bool node_same(const CaNode *a, const CaNode *b) {
        if (!a || !b)
                return a == b;
        if (a->kind != b->kind || a->op != b->op || (a->flags & NODE_FLAGS) != (b->flags & NODE_FLAGS))
                return false;
        switch (a->kind) {
        case CA_N_LITERAL:
                return value_same(&a->u.lit, &b->u.lit);
        case CA_N_FOLDED:
                return node_same(a->u.folded.orig, b->u.folded.orig);
        case CA_N_ATTR:
                return (a->u.attr.spelling == b->u.attr.spelling || strcmp(a->u.attr.spelling, b->u.attr.spelling) == 0) &&
                       node_same(a->u.attr.base, b->u.attr.base);
        case CA_N_OP:
                return node_same(a->u.op.a, b->u.op.a) && node_same(a->u.op.b, b->u.op.b) &&
                       node_same(a->u.op.c, b->u.op.c);
        case CA_N_CALL:
                if (a->nargs != b->nargs || strcmp(a->u.call.name, b->u.call.name) != 0)
                        return false;
                for (uint32_t i = 0; i < a->nargs; i++)
                        if (!node_same(a->u.call.args[i], b->u.call.args[i]))
                                return false;
                return true;
        case CA_N_LIST:
                if (a->u.list->n != b->u.list->n)
                        return false;
                for (uint32_t i = 0; i < a->u.list->n; i++)
                        if (!node_same(a->u.list->u.items[i], b->u.list->u.items[i]))
                                return false;
                return true;
        case CA_N_AD:
                return attrs_same(a->u.ad, b->u.ad);
        }
        return false;
}

/* Records written in trees: the same attributes in the same order. */
static bool attrs_same(const ClassAd *a, const ClassAd *b) {
        uint32_t i = 0, j = 0;

        for (;;) {
                while (i < a->n && !a->attrs[i].atom)
                        i++;
                while (j < b->n && !b->attrs[j].atom)
                        j++;
                if (i == a->n || j == b->n)
                        return i == a->n && j == b->n;
                if (strcmp(a->attrs[i].name, b->attrs[j].name) != 0 || !node_same(a->attrs[i].expr, b->attrs[j].expr))
                        return false;
                i++, j++;
        }
}

uint64_t classad_attr_fingerprint(const ClassAd *ad, const CaName *name) {
        const CaAttr *a = ca_ad_lookup(ad, name);
        uint64_t h;

        if (!a)
                return 0;
        h = hash_node(0x7E, a->expr);
        return h ? h : 1; /* 0 is absence */
}

bool classad_attr_same(const ClassAd *a, const ClassAd *b, const CaName *name) {
        const CaAttr *x = ca_ad_lookup(a, name), *y = ca_ad_lookup(b, name);

        if (!x || !y)
                return x == y;
        return node_same(x->expr, y->expr);
}

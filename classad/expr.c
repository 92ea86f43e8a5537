/* SPDX-License-Identifier: Apache-2.0 */
/* expr.c — stand-alone expressions, and deep copies of trees between arenas. */
#include "classad-internal.h"

#include <stdlib.h>

struct ClassAdExpr {
        CaArena arena;
        CaNode *root;
        ClassAd **tops;  /* records not inside another record */
        size_t ntops;
};

static CaNode *copy(CaArena *dst, const CaNode *n, const ClassAd *parent);

static bool copy_string(CaArena *dst, CaValue *v) {
        if (v->type != CA_STRING)
                return true;
        CaStr *s = ca_arena_str(dst, v->u.s->s, v->u.s->len);
        if (!s)
                return false;
        v->u.s = s;
        return true;
}

static ClassAd *copy_ad(CaArena *dst, const ClassAd *src, const ClassAd *parent) {
        ClassAd *ad = ca_ad_new_embedded(dst);
        if (!ad)
                return NULL;
        ad->parent = parent;
        for (uint32_t k = 0; k < src->n; k++) {
                const CaAttr *a = &src->attrs[k];
                if (!a->atom)
                        continue; /* deleted */
                size_t before = dst->bytes;
                CaNode *e = copy(dst, a->expr, ad);
                if (!e || ca_ad_insert(ad, a->atom, a->name, strlen(a->name), e, dst->bytes - before) < 0)
                        return NULL;
        }
        return ad;
}

static CaNode *copy(CaArena *dst, const CaNode *n, const ClassAd *parent) {
        CaNode *c = ca_arena_alloc(dst, sizeof(CaNode));
        if (!c)
                return NULL;
        *c = *n;
        switch (n->kind) {
        case CA_N_LITERAL:
                return copy_string(dst, &c->u.lit) ? c : NULL;
        case CA_N_FOLDED:
                if (!copy_string(dst, &c->u.folded.k))
                        return NULL;
                c->u.folded.orig = copy(dst, n->u.folded.orig, parent);
                return c->u.folded.orig ? c : NULL;
        case CA_N_ATTR:
                /* the atom's spelling is shared, as the parser shares it */
                if (n->u.attr.spelling != n->u.attr.atom->spelling &&
                    !(c->u.attr.spelling = ca_arena_strndup(dst, n->u.attr.spelling, strlen(n->u.attr.spelling))))
                        return NULL;
                if (n->u.attr.base && !(c->u.attr.base = copy(dst, n->u.attr.base, parent)))
                        return NULL;
                return c;
        case CA_N_OP:
                if (!(c->u.op.a = copy(dst, n->u.op.a, parent)))
                        return NULL;
                if (n->u.op.b && !(c->u.op.b = copy(dst, n->u.op.b, parent)))
                        return NULL;
                if (n->u.op.c && !(c->u.op.c = copy(dst, n->u.op.c, parent)))
                        return NULL;
                return c;
        case CA_N_CALL:
                c->u.call.name = ca_arena_strndup(dst, n->u.call.name, strlen(n->u.call.name));
                c->u.call.args = ca_arena_alloc(dst, (n->nargs ? n->nargs : 1) * sizeof(CaNode *));
                if (!c->u.call.name || !c->u.call.args)
                        return NULL;
                for (uint32_t i = 0; i < n->nargs; i++)
                        if (!(c->u.call.args[i] = copy(dst, n->u.call.args[i], parent)))
                                return NULL;
                return c;
        case CA_N_LIST: {
                const CaList *src = n->u.list;
                CaList *l = ca_arena_alloc(dst, sizeof(CaList));
                CaNode **items = ca_arena_alloc(dst, (src->n ? src->n : 1) * sizeof(CaNode *));
                if (!l || !items)
                        return NULL;
                *l = (CaList){ .refs = -1, .n = src->n, .lazy = true, .u.items = items };
                for (uint32_t i = 0; i < src->n; i++)
                        if (!(items[i] = copy(dst, src->u.items[i], parent)))
                                return NULL;
                c->u.list = l;
                return c;
        }
        case CA_N_AD:
                c->u.ad = copy_ad(dst, n->u.ad, parent);
                return c->u.ad ? c : NULL;
        }
        return NULL;
}

CaNode *ca_node_copy(CaArena *dst, const CaNode *n, const ClassAd *new_parent) {
        return copy(dst, n, new_parent);
}

int classad_expr_parse(const char *text, size_t len, CaMode mode, ClassAdExpr **ret, CaError *err) {
        ClassAdExpr *e = calloc(1, sizeof(ClassAdExpr));
        if (!e)
                return -ENOMEM;
        int r = ca_parse_expr(&e->arena, text, len, mode, &e->root, err);
        if (r < 0) {
                classad_expr_free(e);
                return r;
        }
        for (ClassAd *nested = e->arena.nested; nested; nested = nested->next_nested)
                if (!nested->parent)
                        e->ntops++;
        if (e->ntops) {
                e->tops = ca_arena_alloc(&e->arena, e->ntops * sizeof(ClassAd *));
                if (!e->tops) {
                        classad_expr_free(e);
                        return -ENOMEM;
                }
                size_t i = 0;
                for (ClassAd *nested = e->arena.nested; nested; nested = nested->next_nested)
                        if (!nested->parent)
                                e->tops[i++] = nested;
        }
        *ret = e;
        return 0;
}

void classad_expr_free(ClassAdExpr *e) {
        if (!e)
                return;
        ca_arena_release(&e->arena);
        free(e);
}

const CaNode *ca_expr_root(const ClassAdExpr *e) {
        return e->root;
}

char *classad_expr_unparse(const ClassAdExpr *e) {
        CaBuf b = {};
        ca_unparse_node(&b, e->root);
        return ca_buf_steal(&b);
}

int classad_set_expr(ClassAd *ad, const char *name, const ClassAdExpr *e) {
        const CaAtom *atom = ca_atom(name, strlen(name));
        if (!atom)
                return -ENOMEM;
        size_t before = ad->arena->bytes;
        CaNode *n = ca_node_copy(ad->arena, e->root, ad);
        if (!n)
                return -ENOMEM;
        return ca_ad_insert(ad, atom, name, strlen(name), n, ad->arena->bytes - before);
}

static ClassAd empty_ad = { .refs = -1 };

int classad_expr_eval(const ClassAdExpr *e, const ClassAd *my, const ClassAd *target, CaMode mode, CaValue *ret) {
        if (!my)
                my = &empty_ad;
        /* Records written in the expression see `my` as their enclosing
         * scope, as HTCondor sets an expression's parent scope when it
         * evaluates it. */
        for (size_t i = 0; i < e->ntops; i++)
                e->tops[i]->parent = my;
        CaEval ev;
        ca_eval_init(&ev, mode, my, target ? my : NULL, target);
        CaValue v;
        ca_eval(&ev, e->root, &v);
        ca_eval_settle(&ev, &v);
        int r = ca_value_detach(&v);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/* value.c — ClassAd values: strings, lists, reference counting, conversions. */
#include "classad-internal.h"

#include <stdlib.h>

CaStr *ca_str_new(const char *s, size_t len) {
        if (len > UINT32_MAX - 1)
                return NULL;
        CaStr *str = malloc(sizeof(CaStr) + len + 1);
        if (!str)
                return NULL;
        str->refs = 1;
        str->len = (uint32_t) len;
        if (len)
                memcpy(str->s, s, len);
        str->s[len] = 0;
        return str;
}

void ca_str_unref(CaStr *s) {
        if (s && s->refs > 0 && --s->refs == 0)
                free(s);
}

CaValue ca_string_n(const char *s, size_t len) {
        CaStr *str = ca_str_new(s, len);
        return str ? ca_string_take(str) : ca_error();
}

CaValue ca_string(const char *s) {
        return ca_string_n(s, strlen(s));
}

CaValue ca_string_take(CaStr *str) {
        return (CaValue){ .type = CA_STRING, .u.s = str };
}

CaList *ca_list_new(uint32_t n) {
        CaList *l = calloc(1, sizeof(CaList));
        if (!l)
                return NULL;
        l->refs = 1;
        l->n = n;
        if (n) {
                l->u.vals = calloc(n, sizeof(CaValue));
                if (!l->u.vals) {
                        free(l);
                        return NULL;
                }
        }
        return l;
}

void ca_list_unref(CaList *l) {
        if (!l || l->refs <= 0 || --l->refs > 0)
                return;
        if (l->lazy) {
                if (l->arena) {
                        ca_arena_release(l->arena);
                        free(l->arena);
                }
        } else {
                for (uint32_t i = 0; i < l->n; i++)
                        ca_value_clear(&l->u.vals[i]);
                free(l->u.vals);
        }
        free(l);
}

CaValue ca_value_copy(const CaValue *v) {
        switch (v->type) {
        case CA_STRING:
                ca_str_ref(v->u.s);
                break;
        case CA_LIST:
                if (v->u.l.list->refs >= 0)
                        v->u.l.list->refs++;
                break;
        case CA_AD:
                if (v->u.ad->refs >= 0)
                        v->u.ad->refs++;
                break;
        default:
                break;
        }
        return *v;
}

void ca_value_clear(CaValue *v) {
        switch (v->type) {
        case CA_STRING:
                ca_str_unref(v->u.s);
                break;
        case CA_LIST:
                ca_list_unref(v->u.l.list);
                break;
        case CA_AD:
                classad_free(v->u.ad);
                break;
        default:
                break;
        }
        *v = ca_undefined();
}

/* A lazy list whose expressions live in some tree: copy them into an arena
 * of the list's own. Elements then evaluate with no scope. */
static CaList *detach_lazy_list(const CaList *src) {
        CaList *l = calloc(1, sizeof(CaList));
        CaArena *arena = calloc(1, sizeof(CaArena));
        if (!l || !arena)
                goto fail;
        l->refs = 1;
        l->lazy = true;
        l->arena = arena;
        l->n = src->n;
        l->u.items = ca_arena_alloc(arena, sizeof(CaNode *) * (src->n ? src->n : 1));
        if (!l->u.items)
                goto fail;
        for (uint32_t i = 0; i < src->n; i++) {
                l->u.items[i] = ca_node_copy(arena, src->u.items[i], NULL);
                if (!l->u.items[i])
                        goto fail;
        }
        return l;
fail:
        if (arena) {
                ca_arena_release(arena);
                free(arena);
        }
        free(l);
        return NULL;
}

int ca_value_detach(CaValue *v) {
        switch (v->type) {
        case CA_STRING:
                if (v->u.s->refs < 0) {
                        CaStr *s = ca_str_new(v->u.s->s, v->u.s->len);
                        if (!s) {
                                *v = ca_error();
                                return -ENOMEM;
                        }
                        v->u.s = s;
                }
                return 0;
        case CA_LIST: {
                CaList *src = v->u.l.list;
                if (src->refs >= 0 && (!src->lazy || src->arena)) {
                        /* Owned already; but its elements may borrow. */
                        if (!src->lazy)
                                for (uint32_t i = 0; i < src->n; i++) {
                                        int r = ca_value_detach(&src->u.vals[i]);
                                        if (r < 0)
                                                return r;
                                }
                        v->u.l.scope = NULL;
                        return 0;
                }
                CaList *l = detach_lazy_list(src);
                ca_list_unref(src);
                if (!l) {
                        *v = ca_error();
                        return -ENOMEM;
                }
                *v = ca_list_value(l);
                return 0;
        }
        case CA_AD:
                if (v->u.ad->refs < 0) {
                        ClassAd *copy;
                        int r = classad_copy(v->u.ad, &copy);
                        if (r < 0) {
                                *v = ca_error();
                                return r;
                        }
                        v->u.ad = copy;
                }
                return 0;
        default:
                return 0;
        }
}

const char *ca_type_name(CaType t) {
        static const char *const names[] = {
                [CA_UNDEFINED] = "undefined", [CA_ERROR] = "error",   [CA_BOOL] = "boolean",
                [CA_INT] = "integer",         [CA_REAL] = "real",     [CA_STRING] = "string",
                [CA_LIST] = "list",           [CA_AD] = "classad",    [CA_ABSTIME] = "abstime",
                [CA_RELTIME] = "reltime",
        };
        return (unsigned) t < ELEMENTSOF(names) ? names[t] : "?";
}

char *ca_value_unparse(const CaValue *v) {
        CaBuf b = {};
        ca_unparse_value(&b, v);
        return ca_buf_steal(&b);
}

int64_t ca_list_size(const CaValue *v) {
        return v->type == CA_LIST ? (int64_t) v->u.l.list->n : -1;
}

void ca_list_elem(CaEval *ev, const CaValue *list, uint32_t i, CaValue *ret) {
        const CaList *l = list->u.l.list;
        if (i >= l->n) {
                *ret = ca_error();
                return;
        }
        if (!l->lazy) {
                *ret = ca_value_copy(&l->u.vals[i]);
                return;
        }
        /* An element may refer back to its list ({ L.x } in L): each nested
         * element evaluation costs its tree's height plus the frames in
         * between, against the same budget as attribute hops. */
        const CaNode *item = l->u.items[i];
        int cost = item->depth + CA_NESTED_EVAL_COST;
        if (ev->depth + cost > CA_MAX_EVAL_DEPTH || !ca_eval_charge(ev, 1) ||
            !ca_eval_enter(ev, list->u.l.scope, item)) {
                *ret = ca_error(); /* runaway, or the element needs itself */
                return;
        }
        const ClassAd *saved = ev->cur;
        ev->cur = list->u.l.scope;
        ev->depth += cost;
        ca_eval(ev, item, ret);
        ev->depth -= cost;
        ev->cur = saved;
        ca_eval_leave(ev);
}

int ca_list_get(const CaValue *v, int64_t i, CaMode mode, CaValue *ret) {
        if (v->type != CA_LIST)
                return -EINVAL;
        if (i < 0 || i >= (int64_t) v->u.l.list->n)
                return -ERANGE;
        CaEval ev;
        ca_eval_init(&ev, mode, v->u.l.scope, NULL, NULL);
        CaValue out;
        ca_list_elem(&ev, v, (uint32_t) i, &out);
        ca_eval_settle(&ev, &out);
        int r = ca_value_detach(&out);
        if (r < 0)
                return r;
        *ret = out;
        return 0;
}

bool ca_to_real(const CaValue *v, double *ret) {
        switch (v->type) {
        case CA_INT:
                *ret = (double) v->u.i;
                return true;
        case CA_REAL:
                *ret = v->u.r;
                return true;
        case CA_BOOL:
                *ret = v->u.b ? 1.0 : 0.0;
                return true;
        default:
                return false;
        }
}

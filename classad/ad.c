/* SPDX-License-Identifier: Apache-2.0 */
/* ad.c — ClassAds: attribute tables, inserting, copying, typed evaluation. */
#include "classad-internal.h"

#include <stdlib.h>

/* attrs[cap] and index[size] share one block, so that looking up an
 * attribute touches one allocation. */
static void ad_free_tables(ClassAd *ad) {
        free(ad->attrs);
        ad->attrs = NULL;
        ad->index = NULL;
        ad->n = ad->cap = ad->index_mask = 0;
}

int classad_new(ClassAd **ret) {
        ClassAd *ad = calloc(1, sizeof(ClassAd));
        if (!ad)
                return -ENOMEM;
        ad->refs = 1;
        ad->arena = &ad->own_arena;
        *ret = ad;
        return 0;
}

ClassAd *ca_ad_new_embedded(CaArena *arena) {
        ClassAd *ad = ca_arena_alloc(arena, sizeof(ClassAd));
        if (!ad)
                return NULL;
        ad->refs = -1;
        ad->arena = arena;
        ad->next_nested = arena->nested;
        arena->nested = ad;
        return ad;
}

void ca_ad_destroy_embedded(ClassAd *ad) {
        ad_free_tables(ad);
}

ClassAd *classad_ref(ClassAd *ad) {
        if (ad && ad->refs >= 0)
                ad->refs++;
        return ad;
}

void classad_free(ClassAd *ad) {
        if (!ad || ad->refs <= 0 || --ad->refs > 0)
                return;
        classad_unchain(ad);
        ca_arena_release(&ad->own_arena);
        ad_free_tables(ad);
        free(ad);
}

static inline uint32_t slot_of(const CaAtom *atom, uint32_t mask) {
        return (uint32_t) ((atom->id * 0x9E3779B97F4A7C15ull) >> 40) & mask;
}

const CaAttr *ca_ad_lookup_own(const ClassAd *ad, const CaAtom *atom) {
        if (!ad || !ad->index)
                return NULL;
        for (uint32_t i = slot_of(atom, ad->index_mask);; i = (i + 1) & ad->index_mask) {
                uint32_t pos = ad->index[i];
                if (!pos)
                        return NULL;
                if (ad->attrs[pos - 1].atom == atom)
                        return &ad->attrs[pos - 1];
        }
}

static void rebuild_index(ClassAd *ad) {
        memset(ad->index, 0, (ad->index_mask + 1) * sizeof(uint32_t));
        for (uint32_t k = 0; k < ad->n; k++) {
                if (!ad->attrs[k].atom)
                        continue;
                uint32_t i = slot_of(ad->attrs[k].atom, ad->index_mask);
                while (ad->index[i])
                        i = (i + 1) & ad->index_mask;
                ad->index[i] = k + 1;
        }
}

/* A block for cap attributes and their index; attrs[0..n) copied from src. */
static int alloc_tables(ClassAd *ad, uint32_t cap, const CaAttr *src) {
        uint32_t size = 8;
        while (size < cap * 2)
                size *= 2;
        size_t bytes = (size_t) cap * sizeof(CaAttr) + (size_t) size * sizeof(uint32_t);
        CaAttr *attrs = aligned_alloc(64, (bytes + 63) & ~(size_t) 63);
        if (!attrs)
                return -ENOMEM;
        if (ad->n)
                memcpy(attrs, src, ad->n * sizeof(CaAttr));
        free(ad->attrs);
        ad->attrs = attrs;
        ad->cap = cap;
        ad->index = (uint32_t *) (attrs + cap);
        ad->index_mask = size - 1;
        rebuild_index(ad);
        return 0;
}

/* Room for about n attributes, before parsing n definitions of text (an
 * estimate: ca_ad_fit trims it afterwards). */
static void reserve_tables(ClassAd *ad, size_t n) {
        if (!ad->cap && n > 4)
                (void) alloc_tables(ad, n < 4096 ? (uint32_t) n : 4096, NULL); /* on failure inserts grow it */
}

/* Definitions in text: one per separator, and one more. */
static size_t count_of(const char *text, size_t len, char sep) {
        size_t n = 1;
        for (const char *p = text, *end = text + len; (p = memchr(p, sep, (size_t) (end - p))); p++)
                n++;
        return n;
}

void ca_ad_fit(ClassAd *ad) {
        if (ad->cap > ad->n + ad->n / 4 + 4)
                (void) alloc_tables(ad, ad->n ? ad->n : 1, ad->attrs); /* on failure the old table stays */
}

/* Close the holes deleted attributes left, keeping the order. */
static void squeeze(ClassAd *ad) {
        uint32_t live = 0;
        for (uint32_t k = 0; k < ad->n; k++)
                if (ad->attrs[k].atom)
                        ad->attrs[live++] = ad->attrs[k];
        ad->n = live;
        ad->holes = 0;
        rebuild_index(ad);
}

/* Bytes of arena an ad's live expressions take. */
/* What ad's expressions take in its arena; 0 (unknown) for an ad embedded
 * in an expression, whose arena is its whole tree's (a message's listing
 * of 100,000 ads: reserving that for each copy cost a second of mmap). */
static size_t live_bytes(const ClassAd *ad) {
        if (ad->arena != &ad->own_arena)
                return 0;
        return ad->arena->bytes > ad->garbage ? ad->arena->bytes - ad->garbage : 0;
}

/* Copy every live expression into a fresh arena, one chunk of the size
 * they take. On ENOMEM the ad stays as it was. */
static void compact(ClassAd *ad) {
        if (ad->holes)
                squeeze(ad);
        CaArena fresh = {};
        CaAttr *attrs = calloc(ad->n ? ad->n : 1, sizeof(CaAttr));
        if (!attrs)
                return; /* compaction is an optimisation; try again later */
        if (live_bytes(ad))
                ca_arena_reserve(&fresh, live_bytes(ad));
        for (uint32_t k = 0; k < ad->n; k++) {
                const CaAttr *old = &ad->attrs[k];
                size_t before = fresh.bytes, len = strlen(old->name);
                attrs[k] = *old;
                attrs[k].name = ca_atom_spelled(old->atom, old->name, len);
                if (!attrs[k].name)
                        attrs[k].name = ca_arena_strndup(&fresh, old->name, len);
                attrs[k].expr = ca_node_copy(&fresh, old->expr, ad);
                if (!attrs[k].name || !attrs[k].expr) {
                        ca_arena_release(&fresh);
                        free(attrs);
                        return;
                }
                attrs[k].bytes = (uint32_t) (fresh.bytes - before);
                attrs[k].k = attrs[k].is_const ? attrs[k].expr->u.lit : ca_undefined();
        }
        ca_arena_release(&ad->own_arena);
        ad->own_arena = fresh;
        if (ad->n)
                memcpy(ad->attrs, attrs, ad->n * sizeof(CaAttr));
        free(attrs);
        ad->garbage = 0;
}

/* Compact once replaced expressions make up most of the arena, so that an
 * ad updated forever stays small. */
static void maybe_compact(ClassAd *ad) {
        if (ad->arena != &ad->own_arena || ad->garbage < 65536 || ad->garbage < ad->arena->bytes / 2)
                return;
        compact(ad);
}

void classad_shrink(ClassAd *ad) {
        if (!ad || ad->refs < 0)
                return;
        if (ad->holes)
                squeeze(ad);
        if (!ad->n)
                ad_free_tables(ad);
        else if (ad->cap > ad->n)
                (void) alloc_tables(ad, ad->n, ad->attrs); /* on failure the old table stays */
        size_t live = live_bytes(ad);
        if (ca_arena_capacity(ad->arena) > live + 64)
                compact(ad);
}

int ca_ad_insert(ClassAd *ad, const CaAtom *atom, const char *spelling, size_t spelling_len, CaNode *expr,
                 size_t bytes) {
        /* names are nearly always spelled as the first time: share that */
        const char *name = ca_atom_spelled(atom, spelling, spelling_len);
        if (!name) {
                name = ca_arena_strndup(ad->arena, spelling, spelling_len);
                if (!name)
                        return -ENOMEM;
                bytes += spelling_len + 1;
        }
        CaAttr entry = { .atom = atom, .name = name, .expr = expr, .bytes = (uint32_t) bytes };
        if (expr->flags & CA_NF_CONST) {
                entry.k = expr->u.lit;
                entry.is_const = true;
        }
        if (atom->scope != CA_SCOPE_NONE)
                ad->has_special = ad->no_fast = true;
        CaAttr *a = (CaAttr *) ca_ad_lookup_own(ad, atom);
        if (a) {
                ad->garbage += a->bytes;
                *a = entry;
                maybe_compact(ad);
                return 0;
        }
        if (ad->n == ad->cap && ad->holes)
                squeeze(ad);
        if (ad->n == ad->cap) {
                /* small ads double from a few (a proc's own attributes
                 * are about ten); larger ones grow by a quarter: ads
                 * mostly gain a few attributes after they are parsed (a
                 * matchmaker's, an agent's). Parsers size the table
                 * first (reserve_tables). */
                uint32_t cap = ad->cap < 32 ? (ad->cap ? ad->cap * 2 : 4) : ad->cap + ad->cap / 4 + 4;
                int r = alloc_tables(ad, cap, ad->attrs);
                if (r < 0)
                        return r;
        }
        ad->attrs[ad->n++] = entry;
        uint32_t i = slot_of(atom, ad->index_mask);
        while (ad->index[i])
                i = (i + 1) & ad->index_mask;
        ad->index[i] = ad->n;
        return 0;
}

static int set_node(ClassAd *ad, const char *name, CaNode *(*make)(CaArena *, const void *), const void *arg) {
        const CaAtom *atom = ca_atom(name, strlen(name));
        if (!atom)
                return -ENOMEM;
        size_t before = ad->arena->bytes;
        CaNode *n = make(ad->arena, arg);
        if (!n)
                return -ENOMEM;
        return ca_ad_insert(ad, atom, name, strlen(name), n, ad->arena->bytes - before);
}

static CaNode *make_literal(CaArena *arena, const void *arg) {
        const CaValue *v = arg;
        if (v->type == CA_LIST || v->type == CA_AD) {
                /* Structured values become the expression that prints as them. */
                char *text = ca_value_unparse(v);
                CaNode *n = NULL;
                CaError err;
                if (text)
                        (void) ca_parse_expr(arena, text, strlen(text), CA_MODE_STRICT, &n, &err);
                free(text);
                return n;
        }
        CaNode *n = ca_arena_alloc(arena, sizeof(CaNode));
        if (!n)
                return NULL;
        n->kind = CA_N_LITERAL;
        n->u.lit = *v;
        if (v->type == CA_STRING) {
                n->u.lit.u.s = ca_arena_str(arena, v->u.s->s, v->u.s->len);
                if (!n->u.lit.u.s)
                        return NULL;
        }
        n->flags = CA_NF_CONST;
        return n;
}

static bool is_scalar(CaType t) {
        return t != CA_STRING && t != CA_LIST && t != CA_AD;
}

int classad_set_value(ClassAd *ad, const char *name, const CaValue *v) {
        /* A number replacing a number, spelt alike: in place. Matchmakers
         * rewrite a few such attributes of every ad they consider (what a
         * partitionable slot has left, a submitter's usage). */
        if (is_scalar(v->type)) {
                size_t len = strlen(name);
                const CaAtom *atom = ca_atom_find(name, len);
                CaAttr *a = atom ? (CaAttr *) ca_ad_lookup_own(ad, atom) : NULL;
                if (a && a->expr->kind == CA_N_LITERAL && is_scalar(a->expr->u.lit.type) && strlen(a->name) == len &&
                    memcmp(a->name, name, len) == 0) {
                        a->expr->u.lit = *v;
                        a->k = *v;
                        return 0;
                }
        }
        return set_node(ad, name, make_literal, v);
}

int classad_set_int(ClassAd *ad, const char *name, int64_t v) {
        CaValue val = ca_int(v);
        return classad_set_value(ad, name, &val);
}

int classad_set_real(ClassAd *ad, const char *name, double v) {
        CaValue val = ca_real(v);
        return classad_set_value(ad, name, &val);
}

int classad_set_bool(ClassAd *ad, const char *name, bool v) {
        CaValue val = ca_bool(v);
        return classad_set_value(ad, name, &val);
}

int classad_set_string(ClassAd *ad, const char *name, const char *v) {
        CaValue val = ca_string(v);
        if (val.type == CA_ERROR)
                return -ENOMEM;
        int r = classad_set_value(ad, name, &val);
        ca_value_clear(&val);
        return r;
}

int classad_set_expr_text(ClassAd *ad, const char *name, const char *expr_text, CaMode mode, CaError *err) {
        const CaAtom *atom = ca_atom(name, strlen(name));
        if (!atom)
                return -ENOMEM;
        size_t before = ad->arena->bytes;
        CaNode *n;
        int r = ca_parse_expr(ad->arena, expr_text, strlen(expr_text), mode, &n, err);
        if (r < 0)
                return r;
        for (ClassAd *nested = ad->arena->nested; nested; nested = nested->next_nested)
                if (!nested->parent && nested != ad)
                        nested->parent = ad;
        return ca_ad_insert(ad, atom, name, strlen(name), n, ad->arena->bytes - before);
}

int classad_delete(ClassAd *ad, const char *name) {
        const CaAtom *atom = ca_atom_find(name, strlen(name));
        const CaAttr *a = atom ? ca_ad_lookup_own(ad, atom) : NULL;
        if (!a)
                return -ENOENT;
        uint32_t k = (uint32_t) (a - ad->attrs);
        /* Take the entry out of the index by backward shifting (linear
         * probing), and leave a hole in attrs so the order stays. */
        uint32_t mask = ad->index_mask, i = slot_of(atom, mask);
        while (ad->index[i] != k + 1)
                i = (i + 1) & mask;
        for (uint32_t j = i;;) {
                j = (j + 1) & mask;
                if (!ad->index[j])
                        break;
                uint32_t home = slot_of(ad->attrs[ad->index[j] - 1].atom, mask);
                /* the entry at j may move to i unless its home lies in (i, j] */
                bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
                if (!stays) {
                        ad->index[i] = ad->index[j];
                        i = j;
                }
        }
        ad->index[i] = 0;
        ad->garbage += ad->attrs[k].bytes;
        ad->attrs[k] = (CaAttr){};
        ad->holes++;
        if (ad->holes > 16 && ad->holes > ad->n / 2)
                squeeze(ad);
        maybe_compact(ad);
        return 0;
}

bool classad_has(const ClassAd *ad, const char *name) {
        const CaAtom *atom = ca_atom_find(name, strlen(name));
        return atom && ca_ad_lookup(ad, atom);
}

size_t classad_size(const ClassAd *ad) {
        size_t n = ad->n - ad->holes;
        if (_unlikely_(ad->chain)) {
                /* the parent's, less those ad overrides */
                n += ad->chain->n - ad->chain->holes;
                for (uint32_t k = 0; k < ad->n; k++)
                        if (ad->attrs[k].atom && ca_ad_lookup_own(ad->chain, ad->attrs[k].atom))
                                n--;
        }
        return n;
}

size_t classad_size_own(const ClassAd *ad) {
        return ad->n - ad->holes;
}

/* Copy src's attributes (own: its own only) into dst. */
static int update_view(ClassAd *dst, const ClassAd *src, bool own) {
        if (dst == src)
                return 0;
        if (dst == src->chain)
                own = true; /* the parent has the rest already */
        size_t pos = 0;
        for (const CaAttr *a; (a = ca_ad_next(src, &pos, own));) {
                size_t before = dst->arena->bytes;
                CaNode *n = ca_node_copy(dst->arena, a->expr, dst);
                if (!n)
                        return -ENOMEM;
                int r = ca_ad_insert(dst, a->atom, a->name, strlen(a->name), n, dst->arena->bytes - before);
                if (r < 0)
                        return r;
        }
        return 0;
}

int classad_update(ClassAd *dst, const ClassAd *src) {
        return update_view(dst, src, false);
}

static int copy_view(const ClassAd *src, bool own, ClassAd **ret) {
        ClassAd *ad;
        int r = classad_new(&ad);
        if (r < 0)
                return r;
        /* room for what src shows, less what was replaced */
        size_t bytes = live_bytes(src) + (!own && src->chain ? live_bytes(src->chain) : 0);
        size_t n = own ? classad_size_own(src) : classad_size(src);
        ca_arena_reserve(ad->arena, bytes + 64);
        r = n ? alloc_tables(ad, (uint32_t) n, NULL) : 0;
        if (r >= 0)
                r = update_view(ad, src, own);
        if (r < 0) {
                classad_free(ad);
                return r;
        }
        *ret = ad;
        return 0;
}

int classad_copy(const ClassAd *src, ClassAd **ret) {
        return copy_view(src, false, ret);
}

int classad_copy_own(const ClassAd *src, ClassAd **ret) {
        return copy_view(src, true, ret);
}

bool classad_iter_next(ClassAdIter *it, const char **ret_name, char **ret_expr_text) {
        const CaAttr *a = ca_ad_next(it->ad, &it->pos, it->own);
        if (!a)
                return false;
        if (ret_name)
                *ret_name = a->name;
        if (ret_expr_text) {
                CaBuf b = {};
                ca_unparse_node(&b, a->expr);
                *ret_expr_text = ca_buf_steal(&b);
        }
        return true;
}

int classad_eval_attr(const ClassAd *ad, const char *name, CaMode mode, CaValue *ret) {
        const CaAtom *atom = ca_atom(name, strlen(name));
        if (!atom)
                return -ENOMEM;
        CaEval ev;
        ca_eval_init(&ev, mode, ad, NULL, NULL);
        CaValue v;
        ca_eval_attr_ref(&ev, atom, &v);
        ca_eval_settle(&ev, &v);
        int r = ca_value_detach(&v);
        if (r < 0)
                return r;
        *ret = v;
        return 0;
}

int classad_eval_ad_list(const ClassAd *ad, const char *name, CaMode mode, ClassAd ***ret, size_t *ret_n) {
        const CaAtom *atom = ca_atom(name, strlen(name));
        if (!atom)
                return -ENOMEM;
        /* The list and its elements are only borrowed from ad (which
         * outlives this call): each element ad is copied once, straight
         * into its own standalone ad. */
        CaEval ev;
        ca_eval_init(&ev, mode, ad, NULL, NULL);
        CaValue v;
        ca_eval_attr_ref(&ev, atom, &v);
        ca_eval_settle(&ev, &v);
        if (v.type != CA_LIST) {
                int r = v.type == CA_UNDEFINED ? -ENOENT : -EINVAL;
                ca_value_clear(&v);
                return r;
        }
        uint32_t n = v.u.l.list->n;
        ClassAd **ads = n ? calloc(n, sizeof(ClassAd *)) : NULL;
        uint32_t k = 0;
        int r = n && !ads ? -ENOMEM : 0;
        for (; r >= 0 && k < n; k++) {
                /* a fresh evaluation each, as ca_list_get: the steps budget is per element */
                CaEval one;
                ca_eval_init(&one, mode, v.u.l.scope, NULL, NULL);
                CaValue item;
                ca_list_elem(&one, &v, k, &item);
                ca_eval_settle(&one, &item);
                r = item.type != CA_AD ? -EINVAL : classad_copy(item.u.ad, &ads[k]);
                ca_value_clear(&item);
                if (r < 0)
                        break;
        }
        ca_value_clear(&v);
        if (r < 0) {
                for (uint32_t i = 0; i < k; i++)
                        classad_free(ads[i]);
                free(ads);
                return r;
        }
        *ret = ads;
        *ret_n = n;
        return 0;
}

static int eval_typed(const ClassAd *ad, const char *name, CaMode mode, CaValue *ret) {
        int r = classad_eval_attr(ad, name, mode, ret);
        if (r < 0)
                return r;
        if (ret->type == CA_UNDEFINED)
                return -ENOENT;
        return 0;
}

int classad_eval_int(const ClassAd *ad, const char *name, CaMode mode, int64_t *ret) {
        CaValue v;
        int r = eval_typed(ad, name, mode, &v);
        if (r < 0)
                return r;
        if (v.type == CA_INT)
                *ret = v.u.i;
        else if (v.type == CA_BOOL)
                *ret = v.u.b;
        else if (v.type == CA_REAL && v.u.r >= -9.2e18 && v.u.r <= 9.2e18)
                *ret = (int64_t) v.u.r;
        else
                r = -EINVAL;
        ca_value_clear(&v);
        return r;
}

int classad_eval_real(const ClassAd *ad, const char *name, CaMode mode, double *ret) {
        CaValue v;
        int r = eval_typed(ad, name, mode, &v);
        if (r < 0)
                return r;
        double d;
        if (ca_to_real(&v, &d))
                *ret = d;
        else
                r = -EINVAL;
        ca_value_clear(&v);
        return r;
}

int classad_eval_bool(const ClassAd *ad, const char *name, CaMode mode, bool *ret) {
        CaValue v;
        int r = eval_typed(ad, name, mode, &v);
        if (r < 0)
                return r;
        bool b;
        if (ca_to_bool(&v, &b))
                *ret = b;
        else
                r = -EINVAL;
        ca_value_clear(&v);
        return r;
}

int classad_eval_string(const ClassAd *ad, const char *name, CaMode mode, char **ret) {
        CaValue v;
        int r = eval_typed(ad, name, mode, &v);
        if (r < 0)
                return r;
        if (v.type == CA_STRING) {
                char *s = strndup(v.u.s->s, v.u.s->len);
                if (s)
                        *ret = s;
                else
                        r = -ENOMEM;
        } else
                r = -EINVAL;
        ca_value_clear(&v);
        return r;
}

char *classad_unparse(const ClassAd *ad) {
        CaBuf b = {};
        ca_unparse_ad(&b, ad, false);
        return ca_buf_steal(&b);
}

char *classad_unparse_own(const ClassAd *ad) {
        CaBuf b = {};
        ca_unparse_ad(&b, ad, true);
        return ca_buf_steal(&b);
}

char *classad_unparse_old(const ClassAd *ad) {
        CaBuf b = {};
        ca_unparse_set_old_style(true);
        size_t pos = 0;
        for (const CaAttr *a; (a = ca_ad_next(ad, &pos, false));) {
                ca_unparse_def_name(&b, a->name);
                ca_buf_puts(&b, " = ");
                ca_unparse_node(&b, a->expr);
                ca_buf_putc(&b, '\n');
        }
        ca_unparse_set_old_style(false);
        return ca_buf_steal(&b);
}

char *classad_unparse_attr(const ClassAd *ad, const char *name) {
        const CaAtom *atom = ca_atom_find(name, strlen(name));
        const CaAttr *a = atom ? ca_ad_lookup(ad, atom) : NULL;
        if (!a)
                return NULL;
        CaBuf b = {};
        ca_unparse_node(&b, a->expr);
        return ca_buf_steal(&b);
}

int classad_parse(const char *text, size_t len, CaMode mode, ClassAd **ret, CaError *err) {
        ClassAd *ad;
        int r = classad_new(&ad);
        if (r < 0)
                return r;
        /* trees take three to four times the bytes of their text: a
         * first chunk for three, then what the rest of the text may take
         * (the parser's hint), so that little is left unused */
        ca_arena_reserve(ad->arena, len < CA_MAX_INPUT_SIZE ? len * 3 + 256 : 4096);
        if (len < CA_MAX_INPUT_SIZE)
                reserve_tables(ad, count_of(text, len, ';'));
        r = ca_parse_ad_into(ad, text, len, mode, err);
        if (r < 0) {
                classad_free(ad);
                return r;
        }
        ca_ad_fit(ad);
        *ret = ad;
        return 0;
}

int classad_parse_old(const char *text, size_t len, CaMode mode, ClassAd **ret, CaError *err) {
        if (len > CA_MAX_INPUT_SIZE) {
                if (err)
                        *err = (CaError){ .line = 1, .column = 1, .msg = "input too large" };
                return -E2BIG;
        }
        ClassAd *ad;
        int r = classad_new(&ad);
        if (r < 0)
                return r;
        reserve_tables(ad, count_of(text, len, '\n'));
        ca_arena_reserve(ad->arena, len * 3 + 256);
        int line = 0;
        for (size_t pos = 0; pos < len;) {
                const char *start = text + pos;
                const char *nl = memchr(start, '\n', len - pos);
                size_t n = nl ? (size_t) (nl - start) : len - pos;
                pos += n + (nl ? 1 : 0);
                line++;
                size_t i = 0;
                while (i < n && (start[i] == ' ' || start[i] == '\t' || start[i] == '\r'))
                        i++;
                if (i == n || start[i] == '#')
                        continue;
                ad->arena->hint = (len - (size_t) (start - text)) * CA_TREE_PER_TEXT + 64;
                r = ca_parse_attr_def(ad, start, n, mode, err);
                ad->arena->hint = 0;
                if (r < 0) {
                        if (err) {
                                err->line = line;
                                err->offset += (size_t) (start - text);
                        }
                        classad_free(ad);
                        return r;
                }
        }
        ca_ad_fit(ad);
        *ret = ad;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * intern.c — the fast path's tables (fast-internal.h): arrays that grow,
 * sets of names, interned projections, memos.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fast-internal.h"

int nego_grow(void **v, uint32_t *cap, size_t need, size_t elem) {
        size_t cap2;
        void *p;

        if (need <= *cap)
                return 0;
        cap2 = *cap ? 2 * (size_t) *cap : 16;
        while (cap2 < need)
                cap2 *= 2;
        if (cap2 > UINT32_MAX / 2 || !(p = realloc(*v, cap2 * elem)))
                return -ENOMEM;
        *v = p;
        *cap = (uint32_t) cap2;
        return 0;
}

int nego_names_add(NegoNames *s, const CaName *name) {
        for (uint32_t i = 0; i < s->n; i++)
                if (s->v[i] == name)
                        return 0;
        if (nego_grow((void **) &s->v, &s->cap, s->n + 1, sizeof(*s->v)) < 0)
                return -ENOMEM;
        s->v[s->n++] = name;
        return 1;
}

/* ---- interning ---- */

int nego_intern(NegoFast *f, NegoIntern *t, uint64_t hash, uint32_t cand, NegoSameFn same, const void *extra,
                uint32_t *ret_id, bool *ret_new) {
        uint32_t i;

        if (!t->index || (t->n + 1) * 2 > t->mask + 1) {
                uint32_t size = t->mask ? 2 * (t->mask + 1) : 64;
                uint32_t *index = calloc(size, sizeof(uint32_t));
                if (!index)
                        return -ENOMEM;
                for (uint32_t k = 0; k < t->n; k++) {
                        for (i = (uint32_t) t->v[k].hash & (size - 1); index[i]; i = (i + 1) & (size - 1))
                                ;
                        index[i] = k + 1;
                }
                free(t->index);
                t->index = index;
                t->mask = size - 1;
        }
        for (i = (uint32_t) hash & t->mask; t->index[i]; i = (i + 1) & t->mask) {
                uint32_t id = t->index[i] - 1;
                if (t->v[id].hash == hash && same(f, id, cand, extra)) {
                        *ret_id = id;
                        if (ret_new)
                                *ret_new = false;
                        return 0;
                }
        }
        if (nego_grow((void **) &t->v, &t->cap, t->n + 1, sizeof(*t->v)) < 0)
                return -ENOMEM;
        t->v[t->n] = (NegoInternRec){ .hash = hash, .rep = cand };
        t->index[i] = t->n + 1;
        *ret_id = t->n++;
        if (ret_new)
                *ret_new = true;
        return 0;
}

void nego_intern_free(NegoIntern *t) {
        free(t->v);
        free(t->index);
        *t = (NegoIntern){};
}

/* ---- memo ---- */

bool nego_memo_get(const NegoMemo *m, uint64_t key, uint64_t *ret) {
        if (!m->keys)
                return false;
        for (size_t i = nego_mix(0, key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
                if (m->keys[i] == key + 1) {
                        *ret = m->vals[i];
                        return true;
                }
        return false;
}

int nego_memo_put(NegoMemo *m, uint64_t key, uint64_t val) {
        size_t i;

        if (!m->keys || (m->n + 1) * 2 > m->mask + 1) {
                size_t size = m->mask ? 2 * (m->mask + 1) : 1024;
                uint64_t *keys = calloc(size, sizeof(uint64_t)), *vals = malloc(size * sizeof(uint64_t));
                if (!keys || !vals) {
                        free(keys);
                        free(vals);
                        return -ENOMEM;
                }
                for (size_t k = 0; m->keys && k <= m->mask; k++)
                        if (m->keys[k]) {
                                for (i = nego_mix(0, m->keys[k] - 1) & (size - 1); keys[i]; i = (i + 1) & (size - 1))
                                        ;
                                keys[i] = m->keys[k];
                                vals[i] = m->vals[k];
                        }
                free(m->keys);
                free(m->vals);
                m->keys = keys;
                m->vals = vals;
                m->mask = size - 1;
        }
        for (i = nego_mix(0, key) & m->mask; m->keys[i]; i = (i + 1) & m->mask)
                if (m->keys[i] == key + 1)
                        break;
        if (!m->keys[i])
                m->n++;
        m->keys[i] = key + 1;
        m->vals[i] = val;
        return 0;
}

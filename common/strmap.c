/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strmap.c — see strmap.h. The table is a power of two at most 3/4 full.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "strmap.h"

typedef struct Slot {
        const char *key; /* NULL: empty */
        void *value;
        uint32_t hash;
} Slot;

struct GleanStrMap {
        Slot *slots;
        size_t cap; /* 0 or a power of two */
        size_t n;
        bool icase;
};

static uint32_t hash_of(const GleanStrMap *m, const char *s) {
        uint32_t h = 2166136261u;

        for (; *s; s++) {
                unsigned char c = (unsigned char) *s;
                if (m->icase && c >= 'A' && c <= 'Z')
                        c += 'a' - 'A';
                h = (h ^ c) * 16777619u;
        }
        return h;
}

static bool same(const GleanStrMap *m, const char *a, const char *b) {
        return m->icase ? strcasecmp(a, b) == 0 : strcmp(a, b) == 0;
}

int glean_strmap_new(bool icase, GleanStrMap **ret) {
        GleanStrMap *m = calloc(1, sizeof(*m));

        if (!m)
                return -ENOMEM;
        m->icase = icase;
        *ret = m;
        return 0;
}

void glean_strmap_free(GleanStrMap *m) {
        if (!m)
                return;
        free(m->slots);
        free(m);
}

/* The slot holding key, or the empty slot where it would go. */
static size_t find(const GleanStrMap *m, const char *key, uint32_t h) {
        size_t mask = m->cap - 1, i = h & mask;

        while (m->slots[i].key && !(m->slots[i].hash == h && same(m, m->slots[i].key, key)))
                i = (i + 1) & mask;
        return i;
}

void *glean_strmap_get(const GleanStrMap *m, const char *key) {
        size_t i;

        if (m->n == 0)
                return NULL;
        i = find(m, key, hash_of(m, key));
        return m->slots[i].key ? m->slots[i].value : NULL;
}

static int grow(GleanStrMap *m) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        Slot *old = m->slots, *slots;
        size_t old_cap = m->cap;

        if (cap > SIZE_MAX / sizeof(Slot))
                return -ENOMEM;
        slots = calloc(cap, sizeof(Slot));
        if (!slots)
                return -ENOMEM;
        m->slots = slots;
        m->cap = cap;
        for (size_t i = 0; i < old_cap; i++)
                if (old[i].key)
                        m->slots[find(m, old[i].key, old[i].hash)] = old[i];
        free(old);
        return 0;
}

int glean_strmap_put(GleanStrMap *m, const char *key, void *value) {
        uint32_t h = hash_of(m, key);
        size_t i;

        if ((m->n + 1) * 4 > m->cap * 3) {
                int r = grow(m);
                if (r < 0)
                        return r;
        }
        i = find(m, key, h);
        if (!m->slots[i].key)
                m->n++;
        m->slots[i] = (Slot){ key, value, h };
        return 0;
}

void *glean_strmap_remove(GleanStrMap *m, const char *key) {
        size_t mask, i, j;
        void *value;

        if (m->n == 0)
                return NULL;
        mask = m->cap - 1;
        i = find(m, key, hash_of(m, key));
        if (!m->slots[i].key)
                return NULL;
        value = m->slots[i].value;
        /* Backward shift: move later entries of the run into the hole when
         * their home slot is not between the hole and them. */
        for (j = (i + 1) & mask; m->slots[j].key; j = (j + 1) & mask) {
                size_t home = m->slots[j].hash & mask;
                if (((j - home) & mask) >= ((j - i) & mask)) {
                        m->slots[i] = m->slots[j];
                        i = j;
                }
        }
        m->slots[i] = (Slot){};
        m->n--;
        return value;
}

size_t glean_strmap_size(const GleanStrMap *m) {
        return m->n;
}

bool glean_strmap_next(const GleanStrMap *m, size_t *pos, const char **ret_key, void **ret_value) {
        for (size_t i = *pos; i < m->cap; i++)
                if (m->slots[i].key) {
                        *pos = i + 1;
                        if (ret_key)
                                *ret_key = m->slots[i].key;
                        if (ret_value)
                                *ret_value = m->slots[i].value;
                        return true;
                }
        *pos = m->cap;
        return false;
}

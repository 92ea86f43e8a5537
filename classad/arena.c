/* SPDX-License-Identifier: Apache-2.0 */
/* arena.c — bump allocation for expression trees: one ad's or one expression's. */
#include "classad-internal.h"

#include <stdlib.h>

struct CaChunk {
        CaChunk *next;
        size_t size, used;
        max_align_t data[];
};

/* The first chunk holds a small ad (a proc's own attributes, a few
 * hundred bytes); each further one about half of what the arena holds, so
 * that chunks stay few (their number grows with the logarithm of the
 * size) and the unused tail stays under a third. A parser reserves the
 * first chunk at what it expects the trees to take, and while it parses
 * keeps a->hint at what the rest of its text may take, the size of a
 * chunk it overflows into. */
#define CHUNK_FIRST 256u
#define CHUNK_MAX (1u << 20)

static CaChunk *new_chunk(CaArena *a, size_t size) {
        CaChunk *c = malloc(sizeof(CaChunk) + size);
        if (!c)
                return NULL;
        c->size = size;
        c->used = 0;
        c->next = a->head;
        a->head = c;
        return c;
}

void ca_arena_reserve(CaArena *a, size_t n) {
        if (!a->head)
                (void) new_chunk(a, (n + 7u) & ~(size_t) 7u); /* failure shows at the next alloc */
}

size_t ca_arena_capacity(const CaArena *a) {
        size_t size = 0;
        for (const CaChunk *c = a->head; c; c = c->next)
                size += c->size;
        return size;
}

void *ca_arena_alloc(CaArena *a, size_t n) {
        n = (n + 7u) & ~(size_t) 7u;
        CaChunk *c = a->head;
        if (_unlikely_(!c || c->size - c->used < n)) {
                size_t size = a->hint ? a->hint : a->bytes / 2;
                if (size < CHUNK_FIRST)
                        size = CHUNK_FIRST;
                if (size > CHUNK_MAX)
                        size = CHUNK_MAX;
                if (size < n)
                        size = n;
                c = new_chunk(a, size);
                if (!c)
                        return NULL;
        }
        void *p = (char *) c->data + c->used;
        c->used += n;
        a->bytes += n;
        memset(p, 0, n);
        return p;
}

char *ca_arena_strndup(CaArena *a, const char *s, size_t n) {
        char *p = ca_arena_alloc(a, n + 1);
        if (!p)
                return NULL;
        memcpy(p, s, n);
        p[n] = 0;
        return p;
}

CaStr *ca_arena_str(CaArena *a, const char *s, size_t n) {
        if (n > UINT32_MAX - 1)
                return NULL;
        CaStr *str = ca_arena_alloc(a, sizeof(CaStr) + n + 1);
        if (!str)
                return NULL;
        str->refs = -1;
        str->len = (uint32_t) n;
        memcpy(str->s, s, n);
        str->s[n] = 0;
        return str;
}

void ca_arena_release(CaArena *a) {
        /* Embedded ads own their attribute tables (malloc'd). */
        for (ClassAd *ad = a->nested, *next; ad; ad = next) {
                next = ad->next_nested;
                ca_ad_destroy_embedded(ad);
        }
        for (CaChunk *c = a->head, *next; c; c = next) {
                next = c->next;
                free(c);
        }
        *a = (CaArena){};
}

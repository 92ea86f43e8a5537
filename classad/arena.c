/* SPDX-License-Identifier: Apache-2.0 */
/* arena.c — bump allocation for expression trees: one ad's or one expression's. */
#include "classad-internal.h"

#include <stdlib.h>

struct CaChunk {
        CaChunk *next;
        size_t size, used;
        max_align_t data[];
};

#define CHUNK_MIN 4096u

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

void *ca_arena_alloc(CaArena *a, size_t n) {
        n = (n + 7u) & ~(size_t) 7u;
        CaChunk *c = a->head;
        if (!c || c->size - c->used < n) {
                /* Geometric growth keeps the number of chunks logarithmic. */
                size_t size = a->head ? 1024 : CHUNK_MIN;
                if (a->bytes > size)
                        size = a->bytes < (1u << 20) ? a->bytes : (1u << 20);
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

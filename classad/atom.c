/* SPDX-License-Identifier: Apache-2.0 */
/* atom.c — attribute names interned once, compared by pointer. */
#include "classad-internal.h"

#include <stdlib.h>

static struct {
        const CaAtom **slots;
        uint32_t mask, count;
        const CaAtom *wk[_CA_WK_MAX];
} table;

static inline unsigned char lower(unsigned char c) {
        return (c >= 'A' && c <= 'Z') ? (unsigned char) (c | 0x20) : c;
}

/* FNV-1a over the lower-cased name. */
static uint32_t name_hash(const char *s, size_t n) {
        uint32_t h = 2166136261u;
        for (size_t i = 0; i < n; i++)
                h = (h ^ lower((unsigned char) s[i])) * 16777619u;
        return h;
}

static bool name_eq(const CaAtom *a, const char *s, size_t n) {
        if (a->len != n)
                return false;
        for (size_t i = 0; i < n; i++)
                if ((unsigned char) a->name[i] != lower((unsigned char) s[i]))
                        return false;
        return true;
}

static const CaAtom **find_slot(const char *s, size_t n, uint32_t h) {
        if (!table.slots)
                return NULL;
        for (uint32_t i = h & table.mask;; i = (i + 1) & table.mask) {
                const CaAtom **slot = &table.slots[i];
                if (!*slot || ((*slot)->hash == h && name_eq(*slot, s, n)))
                        return slot;
        }
}

static int grow(void) {
        uint32_t size = table.slots ? (table.mask + 1) * 2 : 1024;
        const CaAtom **slots = calloc(size, sizeof *slots);
        if (!slots)
                return -ENOMEM;
        for (uint32_t i = 0; table.slots && i <= table.mask; i++) {
                const CaAtom *a = table.slots[i];
                if (!a)
                        continue;
                uint32_t j = a->hash & (size - 1);
                while (slots[j])
                        j = (j + 1) & (size - 1);
                slots[j] = a;
        }
        free(table.slots);
        table.slots = slots;
        table.mask = size - 1;
        return 0;
}

const CaAtom *ca_atom_find(const char *name, size_t len) {
        const CaAtom **slot = find_slot(name, len, name_hash(name, len));
        return slot ? *slot : NULL;
}

const CaAtom *ca_atom(const char *name, size_t len) {
        uint32_t h = name_hash(name, len);
        const CaAtom **slot = find_slot(name, len, h);
        if (slot && *slot)
                return *slot;
        if (len > UINT32_MAX / 2)
                return NULL;
        if (!table.slots || (table.count + 1) * 2 > table.mask + 1) {
                if (grow() < 0)
                        return NULL;
        }
        slot = find_slot(name, len, h);
        CaAtom *a = malloc(sizeof(CaAtom) + len + 1);
        if (!a)
                return NULL;
        a->id = ++table.count;
        a->hash = h;
        a->len = (uint32_t) len;
        for (size_t i = 0; i < len; i++)
                a->name[i] = (char) lower((unsigned char) name[i]);
        a->name[len] = 0;
        *slot = a;
        return a;
}

const CaAtom *ca_atom_wk(CaWellKnown w) {
        static const char *const names[_CA_WK_MAX] = {
                [CA_WK_REQUIREMENTS] = "Requirements",
                [CA_WK_RANK] = "Rank",
                [CA_WK_CURRENTTIME] = "CurrentTime",
        };
        if (!table.wk[w])
                table.wk[w] = ca_atom(names[w], strlen(names[w]));
        return table.wk[w];
}

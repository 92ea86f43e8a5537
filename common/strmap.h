/* SPDX-License-Identifier: Apache-2.0 */
/*
 * strmap.h — a hash map from strings to pointers: open addressing, linear
 * probing, deletion by backward shift (no tombstones), FNV-1a hashes,
 * optionally case-insensitive (ASCII). Keys are borrowed: each must stay
 * valid and unchanged while its entry is in the map (entries usually point
 * at their own names). Values are never freed by the map.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct GleanStrMap GleanStrMap;

int glean_strmap_new(bool icase, GleanStrMap **ret);
void glean_strmap_free(GleanStrMap *m); /* accepts NULL */

/* The value of key, NULL when absent. */
void *glean_strmap_get(const GleanStrMap *m, const char *key);
/* Adds key -> value, replacing the value of an equal key (whose key
 * pointer is replaced by this one). -ENOMEM. */
int glean_strmap_put(GleanStrMap *m, const char *key, void *value);
/* Removes key; returns its value, NULL when absent. */
void *glean_strmap_remove(GleanStrMap *m, const char *key);
size_t glean_strmap_size(const GleanStrMap *m);
/* Iteration: start with *pos = 0; false at the end. The map must not
 * change during an iteration. */
bool glean_strmap_next(const GleanStrMap *m, size_t *pos, const char **ret_key, void **ret_value);

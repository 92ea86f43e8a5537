/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — the Config table: one definition per (case-insensitive) name,
 * where each came from, copies for all-or-nothing loading, and the plain
 * lookups (raw value, origin, every name).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

int config_new_empty(Config **ret) {
        Config *cfg = calloc(1, sizeof(*cfg));

        if (!cfg)
                return -ENOMEM;
        *ret = cfg;
        return 0;
}

int config_new(Config **ret) {
        _cleanup_(config_freep_config) Config *cfg = NULL;
        int r;

        r = config_new_empty(&cfg);
        if (r < 0)
                return r;
        r = config_add_defaults(cfg);
        if (r < 0)
                return r;
        *ret = cfg;
        cfg = NULL;
        return 0;
}

static void config_clear(Config *cfg) {
        for (size_t i = 0; i < cfg->n_entries; i++) {
                free(cfg->entries[i].name);
                free(cfg->entries[i].value);
        }
        free(cfg->entries);
        for (size_t i = 0; i < cfg->n_sources; i++)
                free(cfg->sources[i]);
        free(cfg->sources);
        for (size_t i = 0; i < cfg->n_warnings; i++)
                free(cfg->warnings[i]);
        free(cfg->warnings);
        config_strv_free(cfg->files);
        config_map_done(&cfg->index);
        *cfg = (Config){};
}

void config_free(Config *cfg) {
        if (!cfg)
                return;
        config_clear(cfg);
        free(cfg);
}

void config_swap(Config *a, Config *b) {
        Config t = *a;

        *a = *b;
        *b = t;
}

const ConfigEntry *config_find(const Config *cfg, const char *name) {
        size_t i;

        if (!cfg || !name || config_map_get(&cfg->index, name, &i) < 0)
                return NULL;
        return &cfg->entries[i];
}

const char *config_entry_file(const Config *cfg, const ConfigEntry *e) {
        return e->source < cfg->n_sources ? cfg->sources[e->source] : "";
}

/* Index of file in cfg->sources, added if new. */
static int intern_source(Config *cfg, const char *file, size_t *ret) {
        char *copy;

        for (size_t i = cfg->n_sources; i > 0; i--)
                if (strcmp(cfg->sources[i - 1], file) == 0) {
                        *ret = i - 1;
                        return 0;
                }
        if (cfg->n_sources == cfg->cap_sources) {
                size_t cap = cfg->cap_sources ? cfg->cap_sources * 2 : 8;
                char **p = realloc(cfg->sources, cap * sizeof(char *));

                if (!p)
                        return -ENOMEM;
                cfg->sources = p;
                cfg->cap_sources = cap;
        }
        copy = strdup(file);
        if (!copy)
                return -ENOMEM;
        cfg->sources[cfg->n_sources] = copy;
        *ret = cfg->n_sources++;
        return 0;
}

int config_define(Config *cfg, const char *name, const char *value, const char *file, int line) {
        _cleanup_config_free_ char *n = NULL, *v = NULL;
        ConfigEntry *e;
        size_t source, i;
        int r;

        if (!config_is_valid_name(name, strlen(name)))
                return -EINVAL;
        if (strlen(value) > CONFIG_MAX_VALUE)
                return -E2BIG;
        r = intern_source(cfg, file ? file : "", &source);
        if (r < 0)
                return r;
        n = strdup(name);
        v = strdup(value);
        if (!n || !v)
                return -ENOMEM;

        if (config_map_get(&cfg->index, name, &i) >= 0) {
                e = &cfg->entries[i];
                /* The index points at the name: replace both together. */
                r = config_map_put(&cfg->index, n, i);
                if (r < 0)
                        return r;
                free(e->name);
                free(e->value);
        } else {
                if (cfg->n_entries == cfg->cap_entries) {
                        size_t cap = cfg->cap_entries ? cfg->cap_entries * 2 : 256;
                        ConfigEntry *p = realloc(cfg->entries, cap * sizeof(*p));

                        if (!p)
                                return -ENOMEM;
                        cfg->entries = p;
                        cfg->cap_entries = cap;
                }
                i = cfg->n_entries;
                r = config_map_put(&cfg->index, n, i);
                if (r < 0)
                        return r;
                cfg->n_entries++;
                e = &cfg->entries[i];
        }
        e->name = n;
        e->value = v;
        e->source = source;
        e->line = line;
        e->metaknob = cfg->in_metaknob > 0;
        n = v = NULL;
        return 0;
}

int config_copy(const Config *src, Config **ret) {
        _cleanup_(config_freep_config) Config *cfg = NULL;
        int r;

        r = config_new_empty(&cfg);
        if (r < 0)
                return r;
        if (src->n_sources) {
                cfg->sources = calloc(src->n_sources, sizeof(char *));
                if (!cfg->sources)
                        return -ENOMEM;
                cfg->cap_sources = src->n_sources;
                for (; cfg->n_sources < src->n_sources; cfg->n_sources++) {
                        cfg->sources[cfg->n_sources] = strdup(src->sources[cfg->n_sources]);
                        if (!cfg->sources[cfg->n_sources])
                                return -ENOMEM;
                }
        }
        if (src->n_warnings) {
                cfg->warnings = calloc(src->n_warnings, sizeof(char *));
                if (!cfg->warnings)
                        return -ENOMEM;
                for (; cfg->n_warnings < src->n_warnings; cfg->n_warnings++) {
                        cfg->warnings[cfg->n_warnings] = strdup(src->warnings[cfg->n_warnings]);
                        if (!cfg->warnings[cfg->n_warnings])
                                return -ENOMEM;
                }
        }
        if (src->n_files) {
                cfg->files = calloc(src->n_files + 1, sizeof(char *));
                if (!cfg->files)
                        return -ENOMEM;
                for (; cfg->n_files < src->n_files; cfg->n_files++)
                        if (!(cfg->files[cfg->n_files] = strdup(src->files[cfg->n_files])))
                                return -ENOMEM;
        }
        if (src->n_entries) {
                cfg->entries = calloc(src->n_entries, sizeof(ConfigEntry));
                if (!cfg->entries || config_map_reserve(&cfg->index, src->n_entries) < 0)
                        return -ENOMEM;
                cfg->cap_entries = src->n_entries;
                for (size_t i = 0; i < src->n_entries; i++) {
                        ConfigEntry *e = &cfg->entries[i];

                        e->name = strdup(src->entries[i].name);
                        e->value = strdup(src->entries[i].value);
                        cfg->n_entries++;
                        if (!e->name || !e->value)
                                return -ENOMEM;
                        e->source = src->entries[i].source;
                        e->line = src->entries[i].line;
                        e->metaknob = src->entries[i].metaknob;
                        r = config_map_put(&cfg->index, e->name, i);
                        if (r < 0)
                                return r;
                }
        }
        *ret = cfg;
        cfg = NULL;
        return 0;
}

int config_set(Config *cfg, const char *name, const char *value) {
        _cleanup_config_free_ char *v = NULL;
        int r;

        if (!cfg || !name || !value || !config_is_valid_name(name, strlen(name)))
                return -EINVAL;
        r = config_resolve_self(cfg, name, value, &v, NULL);
        if (r < 0)
                return r;
        _cleanup_config_free_ char *drawn = NULL; /* $RANDOM_*(): drawn once, now */
        r = config_resolve_random(cfg, v, &drawn, NULL);
        if (r < 0)
                return r;
        return config_define(cfg, name, drawn, CONFIG_SOURCE_SET, 0);
}

const char *config_raw(const Config *cfg, const char *name) {
        const ConfigEntry *e = config_find(cfg, name);

        return e ? e->value : NULL;
}

bool config_from_metaknob(const Config *cfg, const char *name) {
        const ConfigEntry *e = config_find(cfg, name);

        return e && e->metaknob;
}

int config_where(const Config *cfg, const char *name, const char **ret_file, int *ret_line) {
        const ConfigEntry *e = config_find(cfg, name);

        if (!e)
                return -ENOENT;
        if (ret_file)
                *ret_file = config_entry_file(cfg, e);
        if (ret_line)
                *ret_line = e->line;
        return 0;
}

static int compare_names(const void *a, const void *b) {
        const char *x = *(const char *const *) a, *y = *(const char *const *) b;
        int c = strcasecmp(x, y);

        return c ? c : strcmp(x, y);
}

int config_names(const Config *cfg, char ***ret) {
        char **strv;

        if (!cfg)
                return -EINVAL;
        strv = calloc(cfg->n_entries + 1, sizeof(char *));
        if (!strv)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_entries; i++) {
                strv[i] = strdup(cfg->entries[i].name);
                if (!strv[i]) {
                        config_strv_free(strv);
                        return -ENOMEM;
                }
        }
        qsort(strv, cfg->n_entries, sizeof(char *), compare_names);
        *ret = strv;
        return 0;
}

int config_warn(Config *cfg, const char *file, int line, const char *fmt, ...) {
        _cleanup_config_free_ char *reason = NULL, *msg = NULL;
        va_list ap;
        char **grown;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&reason, fmt, ap);
        va_end(ap);
        if (r < 0)
                return -ENOMEM;
        if (file && file[0] && line > 0)
                r = asprintf(&msg, "%s:%d: %s", file, line, reason);
        else if (file && file[0])
                r = asprintf(&msg, "%s: %s", file, reason);
        else
                r = asprintf(&msg, "%s", reason);
        if (r < 0)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_warnings; i++)
                if (strcmp(cfg->warnings[i], msg) == 0)
                        return 0;
        if (cfg->n_warnings >= CONFIG_MAX_WARNINGS)
                return -E2BIG;
        grown = realloc(cfg->warnings, (cfg->n_warnings + 1) * sizeof(char *));
        if (!grown)
                return -ENOMEM;
        cfg->warnings = grown;
        cfg->warnings[cfg->n_warnings++] = msg;
        msg = NULL;
        return 0;
}

int config_warnings(const Config *cfg, char ***ret) {
        char **out;

        if (!cfg || !ret)
                return -EINVAL;
        if (cfg->n_warnings == 0) {
                *ret = NULL;
                return 0;
        }
        out = calloc(cfg->n_warnings + 1, sizeof(char *));
        if (!out)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_warnings; i++)
                if (!(out[i] = strdup(cfg->warnings[i]))) {
                        config_strv_free(out);
                        return -ENOMEM;
                }
        *ret = out;
        return (int) cfg->n_warnings;
}

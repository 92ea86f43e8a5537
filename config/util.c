/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c — small pieces the configuration language is built from: errors,
 * growable strings, a case-insensitive name index, lists of names.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* ---- errors ---- */

int config_error(ConfigError *err, const char *file, int line, int r, const char *fmt, ...) {
        va_list ap;

        if (!err)
                return r;
        snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
        err->line = line;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
        va_end(ap);
        return r;
}

int config_msg_error(char *msg, size_t msg_size, const char *fmt, ...) {
        va_list ap;

        if (msg && msg_size > 0) {
                va_start(ap, fmt);
                vsnprintf(msg, msg_size, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

char *config_error_format(const ConfigError *err) {
        char *s = NULL;
        int n;

        if (!err)
                return NULL;
        if (err->file[0] && err->line > 0)
                n = asprintf(&s, "%s:%d: %s", err->file, err->line, err->msg);
        else if (err->file[0])
                n = asprintf(&s, "%s: %s", err->file, err->msg);
        else
                n = asprintf(&s, "%s", err->msg);
        return n < 0 ? NULL : s;
}

/* ---- growable strings ---- */

int config_buf_add(ConfigBuf *b, const char *s, size_t n) {
        size_t need;

        if (n > CONFIG_MAX_VALUE || b->len + n > CONFIG_MAX_VALUE)
                return -E2BIG;
        need = b->len + n + 1;
        if (need > b->cap) {
                size_t cap = b->cap ? b->cap : 64;
                char *p;

                while (cap < need)
                        cap *= 2;
                p = realloc(b->s, cap);
                if (!p)
                        return -ENOMEM;
                b->s = p;
                b->cap = cap;
        }
        if (n)
                memcpy(b->s + b->len, s, n);
        b->len += n;
        b->s[b->len] = '\0';
        return 0;
}

int config_buf_adds(ConfigBuf *b, const char *s) {
        return config_buf_add(b, s, strlen(s));
}

int config_buf_addc(ConfigBuf *b, char c) {
        return config_buf_add(b, &c, 1);
}

char *config_buf_steal(ConfigBuf *b) {
        char *s = b->s;

        if (!s)
                s = strdup("");
        *b = (ConfigBuf){};
        return s;
}

void config_buf_done(ConfigBuf *b) {
        free(b->s);
        *b = (ConfigBuf){};
}

/* ---- name index: open addressing, FNV-1a over lower-cased bytes ---- */

static size_t hash_name(const char *s) {
        size_t h = 2166136261u;

        for (; *s; s++) {
                h ^= (unsigned char) tolower((unsigned char) *s);
                h *= 16777619u;
        }
        return h;
}

/* Slot of key, or of the empty slot where it would go. */
static size_t map_slot(const ConfigMap *m, const char *key) {
        size_t mask = m->cap - 1, i = hash_name(key) & mask;

        while (m->keys[i] && strcasecmp(m->keys[i], key) != 0)
                i = (i + 1) & mask;
        return i;
}

int config_map_get(const ConfigMap *m, const char *key, size_t *ret) {
        size_t i;

        if (m->cap == 0)
                return -ENOENT;
        i = map_slot(m, key);
        if (!m->keys[i])
                return -ENOENT;
        *ret = m->vals[i];
        return 0;
}

/* Room for at least n keys at a load of at most 1/2. */
static int map_resize(ConfigMap *m, size_t cap) {
        ConfigMap n = { .cap = cap };

        n.keys = calloc(cap, sizeof(*n.keys));
        n.vals = calloc(cap, sizeof(*n.vals));
        if (!n.keys || !n.vals) {
                free(n.keys);
                free(n.vals);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m->cap; i++) {
                size_t j;

                if (!m->keys[i])
                        continue;
                j = map_slot(&n, m->keys[i]);
                n.keys[j] = m->keys[i];
                n.vals[j] = m->vals[i];
                n.n++;
        }
        config_map_done(m);
        *m = n;
        return 0;
}

int config_map_reserve(ConfigMap *m, size_t n) {
        size_t cap = m->cap ? m->cap : 64;

        while (cap < 2 * n)
                cap *= 2;
        return cap == m->cap ? 0 : map_resize(m, cap);
}

int config_map_put(ConfigMap *m, const char *key, size_t val) {
        size_t i;

        if ((m->n + 1) * 2 > m->cap) {
                int r = config_map_reserve(m, m->n + 1);

                if (r < 0)
                        return r;
        }
        i = map_slot(m, key);
        if (!m->keys[i])
                m->n++;
        m->keys[i] = key;
        m->vals[i] = val;
        return 0;
}

void config_map_done(ConfigMap *m) {
        free(m->keys);
        free(m->vals);
        *m = (ConfigMap){};
}

/* ---- strings ---- */

bool config_is_name_char(int c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
               c == '.' || c == '/';
}

bool config_is_valid_name(const char *s, size_t n) {
        if (n == 0 || n > CONFIG_MAX_NAME)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!config_is_name_char((unsigned char) s[i]))
                        return false;
        return true;
}

char *config_strip(char *s) {
        size_t n;

        while (isspace((unsigned char) *s))
                s++;
        n = strlen(s);
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                s[--n] = '\0';
        return s;
}

void config_strv_free(char **strv) {
        if (!strv)
                return;
        for (char **p = strv; *p; p++)
                free(*p);
        free(strv);
}

static int strv_push(char ***strv, size_t *n, char *item) {
        char **p = realloc(*strv, (*n + 2) * sizeof(char *));

        if (!p)
                return -ENOMEM;
        p[(*n)++] = item;
        p[*n] = NULL;
        *strv = p;
        return 0;
}

int config_strv_add_unique(char ***strv, size_t *n, const char *item) {
        char *copy;
        int r;

        for (size_t i = 0; i < *n; i++)
                if (strcasecmp((*strv)[i], item) == 0)
                        return 0;
        copy = strdup(item);
        if (!copy)
                return -ENOMEM;
        r = strv_push(strv, n, copy);
        if (r < 0)
                free(copy);
        return r;
}

static bool is_list_sep(int c) {
        return c == ',' || isspace(c);
}

int config_split_list(const char *s, char ***ret) {
        char **strv = calloc(1, sizeof(char *));
        size_t n = 0;

        if (!strv)
                return -ENOMEM;
        while (*s) {
                const char *e;
                char *item;
                int r;

                while (*s && is_list_sep((unsigned char) *s))
                        s++;
                if (!*s)
                        break;
                for (e = s; *e && !is_list_sep((unsigned char) *e); e++)
                        ;
                item = strndup(s, (size_t) (e - s));
                if (!item) {
                        config_strv_free(strv);
                        return -ENOMEM;
                }
                r = strv_push(&strv, &n, item);
                if (r < 0) {
                        free(item);
                        config_strv_free(strv);
                        return r;
                }
                s = e;
        }
        *ret = strv;
        return 0;
}

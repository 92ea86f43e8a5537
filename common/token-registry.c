/* SPDX-License-Identifier: Apache-2.0 */
/*
 * token-registry.c — the tokens a central manager issued, and the words of
 * their rights (token.h).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cleanup.h"
#include "token.h"

static const struct {
        unsigned bit;
        const char *word;
} rights_words[] = { { GLEAN_RIGHT_ADVERTISE, "advertise" },
                     { GLEAN_RIGHT_RUN, "run" },
                     { GLEAN_RIGHT_RELAY, "relay" },
                     { GLEAN_RIGHT_RELAY_ADMINS, "relay-admins" } };

void glean_token_rights_format(unsigned rights, char *buf, size_t len) {
        size_t k = 0;

        if (len == 0)
                return;
        buf[0] = 0;
        for (size_t i = 0; i < sizeof rights_words / sizeof *rights_words; i++)
                if (rights & rights_words[i].bit) {
                        int w = snprintf(buf + k, len - k, "%s%s", k ? "," : "", rights_words[i].word);
                        if (w < 0 || (size_t) w >= len - k)
                                return;
                        k += (size_t) w;
                }
        if (k == 0)
                snprintf(buf, len, "none");
}

int glean_token_rights_parse(const char *text, unsigned *ret) {
        unsigned rights = 0;
        const char *p = text;

        if (!text || !*text)
                return -EBADMSG;
        while (*p) {
                size_t n = strcspn(p, ",");
                unsigned bit = 0;
                for (size_t i = 0; i < sizeof rights_words / sizeof *rights_words && !bit; i++)
                        if (strlen(rights_words[i].word) == n && strncmp(p, rights_words[i].word, n) == 0)
                                bit = rights_words[i].bit;
                if (!bit || (rights & bit))
                        return -EBADMSG;
                rights |= bit;
                p += n;
                if (*p == ',' && !*++p)
                        return -EBADMSG;
        }
        *ret = rights;
        return 0;
}

void glean_token_registry_clear(GleanTokenRegistry *reg) {
        if (!reg)
                return;
        free(reg->rec);
        *reg = (GleanTokenRegistry) {};
}

GleanTokenRecord *glean_token_registry_find(const GleanTokenRegistry *reg, const uint8_t id[GLEAN_TOKEN_ID_SIZE]) {
        for (size_t i = 0; i < reg->n; i++)
                if (memcmp(reg->rec[i].id, id, GLEAN_TOKEN_ID_SIZE) == 0)
                        return &reg->rec[i];
        return NULL;
}

static int push(GleanTokenRegistry *reg, const GleanTokenRecord *r) {
        if (glean_token_registry_find(reg, r->id))
                return -EEXIST;
        if (reg->n >= GLEAN_TOKEN_REGISTRY_MAX)
                return -E2BIG;
        if (reg->n == reg->cap) {
                size_t cap = reg->cap ? 2 * reg->cap : 16;
                GleanTokenRecord *n = realloc(reg->rec, cap * sizeof(*n));
                if (!n)
                        return -ENOMEM;
                reg->rec = n;
                reg->cap = cap;
        }
        reg->rec[reg->n++] = *r;
        return 0;
}

int glean_token_registry_add(GleanTokenRegistry *reg, const GleanToken *t) {
        GleanTokenRecord r = { .rights = t->rights, .issued = t->issued, .expires = t->expires };
        memcpy(r.id, t->id, sizeof r.id);
        snprintf(r.name, sizeof r.name, "%s", t->name);
        return push(reg, &r);
}

/* A decimal int64 of the whole word; false otherwise. */
static bool read_int(const char *w, int64_t *ret) {
        char *end = NULL;
        if (!w || !*w || (*w != '-' && (*w < '0' || *w > '9')))
                return false;
        errno = 0;
        long long v = strtoll(w, &end, 10);
        if (errno || *end)
                return false;
        *ret = v;
        return true;
}

/* One line's record; a reason otherwise. */
static const char *parse_line(char *line, GleanTokenRecord *r) {
        char *w[6];
        size_t n = 0;
        for (char *save = NULL, *t = strtok_r(line, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
                if (n < 6)
                        w[n++] = t;
                else
                        return "more than 6 fields";
        if (n != 6)
                return "want 6 fields: id, machine, rights, issued, expires, revoked (or -)";
        if (glean_token_id_parse(w[0], r->id) < 0)
                return "the id is not 32 hexadecimal digits";
        if (!glean_token_name_valid(w[1]))
                return "the machine is not a token's name (agent@host)";
        snprintf(r->name, sizeof r->name, "%s", w[1]);
        if (glean_token_rights_parse(w[2], &r->rights) < 0)
                return "the rights are not advertise, run, relay, relay-admins separated by commas";
        if (!read_int(w[3], &r->issued) || !read_int(w[4], &r->expires) || r->issued < 0 || r->expires <= r->issued)
                return "issued and expires are not seconds, expires after issued";
        r->revoked = 0;
        if (strcmp(w[5], "-") != 0 && (!read_int(w[5], &r->revoked) || r->revoked <= 0))
                return "revoked is neither '-' nor seconds";
        return NULL;
}

int glean_token_registry_parse(const char *text, size_t len, const char *path, GleanTokenRegistry *ret, char *why,
                               size_t whylen) {
        GleanTokenRegistry reg = {};
        size_t lineno = 0;
        const char *p = text, *end = text + len;
        int r = 0;

        while (p < end && r >= 0) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
                char line[1024];
                lineno++;
                if (n >= sizeof line) {
                        r = glean_why(-EBADMSG, why, whylen, "%s:%zu: a line longer than %zu bytes", path, lineno,
                                      sizeof line - 1);
                        break;
                }
                memcpy(line, p, n);
                line[n] = 0;
                p += n + (nl ? 1 : 0);
                if (memchr(line, 0, n)) {
                        r = glean_why(-EBADMSG, why, whylen, "%s:%zu: a NUL byte", path, lineno);
                        break;
                }
                size_t k = strspn(line, " \t");
                if (!line[k] || line[k] == '#')
                        continue;
                GleanTokenRecord rec = {};
                const char *bad = parse_line(line + k, &rec);
                if (bad)
                        r = glean_why(-EBADMSG, why, whylen, "%s:%zu: %s", path, lineno, bad);
                else if ((r = push(&reg, &rec)) == -EEXIST)
                        r = glean_why(-EBADMSG, why, whylen, "%s:%zu: a token id twice", path, lineno);
                else if (r == -E2BIG)
                        r = glean_why(-EBADMSG, why, whylen, "%s:%zu: more than %d tokens", path, lineno,
                                      GLEAN_TOKEN_REGISTRY_MAX);
        }
        if (r < 0) {
                glean_token_registry_clear(&reg);
                return r;
        }
        *ret = reg;
        return 0;
}

char *glean_token_registry_format(const GleanTokenRegistry *reg) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f)
                return NULL;
        fprintf(f, "# glean: the tokens this central manager issued (glean token create, list, revoke)\n"
                   "# id machine rights issued expires revoked\n");
        for (size_t i = 0; i < reg->n; i++) {
                const GleanTokenRecord *r = &reg->rec[i];
                char id[2 * GLEAN_TOKEN_ID_SIZE + 1], rights[64], revoked[24] = "-";
                glean_token_id_format(r->id, id);
                glean_token_rights_format(r->rights, rights, sizeof rights);
                if (r->revoked > 0)
                        snprintf(revoked, sizeof revoked, "%" PRId64, r->revoked);
                fprintf(f, "%s %s %s %" PRId64 " %" PRId64 " %s\n", id, r->name, rights, r->issued, r->expires,
                        revoked);
        }
        if (fclose(f) != 0) {
                free(buf);
                return NULL;
        }
        return buf;
}

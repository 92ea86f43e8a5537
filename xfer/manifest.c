/* SPDX-License-Identifier: Apache-2.0 */
/*
 * manifest.c — what arrived in a sandbox (the execute side's record, for
 * telling the job's new and changed files from its input): one entry a
 * line, "SIZE MTIME_SEC MTIME_NSEC NAME", the name with '%', '\n' and
 * other control bytes as %XX.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xfer-internal.h"

int xfer_manifest_add(XferManifest *m, const char *name, uint64_t size, int64_t sec, uint32_t nsec) {
        if (m->n == m->cap) {
                size_t cap = m->cap ? m->cap * 2 : 64;
                XferManifestEntry *v = realloc(m->v, cap * sizeof *v);
                if (!v)
                        return -ENOMEM;
                m->v = v;
                m->cap = cap;
        }
        char *s = strdup(name);
        if (!s)
                return -ENOMEM;
        m->v[m->n++] = (XferManifestEntry){ .name = s, .size = size, .mtime_sec = sec, .mtime_nsec = nsec };
        return 0;
}

char *xfer_manifest_to_text(const XferManifest *m) {
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);

        if (!f)
                return NULL;
        for (size_t i = 0; i < m->n; i++) {
                fprintf(f, "%" PRIu64 " %" PRId64 " %" PRIu32 " ", m->v[i].size, m->v[i].mtime_sec, m->v[i].mtime_nsec);
                for (const unsigned char *p = (const unsigned char *) m->v[i].name; *p; p++)
                        if (*p == '%' || *p < 0x20 || *p == 0x7f)
                                fprintf(f, "%%%02X", *p);
                        else
                                fputc(*p, f);
                fputc('\n', f);
        }
        if (fclose(f) != 0) {
                free(text);
                return NULL;
        }
        return text;
}

static int unhex(char c) {
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

int xfer_manifest_parse(const char *text, size_t len, XferManifest *ret) {
        XferManifest m = { 0 };
        const char *p = text, *end = text + len;
        char name[XFER_NAME_MAX + 1];

        while (p < end) {
                const char *nl = memchr(p, '\n', (size_t) (end - p));
                if (!nl)
                        goto bad;
                uint64_t size;
                int64_t sec;
                uint32_t nsec;
                int off = 0;
                char line[64];
                size_t ll = (size_t) (nl - p) < sizeof line - 1 ? (size_t) (nl - p) : sizeof line - 1;
                memcpy(line, p, ll);
                line[ll] = '\0';
                if (sscanf(line, "%" SCNu64 " %" SCNd64 " %" SCNu32 " %n", &size, &sec, &nsec, &off) != 3 || off == 0)
                        goto bad;
                size_t n = 0;
                for (const char *q = p + off; q < nl; q++) {
                        if (n >= XFER_NAME_MAX)
                                goto bad;
                        if (*q == '%') {
                                if (nl - q < 3 || unhex(q[1]) < 0 || unhex(q[2]) < 0)
                                        goto bad;
                                name[n++] = (char) (unhex(q[1]) * 16 + unhex(q[2]));
                                q += 2;
                        } else
                                name[n++] = *q;
                }
                name[n] = '\0';
                if (n == 0 || xfer_manifest_add(&m, name, size, sec, nsec) < 0)
                        goto bad;
                p = nl + 1;
        }
        *ret = m;
        return 0;
bad:
        xfer_manifest_clear(&m);
        return -EBADMSG;
}

const XferManifestEntry *xfer_manifest_find(const XferManifest *m, const char *name) {
        for (size_t i = 0; m && i < m->n; i++)
                if (strcmp(m->v[i].name, name) == 0)
                        return &m->v[i];
        return NULL;
}

void xfer_manifest_clear(XferManifest *m) {
        for (size_t i = 0; i < m->n; i++)
                free(m->v[i].name);
        free(m->v);
        *m = (XferManifest){ 0 };
}

/* SPDX-License-Identifier: Apache-2.0 */
/* buf.c — a growable string for unparsing and string functions. */
#include "classad-internal.h"

#include <stdio.h>
#include <stdlib.h>

static bool reserve(CaBuf *b, size_t extra) {
        if (b->oom)
                return false;
        if (b->len + extra + 1 <= b->cap)
                return true;
        size_t cap = b->cap ? b->cap : 64;
        while (cap < b->len + extra + 1) {
                if (cap > SIZE_MAX / 2) {
                        b->oom = true;
                        return false;
                }
                cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (!p) {
                b->oom = true;
                return false;
        }
        b->p = p;
        b->cap = cap;
        return true;
}

void ca_buf_putn(CaBuf *b, const char *s, size_t n) {
        if (!reserve(b, n))
                return;
        memcpy(b->p + b->len, s, n);
        b->len += n;
        b->p[b->len] = 0;
}

void ca_buf_putc(CaBuf *b, char c) {
        if (!reserve(b, 1))
                return;
        b->p[b->len++] = c;
        b->p[b->len] = 0;
}

void ca_buf_printf(CaBuf *b, const char *fmt, ...) {
        va_list ap;
        char small[128];
        va_start(ap, fmt);
        int n = vsnprintf(small, sizeof small, fmt, ap);
        va_end(ap);
        if (n < 0) {
                b->oom = true;
                return;
        }
        if ((size_t) n < sizeof small) {
                ca_buf_putn(b, small, (size_t) n);
                return;
        }
        if (!reserve(b, (size_t) n))
                return;
        va_start(ap, fmt);
        vsnprintf(b->p + b->len, (size_t) n + 1, fmt, ap);
        va_end(ap);
        b->len += (size_t) n;
}

char *ca_buf_steal(CaBuf *b) {
        char *p = NULL;
        if (!b->oom) {
                if (!b->p)
                        p = calloc(1, 1);
                else
                        p = b->p, b->p = NULL;
        }
        ca_buf_free(b);
        return p;
}

CaValue ca_buf_value(CaBuf *b) {
        CaValue v = b->oom ? ca_error() : ca_string_n(b->p ? b->p : "", b->len);
        ca_buf_free(b);
        return v;
}

void ca_buf_free(CaBuf *b) {
        free(b->p);
        *b = (CaBuf){};
}

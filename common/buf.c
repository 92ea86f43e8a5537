/* SPDX-License-Identifier: Apache-2.0 */
/*
 * buf.c — a byte queue (common-internal.h): appended at the end, consumed
 * from the front, for the frame reader's input and the sealed transport's
 * output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common-internal.h"

unsigned char *glean_buf_tail(GleanBuf *b, size_t n) {
        if (b->cap - b->end >= n)
                return b->data + b->end;
        /* Move the queued bytes to the front first. */
        if (b->start > 0) {
                memmove(b->data, b->data + b->start, b->end - b->start);
                b->end -= b->start;
                b->start = 0;
                if (b->cap - b->end >= n)
                        return b->data + b->end;
        }
        if (n > SIZE_MAX / 2 - b->end)
                return NULL;
        size_t want = b->end + n, cap = b->cap ? b->cap : 256;
        while (cap < want)
                cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d)
                return NULL;
        b->data = d;
        b->cap = cap;
        return b->data + b->end;
}

void glean_buf_consume(GleanBuf *b, size_t n, size_t keep) {
        if (n > b->end - b->start)
                n = b->end - b->start;
        b->start += n;
        if (b->start < b->end)
                return;
        b->start = b->end = 0;
        if (b->cap > keep)
                glean_buf_done(b);
}

void glean_buf_done(GleanBuf *b) {
        free(b->data);
        *b = (GleanBuf){};
}

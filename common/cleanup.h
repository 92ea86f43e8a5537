/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cleanup.h — the generic cleanup helpers (GCC/Clang cleanup attribute,
 * ownership transfer, a reason into a caller's buffer), for common/ and
 * the agent's internal headers alike.
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _cleanup_free_ _cleanup_(glean_freep)
#define _cleanup_close_ _cleanup_(glean_closep)

static inline void glean_freep(void *p) {
        free(*(void **) p);
}

static inline void glean_closep(int *fd) {
        if (*fd >= 0)
                (void) close(*fd);
}

/* Returns *p and sets it to NULL (ownership leaves a _cleanup_ variable). */
#define TAKE_PTR(p)                          \
        ({                                   \
                __typeof__(p) _tp_ = (p);    \
                (p) = NULL;                  \
                _tp_;                        \
        })

#define TAKE_FD(fd)                  \
        ({                           \
                int _tf_ = (fd);     \
                (fd) = -1;           \
                _tf_;                \
        })

/* Writes a reason into why (when whylen > 0) and returns r. */
__attribute__((format(printf, 4, 5))) static inline int glean_why(int r, char *why, size_t whylen, const char *fmt,
                                                                  ...) {
        if (why && whylen > 0) {
                va_list ap;
                va_start(ap, fmt);
                vsnprintf(why, whylen, fmt, ap);
                va_end(ap);
        }
        return r;
}

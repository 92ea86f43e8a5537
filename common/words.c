/* SPDX-License-Identifier: Apache-2.0 */
/* words.c — words of a line, up to a bracketed ClassAd (words.h). */
#include <ctype.h>
#include <stddef.h>

#include "words.h"

char *glean_next_word(char **p) {
        char *s = glean_skip_space(*p), *w;

        if (!*s || *s == '[')
                return *p = s, NULL;
        w = s;
        while (*s && !isspace((unsigned char) *s))
                s++;
        if (*s)
                *s++ = 0;
        *p = s;
        return w;
}

char *glean_skip_space(char *p) {
        while (isspace((unsigned char) *p))
                p++;
        return p;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c — what the verbs' --json output shares.
 */
#include <math.h>
#include <stdio.h>

#include "cli.h"

void cli_json_string(FILE *f, const char *s) {
        fputc('"', f);
        for (; *s; s++) {
                unsigned char ch = (unsigned char) *s;
                if (ch == '"' || ch == '\\')
                        fprintf(f, "\\%c", ch);
                else if (ch < 0x20)
                        fprintf(f, "\\u%04x", ch);
                else
                        fputc(ch, f);
        }
        fputc('"', f);
}

void cli_json_number(FILE *f, double v) {
        if (isfinite(v))
                fprintf(f, "%.15g", v);
        else
                fputs("null", f);
}

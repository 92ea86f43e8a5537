/* SPDX-License-Identifier: Apache-2.0 */
/*
 * json.c — what the verbs' --json output shares.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "jobs.h"

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

void cli_json_ad(FILE *f, const ClassAd *ad) {
        ClassAdIter it = classad_iter(ad);
        const char *name;
        char *text;
        bool first = true;

        fputc('{', f);
        while (classad_iter_next(&it, &name, &text)) {
                CaValue v = ca_undefined();
                char *lit;
                bool literal;

                classad_eval_attr(ad, name, CA_MODE_OLD, &v);
                lit = ca_value_unparse(&v);
                literal = lit && text && strcmp(lit, text) == 0;
                fprintf(f, "%s\n  ", first ? "" : ",");
                first = false;
                cli_json_string(f, name);
                fputs(": ", f);
                if (literal && (v.type == CA_INT || v.type == CA_BOOL))
                        fputs(lit, f);
                else if (literal && v.type == CA_REAL)
                        cli_json_number(f, v.u.r);
                else if (literal && v.type == CA_STRING)
                        cli_json_string(f, v.u.s->s);
                else if (literal && v.type == CA_UNDEFINED)
                        fputs("null", f);
                else
                        cli_json_string(f, text ? text : "");
                free(lit);
                free(text);
                ca_value_clear(&v);
        }
        fputs("\n}", f);
}

void cli_json_ads(FILE *f, ClassAd **ads, size_t n) {
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
                fputs(i ? ",\n" : "\n", f);
                cli_json_ad(f, ads[i]);
        }
        fputs(n ? "\n]\n" : "]\n", f);
}

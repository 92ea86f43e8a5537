/* SPDX-License-Identifier: Apache-2.0 */
/* fn-util.c — helpers shared by the built-in functions: HTCondor's value
 * conversions, version comparison, string tokenising, time zone offset. */
#include "fn-internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

int64_t fn_d2ll(double d) {
        /* cvttsd2si yields the "integer indefinite" value for NaN and for
         * anything outside [-2^63, 2^63). */
        if (isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0)
                return INT64_MIN;
        return (int64_t) d;
}

FnConv fn_conv_string(const CaValue *v, CaValue *ret) {
        CaBuf b = {};

        switch (v->type) {
        case CA_UNDEFINED:
                *ret = ca_undefined();
                return FN_CONV_UNDEF;
        case CA_ERROR:
                *ret = ca_error();
                return FN_CONV_ERROR;
        case CA_STRING:
                *ret = ca_value_copy(v);
                return FN_CONV_OK;
        case CA_ABSTIME:
                ca_format_abstime(&b, v->u.at.secs, v->u.at.offset);
                break;
        case CA_RELTIME:
                /* value.cpp reads the relative time into a time_t first. */
                ca_format_reltime(&b, (double) fn_reltime_secs(v));
                break;
        default: /* lists, ads, booleans, numbers: as the unparser prints them */
                ca_unparse_value(&b, v);
                break;
        }
        *ret = ca_buf_value(&b);
        return ret->type == CA_STRING ? FN_CONV_OK : FN_CONV_ERROR;
}

FnConv fn_conv_real(const CaValue *v, double *ret) {
        switch (v->type) {
        case CA_UNDEFINED:
                return FN_CONV_UNDEF;
        case CA_STRING: {
                const char *start = fn_str(v);
                char *end;
                double r = strtod(start, &end);
                if (end == start && r == 0.0)
                        return FN_CONV_ERROR;
                *ret = r;
                return FN_CONV_OK;
        }
        case CA_BOOL:
                *ret = v->u.b ? 1.0 : 0.0;
                return FN_CONV_OK;
        case CA_INT:
                *ret = (double) v->u.i;
                return FN_CONV_OK;
        case CA_REAL:
                *ret = v->u.r;
                return FN_CONV_OK;
        case CA_ABSTIME:
                *ret = (double) v->u.at.secs;
                return FN_CONV_OK;
        case CA_RELTIME:
                *ret = (double) fn_reltime_secs(v);
                return FN_CONV_OK;
        default:
                return FN_CONV_ERROR;
        }
}

FnConv fn_conv_int(const CaValue *v, int64_t *ret) {
        switch (v->type) {
        case CA_UNDEFINED:
                return FN_CONV_UNDEF;
        case CA_STRING: {
                const char *start = fn_str(v);
                char *end;
                int64_t i = fn_d2ll(strtod(start, &end));
                if (end == start && i == 0)
                        return FN_CONV_ERROR;
                *ret = i;
                return FN_CONV_OK;
        }
        case CA_BOOL:
                *ret = v->u.b ? 1 : 0;
                return FN_CONV_OK;
        case CA_INT:
                *ret = v->u.i;
                return FN_CONV_OK;
        case CA_REAL:
                *ret = fn_d2ll(v->u.r);
                return FN_CONV_OK;
        case CA_ABSTIME:
                *ret = v->u.at.secs;
                return FN_CONV_OK;
        case CA_RELTIME:
                *ret = fn_reltime_secs(v);
                return FN_CONV_OK;
        default:
                return FN_CONV_ERROR;
        }
}

CaValue fn_string_list(const char *const *p, const size_t *len, size_t n) {
        if (n > UINT32_MAX)
                return ca_error();
        CaList *l = ca_list_new((uint32_t) n);
        if (!l)
                return ca_error();
        for (size_t i = 0; i < n; i++) {
                l->u.vals[i] = ca_string_n(p[i], len[i]);
                if (l->u.vals[i].type != CA_STRING) {
                        ca_list_unref(l);
                        return ca_error();
                }
        }
        return ca_list_value(l);
}

static inline bool is_digit(char c) {
        return c >= '0' && c <= '9';
}

/* The comparison strverscmp(3) describes, as HTCondor's natural_cmp():
 * plain byte comparison, except where the first difference falls inside
 * a run of digits; there fewer leading zeros sort first and, without
 * leading zeros, the longer number is the larger. Results are byte
 * differences or length differences, not just -1/0/1. */
int fn_natural_cmp(const char *a, const char *b) {
        const char *a0 = a;

        while (*a && *a == *b) {
                a++;
                b++;
        }
        if (*a == *b)
                return 0;

        /* the digit run the difference is part of, in each string */
        size_t back = 0;
        while (a - back > a0 && is_digit(a[-(ptrdiff_t) back - 1]))
                back++;
        const char *na = a - back, *nb = b - back;

        if (back == 0 && (!is_digit(*a) || !is_digit(*b)))
                return *a - *b;

        const char *za = na, *zb = nb;
        while (*za == '0')
                za++;
        while (*zb == '0')
                zb++;
        /* a lone final zero is the number itself, not a leading zero */
        if (za > na && !is_digit(*za))
                za--;
        if (zb > nb && !is_digit(*zb))
                zb--;

        ptrdiff_t zeros_a = za - na, zeros_b = zb - nb;
        if (zeros_a != zeros_b)
                return (int) (zeros_b - zeros_a);
        if (zeros_a > 0)
                return *a - *b;

        const char *ea = za, *eb = zb;
        while (is_digit(*ea))
                ea++;
        while (is_digit(*eb))
                eb++;
        if (ea - na != eb - nb)
                return (int) ((ea - na) - (eb - nb));
        return *a - *b;
}

bool fn_tok_next(FnTok *t, const char **ret_p, size_t *ret_len) {
        size_t i = t->pos;

        while (i < t->len && t->s[i] &&
               (strchr(t->delims, t->s[i]) || isspace((unsigned char) t->s[i])))
                i++;
        size_t start = i, last = i;
        while (i < t->len && t->s[i] && !strchr(t->delims, t->s[i])) {
                if (!isspace((unsigned char) t->s[i]))
                        last = i;
                i++;
        }
        t->pos = i;
        if (i <= start)
                return false;
        *ret_p = t->s + start;
        *ret_len = last - start + 1;
        return true;
}

void fn_slices_add(FnSlices *s, const char *p, size_t len) {
        if (s->oom)
                return;
        if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 8;
                const char **np = realloc(s->p, cap * sizeof(*np));
                if (np)
                        s->p = np;
                size_t *nl = realloc(s->len, cap * sizeof(*nl));
                if (nl)
                        s->len = nl;
                if (!np || !nl) {
                        s->oom = true;
                        return;
                }
                s->cap = cap;
        }
        s->p[s->n] = p;
        s->len[s->n] = len;
        s->n++;
}

void fn_slices_free(FnSlices *s) {
        free(s->p);
        free(s->len);
        *s = (FnSlices){};
}

long fn_tz_offset(int64_t t, bool no_dst) {
        time_t clock = (time_t) t;
        struct tm tms;

        if (!localtime_r(&clock, &tms))
                return 0;
        long off = tms.tm_gmtoff;
        if (no_dst && tms.tm_isdst > 0)
                off -= 3600;
        return off;
}

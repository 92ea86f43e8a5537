/* SPDX-License-Identifier: Apache-2.0 */
/*
 * timefmt.c — text forms of absolute and relative times, as HTCondor's
 * util.cpp (absTimeToString, relTimeToString) prints them and literals.cpp
 * (Literal::MakeAbsTime, Literal::MakeRelTime) parses them.
 */
#include "fn-internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <time.h>

/* 2020-01-01T00:00:00-06:00. The sign is '+' only for a positive offset,
 * so UTC prints as -00:00 (absTimeToString). */
void ca_format_abstime(CaBuf *b, int64_t secs, int32_t offset) {
        time_t clock = (time_t) (secs + offset);
        struct tm tms;
        char buf[64];

        if (!gmtime_r(&clock, &tms))
                memset(&tms, 0, sizeof(tms));
        if (strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tms) == 0)
                buf[0] = 0;
        ca_buf_puts(b, buf);

        int64_t tz = offset;
        char sign = '+';
        if (tz <= 0) {
                sign = '-';
                tz = -tz;
        }
        ca_buf_printf(b, "%c%02d:%02d", sign, (int) (tz / 3600), (int) ((tz / 60) % 60));
}

/* [-][D+]HH:MM:SS with leading zero fields dropped (relTimeToString):
 * "1+02:03:04", "02:03:04", "03:04", "04". Fractional seconds print with
 * %02g, e.g. "01:1.5". */
void ca_format_reltime(CaBuf *b, double rsecs) {
        if (rsecs < 0) {
                ca_buf_putc(b, '-');
                rsecs = -rsecs;
        }
        double frac = rsecs - floor(rsecs);
        int64_t whole = fn_d2ll(rsecs);
        int64_t days = whole / 86400;
        int64_t hrs = (whole % 86400) / 3600;
        int64_t mins = (whole % 3600) / 60;
        double secs = (double) (whole % 60) + frac;

        if (days) {
                if (frac == 0)
                        ca_buf_printf(b, "%lld+%02lld:%02lld:%02d", (long long) days, (long long) hrs,
                                      (long long) mins, (int) secs);
                else
                        ca_buf_printf(b, "%lld+%02lld:%02lld:%02g", (long long) days, (long long) hrs,
                                      (long long) mins, secs);
        } else if (hrs) {
                if (frac == 0)
                        ca_buf_printf(b, "%02lld:%02lld:%02d", (long long) hrs, (long long) mins, (int) secs);
                else
                        ca_buf_printf(b, "%02lld:%02lld:%02g", (long long) hrs, (long long) mins, secs);
        } else if (mins) {
                if (frac == 0)
                        ca_buf_printf(b, "%02lld:%02d", (long long) mins, (int) secs);
                else
                        ca_buf_printf(b, "%02lld:%02g", (long long) mins, secs);
        } else {
                if (frac == 0)
                        ca_buf_printf(b, "%02d", (int) secs);
                else
                        ca_buf_printf(b, "%02g", secs);
        }
}

void ca_unparse_abstime(CaBuf *b, int64_t secs, int32_t offset) {
        ca_buf_puts(b, "absTime(\"");
        ca_format_abstime(b, secs, offset);
        ca_buf_puts(b, "\")");
}

void ca_unparse_reltime(CaBuf *b, double secs) {
        ca_buf_puts(b, "relTime(\"");
        ca_format_reltime(b, secs);
        ca_buf_puts(b, "\")");
}

/* atoi() of at most n characters at s. */
static int atoi_n(const char *s, size_t n) {
        char tmp[8];
        if (n >= sizeof(tmp))
                n = sizeof(tmp) - 1;
        memcpy(tmp, s, n);
        tmp[n] = 0;
        return atoi(tmp);
}

/* A trailing [+-]hhmm: removed from s (length *len), offset returned. */
static bool take_zone(char *s, size_t *len, int *ret_hr, int *ret_min) {
        const char *z = s + *len - 5;
        if ((z[0] != '+' && z[0] != '-') || !isdigit((unsigned char) z[1]) || !isdigit((unsigned char) z[2]) ||
            !isdigit((unsigned char) z[3]) || !isdigit((unsigned char) z[4]))
                return false;
        int hr = atoi_n(z + 1, 2), min = atoi_n(z + 3, 2);
        if (z[0] == '-') {
                hr = -hr;
                min = -min;
        }
        *ret_hr = hr;
        *ret_min = min;
        *len -= 5;
        s[*len] = 0;
        return true;
}

/* Literal::MakeAbsTime(string): D* dddd [D* dd [D* dd [D* dd [D* dd [D* dd D*]]]]]
 * optionally followed by z|Z, [+-]hhmm or [+-]hh:mm (D: non-digit). Fields
 * left out are 0 (so a missing day is the last day of the month before,
 * as mktime() normalises it); without a zone, the local one applies. */
bool ca_parse_abstime(const char *text, int64_t *ret_secs, int32_t *ret_offset) {
        size_t len = strlen(text);
        char *s = malloc(len + 1);
        if (!s)
                return false;
        memcpy(s, text, len + 1);

        bool have_zone = false;
        int tzhr = 0, tzmin = 0;
        ptrdiff_t i = (ptrdiff_t) len - 1;
        while (i >= 0 && isspace((unsigned char) s[i]))
                i--;
        if (i > 0 && (s[i] == 'z' || s[i] == 'Z')) {
                have_zone = true;
                memmove(s + i, s + i + 1, len - (size_t) i);
                len--;
        } else if (len > 5 && (s[len - 5] == '+' || s[len - 5] == '-')) {
                have_zone = take_zone(s, &len, &tzhr, &tzmin);
        } else if (len > 6 && (s[len - 6] == '+' || s[len - 6] == '-') && s[len - 3] == ':') {
                memmove(s + len - 3, s + len - 2, 3);
                len--;
                have_zone = take_zone(s, &len, &tzhr, &tzmin);
        }

        struct tm tms = {};
        size_t p = 0;
#define NEXT_DIGIT() \
        while (p < len && !isdigit((unsigned char) s[p])) \
                p++
        NEXT_DIGIT();
        if (p + 4 > len) {
                free(s);
                return false;
        }
        tms.tm_year = atoi_n(s + p, 4) - 1900;
        p += 4;
        int *fields[] = { &tms.tm_mon, &tms.tm_mday, &tms.tm_hour, &tms.tm_min, &tms.tm_sec };
        for (size_t f = 0; f < ELEMENTSOF(fields); f++) {
                NEXT_DIGIT();
                if (p + 2 <= len) {
                        *fields[f] = atoi_n(s + p, 2) - (f == 0 ? 1 : 0);
                        p += 2;
                }
        }
        NEXT_DIGIT();
#undef NEXT_DIGIT
        bool trailing_digits = p < len && isdigit((unsigned char) s[p]);
        free(s);
        if (trailing_digits)
                return false;

        /* mktime() treats the fields as local standard time (tm_isdst = 0);
         * adding back the standard offset gives the fields read as UTC. */
        tms.tm_isdst = 0;
        time_t local = mktime(&tms);
        if (local == (time_t) -1)
                return false;
        int64_t offset = have_zone ? (int64_t) tzhr * 3600 + (int64_t) tzmin * 60 : fn_tz_offset(local, false);
        int64_t secs = (int64_t) local + fn_tz_offset(local, true) - offset;
        if (offset == -1)
                return false;
        *ret_secs = secs;
        *ret_offset = (int32_t) offset;
        return true;
}

/* Digits read backwards from s[*i] (moving *i), as a string in order. */
static size_t digits_back(const char *s, ptrdiff_t *i, char *out, size_t cap, bool allow_point) {
        ptrdiff_t end = *i;
        while (*i >= 0 && isdigit((unsigned char) s[*i]))
                (*i)--;
        if (allow_point && *i >= 0 && s[*i] == '.') {
                (*i)--;
                while (*i >= 0 && isdigit((unsigned char) s[*i]))
                        (*i)--;
        }
        size_t n = (size_t) (end - *i);
        if (n >= cap)
                n = cap - 1;
        memcpy(out, s + *i + 1, n);
        out[n] = 0;
        return n;
}

/* std::from_chars into an int: empty, or out of range, leaves 0. */
static int64_t parse_count(const char *digits) {
        if (!*digits)
                return 0;
        errno = 0;
        char *end;
        long long v = strtoll(digits, &end, 10);
        if (errno || v > INT32_MAX)
                return 0;
        return v;
}

static void skip_space_back(const char *s, ptrdiff_t *i) {
        while (*i >= 0 && isspace((unsigned char) s[*i]))
                (*i)--;
}

/* Literal::MakeRelTime(string): [-][[[days+|d]hh:|h]mm:|m]ss[.fff][s], read
 * from the right; anything left over but white space is an error. */
bool ca_parse_reltime(const char *s, double *ret_secs) {
        ptrdiff_t i = (ptrdiff_t) strlen(s) - 1;
        double secs = 0;
        int64_t mins = 0, hrs = 0, days = 0;
        bool negative = false;
        char num[400];

        skip_space_back(s, &i);
        if (i >= 0 && (s[i] == 's' || s[i] == 'S' || isdigit((unsigned char) s[i]))) {
                if (s[i] == 's' || s[i] == 'S')
                        i--;
                skip_space_back(s, &i);
                digits_back(s, &i, num, sizeof(num), true);
                secs = strtod(num, NULL);
        }
        skip_space_back(s, &i);
        if (i >= 0 && (s[i] == 'm' || s[i] == 'M' || s[i] == ':')) {
                i--;
                skip_space_back(s, &i);
                digits_back(s, &i, num, sizeof(num), false);
                mins = parse_count(num);
        }
        skip_space_back(s, &i);
        if (i >= 0 && (s[i] == 'h' || s[i] == 'H' || s[i] == ':')) {
                i--;
                skip_space_back(s, &i);
                digits_back(s, &i, num, sizeof(num), false);
                hrs = parse_count(num);
        }
        skip_space_back(s, &i);
        if (i >= 0 && (s[i] == 'd' || s[i] == 'D' || s[i] == '+')) {
                i--;
                skip_space_back(s, &i);
                digits_back(s, &i, num, sizeof(num), false);
                days = parse_count(num);
        }
        skip_space_back(s, &i);
        if (i >= 0 && s[i] == '-') {
                negative = true;
                i--;
        }
        skip_space_back(s, &i);
        if (i >= 0 && !isspace((unsigned char) s[i]))
                return false;

        double total = (double) (days * 86400 + hrs * 3600 + mins * 60) + secs;
        *ret_secs = negative ? -total : total;
        return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fn-internal.h — what the built-in function files (fn-*.c) share:
 * the per-file registry fragments that fn-table.c searches, and the
 * conversions and string helpers that mirror HTCondor's utility code
 * (convertValueTo*Value, natural_cmp, StringTokenIterator, ...).
 */
#pragma once

#include "classad-internal.h"

#include <stdint.h>
#include <strings.h>

/* ---- registry fragments, one per fn-*.c file ---- */

typedef struct CaFnGroup {
        const CaFunc *fns;
        size_t n;
} CaFnGroup;

extern const CaFnGroup ca_fn_group_type;       /* fn-type.c */
extern const CaFnGroup ca_fn_group_math;       /* fn-math.c */
extern const CaFnGroup ca_fn_group_list;       /* fn-list.c */
extern const CaFnGroup ca_fn_group_string;     /* fn-string.c */
extern const CaFnGroup ca_fn_group_stringlist; /* fn-stringlist.c */
extern const CaFnGroup ca_fn_group_regex;      /* fn-regex.c */
extern const CaFnGroup ca_fn_group_time;       /* fn-time.c */
extern const CaFnGroup ca_fn_group_misc;       /* fn-misc.c */
extern const CaFnGroup ca_fn_group_env;        /* fn-env.c */

/* Flag (beyond CA_FN_PURE): HTCondor dispatches on the name exactly as
 * written (strcmp, not strcasecmp), so a differently-cased spelling finds
 * the function but ends in ERROR; ca_func_lookup then hands out
 * ca_fn_version_miscased instead (compareVersion, fnCall.cpp). */
#define CA_FN_EXACT_CASE (1u << 16)
extern const CaFunc ca_fn_version_miscased;

/* ---- conversions (HTCondor value.cpp convertValueTo*Value) ---- */

typedef enum FnConv {
        FN_CONV_OK = 0,
        FN_CONV_UNDEF,  /* the value was UNDEFINED */
        FN_CONV_ERROR,  /* anything that does not convert */
} FnConv;

/* string(): strings as they are, lists/ads/bools/numbers unparsed, times
 * in their text form. On FN_CONV_OK *ret is a string value (a new
 * reference; clear it); otherwise *ret is UNDEFINED or ERROR. */
FnConv fn_conv_string(const CaValue *v, CaValue *ret);
/* real(): strings via strtod, bools 0/1, times as seconds. */
FnConv fn_conv_real(const CaValue *v, double *ret);
/* int(): as real() but truncating. */
FnConv fn_conv_int(const CaValue *v, int64_t *ret);

/* (long long) of a double as x86-64 does it: NaN and out-of-range give INT64_MIN. */
int64_t fn_d2ll(double d);

/* Seconds of a relative time as HTCondor's time_t accessor sees them (truncated). */
static inline int64_t fn_reltime_secs(const CaValue *v) { return fn_d2ll(v->u.rt); }

/* A string value (CA_STRING) as pointer and length. */
static inline const char *fn_str(const CaValue *v) { return v->u.s->s; }
static inline size_t fn_strlen(const CaValue *v) { return v->u.s->len; }

/* A value holding ad (takes the reference). */
static inline CaValue fn_ad_value(ClassAd *ad) { return (CaValue){ .type = CA_AD, .u.ad = ad }; }

/* A list of strings from (ptr, len) pairs; ERROR on ENOMEM. */
CaValue fn_string_list(const char *const *p, const size_t *len, size_t n);

/* ---- string helpers ---- */

/* natural_cmp() of HTCondor (strverscmp-like "version" comparison). */
int fn_natural_cmp(const char *a, const char *b);

/* StringTokenIterator with trimming (stl_string_utils.h): tokens end at a
 * delimiter character, leading delimiters and white space are skipped,
 * trailing white space is trimmed, empty tokens never appear. */
typedef struct FnTok {
        const char *s;
        size_t len, pos;
        const char *delims;
} FnTok;
static inline FnTok fn_tok(const char *s, size_t len, const char *delims) {
        return (FnTok){ s, len, 0, delims };
}
bool fn_tok_next(FnTok *t, const char **ret_p, size_t *ret_len);

/* Growable array of (pointer, length) slices into some string. */
typedef struct FnSlices {
        const char **p;
        size_t *len;
        size_t n, cap;
        bool oom;
} FnSlices;
void fn_slices_add(FnSlices *s, const char *p, size_t len);
void fn_slices_free(FnSlices *s);

/* ---- time helpers ---- */

/* HTCondor timezone_offset(): seconds east of UTC of the local zone at t;
 * with no_dst, an hour less while daylight saving time is in effect. */
long fn_tz_offset(int64_t t, bool no_dst);

/* ---- argument handling ---- */

/* HTCondor checks the argument count first: outside [lo, hi] is ERROR. */
static inline bool fn_arity(uint32_t nargs, uint32_t lo, uint32_t hi, CaValue *ret) {
        if (nargs < lo || nargs > hi) {
                *ret = ca_error();
                return false;
        }
        return true;
}

/* Clear a run of evaluated arguments. */
static inline void fn_clear(CaValue *v, size_t n) {
        for (size_t i = 0; i < n; i++)
                ca_value_clear(&v[i]);
}

/* ---- regular expressions (fn-regex.c) ---- */

/* A caseless PCRE2 pattern for unresolved(); NULL if it does not compile. */
struct pcre2_real_code_8;
struct pcre2_real_code_8 *fn_re_compile_caseless(const char *pattern);
/* pcre2_match(..., PCRE2_NOTEMPTY) > 0, within the limits and ev's budget */
bool fn_re_match_notempty(CaEval *ev, struct pcre2_real_code_8 *re, const char *s, size_t len);
void fn_re_free(struct pcre2_real_code_8 *re);

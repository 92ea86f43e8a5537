/* SPDX-License-Identifier: Apache-2.0 */
/* fn-stringlist.c — functions on strings holding delimited lists:
 * stringListSize, stringListSum/Avg/Min/Max, stringListMember,
 * stringListIMember, stringListSubsetMatch, stringListISubsetMatch, split
 * (compat_classad.cpp) and stringListsIntersect (fnCall.cpp). */
#include "fn-internal.h"

#include <ctype.h>
#include <float.h>
#include <stdlib.h>

/* Arguments that must all be strings (compat_classad.cpp: UNDEFINED too
 * is ERROR). Evaluates args[0..nargs) into v. */
static bool all_strings(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *v, CaValue *ret) {
        bool ok = true;
        for (uint32_t i = 0; i < nargs; i++) {
                ca_eval(ev, args[i], &v[i]);
                ok = ok && v[i].type == CA_STRING;
        }
        if (!ok) {
                fn_clear(v, nargs);
                *ret = ca_error();
        }
        return ok;
}

/* stringListSize(list [, delims]): number of non-empty, trimmed items;
 * delimiters default to ", ". */
static void fn_stringlistsize(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        CaValue v[2];
        if (!fn_arity(nargs, 1, 2, ret) || !all_strings(ev, args, nargs, v, ret))
                return;
        FnTok t = fn_tok(fn_str(&v[0]), fn_strlen(&v[0]), nargs == 2 ? fn_str(&v[1]) : ", ");
        const char *p;
        size_t len;
        int64_t n = 0;
        while (fn_tok_next(&t, &p, &len))
                n++;
        *ret = ca_int(n);
        fn_clear(v, nargs);
}

typedef enum SummaryKind { SUM_SUM, SUM_AVG, SUM_MIN, SUM_MAX } SummaryKind;

/* Each item is read with sscanf("%lf") (ERROR if that fails); the result
 * is an integer unless some item has a character other than +-0-9. An
 * empty list is 0.0 for sum and avg, UNDEFINED for min and max. min and
 * max start from FLT_MAX and FLT_MIN (the smallest positive float) as
 * stringListSummarize_func does, so stringListMax("-1,-2") is 0. */
static void string_list_summary(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret,
                                SummaryKind kind) {
        CaValue v[2];
        if (!fn_arity(nargs, 1, 2, ret) || !all_strings(ev, args, nargs, v, ret))
                return;
        double acc = kind == SUM_MIN ? FLT_MAX : kind == SUM_MAX ? FLT_MIN : 0.0;
        bool is_real = false;
        int64_t count = 0;
        FnTok t = fn_tok(fn_str(&v[0]), fn_strlen(&v[0]), nargs == 2 ? fn_str(&v[1]) : ", ");
        const char *p;
        size_t len;

        *ret = ca_undefined();
        while (fn_tok_next(&t, &p, &len)) {
                char *item = strndup(p, len);
                if (!item) {
                        *ret = ca_error();
                        goto out;
                }
                char *end;
                double d = strtod(item, &end);
                bool parsed = end != item;
                if (strspn(item, "+-0123456789") != strlen(item))
                        is_real = true;
                free(item);
                if (!parsed) {
                        *ret = ca_error();
                        goto out;
                }
                count++;
                if (kind == SUM_SUM || kind == SUM_AVG)
                        acc = d + acc;
                else if (kind == SUM_MIN)
                        acc = d < acc ? d : acc;
                else
                        acc = d > acc ? d : acc;
        }
        if (count == 0) {
                *ret = kind == SUM_SUM || kind == SUM_AVG ? ca_real(0.0) : ca_undefined();
                goto out;
        }
        if (kind == SUM_AVG)
                acc /= (double) count;
        *ret = is_real ? ca_real(acc) : ca_int(fn_d2ll(acc));
out:
        fn_clear(v, nargs);
}

static void fn_stringlistsum(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_summary(ev, args, nargs, ret, SUM_SUM);
}

static void fn_stringlistavg(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_summary(ev, args, nargs, ret, SUM_AVG);
}

static void fn_stringlistmin(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_summary(ev, args, nargs, ret, SUM_MIN);
}

static void fn_stringlistmax(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_summary(ev, args, nargs, ret, SUM_MAX);
}

static bool token_in(const char *list, size_t list_len, const char *delims, const char *item, size_t item_len,
                     bool nocase) {
        FnTok t = fn_tok(list, list_len, delims);
        const char *p;
        size_t len;
        while (fn_tok_next(&t, &p, &len))
                if (len == item_len && (nocase ? strncasecmp(p, item, len) : memcmp(p, item, len)) == 0)
                        return true;
        return false;
}

/* stringListMember(x, list [, delims]) and the I(case-insensitive) and
 * SubsetMatch variants. Arguments may be strings or UNDEFINED (ERROR
 * otherwise); UNDEFINED acts as "" unless both x and list are UNDEFINED.
 * Delimiters default to ", \t\r\n". Member compares x whole against each
 * item; SubsetMatch is true when every item of x is in list, and for an
 * empty x; an x of only delimiters is false (stringListMember_func). */
static void string_list_member(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool nocase,
                               bool subset) {
        if (!fn_arity(nargs, 2, 3, ret))
                return;
        CaValue v[3] = { ca_undefined(), ca_undefined(), ca_undefined() };
        bool ok = true;
        for (uint32_t i = 0; i < nargs; i++) {
                ca_eval(ev, args[i], &v[i]);
                ok = ok && (v[i].type == CA_STRING || v[i].type == CA_UNDEFINED);
        }
        if (!ok) {
                *ret = ca_error();
                goto out;
        }
        if (v[0].type == CA_UNDEFINED && v[1].type == CA_UNDEFINED) {
                *ret = ca_undefined();
                goto out;
        }
        const char *item = v[0].type == CA_STRING ? fn_str(&v[0]) : "";
        size_t item_len = v[0].type == CA_STRING ? fn_strlen(&v[0]) : 0;
        const char *list = v[1].type == CA_STRING ? fn_str(&v[1]) : "";
        size_t list_len = v[1].type == CA_STRING ? fn_strlen(&v[1]) : 0;
        const char *delims = v[2].type == CA_STRING ? fn_str(&v[2]) : ", \t\r\n";

        if (!subset) {
                *ret = ca_bool(token_in(list, list_len, delims, item, item_len, nocase));
                goto out;
        }
        if (item_len == 0) {
                *ret = ca_bool(true);
                goto out;
        }
        bool rc = false;
        FnTok t = fn_tok(item, item_len, delims);
        const char *p;
        size_t len;
        while (fn_tok_next(&t, &p, &len)) {
                rc = token_in(list, list_len, delims, p, len, nocase);
                if (!rc)
                        break;
        }
        *ret = ca_bool(rc);
out:
        fn_clear(v, 3);
}

static void fn_stringlistmember(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_member(ev, args, nargs, ret, false, false);
}

static void fn_stringlistimember(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_member(ev, args, nargs, ret, true, false);
}

static void fn_stringlistsubsetmatch(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_member(ev, args, nargs, ret, false, true);
}

static void fn_stringlistisubsetmatch(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        string_list_member(ev, args, nargs, ret, true, true);
}

/* Items of a list for stringListsIntersect: runs of non-delimiters, not
 * trimmed (split_string_list in fnCall.cpp). */
static void split_plain(const char *s, size_t n, const char *delims, FnSlices *out) {
        size_t i = 0;
        while (i < n) {
                size_t start = i;
                while (i < n && !strchr(delims, s[i]))
                        i++;
                if (i > start)
                        fn_slices_add(out, s + start, i - start);
                if (i < n)
                        i++;
        }
}

/* stringListsIntersect(a, b [, delims]): true when some item of a is an
 * item of b (case-sensitive). ERROR arguments win over UNDEFINED ones,
 * which win over type errors; delimiters default to " ," (also when ""). */
static void fn_stringlistsintersect(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 2, 3, ret))
                return;
        CaValue v[3] = { ca_undefined(), ca_undefined(), ca_string("") };
        for (uint32_t i = 0; i < nargs; i++) {
                ca_value_clear(&v[i]);
                ca_eval(ev, args[i], &v[i]);
        }
        FnSlices a = {}, b = {};
        if (v[0].type == CA_ERROR || v[1].type == CA_ERROR || v[2].type == CA_ERROR) {
                *ret = ca_error();
        } else if (v[0].type == CA_UNDEFINED || v[1].type == CA_UNDEFINED || v[2].type == CA_UNDEFINED) {
                *ret = ca_undefined();
        } else if (v[0].type != CA_STRING || v[1].type != CA_STRING || v[2].type != CA_STRING) {
                *ret = ca_error();
        } else {
                /* the delimiters are a C string, as is each list */
                const char *delims = *fn_str(&v[2]) ? fn_str(&v[2]) : " ,";
                split_plain(fn_str(&v[0]), strlen(fn_str(&v[0])), delims, &a);
                split_plain(fn_str(&v[1]), strlen(fn_str(&v[1])), delims, &b);
                bool hit = false;
                for (size_t i = 0; i < a.n && !hit; i++)
                        for (size_t j = 0; j < b.n && !hit; j++)
                                hit = a.len[i] == b.len[j] && memcmp(a.p[i], b.p[j], a.len[i]) == 0;
                *ret = a.oom || b.oom ? ca_error() : ca_bool(hit);
        }
        fn_slices_free(&a);
        fn_slices_free(&b);
        fn_clear(v, 3);
}

/* split(s [, seps]): cut at any separator character (default ", \t").
 * Empty pieces are dropped, except that a separator repeating the last
 * non-space separator yields "" ("a,,b" -> {"a","","b"}), as splitArb_func
 * does. */
static void fn_split(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        CaValue v[2];
        if (!fn_arity(nargs, 1, 2, ret) || !all_strings(ev, args, nargs, v, ret))
                return;
        const char *s = fn_str(&v[0]);
        size_t n = fn_strlen(&v[0]);
        const char *seps = nargs == 2 ? fn_str(&v[1]) : ", \t";
        size_t nseps = nargs == 2 ? fn_strlen(&v[1]) : 3;
        FnSlices out = {};
        size_t last = 0;

        if (nseps > 0) {
                int ch = -1;
                for (size_t i = 0; i < n; i++) {
                        if (!memchr(seps, s[i], nseps))
                                continue;
                        if (i > last)
                                fn_slices_add(&out, s + last, i - last);
                        else if (!(ch >= 0 && isspace(ch)) && ch == s[i])
                                fn_slices_add(&out, "", 0);
                        if (!isspace((unsigned char) s[i]))
                                ch = s[i];
                        last = i + 1;
                }
        }
        if (n > last)
                fn_slices_add(&out, s + last, n - last);
        *ret = out.oom ? ca_error() : fn_string_list(out.p, out.len, out.n);
        fn_slices_free(&out);
        fn_clear(v, nargs);
}

static const CaFunc fns[] = {
        { "stringListSize", fn_stringlistsize, CA_FN_PURE },
        { "stringListSum", fn_stringlistsum, CA_FN_PURE },
        { "stringListAvg", fn_stringlistavg, CA_FN_PURE },
        { "stringListMin", fn_stringlistmin, CA_FN_PURE },
        { "stringListMax", fn_stringlistmax, CA_FN_PURE },
        { "stringListMember", fn_stringlistmember, CA_FN_PURE },
        { "stringListIMember", fn_stringlistimember, CA_FN_PURE },
        { "stringListSubsetMatch", fn_stringlistsubsetmatch, CA_FN_PURE },
        { "stringListISubsetMatch", fn_stringlistisubsetmatch, CA_FN_PURE },
        { "stringListsIntersect", fn_stringlistsintersect, CA_FN_PURE },
        { "split", fn_split, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_stringlist = { fns, ELEMENTSOF(fns) };

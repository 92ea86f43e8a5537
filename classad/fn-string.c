/* SPDX-License-Identifier: Apache-2.0 */
/* fn-string.c — strcat, join, toUpper, toLower, substr, strcmp, stricmp,
 * versioncmp and friends, version_in_range (fnCall.cpp), splitUserName,
 * splitSlotName (compat_classad.cpp splitAt_func). */
#include "fn-internal.h"

#include <ctype.h>

/* strcat(...) converts every argument with string(); an UNDEFINED one
 * makes the result UNDEFINED, an ERROR one ERROR, whichever comes first.
 * join(sep, ...) skips UNDEFINED items and puts sep only after a non-empty
 * prefix; join(sep, list) and join(list) take the items from the list;
 * with nothing but UNDEFINED items the result is UNDEFINED (strCat). */
static void str_cat(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool join) {
        CaValue last = ca_undefined(), sep = ca_string("");
        bool from_list = false, had_last = false;
        bool undef = false, def = false, error = false;
        CaBuf b = {};

        if (join && nargs >= 1 && nargs <= 2) {
                ca_eval(ev, args[nargs - 1], &last);
                had_last = true;
                from_list = last.type == CA_LIST;
        }
        uint64_t count = from_list ? 1 + (uint64_t) ca_list_len(&last) : nargs;
        for (uint64_t i = 0; i < count; i++) {
                CaValue v, s;
                if (from_list) {
                        if (i == 0) {
                                if (nargs == 2)
                                        ca_eval(ev, args[0], &v);
                                else
                                        v = ca_string("");
                        } else {
                                ca_list_elem(ev, &last, (uint32_t) (i - 1), &v);
                        }
                } else if (had_last && i == nargs - 1) {
                        v = ca_value_copy(&last);
                } else {
                        ca_eval(ev, args[i], &v);
                }
                FnConv c = fn_conv_string(&v, &s);
                ca_value_clear(&v);
                if (c == FN_CONV_UNDEF) {
                        undef = true;
                        if (join)
                                continue;
                        def = false;
                        break;
                }
                if (c != FN_CONV_OK) {
                        error = true;
                        break;
                }
                if (join && i == 0) {
                        ca_value_clear(&sep);
                        sep = s;
                        continue;
                }
                if (join && b.len > 0 && sep.type == CA_STRING)
                        ca_buf_putn(&b, fn_str(&sep), fn_strlen(&sep));
                def = true;
                ca_buf_putn(&b, fn_str(&s), fn_strlen(&s));
                ca_value_clear(&s);
        }
        ca_value_clear(&last);
        ca_value_clear(&sep);
        if (error) {
                ca_buf_free(&b);
                *ret = ca_error();
        } else if (undef && !def) {
                ca_buf_free(&b);
                *ret = ca_undefined();
        } else {
                *ret = ca_buf_value(&b);
        }
}

static void fn_strcat(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        str_cat(ev, args, nargs, ret, false);
}

static void fn_join(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        str_cat(ev, args, nargs, ret, true);
}

/* Non-strings are converted with string() first (toUpper(true) is "TRUE");
 * UNDEFINED stays UNDEFINED (changeCase). ASCII case mapping. */
static void change_case(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool upper) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v, s;
        ca_eval(ev, args[0], &v);
        FnConv c = fn_conv_string(&v, &s);
        ca_value_clear(&v);
        if (c != FN_CONV_OK) {
                *ret = s;
                return;
        }
        CaStr *out = ca_str_new(fn_str(&s), fn_strlen(&s));
        ca_value_clear(&s);
        if (!out) {
                *ret = ca_error();
                return;
        }
        for (uint32_t i = 0; i < out->len; i++)
                out->s[i] = (char) (upper ? toupper((unsigned char) out->s[i]) : tolower((unsigned char) out->s[i]));
        *ret = ca_string_take(out);
}

static void fn_toupper(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        change_case(ev, args, nargs, ret, true);
}

static void fn_tolower(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        change_case(ev, args, nargs, ret, false);
}

/* substr(s, offset [, length]): Perl-like; a negative offset counts from
 * the end, a negative length leaves that many characters off the end,
 * an explicit length 0 is empty. Any UNDEFINED argument is UNDEFINED;
 * wrong types are ERROR (subString). */
static void fn_substr(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 2, 3, ret))
                return;
        CaValue v[3] = { ca_undefined(), ca_undefined(), ca_int(0) };
        for (uint32_t i = 0; i < nargs; i++)
                ca_eval(ev, args[i], &v[i]);
        if (v[0].type == CA_UNDEFINED || v[1].type == CA_UNDEFINED || v[2].type == CA_UNDEFINED) {
                *ret = ca_undefined();
        } else if (v[0].type != CA_STRING || v[1].type != CA_INT || v[2].type != CA_INT) {
                *ret = ca_error();
        } else {
                int64_t alen = fn_strlen(&v[0]), off = v[1].u.i, len = v[2].u.i;
                if (off < 0) {
                        off = alen + off;
                        if (off < 0)
                                off = 0;
                } else if (off >= alen) {
                        off = alen;
                }
                if (len <= 0) {
                        len = alen - off + len;
                        if (len < 0)
                                len = 0;
                } else if (len > alen - off) {
                        len = alen - off;
                }
                if (nargs == 3 && v[2].u.i == 0)
                        len = 0;
                *ret = ca_string_n(fn_str(&v[0]) + off, (size_t) len);
        }
        fn_clear(v, 3);
}

/* Two arguments, UNDEFINED if either is, both converted with string()
 * (ERROR if that fails): the common head of strcmp() and the version
 * comparisons. On success a and b are strings to be cleared. */
static bool two_strings(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *a, CaValue *b,
                        CaValue *ret) {
        if (!fn_arity(nargs, 2, 2, ret))
                return false;
        CaValue v[2];
        ca_eval(ev, args[0], &v[0]);
        ca_eval(ev, args[1], &v[1]);
        if (v[0].type == CA_UNDEFINED || v[1].type == CA_UNDEFINED) {
                fn_clear(v, 2);
                *ret = ca_undefined();
                return false;
        }
        FnConv ca = fn_conv_string(&v[0], a), cb = fn_conv_string(&v[1], b);
        fn_clear(v, 2);
        if (ca != FN_CONV_OK || cb != FN_CONV_OK) {
                ca_value_clear(a);
                ca_value_clear(b);
                *ret = ca_error();
                return false;
        }
        return true;
}

static int sign_of(int r) {
        return r < 0 ? -1 : r > 0 ? 1 : 0;
}

/* -1, 0 or 1 (compareString). */
static void compare_string(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool nocase) {
        CaValue a, b;
        if (!two_strings(ev, args, nargs, &a, &b, ret))
                return;
        *ret = ca_int(sign_of(nocase ? strcasecmp(fn_str(&a), fn_str(&b)) : strcmp(fn_str(&a), fn_str(&b))));
        ca_value_clear(&a);
        ca_value_clear(&b);
}

static void fn_strcmp(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_string(ev, args, nargs, ret, false);
}

static void fn_stricmp(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_string(ev, args, nargs, ret, true);
}

typedef enum VersionOp { V_CMP, V_LE, V_LT, V_GE, V_GT, V_EQ, V_MISCASED } VersionOp;

/* versioncmp() returns natural_cmp() as is (not clamped to -1/0/1). */
static void compare_version(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, VersionOp op) {
        CaValue a, b;
        if (!two_strings(ev, args, nargs, &a, &b, ret))
                return;
        int r = fn_natural_cmp(fn_str(&a), fn_str(&b));
        switch (op) {
        case V_CMP: *ret = ca_int(r); break;
        case V_LE: *ret = ca_bool(r <= 0); break;
        case V_LT: *ret = ca_bool(r < 0); break;
        case V_GE: *ret = ca_bool(r >= 0); break;
        case V_GT: *ret = ca_bool(r > 0); break;
        case V_EQ: *ret = ca_bool(r == 0); break;
        default: *ret = ca_error(); break;
        }
        ca_value_clear(&a);
        ca_value_clear(&b);
}

static void fn_versioncmp(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_CMP);
}

static void fn_versionle(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_LE);
}

static void fn_versionlt(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_LT);
}

static void fn_versionge(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_GE);
}

static void fn_versiongt(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_GT);
}

static void fn_versioneq(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_EQ);
}

/* versionle(...) spelled other than versionLE: found, but compareVersion
 * compares the name with strcmp and ends in ERROR after the usual checks. */
static void fn_version_miscased(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        compare_version(ev, args, nargs, ret, V_MISCASED);
}

const CaFunc ca_fn_version_miscased = { "versionXX", fn_version_miscased, CA_FN_PURE };

/* version_in_range(v, min, max): UNDEFINED if min or max is (but not v);
 * all three through string(), else ERROR (versionInRange). */
static void fn_version_in_range(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 3, 3, ret))
                return;
        CaValue v[3], s[3];
        for (int i = 0; i < 3; i++)
                ca_eval(ev, args[i], &v[i]);
        if (v[1].type == CA_UNDEFINED || v[2].type == CA_UNDEFINED) {
                fn_clear(v, 3);
                *ret = ca_undefined();
                return;
        }
        bool ok = true;
        for (int i = 0; i < 3; i++)
                ok = (fn_conv_string(&v[i], &s[i]) == FN_CONV_OK) && ok;
        fn_clear(v, 3);
        if (!ok)
                *ret = ca_error();
        else
                *ret = ca_bool(fn_natural_cmp(fn_str(&s[1]), fn_str(&s[0])) <= 0 &&
                               fn_natural_cmp(fn_str(&s[0]), fn_str(&s[2])) <= 0);
        fn_clear(s, 3);
}

/* "a@b" -> {"a", "b"} at the first '@'; without one, splitUserName puts
 * the whole string first and splitSlotName second (splitAt_func). */
static void split_at(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, bool slot) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        ca_eval(ev, args[0], &v);
        if (v.type != CA_STRING) {
                ca_value_clear(&v);
                *ret = ca_error();
                return;
        }
        const char *s = fn_str(&v);
        size_t len = fn_strlen(&v);
        const char *at = memchr(s, '@', len);
        const char *p[2];
        size_t l[2];
        if (at) {
                p[0] = s, l[0] = (size_t) (at - s);
                p[1] = at + 1, l[1] = len - l[0] - 1;
        } else if (slot) {
                p[0] = "", l[0] = 0;
                p[1] = s, l[1] = len;
        } else {
                p[0] = s, l[0] = len;
                p[1] = "", l[1] = 0;
        }
        *ret = fn_string_list(p, l, 2);
        ca_value_clear(&v);
}

static void fn_splitusername(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        split_at(ev, args, nargs, ret, false);
}

static void fn_splitslotname(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        split_at(ev, args, nargs, ret, true);
}

static const CaFunc fns[] = {
        { "strcat", fn_strcat, CA_FN_PURE },
        { "join", fn_join, CA_FN_PURE },
        { "toUpper", fn_toupper, CA_FN_PURE },
        { "toLower", fn_tolower, CA_FN_PURE },
        { "substr", fn_substr, CA_FN_PURE },
        { "strcmp", fn_strcmp, CA_FN_PURE },
        { "stricmp", fn_stricmp, CA_FN_PURE },
        { "versioncmp", fn_versioncmp, CA_FN_PURE },
        { "versionLE", fn_versionle, CA_FN_PURE | CA_FN_EXACT_CASE },
        { "versionLT", fn_versionlt, CA_FN_PURE | CA_FN_EXACT_CASE },
        { "versionGE", fn_versionge, CA_FN_PURE | CA_FN_EXACT_CASE },
        { "versionGT", fn_versiongt, CA_FN_PURE | CA_FN_EXACT_CASE },
        { "versionEQ", fn_versioneq, CA_FN_PURE | CA_FN_EXACT_CASE },
        { "version_in_range", fn_version_in_range, CA_FN_PURE },
        { "splitUserName", fn_splitusername, CA_FN_PURE },
        { "splitSlotName", fn_splitslotname, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_string = { fns, ELEMENTSOF(fns) };

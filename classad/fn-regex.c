/* SPDX-License-Identifier: Apache-2.0 */
/* fn-regex.c — regexp, regexpMember, regexps, replace, replaceAll
 * (fnCall.cpp matchPattern, matchPatternMember, substPattern,
 * regexp_helper) and stringList_regexpMember (compat_classad.cpp), on
 * PCRE2 as HTCondor uses it. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "fn-internal.h"

#include <pcre2.h>

/* Option letters: i (caseless), m (multiline), s (dotall), x (extended);
 * for substitutions also f (return the full target with the match
 * replaced) and g (every non-overlapping match). Others are ignored for
 * forward compatibility. HTCondor's manual documents upper case too
 * (fnCall.cpp itself only looks for lower case; compat_classad.cpp takes
 * both); we take both. */
typedef struct ReOpts {
        uint32_t pcre;
        bool full, all;
} ReOpts;

static ReOpts parse_opts(const char *s) {
        ReOpts o = {};
        for (; s && *s; s++)
                switch (*s) {
                case 'i': case 'I': o.pcre |= PCRE2_CASELESS; break;
                case 'm': case 'M': o.pcre |= PCRE2_MULTILINE; break;
                case 's': case 'S': o.pcre |= PCRE2_DOTALL; break;
                case 'x': case 'X': o.pcre |= PCRE2_EXTENDED; break;
                case 'f': case 'F': o.full = true; break;
                case 'g': case 'G': o.all = true; break;
                default: break;
                }
        return o;
}

static pcre2_code *compile(const char *pattern, uint32_t options) {
        int err;
        PCRE2_SIZE erroff;
        return pcre2_compile((PCRE2_SPTR) pattern, PCRE2_ZERO_TERMINATED, options, &err, &erroff, NULL);
}

pcre2_code *fn_re_compile_caseless(const char *pattern) {
        return compile(pattern, PCRE2_CASELESS);
}

bool fn_re_match_notempty(pcre2_code *re, const char *s, size_t len) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        if (!md)
                return false;
        int rc = pcre2_match(re, (PCRE2_SPTR) s, len, 0, PCRE2_NOTEMPTY, md, NULL);
        pcre2_match_data_free(md);
        return rc > 0;
}

void fn_re_free(pcre2_code *re) {
        pcre2_code_free(re);
}

/* Append the substitution text with \0..\9 expanded; false (ERROR) for a
 * group number at or beyond the match's group count. A backslash not
 * followed by a digit stays as it is. */
static bool expand(CaBuf *out, const char *replace, pcre2_match_data *md, int ngroups) {
        PCRE2_UCHAR **groups;
        if (pcre2_substring_list_get(md, &groups, NULL) != 0)
                return false;
        bool ok = true;
        for (const char *r = replace; *r; r++) {
                if (*r != '\\') {
                        ca_buf_putc(out, *r);
                } else if (r[1] >= '0' && r[1] <= '9') {
                        int g = *++r - '0';
                        if (g >= ngroups) {
                                ok = false;
                                break;
                        }
                        ca_buf_puts(out, (const char *) groups[g]);
                } else {
                        ca_buf_putc(out, '\\');
                }
        }
        pcre2_substring_list_free((void *) groups);
        return ok;
}

/* regexp_helper: a match test when replace is NULL, else a substitution.
 * With g, an empty match is followed by an anchored non-empty attempt at
 * the same place, and failing that one character is copied over; an
 * empty match at the very end thus runs past the target and the result
 * is ERROR, exactly as HTCondor behaves. */
static void regexp_helper(const char *pattern, const char *target, const char *replace, const char *options,
                          CaValue *ret) {
        ReOpts o = parse_opts(options);
        if (!replace)
                o.full = o.all = false;
        pcre2_code *re = compile(pattern, o.pcre);
        if (!re) {
                *ret = ca_error();
                return;
        }
        size_t tlen = strlen(target), idx = 0;
        bool empty_match = false;
        int status;
        CaBuf out = {};

        do {
                uint32_t extra = empty_match ? PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED : 0;
                pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
                if (!md) {
                        status = PCRE2_ERROR_NOMEMORY;
                        break;
                }
                status = pcre2_match(re, (PCRE2_SPTR) target, tlen, idx, extra, md, NULL);
                PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
                if (empty_match && status == PCRE2_ERROR_NOMATCH) {
                        ca_buf_putc(&out, idx < tlen ? target[idx] : '\0');
                        idx++;
                        empty_match = false;
                        status = 0;
                } else if (status >= 0 && replace) {
                        if (o.full)
                                ca_buf_putn(&out, target + idx, ov[0] - idx);
                        if (!expand(&out, replace, md, status)) {
                                pcre2_match_data_free(md);
                                status = PCRE2_ERROR_NOMEMORY; /* any error: the result is ERROR */
                                break;
                        }
                        idx = ov[1];
                        if (ov[0] == ov[1])
                                empty_match = true;
                }
                pcre2_match_data_free(md);
        } while (status >= 0 && o.all);

        pcre2_code_free(re);
        if (status < 0 && status != PCRE2_ERROR_NOMATCH) {
                ca_buf_free(&out);
                *ret = ca_error();
        } else if (!replace) {
                ca_buf_free(&out);
                *ret = ca_bool(status >= 0);
        } else {
                if (o.full && idx < tlen)
                        ca_buf_puts(&out, target + idx);
                *ret = ca_buf_value(&out);
        }
}

/* Evaluate the leading string arguments and the optional options string:
 * any ERROR is ERROR, then any UNDEFINED is UNDEFINED, then a non-string
 * options is ERROR. Type checks of the others are left to the caller. */
static bool eval_with_options(CaEval *ev, const CaNode *const *args, uint32_t nargs, uint32_t fixed, CaValue *v,
                              CaValue *ret) {
        for (uint32_t i = 0; i < nargs; i++)
                ca_eval(ev, args[i], &v[i]);
        for (uint32_t i = 0; i < nargs; i++)
                if (v[i].type == CA_ERROR)
                        goto error;
        for (uint32_t i = 0; i < nargs; i++)
                if (v[i].type == CA_UNDEFINED) {
                        fn_clear(v, nargs);
                        *ret = ca_undefined();
                        return false;
                }
        if (nargs > fixed && v[fixed].type != CA_STRING)
                goto error;
        return true;
error:
        fn_clear(v, nargs);
        *ret = ca_error();
        return false;
}

/* regexp(pattern, target [, options]): true when pattern matches
 * somewhere in target. */
static void fn_regexp(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        CaValue v[3];
        if (!fn_arity(nargs, 2, 3, ret) || !eval_with_options(ev, args, nargs, 2, v, ret))
                return;
        if (v[0].type != CA_STRING || v[1].type != CA_STRING)
                *ret = ca_error();
        else
                regexp_helper(fn_str(&v[0]), fn_str(&v[1]), NULL, nargs == 3 ? fn_str(&v[2]) : NULL, ret);
        fn_clear(v, nargs);
}

/* regexpMember(pattern, list [, options]): true when some string element
 * matches; non-string elements are ERROR, except UNDEFINED ones which
 * make a no-match UNDEFINED. A pattern that does not compile matches
 * nothing (matchPatternMember only looks for a true result). */
static void fn_regexpmember(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        CaValue v[3];
        if (!fn_arity(nargs, 2, 3, ret) || !eval_with_options(ev, args, nargs, 2, v, ret))
                return;
        if (v[0].type != CA_STRING || v[1].type != CA_LIST) {
                *ret = ca_error();
                goto out;
        }
        bool maybe_undefined = false;
        *ret = ca_bool(false);
        uint32_t n = ca_list_len(&v[1]);
        for (uint32_t i = 0; i < n; i++) {
                CaValue e, m;
                ca_list_elem(ev, &v[1], i, &e);
                if (e.type != CA_STRING) {
                        bool undef = e.type == CA_UNDEFINED;
                        ca_value_clear(&e);
                        if (!undef) {
                                *ret = ca_error();
                                goto out;
                        }
                        maybe_undefined = true;
                        continue;
                }
                regexp_helper(fn_str(&v[0]), fn_str(&e), NULL, nargs == 3 ? fn_str(&v[2]) : NULL, &m);
                ca_value_clear(&e);
                if (m.type == CA_BOOL && m.u.b) {
                        *ret = ca_bool(true);
                        goto out;
                }
                ca_value_clear(&m);
        }
        if (maybe_undefined)
                *ret = ca_undefined();
out:
        fn_clear(v, nargs);
}

/* regexps(pattern, target, substitute [, options]) returns the expanded
 * substitute for the first match ("" without one); replace() adds the f
 * option, replaceAll() f and g (substPattern). */
static void subst_pattern(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret, const char *implied) {
        CaValue v[4];
        if (!fn_arity(nargs, 3, 4, ret) || !eval_with_options(ev, args, nargs, 3, v, ret))
                return;
        if (v[0].type != CA_STRING || v[1].type != CA_STRING || v[2].type != CA_STRING) {
                *ret = ca_error();
        } else {
                CaBuf opts = {};
                if (nargs == 4)
                        ca_buf_puts(&opts, fn_str(&v[3]));
                ca_buf_puts(&opts, implied);
                char *o = ca_buf_steal(&opts);
                if (!o)
                        *ret = ca_error();
                else
                        regexp_helper(fn_str(&v[0]), fn_str(&v[1]), fn_str(&v[2]), o, ret);
                free(o);
        }
        fn_clear(v, nargs);
}

static void fn_regexps(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        subst_pattern(ev, args, nargs, ret, "");
}

static void fn_replace(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        subst_pattern(ev, args, nargs, ret, "f");
}

static void fn_replaceall(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        subst_pattern(ev, args, nargs, ret, "fg");
}

/* stringList_regexpMember(pattern, list [, delims [, options]]): all
 * arguments strings (else ERROR); a pattern that does not compile is
 * ERROR; true when some trimmed item (delimiters default ", ") matches,
 * UNDEFINED when the list has no items. */
static void fn_stringlist_regexpmember(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 2, 4, ret))
                return;
        CaValue v[4];
        bool ok = true;
        for (uint32_t i = 0; i < nargs; i++) {
                ca_eval(ev, args[i], &v[i]);
                ok = ok && v[i].type == CA_STRING;
        }
        if (!ok) {
                *ret = ca_error();
                goto out;
        }
        ReOpts o = parse_opts(nargs == 4 ? fn_str(&v[3]) : "");
        pcre2_code *re = compile(fn_str(&v[0]), o.pcre);
        pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
        if (!md) {
                pcre2_code_free(re);
                *ret = ca_error();
                goto out;
        }
        FnTok t = fn_tok(fn_str(&v[1]), fn_strlen(&v[1]), nargs >= 3 ? fn_str(&v[2]) : ", ");
        const char *p;
        size_t len;
        bool any = false, hit = false;
        while (fn_tok_next(&t, &p, &len)) {
                any = true;
                if (!hit && pcre2_match(re, (PCRE2_SPTR) p, len, 0, 0, md, NULL) >= 0)
                        hit = true;
        }
        pcre2_match_data_free(md);
        pcre2_code_free(re);
        *ret = any ? ca_bool(hit) : ca_undefined();
out:
        fn_clear(v, nargs);
}

static const CaFunc fns[] = {
        { "regexp", fn_regexp, CA_FN_PURE },
        { "regexpMember", fn_regexpmember, CA_FN_PURE },
        { "regexps", fn_regexps, CA_FN_PURE },
        { "replace", fn_replace, CA_FN_PURE },
        { "replaceAll", fn_replaceall, CA_FN_PURE },
        { "stringList_regexpMember", fn_stringlist_regexpmember, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_regex = { fns, ELEMENTSOF(fns) };

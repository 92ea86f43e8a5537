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

/* ---- bounded matching ----
 *
 * PCRE2's defaults let one match of a pattern that backtracks (a
 * nested repeat such as "(a|a)+$" against "aaaa...b") run for 10 million
 * steps, a sixth of a second. A match here is tried first with a short
 * match limit, which is all an ordinary pattern needs; only one that
 * reaches it is tried again with the long limit, about a millisecond of
 * work at most, and one that reaches that too is ERROR. The first try
 * costs the evaluation's budget RE_COST steps, the second RE_COST_LONG
 * more (CLASSAD_EVAL_BUDGET: about as long in time as the work of the
 * steps it takes). Depth and heap are bounded in both. */
#define RE_MATCH_LIMIT_SHORT 2000u
#define RE_MATCH_LIMIT_LONG 100000u
#define RE_DEPTH_LIMIT 10000u
#define RE_HEAP_LIMIT_KIB 4096u
#define RE_COST 16u
#define RE_COST_LONG 20000u

static pcre2_match_context *match_context(bool long_try) {
        static pcre2_match_context *ctx[2];
        static bool failed[2];
        int k = long_try;

        if (!ctx[k] && !failed[k]) {
                ctx[k] = pcre2_match_context_create(NULL);
                if (!ctx[k])
                        failed[k] = true;
                else {
                        pcre2_set_match_limit(ctx[k], long_try ? RE_MATCH_LIMIT_LONG : RE_MATCH_LIMIT_SHORT);
                        pcre2_set_depth_limit(ctx[k], RE_DEPTH_LIMIT);
                        pcre2_set_heap_limit(ctx[k], RE_HEAP_LIMIT_KIB);
                }
        }
        return ctx[k];
}

static bool over_limit(int rc) {
        return rc == PCRE2_ERROR_MATCHLIMIT || rc == PCRE2_ERROR_DEPTHLIMIT || rc == PCRE2_ERROR_HEAPLIMIT;
}

/* pcre2_match within the limits and ev's budget (ev may be NULL: limits
 * only). A match past them is PCRE2_ERROR_MATCHLIMIT (or DEPTH/HEAP),
 * which callers take as ERROR; so is one without a match context. */
static int re_match(CaEval *ev, const pcre2_code *re, const char *s, size_t len, size_t start, uint32_t options,
                    pcre2_match_data *md) {
        pcre2_match_context *shrt = match_context(false), *lng = match_context(true);
        if (!shrt || !lng)
                return PCRE2_ERROR_NOMEMORY;
        if (ev && !ca_eval_charge(ev, RE_COST))
                return PCRE2_ERROR_MATCHLIMIT;
        int rc = pcre2_match(re, (PCRE2_SPTR) s, len, start, options, md, shrt);
        if (!over_limit(rc))
                return rc;
        if (ev && !ca_eval_charge(ev, RE_COST_LONG))
                return rc;
        return pcre2_match(re, (PCRE2_SPTR) s, len, start, options, md, lng);
}

/* ---- compiled patterns, cached ----
 *
 * A small cache keyed on the pattern's text and the compile options, so
 * that a Requirements evaluated against every slot compiles its pattern
 * once: RE_CACHE_SIZE entries of patterns up to RE_CACHE_MAX_PATTERN
 * bytes, the least recently used replaced. A pattern handed out is
 * valid until the next compile(); longer patterns are compiled each time
 * and owned by the caller. Process-wide, as the rest of the evaluator
 * (not thread-safe). */
#define RE_CACHE_SIZE 32
#define RE_CACHE_MAX_PATTERN 1024

typedef struct ReEntry {
        char *pattern;
        size_t len;
        uint32_t options;
        pcre2_code *re;
        uint64_t used;
} ReEntry;

static ReEntry re_cache[RE_CACHE_SIZE];
static uint64_t re_clock;

static pcre2_code *compile_uncached(const char *pattern, size_t len, uint32_t options) {
        int err;
        PCRE2_SIZE erroff;
        return pcre2_compile((PCRE2_SPTR) pattern, len, options, &err, &erroff, NULL);
}

/* The compiled pattern (NULL: it does not compile, or out of memory);
 * *ret_owned: the caller frees it (pcre2_code_free). Compiling costs ev's
 * budget a step a byte of the pattern. */
static pcre2_code *compile(CaEval *ev, const char *pattern, uint32_t options, bool *ret_owned) {
        size_t len = strlen(pattern);
        ReEntry *victim = &re_cache[0];

        *ret_owned = false;
        if (len <= RE_CACHE_MAX_PATTERN)
                for (size_t i = 0; i < RE_CACHE_SIZE; i++) {
                        ReEntry *e = &re_cache[i];
                        if (e->re && e->options == options && e->len == len && memcmp(e->pattern, pattern, len) == 0) {
                                e->used = ++re_clock;
                                return e->re;
                        }
                        if (!e->re || (victim->re && e->used < victim->used))
                                victim = e;
                }
        if (ev && !ca_eval_charge(ev, len))
                return NULL;
        pcre2_code *re = compile_uncached(pattern, len, options);
        if (!re || len > RE_CACHE_MAX_PATTERN) {
                *ret_owned = re != NULL;
                return re;
        }
        char *copy = malloc(len + 1);
        if (!copy) {
                *ret_owned = true;
                return re;
        }
        memcpy(copy, pattern, len + 1);
        pcre2_code_free(victim->re);
        free(victim->pattern);
        *victim = (ReEntry){ .pattern = copy, .len = len, .options = options, .re = re, .used = ++re_clock };
        return re;
}

pcre2_code *fn_re_compile_caseless(const char *pattern) {
        return compile_uncached(pattern, strlen(pattern), PCRE2_CASELESS);
}

bool fn_re_match_notempty(CaEval *ev, pcre2_code *re, const char *s, size_t len) {
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
        if (!md)
                return false;
        int rc = re_match(ev, re, s, len, 0, PCRE2_NOTEMPTY, md);
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
static void regexp_helper(CaEval *ev, const char *pattern, const char *target, const char *replace,
                          const char *options, CaValue *ret, bool *ret_over_limit) {
        ReOpts o = parse_opts(options);
        if (!replace)
                o.full = o.all = false;
        bool owned;
        pcre2_code *re = compile(ev, pattern, o.pcre, &owned);
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
                status = re_match(ev, re, target, tlen, idx, extra, md);
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

        if (owned)
                pcre2_code_free(re);
        if (ret_over_limit)
                *ret_over_limit = over_limit(status);
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
                regexp_helper(ev, fn_str(&v[0]), fn_str(&v[1]), NULL, nargs == 3 ? fn_str(&v[2]) : NULL, ret, NULL);
        fn_clear(v, nargs);
}

/* regexpMember(pattern, list [, options]): true when some string element
 * matches; non-string elements are ERROR, except UNDEFINED ones which
 * make a no-match UNDEFINED. A pattern that does not compile matches
 * nothing (matchPatternMember only looks for a true result); a match
 * past the limits is ERROR. */
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
                bool limit = false;
                regexp_helper(ev, fn_str(&v[0]), fn_str(&e), NULL, nargs == 3 ? fn_str(&v[2]) : NULL, &m, &limit);
                ca_value_clear(&e);
                if (m.type == CA_BOOL && m.u.b) {
                        *ret = ca_bool(true);
                        goto out;
                }
                if (limit) { /* a match past the limits is ERROR, as in regexp() */
                        ca_value_clear(&m);
                        *ret = ca_error();
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
                        regexp_helper(ev, fn_str(&v[0]), fn_str(&v[1]), fn_str(&v[2]), o, ret, NULL);
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
        bool owned;
        pcre2_code *re = compile(ev, fn_str(&v[0]), o.pcre, &owned);
        pcre2_match_data *md = re ? pcre2_match_data_create_from_pattern(re, NULL) : NULL;
        if (!md) {
                if (owned)
                        pcre2_code_free(re);
                *ret = ca_error();
                goto out;
        }
        FnTok t = fn_tok(fn_str(&v[1]), fn_strlen(&v[1]), nargs >= 3 ? fn_str(&v[2]) : ", ");
        const char *p;
        size_t len;
        bool any = false, hit = false, failed = false;
        while (fn_tok_next(&t, &p, &len)) {
                any = true;
                if (!hit && !failed) {
                        int rc = re_match(ev, re, p, len, 0, 0, md);
                        hit = rc >= 0;
                        failed = rc < 0 && rc != PCRE2_ERROR_NOMATCH;
                }
        }
        pcre2_match_data_free(md);
        if (owned)
                pcre2_code_free(re);
        *ret = failed && !hit ? ca_error() : any ? ca_bool(hit) : ca_undefined();
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

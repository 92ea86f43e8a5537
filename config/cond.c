/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cond.c — HTCondor's conditionals in configuration files:
 *
 *   if [!] CONDITION        CONDITION: defined NAME, true, false, yes, no,
 *   elif [!] CONDITION                 t, f, a number (true when not 0),
 *   else                               or $(...) expanding to one of
 *   endif                              these (empty counts as false)
 *
 *   version OP X.Y[.Z]      OP: ==, =, !=, <, <=, >, >= (none: ==); true
 *                           when the HTCondor version glean follows
 *                           (GLEAN_HTCONDOR_VERSION) compares so; a
 *                           missing Z matches any (24.0 == 24.0.N)
 *   defined NAME, defined use CATEGORY[:NAME] (a metaknob glean knows),
 *   defined true / defined 1 (true), defined $(EMPTY) (false)
 *
 * Macros in a condition are expanded when the line is read, against what
 * has been read so far; a '!' may come before the condition or out of
 * the expansion. Conditions of branches that are not read are not
 * evaluated. Compound conditions (&&, ||, comparisons of values) are
 * refused, as HTCondor refuses them in configuration files.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* Does line start with keyword kw (as a word)? *ret_rest: after it. */
static bool keyword(const char *line, const char *kw, const char **ret_rest) {
        size_t n = strlen(kw);

        if (strncasecmp(line, kw, n) != 0 || (line[n] && !isspace((unsigned char) line[n])))
                return false;
        line += n;
        while (isspace((unsigned char) *line))
                line++;
        *ret_rest = line;
        return true;
}

static uint64_t bit(unsigned d) {
        return (uint64_t) 1 << d;
}

/* Every open level down to depth d reads its current branch. */
static bool active_upto(const ConfigIfStack *st, unsigned d) {
        for (unsigned i = 1; i <= d; i++)
                if (!(st->active & bit(i)))
                        return false;
        return true;
}

bool config_cond_active(const ConfigIfStack *st) {
        return active_upto(st, st->depth);
}

static bool word_is(const char *s, const char *w) {
        return strcasecmp(s, w) == 0;
}

/* true, false, yes, no, t, f (any case). */
static bool is_bool_word(const char *s, bool *ret) {
        if (word_is(s, "true") || word_is(s, "yes") || word_is(s, "t"))
                *ret = true;
        else if (word_is(s, "false") || word_is(s, "no") || word_is(s, "f"))
                *ret = false;
        else
                return false;
        return true;
}

/* A finite number; *ret (may be NULL): whether it is not 0. */
static bool is_number(const char *s, bool *ret) {
        char *end;
        double d = strtod(s, &end);

        if (end == s || *end || !isfinite(d))
                return false;
        if (ret)
                *ret = d != 0;
        return true;
}

/* ---- version ---- */

/* A version X.Y[.Z] (an optional 'v' before it, as HTCondor allows); a
 * missing Z is cur's, so that 24.0 equals 24.0.N. Nothing may follow.
 * HTCondor refuses X alone and majors below 6: so does this. */
static int parse_version(const char *s, const unsigned cur[3], unsigned ret[3]) {
        unsigned v[3] = { 0, 0, 0 };
        unsigned n = 0;

        if (*s == 'v' || *s == 'V')
                s++;
        while (n < 3) {
                unsigned long x;
                char *end;

                if (!isdigit((unsigned char) *s))
                        return -EINVAL;
                errno = 0;
                x = strtoul(s, &end, 10);
                if (errno || x > 1000000)
                        return -EINVAL;
                v[n++] = (unsigned) x;
                s = end;
                if (*s != '.')
                        break;
                s++;
        }
        if (*s || n < 2 || v[0] < 6)
                return -EINVAL;
        if (n == 2)
                v[2] = cur ? cur[2] : 0;
        memcpy(ret, v, sizeof(v));
        return 0;
}

int config_version_compare(const char *version, int *ret) {
        unsigned cur[3], v[3];
        int r;

        r = parse_version(GLEAN_HTCONDOR_VERSION, NULL, cur);
        if (r < 0)
                return r;
        r = parse_version(version, cur, v);
        if (r < 0)
                return r;
        for (unsigned i = 0; i < 3; i++)
                if (cur[i] != v[i]) {
                        *ret = cur[i] < v[i] ? -1 : 1;
                        return 0;
                }
        *ret = 0;
        return 0;
}

/* version [!][<|=|>][=] X.Y[.Z]: the operator grammar of HTCondor, so
 * ==, =, !=, <, <=, >, >= (and no operator: equality). */
static int eval_version(ConfigLoad *ld, const char *s, int at, bool *ret) {
        bool negated = false, or_equal = false;
        int op = 0, diff, r;

        if (*s == '!') {
                negated = true;
                s++;
        }
        if (*s == '<' || *s == '=' || *s == '>')
                op = *s++ - '=';
        if (*s == '=') {
                or_equal = true;
                s++;
        }
        while (isspace((unsigned char) *s))
                s++;
        r = config_version_compare(s, &diff);
        if (r < 0)
                return config_error(ld->err, ld->file, at, -EINVAL,
                                    "if: version: '%.64s' is not a version X.Y or X.Y.Z (X at least 6) after "
                                    "one of ==, !=, <, <=, >, >=",
                                    s);
        *ret = (diff == op || (or_equal && diff == 0)) != negated;
        return 0;
}

/* ---- defined ---- */

/* defined NAME (true when NAME has a non-empty value), defined true or a
 * number (always true), defined use CATEGORY[:NAME] (a known metaknob),
 * defined with nothing after it (false). */
static int eval_defined(ConfigLoad *ld, const char *s, int at, bool *ret) {
        const char *rest, *colon, *v;

        if (!s[0]) {
                *ret = false;
                return 0;
        }
        if (keyword(s, "use", &rest)) {
                _cleanup_config_free_ char *category = NULL;

                if (!rest[0] || strpbrk(rest, " \t"))
                        return config_error(ld->err, ld->file, at, -EINVAL,
                                            "if: defined use needs CATEGORY or CATEGORY:NAME without spaces, not "
                                            "'%.64s'",
                                            rest);
                colon = strchr(rest, ':');
                category = strndup(rest, colon ? (size_t) (colon - rest) : strlen(rest));
                if (!category)
                        return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
                *ret = config_metaknob_category(category) &&
                       (!colon || !colon[1] || config_metaknob_find(category, colon + 1));
                return 0;
        }
        if (is_bool_word(s, ret) || is_number(s, NULL)) {
                *ret = true;
                return 0;
        }
        if (!config_is_valid_name(s, strlen(s)))
                return config_error(ld->err, ld->file, at, -EINVAL, "if: defined needs a name, not '%.64s'", s);
        v = config_raw(ld->cfg, s);
        *ret = v && v[0];
        return 0;
}

/* ---- a condition ---- */

static int evaluate(ConfigLoad *ld, const char *kw, const char *cond, int at, bool *ret) {
        _cleanup_config_free_ char *expanded = NULL;
        ConfigError e = {};
        bool negate = false, value = false;
        const char *rest;
        char *s;
        int r;

        rest = cond;
        while (isspace((unsigned char) *rest))
                rest++;
        if (*rest == '!')
                rest++;
        while (isspace((unsigned char) *rest))
                rest++;
        if (!*rest)
                return config_error(ld->err, ld->file, at, -EINVAL, "%s needs a condition", kw);
        /* A bare `defined` as written is a mistake; one that a macro
         * emptied is false, as in HTCondor. */
        if (keyword(rest, "defined", &rest) && !rest[0])
                return config_error(ld->err, ld->file, at, -EINVAL, "if: defined needs a name");
        r = config_expand(ld->cfg, cond, &expanded, &e);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s", e.msg);
        s = config_strip(expanded);
        if (*s == '!') {
                negate = true;
                s = config_strip(s + 1);
        }

        if (!s[0])
                value = false; /* a macro expanding to nothing */
        else if (keyword(s, "defined", &rest)) {
                r = eval_defined(ld, rest, at, &value);
                if (r < 0)
                        return r;
        } else if (keyword(s, "version", &rest) || (strncasecmp(s, "version", 7) == 0 && strchr("<=>!", s[7]))) {
                r = eval_version(ld, config_strip(s + 7), at, &value);
                if (r < 0)
                        return r;
        } else if (is_bool_word(s, &value) || is_number(s, &value))
                ;
        else if (strpbrk(s, "=<>&|()"))
                return config_error(ld->err, ld->file, at, -EINVAL,
                                    "if: '%.64s': complex conditions are not supported (one of: defined NAME, "
                                    "version OP X.Y.Z, true, false, yes, no or a number, with ! before it)",
                                    s);
        else
                return config_error(ld->err, ld->file, at, -EINVAL,
                                    "if: '%.64s' is not a condition (defined NAME, version OP X.Y.Z, true, false, "
                                    "yes, no or a number)",
                                    s);
        *ret = negate ? !value : value;
        return 0;
}

int config_cond_line(ConfigLoad *ld, ConfigIfStack *st, const char *line, int at) {
        const char *rest;
        bool value = false;
        unsigned d = st->depth;
        int r;

        if (keyword(line, "if", &rest)) {
                if (d >= CONFIG_MAX_IF_DEPTH)
                        return config_error(ld->err, ld->file, at, -EINVAL, "if nested more than %d levels deep",
                                            CONFIG_MAX_IF_DEPTH);
                if (active_upto(st, d)) {
                        r = evaluate(ld, "if", rest, at, &value);
                        if (r < 0)
                                return r;
                        st->taken = value ? st->taken | bit(d + 1) : st->taken & ~bit(d + 1);
                } else
                        st->taken |= bit(d + 1); /* no branch of it is read */
                st->active = value ? st->active | bit(d + 1) : st->active & ~bit(d + 1);
                st->in_else &= ~bit(d + 1);
                st->depth = d + 1;
                st->lines[d + 1] = at;
                return 1;
        }
        if (keyword(line, "elif", &rest)) {
                if (d == 0)
                        return config_error(ld->err, ld->file, at, -EINVAL, "elif without if");
                if (st->in_else & bit(d))
                        return config_error(ld->err, ld->file, at, -EINVAL, "elif after else");
                if (!(st->taken & bit(d)) && active_upto(st, d - 1)) {
                        r = evaluate(ld, "elif", rest, at, &value);
                        if (r < 0)
                                return r;
                }
                st->active = value ? st->active | bit(d) : st->active & ~bit(d);
                if (value)
                        st->taken |= bit(d);
                return 1;
        }
        if (keyword(line, "else", &rest)) {
                if (d == 0)
                        return config_error(ld->err, ld->file, at, -EINVAL, "else without if");
                if (st->in_else & bit(d))
                        return config_error(ld->err, ld->file, at, -EINVAL, "else after else");
                if (rest[0])
                        return config_error(ld->err, ld->file, at, -EINVAL, "unexpected '%.64s' after else", rest);
                st->active = (st->taken & bit(d)) ? st->active & ~bit(d) : st->active | bit(d);
                st->taken |= bit(d);
                st->in_else |= bit(d);
                return 1;
        }
        if (keyword(line, "endif", &rest)) {
                if (d == 0)
                        return config_error(ld->err, ld->file, at, -EINVAL, "endif without if");
                if (rest[0])
                        return config_error(ld->err, ld->file, at, -EINVAL, "unexpected '%.64s' after endif", rest);
                st->active &= ~bit(d);
                st->taken &= ~bit(d);
                st->in_else &= ~bit(d);
                st->depth = d - 1;
                return 1;
        }
        return 0;
}

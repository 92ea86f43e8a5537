/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cond.c — HTCondor's conditionals in configuration files:
 *
 *   if [!] CONDITION        CONDITION: defined NAME, true, false, yes, no,
 *   elif [!] CONDITION                 t, f, a number (true when not 0),
 *   else                               or $(...) expanding to one of
 *   endif                              these (empty counts as false)
 *
 * Macros in a condition are expanded when the line is read, against what
 * has been read so far. Conditions of branches that are not read are not
 * evaluated. `version` conditions are refused.
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

static int evaluate(ConfigLoad *ld, const char *kw, const char *cond, int at, bool *ret) {
        _cleanup_config_free_ char *expanded = NULL;
        ConfigError e = {};
        bool negate = false, value;
        const char *rest;
        char *s, *end;
        double d;
        int r;

        if (*cond == '!') {
                negate = true;
                cond++;
        }
        while (isspace((unsigned char) *cond))
                cond++;
        if (!*cond)
                return config_error(ld->err, ld->file, at, -EINVAL, "%s needs a condition", kw);
        r = config_expand(ld->cfg, cond, &expanded, &e);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s", e.msg);
        s = config_strip(expanded);

        if (!s[0])
                value = false;
        else if (keyword(s, "defined", &rest)) {
                const char *v;

                if (!rest[0] || !config_is_valid_name(rest, strlen(rest)))
                        return config_error(ld->err, ld->file, at, -EINVAL, "if: defined needs a name, not '%.64s'",
                                            rest);
                v = config_raw(ld->cfg, rest);
                value = v && v[0];
        } else if (keyword(s, "version", &rest))
                return config_error(ld->err, ld->file, at, -EINVAL, "if: version conditions are not supported");
        else if (word_is(s, "true") || word_is(s, "yes") || word_is(s, "t"))
                value = true;
        else if (word_is(s, "false") || word_is(s, "no") || word_is(s, "f"))
                value = false;
        else {
                d = strtod(s, &end);
                if (end == s || *end || !isfinite(d))
                        return config_error(ld->err, ld->file, at, -EINVAL,
                                            "if: '%.64s' is not a condition (defined NAME, true, false, yes, no "
                                            "or a number)",
                                            s);
                value = d != 0;
        }
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

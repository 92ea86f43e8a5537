/* SPDX-License-Identifier: Apache-2.0 */
/*
 * metaknobs.c — `use CATEGORY : NAME[(ARGS)] [, NAME[(ARGS)] ...]`, as
 * HTCondor reads it (src/condor_utils/config.cpp: read_meta_config,
 * MetaKnobAndArgs, expand_meta_args):
 *
 *   - names are separated by commas and/or white space; a name may be
 *     followed by arguments in parentheses, which may nest () and [];
 *   - category and name compare case-insensitively; an unknown one is an
 *     error naming the use line, as in HTCondor;
 *   - the metaknob's text (metaknob-texts.c) is read in place of the use
 *     line, after its arguments are substituted; every definition it makes
 *     is reported at the use line;
 *   - a refused metaknob sets nothing, whatever its arguments, and leaves a
 *     warning naming the use line; a partial one warns about what glean
 *     leaves out (once: the partial ones it uses do not warn again);
 *   - ROLE : Execute and ROLE : Personal also set HTCondor's default
 *     policy (set_default_policy); FEATURE : GPUsMonitor sets nothing
 *     without a GPU_MONITOR, and the *CronHook ones warn only for
 *     SCHEDD_CRON (verdict).
 *
 * Arguments, in the text: $(0) all of them as written, $(0#) (or $(0+))
 * their count; $(N) the N-th, $(N?) 1 if it is given else 0, $(N+) (or
 * $(N#)) all from the N-th on as written, $(N:default) and $(N+:default)
 * default when not given; every value trimmed. They are split on commas
 * only (no quoting: parentheses and quotes do not protect a comma), each
 * trimmed, and, as HTCondor's StringTokenIterator does, empty ones are
 * skipped: in X(a, , c) $(2) is c and $(0#) is 2 (param_info.in's comment
 * says otherwise; its code decides). Where glean differs: a default is
 * substituted in turn, but the text an argument brings is not scanned
 * again (HTCondor rescans the whole text after every substitution, so an
 * argument holding "$(1)" loops); glean refuses arguments given to a
 * metaknob that takes none (HTCondor ignores them), and a malformed
 * $(N...) in a text.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

#define META_MAX_ARGS_DEPTH 8 /* defaults within defaults */

static const char *const categories[] = { "ROLE", "POLICY", "FEATURE", "SECURITY", "EXPERIMENTAL" };

const ConfigMetaknob *config_metaknobs(size_t *ret_n) {
        *ret_n = config_metaknob_count;
        return config_metaknob_table;
}

const ConfigMetaknob *config_metaknob_find(const char *category, const char *name) {
        for (size_t i = 0; i < config_metaknob_count; i++) {
                const ConfigMetaknob *m = &config_metaknob_table[i];

                if (strcasecmp(m->category, category) == 0 && strcasecmp(m->name, name) == 0)
                        return m;
        }
        return NULL;
}

const char *config_metaknob_status_name(int status) {
        switch (status) {
        case CONFIG_METAKNOB_IMPLEMENTED:
                return "IMPLEMENTED";
        case CONFIG_METAKNOB_PARTIAL:
                return "PARTIAL";
        case CONFIG_METAKNOB_REFUSED:
                return "REFUSED";
        }
        return NULL;
}

static const char *known_category(const char *category) {
        for (size_t i = 0; i < sizeof(categories) / sizeof(categories[0]); i++)
                if (strcasecmp(categories[i], category) == 0)
                        return categories[i];
        return NULL;
}

bool config_metaknob_category(const char *category) {
        return known_category(category) != NULL;
}

/* ---- arguments ---- */

typedef struct MetaArgs {
        const char *text; /* as written between the parentheses; "" when none */
        size_t len;
} MetaArgs;

static bool is_space(char c) {
        return isspace((unsigned char) c);
}

/* The next argument at or after *pos: its start and length (trimmed), and
 * *pos just past it (at its comma or the end); false when none is left.
 * Commas and white space before it are skipped, so empty ones vanish. */
static bool next_arg(const MetaArgs *a, size_t *pos, size_t *ret_start, size_t *ret_len) {
        size_t i = *pos, start, last;

        while (i < a->len && (a->text[i] == ',' || is_space(a->text[i])))
                i++;
        if (i >= a->len) {
                *pos = a->len;
                return false;
        }
        start = last = i;
        for (; i < a->len && a->text[i] != ','; i++)
                if (!is_space(a->text[i]))
                        last = i;
        *pos = i;
        *ret_start = start;
        *ret_len = last - start + 1;
        return true;
}

static int add_trimmed(ConfigBuf *out, const char *s, size_t n) {
        while (n > 0 && is_space(*s)) {
                s++;
                n--;
        }
        while (n > 0 && is_space(s[n - 1]))
                n--;
        return config_buf_add(out, s, n);
}

static int expand_args(const char *text, size_t len, const MetaArgs *a, unsigned depth, ConfigBuf *out, char *why,
                       size_t why_size);

/* One reference $(N...) at text[0..len): body is what is between the
 * parentheses. */
static int expand_ref(const char *body, size_t body_len, const MetaArgs *a, unsigned depth, ConfigBuf *out,
                      char *why, size_t why_size) {
        ConfigBuf v = {};
        const char *def = NULL;
        size_t i = 0, def_len = 0, pos = 0, start = 0, n = 0;
        bool check = false, rest = false, found = false;
        unsigned long index = 0;
        int r = 0;

        while (i < body_len && isdigit((unsigned char) body[i])) {
                if (index < 1000000)
                        index = index * 10 + (unsigned long) (body[i] - '0');
                i++;
        }
        if (i < body_len && body[i] == '?') {
                check = true;
                i++;
        } else if (i < body_len && (body[i] == '#' || body[i] == '+')) {
                rest = true;
                i++;
        }
        if (i < body_len && body[i] == ':') {
                def = body + i + 1;
                def_len = body_len - i - 1;
        } else if (i != body_len) {
                snprintf(why, why_size, "'$(%.*s)' is not a metaknob argument ($(N), $(N?), $(N+), $(N#), $(N:default))",
                         (int) (body_len > 40 ? 40 : body_len), body);
                return -EINVAL;
        }

        if (index == 0) {
                if (rest) {
                        unsigned long count = 0;
                        char num[24];

                        while (next_arg(a, &pos, &start, &n))
                                count++;
                        snprintf(num, sizeof(num), "%lu", count);
                        r = config_buf_adds(&v, num);
                } else
                        r = add_trimmed(&v, a->text, a->len);
                found = true;
        } else if (rest) {
                /* as HTCondor: after the first N-1 arguments, from the comma
                 * that ends the last of them (one comma skipped) */
                unsigned long k = 1;

                found = a->len > 0;
                while (found && k < index) {
                        k++;
                        (void) next_arg(a, &pos, &start, &n);
                        found = pos < a->len;
                }
                if (found) {
                        if (a->text[pos] == ',')
                                pos++;
                        r = add_trimmed(&v, a->text + pos, a->len - pos);
                        found = v.len > 0;
                }
        } else {
                for (unsigned long k = 1; k <= index; k++) {
                        found = next_arg(a, &pos, &start, &n);
                        if (!found)
                                break;
                }
                if (found)
                        r = config_buf_add(&v, a->text + start, n);
        }
        if (r >= 0 && !found && def) {
                ConfigBuf d = {};

                if (depth >= META_MAX_ARGS_DEPTH) {
                        snprintf(why, why_size, "metaknob argument defaults nested more than %d deep",
                                 META_MAX_ARGS_DEPTH);
                        r = -EINVAL;
                } else
                        r = expand_args(def, def_len, a, depth + 1, &d, why, why_size);
                if (r >= 0) {
                        v.len = 0;
                        r = add_trimmed(&v, d.s ? d.s : "", d.len);
                }
                config_buf_done(&d);
        }
        if (r >= 0) {
                if (check)
                        r = config_buf_adds(out, v.len > 0 ? "1" : "0");
                else
                        r = config_buf_add(out, v.s ? v.s : "", v.len);
        }
        config_buf_done(&v);
        return r;
}

/* The ')' that closes the '(' at text[open], nested () counted; len if none. */
static size_t close_paren(const char *text, size_t len, size_t open) {
        unsigned depth = 0;

        for (size_t i = open; i < len; i++) {
                if (text[i] == '(')
                        depth++;
                else if (text[i] == ')' && --depth == 0)
                        return i;
        }
        return len;
}

static int expand_args(const char *text, size_t len, const MetaArgs *a, unsigned depth, ConfigBuf *out, char *why,
                       size_t why_size) {
        size_t i = 0;
        int r;

        while (i < len) {
                size_t end;

                if (!(text[i] == '$' && i + 2 < len && text[i + 1] == '(' && isdigit((unsigned char) text[i + 2]))) {
                        /* not an argument: copied, and anything inside it
                         * ($($(1)), $(X:$(1))) still looked at */
                        r = config_buf_add(out, text + i, 1);
                        if (r < 0)
                                return r;
                        i++;
                        continue;
                }
                end = close_paren(text, len, i + 1);
                if (end == len) {
                        snprintf(why, why_size, "'%.*s' has no closing ')'", (int) (len - i > 40 ? 40 : len - i),
                                 text + i);
                        return -EINVAL;
                }
                r = expand_ref(text + i + 2, end - i - 2, a, depth, out, why, why_size);
                if (r < 0)
                        return r;
                i = end + 1;
        }
        return 0;
}

int config_meta_args(const char *text, const char *args, char **ret, char *why, size_t why_size) {
        MetaArgs a = { .text = args ? args : "", .len = args ? strlen(args) : 0 };
        ConfigBuf out = {};
        char *s;
        int r;

        r = expand_args(text, strlen(text), &a, 0, &out, why, why_size);
        if (r < 0) {
                config_buf_done(&out);
                return r;
        }
        s = config_buf_steal(&out);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

static bool has_meta_args(const char *text) {
        for (const char *p = strstr(text, "$("); p; p = strstr(p + 2, "$("))
                if (isdigit((unsigned char) p[2]))
                        return true;
        return false;
}

/* ---- what glean adds to or checks before some texts ---- */

/* HTCondor's default startd policy (param_info.in: START, SUSPEND, ...),
 * which ROLE : Execute and ROLE : Personal set in place of glean's
 * built-in one: glean's defaults are seed 002's desktop policy (3.5.9.1),
 * under which a machine whose keyboard was touched in the last 15
 * minutes, or which is loaded, runs nothing. A policy the configuration
 * set before the use line is kept, as HTCondor's role does not touch it. */
static const struct {
        const char *name, *value;
} htcondor_default_policy[] = {
        { "START", "True" },          { "SUSPEND", "False" },     { "CONTINUE", "True" },
        { "PREEMPT", "False" },       { "KILL", "False" },        { "WANT_SUSPEND", "False" },
        { "WANT_VACATE", "True" },    { "IS_OWNER", "False" },
};

static int set_default_policy(ConfigLoad *ld, int at) {
        for (size_t i = 0; i < sizeof(htcondor_default_policy) / sizeof(htcondor_default_policy[0]); i++) {
                const char *file = NULL;
                int line = 0, r;

                r = config_where(ld->cfg, htcondor_default_policy[i].name, &file, &line);
                if (r >= 0 && strcmp(file, CONFIG_SOURCE_DEFAULT) != 0)
                        continue;
                r = config_define(ld->cfg, htcondor_default_policy[i].name, htcondor_default_policy[i].value,
                                  ld->file, at);
                if (r < 0)
                        return config_error(ld->err, ld->file, at, r, "out of memory");
        }
        return 0;
}

typedef enum Verdict {
        VERDICT_APPLY,      /* read the text; warn if the metaknob is partial */
        VERDICT_APPLY_QUIET, /* read the text; nothing left out this time */
        VERDICT_SKIP,       /* set nothing, warn with the note */
} Verdict;

/* The first argument, trimmed, into buf. */
static void first_arg(const char *args, char *buf, size_t size) {
        MetaArgs a = { .text = args ? args : "", .len = args ? strlen(args) : 0 };
        size_t pos = 0, start = 0, n = 0;

        if (!next_arg(&a, &pos, &start, &n))
                n = 0;
        snprintf(buf, size, "%.*s", (int) n, a.text + start);
}

static Verdict verdict(const ConfigLoad *ld, const ConfigMetaknob *m, const char *args) {
        if (m->status == CONFIG_METAKNOB_REFUSED)
                return VERDICT_SKIP;
        if (strcasecmp(m->name, "GPUsMonitor") == 0) {
                const char *v = config_raw(ld->cfg, "GPU_MONITOR");

                return v && v[0] ? VERDICT_APPLY_QUIET : VERDICT_SKIP;
        }
        if (strcasecmp(m->category, "FEATURE") == 0 && strlen(m->name) > 8 &&
            strcasecmp(m->name + strlen(m->name) - 8, "CronHook") == 0) {
                char first[64];

                first_arg(args, first, sizeof(first));
                /* an empty first argument is the text's own error */
                return !first[0] || strcasecmp(first, "STARTD_CRON") == 0 ? VERDICT_APPLY_QUIET : VERDICT_APPLY;
        }
        return VERDICT_APPLY;
}

/* ---- use ---- */

static int warn(ConfigLoad *ld, int at, const ConfigMetaknob *m, const char *tail) {
        int r = config_warn(ld->cfg, ld->file, at, "use %s : %s: %s%s", m->category, m->name, m->note, tail);

        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s",
                                    r == -E2BIG ? "more than 4096 warnings" : "out of memory");
        return 0;
}

static int apply(ConfigLoad *ld, const ConfigMetaknob *m, const char *args, int at) {
        _cleanup_config_free_ char *text = NULL;
        ConfigLoad sub = *ld;
        char why[256] = "";
        Verdict v;
        int r;

        if (args && m->text && !has_meta_args(m->text))
                return config_error(ld->err, ld->file, at, -EINVAL, "use %s : %s takes no arguments, not (%.64s)",
                                    m->category, m->name, args);
        v = verdict(ld, m, args);
        if (v == VERDICT_SKIP)
                return warn(ld, at, m, ": nothing set");
        if (v == VERDICT_APPLY && m->status == CONFIG_METAKNOB_PARTIAL && !(ld->flags & CONFIG_LOAD_WARNED)) {
                r = warn(ld, at, m, "");
                if (r < 0)
                        return r;
                sub.flags |= CONFIG_LOAD_WARNED;
        }
        if (ld->depth >= CONFIG_MAX_INCLUDE_DEPTH)
                return config_error(ld->err, ld->file, at, -ELOOP, "include and use nested more than %d levels deep",
                                    CONFIG_MAX_INCLUDE_DEPTH);
        r = config_meta_args(m->text, args, &text, why, sizeof(why));
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "use %s : %s: %s", m->category, m->name,
                                    r == -EINVAL ? why : r == -E2BIG ? "the text is too long" : "out of memory");
        sub.depth++;
        sub.line_offset = at;
        ld->cfg->in_metaknob++;
        r = config_parse_text(&sub, text);
        if (r >= 0 && strcasecmp(m->category, "ROLE") == 0 &&
            (strcasecmp(m->name, "Execute") == 0 || strcasecmp(m->name, "Personal") == 0))
                r = set_default_policy(ld, at);
        ld->cfg->in_metaknob--;
        return r < 0 ? r : 0;
}

int config_use(ConfigLoad *ld, const char *category, const char *rhs, int at) {
        const char *cat, *p = rhs;
        int r, n = 0;

        if (!category[0])
                return config_error(ld->err, ld->file, at, -EINVAL,
                                    "use needs a category and a name: use POLICY : NAME");
        cat = known_category(category);
        if (!cat)
                return config_error(ld->err, ld->file, at, -EINVAL,
                                    "use: unknown category '%.64s' (known: ROLE, POLICY, FEATURE, SECURITY, "
                                    "EXPERIMENTAL)",
                                    category);
        for (;;) {
                _cleanup_config_free_ char *name = NULL, *args = NULL;
                const ConfigMetaknob *m;
                const char *e;

                while (*p && (is_space(*p) || *p == ','))
                        p++;
                if (!*p)
                        break;
                for (e = p; *e && !is_space(*e) && *e != ',' && *e != '('; e++)
                        ;
                if (e == p)
                        return config_error(ld->err, ld->file, at, -EINVAL, "use %s: '(' without a name", cat);
                name = strndup(p, (size_t) (e - p));
                if (!name)
                        return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
                for (p = e; is_space(*p); p++)
                        ;
                if (*p == '(') {
                        /* as HTCondor's find_close_brace: () and [] nest */
                        char stack[32];
                        unsigned depth = 0;

                        for (e = p; *e; e++) {
                                if (*e == '(' || *e == '[') {
                                        if (depth >= sizeof(stack))
                                                return config_error(ld->err, ld->file, at, -EINVAL,
                                                                    "use %s : %s: arguments nested too deep", cat,
                                                                    name);
                                        stack[depth++] = *e == '(' ? ')' : ']';
                                } else if (depth > 0 && *e == stack[depth - 1] && --depth == 0)
                                        break;
                        }
                        if (!*e)
                                return config_error(ld->err, ld->file, at, -EINVAL,
                                                    "use %s : %s: no ')' closes the arguments", cat, name);
                        args = strndup(p + 1, (size_t) (e - p - 1));
                        if (!args)
                                return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
                        if (!config_strip(args)[0]) {
                                free(args);
                                args = NULL;
                        }
                        p = e + 1;
                }
                m = config_metaknob_find(cat, name);
                if (!m)
                        return config_error(ld->err, ld->file, at, -EINVAL,
                                            "use %s: HTCondor has no metaknob '%.64s' (glean.conf(5) lists them)",
                                            cat, name);
                r = apply(ld, m, args, at);
                if (r < 0)
                        return r;
                n++;
        }
        if (n == 0)
                return config_error(ld->err, ld->file, at, -EINVAL, "use %s: which metaknob?", cat);
        return 0;
}

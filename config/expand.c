/* SPDX-License-Identifier: Apache-2.0 */
/*
 * expand.c — macro references, as HTCondor's configuration writes them:
 *
 *   $(NAME)           the value of NAME, itself expanded; "" when undefined
 *   $(NAME:default)   default (expanded) when NAME is undefined or empty
 *   $ENV(VAR)         the environment variable; UNDEFINED when unset
 *   $ENV(VAR:default) default when VAR is unset or empty
 *   $(DOLLAR)         a literal $, never expanded further
 *   $$                kept as it is ($$(Attr) is for match time)
 *   $INT(...), $F(...), ...  HTCondor's macro functions (macrofn.c): the
 *                     body runs to the matching ')'; this file finds them,
 *                     macrofn.c evaluates them
 *   $(1?), $(0#), $(2+)  metaknob argument forms: kept as they are (they
 *                     mean something only where a template is used)
 *
 * A name is letters, digits, '_', '.' and '/', compared case-insensitively.
 * Any other '$' is literal: an unknown $NAME( too, as HTCondor leaves it
 * (function names are case-sensitive, $FOO( is text), but $Fpz(, a
 * filename function with a letter it does not have, is refused (HTCondor
 * would leave it as text). Expansion happens at lookup;
 * a definition that refers to its own name is resolved when it is read
 * (config_resolve_self), so that it builds on the previous definition, and
 * $RANDOM_INTEGER() and $RANDOM_CHOICE() in a configuration line are drawn
 * once, when the line is read (config_resolve_random).
 *
 * Expansion is recursive with one result per name per lookup (a name used
 * twice is expanded once), a loop is an error naming its macros, and
 * nesting and output are bounded (CONFIG_MAX_DEPTH, CONFIG_MAX_EXPANSION).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* ---- scanning one reference ---- */

typedef enum RefKind {
        REF_TEXT,         /* a '$' that starts nothing: literal */
        REF_DOLLARDOLLAR, /* "$$": literal */
        REF_MACRO,        /* $(NAME) or $(NAME:default) */
        REF_ENV,          /* $ENV(VAR) or $ENV(VAR:default) */
        REF_FUNC,         /* $INT(...) and the other macro functions */
} RefKind;

typedef struct Ref {
        RefKind kind;
        size_t end; /* offset just past the reference */
        const char *name;
        size_t name_len;
        bool has_def;
        const char *def;
        size_t def_len;
        int fn;           /* REF_FUNC: CONFIG_FN_*; name is its word, def its body */
} Ref;

/* "'$(foo bar)'" — the start of a reference for a message. */
static void quote_ref(const char *s, char *buf, size_t size) {
        size_t n = 0;

        while (s[n] && s[n] != '\n' && n < 40) {
                if (s[n++] == ')')
                        break;
        }
        snprintf(buf, size, "'%.*s%s'", (int) n, s, s[n] && s[n] != '\n' && s[n - 1] != ')' ? "..." : "");
}

/* The reference ends at the ')' that closes the '(' before from. */
static int ref_close(const char *text, size_t pos, const char *from, Ref *ret, char *why, size_t why_size) {
        char quoted[64];
        size_t depth = 0;

        for (; *from && !(*from == ')' && depth == 0); from++) {
                if (*from == '(')
                        depth++;
                else if (*from == ')')
                        depth--;
        }
        if (!*from) {
                quote_ref(text + pos, quoted, sizeof(quoted));
                snprintf(why, why_size, "%s has no closing ')'", quoted);
                return -EINVAL;
        }
        ret->end = (size_t) (from + 1 - text);
        return 0;
}

/* Parse the reference at text[pos] == '$'. On -EINVAL, why says why. */
static int ref_parse(const char *text, size_t pos, Ref *ret, char *why, size_t why_size) {
        const char *start = text + pos, *p = start + 1, *w, *body, *q;
        char quoted[64];
        bool env = false;

        *ret = (Ref){ .kind = REF_TEXT, .end = pos + 1 };
        if (*p == '$') {
                ret->kind = REF_DOLLARDOLLAR;
                ret->end = pos + 2;
                return 0;
        }
        for (w = p; isalnum((unsigned char) *p) || *p == '_'; p++)
                ;
        if (*p != '(')
                return 0;
        if (p - w == 3 && strncmp(w, "ENV", 3) == 0)
                env = true;
        else if (p > w) {
                int fn = config_fn_lookup(w, (size_t) (p - w), why, why_size);
                Ref f = { .kind = REF_FUNC, .name = w, .name_len = (size_t) (p - w), .fn = fn, .def = p + 1 };

                if (fn <= 0)
                        return fn; /* literal, or a $F( word with a bad letter */
                if (ref_close(text, pos, p + 1, &f, why, why_size) < 0)
                        return -EINVAL;
                f.def_len = (size_t) (text + f.end - 1 - f.def);
                *ret = f;
                return 0;
        }

        body = p + 1;
        for (q = body; env ? (isalnum((unsigned char) *q) || *q == '_') : config_is_name_char((unsigned char) *q); q++)
                ;
        if (q == body) {
                quote_ref(start, quoted, sizeof(quoted));
                snprintf(why, why_size, "%s names no %s", quoted, env ? "environment variable" : "macro");
                return -EINVAL;
        }
        ret->name = body;
        ret->name_len = (size_t) (q - body);
        if (!env && (*q == '?' || *q == '#' || *q == '+') && strspn(body, "0123456789") == ret->name_len) {
                /* $(1?), $(0#), $(2+:x): an argument of a template (a
                 * metaknob's, a submit template's), substituted where the
                 * template is used, not a macro: kept as written, as
                 * HTCondor keeps it */
                Ref m = { .kind = REF_TEXT };

                if (ref_close(text, pos, q, &m, why, why_size) < 0)
                        return -EINVAL;
                *ret = m;
                return 0;
        }
        if (*q == ':') {
                size_t depth = 0;

                ret->has_def = true;
                ret->def = ++q;
                for (; *q && !(*q == ')' && depth == 0); q++) {
                        if (*q == '(')
                                depth++;
                        else if (*q == ')')
                                depth--;
                }
                if (!*q) {
                        quote_ref(start, quoted, sizeof(quoted));
                        snprintf(why, why_size, "%s has no closing ')'", quoted);
                        return -EINVAL;
                }
                ret->def_len = (size_t) (q - ret->def);
        } else if (*q != ')') {
                quote_ref(start, quoted, sizeof(quoted));
                if (*q)
                        snprintf(why, why_size, "%s: '%c' cannot be part of a %s name", quoted, *q,
                                 env ? "variable" : "macro");
                else
                        snprintf(why, why_size, "%s has no closing ')'", quoted);
                return -EINVAL;
        }
        ret->kind = env ? REF_ENV : REF_MACRO;
        ret->end = (size_t) (q + 1 - text);
        return 0;
}

static bool ref_is_dollar(const Ref *ref) {
        return ref->kind == REF_MACRO && !ref->has_def && ref->name_len == 6 && strncasecmp(ref->name, "DOLLAR", 6) == 0;
}

static bool ref_names(const Ref *ref, const char *name) {
        return ref->kind == REF_MACRO && strlen(name) == ref->name_len && strncasecmp(ref->name, name, ref->name_len) == 0;
}

/* ---- the names a text refers to (config_refs) ---- */

/* The words of a function's arguments (split on commas and white space):
 * $INT(NAME), $CHOICE(1, LIST), $Fn(NAME) name macros so. */
static int words_in(const char *s, size_t len, ConfigRefFn fn, void *userdata) {
        for (size_t i = 0; i < len;) {
                size_t n = 0;

                while (i + n < len && config_is_name_char((unsigned char) s[i + n]))
                        n++;
                if (n > 0) {
                        int r = fn(s + i, n, userdata);

                        if (r < 0)
                                return r;
                }
                i += n > 0 ? n : 1;
        }
        return 0;
}

static int refs_in(const char *text, size_t len, unsigned depth, ConfigRefFn fn, void *userdata) {
        _cleanup_config_free_ char *copy = NULL;
        int r = 0;

        if (depth > CONFIG_MAX_DEPTH)
                return 0;
        if (!(copy = strndup(text, len)))
                return -ENOMEM;
        for (const char *d = strchr(copy, '$'); d && r >= 0; d = strchr(d, '$')) {
                size_t at = (size_t) (d - copy);
                char why[256];
                Ref ref;

                if (ref_parse(copy, at, &ref, why, sizeof(why)) < 0) {
                        d++; /* malformed: the lookup says so; nothing referred to */
                        continue;
                }
                if (ref.kind == REF_MACRO && !ref_is_dollar(&ref))
                        r = fn(ref.name, ref.name_len, userdata);
                if (r >= 0 && (ref.kind == REF_MACRO || ref.kind == REF_ENV) && ref.has_def)
                        r = refs_in(ref.def, ref.def_len, depth + 1, fn, userdata);
                if (r >= 0 && ref.kind == REF_FUNC)
                        r = refs_in(ref.def, ref.def_len, depth + 1, fn, userdata);
                if (r >= 0 && ref.kind == REF_FUNC)
                        r = words_in(ref.def, ref.def_len, fn, userdata);
                d = copy + ref.end;
        }
        return r;
}

int config_refs(const char *text, ConfigRefFn fn, void *userdata) {
        return text && fn ? refs_in(text, strlen(text), 0, fn, userdata) : -EINVAL;
}

/* ---- self-references, resolved when a definition is read ---- */

static int subst_self(const char *text, size_t len, const char *name, const char *prev, unsigned depth,
                      ConfigBuf *out, char *why, size_t why_size) {
        _cleanup_config_free_ char *copy = strndup(text, len);
        size_t pos = 0;
        int r;

        if (!copy)
                return -ENOMEM;
        if (depth > CONFIG_MAX_DEPTH) {
                snprintf(why, why_size, "macro references nested more than %d levels deep", CONFIG_MAX_DEPTH);
                return -EINVAL;
        }
        for (;;) {
                const char *d = strchr(copy + pos, '$');
                size_t at = d ? (size_t) (d - copy) : len;
                Ref ref;

                r = config_buf_add(out, copy + pos, at - pos);
                if (r < 0 || !d)
                        return r;
                r = ref_parse(copy, at, &ref, why, why_size);
                if (r < 0)
                        return r;
                if (ref.kind == REF_FUNC) {
                        /* $INT($(NAME) + 1): look into the body */
                        r = config_buf_add(out, copy + at, (size_t) (ref.def - (copy + at)));
                        if (r >= 0)
                                r = subst_self(ref.def, ref.def_len, name, prev, depth + 1, out, why, why_size);
                        if (r >= 0)
                                r = config_buf_add(out, ")", 1);
                } else if ((ref.kind != REF_MACRO && ref.kind != REF_ENV) || ref_is_dollar(&ref))
                        r = config_buf_add(out, copy + at, ref.end - at);
                else if (ref_names(&ref, name)) {
                        if (prev && prev[0])
                                r = config_buf_adds(out, prev);
                        else if (ref.has_def)
                                r = subst_self(ref.def, ref.def_len, name, prev, depth + 1, out, why, why_size);
                } else {
                        /* Another name: keep it, but look into its default. */
                        r = config_buf_add(out, copy + at, (size_t) (ref.name + ref.name_len - (copy + at)));
                        if (r >= 0 && ref.has_def) {
                                r = config_buf_add(out, ":", 1);
                                if (r >= 0)
                                        r = subst_self(ref.def, ref.def_len, name, prev, depth + 1, out, why,
                                                       why_size);
                        }
                        if (r >= 0)
                                r = config_buf_add(out, ")", 1);
                }
                if (r < 0)
                        return r;
                pos = ref.end;
        }
}

/* JOB_TRANSFORM_<Name>: HTCondor reads it as written, in the transform
 * language with macros of its own ($INT(), $(MY.attr), ...):
 * queue/transform.c compiles it and reports its errors. Kept and looked
 * up as written. */
static bool verbatim(const char *name) {
        return strncasecmp(name, "JOB_TRANSFORM_", 14) == 0 && strcasecmp(name, "JOB_TRANSFORM_NAMES") != 0;
}

int config_resolve_self(const Config *cfg, const char *name, const char *value, char **ret, ConfigError *err) {
        ConfigBuf out = {};
        char why[256] = "";
        int r;

        if (verbatim(name)) {
                *ret = strdup(value);
                return *ret ? 0 : -ENOMEM;
        }

        r = subst_self(value, strlen(value), name, config_raw(cfg, name), 0, &out, why, sizeof(why));
        if (r < 0) {
                config_buf_done(&out);
                if (r == -E2BIG)
                        snprintf(why, sizeof(why), "the value of %s is longer than %u bytes", name, CONFIG_MAX_VALUE);
                else if (r == -ENOMEM)
                        snprintf(why, sizeof(why), "out of memory");
                return config_error(err, NULL, 0, r, "%s", why);
        }
        *ret = config_buf_steal(&out);
        return *ret ? 0 : -ENOMEM;
}

/* ---- expansion ---- */

typedef struct Frame {
        const char *name;
        const char *file;
        int line;
} Frame;

typedef struct Memo {
        char *name;
        char *value;
        size_t len;
} Memo;

typedef struct Expander {
        ConfigResolveFn fn;
        void *userdata;
        Frame stack[CONFIG_MAX_DEPTH + 2];
        size_t n_stack;
        ConfigMap memo_index;
        Memo *memo;
        size_t n_memo;
        size_t produced;
        ConfigError *err;
        const char *cwd;   /* what $Ff() makes relative paths absolute against; NULL: none */
        unsigned n_evals;  /* ClassAd evaluations of macro functions so far */
        bool only_random;  /* config_resolve_random: draw $RANDOM_*(), copy the rest */
} Expander;

static void expander_done(Expander *x) {
        for (size_t i = 0; i < x->n_memo; i++) {
                free(x->memo[i].name);
                free(x->memo[i].value);
        }
        free(x->memo);
        config_map_done(&x->memo_index);
}

/* An error about the value being expanded (the innermost definition). */
static int fail(Expander *x, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(Expander *x, int r, const char *fmt, ...) {
        const Frame *f = x->n_stack ? &x->stack[x->n_stack - 1] : NULL;
        char msg[sizeof(x->err->msg)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return config_error(x->err, f ? f->file : NULL, f ? f->line : 0, r, "%s", msg);
}

static int emit(Expander *x, ConfigBuf *out, const char *s, size_t n) {
        int r;

        x->produced += n;
        if (x->produced > CONFIG_MAX_EXPANSION)
                r = -E2BIG;
        else
                r = config_buf_add(out, s, n);
        if (r == -E2BIG)
                return fail(x, r, "expansion produces more than %u bytes", CONFIG_MAX_EXPANSION);
        if (r < 0)
                return fail(x, r, "out of memory");
        return 0;
}

static int expand_text(Expander *x, const char *text, size_t len, unsigned depth, ConfigBuf *out);

static int loop_error(Expander *x, const char *name) {
        char chain[sizeof(x->err->msg)] = "";
        size_t from = 0, n = 0;

        for (size_t i = 0; i < x->n_stack; i++)
                if (strcasecmp(x->stack[i].name, name) == 0) {
                        from = i;
                        break;
                }
        for (size_t i = from; i < x->n_stack && n < sizeof(chain); i++)
                n += (size_t) snprintf(chain + n, sizeof(chain) - n, "%s -> ", x->stack[i].name);
        if (n < sizeof(chain))
                snprintf(chain + n, sizeof(chain) - n, "%s", name);
        return fail(x, -ELOOP, "macro expansion loop: %s", chain);
}

/* The expansion of a definition, once per lookup. */
static int expand_def(Expander *x, const ConfigDef *def, unsigned depth, ConfigBuf *out) {
        ConfigBuf value = {};
        Memo *m;
        size_t i;
        int r;

        if (config_map_get(&x->memo_index, def->name, &i) >= 0)
                return emit(x, out, x->memo[i].value, x->memo[i].len);
        for (i = 0; i < x->n_stack; i++)
                if (strcasecmp(x->stack[i].name, def->name) == 0)
                        return loop_error(x, def->name);
        if (depth > CONFIG_MAX_DEPTH || x->n_stack > CONFIG_MAX_DEPTH)
                return fail(x, -ELOOP, "macro references nested more than %d levels deep (at %s)",
                            CONFIG_MAX_DEPTH, def->name);

        x->stack[x->n_stack++] = (Frame){ def->name, def->file, def->line };
        r = expand_text(x, def->value, strlen(def->value), depth, &value);
        x->n_stack--;
        if (r < 0) {
                config_buf_done(&value);
                return r;
        }

        m = realloc(x->memo, (x->n_memo + 1) * sizeof(Memo));
        if (!m) {
                config_buf_done(&value);
                return fail(x, -ENOMEM, "out of memory");
        }
        x->memo = m;
        m = &x->memo[x->n_memo];
        m->len = value.len;
        m->value = config_buf_steal(&value);
        m->name = strdup(def->name);
        if (!m->value || !m->name) {
                free(m->value);
                free(m->name);
                return fail(x, -ENOMEM, "out of memory");
        }
        x->n_memo++;
        r = config_map_put(&x->memo_index, m->name, x->n_memo - 1);
        if (r < 0)
                return fail(x, r, "out of memory");
        return emit(x, out, m->value, m->len);
}

static int expand_default(Expander *x, const Ref *ref, unsigned depth, ConfigBuf *out) {
        if (depth > CONFIG_MAX_DEPTH)
                return fail(x, -ELOOP, "macro references nested more than %d levels deep", CONFIG_MAX_DEPTH);
        return expand_text(x, ref->def, ref->def_len, depth + 1, out);
}

static int expand_macro(Expander *x, const Ref *ref, unsigned depth, ConfigBuf *out) {
        char name[CONFIG_MAX_NAME + 1];
        ConfigDef def;
        bool defined = false;

        if (ref->name_len <= CONFIG_MAX_NAME) {
                memcpy(name, ref->name, ref->name_len);
                name[ref->name_len] = '\0';
                defined = x->fn(x->userdata, name, &def) >= 0;
        }
        if (ref->has_def && (!defined || !def.value[0]))
                return expand_default(x, ref, depth, out);
        if (!defined)
                return 0;
        return expand_def(x, &def, depth + 1, out);
}

static int expand_env(Expander *x, const Ref *ref, unsigned depth, ConfigBuf *out) {
        char name[CONFIG_MAX_NAME + 1];
        const char *v = NULL;

        if (ref->name_len <= CONFIG_MAX_NAME) {
                memcpy(name, ref->name, ref->name_len);
                name[ref->name_len] = '\0';
                v = getenv(name);
        }
        if (ref->has_def && (!v || !v[0]))
                return expand_default(x, ref, depth, out);
        if (!v)
                v = "UNDEFINED";
        return emit(x, out, v, strlen(v));
}

/* config_resolve_random: the reference at s (len bytes) as it is, but for
 * the $RANDOM_*() in it (in a default, in a function's body), drawn now. */
static int copy_but_random(Expander *x, const char *s, size_t len, const Ref *ref, unsigned depth, ConfigBuf *out) {
        bool nested = ref->kind == REF_FUNC || (ref->kind != REF_TEXT && ref->has_def);
        int r;

        if (ref->kind == REF_FUNC && config_fn_is_random(ref->fn)) {
                x->only_random = false;
                r = config_fn_expand(x, ref->fn, ref->name, ref->name_len, ref->def, ref->def_len, depth, out);
                x->only_random = true;
                return r;
        }
        if (!nested)
                return emit(x, out, s, len);
        if (depth > CONFIG_MAX_DEPTH)
                return fail(x, -ELOOP, "macro references nested more than %d levels deep", CONFIG_MAX_DEPTH);
        r = emit(x, out, s, (size_t) (ref->def - s));
        if (r >= 0)
                r = expand_text(x, ref->def, ref->def_len, depth + 1, out);
        if (r >= 0)
                r = emit(x, out, ")", 1);
        return r;
}

static int expand_text(Expander *x, const char *text, size_t len, unsigned depth, ConfigBuf *out) {
        _cleanup_config_free_ char *copy = strndup(text, len);
        size_t pos = 0;
        int r;

        if (!copy)
                return fail(x, -ENOMEM, "out of memory");
        for (;;) {
                const char *d = strchr(copy + pos, '$');
                size_t at = d ? (size_t) (d - copy) : len;
                char why[256];
                Ref ref;

                r = emit(x, out, copy + pos, at - pos);
                if (r < 0 || !d)
                        return r;
                if (ref_parse(copy, at, &ref, why, sizeof(why)) < 0) {
                        if (x->n_stack)
                                return fail(x, -EINVAL, "%s (in the value of %s)", why,
                                            x->stack[x->n_stack - 1].name);
                        return fail(x, -EINVAL, "%s", why);
                }
                if (x->only_random)
                        r = copy_but_random(x, copy + at, ref.end - at, &ref, depth, out);
                else
                        switch (ref.kind) {
                        case REF_TEXT:
                        case REF_DOLLARDOLLAR:
                                r = emit(x, out, copy + at, ref.end - at);
                                break;
                        case REF_MACRO:
                                r = ref_is_dollar(&ref) ? emit(x, out, "$", 1) : expand_macro(x, &ref, depth, out);
                                break;
                        case REF_ENV:
                                r = expand_env(x, &ref, depth, out);
                                break;
                        case REF_FUNC:
                                r = config_fn_expand(x, ref.fn, ref.name, ref.name_len, ref.def, ref.def_len, depth,
                                                     out);
                                break;
                        }
                if (r < 0)
                        return r;
                pos = ref.end;
        }
}

int config_expand_full_cwd(const char *text, ConfigResolveFn fn, void *userdata, const ConfigDef *self,
                           const char *cwd, char **ret, ConfigError *err) {
        Expander x = { .fn = fn, .userdata = userdata, .err = err, .cwd = cwd };
        ConfigBuf out = {};
        int r;

        if (!text || !fn || !ret)
                return -EINVAL;
        if (self)
                x.stack[x.n_stack++] = (Frame){ self->name, self->file, self->line };
        r = expand_text(&x, text, strlen(text), 0, &out);
        expander_done(&x);
        if (r < 0) {
                config_buf_done(&out);
                return r;
        }
        *ret = config_buf_steal(&out);
        return *ret ? 0 : -ENOMEM;
}

int config_expand_full(const char *text, ConfigResolveFn fn, void *userdata, const ConfigDef *self, char **ret,
                       ConfigError *err) {
        return config_expand_full_cwd(text, fn, userdata, self, NULL, ret, err);
}

int config_resolve_random(const Config *cfg, const char *value, char **ret, ConfigError *err) {
        Expander x = { .fn = config_resolve, .userdata = (void *) cfg, .err = err, .only_random = true };
        ConfigBuf out = {};
        int r;

        if (!strstr(value, "$RANDOM_")) {
                *ret = strdup(value);
                return *ret ? 0 : -ENOMEM;
        }
        r = expand_text(&x, value, strlen(value), 0, &out);
        expander_done(&x);
        if (r < 0) {
                config_buf_done(&out);
                return r;
        }
        *ret = config_buf_steal(&out);
        return *ret ? 0 : -ENOMEM;
}

/* ---- for the macro functions (macrofn.c) ---- */

int config_expander_text(Expander *x, const char *text, size_t len, unsigned depth, ConfigBuf *out) {
        if (depth > CONFIG_MAX_DEPTH)
                return fail(x, -ELOOP, "macro references nested more than %d levels deep", CONFIG_MAX_DEPTH);
        return expand_text(x, text, len, depth, out);
}

int config_expander_name(Expander *x, const char *name, unsigned depth, ConfigBuf *out, bool *ret_defined) {
        ConfigDef def;

        *ret_defined = false;
        if (strlen(name) > CONFIG_MAX_NAME || x->fn(x->userdata, name, &def) < 0)
                return 0;
        *ret_defined = true;
        return expand_def(x, &def, depth + 1, out);
}

int config_expander_emit(Expander *x, ConfigBuf *out, const char *s, size_t n) {
        return emit(x, out, s, n);
}

int config_expander_fail(Expander *x, int r, const char *fmt, ...) {
        char msg[sizeof(x->err->msg)];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        if (x->n_stack)
                return fail(x, r, "%s (in the value of %s)", msg, x->stack[x->n_stack - 1].name);
        return fail(x, r, "%s", msg);
}

const char *config_expander_cwd(const Expander *x) {
        return x->cwd;
}

unsigned *config_expander_evals(Expander *x) {
        return &x->n_evals;
}

/* ---- the public entry points ---- */

int config_resolve(void *userdata, const char *name, ConfigDef *ret) {
        const Config *cfg = userdata;
        const ConfigEntry *e = config_find(cfg, name);

        if (!e)
                return -ENOENT;
        *ret = (ConfigDef){ e->name, e->value, config_entry_file(cfg, e), e->line };
        return 0;
}

int config_get(const Config *cfg, const char *name, char **ret, ConfigError *err) {
        ConfigDef self;

        if (!cfg || !name || !ret)
                return -EINVAL;
        if (config_resolve((void *) cfg, name, &self) < 0)
                return -ENOENT;
        if (verbatim(name)) {
                *ret = strdup(self.value);
                return *ret ? 0 : -ENOMEM;
        }
        return config_expand_full(self.value, config_resolve, (void *) cfg, &self, ret, err);
}

int config_expand(const Config *cfg, const char *text, char **ret, ConfigError *err) {
        if (!cfg)
                return -EINVAL;
        return config_expand_full(text, config_resolve, (void *) cfg, NULL, ret, err);
}

typedef struct LookupAdapter {
        ConfigLookupFn lookup;
        void *userdata;
} LookupAdapter;

static int resolve_with_lookup(void *userdata, const char *name, ConfigDef *ret) {
        const LookupAdapter *a = userdata;
        const char *v = a->lookup(a->userdata, name);

        if (!v)
                return -ENOENT;
        *ret = (ConfigDef){ name, v, "", 0 };
        return 0;
}

int config_expand_with(const char *text, ConfigLookupFn lookup, void *userdata, char **ret, ConfigError *err) {
        LookupAdapter a = { lookup, userdata };

        if (!lookup)
                return -EINVAL;
        return config_expand_full(text, resolve_with_lookup, &a, NULL, ret, err);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * macrofn.c — HTCondor's macro functions, shared by the configuration and
 * the submit language (the expander, expand.c, finds them and calls
 * config_fn_expand):
 *
 *   $INT(x[,fmt])        x evaluated as a ClassAd expression, an integer
 *                        (reals truncated), printed with fmt (default %d)
 *   $REAL(x[,fmt])       the same for a real (default %.16G; with a fmt, a
 *                        result that shows no '.' gets ".0", as HTCondor's)
 *   $STRING(x[,fmt])     x evaluated; a string result replaces x (else x
 *                        stays as it is); printed with fmt (default %s)
 *   $EVAL(x)             x evaluated; a string printed without quotes,
 *                        anything else as ClassAd text (undefined, {...})
 *   $SUBSTR(x,start[,len])  negative start counts from the end, negative
 *                        len leaves that many characters off the end
 *   $CHOICE(i,list) / $CHOICE(i,a,b,...)  item i (from 0) of a list macro
 *                        (comma-separated) or of the arguments
 *   $RANDOM_CHOICE(a,b,...) / $RANDOM_CHOICE(list)   one item at random
 *   $RANDOM_INTEGER(min,max[,step])   min + k*step <= max at random
 *   $F[fpduwnxbqa](x)    parts of a file name: p directory (with its '/'),
 *                        d last directory (dd, ddd: more), n name without
 *                        extension, x extension (with its '.'), b bare (no
 *                        trailing '/' for p and d, no '.' for x), f made
 *                        absolute (submit files only), u '\' to '/', w '/'
 *                        to '\', q in double quotes, qa in single quotes
 *   $DIRNAME(x) = $Fp(x), $BASENAME(x) = $Fnx(x), $BASENAME(x,suffix)
 *                        without suffix (case-insensitive) when x ends so
 *
 * An x that names a macro stands for that macro's expanded value;
 * otherwise it is text, expanded ($INT(4 + $(N)) works). A fmt is the text
 * after the first comma, spaces included, and holds exactly one conversion
 * of the function's kind ('%%' for a percent sign): no %n, no '*', width
 * and precision at most 1024; anything else is refused with the reason.
 * Arguments are separated by the commas outside parentheses; a macro
 * function's body runs to its matching ')'.
 *
 * Bounds: the expander's (output, depth); at most CONFIG_MAX_EVALS ClassAd
 * evaluations per lookup, each within the ClassAd library's evaluation
 * budget (past it: an error, not ERROR).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "config-internal.h"

#define CONFIG_MAX_EVALS 256     /* ClassAd evaluations per lookup */
#define FMT_MAX_WIDTH 1024       /* of a fmt's width and precision */
#define FILENAME_LETTERS "fpduwnxbqa"

/* ---- names ---- */

static const struct {
        const char *name;
        int fn;
} functions[] = {
        { "RANDOM_CHOICE", CONFIG_FN_RANDOM_CHOICE },
        { "RANDOM_INTEGER", CONFIG_FN_RANDOM_INTEGER },
        { "CHOICE", CONFIG_FN_CHOICE },
        { "SUBSTR", CONFIG_FN_SUBSTR },
        { "INT", CONFIG_FN_INT },
        { "REAL", CONFIG_FN_REAL },
        { "STRING", CONFIG_FN_STRING },
        { "EVAL", CONFIG_FN_EVAL },
        { "BASENAME", CONFIG_FN_BASENAME },
        { "DIRNAME", CONFIG_FN_DIRNAME },
};

int config_fn_lookup(const char *w, size_t n, char *why, size_t why_size) {
        size_t known = 0, letters = 0;

        /* Case matters, as in HTCondor, but for the letters after $F. */
        for (size_t i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
                if (strlen(functions[i].name) == n && strncmp(functions[i].name, w, n) == 0)
                        return functions[i].fn;
        if (n == 0 || w[0] != 'F')
                return 0;
        for (size_t i = 1; i < n; i++) {
                if (isalpha((unsigned char) w[i]))
                        letters++;
                if (strchr(FILENAME_LETTERS, tolower((unsigned char) w[i])))
                        known++;
        }
        if (known == n - 1)
                return CONFIG_FN_FILENAME;
        /* $FOO( is text; $Fpz( is a filename function misspelt. */
        if (known == 0 || letters != n - 1 || n > 1 + strlen(FILENAME_LETTERS))
                return 0;
        for (size_t i = 1; i < n; i++)
                if (!strchr(FILENAME_LETTERS, tolower((unsigned char) w[i]))) {
                        snprintf(why, why_size,
                                 "$%.*s(): '%c' is not a letter of the filename functions $F[" FILENAME_LETTERS "]()",
                                 (int) n, w, w[i]);
                        break;
                }
        return -EINVAL;
}

bool config_fn_is_random(int fn) {
        return fn == CONFIG_FN_RANDOM_CHOICE || fn == CONFIG_FN_RANDOM_INTEGER;
}

/* ---- the random generator: splitmix64, seeded once ---- */

static uint64_t rng_state;
static bool rng_seeded;

void config_random_seed(uint64_t seed) {
        rng_state = seed;
        rng_seeded = true;
}

static uint64_t rng_next(void) {
        uint64_t z;

        if (!rng_seeded) {
                if (getrandom(&rng_state, sizeof(rng_state), GRND_NONBLOCK) != (ssize_t) sizeof(rng_state)) {
                        struct timespec ts;

                        clock_gettime(CLOCK_MONOTONIC, &ts);
                        rng_state = (uint64_t) ts.tv_nsec ^ ((uint64_t) ts.tv_sec << 30) ^ ((uint64_t) getpid() << 48);
                }
                rng_seeded = true;
        }
        z = (rng_state += 0x9e3779b97f4a7c15u);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
        return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0, without modulo bias. */
static uint64_t rng_below(uint64_t n) {
        uint64_t floor = -n % n, v;

        do
                v = rng_next();
        while (v < floor);
        return v % n;
}

/* ---- one call ---- */

typedef struct Span {
        const char *s;
        size_t n;
} Span;

typedef struct Call {
        ConfigExpander *x;
        const char *word;
        size_t word_len;
        Span body;
        unsigned depth;
        char label[80]; /* "$INT(XYArea,%04d)" for messages, shortened */
} Call;

static void buf_donep(ConfigBuf *b) {
        config_buf_done(b);
}
#define _cleanup_buf_ _cleanup_(buf_donep)

static const char *buf_str(const ConfigBuf *b) {
        return b->s ? b->s : "";
}

static Span span_trim(Span a) {
        while (a.n > 0 && isspace((unsigned char) a.s[0])) {
                a.s++;
                a.n--;
        }
        while (a.n > 0 && isspace((unsigned char) a.s[a.n - 1]))
                a.n--;
        return a;
}

/* The items of a: separated by commas, those inside parentheses not
 * counted when nested (a function's raw arguments) and counted otherwise
 * (a list's expanded value, as HTCondor splits it). */
static size_t items_count(Span a, bool nested) {
        size_t n = 1, depth = 0;

        for (size_t i = 0; i < a.n; i++) {
                if (nested && a.s[i] == '(')
                        depth++;
                else if (nested && a.s[i] == ')' && depth > 0)
                        depth--;
                else if (a.s[i] == ',' && depth == 0)
                        n++;
        }
        return n;
}

/* Item k, untrimmed; false when there are fewer. */
static bool items_get(Span a, size_t k, bool nested, Span *ret) {
        size_t depth = 0, start = 0, item = 0;

        for (size_t i = 0; i <= a.n; i++) {
                if (i < a.n && nested && a.s[i] == '(')
                        depth++;
                else if (i < a.n && nested && a.s[i] == ')' && depth > 0)
                        depth--;
                else if (i == a.n || (a.s[i] == ',' && depth == 0)) {
                        if (item == k) {
                                *ret = (Span){ a.s + start, i - start };
                                return true;
                        }
                        item++;
                        start = i + 1;
                }
        }
        return false;
}

static int call_fail(Call *c, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int call_fail(Call *c, int r, const char *fmt, ...) {
        char msg[400];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        return config_expander_fail(c->x, r, "%s: %s", c->label, msg);
}

static int oom(Call *c) {
        return config_expander_fail(c->x, -ENOMEM, "out of memory");
}

/* text expanded into out */
static int expand_span(Call *c, Span a, ConfigBuf *out) {
        return config_expander_text(c->x, a.s, a.n, c->depth + 1, out);
}

/* a (trimmed): the expanded value of the macro it names, else itself
 * expanded. */
static int name_or_text(Call *c, Span a, ConfigBuf *out, bool *ret_defined) {
        char name[CONFIG_MAX_NAME + 1];
        bool defined = false;
        int r;

        a = span_trim(a);
        if (a.n > 0 && a.n <= CONFIG_MAX_NAME && config_is_valid_name(a.s, a.n)) {
                memcpy(name, a.s, a.n);
                name[a.n] = '\0';
                r = config_expander_name(c->x, name, c->depth, out, &defined);
                if (r < 0)
                        return r;
        }
        if (ret_defined)
                *ret_defined = defined;
        if (defined)
                return 0;
        return expand_span(c, a, out);
}

/* ---- ClassAd evaluation ---- */

/* text evaluated as a ClassAd expression: *ret_parsed false (and *ret
 * UNDEFINED) when it does not parse. */
static int evaluate(Call *c, const char *text, bool *ret_parsed, CaValue *ret) {
        unsigned *evals = config_expander_evals(c->x);
        ClassAdExpr *e = NULL;
        CaError cerr = {};
        uint64_t hits;
        int r;

        *ret_parsed = false;
        *ret = ca_undefined();
        if (++*evals > CONFIG_MAX_EVALS)
                return call_fail(c, -E2BIG, "more than %d macro functions evaluate ClassAd expressions in one lookup",
                                 CONFIG_MAX_EVALS);
        r = classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &cerr);
        if (r == -ENOMEM)
                return oom(c);
        if (r < 0)
                return 0;
        hits = classad_budget_hits();
        r = classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, ret);
        classad_expr_free(e);
        if (r < 0)
                return call_fail(c, r, "cannot evaluate '%.64s': %s", text, strerror(-r));
        if (classad_budget_hits() != hits) {
                ca_value_clear(ret);
                return call_fail(c, -E2BIG, "evaluating '%.64s' takes more than the ClassAd evaluation budget", text);
        }
        *ret_parsed = true;
        return 0;
}

/* text as an integer: a decimal number, or an expression that evaluates
 * to a number (a real truncated, a boolean 0 or 1). */
/* Nothing but white space from s on. */
static bool rest_blank(const char *s) {
        while (isspace((unsigned char) *s))
                s++;
        return !*s;
}

static int to_integer(Call *c, const char *text, int64_t *ret, bool *ret_ok) {
        CaValue v;
        bool parsed;
        char *end;
        int r;

        *ret_ok = false;
        errno = 0;
        long long ll = strtoll(text, &end, 10);
        if (end != text && errno == 0 && rest_blank(end)) {
                *ret = ll;
                *ret_ok = true;
                return 0;
        }
        r = evaluate(c, text, &parsed, &v);
        if (r < 0 || !parsed)
                return r;
        if (v.type == CA_INT)
                *ret = v.u.i, *ret_ok = true;
        else if (v.type == CA_BOOL)
                *ret = v.u.b, *ret_ok = true;
        else if (v.type == CA_REAL && isfinite(v.u.r) && v.u.r > -9.2e18 && v.u.r < 9.2e18)
                *ret = (int64_t) v.u.r, *ret_ok = true;
        ca_value_clear(&v);
        return 0;
}

static int to_real(Call *c, const char *text, double *ret, bool *ret_ok) {
        CaValue v;
        bool parsed;
        char *end;
        int r;

        *ret_ok = false;
        double d = strtod(text, &end);
        if (end != text && rest_blank(end)) {
                *ret = d;
                *ret_ok = true;
                return 0;
        }
        r = evaluate(c, text, &parsed, &v);
        if (r < 0 || !parsed)
                return r;
        *ret_ok = ca_to_real(&v, ret);
        ca_value_clear(&v);
        return 0;
}

/* An argument that must be an integer (an index, a length). */
static int integer_arg(Call *c, Span a, const char *what, int64_t *ret) {
        _cleanup_buf_ ConfigBuf b = {};
        bool ok;
        int r;

        r = name_or_text(c, a, &b, NULL);
        if (r >= 0)
                r = to_integer(c, buf_str(&b), ret, &ok);
        if (r < 0)
                return r;
        if (!ok)
                return call_fail(c, -EINVAL, "%s '%.64s' is not an integer", what, buf_str(&b));
        return 0;
}

/* ---- formats ---- */

typedef enum FmtKind {
        FMT_INT,
        FMT_REAL,
        FMT_STRING,
} FmtKind;

/* A checked format: text before and after (%% turned into %), and the one
 * conversion rewritten for snprintf (integers as long long). */
typedef struct Fmt {
        ConfigBuf before, after;
        char spec[64];
        char conv;
} Fmt;

static void fmt_done(Fmt *f) {
        config_buf_done(&f->before);
        config_buf_done(&f->after);
}

static int fmt_digits(const char **p, int *ret) {
        int v = 0;

        for (; isdigit((unsigned char) **p); (*p)++) {
                v = v * 10 + (**p - '0');
                if (v > FMT_MAX_WIDTH)
                        return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int fmt_parse(Call *c, Span fmt_span, FmtKind kind, Fmt *ret) {
        static const char *const convs[] = { "diouxX", "fFeEgGaA", "s" };
        static const char *const flag_sets[] = { "-+ #0'", "-+ #0'", "-" };
        static const char *const kinds[] = { "an integer", "a real", "a string" };
        _cleanup_config_free_ char *fmt = strndup(fmt_span.s, fmt_span.n);
        const char *p;
        bool seen = false;
        int r;

        if (!fmt)
                return oom(c);
        for (p = fmt; *p; p++) {
                ConfigBuf *side = seen ? &ret->after : &ret->before;
                const char *start = p, *flags;
                int width = 0, prec = -1;
                size_t n_flags;

                if (*p != '%' || p[1] == '%') {
                        r = config_buf_add(side, p, 1);
                        p += *p == '%';
                        if (r < 0)
                                return call_fail(c, r, "the format is too long");
                        continue;
                }
                if (seen)
                        return call_fail(c, -EINVAL, "the format '%.64s' has more than one conversion", fmt);
                flags = ++p;
                p += strspn(p, flag_sets[kind]);
                n_flags = (size_t) (p - flags);
                if (n_flags > 8)
                        return call_fail(c, -EINVAL, "the format '%.64s' repeats its flags", fmt);
                if (*p == '*' || (*p == '.' && p[1] == '*'))
                        return call_fail(c, -EINVAL, "the format '%.64s' takes its width from '*', which is not allowed",
                                         fmt);
                if (fmt_digits(&p, &width) < 0)
                        return call_fail(c, -EINVAL, "the format '%.64s' is wider than %d", fmt, FMT_MAX_WIDTH);
                if (*p == '.') {
                        p++;
                        if (*p == '*')
                                return call_fail(c, -EINVAL,
                                                 "the format '%.64s' takes its precision from '*', which is not allowed",
                                                 fmt);
                        if (fmt_digits(&p, &prec) < 0)
                                return call_fail(c, -EINVAL, "the format '%.64s' has a precision above %d", fmt,
                                                 FMT_MAX_WIDTH);
                }
                /* length modifiers: the value's own type is used */
                for (int i = 0; i < 2 && *p && strchr("hlLqjzt", *p); i++)
                        p++;
                if (*p == 'n')
                        return call_fail(c, -EINVAL, "the format '%.64s' has %%n, which is not allowed", fmt);
                if (!*p)
                        return call_fail(c, -EINVAL, "the format '%.64s' ends inside a conversion", fmt);
                if (!strchr(convs[kind], *p))
                        return call_fail(c, -EINVAL, "'%.*s' in the format '%.64s' is not a conversion for %s (%%%s)",
                                         (int) (p + 1 - start), start, fmt, kinds[kind],
                                         kind == FMT_INT ? "d, i, o, u, x, X" : kind == FMT_REAL ? "f, e, g, a" : "s");
                ret->conv = *p;
                char w[16] = "", pr[16] = "";
                if (width > 0)
                        snprintf(w, sizeof(w), "%d", width);
                if (prec >= 0)
                        snprintf(pr, sizeof(pr), ".%d", prec);
                snprintf(ret->spec, sizeof(ret->spec), "%%%.*s%s%s%s%c", (int) n_flags, flags, w, pr,
                         kind == FMT_INT ? "ll" : "", *p);
                seen = true;
        }
        if (!seen)
                return call_fail(c, -EINVAL, "the format '%.64s' has no conversion for %s", fmt, kinds[kind]);
        return 0;
}

/* The one conversion, with a spec fmt_parse built (one conversion of the
 * argument's type, width and precision bounded), hence the pragma. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
static char *format_integer(const Fmt *f, int64_t v) {
        char *s = NULL;
        int r;

        if (strchr("di", f->conv))
                r = asprintf(&s, f->spec, (long long) v);
        else
                r = asprintf(&s, f->spec, (unsigned long long) v);
        return r < 0 ? NULL : s;
}

static char *format_real(const Fmt *f, double v) {
        char *s = NULL;

        return asprintf(&s, f->spec, v) < 0 ? NULL : s;
}

static char *format_string(const Fmt *f, const char *v) {
        char *s = NULL;

        return asprintf(&s, f->spec, v) < 0 ? NULL : s;
}
#pragma GCC diagnostic pop

/* before + number + after into out */
static int emit_formatted(Call *c, const Fmt *f, const char *number, const char *extra, ConfigBuf *out) {
        int r;

        if (!number)
                return oom(c);
        r = config_expander_emit(c->x, out, buf_str(&f->before), f->before.len);
        if (r >= 0)
                r = config_expander_emit(c->x, out, number, strlen(number));
        if (r >= 0 && extra)
                r = config_expander_emit(c->x, out, extra, strlen(extra));
        if (r >= 0)
                r = config_expander_emit(c->x, out, buf_str(&f->after), f->after.len);
        return r;
}

/* ---- $INT, $REAL, $STRING, $EVAL ---- */

static int fn_number(Call *c, FmtKind kind, ConfigBuf *out) {
        _cleanup_buf_ ConfigBuf v = {};
        _cleanup_(fmt_done) Fmt fmt = {};
        _cleanup_config_free_ char *s = NULL;
        Span arg, rest = {};
        bool has_fmt, ok;
        int r;

        has_fmt = items_get(c->body, 1, true, &rest);
        items_get(c->body, 0, true, &arg);
        if (has_fmt) {
                /* everything after the first comma, spaces included */
                rest.n = (size_t) (c->body.s + c->body.n - rest.s);
                r = fmt_parse(c, rest, kind, &fmt);
                if (r < 0)
                        return r;
        }
        r = name_or_text(c, arg, &v, NULL);
        if (r < 0)
                return r;

        if (kind == FMT_INT) {
                int64_t i;

                r = to_integer(c, buf_str(&v), &i, &ok);
                if (r < 0)
                        return r;
                if (!ok)
                        return call_fail(c, -EINVAL, "'%.64s' does not evaluate to an integer", buf_str(&v));
                if (!has_fmt) {
                        char num[32];

                        snprintf(num, sizeof(num), "%lld", (long long) i);
                        return config_expander_emit(c->x, out, num, strlen(num));
                }
                s = format_integer(&fmt, i);
                return emit_formatted(c, &fmt, s, NULL, out);
        }
        if (kind == FMT_REAL) {
                double d;

                r = to_real(c, buf_str(&v), &d, &ok);
                if (r < 0)
                        return r;
                if (!ok)
                        return call_fail(c, -EINVAL, "'%.64s' does not evaluate to a real", buf_str(&v));
                if (!has_fmt) {
                        char num[64];

                        snprintf(num, sizeof(num), "%.16G", d);
                        return config_expander_emit(c->x, out, num, strlen(num));
                }
                s = format_real(&fmt, d);
                /* "force it to look like a real", as HTCondor: 12 -> 12.0 */
                bool integral = s && isfinite(d) && strchr("fFgG", fmt.conv) && !strpbrk(s, ".eE");
                return emit_formatted(c, &fmt, s, integral ? ".0" : NULL, out);
        }

        /* $STRING: a string value replaces the text */
        CaValue val;
        bool parsed;
        const char *str = buf_str(&v);

        r = evaluate(c, str, &parsed, &val);
        if (r < 0)
                return r;
        if (parsed && val.type == CA_STRING) {
                s = strdup(val.u.s->s);
                ca_value_clear(&val);
                if (!s)
                        return oom(c);
                str = s;
        } else
                ca_value_clear(&val);
        if (!has_fmt)
                return config_expander_emit(c->x, out, str, strlen(str));
        _cleanup_config_free_ char *formatted = format_string(&fmt, str);
        return emit_formatted(c, &fmt, formatted, NULL, out);
}

static int fn_eval(Call *c, ConfigBuf *out) {
        _cleanup_buf_ ConfigBuf v = {};
        _cleanup_config_free_ char *text = NULL;
        CaValue val;
        bool parsed;
        int r;

        r = name_or_text(c, c->body, &v, NULL);
        if (r < 0)
                return r;
        r = evaluate(c, buf_str(&v), &parsed, &val);
        if (r < 0)
                return r;
        if (!parsed) /* not an expression: the text itself */
                return config_expander_emit(c->x, out, buf_str(&v), v.len);
        text = val.type == CA_STRING ? strdup(val.u.s->s) : ca_value_unparse(&val);
        ca_value_clear(&val);
        if (!text)
                return oom(c);
        return config_expander_emit(c->x, out, text, strlen(text));
}

/* ---- $SUBSTR, $CHOICE, $RANDOM_CHOICE, $RANDOM_INTEGER ---- */

static int fn_substr(Call *c, ConfigBuf *out) {
        _cleanup_buf_ ConfigBuf v = {};
        size_t n = items_count(c->body, true);
        int64_t start, len = INT64_MAX, rest;
        Span a;
        int r;

        if (n < 2 || n > 3)
                return call_fail(c, -EINVAL, "takes a name, a start index and an optional length, not %zu argument%s",
                                 n, n == 1 ? "" : "s");
        items_get(c->body, 0, true, &a);
        r = name_or_text(c, a, &v, NULL);
        if (r < 0)
                return r;
        items_get(c->body, 1, true, &a);
        r = integer_arg(c, a, "the start index", &start);
        if (r >= 0 && n == 3) {
                items_get(c->body, 2, true, &a);
                r = integer_arg(c, a, "the length", &len);
        }
        if (r < 0)
                return r;

        /* negative start: from the end; negative length: leave that many off */
        if (start < 0)
                start += (int64_t) v.len;
        if (start < 0)
                start = 0;
        if (start > (int64_t) v.len)
                start = (int64_t) v.len;
        rest = (int64_t) v.len - start;
        if (len < 0)
                len += rest;
        if (len < 0)
                len = 0;
        if (len > rest)
                len = rest;
        return config_expander_emit(c->x, out, buf_str(&v) + start, (size_t) len);
}

/* The list a $CHOICE or $RANDOM_CHOICE picks from, when one argument
 * holds it: the value of the macro it names, or the text it is. */
static int one_list(Call *c, Span a, bool must_name, ConfigBuf *ret) {
        bool defined;
        int r;

        a = span_trim(a);
        if (a.n == 0)
                return call_fail(c, -EINVAL, "no list");
        r = name_or_text(c, a, ret, &defined);
        if (r < 0)
                return r;
        if (must_name && !defined && config_is_valid_name(a.s, a.n))
                return call_fail(c, -EINVAL, "no list named %.*s", (int) (a.n > 64 ? 64 : a.n), a.s);
        return 0;
}

/* Item k of the items of body from item first on (one item: a list). */
static int pick(Call *c, size_t first, bool must_name, bool random, int64_t k, ConfigBuf *out) {
        _cleanup_buf_ ConfigBuf list = {}, item = {};
        size_t n = items_count(c->body, true) - first;
        Span a;
        int r;

        if (n == 1) {
                items_get(c->body, first, true, &a);
                r = one_list(c, a, must_name, &list);
                if (r < 0)
                        return r;
                Span l = { buf_str(&list), list.len };
                n = items_count(l, false);
                if (random)
                        k = (int64_t) rng_below(n);
                if (k < 0 || (uint64_t) k >= n)
                        return call_fail(c, -EINVAL, "index %lld is out of range (the list has %zu item%s)",
                                         (long long) k, n, n == 1 ? "" : "s");
                items_get(l, (size_t) k, false, &a);
                a = span_trim(a);
                return config_expander_emit(c->x, out, a.s, a.n);
        }
        if (random)
                k = (int64_t) rng_below(n);
        if (k < 0 || (uint64_t) k >= n)
                return call_fail(c, -EINVAL, "index %lld is out of range (the list has %zu items)", (long long) k, n);
        items_get(c->body, first + (size_t) k, true, &a);
        r = expand_span(c, span_trim(a), &item);
        if (r < 0)
                return r;
        a = span_trim((Span){ buf_str(&item), item.len });
        return config_expander_emit(c->x, out, a.s, a.n);
}

static int fn_choice(Call *c, ConfigBuf *out) {
        int64_t k;
        Span a;
        int r;

        if (items_count(c->body, true) < 2)
                return call_fail(c, -EINVAL, "takes an index and a list: $CHOICE(index, listname) or "
                                             "$CHOICE(index, item0, item1, ...)");
        items_get(c->body, 0, true, &a);
        if (span_trim(a).n == 0)
                return call_fail(c, -EINVAL, "no index");
        r = integer_arg(c, a, "the index", &k);
        if (r < 0)
                return r;
        return pick(c, 1, true, false, k, out);
}

static int integer_literal(Call *c, Span a, const char *what, int64_t *ret) {
        _cleanup_buf_ ConfigBuf b = {};
        char *end;
        int r;

        r = expand_span(c, a, &b);
        if (r < 0)
                return r;
        const char *s = buf_str(&b);
        while (isspace((unsigned char) *s))
                s++;
        errno = 0;
        long long v = strtoll(s, &end, 10);
        while (end != s && isspace((unsigned char) *end))
                end++;
        if (end == s || *end || errno) {
                Span t = span_trim((Span){ s, strlen(s) });

                return call_fail(c, -EINVAL, "%s '%.*s' is not an integer", what, (int) (t.n > 64 ? 64 : t.n), t.s);
        }
        *ret = v;
        return 0;
}

static int fn_random_integer(Call *c, ConfigBuf *out) {
        size_t n = items_count(c->body, true);
        int64_t min, max, step = 1, v;
        uint64_t count;
        char num[32];
        Span a;
        int r;

        if (n < 2 || n > 3 || span_trim(c->body).n == 0)
                return call_fail(c, -EINVAL, "takes a minimum, a maximum and an optional step");
        items_get(c->body, 0, true, &a);
        r = integer_literal(c, a, "the minimum", &min);
        if (r >= 0) {
                items_get(c->body, 1, true, &a);
                r = integer_literal(c, a, "the maximum", &max);
        }
        if (r >= 0 && n == 3) {
                items_get(c->body, 2, true, &a);
                r = integer_literal(c, a, "the step", &step);
        }
        if (r < 0)
                return r;
        if (step < 1)
                return call_fail(c, -EINVAL, "the step %lld is not positive", (long long) step);
        if (min > max)
                return call_fail(c, -EINVAL, "the minimum %lld is greater than the maximum %lld", (long long) min,
                                 (long long) max);
        /* (max - min) / step + 1 values, computed without overflow */
        count = ((uint64_t) max - (uint64_t) min) / (uint64_t) step;
        count = count == UINT64_MAX ? rng_next() : rng_below(count + 1);
        v = (int64_t) ((uint64_t) min + count * (uint64_t) step);
        snprintf(num, sizeof(num), "%lld", (long long) v);
        return config_expander_emit(c->x, out, num, strlen(num));
}

/* ---- file names ---- */

typedef struct FileParts {
        bool x, n, p, f, b, q, a;
        unsigned d;  /* how many directories */
        char to_sep; /* '/' (u), '\\' (w) or 0 */
} FileParts;

/* Where the path starts d directories up from its file name: just after
 * the (d+1)-th separator from the end ('/' or '\\'), 0 when there are
 * fewer. The \\server or \\.\ prefix of a Windows path counts as one. */
static size_t dirs_up(const char *s, size_t len, unsigned d) {
        size_t lo = 0;
        unsigned seen = 0;

        if (len >= 4 && strncmp(s, "\\\\.\\", 4) == 0)
                lo = 4;
        else if (len >= 2 && strncmp(s, "\\\\", 2) == 0)
                lo = 2;
        for (size_t i = len; i > lo; i--)
                if (s[i - 1] == '/' || s[i - 1] == '\\') {
                        if (seen++ == d)
                                return i;
                }
        return lo > 0 && seen == d ? lo : 0;
}

static int fn_filename(Call *c, int fn, ConfigBuf *out) {
        _cleanup_buf_ ConfigBuf v = {}, path = {}, result = {};
        FileParts fp = {};
        Span name = c->body, suffix = {};
        bool has_suffix = false;
        const char *cwd = config_expander_cwd(c->x);
        int r;

        if (fn == CONFIG_FN_BASENAME) {
                size_t n = items_count(c->body, true);

                fp.n = fp.x = true;
                if (n == 2) {
                        items_get(c->body, 0, true, &name);
                        items_get(c->body, 1, true, &suffix);
                        has_suffix = true;
                } else if (n > 2)
                        return call_fail(c, -EINVAL, "takes a file name and an optional suffix");
        } else if (fn == CONFIG_FN_DIRNAME)
                fp.p = true;
        else
                for (size_t i = 1; i < c->word_len; i++)
                        switch (tolower((unsigned char) c->word[i])) {
                        case 'x': fp.x = true; break;
                        case 'n': fp.n = true; break;
                        case 'p': fp.p = true; break;
                        case 'd': fp.d++; break;
                        case 'a': fp.a = true; break;
                        case 'b': fp.b = true; break;
                        case 'f': fp.f = true; break;
                        case 'w': fp.to_sep = '\\'; break;
                        case 'u': fp.to_sep = '/'; break;
                        case 'q': fp.q = true; break;
                        }

        r = name_or_text(c, name, &v, NULL);
        if (r < 0)
                return r;

        /* the value without its quotes, made absolute, its separators converted */
        Span s = { buf_str(&v), v.len };
        if (s.n > 1 && s.s[0] == s.s[s.n - 1] && (s.s[0] == '"' || s.s[0] == '\'')) {
                s.s++;
                s.n -= 2;
        }
        if (fp.f && cwd && cwd[0] && !(s.n > 0 && s.s[0] == '/')) {
                size_t cn = strlen(cwd);

                if (cn > 0 && cwd[cn - 1] == '/')
                        cn--;
                r = config_buf_add(&path, cwd, cn);
                if (r >= 0)
                        r = config_buf_add(&path, "/", 1);
                if (s.n > 2 && s.s[0] == '.' && (s.s[1] == '/' || (fp.to_sep && s.s[1] == fp.to_sep))) {
                        s.s += 2;
                        s.n -= 2;
                }
        } else
                r = 0;
        if (r >= 0)
                r = config_buf_add(&path, s.s, s.n);
        if (r < 0)
                return call_fail(c, r, "the file name is too long");
        if (fp.to_sep)
                for (size_t i = 0; i < path.len; i++)
                        if (path.s[i] == '/' || path.s[i] == '\\')
                                path.s[i] = fp.to_sep;

        /* name starts at ixn (after the last '/'), extension at ixx (its last
         * '.' but the first character) or at the end */
        const char *p = buf_str(&path);
        size_t end = path.len, ixn = 0, ixx = end, from = 0, to = end;
        for (size_t i = 0; i < end; i++)
                if (p[i] == '/')
                        ixn = i + 1;
        for (size_t i = end; i > ixn + 1; i--)
                if (p[i - 1] == '.') {
                        ixx = i - 1;
                        break;
                }
        if (has_suffix) {
                Span suf = span_trim(suffix);

                if (suf.n > 0 && suf.n <= end - ixn && strncasecmp(p + end - suf.n, suf.s, suf.n) == 0) {
                        ixx = end - suf.n; /* the suffix counts as the extension, and goes */
                        fp.x = false;
                }
        }
        /* a bare file name: n and x leave nothing to p and d */
        if (ixn == 0 && (fp.n || fp.x))
                fp.p = false, fp.d = 0;

        if (fp.d > 0) {
                if (ixn == 0)
                        from = to = 0;
                else {
                        from = dirs_up(p, end, fp.d);
                        if (fp.n && !fp.x)
                                to = ixx;
                        else if (!fp.n && !fp.x)
                                to = fp.b && ixn > 0 ? ixn - 1 : ixn;
                }
        } else if (fp.p) {
                if (!fp.n && !fp.x)
                        to = fp.b && ixn > 0 ? ixn - 1 : ixn;
                else if (fp.n && !fp.x)
                        to = ixx;
        } else if (fp.n && !fp.x) {
                from = ixn;
                to = ixx;
        } else if (fp.n && fp.x)
                from = ixn;
        else if (fp.x)
                from = ixx + (fp.b && ixx < end ? 1 : 0);

        if (fp.q)
                r = config_buf_add(&result, fp.a ? "'" : "\"", 1);
        if (r >= 0)
                r = config_buf_add(&result, p + from, to > from ? to - from : 0);
        if (r >= 0 && fp.q)
                r = config_buf_add(&result, fp.a ? "'" : "\"", 1);
        if (r < 0)
                return call_fail(c, r, "the file name is too long");
        return config_expander_emit(c->x, out, buf_str(&result), result.len);
}

/* ---- entry point ---- */

int config_fn_expand(ConfigExpander *x, int fn, const char *word, size_t word_len, const char *body, size_t body_len,
                     unsigned depth, ConfigBuf *out) {
        Call c = { .x = x, .word = word, .word_len = word_len, .body = { body, body_len }, .depth = depth };

        snprintf(c.label, sizeof(c.label), "$%.*s(%.*s%s)", (int) (word_len > 16 ? 16 : word_len), word,
                 (int) (body_len > 40 ? 40 : body_len), body, body_len > 40 ? "..." : "");
        if (depth > CONFIG_MAX_DEPTH)
                return config_expander_fail(x, -ELOOP, "macro references nested more than %d levels deep",
                                            CONFIG_MAX_DEPTH);
        switch (fn) {
        case CONFIG_FN_INT:
                return fn_number(&c, FMT_INT, out);
        case CONFIG_FN_REAL:
                return fn_number(&c, FMT_REAL, out);
        case CONFIG_FN_STRING:
                return fn_number(&c, FMT_STRING, out);
        case CONFIG_FN_EVAL:
                return fn_eval(&c, out);
        case CONFIG_FN_SUBSTR:
                return fn_substr(&c, out);
        case CONFIG_FN_CHOICE:
                return fn_choice(&c, out);
        case CONFIG_FN_RANDOM_CHOICE:
                if (span_trim(c.body).n == 0)
                        return call_fail(&c, -EINVAL, "no list");
                return pick(&c, 0, false, true, 0, out);
        case CONFIG_FN_RANDOM_INTEGER:
                return fn_random_integer(&c, out);
        case CONFIG_FN_BASENAME:
        case CONFIG_FN_DIRNAME:
        case CONFIG_FN_FILENAME:
                return fn_filename(&c, fn, out);
        }
        return config_expander_fail(x, -EINVAL, "$%.*s(): unknown macro function", (int) word_len, word);
}

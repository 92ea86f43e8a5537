/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transform.c — compiling job transforms (transform.h): JOB_TRANSFORM_NAMES,
 * each JOB_TRANSFORM_<Name>'s lines into statements once, at load, with
 * the line and the reason of what does not compile; the old ClassAd form
 * converted to statements first. Applying them: transform-run.c.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "transform-internal.h"

#define KNOB_PREFIX "JOB_TRANSFORM_"

bool queue_xform_protected(const char *name) {
        return strcasecmp(name, "Owner") == 0 || strcasecmp(name, "User") == 0;
}

bool queue_xform_valid_attr(const char *name, size_t len) {
        static const char *const reserved[] = { "true", "false", "undefined", "error", "is", "isnt",
                                                "my", "target", "parent", "self", NULL };
        if (len == 0 || len > 256 || !(isalpha((unsigned char) name[0]) || name[0] == '_'))
                return false;
        for (size_t i = 1; i < len; i++)
                if (!(isalnum((unsigned char) name[i]) || name[i] == '_'))
                        return false;
        for (const char *const *r = reserved; *r; r++)
                if (strlen(*r) == len && strncasecmp(*r, name, len) == 0)
                        return false;
        return true;
}

static bool valid_macro(const char *name, size_t len) {
        if (len == 0 || len > 256 || !(isalpha((unsigned char) name[0]) || name[0] == '_'))
                return false;
        for (size_t i = 1; i < len; i++)
                if (!(isalnum((unsigned char) name[i]) || name[i] == '_'))
                        return false;
        return true;
}

const char *queue_xform_knob(const QueueXform *x, const char *name) {
        for (size_t i = 0; i < x->n_knobs; i++)
                if (strcasecmp(x->knobs[i].name, name) == 0)
                        return x->knobs[i].value;
        return NULL;
}

/* ---- freeing ---- */

static void tmpl_clear(XfTmpl *t) {
        for (size_t i = 0; i < t->n; i++) {
                free(t->segs[i].text);
                if (t->segs[i].def) {
                        tmpl_clear(t->segs[i].def);
                        free(t->segs[i].def);
                }
        }
        free(t->segs);
        *t = (XfTmpl){ 0 };
}

static void xform_free(QueueXform *x) {
        if (!x)
                return;
        for (size_t i = 0; i < x->n; i++) {
                XfStmt *s = &x->st[i];
                free(s->text);
                free(s->name);
                free(s->defined);
                tmpl_clear(&s->rhs);
                classad_expr_free(s->expr);
                if (s->re)
                        pcre2_code_free(s->re);
        }
        free(x->st);
        for (size_t i = 0; i < x->n_knobs; i++) {
                free(x->knobs[i].name);
                free(x->knobs[i].value);
        }
        free(x->knobs);
        classad_expr_free(x->req);
        free(x->name);
        free(x->where);
        free(x);
}

void queue_xforms_free(QueueXforms *xs) {
        if (!xs)
                return;
        for (size_t i = 0; i < xs->n; i++)
                xform_free(xs->x[i]);
        free(xs->x);
        free(xs);
}

static void queue_xforms_freep(QueueXforms **xs) {
        queue_xforms_free(*xs);
}

int queue_xforms_new(QueueXforms **ret) {
        QueueXforms *xs = calloc(1, sizeof *xs);
        if (!xs)
                return -ENOMEM;
        *ret = xs;
        return 0;
}

size_t queue_xforms_count(const QueueXforms *xs) {
        return xs ? xs->n : 0;
}

/* ---- the compiler's state ---- */

typedef struct Comp {
        QueueXform *x;
        const Config *cfg;
        int line;            /* the line being compiled */
        char text[160];      /* its text (cut short) */
        size_t ifs[QUEUE_XFORM_MAX_IF_DEPTH]; /* open ifs: the last branch's statement */
        bool saw_else[QUEUE_XFORM_MAX_IF_DEPTH];
        int if_lines[QUEUE_XFORM_MAX_IF_DEPTH];
        size_t depth;
        bool done;           /* TRANSFORM met */
        char why[400];
} Comp;

__attribute__((format(printf, 2, 3))) static int bad(Comp *c, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c->why, sizeof c->why, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

/* The knob name, if cfg defines it (expanded now): kept for $(name). */
static int note_knob(Comp *c, const char *name) {
        char *v = NULL;
        ConfigError e = { 0 };
        int r;

        if (!c->cfg || queue_xform_knob(c->x, name))
                return 0;
        r = config_get(c->cfg, name, &v, &e);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r == -ENOMEM ? r : bad(c, "$(%s): the knob does not expand: %s", name, e.msg);
        XfKnob *k = realloc(c->x->knobs, (c->x->n_knobs + 1) * sizeof *k);
        if (!k) {
                free(v);
                return -ENOMEM;
        }
        c->x->knobs = k;
        k = &k[c->x->n_knobs];
        k->value = v;
        if (!(k->name = strdup(name))) {
                free(v);
                return -ENOMEM;
        }
        c->x->n_knobs++;
        return 0;
}

/* ---- templates ---- */

static int tmpl_add(XfTmpl *t, XfSegKind kind, const char *s, size_t len, XfTmpl *def) {
        XfSeg *segs = realloc(t->segs, (t->n + 1) * sizeof *segs);
        if (!segs)
                return -ENOMEM;
        t->segs = segs;
        if (kind == XF_LIT && t->n && segs[t->n - 1].kind == XF_LIT) {
                XfSeg *last = &segs[t->n - 1];
                size_t old = strlen(last->text);
                char *m = realloc(last->text, old + len + 1);
                if (!m)
                        return -ENOMEM;
                memcpy(m + old, s, len);
                m[old + len] = '\0';
                last->text = m;
                return 0;
        }
        char *text = strndup(s, len);
        if (!text)
                return -ENOMEM;
        segs[t->n++] = (XfSeg){ kind, text, def };
        if (kind != XF_LIT)
                t->refs = true;
        return 0;
}

/* The closing ')' of the reference opened at s[open] ('('), nesting
 * counted; 0 when there is none. */
static size_t closing(const char *s, size_t open) {
        int level = 0;
        for (size_t i = open; s[i]; i++) {
                if (s[i] == '(')
                        level++;
                else if (s[i] == ')' && --level == 0)
                        return i;
        }
        return 0;
}

static int tmpl_parse(Comp *c, const char *s, size_t len, unsigned depth, XfTmpl *ret);

/* A reference's name: a macro, MY.attr (the name of MY's attr only, in
 * *ret_my), DOLLAR. */
static int ref_name(Comp *c, const char *name, size_t len, bool *ret_my) {
        *ret_my = false;
        if (len > 3 && strncasecmp(name, "MY.", 3) == 0) {
                if (!queue_xform_valid_attr(name + 3, len - 3))
                        return bad(c, "$(%.*s): '%.*s' is not an attribute name", (int) len, name, (int) len - 3,
                                   name + 3);
                *ret_my = true;
                return 0;
        }
        if (!valid_macro(name, len))
                return bad(c, "$(%.*s): not a macro name (letters, digits, '_'; MY.attr for the job's)", (int) len,
                           name);
        return 0;
}

/* One $... reference at s (s[0] == '$'), *used: how many bytes it took. */
static int tmpl_ref(Comp *c, XfTmpl *t, const char *s, size_t len, unsigned depth, size_t *used) {
        static const struct {
                const char *name;
                XfSegKind kind;
        } fns[] = { { "INT", XF_INT }, { "REAL", XF_REAL }, { "STRING", XF_STRING } };
        size_t word = 1, end;
        bool my;
        int r;

        while (word < len && isalpha((unsigned char) s[word]))
                word++;
        if (word >= len || s[word] != '(') {
                *used = 1;
                return tmpl_add(t, XF_LIT, "$", 1, NULL); /* a lone '$' */
        }
        _cleanup_free_ char *copy = strndup(s, len);
        if (!copy)
                return -ENOMEM;
        end = closing(copy, word);
        if (!end)
                return bad(c, "'%.*s' has no closing ')'", (int) (word + 1), s);
        *used = end + 1;
        const char *in = s + word + 1;
        size_t n = end - word - 1;
        if (word == 1) { /* $(name) or $(name:default) */
                const char *colon = memchr(in, ':', n);
                size_t nlen = colon ? (size_t) (colon - in) : n;
                XfTmpl *def = NULL;
                if (nlen == 6 && strncasecmp(in, "DOLLAR", 6) == 0 && !colon)
                        return tmpl_add(t, XF_LIT, "$", 1, NULL);
                if ((r = ref_name(c, in, nlen, &my)) < 0)
                        return r;
                if (colon) {
                        if (depth >= QUEUE_XFORM_MAX_DEPTH)
                                return bad(c, "defaults nested more than %d deep", QUEUE_XFORM_MAX_DEPTH);
                        if (!(def = calloc(1, sizeof *def)))
                                return -ENOMEM;
                        if ((r = tmpl_parse(c, colon + 1, n - nlen - 1, depth + 1, def)) < 0) {
                                tmpl_clear(def);
                                free(def);
                                return r;
                        }
                }
                if (!my) {
                        _cleanup_free_ char *name = strndup(in, nlen);
                        if (!name || (r = note_knob(c, name)) < 0) {
                                if (def)
                                        tmpl_clear(def);
                                free(def);
                                return name ? r : -ENOMEM;
                        }
                }
                r = tmpl_add(t, my ? XF_MY : XF_MACRO, my ? in + 3 : in, my ? nlen - 3 : nlen, def);
                if (r < 0 && def) {
                        tmpl_clear(def);
                        free(def);
                }
                return r;
        }
        for (size_t i = 0; i < sizeof fns / sizeof *fns; i++) {
                if (word - 1 != strlen(fns[i].name) || strncasecmp(s + 1, fns[i].name, word - 1) != 0)
                        continue;
                if (memchr(in, ',', n))
                        return bad(c, "$%s(%.*s): a format argument is not supported", fns[i].name, (int) n, in);
                while (n && isspace((unsigned char) *in)) {
                        in++;
                        n--;
                }
                while (n && isspace((unsigned char) in[n - 1]))
                        n--;
                if ((r = ref_name(c, in, n, &my)) < 0)
                        return r;
                if (!my) {
                        _cleanup_free_ char *name = strndup(in, n);
                        if (!name)
                                return -ENOMEM;
                        if ((r = note_knob(c, name)) < 0)
                                return r;
                }
                return tmpl_add(t, fns[i].kind, in, n, NULL);
        }
        if (word - 1 == 3 && strncasecmp(s + 1, "ENV", 3) == 0)
                return bad(c, "$ENV() is not available in a transform (the daemon's environment is not the job's)");
        return bad(c, "$%.*s() is not a macro function transforms know ($INT, $REAL, $STRING)", (int) (word - 1),
                   s + 1);
}

static int tmpl_parse(Comp *c, const char *s, size_t len, unsigned depth, XfTmpl *ret) {
        XfTmpl t = { 0 };
        size_t i = 0, lit = 0;
        int r = 0;

        while (i < len && r >= 0) {
                if (s[i] != '$') {
                        i++;
                        continue;
                }
                if (i > lit)
                        r = tmpl_add(&t, XF_LIT, s + lit, i - lit, NULL);
                if (r < 0)
                        break;
                if (i + 1 < len && s[i + 1] == '$') { /* $$(...): the match's, left alone */
                        r = tmpl_add(&t, XF_LIT, "$$", 2, NULL);
                        i += 2;
                } else {
                        size_t used = 0;
                        r = tmpl_ref(c, &t, s + i, len - i, depth, &used);
                        i += used;
                }
                lit = i;
        }
        if (r >= 0 && len > lit)
                r = tmpl_add(&t, XF_LIT, s + lit, len - lit, NULL);
        if (r >= 0 && t.n == 0)
                r = tmpl_add(&t, XF_LIT, "", 0, NULL);
        if (r < 0) {
                tmpl_clear(&t);
                return r;
        }
        *ret = t;
        return 0;
}

/* ---- regexes ---- */

/* A repeat without bound of a group that itself holds one ("(a+)+",
 * "(a*b*)*", "(x{2,})+"): what makes a backtracking match exponential. */
static bool nested_unbounded(const char *p) {
        bool inner[QUEUE_XFORM_MAX_REGEX + 1] = { false }; /* per open group: holds an unbounded repeat */
        size_t depth = 0;
        bool last_group = false, last_unbounded = false;

        for (size_t i = 0; p[i]; i++) {
                char ch = p[i];
                bool group_closed = false;
                if (ch == '\\' && p[i + 1]) {
                        i++;
                } else if (ch == '[') { /* a class: up to its ']' */
                        size_t j = i + 1;
                        if (p[j] == '^')
                                j++;
                        if (p[j] == ']')
                                j++;
                        while (p[j] && p[j] != ']') {
                                if (p[j] == '\\' && p[j + 1])
                                        j++;
                                j++;
                        }
                        i = p[j] ? j : i;
                } else if (ch == '(') {
                        if (depth < QUEUE_XFORM_MAX_REGEX)
                                inner[++depth] = false;
                } else if (ch == ')') {
                        if (depth > 0) {
                                last_unbounded = inner[depth];
                                depth--;
                                if (last_unbounded && depth > 0)
                                        inner[depth] = true;
                        }
                        group_closed = true;
                } else if (ch == '*' || ch == '+' || (ch == '{' && strchr(p + i, '}'))) {
                        bool unbounded = ch != '{';
                        if (ch == '{') {
                                const char *close = strchr(p + i, '}');
                                const char *comma = memchr(p + i, ',', (size_t) (close - (p + i)));
                                unbounded = comma && comma + 1 == close;
                        }
                        if (unbounded && last_group && last_unbounded)
                                return true;
                        if (unbounded && depth > 0)
                                inner[depth] = true;
                }
                last_group = group_closed;
        }
        return false;
}

static int compile_regex(Comp *c, const char *pat, size_t len, uint32_t flags, pcre2_code **ret) {
        _cleanup_free_ char *p = strndup(pat, len);
        int err;
        PCRE2_SIZE off;

        if (!p)
                return -ENOMEM;
        if (len == 0)
                return bad(c, "an empty regex");
        if (len > QUEUE_XFORM_MAX_REGEX)
                return bad(c, "a regex of more than %d bytes", QUEUE_XFORM_MAX_REGEX);
        if (nested_unbounded(p))
                return bad(c, "/%s/ repeats without bound a group that repeats without bound: matching it can "
                              "take exponential time", p);
        pcre2_compile_context *cc = pcre2_compile_context_create(NULL);
        if (!cc)
                return -ENOMEM;
        pcre2_set_parens_nest_limit(cc, 64);
        pcre2_code *re = pcre2_compile((PCRE2_SPTR) p, len, flags | PCRE2_CASELESS, &err, &off, cc);
        pcre2_compile_context_free(cc);
        if (!re) {
                char msg[160];
                pcre2_get_error_message(err, (PCRE2_UCHAR *) msg, sizeof msg);
                return bad(c, "/%s/ does not compile (at %zu): %s", p, (size_t) off, msg);
        }
        size_t size = 0;
        if (pcre2_pattern_info(re, PCRE2_INFO_SIZE, &size) == 0 && size > 64 * 1024) {
                pcre2_code_free(re);
                return bad(c, "/%s/ compiles to %zu bytes, more than 64 KiB", p, size);
        }
        *ret = re;
        return 0;
}

/* ---- statements ---- */

static const char *skip_ws(const char *s) {
        while (isspace((unsigned char) *s))
                s++;
        return s;
}

/* Does s start with keyword kw as a word (and not "kw = ...", a macro)? */
static bool keyword(const char *s, const char *kw, const char **ret_rest) {
        size_t n = strlen(kw);
        if (strncasecmp(s, kw, n) != 0 || (s[n] && !isspace((unsigned char) s[n])))
                return false;
        const char *rest = skip_ws(s + n);
        if (*rest == '=')
                return false;
        *ret_rest = rest;
        return true;
}

static int new_stmt(Comp *c, XfKind kind, XfStmt **ret) {
        if (c->x->n >= QUEUE_XFORM_MAX_STATEMENTS)
                return bad(c, "more than %d statements", QUEUE_XFORM_MAX_STATEMENTS);
        XfStmt *st = realloc(c->x->st, (c->x->n + 1) * sizeof *st);
        if (!st)
                return -ENOMEM;
        c->x->st = st;
        st = &st[c->x->n];
        *st = (XfStmt){ .kind = kind, .line = c->line };
        if (!(st->text = strndup(c->text, 120)))
                return -ENOMEM;
        c->x->n++;
        *ret = st;
        return 0;
}

/* A word up to white space, '=' or ','; *ret_end after it. */
static size_t word_len(const char *s) {
        size_t n = 0;
        while (s[n] && !isspace((unsigned char) s[n]) && s[n] != '=' && s[n] != ',')
                n++;
        return n;
}

static int conditional(Comp *c, XfKind kind, const char *cond) {
        XfStmt *st;
        int r;

        if (kind != XF_IF && c->depth == 0)
                return bad(c, "%s without if", kind == XF_ELIF ? "elif" : kind == XF_ELSE ? "else" : "endif");
        if ((kind == XF_ELIF || kind == XF_ELSE) && c->saw_else[c->depth - 1])
                return bad(c, "%s after else", kind == XF_ELIF ? "elif" : "else");
        if (kind == XF_IF && c->depth >= QUEUE_XFORM_MAX_IF_DEPTH)
                return bad(c, "ifs nested more than %d deep", QUEUE_XFORM_MAX_IF_DEPTH);
        if ((kind == XF_ELSE || kind == XF_ENDIF) && *cond)
                return bad(c, "unexpected '%s' after %s", cond, kind == XF_ELSE ? "else" : "endif");
        if ((r = new_stmt(c, kind, &st)) < 0)
                return r;
        size_t self = c->x->n - 1;
        if (kind == XF_IF || kind == XF_ELIF) {
                const char *rest;
                if (*cond == '!') {
                        st->negate = true;
                        cond = skip_ws(cond + 1);
                }
                if (!*cond)
                        return bad(c, "%s without a condition", kind == XF_IF ? "if" : "elif");
                if (strncasecmp(cond, "version", 7) == 0 && (!cond[7] || isspace((unsigned char) cond[7])))
                        return bad(c, "'version' conditions are not supported in glean");
                if (keyword(cond, "defined", &rest)) {
                        size_t n = strlen(rest);
                        bool my;
                        while (n && isspace((unsigned char) rest[n - 1]))
                                n--;
                        if ((r = ref_name(c, rest, n, &my)) < 0)
                                return r;
                        if (!(st->defined = strndup(rest, n)))
                                return -ENOMEM;
                        if (!my && (r = note_knob(c, st->defined)) < 0)
                                return r;
                } else if ((r = tmpl_parse(c, cond, strlen(cond), 0, &st->rhs)) < 0)
                        return r;
        }
        if (kind != XF_IF)
                c->x->st[c->ifs[c->depth - 1]].jump = self;
        if (kind == XF_IF) {
                c->if_lines[c->depth] = c->line;
                c->saw_else[c->depth] = false;
                c->ifs[c->depth++] = self;
        } else if (kind == XF_ENDIF)
                c->depth--;
        else {
                c->ifs[c->depth - 1] = self;
                c->saw_else[c->depth - 1] = kind == XF_ELSE;
        }
        return 0;
}

static int assignment(Comp *c, const char *line) {
        const char *eq = strchr(line, '=');
        size_t n;
        XfStmt *st;
        int r;

        if (!eq)
                return bad(c, "'%.60s' is neither a transform statement (SET, DEFAULT, EVALSET, EVALMACRO, COPY, "
                              "RENAME, DELETE, REQUIREMENTS, if) nor NAME = value",
                           line);
        n = (size_t) (eq - line);
        while (n && isspace((unsigned char) line[n - 1]))
                n--;
        if (n && line[n - 1] == ':') /* NAME := value, submit's */
                n--;
        if (!valid_macro(line, n))
                return bad(c, "'%.*s' is not a macro name (letters, digits, '_')", (int) n, line);
        if (n == 12 && strncasecmp(line, "Requirements", 12) == 0)
                return bad(c, "'Requirements = ...' would define a macro, not the transform's REQUIREMENTS: "
                              "write REQUIREMENTS <expr>");
        if ((r = new_stmt(c, XF_ASSIGN, &st)) < 0)
                return r;
        if (!(st->name = strndup(line, n)))
                return -ENOMEM;
        const char *v = skip_ws(eq + 1);
        return tmpl_parse(c, v, strlen(v), 0, &st->rhs);
}

/* The expression of SET, DEFAULT, EVALSET, EVALMACRO: parsed now when it
 * has no macro (then its errors are the load's). */
static int parse_now(Comp *c, XfStmt *st) {
        CaError e = { 0 };
        int r;

        if (st->rhs.refs)
                return 0;
        const char *text = st->rhs.segs[0].text;
        r = classad_expr_parse(text, strlen(text), XF_MODE, &st->expr, &e);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bad(c, "'%.80s' is not an expression: %s", text, e.msg);
        return 0;
}

static int action(Comp *c, XfKind kind, const char *kw, const char *rest) {
        bool two = kind != XF_DELETE, regex_ok = kind == XF_COPY || kind == XF_RENAME || kind == XF_DELETE;
        XfStmt *st;
        size_t n;
        int r;

        if ((r = new_stmt(c, kind, &st)) < 0)
                return r;
        if (!*rest)
                return bad(c, "%s needs %s", kw, two ? "2 arguments" : "an attribute");
        if (regex_ok && *rest == '/') {
                const char *close = strchr(rest + 1, '/');
                uint32_t flags = 0;
                if (!close)
                        return bad(c, "%s /regex/: no closing '/'", kw);
                const char *f = close + 1;
                for (; *f && !isspace((unsigned char) *f); f++)
                        switch (*f) {
                        case 'i': break; /* always caseless */
                        case 'g': break;
                        case 'm': flags |= PCRE2_MULTILINE; break;
                        case 'U': flags |= PCRE2_UNGREEDY; break;
                        default: return bad(c, "%s /regex/%c: not a regex option (i, g, m, U)", kw, *f);
                        }
                if ((r = compile_regex(c, rest + 1, (size_t) (close - rest - 1), flags, &st->re)) < 0)
                        return r;
                rest = skip_ws(f);
        } else {
                n = word_len(rest);
                if (!queue_xform_valid_attr(rest, n))
                        return bad(c, "%s: '%.*s' is not an attribute name", kw, (int) n, rest);
                if (!(st->name = strndup(rest, n)))
                        return -ENOMEM;
                if (queue_xform_protected(st->name) && kind != XF_COPY && kind != XF_EVALMACRO)
                        return bad(c, "%s %s: a transform may not change %s (the queue sets it: who submitted)", kw,
                                   st->name, st->name);
                if (kind == XF_EVALMACRO && !valid_macro(rest, n))
                        return bad(c, "EVALMACRO: '%.*s' is not a macro name", (int) n, rest);
                rest = skip_ws(rest + n);
        }
        if (!two) {
                if (*rest)
                        return bad(c, "DELETE: unexpected '%.60s' after the attribute", rest);
                return 0;
        }
        if (*rest == '=' || *rest == ',')
                rest = skip_ws(rest + 1);
        if (!*rest)
                return bad(c, "%s needs 2 arguments", kw);
        if ((r = tmpl_parse(c, rest, strlen(rest), 0, &st->rhs)) < 0)
                return r;
        if (kind == XF_COPY || kind == XF_RENAME) {
                if (!st->rhs.refs && !st->re) {
                        const char *to = st->rhs.segs[0].text;
                        if (!queue_xform_valid_attr(to, strlen(to)))
                                return bad(c, "%s: '%.60s' is not an attribute name", kw, to);
                        if (queue_xform_protected(to))
                                return bad(c, "%s ... %s: a transform may not change %s (the queue sets it: who "
                                              "submitted)", kw, to, to);
                }
                return 0;
        }
        return parse_now(c, st);
}

static int requirements(Comp *c, const char *expr) {
        CaError e = { 0 };
        int r;

        if (c->x->req)
                return bad(c, "a second REQUIREMENTS (a transform has one)");
        if (!*expr)
                return bad(c, "REQUIREMENTS needs an expression");
        if (strstr(expr, "$("))
                return bad(c, "REQUIREMENTS is read as written, not macro-expanded: '%.60s'", expr);
        r = classad_expr_parse(expr, strlen(expr), XF_MODE, &c->x->req, &e);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return bad(c, "REQUIREMENTS '%.80s' is not an expression: %s", expr, e.msg);
        return 0;
}

static int compile_line(Comp *c, const char *line) {
        static const struct {
                const char *kw;
                XfKind kind;
        } actions[] = {
                { "SET", XF_SET },       { "DEFAULT", XF_DEFAULT }, { "EVALSET", XF_EVALSET },
                { "EVALMACRO", XF_EVALMACRO }, { "COPY", XF_COPY }, { "RENAME", XF_RENAME },
                { "DELETE", XF_DELETE },
        };
        const char *rest;

        if (!*line || *line == '#')
                return 0;
        if (keyword(line, "if", &rest))
                return conditional(c, XF_IF, rest);
        if (keyword(line, "elif", &rest))
                return conditional(c, XF_ELIF, rest);
        if (keyword(line, "else", &rest))
                return conditional(c, XF_ELSE, rest);
        if (keyword(line, "endif", &rest))
                return conditional(c, XF_ENDIF, rest);
        for (size_t i = 0; i < sizeof actions / sizeof *actions; i++)
                if (keyword(line, actions[i].kw, &rest))
                        return action(c, actions[i].kind, actions[i].kw, rest);
        if (keyword(line, "REQUIREMENTS", &rest))
                return requirements(c, rest);
        if (keyword(line, "NAME", &rest) || keyword(line, "UNIVERSE", &rest))
                return 0; /* the job router's; nothing in the schedd */
        if (keyword(line, "TRANSFORM", &rest)) {
                char *end;
                long k = *rest ? strtol(rest, &end, 10) : 1;
                if (*rest && (*skip_ws(end) || end == rest || (k != 0 && k != 1)))
                        return bad(c, "TRANSFORM %.60s: iterating a transform (condor_transform_ads's) is not "
                                      "supported in the schedd; a job transform applies once",
                                   rest);
                c->done = true;
                return 0;
        }
        return assignment(c, line);
}

static int compile_text(Comp *c, const char *text) {
        const char *p = text;
        int r = 0;

        c->line = 0;
        while (*p && !c->done) {
                const char *nl = strchr(p, '\n');
                size_t n = nl ? (size_t) (nl - p) : strlen(p);
                _cleanup_free_ char *line = strndup(p, n);
                if (!line)
                        return -ENOMEM;
                c->line++;
                char *s = (char *) skip_ws(line);
                size_t len = strlen(s);
                while (len && isspace((unsigned char) s[len - 1]))
                        s[--len] = '\0';
                snprintf(c->text, sizeof c->text, "%s", s);
                if ((r = compile_line(c, s)) < 0)
                        return r;
                p += n + (nl ? 1 : 0);
        }
        if (c->depth > 0) {
                c->line = c->if_lines[c->depth - 1];
                snprintf(c->text, sizeof c->text, "if");
                return bad(c, "if without endif");
        }
        return 0;
}

/* ---- the old ClassAd form ---- */

typedef struct Rule {
        const char *name;
        char *text;
} Rule;

static int rule_cmp(const void *a, const void *b) {
        return strcasecmp(((const Rule *) a)->name, ((const Rule *) b)->name);
}

/* "[ set_A = ...; ... ]" as statements, condor_job_router's order. */
static int convert_classad(Comp *c, const char *text, char **ret) {
        ClassAd *ad = NULL;
        CaError e = { 0 };
        static const char *const groups[] = { "copy_", "delete_", "set_", "eval_set_" };
        static const char *const kws[] = { "COPY", "DELETE", "SET", "EVALSET" };
        Rule *rules = NULL;
        size_t n_rules = 0;
        char *out = NULL;
        size_t out_len = 0;
        FILE *f = NULL;
        int r = classad_parse(text, strlen(text), XF_MODE, &ad, &e);

        if (r < 0) {
                classad_free(ad);
                return r == -ENOMEM ? r : bad(c, "the ClassAd form does not parse: %s", e.msg);
        }
        if (!(f = open_memstream(&out, &out_len)) || !(rules = calloc(classad_size(ad) + 1, sizeof *rules))) {
                r = -ENOMEM;
                goto done;
        }
        ClassAdIter it = classad_iter(ad);
        const char *name;
        char *expr;
        while (classad_iter_next(&it, &name, &expr)) {
                rules[n_rules++] = (Rule){ name, expr };
                if (!expr) {
                        r = -ENOMEM;
                        goto done;
                }
        }
        qsort(rules, n_rules, sizeof *rules, rule_cmp);
        /* Macros first: attributes that are no rule. */
        for (size_t i = 0; i < n_rules; i++) {
                bool rule = strcasecmp(rules[i].name, "Requirements") == 0 || strcasecmp(rules[i].name, "Name") == 0;
                for (size_t g = 0; g < 4 && !rule; g++)
                        rule = strncasecmp(rules[i].name, groups[g], strlen(groups[g])) == 0;
                if (rule)
                        continue;
                _cleanup_free_ char *s = NULL;
                if (classad_eval_string(ad, rules[i].name, XF_MODE, &s) == 0 && rules[i].text[0] == '"')
                        fprintf(f, "%s = %s\n", rules[i].name, s);
                else
                        fprintf(f, "%s = %s\n", rules[i].name, rules[i].text);
        }
        for (size_t g = 0; g < 4; g++)
                for (size_t i = 0; i < n_rules; i++) {
                        size_t pl = strlen(groups[g]);
                        if (strncasecmp(rules[i].name, groups[g], pl) != 0 ||
                            (g == 2 && strncasecmp(rules[i].name, "set_", 4) != 0))
                                continue;
                        const char *attr = rules[i].name + pl;
                        if (g == 0) {
                                _cleanup_free_ char *to = NULL;
                                if (classad_eval_string(ad, rules[i].name, XF_MODE, &to) < 0) {
                                        r = bad(c, "%s is not a string (the name to copy %s to)", rules[i].name,
                                                attr);
                                        goto done;
                                }
                                fprintf(f, "COPY %s %s\n", attr, to);
                        } else if (g == 1)
                                fprintf(f, "DELETE %s\n", attr);
                        else
                                fprintf(f, "%s %s %s\n", kws[g], attr, rules[i].text);
                }
        if (classad_has(ad, "Requirements")) {
                _cleanup_free_ char *req = classad_unparse_attr(ad, "Requirements");
                if (!req) {
                        r = -ENOMEM;
                        goto done;
                }
                if ((r = requirements(c, req)) < 0)
                        goto done;
                c->x->req_target = true;
        }
        if (fclose(f) != 0) {
                f = NULL;
                r = -ENOMEM;
                goto done;
        }
        f = NULL;
        *ret = TAKE_PTR(out);
        r = 0;
done:
        if (f)
                fclose(f);
        free(out);
        for (size_t i = 0; i < n_rules; i++)
                free(rules[i].text);
        free(rules);
        classad_free(ad);
        return r;
}

/* ---- loading ---- */

static int fill_error(ConfigError *err, const QueueXform *x, const char *file, int line, const Comp *c, int r) {
        if (!err)
                return r;
        *err = (ConfigError){ 0 };
        snprintf(err->file, sizeof err->file, "%s", file ? file : "");
        err->line = line;
        if (r == -ENOMEM)
                snprintf(err->msg, sizeof err->msg, "JOB_TRANSFORM_%s: out of memory", x->name);
        else if (c->line > 0)
                snprintf(err->msg, sizeof err->msg, "JOB_TRANSFORM_%.40s, line %d of its value ('%.80s'): %.300s", x->name,
                         c->line, c->text, c->why);
        else
                snprintf(err->msg, sizeof err->msg, "JOB_TRANSFORM_%.40s: %.400s", x->name, c->why);
        return r;
}

int queue_xforms_add(QueueXforms *xs, const char *name, const char *text, const char *file, int line,
                     const Config *cfg, ConfigError *err) {
        QueueXform *x = calloc(1, sizeof *x);
        Comp c = { .x = x, .cfg = cfg };
        int r;

        if (!x)
                return -ENOMEM;
        if (!(x->name = strdup(name)) || asprintf(&x->where, "%s:%d", file ? file : "", line) < 0) {
                x->where = NULL;
                xform_free(x);
                return -ENOMEM;
        }
        if (xs->n >= QUEUE_XFORM_MAX_TRANSFORMS) {
                r = bad(&c, "more than %d transforms", QUEUE_XFORM_MAX_TRANSFORMS);
                goto fail;
        }
        const char *t = skip_ws(text);
        if (*t == '[') {
                _cleanup_free_ char *converted = NULL;
                if ((r = convert_classad(&c, t, &converted)) < 0)
                        goto fail;
                r = compile_text(&c, converted);
                if (r < 0) {
                        /* Its lines are ours, not the administrator's: name the rule. */
                        c.line = 0;
                        goto fail;
                }
        } else if ((r = compile_text(&c, text)) < 0)
                goto fail;
        QueueXform **v = realloc(xs->x, (xs->n + 1) * sizeof *v);
        if (!v) {
                r = -ENOMEM;
                goto fail;
        }
        xs->x = v;
        xs->x[xs->n++] = x;
        return 0;
fail:
        fill_error(err, x, file, line, &c, r);
        xform_free(x);
        return r;
}

int queue_xforms_from_config(const Config *cfg, QueueXforms **ret, ConfigError *err) {
        _cleanup_(queue_xforms_freep) QueueXforms *xs = NULL;
        char **names = NULL, knob[300];
        int r = queue_xforms_new(&xs);

        if (r < 0)
                return r;
        r = config_get_list(cfg, "JOB_TRANSFORM_NAMES", &names, err);
        if (r == -ENOENT) {
                *ret = TAKE_PTR(xs);
                return 0;
        }
        if (r < 0)
                return r;
        for (size_t i = 0; names && names[i] && r >= 0; i++) {
                const char *file = NULL, *raw;
                int line = 0;
                if (strcasecmp(names[i], "NAMES") == 0)
                        continue; /* HTCondor's guard against JOB_TRANSFORM_NAMES itself */
                for (size_t k = 0; k < i && r >= 0; k++)
                        if (strcasecmp(names[k], names[i]) == 0) {
                                *err = (ConfigError){ 0 };
                                (void) config_where(cfg, "JOB_TRANSFORM_NAMES", &file, &line);
                                snprintf(err->file, sizeof err->file, "%s", file ? file : "");
                                err->line = line;
                                snprintf(err->msg, sizeof err->msg, "JOB_TRANSFORM_NAMES lists %s twice", names[i]);
                                r = -EINVAL;
                        }
                if (r < 0)
                        break;
                snprintf(knob, sizeof knob, KNOB_PREFIX "%s", names[i]);
                raw = config_raw(cfg, knob);
                if (!raw) {
                        *err = (ConfigError){ 0 };
                        (void) config_where(cfg, "JOB_TRANSFORM_NAMES", &file, &line);
                        snprintf(err->file, sizeof err->file, "%s", file ? file : "");
                        err->line = line;
                        snprintf(err->msg, sizeof err->msg,
                                 "JOB_TRANSFORM_NAMES names %s, but %s is not defined", names[i], knob);
                        r = -EINVAL;
                        break;
                }
                (void) config_where(cfg, knob, &file, &line);
                if (!*skip_ws(raw))
                        continue; /* empty: nothing to do (HTCondor ignores it too) */
                if (*skip_ws(raw) == '[') {
                        /* The ClassAd form is read expanded, as HTCondor did. */
                        _cleanup_free_ char *v = NULL;
                        if ((r = config_expand(cfg, raw, &v, err)) < 0) {
                                err->line = err->line ? err->line : line;
                                if (!err->file[0])
                                        snprintf(err->file, sizeof err->file, "%s", file ? file : "");
                                break;
                        }
                        r = queue_xforms_add(xs, names[i], v, file, line, cfg, err);
                } else
                        r = queue_xforms_add(xs, names[i], raw, file, line, cfg, err);
        }
        config_strv_free(names);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(xs);
        return 0;
}

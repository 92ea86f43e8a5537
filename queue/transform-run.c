/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transform-run.c — applying compiled job transforms (transform.h) to a
 * job's ad: REQUIREMENTS, the statements in order with their macros
 * expanded as they run, each evaluation within the ClassAd budget and
 * every write counted against QUEUE_XFORM_MAX_WRITE; and a submission's
 * cluster and procs transformed so that the procs stay small ads over
 * the (transformed) cluster.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/strmap.h"
#include "transform-internal.h"

#define RE_MATCH_LIMIT 100000u
#define RE_DEPTH_LIMIT 10000u

typedef struct Var {
        const char *name;
        const XfTmpl *tmpl; /* NAME = value: expanded when used */
        char *text;         /* EVALMACRO's value: the job's text */
} Var;

typedef struct Run {
        const QueueXform *x;
        const XfStmt *st;       /* the statement running, for reasons */
        ClassAd *w;             /* the job */
        GleanStrMap *deleted;   /* the parent's attributes deleted (the child's is then undefined) */
        Var *vars;
        size_t n_vars;
        size_t written;         /* bytes written into the job by every transform */
        bool track;             /* note whether anything read ProcId (read_procid) */
        bool read_procid;
        char *why;
        size_t whylen;
} Run;

__attribute__((format(printf, 3, 4))) static int fail(Run *run, int r, const char *fmt, ...) {
        char msg[400];
        va_list ap;

        if (r == -ENOMEM)
                return r;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (run->st)
                glean_why(r, run->why, run->whylen, "JOB_TRANSFORM_%s line %d (%.60s): %s", run->x->name,
                          run->st->line, run->st->text, msg);
        else
                glean_why(r, run->why, run->whylen, "JOB_TRANSFORM_%s: %s", run->x->name, msg);
        return r;
}

static bool is_deleted(const Run *run, const char *name) {
        return run->deleted && glean_strmap_get(run->deleted, name);
}

static bool is_procid(const char *name) {
        return strcasecmp(name, "ProcId") == 0;
}

static bool exists(Run *run, const char *name) {
        if (is_procid(name))
                run->read_procid = true;
        return classad_has(run->w, name) && !is_deleted(run, name);
}

/* ---- what reads ProcId ----
 *
 * The procs of a submission that have no attributes of their own are
 * one job but for ProcId: when no transform reads it, directly or
 * through the job's attributes an evaluated expression refers to, one
 * run serves them all. An evaluation is followed through the names it
 * refers to, and theirs, in the job (at most DEP_MAX of them; more, or a
 * reference the tree does not name, counts as reading ProcId). */

#define DEP_MAX 4096

typedef struct Dep {
        const CaName **todo;
        size_t n_todo, cap;
        GleanStrMap *seen;
        bool target, dep;
        size_t visited;
} Dep;

static void dep_ref(const CaName *name, CaRefKind kind, void *userdata) {
        Dep *d = userdata;
        if (d->dep)
                return;
        if (kind == CA_REF_OPAQUE || !name) {
                d->dep = true;
                return;
        }
        if (kind == CA_REF_TARGET && !d->target)
                return;
        const char *s = classad_name_str(name);
        if (is_procid(s)) {
                d->dep = true;
                return;
        }
        if (glean_strmap_get(d->seen, s))
                return;
        if (++d->visited > DEP_MAX || glean_strmap_put(d->seen, s, (void *) s) < 0) {
                d->dep = true;
                return;
        }
        if (d->n_todo == d->cap) {
                size_t cap = d->cap ? 2 * d->cap : 32;
                const CaName **v = realloc(d->todo, cap * sizeof *v);
                if (!v) {
                        d->dep = true;
                        return;
                }
                d->todo = v;
                d->cap = cap;
        }
        d->todo[d->n_todo++] = name;
}

/* e (or, when e is NULL, the attribute attr) read against the job. */
static void note_reads(Run *run, const ClassAdExpr *e, const char *attr, bool target) {
        Dep d = { .target = target };

        if (!run->track || run->read_procid)
                return;
        if (glean_strmap_new(true, &d.seen) < 0) {
                run->read_procid = true;
                return;
        }
        if (e)
                classad_expr_refs(e, dep_ref, &d);
        else {
                const CaName *cn = classad_name(attr);
                if (cn)
                        dep_ref(cn, CA_REF_MY, &d);
                else
                        d.dep = true;
        }
        while (!d.dep && d.n_todo > 0)
                (void) classad_attr_refs(run->w, d.todo[--d.n_todo], dep_ref, &d);
        if (d.dep)
                run->read_procid = true;
        free(d.todo);
        glean_strmap_free(d.seen);
}

static void undelete(Run *run, const char *name) {
        if (run->deleted)
                free(glean_strmap_remove(run->deleted, name));
}

static int charge(Run *run, const char *name, size_t len) {
        run->written += strlen(name) + len;
        if (run->written > QUEUE_XFORM_MAX_WRITE)
                return fail(run, -E2BIG, "the transforms wrote more than %u bytes into the job",
                            QUEUE_XFORM_MAX_WRITE);
        return 0;
}

/* Evaluates e against the job (as TARGET too when target). */
static int eval(Run *run, const ClassAdExpr *e, bool target, CaValue *ret) {
        note_reads(run, e, NULL, target);
        uint64_t hits = classad_budget_hits();
        int r = classad_expr_eval(e, run->w, target ? run->w : NULL, XF_MODE, ret);
        if (r < 0)
                return r == -ENOMEM ? r : fail(run, r, "the expression cannot be evaluated");
        if (classad_budget_hits() != hits) {
                ca_value_clear(ret);
                return fail(run, -E2BIG, "the evaluation ran out of the ClassAd evaluation budget");
        }
        return 0;
}

/* A value as macro text: a string's characters, else its ClassAd text. */
static char *value_text(const CaValue *v) {
        if (v->type == CA_STRING)
                return strndup(v->u.s->s, v->u.s->len);
        return ca_value_unparse(v);
}

/* ---- macro expansion ---- */

typedef struct Out {
        char *s;
        size_t len, cap;
        bool expr;   /* the text is a ClassAd expression (SET, DEFAULT, EVALSET, EVALMACRO) */
        bool quoted; /* ... and is inside a string literal now */
} Out;

static int put(Run *run, Out *o, const char *s, size_t n) {
        if (o->len + n + 1 > QUEUE_XFORM_MAX_TEXT)
                return fail(run, -E2BIG, "macro expansion makes more than %u bytes", QUEUE_XFORM_MAX_TEXT);
        if (o->len + n + 1 > o->cap) {
                size_t cap = o->cap ? o->cap : 128;
                while (cap < o->len + n + 1)
                        cap *= 2;
                char *m = realloc(o->s, cap);
                if (!m)
                        return -ENOMEM;
                o->s = m;
                o->cap = cap;
        }
        memcpy(o->s + o->len, s, n);
        o->len += n;
        o->s[o->len] = '\0';
        return 0;
}

/* The administrator's text: as it is (its quotes open and close strings). */
static int put_trusted(Run *run, Out *o, const char *s, size_t n) {
        int r = put(run, o, s, n);
        if (r < 0 || !o->expr)
                return r;
        for (size_t i = 0; i < n; i++) {
                if (o->quoted && s[i] == '\\' && i + 1 < n)
                        i++;
                else if (s[i] == '"')
                        o->quoted = !o->quoted;
        }
        return 0;
}

/* The job's text: inside a string literal escaped, outside one a whole
 * expression in parentheses (it never becomes code of its own). */
static int put_job(Run *run, Out *o, const char *s, size_t n, const char *what) {
        int r;

        if (!o->expr)
                return put(run, o, s, n);
        if (o->quoted) {
                for (size_t i = 0; i < n; i++) {
                        char ch = s[i];
                        if (ch == '"' || ch == '\\')
                                r = put(run, o, "\\", 1);
                        else
                                r = 0;
                        if (r >= 0) {
                                if (ch == '\n')
                                        r = put(run, o, "\\n", 2);
                                else
                                        r = put(run, o, &ch, 1);
                        }
                        if (r < 0)
                                return r;
                }
                return 0;
        }
        if (n == 0)
                return 0;
        ClassAdExpr *e = NULL;
        CaError err = { 0 };
        r = classad_expr_parse(s, n, XF_MODE, &e, &err);
        classad_expr_free(e);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail(run, -EINVAL, "%s, '%.40s', is not an expression of its own (%s); put it in quotes to "
                                          "make a string of it", what, s, err.msg);
        if ((r = put(run, o, "(", 1)) < 0 || (r = put(run, o, s, n)) < 0)
                return r;
        return put(run, o, ")", 1);
}

static const Var *find_var(const Run *run, const char *name, size_t below) {
        for (size_t i = below; i > 0; i--)
                if (strcasecmp(run->vars[i - 1].name, name) == 0)
                        return &run->vars[i - 1];
        return NULL;
}

static int expand(Run *run, Out *o, const XfTmpl *t, unsigned depth, const char *self, size_t self_below);

/* The text of the job's attribute: a string literal's characters, else
 * the expression's text; NULL (0) when the job has none. */
static int my_text(Run *run, const char *attr, char **ret) {
        *ret = NULL;
        if (!exists(run, attr))
                return 0;
        _cleanup_free_ char *text = classad_unparse_attr(run->w, attr);
        if (!text)
                return -ENOMEM;
        bool literal = text[0] == '"';
        for (size_t i = 1; literal && text[i]; i++) {
                if (text[i] == '\\' && text[i + 1])
                        i++;
                else if (text[i] == '"') {
                        literal = text[i + 1] == '\0';
                        break;
                }
        }
        if (literal && classad_eval_string(run->w, attr, XF_MODE, ret) == 0)
                return 1;
        *ret = TAKE_PTR(text);
        return 1;
}

/* $INT(x), $REAL(x), $STRING(x): x evaluated against the job. */
static int put_eval(Run *run, Out *o, const XfSeg *seg, unsigned depth) {
        CaValue v = ca_undefined();
        ClassAdExpr *e = NULL;
        CaError err = { 0 };
        int r;

        if (strncasecmp(seg->text, "MY.", 3) == 0) {
                uint64_t hits = classad_budget_hits();
                note_reads(run, NULL, seg->text + 3, false);
                r = exists(run, seg->text + 3) ? classad_eval_attr(run->w, seg->text + 3, XF_MODE, &v) : 0;
                if (r >= 0 && classad_budget_hits() != hits) {
                        ca_value_clear(&v);
                        return fail(run, -E2BIG, "$(%s) ran out of the ClassAd evaluation budget", seg->text);
                }
        } else {
                Out sub = { 0 };
                XfSeg ref = { XF_MACRO, seg->text, NULL };
                XfTmpl t = { &ref, 1, true };
                r = expand(run, &sub, &t, depth + 1, NULL, run->n_vars);
                if (r >= 0 && sub.len) {
                        r = classad_expr_parse(sub.s, sub.len, XF_MODE, &e, &err);
                        if (r < 0 && r != -ENOMEM)
                                r = fail(run, -EINVAL, "$(%s) = '%.40s' is not an expression: %s", seg->text, sub.s,
                                         err.msg);
                        if (r >= 0)
                                r = eval(run, e, false, &v);
                }
                free(sub.s);
                classad_expr_free(e);
        }
        if (r < 0)
                return r;
        char buf[64];
        _cleanup_free_ char *text = NULL;
        const char *fn = seg->kind == XF_INT ? "INT" : seg->kind == XF_REAL ? "REAL" : "STRING";
        double d;
        if (seg->kind == XF_STRING) {
                if (v.type == CA_UNDEFINED || v.type == CA_ERROR)
                        r = fail(run, -EINVAL, "$STRING(%s) is %s", seg->text, ca_type_name(v.type));
                else if (!(text = value_text(&v)))
                        r = -ENOMEM;
                else
                        r = put_job(run, o, text, strlen(text), "the value of $STRING()");
        } else if (!ca_to_real(&v, &d))
                r = fail(run, -EINVAL, "$%s(%s) is not a number (%s)", fn, seg->text, ca_type_name(v.type));
        else {
                if (seg->kind == XF_INT)
                        snprintf(buf, sizeof buf, "%" PRId64, v.type == CA_INT ? v.u.i : (int64_t) d);
                else
                        snprintf(buf, sizeof buf, "%.17g", d);
                r = put_job(run, o, buf, strlen(buf), "a number");
        }
        ca_value_clear(&v);
        return r;
}

/* self, self_below: inside NAME's own value, $(NAME) is its previous
 * definition (NAME = $(NAME) more). */
static int expand(Run *run, Out *o, const XfTmpl *t, unsigned depth, const char *self, size_t self_below) {
        int r = 0;

        if (depth > QUEUE_XFORM_MAX_DEPTH)
                return fail(run, -ELOOP, "macros nested more than %d deep (a macro that refers to itself?)",
                            QUEUE_XFORM_MAX_DEPTH);
        for (size_t i = 0; i < t->n && r >= 0; i++) {
                const XfSeg *seg = &t->segs[i];
                switch (seg->kind) {
                case XF_LIT:
                        r = put_trusted(run, o, seg->text, strlen(seg->text));
                        break;
                case XF_MACRO: {
                        bool own = self && strcasecmp(self, seg->text) == 0;
                        const Var *v = find_var(run, seg->text, own ? self_below : run->n_vars);
                        const char *knob;
                        if (v && v->tmpl)
                                r = expand(run, o, v->tmpl, depth + 1, v->name, (size_t) (v - run->vars));
                        else if (v)
                                r = put_job(run, o, v->text, strlen(v->text), "a macro EVALMACRO set from the job");
                        else if ((knob = queue_xform_knob(run->x, seg->text)))
                                r = put_trusted(run, o, knob, strlen(knob));
                        else if (seg->def)
                                r = expand(run, o, seg->def, depth + 1, self, self_below);
                        break;
                }
                case XF_MY: {
                        _cleanup_free_ char *text = NULL;
                        char what[300];
                        r = my_text(run, seg->text, &text);
                        snprintf(what, sizeof what, "the job's %s", seg->text);
                        if (r > 0)
                                r = put_job(run, o, text, strlen(text), what);
                        else if (r == 0 && seg->def)
                                r = expand(run, o, seg->def, depth + 1, self, self_below);
                        break;
                }
                case XF_INT:
                case XF_REAL:
                case XF_STRING:
                        r = put_eval(run, o, seg, depth);
                        break;
                }
        }
        return r;
}

/* rhs expanded (expr: as an expression), trimmed; malloc'd. */
static int expand_rhs(Run *run, const XfTmpl *t, bool expr, char **ret) {
        Out o = { .expr = expr };
        int r = expand(run, &o, t, 0, NULL, 0);
        if (r >= 0 && !o.s)
                r = put(run, &o, "", 0);
        if (r < 0) {
                free(o.s);
                return r;
        }
        size_t a = 0, n = o.len;
        while (a < n && isspace((unsigned char) o.s[a]))
                a++;
        while (n > a && isspace((unsigned char) o.s[n - 1]))
                n--;
        memmove(o.s, o.s + a, n - a);
        o.s[n - a] = '\0';
        *ret = o.s;
        return 0;
}

/* ---- statements ---- */

static int set_text(Run *run, const char *name, const char *text) {
        CaError err = { 0 };
        int r = charge(run, name, strlen(text));
        if (r < 0)
                return r;
        r = classad_set_expr_text(run->w, name, text, XF_MODE, &err);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return fail(run, -EINVAL, "'%.60s' is not an expression: %s", text, err.msg);
        undelete(run, name);
        return 0;
}

static int delete_attr(Run *run, const char *name) {
        int r = classad_delete(run->w, name);
        if (r < 0 && r != -ENOENT)
                return r;
        if (!classad_has(run->w, name) || is_deleted(run, name))
                return 0;
        /* The parent's: hidden by undefined. */
        if ((r = classad_set_expr_text(run->w, name, "undefined", XF_MODE, NULL)) < 0)
                return r;
        if (!run->deleted && (r = glean_strmap_new(true, &run->deleted)) < 0)
                return r;
        char *key = strdup(name);
        if (!key || (r = glean_strmap_put(run->deleted, key, key)) < 0) {
                free(key);
                return -ENOMEM;
        }
        return 0;
}

static int copy_attr(Run *run, const char *from, const char *to) {
        if (!queue_xform_valid_attr(to, strlen(to)))
                return fail(run, -EINVAL, "'%.60s' is not an attribute name", to);
        if (queue_xform_protected(to))
                return fail(run, -EPERM, "the job's data names %s as the new attribute: a transform may not change %s",
                            to, to);
        _cleanup_free_ char *text = classad_unparse_attr(run->w, from);
        if (!text)
                return -ENOMEM;
        return set_text(run, to, text);
}

static bool is_undefined_literal(const Run *run, const char *name) {
        _cleanup_free_ char *t = classad_unparse_attr(run->w, name);
        return t && strcasecmp(t, "undefined") == 0;
}

/* pattern with \0..\9 replaced by the match's groups. */
static int substitute(Run *run, const char *pattern, const char *subject, const PCRE2_SIZE *ov, int groups,
                      char **ret) {
        Out o = { 0 };
        int r = put(run, &o, "", 0);
        for (const char *p = pattern; *p && r >= 0; p++) {
                if (p[0] == '\\' && p[1] >= '0' && p[1] < '0' + groups) {
                        int g = p[1] - '0';
                        r = put(run, &o, subject + ov[2 * g], ov[2 * g + 1] - ov[2 * g]);
                        p++;
                } else
                        r = put(run, &o, p, 1);
        }
        if (r < 0) {
                free(o.s);
                return r;
        }
        *ret = o.s;
        return 0;
}

static pcre2_match_context *match_context(void) {
        static pcre2_match_context *ctx;
        if (!ctx && (ctx = pcre2_match_context_create(NULL))) {
                pcre2_set_match_limit(ctx, RE_MATCH_LIMIT);
                pcre2_set_depth_limit(ctx, RE_DEPTH_LIMIT);
        }
        return ctx;
}

/* COPY, RENAME, DELETE /regex/ over every attribute the job shows. */
static int regex_op(Run *run, const XfStmt *st) {
        _cleanup_free_ char *pattern = NULL;
        char **names = NULL;
        size_t n = 0, cap = 0;
        int r = 0;
        pcre2_match_context *mc = match_context();
        pcre2_match_data *md = pcre2_match_data_create_from_pattern(st->re, NULL);

        if (!mc || !md) {
                pcre2_match_data_free(md);
                return -ENOMEM;
        }
        if (st->kind != XF_DELETE && (r = expand_rhs(run, &st->rhs, false, &pattern)) < 0)
                goto done;
        /* The names first: the ad changes afterwards. */
        ClassAdIter it = classad_iter(run->w);
        const char *name;
        while (classad_iter_next(&it, &name, NULL)) {
                if (is_deleted(run, name))
                        continue;
                int rc = pcre2_match(st->re, (PCRE2_SPTR) name, strlen(name), 0, 0, md, mc);
                if (rc == PCRE2_ERROR_NOMATCH)
                        continue;
                if (is_procid(name))
                        run->read_procid = true;
                if (rc < 0) {
                        r = fail(run, -E2BIG, "matching %s took past the regex limits", name);
                        goto done;
                }
                if (n == cap) {
                        cap = cap ? 2 * cap : 16;
                        char **v = realloc(names, cap * sizeof *v);
                        if (!v) {
                                r = -ENOMEM;
                                goto done;
                        }
                        names = v;
                }
                if (st->kind == XF_DELETE)
                        names[n] = strdup(name);
                else
                        r = substitute(run, pattern, name, pcre2_get_ovector_pointer(md), rc, &names[n]);
                if (r < 0 || !names[n]) {
                        r = r < 0 ? r : -ENOMEM;
                        goto done;
                }
                n++;
                if (st->kind != XF_DELETE) {
                        /* from, to: two entries */
                        if (n == cap) {
                                cap *= 2;
                                char **v = realloc(names, cap * sizeof *v);
                                if (!v) {
                                        r = -ENOMEM;
                                        goto done;
                                }
                                names = v;
                        }
                        if (!(names[n] = strdup(name))) {
                                r = -ENOMEM;
                                goto done;
                        }
                        n++;
                }
        }
        for (size_t i = 0; i < n && r >= 0; i += st->kind == XF_DELETE ? 1 : 2) {
                if (st->kind == XF_DELETE) {
                        if (!queue_xform_protected(names[i]))
                                r = delete_attr(run, names[i]);
                        continue;
                }
                const char *to = names[i], *from = names[i + 1];
                if (st->kind == XF_RENAME && queue_xform_protected(from))
                        continue;
                r = copy_attr(run, from, to);
                if (r >= 0 && st->kind == XF_RENAME && strcasecmp(from, to) != 0)
                        r = delete_attr(run, from);
        }
done:
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        free(names);
        pcre2_match_data_free(md);
        return r;
}

static int assign_var(Run *run, const char *name, const XfTmpl *tmpl, char *text) {
        Var *v = realloc(run->vars, (run->n_vars + 1) * sizeof *v);
        if (!v) {
                free(text);
                return -ENOMEM;
        }
        run->vars = v;
        run->vars[run->n_vars++] = (Var){ name, tmpl, text };
        return 0;
}

static int evaluate_rhs(Run *run, const XfStmt *st, CaValue *ret) {
        _cleanup_free_ char *text = NULL;
        ClassAdExpr *e = NULL;
        CaError err = { 0 };
        int r;

        if (st->expr)
                return eval(run, st->expr, false, ret);
        if ((r = expand_rhs(run, &st->rhs, true, &text)) < 0)
                return r;
        r = classad_expr_parse(text, strlen(text), XF_MODE, &e, &err);
        if (r < 0)
                return r == -ENOMEM ? r : fail(run, -EINVAL, "'%.60s' is not an expression: %s", text, err.msg);
        r = eval(run, e, false, ret);
        classad_expr_free(e);
        return r;
}

static int condition(Run *run, const XfStmt *st, bool *ret) {
        _cleanup_free_ char *text = NULL;
        bool yes;
        int r;

        if (st->defined) {
                if (strncasecmp(st->defined, "MY.", 3) == 0)
                        yes = exists(run, st->defined + 3);
                else
                        yes = find_var(run, st->defined, run->n_vars) || queue_xform_knob(run->x, st->defined);
        } else {
                if ((r = expand_rhs(run, &st->rhs, false, &text)) < 0)
                        return r;
                char *end;
                double d;
                if (!*text || strcasecmp(text, "false") == 0 || strcasecmp(text, "no") == 0 ||
                    strcasecmp(text, "f") == 0)
                        yes = false;
                else if (strcasecmp(text, "true") == 0 || strcasecmp(text, "yes") == 0 || strcasecmp(text, "t") == 0)
                        yes = true;
                else if ((d = strtod(text, &end)), end != text && !*end)
                        yes = d != 0;
                else
                        return fail(run, -EINVAL, "if '%.40s': not true, false, yes, no, a number or defined NAME",
                                    text);
        }
        *ret = yes != st->negate;
        return 0;
}

static int statement(Run *run, const XfStmt *st) {
        _cleanup_free_ char *text = NULL;
        CaValue v = ca_undefined();
        int r;

        switch (st->kind) {
        case XF_ASSIGN:
                return assign_var(run, st->name, &st->rhs, NULL);
        case XF_DEFAULT:
                if (exists(run, st->name) && !is_undefined_literal(run, st->name))
                        return 0;
                __attribute__((fallthrough));
        case XF_SET:
                if (st->expr) {
                        _cleanup_free_ char *t = classad_expr_unparse(st->expr);
                        if (!t)
                                return -ENOMEM;
                        if ((r = charge(run, st->name, strlen(t))) < 0)
                                return r;
                        if ((r = classad_set_expr(run->w, st->name, st->expr)) < 0)
                                return r;
                        undelete(run, st->name);
                        return 0;
                }
                if ((r = expand_rhs(run, &st->rhs, true, &text)) < 0)
                        return r;
                return set_text(run, st->name, text);
        case XF_EVALSET:
        case XF_EVALMACRO:
                if ((r = evaluate_rhs(run, st, &v)) < 0)
                        return r;
                if (!(text = value_text(&v)))
                        r = -ENOMEM;
                else if (st->kind == XF_EVALMACRO)
                        r = assign_var(run, st->name, NULL, TAKE_PTR(text));
                else if ((r = charge(run, st->name, strlen(text))) >= 0 &&
                         (r = classad_set_value(run->w, st->name, &v)) >= 0)
                        undelete(run, st->name);
                ca_value_clear(&v);
                return r;
        case XF_COPY:
        case XF_RENAME:
                if (st->re)
                        return regex_op(run, st);
                if (!exists(run, st->name))
                        return 0;
                if ((r = expand_rhs(run, &st->rhs, false, &text)) < 0 || (r = copy_attr(run, st->name, text)) < 0)
                        return r;
                if (st->kind == XF_RENAME && strcasecmp(st->name, text) != 0)
                        return delete_attr(run, st->name);
                return 0;
        case XF_DELETE:
                if (st->re)
                        return regex_op(run, st);
                return exists(run, st->name) ? delete_attr(run, st->name) : 0;
        default:
                return 0;
        }
}

static bool truthy(const CaValue *v) {
        double d;
        if (v->type == CA_BOOL)
                return v->u.b;
        return (v->type == CA_INT || v->type == CA_REAL) && ca_to_real(v, &d) && d != 0;
}

/* One transform on run->w: *ret_applied whether its REQUIREMENTS held. */
static int run_xform(Run *run, const QueueXform *x, bool *ret_applied) {
        size_t pc = 0;
        int r = 0;

        run->x = x;
        run->st = NULL;
        run->n_vars = 0;
        *ret_applied = false;
        if (x->req) {
                CaValue v;
                if ((r = eval(run, x->req, x->req_target, &v)) < 0)
                        return r;
                bool yes = truthy(&v);
                ca_value_clear(&v);
                if (!yes)
                        return 0;
        }
        *ret_applied = true;
        while (pc < x->n && r >= 0) {
                const XfStmt *st = &x->st[pc];
                bool yes;
                run->st = st;
                switch (st->kind) {
                case XF_IF:
                        for (;;) {
                                if ((r = condition(run, st, &yes)) < 0)
                                        break;
                                if (yes) {
                                        pc = (size_t) (st - x->st) + 1;
                                        break;
                                }
                                const XfStmt *next = &x->st[st->jump];
                                if (next->kind != XF_ELIF) {
                                        pc = st->jump + 1;
                                        break;
                                }
                                st = next;
                                run->st = st;
                        }
                        break;
                case XF_ELIF:
                case XF_ELSE: { /* the branch before ran: on past the endif */
                        size_t j = pc;
                        while (x->st[j].kind != XF_ENDIF)
                                j = x->st[j].jump;
                        pc = j + 1;
                        break;
                }
                default:
                        r = statement(run, st);
                        pc++;
                }
        }
        for (size_t i = 0; i < run->n_vars; i++)
                free(run->vars[i].text);
        run->n_vars = 0;
        return r;
}

static void run_done(Run *run) {
        size_t pos = 0;
        const char *key;
        void *value;
        while (run->deleted && glean_strmap_next(run->deleted, &pos, &key, &value))
                free(value);
        glean_strmap_free(run->deleted);
        for (size_t i = 0; i < run->n_vars; i++)
                free(run->vars[i].text);
        free(run->vars);
        *run = (Run){ 0 };
}

static int run_all(Run *run, const QueueXforms *xs, size_t *ret_applied) {
        size_t applied = 0;
        for (size_t i = 0; i < xs->n; i++) {
                bool yes;
                int r = run_xform(run, xs->x[i], &yes);
                if (r < 0)
                        return r;
                applied += yes;
        }
        if (ret_applied)
                *ret_applied = applied;
        return 0;
}

int queue_xforms_apply(const QueueXforms *xs, ClassAd *ad, size_t *ret_applied, char *why, size_t whylen) {
        Run run = { .w = ad, .why = why, .whylen = whylen };
        int r = xs ? run_all(&run, xs, ret_applied) : 0;
        if (!xs && ret_applied)
                *ret_applied = 0;
        run_done(&run);
        return r;
}

/* ---- a submission: the cluster once, each proc over it ---- */

struct QueueXformSubmit {
        ClassAd *base;      /* the submitted cluster with Owner and User: what the jobs are over */
        ClassAd *cluster;   /* the transformed cluster (a reference) */
        char **changed;     /* the attributes the cluster's transform wrote or deleted */
        size_t n_changed;
        char *cluster_why;  /* when the cluster's transform failed: why (the cluster is the old one) */
        bool per_proc;      /* the transforms read ProcId: every proc is transformed on its own */
};

/* What the queue sets, whatever a transform made of it. */
static bool queue_sets(const char *name) {
        return queue_xform_protected(name) || is_procid(name);
}

void queue_xform_submit_free(QueueXformSubmit *s) {
        if (!s)
                return;
        classad_free(s->base);
        classad_free(s->cluster);
        for (size_t i = 0; i < s->n_changed; i++)
                free(s->changed[i]);
        free(s->changed);
        free(s->cluster_why);
        free(s);
}

static int set_from(ClassAd *dst, const char *name, const ClassAd *src) {
        _cleanup_free_ char *text = src ? classad_unparse_attr(src, name) : NULL;
        if (src && classad_has(src, name) && !text)
                return -ENOMEM;
        return classad_set_expr_text(dst, name, text ? text : "undefined", XF_MODE, NULL);
}

/* The job's view made by the transforms: W (own attributes) over base. */
static int job_over(QueueXformSubmit *s, const ClassAd *own, size_t procid, const char *owner, const char *user,
                    ClassAd **ret) {
        ClassAd *w = NULL;
        int r = own ? classad_copy_own(own, &w) : classad_new(&w);
        if (r >= 0 && (r = classad_set_string(w, "Owner", owner)) >= 0 && (r = classad_set_string(w, "User", user)) >= 0 &&
            (r = classad_set_int(w, "ProcId", (int64_t) procid)) >= 0)
                r = classad_chain(w, s->base);
        if (r < 0) {
                classad_free(w);
                return r;
        }
        *ret = w;
        return 0;
}

static int first_part(const QueueXforms *xs, QueueXformSubmit **state, ClassAd **cluster, size_t first,
                      const char *owner, const char *user, char *why, size_t whylen) {
        QueueXformSubmit *s = calloc(1, sizeof *s);
        ClassAd *w = NULL, *out = NULL;
        Run run = { 0 };
        char cwhy[512] = "";
        int r;

        if (!s)
                return -ENOMEM;
        if ((r = classad_copy(*cluster, &s->base)) < 0 || (r = classad_set_string(s->base, "Owner", owner)) < 0 ||
            (r = classad_set_string(s->base, "User", user)) < 0 || (r = job_over(s, NULL, first, owner, user, &w)) < 0 ||
            (r = classad_copy(*cluster, &out)) < 0)
                goto fail;
        /* The job of a proc without attributes of its own (ProcId first). */
        run = (Run){ .w = w, .why = cwhy, .whylen = sizeof cwhy, .track = true };
        r = run_all(&run, xs, NULL);
        s->per_proc = run.read_procid;
        if (r == -ENOMEM)
                goto fail;
        if (r < 0) {
                /* Only a proc without attributes of its own is this job: it fails then
                 * (each on its own when the failure may depend on its ProcId). */
                if (!s->per_proc && !(s->cluster_why = strdup(cwhy))) {
                        r = -ENOMEM;
                        goto fail;
                }
        } else {
                classad_unchain(w);
                ClassAdIter it = classad_iter(w);
                const char *name;
                while (r >= 0 && classad_iter_next(&it, &name, NULL)) {
                        if (queue_sets(name))
                                continue;
                        char **v = realloc(s->changed, (s->n_changed + 1) * sizeof *v);
                        if (!v || !(v[s->n_changed] = strdup(name))) {
                                if (v)
                                        s->changed = v;
                                r = -ENOMEM;
                                break;
                        }
                        s->changed = v;
                        s->n_changed++;
                        if (is_deleted(&run, name))
                                r = classad_delete(out, name) == -ENOMEM ? -ENOMEM : 0;
                        else
                                r = set_from(out, name, w);
                }
                if (r < 0)
                        goto fail;
        }
        run_done(&run);
        classad_free(w);
        s->cluster = classad_ref(out);
        classad_free(*cluster);
        *cluster = out;
        *state = s;
        return 0;
fail:
        run_done(&run);
        classad_free(w);
        classad_free(out);
        queue_xform_submit_free(s);
        return r == -ENOMEM ? r : glean_why(r, why, whylen, "the cluster's transform failed");
}

/* What proc becomes: its attributes that differ from the new cluster. */
static int one_proc(const QueueXforms *xs, QueueXformSubmit *s, ClassAd **proc, size_t no, const char *owner,
                    const char *user, char *why, size_t whylen) {
        ClassAd *w = NULL, *out = NULL;
        char pwhy[512] = "";
        Run run = { 0 };
        int r = job_over(s, *proc, no, owner, user, &w);

        if (r < 0)
                return r;
        run = (Run){ .w = w, .why = pwhy, .whylen = sizeof pwhy };
        r = run_all(&run, xs, NULL);
        if (r < 0) {
                if (r != -ENOMEM)
                        glean_why(r, why, whylen, "proc %zu: %s", no, pwhy);
                goto done;
        }
        /* Its own attributes from here on. */
        classad_unchain(w);
        if ((r = classad_new(&out)) < 0)
                goto done;
        ClassAdIter it = classad_iter(w);
        const char *name;
        while (r >= 0 && classad_iter_next(&it, &name, NULL)) {
                const CaName *cn = classad_name(name);
                if (!cn) {
                        r = -ENOMEM;
                        break;
                }
                if (queue_sets(name))
                        continue;
                if (is_deleted(&run, name)) {
                        if (classad_has(s->cluster, name))
                                r = classad_set_expr_text(out, name, "undefined", XF_MODE, NULL);
                        continue;
                }
                if (!classad_attr_same(w, s->cluster, cn))
                        r = set_from(out, name, w);
        }
        /* What the cluster's transform changed and this job's did not. */
        for (size_t i = 0; i < s->n_changed && r >= 0; i++) {
                const char *ch = s->changed[i];
                const CaName *cn = classad_name(ch);
                if (!cn) {
                        r = -ENOMEM;
                        break;
                }
                if (classad_has(w, ch) || classad_attr_same(s->base, s->cluster, cn))
                        continue;
                r = classad_has(s->base, ch) ? set_from(out, ch, s->base)
                                             : classad_set_expr_text(out, ch, "undefined", XF_MODE, NULL);
        }
        if (r < 0)
                goto done;
        classad_free(*proc);
        *proc = NULL;
        if (classad_size(out) > 0)
                *proc = TAKE_PTR(out);
done:
        run_done(&run);
        classad_free(w);
        classad_free(out);
        return r;
}

int queue_xform_part(const QueueXforms *xs, QueueXformSubmit **state, ClassAd **cluster, ClassAd **procs, size_t n,
                     size_t first, const char *owner, const char *user, char *why, size_t whylen) {
        int r;

        if (!xs || xs->n == 0)
                return 0;
        if (!*state && (r = first_part(xs, state, cluster, first, owner, user, why, whylen)) < 0)
                return r;
        if (!procs && n > 0 && (*state)->per_proc)
                return glean_why(-EINVAL, why, whylen, "no array to hold the transformed procs in");
        for (size_t i = 0; i < n; i++) {
                if ((!procs || !procs[i]) && !(*state)->per_proc) {
                        if ((*state)->cluster_why)
                                return glean_why(-EINVAL, why, whylen, "proc %zu: %s", first + i,
                                                 (*state)->cluster_why);
                        continue;
                }
                if ((r = one_proc(xs, *state, &procs[i], first + i, owner, user, why, whylen)) < 0)
                        return r;
        }
        return 0;
}

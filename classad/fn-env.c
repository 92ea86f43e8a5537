/* SPDX-License-Identifier: Apache-2.0 */
/* fn-env.c — envV1ToV2, mergeEnvironment, listToArgs, argsToList
 * (compat_classad.cpp, on HTCondor's Env and ArgList syntaxes from env.cpp
 * and condor_arglist.cpp). */
#include "fn-internal.h"

#include <stdlib.h>

/* ---- V2 argument syntax: white space separates, '...' quotes, '' inside
 * quotes is a quote (split_args / append_arg) ---- */

typedef struct Words {
        char **w;
        size_t n, cap;
        bool oom;
} Words;

static void words_add(Words *ws, const char *p, size_t len) {
        if (ws->oom)
                return;
        if (ws->n == ws->cap) {
                size_t cap = ws->cap ? 2 * ws->cap : 8;
                char **nw = realloc(ws->w, cap * sizeof(*nw));
                if (!nw) {
                        ws->oom = true;
                        return;
                }
                ws->w = nw;
                ws->cap = cap;
        }
        char *s = strndup(p, len);
        if (!s) {
                ws->oom = true;
                return;
        }
        ws->w[ws->n++] = s;
}

static void words_free(Words *ws) {
        for (size_t i = 0; i < ws->n; i++)
                free(ws->w[i]);
        free(ws->w);
        *ws = (Words){};
}

static bool is_arg_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* false on an unbalanced quote */
static bool split_args_v2(const char *s, Words *out) {
        CaBuf b = {};
        bool token = false;
        while (*s) {
                if (*s == '\'') {
                        token = true;
                        s++;
                        for (;;) {
                                if (!*s) {
                                        ca_buf_free(&b);
                                        return false;
                                }
                                if (*s == '\'') {
                                        if (s[1] != '\'')
                                                break;
                                        s++; /* '' is a literal quote */
                                }
                                ca_buf_putc(&b, *s++);
                        }
                        s++; /* the closing quote */
                } else if (is_arg_space(*s)) {
                        s++;
                        if (token) {
                                words_add(out, b.p ? b.p : "", b.len);
                                b.len = 0;
                                token = false;
                        }
                } else {
                        token = true;
                        ca_buf_putc(&b, *s++);
                }
        }
        if (token)
                words_add(out, b.p ? b.p : "", b.len);
        bool oom = b.oom;
        ca_buf_free(&b);
        if (oom)
                out->oom = true;
        return true;
}

/* V1 (unknown platform, so Unix style): split at white space, no quoting. */
static void split_args_v1(const char *s, Words *out) {
        while (*s) {
                while (is_arg_space(*s))
                        s++;
                const char *start = s;
                while (*s && !is_arg_space(*s))
                        s++;
                if (s > start)
                        words_add(out, start, (size_t) (s - start));
        }
}

/* append_arg: quote white space and quotes, merging adjacent quoted runs;
 * an empty argument is ''. */
static void append_arg(CaBuf *b, const char *arg) {
        if (b->len)
                ca_buf_putc(b, ' ');
        if (!*arg)
                ca_buf_puts(b, "''");
        for (; *arg; arg++) {
                if (is_arg_space(*arg) || *arg == '\'') {
                        if (b->len && b->p[b->len - 1] == '\'')
                                b->len--; /* reopen the quoted run just closed */
                        else
                                ca_buf_putc(b, '\'');
                        if (*arg == '\'')
                                ca_buf_putc(b, '\'');
                        ca_buf_putc(b, *arg);
                        ca_buf_putc(b, '\'');
                } else {
                        ca_buf_putc(b, *arg);
                }
        }
}

/* ---- environments: a map sorted by name (std::map in env.cpp) ---- */

/* Value of a "$$(...)" entry without '=': printed as the name alone. */
#define NO_VALUE ((char *) 1)

typedef struct Env {
        char **name, **val;
        size_t n, cap;
        bool oom;
} Env;

static void env_free(Env *e) {
        for (size_t i = 0; i < e->n; i++) {
                free(e->name[i]);
                if (e->val[i] != NO_VALUE)
                        free(e->val[i]);
        }
        free(e->name);
        free(e->val);
        *e = (Env){};
}

static void env_set(Env *e, const char *name, size_t nlen, const char *val) {
        char *n = strndup(name, nlen), *v = val == NO_VALUE ? NO_VALUE : strdup(val);
        if (!n || !v) {
                free(n);
                if (v != NO_VALUE)
                        free(v);
                e->oom = true;
                return;
        }
        size_t lo = 0, hi = e->n;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                int c = strcmp(e->name[mid], n);
                if (c == 0) {
                        free(n);
                        if (e->val[mid] != NO_VALUE)
                                free(e->val[mid]);
                        e->val[mid] = v;
                        return;
                }
                if (c < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        if (e->n == e->cap) {
                size_t cap = e->cap ? 2 * e->cap : 8;
                char **nn = realloc(e->name, cap * sizeof(*nn));
                if (nn)
                        e->name = nn;
                char **nv = realloc(e->val, cap * sizeof(*nv));
                if (nv)
                        e->val = nv;
                if (!nn || !nv) {
                        free(n);
                        if (v != NO_VALUE)
                                free(v);
                        e->oom = true;
                        return;
                }
                e->cap = cap;
        }
        memmove(e->name + lo + 1, e->name + lo, (e->n - lo) * sizeof(char *));
        memmove(e->val + lo + 1, e->val + lo, (e->n - lo) * sizeof(char *));
        e->name[lo] = n;
        e->val[lo] = v;
        e->n++;
}

/* SetEnvWithErrorMessage: NAME=VALUE; without '=', only a $$(...) macro
 * is accepted (kept verbatim); an empty name is an error. */
static bool env_set_entry(Env *e, const char *entry) {
        const char *eq = strchr(entry, '=');
        if (!*entry)
                return false;
        if (!eq && strstr(entry, "$$")) {
                env_set(e, entry, strlen(entry), NO_VALUE);
                return true;
        }
        if (!eq || eq == entry)
                return false;
        env_set(e, entry, (size_t) (eq - entry), eq + 1);
        return true;
}

static CaValue env_v2_string(Env *e) {
        CaBuf b = {}, item = {};
        for (size_t i = 0; i < e->n; i++) {
                ca_buf_puts(&item, e->name[i]);
                if (e->val[i] != NO_VALUE) {
                        ca_buf_putc(&item, '=');
                        ca_buf_puts(&item, e->val[i]);
                }
                char *s = ca_buf_steal(&item);
                if (!s) {
                        ca_buf_free(&b);
                        return ca_error();
                }
                append_arg(&b, s);
                free(s);
        }
        return e->oom ? (ca_buf_free(&b), ca_error()) : ca_buf_value(&b);
}

/* MergeFromV1AutoDelim: entries separated by ';' or '\n', leading white
 * space dropped; a first character that is a permitted delimiter
 * (!#$%&*+,-/:;<>?@^`|~ or \x1F) is taken as the delimiter instead. */
static bool env_merge_v1(Env *e, const char *s) {
        char delim = ';';
        if (!*s)
                return true;
        if (*s == delim)
                s++;
        else if (strchr("!#$%&*+,-/:;<>?@^`|~\x1F", *s)) {
                delim = *s;
                s++;
        }
        CaBuf b = {};
        bool ok = true;
        while (*s && ok) {
                while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
                        s++;
                b.len = 0;
                while (*s) {
                        char c = *s++;
                        if (c == '\n' || c == delim)
                                break;
                        ca_buf_putc(&b, c);
                }
                if (b.len == 0)
                        continue;
                ca_buf_putc(&b, '\0');
                ok = !b.oom && env_set_entry(e, b.p);
        }
        ca_buf_free(&b);
        return ok;
}

/* MergeFromV2Raw: V2 argument syntax, each word NAME=VALUE. */
static bool env_merge_v2(Env *e, const char *s) {
        Words ws = {};
        bool ok = split_args_v2(s, &ws) && !ws.oom;
        for (size_t i = 0; ok && i < ws.n; i++)
                ok = env_set_entry(e, ws.w[i]);
        words_free(&ws);
        return ok;
}

/* envV1ToV2(env): the V1 environment string in V2 syntax; UNDEFINED
 * stays UNDEFINED, non-strings and malformed entries are ERROR. */
static void fn_envv1tov2(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        if (!fn_arity(nargs, 1, 1, ret))
                return;
        CaValue v;
        Env e = {};
        ca_eval(ev, args[0], &v);
        if (v.type == CA_UNDEFINED)
                *ret = ca_undefined();
        else if (v.type != CA_STRING || !env_merge_v1(&e, fn_str(&v)))
                *ret = ca_error();
        else
                *ret = env_v2_string(&e);
        env_free(&e);
        ca_value_clear(&v);
}

/* mergeEnvironment(env...): V2 environments merged left to right, later
 * names winning, UNDEFINED arguments skipped, other non-strings and
 * malformed strings ERROR; the result is V2, sorted by name. */
static void fn_mergeenvironment(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        Env e = {};
        bool ok = true;
        for (uint32_t i = 0; i < nargs && ok; i++) {
                CaValue v;
                ca_eval(ev, args[i], &v);
                if (v.type == CA_STRING)
                        ok = env_merge_v2(&e, fn_str(&v));
                else
                        ok = v.type == CA_UNDEFINED;
                ca_value_clear(&v);
        }
        *ret = ok ? env_v2_string(&e) : ca_error();
        env_free(&e);
}

/* The optional syntax version of listToArgs/argsToList: an integer 1 or
 * 2 (default 2); anything else is ERROR. */
static bool args_version(CaEval *ev, const CaNode *const *args, uint32_t nargs, int *ret_vers) {
        *ret_vers = 2;
        if (nargs < 2)
                return true;
        CaValue v;
        ca_eval(ev, args[1], &v);
        bool ok = v.type == CA_INT && (v.u.i == 1 || v.u.i == 2);
        if (ok)
                *ret_vers = (int) v.u.i;
        ca_value_clear(&v);
        return ok;
}

/* listToArgs(list [, version]): a list of strings as one argument string;
 * V1 cannot hold white space inside an argument (ERROR). */
static void fn_listtoargs(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        int vers;
        if (!fn_arity(nargs, 1, 2, ret))
                return;
        if (!args_version(ev, args, nargs, &vers)) {
                *ret = ca_error();
                return;
        }
        CaValue l;
        CaBuf b = {};
        bool ok = true;
        ca_eval(ev, args[0], &l);
        if (l.type != CA_LIST) {
                ca_value_clear(&l);
                *ret = ca_error();
                return;
        }
        uint32_t n = ca_list_len(&l);
        for (uint32_t i = 0; i < n && ok; i++) {
                CaValue e;
                ca_list_elem(ev, &l, i, &e);
                if (e.type != CA_STRING) {
                        ok = false;
                } else if (vers == 1) {
                        if (strpbrk(fn_str(&e), " \t\r\n"))
                                ok = false;
                        else {
                                if (b.len)
                                        ca_buf_putc(&b, ' ');
                                ca_buf_puts(&b, fn_str(&e));
                        }
                } else {
                        append_arg(&b, fn_str(&e));
                }
                ca_value_clear(&e);
        }
        ca_value_clear(&l);
        if (ok)
                *ret = ca_buf_value(&b);
        else {
                ca_buf_free(&b);
                *ret = ca_error();
        }
}

/* argsToList(string [, version]): the arguments of a V2 (default) or V1
 * argument string as a list of strings; an unbalanced quote is ERROR. */
static void fn_argstolist(CaEval *ev, const CaNode *const *args, uint32_t nargs, CaValue *ret) {
        int vers;
        if (!fn_arity(nargs, 1, 2, ret))
                return;
        if (!args_version(ev, args, nargs, &vers)) {
                *ret = ca_error();
                return;
        }
        CaValue v;
        Words ws = {};
        ca_eval(ev, args[0], &v);
        if (v.type != CA_STRING) {
                *ret = ca_error();
        } else {
                bool ok = true;
                if (vers == 1)
                        split_args_v1(fn_str(&v), &ws);
                else
                        ok = split_args_v2(fn_str(&v), &ws);
                if (!ok || ws.oom) {
                        *ret = ca_error();
                } else {
                        size_t *lens = calloc(ws.n ? ws.n : 1, sizeof(size_t));
                        if (!lens)
                                *ret = ca_error();
                        else {
                                for (size_t i = 0; i < ws.n; i++)
                                        lens[i] = strlen(ws.w[i]);
                                *ret = fn_string_list((const char *const *) ws.w, lens, ws.n);
                                free(lens);
                        }
                }
        }
        words_free(&ws);
        ca_value_clear(&v);
}

static const CaFunc fns[] = {
        { "envV1ToV2", fn_envv1tov2, CA_FN_PURE },
        { "mergeEnvironment", fn_mergeenvironment, CA_FN_PURE },
        { "listToArgs", fn_listtoargs, CA_FN_PURE },
        { "argsToList", fn_argstolist, CA_FN_PURE },
};

const CaFnGroup ca_fn_group_env = { fns, ELEMENTSOF(fns) };

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-value.c — submit values that have a syntax of their own:
 * arguments and environment in HTCondor's old and new syntax, sizes with
 * units, signal names, booleans and integer expressions.
 *
 * The rules are condor_submit's (condor_arglist.cpp, env.cpp,
 * parse_int64_bytes): new-syntax arguments are one double-quoted string in
 * which "" is a literal double quote, white space separates arguments and
 * single quotes group them ('' inside single quotes is a literal single
 * quote); old-syntax arguments are separated by white space and may hold
 * \" for a double quote, never a bare one.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "submit-internal.h"

/* A ClassAd attribute name that needs no quoting: [A-Za-z_][A-Za-z0-9_]*. */
bool submit_is_attr_name(const char *n) {
        if (!isalpha((unsigned char) *n) && *n != '_')
                return false;
        for (n++; *n; n++)
                if (!isalnum((unsigned char) *n) && *n != '_')
                        return false;
        return true;
}

extern char **environ;

__attribute__((format(printf, 3, 4)))
static int value_error(char *msg, size_t size, const char *fmt, ...) {
        va_list ap;

        if (msg && size > 0) {
                va_start(ap, fmt);
                vsnprintf(msg, size, fmt, ap);
                va_end(ap);
        }
        return -EINVAL;
}

/* ---- growing buffers and string lists ---- */

static int buf_putc(ConfigBuf *b, char c) {
        return config_buf_add(b, &c, 1);
}

void submit_strv_done(SubmitStrv *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
        *l = (SubmitStrv) {};
}

/* Append s (taken) to l, keeping it NULL-terminated. */
static int strv_push(SubmitStrv *l, char *s) {
        char **v;

        if (!s)
                return -ENOMEM;
        v = realloc(l->v, (l->n + 2) * sizeof(char *));
        if (!v) {
                free(s);
                return -ENOMEM;
        }
        l->v = v;
        l->v[l->n++] = s;
        l->v[l->n] = NULL;
        return 0;
}

static bool is_arg_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---- arguments ---- */

/* Split new-syntax raw text (outer double quotes already removed): white
 * space separates, '...' groups, '' inside quotes is a quote. */
static int split_args_v2(const char *p, SubmitStrv *out, char *msg, size_t msg_size) {
        ConfigBuf b = {};
        bool token = false;
        int r;

        while (*p) {
                if (*p == '\'') {
                        const char *quote = p++;

                        token = true;
                        for (;;) {
                                if (!*p) {
                                        config_buf_done(&b);
                                        return value_error(msg, msg_size,
                                                           "unbalanced single quote starting here: %s", quote);
                                }
                                if (*p == '\'') {
                                        if (p[1] != '\'')
                                                break;
                                        p++; /* '' is a literal quote */
                                }
                                r = buf_putc(&b, *p++);
                                if (r < 0)
                                        goto fail;
                        }
                        p++; /* the closing quote */
                } else if (is_arg_space(*p)) {
                        p++;
                        if (token) {
                                r = strv_push(out, config_buf_steal(&b));
                                if (r < 0)
                                        return r;
                                token = false;
                        }
                } else {
                        token = true;
                        r = buf_putc(&b, *p++);
                        if (r < 0)
                                goto fail;
                }
        }
        if (token)
                return strv_push(out, config_buf_steal(&b));
        config_buf_done(&b);
        return 0;
fail:
        config_buf_done(&b);
        return r;
}

/* A new-syntax value "..." without its quotes, "" unescaped. */
static int v2_unquote(const char *p, char **ret, char *msg, size_t msg_size) {
        ConfigBuf b = {};
        const char *end = NULL;
        int r;

        while (isspace((unsigned char) *p))
                p++;
        p++; /* the opening double quote */
        while (*p) {
                if (*p == '"') {
                        if (p[1] != '"') {
                                end = p++;
                                break;
                        }
                        p++; /* "" is a literal double quote */
                }
                r = buf_putc(&b, *p++);
                if (r < 0) {
                        config_buf_done(&b);
                        return r;
                }
        }
        if (!end) {
                config_buf_done(&b);
                return value_error(msg, msg_size, "unterminated double quote");
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p) {
                config_buf_done(&b);
                return value_error(msg, msg_size,
                                   "unexpected characters after the closing double quote: %s "
                                   "(write a double quote inside the value as \"\")", end);
        }
        *ret = config_buf_steal(&b);
        return *ret ? 0 : -ENOMEM;
}

static bool is_new_syntax(const char *value) {
        while (isspace((unsigned char) *value))
                value++;
        return *value == '"';
}

int submit_args_parse(const char *value, SubmitStrv *ret, bool *ret_new_syntax, char *msg, size_t msg_size) {
        SubmitStrv args = {};
        ConfigBuf b = {};
        bool token = false;
        int r;

        if (is_new_syntax(value)) {
                _cleanup_config_free_ char *raw = NULL;

                r = v2_unquote(value, &raw, msg, msg_size);
                if (r < 0)
                        return r;
                r = split_args_v2(raw, &args, msg, msg_size);
                if (r < 0) {
                        submit_strv_done(&args);
                        return r;
                }
                *ret = args;
                *ret_new_syntax = true;
                return 0;
        }

        /* Old syntax: \" is a double quote, a bare one an error. */
        for (const char *p = value; *p; p++) {
                if (*p == '"') {
                        r = value_error(msg, msg_size,
                                        "double quote in old-syntax arguments: %s (write \\\" for a "
                                        "double quote, or put the arguments in double quotes for the new syntax)", p);
                        goto fail;
                }
                if (is_arg_space(*p)) {
                        if (token) {
                                r = strv_push(&args, config_buf_steal(&b));
                                if (r < 0)
                                        goto fail;
                                token = false;
                        }
                        continue;
                }
                if (p[0] == '\\' && p[1] == '"')
                        p++;
                token = true;
                r = buf_putc(&b, *p);
                if (r < 0)
                        goto fail;
        }
        if (token) {
                r = strv_push(&args, config_buf_steal(&b));
                if (r < 0)
                        goto fail;
        }
        *ret = args;
        *ret_new_syntax = false;
        return 0;
fail:
        config_buf_done(&b);
        submit_strv_done(&args);
        return r;
}

/* One argument in new syntax, as HTCondor's append_arg() writes it: white
 * space and single quotes go inside single quotes, and a quoted section
 * that directly follows another is merged with it. */
static int append_arg_v2(ConfigBuf *b, const char *arg) {
        int r = 0;

        if (b->len > 0)
                r = buf_putc(b, ' ');
        if (r < 0 || !*arg)
                return r < 0 ? r : config_buf_adds(b, "''");
        for (; *arg && r >= 0; arg++) {
                if (!is_arg_space(*arg) && *arg != '\'') {
                        r = buf_putc(b, *arg);
                        continue;
                }
                if (b->len > 0 && b->s[b->len - 1] == '\'')
                        b->s[--b->len] = '\0'; /* reopen the previous section */
                else
                        r = buf_putc(b, '\'');
                if (r >= 0 && *arg == '\'')
                        r = buf_putc(b, '\''); /* '' inside quotes */
                if (r >= 0)
                        r = buf_putc(b, *arg);
                if (r >= 0)
                        r = buf_putc(b, '\'');
        }
        return r;
}

/* The words of args joined by spaces (new syntax: quoted as needed). */
static int join(const SubmitStrv *args, bool v2, char **ret) {
        ConfigBuf b = {};
        char *s;
        int r = 0;

        for (size_t i = 0; i < args->n && r >= 0; i++) {
                if (v2)
                        r = append_arg_v2(&b, args->v[i]);
                else {
                        if (i > 0)
                                r = buf_putc(&b, ' ');
                        if (r >= 0)
                                r = config_buf_adds(&b, args->v[i]);
                }
        }
        if (r < 0) {
                config_buf_done(&b);
                return r;
        }
        s = config_buf_steal(&b);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int submit_args_join_v2(const SubmitStrv *args, char **ret) {
        return join(args, true, ret);
}

int submit_args_join_v1(const SubmitStrv *args, char **ret) {
        return join(args, false, ret);
}

/* ---- environment ---- */

/* Set NAME=value in env (entry taken), replacing NAME in place. */
static int env_set(SubmitStrv *env, char *entry, char *msg, size_t msg_size) {
        const char *eq;
        size_t name_len;

        if (!entry)
                return -ENOMEM;
        eq = strchr(entry, '=');
        if (!eq || eq == entry) {
                int r = value_error(msg, msg_size, eq ? "missing variable name in '%s'"
                                                      : "missing '=' after environment variable '%s'", entry);
                free(entry);
                return r;
        }
        name_len = (size_t) (eq - entry);
        for (size_t i = 0; i < env->n; i++)
                if (strncmp(env->v[i], entry, name_len + 1) == 0) {
                        free(env->v[i]);
                        env->v[i] = entry;
                        return 0;
                }
        return strv_push(env, entry);
}

int submit_env_parse(const char *value, SubmitStrv *ret, char *msg, size_t msg_size) {
        SubmitStrv env = {};
        int r;

        if (is_new_syntax(value)) {
                _cleanup_config_free_ char *raw = NULL;
                SubmitStrv words = {};

                r = v2_unquote(value, &raw, msg, msg_size);
                if (r < 0)
                        return r;
                r = split_args_v2(raw, &words, msg, msg_size);
                for (size_t i = 0; r >= 0 && i < words.n; i++) {
                        r = env_set(&env, words.v[i], msg, msg_size);
                        words.v[i] = NULL;
                }
                submit_strv_done(&words);
        } else {
                /* Old syntax: NAME=value entries separated by ';'. */
                const char *p = value;

                r = 0;
                while (r >= 0 && *p) {
                        size_t n;

                        while (is_arg_space(*p))
                                p++;
                        n = strcspn(p, ";");
                        if (n > 0)
                                r = env_set(&env, strndup(p, n), msg, msg_size);
                        p += n;
                        if (*p == ';')
                                p++;
                }
        }
        if (r < 0) {
                submit_strv_done(&env);
                return r;
        }
        *ret = env;
        return 0;
}

int submit_env_import(SubmitStrv *env) {
        for (char **e = environ; e && *e; e++) {
                const char *eq = strchr(*e, '=');
                bool present = false;

                /* Like condor_submit: skip what the new syntax cannot carry. */
                if (!eq || eq == *e || strpbrk(*e, "\n\r"))
                        continue;
                for (size_t i = 0; i < env->n && !present; i++)
                        present = strncmp(env->v[i], *e, (size_t) (eq - *e) + 1) == 0;
                if (!present && strv_push(env, strdup(*e)) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* ---- sizes ---- */

int submit_parse_size(const char *text, int64_t base, int64_t *ret) {
        const char *p = text, *start;
        double whole = 0, fract = 0, bytes;
        int64_t mult;
        bool negative = false;

        while (isspace((unsigned char) *p))
                p++;
        if (*p == '+' || *p == '-') {
                negative = *p == '-';
                p++;
        }
        start = p;
        while (isdigit((unsigned char) *p))
                whole = whole * 10 + (*p++ - '0');
        if (*p == '.') {
                double scale = 0.1;

                p++;
                while (isdigit((unsigned char) *p)) {
                        fract += (*p++ - '0') * scale;
                        scale /= 10;
                }
        }
        if (p == start || (p == start + 1 && *start == '.'))
                return 0; /* not a number: an expression */

        while (isspace((unsigned char) *p))
                p++;
        switch (*p) {
        case '\0': mult = base; break;
        case 'k': case 'K': mult = INT64_C(1) << 10; break;
        case 'm': case 'M': mult = INT64_C(1) << 20; break;
        case 'g': case 'G': mult = INT64_C(1) << 30; break;
        case 't': case 'T': mult = INT64_C(1) << 40; break;
        default: return 0;
        }
        if (*p) {
                p++;
                if (*p == 'b' || *p == 'B')
                        p++;
                while (isspace((unsigned char) *p))
                        p++;
                if (*p)
                        return 0;
        }
        if (negative)
                return whole + fract > 0 ? -EINVAL : (*ret = 0, 1);

        bytes = (whole + fract) * (double) mult + (double) (base - 1);
        if (!(bytes < 9.2e18))
                return -ERANGE;
        *ret = (int64_t) bytes / base;
        return 1;
}

/* ---- signals ---- */

static const struct {
        const char *name;
        int number;
} signals[] = {
        { "SIGHUP", SIGHUP },   { "SIGINT", SIGINT },       { "SIGQUIT", SIGQUIT }, { "SIGILL", SIGILL },
        { "SIGTRAP", SIGTRAP }, { "SIGABRT", SIGABRT },     { "SIGBUS", SIGBUS },   { "SIGFPE", SIGFPE },
        { "SIGKILL", SIGKILL }, { "SIGUSR1", SIGUSR1 },     { "SIGSEGV", SIGSEGV }, { "SIGUSR2", SIGUSR2 },
        { "SIGPIPE", SIGPIPE }, { "SIGALRM", SIGALRM },     { "SIGTERM", SIGTERM }, { "SIGCHLD", SIGCHLD },
        { "SIGCONT", SIGCONT }, { "SIGSTOP", SIGSTOP },     { "SIGTSTP", SIGTSTP }, { "SIGTTIN", SIGTTIN },
        { "SIGTTOU", SIGTTOU }, { "SIGURG", SIGURG },       { "SIGXCPU", SIGXCPU }, { "SIGXFSZ", SIGXFSZ },
        { "SIGVTALRM", SIGVTALRM }, { "SIGPROF", SIGPROF }, { "SIGWINCH", SIGWINCH }, { "SIGIO", SIGIO },
        { "SIGPWR", SIGPWR },   { "SIGSYS", SIGSYS },
};

const char *submit_signal_name(const char *text) {
        size_t n = sizeof(signals) / sizeof(signals[0]);
        char *end;

        if (isdigit((unsigned char) *text)) {
                long v;

                errno = 0;
                v = strtol(text, &end, 10);
                if (errno != 0 || *end)
                        return NULL;
                for (size_t i = 0; i < n; i++)
                        if (signals[i].number == v)
                                return signals[i].name;
                return NULL;
        }
        for (size_t i = 0; i < n; i++)
                if (strcasecmp(text, signals[i].name) == 0 || strcasecmp(text, signals[i].name + 3) == 0)
                        return signals[i].name;
        return NULL;
}

/* ---- booleans and numbers ---- */

/* Evaluate text as a ClassAd expression without an ad. */
static int eval_text(const char *text, CaValue *ret) {
        _cleanup_(submit_expr_freep) ClassAdExpr *e = NULL;
        CaError err = {};
        int r;

        r = classad_expr_parse(text, strlen(text), CA_MODE_OLD, &e, &err);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;
        return classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, ret);
}

int submit_parse_bool(const char *text, bool *ret) {
        static const char *const yes[] = { "true", "yes", "t", "y" }, *const no[] = { "false", "no", "f", "n" };
        CaValue v = ca_undefined();
        int r;

        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
                if (strcasecmp(text, yes[i]) == 0)
                        return *ret = true, 0;
                if (strcasecmp(text, no[i]) == 0)
                        return *ret = false, 0;
        }
        r = eval_text(text, &v);
        if (r < 0)
                return r;
        switch (v.type) {
        case CA_BOOL: *ret = v.u.b; break;
        case CA_INT: *ret = v.u.i != 0; break;
        case CA_REAL: *ret = v.u.r != 0; break;
        default: r = -EINVAL;
        }
        ca_value_clear(&v);
        return r;
}

int submit_eval_number(const char *text, double *ret, bool *ret_is_number) {
        CaValue v = ca_undefined();
        int r;

        r = eval_text(text, &v);
        if (r < 0)
                return r;
        if (v.type == CA_INT) {
                *ret = (double) v.u.i;
                *ret_is_number = true;
        } else if (v.type == CA_REAL) {
                *ret = v.u.r;
                *ret_is_number = true;
        } else
                *ret_is_number = false;
        ca_value_clear(&v);
        return 0;
}

int submit_eval_int(const char *text, int64_t *ret) {
        CaValue v = ca_undefined();
        int r;

        r = eval_text(text, &v);
        if (r < 0)
                return r;
        if (v.type == CA_INT)
                *ret = v.u.i;
        else if (v.type == CA_REAL && isfinite(v.u.r) && v.u.r == floor(v.u.r) && fabs(v.u.r) < 9.2e18)
                *ret = (int64_t) v.u.r;
        else
                r = -EINVAL;
        ca_value_clear(&v);
        return r;
}

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
 * \" for a double quote, never a bare one. The syntaxes inside the outer
 * double quotes, and the form the job ad holds, are argsyntax.c's.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
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

/* ---- arguments ---- */

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
                r = config_buf_addc(&b, *p++);
                if (r < 0) {
                        config_buf_done(&b);
                        return r;
                }
        }
        if (!end) {
                config_buf_done(&b);
                return config_msg_error(msg, msg_size, "unterminated double quote");
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p) {
                config_buf_done(&b);
                return config_msg_error(msg, msg_size,
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

/* A new-syntax value: the text inside its double quotes, split into *ret
 * by split (config_args_split_v2 or config_env_split_v2). */
static int parse_v2(const char *value, int (*split)(const char *, ConfigStrv *, char *, size_t), ConfigStrv *ret,
                    char *msg, size_t msg_size) {
        _cleanup_config_free_ char *raw = NULL;
        ConfigStrv l = {};
        int r;

        r = v2_unquote(value, &raw, msg, msg_size);
        if (r >= 0)
                r = split(raw, &l, msg, msg_size);
        if (r < 0) {
                config_strv_done(&l);
                return r;
        }
        *ret = l;
        return 0;
}

int submit_args_parse(const char *value, ConfigStrv *ret, bool *ret_new_syntax, char *msg, size_t msg_size) {
        ConfigStrv args = {};
        ConfigBuf b = {};
        bool token = false;
        int r;

        if (is_new_syntax(value)) {
                r = parse_v2(value, config_args_split_v2, ret, msg, msg_size);
                if (r >= 0)
                        *ret_new_syntax = true;
                return r;
        }

        /* Old syntax: \" is a double quote, a bare one an error. */
        for (const char *p = value; *p; p++) {
                if (*p == '"') {
                        r = config_msg_error(msg, msg_size,
                                             "double quote in old-syntax arguments: %s (write \\\" for a "
                                             "double quote, or put the arguments in double quotes for the new syntax)",
                                             p);
                        goto fail;
                }
                if (config_is_arg_space(*p)) {
                        if (token) {
                                r = config_strv_push(&args, config_buf_steal(&b));
                                if (r < 0)
                                        goto fail;
                                token = false;
                        }
                        continue;
                }
                if (p[0] == '\\' && p[1] == '"')
                        p++;
                token = true;
                r = config_buf_addc(&b, *p);
                if (r < 0)
                        goto fail;
        }
        if (token) {
                r = config_strv_push(&args, config_buf_steal(&b));
                if (r < 0)
                        goto fail;
        }
        *ret = args;
        *ret_new_syntax = false;
        return 0;
fail:
        config_buf_done(&b);
        config_strv_done(&args);
        return r;
}

/* ---- environment ---- */

int submit_env_parse(const char *value, ConfigStrv *ret, char *msg, size_t msg_size) {
        ConfigStrv env = {};
        int r;

        if (is_new_syntax(value))
                return parse_v2(value, config_env_split_v2, ret, msg, msg_size);
        r = config_env_split_v1(value, ";", &env, msg, msg_size); /* NAME=value;NAME=value */
        if (r < 0) {
                config_strv_done(&env);
                return r;
        }
        *ret = env;
        return 0;
}

int submit_env_import(ConfigStrv *env) {
        for (char **e = environ; e && *e; e++) {
                const char *eq = strchr(*e, '=');

                /* Like condor_submit: skip what the new syntax cannot carry. */
                if (!eq || eq == *e || strpbrk(*e, "\n\r"))
                        continue;
                if (config_env_find(env, *e, (size_t) (eq - *e)) < 0 && config_strv_push(env, strdup(*e)) < 0)
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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * argsyntax.c — HTCondor's argument and environment syntaxes (see
 * argsyntax.h): splitting them into lists and joining lists back.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argsyntax.h"
#include "config-internal.h"

/* ---- lists ---- */

int config_strv_push(ConfigStrv *l, char *s) {
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

void config_strv_done(ConfigStrv *l) {
        for (size_t i = 0; i < l->n; i++)
                free(l->v[i]);
        free(l->v);
        *l = (ConfigStrv) {};
}

bool config_is_arg_space(char c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---- arguments ---- */

int config_args_split_v2(const char *raw, ConfigStrv *args, char *msg, size_t msg_size) {
        ConfigBuf b = {};
        bool token = false;
        int r = 0;

        for (const char *p = raw; r >= 0 && *p; p++) {
                if (*p == '\'') {
                        const char *quote = p;

                        token = true;
                        /* up to the closing quote; '' is a literal quote */
                        for (p++; r >= 0 && !(p[0] == '\'' && p[1] != '\''); p++) {
                                if (!*p) {
                                        r = config_msg_error(msg, msg_size,
                                                             "unbalanced single quote starting here: %s", quote);
                                        break;
                                }
                                if (*p == '\'')
                                        p++;
                                r = config_buf_addc(&b, *p);
                        }
                } else if (config_is_arg_space(*p)) {
                        if (token)
                                r = config_strv_push(args, config_buf_steal(&b));
                        token = false;
                } else {
                        token = true;
                        r = config_buf_addc(&b, *p);
                }
        }
        if (r >= 0 && token)
                r = config_strv_push(args, config_buf_steal(&b));
        config_buf_done(&b);
        return r;
}

int config_args_split_v1(const char *raw, ConfigStrv *args) {
        int r = 0;

        for (const char *p = raw; *p && r >= 0;) {
                size_t n;

                while (config_is_arg_space(*p))
                        p++;
                for (n = 0; p[n] && !config_is_arg_space(p[n]); n++)
                        ;
                if (n > 0)
                        r = config_strv_push(args, strndup(p, n));
                p += n;
        }
        return r;
}

/* One argument in new syntax, as HTCondor's append_arg() writes it: white
 * space and single quotes go inside single quotes, and a quoted section
 * that directly follows another is merged with it. */
static int append_arg_v2(ConfigBuf *b, const char *arg) {
        int r = 0;

        if (b->len > 0)
                r = config_buf_addc(b, ' ');
        if (r < 0 || !*arg)
                return r < 0 ? r : config_buf_adds(b, "''");
        for (; *arg && r >= 0; arg++) {
                if (!config_is_arg_space(*arg) && *arg != '\'') {
                        r = config_buf_addc(b, *arg);
                        continue;
                }
                if (b->len > 0 && b->s[b->len - 1] == '\'')
                        b->s[--b->len] = '\0'; /* reopen the previous section */
                else
                        r = config_buf_addc(b, '\'');
                if (r >= 0 && *arg == '\'')
                        r = config_buf_addc(b, '\''); /* '' inside quotes */
                if (r >= 0)
                        r = config_buf_addc(b, *arg);
                if (r >= 0)
                        r = config_buf_addc(b, '\'');
        }
        return r;
}

/* The words of args joined by spaces (new syntax: quoted as needed). */
static int join(const ConfigStrv *args, bool v2, char **ret) {
        ConfigBuf b = {};
        char *s;
        int r = 0;

        for (size_t i = 0; i < args->n && r >= 0; i++) {
                if (v2)
                        r = append_arg_v2(&b, args->v[i]);
                else {
                        if (i > 0)
                                r = config_buf_addc(&b, ' ');
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

int config_args_join_v2(const ConfigStrv *args, char **ret) {
        return join(args, true, ret);
}

int config_args_join_v1(const ConfigStrv *args, char **ret) {
        return join(args, false, ret);
}

/* ---- environment ---- */

ssize_t config_env_find(const ConfigStrv *env, const char *name, size_t name_len) {
        for (size_t i = 0; i < env->n; i++)
                if (strncmp(env->v[i], name, name_len) == 0 && env->v[i][name_len] == '=')
                        return (ssize_t) i;
        return -1;
}

int config_env_set(ConfigStrv *env, char *entry, char *msg, size_t msg_size) {
        const char *eq;
        ssize_t i;

        if (!entry)
                return -ENOMEM;
        eq = strchr(entry, '=');
        if (!eq || eq == entry) {
                int r = config_msg_error(msg, msg_size, eq ? "missing variable name in '%s'"
                                                           : "missing '=' after environment variable '%s'", entry);
                free(entry);
                return r;
        }
        i = config_env_find(env, entry, (size_t) (eq - entry));
        if (i >= 0) {
                free(env->v[i]);
                env->v[i] = entry;
                return 0;
        }
        return config_strv_push(env, entry);
}

int config_env_split_v2(const char *raw, ConfigStrv *env, char *msg, size_t msg_size) {
        ConfigStrv words = {};
        int r;

        r = config_args_split_v2(raw, &words, msg, msg_size);
        for (size_t i = 0; r >= 0 && i < words.n; i++) {
                r = config_env_set(env, words.v[i], msg, msg_size);
                words.v[i] = NULL; /* taken */
        }
        config_strv_done(&words); /* the words left after an error */
        return r;
}

int config_env_split_v1(const char *raw, const char *seps, ConfigStrv *env, char *msg, size_t msg_size) {
        int r = 0;

        for (const char *p = raw; *p && r >= 0;) {
                size_t n;

                while (config_is_arg_space(*p))
                        p++;
                n = strcspn(p, seps);
                if (n > 0)
                        r = config_env_set(env, strndup(p, n), msg, msg_size);
                p += n;
                if (*p)
                        p++;
        }
        return r;
}

int config_env_split_ad_v1(const char *raw, char delim, ConfigStrv *env, char *msg, size_t msg_size) {
        char seps[3] = { delim ? delim : ';', '\n', '\0' };

        /* A leading delimiter character names it (a leading delim is an
         * empty entry). */
        if (*raw == ';' || *raw == '|')
                seps[0] = *raw;
        return config_env_split_v1(raw, seps, env, msg, msg_size);
}

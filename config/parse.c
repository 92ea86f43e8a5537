/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parse.c — the lines and statements of a configuration text:
 *
 *   NAME = value           (NAME : value is accepted too, as HTCondor does)
 *   NAME @=tag             a value of several lines, up to a line "@tag"
 *   include [ifexist] : path
 *   include : COMMAND |    include [ifexist] command [into FILE] : COMMAND
 *   use CATEGORY : NAME[(ARGS)][, NAME...]   metaknobs (metaknobs.c)
 *   if / elif / else / endif   (cond.c)
 *   error : message        refuse the configuration
 *   warning : message      recorded (config_warnings) and read on
 *   # comment, blank line, [Section] line (ignored, as HTCondor does)
 *
 * Lines are trimmed; a line ending in '\' continues on the next one; a
 * line starting with '#' is a comment, also inside a continuation (where
 * it is skipped and the continuation goes on) and also when it ends in
 * '\' (which then does not continue it).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* ---- lines ---- */

bool config_reader_physical(ConfigReader *rd, const char **ret, size_t *ret_len) {
        const char *s = rd->text + rd->pos, *nl;
        size_t n;

        if (!*s)
                return false;
        nl = strchr(s, '\n');
        n = nl ? (size_t) (nl - s) : strlen(s);
        rd->pos += n + (nl ? 1 : 0);
        rd->lineno++;
        while (n > 0 && isspace((unsigned char) s[n - 1]))
                n--;
        while (n > 0 && isspace((unsigned char) *s)) {
                s++;
                n--;
        }
        *ret = s;
        *ret_len = n;
        return true;
}

int config_reader_logical(ConfigReader *rd, ConfigBuf *line, int *ret_lineno) {
        const char *p;
        size_t n;
        int r;

        line->len = 0;
        do {
                if (!config_reader_physical(rd, &p, &n))
                        return 0;
        } while (n == 0 || p[0] == '#');
        *ret_lineno = rd->lineno;

        for (;;) {
                bool more = n > 0 && p[n - 1] == '\\';

                r = config_buf_add(line, p, more ? n - 1 : n);
                if (r < 0)
                        return r;
                if (!more)
                        return 1;
                do {
                        if (!config_reader_physical(rd, &p, &n))
                                return 1;
                } while (n > 0 && p[0] == '#');
        }
}

/* ---- helpers ---- */

typedef struct HereDoc {
        char *name; /* NULL: not inside NAME @=tag */
        char *tag;
        int line;
        ConfigBuf body;
} HereDoc;

static void here_done(HereDoc *h) {
        free(h->name);
        free(h->tag);
        config_buf_done(&h->body);
        *h = (HereDoc){};
}

static int line_of(const ConfigLoad *ld, int lineno) {
        return ld->line_offset ? ld->line_offset : lineno;
}

/* Expand text against what has been read so far (include paths, error
 * messages, if conditions). */
static int expand_now(ConfigLoad *ld, const char *text, int at, char **ret) {
        ConfigError e = {};
        int r;

        r = config_expand(ld->cfg, text, ret, &e);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s", e.msg);
        return 0;
}

static int assign(ConfigLoad *ld, const char *name, const char *value, int at) {
        _cleanup_config_free_ char *v = NULL;
        ConfigError e = {};
        int r;

        r = config_resolve_self(ld->cfg, name, value, &v, &e);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s: %s", name, e.msg);
        /* $RANDOM_*(): drawn once, now (macrofn.c) */
        _cleanup_config_free_ char *drawn = NULL;
        r = config_resolve_random(ld->cfg, v, &drawn, &e);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s: %s", name, e.msg);
        r = config_define(ld->cfg, name, drawn, ld->file, at);
        if (r < 0)
                return config_error(ld->err, ld->file, at, r, "%s: %s", name, strerror(-r));
        return 0;
}

static int check_name(ConfigLoad *ld, const char *name, int at) {
        if (config_is_valid_name(name, strlen(name)))
                return 0;
        if (strlen(name) > CONFIG_MAX_NAME)
                return config_error(ld->err, ld->file, at, -EINVAL, "a name is at most %d characters long",
                                    CONFIG_MAX_NAME);
        return config_error(ld->err, ld->file, at, -EINVAL,
                            "'%.64s' is not a valid name (letters, digits, '_', '.' and '/')", name);
}

/* ---- statements ---- */

/* use CATEGORY : NAME[(ARGS)] [, NAME[(ARGS)] ...]: metaknobs.c. */
static int use_templates(ConfigLoad *ld, const char *category, const char *names, int at) {
        return config_use(ld, category, names, at);
}

/* include [ifexist] : FILE, include : COMMAND |,
 * include [ifexist] command|output [into FILE] : COMMAND. opts: the words
 * between include and ':'. */
static int include_statement(ConfigLoad *ld, char *opts, const char *rhs, int at) {
        _cleanup_config_free_ char *text = NULL, *into = NULL;
        bool if_exists = false, command = false;
        char *w, *save = NULL, *target;
        size_t n;
        int r;

        for (w = strtok_r(opts, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                if (!if_exists && !command && !into &&
                    (strcasecmp(w, "ifexist") == 0 || strcasecmp(w, "ifexists") == 0))
                        if_exists = true;
                else if (!command && (strcasecmp(w, "command") == 0 || strcasecmp(w, "output") == 0))
                        command = true;
                else if (command && !into && strcasecmp(w, "into") == 0) {
                        w = strtok_r(NULL, " \t", &save);
                        if (!w)
                                return config_error(ld->err, ld->file, at, -EINVAL,
                                                    "include command into: expected a file name after into");
                        r = expand_now(ld, w, at, &into);
                        if (r < 0)
                                return r;
                        if (!config_strip(into)[0])
                                return config_error(ld->err, ld->file, at, -EINVAL,
                                                    "include command into: the file name '%.64s' expands to nothing",
                                                    w);
                        if (config_strip(into)[strlen(config_strip(into)) - 1] == '|')
                                return config_error(ld->err, ld->file, at, -EINVAL,
                                                    "include command into: the destination may not be a command");
                } else
                        return config_error(ld->err, ld->file, at, -EINVAL,
                                            "include: unknown option '%.64s' (include [ifexist] : FILE, include : "
                                            "COMMAND |, include [ifexist] command [into FILE] : COMMAND)",
                                            w);
        }
        r = expand_now(ld, rhs, at, &text);
        if (r < 0)
                return r;
        target = config_strip(text);
        n = strlen(target);
        if (n > 0 && target[n - 1] == '|') {
                command = true;
                while (n > 0 && (target[n - 1] == '|' || target[n - 1] == ' ' || target[n - 1] == '\t'))
                        target[--n] = '\0';
        }
        if (!target[0])
                return config_error(ld->err, ld->file, at, -EINVAL, "include: no %s", command ? "command" : "file name");
        if (command)
                return config_include_command(ld, target, into ? config_strip(into) : NULL, if_exists, at);
        return config_include(ld, target, if_exists, at);
}

/* Statements with ':' and a keyword: include, use, error, warning.
 * Returns 1 if handled. */
static int keyword_statement(ConfigLoad *ld, const char *word, char *rest, const char *rhs, int at) {
        const char *kw = word[0] == '@' ? word + 1 : word;
        _cleanup_config_free_ char *text = NULL;
        int r;

        if (strcasecmp(kw, "include") == 0) {
                r = include_statement(ld, rest, rhs, at);
                return r < 0 ? r : 1;
        }
        if (strcasecmp(kw, "use") == 0) {
                r = use_templates(ld, rest, rhs, at);
                return r < 0 ? r : 1;
        }
        if (strcasecmp(kw, "error") == 0) {
                r = expand_now(ld, rhs, at, &text);
                if (r < 0)
                        return r;
                return config_error(ld->err, ld->file, at, -EINVAL, "error: %s", text);
        }
        if (strcasecmp(kw, "warning") == 0) {
                r = expand_now(ld, rhs, at, &text);
                if (r < 0)
                        return r;
                r = config_warn(ld->cfg, ld->file, at, "warning: %s", config_strip(text));
                if (r < 0)
                        return config_error(ld->err, ld->file, at, r, "%s",
                                            r == -E2BIG ? "more than 4096 warnings" : "out of memory");
                return 1;
        }
        return 0;
}

static int statement(ConfigLoad *ld, ConfigIfStack *st, HereDoc *here, char *line, int lineno) {
        int at = line_of(ld, lineno), r;
        char *lhs, *rhs, *word, *rest;
        size_t i;
        char op;

        if (here->name) {
                if (line[0] == '@' && strcmp(line + 1, here->tag) == 0) {
                        _cleanup_config_free_ char *body = config_buf_steal(&here->body);

                        if (!body)
                                return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
                        r = assign(ld, here->name, body, here->line);
                        here_done(here);
                        return r;
                }
                if (here->body.len > 0)
                        r = config_buf_add(&here->body, "\n", 1);
                else
                        r = 0;
                if (r >= 0)
                        r = config_buf_adds(&here->body, line);
                if (r < 0)
                        return config_error(ld->err, ld->file, here->line, r, "the value of %s is longer than %u bytes",
                                            here->name, CONFIG_MAX_VALUE);
                return 0;
        }

        r = config_cond_line(ld, st, line, at);
        if (r != 0)
                return r < 0 ? r : 0;
        if (!config_cond_active(st))
                return 0;

        for (i = 0; line[i] && line[i] != '=' && line[i] != ':' && !(line[i] == '@' && line[i + 1] == '='); i++)
                ;
        if (!line[i]) {
                if (line[0] == '[')
                        return 0; /* [Section] */
                return config_error(ld->err, ld->file, at, -EINVAL, "expected NAME = value, not '%.64s'", line);
        }
        op = line[i];
        line[i] = '\0';
        rhs = config_strip(line + i + (op == '@' ? 2 : 1));
        lhs = config_strip(line);
        if (!lhs[0])
                return config_error(ld->err, ld->file, at, -EINVAL, "missing name before '%s'",
                                    op == '@' ? "@=" : op == '=' ? "=" : ":");
        word = lhs;
        for (rest = lhs; *rest && !isspace((unsigned char) *rest); rest++)
                ;
        if (*rest)
                *rest++ = '\0';
        rest = config_strip(rest);

        if (op == ':') {
                r = keyword_statement(ld, word, rest, rhs, at);
                if (r != 0)
                        return r < 0 ? r : 0;
        }
        if (rest[0])
                return config_error(ld->err, ld->file, at, -EINVAL, "unexpected '%.64s' between %.64s and '%s'",
                                    rest, word, op == '@' ? "@=" : op == '=' ? "=" : ":");
        r = check_name(ld, word, at);
        if (r < 0)
                return r;

        if (op == '@') {
                if (!rhs[0] || strpbrk(rhs, " \t"))
                        return config_error(ld->err, ld->file, at, -EINVAL,
                                            "%s @= needs one word to end the value with: %s @=end ... @end", word, word);
                here->name = strdup(word);
                here->tag = strdup(rhs);
                here->line = at;
                if (!here->name || !here->tag)
                        return config_error(ld->err, ld->file, at, -ENOMEM, "out of memory");
                return 0;
        }
        return assign(ld, word, rhs, at);
}

int config_parse_text(ConfigLoad *ld, const char *text) {
        ConfigReader rd = { .text = text };
        ConfigIfStack st = {};
        HereDoc here = {};
        ConfigBuf line = {};
        int lineno = 0, r;

        for (;;) {
                r = config_reader_logical(&rd, &line, &lineno);
                if (r < 0) {
                        r = config_error(ld->err, ld->file, line_of(ld, rd.lineno), r,
                                         "line longer than %u bytes", CONFIG_MAX_VALUE);
                        break;
                }
                if (r == 0)
                        break;
                r = statement(ld, &st, &here, line.s, lineno);
                if (r < 0)
                        break;
        }
        if (r >= 0 && here.name)
                r = config_error(ld->err, ld->file, here.line, -EINVAL, "no line '@%s' ends the value of %s",
                                 here.tag, here.name);
        if (r >= 0 && st.depth > 0)
                r = config_error(ld->err, ld->file, line_of(ld, st.lines[st.depth]), -EINVAL,
                                 "if without endif");
        here_done(&here);
        config_buf_done(&line);
        return r < 0 ? r : 0;
}

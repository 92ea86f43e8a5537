/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-queue.c — the arguments of a queue statement, as condor_submit
 * reads them (SubmitForeachArgs::parse_queue_args):
 *
 *     queue [COUNT] [VAR[,VAR...] in|from [SLICE] ITEMS]
 *
 * COUNT is a ClassAd expression giving a whole number (default 1). With
 * `in`, ITEMS is a list separated by commas and/or white space; with
 * `from`, each line is one item, split among the variables (the last one
 * gets the rest of the line). ITEMS in parentheses may span lines, the
 * closing parenthesis on a line of its own; `from FILE` reads the lines of
 * a file. SLICE is Python's [start:end:step]. The variable is Item when
 * none is named.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "submit-internal.h"

void submit_queue_done(SubmitQueue *q) {
        config_strv_free(q->vars);
        config_strv_free(q->items);
        *q = (SubmitQueue) {};
}

static bool is_item_sep(char c) {
        return c == ',' || isspace((unsigned char) c);
}

/* Append a copy of s[0..n) to the NULL-terminated list *v of *n items. */
static int list_push(char ***v, size_t *n, const char *s, size_t len) {
        char **nv;
        char *copy = strndup(s, len);

        if (!copy)
                return -ENOMEM;
        nv = realloc(*v, (*n + 2) * sizeof(char *));
        if (!nv) {
                free(copy);
                return -ENOMEM;
        }
        nv[(*n)++] = copy;
        nv[*n] = NULL;
        *v = nv;
        return 0;
}

/* Items of an `in` list: separated by commas and/or white space. */
static int push_in_items(SubmitQueue *q, const char *text) {
        char **items = NULL;
        int r;

        r = config_split_list(text, &items);
        for (size_t i = 0; r >= 0 && items[i]; i++)
                r = list_push(&q->items, &q->n_items, items[i], strlen(items[i]));
        config_strv_free(items);
        return r;
}

/* text without leading and trailing white space, as [*ret_start, +len). */
static size_t trimmed(const char *text, const char **ret_start) {
        size_t n;

        while (isspace((unsigned char) *text))
                text++;
        n = strlen(text);
        while (n > 0 && isspace((unsigned char) text[n - 1]))
                n--;
        *ret_start = text;
        return n;
}

/* One line of items: `in` splits it, `from` takes it whole; blank lines
 * and # comments are skipped. */
static int push_line_items(SubmitQueue *q, const char *line) {
        const char *start;
        size_t n = trimmed(line, &start);

        if (n == 0 || *start == '#')
                return 0;
        if (q->foreach == SUBMIT_FOREACH_FROM)
                return list_push(&q->items, &q->n_items, start, n);
        return push_in_items(q, start);
}

/* ---- slices ---- */

/* An optional integer of a slice; *p advanced past it. */
static int slice_int(const char **p, bool *ret_has, int64_t *ret) {
        const char *s = *p;
        char *end;
        long long v;

        while (*s == ' ' || *s == '\t')
                s++;
        if (*s != '-' && *s != '+' && !isdigit((unsigned char) *s)) {
                *ret_has = false;
                *p = s;
                return 0;
        }
        errno = 0;
        v = strtoll(s, &end, 10);
        if (errno != 0 || end == s || v < -1000000000LL || v > 1000000000LL)
                return -EINVAL;
        while (*end == ' ' || *end == '\t')
                end++;
        *ret_has = true;
        *ret = v;
        *p = end;
        return 0;
}

/* "[start:end:step]" at *p; *p advanced past the ']'. */
static int slice_parse(const char **p, SubmitSlice *ret) {
        SubmitSlice sl = { .set = true };
        const char *s = *p + 1;

        if (slice_int(&s, &sl.has_start, &sl.start) < 0 || *s++ != ':')
                return -EINVAL;
        if (slice_int(&s, &sl.has_end, &sl.end) < 0)
                return -EINVAL;
        if (*s == ':') {
                s++;
                if (slice_int(&s, &sl.has_step, &sl.step) < 0)
                        return -EINVAL;
                if (sl.has_step && sl.step <= 0)
                        return -EINVAL;
        }
        if (*s++ != ']')
                return -EINVAL;
        *ret = sl;
        *p = s;
        return 0;
}

bool submit_slice_selected(const SubmitSlice *sl, size_t ix, size_t n) {
        int64_t i = (int64_t) ix, len = (int64_t) n, start = 0, end = len;

        if (!sl->set)
                return i < len;
        if (sl->has_start)
                start = sl->start < 0 ? sl->start + len : sl->start;
        if (sl->has_end)
                end = sl->end < 0 ? sl->end + len : sl->end;
        return i >= start && i < end && (!sl->has_step || (i - start) % sl->step == 0);
}

/* ---- items from a file ---- */

static int read_items_file(Submit *s, SubmitQueue *q, const char *name, int line) {
        _cleanup_config_free_ char *path = NULL, *data = NULL;
        struct stat st;
        size_t len = 0;
        int fd, r = 0;

        if (name[0] == '/')
                path = strdup(name);
        else if (asprintf(&path, "%s/%s", s->iwd, name) < 0)
                path = NULL;
        if (!path)
                return -ENOMEM;

        /* O_NONBLOCK: a FIFO must not hang us; only regular files pass. */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (fd < 0)
                return config_error(s->err, s->file, line, -errno, "queue from '%s': %s", name, strerror(errno));
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (!S_ISREG(st.st_mode))
                r = -EINVAL;
        else if ((uint64_t) st.st_size > CONFIG_MAX_FILE_SIZE)
                r = -EFBIG;
        else if (!(data = malloc((size_t) st.st_size + 1)))
                r = -ENOMEM;
        while (r == 0) {
                ssize_t k = read(fd, data + len, (size_t) st.st_size - len);

                if (k < 0)
                        r = -errno;
                else if (k == 0 || (len += (size_t) k) == (size_t) st.st_size)
                        break;
        }
        close(fd);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return config_error(s->err, s->file, line, r, "queue from '%s': %s", name,
                                    r == -EINVAL ? "not a regular file" : strerror(-r));
        data[len] = '\0';
        if (strlen(data) != len)
                return config_error(s->err, s->file, line, -EINVAL, "queue from '%s': the file holds a NUL byte", name);

        for (char *p = data; *p;) {
                char *nl = strchr(p, '\n');

                if (nl)
                        *nl = '\0';
                r = push_line_items(q, p);
                if (r < 0)
                        return r;
                p = nl ? nl + 1 : p + strlen(p);
        }
        return 0;
}

/* ---- the statement ---- */

static const char *const foreach_words[] = { "in", "from", "matching" };

/* Find the first word in, from or matching that is followed by white space
 * or '('. Returns its index in foreach_words, -1 if none. */
static int find_keyword(const char *args, const char **ret_start, const char **ret_end) {
        const char *p = args;

        while (*p) {
                const char *w;
                size_t n;

                while (isspace((unsigned char) *p) || *p == '(')
                        p++;
                w = p;
                while (*p && !isspace((unsigned char) *p) && *p != '(')
                        p++;
                n = (size_t) (p - w);
                if (!*p)
                        break;
                for (int i = 0; i < 3; i++)
                        if (strlen(foreach_words[i]) == n && strncasecmp(w, foreach_words[i], n) == 0) {
                                *ret_start = w;
                                *ret_end = p;
                                return i;
                        }
        }
        return -1;
}

static bool is_var_name(const char *w, size_t n) {
        if (n == 0 || !(isalpha((unsigned char) w[0]) || w[0] == '_'))
                return false;
        for (size_t i = 1; i < n; i++)
                if (!isalnum((unsigned char) w[i]) && w[i] != '_' && w[i] != '.')
                        return false;
        return true;
}

/* Before the keyword: [COUNT] [VAR[,VAR...]]. The variables are the
 * trailing words that are names; the rest is the count. Sets *ret_count_len. */
static int parse_vars(Submit *s, SubmitQueue *q, const char *text, size_t len, size_t *ret_count_len, int line) {
        size_t end = len, first_var = len;
        int r;

        for (;;) {
                size_t e = end, b;

                while (e > 0 && is_item_sep(text[e - 1]))
                        e--;
                b = e;
                while (b > 0 && !is_item_sep(text[b - 1]))
                        b--;
                if (e == 0 || !is_var_name(text + b, e - b))
                        break;
                first_var = b;
                end = b;
        }
        for (size_t p = first_var; p < len;) {
                size_t n;

                while (p < len && is_item_sep(text[p]))
                        p++;
                for (n = 0; p + n < len && !is_item_sep(text[p + n]); n++)
                        ;
                if (n == 0)
                        break;
                if (q->n_vars >= SUBMIT_MAX_QUEUE_VARS)
                        return config_error(s->err, s->file, line, -E2BIG, "queue: more than %d variables",
                                            SUBMIT_MAX_QUEUE_VARS);
                r = list_push(&q->vars, &q->n_vars, text + p, n);
                if (r < 0)
                        return r;
                p += n;
        }
        *ret_count_len = first_var;
        return 0;
}

static int parse_count(Submit *s, SubmitQueue *q, const char *text, size_t len, int line) {
        _cleanup_config_free_ char *expr = NULL;
        const char *start;
        int r;

        expr = strndup(text, len);
        if (!expr)
                return -ENOMEM;
        start = config_strip(expr);
        if (!*start) {
                q->count = 1;
                return 0;
        }
        r = submit_eval_int(start, &q->count);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return config_error(s->err, s->file, line, -EINVAL,
                                    "queue: '%s' is not a number of jobs (expected: queue [COUNT] "
                                    "[VAR[,VAR...] in|from ITEMS])", start);
        if (q->count < 0)
                return config_error(s->err, s->file, line, -EINVAL, "queue: negative number of jobs %lld",
                                    (long long) q->count);
        return 0;
}

/* The items after the keyword (and the slice). */
static int parse_items(Submit *s, SubmitQueue *q, const char *p, int line) {
        const char *start;
        size_t n = trimmed(p, &start);
        int r;

        if (n > 0 && *start == '(' && start[n - 1] == ')' && n >= 2) {
                /* One-line list. */
                _cleanup_config_free_ char *inner = strndup(start + 1, n - 2);

                if (!inner)
                        return -ENOMEM;
                if (q->foreach == SUBMIT_FOREACH_IN)
                        return push_in_items(q, inner);
                return push_line_items(q, inner);
        }
        if (n > 0 && *start == '(') {
                /* Multi-line list: the rest of this line, then lines up
                 * to one that starts with ')'. */
                _cleanup_config_free_ char *first = strndup(start + 1, n - 1);

                if (!first)
                        return -ENOMEM;
                r = push_line_items(q, first);
                if (r < 0)
                        return r;
                for (;;) {
                        _cleanup_config_free_ char *l = NULL;
                        const char *t;
                        int l_line;

                        r = submit_next_physical_line(s, &l, &l_line);
                        if (r < 0)
                                return r;
                        if (!l)
                                return config_error(s->err, s->file, line, -EINVAL,
                                                    "queue: no ')' closes the list of items");
                        trimmed(l, &t);
                        if (*t == ')') {
                                if (trimmed(t + 1, &t) > 0)
                                        return config_error(s->err, s->file, l_line, -EINVAL,
                                                            "queue: text after the ')' that closes the list of items");
                                return 0;
                        }
                        r = push_line_items(q, l);
                        if (r < 0)
                                return r;
                }
        }
        if (q->foreach == SUBMIT_FOREACH_IN)
                return push_in_items(q, start);

        /* from FILE */
        if (n == 0)
                return config_error(s->err, s->file, line, -EINVAL, "queue from: missing file name or (items)");
        {
                _cleanup_config_free_ char *name = strndup(start, n);

                if (!name)
                        return -ENOMEM;
                return read_items_file(s, q, name, line);
        }
}

int submit_queue_parse(Submit *s, const char *args, int line, SubmitQueue *ret) {
        SubmitQueue q = { .line = line };
        const char *kw_start, *kw_end, *p;
        size_t count_len = 0;
        int kw, r;

        kw = find_keyword(args, &kw_start, &kw_end);
        if (kw < 0) {
                r = parse_count(s, &q, args, strlen(args), line);
                if (r < 0)
                        goto fail;
                *ret = q;
                return 0;
        }
        if (kw == 2) {
                r = config_error(s->err, s->file, line, -EOPNOTSUPP, "queue ... matching is not supported");
                goto fail;
        }
        q.foreach = kw == 0 ? SUBMIT_FOREACH_IN : SUBMIT_FOREACH_FROM;

        r = parse_vars(s, &q, args, (size_t) (kw_start - args), &count_len, line);
        if (r < 0)
                goto fail;
        r = parse_count(s, &q, args, count_len, line);
        if (r < 0)
                goto fail;
        if (q.n_vars == 0) {
                r = list_push(&q.vars, &q.n_vars, "Item", 4);
                if (r < 0)
                        goto fail;
        }

        p = kw_end;
        while (isspace((unsigned char) *p))
                p++;
        if (*p == '[') {
                r = slice_parse(&p, &q.slice);
                if (r < 0) {
                        r = config_error(s->err, s->file, line, -EINVAL,
                                         "queue: bad slice (expected [start:end] or [start:end:step], "
                                         "whole numbers, step > 0)");
                        goto fail;
                }
        }
        r = parse_items(s, &q, p, line);
        if (r < 0)
                goto fail;
        *ret = q;
        return 0;
fail:
        submit_queue_done(&q);
        return r;
}

int submit_item_split(const SubmitQueue *q, const char *item, char ***ret) {
        char **values;
        const char *p = item;

        values = calloc(q->n_vars + 1, sizeof(char *));
        if (!values)
                return -ENOMEM;
        while (*p == ' ' || *p == '\t')
                p++;
        for (size_t i = 0; i < q->n_vars; i++) {
                size_t n;

                if (i + 1 == q->n_vars)
                        n = strlen(p); /* the last variable gets the rest */
                else
                        n = strcspn(p, ", \t");
                values[i] = strndup(p, n);
                if (!values[i]) {
                        config_strv_free(values);
                        return -ENOMEM;
                }
                p += n;
                if (*p)
                        p++;
                while (*p == ' ' || *p == '\t')
                        p++;
        }
        *ret = values;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-parse.c — submit description files: lines and statements, the
 * variables they define, macro lookups for one job, and the queue loop
 * that turns them into job ads.
 *
 * A description is read top to bottom. `name = value` defines a variable
 * (a command such as executable, or a macro of the user's); `+Name = expr`
 * and `MY.Name = expr` put an attribute into every job ad; `queue ...`
 * queues jobs with the values defined so far. Names are case-insensitive,
 * lines starting with # are comments, a line ending in \ continues on the
 * next one. Values are expanded when a job is built, so that $(Process),
 * $(Item) and the like take each job's values. The whole description is
 * rejected on the first error, and nothing is produced.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "submit-internal.h"

FILE *submit_warning_stream;

int submit_warn(Submit *s, int line, const char *fmt, ...) {
        _cleanup_config_free_ char *msg = NULL;
        char *w, **v;
        va_list ap;
        int k;

        va_start(ap, fmt);
        k = vasprintf(&msg, fmt, ap);
        va_end(ap);
        if (k < 0)
                return -ENOMEM;
        k = line > 0 ? asprintf(&w, "%s:%d: warning: %s", s->file, line, msg)
                     : asprintf(&w, "%s: warning: %s", s->file, msg);
        if (k < 0)
                return -ENOMEM;
        for (size_t i = 0; i < s->n_warnings; i++)
                if (strcmp(s->warnings[i], w) == 0) {
                        free(w); /* said already (one per job would repeat it) */
                        return 0;
                }
        v = realloc(s->warnings, (s->n_warnings + 1) * sizeof(char *));
        if (!v) {
                free(w);
                return -ENOMEM;
        }
        s->warnings = v;
        s->warnings[s->n_warnings++] = w;
        return 0;
}

/* ---- lines ---- */

int submit_next_physical_line(Submit *s, char **ret, int *ret_line) {
        const char *p;
        size_t n;

        if (!config_reader_physical(&s->rd, &p, &n)) {
                *ret = NULL;
                return 0;
        }
        char *l = strndup(p, n);
        if (!l)
                return -ENOMEM;
        *ret = l;
        *ret_line = s->rd.lineno;
        return 0;
}

/* Next logical line, as the configuration reads them; *ret NULL at the end. */
static int next_logical_line(Submit *s, char **ret, int *ret_line) {
        ConfigBuf line = {};
        int r = config_reader_logical(&s->rd, &line, ret_line);
        if (r == -E2BIG)
                r = config_error(s->err, s->file, s->rd.lineno, r, "a line longer than %u bytes", CONFIG_MAX_VALUE);
        if (r <= 0) {
                config_buf_done(&line);
                if (r == 0)
                        *ret = NULL;
                return r;
        }
        *ret = config_buf_steal(&line);
        return *ret ? 0 : -ENOMEM;
}

/* ---- variables ---- */

const ConfigEntry *submit_use_var(Submit *s, const char *name) {
        const ConfigEntry *e = config_find(s->vars, name);

        if (e && (size_t) (e - s->vars->entries) < s->n_used)
                s->used[e - s->vars->entries] = true;
        return e;
}

static int define(Submit *s, Config *table, const char *name, const char *value, int line) {
        int r = config_define(table, name, value, s->file, line);

        if (r == -E2BIG)
                return config_error(s->err, s->file, line, r, "the value of %s is longer than %u bytes", name,
                                    CONFIG_MAX_VALUE);
        return r;
}

static int set_var(Submit *s, const char *name, const char *value, int line) {
        _cleanup_config_free_ char *v = NULL;
        ConfigError cerr = {};
        int r;

        /* `args = $(args) -v` builds on the previous definition. */
        r = config_resolve_self(s->vars, name, value, &v, &cerr);
        if (r < 0)
                return r == -ENOMEM ? r : config_error(s->err, s->file, line, r, "%s", cerr.msg);
        r = define(s, s->vars, name, v, line);
        if (r < 0)
                return r;
        if (s->n_used < s->vars->n_entries) {
                bool *u = realloc(s->used, s->vars->n_entries * sizeof(bool));

                if (!u)
                        return -ENOMEM;
                s->used = u;
                while (s->n_used < s->vars->n_entries)
                        s->used[s->n_used++] = false;
        }
        return 0;
}

/* ---- macro lookups for one job ---- */

const char *submit_host_arch(void) {
#if defined(__x86_64__)
        return "X86_64";
#elif defined(__i386__)
        return "INTEL";
#elif defined(__aarch64__)
        return "aarch64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        return "ppc64le";
#else
        return "UNKNOWN";
#endif
}

/* $(name) for the current job: loop variables, then the description's
 * variables, then the built-in ones, as condor_submit. */
static int resolve(void *userdata, const char *name, ConfigDef *ret) {
        static const struct {
                const char *name;
                size_t live; /* offsetof a live_* buffer, or 0 */
                const char *value;
        } builtins[] = {
                { "Cluster", offsetof(Submit, live_cluster), NULL },
                { "ClusterId", offsetof(Submit, live_cluster), NULL },
                { "Process", offsetof(Submit, live_proc), NULL },
                { "ProcId", offsetof(Submit, live_proc), NULL },
                { "Step", offsetof(Submit, live_step), NULL },
                { "Row", offsetof(Submit, live_row), NULL },
                { "ItemIndex", offsetof(Submit, live_row), NULL },
                { "Node", 0, "" },
                { "OPSYS", 0, "LINUX" },
                { "IsLinux", 0, "1" },
                { "IsWindows", 0, "0" },
        };
        Submit *s = userdata;
        const ConfigEntry *e;

        if (s->queue && s->item_values)
                for (size_t i = 0; i < s->queue->n_vars; i++)
                        if (strcasecmp(s->queue->vars[i], name) == 0) {
                                *ret = (ConfigDef) { s->queue->vars[i], s->item_values[i], s->file, s->queue->line };
                                return 0;
                        }
        e = submit_use_var(s, name);
        if (e) {
                *ret = (ConfigDef) { e->name, e->value, s->file, e->line };
                return 0;
        }
        for (size_t i = 0; i < sizeof(builtins) / sizeof(builtins[0]); i++)
                if (strcasecmp(builtins[i].name, name) == 0) {
                        const char *v = builtins[i].live ? (const char *) s + builtins[i].live : builtins[i].value;

                        *ret = (ConfigDef) { builtins[i].name, v, "", 0 };
                        return 0;
                }
        if (strcasecmp(name, "ARCH") == 0)
                *ret = (ConfigDef) { "ARCH", submit_host_arch(), "", 0 };
        else if (strcasecmp(name, "SUBMIT_FILE") == 0)
                *ret = (ConfigDef) { "SUBMIT_FILE", s->file, "", 0 };
        else
                return -ENOENT;
        return 0;
}

/* Expand text; self is the definition it is the value of, line where it
 * comes from. */
static int expand(Submit *s, const ConfigDef *self, const char *text, int line, char **ret) {
        ConfigError cerr = {};
        int r;

        r = config_expand_full_cwd(text, resolve, s, self, s->iwd, ret, &cerr); /* $Ff(): against iwd */
        if (r == -ENOMEM || r >= 0 || !s->err)
                return r;
        *s->err = cerr;
        if (!cerr.file[0] || cerr.line <= 0) {
                snprintf(s->err->file, sizeof(s->err->file), "%s", s->file);
                s->err->line = line;
        }
        if (!s->err->msg[0])
                snprintf(s->err->msg, sizeof(s->err->msg), "cannot expand the macros of the value");
        return r;
}

int submit_expand(Submit *s, const char *text, int line, char **ret) {
        ConfigDef self = { "<value>", text, s->file, line };

        return expand(s, &self, text, line, ret);
}

int submit_lookup(Submit *s, const char *const *names, char **ret, int *ret_line) {
        for (; *names; names++) {
                const ConfigEntry *e = submit_use_var(s, *names);
                _cleanup_config_free_ char *v = NULL;
                ConfigDef self;
                char *p;
                int r;

                if (!e)
                        continue;
                self = (ConfigDef) { e->name, e->value, s->file, e->line };
                r = expand(s, &self, e->value, e->line, &v);
                if (r < 0)
                        return r;
                p = config_strip(v);
                *ret_line = e->line;
                if (!*p) {
                        *ret = NULL;
                        return 0;
                }
                memmove(v, p, strlen(p) + 1);
                *ret = v;
                v = NULL;
                return 0;
        }
        *ret = NULL;
        *ret_line = s->queue ? s->queue->line : 0;
        return 0;
}

/* ---- statements ---- */

static void set_live(Submit *s) {
        snprintf(s->live_cluster, sizeof(s->live_cluster), "%lld", (long long) s->cluster);
        snprintf(s->live_proc, sizeof(s->live_proc), "%lld", (long long) s->proc);
        snprintf(s->live_step, sizeof(s->live_step), "%lld", (long long) s->step);
        snprintf(s->live_row, sizeof(s->live_row), "%lld", (long long) s->row);
}

static int push_ad(Submit *s, ClassAd *ad) {
        ClassAd **v = realloc(s->ads, (s->n_ads + 1) * sizeof(ClassAd *));

        if (!v) {
                classad_free(ad);
                return -ENOMEM;
        }
        s->ads = v;
        s->ads[s->n_ads++] = ad;
        return 0;
}

static int queue_jobs(Submit *s, const SubmitQueue *q) {
        size_t n_items = q->foreach == SUBMIT_FOREACH_NONE ? 1 : q->n_items, selected = 0;
        int r = 0;

        for (size_t ix = 0; ix < n_items; ix++)
                selected += submit_slice_selected(&q->slice, ix, n_items);
        if (q->count > s->max_jobs || (int64_t) selected * q->count > s->max_jobs - (int64_t) s->n_ads)
                return config_error(s->err, s->file, q->line, -E2BIG,
                                    "queue: more than %lld jobs in one submission (MAX_JOBS_PER_SUBMISSION)",
                                    (long long) s->max_jobs);

        s->queue = q;
        for (size_t ix = 0; ix < n_items && r >= 0; ix++) {
                if (!submit_slice_selected(&q->slice, ix, n_items))
                        continue;
                if (q->foreach != SUBMIT_FOREACH_NONE) {
                        r = submit_item_split(q, q->items[ix], &s->item_values);
                        if (r < 0)
                                break;
                }
                for (int64_t step = 0; step < q->count && r >= 0; step++) {
                        ClassAd *ad = NULL;

                        s->step = step;
                        s->row = (int64_t) ix;
                        set_live(s);
                        r = submit_job_ad(s, &ad);
                        if (r >= 0)
                                r = push_ad(s, ad);
                        s->proc++;
                }
                config_strv_free(s->item_values);
                s->item_values = NULL;
        }
        s->queue = NULL;
        return r;
}

/* The text after the word queue, or NULL when line is not a queue
 * statement (`queue = x` defines a variable named queue). */
static const char *queue_args(const char *line) {
        const char *p = line;

        while (isspace((unsigned char) *p))
                p++;
        if (strncasecmp(p, "queue", 5) != 0 || (p[5] && !isspace((unsigned char) p[5])))
                return NULL;
        p += 5;
        while (isspace((unsigned char) *p))
                p++;
        return *p == '=' ? NULL : p;
}

static int do_queue(Submit *s, const char *args, int line) {
        _cleanup_config_free_ char *expanded = NULL;
        ConfigDef self = { "<queue>", args, s->file, line };
        SubmitQueue q = {};
        int r;

        s->queued = true;
        s->step = s->row = 0;
        set_live(s);
        r = expand(s, &self, args, line, &expanded);
        if (r < 0)
                return r;
        r = submit_queue_parse(s, expanded, line, &q);
        if (r < 0)
                return r;
        r = queue_jobs(s, &q);
        submit_queue_done(&q);
        return r;
}


static int do_statement(Submit *s, char *l, int line) {
        const char *args = queue_args(l);
        char *eq, *name, *value, *end;

        if (args)
                return do_queue(s, args, line);

        eq = strchr(l, '=');
        if (!eq)
                return config_error(s->err, s->file, line, -EINVAL,
                                    "expected 'name = value' or a queue statement, got '%s'", l);
        *eq = '\0';
        for (name = l; isspace((unsigned char) *name); name++)
                ;
        for (end = eq; end > name && isspace((unsigned char) end[-1]); end--)
                ;
        *end = '\0';
        for (value = eq + 1; isspace((unsigned char) *value); value++)
                ;
        for (end = value + strlen(value); end > value && isspace((unsigned char) end[-1]); end--)
                ;
        *end = '\0';

        if (!*name)
                return config_error(s->err, s->file, line, -EINVAL, "missing name before '='");
        if (*name == '+' || strncasecmp(name, "MY.", 3) == 0) {
                const char *attr = name + (*name == '+' ? 1 : 3);

                if (!submit_is_attr_name(attr))
                        return config_error(s->err, s->file, line, -EINVAL,
                                            "'%s' is not an attribute name (letters, digits and _, "
                                            "not starting with a digit)", name);
                return define(s, s->attrs, attr, value, line);
        }
        if (!config_is_valid_name(name, strlen(name)))
                return config_error(s->err, s->file, line, -EINVAL,
                                    "'%s' is not a variable name (letters, digits, _, . and /)", name);
        return set_var(s, name, value, line);
}

/* ---- warnings for what was not used ---- */

/* HTCondor commands glean reads nothing from. */
static const char *const unsupported[] = {
        "notification", "notify_user", "concurrency_limits", "coresize", "image_size", "leave_in_queue",
        "next_job_start_delay", "max_retries", "docker_image", "container_image", "x509userproxy", "use_x509userproxy", "getenv_exclude",
        "deferral_time", "cron_minute", "cron_hour", "want_graceful_removal", "allowed_job_duration",
};

static int warn_unused(Submit *s) {
        for (size_t i = 0; i < s->vars->n_entries; i++) {
                const ConfigEntry *v = &s->vars->entries[i];
                bool known = false;
                int r;

                if (i < s->n_used && s->used[i])
                        continue;
                for (size_t k = 0; k < sizeof(unsupported) / sizeof(unsupported[0]) && !known; k++)
                        known = strcasecmp(v->name, unsupported[k]) == 0;
                if (known)
                        r = submit_warn(s, v->line, "'%s' is not supported by glean and is ignored", v->name);
                else
                        r = submit_warn(s, v->line, "the line '%s = %s' was not used; is it a typo?", v->name,
                                        v->value);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* ---- setup and entry points ---- */

static int default_owner(char **ret) {
        struct passwd pw, *res = NULL;
        char buf[4096];

        if (getpwuid_r(geteuid(), &pw, buf, sizeof(buf), &res) == 0 && res && res->pw_name[0])
                *ret = strdup(res->pw_name);
        else if (asprintf(ret, "%u", (unsigned) geteuid()) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

static int absolute_dir(const char *dir, char **ret) {
        char cwd[4096];

        if (dir && dir[0] == '/') {
                *ret = strdup(dir);
                return *ret ? 0 : -ENOMEM;
        }
        if (!getcwd(cwd, sizeof(cwd)))
                return -errno;
        if (!dir || !*dir || strcmp(dir, ".") == 0)
                *ret = strdup(cwd);
        else if (asprintf(ret, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, dir) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

static void submit_done(Submit *s) {
        config_free(s->vars);
        config_free(s->attrs);
        free(s->used);
        config_submit_free(s->ads, s->n_ads);
        for (size_t i = 0; i < s->n_warnings; i++)
                free(s->warnings[i]);
        free(s->warnings);
        free(s->owner);
        free(s->iwd);
}

static int submit_setup(Submit *s, const Config *cfg, const ConfigSubmitOptions *opts) {
        ConfigError cerr = {};
        int r;

        r = config_new_empty(&s->vars);
        if (r >= 0)
                r = config_new_empty(&s->attrs);
        if (r < 0)
                return r;
        s->cluster = opts && opts->cluster_id > 0 ? opts->cluster_id : 1;
        s->qdate = opts && opts->qdate > 0 ? opts->qdate : (int64_t) time(NULL);
        if (opts && opts->owner && *opts->owner)
                s->owner = strdup(opts->owner);
        else if (default_owner(&s->owner) < 0)
                s->owner = NULL;
        if (!s->owner)
                return -ENOMEM;
        r = absolute_dir(opts ? opts->iwd : NULL, &s->iwd);
        if (r < 0)
                return r == -ENOMEM ? r : config_error(s->err, s->file, 0, r, "cannot find the current directory: %s",
                                                       strerror(-r));

        r = config_get_int(cfg, "MAX_JOBS_PER_SUBMISSION", &s->max_jobs, &cerr);
        if (r == -ENOENT)
                s->max_jobs = SUBMIT_DEFAULT_MAX_JOBS;
        else if (r >= 0 && s->max_jobs <= 0)
                s->max_jobs = INT64_MAX; /* 0: no limit, as the central manager reads it */
        else if (r < 0) {
                if (s->err)
                        *s->err = cerr;
                return r;
        }
        return 0;
}

static int submit_run(Submit *s) {
        int r;

        for (;;) {
                _cleanup_config_free_ char *l = NULL;
                int line;

                r = next_logical_line(s, &l, &line);
                if (r < 0)
                        return r;
                if (!l)
                        break;
                r = do_statement(s, l, line);
                if (r < 0)
                        return r;
        }
        if (!s->queued)
                return config_error(s->err, s->file, 0, -EINVAL, "no queue statement: nothing to submit");
        return warn_unused(s);
}

int config_submit_parse_string(const char *text, const char *source_name, const Config *cfg,
                               const ConfigSubmitOptions *opts, ClassAd ***ret_ads, size_t *ret_n,
                               ConfigError *err) {
        ConfigError local_err = {};
        Config *own_cfg = NULL;
        Submit s = {
                .file = source_name ? source_name : "<string>",
                .rd = { .text = text },
                .err = err ? err : &local_err,
        };
        int r;

        *s.err = (ConfigError) {};
        if (!text || !ret_ads || !ret_n)
                return config_error(s.err, s.file, 0, -EINVAL, "invalid arguments");
        if (strlen(text) > CONFIG_MAX_FILE_SIZE)
                return config_error(s.err, s.file, 0, -EFBIG, "larger than %u bytes", CONFIG_MAX_FILE_SIZE);
        if (!cfg) {
                r = config_new(&own_cfg);
                if (r < 0)
                        return config_error(s.err, s.file, 0, r, "cannot load the default configuration: %s",
                                            strerror(-r));
                cfg = own_cfg;
        }
        s.cfg = cfg;

        r = submit_setup(&s, cfg, opts);
        if (r >= 0)
                r = submit_run(&s);
        if (r >= 0) {
                FILE *f = submit_warning_stream ? submit_warning_stream : stderr;

                for (size_t i = 0; i < s.n_warnings; i++)
                        fprintf(f, "%s\n", s.warnings[i]);
                *ret_ads = s.ads;
                *ret_n = s.n_ads;
                s.ads = NULL;
                s.n_ads = 0;
        } else if (!s.err->msg[0])
                config_error(s.err, s.file, 0, r, "%s", strerror(-r));
        submit_done(&s);
        config_free(own_cfg);
        return r < 0 ? r : 0;
}

int config_submit_parse_file(const char *path, const Config *cfg, const ConfigSubmitOptions *opts,
                             ClassAd ***ret_ads, size_t *ret_n, ConfigError *err) {
        _cleanup_config_free_ char *data = NULL;
        size_t len = 0, cap = 0;
        FILE *f;
        int r = 0;

        if (!path)
                return config_error(err, "", 0, -EINVAL, "invalid arguments");
        f = fopen(path, "re");
        if (!f)
                return config_error(err, path, 0, -errno, "%s", strerror(errno));
        for (;;) {
                size_t k;

                if (len + 4096 + 1 > cap) {
                        char *grown;

                        cap = cap ? cap * 2 : 8192;
                        grown = realloc(data, cap);
                        if (!grown) {
                                r = -ENOMEM;
                                break;
                        }
                        data = grown;
                }
                k = fread(data + len, 1, cap - len - 1, f);
                len += k;
                if (len > CONFIG_MAX_FILE_SIZE) {
                        r = -EFBIG;
                        break;
                }
                if (k == 0) {
                        if (ferror(f))
                                r = -EIO;
                        break;
                }
        }
        fclose(f);
        if (r < 0)
                return config_error(err, path, 0, r, "%s", r == -EFBIG ? "larger than 16 MiB" : strerror(-r));
        data[len] = '\0';
        if (strlen(data) != len)
                return config_error(err, path, 0, -EINVAL, "the file holds a NUL byte");
        return config_submit_parse_string(data, path, cfg, opts, ret_ads, ret_n, err);
}

void config_submit_free(ClassAd **ads, size_t n) {
        if (!ads)
                return;
        for (size_t i = 0; i < n; i++)
                classad_free(ads[i]);
        free(ads);
}

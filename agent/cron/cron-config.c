/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cron-config.c — the knobs of the startd cron (HTCondor's "Daemon ClassAd
 * Hook Configuration Options"): STARTD_CRON_JOBLIST, STARTD_CRON_<Name>_*,
 * STARTD_CRON_AUTOPUBLISH, _MAX_JOB_LOAD, _CONFIG_VAL, _LOG_NON_ZERO_EXIT
 * and glean's STARTD_CRON_USER, into an AgentCronTable. Where HTCondor
 * skips a broken job with a log line, glean refuses the configuration with
 * the knob's file and line, so that a typo is not a silent missing job.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argsyntax.h"
#include "common/cleanup.h"
#include "config-internal.h"
#include "cron.h"

static const char *const mode_names[] = {
        [AGENT_CRON_PERIODIC] = "Periodic",
        [AGENT_CRON_WAIT_FOR_EXIT] = "WaitForExit",
        [AGENT_CRON_ONE_SHOT] = "OneShot",
        [AGENT_CRON_ON_DEMAND] = "OnDemand",
};

const char *agent_cron_mode_name(AgentCronMode m) {
        return (unsigned) m < sizeof mode_names / sizeof *mode_names ? mode_names[m] : "?";
}

int agent_cron_parse_period(const char *text, int64_t *ret) {
        const char *p = text;
        while (isspace((unsigned char) *p))
                p++;
        if (!isdigit((unsigned char) *p))
                return -EINVAL;
        int64_t v = 0;
        for (; isdigit((unsigned char) *p); p++) {
                if (v > (INT64_MAX - 9) / 10)
                        return -EINVAL;
                v = v * 10 + (*p - '0');
        }
        while (isspace((unsigned char) *p))
                p++;
        int64_t mult = 1;
        switch (*p) {
        case 0: break;
        case 's': case 'S': p++; break;
        case 'm': case 'M': mult = 60; p++; break;
        case 'h': case 'H': mult = 3600; p++; break;
        default: return -EINVAL;
        }
        while (isspace((unsigned char) *p))
                p++;
        if (*p || v > INT32_MAX / mult) /* 68 years: room for the arithmetic of timers */
                return -EINVAL;
        *ret = v * mult;
        return 0;
}

/* ---- lookups ---- */

typedef struct Knob {
        char name[160];
        char *value;      /* expanded; NULL: undefined or empty */
        const char *file; /* its definition */
        int line;
} Knob;

static void knob_done(Knob *k) {
        free(k->value);
        k->value = NULL;
}

/* STARTD_CRON_<job>_<item> (job NULL: STARTD_CRON_<item>). */
static int knob_get(const Config *cfg, const char *job, const char *item, Knob *k, ConfigError *err) {
        *k = (Knob){ .file = "", .line = 0 };
        if (job)
                snprintf(k->name, sizeof k->name, "STARTD_CRON_%s_%s", job, item);
        else
                snprintf(k->name, sizeof k->name, "STARTD_CRON_%s", item);
        /* Names are case-insensitive; messages spell them HTCondor's way. */
        for (char *c = k->name; *c; c++)
                *c = (char) toupper((unsigned char) *c);
        (void) config_where(cfg, k->name, &k->file, &k->line);
        char *v = NULL;
        int r = config_get(cfg, k->name, &v, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        char *s = v, *e = v + strlen(v);
        while (isspace((unsigned char) *s))
                s++;
        while (e > s && isspace((unsigned char) e[-1]))
                e--;
        *e = 0;
        if (!*s) {
                free(v);
                return 0;
        }
        memmove(v, s, (size_t) (e - s) + 1);
        k->value = v;
        return 1;
}

/* err names k's file and line; k's value is freed (the message may quote it). */
static int knob_error(ConfigError *err, Knob *k, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int knob_error(ConfigError *err, Knob *k, int r, const char *fmt, ...) {
        char msg[400];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        r = config_error(err, k->file, k->line, r, "%s: %s", k->name, msg);
        knob_done(k);
        return r;
}

static int knob_bool(const Config *cfg, const char *job, const char *item, bool def, bool *ret, Knob *k,
                     ConfigError *err) {
        int r = knob_get(cfg, job, item, k, err);
        if (r <= 0) {
                *ret = def;
                return r;
        }
        if (!strcasecmp(k->value, "true") || !strcasecmp(k->value, "yes") || !strcmp(k->value, "1"))
                *ret = true;
        else if (!strcasecmp(k->value, "false") || !strcasecmp(k->value, "no") || !strcmp(k->value, "0"))
                *ret = false;
        else
                return knob_error(err, k, -EINVAL, "'%s' is not a boolean", k->value);
        return 1;
}

static int knob_real(const Config *cfg, const char *job, const char *item, double def, double lo, double hi,
                     double *ret, Knob *k, ConfigError *err) {
        int r = knob_get(cfg, job, item, k, err);
        if (r <= 0) {
                *ret = def;
                return r;
        }
        char *end;
        errno = 0;
        double v = strtod(k->value, &end);
        if (errno || *end || end == k->value || !isfinite(v) || v < lo || v > hi)
                return knob_error(err, k, -EINVAL, "'%s' is not a number from %g to %g", k->value, lo, hi);
        *ret = v;
        return 1;
}

static bool is_word(const char *s) {
        if (!*s)
                return false;
        for (; *s; s++)
                if (!isalnum((unsigned char) *s) && *s != '_')
                        return false;
        return true;
}

/* HTCondor's V1RawOrV2Quoted: "..." (with "" for a quote) is the new
 * syntax, anything else the old. *ret_v2: the unquoted new-syntax text
 * (malloc'd) or NULL for the old syntax. */
static int unquote_v2(const char *v, char **ret_v2) {
        *ret_v2 = NULL;
        if (v[0] != '"')
                return 0;
        size_t n = strlen(v);
        char *out = malloc(n);
        if (!out)
                return -ENOMEM;
        size_t o = 0, i = 1;
        for (;; i++) {
                if (!v[i]) {
                        free(out);
                        return -EINVAL; /* no closing quote */
                }
                if (v[i] == '"') {
                        if (v[i + 1] == '"') {
                                out[o++] = '"';
                                i++;
                                continue;
                        }
                        break;
                }
                out[o++] = v[i];
        }
        if (v[i + 1]) {
                free(out);
                return -EINVAL; /* text after the closing quote */
        }
        out[o] = 0;
        *ret_v2 = out;
        return 0;
}

/* ---- one job ---- */

static int read_args(const Config *cfg, AgentCronJob *j, ConfigError *err) {
        Knob k;
        ConfigStrv args = { 0 };
        char msg[256] = "";
        int r = config_strv_push(&args, strdup(j->name));
        if (r >= 0)
                r = knob_get(cfg, j->name, "ARGS", &k, err);
        if (r > 0) {
                char *v2 = NULL;
                r = unquote_v2(k.value, &v2);
                if (r == -EINVAL)
                        r = knob_error(err, &k, r, "unterminated \"...\" arguments");
                else if (r >= 0 && v2) {
                        r = config_args_split_v2(v2, &args, msg, sizeof msg);
                        if (r == -EINVAL)
                                r = knob_error(err, &k, r, "%s", msg);
                } else if (r >= 0)
                        r = config_args_split_v1(k.value, &args);
                free(v2);
        }
        knob_done(&k);
        if (r < 0) {
                config_strv_done(&args);
                return r;
        }
        j->argv = args.v;
        return 0;
}

static int read_env(const Config *cfg, AgentCronJob *j, ConfigError *err) {
        Knob k;
        ConfigStrv env = { 0 };
        char msg[256] = "";
        int r = knob_get(cfg, j->name, "ENV", &k, err);
        if (r > 0) {
                char *v2 = NULL;
                r = unquote_v2(k.value, &v2);
                if (r == -EINVAL)
                        r = knob_error(err, &k, r, "unterminated \"...\" environment");
                else if (r >= 0 && v2)
                        r = config_env_split_v2(v2, &env, msg, sizeof msg);
                else if (r >= 0)
                        r = config_env_split_v1(k.value, ";", &env, msg, sizeof msg);
                if (r == -EINVAL && msg[0])
                        r = knob_error(err, &k, r, "%s", msg);
                free(v2);
        }
        knob_done(&k);
        if (r >= 0 && !env.v && !(env.v = calloc(1, sizeof(char *))))
                r = -ENOMEM;
        if (r < 0) {
                config_strv_done(&env);
                return r;
        }
        j->env = env.v;
        return 0;
}

static int read_slots(const Config *cfg, AgentCronJob *j, ConfigError *err) {
        Knob k;
        int r = knob_get(cfg, j->name, "SLOTS", &k, err);
        if (r <= 0)
                return r;
        char *save = NULL;
        for (char *t = strtok_r(k.value, ", \t", &save); t; t = strtok_r(NULL, ", \t", &save)) {
                char *end;
                errno = 0;
                unsigned long id = strtoul(t, &end, 10);
                if (!isdigit((unsigned char) *t) || *end || errno || id == 0 || id > UINT_MAX) {
                        r = knob_error(err, &k, -EINVAL, "'%s' is not a slot number", t);
                        break;
                }
                if (j->n_slots == AGENT_CRON_MAX_SLOT_IDS) {
                        r = knob_error(err, &k, -EINVAL, "more than %d slots", AGENT_CRON_MAX_SLOT_IDS);
                        break;
                }
                j->slots[j->n_slots++] = (unsigned) id;
        }
        knob_done(&k);
        return r < 0 ? r : 0;
}

/* Knobs read but not honoured: a warning each. (RECONFIG and
 * RECONFIG_RERUN need none: the agent takes a new configuration only by
 * starting again, which starts every job again; HTCondor's OneShot
 * template sets RECONFIG_RERUN.) */
static void warn_unhonoured(Config *cfg, const AgentCronJob *j, ConfigError *err) {
        static const struct {
                const char *item;
                const char *why;
        } items[] = {
                { "CONDITION", "not supported by glean; the job runs whenever it is due" },
                { "METRICS", "custom machine resource monitors are not supported by glean; the ads merge as plain attributes" },
        };
        for (size_t i = 0; i < sizeof items / sizeof *items; i++) {
                Knob k;
                if (knob_get(cfg, j->name, items[i].item, &k, err) > 0)
                        (void) config_warn(cfg, k.file, k.line, "%s: %s", k.name, items[i].why);
                knob_done(&k);
        }
}

static void job_done(AgentCronJob *j) {
        free(j->name);
        free(j->executable);
        config_strv_free(j->argv);
        config_strv_free(j->env);
        free(j->cwd);
        free(j->prefix);
        *j = (AgentCronJob){ 0 };
}

static int read_job(Config *cfg, const char *name, Knob *list, AgentCronJob *j, ConfigError *err) {
        Knob k;
        int r;
        *j = (AgentCronJob){ .mode = AGENT_CRON_PERIODIC, .job_load = 0.01 };
        if (!is_word(name) || strlen(name) > 64)
                return knob_error(err, list, -EINVAL, "job name '%s': letters, digits and '_' only, at most 64", name);
        if (!(j->name = strdup(name)))
                return -ENOMEM;

        if ((r = knob_get(cfg, name, "EXECUTABLE", &k, err)) < 0)
                return r;
        if (r == 0)
                return knob_error(err, list, -EINVAL, "job %s has no %s", name, k.name);
        snprintf(j->file, sizeof j->file, "%s", k.file);
        j->line = k.line;
        if (k.value[0] != '/') {
                r = knob_error(err, &k, -EINVAL, "'%s' is not an absolute path", k.value);
                knob_done(&k);
                return r;
        }
        j->executable = TAKE_PTR(k.value);

        if ((r = knob_get(cfg, name, "MODE", &k, err)) < 0)
                return r;
        if (r > 0) {
                size_t m;
                for (m = 0; m < sizeof mode_names / sizeof *mode_names; m++)
                        if (!strcasecmp(k.value, mode_names[m]))
                                break;
                if (m == sizeof mode_names / sizeof *mode_names) {
                        r = knob_error(err, &k, -EINVAL, "unknown mode '%s' (Periodic, WaitForExit, OneShot, OnDemand)",
                                       k.value);
                        knob_done(&k);
                        return r;
                }
                j->mode = (AgentCronMode) m;
                if (j->mode == AGENT_CRON_ON_DEMAND)
                        (void) config_warn(cfg, k.file, k.line,
                                           "%s: OnDemand jobs are HTCondor's benchmarks; this one never runs", k.name);
        }
        knob_done(&k);

        if ((r = knob_get(cfg, name, "PERIOD", &k, err)) < 0)
                return r;
        bool needs = j->mode == AGENT_CRON_PERIODIC || j->mode == AGENT_CRON_WAIT_FOR_EXIT;
        if (!needs && r > 0)
                (void) config_warn(cfg, k.file, k.line, "%s: a %s job has no period; ignored", k.name,
                                   mode_names[j->mode]);
        else if (needs && r == 0)
                r = knob_error(err, list, -EINVAL, "%s job %s has no %s", mode_names[j->mode], name, k.name);
        else if (needs && (agent_cron_parse_period(k.value, &j->period) < 0 ||
                           (j->period < 1 && j->mode == AGENT_CRON_PERIODIC)))
                r = knob_error(err, &k, -EINVAL, "'%s' is not a period of at least %d second (N, Ns, Nm, Nh)", k.value,
                               j->mode == AGENT_CRON_PERIODIC ? 1 : 0);
        knob_done(&k);
        if (r < 0)
                return r;

        if ((r = knob_get(cfg, name, "PREFIX", &k, err)) < 0)
                return r;
        if (r > 0 && !is_word(k.value)) {
                r = knob_error(err, &k, -EINVAL, "'%s': a prefix has letters, digits and '_' only", k.value);
                knob_done(&k);
                return r;
        }
        j->prefix = r > 0 ? TAKE_PTR(k.value) : strdup("");
        if (!j->prefix)
                return -ENOMEM;

        if ((r = knob_get(cfg, name, "CWD", &k, err)) < 0)
                return r;
        if (r > 0 && k.value[0] != '/') {
                r = knob_error(err, &k, -EINVAL, "'%s' is not an absolute path", k.value);
                knob_done(&k);
                return r;
        }
        j->cwd = TAKE_PTR(k.value);

        if ((r = knob_bool(cfg, name, "KILL", false, &j->kill, &k, err)) < 0)
                return r;
        knob_done(&k);
        if ((r = knob_real(cfg, name, "JOB_LOAD", 0.01, 0, 100, &j->job_load, &k, err)) < 0)
                return r;
        knob_done(&k);
        if ((r = read_args(cfg, j, err)) < 0 || (r = read_env(cfg, j, err)) < 0 || (r = read_slots(cfg, j, err)) < 0)
                return r;
        warn_unhonoured(cfg, j, err);
        return 0;
}

void agent_cron_table_free(AgentCronTable *t) {
        if (!t)
                return;
        for (size_t i = 0; i < t->n; i++)
                job_done(&t->jobs[i]);
        free(t->jobs);
        free(t->config_val);
        free(t->user);
        free(t);
}

static int read_globals(Config *cfg, AgentCronTable *t, ConfigError *err) {
        Knob k;
        int r = knob_get(cfg, NULL, "AUTOPUBLISH", &k, err);
        if (r > 0) {
                if (!strcasecmp(k.value, "Never") || !strcasecmp(k.value, "False"))
                        t->autopublish = AGENT_CRON_PUBLISH_NEVER;
                else if (!strcasecmp(k.value, "Always"))
                        t->autopublish = AGENT_CRON_PUBLISH_ALWAYS;
                else if (!strcasecmp(k.value, "If_Changed"))
                        t->autopublish = AGENT_CRON_PUBLISH_IF_CHANGED;
                else
                        r = knob_error(err, &k, -EINVAL, "'%s': Never, Always or If_Changed", k.value);
        }
        knob_done(&k);
        if (r < 0)
                return r;
        if ((r = knob_real(cfg, NULL, "MAX_JOB_LOAD", 0.1, 0, 1000, &t->max_job_load, &k, err)) < 0)
                return r;
        knob_done(&k);
        if ((r = knob_bool(cfg, NULL, "LOG_NON_ZERO_EXIT", false, &t->log_non_zero_exit, &k, err)) < 0)
                return r;
        knob_done(&k);
        if ((r = knob_get(cfg, NULL, "CONFIG_VAL", &k, err)) < 0)
                return r;
        t->config_val = TAKE_PTR(k.value);
        if ((r = knob_get(cfg, NULL, "USER", &k, err)) < 0)
                return r;
        if (r > 0)
                snprintf(t->user_at, sizeof t->user_at, "%s:%d", k.file, k.line);
        t->user = r > 0 ? TAKE_PTR(k.value) : strdup("nobody");
        return t->user ? 0 : -ENOMEM;
}

int agent_cron_read(Config *cfg, AgentCronTable **ret, ConfigError *err) {
        AgentCronTable *t = calloc(1, sizeof *t);
        if (!t)
                return -ENOMEM;
        int r = read_globals(cfg, t, err);
        Knob list;
        if (r >= 0)
                r = knob_get(cfg, NULL, "JOBLIST", &list, err);
        if (r <= 0) {
                if (r < 0)
                        agent_cron_table_free(t);
                else
                        *ret = t;
                return r < 0 ? r : 0;
        }
        char *save = NULL;
        for (char *name = strtok_r(list.value, ", \t\n", &save); name; name = strtok_r(NULL, ", \t\n", &save)) {
                for (size_t i = 0; i < t->n; i++)
                        if (!strcasecmp(t->jobs[i].name, name)) {
                                r = knob_error(err, &list, -EINVAL, "job %s is listed twice", name);
                                goto out;
                        }
                if (t->n == AGENT_CRON_MAX_JOBS) {
                        r = knob_error(err, &list, -EINVAL, "more than %d jobs", AGENT_CRON_MAX_JOBS);
                        goto out;
                }
                if (!t->jobs && !(t->jobs = calloc(AGENT_CRON_MAX_JOBS, sizeof *t->jobs))) {
                        r = -ENOMEM;
                        goto out;
                }
                r = read_job(cfg, name, &list, &t->jobs[t->n], err);
                if (r < 0) {
                        job_done(&t->jobs[t->n]);
                        goto out;
                }
                t->n++;
        }
out:
        knob_done(&list);
        if (r < 0) {
                agent_cron_table_free(t);
                return r;
        }
        *ret = t;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-knobs.c — what the configuration adds to every job submitted
 * (jobcmd.h, "What the configuration adds"): the attributes SUBMIT_ATTRS,
 * SUBMIT_EXPRS and SYSTEM_SUBMIT_ATTRS name, and APPEND_REQ_VANILLA (or,
 * when it is unset or empty, APPEND_REQUIREMENTS) and'ed to each job's
 * Requirements; and the warnings of the configuration of the queue's knobs
 * (jobcmd_config_warnings).
 *
 * HTCondor's condor_submit does both on the submit machine, from that
 * machine's configuration. glean does them at the central manager, as
 * each submission arrives and before SUBMIT_REQUIREMENT_<Name> is
 * evaluated: whoever builds the ads (glean submit, a relay, a program
 * speaking the protocol) cannot leave them out. As condor_submit, a job's
 * own attribute wins over a SUBMIT_ATTRS default ("+Name" in a submit
 * file overrides it); "+Name" and "MY.Name" in the list are the same as
 * Name here (the central manager cannot tell a submit command's value from
 * a "+" one). Names that decide who a job is (Owner, User, the accounting
 * ones, NiceUser) are refused at start-up: who submits decides them.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "jobcmd-internal.h"

#define MAX_SUBMIT_ATTRS 1024

typedef struct KnobAttr {
        char *name;
        ClassAdExpr *value;
} KnobAttr;

struct JobCmdKnobs {
        KnobAttr *attrs; /* SUBMIT_ATTRS, SUBMIT_EXPRS, SYSTEM_SUBMIT_ATTRS: each name once */
        size_t n_attrs;
        char *append;      /* the expression and'ed to Requirements, unparsed; NULL: none */
        const char *append_knob; /* which knob it came from */
};

static const char *const list_knobs[] = { "SUBMIT_ATTRS", "SUBMIT_EXPRS", "SYSTEM_SUBMIT_ATTRS" };

/* Who a job is: decided from who submits (jobcmd-policy.c), never by a default. */
static const char *const identity_attrs[] = { "Owner", "User", "AccountingGroup", "AcctGroup", "AcctGroupUser",
                                              "NiceUser" };

void jobcmd_knobs_free(JobCmdKnobs *k) {
        if (!k)
                return;
        for (size_t i = 0; i < k->n_attrs; i++) {
                free(k->attrs[i].name);
                classad_expr_free(k->attrs[i].value);
        }
        free(k->attrs);
        free(k->append);
        free(k);
}

static void jobcmd_knobs_freep(JobCmdKnobs **k) {
        jobcmd_knobs_free(*k);
}

/* "+Name" and "MY.Name" are Name. */
static const char *bare_name(const char *item) {
        if (item[0] == '+')
                return item + 1;
        if (strncasecmp(item, "MY.", 3) == 0)
                return item + 3;
        return item;
}

static bool is_identity(const char *name) {
        for (size_t i = 0; i < sizeof identity_attrs / sizeof *identity_attrs; i++)
                if (strcasecmp(name, identity_attrs[i]) == 0)
                        return true;
        return false;
}

/* An error about knob's definition (file and line), with msg. */
__attribute__((format(printf, 4, 5))) static int knob_error(const Config *cfg, const char *knob, ConfigError *err,
                                                             const char *fmt, ...) {
        const char *file = NULL;
        int line = 0;
        va_list ap;

        *err = (ConfigError) { 0 };
        if (config_where(cfg, knob, &file, &line) >= 0 && file) {
                snprintf(err->file, sizeof err->file, "%s", file);
                err->line = line;
        }
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static bool have_attr(const JobCmdKnobs *k, const char *name) {
        for (size_t i = 0; i < k->n_attrs; i++)
                if (strcasecmp(k->attrs[i].name, name) == 0)
                        return true;
        return false;
}

/* The names of one list knob, each with its macro's value. */
static int load_list(const Config *cfg, const char *knob, JobCmdKnobs *k, ConfigError *err) {
        char **items = NULL;
        int r = config_get_list(cfg, knob, &items, err);

        if (r == -ENOENT)
                return 0;
        for (size_t i = 0; r >= 0 && items && items[i]; i++) {
                const char *name = bare_name(items[i]);
                ClassAdExpr *e = NULL;

                if (!classad_is_plain_name(name)) {
                        r = knob_error(cfg, knob, err, "%s names '%.100s', which is not an attribute name", knob,
                                       items[i]);
                        break;
                }
                if (is_identity(name)) {
                        r = knob_error(cfg, knob, err,
                                       "%s names %s: who a job is (Owner, User, AccountingGroup, AcctGroup, "
                                       "AcctGroupUser, NiceUser) is decided by who submits it, not by the "
                                       "configuration",
                                       knob, name);
                        break;
                }
                if (have_attr(k, name))
                        continue;
                r = config_get_expr(cfg, name, JOBCMD_MODE, &e, err);
                if (r == -ENOENT) { /* as condor_submit: nothing to insert (jobcmd_config_warnings says so) */
                        r = 0;
                        continue;
                }
                if (r < 0)
                        break;
                if (k->n_attrs == MAX_SUBMIT_ATTRS) {
                        classad_expr_free(e);
                        r = knob_error(cfg, knob, err, "%s: more than %d attributes", knob, MAX_SUBMIT_ATTRS);
                        break;
                }
                KnobAttr *a = realloc(k->attrs, (k->n_attrs + 1) * sizeof *a);
                if (!a) {
                        classad_expr_free(e);
                        r = -ENOMEM;
                        break;
                }
                k->attrs = a;
                a[k->n_attrs] = (KnobAttr) { strdup(name), e };
                if (!a[k->n_attrs].name) {
                        classad_expr_free(e);
                        r = -ENOMEM;
                        break;
                }
                k->n_attrs++;
        }
        config_strv_free(items);
        return r;
}

/* APPEND_REQ_VANILLA when set (glean's jobs are all vanilla), else
 * APPEND_REQUIREMENTS; parsed here so that a broken one stops the start. */
static int load_append(const Config *cfg, JobCmdKnobs *k, ConfigError *err) {
        static const char *const knobs[] = { "APPEND_REQ_VANILLA", "APPEND_REQUIREMENTS" };

        for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++) {
                ClassAdExpr *e = NULL;
                int r = config_get_expr(cfg, knobs[i], JOBCMD_MODE, &e, err);

                if (r == -ENOENT)
                        continue;
                if (r < 0)
                        return r;
                k->append = classad_expr_unparse(e);
                classad_expr_free(e);
                if (!k->append)
                        return -ENOMEM;
                k->append_knob = knobs[i];
                return 0;
        }
        return 0;
}

int jobcmd_knobs_from_config(const Config *cfg, JobCmdKnobs **ret, ConfigError *err) {
        _cleanup_(jobcmd_knobs_freep) JobCmdKnobs *k = calloc(1, sizeof *k);
        int r;

        if (!k)
                return -ENOMEM;
        for (size_t i = 0; i < sizeof list_knobs / sizeof *list_knobs; i++)
                if ((r = load_list(cfg, list_knobs[i], k, err)) < 0)
                        return r;
        if ((r = load_append(cfg, k, err)) < 0)
                return r;
        *ret = TAKE_PTR(k);
        return 0;
}

const char *jobcmd_knobs_append(const JobCmdKnobs *k) {
        return k ? k->append : NULL;
}

size_t jobcmd_knobs_attrs(const JobCmdKnobs *k) {
        return k ? k->n_attrs : 0;
}

/* ad's Requirements (when it has one) and'ed with append. */
static int append_to(ClassAd *ad, const char *append) {
        _cleanup_free_ char *mine = NULL, *both = NULL;
        CaError cerr = {};
        int r;

        if (!ad || !classad_has(ad, "Requirements"))
                return 0;
        mine = classad_unparse_attr(ad, "Requirements");
        if (!mine || asprintf(&both, "(%s) && (%s)", mine, append) < 0) {
                both = NULL;
                return -ENOMEM;
        }
        r = classad_set_expr_text(ad, "Requirements", both, JOBCMD_MODE, &cerr);
        return r == -ENOMEM ? r : r < 0 ? -EINVAL : 0;
}

int jobcmd_knobs_apply_cluster(const JobCmdKnobs *k, ClassAd *cluster) {
        int r;

        if (!k || !cluster)
                return 0;
        for (size_t i = 0; i < k->n_attrs; i++)
                if (!classad_has(cluster, k->attrs[i].name) &&
                    (r = classad_set_expr(cluster, k->attrs[i].name, k->attrs[i].value)) < 0)
                        return r;
        return k->append ? append_to(cluster, k->append) : 0;
}

int jobcmd_knobs_apply_procs(const JobCmdKnobs *k, ClassAd *const *procs, size_t n) {
        int r;

        if (!k || !k->append)
                return 0;
        for (size_t i = 0; procs && i < n; i++)
                if ((r = append_to(procs[i], k->append)) < 0)
                        return r;
        return 0;
}

int jobcmd_knobs_apply_part(const JobCmdKnobs *k, ClassAd *cluster, bool first, ClassAd *const *procs, size_t n) {
        int r = first ? jobcmd_knobs_apply_cluster(k, cluster) : 0;
        return r < 0 ? r : jobcmd_knobs_apply_procs(k, procs, n);
}

/* ---- the warnings ---- */

typedef struct Warnings {
        char **v;
        size_t n;
} Warnings;

__attribute__((format(printf, 4, 5))) static int warn(Warnings *w, const Config *cfg, const char *knob,
                                                       const char *fmt, ...) {
        const char *file = NULL;
        int line = 0;
        char msg[700], *s = NULL;
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        if (config_where(cfg, knob, &file, &line) >= 0 && file && *file) {
                if (asprintf(&s, "%s:%d: %s", file, line, msg) < 0)
                        s = NULL;
        } else
                s = strdup(msg);
        char **v = s ? realloc(w->v, (w->n + 2) * sizeof *v) : NULL;
        if (!v) {
                free(s);
                return -ENOMEM;
        }
        w->v = v;
        v[w->n++] = s;
        v[w->n] = NULL;
        return 0;
}

/* Set by a file (not a built-in default), and not empty. */
static bool set_by_file(const Config *cfg, const char *knob, char **ret_value) {
        const char *file = NULL;
        int line = 0;
        ConfigError err = {};
        char *v = NULL;

        if (config_where(cfg, knob, &file, &line) < 0 || !file || strcmp(file, "<default>") == 0)
                return false;
        if (config_get(cfg, knob, &v, &err) < 0 || !*v) {
                free(v);
                return false;
        }
        *ret_value = v;
        return true;
}

static int warn_lists(const Config *cfg, Warnings *w) {
        int r = 0;

        for (size_t i = 0; r >= 0 && i < sizeof list_knobs / sizeof *list_knobs; i++) {
                ConfigError err = {};
                char **items = NULL;

                if (config_get_list(cfg, list_knobs[i], &items, &err) < 0)
                        continue;
                for (size_t k = 0; r >= 0 && items && items[k]; k++) {
                        const char *name = bare_name(items[k]);
                        char *v = NULL;

                        if (!classad_is_plain_name(name) || is_identity(name))
                                continue; /* an error at the start */
                        if (queue_managed_attr(name))
                                r = warn(w, cfg, list_knobs[i],
                                         "%s names %s, which the queue sets itself: the value is not used",
                                         list_knobs[i], name);
                        else if (config_get(cfg, name, &v, &err) < 0 || !*v)
                                r = warn(w, cfg, list_knobs[i],
                                         "%s names %s, which is not defined: no job gets it", list_knobs[i], name);
                        free(v);
                }
                config_strv_free(items);
        }
        return r;
}

int jobcmd_config_warnings(const Config *cfg, char ***ret) {
        Warnings w = {};
        char *v = NULL;
        int r;

        r = warn_lists(cfg, &w);
        if (r >= 0 && set_by_file(cfg, "HISTORY", &v))
                r = warn(&w, cfg, "HISTORY",
                         "HISTORY = %s: glean keeps the history of the jobs in its database (NEGOTIATOR_DATABASE), "
                         "not in this file: the file is not written (glean history reads the database; "
                         "HISTORY = \"\" turns the history off)",
                         v);
        free(v);
        static const char *const rotations[] = { "ROTATE_HISTORY_DAILY", "ROTATE_HISTORY_MONTHLY" };
        for (size_t i = 0; i < sizeof rotations / sizeof *rotations && r >= 0; i++) {
                v = NULL;
                if (set_by_file(cfg, rotations[i], &v))
                        r = warn(&w, cfg, rotations[i],
                                 "%s: glean's history is not a file to rotate; it is bounded by MAX_HISTORY_LOG, "
                                 "MAX_HISTORY_ROTATIONS, HISTORY_MAX_JOBS and HISTORY_DURATION",
                                 rotations[i]);
                free(v);
        }
        if (r < 0) {
                config_strv_free(w.v);
                return r;
        }
        *ret = w.v;
        return (int) w.n;
}

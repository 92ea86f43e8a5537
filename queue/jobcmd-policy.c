/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd-policy.c — who a submitted job may say it is, and the pool's
 * submit requirements (jobcmd.h, JobCmdPolicy).
 *
 * The identity attributes (Owner, User, AccountingGroup, AcctGroup,
 * AcctGroupUser, NiceUser) decide who runs and who is charged: they must
 * be literals, the same for every proc of a cluster, and are read as such
 * afterwards (acct_literal_*), never evaluated. The accounting user named
 * must be the caller's own name and the group one the configuration lets
 * the caller use (ACCOUNTING_GROUPS_ALLOWED, ACCOUNTING_GROUPS_ALLOWED_<user>);
 * root and ADMINISTRATORS may name anyone. Then SUBMIT_REQUIREMENT_NAMES:
 * each SUBMIT_REQUIREMENT_<Name> must be true of every job (a scheduler ad
 * as MY, the job's ad as TARGET, its Owner and User the caller's, as
 * condor_schedd evaluates them), else the submit is refused with
 * SUBMIT_REQUIREMENT_<Name>_REASON; one with _IS_WARNING true is a submit
 * warning: the submission is accepted, the reason told. JOB_TRANSFORM_NAMES
 * (transform.h) is loaded here too; a Submit's parts go through it after
 * what the configuration adds (submit-knobs.c) and before these checks,
 * which see what it made of the jobs (jobcmd-transform.c).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "jobcmd-internal.h"

#define ALLOWED_KNOB "ACCOUNTING_GROUPS_ALLOWED"
#define ALLOWED_PREFIX ALLOWED_KNOB "_"

typedef struct UserGroups {
        char *user;
        char **groups;
} UserGroups;

typedef struct Requirement {
        char *name;
        ClassAdExpr *expr, *reason;
        bool is_warning; /* SUBMIT_REQUIREMENT_<Name>_IS_WARNING */
} Requirement;

struct JobCmdPolicy {
        char **groups;          /* ACCOUNTING_GROUPS_ALLOWED: every user's */
        UserGroups *users;      /* ACCOUNTING_GROUPS_ALLOWED_<user> */
        size_t n_users;
        Requirement *reqs;      /* SUBMIT_REQUIREMENT_NAMES, in order */
        size_t n_reqs;
        ClassAd *schedd;        /* MY of the requirements: the scheduler's ad */
        JobCmdKnobs *knobs;     /* SUBMIT_ATTRS, APPEND_REQUIREMENTS (submit-knobs.c) */
        QueueXforms *xforms;    /* JOB_TRANSFORM_NAMES (jobcmd-transform.c) */
};

const QueueXforms *jobcmd_policy_xforms(const JobCmdPolicy *p) {
        return p ? p->xforms : NULL;
}

void jobcmd_policy_free(JobCmdPolicy *p) {
        if (!p)
                return;
        config_strv_free(p->groups);
        for (size_t i = 0; i < p->n_users; i++) {
                free(p->users[i].user);
                config_strv_free(p->users[i].groups);
        }
        free(p->users);
        for (size_t i = 0; i < p->n_reqs; i++) {
                free(p->reqs[i].name);
                classad_expr_free(p->reqs[i].expr);
                classad_expr_free(p->reqs[i].reason);
        }
        free(p->reqs);
        classad_free(p->schedd);
        jobcmd_knobs_free(p->knobs);
        queue_xforms_free(p->xforms);
        free(p);
}

const JobCmdKnobs *jobcmd_policy_knobs(const JobCmdPolicy *p) {
        return p ? p->knobs : NULL;
}

static void jobcmd_policy_freep(JobCmdPolicy **p) {
        jobcmd_policy_free(*p);
}

static int get_list(const Config *cfg, const char *name, char ***ret, ConfigError *err) {
        int r = config_get_list(cfg, name, ret, err);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        return r;
}

static int load_users(const Config *cfg, JobCmdPolicy *p, ConfigError *err) {
        char **names = NULL;
        int r = config_names(cfg, &names);
        if (r < 0)
                return r;
        for (size_t i = 0; names && names[i] && r >= 0; i++) {
                const char *n = names[i];
                if (strncasecmp(n, ALLOWED_PREFIX, strlen(ALLOWED_PREFIX)) != 0 || !n[strlen(ALLOWED_PREFIX)])
                        continue;
                UserGroups *u = realloc(p->users, (p->n_users + 1) * sizeof *u);
                if (!u) {
                        r = -ENOMEM;
                        break;
                }
                p->users = u;
                u = &p->users[p->n_users];
                *u = (UserGroups){ 0 };
                if (!(u->user = strdup(n + strlen(ALLOWED_PREFIX)))) {
                        r = -ENOMEM;
                        break;
                }
                p->n_users++;
                r = get_list(cfg, n, &u->groups, err);
        }
        config_strv_free(names);
        return r;
}

static int load_requirements(const Config *cfg, JobCmdPolicy *p, ConfigError *err) {
        char **names = NULL, knob[300];
        int r = get_list(cfg, "SUBMIT_REQUIREMENT_NAMES", &names, err);
        size_t n = 0;

        if (r < 0)
                return r;
        while (names && names[n])
                n++;
        if (n && !(p->reqs = calloc(n, sizeof *p->reqs))) {
                config_strv_free(names);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n && r >= 0; i++) {
                if (strcmp(names[i], "NAMES") == 0)
                        continue; /* SUBMIT_REQUIREMENT_NAMES itself: HTCondor passes over it too */
                Requirement *q = &p->reqs[p->n_reqs++];
                if (!(q->name = strdup(names[i]))) {
                        r = -ENOMEM;
                        break;
                }
                snprintf(knob, sizeof knob, "SUBMIT_REQUIREMENT_%s", names[i]);
                r = config_get_expr(cfg, knob, JOBCMD_MODE, &q->expr, err);
                if (r == -ENOENT) {
                        const char *file = NULL;
                        int line = 0;
                        *err = (ConfigError){ 0 };
                        if (config_where(cfg, "SUBMIT_REQUIREMENT_NAMES", &file, &line) >= 0 && file) {
                                snprintf(err->file, sizeof err->file, "%s", file);
                                err->line = line;
                        }
                        snprintf(err->msg, sizeof err->msg,
                                 "SUBMIT_REQUIREMENT_NAMES names %s, but %s is not defined", names[i], knob);
                        r = -EINVAL;
                        break;
                }
                if (r < 0)
                        break;
                snprintf(knob, sizeof knob, "SUBMIT_REQUIREMENT_%s_REASON", names[i]);
                r = config_get_expr(cfg, knob, JOBCMD_MODE, &q->reason, err);
                if (r == -ENOENT)
                        r = 0;
                if (r < 0)
                        break;
                snprintf(knob, sizeof knob, "SUBMIT_REQUIREMENT_%s_IS_WARNING", names[i]);
                r = config_get_bool(cfg, knob, &q->is_warning, err);
                if (r == -ENOENT)
                        r = 0;
        }
        config_strv_free(names);
        return r;
}

/* The scheduler's ad, MY of SUBMIT_REQUIREMENT_<Name>: SCHEDD. is it,
 * JOB. the job (TARGET), as condor_schedd names them. */
static int schedd_ad(ClassAd **ret) {
        static const char text[] = "[ MyType = \"Scheduler\"; SCHEDD = MY; JOB = TARGET ]";
        CaError cerr = {};
        int r = classad_parse(text, sizeof text - 1, JOBCMD_MODE, ret, &cerr);
        return r == -ENOMEM ? r : r < 0 ? -EINVAL : 0;
}

int jobcmd_policy_from_config(const Config *cfg, JobCmdPolicy **ret, ConfigError *err) {
        _cleanup_(jobcmd_policy_freep) JobCmdPolicy *p = calloc(1, sizeof *p);
        int r;

        if (!p)
                return -ENOMEM;
        if ((r = get_list(cfg, ALLOWED_KNOB, &p->groups, err)) < 0 || (r = load_users(cfg, p, err)) < 0 ||
            (r = load_requirements(cfg, p, err)) < 0 || (r = jobcmd_knobs_from_config(cfg, &p->knobs, err)) < 0 ||
            (r = queue_xforms_from_config(cfg, &p->xforms, err)) < 0 || (r = schedd_ad(&p->schedd)) < 0)
                return r;
        *ret = p;
        p = NULL;
        return 0;
}

/* ---- the identity ---- */

static const char *const string_attrs[] = { "Owner", "User", "AccountingGroup", "AcctGroup", "AcctGroupUser" };

/* Every identity attribute of ad a literal (what = "" or " of proc N"). */
static int check_literals(const ClassAd *ad, const char *what, char *why, size_t whylen) {
        for (size_t i = 0; i < sizeof string_attrs / sizeof *string_attrs; i++) {
                _cleanup_free_ char *v = NULL;
                int r = acct_literal_string(ad, string_attrs[i], &v);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return glean_why(-EINVAL, why, whylen,
                                         "%s%s must be a literal string (a name decided once, at submit), not an "
                                         "expression", string_attrs[i], what);
        }
        bool nice;
        int r = acct_literal_bool(ad, "NiceUser", &nice);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "NiceUser%s must be a literal true or false, not an expression",
                                 what);
        return 0;
}

/* Whether the list allows group: "*", the group, or a group above it
 * ("group_physics" allows "group_physics.theory"). */
static bool list_allows(char *const *list, const char *group) {
        for (size_t i = 0; list && list[i]; i++) {
                size_t n = strlen(list[i]);
                if (strcmp(list[i], "*") == 0 || strcasecmp(list[i], group) == 0 ||
                    (n && strncasecmp(list[i], group, n) == 0 && group[n] == '.'))
                        return true;
        }
        return false;
}

static bool group_allowed(const JobCmdPolicy *p, const char *user, const char *group) {
        if (!p)
                return false;
        if (list_allows(p->groups, group))
                return true;
        for (size_t i = 0; i < p->n_users; i++)
                if (strcmp(p->users[i].user, user) == 0 && list_allows(p->users[i].groups, group))
                        return true;
        return false;
}

/* The accounting user and group the cluster names (literals, checked),
 * and whether they agree with each other. */
static int check_names(const JobCmdPolicy *p, const QueueRequester *who, const ClassAd *cluster, char *why,
                       size_t whylen) {
        _cleanup_free_ char *acct = NULL, *agroup = NULL, *auser = NULL;
        char *group = NULL, *user = NULL;
        int r;

        if ((r = acct_literal_string(cluster, "AccountingGroup", &acct)) < 0 ||
            (r = acct_literal_string(cluster, "AcctGroup", &agroup)) < 0 ||
            (r = acct_literal_string(cluster, "AcctGroupUser", &auser)) < 0)
                return r == -ENOMEM ? r : -EINVAL;
        if (acct) {
                char *dot = strrchr(acct, '.');
                if ((r = acct_check_group_name(acct, why, whylen)) < 0)
                        return r;
                if (dot) {
                        *dot = '\0';
                        group = acct;
                        user = dot + 1;
                } else
                        user = acct;
                if (agroup && (!group || strcmp(agroup, group) != 0))
                        return glean_why(-EINVAL, why, whylen, "AcctGroup \"%s\" disagrees with AccountingGroup",
                                         agroup);
                if (auser && strcmp(auser, user) != 0)
                        return glean_why(-EINVAL, why, whylen,
                                         "AcctGroupUser \"%s\" disagrees with AccountingGroup (user \"%s\")", auser,
                                         user);
        } else {
                group = agroup;
                user = auser;
        }
        if (who->admin)
                return 0;
        if (user && strcmp(user, who->user) != 0)
                return glean_why(-EPERM, why, whylen,
                                 "the accounting user \"%s\" is not %s: a user is charged under their own name only "
                                 "(root and ADMINISTRATORS may name another)",
                                 user, who->user);
        if (group && !group_allowed(p, who->user, group))
                return glean_why(-EPERM, why, whylen,
                                 "%s may not use the accounting group \"%s\" (allowed by " ALLOWED_KNOB
                                 " or " ALLOWED_PREFIX "%s)",
                                 who->user, group, who->user);
        return 0;
}

/* ---- SUBMIT_REQUIREMENT_<Name> ---- */

/* 1 met, 0 not met, -EDOM neither a boolean nor a number. */
static int holds(const JobCmdPolicy *p, const ClassAdExpr *e, const ClassAd *job) {
        CaValue v = ca_undefined();
        int yes = -EDOM;

        if (classad_expr_eval(e, p->schedd, job, JOBCMD_MODE, &v) >= 0) {
                if (v.type == CA_BOOL)
                        yes = v.u.b;
                else if (v.type == CA_INT)
                        yes = v.u.i != 0;
                else if (v.type == CA_REAL)
                        yes = v.u.r != 0;
                ca_value_clear(&v);
        }
        return yes;
}

/* The reason of a requirement not met (its _REASON when a string). */
static void reason_of(const JobCmdPolicy *p, const Requirement *q, const ClassAd *job, char *why, size_t whylen) {
        CaValue v = ca_undefined();
        if (q->reason && classad_expr_eval(q->reason, p->schedd, job, JOBCMD_MODE, &v) >= 0 && v.type == CA_STRING)
                snprintf(why, whylen, "SUBMIT_REQUIREMENT_%s: %s", q->name, v.u.s->s);
        else
                snprintf(why, whylen, "the job does not meet SUBMIT_REQUIREMENT_%s", q->name);
        ca_value_clear(&v);
}

/* Every requirement of one job: 0, 1 with why a warning's reason, -EPERM. */
static int check_job(const JobCmdPolicy *p, const ClassAd *job, char *why, size_t whylen) {
        int warned = 0;

        for (size_t k = 0; k < p->n_reqs; k++) {
                const Requirement *q = &p->reqs[k];
                int met = holds(p, q->expr, job);
                if (met == -EDOM)
                        return glean_why(-EPERM, why, whylen,
                                         "SUBMIT_REQUIREMENT_%s evaluated to neither true nor false for this job",
                                         q->name);
                if (met)
                        continue;
                reason_of(p, q, job, why, whylen);
                if (!q->is_warning)
                        return -EPERM;
                warned = 1; /* HTCondor: a warning goes on; the last one is told */
        }
        return warned;
}

static int check_requirements(const JobCmdPolicy *p, const QueueRequester *who, const char *uid_domain,
                              const ClassAd *cluster, ClassAd *const *procs, size_t n, char *why, size_t whylen) {
        ClassAd *base = NULL;
        char user[600], warning[512] = "";
        int r;

        if (!p || p->n_reqs == 0)
                return 0;
        /* The job as it will be: Owner and User the caller's. */
        snprintf(user, sizeof user, "%s%s%s", who->user, uid_domain && *uid_domain ? "@" : "",
                 uid_domain ? uid_domain : "");
        if ((r = cluster ? classad_copy(cluster, &base) : classad_new(&base)) < 0 ||
            (r = classad_set_string(base, "Owner", who->user)) < 0 || (r = classad_set_string(base, "User", user)) < 0)
                goto out;
        for (size_t i = 0; i < n && r >= 0; i++) {
                ClassAd *job = procs && procs[i] ? procs[i] : base;
                bool chained = job != base && classad_chain(job, base) >= 0;
                if (job != base && !chained) {
                        r = -ENOMEM;
                        break;
                }
                r = check_job(p, job, why, whylen);
                if (r == 1)
                        snprintf(warning, sizeof warning, "%s", why);
                if (chained)
                        classad_unchain(job);
                if (job == base && r >= 0) {
                        /* Every later proc without attributes of its own is the same job. */
                        while (i + 1 < n && !(procs && procs[i + 1]))
                                i++;
                }
        }
out:
        classad_free(base);
        if (r >= 0 && warning[0]) {
                snprintf(why, whylen, "%s", warning);
                return 1;
        }
        return r < 0 ? r : 0;
}

int jobcmd_policy_check(const JobCmdPolicy *p, const QueueRequester *who, const char *uid_domain,
                        const ClassAd *cluster, ClassAd *const *procs, size_t n, char *why, size_t whylen) {
        return jobcmd_policy_check_part(p, who, uid_domain, cluster, procs, n, 0, why, whylen);
}

int jobcmd_policy_check_part(const JobCmdPolicy *p, const QueueRequester *who, const char *uid_domain,
                             const ClassAd *cluster, ClassAd *const *procs, size_t n, size_t first, char *why,
                             size_t whylen) {
        char what[64];
        int r;

        if (!who || !who->user)
                return glean_why(-EINVAL, why, whylen, "no user name to submit as");
        if (cluster && (r = check_literals(cluster, "", why, whylen)) < 0)
                return r;
        for (size_t i = 0; procs && i < n; i++) {
                if (!procs[i])
                        continue;
                snprintf(what, sizeof what, " of proc %zu", first + i);
                if ((r = check_literals(procs[i], what, why, whylen)) < 0)
                        return r;
                /* One cluster, one submitter (queue.h: charged per cluster). */
                static const char *const per_cluster[] = { "AccountingGroup", "AcctGroup", "AcctGroupUser",
                                                           "NiceUser" };
                for (size_t k = 0; k < sizeof per_cluster / sizeof *per_cluster; k++) {
                        const char *name = per_cluster[k];
                        if (!classad_has(procs[i], name))
                                continue;
                        _cleanup_free_ char *mine = classad_unparse_attr(procs[i], name);
                        _cleanup_free_ char *shared = cluster ? classad_unparse_attr(cluster, name) : NULL;
                        if (!mine || !shared || strcmp(mine, shared) != 0)
                                return glean_why(-EINVAL, why, whylen,
                                                 "%s differs between the jobs of one submission (proc %zu): a "
                                                 "cluster is charged to one submitter; submit them apart",
                                                 name, first + i);
                }
        }
        if (cluster && (r = check_names(p, who, cluster, why, whylen)) < 0)
                return r;
        return check_requirements(p, who, uid_domain, cluster, procs, n, why, whylen);
}

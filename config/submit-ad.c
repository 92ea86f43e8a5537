/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit-ad.c — the job ad of one job, from the submit commands as they
 * expand for it, with HTCondor's attribute names (condor_submit's
 * SubmitHash::make_job_ad for the vanilla universe).
 *
 *   universe                  JobUniverse (vanilla = 5, the only one)
 *   executable                Cmd (absolute when transferred)
 *   transfer_executable       TransferExecutable = false when false
 *   arguments                 Args (old syntax) or Arguments (new syntax)
 *   environment, getenv       Environment (new syntax)
 *   initialdir                Iwd
 *   input, output, error      In, Out, Err (default /dev/null)
 *   log                       UserLog (absolute)
 *   should_transfer_files, transfer_input_files, ...
 *                             ShouldTransferFiles, TransferInput, ...:
 *                             submit-xfer.c
 *   request_*                 RequestCpus, RequestMemory, RequestDisk, Request<Name>
 *   requirements, rank        Requirements (completed), Rank (default 0.0)
 *   priority, nice_user       JobPrio, NiceUser
 *   accounting_group[_user]   AcctGroup, AcctGroupUser, AccountingGroup (group.user)
 *   kill_sig                  KillSig ("SIGTERM", ...)
 *   max_job_retirement_time   MaxJobRetirementTime (0 for nice_user jobs)
 *   job_lease_duration        JobLeaseDuration (default JOB_DEFAULT_LEASE_DURATION, 1200)
 *   job_max_vacate_time       JobMaxVacateTime
 *   periodic_hold[_reason|_subcode], periodic_release, periodic_remove,
 *   on_exit_hold[_reason|_subcode], on_exit_remove
 *                             PeriodicHold[Reason|SubCode], PeriodicRelease,
 *                             PeriodicRemove, OnExitHold[Reason|SubCode],
 *                             OnExitRemove: expressions the queue evaluates
 *   hold                      JobStatus = 5: the queue holds it on arrival
 *                             ("submitted on hold", HoldReasonCode 15)
 *   batch_name                JobBatchName
 *   +Name, MY.Name            Name, last, so they override what precedes
 *
 * and MyType, TargetType, ClusterId, ProcId, Owner, QDate,
 * EnteredCurrentStatus, JobStatus = 1 (idle), DiskUsage, ImageSize.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "submit-internal.h"

#define NAMES(...) ((const char *const[]) { __VA_ARGS__, NULL })

#define K_UNIVERSE NAMES("universe")
#define K_EXECUTABLE NAMES("executable")
#define K_TRANSFER_EXE NAMES("transfer_executable", "TransferExecutable")
#define K_ARGUMENTS NAMES("arguments", "Args")
#define K_ENVIRONMENT NAMES("environment", "Env")
#define K_GETENV NAMES("getenv", "get_env")
#define K_INITIALDIR NAMES("initialdir", "initial_dir", "Iwd", "job_iwd")
#define K_INPUT NAMES("input", "stdin")
#define K_OUTPUT NAMES("output", "stdout")
#define K_ERROR NAMES("error", "stderr")
#define K_LOG NAMES("log", "UserLog")
#define K_PRIORITY NAMES("priority", "prio", "JobPrio")
#define K_NICE_USER NAMES("nice_user", "NiceUser")
#define K_ACCT_GROUP NAMES("accounting_group", "AcctGroup")
#define K_ACCT_USER NAMES("accounting_group_user", "AcctGroupUser")
#define K_KILL_SIG NAMES("kill_sig", "KillSig")
#define K_RETIREMENT NAMES("max_job_retirement_time", "MaxJobRetirementTime")
#define K_LEASE NAMES("job_lease_duration", "JobLeaseDuration")
#define K_HOLD NAMES("hold")
#define K_BATCH_NAME NAMES("batch_name", "JobBatchName")
#define K_REQUIREMENTS NAMES("requirements")
#define K_RANK NAMES("rank", "preferences")

#define DEFAULT_LEASE_DURATION 1200 /* seed 002, 3.5.5.1: 20 minutes */
#define MIN_LEASE_DURATION 20

int submit_set_expr(Submit *s, ClassAd *ad, const char *attr, const char *text, int line, const char *what) {
        CaError caerr = {};
        int r;

        r = classad_set_expr_text(ad, attr, text, CA_MODE_OLD, &caerr);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return config_error(s->err, s->file, line, -EINVAL,
                                    "%s: cannot parse '%s' as an expression: %s (column %d)", what, text,
                                    caerr.msg[0] ? caerr.msg : "syntax error", caerr.column);
        return 0;
}

/* path made absolute against dir; leading "./" dropped. */
static int join_path(const char *dir, const char *path, char **ret) {
        while (path[0] == '.' && path[1] == '/')
                for (path += 2; *path == '/'; path++)
                        ;
        if (path[0] == '/')
                *ret = strdup(path);
        else if (!*path || strcmp(path, ".") == 0)
                *ret = strdup(dir);
        else if (asprintf(ret, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, path) < 0)
                *ret = NULL;
        return *ret ? 0 : -ENOMEM;
}

/* A value looked up with its line; v is NULL when unset or empty. */
typedef struct Cmd {
        char *v;
        int line;
} Cmd;

static void cmd_done(Cmd *c) {
        free(c->v);
        c->v = NULL;
}

static int get(Submit *s, const char *const *names, Cmd *ret) {
        cmd_done(ret);
        return submit_lookup(s, names, &ret->v, &ret->line);
}

static int set_universe(Submit *s, ClassAd *ad) {
        static const char *const others[] = {
                "standard", "scheduler", "local", "grid", "java", "vm", "parallel", "docker", "container", "mpi", "pvm",
        };
        _cleanup_(cmd_done) Cmd c = {};
        int r;

        r = get(s, K_UNIVERSE, &c);
        if (r < 0)
                return r;
        if (c.v && strcasecmp(c.v, "vanilla") != 0) {
                for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++)
                        if (strcasecmp(c.v, others[i]) == 0)
                                return config_error(s->err, s->file, c.line, -EOPNOTSUPP,
                                                    "universe '%s' is not supported: glean runs vanilla jobs", c.v);
                return config_error(s->err, s->file, c.line, -EINVAL, "unknown universe '%s'", c.v);
        }
        return classad_set_int(ad, "JobUniverse", 5);
}

/* Cmd, and DiskUsage/ImageSize from the executable's size. As in
 * condor_submit, a transferred executable is found relative to the current
 * directory (not initialdir) and must exist; one that is not transferred
 * is left as written, to be found on the execute machine. */
static int set_executable(Submit *s, ClassAd *ad) {
        _cleanup_(cmd_done) Cmd c = {}, t = {};
        _cleanup_config_free_ char *path = NULL;
        int64_t kb = 1;
        bool transfer = true;
        int r;

        r = get(s, K_EXECUTABLE, &c);
        if (r < 0)
                return r;
        if (!c.v)
                return config_error(s->err, s->file, c.line, -EINVAL, "no executable given (executable = PROGRAM)");
        r = get(s, K_TRANSFER_EXE, &t);
        if (r < 0)
                return r;
        if (t.v && submit_parse_bool(t.v, &transfer) < 0)
                return config_error(s->err, s->file, t.line, -EINVAL, "transfer_executable: '%s' is not a boolean",
                                    t.v);
        if (transfer) {
                struct stat st;

                r = join_path(s->iwd, c.v, &path);
                if (r < 0)
                        return r;
                if (stat(path, &st) < 0)
                        return config_error(s->err, s->file, c.line, -errno, "executable '%s': %s", path,
                                            strerror(errno));
                if (S_ISDIR(st.st_mode))
                        return config_error(s->err, s->file, c.line, -EISDIR, "executable '%s' is a directory", path);
                kb = ((int64_t) st.st_size + 1023) / 1024;
                if (kb < 1)
                        kb = 1;
        }
        r = classad_set_string(ad, "Cmd", path ? path : c.v);
        if (r >= 0 && !transfer)
                r = classad_set_bool(ad, "TransferExecutable", false);
        if (r >= 0)
                r = classad_set_int(ad, "DiskUsage", kb);
        if (r >= 0)
                r = classad_set_int(ad, "ImageSize", kb);
        return r;
}

static int set_arguments(Submit *s, ClassAd *ad) {
        _cleanup_(cmd_done) Cmd c = {};
        _cleanup_config_free_ char *joined = NULL;
        ConfigStrv args = {};
        char msg[256];
        bool v2 = true;
        int r;

        r = get(s, K_ARGUMENTS, &c);
        if (r < 0)
                return r;
        if (c.v) {
                r = submit_args_parse(c.v, &args, &v2, msg, sizeof(msg));
                if (r == -EINVAL)
                        return config_error(s->err, s->file, c.line, r, "arguments: %s", msg);
                if (r < 0)
                        return r;
        }
        r = v2 ? config_args_join_v2(&args, &joined) : config_args_join_v1(&args, &joined);
        config_strv_done(&args);
        if (r < 0)
                return r;
        return classad_set_string(ad, v2 ? "Arguments" : "Args", joined);
}

static int set_environment(Submit *s, ClassAd *ad) {
        _cleanup_(cmd_done) Cmd c = {}, g = {};
        _cleanup_config_free_ char *joined = NULL;
        ConfigStrv env = {};
        char msg[256];
        bool import = false;
        int r;

        r = get(s, K_ENVIRONMENT, &c);
        if (r >= 0)
                r = get(s, K_GETENV, &g);
        if (r < 0)
                return r;
        if (g.v && submit_parse_bool(g.v, &import) < 0)
                return config_error(s->err, s->file, g.line, -EINVAL, "getenv: '%s' is not a boolean", g.v);
        if (c.v) {
                r = submit_env_parse(c.v, &env, msg, sizeof(msg));
                if (r == -EINVAL)
                        return config_error(s->err, s->file, c.line, r, "environment: %s", msg);
                if (r < 0)
                        return r;
        }
        r = import ? submit_env_import(&env) : 0;
        if (r >= 0)
                r = config_args_join_v2(&env, &joined);
        config_strv_done(&env);
        if (r < 0)
                return r;
        return classad_set_string(ad, "Environment", joined);
}

static int set_std_file(Submit *s, ClassAd *ad, const char *const *names, const char *attr) {
        _cleanup_(cmd_done) Cmd c = {};
        int r;

        r = get(s, names, &c);
        if (r < 0)
                return r;
        if (c.v && strpbrk(c.v, " \t\r\n"))
                return config_error(s->err, s->file, c.line, -EINVAL, "%s: one file name expected, got '%s'",
                                    names[0], c.v);
        return classad_set_string(ad, attr, c.v ? c.v : "/dev/null");
}

static int set_files(Submit *s, ClassAd *ad, const char *iwd) {
        _cleanup_(cmd_done) Cmd c = {};
        _cleanup_config_free_ char *log = NULL;
        int r;

        r = set_std_file(s, ad, K_INPUT, "In");
        if (r >= 0)
                r = set_std_file(s, ad, K_OUTPUT, "Out");
        if (r >= 0)
                r = set_std_file(s, ad, K_ERROR, "Err");
        if (r >= 0)
                r = get(s, K_LOG, &c);
        if (r < 0 || !c.v)
                return r;
        r = join_path(iwd, c.v, &log);
        if (r < 0)
                return r;
        return classad_set_string(ad, "UserLog", log);
}

/* JobPrio and NiceUser; *ret_nice for the retirement time. */
static int set_priority(Submit *s, ClassAd *ad, bool *ret_nice) {
        _cleanup_(cmd_done) Cmd c = {};
        int64_t prio = 0;
        bool nice = false;
        int r;

        r = get(s, K_PRIORITY, &c);
        if (r < 0)
                return r;
        if (c.v && submit_eval_int(c.v, &prio) < 0)
                return config_error(s->err, s->file, c.line, -EINVAL, "priority: '%s' is not a whole number", c.v);
        r = get(s, K_NICE_USER, &c);
        if (r < 0)
                return r;
        if (c.v && submit_parse_bool(c.v, &nice) < 0)
                return config_error(s->err, s->file, c.line, -EINVAL, "nice_user: '%s' is not a boolean", c.v);
        r = classad_set_int(ad, "JobPrio", prio);
        if (r >= 0)
                r = classad_set_bool(ad, "NiceUser", nice);
        *ret_nice = nice;
        return r;
}

static int set_requirements_and_rank(Submit *s, ClassAd *ad) {
        _cleanup_(cmd_done) Cmd c = {};
        _cleanup_config_free_ char *req = NULL;
        int r;

        r = get(s, K_RANK, &c);
        if (r < 0)
                return r;
        r = c.v ? submit_set_expr(s, ad, "Rank", c.v, c.line, "rank") : classad_set_real(ad, "Rank", 0.0);
        if (r < 0)
                return r;

        r = get(s, K_REQUIREMENTS, &c);
        if (r < 0)
                return r;
        if (c.v) {
                /* The user's text alone first, so that an error points at it. */
                _cleanup_(submit_expr_freep) ClassAdExpr *e = NULL;
                CaError caerr = {};

                r = classad_expr_parse(c.v, strlen(c.v), CA_MODE_OLD, &e, &caerr);
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        return config_error(s->err, s->file, c.line, -EINVAL,
                                            "requirements: cannot parse '%s' as an expression: %s (column %d)", c.v,
                                            caerr.msg[0] ? caerr.msg : "syntax error", caerr.column);
        }
        r = submit_requirements(s, ad, c.v, &req);
        if (r < 0)
                return r;
        return submit_set_expr(s, ad, "Requirements", req, c.line, "requirements");
}

static int set_policy(Submit *s, ClassAd *ad, bool nice) {
        _cleanup_(cmd_done) Cmd c = {};
        int64_t lease;
        int r;

        r = get(s, K_KILL_SIG, &c);
        if (r < 0)
                return r;
        if (c.v) {
                const char *sig = submit_signal_name(c.v);

                if (!sig)
                        return config_error(s->err, s->file, c.line, -EINVAL, "kill_sig: unknown signal '%s'", c.v);
                r = classad_set_string(ad, "KillSig", sig);
                if (r < 0)
                        return r;
        }

        r = get(s, K_RETIREMENT, &c);
        if (r < 0)
                return r;
        if (c.v)
                r = submit_set_expr(s, ad, "MaxJobRetirementTime", c.v, c.line, "max_job_retirement_time");
        else if (nice)
                r = classad_set_int(ad, "MaxJobRetirementTime", 0);
        if (r < 0)
                return r;

        r = get(s, K_LEASE, &c);
        if (r < 0)
                return r;
        if (!c.v) {
                ConfigError cerr = {};

                r = config_get_int(s->cfg, "JOB_DEFAULT_LEASE_DURATION", &lease, &cerr);
                if (r == -ENOENT)
                        lease = DEFAULT_LEASE_DURATION;
                else if (r < 0) {
                        if (s->err)
                                *s->err = cerr;
                        return r;
                }
                return lease > 0 ? classad_set_int(ad, "JobLeaseDuration", lease) : 0;
        }
        if (submit_eval_int(c.v, &lease) < 0)
                return submit_set_expr(s, ad, "JobLeaseDuration", c.v, c.line, "job_lease_duration");
        if (lease < 0)
                return config_error(s->err, s->file, c.line, -EINVAL, "job_lease_duration: negative duration %lld",
                                    (long long) lease);
        if (lease == 0)
                return 0;
        if (lease < MIN_LEASE_DURATION) {
                r = submit_warn(s, c.line, "job_lease_duration %lld is too short, using %d seconds",
                                (long long) lease, MIN_LEASE_DURATION);
                if (r < 0)
                        return r;
                lease = MIN_LEASE_DURATION;
        }
        return classad_set_int(ad, "JobLeaseDuration", lease);
}

/* Submit commands whose value is the job attribute's expression as written. */
static const struct {
        const char *command, *attr;
} job_exprs[] = {
        { "job_max_vacate_time", "JobMaxVacateTime" },
        { "periodic_hold", "PeriodicHold" },
        { "periodic_hold_reason", "PeriodicHoldReason" },
        { "periodic_hold_subcode", "PeriodicHoldSubCode" },
        { "periodic_release", "PeriodicRelease" },
        { "periodic_remove", "PeriodicRemove" },
        { "on_exit_hold", "OnExitHold" },
        { "on_exit_hold_reason", "OnExitHoldReason" },
        { "on_exit_hold_subcode", "OnExitHoldSubCode" },
        { "on_exit_remove", "OnExitRemove" },
};

/* The job's own policy expressions, hold and batch_name. */
static int set_job_policy(Submit *s, ClassAd *ad) {
        _cleanup_(cmd_done) Cmd c = {};
        bool hold = false;
        int r;

        for (size_t i = 0; i < sizeof(job_exprs) / sizeof(job_exprs[0]); i++) {
                const char *names[] = { job_exprs[i].command, job_exprs[i].attr, NULL };

                r = get(s, names, &c);
                if (r < 0)
                        return r;
                if (c.v && (r = submit_set_expr(s, ad, job_exprs[i].attr, c.v, c.line, job_exprs[i].command)) < 0)
                        return r;
        }

        r = get(s, K_HOLD, &c);
        if (r < 0)
                return r;
        if (c.v && submit_parse_bool(c.v, &hold) < 0)
                return config_error(s->err, s->file, c.line, -EINVAL, "hold: '%s' is not a boolean", c.v);
        if (hold && (r = classad_set_int(ad, "JobStatus", 5)) < 0)
                return r;

        r = get(s, K_BATCH_NAME, &c);
        if (r < 0 || !c.v)
                return r;
        /* condor_submit takes the name with or without double quotes. */
        size_t len = strlen(c.v);
        if (len >= 2 && c.v[0] == '"' && c.v[len - 1] == '"') {
                memmove(c.v, c.v + 1, len - 2);
                c.v[len - 2] = 0;
        }
        if (strpbrk(c.v, "\"\\\n"))
                return config_error(s->err, s->file, c.line, -EINVAL,
                                    "batch_name: '%s' may not hold quotes, backslashes or line breaks", c.v);
        return classad_set_string(ad, "JobBatchName", c.v);
}

#define ACCOUNTING_GROUP_MAX 40 /* characters, 3.4.7 */

/* Submitter names go into ads and accounting keys: no white space or quotes. */
static bool is_submitter_name(const char *n) {
        return *n && !strpbrk(n, " \t\r\n\"\\'");
}

static int set_accounting(Submit *s, ClassAd *ad) {
        _cleanup_(cmd_done) Cmd group = {}, user = {};
        _cleanup_config_free_ char *full = NULL;
        int r;

        r = get(s, K_ACCT_GROUP, &group);
        if (r >= 0)
                r = get(s, K_ACCT_USER, &user);
        if (r < 0 || (!group.v && !user.v))
                return r;
        if (group.v && !is_submitter_name(group.v))
                return config_error(s->err, s->file, group.line, -EINVAL, "accounting_group: invalid name '%s'",
                                    group.v);
        if (user.v && !is_submitter_name(user.v))
                return config_error(s->err, s->file, user.line, -EINVAL, "accounting_group_user: invalid name '%s'",
                                    user.v);
        r = classad_set_string(ad, "AcctGroupUser", user.v ? user.v : s->owner);
        if (r < 0 || !group.v)
                return r < 0 ? r : classad_set_string(ad, "AccountingGroup", user.v ? user.v : s->owner);
        if (asprintf(&full, "%s.%s", group.v, user.v ? user.v : s->owner) < 0)
                return -ENOMEM;
        r = classad_set_string(ad, "AcctGroup", group.v);
        if (r >= 0)
                r = classad_set_string(ad, "AccountingGroup", full);
        return r;
}

static int set_forced_attrs(Submit *s, ClassAd *ad) {
        for (size_t i = 0; i < s->attrs->n_entries; i++) {
                const ConfigEntry *a = &s->attrs->entries[i];
                _cleanup_config_free_ char *v = NULL, *what = NULL;
                int r;

                r = submit_expand(s, a->value, a->line, &v);
                if (r < 0)
                        return r;
                if (!v[strspn(v, " \t")])
                        return config_error(s->err, s->file, a->line, -EINVAL, "+%s: missing value", a->name);
                if (asprintf(&what, "+%s", a->name) < 0)
                        return -ENOMEM;
                r = submit_set_expr(s, ad, a->name, v, a->line, what);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* 3.4.7: an AccountingGroup (however it was given) is at most 40
 * characters; the error names the line that gave it. */
static int check_accounting_group(Submit *s, const ClassAd *ad) {
        _cleanup_(cmd_done) Cmd group = {}, user = {};
        _cleanup_config_free_ char *v = NULL;
        int line = 0, r;

        if (classad_eval_string(ad, "AccountingGroup", CA_MODE_OLD, &v) < 0 || strlen(v) <= ACCOUNTING_GROUP_MAX)
                return 0;
        for (size_t i = 0; i < s->attrs->n_entries; i++)
                if (strcasecmp(s->attrs->entries[i].name, "AccountingGroup") == 0)
                        line = s->attrs->entries[i].line;
        if (!line && (r = get(s, K_ACCT_GROUP, &group)) >= 0 && group.v)
                line = group.line;
        if (!line && (r = get(s, K_ACCT_USER, &user)) >= 0 && user.v)
                line = user.line;
        return config_error(s->err, s->file, line, -EINVAL,
                            "AccountingGroup '%s' is %zu characters long, at most %d are allowed", v, strlen(v),
                            ACCOUNTING_GROUP_MAX);
}

static int set_iwd(Submit *s, ClassAd *ad, char **ret) {
        _cleanup_(cmd_done) Cmd c = {};
        _cleanup_config_free_ char *iwd = NULL;
        int r;

        r = get(s, K_INITIALDIR, &c);
        if (r < 0)
                return r;
        r = join_path(s->iwd, c.v ? c.v : ".", &iwd);
        if (r < 0)
                return r;
        r = classad_set_string(ad, "Iwd", iwd);
        if (r < 0)
                return r;
        *ret = iwd;
        iwd = NULL;
        return 0;
}

int submit_job_ad(Submit *s, ClassAd **ret) {
        _cleanup_(submit_classad_freep) ClassAd *ad = NULL;
        _cleanup_config_free_ char *iwd = NULL;
        bool nice = false;
        int r;

        r = classad_new(&ad);
        if (r < 0)
                return r;
        if ((r = classad_set_string(ad, "MyType", "Job")) < 0 ||
            (r = classad_set_string(ad, "TargetType", "Machine")) < 0 ||
            (r = classad_set_int(ad, "ClusterId", s->cluster)) < 0 ||
            (r = classad_set_int(ad, "ProcId", s->proc)) < 0 ||
            (r = classad_set_string(ad, "Owner", s->owner)) < 0 ||
            (r = classad_set_int(ad, "QDate", s->qdate)) < 0 ||
            (r = classad_set_int(ad, "EnteredCurrentStatus", s->qdate)) < 0 ||
            (r = classad_set_int(ad, "JobStatus", 1)) < 0 ||
            (r = set_universe(s, ad)) < 0 ||
            (r = set_iwd(s, ad, &iwd)) < 0 ||
            (r = set_executable(s, ad)) < 0 ||
            (r = set_arguments(s, ad)) < 0 ||
            (r = set_environment(s, ad)) < 0 ||
            (r = set_files(s, ad, iwd)) < 0 ||
            (r = submit_set_transfer(s, ad, iwd)) < 0 ||
            (r = set_priority(s, ad, &nice)) < 0 ||
            (r = submit_set_requests(s, ad)) < 0 ||
            (r = set_requirements_and_rank(s, ad)) < 0 ||
            (r = set_policy(s, ad, nice)) < 0 ||
            (r = set_job_policy(s, ad)) < 0 ||
            (r = set_accounting(s, ad)) < 0 ||
            (r = set_forced_attrs(s, ad)) < 0 ||
            (r = check_accounting_group(s, ad)) < 0)
                return r;
        *ret = ad;
        ad = NULL;
        return 0;
}

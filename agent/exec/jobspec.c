/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobspec.c — a job ad turned into what to execute: program, arguments,
 * environment, directories, standard files, the account to run as, the
 * kill signal.
 *
 * Argument and environment strings are read back exactly as HTCondor's
 * starter reads them, by config/argsyntax.c, which also writes them for
 * config/submit-*.c.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "argsyntax.h"
#include "config.h"
#include "exec.h"
#include "users.h"

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define DEFAULT_SLOT_USER "nobody"

__attribute__((format(printf, 3, 4)))
static int why_set(char *why, size_t whylen, const char *fmt, ...) {
        va_list ap;

        if (why && whylen > 0) {
                va_start(ap, fmt);
                vsnprintf(why, whylen, fmt, ap);
                va_end(ap);
        }
        return 0;
}

/* ---- environment ---- */

/* NAME=value; unless replace, only when NAME is not there yet. */
static int env_set_var(ConfigStrv *env, bool replace, const char *name, const char *value) {
        char *e;

        if (!replace && config_env_find(env, name, strlen(name)) >= 0)
                return 0;
        if (asprintf(&e, "%s=%s", name, value) < 0)
                return -ENOMEM;
        return config_env_set(env, e, NULL, 0);
}

/* ---- signals ---- */

static const struct {
        const char *name;
        int number;
} signals[] = {
        { "SIGHUP", SIGHUP },       { "SIGINT", SIGINT },       { "SIGQUIT", SIGQUIT },     { "SIGILL", SIGILL },
        { "SIGTRAP", SIGTRAP },     { "SIGABRT", SIGABRT },     { "SIGIOT", SIGIOT },       { "SIGBUS", SIGBUS },
        { "SIGFPE", SIGFPE },       { "SIGKILL", SIGKILL },     { "SIGUSR1", SIGUSR1 },     { "SIGSEGV", SIGSEGV },
        { "SIGUSR2", SIGUSR2 },     { "SIGPIPE", SIGPIPE },     { "SIGALRM", SIGALRM },     { "SIGTERM", SIGTERM },
        { "SIGSTKFLT", SIGSTKFLT }, { "SIGCHLD", SIGCHLD },     { "SIGCLD", SIGCHLD },      { "SIGCONT", SIGCONT },
        { "SIGSTOP", SIGSTOP },     { "SIGTSTP", SIGTSTP },     { "SIGTTIN", SIGTTIN },     { "SIGTTOU", SIGTTOU },
        { "SIGURG", SIGURG },       { "SIGXCPU", SIGXCPU },     { "SIGXFSZ", SIGXFSZ },     { "SIGVTALRM", SIGVTALRM },
        { "SIGPROF", SIGPROF },     { "SIGWINCH", SIGWINCH },   { "SIGIO", SIGIO },         { "SIGPOLL", SIGPOLL },
        { "SIGPWR", SIGPWR },       { "SIGSYS", SIGSYS },
};

int agent_signal_from_name(const char *name, int *ret) {
        if (!name || !*name)
                return -EINVAL;
        if (isdigit((unsigned char) *name)) {
                char *end;
                long v;

                errno = 0;
                v = strtol(name, &end, 10);
                if (errno != 0 || *end || v < 1 || v >= NSIG)
                        return -EINVAL;
                *ret = (int) v;
                return 0;
        }
        for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
                if (strcasecmp(name, signals[i].name) == 0 || strcasecmp(name, signals[i].name + 3) == 0) {
                        *ret = signals[i].number;
                        return 0;
                }
        return -EINVAL;
}

const char *agent_signal_name(int sig) {
        for (size_t i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
                if (signals[i].number == sig)
                        return signals[i].name;
        return NULL;
}

/* ---- accounts ---- */

typedef struct Account {
        char *name;
        char *home;
        uid_t uid;
        gid_t gid;
        gid_t *groups;
        size_t n_groups;
} Account;

static void account_done(Account *a) {
        free(a->name);
        free(a->home);
        free(a->groups);
        *a = (Account) {};
}

/* Copies what we need out of pw (its strings live in the caller's buffer). */
static int account_from_passwd(const struct passwd *pw, Account *ret) {
        Account a = { .uid = pw->pw_uid, .gid = pw->pw_gid };
        size_t n;
        int r;

        a.name = strdup(pw->pw_name);
        a.home = strdup(pw->pw_dir && *pw->pw_dir ? pw->pw_dir : "/");
        if (!a.name || !a.home) {
                account_done(&a);
                return -ENOMEM;
        }
        r = glean_getgrouplist(a.name, a.gid, &a.groups, &n);
        if (r < 0) {
                account_done(&a);
                return r;
        }
        /* Never gid 0, even as a supplementary group. */
        for (size_t i = 0; i < n; i++)
                if (a.groups[i] != 0)
                        a.groups[a.n_groups++] = a.groups[i];
        *ret = a;
        return 0;
}

/* -ENOENT: no such account. */
static int account_by_name(const char *name, Account *ret) {
        struct passwd pw;
        char *buf = NULL;
        int r;

        r = glean_getpwnam(name, &pw, &buf);
        if (r > 0)
                r = account_from_passwd(&pw, ret);
        else if (r == 0)
                r = -ENOENT;
        free(buf);
        return r;
}

/* The account of an agent that is not root, which Owner (if any) must name. */
static int account_of_agent(const char *owner, Account *ret, char *why, size_t whylen) {
        struct passwd pw;
        char *buf = NULL;
        int r;

        r = glean_getpwuid(geteuid(), &pw, &buf);
        if (r <= 0) {
                r = r < 0 ? r : -ENOENT;
                why_set(why, whylen, "the agent's own account (uid %u) is not in the passwd database",
                        (unsigned) geteuid());
        } else if (owner && strcmp(owner, pw.pw_name) != 0) {
                why_set(why, whylen,
                        "Owner '%s' is not '%s', the account the agent runs as; an agent that is not root "
                        "runs jobs only as itself", owner, pw.pw_name);
                r = -EPERM;
        } else
                r = account_from_passwd(&pw, ret);
        free(buf);
        return r;
}

static bool account_is_root(const Account *a) {
        return a->uid == 0 || a->gid == 0;
}

/* ---- identity: literal strings only ---- */

const char *const agent_identity_attrs[] = { "Owner", "User", "AcctGroup", "AcctGroupUser", "AccountingGroup", NULL };

int agent_job_literal_string(const ClassAd *job, const char *attr, char **ret, char *why, size_t whylen) {
        char *text = NULL, *value = NULL, *canon = NULL;
        int r;

        *ret = NULL;
        text = classad_unparse_attr(job, attr);
        if (!text)
                return 0; /* absent */
        /* Evaluated once; the value counts only when writing it back as a
         * constant gives the expression's own text: the tree is a string
         * literal, and no other reading can give another value. */
        r = classad_eval_string(job, attr, CA_MODE_OLD, &value);
        if (r >= 0) {
                CaValue v = ca_string(value);
                canon = ca_value_unparse(&v);
                ca_value_clear(&v);
                if (!canon)
                        r = -ENOMEM;
                else if (strcmp(canon, text) != 0)
                        r = -EINVAL;
        } else if (r != -ENOMEM)
                r = -EINVAL;
        if (r == -EINVAL)
                why_set(why, whylen, "%s must be a literal string (it decides who the job is), not the expression %.200s",
                        attr, text);
        free(canon);
        free(text);
        if (r < 0) {
                free(value);
                return r;
        }
        *ret = value;
        return 0;
}

int agent_job_identity_check(const ClassAd *job, char *why, size_t whylen) {
        for (size_t i = 0; agent_identity_attrs[i]; i++) {
                char *v = NULL;
                int r = agent_job_literal_string(job, agent_identity_attrs[i], &v, why, whylen);
                free(v);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* The account the job runs as (see exec.h), for owner (the job's literal
 * Owner, NULL when it has none); *ret_as_owner: it is the account owner names. */
static int resolve_account(const char *owner, const AgentRunAs *runas, Account *ret, bool *ret_as_owner, char *why,
                           size_t whylen) {
        static const AgentRunAs defaults = { .allow_runas_owner = true };
        const char *slot_user;
        Account a = {};
        bool as_owner = false;
        int r;

        if (!runas)
                runas = &defaults;
        slot_user = runas->slot_user && *runas->slot_user ? runas->slot_user : DEFAULT_SLOT_USER;

        if (geteuid() != 0) {
                r = account_of_agent(owner, &a, why, whylen);
                as_owner = owner != NULL;
                goto out;
        }

        if (owner && *owner && runas->allow_runas_owner) {
                r = account_by_name(owner, &a);
                if (r == -ENOMEM)
                        goto out;
                if (r >= 0 && !account_is_root(&a)) {
                        as_owner = true;
                        goto out; /* the owner it is */
                }
                if (r == -ENOENT && runas->refuse_unknown_owner) {
                        why_set(why, whylen, "Owner '%s' is not an account on this machine", owner);
                        goto out;
                }
                account_done(&a);
        } else if (runas->refuse_unknown_owner && (!owner || !*owner) && runas->allow_runas_owner) {
                why_set(why, whylen, "Owner is missing: the job ad names no account to run as");
                r = -ENOENT;
                goto out;
        }

        r = account_by_name(slot_user, &a);
        if (r == -ENOENT) {
                why_set(why, whylen, "Owner '%s' cannot be used and the slot user '%s' is not an account on this machine",
                        owner ? owner : "", slot_user);
                goto out;
        }
        if (r >= 0 && account_is_root(&a)) {
                account_done(&a);
                why_set(why, whylen, "Owner '%s' cannot be used and the slot user '%s' is root: jobs never run as root",
                        owner ? owner : "", slot_user);
                r = -EPERM;
        }
out:
        if (r >= 0) {
                *ret = a;
                *ret_as_owner = as_owner;
        }
        return r;
}

/* ---- the spec ---- */

void agent_jobspec_free(AgentJobSpec *spec) {
        if (!spec)
                return;
        config_strv_free(spec->argv);
        config_strv_free(spec->envp);
        free(spec->iwd);
        free(spec->in);
        free(spec->out);
        free(spec->err);
        free(spec->owner);
        free(spec->user);
        free(spec->groups);
        free(spec->scratch);
        free(spec->cgroup);
        free(spec->exit_file);
        free(spec->lease_file);
        free(spec);
}

static void spec_freep(AgentJobSpec **p) {
        agent_jobspec_free(*p);
}

/* path made absolute against dir. */
static int join_path(const char *dir, const char *path, char **ret) {
        char *s;

        while (path[0] == '.' && path[1] == '/')
                for (path += 2; *path == '/'; path++)
                        ;
        if (path[0] == '/')
                s = strdup(path);
        else if (!*path || strcmp(path, ".") == 0)
                s = strdup(dir);
        else if (asprintf(&s, "%s%s%s", dir, dir[0] && dir[strlen(dir) - 1] == '/' ? "" : "/", path) < 0)
                s = NULL;
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

/* A string attribute: 0 and *ret (NULL when absent or undefined), or
 * -EINVAL with why when it is something else. */
static int get_string(const ClassAd *job, const char *attr, char **ret, char *why, size_t whylen) {
        char *s = NULL;
        int r;

        r = classad_eval_string(job, attr, CA_MODE_OLD, &s);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r == -EINVAL)
                why_set(why, whylen, "%s is not a string", attr);
        if (r < 0)
                return r;
        *ret = s;
        return 0;
}

/* In/Out/Err: NULL for absent, empty or /dev/null; else absolute. */
static int get_std_file(const ClassAd *job, const char *attr, const char *iwd, char **ret, char *why, size_t whylen) {
        char *s = NULL;
        int r;

        r = get_string(job, attr, &s, why, whylen);
        if (r < 0)
                return r;
        if (!s || !*s || strcmp(s, "/dev/null") == 0) {
                free(s);
                *ret = NULL;
                return 0;
        }
        r = join_path(iwd, s, ret);
        free(s);
        return r;
}

static int random_suffix(char *buf, size_t size) {
        uint64_t v;

        if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != (ssize_t) sizeof(v)) {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                v = ((uint64_t) ts.tv_nsec << 20) ^ (uint64_t) ts.tv_sec ^ ((uint64_t) getpid() << 40);
        }
        return snprintf(buf, size, "%08x", (unsigned) (v ^ (v >> 32)));
}

static int set_arguments(const ClassAd *job, AgentJobSpec *spec, const char *cmd, char *why, size_t whylen) {
        char *text = NULL, msg[256] = "";
        const char *attr = "Arguments";
        ConfigStrv argv = {};
        int r;

        r = get_string(job, attr, &text, why, whylen);
        if (r >= 0 && !text) {
                attr = "Args";
                r = get_string(job, attr, &text, why, whylen);
        }
        if (r < 0)
                return r;
        r = config_strv_push(&argv, strdup(cmd));
        if (r >= 0 && text)
                r = strcmp(attr, "Arguments") == 0 ? config_args_split_v2(text, &argv, msg, sizeof(msg))
                                                   : config_args_split_v1(text, &argv);
        if (r == -EINVAL)
                why_set(why, whylen, "Arguments cannot be parsed: %s", msg);
        free(text);
        if (r < 0) {
                config_strv_done(&argv);
                return r;
        }
        spec->argv = argv.v;
        return 0;
}

static int set_environment(const ClassAd *job, AgentJobSpec *spec, const char *slot_name, const char *home,
                           char *why, size_t whylen) {
        /* What the job always gets (replace), or gets unless it sets it. */
        const struct {
                const char *name, *value;
                bool replace;
        } vars[] = {
                { "_CONDOR_SCRATCH_DIR", spec->scratch, true },
                { "GLEAN_SCRATCH_DIR", spec->scratch, true },
                { "_CONDOR_SLOT", slot_name, true },
                { "TMPDIR", spec->scratch, false },
                { "TMP", spec->scratch, false },
                { "TEMP", spec->scratch, false },
                { "HOME", home, false },
                { "USER", spec->user, false },
                { "LOGNAME", spec->user, false },
                { "PATH", DEFAULT_PATH, false },
        };
        char *text = NULL, *delim = NULL, msg[256] = "";
        const char *attr = "Environment";
        ConfigStrv env = {};
        int r;

        r = get_string(job, attr, &text, why, whylen);
        if (r >= 0 && !text) {
                attr = "Env";
                r = get_string(job, attr, &text, why, whylen);
                if (r >= 0)
                        r = get_string(job, "EnvDelim", &delim, why, whylen);
        }
        if (r >= 0 && text) {
                r = strcmp(attr, "Environment") == 0
                            ? config_env_split_v2(text, &env, msg, sizeof(msg))
                            : config_env_split_ad_v1(text, delim ? delim[0] : ';', &env, msg, sizeof(msg));
                if (r == -EINVAL)
                        why_set(why, whylen, "%s cannot be parsed: %s", attr, msg);
        }
        free(text);
        free(delim);
        for (size_t i = 0; r >= 0 && i < sizeof(vars) / sizeof(vars[0]); i++)
                r = env_set_var(&env, vars[i].replace, vars[i].name, vars[i].value);
        if (r < 0) {
                config_strv_done(&env);
                return r;
        }
        spec->envp = env.v;
        return 0;
}

static int set_kill_sig(const ClassAd *job, AgentJobSpec *spec, char *why, size_t whylen) {
        CaValue v = ca_undefined();
        int r;

        spec->kill_sig = SIGTERM;
        r = classad_eval_attr(job, "KillSig", CA_MODE_OLD, &v);
        if (r < 0)
                return r;
        if (v.type == CA_STRING) {
                r = agent_signal_from_name(v.u.s->s, &spec->kill_sig);
                if (r < 0)
                        why_set(why, whylen, "KillSig '%s' is not a signal name or number", v.u.s->s);
        } else if (v.type == CA_INT) {
                if (v.u.i < 1 || v.u.i >= NSIG) {
                        why_set(why, whylen, "KillSig %lld is not a signal number", (long long) v.u.i);
                        r = -EINVAL;
                } else
                        spec->kill_sig = (int) v.u.i;
        } else if (v.type != CA_UNDEFINED) {
                why_set(why, whylen, "KillSig is not a signal name (it is %s)", ca_type_name(v.type));
                r = -EINVAL;
        }
        ca_value_clear(&v);
        return r;
}

/* Umask: the submitter's umask (glean submit records it), 022 without one. */
static int set_umask(const ClassAd *job, AgentJobSpec *spec, char *why, size_t whylen) {
        CaValue v = ca_undefined();
        int r = classad_eval_attr(job, "Umask", CA_MODE_OLD, &v);
        if (r < 0)
                return r;
        if (v.type == CA_INT && v.u.i >= 0 && v.u.i <= 0777) {
                spec->has_umask = true;
                spec->umask = (mode_t) v.u.i;
        } else if (v.type != CA_UNDEFINED) {
                why_set(why, whylen, "Umask must be an integer from 0 to 0777 (511), the job's file creation mask");
                r = -EINVAL;
        }
        ca_value_clear(&v);
        return r;
}

static bool is_name(const char *s) {
        return *s && !strchr(s, '/') && strcmp(s, ".") != 0 && strcmp(s, "..") != 0;
}

int agent_jobspec_from_ad(const ClassAd *job, const AgentRunAs *runas, const char *scratch_parent,
                          const char *slot_name, AgentJobSpec **ret, char *why, size_t whylen) {
        __attribute__((cleanup(spec_freep))) AgentJobSpec *spec = NULL;
        char *cmd = NULL, *iwd = NULL, *path = NULL, suffix[32];
        Account acct = {};
        int r;

        why_set(why, whylen, "%s", "");
        if (!job || !ret || !scratch_parent || scratch_parent[0] != '/' || !slot_name || !is_name(slot_name)) {
                why_set(why, whylen, "bad call: absolute scratch parent and slot name needed");
                return -EINVAL;
        }
        spec = calloc(1, sizeof(*spec));
        if (!spec)
                return -ENOMEM;

        r = get_string(job, "Cmd", &cmd, why, whylen);
        if (r < 0)
                goto out;
        if (!cmd || !*cmd) {
                why_set(why, whylen, "Cmd is missing: the job ad names no program to run");
                r = -EINVAL;
                goto out;
        }

        /* Who: decided here, once, from literals; the daemon checks
         * spec->owner and spec->uid, the executor uses the same. */
        r = agent_job_identity_check(job, why, whylen);
        if (r >= 0)
                r = agent_job_literal_string(job, "Owner", &spec->owner, why, whylen);
        if (r >= 0)
                r = resolve_account(spec->owner, runas, &acct, &spec->as_owner, why, whylen);
        if (r < 0)
                goto out;
        spec->user = acct.name;
        spec->uid = acct.uid;
        spec->gid = acct.gid;
        spec->groups = acct.groups;
        spec->n_groups = acct.n_groups;
        acct.name = NULL;
        acct.groups = NULL;

        random_suffix(suffix, sizeof(suffix));
        if (asprintf(&spec->scratch, "%s/dir_%s_%s", strcmp(scratch_parent, "/") == 0 ? "" : scratch_parent,
                     slot_name, suffix) < 0) {
                spec->scratch = NULL;
                r = -ENOMEM;
                goto out;
        }

        r = get_string(job, "Iwd", &iwd, why, whylen);
        if (r < 0)
                goto out;
        if (iwd && *iwd && iwd[0] != '/') {
                why_set(why, whylen, "Iwd '%s' is not an absolute path", iwd);
                r = -EINVAL;
                goto out;
        }
        spec->iwd = strdup(iwd && *iwd ? iwd : spec->scratch);
        if (!spec->iwd) {
                r = -ENOMEM;
                goto out;
        }

        r = join_path(spec->iwd, cmd, &path);
        if (r >= 0)
                r = set_arguments(job, spec, path, why, whylen);
        if (r >= 0)
                r = set_environment(job, spec, slot_name, acct.home, why, whylen);
        if (r >= 0)
                r = get_std_file(job, "In", spec->iwd, &spec->in, why, whylen);
        if (r >= 0)
                r = get_std_file(job, "Out", spec->iwd, &spec->out, why, whylen);
        if (r >= 0)
                r = get_std_file(job, "Err", spec->iwd, &spec->err, why, whylen);
        if (r >= 0)
                r = set_kill_sig(job, spec, why, whylen);
        if (r >= 0)
                r = set_umask(job, spec, why, whylen);
        if (r >= 0) {
                *ret = spec;
                spec = NULL;
        }
out:
        if (r == -ENOMEM)
                why_set(why, whylen, "out of memory");
        account_done(&acct);
        free(cmd);
        free(iwd);
        free(path);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobaction.c — what users do to jobs and machines through the central
 * manager: `glean rm`, `hold`, `release`, `prio` (condor_rm, condor_hold,
 * condor_release, condor_prio), `glean vacate` and `glean drain`
 * (condor_vacate, condor_drain), and `glean wait` (condor_wait).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/proto.h"
#include "jobs.h"

#define TIMEOUT_MS 60000

typedef struct ActionSpec {
        const char *verb;    /* "rm" */
        const char *action;  /* JobAction's Action */
        const char *done;    /* "marked for removal" */
        const char *failed;  /* "remove" */
        const char *usage;
} ActionSpec;

static const ActionSpec specs[] = {
        { "rm", "Remove", "marked for removal", "remove",
          "usage: glean rm [-reason R] [--socket PATH] CLUSTER | CLUSTER.PROC | OWNER... | -constraint EXPR | -all" },
        { "hold", "Hold", "held", "hold",
          "usage: glean hold [-reason R] [--socket PATH] CLUSTER | CLUSTER.PROC | OWNER... | -constraint EXPR | -all" },
        { "release", "Release", "released", "release",
          "usage: glean release [--socket PATH] CLUSTER | CLUSTER.PROC | OWNER... | -constraint EXPR | -all" },
        { "prio", "SetPrio", "set to priority", "change the priority of",
          "usage: glean prio -p N [--socket PATH] CLUSTER | CLUSTER.PROC | OWNER... | -constraint EXPR | -all" },
};

typedef enum TargetKind { T_JOB, T_CLUSTER, T_OWNER, T_CONSTRAINT, T_ALL } TargetKind;

typedef struct Target {
        TargetKind kind;
        const char *text;
} Target;

static void help(const ActionSpec *s) {
        printf("%s\n\n", s->usage);
        printf("Each target is a job (CLUSTER.PROC), every job of a cluster (CLUSTER), every\n"
               "job of a user (OWNER), the jobs an expression over the job ad selects\n"
               "(-constraint EXPR), or all the jobs you may change (-all: yours; root's: all).\n"
               "Options take one dash or two, as condor_%s's do.\n\n"
               "Exit status: 0 when every target was found and changed, 1 when some target\n"
               "was not found or was refused, 2 on a usage error.\n",
               s->verb);
}

/* "All jobs in cluster 3", "Job 3.1", ... */
static void describe(const Target *t, char *buf, size_t size) {
        switch (t->kind) {
        case T_JOB:
                snprintf(buf, size, "Job %s", t->text);
                break;
        case T_CLUSTER:
                snprintf(buf, size, "All jobs in cluster %s", t->text);
                break;
        case T_OWNER:
                snprintf(buf, size, "All jobs of user \"%s\"", t->text);
                break;
        case T_CONSTRAINT:
                snprintf(buf, size, "Jobs matching constraint (%s)", t->text);
                break;
        case T_ALL:
                snprintf(buf, size, "All jobs");
        }
}

/* One target: one JobAction. Returns true when every job it names was
 * found and changed. */
static bool act(CliConn *c, const ActionSpec *s, const Target *t, const char *reason, int64_t prio,
                const char *me) {
        _cleanup_free_ char *constraint = NULL, *q = NULL;
        char what[512], done[64];
        ClassAd *req = NULL;
        CliReply rep;
        size_t ok = 0, bad = 0;
        int r;

        if (glean_msg_new(GLEAN_CMD_JOB_ACTION, &req) < 0)
                return false;
        classad_set_string(req, "Action", s->action);
        switch (t->kind) {
        case T_JOB:
        case T_CLUSTER:
                classad_set_string(req, "Ids", t->text);
                break;
        case T_OWNER:
                q = cli_quote(t->text);
                if (q && asprintf(&constraint, "Owner == %s", q) < 0)
                        constraint = NULL;
                break;
        case T_CONSTRAINT:
                constraint = strdup(t->text);
                break;
        case T_ALL:
                q = me ? cli_quote(me) : NULL;
                if (q && asprintf(&constraint, "Owner == %s", q) < 0)
                        constraint = NULL;
                else if (!me)
                        constraint = strdup("true");
        }
        if (t->kind != T_JOB && t->kind != T_CLUSTER) {
                if (!constraint) {
                        classad_free(req);
                        return false;
                }
                classad_set_string(req, "Constraint", constraint);
        }
        if (reason)
                classad_set_string(req, "Reason", reason);
        if (strcmp(s->action, "SetPrio") == 0)
                classad_set_int(req, "Prio", prio);
        r = cli_cm_request(c, s->verb, req, TIMEOUT_MS, &rep);
        classad_free(req);
        if (r < 0)
                return false;

        describe(t, what, sizeof what);
        if (strcmp(s->action, "SetPrio") == 0)
                snprintf(done, sizeof done, "%s %lld", s->done, (long long) prio);
        else
                snprintf(done, sizeof done, "%s", s->done);
        for (size_t i = 0; i < rep.n_results; i++) {
                bool rok = false;
                _cleanup_free_ char *id = NULL, *why = NULL;

                classad_eval_bool(rep.results[i], "Ok", GLEAN_CA_MODE, &rok);
                if (rok) {
                        ok++;
                        continue;
                }
                bad++;
                classad_eval_string(rep.results[i], "Id", GLEAN_CA_MODE, &id);
                classad_eval_string(rep.results[i], "Reason", GLEAN_CA_MODE, &why);
                fprintf(stderr, "Job %s: %s\n", id ? id : "?", why ? why : "refused");
        }
        if (rep.n_results == 0 && rep.count > 0 && rep.ok)
                ok = (size_t) rep.count;
        if (bad == 0 && ok > 0 && rep.ok) {
                if (t->kind == T_JOB)
                        printf("%s %s\n", what, done);
                else
                        printf("%s have been %s\n", what, done);
                cli_reply_clear(&rep);
                return true;
        }
        if (bad == 0 && rep.reason && (ok > 0 || !rep.ok))
                fprintf(stderr, "%s: %s\n", what, rep.reason);
        if (ok + bad == 0 && !rep.ok && rep.reason && t->kind != T_JOB) {
                /* nothing done, and the reason says why (others' jobs) */
                cli_reply_clear(&rep);
                return false;
        }
        if (t->kind == T_JOB)
                fprintf(stderr, "%s %s\n", what, ok + bad == 0 ? "not found" : "could not be changed");
        else if (ok + bad == 0 && rep.ok)
                fprintf(stderr, "%s: no such jobs%s\n", what,
                        t->kind == T_CLUSTER ? " (no cluster by that id in the queue)" : "");
        else
                fprintf(stderr, "Couldn't find/%s all of them (%zu changed, %zu refused)\n", s->failed, ok, bad);
        cli_reply_clear(&rep);
        return false;
}

static int job_action(const ActionSpec *s, int argc, char **argv) {
        _cleanup_free_ Target *targets = calloc((size_t) argc, sizeof(Target));
        _cleanup_free_ char *me = NULL;
        const char *reason = NULL, *sock = NULL;
        bool have_prio = false, all_ok = true;
        int64_t prio = 0;
        size_t nt = 0;
        CliConn c;

        if (!targets)
                return CLI_EXIT_FAILURE;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                bool more = i + 1 < argc;

                if (cli_opt(a, "help", 1) || strcmp(a, "-h") == 0) {
                        help(s);
                        return CLI_EXIT_OK;
                } else if (cli_opt(a, "socket", 4) && more)
                        sock = argv[++i];
                else if (cli_opt(a, "constraint", 5) && more)
                        targets[nt++] = (Target){ T_CONSTRAINT, argv[++i] };
                else if (cli_opt(a, "all", 3))
                        targets[nt++] = (Target){ T_ALL, NULL };
                else if (strcmp(s->action, "Release") != 0 && cli_opt(a, "reason", 3) && more)
                        reason = argv[++i];
                else if (strcmp(s->action, "SetPrio") == 0 && (strcmp(a, "-p") == 0 || cli_opt(a, "priority", 4)) &&
                         more) {
                        char *end;
                        long long v = strtoll(argv[++i], &end, 10);
                        if (*end || end == argv[i])
                                return cli_usage_error(s->verb, s->usage, "-p: '%s' is not a number", argv[i]),
                                       CLI_EXIT_USAGE;
                        prio = v;
                        have_prio = true;
                } else if (a[0] == '-')
                        return cli_usage_error(s->verb, s->usage, "unknown option or missing argument '%s'", a),
                               CLI_EXIT_USAGE;
                else if (cli_is_job_id(a))
                        targets[nt++] = (Target){ strchr(a, '.') ? T_JOB : T_CLUSTER, a };
                else
                        targets[nt++] = (Target){ T_OWNER, a };
        }
        if (nt == 0)
                return cli_usage_error(s->verb, s->usage, "which jobs?"), CLI_EXIT_USAGE;
        if (strcmp(s->action, "SetPrio") == 0 && !have_prio)
                return cli_usage_error(s->verb, s->usage, "which priority? (-p N)"), CLI_EXIT_USAGE;
        for (size_t k = 0; k < nt; k++)
                if (targets[k].kind == T_CONSTRAINT) {
                        ClassAdExpr *e = NULL;
                        CaError err = {};
                        if (classad_expr_parse(targets[k].text, strlen(targets[k].text), GLEAN_CA_MODE, &e, &err) < 0)
                                return cli_usage_error(s->verb, s->usage, "-constraint: line %d, column %d: %s",
                                                       err.line, err.column, err.msg),
                                       CLI_EXIT_USAGE;
                        classad_expr_free(e);
                }
        if (getuid() != 0)
                me = cli_user_name();
        if (cli_cm_connect(s->verb, sock, &c) < 0)
                return CLI_EXIT_FAILURE;
        for (size_t k = 0; k < nt; k++)
                all_ok = act(&c, s, &targets[k], reason, prio, me) && all_ok;
        cli_cm_close(&c);
        fflush(stdout);
        return all_ok ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

int cli_verb_rm(int argc, char **argv) {
        return job_action(&specs[0], argc, argv);
}

int cli_verb_hold(int argc, char **argv) {
        return job_action(&specs[1], argc, argv);
}

int cli_verb_release(int argc, char **argv) {
        return job_action(&specs[2], argc, argv);
}

int cli_verb_prio(int argc, char **argv) {
        return job_action(&specs[3], argc, argv);
}

/* ---- vacate, drain ---- */

/* A reply without pieces to collect: Ok, or the reason on stderr. */
static int simple(const char *verb, const char *sock, ClassAd *req, const char *sent) {
        CliReply rep;
        int r = cli_cm_call(verb, sock, req, TIMEOUT_MS, &rep);

        classad_free(req);
        if (r < 0)
                return CLI_EXIT_FAILURE;
        if (!rep.ok) {
                fprintf(stderr, "glean %s: refused: %s\n", verb, rep.reason ? rep.reason : "no reason given");
                cli_reply_clear(&rep);
                return CLI_EXIT_FAILURE;
        }
        printf("%s\n", sent);
        cli_reply_clear(&rep);
        return CLI_EXIT_OK;
}

/* Slot ("slot1@host": has an @) or Machine. */
static void set_target(ClassAd *req, const char *target) {
        classad_set_string(req, strchr(target, '@') ? "Slot" : "Machine", target);
}

int cli_verb_vacate(int argc, char **argv) {
        static const char usage[] = "usage: glean vacate [--fast] [--socket PATH] SLOT | MACHINE";
        const char *target = NULL, *sock = NULL;
        bool fast = false;
        ClassAd *req = NULL;
        char sent[512];

        for (int i = 1; i < argc; i++) {
                if (cli_opt(argv[i], "help", 1) || strcmp(argv[i], "-h") == 0) {
                        printf("%s\n\nVacates the claims of a slot (slot1@host) or of every slot of a machine:\n"
                               "gracefully (the job's retirement and vacate time), or at once with --fast.\n"
                               "Root and ADMINISTRATORS only.\n",
                               usage);
                        return CLI_EXIT_OK;
                } else if (cli_opt(argv[i], "fast", 4))
                        fast = true;
                else if (cli_opt(argv[i], "graceful", 5))
                        fast = false;
                else if (cli_opt(argv[i], "socket", 4) && i + 1 < argc)
                        sock = argv[++i];
                else if (argv[i][0] == '-' || target)
                        return cli_usage_error("vacate", usage, "unexpected '%s'", argv[i]), CLI_EXIT_USAGE;
                else
                        target = argv[i];
        }
        if (!target)
                return cli_usage_error("vacate", usage, "which slot or machine?"), CLI_EXIT_USAGE;
        if (glean_msg_new(GLEAN_CMD_VACATE, &req) < 0)
                return CLI_EXIT_FAILURE;
        set_target(req, target);
        classad_set_bool(req, "Fast", fast);
        snprintf(sent, sizeof sent, "Sent \"%s\" command for %s", fast ? "Vacate-Fast" : "Vacate", target);
        return simple("vacate", sock, req, sent);
}

int cli_verb_drain(int argc, char **argv) {
        static const char usage[] =
                "usage: glean drain [--how graceful|quick|fast] [--reason R] [--socket PATH] MACHINE\n"
                "       glean drain --cancel [--socket PATH] MACHINE";
        const char *target = NULL, *sock = NULL, *how = NULL, *reason = NULL;
        bool cancel = false;
        ClassAd *req = NULL;
        char sent[512];

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                bool more = i + 1 < argc;

                if (cli_opt(a, "help", 1) || strcmp(a, "-h") == 0) {
                        printf("%s\n\nDrains a machine: its slots take no new job; running jobs end as --how\n"
                               "says (graceful: their retirement time; quick: their vacate time; fast:\n"
                               "at once). --cancel lets it take jobs again. Root and ADMINISTRATORS only.\n",
                               usage);
                        return CLI_EXIT_OK;
                } else if (cli_opt(a, "cancel", 3))
                        cancel = true;
                else if (cli_opt(a, "how", 3) && more)
                        how = argv[++i];
                else if (strcmp(a, "-graceful") == 0 || strcmp(a, "-quick") == 0 || strcmp(a, "-fast") == 0)
                        how = a + 1; /* condor_drain's spelling */
                else if (cli_opt(a, "reason", 3) && more)
                        reason = argv[++i];
                else if (cli_opt(a, "socket", 4) && more)
                        sock = argv[++i];
                else if (a[0] == '-' || target)
                        return cli_usage_error("drain", usage, "unexpected '%s'", a), CLI_EXIT_USAGE;
                else
                        target = a;
        }
        if (!target)
                return cli_usage_error("drain", usage, "which machine?"), CLI_EXIT_USAGE;
        if (cancel && (how || reason))
                return cli_usage_error("drain", usage, "--cancel takes no --how or --reason"), CLI_EXIT_USAGE;
        if (how && strcmp(how, "graceful") != 0 && strcmp(how, "quick") != 0 && strcmp(how, "fast") != 0)
                return cli_usage_error("drain", usage, "--how is graceful, quick or fast, not '%s'", how),
                       CLI_EXIT_USAGE;
        if (glean_msg_new(cancel ? GLEAN_CMD_CANCEL_DRAIN : GLEAN_CMD_DRAIN, &req) < 0)
                return CLI_EXIT_FAILURE;
        set_target(req, target);
        if (how)
                classad_set_string(req, "How", how);
        if (reason)
                classad_set_string(req, "Reason", reason);
        if (cancel)
                snprintf(sent, sizeof sent, "Sent request to cancel draining on %s", target);
        else
                snprintf(sent, sizeof sent, "Sent request to drain %s (%s)", target, how ? how : "graceful");
        return simple("drain", sock, req, sent);
}

/* ---- wait ---- */

/* What the job's history ad says; returns the exit status. */
static int report_end(const char *id, const ClassAd *ad) {
        int64_t status = 0, code = 0, sig = 0;
        bool by_signal = false;
        _cleanup_free_ char *why = NULL;

        classad_eval_int(ad, "JobStatus", GLEAN_CA_MODE, &status);
        classad_eval_bool(ad, "ExitBySignal", GLEAN_CA_MODE, &by_signal);
        switch (status) {
        case 4:
                if (by_signal && classad_eval_int(ad, "ExitSignal", GLEAN_CA_MODE, &sig) >= 0) {
                        printf("Job %s was killed by signal %lld.\n", id, (long long) sig);
                        return sig > 0 && sig < 128 ? 128 + (int) sig : CLI_EXIT_FAILURE;
                }
                if (classad_eval_int(ad, "ExitCode", GLEAN_CA_MODE, &code) >= 0) {
                        printf("Job %s completed with exit code %lld.\n", id, (long long) code);
                        return code >= 0 && code <= 255 ? (int) code : CLI_EXIT_FAILURE;
                }
                printf("Job %s completed (no exit code recorded).\n", id);
                return CLI_EXIT_FAILURE;
        case 3:
                if (classad_eval_string(ad, "RemoveReason", GLEAN_CA_MODE, &why) < 0)
                        why = NULL;
                printf("Job %s was removed%s%s.\n", id, why ? ": " : "", why ? why : "");
                return CLI_EXIT_FAILURE;
        case 5:
                if (classad_eval_string(ad, "HoldReason", GLEAN_CA_MODE, &why) < 0)
                        why = NULL;
                printf("Job %s is held%s%s.\n", id, why ? ": " : "", why ? why : "");
                return CLI_EXIT_FAILURE;
        default:
                printf("Job %s left the queue in state %s.\n", id, cli_job_status_letter(status));
                return CLI_EXIT_FAILURE;
        }
}

int cli_verb_wait(int argc, char **argv) {
        static const char usage[] = "usage: glean wait [--timeout SECONDS] [--socket PATH] CLUSTER.PROC";
        const char *id = NULL, *sock = NULL;
        double timeout = -1;
        ClassAd *req = NULL, *ad = NULL;
        CliReply rep;
        int r;

        if (cli_wait_is_log(argc, argv)) /* condor_wait on a job event log (wait-log.c) */
                return cli_wait_log(argc, argv);
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (cli_opt(a, "help", 1) || strcmp(a, "-h") == 0) {
                        printf("%s\n\nWaits until the job leaves the queue and says how it ended.\n\n"
                               "Exit status: the job's exit code when it completed with one (128 + N when\n"
                               "killed by signal N); 1 when it was removed or held, when the time ran\n"
                               "out, or when there is no such job; 2 on a usage error.\n",
                               usage);
                        return CLI_EXIT_OK;
                } else if ((cli_opt(a, "timeout", 4) || strcmp(a, "-wait") == 0) && i + 1 < argc) {
                        char *end;
                        timeout = strtod(argv[++i], &end);
                        if (*end || end == argv[i] || !isfinite(timeout) || timeout < 0 || timeout > 1e9)
                                return cli_usage_error("wait", usage, "--timeout: '%s' is not a number of seconds",
                                                       argv[i]),
                                       CLI_EXIT_USAGE;
                } else if (cli_opt(a, "socket", 4) && i + 1 < argc)
                        sock = argv[++i];
                else if (a[0] == '-' || id)
                        return cli_usage_error("wait", usage, "unexpected '%s'", a), CLI_EXIT_USAGE;
                else
                        id = a;
        }
        if (!id)
                return cli_usage_error("wait", usage, "which job?"), CLI_EXIT_USAGE;
        if (!cli_is_job_id(id) || !strchr(id, '.'))
                return cli_usage_error("wait", usage, "'%s' is not a job id CLUSTER.PROC", id), CLI_EXIT_USAGE;
        if (glean_msg_new(GLEAN_CMD_WAIT, &req) < 0)
                return CLI_EXIT_FAILURE;
        classad_set_string(req, "Id", id);
        if (timeout >= 0)
                classad_set_real(req, "Timeout", timeout);
        /* The reply comes when the job ends: no time limit of our own but
         * a margin over the one given. */
        r = cli_cm_call("wait", sock, req, timeout >= 0 ? (int) (timeout * 1000) + 30000 : -1, &rep);
        classad_free(req);
        if (r < 0)
                return CLI_EXIT_FAILURE;
        if (!rep.ok) {
                if (rep.errno_name && strcmp(rep.errno_name, "ETIMEDOUT") == 0)
                        printf("Job %s is still in the queue after %g s: timed out.\n", id, timeout);
                else
                        fprintf(stderr, "glean wait: %s: %s\n", id, rep.reason ? rep.reason : "refused");
                cli_reply_clear(&rep);
                return CLI_EXIT_FAILURE;
        }
        if (glean_msg_get_ad(rep.last, "Ad", &ad) < 0) {
                fprintf(stderr, "glean wait: malformed reply: no Ad (the job's history ad)\n");
                cli_reply_clear(&rep);
                return CLI_EXIT_FAILURE;
        }
        r = report_end(id, ad);
        classad_free(ad);
        cli_reply_clear(&rep);
        fflush(stdout);
        return r;
}

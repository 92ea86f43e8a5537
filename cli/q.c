/* SPDX-License-Identifier: Apache-2.0 */
/*
 * q.c — `glean q` (condor_q) and `glean history` (condor_history): the
 * jobs in the central manager's queue, and those that left it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "common/proto.h"
#include "jobs.h"

#define TIMEOUT_MS 60000
#define MAX_ANALYZED 20

static const char q_usage[] =
        "usage: glean q [-nobatch | -l | -af ATTR... | -held | -run | -analyze | -better-analyze | --json]\n"
        "               [-constraint EXPR] [-allusers] [--socket PATH] [OWNER | CLUSTER | CLUSTER.PROC]...";

static const char history_usage[] =
        "usage: glean history [-l | -af ATTR... | --json] [-constraint EXPR] [-limit N]\n"
        "                     [--socket PATH] [OWNER | CLUSTER | CLUSTER.PROC]...";

typedef enum View {
        VIEW_BATCH,
        VIEW_NOBATCH,
        VIEW_LONG,
        VIEW_AF,
        VIEW_HELD,
        VIEW_RUN,
        VIEW_ANALYZE,
        VIEW_BETTER_ANALYZE,
        VIEW_JSON,
} View;

typedef struct QArgs {
        View view;
        bool all_users;
        const char *socket;
        const char *constraint;
        int64_t limit; /* -1: none */
        char **af;     /* borrowed from argv */
        size_t n_af;
        char *ids;      /* "1 2.3" */
        char *owners;   /* Owner == "a" || Owner == "b" */
        bool restricted; /* ids or owners named */
} QArgs;

static void qargs_clear(QArgs *a) {
        free(a->af);
        free(a->ids);
        free(a->owners);
}

static int append(char **s, const char *sep, const char *add) {
        char *n = NULL;

        if (asprintf(&n, "%s%s%s", *s ? *s : "", *s ? sep : "", add) < 0)
                return -ENOMEM;
        free(*s);
        *s = n;
        return 0;
}

static int set_view(const char *verb, const char *usage, QArgs *a, View v, const char *arg) {
        if (a->view != VIEW_BATCH && a->view != v)
                return cli_usage_error(verb, usage, "'%s': one view at a time", arg);
        a->view = v;
        return 0;
}

/* 0 parsed, 1 --help shown, -EINVAL usage error (printed). */
static int parse_query_args(const char *verb, const char *usage, bool history, int argc, char **argv, QArgs *a) {
        *a = (QArgs){ .limit = -1 };
        for (int i = 1; i < argc; i++) {
                const char *arg = argv[i];
                bool more = i + 1 < argc;
                int r = 0;

                if (cli_opt(arg, "help", 1) || strcmp(arg, "-h") == 0) {
                        printf("%s\n", usage);
                        return 1;
                } else if (cli_opt(arg, "socket", 4) && more)
                        a->socket = argv[++i];
                else if (cli_opt(arg, "constraint", 5) && more) {
                        if (a->constraint)
                                return cli_usage_error(verb, usage, "-constraint given twice: join them with &&");
                        a->constraint = argv[++i];
                } else if (cli_opt(arg, "json", 4))
                        r = set_view(verb, usage, a, VIEW_JSON, arg);
                else if (cli_opt(arg, "long", 1))
                        r = set_view(verb, usage, a, VIEW_LONG, arg);
                else if (cli_opt(arg, "af", 2) || cli_opt(arg, "autoformat", 5)) {
                        if ((r = set_view(verb, usage, a, VIEW_AF, arg)) < 0)
                                return r;
                        while (i + 1 < argc && argv[i + 1][0] != '-') {
                                char **g = realloc(a->af, (a->n_af + 1) * sizeof(char *));
                                if (!g)
                                        return -ENOMEM;
                                a->af = g;
                                a->af[a->n_af++] = argv[++i];
                        }
                        if (a->n_af == 0)
                                return cli_usage_error(verb, usage, "%s: which attributes?", arg);
                } else if (history && (cli_opt(arg, "limit", 3) || cli_opt(arg, "match", 3)) && more) {
                        char *end;
                        long long v = strtoll(argv[++i], &end, 10);
                        if (*end || end == argv[i] || v < 0)
                                return cli_usage_error(verb, usage, "%s: '%s' is not a number >= 0", arg, argv[i]);
                        a->limit = v;
                } else if (!history && cli_opt(arg, "nobatch", 3))
                        r = set_view(verb, usage, a, VIEW_NOBATCH, arg);
                else if (!history && cli_opt(arg, "batch", 5))
                        r = set_view(verb, usage, a, VIEW_BATCH, arg);
                else if (!history && (cli_opt(arg, "held", 4) || cli_opt(arg, "hold", 4)))
                        r = set_view(verb, usage, a, VIEW_HELD, arg);
                else if (!history && cli_opt(arg, "run", 3))
                        r = set_view(verb, usage, a, VIEW_RUN, arg);
                else if (!history && cli_opt(arg, "analyze", 2))
                        r = set_view(verb, usage, a, VIEW_ANALYZE, arg);
                else if (!history && cli_opt(arg, "better-analyze", 3))
                        r = set_view(verb, usage, a, VIEW_BETTER_ANALYZE, arg);
                else if (!history && cli_opt(arg, "allusers", 3))
                        a->all_users = true;
                else if (arg[0] == '-')
                        return cli_usage_error(verb, usage, "unknown option or missing argument '%s'", arg);
                else if (cli_is_job_id(arg)) {
                        if (append(&a->ids, " ", arg) < 0)
                                return -ENOMEM;
                        a->restricted = true;
                } else {
                        _cleanup_free_ char *q = cli_quote(arg), *clause = NULL;
                        if (!q || asprintf(&clause, "Owner == %s", q) < 0 || append(&a->owners, " || ", clause) < 0)
                                return -ENOMEM;
                        a->restricted = true;
                }
                if (r < 0)
                        return r;
        }
        if (a->constraint) {
                ClassAdExpr *e = NULL;
                CaError err = {};
                if (classad_expr_parse(a->constraint, strlen(a->constraint), GLEAN_CA_MODE, &e, &err) < 0)
                        return cli_usage_error(verb, usage, "-constraint: line %d, column %d: %s", err.line,
                                               err.column, err.msg);
                classad_expr_free(e);
        }
        return 0;
}

/* The Constraint to send: the user's, the owners', and (default) mine. */
static int build_constraint(const QArgs *a, const char *me, char **ret) {
        char *c = NULL;

        if (a->owners && asprintf(&c, "(%s)", a->owners) < 0)
                return -ENOMEM;
        if (me) {
                _cleanup_free_ char *q = cli_quote(me), *clause = NULL;
                if (!q || asprintf(&clause, "Owner == %s", q) < 0 || append(&c, " && ", clause) < 0)
                        return free(c), -ENOMEM;
        }
        if (a->constraint) {
                _cleanup_free_ char *clause = NULL;
                if (asprintf(&clause, "(%s)", a->constraint) < 0 || append(&c, " && ", clause) < 0)
                        return free(c), -ENOMEM;
        }
        *ret = c;
        return 0;
}

static int query(CliConn *c, const char *verb, GleanCommand cmd, const char *ids, const char *constraint,
                 const char *attrs, int64_t limit, CliReply *ret) {
        ClassAd *req = NULL;
        int r = glean_msg_new(cmd, &req);

        if (r < 0)
                return r;
        if (ids)
                classad_set_string(req, "Ids", ids);
        if (constraint)
                classad_set_string(req, "Constraint", constraint);
        if (attrs)
                classad_set_string(req, "Attrs", attrs);
        if (limit >= 0)
                classad_set_int(req, "Limit", limit);
        r = cli_cm_request(c, verb, req, TIMEOUT_MS, ret);
        classad_free(req);
        if (r >= 0 && !ret->ok) {
                fprintf(stderr, "glean %s: refused: %s\n", verb, ret->reason ? ret->reason : "no reason given");
                cli_reply_clear(ret);
                return -EPERM;
        }
        return r;
}

/* "Total for all users": a count per state (Limit 0). false when the
 * central manager would not count. */
static bool count_all(CliConn *c, CliJobCounts *ret) {
        static const int states[] = { 1, 2, 3, 4, 5, 7 };
        CliJobCounts n = {};

        for (size_t k = 0; k < sizeof states / sizeof *states; k++) {
                CliReply rep;
                char constraint[32];
                size_t v;

                snprintf(constraint, sizeof constraint, "JobStatus == %d", states[k]);
                if (query(c, "q", GLEAN_CMD_QUERY, NULL, constraint, "ClusterId", 0, &rep) < 0)
                        return false;
                v = rep.count >= 0 ? (size_t) rep.count : rep.n_ads;
                cli_reply_clear(&rep);
                n.total += v;
                switch (states[k]) {
                case 1: n.idle = v; break;
                case 2: n.running = v; break;
                case 3: n.removed = v; break;
                case 4: n.completed = v; break;
                case 5: n.held = v; break;
                default: n.suspended = v;
                }
        }
        *ret = n;
        return true;
}

static void print_schedd_line(const CliConn *c, int64_t now) {
        char host[256] = "", when[64] = "";
        time_t t = (time_t) now;
        struct tm tm;

        if (gethostname(host, sizeof host - 1) < 0)
                snprintf(host, sizeof host, "localhost");
        if (localtime_r(&t, &tm))
                snprintf(when, sizeof when, "%02d/%02d/%02d %02d:%02d:%02d", tm.tm_mon + 1, tm.tm_mday,
                         tm.tm_year % 100, tm.tm_hour, tm.tm_min, tm.tm_sec); /* condor_q's two-digit year */
        if (c->via_agent)
                printf("-- Schedd: the central manager, through the agent of %s : <%s> @ %s\n", host, c->path, when);
        else
                printf("-- Schedd: %s : <%s> @ %s\n", host, c->path, when);
}

static int analyze(CliConn *c, ClassAd **jobs, size_t n, bool better, int64_t now) {
        CliReply slots;
        size_t shown = 0;

        if (query(c, "q", GLEAN_CMD_QUERY_SLOTS, NULL, NULL, NULL, -1, &slots) < 0)
                return CLI_EXIT_FAILURE;
        for (size_t i = 0; i < n && shown < MAX_ANALYZED; i++) {
                char id[64];
                cli_fmt_job_id(jobs[i], id, sizeof id);
                printf("%s-- Job %s\n\n", shown ? "\n" : "", id);
                cli_print_analysis(stdout, jobs[i], slots.ads, slots.n_ads, better, now);
                shown++;
        }
        if (n > shown)
                printf("\n... %zu more jobs not analyzed: name the ones to analyze\n", n - shown);
        if (n == 0)
                printf("No job to analyze.\n");
        cli_reply_clear(&slots);
        return CLI_EXIT_OK;
}

static const char *view_attrs(View v) {
        switch (v) {
        case VIEW_BATCH:
                return "ClusterId ProcId Owner JobBatchName QDate JobStatus TotalSubmitProcs";
        case VIEW_NOBATCH:
        case VIEW_RUN:
        case VIEW_HELD:
                return "ClusterId ProcId Owner QDate JobStatus RemoteWallClockTime JobCurrentStartDate JobPrio "
                       "MemoryUsage ImageSize Cmd Args Arguments RemoteHost HoldReason EnteredCurrentStatus "
                       "TransferringInput TransferringOutput";
        default:
                return NULL; /* everything: expressions may read any attribute */
        }
}

/* -af of plain attribute names: only those are asked for (the listing of
 * 100,000 jobs is then a fraction of their whole ads). NULL (everything)
 * when an item is an expression, which may read any attribute. */
static char *af_attrs(const QArgs *a) {
        size_t len = 1;

        for (size_t i = 0; i < a->n_af; i++) {
                const char *p = a->af[i];
                if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z')))
                        return NULL;
                for (; *p; p++)
                        if (!(*p == '_' || (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
                              (*p >= '0' && *p <= '9')))
                                return NULL;
                len += strlen(a->af[i]) + 1;
        }
        char *s = malloc(len + sizeof " JobStatus");
        if (!s)
                return NULL;
        *s = 0;
        for (size_t i = 0; i < a->n_af; i++) {
                strcat(s, a->af[i]);
                strcat(s, " ");
        }
        strcat(s, "JobStatus"); /* the totals count by it */
        return s;
}

int cli_verb_q(int argc, char **argv) {
        _cleanup_free_ char *me = NULL, *constraint = NULL;
        int64_t now = (int64_t) time(NULL);
        CliJobCounts counts = {}, all;
        CliReply rep;
        CliConn c;
        QArgs a;
        bool mine_only;
        int r, status = CLI_EXIT_OK;

        r = parse_query_args("q", q_usage, false, argc, argv, &a);
        if (r != 0) {
                qargs_clear(&a);
                return r > 0 ? CLI_EXIT_OK : r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
        }
        me = cli_user_name();
        /* condor_q's default: my jobs, unless jobs or owners are named,
         * -allusers is given, or root asks. */
        mine_only = !a.restricted && !a.all_users && getuid() != 0;
        if (!me || build_constraint(&a, mine_only ? me : NULL, &constraint) < 0) {
                qargs_clear(&a);
                return CLI_EXIT_FAILURE;
        }
        if (cli_cm_connect("q", a.socket, &c) < 0) {
                qargs_clear(&a);
                return CLI_EXIT_FAILURE;
        }
        _cleanup_free_ char *projection = a.view == VIEW_AF ? af_attrs(&a) : NULL;
        if (query(&c, "q", GLEAN_CMD_QUERY, a.ids, constraint, projection ? projection : view_attrs(a.view), -1,
                  &rep) < 0) {
                cli_cm_close(&c);
                qargs_clear(&a);
                return CLI_EXIT_FAILURE;
        }
        for (size_t i = 0; i < rep.n_ads; i++)
                cli_job_counts_add(&counts, rep.ads[i]);

        switch (a.view) {
        case VIEW_JSON:
                cli_json_ads(stdout, rep.ads, rep.n_ads);
                break;
        case VIEW_LONG:
                cli_print_long(stdout, rep.ads, rep.n_ads);
                break;
        case VIEW_AF:
                cli_print_af(stdout, rep.ads, rep.n_ads, a.af, a.n_af);
                break;
        case VIEW_ANALYZE:
        case VIEW_BETTER_ANALYZE:
                status = analyze(&c, rep.ads, rep.n_ads, a.view == VIEW_BETTER_ANALYZE, now);
                break;
        default:
                print_schedd_line(&c, now);
                if (a.view == VIEW_BATCH)
                        cli_print_batch(stdout, rep.ads, rep.n_ads);
                else if (a.view == VIEW_NOBATCH)
                        cli_print_nobatch(stdout, rep.ads, rep.n_ads, now);
                else if (a.view == VIEW_HELD)
                        cli_print_held(stdout, rep.ads, rep.n_ads);
                else
                        cli_print_run(stdout, rep.ads, rep.n_ads, now);
                printf("\n");
                cli_print_totals(stdout, "query", &counts);
                if (mine_only)
                        cli_print_totals(stdout, me, &counts);
                if (count_all(&c, &all))
                        cli_print_totals(stdout, "all users", &all);
        }
        cli_reply_clear(&rep);
        cli_cm_close(&c);
        qargs_clear(&a);
        if (fflush(stdout) != 0)
                return CLI_EXIT_FAILURE;
        return status;
}

int cli_verb_history(int argc, char **argv) {
        _cleanup_free_ char *constraint = NULL;
        CliReply rep;
        CliConn c;
        QArgs a;
        int r;

        r = parse_query_args("history", history_usage, true, argc, argv, &a);
        if (r != 0) {
                qargs_clear(&a);
                return r > 0 ? CLI_EXIT_OK : r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
        }
        if (build_constraint(&a, NULL, &constraint) < 0 || cli_cm_connect("history", a.socket, &c) < 0) {
                qargs_clear(&a);
                return CLI_EXIT_FAILURE;
        }
        _cleanup_free_ char *projection = a.view == VIEW_AF ? af_attrs(&a) : NULL;
        r = query(&c, "history", GLEAN_CMD_HISTORY, a.ids, constraint, projection, a.limit, &rep);
        cli_cm_close(&c);
        if (r < 0) {
                qargs_clear(&a);
                return CLI_EXIT_FAILURE;
        }
        if (a.view == VIEW_JSON)
                cli_json_ads(stdout, rep.ads, rep.n_ads);
        else if (a.view == VIEW_LONG)
                cli_print_long(stdout, rep.ads, rep.n_ads);
        else if (a.view == VIEW_AF)
                cli_print_af(stdout, rep.ads, rep.n_ads, a.af, a.n_af);
        else
                cli_print_history(stdout, rep.ads, rep.n_ads);
        cli_reply_clear(&rep);
        qargs_clear(&a);
        return fflush(stdout) != 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

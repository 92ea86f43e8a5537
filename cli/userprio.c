/* SPDX-License-Identifier: Apache-2.0 */
/*
 * userprio.c — `glean userprio`, like condor_userprio: the submitters'
 * and groups' priorities, factors and usage from the central manager's
 * accounts, the group quotas, and the administrators' changes.
 *
 * The listing and the administrators' changes go to the central manager
 * (the UserPrio message, through its socket or this machine's agent: see
 * jobs.h). With --db PATH (--database), or when no central manager
 * answers (said on stderr), the command reads and writes the accounts
 * database itself (default NEGOTIATOR_DATABASE). -quotas always computes
 * here, from the configuration and the database. Options take one dash or
 * two (-allusers, --allusers), as condor_userprio's do.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "accounting/accounting.h"
#include "cli.h"
#include "common/proto.h"
#include "common/users.h"
#include "config/config.h"
#include "jobs.h"
#include "queue/queue.h"

static const char usage_text[] =
        "usage: glean userprio [--socket PATH | --db PATH] [--config FILE] [-allusers] [-usage] [-grouprollup]\n"
        "                      [--json]\n"
        "       glean userprio [--db PATH] [--config FILE] -quotas [--pool-size N] [--json]\n"
        "       glean userprio [--socket PATH | --db PATH] [--config FILE] -setfactor USER FACTOR |\n"
        "                      -setprio USER PRIO | -resetusage USER | -delete USER";

#define DAY 86400.0

typedef enum Action {
        ACTION_LIST,
        ACTION_QUOTAS,
        ACTION_SETFACTOR,
        ACTION_SETPRIO,
        ACTION_RESETUSAGE,
        ACTION_DELETE,
} Action;

typedef struct Opts {
        const char *db, *config, *socket;
        bool all, usage, rollup, json;
        bool have_pool_size;
        double pool_size;
        Action action;
        const char *user;
        double value;
} Opts;

__attribute__((format(printf, 1, 2))) static int usage_error(const char *fmt, ...) {
        char msg[256];
        va_list ap;

        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
        cli_usage_error("userprio", usage_text, "%s", msg);
        return CLI_EXIT_USAGE;
}

/* "-x" and "--x" are the same option. */
static bool is_opt(const char *arg, const char *name) {
        if (arg[0] == '-' && arg[1] == '-')
                arg++;
        return strcmp(arg, name) == 0;
}

static bool parse_number(const char *s, double *ret) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v))
                return false;
        *ret = v;
        return true;
}

static int set_action(Opts *o, Action a, const char *name) {
        if (o->action != ACTION_LIST)
                return usage_error("%s: only one of -quotas, -setfactor, -setprio, -resetusage, -delete", name);
        o->action = a;
        return 0;
}

static int parse_args(int argc, char **argv, Opts *o) {
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                bool more = i + 1 < argc, two = i + 2 < argc;
                int r = 0;

                if (is_opt(a, "-h") || is_opt(a, "-help")) {
                        printf("%s\n", usage_text);
                        exit(CLI_EXIT_OK);
                } else if ((is_opt(a, "-db") || is_opt(a, "-database")) && more)
                        o->db = argv[++i];
                else if (is_opt(a, "-socket") && more)
                        o->socket = argv[++i];
                else if (is_opt(a, "-config") && more)
                        o->config = argv[++i];
                else if (is_opt(a, "-allusers"))
                        o->all = true;
                else if (is_opt(a, "-usage"))
                        o->usage = true;
                else if (is_opt(a, "-grouprollup"))
                        o->rollup = true;
                else if (is_opt(a, "-json"))
                        o->json = true;
                else if (is_opt(a, "-quotas"))
                        r = set_action(o, ACTION_QUOTAS, a);
                else if (is_opt(a, "-pool-size") && more) {
                        if (!parse_number(argv[++i], &o->pool_size) || o->pool_size < 0)
                                return usage_error("--pool-size: '%s' is not a number of slots >= 0", argv[i]);
                        o->have_pool_size = true;
                } else if ((is_opt(a, "-setfactor") || is_opt(a, "-setprio")) && two) {
                        bool factor = is_opt(a, "-setfactor");
                        if ((r = set_action(o, factor ? ACTION_SETFACTOR : ACTION_SETPRIO, a)) != 0)
                                return r;
                        o->user = argv[++i];
                        if (!parse_number(argv[++i], &o->value))
                                return usage_error("'%s' is not a number", argv[i]);
                        if (factor && o->value < 1)
                                return usage_error("a priority factor must be at least 1, not %s", argv[i]);
                        if (!factor && o->value < ACCT_MIN_PRIORITY)
                                return usage_error("a priority must be at least 0.5, not %s", argv[i]);
                } else if ((is_opt(a, "-resetusage") || is_opt(a, "-delete")) && more) {
                        if ((r = set_action(o, is_opt(a, "-delete") ? ACTION_DELETE : ACTION_RESETUSAGE, a)) != 0)
                                return r;
                        o->user = argv[++i];
                } else if (a[0] == '-')
                        return usage_error("unknown option or missing argument '%s'", a);
                else
                        return usage_error("unexpected argument '%s'", a);
                if (r != 0)
                        return r;
        }
        return 0;
}

/* ---- opening ---- */

static bool is_admin(const Config *cfg) {
        GleanPeer p = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
        _cleanup_free_ char *buf = NULL;
        struct passwd pw;
        char **admins = NULL;
        ConfigError err = {};
        bool ok;

        if (glean_getpwuid(p.uid, &pw, &buf) > 0)
                snprintf(p.user, sizeof(p.user), "%s", pw.pw_name);
        else
                snprintf(p.user, sizeof(p.user), "%u", (unsigned) p.uid);
        (void) config_get_list(cfg, "ADMINISTRATORS", &admins, &err);
        ok = glean_peer_is_admin(&p, admins);
        config_strv_free(admins);
        return ok;
}

/* The database path: --db, else NEGOTIATOR_DATABASE. */
static int db_path(const Opts *o, const Config *cfg, char **ret) {
        ConfigError err = {};
        int r;

        if (o->db)
                return (*ret = strdup(o->db)) ? 0 : -ENOMEM;
        r = config_get(cfg, "NEGOTIATOR_DATABASE", ret, &err);
        if (r < 0) {
                cli_config_error("userprio", &err);
                return r;
        }
        return 0;
}

/* The accounts: path NULL for an empty, in-memory set (offline -quotas). */
static int open_accounts(const Config *cfg, const char *path, bool readonly, Accountant **ret) {
        AcctSettings s = {};
        AcctGroups *g = NULL;
        ConfigError err = {};
        char why[512] = "";
        int r;

        if ((r = acct_settings_from_config(cfg, &s, &err)) < 0 || (r = acct_groups_from_config(cfg, &g, &err)) < 0) {
                acct_settings_clear(&s);
                cli_config_error("userprio", &err);
                return r;
        }
        r = acct_open(path, readonly ? ACCT_OPEN_READONLY : 0, queue_schema(), &s, g, (double) time(NULL), ret, why,
                      sizeof(why));
        if (r < 0)
                fprintf(stderr, "glean userprio: %s\n", why[0] ? why : strerror(-r));
        return r;
}

/* ---- listing ---- */

static void format_time(double t, double now, bool in_use, char *buf, size_t size) {
        time_t tt = (time_t) t;
        struct tm tm;

        if (in_use && t >= now)
                snprintf(buf, size, "<now>");
        else if (t <= 0 || !localtime_r(&tt, &tm))
                snprintf(buf, size, "-");
        else
                strftime(buf, size, "%m/%d/%Y %H:%M", &tm);
}

static int by_eup(const void *x, const void *y) {
        const AcctEntry *a = x, *b = y;

        if (a->eup != b->eup)
                return a->eup < b->eup ? -1 : 1;
        return strcmp(a->name, b->name);
}

static bool shown(const Opts *o, const AcctEntry *e, double now) {
        if (e->is_group)
                return o->rollup;
        /* condor_userprio's default: those active in the last day. */
        return o->all || e->in_use > 0 || (e->last_usage > 0 && now - e->last_usage <= DAY);
}

static void print_json_number(const char *key, double v, bool last) {
        if (!isfinite(v))
                printf("    \"%s\": null%s\n", key, last ? "" : ",");
        else
                printf("    \"%s\": %.17g%s\n", key, v, last ? "" : ",");
}

static void print_json_entry(const AcctEntry *e, const AcctGroups *g, bool first) {
        printf("%s  {\n    \"name\": ", first ? "" : ",\n");
        cli_json_string(stdout, e->name);
        printf(",\n    \"is_group\": %s,\n    \"group\": ", e->is_group ? "true" : "false");
        cli_json_string(stdout, acct_groups_get(g, e->group)->name);
        printf(",\n");
        print_json_number("effective_priority", e->eup, false);
        print_json_number("real_priority", e->rup, false);
        print_json_number("priority_factor", e->factor, false);
        printf("    \"factor_set\": %s,\n", e->factor_set ? "true" : "false");
        printf("    \"resources_in_use\": %u,\n", e->in_use);
        print_json_number("weighted_resources_in_use", e->weighted_in_use, false);
        print_json_number("accumulated_usage_hours", e->accumulated / 3600, false);
        print_json_number("weighted_accumulated_usage_hours", e->weighted_accumulated / 3600, false);
        print_json_number("begin_usage_time", e->begin_usage > 0 ? e->begin_usage : NAN, false);
        print_json_number("last_usage_time", e->last_usage > 0 ? e->last_usage : NAN, true);
        printf("  }");
}

static void print_row(const Opts *o, const AcctEntry *e, double now, int indent) {
        char begin[32], last[32], name[64];

        format_time(e->begin_usage, now, false, begin, sizeof(begin));
        format_time(e->last_usage, now, e->in_use > 0, last, sizeof(last));
        snprintf(name, sizeof(name), "%*s%s", indent, "", e->name);
        if (o->usage)
                printf("%-38s %8.2f %14.2f %16s %16s\n", name, e->weighted_in_use, e->weighted_accumulated / 3600,
                       begin, last);
        else
                printf("%-38s %11.2f %11.2f %10.2f %8.2f %14.2f %16s %16s\n", name, e->eup, e->rup, e->factor,
                       e->weighted_in_use, e->weighted_accumulated / 3600, begin, last);
}

static void print_header(const Opts *o, double t) {
        if (t > 0) {
                char when[32];
                format_time(t, 0, false, when, sizeof(when));
                printf("Last Priority Update: %s\n", when);
        }
        if (o->usage) {
                printf("%-38s %8s %14s %16s %16s\n", "", "Res", "Accumulated", "Usage", "Last");
                printf("%-38s %8s %14s %16s %16s\n", o->rollup ? "User or Group Name" : "User Name", "In Use",
                       "Usage (hours)", "Start Time", "Usage Time");
                printf("%-38s %8s %14s %16s %16s\n", "--------------------------------------", "--------",
                       "--------------", "----------------", "----------------");
        } else {
                printf("%-38s %11s %11s %10s %8s %14s %16s %16s\n", "", "Effective", "Real", "Priority", "Res",
                       "Total Usage", "Usage", "Last");
                printf("%-38s %11s %11s %10s %8s %14s %16s %16s\n", o->rollup ? "User or Group Name" : "User Name",
                       "Priority", "Priority", "Factor", "In Use", "(wghted-hrs)", "Start Time", "Usage Time");
                printf("%-38s %11s %11s %10s %8s %14s %16s %16s\n", "--------------------------------------",
                       "-----------", "-----------", "----------", "--------", "--------------", "----------------",
                       "----------------");
        }
}

/* The tree below group gi, its own submitters under it (by EUP). */
static void print_group(const Opts *o, const AcctGroups *g, const AcctEntry *list, size_t n, size_t gi, double now) {
        const AcctGroup *grp = acct_groups_get(g, gi);

        for (size_t i = 0; i < n; i++)
                if (list[i].is_group && list[i].group == gi && strcmp(list[i].name, grp->name) == 0)
                        print_row(o, &list[i], now, 2 * (int) (grp->depth ? grp->depth - 1 : 0));
        for (size_t i = 0; i < n; i++)
                if (!list[i].is_group && list[i].group == gi && shown(o, &list[i], now))
                        print_row(o, &list[i], now, 2 * (int) grp->depth);
        for (size_t c = 0; c < grp->n_children; c++)
                print_group(o, g, list, n, grp->children[c], now);
}

/* entries: the accounts as of now, g their groups. */
static void list_entries(const Opts *o, AcctEntry *entries, size_t n, const AcctGroups *g, double now,
                         double last_update) {
        double in_use = 0, usage = 0;
        size_t users = 0;
        bool first = true;

        if (n > 1)
                qsort(entries, n, sizeof(*entries), by_eup);
        if (o->json) {
                printf("[\n");
                for (size_t i = 0; i < n; i++)
                        if (shown(o, &entries[i], now)) {
                                print_json_entry(&entries[i], g, first);
                                first = false;
                        }
                printf("%s]\n", first ? "" : "\n");
                return;
        }
        print_header(o, last_update);
        if (o->rollup) {
                const AcctGroup *root = acct_groups_get(g, 0);
                /* Top-level groups first, then what is in no group. */
                for (size_t c = 0; c < root->n_children; c++)
                        print_group(o, g, entries, n, root->children[c], now);
                print_group(o, g, entries, n, 0, now);
        } else
                for (size_t i = 0; i < n; i++)
                        if (shown(o, &entries[i], now))
                                print_row(o, &entries[i], now, 0);
        for (size_t i = 0; i < n; i++)
                if (!entries[i].is_group && shown(o, &entries[i], now)) {
                        users++;
                        in_use += entries[i].weighted_in_use;
                        usage += entries[i].weighted_accumulated;
                }
        printf("%-38s\n", "--------------------------------------");
        if (o->usage)
                printf("Number of users: %-21zu %8.2f %14.2f\n", users, in_use, usage / 3600);
        else
                printf("Number of users: %-21zu %11s %11s %10s %8.2f %14.2f\n", users, "", "", "", in_use,
                       usage / 3600);
}

static int list(const Opts *o, const Accountant *a) {
        _cleanup_free_ AcctEntry *entries = NULL;
        double last_update = 0;
        size_t n = 0;
        int r;

        r = acct_list(a, &entries, &n);
        if (r < 0)
                return r;
        if (acct_get_meta(a, "last_update", &last_update) < 0)
                last_update = 0;
        list_entries(o, entries, n, acct_groups(a), acct_now(a), last_update);
        return 0;
}

/* ---- quotas ---- */

static int quotas(const Opts *o, const Accountant *a) {
        const AcctGroups *g = acct_groups(a);
        size_t n = acct_groups_count(g);
        _cleanup_free_ double *in_use = calloc(n, sizeof(double));
        AcctQuotaResult q = {};
        double pool = o->pool_size;
        int r;

        if (!in_use)
                return -ENOMEM;
        if (!o->have_pool_size && acct_get_meta(a, "pool_size", &pool) < 0) {
                fprintf(stderr, "glean userprio: the pool's size is not known yet: give it with --pool-size N\n");
                return -EINVAL;
        }
        for (size_t i = 0; i < n; i++) {
                AcctEntry e;
                if (acct_get(a, acct_groups_get(g, i)->name, &e) >= 0 && e.is_group)
                        in_use[i] = e.weighted_in_use;
        }
        r = acct_quotas_compute(g, pool, NULL, &q);
        if (r < 0)
                return r;
        for (size_t i = 0; i < q.n_warnings; i++)
                fprintf(stderr, "warning: %s\n", q.warnings[i]);
        if (o->json) {
                printf("[\n");
                for (size_t i = 0; i < n; i++) {
                        const AcctGroup *grp = acct_groups_get(g, i);
                        printf("%s  {\n    \"name\": ", i ? ",\n" : "");
                        cli_json_string(stdout, grp->name);
                        printf(",\n    \"parent\": ");
                        if (i == 0)
                                printf("null");
                        else
                                cli_json_string(stdout, acct_groups_get(g, grp->parent)->name);
                        printf(",\n    \"quota_kind\": \"%s\",\n",
                               i == 0 ? "pool" : grp->has_static ? "static" : grp->has_dynamic ? "dynamic" : "none");
                        print_json_number("configured_quota", q.q[i].configured, false);
                        print_json_number("effective_quota", q.q[i].quota, false);
                        print_json_number("own_quota", q.q[i].own, false);
                        print_json_number("weighted_resources_in_use", in_use[i], false);
                        printf("    \"scaled\": %s,\n", q.q[i].scaled ? "true" : "false");
                        printf("    \"accept_surplus\": %s,\n", grp->accept_surplus ? "true" : "false");
                        printf("    \"autoregroup\": %s\n  }", grp->autoregroup ? "true" : "false");
                }
                printf("\n]\n");
        } else {
                printf("Pool size: %g\n", pool);
                printf("%-40s %-8s %10s %10s %10s %8s %8s %6s\n", "Group", "Kind", "Configured", "Effective", "Own",
                       "In Use", "Surplus", "Scaled");
                printf("%-40s %-8s %10s %10s %10s %8s %8s %6s\n", "----------------------------------------",
                       "--------", "----------", "----------", "----------", "--------", "--------", "------");
                for (size_t i = 0; i < n; i++) {
                        const AcctGroup *grp = acct_groups_get(g, i);
                        char name[64];
                        snprintf(name, sizeof(name), "%*s%s", 2 * (int) (grp->depth ? grp->depth - 1 : 0), "",
                                 grp->name);
                        printf("%-40s %-8s %10.3f %10.0f %10.3f %8.2f %8s %6s\n", name,
                               i == 0 ? "pool" : grp->has_static ? "static" : grp->has_dynamic ? "dynamic" : "-",
                               q.q[i].configured, q.q[i].quota, q.q[i].own, in_use[i],
                               i == 0 ? "-" : grp->accept_surplus ? "yes" : "no", q.q[i].scaled ? "yes" : "no");
                }
        }
        acct_quota_result_clear(&q);
        return 0;
}

/* ---- administrators ---- */

static void print_changed(const Opts *o) {
        switch (o->action) {
        case ACTION_SETFACTOR:
                printf("The priority factor of %s was set to %g\n", o->user, o->value);
                break;
        case ACTION_SETPRIO:
                printf("The real priority of %s was set to %g\n", o->user, o->value);
                break;
        case ACTION_RESETUSAGE:
                printf("The accumulated usage of %s was reset\n", o->user);
                break;
        default:
                printf("%s was deleted from the accounts\n", o->user);
        }
}

static int change(const Opts *o, Accountant *a) {
        double now = (double) time(NULL);
        int r;

        switch (o->action) {
        case ACTION_SETFACTOR:
                r = acct_set_factor(a, o->user, o->value, now);
                break;
        case ACTION_SETPRIO:
                r = acct_set_priority(a, o->user, o->value, now);
                break;
        case ACTION_RESETUSAGE:
                r = acct_reset_usage(a, o->user, now);
                break;
        default:
                r = acct_delete(a, o->user, now);
        }
        if (r == -ENOENT) {
                fprintf(stderr, "glean userprio: '%s' is not in the accounts (%s)\n", o->user,
                        strchr(o->user, '@') ? "submitters appear with their first job"
                                             : "a submitter not seen yet is named user@domain");
                return CLI_EXIT_USAGE;
        }
        if (r == -EBUSY) {
                fprintf(stderr, "glean userprio: '%s' holds claims: it can be deleted once they end\n", o->user);
                return CLI_EXIT_FAILURE;
        }
        if (r == -EPERM) {
                fprintf(stderr, "glean userprio: '%s' is a configured group: remove it from GROUP_NAMES instead\n",
                        o->user);
                return CLI_EXIT_FAILURE;
        }
        if (r < 0) {
                fprintf(stderr, "glean userprio: %s\n", acct_last_error(a)[0] ? acct_last_error(a) : strerror(-r));
                return CLI_EXIT_FAILURE;
        }
        print_changed(o);
        return CLI_EXIT_OK;
}

/* ---- through the central manager ---- */

static double ad_real(const ClassAd *ad, const char *name, double dflt) {
        double v;

        return classad_eval_real(ad, name, CA_MODE_OLD, &v) < 0 ? dflt : v;
}

/* The accounts the central manager lists, one ad per entry with
 * condor_userprio's attribute names (docs/commands.md). */
static int daemon_list(const Opts *o, const Config *cfg, CliConn *c) {
        _cleanup_free_ AcctEntry *entries = NULL;
        _cleanup_free_ char **names = NULL;
        AcctGroups *g = NULL;
        ConfigError err = {};
        ClassAd *req = NULL;
        CliReply rep;
        size_t n = 0;
        int r;

        if ((r = acct_groups_from_config(cfg, &g, &err)) < 0) {
                cli_config_error("userprio", &err);
                return CLI_EXIT_USAGE;
        }
        if (glean_msg_new(GLEAN_CMD_USER_PRIO, &req) < 0) {
                acct_groups_free(g);
                return CLI_EXIT_FAILURE;
        }
        classad_set_string(req, "Action", "list");
        r = cli_cm_request(c, "userprio", req, 60000, &rep);
        classad_free(req);
        if (r < 0) {
                acct_groups_free(g);
                return CLI_EXIT_FAILURE;
        }
        if (!rep.ok) {
                fprintf(stderr, "glean userprio: refused: %s\n", rep.reason ? rep.reason : "no reason given");
                cli_reply_clear(&rep);
                acct_groups_free(g);
                return CLI_EXIT_FAILURE;
        }
        entries = calloc(rep.n_ads ? rep.n_ads : 1, sizeof(*entries));
        names = calloc(rep.n_ads ? rep.n_ads : 1, sizeof(*names));
        if (!entries || !names) {
                cli_reply_clear(&rep);
                acct_groups_free(g);
                return CLI_EXIT_FAILURE;
        }
        for (size_t i = 0; i < rep.n_ads; i++) {
                const ClassAd *ad = rep.ads[i];
                AcctEntry *e = &entries[n];
                bool is_group = false, set = false;
                size_t gi = 0;

                if (classad_eval_string(ad, "Name", CA_MODE_OLD, &names[n]) < 0) {
                        fprintf(stderr, "glean userprio: an account without a Name in the reply: left out\n");
                        continue;
                }
                classad_eval_bool(ad, "IsAccountingGroup", CA_MODE_OLD, &is_group);
                classad_eval_bool(ad, "PriorityFactorSet", CA_MODE_OLD, &set);
                if (is_group ? acct_groups_find(g, names[n], &gi) < 0 : false)
                        gi = 0;
                else if (!is_group)
                        gi = acct_groups_of_submitter(g, names[n]);
                *e = (AcctEntry){
                        .name = names[n],
                        .is_group = is_group,
                        .group = gi,
                        .factor = ad_real(ad, "PriorityFactor", 1),
                        .factor_set = set,
                        .eup = ad_real(ad, "Priority", 0),
                        .in_use = (unsigned) ad_real(ad, "ResourcesUsed", 0),
                        .weighted_in_use = ad_real(ad, "WeightedResourcesUsed", ad_real(ad, "ResourcesUsed", 0)),
                        .accumulated = ad_real(ad, "AccumulatedUsage", 0),
                        .weighted_accumulated = ad_real(ad, "WeightedAccumulatedUsage", ad_real(ad, "AccumulatedUsage", 0)),
                        .begin_usage = ad_real(ad, "BeginUsageTime", 0),
                        .last_usage = ad_real(ad, "LastUsageTime", 0),
                };
                /* glean-negotiator's ads, as HTCondor's accountant's: Priority
                 * is the effective priority (EffectivePriority says it again),
                 * RealPriority the real one (else Priority / PriorityFactor). */
                if (classad_has(ad, "EffectivePriority"))
                        e->eup = ad_real(ad, "EffectivePriority", e->eup);
                e->rup = ad_real(ad, "RealPriority", e->factor > 0 ? e->eup / e->factor : e->eup);
                n++;
        }
        list_entries(o, entries, n, g, (double) time(NULL), ad_real(rep.last, "LastUpdate", 0));
        for (size_t i = 0; i < n; i++)
                free(names[i]);
        cli_reply_clear(&rep);
        acct_groups_free(g);
        return fflush(stdout) == 0 ? CLI_EXIT_OK : CLI_EXIT_FAILURE;
}

static int daemon_change(const Opts *o, CliConn *c) {
        static const char *const names[] = {
                [ACTION_SETFACTOR] = "setfactor", [ACTION_SETPRIO] = "setprio",
                [ACTION_RESETUSAGE] = "resetusage", [ACTION_DELETE] = "delete",
        };
        ClassAd *req = NULL;
        CliReply rep;
        int r;

        if (glean_msg_new(GLEAN_CMD_USER_PRIO, &req) < 0)
                return CLI_EXIT_FAILURE;
        classad_set_string(req, "Action", names[o->action]);
        classad_set_string(req, "Submitter", o->user);
        if (o->action == ACTION_SETFACTOR || o->action == ACTION_SETPRIO)
                classad_set_real(req, "Value", o->value);
        r = cli_cm_request(c, "userprio", req, 60000, &rep);
        classad_free(req);
        if (r < 0)
                return CLI_EXIT_FAILURE;
        if (!rep.ok) {
                fprintf(stderr, "glean userprio: refused: %s\n", rep.reason ? rep.reason : "no reason given");
                r = rep.errno_name && strcmp(rep.errno_name, "ENOENT") == 0 ? CLI_EXIT_USAGE : CLI_EXIT_FAILURE;
                cli_reply_clear(&rep);
                return r;
        }
        cli_reply_clear(&rep);
        print_changed(o);
        return CLI_EXIT_OK;
}

int cli_verb_userprio(int argc, char **argv) {
        _cleanup_free_ char *path = NULL;
        Config *cfg = NULL;
        Accountant *a = NULL;
        ConfigError err = {};
        Opts o = {};
        bool readonly, offline = false;
        int r;

        r = parse_args(argc, argv, &o);
        if (r != 0)
                return r;
        r = config_load_path(o.config, &cfg, &err);
        if (r < 0) {
                cli_config_error("userprio", &err);
                return CLI_EXIT_USAGE;
        }
        readonly = o.action == ACTION_LIST || o.action == ACTION_QUOTAS;
        /* The central manager first; the database when it does not answer. */
        if (!o.db && o.action != ACTION_QUOTAS) {
                CliConn c;

                if (cli_cm_connect("userprio", o.socket, &c) >= 0) {
                        r = o.action == ACTION_LIST ? daemon_list(&o, cfg, &c) : daemon_change(&o, &c);
                        cli_cm_close(&c);
                        config_free(cfg);
                        return r;
                }
                if (o.socket) {
                        config_free(cfg);
                        return CLI_EXIT_FAILURE;
                }
                fprintf(stderr, "glean userprio: no central manager answered: using the accounts database directly "
                                "(--db to choose it; as of its last write)\n");
        }
        if (!readonly && !is_admin(cfg)) {
                fprintf(stderr, "glean userprio: only root and ADMINISTRATORS may change the accounts\n");
                config_free(cfg);
                return CLI_EXIT_FAILURE;
        }
        if ((r = db_path(&o, cfg, &path)) < 0) {
                config_free(cfg);
                return CLI_EXIT_USAGE;
        }
        /* -quotas --pool-size works without a database: the tree alone. */
        offline = o.action == ACTION_QUOTAS && o.have_pool_size && !o.db && access(path, F_OK) < 0;
        r = open_accounts(cfg, offline ? NULL : path, readonly, &a);
        config_free(cfg);
        if (r < 0)
                return r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
        if (readonly)
                (void) acct_update(a, (double) time(NULL), NULL, NULL); /* in memory: as of now */
        if (o.action == ACTION_LIST)
                r = list(&o, a) < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
        else if (o.action == ACTION_QUOTAS)
                r = (r = quotas(&o, a)) == -EINVAL ? CLI_EXIT_USAGE : r < 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
        else
                r = change(&o, a);
        acct_close(a);
        return r;
}

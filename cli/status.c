/* SPDX-License-Identifier: Apache-2.0 */
/*
 * status.c — `glean status` (condor_status): the pool's slots as the
 * central manager's collector has them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "common/proto.h"
#include "jobs.h"

#define TIMEOUT_MS 60000

static const char usage[] =
        "usage: glean status [-l | -af ATTR... | --json | -total] [-avail | -claimed] [-constraint EXPR]\n"
        "                    [--socket PATH] [NAME]...";

static void help(void) {
        printf("%s\n\n"
               "The slots of the pool: Name OpSys Arch State Activity LoadAv Mem ActvtyTime,\n"
               "then the summary by Arch/OpSys. NAME selects slots by their Name or Machine.\n\n"
               "  -l, -long          every attribute of each slot ad\n"
               "  -af ATTR...        the attributes' values, space separated\n"
               "  --json             the slot ads as a JSON array\n"
               "  -total             the summary table only\n"
               "  -avail             slots that could start a job now (Unclaimed and Idle)\n"
               "  -claimed           claimed slots, with who uses them\n"
               "  -constraint EXPR   slots for which EXPR is true\n"
               "Options take one dash or two, as condor_status's do.\n",
               usage);
}

static int add(char **c, const char *clause) {
        char *n = NULL;

        if (asprintf(&n, "%s%s(%s)", *c ? *c : "", *c ? " && " : "", clause) < 0)
                return -ENOMEM;
        free(*c);
        *c = n;
        return 0;
}

static int by_name(const void *x, const void *y) {
        ClassAd *const *a = x, *const *b = y;
        char *na = NULL, *nb = NULL;
        int r;

        classad_eval_string(*a, "Name", CA_MODE_OLD, &na);
        classad_eval_string(*b, "Name", CA_MODE_OLD, &nb);
        r = strcmp(na ? na : "", nb ? nb : "");
        free(na);
        free(nb);
        return r;
}

int cli_verb_status(int argc, char **argv) {
        enum { V_TABLE, V_LONG, V_AF, V_JSON, V_TOTAL } view = V_TABLE;
        _cleanup_free_ char *constraint = NULL, *names = NULL;
        _cleanup_free_ char **af = NULL;
        const char *sock = NULL;
        bool claimed = false;
        size_t n_af = 0;
        CliReply rep;
        ClassAd *req = NULL;
        int r;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                bool more = i + 1 < argc;

                if (cli_opt(a, "help", 1) || strcmp(a, "-h") == 0) {
                        help();
                        return CLI_EXIT_OK;
                } else if (cli_opt(a, "long", 1))
                        view = V_LONG;
                else if (cli_opt(a, "json", 4))
                        view = V_JSON;
                else if (cli_opt(a, "total", 3))
                        view = V_TOTAL;
                else if (cli_opt(a, "af", 2) || cli_opt(a, "autoformat", 5)) {
                        view = V_AF;
                        while (i + 1 < argc && argv[i + 1][0] != '-') {
                                char **g = realloc(af, (n_af + 1) * sizeof(char *));
                                if (!g)
                                        return CLI_EXIT_FAILURE;
                                af = g;
                                af[n_af++] = argv[++i];
                        }
                        if (n_af == 0)
                                return cli_usage_error("status", usage, "%s: which attributes?", a), CLI_EXIT_USAGE;
                } else if (cli_opt(a, "avail", 2) || cli_opt(a, "available", 5)) {
                        if (add(&constraint, "State == \"Unclaimed\" && Activity == \"Idle\"") < 0)
                                return CLI_EXIT_FAILURE;
                } else if (cli_opt(a, "claimed", 2)) {
                        claimed = true;
                        if (add(&constraint, "State == \"Claimed\"") < 0)
                                return CLI_EXIT_FAILURE;
                } else if (cli_opt(a, "constraint", 5) && more) {
                        ClassAdExpr *e = NULL;
                        CaError err = {};
                        if (classad_expr_parse(argv[i + 1], strlen(argv[i + 1]), GLEAN_CA_MODE, &e, &err) < 0)
                                return cli_usage_error("status", usage, "-constraint: line %d, column %d: %s",
                                                       err.line, err.column, err.msg),
                                       CLI_EXIT_USAGE;
                        classad_expr_free(e);
                        if (add(&constraint, argv[++i]) < 0)
                                return CLI_EXIT_FAILURE;
                } else if (cli_opt(a, "socket", 4) && more)
                        sock = argv[++i];
                else if (a[0] == '-')
                        return cli_usage_error("status", usage, "unknown option or missing argument '%s'", a),
                               CLI_EXIT_USAGE;
                else {
                        _cleanup_free_ char *q = cli_quote(a);
                        char *n = NULL;
                        if (!q || asprintf(&n, "%s%sName == %s || Machine == %s", names ? names : "",
                                           names ? " || " : "", q, q) < 0)
                                return CLI_EXIT_FAILURE;
                        free(names);
                        names = n;
                }
        }
        if (names && add(&constraint, names) < 0)
                return CLI_EXIT_FAILURE;

        if (glean_msg_new(GLEAN_CMD_QUERY_SLOTS, &req) < 0)
                return CLI_EXIT_FAILURE;
        if (constraint)
                classad_set_string(req, "Constraint", constraint);
        r = cli_cm_call("status", sock, req, TIMEOUT_MS, &rep);
        classad_free(req);
        if (r < 0)
                return CLI_EXIT_FAILURE;
        if (!rep.ok) {
                fprintf(stderr, "glean status: refused: %s\n", rep.reason ? rep.reason : "no reason given");
                cli_reply_clear(&rep);
                return CLI_EXIT_FAILURE;
        }
        if (rep.n_ads > 1) /* rep.ads is NULL when none came */
                qsort(rep.ads, rep.n_ads, sizeof(*rep.ads), by_name);
        switch (view) {
        case V_LONG:
                cli_print_long(stdout, rep.ads, rep.n_ads);
                break;
        case V_AF:
                cli_print_af(stdout, rep.ads, rep.n_ads, af, n_af);
                break;
        case V_JSON:
                cli_json_ads(stdout, rep.ads, rep.n_ads);
                break;
        case V_TOTAL:
                cli_print_status_summary(stdout, rep.ads, rep.n_ads);
                break;
        default:
                if (claimed)
                        cli_print_status_claimed(stdout, rep.ads, rep.n_ads);
                else if (rep.n_ads > 0)
                        cli_print_status(stdout, rep.ads, rep.n_ads, (int64_t) time(NULL));
        }
        cli_reply_clear(&rep);
        return fflush(stdout) != 0 ? CLI_EXIT_FAILURE : CLI_EXIT_OK;
}

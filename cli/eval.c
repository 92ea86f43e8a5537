/* SPDX-License-Identifier: Apache-2.0 */
/*
 * eval.c — `glean eval [--strict] [--my AD] [--target AD] [--] EXPR`:
 * evaluate one ClassAd expression, optionally inside an ad (MY) and against
 * another (TARGET, a match context), and print the value as HTCondor's
 * unparser writes it.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct EvalArgs {
        CaMode mode;
        const char *my;     /* ad text, or NULL */
        const char *target; /* ad text, or NULL */
        const char *expr;
} EvalArgs;

static void eval_help(FILE *f) {
        fprintf(f,
                "usage: glean eval [--strict] [--my AD] [--target AD] [--] EXPR\n"
                "\n"
                "Evaluate the ClassAd expression EXPR and print its value.\n"
                "\n"
                "  --my AD      evaluate inside AD (bracketed syntax: '[ a = 1; b = \"x\" ]')\n"
                "  --target AD  evaluate in a match context with AD as TARGET\n"
                "  --strict     strict new-ClassAd semantics (default: old-ClassAd\n"
                "               semantics, as HTCondor's daemons use)\n"
                "  -h, --help   show this help\n"
                "\n"
                "Exit status: 0 when a value was printed (even 'undefined' or 'error'),\n"
                "2 when EXPR or an ad does not parse or the command line is wrong,\n"
                "1 on a system failure.\n");
}

#define EVAL_USAGE "usage: glean eval [--strict] [--my AD] [--target AD] [--] EXPR"
#define usage_error(...) cli_usage_error("eval", EVAL_USAGE, __VA_ARGS__)

static int set_once(const char **slot, const char *value, const char *option) {
        if (*slot)
                return usage_error("%s given twice", option);
        *slot = value;
        return 0;
}

/* Returns 0 with *ret filled, 1 when --help was shown, -EINVAL on a usage
 * error (already reported). */
static int parse_args(int argc, char **argv, EvalArgs *ret) {
        enum { OPT_STRICT = 0x100, OPT_MY, OPT_TARGET };
        static const struct option options[] = {
                { "help",   no_argument,       NULL, 'h' },
                { "strict", no_argument,       NULL, OPT_STRICT },
                { "my",     required_argument, NULL, OPT_MY },
                { "target", required_argument, NULL, OPT_TARGET },
                {}
        };
        EvalArgs args = { .mode = CA_MODE_OLD };
        int c, r;

        opterr = 0;
        optind = 0; /* full reset: argv is the verb's, not the program's */
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        eval_help(stdout);
                        return 1;
                case OPT_STRICT:
                        args.mode = CA_MODE_STRICT;
                        break;
                case OPT_MY:
                        r = set_once(&args.my, optarg, "--my");
                        if (r < 0)
                                return r;
                        break;
                case OPT_TARGET:
                        r = set_once(&args.target, optarg, "--target");
                        if (r < 0)
                                return r;
                        break;
                case ':':
                        return usage_error("option '%s' needs an argument", argv[optind - 1]);
                default:
                        /* optopt: 0 for an unknown long option, the option's
                         * value for "--strict=x", the letter for "-x". */
                        if (optopt == 0)
                                return usage_error("unknown option '%s'", argv[optind - 1]);
                        if (optopt == 'h' || optopt >= OPT_STRICT)
                                return usage_error("option '%s' takes no argument", argv[optind - 1]);
                        return usage_error("unknown option '-%c' (put '--' before an "
                                           "expression that starts with '-')", optopt);
                }
        }

        if (optind >= argc)
                return usage_error("missing EXPR");
        if (optind + 1 < argc)
                return usage_error("one EXPR only, got also '%s' (quote the expression)", argv[optind + 1]);

        args.expr = argv[optind];
        *ret = args;
        return 0;
}

/* Reports a failed parse of `which` ("--my", "EXPR", ...). Returns the exit
 * code. */
static int report_parse_error(const char *which, int r, const CaError *err) {
        if (r == -ENOMEM) {
                fprintf(stderr, "glean eval: %s: out of memory\n", which);
                return CLI_EXIT_FAILURE;
        }
        if (err->line > 0)
                fprintf(stderr, "glean eval: %s: line %d, column %d: %s\n",
                        which, err->line, err->column, err->msg[0] ? err->msg : strerror(-r));
        else
                fprintf(stderr, "glean eval: %s: %s\n", which, strerror(-r));
        return CLI_EXIT_USAGE;
}

/* Parses the ad text of option `which` into *ret (NULL when text is NULL).
 * Returns 0 or the exit code. */
static int parse_ad(const char *which, const char *text, CaMode mode, ClassAd **ret) {
        CaError err = {};
        int r;

        *ret = NULL;
        if (!text)
                return 0;
        r = classad_parse(text, strlen(text), mode, ret, &err);
        if (r < 0)
                return report_parse_error(which, r, &err);
        return 0;
}

static int parse_expr(const char *text, CaMode mode, ClassAdExpr **ret) {
        CaError err = {};
        int r;

        r = classad_expr_parse(text, strlen(text), mode, ret, &err);
        if (r < 0)
                return report_parse_error("EXPR", r, &err);
        return 0;
}

static int print_value(const CaValue *v) {
        _cleanup_free_ char *text = ca_value_unparse(v);

        if (!text) {
                fputs("glean eval: out of memory\n", stderr);
                return CLI_EXIT_FAILURE;
        }
        if (puts(text) < 0 || fflush(stdout) != 0) {
                fprintf(stderr, "glean eval: writing the result: %s\n", strerror(errno));
                return CLI_EXIT_FAILURE;
        }
        return CLI_EXIT_OK;
}

static int run_eval(const EvalArgs *args) {
        _cleanup_(cli_classad_freep) ClassAd *my = NULL;
        _cleanup_(cli_classad_freep) ClassAd *target = NULL;
        _cleanup_(cli_expr_freep) ClassAdExpr *expr = NULL;
        _cleanup_(cli_value_clearp) CaValue v = ca_undefined();
        int r;

        /* Everything is parsed before anything is printed. */
        r = parse_ad("--my", args->my, args->mode, &my);
        if (r != 0)
                return r;
        r = parse_ad("--target", args->target, args->mode, &target);
        if (r != 0)
                return r;
        r = parse_expr(args->expr, args->mode, &expr);
        if (r != 0)
                return r;

        r = classad_expr_eval(expr, my, target, args->mode, &v);
        if (r < 0) {
                fprintf(stderr, "glean eval: evaluating EXPR: %s\n", strerror(-r));
                return CLI_EXIT_FAILURE;
        }

        return print_value(&v);
}

int cli_verb_eval(int argc, char **argv) {
        EvalArgs args = {};
        int r;

        r = parse_args(argc, argv, &args);
        if (r < 0)
                return CLI_EXIT_USAGE;
        if (r > 0)
                return CLI_EXIT_OK;

        return run_eval(&args);
}

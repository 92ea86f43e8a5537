/* SPDX-License-Identifier: Apache-2.0 */
/*
 * submit.c — `glean submit --dry-run [--cluster N] [--bracketed] FILE`:
 * read an HTCondor submit description and print the job ads it would
 * queue, one per job: one attribute per line with a blank line after each
 * ad (as condor_submit -dump and condor_q -l print them), or with
 * --bracketed one "[ ... ]" ad per line. Without --dry-run there is
 * nowhere to queue them yet: the negotiator does not exist.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config/config.h"

#define USAGE "usage: glean submit --dry-run [--cluster N] [--bracketed] FILE"

typedef struct SubmitArgs {
        bool dry_run;
        bool bracketed;
        int64_t cluster;
        const char *file; /* "-": standard input */
} SubmitArgs;

static void submit_help(FILE *f) {
        fprintf(f,
                USAGE "\n"
                "\n"
                "Read the HTCondor submit description FILE ('-': standard input) and\n"
                "print the job ads it queues, one per job.\n"
                "\n"
                "  --dry-run      print the job ads instead of queueing them (there is\n"
                "                 no negotiator to queue them with yet)\n"
                "  --cluster N    the cluster id of the jobs, $(Cluster) (default 1)\n"
                "  --bracketed    one bracketed ad per line instead of one attribute\n"
                "                 per line with a blank line after each ad\n"
                "  -h, --help     show this help\n"
                "\n"
                "JOB_DEFAULT_REQUESTMEMORY and the other defaults come from the\n"
                "configuration ($GLEAN_CONFIG, else /etc/glean/glean.conf).\n"
                "\n"
                "Exit status: 0 when the ads were printed, 2 when FILE is wrong (the\n"
                "error names file and line; nothing is printed) or the command line\n"
                "is, 1 on a system failure.\n");
}

#define usage_error(...) cli_usage_error("submit", USAGE, __VA_ARGS__)

static int parse_cluster(const char *text, int64_t *ret) {
        char *end;
        long long v;

        errno = 0;
        v = strtoll(text, &end, 10);
        if (errno != 0 || end == text || *end || v < 1 || v > INT32_MAX)
                return usage_error("--cluster: '%s' is not a cluster id (1 to %d)", text, INT32_MAX);
        *ret = v;
        return 0;
}

/* Returns 0 with *ret filled, 1 when --help was shown, -EINVAL on a usage
 * error (already reported). */
static int parse_args(int argc, char **argv, SubmitArgs *ret) {
        enum { OPT_DRY_RUN = 0x100, OPT_CLUSTER, OPT_BRACKETED };
        static const struct option options[] = {
                { "help",      no_argument,       NULL, 'h' },
                { "dry-run",   no_argument,       NULL, OPT_DRY_RUN },
                { "cluster",   required_argument, NULL, OPT_CLUSTER },
                { "bracketed", no_argument,       NULL, OPT_BRACKETED },
                {}
        };
        SubmitArgs args = { .cluster = 1 };
        int c, r;

        opterr = 0;
        optind = 0; /* full reset: argv is the verb's, not the program's */
        while ((c = getopt_long(argc, argv, "+:h", options, NULL)) >= 0) {
                switch (c) {
                case 'h':
                        submit_help(stdout);
                        return 1;
                case OPT_DRY_RUN:
                        args.dry_run = true;
                        break;
                case OPT_CLUSTER:
                        r = parse_cluster(optarg, &args.cluster);
                        if (r < 0)
                                return r;
                        break;
                case OPT_BRACKETED:
                        args.bracketed = true;
                        break;
                case ':':
                        return usage_error("option '%s' needs an argument", argv[optind - 1]);
                default:
                        if (optopt == 0)
                                return usage_error("unknown option '%s'", argv[optind - 1]);
                        if (optopt == 'h' || optopt >= OPT_DRY_RUN)
                                return usage_error("option '%s' takes no argument", argv[optind - 1]);
                        return usage_error("unknown option '-%c'", optopt);
                }
        }
        if (optind >= argc)
                return usage_error("missing FILE");
        if (optind + 1 < argc)
                return usage_error("one FILE only, got also '%s'", argv[optind + 1]);
        args.file = argv[optind];
        *ret = args;
        return 0;
}

/* Reports err; returns the exit code for r. */
static int report(int r, const ConfigError *err) {
        _cleanup_free_ char *msg = NULL;

        if (r == -ENOMEM) {
                fprintf(stderr, "glean submit: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        msg = config_error_format(err);
        fprintf(stderr, "glean submit: %s\n", msg && *msg ? msg : strerror(-r));
        return CLI_EXIT_USAGE;
}

/* All of standard input, NUL-terminated. */
static int read_stdin(char **ret) {
        _cleanup_free_ char *data = NULL;
        size_t len = 0, cap = 0;

        for (;;) {
                size_t k;

                if (cap - len < 4096) {
                        char *p;

                        cap = cap ? cap * 2 : 16384;
                        if (cap > 64u * 1024u * 1024u)
                                return -EFBIG;
                        p = realloc(data, cap);
                        if (!p)
                                return -ENOMEM;
                        data = p;
                }
                k = fread(data + len, 1, cap - len - 1, stdin);
                len += k;
                if (k == 0)
                        break;
        }
        if (ferror(stdin))
                return -EIO;
        data[len] = '\0';
        if (strlen(data) != len)
                return -EINVAL;
        *ret = data;
        data = NULL;
        return 0;
}

static int print_ads(ClassAd **ads, size_t n, bool bracketed) {
        for (size_t i = 0; i < n; i++) {
                _cleanup_free_ char *text = bracketed ? classad_unparse(ads[i]) : classad_unparse_old(ads[i]);

                if (!text) {
                        fprintf(stderr, "glean submit: out of memory\n");
                        return CLI_EXIT_FAILURE;
                }
                fputs(text, stdout);
                fputs("\n", stdout); /* ends the line, or leaves a blank one after an old ad */
        }
        if (fflush(stdout) != 0 || ferror(stdout)) {
                fprintf(stderr, "glean submit: cannot write the ads: %s\n", strerror(errno));
                return CLI_EXIT_FAILURE;
        }
        return CLI_EXIT_OK;
}

int cli_verb_submit(int argc, char **argv) {
        ConfigSubmitOptions opts = {};
        ConfigError err = {};
        ClassAd **ads = NULL;
        Config *cfg = NULL;
        SubmitArgs args = {};
        size_t n = 0;
        int r, status;

        r = parse_args(argc, argv, &args);
        if (r != 0)
                return r > 0 ? CLI_EXIT_OK : CLI_EXIT_USAGE;
        if (!args.dry_run) {
                fprintf(stderr, "glean submit: cannot queue jobs: the negotiator does not exist yet; "
                                "use --dry-run to print the job ads\n");
                return CLI_EXIT_USAGE;
        }

        r = config_load_default(&cfg, &err);
        if (r < 0)
                return report(r, &err);
        opts.cluster_id = args.cluster;

        if (strcmp(args.file, "-") == 0) {
                _cleanup_free_ char *text = NULL;

                r = read_stdin(&text);
                if (r < 0) {
                        config_free(cfg);
                        fprintf(stderr, "glean submit: standard input: %s\n",
                                r == -EINVAL ? "holds a NUL byte" : strerror(-r));
                        return r == -ENOMEM ? CLI_EXIT_FAILURE : CLI_EXIT_USAGE;
                }
                r = config_submit_parse_string(text, "<stdin>", cfg, &opts, &ads, &n, &err);
        } else
                r = config_submit_parse_file(args.file, cfg, &opts, &ads, &n, &err);
        config_free(cfg);
        if (r < 0)
                return report(r, &err);

        status = print_ads(ads, n, args.bracketed);
        config_submit_free(ads, n);
        return status;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * config.c — `glean config`: print configuration values, as HTCondor's
 * condor_config_val does.
 *
 *   glean config [--raw] [--verbose] [--file FILE] NAME...
 *   glean config --dump [--raw] [--verbose] [--file FILE]
 *
 * The configuration is the standard one (config_load_default: $GLEAN_CONFIG
 * or /etc/glean/glean.conf, then LOCAL_CONFIG_DIR), or FILE then
 * LOCAL_CONFIG_DIR with --file. Exit status: 0; 1 when a NAME is not
 * defined ("NAME is not defined" on stderr, the other names are still
 * printed) or on a system failure; 2 when the configuration is broken
 * ("file:line: reason" on stderr) or the command line is wrong.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "config/config.h"
#include "queue/jobcmd.h"

typedef struct ConfigOptions {
        bool raw;
        bool verbose;
        bool dump;
        const char *file;
} ConfigOptions;

static void config_freep_cli(Config **cfg) {
        config_free(*cfg);
}

static void strv_freep_cli(char ***strv) {
        config_strv_free(*strv);
}

static void usage(FILE *f) {
        fprintf(f,
                "usage: glean config [--raw] [--verbose] [--file FILE] NAME...\n"
                "       glean config --dump [--raw] [--verbose] [--file FILE]\n"
                "\n"
                "Print the value of each configuration macro NAME, expanded.\n"
                "\n"
                "  --raw, -r          print values as written, macros not expanded\n"
                "  --verbose, -v      print NAME = value and the file and line that defined it\n"
                "  --dump, -d         print every defined name, NAME = value, sorted\n"
                "  --file, -f FILE    read FILE instead of $GLEAN_CONFIG or /etc/glean/glean.conf\n"
                "\n"
                "Exit status: 0; 1 when a NAME is not defined; 2 when the configuration is\n"
                "broken (file:line: reason) or the command line is wrong.\n");
}

/* CLI_EXIT_USAGE for broken configuration, CLI_EXIT_FAILURE for the rest. */
static int report(int r, const ConfigError *err) {
        _cleanup_free_ char *msg = config_error_format(err);

        if (r == -ENOMEM) {
                fprintf(stderr, "glean config: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        fprintf(stderr, "%s\n", msg && msg[0] ? msg : strerror(-r));
        return CLI_EXIT_USAGE;
}

/* Print one name; returns the exit status it deserves. */
static int print_one(const Config *cfg, const char *name, const char *shown, const ConfigOptions *o) {
        _cleanup_free_ char *value = NULL;
        const char *raw = config_raw(cfg, name), *file = "";
        ConfigError err = {};
        int line = 0, r;

        if (!raw) {
                fprintf(stderr, "%s is not defined\n", name);
                return CLI_EXIT_FAILURE;
        }
        if (o->raw)
                value = strdup(raw);
        else {
                r = config_get(cfg, name, &value, &err);
                if (r < 0)
                        return report(r, &err);
        }
        if (!value) {
                fprintf(stderr, "glean config: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        if (!o->verbose && !o->dump) {
                printf("%s\n", value);
                return CLI_EXIT_OK;
        }
        printf("%s = %s\n", shown, value);
        if (o->verbose) {
                (void) config_where(cfg, name, &file, &line);
                if (line > 0)
                        printf(" # at: %s, line %d\n", file, line);
                else
                        printf(" # at: %s\n", file);
                if (!o->raw && strcmp(raw, value) != 0)
                        printf(" # raw: %s\n", raw);
        }
        return CLI_EXIT_OK;
}

/* The worse of two exit statuses: usage/config errors over undefined names. */
static int worse(int a, int b) {
        return a == CLI_EXIT_USAGE || b == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : a > b ? a : b;
}

int cli_verb_config(int argc, char **argv) {
        _cleanup_(config_freep_cli) Config *cfg = NULL;
        _cleanup_(strv_freep_cli) char **names = NULL, **warnings = NULL;
        ConfigOptions o = {};
        ConfigError err = {};
        int i, status = CLI_EXIT_OK, r;

        for (i = 1; i < argc; i++) {
                const char *a = argv[i];

                if (strcmp(a, "--") == 0) {
                        i++;
                        break;
                } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return CLI_EXIT_OK;
                } else if (strcmp(a, "--raw") == 0 || strcmp(a, "-r") == 0)
                        o.raw = true;
                else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0)
                        o.verbose = true;
                else if (strcmp(a, "--dump") == 0 || strcmp(a, "-d") == 0)
                        o.dump = true;
                else if (strcmp(a, "--file") == 0 || strcmp(a, "-f") == 0) {
                        if (i + 1 >= argc) {
                                fprintf(stderr, "glean config: %s needs a file name\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        o.file = argv[++i];
                } else if (strncmp(a, "--file=", 7) == 0)
                        o.file = a + 7;
                else if (a[0] == '-' && a[1]) {
                        fprintf(stderr, "glean config: unknown option '%s'; try 'glean config --help'\n", a);
                        return CLI_EXIT_USAGE;
                } else
                        break;
        }
        if (o.dump && i < argc) {
                fprintf(stderr, "glean config: --dump takes no names\n");
                return CLI_EXIT_USAGE;
        }
        if (!o.dump && i >= argc) {
                usage(stderr);
                return CLI_EXIT_USAGE;
        }

        r = config_load_path(o.file, &cfg, &err);
        if (r < 0)
                return report(r, &err);
        if (config_warnings(cfg, &warnings) > 0)
                for (char **w = warnings; *w; w++)
                        fprintf(stderr, "glean config: warning: %s\n", *w);
        {
                /* The job queue's knobs glean does not do as written (HISTORY naming a file, ...). */
                char **queue_warnings = NULL;
                if (jobcmd_config_warnings(cfg, &queue_warnings) > 0)
                        for (char **w = queue_warnings; *w; w++)
                                fprintf(stderr, "glean config: warning: %s\n", *w);
                config_strv_free(queue_warnings);
        }

        if (!o.dump) {
                for (; i < argc; i++)
                        status = worse(status, print_one(cfg, argv[i], argv[i], &o));
                return status;
        }

        r = config_names(cfg, &names);
        if (r < 0)
                return report(r, &err);
        for (char **n = names; *n; n++)
                status = worse(status, print_one(cfg, *n, *n, &o));
        return status;
}

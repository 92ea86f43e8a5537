/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — `glean VERB ...`: finds the verb and hands it the rest of the
 * command line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#ifndef GLEAN_VERSION
#define GLEAN_VERSION "unknown"
#endif

int cli_usage_error(const char *verb, const char *usage, const char *fmt, ...) {
        va_list ap;

        fprintf(stderr, "glean %s: ", verb);
        va_start(ap, fmt);
        vfprintf(stderr, fmt, ap);
        va_end(ap);
        fprintf(stderr, "\n%s\n", usage);
        return -EINVAL;
}

void cli_config_error(const char *verb, const ConfigError *err) {
        char *msg = config_error_format(err);

        fprintf(stderr, "glean %s: %s\n", verb, msg ? msg : err->msg);
        free(msg);
}

typedef struct CliVerb {
        const char *name;
        CliVerbFn fn;
        const char *summary;
} CliVerb;

static const CliVerb verbs[] = {
        { "eval", cli_verb_eval, "evaluate a ClassAd expression" },
        { "config", cli_verb_config, "print configuration values (like condor_config_val)" },
        { "submit", cli_verb_submit, "read a submit description file (--dry-run: print the job ads)" },
        { "agent", cli_verb_agent, "talk to this machine's glean-agent (status, run, vacate, drain)" },
        { "policy-replay", cli_verb_policy_replay, "run a slot's policy over a timeline of events" },
        { "sensors", cli_verb_sensors, "the owner's activity, load and pressure as the agent senses them" },
        { "userprio", cli_verb_userprio, "user priorities, usage and group quotas (like condor_userprio)" },
        { "negotiate", cli_verb_negotiate, "run the matchmaker over a scenario (--simulate), cycle after cycle" },
        { "pool-key", cli_verb_pool_key, "make or check the pool key that authenticates the pool's machines" },
};

static void help(FILE *f) {
        fprintf(f,
                "usage: glean VERB [ARGS...]\n"
                "       glean --help | --version\n"
                "\n"
                "glean is a batch system for Linux compute nodes and desktops.\n"
                "\n"
                "Verbs:\n");
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                fprintf(f, "  %-14s %s\n", verbs[i].name, verbs[i].summary);
        fprintf(f, "\nRun 'glean VERB --help' for a verb's arguments.\n");
}

static const CliVerb *find_verb(const char *name) {
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

int main(int argc, char **argv) {
        const CliVerb *verb;
        const char *name;

        if (argc < 2) {
                help(stderr);
                return CLI_EXIT_USAGE;
        }

        name = argv[1];
        if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
                help(stdout);
                return CLI_EXIT_OK;
        }
        if (strcmp(name, "--version") == 0) {
                printf("glean %s\n", GLEAN_VERSION);
                return CLI_EXIT_OK;
        }

        verb = find_verb(name);
        if (!verb) {
                fprintf(stderr, "glean: unknown %s '%s'; try 'glean --help'\n",
                        name[0] == '-' ? "option" : "verb", name);
                return CLI_EXIT_USAGE;
        }

        return verb->fn(argc - 1, argv + 1);
}

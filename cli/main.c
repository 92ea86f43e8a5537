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
        { "submit", cli_verb_submit, "queue the jobs of a submit description file (like condor_submit)" },
        { "q", cli_verb_q, "the jobs in the queue (like condor_q)" },
        { "history", cli_verb_history, "the jobs that left the queue (like condor_history)" },
        { "rm", cli_verb_rm, "remove jobs (like condor_rm)" },
        { "hold", cli_verb_hold, "hold jobs (like condor_hold)" },
        { "release", cli_verb_release, "release held jobs (like condor_release)" },
        { "prio", cli_verb_prio, "change the priority of jobs (like condor_prio)" },
        { "wait", cli_verb_wait, "wait for a job to leave the queue, with its exit code (like condor_wait)" },
        { "status", cli_verb_status, "the pool's slots (like condor_status)" },
        { "vacate", cli_verb_vacate, "vacate the claims of a slot or machine (like condor_vacate)" },
        { "drain", cli_verb_drain, "drain a machine, or --cancel (like condor_drain)" },
        { "agent", cli_verb_agent, "talk to this machine's glean-agent (status, run, vacate, drain)" },
        { "policy-replay", cli_verb_policy_replay, "run a slot's policy over a timeline of events" },
        { "sensors", cli_verb_sensors, "the owner's activity, load and pressure as the agent senses them" },
        { "userprio", cli_verb_userprio, "user priorities, usage and group quotas (like condor_userprio)" },
        { "negotiate", cli_verb_negotiate, "run the matchmaker over a scenario (--simulate), cycle after cycle" },
        { "pool-key", cli_verb_pool_key, "make or check the pool key that authenticates the pool's machines" },
        { "token", cli_verb_token, "the central manager's signing key and the machines' tokens (condor_token_*)" },
};

static void help(FILE *f) {
        fprintf(f,
                "usage: glean VERB [ARGS...]\n"
                "       glean --help | --version\n"
                "\n"
                "glean is a batch system for Linux compute nodes and desktops.\n"
                "\n"
                "Verbs (each also answers to its condor_ name: glean condor_q, or a link\n"
                "named condor_q to glean; config also to condor_config_val):\n");
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                fprintf(f, "  %-14s %s\n", verbs[i].name, verbs[i].summary);
        fprintf(f, "\nRun 'glean VERB --help' for a verb's arguments.\n");
}

/* "q" or "condor_q": HTCondor users find their way by the condor_ names. */
static const CliVerb *find_verb(const char *name) {
        /* The one condor_ name that is not condor_ and the verb. */
        if (strcmp(name, "condor_config_val") == 0)
                name = "config";
        if (strncmp(name, "condor_", 7) == 0 && name[7])
                name += 7;
        for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
                if (strcmp(verbs[i].name, name) == 0)
                        return &verbs[i];
        return NULL;
}

int main(int argc, char **argv) {
        const CliVerb *verb;
        const char *name;

        /* Called through a link named condor_q, condor_rm, ...: that verb. */
        name = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
        if (strncmp(name, "condor_", 7) == 0 && (verb = find_verb(name)))
                return verb->fn(argc, argv);

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

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy-replay.c — `glean policy-replay [--quiet] TIMELINE`: run one
 * slot's policy state machine over a timeline (agent/policy/replay.c documents
 * the format) and print every transition with its time, the old and new
 * state/activity and the number of the manual's figure 3.2.
 *
 * Exit: 0, every expectation of the timeline held; 1, one did not; 2, the
 * timeline or its configuration is malformed (file:line: reason on stderr).
 */
#include <stdio.h>
#include <string.h>

#include "agent/replay.h"
#include "cli.h"

static const char usage[] = "usage: glean policy-replay [--quiet] TIMELINE";

int cli_verb_policy_replay(int argc, char **argv) {
        bool quiet = false;
        const char *path = NULL;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
                        printf("%s\n\nRuns the policy of one slot over a timeline of sensor values and events\n"
                               "and prints every state transition. See docs/policy-replay.md.\n",
                               usage);
                        return CLI_EXIT_OK;
                }
                if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0)
                        quiet = true;
                else if (argv[i][0] == '-' && argv[i][1])
                        return cli_usage_error("policy-replay", usage, "unknown option '%s'", argv[i]), CLI_EXIT_USAGE;
                else if (path)
                        return cli_usage_error("policy-replay", usage, "one timeline only"), CLI_EXIT_USAGE;
                else
                        path = argv[i];
        }
        if (!path)
                return cli_usage_error("policy-replay", usage, "which timeline?"), CLI_EXIT_USAGE;

        FILE *out = stdout;
        FILE *null = NULL;
        if (quiet) {
                null = fopen("/dev/null", "we");
                if (null)
                        out = null;
        }
        AgentReplayResult res = { 0 };
        ConfigError err = { 0 };
        int r = agent_replay_file(path, out, &res, &err);
        if (null)
                fclose(null);
        if (r < 0) {
                char *msg = config_error_format(&err);
                fprintf(stderr, "glean policy-replay: %s\n", msg ? msg : "failed");
                free(msg);
                return CLI_EXIT_USAGE;
        }
        if (res.failed) {
                fprintf(stderr, "glean policy-replay: %u of %u expectations failed\n", res.failed, res.expectations);
                return CLI_EXIT_FAILURE;
        }
        if (!quiet && res.expectations)
                printf("%u transitions; all %u expectations held\n", res.transitions, res.expectations);
        return CLI_EXIT_OK;
}

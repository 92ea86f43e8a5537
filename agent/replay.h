/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.h — `glean policy-replay`: the policy state machine of one slot
 * run over a timeline of sensor values and events, with no kernel and no
 * clock. The timeline format is documented in docs/policy-replay.md and at
 * the top of replay.c.
 */
#pragma once

#include <stdio.h>

#include "config.h"

typedef struct AgentReplayResult {
        unsigned transitions;
        unsigned expectations;  /* expect lines checked */
        unsigned failed;        /* expect lines that did not hold */
} AgentReplayResult;

/* Runs the timeline text (named source_name in messages), printing every
 * transition, action and refusal to out. A malformed timeline or
 * configuration: -EINVAL with err naming the line; nothing more is run. A
 * failed expectation is printed and counted, and the replay goes on. */
int agent_replay_string(const char *text, const char *source_name, FILE *out, AgentReplayResult *ret,
                        ConfigError *err);
int agent_replay_file(const char *path, FILE *out, AgentReplayResult *ret, ConfigError *err);

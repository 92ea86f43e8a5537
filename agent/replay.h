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
        unsigned long evaluations; /* periodic evaluations the clock went through */
} AgentReplayResult;

typedef struct AgentReplayOptions {
        /* The most periodic evaluations a timeline may take (a timeline of a
         * year at POLLING_INTERVAL = 5 takes six million); beyond, it is
         * rejected as malformed. 0: AGENT_REPLAY_MAX_EVALUATIONS. */
        unsigned long max_evaluations;
} AgentReplayOptions;

#define AGENT_REPLAY_MAX_EVALUATIONS 20000000UL

/* Runs the timeline text (named source_name in messages), printing every
 * transition, action and refusal to out. A malformed timeline or
 * configuration: -EINVAL (-E2BIG: too many evaluations) with err naming the
 * line; nothing more is run. A failed expectation is printed and counted,
 * and the replay goes on. opts may be NULL. */
int agent_replay_string_opts(const char *text, const char *source_name, const AgentReplayOptions *opts, FILE *out,
                             AgentReplayResult *ret, ConfigError *err);
int agent_replay_string(const char *text, const char *source_name, FILE *out, AgentReplayResult *ret,
                        ConfigError *err);
int agent_replay_file(const char *path, FILE *out, AgentReplayResult *ret, ConfigError *err);

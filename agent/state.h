/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.h — the states and activities of a slot (seed 002, 3.5.5 and
 * 3.5.6), shared by the policy state machine, the slot ads, the load
 * distribution and the daemon.
 */
#pragma once

#include <stdbool.h>

typedef enum AgentState {
        AGENT_STATE_OWNER,
        AGENT_STATE_UNCLAIMED,
        AGENT_STATE_MATCHED,
        AGENT_STATE_CLAIMED,
        AGENT_STATE_PREEMPTING,
        AGENT_STATE_BACKFILL,
        AGENT_STATE_DRAINED,
        AGENT_STATE__MAX,
} AgentState;

typedef enum AgentActivity {
        AGENT_ACT_IDLE,
        AGENT_ACT_BUSY,
        AGENT_ACT_SUSPENDED,
        AGENT_ACT_RETIRING,
        AGENT_ACT_VACATING,
        AGENT_ACT_KILLING,
        AGENT_ACT_BENCHMARKING,
        AGENT_ACT__MAX,
} AgentActivity;

/* "Owner", "Unclaimed", ... and "Idle", "Busy", ... as in the slot ads
 * (State, Activity); NULL for values out of range. */
const char *agent_state_name(AgentState s);
const char *agent_activity_name(AgentActivity a);
/* Case-insensitive inverse; -EINVAL for an unknown name. */
int agent_state_from_name(const char *name, AgentState *ret);
int agent_activity_from_name(const char *name, AgentActivity *ret);

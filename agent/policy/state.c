/* SPDX-License-Identifier: Apache-2.0 */
/* state.c — names of the slot states and activities. */
#include <errno.h>
#include <stddef.h>
#include <strings.h>

#include "state.h"

static const char *const state_names[AGENT_STATE__MAX] = {
        [AGENT_STATE_OWNER] = "Owner",         [AGENT_STATE_UNCLAIMED] = "Unclaimed",
        [AGENT_STATE_MATCHED] = "Matched",     [AGENT_STATE_CLAIMED] = "Claimed",
        [AGENT_STATE_PREEMPTING] = "Preempting", [AGENT_STATE_BACKFILL] = "Backfill",
        [AGENT_STATE_DRAINED] = "Drained",
};

static const char *const activity_names[AGENT_ACT__MAX] = {
        [AGENT_ACT_IDLE] = "Idle",         [AGENT_ACT_BUSY] = "Busy",
        [AGENT_ACT_SUSPENDED] = "Suspended", [AGENT_ACT_RETIRING] = "Retiring",
        [AGENT_ACT_VACATING] = "Vacating", [AGENT_ACT_KILLING] = "Killing",
        [AGENT_ACT_BENCHMARKING] = "Benchmarking",
};

const char *agent_state_name(AgentState s) {
        return (unsigned) s < AGENT_STATE__MAX ? state_names[s] : NULL;
}

const char *agent_activity_name(AgentActivity a) {
        return (unsigned) a < AGENT_ACT__MAX ? activity_names[a] : NULL;
}

int agent_state_from_name(const char *name, AgentState *ret) {
        for (unsigned i = 0; i < AGENT_STATE__MAX; i++)
                if (strcasecmp(name, state_names[i]) == 0) {
                        *ret = (AgentState) i;
                        return 0;
                }
        return -EINVAL;
}

int agent_activity_from_name(const char *name, AgentActivity *ret) {
        for (unsigned i = 0; i < AGENT_ACT__MAX; i++)
                if (strcasecmp(name, activity_names[i]) == 0) {
                        *ret = (AgentActivity) i;
                        return 0;
                }
        return -EINVAL;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scope.c — the jobs' scope: under systemd the slots and their jobs live in
 * a transient scope unit of their own (glean-agent-jobs.scope, beside
 * glean-agent.service in its slice, Delegate=yes), not in the service's
 * cgroup, so that systemd before 254 can always start the next agent
 * there. What the scope is and how it is found or made with its
 * placeholder: agent/cgroup/cgroup-scope.c and agent/cgroup/cgroup-systemd.c. Here: when
 * the agent wants one. A restarted agent takes the scope it finds as it
 * is: adopt.c re-adopts the jobs in it. main.c ends it at a clean exit.
 *
 * Only when: the agent runs in a systemd service (its cgroup ends in
 * ".service", INVOCATION_ID is set, /run/systemd/system exists), uses the
 * cgroup executor, no BASE_CGROUP is set, and AGENT_JOBS_SCOPE (auto: the
 * service's name with "-jobs.scope") is not empty. Elsewhere nothing
 * changes: the slots are under the agent's own cgroup or BASE_CGROUP.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"

int agent_scope_setup(Agent *a, char **ret_base) {
        *ret_base = NULL;
        ConfigError err;
        char *knob = NULL;
        int r = config_get(a->cfg, "AGENT_JOBS_SCOPE", &knob, &err);
        if (r == -ENOENT)
                knob = NULL;
        else if (r < 0)
                return agent_log_config_error(&err, r, "AGENT_JOBS_SCOPE");
        else if (!*knob) {
                free(knob);
                return 0; /* off */
        }
        if (!getenv("INVOCATION_ID") || access("/run/systemd/system", F_OK) < 0) {
                free(knob);
                return 0;
        }
        char own[PATH_MAX];
        CgScopePlan plan;
        r = cg_own(0, own, sizeof own);
        if (r >= 0)
                r = cg_scope_plan(own, knob, &plan);
        if (r == -ENOMEDIUM || (r < 0 && r != -EINVAL)) {
                free(knob);
                return 0; /* not a service's cgroup: none */
        }
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "AGENT_JOBS_SCOPE = %s: not a scope's name (NAME.scope)", knob);
                free(knob);
                return r;
        }
        free(knob);
        CgScope *s = NULL;
        char why[512] = "";
        r = cg_scope_new(&plan, &s);
        if (r < 0)
                snprintf(why, sizeof why, "%s", strerror(-r));
        else
                r = cg_scope_start(s, why, sizeof why);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_CGROUP", s ? cg_scope_path(s) : plan.cgroup } };
                glean_log(LOG_WARNING, NULL, f, 1,
                          "no jobs' scope %s: %s; the slots go into %s's own cgroup, where systemd before 254 "
                          "cannot restart the agent while jobs run",
                          plan.name, why, plan.service);
                cg_scope_free(s);
                return r;
        }
        *ret_base = strdup(plan.cgroup);
        if (!*ret_base) {
                cg_scope_free(s);
                return -ENOMEM;
        }
        a->scope = s;
        return 1;
}

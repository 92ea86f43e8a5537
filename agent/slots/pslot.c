/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pslot.c — what a dynamic slot carved out of a partitionable slot gets
 * for a job (seed 002, 3.5.10.6 and 3.5.10.7; seed 003): the carving rule
 * is carve/'s, the one the matchmaker consumes p-slots by; here only the
 * machine's resources in and out of it.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "slots-internal.h"

int agent_carve_policy(const Config *cfg, const AgentMachine *m, CarvePolicy **ret, ConfigError *err) {
        const char *names[AGENT_MAX_CUSTOM];

        if (!m || m->n_custom > AGENT_MAX_CUSTOM)
                return -EINVAL;
        for (size_t i = 0; i < m->n_custom; i++)
                names[i] = m->custom_name[i];
        return carve_policy_new(cfg, names, m->n_custom, ret, err);
}

int agent_pslot_carve(const CarvePolicy *policy, const AgentMachine *m, const ClassAd *pslot_ad, const ClassAd *job,
                      const AgentRes *avail, AgentRes *ret, char *why, size_t whylen) {
        double left[CARVE_MAX_RES], got[CARVE_MAX_RES];
        CarveResources res;
        int r;

        if (why && whylen)
                why[0] = '\0';
        if (!policy || !m || !pslot_ad || !job || !avail || !ret || m->n_custom > AGENT_MAX_CUSTOM)
                return -EINVAL;
        carve_resources(policy, pslot_ad, &res);
        if (res.n != CARVE_N_STD + m->n_custom)
                return glean_why(-EINVAL, why, whylen, "the carving policy was made for another machine");
        left[CARVE_CPUS] = (double) avail->cpus;
        left[CARVE_MEMORY] = (double) avail->memory;
        left[CARVE_DISK] = (double) avail->disk;
        for (size_t i = 0; i < m->n_custom; i++)
                left[CARVE_N_STD + i] = avail->custom[i];
        r = carve_amounts(policy, pslot_ad, job, left, NULL, got, why, whylen);
        if (r < 0)
                return r;
        *ret = (AgentRes){ .cpus = (int64_t) got[CARVE_CPUS],
                           .memory = (int64_t) got[CARVE_MEMORY],
                           .disk = (int64_t) got[CARVE_DISK] };
        for (size_t i = 0; i < m->n_custom; i++)
                ret->custom[i] = got[CARVE_N_STD + i];
        return 0;
}

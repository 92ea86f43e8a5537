/* SPDX-License-Identifier: Apache-2.0 */
/*
 * carve-test.h — what the carving suites share: the agent's side of a
 * p-slot ad (the machine whose p-slot advertises those resources, its
 * policy, agent_pslot_carve() over the ad's amounts), and taking what was
 * carved off the ad as both sides do.
 */
#pragma once

#include <math.h>
#include <stdio.h>

#include "agent/slots.h"
#include "carve/carve.h"
#include "test-util.h"

typedef struct CarveTestAgent {
        AgentMachine m;
        CarvePolicy *policy;
} CarveTestAgent;

/* The machine of pslot's MachineResources, its policy under cfg. */
static inline void carve_test_agent_init(CarveTestAgent *a, const Config *cfg, const ClassAd *pslot) {
        CarvePolicy *from_ad = NULL;
        CarveResources res;
        ConfigError err = {};

        *a = (CarveTestAgent){};
        GLEAN_TEST_CHECK_FATAL(carve_policy_new(NULL, NULL, 0, &from_ad, NULL) == 0, "carve_policy_new");
        carve_resources(from_ad, pslot, &res);
        carve_policy_free(from_ad);
        a->m.n_custom = res.n - CARVE_N_STD;
        for (size_t i = 0; i < a->m.n_custom; i++)
                snprintf(a->m.custom_name[i], sizeof(a->m.custom_name[i]), "%s", res.name[CARVE_N_STD + i]);
        GLEAN_TEST_CHECK_FATAL(agent_carve_policy(cfg, &a->m, &a->policy, &err) == 0, "agent_carve_policy: %s",
                               err.msg);
}

static inline void carve_test_agent_done(CarveTestAgent *a) {
        carve_policy_free(a->policy);
        a->policy = NULL;
}

/* agent_pslot_carve() of job with what pslot's ad says is left; the
 * amounts in carve_resources() order (ret[res->n]). */
static inline int carve_test_agent_carve(void *ctx, ClassAd *pslot, const ClassAd *job, CarveResources *res,
                                         double *ret, char *why, size_t whylen) {
        CarveTestAgent *a = ctx;
        double left[CARVE_MAX_RES];
        AgentRes avail = {}, got;
        int r;

        carve_resources(a->policy, pslot, res);
        carve_available(res, pslot, left);
        avail.cpus = (int64_t) left[CARVE_CPUS];
        avail.memory = (int64_t) left[CARVE_MEMORY];
        avail.disk = (int64_t) left[CARVE_DISK];
        for (size_t i = 0; i < a->m.n_custom; i++)
                avail.custom[i] = left[CARVE_N_STD + i];
        r = agent_pslot_carve(a->policy, &a->m, pslot, job, &avail, &got, why, whylen);
        if (r < 0)
                return r;
        ret[CARVE_CPUS] = (double) got.cpus;
        ret[CARVE_MEMORY] = (double) got.memory;
        ret[CARVE_DISK] = (double) got.disk;
        for (size_t i = 0; i < a->m.n_custom; i++)
                ret[CARVE_N_STD + i] = got.custom[i];
        return 0;
}

/* got (amounts of res) taken off pslot's Cpus, Memory, ... (integers
 * where they are whole, as the matchmaker writes them). */
static inline void carve_test_take(ClassAd *pslot, const CarveResources *res, const double *got) {
        double left[CARVE_MAX_RES];

        carve_available(res, pslot, left);
        for (size_t i = 0; i < res->n; i++) {
                double v = left[i] - got[i] < 0 ? 0 : left[i] - got[i];
                int r = v == floor(v) && v < 9e15 ? classad_set_int(pslot, res->name[i], (int64_t) v)
                                                  : classad_set_real(pslot, res->name[i], v);
                GLEAN_TEST_CHECK(r == 0, "cannot set %s", res->name[i]);
        }
}

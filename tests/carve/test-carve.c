/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-carve.c — what a job takes from a partitionable slot (carve/): one
 * table of cases (configuration, p-slot ad, job ad, what is carved or why
 * not) run three ways, through carve_amounts() itself, through the
 * agent's agent_pslot_carve() and through the matchmaker's cycle (plain
 * and fast paths), which must all agree: seed 002's 3.5.10.6 example and
 * 3.5.10.7's MODIFY_REQUEST_EXPR_* defaults, seed 003's consumption
 * policies (with a custom resource), _condor_Request<Res>, the requests
 * HTCondor refuses, the fallback to the job's own request, the rounding
 * of fractions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "carve-test.h"
#include "negotiator/negotiator.h"

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* 3.5.10.6's slot: 10 CPUs, 10240 MB, "BIG" disk. */
#define SLOT10 "Cpus = 10; Memory = 10240; Disk = 100000000; TotalSlotCpus = 10; TotalSlotMemory = 10240; "
#define GPUS2 "MachineResources = \"Cpus Memory Disk Swap Gpus\"; Gpus = 2; TotalSlotGpus = 2; "
#define SEED003 \
        "ConsumptionCpus = quantize(target.RequestCpus, {1}); ConsumptionMemory = quantize(target.RequestMemory, {128}); " \
        "ConsumptionDisk = quantize(target.RequestDisk, {1024}); "
#define JOB(c, m, d) "RequestCpus = " #c "; RequestMemory = " #m "; RequestDisk = " #d "; "
#define IDENTITY                                                                              \
        "MODIFY_REQUEST_EXPR_REQUESTCPUS = RequestCpus\nMODIFY_REQUEST_EXPR_REQUESTMEMORY = " \
        "RequestMemory\nMODIFY_REQUEST_EXPR_REQUESTDISK = RequestDisk\n"

typedef struct Case {
        const char *name;
        const char *config; /* knobs after the built-in defaults */
        const char *pslot;  /* the p-slot ad's attributes */
        const char *job;
        const char *want;   /* "cpus memory disk [custom...]", NULL: refused */
        const char *why;    /* refused: a substring of the reason */
        int times;          /* > 0: carved that many times over, then refused */
} Case;

/* unset fields are 0: no reason, not repeated */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
static const Case cases[] = {
        /* seed 002, 3.5.10.6 and the defaults of 3.5.10.7 */
        { "manual JobA", NULL, SLOT10, JOB(3, 1024, 10240), "3 1024 10240", NULL, 3 },
        { "memory quantised by TotalSlotMemory / TotalSlotCpus / 4", NULL, SLOT10, JOB(1, 1000, 1), "1 1024 1024" },
        { "disk quantised by 1024 KB", NULL, SLOT10, JOB(2, 256, 2049), "2 256 3072" },
        { "no RequestCpus: one", NULL, SLOT10, "RequestMemory = 256; RequestDisk = 1024", "1 256 1024" },
        { "no RequestMemory: refused", NULL, SLOT10, "RequestCpus = 1; RequestDisk = 1024", NULL,
          "the job has no RequestMemory" },
        { "no RequestDisk: refused", NULL, SLOT10, "RequestCpus = 1; RequestMemory = 1024", NULL,
          "the job has no RequestDisk" },
        { "RequestMemory not a number", NULL, SLOT10, "RequestMemory = \"lots\"; RequestDisk = 1", NULL,
          "RequestMemory is not a number" },
        { "RequestCpus negative", NULL, SLOT10, JOB(-2, 100, 100), NULL, "RequestCpus is negative" },
        { "more CPUs than left", NULL, "Cpus = 2; Memory = 4096; Disk = 100000; TotalSlotCpus = 4; TotalSlotMemory = 4096; ",
          JOB(4, 512, 1024), NULL, "the job needs 4 CPUs; the partitionable slot has 2 CPUs left" },
        /* _condor_Request<Res>: what the schedd asks for, as it is */
        { "_condor_RequestCpus", NULL, SLOT10, "_condor_RequestCpus = 4; " JOB(1, 1000, 1000), "4 1024 1024" },
        { "_condor_RequestMemory not rewritten", NULL, SLOT10, "_condor_RequestMemory = 1000; " JOB(1, 100, 1000),
          "1 1000 1024" },
        { "_condor_RequestCpus under a policy", NULL, SLOT10 SEED003, "_condor_RequestCpus = 3; " JOB(1, 100, 1000),
          "3 128 1024" },
        /* the rewritten request no longer fits: the job's own */
        { "fallback to the job's request", NULL,
          "Cpus = 4; Memory = 1000; Disk = 100000; TotalSlotCpus = 8; TotalSlotMemory = 8192; ", JOB(1, 900, 1000),
          "1 900 1000" },
        { "MUST_MODIFY_REQUEST_EXPRS: no fallback", "MUST_MODIFY_REQUEST_EXPRS = True\n",
          "Cpus = 4; Memory = 1000; Disk = 100000; TotalSlotCpus = 8; TotalSlotMemory = 8192; ", JOB(1, 900, 1000),
          NULL, "the job needs 1024 MB of memory; the partitionable slot has 1000 MB of memory left" },
        { "the job's own does not fit either", NULL,
          "Cpus = 4; Memory = 800; Disk = 100000; TotalSlotCpus = 8; TotalSlotMemory = 8192; ", JOB(1, 900, 1000),
          NULL, "the job needs 1024 MB of memory; the partitionable slot has 800 MB of memory left" },
        { "a rewrite that reads the p-slot", "MODIFY_REQUEST_EXPR_REQUESTCPUS = TARGET.Cpus\n", SLOT10,
          JOB(1, 256, 1024), "10 256 1024" },
        { "a rewrite that is not a number: the request", "MODIFY_REQUEST_EXPR_REQUESTMEMORY = \"big\"\n", SLOT10,
          JOB(1, 1000, 1024), "1 1000 1024" },
        /* rounding: every amount up to a whole one */
        { "fractions rounded up", IDENTITY, SLOT10 GPUS2, JOB(1.5, 100.2, 1000.01) "RequestGpus = 0.5",
          "2 101 1001 1" },
        { "fractions of a policy rounded up", NULL,
          SLOT10 "ConsumptionCpus = target.RequestCpus / 3.0; ConsumptionMemory = target.RequestMemory * 1.5; "
                 "ConsumptionDisk = 10.5; ",
          JOB(2, 100.2, 1), "1 151 11" },
        /* seed 003: consumption policies */
        { "seed 003 policy", NULL, SLOT10 SEED003, JOB(1, 100, 1000), "1 128 1024", NULL, 10 },
        { "seed 003 memory by 512", NULL,
          "Cpus = 10; Memory = 1903; Disk = 100000000; ConsumptionCpus = quantize(target.RequestCpus, {1}); "
          "ConsumptionMemory = quantize(target.RequestMemory, {512}); ConsumptionDisk = quantize(target.RequestDisk, {1024}); ",
          JOB(1, 100, 1000), "1 512 1024", NULL, 3 },
        /* quantize(0, {128}) is 128: a list's first member >= 0 */
        { "policy: no RequestMemory counts 0", NULL, SLOT10 SEED003, "RequestCpus = 1; RequestDisk = 1000", "1 128 1024" },
        { "policy: no RequestMemory counts 0 (plain)", NULL,
          SLOT10 "ConsumptionCpus = target.RequestCpus; ConsumptionMemory = target.RequestMemory; "
                 "ConsumptionDisk = target.RequestDisk; ",
          "RequestCpus = 1; RequestDisk = 1000", "1 0 1000" },
        { "policy: more than left", NULL, "Cpus = 1; Memory = 100; Disk = 100000; " SEED003, JOB(1, 200, 1000), NULL,
          "the job needs 256 MB of memory; the partitionable slot has 100 MB of memory left" },
        { "policy of nothing", NULL, SLOT10 "ConsumptionCpus = 0; ConsumptionMemory = 0; ConsumptionDisk = 0; ",
          JOB(1, 100, 100), NULL, "the job asks for no CPU, memory, disk or other resource" },
        { "policy not a number", NULL, SLOT10 "ConsumptionCpus = \"x\"; ConsumptionMemory = 0; ConsumptionDisk = 0; ",
          JOB(1, 100, 100), NULL, "ConsumptionCpus of the partitionable slot is not a number" },
        { "a policy without Disk is none: the requests", NULL,
          SLOT10 "ConsumptionCpus = 5; ConsumptionMemory = 5; ", JOB(1, 1000, 1), "1 1024 1024" },
        /* custom resources */
        { "GPUs requested", NULL, SLOT10 GPUS2, JOB(1, 256, 1024) "RequestGpus = 1", "1 256 1024 1", NULL, 2 },
        { "GPUs not requested: none", NULL, SLOT10 GPUS2, JOB(1, 256, 1024), "1 256 1024 0" },
        { "more GPUs than left", NULL, SLOT10 GPUS2, JOB(1, 256, 1024) "RequestGpus = 3", NULL,
          "the job needs 3 Gpus; the partitionable slot has 2 Gpus left" },
        { "_condor_RequestGpus", NULL, SLOT10 GPUS2, JOB(1, 256, 1024) "RequestGpus = 1; _condor_RequestGpus = 2",
          "1 256 1024 2" },
        { "policy with GPUs", NULL, SLOT10 GPUS2 SEED003 "ConsumptionGpus = target.RequestGpus * 2; ",
          JOB(1, 100, 1000) "RequestGpus = 1", "1 128 1024 2", NULL, 1 },
        { "policy with GPUs, none requested", NULL, SLOT10 GPUS2 SEED003 "ConsumptionGpus = target.RequestGpus; ",
          JOB(1, 100, 1000), "1 128 1024 0" },
        { "policy without ConsumptionGpus is none", NULL, SLOT10 GPUS2 SEED003, JOB(1, 100, 1000) "RequestGpus = 1",
          "1 256 1024 1" },
        { "only GPUs", IDENTITY, SLOT10 GPUS2, JOB(0, 0, 0) "RequestGpus = 1", "0 0 0 1", NULL, 2 },
};
#pragma GCC diagnostic pop

/* ---- helpers ---- */

static Config *case_config(const Case *c) {
        Config *cfg = NULL;
        ConfigError err = {};

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, c->config ? c->config : "", "case.conf", &err) == 0,
                               "%s: config: %s", c->name, err.msg);
        return cfg;
}

static ClassAd *ad_of(const char *name, const char *a, const char *b) {
        char text[4096];
        ClassAd *ad = NULL;
        CaError err = {};

        snprintf(text, sizeof(text), "[ %s%s ]", a, b ? b : "");
        GLEAN_TEST_CHECK_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) == 0, "%s: ad '%s': %s",
                               name, text, err.msg);
        return ad;
}

static size_t parse_want(const char *want, double *ret) {
        size_t n = 0;
        char *end;

        for (const char *p = want; *p && n < CARVE_MAX_RES; p = end) {
                ret[n++] = strtod(p, &end);
                if (end == p)
                        break;
        }
        return n;
}

/* How many times in a row carve() carves; the first result in first[]. */
typedef int (*CarveFn)(void *ctx, ClassAd *pslot, const ClassAd *job, CarveResources *res, double *ret, char *why,
                       size_t whylen);

static void run_case(const Case *c, CarveFn carve, void *ctx, ClassAd *pslot, const ClassAd *job, const char *who) {
        double want[CARVE_MAX_RES], got[CARVE_MAX_RES];
        CarveResources res;
        char why[512];
        int r, n = 0;

        r = carve(ctx, pslot, job, &res, got, why, sizeof(why));
        if (!c->want) {
                GLEAN_TEST_CHECK(r < 0 && strstr(why, c->why), "%s: %s: %d '%s', want refused with '%s'", who, c->name,
                                 r, why, c->why);
                return;
        }
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %s: refused (%d): %s", who, c->name, r, why);
        GLEAN_TEST_CHECK(parse_want(c->want, want) == res.n, "%s: %s: %zu resources, want '%s'", who, c->name, res.n,
                         c->want);
        for (size_t i = 0; i < res.n; i++)
                GLEAN_TEST_CHECK(got[i] == want[i], "%s: %s: %s %g, want %g", who, c->name, res.name[i], got[i],
                                 want[i]);
        if (c->times <= 0)
                return;
        for (n = 1; r == 0 && n <= c->times + 1; n++) {
                carve_test_take(pslot, &res, got);
                r = carve(ctx, pslot, job, &res, got, why, sizeof(why));
        }
        GLEAN_TEST_CHECK(r == -ENOSPC && n - 1 == c->times, "%s: %s: carved %d times (%d: %s), want %d", who, c->name,
                         n - 1, r, why, c->times);
}

/* ---- through carve_amounts() ---- */

static int carve_direct(void *ctx, ClassAd *pslot, const ClassAd *job, CarveResources *res, double *ret, char *why,
                        size_t whylen) {
        return carve_amounts(ctx, pslot, job, NULL, res, ret, why, whylen);
}

static void test_table_carve(void) {
        for (size_t k = 0; k < ELEMS(cases); k++) {
                const Case *c = &cases[k];
                Config *cfg = case_config(c);
                CarvePolicy *p = NULL;
                ConfigError err = {};
                ClassAd *pslot = ad_of(c->name, c->pslot, NULL), *job = ad_of(c->name, c->job, NULL);

                GLEAN_TEST_CHECK_FATAL(carve_policy_new(cfg, NULL, 0, &p, &err) == 0, "%s: %s", c->name, err.msg);
                run_case(c, carve_direct, p, pslot, job, "carve");
                carve_policy_free(p);
                classad_free(pslot);
                classad_free(job);
                config_free(cfg);
        }
}

/* ---- through the agent ---- */

static void test_table_agent(void) {
        for (size_t k = 0; k < ELEMS(cases); k++) {
                const Case *c = &cases[k];
                Config *cfg = case_config(c);
                ClassAd *pslot = ad_of(c->name, c->pslot, NULL), *job = ad_of(c->name, c->job, NULL);
                CarveTestAgent a;

                carve_test_agent_init(&a, cfg, pslot);
                run_case(c, carve_test_agent_carve, &a, pslot, job, "agent");
                carve_test_agent_done(&a);
                classad_free(pslot);
                classad_free(job);
                config_free(cfg);
        }
}

/* ---- through the matchmaker ---- */

#define POOL_JOBS 24

/* One cycle over the p-slot alone and copies of the job: the matches
 * (what each takes, in order) against the table, plain and fast. */
static void nego_case(const Case *c, bool plain) {
        static const char slot_base[] =
                "Name = \"slot1@m1\"; Machine = \"m1\"; SlotID = 1; State = \"Unclaimed\"; Activity = \"Idle\"; "
                "PartitionableSlot = true; Start = true; Requirements = START; Rank = 0; ";
        Config *cfg = case_config(c);
        ConfigError err = {};
        AcctSettings as = {};
        AcctGroups *g = NULL;
        Accountant *acct = NULL;
        NegoSettings *s = NULL;
        ClassAd *slot = ad_of(c->name, slot_base, c->pslot), *jobs[POOL_JOBS];
        NegoSubmitter sub = { .name = "u@pool", .jobs = jobs };
        NegoResult res = {};
        double want[CARVE_MAX_RES];
        size_t n_jobs = c->times > 0 ? (size_t) c->times + 1 : 1, n_want = c->want ? parse_want(c->want, want) : 0;
        char why[256] = "";
        int r;

        for (size_t j = 0; j < n_jobs; j++) {
                char base[256];
                snprintf(base, sizeof(base),
                         "Owner = \"u\"; ClusterId = 1; ProcId = %zu; QDate = 1000; JobPrio = 0; Requirements = true; "
                         "Rank = 0; ",
                         j);
                jobs[j] = ad_of(c->name, base, c->job);
        }
        sub.n_jobs = n_jobs;
        GLEAN_TEST_CHECK_FATAL(acct_settings_from_config(cfg, &as, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK_FATAL(acct_groups_from_config(cfg, &g, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK_FATAL(acct_open(NULL, 0, NULL, &as, g, 1.8e9, &acct, why, sizeof(why)) == 0, "%s", why);
        GLEAN_TEST_CHECK_FATAL(acct_ensure(acct, "u@pool", 1.8e9) >= 0, "acct_ensure");
        GLEAN_TEST_CHECK_FATAL(nego_settings_from_config(cfg, &s, &err) == 0, "%s", err.msg);
        NegoInput in = { .slots = &slot, .n_slots = 1, .submitters = &sub, .n_submitters = 1, .accounts = acct,
                         .settings = s, .plain = plain };
        r = nego_cycle(&in, &res);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: cycle %d", c->name, r);
        if (!c->want)
                GLEAN_TEST_CHECK(res.n_matches == 0, "%s (%s): %zu matches, want none", c->name,
                                 plain ? "plain" : "fast", res.n_matches);
        else
                GLEAN_TEST_CHECK(res.n_matches == (c->times > 0 ? (size_t) c->times : 1), "%s (%s): %zu matches",
                                 c->name, plain ? "plain" : "fast", res.n_matches);
        for (size_t i = 0; i < res.n_matches && c->want; i++) {
                const NegoMatch *m = &res.matches[i];
                double got[CARVE_MAX_RES] = { m->cpus, m->memory, m->disk };
                for (size_t k = CARVE_N_STD; k < n_want; k++)
                        got[k] = m->custom[k - CARVE_N_STD];
                for (size_t k = 0; k < n_want; k++)
                        GLEAN_TEST_CHECK(got[k] == want[k], "%s (%s): match %zu: resource %zu %g, want %g", c->name,
                                         plain ? "plain" : "fast", i, k, got[k], want[k]);
        }
        nego_result_clear(&res);
        nego_settings_free(s);
        acct_close(acct);
        for (size_t j = 0; j < n_jobs; j++)
                classad_free(jobs[j]);
        classad_free(slot);
        config_free(cfg);
}

static void test_table_negotiator(void) {
        for (size_t k = 0; k < ELEMS(cases); k++) {
                nego_case(&cases[k], true);
                nego_case(&cases[k], false);
        }
}

/* ---- the policy itself ---- */

static void test_policy_knobs(void) {
        static const char *const bad[] = {
                "MODIFY_REQUEST_EXPR_REQUESTCPUS = quantize(RequestCpus,\n",
                "MUST_MODIFY_REQUEST_EXPRS = perhaps\n",
        };
        const char *names[CARVE_MAX_CUSTOM + 1];
        CarvePolicy *p = NULL;

        for (size_t i = 0; i < ELEMS(bad); i++) {
                Case c = { .name = bad[i], .config = bad[i] };
                Config *cfg = case_config(&c);
                ConfigError err = {};
                int r = carve_policy_new(cfg, NULL, 0, &p, &err);
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, "") && err.line > 0, "'%s': %d %s:%d %s", bad[i], r,
                                 err.file, err.line, err.msg);
                config_free(cfg);
        }
        for (size_t i = 0; i < ELEMS(names); i++)
                names[i] = "Gpus";
        CU_ASSERT(carve_policy_new(NULL, names, CARVE_MAX_CUSTOM + 1, &p, NULL) == -E2BIG);
        CU_ASSERT(carve_policy_new(NULL, names, 1, &p, NULL) == 0);
        CU_ASSERT(carve_policy_modify(p, CARVE_CPUS) == NULL);
        carve_policy_free(p);
        carve_policy_free(NULL);
}

static CU_TestInfo table_tests[] = {
        { "carve_amounts", test_table_carve },
        { "agent", test_table_agent },
        { "negotiator", test_table_negotiator },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo policy_tests[] = {
        { "knobs", test_policy_knobs },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "table", NULL, NULL, NULL, NULL, table_tests },
        { "policy", NULL, NULL, NULL, NULL, policy_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-pslot.c — partitionable and dynamic slots (seed 002, 3.5.10.6 and
 * 3.5.10.7; seed 003): the manual's 10-CPU example, the MODIFY_REQUEST_EXPR_*
 * rounding, _condor_Request*, the requests HTCondor refuses, -ENOSPC, the
 * return of a d-slot's resources, the consumption policies of seed 003, and
 * the resource attributes of static, partitionable and dynamic slot ads.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slots-test.h"

#define BIG 100000000 /* KB: the manual's "disk = BIG" */

static ClassAd *ad_from(const char *text) {
        ClassAd *ad = NULL;
        CaError cerr = {};
        int r;

        r = classad_parse_old(text, strlen(text), CA_MODE_OLD, &ad, &cerr);
        GLEAN_TEST_CHECK_FATAL(r == 0, "cannot parse ad: %d:%d %s", cerr.line, cerr.column, cerr.msg);
        return ad;
}

/* The one partitionable slot of a machine (3.5.10.6's configuration). */
typedef struct PSlot {
        Config *cfg;
        CarvePolicy *policy;
        AgentMachine m;
        AgentSlotDef def;
        AgentRes avail;
        ClassAd *ad;
} PSlot;

static void pslot_refresh(PSlot *p) {
        int r = agent_slot_ad_resources(p->ad, &p->m, &p->def, "slot1", false, &p->avail);

        GLEAN_TEST_CHECK_FATAL(r == 0, "agent_slot_ad_resources: %d", r);
}

static void pslot_init(PSlot *p, const char *extra_conf, int64_t cpus, int64_t memory, int64_t disk) {
        char conf[2048];
        AgentSlotDef *defs = NULL;
        ConfigError err = {};
        size_t n = 0;

        snprintf(conf, sizeof(conf), "NUM_SLOTS = 1\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1_PARTITIONABLE = true\n%s",
                 extra_conf ? extra_conf : "");
        p->cfg = slots_test_config(conf);
        p->m = slots_test_machine(p->cfg, cpus, memory, disk, 0);
        GLEAN_TEST_CHECK_FATAL(agent_slots_layout(p->cfg, &p->m, &defs, &n, &err) == 0 && n == 1, "layout: %s",
                               err.msg);
        p->def = defs[0];
        free(defs);
        GLEAN_TEST_CHECK_FATAL(agent_carve_policy(p->cfg, &p->m, &p->policy, &err) == 0, "policy: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(p->def.partitionable, "slot1 is partitionable");
        p->avail = p->def.res;
        GLEAN_TEST_CHECK_FATAL(classad_new(&p->ad) == 0, "classad_new");
        pslot_refresh(p);
}

static void pslot_done(PSlot *p) {
        classad_free(p->ad);
        carve_policy_free(p->policy);
        config_free(p->cfg);
}

static int64_t ad_int(const ClassAd *ad, const char *attr) {
        int64_t v = -12345;

        GLEAN_TEST_CHECK(classad_eval_int(ad, attr, CA_MODE_OLD, &v) == 0, "%s is not an integer", attr);
        return v;
}

static char *ad_string(const ClassAd *ad, const char *attr) {
        char *v = NULL;

        GLEAN_TEST_CHECK(classad_eval_string(ad, attr, CA_MODE_OLD, &v) == 0, "%s is not a string", attr);
        return v ? v : strdup("");
}

/* 3.5.10.6: slot1 has 10 CPUs, 10240 MB, BIG disk; JobA asks for 3 CPUs,
 * 1024 MB and 10240 KB: slot1_1 gets that, slot1 has 7, 9216, BIG-10240. */
static void test_manual_example(void) {
        PSlot p;
        ClassAd *job = ad_from("RequestCpus = 3\nRequestMemory = 1024\nRequestDisk = 10240\n");
        ClassAd *dslot = NULL;
        AgentRes got, before;
        char why[256];
        char *s;
        int r;

        pslot_init(&p, NULL, 10, 10240, BIG);
        before = p.avail;
        GLEAN_TEST_CHECK(ad_int(p.ad, "Cpus") == 10 && ad_int(p.ad, "Memory") == 10240 && ad_int(p.ad, "Disk") == BIG,
                         "slot1 before JobA");
        r = agent_pslot_carve(p.policy, &p.m, p.ad, job, &p.avail, &got, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "carve: %d %s", r, why);
        GLEAN_TEST_CHECK(got.cpus == 3 && got.memory == 1024 && got.disk == 10240 && got.swap == 0,
                         "slot1_1 gets %lld/%lld/%lld", (long long) got.cpus, (long long) got.memory,
                         (long long) got.disk);
        agent_res_sub(&p.avail, &got, p.m.n_custom);
        pslot_refresh(&p);
        GLEAN_TEST_CHECK(ad_int(p.ad, "Cpus") == 7 && ad_int(p.ad, "Memory") == 9216 &&
                                 ad_int(p.ad, "Disk") == BIG - 10240,
                         "slot1 after JobA: %lld/%lld/%lld", (long long) ad_int(p.ad, "Cpus"),
                         (long long) ad_int(p.ad, "Memory"), (long long) ad_int(p.ad, "Disk"));
        GLEAN_TEST_CHECK(ad_int(p.ad, "TotalSlotCpus") == 10 && ad_int(p.ad, "TotalSlotMemory") == 10240,
                         "slot1 still totals the whole slot");

        /* the d-slot's ad */
        GLEAN_TEST_CHECK_FATAL(classad_new(&dslot) == 0, "classad_new");
        GLEAN_TEST_CHECK(agent_slot_ad_resources(dslot, &p.m, &p.def, "slot1_1", true, &got) == 0, "d-slot ad");
        s = ad_string(dslot, "Name");
        GLEAN_TEST_CHECK(strcmp(s, "slot1_1@host.example.org") == 0, "Name '%s'", s);
        free(s);
        s = ad_string(dslot, "SlotType");
        GLEAN_TEST_CHECK(strcmp(s, "Dynamic") == 0, "SlotType '%s'", s);
        free(s);
        GLEAN_TEST_CHECK(ad_int(dslot, "SlotID") == 1 && ad_int(dslot, "DSlotId") == 1 &&
                                 ad_int(dslot, "SlotTypeID") == -1,
                         "SlotID/DSlotId/SlotTypeID");
        GLEAN_TEST_CHECK(ad_int(dslot, "Cpus") == 3 && ad_int(dslot, "TotalSlotCpus") == 3 &&
                                 ad_int(dslot, "TotalSlotMemory") == 1024 && ad_int(dslot, "TotalCpus") == 10,
                         "d-slot sizes");
        GLEAN_TEST_CHECK(classad_has(dslot, "DynamicSlot") && !classad_has(dslot, "PartitionableSlot"),
                         "DynamicSlot only");

        /* the job leaves: its resources go back */
        agent_res_add(&p.avail, &got, p.m.n_custom);
        GLEAN_TEST_CHECK(memcmp(&p.avail, &before, sizeof(before)) == 0, "resources returned");

        /* slot1 splits into slot1_1, slot1_2, ... until it is used up */
        int carved = 0;
        while ((r = agent_pslot_carve(p.policy, &p.m, p.ad, job, &p.avail, &got, why, sizeof(why))) == 0) {
                agent_res_sub(&p.avail, &got, p.m.n_custom);
                carved++;
        }
        GLEAN_TEST_CHECK(carved == 3 && r == -ENOSPC, "carved %d, then %d", carved, r);
        GLEAN_TEST_CHECK(strcmp(why, "the job needs 3 CPUs; the partitionable slot has 1 CPU left") == 0, "why: %s",
                         why);
        classad_free(dslot);
        classad_free(job);
        pslot_done(&p);
}

/* ---- requests and MODIFY_REQUEST_EXPR_* ---- */

typedef struct CarveCase {
        const char *conf;     /* added to the p-slot's configuration */
        const char *job;      /* the job ad */
        int64_t avail_memory; /* of 10 CPUs, BIG disk */
        int r;
        int64_t cpus, memory, disk;
        const char *why;      /* when r < 0 */
} CarveCase;

#define MODIFY_128 "MODIFY_REQUEST_EXPR_REQUESTMEMORY = quantize(RequestMemory, {128})\n"

static const CarveCase carve_cases[] = {
        /* the rounding of the defaults (memory as HTCondor's param table: {128}) */
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1000", 10240, 0, 1, 1024, 1024, NULL },
        { MODIFY_128, "RequestCpus = 2\nRequestMemory = 1024\nRequestDisk = 1025", 10240, 0, 2, 1024, 2048, NULL },
        { MODIFY_128, "RequestCpus = 1.5\nRequestMemory = 1\nRequestDisk = 0", 10240, 0, 2, 128, 1024, NULL },
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = MemoryUsage * 2\nMemoryUsage = 100\nRequestDisk = DiskUsage\n"
                      "DiskUsage = 7", 10240, 0, 1, 256, 1024, NULL },
        /* the manual's expression: TotalSlotMem / TotalSlotCpus / 4 of the p-slot */
        { "MODIFY_REQUEST_EXPR_REQUESTMEMORY = quantize(RequestMemory, {TotalSlotMemory / TotalSlotCpus / 4})",
          "RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1", 10240, 0, 1, 1024, 1024, NULL },
        { "MODIFY_REQUEST_EXPR_REQUESTMEMORY = quantize(RequestMemory, {1000, 2000, 4000})",
          "RequestCpus = 1\nRequestMemory = 1500\nRequestDisk = 1", 10240, 0, 1, 2000, 1024, NULL },
        /* an expression that is not a number leaves the request as it is */
        { "MODIFY_REQUEST_EXPR_REQUESTMEMORY = quantize(RequestMemory, {NoSuchAttribute})",
          "RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1", 10240, 0, 1, 1000, 1024, NULL },
        { MODIFY_128 "MODIFY_REQUEST_EXPR_REQUESTCPUS = \"many\"", "RequestCpus = 3\nRequestMemory = 1\nRequestDisk = 1",
          10240, 0, 3, 128, 1024, NULL },
        { MODIFY_128 "MODIFY_REQUEST_EXPR_REQUESTCPUS =", "RequestCpus = 3\nRequestMemory = 1\nRequestDisk = 1",
          10240, 0, 3, 128, 1024, NULL },
        /* the built-in default of 3.5.10.7 (TotalSlotMemory / TotalSlotCpus / 4 of this p-slot: 1024 MB) */
        { "", "RequestCpus = 3\nRequestMemory = 1000\nRequestDisk = 1", 10240, 0, 3, 1024, 1024, NULL },
        /* rewritten, it no longer fits: as the job wrote it, unless MUST_MODIFY_REQUEST_EXPRS */
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1", 1000, 0, 1, 1000, 1, NULL },
        { MODIFY_128 "MUST_MODIFY_REQUEST_EXPRS = True", "RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1",
          1000, -ENOSPC, 0, 0, 0, "the job needs 1024 MB of memory; the partitionable slot has 1000 MB of memory left" },
        /* what the schedd asks for (_condor_Request*) is taken as it is */
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = 100\n_condor_RequestMemory = 2000\nRequestDisk = 1\n"
                      "_condor_RequestCpus = 4", 10240, 0, 4, 2000, 1024, NULL },
        /* missing requests: one CPU; no memory or disk request is refused (HTCondor) */
        { MODIFY_128, "RequestMemory = 100\nRequestDisk = 1", 10240, 0, 1, 128, 1024, NULL },
        { MODIFY_128, "RequestCpus = 1\nRequestDisk = 1", 10240, -EINVAL, 0, 0, 0,
          "the job has no RequestMemory: a dynamic slot cannot be sized" },
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = 1", 10240, -EINVAL, 0, 0, 0,
          "the job has no RequestDisk: a dynamic slot cannot be sized" },
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = UndefinedThing\nRequestDisk = 1", 10240, -EINVAL, 0, 0, 0,
          "the job has no RequestMemory: a dynamic slot cannot be sized" },
        { MODIFY_128, "RequestCpus = \"two\"\nRequestMemory = 1\nRequestDisk = 1", 10240, -EINVAL, 0, 0, 0,
          "RequestCpus is not a number (\"two\")" },
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = -5\nRequestDisk = 1", 10240, -EINVAL, 0, 0, 0,
          "RequestMemory is negative (-5)" },
        { MODIFY_128, "RequestCpus = 1\nRequestMemory = 1\nRequestDisk = 1/0", 10240, -EINVAL, 0, 0, 0,
          "RequestDisk is not a number (error)" },
        { MODIFY_128, "RequestCpus = 0\nRequestMemory = 0\nRequestDisk = 0", 10240, -EINVAL, 0, 0, 0,
          "the job asks for no CPU, memory, disk or other resource" },
        /* too big */
        { MODIFY_128, "RequestCpus = 20\nRequestMemory = 1\nRequestDisk = 1", 10240, -ENOSPC, 0, 0, 0,
          "the job needs 20 CPUs; the partitionable slot has 10 CPUs left" },
        { MODIFY_128, "RequestCpus = 20\nRequestMemory = 20000\nRequestDisk = 1", 10240, -ENOSPC, 0, 0, 0,
          "the job needs 20 CPUs and 20096 MB of memory; the partitionable slot has 10 CPUs and 10240 MB of memory "
          "left" },
};

static void test_carve_requests(void) {
        for (size_t i = 0; i < sizeof(carve_cases) / sizeof(carve_cases[0]); i++) {
                const CarveCase *c = &carve_cases[i];
                ClassAd *job = ad_from(c->job);
                AgentRes got = {};
                char why[256] = "x";
                PSlot p;
                int r;

                pslot_init(&p, c->conf, 10, 10240, BIG);
                p.avail.memory = c->avail_memory;
                pslot_refresh(&p);
                r = agent_pslot_carve(p.policy, &p.m, p.ad, job, &p.avail, &got, why, sizeof(why));
                GLEAN_TEST_CHECK(r == c->r, "row %zu: gave %d (%s), want %d", i, r, why, c->r);
                if (r == 0 && c->r == 0)
                        GLEAN_TEST_CHECK(got.cpus == c->cpus && got.memory == c->memory && got.disk == c->disk,
                                         "row %zu: got %lld/%lld/%lld, want %lld/%lld/%lld", i, (long long) got.cpus,
                                         (long long) got.memory, (long long) got.disk, (long long) c->cpus,
                                         (long long) c->memory, (long long) c->disk);
                if (r < 0 && c->r < 0)
                        GLEAN_TEST_CHECK(strcmp(why, c->why) == 0, "row %zu: why\n  '%s'\nwant\n  '%s'", i, why,
                                         c->why);
                classad_free(job);
                pslot_done(&p);
        }
}

/* Custom resources: Request<name>, 0 when absent. */
static void test_carve_custom(void) {
        PSlot p;
        ClassAd *gpu_job = ad_from("RequestCpus = 1\nRequestMemory = 128\nRequestDisk = 1024\nRequestGpu = 2\n");
        ClassAd *plain_job = ad_from("RequestCpus = 1\nRequestMemory = 128\nRequestDisk = 1024\n");
        AgentRes got;
        char why[256];
        char *s;
        int r;

        pslot_init(&p, "MACHINE_RESOURCE_NAMES = gpu\nMACHINE_RESOURCE_gpu = 3\n" MODIFY_128, 4, 4096, BIG);
        s = ad_string(p.ad, "MachineResources");
        GLEAN_TEST_CHECK(strcmp(s, "Cpus Memory Disk Swap Gpu") == 0, "MachineResources '%s'", s);
        free(s);
        GLEAN_TEST_CHECK(ad_int(p.ad, "Gpu") == 3 && ad_int(p.ad, "TotalGpu") == 3 && ad_int(p.ad, "DetectedGpu") == 3 &&
                                 ad_int(p.ad, "TotalSlotGpu") == 3,
                         "Gpu attributes");
        r = agent_pslot_carve(p.policy, &p.m, p.ad, gpu_job, &p.avail, &got, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0 && got.custom[0] == 2, "first GPU job: %d %s %g", r, why, got.custom[0]);
        agent_res_sub(&p.avail, &got, p.m.n_custom);
        r = agent_pslot_carve(p.policy, &p.m, p.ad, gpu_job, &p.avail, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -ENOSPC && strcmp(why, "the job needs 2 Gpu; the partitionable slot has 1 Gpu left") == 0,
                         "second GPU job: %d %s", r, why);
        r = agent_pslot_carve(p.policy, &p.m, p.ad, plain_job, &p.avail, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && got.custom[0] == 0 && got.cpus == 1, "a job without RequestGpu: %d %s", r, why);
        classad_free(gpu_job);
        classad_free(plain_job);
        pslot_done(&p);
}

/* ---- seed 003: negotiator-side consumption policies ---- */

static void set_policy(ClassAd *ad, const char *memory_quantum) {
        char mem[128];

        snprintf(mem, sizeof(mem), "quantize(target.RequestMemory, {%s})", memory_quantum);
        GLEAN_TEST_CHECK_FATAL(classad_set_expr_text(ad, "ConsumptionCpus", "quantize(target.RequestCpus, {1})",
                                                     CA_MODE_OLD, NULL) == 0 &&
                                       classad_set_expr_text(ad, "ConsumptionMemory", mem, CA_MODE_OLD, NULL) == 0 &&
                                       classad_set_expr_text(ad, "ConsumptionDisk",
                                                             "quantize(target.RequestDisk, {1024})", CA_MODE_OLD,
                                                             NULL) == 0,
                               "setting the policy");
}

/* Carves jobs until it fails; returns how many fit. */
static int carve_all(PSlot *p, const ClassAd *job, const char *memory_quantum, AgentRes *ret_one, char *why,
                     size_t whylen) {
        AgentRes got;
        int n = 0, r;

        for (;;) {
                pslot_refresh(p);
                set_policy(p->ad, memory_quantum);
                r = agent_pslot_carve(p->policy, &p->m, p->ad, job, &p->avail, &got, why, whylen);
                if (r < 0) {
                        GLEAN_TEST_CHECK(r == -ENOSPC, "carving stopped with %d: %s", r, why);
                        return n;
                }
                if (n == 0)
                        *ret_one = got;
                agent_res_sub(&p->avail, &got, p->m.n_custom);
                n++;
        }
}

static void test_consumption_policy(void) {
        /* "NUM_CPUS = 10 ... SLOT_TYPE_1 = 100% ... queue 15" of sleep jobs */
        static const char conf[] = "NUM_CPUS = 10\nSLOT_TYPE_1 = 100%\nMUST_MODIFY_REQUEST_EXPRS = False\n";
        ClassAd *job = ad_from("RequestCpus = 1\nRequestMemory = ifThenElse(MemoryUsage =!= UNDEFINED, MemoryUsage, 1)\n"
                               "RequestDisk = DiskUsage\nDiskUsage = 22\n");
        AgentRes one = {};
        char why[256];
        PSlot p;
        int n;

        /* {128}: the ten cores go, one job each (slot1_1 .. slot1_10 with TotalSlotCpus 1) */
        pslot_init(&p, conf, 4, 1903, BIG);
        GLEAN_TEST_CHECK(p.def.res.cpus == 10 && p.def.res.memory == 1903, "slot1: %lld CPUs, %lld MB",
                         (long long) p.def.res.cpus, (long long) p.def.res.memory);
        n = carve_all(&p, job, "128", &one, why, sizeof(why));
        GLEAN_TEST_CHECK(n == 10, "%d jobs matched, want 10", n);
        GLEAN_TEST_CHECK(one.cpus == 1 && one.memory == 128 && one.disk == 1024, "each gets %lld/%lld/%lld",
                         (long long) one.cpus, (long long) one.memory, (long long) one.disk);
        GLEAN_TEST_CHECK(strcmp(why, "the job needs 1 CPU; the partitionable slot has 0 CPUs left") == 0, "why: %s",
                         why);
        pslot_done(&p);

        /* {512}: "memory limits reduce the number of jobs matched against slot1 to 3" */
        pslot_init(&p, conf, 4, 1903, BIG);
        n = carve_all(&p, job, "512", &one, why, sizeof(why));
        GLEAN_TEST_CHECK(n == 3, "%d jobs matched, want 3", n);
        GLEAN_TEST_CHECK(one.cpus == 1 && one.memory == 512, "each gets %lld CPU, %lld MB", (long long) one.cpus,
                         (long long) one.memory);
        GLEAN_TEST_CHECK(strcmp(why, "the job needs 512 MB of memory; the partitionable slot has 367 MB of memory "
                                     "left") == 0,
                         "why: %s", why);
        pslot_done(&p);
        classad_free(job);
}

typedef struct PolicyCase {
        const char *job;
        int r;
        int64_t cpus, memory, disk;
        const char *why;
} PolicyCase;

static void test_consumption_details(void) {
        static const PolicyCase cases[] = {
                /* _condor_Request* stands for the request; a missing one is 0 */
                { "RequestCpus = 1\nRequestMemory = 100\n_condor_RequestCpus = 4", 0, 4, 128, 1024, NULL },
                /* quantize(0, {1}) is 1: the first member of the list that is at least 0 */
                { "RequestMemory = 600", 0, 1, 640, 1024, NULL },
                { "RequestCpus = \"x\"\nRequestMemory = 1", -EINVAL, 0, 0, 0,
                  "ConsumptionCpus of the partitionable slot is not a number (error)" },
        };
        ClassAd *job;
        AgentRes got;
        char why[256];
        PSlot p;
        int r;

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                pslot_init(&p, NULL, 10, 10240, BIG);
                set_policy(p.ad, "128");
                job = ad_from(cases[i].job);
                r = agent_pslot_carve(p.policy, &p.m, p.ad, job, &p.avail, &got, why, sizeof(why));
                GLEAN_TEST_CHECK(r == cases[i].r, "row %zu: %d (%s), want %d", i, r, why, cases[i].r);
                if (r == 0 && cases[i].r == 0)
                        GLEAN_TEST_CHECK(got.cpus == cases[i].cpus && got.memory == cases[i].memory &&
                                                 got.disk == cases[i].disk,
                                         "row %zu: %lld/%lld/%lld", i, (long long) got.cpus, (long long) got.memory,
                                         (long long) got.disk);
                if (r < 0 && cases[i].r < 0)
                        GLEAN_TEST_CHECK(strcmp(why, cases[i].why) == 0, "row %zu: why '%s'", i, why);
                classad_free(job);
                pslot_done(&p);
        }

        /* a policy that consumes nothing */
        pslot_init(&p, NULL, 10, 10240, BIG);
        GLEAN_TEST_CHECK_FATAL(classad_set_expr_text(p.ad, "ConsumptionCpus", "target.RequestCpus", CA_MODE_OLD,
                                                     NULL) == 0 &&
                                       classad_set_expr_text(p.ad, "ConsumptionMemory", "0", CA_MODE_OLD, NULL) == 0 &&
                                       classad_set_expr_text(p.ad, "ConsumptionDisk", "0", CA_MODE_OLD, NULL) == 0,
                               "set");
        job = ad_from("RequestCpus = 0\nRequestMemory = 10");
        r = agent_pslot_carve(p.policy, &p.m, p.ad, job, &p.avail, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == -EINVAL && strcmp(why, "the job asks for no CPU, memory, disk or other resource") == 0,
                         "nothing consumed: %d %s", r, why);
        classad_free(job);
        pslot_done(&p);

        /* a policy that does not cover every resource is not one: the requests count */
        pslot_init(&p, MODIFY_128, 10, 10240, BIG);
        GLEAN_TEST_CHECK_FATAL(classad_set_expr_text(p.ad, "ConsumptionCpus", "5", CA_MODE_OLD, NULL) == 0, "set");
        job = ad_from("RequestCpus = 1\nRequestMemory = 1000\nRequestDisk = 1");
        r = agent_pslot_carve(p.policy, &p.m, p.ad, job, &p.avail, &got, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0 && got.cpus == 1 && got.memory == 1024, "partial policy ignored: %d %lld", r,
                         (long long) got.cpus);
        classad_free(job);
        pslot_done(&p);
}

/* ---- the resource attributes of the ads ---- */

static void test_slot_ads(void) {
        Config *cfg = slots_test_config("SLOT_TYPE_1 = c=1, m=25%\nNUM_SLOTS_TYPE_1 = 2\n"
                                        "SLOT_TYPE_2 = c=2, m=50%\nSLOT_TYPE_2_PARTITIONABLE = True\n"
                                        "NUM_SLOTS_TYPE_2 = 1\n");
        AgentMachine m = slots_test_machine(cfg, 4, 4096, 1000, 400);
        AgentSlotDef *defs = NULL;
        ConfigError err = {};
        ClassAd *ad = NULL;
        size_t n = 0;
        bool b = false;
        char *s;

        GLEAN_TEST_CHECK_FATAL(agent_slots_layout(cfg, &m, &defs, &n, &err) == 0 && n == 3, "layout: %s", err.msg);
        GLEAN_TEST_CHECK_FATAL(classad_new(&ad) == 0, "classad_new");

        GLEAN_TEST_CHECK(agent_slot_ad_resources(ad, &m, &defs[1], "slot2", false, &defs[1].res) == 0, "slot2");
        s = ad_string(ad, "Name");
        GLEAN_TEST_CHECK(strcmp(s, "slot2@host.example.org") == 0, "Name '%s'", s);
        free(s);
        s = ad_string(ad, "SlotType");
        GLEAN_TEST_CHECK(strcmp(s, "Static") == 0, "SlotType '%s'", s);
        free(s);
        s = ad_string(ad, "Arch");
        GLEAN_TEST_CHECK(strcmp(s, "X86_64") == 0, "Arch '%s'", s);
        free(s);
        s = ad_string(ad, "OpSys");
        GLEAN_TEST_CHECK(strcmp(s, "LINUX") == 0, "OpSys '%s'", s);
        free(s);
        s = ad_string(ad, "Machine");
        GLEAN_TEST_CHECK(strcmp(s, "host.example.org") == 0, "Machine '%s'", s);
        free(s);
        GLEAN_TEST_CHECK(ad_int(ad, "SlotID") == 2 && ad_int(ad, "SlotTypeID") == 1, "ids");
        GLEAN_TEST_CHECK(ad_int(ad, "Cpus") == 1 && ad_int(ad, "Memory") == 1024 && ad_int(ad, "Disk") == 333 &&
                                 ad_int(ad, "Swap") == 133 && ad_int(ad, "VirtualMemory") == 133,
                         "slot2 resources");
        GLEAN_TEST_CHECK(ad_int(ad, "TotalCpus") == 4 && ad_int(ad, "TotalMemory") == 4096 &&
                                 ad_int(ad, "TotalDisk") == 1000 && ad_int(ad, "TotalVirtualMemory") == 400 &&
                                 ad_int(ad, "DetectedCpus") == 4 && ad_int(ad, "DetectedMemory") == 4096,
                         "machine totals");
        GLEAN_TEST_CHECK(ad_int(ad, "TotalSlotCpus") == 1 && ad_int(ad, "TotalSlotMemory") == 1024 &&
                                 ad_int(ad, "TotalSlotDisk") == 333,
                         "slot totals");
        GLEAN_TEST_CHECK(!classad_has(ad, "PartitionableSlot") && !classad_has(ad, "DynamicSlot") &&
                                 !classad_has(ad, "DSlotId"),
                         "a static slot is neither");

        /* the same ad reused for the p-slot, with some of it carved */
        AgentRes left = defs[2].res;
        left.cpus = 1;
        GLEAN_TEST_CHECK(agent_slot_ad_resources(ad, &m, &defs[2], "slot3", false, &left) == 0, "slot3");
        GLEAN_TEST_CHECK(classad_eval_bool(ad, "PartitionableSlot", CA_MODE_OLD, &b) == 0 && b, "PartitionableSlot");
        s = ad_string(ad, "SlotType");
        GLEAN_TEST_CHECK(strcmp(s, "Partitionable") == 0, "SlotType '%s'", s);
        free(s);
        GLEAN_TEST_CHECK(ad_int(ad, "Cpus") == 1 && ad_int(ad, "TotalSlotCpus") == 2 && ad_int(ad, "SlotTypeID") == 2,
                         "p-slot: Cpus what is left, TotalSlotCpus its size");
        GLEAN_TEST_CHECK(!classad_has(ad, "ConsumptionCpus"), "no consumption policy unless configured");

        GLEAN_TEST_CHECK(agent_slot_ad_resources(ad, &m, &defs[2], "slot3_12", true, &defs[0].res) == 0, "d-slot");
        GLEAN_TEST_CHECK(!classad_has(ad, "PartitionableSlot") && ad_int(ad, "DSlotId") == 12 &&
                                 ad_int(ad, "SlotTypeID") == -2 && ad_int(ad, "SlotID") == 3,
                         "a d-slot of slot3");
        GLEAN_TEST_CHECK(agent_slot_ad_resources(ad, &m, &defs[2], "slot@3", false, &left) == -EINVAL, "bad name");
        GLEAN_TEST_CHECK(agent_slot_ad_resources(ad, &m, &defs[2], "", false, &left) == -EINVAL, "empty name");
        classad_free(ad);
        free(defs);
        config_free(cfg);
}

static CU_TestInfo carve_tests[] = {
        { "manual", test_manual_example },
        { "requests", test_carve_requests },
        { "custom", test_carve_custom },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo policy_tests[] = {
        { "seed003", test_consumption_policy },
        { "details", test_consumption_details },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo ad_tests[] = {
        { "attributes", test_slot_ads },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "carve", NULL, NULL, NULL, NULL, carve_tests },
        { "consumption", NULL, NULL, NULL, NULL, policy_tests },
        { "slotad", NULL, NULL, NULL, NULL, ad_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

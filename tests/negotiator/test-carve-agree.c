/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-carve-agree.c — the matchmaker and the execute agent carve
 * partitionable slots alike: on generated pools (a fixed seed, printed;
 * p-slots with and without consumption policies and custom resources,
 * MODIFY_REQUEST_EXPR_* rewrites, MUST_MODIFY_REQUEST_EXPRS, jobs with
 * fractions, _condor_Request<Res>, missing requests), every match the
 * cycle makes with a p-slot, replayed in order, is one agent_pslot_carve()
 * accepts with the same amounts; a job left unmatched is one the agent
 * would not carve out of what is left; and one job against one p-slot
 * as given, alone, is matched exactly when the agent carves it, with the
 * agent's amounts.
 */
#include <errno.h>
#include <inttypes.h>

#include "carve-test.h"
#include "nego-test.h"
#include "test-random.h"

#define SEED 0x6361727665ull /* "carve" */
#define N_POOLS 3000

static const char *const modify_cpus[] = { NULL, "RequestCpus", "quantize(RequestCpus, {2})", "RequestCpus * 1.5" };
static const char *const modify_memory[] = { NULL, "RequestMemory", "quantize(RequestMemory, {512})",
                                             "quantize(RequestMemory, {TotalSlotMemory / TotalSlotCpus / 4})",
                                             "\"not a number\"" };
static const char *const modify_disk[] = { NULL, "RequestDisk", "quantize(RequestDisk, {4096})" };
static const char *const consumption_cpus[] = { "quantize(target.RequestCpus, {1})", "target.RequestCpus",
                                                "ifThenElse(target.RequestCpus > 2, 4, 1)" };
static const char *const consumption_memory[] = { "quantize(target.RequestMemory, {128})",
                                                  "quantize(target.RequestMemory, {512})", "target.RequestMemory / 2" };
static const char *const consumption_disk[] = { "quantize(target.RequestDisk, {1024})", "target.RequestDisk", "0" };
static const char *const consumption_gpus[] = { "target.RequestGpus", "target.RequestGpus * 2", "0" };
static const char *const gpu_names[] = { "Gpus", "Fpgas" };

typedef struct Pool {
        NegoTest t;
        bool reads_left; /* what a job asks depends on what is left (a rewrite reads TARGET.Cpus) */
} Pool;

static void pool_config(uint64_t *s, char *cfg, size_t size, bool *reads_left) {
        const char *c = PICK(s, modify_cpus), *m = PICK(s, modify_memory), *d = PICK(s, modify_disk);
        size_t len = 0;

        *reads_left = false;
        if (pick(s, 8) == 0) {
                c = "TARGET.Cpus / 2";
                *reads_left = true;
        }
        len += (size_t) snprintf(cfg + len, size - len, "MUST_MODIFY_REQUEST_EXPRS = %s\n",
                                 pick(s, 4) == 0 ? "True" : "False");
        if (c)
                len += (size_t) snprintf(cfg + len, size - len, "MODIFY_REQUEST_EXPR_REQUESTCPUS = %s\n", c);
        if (m)
                len += (size_t) snprintf(cfg + len, size - len, "MODIFY_REQUEST_EXPR_REQUESTMEMORY = %s\n", m);
        if (d)
                (void) snprintf(cfg + len, size - len, "MODIFY_REQUEST_EXPR_REQUESTDISK = %s\n", d);
}

static void pool_slots(NegoTest *t, uint64_t *s) {
        size_t n = 1 + pick(s, 3);

        for (size_t i = 0; i < n; i++) {
                unsigned cpus = 1 + pick(s, 8), mem = 256u * (1 + pick(s, 16)), disk = 1024u * (1 + pick(s, 64));
                const char *gpu = pick(s, 2) ? PICK(s, gpu_names) : NULL;
                unsigned gpus = pick(s, 4);
                char extra[1024];
                size_t len = 0;

                len += (size_t) snprintf(extra, sizeof(extra),
                                         "PartitionableSlot = true; Cpus = %u; Memory = %u; Disk = %u; "
                                         "TotalSlotCpus = %u; TotalSlotMemory = %u; TotalSlotDisk = %u; ",
                                         cpus, mem, disk, cpus, mem, disk);
                if (gpu)
                        len += (size_t) snprintf(extra + len, sizeof(extra) - len,
                                                 "MachineResources = \"Cpus Memory Disk Swap %s\"; %s = %u; ", gpu,
                                                 gpu, gpus);
                else
                        len += (size_t) snprintf(extra + len, sizeof(extra) - len,
                                                 "MachineResources = \"Cpus Memory Disk Swap\"; ");
                if (pick(s, 2)) {
                        len += (size_t) snprintf(extra + len, sizeof(extra) - len,
                                                 "ConsumptionCpus = %s; ConsumptionMemory = %s; ConsumptionDisk = %s; ",
                                                 PICK(s, consumption_cpus), PICK(s, consumption_memory),
                                                 PICK(s, consumption_disk));
                        if (gpu && pick(s, 4)) /* else the policy is no policy: it lacks a resource */
                                (void) snprintf(extra + len, sizeof(extra) - len, "Consumption%s = %s; ", gpu,
                                                PICK(s, consumption_gpus));
                }
                nt_slots(t, 1, extra);
        }
}

static void pool_jobs(NegoTest *t, uint64_t *s, size_t sub) {
        size_t n = 1 + pick(s, 8);

        for (size_t j = 0; j < n; j++) {
                char text[1024];
                size_t len = 0;

                len += (size_t) snprintf(text, sizeof(text),
                                         "[ Owner = \"u\"; ClusterId = %zu; ProcId = 0; QDate = %zu; JobPrio = 0; "
                                         "Requirements = true; Rank = 0; ",
                                         j + 1, 1000 + j);
                if (pick(s, 6))
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "RequestCpus = %s; ",
                                                 pick(s, 5) ? (const char *[]){ "1", "2", "3" }[pick(s, 3)] : "0.5");
                if (pick(s, 10))
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "RequestMemory = %u%s; ",
                                                 100u * (1 + pick(s, 30)), pick(s, 5) ? "" : ".25");
                if (pick(s, 10))
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "RequestDisk = %u; ",
                                                 500u * (1 + pick(s, 40)));
                if (pick(s, 3) == 0)
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "Request%s = %s; ",
                                                 PICK(s, gpu_names), pick(s, 4) ? "1" : "1.5");
                if (pick(s, 8) == 0)
                        len += (size_t) snprintf(text + len, sizeof(text) - len, "_condor_RequestCpus = %u; ",
                                                 1 + pick(s, 3));
                (void) snprintf(text + len, sizeof(text) - len, "]");
                CU_ASSERT_FATAL(t->subs[sub].n_jobs < NT_MAX_JOBS);
                t->jobs[sub][t->subs[sub].n_jobs++] = nt_ad(text);
        }
}

static void pool_make(Pool *p, uint64_t seed) {
        uint64_t s = seed;
        char cfg[1024];

        pool_config(&s, cfg, sizeof(cfg), &p->reads_left);
        nt_init(&p->t, cfg);
        nt_sub(&p->t, "u@pool", 0);
        pool_slots(&p->t, &s);
        pool_jobs(&p->t, &s, 0);
}

/* The amounts of a match, in the p-slot's carve_resources() order. */
static size_t match_amounts(const NegoMatch *m, const CarveResources *res, double *ret) {
        ret[CARVE_CPUS] = m->cpus;
        ret[CARVE_MEMORY] = m->memory;
        ret[CARVE_DISK] = m->disk;
        for (size_t k = CARVE_N_STD; k < res->n; k++)
                ret[k] = m->custom[k - CARVE_N_STD];
        return res->n;
}

static bool same_amounts(const CarveResources *res, const double *a, const double *b) {
        for (size_t k = 0; k < res->n; k++)
                if (a[k] != b[k])
                        return false;
        return true;
}

typedef struct Counts {
        size_t pools, matches, unmatched, pairs, pairs_carved, with_policy, with_custom, failed;
} Counts;

/* The cycle's matches replayed through the agent; the unmatched jobs
 * refused by what is left. */
static void check_cycle(Pool *p, uint64_t seed, bool plain, Counts *n) {
        NegoTest *t = &p->t;
        ClassAd *left[NT_MAX_SLOTS];
        CarveTestAgent agents[NT_MAX_SLOTS];
        bool matched[NT_MAX_JOBS] = { false };
        int r;

        r = nt_cycle(t, plain);
        GLEAN_TEST_CHECK_FATAL(r == 0, "seed %" PRIu64 ": cycle %d", seed, r);
        for (size_t i = 0; i < t->n_slots; i++) {
                CU_ASSERT_FATAL(classad_copy(t->slots[i], &left[i]) == 0);
                carve_test_agent_init(&agents[i], t->cfg, t->slots[i]);
        }
        for (size_t k = 0; k < t->res.n_matches; k++) {
                const NegoMatch *m = &t->res.matches[k];
                double want[CARVE_MAX_RES], got[CARVE_MAX_RES];
                CarveResources res;
                char why[256] = "";

                matched[m->job] = true;
                n->matches++;
                r = carve_test_agent_carve(&agents[m->slot], left[m->slot], t->jobs[0][m->job], &res, got, why,
                                           sizeof(why));
                match_amounts(m, &res, want);
                if (r < 0 || !same_amounts(&res, want, got)) {
                        GLEAN_TEST_CHECK(false,
                                         "seed %" PRIu64 " (%s): match %zu (job %zu, slot %zu: %g %g %g) refused or "
                                         "carved otherwise by the agent: %d %s (%g %g %g)",
                                         seed, plain ? "plain" : "fast", k, m->job, m->slot, want[0], want[1], want[2],
                                         r, why, r < 0 ? 0 : got[0], r < 0 ? 0 : got[1], r < 0 ? 0 : got[2]);
                        n->failed++;
                        continue;
                }
                carve_test_take(left[m->slot], &res, got);
        }
        /* What is left cannot take a job the cycle did not match (when what
         * a job asks does not change as the p-slots are consumed). */
        for (size_t j = 0; j < t->subs[0].n_jobs && !p->reads_left; j++) {
                if (matched[j])
                        continue;
                n->unmatched++;
                for (size_t i = 0; i < t->n_slots; i++) {
                        double got[CARVE_MAX_RES];
                        CarveResources res;
                        char why[256];
                        r = carve_test_agent_carve(&agents[i], left[i], t->jobs[0][j], &res, got, why, sizeof(why));
                        if (r == 0) {
                                GLEAN_TEST_CHECK(false, "seed %" PRIu64 " (%s): job %zu unmatched, the agent carves it "
                                                        "out of what is left of slot %zu",
                                                 seed, plain ? "plain" : "fast", j, i);
                                n->failed++;
                        }
                }
        }
        for (size_t i = 0; i < t->n_slots; i++) {
                carve_test_agent_done(&agents[i]);
                classad_free(left[i]);
        }
}

/* Each job against each p-slot as given, alone in a cycle. */
static void check_pairs(Pool *p, uint64_t seed, Counts *n) {
        NegoTest *t = &p->t;

        for (size_t i = 0; i < t->n_slots; i++) {
                CarveTestAgent a;

                carve_test_agent_init(&a, t->cfg, t->slots[i]);
                n->with_policy += classad_has(t->slots[i], "ConsumptionCpus");
                n->with_custom += a.m.n_custom > 0;
                for (size_t j = 0; j < t->subs[0].n_jobs; j++) {
                        ClassAd *job = t->jobs[0][j];
                        NegoSubmitter sub = { .name = "u@pool", .jobs = &job, .n_jobs = 1 };
                        NegoInput in = { .slots = &t->slots[i], .n_slots = 1, .submitters = &sub, .n_submitters = 1,
                                         .accounts = t->acct, .settings = t->settings, .plain = true };
                        NegoResult res = {};
                        double got[CARVE_MAX_RES], want[CARVE_MAX_RES];
                        CarveResources cres;
                        char why[256] = "";
                        int r, ra;

                        r = nego_cycle(&in, &res);
                        GLEAN_TEST_CHECK_FATAL(r == 0, "seed %" PRIu64 ": pair cycle %d", seed, r);
                        ra = carve_test_agent_carve(&a, t->slots[i], job, &cres, got, why, sizeof(why));
                        n->pairs++;
                        n->pairs_carved += ra == 0;
                        if ((ra == 0) != (res.n_matches == 1) ||
                            (ra == 0 && (match_amounts(&res.matches[0], &cres, want), !same_amounts(&cres, want, got)))) {
                                GLEAN_TEST_CHECK(false,
                                                 "seed %" PRIu64 ": slot %zu job %zu: the agent %s (%s), the matchmaker "
                                                 "%zu matches",
                                                 seed, i, j, ra == 0 ? "carves" : "refuses", why, res.n_matches);
                                n->failed++;
                        }
                        nego_result_clear(&res);
                }
                carve_test_agent_done(&a);
        }
}

static void test_agree(void) {
        Counts n = {};

        printf("\n    seed %#" PRIx64 ", %d pools\n", (uint64_t) SEED, N_POOLS);
        for (uint64_t k = 0; k < N_POOLS && n.failed < 10; k++) {
                uint64_t seed = SEED + k * 7919;
                Pool p;

                pool_make(&p, seed);
                check_cycle(&p, seed, k % 2 == 0, &n);
                check_pairs(&p, seed, &n);
                n.pools++;
                nt_done(&p.t);
        }
        printf("    %zu pools: %zu p-slot matches replayed, %zu jobs left unmatched checked; %zu job x p-slot pairs "
               "(%zu carved); p-slots with a policy %zu, with a custom resource %zu\n",
               n.pools, n.matches, n.unmatched, n.pairs, n.pairs_carved, n.with_policy, n.with_custom);
        CU_ASSERT(n.failed == 0);
        /* the workload exercises what it claims to */
        CU_ASSERT(n.matches > 1000 && n.unmatched > 500 && n.pairs_carved > 1000 && n.pairs - n.pairs_carved > 1000);
}

static CU_TestInfo tests[] = {
        { "random pools", test_agree },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "carve agreement", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

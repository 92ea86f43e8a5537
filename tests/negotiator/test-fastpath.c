/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-fastpath.c — the fast path (autoclusters, slot shapes, cached
 * candidate lists) gives exactly the plain algorithm's cycle: on random
 * pools with fixed seeds — static, running, claimed-idle and
 * partitionable slots, desktop-like START, slot Ranks, preemption by
 * Rank and by PREEMPTION_REQUIREMENTS (some reading what changes within
 * the cycle), several submitters of different EUPs, quota groups, job
 * shapes repeating, job Ranks — the same matches (job, slot, reason,
 * cost, carving, in the same order) and the same rejection reasons; some
 * p-slots carve GPUs too.
 */
#include <inttypes.h>

#include "nego-test.h"
#include "test-random.h"

#define N_POOLS 400

static const char *const preemption_req[] = {
        "False",
        "True",
        "RemoteUserPrio > SubmitterUserPrio * 1.2",
        "SubmitterUserResourcesInUse < 3 && RemoteUserResourcesInUse > 0", /* changes within the cycle */
        "MY.Cpus >= TARGET.RequestCpus && SubmitterGroup =!= RemoteGroup",
        "Slot1_RemoteUserPrio =?= UNDEFINED || Slot1_RemoteUserPrio > SubmitterUserPrio",
        "SubmitterGroupResourcesInUse =?= UNDEFINED || SubmitterGroupResourcesInUse < SubmitterGroupQuota",
};
static const char *const busy_preemption_req[] = {
        "True",
        "RemoteUserPrio > SubmitterUserPrio * 1.2",
        "Slot1_RemoteUserPrio =!= UNDEFINED && RemoteUserPrio > SubmitterUserPrio",
};
static const char *const pre_rank[] = {
        NULL, /* HTCondor's default: - Cpus, - Memory */
        "0",
        "KFlops / 100",
        "TARGET.JobPrio * 10 - Cpus",
};
static const char *const post_rank[] = { NULL, "0", "- SlotID" };
static const char *const preemption_rank[] = { NULL, "0", "- SlotID + RemoteUserPrio", "TARGET.JobPrio - CurrentRank" };

static const char *const starts[] = {
        "true",
        "KeyboardIdle > 300 && LoadAvg < 0.5",
        "TARGET.Owner =!= \"u2@pool\"",
        "TARGET.RequestMemory <= Memory",
        "TARGET.RequestCpus <= Cpus && (TARGET.JobPrio >= 0 || KeyboardIdle > 600)",
        "Idle && TARGET.WantBig =!= true", /* Idle: an expression of the slot's */
};
static const char *const slot_ranks[] = { "0", "TARGET.JobPrio", "(TARGET.Owner == \"u1@pool\") * 5", "TARGET.RequestMemory / 1000" };

static const char *const job_reqs[] = {
        "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && (TARGET.Disk >= RequestDisk) && "
        "(TARGET.Memory >= RequestMemory) && (TARGET.Cpus >= RequestCpus)",
        "(TARGET.Memory >= RequestMemory) && (TARGET.KFlops > 1500)",
        "TARGET.Arch == \"aarch64\" && TARGET.Memory >= RequestMemory",
        "TARGET.Cpus >= RequestCpus && (SubmitterUserResourcesInUse < 4 || TARGET.Memory > 2000)",
        "Memory >= RequestMemory && MY.WantBig =!= true",
        "TARGET.Memory >= MyMemory", /* MyMemory: an expression of the job's */
        "true",
        "TARGET.Memory > 100000",
};
static const char *const job_ranks[] = { "0", "Memory", "KFlops", "- TARGET.Cpus", "TARGET.SlotID", "MyMemory - Memory" };

static void random_config(uint64_t *s, bool busy, char *cfg, size_t size, bool *groups, bool *weights) {
        size_t len = 0;
        const char *x;

#define ADD(...) (len += (size_t) snprintf(cfg + len, size - len, __VA_ARGS__))
        ADD("PREEMPTION_REQUIREMENTS = %s\n", busy ? PICK(s, busy_preemption_req) : PICK(s, preemption_req));
        ADD("PREEMPTION_REQUIREMENTS_STABLE = %s\n", pick(s, 2) ? "True" : "False");
        if ((x = busy ? "0" : PICK(s, pre_rank)))
                ADD("NEGOTIATOR_PRE_JOB_RANK = %s\n", x);
        if ((x = busy ? "0" : PICK(s, post_rank)))
                ADD("NEGOTIATOR_POST_JOB_RANK = %s\n", x);
        if ((x = PICK(s, preemption_rank)))
                ADD("PREEMPTION_RANK = %s\n", x);
        if (pick(s, 5) == 0)
                ADD("NEGOTIATOR_CONSIDER_PREEMPTION = False\n");
        if (pick(s, 4) == 0)
                ADD("NEGOTIATOR_CONSIDER_EARLY_PREEMPTION = True\n");
        if (pick(s, 3) == 0)
                ADD("NEGOTIATE_ALL_JOBS_IN_CLUSTER = True\n");
        *weights = pick(s, 4) != 0;
        if (!*weights)
                ADD("NEGOTIATOR_USE_SLOT_WEIGHTS = False\n");
        if (pick(s, 6) == 0)
                ADD("NEGOTIATOR_MATCHLIST_CACHING = False\n");
        *groups = pick(s, 3) == 0;
        if (*groups)
                ADD("GROUP_NAMES = group_a, group_b\nGROUP_QUOTA_group_a = %u\nGROUP_QUOTA_group_b = %u\n"
                    "GROUP_ACCEPT_SURPLUS = %s\nGROUP_AUTOREGROUP = %s\n",
                    1 + pick(s, 12), 1 + pick(s, 8), pick(s, 2) ? "True" : "False", pick(s, 2) ? "True" : "False");
#undef ADD
}

/* Slot i runs a job of submitter user, charged as the accounts would:
 * the slot's weight (Cpus, as SLOT_WEIGHT says), or 1. */
static void running(NegoTest *t, size_t i, const char *user, double current_rank, bool weights) {
        int64_t cpus = 1;

        if (weights)
                (void) classad_eval_int(t->slots[i], "Cpus", CA_MODE_OLD, &cpus);
        nt_running_weight(t, i, user, current_rank, (double) cpus);
}

static void random_slots(NegoTest *t, uint64_t *s, bool busy, bool weights) {
        size_t n = 3 + pick(s, 40), machine = 0, slot_id = 0;

        for (size_t i = 0; i < n; i++) {
                char extra[1024];
                unsigned kind = busy ? 2 + pick(s, 4) : pick(s, 10);
                unsigned cpus = 1 + pick(s, 4), mem = 512u << pick(s, 4);

                if (slot_id == 0 || pick(s, 3) == 0) {
                        machine++;
                        slot_id = 0;
                }
                slot_id++;
                if (kind < 2) { /* partitionable */
                        cpus = 4 + 4 * pick(s, 3);
                        mem = 4096u << pick(s, 2);
                        snprintf(extra, sizeof(extra),
                                 "Machine = \"m%zu\"; SlotID = %zu; PartitionableSlot = true; Cpus = %u; TotalSlotCpus = %u; "
                                 "Memory = %u; TotalSlotMemory = %u; Disk = 400000; TotalSlotDisk = 400000; KFlops = %u; "
                                 "KeyboardIdle = 1000; Idle = true; Start = %s; Requirements = START && Cpus > 0; Rank = %s; %s%s",
                                 machine, slot_id, cpus, cpus, mem, mem, 1000 + 500 * pick(s, 3), PICK(s, starts),
                                 PICK(s, slot_ranks),
                                 pick(s, 2) ? "ConsumptionCpus = quantize(target.RequestCpus, {1}); "
                                              "ConsumptionMemory = quantize(target.RequestMemory, {256}); "
                                              "ConsumptionDisk = quantize(target.RequestDisk, {1024}); "
                                            : "",
                                 pick(s, 2) ? "SlotWeight = Cpus + Memory / 4096" : "");
                } else {
                        snprintf(extra, sizeof(extra),
                                 "Machine = \"m%zu\"; SlotID = %zu; Cpus = %u; Memory = %u; Arch = \"%s\"; KFlops = %u; "
                                 "KeyboardIdle = %u; LoadAvg = %.2f; Idle = KeyboardIdle > 200; Start = %s; Rank = %s; "
                                 "WantBig = %s",
                                 machine, slot_id, cpus, mem, pick(s, 6) ? "X86_64" : "aarch64", 1000 + 500 * pick(s, 3),
                                 100 * pick(s, 10), pick(s, 4) * 0.25, PICK(s, starts), PICK(s, slot_ranks),
                                 pick(s, 4) ? "false" : "true");
                }
                nt_slots(t, 1, extra);
                if (kind < 2 && pick(s, 3) == 0) { /* GPUs: carved too, a policy that forgets them is none */
                        ClassAd *ad = t->slots[t->n_slots - 1];
                        classad_set_string(ad, "MachineResources", "Cpus Memory Disk Swap Gpus");
                        classad_set_int(ad, "Gpus", pick(s, 4));
                        if (classad_has(ad, "ConsumptionCpus") && pick(s, 2))
                                classad_set_expr_text(ad, "ConsumptionGpus", "target.RequestGpus", CA_MODE_OLD, NULL);
                }
                if (pick(s, 200) == 0) /* what the analysis cannot see through: the cycle runs plain */
                        classad_set_expr_text(t->slots[t->n_slots - 1], "Start", "eval(\"KeyboardIdle > 300\")",
                                              CA_MODE_OLD, NULL);
                if (kind >= 2 && kind < 5 && t->n_subs > 0) {
                        size_t sub = pick(s, (unsigned) t->n_subs);
                        running(t, t->n_slots - 1, t->names[sub], pick(s, 3), weights);
                        if (pick(s, 4) == 0)
                                classad_set_int(t->slots[t->n_slots - 1], "RetirementTimeRemaining", 600);
                } else if (kind == 5) {
                        classad_set_string(t->slots[t->n_slots - 1], "State", "Claimed"); /* Claimed/Idle */
                }
        }
}

static void random_jobs(NegoTest *t, uint64_t *s, size_t sub) {
        size_t n_shapes = 1 + pick(s, 4), n = pick(s, 30);
        char shapes[4][1024];

        for (size_t k = 0; k < n_shapes; k++)
                snprintf(shapes[k], sizeof(shapes[k]),
                         "RequestCpus = %u; RequestMemory = %u; RequestDisk = %u; Requirements = %s; Rank = %s; JobPrio = %u; "
                         "MyMemory = RequestMemory * %u; WantBig = %s%s",
                         1 + pick(s, 2), (unsigned[]){ 100, 600, 1500, 3000, 9000 }[pick(s, 5)], 1000 * (1 + pick(s, 3)),
                         PICK(s, job_reqs), PICK(s, job_ranks), pick(s, 3), 1 + pick(s, 2), pick(s, 3) ? "false" : "true",
                         pick(s, 5) ? "" : "; RequestGpus = 1");
        for (size_t i = 0; i < n;) {
                size_t procs = 1 + pick(s, 4);
                if (procs > n - i)
                        procs = n - i;
                nt_jobs(t, sub, procs, (int) (100 * sub + i), shapes[pick(s, (unsigned) n_shapes)]);
                i += procs;
        }
}

/* A random pool; busy: most slots run jobs, and candidates tie on the
 * rank knobs, so that Rank, Priority and PREEMPTION_RANK decide. */
static void random_pool(NegoTest *t, uint64_t seed, bool busy) {
        uint64_t s = seed;
        char cfg[2048];
        bool groups, weights;
        size_t n_subs;

        random_config(&s, busy, cfg, sizeof(cfg), &groups, &weights);
        nt_init(t, cfg);
        n_subs = 1 + pick(&s, 5);
        for (size_t k = 0; k < n_subs; k++) {
                char name[64];
                static const char *const group[] = { "", "group_a.", "group_b." };
                snprintf(name, sizeof(name), "%su%zu@pool", groups ? group[pick(&s, 3)] : "", k + 1);
                nt_sub(t, name, 0.5 + pick(&s, 40));
        }
        random_slots(t, &s, busy, weights);
        for (size_t k = 0; k < n_subs; k++)
                random_jobs(t, &s, k);
}

/* The two results are the same; the first difference in *why. */
static bool same_result(const NegoResult *a, const NegoResult *b, char *why, size_t size) {
        if (a->n_matches != b->n_matches)
                return snprintf(why, size, "%zu matches, fast %zu", a->n_matches, b->n_matches), false;
        for (size_t i = 0; i < a->n_matches; i++) {
                const NegoMatch *x = &a->matches[i], *y = &b->matches[i];
                if (x->submitter != y->submitter || x->job != y->job || x->slot != y->slot || x->reason != y->reason ||
                    x->cost != y->cost || x->partitionable != y->partitionable || x->cpus != y->cpus ||
                    x->memory != y->memory || x->disk != y->disk ||
                    memcmp(x->custom, y->custom, sizeof(x->custom)) != 0 ||
                    !x->preempted_user != !y->preempted_user ||
                    (x->preempted_user && strcmp(x->preempted_user, y->preempted_user) != 0))
                        return snprintf(why, size,
                                        "match %zu: sub %zu job %zu slot %zu %s cost %g; fast: sub %zu job %zu slot %zu %s "
                                        "cost %g",
                                        i, x->submitter, x->job, x->slot, nego_reason_name(x->reason), x->cost,
                                        y->submitter, y->job, y->slot, nego_reason_name(y->reason), y->cost),
                               false;
        }
        if (a->n_rejections != b->n_rejections)
                return snprintf(why, size, "%zu rejections, fast %zu", a->n_rejections, b->n_rejections), false;
        for (size_t i = 0; i < a->n_rejections; i++) {
                const NegoRejection *x = &a->rejections[i], *y = &b->rejections[i];
                if (x->submitter != y->submitter || x->job != y->job || strcmp(x->reason, y->reason) != 0)
                        return snprintf(why, size, "rejection %zu: sub %zu job %zu '%s'; fast: sub %zu job %zu '%s'", i,
                                        x->submitter, x->job, x->reason, y->submitter, y->job, y->reason),
                               false;
        }
        if (a->stats.jobs_considered != b->stats.jobs_considered || a->stats.spins != b->stats.spins ||
            a->stats.autoclusters != b->stats.autoclusters || a->stats.slot_shapes != b->stats.slot_shapes)
                return snprintf(why, size, "stats: considered %zu spins %zu acs %zu shapes %zu; fast %zu %zu %zu %zu",
                                a->stats.jobs_considered, a->stats.spins, a->stats.autoclusters, a->stats.slot_shapes,
                                b->stats.jobs_considered, b->stats.spins, b->stats.autoclusters, b->stats.slot_shapes),
                       false;
        for (size_t g = 0; g < a->n_groups; g++)
                if (a->group_in_use[g] != b->group_in_use[g])
                        return snprintf(why, size, "group %zu in use %g, fast %g", g, a->group_in_use[g],
                                        b->group_in_use[g]),
                               false;
        return true;
}

/* n random pools: the fast path's cycle is the plain one. */
static void random_pools(uint64_t first, size_t n, bool busy) {
        size_t failed = 0, matches = 0, rejections = 0, preemptions = 0, by_rank = 0, pslot_matches = 0, evals[2] = { 0 };

        for (uint64_t seed = first; seed < first + n; seed++) {
                NegoTest t;
                NegoResult plain, fast;
                char why[768];
                int r;

                /* The fast path first: what it writes into the ads (the
                 * ephemeral attributes it finds read) must be enough. */
                random_pool(&t, seed * 7919, busy);
                r = nt_cycle(&t, false);
                GLEAN_TEST_CHECK_FATAL(r == 0, "pool %" PRIu64 ": fast %d", seed, r);
                fast = t.res;
                t.res = (NegoResult){};
                r = nt_cycle(&t, true);
                GLEAN_TEST_CHECK_FATAL(r == 0, "pool %" PRIu64 ": plain %d", seed, r);
                plain = t.res;
                t.res = fast;
                if (!same_result(&plain, &t.res, why, sizeof(why))) {
                        GLEAN_TEST_CHECK(false, "pool %" PRIu64 ": %s", seed, why);
                        failed++;
                }
                matches += plain.n_matches;
                rejections += plain.n_rejections;
                for (size_t i = 0; i < plain.n_matches; i++) {
                        preemptions += plain.matches[i].reason != NEGO_NO_PREEMPTION;
                        by_rank += plain.matches[i].reason == NEGO_RANK;
                        pslot_matches += plain.matches[i].partitionable;
                }
                evals[0] += plain.stats.evaluations;
                evals[1] += t.res.stats.evaluations;
                nego_result_clear(&plain);
                nt_done(&t);
                if (failed >= 5)
                        break;
        }
        printf("\n    %zu pools: %zu matches (%zu preempting, %zu by Rank, %zu of p-slots), %zu rejections; "
               "Requirements evaluated %zu times plain, %zu fast\n",
               n, matches, preemptions, by_rank, pslot_matches, rejections, evals[0], evals[1]);
        /* The workload must exercise what it claims to. */
        CU_ASSERT(preemptions > 100 && by_rank > 20 && rejections > 1000);
        if (!busy)
                CU_ASSERT(pslot_matches > 100);
}

/* Hundreds of pools of every kind of slot. */
static void test_random_pools(void) {
        random_pools(1, N_POOLS, false);
}

/* Pools where most slots run jobs and the rank knobs tie. */
static void test_busy_pools(void) {
        random_pools(100001, N_POOLS / 2, true);
}

static CU_TestInfo tests[] = {
        { "random_pools", test_random_pools },
        { "busy_pools", test_busy_pools },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "fastpath", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

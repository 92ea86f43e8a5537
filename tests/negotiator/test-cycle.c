/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cycle.c — one negotiation cycle (seed 000, 3.4.2 to 3.4.6; seed
 * 001; seed 003): the order of submitters and jobs, candidates and their
 * reasons, the ranking, preemption and its policy, the pie and its
 * repartition, quota groups, partitionable slots, ephemeral attributes
 * and the rejection reasons.
 */
#include <time.h>

#include "nego-test.h"

/* 3.4.5: the best EUP first: the one slot goes to bob (EUP 2), not alice (10). */
static void test_submitter_order(void) {
        NegoTest t;
        size_t alice, bob;

        nt_init(&t, NULL);
        nt_slots(&t, 1, NULL);
        alice = nt_sub(&t, "alice@pool", 10);
        bob = nt_sub(&t, "bob@pool", 2);
        nt_jobs(&t, alice, 1, 1, NULL);
        nt_jobs(&t, bob, 1, 2, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        CU_ASSERT(nt_count(&t, bob) == 1 && nt_count(&t, alice) == 0);
        GLEAN_TEST_CHECK(strstr(nt_why(&t, alice, 0), "share") || strstr(nt_why(&t, alice, 0), "slot"),
                         "alice: %s", nt_why(&t, alice, 0));
        nt_done(&t);
}

/* Seed 001 and 3.4.5: JobPrio (higher first), QDate (older), cluster, proc;
 * an unmatchable high-priority job does not block the next. */
static void test_job_order(void) {
        NegoTest t;
        size_t a;

        nt_init(&t, NULL);
        nt_slots(&t, 2, NULL);
        a = nt_sub(&t, "alice@pool", 0);
        nt_jobs(&t, a, 1, 1, "JobPrio = 5");                                   /* job 0 */
        nt_jobs(&t, a, 1, 2, "JobPrio = 10; Requirements = Memory > 100000"); /* job 1: no slot */
        nt_jobs(&t, a, 1, 3, "JobPrio = 5; QDate = 10");                       /* job 2: older than job 0 */
        nt_jobs(&t, a, 1, 4, "JobPrio = 1");                                   /* job 3 */
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(nt_match(&t, a, 2) && nt_match(&t, a, 0) && !nt_match(&t, a, 3) && !nt_match(&t, a, 1),
                         "matched: job2 %p job0 %p job3 %p", (void *) nt_match(&t, a, 2), (void *) nt_match(&t, a, 0),
                         (void *) nt_match(&t, a, 3));
        GLEAN_TEST_CHECK(strstr(nt_why(&t, a, 1), "no slot satisfies the job's Requirements (2 slots: "
                                                  "Memory > 100000 false on 2)"),
                         "job 1: %s", nt_why(&t, a, 1));
        nt_done(&t);
}

/* 3.4.5: after a job of a cluster fails, the rest of the cluster is
 * skipped — unless NEGOTIATE_ALL_JOBS_IN_CLUSTER; other clusters go on. */
static void test_cluster_skipping(void) {
        for (int all = 0; all < 2; all++) {
                NegoTest t;
                size_t a;

                nt_init(&t, all ? "NEGOTIATE_ALL_JOBS_IN_CLUSTER = True" : NULL);
                nt_slots(&t, 4, NULL);
                a = nt_sub(&t, "alice@pool", 0);
                nt_jobs(&t, a, 3, 7, "Requirements = MY.ProcId > 0"); /* 7.0 fails, 7.1 and 7.2 would match */
                nt_jobs(&t, a, 1, 8, NULL);
                CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
                GLEAN_TEST_CHECK(nt_count(&t, a) == (all ? 3u : 1u) && nt_match(&t, a, 3), "all=%d: %zu matches", all,
                                 nt_count(&t, a));
                if (!all)
                        GLEAN_TEST_CHECK(strcmp(nt_why(&t, a, 1), nt_why(&t, a, 0)) == 0 && strstr(nt_why(&t, a, 1), "MY.ProcId > 0"),
                                         "the skipped job says why its cluster stopped: %s", nt_why(&t, a, 1));
                nt_done(&t);
        }
}

/* Claimed/Idle slots are skipped; an idle slot is No Preemption; a running
 * one is Rank when its RANK prefers the job; Priority needs
 * PREEMPTION_REQUIREMENTS (False by default). */
static void test_reasons(void) {
        NegoTest t;
        size_t bob;

        nt_init(&t, NULL);
        nt_slots(&t, 3, "Rank = (TARGET.Owner == \"bob@pool\") * 10");
        classad_set_string(t.slots[0], "State", "Claimed"); /* Claimed/Idle */
        classad_set_string(t.slots[0], "Activity", "Idle");
        nt_running(&t, 1, "alice@pool", 0);
        nt_sub(&t, "alice@pool", 50);
        bob = nt_sub(&t, "bob@pool", 1);
        nt_jobs(&t, bob, 3, 1, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        CU_ASSERT(nt_count(&t, bob) == 2);
        for (size_t j = 0; j < 3; j++) {
                const NegoMatch *m = nt_match(&t, bob, j);
                if (m)
                        GLEAN_TEST_CHECK((m->slot == 2 && m->reason == NEGO_NO_PREEMPTION) ||
                                                 (m->slot == 1 && m->reason == NEGO_RANK && m->preempted_user &&
                                                  strcmp(m->preempted_user, "alice@pool") == 0),
                                         "job %zu: slot %zu reason %s", j, m->slot, nego_reason_name(m->reason));
        }
        /* The idle slot first (NEGOTIATOR_PRE_JOB_RANK prefers unclaimed ones). */
        CU_ASSERT(nt_match(&t, bob, 0) && nt_match(&t, bob, 0)->slot == 2);
        nt_done(&t);
}

/* A running job of an accounting group is charged to the group's name:
 * the slot's AccountingGroup (what the agent publishes for such a claim)
 * is the preempted submitter, not its RemoteUser; that submitter's EUP
 * (group_a.bob's factor 100 here) is what PREEMPTION_REQUIREMENTS weighs. */
static void test_preempted_accounting_group(void) {
        NegoTest t;
        size_t alice;

        nt_init(&t, "GROUP_NAMES = group_a\nPREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2");
        nt_slots(&t, 1, NULL);
        classad_set_string(t.slots[0], "State", "Claimed");
        classad_set_string(t.slots[0], "Activity", "Busy");
        classad_set_string(t.slots[0], "RemoteUser", "bob@pool");
        classad_set_string(t.slots[0], "AccountingGroup", "group_a.bob@pool");
        classad_set_real(t.slots[0], "CurrentRank", 0);
        CU_ASSERT(acct_claim_begin(t.acct, "claim0", "group_a.bob@pool", 1, NT_T0) == 0);
        CU_ASSERT(acct_ensure(t.acct, "bob@pool", NT_T0) >= 0);
        CU_ASSERT(acct_set_factor(t.acct, "group_a.bob@pool", 100, NT_T0) == 0);
        alice = nt_sub(&t, "alice@pool", 1);
        nt_jobs(&t, alice, 1, 1, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        const NegoMatch *m = nt_match(&t, alice, 0);
        GLEAN_TEST_CHECK(m && m->reason == NEGO_PRIORITY && m->preempted_user &&
                                 strcmp(m->preempted_user, "group_a.bob@pool") == 0,
                         "match %s, preempted %s", m ? nego_reason_name(m->reason) : "none",
                         m && m->preempted_user ? m->preempted_user : "-");
        nt_done(&t);
}

/* Priority preemption: the seed's "20% better priority" policy lets bob
 * (EUP 1) preempt alice (EUP 50); without it, the default False refuses;
 * a slot whose RANK is worse for the new job is never preempted by
 * priority; NEGOTIATOR_CONSIDER_PREEMPTION = False leaves running slots
 * out; RetirementTimeRemaining protects unless early preemption. */
static void test_priority_preemption(void) {
        static const struct {
                const char *config, *slot_extra;
                double current_rank;
                bool retiring;
                bool want;
                const char *why;
        } rows[] = {
                { "PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2", NULL, 0, false, true, NULL },
                { NULL, NULL, 0, false, false, "PREEMPTION_REQUIREMENTS false on the 1 running slot that match" },
                { "PREEMPTION_REQUIREMENTS = True", NULL, 5, false, false, "preferring their job by RANK" },
                { "PREEMPTION_REQUIREMENTS = True", NULL, 0, true, false, "1 in their retirement" },
                { "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_CONSIDER_EARLY_PREEMPTION = True", NULL, 0, true, true,
                  NULL },
                { "PREEMPTION_REQUIREMENTS = True\nNEGOTIATOR_CONSIDER_PREEMPTION = False", NULL, 0, false, false,
                  "no slot to match" },
                /* The ephemeral attributes of 3.4.3 are there for the policy. */
                { "PREEMPTION_REQUIREMENTS = RemoteUserResourcesInUse == 1 && SubmitterUserResourcesInUse == 0 && "
                  "RemoteGroup == \"<none>\" && SubmitterGroup == \"<none>\" && Slot1_RemoteUserPrio == RemoteUserPrio",
                  NULL, 0, false, true, NULL },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                NegoTest t;
                size_t bob;

                nt_init(&t, rows[i].config);
                nt_slots(&t, 1, rows[i].slot_extra);
                nt_running(&t, 0, "alice@pool", rows[i].current_rank);
                if (rows[i].retiring)
                        classad_set_int(t.slots[0], "RetirementTimeRemaining", 600);
                nt_sub(&t, "alice@pool", 50);
                bob = nt_sub(&t, "bob@pool", 1);
                nt_jobs(&t, bob, 1, 1, NULL);
                CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
                const NegoMatch *m = nt_match(&t, bob, 0);
                GLEAN_TEST_CHECK(rows[i].want ? m && m->reason == NEGO_PRIORITY : !m, "row %zu: match %s", i,
                                 m ? nego_reason_name(m->reason) : "none");
                if (rows[i].why)
                        GLEAN_TEST_CHECK(strstr(nt_why(&t, bob, 0), rows[i].why), "row %zu: '%s', want '%s'", i,
                                         nt_why(&t, bob, 0), rows[i].why);
                nt_done(&t);
        }
}

/* `use POLICY : PREEMPT_BY_PRIORITY`, the seed's "20% better priority"
 * (3.4.6) after an hour in the slot; a nice user's job by anyone's. */
static void test_preempt_by_priority_template(void) {
        static const struct {
                const char *running;
                double running_prio, bob_prio, minutes;
                bool want;
        } rows[] = {
                { "alice@pool", 50, 1, 120, true },     /* far better, for two hours */
                { "alice@pool", 1.15, 1, 120, false },  /* 15% better is not enough */
                { "alice@pool", 1.25, 1, 120, true },   /* 25% is */
                { "alice@pool", 50, 1, 10, false },     /* ten minutes in the slot */
                { "nice-user.alice@pool", 0, 1, 1, true }, /* a nice job, whenever */
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                NegoTest t;
                size_t bob;

                nt_init(&t, "use POLICY : PREEMPT_BY_PRIORITY");
                nt_slots(&t, 1, NULL);
                nt_running(&t, 0, rows[i].running, 0);
                classad_set_int(t.slots[0], "EnteredCurrentState", (int64_t) time(NULL) - (int64_t) (rows[i].minutes * 60));
                nt_sub(&t, rows[i].running, rows[i].running_prio);
                bob = nt_sub(&t, "bob@pool", rows[i].bob_prio);
                nt_jobs(&t, bob, 1, 1, NULL);
                CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
                const NegoMatch *m = nt_match(&t, bob, 0);
                GLEAN_TEST_CHECK(rows[i].want ? m && m->reason == NEGO_PRIORITY : !m, "row %zu: %s", i,
                                 m ? nego_reason_name(m->reason) : nt_why(&t, bob, 0));
                nt_done(&t);
        }
}

/* Candidates sorted by NEGOTIATOR_PRE_JOB_RANK, the job's Rank,
 * NEGOTIATOR_POST_JOB_RANK: HTCondor's default PRE_JOB_RANK packs jobs
 * into the smallest slot (- Memory) whatever the job's Rank; without it
 * the job's Rank on Memory picks the big slot; then POST_JOB_RANK. */
static void test_ranking(void) {
        static const struct {
                const char *config, *job;
                size_t want;
        } rows[] = {
                { NULL, "Rank = Memory", 0 },
                { "NEGOTIATOR_PRE_JOB_RANK = 0", "Rank = Memory", 1 },
                { "NEGOTIATOR_PRE_JOB_RANK = 0", "Rank = -Memory", 0 },
                { "NEGOTIATOR_PRE_JOB_RANK = 0\nNEGOTIATOR_POST_JOB_RANK = Memory == 2048", "Rank = 0", 2 },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                NegoTest t;
                size_t a;

                nt_init(&t, rows[i].config);
                nt_slots(&t, 1, "Memory = 512");
                nt_slots(&t, 1, "Memory = 8192");
                nt_slots(&t, 1, "Memory = 2048");
                a = nt_sub(&t, "alice@pool", 0);
                nt_jobs(&t, a, 1, 1, rows[i].job);
                CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
                GLEAN_TEST_CHECK(nt_match(&t, a, 0) && nt_match(&t, a, 0)->slot == rows[i].want, "row %zu: slot %zu",
                                 i, nt_match(&t, a, 0) ? nt_match(&t, a, 0)->slot : 99);
                nt_done(&t);
        }
}

/* 3.4.2: EUP 5, 10 and 20 sharing 70 slots get 40, 20 and 10. */
static void test_pie_ratio(void) {
        NegoTest t;
        size_t a, b, c;

        nt_init(&t, NULL);
        nt_slots(&t, 70, NULL);
        a = nt_sub(&t, "a@pool", 5);
        b = nt_sub(&t, "b@pool", 10);
        c = nt_sub(&t, "c@pool", 20);
        nt_jobs(&t, a, 100, 1, NULL);
        nt_jobs(&t, b, 100, 2, NULL);
        nt_jobs(&t, c, 100, 3, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(nt_count(&t, a) == 40 && nt_count(&t, b) == 20 && nt_count(&t, c) == 10, "got %zu %zu %zu",
                         nt_count(&t, a), nt_count(&t, b), nt_count(&t, c));
        GLEAN_TEST_CHECK(strstr(nt_why(&t, a, 99), "share") || strstr(nt_why(&t, a, 99), "no slot left"), "a's last: %s",
                         nt_why(&t, a, 99));
        nt_done(&t);
}

/* 3.4.2: what A cannot use is repartitioned among the others by the
 * inverse ratio rule: A (EUP 5) matches only 4 slots; B (10) and C (20)
 * share the other 66 as 2:1. */
static void test_pie_repartition(void) {
        NegoTest t;
        size_t a, b, c;

        nt_init(&t, NULL);
        nt_slots(&t, 4, "Kind = \"a\"");
        nt_slots(&t, 66, "Kind = \"any\"");
        a = nt_sub(&t, "a@pool", 5);
        b = nt_sub(&t, "b@pool", 10);
        c = nt_sub(&t, "c@pool", 20);
        nt_jobs(&t, a, 100, 1, "Requirements = TARGET.Kind == \"a\"");
        nt_jobs(&t, b, 100, 2, "Requirements = TARGET.Kind == \"any\"");
        nt_jobs(&t, c, 100, 3, "Requirements = TARGET.Kind == \"any\"");
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(nt_count(&t, a) == 4 && nt_count(&t, b) == 44 && nt_count(&t, c) == 22, "got %zu %zu %zu",
                         nt_count(&t, a), nt_count(&t, b), nt_count(&t, c));
        nt_done(&t);
}

/* Group quotas (3.4.8): without surplus a group stops at its quota; with
 * GROUP_ACCEPT_SURPLUS it takes what the others leave. */
static void test_group_quotas(void) {
        for (int surplus = 0; surplus < 2; surplus++) {
                NegoTest t;
                size_t x, y;
                char config[256];

                snprintf(config, sizeof(config),
                         "GROUP_NAMES = group_x, group_y\nGROUP_QUOTA_group_x = 3\nGROUP_QUOTA_group_y = 5\n"
                         "GROUP_ACCEPT_SURPLUS = %s\n",
                         surplus ? "True" : "False");
                nt_init(&t, config);
                nt_slots(&t, 10, NULL);
                x = nt_sub(&t, "group_x.alice@pool", 0);
                y = nt_sub(&t, "group_y.bob@pool", 0);
                nt_jobs(&t, x, 20, 1, NULL);
                nt_jobs(&t, y, 2, 2, NULL);
                CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
                /* y wants 2 of its 5; x has 3, and with surplus the 3 y leaves
                 * and the 2 of <none> too. */
                GLEAN_TEST_CHECK(nt_count(&t, y) == 2 && nt_count(&t, x) == (surplus ? 8u : 3u),
                                 "surplus=%d: x %zu y %zu", surplus, nt_count(&t, x), nt_count(&t, y));
                if (!surplus)
                        GLEAN_TEST_CHECK(strstr(nt_why(&t, x, 10), "group quota reached"), "x's job: %s",
                                         nt_why(&t, x, 10));
                nt_done(&t);
        }
}

/* Seed 003, demonstration 1: a 10-core partitionable slot with the
 * default-like consumption policy matches 10 of 15 one-core jobs. */
static const char pslot_policy[] = "PartitionableSlot = true; Cpus = 10; TotalSlotCpus = 10; Memory = 1903; "
                                   "TotalSlotMemory = 1903; Disk = 100000; TotalSlotDisk = 100000; "
                                   "ConsumptionCpus = quantize(target.RequestCpus, {1}); "
                                   "ConsumptionDisk = quantize(target.RequestDisk, {1024}); ";

static void test_seed003(void) {
        NegoTest t;
        size_t a;
        char extra[1024];

        nt_init(&t, NULL);
        snprintf(extra, sizeof(extra), "%sConsumptionMemory = quantize(target.RequestMemory, {128}); SlotWeight = Cpus",
                 pslot_policy);
        nt_slots(&t, 1, extra);
        a = nt_sub(&t, "u@pool", 0);
        nt_jobs(&t, a, 15, 1, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(nt_count(&t, a) == 10, "demo 1: %zu matches", nt_count(&t, a));
        for (size_t i = 0; i < t.res.n_matches; i++)
                GLEAN_TEST_CHECK(t.res.matches[i].slot == 0 && t.res.matches[i].cost == 1 &&
                                         t.res.matches[i].partitionable && t.res.matches[i].cpus == 1 &&
                                         t.res.matches[i].memory == 128,
                                 "match %zu: slot %zu cost %g cpus %g memory %g", i, t.res.matches[i].slot,
                                 t.res.matches[i].cost, t.res.matches[i].cpus, t.res.matches[i].memory);
        /* The caller's ad is untouched: the cycle consumed from a copy. */
        {
                char *cpus = classad_unparse_attr(t.slots[0], "Cpus");
                CU_ASSERT(cpus && strcmp(cpus, "10") == 0);
                free(cpus);
        }
        nt_done(&t);

        /* Demonstration 2: memory in 512 MB quanta and SlotWeight =
         * floor(Memory / 512): 3 matches, each costing W(S) - W(S') = 1. */
        nt_init(&t, NULL);
        snprintf(extra, sizeof(extra), "%sConsumptionMemory = quantize(target.RequestMemory, {512}); "
                                       "SlotWeight = floor(Memory / 512)",
                 pslot_policy);
        nt_slots(&t, 1, extra);
        a = nt_sub(&t, "u@pool", 0);
        nt_jobs(&t, a, 15, 1, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(nt_count(&t, a) == 3, "demo 2: %zu matches", nt_count(&t, a));
        for (size_t i = 0; i < t.res.n_matches; i++)
                GLEAN_TEST_CHECK(t.res.matches[i].cost == 1 && t.res.matches[i].memory == 512, "match %zu: cost %g", i,
                                 t.res.matches[i].cost);
        nt_done(&t);

        /* Demonstration 3: group a with quota 1, no surplus, two jobs: one match. */
        nt_init(&t, "GROUP_NAMES = a\nGROUP_QUOTA_a = 1\nGROUP_ACCEPT_SURPLUS = False\nGROUP_AUTOREGROUP = False");
        snprintf(extra, sizeof(extra), "%sConsumptionMemory = quantize(target.RequestMemory, {128}); SlotWeight = Cpus",
                 pslot_policy);
        nt_slots(&t, 1, extra);
        a = nt_sub(&t, "a.u@pool", 0);
        nt_jobs(&t, a, 2, 1, NULL);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(nt_count(&t, a) == 1 && t.res.matches[0].cost == 1, "demo 3: %zu matches", nt_count(&t, a));
        nt_done(&t);
}

/* Without a consumption policy a partitionable slot is carved as the
 * agent will: the requests quantised by MODIFY_REQUEST_EXPR_*. */
static void test_pslot_modify_request(void) {
        NegoTest t;
        size_t a;

        nt_init(&t, NULL);
        nt_slots(&t, 1, "PartitionableSlot = true; Cpus = 4; TotalSlotCpus = 4; Memory = 4096; TotalSlotMemory = 4096; "
                        "Requirements = START && Cpus >= 1");
        a = nt_sub(&t, "u@pool", 0);
        nt_jobs(&t, a, 6, 1, "RequestMemory = 1000");
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        /* Memory quantum TotalSlotMemory / TotalSlotCpus / 4 = 256: 1000 -> 1024; 4 cores, 4 jobs. */
        GLEAN_TEST_CHECK(nt_count(&t, a) == 4, "%zu matches", nt_count(&t, a));
        if (t.res.n_matches)
                GLEAN_TEST_CHECK(t.res.matches[0].memory == 1024 && t.res.matches[0].cpus == 1, "carved %g MB %g cpus",
                                 t.res.matches[0].memory, t.res.matches[0].cpus);
        GLEAN_TEST_CHECK(strstr(nt_why(&t, a, 5), "were taken this cycle by jobs matched before it") ||
                                 strstr(nt_why(&t, a, 5), "no slot satisfies"),
                         "job 5: %s", nt_why(&t, a, 5));
        nt_done(&t);
}

/* The rejection reasons, in words. */
static void test_rejections(void) {
        NegoTest t;
        size_t a;

        nt_init(&t, NULL);
        nt_slots(&t, 4, "Memory = 1024");
        nt_slots(&t, 2, "Memory = 4096; Arch = \"aarch64\"");
        nt_slots(&t, 3, "Memory = 8192; Start = false");
        a = nt_sub(&t, "u@pool", 0);
        nt_jobs(&t, a, 1, 1, "Requirements = Memory >= 2048 && Arch == \"X86_64\"");
        nt_jobs(&t, a, 1, 2, "Requirements = Memory >= 100000 && Arch == \"X86_64\"");
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        GLEAN_TEST_CHECK(strcmp(nt_why(&t, a, 0), "the slots that match refuse the job (START false on 3)") == 0,
                         "job 0: %s", nt_why(&t, a, 0));
        GLEAN_TEST_CHECK(strcmp(nt_why(&t, a, 1), "no slot satisfies the job's Requirements (9 slots: Memory >= 100000 "
                                                  "false on 9; Arch == \"X86_64\" false on 2)") == 0,
                         "job 1: %s", nt_why(&t, a, 1));
        nt_done(&t);
}

static CU_TestInfo tests[] = {
        { "submitter_order", test_submitter_order },
        { "job_order", test_job_order },
        { "cluster_skipping", test_cluster_skipping },
        { "reasons", test_reasons },
        { "a running accounting group job is charged to the group's name", test_preempted_accounting_group },
        { "priority_preemption", test_priority_preemption },
        { "preempt_by_priority_template", test_preempt_by_priority_template },
        { "ranking", test_ranking },
        { "pie_ratio", test_pie_ratio },
        { "pie_repartition", test_pie_repartition },
        { "group_quotas", test_group_quotas },
        { "seed003", test_seed003 },
        { "pslot_modify_request", test_pslot_modify_request },
        { "rejections", test_rejections },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cycle", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

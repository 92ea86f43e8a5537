/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-load.c — the per-slot load average and keyboard/console idle times
 * (seed 002, 3.5.10.2 to 3.5.10.4): the two log examples of 3.5.10.4
 * reproduced line for line, the hand-out order (Owner, Unclaimed, the
 * rest), owner load beyond the number of slots, multi-core, partitionable
 * and dynamic slots, and which slots the keyboard and console reach.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "slots-test.h"

/* The manual's log lines for n slots (D_LOAD and D_FULLDEBUG), one per line. */
static void log_lines(double total, const AgentLoadSlot *s, size_t n, double owner, const AgentIdleKnobs *k,
                      int64_t kbd, int64_t console, int64_t since_start, char *buf, size_t size) {
        double condor = 0;
        size_t len = 0;

        for (size_t i = 0; i < n; i++)
                condor += s[i].condor_load;
        len += (size_t) snprintf(buf + len, size - len, "SystemLoad: %.3f   TotalCondorLoad: %.3f  TotalOwnerLoad: %.3f\n",
                                 total, condor, owner);
        for (size_t i = 0; i < n && len < size; i++) {
                int64_t ki, ci;

                agent_slot_idle(k, (unsigned) i + 1, kbd, console, since_start, &ki, &ci);
                len += (size_t) snprintf(buf + len, size - len, "slot%zu: Idle time: Keyboard: %-8lld Console: %lld\n",
                                         i + 1, (long long) ki, (long long) ci);
                len += (size_t) snprintf(buf + len, size - len,
                                         "slot%zu: SystemLoad: %.3f  CondorLoad: %.3f  OwnerLoad: %.3f\n", i + 1,
                                         s[i].load, s[i].condor_load, s[i].owner_load);
        }
}

/* "on a 2-core machine with no HTCondor activity, and the keyboard connected to both slots" */
static void test_manual_log_1(void) {
        static const char want[] =
                "SystemLoad: 0.340   TotalCondorLoad: 0.000  TotalOwnerLoad: 0.340\n"
                "slot1: Idle time: Keyboard: 0        Console: 4\n"
                "slot1: SystemLoad: 0.340  CondorLoad: 0.000  OwnerLoad: 0.340\n"
                "slot2: Idle time: Keyboard: 0        Console: 4\n"
                "slot2: SystemLoad: 0.000  CondorLoad: 0.000  OwnerLoad: 0.000\n";
        Config *cfg = slots_test_config("SLOTS_CONNECTED_TO_KEYBOARD = 2\nSLOTS_CONNECTED_TO_CONSOLE = 2");
        AgentLoadSlot s[2] = {
                { .state = AGENT_STATE_OWNER, .cpus = 1, .condor_load = 0, .parent = -1 },
                { .state = AGENT_STATE_OWNER, .cpus = 1, .condor_load = 0, .parent = -1 },
        };
        AgentIdleKnobs k;
        ConfigError err = {};
        char got[1024];
        double owner;

        GLEAN_TEST_CHECK_FATAL(agent_idle_knobs(cfg, &k, &err) == 0, "knobs: %s", err.msg);
        owner = agent_load_distribute(0.34, s, 2);
        log_lines(0.34, s, 2, owner, &k, 0, 4, 300, got, sizeof(got));
        GLEAN_TEST_CHECK(strcmp(got, want) == 0, "got\n%s\nwant\n%s", got, want);
        config_free(cfg);
}

/* "only one slot connected to the keyboard and console, and the other slot was running a job" */
static void test_manual_log_2(void) {
        static const char want[] =
                "SystemLoad: 1.250   TotalCondorLoad: 0.996  TotalOwnerLoad: 0.254\n"
                "slot1: Idle time: Keyboard: 0        Console: 0\n"
                "slot1: SystemLoad: 0.254  CondorLoad: 0.000  OwnerLoad: 0.254\n"
                "slot2: Idle time: Keyboard: 1496     Console: 1496\n"
                "slot2: SystemLoad: 0.996  CondorLoad: 0.996  OwnerLoad: 0.000\n";
        Config *cfg = slots_test_config("SLOTS_CONNECTED_TO_KEYBOARD = 1\nSLOTS_CONNECTED_TO_CONSOLE = 1");
        AgentLoadSlot s[2] = {
                { .state = AGENT_STATE_OWNER, .cpus = 1, .condor_load = 0, .parent = -1 },
                { .state = AGENT_STATE_CLAIMED, .cpus = 1, .condor_load = 0.996, .parent = -1 },
        };
        AgentIdleKnobs k;
        ConfigError err = {};
        char got[1024];
        double owner;

        GLEAN_TEST_CHECK_FATAL(agent_idle_knobs(cfg, &k, &err) == 0, "knobs: %s", err.msg);
        GLEAN_TEST_CHECK(k.boost == 1200, "DISCONNECTED_KEYBOARD_IDLE_BOOST %lld", (long long) k.boost);
        owner = agent_load_distribute(1.25, s, 2);
        /* the agent started 296 s ago: 296 + 1200 = 1496 */
        log_lines(1.25, s, 2, owner, &k, 0, 0, 296, got, sizeof(got));
        GLEAN_TEST_CHECK(strcmp(got, want) == 0, "got\n%s\nwant\n%s", got, want);
        config_free(cfg);
}

/* ---- the distribution ---- */

#define MAXS 6
typedef struct LoadCase {
        const char *what;
        double total;
        size_t n;
        AgentLoadSlot in[MAXS];
        double owner[MAXS]; /* owner share of each slot */
} LoadCase;

#define SLOT(st, c, cl) { .state = AGENT_STATE_##st, .cpus = (c), .condor_load = (cl), .parent = -1 }
#define PSLOT(st, c) { .state = AGENT_STATE_##st, .cpus = (c), .parent = -1, .partitionable = true }
#define DSLOT(st, c, cl, p) { .state = AGENT_STATE_##st, .cpus = (c), .condor_load = (cl), .parent = (p) }

static const LoadCase load_cases[] = {
        { "no load", 0, 2, { SLOT(OWNER, 1, 0), SLOT(OWNER, 1, 0) }, { 0, 0 } },
        { "Owner first, then Unclaimed, then the rest", 2.5, 4,
          { SLOT(CLAIMED, 1, 0), SLOT(UNCLAIMED, 1, 0), SLOT(MATCHED, 1, 0), SLOT(OWNER, 1, 0) },
          { 0.5, 1, 0, 1 } },
        { "the rest in slot order", 1.5, 3, { SLOT(PREEMPTING, 1, 0), SLOT(CLAIMED, 1, 0), SLOT(DRAINED, 1, 0) },
          { 1, 0.5, 0 } },
        { "owner load beyond the number of slots goes round again", 5, 2,
          { SLOT(CLAIMED, 1, 0), SLOT(CLAIMED, 1, 0) }, { 3, 2 } },
        { "round again in the same order", 3.5, 2, { SLOT(CLAIMED, 1, 0), SLOT(OWNER, 1, 0) }, { 1.5, 2 } },
        { "a slot takes up to its CPUs", 5, 2, { SLOT(OWNER, 4, 0), SLOT(OWNER, 1, 0) }, { 4, 1 } },
        { "HTCondor's load is not the owner's", 3, 3,
          { SLOT(CLAIMED, 1, 1.0), SLOT(CLAIMED, 1, 0.5), SLOT(UNCLAIMED, 1, 0) }, { 0.5, 0, 1 } },
        { "more HTCondor load than the machine's: no owner load", 1.0, 2,
          { SLOT(CLAIMED, 1, 0.8), SLOT(CLAIMED, 1, 0.7) }, { 0, 0 } },
        /* p-slot slot1 with 2 idle CPUs, d-slots slot1_1 (1 CPU) and slot1_2 (2 CPUs) */
        { "a p-slot keeps what fits its idle CPUs", 1.5, 3,
          { PSLOT(UNCLAIMED, 2), DSLOT(CLAIMED, 1, 0, 0), DSLOT(CLAIMED, 2, 0, 0) }, { 1.5, 0, 0 } },
        { "the excess goes to its d-slots in order", 3.5, 3,
          { PSLOT(UNCLAIMED, 2), DSLOT(CLAIMED, 1, 0, 0), DSLOT(CLAIMED, 2, 0, 0) }, { 2, 1, 0.5 } },
        { "no crumbs under 0.05 for a d-slot", 3.03, 3,
          { PSLOT(UNCLAIMED, 2), DSLOT(CLAIMED, 1, 0, 0), DSLOT(CLAIMED, 2, 0, 0) }, { 2.03, 1, 0 } },
        { "a family takes its CPUs' worth in a round", 6, 4,
          { SLOT(CLAIMED, 1, 0), PSLOT(UNCLAIMED, 1), DSLOT(CLAIMED, 1, 0, 1), SLOT(OWNER, 1, 0) },
          { 1, 2, 1, 2 } },
        { "d-slots of a p-slot with no idle CPU", 1.2, 3,
          { PSLOT(UNCLAIMED, 0), DSLOT(CLAIMED, 1, 0.5, 0), DSLOT(CLAIMED, 1, 0.3, 0) }, { 0, 0.4, 0 } },
        { "a slot with no CPU takes nothing", 1, 2, { SLOT(OWNER, 0, 0), SLOT(CLAIMED, 1, 0) }, { 0, 1 } },
        { "no slot with a CPU: the first takes it all", 1, 1, { SLOT(OWNER, 0, 0) }, { 1 } },
};

static void test_distribution(void) {
        for (size_t i = 0; i < sizeof(load_cases) / sizeof(load_cases[0]); i++) {
                const LoadCase *c = &load_cases[i];
                AgentLoadSlot s[MAXS];
                double owner, sum = 0, condor = 0;

                memcpy(s, c->in, sizeof(s));
                owner = agent_load_distribute(c->total, s, c->n);
                for (size_t k = 0; k < c->n; k++) {
                        GLEAN_TEST_CHECK(fabs(s[k].owner_load - c->owner[k]) < 1e-9,
                                         "%s: slot %zu owner load %.6f, want %.6f", c->what, k, s[k].owner_load,
                                         c->owner[k]);
                        GLEAN_TEST_CHECK(fabs(s[k].load - (s[k].owner_load + s[k].condor_load)) < 1e-12,
                                         "%s: slot %zu LoadAvg = owner + condor", c->what, k);
                        sum += s[k].owner_load;
                        condor += s[k].condor_load;
                }
                GLEAN_TEST_CHECK(fabs(owner - fmax(0, c->total - condor)) < 1e-9 && fabs(sum - owner) < 1e-9,
                                 "%s: owner load %.6f handed out %.6f", c->what, owner, sum);
        }
}

static void test_no_slots(void) {
        GLEAN_TEST_CHECK(agent_load_distribute(2.0, NULL, 0) == 0, "no slots, nothing handed out");
}

/* ---- keyboard and console ---- */

typedef struct IdleCase {
        const char *conf;
        unsigned id;
        int64_t kbd, console; /* want */
} IdleCase;

static void test_idle(void) {
        /* the machine: keyboard idle 10 s, console idle 40 s; the agent started 100 s ago */
        static const IdleCase cases[] = {
                /* HTCondor's defaults: no slot connected, (now - start) + 1200 */
                { "", 1, 1300, 1300 },
                { "", 2, 1300, 1300 },
                { "SLOTS_CONNECTED_TO_KEYBOARD = 1\nSLOTS_CONNECTED_TO_CONSOLE = 1", 1, 10, 40 },
                { "SLOTS_CONNECTED_TO_KEYBOARD = 1\nSLOTS_CONNECTED_TO_CONSOLE = 1", 2, 1300, 1300 },
                { "SLOTS_CONNECTED_TO_KEYBOARD = 1000000\nSLOTS_CONNECTED_TO_CONSOLE = 1000000", 7, 10, 40 },
                /* a slot that sees the console but not the keyboard: its keyboard is the console */
                { "SLOTS_CONNECTED_TO_KEYBOARD = 1\nSLOTS_CONNECTED_TO_CONSOLE = 2", 2, 40, 40 },
                { "SLOTS_CONNECTED_TO_KEYBOARD = 2\nSLOTS_CONNECTED_TO_CONSOLE = 0", 2, 10, 1300 },
                { "DISCONNECTED_KEYBOARD_IDLE_BOOST = 0", 3, 100, 100 },
                { "DISCONNECTED_KEYBOARD_IDLE_BOOST = $(MINUTE)", 3, 160, 160 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Config *cfg = slots_test_config(cases[i].conf);
                AgentIdleKnobs k;
                ConfigError err = {};
                int64_t kbd = -1, console = -1;

                GLEAN_TEST_CHECK_FATAL(agent_idle_knobs(cfg, &k, &err) == 0, "row %zu: %s", i, err.msg);
                agent_slot_idle(&k, cases[i].id, 10, 40, 100, &kbd, &console);
                GLEAN_TEST_CHECK(kbd == cases[i].kbd && console == cases[i].console,
                                 "row %zu slot%u: keyboard %lld console %lld, want %lld %lld", i, cases[i].id,
                                 (long long) kbd, (long long) console, (long long) cases[i].kbd,
                                 (long long) cases[i].console);
                GLEAN_TEST_CHECK(console >= kbd, "row %zu: ConsoleIdle >= KeyboardIdle", i);
                config_free(cfg);
        }
}

static void test_idle_unknown_console(void) {
        AgentIdleKnobs k = { .connected_keyboard = 1, .connected_console = 2, .boost = 1200 };
        int64_t kbd, console;

        agent_slot_idle(&k, 1, 10, -1, 100, &kbd, &console);
        GLEAN_TEST_CHECK(kbd == 10 && console == -1, "slot1: %lld %lld", (long long) kbd, (long long) console);
        agent_slot_idle(&k, 2, 10, -1, 100, &kbd, &console);
        GLEAN_TEST_CHECK(kbd == 1300 && console == -1, "slot2: %lld %lld", (long long) kbd, (long long) console);
}

static void test_idle_knob_errors(void) {
        static const char *const bad[] = {
                "SLOTS_CONNECTED_TO_KEYBOARD = lots",
                "SLOTS_CONNECTED_TO_CONSOLE = -1",
                "DISCONNECTED_KEYBOARD_IDLE_BOOST = 1.5.5",
        };

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                Config *cfg = slots_test_config(bad[i]);
                AgentIdleKnobs k;
                ConfigError err = {};
                int r = agent_idle_knobs(cfg, &k, &err);

                GLEAN_TEST_CHECK(r == -EINVAL && err.line == 1 && strcmp(err.file, "t.conf") == 0,
                                 "'%s' gave %d at %s:%d (%s)", bad[i], r, err.file, err.line, err.msg);
                config_free(cfg);
        }
}

/* The decayed average: the kernel's one-minute load average reaches
 * 1 - 1/e of a constant load after 60 s; steps add up to one long step. */
static void test_decay(void) {
        CU_ASSERT_DOUBLE_EQUAL(agent_load_decay(0, 1, 60, 60), 1 - exp(-1), 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(agent_load_decay(1, 0, 60, 60), exp(-1), 1e-12);
        double a = 0;
        for (int i = 0; i < 12; i++)
                a = agent_load_decay(a, 2, 5, 60); /* 12 samples of 5 s, as the kernel */
        CU_ASSERT_DOUBLE_EQUAL(a, agent_load_decay(0, 2, 60, 60), 1e-12);
        CU_ASSERT_DOUBLE_EQUAL(agent_load_decay(0.5, 3, 0, 60), 0.5, 0);   /* no time: unchanged */
        CU_ASSERT_DOUBLE_EQUAL(agent_load_decay(0.5, 3, -1, 60), 0.5, 0);
        CU_ASSERT_DOUBLE_EQUAL(agent_load_decay(0.5, 3, 5, 0), 3, 0);      /* no averaging */
        CU_ASSERT_DOUBLE_EQUAL(agent_load_decay(0.5, 1, 1e9, 60), 1, 1e-12); /* long past */
        /* A short constant (tests): a busy slot is near 1 after 5 time constants. */
        a = 0;
        for (int i = 0; i < 10; i++)
                a = agent_load_decay(a, 1, 1, 2);
        CU_ASSERT(a > 0.99 && a < 1);
}

static CU_TestInfo manual_tests[] = {
        { "log1", test_manual_log_1 },
        { "log2", test_manual_log_2 },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo load_tests[] = {
        { "distribution", test_distribution },
        { "empty", test_no_slots },
        { "decay", test_decay },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo idle_tests[] = {
        { "slots", test_idle },
        { "unknown-console", test_idle_unknown_console },
        { "knob-errors", test_idle_knob_errors },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "manual", NULL, NULL, NULL, NULL, manual_tests },
        { "load", NULL, NULL, NULL, NULL, load_tests },
        { "idle", NULL, NULL, NULL, NULL, idle_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

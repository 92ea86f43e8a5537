/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cpus.c — the CPU sets of ASSIGN_CPU_AFFINITY (agent/slots/cpus.c): the
 * kernel's list format read and written, CPUs taken out of a pool (a run
 * of neighbours first, else the lowest) and given back, slots of a
 * machine that get distinct CPUs, a partitionable slot's dynamic slots
 * carved out of its set and returned, and the agent's own affinity mask.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent/slots.h"
#include "test-util.h"

static AgentCpus set_of(const char *text) {
        AgentCpus s;

        GLEAN_TEST_CHECK_FATAL(agent_cpus_parse(text, &s) == 0, "parse '%s'", text);
        return s;
}

static const char *fmt(const AgentCpus *s, bool ranges) {
        static char buf[4][256];
        static unsigned i;
        char *b = buf[i++ % 4];

        GLEAN_TEST_CHECK(agent_cpus_format(s, ranges, b, 256) == 0, "format");
        return b;
}

/* ---- the list format ---- */

static void test_parse_format(void) {
        static const struct {
                const char *in;
                int r;
                unsigned count;
                const char *ranges, *list;
        } rows[] = {
                { "", 0, 0, "", "" },
                { "0", 0, 1, "0", "0" },
                { "0-3", 0, 4, "0-3", "0,1,2,3" },
                { "0-3,8,10-11", 0, 7, "0-3,8,10-11", "0,1,2,3,8,10,11" },
                { " 5 , 1 - 2 ", 0, 3, "1-2,5", "1,2,5" },
                { "3,2,1,0", 0, 4, "0-3", "0,1,2,3" },
                { "7,7,7", 0, 1, "7", "7" },
                { "4095", 0, 1, "4095", "4095" },
                { "1,3,5", 0, 3, "1,3,5", "1,3,5" },
                { "4096", -EINVAL, 0, NULL, NULL },
                { "3-1", -EINVAL, 0, NULL, NULL },
                { "0,", -EINVAL, 0, NULL, NULL },
                { ",0", -EINVAL, 0, NULL, NULL },
                { "0-", -EINVAL, 0, NULL, NULL },
                { "-1", -EINVAL, 0, NULL, NULL },
                { "a", -EINVAL, 0, NULL, NULL },
                { "1 2", -EINVAL, 0, NULL, NULL },
                { "0x1", -EINVAL, 0, NULL, NULL },
                { "99999999999999999999", -EINVAL, 0, NULL, NULL },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                AgentCpus s = {};
                agent_cpus_add(&s, 42); /* untouched on failure */
                int r = agent_cpus_parse(rows[i].in, &s);
                GLEAN_TEST_CHECK(r == rows[i].r, "'%s': %d, want %d", rows[i].in, r, rows[i].r);
                if (r < 0) {
                        GLEAN_TEST_CHECK(agent_cpus_count(&s) == 1 && agent_cpus_has(&s, 42), "'%s': output changed",
                                         rows[i].in);
                        continue;
                }
                GLEAN_TEST_CHECK(agent_cpus_count(&s) == rows[i].count, "'%s': %u CPUs", rows[i].in,
                                 agent_cpus_count(&s));
                GLEAN_TEST_CHECK(strcmp(fmt(&s, true), rows[i].ranges) == 0, "'%s' as ranges: '%s'", rows[i].in,
                                 fmt(&s, true));
                GLEAN_TEST_CHECK(strcmp(fmt(&s, false), rows[i].list) == 0, "'%s' as a list: '%s'", rows[i].in,
                                 fmt(&s, false));
        }
        GLEAN_TEST_CHECK(agent_cpus_parse(NULL, &(AgentCpus){}) == -EINVAL, "NULL");

        /* Too small a buffer: -ENOBUFS, terminated. */
        AgentCpus s = set_of("0-3,8,10-11");
        char small[6];
        memset(small, 'x', sizeof small);
        GLEAN_TEST_CHECK(agent_cpus_format(&s, true, small, sizeof small) == -ENOBUFS && strcmp(small, "0-3,8") == 0,
                         "truncated '%.6s'", small);
        GLEAN_TEST_CHECK(agent_cpus_format(&s, true, small, 0) == -ENOBUFS, "no room");
}

/* ---- taking and giving back ---- */

static void test_take(void) {
        static const struct {
                const char *pool;
                unsigned n;
                int r;
                const char *got, *left;
        } rows[] = {
                { "0-7", 2, 0, "0-1", "2-7" },
                { "0-7", 0, 0, "", "0-7" },
                { "0-7", 8, 0, "0-7", "" },
                { "0-7", 9, -ENOSPC, NULL, "0-7" },
                { "", 1, -ENOSPC, NULL, "" },
                /* A run of neighbours before the lowest CPUs. */
                { "0,2-3,5", 2, 0, "2-3", "0,5" },
                { "0,2,4-6", 3, 0, "4-6", "0,2" },
                /* No run that long: the lowest. */
                { "0,2,4,6", 2, 0, "0,2", "4,6" },
                { "1,3-4,7", 3, 0, "1,3-4", "7" },
                /* Beyond the first word of the mask. */
                { "60-67", 4, 0, "60-63", "64-67" },
                { "63,64,4000-4001", 3, 0, "63-64,4000", "4001" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                AgentCpus pool = set_of(rows[i].pool), got = set_of("9");
                int r = agent_cpus_take(&pool, rows[i].n, &got);
                GLEAN_TEST_CHECK(r == rows[i].r, "row %zu: %d, want %d", i, r, rows[i].r);
                if (r == 0)
                        GLEAN_TEST_CHECK(strcmp(fmt(&got, true), rows[i].got) == 0, "row %zu: took '%s', want '%s'", i,
                                         fmt(&got, true), rows[i].got);
                else
                        GLEAN_TEST_CHECK(strcmp(fmt(&got, true), "9") == 0, "row %zu: output changed", i);
                GLEAN_TEST_CHECK(strcmp(fmt(&pool, true), rows[i].left) == 0, "row %zu: left '%s', want '%s'", i,
                                 fmt(&pool, true), rows[i].left);
        }
}

/* Static slots of 1, 2 and 1 CPUs out of the agent's 0-3: distinct,
 * covering it; a fifth CPU is not there. */
static void test_slots_distinct(void) {
        AgentCpus agent = set_of("0-3"), s[3];
        static const unsigned want[] = { 1, 2, 1 };
        static const char *const got[] = { "0", "1-2", "3" };
        for (size_t i = 0; i < 3; i++) {
                GLEAN_TEST_CHECK_FATAL(agent_cpus_take(&agent, want[i], &s[i]) == 0, "slot%zu", i + 1);
                GLEAN_TEST_CHECK(strcmp(fmt(&s[i], true), got[i]) == 0, "slot%zu: '%s'", i + 1, fmt(&s[i], true));
        }
        for (size_t i = 0; i < 3; i++)
                for (size_t j = i + 1; j < 3; j++)
                        for (unsigned c = 0; c < 8; c++)
                                GLEAN_TEST_CHECK(!(agent_cpus_has(&s[i], c) && agent_cpus_has(&s[j], c)),
                                                 "slot%zu and slot%zu share CPU %u", i + 1, j + 1, c);
        AgentCpus extra;
        GLEAN_TEST_CHECK(agent_cpus_take(&agent, 1, &extra) == -ENOSPC, "a CPU beyond the agent's");
}

/* A partitionable slot of 0-5: dynamic slots take from it and give back;
 * a freed CPU is taken again, the largest free run preferred. */
static void test_dynamic(void) {
        AgentCpus agent = set_of("0-7"), pslot, d1, d2, d3, d4;
        GLEAN_TEST_CHECK_FATAL(agent_cpus_take(&agent, 6, &pslot) == 0, "pslot");
        AgentCpus free_ = pslot;
        /* (Taken before the checks: the arguments of a check are evaluated in any order.) */
        GLEAN_TEST_CHECK_FATAL(agent_cpus_take(&free_, 2, &d1) == 0, "d1");
        GLEAN_TEST_CHECK_FATAL(agent_cpus_take(&free_, 1, &d2) == 0, "d2");
        GLEAN_TEST_CHECK_FATAL(agent_cpus_take(&free_, 2, &d3) == 0, "d3");
        GLEAN_TEST_CHECK(strcmp(fmt(&d1, true), "0-1") == 0, "d1 '%s'", fmt(&d1, true));
        GLEAN_TEST_CHECK(strcmp(fmt(&d2, true), "2") == 0, "d2 '%s'", fmt(&d2, true));
        GLEAN_TEST_CHECK(strcmp(fmt(&d3, true), "3-4") == 0, "d3 '%s'", fmt(&d3, true));
        GLEAN_TEST_CHECK(strcmp(fmt(&free_, false), "5") == 0, "left '%s'", fmt(&free_, false));
        GLEAN_TEST_CHECK(agent_cpus_take(&free_, 2, &d4) == -ENOSPC, "more than the p-slot has left");
        /* d1 ends: 0-1 back; a 3-CPU slot cannot have a run: 0, 1, 5. */
        agent_cpus_give(&free_, &d1);
        GLEAN_TEST_CHECK(strcmp(fmt(&free_, true), "0-1,5") == 0, "after d1 '%s'", fmt(&free_, true));
        GLEAN_TEST_CHECK_FATAL(agent_cpus_take(&free_, 3, &d4) == 0, "d4");
        GLEAN_TEST_CHECK(strcmp(fmt(&d4, true), "0-1,5") == 0, "d4 '%s'", fmt(&d4, true));
        /* Everything back: the p-slot's set again, still outside the agent's pool. */
        agent_cpus_give(&free_, &d2);
        agent_cpus_give(&free_, &d3);
        agent_cpus_give(&free_, &d4);
        GLEAN_TEST_CHECK(memcmp(&free_, &pslot, sizeof free_) == 0, "all back: '%s'", fmt(&free_, true));
        GLEAN_TEST_CHECK(strcmp(fmt(&agent, true), "6-7") == 0, "the agent's pool '%s'", fmt(&agent, true));
}

/* The shell: our own affinity mask, as sched_getaffinity says. */
static void test_allowed(void) {
        AgentCpus s;
        cpu_set_t mask;
        GLEAN_TEST_CHECK_FATAL(agent_cpus_allowed(&s) == 0, "agent_cpus_allowed");
        GLEAN_TEST_CHECK_FATAL(sched_getaffinity(0, sizeof mask, &mask) == 0, "sched_getaffinity");
        GLEAN_TEST_CHECK(agent_cpus_count(&s) == (unsigned) CPU_COUNT(&mask) && agent_cpus_count(&s) > 0,
                         "%u CPUs, sched_getaffinity says %d", agent_cpus_count(&s), CPU_COUNT(&mask));
        for (unsigned c = 0; c < CPU_SETSIZE; c++)
                GLEAN_TEST_CHECK(agent_cpus_has(&s, c) == (bool) CPU_ISSET(c, &mask), "CPU %u", c);
        printf("\n    allowed: %s\n", fmt(&s, true));
}

static CU_TestInfo tests[] = {
        { "parse and format", test_parse_format },
        { "take", test_take },
        { "static slots get distinct CPUs", test_slots_distinct },
        { "dynamic slots take and give back", test_dynamic },
        { "the agent's affinity mask", test_allowed },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "cpus", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

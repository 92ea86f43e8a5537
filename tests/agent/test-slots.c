/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-slots.c — the machine and its slots (seed 002, 3.5.10.1): detected
 * values and their overrides (NUM_CPUS, MEMORY, DISK, RESERVED_DISK, custom
 * resources), the NUM_SLOTS even split, every SLOT_TYPE_<N> form of the
 * manual (absolute, fraction, percentage, auto, short and long names, bare
 * shares, custom resources, units), impossible configurations and what
 * they say, and one smoke test of the detection on this machine.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slots-test.h"

/* ---- the machine ---- */

typedef struct MachineCase {
        const char *conf;
        int r;
        int64_t cpus, memory, disk, swap; /* totals */
        const char *custom;               /* "Gpu=16 Actuator=8" */
        const char *msg;                  /* part of the error */
        int line;                         /* of the error, when r < 0 */
} MachineCase;

/* Detected: 4 CPUs, 256 MB, 1345063 KB free (the manual's log), 131064 KB swap. */
static const MachineCase machine_cases[] = {
        { "", 0, 4, 256, 1345063, 131064, "", NULL, 0 },
        { "NUM_CPUS = 10", 0, 10, 256, 1345063, 131064, "", NULL, 0 },
        { "NUM_CPUS = $(DETECTED_CPUS) - 1", 0, 3, 256, 1345063, 131064, "", NULL, 0 },
        { "NUM_CPUS = $(DETECTED_CORES) * 2", 0, 8, 256, 1345063, 131064, "", NULL, 0 },
        { "MEMORY = 2048", 0, 4, 2048, 1345063, 131064, "", NULL, 0 },
        { "MEMORY = $(DETECTED_MEMORY) / 2", 0, 4, 128, 1345063, 131064, "", NULL, 0 },
        /* 3.5.10.4: "Reserving 5120 Kbytes for file system", "Disk space: 1339943" */
        { "RESERVED_DISK = 5", 0, 4, 256, 1339943, 131064, "", NULL, 0 },
        { "DISK = 5000\nRESERVED_DISK = 5", 0, 4, 256, 5000, 131064, "", NULL, 0 },
        { "RESERVED_SWAP = 1", 0, 4, 256, 1345063, 130040, "", NULL, 0 },
        { "RESERVED_DISK = 100000", 0, 4, 256, 0, 131064, "", NULL, 0 },
        { "MACHINE_RESOURCE_NAMES = gpu, actuator\nMACHINE_RESOURCE_gpu = 16\nMACHINE_RESOURCE_actuator = 8",
          0, 4, 256, 1345063, 131064, "Gpu=16 Actuator=8", NULL, 0 },
        { "MACHINE_RESOURCE_GPUs = CUDA0, CUDA1, CUDA2", 0, 4, 256, 1345063, 131064, "GPUs=3", NULL, 0 },
        { "MACHINE_RESOURCE_NAMES = fpga\nMACHINE_RESOURCE_fpga = 2\nMACHINE_RESOURCE_Licenses = 2 * 5",
          0, 4, 256, 1345063, 131064, "Fpga=2 Licenses=10", NULL, 0 },
        { "MACHINE_RESOURCE_tape = 0", 0, 4, 256, 1345063, 131064, "Tape=0", NULL, 0 },
        { "\nNUM_CPUS = abc", -EINVAL, 0, 0, 0, 0, NULL, "NUM_CPUS = 'abc' is not a number", 2 },
        { "NUM_CPUS = 0", -EINVAL, 0, 0, 0, 0, NULL, "NUM_CPUS = 0 is out of range (at least 1 CPU)", 1 },
        { "MEMORY = -5", -EINVAL, 0, 0, 0, 0, NULL, "MEMORY = -5 is out of range (at least 1 MB)", 1 },
        { "MACHINE_RESOURCE_NAMES = gpu", -EINVAL, 0, 0, 0, 0, NULL,
          "MACHINE_RESOURCE_NAMES lists gpu, but MACHINE_RESOURCE_gpu is not defined", 1 },
        { "MACHINE_RESOURCE_NAMES = memory\nMACHINE_RESOURCE_memory = 3", -EINVAL, 0, 0, 0, 0, NULL,
          "'memory' cannot name a machine resource", 1 },
        { "MACHINE_RESOURCE_gpu = -1", -EINVAL, 0, 0, 0, 0, NULL, "MACHINE_RESOURCE_gpu = -1 is negative", 1 },
};

static void check_custom(size_t row, const AgentMachine *m, const char *want) {
        char got[512] = "";
        size_t len = 0;

        for (size_t i = 0; i < m->n_custom; i++)
                len += (size_t) snprintf(got + len, sizeof(got) - len, "%s%s=%g", i ? " " : "", m->custom_name[i],
                                         m->total.custom[i]);
        GLEAN_TEST_CHECK(strcmp(got, want) == 0, "row %zu: custom resources '%s', want '%s'", row, got, want);
        for (size_t i = 0; i < m->n_custom; i++)
                GLEAN_TEST_CHECK(m->detected.custom[i] == m->total.custom[i], "row %zu: Detected%s != Total%s", row,
                                 m->custom_name[i], m->custom_name[i]);
}

static void test_machine_configure(void) {
        for (size_t i = 0; i < sizeof(machine_cases) / sizeof(machine_cases[0]); i++) {
                const MachineCase *c = &machine_cases[i];
                Config *cfg = slots_test_config(c->conf);
                AgentRes d = { .cpus = 4, .memory = 256, .disk = 1345063, .swap = 131064 };
                AgentMachine m = {};
                ConfigError err = {};
                int r;

                r = agent_machine_configure(cfg, &d, "x86_64", "vulture.cs.wisc.edu", &m, &err);
                GLEAN_TEST_CHECK(r == c->r, "row %zu: '%s' gave %d (%s), want %d", i, c->conf, r, err.msg, c->r);
                if (r == 0 && c->r == 0) {
                        GLEAN_TEST_CHECK(m.total.cpus == c->cpus && m.total.memory == c->memory &&
                                         m.total.disk == c->disk && m.total.swap == c->swap,
                                         "row %zu: totals %lld/%lld/%lld/%lld, want %lld/%lld/%lld/%lld", i,
                                         (long long) m.total.cpus, (long long) m.total.memory,
                                         (long long) m.total.disk, (long long) m.total.swap, (long long) c->cpus,
                                         (long long) c->memory, (long long) c->disk, (long long) c->swap);
                        GLEAN_TEST_CHECK(m.detected.cpus == 4 && m.detected.memory == 256 && m.detected.disk == 1345063,
                                         "row %zu: detected values changed", i);
                        GLEAN_TEST_CHECK(strcmp(m.arch, "X86_64") == 0 && strcmp(m.opsys, "LINUX") == 0 &&
                                         strcmp(m.hostname, "vulture.cs.wisc.edu") == 0,
                                         "row %zu: identity %s %s %s", i, m.arch, m.opsys, m.hostname);
                        check_custom(i, &m, c->custom);
                }
                if (r < 0 && c->r < 0) {
                        GLEAN_TEST_CHECK(strstr(err.msg, c->msg) != NULL, "row %zu: message '%s', want '%s'", i,
                                         err.msg, c->msg);
                        GLEAN_TEST_CHECK(strcmp(err.file, "t.conf") == 0 && err.line == c->line,
                                         "row %zu: error at %s:%d, want t.conf:%d", i, err.file, err.line, c->line);
                }
                config_free(cfg);
        }
}

static void test_arch_names(void) {
        static const char *const cases[][2] = {
                { "x86_64", "X86_64" }, { "i686", "INTEL" }, { "i386", "INTEL" }, { "ia64", "IA64" },
                { "ppc", "PPC" },       { "ppc64", "PPC64" }, { "aarch64", "aarch64" }, { "ppc64le", "ppc64le" },
                { "X86_64", "X86_64" }, { "", "Unknown" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
                GLEAN_TEST_CHECK(strcmp(agent_arch_name(cases[i][0]), cases[i][1]) == 0, "'%s' gave '%s', want '%s'",
                                 cases[i][0], agent_arch_name(cases[i][0]), cases[i][1]);
}

static void test_res_arithmetic(void) {
        AgentRes a = { 4, 1024, 1000, 10, { 2, 0.5 } }, b = { 1, 512, 1000, 0, { 2, 0.25 } }, c = a;

        GLEAN_TEST_CHECK(agent_res_fits(&b, &a, 2), "b fits in a");
        agent_res_sub(&c, &b, 2);
        GLEAN_TEST_CHECK(c.cpus == 3 && c.memory == 512 && c.disk == 0 && c.swap == 10 && c.custom[0] == 0 &&
                                 c.custom[1] == 0.25,
                         "a - b");
        GLEAN_TEST_CHECK(!agent_res_fits(&b, &c, 2), "b no longer fits (disk, custom 0)");
        GLEAN_TEST_CHECK(agent_res_fits(&b, &c, 0) == false, "disk alone does not fit");
        agent_res_add(&c, &b, 2);
        GLEAN_TEST_CHECK(memcmp(&c, &a, sizeof(a)) == 0, "a - b + b == a");
        b.custom[0] = 3;
        GLEAN_TEST_CHECK(agent_res_fits(&b, &a, 0) && !agent_res_fits(&b, &a, 1), "custom counted up to n_custom");
}

/* ---- the layout ---- */

typedef struct SlotWant {
        int64_t cpus, memory, disk, swap;
        double c0, c1; /* custom resources 0 and 1 */
        bool partitionable;
        unsigned type;
} SlotWant;

#define MAX_WANT 6
typedef struct LayoutCase {
        const char *conf;
        int64_t cpus, memory, disk, swap; /* detected */
        int r;
        size_t n;             /* slots made */
        SlotWant want[MAX_WANT]; /* the first ones (a row with fewer repeats its last) */
        const char *msg;      /* the whole error message */
        const char *knob;     /* err's line is that of this knob's definition */
} LayoutCase;

/* Machines: the manual's "4 cores and 256 Mbytes", and others. */
static const LayoutCase layout_cases[] = {
        /* NUM_SLOTS: one slot per CPU by default, everything split evenly */
        { "", 4, 256, 1000, 400, 0, 4, { { 1, 64, 250, 100, 0, 0, false, 0 } }, NULL, NULL },
        { "NUM_SLOTS = 2", 4, 256, 1000, 400, 0, 2, { { 2, 128, 500, 200, 0, 0, false, 0 } }, NULL, NULL },
        { "NUM_SLOTS = 3", 4, 256, 999, 400, 0, 3, { { 1, 85, 333, 133, 0, 0, false, 0 } }, NULL, NULL },
        { "NUM_CPUS = 8", 4, 256, 1000, 400, 0, 8, { { 1, 32, 125, 50, 0, 0, false, 0 } }, NULL, NULL },
        /* "in a machine with 128 Mbytes of RAM, all the following definitions result in the same allocation" */
        { "SLOT_TYPE_1 = mem=64\nNUM_SLOTS_TYPE_1 = 2", 4, 128, 1000, 400, 0, 2,
          { { 2, 64, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = mem=1/2\nNUM_SLOTS_TYPE_1 = 2", 4, 128, 1000, 400, 0, 2,
          { { 2, 64, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = mem=50%\nNUM_SLOTS_TYPE_1 = 2", 4, 128, 1000, 400, 0, 2,
          { { 2, 64, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = mem=auto\nNUM_SLOTS_TYPE_1 = 2", 4, 128, 1000, 400, 0, 2,
          { { 2, 64, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        /* 4 cores, 256 MB: types 1-3 are equivalent, as are 4-6 */
        { "SLOT_TYPE_1 = cpus=2, ram=128, swap=25%, disk=1/2\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, 0, 1,
          { { 2, 128, 500, 100, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_2 = cpus=1/2, memory=128, virt=25%, disk=50%\nNUM_SLOTS_TYPE_2 = 1", 4, 256, 1000, 400, 0, 1,
          { { 2, 128, 500, 100, 0, 0, false, 2 } }, NULL, NULL },
        { "SLOT_TYPE_3 = c=1/2, m=50%, v=1/4, disk=1/2\nNUM_SLOTS_TYPE_3 = 1", 4, 256, 1000, 400, 0, 1,
          { { 2, 128, 500, 100, 0, 0, false, 3 } }, NULL, NULL },
        { "SLOT_TYPE_4 = c=25%, m=64, v=1/4, d=25%\nNUM_SLOTS_TYPE_4 = 1", 4, 256, 1000, 400, 0, 1,
          { { 1, 64, 250, 100, 0, 0, false, 4 } }, NULL, NULL },
        { "SLOT_TYPE_5 = 25%\nNUM_SLOTS_TYPE_5 = 1", 4, 256, 1000, 400, 0, 1,
          { { 1, 64, 250, 100, 0, 0, false, 5 } }, NULL, NULL },
        { "SLOT_TYPE_6 = 1/4\nNUM_SLOTS_TYPE_6 = 1", 4, 256, 1000, 400, 0, 1,
          { { 1, 64, 250, 100, 0, 0, false, 6 } }, NULL, NULL },
        /* all six defined, four of each of 4-6 would not fit, but only type 4 is counted */
        { "SLOT_TYPE_1 = cpus=2, ram=128, swap=25%, disk=1/2\nSLOT_TYPE_4 = c=25%, m=64, v=1/4, d=25%\n"
          "SLOT_TYPE_5 = 25%\nNUM_SLOTS_TYPE_4 = 4\nNUM_SLOTS_TYPE_5 = 0",
          4, 256, 1000, 400, 0, 4, { { 1, 64, 250, 100, 0, 0, false, 4 } }, NULL, NULL },
        /* "the disk share is set to auto, number of cores is 1, and everything else is 50%" */
        { "SLOT_TYPE_1 = cpus=1, ram=1/2, swap=50%\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, 0, 1,
          { { 1, 128, 1000, 200, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = cpus=1, disk=auto, 50%\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, 0, 1,
          { { 1, 128, 1000, 200, 0, 0, false, 1 } }, NULL, NULL },
        /* "one slot ... 10% of the memory and the rest ... auto ... evenly divide 90%" */
        { "SLOT_TYPE_1 = mem=10%\nNUM_SLOTS_TYPE_1 = 1\nNUM_SLOTS_TYPE_2 = 3", 4, 1000, 1000, 400, 0, 4,
          { { 1, 100, 250, 100, 0, 0, false, 1 }, { 1, 300, 250, 100, 0, 0, false, 2 } }, NULL, NULL },
        /* the manual's custom resources, a partitionable and two static slots */
        { "MACHINE_RESOURCE_NAMES = gpu, actuator\nMACHINE_RESOURCE_gpu = 16\nMACHINE_RESOURCE_actuator = 8\n"
          "SLOT_TYPE_1 = gpu=50%,actuator=6,50%\nSLOT_TYPE_1_PARTITIONABLE = TRUE\nNUM_SLOTS_TYPE_1 = 1\n"
          "SLOT_TYPE_2 = gpu=25%,actuator=1,25%\nSLOT_TYPE_2_PARTITIONABLE = FALSE\nNUM_SLOTS_TYPE_2 = 2",
          4, 1024, 1000, 400, 0, 3,
          { { 2, 512, 500, 200, 8, 6, true, 1 }, { 1, 256, 250, 100, 4, 1, false, 2 } }, NULL, NULL },
        /* auto shares of a custom resource: whole, the first slots get the excess */
        { "MACHINE_RESOURCE_gpu = 5\nNUM_SLOTS = 2", 4, 256, 1000, 400, 0, 2,
          { { 2, 128, 500, 200, 3, 0, false, 0 }, { 2, 128, 500, 200, 2, 0, false, 0 } }, NULL, NULL },
        { "MACHINE_RESOURCE_gpu = 1\nNUM_SLOTS = 3", 3, 300, 900, 300, 0, 3,
          { { 1, 100, 300, 100, 1, 0, false, 0 }, { 1, 100, 300, 100, 0, 0, false, 0 } }, NULL, NULL },
        { "MACHINE_RESOURCE_gpu = 4\nSLOT_TYPE_1 = gpu=0\nNUM_SLOTS_TYPE_1 = 1\nNUM_SLOTS_TYPE_2 = 1",
          4, 256, 1000, 400, 0, 2,
          { { 2, 128, 500, 200, 0, 0, false, 1 }, { 2, 128, 500, 200, 4, 0, false, 2 } }, NULL, NULL },
        /* units: memory in MB by default, disk and swap in KB */
        { "SLOT_TYPE_1 = cpus=1, memory=1G, disk=512M, swap=1024K\nNUM_SLOTS_TYPE_1 = 1", 4, 4096, 1048576, 4096,
          0, 1, { { 1, 1024, 524288, 1024, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = c=1 m=512MB d=1gb\nNUM_SLOTS_TYPE_1 = 2", 4, 4096, 4194304, 4096, 0, 2,
          { { 1, 512, 1048576, 2048, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = Cpus = 1, Memory = 512, Disk = 25%, Swap = 25%\nNUM_SLOTS_TYPE_1 = 4", 4, 2048, 1000, 400,
          0, 4, { { 1, 512, 250, 100, 0, 0, false, 1 } }, NULL, NULL },
        { "SLOT_TYPE_1 = cores=2, RAM=25%\nNUM_SLOTS_TYPE_1 = 2", 4, 256, 1000, 400, 0, 2,
          { { 2, 64, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        /* CPUs and memory are at least 1, as in HTCondor */
        { "SLOT_TYPE_1 = cpus=1/8, mem=0\nNUM_SLOTS_TYPE_1 = 2", 4, 256, 1000, 400, 0, 2,
          { { 1, 1, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        /* an unknown resource is fine when none or a share of it is asked for */
        { "SLOT_TYPE_1 = gpu=50%, tape=0, 1/2\nNUM_SLOTS_TYPE_1 = 2", 4, 256, 1000, 400, 0, 2,
          { { 2, 128, 500, 200, 0, 0, false, 1 } }, NULL, NULL },
        /* 3.5.10.6: the whole machine in one partitionable slot */
        { "NUM_SLOTS = 1\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1_PARTITIONABLE = true", 10, 10240, 1000000, 400, 0, 1,
          { { 10, 10240, 1000000, 400, 0, 0, true, 1 } }, NULL, NULL },
        { "NUM_CPUS = 10\nSLOT_TYPE_1 = 100%\nSLOT_TYPE_1_PARTITIONABLE = True\nNUM_SLOTS_TYPE_1 = 1", 4, 1903,
          1000, 400, 0, 1, { { 10, 1903, 1000, 400, 0, 0, true, 1 } }, NULL, NULL },
        /* slots are numbered by type */
        { "SLOT_TYPE_2 = c=1\nNUM_SLOTS_TYPE_2 = 1\nSLOT_TYPE_10 = c=2\nNUM_SLOTS_TYPE_10 = 1\n"
          "SLOT_TYPE_1 = c=1\nNUM_SLOTS_TYPE_1 = 1", 4, 300, 900, 300, 0, 3,
          { { 1, 100, 300, 100, 0, 0, false, 1 }, { 1, 100, 300, 100, 0, 0, false, 2 },
            { 2, 100, 300, 100, 0, 0, false, 10 } }, NULL, NULL },

        /* ---- impossible configurations ---- */
        { "SLOT_TYPE_1 = cpus=2\nNUM_SLOTS_TYPE_1 = 4", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=4 asks for 8 CPUs, the machine has 4", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = c=2\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_2 = c=3\nNUM_SLOTS_TYPE_2 = 1", 4, 256, 1000, 400,
          -EINVAL, 0, {},
          "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=1 (2 CPUs) and SLOT_TYPE_2 x NUM_SLOTS_TYPE_2=1 (3 CPUs) ask for 5 CPUs, "
          "the machine has 4", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = m=200\nNUM_SLOTS_TYPE_1 = 2", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=2 asks for 400 MB of memory, the machine has 256 MB", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = d=75%\nNUM_SLOTS_TYPE_1 = 2", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=2 asks for 150% of the disk, the machine has 100% (1000 KB)",
          "SLOT_TYPE_1" },
        { "MACHINE_RESOURCE_gpu = 2\nSLOT_TYPE_1 = gpu=2\nNUM_SLOTS_TYPE_1 = 2", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1 x NUM_SLOTS_TYPE_1=2 asks for 4 Gpu, the machine has 2", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = c=3\nNUM_SLOTS_TYPE_1 = 1\nNUM_SLOTS_TYPE_2 = 2", 4, 256, 1000, 400, -EINVAL, 0, {},
          "the 2 slots with an automatic share of CPUs (SLOT_TYPE_2 x NUM_SLOTS_TYPE_2=2) would get less than 1 CPU "
          "each: the explicit shares leave 1 of the machine's 4", "NUM_SLOTS_TYPE_2" },
        { "SLOT_TYPE_1 = m=250\nNUM_SLOTS_TYPE_1 = 1\nNUM_SLOTS_TYPE_2 = 1\nNUM_SLOTS_TYPE_3 = 8", 16, 256, 1000,
          400, -EINVAL, 0, {},
          "the 9 slots with an automatic share of memory (SLOT_TYPE_2 x NUM_SLOTS_TYPE_2=1, ...) would get less "
          "than 1 MB each: the explicit shares leave 6 of the machine's 256 MB", "NUM_SLOTS_TYPE_2" },
        { "SLOT_TYPE_1 = d=100%\nNUM_SLOTS_TYPE_1 = 1\nNUM_SLOTS_TYPE_2 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_2 x NUM_SLOTS_TYPE_2=1 takes an automatic share of the disk, but the explicit shares leave "
          "none of it", "NUM_SLOTS_TYPE_2" },
        { "NUM_SLOTS = 8", 4, 256, 1000, 400, -EINVAL, 0, {},
          "NUM_SLOTS=8 asks for more slots than the machine has CPUs (4)", "NUM_SLOTS" },
        { "NUM_SLOTS = 0", 4, 256, 1000, 400, -EINVAL, 0, {},
          "NUM_SLOTS=0: the machine needs at least one slot", "NUM_SLOTS" },
        { "NUM_SLOTS = 4", 4, 2, 1000, 400, -EINVAL, 0, {},
          "the 4 slots with an automatic share of memory (NUM_SLOTS=4) would get less than 1 MB each: the "
          "explicit shares leave 2 of the machine's 2 MB", NULL },
        { "SLOT_TYPE_1 = 3\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: '3' is invalid: give a percentage (like \"25%\"), a fraction (like \"1/4\"), or list the "
          "resources (like \"c=1, r=25%, s=25%, d=25%\")", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = 150%\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: '150%' is invalid: give a percentage (like \"25%\"), a fraction (like \"1/4\"), or list the "
          "resources (like \"c=1, r=25%, s=25%, d=25%\")", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = cpus=two\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: 'cpus=two' is not auto, a fraction, a percentage or an amount", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = mem=2X\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: 'mem=2X' is not auto, a fraction, a percentage or an amount (MB, or with a unit: K, M, G, "
          "T)", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = c=1/0\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: 'c=1/0' is not auto, a fraction, a percentage or an amount", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = c=-1\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: 'c=-1' is not auto, a fraction, a percentage or an amount", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = c=\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: cannot parse 'c='", "SLOT_TYPE_1" },
        { "SLOT_TYPE_1 = gpu=2\nNUM_SLOTS_TYPE_1 = 1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_1: unknown resource 'gpu' (not cpus, memory, disk, swap, nor one of MACHINE_RESOURCE_NAMES)",
          "SLOT_TYPE_1" },
        { "SLOT_TYPE_0 = 1/2", 4, 256, 1000, 400, -EINVAL, 0, {},
          "SLOT_TYPE_0 cannot be defined: type 0 is the even split of NUM_SLOTS", "SLOT_TYPE_0" },
        { "NUM_SLOTS_TYPE_1 = -1", 4, 256, 1000, 400, -EINVAL, 0, {},
          "NUM_SLOTS_TYPE_1 = -1: give a whole number of slots from 0 to 4096", "NUM_SLOTS_TYPE_1" },
        { "NUM_SLOTS_TYPE_1 = lots", 4, 256, 1000, 400, -EINVAL, 0, {},
          "NUM_SLOTS_TYPE_1 = 'lots' is not a number", "NUM_SLOTS_TYPE_1" },
};

static int knob_line(const char *conf, const char *knob) {
        size_t len = strlen(knob);
        int line = 1;

        for (const char *p = conf; *p; line++) {
                if (strncmp(p, knob, len) == 0 && (p[len] == ' ' || p[len] == '='))
                        return line;
                p = strchr(p, '\n');
                if (!p)
                        break;
                p++;
        }
        return 0;
}

static void check_slot(size_t row, size_t k, const AgentSlotDef *d, const SlotWant *w) {
        GLEAN_TEST_CHECK(d->id == k + 1, "row %zu slot %zu: id %u", row, k, d->id);
        GLEAN_TEST_CHECK(d->res.cpus == w->cpus && d->res.memory == w->memory && d->res.disk == w->disk &&
                                 d->res.swap == w->swap,
                         "row %zu slot%zu: cpus=%lld memory=%lld disk=%lld swap=%lld, want %lld/%lld/%lld/%lld", row,
                         k + 1, (long long) d->res.cpus, (long long) d->res.memory, (long long) d->res.disk,
                         (long long) d->res.swap, (long long) w->cpus, (long long) w->memory, (long long) w->disk,
                         (long long) w->swap);
        GLEAN_TEST_CHECK(d->res.custom[0] == w->c0 && d->res.custom[1] == w->c1,
                         "row %zu slot%zu: custom %g %g, want %g %g", row, k + 1, d->res.custom[0], d->res.custom[1],
                         w->c0, w->c1);
        GLEAN_TEST_CHECK(d->partitionable == w->partitionable && d->type == w->type,
                         "row %zu slot%zu: type %u partitionable %d, want %u %d", row, k + 1, d->type,
                         d->partitionable, w->type, w->partitionable);
}

static void test_layout(void) {
        for (size_t i = 0; i < sizeof(layout_cases) / sizeof(layout_cases[0]); i++) {
                const LayoutCase *c = &layout_cases[i];
                Config *cfg = slots_test_config(c->conf);
                AgentMachine m = slots_test_machine(cfg, c->cpus, c->memory, c->disk, c->swap);
                AgentSlotDef *defs = NULL;
                ConfigError err = {};
                size_t n = 0, n_want = 0;
                int r;

                r = agent_slots_layout(cfg, &m, &defs, &n, &err);
                GLEAN_TEST_CHECK(r == c->r, "row %zu: gave %d (%s), want %d", i, r, err.msg, c->r);
                if (r == 0 && c->r == 0) {
                        GLEAN_TEST_CHECK(n == c->n, "row %zu: %zu slots, want %zu", i, n, c->n);
                        while (n_want < MAX_WANT && c->want[n_want].cpus)
                                n_want++;
                        for (size_t k = 0; k < n && k < c->n; k++)
                                check_slot(i, k, &defs[k], &c->want[k < n_want ? k : n_want - 1]);
                }
                if (r < 0 && c->r < 0) {
                        GLEAN_TEST_CHECK(strcmp(err.msg, c->msg) == 0, "row %zu: message\n  '%s'\nwant\n  '%s'", i,
                                         err.msg, c->msg);
                        if (c->knob)
                                GLEAN_TEST_CHECK(strcmp(err.file, "t.conf") == 0 &&
                                                         err.line == knob_line(c->conf, c->knob),
                                                 "row %zu: error at '%s':%d, want t.conf:%d (%s)", i, err.file,
                                                 err.line, knob_line(c->conf, c->knob), c->knob);
                }
                free(defs);
                config_free(cfg);
        }
}

/* Odd text never crashes and never half-succeeds. */
static void test_layout_hostile(void) {
        static const char *const texts[] = {
                "=", ",,,", "c==1", "c=1=2", "=1", "c = ", "%", "/", "1/", "/2", "c=1/", "c=%", "c=.%", "c=+",
                "c=1.2.3", "m=1 G", "m=1GBB", "m=G", "d=1e3", "c=0x10", "c=inf", "c=nan", "auto, auto, 1/2",
                "\"c=1\"", "c=1\n m=2\n", "c=99999999999999999999999999", "m=999999999999999999T",
                "cpus=1, cpus=2", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx=1",
                "c=1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
        };

        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                char conf[512];
                Config *cfg;
                AgentMachine m;
                AgentSlotDef *defs = NULL;
                ConfigError err = {};
                size_t n = 0;
                int r;

                snprintf(conf, sizeof(conf), "SLOT_TYPE_1 = %s\nNUM_SLOTS_TYPE_1 = 1", texts[i]);
                cfg = slots_test_config(conf);
                m = slots_test_machine(cfg, 4, 256, 1000, 400);
                r = agent_slots_layout(cfg, &m, &defs, &n, &err);
                GLEAN_TEST_CHECK((r == 0 && defs && n == 1 && defs[0].res.cpus >= 1 && defs[0].res.memory >= 1) ||
                                         (r == -EINVAL && !defs && err.msg[0]),
                                 "'%s' gave %d (%s)", texts[i], r, err.msg);
                free(defs);
                config_free(cfg);
        }
}

/* Disk and swap are fractions: they follow the machine's totals. */
static void test_rescale(void) {
        Config *cfg = slots_test_config("SLOT_TYPE_1 = d=1/4, s=1/2\nNUM_SLOTS_TYPE_1 = 2");
        AgentMachine m = slots_test_machine(cfg, 4, 256, 1000, 400);
        AgentSlotDef *defs = NULL;
        ConfigError err = {};
        size_t n = 0;

        GLEAN_TEST_CHECK_FATAL(agent_slots_layout(cfg, &m, &defs, &n, &err) == 0 && n == 2, "layout: %s", err.msg);
        GLEAN_TEST_CHECK(defs[0].res.disk == 250 && defs[0].res.swap == 200, "initial disk/swap");
        agent_slots_rescale(defs, n, 2000, 100);
        GLEAN_TEST_CHECK(defs[1].res.disk == 500 && defs[1].res.swap == 50 && defs[1].res.cpus == 2,
                         "rescaled: disk %lld swap %lld", (long long) defs[1].res.disk, (long long) defs[1].res.swap);
        free(defs);
        config_free(cfg);
}

/* The shell on this machine: something sensible comes out. */
static void test_detect_smoke(void) {
        Config *cfg = slots_test_config("EXECUTE = /nonexistent/glean/execute");
        AgentMachine m = {};
        ConfigError err = {};
        int r;

        r = agent_machine_detect(cfg, &m, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "agent_machine_detect: %d: %s", r, err.msg);
        GLEAN_TEST_CHECK(m.detected.cpus >= 1 && m.total.cpus == m.detected.cpus, "cpus %lld",
                         (long long) m.detected.cpus);
        GLEAN_TEST_CHECK(m.detected.memory > 0 && m.total.memory == m.detected.memory, "memory %lld MB",
                         (long long) m.detected.memory);
        GLEAN_TEST_CHECK(m.detected.disk >= 0 && m.detected.swap >= 0, "disk %lld swap %lld",
                         (long long) m.detected.disk, (long long) m.detected.swap);
        GLEAN_TEST_CHECK(m.arch[0] && strcmp(m.opsys, "LINUX") == 0 && m.hostname[0], "arch '%s' host '%s'", m.arch,
                         m.hostname);
        config_free(cfg);
}

static CU_TestInfo machine_tests[] = {
        { "configure", test_machine_configure },
        { "arch", test_arch_names },
        { "arithmetic", test_res_arithmetic },
        { "detect", test_detect_smoke },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo layout_tests[] = {
        { "layout", test_layout },
        { "hostile", test_layout_hostile },
        { "rescale", test_rescale },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "machine", NULL, NULL, NULL, NULL, machine_tests },
        { "slots", NULL, NULL, NULL, NULL, layout_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-machine-knobs.c — the knobs that size and name an execute machine
 * as HTCondor's administrators write them: RESERVED_MEMORY (what static and
 * partitionable slots divide, and the errors of a negative one or one that
 * leaves nothing), RESERVED_DISK; COUNT_HYPERTHREAD_CPUS over a fake sysfs
 * topology (2 cores x 2 threads) and the DETECTED_CPUS / DETECTED_CORES /
 * DETECTED_PHYSICAL_CPUS macros (and the agent's own values of them in
 * the configuration it reads); STARTD_NAME in slot names (static,
 * partitionable, dynamic) and its errors; UidDomain and FileSystemDomain in
 * every slot ad. Then a whole pool (the real glean-negotiator and
 * glean-agent): the central manager lists slot1@second@a.test, matches
 * jobs to it and runs them, static and dynamic slots alike, and the slot ad
 * it holds carries the reserved memory and the domains.
 */
#define _GNU_SOURCE
#include <ctype.h>

#include "slots-test.h"
#include "../pool/pool-test.h"

#define HOST "host.example.org"

/* A machine of cpus (physical of them cores) / memory MB / disk KB under
 * the text; r its result, err its error. */
static int configure(const char *text, int64_t cpus, int64_t physical, int64_t memory, int64_t disk,
                     AgentMachine *m, ConfigError *err) {
        Config *cfg = slots_test_config(text);
        AgentRes d = { .cpus = cpus, .memory = memory, .disk = disk, .swap = 131064 };
        int r = agent_machine_configure_cpus(cfg, &d, physical, "x86_64", HOST, m, err);
        config_free(cfg);
        return r;
}

/* The slots of text on a machine of 4 CPUs, 1024 MB, 1000000 KB disk, and
 * the ad of slot i. */
static size_t layout(const char *text, AgentMachine *m, AgentSlotDef **defs) {
        Config *cfg = slots_test_config(text);
        ConfigError err = {};
        size_t n = 0;
        *m = slots_test_machine(cfg, 4, 1024, 1000000, 131064);
        int r = agent_slots_layout(cfg, m, defs, &n, &err);
        GLEAN_TEST_CHECK(r == 0, "%s: layout: %d: %s", text, r, err.msg);
        config_free(cfg);
        return r == 0 ? n : 0;
}

static ClassAd *knob_slot_ad(const AgentMachine *m, const AgentSlotDef *def, const char *name, bool dynamic,
                        const AgentRes *res) {
        ClassAd *ad = NULL;
        GLEAN_TEST_CHECK_FATAL(classad_new(&ad) == 0, "classad_new");
        int r = agent_slot_ad_resources(ad, m, def, name, dynamic, res ? res : &def->res);
        GLEAN_TEST_CHECK(r == 0, "agent_slot_ad_resources(%s): %d", name, r);
        return ad;
}

static int64_t ad_int(const ClassAd *ad, const char *attr) {
        int64_t v = -1;
        classad_eval_int(ad, attr, CA_MODE_OLD, &v);
        return v;
}

static bool ad_is(const ClassAd *ad, const char *attr, const char *want) {
        char *v = NULL;
        bool ok = classad_eval_string(ad, attr, CA_MODE_OLD, &v) >= 0 && strcmp(v, want) == 0;
        if (!ok)
                fprintf(stderr, "%s = %s, want %s\n", attr, v ? v : "(none)", want);
        free(v);
        return ok;
}

/* ---- RESERVED_MEMORY, RESERVED_DISK ---- */

typedef struct MemCase {
        const char *conf;
        int64_t total; /* TotalMemory, or 0: an error */
        const char *msg;
        int line;
} MemCase;

/* Detected: 1024 MB. */
static const MemCase mem_cases[] = {
        { "", 1024, NULL, 0 },
        { "RESERVED_MEMORY = 0", 1024, NULL, 0 },
        { "RESERVED_MEMORY = 128", 896, NULL, 0 },
        { "RESERVED_MEMORY = $(DETECTED_MEMORY) / 4", 768, NULL, 0 },
        /* Taken off MEMORY too (HTCondor's sysapi_phys_memory()). */
        { "MEMORY = 2048\nRESERVED_MEMORY = 48", 2000, NULL, 0 },
        { "RESERVED_MEMORY = 1023", 1, NULL, 0 },
        { "\nRESERVED_MEMORY = -1", 0, "RESERVED_MEMORY = -1 is out of range (at least 0 MB)", 2 },
        { "RESERVED_MEMORY = 1024", 0, "RESERVED_MEMORY = 1024 leaves no memory: the machine has 1024 MB", 1 },
        { "MEMORY = 100\n\n\nRESERVED_MEMORY = 4000", 0,
          "RESERVED_MEMORY = 4000 leaves no memory: the machine has 100 MB", 4 },
        { "RESERVED_MEMORY = lots", 0, "RESERVED_MEMORY = 'lots' is not a number", 1 },
        { "\n\nRESERVED_DISK = -5", 0, "RESERVED_DISK = -5 is out of range (at least 0 MB)", 3 },
};

static void test_reserved_memory(void) {
        for (size_t i = 0; i < sizeof(mem_cases) / sizeof(mem_cases[0]); i++) {
                const MemCase *c = &mem_cases[i];
                AgentMachine m = {};
                ConfigError err = {};
                int r = configure(c->conf, 4, 4, 1024, 1000000, &m, &err);

                if (c->total > 0) {
                        GLEAN_TEST_CHECK(r == 0 && m.total.memory == c->total && m.detected.memory == 1024,
                                         "row %zu (%s): r %d (%s), TotalMemory %lld, want %lld", i, c->conf, r,
                                         err.msg, (long long) m.total.memory, (long long) c->total);
                        continue;
                }
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, c->msg) && strcmp(err.file, "t.conf") == 0 &&
                                         err.line == c->line,
                                 "row %zu (%s): r %d, %s:%d: %s; want t.conf:%d: %s", i, c->conf, r, err.file,
                                 err.line, err.msg, c->line, c->msg);
        }
}

/* Four static slots divide 1024 - 128 MB; each ad says so. */
static void test_reserved_memory_static(void) {
        AgentMachine m;
        AgentSlotDef *defs = NULL;
        size_t n = layout("RESERVED_MEMORY = 128", &m, &defs);
        int64_t sum = 0;

        GLEAN_TEST_CHECK_FATAL(n == 4, "4 slots, not %zu", n);
        for (size_t i = 0; i < n; i++) {
                char name[32];
                snprintf(name, sizeof name, "slot%zu", i + 1);
                ClassAd *ad = knob_slot_ad(&m, &defs[i], name, false, NULL);
                GLEAN_TEST_CHECK(ad_int(ad, "Memory") == 224 && ad_int(ad, "TotalMemory") == 896 &&
                                         ad_int(ad, "TotalSlotMemory") == 224 && ad_int(ad, "DetectedMemory") == 1024,
                                 "%s: Memory %lld TotalMemory %lld DetectedMemory %lld", name,
                                 (long long) ad_int(ad, "Memory"), (long long) ad_int(ad, "TotalMemory"),
                                 (long long) ad_int(ad, "DetectedMemory"));
                sum += ad_int(ad, "Memory");
                classad_free(ad);
        }
        GLEAN_TEST_CHECK(sum == 896, "the static slots hold %lld MB, the machine gives 896", (long long) sum);
        free(defs);
}

/* A partitionable slot owns what is left, and its d-slots are carved from that. */
static void test_reserved_memory_pslot(void) {
        AgentMachine m;
        AgentSlotDef *defs = NULL;
        size_t n = layout("RESERVED_MEMORY = 512\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                          "SLOT_TYPE_1_PARTITIONABLE = True\n",
                          &m, &defs);

        GLEAN_TEST_CHECK_FATAL(n == 1 && defs[0].partitionable, "one partitionable slot, not %zu", n);
        ClassAd *ad = knob_slot_ad(&m, &defs[0], "slot1", false, NULL);
        GLEAN_TEST_CHECK(ad_int(ad, "Memory") == 512 && ad_int(ad, "TotalMemory") == 512 &&
                                 ad_int(ad, "TotalSlotMemory") == 512 && ad_int(ad, "DetectedMemory") == 1024,
                         "the p-slot: Memory %lld TotalMemory %lld", (long long) ad_int(ad, "Memory"),
                         (long long) ad_int(ad, "TotalMemory"));
        /* A job asking for all the detected memory does not fit; one for the rest does. */
        ClassAd *job = NULL;
        CaError cerr;
        CarvePolicy *policy = NULL;
        Config *cfg = slots_test_config("RESERVED_MEMORY = 512");
        ConfigError err = {};
        AgentRes got;
        char why[256] = "";
        GLEAN_TEST_CHECK_FATAL(agent_carve_policy(cfg, &m, &policy, &err) == 0, "carve policy: %s", err.msg);
        classad_new(&job);
        classad_set_expr_text(job, "RequestCpus", "1", CA_MODE_OLD, &cerr);
        classad_set_expr_text(job, "RequestDisk", "1024", CA_MODE_OLD, &cerr);
        classad_set_expr_text(job, "RequestMemory", "1024", CA_MODE_OLD, &cerr);
        GLEAN_TEST_CHECK(agent_pslot_carve(policy, &m, ad, job, &defs[0].res, &got, why, sizeof why) == -ENOSPC,
                         "1024 MB carved from a slot of 512: %s", why);
        classad_set_expr_text(job, "RequestMemory", "512", CA_MODE_OLD, &cerr);
        GLEAN_TEST_CHECK(agent_pslot_carve(policy, &m, ad, job, &defs[0].res, &got, why, sizeof why) == 0 &&
                                 got.memory == 512,
                         "512 MB carved from a slot of 512: %s", why);
        classad_free(job);
        carve_policy_free(policy);
        config_free(cfg);
        classad_free(ad);
        free(defs);
}

/* RESERVED_DISK is taken off the detected disk, not off DISK. */
static void test_reserved_disk(void) {
        AgentMachine m = {};
        ConfigError err = {};
        GLEAN_TEST_CHECK(configure("RESERVED_DISK = 100", 4, 4, 1024, 1000000, &m, &err) == 0 &&
                                 m.total.disk == 1000000 - 100 * 1024,
                         "RESERVED_DISK = 100: TotalDisk %lld", (long long) m.total.disk);
        GLEAN_TEST_CHECK(configure("DISK = 5000\nRESERVED_DISK = 100", 4, 4, 1024, 1000000, &m, &err) == 0 &&
                                 m.total.disk == 5000,
                         "DISK = 5000: TotalDisk %lld", (long long) m.total.disk);
}

/* ---- COUNT_HYPERTHREAD_CPUS over a fake topology ---- */

typedef struct FakeSys {
        char root[64];
} FakeSys;

/* A sysfs tree whose cpu<i>/topology/thread_siblings_list is lists[i]
 * (NULL: no topology for that CPU). */
static void fake_sys(FakeSys *f, const char *const *lists, size_t n) {
        snprintf(f->root, sizeof f->root, "/tmp/glean-topology-XXXXXX");
        GLEAN_TEST_CHECK_FATAL(mkdtemp(f->root) != NULL, "mkdtemp: %s", strerror(errno));
        for (size_t i = 0; i < n; i++) {
                char path[256];
                if (!lists[i])
                        continue;
                snprintf(path, sizeof path, "%s/devices/system/cpu/cpu%zu/topology", f->root, i);
                char cmd[300];
                snprintf(cmd, sizeof cmd, "mkdir -p '%s'", path);
                GLEAN_TEST_CHECK_FATAL(system(cmd) == 0, "%s", cmd);
                strcat(path, "/thread_siblings_list");
                FILE *file = fopen(path, "we");
                GLEAN_TEST_CHECK_FATAL(file != NULL, "%s: %s", path, strerror(errno));
                fprintf(file, "%s\n", lists[i]);
                fclose(file);
        }
}

static int64_t physical(const FakeSys *f, const char *cpus) {
        AgentCpus set;
        int64_t n = -1;
        GLEAN_TEST_CHECK_FATAL(agent_cpus_parse(cpus, &set) == 0, "%s", cpus);
        GLEAN_TEST_CHECK(agent_cpus_physical(f->root, &set, &n) == 0, "agent_cpus_physical(%s)", cpus);
        return n;
}

static void test_topology(void) {
        /* 2 cores x 2 threads, numbered as Intel does (0,2 on core 0) and as AMD does (0-1). */
        static const char *const intel[] = { "0,2", "1,3", "0,2", "1,3" };
        static const char *const amd[] = { "0-1", "0-1", "2-3", "2-3" };
        /* Unreadable or lying topologies: each such CPU is a core of its own. */
        static const char *const broken[] = { "0-1", NULL, "garbage", "0" };
        FakeSys f;

        fake_sys(&f, intel, 4);
        GLEAN_TEST_CHECK(physical(&f, "0-3") == 2, "intel numbering, all CPUs: %lld", (long long) physical(&f, "0-3"));
        GLEAN_TEST_CHECK(physical(&f, "0,2") == 1, "intel, one core's threads");
        GLEAN_TEST_CHECK(physical(&f, "0-1") == 2, "intel, a thread of each core");
        GLEAN_TEST_CHECK(physical(&f, "") == 0, "no CPU, no core");
        remove_dir(f.root);
        fake_sys(&f, amd, 4);
        GLEAN_TEST_CHECK(physical(&f, "0-3") == 2, "amd numbering, all CPUs");
        GLEAN_TEST_CHECK(physical(&f, "1-2") == 2, "amd, a thread of each core");
        GLEAN_TEST_CHECK(physical(&f, "2-3") == 1, "amd, one core");
        remove_dir(f.root);
        fake_sys(&f, broken, 4);
        /* cpu0 (0-1) and cpu1 (none: its own) are 2; cpu2 garbage, own; cpu3 "0" lacks itself, own. */
        GLEAN_TEST_CHECK(physical(&f, "0-3") == 4, "broken topology: %lld", (long long) physical(&f, "0-3"));
        remove_dir(f.root);
        /* No tree at all. */
        GLEAN_TEST_CHECK(physical(&f, "0-7") == 8, "no tree: every CPU a core");
        int64_t n;
        GLEAN_TEST_CHECK(agent_cpus_physical(NULL, NULL, &n) == -EINVAL, "NULL arguments");
}

typedef struct HyperCase {
        const char *conf;
        int64_t detected; /* DetectedCpus */
        int64_t total;    /* TotalCpus = slots of the default layout */
        const char *msg;
        int line;
} HyperCase;

/* 4 hyperthreads on 2 cores. */
static const HyperCase hyper_cases[] = {
        { "", 4, 4, NULL, 0 },
        { "COUNT_HYPERTHREAD_CPUS = True", 4, 4, NULL, 0 },
        { "COUNT_HYPERTHREAD_CPUS = False", 2, 2, NULL, 0 },
        { "COUNT_HYPERTHREAD_CPUS = false\nNUM_CPUS = $(DETECTED_CORES)", 2, 4, NULL, 0 },
        { "NUM_CPUS = $(DETECTED_PHYSICAL_CPUS)", 4, 2, NULL, 0 },
        { "COUNT_HYPERTHREAD_CPUS = False\nNUM_CPUS = $(DETECTED_CPUS) * 3", 2, 6, NULL, 0 },
        { "\nCOUNT_HYPERTHREAD_CPUS = sometimes", 0, 0, "COUNT_HYPERTHREAD_CPUS", 2 },
};

static void test_count_hyperthreads(void) {
        for (size_t i = 0; i < sizeof(hyper_cases) / sizeof(hyper_cases[0]); i++) {
                const HyperCase *c = &hyper_cases[i];
                AgentMachine m = {};
                ConfigError err = {};
                int r = configure(c->conf, 4, 2, 1024, 1000000, &m, &err);

                if (!c->msg) {
                        GLEAN_TEST_CHECK(r == 0 && m.detected.cpus == c->detected && m.total.cpus == c->total &&
                                                 m.detected_cores == 4 && m.detected_physical_cpus == 2,
                                         "row %zu (%s): r %d (%s), DetectedCpus %lld TotalCpus %lld", i, c->conf, r,
                                         err.msg, (long long) m.detected.cpus, (long long) m.total.cpus);
                        continue;
                }
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, c->msg) && err.line == c->line &&
                                         strcmp(err.file, "t.conf") == 0,
                                 "row %zu: r %d, %s:%d: %s", i, r, err.file, err.line, err.msg);
        }
        /* The default layout of COUNT_HYPERTHREAD_CPUS = False: one slot per core, DetectedCpus 2. */
        Config *cfg = slots_test_config("COUNT_HYPERTHREAD_CPUS = False");
        AgentRes d = { .cpus = 4, .memory = 1024, .disk = 1000000 };
        AgentMachine m;
        ConfigError err = {};
        AgentSlotDef *defs = NULL;
        size_t n = 0;
        GLEAN_TEST_CHECK_FATAL(agent_machine_configure_cpus(cfg, &d, 2, "x86_64", HOST, &m, &err) == 0, "%s",
                               err.msg);
        GLEAN_TEST_CHECK(agent_slots_layout(cfg, &m, &defs, &n, &err) == 0 && n == 2 && defs[0].res.cpus == 1 &&
                                 defs[0].res.memory == 512,
                         "COUNT_HYPERTHREAD_CPUS = False: %zu slots (%s)", n, err.msg);
        ClassAd *ad = n ? knob_slot_ad(&m, &defs[0], "slot1", false, NULL) : NULL;
        GLEAN_TEST_CHECK(ad && ad_int(ad, "DetectedCpus") == 2 && ad_int(ad, "TotalCpus") == 2, "DetectedCpus %lld",
                         (long long) ad_int(ad, "DetectedCpus"));
        classad_free(ad);
        free(defs);
        /* The agent then defines the DETECTED_* macros as it detected them:
         * any knob that uses them (a STARTD_ATTRS one) sees those. */
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, "MyCpus = $(DETECTED_CPUS) + $(DETECTED_PHYSICAL_CPUS)\n",
                                                  "more.conf", &err) == 0,
                               "%s", err.msg);
        GLEAN_TEST_CHECK_FATAL(agent_machine_define_detected(cfg, &m) == 0, "agent_machine_define_detected");
        int64_t v[4] = { -1, -1, -1, -1 };
        char *mine = NULL;
        config_get_int(cfg, "DETECTED_CPUS", &v[0], NULL);
        config_get_int(cfg, "DETECTED_CORES", &v[1], NULL);
        config_get_int(cfg, "DETECTED_PHYSICAL_CPUS", &v[2], NULL);
        config_get_int(cfg, "DETECTED_MEMORY", &v[3], NULL);
        config_get(cfg, "MyCpus", &mine, NULL);
        GLEAN_TEST_CHECK(v[0] == 2 && v[1] == 4 && v[2] == 2 && v[3] == 1024 && mine && strcmp(mine, "2 + 2") == 0,
                         "DETECTED_CPUS %lld CORES %lld PHYSICAL %lld MEMORY %lld, MyCpus %s", (long long) v[0],
                         (long long) v[1], (long long) v[2], (long long) v[3], mine ? mine : "-");
        free(mine);
        config_free(cfg);
        /* An unknown topology (0) or one that claims more cores than CPUs is the CPUs. */
        cfg = slots_test_config("COUNT_HYPERTHREAD_CPUS = False");
        GLEAN_TEST_CHECK(agent_machine_configure_cpus(cfg, &d, 0, "x86_64", HOST, &m, &err) == 0 &&
                                 m.total.cpus == 4,
                         "unknown topology: %lld CPUs", (long long) m.total.cpus);
        GLEAN_TEST_CHECK(agent_machine_configure_cpus(cfg, &d, 9, "x86_64", HOST, &m, &err) == 0 &&
                                 m.total.cpus == 4,
                         "9 cores of 4 CPUs: %lld CPUs", (long long) m.total.cpus);
        config_free(cfg);
}

/* This machine's own detection: cores between 1 and the CPUs, DETECTED_* consistent. */
static void test_detect(void) {
        Config *cfg = slots_test_config("COUNT_HYPERTHREAD_CPUS = False");
        AgentMachine m;
        ConfigError err = {};
        GLEAN_TEST_CHECK_FATAL(agent_machine_detect(cfg, &m, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK(m.detected_physical_cpus >= 1 && m.detected_physical_cpus <= m.detected_cores &&
                                 m.detected.cpus == m.detected_physical_cpus && m.total.cpus == m.detected.cpus,
                         "cores %lld, CPUs %lld, DetectedCpus %lld", (long long) m.detected_physical_cpus,
                         (long long) m.detected_cores, (long long) m.detected.cpus);
        config_free(cfg);
        /* The configuration's DETECTED_PHYSICAL_CPUS is there, as HTCondor defines it. */
        cfg = slots_test_config(NULL);
        int64_t cores = 0, cpus = 0;
        GLEAN_TEST_CHECK(config_get_int(cfg, "DETECTED_PHYSICAL_CPUS", &cores, NULL) == 0 &&
                                 config_get_int(cfg, "DETECTED_CORES", &cpus, NULL) == 0 && cores >= 1 &&
                                 cores <= cpus,
                         "DETECTED_PHYSICAL_CPUS %lld, DETECTED_CORES %lld", (long long) cores, (long long) cpus);
        config_free(cfg);
}

/* ---- STARTD_NAME, UID_DOMAIN, FILESYSTEM_DOMAIN ---- */

typedef struct NameCase {
        const char *conf;
        const char *name; /* slot1's Name, or NULL: an error */
        const char *msg;
        int line;
} NameCase;

static const NameCase name_cases[] = {
        { "", "slot1@" HOST, NULL, 0 },
        { "STARTD_NAME =", "slot1@" HOST, NULL, 0 },
        { "STARTD_NAME = second", "slot1@second@" HOST, NULL, 0 },
        { "STARTD_NAME = second_$(HOSTNAME)", NULL, NULL, 0 }, /* expanded: checked below */
        { "STARTD_NAME = " HOST, "slot1@" HOST, NULL, 0 },
        { "STARTD_NAME = HOST.Example.ORG", "slot1@" HOST, NULL, 0 },
        { "STARTD_NAME = host", "slot1@" HOST, NULL, 0 },
        { "STARTD_NAME = hos", "slot1@hos@" HOST, NULL, 0 },
        { "STARTD_NAME = host.example", "slot1@host.example@" HOST, NULL, 0 },
        /* With an '@', as it is (HTCondor's build_valid_daemon_name). */
        { "STARTD_NAME = glidein_7@" HOST, "slot1@glidein_7@" HOST, NULL, 0 },
        { "STARTD_NAME = a@elsewhere.org", "slot1@a@elsewhere.org", NULL, 0 },
        /* In a pool, the machine after the '@' must be this one. */
        { "COLLECTOR_HOST = cm.example.org\nSTARTD_NAME = a@" HOST, "slot1@a@" HOST, NULL, 0 },
        { "COLLECTOR_HOST = cm.example.org\n\nSTARTD_NAME = a@elsewhere.org", NULL,
          "names machine 'elsewhere.org', but this is " HOST, 3 },
        { "\nSTARTD_NAME = @" HOST, NULL, "has nothing before its '@'", 2 },
        { "STARTD_NAME = second@", NULL, "has nothing after its '@'", 1 },
        { "STARTD_NAME = \"second\"", NULL, "has a blank, a quote or a backslash", 1 },
        { "STARTD_NAME = a\\b", NULL, "has a blank, a quote or a backslash", 1 },
        { "STARTD_NAME = two words", NULL, "has a blank, a quote or a backslash", 1 },
        { "STARTD_NAME = aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
          "aaaaaaaaaaaaaaaaaaaa",
          NULL, "is longer than 230 characters", 1 },
        { "UID_DOMAIN = my pool", NULL, "UID_DOMAIN = 'my pool' has a blank", 1 },
        { "\nFILESYSTEM_DOMAIN = \"x\"", NULL, "FILESYSTEM_DOMAIN = '\"x\"' has a blank, a quote", 2 },
};

static void test_startd_name(void) {
        AgentSlotDef def = { .id = 1, .res = { .cpus = 1, .memory = 100, .disk = 100 } };

        for (size_t i = 0; i < sizeof(name_cases) / sizeof(name_cases[0]); i++) {
                const NameCase *c = &name_cases[i];
                AgentMachine m = {};
                ConfigError err = {};
                int r = configure(c->conf, 4, 4, 1024, 1000000, &m, &err);

                if (!c->name && !c->msg) {
                        GLEAN_TEST_CHECK(r == 0 && strncmp(m.name, "second_", 7) == 0 && strchr(m.name, '@') &&
                                                 strcmp(strchr(m.name, '@') + 1, HOST) == 0,
                                         "row %zu: %s", i, m.name);
                        continue;
                }
                if (c->msg) {
                        GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, c->msg) && err.line == c->line &&
                                                 strcmp(err.file, "t.conf") == 0,
                                         "row %zu (%s): r %d, %s:%d: %s; want line %d: %s", i, c->conf, r, err.file,
                                         err.line, err.msg, c->line, c->msg);
                        continue;
                }
                GLEAN_TEST_CHECK_FATAL(r == 0, "row %zu (%s): %s", i, c->conf, err.msg);
                ClassAd *ad = knob_slot_ad(&m, &def, "slot1", false, NULL);
                GLEAN_TEST_CHECK(ad_is(ad, "Name", c->name) && ad_is(ad, "Machine", HOST), "row %zu (%s)", i,
                                 c->conf);
                classad_free(ad);
        }
}

/* A partitionable slot and its d-slot are named after STARTD_NAME alike. */
static void test_startd_name_dslot(void) {
        AgentMachine m;
        AgentSlotDef *defs = NULL;
        size_t n = layout("STARTD_NAME = second\nNUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                          "SLOT_TYPE_1_PARTITIONABLE = True\n",
                          &m, &defs);
        GLEAN_TEST_CHECK_FATAL(n == 1, "one slot");
        ClassAd *p = knob_slot_ad(&m, &defs[0], "slot1", false, NULL);
        AgentRes d = { .cpus = 1, .memory = 64, .disk = 64 };
        ClassAd *dyn = knob_slot_ad(&m, &defs[0], "slot1_3", true, &d);
        GLEAN_TEST_CHECK(ad_is(p, "Name", "slot1@second@" HOST) && ad_is(dyn, "Name", "slot1_3@second@" HOST) &&
                                 ad_int(dyn, "DSlotId") == 3,
                         "p-slot and d-slot names");
        classad_free(p);
        classad_free(dyn);
        free(defs);
}

static void test_domains(void) {
        AgentSlotDef def = { .id = 1, .res = { .cpus = 1, .memory = 100, .disk = 100 } };
        AgentMachine m = {};
        ConfigError err = {};

        /* The defaults ($(FULL_HOSTNAME)): the configuration's own host name. */
        Config *cfg = slots_test_config(NULL);
        char *full = NULL;
        GLEAN_TEST_CHECK_FATAL(config_get(cfg, "FULL_HOSTNAME", &full, &err) == 0, "FULL_HOSTNAME");
        config_free(cfg);
        GLEAN_TEST_CHECK_FATAL(configure("", 4, 4, 1024, 1000000, &m, &err) == 0, "%s", err.msg);
        ClassAd *ad = knob_slot_ad(&m, &def, "slot1", false, NULL);
        GLEAN_TEST_CHECK(ad_is(ad, "UidDomain", full) && ad_is(ad, "FileSystemDomain", full), "the default domains");
        classad_free(ad);
        free(full);
        /* Unset (removed by hand), the machine's host name. */
        GLEAN_TEST_CHECK_FATAL(configure("UID_DOMAIN =\nFILESYSTEM_DOMAIN =", 4, 4, 1024, 1000000, &m, &err) == 0,
                               "%s", err.msg);
        ad = knob_slot_ad(&m, &def, "slot1", false, NULL);
        GLEAN_TEST_CHECK(ad_is(ad, "UidDomain", HOST) && ad_is(ad, "FileSystemDomain", HOST), "empty domains");
        classad_free(ad);
        GLEAN_TEST_CHECK_FATAL(configure("UID_DOMAIN = cs.wisc.edu\nFILESYSTEM_DOMAIN = nfs.$(UID_DOMAIN)", 4, 4,
                                         1024, 1000000, &m, &err) == 0,
                               "%s", err.msg);
        ad = knob_slot_ad(&m, &def, "slot1", false, NULL);
        GLEAN_TEST_CHECK(ad_is(ad, "UidDomain", "cs.wisc.edu") && ad_is(ad, "FileSystemDomain", "nfs.cs.wisc.edu"),
                         "configured domains");
        /* A job that wants a shared file system matches through them. */
        ClassAd *job = NULL;
        CaError cerr;
        classad_new(&job);
        classad_set_string(job, "FileSystemDomain", "nfs.cs.wisc.edu");
        classad_set_expr_text(job, "Requirements", "TARGET.FileSystemDomain == MY.FileSystemDomain", CA_MODE_OLD,
                              &cerr);
        classad_set_expr_text(ad, "Requirements", "True", CA_MODE_OLD, &cerr);
        GLEAN_TEST_CHECK(classad_match(ad, job, CA_MODE_OLD), "the job's FileSystemDomain requirement");
        classad_set_string(job, "FileSystemDomain", "elsewhere");
        GLEAN_TEST_CHECK(!classad_match(ad, job, CA_MODE_OLD), "another FileSystemDomain does not match");
        classad_free(job);
        classad_free(ad);
}

/* ---- a whole pool ---- */

static char *trim(char *s) {
        size_t n = s ? strlen(s) : 0;
        while (n && isspace((unsigned char) s[n - 1]))
                s[--n] = 0;
        return s;
}

/* `glean submit` of a job that runs sh -c script (and the submit lines
 * extra): its cluster, or -1. */
static int64_t submit_sh(const Manager *m, const char *name, const char *script, const char *extra) {
        char body[512], why[2048] = "";
        snprintf(body, sizeof body, "executable = /bin/sh\narguments = \"-c '%s'\"\n%squeue\n", script, extra);
        int64_t c = submit_as(m, NULL, name, body, why, sizeof why);
        GLEAN_TEST_CHECK(c > 0, "glean submit %s: %s", name, why);
        return c;
}

static void run_one_job(const Manager *m, const char *sub, const char *want_host, const char *extra) {
        int64_t c = submit_sh(m, sub, "exit 7", extra);
        if (c <= 0)
                return;
        char id[32];
        snprintf(id, sizeof id, "%lld.0", (long long) c);
        GleanTestRun r;
        CU_ASSERT_EQUAL(gl(&r, "wait", "--timeout", "60", id, NULL), 0);
        GLEAN_TEST_CHECK(r.status == 7, "glean wait %s: exit %d, want 7\n%s%s", id, r.status, r.out, r.err);
        glean_test_run_done(&r);
        char *out = trim(gl_out("history", id, "-af", "LastRemoteHost", NULL));
        GLEAN_TEST_CHECK(out && strcmp(out, want_host) == 0, "LastRemoteHost of %s: \"%s\", want %s", id,
                         out ? out : "", want_host);
        free(out);
}

/* Static slots named slotN@second@a.test: listed, matched, run, and their
 * ad has the reserved memory and the domains. */
static void test_pool_startd_name(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test",
                                            "NUM_CPUS = 1\nSTARTD_NAME = second\nMEMORY = 512\nRESERVED_MEMORY = 100\n"
                                            "FILESYSTEM_DOMAIN = nfs.test\n"
                                            "STARTD_ATTRS = Cores\nCores = $(DETECTED_CORES)\n"),
                              "agent")) {
                manager_stop(&m);
                return;
        }
        CU_ASSERT_TRUE(wait_slot_listed("slot1@second@a.test", 20));
        char *out = trim(gl_out("status", "-af", "Name", "Machine", "Memory", "TotalMemory", "UidDomain",
                                "FileSystemDomain", NULL));
        GLEAN_TEST_CHECK(out && strcmp(out, "slot1@second@a.test a.test 412 412 test.pool nfs.test") == 0,
                         "glean status: \"%s\"", out ? out : "");
        free(out);
        /* DETECTED_CORES in a knob is what the agent detected: its own CPUs. */
        out = trim(gl_out("status", "-af", "Cores", "DetectedCpus", NULL));
        char want[64];
        AgentCpus mine = {};
        GLEAN_TEST_CHECK(agent_cpus_allowed(&mine) == 0, "agent_cpus_allowed");
        snprintf(want, sizeof want, "%u %u", agent_cpus_count(&mine), agent_cpus_count(&mine));
        GLEAN_TEST_CHECK(out && strcmp(out, want) == 0, "Cores DetectedCpus: \"%s\", want %s", out ? out : "", want);
        free(out);
        /* The machine's file system is nfs.test, not the submitter's (test.pool):
         * a job that does not carry its files says it shares that one. */
        const char *shared = "should_transfer_files = NO\n+FileSystemDomain = \"nfs.test\"\n";
        run_one_job(&m, "static.sub", "slot1@second@a.test", shared);
        /* A second job reuses or re-makes the claim just as well. */
        run_one_job(&m, "static2.sub", "slot1@second@a.test", shared);
        pool_stop(&a);
        manager_stop(&m);
}

/* A partitionable slot: the d-slot the central manager claims is named
 * slot1_1@second@a.test in what the agent tells it. */
static void test_pool_startd_name_pslot(void) {
        Manager m;
        Pool a;
        CU_ASSERT_TRUE_FATAL(manager_start(&m, NULL));
        if (!GLEAN_TEST_CHECK(manager_agent(&m, &a, "a.test",
                                            "NUM_CPUS = 2\nMEMORY = 256\nSTARTD_NAME = second\n"
                                            "NUM_SLOTS_TYPE_1 = 1\nSLOT_TYPE_1 = 100%\n"
                                            "SLOT_TYPE_1_PARTITIONABLE = True\n"),
                              "agent")) {
                manager_stop(&m);
                return;
        }
        CU_ASSERT_TRUE(wait_slot_listed("slot1@second@a.test", 20));
        run_one_job(&m, "dyn.sub", "slot1_1@second@a.test", "");
        pool_stop(&a);
        manager_stop(&m);
}

/* In a pool, a STARTD_NAME naming another machine stops the agent at start, saying why. */
static void test_pool_startd_name_elsewhere(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_launch(&p, "COLLECTOR_HOST = 127.0.0.1:1\nFULL_HOSTNAME = a.test\n"
                                             "STARTD_NAME = x@b.test\n",
                                         true));
        GLEAN_TEST_CHECK(p.exit_status != 0, "the agent exited %d", p.exit_status);
        char *log = NULL;
        glean_test_read_file(p.log, &log, NULL);
        GLEAN_TEST_CHECK(log && strstr(log, "glean.conf:") && strstr(log, "names machine 'b.test', but this is a.test"),
                         "the agent's log: %s", log ? log : "");
        free(log);
        pool_stop(&p);
}

static CU_TestInfo machine_tests[] = {
        { "RESERVED_MEMORY and its errors", test_reserved_memory },
        { "RESERVED_MEMORY: static slots divide the rest", test_reserved_memory_static },
        { "RESERVED_MEMORY: a partitionable slot owns the rest", test_reserved_memory_pslot },
        { "RESERVED_DISK", test_reserved_disk },
        { "cores from a fake sysfs topology", test_topology },
        { "COUNT_HYPERTHREAD_CPUS and the DETECTED_* macros", test_count_hyperthreads },
        { "this machine's cores", test_detect },
        { "STARTD_NAME in slot names, and its errors", test_startd_name },
        { "STARTD_NAME: partitionable and dynamic slots", test_startd_name_dslot },
        { "UidDomain and FileSystemDomain", test_domains },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo pool_tests[] = {
        { "STARTD_NAME: listed, matched and run by the central manager", test_pool_startd_name },
        { "STARTD_NAME: a dynamic slot through the central manager", test_pool_startd_name_pslot },
        { "STARTD_NAME naming another machine: the agent does not start", test_pool_startd_name_elsewhere },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "machine", NULL, NULL, NULL, NULL, machine_tests },
        { "pool", NULL, pool_test_suite_cleanup, NULL, pool_test_teardown, pool_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

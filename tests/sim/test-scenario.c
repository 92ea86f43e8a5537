/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-scenario.c — the scenario reader of `glean negotiate --simulate`
 * (sim/scenario.h, docs/simulate.md): every kind of line, the
 * defaults of slot and job ads, what the configuration part changes in
 * them, submitters' accounting names, durations, the limits, the example
 * scenarios, and a table of errors, each with its file, line and reason.
 */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/scenario.h"
#include "test-util.h"

static SimScenario *parse_ok(const char *text) {
        SimScenario *sc = NULL;
        ConfigError err = {};
        int r = sim_scenario_parse(text, "t.scn", NULL, &sc, &err);

        GLEAN_TEST_CHECK_FATAL(r == 0, "parse failed (%d): %s:%d: %s", r, err.file, err.line, err.msg);
        return sc;
}

static const ClassAd *slot_named(const SimScenario *sc, const char *name) {
        for (size_t i = 0; i < sc->n_slots; i++)
                if (strcmp(sc->slots[i].name, name) == 0)
                        return sc->slots[i].ad;
        GLEAN_TEST_CHECK_FATAL(false, "no slot %s", name);
        return NULL;
}

/* attr of ad, evaluated and unparsed, equals want. */
static void check_attr(const ClassAd *ad, const char *attr, const char *want) {
        CaValue v = ca_undefined();
        char *got;

        GLEAN_TEST_CHECK_FATAL(classad_eval_attr(ad, attr, CA_MODE_OLD, &v) == 0, "%s: evaluation failed", attr);
        got = ca_value_unparse(&v);
        GLEAN_TEST_CHECK(got && strcmp(got, want) == 0, "%s is %s, want %s", attr, got ? got : "(null)", want);
        free(got);
        ca_value_clear(&v);
}

/* Requirements of a against b. */
static bool requires(const ClassAd *a, const ClassAd *b) {
        return classad_requirements_met(a, b, CA_MODE_OLD);
}

/* ---- lines and defaults ---- */

static void test_slot_defaults(void) {
        SimScenario *sc = parse_ok("---\nslot\nslots 2 [ Cpus = 4; Memory = 8192 ]\n");

        CU_ASSERT_EQUAL_FATAL(sc->n_slots, 3);
        const ClassAd *s1 = slot_named(sc, "slot1@sim"), *s3 = slot_named(sc, "slot3@sim");
        static const char *const want1[][2] = {
                { "Name", "\"slot1@sim\"" }, { "Machine", "\"sim\"" },       { "SlotID", "1" },
                { "State", "\"Unclaimed\"" }, { "Activity", "\"Idle\"" },   { "Start", "true" },
                { "Rank", "0" },               { "Cpus", "1" },                 { "Memory", "1024" },
                { "Disk", "1000000" },         { "Arch", "\"X86_64\"" },      { "OpSys", "\"LINUX\"" },
                { "SlotWeight", "1" },         { "SlotType", "\"Static\"" },  { "MyType", "\"Machine\"" },
                { "EnteredCurrentState", "1767225600" },
                { "TotalSlotCpus", "1" },
        };
        for (size_t i = 0; i < sizeof want1 / sizeof *want1; i++)
                check_attr(s1, want1[i][0], want1[i][1]);
        check_attr(s3, "SlotID", "3");
        check_attr(s3, "SlotWeight", "4");
        check_attr(s3, "TotalSlotMemory", "8192");
        CU_ASSERT_FALSE(classad_has(s1, "PartitionableSlot"));
        CU_ASSERT_EQUAL(sc->slots[2].cpus, 4);
        CU_ASSERT_EQUAL(sc->slots[2].memory, 8192);
        CU_ASSERT_EQUAL(sc->slots[2].disk, 1000000);
        CU_ASSERT_EQUAL(sc->slots[2].line, 3);
        CU_ASSERT_EQUAL(sc->slots[0].at, 0);
        CU_ASSERT_EQUAL(sc->cycles, 0);
        CU_ASSERT_EQUAL(sc->interval, 60); /* NEGOTIATOR_INTERVAL's default */
        CU_ASSERT_STRING_EQUAL(sc->domain, "sim");
        sim_scenario_free(sc);
}

static void test_slot_names(void) {
        SimScenario *sc = parse_ok("---\n"
                                    "slot [ Name = \"slot2@sim\" ]\n"
                                    "slots 2\n"                          /* slot1@sim, then slot3@sim */
                                    "slots 2 [ Machine = \"m1\" ]\n"     /* slot1@m1, slot2@m1 */
                                    "slot [ Name = \"big@m2\" ]\n"       /* Machine m2 */
                                    "slot [ Machine = \"m2\" ]\n");      /* slot1@m2 */
        static const char *const names[] = { "slot2@sim", "slot1@sim", "slot3@sim", "slot1@m1",
                                             "slot2@m1",  "big@m2",    "slot1@m2" };

        CU_ASSERT_EQUAL_FATAL(sc->n_slots, 7);
        for (size_t i = 0; i < 7; i++)
                GLEAN_TEST_CHECK(strcmp(sc->slots[i].name, names[i]) == 0, "slot %zu is %s, want %s", i,
                                 sc->slots[i].name, names[i]);
        check_attr(slot_named(sc, "big@m2"), "Machine", "\"m2\"");
        check_attr(slot_named(sc, "slot2@m1"), "Machine", "\"m1\"");
        check_attr(slot_named(sc, "slot2@m1"), "SlotID", "2");
        sim_scenario_free(sc);
}

static void test_partitionable(void) {
        SimScenario *sc = parse_ok("---\n"
                                    "slot [ PartitionableSlot = true; Cpus = 8; Memory = 4 * 4096;\n"
                                    "       Disk = 2000000 ]  # one machine\n");

        CU_ASSERT_EQUAL_FATAL(sc->n_slots, 1);
        CU_ASSERT_TRUE(sc->slots[0].partitionable);
        CU_ASSERT_EQUAL(sc->slots[0].cpus, 8);
        CU_ASSERT_EQUAL(sc->slots[0].memory, 16384);
        check_attr(sc->slots[0].ad, "SlotType", "\"Partitionable\"");
        check_attr(sc->slots[0].ad, "TotalSlotCpus", "8");
        check_attr(sc->slots[0].ad, "TotalSlotMemory", "16384");
        check_attr(sc->slots[0].ad, "SlotWeight", "8");
        sim_scenario_free(sc);
}

static void test_config_in_ads(void) {
        SimScenario *sc = parse_ok("START = TARGET.Owner != \"mallory\"\n"
                                    "RANK = TARGET.JobPrio\n"
                                    "SLOT_WEIGHT = Cpus * 2\n"
                                    "UID_DOMAIN = example.org\n"
                                    "NEGOTIATOR_INTERVAL = 300\n"
                                    "---\n"
                                    "slots 2 [ Cpus = 2 ]\n"
                                    "slot [ Requirements = false ]\n"
                                    "submitter alice\n"
                                    "submitter mallory\n"
                                    "jobs alice 1\n"
                                    "jobs mallory 1 [ JobPrio = 7 ]\n");
        const ClassAd *slot = sc->slots[0].ad, *alice = sc->jobs[0].ad, *mallory = sc->jobs[1].ad;

        CU_ASSERT_EQUAL(sc->interval, 300);
        CU_ASSERT_STRING_EQUAL(sc->domain, "example.org");
        CU_ASSERT_STRING_EQUAL(sc->submitters[0].name, "alice@example.org");
        check_attr(slot, "SlotWeight", "4");
        CU_ASSERT_TRUE(requires(slot, alice));
        CU_ASSERT_FALSE(requires(slot, mallory));
        CU_ASSERT_EQUAL(classad_rank(slot, mallory, CA_MODE_OLD), 7);
        CU_ASSERT_FALSE(requires(sc->slots[2].ad, alice));
        CU_ASSERT_TRUE(requires(alice, slot));
        sim_scenario_free(sc);

        /* The built-in START is the desktop policy: not for a simulated pool. */
        sc = parse_ok("---\nslot\n");
        check_attr(sc->slots[0].ad, "Requirements", "true");
        sim_scenario_free(sc);
}

static void test_submitters(void) {
        SimScenario *sc = parse_ok("GROUP_NAMES = group_a, group_a.sub\n"
                                    "---\n"
                                    "submitter alice\n"
                                    "submitter bob factor 2.5 rup 10 usage 4 for 2h\n"
                                    "submitter carol nice\n"
                                    "submitter dave group group_a.sub\n"
                                    "submitter erin@elsewhere.org\n"
                                    "submitter bob group group_a   # another bob, in a group\n");
        static const struct {
                const char *label, *name, *user, *group;
                bool nice;
        } want[] = {
                { "alice", "alice@sim", "alice@sim", NULL, false },
                { "bob", "bob@sim", "bob@sim", NULL, false },
                { "carol", "nice-user.carol@sim", "carol@sim", NULL, true },
                { "dave", "group_a.sub.dave@sim", "dave@sim", "group_a.sub", false },
                { "erin@elsewhere.org", "erin@elsewhere.org", "erin@elsewhere.org", NULL, false },
                { "bob", "group_a.bob@sim", "bob@sim", "group_a", false },
        };
        size_t k;

        CU_ASSERT_EQUAL_FATAL(sc->n_submitters, 6);
        for (size_t i = 0; i < 6; i++) {
                const SimScenarioSubmitter *s = &sc->submitters[i];
                GLEAN_TEST_CHECK(strcmp(s->label, want[i].label) == 0 && strcmp(s->name, want[i].name) == 0 &&
                                         strcmp(s->user, want[i].user) == 0 && s->nice == want[i].nice &&
                                         (want[i].group ? s->group && strcmp(s->group, want[i].group) == 0
                                                        : !s->group),
                                 "submitter %zu: %s %s %s %s", i, s->label, s->name, s->user,
                                 s->group ? s->group : "-");
        }
        const SimScenarioSubmitter *bob = &sc->submitters[1];
        CU_ASSERT_TRUE(bob->has_factor && bob->factor == 2.5);
        CU_ASSERT_TRUE(bob->has_rup && bob->rup == 10);
        CU_ASSERT_TRUE(bob->usage_weight == 4 && bob->usage_time == 7200);
        CU_ASSERT_FALSE(sc->submitters[0].has_factor || sc->submitters[0].has_rup || sc->submitters[0].usage_time);

        CU_ASSERT_EQUAL(sim_scenario_find_submitter(sc, "alice", &k), 0);
        CU_ASSERT_EQUAL(k, 0);
        CU_ASSERT_EQUAL(sim_scenario_find_submitter(sc, "bob", &k), -EEXIST);
        CU_ASSERT_EQUAL(sim_scenario_find_submitter(sc, "group_a.bob", &k), 0);
        CU_ASSERT_EQUAL(k, 5);
        CU_ASSERT_EQUAL(sim_scenario_find_submitter(sc, "bob@sim", &k), 0);
        CU_ASSERT_EQUAL(k, 1);
        CU_ASSERT_EQUAL(sim_scenario_find_submitter(sc, "nice-user.carol", &k), 0);
        CU_ASSERT_EQUAL(k, 2);
        CU_ASSERT_EQUAL(sim_scenario_find_submitter(sc, "zoe", &k), -ENOENT);
        sim_scenario_free(sc);
}

static void test_jobs(void) {
        SimScenario *sc = parse_ok("GROUP_NAMES = group_a\n"
                                    "---\n"
                                    "submitter alice\n"
                                    "submitter carol nice\n"
                                    "submitter dave group group_a\n"
                                    "jobs alice 20 runtime 1h [ RequestMemory = 2048 ]\n"
                                    "jobs carol 3\n"
                                    "at 1h30m jobs dave 2 runtime 45m [ JobPrio = 5;\n"
                                    "    Requirements = TARGET.Cpus >= 1 ]\n"
                                    "jobs alice 1 runtime forever\n");
        const ClassAd *a = sc->jobs[0].ad, *c = sc->jobs[1].ad, *d = sc->jobs[2].ad;
        static const char *const want_a[][2] = {
                { "Owner", "\"alice\"" }, { "User", "\"alice@sim\"" }, { "QDate", "1767225600" },
                { "ClusterId", "1" },     { "ProcId", "0" },           { "JobPrio", "0" },
                { "JobStatus", "1" },     { "JobUniverse", "5" },
                { "RequestCpus", "1" },   { "RequestMemory", "2048" }, { "RequestDisk", "1024" },
                { "MyType", "\"Job\"" },  { "Rank", "0.0" },
        };

        CU_ASSERT_EQUAL_FATAL(sc->n_jobs, 4);
        CU_ASSERT_EQUAL(sc->total_jobs, 26);
        for (size_t i = 0; i < sizeof want_a / sizeof *want_a; i++)
                check_attr(a, want_a[i][0], want_a[i][1]);
        CU_ASSERT_FALSE(classad_has(a, "AccountingGroup") || classad_has(a, "NiceUser"));
        char *req = classad_unparse_attr(a, "Requirements");
        GLEAN_TEST_CHECK(req && strcmp(req, "(TARGET.Arch == \"X86_64\") && (TARGET.OpSys == \"LINUX\") && "
                                             "(TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) && "
                                             "(TARGET.Cpus >= RequestCpus)") == 0,
                         "Requirements = %s", req);
        free(req);
        /* the requests count: 2 GB fit the default slot of 1 GB no more */
        SimScenario *pool = parse_ok("---\nslot\nslot [ Memory = 4096 ]\n");
        CU_ASSERT_FALSE(requires(a, pool->slots[0].ad));
        CU_ASSERT_TRUE(requires(a, pool->slots[1].ad));
        sim_scenario_free(pool);
        CU_ASSERT_TRUE(sc->jobs[0].count == 20 && sc->jobs[0].runtime == 3600 && sc->jobs[0].at == 0 &&
                       sc->jobs[0].submitter == 0 && sc->jobs[0].cluster == 1 && sc->jobs[0].line == 6);
        check_attr(c, "NiceUser", "true");
        check_attr(c, "ClusterId", "2");
        CU_ASSERT_EQUAL(sc->jobs[1].runtime, NEGO_RUNTIME_FOREVER);
        check_attr(d, "AccountingGroup", "\"group_a.dave\"");
        check_attr(d, "QDate", "1767231000");
        check_attr(d, "JobPrio", "5");
        CU_ASSERT_TRUE(sc->jobs[2].at == 5400 && sc->jobs[2].runtime == 2700 && sc->jobs[2].line == 8);
        CU_ASSERT_EQUAL(sc->jobs[3].runtime, NEGO_RUNTIME_FOREVER);

        /* Each job's submitter is what the accounting library makes of its ad. */
        for (size_t i = 0; i < sc->n_jobs; i++) {
                char *name = NULL, why[128];
                CU_ASSERT_EQUAL_FATAL(acct_job_submitter(sc->jobs[i].ad, sc->domain, &name, why, sizeof why), 0);
                GLEAN_TEST_CHECK(strcmp(name, sc->submitters[sc->jobs[i].submitter].name) == 0, "jobs %zu: %s", i,
                                 name);
                free(name);
        }
        sim_scenario_free(sc);
}

static void test_arrivals_and_cycles(void) {
        SimScenario *sc = parse_ok("# no configuration part\n"
                                    "cycles 40\n"
                                    "at 2h slots 3 [ Cpus = 2 ]\n"
                                    "slot\n"
                                    "at 90 slot [ Name = \"late@x\" ]\n");

        CU_ASSERT_EQUAL(sc->cycles, 40);
        CU_ASSERT_EQUAL_FATAL(sc->n_slots, 5);
        CU_ASSERT_EQUAL(sc->slots[0].at, 7200);
        CU_ASSERT_EQUAL(sc->slots[3].at, 0);
        CU_ASSERT_STRING_EQUAL(sc->slots[3].name, "slot4@sim");
        CU_ASSERT_EQUAL(sc->slots[4].at, 90);
        check_attr(sc->slots[0].ad, "EnteredCurrentState", "1767232800");
        sim_scenario_free(sc);
}

static void test_comments_and_crlf(void) {
        SimScenario *sc = parse_ok("# a comment\r\n"
                                    "PRIORITY_HALFLIFE = 600\r\n"
                                    "---  \r\n"
                                    "\r\n"
                                    "   # indented comment\r\n"
                                    "slot [ Arch = \"#not a comment\" ]   # but this is\r\n"
                                    "slot [\r\n"
                                    "  Cpus = 2;  # a comment inside\r\n"
                                    "  Memory = 512\r\n"
                                    "]\r\n"
                                    "cycles 3\r\n");

        CU_ASSERT_EQUAL_FATAL(sc->n_slots, 2);
        check_attr(sc->slots[0].ad, "Arch", "\"#not a comment\"");
        check_attr(sc->slots[1].ad, "Memory", "512");
        CU_ASSERT_EQUAL(sc->slots[1].line, 7);
        CU_ASSERT_EQUAL(sc->cycles, 3);
        sim_scenario_free(sc);
}

static void test_durations(void) {
        static const struct {
                const char *text;
                int64_t want; /* -1: refused */
        } cases[] = {
                { "0", 0 },         { "90", 90 },      { "90s", 90 },   { "30m", 1800 },  { "1h30m", 5400 },
                { "2d", 172800 },   { "1d2h3m4s", 93784 }, { "1h1h", 7200 }, { "", -1 },    { "h", -1 },
                { "-5", -1 },       { "1.5h", -1 },    { "5x", -1 },    { "1h 30m", -1 }, { "+5", -1 },
                { "99999999999999999999", -1 },        { "36600d", 3162240000 },         { "36600d1s", -1 },
        };

        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                int64_t v = -1;
                int r = sim_scenario_parse_duration(cases[i].text, &v);
                GLEAN_TEST_CHECK(cases[i].want < 0 ? r == -EINVAL : r == 0 && v == cases[i].want,
                                 "'%s': %d, %lld", cases[i].text, r, (long long) v);
        }
}

static void test_limits(void) {
        SimScenarioLimits lim = { .max_slots = 10, .max_jobs = 100 };
        SimScenario *sc = NULL;
        ConfigError err = {};

        CU_ASSERT_EQUAL(sim_scenario_parse("slots 10\nsubmitter a\njobs a 100\n", "t", &lim, &sc, &err), 0);
        sim_scenario_free(sc);
        CU_ASSERT_EQUAL(sim_scenario_parse("slots 10\nslot\n", "t", &lim, &sc, &err), -E2BIG);
        CU_ASSERT_EQUAL(err.line, 2);
        CU_ASSERT_EQUAL(sim_scenario_parse("submitter a\njobs a 60\njobs a 41\n", "t", &lim, &sc, &err), -E2BIG);
        CU_ASSERT_EQUAL(err.line, 3);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "more than 100 jobs"));
}

static void test_load(void) {
        SimScenario *sc = NULL;
        ConfigError err = {};
        char path[] = "/tmp/glean-scenario-XXXXXX";
        int fd = mkstemp(path);

        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_EQUAL(write(fd, "slot\n\0x", 7), 7);
        close(fd);
        CU_ASSERT_EQUAL(sim_scenario_load(path, &sc, &err), -EINVAL);
        CU_ASSERT_STRING_EQUAL(err.file, path);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "NUL"));
        unlink(path);
        CU_ASSERT_EQUAL(sim_scenario_load(path, &sc, &err), -ENOENT);
        CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, "cannot read"));
}

/* Every scenario of the examples and the tests reads. */
static void test_examples(void) {
        glob_t g = { 0 };
        size_t n = 0;

        glob("examples/*.scn", 0, NULL, &g);
        glob("tests/sim/scenarios/*.scn", GLOB_APPEND, NULL, &g);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                SimScenario *sc = NULL;
                ConfigError err = {};
                int r = sim_scenario_load(g.gl_pathv[i], &sc, &err);
                /* bad-*.scn are errors on purpose */
                bool bad = strstr(g.gl_pathv[i], "/bad-") != NULL;
                GLEAN_TEST_CHECK(bad ? r == -EINVAL && err.line > 0 : r == 0, "%s: %d: %s:%d: %s", g.gl_pathv[i],
                                 r, err.file, err.line, err.msg);
                sim_scenario_free(sc);
                n++;
        }
        globfree(&g);
        GLEAN_TEST_CHECK(n >= 3, "only %zu example scenarios", n);
}

/* ---- errors ---- */

typedef struct ErrorCase {
        const char *text;
        const char *file; /* NULL: t.scn */
        int line;
        const char *msg;  /* a part of the reason */
} ErrorCase;

#define SUB "---\nsubmitter alice\n"

static const ErrorCase errors[] = {
        /* the file's structure */
        { "---\nfrobnicate 3\n", NULL, 2, "unknown line 'frobnicate'" },
        { "---\n[ Cpus = 1 ]\n", NULL, 2, "expected slot, slots" },
        { "---\n\nslot [ Cpus = 1;\n  Memory = 2\n", NULL, 3, "no closing ']'" },
        { "---\nslot [ Cpus = ; ]\n", NULL, 2, "not a ClassAd (column" },
        { "---\nslot [ Cpus = 1;\n Memory = ) ]\n", NULL, 3, "not a ClassAd" },
        { "---\ncycles 0\n", NULL, 2, "cycles: expected a number from 1" },
        { "---\ncycles 5 6\n", NULL, 2, "cycles: expected" },
        { "---\ncycles 2000000\n", NULL, 2, "cycles: expected" },
        { "---\ncycles 5\ncycles 6\n", NULL, 3, "cycles given twice" },
        { "---\nat\n", NULL, 2, "at: expected a time" },
        { "---\nat soon slot\n", NULL, 2, "at: expected a time" },
        { "---\nat 5m\n", NULL, 2, "at 5m: expected slot, slots or jobs" },
        { "---\nat 5m submitter bob\n", NULL, 2, "only those arrive later" },
        { "---\nat 5m cycles 3\n", NULL, 2, "expected slot, slots or jobs" },
        /* the configuration part */
        { "GROUP_NAMES = a\nFOO\n---\n", NULL, 2, "" },
        { "NEGOTIATOR_INTERVAL = 0\n---\n", NULL, 1, "NEGOTIATOR_INTERVAL must be" },
        { "NEGOTIATOR_INTERVAL = soon\n---\n", NULL, 1, "NEGOTIATOR_INTERVAL" },
        { "\nSTART = (((\n---\nslot\n", NULL, 2, "START = ((( is not a ClassAd expression" },
        { "SLOT_WEIGHT = Cpus +\n---\n", NULL, 1, "SLOT_WEIGHT" },
        { "UID_DOMAIN = a b\n---\n", NULL, 1, "UID_DOMAIN must be a domain name" },
        { "PRIORITY_HALFLIFE = forever\n---\n", NULL, 1, "PRIORITY_HALFLIFE" },
        { "GROUP_NAMES = a.b\n---\n", NULL, 1, "" },
        /* slots */
        { "---\nslots\n", NULL, 2, "slots: expected the number of slots" },
        { "---\nslots 0\n", NULL, 2, "slots: expected the number" },
        { "---\nslots -3 [ ]\n", NULL, 2, "slots: expected the number" },
        { "---\nslots ten\n", NULL, 2, "slots: expected the number" },
        { "---\nslot 3\n", NULL, 2, "slot: unexpected '3'" },
        { "---\nslots 3 Cpus = 1\n", NULL, 2, "the ad goes in [ ]" },
        { "---\nslot [ ] extra\n", NULL, 2, "not a ClassAd" },
        { "---\nslots 2 [ Name = \"x@y\" ]\n", NULL, 2, "leave Name out" },
        { "---\nslot [ Name = \"\" ]\n", NULL, 2, "Name cannot be empty" },
        { "---\nslot [ Name = 3 ]\n", NULL, 2, "Name must be a string" },
        { "---\nslot [ Machine = \"\" ]\n", NULL, 2, "Machine cannot be empty" },
        { "---\nslot [ Machine = false ]\n", NULL, 2, "Machine must be a string" },
        { "---\nslot [ State = \"Claimed\" ]\n", NULL, 2, "every slot starts Unclaimed" },
        { "---\nslot [ PartitionableSlot = \"yes\" ]\n", NULL, 2, "PartitionableSlot must be true or false" },
        { "---\nslot [ Cpus = -1 ]\n", NULL, 2, "Cpus must be a number, 0 or more" },
        { "---\nslot [ Memory = \"lots\" ]\n", NULL, 2, "Memory must be a number" },
        { "---\nslot [ Disk = Undefined ]\n", NULL, 2, "Disk must be a number" },
        { "---\nslot [ SlotWeight = \"x\" ]\n", NULL, 2, "SlotWeight must be a number" },
        { "SLOT_WEIGHT = Foo\n---\nslot\n", NULL, 3, "SlotWeight must be a number" },
        { "---\nslot [ Name = \"a@b\" ]\n\nslot [ Name = \"a@b\" ]\n", NULL, 4,
          "a second slot named a@b (the first is on line 2)" },
        { "---\nslot\nslot [ Name = \"slot1@sim\" ]\n", NULL, 3, "a second slot named slot1@sim" },
        /* submitters */
        { "---\nsubmitter\n", NULL, 2, "submitter: expected a user name" },
        { "---\nsubmitter @x\n", NULL, 2, "expected a user name" },
        { "---\nsubmitter a@\n", NULL, 2, "expected a user name" },
        { "---\nsubmitter a@b@c\n", NULL, 2, "expected a user name" },
        { "---\nsubmitter \"a\"\n", NULL, 2, "expected a user name" },
        { "---\nsubmitter nice-user.bob\n", NULL, 2, "write 'submitter NAME nice'" },
        { "---\nsubmitter bob [ x = 1 ]\n", NULL, 2, "submitter: unexpected '[ x = 1 ]'" },
        { "---\nsubmitter bob fast\n", NULL, 2, "unexpected 'fast' (expected factor, rup, usage, nice or group)" },
        { "---\nsubmitter bob factor\n", NULL, 2, "factor: expected a number, 1 or more" },
        { "---\nsubmitter bob factor 0.5\n", NULL, 2, "factor: expected a number, 1 or more" },
        { "---\nsubmitter bob factor nan\n", NULL, 2, "factor: expected" },
        { "---\nsubmitter bob factor 2 factor 3\n", NULL, 2, "factor given twice" },
        { "---\nsubmitter bob rup 0.1\n", NULL, 2, "rup: expected a number, 0.5 or more" },
        { "---\nsubmitter bob rup inf\n", NULL, 2, "rup: expected" },
        { "---\nsubmitter bob rup 1 rup 2\n", NULL, 2, "rup given twice" },
        { "---\nsubmitter bob usage 10\n", NULL, 2, "usage: expected 'usage WEIGHT for DURATION'" },
        { "---\nsubmitter bob usage 10 over 2h\n", NULL, 2, "usage: expected" },
        { "---\nsubmitter bob usage 0 for 2h\n", NULL, 2, "usage: expected" },
        { "---\nsubmitter bob usage 1 for 0\n", NULL, 2, "usage: expected" },
        { "---\nsubmitter bob usage 1 for 1h usage 1 for 1h\n", NULL, 2, "usage given twice" },
        { "---\nsubmitter bob nice nice\n", NULL, 2, "nice given twice" },
        { "---\nsubmitter bob group\n", NULL, 2, "group: expected a group" },
        { "---\nsubmitter bob group g\n", NULL, 2, "group g: the configuration has no GROUP_NAMES" },
        { "GROUP_NAMES = ga, gb\n---\nsubmitter bob group gc\n", NULL, 3, "not one of GROUP_NAMES (ga, gb)" },
        { "GROUP_NAMES = ga\n---\nsubmitter bob group <none>\n", NULL, 3, "not one of GROUP_NAMES" },
        { "GROUP_NAMES = ga\n---\nsubmitter bob group ga group ga\n", NULL, 3, "group given twice" },
        { "GROUP_NAMES = ga\n---\nsubmitter bob nice group ga\n", NULL, 3, "nice and group exclude each other" },
        { "GROUP_NAMES = ga\n---\nsubmitter bob group g\"a\n", NULL, 3, "a quote" },
        { "---\nsubmitter bob\n# again\nsubmitter bob factor 2\n", NULL, 4,
          "submitter bob@sim is declared twice (first on line 2)" },
        { "---\nsubmitter bob@sim\nsubmitter bob\n", NULL, 3, "declared twice" },
        /* jobs */
        { "---\njobs\n", NULL, 2, "jobs: expected a submitter" },
        { "---\njobs bob 3\n", NULL, 2, "jobs: no submitter 'bob' (declare it with a submitter line before)" },
        { "---\njobs alice 3\nsubmitter alice\n", NULL, 2, "no submitter 'alice'" },
        { "GROUP_NAMES = g\n---\nsubmitter bob\nsubmitter bob group g\njobs bob 1\n", NULL, 5,
          "'bob' names several submitters" },
        { SUB "jobs alice\n", NULL, 3, "jobs: expected the number of jobs" },
        { SUB "jobs alice 0\n", NULL, 3, "expected the number of jobs" },
        { SUB "jobs alice many\n", NULL, 3, "expected the number of jobs" },
        { SUB "jobs alice 3 forever\n", NULL, 3, "unexpected 'forever' (expected runtime" },
        { SUB "jobs alice 3 runtime\n", NULL, 3, "runtime: expected a duration over 0" },
        { SUB "jobs alice 3 runtime 0\n", NULL, 3, "runtime: expected a duration over 0" },
        { SUB "jobs alice 3 runtime 1x\n", NULL, 3, "runtime: expected" },
        { SUB "jobs alice 3 runtime 1h runtime 2h\n", NULL, 3, "runtime given twice" },
        { SUB "jobs alice 3 [ RequestCpus = ]\n", NULL, 3, "not a ClassAd (column 30)" },
        { SUB "jobs alice 3 [ ClusterId = 7 ]\n", NULL, 3, "ClusterId and ProcId are the simulator's" },
        { SUB "jobs alice 3 [ ProcId = 7 ]\n", NULL, 3, "ClusterId and ProcId" },
        { SUB "jobs alice 3 [ Owner = \"bob\"; User = \"bob@sim\" ]\n", NULL, 3,
          "the ad makes these jobs bob@sim's, not alice@sim's" },
        { SUB "jobs alice 3 [ NiceUser = true ]\n", NULL, 3, "nice-user.alice@sim's, not alice@sim's" },
        { SUB "jobs alice 3 [ AccountingGroup = \"x y\" ]\n", NULL, 3, "white space" },
        { "---\nsubmitter a\nslots 2 [ Cpus = 1 ]\njobs a 2 runtime 1h [ RequestCpus = 1; Requirements = \n"
          "  Cpus > ]\n",
          NULL, 5, "not a ClassAd" },
};

static void test_errors(void) {
        for (size_t i = 0; i < sizeof errors / sizeof *errors; i++) {
                const ErrorCase *c = &errors[i];
                SimScenario *sc = (SimScenario *) 0x1;
                ConfigError err = {};
                int r = sim_scenario_parse(c->text, "t.scn", NULL, &sc, &err);

                GLEAN_TEST_CHECK(r == -EINVAL, "case %zu: %d, want -EINVAL", i, r);
                GLEAN_TEST_CHECK(sc == (SimScenario *) 0x1, "case %zu: the output was set", i);
                GLEAN_TEST_CHECK(strcmp(err.file, c->file ? c->file : "t.scn") == 0 && err.line == c->line &&
                                         strstr(err.msg, c->msg) != NULL && err.msg[0],
                                 "case %zu: %s:%d: %s; want %s:%d: ...%s...", i, err.file, err.line, err.msg,
                                 c->file ? c->file : "t.scn", c->line, c->msg);
        }
}

static CU_TestInfo reader_tests[] = {
        { "slot-defaults", test_slot_defaults },
        { "slot-names", test_slot_names },
        { "partitionable", test_partitionable },
        { "config-in-ads", test_config_in_ads },
        { "submitters", test_submitters },
        { "jobs", test_jobs },
        { "arrivals-and-cycles", test_arrivals_and_cycles },
        { "comments-and-crlf", test_comments_and_crlf },
        { "durations", test_durations },
        { "limits", test_limits },
        { "load", test_load },
        { "examples", test_examples },
        { "errors", test_errors },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "scenario", NULL, NULL, NULL, NULL, reader_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-simulate.c — the simulator end to end (sim/simulate.h and
 * `glean negotiate --simulate`): two users with equal factors converging
 * to equal shares, a nice user getting only what nobody else wants, quota
 * groups, seed 003's partitionable slot over cycles, preemption by
 * priority sending jobs back to idle, usage charged to the second, slots
 * and jobs arriving later; and the command: its text, its --json keys, a
 * malformed scenario's exit status 2 with file:line, --plot.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim/simulate.h"
#include "test-util.h"

/* ---- running a scenario through the library ---- */

typedef struct Run {
        SimScenario *sc;
        Sim *sim;
} Run;

static Run run_start(const char *text_or_path, bool is_path) {
        Run run = { 0 };
        ConfigError err = {};
        int r = is_path ? sim_scenario_load(text_or_path, &run.sc, &err)
                        : sim_scenario_parse(text_or_path, "t.scn", NULL, &run.sc, &err);

        GLEAN_TEST_CHECK_FATAL(r == 0, "scenario: %s:%d: %s", err.file, err.line, err.msg);
        r = sim_new(run.sc, 0, &run.sim, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "simulation: %s:%d: %s", err.file, err.line, err.msg);
        return run;
}

static const SimReport *step(Run *run) {
        const SimReport *rep = NULL;
        int r = sim_step(run->sim, &rep);

        GLEAN_TEST_CHECK_FATAL(r == 0 && rep, "sim_step: %s", strerror(-r));
        return rep;
}

static void run_done(Run *run) {
        sim_free(run->sim);
        sim_scenario_free(run->sc);
}

static const SimSubmitter *sub(const SimReport *rep, const char *name) {
        for (size_t i = 0; i < rep->n_submitters; i++)
                if (strcmp(rep->submitters[i].name, name) == 0)
                        return &rep->submitters[i];
        GLEAN_TEST_CHECK_FATAL(false, "no submitter %s", name);
        return NULL;
}

static size_t matches_of(const SimReport *rep, const char *name) {
        size_t n = 0;

        for (size_t i = 0; i < rep->n_matches; i++)
                n += strcmp(rep->matches[i].submitter, name) == 0;
        return n;
}

/* ---- fair share ---- */

/* Two users with equal factors and no history, alice's jobs first: she
 * takes the pool; as her jobs end, bob gets what the pie gives him, until
 * they hold half each with equal priorities. */
static void test_equal_shares(void) {
        Run run = run_start("PRIORITY_HALFLIFE = 1800\n"
                            "NEGOTIATOR_INTERVAL = 300\n"
                            "---\n"
                            "slots 10\n"
                            "submitter alice\n"
                            "submitter bob\n"
                            "jobs alice 300 runtime 10m\n"
                            "at 30m jobs bob 300 runtime 10m\n",
                            false);
        const SimReport *rep = NULL;

        for (unsigned c = 1; c <= 6; c++)
                rep = step(&run);
        GLEAN_TEST_CHECK(sub(rep, "alice@sim")->weight_in_use == 10 && sub(rep, "bob@sim")->weight_in_use == 0,
                         "at 25m alice holds the pool: %g, %g", sub(rep, "alice@sim")->weight_in_use,
                         sub(rep, "bob@sim")->weight_in_use);
        rep = step(&run); /* 30m: alice's jobs end as bob's come, and his priority is the better */
        GLEAN_TEST_CHECK(sub(rep, "bob@sim")->weight_in_use > sub(rep, "alice@sim")->weight_in_use,
                         "at 30m bob gets the larger slice: %g, %g", sub(rep, "bob@sim")->weight_in_use,
                         sub(rep, "alice@sim")->weight_in_use);
        double worst = 0;
        for (unsigned c = 8; c <= 72; c++) {
                rep = step(&run);
                if (c > 48) {
                        const SimSubmitter *a = sub(rep, "alice@sim"), *b = sub(rep, "bob@sim");
                        worst = fmax(worst, fabs(a->weight_in_use - b->weight_in_use));
                        GLEAN_TEST_CHECK(fabs(a->eup - b->eup) < 0.05 * a->eup, "cycle %u: EUP %g and %g", c, a->eup,
                                         b->eup);
                }
        }
        GLEAN_TEST_CHECK(worst <= 2, "after 4 hours, shares still differ by %g slots", worst);
        GLEAN_TEST_CHECK(rep->cycle == 72 && rep->time == 71 * 300, "cycle %u at %lld", rep->cycle,
                         (long long) rep->time);
        run_done(&run);
}

/* examples/fair-share.scn says what it shows: alice's history gives bob
 * the pool at first, and in four hours they share it half and half. */
static void test_example_fair_share(void) {
        Run run = run_start("examples/fair-share.scn", true);
        const SimReport *rep = step(&run);

        CU_ASSERT_EQUAL(run.sc->cycles, 48);
        GLEAN_TEST_CHECK(sub(rep, "bob@sim")->weight_in_use >= 15, "bob holds %g at first",
                         sub(rep, "bob@sim")->weight_in_use);
        GLEAN_TEST_CHECK(sub(rep, "alice@sim")->rup > 10, "alice's RUP %g", sub(rep, "alice@sim")->rup);
        for (unsigned c = 2; c <= 48; c++)
                rep = step(&run);
        const SimSubmitter *a = sub(rep, "alice@sim"), *b = sub(rep, "bob@sim");
        GLEAN_TEST_CHECK(fabs(a->weight_in_use - b->weight_in_use) <= 1 && fabs(a->eup - b->eup) < 0.05 * a->eup,
                         "at the end: %g and %g slots, EUP %g and %g", a->weight_in_use, b->weight_in_use, a->eup,
                         b->eup);
        run_done(&run);
}

/* ---- the nice user ---- */

/* examples/nice-user.scn: carol's nice jobs get only the slots that alice
 * and bob do not want (and a crumb). */
static void test_nice_user(void) {
        Run run = run_start("examples/nice-user.scn", true);
        const char *carol = "nice-user.carol@sim";
        size_t carol_matches = 0, held_while_others_wait = 0;

        for (unsigned c = 1; c <= run.sc->cycles; c++) {
                const SimReport *rep = step(&run);
                size_t others_idle = sub(rep, "alice@sim")->idle + sub(rep, "bob@sim")->idle;

                /* She matches only when nobody else is left waiting, but for
                 * the crumb HTCondor's pie lets the last submitter of a spin
                 * round up to (bob's slice is 1 - 3e-7 of the pool, not all
                 * of it: the round-up of one slot goes to her). */
                GLEAN_TEST_CHECK(matches_of(rep, carol) <= (others_idle ? 1 : SIZE_MAX),
                                 "cycle %u: carol matched %zu while the others have %zu idle jobs", c,
                                 matches_of(rep, carol), others_idle);
                carol_matches += matches_of(rep, carol);
                if (c == 1)
                        GLEAN_TEST_CHECK(matches_of(rep, carol) == 8 && matches_of(rep, "alice@sim") == 4,
                                         "cycle 1: carol %zu, alice %zu", matches_of(rep, carol),
                                         matches_of(rep, "alice@sim"));
                if (others_idle > 0 && sub(rep, carol)->in_use > 0)
                        held_while_others_wait++;
                GLEAN_TEST_CHECK(sub(rep, carol)->eup > 1e6, "cycle %u: carol's EUP %g", c, sub(rep, carol)->eup);
                GLEAN_TEST_CHECK(rep->n_preemptions == 0, "cycle %u: %zu preemptions", c, rep->n_preemptions);
        }
        /* bob's jobs came while carol's ran (no preemption by default): she
         * kept those, and got the whole pool at the end. */
        GLEAN_TEST_CHECK(held_while_others_wait > 0 && carol_matches >= 20,
                         "carol: %zu cycles holding slots while others waited, %zu matches", held_while_others_wait,
                         carol_matches);
        run_done(&run);
}

/* ---- quota groups ---- */

static void test_groups(void) {
        Run run = run_start("examples/groups.scn", true);
        const SimReport *rep = step(&run);

        GLEAN_TEST_CHECK_FATAL(rep->n_groups == 3, "%zu groups", rep->n_groups);
        CU_ASSERT_STRING_EQUAL(rep->groups[0].name, "<none>");
        CU_ASSERT_STRING_EQUAL(rep->groups[1].name, "group_physics");
        CU_ASSERT_EQUAL(rep->groups[1].quota, 12);
        CU_ASSERT_EQUAL(rep->groups[2].quota, 4);
        CU_ASSERT_EQUAL(rep->groups[0].quota, 0);
        /* physics takes the surplus while chemistry has nothing to run */
        GLEAN_TEST_CHECK(rep->groups[1].in_use == 16, "physics %g", rep->groups[1].in_use);
        for (unsigned c = 2; c <= 36; c++)
                rep = step(&run);
        GLEAN_TEST_CHECK(rep->groups[1].in_use == 12 && rep->groups[2].in_use == 4, "physics %g, chemistry %g",
                         rep->groups[1].in_use, rep->groups[2].in_use);
        GLEAN_TEST_CHECK(sub(rep, "group_physics.alice@sim")->weight_in_use == 6 &&
                                 sub(rep, "group_physics.bob@sim")->weight_in_use == 6,
                         "alice and bob share physics' 12");
        run_done(&run);
}

/* ---- partitionable slots ---- */

/* Seed 003 over cycles: 10 one-core matches carve the 10-core slot; the
 * cores come back when the jobs end and the 5 left match. */
static void test_partitionable(void) {
        Run run = run_start("tests/sim/scenarios/pslot.scn", true);
        const SimReport *rep = step(&run);

        GLEAN_TEST_CHECK_FATAL(rep->n_matches == 10 && rep->n_rejections == 5, "%zu matches, %zu rejections",
                               rep->n_matches, rep->n_rejections);
        for (size_t i = 0; i < 10; i++) {
                char want[32];
                snprintf(want, sizeof want, "slot1_%zu@sim", i + 1);
                GLEAN_TEST_CHECK(strcmp(rep->matches[i].slot, want) == 0 && rep->matches[i].cost == 1 &&
                                         rep->matches[i].reason == NEGO_NO_PREEMPTION,
                                 "match %zu on %s, cost %g", i, rep->matches[i].slot, rep->matches[i].cost);
        }
        CU_ASSERT_EQUAL(rep->slots, 11);
        CU_ASSERT_EQUAL(rep->slots_busy, 10);
        CU_ASSERT_EQUAL(rep->pool_weight, 10);
        rep = step(&run);
        CU_ASSERT_EQUAL(rep->finished, 10);
        GLEAN_TEST_CHECK(rep->n_matches == 5 && strcmp(rep->matches[0].slot, "slot1_11@sim") == 0,
                         "cycle 2: %zu matches", rep->n_matches);
        CU_ASSERT_EQUAL(rep->slots, 6); /* the 10 dynamic slots gone, 5 new */
        CU_ASSERT_EQUAL(rep->pool_weight, 10);
        run_done(&run);
}

/* Issue 22's scenario: a partitionable slot whose SLOT_WEIGHT is
 * floor(Memory / 4096) (32 GB: weight 8) and one submitter's 3 GB jobs.
 * Each 3 GB dynamic slot weighs 0; the pie is the slots' own weights. When
 * the first five jobs end, the next cycle must match the five still idle
 * (11 CPUs and 17 GB free, the submitter alone): the claims still running
 * count their dynamic slots' weight (0), not the costs of their matches
 * (4 of them), which would fill the pie of 4 and stop every match
 * ("submitter's share reached"). */
static const char dslot_scenario[] = "NEGOTIATOR_INTERVAL = 600\n"
                                     "SLOT_WEIGHT = floor(Memory / 4096)\n"
                                     "%s"
                                     "---\n"
                                     "cycles 3\n"
                                     "slot [ PartitionableSlot = true; Cpus = 16; Memory = 32768; Disk = 1000000 ]\n"
                                     "%s";

static void test_dslot_weight(void) {
        char text[1024];
        snprintf(text, sizeof text, dslot_scenario, "",
                 "submitter alice\n"
                 "jobs alice 5 runtime 5m [ RequestCpus = 1; RequestMemory = 3072 ]\n"
                 "jobs alice 10 runtime 1h [ RequestCpus = 1; RequestMemory = 3072 ]\n");
        Run run = run_start(text, false);
        const SimReport *rep = step(&run);
        double cost = 0;
        for (size_t i = 0; i < rep->n_matches; i++)
                cost += rep->matches[i].cost;
        GLEAN_TEST_CHECK(rep->n_matches == 10 && cost == 8, "cycle 1: %zu matches costing %g", rep->n_matches, cost);
        /* after the cycle: each claim charged its dynamic slot's weight, 0 */
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->weight_in_use, 0);
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->in_use, 10);
        CU_ASSERT_EQUAL(rep->pool_weight, 0); /* 2 GB left in the partitionable slot, 10 slots of 3 GB */
        rep = step(&run);
        CU_ASSERT_EQUAL(rep->finished, 5);
        GLEAN_TEST_CHECK(rep->n_matches == 5, "cycle 2, 5 jobs gone: %zu matches, %zu rejections (%s)", rep->n_matches,
                         rep->n_rejections, rep->n_rejections ? rep->rejections[0].reason : "");
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->in_use, 10);
        run_done(&run);
}

/* The same with two submitters of a quota group (a dynamic quota of the
 * whole pool, no surplus): the group's usage is its claims' slot weights
 * too, so the second cycle gives both submitters the freed room. */
static void test_dslot_weight_groups(void) {
        char text[1024];
        snprintf(text, sizeof text, dslot_scenario,
                 "GROUP_NAMES = group_a\n"
                 "GROUP_QUOTA_DYNAMIC_group_a = 1.0\n"
                 "GROUP_ACCEPT_SURPLUS = False\n",
                 "submitter alice group group_a\n"
                 "submitter bob group group_a\n"
                 "jobs alice 3 runtime 5m [ RequestCpus = 1; RequestMemory = 3072 ]\n"
                 "jobs bob 2 runtime 5m [ RequestCpus = 1; RequestMemory = 3072 ]\n"
                 "jobs alice 5 runtime 1h [ RequestCpus = 1; RequestMemory = 3072 ]\n"
                 "jobs bob 5 runtime 1h [ RequestCpus = 1; RequestMemory = 3072 ]\n");
        Run run = run_start(text, false);
        const SimReport *rep = step(&run);
        GLEAN_TEST_CHECK(rep->n_matches == 10, "cycle 1: %zu matches", rep->n_matches);
        size_t first = rep->n_matches;
        rep = step(&run);
        size_t running = sub(rep, "group_a.alice@sim")->in_use + sub(rep, "group_a.bob@sim")->in_use;
        GLEAN_TEST_CHECK(rep->finished > 0 && rep->n_matches == rep->finished && running == first,
                         "cycle 2: %zu finished, %zu matches, %zu running (%s)", rep->finished, rep->n_matches, running,
                         rep->n_rejections ? rep->rejections[0].reason : "");
        GLEAN_TEST_CHECK(rep->n_groups == 0 || rep->groups[rep->n_groups - 1].in_use == 0,
                         "group_a's weight in use: %g", rep->n_groups ? rep->groups[rep->n_groups - 1].in_use : -1);
        run_done(&run);
}

/* ---- preemption ---- */

static void test_preemption(void) {
        Run run = run_start("PREEMPTION_REQUIREMENTS = RemoteUserPrio > SubmitterUserPrio * 1.2\n"
                            "NEGOTIATOR_INTERVAL = 300\n"
                            "---\n"
                            "slots 4\n"
                            "submitter alice usage 4 for 2h\n"
                            "submitter bob\n"
                            "jobs alice 4 runtime 12m\n"
                            "at 10m jobs bob 4 runtime 1h\n",
                            false);
        const SimReport *rep = step(&run);

        CU_ASSERT_EQUAL(matches_of(rep, "alice@sim"), 4);
        step(&run);
        rep = step(&run); /* 10m: bob's better priority takes the slots */
        GLEAN_TEST_CHECK_FATAL(rep->n_preemptions == 4 && rep->n_matches == 4, "%zu preemptions, %zu matches",
                               rep->n_preemptions, rep->n_matches);
        const SimPreemption *p = &rep->preemptions[0];
        GLEAN_TEST_CHECK(strcmp(p->job, "1.0") == 0 && strcmp(p->submitter, "alice@sim") == 0 &&
                                 strcmp(p->by_job, "2.0") == 0 && strcmp(p->by_submitter, "bob@sim") == 0 &&
                                 p->reason == NEGO_PRIORITY && strcmp(p->slot, rep->matches[0].slot) == 0,
                         "preemption: %s (%s) on %s by %s (%s)", p->job, p->submitter, p->slot, p->by_job,
                         p->by_submitter);
        CU_ASSERT_EQUAL(rep->matches[0].reason, NEGO_PRIORITY);
        /* alice's jobs are idle again: their 12 minutes start over, so
         * none of them finishes at 12m */
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->idle, 4);
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->in_use, 0);
        CU_ASSERT_EQUAL(sub(rep, "bob@sim")->in_use, 4);
        rep = step(&run);
        CU_ASSERT_EQUAL(rep->finished, 0);
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->done, 0);
        run_done(&run);
}

/* ---- time ---- */

/* A job of 90 s on a 60 s interval ends at 90, charged to that second:
 * RUP at 120 is 30 s of decay after 90 s of one slot. */
static void test_charged_to_the_second(void) {
        Run run = run_start("PRIORITY_HALFLIFE = 600\n"
                            "NEGOTIATOR_INTERVAL = 60\n"
                            "---\n"
                            "slot\n"
                            "submitter alice\n"
                            "jobs alice 1 runtime 90\n",
                            false);
        const SimReport *rep;

        step(&run);
        rep = step(&run);
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->running, 1);
        rep = step(&run);
        double want = acct_rup_advance(acct_rup_advance(0.5, 1, 90, 600), 0, 30, 600);
        GLEAN_TEST_CHECK(rep->time == 120 && rep->finished == 1 && sub(rep, "alice@sim")->done == 1 &&
                                 fabs(sub(rep, "alice@sim")->rup - want) < 1e-9,
                         "at %lld: RUP %.12g, want %.12g", (long long) rep->time, sub(rep, "alice@sim")->rup, want);
        CU_ASSERT_EQUAL(sub(rep, "alice@sim")->in_use, 0);
        CU_ASSERT_EQUAL(rep->slots_busy, 0);
        run_done(&run);
}

/* Slots and jobs that arrive later join at the first cycle at or after
 * their time; the interval can be given (as --interval does). */
static void test_arrivals(void) {
        SimScenario *sc = NULL;
        Sim *sim = NULL;
        ConfigError err = {};
        const SimReport *rep = NULL;

        CU_ASSERT_FATAL(sim_scenario_parse("---\n"
                                            "slots 2\n"
                                            "at 25m slots 2 [ Cpus = 2 ]\n"
                                            "submitter alice\n"
                                            "jobs alice 2 runtime forever\n"
                                            "at 15m jobs alice 4 runtime forever [ RequestCpus = 2 ]\n",
                                            "t.scn", NULL, &sc, &err) == 0);
        CU_ASSERT_FATAL(sim_new(sc, 600, &sim, &err) == 0);
        unsigned want[][3] = { /* slots, busy, alice's idle */
                               { 2, 2, 0 }, { 2, 2, 0 }, { 2, 2, 4 }, { 4, 4, 2 }, { 4, 4, 2 },
        };
        for (size_t c = 0; c < 5; c++) {
                CU_ASSERT_FATAL(sim_step(sim, &rep) == 0);
                GLEAN_TEST_CHECK(rep->time == (int64_t) c * 600 && rep->slots == want[c][0] &&
                                         rep->slots_busy == want[c][1] && rep->submitters[0].idle == want[c][2],
                                 "cycle %zu at %lld: %zu slots, %zu busy, %zu idle", c + 1, (long long) rep->time,
                                 rep->slots, rep->slots_busy, rep->submitters[0].idle);
        }
        CU_ASSERT_EQUAL(rep->pool_weight, 6);
        CU_ASSERT_EQUAL(rep->submitters[0].weight_in_use, 6);
        sim_free(sim);
        sim_scenario_free(sc);
}

/* A configuration the negotiator refuses is an error at its line. */
static void test_bad_settings(void) {
        SimScenario *sc = NULL;
        Sim *sim = NULL;
        ConfigError err = {};

        CU_ASSERT_FATAL(sim_scenario_parse("\nNEGOTIATOR_PRE_JOB_RANK = (((\n---\nslot\n", "t.scn", NULL, &sc, &err) ==
                        0);
        CU_ASSERT_EQUAL(sim_new(sc, 0, &sim, &err), -EINVAL);
        GLEAN_TEST_CHECK(strcmp(err.file, "t.scn") == 0 && err.line == 2 && strstr(err.msg, "NEGOTIATOR_PRE_JOB_RANK"),
                         "%s:%d: %s", err.file, err.line, err.msg);
        sim_scenario_free(sc);
}

/* ---- the command ---- */

static const char *glean(void) {
        const char *p = getenv("GLEAN");
        return p && *p ? p : "build/bin/glean";
}

#define MAX_ARGS 8

/* glean negotiate ARGS... (NULL-terminated); negotiate(ARGS...). */
static GleanTestRun run_glean(const char *const *args) {
        char *argv[MAX_ARGS + 3] = { (char *) glean(), (char *) "negotiate" };
        GleanTestRun run;

        for (size_t i = 0; i < MAX_ARGS && args[i]; i++)
                argv[i + 2] = (char *) args[i];

        GLEAN_TEST_CHECK_FATAL(glean_test_run(argv, &run) == 0, "cannot run %s", glean());
        return run;
}

#define negotiate(...) run_glean((const char *const[]){ __VA_ARGS__, NULL })

static void test_cli_text(void) {
        GleanTestRun run = negotiate("--simulate", "tests/sim/scenarios/pslot.scn");

        GLEAN_TEST_CHECK(run.status == 0, "exit %d: %s", run.status, run.err);
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "cycle 1 at 0s: 10 matches, 0 preemptions, 5 rejections; 10 slots busy, "
                                               "weight 10 of 10\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "  match    1.0 (alice@sim) on slot1_1@sim: No Preemption, cost 1\n"));
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "  reject   alice@sim, 5 jobs (2.0 2.1 2.2 2.3 2.4): "));
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "\ncycle 3 at 20m: "));
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "  10 jobs finished since the last cycle\n"));
        CU_ASSERT_PTR_NULL(strstr(run.out, "cycle 4"));
        glean_test_run_done(&run);

        run = negotiate("--simulate", "examples/groups.scn", "--cycles", "2", "--interval", "1h");
        GLEAN_TEST_CHECK(run.status == 0, "exit %d: %s", run.status, run.err);
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "\ncycle 2 at 1h: "));
        CU_ASSERT_PTR_NULL(strstr(run.out, "cycle 3"));
        CU_ASSERT_PTR_NOT_NULL(strstr(run.out, "  group_physics        12.00      12.00      12.00\n"));
        glean_test_run_done(&run);
}

/* The worked example of docs/simulate.md is what the command prints
 * (after a change of wording: glean negotiate --simulate
 * tests/sim/scenarios/docs-example.scn > ....out, and the same
 * text into the document). */
static void test_cli_docs_example(void) {
        GleanTestRun run = negotiate("--simulate", "tests/sim/scenarios/docs-example.scn");
        char *want = NULL, *doc = NULL;

        CU_ASSERT_EQUAL_FATAL(glean_test_read_file("tests/sim/scenarios/docs-example.out", &want, NULL), 0);
        CU_ASSERT_EQUAL_FATAL(glean_test_read_file("docs/simulate.md", &doc, NULL), 0);
        GLEAN_TEST_CHECK(run.status == 0 && strcmp(run.out, want) == 0, "the output differs from docs-example.out:\n%s",
                         run.out);
        GLEAN_TEST_CHECK(strstr(doc, want) != NULL, "docs/simulate.md does not show docs-example.out");
        free(want);
        free(doc);
        glean_test_run_done(&run);
}

static void test_cli_json(void) {
        GleanTestRun run = negotiate("--simulate", "examples/groups.scn", "--cycles", "3", "--json");
        static const char *const keys[] = {
                "{\"cycle\":1,\"time\":0,\"matches\":[{\"job\":\"1.0\",\"slot\":\"slot1@sim\","
                "\"submitter\":\"group_physics.alice@sim\",\"reason\":\"No Preemption\",\"cost\":1}",
                "],\"preemptions\":[],\"rejections\":{\"1.8\":\"",
                "},\"submitters\":{\"group_physics.alice@sim\":{\"rup\":0.5,\"eup\":0.5,\"in_use\":8,"
                "\"weight_in_use\":8},",
                "\"group_chemistry.carol@sim\":{\"rup\":0.5,\"eup\":0.5,\"in_use\":0,\"weight_in_use\":0}},",
                "\"groups\":{\"<none>\":{\"quota\":0,\"allocated\":0,\"in_use\":0},\"group_physics\":{\"quota\":12,"
                "\"allocated\":16,\"in_use\":16},\"group_chemistry\":{\"quota\":4,\"allocated\":0,\"in_use\":0}}}\n"
                "{\"cycle\":2,\"time\":300,",
        };
        size_t lines = 0;

        GLEAN_TEST_CHECK(run.status == 0, "exit %d: %s", run.status, run.err);
        for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
                GLEAN_TEST_CHECK(strstr(run.out, keys[i]) != NULL, "no %s in %.300s", keys[i], run.out);
        for (const char *c = run.out; *c; c++)
                lines += *c == '\n';
        CU_ASSERT_EQUAL(lines, 3);
        glean_test_run_done(&run);

        /* the rejections summarised (one entry per submitter and reason), or left out */
        run = negotiate("--simulate", "examples/groups.scn", "--cycles", "1", "--json", "--rejections", "summary");
        GLEAN_TEST_CHECK(run.status == 0 &&
                                 strstr(run.out, "\"rejection_summary\":[{\"submitter\":\"group_physics.alice@sim\","
                                                 "\"reason\":\"no slot left this cycle\",\"jobs\":92,\"first_jobs\":"
                                                 "[\"1.8\",\"1.9\",\"1.10\",\"1.11\",\"1.12\"]}") &&
                                 !strstr(run.out, "\"rejections\""),
                         "exit %d: %.600s", run.status, run.out);
        glean_test_run_done(&run);
        run = negotiate("--simulate", "examples/groups.scn", "--cycles", "1", "--json", "--rejections", "none");
        GLEAN_TEST_CHECK(run.status == 0 && !strstr(run.out, "rejection") && strstr(run.out, "\"submitters\""),
                         "exit %d: %.600s", run.status, run.out);
        glean_test_run_done(&run);
        run = negotiate("--simulate", "examples/groups.scn", "--cycles", "1", "--rejections", "none");
        GLEAN_TEST_CHECK(run.status == 0 && !strstr(run.out, "reject ") && strstr(run.out, "submitter"),
                         "exit %d: %.600s", run.status, run.out);
        glean_test_run_done(&run);

        /* preemptions, as objects */
        char path[] = "/tmp/glean-simulate-XXXXXX";
        int fd = mkstemp(path);
        const char text[] = "PREEMPTION_REQUIREMENTS = True\n---\nslot\nsubmitter a usage 1 for 1h\nsubmitter b\n"
                            "jobs a 1\nat 1m jobs b 1\n";
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_EQUAL(write(fd, text, sizeof text - 1), (ssize_t) sizeof text - 1);
        close(fd);
        run = negotiate("--simulate", path, "--cycles", "2", "--json");
        GLEAN_TEST_CHECK(strstr(run.out, "\"preemptions\":[{\"job\":\"1.0\",\"slot\":\"slot1@sim\",\"submitter\":"
                                         "\"a@sim\",\"by_job\":\"2.0\",\"by_submitter\":\"b@sim\",\"reason\":"
                                         "\"Priority\"}]") != NULL,
                         "%s", run.out);
        glean_test_run_done(&run);
        unlink(path);
}

static void test_cli_errors(void) {
        static const struct {
                const char *args[MAX_ARGS];
                const char *err;
        } cases[] = {
                { { "--simulate", "tests/sim/scenarios/bad-jobs.scn" },
                  "glean negotiate: tests/sim/scenarios/bad-jobs.scn:9: jobs: no submitter 'carol'" },
                { { "--simulate", "tests/sim/scenarios/no-such.scn" }, "glean negotiate: tests/sim/scenarios/no-such.scn: cannot read" },
                { { "--simulate" }, "glean negotiate: --simulate needs a value" },
                { { "--cycles", "3" }, "glean negotiate: --simulate SCENARIO is needed" },
                { { "--simulate", "examples/groups.scn", "--cycles", "0" }, "glean negotiate: --cycles: a number" },
                { { "--simulate", "examples/groups.scn", "--interval", "0" }, "glean negotiate: --interval: seconds" },
                { { "--simulate", "examples/groups.scn", "--plot", "x.pdf" }, "glean negotiate: --plot: FILE.svg" },
                { { "--simulate", "examples/groups.scn", "--frobnicate" }, "glean negotiate: unknown option" },
                { { "--simulate", "examples/groups.scn", "--rejections", "some" },
                  "glean negotiate: --rejections: all, summary or none" },
        };

        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                GleanTestRun run = run_glean(cases[i].args);
                GLEAN_TEST_CHECK(run.status == 2 && strncmp(run.err, cases[i].err, strlen(cases[i].err)) == 0 &&
                                         run.out_len == 0,
                                 "case %zu: exit %d, stderr %s", i, run.status, run.err);
                glean_test_run_done(&run);
        }
}

static bool have_gnuplot(void) {
        char *argv[] = { (char *) "gnuplot", (char *) "--version", NULL };
        GleanTestRun run;
        bool ok = glean_test_run(argv, &run) == 0 && run.status == 0;

        if (ok || run.out)
                glean_test_run_done(&run);
        return ok;
}

static void test_cli_plot(void) {
        char dir[] = "/tmp/glean-plot-test-XXXXXX", png[64], svg[64];
        char *data = NULL;
        size_t len = 0;

        if (!have_gnuplot()) {
                printf("\n    (gnuplot is not installed: --plot not tried; apt-get install gnuplot-nox) ");
                return;
        }
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
        snprintf(png, sizeof png, "%s/fair.png", dir);
        snprintf(svg, sizeof svg, "%s/nice.svg", dir);
        GleanTestRun run;
        char *argv[] = { (char *) glean(), (char *) "negotiate", (char *) "--simulate", (char *) "examples/fair-share.scn",
                         (char *) "--plot", png, NULL };
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        GLEAN_TEST_CHECK(run.status == 0, "exit %d: %s", run.status, run.err);
        glean_test_run_done(&run);
        CU_ASSERT_EQUAL_FATAL(glean_test_read_file(png, &data, &len), 0);
        GLEAN_TEST_CHECK(len > 8000 && memcmp(data, "\x89PNG", 4) == 0, "%s: %zu bytes", png, len);
        free(data);
        argv[3] = (char *) "examples/nice-user.scn";
        argv[5] = svg;
        CU_ASSERT_FATAL(glean_test_run(argv, &run) == 0);
        GLEAN_TEST_CHECK(run.status == 0, "exit %d: %s", run.status, run.err);
        glean_test_run_done(&run);
        CU_ASSERT_EQUAL_FATAL(glean_test_read_file(svg, &data, &len), 0);
        GLEAN_TEST_CHECK(strstr(data, "<svg") && strstr(data, "nice-user.carol@sim") &&
                                 strstr(data, "Effective user priority"),
                         "%s is not the plot", svg);
        free(data);
        unlink(png);
        unlink(svg);
        rmdir(dir);
}

static CU_TestInfo sim_tests[] = {
        { "equal-shares", test_equal_shares },
        { "example-fair-share", test_example_fair_share },
        { "nice-user", test_nice_user },
        { "groups", test_groups },
        { "partitionable", test_partitionable },
        { "dynamic slots weigh what the pie counts", test_dslot_weight },
        { "dynamic slots weigh what the pie counts, in a quota group", test_dslot_weight_groups },
        { "preemption", test_preemption },
        { "charged-to-the-second", test_charged_to_the_second },
        { "arrivals", test_arrivals },
        { "bad-settings", test_bad_settings },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo cli_tests[] = {
        { "text", test_cli_text },
        { "docs-example", test_cli_docs_example },
        { "json", test_cli_json },
        { "errors", test_cli_errors },
        { "plot", test_cli_plot },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "simulate", NULL, NULL, NULL, NULL, sim_tests },
        { "negotiate-cli", NULL, NULL, NULL, NULL, cli_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-scenario — libFuzzer target for the scenario reader of `glean
 * negotiate --simulate` (sim/scenario.c): the configuration part
 * read on top of the defaults, the slot, submitter and jobs lines, their
 * ClassAds and the defaults filled into them; then, for a small scenario
 * the reader accepts, three cycles of the simulation (negotiator/
 * simulate.c and the cycle it runs).
 *
 * Input: a scenario (NUL bytes read as newlines), read with at most 200
 * slots and 2,000 jobs (more is rejected as too large, so that no input
 * takes long). Inputs that mention "include" are skipped: the fuzzer must
 * not read the file system. Checks, each an abort() when broken:
 *
 *   - a rejected scenario says why, in which file and at which line (not
 *     before 0), and leaves the output alone;
 *   - an accepted one is within the limits; each slot's ad has its Name,
 *     names are unique; each jobs line's ad is charged to its submitter
 *     (acct_job_submitter) and the counts add up to total_jobs;
 *   - a simulation either fails cleanly or reports every submitter, with
 *     no more jobs running than slots and no more matches than jobs;
 *   - the sanitizers' own checks (memory, undefined behaviour, leaks).
 *
 * Seeds: fuzz/corpus/scenario/ (the examples, the test scenarios and
 * every kind of line and error). Run, from the repository root:
 *
 *     make fuzz && mkdir -p /root/glean-fuzz/scenario &&
 *     cp -n fuzz/corpus/scenario/?* /root/glean-fuzz/scenario/ &&
 *     build/fuzz/fuzz-scenario -max_total_time=300 -max_len=4096 /root/glean-fuzz/scenario
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/simulate.h"

#define FUZZ_MAX_SLOTS 200
#define FUZZ_MAX_JOBS 2000
#define FUZZ_CYCLES 3
#define FUZZ_MAX_WORK 20000 /* slots x jobs worth simulating */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-SCENARIO FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static void check_accepted(const SimScenario *sc) {
        size_t jobs = 0;

        if (sc->n_slots > FUZZ_MAX_SLOTS || sc->total_jobs > FUZZ_MAX_JOBS)
                fail("over the limits", NULL);
        if (sc->interval <= 0 || !sc->domain || !sc->cfg)
                fail("no interval, domain or configuration", NULL);
        for (size_t i = 0; i < sc->n_slots; i++) {
                char *name = NULL;
                if (classad_eval_string(sc->slots[i].ad, "Name", CA_MODE_OLD, &name) < 0 ||
                    strcmp(name, sc->slots[i].name) != 0)
                        fail("a slot ad without its Name", sc->slots[i].name);
                free(name);
                for (size_t j = 0; j < i; j++)
                        if (strcmp(sc->slots[i].name, sc->slots[j].name) == 0)
                                fail("two slots of one name", sc->slots[i].name);
        }
        for (size_t i = 0; i < sc->n_jobs; i++) {
                const SimScenarioJobs *js = &sc->jobs[i];
                char *name = NULL, why[256];
                if (js->submitter >= sc->n_submitters || js->count == 0)
                        fail("a jobs line without a submitter or jobs", NULL);
                if (acct_job_submitter(js->ad, sc->domain, &name, why, sizeof why) < 0 ||
                    strcmp(name, sc->submitters[js->submitter].name) != 0)
                        fail("jobs charged to another submitter", name ? name : why);
                free(name);
                jobs += js->count;
        }
        if (jobs != sc->total_jobs)
                fail("the jobs do not add up", NULL);
}

static void simulate(const SimScenario *sc) {
        Sim *sim = NULL;
        ConfigError err = { 0 };
        int r = sim_new(sc, 0, &sim, &err);

        if (r < 0) {
                if (r != -ENOMEM && (!err.msg[0] || err.line < 0))
                        fail("a refused simulation without a reason", err.msg);
                return;
        }
        for (unsigned c = 0; c < FUZZ_CYCLES; c++) {
                const SimReport *rep = NULL;
                size_t running = 0;
                if (sim_step(sim, &rep) < 0)
                        break;
                if (rep->n_submitters != sc->n_submitters || rep->cycle != c + 1)
                        fail("a report without every submitter", NULL);
                for (size_t i = 0; i < rep->n_submitters; i++)
                        running += rep->submitters[i].running;
                if (running > rep->slots || rep->n_matches > sc->total_jobs || rep->slots_busy > rep->slots)
                        fail("more jobs running than slots", NULL);
        }
        sim_free(sim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        SimScenarioLimits limits = { .max_slots = FUZZ_MAX_SLOTS, .max_jobs = FUZZ_MAX_JOBS };
        SimScenario *sc = (SimScenario *) &limits; /* must stay so when refused */
        ConfigError err = { 0 };
        char *text = malloc(size + 1);
        int r;

        if (!text)
                return 0;
        for (size_t i = 0; i < size; i++)
                text[i] = data[i] ? (char) data[i] : '\n';
        text[size] = '\0';
        if (strcasestr(text, "include")) {
                free(text);
                return 0;
        }
        r = sim_scenario_parse(text, "<fuzz>", &limits, &sc, &err);
        free(text);
        if (r < 0) {
                if (sc != (SimScenario *) &limits)
                        fail("a refused scenario set the output", NULL);
                if (r != -ENOMEM && (!err.msg[0] || !err.file[0] || err.line < 0))
                        fail("a refused scenario without file, line or reason", err.msg);
                return 0;
        }
        check_accepted(sc);
        if (sc->n_slots * (sc->total_jobs + 1) <= FUZZ_MAX_WORK)
                simulate(sc);
        sim_scenario_free(sc);
        return 0;
}

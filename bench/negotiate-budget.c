/* SPDX-License-Identifier: Apache-2.0 */
/*
 * negotiate-budget.c — what one job whose Requirements run out of the
 * ClassAd evaluation budget costs the matchmaker (issue 20, item 3): one
 * negotiation cycle over --slots N static slots (default 1,000) and
 * --jobs M ordinary jobs (default 100) of one submitter, alone and with
 * the job of `requirements = (eval(unparse(Requirements)) + ... 20
 * times) >= 0 || true` queued first, on the plain path (where such a job
 * goes: the fast path's analysis gives up on eval()).
 *
 *   build/bench/negotiate-budget [--slots N] [--jobs M]
 *
 * The last line is
 *
 *   slots=N jobs=M cycle_ms=T cycle_with_bomb_ms=T matches=K matches_with_bomb=K bomb_reason="..."
 *
 * (the reason the cycle gives for the job). Exit status 0, or 1 when
 * something fails.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "negotiator/negotiator.h"

#define T0 1.8e9

static double now_ms(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static ClassAd *ad_of(const char *text) {
        ClassAd *ad = NULL;
        CaError err = { 0 };

        if (classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) < 0) {
                fprintf(stderr, "negotiate-budget: %s: %s\n", err.msg, text);
                exit(1);
        }
        return ad;
}

/* One cycle: its time (ms), matches in *ret_matches, the first job's reason in *ret_reason. */
static double cycle(ClassAd **slots, size_t n_slots, ClassAd **jobs, size_t n_jobs, const NegoSettings *settings,
                    Accountant *acct, size_t *ret_matches, char **ret_reason) {
        NegoSubmitter sub = { .name = "alice@pool", .jobs = jobs, .n_jobs = n_jobs };
        NegoInput in = { .slots = slots, .n_slots = n_slots, .submitters = &sub, .n_submitters = 1,
                         .accounts = acct, .settings = settings };
        NegoResult res = { 0 };
        double t0 = now_ms();

        if (nego_cycle(&in, &res) < 0) {
                fprintf(stderr, "negotiate-budget: the cycle failed\n");
                exit(1);
        }
        double dt = now_ms() - t0;
        *ret_matches = res.n_matches;
        *ret_reason = NULL;
        for (size_t i = 0; i < res.n_rejections; i++)
                if (res.rejections[i].job == 0)
                        *ret_reason = strdup(res.rejections[i].reason);
        nego_result_clear(&res);
        return dt;
}

int main(int argc, char **argv) {
        size_t n_slots = 1000, n_jobs = 100;
        Config *cfg = NULL;
        ConfigError err = { 0 };
        AcctSettings as = { 0 };
        AcctGroups *groups = NULL;
        Accountant *acct = NULL;
        NegoSettings *settings = NULL;
        char why[256] = "", text[2048];

        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--slots") == 0 && i + 1 < argc)
                        n_slots = (size_t) atol(argv[++i]);
                else if (strcmp(argv[i], "--jobs") == 0 && i + 1 < argc)
                        n_jobs = (size_t) atol(argv[++i]);
                else {
                        fprintf(stderr, "usage: negotiate-budget [--slots N] [--jobs M]\n");
                        return 2;
                }
        }
        if (config_new(&cfg) < 0 || config_load_string(cfg, "UID_DOMAIN = pool\n", "<bench>", &err) < 0 ||
            acct_settings_from_config(cfg, &as, &err) < 0 || acct_groups_from_config(cfg, &groups, &err) < 0 ||
            nego_settings_from_config(cfg, &settings, &err) < 0 ||
            acct_open(NULL, 0, NULL, &as, groups, T0, &acct, why, sizeof(why)) < 0 || acct_ensure(acct, "alice@pool", T0) < 0) {
                fprintf(stderr, "negotiate-budget: setup: %s%s\n", err.msg, why);
                return 1;
        }
        ClassAd **slots = calloc(n_slots ? n_slots : 1, sizeof(*slots));
        ClassAd **jobs = calloc(n_jobs + 1, sizeof(*jobs));
        if (!slots || !jobs)
                return 1;
        for (size_t i = 0; i < n_slots; i++) {
                snprintf(text, sizeof(text),
                         "[ Name = \"slot1@m%zu\"; Machine = \"m%zu\"; SlotID = 1; State = \"Unclaimed\"; "
                         "Activity = \"Idle\"; Cpus = 1; Memory = 1024; Disk = 100000; Arch = \"X86_64\"; "
                         "OpSys = \"LINUX\"; Start = true; Requirements = START; Rank = 0 ]",
                         i, i);
                slots[i] = ad_of(text);
        }
        size_t len = (size_t) snprintf(text, sizeof(text),
                                       "[ Owner = \"alice\"; ClusterId = 1; ProcId = 0; QDate = 1000; JobPrio = 0; "
                                       "RequestCpus = 1; RequestMemory = 100; Rank = 0; requirements = (");
        for (int i = 0; i < 20; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len, "%seval(unparse(Requirements))", i ? " + " : "");
        snprintf(text + len, sizeof(text) - len, ") >= 0 || true ]");
        jobs[0] = ad_of(text);
        for (size_t j = 0; j < n_jobs; j++) {
                snprintf(text, sizeof(text),
                         "[ Owner = \"alice\"; ClusterId = 2; ProcId = %zu; QDate = 1001; JobPrio = 0; "
                         "RequestCpus = 1; RequestMemory = 100; Rank = 0; "
                         "Requirements = TARGET.Memory >= RequestMemory && TARGET.Arch == \"X86_64\" ]",
                         j);
                jobs[j + 1] = ad_of(text);
        }

        size_t m0, m1;
        char *r0, *r1;
        double t_plain = cycle(slots, n_slots, jobs + 1, n_jobs, settings, acct, &m0, &r0);
        printf("cycle of %zu jobs, %zu slots: %.1f ms, %zu matches\n", n_jobs, n_slots, t_plain, m0);
        double t_bomb = cycle(slots, n_slots, jobs, n_jobs + 1, settings, acct, &m1, &r1);
        printf("with the job of 20 eval(unparse(Requirements)) first: %.1f ms, %zu matches; its reason: %s\n", t_bomb,
               m1, r1 ? r1 : "(matched)");
        printf("slots=%zu jobs=%zu cycle_ms=%.1f cycle_with_bomb_ms=%.1f matches=%zu matches_with_bomb=%zu "
               "bomb_reason=\"%s\"\n",
               n_slots, n_jobs, t_plain, t_bomb, m0, m1, r1 ? r1 : "");
        free(r0);
        free(r1);
        for (size_t i = 0; i < n_slots; i++)
                classad_free(slots[i]);
        for (size_t j = 0; j <= n_jobs; j++)
                classad_free(jobs[j]);
        free(slots);
        free(jobs);
        nego_settings_free(settings);
        acct_close(acct);
        config_free(cfg);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-policy.c — the slot policy state machine (agent/policy*.c) against
 * seed 002, 3.5.5 to 3.5.9: every timeline of tests/agent/timelines/ run
 * through agent_replay_file() must hold all its expectations; and, through
 * the API directly, what timelines do not show: malformed timelines
 * rejected with file:line, the claim ids and job ads the actions carry,
 * agent_sm_next_deadline(), the return codes of refusals, hooks that call
 * back into the machine.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/policy.h"
#include "agent/replay.h"
#include "test-util.h"

/* ---- the timelines ---- */

static void test_timelines(void) {
        glob_t g;
        int r = glob("tests/agent/timelines/*.tl", 0, NULL, &g);
        GLEAN_TEST_CHECK_FATAL(r == 0 && g.gl_pathc >= 20, "expected the timelines in tests/agent/timelines (%d)", r);
        for (size_t i = 0; i < g.gl_pathc; i++) {
                const char *path = g.gl_pathv[i];
                char *out = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&out, &len);
                GLEAN_TEST_CHECK_FATAL(f != NULL, "open_memstream");
                AgentReplayResult res = { 0 };
                ConfigError err = { 0 };
                r = agent_replay_file(path, f, &res, &err);
                fclose(f);
                GLEAN_TEST_CHECK(r == 0, "%s is malformed: %s:%d: %s\n%s", path, err.file, err.line, err.msg, out);
                GLEAN_TEST_CHECK(r < 0 || res.failed == 0, "%s: %u of %u expectations failed:\n%s", path, res.failed,
                                 res.expectations, out);
                GLEAN_TEST_CHECK(r < 0 || res.expectations >= 3, "%s: only %u expectations", path, res.expectations);
                free(out);
        }
        globfree(&g);
}

/* ---- malformed timelines ---- */

static int replay_text(const char *text, AgentReplayResult *res, ConfigError *err, unsigned long max_evals,
                       char **out) {
        size_t len = 0;
        char *buf = NULL;
        FILE *f = open_memstream(&buf, &len);
        GLEAN_TEST_CHECK_FATAL(f != NULL, "open_memstream");
        AgentReplayOptions opts = { .max_evaluations = max_evals };
        int r = agent_replay_string_opts(text, "<t>", &opts, f, res, err);
        fclose(f);
        if (out)
                *out = buf;
        else
                free(buf);
        return r;
}

static void test_malformed(void) {
        static const struct {
                const char *text;
                int line;
                const char *msg;
        } rows[] = {
                { "---\n0 expect Nowhere\n", 2, "unknown state" },
                { "0 frobnicate\n", 1, "unknown event" },
                { "# comment\n\n---\n\n0 tick\nten tick\n", 6, "not a time" },
                { "---\n10 tick\n5 tick\n", 3, "before the previous" },
                { "---\n0 tick\nepoch 2026-01-01T00:00:00Z\n", 3, "before the first timed line" },
                { "---\nepoch 2026-13-01\n", 2, "epoch" },
                { "---\nslot 0\n", 2, "slot" },
                { "---\n0 tick\nslot 2\n", 3, "before the first timed line" },
                { "---\n1 expect-action frobnicate\n", 2, "unknown action" },
                { "---\n1 expect-action\n", 2, "name of an action" },
                { "---\n1 expect-transition x\n", 2, "expect-transition" },
                { "---\n1 expect-refused\n", 2, "no event before" },
                { "---\n1 claim c1\n1 expect-refused ESOMETHING\n", 3, "unknown error" },
                { "---\n1 claim c1 [ Owner = ]\n", 2, "not a ClassAd" },
                { "---\n1 claim\n", 2, "claim id" },
                { "---\n1 claim c1 by-magic\n", 2, "unexpected" },
                { "---\n1 vacate slowly\n", 2, "unexpected" },
                { "---\n1 drain forever\n", 2, "unexpected" },
                { "---\n1 keep-alive\n", 2, "claim id" },
                { "---\n1 set = 3\n", 2, "set" },
                { "---\n1 set 9x = 3\n", 2, "set" },
                { "---\n1 set KeyboardIdle = soon\n", 2, "seconds" },
                { "---\n1 set X = (\n", 2, "not a ClassAd expression" },
                { "---\n1 key for ever\n", 2, "key" },
                { "---\n1 keep-alives maybe\n", 2, "on or off" },
                { "---\n1 expect-eval\n", 2, "expect-eval" },
                { "---\n1\n", 2, "expected an event" },
                { "---\n1 tick now\n", 2, "tick" },
                { "---\n+1 tick\n+1x tick\n", 3, "not a time" },
                { "---\n99999999999d tick\n", 2, "not a time" },
                { "---\n1 expect-no-transition 5\n", 2, "expect-no-transition: unexpected '5'" },
                { "---\n1 expect-new-transition\n", 2, "expect-new-transition: expected one number" },
                { "---\n1 expect-new-transition 3 x\n", 2, "expect-new-transition: expected numbers, not 'x'" },
                { "---\n1 expect-everything\n", 2, "unknown expectation 'expect-everything'" },
                { "---\n1 expect-eval $(WorkHours\n", 2, "no closing" },
                { "---\n1 expect-eval $(NoSuchMacro)\n", 2, "expands to nothing" },
                { "X = (\n---\n1 expect-eval $(X) && true\n", 3, "once expanded" },
                /* Late in the timeline, after lines that change the slot: found before anything runs. */
                { "---\n0 expect Unclaimed\n1m claim c1\n1m activate c1\n10m vacate fast\n11m job-exit\n"
                  "1h claim c2 [ Owner = ]\n",
                  7, "not a ClassAd" },
                { "---\n1m claim c1\n1m activate c1\n2m expect Claimed/Busy\n3m vacate\n2m tick\n", 6,
                  "before the previous" },
                { "---\n1m claim c1\n1m activate c1\n2m expect Claimed/Busy\n3m expect-action start-job frobnicate\n",
                  5, "unknown action 'frobnicate'" },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                AgentReplayResult res = { 0 };
                ConfigError err = { 0 };
                char *out = NULL;
                int r = replay_text(rows[i].text, &res, &err, 0, &out);
                GLEAN_TEST_CHECK(r == -EINVAL, "row %zu: %d, want -EINVAL", i, r);
                GLEAN_TEST_CHECK(strcmp(err.file, "<t>") == 0 && err.line == rows[i].line, "row %zu: at %s:%d, want <t>:%d",
                                 i, err.file, err.line, rows[i].line);
                GLEAN_TEST_CHECK(strstr(err.msg, rows[i].msg) != NULL, "row %zu: '%s' does not say '%s'", i, err.msg,
                                 rows[i].msg);
                /* The whole timeline is checked before it runs: nothing printed. */
                GLEAN_TEST_CHECK(out && !*out, "row %zu printed before its error:\n%s", i, out ? out : "(null)");
                GLEAN_TEST_CHECK(res.transitions == 0 && res.expectations == 0, "row %zu: a result (%u transitions)", i,
                                 res.transitions);
                free(out);
        }

        /* A file: its name and the line, nothing printed, though its first lines would. */
        char path[] = "/tmp/glean-test-replay-XXXXXX";
        int fd = mkstemp(path);
        GLEAN_TEST_CHECK_FATAL(fd >= 0, "mkstemp");
        static const char late[] = "# a policy\nMAXJOBRETIREMENTTIME = 60\n---\n0 expect Unclaimed/Idle\n"
                                   "1m claim c1\n1m activate c1\n2m expect Claimed/Busy\n3m vacate\n"
                                   "10m expect Unclaimed\n11m frobnicate\n12m expect Unclaimed\n";
        GLEAN_TEST_CHECK_FATAL(write(fd, late, sizeof late - 1) == (ssize_t) (sizeof late - 1), "write");
        close(fd);
        {
                char *out = NULL;
                size_t len = 0;
                FILE *f = open_memstream(&out, &len);
                GLEAN_TEST_CHECK_FATAL(f != NULL, "open_memstream");
                AgentReplayResult res = { 0 };
                ConfigError err = { 0 };
                int r = agent_replay_file(path, f, &res, &err);
                fclose(f);
                GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, path) == 0 && err.line == 10 &&
                                         strstr(err.msg, "unknown event 'frobnicate'"),
                                 "a late malformed line: %d at %s:%d: %s", r, err.file, err.line, err.msg);
                GLEAN_TEST_CHECK(len == 0, "printed before the error:\n%s", out);
                free(out);
        }
        unlink(path);

        /* The configuration part: its own line numbers. */
        AgentReplayResult res = { 0 };
        ConfigError err = { 0 };
        int r = replay_text("MINUTE = 60\nSTART = KeyboardIdle > (\n---\n0 tick\n", &res, &err, 0, NULL);
        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 2 && strstr(err.msg, "START"), "config: %d %s:%d %s", r, err.file,
                         err.line, err.msg);
        err = (ConfigError){ 0 };
        r = replay_text("MATCH_TIMEOUT = soon\n---\n", &res, &err, 0, NULL);
        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 1 && strstr(err.msg, "MATCH_TIMEOUT"), "knob: %d %s:%d %s", r,
                         err.file, err.line, err.msg);

        /* Too long for its polling interval. */
        err = (ConfigError){ 0 };
        r = replay_text("---\n0 claim c1\n1d expect Claimed\n", &res, &err, 1000, NULL);
        GLEAN_TEST_CHECK(r == -E2BIG && err.line == 3, "evaluations: %d %s:%d %s", r, err.file, err.line, err.msg);

        /* A failed expectation is not a malformed timeline: counted, printed, and the replay goes on. */
        char *out = NULL;
        err = (ConfigError){ 0 };
        r = replay_text("---\n0 expect Owner\n0 expect Unclaimed/Idle\n1 expect-transition 5\n", &res, &err, 0, &out);
        GLEAN_TEST_CHECK(r == 0 && res.expectations == 3 && res.failed == 2, "%d: %u of %u failed", r, res.failed,
                         res.expectations);
        GLEAN_TEST_CHECK(out && strstr(out, "EXPECTATION FAILED (line 2)") && strstr(out, "EXPECTATION FAILED (line 4)") &&
                                 !strstr(out, "(line 3)"),
                         "output:\n%s", out);
        free(out);

        /* No file. */
        err = (ConfigError){ 0 };
        r = agent_replay_file("tests/agent/timelines/no-such-file.tl", stderr, &res, &err);
        GLEAN_TEST_CHECK(r == -ENOENT && strstr(err.msg, "cannot open"), "%d %s", r, err.msg);
}

/* ---- what the expectation lines hold to ---- */

/* Each row: a timeline and the lines whose expectations must fail (0-ended);
 * every other expectation must hold. */
static void test_expectation_lines(void) {
        static const struct {
                const char *text;
                int failing[8];
        } rows[] = {
                /* expect-no-transition, expect-new-transition: only what happened since the
                 * previous expectation line (of any kind) counts. */
                { "---\n"
                  "0 expect Unclaimed/Idle\n"        /* 2: after transition 1 */
                  "0 expect-no-transition\n"         /* 3 */
                  "1m claim c1\n"
                  "1m expect-new-transition 5\n"     /* 5 */
                  "1m expect-no-transition\n"        /* 6 */
                  "1m expect-new-transition 5\n"     /* 7: fails, nothing new */
                  "1m expect-transition 5\n"         /* 8: the last transition, however old */
                  "2m activate c1\n"
                  "2m vacate fast\n"
                  "2m expect-new-transition 11 0\n"  /* 11 */
                  "2m expect-new-transition 0\n"     /* 12: fails */
                  "3m job-exit\n"
                  "3m expect-new-transition 1\n"     /* 14: 25 then 1: the last counts */
                  "3m expect-new-transition 5 25 1\n" /* 15: fails, 5 came long before */
                  "4m tick\n"
                  "4m expect-no-transition\n"        /* 17 */
                  "5m claim c2\n"
                  "5m expect-action claim-ended\n"   /* 19: moves the mark too */
                  "5m expect-no-transition\n"        /* 20 */
                  "6m claim c3\n"
                  "6m expect-refused EBUSY\n"        /* 22 */
                  "6m expect-no-transition\n"        /* 23 */
                  "7m release c2\n"
                  "7m expect-new-transition 10 22 1\n" /* 25 */
                  "7m expect-no-transition\n"        /* 26 */
                  "8m claim c4\n"
                  "8m expect-no-transition\n",       /* 28: fails, 5 */
                  { 7, 12, 15, 28 } },
                /* expect-eval expands the configuration's macros. */
                { "Day = (ClockDay > 0 && ClockDay < 6)\nNoon = ClockMin == 720\nTwo = 2\n---\n"
                  "epoch 2026-11-23T12:00:00Z\n"     /* a Monday, noon */
                  "0 expect-eval $(Day) && $(Noon)\n" /* 6 */
                  "0 expect-eval $(Two) + $(Two) == 4\n"
                  "0 expect-eval !($(Day))\n"        /* 8: fails */
                  "5m expect-eval $(Noon)\n",        /* 9: fails (ClockMin follows the evaluations) */
                  { 8, 9 } },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                AgentReplayResult res = { 0 };
                ConfigError err = { 0 };
                char *out = NULL;
                int r = replay_text(rows[i].text, &res, &err, 0, &out);
                GLEAN_TEST_CHECK(r == 0, "row %zu: %s:%d: %s", i, err.file, err.line, err.msg);
                unsigned want = 0;
                for (const int *l = rows[i].failing; *l; l++, want++) {
                        char needle[64];
                        snprintf(needle, sizeof needle, "EXPECTATION FAILED (line %d)", *l);
                        GLEAN_TEST_CHECK(out && strstr(out, needle), "row %zu: line %d held:\n%s", i, *l, out);
                }
                GLEAN_TEST_CHECK(res.failed == want, "row %zu: %u failed, want %u:\n%s", i, res.failed, want, out);
                free(out);
        }
}

/* ---- the state machine directly ---- */

#define MAX_SEEN 64

typedef struct Seen {
        AgentActionType type[MAX_SEEN];
        char claim[MAX_SEEN][32];
        char owner[MAX_SEEN][32];
        int numbers[MAX_SEEN];
        unsigned n_actions, n_transitions;
        AgentSlotSM *sm;        /* for the hooks that call back */
        bool answer_backfill;   /* start-backfill: report it started, at once */
        bool answer_benchmarks;
} Seen;

static void seen_transition(void *userdata, const AgentTransition *t) {
        Seen *s = userdata;
        if (s->n_transitions < MAX_SEEN)
                s->numbers[s->n_transitions] = t->number;
        s->n_transitions++;
}

static void seen_action(void *userdata, const AgentAction *a) {
        Seen *s = userdata;
        if (s->n_actions < MAX_SEEN) {
                unsigned i = s->n_actions;
                s->type[i] = a->type;
                snprintf(s->claim[i], sizeof s->claim[i], "%s", a->claim_id ? a->claim_id : "");
                char *owner = NULL;
                if (a->job && classad_eval_string(a->job, "Owner", CA_MODE_OLD, &owner) >= 0)
                        snprintf(s->owner[i], sizeof s->owner[i], "%s", owner);
                free(owner);
        }
        s->n_actions++;
        if (a->type == AGENT_DO_START_BACKFILL && s->answer_backfill) {
                AgentEvent ev = { .type = AGENT_EV_BACKFILL_STARTED };
                agent_sm_handle(s->sm, 0, &ev, NULL, 0);
        }
        if (a->type == AGENT_DO_RUN_BENCHMARKS && s->answer_benchmarks) {
                AgentEvent ev = { .type = AGENT_EV_BENCHMARKS_DONE };
                agent_sm_handle(s->sm, 0, &ev, NULL, 0);
        }
}

/* The last action of that type: its index, or -1. */
static int last_action(const Seen *s, AgentActionType t) {
        for (int i = (int) (s->n_actions < MAX_SEEN ? s->n_actions : MAX_SEEN) - 1; i >= 0; i--)
                if (s->type[i] == t)
                        return i;
        return -1;
}

typedef struct Machine {
        Config *cfg;
        ClassAd *ad;
        AgentSlotSM *sm;
        Seen seen;
} Machine;

#define T0 1767225600

/* answer: the hooks answer start-backfill and run-benchmarks at once;
 * dynamic: a dynamic slot's machine. */
static void machine_new_full(Machine *m, const char *config, bool answer, bool dynamic) {
        memset(m, 0, sizeof *m);
        m->seen.answer_backfill = m->seen.answer_benchmarks = answer;
        ConfigError err = { 0 };
        GLEAN_TEST_CHECK_FATAL(config_new(&m->cfg) == 0, "config_new");
        if (config)
                GLEAN_TEST_CHECK_FATAL(config_load_string(m->cfg, config, "<test>", &err) == 0, "%d: %s", err.line,
                                       err.msg);
        GLEAN_TEST_CHECK_FATAL(classad_new(&m->ad) == 0, "classad_new");
        static const char base[] = "[ Name = \"slot1@test\"; SlotID = 1; KeyboardIdle = 86400; ConsoleIdle = 86400; "
                                   "LoadAvg = 0.0; CondorLoadAvg = 0.0 ]";
        ClassAd *b;
        CaError cerr;
        GLEAN_TEST_CHECK_FATAL(classad_parse(base, strlen(base), CA_MODE_OLD, &b, &cerr) == 0, "base ad");
        classad_update(m->ad, b);
        classad_free(b);
        GLEAN_TEST_CHECK_FATAL(agent_policy_fill_ad(m->cfg, 1, m->ad, &err) == 0, "fill_ad: %s", err.msg);
        AgentPolicyKnobs knobs;
        GLEAN_TEST_CHECK_FATAL(agent_policy_knobs(m->cfg, 1, &knobs, &err) == 0, "knobs: %s", err.msg);
        knobs.benchmarks = true;
        knobs.dynamic = dynamic;
        AgentPolicyHooks hooks = { .transition = seen_transition, .action = seen_action };
        GLEAN_TEST_CHECK_FATAL(agent_sm_new("slot1", m->ad, &knobs, &hooks, &m->seen, T0, &m->sm) == 0, "sm_new");
        m->seen.sm = m->sm;
        agent_sm_eval(m->sm, T0);
}

static void machine_new_answering(Machine *m, const char *config, bool answer) {
        machine_new_full(m, config, answer, false);
}

static void machine_new(Machine *m, const char *config) {
        machine_new_answering(m, config, false);
}

static void machine_free(Machine *m) {
        agent_sm_free(m->sm);
        classad_free(m->ad);
        config_free(m->cfg);
}

static ClassAd *job(const char *text) {
        ClassAd *ad = NULL;
        CaError cerr;
        GLEAN_TEST_CHECK_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &cerr) == 0, "job ad %s", text);
        return ad;
}

static int ev(Machine *m, int64_t t, AgentEventType type, const char *claim, const ClassAd *j, char *why,
              size_t whylen) {
        AgentEvent e = { .type = type, .claim_id = claim, .job = j };
        return agent_sm_handle(m->sm, T0 + t, &e, why, whylen);
}

#define CHECK_STATE(m, s, a)                                                                                   \
        GLEAN_TEST_CHECK(agent_sm_state((m)->sm) == (s) && agent_sm_activity((m)->sm) == (a), "state %s/%s",   \
                         agent_state_name(agent_sm_state((m)->sm)), agent_activity_name(agent_sm_activity((m)->sm)))

static void test_actions(void) {
        Machine m;
        machine_new(&m, "RANK = (Owner == \"coltrane\") * 10\nMAXJOBRETIREMENTTIME = 3600\n");
        ClassAd *alice =
                job("[ Owner = \"alice\"; JobUniverse = 5; ClusterId = 4; ProcId = 2; JobLeaseDuration = 100000 ]");
        ClassAd *coltrane = job("[ Owner = \"coltrane\"; JobUniverse = 5; JobLeaseDuration = 100000 ]");
        ClassAd *bob = job("[ Owner = \"bob\"; JobUniverse = 5; JobLeaseDuration = 100000 ]");
        CHECK_STATE(&m, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(ev(&m, 1, AGENT_EV_CLAIM, "A", alice, NULL, 0) == 0, "claim A");
        GLEAN_TEST_CHECK(ev(&m, 2, AGENT_EV_ACTIVATE, "A", alice, NULL, 0) == 0, "activate A");
        int i = last_action(&m.seen, AGENT_DO_START_JOB);
        GLEAN_TEST_CHECK(i >= 0 && strcmp(m.seen.claim[i], "A") == 0 && strcmp(m.seen.owner[i], "alice") == 0,
                         "start-job carries claim A and alice's job (%d)", i);
        GLEAN_TEST_CHECK(strcmp(agent_sm_claim_id(m.sm), "A") == 0 && agent_sm_job_active(m.sm), "claim A, active");
        char *jobid = NULL;
        GLEAN_TEST_CHECK(classad_eval_string(m.ad, "JobId", CA_MODE_OLD, &jobid) == 0 && strcmp(jobid, "4.2") == 0,
                         "JobId %s", jobid ? jobid : "(none)");
        free(jobid);

        /* A better claim: A retires; B waits. */
        GLEAN_TEST_CHECK(ev(&m, 10, AGENT_EV_CLAIM, "B", coltrane, NULL, 0) == 0, "claim B");
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING);
        GLEAN_TEST_CHECK(agent_sm_has_claim(m.sm, "B") && agent_sm_has_claim(m.sm, "A") && !agent_sm_has_claim(m.sm, "C"),
                         "has A and B");
        /* A vacate drops B, telling its claimant; A retires for good, and is
         * vacated when its retirement (less the vacate time) is over. */
        unsigned before = m.seen.n_actions;
        GLEAN_TEST_CHECK(ev(&m, 20, AGENT_EV_VACATE, NULL, NULL, NULL, 0) == 0, "vacate");
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING);
        i = last_action(&m.seen, AGENT_DO_CLAIM_ENDED);
        GLEAN_TEST_CHECK(i >= (int) before && strcmp(m.seen.claim[i], "B") == 0, "claim-ended B (%d)", i);
        GLEAN_TEST_CHECK(!agent_sm_has_claim(m.sm, "B"), "B is gone");
        GLEAN_TEST_CHECK(last_action(&m.seen, AGENT_DO_SOFT_KILL) < (int) before, "no soft-kill yet");
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 2 + 3600 - 600, "retirement end %lld",
                         (long long) (agent_sm_next_deadline(m.sm) - T0));
        agent_sm_eval(m.sm, T0 + 2 + 3600 - 600 - 1);
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING);
        agent_sm_eval(m.sm, T0 + 2 + 3600 - 600);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_VACATING);
        i = last_action(&m.seen, AGENT_DO_SOFT_KILL);
        GLEAN_TEST_CHECK(i >= (int) before && strcmp(m.seen.claim[i], "A") == 0, "soft-kill A (%d)", i);
        GLEAN_TEST_CHECK(ev(&m, 3010, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0) == 0, "job-exit");
        i = last_action(&m.seen, AGENT_DO_CLAIM_ENDED);
        GLEAN_TEST_CHECK(i >= 0 && strcmp(m.seen.claim[i], "A") == 0, "claim-ended A (%d)", i);
        GLEAN_TEST_CHECK(agent_sm_claim_id(m.sm) == NULL && agent_sm_job(m.sm) == NULL, "no claim");
        CHECK_STATE(&m, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE);

        /* Preemption to the end: the preempting claim takes over (23) and A's claimant is told. */
        ev(&m, 4100, AGENT_EV_CLAIM, "A2", bob, NULL, 0);
        ev(&m, 4100, AGENT_EV_ACTIVATE, "A2", bob, NULL, 0);
        ev(&m, 4200, AGENT_EV_CLAIM, "B2", coltrane, NULL, 0);
        agent_sm_eval(m.sm, T0 + 4100 + 3000);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_VACATING);
        ev(&m, 7200, AGENT_EV_JOB_EXIT, "A2", NULL, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(m.seen.numbers[(m.seen.n_transitions - 1) % MAX_SEEN] == 23 || m.seen.n_transitions > MAX_SEEN,
                         "23");
        i = last_action(&m.seen, AGENT_DO_CLAIM_ENDED);
        GLEAN_TEST_CHECK(i >= 0 && strcmp(m.seen.claim[i], "A2") == 0, "claim-ended A2");
        GLEAN_TEST_CHECK(strcmp(agent_sm_claim_id(m.sm), "B2") == 0, "B2 holds the slot");

        classad_free(alice);
        classad_free(coltrane);
        classad_free(bob);
        machine_free(&m);
}

static void test_preempting_claim_refused_by_start(void) {
        /* When the slot is free again, START decides whether the preempting claim gets it. */
        Machine m;
        machine_new(&m, "RANK = (Owner == \"coltrane\") * 10\nSTART = Closed =!= True\n");
        ClassAd *alice = job("[ Owner = \"alice\"; JobUniverse = 5 ]");
        ClassAd *coltrane = job("[ Owner = \"coltrane\"; JobUniverse = 5; JobLeaseDuration = 100000 ]");
        ev(&m, 1, AGENT_EV_CLAIM, "A", alice, NULL, 0);
        ev(&m, 1, AGENT_EV_ACTIVATE, "A", alice, NULL, 0);
        ev(&m, 2, AGENT_EV_CLAIM, "B", coltrane, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_VACATING);
        classad_set_bool(m.ad, "Closed", true);
        ev(&m, 3, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(!agent_sm_has_claim(m.sm, "B"), "B dropped");
        int i = last_action(&m.seen, AGENT_DO_CLAIM_ENDED);
        GLEAN_TEST_CHECK(i >= 1 && strcmp(m.seen.claim[i], "B") == 0 && m.seen.type[i - 1] == AGENT_DO_CLAIM_ENDED &&
                                 strcmp(m.seen.claim[i - 1], "A") == 0,
                         "claim-ended A then B");
        classad_free(alice);
        classad_free(coltrane);
        machine_free(&m);
}

static void test_deadlines(void) {
        Machine m;
        machine_new(&m, "MAXJOBRETIREMENTTIME = 3600\nMachineMaxVacateTime = 600\nKILLING_TIMEOUT = 30\n"
                        "MATCH_TIMEOUT = 120\nCLAIM_WORKLIFE = 1000\n");
        ClassAd *j = job("[ Owner = \"alice\"; JobUniverse = 5; JobLeaseDuration = 500 ]");
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == INT64_MAX, "Unclaimed: none");
        ev(&m, 10, AGENT_EV_MATCH, "A", NULL, NULL, 0);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 10 + 120, "Matched: MATCH_TIMEOUT");
        ev(&m, 20, AGENT_EV_CLAIM, "A", j, NULL, 0);
        /* Idle, never activated: only the lease (of the claim's ad). */
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 20 + 500, "Claimed/Idle: lease %lld",
                         (long long) (agent_sm_next_deadline(m.sm) - T0));
        ev(&m, 100, AGENT_EV_KEEP_ALIVE, "A", NULL, NULL, 0);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 100 + 500, "keep-alive renews the lease");
        ev(&m, 110, AGENT_EV_ACTIVATE, "A", j, NULL, 0);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 110 + 500, "activation renews the lease");
        ev(&m, 200, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0);
        /* Idle after a job: the worklife too (claimed at 20). */
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 110 + 500, "lease first");
        ev(&m, 600, AGENT_EV_KEEP_ALIVE, "A", NULL, NULL, 0);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 20 + 1000 + 1, "CLAIM_WORKLIFE %lld",
                         (long long) (agent_sm_next_deadline(m.sm) - T0));
        ev(&m, 700, AGENT_EV_ACTIVATE, "A", j, NULL, 0);
        /* Retiring (a drain): 3600 s of run time less the vacate time. */
        AgentEvent d = { .type = AGENT_EV_DRAIN, .drain = AGENT_DRAIN_GRACEFUL };
        GLEAN_TEST_CHECK(agent_sm_handle(m.sm, T0 + 800, &d, NULL, 0) == 0, "drain");
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_RETIRING);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 700 + 500, "the lease is first");
        ev(&m, 1500, AGENT_EV_KEEP_ALIVE, "A", NULL, NULL, 0);
        agent_sm_eval(m.sm, T0 + 1500);
        int64_t want = T0 + 700 + 3600 - 600;
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 1500 + 500, "lease again");
        /* Without a lease in the way. */
        ClassAd *nolease = job("[ Owner = \"alice\"; JobUniverse = 5; JobLeaseDuration = 100000 ]");
        machine_free(&m);
        machine_new(&m, "MAXJOBRETIREMENTTIME = 3600\nMachineMaxVacateTime = 600\nKILLING_TIMEOUT = 30\n");
        ev(&m, 0, AGENT_EV_CLAIM, "A", nolease, NULL, 0);
        ev(&m, 700, AGENT_EV_ACTIVATE, "A", nolease, NULL, 0);
        GLEAN_TEST_CHECK(agent_sm_handle(m.sm, T0 + 800, &d, NULL, 0) == 0, "drain");
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == want, "retirement end %lld, want %lld",
                         (long long) (agent_sm_next_deadline(m.sm) - T0), (long long) (want - T0));
        agent_sm_eval(m.sm, want);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_VACATING);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == want + 600, "vacate time");
        agent_sm_eval(m.sm, want + 600);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == want + 630, "KILLING_TIMEOUT");
        agent_sm_eval(m.sm, want + 630);
        GLEAN_TEST_CHECK(last_action(&m.seen, AGENT_DO_KILLING_TIMEOUT) >= 0, "killing-timeout");
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == want + 660, "KILLING_TIMEOUT again");
        ev(&m, want - T0 + 640, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_DRAINED, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == INT64_MAX, "Drained: none");
        classad_free(j);
        classad_free(nolease);
        machine_free(&m);
}

static void test_refusals(void) {
        Machine m;
        machine_new(&m, NULL);
        ClassAd *alice = job("[ Owner = \"alice\"; JobUniverse = 5 ]");
        char why[128];
        static const struct {
                int64_t t;
                AgentEventType type;
                const char *claim;
                bool with_job;
                int want;
                AgentState state;
                AgentActivity act;
        } rows[] = {
                { 1, AGENT_EV_ACTIVATE, "A", true, -ENOENT, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE },
                { 1, AGENT_EV_CLAIM, NULL, true, -EINVAL, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE },
                { 1, AGENT_EV_CLAIM, "A", false, -EINVAL, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE },
                { 1, AGENT_EV_JOB_EXIT, NULL, false, -EINVAL, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE },
                { 1, AGENT_EV_CANCEL_DRAIN, NULL, false, -EALREADY, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE },
                { 2, AGENT_EV_CLAIM, "A", true, 0, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE },
                { 2, AGENT_EV_CLAIM, "A", true, -EEXIST, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE },
                { 2, AGENT_EV_MATCH, "M", false, -EBUSY, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE },
                { 3, AGENT_EV_ACTIVATE, "B", true, -ENOENT, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE },
                { 3, AGENT_EV_ACTIVATE, "A", false, -EINVAL, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE },
                { 3, AGENT_EV_DEACTIVATE, "A", false, -EINVAL, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE },
                { 4, AGENT_EV_ACTIVATE, "A", true, 0, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
                { 4, AGENT_EV_ACTIVATE, "A", true, -EBUSY, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
                { 5, AGENT_EV_CLAIM, "B", true, -EBUSY, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
                { 5, AGENT_EV_KEEP_ALIVE, "B", false, -ENOENT, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
                { 5, AGENT_EV_RELEASE, "B", false, -ENOENT, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
                { 5, AGENT_EV_JOB_EXIT, "B", false, -ENOENT, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
                { 5, AGENT_EV__MAX, "A", false, -EINVAL, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY },
        };
        for (size_t i = 0; i < sizeof rows / sizeof *rows; i++) {
                why[0] = 'x';
                why[1] = 0;
                int r = ev(&m, rows[i].t, rows[i].type, rows[i].claim, rows[i].with_job ? alice : NULL, why, sizeof why);
                GLEAN_TEST_CHECK(r == rows[i].want, "row %zu: %d, want %d (%s)", i, r, rows[i].want, why);
                GLEAN_TEST_CHECK(r == 0 ? why[0] == 0 : why[0] != 0 && strcmp(why, "x") != 0, "row %zu: why '%s'", i,
                                 why);
                CHECK_STATE(&m, rows[i].state, rows[i].act);
        }
        /* Draining refuses claims and activations (EPERM); a second drain is EALREADY. */
        AgentEvent d = { .type = AGENT_EV_DRAIN, .drain = AGENT_DRAIN_GRACEFUL };
        GLEAN_TEST_CHECK(agent_sm_handle(m.sm, T0 + 6, &d, why, sizeof why) == 0, "drain");
        GLEAN_TEST_CHECK(agent_sm_handle(m.sm, T0 + 6, &d, why, sizeof why) == -EALREADY, "drain again");
        GLEAN_TEST_CHECK(ev(&m, 7, AGENT_EV_CLAIM, "C", alice, why, sizeof why) == -EPERM, "claim while draining");
        GLEAN_TEST_CHECK(ev(&m, 7, AGENT_EV_MATCH, "C", NULL, why, sizeof why) == -EPERM, "match while draining");
        /* START refuses: EPERM. */
        machine_free(&m);
        machine_new(&m, "START = Owner == \"coltrane\"\n");
        GLEAN_TEST_CHECK(ev(&m, 1, AGENT_EV_CLAIM, "A", alice, why, sizeof why) == -EPERM && strstr(why, "START"),
                         "START: %s", why);
        CHECK_STATE(&m, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE);
        classad_free(alice);
        machine_free(&m);
}

static void test_callbacks(void) {
        /* A caller that answers an action at once, from inside the hook. */
        Machine m;
        machine_new_answering(&m,
                              "ENABLE_BACKFILL = True\nBACKFILL_COMMAND = /bin/true\nSTART_BACKFILL = True\n"
                              "RunBenchmarks = (CurrentTime - LastBenchmark) > 3600\n",
                              true);
        /* Unclaimed: benchmarks (3, answered: 4), then backfill (7, answered: 26). */
        CHECK_STATE(&m, AGENT_STATE_BACKFILL, AGENT_ACT_BUSY);
        static const int want[] = { 1, 3, 4, 7, 26 };
        GLEAN_TEST_CHECK(m.seen.n_transitions == 5, "%u transitions", m.seen.n_transitions);
        for (unsigned i = 0; i < 5 && i < m.seen.n_transitions; i++)
                GLEAN_TEST_CHECK(m.seen.numbers[i] == want[i], "transition %u: %d, want %d", i, m.seen.numbers[i],
                                 want[i]);
        int64_t last = -1;
        GLEAN_TEST_CHECK(classad_eval_int(m.ad, "LastBenchmark", CA_MODE_OLD, &last) == 0 && last == T0,
                         "LastBenchmark %lld", (long long) last);
        /* The evaluator's clock is the real one again after the call. */
        ClassAdExpr *e = NULL;
        CaError cerr;
        CaValue v = ca_undefined();
        GLEAN_TEST_CHECK_FATAL(classad_expr_parse("time()", 6, CA_MODE_OLD, &e, &cerr) == 0, "parse");
        classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, &v);
        GLEAN_TEST_CHECK(v.type == CA_INT && v.u.i != T0 + 300, "time() %lld", (long long) v.u.i);
        ca_value_clear(&v);
        classad_expr_free(e);
        /* A claim: the command is killed (28); its exit leads to Claimed (29, 31). */
        ClassAd *alice = job("[ Owner = \"alice\"; JobUniverse = 5 ]");
        GLEAN_TEST_CHECK(ev(&m, 400, AGENT_EV_CLAIM, "A", alice, NULL, 0) == 0, "claim");
        CHECK_STATE(&m, AGENT_STATE_BACKFILL, AGENT_ACT_KILLING);
        GLEAN_TEST_CHECK(last_action(&m.seen, AGENT_DO_KILL_BACKFILL) >= 0, "kill-backfill");
        unsigned n = m.seen.n_actions;
        GLEAN_TEST_CHECK(ev(&m, 401, AGENT_EV_BACKFILL_EXIT, NULL, NULL, NULL, 0) == 0, "exit");
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(m.seen.n_actions == n, "no start-backfill on the way out");
        classad_free(alice);
        machine_free(&m);
}

/* How many actions of that type since index `from`. */
static unsigned count_actions(const Seen *s, unsigned from, AgentActionType t) {
        unsigned n = 0;
        for (unsigned i = from; i < s->n_actions && i < MAX_SEEN; i++)
                n += s->type[i] == t;
        return n;
}

/* An attribute of the slot ad evaluated as a boolean: 0, 1, or -1. */
static int ad_bool(const ClassAd *ad, const char *attr) {
        bool b = false;
        return classad_eval_bool(ad, attr, CA_MODE_OLD, &b) < 0 ? -1 : b;
}

#define BROKEN "processes of the job (cgroup slot1/job) would not die within KILLING_TIMEOUT (30 s) of being killed"

/* A broken slot (HTCondor's SlotBrokenReason): the running job is left
 * alone, its exit ends the claim, and the slot takes nothing again. */
static void test_broken(void) {
        Machine m;
        machine_new(&m, NULL);
        ClassAd *alice = job("[ Owner = \"alice\"; JobUniverse = 5 ]");
        char why[256];
        char *reason = NULL;
        GLEAN_TEST_CHECK(agent_sm_broken(m.sm) == NULL && !classad_has(m.ad, "SlotBrokenReason"), "not broken yet");
        GLEAN_TEST_CHECK(ad_bool(m.ad, "START") == 1 && ad_bool(m.ad, "Requirements") == 1, "START, Requirements");
        GLEAN_TEST_CHECK(agent_sm_set_broken(m.sm, T0 + 1, NULL) == -EINVAL && agent_sm_set_broken(m.sm, T0 + 1, "") ==
                                 -EINVAL && agent_sm_broken(m.sm) == NULL,
                         "no reason: -EINVAL, not broken");
        ev(&m, 2, AGENT_EV_CLAIM, "A", alice, NULL, 0);
        ev(&m, 3, AGENT_EV_ACTIVATE, "A", alice, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY);

        /* Broken while the job runs: nothing is done to it. */
        unsigned before = m.seen.n_actions;
        GLEAN_TEST_CHECK(agent_sm_set_broken(m.sm, T0 + 4, BROKEN) == 0, "set_broken");
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_BUSY);
        GLEAN_TEST_CHECK(m.seen.n_actions == before, "%u actions for the running job", m.seen.n_actions - before);
        GLEAN_TEST_CHECK(agent_sm_broken(m.sm) && strcmp(agent_sm_broken(m.sm), BROKEN) == 0, "agent_sm_broken '%s'",
                         agent_sm_broken(m.sm) ? agent_sm_broken(m.sm) : "(null)");
        GLEAN_TEST_CHECK(classad_eval_string(m.ad, "SlotBrokenReason", CA_MODE_OLD, &reason) == 0 && reason &&
                                 strcmp(reason, BROKEN) == 0,
                         "SlotBrokenReason '%s'", reason ? reason : "(none)");
        free(reason);
        reason = NULL;
        GLEAN_TEST_CHECK(ad_bool(m.ad, "START") == 0, "START is not FALSE");
        GLEAN_TEST_CHECK(ad_bool(m.ad, "Requirements") == 0, "Requirements is not FALSE");
        /* A second reason does not replace the first. */
        GLEAN_TEST_CHECK(agent_sm_set_broken(m.sm, T0 + 5, "something else") == 0 &&
                                 strcmp(agent_sm_broken(m.sm), BROKEN) == 0,
                         "the first reason stays");

        /* The job's exit ends the claim: Owner, and there it stays. */
        GLEAN_TEST_CHECK(ev(&m, 10, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0) == 0, "job-exit");
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        int i = last_action(&m.seen, AGENT_DO_CLAIM_ENDED);
        GLEAN_TEST_CHECK(i >= (int) before && strcmp(m.seen.claim[i], "A") == 0, "claim-ended A (%d)", i);
        GLEAN_TEST_CHECK(count_actions(&m.seen, before, AGENT_DO_START_JOB) == 0, "a job started");
        agent_sm_eval(m.sm, T0 + 1000);
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(ad_bool(m.ad, "Requirements") == 0 && ad_bool(m.ad, "START") == 0,
                         "Requirements and START FALSE in Owner");

        /* Refused: a claim (whatever START said before), a match. */
        GLEAN_TEST_CHECK(ev(&m, 1001, AGENT_EV_CLAIM, "B", alice, why, sizeof why) == -EPERM &&
                                 strstr(why, "slot1 is broken: ") && strstr(why, BROKEN),
                         "claim: '%s'", why);
        GLEAN_TEST_CHECK(ev(&m, 1001, AGENT_EV_MATCH, "M", NULL, why, sizeof why) == -EPERM && strstr(why, "broken"),
                         "match: '%s'", why);
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        machine_free(&m);

        /* An idle claim ends at once (START is FALSE: 10, then Owner). */
        machine_new(&m, NULL);
        ev(&m, 1, AGENT_EV_CLAIM, "A", alice, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_CLAIMED, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(agent_sm_set_broken(m.sm, T0 + 2, BROKEN) == 0, "set_broken");
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        i = last_action(&m.seen, AGENT_DO_CLAIM_ENDED);
        GLEAN_TEST_CHECK(i >= 0 && strcmp(m.seen.claim[i], "A") == 0, "claim-ended A (%d)", i);
        GLEAN_TEST_CHECK(ev(&m, 3, AGENT_EV_ACTIVATE, "A", alice, why, sizeof why) == -ENOENT, "activate: '%s'", why);
        machine_free(&m);

        /* An unclaimed slot leaves for Owner (IS_OWNER = START =?= FALSE), and
         * with IS_OWNER = False it stays Unclaimed but starts no backfill. */
        machine_new(&m, NULL);
        CHECK_STATE(&m, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE);
        agent_sm_set_broken(m.sm, T0 + 1, BROKEN);
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        machine_free(&m);
        machine_new(&m, "IS_OWNER = False\nENABLE_BACKFILL = True\nBACKFILL_COMMAND = /bin/true\n"
                        "START_BACKFILL = KeyboardIdle > 100000\n");
        CHECK_STATE(&m, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE);
        before = m.seen.n_actions;
        agent_sm_set_broken(m.sm, T0 + 1, BROKEN);
        classad_set_int(m.ad, "KeyboardIdle", 200000);
        agent_sm_eval(m.sm, T0 + 2);
        CHECK_STATE(&m, AGENT_STATE_UNCLAIMED, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(count_actions(&m.seen, before, AGENT_DO_START_BACKFILL) == 0, "backfill started");
        GLEAN_TEST_CHECK(ev(&m, 3, AGENT_EV_CLAIM, "B", alice, why, sizeof why) == -EPERM, "claim: '%s'", why);
        machine_free(&m);

        /* A dynamic slot is not released when its claim ends: its resources
         * stay out of use. */
        machine_new_full(&m, NULL, false, true);
        ev(&m, 1, AGENT_EV_CLAIM, "D", alice, NULL, 0);
        ev(&m, 2, AGENT_EV_ACTIVATE, "D", alice, NULL, 0);
        before = m.seen.n_actions;
        agent_sm_set_broken(m.sm, T0 + 3, BROKEN);
        ev(&m, 4, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0);
        agent_sm_eval(m.sm, T0 + 100);
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(count_actions(&m.seen, before, AGENT_DO_RELEASE_SLOT) == 0, "the broken d-slot was released");
        machine_free(&m);
        /* (Not broken, the same d-slot is released.) */
        machine_new_full(&m, NULL, false, true);
        ev(&m, 1, AGENT_EV_CLAIM, "D", alice, NULL, 0);
        ev(&m, 2, AGENT_EV_ACTIVATE, "D", alice, NULL, 0);
        before = m.seen.n_actions;
        ev(&m, 4, AGENT_EV_RELEASE, "D", NULL, NULL, 0);
        ev(&m, 5, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0);
        GLEAN_TEST_CHECK(count_actions(&m.seen, before, AGENT_DO_RELEASE_SLOT) >= 1, "the d-slot was not released");
        machine_free(&m);

        /* KILLING_TIMEOUT in Killing: the action the agent answers by
         * breaking the slot and giving up on the job (a job-exit). */
        machine_new(&m, "KILLING_TIMEOUT = 30\n");
        ev(&m, 1, AGENT_EV_CLAIM, "A", alice, NULL, 0);
        ev(&m, 2, AGENT_EV_ACTIVATE, "A", alice, NULL, 0);
        AgentEvent v = { .type = AGENT_EV_VACATE, .fast = true };
        agent_sm_handle(m.sm, T0 + 10, &v, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == T0 + 40, "KILLING_TIMEOUT at +40: %lld",
                         (long long) (agent_sm_next_deadline(m.sm) - T0));
        agent_sm_eval(m.sm, T0 + 40);
        GLEAN_TEST_CHECK(last_action(&m.seen, AGENT_DO_KILLING_TIMEOUT) >= 0, "killing-timeout");
        agent_sm_set_broken(m.sm, T0 + 40, BROKEN);
        CHECK_STATE(&m, AGENT_STATE_PREEMPTING, AGENT_ACT_KILLING);
        ev(&m, 40, AGENT_EV_JOB_EXIT, NULL, NULL, NULL, 0);
        CHECK_STATE(&m, AGENT_STATE_OWNER, AGENT_ACT_IDLE);
        GLEAN_TEST_CHECK(agent_sm_next_deadline(m.sm) == INT64_MAX, "no deadline left");
        GLEAN_TEST_CHECK(ev(&m, 41, AGENT_EV_CLAIM, "B", alice, why, sizeof why) == -EPERM, "claim: '%s'", why);
        machine_free(&m);
        classad_free(alice);
}

static void test_names(void) {
        for (int i = 0; i < AGENT_EV__MAX; i++) {
                AgentEventType t;
                const char *name = agent_event_name((AgentEventType) i);
                GLEAN_TEST_CHECK(name && agent_event_from_name(name, &t) == 0 && t == (AgentEventType) i, "event %d", i);
        }
        for (int i = 0; i < AGENT_DO__MAX; i++) {
                AgentActionType t;
                const char *name = agent_action_name((AgentActionType) i);
                GLEAN_TEST_CHECK(name && agent_action_from_name(name, &t) == 0 && t == (AgentActionType) i, "action %d",
                                 i);
        }
        AgentEventType t;
        AgentActionType a;
        GLEAN_TEST_CHECK(agent_event_from_name("nothing", &t) == -EINVAL && agent_event_name(AGENT_EV__MAX) == NULL,
                         "unknown event");
        GLEAN_TEST_CHECK(agent_action_from_name("nothing", &a) == -EINVAL && agent_action_name(AGENT_DO__MAX) == NULL,
                         "unknown action");
}

static CU_TestInfo timeline_tests[] = {
        { "all", test_timelines },
        { "malformed", test_malformed },
        { "expectation lines", test_expectation_lines },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo api_tests[] = {
        { "actions", test_actions },
        { "preempting-claim-refused", test_preempting_claim_refused_by_start },
        { "deadlines", test_deadlines },
        { "refusals", test_refusals },
        { "callbacks", test_callbacks },
        { "broken", test_broken },
        { "names", test_names },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "timelines", NULL, NULL, NULL, NULL, timeline_tests },
        { "api", NULL, NULL, NULL, NULL, api_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

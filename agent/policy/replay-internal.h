/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay-internal.h — what the two files of `glean policy-replay` share:
 * replay.c (the clock, the timeline's structure, the entry points) and
 * replay-lines.c (the lines that set sensors, send events and check
 * expectations).
 */
#pragma once

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/words.h"
#include "policy.h"
#include "replay.h"

#define HISTORY 64
#define MAX_TIME (100LL * 366 * 86400) /* a century after the epoch */
#define MAX_HELD 8

typedef struct Replay {
        const char *source;
        FILE *out;             /* NULL in the check pass */
        bool check;            /* the check pass: every line parsed and checked, nothing run */
        unsigned long max_evals;
        Config *cfg;
        ClassAd *ad;
        ClassAd *job;          /* the default job ad */
        AgentSlotSM *sm;       /* NULL until the first timed line */
        AgentPolicyKnobs knobs;
        unsigned slot_id;
        char slot_name[24];
        int64_t polling, update;
        int64_t epoch, now;
        int64_t kbd_until, console_until; /* the keyboard (console) was last in use then */
        int history[HISTORY];  /* transition numbers, a ring */
        unsigned n_history;
        unsigned mark;         /* n_history at the previous expectation line */
        int last_refusal;      /* the previous event's refusal (-errno), 0 if accepted */
        bool had_event;
        unsigned actions_seen; /* bit per AgentActionType since the last expect-(no-)action */
        bool keep_alives;      /* the claimant sends keep-alives every ALIVE_INTERVAL */
        bool others_busy;      /* the machine's other slots are not all drained */
        char *held[MAX_HELD];  /* the claim ids the claimant holds */
        AgentReplayResult res;
} Replay;

int rp_fail_code(ConfigError *err, int code, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 5, 6)));
#define rp_fail(err, file, line, ...) rp_fail_code(err, -EINVAL, file, line, __VA_ARGS__)

/* ---- replay.c ---- */

void rp_print_time(Replay *rp, int64_t t);
/* KeyboardIdle and ConsoleIdle follow the clock. */
void rp_update_sensors(Replay *rp);
/* The claimant holds the claim id (keeps it alive), or no longer. */
void rp_hold(Replay *rp, const char *id, bool held);
/* "N[smhd]", also "1h30m" (rel_ok: "+..." means after prev). */
int rp_parse_time(const char *tok, bool rel_ok, int64_t prev, int64_t *ret);
bool rp_is_attr_name(const char *s);
int rp_parse_ad(Replay *rp, const char *text, int line, ClassAd **ret, ConfigError *err);

/* ---- replay-lines.c ----
 *
 * Each line parses and checks all it is given first; in the check pass
 * (rp->check) it stops there, before touching the state machine. */

const char *rp_errno_name(int code);
int rp_expect_state(Replay *rp, char *p, int line, ConfigError *err);
/* expect-transition, or (only_new) expect-new-transition. */
int rp_expect_transitions(Replay *rp, char *p, bool only_new, int line, ConfigError *err);
int rp_expect_no_transition(Replay *rp, char *p, int line, ConfigError *err);
int rp_expect_actions(Replay *rp, char *p, bool want, int line, ConfigError *err);
int rp_expect_refused(Replay *rp, char *p, int line, ConfigError *err);
int rp_expect_eval(Replay *rp, char *p, int line, ConfigError *err);
int rp_set_attr(Replay *rp, char *p, int line, ConfigError *err);
int rp_key(Replay *rp, char *p, int line, ConfigError *err);
int rp_do_event(Replay *rp, AgentEventType type, char *p, int line, ConfigError *err);

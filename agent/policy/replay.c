/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c — run one slot's policy state machine over a timeline
 * (docs/policy-replay.md has the same with examples): the clock, the
 * timeline's structure and the entry points; replay-lines.c has the lines
 * that set sensors, send events and check expectations.
 *
 * A timeline is a text file. Everything before a line "---" is
 * configuration (glean's configuration language, read on top of the
 * built-in defaults); after it come the timeline lines, one per line, "#"
 * (outside a string) starting a comment. First, optionally, header lines:
 *
 *     epoch 2026-11-23T08:00:00Z   time 0, in UTC (default 2026-01-01T00:00:00Z, a Thursday)
 *     slot N                       the slot seen: SlotID, SLOT<N>_ knobs (default 1)
 *     job [ Owner = "bob"; ... ]   the job ad of claims and activations that name none
 *                                  (also allowed later, for what follows)
 *
 * then timed lines, TIME WHAT:
 *
 *     TIME set ATTR = EXPR         a sensor value or any slot attribute; KeyboardIdle and
 *                                  ConsoleIdle then grow with the clock on their own
 *     TIME key [for DURATION]      the owner touches the keyboard (and the console), or
 *                                  keeps using it for DURATION: KeyboardIdle = 0 until then
 *     TIME tick                    evaluate the policy now
 *     TIME keep-alives on|off      whether the claimant keeps its claims alive (default on:
 *                                  a keep-alive for every claim it was granted and has not
 *                                  released, at every multiple of ALIVE_INTERVAL)
 *     TIME others-drained on|off   whether the machine's other slots are all drained, which
 *                                  Drained/Retiring waits for (33) (default on)
 *     TIME match [CLAIMID]
 *     TIME claim CLAIMID [by-priority] [AD]
 *     TIME activate CLAIMID [AD]
 *     TIME job-exit [CLAIMID]
 *     TIME keep-alive CLAIMID
 *     TIME deactivate CLAIMID [fast]
 *     TIME release CLAIMID
 *     TIME vacate [fast]
 *     TIME drain [graceful|quick|fast]
 *     TIME cancel-drain
 *     TIME shutdown [graceful|peaceful|fast]
 *     TIME backfill-started | backfill-exit | benchmarks-done
 *     TIME expect STATE[/ACTIVITY]        the slot is in that state (and activity) now
 *     TIME expect-transition N [N...]     the last transitions were numbers ... N of figure 3.2
 *                                         (0: a transition the figure does not number)
 *     TIME expect-new-transition N [N...] the same, counting only the transitions since the
 *                                         previous expectation (expect...) line
 *     TIME expect-no-transition           no transition since the previous expectation line
 *     TIME expect-action NAME [NAME...]   each action happened since the previous expect-action
 *                                         or expect-no-action line (or the start)
 *     TIME expect-no-action NAME [NAME...]  none of them happened since then
 *     TIME expect-refused [ERRNO]         the previous event was refused (with EBUSY, ENOENT,
 *                                         EPERM, EEXIST, EALREADY or EINVAL)
 *     TIME expect-eval EXPR               EXPR, its configuration macros expanded, evaluated in
 *                                         the slot ad with the claim's job as TARGET, is TRUE
 *
 * TIME is seconds since the epoch of the timeline, "+N" for N after the
 * previous timed line; a suffix s, m, h or d gives the unit, and units
 * add up ("1h30m", "+1m15s"); DURATION likewise, without "+". Times never go back. Between lines the clock
 * advances as in the agent: the policy is evaluated at every multiple of
 * POLLING_INTERVAL (counted from the epoch) while the slot is Matched,
 * Claimed, Preempting or in Backfill, of UPDATE_INTERVAL otherwise, and at
 * every deadline of the state machine (MATCH_TIMEOUT, vacate time,
 * KILLING_TIMEOUT, leases, CLAIM_WORKLIFE, retirement); an evaluation due
 * at the time of a line comes before it. The slot starts in Owner at time
 * 0 and is evaluated at once, after the set and key lines of time 0 that
 * come before any other timed line (the sensor values it starts with).
 * The clock of the policy (ClockMin, ClockDay) is UTC. Events act at once;
 * set, key, keep-alives and others-drained are seen at the next evaluation.
 *
 * The whole timeline is checked first (Replay.check: every line parsed and
 * checked, nothing run), so that a malformed line is reported before
 * anything is printed; then it runs.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/file.h"
#include "replay-internal.h"

#define DEFAULT_EPOCH 1767225600 /* 2026-01-01T00:00:00Z */
#define DEFAULT_JOB                                                                                         \
        "[ Owner = \"alice\"; User = \"alice@replay\"; JobUniverse = 5; ClusterId = 1; ProcId = 0; "       \
        "ImageSize = 1000; RequestCpus = 1; RequestMemory = 128; Requirements = true ]"

int rp_fail_code(ConfigError *err, int code, const char *file, int line, const char *fmt, ...) {
        snprintf(err->file, sizeof err->file, "%s", file);
        err->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        return code;
}

void rp_print_time(Replay *rp, int64_t t) {
        fprintf(rp->out, "t=%-7lld ", (long long) (t - rp->epoch));
}

/* ---- hooks ---- */

static void on_transition(void *userdata, const AgentTransition *t) {
        Replay *rp = userdata;
        rp->res.transitions++;
        rp->history[rp->n_history++ % HISTORY] = t->number;
        char num[16];
        if (t->number)
                snprintf(num, sizeof num, "[%d]", t->number);
        else
                snprintf(num, sizeof num, "[-]");
        rp_print_time(rp, t->time);
        fprintf(rp->out, "%s %s/%s -> %s/%s %s %s\n", rp->slot_name, agent_state_name(t->from_state),
                agent_activity_name(t->from_act), agent_state_name(t->to_state), agent_activity_name(t->to_act), num,
                t->reason ? t->reason : "");
}

static bool all_drained(void *userdata) {
        const Replay *rp = userdata;
        return !rp->others_busy;
}

static void on_action(void *userdata, const AgentAction *a) {
        Replay *rp = userdata;
        rp->actions_seen |= 1u << a->type;
        rp_print_time(rp, rp->now);
        fprintf(rp->out, "%s action %s%s%s%s%s\n", rp->slot_name, agent_action_name(a->type), a->claim_id ? " " : "",
                a->claim_id ? a->claim_id : "", a->reason ? ": " : "", a->reason ? a->reason : "");
}

/* ---- the clock ---- */

/* KeyboardIdle and ConsoleIdle follow the clock. */
void rp_update_sensors(Replay *rp) {
        classad_set_int(rp->ad, "KeyboardIdle", rp->now > rp->kbd_until ? rp->now - rp->kbd_until : 0);
        classad_set_int(rp->ad, "ConsoleIdle", rp->now > rp->console_until ? rp->now - rp->console_until : 0);
}

static int64_t interval(const Replay *rp) {
        switch (agent_sm_state(rp->sm)) {
        case AGENT_STATE_MATCHED:
        case AGENT_STATE_CLAIMED:
        case AGENT_STATE_PREEMPTING:
        case AGENT_STATE_BACKFILL:
                return rp->polling;
        default:
                return rp->update;
        }
}

/* The claimant: the claims it holds, kept alive every ALIVE_INTERVAL. */
void rp_hold(Replay *rp, const char *id, bool held) {
        for (int i = 0; i < MAX_HELD; i++)
                if (rp->held[i] && strcmp(rp->held[i], id) == 0) {
                        if (!held) {
                                free(rp->held[i]);
                                rp->held[i] = NULL;
                        }
                        return;
                }
        for (int i = 0; held && i < MAX_HELD; i++)
                if (!rp->held[i]) {
                        rp->held[i] = strdup(id);
                        return;
                }
}

static bool holds_any(const Replay *rp) {
        for (int i = 0; i < MAX_HELD; i++)
                if (rp->held[i])
                        return true;
        return false;
}

static void send_keep_alives(Replay *rp) {
        for (int i = 0; i < MAX_HELD; i++) {
                if (!rp->held[i])
                        continue;
                AgentEvent ev = { .type = AGENT_EV_KEEP_ALIVE, .claim_id = rp->held[i] };
                if (agent_sm_handle(rp->sm, rp->now, &ev, NULL, 0) < 0) {
                        /* The slot no longer knows it: the claimant forgets it too. */
                        free(rp->held[i]);
                        rp->held[i] = NULL;
                }
        }
}

/* Move the clock to t, evaluating as the agent would on the way. */
static int advance(Replay *rp, int64_t t, int line, ConfigError *err) {
        int64_t ai = rp->knobs.alive_interval > 0 ? rp->knobs.alive_interval : 300;
        while (rp->now < t) {
                int64_t iv = interval(rp);
                int64_t next = rp->epoch + ((rp->now - rp->epoch) / iv + 1) * iv;
                int64_t dl = agent_sm_next_deadline(rp->sm);
                if (dl <= rp->now)
                        dl = rp->now + 1;
                if (dl < next)
                        next = dl;
                int64_t alive = INT64_MAX;
                if (rp->keep_alives && holds_any(rp))
                        alive = rp->epoch + ((rp->now - rp->epoch) / ai + 1) * ai;
                if ((alive < next ? alive : next) > t)
                        break;
                rp->now = alive < next ? alive : next;
                rp_update_sensors(rp);
                if (rp->now == alive)
                        send_keep_alives(rp);
                if (rp->now != next)
                        continue;
                if (++rp->res.evaluations > rp->max_evals)
                        return rp_fail_code(err, -E2BIG, rp->source, line,
                                         "more than %lu evaluations: the timeline is too long for its "
                                         "POLLING_INTERVAL and UPDATE_INTERVAL",
                                         rp->max_evals);
                agent_sm_eval(rp->sm, rp->now);
        }
        rp->now = t;
        rp_update_sensors(rp);
        return 0;
}

/* "N[smhd]", also "1h30m" (rel_ok: "+..." means after prev). */
int rp_parse_time(const char *tok, bool rel_ok, int64_t prev, int64_t *ret) {
        bool rel = rel_ok && *tok == '+';
        if (rel)
                tok++;
        if (!isdigit((unsigned char) *tok))
                return -EINVAL;
        int64_t t = 0;
        while (*tok) {
                if (!isdigit((unsigned char) *tok))
                        return -EINVAL;
                char *end;
                errno = 0;
                long long v = strtoll(tok, &end, 10);
                if (errno || v > MAX_TIME)
                        return -EINVAL;
                int64_t mul = 1;
                switch (*end) {
                case 's': end++; break;
                case 'm': mul = 60, end++; break;
                case 'h': mul = 3600, end++; break;
                case 'd': mul = 86400, end++; break;
                default:
                        if (*end)
                                return -EINVAL;
                        break;
                }
                t += v * mul;
                if (t > MAX_TIME)
                        return -EINVAL;
                tok = end;
        }
        t += rel ? prev : 0;
        if (t > MAX_TIME)
                return -EINVAL;
        *ret = t;
        return 0;
}

/* ---- parsing helpers ---- */

bool rp_is_attr_name(const char *s) {
        return classad_is_plain_name(s);
}

int rp_parse_ad(Replay *rp, const char *text, int line, ClassAd **ret, ConfigError *err) {
        CaError cerr;
        if (classad_parse(text, strlen(text), CA_MODE_OLD, ret, &cerr) < 0)
                return rp_fail(err, rp->source, line, "not a ClassAd (column %d): %s", cerr.column, cerr.msg);
        return 0;
}

/* The slot ad and the knobs, at the first timed line. */
static int make_ad(Replay *rp, ConfigError *err) {
        int r = agent_policy_knobs(rp->cfg, rp->slot_id, &rp->knobs, err);
        if (r < 0)
                return r;
        rp->knobs.benchmarks = true;
        rp->knobs.clock_utc = true;
        int64_t v;
        rp->polling = config_get_int(rp->cfg, "POLLING_INTERVAL", &v, err) >= 0 && v > 0 ? v : 5;
        rp->update = config_get_int(rp->cfg, "UPDATE_INTERVAL", &v, err) >= 0 && v > 0 ? v : 300;
        if (rp->polling > 86400)
                rp->polling = 86400;
        if (rp->update > 86400)
                rp->update = 86400;
        if ((r = classad_new(&rp->ad)) < 0)
                return r;
        char base[512];
        snprintf(base, sizeof base,
                 "[ Name = \"%s@replay\"; Machine = \"replay\"; SlotID = %u; SlotTypeID = 0; Cpus = 1; "
                 "TotalCpus = 1; Memory = 1024; Disk = 1000000; Arch = \"X86_64\"; OpSys = \"LINUX\"; "
                 "LoadAvg = 0.0; CondorLoadAvg = 0.0; TotalLoadAvg = 0.0; TotalCondorLoadAvg = 0.0 ]",
                 rp->slot_name, rp->slot_id);
        ClassAd *b;
        CaError cerr;
        if ((r = classad_parse(base, strlen(base), CA_MODE_OLD, &b, &cerr)) < 0)
                return r;
        classad_update(rp->ad, b);
        classad_free(b);
        if ((r = agent_policy_fill_ad(rp->cfg, rp->slot_id, rp->ad, err)) < 0)
                return r;
        char **names = NULL;
        if ((r = config_startd_attrs(rp->cfg, rp->slot_id, &names, err)) < 0)
                return r;
        for (size_t i = 0; names[i]; i++) {
                char *val = NULL;
                if (config_get_slot(rp->cfg, rp->slot_id, names[i], &val, err) >= 0 && *val &&
                    classad_set_expr_text(rp->ad, names[i], val, CA_MODE_OLD, &cerr) < 0) {
                        const char *f = "<config>";
                        int l = 0;
                        config_where(rp->cfg, names[i], &f, &l);
                        r = rp_fail(err, f, l, "STARTD_ATTRS: %s = %.200s is not a ClassAd expression", names[i], val);
                        free(val);
                        config_strv_free(names);
                        return r;
                }
                free(val);
        }
        config_strv_free(names);
        rp_update_sensors(rp);
        return 0;
}

/* The machine, at the first timed line other than set and key at time 0
 * (which give the sensor values the slot starts with). */
static int start_machine(Replay *rp, ConfigError *err) {
        int r;
        if (!rp->ad && (r = make_ad(rp, err)) < 0)
                return r;
        AgentPolicyHooks hooks = { .transition = on_transition, .action = on_action, .all_drained = all_drained };
        if ((r = agent_sm_new(rp->slot_name, rp->ad, &rp->knobs, &hooks, rp, rp->now, &rp->sm)) < 0)
                return r;
        agent_sm_eval(rp->sm, rp->now);
        return 0;
}

static int header_line(Replay *rp, const char *tok, char *p, int line, ConfigError *err) {
        if (strcmp(tok, "job") == 0) {
                ClassAd *ad;
                int r = rp_parse_ad(rp, glean_skip_space(p), line, &ad, err);
                if (r < 0)
                        return r;
                classad_free(rp->job);
                rp->job = ad;
                return 0;
        }
        if (rp->ad)
                return rp_fail(err, rp->source, line, "%s: must come before the first timed line", tok);
        char *v = glean_next_word(&p);
        if (strcmp(tok, "epoch") == 0) {
                struct tm tm = { 0 };
                char *end = v ? strptime(v, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
                if (!end || *end || *glean_skip_space(p) || tm.tm_year < 70 || tm.tm_year > 1000)
                        return rp_fail(err, rp->source, line, "epoch: expected YYYY-MM-DDTHH:MM:SSZ");
                rp->epoch = rp->now = timegm(&tm);
                rp->kbd_until = rp->console_until = rp->epoch - 86400;
                return 0;
        }
        /* slot */
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (!v || *end || n < 1 || n > 9999 || *glean_skip_space(p))
                return rp_fail(err, rp->source, line, "slot: expected a slot number");
        rp->slot_id = (unsigned) n;
        snprintf(rp->slot_name, sizeof rp->slot_name, "slot%u", rp->slot_id);
        return 0;
}

/* The expectation lines; each, checked, marks where the next one's
 * "since the previous expectation line" begins. */
static int expect_line(Replay *rp, const char *what, char *p, int line, ConfigError *err) {
        if (strcmp(what, "expect") == 0)
                return rp_expect_state(rp, p, line, err);
        if (strcmp(what, "expect-transition") == 0)
                return rp_expect_transitions(rp, p, false, line, err);
        if (strcmp(what, "expect-new-transition") == 0)
                return rp_expect_transitions(rp, p, true, line, err);
        if (strcmp(what, "expect-no-transition") == 0)
                return rp_expect_no_transition(rp, p, line, err);
        if (strcmp(what, "expect-action") == 0)
                return rp_expect_actions(rp, p, true, line, err);
        if (strcmp(what, "expect-no-action") == 0)
                return rp_expect_actions(rp, p, false, line, err);
        if (strcmp(what, "expect-refused") == 0)
                return rp_expect_refused(rp, p, line, err);
        if (strcmp(what, "expect-eval") == 0)
                return rp_expect_eval(rp, p, line, err);
        return rp_fail(err, rp->source, line, "unknown expectation '%s'", what);
}

static int run_line(Replay *rp, char *p, int line, ConfigError *err) {
        char *tok = glean_next_word(&p);
        if (!tok)
                return rp_fail(err, rp->source, line, "expected TIME and an event");
        if (strcmp(tok, "job") == 0 || strcmp(tok, "epoch") == 0 || strcmp(tok, "slot") == 0)
                return header_line(rp, tok, p, line, err);
        int64_t t;
        if (rp_parse_time(tok, true, rp->now - rp->epoch, &t) < 0)
                return rp_fail(err, rp->source, line, "'%s' is not a time (N, +N, with s, m, h or d)", tok);
        if (rp->epoch + t < rp->now)
                return rp_fail(err, rp->source, line, "time %lld is before the previous line's", (long long) t);
        char *what = glean_next_word(&p);
        if (!what)
                return rp_fail(err, rp->source, line, "expected an event after the time");
        int r;
        bool initial = t == 0 && (strcmp(what, "set") == 0 || strcmp(what, "key") == 0);
        if (!rp->ad && (r = make_ad(rp, err)) < 0)
                return r;
        if (rp->check)
                rp->now = rp->epoch + t; /* nothing runs: the clock only moves on */
        else {
                if (!rp->sm && !initial && (r = start_machine(rp, err)) < 0)
                        return r;
                if (rp->sm && (r = advance(rp, rp->epoch + t, line, err)) < 0)
                        return r;
        }

        AgentEventType type;
        if (strcmp(what, "set") == 0)
                return rp_set_attr(rp, p, line, err);
        if (strcmp(what, "key") == 0)
                return rp_key(rp, p, line, err);
        if (strcmp(what, "keep-alives") == 0 || strcmp(what, "others-drained") == 0) {
                char *v = glean_next_word(&p);
                if (!v || (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) || *glean_skip_space(p))
                        return rp_fail(err, rp->source, line, "%s: on or off", what);
                if (strcmp(what, "keep-alives") == 0)
                        rp->keep_alives = strcmp(v, "on") == 0;
                else
                        rp->others_busy = strcmp(v, "off") == 0;
                return 0;
        }
        if (strcmp(what, "tick") == 0) {
                if (*glean_skip_space(p))
                        return rp_fail(err, rp->source, line, "tick: unexpected '%s'", glean_skip_space(p));
                if (!rp->check)
                        agent_sm_eval(rp->sm, rp->now);
                return 0;
        }
        if (strncmp(what, "expect", 6) == 0) {
                r = expect_line(rp, what, p, line, err);
                rp->mark = rp->n_history;
                return r;
        }
        if (agent_event_from_name(what, &type) < 0)
                return rp_fail(err, rp->source, line, "unknown event '%s'", what);
        return rp_do_event(rp, type, p, line, err);
}

/* Cuts a line at a '#' outside a string. */
static void strip_comment(char *l) {
        bool in_str = false;
        for (char *c = l; *c; c++) {
                if (in_str && *c == '\\' && c[1])
                        c++;
                else if (*c == '"')
                        in_str = !in_str;
                else if (*c == '#' && !in_str) {
                        *c = 0;
                        return;
                }
        }
}

static int replay_init(Replay *rp, const char *source_name, const AgentReplayOptions *opts, Config *cfg, FILE *out,
                       bool check) {
        *rp = (Replay){
                .source = source_name,
                .out = out,
                .check = check,
                .max_evals = opts && opts->max_evaluations ? opts->max_evaluations : AGENT_REPLAY_MAX_EVALUATIONS,
                .cfg = cfg,
                .slot_id = 1,
                .slot_name = "slot1",
                .epoch = DEFAULT_EPOCH,
                .now = DEFAULT_EPOCH,
                .kbd_until = DEFAULT_EPOCH - 86400,
                .console_until = DEFAULT_EPOCH - 86400,
                .keep_alives = true,
        };
        CaError cerr;
        return classad_parse(DEFAULT_JOB, strlen(DEFAULT_JOB), CA_MODE_OLD, &rp->job, &cerr);
}

/* What replay_init() and the lines gave rp, but not the configuration. */
static void replay_clear(Replay *rp) {
        agent_sm_free(rp->sm);
        for (int i = 0; i < MAX_HELD; i++)
                free(rp->held[i]);
        classad_free(rp->ad);
        classad_free(rp->job);
        *rp = (Replay){ 0 };
}

/* The timeline's lines, from first_line on: checked only (rp->check: each
 * line parsed, nothing run, nothing printed), or run. */
static int replay_lines(Replay *rp, const char *events, int first_line, ConfigError *err) {
        char *copy = strdup(events); /* the lines are cut up in place */
        if (!copy)
                return -ENOMEM;
        int r = 0, line = first_line;
        for (char *l = copy; r >= 0 && l && *l; line++) {
                char *nl = strchr(l, '\n');
                if (nl)
                        *nl = 0;
                strip_comment(l);
                if (*glean_skip_space(l))
                        r = run_line(rp, l, line, err);
                l = nl ? nl + 1 : NULL;
        }
        /* A timeline of no timed line still has a slot: its configuration is checked too. */
        if (r >= 0 && !rp->ad)
                r = make_ad(rp, err);
        if (r >= 0 && !rp->check && !rp->sm)
                r = start_machine(rp, err);
        free(copy);
        return r;
}

int agent_replay_string_opts(const char *text, const char *source_name, const AgentReplayOptions *opts, FILE *out,
                             AgentReplayResult *ret, ConfigError *err) {
        char *copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        /* Split at the "---" line. */
        const char *events = copy;
        int first_line = 1, n = 1;
        for (char *l = copy; l && *l; n++) {
                char *nl = strchr(l, '\n');
                size_t len = nl ? (size_t) (nl - l) : strlen(l);
                while (len && (l[len - 1] == '\r' || l[len - 1] == ' ' || l[len - 1] == '\t'))
                        len--;
                if (len == 3 && memcmp(l, "---", 3) == 0) {
                        *l = 0;
                        events = nl ? nl + 1 : l + 3;
                        first_line = n + 1;
                        break;
                }
                l = nl ? nl + 1 : NULL;
        }

        Config *cfg = NULL;
        int r = config_new(&cfg);
        if (r >= 0 && events != copy)
                r = config_load_string(cfg, copy, source_name, err);
        /* The whole timeline is checked first, so that a malformed line is
         * reported before anything is printed; then it runs. */
        Replay rp;
        if (r >= 0 && (r = replay_init(&rp, source_name, opts, cfg, NULL, true)) >= 0) {
                r = replay_lines(&rp, events, first_line, err);
                replay_clear(&rp);
        }
        if (r >= 0 && (r = replay_init(&rp, source_name, opts, cfg, out, false)) >= 0) {
                r = replay_lines(&rp, events, first_line, err);
                if (r >= 0 && ret)
                        *ret = rp.res;
                replay_clear(&rp);
        }
        config_free(cfg);
        free(copy);
        return r < 0 ? r : 0;
}

int agent_replay_string(const char *text, const char *source_name, FILE *out, AgentReplayResult *ret,
                        ConfigError *err) {
        return agent_replay_string_opts(text, source_name, NULL, out, ret, err);
}

int agent_replay_file(const char *path, FILE *out, AgentReplayResult *ret, ConfigError *err) {
        char *buf = NULL;
        size_t len = 0;
        int r = glean_read_file(path, 16 << 20, &buf, &len);
        if (r == -EFBIG)
                return rp_fail(err, path, 0, "larger than 16 MiB");
        if (r == -ENOMEM)
                return r;
        if (r < 0) {
                rp_fail_code(err, r, path, 0, "cannot open: %s", strerror(-r));
                return r;
        }
        if (memchr(buf, 0, len)) {
                free(buf);
                return rp_fail(err, path, 0, "a NUL byte: not a text file");
        }
        r = agent_replay_string(buf, path, out, ret, err);
        free(buf);
        return r;
}

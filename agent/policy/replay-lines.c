/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay-lines.c — the timed lines of a timeline that do something: set a
 * sensor or an attribute, touch the keyboard, send an event to the slot,
 * or check an expectation (the format: replay.c, docs/policy-replay.md).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "replay-internal.h"

static const struct {
        const char *name;
        int code;
} errnos[] = {
        { "EBUSY", EBUSY }, { "ENOENT", ENOENT }, { "EPERM", EPERM },
        { "EEXIST", EEXIST }, { "EALREADY", EALREADY }, { "EINVAL", EINVAL },
};

const char *rp_errno_name(int code) {
        for (size_t i = 0; i < sizeof errnos / sizeof *errnos; i++)
                if (errnos[i].code == code)
                        return errnos[i].name;
        return "error";
}

/* ---- expectations ---- */

static void expectation(Replay *rp, bool ok, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void expectation(Replay *rp, bool ok, int line, const char *fmt, ...) {
        rp->res.expectations++;
        if (ok)
                return;
        rp->res.failed++;
        rp_print_time(rp, rp->now);
        fprintf(rp->out, "EXPECTATION FAILED (line %d): ", line);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(rp->out, fmt, ap);
        va_end(ap);
        fputc('\n', rp->out);
}

int rp_expect_state(Replay *rp, char *p, int line, ConfigError *err) {
        char *what = glean_next_word(&p);
        if (!what || *glean_skip_space(p))
                return rp_fail(err, rp->source, line, "expect: expected STATE or STATE/ACTIVITY");
        char *slash = strchr(what, '/');
        if (slash)
                *slash = 0;
        AgentState s;
        AgentActivity a = AGENT_ACT_IDLE;
        if (agent_state_from_name(what, &s) < 0 || (slash && agent_activity_from_name(slash + 1, &a) < 0))
                return rp_fail(err, rp->source, line, "expect: unknown state or activity '%s%s%s'", what, slash ? "/" : "",
                            slash ? slash + 1 : "");
        if (rp->check)
                return 0;
        AgentState hs = agent_sm_state(rp->sm);
        AgentActivity ha = agent_sm_activity(rp->sm);
        expectation(rp, hs == s && (!slash || ha == a), line, "want %s%s%s, have %s/%s", agent_state_name(s),
                    slash ? "/" : "", slash ? agent_activity_name(a) : "", agent_state_name(hs),
                    agent_activity_name(ha));
        return 0;
}

/* The numbers of the last k of the n transitions in the history ("13 18"). */
static void format_history(const Replay *rp, unsigned k, char *buf, size_t len) {
        size_t at = 0;
        buf[0] = 0;
        if (k > HISTORY)
                k = HISTORY;
        for (unsigned i = 0; i < k && at < len - 8; i++)
                at += (size_t) snprintf(buf + at, len - at, "%s%d", i ? " " : "",
                                        rp->history[(rp->n_history - k + i) % HISTORY]);
}

int rp_expect_transitions(Replay *rp, char *p, bool only_new, int line, ConfigError *err) {
        const char *name = only_new ? "expect-new-transition" : "expect-transition";
        int want[HISTORY];
        unsigned n = 0;
        char *tok, *end;
        while ((tok = glean_next_word(&p))) {
                long v = strtol(tok, &end, 10);
                if (*end || end == tok || v < 0 || v > 99 || n == HISTORY)
                        return rp_fail(err, rp->source, line, "%s: expected numbers, not '%s'", name, tok);
                want[n++] = (int) v;
        }
        if (!n || *glean_skip_space(p))
                return rp_fail(err, rp->source, line, "%s: expected one number or more", name);
        if (rp->check)
                return 0;
        /* Which transitions count: all of them, or those since the previous expectation line. */
        unsigned have = only_new ? rp->n_history - rp->mark : rp->n_history;
        bool ok = have >= n;
        for (unsigned i = 0; ok && i < n; i++)
                ok = rp->history[(rp->n_history - n + i) % HISTORY] == want[i];
        char shown[HISTORY * 4];
        format_history(rp, have < n ? have : n, shown, sizeof shown);
        if (only_new)
                expectation(rp, ok, line,
                            "want the transitions since the previous expectation line to end as the line says, "
                            "they were: %s",
                            have ? shown : "(none)");
        else
                expectation(rp, ok, line, "want the last transitions to be numbered as the line says, they were: %s",
                            have ? shown : "(none)");
        return 0;
}

int rp_expect_no_transition(Replay *rp, char *p, int line, ConfigError *err) {
        if (*glean_skip_space(p))
                return rp_fail(err, rp->source, line, "expect-no-transition: unexpected '%s'", glean_skip_space(p));
        if (rp->check)
                return 0;
        unsigned have = rp->n_history - rp->mark;
        char shown[HISTORY * 4];
        format_history(rp, have, shown, sizeof shown);
        expectation(rp, have == 0, line, "want no transition since the previous expectation line, there were: %s%s",
                    have > HISTORY ? "... " : "", shown);
        return 0;
}

int rp_expect_actions(Replay *rp, char *p, bool want, int line, ConfigError *err) {
        char *first = glean_skip_space(p), *tok;
        AgentActionType t;
        unsigned n = 0;
        while ((tok = glean_next_word(&p))) {
                if (agent_action_from_name(tok, &t) < 0)
                        return rp_fail(err, rp->source, line, "unknown action '%s'", tok);
                n++;
        }
        if (!n || *glean_skip_space(p))
                return rp_fail(err, rp->source, line, "expected the name of an action");
        if (rp->check)
                return 0;
        /* The names again, now cut apart by NULs. */
        tok = first;
        for (unsigned i = 0; i < n; i++) {
                if (i > 0)
                        tok = glean_skip_space(tok + strlen(tok) + 1);
                agent_action_from_name(tok, &t);
                bool seen = rp->actions_seen & (1u << t);
                expectation(rp, seen == want, line, "want action %s %s", tok,
                            want ? "since the last expect-action" : "not to have happened since the last expect-action");
        }
        rp->actions_seen = 0;
        return 0;
}

int rp_expect_refused(Replay *rp, char *p, int line, ConfigError *err) {
        char *tok = glean_next_word(&p);
        int code = 0;
        if (tok) {
                for (size_t i = 0; i < sizeof errnos / sizeof *errnos; i++)
                        if (strcmp(tok, errnos[i].name) == 0)
                                code = errnos[i].code;
                if (!code)
                        return rp_fail(err, rp->source, line, "expect-refused: unknown error '%s'", tok);
        }
        if (*glean_skip_space(p))
                return rp_fail(err, rp->source, line, "expect-refused: unexpected '%s'", glean_skip_space(p));
        if (!rp->had_event)
                return rp_fail(err, rp->source, line, "expect-refused: no event before");
        if (rp->check)
                return 0;
        if (code)
                expectation(rp, rp->last_refusal == -code, line, "want the previous event refused with %s, %s%s",
                            tok, rp->last_refusal ? "it was refused with " : "it was accepted",
                            rp->last_refusal ? rp_errno_name(-rp->last_refusal) : "");
        else
                expectation(rp, rp->last_refusal < 0, line, "want the previous event refused, it was accepted");
        return 0;
}

int rp_expect_eval(Replay *rp, char *p, int line, ConfigError *err) {
        const char *text = glean_skip_space(p);
        if (!*text)
                return rp_fail(err, rp->source, line, "expect-eval: expected a ClassAd expression");
        /* Macros expand as in the configuration ($(WorkHours)). */
        char *expanded = NULL;
        ConfigError xerr = { 0 };
        int r = config_expand(rp->cfg, text, &expanded, &xerr);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return rp_fail(err, rp->source, line, "expect-eval: %s", xerr.msg);
        bool macros = strcmp(expanded, text) != 0;
        ClassAdExpr *e = NULL;
        CaError cerr;
        if (!*glean_skip_space(expanded))
                r = rp_fail(err, rp->source, line, "expect-eval: '%s' expands to nothing", text);
        else if (classad_expr_parse(expanded, strlen(expanded), CA_MODE_OLD, &e, &cerr) < 0)
                r = rp_fail(err, rp->source, line, "expect-eval: not a ClassAd expression (column %d%s: %s)%s%.200s",
                            cerr.column, macros ? " once expanded" : "", cerr.msg, macros ? ": " : "",
                            macros ? expanded : "");
        if (r < 0) {
                free(expanded);
                return r;
        }
        if (rp->check) {
                classad_expr_free(e);
                free(expanded);
                return 0;
        }
        CaValue v = ca_undefined();
        classad_set_now(rp->now);
        r = classad_expr_eval(e, rp->ad, agent_sm_job(rp->sm), CA_MODE_OLD, &v);
        classad_set_now(0);
        classad_expr_free(e);
        char *shown = r >= 0 ? ca_value_unparse(&v) : NULL;
        expectation(rp, r >= 0 && v.type == CA_BOOL && v.u.b, line, "want %s%s%.200s%s to be true, it is %s", text,
                    macros ? " (" : "", macros ? expanded : "", macros ? ")" : "", shown ? shown : "an error");
        free(shown);
        free(expanded);
        ca_value_clear(&v);
        return 0;
}

/* ---- lines ---- */

int rp_set_attr(Replay *rp, char *p, int line, ConfigError *err) {
        char *eq = strchr(p, '=');
        if (!eq)
                return rp_fail(err, rp->source, line, "set: expected ATTR = EXPR");
        *eq = 0;
        char *name = glean_skip_space(p);
        char *e = name + strlen(name);
        while (e > name && isspace((unsigned char) e[-1]))
                *--e = 0;
        char *expr = glean_skip_space(eq + 1);
        if (!rp_is_attr_name(name) || strlen(name) > 64 || !*expr)
                return rp_fail(err, rp->source, line, "set: expected ATTR = EXPR");
        if (strcasecmp(name, "KeyboardIdle") == 0 || strcasecmp(name, "ConsoleIdle") == 0) {
                char *end;
                errno = 0;
                long long v = strtoll(expr, &end, 10);
                if (errno || end == expr || *glean_skip_space(end) || v < 0 || v > MAX_TIME)
                        return rp_fail(err, rp->source, line, "%s: expected a number of seconds", name);
                if (strcasecmp(name, "KeyboardIdle") == 0)
                        rp->kbd_until = rp->now - v;
                else
                        rp->console_until = rp->now - v;
                rp_update_sensors(rp);
                return 0;
        }
        CaError cerr;
        if (classad_set_expr_text(rp->ad, name, expr, CA_MODE_OLD, &cerr) < 0)
                return rp_fail(err, rp->source, line, "set %s: not a ClassAd expression (column %d): %s", name,
                            cerr.column, cerr.msg);
        return 0;
}

int rp_key(Replay *rp, char *p, int line, ConfigError *err) {
        int64_t d = 0;
        char *tok = glean_next_word(&p);
        if (tok) {
                char *dur = glean_next_word(&p);
                if (strcmp(tok, "for") != 0 || !dur || rp_parse_time(dur, false, 0, &d) < 0 || *glean_skip_space(p))
                        return rp_fail(err, rp->source, line, "key: expected nothing or 'for DURATION'");
        }
        rp->kbd_until = rp->console_until = rp->now + d;
        rp_update_sensors(rp);
        return 0;
}

static int word(Replay *rp, char **p, int line, const char *const *words, int n, int *ret, ConfigError *err) {
        char *tok = glean_next_word(p);
        if (!tok)
                return 0;
        for (int i = 0; i < n; i++)
                if (strcmp(tok, words[i]) == 0) {
                        *ret = i;
                        return 0;
                }
        return rp_fail(err, rp->source, line, "unexpected '%s'", tok);
}

int rp_do_event(Replay *rp, AgentEventType type, char *p, int line, ConfigError *err) {
        AgentEvent ev = { .type = type };
        ClassAd *ad = NULL;
        int r = 0, w = -1;
        static const char *const fast[] = { "fast" }, *const by_prio[] = { "by-priority" };
        static const char *const drains[] = { "graceful", "quick", "fast" };
        static const char *const shutdowns[] = { "graceful", "peaceful", "fast" };

        switch (type) {
        case AGENT_EV_CLAIM:
        case AGENT_EV_ACTIVATE:
                ev.claim_id = glean_next_word(&p);
                if (!ev.claim_id)
                        return rp_fail(err, rp->source, line, "%s: a claim id is needed", agent_event_name(type));
                if (type == AGENT_EV_CLAIM && (r = word(rp, &p, line, by_prio, 1, &w, err)) < 0)
                        return r;
                ev.by_priority = w == 0;
                if (*glean_skip_space(p) && *glean_skip_space(p) != '[')
                        return rp_fail(err, rp->source, line, "%s: unexpected '%s'", agent_event_name(type), glean_skip_space(p));
                if (*glean_skip_space(p)) {
                        if ((r = rp_parse_ad(rp, glean_skip_space(p), line, &ad, err)) < 0)
                                return r;
                        ev.job = ad;
                        p += strlen(p);
                }
                break;
        case AGENT_EV_MATCH:
        case AGENT_EV_JOB_EXIT:
                ev.claim_id = glean_next_word(&p);
                break;
        case AGENT_EV_KEEP_ALIVE:
        case AGENT_EV_RELEASE:
        case AGENT_EV_DEACTIVATE:
                ev.claim_id = glean_next_word(&p);
                if (!ev.claim_id)
                        return rp_fail(err, rp->source, line, "%s: a claim id is needed", agent_event_name(type));
                if (type == AGENT_EV_DEACTIVATE && (r = word(rp, &p, line, fast, 1, &w, err)) < 0)
                        return r;
                ev.fast = w == 0;
                break;
        case AGENT_EV_VACATE:
                if ((r = word(rp, &p, line, fast, 1, &w, err)) < 0)
                        return r;
                ev.fast = w == 0;
                break;
        case AGENT_EV_DRAIN:
                if ((r = word(rp, &p, line, drains, 3, &w, err)) < 0)
                        return r;
                ev.drain = w < 0 ? AGENT_DRAIN_GRACEFUL : (AgentDrainHow) w;
                break;
        case AGENT_EV_SHUTDOWN:
                if ((r = word(rp, &p, line, shutdowns, 3, &w, err)) < 0)
                        return r;
                ev.shutdown = w < 0 ? AGENT_SHUTDOWN_GRACEFUL : (AgentShutdownHow) w;
                break;
        default:
                break;
        }
        if (*glean_skip_space(p)) {
                classad_free(ad);
                return rp_fail(err, rp->source, line, "%s: unexpected '%s'", agent_event_name(type), glean_skip_space(p));
        }
        rp->had_event = true;
        if (rp->check) {
                classad_free(ad);
                return 0;
        }
        /* No ad: an activation of the current claim keeps its job, else the job line's. */
        if ((type == AGENT_EV_CLAIM || type == AGENT_EV_ACTIVATE) && !ev.job) {
                if (type == AGENT_EV_ACTIVATE && agent_sm_job(rp->sm) && agent_sm_has_claim(rp->sm, ev.claim_id) &&
                    strcmp(agent_sm_claim_id(rp->sm), ev.claim_id) == 0)
                        ev.job = agent_sm_job(rp->sm);
                else
                        ev.job = rp->job;
        }
        char why[256];
        r = agent_sm_handle(rp->sm, rp->now, &ev, why, sizeof why);
        rp->last_refusal = r < 0 ? r : 0;
        if (type == AGENT_EV_CLAIM && r == 0)
                rp_hold(rp, ev.claim_id, true);
        else if (type == AGENT_EV_RELEASE && r == 0)
                rp_hold(rp, ev.claim_id, false);
        if (r < 0) {
                rp_print_time(rp, rp->now);
                fprintf(rp->out, "%s refused %s%s%s (%s): %s\n", rp->slot_name, agent_event_name(type),
                        ev.claim_id ? " " : "", ev.claim_id ? ev.claim_id : "", rp_errno_name(-r), why);
        }
        classad_free(ad);
        return r == -ENOMEM ? r : 0;
}

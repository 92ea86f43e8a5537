/* SPDX-License-Identifier: Apache-2.0 */
/*
 * replay.c — run one slot's policy state machine over a timeline.
 *
 * A timeline is a text file. Everything before a line "---" is
 * configuration (glean's configuration language, read on top of the
 * built-in defaults); after it come the timeline lines, one per line, "#"
 * starting a comment:
 *
 *     epoch 2026-11-23T08:00:00Z   time 0 (default 2026-01-01T00:00:00Z, a Thursday)
 *     job [ Owner = "bob"; ... ]   the job ad used by claims that name none
 *     TIME set ATTR = EXPR         a sensor value or any slot attribute; KeyboardIdle and
 *                                  ConsoleIdle then grow with the clock on their own
 *     TIME key                     the owner touched the keyboard (KeyboardIdle = ConsoleIdle = 0)
 *     TIME tick                    evaluate the policy now
 *     TIME match [CLAIMID]
 *     TIME claim CLAIMID [by-priority] [AD]
 *     TIME activate CLAIMID [AD]
 *     TIME job-exit
 *     TIME keep-alive CLAIMID
 *     TIME deactivate CLAIMID [fast]
 *     TIME release CLAIMID
 *     TIME vacate [fast]
 *     TIME drain [graceful|quick|fast]
 *     TIME cancel-drain
 *     TIME shutdown [graceful|peaceful|fast]
 *     TIME backfill-started | backfill-exit
 *     TIME expect STATE[/ACTIVITY]  the slot is in that state (and activity) now
 *     TIME expect-transition N      the last transition was number N of figure 3.2
 *     TIME expect-action NAME       the action happened since the previous expect-action
 *     TIME expect-refused           the previous event was refused
 *
 * TIME is seconds since the epoch of the timeline, "+N" for N after the
 * previous line; a suffix s, m, h or d gives the unit. Between lines the
 * clock advances as in the agent: the policy is evaluated every
 * POLLING_INTERVAL while the slot is Matched, Claimed, Preempting or in
 * Backfill, every UPDATE_INTERVAL otherwise, and at every deadline of the
 * state machine (MATCH_TIMEOUT, vacate time, KILLING_TIMEOUT, leases,
 * retirement).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "policy.h"
#include "replay.h"

#define DEFAULT_EPOCH 1767225600 /* 2026-01-01T00:00:00Z */
#define DEFAULT_JOB                                                                                         \
        "[ Owner = \"alice\"; User = \"alice@replay\"; JobUniverse = 5; ClusterId = 1; ProcId = 0; "       \
        "ImageSize = 1000; RequestCpus = 1; RequestMemory = 128; Requirements = true ]"

typedef struct Replay {
        const char *source;
        FILE *out;
        Config *cfg;
        ClassAd *ad;
        ClassAd *job;        /* the default job ad */
        AgentSlotSM *sm;
        AgentPolicyKnobs knobs;
        int64_t polling, update;
        int64_t epoch, now;
        int64_t last_kbd, last_console;
        int last_number;
        bool last_refused;
        bool timed;          /* a timed line was run */
        unsigned actions_seen; /* bit per AgentActionType since the last expect-action */
        AgentReplayResult res;
} Replay;

static int fail(ConfigError *err, const char *file, int line, const char *fmt, ...)
        __attribute__((format(printf, 4, 5)));

static int fail(ConfigError *err, const char *file, int line, const char *fmt, ...) {
        snprintf(err->file, sizeof err->file, "%s", file);
        err->line = line;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
        return -EINVAL;
}

static void print_time(Replay *rp) {
        fprintf(rp->out, "t=%-7lld ", (long long) (rp->now - rp->epoch));
}

static void on_transition(void *userdata, const AgentTransition *t) {
        Replay *rp = userdata;
        rp->res.transitions++;
        rp->last_number = t->number;
        char num[16];
        if (t->number)
                snprintf(num, sizeof num, "[%d]", t->number);
        else
                snprintf(num, sizeof num, "[-]");
        fprintf(rp->out, "t=%-7lld slot1 %s/%s -> %s/%s %s %s\n", (long long) (t->time - rp->epoch),
                agent_state_name(t->from_state), agent_activity_name(t->from_act), agent_state_name(t->to_state),
                agent_activity_name(t->to_act), num, t->reason ? t->reason : "");
}

static void on_action(void *userdata, const AgentAction *a) {
        Replay *rp = userdata;
        rp->actions_seen |= 1u << a->type;
        print_time(rp);
        fprintf(rp->out, "slot1 action %s%s%s%s%s\n", agent_action_name(a->type), a->claim_id ? " " : "",
                a->claim_id ? a->claim_id : "", a->reason ? ": " : "", a->reason ? a->reason : "");
}

/* KeyboardIdle and ConsoleIdle follow the clock. */
static void update_sensors(Replay *rp) {
        classad_set_int(rp->ad, "KeyboardIdle", rp->now - rp->last_kbd);
        classad_set_int(rp->ad, "ConsoleIdle", rp->now - rp->last_console);
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

/* Move the clock to t, evaluating as the agent would on the way. */
static void advance(Replay *rp, int64_t t) {
        while (rp->now < t) {
                int64_t iv = interval(rp);
                int64_t next = rp->epoch + ((rp->now - rp->epoch) / iv + 1) * iv;
                int64_t dl = agent_sm_next_deadline(rp->sm);
                if (dl <= rp->now)
                        dl = rp->now + 1;
                if (dl < next)
                        next = dl;
                if (next > t)
                        break;
                rp->now = next;
                update_sensors(rp);
                agent_sm_eval(rp->sm, rp->now);
        }
        rp->now = t;
        update_sensors(rp);
}

/* "[+]N[smhd]" */
static int parse_time(const char *tok, int64_t prev, int64_t *ret) {
        bool rel = *tok == '+';
        if (rel)
                tok++;
        if (!isdigit((unsigned char) *tok))
                return -EINVAL;
        char *end;
        errno = 0;
        long long v = strtoll(tok, &end, 10);
        if (errno)
                return -EINVAL;
        int64_t mul = 1;
        if (*end == 's')
                end++;
        else if (*end == 'm')
                mul = 60, end++;
        else if (*end == 'h')
                mul = 3600, end++;
        else if (*end == 'd')
                mul = 86400, end++;
        if (*end || v > INT32_MAX)
                return -EINVAL;
        *ret = (rel ? prev : 0) + v * mul;
        return 0;
}

static char *next_token(char **p) {
        char *s = *p;
        while (isspace((unsigned char) *s))
                s++;
        if (!*s || *s == '[')
                return *p = s, NULL;
        char *t = s;
        while (*s && !isspace((unsigned char) *s))
                s++;
        if (*s)
                *s++ = 0;
        *p = s;
        return t;
}

static char *rest(char *p) {
        while (isspace((unsigned char) *p))
                p++;
        return p;
}

static int parse_ad(Replay *rp, const char *text, int line, ClassAd **ret, ConfigError *err) {
        CaError cerr;
        if (classad_parse(text, strlen(text), CA_MODE_OLD, ret, &cerr) < 0)
                return fail(err, rp->source, line, "not a ClassAd (column %d): %s", cerr.column, cerr.msg);
        return 0;
}

static int set_attr(Replay *rp, char *p, int line, ConfigError *err) {
        char *eq = strchr(p, '=');
        if (!eq)
                return fail(err, rp->source, line, "set: expected ATTR = EXPR");
        *eq = 0;
        char *name = rest(p);
        char *e = name + strlen(name);
        while (e > name && isspace((unsigned char) e[-1]))
                *--e = 0;
        char *expr = rest(eq + 1);
        if (!*name || !*expr)
                return fail(err, rp->source, line, "set: expected ATTR = EXPR");
        if (strcasecmp(name, "KeyboardIdle") == 0 || strcasecmp(name, "ConsoleIdle") == 0) {
                char *end;
                long long v = strtoll(expr, &end, 10);
                if (*rest(end) || v < 0)
                        return fail(err, rp->source, line, "%s: expected a number of seconds", name);
                if (strcasecmp(name, "KeyboardIdle") == 0)
                        rp->last_kbd = rp->now - v;
                else
                        rp->last_console = rp->now - v;
                update_sensors(rp);
                return 0;
        }
        CaError cerr;
        if (classad_set_expr_text(rp->ad, name, expr, CA_MODE_OLD, &cerr) < 0)
                return fail(err, rp->source, line, "set %s: not a ClassAd expression (column %d): %s", name,
                            cerr.column, cerr.msg);
        return 0;
}

static int expect_state(Replay *rp, const char *what, int line, ConfigError *err) {
        char buf[64];
        snprintf(buf, sizeof buf, "%s", what);
        char *slash = strchr(buf, '/');
        if (slash)
                *slash++ = 0;
        AgentState s;
        AgentActivity a = AGENT_ACT_IDLE;
        if (agent_state_from_name(buf, &s) < 0 || (slash && agent_activity_from_name(slash, &a) < 0))
                return fail(err, rp->source, line, "expect: unknown state or activity '%s'", what);
        rp->res.expectations++;
        AgentState hs = agent_sm_state(rp->sm);
        AgentActivity ha = agent_sm_activity(rp->sm);
        if (hs != s || (slash && ha != a)) {
                rp->res.failed++;
                print_time(rp);
                fprintf(rp->out, "EXPECTATION FAILED (line %d): want %s, have %s/%s\n", line, what,
                        agent_state_name(hs), agent_activity_name(ha));
        }
        return 0;
}

static void expectation(Replay *rp, bool ok, int line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void expectation(Replay *rp, bool ok, int line, const char *fmt, ...) {
        rp->res.expectations++;
        if (ok)
                return;
        rp->res.failed++;
        print_time(rp);
        fprintf(rp->out, "EXPECTATION FAILED (line %d): ", line);
        va_list ap;
        va_start(ap, fmt);
        vfprintf(rp->out, fmt, ap);
        va_end(ap);
        fputc('\n', rp->out);
}

static int do_event(Replay *rp, AgentEventType type, char *p, int line, ConfigError *err) {
        AgentEvent ev = { .type = type };
        ClassAd *ad = NULL;
        char *tok;
        int r = 0;

        switch (type) {
        case AGENT_EV_CLAIM:
        case AGENT_EV_ACTIVATE:
                ev.claim_id = next_token(&p);
                if (!ev.claim_id)
                        return fail(err, rp->source, line, "%s: a claim id is needed", agent_event_name(type));
                while ((tok = next_token(&p))) {
                        if (type == AGENT_EV_CLAIM && strcmp(tok, "by-priority") == 0)
                                ev.by_priority = true;
                        else
                                return fail(err, rp->source, line, "%s: unexpected '%s'", agent_event_name(type), tok);
                }
                if (*rest(p)) {
                        r = parse_ad(rp, rest(p), line, &ad, err);
                        if (r < 0)
                                return r;
                        ev.job = ad;
                } else if (type == AGENT_EV_ACTIVATE && agent_sm_job(rp->sm) &&
                           agent_sm_has_claim(rp->sm, ev.claim_id))
                        ev.job = agent_sm_job(rp->sm);
                else
                        ev.job = rp->job;
                break;
        case AGENT_EV_MATCH:
        case AGENT_EV_KEEP_ALIVE:
        case AGENT_EV_RELEASE:
        case AGENT_EV_DEACTIVATE:
                ev.claim_id = next_token(&p);
                if (!ev.claim_id && type != AGENT_EV_MATCH)
                        return fail(err, rp->source, line, "%s: a claim id is needed", agent_event_name(type));
                if (type == AGENT_EV_DEACTIVATE && (tok = next_token(&p))) {
                        if (strcmp(tok, "fast") != 0)
                                return fail(err, rp->source, line, "deactivate: unexpected '%s'", tok);
                        ev.fast = true;
                }
                break;
        case AGENT_EV_VACATE:
                if ((tok = next_token(&p))) {
                        if (strcmp(tok, "fast") != 0)
                                return fail(err, rp->source, line, "vacate: unexpected '%s'", tok);
                        ev.fast = true;
                }
                break;
        case AGENT_EV_DRAIN:
                if ((tok = next_token(&p))) {
                        if (strcmp(tok, "graceful") == 0)
                                ev.drain = AGENT_DRAIN_GRACEFUL;
                        else if (strcmp(tok, "quick") == 0)
                                ev.drain = AGENT_DRAIN_QUICK;
                        else if (strcmp(tok, "fast") == 0)
                                ev.drain = AGENT_DRAIN_FAST;
                        else
                                return fail(err, rp->source, line, "drain: graceful, quick or fast, not '%s'", tok);
                }
                break;
        case AGENT_EV_SHUTDOWN:
                if ((tok = next_token(&p))) {
                        if (strcmp(tok, "graceful") == 0)
                                ev.shutdown = AGENT_SHUTDOWN_GRACEFUL;
                        else if (strcmp(tok, "peaceful") == 0)
                                ev.shutdown = AGENT_SHUTDOWN_PEACEFUL;
                        else if (strcmp(tok, "fast") == 0)
                                ev.shutdown = AGENT_SHUTDOWN_FAST;
                        else
                                return fail(err, rp->source, line, "shutdown: graceful, peaceful or fast, not '%s'",
                                            tok);
                }
                break;
        default:
                break;
        }
        if (type != AGENT_EV_CLAIM && type != AGENT_EV_ACTIVATE && *rest(p)) {
                classad_free(ad);
                return fail(err, rp->source, line, "%s: unexpected '%s'", agent_event_name(type), rest(p));
        }
        char why[256];
        r = agent_sm_handle(rp->sm, rp->now, &ev, why, sizeof why);
        rp->last_refused = r < 0;
        if (r < 0) {
                print_time(rp);
                fprintf(rp->out, "slot1 refused %s%s%s: %s\n", agent_event_name(type), ev.claim_id ? " " : "",
                        ev.claim_id ? ev.claim_id : "", why);
        }
        classad_free(ad);
        return 0;
}

static int run_line(Replay *rp, char *p, int line, ConfigError *err) {
        char *tok = next_token(&p);
        if (!tok)
                return fail(err, rp->source, line, "expected TIME and an event");
        if (strcmp(tok, "epoch") == 0) {
                char *v = next_token(&p);
                struct tm tm = { 0 };
                char *end = v ? strptime(v, "%Y-%m-%dT%H:%M:%SZ", &tm) : NULL;
                if (!end || *end || *rest(p))
                        return fail(err, rp->source, line, "epoch: expected YYYY-MM-DDTHH:MM:SSZ");
                if (rp->timed)
                        return fail(err, rp->source, line, "epoch: must come before the first timed line");
                rp->epoch = rp->now = timegm(&tm);
                rp->last_kbd = rp->last_console = rp->epoch - 86400;
                return 1; /* the machine starts again at the new epoch */
        }
        if (strcmp(tok, "job") == 0) {
                ClassAd *ad;
                int r = parse_ad(rp, rest(p), line, &ad, err);
                if (r < 0)
                        return r;
                classad_free(rp->job);
                rp->job = ad;
                return 0;
        }
        int64_t t;
        if (parse_time(tok, rp->now - rp->epoch, &t) < 0)
                return fail(err, rp->source, line, "'%s' is not a time (N, +N, with s, m, h or d)", tok);
        rp->timed = true;
        if (rp->epoch + t < rp->now)
                return fail(err, rp->source, line, "time %lld is before the previous line's", (long long) t);
        char *what = next_token(&p);
        if (!what)
                return fail(err, rp->source, line, "expected an event after the time");
        advance(rp, rp->epoch + t);

        AgentEventType type;
        if (strcmp(what, "set") == 0)
                return set_attr(rp, p, line, err);
        if (strcmp(what, "key") == 0) {
                rp->last_kbd = rp->last_console = rp->now;
                update_sensors(rp);
                return 0;
        }
        if (strcmp(what, "tick") == 0) {
                agent_sm_eval(rp->sm, rp->now);
                return 0;
        }
        if (strcmp(what, "expect") == 0) {
                char *s = next_token(&p);
                if (!s || *rest(p))
                        return fail(err, rp->source, line, "expect: expected STATE or STATE/ACTIVITY");
                return expect_state(rp, s, line, err);
        }
        if (strcmp(what, "expect-transition") == 0) {
                char *s = next_token(&p), *end;
                long n = s ? strtol(s, &end, 10) : -1;
                if (!s || *end || *rest(p))
                        return fail(err, rp->source, line, "expect-transition: expected a number");
                expectation(rp, rp->last_number == n, line, "want transition %ld, the last was %d", n,
                            rp->last_number);
                return 0;
        }
        if (strcmp(what, "expect-action") == 0) {
                char *s = next_token(&p);
                int found = -1;
                for (int i = 0; s && i < AGENT_DO__MAX; i++)
                        if (strcmp(s, agent_action_name((AgentActionType) i)) == 0)
                                found = i;
                if (found < 0 || *rest(p))
                        return fail(err, rp->source, line, "expect-action: unknown action '%s'", s ? s : "");
                expectation(rp, rp->actions_seen & (1u << found), line, "want action %s since the last expect-action",
                            s);
                rp->actions_seen = 0;
                return 0;
        }
        if (strcmp(what, "expect-refused") == 0) {
                expectation(rp, rp->last_refused, line, "want the previous event refused");
                return 0;
        }
        if (agent_event_from_name(what, &type) < 0)
                return fail(err, rp->source, line, "unknown event '%s'", what);
        return do_event(rp, type, p, line, err);
}

static int replay_setup(Replay *rp, ConfigError *err) {
        int r = agent_policy_knobs(rp->cfg, 1, &rp->knobs, err);
        if (r < 0)
                return r;
        int64_t v;
        rp->polling = config_get_int(rp->cfg, "POLLING_INTERVAL", &v, err) >= 0 && v > 0 ? v : 5;
        rp->update = config_get_int(rp->cfg, "UPDATE_INTERVAL", &v, err) >= 0 && v > 0 ? v : 300;
        r = classad_new(&rp->ad);
        if (r < 0)
                return r;
        static const char *const base =
                "[ Name = \"slot1@replay\"; Machine = \"replay\"; SlotID = 1; SlotTypeID = 0; Cpus = 1; "
                "TotalCpus = 1; Memory = 1024; Disk = 1000000; Arch = \"X86_64\"; OpSys = \"LINUX\"; "
                "LoadAvg = 0.0; CondorLoadAvg = 0.0; TotalLoadAvg = 0.0; TotalCondorLoadAvg = 0.0 ]";
        ClassAd *b;
        CaError cerr;
        r = classad_parse(base, strlen(base), CA_MODE_OLD, &b, &cerr);
        if (r < 0)
                return r;
        classad_update(rp->ad, b);
        classad_free(b);
        r = agent_policy_fill_ad(rp->cfg, 1, rp->ad, err);
        if (r < 0)
                return r;
        char **names = NULL;
        r = config_startd_attrs(rp->cfg, 1, &names, err);
        if (r < 0)
                return r;
        for (size_t i = 0; names[i]; i++) {
                char *val = NULL;
                if (config_get_slot(rp->cfg, 1, names[i], &val, err) >= 0 && *val &&
                    classad_set_expr_text(rp->ad, names[i], val, CA_MODE_OLD, &cerr) < 0) {
                        r = fail(err, "<config>", 0, "STARTD_ATTRS: %s = %s is not a ClassAd expression", names[i],
                                 val);
                        free(val);
                        config_strv_free(names);
                        return r;
                }
                free(val);
        }
        config_strv_free(names);
        r = classad_parse(DEFAULT_JOB, strlen(DEFAULT_JOB), CA_MODE_OLD, &rp->job, &cerr);
        return r;
}

static int start_machine(Replay *rp) {
        agent_sm_free(rp->sm);
        rp->sm = NULL;
        update_sensors(rp);
        AgentPolicyHooks hooks = { .transition = on_transition, .action = on_action };
        int r = agent_sm_new("slot1", rp->ad, &rp->knobs, &hooks, rp, rp->now, &rp->sm);
        if (r < 0)
                return r;
        agent_sm_eval(rp->sm, rp->now);
        return 0;
}

int agent_replay_string(const char *text, const char *source_name, FILE *out, AgentReplayResult *ret,
                        ConfigError *err) {
        Replay rp = { .source = source_name, .out = out, .epoch = DEFAULT_EPOCH, .now = DEFAULT_EPOCH };
        rp.last_kbd = rp.last_console = rp.epoch - 86400;
        char *copy = strdup(text);
        if (!copy)
                return -ENOMEM;
        /* Split at the "---" line. */
        char *events = copy;
        int first_line = 1;
        for (char *l = copy; l && *l;) {
                char *nl = strchr(l, '\n');
                size_t len = nl ? (size_t) (nl - l) : strlen(l);
                while (len && (l[len - 1] == '\r' || l[len - 1] == ' ' || l[len - 1] == '\t'))
                        len--;
                if (len == 3 && memcmp(l, "---", 3) == 0) {
                        *l = 0;
                        events = nl ? nl + 1 : l + 3;
                        break;
                }
                first_line++;
                l = nl ? nl + 1 : NULL;
        }
        if (events == copy)
                first_line = 1;
        else
                first_line++;

        int r = config_new(&rp.cfg);
        if (r >= 0 && events != copy)
                r = config_load_string(rp.cfg, copy, source_name, err);
        if (r >= 0)
                r = replay_setup(&rp, err);
        if (r >= 0)
                r = start_machine(&rp);
        int line = first_line;
        for (char *l = events; r >= 0 && l && *l; line++) {
                char *nl = strchr(l, '\n');
                if (nl)
                        *nl = 0;
                char *hash = l;
                /* A comment starts at '#' outside a ClassAd string. */
                bool in_str = false;
                for (; *hash; hash++) {
                        if (*hash == '"' && (hash == l || hash[-1] != '\\'))
                                in_str = !in_str;
                        if (*hash == '#' && !in_str)
                                break;
                }
                *hash = 0;
                if (*rest(l)) {
                        r = run_line(&rp, l, line, err);
                        if (r == 1)
                                r = start_machine(&rp);
                }
                l = nl ? nl + 1 : NULL;
        }
        if (r >= 0 && ret)
                *ret = rp.res;
        agent_sm_free(rp.sm);
        classad_free(rp.ad);
        classad_free(rp.job);
        config_free(rp.cfg);
        free(copy);
        return r < 0 ? r : 0;
}

int agent_replay_file(const char *path, FILE *out, AgentReplayResult *ret, ConfigError *err) {
        FILE *f = fopen(path, "re");
        if (!f) {
                int r = -errno;
                fail(err, path, 0, "cannot open: %s", strerror(-r));
                return r;
        }
        char *buf = NULL;
        size_t len = 0, cap = 0;
        char chunk[65536];
        size_t n;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
                if (len + n + 1 > cap) {
                        cap = (len + n + 1) * 2;
                        char *nb = realloc(buf, cap);
                        if (!nb) {
                                free(buf);
                                fclose(f);
                                return -ENOMEM;
                        }
                        buf = nb;
                }
                memcpy(buf + len, chunk, n);
                len += n;
                if (len > 16 << 20) {
                        free(buf);
                        fclose(f);
                        return fail(err, path, 0, "larger than 16 MiB");
                }
        }
        fclose(f);
        if (!buf)
                buf = strdup("");
        else
                buf[len] = 0;
        if (!buf)
                return -ENOMEM;
        int r = agent_replay_string(buf, path, out, ret, err);
        free(buf);
        return r;
}

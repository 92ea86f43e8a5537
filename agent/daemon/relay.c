/* SPDX-License-Identifier: Apache-2.0 */
/*
 * relay.c — users' requests for the central manager, relayed over the
 * agent's sealed connection (upstream.c). On a machine that runs
 * glean-agent, `glean submit / q / rm / ...` talk to the agent's unix
 * socket; the agent forwards the request with RelayUser and RelayUid, the
 * caller as SO_PEERCRED knows it (whatever the caller wrote there), under
 * a RequestId of its own, and sends every piece of the reply back to the
 * client under the client's RequestId. The central manager decides what
 * the user may do.
 *
 * A multi-part Submit (More = true) is one cluster made of several
 * messages. The central manager takes the parts of one connection as one
 * series, and every client shares the agent's connection: so the agent
 * keeps a client's parts (its series) until the last one came and then
 * sends them up together, one after the other. Nobody waits behind a
 * client that stalls in the middle of its parts, and a series that
 * breaks never leaves parts at the central manager: a series whose next
 * part does not come within RELAY_SUBMIT_TIMEOUT seconds, one that passes
 * the limits (1024 parts, a part larger than a frame, RELAY_SUBMIT_MAX_BYTES
 * kept for one user) or whose client goes away is dropped here, nothing
 * of it queued, and the upstream connection stays up. The client gets
 * one Reply for its series, as from the central manager: at once when it
 * is abandoned (under the RequestId of the part that broke it, or of its
 * last part for a timeout), after which the rest of its parts, up to the
 * last, are dropped unanswered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "common/timer.h"
#include "daemon.h"

/* Requests of one client awaiting their last reply. */
#define RELAY_MAX_PER_CLIENT 256u
/* Parts of one series: the central manager's JOBCMD_SUBMIT_MAX_PARTS. */
#define RELAY_MAX_PARTS 1024u
#define RELAY_TIMEOUT_DEFAULT 60
#define RELAY_MAX_BYTES_DEFAULT (256 * 1024 * 1024)

struct RelayEntry {
        RelayEntry *next;
        int64_t id;             /* the agent's RequestId upstream */
        Conn *client;
        bool has_rid;
        int64_t rid;            /* the client's own */
};

/* A client's multi-part Submit, kept until its last part. */
struct RelaySeries {
        ClassAd **parts;        /* as they go up: RelayUser and RelayUid set */
        size_t n, cap;
        size_t bytes;           /* their size as text */
        sd_event_source *timer; /* RELAY_SUBMIT_TIMEOUT after the latest part */
        uint64_t timeout_usec;
        bool has_rid;
        int64_t rid;            /* the client's RequestId of its latest part */
        bool broken;            /* abandoned and answered: its parts are dropped up to the last */
};

static bool get_bool(const ClassAd *ad, const char *name, bool def) {
        bool b;
        return classad_eval_bool(ad, name, CA_MODE_OLD, &b) >= 0 ? b : def;
}

/* Whether name ("host" or "host.domain") is this machine: equal, or equal
 * up to the first dot of the longer one. */
static bool is_this_host(const Agent *a, const char *name) {
        const char *me = a->machine.hostname;
        size_t n = strlen(name), m = strlen(me);
        if (n == m)
                return strcasecmp(name, me) == 0;
        if (n < m)
                return strncasecmp(name, me, n) == 0 && me[n] == '.' && !strchr(name, '.');
        return strncasecmp(name, me, m) == 0 && name[m] == '.' && !strchr(me, '.');
}

/* Whether what follows "slot1@" in a slot's name is this agent: its name
 * (STARTD_NAME), or, when that is its machine's, this machine. */
static bool is_this_agent(const Agent *a, const char *name) {
        if (strcasecmp(name, a->machine.name) == 0)
                return true;
        return strcasecmp(a->machine.name, a->machine.hostname) == 0 && is_this_host(a, name);
}

bool agent_relay_wanted(const Agent *a, const ClassAd *req, GleanCommand cmd) {
        switch (cmd) {
        case GLEAN_CMD_SUBMIT:
        case GLEAN_CMD_QUERY:
        case GLEAN_CMD_HISTORY:
        case GLEAN_CMD_QUERY_SLOTS:
        case GLEAN_CMD_JOB_ACTION:
        case GLEAN_CMD_USER_PRIO:
        case GLEAN_CMD_WAIT:
                return true;
        case GLEAN_CMD_VACATE:
        case GLEAN_CMD_DRAIN:
        case GLEAN_CMD_CANCEL_DRAIN: {
                char *v = NULL;
                bool other = false;
                if (classad_eval_string(req, "Machine", CA_MODE_OLD, &v) >= 0)
                        other = !is_this_host(a, v);
                else if (classad_eval_string(req, "Slot", CA_MODE_OLD, &v) >= 0 && strchr(v, '@'))
                        other = !is_this_agent(a, strchr(v, '@') + 1);
                free(v);
                return other;
        }
        default:
                return false;
        }
}

static void entry_remove(Agent *a, RelayEntry *e) {
        for (RelayEntry **pp = &a->relays; *pp; pp = &(*pp)->next)
                if (*pp == e) {
                        *pp = e->next;
                        break;
                }
        if (e->client && e->client->relays > 0)
                e->client->relays--;
        free(e);
}

static int refuse(Conn *c, const ClassAd *req, GleanCommand cmd, const char *reason) {
        GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user }, { "GLEAN_COMMAND", glean_command_name(cmd) } };
        glean_log(LOG_INFO, NULL, f, 2, "not relaying %s of %s (pid %d): %s", glean_command_name(cmd), c->peer.user,
                  (int) c->peer.pid, reason);
        return agent_reply(c, req, false, reason, NULL);
}

/* ---- a client's series of Submit parts ---- */

static void series_clear(RelaySeries *s) {
        glean_ad_list_free(s->parts, s->n);
        s->parts = NULL;
        s->n = s->cap = 0;
        s->bytes = 0;
        s->timer = sd_event_source_disable_unref(s->timer);
}

static void series_free(Conn *c) {
        if (!c->series)
                return;
        series_clear(c->series);
        free(c->series);
        c->series = NULL;
}

/* What the series of every client of uid keep. */
static size_t user_bytes(const Agent *a, uid_t uid) {
        size_t n = 0;
        for (const Conn *k = a->conns; k; k = k->next)
                if (k->series && k->peer.uid == uid)
                        n += k->series->bytes;
        return n;
}

/* Drops what the series of c kept and answers it, once: Ok = false with
 * why, under the RequestId of its latest part. The parts still to come
 * are dropped up to the last. */
static void series_abandon(Conn *c, const char *why) {
        RelaySeries *s = c->series;
        GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user }, { "GLEAN_REASON", why } };
        glean_log(LOG_NOTICE, NULL, f, 2, "dropped the multi-part submission of %s (pid %d), %zu parts: %s",
                  c->peer.user, (int) c->peer.pid, s->n, why);
        series_clear(s);
        s->broken = true;
        ClassAd *msg = NULL;
        if (glean_msg_reply(NULL, false, why, &msg) >= 0) {
                if (s->has_rid)
                        classad_set_int(msg, "RequestId", s->rid);
                agent_conn_send(c, msg);
        }
        classad_free(msg);
}

static int on_series_timeout(sd_event_source *src, uint64_t usec, void *userdata) {
        Conn *c = userdata;
        char why[200];
        (void) src;
        (void) usec;
        snprintf(why, sizeof why,
                 "the next part of this multi-part submission did not come within %llu s (RELAY_SUBMIT_TIMEOUT): "
                 "nothing of it was queued; submit again",
                 (unsigned long long) (c->series->timeout_usec / 1000000));
        series_abandon(c, why);
        return 0;
}

static int64_t knob_int(const Agent *a, const char *name, int64_t def, int64_t min) {
        ConfigError err = { 0 };
        int64_t v;
        if (config_get_int(a->cfg, name, &v, &err) < 0 || v < min)
                return def;
        return v;
}

static int series_arm(Conn *c) {
        RelaySeries *s = c->series;
        uint64_t now = 0;
        sd_event_now(c->agent->event, CLOCK_MONOTONIC, &now);
        return glean_timer_arm(c->agent->event, &s->timer, CLOCK_MONOTONIC, now + s->timeout_usec, 0,
                               on_series_timeout, c);
}

/* Every part kept goes up, the last under the RequestId of entry e. */
static int series_send(Agent *a, RelaySeries *s, RelayEntry *e) {
        for (size_t i = 0; i < s->n; i++) {
                classad_set_int(s->parts[i], "RequestId", i + 1 < s->n ? ++a->relay_next_id : e->id);
                int r = agent_upstream_send(a, s->parts[i]);
                if (r < 0) {
                        if (i > 0)
                                /* Parts up there without their last: only a new connection drops them. */
                                agent_upstream_fail(a, "a multi-part submission could not be sent whole (%s): "
                                                    "reconnecting, so that the central manager discards its parts",
                                                    strerror(-r));
                        return r;
                }
        }
        return 0;
}

/* A Submit part of c that has More, or that ends c's series. */
static int series_take(Conn *c, const ClassAd *req, bool more) {
        Agent *a = c->agent;
        RelaySeries *s = c->series;
        char why[200];

        if (s && s->broken) {
                if (!more)
                        series_free(c); /* the series is over; it was answered when abandoned */
                return 0;
        }
        if (!s) {
                s = c->series = calloc(1, sizeof *s);
                if (!s)
                        return refuse(c, req, GLEAN_CMD_SUBMIT, "out of memory");
                s->timeout_usec = (uint64_t) knob_int(a, "RELAY_SUBMIT_TIMEOUT", RELAY_TIMEOUT_DEFAULT, 1) * 1000000;
        }
        s->has_rid = classad_eval_int(req, "RequestId", CA_MODE_OLD, &s->rid) >= 0;
        ClassAd *msg = NULL;
        char *text = NULL;
        if (classad_copy(req, &msg) < 0 || classad_set_string(msg, "RelayUser", c->peer.user) < 0 ||
            classad_set_int(msg, "RelayUid", (int64_t) c->peer.uid) < 0 || !(text = classad_unparse(msg))) {
                classad_free(msg);
                series_abandon(c, "out of memory");
                goto done;
        }
        size_t len = strlen(text), max = (size_t) knob_int(a, "RELAY_SUBMIT_MAX_BYTES", RELAY_MAX_BYTES_DEFAULT, 0);
        free(text);
        if (len + 64 > GLEAN_FRAME_MAX || s->n >= RELAY_MAX_PARTS || user_bytes(a, c->peer.uid) + len > max) {
                classad_free(msg);
                if (len + 64 > GLEAN_FRAME_MAX)
                        snprintf(why, sizeof why, "part %zu of the submission is larger than a frame", s->n + 1);
                else if (s->n >= RELAY_MAX_PARTS)
                        snprintf(why, sizeof why, "more than %u parts in one submission", RELAY_MAX_PARTS);
                else
                        snprintf(why, sizeof why,
                                 "the submissions of %s in progress on this machine would keep more than %zu bytes "
                                 "(RELAY_SUBMIT_MAX_BYTES)",
                                 c->peer.user, max);
                series_abandon(c, why);
                goto done;
        }
        if (s->n == s->cap) {
                size_t cap = s->cap ? 2 * s->cap : 8;
                ClassAd **p = realloc(s->parts, cap * sizeof *p);
                if (!p) {
                        classad_free(msg);
                        series_abandon(c, "out of memory");
                        goto done;
                }
                s->parts = p;
                s->cap = cap;
        }
        s->parts[s->n++] = msg;
        s->bytes += len;
        if (more) {
                if (series_arm(c) < 0)
                        series_abandon(c, "out of memory");
                return 0;
        }

        /* The last part: all of them up, together. */
        int r = 0;
        if (!agent_upstream_ready(a))
                r = refuse(c, req, GLEAN_CMD_SUBMIT, "central manager not connected");
        else if (c->relays >= RELAY_MAX_PER_CLIENT)
                r = refuse(c, req, GLEAN_CMD_SUBMIT,
                           "too many requests of this connection are waiting for the central manager");
        else {
                RelayEntry *e = calloc(1, sizeof *e);
                if (!e)
                        r = refuse(c, req, GLEAN_CMD_SUBMIT, "out of memory");
                else {
                        e->id = ++a->relay_next_id;
                        e->client = c;
                        e->has_rid = s->has_rid;
                        e->rid = s->rid;
                        e->next = a->relays;
                        a->relays = e;
                        c->relays++;
                        int k = series_send(a, s, e);
                        if (k < 0) {
                                entry_remove(a, e);
                                r = refuse(c, req, GLEAN_CMD_SUBMIT,
                                           k == -EMSGSIZE ? "a part is larger than a frame"
                                                          : "central manager not connected");
                        }
                }
        }
        series_free(c);
        return r;
done:
        if (!more)
                series_free(c);
        return 0;
}

int agent_relay(Conn *c, const ClassAd *req, GleanCommand cmd) {
        Agent *a = c->agent;
        bool more = cmd == GLEAN_CMD_SUBMIT && get_bool(req, "More", false);

        if (!a->up)
                return refuse(c, req, cmd, "no central manager configured (COLLECTOR_HOST)");
        if (cmd == GLEAN_CMD_SUBMIT && (more || c->series))
                return series_take(c, req, more);
        if (!agent_upstream_ready(a))
                return refuse(c, req, cmd, "central manager not connected");
        if (c->relays >= RELAY_MAX_PER_CLIENT)
                return refuse(c, req, cmd, "too many requests of this connection are waiting for the central manager");

        RelayEntry *e = calloc(1, sizeof *e);
        ClassAd *msg = NULL;
        if (!e || classad_copy(req, &msg) < 0) {
                free(e);
                return refuse(c, req, cmd, "out of memory");
        }
        e->id = ++a->relay_next_id;
        e->client = c;
        e->has_rid = classad_eval_int(req, "RequestId", CA_MODE_OLD, &e->rid) >= 0;
        /* Who asks is the kernel's word, not the request's. */
        classad_set_string(msg, "RelayUser", c->peer.user);
        classad_set_int(msg, "RelayUid", (int64_t) c->peer.uid);
        classad_set_int(msg, "RequestId", e->id);
        e->next = a->relays;
        a->relays = e;
        c->relays++;
        int r = agent_upstream_send(a, msg);
        classad_free(msg);
        if (r < 0) {
                entry_remove(a, e);
                return refuse(c, req, cmd,
                              r == -EMSGSIZE ? "the request is larger than a frame" : "central manager not connected");
        }
        if (glean_log_get_level() >= LOG_DEBUG) {
                GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user },
                                      { "GLEAN_COMMAND", glean_command_name(cmd) } };
                glean_log(LOG_DEBUG, NULL, f, 2, "relayed %s of %s as request %lld", glean_command_name(cmd),
                          c->peer.user, (long long) e->id);
        }
        return 0;
}

void agent_relay_reply(Agent *a, const ClassAd *reply) {
        int64_t id = 0;
        if (classad_eval_int(reply, "RequestId", CA_MODE_OLD, &id) < 0)
                return; /* not an answer to anything relayed */
        RelayEntry *e = a->relays;
        while (e && e->id != id)
                e = e->next;
        if (!e) {
                /* Its client went away (or a stray reply): dropped. */
                glean_log(LOG_DEBUG, NULL, NULL, 0, "dropping a reply of the central manager to request %lld",
                          (long long) id);
                return;
        }
        Conn *c = e->client;
        ClassAd *msg = NULL;
        if (classad_copy(reply, &msg) >= 0) {
                if (e->has_rid)
                        classad_set_int(msg, "RequestId", e->rid);
                else
                        classad_delete(msg, "RequestId");
                agent_conn_send(c, msg);
                classad_free(msg);
        }
        if (get_bool(reply, "More", false))
                return; /* more pieces follow under the same id */
        entry_remove(a, e);
}

void agent_relay_forget_conn(Agent *a, Conn *c) {
        for (RelayEntry *e = a->relays, *next; e; e = next) {
                next = e->next;
                if (e->client == c)
                        entry_remove(a, e);
        }
        c->relays = 0;
        /* Its parts never went up: the central manager has nothing of them. */
        series_free(c);
}

void agent_relay_upstream_lost(Agent *a) {
        while (a->relays) {
                RelayEntry *e = a->relays;
                ClassAd *msg = NULL;
                if (glean_msg_reply(NULL, false, "the connection to the central manager was lost", &msg) >= 0) {
                        if (e->has_rid)
                                classad_set_int(msg, "RequestId", e->rid);
                        agent_conn_send(e->client, msg);
                }
                classad_free(msg);
                entry_remove(a, e);
        }
}

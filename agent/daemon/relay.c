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
 * messages on the one connection: while a client's parts go up, another
 * client's Submit waits (held, its connection not read meanwhile). A
 * client that goes away in the middle of its parts leaves a partial
 * cluster at the central manager, which would take the next Submit as its
 * continuation: the connection is closed and made again, and the central
 * manager discards what it had. When the connection is lost in the middle
 * of a client's parts, the rest of its parts are refused up to its last.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>

#include "daemon.h"

/* Requests of one client awaiting their last reply. */
#define RELAY_MAX_PER_CLIENT 256u
/* Submit parts of one series (1 MiB each at most). */
#define RELAY_MAX_PARTS 4096u

struct RelayEntry {
        RelayEntry *next;
        int64_t id;             /* the agent's RequestId upstream */
        Conn *client;
        bool has_rid;
        int64_t rid;            /* the client's own */
        bool part;              /* a Submit part with More = true */
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
                        other = !is_this_host(a, strchr(v, '@') + 1);
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

/* The series of c is over: its parts' entries go, the held Submits of
 * other clients may go up. */
static void series_end(Agent *a, Conn *c) {
        for (RelayEntry *e = a->relays, *next; e; e = next) {
                next = e->next;
                if (e->client == c && e->part)
                        entry_remove(a, e);
        }
        if (a->submit_series == c) {
                a->submit_series = NULL;
                agent_request_defer(a); /* agent_server_resume() */
        }
}

static int refuse(Conn *c, const ClassAd *req, GleanCommand cmd, const char *reason) {
        GleanLogField f[] = { { "GLEAN_PEER_USER", c->peer.user }, { "GLEAN_COMMAND", glean_command_name(cmd) } };
        glean_log(LOG_INFO, NULL, f, 2, "not relaying %s of %s (pid %d): %s", glean_command_name(cmd), c->peer.user,
                  (int) c->peer.pid, reason);
        return agent_reply(c, req, false, reason, NULL);
}

int agent_relay(Conn *c, const ClassAd *req, GleanCommand cmd) {
        Agent *a = c->agent;
        bool more = cmd == GLEAN_CMD_SUBMIT && get_bool(req, "More", false);

        if (!a->up)
                return refuse(c, req, cmd, "no central manager configured (COLLECTOR_HOST)");
        if (cmd == GLEAN_CMD_SUBMIT && c->submit_broken) {
                if (!more)
                        c->submit_broken = false;
                return refuse(c, req, cmd,
                              "the connection to the central manager was lost during this submission; submit again");
        }
        if (cmd == GLEAN_CMD_SUBMIT && a->submit_series && a->submit_series != c) {
                /* Waits for the other client's last part. */
                if (classad_copy(req, &c->held) < 0)
                        return refuse(c, req, cmd, "out of memory");
                agent_conn_pause(c);
                return 0;
        }
        if (!agent_upstream_ready(a))
                return refuse(c, req, cmd, "central manager not connected");
        unsigned parts = 0;
        for (RelayEntry *e = a->relays; e; e = e->next)
                parts += e->client == c && e->part;
        if (c->relays - parts >= RELAY_MAX_PER_CLIENT || parts >= RELAY_MAX_PARTS)
                return refuse(c, req, cmd, "too many requests of this connection are waiting for the central manager");

        RelayEntry *e = calloc(1, sizeof *e);
        ClassAd *msg = NULL;
        if (!e || classad_copy(req, &msg) < 0) {
                free(e);
                return refuse(c, req, cmd, "out of memory");
        }
        e->id = ++a->relay_next_id;
        e->client = c;
        e->part = more;
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
        if (cmd == GLEAN_CMD_SUBMIT) {
                if (more)
                        a->submit_series = c;
                else if (a->submit_series == c) {
                        a->submit_series = NULL; /* the parts' entries go with the last reply */
                        agent_request_defer(a);
                }
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
        bool last_part = !e->part && a->submit_series != c;
        entry_remove(a, e);
        if (last_part)
                series_end(a, c); /* the entries of its earlier parts, if any */
}

void agent_relay_forget_conn(Agent *a, Conn *c) {
        for (RelayEntry *e = a->relays, *next; e; e = next) {
                next = e->next;
                if (e->client == c)
                        entry_remove(a, e);
        }
        c->relays = 0;
        classad_free(c->held);
        c->held = NULL;
        if (a->submit_series == c) {
                a->submit_series = NULL;
                agent_request_defer(a);
                if (agent_upstream_ready(a))
                        agent_upstream_fail(a, "%s (pid %d) went away in the middle of a multi-part submission: "
                                            "reconnecting, so that the central manager discards its parts",
                                            c->peer.user, (int) c->peer.pid);
        }
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
        if (a->submit_series) {
                a->submit_series->submit_broken = true;
                a->submit_series = NULL;
                agent_request_defer(a);
        }
}

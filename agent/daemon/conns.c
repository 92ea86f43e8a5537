/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conns.c — what the agent's socket lets one client spend: connections in
 * all (AGENT_MAX_CONNECTIONS, a reserve of them kept for root and
 * ADMINISTRATORS) and per user (AGENT_MAX_CONNECTIONS_PER_USER, which
 * root and ADMINISTRATORS are not held to), how long a connection may stay
 * silent (AGENT_HELLO_TIMEOUT before its Hello, AGENT_CONNECTION_IDLE_TIMEOUT
 * after it), and the accept loop at the descriptor limit: accepting stops
 * (the listening socket is level-triggered: accept4 failing with EMFILE
 * would run again at once, for ever) until a connection goes or a second
 * has passed.
 *
 * Every step is O(1): the connections are counted as they come and go,
 * per user in a small hash table of uids.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <syslog.h>

#include "common/timer.h"
#include "daemon.h"

/* The users' table: open addressing on the uid, as many slots as
 * connections may be (a power of two above twice that), so that it never
 * fills. An entry whose count drops to 0 stays (a tombstone that the same
 * uid takes again), and the table is rebuilt when they are many. */
struct ConnUsers {
        size_t size, used;
        struct {
                uid_t uid;
                unsigned n;
                bool taken;
        } e[];
};

static size_t uid_hash(uid_t uid, size_t size) {
        uint64_t h = (uint64_t) uid * 0x9e3779b97f4a7c15ULL;
        return (size_t) (h >> 32) & (size - 1);
}

static unsigned *users_slot(ConnUsers *u, uid_t uid, bool add) {
        size_t i = uid_hash(uid, u->size);
        for (size_t k = 0; k < u->size; k++, i = (i + 1) & (u->size - 1)) {
                if (u->e[i].taken && u->e[i].uid == uid)
                        return &u->e[i].n;
                if (!u->e[i].taken) {
                        if (!add)
                                return NULL;
                        u->e[i].taken = true;
                        u->e[i].uid = uid;
                        u->e[i].n = 0;
                        u->used++;
                        return &u->e[i].n;
                }
        }
        return NULL;
}

static ConnUsers *users_new(size_t max) {
        size_t size = 16;
        while (size < 2 * max + 2)
                size *= 2;
        ConnUsers *u = calloc(1, sizeof *u + size * sizeof u->e[0]);
        if (u)
                u->size = size;
        return u;
}

/* Rebuilt without the uids that have no connection left. */
static void users_compact(Agent *a) {
        ConnUsers *old = a->conn_users, *u = users_new(a->max_conns);
        if (!u)
                return;
        for (size_t i = 0; i < old->size; i++)
                if (old->e[i].taken && old->e[i].n > 0)
                        *users_slot(u, old->e[i].uid, true) = old->e[i].n;
        free(old);
        a->conn_users = u;
}

unsigned agent_conns_of(const Agent *a, uid_t uid) {
        unsigned *n = users_slot(a->conn_users, uid, false);
        return n ? *n : 0;
}

static int knob(Agent *a, const char *name, int64_t def, int64_t min, int64_t *ret) {
        ConfigError err;
        int64_t v = def;
        int r = config_get_int(a->cfg, name, &v, &err);
        if (r < 0 && r != -ENOENT)
                return agent_log_config_error(&err, r, name);
        if (v < min) {
                glean_log(LOG_WARNING, NULL, NULL, 0, "%s = %lld is below %lld: %lld is used", name, (long long) v,
                          (long long) min, (long long) min);
                v = min;
        }
        *ret = v;
        return 0;
}

int agent_conns_setup(Agent *a) {
        int64_t max, per_user, idle, hello;
        int r;
        if ((r = knob(a, "AGENT_MAX_CONNECTIONS", 1024, 8, &max)) < 0 ||
            (r = knob(a, "AGENT_MAX_CONNECTIONS_PER_USER", 64, 1, &per_user)) < 0 ||
            (r = knob(a, "AGENT_CONNECTION_IDLE_TIMEOUT", 1200, 1, &idle)) < 0 ||
            (r = knob(a, "AGENT_HELLO_TIMEOUT", 20, 1, &hello)) < 0)
                return r;
        /* Descriptors for the jobs, their cgroups and files, the upstream
         * connection, the log: the connections may have what is left. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
                int64_t room = (int64_t) rl.rlim_cur - 64;
                if (room < 8)
                        room = 8;
                if (max > room) {
                        glean_log(LOG_NOTICE, NULL, NULL, 0,
                                  "AGENT_MAX_CONNECTIONS = %lld: the descriptor limit (%llu) leaves room for %lld",
                                  (long long) max, (unsigned long long) rl.rlim_cur, (long long) room);
                        max = room;
                }
        }
        a->max_conns = (unsigned) (max > 1000000 ? 1000000 : max);
        /* Root and ADMINISTRATORS always find room: users share all but an eighth. */
        a->conn_reserve = a->max_conns / 8 > 4 ? a->max_conns / 8 : 4;
        a->max_conns_per_user = (unsigned) (per_user > a->max_conns ? a->max_conns : per_user);
        a->idle_timeout = idle;
        int64_t alive = 300;
        ConfigError err;
        if (config_get_int(a->cfg, "ALIVE_INTERVAL", &alive, &err) >= 0 && idle <= alive)
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "AGENT_CONNECTION_IDLE_TIMEOUT = %lld is not above ALIVE_INTERVAL = %lld: the connection of "
                          "a claimant that sends keep-alives every ALIVE_INTERVAL (glean agent run) is closed between "
                          "them",
                          (long long) idle, (long long) alive);
        a->hello_timeout = hello < idle ? hello : idle;
        a->conn_users = users_new(a->max_conns);
        return a->conn_users ? 0 : -ENOMEM;
}

void agent_conns_free(Agent *a) {
        free(a->conn_users);
        a->conn_users = NULL;
        a->accept_timer = sd_event_source_unref(a->accept_timer);
}

int agent_conns_admit(Agent *a, const GleanPeer *peer, bool admin, char *why, size_t whylen) {
        if (a->n_conns >= a->max_conns) {
                snprintf(why, whylen, "the agent has %u connections open, its limit (AGENT_MAX_CONNECTIONS)",
                         a->n_conns);
                return -EMFILE;
        }
        if (admin)
                return 0;
        if (a->n_conns + a->conn_reserve >= a->max_conns) {
                snprintf(why, whylen,
                         "the agent has %u connections open: the last %u of its AGENT_MAX_CONNECTIONS (%u) are "
                         "kept for root and ADMINISTRATORS",
                         a->n_conns, a->conn_reserve, a->max_conns);
                return -EMFILE;
        }
        unsigned n = agent_conns_of(a, peer->uid);
        if (n >= a->max_conns_per_user) {
                snprintf(why, whylen, "%s has %u connections to the agent open, the limit (AGENT_MAX_CONNECTIONS_PER_USER)",
                         peer->user, n);
                return -EUSERS;
        }
        return 0;
}

void agent_conns_add(Agent *a, Conn *c) {
        c->prev = NULL;
        c->next = a->conns;
        if (a->conns)
                a->conns->prev = c;
        a->conns = c;
        a->n_conns++;
        unsigned *n = users_slot(a->conn_users, c->peer.uid, true);
        if (n)
                (*n)++;
}

void agent_conns_remove(Agent *a, Conn *c) {
        if (c->prev)
                c->prev->next = c->next;
        else if (a->conns == c)
                a->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        c->next = c->prev = NULL;
        a->n_conns--;
        unsigned *n = users_slot(a->conn_users, c->peer.uid, false);
        if (n && *n > 0)
                (*n)--;
        if (a->conn_users->used > a->conn_users->size / 2)
                users_compact(a);
        c->idle_src = sd_event_source_unref(c->idle_src);
        agent_conns_accept_again(a); /* a descriptor is free */
}

/* ---- idle connections ---- */

static int on_idle(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Conn *c = userdata;
        /* Waiting for the central manager on its behalf is not idleness. */
        if (c->relays) {
                agent_conn_touch(c);
                return 0;
        }
        glean_log(LOG_NOTICE, NULL, NULL, 0, "closing the connection of %s (pid %d): %s for %lld s", c->peer.user,
                  (int) c->peer.pid, c->hello ? "idle" : "no Hello",
                  (long long) (c->hello ? c->agent->idle_timeout : c->agent->hello_timeout));
        agent_conn_drop(c);
        return 0;
}

void agent_conn_touch(Conn *c) {
        Agent *a = c->agent;
        uint64_t usec = (uint64_t) (c->hello ? a->idle_timeout : a->hello_timeout) * 1000000ULL;
        int r = glean_timer_arm_in(a->event, &c->idle_src, CLOCK_MONOTONIC, usec, 1000000ULL, on_idle, c);
        if (r < 0)
                glean_log_errno(LOG_WARNING, r, "a connection's idle timer: %m; it has no timeout");
}

/* ---- the accept loop at the descriptor limit ---- */

static int on_accept_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        agent_conns_accept_again(userdata);
        return 0;
}

void agent_conns_accept_pause(Agent *a, int error) {
        if (a->accept_paused || !a->server)
                return;
        a->accept_paused = true;
        glean_usock_pause(a->server);
        glean_log(LOG_WARNING, NULL, NULL, 0,
                  "cannot accept connections: %s (%u open); accepting again when one goes, or in a second",
                  strerror(error), a->n_conns);
        int r = glean_timer_arm_in(a->event, &a->accept_timer, CLOCK_MONOTONIC, 1000000ULL, 100000ULL, on_accept_timer,
                                   a);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the timer that takes connections again: %m; accepting again when one "
                                            "goes");
}

void agent_conns_accept_again(Agent *a) {
        if (!a->accept_paused || !a->server)
                return;
        a->accept_paused = false;
        if (a->accept_timer)
                sd_event_source_set_enabled(a->accept_timer, SD_EVENT_OFF);
        glean_usock_resume(a->server);
}

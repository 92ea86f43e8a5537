/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net.c — glean-negotiator's sockets: agents over TCP, every frame sealed
 * after the pool-key handshake (common/secure.h), and local users over the
 * unix socket NEGOTIATOR_SOCKET (plain frames, the caller known by
 * SO_PEERCRED; the socket, its frames and output are common/usock.h's, the
 * limits and what a frame means are user_ops here), both starting with the
 * Hello of common/proto.h.
 *
 * A connection that fails (a wrong key, a frame that does not
 * authenticate, one too large or cut short, a handshake or Hello that does
 * not come within NEGOTIATOR_TIMEOUT) is closed with one log record saying
 * why and from where (at most REFUSAL_RECORDS a window, then a summary).
 * A failed handshake holds nothing against its address: the caps on
 * handshakes (per address, in all; the oldest gives way) bound what junk
 * costs, and a connection that proves the key always gets in. Nothing an
 * unauthenticated peer sends reaches a handler.
 *
 * Limits (docs/negotiator.md): the connections the descriptors leave, a
 * user's connections, Waits and waiting output, an idle timeout after the
 * Hello; accepting pauses while no descriptor is left, and dead
 * connections are freed at once by the reaper. Every lookup, accept and
 * close is O(1): intrusive lists and maps by id and by Machine.
 *
 * Output is queued and leaves from the post work only (nego_net_flush),
 * after the iteration's batch committed. When the commit fails, what the
 * batch queued is taken back (nego_net_batch_end).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/timer.h"
#include "common/file.h"
#include "daemon.h"

/* Descriptors kept aside from connections: the database's, the journal's,
 * the loop's timers, what a query or a commit opens for a moment. */
#define NET_FD_RESERVE 16
/* Records of refusals (of connections not authenticated, of local users'
 * connections that failed): at most so many a window, the others counted
 * and summed up in one record when the window ends. */
#define REFUSAL_WINDOW_USEC (10 * 1000000ULL)
#define REFUSAL_RECORDS 20
/* Connections taken from a listening socket in one dispatch: the others
 * come at the next, after what else is ready. */
#define ACCEPTS_PER_DISPATCH 64
/* Event sources dispatched without the post work, after which it goes
 * ahead of the next ones (it is of idle priority, so that a burst of
 * events shares one commit, but must not wait for the burst to end). */
#define DISPATCHES_BEFORE_POST 64
/* After the kernel said no descriptor is left: listening again after this,
 * or as soon as a connection closes. */
#define ACCEPT_RETRY_USEC 1000000ULL

#define CONN_LIST_APPEND(l, c, f)                        \
        do {                                             \
                (c)->f.prev = (l)->tail;                 \
                (c)->f.next = NULL;                      \
                if ((l)->tail)                           \
                        (l)->tail->f.next = (c);         \
                else                                     \
                        (l)->head = (c);                 \
                (l)->tail = (c);                         \
                (l)->n++;                                \
        } while (0)

#define CONN_LIST_REMOVE(l, c, f)                        \
        do {                                             \
                if ((c)->f.prev)                         \
                        (c)->f.prev->f.next = (c)->f.next; \
                else                                     \
                        (l)->head = (c)->f.next;         \
                if ((c)->f.next)                         \
                        (c)->f.next->f.prev = (c)->f.prev; \
                else                                     \
                        (l)->tail = (c)->f.prev;         \
                (c)->f.prev = (c)->f.next = NULL;        \
                (l)->n--;                                \
        } while (0)

static uint64_t mono_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

Conn *nego_conn_by_id(Nego *n, uint64_t id) {
        char key[24];
        snprintf(key, sizeof key, "%" PRIu64, id);
        return n->conn_ids ? glean_strmap_get(n->conn_ids, key) : NULL;
}

Conn *nego_agent_conn(Nego *n, const char *machine) {
        return machine && n->agent_conns ? glean_strmap_get(n->agent_conns, machine) : NULL;
}

static const char *conn_name(const Conn *c, char *buf, size_t len) {
        if (c->tcp && c->machine)
                snprintf(buf, len, "agent %s (%s)", c->machine, c->addr_text);
        else if (c->tcp)
                snprintf(buf, len, "%s", c->addr_text);
        else
                snprintf(buf, len, "%s (pid %d)", c->peer.user, (int) c->peer.pid);
        return buf;
}

/* ---- the limits ---- */

static size_t per_user_max(const Nego *n) {
        size_t quarter = n->max_conns / 4 ? n->max_conns / 4 : 1;
        return (size_t) n->k.max_user_conns < quarter ? (size_t) n->k.max_user_conns : quarter;
}

static size_t per_addr_max(const Nego *n) {
        size_t quarter = n->max_conns / 4 ? n->max_conns / 4 : 1;
        return (size_t) n->k.max_addr_handshakes < quarter ? (size_t) n->k.max_addr_handshakes : quarter;
}

/* Handshakes at most, from all addresses: half the connections, so that
 * strangers never hold what agents and users need. */
static size_t handshakes_max(const Nego *n) {
        return n->max_conns / 2 ? n->max_conns / 2 : 1;
}

static size_t conns_open(const Nego *n) {
        return n->n_tcp + n->n_users;
}

static void refusals_summary(Nego *n, uint64_t now) {
        if (n->refusals_quiet > 0) {
                GleanLogField f[] = { { "GLEAN_REASON", n->refusal_last } };
                glean_log(LOG_WARNING, MESSAGE_ID_REFUSED, f, 1,
                          "%" PRIu64 " more connections refused or closed in the last %" PRIu64
                          " s without a record each; the last: %s",
                          n->refusals_quiet, (now - n->refusals_window + 500000) / 1000000, n->refusal_last);
        }
        n->refusals_window = now;
        n->refusals_logged = 0;
        n->refusals_quiet = 0;
}

/* "what peer: reason", a record of its own while the window has room. */
static void refusal_log(Nego *n, int prio, const char *what, const char *peer, const char *reason) {
        uint64_t now = mono_usec();
        if (now - n->refusals_window >= REFUSAL_WINDOW_USEC)
                refusals_summary(n, now);
        if (n->refusals_logged < REFUSAL_RECORDS) {
                n->refusals_logged++;
                GleanLogField f[] = { { "GLEAN_REASON", reason }, { "GLEAN_PEER", peer } };
                glean_log(prio, MESSAGE_ID_REFUSED, f, peer ? 2 : 1, "%s%s%s: %s", what, peer ? " " : "",
                          peer ? peer : "", reason);
                return;
        }
        n->refusals_quiet++;
        snprintf(n->refusal_last, sizeof n->refusal_last, "%s%s%s: %s", what, peer ? " " : "", peer ? peer : "",
                 reason);
}

void nego_net_tick(Nego *n) {
        uint64_t now = mono_usec();
        if (now - n->refusals_window >= REFUSAL_WINDOW_USEC)
                refusals_summary(n, now);
}

static NetUser *user_get(Nego *n, const char *name) {
        NetUser *u = glean_strmap_get(n->net_users, name);
        if (u)
                return u;
        u = calloc(1, sizeof *u);
        if (!u)
                return NULL;
        snprintf(u->name, sizeof u->name, "%s", name);
        if (glean_strmap_put(n->net_users, u->name, u) < 0) {
                free(u);
                return NULL;
        }
        return u;
}

static void user_put(Nego *n, NetUser *u) {
        if (u && u->conns == 0 && u->waits == 0 && u->refused == 0) {
                glean_strmap_remove(n->net_users, u->name);
                free(u);
        }
}

int nego_net_wait_begin(Nego *n, Conn *c, const char *user, NetUser **ret, char *why, size_t len) {
        NetUser *u = user_get(n, user);
        if (!u)
                return -ENOMEM;
        if (u->waits >= (size_t) n->k.max_waits) {
                snprintf(why, len,
                         "%s has %zu Waits outstanding, the most NEGOTIATOR_MAX_WAITS_PER_USER allows; "
                         "wait for some to end",
                         user, u->waits);
                user_put(n, u);
                return -EUSERS;
        }
        u->waits++;
        c->waits++;
        *ret = u;
        return 0;
}

void nego_net_wait_end(Nego *n, uint64_t conn, NetUser *u) {
        Conn *c = nego_conn_by_id(n, conn);
        if (c && c->waits > 0)
                c->waits--;
        if (u && u->waits > 0) {
                u->waits--;
                user_put(n, u);
        }
}

/* Its user's count of output waiting brought to what it has queued now. */
static void out_sync(Conn *c) {
        if (c->tcp || !c->user)
                return;
        size_t q = c->uc ? glean_usock_conn_queued(c->uc) : 0;
        c->user->output = c->user->output - c->out_counted + q;
        c->out_counted = q;
}

/* c's handshake is over (done, failed, or c goes): it no longer counts
 * against its address. */
static void hs_leave(Conn *c) {
        Nego *n = c->nego;
        if (!c->on_hs)
                return;
        c->on_hs = false;
        CONN_LIST_REMOVE(&n->handshakes, c, hs_link);
        NetAddr *a = c->net_addr;
        c->net_addr = NULL;
        CONN_LIST_REMOVE(&a->handshakes, c, addr_link);
        if (a->handshakes.n == 0) {
                glean_strmap_remove(n->net_addrs, a->key);
                free(a);
        }
}

static int hs_enter(Conn *c, const char *key) {
        Nego *n = c->nego;
        NetAddr *a = glean_strmap_get(n->net_addrs, key);
        if (!a) {
                if (!(a = calloc(1, sizeof *a)))
                        return -ENOMEM;
                snprintf(a->key, sizeof a->key, "%s", key);
                if (glean_strmap_put(n->net_addrs, a->key, a) < 0) {
                        free(a);
                        return -ENOMEM;
                }
        }
        c->net_addr = a;
        c->on_hs = true;
        CONN_LIST_APPEND(&n->handshakes, c, hs_link);
        CONN_LIST_APPEND(&a->handshakes, c, addr_link);
        return 0;
}

static void listen_resume(Nego *n) {
        if (!n->accept_paused)
                return;
        n->accept_paused = false;
        sd_event_source_set_enabled(n->accept_timer, SD_EVENT_OFF);
        if (n->tcp_src)
                sd_event_source_set_enabled(n->tcp_src, SD_EVENT_ON);
        if (n->usock)
                glean_usock_resume(n->usock);
}

/* No connection is taken while there is no room for one (err: what the
 * kernel said, 0: our own count is full): the listening sockets are left
 * alone until a connection closes, or for ACCEPT_RETRY_USEC. */
static void listen_pause(Nego *n, int err) {
        if (n->accept_paused)
                return;
        n->accept_paused = true;
        if (n->tcp_src)
                sd_event_source_set_enabled(n->tcp_src, SD_EVENT_OFF);
        if (n->usock)
                glean_usock_pause(n->usock);
        int r = glean_timer_arm(NULL, &n->accept_timer, CLOCK_MONOTONIC, mono_usec() + ACCEPT_RETRY_USEC, 0, NULL,
                                NULL);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the timer that takes connections again: %m");
        char reason[200];
        if (err)
                snprintf(reason, sizeof reason, "%s (%zu connections open, RLIMIT_NOFILE %zu)", strerror(err),
                         conns_open(n), n->fd_limit);
        else
                snprintf(reason, sizeof reason, "%zu connections open, the most the descriptors allow (RLIMIT_NOFILE %zu)",
                         conns_open(n), n->fd_limit);
        refusal_log(n, LOG_WARNING, "not accepting connections for now", NULL, reason);
}

static int on_accept_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        listen_resume(userdata);
        return 0;
}

/* ---- connections ---- */

/* Marks c dead: it leaves the lookups and the lists at once, and the
 * reaper (of the highest priority) frees it before the loop does anything
 * else; its descriptor closes then. */
static void conn_kill(Conn *c) {
        Nego *n = c->nego;
        if (c->dead)
                return;
        c->dead = true;
        glean_strmap_remove(n->conn_ids, c->id_text);
        if (c->agent && c->machine && glean_strmap_get(n->agent_conns, c->machine) == c)
                glean_strmap_remove(n->agent_conns, c->machine);
        hs_leave(c);
        if (c->on_flush) {
                c->on_flush = false;
                CONN_LIST_REMOVE(&n->to_flush, c, out_link);
        }
        CONN_LIST_APPEND(&n->dead, c, dead_link);
        if (c->src)
                sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
        if (c->uc)
                glean_usock_conn_stop(c->uc);
        if (c->timer)
                sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
        sd_event_source_set_enabled(n->reap, SD_EVENT_ONESHOT);
}

void nego_conn_fail(Conn *c, const char *why) {
        if (c->dead)
                return;
        if (why) {
                char name[160];
                conn_name(c, name, sizeof name);
                if (c->agent) {
                        GleanLogField f[] = { { "GLEAN_PEER", name }, { "GLEAN_REASON", why } };
                        glean_log(LOG_NOTICE, MESSAGE_ID_REFUSED, f, 2, "closing the connection of %s: %s", name, why);
                } else
                        refusal_log(c->nego, c->tcp ? LOG_NOTICE : LOG_INFO, "closing the connection of", name, why);
        }
        conn_kill(c);
}

/* A handshake that failed: one record (within the limit of refusal
 * records), and the peer's address not held against it: only the
 * handshake caps limit what junk costs us (docs/negotiator.md). */
static void handshake_failed(Conn *c, int err) {
        const char *why = glean_secure_reason(c->sec);
        refusal_log(c->nego, LOG_WARNING, "refused a connection from", c->addr_text,
                    why && *why ? why : strerror(-err));
        /* Once, without waiting: our AUTH tells a peer with another key that it is the key. */
        glean_secure_flush(c->sec, c->fd);
        conn_kill(c);
}

static size_t queued(const Conn *c) {
        const void *p;
        return c->tcp ? (c->sec ? glean_secure_output(c->sec, &p) : 0) : glean_usock_conn_queued(c->uc);
}

static void flush_want(Conn *c) {
        Nego *n = c->nego;
        if (c->on_flush || c->dead)
                return;
        c->on_flush = true;
        CONN_LIST_APPEND(&n->to_flush, c, out_link);
}

int nego_send(Conn *c, const ClassAd *msg) {
        if (c->dead)
                return -EPIPE;
        char *text = classad_unparse(msg);
        if (!text)
                return -ENOMEM;
        int r = nego_send_text(c, text, strlen(text));
        free(text);
        return r;
}

int nego_send_text(Conn *c, const char *text, size_t len) {
        Nego *n = c->nego;
        if (c->dead)
                return -EPIPE;
        if (len == 0 || len > GLEAN_FRAME_MAX) {
                glean_log(LOG_ERR, NULL, NULL, 0, "a message of %zu bytes does not fit a frame; not sent", len);
                return -EMSGSIZE;
        }
        if (n->in_batch && !c->on_batch) {
                /* What it had before the batch leaves whatever the commit does. */
                c->on_batch = true;
                c->out_mark = queued(c);
                c->n_batch_ids = 0;
                CONN_LIST_APPEND(&n->batch_conns, c, batch_link);
        }
        size_t max = (size_t) n->k.max_output;
        int r = 0;
        if (c->tcp)
                r = queued(c) + len > max ? -ENOBUFS : glean_secure_seal(c->sec, text, len);
        else {
                r = c->user && c->user->output + len > max ? -ENOBUFS : glean_usock_conn_queue(c->uc, text, len, max);
                out_sync(c);
        }
        if (r == -ENOBUFS) {
                char why[200];
                snprintf(why, sizeof why,
                         "it does not read its replies: more than %" PRId64 " bytes would wait%s%s "
                         "(NEGOTIATOR_MAX_OUTPUT)",
                         n->k.max_output, c->tcp ? "" : " for ", c->tcp ? "" : c->peer.user);
                nego_conn_fail(c, why);
        } else if (r < 0)
                nego_conn_fail(c, strerror(-r));
        else
                flush_want(c);
        return r;
}

static void conn_timer_arm(Conn *c);

/* Sends what c has queued as far as the socket takes it. */
static void conn_flush(Conn *c) {
        if (c->dead)
                return;
        bool left = false;
        size_t before = queued(c);
        if (c->tcp) {
                int r = glean_secure_flush(c->sec, c->fd);
                if (r < 0) {
                        nego_conn_fail(c, glean_secure_reason(c->sec));
                        return;
                }
                left = r == 0;
        } else {
                int r = glean_usock_conn_flush(c->uc);
                out_sync(c);
                if (r < 0) {
                        nego_conn_fail(c, strerror(-r));
                        return;
                }
                left = r == 0;
        }
        if (!left || queued(c) < before)
                c->last_progress = mono_usec();
        if (left != c->flushing) {
                c->flushing = left;
                if (c->src) /* tcp: a unix connection's are the server's */
                        sd_event_source_set_io_events(c->src, left ? EPOLLIN | EPOLLOUT : EPOLLIN);
                if (c->hello)
                        conn_timer_arm(c);
        }
}

static void conn_free(Conn *c) {
        Nego *n = c->nego;
        if (c->dead)
                CONN_LIST_REMOVE(&n->dead, c, dead_link);
        else {
                glean_strmap_remove(n->conn_ids, c->id_text);
                if (c->agent && c->machine && glean_strmap_get(n->agent_conns, c->machine) == c)
                        glean_strmap_remove(n->agent_conns, c->machine);
                hs_leave(c);
        }
        CONN_LIST_REMOVE(&n->conns, c, all_link);
        if (c->on_flush)
                CONN_LIST_REMOVE(&n->to_flush, c, out_link);
        if (c->on_batch)
                CONN_LIST_REMOVE(&n->batch_conns, c, batch_link);
        if (c->tcp) {
                n->n_tcp--;
                n->n_agents -= c->agent ? 1 : 0;
        } else
                n->n_users--;
        if (c->uc) {
                c->uc = glean_usock_conn_free(c->uc);
                c->fd = -1; /* closed with it */
        }
        out_sync(c);
        if (c->user) {
                if (c->refused)
                        c->user->refused--;
                else
                        c->user->conns--;
                user_put(n, c->user);
        }
        free(c->refused);
        sd_event_source_unref(c->src);
        sd_event_source_unref(c->timer);
        glean_secure_free(c->sec);
        if (c->fd >= 0)
                close(c->fd);
        free(c->batch_ids);
        free(c->machine);
        free(c);
        listen_resume(n);
}

/* The dead go before anything else: what their going changes (claims,
 * waiting users) is queued, and their descriptors are free again. */
static int on_reap(sd_event_source *src, void *userdata) {
        (void) src;
        Nego *n = userdata;
        while (n->dead.head) {
                Conn *c = n->dead.head;
                if (c->agent)
                        nego_agent_gone(c);
                if (!c->tcp)
                        nego_user_gone(c);
                conn_free(c);
        }
        return 0;
}

void nego_net_dispatched(Nego *n) {
        if (++n->dispatches == DISPATCHES_BEFORE_POST && n->post)
                sd_event_source_set_priority(n->post, SD_EVENT_PRIORITY_NORMAL);
}

void nego_net_flush(Nego *n) {
        if (n->dispatches >= DISPATCHES_BEFORE_POST && n->post)
                sd_event_source_set_priority(n->post, SD_EVENT_PRIORITY_IDLE);
        n->dispatches = 0;
        while (n->to_flush.head) {
                Conn *c = n->to_flush.head;
                c->on_flush = false;
                CONN_LIST_REMOVE(&n->to_flush, c, out_link);
                conn_flush(c);
        }
}

/* ---- batches ---- */

void nego_net_batch_begin(Nego *n) {
        /* Each connection joins the batch at its first output in it (nego_send_text). */
        (void) n;
}

void nego_net_batch_request(Conn *c, int64_t request_id) {
        if (c->n_batch_ids == c->cap_batch_ids) {
                size_t cap = c->cap_batch_ids ? 2 * c->cap_batch_ids : 4;
                int64_t *a = realloc(c->batch_ids, cap * sizeof *a);
                if (!a) {
                        nego_conn_fail(c, "out of memory");
                        return;
                }
                c->batch_ids = a;
                c->cap_batch_ids = cap;
        }
        c->batch_ids[c->n_batch_ids++] = request_id;
}

void nego_net_batch_end(Nego *n, const char *why) {
        Conn *c;
        while ((c = n->batch_conns.head)) {
                CONN_LIST_REMOVE(&n->batch_conns, c, batch_link);
                c->on_batch = false;
                size_t ids = c->n_batch_ids;
                c->n_batch_ids = 0;
                if (!why || c->dead)
                        continue;
                if (c->tcp) {
                        /* Sealed already: it cannot be taken back. */
                        if (queued(c) > c->out_mark)
                                nego_conn_fail(c, "what it was sent was not committed");
                        continue;
                }
                bool taken = queued(c) > c->out_mark;
                if (taken) {
                        glean_usock_conn_truncate(c->uc, c->out_mark);
                        out_sync(c);
                }
                for (size_t i = 0; i < ids && !c->dead; i++) {
                        ClassAd *req = NULL, *reply = NULL;
                        if (classad_new(&req) >= 0 &&
                            (c->batch_ids[i] < 0 || classad_set_int(req, "RequestId", c->batch_ids[i]) >= 0) &&
                            glean_msg_reply(req, false, why, &reply) >= 0)
                                nego_send(c, reply);
                        else
                                nego_conn_fail(c, "out of memory");
                        classad_free(reply);
                        classad_free(req);
                }
                /* A reply of this batch to no request of it (a Wait
                 * answered): the caller learns by the close. */
                if (taken && ids == 0)
                        nego_conn_fail(c, NULL);
        }
}

/* The peer's address without its port, an IPv4 one mapped into IPv6
 * shown as IPv4: what a transfer's Address is made of (grants.c). */
static void peer_ip_format(const struct sockaddr *sa, char *buf, size_t len) {
        buf[0] = '\0';
        if (sa->sa_family == AF_INET)
                inet_ntop(AF_INET, &((const struct sockaddr_in *) sa)->sin_addr, buf, (socklen_t) len);
        else if (sa->sa_family == AF_INET6) {
                const struct in6_addr *a = &((const struct sockaddr_in6 *) sa)->sin6_addr;
                if (IN6_IS_ADDR_V4MAPPED(a))
                        inet_ntop(AF_INET, &a->s6_addr[12], buf, (socklen_t) len);
                else
                        inet_ntop(AF_INET6, a, buf, (socklen_t) len);
        }
}

/* ---- the Hello ---- */

/* A Hello refused: the answer says why and goes at once (nothing else
 * can be queued before a Hello's answer), then the connection closes. */
static int hello_refused(Conn *c, const ClassAd *msg, const char *why, int err) {
        ClassAd *reply = NULL;
        if (glean_msg_reply(msg, false, why, &reply) >= 0 && nego_send(c, reply) >= 0)
                conn_flush(c);
        classad_free(reply);
        nego_conn_fail(c, why);
        return err;
}

static int on_hello(Conn *c, const ClassAd *msg) {
        Nego *n = c->nego;
        char why[256] = "";
        ClassAd *reply = NULL;
        if (glean_hello_check_as(msg, "central manager", why, sizeof why) < 0)
                return hello_refused(c, msg, why, -EPROTO);
        if (c->tcp) {
                char *peer = NULL, *machine = NULL;
                int64_t start = 0;
                classad_eval_string(msg, "Peer", GLEAN_CA_MODE, &peer);
                classad_eval_string(msg, "Machine", GLEAN_CA_MODE, &machine);
                classad_eval_int(msg, "AgentStartTime", GLEAN_CA_MODE, &start);
                bool ok = peer && strcmp(peer, "glean-agent") == 0 && machine && *machine &&
                          strlen(machine) < 256 && !strpbrk(machine, " \t\r\n\"\\");
                free(peer);
                if (!ok) {
                        free(machine);
                        snprintf(why, sizeof why, "an agent's Hello needs Peer \"glean-agent\" and its Machine");
                        return hello_refused(c, msg, why, -EPROTO);
                }
                if (nego_auth_hello(c, machine, why, sizeof why) < 0 ||
                    nego_authz_agent(c, machine, why, sizeof why) < 0) {
                        free(machine);
                        return hello_refused(c, msg, why, -EPERM);
                }
                /* A new connection of the same agent replaces the old one. */
                Conn *old = nego_agent_conn(n, machine);
                if (old)
                        nego_conn_fail(old, "the agent connected again");
                int64_t interval = 0, tport = 0;
                classad_eval_int(msg, "UpdateInterval", GLEAN_CA_MODE, &interval);
                /* Where it serves its jobs' files (range checked with the message). */
                if (classad_eval_int(msg, "TransferPort", GLEAN_CA_MODE, &tport) >= 0 && tport > 0 && tport <= 65535)
                        c->transfer_port = (uint16_t) tport;
                if (glean_strmap_put(n->agent_conns, machine, c) < 0) {
                        free(machine);
                        nego_conn_fail(c, "out of memory");
                        return -ENOMEM;
                }
                c->machine = machine;
                c->agent_start = start;
                c->update_interval = interval > 0 ? interval : 300;
                c->hello_at = nego_now();
                c->agent = true;
                n->n_agents++;
        }
        int r = glean_hello_new("glean-negotiator", &reply);
        if (r >= 0)
                r = nego_send(c, reply);
        classad_free(reply);
        c->hello = true;
        conn_timer_arm(c);
        if (c->agent) {
                GleanLogField f[] = { { "GLEAN_MACHINE", c->machine }, { "GLEAN_PEER", c->addr_text } };
                glean_log(LOG_INFO, NULL, f, 2, "agent %s connected from %s", c->machine, c->addr_text);
                nego_agent_message(c, msg, GLEAN_CMD_HELLO);
        }
        return r;
}

/* ---- frames ---- */

/* A local user over its limit: its Hello answered with why, then the
 * close (the answer written at once: a dead connection is not flushed). */
static void refuse_hello(Conn *c) {
        glean_usock_tell(c->fd, c->refused, 0);
        conn_kill(c);
}

static void on_frame(Conn *c, const char *payload, size_t len) {
        c->last_active = mono_usec();
        if (c->refused) {
                refuse_hello(c);
                return;
        }
        ClassAd *msg = NULL;
        GleanCommand cmd;
        char why[512];
        int r = glean_msg_parse(payload, len, &msg, &cmd, why, sizeof why);
        if (r < 0) {
                char name[160];
                GleanLogField f[] = { { "GLEAN_PEER", conn_name(c, name, sizeof name) }, { "GLEAN_REASON", why } };
                glean_log(LOG_NOTICE, NULL, f, 2, "bad message from %s: %s", name, why);
                ClassAd *reply = NULL;
                if (glean_msg_reply_invalid(payload, len, why, &reply) >= 0)
                        nego_send(c, reply);
                classad_free(reply);
                if (!c->hello)
                        nego_conn_fail(c, "no Hello");
                return;
        }
        if (!c->hello) {
                if (cmd != GLEAN_CMD_HELLO) {
                        ClassAd *reply = NULL;
                        if (glean_msg_reply(msg, false, "Hello first, please", &reply) >= 0)
                                nego_send(c, reply);
                        classad_free(reply);
                        nego_conn_fail(c, "a message before Hello");
                } else
                        on_hello(c, msg);
                classad_free(msg);
                return;
        }
        if (c->agent)
                nego_agent_message(c, msg, cmd);
        else {
                QueueRequester who = { .user = c->peer.user,
                                       .uid = c->peer.uid,
                                       .admin = nego_is_admin(c->nego, &c->peer) };
                size_t before = queued(c);
                nego_user_message(c, msg, cmd, &who);
                /* Its reply waits for the batch: refused if that fails. */
                int64_t id = -1;
                if (c->nego->in_batch && !c->dead && queued(c) > before) {
                        if (classad_eval_int(msg, "RequestId", GLEAN_CA_MODE, &id) < 0)
                                id = -1;
                        nego_net_batch_request(c, id);
                }
        }
        classad_free(msg);
}

static void read_tcp(Conn *c) {
        for (;;) {
                char *payload = NULL;
                size_t len = 0;
                int r = glean_secure_read(c->sec, c->fd, &payload, &len);
                if (!c->established && glean_secure_established(c->sec)) {
                        /* It proved the key: no longer a stranger's handshake. */
                        c->established = true;
                        hs_leave(c);
                        nego_auth_established(c);
                }
                if (queued(c) > 0)
                        flush_want(c); /* our AUTH */
                if (r == 0)
                        return;
                if (r < 0) {
                        if (!c->established)
                                handshake_failed(c, r);
                        else if (r == -EPIPE && !strstr(glean_secure_reason(c->sec), "middle of a frame")) {
                                GleanLogField f[] = { { "GLEAN_MACHINE", c->machine ? c->machine : "" } };
                                glean_log(LOG_INFO, NULL, f, 1, "%s%s closed its connection",
                                          c->machine ? "agent " : "", c->machine ? c->machine : c->addr_text);
                                conn_kill(c);
                        } else
                                nego_conn_fail(c, glean_secure_reason(c->sec));
                        return;
                }
                on_frame(c, payload, len);
                free(payload);
                if (c->dead)
                        return;
        }
}

/* c's socket takes output again: not while a batch is open, what it
 * queued waits for its commit (the post work flushes it). */
static void conn_writable(Conn *c) {
        if (!c->nego->in_batch)
                conn_flush(c);
        else
                flush_want(c);
}

/* A tcp connection's events (a unix one's are the server's: user_ops). */
static int on_conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        Conn *c = userdata;
        nego_net_dispatched(c->nego);
        if (c->dead)
                return 0;
        if (revents & EPOLLOUT)
                conn_writable(c);
        if (!c->dead && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                read_tcp(c);
        return 0;
}

/* Seconds a connection after its Hello may stay silent with nothing
 * asked: an agent sends its slots every UpdateInterval. */
static uint64_t idle_usec(const Conn *c) {
        int64_t s = c->nego->k.idle_timeout;
        if (c->agent && 3 * c->update_interval > s)
                s = 3 * c->update_interval;
        return (uint64_t) s * 1000000ULL;
}

/* After the Hello: the timer at the next moment c may be found idle, or
 * found not reading what waits for it. */
static void conn_timer_arm(Conn *c) {
        uint64_t at = c->last_active + idle_usec(c);
        if (c->flushing) {
                uint64_t stall = c->last_progress + (uint64_t) c->nego->k.timeout * 1000000ULL;
                if (stall < at)
                        at = stall;
        }
        int r = glean_timer_arm(NULL, &c->timer, CLOCK_MONOTONIC, at, 0, NULL, NULL);
        if (r < 0)
                glean_log_errno(LOG_WARNING, r, "the idle timer of %s: %m", c->addr_text);
}

static int on_conn_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Conn *c = userdata;
        Nego *n = c->nego;
        nego_net_dispatched(n);
        if (c->dead)
                return 0;
        char why[160];
        if (!c->hello) {
                if (c->tcp && !c->established) {
                        int r = glean_secure_expire(c->sec);
                        handshake_failed(c, r < 0 ? r : -ETIMEDOUT);
                } else {
                        snprintf(why, sizeof why, "no Hello within %" PRId64 " s (NEGOTIATOR_TIMEOUT)", n->k.timeout);
                        nego_conn_fail(c, why);
                }
                return 0;
        }
        uint64_t now = mono_usec();
        if (c->flushing && now >= c->last_progress + (uint64_t) n->k.timeout * 1000000ULL) {
                snprintf(why, sizeof why,
                         "it does not read its replies: %zu bytes wait, none taken for %" PRId64 " s (NEGOTIATOR_TIMEOUT)",
                         queued(c), n->k.timeout);
                nego_conn_fail(c, why);
                return 0;
        }
        if (now >= c->last_active + idle_usec(c) && !c->flushing && c->waits == 0) {
                snprintf(why, sizeof why, "idle for %" PRIu64 " s (NEGOTIATOR_IDLE_TIMEOUT)", idle_usec(c) / 1000000);
                nego_conn_fail(c, why);
                return 0;
        }
        if (now >= c->last_active + idle_usec(c))
                c->last_active = now; /* a Wait parked: not idle; looked at again later */
        conn_timer_arm(c);
        return 0;
}

/* A connection on fd (tcp), or on the unix socket's uc (whose source,
 * frames and output are the server's). */
static int conn_add(Nego *n, int fd, GleanUsockConn *uc, Conn **ret) {
        Conn *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        bool tcp = !uc;
        c->nego = n;
        c->fd = tcp ? fd : glean_usock_conn_fd(uc);
        c->tcp = tcp;
        c->id = n->next_conn++;
        snprintf(c->id_text, sizeof c->id_text, "%" PRIu64, c->id);
        c->last_active = c->last_progress = mono_usec();
        int r = tcp ? sd_event_add_io(n->event, &c->src, fd, EPOLLIN, on_conn_io, c) : 0;
        if (r >= 0)
                r = sd_event_add_time_relative(n->event, &c->timer, CLOCK_MONOTONIC,
                                               (uint64_t) n->k.timeout * 1000000ULL, 100000, on_conn_timer, c);
        if (r >= 0)
                r = glean_strmap_put(n->conn_ids, c->id_text, c);
        if (r < 0) {
                sd_event_source_unref(c->src);
                sd_event_source_unref(c->timer);
                free(c);
                return r;
        }
        CONN_LIST_APPEND(&n->conns, c, all_link);
        if (tcp)
                n->n_tcp++;
        else {
                n->n_users++;
                c->uc = uc;
                glean_usock_conn_set_data(uc, c);
        }
        *ret = c;
        return 0;
}

/* Whether accept4()'s error means there is no descriptor (or memory) for now. */
static bool out_of_descriptors(int err) {
        return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

/* The oldest handshake in l goes, to make room (it is freed at once: its
 * descriptor is what the new connection needs). */
static void evict(Nego *n, Conn *old, const char *why) {
        refusal_log(n, LOG_NOTICE, "closing the connection of", old->addr_text, why);
        conn_free(old);
}

static int on_accept_tcp(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        Nego *n = userdata;
        nego_net_dispatched(n);
        for (int i = 0; i < ACCEPTS_PER_DISPATCH && !n->accept_paused; i++) {
                if (conns_open(n) >= n->max_conns && !n->handshakes.head) {
                        listen_pause(n, 0);
                        return 0;
                }
                struct sockaddr_storage sa;
                socklen_t salen = sizeof sa;
                int cfd = accept4(fd, (struct sockaddr *) &sa, &salen, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (cfd < 0) {
                        if (out_of_descriptors(errno))
                                listen_pause(n, errno);
                        if (errno == EINTR || errno == ECONNABORTED)
                                continue;
                        return 0;
                }
                GleanAddrKey key;
                char text[GLEAN_ADDR_KEY_STRLEN];
                if (glean_addr_key_from_sockaddr((struct sockaddr *) &sa, salen, &key) < 0) {
                        close(cfd);
                        continue;
                }
                glean_addr_key_format(&key, text);
                /* Room: strangers' handshakes give way, the oldest first,
                 * to the total, to all handshakes, to this address's. */
                char why[200];
                if (conns_open(n) >= n->max_conns && n->handshakes.head) {
                        snprintf(why, sizeof why, "its handshake gives way: %zu connections open, the most the "
                                 "descriptors allow", conns_open(n));
                        evict(n, n->handshakes.head, why);
                }
                if (n->handshakes.n >= handshakes_max(n)) {
                        snprintf(why, sizeof why, "its handshake gives way: %zu handshakes at once, the most there "
                                 "may be", n->handshakes.n);
                        evict(n, n->handshakes.head, why);
                }
                NetAddr *a = glean_strmap_get(n->net_addrs, text);
                if (a && a->handshakes.n >= per_addr_max(n)) {
                        snprintf(why, sizeof why, "its handshake gives way: %zu handshakes at once from %s, the most "
                                 "NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS allows", a->handshakes.n, text);
                        evict(n, a->handshakes.head, why);
                }
                Conn *c = NULL;
                int r = conn_add(n, cfd, NULL, &c);
                if (r < 0) {
                        close(cfd);
                        refusal_log(n, LOG_WARNING, "refused a connection from", text, strerror(-r));
                        continue;
                }
                /* Whole frames are written: Nagle would only hold the AUTH back for an ACK. */
                int one = 1;
                setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                c->addr = key;
                snprintf(c->addr_text, sizeof c->addr_text, "%s", text);
                peer_ip_format((struct sockaddr *) &sa, c->peer_ip, sizeof c->peer_ip);
                (void) glean_authz_peer_sockaddr(&c->authz_peer, (struct sockaddr *) &sa, salen);
                if ((r = glean_secure_new(GLEAN_SECURE_NEGOTIATOR, &n->auth, &c->sec)) < 0 ||
                    (r = hs_enter(c, text)) < 0) {
                        refusal_log(n, LOG_WARNING, "refused a connection from", text, strerror(-r));
                        conn_free(c);
                        continue;
                }
                /* Our HELLO goes at once: the handshake takes one round trip. */
                conn_flush(c);
        }
        return 0;
}

/* ---- the unix socket's callbacks (common/usock.h) ---- */

static void on_user_dispatch(void *userdata) {
        nego_net_dispatched(userdata);
}

/* A local user may take a descriptor that a stranger's handshake holds. */
static bool on_user_room(void *userdata) {
        Nego *n = userdata;
        if (conns_open(n) < n->max_conns)
                return true;
        if (!n->handshakes.head) {
                listen_pause(n, 0);
                return false;
        }
        evict(n, n->handshakes.head, "its handshake gives way to a local user: the descriptors are all in use");
        return true;
}

/* Whether u has all the connections it may have: why then. */
static bool user_over(const Nego *n, const NetUser *u, const GleanPeer *peer, char *why, size_t len) {
        if (u->conns < per_user_max(n))
                return false;
        snprintf(why, len,
                 "%s has %zu connections open to the central manager, the most "
                 "NEGOTIATOR_MAX_CONNECTIONS_PER_USER allows",
                 peer->user, u->conns);
        return true;
}

static void on_user_refused(void *userdata, const GleanPeer *peer, const char *why) {
        Nego *n = userdata;
        if (!peer) {
                refusal_log(n, LOG_WARNING, "refused a local connection:", "(unknown peer)", why);
                return;
        }
        char name[96];
        snprintf(name, sizeof name, "%s (pid %d)", peer->user, (int) peer->pid);
        refusal_log(n, LOG_NOTICE, "refused a local connection of", name, why);
}

/* A user over its limit: one connection at a time waits for its Hello,
 * to answer it (on_user_open); the others hear it at once. */
static int on_user_admit(void *userdata, const GleanPeer *peer, char *why, size_t whylen) {
        Nego *n = userdata;
        NetUser *u = user_get(n, peer->user);
        int r = 0;
        if (!u) {
                snprintf(why, whylen, "out of memory");
                return -ENOMEM;
        }
        if (user_over(n, u, peer, why, whylen)) {
                if (u->refused > 0)
                        r = -EUSERS;
                else
                        on_user_refused(n, peer, why);
        }
        user_put(n, u);
        return r;
}

static int on_user_open(void *userdata, GleanUsockConn *uc) {
        Nego *n = userdata;
        const GleanPeer *peer = glean_usock_conn_peer(uc);
        NetUser *u = user_get(n, peer->user);
        Conn *c = NULL;
        char why[256];
        int r;
        if (!u)
                return -ENOMEM;
        bool over = user_over(n, u, peer, why, sizeof why);
        if ((r = conn_add(n, -1, uc, &c)) < 0) {
                user_put(n, u);
                return r;
        }
        c->peer = *peer;
        c->user = u;
        if (over && !(c->refused = strdup(why))) {
                /* uc is the server's to free. */
                c->user = NULL;
                c->uc = NULL;
                c->fd = -1;
                conn_free(c);
                user_put(n, u);
                return -ENOMEM;
        }
        if (over)
                u->refused++;
        else
                u->conns++;
        return 0;
}

static int on_user_frame(GleanUsockConn *uc, const char *payload, size_t len) {
        Conn *c = glean_usock_conn_data(uc);
        on_frame(c, payload, len);
        return c->dead ? -1 : 0;
}

static void on_user_gone(GleanUsockConn *uc, int err) {
        nego_conn_fail(glean_usock_conn_data(uc), err == -EPIPE ? NULL : strerror(-err));
}

static int on_user_writable(GleanUsockConn *uc) {
        Conn *c = glean_usock_conn_data(uc);
        conn_writable(c);
        return c->dead ? -1 : 0;
}

static void on_user_exhausted(void *userdata, int err) {
        listen_pause(userdata, err);
}

static const GleanUsockOps user_ops = {
        .dispatch = on_user_dispatch,
        .room = on_user_room,
        .admit = on_user_admit,
        .refused = on_user_refused,
        .exhausted = on_user_exhausted,
        .open = on_user_open,
        .frame = on_user_frame,
        .gone = on_user_gone,
        .writable = on_user_writable,
};

/* ---- listening ---- */

static int write_port_file(const char *path, unsigned port) {
        char text[16];
        int n = snprintf(text, sizeof text, "%u\n", port);
        return glean_write_file_replace(path, text, (size_t) n, 0666);
}

static int listen_tcp(Nego *n) {
        char port[16];
        snprintf(port, sizeof port, "%" PRId64, n->k.port);
        struct addrinfo hints = { .ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_socktype = SOCK_STREAM }, *res = NULL;
        const char *host = n->k.address && *n->k.address ? n->k.address : NULL;
        hints.ai_family = host ? AF_UNSPEC : AF_INET6;
        int g = getaddrinfo(host, port, &hints, &res);
        if (g != 0 && !host) {
                hints.ai_family = AF_INET;
                g = getaddrinfo(host, port, &hints, &res);
        }
        if (g != 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "NEGOTIATOR_ADDRESS %s: %s", host ? host : "(all)", gai_strerror(g));
                return -EADDRNOTAVAIL;
        }
        int r = -EADDRNOTAVAIL, fd = -1;
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
                if (fd < 0) {
                        r = -errno;
                        continue;
                }
                int one = 1, zero = 0;
                setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
                if (ai->ai_family == AF_INET6 && !host)
                        setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
                if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, SOMAXCONN) == 0) {
                        r = 0;
                        break;
                }
                r = -errno;
                close(fd);
                fd = -1;
        }
        freeaddrinfo(res);
        if (r < 0 && !host && hints.ai_family == AF_INET6) {
                /* No IPv6 here: all IPv4 addresses then. */
                struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t) n->k.port) };
                fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                int one = 1;
                if (fd >= 0)
                        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
                if (fd >= 0 && bind(fd, (struct sockaddr *) &sin, sizeof sin) == 0 && listen(fd, SOMAXCONN) == 0)
                        r = 0;
                else {
                        r = -errno;
                        if (fd >= 0)
                                close(fd);
                        fd = -1;
                }
        }
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot listen on %s port %s: %m", host ? host : "(all)", port);
        struct sockaddr_storage sa;
        socklen_t len = sizeof sa;
        getsockname(fd, (struct sockaddr *) &sa, &len);
        n->port = ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *) &sa)->sin6_port
                                                 : ((struct sockaddr_in *) &sa)->sin_port);
        n->tcp_fd = fd;
        if (n->k.port_file && (r = write_port_file(n->k.port_file, n->port)) < 0)
                return glean_log_errno(LOG_ERR, r, "cannot write the port to %s: %m", n->k.port_file);
        r = sd_event_add_io(n->event, &n->tcp_src, fd, EPOLLIN, on_accept_tcp, n);
        return r < 0 ? glean_log_errno(LOG_ERR, r, "cannot watch the TCP socket: %m") : 0;
}

static int listen_unix(Nego *n) {
        int r = glean_usock_new(n->event, n->k.socket_path, 0666, &user_ops, n, &n->usock);
        if (r < 0)
                return r;
        glean_usock_set_accepts_per_event(n->usock, ACCEPTS_PER_DISPATCH);
        return 0;
}

/* Descriptors open now (those of /proc/self/fd but its own). */
static size_t fds_open(void) {
        DIR *d = opendir("/proc/self/fd");
        size_t k = 0;
        if (!d)
                return 32;
        for (struct dirent *e; (e = readdir(d));)
                k += e->d_name[0] != '.';
        closedir(d);
        return k > 0 ? k - 1 : 0;
}

int nego_net_start(Nego *n) {
        int r;
        if ((r = glean_strmap_new(false, &n->conn_ids)) < 0 || (r = glean_strmap_new(true, &n->agent_conns)) < 0 ||
            (r = glean_strmap_new(false, &n->net_users)) < 0 || (r = glean_strmap_new(false, &n->net_addrs)) < 0)
                return r;
        if ((r = sd_event_add_defer(n->event, &n->reap, on_reap, n)) < 0 ||
            (r = sd_event_source_set_priority(n->reap, SD_EVENT_PRIORITY_IMPORTANT)) < 0 ||
            (r = sd_event_source_set_enabled(n->reap, SD_EVENT_OFF)) < 0 ||
            (r = sd_event_add_time(n->event, &n->accept_timer, CLOCK_MONOTONIC, UINT64_MAX, 100000, on_accept_timer,
                                   n)) < 0 ||
            (r = sd_event_source_set_enabled(n->accept_timer, SD_EVENT_OFF)) < 0)
                return glean_log_errno(LOG_ERR, r, "cannot add the connections' event sources: %m");
        n->refusals_window = mono_usec();
        if ((r = listen_tcp(n)) < 0 || (r = listen_unix(n)) < 0)
                return r;
        /* What the descriptors leave for connections. */
        size_t used = fds_open() + NET_FD_RESERVE;
        n->max_conns = n->fd_limit > used + 8 ? n->fd_limit - used : 8;
        glean_log(LOG_INFO, NULL, NULL, 0,
                  "connections: at most %zu (RLIMIT_NOFILE %zu), %zu of a user at once, %zu handshakes of an "
                  "address at once, %zu in all",
                  n->max_conns, n->fd_limit, per_user_max(n), per_addr_max(n), handshakes_max(n));
        return 0;
}

void nego_net_stop(Nego *n) {
        /* The last replies get a moment to go out. */
        for (Conn *c = n->conns.head; c; c = c->all_link.next)
                for (int i = 0; i < 50 && !c->dead && queued(c) > 0; i++)
                        if (glean_usock_fd_writable(c->fd, 10))
                                conn_flush(c);
        while (n->conns.head)
                conn_free(n->conns.head);
        n->tcp_src = sd_event_source_unref(n->tcp_src);
        n->usock = glean_usock_free(n->usock);
        n->reap = sd_event_source_unref(n->reap);
        n->accept_timer = sd_event_source_unref(n->accept_timer);
        if (n->tcp_fd >= 0)
                close(n->tcp_fd);
        n->tcp_fd = -1;
        /* Users with Waits only (relayed) are freed with the waiters; what is left here has no Wait. */
        const char *key;
        void *v;
        for (size_t pos = 0; n->net_users && glean_strmap_next(n->net_users, &pos, &key, &v);)
                free(v);
        glean_strmap_free(n->net_users);
        glean_strmap_free(n->net_addrs); /* empty: every handshake left with its connection */
        glean_strmap_free(n->conn_ids);
        glean_strmap_free(n->agent_conns);
        n->net_users = n->net_addrs = n->conn_ids = n->agent_conns = NULL;
}

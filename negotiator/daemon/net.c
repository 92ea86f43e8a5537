/* SPDX-License-Identifier: Apache-2.0 */
/*
 * net.c — glean-negotiator's sockets: agents over TCP, every frame sealed
 * after the pool-key handshake (common/secure.h), and local users over the
 * unix socket NEGOTIATOR_SOCKET (plain frames, the caller known by
 * SO_PEERCRED), both starting with the Hello of common/proto.h.
 *
 * A connection that fails (a wrong key, a frame that does not
 * authenticate, one too large or cut short, a handshake or Hello that does
 * not come within NEGOTIATOR_TIMEOUT) is closed with one log record saying
 * why and from where; failed handshakes count against their address
 * (common/ratelimit.h), and an address over the limit is refused at once
 * for a while. Nothing an unauthenticated peer sends reaches a handler.
 *
 * Output is queued and leaves from the post work only (nego_net_flush),
 * after the iteration's batch committed; a peer that lets more than
 * OUT_MAX bytes pile up is dropped. When the commit fails, what the batch
 * queued is taken back (nego_net_batch_end).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/file.h"
#include "daemon.h"

#define MAX_AGENT_CONNS 16384
#define MAX_USER_CONNS 1024
#define OUT_MAX (256u * 1024 * 1024)

static uint64_t mono_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ULL + (uint64_t) ts.tv_nsec / 1000;
}

Conn *nego_conn_by_id(Nego *n, uint64_t id) {
        for (Conn *c = n->conns; c; c = c->next)
                if (c->id == id && !c->dead)
                        return c;
        return NULL;
}

Conn *nego_agent_conn(Nego *n, const char *machine) {
        if (!machine)
                return NULL;
        for (Conn *c = n->conns; c; c = c->next)
                if (c->agent && !c->dead && c->machine && strcasecmp(c->machine, machine) == 0)
                        return c;
        return NULL;
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

void nego_conn_fail(Conn *c, const char *why) {
        if (c->dead)
                return;
        if (why) {
                char name[160];
                GleanLogField f[] = { { "GLEAN_PEER", conn_name(c, name, sizeof name) }, { "GLEAN_REASON", why } };
                glean_log(c->tcp ? LOG_NOTICE : LOG_INFO, c->tcp ? MESSAGE_ID_REFUSED : NULL, f, 2,
                          "closing the connection of %s: %s", name, why);
        }
        c->dead = true;
}

/* A handshake that failed: logged with the address, counted against it. */
static void handshake_failed(Conn *c, int err) {
        Nego *n = c->nego;
        uint64_t until = 0;
        bool banned = glean_ratelimit_fail(n->ratelimit, &c->addr, mono_usec(), &until);
        const char *why = glean_secure_reason(c->sec);
        char reason[512];
        snprintf(reason, sizeof reason, "%s%s", why && *why ? why : strerror(-err),
                 banned ? "; too many failed handshakes: the address is refused for a while" : "");
        GleanLogField f[] = { { "GLEAN_PEER", c->addr_text }, { "GLEAN_REASON", reason } };
        glean_log(LOG_WARNING, MESSAGE_ID_REFUSED, f, 2, "refused a connection from %s: %s", c->addr_text, reason);
        /* Once, without waiting: our AUTH tells a peer with another key that it is the key. */
        glean_secure_flush(c->sec, c->fd);
        c->dead = true;
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
        if (c->dead)
                return -EPIPE;
        if (len == 0 || len > GLEAN_FRAME_MAX) {
                glean_log(LOG_ERR, NULL, NULL, 0, "a message of %zu bytes does not fit a frame; not sent", len);
                return -EMSGSIZE;
        }
        int r = 0;
        if (c->tcp) {
                const void *p;
                if (glean_secure_output(c->sec, &p) + len > OUT_MAX)
                        r = -ENOBUFS;
                else
                        r = glean_secure_seal(c->sec, text, len);
        } else
                r = glean_outq_push(&c->out, text, len, OUT_MAX);
        if (r == -ENOBUFS)
                nego_conn_fail(c, "it does not read its messages");
        else if (r < 0)
                nego_conn_fail(c, strerror(-r));
        return r;
}

/* Sends what c has queued as far as the socket takes it. */
static void conn_flush(Conn *c) {
        if (c->dead)
                return;
        bool left = false;
        if (c->tcp) {
                int r = glean_secure_flush(c->sec, c->fd);
                if (r < 0) {
                        nego_conn_fail(c, glean_secure_reason(c->sec));
                        return;
                }
                left = r == 0;
        } else {
                int r = glean_outq_flush(&c->out, c->fd);
                if (r < 0) {
                        nego_conn_fail(c, strerror(-r));
                        return;
                }
                left = r == 0;
        }
        if (left != c->flushing) {
                c->flushing = left;
                sd_event_source_set_io_events(c->src, left ? EPOLLIN | EPOLLOUT : EPOLLIN);
        }
}

static void conn_free(Conn *c) {
        Nego *n = c->nego;
        for (Conn **pp = &n->conns; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                        *pp = c->next;
                        break;
                }
        if (c->tcp)
                n->n_agents -= c->agent ? 1 : 0;
        else
                n->n_users--;
        sd_event_source_unref(c->src);
        sd_event_source_unref(c->timer);
        glean_secure_free(c->sec);
        glean_frame_reader_free(c->reader);
        if (c->fd >= 0)
                close(c->fd);
        glean_outq_clear(&c->out);
        free(c->batch_ids);
        free(c->machine);
        free(c);
}

void nego_net_flush(Nego *n) {
        /* The dead first: what their going changes (claims, waiting users) is queued before the flush. */
        for (Conn *c = n->conns, *next; c; c = next) {
                next = c->next;
                if (!c->dead)
                        continue;
                if (c->agent)
                        nego_agent_gone(c);
                if (!c->tcp)
                        nego_user_gone(c);
                conn_free(c);
        }
        for (Conn *c = n->conns; c; c = c->next)
                conn_flush(c);
}

/* ---- batches ---- */

static size_t queued(const Conn *c) {
        const void *p;
        return c->tcp ? (c->sec ? glean_secure_output(c->sec, &p) : 0) : glean_outq_size(&c->out);
}

void nego_net_batch_begin(Nego *n) {
        for (Conn *c = n->conns; c; c = c->next) {
                c->out_mark = queued(c);
                c->n_batch_ids = 0;
        }
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
        for (Conn *c = n->conns; c; c = c->next) {
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
                if (taken)
                        glean_outq_truncate(&c->out, c->out_mark);
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

/* ---- the Hello ---- */

static int on_hello(Conn *c, const ClassAd *msg) {
        Nego *n = c->nego;
        char why[256] = "";
        ClassAd *reply = NULL;
        if (glean_hello_check_as(msg, "central manager", why, sizeof why) < 0) {
                if (glean_msg_reply(msg, false, why, &reply) >= 0)
                        nego_send(c, reply);
                classad_free(reply);
                nego_conn_fail(c, why);
                return -EPROTO;
        }
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
                        if (glean_msg_reply(msg, false, why, &reply) >= 0)
                                nego_send(c, reply);
                        classad_free(reply);
                        nego_conn_fail(c, why);
                        return -EPROTO;
                }
                /* A new connection of the same agent replaces the old one. */
                Conn *old = nego_agent_conn(n, machine);
                if (old)
                        nego_conn_fail(old, "the agent connected again");
                int64_t interval = 0;
                classad_eval_int(msg, "UpdateInterval", GLEAN_CA_MODE, &interval);
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
        sd_event_source_set_enabled(c->timer, SD_EVENT_OFF);
        if (c->agent) {
                GleanLogField f[] = { { "GLEAN_MACHINE", c->machine }, { "GLEAN_PEER", c->addr_text } };
                glean_log(LOG_INFO, NULL, f, 2, "agent %s connected from %s", c->machine, c->addr_text);
                nego_agent_message(c, msg, GLEAN_CMD_HELLO);
        }
        return r;
}

/* ---- frames ---- */

static void on_frame(Conn *c, const char *payload, size_t len) {
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
                        c->established = true;
                        glean_ratelimit_forget(c->nego->ratelimit, &c->addr);
                }
                if (r == 0)
                        return;
                if (r < 0) {
                        if (!c->established)
                                handshake_failed(c, r);
                        else if (r == -EPIPE && !strstr(glean_secure_reason(c->sec), "middle of a frame")) {
                                GleanLogField f[] = { { "GLEAN_MACHINE", c->machine ? c->machine : "" } };
                                glean_log(LOG_INFO, NULL, f, 1, "%s%s closed its connection",
                                          c->machine ? "agent " : "", c->machine ? c->machine : c->addr_text);
                                c->dead = true;
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

static void read_unix(Conn *c) {
        for (;;) {
                char *payload = NULL;
                size_t len = 0;
                int r = glean_frame_read(c->reader, c->fd, &payload, &len);
                if (r == 0)
                        return;
                if (r < 0) {
                        nego_conn_fail(c, r == -EPIPE ? NULL : strerror(-r));
                        c->dead = true;
                        return;
                }
                on_frame(c, payload, len);
                free(payload);
                if (c->dead)
                        return;
        }
}

static int on_conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        Conn *c = userdata;
        if (c->dead)
                return 0;
        /* Not while a batch is open: what it queued waits for its commit
         * (the post work flushes, and asks for EPOLLOUT again if need be). */
        if ((revents & EPOLLOUT) && !c->nego->in_batch)
                conn_flush(c);
        else if (revents & EPOLLOUT) {
                c->flushing = false;
                sd_event_source_set_io_events(c->src, EPOLLIN);
        }
        if (!c->dead && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))) {
                if (c->tcp)
                        read_tcp(c);
                else
                        read_unix(c);
        }
        if (c->dead)
                sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
        return 0;
}

static int on_conn_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Conn *c = userdata;
        if (c->dead || c->hello)
                return 0;
        if (c->tcp && !c->established) {
                int r = glean_secure_expire(c->sec);
                handshake_failed(c, r < 0 ? r : -ETIMEDOUT);
        } else {
                char why[64];
                snprintf(why, sizeof why, "no Hello within %" PRId64 " s", c->nego->k.timeout);
                nego_conn_fail(c, why);
        }
        sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
        return 0;
}

static int conn_add(Nego *n, int fd, bool tcp, Conn **ret) {
        Conn *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        c->nego = n;
        c->fd = fd;
        c->tcp = tcp;
        c->id = n->next_conn++;
        int r = sd_event_add_io(n->event, &c->src, fd, EPOLLIN, on_conn_io, c);
        if (r >= 0)
                r = sd_event_add_time_relative(n->event, &c->timer, CLOCK_MONOTONIC,
                                               (uint64_t) n->k.timeout * 1000000ULL, 100000, on_conn_timer, c);
        if (r < 0) {
                sd_event_source_unref(c->src);
                free(c);
                return r;
        }
        c->next = n->conns;
        n->conns = c;
        if (!tcp)
                n->n_users++;
        *ret = c;
        return 0;
}

static int on_accept_tcp(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        Nego *n = userdata;
        for (;;) {
                struct sockaddr_storage sa;
                socklen_t salen = sizeof sa;
                int cfd = accept4(fd, (struct sockaddr *) &sa, &salen, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (cfd < 0)
                        return 0;
                GleanAddrKey key;
                char text[GLEAN_ADDR_KEY_STRLEN];
                if (glean_addr_key_from_sockaddr((struct sockaddr *) &sa, salen, &key) < 0) {
                        close(cfd);
                        continue;
                }
                glean_addr_key_format(&key, text);
                uint64_t until = 0;
                if (!glean_ratelimit_allow(n->ratelimit, &key, mono_usec(), &until)) {
                        GleanLogField f[] = { { "GLEAN_PEER", text },
                                              { "GLEAN_REASON", "too many failed handshakes" } };
                        glean_log(LOG_NOTICE, MESSAGE_ID_REFUSED, f, 2,
                                  "refused a connection from %s: too many failed handshakes (for %" PRIu64 " s more)",
                                  text, (until - mono_usec()) / 1000000 + 1);
                        close(cfd);
                        continue;
                }
                size_t count = 0;
                for (Conn *c = n->conns; c; c = c->next)
                        count += c->tcp;
                Conn *c = NULL;
                int r = count >= MAX_AGENT_CONNS ? -EMFILE : conn_add(n, cfd, true, &c);
                if (r >= 0)
                        r = glean_secure_new(GLEAN_SECURE_NEGOTIATOR, &n->key, &c->sec);
                if (r < 0) {
                        GleanLogField f[] = { { "GLEAN_PEER", text } };
                        glean_log(LOG_WARNING, MESSAGE_ID_REFUSED, f, 1, "refused a connection from %s: %s", text,
                                  r == -EMFILE ? "too many connections" : strerror(-r));
                        if (c)
                                c->dead = true;
                        else
                                close(cfd);
                        continue;
                }
                c->addr = key;
                snprintf(c->addr_text, sizeof c->addr_text, "%s", text);
                /* Our HELLO goes at once: the handshake takes one round trip. */
                conn_flush(c);
        }
}

static int on_accept_unix(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        Nego *n = userdata;
        for (;;) {
                int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (cfd < 0)
                        return 0;
                GleanPeer peer;
                Conn *c = NULL;
                int r = glean_sock_peer(cfd, &peer);
                if (r >= 0 && n->n_users >= MAX_USER_CONNS)
                        r = -EMFILE;
                if (r >= 0)
                        r = conn_add(n, cfd, false, &c);
                if (r >= 0)
                        r = glean_frame_reader_new(GLEAN_FRAME_MAX, &c->reader);
                if (r < 0) {
                        glean_log(LOG_WARNING, NULL, NULL, 0, "refused a local connection: %s",
                                  r == -EMFILE ? "too many connections" : strerror(-r));
                        if (c)
                                c->dead = true;
                        else
                                close(cfd);
                        continue;
                }
                c->peer = peer;
        }
}

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
        char *dir = strdup(n->k.socket_path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
                        int r = glean_log_errno(LOG_ERR, errno, "cannot create %s: %m", dir);
                        free(dir);
                        return r;
                }
        }
        free(dir);
        int r = glean_sock_listen_unix(n->k.socket_path, 0666, &n->unix_fd);
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot listen on %s: %m", n->k.socket_path);
        r = sd_event_add_io(n->event, &n->unix_src, n->unix_fd, EPOLLIN, on_accept_unix, n);
        return r < 0 ? glean_log_errno(LOG_ERR, r, "cannot watch %s: %m", n->k.socket_path) : 0;
}

int nego_net_start(Nego *n) {
        int r = listen_tcp(n);
        if (r >= 0)
                r = listen_unix(n);
        return r;
}

void nego_net_stop(Nego *n) {
        /* The last replies get a moment to go out. */
        for (Conn *c = n->conns; c; c = c->next)
                for (int i = 0; i < 50 && !c->dead && (c->tcp ? glean_secure_output(c->sec, &(const void *){ 0 }) > 0
                                                               : glean_outq_size(&c->out) > 0);
                     i++) {
                        struct pollfd p = { .fd = c->fd, .events = POLLOUT };
                        if (poll(&p, 1, 10) > 0)
                                conn_flush(c);
                }
        while (n->conns) {
                n->conns->dead = true;
                conn_free(n->conns);
        }
        n->tcp_src = sd_event_source_unref(n->tcp_src);
        n->unix_src = sd_event_source_unref(n->unix_src);
        if (n->tcp_fd >= 0)
                close(n->tcp_fd);
        if (n->unix_fd >= 0) {
                close(n->unix_fd);
                unlink(n->k.socket_path);
        }
        n->tcp_fd = n->unix_fd = -1;
}

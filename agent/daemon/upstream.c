/* SPDX-License-Identifier: Apache-2.0 */
/*
 * upstream.c — glean-agent's persistent connection to the central manager
 * (COLLECTOR_HOST): dialled over TCP from the event loop (the name
 * resolved in a thread, a non-blocking connect), the pool's sealed
 * handshake as the agent (common/secure.h, the key of POOL_KEY_FILE), then
 * Hello both ways, and from then on sealed messages both ways:
 *
 *   up    Hello (Peer, Machine, AgentStartTime, UpdateInterval), SlotUpdate
 *         of every slot at once and on every change and UPDATE_INTERVAL
 *         (with ClaimId when the claim is the manager's), JobExit and Event
 *         of the manager's claims, replies, relayed users' requests
 *   down  the commands of the slots (as root would send them on the unix
 *         socket), replies to relayed requests
 *
 * The claims the manager makes belong to one Conn (up->conn) that outlives
 * every TCP connection: when the connection goes, the claims run on under
 * their leases. JobExits and the ends of claims carry a RequestId of their
 * own and are kept until the manager's Reply to it, which it sends once
 * what the message changed is committed to its database; on reconnection
 * the slots are advertised again, with their ClaimIds, before every
 * message still kept is sent again, in order; they are kept as files too
 * (kept.c), so that an agent killed or stopped before the acknowledgement
 * sends them again when it is started. Reconnection waits 1 s,
 * doubling up to NEGOTIATOR_RECONNECT_MAX, each wait +-50% at random; a
 * connection that gets as far as the manager's Hello starts the back-off
 * over.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/timer.h"
#include "common/secure.h"
#include "daemon.h"

#define HANDSHAKE_TIMEOUT_USEC (30ull * 1000000) /* connect, sealed handshake and Hello, each attempt */
#define OUT_MAX (64u * 1024 * 1024)             /* sealed bytes the manager may leave unread */
#define KEPT_MAX 4096u                          /* JobExits and claim ends not yet acknowledged */

typedef enum UpState {
        UP_WAIT,        /* until the timer: the next attempt */
        UP_RESOLVING,   /* the name, in a thread */
        UP_CONNECTING,  /* connect() in progress */
        UP_HANDSHAKE,   /* the sealed handshake */
        UP_HELLO,       /* our Hello sent, the manager's awaited */
        UP_READY,
} UpState;

/* A message that must reach the manager (a JobExit, the end of a claim):
 * kept until the manager's Reply to its RequestId, which says it took it
 * and committed what it changed. A socket that took its bytes says
 * nothing: the manager may die before its commit. */
typedef struct Kept {
        struct Kept *next;
        char *text;             /* with its RequestId */
        size_t len;
        int64_t id;             /* its RequestId */
        uint64_t seq;           /* its file's number (kept.c) */
        bool sealed;            /* sealed on this connection */
} Kept;

struct Upstream {
        Agent *agent;
        Conn conn;              /* what the manager's claims hold (s->claimant) */
        char *host, *port;
        char *key_path;         /* POOL_KEY_FILE */
        char *cred_path;        /* SEC_TOKEN_DIRECTORY/machine: our token and our own key */
        char *manager_key_path; /* SEC_TOKEN_MANAGER_KEY_FILE: the central manager's public key, pinned */
        unsigned methods_cfg;   /* SEC_DEFAULT_AUTHENTICATION_METHODS (0: what this machine holds) */
        /* Between their loading and the handshake's start: */
        unsigned methods;       /* what we offer this time */
        GleanPoolKey key;
        GleanCredential cred;
        uint8_t manager_pk[32];
        double backoff, backoff_max; /* seconds */
        UpState state;
        int fd;
        sd_event_source *io, *timer, *fail_src, *resolve_src;
        int resolve_fd;
        struct addrinfo *addrs, *cur;
        char addr[INET6_ADDRSTRLEN + 16]; /* "192.0.2.1:9628", "[2001:db8::1]:9628" */
        GleanSecure *sec;
        Kept *kept, **kept_tail;
        size_t n_kept;
        uint64_t kept_next;     /* the next kept file's number */
        bool failing;
        char fail_reason[600];
        char last_error[600];   /* the previous attempt's failure: the same again logs quietly */
};

static void up_fail(Upstream *up, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int on_timer(sd_event_source *src, uint64_t usec, void *userdata);

static uint64_t mono_usec(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000ull + (uint64_t) ts.tv_nsec / 1000;
}

static void arm_timer(Upstream *up, uint64_t usec_from_now) {
        int r = glean_timer_arm(up->agent->event, &up->timer, CLOCK_MONOTONIC, mono_usec() + usec_from_now, 10000,
                                on_timer, up);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the timer of the connection to the central manager: %m");
}

/* ---- what we prove ---- */

static void clear_auth(Upstream *up) {
        glean_pool_key_clear(&up->key);
        glean_credential_clear(&up->cred);
        up->methods = 0;
}

/* Loads what this attempt offers: the methods configured, or (unset) our
 * token when the machine has a credential, else the pool key. A method
 * configured whose files cannot be read is an error: why says which. */
static int load_auth(Upstream *up, char *why, size_t whylen) {
        unsigned want = up->methods_cfg;
        char because[512];
        int r;

        if (!want)
                want = access(up->cred_path, F_OK) == 0 ? GLEAN_SECURE_TOKEN : GLEAN_SECURE_POOL_KEY;
        if (want & GLEAN_SECURE_TOKEN) {
                if ((r = glean_credential_load(up->cred_path, &up->cred, because, sizeof because)) < 0) {
                        snprintf(why, whylen, "no token: %s (glean token create on the central manager, glean token "
                                 "install here)", because);
                        clear_auth(up);
                        return r;
                }
                if ((r = glean_manager_key_load(up->manager_key_path, up->manager_pk, because, sizeof because)) < 0) {
                        snprintf(why, whylen, "no central manager's key to pin: %s", because);
                        clear_auth(up);
                        return r;
                }
        }
        if ((want & GLEAN_SECURE_POOL_KEY) && (r = glean_pool_key_load(up->key_path, &up->key, because,
                                                                       sizeof because)) < 0) {
                snprintf(why, whylen, "no pool key: %s", because);
                clear_auth(up);
                return r;
        }
        up->methods = want;
        return 0;
}

/* ---- the end of a connection ---- */

static void close_connection(Upstream *up) {
        if (up->state >= UP_HANDSHAKE)
                agent_netwatch_disconnected(up->agent);
        up->io = sd_event_source_disable_unref(up->io);
        up->resolve_src = sd_event_source_disable_unref(up->resolve_src);
        if (up->resolve_fd >= 0)
                close(up->resolve_fd); /* the thread's answer, if still to come, is dropped by it */
        up->resolve_fd = -1;
        if (up->fd >= 0)
                close(up->fd);
        up->fd = -1;
        glean_secure_free(up->sec);
        up->sec = NULL;
        clear_auth(up);
        if (up->addrs)
                freeaddrinfo(up->addrs);
        up->addrs = up->cur = NULL;
        for (Kept *k = up->kept; k; k = k->next)
                k->sealed = false; /* not acknowledged: sent again on the next connection */
}

static unsigned manager_claims(const Upstream *up) {
        unsigned n = 0;
        for (const Slot *s = up->agent->slots; s; s = s->next)
                n += s->claimant == &up->conn && s->claim_id[0];
        return n;
}

static double jitter(double base) {
        uint32_t v;
        if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t) sizeof v)
                v = (uint32_t) rand();
        return base * (0.5 + (double) v / 4294967296.0); /* +-50% */
}

/* From the event loop, never under a caller: logs why, closes, fails the
 * relayed requests in flight and waits for the next attempt. */
static int on_fail(sd_event_source *src, void *userdata) {
        (void) src;
        Upstream *up = userdata;
        Agent *a = up->agent;
        bool was_ready = up->state == UP_READY;
        double wait = jitter(up->backoff);
        if (wait > up->backoff_max)
                wait = up->backoff_max; /* a ceiling */
        char claims[160] = "";
        unsigned n = manager_claims(up);
        if (n)
                snprintf(claims, sizeof claims, "; the %u claim%s it holds run%s on under %s lease%s",
                         n, n == 1 ? "" : "s", n == 1 ? "s" : "", n == 1 ? "its" : "their",
                         n == 1 ? "" : "s");
        GleanLogField f[] = { { "GLEAN_MANAGER", up->addr[0] ? up->addr : up->host },
                              { "GLEAN_REASON", up->fail_reason } };
        /* Every failure is logged; the same failure as the attempt before
         * it quietly (a wrong key retried every minute is one warning). */
        int prio = was_ready || strcmp(up->fail_reason, up->last_error) != 0 ? LOG_WARNING : LOG_INFO;
        glean_log(prio, NULL, f, 2, "%s the central manager at %s: %s%s; trying again in %.1f s",
                  was_ready ? "lost the connection to" : "cannot connect to", up->addr[0] ? up->addr : up->host,
                  up->fail_reason, claims, wait);
        snprintf(up->last_error, sizeof up->last_error, "%s", was_ready ? "" : up->fail_reason);
        close_connection(up);
        up->state = UP_WAIT;
        up->failing = false;
        up->backoff = up->backoff * 2 > up->backoff_max ? up->backoff_max : up->backoff * 2;
        arm_timer(up, (uint64_t) (wait * 1e6));
        agent_relay_upstream_lost(a);
        return 0;
}

static void up_vfail(Upstream *up, const char *fmt, va_list ap) {
        if (up->failing)
                return;
        vsnprintf(up->fail_reason, sizeof up->fail_reason, fmt, ap);
        up->failing = true;
        sd_event_source_set_enabled(up->fail_src, SD_EVENT_ONESHOT);
}

static void up_fail(Upstream *up, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        up_vfail(up, fmt, ap);
        va_end(ap);
}

void agent_upstream_fail(Agent *a, const char *fmt, ...) {
        if (!a->up || a->up->state == UP_WAIT || !a->up->fail_src)
                return;
        va_list ap;
        va_start(ap, fmt);
        up_vfail(a->up, fmt, ap);
        va_end(ap);
}

void agent_upstream_retry_now(Agent *a) {
        Upstream *up = a->up;
        if (!up || up->state != UP_WAIT || up->failing || !up->timer || a->shutting_down)
                return;
        int enabled = SD_EVENT_OFF;
        if (sd_event_source_get_enabled(up->timer, &enabled) < 0 || enabled == SD_EVENT_OFF)
                return; /* stopped */
        glean_log(LOG_INFO, NULL, NULL, 0, "the network changed: dialling the central manager now");
        up->backoff = 1;
        up->last_error[0] = 0;
        arm_timer(up, 0);
}

/* ---- sending ---- */

static void set_events(Upstream *up) {
        if (!up->io)
                return;
        const void *p;
        bool out = up->sec && glean_secure_output(up->sec, &p) > 0;
        sd_event_source_set_io_events(up->io, EPOLLIN | (out ? EPOLLOUT : 0));
}

/* Sends what the socket takes now. */
static void flush(Upstream *up) {
        if (!up->sec || up->fd < 0 || up->failing)
                return;
        int r = glean_secure_flush(up->sec, up->fd);
        if (r < 0) {
                up_fail(up, "%s", glean_secure_reason(up->sec));
                return;
        }
        set_events(up);
}

/* Seals text as the next frame: 0, or -errno (the connection then fails). */
static int seal(Upstream *up, const char *text, size_t len) {
        const void *p;
        if (len == 0 || len > GLEAN_FRAME_MAX)
                return -EMSGSIZE;
        if (glean_secure_output(up->sec, &p) + len > OUT_MAX) {
                up_fail(up, "it does not read its messages (%u MiB unsent)", OUT_MAX >> 20);
                return -ENOBUFS;
        }
        int r = glean_secure_seal(up->sec, text, len);
        if (r < 0) {
                up_fail(up, "cannot seal a message: %s", strerror(-r));
                return r;
        }
        return 0;
}

static int send_now(Upstream *up, const ClassAd *msg) {
        char *text = classad_unparse(msg);
        if (!text)
                return -ENOMEM;
        int r = seal(up, text, strlen(text));
        free(text);
        if (r >= 0)
                flush(up);
        return r;
}

/* Seals the kept messages not yet sealed on this connection, in order. */
static void send_kept(Upstream *up) {
        for (Kept *k = up->kept; k && !up->failing; k = k->next) {
                if (k->sealed)
                        continue;
                if (seal(up, k->text, k->len) < 0)
                        break;
                k->sealed = true;
        }
        flush(up);
}

static void kept_free(Kept *k) {
        if (!k)
                return;
        free(k->text);
        free(k);
}

/* The manager's Reply to a kept message: it is durable there (or, Ok =
 * false, will never be: said once). Whether reply was one. */
static bool kept_acknowledged(Upstream *up, const ClassAd *reply) {
        int64_t id = 0;
        if (classad_eval_int(reply, "RequestId", CA_MODE_OLD, &id) < 0)
                return false;
        Kept **pp = &up->kept;
        while (*pp && (*pp)->id != id)
                pp = &(*pp)->next;
        Kept *k = *pp;
        if (!k)
                return false;
        bool ok = false;
        classad_eval_bool(reply, "Ok", CA_MODE_OLD, &ok);
        if (!ok) {
                char *reason = NULL;
                classad_eval_string(reply, "Reason", CA_MODE_OLD, &reason);
                GleanLogField f[] = { { "GLEAN_MANAGER", up->addr }, { "GLEAN_REASON", reason ? reason : "" } };
                glean_log(LOG_ERR, NULL, f, 2, "the central manager at %s refused %s: %s; not sent again", up->addr,
                          k->text, reason ? reason : "no reason given");
                free(reason);
        }
        *pp = k->next;
        if (up->kept_tail == &k->next)
                up->kept_tail = pp;
        up->n_kept--;
        agent_kept_forget(up->agent, k->seq);
        kept_free(k);
        return true;
}

static bool must_arrive(const ClassAd *msg) {
        char *cmd = NULL;
        bool b = false, keep = false;
        if (classad_eval_string(msg, "Command", CA_MODE_OLD, &cmd) >= 0)
                keep = strcmp(cmd, "JobExit") == 0 ||
                       (strcmp(cmd, "Event") == 0 && classad_eval_bool(msg, "ClaimEnded", CA_MODE_OLD, &b) >= 0 && b);
        free(cmd);
        return keep;
}

/* msg with a RequestId of its own, as the kept message number seq, at the
 * end of the list. */
static int kept_append(Upstream *up, const ClassAd *msg, uint64_t seq, Kept **ret) {
        Kept *k = calloc(1, sizeof *k);
        ClassAd *copy = NULL;
        if (!k || classad_copy(msg, &copy) < 0) {
                free(k);
                return -ENOMEM;
        }
        k->seq = seq;
        /* Its own RequestId, from the relayed requests' series: the
         * manager's Reply to it is told apart from theirs. */
        k->id = ++up->agent->relay_next_id;
        if (classad_set_int(copy, "RequestId", k->id) < 0 || !(k->text = classad_unparse(copy))) {
                classad_free(copy);
                free(k);
                return -ENOMEM;
        }
        classad_free(copy);
        k->len = strlen(k->text);
        if (k->len > GLEAN_FRAME_MAX) {
                kept_free(k);
                return -EMSGSIZE;
        }
        if (up->n_kept >= KEPT_MAX) {
                /* One per claim at most can pile up; this many is a manager
                 * gone for good (or one that does not acknowledge). The
                 * oldest goes, said once each. */
                Kept *old = up->kept;
                up->kept = old->next;
                if (!up->kept)
                        up->kept_tail = &up->kept;
                up->n_kept--;
                glean_log(LOG_ERR, NULL, NULL, 0,
                          "more than %u job exits and claim ends wait for the central manager's acknowledgement: "
                          "dropping %s",
                          KEPT_MAX, old->text);
                agent_kept_forget(up->agent, old->seq);
                kept_free(old);
        }
        *up->kept_tail = k;
        up->kept_tail = &k->next;
        up->n_kept++;
        *ret = k;
        return 0;
}

static int keep(Upstream *up, const ClassAd *msg) {
        Kept *k;
        int r = kept_append(up, msg, up->kept_next++, &k);
        if (r < 0)
                return r;
        r = agent_kept_save(up->agent, k->seq, k->text, k->len);
        if (r < 0)
                glean_log_errno(LOG_WARNING, r,
                                "cannot keep a message for the central manager in %s/.glean-state/kept (%m): it is "
                                "kept in memory only, and lost if the agent stops before the manager has it",
                                up->agent->execute);
        if (up->state == UP_READY && !up->failing)
                send_kept(up);
        return 0;
}

/* A kept message an earlier run of the agent left (kept.c). */
static int kept_reload(void *userdata, uint64_t seq, const ClassAd *msg) {
        Upstream *up = userdata;
        Kept *k;
        if (!must_arrive(msg))
                return -EINVAL;
        return kept_append(up, msg, seq, &k);
}

int agent_upstream_send(Agent *a, const ClassAd *msg) {
        Upstream *up = a->up;
        if (!up)
                return -ENOTCONN;
        if (must_arrive(msg))
                return keep(up, msg);
        if (up->state != UP_READY || up->failing)
                return -ENOTCONN;
        return send_now(up, msg);
}

static int slot_update(Upstream *up, Slot *s) {
        ClassAd *msg = NULL;
        int r = glean_msg_new(GLEAN_CMD_SLOT_UPDATE, &msg);
        if (r >= 0)
                r = glean_msg_set_ad(msg, "SlotAd", s->ad);
        /* The manager's own claim id, so that a manager that restarted or
         * reconnected knows its claims again; never in the ad users see. */
        if (r >= 0 && s->claimant == &up->conn && s->claim_id[0])
                r = classad_set_string(msg, "ClaimId", s->claim_id);
        if (r >= 0)
                r = send_now(up, msg);
        classad_free(msg);
        return r;
}

void agent_upstream_publish(Agent *a, Slot *s) {
        Upstream *up = a->up;
        if (up && up->state == UP_READY && !up->failing && !s->release)
                slot_update(up, s);
}

/* ---- receiving ---- */

static void go_ready(Upstream *up) {
        Agent *a = up->agent;
        up->state = UP_READY;
        up->backoff = 1;
        up->last_error[0] = 0;
        sd_event_source_set_enabled(up->timer, SD_EVENT_OFF);
        agent_refresh_ads(a);
        unsigned n = 0;
        for (Slot *s = a->slots; s; s = s->next)
                n += !s->release;
        GleanLogField f[] = { { "GLEAN_MANAGER", up->addr } };
        glean_log(LOG_NOTICE, NULL, f, 1,
                  "connected to the central manager at %s: advertising %u slots (%u of its claims), then %zu "
                  "message%s kept for it (job exits, claim ends)",
                  up->addr, n, manager_claims(up), up->n_kept, up->n_kept == 1 ? "" : "s");
        /* Every slot (with the claim ids of its claims), then what happened
         * while it was away: the order in which it must learn them. */
        for (Slot *s = a->slots; s && !up->failing; s = s->next)
                if (!s->release)
                        slot_update(up, s);
        send_kept(up);
}

static void on_message(Upstream *up, const char *payload, size_t len) {
        Agent *a = up->agent;
        ClassAd *msg = NULL;
        GleanCommand cmd;
        char why[512];
        if (glean_msg_parse(payload, len, &msg, &cmd, why, sizeof why) < 0) {
                GleanLogField f[] = { { "GLEAN_MANAGER", up->addr } };
                glean_log(LOG_NOTICE, NULL, f, 1, "bad message from the central manager at %s: %s", up->addr, why);
                if (up->state != UP_READY) {
                        up_fail(up, "its Hello is not a valid message: %s", why);
                        return;
                }
                ClassAd *r = NULL;
                if (glean_msg_reply_invalid(payload, len, why, &r) >= 0)
                        send_now(up, r);
                classad_free(r);
                return;
        }
        if (up->state == UP_HELLO) {
                char *reason = NULL;
                if (cmd == GLEAN_CMD_HELLO && glean_hello_check_as(msg, "agent", why, sizeof why) >= 0)
                        go_ready(up);
                else if (cmd == GLEAN_CMD_HELLO)
                        up_fail(up, "%s", why);
                else if (cmd == GLEAN_CMD_REPLY && classad_eval_string(msg, "Reason", CA_MODE_OLD, &reason) >= 0)
                        up_fail(up, "it refused our Hello: %s", reason);
                else
                        up_fail(up, "it sent %s before its Hello", glean_command_name(cmd));
                free(reason);
        } else if (cmd == GLEAN_CMD_REPLY) {
                if (!kept_acknowledged(up, msg))
                        agent_relay_reply(a, msg);
        } else if (cmd != GLEAN_CMD_HELLO)
                agent_dispatch(&up->conn, msg, cmd); /* replies go up sealed (agent_conn_send) */
        classad_free(msg);
}

static void send_hello(Upstream *up) {
        Agent *a = up->agent;
        ClassAd *hello = NULL;
        up->state = UP_HELLO;
        if (glean_hello_new("glean-agent", &hello) < 0) {
                up_fail(up, "out of memory");
                return;
        }
        classad_set_string(hello, "Machine", a->machine.hostname);
        classad_set_int(hello, "AgentStartTime", a->start_time);
        classad_set_int(hello, "UpdateInterval", a->update_interval);
        if (agent_transfer_port(a) > 0)
                classad_set_int(hello, "TransferPort", agent_transfer_port(a)); /* where its jobs' files are served */
        send_now(up, hello);
        classad_free(hello);
}

static void read_frames(Upstream *up) {
        while (!up->failing) {
                char *payload = NULL;
                size_t len = 0;
                int r = glean_secure_read(up->sec, up->fd, &payload, &len);
                if (up->state == UP_HANDSHAKE && glean_secure_established(up->sec))
                        send_hello(up); /* before the frames that came with its AUTH */
                if (r == 0)
                        break;
                if (r < 0) {
                        /* What is queued still goes (our AUTH after a wrong
                         * proof tells the manager it is the key). */
                        (void) glean_secure_flush(up->sec, up->fd);
                        if (r == -EPIPE && up->state == UP_READY)
                                up_fail(up, "it closed the connection");
                        else
                                up_fail(up, "%s", glean_secure_reason(up->sec));
                        return;
                }
                on_message(up, payload, len);
                free(payload);
        }
        flush(up); /* our AUTH, replies */
}

/* ---- dialling ---- */

static int on_io(sd_event_source *src, int fd, uint32_t revents, void *userdata);
static void connect_next(Upstream *up);

static void format_addr(Upstream *up, const struct addrinfo *ai) {
        char host[INET6_ADDRSTRLEN] = "?";
        unsigned port = 0;
        if (ai->ai_family == AF_INET) {
                const struct sockaddr_in *in = (const void *) ai->ai_addr;
                inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
                port = ntohs(in->sin_port);
                snprintf(up->addr, sizeof up->addr, "%s:%u", host, port);
        } else {
                const struct sockaddr_in6 *in6 = (const void *) ai->ai_addr;
                inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
                port = ntohs(in6->sin6_port);
                snprintf(up->addr, sizeof up->addr, "[%s]:%u", host, port);
        }
}

/* TCP connected: the sealed handshake. */
static void start_handshake(Upstream *up) {
        GleanSecureAuth auth = { .methods = up->methods,
                                 .pool_key = &up->key,
                                 .manager_pk = up->manager_pk,
                                 .credential = &up->cred };
        int r = glean_secure_new(GLEAN_SECURE_AGENT, &auth, &up->sec);
        clear_auth(up);
        if (r < 0) {
                up_fail(up, "cannot start the handshake: %s", strerror(-r));
                return;
        }
        int on = 1, idle = 60, intvl = 10, cnt = 6;
        unsigned user_timeout = 120000;
        /* A manager that vanished (its machine off) is noticed within minutes. */
        (void) setsockopt(up->fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof on);
        (void) setsockopt(up->fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
        (void) setsockopt(up->fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof intvl);
        (void) setsockopt(up->fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof cnt);
        (void) setsockopt(up->fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout, sizeof user_timeout);
        (void) setsockopt(up->fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
        up->state = UP_HANDSHAKE;
        agent_netwatch_connected(up->agent, up->fd); /* MyAddress: this connection's local address */
        flush(up); /* our HELLO */
}

static int on_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        Upstream *up = userdata;
        if (up->failing)
                return 0;
        if (up->state == UP_CONNECTING) {
                int err = 0;
                socklen_t len = sizeof err;
                if (getsockopt(up->fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
                        err = errno;
                if (err == 0 && !(revents & (EPOLLERR | EPOLLHUP))) {
                        start_handshake(up);
                        return 0;
                }
                snprintf(up->fail_reason, sizeof up->fail_reason, "%s", strerror(err ? err : ECONNREFUSED));
                up->cur = up->cur->ai_next;
                connect_next(up);
                return 0;
        }
        if (revents & EPOLLOUT)
                flush(up);
        if (!up->failing && (revents & (EPOLLIN | EPOLLHUP | EPOLLERR)))
                read_frames(up);
        return 0;
}

/* connect() to the current address, else the next ones. */
static void connect_next(Upstream *up) {
        Agent *a = up->agent;
        for (; up->cur; up->cur = up->cur->ai_next) {
                format_addr(up, up->cur);
                up->io = sd_event_source_disable_unref(up->io);
                if (up->fd >= 0)
                        close(up->fd);
                up->fd = socket(up->cur->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
                if (up->fd < 0) {
                        snprintf(up->fail_reason, sizeof up->fail_reason, "socket: %s", strerror(errno));
                        continue;
                }
                int r = connect(up->fd, up->cur->ai_addr, up->cur->ai_addrlen);
                if (r < 0 && errno != EINPROGRESS) {
                        snprintf(up->fail_reason, sizeof up->fail_reason, "%s", strerror(errno));
                        continue;
                }
                r = sd_event_add_io(a->event, &up->io, up->fd, EPOLLOUT | EPOLLIN, on_io, up);
                if (r < 0) {
                        snprintf(up->fail_reason, sizeof up->fail_reason, "cannot watch the socket: %s", strerror(-r));
                        continue;
                }
                arm_timer(up, HANDSHAKE_TIMEOUT_USEC);
                up->state = UP_CONNECTING;
                return;
        }
        /* Every address failed: the reason of the last one. */
        char why[sizeof up->fail_reason];
        snprintf(why, sizeof why, "%s", up->fail_reason[0] ? up->fail_reason : "no address to try");
        up_fail(up, "%s", why);
}

static void got_addresses(Upstream *up, int err, struct addrinfo *res) {
        if (err) {
                if (res)
                        freeaddrinfo(res);
                up_fail(up, "cannot resolve %s: %s", up->host, gai_strerror(err));
                return;
        }
        up->addrs = up->cur = res;
        up->fail_reason[0] = 0;
        connect_next(up);
}

/* getaddrinfo() may wait for DNS: a thread of its own, which answers
 * through a pipe. When nobody reads any more (the pipe's read end closed),
 * it frees what it found. */
typedef struct Resolve {
        char *host, *port;
        int wfd;
} Resolve;

typedef struct ResolveAnswer {
        int err;
        struct addrinfo *res;
} ResolveAnswer;

static void *resolve_thread(void *p) {
        Resolve *rs = p;
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_ADDRCONFIG };
        ResolveAnswer ans = { 0 };
        ans.err = getaddrinfo(rs->host, rs->port, &hints, &ans.res);
        if (write(rs->wfd, &ans, sizeof ans) != (ssize_t) sizeof ans && ans.res)
                freeaddrinfo(ans.res);
        close(rs->wfd);
        free(rs->host);
        free(rs->port);
        free(rs);
        return NULL;
}

static int on_resolved(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        Upstream *up = userdata;
        ResolveAnswer ans = { .err = EAI_SYSTEM };
        ssize_t n = read(fd, &ans, sizeof ans);
        if (n < 0 && errno == EAGAIN)
                return 0;
        up->resolve_src = sd_event_source_disable_unref(up->resolve_src);
        close(up->resolve_fd);
        up->resolve_fd = -1;
        if (n != (ssize_t) sizeof ans)
                ans = (ResolveAnswer){ .err = EAI_SYSTEM };
        got_addresses(up, ans.err, ans.err ? NULL : ans.res);
        return 0;
}

static void resolve(Upstream *up) {
        /* A numeric address needs no thread. */
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
        struct addrinfo *res = NULL;
        if (getaddrinfo(up->host, up->port, &hints, &res) == 0) {
                got_addresses(up, 0, res);
                return;
        }
        int p[2];
        Resolve *rs = calloc(1, sizeof *rs);
        if (!rs || pipe2(p, O_CLOEXEC) < 0) {
                free(rs);
                up_fail(up, "cannot resolve %s: %s", up->host, strerror(errno ? errno : ENOMEM));
                return;
        }
        fcntl(p[0], F_SETFL, O_NONBLOCK);
        rs->host = strdup(up->host);
        rs->port = strdup(up->port);
        rs->wfd = p[1];
        pthread_attr_t attr;
        pthread_t t;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        int r = rs->host && rs->port ? pthread_create(&t, &attr, resolve_thread, rs) : ENOMEM;
        pthread_attr_destroy(&attr);
        if (r != 0) {
                close(p[0]);
                close(p[1]);
                free(rs->host);
                free(rs->port);
                free(rs);
                up_fail(up, "cannot resolve %s: %s", up->host, strerror(r));
                return;
        }
        up->resolve_fd = p[0];
        up->state = UP_RESOLVING;
        if (sd_event_add_io(up->agent->event, &up->resolve_src, p[0], EPOLLIN, on_resolved, up) < 0)
                up_fail(up, "cannot watch the resolver");
}

static int on_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Upstream *up = userdata;
        if (up->failing)
                return 0;
        switch (up->state) {
        case UP_WAIT: {
                /* The keys first: without them, dialling would only count as
                 * a failed handshake against this address at the manager.
                 * Read at every attempt: a token installed is used next. */
                char why[1200];
                up->addr[0] = 0;
                up->fail_reason[0] = 0;
                if (load_auth(up, why, sizeof why) < 0)
                        up_fail(up, "%s", why);
                else
                        resolve(up);
                break;
        }
        case UP_CONNECTING:
                snprintf(up->fail_reason, sizeof up->fail_reason, "connection timed out");
                up->cur = up->cur->ai_next;
                connect_next(up);
                break;
        case UP_HANDSHAKE:
        case UP_HELLO:
                if (up->sec)
                        glean_secure_expire(up->sec);
                up_fail(up, "it did not complete the handshake within %llu s",
                        (unsigned long long) (HANDSHAKE_TIMEOUT_USEC / 1000000));
                break;
        default:
                break;
        }
        return 0;
}

/* ---- setup ---- */

/* "host", "host:port", "[v6]:port", "v6" into host and port. */
static int split_host_port(const char *spec, const char *def_port, char **ret_host, char **ret_port) {
        const char *colon = strrchr(spec, ':');
        char *host = NULL, *port = NULL;
        if (spec[0] == '[') {
                const char *end = strchr(spec, ']');
                if (!end || (end[1] && end[1] != ':') || end == spec + 1)
                        return -EINVAL;
                host = strndup(spec + 1, (size_t) (end - spec - 1));
                port = strdup(end[1] ? end + 2 : def_port);
        } else if (colon && strchr(spec, ':') == colon) {
                host = strndup(spec, (size_t) (colon - spec));
                port = strdup(colon + 1);
        } else {
                host = strdup(spec); /* a bare IPv6 address has several colons */
                port = strdup(def_port);
        }
        if (!host || !port) {
                free(host);
                free(port);
                return -ENOMEM;
        }
        char *end = NULL;
        long v = strtol(port, &end, 10);
        if (!*host || !*port || *end || v <= 0 || v > 65535) {
                free(host);
                free(port);
                return -EINVAL;
        }
        *ret_host = host;
        *ret_port = port;
        return 0;
}

static void upstream_free_paths(Upstream *up) {
        free(up->key_path);
        free(up->cred_path);
        free(up->manager_key_path);
        up->key_path = up->cred_path = up->manager_key_path = NULL;
}

int agent_upstream_setup(Agent *a) {
        char *spec = NULL, *port = NULL, *dir = NULL;
        int r = agent_knob_string(a->cfg, "COLLECTOR_HOST", NULL, &spec);
        if (r < 0)
                return r;
        if (!spec) {
                glean_log(LOG_NOTICE, NULL, NULL, 0, "no central manager (COLLECTOR_HOST is empty): standalone");
                return 0;
        }
        Upstream *up = calloc(1, sizeof *up);
        if (!up || (r = agent_knob_string(a->cfg, "COLLECTOR_PORT", "9628", &port)) < 0 ||
            (r = agent_knob_string(a->cfg, "POOL_KEY_FILE", "/etc/glean/pool.key", &up->key_path)) < 0 ||
            (r = agent_knob_string(a->cfg, "SEC_TOKEN_MANAGER_KEY_FILE", "/etc/glean/manager.pub",
                                   &up->manager_key_path)) < 0 ||
            (r = agent_knob_string(a->cfg, "SEC_TOKEN_DIRECTORY", "/etc/glean/tokens.d", &dir)) < 0 ||
            asprintf(&up->cred_path, "%s/machine", dir) < 0) {
                free(spec);
                free(dir);
                upstream_free_paths(up);
                free(up);
                return r < 0 ? r : -ENOMEM;
        }
        free(dir);
        ConfigError cerr = { 0 };
        if ((r = config_get_auth_methods(a->cfg, &up->methods_cfg, &cerr)) < 0) {
                char *msg = config_error_format(&cerr);
                glean_log(LOG_ERR, NULL, NULL, 0, "%s", msg ? msg : cerr.msg);
                free(msg);
                free(spec);
                upstream_free_paths(up);
                free(up);
                return r;
        }
        r = split_host_port(spec, port, &up->host, &up->port);
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "COLLECTOR_HOST = %s: not host, host:port or [address]:port%s", spec,
                          r == -EINVAL ? " (a port is 1 to 65535)" : "");
                free(spec);
                free(port);
                upstream_free_paths(up);
                free(up);
                return r;
        }
        free(spec);
        free(port);
        int64_t max = 60;
        ConfigError err;
        if (config_get_int(a->cfg, "NEGOTIATOR_RECONNECT_MAX", &max, &err) < 0 || max < 1)
                max = 60;
        up->agent = a;
        up->backoff = 1;
        up->backoff_max = (double) max;
        up->fd = up->resolve_fd = -1;
        up->kept_tail = &up->kept;
        up->kept_next = 1;
        r = agent_kept_load(a, kept_reload, up, &up->kept_next);
        if (r > 0)
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "%d job exit%s and claim end%s an earlier run kept for the central manager: sent after the "
                          "slots",
                          r, r == 1 ? "" : "s", r == 1 ? "" : "s");
        else if (r < 0)
                glean_log_errno(LOG_WARNING, r, "cannot read %s/.glean-state/kept: %m", a->execute);
        up->state = UP_WAIT;
        up->conn.agent = a;
        up->conn.uc = NULL; /* its frames go sealed, upstream */
        up->conn.upstream = true;
        up->conn.hello = true;
        up->conn.peer.uid = 0; /* the pool: it may claim any slot, run jobs as their Owner */
        snprintf(up->conn.peer.user, sizeof up->conn.peer.user, "central-manager");
        r = sd_event_add_defer(a->event, &up->fail_src, on_fail, up);
        if (r >= 0)
                r = sd_event_source_set_enabled(up->fail_src, SD_EVENT_OFF);
        if (r >= 0)
                r = sd_event_add_time(a->event, &up->timer, CLOCK_MONOTONIC, 0, 10000, on_timer, up);
        if (r >= 0)
                r = sd_event_source_set_enabled(up->timer, SD_EVENT_OFF);
        a->up = up;
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot set up the central manager connection");
        if (up->methods_cfg)
                glean_log(LOG_NOTICE, NULL, NULL, 0, "central manager: %s port %s, authenticated by %s", up->host,
                          up->port, glean_secure_methods_name(up->methods_cfg));
        else
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "central manager: %s port %s, authenticated by this machine's token (%s) once it has one, "
                          "else by the pool key (%s)",
                          up->host, up->port, up->cred_path, up->key_path);
        return 0;
}

void agent_upstream_start(Agent *a) {
        if (a->up)
                arm_timer(a->up, 0);
}

Conn *agent_upstream_conn(Agent *a) {
        return a->up ? &a->up->conn : NULL;
}

bool agent_upstream_ready(const Agent *a) {
        return a->up && a->up->state == UP_READY && !a->up->failing;
}

void agent_upstream_stop(Agent *a) {
        Upstream *up = a->up;
        if (!up)
                return;
        /* The last job exits get a moment to go out. */
        for (int i = 0; i < 50 && up->state == UP_READY && !up->failing && up->sec; i++) {
                const void *p;
                if (glean_secure_output(up->sec, &p) == 0)
                        break;
                struct pollfd pfd = { .fd = up->fd, .events = POLLOUT };
                if (poll(&pfd, 1, 10) > 0)
                        flush(up);
        }
        close_connection(up);
        up->state = UP_WAIT;
        up->timer = sd_event_source_disable_unref(up->timer);
        up->fail_src = sd_event_source_disable_unref(up->fail_src);
}

void agent_upstream_free(Agent *a) {
        Upstream *up = a->up;
        if (!up)
                return;
        agent_upstream_stop(a);
        while (up->kept) {
                Kept *k = up->kept;
                up->kept = k->next;
                kept_free(k);
        }
        free(up->host);
        free(up->port);
        upstream_free_paths(up);
        free(up);
        a->up = NULL;
}

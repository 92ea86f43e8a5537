/* SPDX-License-Identifier: Apache-2.0 */
/*
 * transfer.c — glean-agent as a submit agent (docs/transfer.md): the TCP
 * port where it serves its jobs' files (TRANSFER_PORT, TRANSFER_ADDRESS),
 * the grants the central manager sends on the upstream connection
 * (TransferGrant, TransferRevoke), and the sessions, each a process forked
 * from the agent (xfer_serve). The execute side's sessions (xrun.c) are
 * processes of the same kind: agent_xfer_child_start().
 *
 * An accepted connection first sends one cleartext frame, the preamble
 * (GLEANXFR <TransferId>), read here without blocking the loop: exactly
 * the frame's bytes (the sealed handshake that follows is the session's),
 * within XFER_PREAMBLE_TIMEOUT_MS, AGENT_PREAMBLE_MAX bytes at most, and
 * PENDING_MAX connections at once. An unknown or revoked TransferId, a
 * grant with AGENT_GRANT_CONNS_MAX sessions already, or more sessions
 * than MAX_CONCURRENT_UPLOADS + MAX_CONCURRENT_DOWNLOADS (the direction
 * is told inside the sealed session only, so both bound the total): the
 * connection is closed and the peer's address logged.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "daemon.h"

#define PENDING_MAX 64u                 /* connections waiting for their preamble */
#define SERVE_TIMEOUT_MS (600 * 1000)   /* a session's silence before it gives up */
#define RESULT_MAX 4096u                /* bytes of a child's report */

typedef struct Pending {
        struct Pending *next;
        AgentXfer *x;
        int fd;
        char peer[INET6_ADDRSTRLEN + 8];
        AgentPreamble pre;
        sd_event_source *io, *timer;
} Pending;

/* A session served: what its end is logged with. */
typedef struct Serve {
        AgentXfer *x;
        char id[XFER_ID_LEN + 1];
        char job[48];           /* "12.0" */
        char peer[INET6_ADDRSTRLEN + 8];
        GleanPoolKey key;
        XferJob *xjob;
        GleanUserCred owner;
} Serve;

struct AgentXfer {
        Agent *agent;
        int port;
        int fd;
        sd_event_source *io;
        AgentGrants *grants;
        Pending *pending;
        unsigned n_pending;
        unsigned n_serving, max_serving; /* 0: no bound */
        uint64_t max_in_mb, max_out_mb;
};

struct AgentXferChild {
        AgentXferChild *next;
        Agent *agent;
        pid_t pid;
        int pidfd, rfd;
        sd_event_source *src;
        AgentXferDone done;
        void *userdata;
        bool cancelled;
};

/* ---- the sessions' processes ---- */

static void child_unlink(AgentXferChild *c) {
        for (AgentXferChild **pp = &c->agent->xfer_children; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                        *pp = c->next;
                        break;
                }
}

static void child_free(AgentXferChild *c) {
        sd_event_source_disable_unref(c->src);
        if (c->pidfd >= 0)
                close(c->pidfd);
        if (c->rfd >= 0)
                close(c->rfd);
        free(c);
}

static int on_child_exit(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        (void) revents;
        AgentXferChild *c = userdata;
        char buf[RESULT_MAX];
        size_t n = 0;
        for (;;) {
                ssize_t k = read(c->rfd, buf + n, sizeof buf - 1 - n);
                if (k <= 0 || (n += (size_t) k) >= sizeof buf - 1)
                        break;
        }
        buf[n] = 0;
        siginfo_t si = { 0 };
        (void) waitid(P_PIDFD, (id_t) c->pidfd, &si, WEXITED);
        child_unlink(c);
        XferResult res = { 0 };
        if (!c->cancelled && (n == 0 || xfer_result_from_text(buf, n, &res) < 0)) {
                res = (XferResult){ .error = -EPIPE };
                snprintf(res.reason, sizeof res.reason, "the transfer process ended without a report (%s %d)",
                         si.si_code == CLD_EXITED ? "status" : "signal", si.si_status);
        }
        if (!c->cancelled && c->done)
                c->done(c->userdata, &res);
        child_free(c);
        return 0;
}

/* fd moved to a number above 9 (so that dup2 to 3 and 4 never clobbers it). */
static int lift(int fd) {
        return fd < 0 ? -1 : fcntl(fd, F_DUPFD, 10);
}

static void child_run(int keep_fd, int wfd, AgentXferRun fn, void *arg) {
        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL); /* the loop's signalfd signals are the agent's */
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        signal(sig, SIG_DFL);
        signal(SIGPIPE, SIG_IGN); /* a peer gone is an error of the session, not its death */
        int k = lift(keep_fd), w = lift(wfd);
        if (w < 0 || (keep_fd >= 0 && k < 0))
                _exit(70);
        if (dup2(w, 4) != 4 || (k >= 0 && dup2(k, 3) != 3))
                _exit(70);
        (void) syscall(SYS_close_range, 5u, ~0u, 0u); /* the agent's sockets are not the session's */
        if (k < 0)
                close(3);
        XferResult res = { 0 };
        fn(arg, &res);
        char *text = xfer_result_to_text(&res);
        if (text) {
                size_t len = strlen(text), off = 0;
                while (off < len) {
                        ssize_t m = write(4, text + off, len - off);
                        if (m <= 0)
                                break;
                        off += (size_t) m;
                }
        }
        _exit(res.error < 0 ? 1 : 0);
}

int agent_xfer_child_start(Agent *a, int keep_fd, AgentXferRun fn, void *arg, AgentXferDone done, void *userdata,
                           AgentXferChild **ret) {
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        AgentXferChild *c = calloc(1, sizeof *c);
        if (!c) {
                close(p[0]);
                close(p[1]);
                return -ENOMEM;
        }
        c->agent = a;
        c->pidfd = -1;
        c->rfd = p[0];
        c->done = done;
        c->userdata = userdata;
        pid_t pid = fork();
        if (pid < 0) {
                int r = -errno;
                close(p[1]);
                child_free(c);
                return r;
        }
        if (pid == 0)
                child_run(keep_fd, p[1], fn, arg);
        close(p[1]);
        c->pid = pid;
        (void) fcntl(c->rfd, F_SETFL, O_NONBLOCK);
        c->pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        int r = c->pidfd < 0 ? -errno : sd_event_add_io(a->event, &c->src, c->pidfd, EPOLLIN, on_child_exit, c);
        if (r < 0) {
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                child_free(c);
                return r;
        }
        c->next = a->xfer_children;
        a->xfer_children = c;
        if (ret)
                *ret = c;
        return 0;
}

pid_t agent_xfer_child_pid(const AgentXferChild *c) {
        return c ? c->pid : 0;
}

void agent_xfer_child_cancel(AgentXferChild *c) {
        if (!c || c->cancelled)
                return;
        c->cancelled = true;
        kill(c->pid, SIGKILL);
}

/* ---- sessions served ---- */

static void serve_free(Serve *sv) {
        if (!sv)
                return;
        glean_pool_key_clear(&sv->key);
        xfer_job_free(sv->xjob);
        free(sv);
}

static void serve_run(void *arg, XferResult *res) {
        Serve *sv = arg;
        xfer_serve(3, &sv->key, sv->xjob, &sv->owner, SERVE_TIMEOUT_MS, res);
}

static void serve_done(void *userdata, const XferResult *res) {
        Serve *sv = userdata;
        AgentXfer *x = sv->x;
        agent_grants_unhold(x->grants, sv->id);
        if (x->n_serving)
                x->n_serving--;
        char bytes[32], files[32], result[600];
        snprintf(bytes, sizeof bytes, "%llu", (unsigned long long) (res->bytes_sent + res->bytes_received));
        snprintf(files, sizeof files, "%llu", (unsigned long long) res->files);
        snprintf(result, sizeof result, "%s", res->error < 0 ? (res->reason[0] ? res->reason : strerror(-res->error))
                                                           : "ok");
        GleanLogField f[] = { { "GLEAN_JOB", sv->job },     { "GLEAN_TRANSFER_ID", sv->id },
                              { "GLEAN_BYTES", bytes },     { "GLEAN_FILES", files },
                              { "GLEAN_RESULT", result },   { "GLEAN_PEER", sv->peer } };
        glean_log(res->error < 0 ? LOG_NOTICE : LOG_INFO, NULL, f, 6,
                  "transfer of job %s with %s: %llu bytes sent, %llu received, %llu files: %s", sv->job, sv->peer,
                  (unsigned long long) res->bytes_sent, (unsigned long long) res->bytes_received,
                  (unsigned long long) res->files, result);
        serve_free(sv);
}

static void pending_free(Pending *p) {
        AgentXfer *x = p->x;
        for (Pending **pp = &x->pending; *pp; pp = &(*pp)->next)
                if (*pp == p) {
                        *pp = p->next;
                        x->n_pending--;
                        break;
                }
        sd_event_source_disable_unref(p->io);
        sd_event_source_disable_unref(p->timer);
        if (p->fd >= 0)
                close(p->fd);
        free(p);
}

static void refuse(Pending *p, const char *id, const char *why) {
        GleanLogField f[] = { { "GLEAN_PEER", p->peer }, { "GLEAN_TRANSFER_ID", id ? id : "" },
                              { "GLEAN_REASON", why } };
        glean_log(LOG_NOTICE, NULL, f, 3, "transfer connection from %s refused: %s", p->peer, why);
        pending_free(p);
}

static void job_name(const ClassAd *job, char *buf, size_t len) {
        int64_t c = -1, pr = -1;
        classad_eval_int(job, "ClusterId", CA_MODE_OLD, &c);
        classad_eval_int(job, "ProcId", CA_MODE_OLD, &pr);
        snprintf(buf, len, "%lld.%lld", (long long) c, (long long) pr);
}

/* The preamble is in: the session, or the connection's end. */
static void begin_session(Pending *p) {
        AgentXfer *x = p->x;
        size_t len;
        const char *payload = agent_preamble_payload(&p->pre, &len);
        char id[XFER_ID_LEN + 1], why[600];
        if (xfer_preamble_parse(payload, len, id) < 0) {
                refuse(p, NULL, "not a transfer preamble");
                return;
        }
        AgentGrant *gr = agent_grants_find(x->grants, id);
        if (!gr) {
                refuse(p, id, "no such TransferId (unknown or revoked)");
                return;
        }
        if (x->max_serving && x->n_serving >= x->max_serving) {
                snprintf(why, sizeof why, "%u transfers run already (MAX_CONCURRENT_UPLOADS + "
                         "MAX_CONCURRENT_DOWNLOADS)", x->n_serving);
                refuse(p, id, why);
                return;
        }
        Serve *sv = calloc(1, sizeof *sv);
        if (!sv) {
                refuse(p, id, "out of memory");
                return;
        }
        sv->x = x;
        snprintf(sv->id, sizeof sv->id, "%s", id);
        snprintf(sv->peer, sizeof sv->peer, "%s", p->peer);
        job_name(gr->job, sv->job, sizeof sv->job);
        sv->key = gr->key;
        char *owner = NULL;
        int r = classad_eval_string(gr->job, "Owner", CA_MODE_OLD, &owner);
        if (r < 0 || (r = glean_user_cred(owner, &sv->owner)) < 0) {
                snprintf(why, sizeof why, "job %s: its Owner %s%s", sv->job, owner ? owner : "(none)",
                         r == -EPERM ? " is root: refused" : " has no account here");
                free(owner);
                serve_free(sv);
                refuse(p, id, why);
                return;
        }
        free(owner);
        if ((r = xfer_job_from_ad(gr->job, x->max_in_mb, x->max_out_mb, &sv->xjob, why, sizeof why)) < 0) {
                char both[700];
                snprintf(both, sizeof both, "job %s cannot be transferred: %s", sv->job, why);
                serve_free(sv);
                refuse(p, id, both);
                return;
        }
        if ((r = agent_grants_hold(x->grants, id)) < 0) {
                serve_free(sv);
                refuse(p, id, "the grant has as many sessions as it may at once");
                return;
        }
        /* The session's socket blocks: the child does its I/O with timeouts. */
        int fl = fcntl(p->fd, F_GETFL);
        if (fl >= 0)
                (void) fcntl(p->fd, F_SETFL, fl & ~O_NONBLOCK);
        r = agent_xfer_child_start(x->agent, p->fd, serve_run, sv, serve_done, sv, NULL);
        if (r < 0) {
                agent_grants_unhold(x->grants, id);
                serve_free(sv);
                snprintf(why, sizeof why, "cannot fork the session: %s", strerror(-r));
                refuse(p, id, why);
                return;
        }
        x->n_serving++;
        GleanLogField f[] = { { "GLEAN_JOB", sv->job }, { "GLEAN_TRANSFER_ID", id }, { "GLEAN_PEER", p->peer } };
        glean_log(LOG_INFO, NULL, f, 3, "transfer of job %s with %s begins", sv->job, p->peer);
        pending_free(p); /* the child has its descriptor */
}

static int on_pending_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        Pending *p = userdata;
        unsigned char buf[sizeof p->pre.buf];
        size_t want = agent_preamble_want(&p->pre);
        ssize_t n = read(fd, buf, want);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0) {
                refuse(p, NULL, n == 0 ? "closed before its preamble" : strerror(errno));
                return 0;
        }
        int r = agent_preamble_feed(&p->pre, buf, (size_t) n);
        if (r < 0)
                refuse(p, NULL, "its preamble is not a frame of at most 64 bytes");
        else if (r > 0)
                begin_session(p);
        return 0;
}

static int on_pending_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Pending *p = userdata;
        char why[80];
        snprintf(why, sizeof why, "no preamble within %d s", XFER_PREAMBLE_TIMEOUT_MS / 1000);
        refuse(p, NULL, why);
        return 0;
}

static void format_peer(const struct sockaddr_storage *ss, char *buf, size_t len) {
        char host[INET6_ADDRSTRLEN] = "?";
        if (ss->ss_family == AF_INET) {
                const struct sockaddr_in *in = (const void *) ss;
                inet_ntop(AF_INET, &in->sin_addr, host, sizeof host);
                snprintf(buf, len, "%s:%u", host, ntohs(in->sin_port));
        } else {
                const struct sockaddr_in6 *in6 = (const void *) ss;
                if (IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
                        /* an IPv4 peer of the dual-stack socket: as IPv4 */
                        inet_ntop(AF_INET, &in6->sin6_addr.s6_addr[12], host, sizeof host);
                        snprintf(buf, len, "%s:%u", host, ntohs(in6->sin6_port));
                        return;
                }
                inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof host);
                snprintf(buf, len, "[%s]:%u", host, ntohs(in6->sin6_port));
        }
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        AgentXfer *x = userdata;
        for (int i = 0; i < 16; i++) {
                struct sockaddr_storage ss;
                socklen_t sl = sizeof ss;
                int cfd = accept4(fd, (struct sockaddr *) &ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
                if (cfd < 0) {
                        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                                glean_log_errno(LOG_WARNING, -errno, "transfer port: accept: %m");
                        return 0;
                }
                char peer[INET6_ADDRSTRLEN + 8];
                format_peer(&ss, peer, sizeof peer);
                Pending *p = x->n_pending < PENDING_MAX ? calloc(1, sizeof *p) : NULL;
                if (!p) {
                        GleanLogField f[] = { { "GLEAN_PEER", peer } };
                        glean_log(LOG_NOTICE, NULL, f, 1,
                                  "transfer connection from %s refused: %u connections wait for their preamble", peer,
                                  x->n_pending);
                        close(cfd);
                        continue;
                }
                p->x = x;
                p->fd = cfd;
                snprintf(p->peer, sizeof p->peer, "%s", peer);
                agent_preamble_init(&p->pre);
                p->next = x->pending;
                x->pending = p;
                x->n_pending++;
                uint64_t now;
                sd_event_now(x->agent->event, CLOCK_MONOTONIC, &now);
                if (sd_event_add_io(x->agent->event, &p->io, cfd, EPOLLIN, on_pending_io, p) < 0 ||
                    sd_event_add_time(x->agent->event, &p->timer, CLOCK_MONOTONIC,
                                      now + (uint64_t) XFER_PREAMBLE_TIMEOUT_MS * 1000, 100000, on_pending_timer,
                                      p) < 0)
                        refuse(p, NULL, "cannot watch the connection");
        }
        return 0;
}

/* ---- setup ---- */

static int64_t knob_int(const Agent *a, const char *name, int64_t def) {
        int64_t v;
        ConfigError err;
        return config_get_int(a->cfg, name, &v, &err) >= 0 && v >= 0 ? v : def;
}

void agent_transfer_knobs(const Agent *a, uint64_t *ret_max_in_mb, uint64_t *ret_max_out_mb) {
        *ret_max_in_mb = (uint64_t) knob_int(a, "MAX_TRANSFER_INPUT_MB", 0);
        *ret_max_out_mb = (uint64_t) knob_int(a, "MAX_TRANSFER_OUTPUT_MB", 0);
}

static int listen_on(const char *address, int port, int *ret_fd) {
        struct sockaddr_storage ss = { 0 };
        socklen_t sl;
        if (!address || !*address) {
                struct sockaddr_in6 *in6 = (void *) &ss;
                in6->sin6_family = AF_INET6;
                in6->sin6_addr = in6addr_any;
                in6->sin6_port = htons((uint16_t) port);
                sl = sizeof *in6;
        } else {
                struct sockaddr_in *in = (void *) &ss;
                struct sockaddr_in6 *in6 = (void *) &ss;
                char host[INET6_ADDRSTRLEN + 2];
                snprintf(host, sizeof host, "%s", address);
                size_t hl = strlen(host);
                if (host[0] == '[' && hl > 2 && host[hl - 1] == ']') {
                        memmove(host, host + 1, hl - 2);
                        host[hl - 2] = 0;
                }
                if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
                        in->sin_family = AF_INET;
                        in->sin_port = htons((uint16_t) port);
                        sl = sizeof *in;
                } else if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
                        in6->sin6_family = AF_INET6;
                        in6->sin6_port = htons((uint16_t) port);
                        sl = sizeof *in6;
                } else
                        return -EINVAL;
        }
        int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0 && ss.ss_family == AF_INET6 && (!address || !*address)) {
                /* No IPv6 here: any IPv4 address. */
                struct sockaddr_in *in = (void *) &ss;
                memset(&ss, 0, sizeof ss);
                in->sin_family = AF_INET;
                in->sin_addr.s_addr = htonl(INADDR_ANY);
                in->sin_port = htons((uint16_t) port);
                sl = sizeof *in;
                fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        }
        if (fd < 0)
                return -errno;
        int on = 1, off = 0;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
        if (ss.ss_family == AF_INET6)
                (void) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);
        if (bind(fd, (struct sockaddr *) &ss, sl) < 0 || listen(fd, 128) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        *ret_fd = fd;
        return 0;
}

int agent_transfer_setup(Agent *a) {
        int64_t port = knob_int(a, "TRANSFER_PORT", 9620);
        if (port <= 0)
                return 0; /* no transfers served, and nothing said */
        if (port > 65535) {
                glean_log(LOG_ERR, NULL, NULL, 0, "TRANSFER_PORT = %lld: a port is 1 to 65535 (0: none)",
                          (long long) port);
                return -EINVAL;
        }
        char *address = NULL;
        int r = agent_knob_string(a->cfg, "TRANSFER_ADDRESS", NULL, &address);
        if (r < 0)
                return r;
        AgentXfer *x = calloc(1, sizeof *x);
        if (!x) {
                free(address);
                return -ENOMEM;
        }
        x->agent = a;
        x->fd = -1;
        x->port = (int) port;
        int64_t up = knob_int(a, "MAX_CONCURRENT_UPLOADS", 100), down = knob_int(a, "MAX_CONCURRENT_DOWNLOADS", 100);
        x->max_serving = up == 0 || down == 0 ? 0 : (unsigned) (up + down > 100000 ? 100000 : up + down);
        agent_transfer_knobs(a, &x->max_in_mb, &x->max_out_mb);
        if ((r = agent_grants_new(0, &x->grants)) < 0) {
                free(address);
                free(x);
                return r;
        }
        r = listen_on(address, x->port, &x->fd);
        if (r == -EINVAL) {
                glean_log(LOG_ERR, NULL, NULL, 0, "TRANSFER_ADDRESS = %s: not an IPv4 or IPv6 address", address);
                free(address);
                agent_grants_free(x->grants);
                free(x);
                return r;
        }
        if (r >= 0)
                r = sd_event_add_io(a->event, &x->io, x->fd, EPOLLIN, on_accept, x);
        if (r < 0) {
                /* The agent runs on: its jobs' files are not served. */
                glean_log_errno(LOG_ERR, r, "cannot listen on the transfer port %s%s%lld: %m; this agent serves no "
                                "file transfers", address ? address : "", address ? ":" : "", (long long) port);
                if (x->fd >= 0)
                        close(x->fd);
                free(address);
                agent_grants_free(x->grants);
                free(x);
                return 0;
        }
        glean_log(LOG_NOTICE, NULL, NULL, 0, "serving the jobs' files on %s port %d", address ? address : "any address",
                  x->port);
        free(address);
        a->xfer = x;
        return 0;
}

int agent_transfer_port(const Agent *a) {
        return a->xfer ? a->xfer->port : 0;
}

void agent_transfer_stop(Agent *a) {
        AgentXfer *x = a->xfer;
        while (a->xfer_children) {
                AgentXferChild *c = a->xfer_children;
                a->xfer_children = c->next;
                kill(c->pid, SIGKILL);
                (void) waitpid(c->pid, NULL, 0);
                child_free(c); /* its userdata is its owner's to free (xrun.c) or is given up */
        }
        if (!x)
                return;
        while (x->pending)
                pending_free(x->pending);
        sd_event_source_disable_unref(x->io);
        if (x->fd >= 0)
                close(x->fd);
        agent_grants_free(x->grants);
        free(x);
        a->xfer = NULL;
}

int agent_transfer_grant(Agent *a, const ClassAd *msg, char *why, size_t whylen) {
        if (!a->xfer) {
                snprintf(why, whylen, "this agent serves no file transfers (TRANSFER_PORT is 0 or not bound)");
                return -EOPNOTSUPP;
        }
        int r = agent_grants_add(a->xfer->grants, msg, why, whylen);
        char *id = NULL;
        classad_eval_string(msg, "TransferId", CA_MODE_OLD, &id);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_TRANSFER_ID", id ? id : "" }, { "GLEAN_REASON", why } };
                glean_log(LOG_WARNING, NULL, f, 2, "TransferGrant %s refused: %s", id ? id : "", why);
        } else {
                ClassAd *job = NULL;
                char name[48] = "?";
                if (glean_msg_get_ad(msg, "JobAd", &job) >= 0)
                        job_name(job, name, sizeof name);
                classad_free(job);
                GleanLogField f[] = { { "GLEAN_TRANSFER_ID", id }, { "GLEAN_JOB", name } };
                glean_log(LOG_INFO, NULL, f, 2, "transfer grant %s for job %s (%zu kept)", id, name,
                          agent_grants_count(a->xfer->grants));
        }
        free(id);
        return r;
}

int agent_transfer_revoke(Agent *a, const ClassAd *msg, char *why, size_t whylen) {
        char *id = NULL;
        classad_eval_string(msg, "TransferId", CA_MODE_OLD, &id);
        int r = a->xfer ? agent_grants_revoke(a->xfer->grants, id) : -ENOENT;
        if (r < 0)
                snprintf(why, whylen, "no grant %s", id ? id : "");
        else {
                GleanLogField f[] = { { "GLEAN_TRANSFER_ID", id } };
                glean_log(LOG_INFO, NULL, f, 1, "transfer grant %s revoked", id);
        }
        free(id);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.c — the root side of a transfer session (docs/transfer.md,
 * step 3): the sealed handshake on the connection, then a worker forked
 * to become the user and do every file operation (worker.c), root only
 * relaying frames between the worker's socketpair and the sealed
 * connection; the worker's report (its result, and what arrived) read
 * from a pipe; the manifest written by root.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/file.h"
#include "common/proto.h"
#include "xfer-internal.h"

#define QUEUE_MAX (8u * 1024u * 1024u) /* relayed bytes buffered per direction before we stop reading */
#define REPORT_MAX (64u * 1024u * 1024u)
#define MANIFEST_MAX (64u * 1024u * 1024u)
#define LINGER_MS 2000

typedef enum Kind { KIND_FETCH, KIND_OUTPUT, KIND_SERVE } Kind;

typedef struct Report {
        char *data;
        size_t len, cap;
        bool eof;
} Report;

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int set_nonblock(int fd) {
        int fl = fcntl(fd, F_GETFL);
        return fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) < 0 ? -errno : 0;
}

static int write_all(int fd, const char *p, size_t n) {
        while (n > 0) {
                ssize_t k = write(fd, p, n);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k <= 0)
                        return -EPIPE;
                p += k;
                n -= (size_t) k;
        }
        return 0;
}

/* ---- the worker (a child of the session, the user) ---- */

static _Noreturn void worker_main(Kind kind, int sock, int report, const XferJob *job, const GleanUserCred *user,
                                  const char *sandbox, const XferManifest *manifest, int timeout_ms) {
        XferResult res = { 0 };
        XferManifest arrived = { 0 };
        int r = 0;

        signal(SIGPIPE, SIG_IGN);
        if (user && (r = glean_become_user(user)) < 0)
                xfer_fail(&res, r, 0, "the transfer worker cannot become user %s: %s", user->name, strerror(-r));
        else if (kind == KIND_FETCH)
                (void) xfer_worker_fetch(sock, sock, job, sandbox, timeout_ms, &arrived, &res);
        else if (kind == KIND_OUTPUT)
                (void) xfer_worker_output(sock, sock, job, sandbox, manifest, timeout_ms, &res);
        else
                (void) xfer_worker_serve(sock, sock, job, timeout_ms, &res);
        close(sock);
        char *text = xfer_result_to_text(&res);
        char *man = kind == KIND_FETCH && res.error == 0 ? xfer_manifest_to_text(&arrived) : NULL;
        int ok = text && write_all(report, text, strlen(text)) == 0 && write_all(report, "\n", 1) == 0 &&
                 (!man || write_all(report, man, strlen(man)) == 0);
        _exit(ok ? 0 : 1);
}

/* ---- the relay ---- */

static int read_report(Report *rp, int fd) {
        for (;;) {
                if (rp->len + 65536 > rp->cap) {
                        if (rp->cap >= REPORT_MAX)
                                return -EFBIG;
                        size_t cap = rp->cap ? rp->cap * 2 : 65536 * 2;
                        char *d = realloc(rp->data, cap + 1);
                        if (!d)
                                return -ENOMEM;
                        rp->data = d;
                        rp->cap = cap;
                }
                ssize_t n = read(fd, rp->data + rp->len, rp->cap - rp->len);
                if (n > 0) {
                        rp->len += (size_t) n;
                        continue;
                }
                if (n == 0) {
                        rp->eof = true;
                        return 0;
                }
                if (errno == EINTR)
                        continue;
                return errno == EAGAIN ? 0 : -errno;
        }
}

typedef struct Relay {
        GleanSecure *s;
        int net, wk, rep;
        int timeout_ms;
        Report report;
        char why[256];
        int error; /* the network's failure, when it came first */
} Relay;

/* Bytes for the worker, not yet written. */
typedef struct Bytes {
        unsigned char *d;
        size_t start, end, cap;
} Bytes;

static size_t bytes_size(const Bytes *b) {
        return b->end - b->start;
}

static int bytes_push(Bytes *b, const void *p, size_t n) {
        if (b->end + n > b->cap && b->start > 0) {
                memmove(b->d, b->d + b->start, b->end - b->start);
                b->end -= b->start;
                b->start = 0;
        }
        if (b->end + n > b->cap) {
                size_t cap = (b->end + n) * 2;
                unsigned char *d = realloc(b->d, cap);
                if (!d)
                        return -ENOMEM;
                b->d = d;
                b->cap = cap;
        }
        memcpy(b->d + b->end, p, n);
        b->end += n;
        return 0;
}

/* 0 all written or would block, -errno */
static int bytes_flush(Bytes *b, int fd) {
        while (b->start < b->end) {
                ssize_t k = send(fd, b->d + b->start, b->end - b->start, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return 0;
                if (k <= 0)
                        return k < 0 ? -errno : -EPIPE;
                b->start += (size_t) k;
        }
        b->start = b->end = 0;
        return 0;
}

/* Relays until the worker is done and all it wrote is out. The worker's
 * bytes travel as they come, up to GLEAN_FRAME_MAX a sealed frame (its
 * own frames are parsed by the other worker alone): many small frames of
 * small files go as one sealed frame. */
static int relay(Relay *rl) {
        Bytes toq = { 0 };
        unsigned char *chunk = malloc(GLEAN_FRAME_MAX);
        /* the handshake may have read frames already: look before polling */
        bool net_eof = false, wk_eof = false, wk_shut = false, net_first = true;
        int64_t last = now_ms();
        int r = 0;

        if (!chunk)
                return -ENOMEM;
        while (!(wk_eof && (net_eof || glean_secure_output(rl->s, &(const void *){ NULL }) == 0))) {
                const void *dummy;
                size_t sout = glean_secure_output(rl->s, &dummy);
                struct pollfd p[3] = {
                        { .fd = net_eof ? -1 : rl->net,
                          .events = (short) ((bytes_size(&toq) < QUEUE_MAX ? POLLIN : 0) | (sout ? POLLOUT : 0)) },
                        { .fd = wk_eof && !bytes_size(&toq) ? -1 : rl->wk,
                          .events = (short) ((!wk_eof && sout < QUEUE_MAX ? POLLIN : 0) |
                                             (bytes_size(&toq) ? POLLOUT : 0)) },
                        { .fd = rl->report.eof ? -1 : rl->rep, .events = POLLIN },
                };
                int left = rl->timeout_ms < 0 ? -1 : (int) (last + rl->timeout_ms - now_ms());
                if (rl->timeout_ms >= 0 && left <= 0) {
                        r = -ETIMEDOUT;
                        break;
                }
                int k = poll(p, 3, net_first ? 0 : left);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0) {
                        r = -errno;
                        break;
                }
                if (net_first) {
                        p[0].revents |= POLLIN;
                        net_first = false;
                } else if (k == 0)
                        continue;
                last = now_ms();
                if (p[2].revents && (r = read_report(&rl->report, rl->rep)) < 0)
                        break;
                if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
                        for (;;) {
                                char *f = NULL;
                                size_t len = 0;
                                r = glean_secure_read(rl->s, rl->net, &f, &len);
                                if (r == 1) {
                                        /* straight to the worker when nothing waits before it */
                                        size_t off = 0;
                                        while (bytes_size(&toq) == 0 && off < len) {
                                                ssize_t sent = send(rl->wk, f + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                                                if (sent <= 0)
                                                        break;
                                                off += (size_t) sent;
                                        }
                                        int q = off < len ? bytes_push(&toq, f + off, len - off) : 0;
                                        free(f);
                                        if (q < 0) {
                                                r = q;
                                                break;
                                        }
                                        continue;
                                }
                                if (r < 0) {
                                        if (!rl->error && r != -EPIPE) {
                                                rl->error = r;
                                                snprintf(rl->why, sizeof rl->why, "%s", glean_secure_reason(rl->s));
                                        }
                                        net_eof = true;
                                }
                                r = 0;
                                break;
                        }
                        if (r < 0)
                                break;
                }
                if (p[1].revents & (POLLIN | POLLHUP | POLLERR) && !wk_eof) {
                        for (int i = 0; i < 8; i++) {
                                ssize_t n = read(rl->wk, chunk, GLEAN_FRAME_MAX);
                                if (n > 0) {
                                        if (!net_eof && glean_secure_seal(rl->s, chunk, (size_t) n) < 0)
                                                net_eof = true;
                                        if (glean_secure_output(rl->s, &dummy) >= QUEUE_MAX)
                                                break;
                                        continue;
                                }
                                if (n < 0 && errno == EINTR)
                                        continue;
                                if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                                        wk_eof = true; /* done, or died: the report says */
                                break;
                        }
                }
                if (bytes_size(&toq)) {
                        r = bytes_flush(&toq, rl->wk);
                        if (r < 0) {
                                toq.start = toq.end = 0;
                                wk_eof = true;
                        }
                }
                if (!net_eof && glean_secure_output(rl->s, &dummy) && glean_secure_flush(rl->s, rl->net) < 0)
                        net_eof = true;
                /* the peer is gone and all it said is with the worker: the worker sees the end */
                if (net_eof && !bytes_size(&toq) && !wk_shut) {
                        (void) shutdown(rl->wk, SHUT_WR);
                        wk_shut = true;
                }
                r = 0;
        }
        free(toq.d);
        free(chunk);
        return r;
}

/* After the last frame: half-close, then read what the peer still sends
 * until it closes, so that closing does not reset what it has not read. */
static void linger_close(int fd) {
        int64_t end = now_ms() + LINGER_MS;
        char buf[65536];

        (void) shutdown(fd, SHUT_WR);
        for (;;) {
                int left = (int) (end - now_ms());
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (left <= 0 || poll(&p, 1, left) <= 0)
                        break;
                ssize_t n = read(fd, buf, sizeof buf);
                if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
                        break;
        }
}

static int session(Kind kind, int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *user,
                   const char *sandbox, const XferManifest *manifest, int timeout_ms, XferResult *res,
                   char **ret_manifest, size_t *ret_manifest_len) {
        GleanSecure *s = NULL;
        char why[256] = "";
        int sv[2] = { -1, -1 }, rp[2] = { -1, -1 }, r;

        *res = (XferResult){ 0 };
        if (fd < 0 || !key || !job || (kind != KIND_SERVE && !sandbox))
                return xfer_fail(res, -EINVAL, 0, "bad transfer session arguments");
        if (user && user->uid == 0)
                return xfer_fail(res, -EPERM, 0, "a transfer never works as root");
        r = glean_secure_handshake(fd, kind == KIND_SERVE ? GLEAN_SECURE_NEGOTIATOR : GLEAN_SECURE_AGENT,
                                   GLEAN_SECURE_POOL_AUTH(key), timeout_ms, &s, why, sizeof why);
        if (r < 0)
                return xfer_fail(res, r, 0, "transfer handshake failed: %s", why);
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0 || pipe2(rp, O_CLOEXEC) < 0) {
                r = xfer_fail(res, -errno, 0, "cannot start a transfer worker: %m");
                goto out;
        }
        pid_t pid = fork();
        if (pid < 0) {
                r = xfer_fail(res, -errno, 0, "cannot start a transfer worker: %m");
                goto out;
        }
        if (pid == 0) {
                /* the worker holds neither the connection nor its keys */
                glean_secure_free(s);
                close(fd);
                close(sv[0]);
                close(rp[0]);
                worker_main(kind, sv[1], rp[1], job, user, sandbox, manifest, timeout_ms);
        }
        close(sv[1]);
        close(rp[1]);
        sv[1] = rp[1] = -1;
        /* no Nagle delay for a small frame after a big one (a TCP socket; nothing otherwise) */
        (void) setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &(int){ 1 }, sizeof(int));
        (void) set_nonblock(fd);
        (void) set_nonblock(sv[0]);
        (void) set_nonblock(rp[0]);

        Relay rl = { .s = s, .net = fd, .wk = sv[0], .rep = rp[0], .timeout_ms = timeout_ms };
        r = relay(&rl);
        close(sv[0]);
        sv[0] = -1;
        if (r < 0)
                kill(pid, SIGKILL);
        linger_close(fd);
        /* the rest of the report */
        while (r >= 0 && !rl.report.eof) {
                struct pollfd p = { .fd = rp[0], .events = POLLIN };
                if (poll(&p, 1, timeout_ms) <= 0) {
                        kill(pid, SIGKILL);
                        break;
                }
                if (read_report(&rl.report, rp[0]) < 0)
                        break;
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        const char *nl = rl.report.data ? memchr(rl.report.data, '\n', rl.report.len) : NULL;
        if (r < 0)
                r = xfer_fail(res, r, 0, "transfer session failed: %s", strerror(-r));
        else if (!nl || xfer_result_from_text(rl.report.data, (size_t) (nl - rl.report.data), res) < 0)
                r = xfer_fail(res, -EIO, 0, "the transfer worker ended without a report (status %d)", status);
        else {
                r = res->error;
                if (r == 0 && ret_manifest) {
                        size_t off = (size_t) (nl + 1 - rl.report.data);
                        memmove(rl.report.data, rl.report.data + off, rl.report.len - off);
                        rl.report.len -= off;
                        rl.report.data[rl.report.len] = '\0';
                        *ret_manifest = TAKE_PTR(rl.report.data);
                        *ret_manifest_len = rl.report.len;
                }
        }
        free(rl.report.data);
out:
        for (int i = 0; i < 2; i++) {
                if (sv[i] >= 0)
                        close(sv[i]);
                if (rp[i] >= 0)
                        close(rp[i]);
        }
        glean_secure_free(s);
        return r;
}

int xfer_fetch_input(int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *user,
                     const char *sandbox, const char *manifest_path, int timeout_ms, XferResult *res) {
        char *man = NULL;
        size_t len = 0;
        int r = session(KIND_FETCH, fd, key, job, user, sandbox, NULL, timeout_ms, res, &man, &len);

        if (r == 0 && manifest_path) {
                /* root writes it, in a directory only root writes */
                r = glean_write_file_replace(manifest_path, man ? man : "", len, 0600);
                if (r < 0)
                        xfer_fail(res, r, 0, "cannot write the transfer manifest '%s': %s", manifest_path,
                                  strerror(-r));
        }
        free(man);
        return r;
}

int xfer_send_output(int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *user,
                     const char *sandbox, const char *manifest_path, int timeout_ms, XferResult *res) {
        XferManifest m = { 0 };
        char *text = NULL;
        size_t len = 0;
        int r;

        if (manifest_path) {
                r = glean_read_file(manifest_path, MANIFEST_MAX, &text, &len);
                if (r < 0 && r != -ENOENT)
                        return xfer_fail(res, r, 0, "cannot read the transfer manifest '%s': %s", manifest_path,
                                         strerror(-r));
                if (r == 0 && xfer_manifest_parse(text, len, &m) < 0) {
                        free(text);
                        return xfer_fail(res, -EBADMSG, 0, "the transfer manifest '%s' is malformed", manifest_path);
                }
                free(text);
        }
        r = session(KIND_OUTPUT, fd, key, job, user, sandbox, &m, timeout_ms, res, NULL, NULL);
        xfer_manifest_clear(&m);
        return r;
}

int xfer_serve(int fd, const GleanPoolKey *key, const XferJob *job, const GleanUserCred *owner, int timeout_ms,
               XferResult *res) {
        return session(KIND_SERVE, fd, key, job, owner, NULL, NULL, timeout_ms, res, NULL, NULL);
}

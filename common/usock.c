/* SPDX-License-Identifier: Apache-2.0 */
/*
 * usock.c — the daemons' unix-socket server (usock.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include "common-internal.h"
#include "log.h"
#include "usock.h"

struct GleanUsock {
        sd_event *event;
        const GleanUsockOps *ops;
        void *userdata;
        char *path;
        int fd;
        sd_event_source *src;
        unsigned accepts_per_event;
        int refuse_timeout_ms;
        bool paused;
        GleanUsockConn *conns; /* every connection not yet freed */
        size_t n_conns;
};

struct GleanUsockConn {
        GleanUsock *server;
        GleanUsockConn *prev, *next;
        int fd;
        sd_event_source *src;
        GleanFrameReader *reader;
        GleanOutQueue out;
        GleanPeer peer;
        bool stopped;
        void *data;
};

/* Whether accept4()'s error means there is no descriptor (or memory) for now. */
static bool out_of_descriptors(int err) {
        return err == EMFILE || err == ENFILE || err == ENOBUFS || err == ENOMEM;
}

void glean_usock_tell(int fd, const char *why, int timeout_ms) {
        ClassAd *msg = NULL;
        if (glean_msg_reply(NULL, false, why, &msg) >= 0)
                (void) glean_msg_send(fd, msg, timeout_ms);
        classad_free(msg);
}

void glean_usock_refuse(int fd, const char *why, int timeout_ms) {
        glean_usock_tell(fd, why, timeout_ms);
        close(fd);
}

bool glean_usock_fd_writable(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        return poll(&p, 1, timeout_ms) > 0;
}

/* ---- connections ---- */

int glean_usock_conn_fd(const GleanUsockConn *c) {
        return c->fd;
}

const GleanPeer *glean_usock_conn_peer(const GleanUsockConn *c) {
        return &c->peer;
}

void *glean_usock_conn_data(const GleanUsockConn *c) {
        return c->data;
}

void glean_usock_conn_set_data(GleanUsockConn *c, void *data) {
        c->data = data;
}

int glean_usock_conn_queue(GleanUsockConn *c, const void *payload, size_t len, size_t max) {
        return glean_outq_push(&c->out, payload, len, max);
}

size_t glean_usock_conn_queued(const GleanUsockConn *c) {
        return glean_outq_size(&c->out);
}

void glean_usock_conn_truncate(GleanUsockConn *c, size_t size) {
        glean_outq_truncate(&c->out, size);
}

int glean_usock_conn_flush(GleanUsockConn *c) {
        int r = glean_outq_flush(&c->out, c->fd);
        if (r < 0)
                return r;
        /* Input always, output while some is queued. */
        if (!c->stopped)
                (void) sd_event_source_set_io_events(c->src, EPOLLIN | (r == 0 ? EPOLLOUT : 0));
        return r;
}

int glean_usock_conn_read(GleanUsockConn *c) {
        const GleanUsockOps *ops = c->server->ops;
        for (;;) {
                char *payload = NULL;
                size_t len = 0;
                int r = glean_frame_read(c->reader, c->fd, &payload, &len);
                if (r == 0)
                        return 0;
                if (r < 0) {
                        ops->gone(c, r);
                        return r;
                }
                r = ops->frame(c, payload, len);
                free(payload);
                if (r < 0)
                        return r;
        }
}

void glean_usock_conn_stop(GleanUsockConn *c) {
        c->stopped = true;
        (void) sd_event_source_set_enabled(c->src, SD_EVENT_OFF);
}

GleanUsockConn *glean_usock_conn_free(GleanUsockConn *c) {
        if (!c)
                return NULL;
        GleanUsock *s = c->server;
        if (c->prev)
                c->prev->next = c->next;
        else
                s->conns = c->next;
        if (c->next)
                c->next->prev = c->prev;
        s->n_conns--;
        sd_event_source_disable_unref(c->src);
        glean_frame_reader_free(c->reader);
        glean_outq_clear(&c->out);
        if (c->fd >= 0)
                close(c->fd);
        free(c);
        if (!s->ops->exhausted)
                glean_usock_resume(s); /* a descriptor is free */
        return NULL;
}

static int on_conn_io(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) fd;
        GleanUsockConn *c = userdata;
        const GleanUsockOps *ops = c->server->ops;
        if (ops->dispatch)
                ops->dispatch(c->server->userdata);
        if (c->stopped)
                return 0;
        if (revents & EPOLLOUT) {
                if (ops->writable) {
                        if (ops->writable(c) < 0)
                                return 0;
                } else {
                        int r = glean_usock_conn_flush(c);
                        if (r < 0) {
                                ops->gone(c, r);
                                return 0;
                        }
                }
        }
        if (revents & (EPOLLIN | EPOLLHUP | EPOLLERR))
                (void) glean_usock_conn_read(c);
        return 0;
}

/* ---- accepting ---- */

static void refuse(GleanUsock *s, int fd, const GleanPeer *peer, const char *why) {
        if (s->ops->refused)
                s->ops->refused(s->userdata, peer, why);
        glean_usock_refuse(fd, why, s->refuse_timeout_ms);
}

static int conn_new(GleanUsock *s, int fd, const GleanPeer *peer, GleanUsockConn **ret) {
        GleanUsockConn *c = calloc(1, sizeof *c);
        int r;
        if (!c)
                return -ENOMEM;
        if ((r = glean_frame_reader_new(GLEAN_FRAME_MAX, &c->reader)) < 0 ||
            (r = sd_event_add_io(s->event, &c->src, fd, EPOLLIN, on_conn_io, c)) < 0) {
                glean_frame_reader_free(c->reader);
                free(c);
                return r;
        }
        c->server = s;
        c->fd = fd;
        c->peer = *peer;
        c->next = s->conns;
        if (s->conns)
                s->conns->prev = c;
        s->conns = c;
        s->n_conns++;
        *ret = c;
        return 0;
}

/* A connection accepted: its peer, the daemon's admission, its record. */
static void take(GleanUsock *s, int fd) {
        GleanPeer peer;
        char why[300] = "";
        GleanUsockConn *c = NULL;
        int r = glean_sock_peer(fd, &peer);
        if (r < 0) {
                if (s->ops->refused)
                        s->ops->refused(s->userdata, NULL, strerror(-r));
                close(fd);
                return;
        }
        if (s->ops->admit && s->ops->admit(s->userdata, &peer, why, sizeof why) < 0) {
                refuse(s, fd, &peer, why);
                return;
        }
        if ((r = conn_new(s, fd, &peer, &c)) >= 0 && (r = s->ops->open(s->userdata, c)) < 0) {
                c->fd = -1; /* closed after the refusal's Reply */
                glean_usock_conn_free(c);
        }
        if (r < 0)
                refuse(s, fd, &peer, r == -ENOMEM ? "out of memory" : strerror(-r));
}

static int on_accept(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        (void) src;
        (void) revents;
        GleanUsock *s = userdata;
        if (s->ops->dispatch)
                s->ops->dispatch(s->userdata);
        for (unsigned i = 0; !s->paused && (!s->accepts_per_event || i < s->accepts_per_event); i++) {
                if (s->ops->room && !s->ops->room(s->userdata))
                        return 0;
                int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
                if (cfd < 0) {
                        int err = errno;
                        if (err == EINTR || err == ECONNABORTED)
                                continue;
                        if (out_of_descriptors(err)) {
                                if (s->ops->exhausted)
                                        s->ops->exhausted(s->userdata, err);
                                else
                                        glean_usock_pause(s);
                        }
                        return 0;
                }
                take(s, cfd);
        }
        return 0;
}

void glean_usock_pause(GleanUsock *s) {
        if (s->paused)
                return;
        s->paused = true;
        (void) sd_event_source_set_enabled(s->src, SD_EVENT_OFF);
}

void glean_usock_resume(GleanUsock *s) {
        if (!s->paused)
                return;
        s->paused = false;
        (void) sd_event_source_set_enabled(s->src, SD_EVENT_ON);
}

bool glean_usock_paused(const GleanUsock *s) {
        return s->paused;
}

size_t glean_usock_conns(const GleanUsock *s) {
        return s->n_conns;
}

void glean_usock_set_accepts_per_event(GleanUsock *s, unsigned n) {
        s->accepts_per_event = n;
}

void glean_usock_set_refuse_timeout(GleanUsock *s, int timeout_ms) {
        s->refuse_timeout_ms = timeout_ms;
}

/* ---- the server ---- */

/* The socket's directory, made when missing (not its parents). */
static int make_dir(const char *path) {
        _cleanup_free_ char *dir = strdup(path);
        if (!dir)
                return -ENOMEM;
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir)
                return 0;
        *slash = 0;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return glean_log_errno(LOG_ERR, errno, "cannot create %s: %m", dir);
        return 0;
}

int glean_usock_new(sd_event *e, const char *path, mode_t mode, const GleanUsockOps *ops, void *userdata,
                    GleanUsock **ret) {
        GleanUsock *s = calloc(1, sizeof *s);
        int r;
        if (!s || !(s->path = strdup(path))) {
                free(s);
                return -ENOMEM;
        }
        s->event = e;
        s->ops = ops;
        s->userdata = userdata;
        s->fd = -1;
        if ((r = make_dir(path)) < 0)
                goto fail;
        if ((r = glean_sock_listen_unix(path, mode, &s->fd)) < 0) {
                r = glean_log_errno(LOG_ERR, r, "cannot listen on %s: %m", path);
                goto fail;
        }
        if ((r = sd_event_add_io(e, &s->src, s->fd, EPOLLIN, on_accept, s)) < 0) {
                r = glean_log_errno(LOG_ERR, r, "cannot watch %s: %m", path);
                goto fail;
        }
        *ret = s;
        return 0;
fail:
        glean_usock_free(s);
        return r;
}

GleanUsock *glean_usock_free(GleanUsock *s) {
        if (!s)
                return NULL;
        while (s->conns)
                glean_usock_conn_free(s->conns);
        s->src = sd_event_source_disable_unref(s->src);
        if (s->fd >= 0) {
                close(s->fd);
                unlink(s->path);
        }
        free(s->path);
        free(s);
        return NULL;
}

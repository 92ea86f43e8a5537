/* SPDX-License-Identifier: Apache-2.0 */
/*
 * frame.c — length-prefixed frames: a 4-byte big-endian payload length,
 * then the payload. An incremental reader (pure: bytes in, frames out), a
 * read from a non-blocking fd on top of it, a complete write and a
 * receive-exactly-one-frame with a deadline.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "common-internal.h"
#include "proto.h"

#define READ_CHUNK (64u * 1024u)
#define KEEP_MAX (256u * 1024u) /* a bigger buffer is freed once empty */

struct GleanFrameReader {
        size_t max;   /* largest payload accepted */
        GleanBuf in;
        int error;    /* sticky: a bad header was seen */
};

static size_t clamp_max(size_t max) {
        return max == 0 || max > GLEAN_FRAME_MAX ? GLEAN_FRAME_MAX : max;
}

/* 0 when the declared length n is acceptable, else the error. */
static int check_length(uint32_t n, size_t max) {
        if (n == 0)
                return -EBADMSG;
        if (n > max)
                return -EMSGSIZE;
        return 0;
}

int glean_frame_reader_new(size_t max, GleanFrameReader **ret) {
        GleanFrameReader *r = calloc(1, sizeof(*r));

        if (!r)
                return -ENOMEM;
        r->max = clamp_max(max);
        *ret = r;
        return 0;
}

void glean_frame_reader_free(GleanFrameReader *r) {
        if (!r)
                return;
        glean_buf_done(&r->in);
        free(r);
}

size_t glean_frame_reader_buffered(const GleanFrameReader *r) {
        return glean_buf_size(&r->in);
}

int glean_frame_reader_feed(GleanFrameReader *r, const void *buf, size_t n) {
        unsigned char *t;

        if (r->error)
                return r->error; /* the stream is dead: buffer nothing more */
        if (n == 0)
                return 0;
        t = glean_buf_tail(&r->in, n);
        if (!t)
                return -ENOMEM;
        memcpy(t, buf, n);
        r->in.end += n;
        return 0;
}

void glean_frame_reader_set_max(GleanFrameReader *r, size_t max) {
        r->max = max == 0 ? GLEAN_FRAME_MAX : max;
}

int glean_frame_reader_peek(GleanFrameReader *r, const unsigned char **ret, size_t *ret_len) {
        size_t have = glean_buf_size(&r->in);
        uint32_t n;

        if (r->error)
                return r->error;
        if (have < GLEAN_FRAME_HEADER)
                return 0;
        n = glean_get_be32(r->in.data + r->in.start);
        r->error = check_length(n, r->max);
        if (r->error)
                return r->error;
        if (have - GLEAN_FRAME_HEADER < n)
                return 0;
        *ret = r->in.data + r->in.start + GLEAN_FRAME_HEADER;
        *ret_len = n;
        return 1;
}

void glean_frame_reader_drop(GleanFrameReader *r) {
        glean_buf_consume(&r->in, GLEAN_FRAME_HEADER + (size_t) glean_get_be32(r->in.data + r->in.start), KEEP_MAX);
}

int glean_frame_reader_next(GleanFrameReader *r, char **ret, size_t *ret_len) {
        const unsigned char *payload;
        size_t n;
        char *p;
        int e;

        e = glean_frame_reader_peek(r, &payload, &n);
        if (e <= 0)
                return e;
        p = malloc(n + 1);
        if (!p)
                return -ENOMEM;
        memcpy(p, payload, n);
        p[n] = '\0';
        glean_frame_reader_drop(r);
        *ret = p;
        if (ret_len)
                *ret_len = n;
        return 1;
}

int glean_frame_reader_fill(GleanFrameReader *r, int fd, size_t chunk) {
        /* Room for at least a chunk: small frames arrive with few reads,
         * and a big one never makes the buffer grow beyond it plus a
         * chunk. */
        unsigned char *t = glean_buf_tail(&r->in, chunk ? chunk : READ_CHUNK);

        if (!t)
                return -ENOMEM;
        for (;;) {
                ssize_t k = read(fd, t, r->in.cap - r->in.end);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK)
                                return 0;
                        return -errno;
                }
                if (k == 0)
                        return -EPIPE;
                r->in.end += (size_t) k;
                return 1;
        }
}

int glean_frame_read(GleanFrameReader *r, int fd, char **ret, size_t *ret_len) {
        for (;;) {
                int e = glean_frame_reader_next(r, ret, ret_len);
                if (e != 0)
                        return e;
                e = glean_frame_reader_fill(r, fd, READ_CHUNK);
                if (e <= 0)
                        return e;
        }
}

int glean_wait_fd(int fd, short events, int64_t deadline) {
        for (;;) {
                struct pollfd p = { .fd = fd, .events = events };
                int k = poll(&p, 1, glean_remaining_ms(deadline));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -ETIMEDOUT;
                if (p.revents & POLLNVAL)
                        return -EBADF;
                return 0; /* ready, or POLLHUP/POLLERR: the next call says what */
        }
}

/* One write attempt of the iovecs: send() on a socket (MSG_NOSIGNAL),
 * writev() on anything else. */
static ssize_t write_some(int fd, struct iovec *iov, int iovcnt, bool *is_socket) {
        if (*is_socket) {
                struct msghdr mh = { .msg_iov = iov, .msg_iovlen = (size_t) iovcnt };
                ssize_t k = sendmsg(fd, &mh, MSG_NOSIGNAL);
                if (k >= 0 || errno != ENOTSOCK)
                        return k;
                *is_socket = false;
        }
        return writev(fd, iov, iovcnt);
}

ssize_t glean_send_some(int fd, const void *buf, size_t len) {
        struct iovec iov = { .iov_base = (void *) buf, .iov_len = len };
        bool is_socket = true;

        for (;;) {
                ssize_t k = write_some(fd, &iov, 1, &is_socket);
                if (k >= 0)
                        return k;
                if (errno == EINTR)
                        continue;
                return errno == EWOULDBLOCK ? -EAGAIN : -errno;
        }
}

int glean_frame_write(int fd, const void *payload, size_t len, int timeout_ms) {
        unsigned char header[GLEAN_FRAME_HEADER];
        int64_t deadline = glean_deadline(timeout_ms);
        bool is_socket = true;

        if (len == 0 || !payload)
                return -EINVAL;
        if (len > GLEAN_FRAME_MAX)
                return -EMSGSIZE;
        glean_put_be32(header, (uint32_t) len);

        struct iovec iov[2] = {
                { .iov_base = header, .iov_len = sizeof(header) },
                { .iov_base = (void *) payload, .iov_len = len },
        };
        struct iovec *v = iov;
        int cnt = 2;

        while (cnt > 0) {
                ssize_t k = write_some(fd, v, cnt, &is_socket);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        if (errno == EAGAIN || errno == EWOULDBLOCK) {
                                int e = glean_wait_fd(fd, POLLOUT, deadline);
                                if (e < 0)
                                        return e;
                                continue;
                        }
                        return -errno;
                }
                size_t done = (size_t) k;
                while (cnt > 0 && done >= v->iov_len) {
                        done -= v->iov_len;
                        v++;
                        cnt--;
                }
                if (cnt > 0) {
                        v->iov_base = (char *) v->iov_base + done;
                        v->iov_len -= done;
                }
        }
        return 0;
}

/* Reads exactly n bytes into buf before the deadline. -EPIPE at EOF. */
static int read_exactly(int fd, void *buf, size_t n, int64_t deadline) {
        size_t got = 0;

        while (got < n) {
                /* Poll first so that a blocking fd honours the deadline too. */
                int e = glean_wait_fd(fd, POLLIN, deadline);
                if (e < 0)
                        return e;
                ssize_t k = read(fd, (char *) buf + got, n - got);
                if (k < 0) {
                        if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        return -EPIPE;
                got += (size_t) k;
        }
        return 0;
}

int glean_frame_recv(int fd, size_t max, int timeout_ms, char **ret, size_t *ret_len) {
        unsigned char header[GLEAN_FRAME_HEADER];
        int64_t deadline = glean_deadline(timeout_ms);
        _cleanup_free_ char *p = NULL;
        uint32_t n;
        int e;

        e = read_exactly(fd, header, sizeof(header), deadline);
        if (e < 0)
                return e;
        n = glean_get_be32(header);
        e = check_length(n, clamp_max(max));
        if (e < 0)
                return e;
        p = malloc((size_t) n + 1);
        if (!p)
                return -ENOMEM;
        e = read_exactly(fd, p, n, deadline);
        if (e < 0)
                return e;
        p[n] = '\0';
        *ret = TAKE_PTR(p);
        if (ret_len)
                *ret_len = n;
        return 0;
}

/* ---- the output queue ---- */

/* An emptied queue keeps at most this much memory. */
#define OUTQ_KEEP (64u * 1024)

int glean_outq_push(GleanOutQueue *q, const void *payload, size_t len, size_t max) {
        size_t n = GLEAN_FRAME_HEADER + len;

        if (len == 0 || len > GLEAN_FRAME_MAX)
                return -EMSGSIZE;
        if (glean_outq_size(q) + n > max)
                return -ENOBUFS;
        if (q->cap - q->end < n && q->start > 0) {
                /* what is queued to the front: once per refill, not per send */
                memmove(q->data, q->data + q->start, q->end - q->start);
                q->end -= q->start;
                q->start = 0;
        }
        if (q->cap - q->end < n) {
                size_t cap = q->cap ? q->cap : 4096;
                while (cap < q->end + n)
                        cap *= 2;
                unsigned char *d = realloc(q->data, cap);
                if (!d)
                        return -ENOMEM;
                q->data = d;
                q->cap = cap;
        }
        unsigned char *h = q->data + q->end;
        h[0] = (unsigned char) (len >> 24);
        h[1] = (unsigned char) (len >> 16);
        h[2] = (unsigned char) (len >> 8);
        h[3] = (unsigned char) len;
        memcpy(h + GLEAN_FRAME_HEADER, payload, len);
        q->end += n;
        return 0;
}

int glean_outq_flush(GleanOutQueue *q, int fd) {
        while (glean_outq_size(q) > 0) {
                ssize_t k = send(fd, q->data + q->start, glean_outq_size(q), MSG_NOSIGNAL | MSG_DONTWAIT);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                        return 0;
                if (k < 0)
                        return -errno;
                q->start += (size_t) k;
        }
        q->start = q->end = 0;
        if (q->cap > OUTQ_KEEP)
                glean_outq_clear(q);
        return 1;
}

void glean_outq_clear(GleanOutQueue *q) {
        free(q->data);
        *q = (GleanOutQueue){};
}

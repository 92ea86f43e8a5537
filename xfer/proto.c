/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proto.c — the protocol between the two workers of a transfer, and a
 * worker's buffered connection.
 *
 * The workers speak plain frames of common/proto.h (4-byte big-endian
 * length, then the payload, at most GLEAN_FRAME_MAX bytes) to their root
 * sessions, which seal them one for one on the network. Each payload
 * starts with a type byte; integers are big-endian.
 *
 *   R REQUEST  version(1) what(1): 1 SendInput, 2 Output. The execute
 *              side's first frame. After SendInput the submit side sends
 *              the input; after Output the execute side sends the output.
 *   H HEADER   kind(1): 1 file, 2 directory, 3 symbolic link; role(1): 0
 *              plain, 1 the job's Out, 2 its Err (the receiver writes
 *              them where its own ad says); mode(4), mtime seconds(8) and
 *              nanoseconds(4), size(8): a file's bytes, a link's target
 *              length; name length(2), name (relative, "a/b/c"), then a
 *              link's target.
 *   D DATA     bytes of the current file, in order (up to 1 MiB - 1).
 *   S SUM      the SHA-256 (32 bytes) of the current file's bytes; the
 *              file ends here.
 *   E END      files(8) bytes(8): what the sender sent; no more entries.
 *   F FAIL     the sender gives up (e.g. an input missing): as STATUS.
 *   T STATUS   the receiver's final word, sent after END or FAIL or when
 *              it refuses something: error(4, an errno, 0 ok),
 *              hold code(2), files(8), bytes(8), reason (the rest, text).
 *              Both ends take it as the transfer's result.
 *
 * A file is HEADER, DATA..., SUM; a directory HEADER alone (before what
 * it holds); a link HEADER alone. A receiver writes a file aside
 * (".glean-xfer.<random>" in its directory) and renames it to its name
 * only once SUM matches and the size is what HEADER said; it refuses (and
 * says why in STATUS, then closes) a name that is absolute, has "." or
 * ".." or reserved components, goes through a symbolic link or exceeds
 * the job's limit. A sender checks for an early STATUS after each entry
 * and stops when one came.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "xfer-internal.h"

#define OBUF_FLUSH (256u * 1024u) /* write out once this much is queued */
#define IBUF_READ (256u * 1024u)

/* ---- big-endian ---- */

static void put16(unsigned char *p, uint16_t v) {
        p[0] = (unsigned char) (v >> 8);
        p[1] = (unsigned char) v;
}
static void put32(unsigned char *p, uint32_t v) {
        for (int i = 0; i < 4; i++)
                p[i] = (unsigned char) (v >> (24 - 8 * i));
}
static void put64(unsigned char *p, uint64_t v) {
        for (int i = 0; i < 8; i++)
                p[i] = (unsigned char) (v >> (56 - 8 * i));
}
static uint16_t get16(const unsigned char *p) {
        return (uint16_t) ((p[0] << 8) | p[1]);
}
static uint32_t get32(const unsigned char *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}
static uint64_t get64(const unsigned char *p) {
        return (uint64_t) get32(p) << 32 | get32(p + 4);
}

/* ---- the connection ---- */

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int wait_fd(int fd, short events, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = events };
        int64_t deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;

        for (;;) {
                int left = deadline < 0 ? -1 : (int) (deadline - now_ms() > 0 ? deadline - now_ms() : 0);
                int r = poll(&p, 1, left);
                if (r > 0)
                        return 0;
                if (r == 0)
                        return -ETIMEDOUT;
                if (errno != EINTR)
                        return -errno;
        }
}

int xfer_conn_init(XferConn *c, int in_fd, int out_fd, int timeout_ms) {
        *c = (XferConn){ .in_fd = in_fd, .out_fd = out_fd, .timeout_ms = timeout_ms };
        c->ocap = GLEAN_FRAME_MAX + OBUF_FLUSH + 64;
        c->icap = GLEAN_FRAME_MAX + GLEAN_FRAME_HEADER + IBUF_READ;
        c->obuf = malloc(c->ocap);
        c->ibuf = malloc(c->icap);
        if (!c->obuf || !c->ibuf) {
                xfer_conn_done(c);
                return -ENOMEM;
        }
        return 0;
}

void xfer_conn_done(XferConn *c) {
        free(c->obuf);
        free(c->ibuf);
        c->obuf = c->ibuf = NULL;
}

int xfer_conn_flush(XferConn *c) {
        size_t off = 0;

        while (off < c->olen) {
                ssize_t n = send(c->out_fd, c->obuf + off, c->olen - off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == ENOTSOCK)
                        n = write(c->out_fd, c->obuf + off, c->olen - off);
                if (n > 0) {
                        off += (size_t) n;
                        continue;
                }
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                        int r = wait_fd(c->out_fd, POLLOUT, c->timeout_ms);
                        if (r < 0)
                                return r;
                        continue;
                }
                return n < 0 ? -errno : -EPIPE;
        }
        c->olen = 0;
        return 0;
}

static int make_room(XferConn *c, size_t need) {
        if (c->olen + need <= c->ocap)
                return 0;
        return xfer_conn_flush(c);
}

int xfer_conn_put(XferConn *c, int type, const void *body, size_t len, const void *more2, size_t len2) {
        size_t n = 1 + len + len2;
        int r;

        if (n > GLEAN_FRAME_MAX)
                return -EMSGSIZE;
        r = make_room(c, GLEAN_FRAME_HEADER + n);
        if (r < 0)
                return r;
        unsigned char *p = c->obuf + c->olen;
        put32(p, (uint32_t) n);
        p[4] = (unsigned char) type;
        if (len)
                memcpy(p + 5, body, len);
        if (len2)
                memcpy(p + 5 + len, more2, len2);
        c->olen += GLEAN_FRAME_HEADER + n;
        return c->olen >= OBUF_FLUSH ? xfer_conn_flush(c) : 0;
}

unsigned char *xfer_conn_data_room(XferConn *c, size_t max) {
        if (max > XFER_DATA_CHUNK || make_room(c, GLEAN_FRAME_HEADER + 1 + max) < 0)
                return NULL;
        return c->obuf + c->olen + GLEAN_FRAME_HEADER + 1;
}

int xfer_conn_commit_data(XferConn *c, size_t n) {
        if (n == 0 || n > XFER_DATA_CHUNK)
                return -EINVAL;
        unsigned char *p = c->obuf + c->olen;
        put32(p, (uint32_t) (n + 1));
        p[4] = XFER_T_DATA;
        c->olen += GLEAN_FRAME_HEADER + 1 + n;
        return c->olen >= OBUF_FLUSH ? xfer_conn_flush(c) : 0;
}

/* Reads what is there (waiting up to the timeout when block). 0 some
 * read, -EAGAIN nothing yet (not block), -EPIPE end of file. */
static int fill(XferConn *c, bool block) {
        if (c->istart > 0 && c->istart == c->iend)
                c->istart = c->iend = 0;
        if (c->icap - c->iend < IBUF_READ) {
                memmove(c->ibuf, c->ibuf + c->istart, c->iend - c->istart);
                c->iend -= c->istart;
                c->istart = 0;
        }
        for (;;) {
                if (block) {
                        /* poll first: a blocking descriptor waits no longer than the timeout */
                        int r = wait_fd(c->in_fd, POLLIN, c->timeout_ms);
                        if (r < 0)
                                return r;
                }
                ssize_t n = read(c->in_fd, c->ibuf + c->iend, c->icap - c->iend);
                if (n > 0) {
                        c->iend += (size_t) n;
                        return 0;
                }
                if (n == 0)
                        return -EPIPE;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN && errno != EWOULDBLOCK)
                        return -errno;
                if (!block)
                        return -EAGAIN;
        }
}

static int frame_ready(XferConn *c, size_t *ret_len) {
        size_t have = c->iend - c->istart;

        if (have < GLEAN_FRAME_HEADER)
                return 0;
        uint32_t n = get32(c->ibuf + c->istart);
        if (n == 0)
                return -EBADMSG;
        if (n > GLEAN_FRAME_MAX)
                return -EMSGSIZE;
        if (have < GLEAN_FRAME_HEADER + n)
                return 0;
        *ret_len = n;
        return 1;
}

int xfer_conn_get(XferConn *c, int *ret_type, const unsigned char **ret_body, size_t *ret_len) {
        size_t n = 0;
        int r;

        /* what we said must be out before we wait for the answer */
        r = xfer_conn_flush(c);
        if (r < 0)
                return r;
        while ((r = frame_ready(c, &n)) == 0) {
                /* the bytes that read() would put beyond the buffer */
                r = fill(c, true);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                return r;
        const unsigned char *p = c->ibuf + c->istart + GLEAN_FRAME_HEADER;
        c->istart += GLEAN_FRAME_HEADER + n;
        *ret_type = p[0];
        *ret_body = p + 1;
        *ret_len = n - 1;
        return 0;
}

bool xfer_conn_pending(XferConn *c) {
        size_t n;

        if (frame_ready(c, &n) != 0)
                return true;
        struct pollfd p = { .fd = c->in_fd, .events = POLLIN };
        return poll(&p, 1, 0) > 0;
}

/* ---- bodies ---- */

int xfer_put_request(XferConn *c, int what) {
        unsigned char b[2] = { XFER_PROTO_VERSION, (unsigned char) what };
        return xfer_conn_put(c, XFER_T_REQUEST, b, sizeof b, NULL, 0);
}

int xfer_parse_request(const unsigned char *b, size_t n, int *ret_what) {
        if (n != 2 || b[0] != XFER_PROTO_VERSION || (b[1] != XFER_REQ_INPUT && b[1] != XFER_REQ_OUTPUT))
                return -EBADMSG;
        *ret_what = b[1];
        return 0;
}

#define HEADER_FIXED 28u

int xfer_put_header(XferConn *c, const XferHeader *h) {
        unsigned char b[HEADER_FIXED + XFER_NAME_MAX];
        size_t nl = strlen(h->name), tl = h->kind == XFER_KIND_LINK ? strlen(h->target) : 0;

        if (nl == 0 || nl > XFER_NAME_MAX || tl > XFER_NAME_MAX)
                return -ENAMETOOLONG;
        b[0] = (unsigned char) h->kind;
        b[1] = (unsigned char) h->role;
        put32(b + 2, h->mode);
        put64(b + 6, (uint64_t) h->mtime_sec);
        put32(b + 14, h->mtime_nsec);
        put64(b + 18, h->kind == XFER_KIND_LINK ? tl : h->size);
        put16(b + 26, (uint16_t) nl);
        memcpy(b + HEADER_FIXED, h->name, nl);
        return xfer_conn_put(c, XFER_T_HEADER, b, HEADER_FIXED + nl, h->target, tl);
}

int xfer_parse_header(const unsigned char *b, size_t n, XferHeader *ret) {
        if (n < HEADER_FIXED)
                return -EBADMSG;
        int kind = b[0], role = b[1];
        size_t nl = get16(b + 26);
        uint64_t size = get64(b + 18);
        if (kind < XFER_KIND_FILE || kind > XFER_KIND_LINK || role > XFER_ROLE_STDERR || nl == 0 ||
            nl > XFER_NAME_MAX || HEADER_FIXED + nl > n)
                return -EBADMSG;
        size_t tl = n - HEADER_FIXED - nl;
        if (kind == XFER_KIND_LINK ? (tl == 0 || tl > XFER_NAME_MAX || size != tl) : tl != 0)
                return -EBADMSG;
        if (memchr(b + HEADER_FIXED, '\0', nl) || (tl && memchr(b + HEADER_FIXED + nl, '\0', tl)))
                return -EBADMSG;
        ret->kind = kind;
        ret->role = role;
        ret->mode = get32(b + 2);
        ret->mtime_sec = (int64_t) get64(b + 6);
        ret->mtime_nsec = get32(b + 14);
        if (ret->mtime_nsec >= 1000000000u)
                return -EBADMSG;
        ret->size = size;
        memcpy(ret->name, b + HEADER_FIXED, nl);
        ret->name[nl] = '\0';
        memcpy(ret->target, b + HEADER_FIXED + nl, tl);
        ret->target[tl] = '\0';
        return 0;
}

int xfer_put_end(XferConn *c, uint64_t files, uint64_t bytes) {
        unsigned char b[16];
        put64(b, files);
        put64(b + 8, bytes);
        return xfer_conn_put(c, XFER_T_END, b, sizeof b, NULL, 0);
}

int xfer_parse_end(const unsigned char *b, size_t n, uint64_t *ret_files, uint64_t *ret_bytes) {
        if (n != 16)
                return -EBADMSG;
        *ret_files = get64(b);
        *ret_bytes = get64(b + 8);
        return 0;
}

int xfer_put_outcome(XferConn *c, int type, const XferResult *res) {
        unsigned char b[22];
        int e = res->error < 0 ? -res->error : 0;
        put32(b, (uint32_t) e);
        put16(b + 4, (uint16_t) res->hold_code);
        put64(b + 6, res->files);
        put64(b + 14, res->bytes_received ? res->bytes_received : res->bytes_sent);
        return xfer_conn_put(c, type, b, sizeof b, res->reason, strnlen(res->reason, sizeof res->reason - 1));
}

int xfer_parse_outcome(const unsigned char *b, size_t n, XferResult *ret) {
        if (n < 22)
                return -EBADMSG;
        uint32_t e = get32(b);
        int hold = get16(b + 4);
        if (e > 4095 || (hold != 0 && hold != XFER_HOLD_INPUT && hold != XFER_HOLD_OUTPUT) || (hold && !e))
                return -EBADMSG;
        XferResult r = { .error = -(int) e, .hold_code = hold, .hold_subcode = (int) e };
        r.files = get64(b + 6);
        r.bytes_received = get64(b + 14);
        size_t rl = n - 22 < sizeof r.reason - 1 ? n - 22 : sizeof r.reason - 1;
        memcpy(r.reason, b + 22, rl);
        r.reason[rl] = '\0';
        for (size_t i = 0; i < rl; i++)
                if ((unsigned char) r.reason[i] < 0x20)
                        r.reason[i] = '?';
        *ret = r;
        return 0;
}

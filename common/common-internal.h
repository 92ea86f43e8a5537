/* SPDX-License-Identifier: Apache-2.0 */
/*
 * common-internal.h — helpers shared by the files of common/ (not public).
 */
#pragma once

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "classad.h"
#include "cleanup.h"
#include "proto.h"

#define _cleanup_classad_ _cleanup_(glean_classad_freep)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

static inline void glean_classad_freep(ClassAd **ad) {
        classad_free(*ad);
}

/* Big-endian 32-bit integers, as frame headers carry them. */
static inline uint32_t glean_get_be32(const unsigned char *p) {
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | (uint32_t) p[3];
}

static inline void glean_put_be32(unsigned char *p, uint32_t v) {
        p[0] = (unsigned char) (v >> 24);
        p[1] = (unsigned char) (v >> 16);
        p[2] = (unsigned char) (v >> 8);
        p[3] = (unsigned char) v;
}

/* Little-endian 32-bit integers, as the handshake's fields carry them. */
static inline uint32_t glean_get_le32(const unsigned char *p) {
        return (uint32_t) p[3] << 24 | (uint32_t) p[2] << 16 | (uint32_t) p[1] << 8 | (uint32_t) p[0];
}

static inline void glean_put_le32(unsigned char *p, uint32_t v) {
        p[0] = (unsigned char) v;
        p[1] = (unsigned char) (v >> 8);
        p[2] = (unsigned char) (v >> 16);
        p[3] = (unsigned char) (v >> 24);
}

/* Monotonic deadlines in milliseconds; timeout_ms < 0 means none (-1). */
static inline int64_t glean_now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static inline int64_t glean_deadline(int timeout_ms) {
        return timeout_ms < 0 ? -1 : glean_now_ms() + timeout_ms;
}

/* Milliseconds left before deadline, for poll(): -1 none, 0 expired. */
static inline int glean_remaining_ms(int64_t deadline) {
        if (deadline < 0)
                return -1;
        int64_t left = deadline - glean_now_ms();
        if (left <= 0)
                return 0;
        return left > INT32_MAX ? INT32_MAX : (int) left;
}

/* Waits until fd is ready for events (POLLIN or POLLOUT) or the deadline
 * passes: 0 ready (or hung up: the next read/write says what), -ETIMEDOUT,
 * -errno. Implemented in frame.c. */
int glean_wait_fd(int fd, short events, int64_t deadline);

/* ---- a byte queue (buf.c) ---- */

/* Bytes appended at the end and consumed from the front; all zeros is
 * empty. data + start .. data + end are queued, cap is allocated. */
typedef struct GleanBuf {
        unsigned char *data;
        size_t start, end, cap;
} GleanBuf;

/* Room for at least n more bytes at the end (moving what is queued to the
 * front, or growing): a pointer to it, or NULL when memory runs out. The
 * caller writes there, then adds what it wrote to end. */
unsigned char *glean_buf_tail(GleanBuf *b, size_t n);

/* Drops n bytes (at most all) from the front; once empty, a buffer of
 * more than keep bytes is freed, so that one big message does not pin its
 * memory for the rest of a connection's life. */
void glean_buf_consume(GleanBuf *b, size_t n, size_t keep);

/* Frees the buffer; b is empty afterwards. */
void glean_buf_done(GleanBuf *b);

static inline size_t glean_buf_size(const GleanBuf *b) {
        return b->end - b->start;
}


/* ---- frame reader internals, for layers that wrap frames (secure.c);
 * implemented in frame.c ---- */

/* Sets the largest declared length accepted from now on (0: the default,
 * GLEAN_FRAME_MAX). Unlike glean_frame_reader_new() it does not clamp: a
 * layer that wraps payloads needs a little more than GLEAN_FRAME_MAX. */
void glean_frame_reader_set_max(GleanFrameReader *r, size_t max);

/* The next whole frame without copying it: 1 with *ret pointing at its
 * payload in the reader's buffer (valid until the next feed, fill or
 * drop) and *ret_len its length; 0 when more bytes are needed; the header
 * errors as glean_frame_reader_next(). */
int glean_frame_reader_peek(GleanFrameReader *r, const unsigned char **ret, size_t *ret_len);

/* Removes the frame the last peek returned 1 for. */
void glean_frame_reader_drop(GleanFrameReader *r);

/* One read() from fd into the buffer, of at least chunk bytes when the fd
 * has them (0: 64 KiB): 1 bytes came, 0 the fd would block, -EPIPE end of
 * file, -errno (EINTR retried). */
int glean_frame_reader_fill(GleanFrameReader *r, int fd, size_t chunk);

/* One send() (MSG_NOSIGNAL; write() on what is not a socket) of up to len
 * bytes: the number written, -EAGAIN when the fd would block, -errno
 * (EINTR retried). */
ssize_t glean_send_some(int fd, const void *buf, size_t len);

/* sodium_init(), run once per process (thread-safe): 0, or -EIO when
 * libsodium cannot be initialised. Implemented in poolkey.c. */
int glean_sodium_init(void);

/* The pool key's subkeys (crypto_kdf_derive_from_key(), this context):
 * see secure.h. */
#define GLEAN_POOL_KDF_CONTEXT "glnpool1"
enum {
        GLEAN_POOL_KDF_AUTH = 1,
        GLEAN_POOL_KDF_SESSION = 2,
        GLEAN_POOL_KDF_FINGERPRINT = 3,
};

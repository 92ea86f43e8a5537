/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-frame.c — length-prefixed frames (common/proto.h): the incremental
 * reader fed whole, byte by byte and with many frames at once; bad headers;
 * reading from and writing to sockets (end of file in the middle of a frame,
 * a writer blocked on a full socket buffer while a thread drains it,
 * timeouts, a closed peer without SIGPIPE).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "proto.h"
#include "test-util.h"

/* header + payload of one frame, malloc'd; *ret_len its size */
static unsigned char *encode(const void *payload, uint32_t n, size_t *ret_len) {
        unsigned char *b = malloc(4 + (size_t) n);

        CU_ASSERT_FATAL(b != NULL);
        b[0] = (unsigned char) (n >> 24);
        b[1] = (unsigned char) (n >> 16);
        b[2] = (unsigned char) (n >> 8);
        b[3] = (unsigned char) n;
        if (n)
                memcpy(b + 4, payload, n);
        *ret_len = 4 + (size_t) n;
        return b;
}

static GleanFrameReader *new_reader(size_t max) {
        GleanFrameReader *r = NULL;

        CU_ASSERT_FATAL(glean_frame_reader_new(max, &r) == 0 && r);
        return r;
}

static void socket_pair(int fds[2], bool nonblock) {
        int type = SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0);

        CU_ASSERT_FATAL(socketpair(AF_UNIX, type, 0, fds) == 0);
}

static void test_round_trip(void) {
        const char *msg = "[ Command = \"Status\" ]";
        size_t n;
        unsigned char *b = encode(msg, (uint32_t) strlen(msg), &n);
        GleanFrameReader *r = new_reader(0);
        char *out = NULL;
        size_t len = 0;

        CU_ASSERT_EQUAL(glean_frame_reader_next(r, &out, &len), 0);
        CU_ASSERT_EQUAL(glean_frame_reader_feed(r, b, n), 0);
        CU_ASSERT_EQUAL(glean_frame_reader_buffered(r), n);
        CU_ASSERT_EQUAL_FATAL(glean_frame_reader_next(r, &out, &len), 1);
        CU_ASSERT_EQUAL(len, strlen(msg));
        CU_ASSERT_STRING_EQUAL(out, msg);
        CU_ASSERT_EQUAL(out[len], '\0');
        CU_ASSERT_EQUAL(glean_frame_reader_buffered(r), 0);
        free(out);
        out = NULL;
        CU_ASSERT_EQUAL(glean_frame_reader_next(r, &out, &len), 0);
        CU_ASSERT_PTR_NULL(out);
        glean_frame_reader_free(r);
        glean_frame_reader_free(NULL);
        free(b);
}

/* A payload with NUL bytes and every byte value comes out unchanged. */
static void test_binary_payload(void) {
        unsigned char payload[512];
        size_t n;
        GleanFrameReader *r = new_reader(0);
        char *out = NULL;
        size_t len;

        for (size_t i = 0; i < sizeof(payload); i++)
                payload[i] = (unsigned char) i;
        unsigned char *b = encode(payload, sizeof(payload), &n);
        CU_ASSERT_EQUAL(glean_frame_reader_feed(r, b, n), 0);
        CU_ASSERT_EQUAL_FATAL(glean_frame_reader_next(r, &out, &len), 1);
        CU_ASSERT_EQUAL(len, sizeof(payload));
        CU_ASSERT(memcmp(out, payload, sizeof(payload)) == 0);
        free(out);
        glean_frame_reader_free(r);
        free(b);
}

static void test_byte_by_byte(void) {
        const char *msg = "[ Command = \"KeepAlive\"; ClaimId = \"abc\" ]";
        size_t n;
        unsigned char *b = encode(msg, (uint32_t) strlen(msg), &n);
        GleanFrameReader *r = new_reader(0);
        char *out = NULL;
        size_t len;

        for (size_t i = 0; i < n; i++) {
                CU_ASSERT_EQUAL(glean_frame_reader_feed(r, b + i, 1), 0);
                int got = glean_frame_reader_next(r, &out, &len);
                GLEAN_TEST_CHECK(got == (i + 1 == n ? 1 : 0), "after byte %zu of %zu: %d", i + 1, n, got);
        }
        CU_ASSERT_PTR_NOT_NULL_FATAL(out);
        CU_ASSERT_STRING_EQUAL(out, msg);
        free(out);
        glean_frame_reader_free(r);
        free(b);
}

static void test_many_frames_one_feed(void) {
        char all[8192];
        size_t used = 0, n;
        char payloads[5][64];
        GleanFrameReader *r = new_reader(0);
        char *out;
        size_t len;

        for (int i = 0; i < 5; i++) {
                snprintf(payloads[i], sizeof(payloads[i]), "[ Command = \"Event\"; Transition = %d ]", i);
                unsigned char *b = encode(payloads[i], (uint32_t) strlen(payloads[i]), &n);
                /* the last frame only partly */
                size_t take = i == 4 ? n - 3 : n;
                memcpy(all + used, b, take);
                used += take;
                free(b);
        }
        CU_ASSERT_EQUAL(glean_frame_reader_feed(r, all, used), 0);
        for (int i = 0; i < 4; i++) {
                out = NULL;
                CU_ASSERT_EQUAL_FATAL(glean_frame_reader_next(r, &out, &len), 1);
                CU_ASSERT_STRING_EQUAL(out, payloads[i]);
                free(out);
        }
        CU_ASSERT_EQUAL(glean_frame_reader_next(r, &out, &len), 0);
        /* the rest of the fifth */
        size_t l4 = strlen(payloads[4]);
        CU_ASSERT_EQUAL(glean_frame_reader_feed(r, payloads[4] + l4 - 3, 3), 0);
        out = NULL;
        CU_ASSERT_EQUAL_FATAL(glean_frame_reader_next(r, &out, &len), 1);
        CU_ASSERT_STRING_EQUAL(out, payloads[4]);
        free(out);
        CU_ASSERT_EQUAL(glean_frame_reader_buffered(r), 0);
        glean_frame_reader_free(r);
}

static void test_bad_headers(void) {
        static const struct {
                const char *what;
                size_t max;
                unsigned char header[4];
                int want;
        } rows[] = {
                { "zero length", 0, { 0, 0, 0, 0 }, -EBADMSG },
                { "one above the limit", 16, { 0, 0, 0, 17 }, -EMSGSIZE },
                { "exactly the limit (incomplete)", 16, { 0, 0, 0, 16 }, 0 },
                { "1 MiB + 1 with the default limit", 0, { 0, 0x10, 0, 1 }, -EMSGSIZE },
                { "1 MiB exactly (incomplete)", 0, { 0, 0x10, 0, 0 }, 0 },
                { "4 GiB - 1", 0, { 0xff, 0xff, 0xff, 0xff }, -EMSGSIZE },
                { "a limit above GLEAN_FRAME_MAX is clamped", 8u * 1024 * 1024, { 0, 0x20, 0, 0 }, -EMSGSIZE },
        };

        for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
                GleanFrameReader *r = new_reader(rows[i].max);
                char *out = NULL;
                size_t len;

                CU_ASSERT_EQUAL(glean_frame_reader_feed(r, rows[i].header, 4), 0);
                int got = glean_frame_reader_next(r, &out, &len);
                GLEAN_TEST_CHECK(got == rows[i].want, "%s: got %d, want %d", rows[i].what, got, rows[i].want);
                if (rows[i].want < 0) {
                        /* sticky: more bytes do not resynchronise */
                        CU_ASSERT_EQUAL(glean_frame_reader_feed(r, "\0\0\0\1x", 5), rows[i].want);
                        got = glean_frame_reader_next(r, &out, &len);
                        GLEAN_TEST_CHECK(got == rows[i].want, "%s, again: got %d", rows[i].what, got);
                }
                CU_ASSERT_PTR_NULL(out);
                glean_frame_reader_free(r);
        }
}

/* A good frame, then a bad header: the good one still comes out. */
static void test_good_then_bad(void) {
        GleanFrameReader *r = new_reader(0);
        unsigned char bytes[] = { 0, 0, 0, 2, 'h', 'i', 0, 0, 0, 0 };
        char *out = NULL;
        size_t len;

        CU_ASSERT_EQUAL(glean_frame_reader_feed(r, bytes, sizeof(bytes)), 0);
        CU_ASSERT_EQUAL_FATAL(glean_frame_reader_next(r, &out, &len), 1);
        CU_ASSERT_STRING_EQUAL(out, "hi");
        free(out);
        CU_ASSERT_EQUAL(glean_frame_reader_next(r, &out, &len), -EBADMSG);
        glean_frame_reader_free(r);
}

static void test_write_refuses(void) {
        int fds[2];
        char *big = calloc(1, GLEAN_FRAME_MAX + 1);

        socket_pair(fds, true);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "", 0, 100), -EINVAL);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], NULL, 3, 100), -EINVAL);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], big, GLEAN_FRAME_MAX + 1, 100), -EMSGSIZE);
        free(big);
        close(fds[0]);
        close(fds[1]);
}

/* Frames written on one end come out of glean_frame_read() on the other. */
static void test_socket_read(void) {
        int fds[2];
        GleanFrameReader *r = new_reader(0);
        char *out = NULL;
        size_t len;

        socket_pair(fds, true);
        CU_ASSERT_EQUAL(glean_frame_read(r, fds[1], &out, &len), 0); /* nothing there */
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "one", 3, 1000), 0);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "two!", 4, 1000), 0);
        CU_ASSERT_EQUAL_FATAL(glean_frame_read(r, fds[1], &out, &len), 1);
        CU_ASSERT_STRING_EQUAL(out, "one");
        CU_ASSERT_EQUAL(len, 3);
        free(out);
        CU_ASSERT_EQUAL_FATAL(glean_frame_read(r, fds[1], &out, &len), 1);
        CU_ASSERT_STRING_EQUAL(out, "two!");
        free(out);
        CU_ASSERT_EQUAL(glean_frame_read(r, fds[1], &out, &len), 0);
        close(fds[0]);
        /* clean EOF between frames */
        CU_ASSERT_EQUAL(glean_frame_read(r, fds[1], &out, &len), -EPIPE);
        close(fds[1]);
        glean_frame_reader_free(r);
}

static void test_eof_mid_frame(void) {
        int fds[2];
        unsigned char partial[] = { 0, 0, 0, 100, '[', ' ', 'a', ' ', '=' };
        char *out = NULL;
        size_t len;

        /* non-blocking reader */
        GleanFrameReader *r = new_reader(0);
        socket_pair(fds, true);
        CU_ASSERT_EQUAL(write(fds[0], partial, sizeof(partial)), (ssize_t) sizeof(partial));
        CU_ASSERT_EQUAL(glean_frame_read(r, fds[1], &out, &len), 0);
        close(fds[0]);
        CU_ASSERT_EQUAL(glean_frame_read(r, fds[1], &out, &len), -EPIPE);
        CU_ASSERT_PTR_NULL(out);
        close(fds[1]);
        glean_frame_reader_free(r);

        /* blocking receive, in the header and in the payload */
        for (size_t cut = 2; cut <= sizeof(partial); cut += sizeof(partial) - 2) {
                socket_pair(fds, false);
                CU_ASSERT_EQUAL(write(fds[0], partial, cut), (ssize_t) cut);
                close(fds[0]);
                int got = glean_frame_recv(fds[1], 0, 2000, &out, &len);
                GLEAN_TEST_CHECK(got == -EPIPE, "EOF after %zu bytes: %d", cut, got);
                close(fds[1]);
        }
}

/* glean_frame_recv() takes one frame and leaves the next in the socket. */
static void test_recv_exactly_one(void) {
        int fds[2];
        char *out = NULL;
        size_t len;

        socket_pair(fds, false);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "first", 5, 1000), 0);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "second", 6, 1000), 0);
        CU_ASSERT_EQUAL_FATAL(glean_frame_recv(fds[1], 0, 1000, &out, &len), 0);
        CU_ASSERT_STRING_EQUAL(out, "first");
        free(out);
        CU_ASSERT_EQUAL_FATAL(glean_frame_recv(fds[1], 0, 1000, &out, &len), 0);
        CU_ASSERT_STRING_EQUAL(out, "second");
        CU_ASSERT_EQUAL(len, 6);
        free(out);
        out = NULL;

        /* too long for the caller's limit; zero length */
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "0123456789", 10, 1000), 0);
        CU_ASSERT_EQUAL(glean_frame_recv(fds[1], 4, 1000, &out, &len), -EMSGSIZE);
        close(fds[0]);
        close(fds[1]);
        socket_pair(fds, false);
        CU_ASSERT_EQUAL(write(fds[0], "\0\0\0\0", 4), 4);
        CU_ASSERT_EQUAL(glean_frame_recv(fds[1], 0, 1000, &out, &len), -EBADMSG);
        CU_ASSERT_PTR_NULL(out);
        close(fds[0]);
        close(fds[1]);
}

static void test_recv_timeout(void) {
        int fds[2];
        char *out = NULL;
        size_t len;
        struct timespec a, b;

        socket_pair(fds, false); /* blocking: the timeout must still hold */
        clock_gettime(CLOCK_MONOTONIC, &a);
        CU_ASSERT_EQUAL(glean_frame_recv(fds[1], 0, 150, &out, &len), -ETIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (double) (b.tv_sec - a.tv_sec) * 1e3 + (double) (b.tv_nsec - a.tv_nsec) / 1e6;
        GLEAN_TEST_CHECK(ms >= 140 && ms < 2000, "timed out after %.0f ms, want about 150", ms);
        /* a header but half the payload: still a timeout */
        CU_ASSERT_EQUAL(write(fds[0], "\0\0\0\10abcd", 8), 8);
        CU_ASSERT_EQUAL(glean_frame_recv(fds[1], 0, 100, &out, &len), -ETIMEDOUT);
        CU_ASSERT_PTR_NULL(out);
        close(fds[0]);
        close(fds[1]);
}

typedef struct Drain {
        int fd;
        int result;
        char *payload;
        size_t len;
} Drain;

static void *drain_thread(void *arg) {
        Drain *d = arg;

        /* let the writer fill the buffer first */
        usleep(50 * 1000);
        d->result = glean_frame_recv(d->fd, 0, 20000, &d->payload, &d->len);
        return NULL;
}

/* A frame much larger than the socket buffer on a non-blocking socket: the
 * writer waits (poll) while the reader thread drains. */
static void test_write_full_buffer(void) {
        int fds[2], small = 4096;
        size_t n = GLEAN_FRAME_MAX;
        char *big = malloc(n);
        pthread_t t;
        Drain d = {};

        CU_ASSERT_FATAL(big != NULL);
        for (size_t i = 0; i < n; i++)
                big[i] = (char) ('a' + i % 26);
        socket_pair(fds, true);
        CU_ASSERT_EQUAL(setsockopt(fds[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof(small)), 0);
        CU_ASSERT_EQUAL(setsockopt(fds[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);

        d.fd = fds[1];
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, drain_thread, &d), 0);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], big, n, 20000), 0);
        pthread_join(t, NULL);
        CU_ASSERT_EQUAL(d.result, 0);
        CU_ASSERT_EQUAL(d.len, n);
        CU_ASSERT(d.payload && memcmp(d.payload, big, n) == 0);
        free(d.payload);

        /* nobody reading: the write times out */
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], big, n, 100), -ETIMEDOUT);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double ms = (double) (b.tv_sec - a.tv_sec) * 1e3 + (double) (b.tv_nsec - a.tv_nsec) / 1e6;
        GLEAN_TEST_CHECK(ms >= 90 && ms < 2000, "write timed out after %.0f ms, want about 100", ms);

        free(big);
        close(fds[0]);
        close(fds[1]);
}

/* Writing to a closed peer is -EPIPE, not a SIGPIPE that ends the process. */
static void test_write_closed_peer(void) {
        int fds[2];
        struct sigaction old, dfl = { .sa_handler = SIG_DFL };

        sigaction(SIGPIPE, &dfl, &old);
        socket_pair(fds, true);
        close(fds[1]);
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], "hello", 5, 1000), -EPIPE);
        close(fds[0]);
        sigaction(SIGPIPE, &old, NULL);
}

/* Not a socket: a pipe works too (writev). */
static void test_pipe(void) {
        int p[2];
        char *out = NULL;
        size_t len;

        CU_ASSERT_FATAL(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0);
        CU_ASSERT_EQUAL(glean_frame_write(p[1], "piped", 5, 1000), 0);
        CU_ASSERT_EQUAL_FATAL(glean_frame_recv(p[0], 0, 1000, &out, &len), 0);
        CU_ASSERT_STRING_EQUAL(out, "piped");
        free(out);
        close(p[0]);
        close(p[1]);
}

/* The output queue: frames pushed (a listing of many), drained into a
 * socket with a small buffer a piece at a time as an event loop would,
 * come out whole and in order; refusals leave it unchanged; a drained
 * queue lets its memory go. */
static void test_outq(void) {
        int sv[2];
        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sv) == 0);
        int small = 4096;
        setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
        setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
        GleanOutQueue q = {};
        enum { N = 3000 };
        char payload[300];

        CU_ASSERT_EQUAL(glean_outq_push(&q, "x", 0, SIZE_MAX), -EMSGSIZE);
        CU_ASSERT_EQUAL(glean_outq_push(&q, payload, GLEAN_FRAME_MAX + 1, SIZE_MAX), -EMSGSIZE);
        CU_ASSERT_EQUAL(glean_outq_size(&q), 0);
        for (int i = 0; i < N; i++) {
                int len = snprintf(payload, sizeof payload, "[ Command = \"Reply\"; Ok = true; N = %d ]", i);
                CU_ASSERT_EQUAL_FATAL(glean_outq_push(&q, payload, (size_t) len, SIZE_MAX), 0);
        }
        size_t queued = glean_outq_size(&q);
        CU_ASSERT(queued > 100000);
        /* a limit refuses what would pass it, and keeps what is there */
        CU_ASSERT_EQUAL(glean_outq_push(&q, payload, 10, queued + 5), -ENOBUFS);
        CU_ASSERT_EQUAL(glean_outq_size(&q), queued);

        GleanFrameReader *rd = NULL;
        CU_ASSERT_FATAL(glean_frame_reader_new(0, &rd) == 0);
        int next = 0, flushes = 0, r;
        while ((r = glean_outq_flush(&q, sv[0])) == 0 || next < N) {
                CU_ASSERT_FATAL(r >= 0);
                flushes++;
                char *frame;
                size_t len;
                int k;
                while ((k = glean_frame_read(rd, sv[1], &frame, &len)) == 1) {
                        char want[100];
                        snprintf(want, sizeof want, "[ Command = \"Reply\"; Ok = true; N = %d ]", next);
                        GLEAN_TEST_CHECK(strcmp(frame, want) == 0, "frame %d: %s", next, frame);
                        next++;
                        free(frame);
                }
                CU_ASSERT_FATAL(k == 0);
                if (r == 1 && next >= N)
                        break;
        }
        CU_ASSERT_EQUAL(next, N);
        CU_ASSERT(flushes > 2); /* it did drain in pieces */
        CU_ASSERT_EQUAL(glean_outq_size(&q), 0);
        CU_ASSERT_PTR_NULL(q.data); /* a big drained queue keeps no memory */
        CU_ASSERT_EQUAL(glean_outq_flush(&q, sv[0]), 1);

        /* a peer gone: the error, for the caller to close */
        CU_ASSERT_EQUAL(glean_outq_push(&q, "[ ]", 3, SIZE_MAX), 0);
        close(sv[1]);
        CU_ASSERT_EQUAL(glean_outq_flush(&q, sv[0]), -EPIPE);
        glean_outq_clear(&q);
        glean_frame_reader_free(rd);
        close(sv[0]);
}

static CU_TestInfo tests[] = {
        { "round trip", test_round_trip },
        { "binary payload", test_binary_payload },
        { "byte by byte", test_byte_by_byte },
        { "many frames in one feed", test_many_frames_one_feed },
        { "bad headers", test_bad_headers },
        { "good frame then bad header", test_good_then_bad },
        { "write refuses empty and oversize", test_write_refuses },
        { "read from a socket", test_socket_read },
        { "EOF in the middle of a frame", test_eof_mid_frame },
        { "recv takes exactly one frame", test_recv_exactly_one },
        { "recv timeout", test_recv_timeout },
        { "write with a full socket buffer", test_write_full_buffer },
        { "write to a closed peer", test_write_closed_peer },
        { "pipe", test_pipe },
        { "output queue", test_outq },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "frame", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

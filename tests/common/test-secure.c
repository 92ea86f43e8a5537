/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-secure.c — the pool's sealed transport (common/secure.h). In memory
 * (two state machines passing bytes): the handshake, fed whole and byte by
 * byte; frames both ways (1 MiB ones, many small ones); a wrong key on
 * either side; every byte of every handshake message and of a sealed frame
 * altered; a replayed, reordered, dropped or foreign frame; a whole
 * recorded session replayed to fresh ends; oversized and empty lengths;
 * other versions and roles; timeouts; errors that stick. Over file
 * descriptors: the blocking helpers against an echoing thread on a
 * socketpair and on TCP over 127.0.0.1, an event loop of non-blocking
 * reads and flushes, a truncated stream, a handshake that times out.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "secure.h"
#include "test-util.h"

#define MIB (1024u * 1024u)
#define TIMEOUT_MS 10000

static GleanPoolKey key1, key2;

/* ---- helpers ---- */

typedef struct Bytes {
        unsigned char *data;
        size_t len, cap;
} Bytes;

static void bytes_add(Bytes *b, const void *p, size_t n) {
        if (n == 0)
                return;
        if (b->len + n > b->cap) {
                b->cap = (b->len + n) * 2;
                b->data = realloc(b->data, b->cap);
                CU_ASSERT_FATAL(b->data != NULL);
        }
        memcpy(b->data + b->len, p, n);
        b->len += n;
}

static void bytes_done(Bytes *b) {
        free(b->data);
        *b = (Bytes){};
}

/* Takes everything s has to send (appended to b). */
static void take_output(GleanSecure *s, Bytes *b) {
        const void *p;
        size_t n = glean_secure_output(s, &p);

        bytes_add(b, p, n);
        glean_secure_output_consume(s, n);
}

/* Moves from's output into to; records it in rec when not NULL. */
static int shuttle(GleanSecure *from, GleanSecure *to, Bytes *rec) {
        Bytes b = {};
        int r;

        take_output(from, &b);
        if (rec)
                bytes_add(rec, b.data, b.len);
        r = glean_secure_feed(to, b.data, b.len);
        bytes_done(&b);
        return r;
}

static GleanSecure *new_end(GleanSecureRole role, const GleanPoolKey *key) {
        GleanSecure *s = NULL;

        CU_ASSERT_EQUAL_FATAL(glean_secure_new(role, key, &s), 0);
        CU_ASSERT_FATAL(s != NULL);
        return s;
}

/* Passes bytes both ways until nothing moves; rec_a/rec_n (may be NULL)
 * record what each end sent. */
static void run_mem(GleanSecure *a, GleanSecure *n, Bytes *rec_a, Bytes *rec_n) {
        for (int i = 0; i < 4; i++) {
                (void) shuttle(a, n, rec_a);
                (void) shuttle(n, a, rec_n);
        }
}

/* An agent and a negotiator with a finished handshake. */
static void pair(GleanSecure **ret_a, GleanSecure **ret_n) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &key1), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);

        run_mem(a, n, NULL, NULL);
        GLEAN_TEST_CHECK_FATAL(glean_secure_established(a) && glean_secure_established(n),
                               "handshake failed: agent \"%s\", negotiator \"%s\"", glean_secure_reason(a),
                               glean_secure_reason(n));
        *ret_a = a;
        *ret_n = n;
}

static unsigned char *pattern(size_t n, unsigned seed) {
        unsigned char *p = malloc(n ? n : 1);

        CU_ASSERT_FATAL(p != NULL);
        for (size_t i = 0; i < n; i++)
                p[i] = (unsigned char) (i * 131u + seed * 7u + (i >> 11));
        return p;
}

/* The next frame of s must be payload. */
static void expect_frame(GleanSecure *s, const void *payload, size_t len) {
        char *m = NULL;
        size_t n = 0;
        int r = glean_secure_next_frame(s, &m, &n);

        GLEAN_TEST_CHECK_FATAL(r == 1, "next_frame gave %d (%s), want a frame of %zu bytes", r, glean_secure_reason(s),
                               len);
        CU_ASSERT_EQUAL(n, len);
        CU_ASSERT(n == len && memcmp(m, payload, len) == 0);
        CU_ASSERT_EQUAL(m[n], '\0');
        free(m);
}

/* One sealed frame's wire bytes from s. */
static void seal_to(GleanSecure *s, const void *payload, size_t len, Bytes *b) {
        CU_ASSERT_EQUAL_FATAL(glean_secure_seal(s, payload, len), 0);
        take_output(s, b);
}

static bool contains(const char *s, const char *what) {
        return s && strstr(s, what) != NULL;
}

/* ---- in memory ---- */

static void test_handshake_and_frames(void) {
        GleanSecure *a, *n;
        char *m = NULL;

        pair(&a, &n);
        CU_ASSERT_EQUAL(glean_secure_error(a), 0);
        CU_ASSERT_STRING_EQUAL(glean_secure_reason(a), "");
        CU_ASSERT_EQUAL(glean_secure_next_frame(n, &m, NULL), 0);

        /* both directions, the smallest and the largest */
        for (unsigned i = 0; i < 2; i++) {
                GleanSecure *from = i ? n : a, *to = i ? a : n;
                unsigned char *big = pattern(GLEAN_FRAME_MAX, i);
                CU_ASSERT_EQUAL(glean_secure_seal(from, "x", 1), 0);
                CU_ASSERT_EQUAL(glean_secure_seal(from, big, GLEAN_FRAME_MAX), 0);
                CU_ASSERT_EQUAL(glean_secure_seal(from, big, 200), 0);
                const void *p;
                CU_ASSERT_EQUAL(glean_secure_output(from, &p),
                                3 * (4 + GLEAN_SECURE_OVERHEAD) + 1 + GLEAN_FRAME_MAX + 200);
                CU_ASSERT_EQUAL(shuttle(from, to, NULL), 0);
                expect_frame(to, "x", 1);
                expect_frame(to, big, GLEAN_FRAME_MAX);
                expect_frame(to, big, 200);
                CU_ASSERT_EQUAL(glean_secure_next_frame(to, &m, NULL), 0);
                free(big);
        }

        /* many small ones, interleaved */
        for (unsigned i = 0; i < 5000; i++) {
                char msg[64];
                int len = snprintf(msg, sizeof(msg), "[ Command = \"KeepAlive\"; RequestId = %u ]", i);
                GleanSecure *from = i % 3 ? a : n, *to = i % 3 ? n : a;
                CU_ASSERT_EQUAL_FATAL(glean_secure_seal(from, msg, (size_t) len), 0);
                CU_ASSERT_EQUAL_FATAL(shuttle(from, to, NULL), 0);
                expect_frame(to, msg, (size_t) len);
        }
        glean_secure_free(a);
        glean_secure_free(n);
        glean_secure_free(NULL);
}

/* The handshake and a frame fed one byte at a time. */
static void test_byte_by_byte(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &key1), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
        Bytes ba = {}, bn = {};

        for (int round = 0; round < 3; round++) {
                take_output(a, &ba);
                take_output(n, &bn);
                for (size_t i = 0; i < ba.len; i++)
                        CU_ASSERT_EQUAL_FATAL(glean_secure_feed(n, ba.data + i, 1), 0);
                for (size_t i = 0; i < bn.len; i++)
                        CU_ASSERT_EQUAL_FATAL(glean_secure_feed(a, bn.data + i, 1), 0);
                ba.len = bn.len = 0;
        }
        CU_ASSERT_FATAL(glean_secure_established(a) && glean_secure_established(n));

        seal_to(n, "[ Command = \"Match\" ]", 21, &bn);
        for (size_t i = 0; i < bn.len; i++) {
                char *m = NULL;
                CU_ASSERT_EQUAL(glean_secure_next_frame(a, &m, NULL), 0);
                CU_ASSERT_EQUAL_FATAL(glean_secure_feed(a, bn.data + i, 1), 0);
        }
        expect_frame(a, "[ Command = \"Match\" ]", 21);
        bytes_done(&ba);
        bytes_done(&bn);
        glean_secure_free(a);
        glean_secure_free(n);
}

static void test_wrong_key(void) {
        for (int side = 0; side < 2; side++) {
                GleanSecure *a = new_end(GLEAN_SECURE_AGENT, side ? &key2 : &key1);
                GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, side ? &key1 : &key2);

                run_mem(a, n, NULL, NULL);
                CU_ASSERT_FALSE(glean_secure_established(a));
                CU_ASSERT_FALSE(glean_secure_established(n));
                CU_ASSERT_EQUAL(glean_secure_error(a), -EPERM);
                CU_ASSERT_EQUAL(glean_secure_error(n), -EPERM);
                GLEAN_TEST_CHECK(contains(glean_secure_reason(a), "the negotiator did not prove it holds the pool key"),
                                 "agent's reason: %s", glean_secure_reason(a));
                GLEAN_TEST_CHECK(contains(glean_secure_reason(n), "the agent did not prove it holds the pool key"),
                                 "negotiator's reason: %s", glean_secure_reason(n));
                CU_ASSERT_EQUAL(glean_secure_seal(a, "x", 1), -EPERM);
                glean_secure_free(a);
                glean_secure_free(n);
        }
}

/* Every byte of every handshake message (length prefix included) altered
 * in turn: the end that receives it never gets established. */
static void test_handshake_altered(void) {
        enum { A_HELLO, N_HELLO, A_AUTH, N_AUTH, N_MSGS };
        const size_t sizes[N_MSGS] = { 4 + GLEAN_SECURE_HELLO_SIZE, 4 + GLEAN_SECURE_HELLO_SIZE,
                                       4 + GLEAN_SECURE_AUTH_SIZE, 4 + GLEAN_SECURE_AUTH_SIZE };
        unsigned tried = 0;

        for (int msg = 0; msg < N_MSGS; msg++)
                for (size_t at = 0; at < sizes[msg]; at++) {
                        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &key1);
                        GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
                        Bytes m[N_MSGS] = {};

                        take_output(a, &m[A_HELLO]);
                        take_output(n, &m[N_HELLO]);
                        for (int step = 0; step < N_MSGS; step++) {
                                GleanSecure *to = step == A_HELLO || step == A_AUTH ? n : a;
                                GleanSecure *from = to == a ? n : a;
                                if (step >= A_AUTH)
                                        take_output(from, &m[step]);
                                /* No AUTH from an end that refused the altered HELLO
                                 * or waits for the rest of a longer one. */
                                GLEAN_TEST_CHECK(m[step].len == sizes[step] || (m[step].len == 0 && step >= A_AUTH &&
                                                                                msg == N_AUTH - step),
                                                 "message %d, byte %zu altered: message %d has %zu bytes", msg,
                                                 at, step, m[step].len);
                                if (m[step].len == 0)
                                        continue;
                                if (step == msg)
                                        m[step].data[at] ^= 0x01;
                                (void) glean_secure_feed(to, m[step].data, m[step].len);
                        }
                        GleanSecure *victim = msg == A_HELLO || msg == A_AUTH ? n : a;
                        GLEAN_TEST_CHECK(!glean_secure_established(victim),
                                         "message %d with byte %zu altered was accepted", msg, at);
                        for (int i = 0; i < N_MSGS; i++)
                                bytes_done(&m[i]);
                        glean_secure_free(a);
                        glean_secure_free(n);
                        tried++;
                }
        CU_ASSERT_EQUAL(tried, 2 * (4 + GLEAN_SECURE_HELLO_SIZE) + 2 * (4 + GLEAN_SECURE_AUTH_SIZE));
}

/* Every byte of a sealed frame altered in turn (its length, the
 * ciphertext, the tag, the MAC): never a frame out. */
static void test_frame_altered(void) {
        unsigned char *payload = pattern(40, 1);
        size_t wire = 4 + 40 + GLEAN_SECURE_OVERHEAD;

        for (size_t at = 0; at < wire; at++)
                for (unsigned mask = 0x01; mask <= 0x80; mask <<= 7) {
                        GleanSecure *a, *n;
                        Bytes b = {};
                        char *m = NULL;

                        pair(&a, &n);
                        seal_to(a, payload, 40, &b);
                        CU_ASSERT_EQUAL_FATAL(b.len, wire);
                        b.data[at] ^= (unsigned char) mask;
                        int fed = glean_secure_feed(n, b.data, b.len);
                        int r = fed < 0 ? fed : glean_secure_next_frame(n, &m, NULL);
                        if (at < 4 && (b.data[at] & mask)) /* a longer length: not all there (yet) */
                                GLEAN_TEST_CHECK(r == 0 || r == -EMSGSIZE, "byte %zu ^ %#x: %d", at, mask, r);
                        else
                                GLEAN_TEST_CHECK(r == -EBADMSG, "byte %zu ^ %#x: %d (%s)", at, mask, r,
                                                 glean_secure_reason(n));
                        if (r == -EBADMSG && at >= 4)
                                GLEAN_TEST_CHECK(contains(glean_secure_reason(n), "does not authenticate"),
                                                 "reason: %s", glean_secure_reason(n));
                        if (r < 0) {
                                /* the genuine frame after it does not help */
                                b.data[at] ^= (unsigned char) mask;
                                CU_ASSERT_EQUAL(glean_secure_feed(n, b.data, b.len), r);
                                CU_ASSERT_EQUAL(glean_secure_next_frame(n, &m, NULL), r);
                        }
                        CU_ASSERT_PTR_NULL(m);
                        bytes_done(&b);
                        glean_secure_free(a);
                        glean_secure_free(n);
                }
        free(payload);
}

static void test_replayed_frame(void) {
        GleanSecure *a, *n;
        Bytes f1 = {}, f2 = {};
        char *m = NULL;

        pair(&a, &n);
        seal_to(a, "first", 5, &f1);
        seal_to(a, "second", 6, &f2);
        CU_ASSERT_EQUAL(glean_secure_feed(n, f1.data, f1.len), 0);
        expect_frame(n, "first", 5);
        /* the same bytes again */
        CU_ASSERT_EQUAL(glean_secure_feed(n, f1.data, f1.len), 0);
        CU_ASSERT_EQUAL(glean_secure_next_frame(n, &m, NULL), -EBADMSG);
        GLEAN_TEST_CHECK(contains(glean_secure_reason(n), "sealed frame 2 from the agent does not authenticate"),
                         "reason: %s", glean_secure_reason(n));
        /* and the genuine next one is refused too: the error sticks */
        CU_ASSERT_EQUAL(glean_secure_feed(n, f2.data, f2.len), -EBADMSG);
        CU_ASSERT_EQUAL(glean_secure_next_frame(n, &m, NULL), -EBADMSG);
        CU_ASSERT_EQUAL(glean_secure_seal(n, "x", 1), -EBADMSG);
        CU_ASSERT_EQUAL(glean_secure_expire(n), -EBADMSG);
        CU_ASSERT_PTR_NULL(m);
        bytes_done(&f1);
        bytes_done(&f2);
        glean_secure_free(a);
        glean_secure_free(n);
}

/* Frames in the wrong order, after a dropped one, or from another session
 * under the same pool key. */
static void test_reordered_dropped_foreign(void) {
        for (int how = 0; how < 3; how++) {
                GleanSecure *a, *n, *a2, *n2;
                Bytes f1 = {}, f2 = {};
                char *m = NULL;

                pair(&a, &n);
                pair(&a2, &n2);
                seal_to(n, "one", 3, &f1);
                seal_to(how == 2 ? n2 : n, "two", 3, &f2);
                if (how == 0) {
                        CU_ASSERT_EQUAL(glean_secure_feed(a, f2.data, f2.len), 0);
                        CU_ASSERT_EQUAL(glean_secure_feed(a, f1.data, f1.len), 0);
                } else if (how == 1) {
                        CU_ASSERT_EQUAL(glean_secure_feed(a, f2.data, f2.len), 0);
                } else {
                        CU_ASSERT_EQUAL(glean_secure_feed(a, f1.data, f1.len), 0);
                        expect_frame(a, "one", 3);
                        CU_ASSERT_EQUAL(glean_secure_feed(a, f2.data, f2.len), 0);
                }
                GLEAN_TEST_CHECK(glean_secure_next_frame(a, &m, NULL) == -EBADMSG, "case %d accepted", how);
                CU_ASSERT_EQUAL(glean_secure_next_frame(a, &m, NULL), -EBADMSG);
                CU_ASSERT_PTR_NULL(m);
                bytes_done(&f1);
                bytes_done(&f2);
                glean_secure_free(a);
                glean_secure_free(n);
                glean_secure_free(a2);
                glean_secure_free(n2);
        }
}

/* Everything one end sent in a good session, replayed to a fresh end of
 * the other role with the same key: its proof no longer fits. */
static void test_replayed_session(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &key1), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
        Bytes rec_a = {}, rec_n = {};

        run_mem(a, n, &rec_a, &rec_n);
        CU_ASSERT_FATAL(glean_secure_established(a) && glean_secure_established(n));
        for (int i = 0; i < 10; i++) {
                CU_ASSERT_EQUAL(glean_secure_seal(a, "[ Command = \"Status\" ]", 22), 0);
                CU_ASSERT_EQUAL(glean_secure_seal(n, "[ Command = \"Reply\" ]", 21), 0);
        }
        CU_ASSERT_EQUAL(shuttle(a, n, &rec_a), 0);
        CU_ASSERT_EQUAL(shuttle(n, a, &rec_n), 0);
        glean_secure_free(a);
        glean_secure_free(n);

        for (int side = 0; side < 2; side++) {
                GleanSecure *fresh = new_end(side ? GLEAN_SECURE_AGENT : GLEAN_SECURE_NEGOTIATOR, &key1);
                Bytes *rec = side ? &rec_n : &rec_a;
                char *m = NULL;

                CU_ASSERT_EQUAL(glean_secure_feed(fresh, rec->data, rec->len), -EPERM);
                CU_ASSERT_FALSE(glean_secure_established(fresh));
                CU_ASSERT_EQUAL(glean_secure_next_frame(fresh, &m, NULL), -EPERM);
                CU_ASSERT_PTR_NULL(m);
                glean_secure_free(fresh);
        }
        bytes_done(&rec_a);
        bytes_done(&rec_n);
}

static void put_be32(unsigned char h[4], uint32_t v) {
        h[0] = (unsigned char) (v >> 24);
        h[1] = (unsigned char) (v >> 16);
        h[2] = (unsigned char) (v >> 8);
        h[3] = (unsigned char) v;
}

static void test_lengths(void) {
        GleanSecure *a, *n, *fresh;

        /* before the handshake: nothing longer than an AUTH */
        const uint32_t early[] = { GLEAN_SECURE_AUTH_SIZE + 1, GLEAN_SECURE_FRAME_MAX, UINT32_MAX };
        unsigned char h[4];
        for (size_t i = 0; i < sizeof(early) / sizeof(early[0]); i++) {
                fresh = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
                put_be32(h, early[i]);
                CU_ASSERT_EQUAL(glean_secure_feed(fresh, h, 4), -EMSGSIZE);
                CU_ASSERT(contains(glean_secure_reason(fresh), "announced a handshake message longer than 68 bytes"));
                glean_secure_free(fresh);
        }
        fresh = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
        put_be32(h, 0);
        CU_ASSERT_EQUAL(glean_secure_feed(fresh, h, 4), -EBADMSG);
        CU_ASSERT(contains(glean_secure_reason(fresh), "length 0"));
        glean_secure_free(fresh);

        /* an HTTP client knocking: "GET " is a length of 1.2 GB */
        fresh = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
        CU_ASSERT_EQUAL(glean_secure_feed(fresh, "GET / HTTP/1.1\r\n\r\n", 18), -EMSGSIZE);
        glean_secure_free(fresh);

        /* after it: up to GLEAN_SECURE_FRAME_MAX */
        const struct {
                uint32_t len;
                int want;
        } later[] = {
                { GLEAN_SECURE_FRAME_MAX, 0 },
                { GLEAN_SECURE_FRAME_MAX + 1, -EMSGSIZE },
                { UINT32_MAX, -EMSGSIZE },
                { 0, -EBADMSG },
        };
        for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++) {
                char *m = NULL;
                pair(&a, &n);
                put_be32(h, later[i].len);
                CU_ASSERT_EQUAL(glean_secure_feed(n, h, 4), 0); /* only buffered once established */
                int r = glean_secure_next_frame(n, &m, NULL);
                GLEAN_TEST_CHECK(r == later[i].want, "length %u: %d, want %d", later[i].len, r, later[i].want);
                if (later[i].want == -EMSGSIZE)
                        CU_ASSERT(contains(glean_secure_reason(n), "announced a frame longer than 1048593 bytes"));
                glean_secure_free(a);
                glean_secure_free(n);
        }

        /* a sealed frame too short to hold a MAC */
        pair(&a, &n);
        CU_ASSERT_EQUAL(glean_secure_feed(n, "\0\0\0\x11" "0123456789abcdefg", 4 + GLEAN_SECURE_OVERHEAD), 0);
        CU_ASSERT_EQUAL(glean_secure_next_frame(n, &(char *){ NULL }, NULL), -EBADMSG);
        CU_ASSERT(contains(glean_secure_reason(n), "too short"));
        glean_secure_free(a);
        glean_secure_free(n);
}

static void test_seal_limits(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &key1), *n;
        unsigned char *big = pattern(GLEAN_FRAME_MAX + 1, 3);

        CU_ASSERT_EQUAL(glean_secure_seal(a, "x", 1), -ENOTCONN);
        glean_secure_free(a);
        pair(&a, &n);
        CU_ASSERT_EQUAL(glean_secure_seal(a, "x", 0), -EINVAL);
        CU_ASSERT_EQUAL(glean_secure_seal(a, NULL, 1), -EINVAL);
        CU_ASSERT_EQUAL(glean_secure_seal(a, big, GLEAN_FRAME_MAX + 1), -EMSGSIZE);
        /* refusals do not break the stream */
        CU_ASSERT_EQUAL(glean_secure_seal(a, big, 10), 0);
        CU_ASSERT_EQUAL(shuttle(a, n, NULL), 0);
        expect_frame(n, big, 10);
        free(big);
        glean_secure_free(a);
        glean_secure_free(n);

        GleanSecure *s = NULL;
        CU_ASSERT_EQUAL(glean_secure_new((GleanSecureRole) 3, &key1, &s), -EINVAL);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NULL(glean_secure_role_name((GleanSecureRole) 0));
        CU_ASSERT_STRING_EQUAL(glean_secure_role_name(GLEAN_SECURE_AGENT), "agent");
}

/* A HELLO of our making with one field changed. */
static void feed_hello(GleanSecure *s, unsigned version, unsigned role, const char *magic, int want,
                       const char *reason) {
        unsigned char h[4 + GLEAN_SECURE_HELLO_SIZE] = { 0, 0, 0, GLEAN_SECURE_HELLO_SIZE };

        memcpy(h + 4, magic, 8);
        h[12] = (unsigned char) version;
        h[13] = 1;
        h[14] = (unsigned char) role;
        int r = glean_secure_feed(s, h, sizeof(h));
        GLEAN_TEST_CHECK(r == want, "version %u role %u: %d, want %d (%s)", version, role, r, want,
                         glean_secure_reason(s));
        GLEAN_TEST_CHECK(contains(glean_secure_reason(s), reason), "reason \"%s\", want \"%s\"",
                         glean_secure_reason(s), reason);
}

static void test_versions_and_roles(void) {
        const struct {
                unsigned version, role;
                const char *magic;
                int want;
                const char *reason;
        } cases[] = {
                { 1, GLEAN_SECURE_AGENT, "GLEANSEC", 0, "" },
                { 2, GLEAN_SECURE_AGENT, "GLEANSEC", -EPROTONOSUPPORT,
                  "the agent speaks pool protocol version 2, this negotiator speaks 1" },
                { 1, GLEAN_SECURE_NEGOTIATOR, "GLEANSEC", -EPROTO, "the peer claims to be a negotiator too" },
                { 1, 7, "GLEANSEC", -EBADMSG, "unknown role 7" },
                { 1, GLEAN_SECURE_AGENT, "SSH-2.0-", -EBADMSG, "not a glean pool peer" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
                feed_hello(n, cases[i].version, cases[i].role, cases[i].magic, cases[i].want, cases[i].reason);
                glean_secure_free(n);
        }

        /* a HELLO where an AUTH must come */
        GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, &key1);
        feed_hello(n, 1, GLEAN_SECURE_AGENT, "GLEANSEC", 0, "");
        feed_hello(n, 1, GLEAN_SECURE_AGENT, "GLEANSEC", -EBADMSG,
                   "expected AUTH from the agent, got a message of type 1");
        glean_secure_free(n);
}

static void test_expire(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &key1), *n;
        char *m = NULL;

        CU_ASSERT_EQUAL(glean_secure_expire(a), -ETIMEDOUT);
        CU_ASSERT(contains(glean_secure_reason(a),
                           "the handshake did not finish in time (no HELLO from the negotiator)"));
        CU_ASSERT_EQUAL(glean_secure_error(a), -ETIMEDOUT);
        CU_ASSERT_EQUAL(glean_secure_next_frame(a, &m, NULL), -ETIMEDOUT);
        CU_ASSERT_EQUAL(glean_secure_feed(a, "x", 1), -ETIMEDOUT);
        glean_secure_free(a);

        pair(&a, &n);
        CU_ASSERT_EQUAL(glean_secure_expire(a), 0);
        CU_ASSERT_EQUAL(glean_secure_error(a), 0);
        glean_secure_free(a);
        glean_secure_free(n);
}

/* ---- over file descriptors ---- */

typedef struct Echo {
        int fd;
        GleanSecureRole role;
        const GleanPoolKey *key;
        int handshake; /* its result */
        int end;       /* why the echo stopped */
        unsigned frames;
        char why[256];
} Echo;

/* Handshakes, then sends every frame back until the connection ends. */
static void *echo_thread(void *arg) {
        Echo *e = arg;
        GleanSecure *s = NULL;

        e->handshake = glean_secure_handshake(e->fd, e->role, e->key, TIMEOUT_MS, &s, e->why, sizeof(e->why));
        if (e->handshake < 0)
                return NULL;
        for (;;) {
                char *m = NULL;
                size_t n = 0;
                e->end = glean_secure_recv(s, e->fd, TIMEOUT_MS, &m, &n);
                if (e->end < 0)
                        break;
                e->end = glean_secure_send(s, e->fd, m, n, TIMEOUT_MS);
                free(m);
                if (e->end < 0)
                        break;
                e->frames++;
        }
        glean_secure_free(s);
        return NULL;
}

static void socket_pair(int fds[2], bool nonblock) {
        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | (nonblock ? SOCK_NONBLOCK : 0), 0, fds) == 0);
}

/* Sends each size (frames of a pattern) and checks its echo. */
static void echo_round_trips(GleanSecure *s, int fd, const size_t *sizes, size_t n) {
        for (size_t i = 0; i < n; i++) {
                unsigned char *p = pattern(sizes[i], (unsigned) i);
                char *m = NULL;
                size_t len = 0;
                CU_ASSERT_EQUAL_FATAL(glean_secure_send(s, fd, p, sizes[i], TIMEOUT_MS), 0);
                int r = glean_secure_recv(s, fd, TIMEOUT_MS, &m, &len);
                GLEAN_TEST_CHECK_FATAL(r == 0, "frame %zu of %zu bytes: %d (%s)", i, sizes[i], r,
                                       glean_secure_reason(s));
                CU_ASSERT(len == sizes[i] && memcmp(m, p, len) == 0);
                free(m);
                free(p);
        }
}

/* A whole conversation on the connected pair (client, server): this
 * thread takes client_role on client, an echoing thread the other role on
 * server. */
static void converse(int client, int server, GleanSecureRole client_role) {
        Echo e = { .fd = server, .key = &key1 };
        GleanSecure *s = NULL;
        char why[256] = "";
        pthread_t t;
        size_t sizes[64];

        e.role = client_role == GLEAN_SECURE_AGENT ? GLEAN_SECURE_NEGOTIATOR : GLEAN_SECURE_AGENT;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, echo_thread, &e), 0);
        int r = glean_secure_handshake(client, client_role, &key1, TIMEOUT_MS, &s, why, sizeof(why));
        GLEAN_TEST_CHECK(r == 0, "handshake: %d (%s)", r, why);
        if (r == 0) {
                for (size_t i = 0; i < 64; i++)
                        sizes[i] = i < 3 ? GLEAN_FRAME_MAX : i % 2 ? 200 : 1 + i * 997;
                echo_round_trips(s, client, sizes, 64);
                for (unsigned i = 0; i < 2000; i++) {
                        size_t one = 200;
                        echo_round_trips(s, client, &one, 1);
                }
        }
        glean_secure_free(s);
        close(client);
        pthread_join(t, NULL);
        CU_ASSERT_EQUAL(e.handshake, 0);
        CU_ASSERT_EQUAL(e.frames, r == 0 ? 2064u : 0u);
        GLEAN_TEST_CHECK(e.end == -EPIPE, "the echo ended with %d", e.end);
        close(server);
}

static void test_fd_socketpair(void) {
        int fds[2];

        socket_pair(fds, false);
        converse(fds[0], fds[1], GLEAN_SECURE_AGENT);
        /* the same with non-blocking fds and the roles the other way */
        socket_pair(fds, true);
        converse(fds[0], fds[1], GLEAN_SECURE_NEGOTIATOR);
}

/* Loopback only: 127.0.0.1, a port the kernel picks. */
static void test_fd_tcp_loopback(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), c, srv;

        CU_ASSERT_FATAL(l >= 0);
        CU_ASSERT_FATAL(bind(l, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        CU_ASSERT_FATAL(listen(l, 4) == 0);
        CU_ASSERT_FATAL(getsockname(l, (struct sockaddr *) &sa, &len) == 0);
        CU_ASSERT_FATAL(sa.sin_addr.s_addr == htonl(INADDR_LOOPBACK) && sa.sin_port != 0);
        c = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        CU_ASSERT_FATAL(c >= 0);
        CU_ASSERT_FATAL(connect(c, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        srv = accept4(l, NULL, NULL, SOCK_CLOEXEC);
        CU_ASSERT_FATAL(srv >= 0);
        close(l);
        converse(c, srv, GLEAN_SECURE_AGENT);
}

static void test_fd_wrong_key(void) {
        Echo e = { .role = GLEAN_SECURE_NEGOTIATOR, .key = &key2 };
        GleanSecure *s = NULL;
        char why[256] = "";
        int fds[2];
        pthread_t t;

        socket_pair(fds, false);
        e.fd = fds[1];
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, echo_thread, &e), 0);
        int r = glean_secure_handshake(fds[0], GLEAN_SECURE_AGENT, &key1, TIMEOUT_MS, &s, why, sizeof(why));
        close(fds[0]);
        pthread_join(t, NULL);
        close(fds[1]);
        CU_ASSERT_EQUAL(r, -EPERM);
        CU_ASSERT_PTR_NULL(s);
        GLEAN_TEST_CHECK(contains(why, "the negotiator did not prove it holds the pool key"), "agent: %s", why);
        CU_ASSERT_EQUAL(e.handshake, -EPERM);
        GLEAN_TEST_CHECK(contains(e.why, "the agent did not prove it holds the pool key"), "negotiator: %s", e.why);
}

static void test_fd_handshake_timeout(void) {
        GleanSecure *s = NULL;
        char why[256] = "";
        int fds[2];

        socket_pair(fds, false);
        int r = glean_secure_handshake(fds[0], GLEAN_SECURE_AGENT, &key1, 100, &s, why, sizeof(why));
        CU_ASSERT_EQUAL(r, -ETIMEDOUT);
        CU_ASSERT_PTR_NULL(s);
        GLEAN_TEST_CHECK(contains(why, "the handshake did not finish in time (no HELLO from the negotiator)"), "%s",
                         why);
        close(fds[0]);
        close(fds[1]);
}

/* Sealed bytes written in part, then the writer closes: -EPIPE. */
static void test_fd_truncated(void) {
        for (int whole = 0; whole < 2; whole++) {
                GleanSecure *a, *n;
                Bytes f = {};
                char *m = NULL;
                int fds[2];

                pair(&a, &n);
                socket_pair(fds, false);
                seal_to(a, "[ Command = \"Event\" ]", 21, &f);
                size_t part = whole ? f.len : f.len - 5;
                CU_ASSERT_EQUAL_FATAL(write(fds[0], f.data, part), (ssize_t) part);
                close(fds[0]);
                if (whole) {
                        CU_ASSERT_EQUAL(glean_secure_recv(n, fds[1], TIMEOUT_MS, &m, NULL), 0);
                        CU_ASSERT_STRING_EQUAL(m, "[ Command = \"Event\" ]");
                        free(m);
                        m = NULL;
                }
                CU_ASSERT_EQUAL(glean_secure_recv(n, fds[1], TIMEOUT_MS, &m, NULL), -EPIPE);
                const char *want = whole ? "the agent closed the connection" :
                                           "the agent closed the connection in the middle of a frame";
                GLEAN_TEST_CHECK(strcmp(glean_secure_reason(n), want) == 0, "reason \"%s\"", glean_secure_reason(n));
                CU_ASSERT_PTR_NULL(m);
                close(fds[1]);
                bytes_done(&f);
                glean_secure_free(a);
                glean_secure_free(n);
        }
}

/* Both ends in one event loop of poll(), non-blocking reads and flushes:
 * the handshake, then 200 frames each way of up to 64 KiB, written as the
 * sockets take them. */
static void test_fd_event_loop(void) {
        enum { FRAMES = 200 };
        GleanSecure *s[2] = { new_end(GLEAN_SECURE_AGENT, &key1), new_end(GLEAN_SECURE_NEGOTIATOR, &key1) };
        unsigned sent[2] = {}, got[2] = {};
        int fds[2];

        socket_pair(fds, true);
        for (int iter = 0; iter < 100000 && (got[0] < FRAMES || got[1] < FRAMES); iter++) {
                struct pollfd p[2];
                for (int i = 0; i < 2; i++) {
                        const void *out;
                        /* keep a few frames in flight */
                        while (glean_secure_established(s[i]) && sent[i] < FRAMES && sent[i] < got[!i] + 8) {
                                size_t len = 1 + (sent[i] * 7919u) % (64u * 1024u);
                                unsigned char *pl = pattern(len, sent[i] + 100u * (unsigned) i);
                                CU_ASSERT_EQUAL_FATAL(glean_secure_seal(s[i], pl, len), 0);
                                free(pl);
                                sent[i]++;
                        }
                        CU_ASSERT_FATAL(glean_secure_flush(s[i], fds[i]) >= 0);
                        p[i] = (struct pollfd){ .fd = fds[i],
                                                .events = POLLIN | (glean_secure_output(s[i], &out) ? POLLOUT : 0) };
                }
                CU_ASSERT_FATAL(poll(p, 2, TIMEOUT_MS) > 0);
                for (int i = 0; i < 2; i++) {
                        if (!(p[i].revents & POLLIN))
                                continue;
                        char *m;
                        size_t len;
                        int r;
                        while ((r = glean_secure_read(s[i], fds[i], &m, &len)) == 1) {
                                size_t want = 1 + (got[i] * 7919u) % (64u * 1024u);
                                unsigned char *pl = pattern(want, got[i] + 100u * (unsigned) !i);
                                GLEAN_TEST_CHECK_FATAL(len == want && memcmp(m, pl, len) == 0, "frame %u to %d",
                                                       got[i], i);
                                free(pl);
                                free(m);
                                got[i]++;
                        }
                        GLEAN_TEST_CHECK_FATAL(r == 0, "read: %d (%s)", r, glean_secure_reason(s[i]));
                }
        }
        CU_ASSERT_EQUAL(got[0], FRAMES);
        CU_ASSERT_EQUAL(got[1], FRAMES);
        for (int i = 0; i < 2; i++) {
                close(fds[i]);
                glean_secure_free(s[i]);
        }
}

static int suite_init(void) {
        return glean_pool_key_generate(&key1) < 0 || glean_pool_key_generate(&key2) < 0 ? -1 : 0;
}

static CU_TestInfo mem_tests[] = {
        { "handshake and frames both ways", test_handshake_and_frames },
        { "byte by byte", test_byte_by_byte },
        { "wrong key on either side", test_wrong_key },
        { "every handshake byte altered", test_handshake_altered },
        { "every sealed frame byte altered", test_frame_altered },
        { "replayed frame", test_replayed_frame },
        { "reordered, dropped, foreign frames", test_reordered_dropped_foreign },
        { "recorded session replayed", test_replayed_session },
        { "oversized and empty lengths", test_lengths },
        { "seal limits", test_seal_limits },
        { "versions and roles", test_versions_and_roles },
        { "handshake expiry", test_expire },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo fd_tests[] = {
        { "socketpair with an echoing thread", test_fd_socketpair },
        { "TCP on 127.0.0.1", test_fd_tcp_loopback },
        { "wrong key", test_fd_wrong_key },
        { "handshake timeout", test_fd_handshake_timeout },
        { "truncated stream", test_fd_truncated },
        { "event loop, non-blocking", test_fd_event_loop },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "secure-memory", suite_init, NULL, NULL, NULL, mem_tests },
        { "secure-fd", suite_init, NULL, NULL, NULL, fd_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

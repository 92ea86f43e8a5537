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
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <CUnit/CUnit.h>

#include "secure.h"
#include "test-util.h"

#define MIB (1024u * 1024u)
#define TIMEOUT_MS 10000

static GleanPoolKey key1, key2;
/* The pool-key ends: key1's, and key2's (another pool). */
static GleanSecureAuth pool1, pool2;
/* The token ends: the central manager's signing key, an agent's credential
 * it signed, and a key of somebody else's. */
static GleanSigningKey manager, impostor;
static GleanCredential cred;
static GleanSecureAuth tok_agent, tok_neg;

/* A credential for name signed by signer, valid from now + from to now +
 * to (seconds). */
static int make_credential(const GleanSigningKey *signer, const char *name, unsigned rights, int64_t from, int64_t to,
                           GleanCredential *ret) {
        GleanSigningKey holder;
        char *text = NULL, why[256];
        int64_t now = (int64_t) time(NULL);

        if (glean_signing_key_generate(&holder) < 0 ||
            glean_token_issue(signer, name, rights, now + from, now + to, holder.pk, &text, &ret->token, why,
                              sizeof why) < 0)
                return -1;
        ret->text_len = strlen(text);
        memcpy(ret->text, text, ret->text_len + 1);
        ret->key = holder;
        free(text);
        return 0;
}

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

static GleanSecure *new_end(GleanSecureRole role, const GleanSecureAuth *key) {
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
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &pool1), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);

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
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &pool1), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
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
                GleanSecure *a = new_end(GLEAN_SECURE_AGENT, side ? &pool2 : &pool1);
                GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, side ? &pool1 : &pool2);

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

/* The sizes on the wire of the four handshake messages (HELLO agent,
 * HELLO negotiator, AUTH agent, AUTH negotiator) between ends a and n. */
static void wire_sizes(const GleanSecureAuth *a, const GleanSecureAuth *n, size_t sizes[4]) {
        GleanSecure *ea = new_end(GLEAN_SECURE_AGENT, a), *en = new_end(GLEAN_SECURE_NEGOTIATOR, n);
        Bytes m[4] = {};

        take_output(ea, &m[0]);
        take_output(en, &m[1]);
        CU_ASSERT_EQUAL(glean_secure_feed(en, m[0].data, m[0].len), 0);
        CU_ASSERT_EQUAL(glean_secure_feed(ea, m[1].data, m[1].len), 0);
        take_output(ea, &m[2]);
        CU_ASSERT_EQUAL(glean_secure_feed(en, m[2].data, m[2].len), 0);
        take_output(en, &m[3]);
        CU_ASSERT_EQUAL(glean_secure_feed(ea, m[3].data, m[3].len), 0);
        CU_ASSERT_FATAL(glean_secure_established(ea) && glean_secure_established(en));
        for (int i = 0; i < 4; i++) {
                sizes[i] = m[i].len;
                bytes_done(&m[i]);
        }
        glean_secure_free(ea);
        glean_secure_free(en);
}

/* Every byte of every handshake message (length prefix included) altered
 * in turn: the end that receives it never gets established. */
static void handshake_altered(const GleanSecureAuth *auth_a, const GleanSecureAuth *auth_n) {
        enum { A_HELLO, N_HELLO, A_AUTH, N_AUTH, N_MSGS };
        size_t sizes[N_MSGS], all = 0;
        unsigned tried = 0;

        wire_sizes(auth_a, auth_n, sizes);
        CU_ASSERT_EQUAL(sizes[A_HELLO], 4 + GLEAN_SECURE_HELLO_SIZE);
        CU_ASSERT_EQUAL(sizes[N_HELLO], 4 + GLEAN_SECURE_HELLO_SIZE);
        for (int msg = 0; msg < N_MSGS; msg++) {
                all += sizes[msg];
                for (size_t at = 0; at < sizes[msg]; at++) {
                        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, auth_a);
                        GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, auth_n);
                        Bytes m[N_MSGS] = {};

                        take_output(a, &m[A_HELLO]);
                        take_output(n, &m[N_HELLO]);
                        for (int step = 0; step < N_MSGS; step++) {
                                GleanSecure *to = step == A_HELLO || step == A_AUTH ? n : a;
                                GleanSecure *from = to == a ? n : a;
                                if (step >= A_AUTH)
                                        take_output(from, &m[step]);
                                /* Up to the altered one, each as it should be;
                                 * after it, whatever the refusing end sends. */
                                if (step <= msg)
                                        GLEAN_TEST_CHECK(m[step].len == sizes[step],
                                                         "message %d, byte %zu altered: message %d has %zu bytes",
                                                         msg, at, step, m[step].len);
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
        }
        CU_ASSERT_EQUAL(tried, all);
}

static void test_handshake_altered(void) {
        handshake_altered(&pool1, &pool1);
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
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &pool1), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
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
                GleanSecure *fresh = new_end(side ? GLEAN_SECURE_AGENT : GLEAN_SECURE_NEGOTIATOR, &pool1);
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
        const uint32_t early[] = { GLEAN_SECURE_HANDSHAKE_MAX + 1, GLEAN_SECURE_FRAME_MAX, UINT32_MAX };
        unsigned char h[4];
        for (size_t i = 0; i < sizeof(early) / sizeof(early[0]); i++) {
                fresh = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
                put_be32(h, early[i]);
                CU_ASSERT_EQUAL(glean_secure_feed(fresh, h, 4), -EMSGSIZE);
                CU_ASSERT(contains(glean_secure_reason(fresh), "announced a handshake message longer than 676 bytes"));
                glean_secure_free(fresh);
        }
        fresh = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
        put_be32(h, 0);
        CU_ASSERT_EQUAL(glean_secure_feed(fresh, h, 4), -EBADMSG);
        CU_ASSERT(contains(glean_secure_reason(fresh), "length 0"));
        glean_secure_free(fresh);

        /* an HTTP client knocking: "GET " is a length of 1.2 GB */
        fresh = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
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
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &pool1), *n;
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
        CU_ASSERT_EQUAL(glean_secure_new((GleanSecureRole) 3, &pool1, &s), -EINVAL);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_PTR_NULL(glean_secure_role_name((GleanSecureRole) 0));
        CU_ASSERT_STRING_EQUAL(glean_secure_role_name(GLEAN_SECURE_AGENT), "agent");
}

/* A HELLO of our making with one field changed: a real ephemeral key,
 * the pool key offered. Version 1's was 44 bytes (a 32-byte nonce). */
static void feed_hello(GleanSecure *s, unsigned version, unsigned role, const char *magic, int want,
                       const char *reason) {
        unsigned char h[4 + GLEAN_SECURE_HELLO_SIZE] = { 0 }, sk[32];
        size_t size = version == 1 ? 44 : GLEAN_SECURE_HELLO_SIZE;

        h[3] = (unsigned char) size;
        memcpy(h + 4, magic, 8);
        h[12] = (unsigned char) version;
        h[13] = 1;
        h[14] = (unsigned char) role;
        crypto_box_keypair(h + 16, sk);
        if (version != 1)
                h[4 + 44] = GLEAN_SECURE_POOL_KEY;
        int r = glean_secure_feed(s, h, 4 + size);
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
                { 2, GLEAN_SECURE_AGENT, "GLEANSEC", 0, "" },
                { 1, GLEAN_SECURE_AGENT, "GLEANSEC", -EPROTONOSUPPORT,
                  "the agent speaks pool protocol version 1, this negotiator speaks 2" },
                { 3, GLEAN_SECURE_AGENT, "GLEANSEC", -EPROTONOSUPPORT,
                  "the agent speaks pool protocol version 3, this negotiator speaks 2" },
                { 2, GLEAN_SECURE_NEGOTIATOR, "GLEANSEC", -EPROTO, "the peer claims to be a negotiator too" },
                { 2, 7, "GLEANSEC", -EBADMSG, "unknown role 7" },
                { 2, GLEAN_SECURE_AGENT, "SSH-2.0-", -EBADMSG, "not a glean pool peer" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
                feed_hello(n, cases[i].version, cases[i].role, cases[i].magic, cases[i].want, cases[i].reason);
                glean_secure_free(n);
        }

        /* a HELLO where an AUTH must come */
        GleanSecure *n = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
        feed_hello(n, 2, GLEAN_SECURE_AGENT, "GLEANSEC", 0, "");
        feed_hello(n, 2, GLEAN_SECURE_AGENT, "GLEANSEC", -EBADMSG,
                   "expected AUTH from the agent, got a message of type 1");
        glean_secure_free(n);

        /* the all-zero point as the ephemeral key */
        n = new_end(GLEAN_SECURE_NEGOTIATOR, &pool1);
        unsigned char h[4 + GLEAN_SECURE_HELLO_SIZE] = { 0, 0, 0, GLEAN_SECURE_HELLO_SIZE, 'G', 'L', 'E', 'A',
                                                         'N', 'S', 'E', 'C', 2, 1, GLEAN_SECURE_AGENT };
        h[4 + 44] = GLEAN_SECURE_POOL_KEY;
        CU_ASSERT_EQUAL(glean_secure_feed(n, h, sizeof h), -EBADMSG);
        GLEAN_TEST_CHECK(contains(glean_secure_reason(n), "weak point"), "%s", glean_secure_reason(n));
        glean_secure_free(n);
}

/* ---- tokens ---- */

/* Runs a handshake between ends of auth_a and auth_n in memory: 0 when
 * both are established (the ends in ret_a, ret_n, or freed when NULL),
 * else the agent's error in *err_a, the negotiator's in *err_n, reasons
 * in why_a/why_n. */
static bool handshake_mem(const GleanSecureAuth *auth_a, const GleanSecureAuth *auth_n, int *err_a, int *err_n,
                          char *why_a, char *why_n, GleanSecure **ret_a, GleanSecure **ret_n) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, auth_a), *n = new_end(GLEAN_SECURE_NEGOTIATOR, auth_n);

        run_mem(a, n, NULL, NULL);
        bool ok = glean_secure_established(a) && glean_secure_established(n);
        *err_a = glean_secure_error(a);
        *err_n = glean_secure_error(n);
        snprintf(why_a, 256, "%s", glean_secure_reason(a));
        snprintf(why_n, 256, "%s", glean_secure_reason(n));
        if (ret_a && ok)
                *ret_a = a;
        else
                glean_secure_free(a);
        if (ret_n && ok)
                *ret_n = n;
        else
                glean_secure_free(n);
        return ok;
}

static void test_token_handshake(void) {
        GleanSecure *a = NULL, *n = NULL;
        int ea = 0, en = 0;
        char wa[256] = "", wn[256] = "";

        GLEAN_TEST_CHECK_FATAL(handshake_mem(&tok_agent, &tok_neg, &ea, &en, wa, wn, &a, &n),
                               "agent %d \"%s\", negotiator %d \"%s\"", ea, wa, en, wn);
        CU_ASSERT_EQUAL(glean_secure_method(a), GLEAN_SECURE_TOKEN);
        CU_ASSERT_EQUAL(glean_secure_method(n), GLEAN_SECURE_TOKEN);
        const GleanToken *t = glean_secure_peer_token(n);
        CU_ASSERT_FATAL(t != NULL);
        CU_ASSERT_STRING_EQUAL(t->name, "agent@node1.example.org");
        CU_ASSERT_EQUAL(t->rights, GLEAN_RIGHTS_AGENT);
        CU_ASSERT_PTR_NULL(glean_secure_peer_token(a));
        CU_ASSERT_EQUAL(glean_secure_peer_features(n), 0);
        for (int i = 0; i < 100; i++) {
                CU_ASSERT_EQUAL_FATAL(glean_secure_seal(i % 2 ? a : n, "[ Command = \"Hello\" ]", 21), 0);
                CU_ASSERT_EQUAL_FATAL(shuttle(i % 2 ? a : n, i % 2 ? n : a, NULL), 0);
                expect_frame(i % 2 ? n : a, "[ Command = \"Hello\" ]", 21);
        }
        glean_secure_free(a);
        glean_secure_free(n);

        /* the caller's auth may go away once the end is made */
        GleanCredential *copy = malloc(sizeof *copy);
        CU_ASSERT_FATAL(copy != NULL);
        *copy = cred;
        GleanSecureAuth tmp = { .methods = GLEAN_SECURE_TOKEN, .manager_pk = manager.pk, .credential = copy };
        a = new_end(GLEAN_SECURE_AGENT, &tmp);
        glean_credential_clear(copy);
        free(copy);
        n = new_end(GLEAN_SECURE_NEGOTIATOR, &tok_neg);
        run_mem(a, n, NULL, NULL);
        CU_ASSERT(glean_secure_established(a) && glean_secure_established(n));
        glean_secure_free(a);
        glean_secure_free(n);
}

/* Which method two ends agree on, or none. */
static void test_methods(void) {
        GleanSecureAuth both_a = tok_agent, both_n = tok_neg;
        GleanSecure *a, *n;
        int ea = 0, en = 0;
        char wa[256] = "", wn[256] = "";

        both_a.methods = both_n.methods = GLEAN_SECURE_METHODS;
        both_a.pool_key = both_n.pool_key = &key1;
        CU_ASSERT_FATAL(handshake_mem(&both_a, &both_n, &ea, &en, wa, wn, &a, &n));
        CU_ASSERT_EQUAL(glean_secure_method(a), GLEAN_SECURE_TOKEN);
        CU_ASSERT_EQUAL(glean_secure_method(n), GLEAN_SECURE_TOKEN);
        glean_secure_free(a);
        glean_secure_free(n);

        CU_ASSERT_FATAL(handshake_mem(&pool1, &both_n, &ea, &en, wa, wn, &a, &n));
        CU_ASSERT_EQUAL(glean_secure_method(n), GLEAN_SECURE_POOL_KEY);
        CU_ASSERT_PTR_NULL(glean_secure_peer_token(n));
        glean_secure_free(a);
        glean_secure_free(n);

        CU_ASSERT_FALSE(handshake_mem(&tok_agent, &pool1, &ea, &en, wa, wn, NULL, NULL));
        CU_ASSERT_EQUAL(ea, -ENOPROTOOPT);
        CU_ASSERT_EQUAL(en, -ENOPROTOOPT);
        GLEAN_TEST_CHECK(contains(wa, "no authentication method in common: the negotiator offers pool key, this "
                                      "agent accepts token"),
                         "%s", wa);
        GLEAN_TEST_CHECK(contains(wn, "the agent offers token, this negotiator accepts pool key"), "%s", wn);

        /* a pool key of the other pool while both could use tokens: tokens */
        both_n.pool_key = &key2;
        CU_ASSERT_TRUE(handshake_mem(&both_a, &both_n, &ea, &en, wa, wn, NULL, NULL));

        /* what an end needs for what it offers */
        GleanSecure *s = NULL;
        GleanSecureAuth bad = { .methods = GLEAN_SECURE_TOKEN, .manager_pk = manager.pk };
        CU_ASSERT_EQUAL(glean_secure_new(GLEAN_SECURE_AGENT, &bad, &s), -EINVAL);
        bad = (GleanSecureAuth){ .methods = GLEAN_SECURE_TOKEN };
        CU_ASSERT_EQUAL(glean_secure_new(GLEAN_SECURE_NEGOTIATOR, &bad, &s), -EINVAL);
        bad = (GleanSecureAuth){ .methods = GLEAN_SECURE_POOL_KEY };
        CU_ASSERT_EQUAL(glean_secure_new(GLEAN_SECURE_AGENT, &bad, &s), -EINVAL);
        bad = (GleanSecureAuth){ .methods = 0, .pool_key = &key1 };
        CU_ASSERT_EQUAL(glean_secure_new(GLEAN_SECURE_AGENT, &bad, &s), -EINVAL);
        CU_ASSERT_EQUAL(glean_secure_new(GLEAN_SECURE_AGENT, NULL, &s), -EINVAL);
        CU_ASSERT_PTR_NULL(s);
        CU_ASSERT_STRING_EQUAL(glean_secure_methods_name(GLEAN_SECURE_METHODS), "pool key or token");
        CU_ASSERT_STRING_EQUAL(glean_secure_methods_name(0), "nothing");
}

/* An agent whose token the negotiator refuses: each reason reaches the
 * agent (REFUSE), -ECONNREFUSED there, the check's own error here. */
static void refused(const GleanCredential *c, const GleanSecureAuth *neg, int want_n, const char *reason) {
        GleanSecureAuth auth = tok_agent;
        int ea = 0, en = 0;
        char wa[256] = "", wn[256] = "";

        auth.credential = c;
        CU_ASSERT_FALSE(handshake_mem(&auth, neg ? neg : &tok_neg, &ea, &en, wa, wn, NULL, NULL));
        GLEAN_TEST_CHECK(en == want_n, "negotiator: %d, want %d (%s)", en, want_n, wn);
        GLEAN_TEST_CHECK(contains(wn, reason), "negotiator's reason \"%s\", want \"%s\"", wn, reason);
        GLEAN_TEST_CHECK(ea == -ECONNREFUSED, "agent: %d (%s)", ea, wa);
        GLEAN_TEST_CHECK(contains(wa, "the negotiator refused this agent: ") && contains(wa, reason),
                         "agent's reason \"%s\", want \"%s\"", wa, reason);
}

static int refuse_revoked(const GleanToken *t, void *userdata, char *why, size_t whylen) {
        (*(int *) userdata)++;
        snprintf(why, whylen, "token of %s was revoked", t->name);
        return -EKEYREVOKED;
}

static void test_token_refused(void) {
        GleanCredential c;

        /* another pool's token */
        CU_ASSERT_FATAL(make_credential(&impostor, "agent@node1.example.org", GLEAN_RIGHTS_AGENT, 0, 3600, &c) == 0);
        refused(&c, NULL, -EXDEV, "the token of agent@node1.example.org: ");
        /* expired, and issued in the future */
        CU_ASSERT_FATAL(make_credential(&manager, "agent@node2.example.org", GLEAN_RIGHTS_AGENT, -7200, -3600, &c) ==
                        0);
        refused(&c, NULL, -EKEYEXPIRED, "the token of agent@node2.example.org: ");
        CU_ASSERT_FATAL(make_credential(&manager, "agent@node2.example.org", GLEAN_RIGHTS_AGENT, 3600, 7200, &c) == 0);
        refused(&c, NULL, -ENOTCONN, "the token of agent@node2.example.org: ");
        /* a real token whose text was altered: another name, more rights */
        c = cred;
        char *at = strstr(c.text, ".") + 1 + 20;
        *at = *at == 'A' ? 'B' : 'A';
        GleanSecureAuth auth = tok_agent;
        int ea = 0, en = 0;
        char wa[256] = "", wn[256] = "";
        auth.credential = &c;
        CU_ASSERT_FALSE(handshake_mem(&auth, &tok_neg, &ea, &en, wa, wn, NULL, NULL));
        GLEAN_TEST_CHECK(en == -EKEYREJECTED || en == -EBADMSG, "altered token: %d (%s)", en, wn);
        CU_ASSERT_EQUAL(ea, -ECONNREFUSED);
        /* a token copied from another machine, without its key */
        c = cred;
        CU_ASSERT_FATAL(glean_signing_key_generate(&c.key) == 0);
        refused(&c, NULL, -EPERM, "the agent did not prove it holds the key of the token of agent@node1");
        /* not what the text says: the token of the text is what counts */
        c = cred;
        memcpy(c.text, "xlean", 5);
        refused(&c, NULL, -EBADMSG, "the agent's token: ");
        /* refused by the caller (a revocation) */
        int asked = 0;
        GleanSecureAuth neg = tok_neg;
        neg.accept = refuse_revoked;
        neg.userdata = &asked;
        refused(&cred, &neg, -EKEYREVOKED, "token of agent@node1.example.org was revoked");
        CU_ASSERT_EQUAL(asked, 1);
        glean_credential_clear(&c);
}

/* The negotiator is not the central manager the agent pinned: another
 * signing key (which signed the agent's token too, so that it gets as far
 * as proving itself). */
static void test_impostor_manager(void) {
        GleanCredential c;
        GleanSecureAuth a = tok_agent, n = tok_neg;
        int ea = 0, en = 0;
        char wa[256] = "", wn[256] = "";

        CU_ASSERT_FATAL(make_credential(&impostor, "agent@node1.example.org", GLEAN_RIGHTS_AGENT, 0, 3600, &c) == 0);
        a.credential = &c; /* pins manager.pk */
        n.signing = &impostor;
        CU_ASSERT_FALSE(handshake_mem(&a, &n, &ea, &en, wa, wn, NULL, NULL));
        CU_ASSERT_EQUAL(ea, -EPERM);
        GLEAN_TEST_CHECK(contains(wa, "the negotiator is not our central manager: it does not hold the signing key "
                                      "pinned here (fingerprint "),
                         "%s", wa);
        /* with the pool key, a holder is anybody's central manager: that
         * is what tokens are for */
        GleanSecureAuth both = a;
        both.methods = GLEAN_SECURE_METHODS;
        both.pool_key = &key1;
        CU_ASSERT_FALSE(handshake_mem(&both, &n, &ea, &en, wa, wn, NULL, NULL));
        CU_ASSERT_EQUAL(ea, -EPERM);
        glean_credential_clear(&c);
}

static void test_token_altered(void) {
        handshake_altered(&tok_agent, &tok_neg);
}

/* A recorded token session replayed to fresh ends holding every long-term
 * key: nothing opens (fresh ephemeral keys each time). */
static void test_token_replayed(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &tok_agent), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &tok_neg);
        Bytes rec_a = {}, rec_n = {};

        run_mem(a, n, &rec_a, &rec_n);
        CU_ASSERT_FATAL(glean_secure_established(a) && glean_secure_established(n));
        CU_ASSERT_EQUAL(glean_secure_seal(a, "[ Command = \"Advertise\" ]", 25), 0);
        CU_ASSERT_EQUAL(shuttle(a, n, &rec_a), 0);
        glean_secure_free(a);
        glean_secure_free(n);
        for (int side = 0; side < 2; side++) {
                GleanSecure *fresh = new_end(side ? GLEAN_SECURE_AGENT : GLEAN_SECURE_NEGOTIATOR,
                                             side ? &tok_agent : &tok_neg);
                Bytes *rec = side ? &rec_n : &rec_a;
                int r = glean_secure_feed(fresh, rec->data, rec->len);
                CU_ASSERT_EQUAL(r, -EPERM);
                CU_ASSERT_FALSE(glean_secure_established(fresh));
                glean_secure_free(fresh);
        }
        /* and an agent's token is not on the wire in clear */
        CU_ASSERT_PTR_NULL(memmem(rec_a.data, rec_a.len, GLEAN_TOKEN_PREFIX, strlen(GLEAN_TOKEN_PREFIX)));
        CU_ASSERT_PTR_NULL(memmem(rec_a.data, rec_a.len, "node1", 5));
        bytes_done(&rec_a);
        bytes_done(&rec_n);
}

/* A REFUSE only from a negotiator, only in place of its AUTH, and its
 * reason printable. */
static void test_refuse_message(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &tok_agent), *n = new_end(GLEAN_SECURE_NEGOTIATOR, &tok_neg);
        Bytes b = {};
        unsigned char msg[4 + 12 + 8] = { 0, 0, 0, 20, 'G', 'L', 'E', 'A', 'N', 'S', 'E', 'C', 2, 3,
                                          GLEAN_SECURE_NEGOTIATOR, 0, 'n', 'o', '\n', '\033', 'w', 'a', 'y', '!' };

        take_output(n, &b);
        CU_ASSERT_EQUAL(glean_secure_feed(a, b.data, b.len), 0);
        CU_ASSERT_EQUAL(glean_secure_feed(a, msg, sizeof msg), -ECONNREFUSED);
        CU_ASSERT_STRING_EQUAL(glean_secure_reason(a), "the negotiator refused this agent: no??way!");
        glean_secure_free(a);
        bytes_done(&b);

        /* before the HELLO: not a HELLO */
        a = new_end(GLEAN_SECURE_AGENT, &tok_agent);
        CU_ASSERT_EQUAL(glean_secure_feed(a, msg, sizeof msg), -EBADMSG);
        glean_secure_free(a);
        /* to a negotiator: not an AUTH */
        take_output(a = new_end(GLEAN_SECURE_AGENT, &tok_agent), &b);
        CU_ASSERT_EQUAL(glean_secure_feed(n, b.data, b.len), 0);
        msg[14] = GLEAN_SECURE_AGENT;
        CU_ASSERT_EQUAL(glean_secure_feed(n, msg, sizeof msg), -EBADMSG);
        GLEAN_TEST_CHECK(contains(glean_secure_reason(n), "expected AUTH from the agent, got a message of type 3"),
                         "%s", glean_secure_reason(n));
        glean_secure_free(a);
        glean_secure_free(n);
        bytes_done(&b);
}

static void test_expire(void) {
        GleanSecure *a = new_end(GLEAN_SECURE_AGENT, &pool1), *n;
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
        const GleanSecureAuth *key;
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
        Echo e = { .fd = server, .key = &pool1 };
        GleanSecure *s = NULL;
        char why[256] = "";
        pthread_t t;
        size_t sizes[64];

        e.role = client_role == GLEAN_SECURE_AGENT ? GLEAN_SECURE_NEGOTIATOR : GLEAN_SECURE_AGENT;
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, echo_thread, &e), 0);
        int r = glean_secure_handshake(client, client_role, &pool1, TIMEOUT_MS, &s, why, sizeof(why));
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
        Echo e = { .role = GLEAN_SECURE_NEGOTIATOR, .key = &pool2 };
        GleanSecure *s = NULL;
        char why[256] = "";
        int fds[2];
        pthread_t t;

        socket_pair(fds, false);
        e.fd = fds[1];
        CU_ASSERT_EQUAL_FATAL(pthread_create(&t, NULL, echo_thread, &e), 0);
        int r = glean_secure_handshake(fds[0], GLEAN_SECURE_AGENT, &pool1, TIMEOUT_MS, &s, why, sizeof(why));
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
        int r = glean_secure_handshake(fds[0], GLEAN_SECURE_AGENT, &pool1, 100, &s, why, sizeof(why));
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
        GleanSecure *s[2] = { new_end(GLEAN_SECURE_AGENT, &pool1), new_end(GLEAN_SECURE_NEGOTIATOR, &pool1) };
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
        if (glean_pool_key_generate(&key1) < 0 || glean_pool_key_generate(&key2) < 0 ||
            glean_signing_key_generate(&manager) < 0 || glean_signing_key_generate(&impostor) < 0)
                return -1;
        pool1 = (GleanSecureAuth){ .methods = GLEAN_SECURE_POOL_KEY, .pool_key = &key1 };
        pool2 = (GleanSecureAuth){ .methods = GLEAN_SECURE_POOL_KEY, .pool_key = &key2 };
        if (make_credential(&manager, "agent@node1.example.org", GLEAN_RIGHTS_AGENT, 0, 3600, &cred) < 0)
                return -1;
        tok_agent = (GleanSecureAuth){ .methods = GLEAN_SECURE_TOKEN, .manager_pk = manager.pk, .credential = &cred };
        tok_neg = (GleanSecureAuth){ .methods = GLEAN_SECURE_TOKEN, .signing = &manager };
        return 0;
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
        { "token handshake", test_token_handshake },
        { "methods in common", test_methods },
        { "tokens refused, and why the agent learns", test_token_refused },
        { "an impostor central manager", test_impostor_manager },
        { "every token handshake byte altered", test_token_altered },
        { "recorded token session replayed", test_token_replayed },
        { "REFUSE messages", test_refuse_message },
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

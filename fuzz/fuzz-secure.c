/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-secure — libFuzzer target for the pool's sealed transport
 * (common/secure.h), on the receiving side. The pool key is fixed (32
 * bytes of 0x42), the signing key and the agent's credential made from
 * fixed seeds, and every end makes a fresh ephemeral key, so the fuzzer
 * can never hold the session keys. The first byte of an input selects the
 * mode:
 *
 *   bit 0 = 0  raw: the rest is a byte stream from a peer, fed to a fresh
 *              end (bit 1: 0 a negotiator, 1 an agent; bit 2: 0 of the pool
 *              key, 1 of tokens) in chunks of ((byte >> 3) % 32) + 1 bytes
 *              (0: all at once). The end must never get established (the
 *              fuzzer cannot prove anything), never hand out a frame, fail
 *              only with the documented errors, each with a reason, and
 *              keep failing the same way; what it sends is at most a HELLO,
 *              an AUTH and a REFUSE.
 *
 *   bit 0 = 1  sealed: a real agent and negotiator finish a handshake in
 *              memory, then the rest is records [op][len: 2 bytes][len
 *              bytes] applied to the negotiator:
 *                op % 5 == 0  feed the bytes as they are
 *                         1  the agent seals them (a genuine frame), fed
 *                         2  ... sealed, one byte altered (at len-th %), fed
 *                         3  the last frame fed, fed again (genuine bytes)
 *                         4  ... sealed and dropped (never fed)
 *              Every frame the negotiator opens must be the next genuine
 *              frame, in order, and only while every byte fed so far was
 *              genuine frames in sealing order; once that was so to the
 *              end, every genuine frame must have come out and no error.
 *
 * Either way a failure aborts with "FUZZ-SECURE FAILURE: ...".
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "secure.h"

#define MAX_FRAMES 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-SECURE FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

static const GleanPoolKey *fuzz_key(void) {
        static GleanPoolKey k;

        memset(k.bytes, 0x42, sizeof(k.bytes));
        return &k;
}

/* The token ends: a signing key and an agent's credential it signed,
 * valid for ten years from the first run. */
static const GleanSecureAuth *token_auth(GleanSecureRole role) {
        static GleanSigningKey manager;
        static GleanCredential cred;
        static GleanSecureAuth agent, negotiator;
        static bool made;

        if (!made) {
                uint8_t seed[32];
                char *text = NULL, why[256];
                int64_t now = (int64_t) time(NULL);
                memset(seed, 0x17, sizeof seed);
                if (glean_signing_key_from_seed(seed, &manager) < 0)
                        fail("glean_signing_key_from_seed() failed", NULL);
                memset(seed, 0x29, sizeof seed);
                if (glean_signing_key_from_seed(seed, &cred.key) < 0 ||
                    glean_token_issue(&manager, "agent@fuzz.example.org", GLEAN_RIGHTS_AGENT, now, now + 315360000,
                                      cred.key.pk, &text, &cred.token, why, sizeof why) < 0)
                        fail("cannot make the agent's token", why);
                cred.text_len = strlen(text);
                memcpy(cred.text, text, cred.text_len + 1);
                free(text);
                agent = (GleanSecureAuth){ .methods = GLEAN_SECURE_TOKEN, .manager_pk = manager.pk, .credential = &cred };
                negotiator = (GleanSecureAuth){ .methods = GLEAN_SECURE_TOKEN, .signing = &manager };
                made = true;
        }
        return role == GLEAN_SECURE_AGENT ? &agent : &negotiator;
}

static bool documented(int r) {
        return r == -EBADMSG || r == -EMSGSIZE || r == -EPERM || r == -EPROTO || r == -EPROTONOSUPPORT ||
               r == -ENOPROTOOPT || r == -ECONNREFUSED || r == -ENOMEM;
}

/* An error must be documented, have a reason, and stick. */
static void check_error(GleanSecure *s, int r) {
        char *m = NULL;

        if (!documented(r))
                fail("an undocumented error", strerror(-r));
        if (glean_secure_error(s) != r || !glean_secure_reason(s)[0])
                fail("an error without its reason", strerror(-r));
        if (glean_secure_feed(s, "x", 1) != r || glean_secure_next_frame(s, &m, NULL) != r ||
            glean_secure_seal(s, "x", 1) != r || m)
                fail("an error that does not stick", glean_secure_reason(s));
}

static void fuzz_raw(uint8_t mode, const uint8_t *data, size_t size) {
        GleanSecureRole role = mode & 2 ? GLEAN_SECURE_AGENT : GLEAN_SECURE_NEGOTIATOR;
        const GleanSecureAuth *auth = mode & 4 ? token_auth(role) : GLEAN_SECURE_POOL_AUTH(fuzz_key());
        size_t chunk = mode >> 3 ? ((size_t) (mode >> 3) % 32) + 1 : size;
        GleanSecure *s = NULL;
        int r = 0;

        if (glean_secure_new(role, auth, &s) < 0)
                fail("glean_secure_new() failed", NULL);
        for (size_t off = 0; off < size && r == 0; off += chunk) {
                size_t k = size - off < chunk ? size - off : chunk;
                char *m = NULL;
                r = glean_secure_feed(s, data + off, k);
                if (r == 0)
                        r = glean_secure_next_frame(s, &m, NULL);
                if (r > 0 || m)
                        fail("a frame from a peer that cannot hold the key", NULL);
                if (glean_secure_established(s))
                        fail("established with a peer that cannot hold the key", NULL);
        }
        const void *out;
        if (glean_secure_output(s, &out) > 3 * GLEAN_FRAME_HEADER + GLEAN_SECURE_HELLO_SIZE +
                                                   GLEAN_SECURE_HANDSHAKE_MAX + 12 + GLEAN_SECURE_REFUSE_MAX)
                fail("more output than a HELLO, an AUTH and a REFUSE", NULL);
        if (r < 0)
                check_error(s, r);
        else if (glean_secure_error(s) != 0)
                fail("failed without saying so", glean_secure_reason(s));
        glean_secure_free(s);
}

/* Moves from's output into to. */
static void shuttle(GleanSecure *from, GleanSecure *to) {
        const void *p;
        size_t n = glean_secure_output(from, &p);

        if (glean_secure_feed(to, p, n) < 0)
                fail("the genuine handshake failed", glean_secure_reason(to));
        glean_secure_output_consume(from, n);
}

typedef struct Expected {
        unsigned char *payload[MAX_FRAMES];
        size_t len[MAX_FRAMES];
        size_t n, got;
} Expected;

/* Opens what the negotiator has; each must be the next expected frame. */
static int drain(GleanSecure *n, Expected *e) {
        for (;;) {
                char *m = NULL;
                size_t len = 0;
                int r = glean_secure_next_frame(n, &m, &len);
                if (r <= 0)
                        return r;
                if (e->got >= e->n)
                        fail("a frame opened that was not sealed genuinely and in order", NULL);
                if (len != e->len[e->got] || memcmp(m, e->payload[e->got], len) != 0)
                        fail("an opened frame differs from the one sealed", NULL);
                e->got++;
                free(m);
        }
}

static void fuzz_sealed(const uint8_t *data, size_t size) {
        GleanSecure *a = NULL, *n = NULL;
        unsigned char *last = NULL;
        size_t last_len = 0;
        Expected e = {};
        bool intact = true;
        int r = 0;

        if (glean_secure_new(GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(fuzz_key()), &a) < 0 ||
            glean_secure_new(GLEAN_SECURE_NEGOTIATOR, GLEAN_SECURE_POOL_AUTH(fuzz_key()), &n) < 0)
                fail("glean_secure_new() failed", NULL);
        for (int i = 0; i < 2; i++) {
                shuttle(a, n);
                shuttle(n, a);
        }
        if (!glean_secure_established(a) || !glean_secure_established(n))
                fail("the genuine handshake did not finish", NULL);

        while (size >= 3 && r == 0) {
                unsigned op = data[0] % 5;
                size_t len = (size_t) data[1] << 8 | data[2];
                const uint8_t *bytes = data + 3;
                const void *wire;
                size_t wire_len;

                data += 3;
                size -= 3;
                if (len > size)
                        len = size;
                data += len;
                size -= len;

                if (op == 0 || op == 3) {
                        const void *p = op == 0 ? (const void *) bytes : last;
                        size_t k = op == 0 ? len : last ? last_len : 0;
                        if (k == 0)
                                continue;
                        intact = false;
                        r = glean_secure_feed(n, p, k);
                } else {
                        if (len == 0)
                                continue;
                        if (glean_secure_seal(a, bytes, len) < 0)
                                fail("sealing failed", glean_secure_reason(a));
                        wire_len = glean_secure_output(a, &wire);
                        if (op == 4) {
                                /* dropped: not "the last frame fed" either */
                                glean_secure_output_consume(a, wire_len);
                                intact = false;
                                continue;
                        }
                        free(last);
                        last = malloc(wire_len);
                        if (!last)
                                fail("out of memory", NULL);
                        memcpy(last, wire, wire_len);
                        last_len = wire_len;
                        glean_secure_output_consume(a, wire_len);
                        if (op == 2) {
                                last[len % last_len] ^= 0x20;
                                intact = false;
                        } else if (intact && e.n < MAX_FRAMES) {
                                e.payload[e.n] = malloc(len);
                                if (!e.payload[e.n])
                                        fail("out of memory", NULL);
                                memcpy(e.payload[e.n], bytes, len);
                                e.len[e.n++] = len;
                        } else if (intact)
                                break; /* enough */
                        r = glean_secure_feed(n, last, last_len);
                        if (op == 2)
                                last[len % last_len] ^= 0x20; /* a replay later is of the genuine bytes */
                }
                if (r == 0)
                        r = drain(n, &e);
        }
        if (r < 0)
                check_error(n, r);
        else if (intact && e.got != e.n)
                fail("a genuine frame did not come out", NULL);

        for (size_t i = 0; i < e.n; i++)
                free(e.payload[i]);
        free(last);
        glean_secure_free(a);
        glean_secure_free(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        if (data[0] & 1)
                fuzz_sealed(data + 1, size - 1);
        else
                fuzz_raw(data[0], data + 1, size - 1);
        return 0;
}

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
 *   0xFE       crafted AUTH: this harness plays a token agent against a
 *              fresh token negotiator, with the key schedule of
 *              docs/protocol.md written again here (a second reading of the
 *              spec): a genuine HELLO, then an AUTH that opens under the
 *              right handshake key, whose plaintext is made from the rest:
 *              [flags][bytes...]. flags bit 0: the stream header is the
 *              first 24 bytes (else zeros); bit 1: a genuine signature by
 *              the agent's key over the transcript and header (else the
 *              next 64 bytes); bit 2: the token is the agent's genuine one
 *              (else the remaining bytes); bit 3: a newline after it. The
 *              negotiator must refuse with a documented error and a REFUSE
 *              or get established, and only with the genuine token and
 *              signature; established, its peer token is the agent's.
 *
 * Either way a failure aborts with "FUZZ-SECURE FAILURE: ...".
 */

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

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

/* ---- crafted AUTH ---- */

static const GleanCredential *token_cred(void) {
        return token_auth(GLEAN_SECURE_AGENT)->credential;
}

static void kdf(const unsigned char base[32], const char *label, unsigned char out[32]) {
        crypto_generichash(out, 32, (const unsigned char *) label, strlen(label), base, 32);
}

static void feed_frame(GleanSecure *s, const unsigned char *p, size_t n, int *r) {
        unsigned char h[4] = { (unsigned char) (n >> 24), (unsigned char) (n >> 16), (unsigned char) (n >> 8),
                               (unsigned char) n };
        if (*r == 0)
                *r = glean_secure_feed(s, h, 4);
        if (*r == 0)
                *r = glean_secure_feed(s, p, n);
}

static void fuzz_crafted(const uint8_t *data, size_t size) {
        const GleanCredential *cred = token_cred();
        GleanSecure *n = NULL;
        unsigned char eph_pk[32], eph_sk[32], hello[52] = { 'G', 'L', 'E', 'A', 'N', 'S', 'E', 'C', 2, 1, 1, 0 };
        int r = 0;

        if (glean_secure_new(GLEAN_SECURE_NEGOTIATOR, token_auth(GLEAN_SECURE_NEGOTIATOR), &n) < 0)
                fail("glean_secure_new() failed", NULL);
        crypto_box_keypair(eph_pk, eph_sk);
        memcpy(hello + 12, eph_pk, 32);
        hello[44] = GLEAN_SECURE_TOKEN;
        feed_frame(n, hello, sizeof hello, &r);
        const void *out;
        size_t olen = glean_secure_output(n, &out);
        if (r != 0 || olen != 4 + GLEAN_SECURE_HELLO_SIZE)
                fail("the negotiator did not answer a genuine HELLO with its own", glean_secure_reason(n));
        unsigned char theirs[52];
        memcpy(theirs, (const unsigned char *) out + 4, sizeof theirs);
        glean_secure_output_consume(n, olen);

        /* The key schedule of docs/protocol.md, token method (no pool key). */
        unsigned char T[32], dh[32], B[32], k_hs[32];
        crypto_generichash_state st;
        crypto_generichash_init(&st, NULL, 0, 32);
        crypto_generichash_update(&st, (const unsigned char *) "glean-transcript-v2", 19);
        crypto_generichash_update(&st, hello, sizeof hello);
        crypto_generichash_update(&st, theirs, sizeof theirs);
        crypto_generichash_final(&st, T, sizeof T);
        if (crypto_scalarmult_curve25519(dh, eph_sk, theirs + 12) != 0)
                fail("the negotiator's ephemeral key is a weak point", NULL);
        crypto_generichash_init(&st, NULL, 0, 32);
        crypto_generichash_update(&st, (const unsigned char *) "glean-keys-v2", 13);
        crypto_generichash_update(&st, dh, sizeof dh);
        crypto_generichash_update(&st, T, sizeof T);
        crypto_generichash_final(&st, B, sizeof B);
        kdf(B, "hs-a2n", k_hs);

        /* The plaintext: header, signature, token. */
        unsigned char plain[24 + 64 + GLEAN_TOKEN_TEXT_MAX + 1] = { 0 };
        unsigned flags = size ? data[0] : 0;
        size_t len = 24;
        data += size ? 1 : 0;
        size -= size ? 1 : 0;
        if ((flags & 1) && size >= 24) {
                memcpy(plain, data, 24);
                data += 24;
                size -= 24;
        }
        if (flags & 2) {
                unsigned char m[13 + 1 + 32 + 24];
                memcpy(m, "glean-auth-v2", 13);
                m[13] = GLEAN_SECURE_AGENT;
                memcpy(m + 14, T, 32);
                memcpy(m + 46, plain, 24);
                crypto_sign_ed25519_detached(plain + 24, NULL, m, sizeof m, cred->key.sk);
        } else if (size >= 64) {
                memcpy(plain + 24, data, 64);
                data += 64;
                size -= 64;
        }
        len += 64;
        bool genuine_token = flags & 4;
        if (genuine_token) {
                memcpy(plain + len, cred->text, cred->text_len);
                len += cred->text_len;
        } else {
                size_t k = size > GLEAN_TOKEN_TEXT_MAX ? GLEAN_TOKEN_TEXT_MAX : size;
                memcpy(plain + len, data, k);
                len += k;
        }
        if ((flags & 8) && len < sizeof plain)
                plain[len++] = '\n';

        unsigned char msg[12 + sizeof plain + 16], nonce[24] = { 0 };
        unsigned long long clen = 0;
        memcpy(msg, "GLEANSEC\x02\x02\x01\x00", 12);
        crypto_aead_xchacha20poly1305_ietf_encrypt(msg + 12, &clen, plain, len, msg, 12, NULL, nonce, k_hs);
        r = 0;
        feed_frame(n, msg, 12 + (size_t) clen, &r);
        if (glean_secure_established(n)) {
                const GleanToken *t = glean_secure_peer_token(n);
                if (!(flags & 2) || !t || memcmp(t->holder, cred->key.pk, 32) != 0 ||
                    strcmp(t->name, cred->token.name) != 0)
                        fail("established with a token or signature the fuzzer made", NULL);
        } else if (r == 0) {
                /* Still waiting: only when the AUTH was not whole, which it is. */
                fail("neither established nor refused after a whole AUTH", NULL);
        } else {
                if (!documented(r) && r != -EXDEV && r != -EKEYREJECTED && r != -EKEYEXPIRED && r != -ENOTCONN)
                        fail("an undocumented error", strerror(-r));
                /* a token refused by its checks: the agent is told why */
                bool token_check = r == -EXDEV || r == -EKEYREJECTED || r == -EKEYEXPIRED || r == -ENOTCONN ||
                                   strncmp(glean_secure_reason(n), "the agent's token: ", 19) == 0;
                if (token_check && glean_secure_output(n, &out) == 0)
                        fail("a token refused without a REFUSE", glean_secure_reason(n));
                if (genuine_token && (flags & 2))
                        fail("the genuine token and signature were refused", glean_secure_reason(n));
        }
        sodium_memzero(eph_sk, sizeof eph_sk);
        glean_secure_free(n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (size < 1)
                return 0;
        if (data[0] == 0xFE) {
                fuzz_crafted(data + 1, size - 1);
                return 0;
        }
        if (data[0] & 1)
                fuzz_sealed(data + 1, size - 1);
        else
                fuzz_raw(data[0], data + 1, size - 1);
        return 0;
}

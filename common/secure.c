/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secure.c — the pool's authenticated, sealed transport (secure.h): the
 * handshake and sealed-frame state machine, fed bytes and handing out
 * frames and bytes to send, and the helpers that run it over an fd.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "common-internal.h"
#include "secure.h"

#define MAGIC "GLEANSEC"
#define MAGIC_LEN 8u
#define PREFIX_LEN 12u /* magic, version, type, role, reserved */
#define EPH_LEN crypto_scalarmult_curve25519_BYTES
#define KEY_LEN 32u
#define HASH_LEN 32u
#define HEADER_LEN crypto_secretstream_xchacha20poly1305_HEADERBYTES
#define SIG_LEN crypto_sign_ed25519_BYTES
#define AEAD_TAG crypto_aead_xchacha20poly1305_ietf_ABYTES
#define HELLO_METHODS (PREFIX_LEN + EPH_LEN) /* offset of the methods byte */
#define HELLO_FEATURES (HELLO_METHODS + 4u)

#define LABEL_TRANSCRIPT "glean-transcript-v2"
#define LABEL_KEYS "glean-keys-v2"
#define LABEL_SIG "glean-auth-v2"
#define LABEL_HS_A2N "hs-a2n"
#define LABEL_HS_N2A "hs-n2a"
#define LABEL_A2N "a2n"
#define LABEL_N2A "n2a"

/* An output buffer of more than this is freed once it has been sent, so
 * that one big frame does not pin its memory for the connection's life. */
#define OUT_KEEP (256u * 1024u)
/* What one read() takes before the handshake is done. */
#define HANDSHAKE_CHUNK 256u

_Static_assert(GLEAN_SECURE_HELLO_SIZE == HELLO_FEATURES + 4u, "HELLO layout");
_Static_assert(GLEAN_SECURE_HANDSHAKE_MAX == PREFIX_LEN + HEADER_LEN + SIG_LEN + GLEAN_TOKEN_TEXT_MAX + AEAD_TAG,
               "the longest AUTH");
_Static_assert(GLEAN_SECURE_OVERHEAD == crypto_secretstream_xchacha20poly1305_ABYTES, "sealing overhead");
_Static_assert(KEY_LEN == crypto_secretstream_xchacha20poly1305_KEYBYTES, "stream key size");
_Static_assert(KEY_LEN == crypto_aead_xchacha20poly1305_ietf_KEYBYTES, "handshake key size");
_Static_assert(KEY_LEN == crypto_kdf_KEYBYTES && GLEAN_POOL_KEY_SIZE == crypto_kdf_KEYBYTES, "kdf key size");
_Static_assert(sizeof(GLEAN_POOL_KDF_CONTEXT) - 1 == crypto_kdf_CONTEXTBYTES, "kdf context size");
_Static_assert(GLEAN_SECURE_FRAME_MAX < UINT32_MAX - GLEAN_FRAME_HEADER, "a frame fits its header");

enum {
        MSG_HELLO = 1,
        MSG_AUTH = 2,
        MSG_REFUSE = 3,
};

typedef enum State {
        STATE_HELLO,       /* waiting for the peer's HELLO */
        STATE_AUTH,        /* waiting for the peer's AUTH (ours sent or not) */
        STATE_ESTABLISHED, /* both proofs checked */
        STATE_FAILED,
} State;

struct GleanSecure {
        GleanSecureRole role;
        State state;
        int error;
        unsigned method;   /* once both HELLOs are in */
        bool auth_sent;
        uint32_t peer_features;
        uint64_t frames_in, frames_out;
        GleanFrameReader *in;
        GleanBuf out;

        /* What we prove and accept (a copy of the caller's GleanSecureAuth). */
        unsigned methods;
        unsigned char k_pool[KEY_LEN]; /* KDF(PK, 1), when POOL_KEY is offered */
        uint8_t manager_pk[32];
        GleanCredential *cred;   /* agent, TOKEN: its own, wiped when freed */
        GleanSigningKey *signing; /* negotiator, TOKEN */
        int (*accept)(const GleanToken *t, void *userdata, char *why, size_t whylen);
        void *userdata;
        GleanToken *peer_token; /* negotiator, TOKEN: the agent's, once checked */

        /* The handshake's secrets, wiped when it ends either way. */
        unsigned char eph_sk[EPH_LEN];
        unsigned char hello[GLEAN_SECURE_HELLO_SIZE]; /* ours, as sent */
        unsigned char transcript[HASH_LEN];
        unsigned char k_hs_push[KEY_LEN], k_hs_pull[KEY_LEN]; /* the AUTH messages */
        unsigned char k_push[KEY_LEN], k_pull[KEY_LEN];       /* the streams, until their headers */

        crypto_secretstream_xchacha20poly1305_state push, pull;
        char reason[256];
};

const char *glean_secure_role_name(GleanSecureRole role) {
        switch (role) {
        case GLEAN_SECURE_AGENT:
                return "agent";
        case GLEAN_SECURE_NEGOTIATOR:
                return "negotiator";
        }
        return NULL;
}

const char *glean_secure_methods_name(unsigned methods) {
        switch (methods & GLEAN_SECURE_METHODS) {
        case GLEAN_SECURE_POOL_KEY:
                return "pool key";
        case GLEAN_SECURE_TOKEN:
                return "token";
        case GLEAN_SECURE_METHODS:
                return "pool key or token";
        }
        return "nothing";
}

static GleanSecureRole peer_role(const GleanSecure *s) {
        return s->role == GLEAN_SECURE_AGENT ? GLEAN_SECURE_NEGOTIATOR : GLEAN_SECURE_AGENT;
}

static const char *peer_name(const GleanSecure *s) {
        return glean_secure_role_name(peer_role(s));
}

static void wipe_handshake(GleanSecure *s) {
        sodium_memzero(s->eph_sk, sizeof(s->eph_sk));
        sodium_memzero(s->hello, sizeof(s->hello));
        sodium_memzero(s->transcript, sizeof(s->transcript));
        sodium_memzero(s->k_hs_push, sizeof(s->k_hs_push));
        sodium_memzero(s->k_hs_pull, sizeof(s->k_hs_pull));
        sodium_memzero(s->k_push, sizeof(s->k_push));
        sodium_memzero(s->k_pull, sizeof(s->k_pull));
}

/* The long-term secrets: needed until the handshake ends, never after. */
static void wipe_credentials(GleanSecure *s) {
        sodium_memzero(s->k_pool, sizeof(s->k_pool));
        if (s->cred) {
                glean_credential_clear(s->cred);
                free(s->cred);
                s->cred = NULL;
        }
        if (s->signing) {
                glean_signing_key_clear(s->signing);
                free(s->signing);
                s->signing = NULL;
        }
}

/* Fails s for good: records error and reason, wipes every key. Returns
 * the first error when s had failed already. */
__attribute__((format(printf, 3, 4))) static int fail(GleanSecure *s, int error, const char *fmt, ...) {
        va_list ap;

        if (s->state == STATE_FAILED)
                return s->error;
        va_start(ap, fmt);
        vsnprintf(s->reason, sizeof(s->reason), fmt, ap);
        va_end(ap);
        s->error = error;
        s->state = STATE_FAILED;
        wipe_handshake(s);
        wipe_credentials(s);
        sodium_memzero(&s->push, sizeof(s->push));
        sodium_memzero(&s->pull, sizeof(s->pull));
        return error;
}

/* ---- output ---- */

/* Queues a frame of the len bytes at p. */
static int queue_frame(GleanSecure *s, const unsigned char *p, size_t len) {
        unsigned char *t = glean_buf_tail(&s->out, GLEAN_FRAME_HEADER + len);

        if (!t)
                return fail(s, -ENOMEM, "out of memory");
        glean_put_be32(t, (uint32_t) len);
        memcpy(t + GLEAN_FRAME_HEADER, p, len);
        s->out.end += GLEAN_FRAME_HEADER + len;
        return 0;
}

size_t glean_secure_output(const GleanSecure *s, const void **ret) {
        *ret = s->out.data ? s->out.data + s->out.start : NULL;
        return glean_buf_size(&s->out);
}

void glean_secure_output_consume(GleanSecure *s, size_t n) {
        glean_buf_consume(&s->out, n, OUT_KEEP);
}

/* ---- the handshake ---- */

static void put_prefix(unsigned char *p, uint8_t type, GleanSecureRole role) {
        memcpy(p, MAGIC, MAGIC_LEN);
        p[8] = GLEAN_SECURE_VERSION;
        p[9] = type;
        p[10] = (uint8_t) role;
        p[11] = 0;
}

static const char *message_name(uint8_t type) {
        return type == MSG_HELLO ? "HELLO" : type == MSG_AUTH ? "AUTH" : "REFUSE";
}

/* Checks the prefix of a handshake message from the peer: magic, version
 * (before any size: a peer of another version is told so whatever its
 * messages look like), type (one of the types allowed, ORed bits), role. */
static int check_prefix(GleanSecure *s, const unsigned char *p, size_t n, unsigned types, const char *what) {
        if (n < PREFIX_LEN || memcmp(p, MAGIC, MAGIC_LEN) != 0)
                return fail(s, -EBADMSG, "not a glean pool peer (no \"%s\" magic where its %s should be)", MAGIC,
                            what);
        if (p[8] != GLEAN_SECURE_VERSION)
                return fail(s, -EPROTONOSUPPORT, "the %s speaks pool protocol version %u, this %s speaks %d",
                            peer_name(s), p[8], glean_secure_role_name(s->role), GLEAN_SECURE_VERSION);
        if (p[9] == 0 || p[9] > MSG_REFUSE || !(types & (1u << p[9])))
                return fail(s, -EBADMSG, "expected %s from the %s, got a message of type %u", what, peer_name(s),
                            p[9]);
        if (p[10] == (uint8_t) s->role)
                return fail(s, -EPROTO, "the peer claims to be a%s %s too", s->role == GLEAN_SECURE_AGENT ? "n" : "",
                            glean_secure_role_name(s->role));
        if (p[10] != (uint8_t) peer_role(s))
                return fail(s, -EBADMSG, "the peer's %s claims the unknown role %u", message_name(p[9]), p[10]);
        if (p[11] != 0)
                return fail(s, -EBADMSG, "the %s's %s has %u in its reserved byte", peer_name(s), message_name(p[9]),
                            p[11]);
        return 0;
}

static void hash_update(crypto_generichash_state *st, const void *p, size_t n) {
        crypto_generichash_update(st, p, n);
}

/* BLAKE2b(key, label): one of the keys from the base key. */
static void derive(const unsigned char base[KEY_LEN], const char *label, unsigned char out[KEY_LEN]) {
        crypto_generichash(out, KEY_LEN, (const unsigned char *) label, strlen(label), base, KEY_LEN);
}

/* What a signature covers: LABEL_SIG || role || T || header. */
static size_t sig_message(const GleanSecure *s, GleanSecureRole role, const unsigned char *header,
                          unsigned char *out) {
        size_t n = strlen(LABEL_SIG);

        memcpy(out, LABEL_SIG, n);
        out[n++] = (unsigned char) role;
        memcpy(out + n, s->transcript, HASH_LEN);
        n += HASH_LEN;
        memcpy(out + n, header, HEADER_LEN);
        return n + HEADER_LEN;
}
#define SIG_MESSAGE_MAX (sizeof(LABEL_SIG) + HASH_LEN + HEADER_LEN)

/* Our AUTH queued: our stream's header, with TOKEN our signature and (the
 * agent) our token, sealed under our handshake key. */
static int send_auth(GleanSecure *s) {
        unsigned char plain[HEADER_LEN + SIG_LEN + GLEAN_TOKEN_TEXT_MAX], msg[GLEAN_SECURE_HANDSHAKE_MAX];
        unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES] = { 0 };
        unsigned long long clen = 0;
        size_t n = HEADER_LEN;
        int r;

        crypto_secretstream_xchacha20poly1305_init_push(&s->push, plain, s->k_push);
        sodium_memzero(s->k_push, sizeof(s->k_push));
        if (s->method == GLEAN_SECURE_TOKEN) {
                unsigned char m[SIG_MESSAGE_MAX];
                size_t mlen = sig_message(s, s->role, plain, m);
                const uint8_t *sk = s->role == GLEAN_SECURE_AGENT ? s->cred->key.sk : s->signing->sk;

                crypto_sign_ed25519_detached(plain + n, NULL, m, mlen, sk);
                n += SIG_LEN;
                if (s->role == GLEAN_SECURE_AGENT) {
                        memcpy(plain + n, s->cred->text, s->cred->text_len);
                        n += s->cred->text_len;
                }
        }
        put_prefix(msg, MSG_AUTH, s->role);
        crypto_aead_xchacha20poly1305_ietf_encrypt(msg + PREFIX_LEN, &clen, plain, n, msg, PREFIX_LEN, NULL, nonce,
                                                   s->k_hs_push);
        sodium_memzero(plain, sizeof(plain));
        r = queue_frame(s, msg, PREFIX_LEN + (size_t) clen);
        if (r < 0)
                return r;
        s->auth_sent = true;
        return 0;
}

/* The negotiator refuses the agent (TOKEN): REFUSE with the reason
 * queued, then s fails with error and that reason. */
__attribute__((format(printf, 3, 4))) static int refuse(GleanSecure *s, int error, const char *fmt, ...) {
        unsigned char msg[PREFIX_LEN + GLEAN_SECURE_REFUSE_MAX];
        char why[GLEAN_SECURE_REFUSE_MAX + 1];
        va_list ap;
        int n;

        va_start(ap, fmt);
        n = vsnprintf(why, sizeof(why), fmt, ap);
        va_end(ap);
        if (n <= 0)
                n = (int) strlen(strcpy(why, "refused"));
        if ((size_t) n > GLEAN_SECURE_REFUSE_MAX)
                n = GLEAN_SECURE_REFUSE_MAX;
        put_prefix(msg, MSG_REFUSE, s->role);
        memcpy(msg + PREFIX_LEN, why, (size_t) n);
        (void) queue_frame(s, msg, PREFIX_LEN + (size_t) n);
        return fail(s, error, "%s", why);
}

/* The peer's HELLO: the method, the transcript, every key; our AUTH
 * queued unless we are a negotiator checking a token first. */
static int on_hello(GleanSecure *s, const unsigned char *p, size_t n) {
        unsigned char dh[EPH_LEN], base[KEY_LEN];
        bool agent = s->role == GLEAN_SECURE_AGENT;
        crypto_generichash_state st;
        unsigned theirs, common;
        int r;

        r = check_prefix(s, p, n, 1u << MSG_HELLO, "HELLO");
        if (r < 0)
                return r;
        if (n != GLEAN_SECURE_HELLO_SIZE)
                return fail(s, -EBADMSG, "the %s's HELLO has %zu bytes, not %u", peer_name(s), n,
                            GLEAN_SECURE_HELLO_SIZE);
        if (p[HELLO_METHODS + 1] || p[HELLO_METHODS + 2] || p[HELLO_METHODS + 3])
                return fail(s, -EBADMSG, "the %s's HELLO has non-zero reserved bytes", peer_name(s));
        theirs = p[HELLO_METHODS] & GLEAN_SECURE_METHODS; /* bits of later methods: not offered to us */
        common = theirs & s->methods;
        if (!common)
                return fail(s, -ENOPROTOOPT,
                            "no authentication method in common: the %s offers %s, this %s accepts %s "
                            "(SEC_DEFAULT_AUTHENTICATION_METHODS)",
                            peer_name(s), glean_secure_methods_name(theirs), glean_secure_role_name(s->role),
                            glean_secure_methods_name(s->methods));
        s->method = (common & GLEAN_SECURE_TOKEN) ? GLEAN_SECURE_TOKEN : GLEAN_SECURE_POOL_KEY;
        s->peer_features = glean_get_le32(p + HELLO_FEATURES);

        if (crypto_scalarmult_curve25519(dh, s->eph_sk, p + PREFIX_LEN) != 0)
                return fail(s, -EBADMSG, "the %s's ephemeral key is a weak point of the curve", peer_name(s));
        sodium_memzero(s->eph_sk, sizeof(s->eph_sk));

        crypto_generichash_init(&st, NULL, 0, HASH_LEN);
        hash_update(&st, LABEL_TRANSCRIPT, strlen(LABEL_TRANSCRIPT));
        hash_update(&st, agent ? s->hello : p, GLEAN_SECURE_HELLO_SIZE);
        hash_update(&st, agent ? p : s->hello, GLEAN_SECURE_HELLO_SIZE);
        crypto_generichash_final(&st, s->transcript, sizeof(s->transcript));

        /* The pool key goes into every key with POOL_KEY (proving it is
         * opening the peer's AUTH), and into none with TOKEN. */
        bool keyed = s->method == GLEAN_SECURE_POOL_KEY;
        crypto_generichash_init(&st, keyed ? s->k_pool : NULL, keyed ? KEY_LEN : 0, KEY_LEN);
        hash_update(&st, LABEL_KEYS, strlen(LABEL_KEYS));
        hash_update(&st, dh, sizeof(dh));
        hash_update(&st, s->transcript, sizeof(s->transcript));
        crypto_generichash_final(&st, base, sizeof(base));
        sodium_memzero(dh, sizeof(dh));
        sodium_memzero(&st, sizeof(st));

        derive(base, agent ? LABEL_HS_A2N : LABEL_HS_N2A, s->k_hs_push);
        derive(base, agent ? LABEL_HS_N2A : LABEL_HS_A2N, s->k_hs_pull);
        derive(base, agent ? LABEL_A2N : LABEL_N2A, s->k_push);
        derive(base, agent ? LABEL_N2A : LABEL_A2N, s->k_pull);
        sodium_memzero(base, sizeof(base));

        s->state = STATE_AUTH;
        if (agent || s->method == GLEAN_SECURE_POOL_KEY)
                return send_auth(s);
        return 0;
}

/* The REFUSE of a negotiator: its reason, printable bytes only. */
static int on_refuse(GleanSecure *s, const unsigned char *p, size_t n) {
        char why[GLEAN_SECURE_REFUSE_MAX + 1];
        size_t k = n - PREFIX_LEN;

        if (k == 0 || k > GLEAN_SECURE_REFUSE_MAX)
                return fail(s, -EBADMSG, "the %s's REFUSE has a reason of %zu bytes", peer_name(s), k);
        for (size_t i = 0; i < k; i++)
                why[i] = p[PREFIX_LEN + i] >= 0x20 && p[PREFIX_LEN + i] < 0x7f ? (char) p[PREFIX_LEN + i] : '?';
        why[k] = '\0';
        return fail(s, -ECONNREFUSED, "the %s refused this agent: %s", peer_name(s), why);
}

/* The agent's token (negotiator, TOKEN), after its AUTH opened: the token
 * as the signing key made it, still valid, held by the signer of this
 * handshake, and accepted by the caller. */
static int check_agent(GleanSecure *s, const unsigned char *header, const unsigned char *sig,
                       const unsigned char *text, size_t text_len) {
        unsigned char m[SIG_MESSAGE_MAX];
        char why[200] = "";
        GleanToken t;
        int r;

        r = glean_token_parse((const char *) text, text_len, &t, why, sizeof(why));
        if (r < 0)
                return refuse(s, r, "the agent's token: %s", why);
        r = glean_token_verify(&t, s->signing->pk, (int64_t) time(NULL), why, sizeof(why));
        if (r < 0)
                return refuse(s, r, "the token of %s: %s", t.name, why);
        size_t mlen = sig_message(s, GLEAN_SECURE_AGENT, header, m);
        if (crypto_sign_ed25519_verify_detached(sig, m, mlen, t.holder) != 0)
                return refuse(s, -EPERM, "the agent did not prove it holds the key of the token of %s", t.name);
        if (s->accept) {
                r = s->accept(&t, s->userdata, why, sizeof(why));
                if (r < 0)
                        return refuse(s, r, "%s", why[0] ? why : "the token was not accepted");
        }
        s->peer_token = malloc(sizeof(*s->peer_token));
        if (!s->peer_token)
                return fail(s, -ENOMEM, "out of memory");
        *s->peer_token = t;
        return 0;
}

/* The peer's AUTH (or, for an agent, a REFUSE): its proof checked, its
 * stream started; the negotiator's AUTH sent now if it waited. */
static int on_auth(GleanSecure *s, const unsigned char *p, size_t n) {
        unsigned char plain[HEADER_LEN + SIG_LEN + GLEAN_TOKEN_TEXT_MAX];
        unsigned char nonce[crypto_aead_xchacha20poly1305_ietf_NPUBBYTES] = { 0 };
        unsigned long long plen = 0;
        bool agent = s->role == GLEAN_SECURE_AGENT;
        size_t want_min = HEADER_LEN, want_max = HEADER_LEN;
        int r;

        r = check_prefix(s, p, n, (1u << MSG_AUTH) | (agent ? 1u << MSG_REFUSE : 0), "AUTH");
        if (r < 0)
                return r;
        if (p[9] == MSG_REFUSE)
                return on_refuse(s, p, n);
        if (s->method == GLEAN_SECURE_TOKEN) {
                want_min = want_max = HEADER_LEN + SIG_LEN;
                if (!agent) {
                        want_min += sizeof(GLEAN_TOKEN_PREFIX);
                        want_max += GLEAN_TOKEN_TEXT_MAX;
                }
        }
        if (n < PREFIX_LEN + AEAD_TAG + want_min || n > PREFIX_LEN + AEAD_TAG + want_max)
                return fail(s, -EBADMSG, "the %s's AUTH has %zu bytes, not %zu..%zu for the %s", peer_name(s), n,
                            PREFIX_LEN + AEAD_TAG + want_min, PREFIX_LEN + AEAD_TAG + want_max,
                            glean_secure_methods_name(s->method));
        if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, &plen, NULL, p + PREFIX_LEN, n - PREFIX_LEN, p,
                                                       PREFIX_LEN, nonce, s->k_hs_pull) != 0) {
                if (s->method == GLEAN_SECURE_POOL_KEY)
                        return fail(s, -EPERM, "the %s did not prove it holds the pool key (its key differs from ours)",
                                    peer_name(s));
                return fail(s, -EPERM, "the %s's AUTH does not open: it is not the end this handshake began with",
                            peer_name(s));
        }
        if (s->method == GLEAN_SECURE_TOKEN) {
                if (agent) {
                        unsigned char m[SIG_MESSAGE_MAX];
                        size_t mlen = sig_message(s, GLEAN_SECURE_NEGOTIATOR, plain, m);
                        if (crypto_sign_ed25519_verify_detached(plain + HEADER_LEN, m, mlen, s->manager_pk) != 0) {
                                char fp[GLEAN_SIGNING_FINGERPRINT_LEN + 8];
                                glean_signing_key_fingerprint(s->manager_pk, fp);
                                sodium_memzero(plain, sizeof(plain));
                                return fail(s, -EPERM,
                                            "the negotiator is not our central manager: it does not hold the "
                                            "signing key pinned here (fingerprint %s)",
                                            fp);
                        }
                } else {
                        r = check_agent(s, plain, plain + HEADER_LEN, plain + HEADER_LEN + SIG_LEN,
                                        (size_t) plen - HEADER_LEN - SIG_LEN);
                        if (r < 0) {
                                sodium_memzero(plain, sizeof(plain));
                                return r;
                        }
                }
        }
        crypto_secretstream_xchacha20poly1305_init_pull(&s->pull, plain, s->k_pull);
        sodium_memzero(plain, sizeof(plain));
        if (!s->auth_sent) {
                r = send_auth(s);
                if (r < 0)
                        return r;
        }
        wipe_handshake(s);
        wipe_credentials(s);
        glean_frame_reader_set_max(s->in, GLEAN_SECURE_FRAME_MAX);
        s->state = STATE_ESTABLISHED;
        return 0;
}

/* A header error of the frame reader, as the reason says it. */
static int reader_failed(GleanSecure *s, int r) {
        bool hs = s->state != STATE_ESTABLISHED;

        if (r == -EMSGSIZE)
                return fail(s, r, "the %s announced a %s longer than %u bytes", peer_name(s),
                            hs ? "handshake message" : "frame", hs ? GLEAN_SECURE_HANDSHAKE_MAX : GLEAN_SECURE_FRAME_MAX);
        if (r == -EBADMSG)
                return fail(s, r, "the %s announced a frame of length 0", peer_name(s));
        return fail(s, r, "reading from the %s: %s", peer_name(s), strerror(-r));
}

/* Runs the handshake over the frames buffered: 0 (done, or more bytes
 * needed) or the error. */
static int run_handshake(GleanSecure *s) {
        while (s->state == STATE_HELLO || s->state == STATE_AUTH) {
                const unsigned char *p;
                size_t n;
                int r = glean_frame_reader_peek(s->in, &p, &n);
                if (r < 0)
                        return reader_failed(s, r);
                if (r == 0)
                        return 0;
                r = s->state == STATE_HELLO ? on_hello(s, p, n) : on_auth(s, p, n);
                if (r < 0)
                        return r;
                glean_frame_reader_drop(s->in);
        }
        return s->state == STATE_FAILED ? s->error : 0;
}

/* ---- the object ---- */

static int copy_auth(GleanSecure *s, const GleanSecureAuth *a) {
        if (!a || !(a->methods & GLEAN_SECURE_METHODS) || (a->methods & ~(unsigned) GLEAN_SECURE_METHODS))
                return -EINVAL;
        s->methods = a->methods;
        if (a->methods & GLEAN_SECURE_POOL_KEY) {
                if (!a->pool_key)
                        return -EINVAL;
                crypto_kdf_derive_from_key(s->k_pool, sizeof(s->k_pool), GLEAN_POOL_KDF_AUTH, GLEAN_POOL_KDF_CONTEXT,
                                           a->pool_key->bytes);
        }
        if (!(a->methods & GLEAN_SECURE_TOKEN))
                return 0;
        if (s->role == GLEAN_SECURE_AGENT) {
                if (!a->manager_pk || !a->credential)
                        return -EINVAL;
                memcpy(s->manager_pk, a->manager_pk, sizeof(s->manager_pk));
                s->cred = malloc(sizeof(*s->cred));
                if (!s->cred)
                        return -ENOMEM;
                *s->cred = *a->credential;
        } else {
                if (!a->signing)
                        return -EINVAL;
                s->signing = malloc(sizeof(*s->signing));
                if (!s->signing)
                        return -ENOMEM;
                *s->signing = *a->signing;
                s->accept = a->accept;
                s->userdata = a->userdata;
        }
        return 0;
}

int glean_secure_new(GleanSecureRole role, const GleanSecureAuth *auth, GleanSecure **ret) {
        GleanSecure *s;
        int r;

        if (!glean_secure_role_name(role))
                return -EINVAL;
        r = glean_sodium_init();
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->role = role;
        s->state = STATE_HELLO;
        r = copy_auth(s, auth);
        if (r >= 0)
                r = glean_frame_reader_new(GLEAN_SECURE_HANDSHAKE_MAX, &s->in);
        if (r < 0) {
                glean_secure_free(s);
                return r;
        }
        put_prefix(s->hello, MSG_HELLO, role);
        crypto_box_keypair(s->hello + PREFIX_LEN, s->eph_sk); /* X25519 */
        s->hello[HELLO_METHODS] = (unsigned char) s->methods;
        glean_put_le32(s->hello + HELLO_FEATURES, 0);
        r = queue_frame(s, s->hello, sizeof(s->hello));
        if (r < 0) {
                glean_secure_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

unsigned glean_secure_method(const GleanSecure *s) {
        return s->state == STATE_ESTABLISHED ? s->method : 0;
}

uint32_t glean_secure_peer_features(const GleanSecure *s) {
        return s->state == STATE_ESTABLISHED ? s->peer_features : 0;
}

const GleanToken *glean_secure_peer_token(const GleanSecure *s) {
        return s->state == STATE_ESTABLISHED ? s->peer_token : NULL;
}

void glean_secure_free(GleanSecure *s) {
        if (!s)
                return;
        wipe_credentials(s);
        free(s->peer_token);
        glean_frame_reader_free(s->in);
        glean_buf_done(&s->out);
        sodium_memzero(s, sizeof(*s));
        free(s);
}

static void glean_secure_freep(GleanSecure **s) {
        glean_secure_free(*s);
}

bool glean_secure_established(const GleanSecure *s) {
        return s->state == STATE_ESTABLISHED;
}

int glean_secure_error(const GleanSecure *s) {
        return s->state == STATE_FAILED ? s->error : 0;
}

const char *glean_secure_reason(const GleanSecure *s) {
        return s->state == STATE_FAILED ? s->reason : "";
}

int glean_secure_expire(GleanSecure *s) {
        if (s->state == STATE_ESTABLISHED || s->state == STATE_FAILED)
                return glean_secure_error(s);
        return fail(s, -ETIMEDOUT, "the handshake did not finish in time (no %s from the %s)",
                    s->state == STATE_HELLO ? "HELLO" : "AUTH", peer_name(s));
}

int glean_secure_feed(GleanSecure *s, const void *buf, size_t n) {
        int r;

        if (s->state == STATE_FAILED)
                return s->error;
        r = glean_frame_reader_feed(s->in, buf, n);
        if (r < 0)
                return reader_failed(s, r);
        return run_handshake(s);
}

int glean_secure_next_frame(GleanSecure *s, char **ret, size_t *ret_len) {
        unsigned long long mlen = 0;
        const unsigned char *c;
        unsigned char tag = 0;
        size_t n;
        char *m;
        int r;

        if (s->state != STATE_ESTABLISHED)
                return glean_secure_error(s);
        r = glean_frame_reader_peek(s->in, &c, &n);
        if (r <= 0)
                return r < 0 ? reader_failed(s, r) : 0;
        if (n <= GLEAN_SECURE_OVERHEAD)
                return fail(s, -EBADMSG, "sealed frame %" PRIu64 " from the %s is too short (%zu bytes)",
                            s->frames_in + 1, peer_name(s), n);
        m = malloc(n - GLEAN_SECURE_OVERHEAD + 1);
        if (!m)
                return -ENOMEM; /* the frame stays buffered: s is still usable */
        if (crypto_secretstream_xchacha20poly1305_pull(&s->pull, (unsigned char *) m, &mlen, &tag, c, n, NULL, 0) <
            0) {
                free(m);
                return fail(s, -EBADMSG,
                            "sealed frame %" PRIu64 " from the %s does not authenticate "
                            "(altered, forged, replayed, reordered or after a lost one)",
                            s->frames_in + 1, peer_name(s));
        }
        if (tag != crypto_secretstream_xchacha20poly1305_TAG_MESSAGE) {
                free(m);
                return fail(s, -EBADMSG, "sealed frame %" PRIu64 " from the %s has the unexpected tag %u",
                            s->frames_in + 1, peer_name(s), tag);
        }
        m[mlen] = '\0';
        glean_frame_reader_drop(s->in);
        s->frames_in++;
        *ret = m;
        if (ret_len)
                *ret_len = (size_t) mlen;
        return 1;
}

int glean_secure_seal(GleanSecure *s, const void *payload, size_t len) {
        unsigned long long clen = 0;
        unsigned char *t;

        if (s->state == STATE_FAILED)
                return s->error;
        if (s->state != STATE_ESTABLISHED)
                return -ENOTCONN;
        if (!payload || len == 0)
                return -EINVAL;
        if (len > GLEAN_FRAME_MAX)
                return -EMSGSIZE;
        t = glean_buf_tail(&s->out, GLEAN_FRAME_HEADER + len + GLEAN_SECURE_OVERHEAD);
        if (!t)
                return -ENOMEM;
        glean_put_be32(t, (uint32_t) (len + GLEAN_SECURE_OVERHEAD));
        if (crypto_secretstream_xchacha20poly1305_push(&s->push, t + GLEAN_FRAME_HEADER, &clen, payload, len, NULL, 0,
                                                       crypto_secretstream_xchacha20poly1305_TAG_MESSAGE) < 0)
                return fail(s, -EIO, "sealing frame %" PRIu64 " failed", s->frames_out + 1);
        s->out.end += GLEAN_FRAME_HEADER + (size_t) clen;
        s->frames_out++;
        return 0;
}

/* ---- over a file descriptor ---- */

/* One read() into s, and the handshake run over what came: 1 bytes came,
 * 0 the fd would block, or the error (s failed). Before the peer is
 * authenticated it gets a small buffer (a connection that never finishes
 * its handshake costs about 2 KiB), afterwards the reader's usual chunk. */
static int pump(GleanSecure *s, int fd) {
        int r = glean_frame_reader_fill(s->in, fd, s->state == STATE_ESTABLISHED ? 0 : HANDSHAKE_CHUNK);

        if (r == 0)
                return 0;
        if (r == -EPIPE) {
                const char *when = glean_frame_reader_buffered(s->in) > 0 ? " in the middle of a frame" :
                                   s->state != STATE_ESTABLISHED           ? " during the handshake" :
                                                                             "";
                return fail(s, r, "the %s closed the connection%s", peer_name(s), when);
        }
        if (r < 0)
                return fail(s, r, "reading from the %s: %s", peer_name(s), strerror(-r));
        r = run_handshake(s);
        return r < 0 ? r : 1;
}

int glean_secure_read(GleanSecure *s, int fd, char **ret, size_t *ret_len) {
        for (;;) {
                int r = glean_secure_next_frame(s, ret, ret_len);
                if (r != 0)
                        return r;
                r = pump(s, fd);
                if (r <= 0)
                        return r;
        }
}

int glean_secure_flush(GleanSecure *s, int fd) {
        const void *p;
        size_t n;

        /* Even after a failure: what was queued before it (our AUTH when
         * the peer's proof was wrong) lets the peer tell why. */
        while ((n = glean_secure_output(s, &p)) > 0) {
                ssize_t k = glean_send_some(fd, p, n);
                if (k == -EAGAIN)
                        return 0;
                if (k < 0)
                        return fail(s, (int) k, "writing to the %s: %s", peer_name(s), strerror((int) -k));
                glean_secure_output_consume(s, (size_t) k);
        }
        return s->state == STATE_FAILED ? s->error : 1;
}

/* Waits for fd to be ready for events before deadline. A timeout fails the
 * handshake; once established it is -ETIMEDOUT and s stays usable. */
static int wait_for(GleanSecure *s, int fd, short events, int64_t deadline) {
        int r = glean_wait_fd(fd, events, deadline);

        if (r == -ETIMEDOUT && s->state == STATE_ESTABLISHED)
                return r;
        if (r == -ETIMEDOUT)
                return glean_secure_expire(s);
        if (r < 0)
                return fail(s, r, "waiting for the %s: %s", peer_name(s), strerror(-r));
        return 0;
}

/* Sends all output before deadline. */
static int flush_all(GleanSecure *s, int fd, int64_t deadline) {
        for (;;) {
                int r = glean_secure_flush(s, fd);
                if (r != 0)
                        return r < 0 ? r : 0;
                r = wait_for(s, fd, POLLOUT, deadline);
                if (r < 0)
                        return r;
        }
}

int glean_secure_handshake(int fd, GleanSecureRole role, const GleanSecureAuth *auth, int timeout_ms,
                           GleanSecure **ret, char *why, size_t whylen) {
        _cleanup_(glean_secure_freep) GleanSecure *s = NULL;
        int64_t deadline = glean_deadline(timeout_ms);
        int r;

        r = glean_secure_new(role, auth, &s);
        if (r < 0)
                return glean_why(r, why, whylen, "cannot start a handshake: %s", strerror(-r));
        for (;;) {
                /* HELLO first, AUTH once the peer's HELLO is in; ours must
                 * be out before the peer can finish. */
                r = flush_all(s, fd, deadline);
                if (r < 0)
                        break;
                if (s->state == STATE_ESTABLISHED) {
                        *ret = TAKE_PTR(s);
                        return 0;
                }
                r = wait_for(s, fd, POLLIN, deadline);
                if (r < 0)
                        break;
                r = pump(s, fd);
                if (r < 0)
                        break;
        }
        (void) glean_secure_flush(s, fd); /* best effort, see there */
        return glean_why(r, why, whylen, "%s", s->reason);
}

int glean_secure_send(GleanSecure *s, int fd, const void *payload, size_t len, int timeout_ms) {
        int r = glean_secure_seal(s, payload, len);

        if (r < 0)
                return r;
        return flush_all(s, fd, glean_deadline(timeout_ms));
}

int glean_secure_recv(GleanSecure *s, int fd, int timeout_ms, char **ret, size_t *ret_len) {
        int64_t deadline = glean_deadline(timeout_ms);

        if (s->state == STATE_HELLO || s->state == STATE_AUTH)
                return -ENOTCONN;
        for (;;) {
                int r = glean_secure_next_frame(s, ret, ret_len);
                if (r != 0)
                        return r < 0 ? r : 0;
                /* Poll first, then one read(): a blocking fd never blocks. */
                r = wait_for(s, fd, POLLIN, deadline);
                if (r < 0)
                        return r;
                r = pump(s, fd);
                if (r < 0)
                        return r;
        }
}

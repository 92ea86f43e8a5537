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

#include <sodium.h>

#include "common-internal.h"
#include "secure.h"

#define MAGIC "GLEANSEC"
#define MAGIC_LEN 8u
#define PREFIX_LEN 12u /* magic, version, type, role, reserved */
#define NONCE_LEN 32u
#define KEY_LEN 32u
#define HASH_LEN 32u
#define HEADER_LEN crypto_secretstream_xchacha20poly1305_HEADERBYTES
#define PROOF_LEN crypto_auth_hmacsha512256_BYTES

#define LABEL_TRANSCRIPT "glean-pool-transcript-v1"
#define LABEL_PROOF "glean-pool-proof"
#define LABEL_A2N "glean-pool-a2n"
#define LABEL_N2A "glean-pool-n2a"

/* An output buffer of more than this is freed once it has been sent, so
 * that one big frame does not pin its memory for the connection's life. */
#define OUT_KEEP (256u * 1024u)
/* What one read() takes before the handshake is done: both its messages. */
#define HANDSHAKE_CHUNK 256u

_Static_assert(GLEAN_SECURE_HELLO_SIZE == PREFIX_LEN + NONCE_LEN, "HELLO layout");
_Static_assert(GLEAN_SECURE_AUTH_SIZE == PREFIX_LEN + HEADER_LEN + PROOF_LEN, "AUTH layout");
_Static_assert(GLEAN_SECURE_OVERHEAD == crypto_secretstream_xchacha20poly1305_ABYTES, "sealing overhead");
_Static_assert(KEY_LEN == crypto_secretstream_xchacha20poly1305_KEYBYTES, "stream key size");
_Static_assert(KEY_LEN == crypto_kdf_KEYBYTES && GLEAN_POOL_KEY_SIZE == crypto_kdf_KEYBYTES, "kdf key size");
_Static_assert(KEY_LEN == crypto_auth_hmacsha512256_KEYBYTES, "MAC key size");
_Static_assert(sizeof(GLEAN_POOL_KDF_CONTEXT) - 1 == crypto_kdf_CONTEXTBYTES, "kdf context size");
_Static_assert(GLEAN_SECURE_FRAME_MAX < UINT32_MAX - GLEAN_FRAME_HEADER, "a frame fits its header");

enum {
        MSG_HELLO = 1,
        MSG_AUTH = 2,
};

typedef enum State {
        STATE_HELLO,       /* waiting for the peer's HELLO */
        STATE_AUTH,        /* our AUTH queued, waiting for the peer's */
        STATE_ESTABLISHED, /* both proofs checked */
        STATE_FAILED,
} State;

struct GleanSecure {
        GleanSecureRole role;
        State state;
        int error;
        uint64_t frames_in, frames_out;
        GleanFrameReader *in;
        GleanBuf out;

        /* The handshake's secrets, wiped when it ends either way. */
        unsigned char k_auth[KEY_LEN];                 /* proofs */
        unsigned char k_sess[KEY_LEN];                 /* the base of the session keys */
        unsigned char k_pull[KEY_LEN];                 /* the peer's stream, until its header comes */
        unsigned char hello[GLEAN_SECURE_HELLO_SIZE];  /* ours, as sent */
        unsigned char transcript[HASH_LEN];

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

static GleanSecureRole peer_role(const GleanSecure *s) {
        return s->role == GLEAN_SECURE_AGENT ? GLEAN_SECURE_NEGOTIATOR : GLEAN_SECURE_AGENT;
}

static const char *peer_name(const GleanSecure *s) {
        return glean_secure_role_name(peer_role(s));
}

static void wipe_handshake(GleanSecure *s) {
        sodium_memzero(s->k_auth, sizeof(s->k_auth));
        sodium_memzero(s->k_sess, sizeof(s->k_sess));
        sodium_memzero(s->k_pull, sizeof(s->k_pull));
        sodium_memzero(s->hello, sizeof(s->hello));
        sodium_memzero(s->transcript, sizeof(s->transcript));
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

/* Checks a handshake message from the peer: the prefix, then its size. */
static int check_message(GleanSecure *s, const unsigned char *p, size_t n, uint8_t type, size_t size) {
        const char *what = type == MSG_HELLO ? "HELLO" : "AUTH";

        if (n < PREFIX_LEN || memcmp(p, MAGIC, MAGIC_LEN) != 0)
                return fail(s, -EBADMSG, "not a glean pool peer (no \"%s\" magic where its %s should be)", MAGIC,
                            what);
        if (p[8] != GLEAN_SECURE_VERSION)
                return fail(s, -EPROTONOSUPPORT, "the %s speaks pool protocol version %u, this %s speaks %d",
                            peer_name(s), p[8], glean_secure_role_name(s->role), GLEAN_SECURE_VERSION);
        if (p[9] != type)
                return fail(s, -EBADMSG, "expected %s from the %s, got a message of type %u", what, peer_name(s),
                            p[9]);
        if (p[10] == (uint8_t) s->role)
                return fail(s, -EPROTO, "the peer claims to be a%s %s too", s->role == GLEAN_SECURE_AGENT ? "n" : "",
                            glean_secure_role_name(s->role));
        if (p[10] != (uint8_t) peer_role(s))
                return fail(s, -EBADMSG, "the peer's %s claims the unknown role %u", what, p[10]);
        if (p[11] != 0)
                return fail(s, -EBADMSG, "the %s's %s has %u in its reserved byte", peer_name(s), what, p[11]);
        if (n != size)
                return fail(s, -EBADMSG, "the %s's %s has %zu bytes, not %zu", peer_name(s), what, n, size);
        return 0;
}

/* HMAC(K_auth, LABEL_PROOF || role || T || header). */
static void make_proof(const GleanSecure *s, GleanSecureRole role, const unsigned char *header,
                       unsigned char out[PROOF_LEN]) {
        crypto_auth_hmacsha512256_state st;
        const unsigned char r = (unsigned char) role;

        crypto_auth_hmacsha512256_init(&st, s->k_auth, sizeof(s->k_auth));
        crypto_auth_hmacsha512256_update(&st, (const unsigned char *) LABEL_PROOF, strlen(LABEL_PROOF));
        crypto_auth_hmacsha512256_update(&st, &r, 1);
        crypto_auth_hmacsha512256_update(&st, s->transcript, sizeof(s->transcript));
        crypto_auth_hmacsha512256_update(&st, header, HEADER_LEN);
        crypto_auth_hmacsha512256_final(&st, out);
        sodium_memzero(&st, sizeof(st));
}

/* BLAKE2b(key K_sess, label || T). */
static void session_key(const GleanSecure *s, const char *label, unsigned char out[KEY_LEN]) {
        crypto_generichash_state st;

        crypto_generichash_init(&st, s->k_sess, sizeof(s->k_sess), KEY_LEN);
        crypto_generichash_update(&st, (const unsigned char *) label, strlen(label));
        crypto_generichash_update(&st, s->transcript, sizeof(s->transcript));
        crypto_generichash_final(&st, out, KEY_LEN);
        sodium_memzero(&st, sizeof(st));
}

/* The peer's HELLO: the transcript, the session keys, our stream's start
 * and our AUTH queued. */
static int on_hello(GleanSecure *s, const unsigned char *p, size_t n) {
        unsigned char auth[GLEAN_SECURE_AUTH_SIZE], k_push[KEY_LEN];
        bool agent = s->role == GLEAN_SECURE_AGENT;
        crypto_generichash_state st;
        int r;

        r = check_message(s, p, n, MSG_HELLO, GLEAN_SECURE_HELLO_SIZE);
        if (r < 0)
                return r;

        crypto_generichash_init(&st, NULL, 0, HASH_LEN);
        crypto_generichash_update(&st, (const unsigned char *) LABEL_TRANSCRIPT, strlen(LABEL_TRANSCRIPT));
        crypto_generichash_update(&st, agent ? s->hello : p, GLEAN_SECURE_HELLO_SIZE);
        crypto_generichash_update(&st, agent ? p : s->hello, GLEAN_SECURE_HELLO_SIZE);
        crypto_generichash_final(&st, s->transcript, sizeof(s->transcript));

        session_key(s, agent ? LABEL_A2N : LABEL_N2A, k_push);
        session_key(s, agent ? LABEL_N2A : LABEL_A2N, s->k_pull);
        sodium_memzero(s->k_sess, sizeof(s->k_sess));

        put_prefix(auth, MSG_AUTH, s->role);
        crypto_secretstream_xchacha20poly1305_init_push(&s->push, auth + PREFIX_LEN, k_push);
        sodium_memzero(k_push, sizeof(k_push));
        make_proof(s, s->role, auth + PREFIX_LEN, auth + PREFIX_LEN + HEADER_LEN);
        r = queue_frame(s, auth, sizeof(auth));
        if (r < 0)
                return r;
        s->state = STATE_AUTH;
        return 0;
}

/* The peer's AUTH: its proof checked, its stream started. */
static int on_auth(GleanSecure *s, const unsigned char *p, size_t n) {
        unsigned char want[PROOF_LEN];
        const unsigned char *header = p + PREFIX_LEN, *proof = p + PREFIX_LEN + HEADER_LEN;
        int r;

        r = check_message(s, p, n, MSG_AUTH, GLEAN_SECURE_AUTH_SIZE);
        if (r < 0)
                return r;
        make_proof(s, peer_role(s), header, want);
        r = crypto_verify_32(want, proof);
        sodium_memzero(want, sizeof(want));
        if (r != 0)
                return fail(s, -EPERM, "the %s did not prove it holds the pool key (its key differs from ours)",
                            peer_name(s));
        crypto_secretstream_xchacha20poly1305_init_pull(&s->pull, header, s->k_pull);
        wipe_handshake(s);
        glean_frame_reader_set_max(s->in, GLEAN_SECURE_FRAME_MAX);
        s->state = STATE_ESTABLISHED;
        return 0;
}

/* A header error of the frame reader, as the reason says it. */
static int reader_failed(GleanSecure *s, int r) {
        bool hs = s->state != STATE_ESTABLISHED;

        if (r == -EMSGSIZE)
                return fail(s, r, "the %s announced a %s longer than %u bytes", peer_name(s),
                            hs ? "handshake message" : "frame", hs ? GLEAN_SECURE_AUTH_SIZE : GLEAN_SECURE_FRAME_MAX);
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

int glean_secure_new(GleanSecureRole role, const GleanPoolKey *key, GleanSecure **ret) {
        GleanSecure *s;
        int r;

        if (!glean_secure_role_name(role) || !key)
                return -EINVAL;
        r = glean_sodium_init();
        if (r < 0)
                return r;
        s = calloc(1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        s->role = role;
        s->state = STATE_HELLO;
        r = glean_frame_reader_new(GLEAN_SECURE_AUTH_SIZE, &s->in);
        if (r < 0) {
                free(s);
                return r;
        }
        crypto_kdf_derive_from_key(s->k_auth, sizeof(s->k_auth), GLEAN_POOL_KDF_AUTH, GLEAN_POOL_KDF_CONTEXT,
                                   key->bytes);
        crypto_kdf_derive_from_key(s->k_sess, sizeof(s->k_sess), GLEAN_POOL_KDF_SESSION, GLEAN_POOL_KDF_CONTEXT,
                                   key->bytes);
        put_prefix(s->hello, MSG_HELLO, role);
        randombytes_buf(s->hello + PREFIX_LEN, NONCE_LEN);
        r = queue_frame(s, s->hello, sizeof(s->hello));
        if (r < 0) {
                glean_secure_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

void glean_secure_free(GleanSecure *s) {
        if (!s)
                return;
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

int glean_secure_handshake(int fd, GleanSecureRole role, const GleanPoolKey *key, int timeout_ms, GleanSecure **ret,
                           char *why, size_t whylen) {
        _cleanup_(glean_secure_freep) GleanSecure *s = NULL;
        int64_t deadline = glean_deadline(timeout_ms);
        int r;

        r = glean_secure_new(role, key, &s);
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

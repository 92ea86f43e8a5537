/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secure.h — the pool's authenticated, sealed transport: an agent and the
 * central manager prove who they are to each other, agree on session keys
 * that a later leak of any long-term key does not reveal, then every frame
 * between them is encrypted and authenticated. docs/protocol.md says the
 * same at more length.
 *
 * Two ways to authenticate (methods), chosen by configuration
 * (SEC_DEFAULT_AUTHENTICATION_METHODS):
 *
 *   TOKEN     each agent holds a token the central manager signed
 *             (token.h) and its own Ed25519 key; it proves both. The
 *             central manager proves it holds the signing key whose
 *             public half the agent pinned. A machine can only be itself.
 *   POOL_KEY  every machine holds the same 32-byte pool key (below) and
 *             proves it; any holder can pretend to be any machine or the
 *             central manager. For small trusted clusters and migration.
 *
 * When both ends offer both, TOKEN is used; with none in common both
 * refuse, naming what each offers.
 *
 * The pool key. 32 random bytes shared by every machine of the pool, in a
 * root-only file (POOL_KEY_FILE, default /etc/glean/pool.key): exactly 64
 * hexadecimal digits, optionally followed by one newline, nothing else.
 * The file must be a regular file (a symbolic link to one is followed),
 * owned by root (or by the process's effective uid, for unprivileged test
 * rigs) and have no permission bit for group or others (0600 or 0400). A
 * key of all zero bytes is refused. The key never goes on the wire.
 *
 * Framing. Everything on the connection is frames of common/proto.h: a
 * 4-byte big-endian length N, then N bytes. Before the handshake is done
 * only handshake messages are accepted (N <= GLEAN_SECURE_HANDSHAKE_MAX;
 * more is -EMSGSIZE, so an unauthenticated peer can make us buffer almost
 * nothing); afterwards only sealed frames (GLEAN_SECURE_OVERHEAD < N <=
 * GLEAN_SECURE_FRAME_MAX). N = 0 is -EBADMSG.
 *
 * Handshake (version 2). Both ends send HELLO at once. The agent sends
 * its AUTH as soon as it has the negotiator's HELLO; the negotiator sends
 * its AUTH then too with the pool key, and with a token only once it has
 * checked the agent's (else it sends REFUSE and a reason and closes), so
 * that an agent refused learns why. Integers are little-endian.
 *
 *   HELLO (52 bytes)                       AUTH (N bytes)
 *    0  8  magic "GLEANSEC"                 0  8  magic "GLEANSEC"
 *    8  1  version, 2                       8  1  version, 2
 *    9  1  type, 1                          9  1  type, 2
 *   10  1  role: 1 agent, 2 negotiator     10  1  role (as in the HELLO)
 *   11  1  0 (reserved)                    11  1  0 (reserved)
 *   12 32  ephemeral X25519 public key     12  -  AEAD(K_hs of the sender's
 *   44  1  methods offered: bit 0 pool            direction, nonce 0, the 12
 *          key, bit 1 token                       bytes before as data) of:
 *   45  3  0 (reserved)                           24 secretstream header
 *   48  4  features (none defined yet:            64 signature (TOKEN)
 *          an end ignores bits it does            .. the agent's token's
 *          not know)                                 text (TOKEN, agent)
 *
 *   REFUSE: the 12-byte prefix with type 3, then 1..200 bytes of reason.
 *
 * A peer must speak version 2 (else -EPROTONOSUPPORT, the reason naming
 * both versions; the version byte is where version 1 had it, so either
 * end of a mixed pair says so) and have the other role (-EPROTO: a
 * reflected HELLO is refused). Anything else malformed: -EBADMSG.
 *
 * Keys. With DH = X25519(our ephemeral secret, the peer's ephemeral
 * public key) (an all-zero result is refused), BLAKE2b(key k, ...) the
 * keyed hash (crypto_generichash, 32 bytes), K_pool = KDF(PK, id 1) with
 * POOL_KEY and no key with TOKEN:
 *
 *   T      = BLAKE2b("glean-transcript-v2" || HELLO_agent || HELLO_negotiator)
 *   B      = BLAKE2b(key K_pool, "glean-keys-v2" || DH || T)
 *   K_x    = BLAKE2b(key B, label x) for x in hs-a2n, hs-n2a, a2n, n2a
 *   sig    = Ed25519(the sender's key, "glean-auth-v2" || role || T || header)
 *
 * T covers both ephemeral keys, roles, versions, methods and features (the
 * whole HELLOs as sent: a downgrade by an attacker changes every key).
 * An AUTH that does not open under K_hs is -EPERM: the peer does not hold
 * our pool key, or (TOKEN) is not the end the ephemeral keys were agreed
 * with. With TOKEN the negotiator's signature is checked against the
 * pinned key (-EPERM: not our central manager) and the agent's token as
 * glean_token_verify() says (-EXDEV, -EKEYREJECTED, -EKEYEXPIRED,
 * -ENOTCONN), then its signature by the key the token names (-EPERM), then
 * by the caller's accept() (its error, e.g. -EKEYREVOKED). The ephemeral
 * secrets are wiped once the keys are made: a recorded session cannot be
 * read later even with every long-term key (forward secrecy).
 *
 * Sealed frames. Each direction is one crypto_secretstream_xchacha20poly1305
 * stream, keyed K_a2n or K_n2a and started with the header of the sender's
 * AUTH. Each frame's N bytes are one secretstream message (tag MESSAGE, no
 * additional data): GLEAN_SECURE_OVERHEAD bytes more than its plaintext,
 * which is 1..GLEAN_FRAME_MAX bytes. The stream's internal counter makes a
 * frame that was altered, forged, replayed, reordered or follows a dropped
 * one fail to authenticate: -EBADMSG.
 *
 * Errors. Every failure is sticky (the object refuses everything after it
 * and has wiped its keys), comes with a one-line reason
 * (glean_secure_reason()) and means: close the connection.
 *
 *   -EPERM            the peer's proof is wrong (another pool key, not our
 *                     central manager, not the token's holder)
 *   -ENOPROTOOPT      no authentication method in common
 *   -ECONNREFUSED     the negotiator refused us (its REFUSE reason follows)
 *   -EXDEV, -EKEYREJECTED, -EKEYEXPIRED, -ENOTCONN  the agent's token
 *   -EBADMSG          a malformed handshake message; a sealed frame that
 *                     does not authenticate; a frame of length 0
 *   -EMSGSIZE         a declared length above the limit of the phase
 *   -EPROTONOSUPPORT  the peer speaks another version
 *   -EPROTO           the peer claims our own role
 *   -ETIMEDOUT        the handshake did not finish in time
 *   -EPIPE            end of file (between frames or in the middle of one)
 *   -ENOMEM, -errno   from the system, or from accept()
 *
 * Conventions as in proto.h: >= 0 success, -errno failure, ret_* set only
 * on success. A GleanSecure is used by one thread at a time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"
#include "token.h"

#define GLEAN_SECURE_VERSION 2
#define GLEAN_POOL_KEY_SIZE 32u
#define GLEAN_POOL_KEY_FINGERPRINT_LEN 16u /* hexadecimal digits */

#define GLEAN_SECURE_HELLO_SIZE 52u
#define GLEAN_SECURE_REFUSE_MAX 200u /* bytes of reason */
/* the longest handshake message: the agent's AUTH with the longest token */
#define GLEAN_SECURE_HANDSHAKE_MAX (12u + 24u + 64u + GLEAN_TOKEN_TEXT_MAX + 16u)
#define GLEAN_SECURE_OVERHEAD 17u /* crypto_secretstream_xchacha20poly1305_ABYTES */
#define GLEAN_SECURE_FRAME_MAX (GLEAN_FRAME_MAX + GLEAN_SECURE_OVERHEAD) /* N of a sealed frame */

/* ---- the pool key ---- */

typedef struct GleanPoolKey {
        uint8_t bytes[GLEAN_POOL_KEY_SIZE];
} GleanPoolKey;

/* Wipes the key (sodium_memzero); for _cleanup_(glean_pool_key_clear). */
void glean_pool_key_clear(GleanPoolKey *key);

/* A new random key. -EIO when libsodium cannot be initialised. */
int glean_pool_key_generate(GleanPoolKey *ret);

/* Parses the file format (64 hex digits, an optional newline). -EBADMSG
 * with why when it is something else or all zeros. */
int glean_pool_key_parse(const char *text, size_t len, GleanPoolKey *ret, char *why, size_t whylen);

/* Reads and checks the key file at path (see above). Errors, each with a
 * why naming path: -ENOENT, -EACCES (cannot open), -EINVAL (not a regular
 * file), -EPERM (group or others have access, or the owner is neither root
 * nor us), -EBADMSG (not a key), -errno. */
int glean_pool_key_load(const char *path, GleanPoolKey *ret, char *why, size_t whylen);

/* Writes key to path, mode 0600, owned by the caller: through a temporary
 * file in the same directory (made with O_EXCL, written and fsync()ed),
 * then renamed into place, so that path holds either no key, the old one
 * or the whole new one. The directory is made (0755) when only its last
 * component is missing. Without force an existing path is -EEXIST and is
 * never replaced, even by a race (RENAME_NOREPLACE). -errno with why. */
int glean_pool_key_save(const char *path, const GleanPoolKey *key, bool force, char *why, size_t whylen);

/* A fingerprint to compare keys between machines without showing them:
 * GLEAN_POOL_KEY_FINGERPRINT_LEN hex digits of KDF(PK, id 3), and a NUL. */
void glean_pool_key_fingerprint(const GleanPoolKey *key, char ret[GLEAN_POOL_KEY_FINGERPRINT_LEN + 1]);

/* ---- the connection state machine (pure: bytes in, bytes out) ---- */

typedef enum GleanSecureRole {
        GLEAN_SECURE_AGENT = 1,      /* dials */
        GLEAN_SECURE_NEGOTIATOR = 2, /* accepts */
} GleanSecureRole;

/* "agent", "negotiator"; NULL when out of range. */
const char *glean_secure_role_name(GleanSecureRole role);

typedef struct GleanSecure GleanSecure;

enum {
        GLEAN_SECURE_POOL_KEY = 1u << 0,
        GLEAN_SECURE_TOKEN = 1u << 1,
        GLEAN_SECURE_METHODS = GLEAN_SECURE_POOL_KEY | GLEAN_SECURE_TOKEN,
};

/* "pool key", "token", "pool key or token", "nothing" */
const char *glean_secure_methods_name(unsigned methods);

/* What an end proves and accepts. Everything is copied by
 * glean_secure_new(): the caller's may go away. */
typedef struct GleanSecureAuth {
        unsigned methods; /* GLEAN_SECURE_*: offered (agent), accepted (negotiator) */
        const GleanPoolKey *pool_key;   /* POOL_KEY */
        /* TOKEN. The agent: the manager's pinned public key and its own
         * credential. The negotiator: the signing key (whose public half
         * the agents pin), and accept(), asked about a token whose
         * signature, times and holder checked: 0 to let it in, or -errno
         * with why (e.g. -EKEYREVOKED "token ... was revoked ..."). */
        const uint8_t *manager_pk;      /* agent: 32 bytes */
        const GleanCredential *credential; /* agent */
        const GleanSigningKey *signing; /* negotiator */
        int (*accept)(const GleanToken *t, void *userdata, char *why, size_t whylen);
        void *userdata;
} GleanSecureAuth;

/* What an end of the pool key alone proves (clients, tests, benchmarks). */
#define GLEAN_SECURE_POOL_AUTH(key) (&(const GleanSecureAuth){ .methods = GLEAN_SECURE_POOL_KEY, .pool_key = (key) })

/* A connection's end for role, proving what auth offers. Our HELLO is
 * queued for output at once. -EINVAL (a method without what it needs),
 * -ENOMEM, -EIO. */
int glean_secure_new(GleanSecureRole role, const GleanSecureAuth *auth, GleanSecure **ret);

/* Once established: the method used, the peer's features, and (the
 * negotiator, TOKEN) the agent's token as checked; NULL otherwise. */
unsigned glean_secure_method(const GleanSecure *s);
uint32_t glean_secure_peer_features(const GleanSecure *s);
const GleanToken *glean_secure_peer_token(const GleanSecure *s);
/* Wipes and frees; accepts NULL. */
void glean_secure_free(GleanSecure *s);

/* Hands over n bytes received from the peer and runs the handshake as far
 * as they allow (which may queue our AUTH: send the output afterwards).
 * Sealed frames are opened by glean_secure_next_frame(). 0, or the error. */
int glean_secure_feed(GleanSecure *s, const void *buf, size_t n);

/* The next frame the peer sealed: 1 and its plaintext (malloc'd, with a
 * NUL after it; ret_len may be NULL), 0 when none is complete (or the
 * handshake is not done), or the error. */
int glean_secure_next_frame(GleanSecure *s, char **ret, size_t *ret_len);

/* Seals payload (1..GLEAN_FRAME_MAX bytes) as the next frame and queues it
 * for output. -ENOTCONN before the handshake is done, -EINVAL, -EMSGSIZE,
 * -ENOMEM (then the stream is broken: close), or the sticky error. */
int glean_secure_seal(GleanSecure *s, const void *payload, size_t len);

/* The bytes waiting to be sent: their number, and *ret pointing at them
 * (valid until the next call that changes s). Send any prefix of them,
 * then glean_secure_output_consume() that many. */
size_t glean_secure_output(const GleanSecure *s, const void **ret);
void glean_secure_output_consume(GleanSecure *s, size_t n);

/* Whether both proofs checked: frames may be sealed and opened. */
bool glean_secure_established(const GleanSecure *s);

/* For the caller's handshake timer: when the handshake is not done, fails
 * s with -ETIMEDOUT (and returns that); 0 once established. */
int glean_secure_expire(GleanSecure *s);

/* 0, or the sticky error, and its one-line reason ("" while none). */
int glean_secure_error(const GleanSecure *s);
const char *glean_secure_reason(const GleanSecure *s);

/* ---- over a file descriptor ---- */

/* For an event loop, on a non-blocking fd that polled readable: a frame
 * already buffered, else reads until one is complete (1, as _next_frame)
 * or the fd would block (0); meanwhile runs the handshake. -EPIPE at end
 * of file, the other errors as above. Call it again until it returns 0,
 * and send the output whenever it is not empty. */
int glean_secure_read(GleanSecure *s, int fd, char **ret, size_t *ret_len);

/* Sends as much output as fd takes now: 1 all sent, 0 some left (wait for
 * POLLOUT), -errno (which also fails s). After s failed it still sends what
 * was queued before (e.g. our AUTH when the peer's proof was wrong, so that
 * the peer learns it is the key) and then returns the error: a caller may
 * flush once, without waiting, before it closes. */
int glean_secure_flush(GleanSecure *s, int fd);

/* Blocking helpers for clients and tests: they poll, so the fd may be
 * blocking or not; each waits at most timeout_ms in all (< 0: forever).
 *
 * _handshake runs the whole handshake on a connected fd: 0 and an
 * established s, or the error with its reason in why. */
int glean_secure_handshake(int fd, GleanSecureRole role, const GleanSecureAuth *auth, int timeout_ms,
                           GleanSecure **ret, char *why, size_t whylen);
/* Seals payload and sends it with everything queued before it. */
int glean_secure_send(GleanSecure *s, int fd, const void *payload, size_t len, int timeout_ms);
/* Receives the next frame: 0 and its plaintext (as _next_frame). Bytes
 * beyond it stay buffered in s for the next call. */
int glean_secure_recv(GleanSecure *s, int fd, int timeout_ms, char **ret, size_t *ret_len);

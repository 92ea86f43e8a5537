/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secure.h — the pool's authenticated, sealed transport: agents and the
 * central manager prove to each other that they hold the pool key, then
 * every frame between them is encrypted and authenticated. docs/protocol.md
 * says the same at more length.
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
 * only the two handshake messages are accepted (N <= GLEAN_SECURE_AUTH_SIZE;
 * more is -EMSGSIZE, so an unauthenticated peer can make us buffer almost
 * nothing); afterwards only sealed frames (GLEAN_SECURE_OVERHEAD < N <=
 * GLEAN_SECURE_FRAME_MAX). N = 0 is -EBADMSG.
 *
 * Handshake. Both ends send HELLO at once, then AUTH as soon as they have
 * the peer's HELLO; neither waits for the other's proof before sending its
 * own, so the whole handshake takes one round trip. All integers are
 * single bytes.
 *
 *   HELLO (44 bytes)                   AUTH (68 bytes)
 *    0  8  magic "GLEANSEC"             0  8  magic "GLEANSEC"
 *    8  1  version, 1                   8  1  version, 1
 *    9  1  type, 1                      9  1  type, 2
 *   10  1  role: 1 agent, 2 negotiator 10  1  role (as in the HELLO)
 *   11  1  0 (reserved)                11  1  0 (reserved)
 *   12 32  nonce, fresh random bytes   12 24  secretstream header of the
 *                                             sender's stream
 *                                      36 32  proof
 *
 * A peer must speak version 1 (else -EPROTONOSUPPORT) and have the other
 * role (an agent talks only to a negotiator and the other way round, so a
 * reflected HELLO is refused: -EPROTO). Anything else malformed: -EBADMSG.
 *
 * Keys. With PK the pool key, BLAKE2b the unkeyed or keyed hash
 * (crypto_generichash, 32-byte output), KDF libsodium's crypto_kdf
 * (BLAKE2b, context "glnpool1") and HMAC HMAC-SHA-512-256 (crypto_auth):
 *
 *   K_auth = KDF(PK, id 1)           K_sess = KDF(PK, id 2)
 *   T      = BLAKE2b("glean-pool-transcript-v1" || HELLO_agent || HELLO_negotiator)
 *   proof  = HMAC(K_auth, "glean-pool-proof" || role || T || header)
 *   K_a2n  = BLAKE2b(key K_sess, "glean-pool-a2n" || T)   agent -> negotiator
 *   K_n2a  = BLAKE2b(key K_sess, "glean-pool-n2a" || T)   negotiator -> agent
 *
 * T covers both nonces, both roles and both versions (the whole HELLOs as
 * sent), the proof binds the prover's role and the header of its stream,
 * and a wrong proof is -EPERM: the peer does not hold our pool key. Fresh
 * nonces on both sides make every session's T and keys new, so a recorded
 * session replayed to either end fails its proof.
 *
 * Sealed frames. Each direction is one crypto_secretstream_xchacha20poly1305
 * stream, keyed with that direction's key and started with the header of
 * the sender's AUTH. Each frame's N bytes are one secretstream message
 * (tag MESSAGE, no additional data): GLEAN_SECURE_OVERHEAD bytes more than
 * its plaintext, which is 1..GLEAN_FRAME_MAX bytes. The stream's internal
 * counter makes a frame that was altered, forged, replayed, reordered or
 * follows a dropped one fail to authenticate: -EBADMSG.
 *
 * Errors. Every failure is sticky (the object refuses everything after it
 * and has wiped its keys), comes with a one-line reason
 * (glean_secure_reason()) and means: close the connection.
 *
 *   -EPERM            the peer's proof is wrong (another pool key)
 *   -EBADMSG          a malformed handshake message; a sealed frame that
 *                     does not authenticate; a frame of length 0
 *   -EMSGSIZE         a declared length above the limit of the phase
 *   -EPROTONOSUPPORT  the peer speaks another version
 *   -EPROTO           the peer claims our own role
 *   -ETIMEDOUT        the handshake did not finish in time
 *   -EPIPE            end of file (between frames or in the middle of one)
 *   -ENOMEM, -errno   from the system
 *
 * Conventions as in proto.h: >= 0 success, -errno failure, ret_* set only
 * on success. A GleanSecure is used by one thread at a time.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto.h"

#define GLEAN_SECURE_VERSION 1
#define GLEAN_POOL_KEY_SIZE 32u
#define GLEAN_POOL_KEY_FINGERPRINT_LEN 16u /* hexadecimal digits */

#define GLEAN_SECURE_HELLO_SIZE 44u
#define GLEAN_SECURE_AUTH_SIZE 68u
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

/* A connection's end for role, proving key (copied: derived keys only are
 * kept). Our HELLO is queued for output at once. -EINVAL, -ENOMEM, -EIO. */
int glean_secure_new(GleanSecureRole role, const GleanPoolKey *key, GleanSecure **ret);
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
int glean_secure_handshake(int fd, GleanSecureRole role, const GleanPoolKey *key, int timeout_ms, GleanSecure **ret,
                           char *why, size_t whylen);
/* Seals payload and sends it with everything queued before it. */
int glean_secure_send(GleanSecure *s, int fd, const void *payload, size_t len, int timeout_ms);
/* Receives the next frame: 0 and its plaintext (as _next_frame). Bytes
 * beyond it stay buffered in s for the next call. */
int glean_secure_recv(GleanSecure *s, int fd, int timeout_ms, char **ret, size_t *ret_len);

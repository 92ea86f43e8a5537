/* SPDX-License-Identifier: Apache-2.0 */
#pragma once
/*
 * token.h — machine identities: tokens the central manager signs (issue
 * 21's first layer; the handshake that presents them is not here yet).
 *
 * The central manager has a long-term Ed25519 signing key; every machine
 * pins its public key. A token names one machine ("agent@host"), what it
 * may do (rights), when it was issued and when it expires, an id of 16
 * random bytes (what a revocation names), the signer (the first 8 bytes
 * of BLAKE2b of its public key: a token of another pool is told apart
 * from a forged one) and the holder's own Ed25519 public key, whose
 * secret key the machine keeps and proves in the handshake. The signature
 * covers a context string and every byte before it.
 *
 * Text: "glean-token-1." and the URL-safe base64 (no padding) of
 *
 *   version (1) | rights (1) | id (16) | issued (8, LE, s) | expires (8) |
 *   signer (8) | holder (32) | name length (1) | name | signature (64)
 *
 * The name is 3 to 253 bytes of [a-z0-9.-], "@" once, not first or last.
 * Everything is pure: bytes in, bytes out; the files are the callers'.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GLEAN_TOKEN_PREFIX "glean-token-1."
#define GLEAN_TOKEN_ID_SIZE 16u
#define GLEAN_TOKEN_SIGNER_SIZE 8u
#define GLEAN_TOKEN_NAME_MAX 253u
#define GLEAN_TOKEN_TEXT_MAX 560u /* the longest token text, its prefix included */
#define GLEAN_SIGNING_FINGERPRINT_LEN 32u /* hexadecimal digits, in groups of 4 with ':' between */

enum {
        GLEAN_RIGHT_ADVERTISE = 1u << 0,    /* advertise slots */
        GLEAN_RIGHT_RUN = 1u << 1,          /* take claims and run jobs */
        GLEAN_RIGHT_RELAY = 1u << 2,        /* relay the users of its own machine */
        GLEAN_RIGHT_RELAY_ADMINS = 1u << 3, /* ... administrators among them too */
        GLEAN_RIGHTS_AGENT = GLEAN_RIGHT_ADVERTISE | GLEAN_RIGHT_RUN | GLEAN_RIGHT_RELAY,
        GLEAN_RIGHTS_ALL = GLEAN_RIGHTS_AGENT | GLEAN_RIGHT_RELAY_ADMINS,
};

/* The manager's signing key (secret: wipe with glean_signing_key_clear). */
typedef struct GleanSigningKey {
        uint8_t pk[32];
        uint8_t sk[64];
} GleanSigningKey;

typedef struct GleanToken {
        unsigned rights;
        uint8_t id[GLEAN_TOKEN_ID_SIZE];
        int64_t issued, expires; /* seconds since the epoch */
        uint8_t signer[GLEAN_TOKEN_SIGNER_SIZE];
        uint8_t holder[32];
        char name[GLEAN_TOKEN_NAME_MAX + 1];
        /* what the signature covers, and the signature */
        uint8_t signed_bytes[84 + GLEAN_TOKEN_NAME_MAX];
        size_t signed_len;
        uint8_t sig[64];
} GleanToken;

/* A new signing key, or the one of a 32-byte seed. -EIO without libsodium. */
int glean_signing_key_generate(GleanSigningKey *ret);
int glean_signing_key_from_seed(const uint8_t seed[32], GleanSigningKey *ret);
void glean_signing_key_clear(GleanSigningKey *key);

/* The public key as text ("ed25519:" and 64 hex digits) and back; -EBADMSG
 * with why for anything else. */
#define GLEAN_PUBLIC_KEY_TEXT_LEN (8u + 64u)
void glean_public_key_format(const uint8_t pk[32], char ret[GLEAN_PUBLIC_KEY_TEXT_LEN + 1]);
int glean_public_key_parse(const char *text, size_t len, uint8_t ret[32], char *why, size_t whylen);

/* What to compare by eye between machines: 16 bytes of BLAKE2b of pk as
 * "abcd:ef01:..." (8 groups). */
void glean_signing_key_fingerprint(const uint8_t pk[32], char ret[GLEAN_SIGNING_FINGERPRINT_LEN + 8]);

/* Whether name is a token's name (see above). */
bool glean_token_name_valid(const char *name);

/* A token for name with rights, valid from issued to expires (issued <
 * expires), for the holder's public key, signed by signer, its id random;
 * *ret_text malloc'd, NUL-terminated. -EINVAL with why for a bad name,
 * rights or times. ret (may be NULL) gets the token as parsed. */
int glean_token_issue(const GleanSigningKey *signer, const char *name, unsigned rights, int64_t issued,
                      int64_t expires, const uint8_t holder[32], char **ret_text, GleanToken *ret, char *why,
                      size_t whylen);

/* Reads a token's text (an optional trailing newline), its form only:
 * -EBADMSG with why for anything that is not one (prefix, base64, sizes,
 * version, unknown rights, the name). Its signature is not checked. */
int glean_token_parse(const char *text, size_t len, GleanToken *ret, char *why, size_t whylen);

/* Whether t was signed by the key pinned and is valid at now:
 * -EXDEV signed by another key (another pool: the signer id differs),
 * -EKEYREJECTED a signature that does not verify (forged or altered),
 * -EKEYEXPIRED past its expiry, -ENOTCONN issued in the future (more than
 * GLEAN_TOKEN_CLOCK_SKEW seconds: clocks apart). Each with why. */
#define GLEAN_TOKEN_CLOCK_SKEW 300
int glean_token_verify(const GleanToken *t, const uint8_t pinned[32], int64_t now, char *why, size_t whylen);

/* The id as 32 hex digits, and back (-EBADMSG). */
void glean_token_id_format(const uint8_t id[GLEAN_TOKEN_ID_SIZE], char ret[2 * GLEAN_TOKEN_ID_SIZE + 1]);
int glean_token_id_parse(const char *text, uint8_t ret[GLEAN_TOKEN_ID_SIZE]);

/* The rights as words ("advertise,run,relay[,relay-admins]"). */
void glean_token_rights_format(unsigned rights, char *buf, size_t len);

/* Parses rights words as glean_token_rights_format makes them; -EBADMSG. */
int glean_token_rights_parse(const char *text, unsigned *ret);

/* ---- the registry of the tokens a central manager issued ----
 *
 * A text file, one token a line: its id, name, rights, issued, expires
 * and when it was revoked ("-": not), separated by spaces; '#' lines are
 * comments. What `glean token list` shows, what a revocation marks, and
 * where the central manager reads the revoked ids (revocation survives
 * restarts). No secret is in it. */

typedef struct GleanTokenRecord {
        uint8_t id[GLEAN_TOKEN_ID_SIZE];
        char name[GLEAN_TOKEN_NAME_MAX + 1];
        unsigned rights;
        int64_t issued, expires, revoked; /* revoked 0: not */
} GleanTokenRecord;

typedef struct GleanTokenRegistry {
        GleanTokenRecord *rec;
        size_t n, cap;
} GleanTokenRegistry;

#define GLEAN_TOKEN_REGISTRY_MAX 100000 /* records */

/* path names the file in reasons ("path:line: ..."); -EBADMSG. */
int glean_token_registry_parse(const char *text, size_t len, const char *path, GleanTokenRegistry *ret, char *why,
                               size_t whylen);
char *glean_token_registry_format(const GleanTokenRegistry *reg); /* malloc'd; NULL: out of memory */
int glean_token_registry_add(GleanTokenRegistry *reg, const GleanToken *t); /* -EEXIST, -E2BIG, -ENOMEM */
GleanTokenRecord *glean_token_registry_find(const GleanTokenRegistry *reg, const uint8_t id[GLEAN_TOKEN_ID_SIZE]);
void glean_token_registry_clear(GleanTokenRegistry *reg);

/* ---- the files ----
 *
 * The signing key's file holds its seed: "ed25519-seed:" and 64 hex
 * digits, one optional newline (root-only, common/secret.h). The manager's
 * public key file holds glean_public_key_format() text and a newline
 * (world-readable). A machine's credential file (root-only) holds '#'
 * comment lines, its token's text on a line and its own key's seed on the
 * next, nothing else. */

#define GLEAN_SEED_PREFIX "ed25519-seed:"
#define GLEAN_SEED_TEXT_LEN (sizeof(GLEAN_SEED_PREFIX) - 1 + 64)

void glean_signing_key_seed_format(const GleanSigningKey *k, char ret[GLEAN_SEED_TEXT_LEN + 1]);
/* exactly GLEAN_SEED_TEXT_LEN bytes; -EBADMSG */
int glean_signing_key_seed_parse(const char *text, size_t len, GleanSigningKey *ret);

/* The signing key file at path: the errors of glean_secret_file_read,
 * -EBADMSG for anything but a seed; each with why naming path. */
int glean_signing_key_load(const char *path, GleanSigningKey *ret, char *why, size_t whylen);

/* The central manager's public key file: -errno, -EBADMSG with why. */
int glean_manager_key_load(const char *path, uint8_t ret[32], char *why, size_t whylen);

typedef struct GleanCredential {
        GleanToken token;
        char text[GLEAN_TOKEN_TEXT_MAX + 1]; /* the token's text, what the handshake sends */
        size_t text_len;
        GleanSigningKey key; /* the machine's own (holder) key */
} GleanCredential;

/* A credential's text: its form, and that the key is the one the token
 * names (not the token's signature: glean_token_verify). -EBADMSG. */
int glean_credential_parse(const char *text, size_t len, GleanCredential *ret, char *why, size_t whylen);
/* The credential file at path (secret). Errors with why naming path. */
int glean_credential_load(const char *path, GleanCredential *ret, char *why, size_t whylen);
void glean_credential_clear(GleanCredential *c);

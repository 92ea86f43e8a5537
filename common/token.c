/* SPDX-License-Identifier: Apache-2.0 */
/*
 * token.c — machine tokens (token.h): issued, read and verified.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "common-internal.h"
#include "token.h"

#define VERSION 1
#define FIXED_LEN 75u /* the signed bytes before the name */
#define SIG_LEN 64u
#define BODY_MAX (FIXED_LEN + GLEAN_TOKEN_NAME_MAX + SIG_LEN)
#define PREFIX_LEN (sizeof(GLEAN_TOKEN_PREFIX) - 1)
#define B64 sodium_base64_VARIANT_URLSAFE_NO_PADDING

static const char context[] = "glean machine token, version 1";

_Static_assert(PREFIX_LEN + (BODY_MAX * 4 + 2) / 3 <= GLEAN_TOKEN_TEXT_MAX, "GLEAN_TOKEN_TEXT_MAX too small");
_Static_assert(sizeof(((GleanToken *) 0)->signed_bytes) >= FIXED_LEN + GLEAN_TOKEN_NAME_MAX, "signed_bytes");

/* ---- keys ---- */

int glean_signing_key_from_seed(const uint8_t seed[32], GleanSigningKey *ret) {
        if (glean_sodium_init() < 0)
                return -EIO;
        return crypto_sign_seed_keypair(ret->pk, ret->sk, seed) == 0 ? 0 : -EIO;
}

int glean_signing_key_generate(GleanSigningKey *ret) {
        if (glean_sodium_init() < 0)
                return -EIO;
        return crypto_sign_keypair(ret->pk, ret->sk) == 0 ? 0 : -EIO;
}

void glean_signing_key_clear(GleanSigningKey *key) {
        if (key)
                sodium_memzero(key, sizeof(*key));
}

void glean_public_key_format(const uint8_t pk[32], char ret[GLEAN_PUBLIC_KEY_TEXT_LEN + 1]) {
        memcpy(ret, "ed25519:", 8);
        sodium_bin2hex(ret + 8, 65, pk, 32);
}

int glean_public_key_parse(const char *text, size_t len, uint8_t ret[32], char *why, size_t whylen) {
        uint8_t pk[32];
        size_t n = 0;
        const char *end = NULL;

        if (len > 0 && text[len - 1] == '\n')
                len--;
        if (len != GLEAN_PUBLIC_KEY_TEXT_LEN || memcmp(text, "ed25519:", 8) != 0)
                return glean_why(-EBADMSG, why, whylen,
                                 "not a public key: want \"ed25519:\" and 64 hexadecimal digits");
        if (glean_sodium_init() < 0)
                return glean_why(-EIO, why, whylen, "libsodium cannot be initialised");
        if (sodium_hex2bin(pk, sizeof pk, text + 8, 64, NULL, &n, &end) < 0 || n != 32 || end != text + len)
                return glean_why(-EBADMSG, why, whylen, "not a public key: a character other than a hexadecimal digit");
        if (sodium_is_zero(pk, sizeof pk))
                return glean_why(-EBADMSG, why, whylen, "not a usable public key: all zeros");
        memcpy(ret, pk, 32);
        return 0;
}

void glean_signing_key_fingerprint(const uint8_t pk[32], char ret[GLEAN_SIGNING_FINGERPRINT_LEN + 8]) {
        uint8_t h[16];
        char hex[33];

        (void) glean_sodium_init();
        crypto_generichash(h, sizeof h, pk, 32, (const uint8_t *) "glean fingerprint", 17);
        sodium_bin2hex(hex, sizeof hex, h, sizeof h);
        for (size_t g = 0, k = 0; g < 8; g++) {
                memcpy(ret + k, hex + 4 * g, 4);
                k += 4;
                ret[k++] = g < 7 ? ':' : '\0';
        }
}

static void signer_id(const uint8_t pk[32], uint8_t ret[GLEAN_TOKEN_SIGNER_SIZE]) {
        uint8_t h[32];
        crypto_generichash(h, sizeof h, pk, 32, NULL, 0);
        memcpy(ret, h, GLEAN_TOKEN_SIGNER_SIZE);
}

/* ---- names, ids, rights ---- */

bool glean_token_name_valid(const char *name) {
        size_t len = name ? strlen(name) : 0, at = 0, ats = 0;

        if (len < 3 || len > GLEAN_TOKEN_NAME_MAX)
                return false;
        for (size_t i = 0; i < len; i++) {
                char c = name[i];
                if (c == '@') {
                        ats++;
                        at = i;
                } else if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'))
                        return false;
        }
        return ats == 1 && at > 0 && at < len - 1;
}

void glean_token_id_format(const uint8_t id[GLEAN_TOKEN_ID_SIZE], char ret[2 * GLEAN_TOKEN_ID_SIZE + 1]) {
        sodium_bin2hex(ret, 2 * GLEAN_TOKEN_ID_SIZE + 1, id, GLEAN_TOKEN_ID_SIZE);
}

int glean_token_id_parse(const char *text, uint8_t ret[GLEAN_TOKEN_ID_SIZE]) {
        size_t n = 0, len = text ? strlen(text) : 0;
        const char *end = NULL;

        if (len != 2 * GLEAN_TOKEN_ID_SIZE || glean_sodium_init() < 0 ||
            sodium_hex2bin(ret, GLEAN_TOKEN_ID_SIZE, text, len, NULL, &n, &end) < 0 || n != GLEAN_TOKEN_ID_SIZE ||
            end != text + len)
                return -EBADMSG;
        return 0;
}

/* ---- the bytes ---- */

static void put_i64(uint8_t *p, int64_t v) {
        uint64_t u = (uint64_t) v;
        for (int i = 0; i < 8; i++)
                p[i] = (uint8_t) (u >> (8 * i));
}

static int64_t get_i64(const uint8_t *p) {
        uint64_t u = 0;
        for (int i = 0; i < 8; i++)
                u |= (uint64_t) p[i] << (8 * i);
        return (int64_t) u;
}

/* The signed bytes of t from its fields. */
static void encode(GleanToken *t) {
        uint8_t *p = t->signed_bytes;
        size_t nlen = strlen(t->name);

        *p++ = VERSION;
        *p++ = (uint8_t) t->rights;
        memcpy(p, t->id, GLEAN_TOKEN_ID_SIZE);
        p += GLEAN_TOKEN_ID_SIZE;
        put_i64(p, t->issued);
        put_i64(p + 8, t->expires);
        p += 16;
        memcpy(p, t->signer, GLEAN_TOKEN_SIGNER_SIZE);
        p += GLEAN_TOKEN_SIGNER_SIZE;
        memcpy(p, t->holder, 32);
        p += 32;
        *p++ = (uint8_t) nlen;
        memcpy(p, t->name, nlen);
        t->signed_len = FIXED_LEN + nlen;
}

/* The message signed: the context, then the token's signed bytes. */
static size_t to_sign(const GleanToken *t, uint8_t *buf) {
        memcpy(buf, context, sizeof context);
        memcpy(buf + sizeof context, t->signed_bytes, t->signed_len);
        return sizeof context + t->signed_len;
}

int glean_token_issue(const GleanSigningKey *signer, const char *name, unsigned rights, int64_t issued,
                      int64_t expires, const uint8_t holder[32], char **ret_text, GleanToken *ret, char *why,
                      size_t whylen) {
        GleanToken t = {};
        uint8_t msg[sizeof context + sizeof t.signed_bytes], body[BODY_MAX];
        char *text;

        if (!glean_token_name_valid(name))
                return glean_why(-EINVAL, why, whylen,
                                 "'%s' is not a machine's name for a token (agent@host, lower case letters, digits, "
                                 "'.' and '-', at most %u characters)",
                                 name ? name : "", GLEAN_TOKEN_NAME_MAX);
        if (rights == 0 || (rights & ~(unsigned) GLEAN_RIGHTS_ALL))
                return glean_why(-EINVAL, why, whylen, "rights 0x%x: none, or unknown ones", rights);
        if (issued < 0 || expires <= issued)
                return glean_why(-EINVAL, why, whylen, "a token must expire after it is issued");
        if (glean_sodium_init() < 0)
                return glean_why(-EIO, why, whylen, "libsodium cannot be initialised");
        snprintf(t.name, sizeof t.name, "%s", name);
        t.rights = rights;
        randombytes_buf(t.id, sizeof t.id);
        t.issued = issued;
        t.expires = expires;
        signer_id(signer->pk, t.signer);
        memcpy(t.holder, holder, 32);
        encode(&t);
        size_t mlen = to_sign(&t, msg);
        crypto_sign_detached(t.sig, NULL, msg, mlen, signer->sk);

        memcpy(body, t.signed_bytes, t.signed_len);
        memcpy(body + t.signed_len, t.sig, SIG_LEN);
        size_t blen = t.signed_len + SIG_LEN, tlen = PREFIX_LEN + sodium_base64_encoded_len(blen, B64);
        text = malloc(tlen);
        if (!text)
                return -ENOMEM;
        memcpy(text, GLEAN_TOKEN_PREFIX, PREFIX_LEN);
        sodium_bin2base64(text + PREFIX_LEN, tlen - PREFIX_LEN, body, blen, B64);
        *ret_text = text;
        if (ret)
                *ret = t;
        return 0;
}

int glean_token_parse(const char *text, size_t len, GleanToken *ret, char *why, size_t whylen) {
        uint8_t body[BODY_MAX];
        size_t blen = 0;
        const char *end = NULL;
        GleanToken t = {};

        if (len > 0 && text[len - 1] == '\n')
                len--;
        if (len < PREFIX_LEN || memcmp(text, GLEAN_TOKEN_PREFIX, PREFIX_LEN) != 0)
                return glean_why(-EBADMSG, why, whylen, "not a glean token: it does not begin with \"%s\"",
                                 GLEAN_TOKEN_PREFIX);
        if (len > GLEAN_TOKEN_TEXT_MAX)
                return glean_why(-EBADMSG, why, whylen, "not a glean token: %zu bytes, more than %u", len,
                                 GLEAN_TOKEN_TEXT_MAX);
        if (glean_sodium_init() < 0)
                return glean_why(-EIO, why, whylen, "libsodium cannot be initialised");
        if (sodium_base642bin(body, sizeof body, text + PREFIX_LEN, len - PREFIX_LEN, NULL, &blen, &end, B64) < 0 ||
            end != text + len)
                return glean_why(-EBADMSG, why, whylen, "not a glean token: its text is not URL-safe base64");
        if (blen < FIXED_LEN + SIG_LEN)
                return glean_why(-EBADMSG, why, whylen, "not a glean token: %zu bytes, too short", blen);
        if (body[0] != VERSION)
                return glean_why(-EBADMSG, why, whylen, "a token of version %u; this glean reads version %u", body[0],
                                 VERSION);
        size_t nlen = body[FIXED_LEN - 1];
        if (blen != FIXED_LEN + nlen + SIG_LEN)
                return glean_why(-EBADMSG, why, whylen, "not a glean token: %zu bytes for a name of %zu", blen, nlen);
        t.rights = body[1];
        if (t.rights == 0 || (t.rights & ~(unsigned) GLEAN_RIGHTS_ALL))
                return glean_why(-EBADMSG, why, whylen, "a token with unknown rights (0x%x)", t.rights);
        memcpy(t.id, body + 2, GLEAN_TOKEN_ID_SIZE);
        t.issued = get_i64(body + 18);
        t.expires = get_i64(body + 26);
        memcpy(t.signer, body + 34, GLEAN_TOKEN_SIGNER_SIZE);
        memcpy(t.holder, body + 42, 32);
        memcpy(t.name, body + FIXED_LEN, nlen);
        t.name[nlen] = 0;
        if (memchr(t.name, 0, nlen) || !glean_token_name_valid(t.name))
                return glean_why(-EBADMSG, why, whylen, "a token whose machine name is not one");
        memcpy(t.signed_bytes, body, FIXED_LEN + nlen);
        t.signed_len = FIXED_LEN + nlen;
        memcpy(t.sig, body + t.signed_len, SIG_LEN);
        *ret = t;
        return 0;
}

int glean_token_verify(const GleanToken *t, const uint8_t pinned[32], int64_t now, char *why, size_t whylen) {
        uint8_t id[GLEAN_TOKEN_SIGNER_SIZE], msg[sizeof context + sizeof t->signed_bytes];
        char tid[2 * GLEAN_TOKEN_ID_SIZE + 1];

        if (glean_sodium_init() < 0)
                return glean_why(-EIO, why, whylen, "libsodium cannot be initialised");
        glean_token_id_format(t->id, tid);
        signer_id(pinned, id);
        if (memcmp(id, t->signer, sizeof id) != 0)
                return glean_why(-EXDEV, why, whylen, "token %s of %s was signed by another pool's key", tid, t->name);
        size_t mlen = to_sign(t, msg);
        if (t->signed_len < FIXED_LEN || crypto_sign_verify_detached(t->sig, msg, mlen, pinned) != 0)
                return glean_why(-EKEYREJECTED, why, whylen, "token %s of %s: its signature does not verify (forged "
                                 "or altered)", tid, t->name);
        if (now >= t->expires)
                return glean_why(-EKEYEXPIRED, why, whylen, "token %s of %s expired %" PRId64 " s ago", tid, t->name,
                                 now - t->expires);
        if (t->issued > now + GLEAN_TOKEN_CLOCK_SKEW)
                return glean_why(-ENOTCONN, why, whylen,
                                 "token %s of %s is issued %" PRId64 " s in the future: are the clocks apart?", tid,
                                 t->name, t->issued - now);
        return 0;
}

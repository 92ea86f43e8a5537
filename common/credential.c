/* SPDX-License-Identifier: Apache-2.0 */
/*
 * credential.c — the files of machine identities (token.h, "the files"):
 * the central manager's signing key, its public key, a machine's
 * credential. Shared by `glean token` and both daemons.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "cleanup.h"
#include "common-internal.h"
#include "file.h"
#include "secret.h"
#include "token.h"

#define SEED_PREFIX_LEN (sizeof(GLEAN_SEED_PREFIX) - 1)

void glean_signing_key_seed_format(const GleanSigningKey *k, char ret[GLEAN_SEED_TEXT_LEN + 1]) {
        memcpy(ret, GLEAN_SEED_PREFIX, SEED_PREFIX_LEN);
        /* libsodium's sk is the seed and then the public key */
        sodium_bin2hex(ret + SEED_PREFIX_LEN, 65, k->sk, 32);
}

int glean_signing_key_seed_parse(const char *text, size_t len, GleanSigningKey *ret) {
        uint8_t seed[32];
        size_t n = 0;
        const char *end = NULL;

        if (len != GLEAN_SEED_TEXT_LEN || strncmp(text, GLEAN_SEED_PREFIX, SEED_PREFIX_LEN) != 0 ||
            sodium_hex2bin(seed, sizeof seed, text + SEED_PREFIX_LEN, 64, NULL, &n, &end) < 0 || n != 32 ||
            end != text + GLEAN_SEED_TEXT_LEN)
                return -EBADMSG;
        int r = glean_signing_key_from_seed(seed, ret);
        sodium_memzero(seed, sizeof seed);
        return r;
}

int glean_signing_key_load(const char *path, GleanSigningKey *ret, char *why, size_t whylen) {
        char text[GLEAN_SEED_TEXT_LEN + 3];
        size_t len = 0;
        int r = glean_secret_file_read(path, "signing key", "make it with 'glean token --init'", text, sizeof text,
                                       &len, why, whylen);
        if (r < 0)
                return r;
        if (len == GLEAN_SEED_TEXT_LEN + 1 && text[GLEAN_SEED_TEXT_LEN] == '\n')
                len--;
        r = glean_signing_key_seed_parse(text, len, ret);
        sodium_memzero(text, sizeof text);
        if (r == -EBADMSG)
                return glean_why(r, why, whylen,
                                 "%s: not a signing key (want \"" GLEAN_SEED_PREFIX "\" and 64 hexadecimal digits)",
                                 path);
        return r < 0 ? glean_why(r, why, whylen, "%s: cannot use the signing key: %s", path, strerror(-r)) : 0;
}

int glean_manager_key_load(const char *path, uint8_t ret[32], char *why, size_t whylen) {
        _cleanup_free_ char *text = NULL;
        char because[256];
        size_t len = 0;
        int r = glean_read_file(path, 256, &text, &len);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot read the central manager's key: %s%s", path,
                                 strerror(-r),
                                 r == -ENOENT ? " (copy it from the central manager's SEC_TOKEN_MANAGER_KEY_FILE)"
                                              : "");
        if (glean_public_key_parse(text, len, ret, because, sizeof because) < 0)
                return glean_why(-EBADMSG, why, whylen, "%s: %s", path, because);
        return 0;
}

void glean_credential_clear(GleanCredential *c) {
        if (c)
                sodium_memzero(c, sizeof(*c));
}

int glean_credential_parse(const char *text, size_t len, GleanCredential *ret, char *why, size_t whylen) {
        const char *tok = NULL, *seed = NULL;
        size_t tok_len = 0, seed_len = 0;

        for (size_t at = 0; at < len;) {
                const char *line = text + at, *nl = memchr(line, '\n', len - at);
                size_t n = nl ? (size_t) (nl - line) : len - at;
                at += n + (nl ? 1 : 0);
                if (n == 0 || line[0] == '#')
                        continue;
                if (!tok) {
                        tok = line;
                        tok_len = n;
                } else if (!seed) {
                        seed = line;
                        seed_len = n;
                } else
                        return glean_why(-EBADMSG, why, whylen, "more than a token and a key");
        }
        if (!tok)
                return glean_why(-EBADMSG, why, whylen, "no token");
        if (tok_len > GLEAN_TOKEN_TEXT_MAX)
                return glean_why(-EBADMSG, why, whylen, "the token is longer than %u bytes", GLEAN_TOKEN_TEXT_MAX);
        int r = glean_token_parse(tok, tok_len, &ret->token, why, whylen);
        if (r < 0)
                return r;
        if (!seed || glean_signing_key_seed_parse(seed, seed_len, &ret->key) < 0) {
                glean_credential_clear(ret);
                return glean_why(-EBADMSG, why, whylen,
                                 "no machine key (\"" GLEAN_SEED_PREFIX "\" and 64 hexadecimal digits)");
        }
        if (sodium_memcmp(ret->key.pk, ret->token.holder, 32) != 0) {
                glean_credential_clear(ret);
                return glean_why(-EBADMSG, why, whylen, "the key is not the one the token names");
        }
        memcpy(ret->text, tok, tok_len);
        ret->text[tok_len] = '\0';
        ret->text_len = tok_len;
        return 0;
}

int glean_credential_load(const char *path, GleanCredential *ret, char *why, size_t whylen) {
        char text[2 * GLEAN_TOKEN_TEXT_MAX], because[256];
        size_t len = 0;
        int r = glean_secret_file_read(path, "credential", "make it on the central manager with 'glean token create' "
                                       "and install it with 'glean token install'", text, sizeof text, &len, why,
                                       whylen);
        if (r < 0)
                return r;
        r = glean_credential_parse(text, len, ret, because, sizeof because);
        sodium_memzero(text, sizeof text);
        return r < 0 ? glean_why(r, why, whylen, "%s: %s", path, because) : 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * poolkey.c — the pool key: made, written atomically, read back from a
 * root-only file and checked; its fingerprint; libsodium's one-time
 * initialisation.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common-internal.h"
#include "secret.h"
#include "secure.h"

#define KEY_HEX_LEN (GLEAN_POOL_KEY_SIZE * 2)

static pthread_once_t sodium_once = PTHREAD_ONCE_INIT;
static int sodium_status;

static void sodium_init_once(void) {
        sodium_status = sodium_init() < 0 ? -EIO : 0;
}

int glean_sodium_init(void) {
        (void) pthread_once(&sodium_once, sodium_init_once);
        return sodium_status;
}

void glean_pool_key_clear(GleanPoolKey *key) {
        if (key)
                sodium_memzero(key, sizeof(*key));
}

int glean_pool_key_generate(GleanPoolKey *ret) {
        int r = glean_sodium_init();

        if (r < 0)
                return r;
        randombytes_buf(ret->bytes, sizeof(ret->bytes));
        return 0;
}

int glean_pool_key_parse(const char *text, size_t len, GleanPoolKey *ret, char *why, size_t whylen) {
        GleanPoolKey key;
        const char *end = NULL;
        size_t n = 0;

        if (len > 0 && text[len - 1] == '\n')
                len--;
        if (len != KEY_HEX_LEN)
                return glean_why(-EBADMSG, why, whylen, "not a pool key: want %u hexadecimal digits and a newline, "
                                 "found %zu bytes", KEY_HEX_LEN, len);
        if (sodium_hex2bin(key.bytes, sizeof(key.bytes), text, len, NULL, &n, &end) < 0 || n != sizeof(key.bytes) ||
            end != text + len) {
                sodium_memzero(&key, sizeof(key));
                return glean_why(-EBADMSG, why, whylen, "not a pool key: a character other than a hexadecimal digit");
        }
        if (sodium_is_zero(key.bytes, sizeof(key.bytes)))
                return glean_why(-EBADMSG, why, whylen, "not a usable pool key: all zeros");
        *ret = key;
        sodium_memzero(&key, sizeof(key));
        return 0;
}

int glean_pool_key_load(const char *path, GleanPoolKey *ret, char *why, size_t whylen) {
        char text[KEY_HEX_LEN + 3], reason[128]; /* a key, its newline and one more: "found 65" */
        size_t len = 0;
        int r;

        if (!path || !*path)
                return glean_why(-EINVAL, why, whylen, "no pool key file named");
        r = glean_sodium_init();
        if (r < 0)
                return glean_why(r, why, whylen, "libsodium cannot be initialised");
        r = glean_secret_file_read(path, "pool key", "make one with 'glean pool-key --new'", text, sizeof(text), &len,
                                   why, whylen);
        if (r < 0)
                sodium_memzero(text, sizeof(text));
        if (r == -EFBIG)
                return glean_why(-EBADMSG, why, whylen, "%s: not a pool key: want %u hexadecimal digits and a newline, "
                                 "found more than %u bytes", path, KEY_HEX_LEN, KEY_HEX_LEN + 1);
        if (r < 0)
                return r;
        r = glean_pool_key_parse(text, len, ret, reason, sizeof(reason));
        sodium_memzero(text, sizeof(text));
        if (r < 0)
                return glean_why(r, why, whylen, "%s: %s", path, reason);
        return 0;
}

int glean_pool_key_save(const char *path, const GleanPoolKey *key, bool force, char *why, size_t whylen) {
        char text[KEY_HEX_LEN + 2];
        int r;

        sodium_bin2hex(text, sizeof(text), key->bytes, sizeof(key->bytes));
        text[KEY_HEX_LEN] = '\n';
        r = glean_secret_file_save(path, "pool key", text, KEY_HEX_LEN + 1, force, why, whylen);
        sodium_memzero(text, sizeof(text));
        return r;
}

void glean_pool_key_fingerprint(const GleanPoolKey *key, char ret[GLEAN_POOL_KEY_FINGERPRINT_LEN + 1]) {
        unsigned char fp[crypto_kdf_BYTES_MIN];

        _Static_assert(GLEAN_POOL_KEY_FINGERPRINT_LEN / 2 <= sizeof(fp), "fingerprint longer than the subkey");
        (void) glean_sodium_init();
        crypto_kdf_derive_from_key(fp, sizeof(fp), GLEAN_POOL_KDF_FINGERPRINT, GLEAN_POOL_KDF_CONTEXT, key->bytes);
        sodium_bin2hex(ret, GLEAN_POOL_KEY_FINGERPRINT_LEN + 1, fp, GLEAN_POOL_KEY_FINGERPRINT_LEN / 2);
}

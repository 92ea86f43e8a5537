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

/* Reads at most size bytes of fd; *ret_len how many. -errno. */
static int read_some(int fd, char *buf, size_t size, size_t *ret_len) {
        size_t got = 0;

        while (got < size) {
                ssize_t k = read(fd, buf + got, size - got);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                got += (size_t) k;
        }
        *ret_len = got;
        return 0;
}

int glean_pool_key_load(const char *path, GleanPoolKey *ret, char *why, size_t whylen) {
        _cleanup_close_ int fd = -1;
        char text[KEY_HEX_LEN + 2], reason[128];
        struct stat st;
        size_t len = 0;
        int r;

        if (!path || !*path)
                return glean_why(-EINVAL, why, whylen, "no pool key file named");
        r = glean_sodium_init();
        if (r < 0)
                return glean_why(r, why, whylen, "libsodium cannot be initialised");
        /* O_NONBLOCK: a FIFO put there must not hang us before fstat(). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return glean_why(r, why, whylen, "%s: no pool key there (make one with 'glean pool-key --new')",
                                         path);
                return glean_why(r, why, whylen, "%s: cannot open the pool key: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0)
                return glean_why(-errno, why, whylen, "%s: cannot stat the pool key: %m", path);
        if (!S_ISREG(st.st_mode))
                return glean_why(-EINVAL, why, whylen, "%s: the pool key is not a regular file", path);
        if (st.st_mode & 077)
                return glean_why(-EPERM, why, whylen,
                                 "%s: group or others have access to the pool key (mode %04o); it must be 0600 or 0400",
                                 path, (unsigned) (st.st_mode & 07777));
        if (st.st_uid != 0 && st.st_uid != geteuid())
                return glean_why(-EPERM, why, whylen, "%s: the pool key is owned by uid %u, not root", path,
                                 (unsigned) st.st_uid);

        r = read_some(fd, text, sizeof(text), &len);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot read the pool key: %s", path, strerror(-r));
        r = glean_pool_key_parse(text, len, ret, reason, sizeof(reason));
        sodium_memzero(text, sizeof(text));
        if (r < 0)
                return glean_why(r, why, whylen, "%s: %s", path, reason);
        return 0;
}

/* Writes all of buf to fd. -errno. */
static int write_all(int fd, const char *buf, size_t len) {
        while (len > 0) {
                ssize_t k = write(fd, buf, len);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                buf += k;
                len -= (size_t) k;
        }
        return 0;
}

/* Moves tmp to path; without replace an existing path is -EEXIST, also on
 * file systems without RENAME_NOREPLACE (then link() and unlink()). */
static int move_into_place(const char *tmp, const char *path, bool replace) {
        if (renameat2(AT_FDCWD, tmp, AT_FDCWD, path, replace ? 0 : RENAME_NOREPLACE) == 0)
                return 0;
        if (replace || errno != EINVAL)
                return -errno;
        if (link(tmp, path) < 0)
                return -errno;
        (void) unlink(tmp);
        return 0;
}

/* Makes dir (0755) when missing; its parent must exist. */
static int ensure_dir(const char *dir) {
        struct stat st;

        if (stat(dir, &st) == 0)
                return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
        if (errno != ENOENT)
                return -errno;
        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

/* Writes the key's text to a new temporary file (mode 0600) beside path
 * and fsync()s it; *ret_tmp its name. */
static int write_temporary(const char *dir, const char *base, const GleanPoolKey *key, char **ret_tmp) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        char text[KEY_HEX_LEN + 2];
        int r;

        if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC); /* O_EXCL, mode 0600 */
        if (fd < 0)
                return -errno;
        sodium_bin2hex(text, sizeof(text), key->bytes, sizeof(key->bytes));
        text[KEY_HEX_LEN] = '\n';
        r = fchmod(fd, 0600) < 0 ? -errno : write_all(fd, text, KEY_HEX_LEN + 1);
        sodium_memzero(text, sizeof(text));
        if (r >= 0 && fsync(fd) < 0)
                r = -errno;
        if (r >= 0 && close(TAKE_FD(fd)) < 0)
                r = -errno;
        if (r < 0) {
                (void) unlink(tmp);
                return r;
        }
        *ret_tmp = TAKE_PTR(tmp);
        return 0;
}

int glean_pool_key_save(const char *path, const GleanPoolKey *key, bool force, char *why, size_t whylen) {
        _cleanup_free_ char *dir = NULL, *tmp = NULL;
        const char *base, *slash;
        int r;

        if (!path || !*path || path[strlen(path) - 1] == '/')
                return glean_why(-EINVAL, why, whylen, "'%s' is not a file name", path ? path : "");
        slash = strrchr(path, '/');
        base = slash ? slash + 1 : path;
        dir = slash ? strndup(path, slash == path ? 1 : (size_t) (slash - path)) : strdup(".");
        if (!dir)
                return glean_why(-ENOMEM, why, whylen, "out of memory");

        r = ensure_dir(dir);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot make the directory: %s", dir, strerror(-r));
        r = write_temporary(dir, base, key, &tmp);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot write a new pool key there: %s", dir, strerror(-r));
        r = move_into_place(tmp, path, force);
        if (r < 0) {
                (void) unlink(tmp);
                if (r == -EEXIST)
                        return glean_why(r, why, whylen, "%s already exists; not replacing it", path);
                return glean_why(r, why, whylen, "%s: cannot put the new pool key in place: %s", path, strerror(-r));
        }

        /* The rename itself is durable once the directory is. */
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) < 0)
                return glean_why(-errno, why, whylen, "%s: cannot sync the directory: %m", dir);
        return 0;
}

void glean_pool_key_fingerprint(const GleanPoolKey *key, char ret[GLEAN_POOL_KEY_FINGERPRINT_LEN + 1]) {
        unsigned char fp[crypto_kdf_BYTES_MIN];

        _Static_assert(GLEAN_POOL_KEY_FINGERPRINT_LEN / 2 <= sizeof(fp), "fingerprint longer than the subkey");
        (void) glean_sodium_init();
        crypto_kdf_derive_from_key(fp, sizeof(fp), GLEAN_POOL_KDF_FINGERPRINT, GLEAN_POOL_KDF_CONTEXT, key->bytes);
        sodium_bin2hex(ret, GLEAN_POOL_KEY_FINGERPRINT_LEN + 1, fp, GLEAN_POOL_KEY_FINGERPRINT_LEN / 2);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secret.c — secret files (secret.h): checked before they are read,
 * replaced whole.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cleanup.h"
#include "secret.h"

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

int glean_secret_file_read(const char *path, const char *what, const char *hint, char *buf, size_t cap,
                           size_t *ret_len, char *why, size_t whylen) {
        _cleanup_close_ int fd = -1;
        struct stat st;
        size_t len = 0;
        int r;

        if (!path || !*path)
                return glean_why(-EINVAL, why, whylen, "no %s file named", what);
        /* O_NONBLOCK: a FIFO put there must not hang us before fstat(). */
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0) {
                r = -errno;
                if (r == -ENOENT)
                        return glean_why(r, why, whylen, "%s: no %s there%s%s%s", path, what, hint ? " (" : "",
                                         hint ? hint : "", hint ? ")" : "");
                return glean_why(r, why, whylen, "%s: cannot open the %s: %s", path, what, strerror(-r));
        }
        if (fstat(fd, &st) < 0)
                return glean_why(-errno, why, whylen, "%s: cannot stat the %s: %m", path, what);
        if (!S_ISREG(st.st_mode))
                return glean_why(-EINVAL, why, whylen, "%s: the %s is not a regular file", path, what);
        if (st.st_mode & 077)
                return glean_why(-EPERM, why, whylen,
                                 "%s: group or others have access to the %s (mode %04o); it must be 0600 or 0400",
                                 path, what, (unsigned) (st.st_mode & 07777));
        if (st.st_uid != 0 && st.st_uid != geteuid())
                return glean_why(-EPERM, why, whylen, "%s: the %s is owned by uid %u, not root", path, what,
                                 (unsigned) st.st_uid);
        if (cap == 0)
                return glean_why(-EINVAL, why, whylen, "no room to read the %s", what);
        r = read_some(fd, buf, cap, &len);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot read the %s: %s", path, what, strerror(-r));
        if (len >= cap)
                return glean_why(-EFBIG, why, whylen, "%s: too long for a %s (more than %zu bytes)", path, what,
                                 cap - 1);
        buf[len] = 0;
        *ret_len = len;
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

/* Writes text to a new temporary file (mode 0600) beside path and
 * fsync()s it; *ret_tmp its name. */
static int write_temporary(const char *dir, const char *base, const char *text, size_t len, char **ret_tmp) {
        _cleanup_free_ char *tmp = NULL;
        _cleanup_close_ int fd = -1;
        int r;

        if (asprintf(&tmp, "%s/.%s.XXXXXX", dir, base) < 0)
                return -ENOMEM;
        fd = mkostemp(tmp, O_CLOEXEC); /* O_EXCL, mode 0600 */
        if (fd < 0)
                return -errno;
        r = fchmod(fd, 0600) < 0 ? -errno : write_all(fd, text, len);
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

int glean_secret_file_save(const char *path, const char *what, const char *text, size_t len, bool force, char *why,
                           size_t whylen) {
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
        r = write_temporary(dir, base, text, len, &tmp);
        if (r < 0)
                return glean_why(r, why, whylen, "%s: cannot write a new %s there: %s", dir, what, strerror(-r));
        r = move_into_place(tmp, path, force);
        if (r < 0) {
                (void) unlink(tmp);
                if (r == -EEXIST)
                        return glean_why(r, why, whylen, "%s already exists; not replacing it", path);
                return glean_why(r, why, whylen, "%s: cannot put the new %s in place: %s", path, what, strerror(-r));
        }

        /* The rename itself is durable once the directory is. */
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0 || fsync(dfd) < 0)
                return glean_why(-errno, why, whylen, "%s: cannot sync the directory: %m", dir);
        return 0;
}

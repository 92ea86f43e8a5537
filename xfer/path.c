/* SPDX-License-Identifier: Apache-2.0 */
/*
 * path.c — names beneath a directory: which names a receiver accepts,
 * directories opened one component at a time without following a
 * symbolic link, leftovers of an interrupted transfer, and the lexical
 * check of a link's target.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "xfer-internal.h"

bool xfer_name_ok(const char *name) {
        size_t len = strlen(name);

        if (len == 0 || len > XFER_NAME_MAX || name[0] == '/')
                return false;
        for (const char *p = name; *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                if (n == 0 || n > 255 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.') ||
                    (n >= sizeof XFER_TMP_PREFIX - 1 && memcmp(p, XFER_TMP_PREFIX, sizeof XFER_TMP_PREFIX - 1) == 0))
                        return false;
                if (!e)
                        break;
                p = e + 1;
        }
        return true;
}

int xfer_open_dir_beneath(int dirfd, const char *rel, bool create, int *ret_fd) {
        int fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
        char comp[256];

        if (fd < 0)
                return -errno;
        for (const char *p = rel; p && *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                if (n >= sizeof comp) {
                        close(fd);
                        return -ENAMETOOLONG;
                }
                memcpy(comp, p, n);
                comp[n] = '\0';
                p = e ? e + 1 : NULL;
                if (n == 0 || strcmp(comp, ".") == 0)
                        continue;
                if (strcmp(comp, "..") == 0) {
                        close(fd);
                        return -EPERM;
                }
                int nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (nfd < 0 && errno == ENOENT && create) {
                        if (mkdirat(fd, comp, 0755) < 0 && errno != EEXIST) {
                                int r = -errno;
                                close(fd);
                                return r;
                        }
                        nfd = openat(fd, comp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                int r = -errno;
                close(fd);
                if (nfd < 0)
                        /* O_NOFOLLOW|O_DIRECTORY on a link: ENOTDIR or ELOOP; say ELOOP for a link */
                        return r == -ENOTDIR ? -ENOTDIR : r;
                fd = nfd;
        }
        *ret_fd = fd;
        return 0;
}

void xfer_clean_leftovers(int dirfd) {
        int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        DIR *d;
        struct dirent *de;

        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        while ((de = readdir(d)))
                if (strncmp(de->d_name, XFER_TMP_PREFIX, sizeof XFER_TMP_PREFIX - 1) == 0)
                        (void) unlinkat(dirfd, de->d_name, 0);
        closedir(d);
}

bool xfer_link_lexically_inside(const char *dir, const char *target) {
        long depth = 0;

        if (!target[0] || target[0] == '/')
                return false;
        for (const char *p = dir; p && *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.')
                        return false;
                if (n > 0 && !(n == 1 && p[0] == '.'))
                        depth++;
                p = e ? e + 1 : NULL;
        }
        for (const char *p = target; p && *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (--depth < 0)
                                return false;
                } else if (n > 0 && !(n == 1 && p[0] == '.'))
                        depth++;
                p = e ? e + 1 : NULL;
        }
        return true;
}

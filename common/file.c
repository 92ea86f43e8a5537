/* SPDX-License-Identifier: Apache-2.0 */
/* file.c — reading and replacing a whole (small) file. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "file.h"

int glean_read_file(const char *path, size_t max, char **ret, size_t *ret_len) {
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        char *buf = NULL;
        size_t len = 0, cap = 0;
        char chunk[65536];
        size_t n;
        int r = 0;
        while ((n = fread(chunk, 1, sizeof chunk, f)) > 0) {
                if (len + n > max) {
                        r = -EFBIG;
                        break;
                }
                if (len + n + 1 > cap) {
                        cap = (len + n + 1) * 2;
                        char *nb = realloc(buf, cap);
                        if (!nb) {
                                r = -ENOMEM;
                                break;
                        }
                        buf = nb;
                }
                memcpy(buf + len, chunk, n);
                len += n;
        }
        if (r >= 0 && ferror(f))
                r = -EIO;
        fclose(f);
        if (r >= 0 && !buf && !(buf = malloc(1)))
                r = -ENOMEM;
        if (r < 0) {
                free(buf);
                return r;
        }
        buf[len] = 0;
        *ret = buf;
        if (ret_len)
                *ret_len = len;
        return 0;
}

int glean_write_file_replace(const char *path, const void *data, size_t len, mode_t mode) {
        char tmp[PATH_MAX];
        if (snprintf(tmp, sizeof tmp, "%s.new", path) >= (int) sizeof tmp)
                return -ENAMETOOLONG;
        int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, mode);
        if (fd < 0)
                return -errno;
        int r = 0;
        for (const char *p = data; r == 0 && len > 0;) {
                ssize_t n = write(fd, p, len);
                if (n < 0 && errno != EINTR)
                        r = -errno;
                else if (n > 0) {
                        p += n;
                        len -= (size_t) n;
                }
        }
        if (close(fd) < 0 && r == 0)
                r = -errno;
        if (r == 0 && rename(tmp, path) < 0)
                r = -errno;
        if (r < 0)
                unlink(tmp);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-file.c — the cgroup driver's file access: control files read and
 * written relative to a directory fd (O_WRONLY|O_CLOEXEC, never O_CREAT;
 * a missing file is a controller not enabled here), keyed files such as
 * cgroup.events and cpu.stat, and the controller names.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-internal.h"

const CgController cg_controller_table[5] = {
        { "cpu", CG_CPU }, { "cpuset", CG_CPUSET }, { "io", CG_IO }, { "memory", CG_MEMORY }, { "pids", CG_PIDS },
};

unsigned cg_mask_parse(const char *s) {
        unsigned mask = 0;

        while (s && *s) {
                size_t n;

                s += strspn(s, " \t\n");
                n = strcspn(s, " \t\n");
                for (size_t i = 0; i < sizeof(cg_controller_table) / sizeof(cg_controller_table[0]); i++)
                        if (strlen(cg_controller_table[i].name) == n && strncmp(s, cg_controller_table[i].name, n) == 0)
                                mask |= cg_controller_table[i].bit;
                s += n;
        }
        return mask;
}

void cg_controllers_string(unsigned mask, char *buf, size_t len) {
        size_t used = 0;

        if (!buf || len == 0)
                return;
        buf[0] = '\0';
        for (size_t i = 0; i < sizeof(cg_controller_table) / sizeof(cg_controller_table[0]); i++) {
                int n;

                if (!(mask & cg_controller_table[i].bit))
                        continue;
                n = snprintf(buf + used, len - used, "%s%s", used ? " " : "", cg_controller_table[i].name);
                if (n < 0 || (size_t) n >= len - used) {
                        buf[used] = '\0'; /* never a cut name */
                        return;
                }
                used += (size_t) n;
        }
}

int cg_write_at(int dirfd, const char *dir, const char *file, const char *value, char *why, size_t whylen) {
        _cleanup_close_ int fd = -1;
        size_t len = strlen(value);
        ssize_t n;

        fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
        if (fd < 0) {
                if (errno == ENOENT)
                        return glean_why(-ENODEV, why, whylen, "%s/%s does not exist: controller not enabled here",
                                      dir, file);
                return glean_why(-errno, why, whylen, "cannot open %s/%s: %s", dir, file, strerror(errno));
        }
        n = write(fd, value, len);
        if (n < 0)
                return glean_why(-errno, why, whylen, "cannot write '%s' to %s/%s: %s", value, dir, file,
                              strerror(errno));
        if ((size_t) n != len)
                return glean_why(-EIO, why, whylen, "short write of '%s' to %s/%s", value, dir, file);
        return 0;
}

int cg_read_at(int dirfd, const char *file, char **ret) {
        _cleanup_close_ int fd = -1;
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, cap = 4096;

        fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                ssize_t n;

                if (cap - len < 2) {
                        char *bigger = realloc(buf, cap * 2);

                        if (!bigger)
                                return -ENOMEM;
                        buf = bigger;
                        cap *= 2;
                }
                n = read(fd, buf + len, cap - len - 1);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        return 0;
}

int cg_read_small_at(int dirfd, const char *file, char *buf, size_t size) {
        _cleanup_close_ int fd = -1;
        size_t len = 0;

        fd = openat(dirfd, file, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        while (len < size - 1) {
                ssize_t n = read(fd, buf + len, size - 1 - len);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                len += (size_t) n;
        }
        buf[len] = '\0';
        return 0;
}

int cg_keyed_get(const char *text, const char *key, uint64_t *ret) {
        size_t klen = strlen(key);

        for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, key, klen) == 0 && p[klen] == ' ') {
                        char *end;
                        unsigned long long v;

                        errno = 0;
                        v = strtoull(p + klen + 1, &end, 10);
                        if (errno != 0 || end == p + klen + 1)
                                return -EINVAL;
                        *ret = v;
                        return 0;
                }
        return -ENOENT;
}

int cg_read_int64_at(int dirfd, const char *file, int64_t *ret) {
        char buf[64], *end;
        long long v;
        int r;

        r = cg_read_small_at(dirfd, file, buf, sizeof(buf));
        if (r < 0)
                return r;
        if (strncmp(buf, "max", 3) == 0) {
                *ret = INT64_MAX;
                return 0;
        }
        errno = 0;
        v = strtoll(buf, &end, 10);
        if (errno != 0 || end == buf)
                return -EINVAL;
        *ret = v;
        return 0;
}

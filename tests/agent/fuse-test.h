/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuse-test.h — a process SIGKILL cannot end, for the tests of cgroups
 * that will not empty: a FUSE file system whose server (the test itself,
 * through /dev/fuse) answers FUSE_INIT and then reads the next request
 * without ever answering it. The process that made that request (a job's
 * `cat <mnt>/x`) waits uninterruptibly in the kernel (state D): once the
 * server has read a request, the kernel waits for its answer whatever
 * signals come. Closing /dev/fuse aborts the connection: the request
 * fails, the process goes on and dies of the SIGKILL it got meanwhile.
 *
 * The VM rig only (it mounts a file system; the rig has the fuse module);
 * the file system lives in a directory of its own under /tmp, never
 * inside a directory a test removes with rm -rf while it is mounted.
 */
#pragma once

/* Needs _GNU_SOURCE, defined before the first #include. */

#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct FuseTest {
        int fd;          /* /dev/fuse, -1 when released */
        char dir[64];    /* /tmp/glean-fuse-XXXXXX, 0755 */
        char mnt[96];    /* dir/mnt: the mount point */
        char file[128];  /* mnt/x: what the stuck process reads */
        bool mounted;
} FuseTest;

/* Reads one request into buf (at least FUSE_MIN_READ_BUFFER), waiting up
 * to ms: its length, or -errno (-ETIMEDOUT). */
static inline ssize_t fusetest_read(FuseTest *f, void *buf, size_t len, int ms) {
        struct pollfd p = { .fd = f->fd, .events = POLLIN };
        int r = poll(&p, 1, ms);
        if (r < 0)
                return -errno;
        if (r == 0)
                return -ETIMEDOUT;
        ssize_t n = read(f->fd, buf, len);
        return n < 0 ? -errno : n;
}

/* Mounts the file system (modprobe fuse first when /dev/fuse is missing)
 * and answers FUSE_INIT. 0, or -errno with why (a sentence). */
static inline int fusetest_mount(FuseTest *f, char *why, size_t whylen) {
        static char buf[FUSE_MIN_READ_BUFFER + 256 * 1024];
        char opts[160];
        *f = (FuseTest){ .fd = -1 };
        if (access("/dev/fuse", F_OK) < 0 && system("modprobe fuse >/dev/null 2>&1") != 0) {
                snprintf(why, whylen, "no /dev/fuse, and modprobe fuse failed");
                return -ENODEV;
        }
        f->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
        if (f->fd < 0) {
                int r = -errno;
                snprintf(why, whylen, "open /dev/fuse: %s", strerror(-r));
                return r;
        }
        snprintf(f->dir, sizeof f->dir, "/tmp/glean-fuse-XXXXXX");
        if (!mkdtemp(f->dir) || chmod(f->dir, 0755) < 0) {
                int r = -errno;
                snprintf(why, whylen, "mkdtemp: %s", strerror(-r));
                close(f->fd);
                f->fd = -1;
                return r;
        }
        snprintf(f->mnt, sizeof f->mnt, "%s/mnt", f->dir);
        snprintf(f->file, sizeof f->file, "%s/x", f->mnt);
        mkdir(f->mnt, 0755);
        /* allow_other: the jobs run as nobody. */
        snprintf(opts, sizeof opts, "fd=%d,rootmode=40755,user_id=0,group_id=0,allow_other", f->fd);
        if (mount("glean-test", f->mnt, "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                int r = -errno;
                snprintf(why, whylen, "mount -t fuse %s: %s", f->mnt, strerror(-r));
                close(f->fd);
                f->fd = -1;
                rmdir(f->mnt);
                rmdir(f->dir);
                return r;
        }
        f->mounted = true;
        ssize_t n = fusetest_read(f, buf, sizeof buf, 5000);
        const struct fuse_in_header *in = (const void *) buf;
        if (n < (ssize_t) (sizeof *in + sizeof(struct fuse_init_in)) || in->opcode != FUSE_INIT) {
                snprintf(why, whylen, "no FUSE_INIT from the kernel (%zd)", n);
                return -EPROTO;
        }
        const struct fuse_init_in *init = (const void *) (in + 1);
        struct {
                struct fuse_out_header h;
                struct fuse_init_out o;
        } reply = { 0 };
        reply.h.len = sizeof reply;
        reply.h.unique = in->unique;
        reply.o.major = FUSE_KERNEL_VERSION;
        reply.o.minor = init->minor < FUSE_KERNEL_MINOR_VERSION ? init->minor : FUSE_KERNEL_MINOR_VERSION;
        reply.o.max_write = 4096;
        if (write(f->fd, &reply, sizeof reply) != (ssize_t) sizeof reply) {
                int r = -errno;
                snprintf(why, whylen, "the answer to FUSE_INIT: %s", strerror(-r));
                return r ? r : -EIO;
        }
        return 0;
}

/* Waits up to ms for the next request (a process looking up mnt/x) and
 * never answers it: the process that made it cannot die from now on.
 * Returns its opcode (FUSE_LOOKUP, ...), or -errno. */
static inline int fusetest_hold_next(FuseTest *f, int ms) {
        static char buf[FUSE_MIN_READ_BUFFER + 256 * 1024];
        ssize_t n = fusetest_read(f, buf, sizeof buf, ms);
        if (n < 0)
                return (int) n;
        if (n < (ssize_t) sizeof(struct fuse_in_header))
                return -EPROTO;
        return (int) ((const struct fuse_in_header *) buf)->opcode;
}

/* Aborts the connection (the held process goes on, and dies if it was
 * killed) and unmounts; accepts one never mounted or already released. */
static inline void fusetest_release(FuseTest *f) {
        if (f->fd >= 0) {
                close(f->fd);
                f->fd = -1;
        }
        if (f->mounted) {
                umount2(f->mnt, MNT_DETACH);
                f->mounted = false;
        }
        if (f->dir[0]) {
                rmdir(f->mnt);
                rmdir(f->dir);
                f->dir[0] = 0;
        }
}

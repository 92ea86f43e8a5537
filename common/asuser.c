/* SPDX-License-Identifier: Apache-2.0 */
/*
 * asuser.c — file work as a user from a root daemon (asuser.h).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "asuser.h"

int glean_user_cred(const char *name, GleanUserCred *ret) {
        struct passwd pw, *res = NULL;
        char buf[4096], *end;
        int n;

        if (!name || !*name || !ret)
                return -EINVAL;
        unsigned long id = strtoul(name, &end, 10);
        if (*end == '\0' && id <= (unsigned long) (uid_t) -2)
                getpwuid_r((uid_t) id, &pw, buf, sizeof buf, &res);
        else
                getpwnam_r(name, &pw, buf, sizeof buf, &res);
        if (!res)
                return -ENOENT;
        if (res->pw_uid == 0)
                return -EPERM;
        *ret = (GleanUserCred){ .uid = res->pw_uid, .gid = res->pw_gid };
        snprintf(ret->name, sizeof ret->name, "%s", res->pw_name);
        n = (int) (sizeof ret->groups / sizeof ret->groups[0]);
        if (getgrouplist(res->pw_name, res->pw_gid, ret->groups, &n) < 0) {
                /* more groups than we keep: the primary one alone */
                ret->groups[0] = res->pw_gid;
                n = 1;
        }
        ret->n_groups = (size_t) n;
        return 0;
}

int glean_become_user(const GleanUserCred *cred) {
        if (!cred || cred->uid == 0)
                return -EPERM;
        if (setgroups(cred->n_groups, cred->groups) < 0 || setresgid(cred->gid, cred->gid, cred->gid) < 0 ||
            setresuid(cred->uid, cred->uid, cred->uid) < 0)
                return -errno;
        /* no way back */
        if (setresuid(0, 0, 0) == 0 || geteuid() == 0 || getegid() != cred->gid)
                return -EPERM;
        return 0;
}

/* The child's side: become the user, open, send the descriptor or the
 * errno as one byte of data with it. */
static void open_child(int sock, const GleanUserCred *cred, const char *path, int flags, mode_t mode) {
        int err = 0, fd = -1;
        int r = glean_become_user(cred);
        if (r < 0)
                err = -r;
        else {
                fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd < 0)
                        err = errno;
        }
        unsigned char code = (unsigned char) (err > 255 ? EIO : err);
        struct iovec iov = { .iov_base = &code, .iov_len = 1 };
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
        if (fd >= 0) {
                memset(&u, 0, sizeof u);
                m.msg_control = u.buf;
                m.msg_controllen = sizeof u.buf;
                struct cmsghdr *c = CMSG_FIRSTHDR(&m);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &fd, sizeof fd);
        }
        _exit(sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : 1);
}

int glean_open_as_user(const GleanUserCred *cred, const char *path, int flags, mode_t mode, int *ret_fd) {
        int sv[2], status, r;

        if (!cred || cred->uid == 0)
                return -EPERM;
        if (!path || !ret_fd)
                return -EINVAL;
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        pid_t pid = fork();
        if (pid < 0) {
                r = -errno;
                close(sv[0]);
                close(sv[1]);
                return r;
        }
        if (pid == 0) {
                close(sv[0]);
                open_child(sv[1], cred, path, flags, mode);
        }
        close(sv[1]);

        unsigned char code = EIO;
        struct iovec iov = { .iov_base = &code, .iov_len = 1 };
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof u.buf };
        ssize_t n;
        do
                n = recvmsg(sv[0], &m, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        int fd = -1;
        if (n == 1) {
                for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
                        if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS &&
                            c->cmsg_len == CMSG_LEN(sizeof(int)))
                                memcpy(&fd, CMSG_DATA(c), sizeof fd);
        }
        close(sv[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (n != 1)
                return fd >= 0 ? (close(fd), -EIO) : -EIO;
        if (code != 0 || fd < 0) {
                if (fd >= 0)
                        close(fd);
                return -(code ? (int) code : EIO);
        }
        *ret_fd = fd;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.c — unix stream sockets: listening (with stale-socket cleanup that
 * never touches anything but a dead socket), connecting, and who is on the
 * other end (SO_PEERCRED) and whether they may administer.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "common-internal.h"
#include "proto.h"

#define NSS_BUF_MAX (1024 * 1024)

static int make_addr(const char *path, struct sockaddr_un *ret, socklen_t *ret_len) {
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        size_t n;

        if (!path || !*path)
                return -EINVAL;
        n = strlen(path);
        if (n >= sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        memcpy(sa.sun_path, path, n + 1);
        *ret = sa;
        *ret_len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + n + 1);
        return 0;
}

/* Whether something accepts connections on the socket file at sa:
 * 1 alive, 0 dead (ECONNREFUSED), -errno when that cannot be told. */
static int socket_alive(const struct sockaddr_un *sa, socklen_t len) {
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return -errno;
        if (connect(fd, (const struct sockaddr *) sa, len) == 0)
                return 1;
        if (errno == EAGAIN || errno == EINPROGRESS)
                return 1; /* a listener whose backlog is full */
        if (errno == ECONNREFUSED)
                return 0;
        return -errno;
}

int glean_sock_listen_unix(const char *path, mode_t mode, int *ret_fd) {
        _cleanup_close_ int fd = -1;
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        r = make_addr(path, &sa, &len);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;

        if (bind(fd, (struct sockaddr *) &sa, len) < 0) {
                struct stat st;

                if (errno != EADDRINUSE)
                        return -errno;
                if (lstat(path, &st) < 0)
                        return -errno;
                if (!S_ISSOCK(st.st_mode))
                        return -EEXIST; /* never remove anything that is not a socket */
                r = socket_alive(&sa, len);
                if (r < 0)
                        return r;
                if (r > 0)
                        return -EADDRINUSE;
                if (unlink(path) < 0 && errno != ENOENT)
                        return -errno;
                if (bind(fd, (struct sockaddr *) &sa, len) < 0)
                        return -errno;
        }

        if (chmod(path, mode) < 0 || listen(fd, SOMAXCONN) < 0) {
                r = -errno;
                (void) unlink(path);
                return r;
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int glean_sock_connect_unix(const char *path, int timeout_ms, int *ret_fd) {
        _cleanup_close_ int fd = -1;
        int64_t deadline = glean_deadline(timeout_ms);
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        r = make_addr(path, &sa, &len);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        for (;;) {
                if (connect(fd, (struct sockaddr *) &sa, len) == 0 || errno == EISCONN)
                        break;
                if (errno == EINTR)
                        continue;
                if (errno != EAGAIN)
                        return -errno;
                /* The listener's backlog is full: try again shortly. */
                int left = glean_remaining_ms(deadline);
                if (left == 0)
                        return -ETIMEDOUT;
                struct timespec ts = { 0, 10 * 1000 * 1000 };
                if (left > 0 && left < 10)
                        ts.tv_nsec = (long) left * 1000 * 1000;
                (void) nanosleep(&ts, NULL);
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

/* ---- peers ---- */

/* Calls getpwuid_r / getpwnam_r / getgrnam_r with a growing buffer: 1 and
 * *buf holding the record's strings, 0 when there is no such entry. */
static int nss_pwuid(uid_t uid, struct passwd *pw, char **buf) {
        for (size_t n = 1024; n <= NSS_BUF_MAX; n *= 2) {
                struct passwd *res = NULL;
                char *b = realloc(*buf, n);
                if (!b)
                        return -ENOMEM;
                *buf = b;
                int e = getpwuid_r(uid, pw, b, n, &res);
                if (e == ERANGE)
                        continue;
                return res ? 1 : 0;
        }
        return 0;
}

static int nss_pwnam(const char *name, struct passwd *pw, char **buf) {
        for (size_t n = 1024; n <= NSS_BUF_MAX; n *= 2) {
                struct passwd *res = NULL;
                char *b = realloc(*buf, n);
                if (!b)
                        return -ENOMEM;
                *buf = b;
                int e = getpwnam_r(name, pw, b, n, &res);
                if (e == ERANGE)
                        continue;
                return res ? 1 : 0;
        }
        return 0;
}

static int nss_grnam(const char *name, struct group *gr, char **buf) {
        for (size_t n = 1024; n <= NSS_BUF_MAX; n *= 2) {
                struct group *res = NULL;
                char *b = realloc(*buf, n);
                if (!b)
                        return -ENOMEM;
                *buf = b;
                int e = getgrnam_r(name, gr, b, n, &res);
                if (e == ERANGE)
                        continue;
                return res ? 1 : 0;
        }
        return 0;
}

int glean_sock_peer(int fd, GleanPeer *ret) {
        _cleanup_free_ char *buf = NULL;
        struct ucred cred;
        socklen_t len = sizeof(cred);
        struct passwd pw;
        GleanPeer p = {};
        int r;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        if (len != sizeof(cred))
                return -EIO;
        p.pid = cred.pid;
        p.uid = cred.uid;
        p.gid = cred.gid;

        r = nss_pwuid(p.uid, &pw, &buf);
        if (r < 0)
                return r;
        if (r > 0 && pw.pw_name && *pw.pw_name && strlen(pw.pw_name) < sizeof(p.user))
                strcpy(p.user, pw.pw_name);
        else
                snprintf(p.user, sizeof(p.user), "%u", (unsigned) p.uid);
        *ret = p;
        return 0;
}

/* Whether the user uid (primary group gid) is a member of group g. */
static bool in_group(uid_t uid, gid_t gid, gid_t g) {
        _cleanup_free_ char *buf = NULL;
        _cleanup_free_ gid_t *groups = NULL;
        struct passwd pw;
        int n = 32;

        if (gid == g)
                return true;
        if (nss_pwuid(uid, &pw, &buf) <= 0)
                return false;
        for (int tries = 0; tries < 8; tries++) {
                gid_t *t = realloc(groups, sizeof(gid_t) * (size_t) n);
                if (!t)
                        return false;
                groups = t;
                int k = n;
                if (getgrouplist(pw.pw_name, gid, groups, &k) >= 0) {
                        for (int i = 0; i < k; i++)
                                if (groups[i] == g)
                                        return true;
                        return false;
                }
                n = k > n ? k : n * 2; /* k: the number needed */
        }
        return false;
}

/* The gid that "%group" names: by name, else as a number. */
static bool group_gid(const char *name, gid_t *ret) {
        _cleanup_free_ char *buf = NULL;
        struct group gr;
        char *end;

        if (nss_grnam(name, &gr, &buf) > 0) {
                *ret = gr.gr_gid;
                return true;
        }
        errno = 0;
        unsigned long v = strtoul(name, &end, 10);
        if (*name && *name != '-' && !*end && errno == 0 && v < (gid_t) -1) {
                *ret = (gid_t) v;
                return true;
        }
        return false;
}

/* Whether the entry (a user name or a uid as text) is p's user. */
static bool is_user(const GleanPeer *p, const char *entry) {
        _cleanup_free_ char *buf = NULL;
        struct passwd pw;
        char uid_text[16];

        if (strcmp(entry, p->user) == 0)
                return true;
        snprintf(uid_text, sizeof(uid_text), "%u", (unsigned) p->uid);
        if (strcmp(entry, uid_text) == 0)
                return true;
        /* another name of the same uid */
        return nss_pwnam(entry, &pw, &buf) > 0 && pw.pw_uid == p->uid;
}

bool glean_peer_is_admin(const GleanPeer *p, char *const *administrators) {
        if (!p)
                return false;
        if (p->uid == 0)
                return true;
        if (!administrators)
                return false;
        for (char *const *a = administrators; *a; a++) {
                const char *entry = *a;
                if (!*entry)
                        continue;
                if (entry[0] == '%') {
                        gid_t g;
                        if (entry[1] && group_gid(entry + 1, &g) && in_group(p->uid, p->gid, g))
                                return true;
                } else if (is_user(p, entry))
                        return true;
        }
        return false;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.c — unix stream sockets: listening (with stale-socket cleanup that
 * never touches anything but a dead socket), connecting, and who is on the
 * other end (SO_PEERCRED) and whether they may administer.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
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
#include "users.h"

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

/* A new unix stream socket (non-blocking, close-on-exec) and the address
 * of path: the fd, or -errno. */
static int unix_socket(const char *path, struct sockaddr_un *ret_sa, socklen_t *ret_len) {
        int fd, r;

        r = make_addr(path, ret_sa, ret_len);
        if (r < 0)
                return r;
        fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        return fd < 0 ? -errno : fd;
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

/* Whether path may be taken: absent or a dead socket (0); a live one is
 * -EADDRINUSE; anything that is not a socket -EEXIST (never removed). */
static int check_free(const char *path) {
        struct sockaddr_un sa;
        socklen_t len;
        struct stat st;
        int r;

        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;
        if ((r = make_addr(path, &sa, &len)) < 0)
                return r;
        r = socket_alive(&sa, len);
        return r < 0 ? r : r > 0 ? -EADDRINUSE : 0;
}

/* The socket is made under a temporary name (bound, its mode set,
 * listening) and renamed over path: a client sees either no socket or one
 * that accepts, never a file that refuses connections. */
int glean_sock_listen_unix(const char *path, mode_t mode, int *ret_fd) {
        _cleanup_close_ int fd = -1;
        char tmp[sizeof(((struct sockaddr_un *) 0)->sun_path) + 16];
        struct sockaddr_un sa;
        socklen_t len;
        int r;

        if ((r = make_addr(path, &sa, &len)) < 0) /* clients must reach it: -EINVAL, -ENAMETOOLONG */
                return r;
        if ((r = check_free(path)) < 0)
                return r;
        /* "<path>.new", or "<dir>/.gs<pid>" where that does not fit sun_path. */
        snprintf(tmp, sizeof(tmp), "%s.new", path);
        if (strlen(tmp) >= sizeof(sa.sun_path)) {
                const char *slash = strrchr(path, '/');
                int dir = slash ? (int) (slash - path + 1) : 0;
                snprintf(tmp, sizeof(tmp), "%.*s.gs%d", dir, path, (int) getpid());
        }
        if ((r = check_free(tmp)) < 0)
                return r;
        (void) unlink(tmp);
        fd = unix_socket(tmp, &sa, &len);
        if (fd < 0)
                return fd; /* -ENAMETOOLONG */
        if (bind(fd, (struct sockaddr *) &sa, len) < 0)
                return -errno;
        if (chmod(tmp, mode) < 0 || listen(fd, SOMAXCONN) < 0 || rename(tmp, path) < 0) {
                r = -errno;
                (void) unlink(tmp);
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

        fd = unix_socket(path, &sa, &len);
        if (fd < 0)
                return fd;
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

        r = glean_getpwuid(p.uid, &pw, &buf);
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
        size_t n;

        if (gid == g)
                return true;
        if (glean_getpwuid(uid, &pw, &buf) <= 0 || glean_getgrouplist(pw.pw_name, gid, &groups, &n) < 0)
                return false;
        for (size_t i = 0; i < n; i++)
                if (groups[i] == g)
                        return true;
        return false;
}

/* The gid that "%group" names: by name, else as a number. */
static bool group_gid(const char *name, gid_t *ret) {
        _cleanup_free_ char *buf = NULL;
        struct group gr;
        char *end;

        if (glean_getgrnam(name, &gr, &buf) > 0) {
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
        return glean_getpwnam(entry, &pw, &buf) > 0 && pw.pw_uid == p->uid;
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

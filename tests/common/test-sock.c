/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-sock.c — unix sockets and peers (common/proto.h): listen and connect
 * in a private temporary directory, the socket's mode, SO_PEERCRED, a stale
 * socket replaced, a live one and any other file type left alone, path
 * length, and who is an administrator (root, user names, uids, %groups by
 * primary and by supplementary membership).
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
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "proto.h"
#include "test-util.h"

static char tmpdir[64];

static void path_in_tmp(char *buf, size_t n, const char *name) {
        snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void test_listen_connect_peer(void) {
        char path[128];
        int lfd = -1, cfd = -1, afd = -1;
        struct stat st;
        GleanPeer p;

        path_in_tmp(path, sizeof(path), "agent.sock");
        CU_ASSERT_EQUAL_FATAL(glean_sock_listen_unix(path, 0666, &lfd), 0);
        CU_ASSERT_EQUAL(lstat(path, &st), 0);
        CU_ASSERT(S_ISSOCK(st.st_mode));
        CU_ASSERT_EQUAL(st.st_mode & 07777, 0666);
        int fl = fcntl(lfd, F_GETFL), fdfl = fcntl(lfd, F_GETFD);
        CU_ASSERT(fl & O_NONBLOCK);
        CU_ASSERT(fdfl & FD_CLOEXEC);

        /* nothing to accept yet: non-blocking */
        CU_ASSERT_EQUAL(accept4(lfd, NULL, NULL, SOCK_CLOEXEC), -1);
        CU_ASSERT_EQUAL(errno, EAGAIN);

        CU_ASSERT_EQUAL_FATAL(glean_sock_connect_unix(path, 1000, &cfd), 0);
        CU_ASSERT(fcntl(cfd, F_GETFD) & FD_CLOEXEC);
        afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        CU_ASSERT_FATAL(afd >= 0);

        /* both ends see this process */
        CU_ASSERT_EQUAL(glean_sock_peer(afd, &p), 0);
        CU_ASSERT_EQUAL(p.uid, getuid());
        CU_ASSERT_EQUAL(p.gid, getgid());
        CU_ASSERT_EQUAL(p.pid, getpid());
        struct passwd *pw = getpwuid(getuid());
        if (pw)
                CU_ASSERT_STRING_EQUAL(p.user, pw->pw_name);
        CU_ASSERT_EQUAL(glean_sock_peer(cfd, &p), 0);
        CU_ASSERT_EQUAL(p.uid, getuid());
        CU_ASSERT_EQUAL(p.pid, getpid());

        /* frames go through */
        CU_ASSERT_EQUAL(glean_frame_write(cfd, "ping", 4, 1000), 0);
        char *out = NULL;
        size_t len;
        CU_ASSERT_EQUAL(glean_frame_recv(afd, 0, 1000, &out, &len), 0);
        CU_ASSERT_STRING_EQUAL(out, "ping");
        free(out);

        /* not a socket */
        int pfd[2];
        CU_ASSERT_FATAL(pipe(pfd) == 0);
        CU_ASSERT(glean_sock_peer(pfd[0], &p) < 0);
        close(pfd[0]);
        close(pfd[1]);

        close(afd);
        close(cfd);
        close(lfd);

        /* another mode */
        CU_ASSERT_EQUAL(unlink(path), 0);
        CU_ASSERT_EQUAL_FATAL(glean_sock_listen_unix(path, 0600, &lfd), 0);
        CU_ASSERT_EQUAL(lstat(path, &st), 0);
        CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
        close(lfd);
        CU_ASSERT_EQUAL(unlink(path), 0);
}

/* A peer of another uid with no user name: the uid as text. */
static void test_peer_unknown_user(void) {
        char path[128];
        int lfd = -1, afd, status;
        const uid_t uid = 54321;
        GleanPeer p;

        if (geteuid() != 0) {
                printf("(skipped: needs root to connect as uid %u) ", (unsigned) uid);
                return;
        }
        CU_ASSERT_FATAL(getpwuid(uid) == NULL);
        path_in_tmp(path, sizeof(path), "unknown.sock");
        CU_ASSERT_EQUAL_FATAL(glean_sock_listen_unix(path, 0666, &lfd), 0);
        /* the directory must let the child through */
        CU_ASSERT_EQUAL(chmod(tmpdir, 0711), 0);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
                int fd;
                if (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0)
                        _exit(2);
                if (glean_sock_connect_unix(path, 1000, &fd) < 0)
                        _exit(3);
                char b;
                while (read(fd, &b, 1) > 0)
                        ;
                _exit(0);
        }
        for (int i = 0; i < 500; i++) {
                afd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (afd >= 0)
                        break;
                usleep(10000);
        }
        CU_ASSERT_FATAL(afd >= 0);
        CU_ASSERT_EQUAL(glean_sock_peer(afd, &p), 0);
        CU_ASSERT_EQUAL(p.uid, uid);
        CU_ASSERT_EQUAL(p.gid, uid);
        CU_ASSERT_EQUAL(p.pid, pid);
        CU_ASSERT_STRING_EQUAL(p.user, "54321");
        CU_ASSERT_FALSE(glean_peer_is_admin(&p, (char *[]){ "root", "%root", NULL }));
        CU_ASSERT_TRUE(glean_peer_is_admin(&p, (char *[]){ "54321", NULL }));
        close(afd);
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        chmod(tmpdir, 0700);
        close(lfd);
        unlink(path);
}

static void test_stale_socket(void) {
        char path[128];
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        int fd, lfd = -1, cfd = -1;

        path_in_tmp(path, sizeof(path), "stale.sock");
        /* a socket file nobody listens on, as a crashed agent leaves it */
        fd = socket(AF_UNIX, SOCK_STREAM, 0);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_FATAL(strlen(path) < sizeof(sa.sun_path));
        memcpy(sa.sun_path, path, strlen(path) + 1);
        CU_ASSERT_FATAL(bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0);
        close(fd);

        CU_ASSERT_EQUAL_FATAL(glean_sock_listen_unix(path, 0666, &lfd), 0);
        CU_ASSERT_EQUAL(glean_sock_connect_unix(path, 1000, &cfd), 0);
        close(cfd);

        /* a live one is not taken over */
        int second = -1;
        CU_ASSERT_EQUAL(glean_sock_listen_unix(path, 0666, &second), -EADDRINUSE);
        CU_ASSERT_EQUAL(second, -1);
        /* and still works */
        CU_ASSERT_EQUAL(glean_sock_connect_unix(path, 1000, &cfd), 0);
        close(cfd);
        close(lfd);
        CU_ASSERT_EQUAL(unlink(path), 0);
}

/* Files that are not sockets are never removed. */
static void test_other_files_kept(void) {
        char path[128], target[128];
        struct stat st;
        int lfd = -1;

        path_in_tmp(path, sizeof(path), "regular");
        int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_EQUAL(write(fd, "keep me", 7), 7);
        close(fd);
        CU_ASSERT_EQUAL(glean_sock_listen_unix(path, 0666, &lfd), -EEXIST);
        CU_ASSERT_EQUAL(lfd, -1);
        CU_ASSERT_EQUAL(lstat(path, &st), 0);
        CU_ASSERT(S_ISREG(st.st_mode));
        CU_ASSERT_EQUAL(st.st_size, 7);
        CU_ASSERT_EQUAL(st.st_mode & 07777, 0644);

        /* a directory */
        path_in_tmp(target, sizeof(target), "dir");
        CU_ASSERT_FATAL(mkdir(target, 0700) == 0);
        CU_ASSERT_EQUAL(glean_sock_listen_unix(target, 0666, &lfd), -EEXIST);
        CU_ASSERT_EQUAL(rmdir(target), 0);

        /* a symbolic link (to the regular file): the link stays */
        path_in_tmp(target, sizeof(target), "link");
        CU_ASSERT_FATAL(symlink(path, target) == 0);
        CU_ASSERT_EQUAL(glean_sock_listen_unix(target, 0666, &lfd), -EEXIST);
        CU_ASSERT_EQUAL(lstat(target, &st), 0);
        CU_ASSERT(S_ISLNK(st.st_mode));
        CU_ASSERT_EQUAL(unlink(target), 0);
        CU_ASSERT_EQUAL(unlink(path), 0);

        /* a file at the temporary name the socket is made under: kept too */
        {
                char tmpname[160];
                path_in_tmp(target, sizeof(target), "made");
                snprintf(tmpname, sizeof(tmpname), "%s.new", target);
                fd = open(tmpname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
                CU_ASSERT_FATAL(fd >= 0);
                close(fd);
                CU_ASSERT_EQUAL(glean_sock_listen_unix(target, 0666, &lfd), -EEXIST);
                CU_ASSERT_EQUAL(lstat(tmpname, &st), 0);
                CU_ASSERT(S_ISREG(st.st_mode));
                CU_ASSERT(lstat(target, &st) < 0 && errno == ENOENT);
                CU_ASSERT_EQUAL(unlink(tmpname), 0);
        }

        /* no such directory */
        path_in_tmp(path, sizeof(path), "no/such/dir.sock");
        CU_ASSERT_EQUAL(glean_sock_listen_unix(path, 0666, &lfd), -ENOENT);
}

static void test_path_length(void) {
        struct sockaddr_un sa;
        char path[sizeof(sa.sun_path) + 16];
        int fd = -1;

        /* exactly one byte too long for sun_path with its NUL */
        memset(path, 'x', sizeof(sa.sun_path));
        path[0] = '/';
        path[sizeof(sa.sun_path)] = '\0';
        CU_ASSERT_EQUAL(glean_sock_listen_unix(path, 0666, &fd), -ENAMETOOLONG);
        CU_ASSERT_EQUAL(glean_sock_connect_unix(path, 100, &fd), -ENAMETOOLONG);
        char why[128] = "";
        CU_ASSERT_EQUAL(glean_client_connect(path, "glean", 100, &fd, why, sizeof(why)), -ENAMETOOLONG);
        CU_ASSERT_EQUAL(glean_sock_listen_unix("", 0666, &fd), -EINVAL);
        CU_ASSERT_EQUAL(fd, -1);

        /* the longest that fits works */
        char ok[sizeof(sa.sun_path)];
        int n = snprintf(ok, sizeof(ok), "%s/", tmpdir);
        memset(ok + n, 's', sizeof(ok) - 1 - (size_t) n);
        ok[sizeof(ok) - 1] = '\0';
        CU_ASSERT_EQUAL_FATAL(glean_sock_listen_unix(ok, 0666, &fd), 0);
        int cfd = -1;
        CU_ASSERT_EQUAL(glean_sock_connect_unix(ok, 1000, &cfd), 0);
        close(cfd);
        close(fd);
        CU_ASSERT_EQUAL(unlink(ok), 0);

        path_in_tmp(ok, sizeof(ok), "nobody-home.sock");
        CU_ASSERT_EQUAL(glean_sock_connect_unix(ok, 100, &cfd), -ENOENT);
}

/* A user with a supplementary group other than its primary one, from the
 * group database: 1 found, 0 none on this system. */
static int find_supplementary(char *user, size_t ulen, char *group, size_t glen, uid_t *uid, gid_t *gid) {
        struct group *gr;
        int found = 0;

        setgrent();
        while (!found && (gr = getgrent())) {
                for (char **m = gr->gr_mem; m && *m; m++) {
                        struct passwd *pw = getpwnam(*m);
                        if (pw && pw->pw_uid != 0 && pw->pw_gid != gr->gr_gid) {
                                snprintf(user, ulen, "%s", pw->pw_name);
                                snprintf(group, glen, "%s", gr->gr_name);
                                *uid = pw->pw_uid;
                                *gid = pw->pw_gid;
                                found = 1;
                                break;
                        }
                }
        }
        endgrent();
        return found;
}

static void test_admin(void) {
        GleanPeer root = { .pid = 1, .uid = 0, .gid = 0, .user = "root" };
        GleanPeer nobody = { .pid = 2, .uid = 65534, .gid = 65534, .user = "nobody" };
        struct passwd *pw = getpwuid(65534);
        struct group *gr = getgrgid(65534);

        /* root always */
        CU_ASSERT_TRUE(glean_peer_is_admin(&root, NULL));
        CU_ASSERT_TRUE(glean_peer_is_admin(&root, (char *[]){ NULL }));
        CU_ASSERT_FALSE(glean_peer_is_admin(NULL, (char *[]){ "root", NULL }));

        /* by user name */
        CU_ASSERT_FALSE(glean_peer_is_admin(&nobody, NULL));
        CU_ASSERT_FALSE(glean_peer_is_admin(&nobody, (char *[]){ NULL }));
        CU_ASSERT_FALSE(glean_peer_is_admin(&nobody, (char *[]){ "alice", "", "%", NULL }));
        CU_ASSERT_TRUE(glean_peer_is_admin(&nobody, (char *[]){ "alice", "nobody", NULL }));
        CU_ASSERT_FALSE(glean_peer_is_admin(&nobody, (char *[]){ "Nobody", "nobod", NULL }));
        /* by uid */
        CU_ASSERT_TRUE(glean_peer_is_admin(&nobody, (char *[]){ "65534", NULL }));

        /* by primary group */
        if (gr) {
                char entry[80];
                snprintf(entry, sizeof(entry), "%%%s", gr->gr_name);
                CU_ASSERT_TRUE(glean_peer_is_admin(&nobody, (char *[]){ "alice", entry, NULL }));
        }
        CU_ASSERT_TRUE(glean_peer_is_admin(&nobody, (char *[]){ "%65534", NULL }));
        CU_ASSERT_FALSE(glean_peer_is_admin(&nobody, (char *[]){ "%root", "%no-such-group-here", NULL }));
        /* the user name comes from the peer, not from the uid */
        GleanPeer renamed = nobody;
        snprintf(renamed.user, sizeof(renamed.user), "%s", "someone");
        CU_ASSERT_EQUAL(glean_peer_is_admin(&renamed, (char *[]){ "nobody", NULL }), pw != NULL);

        /* by supplementary group */
        char user[64], group[64], entry[80];
        uid_t uid;
        gid_t gid;
        if (find_supplementary(user, sizeof(user), group, sizeof(group), &uid, &gid)) {
                GleanPeer member = { .pid = 3, .uid = uid, .gid = gid };
                snprintf(member.user, sizeof(member.user), "%s", user);
                snprintf(entry, sizeof(entry), "%%%s", group);
                GLEAN_TEST_CHECK(glean_peer_is_admin(&member, (char *[]){ entry, NULL }),
                                 "%s (gid %u) as a supplementary member of %s", user, (unsigned) gid, group);
                CU_ASSERT_FALSE(glean_peer_is_admin(&nobody, (char *[]){ entry, NULL }));
        } else
                printf("(no user with a supplementary group here: that case not checked) ");
}

static int suite_init(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-test-sock-XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void) {
        return rmdir(tmpdir) == 0 ? 0 : -1;
}

static CU_TestInfo tests[] = {
        { "listen, connect, peer", test_listen_connect_peer },
        { "peer with no user name", test_peer_unknown_user },
        { "stale socket replaced, live one kept", test_stale_socket },
        { "other files kept", test_other_files_kept },
        { "path length", test_path_length },
        { "administrators", test_admin },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "sock", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

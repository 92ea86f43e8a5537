/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-xfer-session.c — the full sessions of xfer/xfer.h over TCP on
 * 127.0.0.1 with real keys, the workers as user nobody: the execute side
 * dials, its preamble names the grant, the input is fetched into a
 * sandbox owned by nobody (files owned by nobody, the manifest written by
 * root), the job's output served back into Iwd (owned by nobody); a
 * missing input holds (13) at both ends; a wrong key is refused by both
 * ends and moves nothing; a peer with the key that then sends nonsense is
 * refused; the submit side killed -9 in the middle of a file leaves the
 * execute side with a lost connection (no hold) and nothing under the
 * file's name. Needs root: skipped otherwise.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include <CUnit/CUnit.h>

#include "common/proto.h"
#include "test-util.h"
#include "xfer/xfer.h"

#define TIMEOUT_MS 10000
#define ID "00112233445566778899aabbccddeeff"

static GleanUserCred nobody;
static GleanPoolKey key, other_key;
static char top[64], iwd[128], box[128], state[128], manifest[160];

static void put(const char *dir, const char *name, const char *content, mode_t mode) {
        char p[512];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_FATAL(write(fd, content, strlen(content)) == (ssize_t) strlen(content));
        CU_ASSERT_FATAL(fchown(fd, nobody.uid, nobody.gid) == 0);
        close(fd);
}

static bool owned_file(const char *dir, const char *name, const char *content, uid_t uid) {
        char p[512], buf[256] = "";
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", dir, name);
        int fd = open(p, O_RDONLY | O_NOFOLLOW);
        if (fd < 0)
                return false;
        ssize_t n = read(fd, buf, sizeof buf - 1);
        bool ok = n >= 0 && fstat(fd, &st) == 0 && st.st_uid == uid && strcmp(buf, content) == 0;
        close(fd);
        return ok;
}

static void fresh(void) {
        snprintf(top, sizeof top, "/tmp/glean-xfer-session-XXXXXX");
        CU_ASSERT_FATAL(mkdtemp(top) != NULL && chmod(top, 0755) == 0);
        snprintf(iwd, sizeof iwd, "%s/iwd", top);
        snprintf(box, sizeof box, "%s/box", top);
        snprintf(state, sizeof state, "%s/state", top);
        snprintf(manifest, sizeof manifest, "%s/manifest", state);
        CU_ASSERT_FATAL(mkdir(iwd, 0755) == 0 && chown(iwd, nobody.uid, nobody.gid) == 0);
        CU_ASSERT_FATAL(mkdir(box, 0700) == 0 && chown(box, nobody.uid, nobody.gid) == 0);
        CU_ASSERT_FATAL(mkdir(state, 0700) == 0);
}

static void cleanup(void) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
        CU_ASSERT(system(cmd) == 0);
}

static XferJob *job_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static XferJob *job_of(const char *fmt, ...) {
        char text[2048], why[256] = "";
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        ClassAd *ad = NULL;
        CaError err;
        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) == 0);
        XferJob *j = NULL;
        GLEAN_TEST_CHECK_FATAL(xfer_job_from_ad(ad, 0, 0, &j, why, sizeof why) == 0, "%s", why);
        classad_free(ad);
        return j;
}

/* The submit agent's side, in a child: accept one connection, check its
 * preamble, serve it; its result comes back over a pipe. */
typedef struct Server {
        pid_t pid;
        int result_fd;
        char address[64];
} Server;

static void serve_child(int l, int out, const GleanPoolKey *k, const XferJob *job) {
        XferResult res = { 0 };
        int fd = accept(l, NULL, NULL);
        char *p = NULL, id[XFER_ID_LEN + 1];
        size_t len = 0;
        if (fd < 0 || glean_frame_recv(fd, 128, XFER_PREAMBLE_TIMEOUT_MS, &p, &len) < 0 ||
            xfer_preamble_parse(p, len, id) < 0 || strcmp(id, ID) != 0)
                snprintf(res.reason, sizeof res.reason, "bad preamble"), res.error = -EBADMSG;
        else
                (void) xfer_serve(fd, k, job, &nobody, TIMEOUT_MS, &res);
        char *text = xfer_result_to_text(&res);
        if (text)
                (void) !write(out, text, strlen(text));
        _exit(0);
}

static void server_start(Server *sv, const GleanPoolKey *k, const XferJob *job) {
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), pfd[2];
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t al = sizeof a;
        CU_ASSERT_FATAL(l >= 0 && bind(l, (struct sockaddr *) &a, sizeof a) == 0 && listen(l, 4) == 0 &&
                        getsockname(l, (struct sockaddr *) &a, &al) == 0 && pipe(pfd) == 0);
        snprintf(sv->address, sizeof sv->address, "127.0.0.1:%u", ntohs(a.sin_port));
        sv->pid = fork();
        CU_ASSERT_FATAL(sv->pid >= 0);
        if (sv->pid == 0) {
                close(pfd[0]);
                serve_child(l, pfd[1], k, job);
        }
        close(l);
        close(pfd[1]);
        sv->result_fd = pfd[0];
}

static void server_wait(Server *sv, XferResult *ret) {
        char buf[2048];
        ssize_t n = read(sv->result_fd, buf, sizeof buf - 1);
        close(sv->result_fd);
        waitpid(sv->pid, NULL, 0);
        *ret = (XferResult){ .error = -EIO };
        CU_ASSERT_FATAL(n > 0);
        buf[n] = '\0';
        CU_ASSERT_FATAL(xfer_result_from_text(buf, (size_t) n, ret) == 0);
}

static int dial_and(bool output, const Server *sv, const GleanPoolKey *k, const XferJob *job, XferResult *res) {
        int fd = -1;
        char why[256];
        int r = xfer_dial(sv->address, ID, TIMEOUT_MS, &fd, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "dial: %s", why);
        r = output ? xfer_send_output(fd, k, job, &nobody, box, manifest, TIMEOUT_MS, res)
                   : xfer_fetch_input(fd, k, job, &nobody, box, manifest, TIMEOUT_MS, res);
        close(fd);
        return r;
}

static void test_input_and_output(void) {
        fresh();
        put(iwd, "prog", "#!/bin/sh\n", 0755);
        put(iwd, "a.txt", "alpha\n", 0644);
        XferJob *j = job_of("[ Iwd = \"%s\"; Cmd = \"prog\"; TransferInput = \"a.txt\"; Out = \"out.txt\" ]", iwd);
        Server sv;
        XferResult re, rs;
        server_start(&sv, &key, j);
        int r = dial_and(false, &sv, &key, j, &re);
        server_wait(&sv, &rs);
        GLEAN_TEST_CHECK_FATAL(r == 0 && rs.error == 0, "fetch: %d '%s', serve: %d '%s'", r, re.reason, rs.error,
                               rs.reason);
        CU_ASSERT(re.files == 2 && rs.files == 2 && re.bytes_received == 16 && rs.bytes_sent == 16);
        CU_ASSERT(owned_file(box, "prog", "#!/bin/sh\n", nobody.uid) && owned_file(box, "a.txt", "alpha\n", nobody.uid));
        /* the manifest: root's, what arrived */
        struct stat st;
        CU_ASSERT(stat(manifest, &st) == 0 && st.st_uid == 0 && (st.st_mode & 0777) == 0600);
        char buf[512] = "";
        int fd = open(manifest, O_RDONLY);
        CU_ASSERT(fd >= 0 && read(fd, buf, sizeof buf - 1) > 0 && strstr(buf, " a.txt\n") && strstr(buf, " prog\n"));
        close(fd);

        /* the job ran: a new file and its stdout; both come back, owned by nobody */
        put(box, "result.dat", "42\n", 0644);
        put(box, XFER_STDOUT_NAME, "hello\n", 0644);
        server_start(&sv, &key, j);
        r = dial_and(true, &sv, &key, j, &re);
        server_wait(&sv, &rs);
        GLEAN_TEST_CHECK_FATAL(r == 0 && rs.error == 0, "output: %d '%s', serve: %d '%s'", r, re.reason, rs.error,
                               rs.reason);
        CU_ASSERT(re.files == 2 && rs.files == 2);
        CU_ASSERT(owned_file(iwd, "result.dat", "42\n", nobody.uid) && owned_file(iwd, "out.txt", "hello\n", nobody.uid));
        xfer_job_free(j);
        cleanup();
}

static void test_missing_input(void) {
        fresh();
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"gone.txt\" ]", iwd);
        Server sv;
        XferResult re, rs;
        server_start(&sv, &key, j);
        int r = dial_and(false, &sv, &key, j, &re);
        server_wait(&sv, &rs);
        GLEAN_TEST_CHECK(r < 0 && re.hold_code == XFER_HOLD_INPUT && strstr(re.reason, "gone.txt") &&
                                 rs.hold_code == XFER_HOLD_INPUT && strstr(rs.reason, "gone.txt"),
                         "gave %d hold %d '%s' / hold %d '%s'", r, re.hold_code, re.reason, rs.hold_code, rs.reason);
        CU_ASSERT(access(manifest, F_OK) < 0);
        xfer_job_free(j);
        cleanup();
}

static void test_wrong_key(void) {
        fresh();
        put(iwd, "a.txt", "alpha\n", 0644);
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a.txt\" ]", iwd);
        Server sv;
        XferResult re, rs;
        server_start(&sv, &other_key, j);
        int r = dial_and(false, &sv, &key, j, &re);
        server_wait(&sv, &rs);
        GLEAN_TEST_CHECK(r == -EPERM && re.hold_code == 0 && strstr(re.reason, "handshake"), "fetch gave %d '%s'", r,
                         re.reason);
        GLEAN_TEST_CHECK(rs.error == -EPERM, "serve gave %d '%s'", rs.error, rs.reason);
        char p[256];
        snprintf(p, sizeof p, "%s/a.txt", box);
        CU_ASSERT(access(p, F_OK) < 0 && access(manifest, F_OK) < 0);
        xfer_job_free(j);
        cleanup();
}

static bool aside_file_growing(const char *d) {
        DIR *dd = opendir(d);
        struct dirent *de;
        bool found = false;
        if (!dd)
                return false;
        while (!found && (de = readdir(dd))) {
                char p[512];
                struct stat st;
                snprintf(p, sizeof p, "%s/%s", d, de->d_name);
                found = strncmp(de->d_name, ".glean-xfer.", 12) == 0 && stat(p, &st) == 0 && st.st_size > 0;
        }
        closedir(dd);
        return found;
}

/* The submit side killed (-9) in the middle of a file: the execute side
 * fails as a lost connection (retried, no hold) and nothing is left under
 * the file's name. */
static void test_peer_killed(void) {
        fresh();
        char p[256];
        snprintf(p, sizeof p, "%s/big.dat", iwd);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CU_ASSERT_FATAL(fd >= 0 && ftruncate(fd, 256 << 20) == 0 && fchown(fd, nobody.uid, nobody.gid) == 0);
        close(fd);
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"big.dat\" ]", iwd);
        Server sv;
        XferResult re;
        server_start(&sv, &key, j);
        pid_t killer = fork();
        CU_ASSERT_FATAL(killer >= 0);
        if (killer == 0) {
                for (int i = 0; i < 10000 && !aside_file_growing(box); i++)
                        usleep(500);
                kill(sv.pid, SIGKILL);
                _exit(0);
        }
        int r = dial_and(false, &sv, &key, j, &re);
        waitpid(killer, NULL, 0);
        close(sv.result_fd);
        waitpid(sv.pid, NULL, 0);
        GLEAN_TEST_CHECK(r < 0 && re.hold_code == 0 && strstr(re.reason, "connection lost"), "gave %d hold %d '%s'", r,
                         re.hold_code, re.reason);
        snprintf(p, sizeof p, "%s/big.dat", box);
        CU_ASSERT(access(p, F_OK) < 0);
        CU_ASSERT(!aside_file_growing(box));
        xfer_job_free(j);
        cleanup();
}

/* A peer with the key that then speaks nonsense: refused, nothing written. */
static void test_nonsense_after_handshake(void) {
        fresh();
        put(iwd, "a.txt", "alpha\n", 0644);
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a.txt\" ]", iwd);
        Server sv;
        XferResult rs;
        server_start(&sv, &key, j);
        int fd = -1;
        char why[256];
        GleanSecure *s = NULL;
        CU_ASSERT_FATAL(xfer_dial(sv.address, ID, TIMEOUT_MS, &fd, why, sizeof why) == 0);
        CU_ASSERT_FATAL(glean_secure_handshake(fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(&key), TIMEOUT_MS, &s, why,
                                               sizeof why) == 0);
        /* a frame of a frame: length 3, "Hxx" (a header too short) */
        CU_ASSERT(glean_secure_send(s, fd, "\0\0\0\3Hxx", 7, TIMEOUT_MS) == 0);
        server_wait(&sv, &rs);
        GLEAN_TEST_CHECK(rs.error == -EBADMSG && strstr(rs.reason, "request"), "serve gave %d '%s'", rs.error, rs.reason);
        glean_secure_free(s);
        close(fd);
        xfer_job_free(j);
        cleanup();
}

static CU_TestInfo tests[] = {
        { "nonsense after the handshake", test_nonsense_after_handshake },
        { "submit side killed mid-file", test_peer_killed },
        { "input fetched, output served", test_input_and_output },
        { "missing input", test_missing_input },
        { "wrong key", test_wrong_key },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "xfer-session", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (geteuid() != 0)
                return glean_test_skip("needs root (the workers become nobody)");
        if (glean_user_cred("nobody", &nobody) < 0)
                return glean_test_skip("no user nobody");
        if (glean_pool_key_generate(&key) < 0 || glean_pool_key_generate(&other_key) < 0)
                return 1;
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

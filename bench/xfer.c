/* SPDX-License-Identifier: Apache-2.0 */
/*
 * xfer.c — the transfer engine's throughput (xfer/xfer.h): one big file
 * (1 GiB) and many small ones (10,000 of 1 KiB, in one directory) fetched
 * through full sessions over TCP on 127.0.0.1 (handshake with a pool key,
 * a worker per side that becomes nobody when run as root, root relaying
 * sealed frames), beside `cp -r` of the same data on the same disk and
 * the sealed transport's own throughput over TCP loopback (1 MiB frames,
 * as bench/secure measures it over a socketpair).
 *
 *   build/bench/xfer [DIR [BIG_MB [SMALL_FILES]]]
 *
 * DIR (default /work/bench-data/xfer) holds the data while it runs and is
 * emptied at the end. Prints "name = value" lines; MB are 10^6 bytes.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "common/secure.h"
#include "xfer/xfer.h"

#define ID "0123456789abcdef0123456789abcdef"
#define TIMEOUT_MS 120000

static GleanPoolKey key;
static GleanUserCred user, *userp;
static char dir[256], src[300], dst[300], state[300], cpdir[300];

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static _Noreturn void die(const char *what, int r) {
        fprintf(stderr, "bench/xfer: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...) {
        char cmd[1024];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(cmd, sizeof cmd, fmt, ap);
        va_end(ap);
        if (system(cmd) != 0)
                die(cmd, EIO);
}

static void own(const char *path) {
        if (userp && chown(path, user.uid, user.gid) < 0)
                die("chown", errno);
}

/* ---- the data ---- */

static void write_file(const char *path, size_t size, uint64_t seed) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        size_t chunk = 1u << 20;
        uint64_t *buf = malloc(chunk);
        if (fd < 0 || !buf)
                die(path, errno);
        uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
        for (size_t left = size; left > 0;) {
                size_t n = left < chunk ? left : chunk;
                for (size_t i = 0; i < (n + 7) / 8; i++) {
                        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                        buf[i] = x;
                }
                if (write(fd, buf, n) != (ssize_t) n)
                        die(path, errno);
                left -= n;
        }
        free(buf);
        own(path);
        close(fd);
}

/* ---- a session ---- */

static void serve_child(int l, const XferJob *job) {
        XferResult res;
        int fd = accept(l, NULL, NULL);
        char *p = NULL, id[XFER_ID_LEN + 1];
        size_t len;
        if (fd < 0 || glean_frame_recv(fd, 128, XFER_PREAMBLE_TIMEOUT_MS, &p, &len) < 0 ||
            xfer_preamble_parse(p, len, id) < 0)
                _exit(2);
        int r = xfer_serve(fd, &key, job, userp, TIMEOUT_MS, &res);
        if (r < 0)
                fprintf(stderr, "bench/xfer: serve: %s\n", res.reason);
        _exit(r < 0);
}

/* Fetches job's input into dst through a session: seconds, and res. */
static double fetch(const XferJob *job, XferResult *res) {
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), fd = -1, status;
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t al = sizeof a;
        char addr[64], why[256], manifest[400];
        if (l < 0 || bind(l, (struct sockaddr *) &a, sizeof a) < 0 || listen(l, 4) < 0 ||
            getsockname(l, (struct sockaddr *) &a, &al) < 0)
                die("listen", errno);
        snprintf(addr, sizeof addr, "127.0.0.1:%u", ntohs(a.sin_port));
        snprintf(manifest, sizeof manifest, "%s/manifest", state);
        pid_t pid = fork();
        if (pid < 0)
                die("fork", errno);
        if (pid == 0)
                serve_child(l, job);
        close(l);
        double t0 = now_s();
        int r = xfer_dial(addr, ID, TIMEOUT_MS, &fd, why, sizeof why);
        if (r < 0) {
                fprintf(stderr, "bench/xfer: %s\n", why);
                die("dial", r);
        }
        r = xfer_fetch_input(fd, &key, job, userp, dst, manifest, TIMEOUT_MS, res);
        double t = now_s() - t0;
        close(fd);
        waitpid(pid, &status, 0);
        if (r < 0) {
                fprintf(stderr, "bench/xfer: fetch: %s\n", res->reason);
                die("fetch", r);
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
                die("serve", EIO);
        return t;
}

/* CPU seconds of this process and its reaped descendants (both sessions and their workers) */
static double cpu_s(void) {
        struct rusage a, b;
        getrusage(RUSAGE_SELF, &a);
        getrusage(RUSAGE_CHILDREN, &b);
        return (double) (a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec) +
               (double) (a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec) / 1e6;
}

static XferJob *job_for(const char *input) {
        char text[1024], why[256];
        ClassAd *ad = NULL;
        CaError err;
        XferJob *j = NULL;
        snprintf(text, sizeof text, "[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"%s\" ]", src, input);
        if (classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) < 0 || xfer_job_from_ad(ad, 0, 0, &j, why, sizeof why) < 0)
                die("job", EINVAL);
        classad_free(ad);
        return j;
}

static double cp_time(const char *what) {
        sh("rm -rf '%s' && mkdir -p '%s'", cpdir, cpdir);
        sync();
        double t0 = now_s();
        sh("cp -r '%s/%s' '%s/'", src, what, cpdir);
        return now_s() - t0;
}

/* ---- the sealed transport alone, TCP loopback ---- */

typedef struct Sender {
        int fd;
        GleanSecure *s;
        size_t frames;
} Sender;

static void *sender(void *arg) {
        Sender *x = arg;
        char why[256];
        unsigned char *p = calloc(1, GLEAN_FRAME_MAX);
        GleanSecure *s = NULL;
        if (!p || glean_secure_handshake(x->fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(&key), 10000, &s, why,
                                         sizeof why) < 0)
                die("sender handshake", EPERM);
        for (size_t i = 0; i < x->frames; i++)
                if (glean_secure_send(s, x->fd, p, GLEAN_FRAME_MAX, -1) < 0)
                        die("seal send", EIO);
        glean_secure_free(s);
        free(p);
        return NULL;
}

static double sealed_mb_s(size_t frames) {
        int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t al = sizeof a;
        char why[256];
        if (l < 0 || bind(l, (struct sockaddr *) &a, sizeof a) < 0 || listen(l, 1) < 0 ||
            getsockname(l, (struct sockaddr *) &a, &al) < 0)
                die("listen", errno);
        Sender x = { .fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), .frames = frames };
        if (connect(x.fd, (struct sockaddr *) &a, sizeof a) < 0)
                die("connect", errno);
        int fd = accept(l, NULL, NULL);
        GleanSecure *s = NULL;
        pthread_t t;
        pthread_create(&t, NULL, sender, &x);
        if (glean_secure_handshake(fd, GLEAN_SECURE_NEGOTIATOR, GLEAN_SECURE_POOL_AUTH(&key), 10000, &s, why,
                                   sizeof why) < 0)
                die("receiver handshake", EPERM);
        double t0 = now_s();
        for (size_t i = 0; i < frames; i++) {
                char *m = NULL;
                size_t len;
                if (glean_secure_recv(s, fd, -1, &m, &len) < 0 || len != GLEAN_FRAME_MAX)
                        die("seal recv", EIO);
                free(m);
        }
        double dt = now_s() - t0;
        pthread_join(t, NULL);
        glean_secure_free(s);
        close(fd);
        close(x.fd);
        close(l);
        return (double) frames * GLEAN_FRAME_MAX / dt / 1e6;
}

int main(int argc, char **argv) {
        snprintf(dir, sizeof dir, "%s", argc > 1 ? argv[1] : "/work/bench-data/xfer");
        size_t big_mb = argc > 2 ? strtoul(argv[2], NULL, 10) : 1024;
        size_t small = argc > 3 ? strtoul(argv[3], NULL, 10) : 10000;
        const size_t small_size = 1024;

        signal(SIGPIPE, SIG_IGN);
        if (glean_pool_key_generate(&key) < 0)
                die("key", EIO);
        if (geteuid() == 0) {
                if (glean_user_cred("nobody", &user) < 0)
                        die("user nobody", ENOENT);
                userp = &user;
        }
        snprintf(src, sizeof src, "%s/src", dir);
        snprintf(dst, sizeof dst, "%s/dst", dir);
        snprintf(state, sizeof state, "%s/state", dir);
        snprintf(cpdir, sizeof cpdir, "%s/cp", dir);
        sh("mkdir -p '%s' && chmod 755 '%s' && rm -rf '%s' '%s' '%s' '%s'", dir, dir, src, dst, state, cpdir);
        sh("mkdir -p '%s/small' '%s' && chmod 700 '%s'", src, state, state);
        own(src);
        char p[400];
        snprintf(p, sizeof p, "%s/small", src);
        own(p);
        printf("user = %s\n", userp ? user.name : "(the caller, no switch)");

        /* the big file */
        snprintf(p, sizeof p, "%s/big.dat", src);
        write_file(p, big_mb << 20, 1);
        for (size_t i = 0; i < small; i++) {
                snprintf(p, sizeof p, "%s/small/f%05zu", src, i);
                write_file(p, small_size, i + 2);
        }
        double big_bytes = (double) (big_mb << 20), small_bytes = (double) (small * small_size);

        XferResult res;
        XferJob *jb = job_for("big.dat"), *js = job_for("small");
        double best_big = 1e9, best_small = 1e9, cpu_big = 0;
        for (int rep = 0; rep < 2; rep++) {
                sh("rm -rf '%s' && mkdir -p '%s' && chmod 700 '%s'", dst, dst, dst);
                own(dst);
                sync(); /* each phase starts without the last one's dirty pages */
                double c0 = cpu_s();
                double t = fetch(jb, &res);
                cpu_big = cpu_s() - c0;
                if (res.bytes_received != (uint64_t) big_bytes)
                        die("big: bytes", EIO);
                best_big = t < best_big ? t : best_big;
                sh("rm -rf '%s' && mkdir -p '%s' && chmod 700 '%s'", dst, dst, dst);
                own(dst);
                sync();
                t = fetch(js, &res);
                if (res.files != small)
                        die("small: files", EIO);
                best_small = t < best_small ? t : best_small;
        }
        double cp_big = 1e9, cp_small = 1e9;
        for (int rep = 0; rep < 2; rep++) {
                double t = cp_time("big.dat");
                cp_big = t < cp_big ? t : cp_big;
                t = cp_time("small");
                cp_small = t < cp_small ? t : cp_small;
        }
        double sealed = sealed_mb_s(1024);

        printf("big_file_mb = %.0f\n", big_bytes / 1e6);
        printf("xfer_big_mb_s = %.1f\n", big_bytes / best_big / 1e6);
        printf("cp_big_mb_s = %.1f\n", big_bytes / cp_big / 1e6);
        printf("sealed_tcp_mb_s = %.1f\n", sealed);
        double lower = cp_big < 1e8 ? (big_bytes / cp_big / 1e6 < sealed ? big_bytes / cp_big / 1e6 : sealed) : sealed;
        printf("xfer_big_vs_lower_pct = %.0f\n", 100.0 * (big_bytes / best_big / 1e6) / lower);
        printf("xfer_big_cpu_s_per_gb = %.2f\n", cpu_big / (big_bytes / 1e9));
        printf("small_files = %zu\n", small);
        printf("xfer_small_files_s = %.0f\n", (double) small / best_small);
        printf("xfer_small_mb_s = %.2f\n", small_bytes / best_small / 1e6);
        printf("cp_small_files_s = %.0f\n", (double) small / cp_small);
        printf("xfer_small_vs_cp_pct = %.0f\n", 100.0 * cp_small / best_small);

        xfer_job_free(jb);
        xfer_job_free(js);
        sh("rm -rf '%s' '%s' '%s' '%s'", src, dst, state, cpdir);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * secure.c — the pool's sealed transport (common/secure.h) over a unix
 * socketpair: handshakes per second (with the pool key, and with tokens),
 * and the throughput of sealed frames
 * of 200 bytes (a keep-alive or a small update) and 64 KiB (a big slot
 * update), against the same frames unsealed (common/proto.h's
 * glean_frame_write/glean_frame_read) for comparison.
 *
 *   build/bench/secure [SECONDS]   (per figure, default 2)
 *
 * Handshakes: one thread, both ends as an event loop would run them
 * (non-blocking socketpair, glean_secure_flush and glean_secure_read), a
 * new socketpair and two new ends each time; and two ends passing bytes
 * in memory (the CPU cost alone). Throughput: a sender thread
 * sealing and sending one frame per send() (glean_secure_send), the main
 * thread receiving (glean_secure_recv); MB/s counts plaintext bytes
 * (10^6 bytes per MB).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/proto.h"
#include "common/secure.h"
#include "common/token.h"

static GleanPoolKey key;
/* What the two ends prove: the pool key, or tokens (main). */
static const GleanSecureAuth *auth_a, *auth_n;

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static _Noreturn void die(const char *what, int r) {
        fprintf(stderr, "bench/secure: %s: %s\n", what, strerror(r < 0 ? -r : r));
        exit(1);
}

/* ---- handshakes ---- */

static void move_bytes(GleanSecure *from, GleanSecure *to) {
        const void *p;
        size_t n = glean_secure_output(from, &p);
        int r = glean_secure_feed(to, p, n);

        if (r < 0)
                die(glean_secure_reason(to), r);
        glean_secure_output_consume(from, n);
}

static void handshake_memory(void) {
        GleanSecure *a, *n;

        if (glean_secure_new(GLEAN_SECURE_AGENT, auth_a, &a) < 0 ||
            glean_secure_new(GLEAN_SECURE_NEGOTIATOR, auth_n, &n) < 0)
                die("glean_secure_new", ENOMEM);
        move_bytes(a, n); /* HELLO */
        move_bytes(n, a); /* HELLO, and with the pool key AUTH */
        move_bytes(a, n); /* AUTH */
        move_bytes(n, a); /* with a token, the negotiator's AUTH */
        if (!glean_secure_established(a) || !glean_secure_established(n))
                die("handshake", EPROTO);
        glean_secure_free(a);
        glean_secure_free(n);
}

/* A handshake between two new ends over the non-blocking pair fds, both
 * run from this thread as an event loop would: s[0] the agent's end on
 * fds[0], s[1] the negotiator's on fds[1]. */
static void handshake_over(int fds[2], GleanSecure *s[2]) {
        int r;

        if (glean_secure_new(GLEAN_SECURE_AGENT, auth_a, &s[0]) < 0 ||
            glean_secure_new(GLEAN_SECURE_NEGOTIATOR, auth_n, &s[1]) < 0)
                die("glean_secure_new", ENOMEM);
        while (!glean_secure_established(s[0]) || !glean_secure_established(s[1]))
                for (int i = 0; i < 2; i++) {
                        char *m;
                        if ((r = glean_secure_flush(s[i], fds[i])) < 0 ||
                            (r = glean_secure_read(s[i], fds[i], &m, NULL)) < 0)
                                die(glean_secure_reason(s[i]), r);
                }
        for (int i = 0; i < 2; i++)
                if ((r = glean_secure_flush(s[i], fds[i])) != 1)
                        die("flush after the handshake", r < 0 ? r : EAGAIN);
}

static void nonblocking_pair(int fds[2]) {
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, fds) < 0)
                die("socketpair", errno);
}

static void handshake_socketpair(void) {
        GleanSecure *s[2];
        int fds[2];

        nonblocking_pair(fds);
        handshake_over(fds, s);
        for (int i = 0; i < 2; i++) {
                glean_secure_free(s[i]);
                close(fds[i]);
        }
}

static void bench_handshakes(const char *name, void (*one)(void), double seconds) {
        double t0 = now_s(), t;
        unsigned long n = 0;

        do {
                for (int i = 0; i < 64; i++)
                        one();
                n += 64;
        } while ((t = now_s() - t0) < seconds);
        printf("%-26s %10.0f handshakes/s  (%.1f us each)\n", name, (double) n / t, t * 1e6 / (double) n);
}

/* ---- throughput ---- */

typedef struct Sender {
        int fd;
        GleanSecure *s; /* NULL: unsealed frames */
        size_t size;
        double seconds;
        unsigned long frames;
} Sender;

static int send_one(Sender *x, const void *p, size_t n) {
        return x->s ? glean_secure_send(x->s, x->fd, p, n, -1) : glean_frame_write(x->fd, p, n, -1);
}

/* Sends frames of x->size for x->seconds, then a 1-byte frame: the end. */
static void *sender_thread(void *arg) {
        Sender *x = arg;
        unsigned char *p = malloc(x->size);
        double t0 = now_s();
        int r;

        if (!p)
                die("malloc", ENOMEM);
        for (size_t i = 0; i < x->size; i++)
                p[i] = (unsigned char) (i * 31u);
        do {
                for (int i = 0; i < 32; i++) {
                        r = send_one(x, p, x->size);
                        if (r < 0)
                                die("send", r);
                }
                x->frames += 32;
        } while (now_s() - t0 < x->seconds);
        r = send_one(x, "", 1);
        if (r < 0)
                die("send", r);
        free(p);
        return NULL;
}

static void bench_throughput(size_t size, bool sealed, double seconds) {
        GleanSecure *s[2] = { NULL, NULL };
        GleanFrameReader *reader = NULL;
        unsigned long got = 0;
        pthread_t t;
        int fds[2], r;

        nonblocking_pair(fds);
        if (sealed)
                handshake_over(fds, s);
        else if ((r = glean_frame_reader_new(GLEAN_FRAME_MAX, &reader)) < 0)
                die("glean_frame_reader_new", r);

        Sender x = { .fd = fds[1], .s = s[1], .size = size, .seconds = seconds };
        double t0 = now_s();
        if ((r = pthread_create(&t, NULL, sender_thread, &x)) != 0)
                die("pthread_create", r);
        for (;;) {
                char *m = NULL;
                size_t len = 0;
                if (sealed)
                        r = glean_secure_recv(s[0], fds[0], -1, &m, &len);
                else {
                        r = glean_frame_read(reader, fds[0], &m, &len);
                        if (r == 0) {
                                struct pollfd p = { .fd = fds[0], .events = POLLIN };
                                (void) poll(&p, 1, -1);
                                continue;
                        }
                        r = r > 0 ? 0 : r;
                }
                if (r < 0)
                        die("receive", r);
                free(m);
                if (len == 1)
                        break;
                if (len != size)
                        die("a frame of the wrong size", EPROTO);
                got++;
        }
        double t1 = now_s() - t0;
        pthread_join(t, NULL);
        if (got != x.frames)
                die("frames lost", EPROTO);
        printf("%-9s %6zu B frames   %10.0f frames/s  %8.1f MB/s\n", sealed ? "sealed" : "unsealed", size,
               (double) got / t1, (double) got * (double) size / t1 / 1e6);
        glean_secure_free(s[0]);
        glean_secure_free(s[1]);
        glean_frame_reader_free(reader);
        close(fds[0]);
        close(fds[1]);
}

int main(int argc, char **argv) {
        double seconds = argc > 1 ? atof(argv[1]) : 2.0;

        if (seconds <= 0) {
                fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
                return 2;
        }
        if (glean_pool_key_generate(&key) < 0)
                die("libsodium", EIO);
        auth_a = auth_n = GLEAN_SECURE_POOL_AUTH(&key);
        bench_handshakes("handshake, in memory", handshake_memory, seconds);
        bench_handshakes("handshake, socketpair", handshake_socketpair, seconds);

        /* The same with tokens: the manager's signing key, an agent's token. */
        static GleanSigningKey manager;
        static GleanCredential cred;
        char *text = NULL, why[256];
        int64_t t = (int64_t) time(NULL);
        if (glean_signing_key_generate(&manager) < 0 || glean_signing_key_generate(&cred.key) < 0 ||
            glean_token_issue(&manager, "agent@node1.example.org", GLEAN_RIGHTS_AGENT, t, t + 86400, cred.key.pk,
                              &text, &cred.token, why, sizeof why) < 0)
                die("a token", EIO);
        cred.text_len = strlen(text);
        memcpy(cred.text, text, cred.text_len + 1);
        free(text);
        GleanSecureAuth ta = { .methods = GLEAN_SECURE_TOKEN, .manager_pk = manager.pk, .credential = &cred };
        GleanSecureAuth tn = { .methods = GLEAN_SECURE_TOKEN, .signing = &manager };
        auth_a = &ta;
        auth_n = &tn;
        bench_handshakes("token handshake, in memory", handshake_memory, seconds);
        bench_handshakes("token handshake, socketpair", handshake_socketpair, seconds);
        auth_a = auth_n = GLEAN_SECURE_POOL_AUTH(&key);
        const size_t sizes[] = { 200, 64 * 1024 };
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
                bench_throughput(sizes[i], true, seconds);
                bench_throughput(sizes[i], false, seconds);
        }
        glean_pool_key_clear(&key);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-usock.c — the daemons' unix-socket server (common/usock.h) on a
 * real sd-event loop and a socket in a temporary directory, its clients
 * in the same thread: a frame's round trip, the per-user cap told in a
 * Reply, an oversized frame and a client gone in the middle of a frame
 * (the server goes on), a client that never reads (its queue's limit),
 * many connections opened and closed (no descriptor left behind), and the
 * socket file gone with the server.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "usock.h"
#include "test-util.h"

#define FLOOD_MAX (1024u * 1024u) /* what the flooded client may have waiting */

/* What the callbacks saw, and the limits they apply. */
static struct {
        sd_event *e;
        GleanUsock *s;
        char dir[64], sub[80], path[96];
        size_t cap;           /* connections a user may have */
        size_t open;          /* connections the "daemon" holds */
        int refusals;
        char refused_why[300];
        int gones, gone_err;
        int floods, flood_err;
} t;

static int on_admit(void *userdata, const GleanPeer *peer, char *why, size_t whylen) {
        (void) userdata;
        if (t.open < t.cap)
                return 0;
        snprintf(why, whylen, "%s has %zu connections open, the most allowed", peer->user, t.open);
        return -EUSERS;
}

static void on_refused(void *userdata, const GleanPeer *peer, const char *why) {
        (void) userdata;
        (void) peer;
        t.refusals++;
        snprintf(t.refused_why, sizeof t.refused_why, "%s", why);
}

static int on_open(void *userdata, GleanUsockConn *c) {
        (void) userdata;
        glean_usock_conn_set_data(c, &t);
        t.open++;
        return 0;
}

static void conn_close(GleanUsockConn *c) {
        glean_usock_conn_free(c);
        t.open--;
}

/* "flood": 64 KiB frames until the queue's limit says no; "bye": the
 * server closes; anything else comes back. */
static int on_frame(GleanUsockConn *c, const char *payload, size_t len) {
        CU_ASSERT(glean_usock_conn_data(c) == &t);
        if (strcmp(payload, "bye") == 0) {
                conn_close(c);
                return -1;
        }
        if (strcmp(payload, "flood") == 0) {
                static char big[64 * 1024];
                memset(big, 'x', sizeof big);
                int r;
                while ((r = glean_usock_conn_queue(c, big, sizeof big, FLOOD_MAX)) >= 0) {
                        t.floods++;
                        CU_ASSERT(glean_usock_conn_flush(c) >= 0);
                        CU_ASSERT(glean_usock_conn_queued(c) <= FLOOD_MAX);
                }
                t.flood_err = r;
                conn_close(c);
                return -1;
        }
        CU_ASSERT(glean_usock_conn_queue(c, payload, len, FLOOD_MAX) >= 0);
        return glean_usock_conn_flush(c) < 0 ? -1 : 0;
}

static void on_gone(GleanUsockConn *c, int err) {
        t.gones++;
        t.gone_err = err;
        conn_close(c);
}

static const GleanUsockOps ops = {
        .admit = on_admit,
        .refused = on_refused,
        .open = on_open,
        .frame = on_frame,
        .gone = on_gone,
};

static size_t fds_open(void) {
        DIR *d = opendir("/proc/self/fd");
        size_t k = 0;
        CU_ASSERT_FATAL(d != NULL);
        for (struct dirent *e; (e = readdir(d));)
                k += e->d_name[0] != '.';
        closedir(d);
        return k;
}

/* Runs the loop for about ms milliseconds. */
static void pump(int ms) {
        struct timespec t0, now;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        do {
                CU_ASSERT(sd_event_run(t.e, 5000) >= 0);
                clock_gettime(CLOCK_MONOTONIC, &now);
        } while ((now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

static int setup(void) {
        memset(&t, 0, sizeof t);
        t.cap = 1000;
        snprintf(t.dir, sizeof t.dir, "/tmp/test-usock.XXXXXX");
        if (!mkdtemp(t.dir) || sd_event_new(&t.e) < 0)
                return 1;
        /* The directory of the socket is made by the server. */
        snprintf(t.sub, sizeof t.sub, "%s/run", t.dir);
        snprintf(t.path, sizeof t.path, "%s/sock", t.sub);
        return glean_usock_new(t.e, t.path, 0666, &ops, NULL, &t.s) < 0;
}

static int teardown(void) {
        struct stat st;
        t.s = glean_usock_free(t.s);
        int gone = lstat(t.path, &st) < 0 && errno == ENOENT;
        rmdir(t.sub);
        rmdir(t.dir);
        t.e = sd_event_unref(t.e);
        return gone ? 0 : 1;
}

static int client(void) {
        int fd = -1;
        CU_ASSERT_FATAL(glean_sock_connect_unix(t.path, 1000, &fd) >= 0);
        return fd;
}

/* The next frame from the server (the loop run first), NULL when none. */
static char *recv_frame(int fd) {
        char *payload = NULL;
        size_t len = 0;
        pump(20);
        return glean_frame_recv(fd, 0, 500, &payload, &len) >= 0 ? payload : NULL;
}

/* A new client's text comes back: the server goes on. */
static void served(const char *text) {
        int fd = client();
        CU_ASSERT(glean_frame_write(fd, text, strlen(text), 1000) >= 0);
        char *echo = recv_frame(fd);
        GLEAN_TEST_CHECK(echo && strcmp(echo, text) == 0, "'%s' came back as '%s'", text, echo ? echo : "(none)");
        free(echo);
        close(fd);
}

static void test_round_trip(void) {
        CU_ASSERT_FATAL(setup() == 0);
        int fd = client();
        CU_ASSERT(glean_frame_write(fd, "hello", 5, 1000) >= 0);
        char *echo = recv_frame(fd);
        CU_ASSERT_PTR_NOT_NULL(echo);
        CU_ASSERT_STRING_EQUAL(echo ? echo : "", "hello");
        free(echo);
        CU_ASSERT_EQUAL(glean_usock_conns(t.s), 1);
        /* Two frames in one write come back one after the other. */
        unsigned char two[] = { 0, 0, 0, 1, 'a', 0, 0, 0, 2, 'b', 'c' };
        CU_ASSERT(write(fd, two, sizeof two) == (ssize_t) sizeof two);
        char *a = recv_frame(fd), *bc = recv_frame(fd);
        CU_ASSERT_STRING_EQUAL(a ? a : "", "a");
        CU_ASSERT_STRING_EQUAL(bc ? bc : "", "bc");
        free(a);
        free(bc);
        /* The server's end: the client reads the end of the file. */
        CU_ASSERT(glean_frame_write(fd, "bye", 3, 1000) >= 0);
        pump(20);
        CU_ASSERT_EQUAL(glean_usock_conns(t.s), 0);
        char *none = NULL;
        CU_ASSERT_EQUAL(glean_frame_recv(fd, 0, 500, &none, NULL), -EPIPE);
        close(fd);
        CU_ASSERT_EQUAL(t.gones, 0);
        CU_ASSERT(teardown() == 0);
}

static void test_user_cap(void) {
        CU_ASSERT_FATAL(setup() == 0);
        size_t before = fds_open();
        t.cap = 2;
        int a = client(), b = client(), c = client();
        pump(20);
        CU_ASSERT_EQUAL(t.open, 2);
        CU_ASSERT_EQUAL(t.refusals, 1);
        /* The third is told why, in a Reply, then closed. */
        char *payload = NULL;
        size_t len = 0;
        CU_ASSERT_FATAL(glean_frame_recv(c, 0, 500, &payload, &len) >= 0);
        ClassAd *reply = NULL;
        GleanCommand cmd;
        char why[256];
        CU_ASSERT_FATAL(glean_msg_parse(payload, len, &reply, &cmd, why, sizeof why) >= 0);
        CU_ASSERT_EQUAL(cmd, GLEAN_CMD_REPLY);
        char *reason = NULL;
        bool ok = true;
        CU_ASSERT(classad_eval_bool(reply, "Ok", GLEAN_CA_MODE, &ok) >= 0 && !ok);
        CU_ASSERT(classad_eval_string(reply, "Reason", GLEAN_CA_MODE, &reason) >= 0);
        CU_ASSERT(reason && strstr(reason, "connections open, the most allowed"));
        CU_ASSERT_STRING_EQUAL(reason ? reason : "", t.refused_why);
        free(reason);
        classad_free(reply);
        free(payload);
        char *none = NULL;
        CU_ASSERT_EQUAL(glean_frame_recv(c, 0, 500, &none, NULL), -EPIPE);
        close(c);
        /* One gone: room for another. */
        close(a);
        pump(20);
        CU_ASSERT_EQUAL(t.open, 1);
        int d = client();
        CU_ASSERT(glean_frame_write(d, "still", 5, 1000) >= 0);
        char *echo = recv_frame(d);
        CU_ASSERT_STRING_EQUAL(echo ? echo : "", "still");
        free(echo);
        CU_ASSERT_EQUAL(t.refusals, 1);
        close(b);
        close(d);
        pump(20);
        CU_ASSERT_EQUAL(t.open, 0);
        CU_ASSERT_EQUAL(fds_open(), before);
        CU_ASSERT(teardown() == 0);
}

static void test_oversized(void) {
        CU_ASSERT_FATAL(setup() == 0);
        int fd = client();
        /* A header announcing a payload above GLEAN_FRAME_MAX. */
        unsigned char header[] = { 0x7f, 0xff, 0xff, 0xff, 'x' };
        CU_ASSERT(write(fd, header, sizeof header) == (ssize_t) sizeof header);
        pump(20);
        CU_ASSERT_EQUAL(t.gones, 1);
        CU_ASSERT_EQUAL(t.gone_err, -EMSGSIZE);
        CU_ASSERT_EQUAL(glean_usock_conns(t.s), 0);
        close(fd);
        served("next");
        CU_ASSERT(teardown() == 0);
}

static void test_cut_short(void) {
        CU_ASSERT_FATAL(setup() == 0);
        int fd = client();
        unsigned char part[] = { 0, 0, 0, 100, 'h', 'a', 'l', 'f' };
        CU_ASSERT(write(fd, part, sizeof part) == (ssize_t) sizeof part);
        pump(20);
        CU_ASSERT_EQUAL(t.gones, 0); /* waiting for the rest */
        close(fd);
        pump(20);
        CU_ASSERT_EQUAL(t.gones, 1);
        CU_ASSERT_EQUAL(t.gone_err, -EPIPE);
        CU_ASSERT_EQUAL(glean_usock_conns(t.s), 0);
        served("after");
        CU_ASSERT(teardown() == 0);
}

static void test_never_reads(void) {
        CU_ASSERT_FATAL(setup() == 0);
        int fd = client();
        CU_ASSERT(glean_frame_write(fd, "flood", 5, 1000) >= 0);
        pump(20);
        /* Frames went until FLOOD_MAX bytes would wait: then no more. */
        CU_ASSERT_EQUAL(t.flood_err, -ENOBUFS);
        CU_ASSERT(t.floods >= (int) (FLOOD_MAX / (64 * 1024)) - 1);
        CU_ASSERT_EQUAL(glean_usock_conns(t.s), 0);
        close(fd);
        served("others still");
        pump(20);
        CU_ASSERT_EQUAL(t.open, 0);
        CU_ASSERT(teardown() == 0);
}

static void test_many(void) {
        CU_ASSERT_FATAL(setup() == 0);
        enum { N = 300 };
        static int fds[N];
        size_t before = fds_open();
        t.cap = N - 50; /* the last 50 refused */
        for (int round = 0; round < 3; round++) {
                for (int i = 0; i < N; i++) {
                        fds[i] = client();
                        if (i % 50 == 49)
                                pump(5);
                }
                pump(50);
                CU_ASSERT_EQUAL(t.open, N - 50);
                for (int i = 0; i < N; i++)
                        close(fds[i]);
                pump(50);
                CU_ASSERT_EQUAL(t.open, 0);
                CU_ASSERT_EQUAL(glean_usock_conns(t.s), 0);
                CU_ASSERT_EQUAL(fds_open(), before);
        }
        CU_ASSERT_EQUAL(t.refusals, 3 * 50);
        CU_ASSERT(teardown() == 0);
}

/* Connections left when the server goes are freed with it. */
static void test_free_with_conns(void) {
        size_t before = fds_open();
        CU_ASSERT_FATAL(setup() == 0);
        int a = client(), b = client();
        pump(20);
        CU_ASSERT_EQUAL(glean_usock_conns(t.s), 2);
        CU_ASSERT(teardown() == 0);
        char *none = NULL;
        CU_ASSERT_EQUAL(glean_frame_recv(a, 0, 500, &none, NULL), -EPIPE);
        close(a);
        close(b);
        CU_ASSERT_EQUAL(fds_open(), before);
}

static void test_pause(void) {
        CU_ASSERT_FATAL(setup() == 0);
        glean_usock_pause(t.s);
        CU_ASSERT(glean_usock_paused(t.s));
        int fd = client(); /* in the backlog */
        pump(20);
        CU_ASSERT_EQUAL(t.open, 0);
        glean_usock_resume(t.s);
        pump(20);
        CU_ASSERT_EQUAL(t.open, 1);
        close(fd);
        pump(20);
        CU_ASSERT(teardown() == 0);
}

static CU_TestInfo tests[] = {
        { "a frame's round trip", test_round_trip },
        { "the per-user cap is told in a Reply", test_user_cap },
        { "an oversized frame is refused, the server goes on", test_oversized },
        { "a client gone in the middle of a frame", test_cut_short },
        { "a client that never reads meets the queue's limit", test_never_reads },
        { "many connections opened and closed leave no descriptor", test_many },
        { "connections left are freed with the server", test_free_with_conns },
        { "no connection is taken while paused", test_pause },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "usock", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

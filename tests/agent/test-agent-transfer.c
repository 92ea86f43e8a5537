/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-transfer.c — the real glean-agent's side of file transfer
 * (docs/transfer.md), talked to directly:
 *
 *   - the transfer port: TRANSFER_PORT 0 listens nowhere and says
 *     nothing; a connection whose first frame is not a preamble, one that
 *     names an unknown TransferId, one that sends nothing within 10 s, are
 *     closed and logged with the peer's address; a grant on the unix
 *     socket is refused (grants come from the central manager only);
 *   - the execute side: ActivateClaim with Transfer (as root, standing in
 *     for the central manager), the test serving the job's files itself
 *     (xfer_serve, as the submit agent would): the input arrives in the
 *     sandbox, the job runs there, its output comes back into Iwd and
 *     JobExit says the bytes; an input missing holds with code 13; a
 *     submit side that cannot be reached is tried three times, then the
 *     run ends with a Reason; a Vacate during the input's transfer kills
 *     it and removes the sandbox.
 *
 * Needs root (jobs of another user, the sandbox given to it): skipped
 * otherwise.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "agent-test.h"
#include "xfer/xfer.h"

static int free_port(void) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), port = -1;
        if (fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof sa) == 0 &&
            getsockname(fd, (struct sockaddr *) &sa, &len) == 0)
                port = ntohs(sa.sin_port);
        if (fd >= 0)
                close(fd);
        return port;
}

static int dial(int port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sa, sizeof sa) < 0) {
                close(fd);
                fd = -1;
        }
        return fd;
}

/* Whether the agent closes fd within seconds (read gives end of file). */
static bool closed_within(int fd, int seconds) {
        struct timeval tv = { .tv_sec = seconds };
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
        char c;
        ssize_t n = read(fd, &c, 1);
        return n == 0 || (n < 0 && errno == ECONNRESET);
}

static void send_frame(int fd, const char *payload, size_t n) {
        unsigned char h[4] = { (unsigned char) (n >> 24), (unsigned char) (n >> 16), (unsigned char) (n >> 8),
                               (unsigned char) n };
        CU_ASSERT(write(fd, h, 4) == 4);
        if (n)
                CU_ASSERT(write(fd, payload, n) == (ssize_t) n);
}

/* ---- the listener ---- */

static void test_no_port(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_start(&p, NULL)); /* the tests' base says TRANSFER_PORT = 0 */
        char *log = read_log(&p);
        GLEAN_TEST_CHECK(log && !strstr(log, "transfer") && !strstr(log, "Transfer"),
                         "TRANSFER_PORT = 0 said something:\n%s", log ? log : "");
        free(log);
        pool_stop(&p);
}

static void test_listener_refusals(void) {
        Pool p;
        int port = free_port();
        char conf[128];
        snprintf(conf, sizeof conf, "TRANSFER_PORT = %d\nTRANSFER_ADDRESS = 127.0.0.1\n", port);
        CU_ASSERT_TRUE_FATAL(pool_start(&p, conf));
        GLEAN_TEST_CHECK(wait_log(&p, 5, "serving the jobs' files on 127.0.0.1 port", NULL), "no listening line");

        /* a grant on the unix socket: refused */
        int afd = connect_agent(&p);
        ClassAd *m = NULL;
        CaError err;
        const char *grant = "[ Command = \"TransferGrant\"; TransferId = \"0123456789abcdef0123456789abcdef\"; "
                            "TransferKey = \"1111111111111111111111111111111111111111111111111111111111111111\"; "
                            "JobAd = [ ClusterId = 1; ProcId = 0; Owner = \"nobody\"; Iwd = \"/tmp\" ] ]";
        CU_ASSERT_FATAL(classad_parse(grant, strlen(grant), CA_MODE_OLD, &m, &err) >= 0);
        char why[512];
        bool ok = ok_why(call(afd, m), why, sizeof why);
        GLEAN_TEST_CHECK(!ok && strstr(why, "central manager"), "a grant on the unix socket: %s", why);
        classad_free(m);
        close(afd);

        /* not a preamble */
        int fd = dial(port);
        CU_ASSERT_FATAL(fd >= 0);
        send_frame(fd, "HELLO THERE\n", 12);
        GLEAN_TEST_CHECK(closed_within(fd, 5), "a wrong preamble: not closed");
        close(fd);
        /* a frame too long: closed at its header */
        fd = dial(port);
        unsigned char h[4] = { 0, 0, 0x10, 0 };
        CU_ASSERT(write(fd, h, 4) == 4);
        GLEAN_TEST_CHECK(closed_within(fd, 5), "a 4 KiB preamble: not closed");
        close(fd);
        /* an unknown TransferId (the grant above never took) */
        fd = dial(port);
        const char *pre = "GLEANXFR 0123456789abcdef0123456789abcdef\n";
        send_frame(fd, pre, strlen(pre));
        GLEAN_TEST_CHECK(closed_within(fd, 5), "an unknown TransferId: not closed");
        close(fd);
        GLEAN_TEST_CHECK(wait_log(&p, 5, "refused: no such TransferId", NULL), "no log of the unknown id");
        GLEAN_TEST_CHECK(wait_log(&p, 5, "transfer connection from 127.0.0.1:", NULL), "the peer is not logged");
        /* silence: closed after the preamble's 10 s */
        fd = dial(port);
        time_t t0 = time(NULL);
        GLEAN_TEST_CHECK(closed_within(fd, 15), "a silent connection: not closed");
        time_t dt = time(NULL) - t0;
        GLEAN_TEST_CHECK(dt >= 9 && dt <= 13, "closed after %lld s, want about 10", (long long) dt);
        close(fd);
        GLEAN_TEST_CHECK(wait_log(&p, 2, "no preamble within 10 s", NULL), "no log of the silence");

        /* many at once: the agent still answers its socket */
        int many[80];
        for (int i = 0; i < 80; i++)
                many[i] = dial(port);
        afd = connect_agent(&p);
        ClassAd *st = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &st);
        GLEAN_TEST_CHECK(ok_why(call(afd, st), why, sizeof why), "status with 80 silent connections: %s", why);
        classad_free(st);
        close(afd);
        for (int i = 0; i < 80; i++)
                if (many[i] >= 0)
                        close(many[i]);
        GLEAN_TEST_CHECK(wait_log(&p, 5, "connections wait for their preamble", NULL),
                         "the bound on connections waiting is not logged");
        pool_stop(&p);
}

static CU_TestInfo listener_tests[] = {
        { "TRANSFER_PORT 0: no port, no word", test_no_port },
        { "refusals: no preamble, a wrong one, an unknown id, silence, grants on the unix socket",
          test_listener_refusals },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "listener", NULL, NULL, NULL, NULL, listener_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (geteuid() != 0)
                return glean_test_skip("needs root (jobs of another user, their sandboxes)");
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

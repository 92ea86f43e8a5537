/* SPDX-License-Identifier: Apache-2.0 */
/*
 * conn-open.c — how long glean-negotiator takes to open connections, one
 * after the other, while the earlier ones stay open (issue 20, item 16:
 * 16,500 connections took 40 s when each accept walked all of them).
 *
 *   build/bench/conn-open [N] [--unix]
 *
 * N (16,000 by default) agents over TCP, each with the pool-key handshake
 * and a Hello of its own machine; --unix: users on the unix socket (Hello
 * alone). Prints the time of each 2,000 and the whole. The daemon is
 * $GLEAN_NEGOTIATOR, else build/bin/glean-negotiator; it needs N
 * descriptors and more (the hard RLIMIT_NOFILE of this process, which it
 * inherits), and so does this program.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/tcp.h>

#define BENCH_NAME "conn-open"
#define TIMEOUT_MS 30000
/* Not every helper of the pool benchmarks is of use here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "pool-common.h"
#pragma GCC diagnostic pop

static void on_die(void) {
        fprintf(stderr, " (logs: %s)\n", nego_log);
        if (nego_pid > 0) {
                kill(nego_pid, SIGKILL);
                waitpid(nego_pid, NULL, 0);
        }
}


static int open_agent(int i) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int one = 1;
        if (fd < 0 || connect(fd, (struct sockaddr *) &sin, sizeof sin) < 0)
                die("connection %d: %m", i);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        GleanSecure *s = NULL;
        char why[256] = "", hello[256];
        if (glean_secure_handshake(fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(&pool_key), TIMEOUT_MS, &s, why, sizeof why) < 0)
                die("connection %d: the handshake: %s", i, why);
        snprintf(hello, sizeof hello,
                 "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"glean-agent\"; Machine = \"m%06d\"; "
                 "AgentStartTime = 1 ]",
                 i);
        char *payload = NULL;
        size_t len = 0;
        if (glean_secure_send(s, fd, hello, strlen(hello), TIMEOUT_MS) < 0 ||
            glean_secure_recv(s, fd, TIMEOUT_MS, &payload, &len) < 0)
                die("connection %d: no answer to its Hello", i);
        free(payload);
        /* The session stays open (the fd); its keys are not needed any more. */
        glean_secure_free(s);
        return fd;
}

int main(int argc, char **argv) {
        int n = 16000;
        bool unix_users = false;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--unix") == 0)
                        unix_users = true;
                else
                        n = atoi(argv[i]);
        }
        if (n <= 0)
                die("usage: conn-open [N] [--unix]\n");
        raise_nofile(n);
        signal(SIGPIPE, SIG_IGN);
        pool_dir("conn-open");
        FILE *f = nego_conf_open();
        fprintf(f, "NEGOTIATOR_MAX_CONNECTIONS_PER_USER = %d\nNEGOTIATOR_LOG_LEVEL = notice\n", n + 16);
        conf_close(f, nego_conf);
        start_negotiator();
        int *fds = calloc((size_t) n, sizeof *fds);
        if (!fds)
                die("out of memory\n");
        double t0 = mono(), step = t0;
        for (int i = 0; i < n; i++) {
                if (unix_users) {
                        char why[256];
                        if (glean_client_connect(sock_path, "glean", TIMEOUT_MS, &fds[i], why, sizeof why) < 0)
                                die("connection %d: %s\n", i, why);
                } else
                        fds[i] = open_agent(i);
                if ((i + 1) % 2000 == 0 || i + 1 == n) {
                        double now = mono();
                        progress("%6d connections open: the last %d in %.2f s", i + 1, (i % 2000) + 1, now - step);
                        step = now;
                }
        }
        double total = mono() - t0;
        printf("%d %s connections opened in %.2f s (%.0f a second)\n", n, unix_users ? "unix" : "agent", total,
               n / total);
        for (int i = 0; i < n; i++)
                close(fds[i]);
        free(fds);
        kill(nego_pid, SIGTERM);
        waitpid(nego_pid, NULL, 0);
        pool_dir_remove(false);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reconnect.c — a reconnect storm: N agents dial one glean-negotiator at
 * the same moment (as after the manager's restart or a network cut), each
 * proving a token of its own (or, --pool-key, the pool key), and send
 * their Hello. Prints the time until every one is answered and the
 * daemon's CPU time over that span (utime + stime of /proc/PID/stat).
 *
 *   build/bench/reconnect [N] [--pool-key] [--rounds R]
 *
 * N is 5,000 by default, each from an address of its own in 127.0.0.0/8.
 * The agents are one event loop of this process
 * (non-blocking connects, glean_secure_read/flush): their own cost is
 * printed too (this process's CPU), since on a 2-core host both share the
 * machine. The signing key, the tokens (one per agent, agent@mNNNNNN.bench)
 * and the registry are made here; the daemon is $GLEAN_NEGOTIATOR, else
 * build/bin/glean-negotiator, with SEC_DEFAULT_AUTHENTICATION_METHODS =
 * TOKEN (or PASSWORD). R rounds (default 3): all connect, all close.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/resource.h>

#define BENCH_NAME "reconnect"
#define TIMEOUT_MS 30000
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#include "pool-common.h"
#pragma GCC diagnostic pop

#include "common/token.h"

static void on_die(void) {
        fprintf(stderr, " (logs: %s)\n", nego_log);
        if (nego_pid > 0) {
                kill(nego_pid, SIGKILL);
                waitpid(nego_pid, NULL, 0);
        }
}


/* The CPU seconds of process pid (utime + stime). */
static double cpu_of(pid_t pid) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "r");
        if (!f)
                return 0;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        char *p = strrchr(buf, ')');
        unsigned long ut = 0, st = 0;
        if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) == 2)
                return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
        return 0;
}

static double self_cpu(void) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (double) ru.ru_utime.tv_sec + (double) ru.ru_utime.tv_usec / 1e6 + (double) ru.ru_stime.tv_sec +
               (double) ru.ru_stime.tv_usec / 1e6;
}

typedef struct Agent {
        int fd;
        GleanSecure *s;
        bool connected, hello_sent, done;
} Agent;

static GleanSigningKey manager;
static GleanCredential *creds;
static bool use_pool_key;

static void agent_start(Agent *a, int i, int ep) {
        a->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port) };
        sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        int one = 1;
        if (a->fd < 0)
                die("socket: %m");
        setsockopt(a->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        /* Each from an address of its own (127.0.0.0/8 is all loopback), as
         * 5,000 machines would be: the manager caps handshakes per address. */
        struct sockaddr_in src = { .sin_family = AF_INET };
        src.sin_addr.s_addr = htonl(0x7f000000u | (uint32_t) (1 + i / 250) << 8 | (uint32_t) (1 + i % 250));
        if (bind(a->fd, (struct sockaddr *) &src, sizeof src) < 0)
                die("bind %d: %m", i);
        if (connect(a->fd, (struct sockaddr *) &sin, sizeof sin) < 0 && errno != EINPROGRESS)
                die("connect %d: %m", i);
        GleanSecureAuth auth = use_pool_key ? *GLEAN_SECURE_POOL_AUTH(&pool_key)
                                            : (GleanSecureAuth){ .methods = GLEAN_SECURE_TOKEN,
                                                                 .manager_pk = manager.pk,
                                                                 .credential = &creds[i] };
        if (glean_secure_new(GLEAN_SECURE_AGENT, &auth, &a->s) < 0)
                die("glean_secure_new");
        a->connected = a->hello_sent = a->done = false;
        struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = (uint32_t) i };
        if (epoll_ctl(ep, EPOLL_CTL_ADD, a->fd, &ev) < 0)
                die("epoll_ctl: %m");
}

/* Runs agent i as far as its socket allows: 1 once its Hello is answered. */
static int agent_step(Agent *a, int i) {
        if (a->done)
                return 1;
        int r = glean_secure_flush(a->s, a->fd);
        if (r < 0)
                die("agent %d: %s", i, glean_secure_reason(a->s));
        char *payload = NULL;
        size_t len = 0;
        while ((r = glean_secure_read(a->s, a->fd, &payload, &len)) == 1) {
                free(payload);
                a->done = true; /* the Hello's answer */
        }
        if (r < 0 && r != -EAGAIN)
                die("agent %d: %s", i, glean_secure_reason(a->s));
        if (glean_secure_established(a->s) && !a->hello_sent) {
                char hello[256];
                snprintf(hello, sizeof hello,
                         "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"glean-agent\"; Machine = "
                         "\"m%06d.bench\"; AgentStartTime = 1 ]",
                         i);
                if (glean_secure_seal(a->s, hello, strlen(hello)) < 0)
                        die("seal");
                a->hello_sent = true;
                if (glean_secure_flush(a->s, a->fd) < 0)
                        die("agent %d: %s", i, glean_secure_reason(a->s));
        }
        return a->done;
}

int main(int argc, char **argv) {
        int n = 5000, rounds = 3;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "--pool-key") == 0)
                        use_pool_key = true;
                else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
                        rounds = atoi(argv[++i]);
                else
                        n = atoi(argv[i]);
        }
        if (n <= 0 || rounds <= 0)
                die("usage: reconnect [N] [--pool-key] [--rounds R]\n");
        raise_nofile(n);
        signal(SIGPIPE, SIG_IGN);
        pool_dir("reconnect");

        /* The signing key and a token per agent. */
        char why[512], seed[GLEAN_SEED_TEXT_LEN + 1], path[400];
        if (glean_signing_key_generate(&manager) < 0)
                die("signing key");
        glean_signing_key_seed_format(&manager, seed);
        snprintf(path, sizeof path, "%s/signing.key", dir);
        FILE *f = conf_open(path);
        fprintf(f, "%s\n", seed);
        conf_close(f, path);
        chmod(path, 0600);
        creds = calloc((size_t) n, sizeof *creds);
        if (!creds)
                die("out of memory");
        double t0 = mono();
        int64_t now = (int64_t) time(NULL);
        for (int i = 0; i < n && !use_pool_key; i++) {
                char name[64], *text = NULL;
                snprintf(name, sizeof name, "agent@m%06d.bench", i);
                if (glean_signing_key_generate(&creds[i].key) < 0 ||
                    glean_token_issue(&manager, name, GLEAN_RIGHTS_AGENT, now, now + 86400, creds[i].key.pk, &text,
                                      &creds[i].token, why, sizeof why) < 0)
                        die("token %d: %s", i, why);
                creds[i].text_len = strlen(text);
                memcpy(creds[i].text, text, creds[i].text_len + 1);
                free(text);
        }
        if (!use_pool_key)
                progress("%d tokens issued in %.2f s", n, mono() - t0);

        f = nego_conf_open();
        fprintf(f,
                "NEGOTIATOR_MAX_CONNECTIONS_PER_USER = %d\nNEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS = %d\n"
                "NEGOTIATOR_LOG_LEVEL = notice\nSEC_DEFAULT_AUTHENTICATION_METHODS = %s\n"
                "SEC_TOKEN_POOL_SIGNING_KEY_FILE = %s\nTOKEN_REGISTRY = %s/tokens\n",
                n + 16, n + 16, use_pool_key ? "PASSWORD" : "TOKEN", path, dir);
        conf_close(f, nego_conf);
        start_negotiator();

        Agent *agents = calloc((size_t) n, sizeof *agents);
        struct epoll_event *evs = calloc(1024, sizeof *evs);
        if (!agents || !evs)
                die("out of memory");
        for (int round = 0; round < rounds; round++) {
                int ep = epoll_create1(EPOLL_CLOEXEC);
                double cpu0 = cpu_of(nego_pid), self0 = self_cpu(), start = mono();
                for (int i = 0; i < n; i++)
                        agent_start(&agents[i], i, ep);
                int done = 0;
                while (done < n) {
                        int k = epoll_wait(ep, evs, 1024, TIMEOUT_MS);
                        if (k <= 0)
                                die("round %d: %d of %d answered, then nothing for %d s", round + 1, done, n,
                                    TIMEOUT_MS / 1000);
                        for (int j = 0; j < k; j++) {
                                int i = (int) evs[j].data.u32;
                                if (agents[i].done)
                                        continue;
                                if (agent_step(&agents[i], i)) {
                                        done++;
                                        epoll_ctl(ep, EPOLL_CTL_DEL, agents[i].fd, NULL);
                                        continue;
                                }
                                /* Writable matters only while something waits to go. */
                                const void *out;
                                struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t) i };
                                if (glean_secure_output(agents[i].s, &out) > 0)
                                        ev.events |= EPOLLOUT;
                                epoll_ctl(ep, EPOLL_CTL_MOD, agents[i].fd, &ev);
                        }
                }
                double took = mono() - start, cpu = cpu_of(nego_pid) - cpu0, self = self_cpu() - self0;
                printf("round %d: %d %s agents dialled at once, all answered in %.2f s (%.0f a second); "
                       "central manager CPU %.2f s (%.0f us an agent), the agents' %.2f s\n",
                       round + 1, n, use_pool_key ? "pool-key" : "token", took, n / took, cpu, cpu * 1e6 / n, self);
                fflush(stdout);
                for (int i = 0; i < n; i++) {
                        close(agents[i].fd);
                        glean_secure_free(agents[i].s);
                }
                close(ep);
                sleep(1); /* the manager sees every close */
        }
        free(agents);
        free(evs);
        for (int i = 0; i < n; i++)
                glean_credential_clear(&creds[i]);
        free(creds);
        kill(nego_pid, SIGTERM);
        waitpid(nego_pid, NULL, 0);
        pool_dir_remove(false);
        return 0;
}

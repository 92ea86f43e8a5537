/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon-limits.c — what strangers and users can make the real
 * glean-negotiator spend, and that it keeps serving (issue 20):
 *
 *   - its descriptors run out (a hard RLIMIT_NOFILE of 64): idle
 *     connections of an unprivileged user and of a TCP peer without the
 *     key, then of many users at once: it idles (no busy loop), root and a
 *     keyed agent are served while it lasts as far as there is room, and
 *     once they leave it answers and a submit commits (items 4, 13);
 *   - the caps: a user's connections beyond NEGOTIATOR_MAX_CONNECTIONS_PER_USER
 *     are refused with a reason naming it, a TCP address's handshakes beyond
 *     NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS give way, while root and an agent
 *     with the key (from the same address) get in; a connection idle after
 *     its Hello is closed after NEGOTIATOR_IDLE_TIMEOUT, one with a Wait
 *     parked is not (items 4, 13);
 *   - junk from an agent's address keeps no agent out, and 2,000 junk
 *     connections make a few records and a summary (item 12);
 *   - Waits beyond NEGOTIATOR_MAX_WAITS_PER_USER are refused with a reason
 *     naming it; a client that never reads is dropped and the daemon's
 *     memory stays bounded (item 10);
 *   - many connections opened and half of them closed: the others are
 *     served, an agent's new connection replaces its old one (item 16).
 *
 * Figures (CPU at the limit, memory) are printed on stderr.
 */
#define _GNU_SOURCE
#include <grp.h>
#include <poll.h>

#include "daemon-test.h"

/* ---- helpers ---- */

/* The daemon's CPU time (user + system) in seconds. */
static double cpu_seconds(pid_t pid) {
        char path[64], buf[1024];
        snprintf(path, sizeof path, "/proc/%d/stat", (int) pid);
        FILE *f = fopen(path, "re");
        if (!f)
                return -1;
        size_t k = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[k] = 0;
        char *p = strrchr(buf, ')');
        unsigned long long ut = 0, st = 0;
        if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
                return -1;
        return (double) (ut + st) / (double) sysconf(_SC_CLK_TCK);
}

/* Its share of one core over seconds. */
static double cpu_share(pid_t pid, double seconds) {
        double c0 = cpu_seconds(pid), t0 = now_mono();
        usleep((useconds_t) (seconds * 1e6));
        double c1 = cpu_seconds(pid), t1 = now_mono();
        return c0 < 0 || c1 < 0 ? -1 : (c1 - c0) / (t1 - t0);
}

/* A field of /proc/PID/status in kB (VmRSS, VmHWM). */
static long status_kb(pid_t pid, const char *field) {
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%d/status", (int) pid);
        FILE *f = fopen(path, "re");
        long v = -1;
        size_t fl = strlen(field);
        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, field, fl) == 0 && line[fl] == ':')
                        v = strtol(line + fl + 1, NULL, 10);
        if (f)
                fclose(f);
        return v;
}

/* The rig's directory open to other users (the socket is 0666). */
static void rig_open_dir(const Rig *r) {
        CU_ASSERT(chmod(r->dir, 0755) == 0);
}

/* A process holding connections (a user on the unix socket as uid, or a
 * TCP peer without the key from address src), until holder_stop(). */
typedef struct Holder {
        pid_t pid;
        int opened, open, closed; /* as it found them after a moment */
        char reason[512];         /* the reason of the first refusal it heard */
} Holder;

static int holder_unix(const Rig *r, bool hello, char *reason, size_t len) {
        if (hello) {
                int fd = -1;
                char why[400];
                if (glean_client_connect(r->sock, "glean", 3000, &fd, why, sizeof why) < 0) {
                        if (!reason[0])
                                snprintf(reason, len, "%s", why);
                        return -1;
                }
                return fd;
        }
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        if (strlen(r->sock) >= sizeof sun.sun_path)
                return -1;
        memcpy(sun.sun_path, r->sock, strlen(r->sock) + 1);
        if (fd >= 0 && connect(fd, (struct sockaddr *) &sun, sizeof sun) < 0) {
                close(fd);
                return -1;
        }
        return fd;
}

static int holder_tcp(const Rig *r, const char *src) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        struct sockaddr_in from = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
        inet_pton(AF_INET, src, &from.sin_addr);
        to.sin_port = htons((uint16_t) r->port);
        to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (fd < 0 || bind(fd, (struct sockaddr *) &from, sizeof from) < 0 ||
            (connect(fd, (struct sockaddr *) &to, sizeof to) < 0 && errno != EINPROGRESS)) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

/* Whether the daemon closed fd (what it sent read and dropped). */
static bool holder_closed(int fd) {
        char buf[4096];
        for (;;) {
                ssize_t k = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
                if (k > 0)
                        continue;
                return k == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
        }
}

static bool holder_start(Holder *h, const Rig *r, uid_t uid, const char *src, int count, bool hello) {
        int p[2];
        memset(h, 0, sizeof *h);
        if (pipe2(p, O_CLOEXEC) < 0)
                return false;
        h->pid = fork();
        if (h->pid < 0)
                return false;
        if (h->pid == 0) {
                close(p[0]);
                if (uid != 0 && (setgroups(0, NULL) < 0 || setgid(uid) < 0 || setuid(uid) < 0))
                        _exit(1);
                int *fds = calloc((size_t) count, sizeof *fds);
                char reason[512] = "";
                int opened = 0, open_ = 0, closed = 0;
                for (int i = 0; i < count; i++) {
                        fds[i] = src ? holder_tcp(r, src) : holder_unix(r, hello, reason, sizeof reason);
                        opened += fds[i] >= 0;
                }
                usleep(1500000);
                for (int i = 0; i < count; i++) {
                        if (fds[i] < 0)
                                continue;
                        if (holder_closed(fds[i]))
                                closed++;
                        else
                                open_++;
                }
                dprintf(p[1], "%d %d %d\n%s\n", opened, open_, closed, reason);
                close(p[1]);
                for (;;)
                        pause();
        }
        close(p[1]);
        for (size_t i = 0; i < sizeof started / sizeof *started; i++)
                if (started[i] <= 0 || waitpid(started[i], NULL, WNOHANG) != 0) {
                        started[i] = h->pid;
                        break;
                }
        char buf[1024] = "";
        size_t got = 0;
        struct pollfd pf = { .fd = p[0], .events = POLLIN };
        double end = now_mono() + 20;
        while (got < sizeof buf - 1 && now_mono() < end && poll(&pf, 1, 500) >= 0) {
                ssize_t k = read(p[0], buf + got, sizeof buf - 1 - got);
                if (k <= 0)
                        break;
                got += (size_t) k;
        }
        close(p[0]);
        buf[got] = 0;
        char *nl = strchr(buf, '\n');
        if (sscanf(buf, "%d %d %d", &h->opened, &h->open, &h->closed) != 3)
                return false;
        if (nl)
                snprintf(h->reason, sizeof h->reason, "%s", nl + 1);
        return true;
}

static void holder_stop(Holder *h) {
        if (h->pid > 0) {
                kill(h->pid, SIGKILL);
                waitpid(h->pid, NULL, 0);
                h->pid = 0;
        }
}

/* Root's Query on a new connection answers within 5 s. */
static bool root_served(const Rig *r) {
        int fd = -1;
        char why[256];
        if (glean_client_connect(r->sock, "glean", 5000, &fd, why, sizeof why) < 0)
                return false;
        ClassAd *m = user_call(fd, "[ Command = \"QuerySlots\"; RequestId = 1 ]");
        bool ok = reply_ok(m);
        classad_free(m);
        close(fd);
        return ok;
}

static bool agent_served(const Rig *r, const char *machine) {
        Agent a;
        if (!agent_connect(&a, r, machine))
                return false;
        CU_ASSERT(agent_send_text(&a, "[ Command = \"QuerySlots\"; RequestId = 3 ]"));
        GleanCommand cmd;
        ClassAd *m = agent_recv(&a, 5000, &cmd);
        bool ok = m && cmd == GLEAN_CMD_REPLY && reply_ok(m);
        classad_free(m);
        agent_close(&a);
        return ok;
}

static size_t count_lines_with(const char *text, const char *needle) {
        size_t k = 0;
        for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
                k++;
        return k;
}

/* ---- the descriptors run out (item 4) ---- */

static void test_out_of_descriptors(void) {
        Rig r;
        /* The attackers' connections stay for the whole test: no handshake deadline in it. */
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_TIMEOUT = 60\n"));
        r.nofile = 64;
        CU_ASSERT_FATAL(rig_start(&r));
        rig_open_dir(&r);

        /* The attack of the issue: an unprivileged user and a TCP peer
         * without the key, each with far more idle connections than there
         * are descriptors. */
        Holder user, tcp;
        CU_ASSERT_FATAL(holder_start(&user, &r, 65534, NULL, 100, false));
        CU_ASSERT_FATAL(holder_start(&tcp, &r, 0, "127.0.0.1", 100, false));
        fprintf(stderr, "\n    the issue's attack: user 65534 holds %d of %d, the TCP peer %d of %d\n", user.open,
                user.opened, tcp.open, tcp.opened);
        double share = cpu_share(r.pid, 2.0);
        fprintf(stderr, "    the daemon's CPU meanwhile: %.1f%% of a core\n", 100 * share);
        GLEAN_TEST_CHECK(share >= 0 && share < 0.2, "the daemon idles under the attack: %.1f%% of a core",
                         100 * share);
        GLEAN_TEST_CHECK(root_served(&r), "root is served during the attack");
        GLEAN_TEST_CHECK(agent_served(&r, "a1"), "an agent with the key is served during the attack");
        GLEAN_TEST_CHECK(user.open < 30 && tcp.open < 30, "the attackers hold few connections: %d, %d", user.open,
                         tcp.open);

        /* All the descriptors: many users, each at its cap. */
        Holder many[8];
        int held = 0;
        for (int i = 0; i < 8; i++) {
                CU_ASSERT_FATAL(holder_start(&many[i], &r, (uid_t) (60001 + i), NULL, 20, false));
                held += many[i].open;
        }
        fprintf(stderr, "    8 more users hold %d connections\n", held);
        share = cpu_share(r.pid, 2.0);
        fprintf(stderr, "    the daemon's CPU with every descriptor taken: %.1f%% of a core\n", 100 * share);
        GLEAN_TEST_CHECK(share >= 0 && share < 0.2, "the daemon idles at the limit: %.1f%% of a core", 100 * share);

        /* They leave: it answers again at once. */
        double t0 = now_mono();
        holder_stop(&user);
        holder_stop(&tcp);
        for (int i = 0; i < 8; i++)
                holder_stop(&many[i]);
        bool served = false;
        while (!served && now_mono() < t0 + 10)
                served = root_served(&r);
        fprintf(stderr, "    served again %.2f s after they left\n", now_mono() - t0);
        GLEAN_TEST_CHECK(served, "root is served once they left");
        int fd = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0);
        int64_t cluster = user_submit(fd, 1);
        GLEAN_TEST_CHECK(cluster > 0, "a submit commits once they left");
        GLEAN_TEST_CHECK(job_status(fd, cluster, 0) == 1, "the job is in the queue, Idle");
        close(fd);
        GLEAN_TEST_CHECK(agent_served(&r, "a2"), "an agent with the key is served once they left");
        rig_done(&r, false);
}

/* ---- the caps and the timeouts (items 4, 13) ---- */

static void test_caps(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_TIMEOUT = 60\n"
                                     "NEGOTIATOR_MAX_CONNECTIONS_PER_USER = 8\n"
                                     "NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS = 8\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        rig_open_dir(&r);

        Holder user, tcp;
        CU_ASSERT_FATAL(holder_start(&user, &r, 65534, NULL, 20, true));
        GLEAN_TEST_CHECK(user.opened == 8 && user.open == 8, "a user gets 8 connections of 20: %d opened, %d open",
                         user.opened, user.open);
        GLEAN_TEST_CHECK(strstr(user.reason, "NEGOTIATOR_MAX_CONNECTIONS_PER_USER") != NULL,
                         "the refusal names the limit: '%s'", user.reason);
        GLEAN_TEST_CHECK(root_served(&r), "root is served while a user holds its cap");
        GLEAN_TEST_CHECK(log_has(&r, "the most NEGOTIATOR_MAX_CONNECTIONS_PER_USER allows", 2), "a record of the refusal");

        CU_ASSERT_FATAL(holder_start(&tcp, &r, 0, "127.0.0.1", 20, false));
        GLEAN_TEST_CHECK(tcp.open == 8 && tcp.closed == 12,
                         "an address without the key keeps 8 handshakes of 20: %d open, %d closed", tcp.open,
                         tcp.closed);
        GLEAN_TEST_CHECK(agent_served(&r, "same-address"),
                         "an agent with the key from that address is served while it holds them");
        GLEAN_TEST_CHECK(log_has(&r, "NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS", 2), "a record of the handshakes that gave way");
        holder_stop(&user);
        holder_stop(&tcp);
        rig_done(&r, false);
}

static void test_idle_timeout(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_IDLE_TIMEOUT = 2\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        int idle = user_connect(&r), waiting = user_connect(&r);
        CU_ASSERT_FATAL(idle >= 0 && waiting >= 0);
        int64_t cluster = user_submit(waiting, 1);
        CU_ASSERT_FATAL(cluster > 0);
        char text[256];
        snprintf(text, sizeof text, "[ Command = \"Wait\"; RequestId = 2; Id = \"%" PRId64 ".0\" ]", cluster);
        CU_ASSERT(glean_frame_write(waiting, text, strlen(text), 2000) >= 0);
        double t0 = now_mono();
        char buf[256];
        struct pollfd p = { .fd = idle, .events = POLLIN };
        bool closed = poll(&p, 1, 6000) > 0 && read(idle, buf, sizeof buf) == 0;
        double took = now_mono() - t0;
        GLEAN_TEST_CHECK(closed && took > 1.0, "an idle connection is closed after NEGOTIATOR_IDLE_TIMEOUT (%.1f s)",
                         took);
        GLEAN_TEST_CHECK(log_has(&r, "idle for 2 s (NEGOTIATOR_IDLE_TIMEOUT)", 2), "a record saying so");
        /* The one with a Wait parked stays, and is served. */
        usleep(1500000);
        ClassAd *m = user_call(waiting, "[ Command = \"QuerySlots\"; RequestId = 3 ]");
        GLEAN_TEST_CHECK(reply_ok(m), "a connection with a Wait parked is not idle");
        classad_free(m);
        close(idle);
        close(waiting);
        rig_done(&r, false);
}

/* ---- junk from an agent's address (item 12) ---- */

static void test_junk_then_agent(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        /* Wrong keys, garbage, silence cut short: 2,000 connections. */
        GleanPoolKey other;
        glean_pool_key_generate(&other);
        char *before = rig_log(&r);
        size_t lines0 = count_lines_with(before, "\n");
        free(before);
        for (int i = 0; i < 2000; i++) {
                if (i % 100 == 0) {
                        Agent a;
                        agent_connect_key(&a, &r, "intruder", 1, &other);
                        agent_close(&a);
                        continue;
                }
                int fd = tcp_connect(r.port);
                if (fd < 0)
                        continue;
                if (i % 2)
                        CU_ASSERT(write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
                close(fd);
        }
        GLEAN_TEST_CHECK(agent_served(&r, "right-after"), "an agent with the key connects right after the junk");
        GLEAN_TEST_CHECK(log_has(&r, "more connections refused or closed in the last", 15), "a summary record");
        char *log = rig_log(&r);
        size_t lines = count_lines_with(log, "\n") - lines0;
        size_t refusals = count_lines_with(log, "refused a connection from") + count_lines_with(log, "closing the connection of 127.0.0.1");
        fprintf(stderr, "\n    2,000 junk connections: %zu records (%zu of them about one connection)\n", lines,
                refusals);
        GLEAN_TEST_CHECK(lines < 60, "2,000 junk connections make %zu records", lines);
        free(log);
        rig_done(&r, false);
}

/* ---- what a user can make it keep (item 10) ---- */

static void test_waits_limit(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_MAX_WAITS_PER_USER = 50\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        int fd = user_connect(&r), fd2 = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0 && fd2 >= 0);
        int64_t cluster = user_submit(fd, 1);
        CU_ASSERT_FATAL(cluster > 0);
        char text[256];
        for (int i = 1; i <= 60; i++) {
                snprintf(text, sizeof text, "[ Command = \"Wait\"; RequestId = %d; Id = \"%" PRId64 ".0\" ]", 100 + i,
                         cluster);
                CU_ASSERT(glean_frame_write(fd, text, strlen(text), 2000) >= 0);
        }
        int refused = 0, first = 0;
        char reason[400] = "";
        for (;;) {
                ClassAd *m = NULL;
                GleanCommand cmd;
                char why[256];
                if (glean_msg_recv(fd, 2000, &m, &cmd, why, sizeof why) < 0)
                        break;
                int64_t id = ad_int(m, "RequestId");
                if (!reply_ok(m)) {
                        refused++;
                        if (!first) {
                                first = (int) id;
                                char *t = NULL;
                                classad_eval_string(m, "Reason", MODE, &t);
                                snprintf(reason, sizeof reason, "%s", t ? t : "");
                                free(t);
                        }
                }
                classad_free(m);
        }
        GLEAN_TEST_CHECK(refused == 10 && first == 151, "the Waits past 50 are refused: %d refused, the first %d",
                         refused, first);
        GLEAN_TEST_CHECK(strstr(reason, "NEGOTIATOR_MAX_WAITS_PER_USER") != NULL, "the reason names the limit: '%s'",
                         reason);
        /* Per user: on its other connection too; once the first closes, its Waits go. */
        snprintf(text, sizeof text, "[ Command = \"Wait\"; RequestId = 9; Id = \"%" PRId64 ".0\" ]", cluster);
        ClassAd *m = user_call(fd2, text);
        GLEAN_TEST_CHECK(m && !reply_ok(m), "the user's other connection is refused a Wait too");
        classad_free(m);
        close(fd);
        usleep(300000);
        CU_ASSERT(glean_frame_write(fd2, text, strlen(text), 2000) >= 0);
        GleanCommand cmd;
        char why[256];
        m = NULL;
        GLEAN_TEST_CHECK(glean_msg_recv(fd2, 1000, &m, &cmd, why, sizeof why) < 0,
                         "once the other connection closed, a Wait is parked again (no answer)");
        classad_free(m);
        close(fd2);
        rig_done(&r, false);
}

static void test_reader_that_does_not_read(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_MAX_OUTPUT = 16777216\n"));
        /* Under ASan freed memory waits in a quarantine: none, so that the
         * daemon's memory is what it keeps. */
        const char *asan = getenv("ASAN_OPTIONS");
        char *saved = asan ? strdup(asan) : NULL, opts[512];
        snprintf(opts, sizeof opts, "%s%squarantine_size_mb=0", asan ? asan : "", asan && *asan ? ":" : "");
        setenv("ASAN_OPTIONS", opts, 1);
        bool started_ok = rig_start(&r);
        if (saved)
                setenv("ASAN_OPTIONS", saved, 1);
        else
                unsetenv("ASAN_OPTIONS");
        free(saved);
        CU_ASSERT_FATAL(started_ok);
        int fd = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0);
        /* 1,000 jobs of 8 KB each: a listing of all is some 8 MB. */
        size_t big = 8000, cap = big + 4096 + 1000 * 4;
        char *text = malloc(cap), *pad = malloc(big + 1);
        CU_ASSERT_FATAL(text && pad);
        memset(pad, 'x', big);
        pad[big] = 0;
        int k = snprintf(text, cap, "[ Command = \"Submit\"; RequestId = 7; Cluster = [ %s; Pad = \"%s\" ]; Procs = { ",
                         submit_cluster, pad);
        for (int i = 0; i < 1000; i++)
                k += snprintf(text + k, cap - (size_t) k, i ? ", []" : "[]");
        snprintf(text + k, cap - (size_t) k, " } ]");
        ClassAd *m = user_call(fd, text);
        GLEAN_TEST_CHECK_FATAL(reply_ok(m), "1,000 jobs submitted");
        classad_free(m);
        free(text);
        free(pad);
        m = user_call(fd, "[ Command = \"Query\"; RequestId = 8 ]");
        GLEAN_TEST_CHECK(reply_ok(m), "a listing that is read is served");
        classad_free(m);
        /* Drain what may follow (the pieces of the listing). */
        GleanCommand cmd;
        char why[256];
        while ((m = NULL, glean_msg_recv(fd, 500, &m, &cmd, why, sizeof why)) >= 0)
                classad_free(m);
        close(fd);

        long rss0 = status_kb(r.pid, "VmRSS"), hwm0 = status_kb(r.pid, "VmHWM");
        fd = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0);
        for (int i = 0; i < 60; i++)
                if (glean_frame_write(fd, "[ Command = \"Query\"; RequestId = 9 ]", 36, 1000) < 0)
                        break;
        GLEAN_TEST_CHECK(log_has(&r, "it does not read its replies", 10), "the client that does not read is dropped");
        long rss1 = status_kb(r.pid, "VmRSS"), hwm1 = status_kb(r.pid, "VmHWM");
        fprintf(stderr, "\n    a client asking 60 listings of 8 MB, reading none: VmRSS %ld -> %ld kB, VmHWM %ld -> %ld kB\n",
                rss0, rss1, hwm0, hwm1);
        GLEAN_TEST_CHECK(hwm1 - hwm0 < 100 * 1024, "the daemon's peak memory grew by %ld kB", hwm1 - hwm0);
        close(fd);
        GLEAN_TEST_CHECK(root_served(&r), "the others are served");
        rig_done(&r, false);
}

/* A Submit of n "[]" procs in parts of 5,000 with SubmitId sid, written
 * to fd without reading the answer. */
static bool raw_submit_parts(int fd, int64_t rid, int n, const char *sid) {
        size_t cap = 5000 * 4 + 1024;
        char *buf = malloc(cap);
        bool ok = buf != NULL;
        for (int from = 0; ok && from < n; from += 5000) {
                int to = from + 5000 < n ? from + 5000 : n;
                size_t len = (size_t) snprintf(buf, cap,
                                               "[ Command = \"Submit\"; RequestId = %" PRId64 "; SubmitId = \"%s\"; "
                                               "Cluster = [ %s ]; Procs = {",
                                               rid, sid, submit_cluster);
                for (int i = from; i < to; i++) {
                        memcpy(buf + len, i > from ? ", []" : " []", i > from ? 4 : 3);
                        len += i > from ? 4 : 3;
                }
                len += (size_t) snprintf(buf + len, cap - len, " }; More = %s ]", to < n ? "true" : "false");
                ok = glean_frame_write(fd, buf, len, 5000) >= 0;
        }
        free(buf);
        return ok;
}

/* A submission of 20,000 procs is taken in slices: a Query sent after its
 * last part is answered before it, and finds none of its jobs; a repeat
 * of its SubmitId meanwhile waits and gets the same cluster, Repeated;
 * the jobs are all there at the end (item 10). */
static void test_submit_in_slices(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_INTERVAL = 300\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        int fd = user_connect(&r), other = user_connect(&r), again = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0 && other >= 0 && again >= 0);
        static const char sid[] = "slices-test-0123456789";
        CU_ASSERT_FATAL(raw_submit_parts(fd, 1, 20000, sid));
        static const char query[] = "[ Command = \"Query\"; RequestId = 2; Ids = \"1\"; Attrs = \"ProcId\" ]";
        CU_ASSERT_FATAL(glean_frame_write(other, query, sizeof query - 1, 5000) >= 0);
        CU_ASSERT_FATAL(raw_submit_parts(again, 3, 20000, sid));
        /* The Query's answer comes while the submission is being taken. */
        ClassAd *q = NULL, *sub = NULL;
        GleanCommand cmd;
        char why[256];
        CU_ASSERT_FATAL(glean_msg_recv(other, 10000, &q, &cmd, why, sizeof why) >= 0);
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        bool sub_ready = poll(&pfd, 1, 0) > 0;
        GLEAN_TEST_CHECK(!sub_ready, "the Submit was answered before the Query sent after it");
        char *qt = classad_unparse(q);
        GLEAN_TEST_CHECK(qt && !strstr(qt, "ProcId"), "the Query found jobs of the submission being taken: %s",
                         qt ? qt : "-");
        free(qt);
        classad_free(q);
        CU_ASSERT_FATAL(glean_msg_recv(fd, 30000, &sub, &cmd, why, sizeof why) >= 0);
        CU_ASSERT(reply_ok(sub));
        CU_ASSERT_EQUAL(ad_int(sub, "ClusterId"), 1);
        CU_ASSERT_EQUAL(ad_int(sub, "NumProcs"), 20000);
        classad_free(sub);
        ClassAd *rep = NULL;
        CU_ASSERT_FATAL(glean_msg_recv(again, 30000, &rep, &cmd, why, sizeof why) >= 0);
        bool repeated = false;
        classad_eval_bool(rep, "Repeated", MODE, &repeated);
        GLEAN_TEST_CHECK(reply_ok(rep) && ad_int(rep, "ClusterId") == 1 && repeated,
                         "the repeat waited for the first and got its cluster, Repeated");
        classad_free(rep);
        ClassAd *j = user_job(other, 1, 19999);
        GLEAN_TEST_CHECK(j != NULL, "job 1.19999 is in the queue");
        classad_free(j);
        j = user_job(other, 2, 0);
        GLEAN_TEST_CHECK(j == NULL, "the repeat queued nothing of its own");
        classad_free(j);
        close(fd);
        close(other);
        close(again);
        rig_done(&r, false);
}

/* ---- many connections (item 16) ---- */

static void test_many_connections(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_MAX_CONNECTIONS_PER_USER = 1000\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        enum { N = 300 };
        int fds[N];
        for (int i = 0; i < N; i++)
                fds[i] = user_connect(&r);
        for (int i = 0; i < N; i += 2) {
                close(fds[i]);
                fds[i] = -1;
        }
        int served = 0, want = 0;
        for (int i = N - 1; i >= 0; i--) {
                if (fds[i] < 0)
                        continue;
                want++;
                ClassAd *m = user_call(fds[i], "[ Command = \"QuerySlots\"; RequestId = 4 ]");
                served += reply_ok(m);
                classad_free(m);
        }
        GLEAN_TEST_CHECK(served == want && want == N / 2, "the %d connections left are served: %d", want, served);
        for (int i = 0; i < N; i++)
                if (fds[i] >= 0)
                        close(fds[i]);
        /* An agent's new connection replaces its old one, which closes; the new one is its. */
        Agent a, b;
        CU_ASSERT_FATAL(agent_connect(&a, &r, "twice"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        CU_ASSERT_FATAL(agent_connect(&b, &r, "twice"));
        GleanCommand cmd;
        ClassAd *m = agent_recv(&a, 3000, &cmd);
        GLEAN_TEST_CHECK(!m, "the old connection of the agent is closed");
        classad_free(m);
        agent_slot(&b, "slot1", "Unclaimed", "Idle", NULL);
        int fd = user_connect(&r);
        int64_t cluster = fd >= 0 ? user_submit(fd, 1) : -1;
        CU_ASSERT(cluster > 0);
        ClassAd *req = agent_expect(&b, GLEAN_CMD_REQUEST_CLAIM, 10);
        GLEAN_TEST_CHECK(req != NULL, "the job is matched to the agent on its new connection");
        classad_free(req);
        if (fd >= 0)
                close(fd);
        agent_close(&a);
        agent_close(&b);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "the descriptors run out", test_out_of_descriptors },
        { "caps per user and per address", test_caps },
        { "idle timeout", test_idle_timeout },
        { "junk from an agent's address", test_junk_then_agent },
        { "Waits per user", test_waits_limit },
        { "a big submit taken in slices", test_submit_in_slices },
        { "a client that does not read", test_reader_that_does_not_read },
        { "many connections", test_many_connections },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator limits", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        if (geteuid() != 0)
                return glean_test_skip("needs root (connections as other users)");
        return glean_test_main(argc, argv, suites);
}

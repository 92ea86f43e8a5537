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
 *     it and removes the sandbox; an agent killed -9 while the job runs
 *     and started again re-adopts it and still sends its output.
 *
 * Needs root (jobs of another user, the sandbox given to it): skipped
 * otherwise.
 */
#define _GNU_SOURCE

#include <arpa/inet.h>
#include <dirent.h>
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


/* ---- the execute side, the test serving the files ---- */

#define TID "00112233445566778899aabbccddeeff"

static int listen_port(int *ret_port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0 || bind(fd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(fd, 8) < 0 ||
            getsockname(fd, (struct sockaddr *) &sa, &len) < 0)
                return -1;
        *ret_port = ntohs(sa.sin_port);
        return fd;
}

static bool read_exact(int fd, void *buf, size_t n) {
        for (size_t off = 0; off < n;) {
                ssize_t k = read(fd, (char *) buf + off, n - off);
                if (k <= 0)
                        return false;
                off += (size_t) k;
        }
        return true;
}

/* The submit agent's part, in a child: sessions connections accepted on
 * lfd, each preamble read exactly, then xfer_serve as nobody (answer:
 * else the connection is held silent for a minute). Exits 0 when every
 * session succeeded. */
static pid_t serve(int lfd, const GleanPoolKey *key, const ClassAd *job, int sessions, bool answer) {
        pid_t pid = fork();
        if (pid != 0)
                return pid;
        int bad = 0;
        for (int i = 0; i < sessions; i++) {
                int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                unsigned char h[4];
                char pre[128] = "";
                if (fd < 0 || !read_exact(fd, h, 4) || h[3] >= sizeof pre || !read_exact(fd, pre, h[3]))
                        _exit(10);
                char id[XFER_ID_LEN + 1];
                if (xfer_preamble_parse(pre, h[3], id) < 0 || strcmp(id, TID) != 0)
                        _exit(11);
                if (!answer) {
                        sleep(60);
                        _exit(0);
                }
                XferJob *xj = NULL;
                GleanUserCred cred;
                char why[256];
                if (xfer_job_from_ad(job, 0, 0, &xj, why, sizeof why) < 0 || glean_user_cred("nobody", &cred) < 0)
                        _exit(12);
                XferResult res;
                bad += xfer_serve(fd, key, xj, &cred, 30000, &res) < 0;
                xfer_job_free(xj);
                close(fd);
        }
        _exit(bad ? 13 : 0);
}

static void key_hex(const GleanPoolKey *key, char *buf) {
        for (size_t i = 0; i < sizeof key->bytes; i++)
                sprintf(buf + 2 * i, "%02x", key->bytes[i]);
}

/* ActivateClaim of id with Transfer to port. */
static ClassAd *activate_transfer(int fd, const char *id, const ClassAd *job, const GleanPoolKey *key, int port) {
        ClassAd *m = NULL, *t = NULL;
        char hex[2 * sizeof key->bytes + 1], addr[32];
        key_hex(key, hex);
        snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
        glean_msg_new(GLEAN_CMD_ACTIVATE_CLAIM, &m);
        classad_set_string(m, "ClaimId", id);
        glean_msg_set_ad(m, "JobAd", job);
        classad_new(&t);
        classad_set_string(t, "TransferId", TID);
        classad_set_string(t, "TransferKey", hex);
        classad_set_string(t, "Address", addr);
        glean_msg_set_ad(m, "Transfer", t);
        classad_free(t);
        ClassAd *r = call(fd, m);
        classad_free(m);
        return r;
}

static ClassAd *transfer_job(const Pool *p) {
        return job_ad(p, "/bin/sh", "-c 'cat in.txt > copy.txt; pwd > where.txt; echo out'",
                      "ShouldTransferFiles = \"YES\"; TransferExecutable = false; TransferInput = \"in.txt\"");
}

static size_t sandboxes(const Pool *p) {
        char dir[256];
        snprintf(dir, sizeof dir, "%s/execute", p->dir);
        DIR *d = opendir(dir);
        size_t n = 0;
        struct dirent *e;
        while (d && (e = readdir(d)))
                n += strncmp(e->d_name, "dir_", 4) == 0;
        if (d)
                closedir(d);
        return n;
}

static void test_execute_round_trip(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_start(&p, NULL));
        char path[256], why[512];
        snprintf(path, sizeof path, "%s/in.txt", p.jobs);
        write_file(path, "the input\n");
        int port, lfd = listen_port(&port);
        CU_ASSERT_FATAL(lfd >= 0);
        GleanPoolKey key;
        CU_ASSERT_FATAL(glean_pool_key_generate(&key) == 0);
        ClassAd *job = transfer_job(&p);
        pid_t side = serve(lfd, &key, job, 2, true);
        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(ok_why(claim(fd, "slot1", "transfer-claim-0001", job), why, sizeof why));
        ClassAd *r = activate_transfer(fd, "transfer-claim-0001", job, &key, port);
        bool transferring = false;
        if (r)
                classad_eval_bool(r, "TransferringInput", CA_MODE_OLD, &transferring);
        GLEAN_TEST_CHECK(ok_why(r, why, sizeof why) && transferring, "activate: %s", why);
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 30, NULL, 0, 0);
        CU_ASSERT_FATAL(ex != NULL);
        int64_t code = -1, sent = -1, recvd = -1;
        classad_eval_int(ex, "ExitCode", CA_MODE_OLD, &code);
        classad_eval_int(ex, "BytesSent", CA_MODE_OLD, &sent);
        classad_eval_int(ex, "BytesRecvd", CA_MODE_OLD, &recvd);
        GLEAN_TEST_CHECK(code == 0 && sent == 10 && recvd > 0, "JobExit: code %lld, sent %lld, received %lld",
                         (long long) code, (long long) sent, (long long) recvd);
        GLEAN_TEST_CHECK(!classad_has(ex, "HoldReasonCode"), "a hold code in a run that went well");
        classad_free(ex);
        int status = -1;
        waitpid(side, &status, 0);
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the serving side: %d", status);
        char *copy = NULL, *where = NULL, *out = NULL;
        snprintf(path, sizeof path, "%s/copy.txt", p.jobs);
        glean_test_read_file(path, &copy, NULL);
        snprintf(path, sizeof path, "%s/where.txt", p.jobs);
        glean_test_read_file(path, &where, NULL);
        snprintf(path, sizeof path, "%s/out.txt", p.jobs);
        glean_test_read_file(path, &out, NULL);
        char want[256];
        snprintf(want, sizeof want, "%s/execute/dir_slot1_", p.dir);
        GLEAN_TEST_CHECK(copy && strcmp(copy, "the input\n") == 0, "copy.txt: %s", copy ? copy : "(none)");
        GLEAN_TEST_CHECK(where && strncmp(where, want, strlen(want)) == 0, "ran in %s", where ? where : "(?)");
        GLEAN_TEST_CHECK(out && strcmp(out, "out\n") == 0, "out.txt: %s", out ? out : "(none)");
        GLEAN_TEST_CHECK(sandboxes(&p) == 0, "the sandbox is still there");
        free(copy);
        free(where);
        free(out);
        classad_free(job);
        close(fd);
        close(lfd);
        pool_stop(&p);
}

static void test_execute_input_missing(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_start(&p, NULL));
        char why[512];
        int port, lfd = listen_port(&port);
        GleanPoolKey key;
        CU_ASSERT_FATAL(lfd >= 0 && glean_pool_key_generate(&key) == 0);
        ClassAd *job = transfer_job(&p); /* no in.txt in Iwd */
        pid_t side = serve(lfd, &key, job, 1, true);
        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(ok_why(claim(fd, "slot1", "transfer-claim-0002", job), why, sizeof why));
        CU_ASSERT(ok_why(activate_transfer(fd, "transfer-claim-0002", job, &key, port), why, sizeof why));
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 30, NULL, 0, 0);
        CU_ASSERT_FATAL(ex != NULL);
        int64_t code = 0;
        bool hold = false;
        classad_eval_int(ex, "HoldReasonCode", CA_MODE_OLD, &code);
        classad_eval_bool(ex, "Hold", CA_MODE_OLD, &hold);
        char *reason = ad_string(ex, "HoldReason");
        GLEAN_TEST_CHECK(hold && code == 13 && strstr(reason, "in.txt"), "held %d, code %lld: %s", hold,
                         (long long) code, reason);
        free(reason);
        classad_free(ex);
        waitpid(side, NULL, 0);
        GLEAN_TEST_CHECK(sandboxes(&p) == 0, "the sandbox is still there");
        classad_free(job);
        close(fd);
        close(lfd);
        pool_stop(&p);
}

static void test_execute_unreachable(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_start(&p, NULL));
        char why[512];
        GleanPoolKey key;
        CU_ASSERT_FATAL(glean_pool_key_generate(&key) == 0);
        ClassAd *job = transfer_job(&p);
        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(ok_why(claim(fd, "slot1", "transfer-claim-0003", job), why, sizeof why));
        time_t t0 = time(NULL);
        CU_ASSERT(ok_why(activate_transfer(fd, "transfer-claim-0003", job, &key, free_port()), why, sizeof why));
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 40, NULL, 0, 0);
        CU_ASSERT_FATAL(ex != NULL);
        time_t dt = time(NULL) - t0;
        char *reason = ad_string(ex, "Reason");
        GLEAN_TEST_CHECK(strstr(reason, "failed 4 times") && !classad_has(ex, "HoldReasonCode"),
                         "JobExit Reason: %s", reason);
        GLEAN_TEST_CHECK(dt >= 20 && dt <= 26, "given up after %lld s (1 + 4 + 16 of back-off)", (long long) dt);
        printf("\n    unreachable: given up after %lld s: %s\n", (long long) dt, reason);
        free(reason);
        classad_free(ex);
        GLEAN_TEST_CHECK(sandboxes(&p) == 0, "the sandbox is still there");
        classad_free(job);
        close(fd);
        pool_stop(&p);
}

static void test_execute_vacate_during_input(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_start(&p, NULL));
        char why[512];
        int port, lfd = listen_port(&port);
        GleanPoolKey key;
        CU_ASSERT_FATAL(lfd >= 0 && glean_pool_key_generate(&key) == 0);
        ClassAd *job = transfer_job(&p);
        pid_t side = serve(lfd, &key, job, 1, false); /* accepts, never answers */
        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(ok_why(claim(fd, "slot1", "transfer-claim-0004", job), why, sizeof why));
        CU_ASSERT(ok_why(activate_transfer(fd, "transfer-claim-0004", job, &key, port), why, sizeof why));
        GLEAN_TEST_CHECK(wait_log(&p, 5, "fetching the job's input", NULL), "no fetch");
        sleep(1);
        GLEAN_TEST_CHECK(sandboxes(&p) == 1, "no sandbox while the input travels");
        ClassAd *sad = slot_ad(&p, "slot1");
        bool ti = false;
        char *state = ad_string(sad, "State"), *act = ad_string(sad, "Activity");
        GLEAN_TEST_CHECK(sad && classad_eval_bool(sad, "TransferringInput", CA_MODE_OLD, &ti) >= 0 && ti,
                         "no TransferringInput = true in the slot ad");
        GLEAN_TEST_CHECK(strcmp(state, "Claimed") == 0 && strcmp(act, "Busy") == 0, "the slot is %s/%s", state, act);
        free(state);
        free(act);
        classad_free(sad);
        ClassAd *v = NULL;
        glean_msg_new(GLEAN_CMD_VACATE, &v);
        CU_ASSERT(ok_why(call(fd, v), why, sizeof why));
        classad_free(v);
        ClassAd *ex = wait_msg(fd, GLEAN_CMD_JOB_EXIT, 15, NULL, 0, 0);
        CU_ASSERT_FATAL(ex != NULL);
        char *reason = ad_string(ex, "Reason");
        GLEAN_TEST_CHECK(strstr(reason, "during the transfer of its input"), "JobExit Reason: %s", reason);
        free(reason);
        classad_free(ex);
        GLEAN_TEST_CHECK(sandboxes(&p) == 0, "the sandbox is still there after the vacate");
        kill(side, SIGKILL);
        waitpid(side, NULL, 0);
        classad_free(job);
        close(fd);
        close(lfd);
        pool_stop(&p);
}


/* The agent killed (-9) while its transferring job runs, started again on
 * the same EXECUTE: it re-adopts the job and still sends its output. */
static void test_execute_restart(void) {
        Pool p;
        CU_ASSERT_TRUE_FATAL(pool_start(&p, NULL));
        char path[512], why[512], old[sizeof p.dir], extra[300];
        snprintf(old, sizeof old, "%s", p.dir);
        snprintf(path, sizeof path, "%s/in.txt", p.jobs);
        write_file(path, "the input\n");
        int port, lfd = listen_port(&port);
        GleanPoolKey key;
        CU_ASSERT_FATAL(lfd >= 0 && glean_pool_key_generate(&key) == 0);
        ClassAd *job = job_ad(&p, "/bin/sh", "-c 'sleep 4; cat in.txt > copy.txt'",
                              "ShouldTransferFiles = \"YES\"; TransferExecutable = false; TransferInput = \"in.txt\"");
        pid_t side = serve(lfd, &key, job, 2, true);
        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(ok_why(claim(fd, "slot1", "transfer-claim-0005", job), why, sizeof why));
        CU_ASSERT(ok_why(activate_transfer(fd, "transfer-claim-0005", job, &key, port), why, sizeof why));
        close(fd);
        snprintf(path, sizeof path, "%s/execute/.glean-state/slot1.ad", old);
        bool recorded = false;
        for (int i = 0; i < 100 && !recorded; i++) {
                recorded = access(path, F_OK) == 0;
                if (!recorded)
                        usleep(50000);
        }
        if (!GLEAN_TEST_CHECK(recorded, "the job was never recorded"))
                goto out;
        int status;
        kill(p.pid, SIGKILL);
        waitpid(p.pid, &status, 0);
        pool_exited(&p, status);
        Pool q;
        snprintf(extra, sizeof extra, "EXECUTE = %s/execute\n", old);
        if (!GLEAN_TEST_CHECK(pool_start(&q, extra), "the agent again"))
                goto out;
        GLEAN_TEST_CHECK(wait_log(&q, 10, "re-adopted", NULL), "the job was not re-adopted");
        char *copy = NULL;
        snprintf(path, sizeof path, "%s/copy.txt", p.jobs);
        for (int i = 0; i < 200 && !copy; i++) {
                if (glean_test_read_file(path, &copy, NULL) < 0)
                        copy = NULL;
                if (!copy)
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(copy && strcmp(copy, "the input\n") == 0, "the output after the restart: %s",
                         copy ? copy : "(none)");
        free(copy);
        waitpid(side, &status, 0);
        side = 0;
        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the serving side: %d", status);
        GLEAN_TEST_CHECK(sandboxes(&q) == 0, "the sandbox is still there");
        pool_stop(&q);
out:
        if (side > 0) {
                kill(side, SIGKILL);
                waitpid(side, NULL, 0);
        }
        classad_free(job);
        close(lfd);
        remove_dir(old);
}

static CU_TestInfo execute_tests[] = {
        { "input in, the job in its sandbox, output back, JobExit with the bytes", test_execute_round_trip },
        { "an input missing: JobExit holds with 13", test_execute_input_missing },
        { "a submit side that cannot be reached: four tries, then a Reason", test_execute_unreachable },
        { "a Vacate during the input's transfer: killed, the sandbox removed", test_execute_vacate_during_input },
        { "the agent killed and started again while the job runs: re-adopted, its output still sent",
          test_execute_restart },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "listener", NULL, NULL, NULL, NULL, listener_tests },
        { "execute", NULL, NULL, NULL, NULL, execute_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (geteuid() != 0)
                return glean_test_skip("needs root (jobs of another user, their sandboxes)");
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-upstream.c — the agent's connection to the central manager: the
 * real glean-agent (fork executor, private socket and directories) dials a
 * fake central manager inside the test (a TCP listener on 127.0.0.1 with
 * the sealed transport's blocking helpers). The handshake, Hello and the
 * SlotUpdate of every slot; a claim and a job run through the connection
 * and its JobExit; the connection dropped while a job runs, the job ending
 * meanwhile, the reconnection re-advertising the claim (ClaimId) and
 * delivering the JobExit, the claim kept alive after it; exits sent again
 * on each new connection, in order, until the manager acknowledges them
 * (its Reply to their RequestId), never after; a manager with
 * another pool key (logged, retried, nothing claimed); users' requests
 * relayed (RelayUser from SO_PEERCRED, replies in pieces) and refused when
 * there is no manager; multi-part Submits kept until their last part (no
 * client waits behind another), a stalled series dropped after
 * RELAY_SUBMIT_TIMEOUT, one past RELAY_SUBMIT_MAX_BYTES or whose client
 * left dropped too, the upstream connection kept. STARTD_NAME: the
 * slots named slotN@name@machine in their ads and in what the agent says
 * of them, the Hello naming the machine.
 *
 * The binaries: $GLEAN_AGENT (set by make check to the flavour being
 * tested), else build/bin/glean-agent.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>

#include "agent-test.h"
#include "common/secure.h"

/* ---- a fake central manager ---- */

typedef struct Manager {
        char dir[64];
        char key_path[128];
        GleanPoolKey key;
        int lfd;                /* listening on 127.0.0.1:port */
        unsigned port;
        int fd;                 /* the agent's connection, -1 when none */
        GleanSecure *s;
        ClassAd *backlog[256];  /* messages received while waiting for another */
        size_t n_backlog;
        int64_t next_id;
} Manager;

static bool mgr_open(Manager *m) {
        memset(m, 0, sizeof *m);
        m->fd = -1;
        m->next_id = 1000;
        snprintf(m->dir, sizeof m->dir, "/tmp/glean-upstream-test-XXXXXX");
        if (!mkdtemp(m->dir))
                return false;
        snprintf(m->key_path, sizeof m->key_path, "%s/pool.key", m->dir);
        char why[256];
        if (glean_pool_key_generate(&m->key) < 0 ||
            glean_pool_key_save(m->key_path, &m->key, false, why, sizeof why) < 0)
                return false;
        m->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof sa;
        if (m->lfd < 0 || bind(m->lfd, (struct sockaddr *) &sa, sizeof sa) < 0 || listen(m->lfd, 16) < 0 ||
            getsockname(m->lfd, (struct sockaddr *) &sa, &len) < 0)
                return false;
        m->port = ntohs(sa.sin_port);
        return true;
}

static void mgr_drop(Manager *m) {
        glean_secure_free(m->s);
        m->s = NULL;
        if (m->fd >= 0)
                close(m->fd);
        m->fd = -1;
        for (size_t i = 0; i < m->n_backlog; i++)
                classad_free(m->backlog[i]);
        m->n_backlog = 0;
}

static void mgr_close(Manager *m) {
        mgr_drop(m);
        if (m->lfd >= 0)
                close(m->lfd);
        remove_dir(m->dir);
}

/* The configuration that points an agent at m. */
static char *mgr_config(const Manager *m, const char *extra) {
        char *text = NULL;
        if (asprintf(&text,
                     "AGENT_EXECUTOR = fork\nCOLLECTOR_HOST = 127.0.0.1:%u\nPOOL_KEY_FILE = %s\n"
                     "NEGOTIATOR_RECONNECT_MAX = 2\n%s",
                     m->port, m->key_path, extra ? extra : "") < 0)
                return NULL;
        return text;
}

/* The next TCP connection within seconds (0 when none came). */
static int mgr_accept_tcp(Manager *m, int seconds) {
        struct pollfd p = { .fd = m->lfd, .events = POLLIN };
        if (poll(&p, 1, seconds * 1000) <= 0)
                return 0;
        mgr_drop(m);
        m->fd = accept4(m->lfd, NULL, NULL, SOCK_CLOEXEC);
        return m->fd >= 0 ? 1 : -errno;
}

/* Accepts the agent and runs the sealed handshake with key (m's own when
 * NULL): 0, or its error (why says it). */
static int mgr_accept(Manager *m, const GleanPoolKey *key, int seconds, char *why, size_t whylen) {
        snprintf(why, whylen, "no connection within %d s", seconds);
        int r = mgr_accept_tcp(m, seconds);
        if (r <= 0)
                return r < 0 ? r : -ETIMEDOUT;
        return glean_secure_handshake(m->fd, GLEAN_SECURE_NEGOTIATOR, GLEAN_SECURE_POOL_AUTH(key ? key : &m->key), 5000, &m->s, why, whylen);
}

static bool mgr_send(Manager *m, const ClassAd *msg) {
        char *text = classad_unparse(msg);
        int r = text ? glean_secure_send(m->s, m->fd, text, strlen(text), 5000) : -ENOMEM;
        free(text);
        return r >= 0;
}

/* The next message from the agent within ms (NULL: none, or the connection failed). */
static ClassAd *mgr_recv(Manager *m, int ms, GleanCommand *ret_cmd) {
        char *payload = NULL;
        size_t len = 0;
        if (!m->s || glean_secure_recv(m->s, m->fd, ms, &payload, &len) < 0)
                return NULL;
        ClassAd *ad = NULL;
        char why[256];
        int r = glean_msg_parse(payload, len, &ad, ret_cmd, why, sizeof why);
        GLEAN_TEST_CHECK(r >= 0, "the agent sent an invalid message: %s: %s", why, payload);
        free(payload);
        return r >= 0 ? ad : NULL;
}

static bool is_cmd(const ClassAd *ad, GleanCommand want) {
        char *name = ad_string(ad, "Command");
        GleanCommand c;
        bool ok = glean_command_from_name(name, &c) >= 0 && c == want;
        free(name);
        return ok;
}

static bool has_string(const ClassAd *ad, const char *attr, const char *want) {
        char *v = ad_string(ad, attr);
        bool ok = strcmp(v, want) == 0;
        free(v);
        return ok;
}

/* The next message cmd (with attr = want when attr is set), from the
 * backlog first; others are kept in the backlog. */
static ClassAd *mgr_wait(Manager *m, GleanCommand cmd, const char *attr, const char *want, int seconds) {
        for (size_t i = 0; i < m->n_backlog; i++)
                if (is_cmd(m->backlog[i], cmd) && (!attr || has_string(m->backlog[i], attr, want))) {
                        ClassAd *ad = m->backlog[i];
                        memmove(m->backlog + i, m->backlog + i + 1, (m->n_backlog - i - 1) * sizeof *m->backlog);
                        m->n_backlog--;
                        return ad;
                }
        time_t end = time(NULL) + seconds;
        while (time(NULL) <= end) {
                GleanCommand c;
                ClassAd *ad = mgr_recv(m, 500, &c);
                if (!ad) {
                        if (!m->s || glean_secure_error(m->s) < 0)
                                return NULL;
                        continue;
                }
                if (c == cmd && (!attr || has_string(ad, attr, want)))
                        return ad;
                if (m->n_backlog < sizeof m->backlog / sizeof *m->backlog)
                        m->backlog[m->n_backlog++] = ad;
                else
                        classad_free(ad);
        }
        return NULL;
}

/* Sends msg with a RequestId and returns the agent's Reply to it. */
static ClassAd *mgr_call(Manager *m, ClassAd *msg) {
        char id[32];
        snprintf(id, sizeof id, "%lld", (long long) ++m->next_id);
        classad_set_int(msg, "RequestId", m->next_id);
        if (!mgr_send(m, msg))
                return NULL;
        for (time_t end = time(NULL) + 10; time(NULL) <= end;) {
                ClassAd *r = mgr_wait(m, GLEAN_CMD_REPLY, NULL, NULL, 1);
                int64_t rid = 0;
                if (r && classad_eval_int(r, "RequestId", CA_MODE_OLD, &rid) >= 0 && rid == m->next_id)
                        return r;
                classad_free(r);
        }
        return NULL;
}

static ClassAd *mgr_claim_cmd(Manager *m, GleanCommand c, const char *slot, const char *id, const ClassAd *job) {
        ClassAd *msg = NULL;
        glean_msg_new(c, &msg);
        if (slot)
                classad_set_string(msg, "Slot", slot);
        classad_set_string(msg, "ClaimId", id);
        if (job)
                glean_msg_set_ad(msg, "JobAd", job);
        ClassAd *r = mgr_call(m, msg);
        classad_free(msg);
        return r;
}

/* Handshake done: the agent's Hello, ours back, then a SlotUpdate of each
 * of the n slots (returned in slots[], by name order slot1, slot2, ...). */
static bool mgr_greet(Manager *m, ClassAd **slots, size_t n) {
        GleanCommand c;
        ClassAd *hello = mgr_recv(m, 5000, &c);
        char *peer = ad_string(hello, "Peer"), *machine = ad_string(hello, "Machine");
        int64_t version = 0, started = 0;
        if (hello) {
                classad_eval_int(hello, "ProtocolVersion", CA_MODE_OLD, &version);
                classad_eval_int(hello, "AgentStartTime", CA_MODE_OLD, &started);
        }
        bool ok = GLEAN_TEST_CHECK(hello && c == GLEAN_CMD_HELLO && strcmp(peer, "glean-agent") == 0 &&
                                           *machine && version == GLEAN_PROTOCOL_VERSION &&
                                           started > time(NULL) - 600 && started <= time(NULL),
                                   "the agent's Hello: Peer %s, Machine %s, version %lld, AgentStartTime %lld", peer,
                                   machine, (long long) version, (long long) started);
        free(peer);
        free(machine);
        classad_free(hello);
        if (!ok)
                return false;
        ClassAd *ours = NULL;
        glean_hello_new("glean-negotiator", &ours);
        ok = mgr_send(m, ours);
        classad_free(ours);
        for (size_t i = 0; i < n && ok; i++) {
                ClassAd *u = mgr_recv(m, 5000, &c);
                ClassAd *ad = NULL;
                char want[32];
                snprintf(want, sizeof want, "slot%zu@", i + 1);
                char *name = NULL;
                if (u && c == GLEAN_CMD_SLOT_UPDATE && glean_msg_get_ad(u, "SlotAd", &ad) >= 0)
                        name = ad_string(ad, "Name");
                ok = GLEAN_TEST_CHECK(name && strncmp(name, want, strlen(want)) == 0,
                                      "SlotUpdate %zu of the greeting: %s", i + 1, name ? name : "none");
                free(name);
                classad_free(ad);
                if (slots)
                        slots[i] = u;
                else
                        classad_free(u);
        }
        return ok;
}

static ClassAd *shell_job(const Pool *p, const char *script) {
        char args[256];
        snprintf(args, sizeof args, "-c '%s'", script);
        return job_ad(p, "/bin/sh", args, NULL);
}

static int64_t int_of(const ClassAd *ad, const char *attr) {
        int64_t v = -1;
        if (ad)
                classad_eval_int(ad, attr, CA_MODE_OLD, &v);
        return v;
}

/* The Reply of a manager that took msg (a JobExit, the end of a claim). */
static bool mgr_ack(Manager *m, const ClassAd *msg) {
        ClassAd *r = NULL;
        bool ok = glean_msg_reply(msg, true, NULL, &r) >= 0 && mgr_send(m, r);
        classad_free(r);
        return ok;
}

static bool start_pair(Manager *m, Pool *p, const char *extra) {
        if (!GLEAN_TEST_CHECK(mgr_open(m), "the fake central manager: %s", strerror(errno)))
                return false;
        char *conf = mgr_config(m, extra);
        bool ok = conf && pool_start(p, conf);
        free(conf);
        if (!ok)
                mgr_close(m);
        return ok;
}

/* ---- tests ---- */

static void test_connect_and_run(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        int r = mgr_accept(&m, NULL, 10, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "handshake: %s", why);
        ClassAd *slots[2] = { 0 };
        CU_ASSERT_FATAL(mgr_greet(&m, slots, 2));
        for (size_t i = 0; i < 2; i++) {
                GLEAN_TEST_CHECK(slots[i] && !classad_has(slots[i], "ClaimId"), "an unclaimed slot has no ClaimId");
                classad_free(slots[i]);
        }
        GLEAN_TEST_CHECK(wait_log(&p, 5, "connected to the central manager at 127.0.0.1:", "advertising 2 slots"),
                         "no log record of the connection");

        /* A claim and a job through the connection, as the central manager (root) does. */
        const char *id = "upstream-claim-000001";
        ClassAd *job = shell_job(&p, "exit 3");
        r = ok_why(mgr_claim_cmd(&m, GLEAN_CMD_REQUEST_CLAIM, "slot1", id, job), why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r, "RequestClaim: %s", why);
        r = ok_why(mgr_claim_cmd(&m, GLEAN_CMD_ACTIVATE_CLAIM, NULL, id, job), why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r, "ActivateClaim: %s", why);
        ClassAd *ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", id, 10);
        bool sig = true;
        if (ex)
                classad_eval_bool(ex, "ExitBySignal", CA_MODE_OLD, &sig);
        GLEAN_TEST_CHECK(ex && !sig && int_of(ex, "ExitCode") == 3, "JobExit: %s", ex ? "not ExitCode 3" : "none");
        classad_free(ex);
        /* The slot's updates name the claim, beside the ad (which does not). */
        ClassAd *u = mgr_wait(&m, GLEAN_CMD_SLOT_UPDATE, "ClaimId", id, 10);
        ClassAd *ad = NULL;
        GLEAN_TEST_CHECK(u && glean_msg_get_ad(u, "SlotAd", &ad) >= 0 && !classad_has(ad, "ClaimId") &&
                                 has_string(ad, "State", "Claimed"),
                         "a SlotUpdate of the claimed slot with its ClaimId");
        classad_free(ad);
        classad_free(u);
        /* The status of a slot, as the unix socket gives it. */
        ClassAd *st = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &st);
        classad_set_string(st, "Slot", "slot2");
        ClassAd *rep = mgr_call(&m, st);
        ClassAd **ads = NULL;
        size_t n = 0;
        GLEAN_TEST_CHECK(reply_ok(rep, NULL) && glean_msg_get_ad_list(rep, "Slots", &ads, &n) >= 0 && n == 1,
                         "Status over the connection");
        glean_ad_list_free(ads, n);
        classad_free(rep);
        classad_free(st);
        /* Shutdown is the machine's own business. */
        glean_msg_new(GLEAN_CMD_SHUTDOWN, &st);
        GLEAN_TEST_CHECK(!ok_why(mgr_call(&m, st), why, sizeof why) && strstr(why, "own machine"),
                         "Shutdown from the central manager: %s", why);
        classad_free(st);
        r = ok_why(mgr_claim_cmd(&m, GLEAN_CMD_RELEASE, NULL, id, NULL), why, sizeof why);
        GLEAN_TEST_CHECK(r, "Release: %s", why);
        wait_state(&p, "slot1", "Unclaimed/Idle", 5);
        classad_free(job);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

static void test_reconnect(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        const char *id = "upstream-claim-000002";
        ClassAd *job = shell_job(&p, "sleep 1; exit 5");
        GLEAN_TEST_CHECK_FATAL(ok_why(mgr_claim_cmd(&m, GLEAN_CMD_REQUEST_CLAIM, "slot1", id, job), why, sizeof why),
                               "RequestClaim: %s", why);
        GLEAN_TEST_CHECK_FATAL(ok_why(mgr_claim_cmd(&m, GLEAN_CMD_ACTIVATE_CLAIM, NULL, id, job), why, sizeof why),
                               "ActivateClaim: %s", why);
        /* The manager goes away while the job runs; the job ends meanwhile. */
        mgr_drop(&m);
        GLEAN_TEST_CHECK(wait_log(&p, 10, "lost the connection to the central manager at 127.0.0.1:",
                                  "the 1 claim it holds runs on under its lease"),
                         "no log record of the lost connection");
        GLEAN_TEST_CHECK(wait_log(&p, 10, "slot1: job exited with status 5", NULL), "the job did not end");
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "the claim survives the connection: %s", st);
        /* Back: the claim is re-advertised, then the JobExit kept for it comes. */
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake again: %s", why);
        ClassAd *slots[2] = { 0 };
        CU_ASSERT_FATAL(mgr_greet(&m, slots, 2));
        char *claim = ad_string(slots[0], "ClaimId");
        GLEAN_TEST_CHECK(strcmp(claim, id) == 0, "slot1's SlotUpdate after reconnection: ClaimId '%s'", claim);
        free(claim);
        classad_free(slots[0]);
        classad_free(slots[1]);
        GleanCommand c;
        ClassAd *ex = mgr_recv(&m, 5000, &c);
        char *exid = ad_string(ex, "ClaimId");
        GLEAN_TEST_CHECK(ex && c == GLEAN_CMD_JOB_EXIT && strcmp(exid, id) == 0 && int_of(ex, "ExitCode") == 5,
                         "after the re-advertisement, the JobExit kept: %s %s code %lld",
                         ex ? glean_command_name(c) : "nothing", exid, (long long) int_of(ex, "ExitCode"));
        free(exid);
        classad_free(ex);
        GLEAN_TEST_CHECK(log_line(&p, "connected to the central manager", "(1 of its claims), then 1 message kept", NULL),
                         "the reconnection's log record");
        /* The claim is the manager's as before. */
        GLEAN_TEST_CHECK(ok_why(mgr_claim_cmd(&m, GLEAN_CMD_KEEP_ALIVE, NULL, id, NULL), why, sizeof why),
                         "KeepAlive after reconnection: %s", why);
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Claimed/Idle") == 0, "after KeepAlive: %s", st);
        ClassAd *job2 = shell_job(&p, "exit 0");
        GLEAN_TEST_CHECK(ok_why(mgr_claim_cmd(&m, GLEAN_CMD_ACTIVATE_CLAIM, NULL, id, job2), why, sizeof why),
                         "the claim runs another job: %s", why);
        ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", id, 10);
        GLEAN_TEST_CHECK(ex && int_of(ex, "ExitCode") == 0, "its JobExit");
        classad_free(ex);
        classad_free(job);
        classad_free(job2);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* A claim whose lease ends while the manager is away: its job is killed,
 * and after the re-advertisement (the slot no longer claimed) the manager
 * hears of it as it would have then: the JobExit and the end of the claim. */
static void test_lease_ends_while_away(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        const char *id = "upstream-claim-000003";
        ClassAd *job = job_ad(&p, "/bin/sleep", "60", "JobLeaseDuration = 2;");
        GLEAN_TEST_CHECK_FATAL(ok_why(mgr_claim_cmd(&m, GLEAN_CMD_REQUEST_CLAIM, "slot1", id, job), why, sizeof why),
                               "RequestClaim: %s", why);
        GLEAN_TEST_CHECK_FATAL(ok_why(mgr_claim_cmd(&m, GLEAN_CMD_ACTIVATE_CLAIM, NULL, id, job), why, sizeof why),
                               "ActivateClaim: %s", why);
        mgr_drop(&m);
        GLEAN_TEST_CHECK(wait_state(&p, "slot1", "Unclaimed/Idle", 15), "the lease ends");
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake again: %s", why);
        ClassAd *slots[2] = { 0 };
        CU_ASSERT_FATAL(mgr_greet(&m, slots, 2));
        GLEAN_TEST_CHECK(!classad_has(slots[0], "ClaimId"), "slot1 is no longer claimed");
        classad_free(slots[0]);
        classad_free(slots[1]);
        GleanCommand c;
        ClassAd *ex = mgr_recv(&m, 5000, &c);
        char *reason = ad_string(ex, "Reason"), *exid = ad_string(ex, "ClaimId");
        GLEAN_TEST_CHECK(ex && c == GLEAN_CMD_JOB_EXIT && strcmp(exid, id) == 0 && strstr(reason, "lease"),
                         "the JobExit kept: %s, ClaimId %s, Reason %s", ex ? glean_command_name(c) : "nothing", exid,
                         reason);
        free(reason);
        free(exid);
        classad_free(ex);
        ClassAd *ev = mgr_wait(&m, GLEAN_CMD_EVENT, "ClaimId", id, 5);
        bool ended = false;
        if (ev)
                classad_eval_bool(ev, "ClaimEnded", CA_MODE_OLD, &ended);
        GLEAN_TEST_CHECK(ev && ended, "the end of the claim, kept");
        classad_free(ev);
        GLEAN_TEST_CHECK(!ok_why(mgr_claim_cmd(&m, GLEAN_CMD_KEEP_ALIVE, NULL, id, NULL), why, sizeof why) &&
                                 strstr(why, "no such claim"),
                         "KeepAlive of the ended claim: %s", why);
        classad_free(job);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* A job of p (exit code as its status) run under claim id on slot, as job 7.proc, start 1. */
static bool run_exit(Manager *m, Pool *p, const char *slot, const char *id, int64_t proc, int code, bool claim) {
        char script[32], why[512];
        snprintf(script, sizeof script, "exit %d", code);
        ClassAd *job = shell_job(p, script);
        classad_set_int(job, "ProcId", proc);
        classad_set_int(job, "NumJobStarts", 1);
        bool ok = true;
        if (claim)
                ok = GLEAN_TEST_CHECK(ok_why(mgr_claim_cmd(m, GLEAN_CMD_REQUEST_CLAIM, slot, id, job), why, sizeof why),
                                      "RequestClaim %s: %s", slot, why);
        if (ok)
                ok = GLEAN_TEST_CHECK(
                        ok_why(mgr_claim_cmd(m, GLEAN_CMD_ACTIVATE_CLAIM, NULL, id, job), why, sizeof why),
                        "ActivateClaim on %s: %s", slot, why);
        classad_free(job);
        return ok;
}

/* A JobExit for claim id with ExitCode code that names job 7.proc, start 1,
 * and carries a RequestId (returned in *ret_rid). */
static bool exit_is(const ClassAd *ex, const char *id, int64_t proc, int code, int64_t *ret_rid) {
        char *exid = ad_string(ex, "ClaimId");
        int64_t rid = int_of(ex, "RequestId");
        bool ok = GLEAN_TEST_CHECK(ex && strcmp(exid, id) == 0 && int_of(ex, "ExitCode") == code &&
                                           int_of(ex, "ClusterId") == 7 && int_of(ex, "ProcId") == proc &&
                                           int_of(ex, "NumJobStarts") == 1 && rid > 0,
                                   "a JobExit of claim %s, job 7.%lld, exit %d: %s, job %lld.%lld start %lld, exit "
                                   "%lld, RequestId %lld",
                                   id, (long long) proc, code, ex ? exid : "none", (long long) int_of(ex, "ClusterId"),
                                   (long long) int_of(ex, "ProcId"), (long long) int_of(ex, "NumJobStarts"),
                                   (long long) int_of(ex, "ExitCode"), (long long) rid);
        free(exid);
        if (ret_rid)
                *ret_rid = rid;
        return ok;
}

/* A JobExit the socket took is not delivered: the agent sends it again,
 * in order, on each new connection, after the slots, until the manager
 * acknowledges it; one acknowledged is never sent again. */
static void test_exit_until_acknowledged(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        const char *a = "upstream-claim-000004", *b = "upstream-claim-000005";
        /* Three exits: claim a's job 7.0 (not acknowledged), claim b's 7.1
         * (acknowledged), claim a's next job 7.2 (not acknowledged). */
        int64_t rid[3] = { 0 };
        CU_ASSERT_FATAL(run_exit(&m, &p, "slot1", a, 0, 3, true));
        ClassAd *ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", a, 10);
        CU_ASSERT(exit_is(ex, a, 0, 3, &rid[0]));
        classad_free(ex);
        CU_ASSERT_FATAL(run_exit(&m, &p, "slot2", b, 1, 4, true));
        ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", b, 10);
        CU_ASSERT(exit_is(ex, b, 1, 4, &rid[1]));
        CU_ASSERT(mgr_ack(&m, ex));
        classad_free(ex);
        CU_ASSERT_FATAL(run_exit(&m, &p, "slot1", a, 2, 5, false));
        ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", a, 10);
        CU_ASSERT(exit_is(ex, a, 2, 5, &rid[2]));
        classad_free(ex);
        GLEAN_TEST_CHECK(rid[0] != rid[1] && rid[1] != rid[2] && rid[0] != rid[2], "a RequestId each: %lld %lld %lld",
                         (long long) rid[0], (long long) rid[1], (long long) rid[2]);
        /* The acknowledgement is in before the connection goes: a request
         * sent after it is answered after it. */
        ClassAd *st = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &st);
        classad_free(mgr_call(&m, st));
        classad_free(st);

        /* The connection cut: after the slots, the two exits not
         * acknowledged, in order, under their RequestIds; not b's. */
        mgr_drop(&m);
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake again: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        GleanCommand c;
        ClassAd *first = mgr_recv(&m, 5000, &c);
        GLEAN_TEST_CHECK(first && c == GLEAN_CMD_JOB_EXIT, "right after the slots: %s",
                         first ? glean_command_name(c) : "nothing");
        ClassAd *second = mgr_recv(&m, 5000, &c);
        GLEAN_TEST_CHECK(second && c == GLEAN_CMD_JOB_EXIT, "then: %s", second ? glean_command_name(c) : "nothing");
        int64_t r0 = 0, r2 = 0;
        GLEAN_TEST_CHECK(exit_is(first, a, 0, 3, &r0) && r0 == rid[0], "the first exit again, first, RequestId %lld",
                         (long long) r0);
        GLEAN_TEST_CHECK(exit_is(second, a, 2, 5, &r2) && r2 == rid[2], "the third exit again, second, RequestId %lld",
                         (long long) r2);
        ClassAd *more = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, NULL, NULL, 2);
        GLEAN_TEST_CHECK(!more, "the acknowledged exit is not sent again");
        classad_free(more);
        /* Acknowledged now (the second first: any order), they are done with. */
        CU_ASSERT(mgr_ack(&m, second));
        CU_ASSERT(mgr_ack(&m, first));
        classad_free(first);
        classad_free(second);
        glean_msg_new(GLEAN_CMD_STATUS, &st);
        classad_free(mgr_call(&m, st));
        classad_free(st);
        mgr_drop(&m);
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "a third handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        more = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, NULL, NULL, 2);
        GLEAN_TEST_CHECK(!more, "nothing is sent again once acknowledged");
        classad_free(more);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* An exit not acknowledged outlives the agent: killed, and started again
 * on the same EXECUTE, it sends the exit after its slots, once. */
static void test_exit_outlives_agent(void) {
        Manager m;
        Pool p, q;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        const char *a = "upstream-claim-000006";
        CU_ASSERT_FATAL(run_exit(&m, &p, "slot1", a, 0, 9, true));
        ClassAd *ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", a, 10);
        int64_t rid = 0;
        CU_ASSERT(exit_is(ex, a, 0, 9, &rid));
        classad_free(ex);

        /* kill -9 before the acknowledgement */
        kill(p.pid, SIGKILL);
        waitpid(p.pid, NULL, 0);
        p.pid = 0;
        p.status = 0;
        mgr_drop(&m);
        char extra[600];
        snprintf(extra, sizeof extra, "EXECUTE = %s/execute\n", p.dir);
        char *conf = mgr_config(&m, extra);
        CU_ASSERT_FATAL(conf && pool_start(&q, conf));
        free(conf);
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake again: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        GleanCommand c;
        ClassAd *again = mgr_recv(&m, 5000, &c);
        GLEAN_TEST_CHECK(again && c == GLEAN_CMD_JOB_EXIT, "right after the slots of the new agent: %s",
                         again ? glean_command_name(c) : "nothing");
        CU_ASSERT(exit_is(again, a, 0, 9, NULL));
        CU_ASSERT(mgr_ack(&m, again));
        classad_free(again);
        ClassAd *st = NULL;
        glean_msg_new(GLEAN_CMD_STATUS, &st);
        classad_free(mgr_call(&m, st));
        classad_free(st);

        /* Acknowledged: a stop and another start send nothing again; a
         * file there that is not a ClassAd, or not an exit, is removed. */
        GLEAN_TEST_CHECK(pool_stop(&q) == 0, "the second agent exits 0 after SIGTERM");
        mgr_drop(&m);
        char junk[2][700];
        snprintf(junk[0], sizeof junk[0], "%s/execute/.glean-state/kept/00000000000000000098.ad", p.dir);
        snprintf(junk[1], sizeof junk[1], "%s/execute/.glean-state/kept/00000000000000000099.ad", p.dir);
        write_file(junk[0], "[ Command = \"JobExit\"; ");
        write_file(junk[1], "[ Command = \"Status\" ]");
        conf = mgr_config(&m, extra);
        CU_ASSERT_FATAL(conf && pool_start(&q, conf));
        free(conf);
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "a third handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        ClassAd *more = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, NULL, NULL, 2);
        GLEAN_TEST_CHECK(!more, "nothing is sent again once acknowledged");
        classad_free(more);
        for (size_t i = 0; i < 2; i++)
                GLEAN_TEST_CHECK(access(junk[i], F_OK) < 0, "%s is left", junk[i]);
        GLEAN_TEST_CHECK(pool_stop(&q) == 0, "the third agent exits 0 after SIGTERM");
        pool_stop(&p);
        mgr_close(&m);
}

static void test_wrong_key(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        GleanPoolKey other;
        CU_ASSERT_FATAL(glean_pool_key_generate(&other) >= 0);
        char why[512];
        int r = mgr_accept(&m, &other, 10, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EPERM, "a manager with another key: %d %s", r, why);
        /* The agent says why, and tries again (1 s +-50%, then 2 s at most). */
        GLEAN_TEST_CHECK(wait_log(&p, 5, "cannot connect to the central manager at 127.0.0.1:", "pool key"),
                         "no log record of the wrong key");
        r = mgr_accept(&m, &other, 10, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EPERM, "the agent's next attempt: %d %s", r, why);
        r = mgr_accept(&m, &other, 10, why, sizeof why);
        GLEAN_TEST_CHECK(r == -EPERM, "and the one after: %d %s", r, why);
        char st[64];
        slot_state(&p, "slot1", st, sizeof st);
        GLEAN_TEST_CHECK(strcmp(st, "Unclaimed/Idle") == 0, "nothing is claimed: %s", st);
        /* A central manager of version 1: its 44-byte HELLO. The agent
         * names both versions and does not go further. */
        r = mgr_accept_tcp(&m, 10);
        GLEAN_TEST_CHECK(r == 1, "the agent dials again: %d", r);
        if (r == 1) {
                unsigned char v1[4 + 44] = { 0,   0,   0,   44,  'G', 'L', 'E', 'A',
                                             'N', 'S', 'E', 'C', 1,   1,   GLEAN_SECURE_NEGOTIATOR };
                CU_ASSERT(write(m.fd, v1, sizeof v1) == (ssize_t) sizeof v1);
                GLEAN_TEST_CHECK(wait_log(&p, 5, "the negotiator speaks pool protocol version 1, this agent speaks 2",
                                          NULL),
                                 "no log record naming both versions");
        }
        /* With the right key it connects. */
        r = mgr_accept(&m, NULL, 10, why, sizeof why);
        GLEAN_TEST_CHECK(r == 0, "the right key: %s", why);
        GLEAN_TEST_CHECK(mgr_greet(&m, NULL, 2), "greeting");
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* A request of a local client, its Reply (or Replies) read back. */
static ClassAd *client_recv(int fd) {
        ClassAd *ad = NULL;
        GleanCommand c;
        char why[256];
        if (glean_msg_recv(fd, 5000, &ad, &c, why, sizeof why) < 0)
                return NULL;
        return ad;
}

static void test_relay(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));

        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(fd >= 0);
        ClassAd *q = NULL;
        glean_msg_new(GLEAN_CMD_QUERY, &q);
        classad_set_string(q, "Constraint", "JobStatus == 1");
        classad_set_string(q, "RelayUser", "mallory");
        classad_set_int(q, "RelayUid", 4242);
        classad_set_int(q, "RequestId", 77);
        CU_ASSERT_FATAL(glean_msg_send(fd, q, 5000) >= 0);
        classad_free(q);
        ClassAd *up = mgr_wait(&m, GLEAN_CMD_QUERY, NULL, NULL, 5);
        char *user = ad_string(up, "RelayUser"), *cons = ad_string(up, "Constraint");
        int64_t uid = int_of(up, "RelayUid"), rid = int_of(up, "RequestId");
        GLEAN_TEST_CHECK(up && strcmp(user, me()) == 0 && uid == (int64_t) getuid() && rid > 0 && rid != 77 &&
                                 strcmp(cons, "JobStatus == 1") == 0,
                         "the relayed Query: RelayUser %s RelayUid %lld RequestId %lld", user, (long long) uid,
                         (long long) rid);
        free(user);
        free(cons);
        classad_free(up);
        /* Two pieces back. */
        for (int i = 0; i < 2; i++) {
                ClassAd *r = NULL;
                glean_msg_reply(NULL, true, NULL, &r);
                classad_set_int(r, "RequestId", rid);
                classad_set_int(r, "Count", i + 1);
                if (i == 0)
                        classad_set_bool(r, "More", true);
                CU_ASSERT(mgr_send(&m, r));
                classad_free(r);
        }
        for (int i = 0; i < 2; i++) {
                ClassAd *r = client_recv(fd);
                bool more = false;
                if (r)
                        classad_eval_bool(r, "More", CA_MODE_OLD, &more);
                GLEAN_TEST_CHECK(r && int_of(r, "RequestId") == 77 && int_of(r, "Count") == i + 1 && more == (i == 0),
                                 "piece %d of the reply: RequestId %lld Count %lld More %d", i + 1,
                                 (long long) int_of(r, "RequestId"), (long long) int_of(r, "Count"), more);
                classad_free(r);
        }
        /* Vacate of another machine goes up; of this machine's slot, not. */
        ClassAd *v = NULL;
        glean_msg_new(GLEAN_CMD_VACATE, &v);
        classad_set_string(v, "Machine", "elsewhere.example.org");
        CU_ASSERT_FATAL(glean_msg_send(fd, v, 5000) >= 0);
        classad_free(v);
        up = mgr_wait(&m, GLEAN_CMD_VACATE, "Machine", "elsewhere.example.org", 5);
        GLEAN_TEST_CHECK(up && has_string(up, "RelayUser", me()), "Vacate of another machine relayed");
        rid = int_of(up, "RequestId");
        classad_free(up);
        ClassAd *r = NULL;
        glean_msg_reply(NULL, true, NULL, &r);
        classad_set_int(r, "RequestId", rid);
        mgr_send(&m, r);
        classad_free(r);
        r = client_recv(fd);
        GLEAN_TEST_CHECK(reply_ok(r, NULL) && !classad_has(r, "RequestId"), "its reply, without a RequestId");
        classad_free(r);
        /* A client that went away: its reply is dropped, the rest goes on. */
        glean_msg_new(GLEAN_CMD_HISTORY, &q);
        glean_msg_send(fd, q, 5000);
        classad_free(q);
        up = mgr_wait(&m, GLEAN_CMD_HISTORY, NULL, NULL, 5);
        rid = int_of(up, "RequestId");
        classad_free(up);
        close(fd);
        usleep(200000);
        glean_msg_reply(NULL, true, NULL, &r);
        classad_set_int(r, "RequestId", rid);
        mgr_send(&m, r);
        classad_free(r);
        /* The manager gone: a clear refusal. */
        mgr_drop(&m);
        GLEAN_TEST_CHECK(wait_log(&p, 10, "lost the connection to the central manager", NULL), "lost");
        fd = connect_agent(&p);
        glean_msg_new(GLEAN_CMD_QUERY, &q);
        classad_set_int(q, "RequestId", 5);
        r = NULL;
        if (glean_msg_send(fd, q, 5000) >= 0)
                r = client_recv(fd);
        classad_free(q);
        GLEAN_TEST_CHECK(!ok_why(r, why, sizeof why) && strcmp(why, "central manager not connected") == 0,
                         "Query while the manager is away: %s", why);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* Submit of a client on fd: More when more parts follow. */
static void client_submit(int fd, int64_t rid, bool more) {
        ClassAd *q = NULL, *cluster = NULL;
        glean_msg_new(GLEAN_CMD_SUBMIT, &q);
        classad_new(&cluster);
        classad_set_string(cluster, "Cmd", "/bin/true");
        glean_msg_set_ad(q, "Cluster", cluster);
        glean_msg_set_ad_list(q, "Procs", &cluster, 1);
        if (more)
                classad_set_bool(q, "More", true);
        classad_set_int(q, "RequestId", rid);
        GLEAN_TEST_CHECK(glean_msg_send(fd, q, 5000) >= 0, "sending a Submit");
        classad_free(cluster);
        classad_free(q);
}

static void mgr_reply_cluster(Manager *m, int64_t rid, int64_t cluster) {
        ClassAd *r = NULL;
        glean_msg_reply(NULL, true, NULL, &r);
        classad_set_int(r, "RequestId", rid);
        classad_set_int(r, "ClusterId", cluster);
        classad_set_int(r, "NumProcs", 1);
        mgr_send(m, r);
        classad_free(r);
}

static double now_mono(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

/* A message for the client on fd within ms (NULL: none). */
static ClassAd *client_recv_ms(int fd, int ms) {
        ClassAd *ad = NULL;
        GleanCommand c;
        char why[256];
        if (glean_msg_recv(fd, ms, &ad, &c, why, sizeof why) < 0)
                return NULL;
        return ad;
}

static bool more_of(const ClassAd *ad) {
        bool more = false;
        if (ad)
                classad_eval_bool(ad, "More", CA_MODE_OLD, &more);
        return more;
}

/* A client's parts are kept until its last one and then go up together:
 * another client's Submit goes up at once meanwhile. */
static void test_relay_submit_parts(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, NULL));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        int a = connect_agent(&p), b = connect_agent(&p);
        CU_ASSERT_FATAL(a >= 0 && b >= 0);
        client_submit(a, 1, true);
        usleep(200000);
        client_submit(b, 2, false);
        ClassAd *first = mgr_wait(&m, GLEAN_CMD_SUBMIT, NULL, NULL, 2);
        GLEAN_TEST_CHECK(first && !more_of(first), "B's Submit goes up while A's series is open (%s)",
                         first ? more_of(first) ? "A's first part came first" : "B's" : "nothing came");
        int64_t rid_b = int_of(first, "RequestId");
        classad_free(first);
        mgr_reply_cluster(&m, rid_b, 12);
        ClassAd *rb = client_recv(b);
        GLEAN_TEST_CHECK(int_of(rb, "RequestId") == 2 && int_of(rb, "ClusterId") == 12, "B's reply, at once");
        classad_free(rb);
        /* A's last part: both of A's parts, one after the other. */
        client_submit(a, 3, false);
        ClassAd *p1 = mgr_wait(&m, GLEAN_CMD_SUBMIT, NULL, NULL, 5);
        ClassAd *p2 = mgr_wait(&m, GLEAN_CMD_SUBMIT, NULL, NULL, 5);
        GLEAN_TEST_CHECK(p1 && more_of(p1) && p2 && !more_of(p2) && has_string(p1, "RelayUser", me()) &&
                                 has_string(p2, "RelayUser", me()),
                         "A's two parts go up together, the last without More");
        int64_t rid_a = int_of(p2, "RequestId");
        classad_free(p1);
        classad_free(p2);
        mgr_reply_cluster(&m, rid_a, 11);
        ClassAd *ra = client_recv(a);
        GLEAN_TEST_CHECK(int_of(ra, "RequestId") == 3 && int_of(ra, "ClusterId") == 11, "A's reply");
        classad_free(ra);
        close(a);
        close(b);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* A series that stalls is dropped after RELAY_SUBMIT_TIMEOUT, answered
 * with an error, nothing of it up; one that breaks a limit, or whose
 * client leaves, is dropped too; the upstream connection stays up. */
static void test_relay_series_broken(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, "RELAY_SUBMIT_TIMEOUT = 2\nRELAY_SUBMIT_MAX_BYTES = 2000\n"));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        CU_ASSERT_FATAL(mgr_greet(&m, NULL, 2));
        int a = connect_agent(&p), b = connect_agent(&p);
        CU_ASSERT_FATAL(a >= 0 && b >= 0);

        /* A stalls after its first part. */
        client_submit(a, 1, true);
        double t0 = now_mono();
        ClassAd *r = client_recv(a);
        double waited = now_mono() - t0;
        char *reason = NULL;
        bool ok = reply_ok(r, &reason);
        GLEAN_TEST_CHECK(r && !ok && reason && strstr(reason, "RELAY_SUBMIT_TIMEOUT") && int_of(r, "RequestId") == 1 &&
                                 waited > 1.5 && waited < 4,
                         "the stalled series is answered with an error after %.1f s: %s", waited,
                         reason ? reason : "(none)");
        free(reason);
        classad_free(r);
        /* Its last part, late: dropped, unanswered; nothing of A went up. */
        client_submit(a, 2, false);
        r = client_recv_ms(a, 700);
        GLEAN_TEST_CHECK(!r, "the late last part of the abandoned series is not answered again");
        classad_free(r);
        ClassAd *up = mgr_wait(&m, GLEAN_CMD_SUBMIT, NULL, NULL, 1);
        GLEAN_TEST_CHECK(!up, "nothing of the abandoned series reached the central manager");
        classad_free(up);

        /* A part past RELAY_SUBMIT_MAX_BYTES: refused at once. */
        ClassAd *q = NULL, *cluster = NULL;
        glean_msg_new(GLEAN_CMD_SUBMIT, &q);
        classad_new(&cluster);
        char big[3000];
        memset(big, 'x', sizeof big - 1);
        big[sizeof big - 1] = 0;
        classad_set_string(cluster, "Cmd", "/bin/true");
        classad_set_string(cluster, "Padding", big);
        glean_msg_set_ad(q, "Cluster", cluster);
        glean_msg_set_ad_list(q, "Procs", &cluster, 1);
        classad_set_bool(q, "More", true);
        classad_set_int(q, "RequestId", 3);
        CU_ASSERT(glean_msg_send(a, q, 5000) >= 0);
        classad_free(cluster);
        classad_free(q);
        r = client_recv(a);
        reason = NULL;
        ok = reply_ok(r, &reason);
        GLEAN_TEST_CHECK(r && !ok && reason && strstr(reason, "RELAY_SUBMIT_MAX_BYTES") && int_of(r, "RequestId") == 3,
                         "a series past RELAY_SUBMIT_MAX_BYTES: %s", reason ? reason : "(none)");
        free(reason);
        classad_free(r);
        client_submit(a, 4, false); /* its end, dropped */

        /* B leaves in the middle of its series. */
        client_submit(b, 5, true);
        usleep(200000);
        close(b);
        usleep(300000);

        /* The upstream connection is the same: no new one, and A's next Submit goes up on it. */
        GLEAN_TEST_CHECK(mgr_accept_tcp(&m, 2) == 0, "the agent did not dial the central manager again");
        GLEAN_TEST_CHECK(!log_line(&p, "reconnecting", NULL, NULL), "no reconnection in the agent's log");
        client_submit(a, 6, false);
        up = mgr_wait(&m, GLEAN_CMD_SUBMIT, NULL, NULL, 5);
        GLEAN_TEST_CHECK(up && !more_of(up), "A's next Submit goes up on the same connection");
        if (up)
                mgr_reply_cluster(&m, int_of(up, "RequestId"), 21);
        classad_free(up);
        r = client_recv(a);
        GLEAN_TEST_CHECK(int_of(r, "RequestId") == 6 && int_of(r, "ClusterId") == 21, "and is answered");
        classad_free(r);
        close(a);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

static void test_no_manager(void) {
        Pool p;
        CU_ASSERT_FATAL(pool_start(&p, "AGENT_EXECUTOR = fork\n"));
        int fd = connect_agent(&p);
        ClassAd *q = NULL;
        glean_msg_new(GLEAN_CMD_SUBMIT, &q);
        ClassAd *cluster = NULL;
        classad_new(&cluster);
        glean_msg_set_ad(q, "Cluster", cluster);
        glean_msg_set_ad_list(q, "Procs", NULL, 0);
        classad_free(cluster);
        char why[512];
        GLEAN_TEST_CHECK(!ok_why(call(fd, q), why, sizeof why) &&
                                 strcmp(why, "no central manager configured (COLLECTOR_HOST)") == 0,
                         "Submit without a central manager: %s", why);
        classad_free(q);
        /* Local commands are the agent's own as ever. */
        glean_msg_new(GLEAN_CMD_VACATE, &q);
        classad_set_string(q, "Slot", "slot2");
        GLEAN_TEST_CHECK(ok_why(call(fd, q), why, sizeof why), "a local Vacate: %s", why);
        classad_free(q);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");

        /* A manager that is not there, and a key that is not there. */
        Manager m;
        CU_ASSERT_FATAL(mgr_open(&m));
        char *conf = NULL;
        CU_ASSERT_FATAL(asprintf(&conf, "AGENT_EXECUTOR = fork\nCOLLECTOR_HOST = localhost:%u\nPOOL_KEY_FILE = %s/missing.key\n", m.port,
                                 m.dir) > 0);
        CU_ASSERT_FATAL(pool_start(&p, conf));
        free(conf);
        GLEAN_TEST_CHECK(wait_log(&p, 5, "cannot connect to the central manager", "no pool key"),
                         "no log record of the missing key");
        GLEAN_TEST_CHECK(mgr_accept_tcp(&m, 2) == 0, "without a key the agent does not dial");
        fd = connect_agent(&p);
        glean_msg_new(GLEAN_CMD_QUERY, &q);
        GLEAN_TEST_CHECK(!ok_why(call(fd, q), why, sizeof why) && strcmp(why, "central manager not connected") == 0,
                         "Query without a connection: %s", why);
        classad_free(q);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        /* The name resolved (in a thread), the key there: it connects. */
        char *conf2 = NULL;
        CU_ASSERT_FATAL(asprintf(&conf2, "AGENT_EXECUTOR = fork\nCOLLECTOR_HOST = localhost:%u\nPOOL_KEY_FILE = %s\n", m.port, m.key_path) >
                        0);
        CU_ASSERT_FATAL(pool_start(&p, conf2));
        free(conf2);
        GLEAN_TEST_CHECK(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "localhost: %s", why);
        GLEAN_TEST_CHECK(mgr_greet(&m, NULL, 2), "greeting");
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

/* STARTD_NAME = second: the Hello names the machine, the slots are
 * slotN@second@machine in their ads and in everything the agent says of
 * them (a claim's reply, the JobExit); a Vacate of its own slot by that
 * name stays here, one of another agent's name on this machine goes up. */
static void test_startd_name(void) {
        Manager m;
        Pool p;
        CU_ASSERT_FATAL(start_pair(&m, &p, "FULL_HOSTNAME = agent.test\nSTARTD_NAME = second\n"));
        char why[512];
        GLEAN_TEST_CHECK_FATAL(mgr_accept(&m, NULL, 10, why, sizeof why) == 0, "handshake: %s", why);
        GleanCommand c;
        ClassAd *hello = mgr_recv(&m, 5000, &c);
        GLEAN_TEST_CHECK(hello && c == GLEAN_CMD_HELLO && has_string(hello, "Machine", "agent.test"),
                         "the Hello names the machine, not STARTD_NAME");
        classad_free(hello);
        ClassAd *ours = NULL;
        glean_hello_new("glean-negotiator", &ours);
        CU_ASSERT_FATAL(mgr_send(&m, ours));
        classad_free(ours);
        for (int i = 1; i <= 2; i++) {
                ClassAd *u = mgr_wait(&m, GLEAN_CMD_SLOT_UPDATE, NULL, NULL, 5), *ad = NULL;
                char want[64];
                snprintf(want, sizeof want, "slot%d@second@agent.test", i);
                GLEAN_TEST_CHECK(u && glean_msg_get_ad(u, "SlotAd", &ad) >= 0 && has_string(ad, "Name", want) &&
                                         has_string(ad, "Machine", "agent.test") &&
                                         has_string(ad, "FileSystemDomain", "agent.test") &&
                                         has_string(ad, "UidDomain", "agent.test"),
                                 "SlotUpdate %d: %s", i, want);
                classad_free(ad);
                classad_free(u);
        }
        /* The central manager claims by the full name; the agent answers with it. */
        const char *id = "upstream-startd-name-0001";
        ClassAd *job = shell_job(&p, "exit 5");
        ClassAd *r = mgr_claim_cmd(&m, GLEAN_CMD_REQUEST_CLAIM, "slot1@second@agent.test", id, job);
        GLEAN_TEST_CHECK(reply_ok(r, NULL) && has_string(r, "Slot", "slot1@second@agent.test"),
                         "RequestClaim's reply names the slot in full");
        classad_free(r);
        r = mgr_claim_cmd(&m, GLEAN_CMD_ACTIVATE_CLAIM, NULL, id, job);
        GLEAN_TEST_CHECK(reply_ok(r, NULL) && has_string(r, "Slot", "slot1@second@agent.test"),
                         "ActivateClaim's reply names the slot in full");
        classad_free(r);
        ClassAd *ex = mgr_wait(&m, GLEAN_CMD_JOB_EXIT, "ClaimId", id, 10);
        GLEAN_TEST_CHECK(ex && has_string(ex, "Slot", "slot1@second@agent.test") && int_of(ex, "ExitCode") == 5,
                         "the JobExit names the slot in full");
        if (ex)
                mgr_ack(&m, ex);
        classad_free(ex);
        classad_free(job);
        /* A user's Vacate: of this agent's slot here, of another agent's name up. */
        int fd = connect_agent(&p);
        CU_ASSERT_FATAL(fd >= 0);
        ClassAd *v = NULL;
        glean_msg_new(GLEAN_CMD_VACATE, &v);
        classad_set_string(v, "Slot", "slot2@second@agent.test");
        GLEAN_TEST_CHECK(ok_why(call(fd, v), why, sizeof why), "Vacate of slot2@second@agent.test here: %s", why);
        classad_free(v);
        glean_msg_new(GLEAN_CMD_VACATE, &v);
        classad_set_string(v, "Slot", "slot2@first@agent.test");
        CU_ASSERT_FATAL(glean_msg_send(fd, v, 5000) >= 0);
        classad_free(v);
        ClassAd *up = mgr_wait(&m, GLEAN_CMD_VACATE, "Slot", "slot2@first@agent.test", 5);
        GLEAN_TEST_CHECK(up != NULL, "Vacate of another agent's slot on this machine relayed");
        classad_free(up);
        close(fd);
        GLEAN_TEST_CHECK(pool_stop(&p) == 0, "the agent exits 0 after SIGTERM");
        mgr_close(&m);
}

static CU_TestInfo tests[] = {
        { "handshake, Hello, slots, a job through the connection", test_connect_and_run },
        { "claims survive a lost connection; exits kept and delivered", test_reconnect },
        { "a lease that ends while the manager is away", test_lease_ends_while_away },
        { "exits sent again until acknowledged, in order", test_exit_until_acknowledged },
        { "an exit not acknowledged outlives the agent", test_exit_outlives_agent },
        { "a manager with another pool key", test_wrong_key },
        { "users' requests relayed", test_relay },
        { "the parts of a Submit go up together, nobody waits", test_relay_submit_parts },
        { "a stalled or broken series is dropped, the connection stays", test_relay_series_broken },
        { "no central manager, no key", test_no_manager },
        { "STARTD_NAME: the slots' names in ads, replies, exits and Vacates", test_startd_name },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent upstream", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-grant.c — the central manager's part in moving a job's files, on
 * the real glean-negotiator (daemon-test.h) with fake agents: a submit
 * agent (relays the submit, says its TransferPort), an execute agent, and
 * a hostile agent that is neither.
 *
 *   - a job with should_transfer_files = YES: its submit agent gets
 *     TransferGrant [ TransferId (32 hex); TransferKey (64 hex); JobAd;
 *     ExecuteMachine ], the execute agent's ActivateClaim carries Transfer
 *     with the same id and key and Address = the submit agent's address
 *     and TransferPort; no other agent ever gets it, though the submit
 *     named it as +SubmitMachine; the grant is sent again when the submit
 *     agent reconnects, revoked (TransferRevoke) when the run ends; the
 *     key is never in the log;
 *   - a job that does not transfer: no grant, no Transfer;
 *   - one that must transfer but came on the central manager's own socket
 *     (no SubmitMachine): held with HoldReasonCode 13; should_transfer_files
 *     = YES there is refused at submit, a UserLog gets a warning;
 *   - the submit agent away: the claim waits (no ActivateClaim), goes on
 *     when it is back; away longer than NEGOTIATOR_TRANSFER_WAIT: the
 *     claim is released, the job stays Idle with LastRejMatchReason;
 *   - the slot's TransferringInput/TransferringOutput reach the job's ad;
 *     a JobExit with HoldReasonCode 13 holds the job with its Reason, no
 *     exit status, its BytesRecvd kept, the grant revoked; one the agent
 *     ended (a Reason) requeues it with its BytesSent counted; the
 *     activation's TransferringInput reaches the job at once;
 *   - Address: an IPv6 peer in brackets ("[::1]:port"), an IPv4 one
 *     through a dual-stack socket as IPv4 ("127.0.0.1:port").
 */
#define _GNU_SOURCE
#include "daemon-test.h"

/* An agent whose Hello says TransferPort = port. */
static bool agent_connect_xfer(Agent *a, const Rig *r, const char *machine, int port) {
        memset(a, 0, sizeof *a);
        a->fd = tcp_connect(r->port);
        snprintf(a->machine, sizeof a->machine, "%s", machine);
        char why[256] = "", hello[300];
        if (a->fd < 0 || glean_secure_handshake(a->fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(&r->key), 5000,
                                                &a->s, why, sizeof why) < 0) {
                agent_close(a);
                return false;
        }
        snprintf(hello, sizeof hello,
                 "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"glean-agent\"; Machine = \"%s\"; "
                 "AgentStartTime = 1000; TransferPort = %d ]",
                 machine, port);
        GleanCommand cmd;
        ClassAd *m = agent_send_text(a, hello) ? agent_recv(a, 5000, &cmd) : NULL;
        bool ok = m && cmd == GLEAN_CMD_HELLO;
        classad_free(m);
        if (!ok)
                agent_close(a);
        return ok;
}

static int tcp6_connect(int port) {
        int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t) port) };
        sin6.sin6_addr = in6addr_loopback;
        if (fd < 0 || connect(fd, (struct sockaddr *) &sin6, sizeof sin6) < 0) {
                if (fd >= 0)
                        close(fd);
                return -1;
        }
        return fd;
}

/* The same over IPv6 (::1); false when the host has none. */
static bool agent_connect_xfer6(Agent *a, const Rig *r, const char *machine, int port) {
        memset(a, 0, sizeof *a);
        a->fd = tcp6_connect(r->port);
        snprintf(a->machine, sizeof a->machine, "%s", machine);
        char why[256] = "", hello[300];
        if (a->fd < 0 || glean_secure_handshake(a->fd, GLEAN_SECURE_AGENT, GLEAN_SECURE_POOL_AUTH(&r->key), 5000,
                                                &a->s, why, sizeof why) < 0) {
                agent_close(a);
                return false;
        }
        snprintf(hello, sizeof hello,
                 "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"glean-agent\"; Machine = \"%s\"; "
                 "AgentStartTime = 1000; TransferPort = %d ]",
                 machine, port);
        GleanCommand cmd;
        ClassAd *m = agent_send_text(a, hello) ? agent_recv(a, 5000, &cmd) : NULL;
        bool ok = m && cmd == GLEAN_CMD_HELLO;
        classad_free(m);
        if (!ok)
                agent_close(a);
        return ok;
}

/* A Submit relayed by a for bob; its ClusterId (-1 refused). */
static int64_t relay_submit(Agent *a, int64_t rid, const char *extra) {
        char text[2048];
        snprintf(text, sizeof text,
                 "[ Command = \"Submit\"; RequestId = %" PRId64 "; RelayUser = \"bob\"; RelayUid = 1007; "
                 "Cluster = [ %s%s%s ]; Procs = { [] } ]",
                 rid, submit_cluster, extra ? "; " : "", extra ? extra : "");
        CU_ASSERT(agent_send_text(a, text));
        ClassAd *m = agent_wait_reply(a, rid, 5);
        int64_t c = reply_ok(m) ? ad_int(m, "ClusterId") : -1;
        classad_free(m);
        return c;
}

static char *str_of(const ClassAd *ad, const char *name) {
        char *v = NULL;
        if (ad)
                classad_eval_string(ad, name, MODE, &v);
        return v;
}

static bool is_hex(const char *s, size_t len) {
        if (!s || strlen(s) != len)
                return false;
        for (; *s; s++)
                if (!((*s >= '0' && *s <= '9') || (*s >= 'a' && *s <= 'f')))
                        return false;
        return true;
}

/* The Transfer of an ActivateClaim (NULL: none). */
static ClassAd *transfer_of(const ClassAd *act) {
        ClassAd *t = NULL;
        if (act && glean_msg_get_ad(act, "Transfer", &t) < 0)
                return NULL;
        return t;
}

/* No message of kind cmd reaches a within seconds. */
static bool never_gets(Agent *a, GleanCommand cmd, double seconds) {
        ClassAd *m = agent_expect(a, cmd, seconds);
        bool none = m == NULL;
        classad_free(m);
        return none;
}

static void test_grant_flow(void) {
        Rig r;
        Agent sub, evil, ex;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        CU_ASSERT_FATAL(agent_connect_xfer(&evil, &r, "evil1", 9701));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));

        /* The submit names the hostile agent as its SubmitMachine: stripped. */
        int64_t cluster = relay_submit(&sub, 1, "ShouldTransferFiles = \"YES\"; SubmitMachine = \"evil1\"");
        CU_ASSERT_FATAL(cluster > 0);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&ex, req, "slot1", 30);
        classad_free(req);
        ClassAd *act = agent_expect(&ex, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        ClassAd *t = transfer_of(act);
        char *id = str_of(t, "TransferId"), *key = str_of(t, "TransferKey"), *addr = str_of(t, "Address");
        GLEAN_TEST_CHECK(is_hex(id, 32) && is_hex(key, 64), "Transfer: id %s, key of %zu hex digits", id ? id : "-",
                         key ? strlen(key) : 0);
        GLEAN_TEST_CHECK(addr && strcmp(addr, "127.0.0.1:9700") == 0, "Address: the submit agent's: %s",
                         addr ? addr : "(none)");
        agent_reply(&ex, act, true, NULL);
        classad_free(act);

        /* The submit agent's grant: the same id and key, the job, exec1. */
        ClassAd *g = agent_expect(&sub, GLEAN_CMD_TRANSFER_GRANT, 5), *job = NULL;
        CU_ASSERT_FATAL(g != NULL);
        char *gid = str_of(g, "TransferId"), *gkey = str_of(g, "TransferKey"), *gexec = str_of(g, "ExecuteMachine");
        CU_ASSERT(gid && id && strcmp(gid, id) == 0);
        CU_ASSERT(gkey && key && strcmp(gkey, key) == 0);
        CU_ASSERT(gexec && strcmp(gexec, "exec1") == 0);
        CU_ASSERT(glean_msg_get_ad(g, "JobAd", &job) >= 0);
        CU_ASSERT_EQUAL(ad_int(job, "ClusterId"), cluster);
        char *sm = str_of(job, "SubmitMachine");
        GLEAN_TEST_CHECK(sm && strcmp(sm, "sub1") == 0, "SubmitMachine is the relaying agent's: %s", sm ? sm : "-");
        free(sm);
        classad_free(job);
        agent_reply(&sub, g, true, NULL);
        classad_free(g);
        free(gid);
        free(gkey);
        free(gexec);

        /* The hostile agent: nothing of it, now or after it reconnects. */
        CU_ASSERT(never_gets(&evil, GLEAN_CMD_TRANSFER_GRANT, 1.0));
        agent_close(&evil);
        CU_ASSERT_FATAL(agent_connect_xfer(&evil, &r, "evil1", 9701));
        CU_ASSERT(never_gets(&evil, GLEAN_CMD_TRANSFER_GRANT, 1.0));

        /* The submit agent back: its grant again. */
        agent_close(&sub);
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        g = agent_expect(&sub, GLEAN_CMD_TRANSFER_GRANT, 5);
        gid = str_of(g, "TransferId");
        GLEAN_TEST_CHECK(gid && id && strcmp(gid, id) == 0, "granted again on reconnection: %s", gid ? gid : "none");
        free(gid);
        if (g)
                agent_reply(&sub, g, true, NULL);
        classad_free(g);

        /* The run ends: revoked, to the submit agent only. */
        agent_exit(&ex, claim, 0);
        ClassAd *rv = agent_expect(&sub, GLEAN_CMD_TRANSFER_REVOKE, 5);
        char *rid = str_of(rv, "TransferId");
        GLEAN_TEST_CHECK(rid && id && strcmp(rid, id) == 0, "TransferRevoke of the grant: %s", rid ? rid : "none");
        free(rid);
        classad_free(rv);
        CU_ASSERT(never_gets(&evil, GLEAN_CMD_TRANSFER_REVOKE, 0.5));

        /* Never the key in the log; the id is there. */
        char *log = rig_log(&r);
        CU_ASSERT(key && !strstr(log, key));
        CU_ASSERT(id && strstr(log, id));
        free(log);

        free(id);
        free(key);
        free(addr);
        classad_free(t);
        free(claim);
        agent_close(&sub);
        agent_close(&evil);
        agent_close(&ex);
        rig_done(&r, false);
}

static void test_no_transfer(void) {
        Rig r;
        Agent sub, ex;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        int64_t cluster = relay_submit(&sub, 1, "ShouldTransferFiles = \"NO\"");
        CU_ASSERT_FATAL(cluster > 0);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&ex, req, "slot1", 30);
        classad_free(req);
        ClassAd *act = agent_expect(&ex, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        CU_ASSERT(!classad_has(act, "Transfer"));
        agent_reply(&ex, act, true, NULL);
        classad_free(act);
        CU_ASSERT(never_gets(&sub, GLEAN_CMD_TRANSFER_GRANT, 1.0));
        agent_exit(&ex, claim, 0);
        CU_ASSERT(never_gets(&sub, GLEAN_CMD_TRANSFER_REVOKE, 1.0));
        free(claim);
        agent_close(&sub);
        agent_close(&ex);
        rig_done(&r, false);
}

static void test_no_submit_machine(void) {
        Rig r;
        Agent ex;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        int fd = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0);

        /* On our own socket: YES refused at submit, a UserLog warned of. */
        ClassAd *m = user_call(fd, "[ Command = \"Submit\"; RequestId = 3; Cluster = [ Cmd = \"/bin/true\"; "
                                   "Requirements = true; Iwd = \"/tmp\"; ShouldTransferFiles = \"YES\" ]; "
                                   "Procs = { [] } ]");
        char *why = str_of(m, "Reason");
        GLEAN_TEST_CHECK(m && !reply_ok(m) && why && strstr(why, "glean-agent"), "YES refused: %s",
                         why ? why : "(accepted)");
        free(why);
        classad_free(m);
        m = user_call(fd, "[ Command = \"Submit\"; RequestId = 4; Cluster = [ Cmd = \"/bin/true\"; "
                          "Requirements = false; Iwd = \"/tmp\"; UserLog = \"/tmp/x.log\" ]; Procs = { [] } ]");
        char *warn = str_of(m, "Warning");
        GLEAN_TEST_CHECK(reply_ok(m) && warn && strstr(warn, "event log"), "UserLog warned of: %s",
                         warn ? warn : "(none)");
        free(warn);
        classad_free(m);

        /* IF_NEEDED where the file systems differ: it must transfer, and cannot. */
        int64_t c = user_submit_with(fd, 1, "ShouldTransferFiles = \"IF_NEEDED\"; FileSystemDomain = \"far.example\"");
        CU_ASSERT_FATAL(c > 0);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&ex, req, "slot1", 30);
        classad_free(req);
        CU_ASSERT(wait_status(fd, c, 0, 5, 10));
        ClassAd *job = user_job(fd, c, 0);
        char *hr = str_of(job, "HoldReason");
        CU_ASSERT_EQUAL(ad_int(job, "HoldReasonCode"), 13);
        GLEAN_TEST_CHECK(hr && strstr(hr, "cannot travel"), "HoldReason: %s", hr ? hr : "(none)");
        CU_ASSERT(!classad_has(job, "SubmitMachine"));
        free(hr);
        classad_free(job);
        /* never activated; the claim released */
        ClassAd *rel = agent_expect(&ex, GLEAN_CMD_RELEASE, 5);
        CU_ASSERT(rel != NULL || ex.releases > 0);
        classad_free(rel);
        CU_ASSERT_EQUAL(ex.activations, 0);
        free(claim);
        close(fd);
        agent_close(&ex);
        rig_done(&r, false);
}

static void test_submit_agent_away(void) {
        Rig r;
        Agent sub, ex;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        int64_t cluster = relay_submit(&sub, 1, "ShouldTransferFiles = \"YES\"");
        CU_ASSERT_FATAL(cluster > 0);
        agent_close(&sub);
        usleep(200000);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&ex, req, "slot1", 30);
        classad_free(req);
        agent_slot(&ex, "slot1", "Claimed", "Idle", claim);
        /* The job's files are not served: it does not start. */
        CU_ASSERT(never_gets(&ex, GLEAN_CMD_ACTIVATE_CLAIM, 2.0));
        int fd = user_connect(&r);
        CU_ASSERT_EQUAL(job_status(fd, cluster, 0), 1);
        /* The submit agent back: the grant, then the activation. */
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        ClassAd *act = agent_expect(&ex, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        ClassAd *t = transfer_of(act);
        char *id = str_of(t, "TransferId");
        CU_ASSERT(is_hex(id, 32));
        if (act)
                agent_reply(&ex, act, true, NULL);
        classad_free(act);
        ClassAd *g = agent_expect(&sub, GLEAN_CMD_TRANSFER_GRANT, 5);
        char *gid = str_of(g, "TransferId");
        CU_ASSERT(gid && id && strcmp(gid, id) == 0);
        CU_ASSERT(wait_status(fd, cluster, 0, 2, 5));
        free(gid);
        classad_free(g);
        free(id);
        classad_free(t);
        free(claim);
        close(fd);
        agent_close(&sub);
        agent_close(&ex);
        rig_done(&r, false);
}

static void test_submit_agent_gone(void) {
        Rig r;
        Agent sub, ex;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_TRANSFER_WAIT = 2\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        int64_t cluster = relay_submit(&sub, 1, "ShouldTransferFiles = \"YES\"");
        CU_ASSERT_FATAL(cluster > 0);
        agent_close(&sub);
        usleep(200000);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&ex, req, "slot1", 30);
        classad_free(req);
        agent_slot(&ex, "slot1", "Claimed", "Idle", claim);
        /* Released after NEGOTIATOR_TRANSFER_WAIT, never activated. */
        ClassAd *rel = agent_expect(&ex, GLEAN_CMD_RELEASE, 8);
        CU_ASSERT(rel != NULL);
        if (rel)
                agent_reply(&ex, rel, true, NULL);
        classad_free(rel);
        CU_ASSERT_EQUAL(ex.activations, 0);
        int fd = user_connect(&r);
        ClassAd *job = user_job(fd, cluster, 0);
        CU_ASSERT_EQUAL(ad_int(job, "JobStatus"), 1);
        classad_free(job);
        /* Its LastRejMatchReason said why (a later cycle may have said
         * another since): the record of it. */
        CU_ASSERT(log_has(&r, "stays idle: its submit machine sub1 (the agent that serves its files) is not "
                              "connected for 2 s (NEGOTIATOR_TRANSFER_WAIT)", 2));
        free(claim);
        close(fd);
        agent_close(&ex);
        rig_done(&r, false);
}

/* The slot of a running job, as its agent advertises it (extra inside). */
static void busy_slot(Agent *a, const char *claim, const char *extra) {
        char text[1200];
        snprintf(text, sizeof text,
                 "[ Command = \"SlotUpdate\"; ClaimId = \"%s\"; SlotAd = [ Name = \"slot1@%s\"; Machine = \"%s\"; "
                 "MyType = \"Machine\"; State = \"Claimed\"; Activity = \"Busy\"; Cpus = 1; Memory = 1024; "
                 "Disk = 100000; SlotWeight = Cpus; OpSys = \"LINUX\"; Arch = \"X86_64\"; START = true; "
                 "Requirements = START; Rank = 0; CurrentRank = 0; SlotID = 1; %s ] ]",
                 claim, a->machine, a->machine, extra);
        CU_ASSERT(agent_send_text(a, text));
}

static bool job_bool(int fd, int64_t cluster, const char *name, bool want, double seconds) {
        double end = now_mono() + seconds;
        do {
                ClassAd *job = user_job(fd, cluster, 0);
                bool b = false;
                bool has = job && classad_eval_bool(job, name, MODE, &b) >= 0;
                classad_free(job);
                if ((has ? b : false) == want)
                        return true;
                usleep(100000);
        } while (now_mono() < end);
        return false;
}

static void test_exit_hold(void) {
        Rig r;
        Agent sub, ex;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        int64_t cluster = relay_submit(&sub, 1, "ShouldTransferFiles = \"YES\"; TransferInput = \"a.txt\"");
        CU_ASSERT_FATAL(cluster > 0);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        char *claim = run_one(&ex, "slot1", cluster);
        CU_ASSERT_FATAL(claim != NULL);
        int fd = user_connect(&r);
        CU_ASSERT_FATAL(fd >= 0);

        /* Its input on the way: the job ad says so (glean q's "<"), then its output. */
        busy_slot(&ex, claim, "TransferringInput = true; TransferringOutput = false");
        CU_ASSERT(job_bool(fd, cluster, "TransferringInput", true, 5));
        busy_slot(&ex, claim, "TransferringInput = false; TransferringOutput = true");
        CU_ASSERT(job_bool(fd, cluster, "TransferringOutput", true, 5));
        CU_ASSERT(job_bool(fd, cluster, "TransferringInput", false, 1));

        /* The input could not go: held 13 with the agent's Reason, no exit status. */
        char text[800];
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; RequestId = 77; ClaimId = \"%s\"; Slot = \"slot1\"; ClusterId = %" PRId64
                 "; ProcId = 0; NumJobStarts = 1; ExitBySignal = false; ExitCode = 0; HoldReasonCode = 13; "
                 "HoldReasonSubCode = 2; Reason = \"cannot read input file 'a.txt': No such file or directory\"; "
                 "BytesSent = 0; BytesRecvd = 12; RemoteWallClockTime = 1.0 ]",
                 claim, cluster);
        CU_ASSERT(agent_send_text(&ex, text));
        ClassAd *ack = agent_wait_reply(&ex, 77, 5);
        CU_ASSERT(reply_ok(ack));
        classad_free(ack);
        CU_ASSERT(wait_status(fd, cluster, 0, 5, 5));
        ClassAd *job = user_job(fd, cluster, 0);
        char *hr = str_of(job, "HoldReason");
        CU_ASSERT_EQUAL(ad_int(job, "HoldReasonCode"), 13);
        CU_ASSERT_EQUAL(ad_int(job, "HoldReasonSubCode"), 2);
        GLEAN_TEST_CHECK(hr && strcmp(hr, "cannot read input file 'a.txt': No such file or directory") == 0,
                         "HoldReason is the JobExit's Reason: %s", hr ? hr : "(none)");
        CU_ASSERT_EQUAL(ad_int(job, "NumHolds"), 1);
        CU_ASSERT(!classad_has(job, "ExitCode"));
        CU_ASSERT_EQUAL(ad_int(job, "BytesRecvd"), 12);
        CU_ASSERT(!classad_has(job, "TransferringInput") && !classad_has(job, "TransferringOutput"));
        free(hr);
        classad_free(job);
        /* its grant revoked */
        ClassAd *rv = agent_expect(&sub, GLEAN_CMD_TRANSFER_REVOKE, 5);
        CU_ASSERT(rv != NULL);
        classad_free(rv);
        free(claim);
        close(fd);
        agent_close(&sub);
        agent_close(&ex);
        rig_done(&r, false);
}

static void test_evicted_bytes(void) {
        Rig r;
        Agent sub, ex;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub1", 9700));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        int64_t cluster = relay_submit(&sub, 1, "ShouldTransferFiles = \"YES\"");
        CU_ASSERT_FATAL(cluster > 0);
        agent_slot(&ex, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&ex, req, "slot1", 30);
        classad_free(req);
        ClassAd *act = agent_expect(&ex, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        /* The agent starts by fetching the input: the job says so at once. */
        agent_reply(&ex, act, true, "[ Slot = \"slot1\"; TransferringInput = true ]");
        classad_free(act);
        int fd = user_connect(&r);
        CU_ASSERT(job_bool(fd, cluster, "TransferringInput", true, 5));
        /* The run ends by the agent's doing (a lost transfer): Idle again,
         * the bytes it moved counted. */
        char text[800];
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; RequestId = 78; ClaimId = \"%s\"; Slot = \"slot1\"; ClusterId = %" PRId64
                 "; ProcId = 0; NumJobStarts = 1; ExitBySignal = false; ExitCode = 0; "
                 "Reason = \"the input transfer failed three times: Connection refused\"; BytesSent = 4096; "
                 "BytesRecvd = 0 ]",
                 claim, cluster);
        CU_ASSERT(agent_send_text(&ex, text));
        ClassAd *ack = agent_wait_reply(&ex, 78, 5);
        CU_ASSERT(reply_ok(ack));
        classad_free(ack);
        CU_ASSERT(wait_status(fd, cluster, 0, 1, 5));
        ClassAd *job = user_job(fd, cluster, 0);
        CU_ASSERT_EQUAL(ad_int(job, "BytesSent"), 4096);
        CU_ASSERT(!classad_has(job, "ExitCode") && !classad_has(job, "HoldReasonCode"));
        CU_ASSERT(!classad_has(job, "TransferringInput"));
        classad_free(job);
        ClassAd *rv = agent_expect(&sub, GLEAN_CMD_TRANSFER_REVOKE, 5);
        CU_ASSERT(rv != NULL);
        classad_free(rv);
        free(claim);
        close(fd);
        agent_close(&sub);
        agent_close(&ex);
        rig_done(&r, false);
}

/* The Address of the Transfer a job relayed by sub gets on ex. */
static char *address_seen(Agent *sub, Agent *ex, const char *slot) {
        int64_t cluster = relay_submit(sub, 1, "ShouldTransferFiles = \"YES\"");
        if (cluster <= 0)
                return NULL;
        agent_slot(ex, slot, "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(ex, GLEAN_CMD_REQUEST_CLAIM, 10);
        if (!req)
                return NULL;
        free(agent_grant(ex, req, slot, 30));
        classad_free(req);
        ClassAd *act = agent_expect(ex, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        ClassAd *t = transfer_of(act);
        char *addr = str_of(t, "Address");
        if (act)
                agent_reply(ex, act, true, NULL);
        classad_free(act);
        classad_free(t);
        return addr;
}

static void test_address_families(void) {
        Rig r;
        Agent sub, ex;
        /* Every address, IPv6 with IPv4 mapped in: an IPv4 peer is shown as IPv4. */
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_ADDRESS =\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&ex, &r, "exec1"));
        if (!agent_connect_xfer6(&sub, &r, "sub6", 9706)) {
                fprintf(stderr, "no IPv6 loopback here: the IPv6 Address is not checked\n");
        } else {
                char *addr = address_seen(&sub, &ex, "slot1");
                GLEAN_TEST_CHECK(addr && strcmp(addr, "[::1]:9706") == 0, "IPv6 Address in brackets: %s",
                                 addr ? addr : "(none)");
                free(addr);
                agent_close(&sub);
        }
        Agent ex2;
        CU_ASSERT_FATAL(agent_connect(&ex2, &r, "exec2"));
        CU_ASSERT_FATAL(agent_connect_xfer(&sub, &r, "sub4", 9704));
        char *addr = address_seen(&sub, &ex2, "slot1");
        GLEAN_TEST_CHECK(addr && strcmp(addr, "127.0.0.1:9704") == 0, "IPv4 through a dual-stack socket: %s",
                         addr ? addr : "(none)");
        free(addr);
        agent_close(&sub);
        agent_close(&ex);
        agent_close(&ex2);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "grant_flow", test_grant_flow },
        { "no_transfer", test_no_transfer },
        { "no_submit_machine", test_no_submit_machine },
        { "submit_agent_away", test_submit_agent_away },
        { "submit_agent_gone", test_submit_agent_gone },
        { "exit_hold", test_exit_hold },
        { "evicted_bytes", test_evicted_bytes },
        { "address_families", test_address_families },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "grant", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

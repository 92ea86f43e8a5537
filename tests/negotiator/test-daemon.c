/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-daemon.c — the real glean-negotiator on a private configuration
 * (its own port, chosen by the kernel, socket, database and pool key),
 * driven by a fake agent written here that speaks the pool's protocol
 * through common/secure.h, and by a user on its unix socket:
 *
 *   - the handshake with the pool key; a wrong key, a replayed, an altered,
 *     a truncated and an oversized frame each close their connection with a
 *     log record, and the daemon goes on serving; failed handshakes keep
 *     no key holder out;
 *   - a slot advertised, a job submitted: matched, claimed, activated (the
 *     agent checks the job ad), its exit reported: Completed in the history
 *     with its exit code and usage; the claim reused for the next job, then
 *     released;
 *   - the agent gone: after the claim's lease the job is Idle again,
 *     NumJobStarts kept;
 *   - kill -9 during a burst of submits: every acknowledged job is there
 *     after the restart;
 *   - a restart while a job runs: the agent re-advertises the claim, the job
 *     stays Running and is not activated a second time; a claim nobody
 *     re-advertises is requeued after the job lease.
 *
 * The rig, the fake agent and the user: daemon-test.h.
 */
#define _GNU_SOURCE
#include "daemon-test.h"

/* ---- transport ---- */

/* One sealed frame's bytes (header and ciphertext), as s would send it. */
static size_t sealed(GleanSecure *s, const char *text, unsigned char *buf, size_t cap) {
        const void *p;
        size_t before = glean_secure_output(s, &p);
        CU_ASSERT_FATAL(before == 0);
        CU_ASSERT_FATAL(glean_secure_seal(s, text, strlen(text)) >= 0);
        size_t n = glean_secure_output(s, &p);
        CU_ASSERT_FATAL(n <= cap);
        memcpy(buf, p, n);
        glean_secure_output_consume(s, n);
        return n;
}

/* Whether the daemon closed fd within seconds (reading and dropping what comes). */
static bool closed_by_peer(int fd, double seconds) {
        double end = now_mono() + seconds;
        char buf[4096];
        while (now_mono() < end) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 100) <= 0)
                        continue;
                ssize_t k = read(fd, buf, sizeof buf);
                if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
                        return true;
        }
        return false;
}

static bool pool_answers(const Rig *r, const char *machine) {
        Agent a;
        if (!agent_connect(&a, r, machine))
                return false;
        CU_ASSERT(agent_send_text(&a, "[ Command = \"QuerySlots\"; RequestId = 3 ]"));
        GleanCommand cmd;
        ClassAd *m = agent_recv(&a, 5000, &cmd);
        bool ok = false;
        if (m && cmd == GLEAN_CMD_REPLY)
                classad_eval_bool(m, "Ok", MODE, &ok);
        classad_free(m);
        agent_close(&a);
        return ok;
}

static void test_transport(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        GLEAN_TEST_CHECK(pool_answers(&r, "good1"), "an agent with the pool key is served");

        /* Another key: the handshake fails on both ends, with a record saying why and from where. */
        GleanPoolKey other;
        glean_pool_key_generate(&other);
        Agent a;
        GLEAN_TEST_CHECK(!agent_connect_key(&a, &r, "intruder", 1, &other), "a wrong key is refused");
        GLEAN_TEST_CHECK(log_has(&r, "refused a connection from 127.0.0.1: the agent did not prove it holds the pool key",
                                 5),
                         "a record for the wrong key");

        /* After the handshake: frames that do not authenticate or do not fit. */
        static const char *const cases[] = { "replayed", "altered", "truncated", "oversized" };
        static const char *const want[] = { "closing the connection of agent m-replayed", "closing the connection of agent m-altered",
                                            "in the middle of a frame", "longer than" };
        for (size_t i = 0; i < 4; i++) {
                char machine[32];
                snprintf(machine, sizeof machine, "m-%s", cases[i]);
                CU_ASSERT_FATAL(agent_connect(&a, &r, machine));
                unsigned char buf[4096];
                size_t n = sealed(a.s, "[ Command = \"QuerySlots\"; RequestId = 5 ]", buf, sizeof buf);
                ssize_t w = 0;
                switch (i) {
                case 0: /* the same frame twice: the second one's counter is behind */
                        w = write(a.fd, buf, n);
                        w = write(a.fd, buf, n);
                        break;
                case 1: /* one byte flipped in the ciphertext */
                        buf[n / 2] ^= 0x20;
                        w = write(a.fd, buf, n);
                        break;
                case 2: /* cut short, then the end of the stream */
                        w = write(a.fd, buf, n / 2);
                        shutdown(a.fd, SHUT_WR);
                        break;
                case 3: { /* a length above the limit */
                        uint32_t big = htonl(GLEAN_SECURE_FRAME_MAX + 1);
                        w = write(a.fd, &big, sizeof big);
                        break;
                }
                }
                (void) w;
                GLEAN_TEST_CHECK(closed_by_peer(a.fd, 5), "%s frame: the daemon closes the connection", cases[i]);
                GLEAN_TEST_CHECK(log_has(&r, want[i], 5), "%s frame: a record with '%s'", cases[i], want[i]);
                agent_close(&a);
        }
        /* A frame before the handshake that is not one of it, and a frame of length 0. */
        int fd = tcp_connect(r.port);
        CU_ASSERT(write(fd, "GET / HTTP/1.0\r\n\r\n", 18) == 18);
        GLEAN_TEST_CHECK(closed_by_peer(fd, 5), "HTTP on the pool port is refused");
        close(fd);
        GLEAN_TEST_CHECK(log_has(&r, "handshake message longer than", 5), "a record for the HTTP request");
        GLEAN_TEST_CHECK(pool_answers(&r, "good2"), "the daemon goes on serving");

        /* An agent of version 1 (its 44-byte HELLO: magic, version 1,
         * type, role, a 32-byte nonce): refused with both versions named;
         * what it gets first is our HELLO, version 2 where its own
         * version byte is, so that it can say the same. */
        fd = tcp_connect(r.port);
        unsigned char v1[4 + 44] = { 0, 0, 0, 44, 'G', 'L', 'E', 'A', 'N', 'S', 'E', 'C', 1, 1, GLEAN_SECURE_AGENT };
        CU_ASSERT(write(fd, v1, sizeof v1) == (ssize_t) sizeof v1);
        unsigned char hello[4 + GLEAN_SECURE_HELLO_SIZE];
        size_t got = 0;
        for (int i = 0; i < 50 && got < sizeof hello; i++) {
                ssize_t k = recv(fd, hello + got, sizeof hello - got, MSG_DONTWAIT);
                if (k > 0)
                        got += (size_t) k;
                else
                        usleep(100000);
        }
        GLEAN_TEST_CHECK(got == sizeof hello && hello[3] == GLEAN_SECURE_HELLO_SIZE && memcmp(hello + 4, "GLEANSEC", 8) == 0 &&
                                 hello[12] == GLEAN_SECURE_VERSION,
                         "the daemon's HELLO: %zu bytes, version %u", got, got > 12 ? hello[12] : 0);
        GLEAN_TEST_CHECK(closed_by_peer(fd, 5), "a version-1 agent is refused");
        close(fd);
        GLEAN_TEST_CHECK(log_has(&r, "the agent speaks pool protocol version 1, this negotiator speaks 2", 5),
                         "a record naming both versions");

        /* A handshake that never comes: refused after NEGOTIATOR_TIMEOUT. */
        fd = tcp_connect(r.port);
        GLEAN_TEST_CHECK(closed_by_peer(fd, 8), "a silent peer is dropped after the timeout");
        close(fd);
        GLEAN_TEST_CHECK(log_has(&r, "refused a connection from 127.0.0.1", 2), "a record for the silent peer");

        /* An agent speaks for its own machine only. */
        CU_ASSERT_FATAL(agent_connect(&a, &r, "honest"));
        char text[512];
        snprintf(text, sizeof text,
                 "[ Command = \"SlotUpdate\"; RequestId = 9; SlotAd = [ Name = \"slot1@other\"; State = \"Unclaimed\" ] ]");
        agent_send_text(&a, text);
        GleanCommand cmd;
        ClassAd *m = agent_recv(&a, 5000, &cmd);
        bool ok = true;
        if (m)
                classad_eval_bool(m, "Ok", MODE, &ok);
        GLEAN_TEST_CHECK(m && cmd == GLEAN_CMD_REPLY && !ok, "a slot of another machine is refused");
        classad_free(m);
        agent_close(&a);

        /* Failed handshakes from one address never keep out a connection
         * of it that proves the key (issue 20, item 12). */
        for (int i = 0; i < 5; i++) {
                agent_connect_key(&a, &r, "intruder", 1, &other);
                agent_close(&a);
        }
        GLEAN_TEST_CHECK(pool_answers(&r, "good3"), "after failed handshakes, an agent with the key is served");
        /* The unix socket is not affected. */
        fd = user_connect(&r);
        CU_ASSERT(fd >= 0);
        m = fd >= 0 ? user_call(fd, "[ Command = \"QuerySlots\"; RequestId = 1 ]") : NULL;
        ok = false;
        if (m)
                classad_eval_bool(m, "Ok", MODE, &ok);
        GLEAN_TEST_CHECK(ok, "local users are served during the ban");
        classad_free(m);
        if (fd >= 0)
                close(fd);
        rig_done(&r, false);
}

/* ---- jobs ---- */

static void test_job_runs(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "CLAIM_WORKLIFE = 3600\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake1"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        int64_t cluster = user_submit(u, 2);
        CU_ASSERT_FATAL(cluster > 0);

        /* Matched, claimed, activated with the job's ad. */
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *slot = NULL, *owner = NULL;
        ClassAd *job = NULL;
        classad_eval_string(req, "Slot", MODE, &slot);
        glean_msg_get_ad(req, "JobAd", &job);
        classad_eval_string(job, "Owner", MODE, &owner);
        GLEAN_TEST_CHECK(slot && strcmp(slot, "slot1@fake1") == 0, "RequestClaim of %s", slot ? slot : "?");
        GLEAN_TEST_CHECK(owner && strcmp(owner, me()) == 0, "the job's Owner is the submitter: %s",
                         owner ? owner : "?");
        free(slot);
        free(owner);
        classad_free(job);
        char *claim = agent_grant(&a, req, "slot1", 30);
        classad_free(req);
        GLEAN_TEST_CHECK(claim && strlen(claim) >= 32, "a claim id of 128 bits or more: %s", claim ? claim : "?");
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        char *aid = NULL, *cmdattr = NULL;
        classad_eval_string(act, "ClaimId", MODE, &aid);
        glean_msg_get_ad(act, "JobAd", &job);
        classad_eval_string(job, "Cmd", MODE, &cmdattr);
        GLEAN_TEST_CHECK(aid && claim && strcmp(aid, claim) == 0, "ActivateClaim under the claim granted");
        GLEAN_TEST_CHECK(ad_int(job, "ClusterId") == cluster && ad_int(job, "ProcId") == 0 && cmdattr &&
                                 strcmp(cmdattr, "/bin/echo") == 0,
                         "the JobAd is job %" PRId64 ".0", cluster);
        free(aid);
        free(cmdattr);
        classad_free(job);
        agent_reply(&a, act, true, "[ Slot = \"slot1\" ]");
        classad_free(act);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 2, 5), "job %" PRId64 ".0 is Running", cluster);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);

        /* The exit: Completed with its usage; the claim runs the next job. */
        agent_exit(&a, claim, 3);
        act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        glean_msg_get_ad(act, "JobAd", &job);
        aid = NULL;
        classad_eval_string(act, "ClaimId", MODE, &aid);
        GLEAN_TEST_CHECK(ad_int(job, "ProcId") == 1 && aid && strcmp(aid, claim) == 0,
                         "the claim is reused for job %" PRId64 ".1", cluster);
        GLEAN_TEST_CHECK(a.request_claims == 1, "no second claim: %d RequestClaims", a.request_claims);
        free(aid);
        classad_free(job);
        agent_reply(&a, act, true, NULL);
        classad_free(act);

        char text[256];
        snprintf(text, sizeof text, "[ Command = \"Wait\"; RequestId = 11; Id = \"%" PRId64 ".0\"; Timeout = 10 ]",
                 cluster);
        ClassAd *w = user_call(u, text), *hist = NULL;
        if (w)
                glean_msg_get_ad(w, "Ad", &hist);
        GLEAN_TEST_CHECK(ad_int(hist, "JobStatus") == 4 && ad_int(hist, "ExitCode") == 3, "Wait: Completed, exit 3");
        GLEAN_TEST_CHECK(ad_real(hist, "RemoteUserCpu") == 1.5 && ad_real(hist, "RemoteSysCpu") == 0.25 &&
                                 ad_int(hist, "ResidentSetSize") == 2048,
                         "the usage in the history: user %g, sys %g, rss %" PRId64, ad_real(hist, "RemoteUserCpu"),
                         ad_real(hist, "RemoteSysCpu"), ad_int(hist, "ResidentSetSize"));
        classad_free(hist);
        classad_free(w);

        /* The second job's exit: nothing left for the claim, which is released. */
        agent_exit(&a, claim, 0);
        ClassAd *rel = agent_expect(&a, GLEAN_CMD_RELEASE, 5);
        aid = NULL;
        if (rel)
                classad_eval_string(rel, "ClaimId", MODE, &aid);
        GLEAN_TEST_CHECK(aid && strcmp(aid, claim) == 0, "the claim is released");
        if (rel)
                agent_reply(&a, rel, true, NULL);
        free(aid);
        classad_free(rel);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 1, -1, 5), "job %" PRId64 ".1 left the queue", cluster);
        GLEAN_TEST_CHECK(log_has(&r, "exited with status 3 on slot1@fake1", 1), "an exit record");
        snprintf(text, sizeof text, "GLEAN_JOB=%" PRId64 ".1", cluster);
        GLEAN_TEST_CHECK(log_has(&r, text, 1), "records name the job");
        GLEAN_TEST_CHECK(log_has(&r, "GLEAN_MATCHES=1 GLEAN_REJECTIONS=1 GLEAN_SUBMITTERS=1", 1), "a cycle record");
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static void test_lost_claim(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake2"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&a, req, "slot1", 2);
        classad_free(req);
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        agent_reply(&a, act, true, NULL);
        classad_free(act);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 2, 5), "the job runs");
        agent_close(&a); /* the agent is gone */
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 1, 8), "after the claim's lease the job is Idle");
        ClassAd *job = user_job(u, cluster, 0);
        GLEAN_TEST_CHECK(ad_int(job, "NumJobStarts") == 1, "NumJobStarts kept: %" PRId64, ad_int(job, "NumJobStarts"));
        classad_free(job);
        GLEAN_TEST_CHECK(log_has(&r, "back to Idle: its agent is gone and the claim's lease expired", 1),
                         "a requeue record");
        /* Back, and the job runs again on a new claim. */
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake2"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
        char *claim2 = req ? agent_grant(&a, req, "slot1", 30) : NULL;
        GLEAN_TEST_CHECK(claim2 && strcmp(claim2, claim) != 0, "a new claim");
        classad_free(req);
        act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        job = NULL;
        if (act)
                glean_msg_get_ad(act, "JobAd", &job);
        GLEAN_TEST_CHECK(ad_int(job, "NumJobStarts") == 2, "its second start");
        classad_free(job);
        classad_free(act);
        free(claim);
        free(claim2);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* ---- restarts ---- */

static void test_kill_during_submits(void) {
        Rig r;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        enum { N = 400 };
        char text[1024];
        /* Pipelined: every request goes before the replies are read. */
        for (int i = 0; i < N; i++) {
                snprintf(text, sizeof text, "[ Command = \"Submit\"; RequestId = %d; Cluster = [ %s ]; Procs = { [] } ]",
                         i + 1, submit_cluster);
                if (glean_frame_write(u, text, strlen(text), 5000) < 0)
                        break;
        }
        int64_t acked[N];
        size_t n_acked = 0;
        for (int i = 0; i < N; i++) {
                ClassAd *m = NULL;
                GleanCommand cmd;
                char why[256];
                if (glean_msg_recv(u, 5000, &m, &cmd, why, sizeof why) < 0)
                        break;
                bool ok = false;
                int64_t c = -1;
                classad_eval_bool(m, "Ok", MODE, &ok);
                classad_eval_int(m, "ClusterId", MODE, &c);
                classad_free(m);
                if (ok && c > 0)
                        acked[n_acked++] = c;
                if (n_acked == N / 3)
                        rig_kill(&r);
        }
        close(u);
        rig_kill(&r);
        GLEAN_TEST_CHECK(n_acked >= N / 3, "%zu submits acknowledged before the kill", n_acked);
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        size_t missing = 0;
        for (size_t i = 0; i < n_acked; i++) {
                ClassAd *job = user_job(u, acked[i], 0);
                if (!job)
                        missing++;
                classad_free(job);
        }
        GLEAN_TEST_CHECK(missing == 0, "%zu of %zu acknowledged jobs missing after kill -9", missing, n_acked);
        int64_t next = user_submit(u, 1);
        bool fresh = next > 0;
        for (size_t i = 0; i < n_acked; i++)
                fresh = fresh && next != acked[i];
        GLEAN_TEST_CHECK(fresh, "a new cluster id after the restart: %" PRId64, next);
        close(u);
        rig_done(&r, false);
}

static void test_restart_running(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "JOB_DEFAULT_LEASE_DURATION = 6\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake3"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        agent_slot(&a, "slot2", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 2);
        CU_ASSERT_FATAL(cluster > 0);
        char *claims[2] = { NULL, NULL };
        for (int i = 0; i < 2; i++) {
                ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
                CU_ASSERT_FATAL(req != NULL);
                char *slot = NULL;
                classad_eval_string(req, "Slot", MODE, &slot);
                bool one = slot && strncmp(slot, "slot1", 5) == 0;
                free(slot);
                claims[one ? 0 : 1] = agent_grant(&a, req, one ? "slot1" : "slot2", 30);
                classad_free(req);
                ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
                CU_ASSERT_FATAL(act != NULL);
                agent_reply(&a, act, true, NULL);
                classad_free(act);
        }
        CU_ASSERT_FATAL(claims[0] && claims[1]);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 2, 5) && wait_status(u, cluster, 1, 2, 5), "both jobs run");
        close(u);
        /* The central manager dies; the agent keeps running both jobs. */
        rig_kill(&r);
        agent_close(&a);
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        GLEAN_TEST_CHECK(job_status(u, cluster, 0) == 2 && job_status(u, cluster, 1) == 2,
                         "after the restart both are still Running");
        /* It comes back and re-advertises slot1's claim only: slot2's job is gone. */
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake3"));
        agent_slot(&a, "slot1", "Claimed", "Busy", claims[0]);
        agent_slot(&a, "slot2", "Unclaimed", "Idle", NULL);
        /* Served for a while: keep-alives answered, claims granted, activations counted by job. */
        bool alive0 = false;
        int act[2] = { 0, 0 };
        double end = now_mono() + 8;
        while (now_mono() < end) {
                GleanCommand cmd;
                ClassAd *m = agent_recv(&a, 200, &cmd);
                if (!m)
                        continue;
                char *id = NULL;
                ClassAd *job = NULL;
                classad_eval_string(m, "ClaimId", MODE, &id);
                glean_msg_get_ad(m, "JobAd", &job);
                int64_t proc = ad_int(job, "ProcId");
                if (cmd == GLEAN_CMD_KEEP_ALIVE && id && strcmp(id, claims[0]) == 0)
                        alive0 = true;
                if (cmd == GLEAN_CMD_REQUEST_CLAIM) {
                        GLEAN_TEST_CHECK(proc == 1, "only the job whose claim is gone is matched again: %" PRId64,
                                         proc);
                        free(agent_grant(&a, m, "slot2", 30));
                } else {
                        if (cmd == GLEAN_CMD_ACTIVATE_CLAIM && proc >= 0 && proc < 2)
                                act[proc]++;
                        agent_reply(&a, m, true, NULL);
                }
                free(id);
                classad_free(job);
                classad_free(m);
        }
        GLEAN_TEST_CHECK(alive0, "keep-alives resume for the relearned claim");
        GLEAN_TEST_CHECK(act[0] == 0, "job .0 is never activated a second time (%d)", act[0]);
        GLEAN_TEST_CHECK(act[1] == 1, "job .1, whose claim is gone, runs again (%d activations)", act[1]);
        GLEAN_TEST_CHECK(job_status(u, cluster, 0) == 2, "job .0 stays Running");
        ClassAd *j0 = user_job(u, cluster, 0), *j1 = user_job(u, cluster, 1);
        GLEAN_TEST_CHECK(ad_int(j0, "NumJobStarts") == 1, "job .0 started once: %" PRId64, ad_int(j0, "NumJobStarts"));
        GLEAN_TEST_CHECK(ad_int(j1, "NumJobStarts") == 2, "job .1 started twice: %" PRId64, ad_int(j1, "NumJobStarts"));
        classad_free(j0);
        classad_free(j1);
        /* Its exit after all this is taken as any other. */
        agent_exit(&a, claims[0], 0);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, -1, 5), "job .0 completes");
        GLEAN_TEST_CHECK(log_has(&r, "relearned the claim", 1), "a record for the relearned claim");
        free(claims[0]);
        free(claims[1]);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* The central manager dies after it committed a job's start but before
 * its ActivateClaim left (here: the agent takes the claim and never sees
 * the activation): back, it relearns the claim on a Claimed/Idle slot, no
 * exit report comes, and the job is requeued with a reason that says it
 * may never have started. */
/* A started central manager with extra, agent name connected with one
 * Unclaimed slot1, one job submitted by user connection *u, its claim
 * granted on slot1 (the claim id returned; the ActivateClaim not read). */
static char *one_granted(Rig *r, Agent *a, const char *extra, const char *name, int *u, int64_t *cluster) {
        CU_ASSERT_FATAL(rig_init(r, extra));
        CU_ASSERT_FATAL(rig_start(r));
        CU_ASSERT_FATAL(agent_connect(a, r, name));
        agent_slot(a, "slot1", "Unclaimed", "Idle", NULL);
        *u = user_connect(r);
        *cluster = user_submit(*u, 1);
        CU_ASSERT_FATAL(*cluster > 0);
        ClassAd *req = agent_expect(a, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(a, req, "slot1", 30);
        classad_free(req);
        CU_ASSERT_FATAL(claim != NULL);
        return claim;
}

static void test_restart_never_activated(void) {
        Rig r;
        Agent a;
        int u;
        int64_t cluster;
        char *claim = one_granted(&r, &a, "JOB_DEFAULT_LEASE_DURATION = 30\n", "fake9", &u, &cluster);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 2, 5), "the job is Running in the queue");
        close(u);
        rig_kill(&r);
        agent_close(&a);
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake9"));
        agent_slot(&a, "slot1", "Claimed", "Idle", claim);
        u = user_connect(&r);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 1, 15), "requeued once no exit report came");
        GLEAN_TEST_CHECK(log_has(&r, "the job never started (the central manager stopped before its ActivateClaim left)",
                                 1),
                         "a record saying the job may never have started");
        GLEAN_TEST_CHECK(!log_has(&r, "the job ended and its exit report was lost", 1), "not that it ended");
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static void test_restart_lease(void) {
        Rig r;
        Agent a;
        int u;
        int64_t cluster;
        free(one_granted(&r, &a, "JOB_DEFAULT_LEASE_DURATION = 3\n", "fake4", &u, &cluster));
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        agent_reply(&a, act, true, NULL);
        classad_free(act);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 2, 5), "the job runs");
        close(u);
        rig_kill(&r);
        agent_close(&a);
        /* Back without its agent: Running until the job lease has passed, then Idle. */
        CU_ASSERT_FATAL(rig_start(&r));
        u = user_connect(&r);
        GLEAN_TEST_CHECK(job_status(u, cluster, 0) == 2, "Running right after the restart");
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 1, 8), "Idle once the job lease passed");
        GLEAN_TEST_CHECK(log_has(&r, "did not advertise the claim within the job lease", 1), "a record saying why");
        close(u);
        rig_done(&r, false);
}


static void test_vacate_and_forward(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake5"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        char *claim = run_one(&a, "slot1", cluster);
        CU_ASSERT_FATAL(claim != NULL);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 2, 5), "the job runs");

        /* Another user (relayed by the agent) may not vacate it. */
        char text[512];
        snprintf(text, sizeof text,
                 "[ Command = \"JobAction\"; RequestId = 21; Action = \"Vacate\"; Ids = \"%" PRId64 ".0\"; "
                 "RelayUser = \"nobody\"; RelayUid = 65534 ]",
                 cluster);
        agent_send_text(&a, text);
        ClassAd *m = agent_expect(&a, GLEAN_CMD_REPLY, 5);
        GLEAN_TEST_CHECK(m && !reply_ok(m) && ad_int(m, "Count") == 0, "nobody cannot vacate root's job");
        classad_free(m);
        GLEAN_TEST_CHECK(a.deactivations == 0, "nothing was deactivated");

        /* Its owner may: Deactivate; the exit the agent reports sends it back to Idle. */
        snprintf(text, sizeof text,
                 "[ Command = \"JobAction\"; RequestId = 22; Action = \"Vacate\"; Ids = \"%" PRId64 ".0\" ]", cluster);
        m = user_call(u, text);
        GLEAN_TEST_CHECK(reply_ok(m) && ad_int(m, "Count") == 1, "JobAction Vacate: Ok, Count 1");
        classad_free(m);
        m = agent_expect(&a, GLEAN_CMD_DEACTIVATE, 5);
        char *id = NULL;
        if (m) {
                classad_eval_string(m, "ClaimId", MODE, &id);
                agent_reply(&a, m, true, NULL);
        }
        GLEAN_TEST_CHECK(id && strcmp(id, claim) == 0, "Deactivate of the job's claim");
        free(id);
        classad_free(m);
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; ClaimId = \"%s\"; ExitBySignal = true; ExitSignal = 15; "
                 "RemoteWallClockTime = 1.0; Reason = \"deactivated\" ]",
                 claim);
        agent_send_text(&a, text);
        m = agent_expect(&a, GLEAN_CMD_RELEASE, 5);
        GLEAN_TEST_CHECK(m != NULL, "the claim of the vacated job is released");
        if (m)
                agent_reply(&a, m, true, NULL);
        classad_free(m);
        GLEAN_TEST_CHECK(wait_status(u, cluster, 0, 1, 5), "the vacated job is Idle again");
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        char *claim2 = run_one(&a, "slot1", cluster);
        GLEAN_TEST_CHECK(claim2 != NULL, "and runs again");
        free(claim2);

        /* Drain goes to the agent of the machine named; its Reply comes back. */
        const char *drain = "[ Command = \"Drain\"; RequestId = 31; Machine = \"fake5\"; How = \"quick\" ]";
        CU_ASSERT(glean_frame_write(u, drain, strlen(drain), 5000) >= 0);
        m = agent_expect(&a, GLEAN_CMD_DRAIN, 5);
        char *how = NULL;
        if (m) {
                classad_eval_string(m, "How", MODE, &how);
                GLEAN_TEST_CHECK(!classad_has(m, "Machine") && !classad_has(m, "RelayUser"),
                                 "the agent gets the drain as the pool's");
                agent_reply(&a, m, true, NULL);
        }
        GLEAN_TEST_CHECK(how && strcmp(how, "quick") == 0, "Drain How = quick forwarded");
        free(how);
        classad_free(m);
        GleanCommand cmd;
        char why[256];
        m = NULL;
        glean_msg_recv(u, 5000, &m, &cmd, why, sizeof why);
        GLEAN_TEST_CHECK(reply_ok(m) && ad_int(m, "RequestId") == 31, "the agent's Reply comes back to the user");
        classad_free(m);
        m = user_call(u, "[ Command = \"CancelDrain\"; RequestId = 32; Machine = \"nowhere\" ]");
        GLEAN_TEST_CHECK(m && !reply_ok(m), "a machine whose agent is not connected: refused");
        classad_free(m);
        agent_send_text(&a, "[ Command = \"Drain\"; RequestId = 33; Machine = \"fake5\"; RelayUser = \"nobody\"; "
                            "RelayUid = 65534 ]");
        m = agent_expect(&a, GLEAN_CMD_REPLY, 5);
        char *err = NULL;
        if (m)
                classad_eval_string(m, "Errno", MODE, &err);
        GLEAN_TEST_CHECK(m && !reply_ok(m) && err && strcmp(err, "EPERM") == 0, "a user who is not an admin: EPERM");
        free(err);
        classad_free(m);
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* A slot that prefers jobs that say Preferred. */
static void rank_slot(Agent *a, const char *claim_attr, const char *state, const char *act, const char *extra) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[ Command = \"SlotUpdate\"; %sSlotAd = [ Name = \"slot1@fake6\"; Machine = \"fake6\"; "
                 "MyType = \"Machine\"; State = \"%s\"; Activity = \"%s\"; Cpus = 1; Memory = 1024; "
                 "Disk = 100000; SlotWeight = Cpus; OpSys = \"LINUX\"; Arch = \"X86_64\"; START = true; "
                 "Requirements = START; Rank = (TARGET.Preferred =?= true) * 10; CurrentRank = 0; "
                 "SlotID = 1%s ] ]",
                 claim_attr ? claim_attr : "", state, act, extra);
        CU_ASSERT(agent_send_text(a, text));
}

static void test_preempt_rank(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake6"));
        char text[1024];
        rank_slot(&a, NULL, "Unclaimed", "Idle", "");
        int u = user_connect(&r);
        int64_t c1 = user_submit(u, 1);
        CU_ASSERT_FATAL(c1 > 0);
        char *claim1 = run_one(&a, "slot1", c1);
        CU_ASSERT_FATAL(claim1 != NULL);
        char cid[160], extra[160];
        snprintf(cid, sizeof cid, "ClaimId = \"%s\"; ", claim1);
        snprintf(extra, sizeof extra, "; RemoteUser = \"%s@test.pool\"; RemoteOwner = \"%s\"; JobId = \"%" PRId64
                 ".0\"", me(), me(), c1);
        rank_slot(&a, cid, "Claimed", "Busy", extra);
        GLEAN_TEST_CHECK(wait_status(u, c1, 0, 2, 5), "the first job runs");

        /* A job the slot's RANK prefers, of another user (relayed by the agent): a preempting claim on the
         * busy slot. */
        snprintf(text, sizeof text,
                 "[ Command = \"Submit\"; RequestId = 41; RelayUser = \"nobody\"; RelayUid = 65534; "
                 "Cluster = [ %s; Preferred = true ]; Procs = { [] } ]",
                 submit_cluster);
        agent_send_text(&a, text);
        ClassAd *sub = agent_expect(&a, GLEAN_CMD_REPLY, 5);
        int64_t c2 = ad_int(sub, "ClusterId");
        classad_free(sub);
        CU_ASSERT_FATAL(c2 > 0);
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10), *job = NULL;
        CU_ASSERT_FATAL(req != NULL);
        bool byprio = false;
        classad_eval_bool(req, "ByPriority", MODE, &byprio);
        glean_msg_get_ad(req, "JobAd", &job);
        GLEAN_TEST_CHECK(ad_int(job, "ClusterId") == c2 && !byprio, "a preempting claim for the preferred job");
        classad_free(job);
        char *claim2 = NULL, grant[400];
        classad_eval_string(req, "ClaimId", MODE, &claim2);
        snprintf(grant, sizeof grant,
                 "[ ClaimId = \"%s\"; Slot = \"slot1\"; LeaseDuration = 30; State = \"Claimed\"; Activity = \"Busy\" ]",
                 claim2 ? claim2 : "");
        agent_reply(&a, req, true, grant);
        classad_free(req);
        ClassAd *early = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 1.5);
        GLEAN_TEST_CHECK(!early, "nothing is activated while the job runs");
        classad_free(early);
        /* The agent evicts the running job, then the slot is the new claim's. */
        agent_send_text(&a, "[ Command = \"Event\"; Slot = \"slot1\"; State = \"Preempting\"; Activity = \"Vacating\" ]");
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; ClaimId = \"%s\"; ExitBySignal = true; ExitSignal = 15; "
                 "RemoteWallClockTime = 2.0; Reason = \"preempted by a better claim\" ]",
                 claim1);
        agent_send_text(&a, text);
        agent_send_text(&a, "[ Command = \"Event\"; Slot = \"slot1\"; State = \"Claimed\"; Activity = \"Idle\" ]");
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        char *aid = NULL;
        job = NULL;
        if (act) {
                classad_eval_string(act, "ClaimId", MODE, &aid);
                glean_msg_get_ad(act, "JobAd", &job);
                agent_reply(&a, act, true, NULL);
        }
        GLEAN_TEST_CHECK(aid && claim2 && strcmp(aid, claim2) == 0 && ad_int(job, "ClusterId") == c2,
                         "the preferred job is activated under the preempting claim");
        GLEAN_TEST_CHECK(wait_status(u, c2, 0, 2, 5), "the preferred job runs");
        GLEAN_TEST_CHECK(job_status(u, c1, 0) == 1, "the preempted job is Idle again, not Completed");
        GLEAN_TEST_CHECK(log_has(&r, "is preempted for job", 1), "a preemption record");
        free(aid);
        classad_free(job);
        classad_free(act);
        free(claim1);
        free(claim2);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* ---- systemd ---- */

static bool notified(int fd, const char *want, double seconds, char *last, size_t len) {
        double end = now_mono() + seconds;
        while (now_mono() < end) {
                struct pollfd p = { .fd = fd, .events = POLLIN };
                if (poll(&p, 1, 100) <= 0)
                        continue;
                char buf[1024];
                ssize_t k = recv(fd, buf, sizeof buf - 1, 0);
                if (k <= 0)
                        continue;
                buf[k] = 0;
                if (last)
                        snprintf(last, len, "%s", buf);
                if (strstr(buf, want))
                        return true;
        }
        return false;
}

static void test_notify(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        snprintf(r.notify, sizeof r.notify, "%s/notify", r.dir);
        int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sun = { .sun_family = AF_UNIX };
        CU_ASSERT_FATAL(strlen(r.notify) < sizeof sun.sun_path);
        memcpy(sun.sun_path, r.notify, strlen(r.notify) + 1);
        CU_ASSERT_FATAL(fd >= 0 && bind(fd, (struct sockaddr *) &sun, sizeof sun) == 0);
        CU_ASSERT_FATAL(rig_start(&r));
        char last[1024] = "";
        GLEAN_TEST_CHECK(notified(fd, "READY=1", 5, last, sizeof last), "READY=1: %s", last);
        GLEAN_TEST_CHECK(notified(fd, "WATCHDOG=1", 3, last, sizeof last), "WATCHDOG=1 from the loop: %s", last);
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake7"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        agent_slot(&a, "slot2", "Claimed", "Busy", NULL);
        /* "STATUS=1 agent, 2 slots: 1 Unclaimed, 1 Claimed/Busy; 0 idle jobs; cycle 3: 0 matches in 0.00 s" */
        bool status = false;
        for (int i = 0; i < 50 && !status; i++)
                status = notified(fd, "STATUS=1 agent, 2 slots: ", 5, last, sizeof last) &&
                         strstr(last, "1 Unclaimed") && strstr(last, "1 Claimed/Busy") &&
                         strstr(last, "; 0 idle jobs; cycle ") && strstr(last, " matches in ");
        GLEAN_TEST_CHECK(status, "the status line: %s", last);
        kill(r.pid, SIGHUP);
        GLEAN_TEST_CHECK(notified(fd, "RELOADING=1", 5, last, sizeof last), "RELOADING=1 on SIGHUP: %s", last);
        GLEAN_TEST_CHECK(log_has(&r, "SIGHUP: configuration reloaded", 5), "the new configuration taken");
        agent_close(&a);
        rig_done(&r, false);
        close(fd);
}

/* NEGOTIATOR_MIN_INTERVAL holds back a cycle that could only preempt; an idle job and a free slot are
 * matched at once. */
static void test_cycle_at_once(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "NEGOTIATOR_INTERVAL = 300\nNEGOTIATOR_MIN_INTERVAL = 60\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake9"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        /* The collector has the slot (a query after the update on the same connection). */
        CU_ASSERT(agent_send_text(&a, "[ Command = \"QuerySlots\"; RequestId = 3 ]"));
        ClassAd *q = agent_expect(&a, GLEAN_CMD_REPLY, 5);
        CU_ASSERT_FATAL(q != NULL);
        classad_free(q);
        double t0 = now_mono();
        int64_t cluster = user_submit(u, 2);
        CU_ASSERT_FATAL(cluster > 0);
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 20);
        GLEAN_TEST_CHECK(req != NULL, "a RequestClaim %.1f s after the submit, not NEGOTIATOR_MIN_INTERVAL (60 s) "
                         "after the daemon's start", now_mono() - t0);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&a, req, "slot1", 30);
        classad_free(req);
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        agent_reply(&a, act, true, NULL);
        classad_free(act);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        CU_ASSERT(wait_status(u, cluster, 0, 2, 5));
        GLEAN_TEST_CHECK(log_has(&r, "cycle 1: 1 match ", 1), "one cycle, one match");

        /* No free slot for the second job: a cycle could only preempt, and waits (nothing within 3 s). */
        int64_t second = user_submit(u, 1);
        CU_ASSERT(second > 0);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        GLEAN_TEST_CHECK(!log_has(&r, "cycle 2:", 3), "no cycle while no slot is free");
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* A Wait is answered in the iteration that takes the job's exit, not at the daemon's next tick: its Reply comes
 * before the Reply to a request sent after the exit was taken. */
static void test_wait_answered_at_exit(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake10"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        int64_t cluster = user_submit(u, 1);
        CU_ASSERT_FATAL(cluster > 0);
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&a, req, "slot1", 30);
        classad_free(req);
        ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
        CU_ASSERT_FATAL(act != NULL);
        agent_reply(&a, act, true, NULL);
        classad_free(act);
        agent_slot(&a, "slot1", "Claimed", "Busy", claim);
        CU_ASSERT_FATAL(wait_status(u, cluster, 0, 2, 5));

        char text[256];
        snprintf(text, sizeof text, "[ Command = \"Wait\"; RequestId = 11; Id = \"%" PRId64 ".0\"; Timeout = 30 ]",
                 cluster);
        CU_ASSERT_FATAL(glean_frame_write(u, text, strlen(text), 5000) >= 0);
        /* Parked: a Query on another connection is answered meanwhile. */
        int u2 = user_connect(&r);
        CU_ASSERT_FATAL(u2 >= 0);
        CU_ASSERT(job_status(u2, cluster, 0) == 2);
        close(u2);
        agent_exit(&a, claim, 0);
        /* The exit was taken once the agent's next request is answered (one connection, in order). */
        CU_ASSERT(agent_send_text(&a, "[ Command = \"QuerySlots\"; RequestId = 3 ]"));
        ClassAd *q = agent_expect(&a, GLEAN_CMD_REPLY, 5);
        CU_ASSERT(q != NULL);
        classad_free(q);
        snprintf(text, sizeof text, "[ Command = \"Query\"; RequestId = 12; Ids = \"%" PRId64 ".0\" ]", cluster);
        CU_ASSERT_FATAL(glean_frame_write(u, text, strlen(text), 5000) >= 0);
        ClassAd *m = NULL;
        GleanCommand cmd;
        char why[256];
        int64_t id = -1;
        bool ok = false;
        if (glean_msg_recv(u, 10000, &m, &cmd, why, sizeof why) >= 0) {
                classad_eval_int(m, "RequestId", MODE, &id);
                classad_eval_bool(m, "Ok", MODE, &ok);
        }
        GLEAN_TEST_CHECK(id == 11 && ok, "the Wait's Reply first (RequestId %" PRId64 ", Ok %d)", id, ok);
        classad_free(m);
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* After a reconnection an agent advertises its slots, then the job exits it kept while away: a slot that is
 * Claimed/Idle under our claim, or no longer claimed, waits for that exit (the job completes), and is requeued
 * when none comes (the job ended without a word). */
static void test_exit_while_away(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake8"));
        int u = user_connect(&r);
        static const char *const slots[] = { "slot1", "slot2", "slot3" };
        int64_t c[3];
        char *claims[3];
        for (int i = 0; i < 3; i++) {
                agent_slot(&a, slots[i], "Unclaimed", "Idle", NULL);
                c[i] = user_submit(u, 1);
                claims[i] = run_one(&a, slots[i], c[i]);
                CU_ASSERT_FATAL(claims[i] != NULL);
                GLEAN_TEST_CHECK(wait_status(u, c[i], 0, 2, 5), "job %d runs", i);
        }
        agent_close(&a);
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake8"));
        agent_slot(&a, "slot1", "Claimed", "Idle", claims[0]);
        agent_slot(&a, "slot2", "Claimed", "Idle", claims[1]);
        agent_slot(&a, "slot3", "Unclaimed", "Idle", NULL); /* its claim's lease ran out after the exit */
        agent_exit(&a, claims[0], 0);                       /* kept while away */
        agent_exit(&a, claims[2], 0);
        GLEAN_TEST_CHECK(wait_status(u, c[0], 0, -1, 5), "the job whose exit came completes");
        GLEAN_TEST_CHECK(wait_status(u, c[2], 0, -1, 5), "so does the one whose claim then ended");
        GLEAN_TEST_CHECK(wait_status(u, c[1], 0, 1, 8), "the one whose exit was lost is Idle again");
        GLEAN_TEST_CHECK(log_has(&r, "its exit report was lost", 1), "a record saying why");
        for (int i = 0; i < 3; i++)
                free(claims[i]);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* rm and hold of running jobs: their claims are deactivated, and they settle when the agent reports the end;
 * the agent's out-of-memory hold. */
static void test_rm_hold(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake9"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        agent_slot(&a, "slot2", "Unclaimed", "Idle", NULL);
        int u = user_connect(&r);
        int64_t c = user_submit(u, 3);
        CU_ASSERT_FATAL(c > 0);
        char *claims[2] = { NULL, NULL };
        int64_t procs[2] = { -1, -1 };
        for (int i = 0; i < 2; i++) {
                ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10), *job = NULL;
                CU_ASSERT_FATAL(req != NULL);
                char *slot = NULL;
                classad_eval_string(req, "Slot", MODE, &slot);
                claims[i] = agent_grant(&a, req, slot && strncmp(slot, "slot1", 5) == 0 ? "slot1" : "slot2", 30);
                free(slot);
                classad_free(req);
                ClassAd *act = agent_expect(&a, GLEAN_CMD_ACTIVATE_CLAIM, 5);
                CU_ASSERT_FATAL(act != NULL);
                glean_msg_get_ad(act, "JobAd", &job);
                procs[i] = ad_int(job, "ProcId");
                classad_free(job);
                agent_reply(&a, act, true, NULL);
                classad_free(act);
        }
        /* rm of the first: Deactivate; Removed once its end is reported. */
        char text[512];
        snprintf(text, sizeof text,
                 "[ Command = \"JobAction\"; RequestId = 51; Action = \"Remove\"; Ids = \"%" PRId64 ".%" PRId64 "\" ]",
                 c, procs[0]);
        ClassAd *m = user_call(u, text);
        GLEAN_TEST_CHECK(reply_ok(m) && ad_int(m, "Count") == 1, "rm of a running job: Ok");
        classad_free(m);
        m = agent_expect(&a, GLEAN_CMD_DEACTIVATE, 5);
        char *id = NULL;
        if (m) {
                classad_eval_string(m, "ClaimId", MODE, &id);
                agent_reply(&a, m, true, NULL);
        }
        GLEAN_TEST_CHECK(id && strcmp(id, claims[0]) == 0, "its claim is deactivated");
        free(id);
        classad_free(m);
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; ClaimId = \"%s\"; ExitBySignal = true; ExitSignal = 15; "
                 "RemoteWallClockTime = 1.0; Reason = \"deactivated\" ]",
                 claims[0]);
        agent_send_text(&a, text);
        snprintf(text, sizeof text, "[ Command = \"Wait\"; RequestId = 52; Id = \"%" PRId64 ".%" PRId64 "\"; Timeout = 5 ]",
                 c, procs[0]);
        ClassAd *w = NULL, *hist = NULL;
        CU_ASSERT(glean_frame_write(u, text, strlen(text), 5000) >= 0);
        classad_free(agent_expect(&a, GLEAN_CMD_RELEASE, 2)); /* answered on the way */
        GleanCommand cmd;
        char why[256];
        glean_msg_recv(u, 5000, &w, &cmd, why, sizeof why);
        if (w)
                glean_msg_get_ad(w, "Ad", &hist);
        GLEAN_TEST_CHECK(ad_int(hist, "JobStatus") == 3, "the removed job is in the history as Removed: %" PRId64,
                         ad_int(hist, "JobStatus"));
        classad_free(hist);
        classad_free(w);
        /* The second: the agent held it (out of memory). */
        snprintf(text, sizeof text,
                 "[ Command = \"JobExit\"; ClaimId = \"%s\"; ExitBySignal = true; ExitSignal = 9; "
                 "RemoteWallClockTime = 1.0; ResidentSetSize = 600000; Hold = true; "
                 "HoldReason = \"out of memory: the job used more than its slot's 512 MB\"; "
                 "Reason = \"out of memory: the job used more than its slot's 512 MB\" ]",
                 claims[1]);
        agent_send_text(&a, text);
        GLEAN_TEST_CHECK(wait_status(u, c, procs[1], 5, 5), "the job the agent held is Held");
        ClassAd *job = user_job(u, c, procs[1]);
        char *hr = NULL;
        if (job)
                classad_eval_string(job, "HoldReason", MODE, &hr);
        GLEAN_TEST_CHECK(ad_int(job, "HoldReasonCode") == 34 && hr && strstr(hr, "out of memory"),
                         "HoldReasonCode 34 and the agent's reason: %" PRId64 " %s", ad_int(job, "HoldReasonCode"),
                         hr ? hr : "");
        free(hr);
        classad_free(job);
        GLEAN_TEST_CHECK(log_has(&r, "held: out of memory", 2), "a hold record");
        free(claims[0]);
        free(claims[1]);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "transport", test_transport },
        { "job runs, claim reused", test_job_runs },
        { "lost claim", test_lost_claim },
        { "kill -9 during submits", test_kill_during_submits },
        { "restart with running claims", test_restart_running },
        { "restart, claim not re-advertised", test_restart_lease },
        { "restart after a start whose ActivateClaim never left", test_restart_never_activated },
        { "vacate, drain", test_vacate_and_forward },
        { "preemption by rank", test_preempt_rank },
        { "exits while away", test_exit_while_away },
        { "rm and hold of running jobs", test_rm_hold },
        { "sd_notify", test_notify },
        { "an idle job and a free slot: a cycle at once", test_cycle_at_once },
        { "a Wait is answered at the job's exit", test_wait_answered_at_exit },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator daemon", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

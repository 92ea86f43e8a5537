/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-transfer-agent.c — the agent's side of file transfer that needs no
 * socket (agent/transfer.h): the grant table (TransferGrant's id and key
 * checked, a grant replaced by one of the same id, revoked, bounded; two
 * sessions per grant at most), the preamble read exactly (never a byte of
 * the handshake after it; a frame too long or empty refused), and the spec
 * of a run that travels (in its sandbox; a run that does not, unchanged).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/exec.h"
#include "agent/transfer.h"
#include "proto.h"
#include "test-util.h"

#define ID1 "0123456789abcdef0123456789abcdef"
#define ID2 "fedcba9876543210fedcba9876543210"
#define KEY "1111111111111111111111111111111111111111111111111111111111111111"
#define KEY2 "2222222222222222222222222222222222222222222222222222222222222222"
#define GRANT_NOJOB "[ TransferId = \"" ID1 "\"; TransferKey = \"" KEY "\" ]"

static ClassAd *grant_msg(const char *id, const char *key, int cluster) {
        char text[1024];
        snprintf(text, sizeof text,
                 "[ Command = \"TransferGrant\"; TransferId = \"%s\"; TransferKey = \"%s\"; "
                 "JobAd = [ ClusterId = %d; ProcId = 0; Owner = \"nobody\"; Iwd = \"/tmp\" ] ]",
                 id, key, cluster);
        ClassAd *ad = NULL;
        CaError err;
        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) >= 0);
        return ad;
}

static void test_grants(void) {
        AgentGrants *g = NULL;
        char why[256];
        CU_ASSERT_FATAL(agent_grants_new(0, &g) == 0);
        ClassAd *m = grant_msg(ID1, KEY, 7);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), 0);
        classad_free(m);
        CU_ASSERT_EQUAL(agent_grants_count(g), 1);
        AgentGrant *gr = agent_grants_find(g, ID1);
        CU_ASSERT_FATAL(gr != NULL);
        CU_ASSERT_EQUAL(gr->key.bytes[0], 0x11);
        int64_t c = 0;
        CU_ASSERT(classad_eval_int(gr->job, "ClusterId", CA_MODE_OLD, &c) >= 0 && c == 7);
        CU_ASSERT_PTR_NULL(agent_grants_find(g, ID2));

        /* two sessions at most; a third refused; counted across a re-sent grant */
        CU_ASSERT_EQUAL(agent_grants_hold(g, ID1), 0);
        CU_ASSERT_EQUAL(agent_grants_hold(g, ID1), 0);
        CU_ASSERT_EQUAL(agent_grants_hold(g, ID1), -EBUSY);
        CU_ASSERT_EQUAL(agent_grants_hold(g, ID2), -ENOENT);
        m = grant_msg(ID1, KEY2, 8);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), 0);
        classad_free(m);
        CU_ASSERT_EQUAL(agent_grants_count(g), 1);
        gr = agent_grants_find(g, ID1);
        CU_ASSERT_EQUAL(gr->key.bytes[0], 0x22);
        CU_ASSERT_EQUAL(gr->conns, 2);
        CU_ASSERT_EQUAL(agent_grants_hold(g, ID1), -EBUSY);
        agent_grants_unhold(g, ID1);
        CU_ASSERT_EQUAL(agent_grants_hold(g, ID1), 0);

        /* revoked: gone; a session's end afterwards changes nothing */
        CU_ASSERT_EQUAL(agent_grants_revoke(g, ID1), 0);
        CU_ASSERT_EQUAL(agent_grants_revoke(g, ID1), -ENOENT);
        CU_ASSERT_PTR_NULL(agent_grants_find(g, ID1));
        agent_grants_unhold(g, ID1);
        CU_ASSERT_EQUAL(agent_grants_count(g), 0);
        agent_grants_free(g);
}

static void test_grants_refused(void) {
        AgentGrants *g = NULL;
        char why[256] = "";
        CU_ASSERT_FATAL(agent_grants_new(2, &g) == 0);
        static const struct {
                const char *id, *key, *says;
        } bad[] = {
                { "0123", KEY, "TransferId" },
                { "0123456789abcdef0123456789abcdeg", KEY, "TransferId" },
                { "0123456789abcdef0123456789abcdef0", KEY, "TransferId" },
                { ID1, "1234", "TransferKey" },
                { ID1, "0000000000000000000000000000000000000000000000000000000000000000", "TransferKey" },
                { ID1, "zz11111111111111111111111111111111111111111111111111111111111111", "TransferKey" },
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
                ClassAd *m = grant_msg(bad[i].id, bad[i].key, 1);
                why[0] = 0;
                int r = agent_grants_add(g, m, why, sizeof why);
                GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, bad[i].says), "case %zu: %d, %s", i, r, why);
                classad_free(m);
        }
        /* no JobAd */
        ClassAd *m = NULL;
        CaError err;
        CU_ASSERT_FATAL(classad_parse(GRANT_NOJOB, strlen(GRANT_NOJOB), CA_MODE_OLD, &m,
                                      &err) >= 0);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), -EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "JobAd"));
        classad_free(m);
        CU_ASSERT_EQUAL(agent_grants_count(g), 0);

        /* the bound: a third refused, a re-sent one still taken */
        m = grant_msg(ID1, KEY, 1);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), 0);
        classad_free(m);
        m = grant_msg(ID2, KEY, 2);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), 0);
        classad_free(m);
        m = grant_msg("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", KEY, 3);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), -ENOSPC);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "2 grants"));
        classad_free(m);
        m = grant_msg(ID2, KEY2, 4);
        CU_ASSERT_EQUAL(agent_grants_add(g, m, why, sizeof why), 0);
        classad_free(m);
        CU_ASSERT_EQUAL(agent_grants_count(g), 2);
        agent_grants_free(g);
}

/* 100000 grants (the default bound) and one more refused. */
static void test_grants_many(void) {
        AgentGrants *g = NULL;
        char why[256];
        CU_ASSERT_FATAL(agent_grants_new(0, &g) == 0);
        ClassAd *m = grant_msg(ID1, KEY, 1);
        int bad = 0;
        for (unsigned i = 0; i <= AGENT_GRANTS_MAX; i++) {
                char id[40];
                snprintf(id, sizeof id, "%032x", i);
                classad_set_string(m, "TransferId", id);
                int r = agent_grants_add(g, m, why, sizeof why);
                bad += i < AGENT_GRANTS_MAX ? r != 0 : r != -ENOSPC;
        }
        classad_free(m);
        CU_ASSERT_EQUAL(bad, 0);
        CU_ASSERT_EQUAL(agent_grants_count(g), AGENT_GRANTS_MAX);
        CU_ASSERT_PTR_NOT_NULL(agent_grants_find(g, "00000000000000000000000000001234"));
        agent_grants_free(g);
}

/* A frame of payload p. */
static size_t frame(unsigned char *buf, const char *p, size_t n) {
        buf[0] = (unsigned char) (n >> 24);
        buf[1] = (unsigned char) (n >> 16);
        buf[2] = (unsigned char) (n >> 8);
        buf[3] = (unsigned char) n;
        memcpy(buf + 4, p, n);
        return 4 + n;
}

static void test_preamble(void) {
        const char *text = "GLEANXFR " ID1 "\n";
        unsigned char buf[256];
        size_t n = frame(buf, text, strlen(text));
        memcpy(buf + n, "HANDSHAKE", 9); /* what follows is never taken */

        /* one byte at a time: each want exact, the handshake left */
        AgentPreamble p;
        agent_preamble_init(&p);
        size_t off = 0;
        int r = 0;
        while (r == 0) {
                size_t want = agent_preamble_want(&p);
                CU_ASSERT_FATAL(want > 0 && off + want <= n);
                r = agent_preamble_feed(&p, buf + off, 1);
                off++;
        }
        CU_ASSERT_EQUAL(r, 1);
        CU_ASSERT_EQUAL(off, n);
        CU_ASSERT_EQUAL(agent_preamble_want(&p), 0);
        size_t len;
        const char *pl = agent_preamble_payload(&p, &len);
        CU_ASSERT_EQUAL(len, strlen(text));
        CU_ASSERT(memcmp(pl, text, len) == 0);

        /* as much as it wants each time: two reads, the header then the rest */
        agent_preamble_init(&p);
        CU_ASSERT_EQUAL(agent_preamble_want(&p), 4);
        CU_ASSERT_EQUAL(agent_preamble_feed(&p, buf, 4), 0);
        CU_ASSERT_EQUAL(agent_preamble_want(&p), strlen(text));
        CU_ASSERT_EQUAL(agent_preamble_feed(&p, buf + 4, strlen(text)), 1);
        /* more than wanted: refused */
        agent_preamble_init(&p);
        CU_ASSERT_EQUAL(agent_preamble_feed(&p, buf, 5), -EINVAL);

        /* too long, empty, a huge length: refused at the header */
        static const uint32_t lens[] = { AGENT_PREAMBLE_MAX + 1, 0, 0x7fffffff, 0xffffffff };
        for (size_t i = 0; i < sizeof lens / sizeof *lens; i++) {
                unsigned char h[4] = { (unsigned char) (lens[i] >> 24), (unsigned char) (lens[i] >> 16),
                                       (unsigned char) (lens[i] >> 8), (unsigned char) lens[i] };
                agent_preamble_init(&p);
                GLEAN_TEST_CHECK(agent_preamble_feed(&p, h, 4) == -EMSGSIZE, "length %u taken", lens[i]);
        }
        /* the longest allowed */
        char big[AGENT_PREAMBLE_MAX];
        memset(big, 'x', sizeof big);
        n = frame(buf, big, sizeof big);
        agent_preamble_init(&p);
        CU_ASSERT_EQUAL(agent_preamble_feed(&p, buf, 4), 0);
        CU_ASSERT_EQUAL(agent_preamble_feed(&p, buf + 4, n - 4), 1);
}

/* ---- the sandbox's spec ---- */

static ClassAd *job_ad(const char *extra) {
        char text[2048];
        snprintf(text, sizeof text,
                 "[ Cmd = \"bin/prog\"; Iwd = \"/home/u/run\"; Owner = \"nobody\"; In = \"data/in.txt\"; "
                 "Out = \"out.txt\"; Err = \"/home/u/logs/err.txt\"; Arguments = \"a b\" %s ]",
                 extra);
        ClassAd *ad = NULL;
        CaError err;
        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) >= 0);
        return ad;
}

static AgentJobSpec *spec_of(const ClassAd *job) {
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        AgentRunAs runas = { .slot_user = "nobody", .allow_runas_owner = true };
        int r = agent_jobspec_from_ad(job, &runas, "/var/lib/glean/execute", "slot1", &spec, why, sizeof why);
        GLEAN_TEST_CHECK(r == 0, "jobspec: %d %s", r, why);
        return spec;
}

static void test_sandbox_spec(void) {
        if (geteuid() != 0) {
                /* an agent that is not root runs jobs as itself only: Owner nobody is refused */
                CU_PASS("not root: the spec of Owner nobody cannot be built");
                return;
        }
        ClassAd *job = job_ad("");
        AgentJobSpec *plain = spec_of(job), *spec = spec_of(job);
        CU_ASSERT_FATAL(plain && spec);
        /* not transferring: as it was */
        CU_ASSERT_STRING_EQUAL(plain->iwd, "/home/u/run");
        CU_ASSERT_STRING_EQUAL(plain->argv[0], "/home/u/run/bin/prog");
        CU_ASSERT_STRING_EQUAL(plain->in, "/home/u/run/data/in.txt");
        CU_ASSERT_FALSE(plain->scratch_kept);

        char why[256] = "";
        CU_ASSERT_EQUAL(agent_jobspec_sandbox(spec, job, why, sizeof why), 0);
        char want[512];
        CU_ASSERT_STRING_EQUAL(spec->iwd, spec->scratch);
        CU_ASSERT(strncmp(spec->scratch, "/var/lib/glean/execute/dir_slot1_", 33) == 0);
        snprintf(want, sizeof want, "%s/prog", spec->scratch);
        CU_ASSERT_STRING_EQUAL(spec->argv[0], want);
        CU_ASSERT_STRING_EQUAL(spec->argv[1], "a");
        snprintf(want, sizeof want, "%s/in.txt", spec->scratch);
        CU_ASSERT_STRING_EQUAL(spec->in, want);
        snprintf(want, sizeof want, "%s/_condor_stdout", spec->scratch);
        CU_ASSERT_STRING_EQUAL(spec->out, want);
        snprintf(want, sizeof want, "%s/_condor_stderr", spec->scratch);
        CU_ASSERT_STRING_EQUAL(spec->err, want);
        CU_ASSERT_TRUE(spec->scratch_kept);
        /* the environment points at the sandbox */
        bool scratch_env = false;
        snprintf(want, sizeof want, "_CONDOR_SCRATCH_DIR=%s", spec->scratch);
        for (char **e = spec->envp; *e; e++)
                scratch_env |= strcmp(*e, want) == 0;
        CU_ASSERT_TRUE(scratch_env);
        agent_jobspec_free(spec);
        agent_jobspec_free(plain);
        classad_free(job);

        /* TransferExecutable = false, TransferIn/Out = false: those stay */
        job = job_ad("; TransferExecutable = false; TransferIn = false; TransferOut = false");
        spec = spec_of(job);
        CU_ASSERT_EQUAL(agent_jobspec_sandbox(spec, job, why, sizeof why), 0);
        CU_ASSERT_STRING_EQUAL(spec->argv[0], "/home/u/run/bin/prog");
        CU_ASSERT_STRING_EQUAL(spec->in, "/home/u/run/data/in.txt");
        CU_ASSERT_STRING_EQUAL(spec->out, "/home/u/run/out.txt");
        snprintf(want, sizeof want, "%s/_condor_stderr", spec->scratch);
        CU_ASSERT_STRING_EQUAL(spec->err, want);
        agent_jobspec_free(spec);
        classad_free(job);

        /* /dev/null stays nothing; a name without a last component is refused */
        job = job_ad("; Out = \"/dev/null\"");
        spec = spec_of(job);
        CU_ASSERT_EQUAL(agent_jobspec_sandbox(spec, job, why, sizeof why), 0);
        CU_ASSERT_PTR_NULL(spec->out);
        agent_jobspec_free(spec);
        classad_free(job);
        job = job_ad("; Cmd = \"/home/u/run/bin/\"");
        spec = spec_of(job);
        why[0] = 0;
        CU_ASSERT_EQUAL(agent_jobspec_sandbox(spec, job, why, sizeof why), -EINVAL);
        CU_ASSERT_PTR_NOT_NULL(strstr(why, "Cmd"));
        CU_ASSERT_FALSE(spec->scratch_kept);
        CU_ASSERT_STRING_EQUAL(spec->iwd, "/home/u/run"); /* refused: unchanged */
        agent_jobspec_free(spec);
        classad_free(job);
}

static CU_TestInfo grant_tests[] = {
        { "grants", test_grants },
        { "grants refused", test_grants_refused },
        { "100000 grants and one more", test_grants_many },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo preamble_tests[] = {
        { "preamble read exactly", test_preamble },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo sandbox_tests[] = {
        { "the spec of a run that travels", test_sandbox_spec },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "grants", NULL, NULL, NULL, NULL, grant_tests },
        { "preamble", NULL, NULL, NULL, NULL, preamble_tests },
        { "sandbox", NULL, NULL, NULL, NULL, sandbox_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

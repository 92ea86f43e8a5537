/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-identity.c — who a request is, on the real glean-negotiator
 * (daemon-test.h): a fake agent relays users' requests (RelayUser), a user
 * on the unix socket (the test, root) submits directly.
 *
 *   - identity attributes are literals: an AccountingGroup, NiceUser,
 *     Owner or AcctGroupUser that is an expression is refused, with a
 *     reason that says so; an accounting attribute that differs between
 *     the procs of one submission is refused;
 *   - accounting names: bob naming alice (AcctGroupUser, or
 *     +AccountingGroup = "alice") is refused, naming the rule; a group of
 *     ACCOUNTING_GROUPS_ALLOWED_bob is accepted and charged to
 *     group.bob@domain; a group nobody allowed is refused; an administrator
 *     may name anyone; SUBMIT_REQUIREMENT_<Name> refuses with its _REASON;
 *   - administrators are names, relayed from allowed agents only: an agent
 *     whose caller's uid is an administrator's uid here but whose name is
 *     mallory gets no administrator's rights; the administrator's name
 *     relayed by an agent not in ADMINISTRATORS_RELAYED_BY neither; from
 *     one in it, yes; a relayed root is no administrator by default;
 *   - the RemoteUser, RemoteOwner and AccountingGroup of a slot our claim
 *     holds are the queue's (the submitter charged), not the agent's.
 */
#define _GNU_SOURCE
#include "daemon-test.h"

/* The Reply of a Submit relayed by a for user (RelayUid uid) with the
 * cluster's extra attributes and procs (ClassAd list text). */
static ClassAd *relay_submit(Agent *a, int64_t rid, const char *user, int uid, const char *extra, const char *procs) {
        char text[2048];
        snprintf(text, sizeof text,
                 "[ Command = \"Submit\"; RequestId = %" PRId64 "; RelayUser = \"%s\"; RelayUid = %d; "
                 "Cluster = [ %s%s%s ]; Procs = { %s } ]",
                 rid, user, uid, submit_cluster, extra ? "; " : "", extra ? extra : "", procs ? procs : "[]");
        CU_ASSERT(agent_send_text(a, text));
        return agent_wait_reply(a, rid, 5);
}

static char *reason_of(const ClassAd *m) {
        char *why = NULL;
        if (m)
                classad_eval_string(m, "Reason", MODE, &why);
        return why;
}

/* The submit is refused with a Reason that has needle. */
static void expect_refused(ClassAd *m, const char *needle, const char *what) {
        char *why = reason_of(m);
        GLEAN_TEST_CHECK(m && !reply_ok(m) && why && strstr(why, needle), "%s: refused (%s), reason: %s", what,
                         needle, why ? why : m ? "(none)" : "(no reply)");
        free(why);
        classad_free(m);
}

static int64_t expect_accepted(ClassAd *m, const char *what) {
        char *why = reason_of(m);
        int64_t cluster = ad_int(m, "ClusterId");
        GLEAN_TEST_CHECK(reply_ok(m) && cluster > 0, "%s: accepted (%s)", what, why ? why : m ? "" : "no reply");
        free(why);
        classad_free(m);
        return cluster;
}

static void test_literals(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake1"));

        expect_refused(relay_submit(&a, 1, "bob", 1007,
                                    "AccountingGroup = ifThenElse(random(2) == 0, \"bob\", \"alice\")", NULL),
                       "AccountingGroup must be a literal", "AccountingGroup an expression");
        expect_refused(relay_submit(&a, 2, "bob", 1007, "AccountingGroup = strcat(\"b\", \"ob\")", NULL),
                       "AccountingGroup must be a literal", "AccountingGroup strcat");
        expect_refused(relay_submit(&a, 3, "bob", 1007, "NiceUser = random(2) == 0", NULL),
                       "NiceUser must be a literal", "NiceUser an expression");
        expect_refused(relay_submit(&a, 4, "bob", 1007, "Owner = ifThenElse(random(2) == 0, \"bob\", \"alice\")", NULL),
                       "Owner must be a literal", "Owner an expression");
        expect_refused(relay_submit(&a, 5, "bob", 1007, NULL,
                                    "[ AcctGroupUser = ifThenElse(true, \"bob\", \"x\") ]"),
                       "AcctGroupUser of proc 0 must be a literal", "a proc's AcctGroupUser an expression");
        expect_refused(relay_submit(&a, 6, "bob", 1007, NULL,
                                    "[ AccountingGroup = \"bob\" ], [ AccountingGroup = \"alice\" ]"),
                       "differs between the jobs", "AccountingGroup per proc");
        /* Literals of one's own: fine. */
        expect_accepted(relay_submit(&a, 7, "bob", 1007, "AccountingGroup = \"bob\"; NiceUser = true", NULL),
                        "AccountingGroup bob's own, NiceUser true");
        agent_close(&a);
        rig_done(&r, false);
}

static void test_accounting_names(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, "ACCOUNTING_GROUPS_ALLOWED_bob = group_x\n"
                                     "SUBMIT_REQUIREMENT_NAMES = SmallMemory\n"
                                     "SUBMIT_REQUIREMENT_SmallMemory = RequestMemory <= 4096\n"
                                     "SUBMIT_REQUIREMENT_SmallMemory_REASON = strcat(\"at most 4096 MB for \", Owner)\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake2"));

        /* What `accounting_group_user = alice` in bob's file makes. */
        expect_refused(relay_submit(&a, 1, "bob", 1007, "AcctGroupUser = \"alice\"; AccountingGroup = \"alice\"", NULL),
                       "the accounting user \"alice\" is not bob", "accounting_group_user = alice");
        expect_refused(relay_submit(&a, 2, "bob", 1007, "AccountingGroup = \"alice\"", NULL),
                       "the accounting user \"alice\" is not bob", "+AccountingGroup = \"alice\"");
        expect_refused(relay_submit(&a, 3, "bob", 1007, "AccountingGroup = \"group_x.alice\"", NULL),
                       "the accounting user \"alice\" is not bob", "group_x.alice");
        expect_refused(relay_submit(&a, 4, "bob", 1007,
                                    "AcctGroup = \"group_y\"; AcctGroupUser = \"bob\"; AccountingGroup = \"group_y.bob\"",
                                    NULL),
                       "bob may not use the accounting group \"group_y\" (allowed by ACCOUNTING_GROUPS_ALLOWED",
                       "a group bob is not allowed");
        expect_refused(relay_submit(&a, 5, "bob", 1007,
                                    "AcctGroup = \"group_y\"; AcctGroupUser = \"bob\"; AccountingGroup = \"group_x.bob\"",
                                    NULL),
                       "AcctGroup \"group_y\" disagrees", "AcctGroup and AccountingGroup disagree");
        expect_refused(relay_submit(&a, 6, "carol", 1008, "AccountingGroup = \"group_x.carol\"", NULL),
                       "carol may not use the accounting group \"group_x\"", "group_x is bob's only");
        /* SUBMIT_REQUIREMENT_<Name> with its reason. */
        expect_refused(relay_submit(&a, 7, "bob", 1007, NULL, "[ RequestMemory = 8192 ]"),
                       "SUBMIT_REQUIREMENT_SmallMemory: at most 4096 MB for bob", "SUBMIT_REQUIREMENT");

        /* An allowed group: accepted, charged to group_x.bob. */
        int64_t c = expect_accepted(relay_submit(&a, 8, "bob", 1007,
                                                 "AcctGroup = \"group_x\"; AcctGroupUser = \"bob\"; "
                                                 "AccountingGroup = \"group_x.bob\"",
                                                 NULL),
                                    "an allowed group");
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        ClassAd *req = agent_expect(&a, GLEAN_CMD_REQUEST_CLAIM, 10);
        GLEAN_TEST_CHECK(req != NULL, "the job of group_x.bob is matched");
        classad_free(req);
        char needle[128];
        snprintf(needle, sizeof needle, "job %" PRId64 ".0 of group_x.bob@test.pool matched", c);
        GLEAN_TEST_CHECK(log_has(&r, needle, 2), "charged to group_x.bob@test.pool: %s", needle);

        /* An administrator (root, on the unix socket) may name anyone. */
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        GLEAN_TEST_CHECK(user_submit_with(u, 1, "AcctGroupUser = \"alice\"; AccountingGroup = \"group_y.alice\"") > 0,
                         "root charges group_y.alice");
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* Drain of the agent's own machine, relayed for user (uid): Ok (forwarded
 * to the agent, answered) or refused with EPERM. */
static bool relayed_admin(Agent *a, int64_t rid, const char *user, int uid) {
        char text[512];
        snprintf(text, sizeof text,
                 "[ Command = \"Drain\"; RequestId = %" PRId64 "; Machine = \"%s\"; RelayUser = \"%s\"; "
                 "RelayUid = %d ]",
                 rid, a->machine, user, uid);
        CU_ASSERT(agent_send_text(a, text));
        double end = now_mono() + 5;
        while (now_mono() < end) {
                GleanCommand cmd;
                ClassAd *m = agent_recv(a, 5000, &cmd);
                if (!m)
                        break;
                if (cmd == GLEAN_CMD_DRAIN) { /* forwarded: the manager took it as an administrator's */
                        agent_reply(a, m, true, NULL);
                        classad_free(m);
                        continue;
                }
                if (cmd == GLEAN_CMD_REPLY && ad_int(m, "RequestId") == rid) {
                        bool ok = reply_ok(m);
                        classad_free(m);
                        return ok;
                }
                classad_free(m);
        }
        CU_FAIL("no reply to the relayed Drain");
        return false;
}

static void test_relayed_admins(void) {
        /* "daemon" is uid 1 here; the agent's passwd maps that uid to mallory. */
        struct passwd *pw = getpwnam("daemon");
        if (!pw) {
                CU_PASS("no user daemon here");
                return;
        }
        int uid = (int) pw->pw_uid;
        Rig r;
        Agent a, b;
        CU_ASSERT_FATAL(rig_init(&r, "ADMINISTRATORS = daemon\nADMINISTRATORS_RELAYED_BY = trusted\n"));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake3"));
        CU_ASSERT_FATAL(agent_connect(&b, &r, "trusted"));

        GLEAN_TEST_CHECK(!relayed_admin(&a, 1, "mallory", uid), "mallory (an administrator's uid) is not one");
        GLEAN_TEST_CHECK(!relayed_admin(&a, 2, "daemon", uid),
                         "the administrator relayed by an agent not in ADMINISTRATORS_RELAYED_BY: not one");
        GLEAN_TEST_CHECK(!relayed_admin(&a, 3, "root", 0), "a relayed root is no administrator");
        GLEAN_TEST_CHECK(!relayed_admin(&b, 4, "mallory", uid), "mallory from the trusted agent: not one either");
        GLEAN_TEST_CHECK(relayed_admin(&b, 5, "daemon", uid), "the administrator from the trusted agent: one");
        GLEAN_TEST_CHECK(relayed_admin(&b, 6, "daemon@test.pool", uid), "named with the pool's UID_DOMAIN too");
        GLEAN_TEST_CHECK(!relayed_admin(&b, 7, "daemon@elsewhere", uid), "another UID_DOMAIN: refused");
        agent_close(&a);
        agent_close(&b);
        rig_done(&r, false);
}

/* The agent's word on who runs on a slot our claim holds is replaced by
 * the queue's: an agent (or a job ad evaluated there) that says alice runs
 * does not make the matchmaker weigh alice. */
static void test_slot_identity(void) {
        Rig r;
        Agent a;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake4"));
        agent_slot(&a, "slot1", "Unclaimed", "Idle", NULL);
        int64_t c = expect_accepted(relay_submit(&a, 1, "bob", 1007, NULL, NULL), "bob's job");
        char *claim = run_one(&a, "slot1", c);
        CU_ASSERT_FATAL(claim != NULL);
        char text[1024];
        snprintf(text, sizeof text,
                 "[ Command = \"SlotUpdate\"; ClaimId = \"%s\"; SlotAd = [ Name = \"slot1@fake4\"; Machine = \"fake4\"; "
                 "MyType = \"Machine\"; State = \"Claimed\"; Activity = \"Busy\"; Cpus = 1; Memory = 1024; "
                 "Disk = 100000; SlotWeight = Cpus; OpSys = \"LINUX\"; Arch = \"X86_64\"; START = true; "
                 "Requirements = START; Rank = 0; CurrentRank = 0; SlotID = 1; RemoteUser = \"alice@test.pool\"; "
                 "RemoteOwner = \"alice\"; AccountingGroup = \"alice@test.pool\" ] ]",
                 claim);
        CU_ASSERT(agent_send_text(&a, text));
        usleep(300000);
        int u = user_connect(&r);
        CU_ASSERT_FATAL(u >= 0);
        ClassAd *m = user_call(u, "[ Command = \"QuerySlots\"; RequestId = 9 ]"), **ads = NULL;
        size_t n = 0;
        char *ru = NULL, *ro = NULL;
        bool group = true;
        if (m && glean_msg_get_ad_list(m, "Ads", &ads, &n) >= 0 && n == 1) {
                classad_eval_string(ads[0], "RemoteUser", MODE, &ru);
                classad_eval_string(ads[0], "RemoteOwner", MODE, &ro);
                group = classad_has(ads[0], "AccountingGroup");
        }
        GLEAN_TEST_CHECK(ru && strcmp(ru, "bob@test.pool") == 0 && ro && strcmp(ro, "bob") == 0 && !group,
                         "the slot runs bob's job, whatever the agent says: RemoteUser %s, RemoteOwner %s%s",
                         ru ? ru : "-", ro ? ro : "-", group ? ", an AccountingGroup" : "");
        free(ru);
        free(ro);
        glean_ad_list_free(ads, n);
        classad_free(m);
        free(claim);
        close(u);
        agent_close(&a);
        rig_done(&r, false);
}

/* An agent speaks for its own machine's slots only: a claim granted, or an
 * event sent, naming another machine's slot in full is not about that
 * slot. */
static void test_foreign_slot_name(void) {
        Rig r;
        Agent a, b;
        CU_ASSERT_FATAL(rig_init(&r, NULL));
        CU_ASSERT_FATAL(rig_start(&r));
        CU_ASSERT_FATAL(agent_connect(&a, &r, "fake5"));
        CU_ASSERT_FATAL(agent_connect(&b, &r, "fake6"));
        agent_slot(&b, "slot1", "Unclaimed", "Idle", NULL);
        int64_t c = expect_accepted(relay_submit(&b, 1, "bob", 1007, NULL, NULL), "bob's job");
        ClassAd *req = agent_expect(&b, GLEAN_CMD_REQUEST_CLAIM, 10);
        CU_ASSERT_FATAL(req != NULL);
        char *claim = agent_grant(&b, req, "slot1@fake5", 30);
        classad_free(req);
        GLEAN_TEST_CHECK(log_has(&r, "claimed slot1@fake6 for job", 5),
                         "the claim of job %" PRId64 " stays on fake6's slot", c);
        GLEAN_TEST_CHECK(!log_has(&r, "claimed slot1@fake5", 0), "fake6 cannot move a claim onto fake5's slot");
        free(claim);
        agent_close(&a);
        agent_close(&b);
        rig_done(&r, false);
}

static CU_TestInfo tests[] = {
        { "identity attributes are literals", test_literals },
        { "accounting names: one's own, allowed groups, requirements", test_accounting_names },
        { "administrators relayed by name, from allowed agents", test_relayed_admins },
        { "who runs on a slot of ours is the queue's word", test_slot_identity },
        { "an agent names its own machine's slots only", test_foreign_slot_name },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "negotiator identities", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        atexit(kill_leftovers);
        if (access(nego_bin(), X_OK) != 0)
                return glean_test_skip("%s is not built", nego_bin());
        return glean_test_main(argc, argv, suites);
}

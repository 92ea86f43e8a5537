/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-msg.c — messages (common/proto.h): every command valid; each
 * required attribute missing and mistyped, optional ones mistyped or out of
 * range (table driven, with the reason text checked); payloads that are not
 * ClassAds; nested ads and lists of ads; replies echoing RequestId; the
 * Hello handshake on both sides (the server a child process).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "classad.h"
#include "proto.h"
#include "test-util.h"

#define ELEMS(x) (sizeof(x) / sizeof((x)[0]))

/* A valid message of every command. */
static const struct {
        GleanCommand cmd;
        const char *name;
        const char *text;
} valid[] = {
        { GLEAN_CMD_HELLO, "Hello", "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"glean\" ]" },
        { GLEAN_CMD_REPLY, "Reply", "[ Command = \"Reply\"; RequestId = 3; Ok = true ]" },
        { GLEAN_CMD_STATUS, "Status", "[ Command = \"Status\" ]" },
        { GLEAN_CMD_SLOT_UPDATE, "SlotUpdate",
          "[ Command = \"SlotUpdate\"; SlotAd = [ Name = \"slot1@host\"; State = \"Unclaimed\"; Memory = 1024 ] ]" },
        { GLEAN_CMD_MATCH, "Match", "[ Command = \"Match\"; Slot = \"slot1@host\"; ClaimId = \"c1\" ]" },
        { GLEAN_CMD_REQUEST_CLAIM, "RequestClaim",
          "[ Command = \"RequestClaim\"; Slot = \"slot1\"; ClaimId = \"c1\"; "
          "JobAd = [ RequestCpus = 1; RequestMemory = 512; Requirements = TARGET.Memory >= 512 ]; Rank = 2.5 ]" },
        { GLEAN_CMD_ACTIVATE_CLAIM, "ActivateClaim",
          "[ Command = \"ActivateClaim\"; ClaimId = \"c1\"; JobAd = [ Cmd = \"/bin/true\"; Owner = \"alice\" ] ]" },
        { GLEAN_CMD_KEEP_ALIVE, "KeepAlive", "[ Command = \"KeepAlive\"; ClaimId = \"c1\" ]" },
        { GLEAN_CMD_DEACTIVATE, "Deactivate", "[ Command = \"Deactivate\"; ClaimId = \"c1\"; Graceful = false ]" },
        { GLEAN_CMD_RELEASE, "Release", "[ Command = \"Release\"; ClaimId = \"c1\" ]" },
        { GLEAN_CMD_VACATE, "Vacate", "[ Command = \"Vacate\"; Slot = \"slot2\"; Fast = true ]" },
        { GLEAN_CMD_DRAIN, "Drain", "[ Command = \"Drain\"; How = \"quick\"; Reason = \"kernel update\" ]" },
        { GLEAN_CMD_CANCEL_DRAIN, "CancelDrain", "[ Command = \"CancelDrain\" ]" },
        { GLEAN_CMD_SHUTDOWN, "Shutdown", "[ Command = \"Shutdown\"; Fast = false; Peaceful = true ]" },
        { GLEAN_CMD_JOB_EXIT, "JobExit",
          "[ Command = \"JobExit\"; ClaimId = \"c1\"; ExitBySignal = false; ExitCode = 3; CoreDumped = false; "
          "RemoteUserCpu = 1.5; RemoteSysCpu = 0; RemoteWallClockTime = 10.25; ResidentSetSize = 2048; "
          "ImageSize = 4096; Reason = \"vacated\" ]" },
        { GLEAN_CMD_EVENT, "Event",
          "[ Command = \"Event\"; Slot = \"slot1\"; State = \"Claimed\"; Activity = \"Busy\"; Transition = 4 ]" },
        { GLEAN_CMD_SUBMIT, "Submit",
          "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\" ]; Procs = { [ ], [ Arguments = \"1\" ] }; "
          "More = false ]" },
        { GLEAN_CMD_QUERY, "Query",
          "[ Command = \"Query\"; Ids = \"1 2.3\"; Constraint = \"JobStatus == 1\"; Attrs = \"Owner\"; "
          "Limit = 10 ]" },
        { GLEAN_CMD_HISTORY, "History", "[ Command = \"History\"; Limit = 5 ]" },
        { GLEAN_CMD_QUERY_SLOTS, "QuerySlots", "[ Command = \"QuerySlots\"; Constraint = \"Cpus > 1\" ]" },
        { GLEAN_CMD_JOB_ACTION, "JobAction",
          "[ Command = \"JobAction\"; Action = \"Hold\"; Ids = \"4.1\"; Reason = \"by hand\" ]" },
        { GLEAN_CMD_USER_PRIO, "UserPrio",
          "[ Command = \"UserPrio\"; Action = \"setfactor\"; Submitter = \"a@pool\"; Value = 2 ]" },
        { GLEAN_CMD_WAIT, "Wait", "[ Command = \"Wait\"; Id = \"1.0\"; Timeout = 2.5 ]" },
        { GLEAN_CMD_TRANSFER_GRANT, "TransferGrant",
          "[ Command = \"TransferGrant\"; TransferId = \"0123456789abcdef0123456789abcdef\"; TransferKey = \"00\"; "
          "JobAd = [ ClusterId = 1; ProcId = 0 ]; ExecuteMachine = \"node1\" ]" },
        { GLEAN_CMD_TRANSFER_REVOKE, "TransferRevoke",
          "[ Command = \"TransferRevoke\"; TransferId = \"0123456789abcdef0123456789abcdef\" ]" },
        { GLEAN_CMD_USER_LOG_EVENT, "UserLogEvent",
          "[ Command = \"UserLogEvent\"; ClusterId = 1; ProcId = 0; Seq = 3; Owner = \"alice\"; "
          "Path = \"/home/alice/job.log\"; Text = \"000 (001.000.000) ...\" ]" },
};

static ClassAd *parse_ok(const char *text) {
        ClassAd *ad = NULL;
        GleanCommand c;
        char why[256] = "";
        int r = glean_msg_parse(text, strlen(text), &ad, &c, why, sizeof(why));

        GLEAN_TEST_CHECK(r == 0 && ad, "glean_msg_parse(%s) = %d: %s", text, r, why);
        return ad;
}

/* parse text, expect -EBADMSG and exactly this reason */
static void check_refused(const char *what, const char *text, const char *want_why) {
        ClassAd *ad = NULL;
        GleanCommand c = GLEAN_CMD__MAX;
        char why[256] = "";
        int r = glean_msg_parse(text, strlen(text), &ad, &c, why, sizeof(why));

        GLEAN_TEST_CHECK(r == -EBADMSG, "%s: glean_msg_parse(%s) = %d, want -EBADMSG", what, text, r);
        GLEAN_TEST_CHECK(strcmp(why, want_why) == 0, "%s: why \"%s\", want \"%s\"", what, why, want_why);
        GLEAN_TEST_CHECK(!ad && c == GLEAN_CMD__MAX, "%s: outputs set on failure", what);
        classad_free(ad);
}

static void test_every_command_valid(void) {
        CU_ASSERT_EQUAL(ELEMS(valid), GLEAN_CMD__MAX);
        for (size_t i = 0; i < ELEMS(valid); i++) {
                ClassAd *ad = NULL;
                GleanCommand c = GLEAN_CMD__MAX;
                char why[256] = "";
                int r = glean_msg_parse(valid[i].text, strlen(valid[i].text), &ad, &c, why, sizeof(why));

                GLEAN_TEST_CHECK(r == 0, "%s: %d: %s", valid[i].name, r, why);
                GLEAN_TEST_CHECK(c == valid[i].cmd, "%s: command %d, want %d", valid[i].name, c, valid[i].cmd);
                GLEAN_TEST_CHECK(glean_command_name(valid[i].cmd) &&
                                 strcmp(glean_command_name(valid[i].cmd), valid[i].name) == 0,
                                 "glean_command_name(%d) = %s", valid[i].cmd, glean_command_name(valid[i].cmd));
                GleanCommand back;
                GLEAN_TEST_CHECK(glean_command_from_name(valid[i].name, &back) == 0 && back == valid[i].cmd,
                                 "glean_command_from_name(%s)", valid[i].name);
                /* the same ad through glean_msg_new + validate */
                if (ad) {
                        ClassAd *fresh = NULL;
                        CU_ASSERT_EQUAL(glean_msg_new(valid[i].cmd, &fresh), 0);
                        CU_ASSERT_EQUAL(classad_update(fresh, ad), 0);
                        GLEAN_TEST_CHECK(glean_msg_validate(fresh, &c, why, sizeof(why)) == 0 && c == valid[i].cmd,
                                         "%s: validate after glean_msg_new: %s", valid[i].name, why);
                        classad_free(fresh);
                }
                classad_free(ad);
        }
        CU_ASSERT_PTR_NULL(glean_command_name(GLEAN_CMD__MAX));
        CU_ASSERT_PTR_NULL(glean_command_name((GleanCommand) -1));
        ClassAd *ad = NULL;
        CU_ASSERT_EQUAL(glean_msg_new(GLEAN_CMD__MAX, &ad), -EINVAL);
        CU_ASSERT_PTR_NULL(ad);
}

/* Every required attribute of every command, missing and mistyped. */
static const struct {
        GleanCommand cmd;
        const char *attr;
        const char *type;      /* as the reason names it */
        const char *wrong;     /* a value of another type */
        const char *wrong_type;
        const char *condition; /* for conditionally required ones */
} required[] = {
        { GLEAN_CMD_HELLO, "ProtocolVersion", "integer", "\"1\"", "string", NULL },
        { GLEAN_CMD_HELLO, "Peer", "string", "7", "integer", NULL },
        { GLEAN_CMD_REPLY, "Ok", "boolean", "1", "integer", NULL },
        { GLEAN_CMD_SLOT_UPDATE, "SlotAd", "classad", "\"slot1\"", "string", NULL },
        { GLEAN_CMD_MATCH, "Slot", "string", "1", "integer", NULL },
        { GLEAN_CMD_MATCH, "ClaimId", "string", "true", "boolean", NULL },
        { GLEAN_CMD_REQUEST_CLAIM, "Slot", "string", "{ \"slot1\" }", "list", NULL },
        { GLEAN_CMD_REQUEST_CLAIM, "ClaimId", "string", "2.5", "real", NULL },
        { GLEAN_CMD_REQUEST_CLAIM, "JobAd", "classad", "{ [ a = 1 ] }", "list", NULL },
        { GLEAN_CMD_ACTIVATE_CLAIM, "ClaimId", "string", "[ id = 1 ]", "classad", NULL },
        { GLEAN_CMD_ACTIVATE_CLAIM, "JobAd", "classad", "\"[ Cmd = 1 ]\"", "string", NULL },
        { GLEAN_CMD_KEEP_ALIVE, "ClaimId", "string", "error", "error", NULL },
        { GLEAN_CMD_DEACTIVATE, "ClaimId", "string", "1", "integer", NULL },
        { GLEAN_CMD_RELEASE, "ClaimId", "string", "1", "integer", NULL },
        { GLEAN_CMD_JOB_EXIT, "ClaimId", "string", "1", "integer", NULL },
        { GLEAN_CMD_JOB_EXIT, "ExitBySignal", "boolean", "\"false\"", "string", NULL },
        { GLEAN_CMD_JOB_EXIT, "ExitCode", "integer", "3.0", "real", "ExitBySignal is false" },
        { GLEAN_CMD_EVENT, "Slot", "string", "1", "integer", NULL },
        { GLEAN_CMD_EVENT, "State", "string", "1", "integer", NULL },
        { GLEAN_CMD_EVENT, "Activity", "string", "1", "integer", NULL },
};

static const char *valid_text(GleanCommand c) {
        for (size_t i = 0; i < ELEMS(valid); i++)
                if (valid[i].cmd == c)
                        return valid[i].text;
        return NULL;
}

/* text of the valid message of c with attr removed, or set to value */
static char *variant(GleanCommand c, const char *attr, const char *value) {
        const char *text = valid_text(c);
        ClassAd *ad = NULL;
        CaError err = {};
        char *out;

        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) == 0);
        if (value) {
                CU_ASSERT_FATAL(classad_set_expr_text(ad, attr, value, CA_MODE_OLD, &err) == 0);
        } else {
                CU_ASSERT_FATAL(classad_delete(ad, attr) == 0);
        }
        out = classad_unparse(ad);
        classad_free(ad);
        CU_ASSERT_FATAL(out != NULL);
        return out;
}

static void test_required_attributes(void) {
        for (size_t i = 0; i < ELEMS(required); i++) {
                const char *cmd = glean_command_name(required[i].cmd);
                char want[256], what[128];
                char *text;

                snprintf(what, sizeof(what), "%s without %s", cmd, required[i].attr);
                text = variant(required[i].cmd, required[i].attr, NULL);
                if (required[i].condition)
                        snprintf(want, sizeof(want), "%s: missing required attribute %s (%s; required when %s)", cmd,
                                 required[i].attr, required[i].type, required[i].condition);
                else
                        snprintf(want, sizeof(want), "%s: missing required attribute %s (%s)", cmd, required[i].attr,
                                 required[i].type);
                check_refused(what, text, want);
                free(text);

                snprintf(what, sizeof(what), "%s with %s = %s", cmd, required[i].attr, required[i].wrong);
                text = variant(required[i].cmd, required[i].attr, required[i].wrong);
                snprintf(want, sizeof(want), "%s: attribute %s has type %s, expected %s", cmd, required[i].attr,
                         required[i].wrong_type, required[i].type);
                check_refused(what, text, want);
                free(text);

                snprintf(what, sizeof(what), "%s with %s undefined", cmd, required[i].attr);
                text = variant(required[i].cmd, required[i].attr, "NoSuchAttribute");
                snprintf(want, sizeof(want), "%s: attribute %s is undefined, expected %s", cmd, required[i].attr,
                         required[i].type);
                check_refused(what, text, want);
                free(text);
        }
}

/* Everything else that is refused. */
static const struct {
        const char *what;
        const char *text;
        const char *why;
} refused[] = {
        { "empty", "", "not a ClassAd: line 1, column 1: unexpected end of input, expected '[' to begin a ClassAd" },
        { "truncated", "[ Command = \"Status\";\n  Slot = ",
          "not a ClassAd: line 2, column 10: unexpected end of input" },
        { "no Command", "[ Slot = \"slot1\" ]", "no Command attribute" },
        { "Command not a string", "[ Command = 4 ]", "attribute Command has type integer, expected string" },
        { "unknown Command", "[ Command = \"Frobnicate\" ]", "unknown Command \"Frobnicate\"" },
        { "RequestId a string", "[ Command = \"Status\"; RequestId = \"7\" ]",
          "Status: attribute RequestId has type string, expected integer" },
        { "empty required string", "[ Command = \"KeepAlive\"; ClaimId = \"\" ]",
          "KeepAlive: attribute ClaimId is an empty string" },
        { "Status Slot an integer", "[ Command = \"Status\"; Slot = 1 ]",
          "Status: attribute Slot has type integer, expected string" },
        { "Vacate Fast a string", "[ Command = \"Vacate\"; Fast = \"yes\" ]",
          "Vacate: attribute Fast has type string, expected boolean" },
        { "Deactivate Graceful an integer", "[ Command = \"Deactivate\"; ClaimId = \"c\"; Graceful = 1 ]",
          "Deactivate: attribute Graceful has type integer, expected boolean" },
        { "Drain How unknown", "[ Command = \"Drain\"; How = \"slowly\" ]",
          "Drain: attribute How is \"slowly\", expected one of graceful, quick, fast" },
        { "Drain Reason a list", "[ Command = \"Drain\"; Reason = { \"a\" } ]",
          "Drain: attribute Reason has type list, expected string" },
        { "Shutdown Peaceful a string", "[ Command = \"Shutdown\"; Peaceful = \"true\" ]",
          "Shutdown: attribute Peaceful has type string, expected boolean" },
        { "RequestClaim Rank a string",
          "[ Command = \"RequestClaim\"; Slot = \"s\"; ClaimId = \"c\"; JobAd = [ a = 1 ]; Rank = \"high\" ]",
          "RequestClaim: attribute Rank has type string, expected real" },
        { "RequestClaim ByPriority an integer",
          "[ Command = \"RequestClaim\"; Slot = \"s\"; ClaimId = \"c\"; JobAd = [ a = 1 ]; ByPriority = 1 ]",
          "RequestClaim: attribute ByPriority has type integer, expected boolean" },
        { "Hello unknown Peer", "[ Command = \"Hello\"; ProtocolVersion = 1; Peer = \"mallory\" ]",
          "Hello: attribute Peer is \"mallory\", expected one of glean, glean-agent, glean-negotiator" },
        { "Reply not Ok without Reason", "[ Command = \"Reply\"; Ok = false ]",
          "Reply: missing required attribute Reason (string; required when Ok is false)" },
        { "Reply Slots not a list", "[ Command = \"Reply\"; Ok = true; Slots = [ a = 1 ] ]",
          "Reply: attribute Slots has type classad, expected list of classads" },
        { "Reply Slots with a number", "[ Command = \"Reply\"; Ok = true; Slots = { [ a = 1 ], 2 } ]",
          "Reply: element 1 of attribute Slots has type integer, expected classad" },
        { "Reply negative LeaseDuration", "[ Command = \"Reply\"; Ok = true; LeaseDuration = -5 ]",
          "Reply: attribute LeaseDuration is -5, expected at least 0" },
        { "JobExit by signal without ExitSignal", "[ Command = \"JobExit\"; ClaimId = \"c\"; ExitBySignal = true ]",
          "JobExit: missing required attribute ExitSignal (integer; required when ExitBySignal is true)" },
        { "JobExit ExitCode 300", "[ Command = \"JobExit\"; ClaimId = \"c\"; ExitBySignal = false; ExitCode = 300 ]",
          "JobExit: attribute ExitCode is 300, expected 0 to 255" },
        { "JobExit ExitSignal 0",
          "[ Command = \"JobExit\"; ClaimId = \"c\"; ExitBySignal = true; ExitSignal = 0 ]",
          "JobExit: attribute ExitSignal is 0, expected 1 to 64" },
        { "JobExit negative cpu",
          "[ Command = \"JobExit\"; ClaimId = \"c\"; ExitBySignal = true; ExitSignal = 9; RemoteUserCpu = -1.5 ]",
          "JobExit: attribute RemoteUserCpu is -1.5, expected at least 0" },
        { "JobExit ImageSize a real",
          "[ Command = \"JobExit\"; ClaimId = \"c\"; ExitBySignal = true; ExitSignal = 9; ImageSize = 1.0 ]",
          "JobExit: attribute ImageSize has type real, expected integer" },
        { "Event Transition a string",
          "[ Command = \"Event\"; Slot = \"s\"; State = \"Owner\"; Activity = \"Idle\"; Transition = \"x\" ]",
          "Event: attribute Transition has type string, expected integer" },
};

static void test_refused(void) {
        for (size_t i = 0; i < ELEMS(refused); i++)
                check_refused(refused[i].what, refused[i].text, refused[i].why);

        /* a NUL byte inside the payload */
        static const char nul[] = "[ Command = \"Status\" ]\0[";
        char why[256] = "";
        CU_ASSERT_EQUAL(glean_msg_parse(nul, sizeof(nul) - 1, NULL, NULL, why, sizeof(why)), -EBADMSG);
        GLEAN_TEST_CHECK(strncmp(why, "not a ClassAd: line 1, column 23: ", 34) == 0, "NUL byte: %s", why);
        /* why may be NULL */
        CU_ASSERT_EQUAL(glean_msg_parse("[]", 2, NULL, NULL, NULL, 0), -EBADMSG);
        /* a small why buffer is truncated, not overrun */
        char small[8];
        CU_ASSERT_EQUAL(glean_msg_parse("[]", 2, NULL, NULL, small, sizeof(small)), -EBADMSG);
        CU_ASSERT_STRING_EQUAL(small, "no Comm");
}

/* What is accepted beyond the minimum. */
static void test_accepted_variants(void) {
        static const char *const texts[] = {
                /* command names are case-insensitive */
                "[ command = \"status\" ]",
                /* values are evaluated */
                "[ Command = strcat(\"Keep\", \"Alive\"); ClaimId = strcat(\"c\", \"1\") ]",
                "[ Command = \"Match\"; Base = \"slot\"; Slot = strcat(Base, \"1\"); ClaimId = \"x\" ]",
                /* integers are reals too */
                "[ Command = \"RequestClaim\"; Slot = \"s\"; ClaimId = \"c\"; JobAd = []; Rank = 3 ]",
                /* unknown attributes are ignored */
                "[ Command = \"Status\"; FutureExtension = { 1, 2 }; RequestId = 99 ]",
                /* an optional attribute that is UNDEFINED is as if absent */
                "[ Command = \"Vacate\"; Slot = undefined ]",
                /* the condition decides */
                "[ Command = \"JobExit\"; ClaimId = \"c\"; ExitBySignal = true; ExitSignal = 9; CoreDumped = true ]",
                "[ Command = \"Reply\"; Ok = true; Slots = {} ]",
                "[ Command = \"Reply\"; Ok = false; Reason = \"no such claim\"; RequestId = 1 ]",
                "[ Command = \"Hello\"; ProtocolVersion = 2; Peer = \"glean-negotiator\" ]",
                "  [ Command = \"CancelDrain\" ]  \n",
        };

        for (size_t i = 0; i < ELEMS(texts); i++)
                classad_free(parse_ok(texts[i]));
}

static void test_nested_ad(void) {
        ClassAd *job = NULL, *msg = NULL, *parsed = NULL, *back = NULL, *other = NULL;
        const char *job_text = "[ Owner = \"alice\"; RequestMemory = 512; "
                               "Requirements = TARGET.Memory >= RequestMemory && TARGET.OpSys == \"LINUX\"; "
                               "Rank = TARGET.Mips * 2 ]";
        CaError err = {};
        char why[256] = "";
        GleanCommand c;

        CU_ASSERT_FATAL(classad_parse(job_text, strlen(job_text), CA_MODE_OLD, &job, &err) == 0);
        CU_ASSERT_EQUAL_FATAL(glean_msg_new(GLEAN_CMD_ACTIVATE_CLAIM, &msg), 0);
        CU_ASSERT_EQUAL(classad_set_string(msg, "ClaimId", "c42"), 0);
        CU_ASSERT_EQUAL(glean_msg_set_ad(msg, "JobAd", job), 0);

        /* over the wire and back */
        char *text = classad_unparse(msg);
        CU_ASSERT_FATAL(text != NULL);
        CU_ASSERT_EQUAL_FATAL(glean_msg_parse(text, strlen(text), &parsed, &c, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(c, GLEAN_CMD_ACTIVATE_CLAIM);
        free(text);

        CU_ASSERT_EQUAL_FATAL(glean_msg_get_ad(parsed, "JobAd", &back), 0);
        char *a = classad_unparse(job), *b = classad_unparse(back);
        GLEAN_TEST_CHECK(a && b && strcmp(a, b) == 0, "nested ad changed: %s -> %s", a, b);
        free(a);
        free(b);
        /* expressions kept, not evaluated */
        char *req = classad_unparse_attr(back, "Requirements");
        CU_ASSERT_STRING_EQUAL(req, "TARGET.Memory >= RequestMemory && TARGET.OpSys == \"LINUX\"");
        free(req);
        /* standalone: changing the copy leaves the message alone */
        CU_ASSERT_EQUAL(classad_set_int(back, "RequestMemory", 4096), 0);
        CU_ASSERT_EQUAL(glean_msg_get_ad(parsed, "JobAd", &other), 0);
        int64_t mem = 0;
        CU_ASSERT_EQUAL(classad_eval_int(other, "RequestMemory", CA_MODE_OLD, &mem), 0);
        CU_ASSERT_EQUAL(mem, 512);
        /* it evaluates on its own, in a match */
        ClassAd *machine = NULL;
        const char *m_text = "[ Memory = 1024; OpSys = \"LINUX\"; Mips = 10; Requirements = true ]";
        CU_ASSERT_FATAL(classad_parse(m_text, strlen(m_text), CA_MODE_OLD, &machine, &err) == 0);
        CU_ASSERT(classad_match(other, machine, CA_MODE_OLD));
        CU_ASSERT_EQUAL(classad_rank(other, machine, CA_MODE_OLD), 20.0);
        classad_free(machine);

        ClassAd *none = NULL;
        CU_ASSERT_EQUAL(glean_msg_get_ad(parsed, "NoSuch", &none), -ENOENT);
        CU_ASSERT_EQUAL(glean_msg_get_ad(parsed, "ClaimId", &none), -EINVAL);
        CU_ASSERT_PTR_NULL(none);

        classad_free(other);
        classad_free(back);
        classad_free(parsed);
        classad_free(msg);
        classad_free(job);
}

static void test_ad_list(void) {
        ClassAd *slots[3] = {}, *msg = NULL, **got = NULL;
        size_t n = 99;
        CaError err = {};

        for (int i = 0; i < 3; i++) {
                char text[128];
                snprintf(text, sizeof(text), "[ Name = \"slot%d@host\"; Memory = %d * 1024; Start = KeyboardIdle > 15 ]",
                         i + 1, i + 1);
                CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &slots[i], &err) == 0);
        }
        for (size_t k = 0; k <= 3; k++) {
                CU_ASSERT_EQUAL_FATAL(glean_msg_reply(NULL, true, NULL, &msg), 0);
                CU_ASSERT_EQUAL(glean_msg_set_ad_list(msg, "Slots", slots, k), 0);
                char why[256] = "";
                CU_ASSERT_EQUAL(glean_msg_validate(msg, NULL, why, sizeof(why)), 0);
                char *text = classad_unparse(msg);
                ClassAd *parsed = parse_ok(text);
                free(text);
                CU_ASSERT_EQUAL_FATAL(glean_msg_get_ad_list(parsed, "Slots", &got, &n), 0);
                CU_ASSERT_EQUAL(n, k);
                for (size_t i = 0; i < n; i++) {
                        char *x = classad_unparse(slots[i]), *y = classad_unparse(got[i]);
                        GLEAN_TEST_CHECK(strcmp(x, y) == 0, "slot %zu of %zu: %s -> %s", i, k, x, y);
                        free(x);
                        free(y);
                }
                glean_ad_list_free(got, n);
                got = NULL;
                classad_free(parsed);
                classad_free(msg);
        }
        /* not a list / not ads / absent */
        const char *text = "[ Command = \"Reply\"; Ok = true; A = 1; B = { [ x = 1 ], 2 } ]";
        ClassAd *ad = parse_ok(text);
        CU_ASSERT_EQUAL(glean_msg_get_ad_list(ad, "A", &got, &n), -EINVAL);
        CU_ASSERT_EQUAL(glean_msg_get_ad_list(ad, "B", &got, &n), -EINVAL);
        CU_ASSERT_EQUAL(glean_msg_get_ad_list(ad, "C", &got, &n), -ENOENT);
        CU_ASSERT_PTR_NULL(got);
        classad_free(ad);
        glean_ad_list_free(NULL, 0);
        for (int i = 0; i < 3; i++)
                classad_free(slots[i]);
}

static void check_reply(const ClassAd *reply, bool has_id, int64_t id, bool ok, const char *reason) {
        char why[256] = "";
        GleanCommand c = GLEAN_CMD__MAX;
        int64_t got_id = -1;
        bool got_ok = !ok;
        char *got_reason = NULL;

        CU_ASSERT_PTR_NOT_NULL_FATAL(reply);
        GLEAN_TEST_CHECK(glean_msg_validate(reply, &c, why, sizeof(why)) == 0 && c == GLEAN_CMD_REPLY,
                         "reply does not validate: %s", why);
        int r = classad_eval_int(reply, "RequestId", CA_MODE_OLD, &got_id);
        GLEAN_TEST_CHECK(has_id ? r == 0 && got_id == id : r == -ENOENT, "RequestId: %d %lld, want %s %lld", r,
                         (long long) got_id, has_id ? "present" : "absent", (long long) id);
        CU_ASSERT_EQUAL(classad_eval_bool(reply, "Ok", CA_MODE_OLD, &got_ok), 0);
        CU_ASSERT_EQUAL(got_ok, ok);
        r = classad_eval_string(reply, "Reason", CA_MODE_OLD, &got_reason);
        GLEAN_TEST_CHECK(reason ? r == 0 && strcmp(got_reason, reason) == 0 : r == -ENOENT,
                         "Reason: %s, want %s", got_reason ? got_reason : "(none)", reason ? reason : "(none)");
        free(got_reason);
}

static void test_reply(void) {
        ClassAd *req = parse_ok("[ Command = \"KeepAlive\"; ClaimId = \"c\"; RequestId = 12345678901 ]");
        ClassAd *noid = parse_ok("[ Command = \"Status\" ]");
        ClassAd *reply = NULL;

        CU_ASSERT_EQUAL(glean_msg_reply(req, true, NULL, &reply), 0);
        check_reply(reply, true, 12345678901LL, true, NULL);
        classad_free(reply);

        CU_ASSERT_EQUAL(glean_msg_reply(req, false, "no such claim", &reply), 0);
        check_reply(reply, true, 12345678901LL, false, "no such claim");
        classad_free(reply);

        CU_ASSERT_EQUAL(glean_msg_reply(noid, false, NULL, &reply), 0);
        check_reply(reply, false, 0, false, "unspecified error");
        classad_free(reply);

        CU_ASSERT_EQUAL(glean_msg_reply(NULL, true, "fine", &reply), 0);
        check_reply(reply, false, 0, true, "fine");
        classad_free(reply);

        /* a refused request still gets its RequestId back */
        const char *bad = "[ Command = \"Match\"; RequestId = 5 ]";
        char why[256] = "";
        CU_ASSERT_EQUAL(glean_msg_parse(bad, strlen(bad), NULL, NULL, why, sizeof(why)), -EBADMSG);
        CU_ASSERT_EQUAL(glean_msg_reply_invalid(bad, strlen(bad), why, &reply), 0);
        check_reply(reply, true, 5, false, "Match: missing required attribute Slot (string)");
        classad_free(reply);
        CU_ASSERT_EQUAL(glean_msg_reply_invalid("[ garbage", 9, "not a ClassAd", &reply), 0);
        check_reply(reply, false, 0, false, "not a ClassAd");
        classad_free(reply);

        classad_free(req);
        classad_free(noid);
}

static void test_hello(void) {
        ClassAd *hello = NULL;
        char why[256] = "";
        GleanCommand c;

        CU_ASSERT_EQUAL_FATAL(glean_hello_new("glean", &hello), 0);
        CU_ASSERT_EQUAL(glean_msg_validate(hello, &c, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(c, GLEAN_CMD_HELLO);
        CU_ASSERT_EQUAL(glean_hello_check(hello, why, sizeof(why)), 0);
        classad_free(hello);
        CU_ASSERT_EQUAL(glean_hello_new("", &hello), -EINVAL);
        CU_ASSERT_EQUAL(glean_hello_new(NULL, &hello), -EINVAL);

        hello = parse_ok("[ Command = \"Hello\"; ProtocolVersion = 2; Peer = \"glean\" ]");
        CU_ASSERT_EQUAL(glean_hello_check(hello, why, sizeof(why)), -EPROTONOSUPPORT);
        CU_ASSERT_STRING_EQUAL(why, "protocol version 2 not supported (this agent speaks 1)");
        CU_ASSERT_EQUAL(glean_hello_check_as(hello, "negotiator", why, sizeof(why)), -EPROTONOSUPPORT);
        CU_ASSERT_STRING_EQUAL(why, "protocol version 2 not supported (this negotiator speaks 1)");
        classad_free(hello);

        hello = parse_ok("[ Command = \"Status\" ]");
        CU_ASSERT_EQUAL(glean_hello_check(hello, why, sizeof(why)), -EBADMSG);
        CU_ASSERT_STRING_EQUAL(why, "expected Hello, got \"Status\"");
        classad_free(hello);
}

static void test_send_recv(void) {
        int fds[2];
        ClassAd *msg = NULL, *got = NULL;
        GleanCommand c;
        char why[256] = "";

        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0, fds) == 0);
        CU_ASSERT_EQUAL_FATAL(glean_msg_new(GLEAN_CMD_DRAIN, &msg), 0);
        CU_ASSERT_EQUAL(classad_set_string(msg, "How", "fast"), 0);
        CU_ASSERT_EQUAL(classad_set_string(msg, "Reason", "line 1\nline \"2\""), 0);
        CU_ASSERT_EQUAL(classad_set_int(msg, "RequestId", 8), 0);
        CU_ASSERT_EQUAL(glean_msg_send(fds[0], msg, 1000), 0);
        CU_ASSERT_EQUAL_FATAL(glean_msg_recv(fds[1], 1000, &got, &c, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(c, GLEAN_CMD_DRAIN);
        char *reason = NULL;
        CU_ASSERT_EQUAL(classad_eval_string(got, "Reason", CA_MODE_OLD, &reason), 0);
        CU_ASSERT_STRING_EQUAL(reason, "line 1\nline \"2\"");
        free(reason);
        classad_free(got);
        got = NULL;

        /* an invalid message arrives as -EBADMSG with its reason */
        const char *bad = "[ Command = \"Release\" ]";
        CU_ASSERT_EQUAL(glean_frame_write(fds[0], bad, strlen(bad), 1000), 0);
        CU_ASSERT_EQUAL(glean_msg_recv(fds[1], 1000, &got, &c, why, sizeof(why)), -EBADMSG);
        CU_ASSERT_STRING_EQUAL(why, "Release: missing required attribute ClaimId (string)");

        CU_ASSERT_EQUAL(glean_msg_recv(fds[1], 50, &got, &c, why, sizeof(why)), -ETIMEDOUT);
        CU_ASSERT_STRING_EQUAL(why, "timed out waiting for a message");
        close(fds[0]);
        CU_ASSERT_EQUAL(glean_msg_recv(fds[1], 1000, &got, &c, why, sizeof(why)), -EPIPE);
        CU_ASSERT_STRING_EQUAL(why, "connection closed");
        CU_ASSERT_PTR_NULL(got);
        close(fds[1]);
        classad_free(msg);
}

/* ---- the handshake against a server in a child process ---- */

typedef enum ServerKind {
        SERVER_GOOD,      /* answers Hello */
        SERVER_REFUSES,   /* answers Reply Ok=false */
        SERVER_NEWER,     /* answers Hello with version 2 */
        SERVER_CLOSES,    /* closes without a word */
        SERVER_SILENT,    /* says nothing until killed */
        SERVER_STATUS,    /* answers with a Status */
} ServerKind;

static char tmpdir[64];

static void server(int lfd, ServerKind kind) {
        int fd = -1;
        ClassAd *in = NULL, *out = NULL;
        GleanCommand c;
        char why[256];

        for (int i = 0; i < 500 && fd < 0; i++) {
                fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                if (fd < 0)
                        usleep(10000);
        }
        if (fd < 0)
                _exit(2);
        if (glean_msg_recv(fd, 5000, &in, &c, why, sizeof(why)) < 0 || c != GLEAN_CMD_HELLO)
                _exit(3);
        if (glean_hello_check(in, why, sizeof(why)) < 0)
                _exit(4);
        switch (kind) {
        case SERVER_GOOD:
                if (glean_hello_new("glean-agent", &out) < 0)
                        _exit(5);
                break;
        case SERVER_REFUSES:
                if (glean_msg_reply(in, false, "protocol version 1 not supported (this agent speaks 9)", &out) < 0)
                        _exit(5);
                break;
        case SERVER_NEWER:
                if (glean_hello_new("glean-agent", &out) < 0 || classad_set_int(out, "ProtocolVersion", 2) < 0)
                        _exit(5);
                break;
        case SERVER_CLOSES:
                _exit(0);
        case SERVER_SILENT:
                pause();
                _exit(0);
        case SERVER_STATUS:
                if (glean_msg_new(GLEAN_CMD_STATUS, &out) < 0)
                        _exit(5);
                break;
        }
        if (glean_msg_send(fd, out, 5000) < 0)
                _exit(6);
        /* wait for the client to close */
        char b;
        while (read(fd, &b, 1) > 0)
                ;
        _exit(0);
}

static void test_client_connect(void) {
        static const struct {
                ServerKind kind;
                int want;
                const char *why_prefix;
        } rows[] = {
                { SERVER_GOOD, 0, "" },
                { SERVER_REFUSES, -EPROTONOSUPPORT,
                  "the server refused the connection: protocol version 1 not supported (this agent speaks 9)" },
                { SERVER_NEWER, -EPROTONOSUPPORT, "protocol version 2 not supported (this glean speaks 1)" },
                { SERVER_CLOSES, -EPIPE, "no answer to Hello from " },
                { SERVER_SILENT, -ETIMEDOUT, "no answer to Hello from " },
                { SERVER_STATUS, -EPROTO, "the server answered Hello with Status" },
        };
        char path[128];

        snprintf(path, sizeof(path), "%s/agent.sock", tmpdir);
        for (size_t i = 0; i < ELEMS(rows); i++) {
                int lfd = -1, fd = -1, status = 0;
                char why[256] = "";

                CU_ASSERT_EQUAL_FATAL(glean_sock_listen_unix(path, 0600, &lfd), 0);
                pid_t pid = fork();
                CU_ASSERT_FATAL(pid >= 0);
                if (pid == 0)
                        server(lfd, rows[i].kind);
                int r = glean_client_connect(path, "glean", 500, &fd, why, sizeof(why));
                GLEAN_TEST_CHECK(r == rows[i].want, "row %zu: glean_client_connect = %d (%s), want %d", i, r, why,
                                 rows[i].want);
                GLEAN_TEST_CHECK(strncmp(why, rows[i].why_prefix, strlen(rows[i].why_prefix)) == 0,
                                 "row %zu: why \"%s\", want \"%s...\"", i, why, rows[i].why_prefix);
                if (r == 0) {
                        CU_ASSERT(fd >= 0);
                        close(fd);
                } else {
                        CU_ASSERT_EQUAL(fd, -1);
                }
                if (rows[i].kind == SERVER_SILENT)
                        kill(pid, SIGKILL);
                CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
                if (rows[i].kind != SERVER_SILENT)
                        GLEAN_TEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "row %zu: server status %#x",
                                         i, status);
                close(lfd);
                unlink(path);
        }

        /* nobody there */
        int fd = -1;
        char why[256] = "";
        CU_ASSERT_EQUAL(glean_client_connect(path, "glean", 500, &fd, why, sizeof(why)), -ENOENT);
        GLEAN_TEST_CHECK(strstr(why, "cannot connect to ") == why, "why: %s", why);
}

static int suite_init(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-test-msg-XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void) {
        char path[128];

        snprintf(path, sizeof(path), "%s/agent.sock", tmpdir);
        unlink(path);
        return rmdir(tmpdir) == 0 ? 0 : -1;
}

static CU_TestInfo tests[] = {
        { "every command valid", test_every_command_valid },
        { "required attributes missing, mistyped, undefined", test_required_attributes },
        { "refused messages", test_refused },
        { "accepted variants", test_accepted_variants },
        { "nested JobAd", test_nested_ad },
        { "list of ads", test_ad_list },
        { "replies echo RequestId", test_reply },
        { "hello", test_hello },
        { "send and receive", test_send_recv },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo handshake_tests[] = {
        { "client connect", test_client_connect },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "msg", NULL, NULL, NULL, NULL, tests },
        { "handshake", suite_init, suite_clean, NULL, NULL, handshake_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

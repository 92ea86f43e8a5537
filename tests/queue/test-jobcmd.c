/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-jobcmd.c — the user commands (queue/jobcmd.h) without
 * sockets: every reply is a message glean_msg_parse accepts, under
 * GLEAN_FRAME_MAX; Submit in parts (one reply, to the last), the client's
 * split into parts; Query and History with Ids, Constraint, Attrs and
 * Limit, big listings in pieces; JobAction's Results, who may act, the
 * vacating of running jobs; UserPrio; Wait.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "common/proto.h"
#include "queue/jobcmd.h"
#include "queue-test.h"
#include "test-util.h"

/* ---- a sink that keeps every reply ---- */

typedef struct Got {
        ClassAd **replies;
        size_t n;
        size_t max_len;
        int vacates;
        char vacated[8][64];
} Got;

static int got_send(void *userdata, const char *payload, size_t len) {
        Got *g = userdata;
        ClassAd *msg = NULL;
        GleanCommand cmd;
        char why[256] = "";
        int r;

        GLEAN_TEST_CHECK(len < GLEAN_FRAME_MAX && strlen(payload) == len, "a reply of %zu bytes", len);
        r = glean_msg_parse(payload, len, &msg, &cmd, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0 && cmd == GLEAN_CMD_REPLY, "reply does not parse: %s: %.200s", why, payload);
        g->replies = realloc(g->replies, (g->n + 1) * sizeof(*g->replies));
        g->replies[g->n++] = msg;
        if (len > g->max_len)
                g->max_len = len;
        return 0;
}

static void got_vacate(void *userdata, const Job *job, const char *claim_id, const char *reason) {
        Got *g = userdata;

        (void) job;
        (void) reason;
        if (g->vacates < 8)
                snprintf(g->vacated[g->vacates], sizeof(g->vacated[0]), "%s", claim_id);
        g->vacates++;
}

static JobCmdSink sink_of(Got *g) {
        return (JobCmdSink) { got_send, got_vacate, g, NULL };
}

static void got_clear(Got *g) {
        glean_ad_list_free(g->replies, g->n);
        *g = (Got) {};
}

static bool ok_of(const ClassAd *reply) {
        bool ok = false;
        (void) classad_eval_bool(reply, "Ok", CA_MODE_OLD, &ok);
        return ok;
}

/* Every ad of a listing's pieces (checking More and Count). */
static size_t listing(const Got *g, const char *list, ClassAd ***ret, int64_t *ret_count) {
        ClassAd **all = NULL;
        size_t n = 0;

        for (size_t i = 0; i < g->n; i++) {
                ClassAd **ads = NULL;
                size_t k = 0;
                bool more = false;
                int r;

                (void) classad_eval_bool(g->replies[i], "More", CA_MODE_OLD, &more);
                GLEAN_TEST_CHECK(more == (i + 1 < g->n), "piece %zu of %zu: More %d", i, g->n, more);
                r = glean_msg_get_ad_list(g->replies[i], list, &ads, &k);
                GLEAN_TEST_CHECK(r == 0, "piece %zu: no %s (%d)", i, list, r);
                all = realloc(all, (n + k + 1) * sizeof(*all));
                if (k)
                        memcpy(all + n, ads, k * sizeof(*ads));
                n += k;
                free(ads);
        }
        *ret_count = -1;
        if (g->n)
                (void) classad_eval_int(g->replies[g->n - 1], "Count", CA_MODE_OLD, ret_count);
        *ret = all;
        return n;
}

static ClassAd *request(const char *text) {
        ClassAd *ad = NULL;
        GleanCommand cmd;
        char why[256] = "";
        int r = glean_msg_parse(text, strlen(text), &ad, &cmd, why, sizeof(why));

        GLEAN_TEST_CHECK_FATAL(r == 0, "request '%s': %s", text, why);
        return ad;
}

typedef int ListingFn(JobQueue *q, const ClassAd *request, const JobCmdSink *sink);

/* The request `text` to fn (jobcmd_query, jobcmd_history), which must
 * take it: the ads of its listing in *ret, its Count in *ret_count; the
 * replies stay in g. */
static size_t ask(ListingFn *fn, JobQueue *q, Got *g, const char *text, ClassAd ***ret, int64_t *ret_count) {
        JobCmdSink sink = sink_of(g);
        ClassAd *req = request(text);

        CU_ASSERT_EQUAL(fn(q, req, &sink), 0);
        classad_free(req);
        return listing(g, "Ads", ret, ret_count);
}

/* A JobAction `text` by who: jobcmd_job_action's result; the replies in g. */
static int act(JobQueue *q, const QueueRequester *who, Got *g, const char *text, double now) {
        JobCmdSink sink = sink_of(g);
        ClassAd *req = request(text);
        int r = jobcmd_job_action(q, who, req, now, &sink);

        classad_free(req);
        return r;
}

/* A Submit part `text` by alice: jobcmd_submit's result; the replies in g. */
static int submit(JobCmdSubmit **pending, JobQueue *q, Got *g, const char *text) {
        JobCmdSink sink = sink_of(g);
        ClassAd *req = request(text);
        int r = jobcmd_submit(pending, q, qt_user("alice"), req, QT_T0, &sink);

        classad_free(req);
        return r;
}

/* The same by user. */
static int submit_by(const char *user, JobCmdSubmit **pending, JobQueue *q, Got *g, const char *text) {
        JobCmdSink sink = sink_of(g);
        ClassAd *req = request(text);
        int r = jobcmd_submit(pending, q, qt_user(user), req, QT_T0, &sink);

        classad_free(req);
        return r;
}

/* A listing's ads and the replies freed, for the next request. */
static void done(Got *g, ClassAd **ads, size_t n) {
        glean_ad_list_free(ads, n);
        got_clear(g);
}

/* ---- Submit ---- */

static void test_submit_parts(void) {
        QT t;
        Got g = {};
        JobCmdSubmit *pending = NULL;
        const char *cluster = "Cluster = [ Cmd = \"/bin/sleep\"; Requirements = true; Owner = \"eve\" ]";
        char text[512];
        int r;

        qt_open(&t, qt_new_db(), NULL);
        for (int part = 0; part < 3; part++) {
                snprintf(text, sizeof(text),
                         "[ Command = \"Submit\"; RequestId = %d; %s; Procs = { [ Args = \"%d.a\" ], [ ] }; More = %s ]",
                         10 + part, cluster, part, part < 2 ? "true" : "false");
                r = submit(&pending, t.q, &g, text);
                CU_ASSERT_EQUAL(r, part < 2 ? 0 : 1);
                CU_ASSERT_EQUAL(g.n, part < 2 ? 0 : 1);
                CU_ASSERT((pending != NULL) == (part < 2));
        }
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "ClusterId"), 1);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "NumProcs"), 6);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "RequestId"), 12);
        CU_ASSERT_EQUAL(queue_size(t.q), 6);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 4)->ad, "Args"), "2.a");
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 4)->ad, "Owner"), "alice");
        got_clear(&g);

        /* A part whose Cluster differs: one refusal, at the end; nothing queued. */
        for (int part = 0; part < 2; part++) {
                snprintf(text, sizeof(text), "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/%s\"; Requirements = true ];"
                         " Procs = { [ ] }; More = %s ]", part ? "other" : "true", part < 1 ? "true" : "false");
                CU_ASSERT_EQUAL(submit(&pending, t.q, &g, text), 0);
        }
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[0], "Reason"), "differs"));
        CU_ASSERT_EQUAL(queue_size(t.q), 6);
        CU_ASSERT_PTR_NULL(pending);
        got_clear(&g);

        /* Refused by the queue: the reason goes back. */
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; Cluster = [ Requirements = true ]; Procs = { [ ] } ]"),
                        0);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[0], "Reason"), "no Cmd"));
        got_clear(&g);

        /* A connection that closes mid-submit: the caller frees what is pending. */
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                               "Procs = { [ ] }; More = true ]"),
                        0);
        CU_ASSERT_PTR_NOT_NULL(pending);
        jobcmd_submit_free(pending);
        pending = NULL;
        qt_close(&t);
}

#define SID "0123456789abcdef0123456789abcdef"

/* A submission sent again with its SubmitId (its answer lost) gets the
 * first answer and queues nothing, also after a restart; another user's
 * same id is a submission of its own. */
static void test_submit_repeated(void) {
        const char *cl = "Cluster = [ Cmd = \"/bin/true\"; Requirements = true ]";
        char path[128], text[512];
        JobCmdSubmit *pending = NULL;
        Got g = {};
        QT t;

        snprintf(path, sizeof(path), "%s", qt_new_db());
        qt_open(&t, path, NULL);
        /* alice's, in two parts. */
        for (int part = 0; part < 2; part++) {
                snprintf(text, sizeof(text),
                         "[ Command = \"Submit\"; RequestId = %d; SubmitId = \"%s\"; %s; Procs = { [ ], [ ] }; "
                         "More = %s ]",
                         part + 1, SID, cl, part ? "false" : "true");
                CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g, text), part ? 1 : 0);
        }
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "ClusterId"), 1);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "NumProcs"), 4);
        CU_ASSERT_FALSE(classad_has(g.replies[0], "Repeated"));
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 3)->ad, "GleanSubmitId"), SID);
        got_clear(&g);

        /* Sent again (one part this time, other procs): the first answer, nothing queued. */
        snprintf(text, sizeof(text), "[ Command = \"Submit\"; RequestId = 9; SubmitId = \"%s\"; %s; Procs = { [ ] } ]",
                 SID, cl);
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g, text), 0);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "ClusterId"), 1);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "NumProcs"), 4);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "RequestId"), 9);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "Repeated"), 1);
        CU_ASSERT_EQUAL(queue_size(t.q), 4);
        CU_ASSERT_EQUAL(queue_next_cluster(t.q), 2);
        got_clear(&g);

        /* bob's same id: his own submission. */
        CU_ASSERT_EQUAL(submit_by("bob", &pending, t.q, &g, text), 1);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "ClusterId"), 2);
        CU_ASSERT_FALSE(classad_has(g.replies[0], "Repeated"));
        CU_ASSERT_EQUAL(queue_size(t.q), 5);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 2, 0)->ad, "Owner"), "bob");
        got_clear(&g);

        /* A submitted GleanSubmitId is the queue's to set: dropped without SubmitId. */
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g,
                                  "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                                  "GleanSubmitId = \"" SID "\" ]; Procs = { [ GleanSubmitId = \"x\" ] } ]"),
                        1);
        CU_ASSERT_FALSE(classad_has(qt_job(t.q, 3, 0)->ad, "GleanSubmitId"));
        got_clear(&g);

        /* Kept across a restart. */
        qt_close(&t);
        qt_open(&t, path, NULL);
        snprintf(text, sizeof(text), "[ Command = \"Submit\"; RequestId = 10; SubmitId = \"%s\"; %s; Procs = { [ ] } ]",
                 SID, cl);
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g, text), 0);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "ClusterId"), 1);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "Repeated"), 1);
        CU_ASSERT_EQUAL(submit_by("bob", &pending, t.q, &g, text), 0);
        CU_ASSERT_EQUAL_FATAL(g.n, 2);
        CU_ASSERT_EQUAL(qt_int(g.replies[1], "ClusterId"), 2);
        CU_ASSERT_EQUAL(queue_size(t.q), 6);
        got_clear(&g);

        /* A malformed id, and parts that disagree: refused, nothing queued. */
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g,
                                  "[ Command = \"Submit\"; SubmitId = \"short\"; Cluster = [ Cmd = \"x\"; "
                                  "Requirements = true ]; Procs = { [ ] } ]"),
                        0);
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g,
                                  "[ Command = \"Submit\"; SubmitId = \"" SID "ff\"; Cluster = [ Cmd = \"x\"; "
                                  "Requirements = true ]; Procs = { [ ] }; More = true ]"),
                        0);
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g,
                                  "[ Command = \"Submit\"; SubmitId = \"" SID "ee\"; Cluster = [ Cmd = \"x\"; "
                                  "Requirements = true ]; Procs = { [ ] } ]"),
                        0);
        CU_ASSERT_EQUAL_FATAL(g.n, 2);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[0], "Reason"), "SubmitId is not"));
        CU_ASSERT_FALSE(ok_of(g.replies[1]));
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[1], "Reason"), "SubmitId differs"));
        CU_ASSERT_EQUAL(queue_size(t.q), 6);
        got_clear(&g);
        qt_close(&t);
}

/* SUBMIT_IDS_PER_USER: a user's ids kept are bounded; a repeat of one of
 * them is still answered, another user is not held back. */
static void test_submit_ids_cap(void) {
        JobCmdSubmit *pending = NULL;
        char text[512];
        Got g = {};
        QT t;

        qt_open(&t, qt_new_db(), "SUBMIT_IDS_PER_USER = 2\n");
        for (int i = 0; i < 3; i++) {
                snprintf(text, sizeof(text),
                         "[ Command = \"Submit\"; SubmitId = \"%s%d\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                         "Procs = { [ ] } ]",
                         SID, i);
                CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g, text), i < 2 ? 1 : 0);
        }
        CU_ASSERT_EQUAL_FATAL(g.n, 3);
        CU_ASSERT_FALSE(ok_of(g.replies[2]));
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[2], "Reason"), "SUBMIT_IDS_PER_USER (2)"));
        CU_ASSERT_EQUAL(queue_size(t.q), 2);
        got_clear(&g);
        snprintf(text, sizeof(text),
                 "[ Command = \"Submit\"; SubmitId = \"%s1\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                 "Procs = { [ ] } ]",
                 SID);
        CU_ASSERT_EQUAL(submit_by("alice", &pending, t.q, &g, text), 0);
        CU_ASSERT_EQUAL(submit_by("bob", &pending, t.q, &g, text), 1);
        CU_ASSERT_EQUAL_FATAL(g.n, 2);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "ClusterId"), 2);
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "Repeated"), 1);
        CU_ASSERT_TRUE(ok_of(g.replies[1]));
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        got_clear(&g);
        qt_close(&t);
}

/* MAX_JOBS_PER_SUBMISSION is the central manager's too: a submission over
 * it is refused naming the limit, across parts, nothing queued. */
static void test_submit_limit(void) {
        JobCmdSubmit *pending = NULL;
        Got g = {};
        QT t;

        qt_open(&t, qt_new_db(), "MAX_JOBS_PER_SUBMISSION = 5\n");
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                               "Procs = { [ ], [ ], [ ], [ ], [ ], [ ] } ]"),
                        0);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        CU_ASSERT_STRING_EQUAL(qt_str(g.replies[0], "Reason"),
                               "submit refused: 6 jobs in one submission exceed MAX_JOBS_PER_SUBMISSION (5)");
        got_clear(&g);
        for (int part = 0; part < 2; part++)
                CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                                       part ? "[ Command = \"Submit\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                                              "Procs = { [ ], [ ], [ ] }; More = false ]"
                                            : "[ Command = \"Submit\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                                              "Procs = { [ ], [ ], [ ] }; More = true ]"),
                                0);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[0], "Reason"), "exceed MAX_JOBS_PER_SUBMISSION (5)"));
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        got_clear(&g);
        /* TotalProcs over the limit: refused at once, naming it; the rest unread. */
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; TotalProcs = 10000000; Cluster = [ Cmd = \"x\"; "
                               "Requirements = true ]; Procs = { [ ] }; More = true ]"),
                        0);
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; TotalProcs = 10000000; Cluster = [ Cmd = \"x\"; "
                               "Requirements = true ]; Procs = { [ ] } ]"),
                        0);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_STRING_EQUAL(qt_str(g.replies[0], "Reason"),
                               "submit refused: 10000000 jobs in one submission exceed MAX_JOBS_PER_SUBMISSION (5)");
        got_clear(&g);
        /* TotalProcs that lies: refused. */
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; TotalProcs = 3; Cluster = [ Cmd = \"x\"; "
                               "Requirements = true ]; Procs = { [ ] } ]"),
                        0);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_PTR_NOT_NULL(strstr(qt_str(g.replies[0], "Reason"), "TotalProcs says 3 procs, the parts held 1"));
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        got_clear(&g);
        /* Five: taken. */
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; Cluster = [ Cmd = \"x\"; Requirements = true ]; "
                               "Procs = { [ ], [ ], [ ], [ ], [ ] } ]"),
                        1);
        CU_ASSERT_EQUAL(queue_size(t.q), 5);
        got_clear(&g);
        qt_close(&t);
}

/* Who a submit says it is (jobcmd_policy_check; no policy: no group allowed). */
static void test_submit_identity(void) {
        static const struct {
                const char *cluster, *procs, *reason;
        } cases[] = {
                { "AccountingGroup = ifThenElse(random(2) == 0, \"alice\", \"bob\")", "[]",
                  "AccountingGroup must be a literal string" },
                { "NiceUser = time() > 0", "[]", "NiceUser must be a literal true or false" },
                { "User = strcat(\"bob\", \"@x\")", "[]", "User must be a literal string" },
                { "AccountingGroup = \"alice\"", "[ AccountingGroup = \"group_a.alice\" ]",
                  "AccountingGroup differs between the jobs" },
                { "AccountingGroup = \"bob\"", "[]", "the accounting user \"bob\" is not alice" },
                { "AcctGroupUser = \"bob\"", "[]", "the accounting user \"bob\" is not alice" },
                { "AccountingGroup = \"group_a.alice\"", "[]", "alice may not use the accounting group \"group_a\"" },
        };
        QT t;
        Got g = {};
        JobCmdSubmit *pending = NULL;
        char text[1024];

        qt_open(&t, qt_new_db(), NULL);
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                snprintf(text, sizeof text,
                         "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; %s ]; "
                         "Procs = { %s } ]",
                         cases[i].cluster, cases[i].procs);
                CU_ASSERT_EQUAL(submit(&pending, t.q, &g, text), 0);
                const char *why = g.n ? qt_str(g.replies[0], "Reason") : "";
                GLEAN_TEST_CHECK(g.n == 1 && !ok_of(g.replies[0]) && strstr(why, cases[i].reason),
                                 "%s: refused with \"%s\": %s", cases[i].cluster, cases[i].reason, why);
                got_clear(&g);
        }
        CU_ASSERT_EQUAL(queue_size(t.q), 0);
        /* one's own name, literally: queued */
        CU_ASSERT_EQUAL(submit(&pending, t.q, &g,
                               "[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                               "AccountingGroup = \"alice\"; NiceUser = false ]; Procs = { [] } ]"),
                        1);
        CU_ASSERT_TRUE(g.n == 1 && ok_of(g.replies[0]));
        got_clear(&g);
        /* where the files live: the relaying agent's Machine, never what the
         * submit said; nothing on the central manager's own socket */
        CU_ASSERT(!classad_has(qt_job(t.q, 1, 0)->ad, "SubmitMachine"));
        QueueRequester relayed = { .user = "alice", .uid = 1000, .machine = "submit.example.org" };
        JobCmdSink sink = sink_of(&g);
        ClassAd *req = request("[ Command = \"Submit\"; Cluster = [ Cmd = \"/bin/true\"; Requirements = true; "
                               "SubmitMachine = \"victim.example.org\" ]; Procs = { [ SubmitMachine = \"x\" ] } ]");
        CU_ASSERT_EQUAL(jobcmd_submit(&pending, t.q, &relayed, req, QT_T0, &sink), 1);
        classad_free(req);
        CU_ASSERT_TRUE(g.n == 1 && ok_of(g.replies[0]));
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 2, 0)->ad, "SubmitMachine"), "submit.example.org");
        got_clear(&g);
        qt_close(&t);
}

static void test_submit_messages(void) {
        QT t;
        Got g = {};
        JobCmdSink sink = sink_of(&g);
        JobCmdSubmit *pending = NULL;
        ClassAd **jobs = NULL, **msgs = NULL;
        size_t n = 0, n_msgs = 0;
        ConfigError err = {};
        char *text = NULL;
        int r;

        /* 3000 jobs of 600 bytes of arguments each: two frames at least. */
        CU_ASSERT_FATAL(asprintf(&text,
                                 "executable = /bin/echo\nuniverse = vanilla\narguments = %0600d $(Process)\n"
                                 "request_memory = 64\nqueue 3000\n",
                                 7) > 0);
        r = config_submit_parse_string(text, "<test>", NULL, &(ConfigSubmitOptions) { .owner = "alice", .iwd = "/tmp" },
                                       &jobs, &n, &err);
        free(text);
        GLEAN_TEST_CHECK_FATAL(r == 0 && n == 3000, "submit text: %d %s", r, err.msg);
        CU_ASSERT_EQUAL_FATAL(jobcmd_submit_messages(jobs, n, 5, &msgs, &n_msgs), 0);
        CU_ASSERT(n_msgs >= 2);

        qt_open(&t, qt_new_db(), NULL);
        for (size_t i = 0; i < n_msgs; i++) {
                char *payload = classad_unparse(msgs[i]);
                ClassAd *again = NULL;
                GleanCommand cmd;
                CU_ASSERT_FATAL(payload != NULL);
                CU_ASSERT(strlen(payload) < GLEAN_FRAME_MAX);
                CU_ASSERT_EQUAL_FATAL(glean_msg_parse(payload, strlen(payload), &again, &cmd, NULL, 0), 0);
                r = jobcmd_submit(&pending, t.q, qt_user("alice"), again, QT_T0, &sink);
                CU_ASSERT_EQUAL(r, i + 1 == n_msgs ? 1 : 0);
                classad_free(again);
                free(payload);
        }
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        CU_ASSERT_EQUAL(qt_int(g.replies[0], "NumProcs"), 3000);
        CU_ASSERT_EQUAL(queue_size(t.q), 3000);
        /* Each job's ad has what it was submitted with. */
        for (size_t i = 0; i < n; i += 999) {
                Job *j = qt_job(t.q, 1, (int64_t) i);
                ClassAdIter it = classad_iter(jobs[i]);
                const char *name;
                char *e1 = NULL;

                CU_ASSERT_PTR_NOT_NULL_FATAL(j);
                while (classad_iter_next(&it, &name, &e1)) {
                        static const char *const managed[] = { "ClusterId", "ProcId", "Owner", "QDate", "JobStatus",
                                                               "EnteredCurrentStatus", NULL };
                        bool skip = false;
                        for (const char *const *m = managed; *m; m++)
                                skip = skip || strcasecmp(*m, name) == 0;
                        if (!skip) {
                                char *e2 = classad_unparse_attr(j->ad, name);
                                GLEAN_TEST_CHECK(e2 && strcmp(e1, e2) == 0, "job %zu: %s = %s, was %s", i, name,
                                                 e2 ? e2 : "(absent)", e1);
                                free(e2);
                        }
                        free(e1);
                }
        }
        glean_ad_list_free(msgs, n_msgs);
        config_submit_free(jobs, n);
        got_clear(&g);
        qt_close(&t);
}

/* ---- Query, History ---- */

static void test_query(void) {
        QT t;
        Got g = {};
        JobCmdSink sink = sink_of(&g);
        ClassAd **ads = NULL;
        char big[1100];
        int64_t count;
        size_t n;

        qt_open(&t, qt_new_db(), NULL);
        memset(big, 'q', sizeof(big) - 1);
        big[sizeof(big) - 1] = 0;
        {
                char extra[1200];
                snprintf(extra, sizeof(extra), "Payload = \"%s\"", big);
                qt_submit(t.q, "alice", extra, 2500, QT_T0);
        }
        qt_submit(t.q, "bob", "", 10, QT_T0);

        /* Everything: in pieces under the frame limit. */
        n = ask(jobcmd_query, t.q, &g, "[ Command = \"Query\"; RequestId = 3 ]", &ads, &count);
        CU_ASSERT(g.n >= 3);
        CU_ASSERT(g.max_len < GLEAN_FRAME_MAX);
        CU_ASSERT_EQUAL(n, 2510);
        CU_ASSERT_EQUAL(count, 2510);
        CU_ASSERT_EQUAL(qt_int(g.replies[g.n - 1], "RequestId"), 3);
        CU_ASSERT_EQUAL(qt_int(ads[2509], "ClusterId"), 2);
        CU_ASSERT_EQUAL(qt_int(ads[2509], "ProcId"), 9);
        done(&g, ads, n);

        /* Ids, Constraint, Attrs, Limit. */
        n = ask(jobcmd_query, t.q, &g,
                "[ Command = \"Query\"; Ids = \"2, 1.7\"; Constraint = \"ProcId < 8\"; "
                "Attrs = \"ClusterId ProcId Owner NoSuch\"; Limit = 5 ]",
                &ads, &count);
        CU_ASSERT_EQUAL(count, 9);
        CU_ASSERT_EQUAL_FATAL(n, 5);
        CU_ASSERT_EQUAL(classad_size(ads[0]), 3);
        CU_ASSERT_STRING_EQUAL(qt_str(ads[0], "Owner"), "bob");
        CU_ASSERT_FALSE(classad_has(ads[0], "Cmd"));
        done(&g, ads, n);

        /* Count only. */
        n = ask(jobcmd_query, t.q, &g, "[ Command = \"Query\"; Constraint = \"Owner == \\\"bob\\\"\"; Limit = 0 ]",
                &ads, &count);
        CU_ASSERT_EQUAL(n, 0);
        CU_ASSERT_EQUAL(count, 10);
        done(&g, ads, n);

        /* Malformed. */
        static const char *const bad[] = {
                "[ Command = \"Query\"; Constraint = \"ProcId <\" ]",
                "[ Command = \"Query\"; Ids = \"1.x\" ]",
                "[ Command = \"Query\"; Attrs = \"Owner; Cmd\" ]",
        };
        static const char *const reason[] = { "Constraint: column", "Ids: '1.x' is not a job id",
                                              "Attrs: 'Owner;' is not an attribute name" };
        for (size_t i = 0; i < 3; i++) {
                ClassAd *req = request(bad[i]);
                CU_ASSERT_EQUAL(jobcmd_query(t.q, req, &sink), 0);
                classad_free(req);
                CU_ASSERT_EQUAL_FATAL(g.n, 1);
                GLEAN_TEST_CHECK(!ok_of(g.replies[0]) && strstr(qt_str(g.replies[0], "Reason"), reason[i]),
                                 "%s: %s", bad[i], qt_str(g.replies[0], "Reason"));
                got_clear(&g);
        }

        /* History: newest first, Limit. */
        for (int p = 0; p < 10; p++)
                CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("bob"), (JobId) { 2, p }, NULL, QT_T0 + p, NULL, NULL,
                                                 0),
                                0);
        n = ask(jobcmd_history, t.q, &g,
                "[ Command = \"History\"; Constraint = \"ProcId != 9\"; Attrs = \"ProcId JobStatus\"; Limit = 4 ]",
                &ads, &count);
        CU_ASSERT_EQUAL_FATAL(n, 4);
        CU_ASSERT_EQUAL(count, 4);
        CU_ASSERT_EQUAL(qt_int(ads[0], "ProcId"), 8);
        CU_ASSERT_EQUAL(qt_int(ads[0], "JobStatus"), JOB_REMOVED);
        done(&g, ads, n);
        n = ask(jobcmd_history, t.q, &g, "[ Command = \"History\"; Ids = \"2.3 2.5\" ]", &ads, &count);
        CU_ASSERT_EQUAL(n, 2);
        done(&g, ads, n);
        qt_close(&t);
}

/* ---- JobAction ---- */

static void test_job_action(void) {
        QT t;
        Got g = {};
        ClassAd **ads = NULL;
        int64_t count;
        size_t n;

        qt_open(&t, qt_new_db(), NULL);
        qt_submit(t.q, "alice", "", 3, QT_T0);
        qt_submit(t.q, "bob", "", 2, QT_T0);
        CU_ASSERT_EQUAL(queue_job_start(t.q, (JobId) { 1, 1 }, "claim-1", "slot1@h", QT_T0), 0);

        /* alice: her own 1.x, bob's 2.0 refused, 7 not there. */
        CU_ASSERT_EQUAL(act(t.q, qt_user("alice"), &g,
                            "[ Command = \"JobAction\"; Action = \"Hold\"; Ids = \"1 2.0 7\"; Reason = \"later\" ]",
                            QT_T0 + 1),
                        1);
        n = listing(&g, "Results", &ads, &count);
        CU_ASSERT_EQUAL(count, 3);
        CU_ASSERT_EQUAL_FATAL(n, 5);
        CU_ASSERT_FALSE(ok_of(g.replies[g.n - 1]));
        CU_ASSERT_STRING_EQUAL(qt_str(ads[0], "Id"), "1.0");
        CU_ASSERT_TRUE(ok_of(ads[0]));
        CU_ASSERT_STRING_EQUAL(qt_str(ads[3], "Id"), "2.0");
        CU_ASSERT_FALSE(ok_of(ads[3]));
        CU_ASSERT_STRING_EQUAL(qt_str(ads[3], "Reason"), "job 2.0 belongs to bob");
        CU_ASSERT_STRING_EQUAL(qt_str(ads[4], "Id"), "7");
        CU_ASSERT_STRING_EQUAL(qt_str(ads[4], "Reason"), "cluster 7 has no job in the queue");
        CU_ASSERT_EQUAL(g.vacates, 1);
        CU_ASSERT_STRING_EQUAL(g.vacated[0], "claim-1");
        CU_ASSERT_EQUAL(qt_job(t.q, 1, 1)->status, JOB_HELD);
        CU_ASSERT_STRING_EQUAL(qt_str(qt_job(t.q, 1, 1)->ad, "HoldReason"), "later");
        CU_ASSERT_EQUAL(qt_job(t.q, 2, 0)->status, JOB_IDLE);
        done(&g, ads, n);

        /* A constraint passes over others' jobs; all of one's own: Ok. */
        CU_ASSERT_EQUAL(act(t.q, qt_user("alice"), &g,
                            "[ Command = \"JobAction\"; Action = \"Release\"; Constraint = \"true\" ]", QT_T0 + 2),
                        1);
        n = listing(&g, "Results", &ads, &count);
        CU_ASSERT_EQUAL(n, 3);
        CU_ASSERT_EQUAL(count, 3);
        CU_ASSERT_TRUE(ok_of(g.replies[g.n - 1]));
        done(&g, ads, n);

        /* root: SetPrio and Remove of anyone's. */
        CU_ASSERT_EQUAL(act(t.q, qt_admin(), &g,
                            "[ Command = \"JobAction\"; Action = \"SetPrio\"; Prio = 7; Ids = \"2.1\" ]", QT_T0 + 3),
                        1);
        CU_ASSERT_EQUAL(qt_int(qt_job(t.q, 2, 1)->ad, "JobPrio"), 7);
        got_clear(&g);
        CU_ASSERT_EQUAL(act(t.q, qt_admin(), &g,
                            "[ Command = \"JobAction\"; Action = \"Remove\"; Constraint = \"Owner == \\\"bob\\\"\" ]",
                            QT_T0 + 3),
                        1);
        CU_ASSERT_EQUAL(queue_size(t.q), 3);
        got_clear(&g);

        /* Vacate is the daemon's; a missing target; a bad action. */
        CU_ASSERT_EQUAL(act(t.q, qt_admin(), &g, "[ Command = \"JobAction\"; Action = \"Vacate\"; Ids = \"1\" ]", QT_T0),
                        -EOPNOTSUPP);
        CU_ASSERT_EQUAL(g.n, 0);
        CU_ASSERT_EQUAL(act(t.q, qt_admin(), &g, "[ Command = \"JobAction\"; Action = \"Remove\" ]", QT_T0), 0);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        got_clear(&g);
        qt_close(&t);
}

/* ---- UserPrio, Wait ---- */

static void test_user_prio(void) {
        QT t;
        Got g = {};
        JobCmdSink sink = sink_of(&g);
        ClassAd *req, **ads = NULL;
        int64_t count;
        size_t n;

        qt_open(&t, qt_new_db(), NULL);
        CU_ASSERT_EQUAL(acct_ensure(t.a, "alice@" QT_DOMAIN, QT_T0), 1);
        req = request("[ Command = \"UserPrio\"; Action = \"setfactor\"; Submitter = \"alice@pool.example\"; Value = 10 ]");
        CU_ASSERT_EQUAL(jobcmd_user_prio(t.a, qt_user("alice"), req, QT_T0, &sink), 0);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        CU_ASSERT_STRING_EQUAL(qt_str(g.replies[0], "Reason"), "only root and ADMINISTRATORS may setfactor");
        got_clear(&g);
        CU_ASSERT_EQUAL(jobcmd_user_prio(t.a, qt_admin(), req, QT_T0, &sink), 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        classad_free(req);
        got_clear(&g);
        req = request("[ Command = \"UserPrio\"; Action = \"setfactor\"; Submitter = \"nobody\"; Value = 10 ]");
        CU_ASSERT_EQUAL(jobcmd_user_prio(t.a, qt_admin(), req, QT_T0, &sink), 0);
        CU_ASSERT_STRING_EQUAL(qt_str(g.replies[0], "Reason"),
                               "nobody is not in the accounts (a submitter not seen yet is named user@domain)");
        classad_free(req);
        got_clear(&g);
        /* a user@domain not seen yet: known from now on, with its factor */
        req = request("[ Command = \"UserPrio\"; Action = \"setfactor\"; Submitter = \"nobody@x\"; Value = 10 ]");
        CU_ASSERT_EQUAL(jobcmd_user_prio(t.a, qt_admin(), req, QT_T0, &sink), 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        {
                AcctEntry e;
                CU_ASSERT(acct_get(t.a, "nobody@x", &e) == 0 && e.factor == 10);
        }
        classad_free(req);
        got_clear(&g);
        /* the account named is a literal, never an expression's value */
        req = request("[ Command = \"UserPrio\"; Action = \"setfactor\"; Submitter = strcat(\"nobody\", \"@x\"); "
                      "Value = 20 ]");
        CU_ASSERT_EQUAL(jobcmd_user_prio(t.a, qt_admin(), req, QT_T0, &sink), 0);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        CU_ASSERT_STRING_EQUAL(qt_str(g.replies[0], "Reason"), "Submitter must be a literal string");
        classad_free(req);
        got_clear(&g);

        req = request("[ Command = \"UserPrio\" ]");
        CU_ASSERT_EQUAL(jobcmd_user_prio(t.a, qt_user("bob"), req, QT_T0, &sink), 0);
        classad_free(req);
        n = listing(&g, "Ads", &ads, &count);
        CU_ASSERT_EQUAL(count, (int64_t) n);
        {
                bool found = false;
                for (size_t i = 0; i < n; i++)
                        if (strcmp(qt_str(ads[i], "Name"), "alice@" QT_DOMAIN) == 0) {
                                found = true;
                                CU_ASSERT_DOUBLE_EQUAL(qt_real(ads[i], "PriorityFactor"), 10, 0);
                                CU_ASSERT_DOUBLE_EQUAL(qt_real(ads[i], "EffectivePriority"), 5, 1e-9);
                                CU_ASSERT_DOUBLE_EQUAL(qt_real(ads[i], "Priority"), 5, 1e-9);
                                CU_ASSERT_DOUBLE_EQUAL(qt_real(ads[i], "RealPriority"), 0.5, 1e-9);
                        }
                CU_ASSERT_TRUE(found);
        }
        done(&g, ads, n);
        qt_close(&t);
}

static void test_wait(void) {
        QT t;
        Got g = {};
        JobCmdSink sink = sink_of(&g);
        ClassAd *req = request("[ Command = \"Wait\"; Id = \"1.0\"; RequestId = 9 ]"), *ad = NULL;

        qt_open(&t, qt_new_db(), NULL);
        qt_submit(t.q, "alice", "", 1, QT_T0);
        CU_ASSERT_EQUAL(jobcmd_wait_done(t.q, (JobId) { 1, 0 }, req, &sink), 0);
        CU_ASSERT_EQUAL(g.n, 0);
        CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("alice"), (JobId) { 1, 0 }, NULL, QT_T0, NULL, NULL, 0), 0);
        CU_ASSERT_EQUAL(jobcmd_wait_done(t.q, (JobId) { 1, 0 }, req, &sink), 1);
        CU_ASSERT_EQUAL_FATAL(g.n, 1);
        CU_ASSERT_TRUE(ok_of(g.replies[0]));
        CU_ASSERT_EQUAL_FATAL(glean_msg_get_ad(g.replies[0], "Ad", &ad), 0);
        CU_ASSERT_EQUAL(qt_int(ad, "JobStatus"), JOB_REMOVED);
        classad_free(ad);
        got_clear(&g);
        CU_ASSERT_EQUAL(jobcmd_wait_done(t.q, (JobId) { 5, 0 }, req, &sink), 1);
        CU_ASSERT_FALSE(ok_of(g.replies[0]));
        got_clear(&g);
        classad_free(req);
        qt_close(&t);
}

/* ---- a constraint out of the evaluation budget ---- */

/* A request cmd (Query, History, JobAction by alice) whose Constraint runs
 * out of the evaluation budget on every job: answered not Ok with the
 * reason after one job's worth of it, never one budget a job. */
static void costly(JobQueue *q, const char *cmd, Got *g) {
        char text[8192];
        size_t len = 0;
        ClassAd *req = NULL;
        JobCmdSink sink = sink_of(g);
        uint64_t hits = classad_budget_hits();
        int r;

        for (int i = 0; i < 80; i++)
                len += (size_t) snprintf(text + len, sizeof(text) - len,
                                         "%sisError(regexp(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\"))",
                                         i ? " && " : "");
        CU_ASSERT_FATAL(classad_new(&req) == 0);
        CU_ASSERT_FATAL(classad_set_string(req, "Command", cmd) == 0);
        CU_ASSERT_FATAL(classad_set_string(req, "Constraint", text) == 0);
        CU_ASSERT_FATAL(classad_set_int(req, "RequestId", 4) == 0);
        if (strcmp(cmd, "JobAction") == 0) {
                CU_ASSERT_FATAL(classad_set_string(req, "Action", "Hold") == 0);
                r = jobcmd_job_action(q, qt_user("alice"), req, QT_T0, &sink);
        } else
                r = (strcmp(cmd, "Query") == 0 ? jobcmd_query : jobcmd_history)(q, req, &sink);
        classad_free(req);
        CU_ASSERT_EQUAL(r, 0);
        GLEAN_TEST_CHECK(classad_budget_hits() - hits == 1, "%s: %llu evaluations ran out of the budget, not one",
                         cmd, (unsigned long long) (classad_budget_hits() - hits));
        CU_ASSERT_FATAL(g->n >= 1);
        const ClassAd *last = g->replies[g->n - 1];
        GLEAN_TEST_CHECK(!ok_of(last) && qt_str(last, "Reason") && strstr(qt_str(last, "Reason"), "too expensive"),
                         "%s: Ok %d, %s", cmd, ok_of(last), qt_str(last, "Reason"));
        got_clear(g);
}

static void test_costly_constraint(void) {
        QT t;
        Got g = {};

        qt_open(&t, qt_new_db(), NULL);
        qt_submit(t.q, "alice", "", 30, QT_T0);
        for (int p = 0; p < 10; p++)
                CU_ASSERT_EQUAL(queue_job_remove(t.q, qt_user("alice"), (JobId) { 1, p }, NULL, QT_T0, NULL, NULL, 0),
                                0);
        costly(t.q, "Query", &g);
        costly(t.q, "History", &g);
        costly(t.q, "JobAction", &g);
        CU_ASSERT_EQUAL(queue_find(t.q, (JobId) { 1, 20 })->status, JOB_IDLE); /* nothing held */
        qt_close(&t);
}

static CU_TestInfo tests[] = {
        { "submit_parts", test_submit_parts },
        { "submit_identity", test_submit_identity },
        { "submit_messages", test_submit_messages },
        { "submit_repeated", test_submit_repeated },
        { "submit_limit", test_submit_limit },
        { "submit_ids_cap", test_submit_ids_cap },
        { "query", test_query },
        { "job_action", test_job_action },
        { "user_prio", test_user_prio },
        { "wait", test_wait },
        { "costly_constraint", test_costly_constraint },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "jobcmd", qt_suite_init, qt_suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

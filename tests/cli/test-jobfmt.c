/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-jobfmt.c — the job verbs' listings as pure functions over ads: the
 * batch view and its grouping, -nobatch, -held, -run, the history, run
 * times and sizes, -af, JSON, condor_status's table and summary; the
 * split of a submission into the cluster's attributes, each proc's and
 * parts under the frame limit; $(Cluster) made ClusterId again; the
 * clauses of -better-analyze.
 *
 * The CLI's sources are compiled into this test (the glean program is
 * not a library): cli/jobfmt.c, json.c, analyze.c, submit-split.c.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test-util.h"

#include "cli/analyze.c"
#include "cli/jobfmt.c"
#include "cli/json.c"
#include "cli/submit-split.c"

#define NOW 1795578301 /* Wed Nov 25 03:45:01 2026 UTC */

static ClassAd *ad(const char *text) {
        ClassAd *a = NULL;
        CaError err = {};

        GLEAN_TEST_CHECK_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &a, &err) >= 0, "parse %s: %s", text,
                               err.msg);
        return a;
}

static void free_ads(ClassAd **ads, size_t n) {
        for (size_t i = 0; i < n; i++)
                classad_free(ads[i]);
}

/* What fn printed, malloc'd. */
#define CAPTURE(out, call)                                         \
        do {                                                       \
                size_t len_;                                       \
                FILE *f = open_memstream(&(out), &len_);           \
                CU_ASSERT_FATAL(f != NULL);                        \
                call;                                              \
                fclose(f);                                         \
        } while (0)

static void check_text(const char *got, const char *want, const char *what) {
        GLEAN_TEST_CHECK(strcmp(got, want) == 0, "%s:\n--- got:\n%s--- want:\n%s---", what, got, want);
}

static int suite_init(void) {
        setenv("TZ", "UTC", 1);
        tzset();
        return 0;
}

static void test_values(void) {
        static const struct {
                int64_t secs;
                const char *want;
        } durations[] = {
                { 65, "0+00:01:05" }, { 0, "0+00:00:00" }, { -5, "0+00:00:00" }, { 90061, "1+01:01:01" },
                { 14 * 86400 + 17 * 3600 + 40 * 60 + 1, "14+17:40:01" },
        };
        char buf[64];

        for (size_t i = 0; i < sizeof durations / sizeof *durations; i++) {
                cli_fmt_duration(durations[i].secs, buf, sizeof buf);
                GLEAN_TEST_CHECK(strcmp(buf, durations[i].want) == 0, "%lld s: '%s', want '%s'",
                                 (long long) durations[i].secs, buf, durations[i].want);
        }
        cli_fmt_date(NOW, buf, sizeof buf);
        CU_ASSERT_STRING_EQUAL(buf, "11/25 03:45");
        cli_fmt_date(NOW - 22 * 86400, buf, sizeof buf);
        CU_ASSERT_STRING_EQUAL(buf, "11/3  03:45");
        cli_fmt_date(0, buf, sizeof buf);
        CU_ASSERT_STRING_EQUAL(buf, "???");

        /* Run time: past runs plus the current one; size: MemoryUsage,
         * else ImageSize in KiB. */
        ClassAd *run = ad("[ JobStatus = 2; RemoteWallClockTime = 100; JobCurrentStartDate = 1795578236; "
                          "ImageSize = 2048; Cmd = \"/usr/bin/sleep\"; Args = \"60\" ]");
        ClassAd *idle = ad("[ JobStatus = 1; RemoteWallClockTime = 100; JobCurrentStartDate = 1795578236; "
                           "MemoryUsage = 7.3; ImageSize = 2048; Cmd = \"a.out\" ]");
        CU_ASSERT_EQUAL(cli_job_run_time(run, NOW), 165);
        CU_ASSERT_EQUAL(cli_job_run_time(idle, NOW), 100);
        CU_ASSERT_DOUBLE_EQUAL(cli_job_size_mb(run), 2.0, 1e-9);
        CU_ASSERT_DOUBLE_EQUAL(cli_job_size_mb(idle), 7.3, 1e-9);
        char *cmd = cli_job_cmd(run);
        CU_ASSERT_STRING_EQUAL(cmd, "sleep 60");
        free(cmd);
        cmd = cli_job_cmd(idle);
        CU_ASSERT_STRING_EQUAL(cmd, "a.out");
        free(cmd);
        classad_free(run);
        classad_free(idle);
}

/* alice: cluster 3 (3 procs: idle, running, held) and batch "sim" over
 * clusters 4 and 5; bob: cluster 6 with one job left of 4 submitted. */
static size_t queue_ads(ClassAd **ads) {
        size_t n = 0;

        ads[n++] = ad("[ ClusterId = 5; ProcId = 0; Owner = \"alice\"; JobBatchName = \"sim\"; QDate = 1795578000; "
                      "JobStatus = 1 ]");
        ads[n++] = ad("[ ClusterId = 3; ProcId = 1; Owner = \"alice\"; QDate = 1795570000; JobStatus = 2; "
                      "JobCurrentStartDate = 1795578236; RemoteHost = \"slot1_1@node7\"; Cmd = \"/bin/sleep\"; "
                      "Args = \"600\"; ImageSize = 1024; JobPrio = 5 ]");
        ads[n++] = ad("[ ClusterId = 3; ProcId = 0; Owner = \"alice\"; QDate = 1795570000; JobStatus = 1; "
                      "Cmd = \"/bin/sleep\"; Args = \"600\"; JobPrio = 0 ]");
        ads[n++] = ad("[ ClusterId = 3; ProcId = 2; Owner = \"alice\"; QDate = 1795570000; JobStatus = 5; "
                      "EnteredCurrentStatus = 1795575000; HoldReason = \"via glean hold (by user alice)\"; "
                      "Cmd = \"/bin/sleep\" ]");
        ads[n++] = ad("[ ClusterId = 4; ProcId = 0; Owner = \"alice\"; JobBatchName = \"sim\"; QDate = 1795577000; "
                      "JobStatus = 1 ]");
        ads[n++] = ad("[ ClusterId = 6; ProcId = 3; Owner = \"bob\"; QDate = 1795400000; JobStatus = 2; "
                      "TotalSubmitProcs = 4; JobCurrentStartDate = 1795500000; RemoteWallClockTime = 60 ]");
        return n;
}

static void test_batch(void) {
        ClassAd *ads[8];
        size_t n = queue_ads(ads);
        char *out = NULL;

        CAPTURE(out, cli_print_batch(f, ads, n));
        check_text(out,
                   "OWNER BATCH_NAME     SUBMITTED   DONE   RUN    IDLE   HOLD  TOTAL JOB_IDS\n"
                   "alice ID: 3        11/25 01:26      _      1      1      1      3 3.0-2\n"
                   "alice sim          11/25 03:23      _      _      2      _      2 4.0 ... 5.0\n"
                   "bob   ID: 6        11/23 02:13      3      1      _      _      4 6.3\n",
                   "batch view");
        free(out);

        /* Without held jobs there is no HOLD column. */
        CAPTURE(out, cli_print_batch(f, ads, 3));
        check_text(out,
                   "OWNER BATCH_NAME     SUBMITTED   DONE   RUN    IDLE  TOTAL JOB_IDS\n"
                   "alice ID: 3        11/25 01:26      _      1      1      2 3.0-1\n"
                   "alice sim          11/25 03:40      _      _      1      1 5.0\n",
                   "batch view without held jobs");
        free(out);

        CliJobCounts c = {};
        for (size_t i = 0; i < n; i++)
                cli_job_counts_add(&c, ads[i]);
        CAPTURE(out, cli_print_totals(f, "query", &c));
        check_text(out, "Total for query: 6 jobs; 0 completed, 0 removed, 3 idle, 2 running, 1 held, 0 suspended\n",
                   "totals");
        free(out);
        free_ads(ads, n);
}

/* condor_q's ST of a running job whose files are on their way. */
static void test_transferring_status(void) {
        static const struct {
                const char *attrs, *want;
        } cases[] = {
                { "JobStatus = 2; TransferringInput = true", "<" },
                { "JobStatus = 2; TransferringOutput = true", ">" },
                { "JobStatus = 2; TransferringInput = false; TransferringOutput = false", "R" },
                { "JobStatus = 1; TransferringInput = true", "I" }, /* only while it runs */
                { "JobStatus = 5; TransferringOutput = true", "H" },
                { "JobStatus = 2; TransferringInput = \"yes\"", "R" }, /* not a boolean */
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char text[256];
                snprintf(text, sizeof text, "[ %s ]", cases[i].attrs);
                ClassAd *a = ad(text);
                const char *got = cli_job_status_cell(a);
                GLEAN_TEST_CHECK(strcmp(got, cases[i].want) == 0, "%s: %s, want %s", cases[i].attrs, got,
                                 cases[i].want);
                classad_free(a);
        }
}

static void test_one_line_views(void) {
        ClassAd *ads[8];
        size_t n = queue_ads(ads);
        char *out = NULL;

        CAPTURE(out, cli_print_nobatch(f, ads, 4, NOW));
        check_text(out,
                   " ID      OWNER            SUBMITTED     RUN_TIME ST PRI SIZE CMD\n"
                   "   3.0   alice          11/25 01:26   0+00:00:00 I  0   0.0  sleep 600\n"
                   "   3.1   alice          11/25 01:26   0+00:01:05 R  5   1.0  sleep 600\n"
                   "   3.2   alice          11/25 01:26   0+00:00:00 H  0   0.0  sleep\n"
                   "   5.0   alice          11/25 03:40   0+00:00:00 I  0   0.0  \n",
                   "-nobatch");
        free(out);

        CAPTURE(out, cli_print_held(f, ads, n));
        check_text(out,
                   " ID      OWNER           HELD_SINCE  HOLD_REASON\n"
                   "   3.0   alice                  ???  \n"
                   "   3.1   alice                  ???  \n"
                   "   3.2   alice          11/25 02:50  via glean hold (by user alice)\n"
                   "   4.0   alice                  ???  \n"
                   "   5.0   alice                  ???  \n"
                   "   6.3   bob                    ???  \n",
                   "-held");
        free(out);

        CAPTURE(out, cli_print_run(f, ads + 1, 1, NOW));
        check_text(out,
                   " ID      OWNER            SUBMITTED     RUN_TIME HOST(S)\n"
                   "   3.1   alice          11/25 01:26   0+00:01:05 slot1_1@node7\n",
                   "-run");
        free(out);
        free_ads(ads, n);

        ClassAd *h[2] = {
                ad("[ ClusterId = 12; ProcId = 0; Owner = \"carol\"; QDate = 1795578000; JobStatus = 4; "
                   "RemoteWallClockTime = 27; CompletionDate = 1795578030; Cmd = \"/home/carol/run.sh\"; "
                   "Args = \"4\" ]"),
                ad("[ ClusterId = 11; ProcId = 0; Owner = \"carol\"; QDate = 1795577000; JobStatus = 3; "
                   "EnteredCurrentStatus = 1795577100; Cmd = \"/bin/true\" ]"),
        };
        CAPTURE(out, cli_print_history(f, h, 2));
        check_text(out,
                   " ID     OWNER          SUBMITTED   RUN_TIME     ST COMPLETED   CMD\n"
                   "  12.0   carol          11/25 03:40   0+00:00:27 C  11/25 03:40 run.sh 4\n"
                   "  11.0   carol          11/25 03:23   0+00:00:00 X  11/25 03:25 true\n",
                   "history");
        free(out);
        free_ads(h, 2);
}

static void test_af_long_json(void) {
        ClassAd *ads[2] = {
                ad("[ ClusterId = 3; ProcId = 0; Owner = \"alice\"; RequestMemory = 512 * 2; Done = false ]"),
                ad("[ ClusterId = 3; ProcId = 1; Owner = \"al\\\"ice\"; Weight = 0.5 ]"),
        };
        char *attrs[] = { "Owner", "ClusterId", "RequestMemory", "NoSuch" };
        char *out = NULL;

        CAPTURE(out, cli_print_af(f, ads, 2, attrs, 4));
        check_text(out, "alice 3 1024 undefined\nal\"ice 3 undefined undefined\n", "-af");
        free(out);
        /* condor's -af takes expressions too; one that does not parse is an error value */
        char *exprs[] = { "ClusterId * 10 + ProcId", "strcat(Owner, \"!\")", "1 +" };
        CAPTURE(out, cli_print_af(f, ads, 1, exprs, 3));
        check_text(out, "30 alice! error\n", "-af expressions");
        free(out);

        CAPTURE(out, cli_print_long(f, ads, 1));
        check_text(out,
                   "ClusterId = 3\nProcId = 0\nOwner = \"alice\"\nRequestMemory = 512 * 2\nDone = false\n\n",
                   "-l");
        free(out);

        CAPTURE(out, cli_json_ads(f, ads, 2));
        check_text(out,
                   "[\n{\n  \"ClusterId\": 3,\n  \"ProcId\": 0,\n  \"Owner\": \"alice\",\n"
                   "  \"RequestMemory\": \"512 * 2\",\n  \"Done\": false\n},\n"
                   "{\n  \"ClusterId\": 3,\n  \"ProcId\": 1,\n  \"Owner\": \"al\\\"ice\",\n  \"Weight\": 0.5\n}\n]\n",
                   "--json");
        free(out);

        CAPTURE(out, cli_json_ads(f, NULL, 0));
        check_text(out, "[]\n", "--json of nothing");
        free(out);
        free_ads(ads, 2);
}

static void test_status(void) {
        ClassAd *slots[4] = {
                ad("[ Name = \"slot1@node1\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; State = \"Unclaimed\"; "
                   "Activity = \"Idle\"; LoadAvg = 0.0; Memory = 1973; EnteredCurrentActivity = 1795578297 ]"),
                ad("[ Name = \"slot2@node1\"; OpSys = \"LINUX\"; Arch = \"X86_64\"; State = \"Claimed\"; "
                   "Activity = \"Busy\"; LoadAvg = 1.02; Memory = 1973; EnteredCurrentActivity = 1795491901; "
                   "RemoteUser = \"alice@pool\"; ClientMachine = \"cm.pool\" ]"),
                ad("[ Name = \"slot1@pi\"; OpSys = \"LINUX\"; Arch = \"aarch64\"; State = \"Backfill\"; "
                   "Activity = \"Idle\"; LoadAvg = 0.25; Memory = 512; EnteredCurrentActivity = 1795578000 ]"),
                ad("[ Name = \"slot2@pi\"; OpSys = \"LINUX\"; Arch = \"aarch64\"; State = \"Drained\"; "
                   "Activity = \"Idle\"; LoadAvg = 0.0; Memory = 512; EnteredCurrentActivity = 1795578000 ]"),
        };
        char *out = NULL;

        CAPTURE(out, cli_print_status(f, slots, 4, NOW));
        check_text(out,
                   "Name        OpSys      Arch   State     Activity LoadAv Mem   ActvtyTime\n\n"
                   "slot1@node1 LINUX      X86_64 Unclaimed Idle      0.000 1973  0+00:00:04\n"
                   "slot2@node1 LINUX      X86_64 Claimed   Busy      1.020 1973  1+00:00:00\n"
                   "slot1@pi    LINUX      aarch64 Backfill  Idle      0.250 512   0+00:05:01\n"
                   "slot2@pi    LINUX      aarch64 Drained   Idle      0.000 512   0+00:05:01\n\n"
                   "               Total Owner Claimed Unclaimed Matched Preempting Drain Backfill BkIdle\n\n"
                   "  X86_64/LINUX     2     0       1         1       0          0     0        0      0\n\n"
                   " aarch64/LINUX     2     0       0         0       0          0     1        1      1\n\n"
                   "         Total     4     0       1         1       0          0     1        1      1\n\n",
                   "status");
        free(out);

        CAPTURE(out, cli_print_status_claimed(f, slots + 1, 1));
        check_text(out,
                   "Name        OpSys      Arch   LoadAv RemoteUser           ClientMachine\n\n"
                   "slot2@node1 LINUX      X86_64  1.020 alice@pool           cm.pool\n\n",
                   "status -claimed");
        free(out);
        free_ads(slots, 4);
}

/* ---- submit ---- */

static size_t plan_procs(const CliSubmitPlan *p) {
        return p->n_parts ? p->part_end[p->n_parts - 1] : 0;
}

static void test_submit_split(void) {
        ClassAd *ads[5];
        CliSubmitPlan p = {};
        char why[256] = "", *text = NULL;

        for (int i = 0; i < 5; i++) {
                char buf[512];
                snprintf(buf, sizeof buf,
                         "[ ClusterId = 7; ProcId = %d; Cmd = \"/bin/echo\"; Args = \"%d\"; RequestMemory = 100; "
                         "Requirements = TARGET.Memory >= RequestMemory; Out = \"out.%d\"%s ]",
                         i, i, i, i == 2 ? "; Extra = 1" : "");
                ads[i] = ad(buf);
        }
        CU_ASSERT_FATAL(cli_submit_plan(ads, 5, GLEAN_FRAME_MAX, &p, why, sizeof why) == 0);
        text = classad_unparse(p.cluster);
        CU_ASSERT_STRING_EQUAL(text, "[ Cmd = \"/bin/echo\"; RequestMemory = 100; "
                                     "Requirements = TARGET.Memory >= RequestMemory ]");
        free(text);
        CU_ASSERT_EQUAL(p.n, 5);
        CU_ASSERT_EQUAL(p.n_parts, 1);
        text = classad_unparse(p.procs[2]);
        CU_ASSERT_STRING_EQUAL(text, "[ Args = \"2\"; Out = \"out.2\"; Extra = 1 ]");
        free(text);
        text = classad_unparse(p.procs[4]);
        CU_ASSERT_STRING_EQUAL(text, "[ Args = \"4\"; Out = \"out.4\" ]");
        free(text);

        /* The message as sent: validated, More false on the only part. */
        ClassAd *msg = NULL;
        GleanCommand cmd;
        CU_ASSERT_FATAL(cli_submit_message(&p, 0, &msg) == 0);
        CU_ASSERT_EQUAL(glean_msg_validate(msg, &cmd, why, sizeof why), 0);
        CU_ASSERT_EQUAL(cmd, GLEAN_CMD_SUBMIT);
        bool more = true;
        CU_ASSERT_EQUAL(classad_eval_bool(msg, "More", CA_MODE_OLD, &more), 0);
        CU_ASSERT_FALSE(more);
        classad_free(msg);
        cli_submit_plan_clear(&p);

        /* One proc: everything is the cluster's, the proc ad is empty. */
        CU_ASSERT_FATAL(cli_submit_plan(ads, 1, GLEAN_FRAME_MAX, &p, why, sizeof why) == 0);
        text = classad_unparse(p.procs[0]);
        CU_ASSERT_STRING_EQUAL(text, "[  ]");
        free(text);
        CU_ASSERT(classad_has(p.cluster, "Args"));
        CU_ASSERT_FALSE(classad_has(p.cluster, "ClusterId"));
        CU_ASSERT_FALSE(classad_has(p.cluster, "ProcId"));
        cli_submit_plan_clear(&p);
        free_ads(ads, 5);
}

/* 3,000 procs with 200 bytes of their own each, under a 64 KiB limit:
 * several parts, each message within the limit, every proc once, in
 * order, More on all parts but the last. */
static void test_submit_parts(void) {
        enum { N = 3000, LIMIT = 64 * 1024 };
        ClassAd **ads = calloc(N, sizeof(*ads));
        CliSubmitPlan p = {};
        char why[256] = "", pad[201];
        size_t seen = 0;

        memset(pad, 'x', 200);
        pad[200] = '\0';
        for (int i = 0; i < N; i++) {
                char buf[512];
                snprintf(buf, sizeof buf, "[ ClusterId = 1; ProcId = %d; Cmd = \"/bin/true\"; Args = \"%d %s\" ]", i,
                         i, pad);
                ads[i] = ad(buf);
        }
        CU_ASSERT_FATAL(cli_submit_plan(ads, N, LIMIT, &p, why, sizeof why) == 0);
        GLEAN_TEST_CHECK(p.n_parts >= 9 && p.n_parts <= 12, "%zu parts for ~650 KB under 64 KiB", p.n_parts);
        CU_ASSERT_EQUAL(plan_procs(&p), N);
        for (size_t k = 0; k < p.n_parts; k++) {
                ClassAd *msg = NULL, **procs = NULL;
                size_t n = 0;
                bool more = false;

                CU_ASSERT_FATAL(cli_submit_message(&p, k, &msg) == 0);
                classad_set_int(msg, "RequestId", 123456789);
                char *text = classad_unparse(msg);
                GLEAN_TEST_CHECK(strlen(text) <= LIMIT, "part %zu: %zu bytes over the limit", k, strlen(text));
                free(text);
                classad_eval_bool(msg, "More", CA_MODE_OLD, &more);
                GLEAN_TEST_CHECK(more == (k + 1 < p.n_parts), "part %zu: More %d", k, more);
                CU_ASSERT_FATAL(glean_msg_get_ad_list(msg, "Procs", &procs, &n) == 0);
                for (size_t i = 0; i < n; i++) {
                        char *args = NULL, want[32];
                        classad_eval_string(procs[i], "Args", CA_MODE_OLD, &args);
                        snprintf(want, sizeof want, "%zu ", seen + i);
                        GLEAN_TEST_CHECK(args && strncmp(args, want, strlen(want)) == 0, "proc %zu out of order",
                                         seen + i);
                        free(args);
                }
                seen += n;
                glean_ad_list_free(procs, n);
                classad_free(msg);
        }
        CU_ASSERT_EQUAL(seen, N);
        cli_submit_plan_clear(&p);

        /* A proc larger than a message: refused with the reason. */
        CU_ASSERT_EQUAL(cli_submit_plan(ads, N, 300, &p, why, sizeof why), -E2BIG);
        GLEAN_TEST_CHECK(strstr(why, "more than a message holds") != NULL, "why: %s", why);
        free_ads(ads, N);
        free(ads);
}

static void test_cluster_refs(void) {
        ClassAd *ads[1] = { ad("[ ClusterId = 987654321; Out = \"out.987654321.0\"; Tag = 987654321; "
                               "Args = \"-n 9876543210 x\"; Twice = \"987654321/987654321\"; Other = 5 ]") };
        char *s = NULL;
        int64_t i = 0;

        CU_ASSERT_EQUAL(cli_submit_cluster_refs(ads, 1, CLI_CLUSTER_PLACEHOLDER), 3);
        classad_set_int(ads[0], "ClusterId", 42);
        CU_ASSERT_EQUAL(classad_eval_string(ads[0], "Out", CA_MODE_OLD, &s), 0);
        CU_ASSERT_STRING_EQUAL(s, "out.42.0");
        free(s);
        CU_ASSERT_EQUAL(classad_eval_string(ads[0], "Twice", CA_MODE_OLD, &s), 0);
        CU_ASSERT_STRING_EQUAL(s, "42/42");
        free(s);
        CU_ASSERT_EQUAL(classad_eval_int(ads[0], "Tag", CA_MODE_OLD, &i), 0);
        CU_ASSERT_EQUAL(i, 42);
        /* A longer number that merely contains the digits is left alone. */
        CU_ASSERT_EQUAL(classad_eval_string(ads[0], "Args", CA_MODE_OLD, &s), 0);
        CU_ASSERT_STRING_EQUAL(s, "-n 9876543210 x");
        free(s);
        classad_free(ads[0]);
}

/* ---- analysis ---- */

static void test_clauses(void) {
        static const struct {
                const char *text;
                size_t n;
                const char *c[4];
        } cases[] = {
                { "(TARGET.Arch == \"X86_64\") && (TARGET.Memory >= RequestMemory)", 2,
                  { "TARGET.Arch == \"X86_64\"", "TARGET.Memory >= RequestMemory" } },
                { "a && (b || c) && d", 3, { "a", "b || c", "d" } },
                { "x == \"&&\" && f(a && b, {1 && 2})", 2, { "x == \"&&\"", "f(a && b, {1 && 2})" } },
                { "(a) || (b)", 1, { "(a) || (b)" } },
                { "true", 1, { "true" } },
        };

        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                char *c[8];
                size_t n = cli_split_clauses(cases[i].text, c, 8);
                GLEAN_TEST_CHECK(n == cases[i].n, "'%s': %zu clauses, want %zu", cases[i].text, n, cases[i].n);
                for (size_t k = 0; k < n; k++) {
                        if (k < cases[i].n)
                                GLEAN_TEST_CHECK(strcmp(c[k], cases[i].c[k]) == 0, "'%s' clause %zu: '%s', want '%s'",
                                                 cases[i].text, k, c[k], cases[i].c[k]);
                        free(c[k]);
                }
        }
}

static void test_analysis(void) {
        ClassAd *job = ad("[ ClusterId = 5; ProcId = 0; Owner = \"alice\"; User = \"alice@pool\"; JobStatus = 1; "
                          "RequestMemory = 4096; Requirements = (TARGET.Arch == \"X86_64\") && "
                          "(TARGET.Memory >= RequestMemory); LastRejMatchReason = \"no slot satisfies the job's "
                          "Requirements (3 slots)\"; LastRejMatchTime = 1795578000 ]");
        ClassAd *slots[4] = {
                ad("[ Name = \"slot1@a\"; Arch = \"X86_64\"; Memory = 8192; State = \"Unclaimed\"; "
                   "START = KeyboardIdle > 900; KeyboardIdle = 10; Requirements = START ]"),
                ad("[ Name = \"slot2@a\"; Arch = \"X86_64\"; Memory = 2048; State = \"Unclaimed\"; "
                   "Requirements = true ]"),
                ad("[ Name = \"slot1@b\"; Arch = \"aarch64\"; Memory = 8192; State = \"Unclaimed\"; "
                   "Requirements = true ]"),
                ad("[ Name = \"slot1@c\"; Arch = \"X86_64\"; Memory = 8192; State = \"Claimed\"; "
                   "RemoteUser = \"bob@pool\"; Requirements = true ]"),
        };
        char *out = NULL;

        CAPTURE(out, cli_print_analysis(f, job, slots, 4, true, NOW));
        check_text(out,
                   "The Requirements expression for job 5.0 is\n\n"
                   "    (TARGET.Arch == \"X86_64\") && (TARGET.Memory >= RequestMemory)\n\n"
                   "Job 5.0 defines the following attributes:\n\n"
                   "    RequestMemory = 4096\n\n"
                   "The Requirements expression for job 5.0 reduces to these conditions:\n\n"
                   "         Slots\nStep    Matched  Condition\n-----  --------  ---------\n"
                   "[0]           3  TARGET.Arch == \"X86_64\"\n"
                   "[1]           3  TARGET.Memory >= RequestMemory\n\n"
                   "Last failed match: Wed Nov 25 03:40:00 2026\n\n"
                   "Reason for last match failure: no slot satisfies the job's Requirements (3 slots)\n\n"
                   "5.0:  Run analysis summary ignoring user priority.  Of 4 slots,\n"
                   "     2 are rejected by your job's requirements\n"
                   "     1 reject your job because of their own requirements\n"
                   "     0 match and are already running your jobs\n"
                   "     1 match but are serving other users\n"
                   "     0 are able to run your job\n\n"
                   "The slots' side: of the slots that match the job's Requirements, 1 refuses the job by their\n"
                   "own Requirements:\n\n"
                   "    slot1@a: Requirements = START\n"
                   "             START = KeyboardIdle > 900\n",
                   "-better-analyze");
        free(out);

        CAPTURE(out, cli_print_analysis(f, job, slots, 4, false, NOW));
        GLEAN_TEST_CHECK(strncmp(out, "Last failed match:", 18) == 0 && !strstr(out, "reduces to"),
                         "-analyze: the summary only:\n%s", out);
        free(out);
        free_ads(slots, 4);
        classad_free(job);
}

static CU_TestInfo fmt_tests[] = {
        { "values", test_values },
        { "batch", test_batch },
        { "one-line-views", test_one_line_views },
        { "af-long-json", test_af_long_json },
        { "status", test_status },
        { "transferring_status", test_transferring_status },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo submit_tests[] = {
        { "split", test_submit_split },
        { "parts", test_submit_parts },
        { "cluster-refs", test_cluster_refs },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo analyze_tests[] = {
        { "clauses", test_clauses },
        { "analysis", test_analysis },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "format", suite_init, NULL, NULL, NULL, fmt_tests },
        { "submit", suite_init, NULL, NULL, NULL, submit_tests },
        { "analyze", suite_init, NULL, NULL, NULL, analyze_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

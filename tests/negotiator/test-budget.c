/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-budget.c — the matchmaker and the queue's policy with job
 * expressions that run out of the ClassAd evaluation budget (issue 20,
 * item 3): such a job comes out of the cycle as a hold (HoldReasonCode 5,
 * a reason naming the expression and the budget) after one evaluation,
 * on the plain path and the fast one, while the other jobs match; a
 * slot whose attributes make a job's Requirements run out does not get
 * the job held; the reason analysis of a job that matched nothing is
 * bounded; PeriodicHold / OnExitRemove that run out hold the job.
 */
#define _GNU_SOURCE

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <CUnit/CUnit.h>

#include "nego-test.h"
#include "queue/queue-internal.h"
#include "test-util.h"

/* The Requirements: 20 eval(unparse(Requirements)) a level. */
static char *eval_bomb(const char *attr) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "(");
        for (int i = 0; i < 20; i++)
                fprintf(f, "%seval(unparse(%s))", i ? " + " : "", attr);
        fprintf(f, ") >= 0 || true");
        fclose(f);
        return s;
}

/* 60 regular expressions that backtrack past the limit, all evaluated
 * (+ evaluates both sides, where || would stop at the first ERROR): no
 * attribute read, so the fast path's analysis keeps the job (no eval()). */
static char *regexp_bomb(void) {
        char *s = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&s, &len);

        CU_ASSERT_PTR_NOT_NULL_FATAL(f);
        fprintf(f, "TARGET.Memory > 0 && (");
        for (int i = 0; i < 60; i++)
                fprintf(f, "%sregexp(\"(\\\\w+\\\\s?)+$\", \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!\")", i ? " + " : "");
        fprintf(f, ") >= 0 || true");
        fclose(f);
        return s;
}

static const NegoRejection *rejection(const NegoTest *t, size_t s, size_t j) {
        for (size_t i = 0; i < t->res.n_rejections; i++)
                if (t->res.rejections[i].submitter == s && t->res.rejections[i].job == j)
                        return &t->res.rejections[i];
        return NULL;
}

#define BUDGET_REASON(attr) attr " too expensive to evaluate: exceeded the evaluation budget of 1048576 steps"

/* Job 0 (cluster 1) with attr set to bomb, jobs 1..3 (cluster 2) plain:
 * the first held (in one evaluation: the budget counted once more for
 * the check alone), the others matched, on both paths. */
static void check_held(const char *attr, const char *bomb, const char *reason) {
        for (int plain = 0; plain < 2; plain++) {
                NegoTest t;
                size_t a;

                nt_init(&t, NULL);
                nt_slots(&t, 40, NULL);
                a = nt_sub(&t, "alice@pool", 0);
                nt_jobs(&t, a, 1, 1, NULL);
                CU_ASSERT_EQUAL_FATAL(classad_set_expr_text(t.jobs[a][0], attr, bomb, CA_MODE_OLD, NULL), 0);
                nt_jobs(&t, a, 3, 2, NULL);
                uint64_t hits = classad_budget_hits();
                CU_ASSERT_FATAL(nt_cycle(&t, plain) == 0);
                const NegoRejection *r = rejection(&t, a, 0);
                GLEAN_TEST_CHECK(r && r->hold && strcmp(r->reason, reason) == 0, "plain=%d: job 0 %s: %s", plain,
                                 r && r->hold ? "held" : "not held", r ? r->reason : "matched");
                GLEAN_TEST_CHECK(nt_count(&t, a) == 3, "plain=%d: %zu matches", plain, nt_count(&t, a));
                /* once against a slot (its search stops there), once alone */
                GLEAN_TEST_CHECK(classad_budget_hits() - hits == 2, "plain=%d: %" PRIu64 " evaluations out of budget",
                                 plain, classad_budget_hits() - hits);
                nt_done(&t);
        }
}

static void test_requirements_held(void) {
        char *bomb = eval_bomb("Requirements");
        check_held("Requirements", bomb, BUDGET_REASON("Requirements"));
        free(bomb);
}

static void test_regexp_requirements_held(void) {
        char *bomb = regexp_bomb();
        check_held("Requirements", bomb, BUDGET_REASON("Requirements"));
        free(bomb);
}

static void test_rank_held(void) {
        char *bomb = eval_bomb("Rank");
        check_held("Rank", bomb, BUDGET_REASON("Rank"));
        free(bomb);
}

/* The procs of a cluster with the same expressions are held with it in
 * the same cycle (the rest of the cluster is skipped after the first);
 * one that overrides Requirements with a plain one is not held. */
static void test_cluster_held(void) {
        NegoTest t;
        size_t a;
        char *bomb = eval_bomb("Requirements");

        nt_init(&t, NULL);
        nt_slots(&t, 4, NULL);
        a = nt_sub(&t, "alice@pool", 0);
        nt_jobs(&t, a, 3, 1, NULL);
        for (size_t j = 0; j < 2; j++)
                CU_ASSERT_EQUAL_FATAL(classad_set_expr_text(t.jobs[a][j], "Requirements", bomb, CA_MODE_OLD, NULL), 0);
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        const NegoRejection *r0 = rejection(&t, a, 0), *r1 = rejection(&t, a, 1), *r2 = rejection(&t, a, 2);
        CU_ASSERT(r0 && r0->hold);
        CU_ASSERT(r1 && r1->hold);
        CU_ASSERT(r2 && !r2->hold); /* skipped with its cluster this cycle, not held */
        nt_done(&t);
        free(bomb);
}

/* A slot whose attribute runs out of the budget when a job's Requirements
 * reads it: the job is not held (alone its Requirements are cheap); the
 * slot is left out of the cycle and the job matches another. */
static void test_slot_fault_not_held(void) {
        NegoTest t;
        size_t a;
        char *bomb = eval_bomb("Bomb");

        nt_init(&t, NULL);
        nt_slots(&t, 1, NULL);
        CU_ASSERT_EQUAL_FATAL(classad_set_expr_text(t.slots[0], "Bomb", bomb, CA_MODE_OLD, NULL), 0);
        nt_slots(&t, 2, "Bomb = 1");
        a = nt_sub(&t, "alice@pool", 0);
        nt_jobs(&t, a, 2, 1, "Requirements = TARGET.Bomb >= 0");
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        CU_ASSERT_EQUAL(nt_count(&t, a), 2);
        for (size_t j = 0; j < 2; j++) {
                const NegoMatch *m = nt_match(&t, a, j);
                GLEAN_TEST_CHECK(m && m->slot != 0, "job %zu: %s", j, m ? "matched the slot of the bomb" : nt_why(&t, a, j));
        }
        CU_ASSERT_PTR_NULL(rejection(&t, a, 0));
        nt_done(&t);
        free(bomb);
}

/* The reason analysis of a job that matched nothing, with a clause that
 * runs out of the budget on every slot: the counts stop at the first such
 * evaluation and say so, instead of a budget's work per slot and clause. */
static void test_breakdown_bounded(void) {
        NegoTest t;
        size_t a;
        char *bomb = eval_bomb("Bomb"), req[256];

        nt_init(&t, NULL);
        nt_slots(&t, 30, "Memory = 512");
        a = nt_sub(&t, "alice@pool", 0);
        /* the job's Requirements are false at the first clause, before the
         * expensive one: cheap to match, costly to break down */
        snprintf(req, sizeof(req), "Requirements = TARGET.Memory >= 1024 && MY.Bomb");
        nt_jobs(&t, a, 1, 1, req);
        CU_ASSERT_EQUAL_FATAL(classad_set_expr_text(t.jobs[a][0], "Bomb", bomb, CA_MODE_OLD, NULL), 0);
        uint64_t hits = classad_budget_hits();
        CU_ASSERT_FATAL(nt_cycle(&t, true) == 0);
        const char *why = nt_why(&t, a, 0);
        GLEAN_TEST_CHECK(strstr(why, "TARGET.Memory >= 1024 false on 1") && strstr(why, "counts of the first 2 evaluations only"),
                         "why: %s", why);
        GLEAN_TEST_CHECK(classad_budget_hits() - hits == 1, "%" PRIu64 " evaluations out of budget",
                         classad_budget_hits() - hits);
        nt_done(&t);
        free(bomb);
}

/* ---- the queue's policy ---- */

static void check_policy(const char *attr, JobStatus status, bool at_exit, QPolicyAction action, int code,
                         const char *reason) {
        JobQueue *q = NULL;
        char why[256] = "";
        char *bomb = eval_bomb(attr);
        NegoTest t;
        QueueSettings qs = {};
        ConfigError err = {};

        nt_init(&t, NULL);
        GLEAN_TEST_CHECK_FATAL(queue_settings_from_config(t.cfg, &qs, &err) == 0, "%s", err.msg);
        GLEAN_TEST_CHECK_FATAL(queue_open(t.acct, &qs, &q, why, sizeof(why)) == 0, "%s", why);
        ClassAd *ad = nt_ad("[ Owner = \"alice\"; ClusterId = 1; ProcId = 0; JobStatus = 1 ]");
        CU_ASSERT_EQUAL_FATAL(classad_set_expr_text(ad, attr, bomb, CA_MODE_OLD, NULL), 0);
        QPolicyResult p;
        queue_policy(q, ad, status, at_exit, &p);
        GLEAN_TEST_CHECK(p.action == action && p.code == code && strcmp(p.reason, reason) == 0,
                         "%s: action %d code %d: %s", attr, (int) p.action, p.code, p.reason);
        classad_free(ad);
        queue_close(q);
        nt_done(&t);
        free(bomb);
}

static void test_policy_held(void) {
        check_policy("PeriodicHold", JOB_IDLE, false, QP_HOLD, 5, BUDGET_REASON("PeriodicHold"));
        check_policy("PeriodicRemove", JOB_RUNNING, false, QP_HOLD, 5, BUDGET_REASON("PeriodicRemove"));
        check_policy("OnExitHold", JOB_RUNNING, true, QP_HOLD, 5, BUDGET_REASON("OnExitHold"));
        check_policy("OnExitRemove", JOB_RUNNING, true, QP_HOLD, 5, BUDGET_REASON("OnExitRemove"));
        /* a held job stays held: PeriodicRelease that runs out does nothing */
        check_policy("PeriodicRelease", JOB_HELD, false, QP_NONE, 0, "");
}

static CU_TestInfo tests[] = {
        { "requirements_held", test_requirements_held },
        { "regexp_requirements_held", test_regexp_requirements_held },
        { "rank_held", test_rank_held },
        { "cluster_held", test_cluster_held },
        { "slot_fault_not_held", test_slot_fault_not_held },
        { "breakdown_bounded", test_breakdown_bounded },
        { "policy_held", test_policy_held },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "budget", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

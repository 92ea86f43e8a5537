/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cycle.c — one negotiation cycle of the daemon: the accounts brought to
 * now (acct_update, which charges the claims held), the matchmaker over
 * the idle jobs (queue_idle) and the collector's slots, then a claim
 * requested for every match and the reason of every job that did not match
 * given to the queue (for `glean q -analyze`).
 *
 * Left out of a cycle: jobs whose claim is on its way (matched, not started
 * yet), slots of agents that are not connected (they cannot be claimed),
 * and dynamic slots that are not claimed (an agent claims only static and
 * partitionable slots; a free dynamic slot is one being given back).
 *
 * A slot with a RequestClaim of ours in flight, or a preempting claim of
 * ours waiting for its job to go, is in the cycle but promised
 * (NegoPending): in the pie, never matched again, counted for the
 * submitter of the claim on its way (not charged by the accounts until its
 * job starts) and no longer for the one it preempts (charged until its job
 * is gone). Leaving those slots out instead shrank the pie and forgot
 * both, and a better user took more than its share while its preemptions
 * were under way (docs/negotiator.md, "preemption").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "daemon.h"

static double mono(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

static bool has_jobs(void *userdata, const char *submitter) {
        Nego *n = userdata;
        return queue_submitter_has_jobs(n->queue, submitter);
}

/* A slot a cycle may see: its agent connected, and a dynamic slot claimed. */
static bool slot_seen(Nego *n, SlotRec *s) {
        Conn *c = nego_agent_conn(n, s->machine);
        if (!c)
                return false;
        /* A machine whose token does not let it run jobs gets none. */
        if (c->has_token && !(c->token_rights & GLEAN_RIGHT_RUN))
                return false;
        if (s->dynamic) {
                char state[32], act[32];
                nego_slot_state(s, state, sizeof state, act, sizeof act);
                return strcmp(state, "Claimed") == 0;
        }
        return true;
}

/* A claim of ours on its way to s: matched by an earlier cycle. */
static bool slot_promised(const SlotRec *s) {
        return s->requests > 0 || s->waiting;
}

static bool slot_in_cycle(Nego *n, SlotRec *s) {
        return !slot_promised(s) && slot_seen(n, s);
}

/* Room on s for a job now: Unclaimed (a partitionable slot: with a CPU
 * left), neither held nor asked for by a claim of ours (its ad may not say
 * so yet), its agent connected. */
static bool slot_free(Nego *n, SlotRec *s) {
        char state[32], act[32];
        int64_t cpus = 1;
        if (s->dynamic || s->held || !slot_in_cycle(n, s))
                return false;
        nego_slot_state(s, state, sizeof state, act, sizeof act);
        if (strcmp(state, "Unclaimed") != 0)
                return false;
        return !s->partitionable || (classad_eval_int(s->ad, "Cpus", GLEAN_CA_MODE, &cpus) >= 0 && cpus >= 1);
}

bool nego_cycle_could_start(Nego *n) {
        if (queue_count(n->queue, JOB_IDLE) <= glean_strmap_size(n->matching))
                return false;
        if (queue_run_room(n->queue, glean_strmap_size(n->matching)) == 0)
                return false; /* MAX_JOBS_RUNNING: nothing would start */
        size_t pos = 0;
        const char *key;
        void *v;
        while (glean_strmap_next(n->slots, &pos, &key, &v))
                if (slot_free(n, v))
                        return true;
        return false;
}

typedef struct CycleInput {
        NegoInput in;
        SlotRec **slots;
        Job ***jobs; /* per submitter, as in.submitters[i].jobs */
        NegoPending *pending;
        size_t open; /* slots not promised: none, no cycle */
} CycleInput;

static void input_clear(CycleInput *x) {
        free(x->pending);
        for (size_t i = 0; i < x->in.n_submitters; i++) {
                free(x->in.submitters[i].jobs);
                free(x->jobs[i]);
        }
        free(x->in.submitters);
        free(x->jobs);
        free(x->in.slots);
        free(x->slots);
}

/* The claims on their way (not charged yet) to the slots of x, each with
 * the charged claim it preempts on a static slot. */
static int input_pending(Nego *n, CycleInput *x) {
        GleanStrMap *index = NULL; /* a promised slot's name -> its place in x->slots */
        bool *victim_seen = calloc(x->in.n_slots + 1, sizeof(bool));
        size_t total = glean_strmap_size(n->claims), pos = 0;
        const char *key;
        void *v;
        int r = glean_strmap_new(true, &index);
        if (r >= 0 && (!victim_seen || !(x->pending = calloc(total + 1, sizeof *x->pending))))
                r = -ENOMEM;
        for (size_t i = 0; r >= 0 && i < x->in.n_slots; i++)
                if (slot_promised(x->slots[i]))
                        r = glean_strmap_put(index, x->slots[i]->name, &x->slots[i]);
        while (r >= 0 && glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *c = v;
                const char *on = c->state == CLAIM_REQUESTED ? c->requested : c->state == CLAIM_WAITING ? c->slot : NULL;
                SlotRec **at = on && !c->charged ? glean_strmap_get(index, on) : NULL;
                if (!at)
                        continue;
                size_t i = (size_t) (at - x->slots);
                SlotRec *s = *at;
                NegoPending *p = &x->pending[x->in.n_pending++];
                *p = (NegoPending){ .slot = i, .submitter = c->submitter, .cost = c->weight };
                Claim *h = s->held;
                if (!s->partitionable && h && h != c && h->charged && !victim_seen[i]) {
                        p->victim = h->submitter;
                        p->victim_weight = h->weight;
                        victim_seen[i] = true;
                }
        }
        x->in.pending = x->pending;
        glean_strmap_free(index);
        free(victim_seen);
        return r;
}

static int input_build(Nego *n, const QueueIdle *qi, CycleInput *x) {
        size_t total = glean_strmap_size(n->slots), pos = 0;
        const char *key;
        void *v;
        double pool = 0;
        x->in.slots = calloc(total ? total : 1, sizeof *x->in.slots);
        x->slots = calloc(total ? total : 1, sizeof *x->slots);
        x->in.submitters = calloc(qi->n ? qi->n : 1, sizeof *x->in.submitters);
        x->jobs = calloc(qi->n ? qi->n : 1, sizeof *x->jobs);
        if (!x->in.slots || !x->slots || !x->in.submitters || !x->jobs)
                return -ENOMEM;
        while (glean_strmap_next(n->slots, &pos, &key, &v)) {
                SlotRec *s = v;
                pool += nego_settings_slot_weight(n->settings, s->ad);
                if (!slot_seen(n, s))
                        continue;
                x->slots[x->in.n_slots] = s;
                x->in.slots[x->in.n_slots++] = s->ad;
                x->open += !slot_promised(s);
        }
        acct_set_meta(n->acct, "pool_size", pool);
        int r = input_pending(n, x);
        if (r < 0)
                return r;
        for (size_t i = 0; i < qi->n; i++) {
                NegoSubmitter *sub = &x->in.submitters[x->in.n_submitters];
                size_t cnt = qi->counts[i], k = 0;
                sub->jobs = calloc(cnt ? cnt : 1, sizeof *sub->jobs);
                x->jobs[x->in.n_submitters] = calloc(cnt ? cnt : 1, sizeof **x->jobs);
                x->in.n_submitters++;
                if (!sub->jobs || !x->jobs[x->in.n_submitters - 1])
                        return -ENOMEM;
                sub->name = qi->names[i];
                acct_ensure(n->acct, sub->name, nego_now());
                for (size_t j = 0; j < cnt; j++) {
                        Job *job = qi->jobs[i][j];
                        char id[48];
                        snprintf(id, sizeof id, "%" PRId64 ".%" PRId64, job->id.cluster, job->id.proc);
                        if (glean_strmap_get(n->matching, id) || nego_job_backing_off(n, job->id))
                                continue;
                        sub->jobs[k] = job->ad;
                        x->jobs[x->in.n_submitters - 1][k++] = job;
                }
                sub->n_jobs = k;
        }
        return 0;
}

/* A job whose own Requirements or Rank ran out of the evaluation budget
 * would do so in every cycle (and after every restart): held, by the pool,
 * with HoldReasonCode 5 (JobPolicyUndefined: HTCondor's code for a job
 * expression that evaluates to no answer) and the reason the matchmaker
 * gives. */
static int hold_too_expensive(Nego *n, JobId id, const char *reason, double now) {
        QueueRequester who = { .user = "root", .uid = 0, .admin = true };
        char why[256] = "";
        int r = queue_job_hold(n->queue, &who, id, reason, QUEUE_HOLD_JOB_POLICY_UNDEFINED, 0, now, NULL, why,
                               sizeof why);
        if (r < 0) {
                nego_log_job(LOG_WARNING, NULL, id, NULL, NULL, NULL, reason,
                             "cannot hold job %" PRId64 ".%" PRId64 " (%s): %s", id.cluster, id.proc, reason,
                             why[0] ? why : strerror(-r));
                return r;
        }
        nego_log_job(LOG_NOTICE, MESSAGE_ID_JOB_HOLD, id, NULL, NULL, NULL, reason, "job %" PRId64 ".%" PRId64 " held: %s",
                     id.cluster, id.proc, reason);
        return 0;
}

int nego_cycle_run(Nego *n) {
        double t0 = mono(), now = nego_now();
        QueueIdle qi = { 0 };
        CycleInput x = { 0 };
        NegoResult res = { 0 };
        JobId *rejected = NULL;
        char **reasons = NULL;
        bool *holds = NULL;
        nego_batch_queue(n); /* the claims it requests: nego_batch there */
        nego_claims_reweigh(n, now);
        int r = acct_update(n->acct, now, has_jobs, n);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "cannot update the accounts: %m");
        r = queue_idle(n->queue, &qi);
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cycle: cannot list the idle jobs: %m");
        r = input_build(n, &qi, &x);
        size_t jobs = 0;
        for (size_t i = 0; i < x.in.n_submitters; i++)
                jobs += x.in.submitters[i].n_jobs;
        /* MAX_JOBS_RUNNING: as condor_schedd at its limit takes no more
         * matches, the claims the central manager asks for this cycle are
         * at most room, the first matches made (the best priorities). */
        size_t room = queue_run_room(n->queue, glean_strmap_size(n->matching));
        if (room == 0 && jobs > 0)
                glean_log(LOG_DEBUG, NULL, NULL, 0, "cycle: MAX_JOBS_RUNNING (%" PRId64 ") reached: no match this cycle",
                          queue_settings(n->queue)->max_jobs_running);
        if (r >= 0 && jobs > 0 && x.open > 0 && room > 0) {
                x.in.accounts = n->acct;
                x.in.settings = n->settings;
                r = nego_cycle(&x.in, &res);
        }
        if (r < 0) {
                glean_log_errno(LOG_ERR, r, "cycle: the matchmaker failed: %m");
                goto out;
        }
        /* What the results point at (the queue's arrays) first, before anything changes the queue. */
        Job **matched = calloc(res.n_matches ? res.n_matches : 1, sizeof *matched);
        rejected = calloc(res.n_rejections ? res.n_rejections : 1, sizeof *rejected);
        reasons = calloc(res.n_rejections ? res.n_rejections : 1, sizeof *reasons);
        holds = calloc(res.n_rejections ? res.n_rejections : 1, sizeof *holds);
        if (!matched || !rejected || !reasons || !holds) {
                free(matched);
                r = -ENOMEM;
                goto out;
        }
        for (size_t i = 0; i < res.n_matches; i++)
                matched[i] = x.jobs[res.matches[i].submitter][res.matches[i].job];
        for (size_t i = 0; i < res.n_rejections; i++) {
                rejected[i] = x.jobs[res.rejections[i].submitter][res.rejections[i].job]->id;
                reasons[i] = res.rejections[i].reason;
                holds[i] = res.rejections[i].hold;
        }
        size_t preemptions = 0, capped = 0;
        for (size_t i = 0; i < res.n_matches; i++) {
                const NegoMatch *m = &res.matches[i];
                if (i >= room) {
                        char why[160];
                        snprintf(why, sizeof why,
                                 "matched, but MAX_JOBS_RUNNING (%" PRId64 ") jobs run or are starting: it waits",
                                 queue_settings(n->queue)->max_jobs_running);
                        queue_job_rejected(n->queue, matched[i]->id, why, now);
                        capped++;
                        continue;
                }
                preemptions += m->reason != NEGO_NO_PREEMPTION;
                r = nego_claim_request(n, x.slots[m->slot], matched[i], m->cost, m->reason);
                if (r < 0)
                        glean_log_errno(LOG_ERR, r, "cannot claim %s: %m", x.slots[m->slot]->name);
        }
        free(matched);
        if (capped > 0)
                glean_log(LOG_INFO, NULL, NULL, 0, "cycle: %zu of %zu matches left for later: MAX_JOBS_RUNNING (%" PRId64 ")",
                          capped, res.n_matches, queue_settings(n->queue)->max_jobs_running);
        for (size_t i = 0; i < res.n_rejections; i++) {
                if (holds[i]) {
                        (void) hold_too_expensive(n, rejected[i], reasons[i], now);
                        continue;
                }
                queue_job_rejected(n->queue, rejected[i], reasons[i], now);
                if (i < 10)
                        nego_log_job(LOG_DEBUG, NULL, rejected[i], NULL, NULL, NULL, reasons[i],
                                     "job %" PRId64 ".%" PRId64 " not matched: %s", rejected[i].cluster,
                                     rejected[i].proc, reasons[i]);
        }
        n->cycle.number++;
        n->cycle.matches = res.n_matches;
        n->cycle.rejections = res.n_rejections;
        n->cycle.submitters = x.in.n_submitters;
        n->cycle.preemptions = preemptions;
        n->cycle.seconds = mono() - t0;
        n->cycle.at = now;
        char num[24], dur[32], ms[24], rj[24], subs[24], sl[24];
        snprintf(num, sizeof num, "%" PRIu64, n->cycle.number);
        snprintf(dur, sizeof dur, "%.6f", n->cycle.seconds);
        snprintf(ms, sizeof ms, "%zu", res.n_matches);
        snprintf(rj, sizeof rj, "%zu", res.n_rejections);
        snprintf(subs, sizeof subs, "%zu", x.in.n_submitters);
        snprintf(sl, sizeof sl, "%zu", x.in.n_slots);
        GleanLogField f[] = { { "GLEAN_CYCLE", num },   { "GLEAN_DURATION", dur },   { "GLEAN_MATCHES", ms },
                              { "GLEAN_REJECTIONS", rj }, { "GLEAN_SUBMITTERS", subs }, { "GLEAN_SLOTS", sl } };
        glean_log(res.n_matches ? LOG_INFO : LOG_DEBUG, MESSAGE_ID_CYCLE, f, sizeof f / sizeof *f,
                  "cycle %s: %zu match%s (%zu preempting), %zu rejection%s, %zu submitter%s, %zu job%s, %zu slot%s "
                  "in %.3f s",
                  num, res.n_matches, res.n_matches == 1 ? "" : "es", preemptions, res.n_rejections,
                  res.n_rejections == 1 ? "" : "s", x.in.n_submitters, x.in.n_submitters == 1 ? "" : "s", jobs,
                  jobs == 1 ? "" : "s", x.in.n_slots, x.in.n_slots == 1 ? "" : "s", n->cycle.seconds);
        r = 0;
out:
        free(rejected);
        free(reasons);
        free(holds);
        nego_result_clear(&res);
        input_clear(&x);
        queue_idle_clear(&qi);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * claims.c — the claims the central manager holds on the agents' slots,
 * from the match to the release (it plays the schedd's and the shadow's
 * part here):
 *
 *   match      Match (a static slot that is Unclaimed or Owner) and
 *              RequestClaim with a random claim id and the job ad; the job
 *              stays Idle, left out of later cycles while we wait;
 *   granted    the Reply: once the slot is Claimed/Idle for this claim (at
 *              once, or after the job it preempts is gone), the accounts
 *              charge the claim (acct_claim_begin, the match's cost), the
 *              job turns Running (queue_job_start) and ActivateClaim goes,
 *              all in one batch, the message after the commit;
 *   running    KeepAlive every ALIVE_INTERVAL; a reply that the agent has
 *              no such claim, a re-advertised ad without it, or no word for
 *              the claim's lease while its agent is gone: the claim is lost,
 *              the job back to Idle (queue_job_requeue, NumJobStarts kept),
 *              its charge ends;
 *   exit       JobExit: the queue takes the exit and usage (Completed, Held,
 *              or Idle by OnExitRemove), or the job goes back to Idle when
 *              it was evicted (we asked, or the agent said it preempts);
 *              then the claim runs the next idle job of the same submitter
 *              that matches the slot, until CLAIM_WORKLIFE, else Release and
 *              its charge ends, all in the batch that took the exit. The
 *              agent sends an exit until we acknowledge it (after that
 *              commit): one that names another job than the claim's, or
 *              another run of it (NumJobStarts), is one heard before and
 *              changes nothing.
 *
 * A job never runs twice at once: it runs only under the claim the queue
 * holds for it (queue_job_start refuses a job that is not Idle), is matched
 * again only after that claim is known gone, and after a restart its claim
 * must be re-advertised by its agent (or its lease pass) before it is
 * requeued (nego_claims_restore).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "common/cleanup.h"
#include "daemon.h"

#define TAKE_AD(p) TAKE_PTR(p)

Claim *nego_claim(Nego *n, const char *id) {
        return id ? glean_strmap_get(n->claims, id) : NULL;
}

Claim *nego_claim_of_job(Nego *n, JobId id) {
        const Job *j = queue_find(n->queue, id);
        return j && j->claim_id ? nego_claim(n, j->claim_id) : NULL;
}

static bool slot_is_ours_idle(SlotRec *s, const Claim *c);
static void activate(Nego *n, Claim *c);

static void unmatch(Nego *n, Claim *c) {
        if (c->jobkey[0] && glean_strmap_get(n->matching, c->jobkey) == c)
                glean_strmap_remove(n->matching, c->jobkey);
        if (c->requested) {
                SlotRec *r = nego_slot(n, c->requested);
                if (r && r->requests > 0)
                        r->requests--;
                free(c->requested);
                c->requested = NULL;
        }
}

static void claim_free(Nego *n, Claim *c) {
        nego_grant_end(n, c); /* the run's files are done with, whatever ended it */
        if (c->state == CLAIM_RELEARNING)
                n->relearning--;
        glean_strmap_remove(n->claims, c->id);
        unmatch(n, c);
        SlotRec *s = nego_slot(n, c->slot);
        if (s && s->held == c)
                s->held = NULL;
        if (s && s->waiting == c)
                s->waiting = NULL;
        free(c->slot);
        free(c->machine);
        free(c->submitter);
        free(c);
}

void nego_claims_free(Nego *n) {
        size_t pos = 0;
        const char *key;
        void *v;
        while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *c = v;
                nego_grant_drop(c);
                free(c->requested);
                free(c->slot);
                free(c->machine);
                free(c->submitter);
                free(c);
        }
        pos = 0;
        while (glean_strmap_next(n->pending, &pos, &key, &v))
                nego_pending_free(v);
        nego_backoffs_free(n);
}

static int claim_new(Nego *n, const char *id, const char *slot, const char *machine, const char *submitter, JobId job,
                     Claim **ret) {
        Claim *c = calloc(1, sizeof *c);
        if (!c)
                return -ENOMEM;
        if (id)
                snprintf(c->id, sizeof c->id, "%s", id);
        else {
                uint8_t raw[NEGO_CLAIM_ID_BYTES];
                randombytes_buf(raw, sizeof raw);
                sodium_bin2hex(c->id, sizeof c->id, raw, sizeof raw);
                sodium_memzero(raw, sizeof raw);
        }
        snprintf(c->pub, sizeof c->pub, "%.*s", NEGO_CLAIM_PUBLIC, c->id);
        c->slot = strdup(slot);
        c->machine = strdup(machine);
        c->submitter = strdup(submitter ? submitter : "");
        c->job = job;
        snprintf(c->jobkey, sizeof c->jobkey, "%" PRId64 ".%" PRId64, job.cluster, job.proc);
        c->lease = (double) n->k.max_lease;
        if (!c->slot || !c->machine || !c->submitter || glean_strmap_put(n->claims, c->id, c) < 0) {
                free(c->slot);
                free(c->machine);
                free(c->submitter);
                free(c);
                return -ENOMEM;
        }
        *ret = c;
        return 0;
}

/* The collector's record of a slot an agent names ("slot1_2", or in full). */
/* The slot an agent of machine means by name ("slot1", or in full
 * "slot1@name@machine" when it has a STARTD_NAME). An agent speaks for its
 * own machine only: a full name of another machine's slot is no slot
 * (NULL, full ""), as the collector refuses such a SlotUpdate. */
static SlotRec *slot_named(Nego *n, const char *machine, const char *name, char *full, size_t len) {
        const char *at = strrchr(name, '@');

        full[0] = '\0';
        if (at && strcasecmp(at + 1, machine) != 0)
                return NULL;
        if (at)
                snprintf(full, len, "%s", name);
        else
                snprintf(full, len, "%s@%s", name, machine);
        return nego_slot(n, full);
}

static ClassAd *claim_msg(GleanCommand cmd, const Claim *c) {
        ClassAd *msg = NULL;
        if (glean_msg_new(cmd, &msg) < 0)
                return NULL;
        if (classad_set_string(msg, "ClaimId", c->id) < 0) {
                classad_free(msg);
                return NULL;
        }
        return msg;
}

/* Sends a message about c to its agent (when connected). */
static int claim_send(Nego *n, Claim *c, ClassAd *msg, PendingKind kind) {
        if (!msg)
                return -ENOMEM;
        int r = nego_agent_request(n, c->machine, msg, kind, c->id, NULL);
        classad_free(msg);
        return r;
}

/* Its charge ends and it is forgotten; the agent is told to release it
 * (when it still has it, it says so; when not, nothing happens). */
static void claim_end(Nego *n, Claim *c, bool tell_agent, const char *why) {
        double now = nego_now();
        if (c->charged) {
                nego_batch(n);
                int r = acct_claim_end(n->acct, c->id, now);
                if (r < 0 && r != -ENOENT)
                        glean_log_errno(LOG_ERR, r, "claim %s: cannot end its charge: %m", c->pub);
        }
        if (tell_agent) {
                /* Its slot's ads on the way still name it: told once (an
                 * agent that is not connected is told when it is back). */
                bool sent = claim_send(n, c, claim_msg(GLEAN_CMD_RELEASE, c), PEND_OTHER) >= 0;
                SlotRec *s = sent ? nego_slot(n, c->slot) : NULL;
                char *dup = s ? strdup(c->id) : NULL;
                if (dup) {
                        free(s->dropped);
                        s->dropped = dup;
                        s->dropped_at = now;
                }
                /* A dynamic slot released is given back to its
                 * partitionable slot: its ad leaves now, not after its
                 * agent stopped advertising it. */
                if (s && s->dynamic && (!s->held || s->held == c) && !s->waiting && !s->requests) {
                        s->held = NULL;
                        nego_slot_forget(n, s);
                }
        }
        nego_log_job(LOG_INFO, MESSAGE_ID_CLAIM_END, (JobId){ 0, 0 }, c->submitter, c->slot, c, why,
                     "claim on %s of %s ended: %s", c->slot, c->submitter, why);
        claim_free(n, c);
        nego_want_cycle(n);
}

/* ---- from the match to the job's start ---- */

int nego_claim_request(Nego *n, SlotRec *s, Job *job, double cost, NegoReason reason) {
        Claim *c = NULL;
        nego_batch(n); /* a batch that changes claims */
        int r = claim_new(n, NULL, s->name, s->machine, job->submitter, job->id, &c);
        if (r < 0)
                return r;
        c->weight = cost;
        c->by_priority = reason == NEGO_PRIORITY;
        c->state = CLAIM_REQUESTED;
        c->requested = strdup(s->name);
        c->requested_at = nego_now();
        if (!c->requested || glean_strmap_put(n->matching, c->jobkey, c) < 0) {
                claim_free(n, c);
                return -ENOMEM;
        }
        s->requests++;
        char state[32], act[32];
        nego_slot_state(s, state, sizeof state, act, sizeof act);
        nego_log_job(LOG_INFO, MESSAGE_ID_MATCH, job->id, job->submitter, s->name, c, nego_reason_name(reason),
                     "job %s of %s matched %s (%s, cost %g)", c->jobkey, job->submitter, s->name,
                     nego_reason_name(reason), cost);
        if (reason != NEGO_NO_PREEMPTION) {
                char *victim = NULL;
                classad_eval_string(s->ad, "RemoteUser", GLEAN_CA_MODE, &victim);
                nego_log_job(LOG_NOTICE, MESSAGE_ID_PREEMPT, job->id, job->submitter, s->name, c,
                             nego_reason_name(reason), "%s: the job of %s is preempted for job %s of %s (%s)", s->name,
                             victim ? victim : "another user", c->jobkey, job->submitter, nego_reason_name(reason));
                free(victim);
        }
        /* The slot goes Matched (3.5.7.3), which keeps other matches away; a
         * partitionable slot stays as it is, carved by the claim. */
        if (!s->partitionable && (strcmp(state, "Unclaimed") == 0 || strcmp(state, "Owner") == 0)) {
                ClassAd *m = claim_msg(GLEAN_CMD_MATCH, c);
                if (m)
                        classad_set_string(m, "Slot", s->name);
                claim_send(n, c, m, PEND_MATCH);
        }
        ClassAd *m = claim_msg(GLEAN_CMD_REQUEST_CLAIM, c);
        r = m ? classad_set_string(m, "Slot", s->name) : -ENOMEM;
        if (r >= 0)
                r = glean_msg_set_ad(m, "JobAd", job->ad);
        if (r >= 0 && c->by_priority)
                r = classad_set_bool(m, "ByPriority", true);
        if (r >= 0)
                r = claim_send(n, c, TAKE_AD(m), PEND_REQUEST_CLAIM);
        classad_free(m);
        if (r < 0)
                nego_claim_refused(n, c, r == -ENOTCONN ? "the agent is not connected" : strerror(-r));
        return 0;
}

void nego_claim_refused(Nego *n, Claim *c, const char *why) {
        char reason[600];
        snprintf(reason, sizeof reason, "%s refused the claim: %s", c->requested ? c->requested : c->slot, why);
        nego_log_job(LOG_INFO, MESSAGE_ID_CLAIM, c->job, c->submitter, c->slot, c, why, "job %s: %s", c->jobkey,
                     reason);
        queue_job_rejected(n->queue, c->job, reason, nego_now());
        claim_free(n, c);
}

typedef struct NextJob {
        Nego *n;
        const SlotRec *slot;
} NextJob;

static QueueFit fits_slot(const Job *j, void *userdata) {
        const NextJob *nj = userdata;
        char key[48];
        snprintf(key, sizeof key, "%" PRId64 ".%" PRId64, j->id.cluster, j->id.proc);
        if (glean_strmap_get(nj->n->matching, key))
                return QUEUE_FIT_SKIP; /* its own claim is on the way */
        return classad_match(nj->slot->ad, j->ad, GLEAN_CA_MODE) ? QUEUE_FITS : QUEUE_FITS_NOT;
}

/* A job that may run on c now (the next of its submitter that fits the
 * slot); NULL when none. */
static Job *next_job(Nego *n, Claim *c) {
        NextJob nj = { n, nego_slot(n, c->slot) };
        return nj.slot ? queue_next_idle(n->queue, c->submitter, fits_slot, &nj) : NULL;
}

/* Whether c's job may start now as far as its files go (grants.c): a run
 * that transfers needs its submit agent connected. A job without a
 * SubmitMachine is held (HoldReasonCode 13) and the claim ends; one whose
 * agent is away keeps the claim waiting (the slot's ads, the agent's
 * return and the tick try again), for NEGOTIATOR_TRANSFER_WAIT at most:
 * then the claim is released and the job, Idle still, says why in
 * LastRejMatchReason. */
/* c waited NEGOTIATOR_TRANSFER_WAIT for its job's submit agent: released,
 * the job (Idle still) told why. */
static void transfer_give_up(Nego *n, Claim *c, const char *why, double now) {
        char reason[600];
        snprintf(reason, sizeof reason, "%s for %" PRId64 " s (NEGOTIATOR_TRANSFER_WAIT)", why, n->k.transfer_wait);
        queue_job_rejected(n->queue, c->job, reason, now);
        nego_log_job(LOG_NOTICE, NULL, c->job, c->submitter, c->slot, c, reason, "job %s stays idle: %s", c->jobkey,
                     reason);
        claim_end(n, c, true, "its job's submit agent did not come");
}

static bool transfer_ready(Nego *n, Claim *c, Job *job, double now) {
        char why[400] = "";
        int t = nego_grant_check(n, c, job, why, sizeof why);
        c->transfer_wanted = t > 0;
        if (t >= 0) {
                c->transfer_wait_since = 0;
                return true;
        }
        if (t == -ENOENT) {
                QueueRequester system = { .user = "root", .uid = 0, .admin = true };
                char w[300] = "";
                nego_batch(n);
                int r = queue_job_hold(n->queue, &system, job->id, why, QUEUE_HOLD_TRANSFER_INPUT, 0, now, NULL, w,
                                       sizeof w);
                if (r < 0)
                        glean_log_errno(LOG_ERR, r, "job %s: cannot hold it (%s): %m", c->jobkey, w);
                else
                        nego_log_job(LOG_NOTICE, MESSAGE_ID_JOB_HOLD, job->id, job->submitter, c->slot, c, why,
                                     "job %s of %s held: %s (HoldReasonCode %d)", c->jobkey, job->submitter, why,
                                     QUEUE_HOLD_TRANSFER_INPUT);
                if (n->waiters)
                        nego_waiters_check(n, now);
                claim_end(n, c, true, "its job's files cannot travel");
                return false;
        }
        if (c->transfer_wait_since == 0) {
                c->transfer_wait_since = now;
                nego_log_job(LOG_NOTICE, NULL, job->id, job->submitter, c->slot, c, why,
                             "job %s: waiting up to %" PRId64 " s on %s: %s", c->jobkey, n->k.transfer_wait, c->slot,
                             why);
        } else if (now - c->transfer_wait_since > (double) n->k.transfer_wait) {
                transfer_give_up(n, c, why, now);
                return false;
        }
        /* Still on its way: out of the cycles, the slot kept. */
        c->state = CLAIM_WAITING;
        glean_strmap_put(n->matching, c->jobkey, c);
        SlotRec *s = nego_slot(n, c->slot);
        if (s) {
                if (s->held == c)
                        s->held = NULL;
                s->waiting = c;
        }
        return false;
}

void nego_claims_transfer_retry(Nego *n, const char *machine, double now) {
        size_t total = glean_strmap_size(n->claims), k = 0, pos = 0;
        const char *key;
        void *v;
        Claim **w = calloc(total ? total : 1, sizeof *w);
        if (!w)
                return;
        while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *c = v;
                if (c->state != CLAIM_WAITING || c->transfer_wait_since == 0)
                        continue;
                if (machine) {
                        const Job *j = queue_find(n->queue, c->job);
                        _cleanup_free_ char *sm = NULL;
                        if (!j || classad_eval_string(j->ad, "SubmitMachine", GLEAN_CA_MODE, &sm) < 0 ||
                            strcasecmp(sm, machine) != 0)
                                continue;
                }
                w[k++] = c;
        }
        for (size_t i = 0; i < k; i++) {
                Claim *c = w[i];
                SlotRec *s = nego_slot(n, c->slot);
                if (s && slot_is_ours_idle(s, c))
                        activate(n, c);
                else if (now - c->transfer_wait_since > (double) n->k.transfer_wait)
                        transfer_give_up(n, c, "its submit machine's agent did not come back", now);
        }
        free(w);
}

/* Starts c's job (c->job) on its slot: charged, Running, ActivateClaim. */
static void activate(Nego *n, Claim *c) {
        double now = nego_now();
        Job *job = queue_find(n->queue, c->job);
        unmatch(n, c);
        if (queue_run_room(n->queue, glean_strmap_size(n->matching)) == 0) {
                /* MAX_JOBS_RUNNING lowered while the claim was on its way. */
                claim_end(n, c, true, "MAX_JOBS_RUNNING reached");
                return;
        }
        if (!job || job->status != JOB_IDLE) {
                /* Removed or held while we claimed: the next one, or none. */
                job = next_job(n, c);
                if (!job) {
                        claim_end(n, c, true, "no idle job of the submitter fits the slot");
                        return;
                }
                c->job = job->id;
                snprintf(c->jobkey, sizeof c->jobkey, "%" PRId64 ".%" PRId64, job->id.cluster, job->id.proc);
        }
        if (!transfer_ready(n, c, job, now))
                return;
        nego_batch(n);
        if (!c->charged) {
                int r = acct_claim_begin(n->acct, c->id, c->submitter, c->weight, now);
                if (r < 0) {
                        glean_log_errno(LOG_ERR, r, "claim %s: the accounts refuse it: %m", c->pub);
                        claim_end(n, c, true, "the accounts refused it");
                        return;
                }
                c->charged = true;
        }
        int r = queue_job_start(n->queue, job->id, c->id, c->slot, now);
        if (r < 0) {
                glean_log_errno(LOG_ERR, r, "job %s: cannot start it: %m", c->jobkey);
                claim_end(n, c, true, "the job cannot start");
                return;
        }
        if (c->first_start == 0)
                c->first_start = now;
        c->state = CLAIM_ACTIVATING;
        c->idle_since = 0;
        c->ending = c->evicting = c->release = false;
        SlotRec *s = nego_slot(n, c->slot);
        if (s) {
                s->held = c;
                if (s->waiting == c)
                        s->waiting = NULL;
        }
        nego_log_job(LOG_INFO, MESSAGE_ID_JOB_START, job->id, job->submitter, c->slot, c, NULL,
                     "job %s of %s starts on %s", c->jobkey, job->submitter, c->slot);
        /* A run that transfers: the grant goes to the submit agent first,
         * its Transfer with the ActivateClaim. */
        ClassAd *transfer = NULL;
        char twhy[300] = "";
        if (c->transfer_wanted && nego_grant_make(n, c, job, &transfer, twhy, sizeof twhy) < 0) {
                glean_log(LOG_WARNING, NULL, NULL, 0, "job %s: no grant for its files: %s; requeued", c->jobkey, twhy);
                nego_claim_lost(n, c, twhy);
                return;
        }
        ClassAd *m = claim_msg(GLEAN_CMD_ACTIVATE_CLAIM, c);
        r = m ? glean_msg_set_ad(m, "JobAd", job->ad) : -ENOMEM;
        if (r >= 0 && transfer)
                r = glean_msg_set_ad(m, "Transfer", transfer);
        classad_free(transfer);
        if (r >= 0)
                r = claim_send(n, c, TAKE_AD(m), PEND_ACTIVATE);
        classad_free(m);
        if (r < 0)
                /* The agent went away in this very iteration: the lease decides. */
                glean_log_errno(LOG_WARNING, r, "job %s: ActivateClaim not sent: %m", c->jobkey);
}

static bool slot_is_ours_idle(SlotRec *s, const Claim *c) {
        char state[32], act[32];
        nego_slot_state(s, state, sizeof state, act, sizeof act);
        return strcmp(state, "Claimed") == 0 && strcmp(act, "Idle") == 0 &&
               (!s->claim_id || strcmp(s->claim_id, c->id) == 0);
}

void nego_claim_granted(Nego *n, Claim *c, const ClassAd *reply) {
        char *slot = NULL, *state = NULL, *act = NULL, full[300];
        int64_t lease = 0;
        double now = nego_now();
        unmatch(n, c);
        glean_strmap_put(n->matching, c->jobkey, c); /* still on its way until it starts */
        if (classad_eval_string(reply, "Slot", GLEAN_CA_MODE, &slot) >= 0 && *slot) {
                slot_named(n, c->machine, slot, full, sizeof full);
                char *dup = full[0] ? strdup(full) : NULL;
                if (dup) {
                        free(c->slot);
                        c->slot = dup;
                }
        }
        if (classad_eval_int(reply, "LeaseDuration", GLEAN_CA_MODE, &lease) >= 0 && lease > 0)
                c->lease = (double) lease;
        c->alive_until = now + c->lease;
        c->next_alive = now + (double) n->k.alive_interval;
        classad_eval_string(reply, "State", GLEAN_CA_MODE, &state);
        classad_eval_string(reply, "Activity", GLEAN_CA_MODE, &act);
        nego_log_job(LOG_INFO, MESSAGE_ID_CLAIM, c->job, c->submitter, c->slot, c, NULL,
                     "claimed %s for job %s of %s (lease %.0f s)", c->slot, c->jobkey, c->submitter, c->lease);
        bool ready = state && act && strcmp(state, "Claimed") == 0 && strcmp(act, "Idle") == 0;
        free(slot);
        free(state);
        free(act);
        SlotRec *s = nego_slot(n, c->slot);
        if (ready) {
                activate(n, c);
                return;
        }
        /* A preempting claim (or a slot still ending its backfill): ours once
         * the slot says Claimed/Idle (an Event or its ad). */
        c->state = CLAIM_WAITING;
        if (s)
                s->waiting = c;
}

void nego_claim_activated(Nego *n, Claim *c, const ClassAd *reply) {
        bool in = false;
        if (c->state == CLAIM_ACTIVATING)
                c->state = CLAIM_RUNNING;
        /* A run that fetches its input first says so (glean q's "<"). */
        const Job *j = queue_find(n->queue, c->job);
        if (c->grant && j && j->claim_id && strcmp(j->claim_id, c->id) == 0 &&
            classad_eval_bool(reply, "TransferringInput", GLEAN_CA_MODE, &in) >= 0 && in) {
                nego_batch_queue(n);
                (void) queue_job_set_transferring(n->queue, c->job, true, false);
        }
        nego_backoff_forget(n, c->jobkey); /* it started: no failure counts any more */
}

/* ---- jobs that could not start ---- */

void nego_claim_start_failed(Nego *n, Claim *c, const ClassAd *reply, const char *why) {
        int64_t code = 0, sub = 0;
        char *hold = NULL;
        if (classad_eval_int(reply, "HoldReasonCode", GLEAN_CA_MODE, &code) < 0 || code <= 0 || code > INT32_MAX) {
                double wait = nego_backoff_job(n, c->jobkey);
                char reason[700];
                snprintf(reason, sizeof reason, "%s; not matched again for %.0f s", why, wait);
                nego_claim_lost(n, c, reason);
                return;
        }
        classad_eval_int(reply, "HoldReasonSubCode", GLEAN_CA_MODE, &sub);
        if (classad_eval_string(reply, "HoldReason", GLEAN_CA_MODE, &hold) < 0 || !*hold) {
                free(hold);
                hold = strdup(why);
        }
        Job *job = queue_find(n->queue, c->job);
        if (job && job->claim_id && strcmp(job->claim_id, c->id) == 0) {
                JobStatus st = JOB_IDLE;
                double now = nego_now();
                char w[300] = "";
                nego_batch(n);
                int r = queue_job_requeue(n->queue, c->job, why, now, &st);
                QueueRequester system = { .user = "root", .uid = 0, .admin = true };
                if (r >= 0 && st == JOB_IDLE)
                        r = queue_job_hold(n->queue, &system, c->job, hold ? hold : why, (int) code,
                                           sub < INT32_MIN || sub > INT32_MAX ? 0 : (int) sub, now, NULL, w, sizeof w);
                if (r < 0)
                        glean_log_errno(LOG_ERR, r, "job %s: cannot hold it (%s): %m", c->jobkey, w);
                else
                        nego_log_job(LOG_NOTICE, MESSAGE_ID_JOB_HOLD, c->job, c->submitter, c->slot, c, hold,
                                     "job %s of %s held: %s (HoldReasonCode %" PRId64 ", subcode %" PRId64 ")",
                                     c->jobkey, c->submitter, hold ? hold : why, code, sub);
        }
        free(hold);
        if (n->waiters)
                nego_waiters_check(n, nego_now());
        claim_end(n, c, true, "its job could not start");
}

/* ---- what a claim is charged ---- */

void nego_claims_reweigh(Nego *n, double now) {
        size_t pos = 0;
        const char *key;
        void *v;

        while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *c = v;
                SlotRec *s = c->charged && c->slot ? glean_strmap_get(n->slots, c->slot) : NULL;
                if (!s || s->held != c || s->partitionable)
                        continue;
                double w = nego_settings_slot_weight(n->settings, s->ad);
                if (w == c->weight)
                        continue;
                int r = acct_claim_set_weight(n->acct, c->id, w, now);
                if (r < 0) {
                        glean_log_errno(LOG_WARNING, r, "claim %s on %s: cannot charge it its slot's weight %g: %m",
                                        c->pub, c->slot, w);
                        continue;
                }
                c->weight = w;
        }
}

/* ---- the end of a job and of a claim ---- */

void nego_claim_lost(Nego *n, Claim *c, const char *why) {
        Job *job = queue_find(n->queue, c->job);
        if (job && job->claim_id && strcmp(job->claim_id, c->id) == 0) {
                JobStatus st = JOB_IDLE;
                nego_batch(n);
                int r = queue_job_requeue(n->queue, c->job, why, nego_now(), &st);
                if (r < 0)
                        glean_log_errno(LOG_ERR, r, "job %s: cannot requeue it: %m", c->jobkey);
                else
                        nego_log_job(LOG_NOTICE, MESSAGE_ID_JOB_REQUEUE, c->job, c->submitter, c->slot, c, why,
                                     "job %s of %s %s: %s", c->jobkey, c->submitter,
                                     st == JOB_IDLE ? "back to Idle" : st == JOB_REMOVED ? "removed" : "stays held",
                                     why);
        }
        char reason[600];
        snprintf(reason, sizeof reason, "lost: %s", why);
        claim_end(n, c, c->state != CLAIM_REQUESTED, reason);
}

int nego_claim_vacate(Nego *n, Claim *c, bool fast, const char *why) {
        nego_batch(n); /* a batch that changes claims */
        c->release = true;
        if (c->state == CLAIM_RELEARNING)
                return 0; /* it may run: vacated once relearned, requeued at the end of its lease */
        c->ending = true;
        if (c->state == CLAIM_REQUESTED || c->state == CLAIM_WAITING) {
                /* Not started: the claim just goes. */
                nego_claim_lost(n, c, why);
                return 0;
        }
        nego_log_job(LOG_INFO, NULL, c->job, c->submitter, c->slot, c, why, "job %s on %s: vacating (%s)", c->jobkey,
                     c->slot, why);
        ClassAd *m = claim_msg(GLEAN_CMD_DEACTIVATE, c);
        if (m && fast)
                classad_set_bool(m, "Graceful", false);
        return claim_send(n, c, m, PEND_OTHER);
}

typedef struct Run {
        Claim *c;
        double started;
} Run;

static int newest_first(const void *a, const void *b) {
        double x = ((const Run *) a)->started, y = ((const Run *) b)->started;
        return x < y ? 1 : x > y ? -1 : 0;
}

void nego_claims_over_limit(Nego *n) {
        const QueueSettings *qs = queue_settings(n->queue);
        size_t pos = 0, k = 0, total = glean_strmap_size(n->claims);
        const char *key;
        void *v;
        Run *runs;

        if (!qs->limit_running || queue_claimed(n->queue) <= (uint64_t) qs->max_jobs_running)
                return;
        runs = calloc(total ? total : 1, sizeof *runs);
        if (!runs)
                return;
        while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                Claim *c = v;
                const Job *j = queue_find(n->queue, c->job);
                double started = 0;
                if (c->ending || (c->state != CLAIM_RUNNING && c->state != CLAIM_ACTIVATING) || !j ||
                    !j->claim_id || strcmp(j->claim_id, c->id) != 0)
                        continue; /* not running, or going already */
                (void) classad_eval_real(j->ad, "JobCurrentStartDate", GLEAN_CA_MODE, &started);
                runs[k++] = (Run) { c, started };
        }
        if (k > (uint64_t) qs->max_jobs_running) {
                char why[160];
                size_t over = k - (size_t) qs->max_jobs_running;
                snprintf(why, sizeof why, "MAX_JOBS_RUNNING lowered to %" PRId64 "", qs->max_jobs_running);
                qsort(runs, k, sizeof *runs, newest_first);
                glean_log(LOG_NOTICE, NULL, NULL, 0, "%zu jobs run, MAX_JOBS_RUNNING is %" PRId64 ": vacating the %zu newest",
                          k, qs->max_jobs_running, over);
                for (size_t i = 0; i < over; i++)
                        nego_claim_vacate(n, runs[i].c, false, why);
        }
        free(runs);
}

void nego_job_leaving(Nego *n, JobId id, const char *why) {
        Claim *c = nego_claim_of_job(n, id);
        if (c)
                nego_claim_vacate(n, c, false, why);
}

/* A claim coming from machine m's agent, or NULL (logged). */
static Claim *claim_from(Nego *n, Conn *from, const char *id, const char *what) {
        Claim *c = nego_claim(n, id);
        if (!c)
                return NULL;
        if (!from || strcasecmp(c->machine, from->machine) != 0) {
                GleanLogField f[] = { { "GLEAN_MACHINE", from ? from->machine : "" }, { "GLEAN_CLAIM", c->pub } };
                glean_log(LOG_WARNING, NULL, f, 2, "agent %s sent %s about a claim on %s; ignored",
                          from ? from->machine : "?", what, c->machine);
                return NULL;
        }
        return c;
}

/* The exit as the queue takes it: the agent's Hold = true (e.g. out of
 * memory) is HoldReasonCode 34, JobOutOfResources, unless it gives one. */
static ClassAd *exit_report(const ClassAd *msg, bool hold) {
        ClassAd *ex = NULL;
        if (classad_copy(msg, &ex) < 0)
                return NULL;
        int64_t code = 0;
        if (hold && (classad_eval_int(ex, "HoldReasonCode", GLEAN_CA_MODE, &code) < 0 || code <= 0))
                classad_set_int(ex, "HoldReasonCode", QUEUE_HOLD_OUT_OF_RESOURCES);
        if (hold && !classad_has(ex, "HoldReason")) {
                char *reason = NULL;
                classad_eval_string(msg, "Reason", GLEAN_CA_MODE, &reason);
                classad_set_string(ex, "HoldReason", reason ? reason : "held by the agent");
                free(reason);
        }
        return ex;
}

/* Whether msg reports the end of the run c has now: the job it names
 * (ClusterId and ProcId; an agent that names none speaks of c's) is c's,
 * and so is the run (NumJobStarts of the ad the agent ran, when it says).
 * Otherwise it is an exit heard again, of a job or a run the claim is done
 * with (why says which). */
static bool exit_of_current_run(Nego *n, const Claim *c, const ClassAd *msg, char *why, size_t len) {
        int64_t cluster = -1, proc = -1, starts = -1, current = -1;
        if (classad_eval_int(msg, "ClusterId", GLEAN_CA_MODE, &cluster) >= 0 &&
            classad_eval_int(msg, "ProcId", GLEAN_CA_MODE, &proc) >= 0 &&
            (cluster != c->job.cluster || proc != c->job.proc)) {
                snprintf(why, len, "it is of job %" PRId64 ".%" PRId64 "; the claim runs job %s now", cluster, proc,
                         c->jobkey);
                return false;
        }
        const Job *job = queue_find(n->queue, c->job);
        if (job && classad_eval_int(msg, "NumJobStarts", GLEAN_CA_MODE, &starts) >= 0 &&
            classad_eval_int(job->ad, "NumJobStarts", GLEAN_CA_MODE, &current) >= 0 && starts != current) {
                snprintf(why, len, "it is of start %" PRId64 " of job %s, which is at start %" PRId64, starts,
                         c->jobkey, current);
                return false;
        }
        return true;
}

void nego_claim_job_exit(Nego *n, Conn *from, const ClassAd *msg) {
        char *id = NULL, *reason = NULL, *hold_reason = NULL, stale[200];
        classad_eval_string(msg, "ClaimId", GLEAN_CA_MODE, &id);
        Claim *c = claim_from(n, from, id, "JobExit");
        if (!c && id && !nego_claim(n, id)) {
                char pub[NEGO_CLAIM_PUBLIC + 1];
                snprintf(pub, sizeof pub, "%s", id); /* the rest stays secret */
                GleanLogField f[] = { { "GLEAN_MACHINE", from ? from->machine : "" }, { "GLEAN_CLAIM", pub } };
                glean_log(LOG_INFO, NULL, f, 2,
                          "agent %s: a JobExit of claim %s, which we do not hold (any more): nothing to do",
                          from ? from->machine : "?", pub);
        }
        free(id);
        if (!c || (c->state != CLAIM_RUNNING && c->state != CLAIM_ACTIVATING && c->state != CLAIM_RELEARNING))
                return;
        if (!exit_of_current_run(n, c, msg, stale, sizeof stale)) {
                JobId named = c->job;
                classad_eval_int(msg, "ClusterId", GLEAN_CA_MODE, &named.cluster);
                classad_eval_int(msg, "ProcId", GLEAN_CA_MODE, &named.proc);
                nego_log_job(LOG_INFO, NULL, named, c->submitter, c->slot, c, stale,
                             "a JobExit heard again on %s: %s; nothing to do", c->slot, stale);
                return;
        }
        double now = nego_now();
        bool hold = false, by_signal = false;
        int64_t code = 0, sig = 0;
        double wall = 0, ucpu = 0, scpu = 0;
        classad_eval_bool(msg, "Hold", GLEAN_CA_MODE, &hold);
        /* A run whose files could not travel (HoldReasonCode 12 or 13, the
         * Reason naming the file) holds the job, though the agent ended it. */
        int64_t hold_code = 0;
        if (classad_eval_int(msg, "HoldReasonCode", GLEAN_CA_MODE, &hold_code) >= 0 && hold_code > 0)
                hold = true;
        classad_eval_bool(msg, "ExitBySignal", GLEAN_CA_MODE, &by_signal);
        classad_eval_int(msg, "ExitCode", GLEAN_CA_MODE, &code);
        classad_eval_int(msg, "ExitSignal", GLEAN_CA_MODE, &sig);
        classad_eval_real(msg, "RemoteWallClockTime", GLEAN_CA_MODE, &wall);
        classad_eval_real(msg, "RemoteUserCpu", GLEAN_CA_MODE, &ucpu);
        classad_eval_real(msg, "RemoteSysCpu", GLEAN_CA_MODE, &scpu);
        classad_eval_string(msg, "Reason", GLEAN_CA_MODE, &reason);
        classad_eval_string(msg, "HoldReason", GLEAN_CA_MODE, &hold_reason);
        /* The agent names a Reason when it ended the job itself (vacated,
         * preempted, lease expired, drained, ...): the job is to run again.
         * Not when only the exit status of a re-adopted job is unknown. */
        bool by_agent = reason && *reason && !strstr(reason, "exit status is unknown");
        bool evicted = (c->ending || c->evicting || by_agent) && !hold;
        Job *job = queue_find(n->queue, c->job);
        char what[64];
        if (hold_code == QUEUE_HOLD_TRANSFER_INPUT || hold_code == QUEUE_HOLD_TRANSFER_OUTPUT)
                snprintf(what, sizeof what, "could not transfer its %s", hold_code == QUEUE_HOLD_TRANSFER_INPUT
                                                                                 ? "input" : "output");
        else if (by_signal)
                snprintf(what, sizeof what, "was killed by signal %" PRId64, sig);
        else
                snprintf(what, sizeof what, "exited with status %" PRId64, code);
        if (job && job->claim_id && strcmp(job->claim_id, c->id) == 0) {
                nego_batch(n);
                if (evicted) {
                        char why[400];
                        snprintf(why, sizeof why, "evicted from %s: %s", c->slot, reason ? reason : "vacated");
                        int64_t sent = 0, recvd = 0; /* its files moved before, counted as HTCondor does */
                        classad_eval_int(msg, "BytesSent", GLEAN_CA_MODE, &sent);
                        classad_eval_int(msg, "BytesRecvd", GLEAN_CA_MODE, &recvd);
                        if (queue_job_add_bytes(n->queue, c->job, sent, recvd) < 0)
                                glean_log(LOG_WARNING, NULL, NULL, 0, "job %s: its bytes moved are not recorded",
                                          c->jobkey);
                        int r = queue_job_requeue(n->queue, c->job, why, now, NULL);
                        if (r < 0)
                                glean_log_errno(LOG_ERR, r, "job %s: cannot requeue it: %m", c->jobkey);
                        else
                                nego_log_job(LOG_NOTICE, MESSAGE_ID_JOB_REQUEUE, c->job, c->submitter, c->slot, c,
                                             why, "job %s of %s back to Idle: %s (it %s after %.1f s)", c->jobkey,
                                             c->submitter, why, what, wall);
                } else {
                        JobStatus st = JOB_COMPLETED;
                        const char *qreason = NULL;
                        char why[300] = "";
                        ClassAd *ex = exit_report(msg, hold);
                        int r = ex ? queue_job_exit(n->queue, c->job, ex, now, &st, &qreason, why, sizeof why)
                                   : -ENOMEM;
                        classad_free(ex);
                        if (r < 0) {
                                glean_log_errno(LOG_ERR, r, "job %s: the queue refused its exit (%s); requeued",
                                                c->jobkey, why[0] ? why : "%m");
                                queue_job_requeue(n->queue, c->job, "its exit report was refused", now, NULL);
                        } else {
                                nego_log_job(LOG_INFO, MESSAGE_ID_JOB_EXIT, c->job, c->submitter, c->slot, c, reason,
                                             "job %s of %s %s on %s after %.1f s (user %.2f s, system %.2f s): %s",
                                             c->jobkey, c->submitter, what, c->slot, wall, ucpu, scpu,
                                             job_status_name(st));
                                if (st == JOB_HELD)
                                        nego_log_job(LOG_NOTICE, MESSAGE_ID_JOB_HOLD, c->job, c->submitter, c->slot, c,
                                                     qreason ? qreason : hold_reason, "job %s of %s held: %s",
                                                     c->jobkey, c->submitter,
                                                     qreason       ? qreason
                                                     : hold_reason ? hold_reason
                                                                   : "on exit");
                        }
                }
        }
        free(reason);
        free(hold_reason);
        if (n->waiters)
                nego_waiters_check(n, now); /* a Wait on it is answered now, not at the next tick */
        nego_want_cycle(n);
        nego_grant_end(n, c); /* the run is over: its files are done with */
        /* The claim: the next job, or its end. */
        if (c->state == CLAIM_RELEARNING)
                n->relearning--;
        c->state = CLAIM_WAITING;
        SlotRec *s = nego_slot(n, c->slot);
        bool worklife = n->k.claim_worklife < 0 || now - c->first_start < (double) n->k.claim_worklife;
        if (evicted || c->release || !worklife || n->stopping || !s || c->gone_since > 0) {
                const char *why = evicted ? "its job was evicted"
                                  : c->release ? "its job was removed or held"
                                  : !worklife ? "CLAIM_WORKLIFE is over"
                                  : s && c->gone_since == 0 ? "the central manager is stopping"
                                                            : "the agent no longer has it";
                claim_end(n, c, true, why);
                return;
        }
        if (queue_run_room(n->queue, glean_strmap_size(n->matching)) == 0) {
                claim_end(n, c, true, "MAX_JOBS_RUNNING reached");
                return;
        }
        Job *next = next_job(n, c);
        if (!next) {
                claim_end(n, c, true, "no idle job of the submitter fits the slot");
                return;
        }
        c->job = next->id;
        snprintf(c->jobkey, sizeof c->jobkey, "%" PRId64 ".%" PRId64, next->id.cluster, next->id.proc);
        activate(n, c);
}

void nego_claim_event(Nego *n, Conn *from, const ClassAd *msg) {
        char *slot = NULL, *state = NULL, *act = NULL, *id = NULL, full[300];
        bool ended = false;
        classad_eval_string(msg, "Slot", GLEAN_CA_MODE, &slot);
        classad_eval_string(msg, "State", GLEAN_CA_MODE, &state);
        classad_eval_string(msg, "Activity", GLEAN_CA_MODE, &act);
        classad_eval_bool(msg, "ClaimEnded", GLEAN_CA_MODE, &ended);
        if (ended && classad_eval_string(msg, "ClaimId", GLEAN_CA_MODE, &id) >= 0) {
                Claim *c = claim_from(n, from, id, "an Event");
                if (c) {
                        char *reason = NULL, why[400];
                        classad_eval_string(msg, "Reason", GLEAN_CA_MODE, &reason);
                        snprintf(why, sizeof why, "the agent ended it (%s)", reason && *reason ? reason : "no reason");
                        free(reason);
                        nego_claim_lost(n, c, why);
                }
                goto out;
        }
        SlotRec *s = slot && from ? slot_named(n, from->machine, slot, full, sizeof full) : NULL;
        if (!s || !state || !act)
                goto out;
        if (s->held && (strcmp(state, "Preempting") == 0 || strcmp(act, "Retiring") == 0 ||
                        strcmp(act, "Vacating") == 0 || strcmp(act, "Killing") == 0))
                s->held->evicting = true;
        if (s->waiting && strcmp(state, "Claimed") == 0 && strcmp(act, "Idle") == 0 &&
            (!s->held || s->held == s->waiting || s->held->state == CLAIM_WAITING))
                activate(n, s->waiting);
out:
        free(slot);
        free(state);
        free(act);
        free(id);
}

/* The agent advertises the claim's slot without it: its JobExit may still
 * come (an agent sends what it kept while away after its slot ads), else
 * the claim is lost after NEGOTIATOR_TIMEOUT (nego_claims_tick). */
static void claim_gone(Claim *c) {
        if (c->gone_since == 0)
                c->gone_since = nego_now();
}

/* A claim to relearn (after our restart) and what its agent says of its
 * slot now: the job runs on (the claim is ours again), or it ended while we
 * were away (its exit follows, or it was lost: requeued), or the claim is
 * not there (the same). */
static void relearn(Nego *n, Claim *c, SlotRec *s) {
        char state[32] = "", act[32] = "";
        if (s) {
                nego_slot_state(s, state, sizeof state, act, sizeof act);
                if ((strcmp(state, "Claimed") != 0 && strcmp(state, "Preempting") != 0) ||
                    (s->claim_id && strcmp(s->claim_id, c->id) != 0)) {
                        claim_gone(c);
                        return;
                }
                s->held = c;
        }
        double now = nego_now();
        /* Claimed/Idle: the job ended while we were away; its JobExit may
         * still come (the agent sends what it kept after its slot ads),
         * else it is requeued (nego_claims_tick). */
        c->idle_since = strcmp(state, "Claimed") == 0 && strcmp(act, "Idle") == 0 ? now : 0;
        c->relearned_idle = c->idle_since > 0;
        c->state = CLAIM_RUNNING;
        c->alive_until = now + c->lease;
        c->next_alive = now;
        n->relearning--;
        nego_log_job(LOG_NOTICE, MESSAGE_ID_CLAIM, c->job, c->submitter, c->slot, c, NULL,
                     "relearned the claim of job %s on %s (%s/%s)", c->jobkey, c->slot, *state ? state : "?",
                     *act ? act : "?");
        if (c->release)
                nego_claim_vacate(n, c, false, "removed or held while it ran");
}

void nego_claim_alive(Nego *n, Claim *c, const ClassAd *reply) {
        (void) reply;
        c->alive_until = nego_now() + c->lease;
        if (c->state == CLAIM_RELEARNING)
                relearn(n, c, nego_slot(n, c->slot));
}

/* The agent of s advertises a claim of ours that we do not hold: one we
 * gave up (its lease expired while the agent was away, and the job was
 * requeued, perhaps runs elsewhere now), or one a restart of ours forgot
 * (it ran no job of the queue). Its run is no run of the queue: the agent
 * is told to kill the job at once and to release the claim, and its exit,
 * should it come, is one of a claim we do not hold (ignored). Told again
 * after NEGOTIATOR_TIMEOUT while it still advertises it. */
static void drop_unknown_claim(Nego *n, SlotRec *s, const char *claim_id) {
        double now = nego_now();
        if (s->dropped && strcmp(s->dropped, claim_id) == 0 && now - s->dropped_at < (double) n->k.timeout)
                return;
        char *dup = strdup(claim_id);
        if (!dup)
                return;
        free(s->dropped);
        s->dropped = dup;
        s->dropped_at = now;
        char pub[NEGO_CLAIM_PUBLIC + 1], state[32], act[32];
        snprintf(pub, sizeof pub, "%s", claim_id); /* the rest stays secret */
        nego_slot_state(s, state, sizeof state, act, sizeof act);
        bool busy = strcmp(act, "Idle") != 0 && (strcmp(state, "Claimed") == 0 || strcmp(state, "Preempting") == 0);
        GleanLogField f[] = { { "GLEAN_SLOT", s->name }, { "GLEAN_CLAIM", pub } };
        glean_log(LOG_NOTICE, NULL, f, 2,
                  "%s (%s/%s) holds claim %s, which the central manager does not hold (any more): the agent is told "
                  "to %srelease it",
                  s->name, state, act, pub, busy ? "kill its job and " : "");
        ClassAd *m = NULL;
        if (busy && glean_msg_new(GLEAN_CMD_DEACTIVATE, &m) >= 0 && classad_set_string(m, "ClaimId", claim_id) >= 0 &&
            classad_set_bool(m, "Graceful", false) >= 0)
                nego_agent_request(n, s->machine, m, PEND_OTHER, NULL, NULL);
        classad_free(m);
        m = NULL;
        if (glean_msg_new(GLEAN_CMD_RELEASE, &m) >= 0 && classad_set_string(m, "ClaimId", claim_id) >= 0)
                nego_agent_request(n, s->machine, m, PEND_OTHER, NULL, NULL);
        classad_free(m);
}

void nego_claim_seen(Nego *n, Conn *from, SlotRec *s, const char *claim_id) {
        if (!s || !from)
                return;
        Claim *c = claim_id ? nego_claim(n, claim_id) : NULL;
        if (claim_id && !c)
                drop_unknown_claim(n, s, claim_id);
        if (c && strcasecmp(c->machine, from->machine) != 0)
                c = NULL;
        if (c) {
                c->alive_until = nego_now() + c->lease;
                c->gone_since = 0;
        }
        /* The claims still to relearn that name this slot (or this claim id). */
        if (n->relearning > 0) {
                size_t total = glean_strmap_size(n->claims), k = 0, pos = 0;
                Claim **re = calloc(total ? total : 1, sizeof *re);
                const char *key;
                void *v;
                if (!re)
                        return;
                while (glean_strmap_next(n->claims, &pos, &key, &v)) {
                        Claim *x = v;
                        if (x->state == CLAIM_RELEARNING && (x == c || strcasecmp(x->slot, s->name) == 0) &&
                            strcasecmp(x->machine, from->machine) == 0)
                                re[k++] = x;
                }
                for (size_t i = 0; i < k; i++) {
                        if (re[i] == c && strcasecmp(c->slot, s->name) != 0) {
                                char *dup = strdup(s->name);
                                if (dup) {
                                        free(c->slot);
                                        c->slot = dup;
                                }
                        }
                        relearn(n, re[i], s);
                }
                free(re);
                c = claim_id ? nego_claim(n, claim_id) : NULL; /* relearn() may have ended it */
        }
        if (s->waiting && slot_is_ours_idle(s, s->waiting) && (!s->held || s->held->state == CLAIM_WAITING))
                activate(n, s->waiting);
        /* Our claim that held it, the agent no longer advertises. */
        Claim *h = s->held;
        if (!h || (h->state != CLAIM_RUNNING && h->state != CLAIM_ACTIVATING))
                return;
        char state[32], act[32];
        nego_slot_state(s, state, sizeof state, act, sizeof act);
        if (h == c) {
                /* Running by our account, Claimed/Idle by the agent's: its
                 * JobExit follows, or it was lost (see nego_claims_tick). */
                bool idle = h->state == CLAIM_RUNNING && strcmp(state, "Claimed") == 0 && strcmp(act, "Idle") == 0;
                if (!idle)
                        h->idle_since = 0;
                else if (h->idle_since == 0)
                        h->idle_since = nego_now();
                return;
        }
        bool unclaimed = !claim_id && strcmp(state, "Claimed") != 0 && strcmp(state, "Preempting") != 0;
        bool other = claim_id && (!c || c != s->waiting);
        if (unclaimed || other)
                claim_gone(h);
}

void nego_claims_tick(Nego *n, double now) {
        nego_backoffs_tick(n, now);
        nego_claims_transfer_retry(n, NULL, now);
        size_t total = glean_strmap_size(n->claims), k = 0, pos = 0;
        Claim **all = calloc(total ? total : 1, sizeof *all);
        const char *key;
        void *v;
        if (!all)
                return;
        while (glean_strmap_next(n->claims, &pos, &key, &v))
                all[k++] = v;
        for (size_t i = 0; i < k; i++) {
                Claim *c = all[i];
                bool connected = nego_agent_conn(n, c->machine) != NULL;
                switch (c->state) {
                case CLAIM_REQUESTED:
                        if (now - c->requested_at > 2.0 * (double) n->k.timeout)
                                nego_claim_refused(n, c, "no answer");
                        continue;
                case CLAIM_RELEARNING:
                        if (c->gone_since > 0 && now - c->gone_since > (double) n->k.timeout) {
                                nego_claim_lost(n, c, "its agent advertises the slot without the claim");
                                continue;
                        }
                        if (now > c->deadline) {
                                nego_claim_lost(n, c, "its agent did not advertise the claim within the job lease");
                                continue;
                        }
                        break;
                default:
                        if (c->gone_since > 0 && now - c->gone_since > (double) n->k.timeout) {
                                nego_claim_lost(n, c, "its agent advertises the slot without the claim");
                                continue;
                        }
                        if (c->state == CLAIM_RUNNING && c->idle_since > 0 &&
                            now - c->idle_since > (double) n->k.timeout) {
                                nego_claim_lost(n, c,
                                                c->relearned_idle
                                                        ? "its slot was Claimed/Idle when the central manager came "
                                                          "back and no exit report came: the job never started (the "
                                                          "central manager stopped before its ActivateClaim left) or "
                                                          "its exit report was lost"
                                                        : "the job ended and its exit report was lost");
                                continue;
                        }
                        /* The lease's end, and a grace past it: a job whose agent is
                         * gone is ended by its reaper at the lease's end as the
                         * agent last heard it (whole seconds, checked once a
                         * second, agent/exec/reaper-core.c), before it runs elsewhere. */
                        if (now > c->alive_until + NEGO_LEASE_GRACE) {
                                nego_claim_lost(n, c,
                                                connected ? "no keep-alive answered within the claim's lease"
                                                          : "its agent is gone and the claim's lease expired");
                                continue;
                        }
                        break;
                }
                if (connected && now >= c->next_alive) {
                        c->next_alive = now + (double) n->k.alive_interval;
                        claim_send(n, c, claim_msg(GLEAN_CMD_KEEP_ALIVE, c), PEND_KEEP_ALIVE);
                }
        }
        free(all);
}

/* ---- after a restart ---- */

typedef struct RestoreCtx {
        Nego *n;
        size_t claims;
        JobId *requeue;
        size_t n_requeue, cap_requeue;
} RestoreCtx;

static int restore_one(void *userdata, Job *job) {
        RestoreCtx *x = userdata;
        Nego *n = x->n;
        if (!job->claim_id && job->status != JOB_RUNNING)
                return 0;
        double now = nego_now();
        const char *at = job->slot ? strrchr(job->slot, '@') : NULL;
        if (!job->claim_id || !at || strlen(job->claim_id) > NEGO_CLAIM_ID_LEN) {
                if (x->n_requeue == x->cap_requeue) {
                        size_t cap = x->cap_requeue ? 2 * x->cap_requeue : 16;
                        JobId *a = realloc(x->requeue, cap * sizeof *a);
                        if (!a)
                                return -ENOMEM;
                        x->requeue = a;
                        x->cap_requeue = cap;
                }
                x->requeue[x->n_requeue++] = job->id;
                return 0;
        }
        Claim *c = NULL;
        int r = claim_new(n, job->claim_id, job->slot, at + 1, job->submitter, job->id, &c);
        if (r < 0)
                return r;
        int64_t lease = 0;
        if (classad_eval_int(job->ad, "JobLeaseDuration", GLEAN_CA_MODE, &lease) < 0 || lease <= 0)
                lease = n->k.job_lease;
        c->state = CLAIM_RELEARNING;
        n->relearning++;
        c->release = job->status != JOB_RUNNING; /* removed or held while it ran: vacated once relearned */
        c->deadline = now + (double) lease;
        c->alive_until = c->deadline;
        c->first_start = now;
        const char *sub = NULL;
        double weight = 1, begin = 0;
        if (acct_claim_get(n->acct, c->id, &sub, &weight, &begin) >= 0) {
                c->charged = true;
                c->weight = weight;
        } else {
                /* Not charged at the crash (it cannot be: one batch): charged from now. */
                nego_batch(n);
                c->weight = 1;
                c->charged = acct_claim_begin(n->acct, c->id, c->submitter, c->weight, now) >= 0;
        }
        x->claims++;
        return 0;
}

void nego_claims_reset(Nego *n, const char *why) {
        const char *key;
        void *v;
        /* Every agent advertises its slots and claims again, then sends the
         * JobExits and claim ends we did not acknowledge (those this batch
         * took among them: their Replies were not sent). */
        for (Conn *c = n->conns.head; c; c = c->all_link.next)
                if (c->agent && !c->dead)
                        nego_conn_fail(c, "the central manager undid what it could not commit: advertise again");
        for (size_t pos = 0; glean_strmap_next(n->pending, &pos, &key, &v); pos = 0) {
                Pending *p = glean_strmap_remove(n->pending, key);
                Conn *u = p->kind == PEND_FORWARD ? nego_conn_by_id(n, p->user_conn) : NULL;
                ClassAd *reply = NULL;
                if (u && glean_msg_reply(p->user_req, false, why, &reply) >= 0)
                        nego_send(u, reply);
                classad_free(reply);
                nego_pending_free(p);
        }
        for (size_t pos = 0; glean_strmap_next(n->claims, &pos, &key, &v); pos = 0) {
                Claim *c = v;
                free(c->requested);
                c->requested = NULL; /* the slots go too */
                claim_free(n, c);
        }
        nego_slots_clear(n);
        n->relearning = 0;
        nego_claims_restore(n);
}

int nego_claims_restore(Nego *n) {
        RestoreCtx x = { .n = n };
        int r = queue_foreach(n->queue, restore_one, &x);
        for (size_t i = 0; r >= 0 && i < x.n_requeue; i++) {
                nego_batch(n);
                queue_job_requeue(n->queue, x.requeue[i], "its claim is not known after a restart", nego_now(), NULL);
        }
        free(x.requeue);
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot restore the claims of the running jobs: %m");
        if (x.claims + x.n_requeue > 0)
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "%zu running job%s wait for their agents to advertise their claims; %zu requeued", x.claims,
                          x.claims == 1 ? "" : "s", x.n_requeue);
        size_t charged = acct_claims_count(n->acct);
        if (charged > x.claims)
                glean_log(LOG_WARNING, NULL, NULL, 0, "the accounts hold %zu claims, the queue's running jobs %zu",
                          charged, x.claims);
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * simulate.c — the matchmaker run over a scenario, cycle after cycle
 * (simulate.h tells what a step does): the pool's slots and the jobs, the
 * accountant in memory, the cycle's matches applied.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "scenario-internal.h"
#include "simulate.h"

#define EPOCH NEGO_SCENARIO_EPOCH

typedef enum SimJobState {
        SIM_PENDING, /* not submitted yet */
        SIM_IDLE,
        SIM_RUNNING,
        SIM_DONE,
} SimJobState;

typedef struct SimSlot SimSlot;

typedef struct SimJob {
        ClassAd *ad;
        char id[48];         /* "CLUSTER.PROC" */
        size_t submitter;
        int64_t runtime, arrival;
        SimJobState state;
        SimSlot *slot;       /* while running */
        int64_t started;     /* while running: since when (a preempted job starts again) */
} SimJob;

struct SimSlot {
        ClassAd *ad;
        char *name;
        bool partitionable, dynamic;
        SimSlot *parent;     /* a dynamic slot's */
        unsigned children;   /* a partitionable slot's dynamic slots so far */
        double cpus, memory, disk; /* a partitionable slot: what is left; a dynamic one: what it took */
        SimJob *job;
};

struct Sim {
        const SimScenario *sc;
        NegoSettings *settings;
        Accountant *acct;
        int64_t interval, now;
        unsigned cycle;
        bool *slot_added;    /* per scenario slot: in the pool yet */
        SimSlot **slots;     /* the pool */
        size_t n_slots, cap_slots;
        SimJob *jobs;
        size_t n_jobs;
        size_t finished;     /* since the last cycle */
        size_t *pending;     /* per submitter: jobs not submitted yet */
        SimReport report;
        size_t cap_matches, cap_preemptions;
        NegoResult res;
};

static int64_t abs_time(int64_t t) {
        return EPOCH + t;
}

/* ---- slots ---- */

static void slot_free(SimSlot *s) {
        if (!s)
                return;
        classad_free(s->ad);
        free(s->name);
        free(s);
}

static int pool_add(Sim *sim, SimSlot *s) {
        int r = scn_grow((void **) &sim->slots, &sim->cap_slots, sim->n_slots, sizeof *sim->slots);

        if (r >= 0)
                sim->slots[sim->n_slots++] = s;
        return r;
}

/* The slots of the scenario that have arrived by now join the pool. */
static int slots_arrive(Sim *sim) {
        for (size_t i = 0; i < sim->sc->n_slots; i++) {
                const SimScenarioSlot *ss = &sim->sc->slots[i];
                SimSlot *s;
                int r;

                if (sim->slot_added[i] || ss->at > sim->now)
                        continue;
                if (!(s = calloc(1, sizeof *s)) || !(s->name = strdup(ss->name))) {
                        free(s);
                        return -ENOMEM;
                }
                s->partitionable = ss->partitionable;
                s->cpus = ss->cpus;
                s->memory = ss->memory;
                s->disk = ss->disk;
                if ((r = classad_copy(ss->ad, &s->ad)) < 0 || (r = pool_add(sim, s)) < 0) {
                        slot_free(s);
                        return r;
                }
                sim->slot_added[i] = true;
        }
        return 0;
}

/* A partitionable slot's resources into its ad (and TotalSlot* for a dynamic one). */
static int set_resources(SimSlot *s) {
        int r = scn_set_number(s->ad, "Cpus", s->cpus);

        if (r >= 0)
                r = scn_set_number(s->ad, "Memory", s->memory);
        if (r >= 0)
                r = scn_set_number(s->ad, "Disk", s->disk);
        if (r >= 0 && s->dynamic) {
                r = scn_set_number(s->ad, "TotalSlotCpus", s->cpus);
                if (r >= 0)
                        r = scn_set_number(s->ad, "TotalSlotMemory", s->memory);
                if (r >= 0)
                        r = scn_set_number(s->ad, "TotalSlotDisk", s->disk);
        }
        return r;
}

/* A dynamic slot of p with what m takes: slot1_1@M, slot1_2@M, ... */
static int carve(Sim *sim, SimSlot *p, const NegoMatch *m, SimSlot **ret) {
        const double eps = 1e-9;
        const char *at = strchr(p->name, '@');
        SimSlot *d;
        int r;

        if (m->cpus > p->cpus + eps || m->memory > p->memory + eps || m->disk > p->disk + eps)
                return -EPROTO; /* the cycle carved more than the slot has */
        if (!(d = calloc(1, sizeof *d)))
                return -ENOMEM;
        p->children++;
        if (asprintf(&d->name, "%.*s_%u%s", (int) (at ? at - p->name : (ptrdiff_t) strlen(p->name)), p->name,
                     p->children, at ? at : "") < 0) {
                free(d);
                return -ENOMEM;
        }
        d->dynamic = true;
        d->parent = p;
        d->cpus = m->cpus;
        d->memory = m->memory;
        d->disk = m->disk;
        p->cpus = fmax(0, p->cpus - m->cpus);
        p->memory = fmax(0, p->memory - m->memory);
        p->disk = fmax(0, p->disk - m->disk);
        r = classad_copy(p->ad, &d->ad);
        if (r >= 0)
                r = classad_set_string(d->ad, "Name", d->name);
        if (r >= 0)
                (void) classad_delete(d->ad, "PartitionableSlot");
        if (r >= 0)
                r = classad_set_bool(d->ad, "DynamicSlot", true);
        if (r >= 0)
                r = classad_set_string(d->ad, "SlotType", "Dynamic");
        if (r >= 0)
                r = set_resources(d);
        if (r >= 0)
                r = set_resources(p);
        if (r >= 0)
                r = pool_add(sim, d);
        if (r < 0) {
                slot_free(d);
                return r;
        }
        *ret = d;
        return 0;
}

/* A slot no job runs on: Unclaimed/Idle since t; a dynamic one goes back
 * to its partitionable slot. */
static int slot_release(Sim *sim, SimSlot *s, int64_t t) {
        static const char *const gone[] = {
                "RemoteUser", "RemoteOwner", "JobId", "JobStart", "CurrentRank", "TotalJobRunTime",
                "RemoteUserPrio", "RemoteUserResourcesInUse", "RemoteGroup", "RemoteGroupResourcesInUse",
                "RemoteGroupQuota",
        };

        s->job = NULL;
        if (s->dynamic) {
                SimSlot *p = s->parent;
                p->cpus += s->cpus;
                p->memory += s->memory;
                p->disk += s->disk;
                for (size_t i = 0; i < sim->n_slots; i++)
                        if (sim->slots[i] == s) {
                                memmove(&sim->slots[i], &sim->slots[i + 1],
                                        (sim->n_slots - i - 1) * sizeof *sim->slots);
                                sim->n_slots--;
                                break;
                        }
                slot_free(s);
                return set_resources(p);
        }
        for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
                (void) classad_delete(s->ad, gone[i]);
        int r = classad_set_string(s->ad, "State", "Unclaimed");
        if (r >= 0)
                r = classad_set_string(s->ad, "Activity", "Idle");
        if (r >= 0)
                r = classad_set_int(s->ad, "EnteredCurrentState", abs_time(t));
        return r;
}

/* ---- jobs ---- */

static const char *sub_name(const Sim *sim, const SimJob *j) {
        return sim->sc->submitters[j->submitter].name;
}

/* job starts on s now, charged weight. */
static int job_start(Sim *sim, SimJob *job, SimSlot *s, double weight) {
        const SimScenarioSubmitter *sub = &sim->sc->submitters[job->submitter];
        int64_t t = abs_time(sim->now);
        int r;

        s->job = job;
        job->slot = s;
        job->state = SIM_RUNNING;
        job->started = sim->now;
        r = classad_set_string(s->ad, "State", "Claimed");
        r = r < 0 ? r : classad_set_string(s->ad, "Activity", "Busy");
        r = r < 0 ? r : classad_set_string(s->ad, "RemoteUser", sub->name);
        r = r < 0 ? r : classad_set_string(s->ad, "RemoteOwner", sub->user);
        r = r < 0 ? r : classad_set_string(s->ad, "JobId", job->id);
        r = r < 0 ? r : classad_set_int(s->ad, "JobStart", t);
        r = r < 0 ? r : classad_set_int(s->ad, "EnteredCurrentState", t);
        r = r < 0 ? r : classad_set_int(s->ad, "TotalJobRunTime", 0);
        r = r < 0 ? r : classad_set_real(s->ad, "CurrentRank", classad_rank(s->ad, job->ad, CA_MODE_OLD));
        r = r < 0 ? r : classad_set_int(job->ad, "JobStatus", 2);
        r = r < 0 ? r : classad_set_string(job->ad, "RemoteHost", s->name);
        if (r < 0)
                return r;
        return acct_claim_begin(sim->acct, s->name, sub->name, weight, (double) t);
}

/* job leaves its slot at t: done, or back to idle (preempted). */
static int job_stop(Sim *sim, SimJob *job, int64_t t, bool done) {
        int r = acct_claim_end(sim->acct, job->slot->name, (double) t);

        job->state = done ? SIM_DONE : SIM_IDLE;
        job->slot = NULL;
        if (r >= 0)
                r = classad_set_int(job->ad, "JobStatus", done ? 4 : 1);
        if (r >= 0)
                (void) classad_delete(job->ad, "RemoteHost");
        return r;
}

static int end_cmp(const void *x, const void *y) {
        const SimJob *a = *(SimJob *const *) x, *b = *(SimJob *const *) y;
        int64_t ea = a->started + a->runtime, eb = b->started + b->runtime;

        if (ea != eb)
                return ea < eb ? -1 : 1;
        return a < b ? -1 : a > b;
}

/* The jobs whose run time is over by t finish, in the order they do. */
static int jobs_finish(Sim *sim, int64_t t) {
        _cleanup_free_ SimJob **over = NULL;
        size_t n = 0;
        int r;

        for (size_t i = 0; i < sim->n_jobs; i++) {
                const SimJob *j = &sim->jobs[i];
                if (j->state == SIM_RUNNING && j->runtime != NEGO_RUNTIME_FOREVER && j->started + j->runtime <= t)
                        n++;
        }
        if (!n)
                return 0;
        if (!(over = calloc(n, sizeof *over)))
                return -ENOMEM;
        n = 0;
        for (size_t i = 0; i < sim->n_jobs; i++) {
                SimJob *j = &sim->jobs[i];
                if (j->state == SIM_RUNNING && j->runtime != NEGO_RUNTIME_FOREVER && j->started + j->runtime <= t)
                        over[n++] = j;
        }
        qsort(over, n, sizeof *over, end_cmp);
        for (size_t i = 0; i < n; i++) {
                SimSlot *s = over[i]->slot;
                int64_t end = over[i]->started + over[i]->runtime;
                if ((r = job_stop(sim, over[i], abs_time(end), true)) < 0 || (r = slot_release(sim, s, end)) < 0)
                        return r;
                sim->finished++;
        }
        return 0;
}

static void jobs_arrive(Sim *sim) {
        for (size_t i = 0; i < sim->n_jobs; i++)
                if (sim->jobs[i].state == SIM_PENDING && sim->jobs[i].arrival <= sim->now)
                        sim->jobs[i].state = SIM_IDLE;
}

/* For the accountant: whether a submitter still has jobs (the report's
 * counts, brought up to date before acct_update). */
static bool has_jobs(void *userdata, const char *submitter) {
        const Sim *sim = userdata;

        for (size_t i = 0; i < sim->report.n_submitters; i++) {
                const SimSubmitter *s = &sim->report.submitters[i];
                if (strcmp(s->name, submitter) == 0)
                        return s->idle + s->running + sim->pending[i] > 0;
        }
        return false;
}

/* Each submitter's jobs by state, and theirs not submitted yet. */
static void count_jobs(Sim *sim) {
        for (size_t i = 0; i < sim->report.n_submitters; i++) {
                SimSubmitter *s = &sim->report.submitters[i];
                s->idle = s->running = s->done = 0;
                sim->pending[i] = 0;
        }
        for (size_t i = 0; i < sim->n_jobs; i++) {
                const SimJob *j = &sim->jobs[i];
                SimSubmitter *s = &sim->report.submitters[j->submitter];
                switch (j->state) {
                case SIM_PENDING: sim->pending[j->submitter]++; break;
                case SIM_IDLE: s->idle++; break;
                case SIM_RUNNING: s->running++; break;
                case SIM_DONE: s->done++; break;
                }
        }
}

/* ---- one cycle ---- */

/* The cycle's input, and what its indexes stand for. */
typedef struct SimInput {
        NegoInput in;
        SimSlot **slots;   /* in.slots[i] is slots[i]->ad */
        ClassAd **ads;
        SimJob ***jobs;    /* per input submitter: its idle jobs, as in its ads */
        ClassAd **job_ads;
        SimJob **job_of;
} SimInput;

static void input_done(SimInput *si) {
        free(si->slots);
        free(si->ads);
        free(si->jobs);
        free(si->job_ads);
        free(si->job_of);
        free(si->in.submitters);
}

static int input_build(Sim *sim, SimInput *si) {
        const SimScenario *sc = sim->sc;
        size_t n_idle = 0, n_subs = 0, k = 0;

        for (size_t i = 0; i < sc->n_submitters; i++) {
                n_idle += sim->report.submitters[i].idle;
                n_subs += sim->report.submitters[i].idle > 0;
        }
        si->slots = calloc(sim->n_slots + 1, sizeof *si->slots);
        si->ads = calloc(sim->n_slots + 1, sizeof *si->ads);
        si->in.submitters = calloc(n_subs + 1, sizeof *si->in.submitters);
        si->jobs = calloc(n_subs + 1, sizeof *si->jobs);
        si->job_ads = calloc(n_idle + 1, sizeof *si->job_ads);
        si->job_of = calloc(n_idle + 1, sizeof *si->job_of);
        if (!si->slots || !si->ads || !si->in.submitters || !si->jobs || !si->job_ads || !si->job_of)
                return -ENOMEM;
        for (size_t i = 0; i < sim->n_slots; i++) {
                SimSlot *s = sim->slots[i];
                si->slots[i] = s;
                si->ads[i] = s->ad;
                if (s->job && classad_set_int(s->ad, "TotalJobRunTime", sim->now - s->job->started) < 0)
                        return -ENOMEM;
        }
        /* Submitters in the scenario's order, each with its idle jobs in
         * the order of the jobs lines (the cycle sorts them). */
        _cleanup_free_ size_t *next = calloc(sc->n_submitters + 1, sizeof *next);
        if (!next)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_submitters; i++) {
                size_t idle = sim->report.submitters[i].idle;
                if (!idle)
                        continue;
                NegoSubmitter *ns = &si->in.submitters[si->in.n_submitters];
                ns->name = sc->submitters[i].name;
                ns->jobs = &si->job_ads[k];
                ns->n_jobs = idle;
                si->jobs[si->in.n_submitters++] = &si->job_of[k];
                next[i] = k;
                k += idle;
        }
        for (size_t j = 0; j < sim->n_jobs; j++) {
                SimJob *job = &sim->jobs[j];
                if (job->state != SIM_IDLE)
                        continue;
                si->job_ads[next[job->submitter]] = job->ad;
                si->job_of[next[job->submitter]++] = job;
        }
        si->in.slots = si->ads;
        si->in.n_slots = sim->n_slots;
        si->in.accounts = sim->acct;
        si->in.settings = sim->settings;
        return 0;
}

static int apply_match(Sim *sim, const SimInput *si, const NegoMatch *m) {
        SimReport *rep = &sim->report;
        SimSlot *s;
        SimJob *job;
        int r;

        if (m->slot >= si->in.n_slots || m->submitter >= si->in.n_submitters ||
            m->job >= si->in.submitters[m->submitter].n_jobs)
                return -EPROTO;
        s = si->slots[m->slot];
        job = si->jobs[m->submitter][m->job];
        if (job->state != SIM_IDLE)
                return -EPROTO;
        if (s->partitionable) {
                if ((r = carve(sim, s, m, &s)) < 0)
                        return r;
        } else if (s->job) {
                SimJob *old = s->job;
                if ((r = scn_grow((void **) &rep->preemptions, &sim->cap_preemptions, rep->n_preemptions,
                              sizeof *rep->preemptions)) < 0)
                        return r;
                rep->preemptions[rep->n_preemptions++] = (SimPreemption){
                        .job = old->id,
                        .slot = s->name,
                        .submitter = sub_name(sim, old),
                        .by_job = job->id,
                        .by_submitter = sub_name(sim, job),
                        .reason = m->reason,
                };
                if ((r = job_stop(sim, old, abs_time(sim->now), false)) < 0)
                        return r;
        }
        if ((r = scn_grow((void **) &rep->matches, &sim->cap_matches, rep->n_matches, sizeof *rep->matches)) < 0)
                return r;
        rep->matches[rep->n_matches++] = (SimMatch){
                .job = job->id,
                .slot = s->name,
                .submitter = sub_name(sim, job),
                .reason = m->reason,
                .cost = m->cost,
        };
        return job_start(sim, job, s, m->cost);
}

static int report_rejections(Sim *sim, const SimInput *si) {
        SimReport *rep = &sim->report;

        free(rep->rejections);
        rep->rejections = calloc(sim->res.n_rejections + 1, sizeof *rep->rejections);
        if (!rep->rejections)
                return -ENOMEM;
        for (size_t i = 0; i < sim->res.n_rejections; i++) {
                const NegoRejection *rj = &sim->res.rejections[i];
                if (rj->submitter >= si->in.n_submitters || rj->job >= si->in.submitters[rj->submitter].n_jobs)
                        return -EPROTO;
                const SimJob *job = si->jobs[rj->submitter][rj->job];
                rep->rejections[i] = (SimRejection){
                        .job = job->id,
                        .submitter = sub_name(sim, job),
                        .reason = rj->reason ? rj->reason : "",
                };
        }
        rep->n_rejections = sim->res.n_rejections;
        return 0;
}

/* The pool's total slot weight (the number of slots without slot weights). */
static double pool_weight(const Sim *sim) {
        double w = 0;

        for (size_t i = 0; i < sim->n_slots; i++)
                w += nego_settings_slot_weight(sim->settings, sim->slots[i]->ad);
        return w;
}

/* Each running job's claim charged its slot's own weight from now on (a
 * new one was charged its match's cost, W(S) - W(S') of the partitionable
 * slot it came from), as the pie counts it: HTCondor's accountant
 * rebuilds usage from the claimed slots at each cycle the same way. Once
 * after each cycle's matches: a running job's slot keeps its ad until the
 * job leaves it, so the weight holds until then. */
static int reweigh_claims(Sim *sim) {
        double t = (double) abs_time(sim->now);
        int r = 0;

        for (size_t i = 0; r >= 0 && i < sim->n_slots; i++) {
                const SimSlot *s = sim->slots[i];
                if (s->job)
                        r = acct_claim_set_weight(sim->acct, s->name, nego_settings_slot_weight(sim->settings, s->ad), t);
        }
        return r;
}

static int report_accounts(Sim *sim) {
        SimReport *rep = &sim->report;
        const AcctGroups *g = acct_groups(sim->acct);
        AcctQuotaResult q = { 0 };
        AcctEntry e;
        int r;

        rep->slots = sim->n_slots;
        rep->slots_busy = 0;
        for (size_t i = 0; i < sim->n_slots; i++)
                rep->slots_busy += sim->slots[i]->job != NULL;
        rep->pool_weight = pool_weight(sim);
        for (size_t i = 0; i < rep->n_submitters; i++) {
                SimSubmitter *s = &rep->submitters[i];
                (void) acct_get(sim->acct, s->name, &e);
                s->rup = e.rup;
                s->eup = e.eup;
                s->factor = e.factor;
                s->in_use = e.in_use;
                s->weight_in_use = e.weighted_in_use;
        }
        if (!rep->n_groups)
                return 0;
        if ((r = acct_quotas_compute(g, fmin(rep->pool_weight, ACCT_QUOTA_MAX_AMOUNT), NULL, &q)) < 0)
                return r;
        for (size_t i = 0; i < rep->n_groups && i < q.n; i++) {
                SimGroup *gr = &rep->groups[i];
                (void) acct_get(sim->acct, gr->name, &e);
                /* the root's quota is the pool: what its own submitters may use */
                gr->quota = i == 0 ? q.q[i].own : q.q[i].quota;
                gr->allocated = i < sim->res.n_groups ? sim->res.group_allocated[i] : 0;
                gr->in_use = e.weighted_in_use;
        }
        acct_quota_result_clear(&q);
        return 0;
}

int sim_step(Sim *sim, const SimReport **ret) {
        SimReport *rep = &sim->report;
        SimInput si = { 0 };
        int r;

        if (sim->cycle > 0) {
                int64_t next = sim->now + sim->interval;
                if ((r = jobs_finish(sim, next)) < 0)
                        return r;
                sim->now = next;
        }
        sim->cycle++;
        rep->cycle = sim->cycle;
        rep->time = sim->now;
        rep->finished = sim->finished;
        sim->finished = 0;
        rep->n_matches = rep->n_preemptions = rep->n_rejections = 0;
        nego_result_clear(&sim->res);
        if ((r = slots_arrive(sim)) < 0)
                return r;
        jobs_arrive(sim);
        count_jobs(sim);
        if ((r = acct_update(sim->acct, (double) abs_time(sim->now), has_jobs, sim)) < 0)
                return r;

        classad_set_now(abs_time(sim->now));
        r = input_build(sim, &si);
        if (r >= 0)
                r = nego_cycle(&si.in, &sim->res);
        for (size_t i = 0; r >= 0 && i < sim->res.n_matches; i++)
                r = apply_match(sim, &si, &sim->res.matches[i]);
        /* the matches' dynamic slots are known at once here: from now on
         * their claims weigh what they weigh in the pie */
        if (r >= 0)
                r = reweigh_claims(sim);
        if (r >= 0)
                r = report_rejections(sim, &si);
        if (r >= 0) {
                rep->stats = sim->res.stats;
                count_jobs(sim);
                r = report_accounts(sim);
        }
        classad_set_now(0);
        input_done(&si);
        if (r < 0)
                return r;
        *ret = rep;
        return 0;
}

/* ---- the simulation ---- */

/* What the accountant refused of a submitter line: err says where. */
static int refused(ConfigError *err, const SimScenario *sc, int line, int r, const char *what) {
        if (r == -ENOMEM)
                return r;
        return scn_error(err, r, sc->source, line, "%s: the accountant refuses it: %s", what, strerror(-r));
}

static int usage_cmp(const void *x, const void *y) {
        const SimScenarioSubmitter *a = *(const SimScenarioSubmitter *const *) x;
        const SimScenarioSubmitter *b = *(const SimScenarioSubmitter *const *) y;

        if (a->usage_time != b->usage_time)
                return a->usage_time > b->usage_time ? -1 : 1;
        return a->line - b->line;
}

/* Every submitter known, their usage before time 0 charged (the oldest
 * first: the accountant's clock only goes forward), factors and RUPs set. */
static int accounts_setup(Sim *sim, int64_t t0, ConfigError *err) {
        const SimScenario *sc = sim->sc;
        _cleanup_free_ const SimScenarioSubmitter **by_usage = calloc(sc->n_submitters + 1, sizeof *by_usage);
        char id[64];
        size_t n = 0;
        int r;

        if (!by_usage)
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_submitters; i++) {
                const SimScenarioSubmitter *s = &sc->submitters[i];
                if ((r = acct_ensure(sim->acct, s->name, (double) t0)) < 0)
                        return refused(err, sc, s->line, r, s->name);
                if (s->usage_time)
                        by_usage[n++] = s;
        }
        qsort(by_usage, n, sizeof *by_usage, usage_cmp);
        for (size_t i = 0; i < n; i++) {
                snprintf(id, sizeof id, "usage-before-time-0:%zu", i);
                if ((r = acct_claim_begin(sim->acct, id, by_usage[i]->name, by_usage[i]->usage_weight,
                                          (double) (EPOCH - by_usage[i]->usage_time))) < 0)
                        return refused(err, sc, by_usage[i]->line, r, "usage");
        }
        for (size_t i = 0; i < n; i++) {
                snprintf(id, sizeof id, "usage-before-time-0:%zu", i);
                if ((r = acct_claim_end(sim->acct, id, (double) EPOCH)) < 0)
                        return r;
        }
        for (size_t i = 0; i < sc->n_submitters; i++) {
                const SimScenarioSubmitter *s = &sc->submitters[i];
                if (s->has_factor && (r = acct_set_factor(sim->acct, s->name, s->factor, (double) EPOCH)) < 0)
                        return refused(err, sc, s->line, r, "factor");
                if (s->has_rup && (r = acct_set_priority(sim->acct, s->name, s->rup, (double) EPOCH)) < 0)
                        return refused(err, sc, s->line, r, "rup");
        }
        return 0;
}

static int jobs_setup(Sim *sim) {
        const SimScenario *sc = sim->sc;
        size_t k = 0;
        int r;

        if (!(sim->jobs = calloc(sc->total_jobs + 1, sizeof *sim->jobs)))
                return -ENOMEM;
        for (size_t i = 0; i < sc->n_jobs; i++) {
                const SimScenarioJobs *js = &sc->jobs[i];
                for (size_t p = 0; p < js->count; p++) {
                        SimJob *j = &sim->jobs[k];
                        if ((r = classad_copy(js->ad, &j->ad)) < 0 ||
                            (r = classad_set_int(j->ad, "ProcId", (int64_t) p)) < 0)
                                return r;
                        sim->n_jobs = ++k;
                        snprintf(j->id, sizeof j->id, "%" PRId64 ".%zu", js->cluster, p);
                        j->submitter = js->submitter;
                        j->runtime = js->runtime;
                        j->arrival = js->at;
                        j->state = SIM_PENDING;
                }
        }
        return 0;
}

void sim_free(Sim *sim) {
        if (!sim)
                return;
        for (size_t i = 0; i < sim->n_slots; i++)
                slot_free(sim->slots[i]);
        for (size_t i = 0; i < sim->n_jobs; i++)
                classad_free(sim->jobs[i].ad);
        free(sim->slots);
        free(sim->jobs);
        free(sim->slot_added);
        free(sim->pending);
        free(sim->report.matches);
        free(sim->report.preemptions);
        free(sim->report.rejections);
        free(sim->report.submitters);
        free(sim->report.groups);
        nego_result_clear(&sim->res);
        nego_settings_free(sim->settings);
        acct_close(sim->acct);
        free(sim);
}

int sim_new(const SimScenario *sc, int64_t interval, Sim **ret, ConfigError *err) {
        AcctSettings settings = { 0 };
        AcctGroups *groups = NULL;
        Sim *sim = calloc(1, sizeof *sim);
        int64_t t0 = EPOCH;
        char why[256] = "";
        int r;

        if (!sim)
                return -ENOMEM;
        sim->sc = sc;
        sim->interval = interval > 0 ? interval : sc->interval;
        if ((r = nego_settings_from_config(sc->cfg, &sim->settings, err)) < 0 ||
            (r = sim_scenario_accounts(sc, &settings, &groups, err)) < 0)
                goto fail;
        for (size_t i = 0; i < sc->n_submitters; i++)
                if (EPOCH - sc->submitters[i].usage_time < t0)
                        t0 = EPOCH - sc->submitters[i].usage_time;
        if ((r = acct_open(NULL, 0, NULL, &settings, groups, (double) t0, &sim->acct, why, sizeof why)) < 0) {
                acct_settings_clear(&settings);
                scn_error(err, r, sc->source, 0, "%s", why);
                goto fail;
        }
        if ((r = accounts_setup(sim, t0, err)) < 0 || (r = jobs_setup(sim)) < 0)
                goto fail;
        SimReport *rep = &sim->report;
        const AcctGroups *g = acct_groups(sim->acct);
        rep->n_submitters = sc->n_submitters;
        rep->n_groups = acct_groups_count(g) > 1 ? acct_groups_count(g) : 0;
        rep->submitters = calloc(sc->n_submitters + 1, sizeof *rep->submitters);
        rep->groups = calloc(rep->n_groups + 1, sizeof *rep->groups);
        sim->pending = calloc(sc->n_submitters + 1, sizeof *sim->pending);
        sim->slot_added = calloc(sc->n_slots + 1, sizeof *sim->slot_added);
        r = -ENOMEM;
        if (!rep->submitters || !rep->groups || !sim->pending || !sim->slot_added)
                goto fail;
        for (size_t i = 0; i < sc->n_submitters; i++)
                rep->submitters[i].name = sc->submitters[i].name;
        for (size_t i = 0; i < rep->n_groups; i++)
                rep->groups[i].name = acct_groups_get(g, i)->name;
        *ret = sim;
        return 0;
fail:
        sim_free(sim);
        return r;
}

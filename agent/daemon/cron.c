/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cron.c — the startd cron in glean-agent: the table of STARTD_CRON_*
 * knobs read at start (agent/cron.h), each job started on an sd-event
 * timer as its mode says (Periodic, WaitForExit, OneShot), as the account
 * STARTD_CRON_USER names (default nobody; the agent's own when it does not
 * run as root), in the agent's cgroup; the ads its output publishes merged
 * into the slot ads at every refresh (agent_refresh_ads), the policy
 * evaluated again at once, and an advertisement sent when the output asks
 * (update:true) or STARTD_CRON_AUTOPUBLISH says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#include "common/timer.h"
#include "cron.h"
#include "daemon.h"

#define CRON_KILL_GRACE_MS 5000u

typedef struct CronJobState {
        AgentCron *cron;
        size_t idx;
        AgentCronRun *run;
        int64_t last_due;        /* monotonic seconds; 0: never */
        int64_t exited;
        bool restart;            /* killed at its next period (KILL): start again at its exit */
        bool too_many_ads;       /* past AGENT_CRON_MAX_ADS (logged once) */
        int last_code;           /* the last run's exit code, and what its output did wrong: */
        char last_problem[240];  /* repeated every run, logged at the first and at a change only */
        sd_event_source *timer;
} CronJobState;

struct AgentCron {
        Agent *agent;
        AgentCronTable *t;
        AgentCronStore *st;
        AgentCronCred cred;
        char *cred_buf;
        CronJobState *jobs;
        double running_load;
        char *extra_env[2];
        long refused;            /* attributes the last merges refused, all slots (logged at a change) */
};

static int64_t mono_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t) ts.tv_sec + 1; /* never 0: 0 is "never" */
}

int agent_cron_configure(Agent *a) {
        ConfigError err = { 0 };
        AgentCronTable *t = NULL;
        int r = agent_cron_read(a->cfg, &t, &err);
        if (r < 0)
                return agent_log_config_error(&err, r, "startd cron");
        AgentCron *c = calloc(1, sizeof *c);
        if (!c || agent_cron_store_new(&c->st) < 0 || (t->n && !(c->jobs = calloc(t->n, sizeof *c->jobs)))) {
                if (c)
                        agent_cron_store_free(c->st);
                free(c);
                agent_cron_table_free(t);
                return -ENOMEM;
        }
        c->agent = a;
        c->t = t;
        a->cron = c;
        return 0;
}

static void start_job(CronJobState *js);

static int on_job_timer(sd_event_source *src, uint64_t usec, void *userdata);

static void arm(CronJobState *js, int64_t at) {
        AgentCron *c = js->cron;
        if (at == INT64_MAX) {
                if (js->timer)
                        sd_event_source_set_enabled(js->timer, SD_EVENT_OFF);
                return;
        }
        int64_t now = mono_now();
        uint64_t in = at > now ? (uint64_t) (at - now) * 1000000ULL : 0;
        int r = glean_timer_arm_in(c->agent->event, &js->timer, CLOCK_MONOTONIC, in, 100000, on_job_timer, js);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "startd cron %s: its timer: %m; it does not run again",
                                c->t->jobs[js->idx].name);
}

static void merge_and_evaluate(Agent *a) {
        agent_evaluate(a); /* refreshes the slot ads (the merge among them), then the policy */
}

static void on_ad(void *userdata, AgentCronAd *ad) {
        CronJobState *js = userdata;
        AgentCron *c = js->cron;
        int update = ad->update;
        bool changed = false;
        int r = agent_cron_store_put(c->st, js->idx, ad, &changed);
        if (r == -E2BIG) {
                if (!js->too_many_ads)
                        glean_log(LOG_WARNING, NULL, NULL, 0, "startd cron %s: more than %u named ads; the rest ignored",
                                  c->t->jobs[js->idx].name, AGENT_CRON_MAX_ADS);
                js->too_many_ads = true;
                return;
        }
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "startd cron %s: out of memory for its output",
                          c->t->jobs[js->idx].name);
                return;
        }
        merge_and_evaluate(c->agent);
        if (agent_cron_wants_publish(c->t->autopublish, update, changed))
                for (Slot *s = c->agent->slots; s; s = s->next)
                        agent_publish(c->agent, s);
}

/* stderr, bounded already, as one log line. */
static void log_stderr(const AgentCronJob *j, const AgentCronExit *ex, int prio) {
        if (!ex->err_len)
                return;
        char buf[AGENT_CRON_MAX_STDERR + 1];
        size_t n = 0;
        for (size_t i = 0; i < ex->err_len && n < sizeof buf - 1; i++) {
                unsigned char ch = (unsigned char) ex->err[i];
                buf[n++] = ch == '\n' ? '|' : (ch < 0x20 || ch == 0x7f) ? '?' : (char) ch;
        }
        while (n && buf[n - 1] == '|')
                n--;
        buf[n] = 0;
        glean_log(prio, NULL, NULL, 0, "startd cron %s: stderr: %s%s", j->name, buf,
                  ex->err_len >= AGENT_CRON_MAX_STDERR ? " (cut)" : "");
}

static void on_exited(void *userdata, const AgentCronExit *ex) {
        CronJobState *js = userdata;
        AgentCron *c = js->cron;
        const AgentCronJob *j = &c->t->jobs[js->idx];
        const AgentCronParseStats *st = ex->stats;
        c->running_load -= j->job_load;
        if (c->running_load < 1e-9)
                c->running_load = 0;
        js->exited = mono_now();
        agent_cron_store_end(c->st, js->idx);

        if (st->truncated)
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "startd cron %s: its output went past %u bytes; killed, the rest ignored", j->name,
                          AGENT_CRON_MAX_OUTPUT);
        else if (ex->killed)
                glean_log(LOG_WARNING, NULL, NULL, 0, "startd cron %s: killed (still running at its next period)",
                          j->name);
        char problem[sizeof js->last_problem] = "";
        if (st->malformed || st->refused || st->over_attrs)
                snprintf(problem, sizeof problem,
                         "%zu lines skipped, %zu protected attributes refused, %zu attributes past %u; first: %s",
                         st->malformed, st->refused, st->over_attrs, AGENT_CRON_MAX_ATTRS, st->first_problem);
        if (problem[0])
                glean_log(strcmp(problem, js->last_problem) ? LOG_WARNING : LOG_DEBUG, NULL, NULL, 0,
                          "startd cron %s: %s", j->name, problem);
        snprintf(js->last_problem, sizeof js->last_problem, "%s", problem);
        /* A failing job fails every period: logged when it starts to (or
         * on every run with STARTD_CRON_LOG_NON_ZERO_EXIT, HTCondor's). */
        bool failed = ex->code != 0;
        int prio = c->t->log_non_zero_exit ? LOG_WARNING : ex->code != js->last_code ? LOG_NOTICE : LOG_DEBUG;
        js->last_code = ex->code;
        if (failed && ex->signal && !ex->killed)
                glean_log(prio, NULL, NULL, 0, "startd cron %s: killed by signal %d", j->name, ex->signal);
        else if (failed && ex->code > 0)
                glean_log(prio, NULL, NULL, 0, "startd cron %s: exit code %d", j->name, ex->code);
        log_stderr(j, ex, failed ? prio : LOG_DEBUG);

        agent_cron_run_free(js->run);
        js->run = NULL;
        merge_and_evaluate(c->agent);
        if (js->restart) {
                js->restart = false;
                start_job(js);
        }
        if (j->mode == AGENT_CRON_WAIT_FOR_EXIT)
                arm(js, agent_cron_next_start(j, js->last_due, js->exited, js->run != NULL, mono_now()));
}

static void start_job(CronJobState *js) {
        AgentCron *c = js->cron;
        const AgentCronJob *j = &c->t->jobs[js->idx];
        if (c->agent->shutting_down)
                return;
        AgentCronRunFns fns = { .ad = on_ad, .exited = on_exited };
        agent_cron_store_begin(c->st, js->idx);
        int r = agent_cron_run_start(c->agent->event, j, &c->cred, c->extra_env, agent_now(), &fns, js, &js->run);
        if (r < 0) {
                glean_log_errno(LOG_ERR, r, "startd cron %s: cannot start %s: %m", j->name, j->executable);
                js->exited = mono_now();
                if (j->mode == AGENT_CRON_WAIT_FOR_EXIT) /* no exit to wait for: try again a period later */
                        arm(js, agent_cron_next_start(j, js->last_due ? js->last_due : js->exited, js->exited,
                                                      false, js->exited));
                return;
        }
        c->running_load += j->job_load;
        glean_log(LOG_DEBUG, NULL, NULL, 0, "startd cron %s: started %s (pid %d) as %s", j->name, j->executable,
                  (int) agent_cron_run_pid(js->run), c->cred.user ? c->cred.user : "?");
}

static int on_job_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src, (void) usec;
        CronJobState *js = userdata;
        AgentCron *c = js->cron;
        const AgentCronJob *j = &c->t->jobs[js->idx];
        int64_t now = mono_now();
        if (!js->run && !agent_cron_may_start(c->running_load, j->job_load, c->t->max_job_load)) {
                glean_log(LOG_DEBUG, NULL, NULL, 0, "startd cron %s: STARTD_CRON_MAX_JOB_LOAD reached; in 1 s",
                          j->name);
                arm(js, now + 1);
                return 0;
        }
        if (j->mode == AGENT_CRON_PERIODIC) {
                js->last_due = js->last_due ? js->last_due + j->period : now;
                if (js->last_due + j->period <= now) /* the agent was held up: no burst of runs */
                        js->last_due = now;
        } else
                js->last_due = now;
        if (!js->run)
                start_job(js);
        else if (j->kill) {
                js->restart = true;
                agent_cron_run_kill(js->run, CRON_KILL_GRACE_MS);
        } else
                glean_log(LOG_INFO, NULL, NULL, 0, "startd cron %s: still running; this period skipped", j->name);
        if (j->mode == AGENT_CRON_PERIODIC)
                arm(js, agent_cron_next_start(j, js->last_due, js->exited, js->run != NULL, now));
        return 0;
}

int agent_cron_start(Agent *a) {
        AgentCron *c = a->cron;
        if (!c || !c->t->n)
                return 0;
        char why[256] = "";
        int r = agent_cron_cred(c->t->user, &c->cred, &c->cred_buf, why, sizeof why);
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "startd cron: %s", why);
                return r;
        }
        if (!c->cred.change && c->t->user_at[0] && strcmp(c->t->user, c->cred.user ? c->cred.user : "") != 0)
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "%s: STARTD_CRON_USER %s is not used: the agent does not run as root, its cron jobs "
                          "run as its own user %s",
                          c->t->user_at, c->t->user, c->cred.user && *c->cred.user ? c->cred.user : "(unknown)");
        if (c->t->config_val) {
                size_t n = strlen(c->t->config_val) + sizeof "STARTD_CRON_CONFIG_VAL=";
                if (!(c->extra_env[0] = malloc(n)))
                        return -ENOMEM;
                snprintf(c->extra_env[0], n, "STARTD_CRON_CONFIG_VAL=%s", c->t->config_val);
        }
        int64_t now = mono_now();
        for (size_t i = 0; i < c->t->n; i++) {
                CronJobState *js = &c->jobs[i];
                js->cron = c;
                js->idx = i;
                arm(js, agent_cron_next_start(&c->t->jobs[i], 0, 0, false, now));
                glean_log(LOG_INFO, NULL, NULL, 0, "startd cron %s: %s %s (period %llds), as %s",
                          c->t->jobs[i].name, agent_cron_mode_name(c->t->jobs[i].mode), c->t->jobs[i].executable,
                          (long long) c->t->jobs[i].period, c->cred.user ? c->cred.user : "?");
        }
        return 0;
}

void agent_cron_merge_slots(Agent *a) {
        AgentCron *c = a->cron;
        if (!c)
                return;
        long refused = 0;
        const char *where = NULL;
        for (Slot *s = a->slots; s; s = s->next) {
                if (!agent_cron_store_count(c->st) && !agent_cron_merged_count(s->cron))
                        continue;
                char **over = NULL;
                ConfigError err;
                if (config_startd_attrs(a->cfg, s->def.id, &over, &err) < 0)
                        over = NULL;
                int r = agent_cron_merge(c->st, c->t, s->ad, (const char *const *) over, &s->cron);
                config_strv_free(over);
                if (r < 0)
                        glean_log_errno(LOG_ERR, r, "startd cron: merging into %s: %m", s->name);
                else if (r > 0) {
                        refused += r;
                        if (!where)
                                where = s->name;
                }
        }
        if (refused && refused != c->refused)
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "startd cron: %ld attributes refused in the slot ads (%s, ...): the agent sets them "
                          "(STARTD_ATTRS names those cron output may replace)",
                          refused, where);
        c->refused = refused;
}

void agent_cron_stop(Agent *a) {
        AgentCron *c = a->cron;
        if (!c)
                return;
        for (size_t i = 0; i < c->t->n; i++) {
                agent_cron_run_free(c->jobs[i].run); /* killed and reaped */
                sd_event_source_disable_unref(c->jobs[i].timer);
        }
        free(c->jobs);
        agent_cron_store_free(c->st);
        agent_cron_table_free(c->t);
        free(c->cred_buf);
        free(c->extra_env[0]);
        free(c);
        a->cron = NULL;
}

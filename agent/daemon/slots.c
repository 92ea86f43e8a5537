/* SPDX-License-Identifier: Apache-2.0 */
/*
 * slots.c — glean-agent's slots: their ads, their state machines, the
 * actions the machines ask for (carried out through the executor), the
 * periodic evaluation and the log record of every transition.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <syslog.h>
#include <time.h>
#include <ftw.h>
#include <sys/stat.h>

#include "common/timer.h"
#include "daemon.h"
#include "systemd/glean-messages.h" /* journalctl MESSAGE_ID=...: each transition, each broken slot */

int64_t agent_now(void) {
        return (int64_t) time(NULL);
}

static void slot_free(Slot *s) {
        if (!s)
                return;
        if (s->job) {
                agent_job_kill(s->job);
                agent_job_free(s->job);
        }
        if (s->backfill) {
                agent_job_kill(s->backfill);
                agent_job_free(s->backfill);
        }
        agent_xrun_free(s);
        classad_free(s->exit_extra);
        agent_jobspec_free(s->spec);
        agent_sm_free(s->sm);
        agent_cron_merged_free(s->cron);
        classad_free(s->ad);
        agent_sensors_slot_remove(s);
        agent_slot_cgroup_close(s);
        free(s);
}

Slot *agent_slot_find(Agent *a, const char *name) {
        size_t n = strcspn(name, "@");
        for (Slot *s = a->slots; s; s = s->next)
                if (strlen(s->name) == n && strncasecmp(s->name, name, n) == 0)
                        return s;
        return NULL;
}

const char *agent_slot_wire_name(const Slot *s, char *buf, size_t len) {
        const AgentMachine *m = &s->agent->machine;
        if (!m->name[0] || strcasecmp(m->name, m->hostname) == 0)
                return s->name;
        snprintf(buf, len, "%s@%s", s->name, m->name);
        return buf;
}

Slot *agent_slot_by_claim(Agent *a, const char *claim_id) {
        for (Slot *s = a->slots; s; s = s->next)
                if (s->sm && agent_sm_has_claim(s->sm, claim_id))
                        return s;
        return NULL;
}

void agent_slot_sync_claims(Slot *s) {
        if (!s->pre_claim_id[0])
                return;
        const char *cur = agent_sm_claim_id(s->sm);
        if (cur && strcmp(cur, s->pre_claim_id) == 0) {
                /* 23, 24: the preempting claim has the slot now. */
                s->claimant = s->pre_claimant;
                s->claimant_uid = s->pre_claimant_uid;
                snprintf(s->claim_id, sizeof s->claim_id, "%s", s->pre_claim_id);
        } else if (agent_sm_has_claim(s->sm, s->pre_claim_id))
                return;
        s->pre_claimant = NULL;
        s->pre_claim_id[0] = 0;
}

/* ---- the actions of the state machine ---- */

static void job_exited(AgentJob *job, const AgentJobExit *ex, void *userdata);
static void job_would_not_die(Slot *s);
static void start_job(Slot *s);

static void send_job_exit(Slot *s, const AgentJobExit *ex, const char *reason) {
        ClassAd *msg = NULL;
        if (glean_msg_new(GLEAN_CMD_JOB_EXIT, &msg) < 0)
                return;
        char wire[AGENT_WIRE_NAME_MAX];
        classad_set_string(msg, "ClaimId", s->claim_id);
        classad_set_string(msg, "Slot", agent_slot_wire_name(s, wire, sizeof wire));
        /* Which run of which job ended: a claim runs several jobs one
         * after the other, and the central manager may hear of an exit
         * twice (it is sent again until acknowledged). */
        const ClassAd *job = agent_sm_job(s->sm);
        int64_t v;
        if (job && classad_eval_int(job, "ClusterId", CA_MODE_OLD, &v) >= 0 && v >= 0)
                classad_set_int(msg, "ClusterId", v);
        if (job && classad_eval_int(job, "ProcId", CA_MODE_OLD, &v) >= 0 && v >= 0)
                classad_set_int(msg, "ProcId", v);
        if (job && classad_eval_int(job, "NumJobStarts", CA_MODE_OLD, &v) >= 0 && v >= 0)
                classad_set_int(msg, "NumJobStarts", v);
        classad_set_bool(msg, "ExitBySignal", ex->by_signal);
        if (ex->by_signal)
                classad_set_int(msg, "ExitSignal", ex->signal);
        else
                classad_set_int(msg, "ExitCode", ex->exit_code);
        classad_set_bool(msg, "CoreDumped", ex->core_dumped);
        classad_set_real(msg, "RemoteUserCpu", ex->user_cpu);
        classad_set_real(msg, "RemoteSysCpu", ex->sys_cpu);
        classad_set_real(msg, "RemoteWallClockTime", ex->wall_time);
        classad_set_int(msg, "ResidentSetSize", ex->max_rss_kb);
        if (ex->oom_killed) {
                /* Put on hold: running it again in the same slot would end the same way. */
                char hold[400];
                const char *detail = ex->reason;
                if (strncmp(detail, "out of memory: ", 15) == 0)
                        detail += 15; /* said already */
                snprintf(hold, sizeof hold, "out of memory: the job used more than its slot's %lld MB%s%s%s",
                         (long long) s->res.memory, *detail ? " (" : "", detail, *detail ? ")" : "");
                classad_set_bool(msg, "Hold", true);
                classad_set_string(msg, "HoldReason", hold);
                classad_set_string(msg, "Reason", hold);
        } else if (reason && ex->cgroup_stuck && ex->reason[0]) {
                char both[600];
                snprintf(both, sizeof both, "%s; %s", reason, ex->reason);
                classad_set_string(msg, "Reason", both);
        } else if (reason)
                classad_set_string(msg, "Reason", reason);
        else if (ex->reason[0])
                classad_set_string(msg, "Reason", ex->reason);
        if (s->exit_extra)
                classad_update(msg, s->exit_extra); /* a run that transferred: its bytes, a transfer's hold */
        agent_notify_claimant(s, GLEAN_CMD_JOB_EXIT, msg);
}

void agent_slot_break(Slot *s, const char *reason) {
        if (agent_sm_broken(s->sm))
                return;
        GleanLogField f[] = { { "GLEAN_SLOT", s->name }, { "GLEAN_REASON", reason } };
        glean_log(LOG_ERR, MESSAGE_ID_SLOT_BROKEN, f, 2,
                  "%s is broken: %s; it runs no more jobs until the agent is restarted", s->name, reason);
        if (agent_sm_set_broken(s->sm, agent_now(), reason) < 0)
                return;
        agent_publish(s->agent, s);
        agent_schedule(s->agent);
}

/* Why a job whose processes would not die breaks its slot, and where they
 * are (leaf: "job", "backfill"). */
static void stuck_reason(const Slot *s, const char *what, const char *leaf, char *buf, size_t len) {
        char where[200] = "";
        if (s->agent->cgroot) {
                char *cg = agent_slot_cgroup_leaf(s, leaf);
                snprintf(where, sizeof where, " (cgroup %s)", cg ? cg : leaf);
                free(cg);
        }
        snprintf(buf, len, "%s%s would not die within KILLING_TIMEOUT (%lld s) of being killed", what, where,
                 (long long) s->killing_timeout);
}

static void start_job(Slot *s) {
        /* A run whose files travel: its input first (xrun.c), then agent_slot_start_job. */
        if (s->spec && !s->adopting && agent_xrun_start(s))
                return;
        agent_slot_start_job(s);
}

void agent_slot_start_job(Slot *s) {
        Agent *a = s->agent;
        s->start_error[0] = 0;
        s->exit_reason = NULL;
        if (!s->spec) {
                snprintf(s->start_error, sizeof s->start_error, "no job to start");
                return;
        }
        s->spec->kill_timeout = s->killing_timeout > INT32_MAX ? INT32_MAX : (int) s->killing_timeout;
        if (!s->spec->exit_file)
                s->spec->exit_file = agent_state_exit_file(s);
        /* The claim's lease, for the job's reaper: once the agent died, it
         * kills the job when the lease ran out without a keep-alive. */
        int64_t last_alive = 0, lease = 0;
        s->spec->lease = agent_sm_claim_alive(s->sm, &last_alive, &lease) && lease > 0 ? lease : 0;
        if (!s->spec->lease_file)
                s->spec->lease_file = agent_state_file(s);
        int r = s->adopting ? agent_exec_adopt_id(a->exec, s->spec, &s->adopt_id, s->adopt_started, job_exited, s, &s->job)
                            : agent_exec_start(a->exec, s->spec, job_exited, s, &s->job);
        if (r < 0) {
                const char *why = agent_executor_last_error(a->exec);
                snprintf(s->start_error, sizeof s->start_error, "%s", why && *why ? why : strerror(-r));
                s->start_failure = (int) agent_executor_last_failure(a->exec, &s->start_errno);
                if (!s->start_errno)
                        s->start_errno = -r;
                s->job = NULL;
                return;
        }
        s->last_cpu = 0;
        s->last_sample = agent_now();
        if (!s->adopting)
                agent_state_save(s);
        GleanLogField f[] = { { "GLEAN_SLOT", s->name }, { "GLEAN_USER", s->spec->user } };
        glean_log(LOG_INFO, NULL, f, 2, "%s: job started as %s, pid %d", s->name, s->spec->user,
                  (int) agent_job_pid(s->job));
}

ClassAd *agent_slot_start_hold(const Slot *s) {
        int code;
        switch ((AgentStartFailure) s->start_failure) {
        case AGENT_START_INPUT: code = 8; break;  /* UnableToOpenInput */
        case AGENT_START_OUTPUT:
        case AGENT_START_ERROR: code = 7; break;  /* UnableToOpenOutput */
        case AGENT_START_IWD: code = 14; break;   /* IwdError */
        case AGENT_START_EXEC: code = 6; break;   /* FailedToCreateProcess */
        case AGENT_START_ACCOUNT: code = 23; break; /* FailedToAccessUserAccount */
        default: return NULL;
        }
        switch (s->start_errno) {
        case EAGAIN: case ENOMEM: case ENFILE: case EMFILE: case EINTR: case ETXTBSY: case EBUSY:
                return NULL; /* the machine, now: another try may do */
        default:
                break;
        }
        ClassAd *ad = NULL;
        if (classad_new(&ad) < 0)
                return NULL;
        char reason[1024];
        snprintf(reason, sizeof reason, "Error from %s@%s: %s (errno %d)", s->name, s->agent->machine.name,
                 s->start_error, s->start_errno);
        classad_set_bool(ad, "Hold", true);
        classad_set_int(ad, "HoldReasonCode", code);
        classad_set_int(ad, "HoldReasonSubCode", s->start_errno);
        classad_set_string(ad, "HoldReason", reason);
        return ad;
}

static void start_backfill(Slot *s) {
        Agent *a = s->agent;
        if (s->backfill)
                return;
        char *cmd = NULL;
        ConfigError err;
        if (config_get(a->cfg, "BACKFILL_COMMAND", &cmd, &err) < 0 || !*cmd) {
                free(cmd);
                return;
        }
        /* The command line as a job of the slot user. */
        ClassAd *job = NULL;
        char *sp = strchr(cmd, ' ');
        if (sp)
                *sp++ = 0;
        AgentJobSpec *spec = NULL;
        char why[256] = "";
        if (classad_new(&job) >= 0) {
                classad_set_string(job, "Cmd", cmd);
                if (sp)
                        classad_set_string(job, "Args", sp);
                classad_set_string(job, "Owner", a->runas.slot_user ? a->runas.slot_user : "nobody");
                char slot[48];
                snprintf(slot, sizeof slot, "%s_backfill", s->name);
                /* Under the cgroup executor the command runs inside the slot's
                 * cgroup (its limits), in <slot>/backfill: left to itself the
                 * executor would take "<_CONDOR_SLOT>/job", a cgroup beside
                 * the slots (slots/slot1_backfill/job) that nothing removes. */
                int r = agent_jobspec_from_ad(job, &a->runas, a->execute, slot, &spec, why, sizeof why);
                if (r >= 0)
                        spec->kill_timeout = s->killing_timeout > INT32_MAX ? INT32_MAX : (int) s->killing_timeout;
                if (r >= 0 && a->cgroot && !(spec->cgroup = agent_slot_cgroup_leaf(s, "backfill"))) {
                        snprintf(why, sizeof why, "out of memory");
                        r = -ENOMEM;
                }
                if (r >= 0 && agent_exec_start(a->exec, spec, job_exited, s, &s->backfill) >= 0) {
                        AgentEvent ev = { .type = AGENT_EV_BACKFILL_STARTED };
                        agent_jobspec_free(spec);
                        spec = NULL;
                        classad_free(job);
                        free(cmd);
                        agent_sm_handle(s->sm, agent_now(), &ev, NULL, 0);
                        return;
                }
        }
        agent_jobspec_free(spec);
        classad_free(job);
        GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
        glean_log(LOG_WARNING, NULL, f, 1, "%s: cannot start the backfill command %s: %s", s->name, cmd,
                  *why ? why : agent_executor_last_error(a->exec));
        free(cmd);
}

static void on_action(void *userdata, const AgentAction *act) {
        Slot *s = userdata;
        switch (act->type) {
        case AGENT_DO_START_JOB:
                start_job(s);
                break;
        case AGENT_DO_SUSPEND_JOB:
                if (s->job)
                        agent_job_suspend(s->job);
                break;
        case AGENT_DO_CONTINUE_JOB:
                if (s->job)
                        agent_job_resume(s->job);
                break;
        case AGENT_DO_SOFT_KILL:
                if (s->job) {
                        if (!s->exit_reason)
                                s->exit_reason = act->reason;
                        agent_job_signal(s->job, s->spec ? s->spec->kill_sig : SIGTERM);
                } else
                        agent_xrun_kill(s, act->reason); /* a transfer, no job: it goes */
                break;
        case AGENT_DO_HARD_KILL:
                if (s->job) {
                        if (!s->exit_reason)
                                s->exit_reason = act->reason;
                        agent_job_kill(s->job);
                } else
                        agent_xrun_kill(s, act->reason);
                break;
        case AGENT_DO_KILLING_TIMEOUT:
                if (s->job)
                        job_would_not_die(s);
                break;
        case AGENT_DO_CLAIM_ENDED: {
                /* The preempting claim ends without ever having the slot: only
                 * its own claimant hears of it, the current claim goes on. */
                bool pre = act->claim_id && s->pre_claim_id[0] && strcmp(act->claim_id, s->pre_claim_id) == 0;
                Conn *to = pre ? s->pre_claimant : s->claimant;
                ClassAd *msg = NULL;
                char wire[AGENT_WIRE_NAME_MAX];
                if (to && glean_msg_new(GLEAN_CMD_EVENT, &msg) >= 0) {
                        classad_set_string(msg, "Slot", agent_slot_wire_name(s, wire, sizeof wire));
                        classad_set_string(msg, "State", agent_state_name(agent_sm_state(s->sm)));
                        classad_set_string(msg, "Activity", agent_activity_name(agent_sm_activity(s->sm)));
                        classad_set_string(msg, "ClaimId", act->claim_id ? act->claim_id : "");
                        classad_set_bool(msg, "ClaimEnded", true);
                        classad_set_string(msg, "Reason", act->reason ? act->reason : "");
                        agent_conn_send(to, msg);
                        classad_free(msg);
                }
                if (pre) {
                        s->pre_claimant = NULL;
                        s->pre_claim_id[0] = 0;
                } else {
                        s->claimant = NULL;
                        s->claim_id[0] = 0;
                }
                break;
        }
        case AGENT_DO_START_BACKFILL:
                start_backfill(s);
                break;
        case AGENT_DO_KILL_BACKFILL:
                if (s->backfill)
                        agent_job_kill(s->backfill);
                break;
        case AGENT_DO_RELEASE_SLOT:
                if (s->dynamic && !s->release) {
                        s->release = true;
                        agent_request_defer(s->agent);
                }
                break;
        default:
                break;
        }
}

static void on_transition(void *userdata, const AgentTransition *t) {
        Slot *s = userdata;
        Agent *a = s->agent;
        char num[16];
        snprintf(num, sizeof num, "%d", t->number);
        GleanLogField f[] = {
                { "GLEAN_SLOT", s->name },
                { "GLEAN_STATE", agent_state_name(t->to_state) },
                { "GLEAN_ACTIVITY", agent_activity_name(t->to_act) },
                { "GLEAN_FROM_STATE", agent_state_name(t->from_state) },
                { "GLEAN_FROM_ACTIVITY", agent_activity_name(t->from_act) },
                { "GLEAN_TRANSITION", num },
                { "GLEAN_REASON", t->reason ? t->reason : "" },
                { "GLEAN_JOB", t->job_id ? t->job_id : "" },
        };
        size_t n = sizeof f / sizeof *f - (t->job_id ? 0 : 1);
        agent_slot_sync_claims(s);
        /* Why a running job is about to be evicted, for its JobExit ("retirement
         * ended" says little when a better claim takes the slot). A job that
         * unretires (19: a drain cancelled, the preempting claim gone) is no
         * longer being evicted. */
        if (t->to_state == AGENT_STATE_CLAIMED && t->to_act == AGENT_ACT_BUSY && t->from_act == AGENT_ACT_RETIRING)
                s->exit_reason = NULL;
        else if (t->to_state == AGENT_STATE_PREEMPTING && s->job && !s->exit_reason)
                s->exit_reason = s->pre_claim_id[0] ? "preempted by a better claim" : t->reason;
        glean_log(LOG_INFO, MESSAGE_ID_TRANSITION, f, n, "%s: %s/%s -> %s/%s (transition %s: %s)", s->name,
                  agent_state_name(t->from_state), agent_activity_name(t->from_act), agent_state_name(t->to_state),
                  agent_activity_name(t->to_act), t->number ? num : "-", t->reason ? t->reason : "");
        /* The claimant learns of the change too (glean agent run prints it). */
        ClassAd *msg = NULL;
        char wire[AGENT_WIRE_NAME_MAX];
        if (s->claimant && glean_msg_new(GLEAN_CMD_EVENT, &msg) >= 0) {
                classad_set_string(msg, "Slot", agent_slot_wire_name(s, wire, sizeof wire));
                classad_set_string(msg, "State", agent_state_name(t->to_state));
                classad_set_string(msg, "Activity", agent_activity_name(t->to_act));
                classad_set_int(msg, "Transition", t->number);
                classad_set_string(msg, "Reason", t->reason ? t->reason : "");
                agent_notify_claimant(s, GLEAN_CMD_EVENT, msg);
        }
        agent_publish(a, s);
        agent_request_defer(a);
}

static bool all_drained(void *userdata) {
        Slot *s = userdata;
        for (Slot *o = s->agent->slots; o; o = o->next)
                if (!o->partitionable && !o->release && agent_sm_state(o->sm) != AGENT_STATE_DRAINED)
                        return false;
        return true;
}

/* The slot's job is over (exited, or given_up on): logged, its claimant
 * told (reason: why it was ended, or NULL), the job freed (one that still
 * runs is killed and reaped later by the executor), the state machine told. */
static void job_ended(Slot *s, AgentJob *job, const AgentJobExit *ex, const char *reason, bool given_up) {
        int64_t now = agent_now();
        char what[64];
        if (given_up)
                snprintf(what, sizeof what, "given up on (killed, but still there)");
        else if (ex->status_unknown)
                snprintf(what, sizeof what, "ended (its exit status is unknown)");
        else if (ex->by_signal)
                snprintf(what, sizeof what, "killed by signal %d%s", ex->signal, ex->core_dumped ? " (core dumped)" : "");
        else
                snprintf(what, sizeof what, "exited with status %d", ex->exit_code);
        GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
        glean_log(ex->oom_killed || given_up ? LOG_WARNING : LOG_INFO, NULL, f, 1,
                  "%s: job %s after %.1f s (user %.2f s, system %.2f s)%s%s", s->name, what, ex->wall_time,
                  ex->user_cpu, ex->sys_cpu, ex->reason[0] ? ": " : "", ex->reason);
        if (s->agent->draining && s->exit_reason)
                s->agent->drain_badput += ex->wall_time * (double) s->res.cpus;
        agent_state_remove(s);
        agent_job_free(job);
        s->job = NULL;
        s->condor_load = 0;
        /* A run whose files travel: its output first (xrun.c), then agent_slot_run_over. */
        if (!given_up && agent_xrun_job_ended(s, ex, reason)) {
                agent_schedule(s->agent);
                return;
        }
        (void) now;
        agent_slot_run_over(s, ex, reason);
}

void agent_slot_run_over(Slot *s, const AgentJobExit *ex, const char *reason) {
        AgentJobExit none = { 0 };
        send_job_exit(s, ex ? ex : &none, reason);
        classad_free(s->exit_extra);
        s->exit_extra = NULL;
        agent_xrun_free(s);
        agent_jobspec_free(s->spec);
        s->spec = NULL;
        s->exit_reason = NULL;
        s->condor_load = 0;
        AgentEvent ev = { .type = AGENT_EV_JOB_EXIT };
        agent_sm_handle(s->sm, agent_now(), &ev, NULL, 0);
        agent_schedule(s->agent);
}

static void job_exited(AgentJob *job, const AgentJobExit *ex, void *userdata) {
        Slot *s = userdata;
        char why[sizeof ex->reason];
        if (job == s->backfill) {
                agent_job_free(job);
                s->backfill = NULL;
                if (ex->cgroup_stuck) {
                        stuck_reason(s, "processes of the backfill command", "backfill", why, sizeof why);
                        agent_slot_break(s, why);
                }
                AgentEvent ev = { .type = AGENT_EV_BACKFILL_EXIT };
                agent_sm_handle(s->sm, agent_now(), &ev, NULL, 0);
                agent_schedule(s->agent);
                return;
        }
        if (job != s->job)
                return;
        if (ex->cgroup_stuck) {
                /* Before the state machine hears of the exit: the claim ends, no job starts. */
                stuck_reason(s, "processes of the job", "job", why, sizeof why);
                agent_slot_break(s, why);
        }
        job_ended(s, job, ex, s->exit_reason, false);
}

/* KILLING_TIMEOUT after the hard kill and the job is still there: a
 * process the kernel does not let die (stuck in the kernel: a hung NFS or
 * FUSE server, a broken device). The slot is broken; the job is given up
 * on: its claimant hears of its end now, and the executor keeps killing it
 * and reaps it if it ever goes. */
static void job_would_not_die(Slot *s) {
        char why[sizeof ((AgentJobExit *) 0)->reason];
        AgentJobExit ex = { 0 };
        (void) agent_job_kill(s->job);
        if (agent_job_usage(s->job, &ex) < 0)
                ex = (AgentJobExit){ 0 };
        /* Killed as far as the agent can: SIGKILL is what it sent, and it is
         * what the job's claimant hears (never a success). */
        ex.by_signal = true;
        ex.signal = SIGKILL;
        ex.oom_killed = false;
        stuck_reason(s, "the job's processes", "job", why, sizeof why);
        snprintf(ex.reason, sizeof ex.reason, "%s", why);
        agent_slot_break(s, why);
        job_ended(s, s->job, &ex, why, true);
}

/* ---- slot ads ---- */

static int slot_fill_ad(Slot *s, ConfigError *err) {
        Agent *a = s->agent;
        int r = agent_slot_ad_resources(s->ad, &a->machine, &s->def, s->name, s->dynamic, &s->res);
        if (r < 0)
                return r;
        classad_set_string(s->ad, "MyType", "Machine");
        classad_set_string(s->ad, "TargetType", "Job");
        classad_set_string(s->ad, "GleanVersion", "0.1.0");
        classad_set_string(s->ad, "ExecutorName", agent_executor_name(a->exec));
        agent_cgroups_ad(a, s->ad);
        agent_netwatch_ad(a, s->ad);
        CaError cerr;
        classad_set_expr_text(s->ad, "CurrentTime", "time()", CA_MODE_OLD, &cerr);
        r = agent_policy_fill_ad(a->cfg, s->def.id, s->ad, err);
        if (r < 0)
                return r;
        char **names = NULL;
        r = config_startd_attrs(a->cfg, s->def.id, &names, err);
        if (r < 0)
                return r;
        for (size_t i = 0; names[i]; i++) {
                char *v = NULL;
                if (config_get_slot(a->cfg, s->def.id, names[i], &v, err) >= 0 && *v &&
                    classad_set_expr_text(s->ad, names[i], v, CA_MODE_OLD, &cerr) < 0) {
                        snprintf(err->msg, sizeof err->msg, "STARTD_ATTRS: %s = %s is not a ClassAd expression",
                                 names[i], v);
                        free(v);
                        config_strv_free(names);
                        return -EINVAL;
                }
                free(v);
        }
        config_strv_free(names);
        return 0;
}

static int slot_new(Agent *a, const AgentSlotDef *def, const char *name, bool dynamic, Slot *parent,
                    const AgentRes *res, Slot **ret, ConfigError *err) {
        Slot *s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->agent = a;
        s->def = *def;
        snprintf(s->name, sizeof s->name, "%s", name);
        s->dynamic = dynamic;
        s->partitionable = def->partitionable && !dynamic;
        s->parent = parent;
        s->res = *res;
        s->next_sub = 1;
        s->last_account = agent_now();
        int r = classad_new(&s->ad);
        if (r >= 0)
                r = slot_fill_ad(s, err);
        if (r >= 0) {
                agent_slot_cgroup_open(s); /* without one, jobs of the slot cannot start: logged there */
                agent_sensors_slot_add(s);
                agent_sensors_ad(a, s);
        }
        AgentPolicyKnobs knobs;
        if (r >= 0)
                r = agent_policy_knobs(a->cfg, def->id, &knobs, err);
        if (r >= 0) {
                s->killing_timeout = knobs.killing_timeout;
                knobs.dynamic = dynamic;
                if (s->partitionable)
                        knobs.backfill = false;
                AgentPolicyHooks hooks = { .transition = on_transition, .action = on_action, .all_drained = all_drained };
                r = agent_sm_new(s->name, s->ad, &knobs, &hooks, s, agent_now(), &s->sm);
        }
        if (r < 0) {
                agent_slot_cpus_release(s);
                slot_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

int agent_slots_create(Agent *a, ConfigError *err) {
        AgentSlotDef *defs = NULL;
        size_t n = 0;
        int r = agent_slots_layout(a->cfg, &a->machine, &defs, &n, err);
        if (r < 0)
                return r;
        Slot **tail = &a->slots;
        for (size_t i = 0; i < n; i++) {
                char name[32];
                snprintf(name, sizeof name, "slot%u", defs[i].id);
                Slot *s;
                r = slot_new(a, &defs[i], name, false, NULL, &defs[i].res, &s, err);
                if (r < 0)
                        break;
                *tail = s;
                tail = &s->next;
        }
        free(defs);
        return r < 0 ? r : 0;
}

void agent_slots_free(Agent *a) {
        while (a->slots) {
                Slot *s = a->slots;
                a->slots = s->next;
                slot_free(s);
        }
}

int agent_slot_new_dynamic(Slot *p, const AgentRes *res, Slot **ret) {
        char name[48];
        snprintf(name, sizeof name, "%s_%u", p->name, p->next_sub);
        ConfigError err = { 0 };
        Slot *d;
        int r = slot_new(p->agent, &p->def, name, true, p, res, &d, &err);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_SLOT", name } };
                glean_log(LOG_ERR, NULL, f, 1, "%s: cannot create the dynamic slot: %s", name,
                          err.msg[0] ? err.msg : strerror(-r));
                return r;
        }
        p->next_sub++;
        agent_res_sub(&p->res, res, p->agent->machine.n_custom);
        agent_slot_ad_resources(p->ad, &p->agent->machine, &p->def, p->name, false, &p->res);
        /* After its parent and the parent's other d-slots. */
        Slot **pp = &p->next;
        while (*pp && (*pp)->parent == p)
                pp = &(*pp)->next;
        d->next = *pp;
        *pp = d;
        *ret = d;
        return 0;
}

void agent_slot_destroy(Slot *s) {
        Agent *a = s->agent;
        for (Slot **pp = &a->slots; *pp; pp = &(*pp)->next)
                if (*pp == s) {
                        *pp = s->next;
                        break;
                }
        if (s->parent) {
                agent_slot_cpus_release(s);
                agent_res_add(&s->parent->res, &s->res, a->machine.n_custom);
                agent_slot_ad_resources(s->parent->ad, &a->machine, &s->parent->def, s->parent->name, false,
                                        &s->parent->res);
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_INFO, NULL, f, 1, "%s: dynamic slot released, its resources return to %s", s->name,
                          s->parent->name);
                agent_publish(a, s->parent);
        }
        slot_free(s);
}

/* ---- sensors, load, per-slot attributes ---- */

/* The size of a job's scratch directory in KB (DiskUsage), not following
 * symlinks, at most 100,000 entries counted. */
static int64_t du_kb;
static long du_entries;

static int du_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) path;
        (void) flag;
        (void) ftw;
        du_kb += (int64_t) st->st_blocks / 2;
        return ++du_entries > 100000;
}

static int64_t scratch_kb(const char *dir) {
        du_kb = 0;
        du_entries = 0;
        if (!dir || nftw(dir, du_one, 16, FTW_PHYS | FTW_MOUNT) < 0)
                return 0;
        return du_kb;
}

static const char *const usage_attrs[] = { "CpusUsage", "MemoryUsage", "ResidentSetSize", "DiskUsage" };

/* The usage attributes of the running job, and CondorLoadAvg from its CPU
 * time where the load sensor does not count the slot. */
static void sample_condor_load(Slot *s, int64_t now) {
        if (!s->job) {
                if (s->load_idx < 0)
                        s->condor_load = 0;
                for (size_t i = 0; i < sizeof usage_attrs / sizeof *usage_attrs; i++)
                        classad_delete(s->ad, usage_attrs[i]);
                return;
        }
        AgentJobExit u;
        if (agent_job_usage(s->job, &u) < 0)
                return;
        /* What the running job uses, in the slot's ad (HTCondor's names). */
        classad_set_int(s->ad, "ResidentSetSize", u.max_rss_kb);
        classad_set_int(s->ad, "MemoryUsage", (u.max_rss_kb + 1023) / 1024);
        classad_set_int(s->ad, "DiskUsage", scratch_kb(s->spec ? s->spec->scratch : NULL));
        classad_set_real(s->ad, "CpusUsage", s->condor_load);
        double cpu = u.user_cpu + u.sys_cpu;
        int64_t dt = now - s->last_sample;
        if (dt <= 0 || s->load_idx >= 0)
                return;
        double rate = (cpu - s->last_cpu) / (double) dt;
        if (rate < 0)
                rate = 0;
        s->condor_load = agent_load_decay(s->condor_load, rate, (double) dt, s->agent->load_decay);
        s->last_cpu = cpu;
        s->last_sample = now;
}

void agent_refresh_ads(Agent *a) {
        int64_t now = agent_now();
        size_t n = 0;
        for (Slot *s = a->slots; s; s = s->next)
                n++;
        AgentLoadSlot *ls = calloc(n ? n : 1, sizeof *ls);
        Slot **idx = calloc(n ? n : 1, sizeof *idx);
        if (!ls || !idx) {
                free(ls);
                free(idx);
                return;
        }
        size_t i = 0;
        double total_condor = 0;
        for (Slot *s = a->slots; s; s = s->next, i++) {
                sample_condor_load(s, now);
                idx[i] = s;
                ls[i].state = agent_sm_state(s->sm);
                ls[i].cpus = (double) s->res.cpus;
                ls[i].condor_load = s->condor_load;
                ls[i].partitionable = s->partitionable;
                ls[i].parent = -1;
                for (size_t j = 0; j < i && s->parent; j++)
                        if (idx[j] == s->parent)
                                ls[i].parent = (int) j;
                total_condor += s->condor_load;
        }
        double total = agent_sense_loadavg();
        agent_load_distribute(total, ls, n);
        int64_t kbd, console;
        agent_sense_idle(a, now, &kbd, &console);
        for (i = 0; i < n; i++) {
                Slot *s = idx[i];
                classad_set_real(s->ad, "LoadAvg", ls[i].load);
                classad_set_real(s->ad, "CondorLoadAvg", s->condor_load);
                classad_set_real(s->ad, "TotalLoadAvg", total);
                classad_set_real(s->ad, "TotalCondorLoadAvg", total_condor);
                int64_t sk, sc;
                agent_slot_idle(&a->idle, s->def.id, kbd, console, now - a->start_time, &sk, &sc);
                classad_set_int(s->ad, "KeyboardIdle", sk);
                if (sc >= 0)
                        classad_set_int(s->ad, "ConsoleIdle", sc);
                classad_set_int(s->ad, "MyCurrentTime", now);
                classad_set_real(s->ad, "TotalMachineDrainingBadput", a->drain_badput);
                classad_set_real(s->ad, "TotalMachineDrainingUnclaimedTime", a->drain_unclaimed);
        }
        free(ls);
        free(idx);
        agent_sense_pressure(a);

        /* STARTD_SLOT_ATTRS: slotN_ATTR of every slot in every slot's ad (3.5.10.5). */
        char **attrs = NULL;
        ConfigError err;
        if (config_get_list(a->cfg, "STARTD_SLOT_ATTRS", &attrs, &err) >= 0) {
                for (size_t k = 0; attrs[k]; k++)
                        for (Slot *src = a->slots; src; src = src->next) {
                                CaValue v = ca_undefined();
                                if (classad_eval_attr(src->ad, attrs[k], CA_MODE_OLD, &v) < 0)
                                        continue;
                                char name[160];
                                snprintf(name, sizeof name, "%s_%s", src->name, attrs[k]);
                                for (Slot *dst = a->slots; dst; dst = dst->next)
                                        classad_set_value(dst->ad, name, &v);
                                ca_value_clear(&v);
                        }
                config_strv_free(attrs);
        }
        agent_cron_merge_slots(a); /* the startd cron's attributes, last (cron.c) */
}

static void account_draining(Agent *a, int64_t now) {
        for (Slot *s = a->slots; s; s = s->next) {
                if (a->draining && !s->partitionable && agent_sm_state(s->sm) != AGENT_STATE_CLAIMED &&
                    agent_sm_state(s->sm) != AGENT_STATE_PREEMPTING)
                        a->drain_unclaimed += (double) (now - s->last_account) * (double) s->res.cpus;
                s->last_account = now;
        }
}

void agent_evaluate(Agent *a) {
        int64_t now = agent_now();
        account_draining(a, now);
        agent_refresh_ads(a);
        for (Slot *s = a->slots; s; s = s->next)
                if (!s->release)
                        agent_sm_eval(s->sm, now);
        agent_schedule(a);
}

static int on_eval_timer(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        agent_evaluate(userdata);
        return 0;
}

void agent_schedule(Agent *a) {
        int64_t now = agent_now();
        bool busy = false;
        int64_t next = INT64_MAX;
        for (Slot *s = a->slots; s; s = s->next) {
                agent_state_alive(s); /* after a keep-alive (every event ends here) */
                AgentState st = agent_sm_state(s->sm);
                if (st == AGENT_STATE_CLAIMED || st == AGENT_STATE_MATCHED || st == AGENT_STATE_PREEMPTING ||
                    st == AGENT_STATE_BACKFILL || st == AGENT_STATE_DRAINED)
                        busy = true;
                int64_t d = agent_sm_next_deadline(s->sm);
                if (d < next)
                        next = d;
        }
        int64_t iv = busy ? a->polling_interval : a->update_interval;
        if (now + iv < next)
                next = now + iv;
        if (next <= now)
                next = now + 1;
        uint64_t usec = (uint64_t) next * 1000000ULL;
        int r = glean_timer_arm(a->event, &a->eval_timer, CLOCK_REALTIME, usec, 100000, on_eval_timer, a);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the policy's timer: %m; the slots are evaluated at their next event");
}

bool agent_idle_for_exit(const Agent *a) {
        if (!a->shutting_down)
                return false;
        for (const Slot *s = a->slots; s; s = s->next)
                if (s->job || s->backfill || s->xrun)
                        return false;
        return true;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * adopt.c — jobs that outlive the agent. While a job runs, a small state
 * file in <EXECUTE>/.glean-state/<slot>.ad records its claim, its job ad,
 * where it runs and who it is: its main pid and its reaper's, their start
 * times and the job's token (AgentJobId); the reaper writes the job's end
 * to <slot>.exit beside it. When the agent starts, it re-adopts the jobs it
 * has a state file for (the slot is claimed again with the same claim id
 * and the job runs on; its claimant may keep it alive with the same claim
 * id), and their real exit status comes from the exit file. The file's
 * mtime follows the claim's last keep-alive: a claim whose lease ran out
 * while no agent ran is dead (its claimant has given it up), and its job,
 * re-adopted, is killed at once and reported as any expired lease. With cgroups
 * it kills and removes every other job cgroup; with the fork executor, the
 * process group and reaper of a job it cannot re-adopt are killed (checked
 * by their start times): no process is left uncounted.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/file.h"
#include "daemon.h"

#define STATE_DIR ".glean-state"

static int state_path(const Agent *a, const char *slot, char *buf, size_t len) {
        int n = snprintf(buf, len, "%s/%s/%s.ad", a->execute, STATE_DIR, slot);
        return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

int agent_state_dir(const Agent *a, char *buf, size_t len) {
        int n = snprintf(buf, len, "%s/%s", a->execute, STATE_DIR);
        if (n < 0 || (size_t) n >= len)
                return -ENAMETOOLONG;
        return mkdir(buf, 0700) < 0 && errno != EEXIST ? -errno : 0;
}

char *agent_state_exit_file(Slot *s) {
        char dir[PATH_MAX], *path = NULL;
        if (agent_state_dir(s->agent, dir, sizeof dir) < 0 || asprintf(&path, "%s/%s.exit", dir, s->name) < 0)
                return NULL;
        return path;
}

char *agent_state_file(Slot *s) {
        char path[PATH_MAX];
        if (state_path(s->agent, s->name, path, sizeof path) < 0)
                return NULL;
        return strdup(path);
}

static bool state_write(Slot *s);

void agent_state_save(Slot *s) {
        /* Recorded: the job may outlive this agent now (until then it dies with it). */
        if (state_write(s))
                (void) agent_job_keep(s->job);
}

static bool state_write(Slot *s) {
        Agent *a = s->agent;
        if (!s->job || !s->spec)
                return false;
        char dir[PATH_MAX], path[PATH_MAX];
        if (agent_state_dir(a, dir, sizeof dir) < 0 || state_path(a, s->name, path, sizeof path) < 0) {
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_WARNING, NULL, f, 1, "%s: cannot record the job in %s/%s: the job would not be "
                          "re-adopted after a restart, and ends with the agent", s->name, a->execute, STATE_DIR);
                return false;
        }
        ClassAd *ad = NULL;
        if (classad_new(&ad) < 0)
                return false;
        classad_set_string(ad, "Slot", s->name);
        if (s->parent)
                classad_set_string(ad, "Parent", s->parent->name);
        classad_set_string(ad, "ClaimId", s->claim_id);
        classad_set_int(ad, "ClaimantUid", (int64_t) s->claimant_uid);
        /* The central manager's claim: its connection's again after a restart. */
        classad_set_bool(ad, "ManagerClaim", s->claimant && s->claimant->upstream);
        classad_set_int(ad, "JobPid", (int64_t) agent_job_pid(s->job));
        AgentJobId id;
        if (agent_job_id(s->job, &id) >= 0) {
                char token[24];
                snprintf(token, sizeof token, "%016" PRIx64, id.token);
                classad_set_int(ad, "JobPidStart", (int64_t) id.start);
                classad_set_int(ad, "ReaperPid", (int64_t) id.reaper_pid);
                classad_set_int(ad, "ReaperPidStart", (int64_t) id.reaper_start);
                classad_set_string(ad, "JobToken", token);
        }
        classad_set_real(ad, "JobStartWall", (double) time(NULL));
        /* The claim's lease; the file's mtime is its last keep-alive
         * (agent_state_alive): a claim whose lease ran out while no agent
         * ran is dead when the agent comes back. */
        int64_t last_alive = 0, lease = 0;
        if (agent_sm_claim_alive(s->sm, &last_alive, &lease))
                classad_set_int(ad, "LeaseDuration", lease);
        classad_set_int(ad, "Cpus", s->res.cpus);
        classad_set_int(ad, "Memory", s->res.memory);
        classad_set_int(ad, "Disk", s->res.disk);
        classad_set_int(ad, "Swap", s->res.swap);
        if (s->spec->scratch)
                classad_set_string(ad, "Scratch", s->spec->scratch);
        const ClassAd *job = agent_sm_job(s->sm);
        if (job)
                glean_msg_set_ad(ad, "JobAd", job);
        (void) agent_xrun_state(s, ad); /* a run whose files travel: where its output goes */
        char *text = classad_unparse(ad);
        classad_free(ad);
        if (!text)
                return false;
        /* Not fsync'ed: the file serves an agent restarted while the machine
         * runs on (rename is atomic for it); after a power loss no job is left
         * to re-adopt, and a torn file is refused. A flush here would stall
         * the agent's loop for a disk write at every job start. */
        bool ok = glean_write_file_replace(path, text, strlen(text), 0600) >= 0;
        s->alive_recorded = 0;
        if (ok)
                agent_state_alive(s);
        if (!ok) {
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                glean_log(LOG_WARNING, NULL, f, 1, "%s: cannot record the job in %s: the job would not be re-adopted "
                          "after a restart, and ends with the agent", s->name, path);
        }
        free(text);
        return ok;
}

void agent_state_alive(Slot *s) {
        int64_t last_alive = 0, lease = 0;
        if (!s->job || !s->spec || s->adopting || !agent_sm_claim_alive(s->sm, &last_alive, &lease) ||
            last_alive == s->alive_recorded)
                return;
        char path[PATH_MAX];
        if (state_path(s->agent, s->name, path, sizeof path) < 0)
                return;
        struct timespec t[2] = { { .tv_sec = (time_t) last_alive }, { .tv_sec = (time_t) last_alive } };
        if (utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW) < 0) {
                int e = errno;
                GleanLogField f[] = { { "GLEAN_SLOT", s->name } };
                if (e != ENOENT)
                        glean_log(LOG_WARNING, NULL, f, 1, "%s: cannot record the claim's keep-alive in %s: %s", s->name,
                                  path, strerror(e));
                s->alive_recorded = last_alive; /* said once per keep-alive at most */
                return;
        }
        s->alive_recorded = last_alive;
}

void agent_state_remove(Slot *s) {
        s->alive_recorded = 0;
        char path[PATH_MAX];
        if (state_path(s->agent, s->name, path, sizeof path) >= 0)
                unlink(path);
        /* The exit file stays: the slot's next job writes over it (another
         * job's record is refused by its token). */
}

/* The job a state file names (pid 0: none recorded). */
static void state_job_id(const ClassAd *st, AgentJobId *ret) {
        int64_t pid = 0, start = 0, rpid = 0, rstart = 0;
        char *token = NULL;
        classad_eval_int(st, "JobPid", CA_MODE_OLD, &pid);
        classad_eval_int(st, "JobPidStart", CA_MODE_OLD, &start);
        classad_eval_int(st, "ReaperPid", CA_MODE_OLD, &rpid);
        classad_eval_int(st, "ReaperPidStart", CA_MODE_OLD, &rstart);
        classad_eval_string(st, "JobToken", CA_MODE_OLD, &token);
        *ret = (AgentJobId){
                .pid = pid > 0 && pid <= INT32_MAX ? (pid_t) pid : 0,
                .start = start > 0 ? (uint64_t) start : 0,
                .reaper_pid = rpid > 0 && rpid <= INT32_MAX ? (pid_t) rpid : 0,
                .reaper_start = rstart > 0 ? (uint64_t) rstart : 0,
                .token = token ? strtoull(token, NULL, 16) : 0,
        };
        free(token);
}

#define log_slot(prio, slot, ...)                                                \
        do {                                                                     \
                GleanLogField f_[] = { { "GLEAN_SLOT", (slot) } };               \
                glean_log((prio), NULL, f_, 1, __VA_ARGS__);                    \
        } while (0)

/* A re-adopted job whose claim's lease ran out while no agent ran (the
 * state file's mtime is the last keep-alive heard, alive_at): the claim
 * is dead, its claimant has given it up (the central manager requeues the
 * job at the end of the lease and may have started it elsewhere). Its
 * lease is made to end when it did: the next evaluation kills the job,
 * whose JobExit (Reason "claim lease expired") and the claim's end go to
 * the claimant as for any lease that expires. Not a job that ended by
 * itself meanwhile: its real exit is what is reported. */
static void end_expired_claim(Slot *s, const ClassAd *st, int64_t alive_at) {
        int64_t lease = 0, last = 0, now = agent_now();
        if (classad_eval_int(st, "LeaseDuration", CA_MODE_OLD, &lease) < 0 &&
            !agent_sm_claim_alive(s->sm, &last, &lease))
                return;
        if (lease <= 0 || alive_at <= 0 || now < alive_at + lease)
                return;
        AgentJobExit probe;
        if (s->spec && s->spec->exit_file &&
            agent_exit_file_read(s->spec->exit_file, &s->adopt_id, &probe, NULL, 0) >= 0)
                return;
        if (agent_sm_set_claim_alive(s->sm, alive_at) < 0)
                return;
        log_slot(LOG_WARNING, s->name,
                 "%s: the claim's lease (%lld s) ran out %lld s ago while no agent ran: the claim is dead, its job is "
                 "killed",
                 s->name, (long long) lease, (long long) (now - alive_at - lease));
}

/* Re-adopts the job of one state file (alive_at: its mtime, the claim's
 * last keep-alive); 0 when it runs on. */
static int adopt_one(Agent *a, const ClassAd *st, int64_t alive_at, char *why, size_t whylen) {
        char *slot = NULL, *parent = NULL, *claim = NULL, *scratch = NULL;
        int64_t uid = 0;
        double started = 0;
        ClassAd *job = NULL;
        Slot *s = NULL;
        int r = -EINVAL;
        classad_eval_string(st, "Slot", CA_MODE_OLD, &slot);
        classad_eval_string(st, "Parent", CA_MODE_OLD, &parent);
        classad_eval_string(st, "ClaimId", CA_MODE_OLD, &claim);
        classad_eval_string(st, "Scratch", CA_MODE_OLD, &scratch);
        classad_eval_int(st, "ClaimantUid", CA_MODE_OLD, &uid);
        classad_eval_real(st, "JobStartWall", CA_MODE_OLD, &started);
        if (!slot || !claim || strlen(claim) >= sizeof s->claim_id || glean_msg_get_ad(st, "JobAd", &job) < 0) {
                snprintf(why, whylen, "the state file is incomplete");
                goto out;
        }
        if (parent) {
                Slot *p = agent_slot_find(a, parent);
                const char *us = strrchr(slot, '_');
                if (!p || !p->partitionable || !us) {
                        snprintf(why, whylen, "no partitionable slot %s", parent);
                        goto out;
                }
                AgentRes res = p->res;
                classad_eval_int(st, "Cpus", CA_MODE_OLD, &res.cpus);
                classad_eval_int(st, "Memory", CA_MODE_OLD, &res.memory);
                classad_eval_int(st, "Disk", CA_MODE_OLD, &res.disk);
                res.swap = 0;
                if (!agent_res_fits(&res, &p->res, a->machine.n_custom)) {
                        snprintf(why, whylen, "%s no longer has the resources", parent);
                        goto out;
                }
                unsigned sub = (unsigned) strtoul(us + 1, NULL, 10), keep = p->next_sub;
                p->next_sub = sub;
                r = agent_slot_new_dynamic(p, &res, &s);
                p->next_sub = keep > sub + 1 ? keep : sub + 1;
                if (r < 0) {
                        snprintf(why, whylen, "cannot re-create the dynamic slot");
                        goto out;
                }
        } else if (!(s = agent_slot_find(a, slot)) || s->partitionable) {
                snprintf(why, whylen, "no such slot in this configuration");
                r = -ENOENT;
                goto out;
        }
        agent_refresh_ads(a);
        AgentEvent ev = { .type = AGENT_EV_CLAIM, .claim_id = claim, .job = job };
        r = agent_sm_handle(s->sm, agent_now(), &ev, why, whylen);
        if (r < 0)
                goto fail;
        bool manager = false;
        classad_eval_bool(st, "ManagerClaim", CA_MODE_OLD, &manager);
        s->claimant = manager ? agent_upstream_conn(a) : NULL;
        s->claimant_uid = (uid_t) uid;
        snprintf(s->claim_id, sizeof s->claim_id, "%s", claim);
        r = agent_jobspec_from_ad(job, &a->runas, a->execute, s->name, &s->spec, why, whylen);
        if (r < 0) {
                s->spec = NULL;
                goto fail;
        }
        free(s->spec->scratch);
        s->spec->scratch = scratch;
        scratch = NULL;
        /* A run whose files travel: its sandbox stays the agent's, its
         * output is sent when it exits (xrun.c). */
        if ((r = agent_xrun_prepare(s, st, job, why, whylen)) < 0)
                goto fail;
        if (a->cgroot && !(s->spec->cgroup = agent_slot_cgroup_leaf(s, "job"))) {
                r = -ENOMEM;
                goto fail;
        }
        s->adopting = true;
        state_job_id(st, &s->adopt_id);
        s->adopt_started = started;
        ev = (AgentEvent){ .type = AGENT_EV_ACTIVATE, .claim_id = claim, .job = job };
        r = agent_sm_handle(s->sm, agent_now(), &ev, why, whylen);
        s->adopting = false;
        if (r >= 0 && !s->job) {
                snprintf(why, whylen, "%s", s->start_error[0] ? s->start_error : "the executor would not adopt it");
                r = -ESRCH;
                AgentEvent ex = { .type = AGENT_EV_JOB_EXIT };
                agent_sm_handle(s->sm, agent_now(), &ex, NULL, 0);
        }
        if (r >= 0) {
                end_expired_claim(s, st, alive_at);
                goto out;
        }
fail:
        if (s->xrun) {
                if (s->spec)
                        s->spec->scratch_kept = false; /* cleanup removes the sandbox as any scratch left */
                agent_xrun_free(s);
        }
        agent_jobspec_free(s->spec);
        s->spec = NULL;
        {
                AgentEvent rel = { .type = AGENT_EV_RELEASE, .claim_id = claim };
                agent_sm_handle(s->sm, agent_now(), &rel, NULL, 0);
        }
        s->claim_id[0] = 0;
out:
        classad_free(job);
        free(slot);
        free(parent);
        free(claim);
        free(scratch);
        return r;
}

static void report_cleanup(Agent *a, const char *slot, const char *job, int k, const char *why) {
        if (k > 0)
                log_slot(LOG_WARNING, slot, "%s: killed %d process%s left behind by a previous agent in %s", slot, k,
                         k == 1 ? "" : "es", job);
        else if (k < 0)
                log_slot(LOG_ERR, slot, "%s: %s", slot, why);
        /* What a previous agent left and nothing can end: the slot would
         * never start a job there. */
        Slot *s = k == -EBUSY ? agent_slot_find(a, slot) : NULL;
        if (s && !s->partitionable) {
                char reason[600];
                snprintf(reason, sizeof reason, "processes a previous agent left in %.200s would not die: %s", job, why);
                agent_slot_break(s, reason);
        }
}

static bool is_job_cgroup_adopted(const Agent *a, const char *path) {
        for (const Slot *s = a->slots; s; s = s->next)
                if (s->job && s->spec && s->spec->cgroup && strcmp(s->spec->cgroup, path) == 0)
                        return true;
        return false;
}

/* The job cgroup slots/<slot>/<leaf> ("job", "backfill") killed and
 * removed, unless it is one a slot now runs (adopted). */
static void clean_leaf(Agent *a, const char *slot, const char *name, const char *leaf, bool even_adopted) {
        char path[PATH_MAX], why[256] = "";
        if (cg_subpath(path, sizeof path, slot, leaf) < 0 || (!even_adopted && is_job_cgroup_adopted(a, path)))
                return;
        report_cleanup(a, name, path, agent_exec_cleanup(a->cgroot, path, why, sizeof why), why);
}

/* Kills and removes the job cgroups under <base>/slots nobody runs now,
 * and the empty cgroups of dynamic slots that no longer exist. */
static void clean_leftovers(Agent *a) {
        char **slots = NULL;
        if (cg_root_children(a->cgroot, "", &slots) < 0)
                return;
        for (char **p = slots; *p; p++) {
                if ((*p)[0] == '.')
                        continue;
                /* one level of dynamic slots below */
                char **subs = NULL;
                (void) cg_root_children(a->cgroot, *p, &subs);
                for (char **q = subs; q && *q; q++) {
                        char dpath[PATH_MAX];
                        if ((*q)[0] == '.' || strcmp(*q, "job") == 0 || strcmp(*q, "backfill") == 0 ||
                            cg_subpath(dpath, sizeof dpath, *p, *q) < 0)
                                continue;
                        clean_leaf(a, dpath, *q, "job", false);
                        if (!agent_slot_find(a, *q)) {
                                Cg *cg = NULL;
                                char why[256];
                                if (cg_open(a->cgroot, dpath, &cg, why, sizeof why) >= 0)
                                        cg_remove(cg);
                                cg_free(cg);
                        }
                }
                cg_strv_free(subs);
                clean_leaf(a, *p, *p, "backfill", true);
                clean_leaf(a, *p, *p, "job", false);
        }
        cg_strv_free(slots);
}

/* A job of a state file that could not be re-adopted, under the fork
 * executor: its process group and its reaper are killed (only while they
 * are the processes the file names, by their start times), its exit file
 * removed. Under cgroups, clean_leftovers() kills it with its cgroup. */
static void end_orphan(Agent *a, const ClassAd *st, const char *slot, const char *dir) {
        AgentJobId id;
        state_job_id(st, &id);
        if (!a->cgroot && id.pid > 0) {
                int k = agent_exec_kill_orphan(&id);
                if (k > 0)
                        log_slot(LOG_WARNING, slot, "%s: killed the process group %d (and its reaper %d) of the job "
                                 "that could not be re-adopted", slot, (int) id.pid, (int) id.reaper_pid);
                else if (k == -EINVAL)
                        log_slot(LOG_WARNING, slot, "%s: the job %d that could not be re-adopted is not known well "
                                 "enough to be killed (no start time recorded): left alone", slot, (int) id.pid);
        }
        char exit_file[PATH_MAX * 2];
        snprintf(exit_file, sizeof exit_file, "%s/%s.exit", dir, slot);
        unlink(exit_file);
}

void agent_adopt_jobs(Agent *a) {
        pid_t other = a->cgroot ? agent_cgroup_other_agent(a) : 0;
        if (other) {
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "pid %d shares %s/agent (another agent on this BASE_CGROUP?): its jobs are left alone",
                          (int) other, cg_root_path(a->cgroot));
                return;
        }
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s/%s", a->execute, STATE_DIR);
        DIR *d = opendir(dir);
        struct dirent *e;
        while (d && (e = readdir(d))) {
                size_t n = strlen(e->d_name);
                if (n < 4 || strcmp(e->d_name + n - 3, ".ad") != 0)
                        continue;
                char path[PATH_MAX * 2];
                snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
                char *text = NULL;
                struct stat sb;
                int64_t alive_at = stat(path, &sb) >= 0 ? (int64_t) sb.st_mtime : 0;
                if (glean_read_file(path, 4u << 20, &text, NULL) < 0)
                        text = NULL;
                ClassAd *st = NULL;
                CaError cerr;
                char why[512] = "";
                int r = -EINVAL;
                if (text && classad_parse(text, strlen(text), CA_MODE_OLD, &st, &cerr) >= 0)
                        r = adopt_one(a, st, alive_at, why, sizeof why);
                else
                        snprintf(why, sizeof why, "not a ClassAd");
                char *slot = NULL;
                if (st)
                        classad_eval_string(st, "Slot", CA_MODE_OLD, &slot);
                if (r >= 0)
                        log_slot(LOG_NOTICE, slot ? slot : e->d_name, "%s: re-adopted the job of an earlier run of the agent",
                                 slot ? slot : e->d_name);
                else {
                        log_slot(LOG_WARNING, slot ? slot : e->d_name, "%s: cannot re-adopt the job: %s",
                                 slot ? slot : e->d_name, why);
                        if (st && slot && !strchr(slot, '/'))
                                end_orphan(a, st, slot, dir);
                        unlink(path);
                }
                free(slot);
                classad_free(st);
                free(text);
        }
        if (d)
                closedir(d);
        if (a->cgroot)
                clean_leftovers(a);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-fork.c — the plain executor: a job is a process in a session and
 * process group of its own, started with clone3(CLONE_PIDFD), watched and
 * reaped through its pidfd from the sd-event loop.
 *
 * The child, from clone to execve, is agent/exec/exec-child.c's (shared with
 * the cgroup executor): a failure before exec makes start() fail with its
 * errno, so a job that could not be started is an error, not a job that
 * "exits 127".
 *
 * "Every process of the job" is the process group: a job that moves a
 * process elsewhere escapes suspend and kill here (the cgroup executor
 * does not have that hole). The job's reaper (the agent's child, the job's
 * parent) kills whatever is left in its group before it reaps the job,
 * while the job's zombie still holds the group id, writes the exit file
 * and exits: its pidfd is what the loop watches.
 *
 * Where the daemon gives it a cgroup v2 subtree (agent_executor_fork_new_leaves:
 * no controllers needed, as on a hybrid host whose v2 hierarchy has only
 * its core files), each job and its reaper are also cloned into a leaf of
 * their own, <base>/slots/job-<token>: signals go to every process of the
 * leaf as well as the group, a kill is cgroup.kill, and when the reaper is
 * gone whatever is left in the leaf (a process that called setsid, which
 * left the group) is killed and the leaf removed. A leaf that cannot be
 * made is logged and the job runs in its process group alone.
 *
 * Adoption (agent_exec_adopt_id): a job of an agent that died is its
 * process group, pinned by its leader's start time, and its reaper, pinned
 * the same way; the reaper's exit is the job's end, the exit file its
 * status. Should the reaper die before the job (only root can kill it),
 * the group is killed while its leader, checked by its start time, still
 * holds the id: never a group that is not the job's.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec-internal.h"
#include "log.h"

/* How long agent_executor_free() waits for a killed job to be gone. */
#define REAP_TIMEOUT_MS AGENT_REAP_TIMEOUT_MS

/* A job: the bookkeeping of exec-common.c (and its leaf, j->leaf). */
typedef ExecJob ForkJob;

typedef struct ForkExecutor {
        ExecExecutor x;
        CgRoot *leaves; /* NULL: process groups only */
} ForkExecutor;

/* How long the end of a job waits for its leaf to empty after cgroup.kill. */
#define LEAF_EMPTY_MS 2000

#define ADOPTED_REASON "the agent restarted while the job ran: its exit status is unknown"

static const AgentExecutorOps fork_ops;

/* ---- the parent ---- */

/* ---- the leaves ---- */

static void leaf_name(uint64_t token, char *buf, size_t len) {
        snprintf(buf, len, "job-%016llx", (unsigned long long) token);
}

/* A leaf for the job of token (created), or NULL (logged) where it cannot be had. */
static Cg *leaf_open(ForkExecutor *fx, uint64_t token, bool create) {
        char name[32], why[256] = "";
        Cg *cg = NULL;

        if (!fx->leaves)
                return NULL;
        leaf_name(token, name, sizeof(name));
        if (!create) {
                char path[PATH_MAX];
                snprintf(path, sizeof(path), "%s/slots/%s", cg_root_path(fx->leaves), name);
                if (access(path, F_OK) < 0)
                        return NULL;
        }
        int r = cg_open(fx->leaves, name, &cg, why, sizeof(why));
        if (r < 0) {
                glean_log_warning("no cgroup leaf for the job (%s: %s): it runs in its process group alone, and "
                                  "a process of it that calls setsid escapes its end",
                                  name, why[0] ? why : strerror(-r));
                return NULL;
        }
        return cg;
}

/* Kills what is left in the job's leaf, waits (briefly) for it to empty
 * and removes it; one that will not empty is left (and logged). */
static void leaf_end(ForkJob *j) {
        bool populated = true;

        if (!j->leaf)
                return;
        (void) cg_kill(j->leaf);
        for (int i = 0; i < LEAF_EMPTY_MS / 5; i++) {
                if (cg_events(j->leaf, &populated, NULL) < 0 || !populated)
                        break;
                usleep(5000);
        }
        if (cg_remove(j->leaf) < 0)
                glean_log_warning("job %d: its cgroup %s does not empty: left as it is", (int) j->base.pid,
                                  cg_path(j->leaf));
        cg_free(j->leaf);
        j->leaf = NULL;
}

/* Frees j; the job must have been reaped (or be left to init). */
static void job_destroy(ForkJob *j) {
        cg_free(j->leaf); /* a running job's leaf stays (the job is left running) */
        j->leaf = NULL;
        exec_job_release(j);
        free(j);
}

/* The reaper is gone: if it did not end the job (it was killed), what is
 * left of the group is, while its leader, checked by its start time, holds
 * the group's id. */
static void kill_leftover_group(ForkJob *j) {
        int fd;

        if (!j->job_start)
                return;
        fd = exec_pin(j->base.pid, j->job_start);
        if (fd < 0)
                return;
        glean_log_warning("job %d: its reaper %d ended before it: killing its process group", (int) j->base.pid,
                          (int) j->reaper_pid);
        (void) kill(-j->base.pid, SIGKILL);
        close(fd);
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ForkJob *j = userdata;
        siginfo_t si = {};
        struct rusage ru = {};

        (void) s;
        (void) fd;
        (void) revents;

        /* The reaper has exited, the job's group killed and the job reaped by it. */
        if (exec_job_reap(j, &si, &ru) == 0)
                return 0;
        if (si.si_code != CLD_EXITED || si.si_status != 0)
                kill_leftover_group(j); /* killed by its agent, or something went wrong: make sure */
        leaf_end(j); /* what left the group */
        exec_job_fill_exit(j, &si, &ru);
        j->base.exited = true;
        exec_job_report(j, NULL, job_destroy);
        return 0;
}

static int fork_start(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                      AgentJob **ret) {
        ForkExecutor *ffx = (ForkExecutor *) ex;
        ExecExecutor *fx = &ffx->x;
        ExecStarted st;
        pid_t ppid = 0;
        ForkJob *j;
        int r;

        j = exec_job_new(sizeof(*j), fx, spec);
        if (!j)
                return -ENOMEM;

        clock_gettime(CLOCK_MONOTONIC, &j->started);
        j->token = exec_new_token();
        j->leaf = leaf_open(ffx, j->token, true);
        r = agent_child_start(ex, spec, j->leaf ? cg_dirfd(j->leaf) : -1, j->leaf ? cg_path(j->leaf) : NULL,
                              j->token, &st);
        if (r < 0)
                goto fail;

        j->pidfd = st.reaper_pidfd;
        j->base.pid = st.pid;
        j->reaper_pid = st.reaper_pid;
        /* The leader's start time, for killing the group only while it is
         * the job's (ppid: the job, not a process that took its pid since). */
        if (exec_proc_stat(st.pid, &j->job_start, &ppid) < 0 || ppid != st.reaper_pid)
                j->job_start = 0;
        r = sd_event_add_io(fx->event, &j->pid_source, st.reaper_pidfd, EPOLLIN, on_pidfd, j);
        if (r < 0) {
                (void) kill(-st.pid, SIGKILL);
                agent_reap_now(st.reaper_pidfd, st.reaper_pid, REAP_TIMEOUT_MS);
                agent_exec_error(ex, r, "cannot watch the process of '%s': %s", spec->argv[0], strerror(-r));
                goto fail;
        }
        (void) sd_event_source_set_description(j->pid_source, "agent-job");

        exec_job_link(j, on_exit, userdata);
        *ret = &j->base;
        return 0;

fail:
        if (j->leaf) {
                (void) cg_remove(j->leaf);
                cg_free(j->leaf);
                j->leaf = NULL;
        }
        exec_job_discard(j);
        return r;
}

/* sig to the job's group, and to every process of its leaf (those that
 * left the group); SIGKILL there is cgroup.kill. */
static int group_signal(AgentJob *job, int sig) {
        ForkJob *j = (ForkJob *) job;
        int r;

        if (job->exited)
                return -ESRCH;
        r = kill(-job->pid, sig) < 0 ? -errno : 0;
        if (j->leaf) {
                int k = sig == SIGKILL ? cg_kill(j->leaf) : cg_signal(j->leaf, sig);
                if (k >= 0)
                        r = 0; /* the group may be gone while the leaf is not */
        }
        return r;
}

static int fork_suspend(AgentJob *job) {
        return group_signal(job, SIGSTOP);
}

static int fork_resume(AgentJob *job) {
        return group_signal(job, SIGCONT);
}

static int fork_signal(AgentJob *job, int sig) {
        return group_signal(job, sig);
}

static int fork_kill(AgentJob *job) {
        return group_signal(job, SIGKILL);
}

/* Fields of /proc/PID/stat that usage() adds up. */
typedef struct ProcStat {
        pid_t session;
        unsigned long long utime, stime;
        long long cutime, cstime, rss;
} ProcStat;

static int read_proc_stat(int procfd, const char *pid, ProcStat *ret) {
        char path[64], buf[1024];
        const char *p;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/stat", pid);
        n = exec_read_small(procfd, path, buf, sizeof(buf));
        if (n < 0)
                return (int) n;
        p = strrchr(buf, ')'); /* the command name may hold anything */
        if (!p)
                return -EIO;
        /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
         * utime stime cutime cstime priority nice threads itreal starttime vsize rss */
        if (sscanf(p + 1, " %*c %*d %*d %d %*d %*d %*u %*u %*u %*u %*u %llu %llu %lld %lld %*d %*d %*d %*d %*u %*u %lld",
                   &ret->session, &ret->utime, &ret->stime, &ret->cutime, &ret->cstime, &ret->rss) != 6)
                return -EIO;
        return 0;
}

static int fork_usage(AgentJob *job, AgentJobExit *ret) {
        ForkJob *j = (ForkJob *) job;
        long hz = sysconf(_SC_CLK_TCK), page_kb = sysconf(_SC_PAGESIZE) / 1024;
        double user = 0, sys = 0;
        int64_t rss_kb = 0;
        struct dirent *de;
        DIR *d;

        if (exec_job_usage_exited(j, ret))
                return 0;
        if (hz <= 0)
                hz = 100;
        d = opendir("/proc");
        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                ProcStat st;

                if (de->d_name[0] < '1' || de->d_name[0] > '9')
                        continue;
                if (read_proc_stat(dirfd(d), de->d_name, &st) < 0 || st.session != job->pid)
                        continue;
                user += (double) st.utime + (double) st.cutime;
                sys += (double) st.stime + (double) st.cstime;
                rss_kb += st.rss * page_kb;
        }
        closedir(d);
        exec_job_usage_fill(j, user / (double) hz, sys / (double) hz, rss_kb, ret);
        return 0;
}

static void kill_group(ForkJob *j) {
        (void) kill(-j->base.pid, SIGKILL);
        if (j->leaf)
                (void) cg_kill(j->leaf);
}

static void fork_free_job(AgentJob *job) {
        ForkJob *j = (ForkJob *) job;

        /* Abandoned when running: killed now, reaped and cleaned up by the event loop. */
        if (!exec_job_free_later(j, kill_group))
                job_destroy(j);
}

static void end_now(ForkJob *j) {
        kill_group(j);
        j->pid_source = sd_event_source_disable_unref(j->pid_source);
        if (j->pidfd >= 0)
                agent_reap_now(j->pidfd, j->reaper_pid, REAP_TIMEOUT_MS);
}

/* ---- adoption ---- */

/* The end of an adopted job: its reaper gone (or found gone). */
static void adopted_end(ForkJob *j) {
        exec_job_close_pid(j);
        j->result = (AgentJobExit) {
                .max_rss_kb = j->max_rss_kb,
                .wall_time = agent_elapsed_since(&j->started),
        };
        leaf_end(j);
        if (!exec_job_read_exit_file(j)) {
                kill_leftover_group(j);
                j->result.status_unknown = true;
                snprintf(j->result.reason, sizeof(j->result.reason), "%s", ADOPTED_REASON);
        }
        j->base.exited = true;
        exec_job_report(j, NULL, job_destroy);
}

/* The pinned reaper exited: not our child, nothing to reap. */
static int on_adopted_reaper(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s;
        (void) fd;
        (void) revents;
        adopted_end(userdata);
        return 0;
}

static int on_adopted_gone(sd_event_source *s, void *userdata) {
        (void) s;
        adopted_end(userdata);
        return 0;
}

static int fork_adopt(AgentExecutor *ex, const AgentJobSpec *spec, const AgentJobId *id, double started_wall,
                      AgentJobExitFn on_exit, void *userdata, AgentJob **ret) {
        ExecExecutor *fx = (ExecExecutor *) ex;
        bool leader = false;
        ForkJob *j;
        int r, fd;

        if (id->reaper_pid <= 0)
                return agent_exec_error(ex, -EOPNOTSUPP,
                                        "the fork executor can adopt a job only by its reaper, and job %d has none",
                                        (int) id->pid);
        if (id->pid <= 0 || id->start == 0 || id->reaper_start == 0)
                return agent_exec_error(ex, -EINVAL, "job %d: its pids and start times are needed to adopt it",
                                        (int) id->pid);
        for (ExecJob *e = fx->jobs; e; e = e->next)
                if (!e->base.exited && e->base.pid == id->pid)
                        return agent_exec_error(ex, -EBUSY, "job %d is a job of this executor already",
                                                (int) id->pid);
        j = exec_job_new(sizeof(*j), fx, spec);
        if (!j)
                return -ENOMEM;
        j->base.pid = id->pid;
        j->job_start = id->start;
        j->reaper_pid = id->reaper_pid;
        j->reaper_start = id->reaper_start;
        j->token = id->token;
        j->kept = true;
        j->leaf = leaf_open((ForkExecutor *) ex, id->token, false); /* its leaf, if it has one */
        exec_mono_of_wall(started_wall, &j->started);

        fd = exec_pin(id->pid, id->start);
        if (fd >= 0) {
                leader = true;
                close(fd);
        }
        r = exec_pin(id->reaper_pid, id->reaper_start);
        if (r >= 0) {
                j->pidfd = r;
                r = sd_event_add_io(fx->event, &j->pid_source, j->pidfd, EPOLLIN, on_adopted_reaper, j);
        } else if (r == -ESRCH) {
                AgentJobExit probe;
                char why[512] = "";

                /* The job ended while no agent watched: its exit file says how, or it is lost. */
                if (!j->exit_file || agent_exit_file_read(j->exit_file, id, &probe, why, sizeof(why)) < 0) {
                        r = agent_exec_error(ex, -ESRCH, "job %d: its reaper %d is gone%s%s%s", (int) id->pid,
                                             (int) id->reaper_pid, leader ? " while the job runs on" : "",
                                             why[0] ? ": " : " and left no exit file", why);
                        goto fail;
                }
                r = sd_event_add_defer(fx->event, &j->pid_source, on_adopted_gone, j);
        } else {
                agent_exec_error(ex, r, "job %d: cannot pin its reaper %d: %s", (int) id->pid, (int) id->reaper_pid,
                                 strerror(-r));
                goto fail;
        }
        if (r < 0) {
                agent_exec_error(ex, r, "job %d: cannot watch its reaper %d: %s", (int) id->pid, (int) id->reaper_pid,
                                 strerror(-r));
                goto fail;
        }
        (void) sd_event_source_set_description(j->pid_source, "agent-adopted-job");
        exec_job_link(j, on_exit, userdata);
        *ret = &j->base;
        return 0;

fail:
        exec_job_discard(j);
        return r;
}

static void fork_free(AgentExecutor *ex) {
        exec_executor_free((ExecExecutor *) ex, end_now, job_destroy);
}

/* Leaves every job running (and unreaped: they are our children still). */
static void fork_forget(AgentExecutor *ex) {
        exec_executor_forget((ExecExecutor *) ex, job_destroy);
}

static const AgentExecutorOps fork_ops = {
        .name = "fork",
        .start = fork_start,
        .suspend = fork_suspend,
        .resume = fork_resume,
        .signal = fork_signal,
        .kill = fork_kill,
        .usage = fork_usage,
        .free_job = fork_free_job,
        .free = fork_free,
        .adopt = fork_adopt,
        .forget = fork_forget,
};

int agent_executor_fork_new(sd_event *ev, AgentExecutor **ret) {
        return agent_executor_fork_new_leaves(ev, NULL, ret);
}

int agent_executor_fork_new_leaves(sd_event *ev, CgRoot *leaves, AgentExecutor **ret) {
        ForkExecutor *fx;

        if (!ev || !ret)
                return -EINVAL;
        fx = exec_executor_new(sizeof(*fx), &fork_ops, ev);
        if (!fx)
                return -ENOMEM;
        fx->leaves = leaves;
        *ret = &fx->x.base;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-fork.c — the plain executor: a job is a process in a session and
 * process group of its own, started with clone3(CLONE_PIDFD), watched and
 * reaped through its pidfd from the sd-event loop.
 *
 * The child, from clone to execve, is agent/exec-child.c's (shared with
 * the cgroup executor): a failure before exec makes start() fail with its
 * errno, so a job that could not be started is an error, not a job that
 * "exits 127".
 *
 * "Every process of the job" is the process group: a job that moves a
 * process elsewhere escapes suspend and kill here (the cgroup executor
 * does not have that hole). When the main process exits, whatever is left
 * in its group is killed before the main process is reaped, while its
 * zombie still holds the group id.
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

/* How long agent_executor_free() waits for a killed job to be gone. */
#define REAP_TIMEOUT_MS AGENT_REAP_TIMEOUT_MS

/* A job: the bookkeeping of exec-common.c, nothing more. */
typedef ExecJob ForkJob;

static const AgentExecutorOps fork_ops;

/* ---- the parent ---- */

/* Frees j; the job must have been reaped (or be left to init). */
static void job_destroy(ForkJob *j) {
        exec_job_release(j);
        free(j);
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ForkJob *j = userdata;
        siginfo_t si = {};
        struct rusage ru = {};

        (void) s;
        (void) fd;
        (void) revents;

        /* The main process has exited; its zombie still holds the group id. */
        (void) kill(-j->base.pid, SIGKILL);
        if (exec_job_reap(j, &si, &ru) == 0)
                return 0;
        exec_job_fill_exit(j, &si, &ru);
        j->base.exited = true;
        exec_job_report(j, NULL, job_destroy);
        return 0;
}

static int fork_start(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                      AgentJob **ret) {
        ExecExecutor *fx = (ExecExecutor *) ex;
        int pidfd = -1, r;
        ForkJob *j;
        pid_t pid;

        j = exec_job_new(sizeof(*j), fx, spec->scratch);
        if (!j)
                return -ENOMEM;

        clock_gettime(CLOCK_MONOTONIC, &j->started);
        r = agent_child_start(ex, spec, -1, NULL, &pid, &pidfd);
        if (r < 0)
                goto fail;

        j->pidfd = pidfd;
        j->base.pid = pid;
        r = sd_event_add_io(fx->event, &j->pid_source, pidfd, EPOLLIN, on_pidfd, j);
        if (r < 0) {
                (void) kill(-pid, SIGKILL);
                agent_reap_now(pidfd, pid, REAP_TIMEOUT_MS);
                agent_exec_error(ex, r, "cannot watch the process of '%s': %s", spec->argv[0], strerror(-r));
                goto fail;
        }
        (void) sd_event_source_set_description(j->pid_source, "agent-job");

        exec_job_link(j, on_exit, userdata);
        *ret = &j->base;
        return 0;

fail:
        exec_job_discard(j);
        return r;
}

static int group_signal(AgentJob *job, int sig) {
        if (job->exited)
                return -ESRCH;
        return kill(-job->pid, sig) < 0 ? -errno : 0;
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
        agent_reap_now(j->pidfd, j->base.pid, REAP_TIMEOUT_MS);
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
        .forget = fork_forget, /* no adopt: a process that is not our child has no process group we can trust */
};

int agent_executor_fork_new(sd_event *ev, AgentExecutor **ret) {
        ExecExecutor *fx;

        if (!ev || !ret)
                return -EINVAL;
        fx = exec_executor_new(sizeof(*fx), &fork_ops, ev);
        if (!fx)
                return -ENOMEM;
        *ret = &fx->base;
        return 0;
}

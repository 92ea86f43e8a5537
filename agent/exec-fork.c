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

typedef struct ForkJob ForkJob;

typedef struct ForkExecutor {
        AgentExecutor base;
        sd_event *event;
        ForkJob *jobs; /* every job not freed yet, abandoned ones included */
} ForkExecutor;

struct ForkJob {
        AgentJob base;
        ForkExecutor *fx;
        ForkJob *prev, *next;
        int pidfd;
        sd_event_source *source;
        AgentJobExitFn on_exit;
        void *userdata;
        char *scratch;           /* NULL once removed */
        struct timespec started; /* CLOCK_MONOTONIC */
        AgentJobExit result;     /* once exited */
        int64_t max_rss_kb;      /* largest seen by usage() */
        bool abandoned;          /* freed while running: reap, clean up, free */
        bool in_callback;
        bool free_requested;     /* freed from its own callback */
};

static const AgentExecutorOps fork_ops;

/* ---- the parent ---- */

static void job_unlink(ForkJob *j) {
        ForkExecutor *fx = j->fx;

        if (j->prev)
                j->prev->next = j->next;
        else if (fx->jobs == j)
                fx->jobs = j->next;
        if (j->next)
                j->next->prev = j->prev;
        j->prev = j->next = NULL;
}

static void job_remove_scratch(ForkJob *j) {
        if (!j->scratch)
                return;
        (void) agent_remove_tree(j->scratch); /* nothing to tell anyone: the daemon cleans EXECUTE at start */
        free(j->scratch);
        j->scratch = NULL;
}

/* Frees j; the job must have been reaped (or be left to init). */
static void job_destroy(ForkJob *j) {
        j->source = sd_event_source_disable_unref(j->source);
        if (j->pidfd >= 0)
                close(j->pidfd);
        j->pidfd = -1;
        job_remove_scratch(j);
        job_unlink(j);
        free(j);
}

static void fill_exit(ForkJob *j, const siginfo_t *si, const struct rusage *ru) {
        AgentJobExit *ex = &j->result;

        *ex = (AgentJobExit) {};
        agent_exit_status(ex, si);
        ex->user_cpu = agent_tv_seconds(&ru->ru_utime);
        ex->sys_cpu = agent_tv_seconds(&ru->ru_stime);
        ex->max_rss_kb = ru->ru_maxrss > j->max_rss_kb ? ru->ru_maxrss : j->max_rss_kb;
        ex->wall_time = agent_elapsed_since(&j->started);
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ForkJob *j = userdata;
        siginfo_t si = {};
        struct rusage ru = {};
        int r;

        (void) s;
        (void) fd;
        (void) revents;

        /* The main process has exited; its zombie still holds the group id. */
        (void) kill(-j->base.pid, SIGKILL);
        r = agent_wait_job(j->pidfd, j->base.pid, WNOHANG, &si, &ru);
        if (r >= 0 && si.si_pid == 0)
                return 0; /* not yet after all */
        if (r < 0) {
                /* Reaped by someone else (SIGCHLD ignored?): the status is lost. */
                si = (siginfo_t) {};
                si.si_code = CLD_EXITED;
                si.si_status = 255;
        }
        j->source = sd_event_source_disable_unref(j->source);
        close(j->pidfd);
        j->pidfd = -1;
        fill_exit(j, &si, &ru);
        j->base.exited = true;

        if (j->abandoned || !j->on_exit) {
                job_destroy(j);
                return 0;
        }
        j->in_callback = true;
        j->on_exit(&j->base, &j->result, j->userdata);
        j->in_callback = false;
        job_remove_scratch(j);
        if (j->free_requested)
                job_destroy(j);
        return 0;
}

static int fork_start(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                      AgentJob **ret) {
        ForkExecutor *fx = (ForkExecutor *) ex;
        int pidfd = -1, r;
        ForkJob *j;
        pid_t pid;

        j = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        j->pidfd = -1;
        j->scratch = strdup(spec->scratch);
        if (!j->scratch) {
                free(j);
                return -ENOMEM;
        }

        clock_gettime(CLOCK_MONOTONIC, &j->started);
        r = agent_child_start(ex, spec, -1, NULL, &pid, &pidfd);
        if (r < 0)
                goto fail;

        j->pidfd = pidfd;
        j->base.pid = pid;
        r = sd_event_add_io(fx->event, &j->source, pidfd, EPOLLIN, on_pidfd, j);
        if (r < 0) {
                (void) kill(-pid, SIGKILL);
                agent_reap_now(pidfd, pid, REAP_TIMEOUT_MS);
                agent_exec_error(ex, r, "cannot watch the process of '%s': %s", spec->argv[0], strerror(-r));
                goto fail;
        }
        (void) sd_event_source_set_description(j->source, "agent-job");

        j->fx = fx;
        j->base.executor = ex;
        j->on_exit = on_exit;
        j->userdata = userdata;
        j->next = fx->jobs;
        if (fx->jobs)
                fx->jobs->prev = j;
        fx->jobs = j;
        *ret = &j->base;
        return 0;

fail:
        j->source = sd_event_source_disable_unref(j->source);
        if (j->pidfd >= 0)
                close(j->pidfd);
        free(j->scratch); /* agent_exec_start removes the directory */
        free(j);
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
        int fd;

        snprintf(path, sizeof(path), "%s/stat", pid);
        fd = openat(procfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
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

        if (job->exited) {
                *ret = j->result;
                return 0;
        }
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
        if (rss_kb > j->max_rss_kb)
                j->max_rss_kb = rss_kb;
        *ret = (AgentJobExit) {
                .user_cpu = user / (double) hz,
                .sys_cpu = sys / (double) hz,
                .max_rss_kb = j->max_rss_kb,
                .wall_time = agent_elapsed_since(&j->started),
        };
        return 0;
}

static void fork_free_job(AgentJob *job) {
        ForkJob *j = (ForkJob *) job;

        if (j->in_callback) {
                j->free_requested = true;
                return;
        }
        if (!job->exited) {
                /* Abandoned: killed now, reaped and cleaned up by the event loop. */
                (void) kill(-job->pid, SIGKILL);
                j->abandoned = true;
                j->on_exit = NULL;
                return;
        }
        job_destroy(j);
}

static void fork_free(AgentExecutor *ex) {
        ForkExecutor *fx = (ForkExecutor *) ex;

        while (fx->jobs) {
                ForkJob *j = fx->jobs;

                if (!j->base.exited) {
                        (void) kill(-j->base.pid, SIGKILL);
                        j->source = sd_event_source_disable_unref(j->source);
                        agent_reap_now(j->pidfd, j->base.pid, REAP_TIMEOUT_MS);
                }
                job_destroy(j);
        }
        sd_event_unref(fx->event);
        free(fx);
}

/* Leaves every job running (and unreaped: they are our children still). */
static void fork_forget(AgentExecutor *ex) {
        ForkExecutor *fx = (ForkExecutor *) ex;

        while (fx->jobs) {
                ForkJob *j = fx->jobs;

                free(j->scratch); /* the directory stays */
                j->scratch = NULL;
                job_destroy(j);
        }
        sd_event_unref(fx->event);
        free(fx);
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
        ForkExecutor *fx;

        if (!ev || !ret)
                return -EINVAL;
        fx = calloc(1, sizeof(*fx));
        if (!fx)
                return -ENOMEM;
        fx->base.ops = &fork_ops;
        fx->event = sd_event_ref(ev);
        *ret = &fx->base;
        return 0;
}

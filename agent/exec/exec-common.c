/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-common.c — the job bookkeeping both executors share: their list of
 * jobs, reaping the main process and filling its exit report, reporting
 * the exit, the scratch directory, usage and freeing.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec-internal.h"

void *exec_executor_new(size_t size, const AgentExecutorOps *ops, sd_event *ev) {
        ExecExecutor *x = calloc(1, size);

        if (!x)
                return NULL;
        x->base.ops = ops;
        x->event = sd_event_ref(ev);
        return x;
}

void exec_executor_free(ExecExecutor *x, ExecJobFn end, ExecJobFn destroy) {
        while (x->jobs) {
                ExecJob *j = x->jobs;

                if (!j->base.exited && end)
                        end(j);
                destroy(j);
        }
        sd_event_unref(x->event);
        free(x);
}

void exec_executor_forget(ExecExecutor *x, ExecJobFn destroy) {
        while (x->jobs) {
                ExecJob *j = x->jobs;

                if (!j->base.exited) {
                        free(j->scratch); /* the directory stays */
                        j->scratch = NULL;
                }
                destroy(j);
        }
        exec_executor_free(x, NULL, destroy);
}

void *exec_job_new(size_t size, ExecExecutor *owner, const AgentJobSpec *spec) {
        ExecJob *j = calloc(1, size);

        if (!j)
                return NULL;
        j->pidfd = -1;
        j->owner = owner;
        if ((spec->scratch && !spec->scratch_kept && !(j->scratch = strdup(spec->scratch))) ||
            (spec->exit_file && !(j->exit_file = strdup(spec->exit_file)))) {
                free(j->scratch);
                free(j);
                return NULL;
        }
        return j;
}

void exec_job_link(ExecJob *j, AgentJobExitFn on_exit, void *userdata) {
        ExecExecutor *x = j->owner;

        j->base.executor = &x->base;
        j->on_exit = on_exit;
        j->userdata = userdata;
        j->next = x->jobs;
        if (x->jobs)
                x->jobs->prev = j;
        x->jobs = j;
}

static void exec_job_unlink(ExecJob *j) {
        ExecExecutor *x = j->owner;

        if (!x)
                return;
        if (j->prev)
                j->prev->next = j->next;
        else if (x->jobs == j)
                x->jobs = j->next;
        if (j->next)
                j->next->prev = j->prev;
        j->prev = j->next = NULL;
}

void exec_job_close_pid(ExecJob *j) {
        j->pid_source = sd_event_source_disable_unref(j->pid_source);
        if (j->pidfd >= 0)
                close(j->pidfd);
        j->pidfd = -1;
}

void exec_job_remove_scratch(ExecJob *j) {
        if (!j->scratch)
                return;
        (void) agent_remove_tree(j->scratch); /* nothing to tell anyone: the daemon cleans EXECUTE at start */
        free(j->scratch);
        j->scratch = NULL;
}

void exec_job_release(ExecJob *j) {
        exec_job_close_pid(j);
        exec_job_remove_scratch(j);
        exec_job_unlink(j);
        free(j->exit_file);
        j->exit_file = NULL;
}

void exec_job_discard(ExecJob *j) {
        exec_job_close_pid(j);
        free(j->scratch);
        free(j->exit_file);
        free(j);
}

int exec_job_reap(ExecJob *j, siginfo_t *si, struct rusage *ru) {
        int r;

        r = agent_wait_job(j->pidfd, j->reaper_pid, WNOHANG, si, ru);
        if (r >= 0 && si->si_pid == 0)
                return 0; /* not yet after all */
        if (r < 0) {
                /* Reaped by someone else (SIGCHLD ignored?): the status is lost. */
                *si = (siginfo_t) {};
                si->si_code = CLD_EXITED;
                si->si_status = 255;
        }
        exec_job_close_pid(j);
        return 1;
}

void exec_job_fill_exit(ExecJob *j, const siginfo_t *si, const struct rusage *ru) {
        AgentJobExit *ex = &j->result;

        *ex = (AgentJobExit) {};
        agent_exit_status(ex, si);
        ex->user_cpu = agent_tv_seconds(&ru->ru_utime);
        ex->sys_cpu = agent_tv_seconds(&ru->ru_stime);
        ex->max_rss_kb = ru->ru_maxrss > j->max_rss_kb ? ru->ru_maxrss : j->max_rss_kb;
        ex->wall_time = agent_elapsed_since(&j->started);
        /* The job's own end and rusage, without the reaper's (when it wrote them). */
        (void) exec_job_read_exit_file(j);
}

void exec_mono_of_wall(double wall, struct timespec *ret) {
        struct timespec mono, real;
        double ago, m;

        clock_gettime(CLOCK_MONOTONIC, &mono);
        clock_gettime(CLOCK_REALTIME, &real);
        m = (double) mono.tv_sec + (double) mono.tv_nsec / 1e9;
        ago = wall > 0 ? (double) real.tv_sec + (double) real.tv_nsec / 1e9 - wall : 0;
        if (ago < 0)
                ago = 0;
        if (ago > m)
                ago = m;
        m -= ago;
        ret->tv_sec = (time_t) m;
        ret->tv_nsec = (long) ((m - (double) ret->tv_sec) * 1e9);
        if (ret->tv_nsec < 0)
                ret->tv_nsec = 0;
        if (ret->tv_nsec >= 1000000000L)
                ret->tv_nsec = 999999999L;
}

void exec_job_report(ExecJob *j, ExecJobFn done, ExecJobFn destroy) {
        if (j->abandoned || !j->on_exit) {
                if (done)
                        done(j);
                destroy(j);
                return;
        }
        j->in_callback = true;
        j->on_exit(&j->base, &j->result, j->userdata);
        j->in_callback = false;
        if (done)
                done(j);
        exec_job_remove_scratch(j);
        if (j->free_requested)
                destroy(j);
}

bool exec_job_free_later(ExecJob *j, ExecJobFn kill) {
        if (j->in_callback) {
                j->free_requested = true;
                return true;
        }
        if (!j->base.exited) {
                /* Abandoned: killed now, ended, cleaned up and freed by the event loop. */
                kill(j);
                j->abandoned = true;
                j->on_exit = NULL;
                return true;
        }
        return false;
}

bool exec_job_usage_exited(ExecJob *j, AgentJobExit *ret) {
        if (!j->base.exited)
                return false;
        *ret = j->result;
        return true;
}

void exec_job_usage_fill(ExecJob *j, double user_cpu, double sys_cpu, int64_t rss_kb, AgentJobExit *ret) {
        if (rss_kb > j->max_rss_kb)
                j->max_rss_kb = rss_kb;
        *ret = (AgentJobExit) {
                .user_cpu = user_cpu,
                .sys_cpu = sys_cpu,
                .max_rss_kb = j->max_rss_kb,
                .wall_time = agent_elapsed_since(&j->started),
        };
}

ssize_t exec_read_small(int dirfd, const char *path, char *buf, size_t size) {
        ssize_t n;
        int fd;

        fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n <= 0)
                return -EIO;
        buf[n] = '\0';
        return n;
}

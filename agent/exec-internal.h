/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-internal.h — what the executors share below exec.h: starting the
 * job's process (the child side from clone to execve, and the parent side
 * that learns whether it got there), waiting for it, and filling an exit
 * report. For agent/exec-*.c only.
 */
#pragma once

#include <signal.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>

#include "exec.h"

/* How long a blocking reap of a killed job waits (executor free). */
#define AGENT_REAP_TIMEOUT_MS 5000

/* Starts the job's process and waits until it has execve()d or failed.
 *
 * The child (system calls only: no malloc, no stdio) resets every signal
 * to its default, creates its own session and process group, closes every
 * fd but 0-2 and the error pipe, drops privileges when root (setgroups,
 * setresgid, setresuid, raw calls), sets PR_SET_NO_NEW_PRIVS and umask 022,
 * chdir(iwd), opens in/out/err as the job user, unblocks every signal and
 * execs. A failure before exec is written to a close-on-exec pipe as
 * (step, errno) and becomes this function's error, with
 * agent_executor_last_error() naming the step.
 *
 * cgroup_fd < 0: clone3(CLONE_PIDFD), fork + pidfd_open where clone3 is
 * refused. cgroup_fd >= 0 (an O_PATH or directory fd of a cgroup v2,
 * cgroup_path its path for messages): clone3(CLONE_INTO_CGROUP |
 * CLONE_PIDFD), so the process is in that cgroup from its first
 * instruction; where clone3 is refused (ENOSYS, EPERM from a seccomp
 * filter) fork, and the child writes itself into cgroup.procs before it
 * does anything else, failing the start if it cannot.
 *
 * On success *ret_pid and *ret_pidfd (close-on-exec) are the job's; on
 * failure nothing is left running (the child is reaped). */
int agent_child_start(AgentExecutor *ex, const AgentJobSpec *spec, int cgroup_fd, const char *cgroup_path,
                      pid_t *ret_pid, int *ret_pidfd);

/* waitid(P_PIDFD) with the rusage argument glibc's wrapper lacks (WEXITED
 * is added to flags); falls back to P_PID on kernels without P_PIDFD. */
int agent_wait_job(int pidfd, pid_t pid, int flags, siginfo_t *si, struct rusage *ru);
/* Blocking reap of a child that is exiting or was killed, bounded
 * (timeout_ms < 0: no bound). */
void agent_reap_now(int pidfd, pid_t pid, int timeout_ms);

/* The status part of an exit report (by_signal, exit_code, signal,
 * core_dumped) from what waitid() returned; the other fields untouched. */
void agent_exit_status(AgentJobExit *ex, const siginfo_t *si);

/* Seconds since t0 (CLOCK_MONOTONIC). */
double agent_elapsed_since(const struct timespec *t0);
double agent_tv_seconds(const struct timeval *tv);

/* ---- job bookkeeping (exec-common.c) ---- */

typedef struct ExecJob ExecJob;

/* What both executors keep: their event loop and their jobs (every job
 * not freed yet, abandoned ones included). The first member of each. */
typedef struct ExecExecutor {
        AgentExecutor base;
        sd_event *event;
        ExecJob *jobs;
} ExecExecutor;

/* What both executors keep of a job; the first member of each's job. */
struct ExecJob {
        AgentJob base;
        ExecExecutor *owner;
        ExecJob *prev, *next;
        int pidfd;                  /* the main process, -1 once reaped */
        sd_event_source *pid_source;
        AgentJobExitFn on_exit;
        void *userdata;
        char *scratch;              /* NULL once removed */
        struct timespec started;    /* CLOCK_MONOTONIC */
        AgentJobExit result;        /* once exited */
        int64_t max_rss_kb;         /* largest seen */
        bool abandoned;             /* freed while running: end, clean up, free */
        bool in_callback;
        bool free_requested;        /* freed from its own callback */
};

typedef void (*ExecJobFn)(ExecJob *j);

/* calloc of size (>= sizeof(ExecExecutor)) with ops and a reference on ev;
 * NULL when out of memory. */
void *exec_executor_new(size_t size, const AgentExecutorOps *ops, sd_event *ev);
/* Ends every job not exited with end (when not NULL), destroys each, frees x. */
void exec_executor_free(ExecExecutor *x, ExecJobFn end, ExecJobFn destroy);
/* Destroys every job, leaving the scratch directories of the running ones,
 * and frees x. */
void exec_executor_forget(ExecExecutor *x, ExecJobFn destroy);

/* calloc of size (>= sizeof(ExecJob)), pidfd -1, a copy of scratch (when
 * not NULL); NULL when out of memory. */
void *exec_job_new(size_t size, ExecExecutor *owner, const char *scratch);
/* Started: ex, on_exit and userdata set, linked into the owner's jobs. */
void exec_job_link(ExecJob *j, AgentJobExitFn on_exit, void *userdata);
/* Drops the pidfd and its event source. */
void exec_job_close_pid(ExecJob *j);
void exec_job_remove_scratch(ExecJob *j);
/* close_pid, remove_scratch, unlink: what is left is the caller's to free. */
void exec_job_release(ExecJob *j);
/* A job that did not start: close_pid, the scratch copy (not the directory:
 * agent_exec_start removes it) and j freed. */
void exec_job_discard(ExecJob *j);

/* The main process has exited (its pidfd said so): reaped with its rusage
 * into *si, *ru, the pidfd closed. 0: not yet after all (nothing done). A
 * status lost (reaped by someone else) is exit code 255. */
int exec_job_reap(ExecJob *j, siginfo_t *si, struct rusage *ru);
/* j->result from the status and rusage, max_rss_kb and the wall time. */
void exec_job_fill_exit(ExecJob *j, const siginfo_t *si, const struct rusage *ru);
/* The exit is known: calls on_exit (unless abandoned), then done (when not
 * NULL) and removes the scratch; destroys j unless kept by the callback. */
void exec_job_report(ExecJob *j, ExecJobFn done, ExecJobFn destroy);
/* agent_job_free(): true when the job stays for now (freed from its
 * callback, or running: then kill is called and it is abandoned). */
bool exec_job_free_later(ExecJob *j, ExecJobFn kill);

/* usage(): *ret = the exit report of an exited job (true). */
bool exec_job_usage_exited(ExecJob *j, AgentJobExit *ret);
/* usage() of a running job: rss_kb counted in max_rss_kb. */
void exec_job_usage_fill(ExecJob *j, double user_cpu, double sys_cpu, int64_t rss_kb, AgentJobExit *ret);

/* Reads at most size - 1 bytes of path (relative to dirfd) into buf,
 * NUL-terminated: the length (> 0), -errno, or -EIO when empty. */
ssize_t exec_read_small(int dirfd, const char *path, char *buf, size_t size);

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

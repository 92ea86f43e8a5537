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

#include "cgroup.h"
#include "exec.h"

/* How long a blocking reap of a killed job waits (executor free). */
#define AGENT_REAP_TIMEOUT_MS 5000

/* Starts the job's reaper and, from it, the job's process, and waits
 * until the job has execve()d or failed.
 *
 * The reaper (agent/exec/exec-reaper.c) is cloned from the agent: root, its
 * own session, every signal blocked, every fd but the error pipe closed.
 * It forks the job and waits for it (exec_reaper_main). The job (system
 * calls only: no malloc, no stdio) resets every signal to its default,
 * creates its own session and process group, closes every fd but 0-2 and
 * the error pipe, drops privileges when root (setgroups, setresgid,
 * setresuid, raw calls), sets PR_SET_NO_NEW_PRIVS and the umask (spec's, else 022),
 * chdir(iwd), opens in/out/err as the job user, unblocks every signal and
 * execs. The reaper sends the job's pid through the close-on-exec pipe; a
 * failure before exec (the reaper's or the job's) is written there as
 * (step, errno) and becomes this function's error, with
 * agent_executor_last_error() naming the step.
 *
 * cgroup_fd < 0: clone3(CLONE_PIDFD), fork + pidfd_open where clone3 is
 * refused. cgroup_fd >= 0 (an O_PATH or directory fd of a cgroup v2,
 * cgroup_path its path for messages): clone3(CLONE_INTO_CGROUP |
 * CLONE_PIDFD), so the reaper, and the job after it, are in that cgroup
 * from their first instruction; where clone3 is refused (ENOSYS, EPERM
 * from a seccomp filter) fork, and the reaper writes itself into
 * cgroup.procs before it does anything else, failing the start if it
 * cannot.
 *
 * On success *ret is filled: the job's pid, the reaper's pid and pidfd
 * (close-on-exec; the process to wait for: our child). On failure nothing
 * is left running (the reaper is killed and reaped, spec->exit_file
 * removed). */
typedef struct ExecStarted {
        pid_t pid;             /* the job */
        pid_t reaper_pid;
        int reaper_pidfd;
} ExecStarted;
int agent_child_start(AgentExecutor *ex, const AgentJobSpec *spec, int cgroup_fd, const char *cgroup_path,
                      uint64_t token, ExecStarted *ret);

typedef struct ExecJob ExecJob;

/* ---- the reaper (exec-reaper.c) ---- */

/* The reaper, in the cloned child: never returns. errfd: the error pipe's
 * write end; join_cgroup_fd >= 0: join that cgroup first (fork fallback);
 * agent: the agent's pid. The job ends with the agent (PR_SET_PDEATHSIG)
 * until agent_job_keep() tells the reaper otherwise; the job dies with its
 * reaper, always.
 * Its exit status mirrors the job's: the same exit code; killed by a
 * signal, the same signal raised on itself (no core dump; 128 + signal
 * should it survive it). */
_Noreturn void exec_reaper_main(const AgentJobSpec *spec, int errfd, int join_cgroup_fd, pid_t agent,
                                uint64_t token);
/* What agent_job_keep() sends the reaper (sigqueue, the token's low 32
 * bits), and the reaper's parent-death signal: the first must be the lower
 * (real-time signals are taken lowest first). */
#define EXEC_SIG_KEEP (SIGRTMIN + 2)
#define EXEC_SIG_AGENT_DIED (SIGRTMIN + 3)

/* The exit file's size (one record, padded with newlines) and format
 * (exec-reaper.c). */
#define EXIT_FILE_RECORD 512
#define EXIT_FILE_MAX 1024
#define EXIT_FILE_VERSION 1

/* ---- reaper-core.c: libc only (glean-reaper links it alone) ---- */

/* The claim's lease as the reaper knows it: seconds (<= 0: none, the job
 * is never killed for it) and the slot's state file, whose mtime is the
 * claim's last keep-alive (agent/daemon/adopt.c). */
typedef struct ExecLease {
        int64_t seconds;
        const char *state_file;
} ExecLease;

/* The reaper's life once the job runs (pid, its child): waits for it and
 * for the agent's word (agent_job_keep) or death, kills what is left of
 * the job's group, reaps the job, writes exit_file (NULL: none; not when
 * the agent died before its word: the job was ended then) and exits
 * mirroring the job's status. After the agent's death with its word, the
 * job is killed once lease ran out (lease NULL: never). Every signal must
 * be blocked. */
_Noreturn void exec_reaper_finish(pid_t pid, pid_t agent, uint64_t token, const char *exit_file,
                                  const ExecLease *lease);
/* Blocks every signal, glibc's own two included (the raw call). */
void exec_block_all_signals(void);
/* FNV-1a of the record's lines before "sum". */
uint32_t exec_exit_file_sum(const char *buf, size_t n);
/* v in base 10 or 16 into buf, NUL-terminated (no locale, no allocation). */
void exec_fmt_u64(char *buf, size_t size, uint64_t v, unsigned base);

/* Writes the exit file path (system calls only: the reaper's): the job id
 * (id->pid, id->reaper_pid, id->token), code and status (si_code and
 * si_status of its end) and its rusage; one record in place, with its
 * checksum (no fsync: see reaper-core.c). */
int exec_exit_file_write(const char *path, const AgentJobId *id, int code, int status, const struct rusage *ru);
/* Field 22 of /proc/PID/stat (start time, clock ticks since boot): 0 and
 * *ret, -errno (-ESRCH: no such process). */
int exec_proc_start(pid_t pid, uint64_t *ret);
/* The same, and the parent's pid (may be NULL). */
int exec_proc_stat(pid_t pid, uint64_t *ret_start, pid_t *ret_ppid);
/* A pidfd for pid if it is still the process that started at start
 * (start == 0: not checked); -ESRCH if it is gone or the pid is another
 * process's now, another -errno when it cannot be told. */
int exec_pin(pid_t pid, uint64_t start);
/* A random token for a new job (never 0). */
uint64_t exec_new_token(void);
/* The exit file's status into j->result (read with j's identity): true when
 * it could be used; false, logged with why (but a missing file), when not. */
bool exec_job_read_exit_file(ExecJob *j);

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
        int pidfd;                  /* the reaper (the job's main process when adopted with no reaper
                                     * known), -1 once reaped */
        pid_t reaper_pid;           /* 0: none known */
        uint64_t reaper_start;      /* /proc start times, 0 until read (agent_job_id) */
        uint64_t job_start;
        uint64_t token;             /* what the reaper writes in the exit file */
        char *exit_file;            /* a copy of spec->exit_file, or NULL */
        bool kept;                  /* the reaper outlives the agent (agent_job_keep, or adopted) */
        sd_event_source *pid_source;
        AgentJobExitFn on_exit;
        void *userdata;
        char *scratch;              /* NULL once removed */
        Cg *leaf;                   /* fork executor: the job's cgroup v2 leaf (NULL: its process group only) */
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

/* calloc of size (>= sizeof(ExecJob)), pidfd -1, copies of spec's scratch
 * and exit_file (when not NULL); NULL when out of memory. */
void *exec_job_new(size_t size, ExecExecutor *owner, const AgentJobSpec *spec);
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

/* The reaper has exited (its pidfd said so): reaped with its rusage (the
 * job's included) into *si, *ru, the pidfd closed. 0: not yet after all
 * (nothing done). A status lost (reaped by someone else) is exit code 255. */
int exec_job_reap(ExecJob *j, siginfo_t *si, struct rusage *ru);
/* j->result from the exit file when it can be used, else from the
 * reaper's status and rusage (which mirror the job's); max_rss_kb and the
 * wall time. */
void exec_job_fill_exit(ExecJob *j, const siginfo_t *si, const struct rusage *ru);
/* CLOCK_MONOTONIC of a CLOCK_REALTIME instant in the past (clamped to now
 * and to the boot); wall <= 0: now. */
void exec_mono_of_wall(double wall, struct timespec *ret);
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

typedef struct CgRoot CgRoot;
/* Whether <base>/slots/<rel> exists (1) or not (0), never creating it;
 * -EINVAL for a path with an absolute start or a "."/".." component
 * (cg_open() checks the rest). exec-cgroup-cleanup.c. */
int exec_cgroup_exists(CgRoot *root, const char *rel);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reaper-core.c — the job's reaper at work, once the job runs: it waits
 * for the job, ends what is left of its process group, writes the exit
 * file and exits with the job's status. System calls and libc only (no
 * allocation, no logging): it runs in the agent's copy that cloned the
 * job (agent/exec/exec-child.c) or, most often, in glean-reaper
 * (agent/reaper/glean-reaper.c), a small static program the copy execs so
 * that the agent's memory is not held for the job's life.
 *
 * The exit file (its format: agent/exec/exec-reaper.c, which reads it) is one
 * record of EXIT_FILE_RECORD bytes, written in place with one pwrite (one
 * file per slot, reused: no inode made and removed per job, which costs
 * this file system more than the rest of the reaper's work). It is read
 * only once its writer has exited (the reaper's pidfd says so), and its
 * checksum refuses a record torn by a reaper killed while writing or by a
 * power loss. It is not fsync'ed: it serves an agent that restarts while
 * the machine runs on; a power loss ends the job with the machine. A flush
 * per job would cost every job a disk write (10-20 ms on a busy disk here)
 * for nothing.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "exec-internal.h"

typedef struct Out {
        char buf[EXIT_FILE_MAX];
        size_t n;
} Out;

static void out_str(Out *o, const char *s) {
        while (*s && o->n < sizeof(o->buf))
                o->buf[o->n++] = *s++;
}

static void out_num(Out *o, uint64_t v, unsigned base);

void exec_fmt_u64(char *buf, size_t size, uint64_t v, unsigned base) {
        Out o = { .n = 0 };

        out_num(&o, v, base);
        if (size == 0)
                return;
        if (o.n >= size)
                o.n = size - 1;
        memcpy(buf, o.buf, o.n);
        buf[o.n] = '\0';
}

static void out_num(Out *o, uint64_t v, unsigned base) {
        char tmp[24];
        size_t k = 0;

        do {
                tmp[k++] = "0123456789abcdef"[v % base];
                v /= base;
        } while (v);
        while (k > 0 && o->n < sizeof(o->buf))
                o->buf[o->n++] = tmp[--k];
}

static void out_line(Out *o, const char *key, uint64_t v, unsigned base) {
        out_str(o, key);
        out_str(o, " ");
        out_num(o, v, base);
        out_str(o, "\n");
}

static uint64_t tv_us(const struct timeval *tv) {
        return (uint64_t) tv->tv_sec * 1000000u + (uint64_t) tv->tv_usec;
}

uint32_t exec_exit_file_sum(const char *buf, size_t n) {
        uint32_t h = 2166136261u; /* FNV-1a */

        for (size_t i = 0; i < n; i++) {
                h ^= (unsigned char) buf[i];
                h *= 16777619u;
        }
        return h;
}

int exec_exit_file_write(const char *path, const AgentJobId *id, int code, int status, const struct rusage *ru) {
        Out o = { .n = 0 };
        struct stat st;
        ssize_t w;
        int fd, r = 0;

        out_line(&o, "glean-exit", EXIT_FILE_VERSION, 10);
        out_line(&o, "token", id->token, 16);
        out_line(&o, "job", (uint64_t) id->pid, 10);
        out_line(&o, "reaper", (uint64_t) id->reaper_pid, 10);
        out_line(&o, "code", (uint64_t) code, 10);
        out_line(&o, "status", (uint64_t) status, 10);
        out_line(&o, "utime_us", tv_us(&ru->ru_utime), 10);
        out_line(&o, "stime_us", tv_us(&ru->ru_stime), 10);
        out_line(&o, "maxrss_kb", ru->ru_maxrss > 0 ? (uint64_t) ru->ru_maxrss : 0, 10);
        out_line(&o, "sum", exec_exit_file_sum(o.buf, o.n), 16);
        out_str(&o, "end\n");
        if (o.n > EXIT_FILE_RECORD)
                return -EOVERFLOW;
        memset(o.buf + o.n, '\n', EXIT_FILE_RECORD - o.n);

        /* In place, the whole record at once: no inode made per job. */
        fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
        if (fd < 0)
                return -errno;
        do
                w = pwrite(fd, o.buf, EXIT_FILE_RECORD, 0);
        while (w < 0 && errno == EINTR);
        if (w != (ssize_t) EXIT_FILE_RECORD)
                r = w < 0 ? -errno : -EIO;
        else if (fstat(fd, &st) >= 0 && st.st_size != EXIT_FILE_RECORD && ftruncate(fd, EXIT_FILE_RECORD) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

/* The reaper's own status made the job's: its exit code, or its signal
 * raised on the reaper (no core: it may be a copy of the agent). */
static _Noreturn void reaper_mirror(int status) {
        struct rlimit none = { 0, 0 };
        sigset_t one;
        int sig;

        if (WIFEXITED(status))
                _exit(WEXITSTATUS(status));
        sig = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
        (void) setrlimit(RLIMIT_CORE, &none);
        sigemptyset(&one);
        sigaddset(&one, sig);
        (void) kill(getpid(), sig); /* pending while blocked */
        (void) sigprocmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + sig); /* a signal whose default is not to end a process */
}

/* After the agent died with the job kept: whether the claim's lease ran
 * out without word from its claimant. The state file's mtime is the
 * claim's last keep-alive (a later agent that re-adopts the job keeps
 * touching it); a file that cannot be read is no reason to kill. */
static bool lease_ran_out(const ExecLease *lease) {
        struct timespec now;
        struct stat st;

        if (!lease || lease->seconds <= 0 || !lease->state_file)
                return false;
        if (stat(lease->state_file, &st) < 0 || clock_gettime(CLOCK_REALTIME, &now) < 0)
                return false;
        return (int64_t) now.tv_sec >= (int64_t) st.st_mtime + lease->seconds;
}

/* Waits until the job has exited (not reaped: its zombie holds its
 * group's id). Meanwhile the agent's word that the job is recorded
 * (EXEC_SIG_KEEP, sigqueue'd by the agent with the token's low bits) makes
 * the job outlive the agent; the agent's death before it
 * (EXEC_SIG_AGENT_DIED, the parent-death signal) ends the job: false then.
 * Both are real-time signals, taken lowest first: a word sent before the
 * agent died is always heard before its death. The agent's death after
 * it leaves the job to its claim's lease, as HTCondor's starter does
 * without word from its shadow: from then on the reaper looks at the
 * state file every second, and kills the job once the lease ran out
 * (its end then recorded as a kill). */
static bool reaper_wait(pid_t pid, pid_t agent, uint64_t token, const ExecLease *lease) {
        bool kept = false, orphaned = false, watching = false;
        const struct timespec second = { .tv_sec = 1 };
        siginfo_t si, info;
        sigset_t set;
        int sig;

        sigemptyset(&set);
        sigaddset(&set, SIGCHLD);
        sigaddset(&set, EXEC_SIG_KEEP);
        sigaddset(&set, EXEC_SIG_AGENT_DIED);
        for (;;) {
                si.si_pid = 0;
                if (waitid(P_PID, (id_t) pid, &si, WEXITED | WNOWAIT | WNOHANG) < 0 && errno != EINTR)
                        return !orphaned;
                if (si.si_pid == pid)
                        return !orphaned;
                if (watching && lease_ran_out(lease)) {
                        watching = false; /* once: the job's exit ends the wait */
                        (void) kill(-pid, SIGKILL);
                        (void) kill(pid, SIGKILL); /* had it left its group */
                }
                sig = watching ? sigtimedwait(&set, &info, &second) : sigwaitinfo(&set, &info);
                if (sig < 0)
                        continue;
                if (info.si_signo == EXEC_SIG_KEEP && info.si_code == SI_QUEUE && info.si_pid == agent &&
                    info.si_value.sival_int == (int) (uint32_t) token) {
                        kept = true; /* the parent-death signal stays: it starts the watch */
                } else if (info.si_signo == EXEC_SIG_AGENT_DIED && getppid() != agent) {
                        if (kept) {
                                watching = lease && lease->seconds > 0 && lease->state_file;
                                continue;
                        }
                        orphaned = true;
                        (void) kill(-pid, SIGKILL);
                }
        }
}

void exec_block_all_signals(void) {
        /* The raw call: glibc's sigprocmask leaves its own two unblocked. */
        const uint64_t all = ~(uint64_t) 0;

        (void) syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, NULL, sizeof(all));
}

_Noreturn void exec_reaper_finish(pid_t pid, pid_t agent, uint64_t token, const char *exit_file,
                                  const ExecLease *lease) {
        struct rusage ru = {};
        bool recorded;
        int status = 0;
        long r;

        recorded = reaper_wait(pid, agent, token, lease);
        /* Its zombie still holds the group's id: the rest of the group goes. */
        (void) kill(-pid, SIGKILL);
        do
                r = wait4(pid, &status, 0, &ru);
        while (r < 0 && errno == EINTR);
        if (r < 0)
                _exit(255);
        if (exit_file && recorded) {
                AgentJobId id = { .pid = pid, .reaper_pid = getpid(), .token = token };
                int code = WIFEXITED(status) ? CLD_EXITED : WCOREDUMP(status) ? CLD_DUMPED : CLD_KILLED;

                (void) exec_exit_file_write(exit_file, &id, code, WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status),
                                            &ru);
        }
        reaper_mirror(status);
}

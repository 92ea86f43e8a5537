/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-child.c — starting a job's process, shared by every executor: the
 * child from clone to execve, the parent's side of the error pipe, and
 * waiting for the process.
 *
 * The agent clones the job's reaper, which forks the job: the reaper is
 * the agent's child and the job's parent, root's, in a session of its own
 * with every signal blocked (the job's user cannot signal or trace it, and
 * a signal to every process of a cgroup passes it by). It waits for the
 * job, kills what is left of the job's process group while the job's
 * zombie still holds its id, writes the exit file (exec-reaper.c) and
 * exits mirroring the job's status. So the job's real end is known even
 * when the agent that started it is gone: a new agent re-adopts the job
 * by its reaper (agent_exec_adopt_id).
 *
 * The reaper and the job only make system calls between clone and execve
 * (no malloc, no stdio, raw setgroups/setresgid/setresuid so that glibc
 * does not try to synchronise credentials with threads that exist only in
 * the parent). A failure there is written to a close-on-exec pipe as
 * (step, errno), and the reaper writes the job's pid there; the parent
 * reads the pipe to its end before returning, so a job that could not be
 * started is an error, not a job that "exits 127".
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec-internal.h"
#include "log.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#ifndef CLONE_INTO_CGROUP
#define CLONE_INTO_CGROUP 0x200000000ULL
#endif

/* The 32-bit-id versions where the plain ones take 16-bit ids. */
#ifdef SYS_setgroups32
#define SYS_SETGROUPS SYS_setgroups32
#define SYS_SETRESGID SYS_setresgid32
#define SYS_SETRESUID SYS_setresuid32
#else
#define SYS_SETGROUPS SYS_setgroups
#define SYS_SETRESGID SYS_setresgid
#define SYS_SETRESUID SYS_setresuid
#endif

/* The reaper program, "" for the agent's own copy (resolved once). */
static char reaper_path[PATH_MAX];
static bool reaper_resolved;

/* $GLEAN_REAPER ("none": the agent's own copy), else glean-reaper beside
 * the running program or in ../libexec/glean/ from it, else none. */
static void reaper_resolve(void) {
        const char *env = getenv("GLEAN_REAPER");
        char self[PATH_MAX], *slash;
        ssize_t n;

        reaper_resolved = true;
        reaper_path[0] = '\0';
        if (env && *env) {
                if (strcmp(env, "none") != 0 && realpath(env, reaper_path) && access(reaper_path, X_OK) < 0)
                        reaper_path[0] = '\0';
                if (strcmp(env, "none") != 0 && !reaper_path[0])
                        glean_log_warning("GLEAN_REAPER=%s is no program: jobs' reapers run in copies of the agent",
                                          env);
                return;
        }
        n = readlink("/proc/self/exe", self, sizeof(self) - 1);
        if (n <= 0)
                return;
        self[n] = '\0';
        slash = strrchr(self, '/');
        if (!slash)
                return;
        *slash = '\0';
        if (snprintf(reaper_path, sizeof(reaper_path), "%s/glean-reaper", self) < (int) sizeof(reaper_path) &&
            access(reaper_path, X_OK) == 0)
                return;
        if (snprintf(reaper_path, sizeof(reaper_path), "%s/../libexec/glean/glean-reaper", self) <
                    (int) sizeof(reaper_path) &&
            access(reaper_path, X_OK) == 0)
                return;
        reaper_path[0] = '\0';
}

/* ---- the child ---- */

typedef enum ChildStep {
        STEP_CGROUP,
        STEP_SETSID,
        STEP_CLOSE_FDS,
        STEP_SETGROUPS,
        STEP_SETGID,
        STEP_SETUID,
        STEP_NO_NEW_PRIVS,
        STEP_CHDIR,
        STEP_IN,
        STEP_OUT,
        STEP_ERR,
        STEP_DUP,
        STEP_EXEC,
        STEP_REAPER_FORK,
        STEP_PARENT_DEATH,
        STEP_REAPER_EXEC,
        STEP_PID,              /* not a failure: the reaper's record of the job's pid (in error) */
} ChildStep;

typedef struct ChildError {
        int step;
        int error;
} ChildError;

static _Noreturn void child_fail(int errfd, ChildStep step, int error) {
        ChildError ce = { .step = step, .error = error };

        (void) !write(errfd, &ce, sizeof(ce));
        _exit(127);
}

static int close_fds_from(unsigned from, unsigned to) {
        if (from > to)
                return 0;
        if (syscall(SYS_close_range, from, to, 0) >= 0)
                return 0;
        if (errno != ENOSYS)
                return -1;
        /* Kernels before 5.9: every possible descriptor up to the limit. */
        struct rlimit rl;
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -1;
        for (unsigned fd = from; fd <= to && (rlim_t) fd < rl.rlim_cur; fd++)
                (void) close((int) fd);
        return 0;
}

/* An fd >= 3 on path, close-on-exec (dup2 clears that on 0-2); O_NONBLOCK
 * while opening so that a FIFO cannot block start(). -1 with errno. */
static int child_open(const char *path, int flags) {
        int fd, fl;

        fd = open(path, flags | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, 0666); /* the umask decides */
        if (fd < 0)
                return -1;
        fl = fcntl(fd, F_GETFL);
        if (fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
                return -1;
        if (fd < 3) {
                int moved = fcntl(fd, F_DUPFD_CLOEXEC, 3);

                if (moved < 0)
                        return -1;
                (void) close(fd);
                fd = moved;
        }
        return fd;
}

/* Moves the calling process into the cgroup of cgroup_fd ("0" written to
 * its cgroup.procs moves the writer). -1 with errno. */
static int child_join_cgroup(int cgroup_fd) {
        int fd = openat(cgroup_fd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
        ssize_t n;

        if (fd < 0)
                return -1;
        n = write(fd, "0", 1);
        if (n < 0) {
                int e = errno;

                (void) close(fd);
                errno = e;
                return -1;
        }
        (void) close(fd);
        return 0;
}

static void reset_signals(void);

/* The job, forked by its reaper (whose signals are reset already). */
static _Noreturn void child(const AgentJobSpec *spec, int errfd, pid_t reaper) {
        int in, out, err;
        sigset_t none;

        if (setsid() < 0)
                child_fail(errfd, STEP_SETSID, errno);
        if (close_fds_from(3, (unsigned) errfd - 1) < 0 || close_fds_from((unsigned) errfd + 1, ~0U) < 0)
                child_fail(errfd, STEP_CLOSE_FDS, errno);

        if (geteuid() == 0) {
                if (syscall(SYS_SETGROUPS, spec->n_groups, spec->groups) < 0)
                        child_fail(errfd, STEP_SETGROUPS, errno);
                if (syscall(SYS_SETRESGID, spec->gid, spec->gid, spec->gid) < 0)
                        child_fail(errfd, STEP_SETGID, errno);
                if (syscall(SYS_SETRESUID, spec->uid, spec->uid, spec->uid) < 0)
                        child_fail(errfd, STEP_SETUID, errno);
        }
        if (getuid() != spec->uid || geteuid() != spec->uid || geteuid() == 0)
                child_fail(errfd, STEP_SETUID, EPERM);
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                child_fail(errfd, STEP_NO_NEW_PRIVS, errno);
        /* Its reaper gone (killed: only root can), the job goes too. After
         * the change of credentials, which would clear it. */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
                child_fail(errfd, STEP_PARENT_DEATH, errno);
        if (getppid() != reaper)
                child_fail(errfd, STEP_PARENT_DEATH, ESRCH);
        /* The owner's umask (the job ad's Umask), else 022: the job's
         * output files, opened below, are made with it too. */
        (void) umask(spec->has_umask ? (spec->umask & 0777) : 022);

        if (chdir(spec->iwd) < 0)
                child_fail(errfd, STEP_CHDIR, errno);
        in = child_open(spec->in ? spec->in : "/dev/null", O_RDONLY);
        if (in < 0)
                child_fail(errfd, STEP_IN, errno);
        out = child_open(spec->out ? spec->out : "/dev/null", O_WRONLY | (spec->out ? O_CREAT | O_TRUNC : 0));
        if (out < 0)
                child_fail(errfd, STEP_OUT, errno);
        if (spec->err && spec->out && strcmp(spec->err, spec->out) == 0)
                err = out; /* one file, one offset */
        else
                err = child_open(spec->err ? spec->err : "/dev/null", O_WRONLY | (spec->err ? O_CREAT | O_TRUNC : 0));
        if (err < 0)
                child_fail(errfd, STEP_ERR, errno);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
                child_fail(errfd, STEP_DUP, errno);

        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        execve(spec->argv[0], spec->argv, spec->envp);
        child_fail(errfd, STEP_EXEC, errno);
}

static void reset_signals(void) {
        /* An all-zero kernel sigaction is SIG_DFL, no flags, empty mask,
         * whatever the field order of the architecture. The raw call also
         * resets the signals glibc keeps for itself (32, 33), which an
         * ignoring parent (make, for one) would otherwise pass on. */
        unsigned long kernel_sa[16] = {};

        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) syscall(SYS_rt_sigaction, sig, kernel_sa, NULL, (size_t) (NSIG - 1) / 8);
}

typedef struct JobArgs {
        const AgentJobSpec *spec;
        int errfd;
        pid_t reaper;
} JobArgs;

/* Room for child() and the system calls it makes before execve. */
#define JOB_STACK_SIZE (64 * 1024)

/* Clones that share memory run on stacks of our own, which
 * AddressSanitizer cannot follow: under it, plain forks (slower, the same
 * otherwise). */
#if defined(__SANITIZE_ADDRESS__)
#define SHARED_CLONES 0
#else
#define SHARED_CLONES 1
#endif

static int job_main(void *userdata) {
        JobArgs *a = userdata;

        child(a->spec, a->errfd, a->reaper);
}

_Noreturn void exec_reaper_main(const AgentJobSpec *spec, int errfd, int join_cgroup_fd, pid_t agent,
                                uint64_t token) {
        ChildError rec = { .step = STEP_PID };
        /* The job's stack until it execs, in the reaper's own. */
        char job_stack[JOB_STACK_SIZE] __attribute__((aligned(16)));
        JobArgs job_args;
        int null;
        pid_t pid;

        /* Every signal stays blocked (the parent blocked them around the
         * clone): SIGTERM to every process of the job's cgroup, or a
         * terminal's SIGINT, must not end the reaper before the job. */
        exec_block_all_signals();
        reset_signals();
        if (join_cgroup_fd >= 0 && child_join_cgroup(join_cgroup_fd) < 0)
                child_fail(errfd, STEP_CGROUP, errno);
        /* Until the agent has recorded the job (agent_job_keep), nobody could
         * re-adopt it: it ends with the agent. */
        if (prctl(PR_SET_PDEATHSIG, EXEC_SIG_AGENT_DIED, 0, 0, 0) < 0)
                child_fail(errfd, STEP_PARENT_DEATH, errno);
        if (getppid() != agent)
                child_fail(errfd, STEP_PARENT_DEATH, ESRCH);
        if (setsid() < 0)
                child_fail(errfd, STEP_SETSID, errno);
        if (close_fds_from(3, (unsigned) errfd - 1) < 0 || close_fds_from((unsigned) errfd + 1, ~0U) < 0)
                child_fail(errfd, STEP_CLOSE_FDS, errno);
        (void) prctl(PR_SET_NAME, "glean-reaper", 0, 0, 0);
        /* Not traceable, no core: per memory, so glean-reaper does it when
         * there is one (this may be the agent's memory still). */
        if (!reaper_path[0])
                (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        /* Not the agent's standard files: a reaper that outlives the agent
         * must not hold its journal stream or a pipe someone reads to the end. */
        null = open("/dev/null", O_RDWR | O_CLOEXEC | O_NOCTTY);
        if (null >= 0) {
                for (int fd = 0; fd < 3; fd++)
                        if (fd != null)
                                (void) dup2(null, fd);
                if (null > 2)
                        (void) close(null);
        }

        /* The job shares the reaper's memory until its exec (posix_spawn's
         * way: no second copy of the agent's page tables); the reaper waits
         * for that here. */
        job_args = (JobArgs) { .spec = spec, .errfd = errfd, .reaper = getpid() };
        if (SHARED_CLONES)
                pid = clone(job_main, job_stack + sizeof(job_stack), CLONE_VM | CLONE_VFORK | SIGCHLD, &job_args);
        else if ((pid = fork()) == 0)
                child(spec, errfd, job_args.reaper);
        if (pid < 0)
                child_fail(errfd, STEP_REAPER_FORK, errno);
        rec.error = pid;
        (void) !write(errfd, &rec, sizeof(rec));
        if (reaper_path[0]) {
                /* The reaper proper: a small program of its own, so that the copy
                 * of the agent's memory goes now (an agent writing to pages a
                 * long-lived copy shares would copy them at every job). */
                char agent_s[24], job_s[24], token_s[24], lease_s[24];
                char *argv[] = { "glean-reaper", agent_s, job_s, token_s, (char *) (spec->exit_file ? spec->exit_file : "-"),
                                 lease_s, (char *) (spec->lease_file ? spec->lease_file : "-"), NULL };
                char *envp[] = { NULL };

                exec_fmt_u64(agent_s, sizeof(agent_s), (uint64_t) agent, 10);
                exec_fmt_u64(job_s, sizeof(job_s), (uint64_t) pid, 10);
                exec_fmt_u64(token_s, sizeof(token_s), token, 16);
                exec_fmt_u64(lease_s, sizeof(lease_s),
                             spec->lease > 0 ? (uint64_t) (spec->lease > INT32_MAX ? INT32_MAX : spec->lease) : 0, 10);
                execve(reaper_path, argv, envp);
                rec = (ChildError) { .step = STEP_REAPER_EXEC, .error = errno };
                (void) kill(-pid, SIGKILL);
                (void) !write(errfd, &rec, sizeof(rec));
                _exit(127);
        }
        (void) close(errfd);
        /* stdin/stdout/stderr are /dev/null: nothing of the reaper's goes anywhere. */
        {
                ExecLease lease = { spec->lease, spec->lease_file };

                exec_reaper_finish(pid, agent, token, spec->exit_file, &lease);
        }
}

/* The reaper sharing the agent's memory until it execs glean-reaper
 * (CLONE_VM | CLONE_VFORK, on a stack of its own, as posix_spawn does):
 * no copy of the agent's page tables to make and drop for each job; the
 * agent is suspended meanwhile, as it would wait for the job's exec anyway.
 * Only with glean-reaper to exec (the copy must not live on in the agent's
 * memory) and without a cgroup to clone into (clone3 with CLONE_VM needs
 * a stack switch no C wrapper offers). -1 with errno when clone refuses:
 * then spawn(). */
typedef struct SharedArgs {
        const AgentJobSpec *spec;
        int errfd;
        pid_t agent;
        uint64_t token;
} SharedArgs;

#define REAPER_STACK_SIZE (256 * 1024)
static char reaper_stack[REAPER_STACK_SIZE] __attribute__((aligned(64)));

static int shared_main(void *userdata) {
        SharedArgs *a = userdata;

        exec_reaper_main(a->spec, a->errfd, -1, a->agent, a->token);
}

static pid_t spawn_shared(const AgentJobSpec *spec, int errfd, pid_t agent, uint64_t token, int *ret_pidfd) {
        SharedArgs args = { .spec = spec, .errfd = errfd, .agent = agent, .token = token };
        int pidfd = -1, dumpable, e;
        pid_t pid;

        dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
        pid = clone(shared_main, reaper_stack + sizeof(reaper_stack), CLONE_VM | CLONE_VFORK | CLONE_PIDFD | SIGCHLD,
                    &args, &pidfd);
        e = errno;
        /* The job's change of user, made in this memory, marked it not
         * dumpable (fs.suid_dumpable): the agent's again, as it was. */
        if (dumpable >= 0 && prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != dumpable)
                (void) prctl(PR_SET_DUMPABLE, dumpable, 0, 0, 0);
        errno = e;
        if (pid < 0)
                return -1;
        *ret_pidfd = pidfd;
        return pid;
}

/* clone3(CLONE_PIDFD [| CLONE_INTO_CGROUP]), or fork + pidfd_open where
 * clone3 is not allowed (*ret_forked then: the child must join its cgroup
 * itself). Returns 0 in the child, the pid in the parent, -1 with errno. */
static pid_t spawn(int cgroup_fd, int *ret_pidfd, bool *ret_forked) {
        struct clone_args args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = SIGCHLD,
        };
        pid_t pid;
        int e;

        *ret_forked = false;
        if (cgroup_fd >= 0) {
                args.flags |= CLONE_INTO_CGROUP;
                args.cgroup = (uint64_t) cgroup_fd;
        }
        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        /* E2BIG: a clone3 that predates the cgroup field (5.3-5.6). */
        if (pid >= 0 || (errno != ENOSYS && errno != EPERM && !(cgroup_fd >= 0 && errno == E2BIG)))
                return pid;
        *ret_forked = true;
        pid = fork();
        if (pid <= 0)
                return pid;
        *ret_pidfd = pidfd_open(pid, 0);
        if (*ret_pidfd >= 0)
                return pid;
        e = errno;
        (void) kill(pid, SIGKILL);
        (void) waitpid(pid, NULL, 0);
        errno = e;
        return -1;
}

/* ---- the parent ---- */

double agent_elapsed_since(const struct timespec *t0) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double) (now.tv_sec - t0->tv_sec) + (double) (now.tv_nsec - t0->tv_nsec) / 1e9;
}

double agent_tv_seconds(const struct timeval *tv) {
        return (double) tv->tv_sec + (double) tv->tv_usec / 1e6;
}

/* fd moved to >= 3 (keeping close-on-exec), so the child can keep it
 * apart from its standard files. */
static int fd_move_up(int *fd) {
        int moved;

        if (*fd >= 3)
                return 0;
        moved = fcntl(*fd, F_DUPFD_CLOEXEC, 3);
        if (moved < 0)
                return -errno;
        close(*fd);
        *fd = moved;
        return 0;
}

int agent_wait_job(int pidfd, pid_t pid, int flags, siginfo_t *si, struct rusage *ru) {
        long r;

        do
                r = syscall(SYS_waitid, P_PIDFD, pidfd, si, WEXITED | flags, ru);
        while (r < 0 && errno == EINTR);
        if (r < 0 && errno == EINVAL) {
                do
                        r = syscall(SYS_waitid, P_PID, pid, si, WEXITED | flags, ru);
                while (r < 0 && errno == EINTR);
        }
        return r < 0 ? -errno : 0;
}

void agent_reap_now(int pidfd, pid_t pid, int timeout_ms) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        siginfo_t si = {};
        struct rusage ru;

        if (poll(&p, 1, timeout_ms) <= 0)
                return; /* left to init when we exit */
        (void) agent_wait_job(pidfd, pid, WNOHANG, &si, &ru);
}

void agent_exit_status(AgentJobExit *ex, const siginfo_t *si) {
        ex->by_signal = false;
        ex->exit_code = 0;
        ex->signal = 0;
        ex->core_dumped = false;
        switch (si->si_code) {
        case CLD_EXITED:
                ex->exit_code = si->si_status;
                break;
        case CLD_KILLED:
        case CLD_DUMPED:
                ex->by_signal = true;
                ex->signal = si->si_status;
                ex->core_dumped = si->si_code == CLD_DUMPED;
                break;
        default:
                ex->exit_code = -1; /* should not happen with WEXITED */
        }
}

static const char *step_what(ChildStep step) {
        switch (step) {
        case STEP_CGROUP: return "join its cgroup";
        case STEP_SETSID: return "create its session";
        case STEP_CLOSE_FDS: return "close inherited descriptors";
        case STEP_SETGROUPS: return "set its supplementary groups";
        case STEP_SETGID: return "set its group id";
        case STEP_SETUID: return "set its user id";
        case STEP_NO_NEW_PRIVS: return "set no_new_privs";
        case STEP_CHDIR: return "change to its initial directory";
        case STEP_IN: return "open its input";
        case STEP_OUT: return "open its output";
        case STEP_ERR: return "open its error output";
        case STEP_DUP: return "set up its standard files";
        case STEP_EXEC: return "execute";
        case STEP_REAPER_FORK: return "fork the job from its reaper";
        case STEP_PARENT_DEATH: return "tie its life to its parent's";
        case STEP_REAPER_EXEC: return "execute the job's reaper";
        case STEP_PID: return "start";
        }
        return "start";
}

/* Whose side a failed step is on (agent_executor_last_failure). */
static AgentStartFailure step_failure(ChildStep step) {
        switch (step) {
        case STEP_CHDIR: return AGENT_START_IWD;
        case STEP_IN: return AGENT_START_INPUT;
        case STEP_OUT: return AGENT_START_OUTPUT;
        case STEP_ERR: return AGENT_START_ERROR;
        case STEP_EXEC: return AGENT_START_EXEC;
        case STEP_SETGROUPS:
        case STEP_SETGID:
        case STEP_SETUID: return AGENT_START_ACCOUNT;
        default: return AGENT_START_OTHER;
        }
}

static const char *step_path(const AgentJobSpec *spec, const char *cgroup_path, ChildStep step) {
        switch (step) {
        case STEP_CGROUP: return cgroup_path;
        case STEP_CHDIR: return spec->iwd;
        case STEP_IN: return spec->in ? spec->in : "/dev/null";
        case STEP_OUT: return spec->out ? spec->out : "/dev/null";
        case STEP_ERR: return spec->err ? spec->err : "/dev/null";
        case STEP_EXEC: return spec->argv[0];
        case STEP_REAPER_EXEC: return reaper_path;
        default: return NULL;
        }
}

int agent_child_start(AgentExecutor *ex, const AgentJobSpec *spec, int cgroup_fd, const char *cgroup_path,
                      uint64_t token, ExecStarted *ret) {
        int pipefd[2] = { -1, -1 }, pidfd = -1, r;
        ChildError ce = {}, failure = {};
        bool forked = false, failed = false, torn = false;
        pid_t pid, job = 0, agent;
        sigset_t all, old;
        ssize_t n;

        if (!reaper_resolved) {
                reaper_resolve();
                glean_log_info("job reapers: %s", reaper_path[0] ? reaper_path : "copies of the agent (no glean-reaper)");
        }
        if (pipe2(pipefd, O_CLOEXEC) < 0 || fd_move_up(&pipefd[0]) < 0 || fd_move_up(&pipefd[1]) < 0) {
                r = -errno;
                goto out;
        }

        /* No handler of ours may run in the reaper; it keeps them blocked. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        agent = getpid();
        pid = -1;
        if (SHARED_CLONES && cgroup_fd < 0 && reaper_path[0])
                pid = spawn_shared(spec, pipefd[1], agent, token, &pidfd);
        if (pid < 0) {
                pid = spawn(cgroup_fd, &pidfd, &forked);
                if (pid == 0)
                        exec_reaper_main(spec, pipefd[1], forked ? cgroup_fd : -1, agent, token);
        }
        r = pid < 0 ? -errno : 0;
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pipefd[1]);
        pipefd[1] = -1;
        if (r < 0) {
                if (cgroup_fd >= 0)
                        agent_exec_error(ex, r, "cannot create the process for '%s' in cgroup %s: %s", spec->argv[0],
                                         cgroup_path ? cgroup_path : "?", strerror(-r));
                else
                        agent_exec_error(ex, r, "cannot create the process for '%s': %s", spec->argv[0],
                                         strerror(-r));
                goto out;
        }

        /* To the end: the reaper's record of the job's pid, perhaps a
         * failure (the reaper's or the job's), then the job's exec closes
         * the last write end. */
        for (;;) {
                do
                        n = read(pipefd[0], &ce, sizeof(ce));
                while (n < 0 && errno == EINTR);
                if (n == 0)
                        break;
                if (n != (ssize_t) sizeof(ce)) {
                        torn = true;
                        break;
                }
                if (ce.step == STEP_PID)
                        job = (pid_t) ce.error;
                else if (!failed) {
                        failed = true;
                        failure = ce;
                }
        }
        if (failed || torn || job <= 0) {
                const char *path;

                /* Before it writes the exit file of a job that never was, if it can. */
                (void) pidfd_send_signal(pidfd, SIGKILL, NULL, 0);
                agent_reap_now(pidfd, pid, -1);
                close(pidfd);
                if (spec->exit_file)
                        (void) unlink(spec->exit_file);
                if (!failed) {
                        r = agent_exec_error(ex, -EIO, "cannot start '%s': lost track of the new process",
                                             spec->argv[0]);
                        goto out;
                }
                r = failure.error > 0 ? -failure.error : -EIO;
                path = step_path(spec, cgroup_path, (ChildStep) failure.step);
                agent_exec_error(ex, r, "cannot %s%s%s%s as %s (uid %u): %s", step_what((ChildStep) failure.step),
                                 path ? " '" : "", path ? path : "", path ? "'" : "", spec->user ? spec->user : "?",
                                 (unsigned) spec->uid, strerror(-r));
                if (ex)
                        ex->last_failure = step_failure((ChildStep) failure.step);
                goto out;
        }
        *ret = (ExecStarted) { .pid = job, .reaper_pid = pid, .reaper_pidfd = pidfd };
        r = 0;
out:
        if (pipefd[0] >= 0)
                close(pipefd[0]);
        if (pipefd[1] >= 0)
                close(pipefd[1]);
        return r;
}

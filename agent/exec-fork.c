/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-fork.c — the plain executor: a job is a process in a session and
 * process group of its own, started with clone3(CLONE_PIDFD), watched and
 * reaped through its pidfd from the sd-event loop.
 *
 * The child only makes system calls between clone and execve (no malloc,
 * no stdio, raw setgroups/setresgid/setresuid so that glibc does not try to
 * synchronise credentials with threads that exist only in the parent). A
 * failure there is written to a close-on-exec pipe as (step, errno); the
 * parent reads it before start() returns, so a job that could not be
 * started is an error, not a job that "exits 127".
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
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
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

#include "exec.h"

#ifndef P_PIDFD
#define P_PIDFD 3
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

/* How long agent_executor_free() waits for a killed job to be gone. */
#define REAP_TIMEOUT_MS 5000

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

/* ---- the child ---- */

typedef enum ChildStep {
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

        fd = open(path, flags | O_NOCTTY | O_CLOEXEC | O_NONBLOCK, 0644);
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

static _Noreturn void child(const AgentJobSpec *spec, int errfd) {
        /* An all-zero kernel sigaction is SIG_DFL, no flags, empty mask,
         * whatever the field order of the architecture. The raw call also
         * resets the signals glibc keeps for itself (32, 33), which an
         * ignoring parent (make, for one) would otherwise pass on. */
        unsigned long kernel_sa[16] = {};
        int in, out, err;
        sigset_t none;

        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) syscall(SYS_rt_sigaction, sig, kernel_sa, NULL, (size_t) (NSIG - 1) / 8);

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
        (void) umask(022);

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

/* clone3(CLONE_PIDFD), or fork + pidfd_open where clone3 is not allowed.
 * Returns 0 in the child, the pid in the parent, -1 with errno. */
static pid_t spawn(int *ret_pidfd) {
        struct clone_args args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) ret_pidfd,
                .exit_signal = SIGCHLD,
        };
        pid_t pid;
        int e;

        pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid >= 0 || (errno != ENOSYS && errno != EPERM))
                return pid;
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

static double elapsed_since(const struct timespec *t0) {
        struct timespec now;

        clock_gettime(CLOCK_MONOTONIC, &now);
        return (double) (now.tv_sec - t0->tv_sec) + (double) (now.tv_nsec - t0->tv_nsec) / 1e9;
}

static double tv_seconds(const struct timeval *tv) {
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

/* waitid(P_PIDFD) with the rusage argument glibc's wrapper lacks.
 * Falls back to P_PID on kernels without P_PIDFD. */
static int wait_job(int pidfd, pid_t pid, int flags, siginfo_t *si, struct rusage *ru) {
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

/* Blocking reap of a child that is exiting or was killed, bounded. */
static void reap_now(int pidfd, pid_t pid, int timeout_ms) {
        struct pollfd p = { .fd = pidfd, .events = POLLIN };
        siginfo_t si = {};
        struct rusage ru;

        if (poll(&p, 1, timeout_ms) <= 0)
                return; /* left to init when we exit */
        (void) wait_job(pidfd, pid, WNOHANG, &si, &ru);
}

static const char *step_what(ChildStep step) {
        switch (step) {
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
        }
        return "start";
}

static const char *step_path(const AgentJobSpec *spec, ChildStep step) {
        switch (step) {
        case STEP_CHDIR: return spec->iwd;
        case STEP_IN: return spec->in ? spec->in : "/dev/null";
        case STEP_OUT: return spec->out ? spec->out : "/dev/null";
        case STEP_ERR: return spec->err ? spec->err : "/dev/null";
        case STEP_EXEC: return spec->argv[0];
        default: return NULL;
        }
}

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
        ex->user_cpu = tv_seconds(&ru->ru_utime);
        ex->sys_cpu = tv_seconds(&ru->ru_stime);
        ex->max_rss_kb = ru->ru_maxrss > j->max_rss_kb ? ru->ru_maxrss : j->max_rss_kb;
        ex->wall_time = elapsed_since(&j->started);
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
        r = wait_job(j->pidfd, j->base.pid, WNOHANG, &si, &ru);
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
        int pipefd[2] = { -1, -1 }, pidfd = -1, r;
        sigset_t all, old;
        ChildError ce = {};
        ForkJob *j;
        ssize_t n;
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
        if (pipe2(pipefd, O_CLOEXEC) < 0 || fd_move_up(&pipefd[0]) < 0 || fd_move_up(&pipefd[1]) < 0) {
                r = -errno;
                goto fail;
        }

        /* No handler of ours may run in the child before it resets them. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        pid = spawn(&pidfd);
        if (pid == 0)
                child(spec, pipefd[1]);
        r = pid < 0 ? -errno : 0;
        sigprocmask(SIG_SETMASK, &old, NULL);
        close(pipefd[1]);
        pipefd[1] = -1;
        if (r < 0) {
                agent_exec_error(ex, r, "cannot create the process for '%s': %s", spec->argv[0], strerror(-r));
                goto fail;
        }
        clock_gettime(CLOCK_MONOTONIC, &j->started);

        do
                n = read(pipefd[0], &ce, sizeof(ce));
        while (n < 0 && errno == EINTR);
        if (n != 0) {
                const char *path;

                reap_now(pidfd, pid, -1); /* it is _exit()ing */
                close(pidfd);
                if (n != (ssize_t) sizeof(ce)) {
                        r = agent_exec_error(ex, -EIO, "cannot start '%s': lost track of the new process",
                                             spec->argv[0]);
                        goto fail;
                }
                r = ce.error > 0 ? -ce.error : -EIO;
                path = step_path(spec, (ChildStep) ce.step);
                agent_exec_error(ex, r, "cannot %s%s%s%s as %s (uid %u): %s", step_what((ChildStep) ce.step),
                                 path ? " '" : "", path ? path : "", path ? "'" : "", spec->user ? spec->user : "?",
                                 (unsigned) spec->uid, strerror(-r));
                goto fail;
        }

        j->pidfd = pidfd;
        j->base.pid = pid;
        r = sd_event_add_io(fx->event, &j->source, pidfd, EPOLLIN, on_pidfd, j);
        if (r < 0) {
                (void) kill(-pid, SIGKILL);
                reap_now(pidfd, pid, REAP_TIMEOUT_MS);
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
        if (pipefd[0] >= 0)
                close(pipefd[0]);
        *ret = &j->base;
        return 0;

fail:
        if (pipefd[0] >= 0)
                close(pipefd[0]);
        if (pipefd[1] >= 0)
                close(pipefd[1]);
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
                .wall_time = elapsed_since(&j->started),
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
                        reap_now(j->pidfd, j->base.pid, REAP_TIMEOUT_MS);
                }
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

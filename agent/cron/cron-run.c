/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cron-run.c — one run of a startd cron job: forked from the agent (so in
 * the agent's own cgroup, never a slot's), in a process group of its own,
 * under an account that is not root, stdin /dev/null, stdout into the
 * output parser and stderr into a bounded buffer as they come (non-blocking
 * pipes watched by sd-event), the end seen from a pidfd. When the main
 * process exits, what its pipes still hold is read, the rest of its
 * process group is killed and the exit reported.
 */
#define _GNU_SOURCE 1
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/users.h"
#include "cron.h"

struct AgentCronRun {
        sd_event *e;
        pid_t pid;
        int pidfd, out_fd, err_fd;
        sd_event_source *pid_src, *out_src, *err_src, *kill_timer;
        AgentCronParser *parser;
        char err[AGENT_CRON_MAX_STDERR + 1];
        size_t err_len;
        bool killed, reaped;
        AgentCronRunFns fns;
        void *userdata;
};

int agent_cron_cred(const char *user, AgentCronCred *ret, char **buf, char *why, size_t whylen) {
        struct passwd pw;
        *buf = NULL;
        if (geteuid() != 0) {
                int r = glean_getpwuid(geteuid(), &pw, buf);
                *ret = (AgentCronCred){ .change = false, .uid = geteuid(), .gid = getegid(),
                                        .home = r > 0 ? pw.pw_dir : "/", .user = r > 0 ? pw.pw_name : "" };
                return 0;
        }
        if (!user)
                user = "nobody";
        int r = glean_getpwnam(user, &pw, buf); /* 1 found, 0 not */
        if (r == 0)
                r = -ENOENT;
        if (r < 0) {
                free(*buf);
                *buf = NULL;
                snprintf(why, whylen, "STARTD_CRON_USER %s: %s", user, r == -ENOENT ? "no such user" : strerror(-r));
                return r;
        }
        if (pw.pw_uid == 0 || pw.pw_gid == 0) {
                snprintf(why, whylen, "STARTD_CRON_USER %s: uid or gid 0; cron jobs never run as root", user);
                free(*buf);
                *buf = NULL;
                return -EPERM;
        }
        *ret = (AgentCronCred){ .change = true, .uid = pw.pw_uid, .gid = pw.pw_gid, .home = pw.pw_dir,
                                .user = pw.pw_name };
        return 0;
}

pid_t agent_cron_run_pid(const AgentCronRun *r) {
        return r->pid;
}

static void emit_ad(void *userdata, AgentCronAd *ad) {
        AgentCronRun *r = userdata;
        if (r->fns.ad)
                r->fns.ad(r->userdata, ad);
        else
                agent_cron_ad_free(ad);
}

static void kill_group(AgentCronRun *r, int sig) {
        if (r->pid > 0)
                (void) kill(-r->pid, sig);
}

/* Read what fd holds now; false at its end (EOF or an error). */
static bool drain_out(AgentCronRun *r) {
        char buf[16384];
        for (;;) {
                ssize_t n = read(r->out_fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return true;
                if (n <= 0)
                        return false;
                if (agent_cron_parser_feed(r->parser, buf, (size_t) n) == -E2BIG) {
                        /* Past the limit: the run is ended, its output closed. */
                        r->killed = true;
                        kill_group(r, SIGKILL);
                        return false;
                }
        }
}

static bool drain_err(AgentCronRun *r) {
        char buf[4096];
        for (;;) {
                ssize_t n = read(r->err_fd, buf, sizeof buf);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return true;
                if (n <= 0)
                        return false;
                size_t room = AGENT_CRON_MAX_STDERR - r->err_len, k = (size_t) n < room ? (size_t) n : room;
                memcpy(r->err + r->err_len, buf, k);
                r->err_len += k;
                r->err[r->err_len] = 0;
        }
}

static void close_out(AgentCronRun *r) {
        r->out_src = sd_event_source_disable_unref(r->out_src);
        if (r->out_fd >= 0)
                close(r->out_fd);
        r->out_fd = -1;
}

static void close_err(AgentCronRun *r) {
        r->err_src = sd_event_source_disable_unref(r->err_src);
        if (r->err_fd >= 0)
                close(r->err_fd);
        r->err_fd = -1;
}

static int on_out(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents;
        AgentCronRun *r = userdata;
        if (!drain_out(r))
                close_out(r);
        return 0;
}

static int on_err(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents;
        AgentCronRun *r = userdata;
        if (!drain_err(r))
                close_err(r);
        return 0;
}

static int on_exit_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void) s, (void) fd, (void) revents;
        AgentCronRun *r = userdata;
        siginfo_t si = { 0 };
        if (waitid(P_PID, (id_t) r->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
                return 0; /* not yet */
        /* What the pipes hold now is the end of the output; whatever of
         * the group still runs (and could write more) is killed, while
         * the unreaped main process still holds the group's number. */
        kill_group(r, SIGKILL);
        int status = 0;
        pid_t p;
        do
                p = waitpid(r->pid, &status, 0);
        while (p < 0 && errno == EINTR);
        r->reaped = true;
        r->pid_src = sd_event_source_disable_unref(r->pid_src);
        r->kill_timer = sd_event_source_disable_unref(r->kill_timer);
        if (r->out_fd >= 0)
                (void) drain_out(r);
        close_out(r);
        if (r->err_fd >= 0)
                (void) drain_err(r);
        close_err(r);
        (void) agent_cron_parser_finish(r->parser);
        AgentCronExit ex = {
                .code = WIFEXITED(status) ? WEXITSTATUS(status) : -1,
                .signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                .killed = r->killed,
                .err = r->err,
                .err_len = r->err_len,
                .stats = agent_cron_parser_stats(r->parser),
        };
        r->pid = 0;
        if (r->fns.exited)
                r->fns.exited(r->userdata, &ex); /* may free r */
        return 0;
}

static int on_kill_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s, (void) usec;
        kill_group(userdata, SIGKILL);
        return 0;
}

void agent_cron_run_kill(AgentCronRun *r, unsigned grace_ms) {
        if (!r || r->reaped || r->pid <= 0)
                return;
        r->killed = true;
        kill_group(r, SIGTERM);
        if (!r->kill_timer)
                (void) sd_event_add_time_relative(r->e, &r->kill_timer, CLOCK_MONOTONIC, (uint64_t) grace_ms * 1000,
                                                  10000, on_kill_timer, r);
}

void agent_cron_run_free(AgentCronRun *r) {
        if (!r)
                return;
        if (r->pid > 0 && !r->reaped) {
                kill_group(r, SIGKILL);
                while (waitpid(r->pid, NULL, 0) < 0 && errno == EINTR)
                        ;
        }
        sd_event_source_disable_unref(r->pid_src);
        sd_event_source_disable_unref(r->kill_timer);
        close_out(r);
        close_err(r);
        if (r->pidfd >= 0)
                close(r->pidfd);
        agent_cron_parser_free(r->parser);
        sd_event_unref(r->e);
        free(r);
}

/* ---- the child ---- */

static _Noreturn void child_fail(const char *what, const char *arg, int error) {
        dprintf(2, "glean-agent: startd cron: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "", strerror(error));
        _exit(127);
}

static _Noreturn void child(const AgentCronJob *job, const AgentCronCred *cred, char **envp, int out_w, int err_w) {
        sigset_t all;
        sigemptyset(&all);
        sigprocmask(SIG_SETMASK, &all, NULL);
        for (int sig = 1; sig < _NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void) signal(sig, SIG_DFL);
        (void) setpgid(0, 0);
        int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null < 0 || dup2(null, 0) < 0 || dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
                _exit(127);
        if (syscall(SYS_close_range, 3u, ~0u, 0) < 0)
                for (int fd = 3; fd < 1024; fd++)
                        (void) close(fd);
        if (cred->change) {
                if (setgroups(1, &cred->gid) < 0)
                        child_fail("setgroups", NULL, errno);
                if (setresgid(cred->gid, cred->gid, cred->gid) < 0)
                        child_fail("setgid", NULL, errno);
                if (setresuid(cred->uid, cred->uid, cred->uid) < 0)
                        child_fail("setuid", cred->user, errno);
        }
        if (getuid() == 0 || geteuid() == 0)
                child_fail("refusing to run as root", job->executable, EPERM);
        if (chdir(job->cwd ? job->cwd : "/") < 0)
                child_fail("cannot change directory to", job->cwd ? job->cwd : "/", errno);
        execve(job->executable, job->argv, envp);
        child_fail("cannot execute", job->executable, errno);
}

/* PATH, HOME, USER, LOGNAME, then extra, then the job's ENV (a later NAME
 * replaces an earlier one: the job's ENV wins). */
static char **make_env(const AgentCronJob *job, const AgentCronCred *cred, char *const *extra) {
        size_t n = 4;
        for (char *const *e = extra; e && *e; e++)
                n++;
        for (char *const *e = job->env; e && *e; e++)
                n++;
        char **v = calloc(n + 1, sizeof *v);
        if (!v)
                return NULL;
        size_t k = 0;
        bool ok = true;
        char buf[1024];
        const char *fixed[4] = { "PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin", NULL, NULL, NULL };
        snprintf(buf, sizeof buf, "HOME=%s", cred->home ? cred->home : "/");
        ok = ok && (v[k++] = strdup(fixed[0]));
        ok = ok && (v[k++] = strdup(buf));
        snprintf(buf, sizeof buf, "USER=%s", cred->user ? cred->user : "");
        ok = ok && (v[k++] = strdup(buf));
        snprintf(buf, sizeof buf, "LOGNAME=%s", cred->user ? cred->user : "");
        ok = ok && (v[k++] = strdup(buf));
        for (int pass = 0; ok && pass < 2; pass++)
                for (char *const *e = pass ? job->env : extra; ok && e && *e; e++) {
                        const char *eq = strchr(*e, '=');
                        size_t nl = eq ? (size_t) (eq - *e) : strlen(*e);
                        size_t i;
                        for (i = 0; i < k; i++)
                                if (!strncmp(v[i], *e, nl) && v[i][nl] == '=')
                                        break;
                        char *d = strdup(*e);
                        if (!d) {
                                ok = false;
                                break;
                        }
                        if (i < k) {
                                free(v[i]);
                                v[i] = d;
                        } else
                                v[k++] = d;
                }
        if (!ok) {
                for (size_t i = 0; i < k; i++)
                        free(v[i]);
                free(v);
                return NULL;
        }
        return v;
}

static void strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
}

int agent_cron_run_start(sd_event *e, const AgentCronJob *job, const AgentCronCred *cred,
                         char *const *extra_env, int64_t now, const AgentCronRunFns *fns, void *userdata,
                         AgentCronRun **ret) {
        if (!cred->change && geteuid() == 0)
                return -EPERM; /* never as root */
        AgentCronRun *r = calloc(1, sizeof *r);
        if (!r)
                return -ENOMEM;
        r->pidfd = r->out_fd = r->err_fd = -1;
        r->e = sd_event_ref(e);
        r->fns = *fns;
        r->userdata = userdata;
        int out[2] = { -1, -1 }, err[2] = { -1, -1 };
        char **envp = make_env(job, cred, extra_env);
        int rc = envp ? agent_cron_parser_new(job->prefix, now, emit_ad, r, &r->parser) : -ENOMEM;
        if (rc >= 0 && job->mode == AGENT_CRON_WAIT_FOR_EXIT)
                agent_cron_parser_set_continuous(r->parser);
        if (rc >= 0 && (pipe2(out, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0))
                rc = -errno;
        pid_t pid = -1;
        if (rc >= 0 && (pid = fork()) < 0)
                rc = -errno;
        if (pid == 0)
                child(job, cred, envp, out[1], err[1]);
        strv_free(envp);
        if (out[1] >= 0)
                close(out[1]);
        if (err[1] >= 0)
                close(err[1]);
        r->out_fd = out[0];
        r->err_fd = err[0];
        if (rc < 0) {
                agent_cron_run_free(r);
                return rc;
        }
        (void) setpgid(pid, pid);
        r->pid = pid;
        (void) fcntl(r->out_fd, F_SETFL, O_NONBLOCK);
        (void) fcntl(r->err_fd, F_SETFL, O_NONBLOCK);
        r->pidfd = pidfd_open(pid, 0);
        if (r->pidfd < 0)
                rc = -errno;
        if (rc >= 0)
                rc = sd_event_add_io(e, &r->pid_src, r->pidfd, EPOLLIN, on_exit_pidfd, r);
        if (rc >= 0)
                rc = sd_event_add_io(e, &r->out_src, r->out_fd, EPOLLIN, on_out, r);
        if (rc >= 0)
                rc = sd_event_add_io(e, &r->err_src, r->err_fd, EPOLLIN, on_err, r);
        if (rc < 0) {
                agent_cron_run_free(r); /* kills and reaps it */
                return rc;
        }
        *ret = r;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-reaper.c — what a job's reaper leaves behind and how it is told
 * apart from anything else: the exit file, the start times that pin a
 * process for good, and the end of an orphaned job.
 *
 * The exit file is a few lines of text (inspectable with cat), written by
 * the reaper (agent/exec/reaper-core.c) with system calls only, in place, as
 * one record of EXIT_FILE_RECORD bytes padded with newlines. Every line is
 * "key value"; the keys come in this order, each once:
 *
 *   glean-exit 1          the format
 *   token T               the job's random token (hex): whose file it is
 *   job PID               the job's main process
 *   reaper PID            the reaper
 *   code C                si_code of the job's end: 1 exited, 2 killed, 3 dumped
 *   status S              the exit code, or the signal
 *   utime_us U            the job's rusage (and its children's it waited for)
 *   stime_us S
 *   maxrss_kb M
 *   sum H                 FNV-1a (hex) of the bytes before this line
 *   end                   then only newlines: a file without it is torn
 *
 * A file that breaks any of this is refused with the reason (a wrong sum:
 * torn); one of another job (token, job or reaper pid) as stale.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exec-internal.h"
#include "log.h"


/* ---- reading ---- */

static int refuse(char *why, size_t whylen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int refuse(char *why, size_t whylen, int r, const char *fmt, ...) {
        va_list ap;

        if (why && whylen > 0) {
                va_start(ap, fmt);
                vsnprintf(why, whylen, fmt, ap);
                va_end(ap);
        }
        return r;
}

/* The value of the next line, which must be "key VALUE\n" (base 10 or 16). */
static int next_value(char **p, const char *key, unsigned base, uint64_t *ret) {
        size_t klen = strlen(key);
        char *end;

        if (strncmp(*p, key, klen) != 0 || (*p)[klen] != ' ')
                return -EBADMSG;
        *p += klen + 1;
        if (!((**p >= '0' && **p <= '9') || (base == 16 && **p >= 'a' && **p <= 'f')))
                return -EBADMSG;
        errno = 0;
        *ret = strtoull(*p, &end, (int) base);
        if (errno != 0 || *end != '\n')
                return -EBADMSG;
        *p = end + 1;
        return 0;
}

int agent_exit_file_read(const char *path, const AgentJobId *id, AgentJobExit *ret, char *why, size_t whylen) {
        static const char *const keys[] = { "glean-exit", "token", "job", "reaper", "code",
                                            "status", "utime_us", "stime_us", "maxrss_kb" };
        uint64_t v[sizeof(keys) / sizeof(keys[0])];
        char buf[EXIT_FILE_MAX + 1], *p = buf;
        uint64_t sum;
        struct stat st;
        ssize_t n;
        size_t len, body;
        int fd, r;

        if (!path || !ret)
                return refuse(why, whylen, -EINVAL, "no exit file to read");
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
        if (fd < 0) {
                r = -errno;
                return refuse(why, whylen, r, "cannot open the exit file %s: %s", path, strerror(-r));
        }
        if (fstat(fd, &st) < 0) {
                r = -errno;
                close(fd);
                return refuse(why, whylen, r, "cannot stat the exit file %s: %s", path, strerror(-r));
        }
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 0022)) {
                close(fd);
                return refuse(why, whylen, -EPERM,
                              "the exit file %s is not a regular file of uid %u that only it may write", path,
                              (unsigned) geteuid());
        }
        do
                n = read(fd, buf, sizeof(buf) - 1);
        while (n < 0 && errno == EINTR);
        r = n < 0 ? -errno : 0;
        close(fd);
        if (r < 0 || n < 0)
                return refuse(why, whylen, r, "cannot read the exit file %s: %s", path, strerror(-r));
        len = (size_t) n;
        if (len >= EXIT_FILE_MAX)
                return refuse(why, whylen, -EBADMSG, "the exit file %s is too large to be one", path);
        buf[len] = '\0';
        if (len != strlen(buf))
                return refuse(why, whylen, -EBADMSG, "the exit file %s holds a NUL byte", path);

        for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
                if (next_value(&p, keys[i], strcmp(keys[i], "token") == 0 ? 16 : 10, &v[i]) < 0)
                        return refuse(why, whylen, -EBADMSG, "the exit file %s is torn or malformed at '%s'",
                                      path, keys[i]);
        body = (size_t) (p - buf);
        if (next_value(&p, "sum", 16, &sum) < 0)
                return refuse(why, whylen, -EBADMSG, "the exit file %s is torn or malformed at 'sum'", path);
        if (sum != exec_exit_file_sum(buf, body))
                return refuse(why, whylen, -EBADMSG, "the exit file %s is torn: its sum does not match", path);
        if (strncmp(p, "end\n", 4) != 0 || p[4 + strspn(p + 4, "\n")] != '\0')
                return refuse(why, whylen, -EBADMSG, "the exit file %s is torn: no 'end' line", path);
        if (v[0] != EXIT_FILE_VERSION)
                return refuse(why, whylen, -EBADMSG, "the exit file %s has format %" PRIu64 ", not %d", path, v[0],
                              EXIT_FILE_VERSION);
        if (v[4] < CLD_EXITED || v[4] > CLD_DUMPED || (v[4] == CLD_EXITED ? v[5] > 255 : v[5] < 1 || v[5] >= NSIG))
                return refuse(why, whylen, -EBADMSG, "the exit file %s says code %" PRIu64 " status %" PRIu64
                              ", which is no end of a process", path, v[4], v[5]);
        if (id && id->reaper_pid > 0 &&
            (v[1] != id->token || v[2] != (uint64_t) id->pid || v[3] != (uint64_t) id->reaper_pid))
                return refuse(why, whylen, -ESTALE,
                              "the exit file %s is another job's (job %" PRIu64 ", reaper %" PRIu64
                              "; expected job %d, reaper %d, and another token)",
                              path, v[2], v[3], (int) id->pid, (int) id->reaper_pid);

        *ret = (AgentJobExit) {
                .by_signal = v[4] != CLD_EXITED,
                .exit_code = v[4] == CLD_EXITED ? (int) v[5] : 0,
                .signal = v[4] != CLD_EXITED ? (int) v[5] : 0,
                .core_dumped = v[4] == CLD_DUMPED,
                .user_cpu = (double) v[6] / 1e6,
                .sys_cpu = (double) v[7] / 1e6,
                .max_rss_kb = (int64_t) (v[8] > INT64_MAX ? INT64_MAX : v[8]),
        };
        if (why && whylen > 0)
                why[0] = '\0';
        return 0;
}

/* ---- identities ---- */

int exec_proc_start(pid_t pid, uint64_t *ret) {
        return exec_proc_stat(pid, ret, NULL);
}

int exec_proc_stat(pid_t pid, uint64_t *ret_start, pid_t *ret_ppid) {
        char path[64], buf[1024], state;
        unsigned long long start;
        int ppid;
        const char *p;
        ssize_t n;

        if (pid <= 0)
                return -ESRCH;
        snprintf(path, sizeof(path), "/proc/%d/stat", (int) pid);
        n = exec_read_small(AT_FDCWD, path, buf, sizeof(buf));
        if (n == -ENOENT)
                return -ESRCH;
        if (n < 0)
                return (int) n;
        p = strrchr(buf, ')'); /* the command name may hold anything */
        /* state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
         * utime stime cutime cstime priority nice threads itrealvalue starttime */
        if (!p || sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
                         &state, &ppid, &start) != 3)
                return -EIO;
        if (state == 'Z' || state == 'X')
                return -ESRCH; /* it has ended: only its number is left */
        *ret_start = start;
        if (ret_ppid)
                *ret_ppid = (pid_t) ppid;
        return 0;
}

int exec_pin(pid_t pid, uint64_t start) {
        uint64_t now_start = 0;
        int pidfd, r;

        if (pid <= 0)
                return -ESRCH;
        pidfd = pidfd_open(pid, 0);
        if (pidfd < 0)
                return errno == ESRCH ? -ESRCH : -errno;
        /* Pinned first, checked next, alive after: the start time read was the pinned process's. */
        r = exec_proc_start(pid, &now_start);
        if (r >= 0 && start != 0 && now_start != start)
                r = -ESRCH;
        if (r >= 0 && pidfd_send_signal(pidfd, 0, NULL, 0) < 0)
                r = -ESRCH;
        if (r < 0) {
                close(pidfd);
                return r;
        }
        return pidfd;
}

uint64_t exec_new_token(void) {
        static uint64_t counter;
        uint64_t t = 0;

        if (getrandom(&t, sizeof(t), GRND_NONBLOCK) != (ssize_t) sizeof(t)) {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                t = ((uint64_t) ts.tv_sec << 32) ^ (uint64_t) ts.tv_nsec ^ ((uint64_t) getpid() << 16) ^ ++counter;
        }
        return t ? t : 1;
}

bool exec_job_read_exit_file(ExecJob *j) {
        AgentJobId id = { .pid = j->base.pid, .reaper_pid = j->reaper_pid, .token = j->token };
        AgentJobExit ex = {};
        char why[512];
        int r;

        if (!j->exit_file || j->reaper_pid <= 0)
                return false;
        r = agent_exit_file_read(j->exit_file, &id, &ex, why, sizeof(why));
        if (r < 0) {
                if (r != -ENOENT)
                        glean_log_warning("job %d: %s", (int) j->base.pid, why);
                return false;
        }
        j->result.by_signal = ex.by_signal;
        j->result.exit_code = ex.exit_code;
        j->result.signal = ex.signal;
        j->result.core_dumped = ex.core_dumped;
        j->result.user_cpu = ex.user_cpu;
        j->result.sys_cpu = ex.sys_cpu;
        /* The reaper's rusage counts its own resident size: a copy of the agent's. */
        j->result.max_rss_kb = ex.max_rss_kb > j->max_rss_kb ? ex.max_rss_kb : j->max_rss_kb;
        return true;
}

int agent_job_id(const AgentJob *job, AgentJobId *ret) {
        ExecJob *j = (ExecJob *) job;

        if (!job || !ret)
                return -EINVAL;
        if (job->exited)
                return -ESRCH;
        if (j->reaper_pid <= 0)
                return -ENODATA;
        /* Read once, while both live (the reaper is our child, or pinned). */
        if (!j->job_start)
                (void) exec_proc_start(job->pid, &j->job_start);
        if (!j->reaper_start)
                (void) exec_proc_start(j->reaper_pid, &j->reaper_start);
        *ret = (AgentJobId) {
                .pid = job->pid,
                .start = j->job_start,
                .reaper_pid = j->reaper_pid,
                .reaper_start = j->reaper_start,
                .token = j->token,
        };
        return 0;
}

/* ---- orphans ---- */

int agent_exec_kill_orphan(const AgentJobId *id) {
        int n = 0, fd, reaper_fd = -1;

        if (!id || id->pid <= 0 || id->start == 0)
                return -EINVAL;
        /* Both pinned before either is killed: the reaper ends as soon as its
         * job has, and could be gone (its pid free again) by the time we
         * looked for it. */
        fd = exec_pin(id->pid, id->start);
        if (id->reaper_pid > 0 && id->reaper_start != 0)
                reaper_fd = exec_pin(id->reaper_pid, id->reaper_start);
        /* The group's leader pinned: while it lives, no other group can have its id. */
        if (fd >= 0) {
                if (kill(-id->pid, SIGKILL) >= 0)
                        n++;
                else if (pidfd_send_signal(fd, SIGKILL, NULL, 0) >= 0) /* not a group leader after all */
                        n++;
                close(fd);
        }
        if (reaper_fd >= 0) {
                if (pidfd_send_signal(reaper_fd, SIGKILL, NULL, 0) >= 0)
                        n++;
                close(reaper_fd);
        }
        return n;
}

int agent_job_keep(AgentJob *job) {
        ExecJob *j = (ExecJob *) job;
        union sigval v = { .sival_int = (int) (uint32_t) j->token };

        if (!job)
                return -EINVAL;
        if (job->exited)
                return -ESRCH;
        if (j->kept || j->reaper_pid <= 0)
                return 0;
        /* Our child, not reaped yet: its pid is its own. */
        if (sigqueue(j->reaper_pid, EXEC_SIG_KEEP, v) < 0)
                return -errno;
        j->kept = true;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec.c — what every executor shares: the dispatch to its operations,
 * the checks on a spec before anything runs, and the per-job scratch
 * directory (created owned by the job user, removed without ever following
 * a symbolic link the job may have planted).
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "exec.h"

/* Directories deeper than this below the top are moved up to the top
 * (renameat) and removed from there: any depth with a bounded number of
 * open descriptors and no deep recursion. */
#define RM_MAX_DEPTH 32
/* Passes over the top directory before giving up on one that keeps
 * getting new entries. */
#define RM_MAX_PASSES 100000

int agent_exec_error(AgentExecutor *ex, int r, const char *fmt, ...) {
        va_list ap;

        if (ex) {
                va_start(ap, fmt);
                vsnprintf(ex->last_error, sizeof(ex->last_error), fmt, ap);
                va_end(ap);
                ex->last_failure = AGENT_START_OTHER;
                ex->last_errno = r < 0 ? -r : 0;
        }
        return r;
}

AgentStartFailure agent_executor_last_failure(const AgentExecutor *ex, int *ret_errno) {
        if (ret_errno)
                *ret_errno = ex ? ex->last_errno : 0;
        return ex ? (AgentStartFailure) ex->last_failure : AGENT_START_OTHER;
}

/* ---- removing a tree without following symlinks ---- */

typedef struct RmState {
        int topfd;
        unsigned moved;  /* names handed out for directories moved up */
        bool again;      /* something was moved up or came back: another pass */
} RmState;

/* Moves the directory name (in dfd) to the top under a fresh name. */
static int rm_move_up(int dfd, const char *name, RmState *st) {
        char fresh[64];

        for (;;) {
                snprintf(fresh, sizeof(fresh), ".glean-rm-%u", st->moved++);
                if (renameat2(dfd, name, st->topfd, fresh, RENAME_NOREPLACE) >= 0)
                        break;
                if (errno == EEXIST)
                        continue;
                if (errno == EINVAL || errno == ENOSYS) {
                        /* No RENAME_NOREPLACE here: check, then rename. */
                        struct stat stt;

                        if (fstatat(st->topfd, fresh, &stt, AT_SYMLINK_NOFOLLOW) >= 0)
                                continue;
                        if (renameat(dfd, name, st->topfd, fresh) >= 0)
                                break;
                }
                return -errno;
        }
        st->again = true;
        return 0;
}

/* Removes everything in the directory fd (taken). */
static int rm_contents(int fd, unsigned depth, RmState *st) {
        struct dirent *de;
        DIR *d;
        int r = 0;

        d = fdopendir(fd);
        if (!d) {
                r = -errno;
                close(fd);
                return r;
        }
        for (;;) {
                const char *name;
                struct stat stt;
                int sub;

                errno = 0;
                de = readdir(d);
                if (!de) {
                        if (errno != 0)
                                r = -errno;
                        break;
                }
                name = de->d_name;
                if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
                        continue;
                if (unlinkat(dirfd(d), name, 0) >= 0 || errno == ENOENT)
                        continue;
                if (errno != EISDIR && errno != EPERM) {
                        r = -errno;
                        break;
                }
                if (fstatat(dirfd(d), name, &stt, AT_SYMLINK_NOFOLLOW) < 0) {
                        if (errno == ENOENT)
                                continue;
                        r = -errno;
                        break;
                }
                if (!S_ISDIR(stt.st_mode)) {
                        r = -EPERM;
                        break;
                }
                if (depth + 1 >= RM_MAX_DEPTH) {
                        r = rm_move_up(dirfd(d), name, st);
                        if (r < 0)
                                break;
                        continue;
                }
                sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
                if (sub < 0 && errno == EACCES && fchmodat(dirfd(d), name, 0700, 0) >= 0)
                        /* A directory made unreadable by its owner (an agent that is not root). */
                        sub = openat(dirfd(d), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
                if (sub < 0) {
                        if (errno == ENOENT)
                                continue;
                        r = -errno;
                        break;
                }
                r = rm_contents(sub, depth + 1, st);
                if (r < 0)
                        break;
                if (unlinkat(dirfd(d), name, AT_REMOVEDIR) < 0) {
                        if (errno == ENOTEMPTY || errno == EEXIST)
                                st->again = true; /* filled again meanwhile */
                        else if (errno != ENOENT) {
                                r = -errno;
                                break;
                        }
                }
        }
        closedir(d);
        return r;
}

/* "/a/b/c" -> "/a/b" and "c" (trailing slashes ignored); -EINVAL for "/" or "". */
static int split_path(const char *path, char **ret_dir, const char **ret_base, char *buf, size_t size) {
        size_t n = strlen(path);
        char *slash;

        while (n > 1 && path[n - 1] == '/')
                n--;
        if (n == 0 || n >= size || (n == 1 && path[0] == '/'))
                return -EINVAL;
        memcpy(buf, path, n);
        buf[n] = '\0';
        slash = strrchr(buf, '/');
        if (!slash) {
                *ret_dir = NULL; /* relative to the current directory */
                *ret_base = buf;
                return 0;
        }
        *slash = '\0';
        *ret_base = slash + 1;
        *ret_dir = slash == buf ? (char *) "/" : buf;
        if (!**ret_base || strcmp(*ret_base, ".") == 0 || strcmp(*ret_base, "..") == 0)
                return -EINVAL;
        return 0;
}

static int open_parent(const char *path, const char **ret_base, char *buf, size_t size) {
        char *dir;
        int r, fd;

        r = split_path(path, &dir, ret_base, buf, size);
        if (r < 0)
                return r;
        fd = open(dir ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int agent_remove_tree(const char *path) {
        char buf[4096];
        const char *base;
        int pfd, r = 0;

        pfd = open_parent(path, &base, buf, sizeof(buf));
        if (pfd < 0)
                return pfd;
        for (unsigned pass = 0;; pass++) {
                RmState st = {};
                int fd;

                if (pass >= RM_MAX_PASSES) {
                        r = -ENOTEMPTY;
                        break;
                }
                fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
                if (fd < 0 && errno == EACCES && fchmodat(pfd, base, 0700, 0) >= 0)
                        fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
                if (fd < 0) {
                        /* Not a directory (a symlink, a file): remove just that name. */
                        if ((errno == ENOTDIR || errno == ELOOP) && unlinkat(pfd, base, 0) >= 0)
                                break;
                        r = -errno;
                        break;
                }
                st.topfd = fd;
                r = rm_contents(fd, 0, &st); /* takes fd; topfd stays valid until it returns */
                if (r < 0)
                        break;
                if (st.again)
                        continue;
                if (unlinkat(pfd, base, AT_REMOVEDIR) >= 0)
                        break;
                if (errno != ENOTEMPTY && errno != EEXIST) {
                        r = -errno;
                        break;
                }
        }
        close(pfd);
        return r;
}

int agent_scratch_create(AgentExecutor *ex, const AgentJobSpec *spec) {
        char buf[4096];
        const char *base;
        int pfd, fd, r = 0;

        pfd = open_parent(spec->scratch, &base, buf, sizeof(buf));
        if (pfd < 0)
                return agent_exec_error(ex, pfd, "cannot open the directory of scratch directory '%s': %s",
                                        spec->scratch, strerror(-pfd));
        if (mkdirat(pfd, base, 0700) < 0) {
                r = -errno;
                close(pfd);
                return agent_exec_error(ex, r, "cannot create scratch directory '%s': %s", spec->scratch,
                                        strerror(-r));
        }
        fd = openat(pfd, base, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                r = -errno;
        else if (fchown(fd, spec->uid, spec->gid) < 0 || fchmod(fd, 0700) < 0)
                r = -errno;
        if (fd >= 0)
                close(fd);
        if (r < 0) {
                (void) unlinkat(pfd, base, AT_REMOVEDIR);
                close(pfd);
                return agent_exec_error(ex, r, "cannot give scratch directory '%s' to uid %u: %s", spec->scratch,
                                        (unsigned) spec->uid, strerror(-r));
        }
        close(pfd);
        return 0;
}

/* ---- checks ---- */

static bool is_abs(const char *p) {
        return p && p[0] == '/';
}

static int check_spec(AgentExecutor *ex, const AgentJobSpec *spec) {
        if (!spec->argv || !spec->argv[0] || !is_abs(spec->argv[0]))
                return agent_exec_error(ex, -EINVAL, "the program to run must be an absolute path");
        if (!spec->envp)
                return agent_exec_error(ex, -EINVAL, "the job has no environment array");
        if (!is_abs(spec->iwd) || !is_abs(spec->scratch))
                return agent_exec_error(ex, -EINVAL, "the job's initial and scratch directories must be absolute");
        if (spec->exit_file && !is_abs(spec->exit_file))
                return agent_exec_error(ex, -EINVAL, "the job's exit file must be an absolute path");
        if ((spec->in && !is_abs(spec->in)) || (spec->out && !is_abs(spec->out)) || (spec->err && !is_abs(spec->err)))
                return agent_exec_error(ex, -EINVAL, "the job's standard files must be absolute paths");
        if (spec->n_groups > 0 && !spec->groups)
                return agent_exec_error(ex, -EINVAL, "the job's groups are missing");
        if (spec->uid == 0 || spec->gid == 0)
                return agent_exec_error(ex, -EPERM, "refusing to run a job as root (uid %u, gid %u)",
                                        (unsigned) spec->uid, (unsigned) spec->gid);
        for (size_t i = 0; i < spec->n_groups; i++)
                if (spec->groups[i] == 0)
                        return agent_exec_error(ex, -EPERM, "refusing to run a job with the root group (gid 0)");
        if (geteuid() != 0 && spec->uid != geteuid())
                return agent_exec_error(ex, -EPERM,
                                        "the agent is not root (uid %u) and cannot run a job as uid %u",
                                        (unsigned) geteuid(), (unsigned) spec->uid);
        if (spec->kill_sig < 1 || spec->kill_sig >= NSIG)
                return agent_exec_error(ex, -EINVAL, "the job's kill signal %d is not a signal", spec->kill_sig);
        return 0;
}

/* ---- dispatch ---- */

int agent_exec_start(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                     AgentJob **ret) {
        AgentJob *job = NULL;
        int r;

        if (!ex)
                return -EINVAL;
        ex->last_error[0] = '\0';
        ex->last_failure = AGENT_START_OTHER;
        ex->last_errno = 0;
        if (!spec || !on_exit || !ret)
                return agent_exec_error(ex, -EINVAL, "bad call: spec, exit callback and result needed");
        r = check_spec(ex, spec);
        if (r < 0)
                return r;
        r = spec->scratch_kept ? 0 : agent_scratch_create(ex, spec);
        if (r < 0)
                return r;
        r = ex->ops->start(ex, spec, on_exit, userdata, &job);
        if (r < 0) {
                if (!ex->last_error[0])
                        agent_exec_error(ex, r, "cannot start '%s': %s", spec->argv[0], strerror(-r));
                if (!spec->scratch_kept)
                        (void) agent_remove_tree(spec->scratch);
                return r;
        }
        job->executor = ex;
        *ret = job;
        return 0;
}

int agent_exec_adopt(AgentExecutor *ex, const AgentJobSpec *spec, pid_t pid, double started_wall,
                     AgentJobExitFn on_exit, void *userdata, AgentJob **ret) {
        AgentJobId id = { .pid = pid };

        return agent_exec_adopt_id(ex, spec, &id, started_wall, on_exit, userdata, ret);
}

int agent_exec_adopt_id(AgentExecutor *ex, const AgentJobSpec *spec, const AgentJobId *id, double started_wall,
                        AgentJobExitFn on_exit, void *userdata, AgentJob **ret) {
        AgentJob *job = NULL;
        int r;

        if (!ex)
                return -EINVAL;
        ex->last_error[0] = '\0';
        if (!spec || !id || !on_exit || !ret)
                return agent_exec_error(ex, -EINVAL, "bad call: spec, identity, exit callback and result needed");
        if (!ex->ops->adopt)
                return agent_exec_error(ex, -EOPNOTSUPP, "the %s executor cannot adopt a running job",
                                        ex->ops->name);
        if ((spec->scratch && !is_abs(spec->scratch)) || (spec->exit_file && !is_abs(spec->exit_file)))
                return agent_exec_error(ex, -EINVAL, "the job's scratch directory and exit file must be absolute");
        r = ex->ops->adopt(ex, spec, id, started_wall, on_exit, userdata, &job);
        if (r < 0) {
                if (!ex->last_error[0])
                        agent_exec_error(ex, r, "cannot adopt the job: %s", strerror(-r));
                return r;
        }
        job->executor = ex;
        *ret = job;
        return 0;
}

int agent_job_suspend(AgentJob *job) {
        return job ? job->executor->ops->suspend(job) : -EINVAL;
}

int agent_job_resume(AgentJob *job) {
        return job ? job->executor->ops->resume(job) : -EINVAL;
}

int agent_job_signal(AgentJob *job, int sig) {
        if (!job || sig < 0 || sig >= NSIG)
                return -EINVAL;
        return job->executor->ops->signal(job, sig);
}

int agent_job_kill(AgentJob *job) {
        return job ? job->executor->ops->kill(job) : -EINVAL;
}

int agent_job_usage(AgentJob *job, AgentJobExit *ret) {
        return job && ret ? job->executor->ops->usage(job, ret) : -EINVAL;
}

int agent_job_freeze_latency_us(AgentJob *job) {
        if (!job)
                return -EINVAL;
        if (!job->executor->ops->freeze_latency_us)
                return -EOPNOTSUPP;
        return job->executor->ops->freeze_latency_us(job);
}

pid_t agent_job_pid(const AgentJob *job) {
        return job ? job->pid : -1;
}

bool agent_job_exited(const AgentJob *job) {
        return job && job->exited;
}

void agent_job_free(AgentJob *job) {
        if (job)
                job->executor->ops->free_job(job);
}

void agent_executor_free(AgentExecutor *ex) {
        if (ex)
                ex->ops->free(ex);
}

void agent_executor_forget(AgentExecutor *ex) {
        if (!ex)
                return;
        if (ex->ops->forget)
                ex->ops->forget(ex);
        else
                ex->ops->free(ex);
}

const char *agent_executor_name(const AgentExecutor *ex) {
        return ex ? ex->ops->name : NULL;
}

const char *agent_executor_last_error(const AgentExecutor *ex) {
        return ex ? ex->last_error : "";
}

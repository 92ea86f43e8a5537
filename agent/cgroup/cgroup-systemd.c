/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-systemd.c — the jobs' scope under systemd: the transient scope
 * unit of cg_scope_plan() (cgroup-scope.c) found or made, with its
 * placeholder. systemd before 254 (no DelegateSubgroup=) starts a
 * service's main process in the unit's own cgroup; had the slots made it
 * an inner cgroup (controllers enabled, children populated), the kernel
 * would refuse the next agent (EBUSY, 219/CGROUP) while any job ran on
 * after a crash. In a scope of their own the agent alone stays in the
 * service's cgroup, so systemd can always place a new one there. (What
 * Slurm does for slurmstepd.)
 *
 *   <slice>/glean-agent.service              the agent, nothing else
 *   <slice>/glean-agent-jobs.scope/init      the placeholder, alone
 *   <slice>/glean-agent-jobs.scope/slots/... the slots and jobs (cgroup.h)
 *
 * A scope needs a process when it is created and ends when it has none:
 * the placeholder, a child of the agent in a session of its own that
 * holds no fd of the agent's, blocks every signal, is exempt from the OOM
 * killer and pauses (never a job), keeps it while no job runs. The scope
 * is created through systemd's StartTransientUnit (the private socket
 * /run/systemd/private, as root; else the system bus), and the placeholder
 * moved into <scope>/init, so that the scope's cgroup can enable
 * controllers for the slots. A restarted agent finds the scope there (its
 * placeholder in init) and takes it as it is. A scope that has jobs but
 * lost its placeholder gets a new one.
 *
 * cg_scope_end() (a clean exit, every job gone) kills the placeholder it
 * started or found (by its pidfd, after checking it is still the one
 * process in init) and waits a little for systemd to remove the scope: the
 * next start makes a new one, and a stopped agent leaves no process
 * behind. Any other end (a crash, kill -9, the watchdog, TimeoutStopSec)
 * leaves the scope and its jobs to the next agent. The scope has
 * KillSignal=SIGKILL (the placeholder blocks the rest) and is ordered
 * Before= the service, so that at shutdown systemd stops it only after
 * the agent's graceful stop.
 *
 * Every cgroup file is reached relative to the cgroup2 mount's fd; the
 * scope's cgroup is opened afresh each time (systemd makes and removes it).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include "cgroup-internal.h"
#include "log.h"

/* How long systemd may take to start the scope (TCG VMs are slow), and
 * to remove it after the placeholder's end. */
#define SCOPE_START_TIMEOUT_MS 30000
#define SCOPE_GONE_TIMEOUT_MS 10000

struct CgScope {
        CgScopePlan plan;
        char *path;       /* absolute: /sys/fs/cgroup/system.slice/glean-agent-jobs.scope */
        const char *rel;  /* plan.cgroup without its '/', relative to the mount */
        int mount_fd;     /* the cgroup2 mount, O_PATH|O_DIRECTORY */
        pid_t placeholder;
        int pidfd;        /* the placeholder's */
        bool child;       /* we started it: reap it */
};

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        (void) nanosleep(&ts, NULL);
}

/* The placeholder: no fd of the agent's, every signal blocked, paused
 * until SIGKILL. Only async-signal-safe calls after fork(). */
static int placeholder_start(pid_t *ret, char *why, size_t whylen) {
        pid_t pid = fork();
        if (pid < 0)
                return glean_why(-errno, why, whylen, "cannot start the placeholder: %s", strerror(errno));
        if (pid == 0) {
                sigset_t all;
                sigfillset(&all);
                (void) sigprocmask(SIG_SETMASK, &all, NULL);
                (void) setsid();
                int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
                if (fd >= 0) {
                        (void) dup2(fd, 0);
                        (void) dup2(fd, 1);
                        (void) dup2(fd, 2);
                }
                (void) close_range(3, ~0U, 0);
                /* Not the OOM killer's choice: without it, a scope with no
                 * job would end under the agent. */
                fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
                if (fd >= 0) {
                        (void) !write(fd, "-1000", 5);
                        (void) close(fd);
                }
                (void) prctl(PR_SET_NAME, "glean-scope", 0, 0, 0);
                for (;;)
                        pause();
        }
        *ret = pid;
        return 0;
}

/* The scope's cgroup (sub NULL) or its child sub: an O_PATH|O_DIRECTORY
 * fd, or -errno (-ENOENT: no such cgroup). */
static int scope_dir(const CgScope *s, const char *sub) {
        _cleanup_close_ int fd = openat(s->mount_fd, s->rel, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int child;

        if (fd < 0)
                return -errno;
        if (!sub)
                return TAKE_FD(fd);
        child = openat(fd, sub, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        return child < 0 ? -errno : child;
}

static bool scope_exists(const CgScope *s) {
        return faccessat(s->mount_fd, s->rel, F_OK, 0) == 0;
}

/* The first pid in cgroup.procs of the scope (sub NULL) or its child sub,
 * and how many there are. */
static int procs_of(const CgScope *s, const char *sub, pid_t *ret_first, unsigned *ret_n) {
        _cleanup_close_ int fd = scope_dir(s, sub);
        pid_t *v = NULL;
        size_t n = 0;
        int r;

        if (fd < 0)
                return fd;
        r = cg_procs_at(fd, &v, &n);
        if (r < 0)
                return r;
        *ret_first = n > 0 ? v[0] : 0;
        *ret_n = (unsigned) n;
        free(v);
        return 0;
}

/* populated of the scope's (or its child sub's) cgroup.events: 1, 0, or
 * -errno (-ENOENT: no such cgroup). */
static int populated(const CgScope *s, const char *sub) {
        _cleanup_close_ int fd = scope_dir(s, sub);
        bool pop = false;
        int r;

        if (fd < 0)
                return fd;
        r = cg_events_at(fd, &pop, NULL);
        return r < 0 ? r : pop;
}

/* Whether pid's cgroup v2 is cgroup (relative to the mount, "/a/b"). */
static bool pid_in_cgroup(pid_t pid, const char *cgroup) {
        char own[PATH_MAX];
        return cg_own(pid, own, sizeof own) >= 0 && strcmp(own, cgroup) == 0;
}

static int bus_connect(sd_bus **ret) {
        sd_bus *bus = NULL;
        int r = sd_bus_new(&bus);
        if (r >= 0)
                r = sd_bus_set_address(bus, "unix:path=/run/systemd/private");
        if (r >= 0)
                r = sd_bus_start(bus);
        if (r >= 0) {
                *ret = bus;
                return 0;
        }
        sd_bus_unref(bus);
        return sd_bus_open_system(ret);
}

/* StartTransientUnit(name, "fail", properties, []): the scope with pid in
 * it. 1 when it was made, 0 when a unit of that name exists (one on its
 * way out), -errno with why. */
static int scope_start_unit(const CgScope *s, pid_t pid, char *why, size_t whylen) {
        sd_bus *bus = NULL;
        sd_bus_message *m = NULL, *reply = NULL;
        sd_bus_error error = SD_BUS_ERROR_NULL;
        char desc[512];
        snprintf(desc, sizeof desc, "glean jobs of %s (slots, jobs and their placeholder)", s->plan.service);
        int r = bus_connect(&bus);
        if (r < 0) {
                glean_why(0, why, whylen, "cannot connect to systemd (/run/systemd/private, the system bus): %s",
                         strerror(-r));
                goto out;
        }
        r = sd_bus_message_new_method_call(bus, &m, "org.freedesktop.systemd1", "/org/freedesktop/systemd1",
                                           "org.freedesktop.systemd1.Manager", "StartTransientUnit");
        if (r >= 0)
                r = sd_bus_message_append(m, "ss", s->plan.name, "fail");
        if (r >= 0)
                r = sd_bus_message_open_container(m, 'a', "(sv)");
        if (r >= 0)
                r = sd_bus_message_append(m, "(sv)(sv)(sv)(sv)(sv)(sv)(sv)", "Description", "s", desc, "Slice", "s",
                                          s->plan.slice, "Delegate", "b", 1, "PIDs", "au", 1, (uint32_t) pid,
                                          "KillSignal", "i", SIGKILL, "CollectMode", "s", "inactive-or-failed",
                                          "Before", "as", 1, s->plan.service);
        if (r >= 0)
                r = sd_bus_message_close_container(m);
        if (r >= 0)
                r = sd_bus_message_append(m, "a(sa(sv))", 0);
        if (r < 0) {
                glean_why(0, why, whylen, "cannot build the StartTransientUnit call: %s", strerror(-r));
                goto out;
        }
        r = sd_bus_call(bus, m, (uint64_t) SCOPE_START_TIMEOUT_MS * 1000, &error, &reply);
        if (r < 0 && sd_bus_error_has_name(&error, "org.freedesktop.systemd1.UnitExists"))
                r = 0;
        else if (r < 0)
                glean_why(0, why, whylen, "StartTransientUnit %s: %s", s->plan.name,
                         error.message ? error.message : strerror(-r));
        else
                r = 1;
out:
        sd_bus_error_free(&error);
        sd_bus_message_unref(reply);
        sd_bus_message_unref(m);
        sd_bus_flush_close_unref(bus);
        return r;
}

/* The placeholder as ours: pinned by a pidfd, then checked to be still in
 * <scope>/init (a pid reused in between is not taken). */
static int placeholder_pin(CgScope *s, pid_t pid) {
        int fd = pidfd_open(pid, 0);
        if (fd < 0)
                return -errno;
        pid_t first;
        unsigned n;
        if (procs_of(s, "init", &first, &n) < 0 || n != 1 || first != pid) {
                close(fd);
                return -ESRCH;
        }
        s->placeholder = pid;
        s->pidfd = fd;
        return 0;
}

/* A new placeholder, moved into <scope>/init (made when absent). */
static int placeholder_into_init(CgScope *s, pid_t pid, char *why, size_t whylen) {
        _cleanup_close_ int scope_fd = scope_dir(s, NULL), init_fd = -1;
        char init[PATH_MAX + 8];
        int r;

        snprintf(init, sizeof init, "%s/init", s->path);
        if (scope_fd < 0)
                return glean_why(scope_fd, why, whylen, "cannot open %s: %s", s->path, strerror(-scope_fd));
        if (mkdirat(scope_fd, "init", 0755) < 0 && errno != EEXIST)
                return glean_why(-errno, why, whylen, "cannot create %s: %s", init, strerror(errno));
        init_fd = openat(scope_fd, "init", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (init_fd < 0)
                return glean_why(-errno, why, whylen, "cannot open %s: %s", init, strerror(errno));
        r = cg_attach_at(init_fd, init, pid, NULL, 0);
        if (r < 0)
                return glean_why(r, why, whylen, "cannot move the placeholder (pid %d) into %s: %s", (int) pid, init,
                                 strerror(-r));
        return placeholder_pin(s, pid);
}

static void placeholder_kill(CgScope *s, pid_t pid, bool child) {
        if (s->pidfd >= 0)
                (void) pidfd_send_signal(s->pidfd, SIGKILL, NULL, 0);
        else if (pid > 0 && child)
                (void) kill(pid, SIGKILL); /* our unreaped child: its pid cannot be reused */
        if (child && pid > 0)
                (void) waitpid(pid, NULL, 0);
        if (s->pidfd >= 0)
                close(s->pidfd);
        s->pidfd = -1;
        s->placeholder = 0;
}

int cg_scope_new(const CgScopePlan *plan, CgScope **ret) {
        const char *mount;
        CgScope *s;
        int r;

        if (!plan || plan->cgroup[0] != '/' || !plan->cgroup[1])
                return -EINVAL;
        r = cg_mount_find(&mount);
        if (r < 0)
                return r;
        s = calloc(1, sizeof *s);
        if (!s)
                return -ENOMEM;
        s->plan = *plan;
        s->rel = s->plan.cgroup + 1;
        s->pidfd = -1;
        s->mount_fd = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (s->mount_fd < 0 || asprintf(&s->path, "%s%s", mount, s->plan.cgroup) < 0) {
                r = s->mount_fd < 0 ? -errno : -ENOMEM;
                s->path = NULL;
                cg_scope_free(s);
                return r;
        }
        *ret = s;
        return 0;
}

const char *cg_scope_path(const CgScope *s) {
        return s ? s->path : NULL;
}

/* A populated scope taken as it is: its placeholder in init pinned, the
 * one StartTransientUnit left in its root moved into init, or a new one. */
static int scope_take(CgScope *s, char *why, size_t whylen) {
        pid_t first = 0;
        unsigned n = 0;
        if (procs_of(s, "init", &first, &n) >= 0 && n >= 1 && placeholder_pin(s, first) >= 0) {
                glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s is there (placeholder pid %d): taken as it is",
                          s->plan.name, (int) first);
                return 0;
        }
        if (n > 1) {
                glean_why(0, why, whylen, "%s/init holds %u processes, not one placeholder", s->path, n);
                return -EBUSY;
        }
        /* The scope's root holds only what StartTransientUnit put there:
         * the placeholder of an agent that died before it moved it into
         * init. */
        pid_t root_pid = 0;
        unsigned root_n = 0;
        if (n == 0 && procs_of(s, NULL, &root_pid, &root_n) >= 0 && root_n == 1 &&
            placeholder_into_init(s, root_pid, why, whylen) >= 0) {
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "jobs' scope %s is there, its placeholder (pid %d) moved into init",
                          s->plan.name, (int) root_pid);
                return 0;
        }
        /* Jobs, but no placeholder: a new one. */
        pid_t pid;
        int r = placeholder_start(&pid, why, whylen);
        if (r < 0)
                return r;
        r = placeholder_into_init(s, pid, why, whylen);
        if (r < 0) {
                placeholder_kill(s, pid, true);
                return r;
        }
        s->child = true;
        glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s is there without its placeholder: a new one, pid %d",
                  s->plan.name, (int) pid);
        return 0;
}

int cg_scope_start(CgScope *s, char *why, size_t whylen) {
        for (int attempt = 0; attempt < 3; attempt++) {
                int pop = populated(s, NULL);
                if (pop == 1)
                        return scope_take(s, why, whylen);
                if (pop == 0) {
                        /* Empty: a scope on its way out. */
                        for (int i = 0; i < SCOPE_GONE_TIMEOUT_MS / 100 && scope_exists(s); i++)
                                sleep_ms(100);
                        if (scope_exists(s)) {
                                glean_why(0, why, whylen, "%s is empty and still there after %d s", s->path,
                                         SCOPE_GONE_TIMEOUT_MS / 1000);
                                return -EBUSY;
                        }
                }

                pid_t pid;
                int r = placeholder_start(&pid, why, whylen);
                if (r < 0)
                        return r;
                r = scope_start_unit(s, pid, why, whylen);
                if (r == 0) {
                        /* The unit exists: look again once it is gone. */
                        placeholder_kill(s, pid, true);
                        sleep_ms(500);
                        continue;
                }
                if (r > 0) {
                        int i;
                        for (i = 0; i < SCOPE_START_TIMEOUT_MS / 20 && !pid_in_cgroup(pid, s->plan.cgroup); i++)
                                sleep_ms(20);
                        if (i == SCOPE_START_TIMEOUT_MS / 20) {
                                glean_why(0, why, whylen, "the placeholder (pid %d) is not in %s after %d s", (int) pid,
                                         s->path, SCOPE_START_TIMEOUT_MS / 1000);
                                r = -ETIMEDOUT;
                        } else
                                r = placeholder_into_init(s, pid, why, whylen);
                }
                if (r < 0) {
                        placeholder_kill(s, pid, true);
                        return r;
                }
                s->child = true;
                glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s created in %s (placeholder pid %d)",
                          s->plan.name, s->plan.slice, (int) pid);
                return 0;
        }
        glean_why(0, why, whylen, "the unit %s exists, its cgroup %s does not", s->plan.name, s->path);
        return -EEXIST;
}

void cg_scope_end(CgScope *s) {
        if (!s || s->pidfd < 0)
                return;
        if (populated(s, "slots") == 1) {
                glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s stays: it still holds processes in %s/slots",
                          s->plan.name, s->path);
                return;
        }
        pid_t first = 0;
        unsigned n = 0;
        if (procs_of(s, "init", &first, &n) < 0 || n != 1 || first != s->placeholder) {
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "jobs' scope %s: its placeholder (pid %d) is no longer alone in %s/init: the scope stays",
                          s->plan.name, (int) s->placeholder, s->path);
                return;
        }
        pid_t pid = s->placeholder;
        placeholder_kill(s, pid, s->child);
        int i;
        for (i = 0; i < SCOPE_GONE_TIMEOUT_MS / 50 && scope_exists(s); i++)
                sleep_ms(50);
        if (scope_exists(s))
                glean_log(LOG_WARNING, NULL, NULL, 0, "jobs' scope %s: placeholder pid %d ended, %s still there",
                          s->plan.name, (int) pid, s->path);
        else
                glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s ended (placeholder pid %d)", s->plan.name,
                          (int) pid);
}

void cg_scope_free(CgScope *s) {
        if (!s)
                return;
        if (s->pidfd >= 0)
                close(s->pidfd);
        if (s->mount_fd >= 0)
                close(s->mount_fd);
        free(s->path);
        free(s);
}

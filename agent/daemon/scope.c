/* SPDX-License-Identifier: Apache-2.0 */
/*
 * scope.c — the jobs' scope: under systemd the slots and their jobs live in
 * a transient scope unit of their own (glean-agent-jobs.scope, beside
 * glean-agent.service in its slice, Delegate=yes), not in the service's
 * cgroup. systemd before 254 (no DelegateSubgroup=) starts a service's
 * main process in the unit's own cgroup; had the slots made it an inner
 * cgroup (controllers enabled, children populated), the kernel would
 * refuse the next agent (EBUSY, 219/CGROUP) while any job ran on after a
 * crash. Now the agent alone stays in the service's cgroup, so systemd can
 * always place a new one there. (What Slurm does for slurmstepd.)
 *
 *   <slice>/glean-agent.service              the agent, nothing else
 *   <slice>/glean-agent-jobs.scope/init      the placeholder, alone
 *   <slice>/glean-agent-jobs.scope/slots/... the slots and jobs (cgroup.h)
 *
 * A scope needs a process when it is created and ends when it has none:
 * the placeholder, a child of the agent in a session of its own that
 * holds no fd of the agent's, blocks every signal, is exempt from the OOM
 * killer and pauses (never a job), keeps it while no job runs. The agent creates the scope through systemd's
 * StartTransientUnit (the private socket /run/systemd/private, as root;
 * else the system bus) and moves the placeholder into <scope>/init, so that
 * the scope's cgroup can enable controllers for the slots. A restarted
 * agent finds the scope there (its placeholder in init) and takes it as
 * it is: adopt.c re-adopts the jobs in it. A scope that has jobs but lost
 * its placeholder gets a new one.
 *
 * A clean exit (every job gone: systemctl stop, restart, glean agent
 * shutdown) kills the placeholder it started or found (by its pidfd,
 * after checking it is still the one process in init) and waits a little
 * for systemd to remove the scope: the next start makes a new one, and a
 * stopped agent leaves no process behind. Any other end (a crash, kill -9,
 * the watchdog, TimeoutStopSec) leaves the scope and its jobs to the next
 * agent. The scope has KillSignal=SIGKILL (the placeholder blocks the
 * rest) and is ordered Before= the service, so that at shutdown systemd
 * stops it only after the agent's graceful stop.
 *
 * Only when: the agent runs in a systemd service (its cgroup ends in
 * ".service", INVOCATION_ID is set, /run/systemd/system exists), uses the
 * cgroup executor, no BASE_CGROUP is set, and AGENT_JOBS_SCOPE (auto: the
 * service's name with "-jobs.scope") is not empty. Elsewhere nothing
 * changes: the slots are under the agent's own cgroup or BASE_CGROUP.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
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

#include "common/cleanup.h"
#include "common/file.h"
#include "daemon.h"

/* How long systemd may take to start the scope (TCG VMs are slow), and
 * to remove it after the placeholder's end. */
#define SCOPE_START_TIMEOUT_MS 30000
#define SCOPE_GONE_TIMEOUT_MS 10000

struct AgentScope {
        CgScopePlan plan;
        char path[PATH_MAX];     /* absolute: /sys/fs/cgroup/system.slice/glean-agent-jobs.scope */
        pid_t placeholder;
        int pidfd;               /* the placeholder's */
        bool child;              /* we started it: reap it */
};

__attribute__((format(printf, 3, 4))) static void path_fmt(char *buf, size_t len, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        (void) vsnprintf(buf, len, fmt, ap);
        va_end(ap);
}

static void sleep_ms(long ms) {
        struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
        (void) nanosleep(&ts, NULL);
}

/* The placeholder: no fd of the agent's, every signal blocked, paused
 * until SIGKILL. Only async-signal-safe calls after fork(). */
static int placeholder_start(pid_t *ret) {
        pid_t pid = fork();
        if (pid < 0)
                return -errno;
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

/* The first pid in <dir>/cgroup.procs and how many there are. */
static int procs_of(const char *dir, pid_t *ret_first, unsigned *ret_n) {
        char path[PATH_MAX];
        path_fmt(path, sizeof path, "%s/cgroup.procs", dir);
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        long pid;
        unsigned n = 0;
        pid_t first = 0;
        while (fscanf(f, "%ld", &pid) == 1)
                if (n++ == 0)
                        first = (pid_t) pid;
        fclose(f);
        *ret_first = first;
        *ret_n = n;
        return 0;
}

/* populated of <dir>/cgroup.events: 1, 0, or -errno (-ENOENT: no such cgroup). */
static int populated(const char *dir) {
        char path[PATH_MAX];
        path_fmt(path, sizeof path, "%s/cgroup.events", dir);
        FILE *f = fopen(path, "re");
        if (!f)
                return -errno;
        char line[128];
        int r = -EIO;
        while (fgets(line, sizeof line, f))
                if (strncmp(line, "populated ", 10) == 0)
                        r = line[10] == '1';
        fclose(f);
        return r;
}

static int write_pid(const char *dir, pid_t pid) {
        char path[PATH_MAX], buf[32];
        path_fmt(path, sizeof path, "%s/cgroup.procs", dir);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int n = snprintf(buf, sizeof buf, "%d", (int) pid);
        int r = write(fd, buf, (size_t) n) == n ? 0 : -errno;
        close(fd);
        return r;
}

/* Whether pid's cgroup v2 is cgroup (relative to the mount, "/a/b"). */
static bool pid_in_cgroup(pid_t pid, const char *cgroup) {
        char own[4096];
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
static int scope_start_unit(const AgentScope *s, pid_t pid, char *why, size_t whylen) {
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
static int placeholder_pin(AgentScope *s, pid_t pid) {
        char init[PATH_MAX + 8];
        path_fmt(init, sizeof init, "%s/init", s->path);
        int fd = pidfd_open(pid, 0);
        if (fd < 0)
                return -errno;
        pid_t first;
        unsigned n;
        if (procs_of(init, &first, &n) < 0 || n != 1 || first != pid) {
                close(fd);
                return -ESRCH;
        }
        s->placeholder = pid;
        s->pidfd = fd;
        return 0;
}

/* A new placeholder, moved into <scope>/init (made when absent). */
static int placeholder_into_init(AgentScope *s, pid_t pid, char *why, size_t whylen) {
        char init[PATH_MAX + 8];
        path_fmt(init, sizeof init, "%s/init", s->path);
        if (mkdir(init, 0755) < 0 && errno != EEXIST) {
                int r = -errno;
                glean_why(0, why, whylen, "cannot create %s: %s", init, strerror(errno));
                return r;
        }
        int r = write_pid(init, pid);
        if (r < 0) {
                glean_why(0, why, whylen, "cannot move the placeholder (pid %d) into %s: %s", (int) pid, init,
                         strerror(-r));
                return r;
        }
        return placeholder_pin(s, pid);
}

static void placeholder_kill(AgentScope *s, pid_t pid, bool child) {
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

/* The scope found, taken as it is, or created. */
static int scope_find_or_make(AgentScope *s, char *why, size_t whylen) {
        char init[PATH_MAX + 8];
        path_fmt(init, sizeof init, "%s/init", s->path);
        for (int attempt = 0; attempt < 3; attempt++) {
                int pop = populated(s->path);
                if (pop == 1) {
                        pid_t first = 0;
                        unsigned n = 0;
                        if (procs_of(init, &first, &n) >= 0 && n >= 1 && placeholder_pin(s, first) >= 0) {
                                glean_log(LOG_NOTICE, NULL, NULL, 0,
                                          "jobs' scope %s is there (placeholder pid %d): taken as it is",
                                          s->plan.name, (int) first);
                                return 0;
                        }
                        if (n > 1) {
                                glean_why(0, why, whylen, "%s holds %u processes, not one placeholder", init, n);
                                return -EBUSY;
                        }
                        /* The scope's root holds only what StartTransientUnit
                         * put there: the placeholder of an agent that died
                         * before it moved it into init. */
                        pid_t root_pid = 0;
                        unsigned root_n = 0;
                        if (n == 0 && procs_of(s->path, &root_pid, &root_n) >= 0 && root_n == 1 &&
                            placeholder_into_init(s, root_pid, why, whylen) >= 0) {
                                glean_log(LOG_NOTICE, NULL, NULL, 0,
                                          "jobs' scope %s is there, its placeholder (pid %d) moved into init",
                                          s->plan.name, (int) root_pid);
                                return 0;
                        }
                        /* Jobs, but no placeholder: a new one. */
                        pid_t pid;
                        int r = placeholder_start(&pid);
                        if (r < 0) {
                                glean_why(0, why, whylen, "cannot start the placeholder: %s", strerror(-r));
                                return r;
                        }
                        r = placeholder_into_init(s, pid, why, whylen);
                        if (r < 0) {
                                placeholder_kill(s, pid, true);
                                return r;
                        }
                        s->child = true;
                        glean_log(LOG_NOTICE, NULL, NULL, 0,
                                  "jobs' scope %s is there without its placeholder: a new one, pid %d", s->plan.name,
                                  (int) pid);
                        return 0;
                }
                if (pop == 0) {
                        /* Empty: a scope on its way out. */
                        for (int i = 0; i < SCOPE_GONE_TIMEOUT_MS / 100 && access(s->path, F_OK) == 0; i++)
                                sleep_ms(100);
                        if (access(s->path, F_OK) == 0) {
                                glean_why(0, why, whylen, "%s is empty and still there after %d s", s->path,
                                         SCOPE_GONE_TIMEOUT_MS / 1000);
                                return -EBUSY;
                        }
                }

                pid_t pid;
                int r = placeholder_start(&pid);
                if (r < 0) {
                        glean_why(0, why, whylen, "cannot start the placeholder: %s", strerror(-r));
                        return r;
                }
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

int agent_scope_setup(Agent *a, char **ret_base) {
        *ret_base = NULL;
        ConfigError err;
        char *knob = NULL;
        int r = config_get(a->cfg, "AGENT_JOBS_SCOPE", &knob, &err);
        if (r == -ENOENT)
                knob = NULL;
        else if (r < 0)
                return agent_log_config_error(&err, r, "AGENT_JOBS_SCOPE");
        else if (!*knob) {
                free(knob);
                return 0; /* off */
        }
        if (!getenv("INVOCATION_ID") || access("/run/systemd/system", F_OK) < 0) {
                free(knob);
                return 0;
        }
        char own[4096];
        r = cg_own(0, own, sizeof own);
        AgentScope *s = calloc(1, sizeof *s);
        if (!s) {
                free(knob);
                return -ENOMEM;
        }
        s->pidfd = -1;
        if (r >= 0)
                r = cg_scope_plan(own, knob, &s->plan);
        if (r == -ENOMEDIUM || (r < 0 && r != -EINVAL)) {
                free(knob);
                free(s);
                return 0; /* not a service's cgroup: none */
        }
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "AGENT_JOBS_SCOPE = %s: not a scope's name (NAME.scope)", knob);
                free(knob);
                free(s);
                return r;
        }
        free(knob);
        const char *mount = access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0 ? "/sys/fs/cgroup"
                                                                                   : "/sys/fs/cgroup/unified";
        path_fmt(s->path, sizeof s->path, "%s%s", mount, s->plan.cgroup);
        char why[512] = "";
        r = scope_find_or_make(s, why, sizeof why);
        if (r < 0) {
                GleanLogField f[] = { { "GLEAN_CGROUP", s->path } };
                glean_log(LOG_WARNING, NULL, f, 1,
                          "no jobs' scope %s: %s; the slots go into %s's own cgroup, where systemd before 254 "
                          "cannot restart the agent while jobs run",
                          s->plan.name, why, s->plan.service);
                free(s);
                return r;
        }
        *ret_base = strdup(s->plan.cgroup);
        if (!*ret_base) {
                agent_scope_free(s);
                return -ENOMEM;
        }
        a->scope = s;
        return 1;
}

void agent_scope_end(AgentScope *s) {
        if (!s || s->pidfd < 0)
                return;
        char slots[PATH_MAX + 8];
        path_fmt(slots, sizeof slots, "%s/slots", s->path);
        int pop = populated(slots);
        if (pop == 1) {
                glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s stays: it still holds processes in %s",
                          s->plan.name, slots);
                return;
        }
        char init[PATH_MAX + 8];
        path_fmt(init, sizeof init, "%s/init", s->path);
        pid_t first = 0;
        unsigned n = 0;
        if (procs_of(init, &first, &n) < 0 || n != 1 || first != s->placeholder) {
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "jobs' scope %s: its placeholder (pid %d) is no longer alone in %s: the scope stays",
                          s->plan.name, (int) s->placeholder, init);
                return;
        }
        pid_t pid = s->placeholder;
        placeholder_kill(s, pid, s->child);
        int i;
        for (i = 0; i < SCOPE_GONE_TIMEOUT_MS / 50 && access(s->path, F_OK) == 0; i++)
                sleep_ms(50);
        if (access(s->path, F_OK) == 0)
                glean_log(LOG_WARNING, NULL, NULL, 0, "jobs' scope %s: placeholder pid %d ended, %s still there",
                          s->plan.name, (int) pid, s->path);
        else
                glean_log(LOG_NOTICE, NULL, NULL, 0, "jobs' scope %s ended (placeholder pid %d)", s->plan.name,
                          (int) pid);
}

void agent_scope_free(AgentScope *s) {
        if (!s)
                return;
        if (s->pidfd >= 0)
                close(s->pidfd);
        free(s);
}

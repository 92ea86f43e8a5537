/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-ctl.c — what the agent does to one cgroup: limits, freezing,
 * killing, signalling, usage, and watching the kernel's event files.
 *
 * A control file that does not exist is a controller not enabled here
 * (-ENODEV, or skipped where the header says so), never a failure of the
 * agent: on a hybrid host only the core files are there (cgroup.freeze,
 * cgroup.kill, cgroup.events, cpu.stat).
 *
 * Signals go through pidfds: a pid read from cgroup.procs is pinned with
 * pidfd_open() and signalled only if cgroup.procs still lists it, so a pid
 * reused by a process elsewhere is never hit.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/pidfd.h>
#include <time.h>
#include <unistd.h>

#include "cgroup-internal.h"

/* cg_kill_fallback(): rounds of SIGKILL, and how long each waits for the
 * cgroup to empty. */
#define KILL_ROUNDS 20
#define KILL_ROUND_WAIT_MS 50

static void sleep_ms(long ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* ---- limits ---- */

typedef struct LimitWriter {
        Cg *cg;
        unsigned applied;
        int error;       /* the first one */
        char *why;
        size_t whylen;
        char skipped[256];
} LimitWriter;

static void limit_write(LimitWriter *w, unsigned bit, const char *file, const char *value) {
        char reason[256];
        int k;

        k = cg_write_at(w->cg->dirfd, w->cg->path, file, value, reason, sizeof(reason));
        if (k == -ENODEV) {
                size_t used = strlen(w->skipped);

                snprintf(w->skipped + used, sizeof(w->skipped) - used, "%s%s", used ? ", " : "", file);
                return;
        }
        if (k < 0) {
                if (w->error == 0) {
                        w->error = k;
                        glean_why(k, w->why, w->whylen, "%s", reason);
                }
                return;
        }
        w->applied |= bit;
}

/* An int64_t limit as the kernel wants it: false when it is not to be
 * written (0), -EINVAL in *error when it cannot be. */
static bool limit_value(int64_t v, char *buf, size_t len, int *error) {
        if (v == 0)
                return false;
        if (v == CG_MAX)
                snprintf(buf, len, "max");
        else if (v == CG_ZERO)
                snprintf(buf, len, "0");
        else if (v > 0)
                snprintf(buf, len, "%" PRId64, v);
        else {
                *error = -EINVAL;
                return false;
        }
        return true;
}

int cg_set_limits(Cg *cg, const CgLimits *l, unsigned *ret_applied, char *why, size_t whylen) {
        LimitWriter w = { .cg = cg, .why = why, .whylen = whylen };
        static const struct {
                size_t offset;
                const char *file;
                unsigned bit;
        } int64s[] = {
                { offsetof(CgLimits, memory_max), "memory.max", CG_MEMORY },
                { offsetof(CgLimits, memory_high), "memory.high", CG_MEMORY },
                { offsetof(CgLimits, memory_swap_max), "memory.swap.max", CG_MEMORY },
                { offsetof(CgLimits, pids_max), "pids.max", CG_PIDS },
        };
        char buf[64];
        int bad = 0;

        if (ret_applied)
                *ret_applied = 0;
        if (why && whylen)
                why[0] = '\0';
        if (!cg || !l)
                return -EINVAL;

        /* Everything is checked before anything is written. */
        if (l->cpu_weight > 10000)
                return glean_why(-EINVAL, why, whylen, "cpu.weight %" PRIu64 " is out of 1..10000", l->cpu_weight);
        if (l->io_weight > 10000)
                return glean_why(-EINVAL, why, whylen, "io.weight %" PRIu64 " is out of 1..10000", l->io_weight);
        if (l->cpu_max_quota < 0 || l->cpu_max_period < 0)
                return glean_why(-EINVAL, why, whylen, "cpu.max quota %" PRId64 " / period %" PRId64 " is negative",
                              l->cpu_max_quota, l->cpu_max_period);
        for (size_t i = 0; i < sizeof(int64s) / sizeof(int64s[0]); i++) {
                int64_t v = *(const int64_t *) ((const char *) l + int64s[i].offset);

                (void) limit_value(v, buf, sizeof(buf), &bad);
                if (bad < 0)
                        return glean_why(-EINVAL, why, whylen, "%s %" PRId64 " is negative (CG_MAX, CG_ZERO or > 0)",
                                      int64s[i].file, v);
        }
        if (l->cpuset_cpus && strpbrk(l->cpuset_cpus, "\n"))
                return glean_why(-EINVAL, why, whylen, "cpuset.cpus '%s' has a newline", l->cpuset_cpus);

        if (l->cpu_weight) {
                snprintf(buf, sizeof(buf), "%" PRIu64, l->cpu_weight);
                limit_write(&w, CG_CPU, "cpu.weight", buf);
        }
        if (l->cpu_max_quota) {
                int64_t period = l->cpu_max_period ? l->cpu_max_period : 100000;

                if (l->cpu_max_quota == CG_MAX)
                        snprintf(buf, sizeof(buf), "max %" PRId64, period);
                else
                        snprintf(buf, sizeof(buf), "%" PRId64 " %" PRId64, l->cpu_max_quota, period);
                limit_write(&w, CG_CPU, "cpu.max", buf);
        }
        if (l->cpuset_cpus)
                limit_write(&w, CG_CPUSET, "cpuset.cpus", l->cpuset_cpus);
        for (size_t i = 0; i < sizeof(int64s) / sizeof(int64s[0]); i++) {
                int64_t v = *(const int64_t *) ((const char *) l + int64s[i].offset);

                if (limit_value(v, buf, sizeof(buf), &bad))
                        limit_write(&w, int64s[i].bit, int64s[i].file, buf);
        }
        if (l->io_weight) {
                snprintf(buf, sizeof(buf), "default %" PRIu64, l->io_weight);
                limit_write(&w, CG_IO, "io.weight", buf);
        }

        if (ret_applied)
                *ret_applied = w.applied;
        if (w.error < 0)
                return w.error;
        if (w.skipped[0])
                glean_why(0, why, whylen, "skipped %s in %s: controller not enabled here", w.skipped, cg->path);
        return 0;
}

/* ---- freezing and the event files ---- */

int cg_freeze(Cg *cg, bool frozen) {
        if (!cg)
                return -EINVAL;
        return cg_write_at(cg->dirfd, cg->path, "cgroup.freeze", frozen ? "1" : "0", NULL, 0);
}

int cg_events(Cg *cg, bool *ret_populated, bool *ret_frozen) {
        if (!cg)
                return -EINVAL;
        return cg_events_at(cg->dirfd, ret_populated, ret_frozen);
}

int cg_events_at(int dirfd, bool *ret_populated, bool *ret_frozen) {
        char buf[256];
        uint64_t populated = 0, frozen = 0;
        int k;

        k = cg_read_small_at(dirfd, "cgroup.events", buf, sizeof(buf));
        if (k == -ENOENT)
                return -ENODEV;
        if (k < 0)
                return k;
        k = cg_keyed_get(buf, "populated", &populated);
        if (k < 0)
                return k;
        (void) cg_keyed_get(buf, "frozen", &frozen); /* before 5.2: never frozen */
        if (ret_populated)
                *ret_populated = populated != 0;
        if (ret_frozen)
                *ret_frozen = frozen != 0;
        return 0;
}

int cg_memory_events(Cg *cg, uint64_t *ret_oom, uint64_t *ret_oom_kill) {
        char buf[512];
        uint64_t oom = 0, oom_kill = 0;
        int k;

        if (!cg)
                return -EINVAL;
        k = cg_read_small_at(cg->dirfd, "memory.events", buf, sizeof(buf));
        if (k == -ENOENT) {
                if (ret_oom)
                        *ret_oom = 0;
                if (ret_oom_kill)
                        *ret_oom_kill = 0;
                return 0;
        }
        if (k < 0)
                return k;
        (void) cg_keyed_get(buf, "oom", &oom);
        (void) cg_keyed_get(buf, "oom_kill", &oom_kill);
        if (ret_oom)
                *ret_oom = oom;
        if (ret_oom_kill)
                *ret_oom_kill = oom_kill;
        return 1;
}

/* ---- signals ---- */

static bool pid_listed(const pid_t *v, size_t n, pid_t pid) {
        for (size_t i = 0; i < n; i++)
                if (v[i] == pid)
                        return true;
        return false;
}

typedef struct SignalRun {
        int sig;
        size_t signalled;
        int error;
} SignalRun;

/* sig to every process in cgroup.procs of dirfd (not below), each pinned
 * by a pidfd and signalled only if the cgroup still lists it then. */
static int signal_one_cgroup(int dirfd, void *userdata) {
        SignalRun *run = userdata;
        pid_t *before = NULL, *after = NULL;
        size_t nb = 0, na = 0;
        int *fds = NULL;
        int k;

        k = cg_procs_at(dirfd, &before, &nb);
        if (k < 0)
                return k;
        if (nb == 0)
                goto done;
        fds = malloc(nb * sizeof(int));
        if (!fds) {
                k = -ENOMEM;
                goto done;
        }
        for (size_t i = 0; i < nb; i++) {
                fds[i] = pidfd_open(before[i], 0);
                if (fds[i] < 0)
                        fds[i] = -errno;
        }
        k = cg_procs_at(dirfd, &after, &na);
        if (k < 0)
                goto done;
        for (size_t i = 0; i < nb; i++) {
                int r;

                if (!pid_listed(after, na, before[i]))
                        continue; /* gone, or moved out */
                if (fds[i] >= 0)
                        r = pidfd_send_signal(fds[i], run->sig, NULL, 0);
                else if (fds[i] == -ENOSYS) /* before 5.3 */
                        r = kill(before[i], run->sig);
                else
                        continue; /* exited between the two reads */
                if (r == 0)
                        run->signalled++;
                else if (errno != ESRCH && run->error == 0)
                        run->error = -errno;
        }
done:
        if (fds)
                for (size_t i = 0; i < nb; i++)
                        if (fds[i] >= 0)
                                (void) close(fds[i]);
        free(fds);
        free(before);
        free(after);
        return k;
}

int cg_signal(Cg *cg, int sig) {
        SignalRun run = { .sig = sig };
        int k;

        if (!cg || sig < 0 || sig >= NSIG)
                return -EINVAL;
        k = cg_walk(cg->dirfd, signal_one_cgroup, &run);
        if (k < 0)
                return k;
        if (run.error < 0 && run.signalled == 0)
                return run.error;
        return run.signalled > INT32_MAX ? INT32_MAX : (int) run.signalled;
}

static int count_pids(const Cg *cg, size_t *ret) {
        pid_t *v;
        int k;

        k = cg_pids(cg, &v, ret);
        if (k < 0)
                return k;
        free(v);
        return 0;
}

int cg_kill_fallback(Cg *cg) {
        bool froze = cg_freeze(cg, true) >= 0;
        size_t n = 1;
        int k = 0;

        for (int round = 0; round < KILL_ROUNDS && n > 0; round++) {
                k = cg_signal(cg, SIGKILL);
                if (k < 0)
                        break;
                for (int waited = 0; waited < KILL_ROUND_WAIT_MS; waited += 2) {
                        k = count_pids(cg, &n);
                        if (k < 0 || n == 0)
                                break;
                        sleep_ms(2);
                }
                if (k < 0)
                        break;
        }
        if (froze)
                (void) cg_freeze(cg, false);
        if (k < 0)
                return k;
        return n == 0 ? 0 : -EBUSY;
}

int cg_kill(Cg *cg) {
        int k;

        if (!cg)
                return -EINVAL;
        k = cg_write_at(cg->dirfd, cg->path, "cgroup.kill", "1", NULL, 0);
        if (k == -ENODEV) /* before 5.14 */
                return cg_kill_fallback(cg);
        return k;
}

/* ---- usage ---- */

int cg_usage(Cg *cg, CgUsage *ret) {
        char buf[1024];
        CgUsage u = { .memory_current = -1, .memory_peak = -1, .pids_current = -1 };
        int64_t v;
        int k;

        if (!cg || !ret)
                return -EINVAL;
        k = cg_read_small_at(cg->dirfd, "cpu.stat", buf, sizeof(buf));
        if (k < 0 && k != -ENOENT)
                return k;
        if (k == 0) {
                (void) cg_keyed_get(buf, "usage_usec", &u.usage_usec);
                (void) cg_keyed_get(buf, "user_usec", &u.user_usec);
                (void) cg_keyed_get(buf, "system_usec", &u.system_usec);
                (void) cg_keyed_get(buf, "nr_periods", &u.nr_periods);
                (void) cg_keyed_get(buf, "nr_throttled", &u.nr_throttled);
                (void) cg_keyed_get(buf, "throttled_usec", &u.throttled_usec);
        }
        if (cg_read_int64_at(cg->dirfd, "memory.current", &v) == 0)
                u.memory_current = v;
        if (cg_read_int64_at(cg->dirfd, "memory.peak", &v) == 0)
                u.memory_peak = v;
        if (cg_read_int64_at(cg->dirfd, "pids.current", &v) == 0)
                u.pids_current = v;
        *ret = u;
        return 0;
}

/* ---- watching ---- */

/* Reads the file again from the start: kernfs reports POLLPRI until the
 * open file has seen the new contents. -ENODEV once the cgroup is gone. */
static int rearm(int fd) {
        char buf[512];

        if (pread(fd, buf, sizeof(buf), 0) < 0)
                return -errno;
        return 0;
}

static int on_event_file(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Cg *cg = userdata;

        (void) revents;
        if (rearm(fd) < 0)
                /* The cgroup was removed: the file would report forever. */
                (void) sd_event_source_set_enabled(s, SD_EVENT_OFF);
        if (cg->watch_fn)
                cg->watch_fn(cg, cg->watch_userdata);
        return 0;
}

static int watch_file(Cg *cg, sd_event *ev, const char *file, int *ret_fd, sd_event_source **ret_source) {
        _cleanup_close_ int fd = -1;
        int k;

        fd = openat(cg->dirfd, file, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        k = rearm(fd);
        if (k < 0)
                return k;
        k = sd_event_add_io(ev, ret_source, fd, EPOLLPRI, on_event_file, cg);
        if (k < 0)
                return k;
        (void) sd_event_source_set_description(*ret_source, file);
        *ret_fd = TAKE_FD(fd);
        return 0;
}

int cg_watch(Cg *cg, sd_event *ev, CgEventFn cb, void *userdata) {
        int k;

        if (!cg || !ev || !cb)
                return -EINVAL;
        cg_unwatch(cg); /* a second call replaces the first */
        k = watch_file(cg, ev, "cgroup.events", &cg->events_fd, &cg->events_source);
        if (k < 0)
                return k == -ENOENT ? -ENODEV : k;
        k = watch_file(cg, ev, "memory.events", &cg->memory_fd, &cg->memory_source);
        if (k < 0 && k != -ENOENT) {
                cg_unwatch(cg);
                return k;
        }
        cg->watch_fn = cb;
        cg->watch_userdata = userdata;
        return 0;
}

void cg_unwatch(Cg *cg) {
        if (!cg)
                return;
        cg->events_source = sd_event_source_disable_unref(cg->events_source);
        cg->memory_source = sd_event_source_disable_unref(cg->memory_source);
        if (cg->events_fd >= 0)
                (void) close(cg->events_fd);
        if (cg->memory_fd >= 0)
                (void) close(cg->memory_fd);
        cg->events_fd = cg->memory_fd = -1;
        cg->watch_fn = NULL;
        cg->watch_userdata = NULL;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-cgroup.c — the cgroup v2 executor: a job is everything in its own
 * cgroup (<base>/slots/.../job), which its main process is cloned straight
 * into (clone3 CLONE_INTO_CGROUP), so no process of the job is ever
 * outside it and none can leave it (the job never runs as root and the
 * cgroup's files are root's).
 *
 * Suspend and resume write cgroup.freeze and return; the kernel confirms
 * with cgroup.events (frozen 1/0), which cg_watch() delivers from the
 * event loop: the time from the write to the confirmation is kept per job,
 * and a confirmation that does not come within FREEZE_TIMEOUT is logged.
 *
 * Exit: the main process's pidfd says it has exited; it is reaped at once
 * (its status and rusage), whatever is left in the cgroup is killed through
 * cgroup.kill, and the exit is reported once cgroup.events says
 * populated 0 (re-checked with a backing-off timer as well, reported anyway
 * after DRAIN_TIMEOUT, with a reason). The CPU of the report is the
 * cgroup's cpu.stat, taken when the cgroup is empty: every process of the
 * job is in it. Then the job cgroup and the scratch directory go.
 *
 * Out of memory: memory.events oom_kill of the job cgroup (it counts the
 * processes of this cgroup that any OOM killer ended, a limit on the slot
 * above it included) is read when the job starts, on each change (the
 * file is watched with cgroup.events) and at the end; more at the end than
 * at the start is an OOM kill. A rise while the job runs ends the job at
 * once: the OOM killer takes one process (the largest), and what is left
 * of a job that outgrew its memory (a parent waiting for that child) is
 * killed rather than left to run on.
 *
 * A cgroup that will not empty (a process stuck in the kernel, which no
 * signal ends) is reported after the job's kill_timeout with cgroup_stuck:
 * the caller decides what becomes of its slot.
 *
 * The process watched is the job's reaper (agent/exec/exec-child.c), in the
 * job's cgroup beside the job: it is frozen with it (it only waits), a
 * signal to every process passes it by (it blocks them all), cgroup.kill
 * ends it too (then its own status, SIGKILL, is the job's, as it is).
 *
 * Adoption (agent_exec_adopt_id): a job an earlier agent started, found
 * running in its cgroup. Its reaper is not our child: it is pinned with
 * pidfd_open() and its start time (not reaped), and its exit starts the
 * end (the rest is killed, the cgroup drained); the status is the one the
 * reaper wrote to the exit file, or unknown without one (ADOPTED_REASON).
 * Without a reaper known, the job's main process is pinned instead (the
 * status then unknown); a job whose main process is gone, or not known,
 * is its cgroup.
 *
 * Cleanup (agent_exec_cleanup, exec-cgroup-cleanup.c): a leftover job
 * cgroup nobody adopts is killed, drained (blocking, bounded) and removed.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/timer.h"
#include "cgroup.h"
#include "exec-internal.h"
#include "log.h"

#define USEC_PER_MSEC 1000ULL
#define USEC_PER_SEC 1000000ULL

/* How long the kernel may take to confirm a freeze or a thaw. */
#define FREEZE_TIMEOUT_USEC (5 * USEC_PER_SEC)
/* How long the cgroup may take to empty once the main process has exited
 * and the rest was killed (spec->kill_timeout unless set); the first
 * re-check and the largest interval. */
#define DRAIN_TIMEOUT_USEC (5 * USEC_PER_SEC)
#define DRAIN_FIRST_POLL_USEC (10 * USEC_PER_MSEC)
#define DRAIN_MAX_POLL_USEC (500 * USEC_PER_MSEC)
/* agent_executor_free(): how long to wait for a killed job's cgroup. */
#define FREE_DRAIN_TIMEOUT_MS 5000

#define ADOPTED_REASON "the agent restarted while the job ran: its exit status is unknown"

typedef struct CgJob CgJob;

/* A job's cgroup that was not empty when the job was reported (its
 * processes would not die in time): watched, and removed once it empties
 * (a process stuck in the kernel may still go). */
typedef struct Lingering {
        struct Lingering *next;
        struct CgExecutor *owner;
        Cg *cg;
} Lingering;

typedef struct CgExecutor {
        ExecExecutor x;
        CgRoot *root;
        Lingering *lingering;
        bool closing; /* being freed: nothing lingers any more */
} CgExecutor;

struct CgJob {
        ExecJob core;            /* result: the status once the main process exited, all of it once reported */
        Cg *cg;                  /* NULL once removed */
        char *cg_path;           /* absolute, for messages */
        sd_event_source *freeze_timer, *drain_timer;
        uint64_t oom_kill_start; /* memory.events oom_kill when the job started */
        uint64_t oom_kill_seen;
        bool main_exited;        /* reaped: draining the cgroup */
        uint64_t drain_deadline; /* CLOCK_MONOTONIC µs */
        uint64_t drain_poll;     /* the next re-check interval */
        uint64_t drain_timeout;  /* µs: spec->kill_timeout, or DRAIN_TIMEOUT_USEC */
        bool oom_ending;         /* killed for an OOM kill while it ran */
        int freeze_target;       /* -1: nothing pending, else 1 frozen / 0 thawed awaited */
        uint64_t freeze_t0;      /* CLOCK_MONOTONIC ns of the write */
        int freeze_result;       /* µs of the last confirmed, or -ENODATA/-ETIMEDOUT */
        bool adopted;            /* agent_exec_adopt_id(): the reaper or main process (if pinned) is not our child */
};

static uint64_t now_ns(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* ---- the job's cgroup ---- */

/* spec->cgroup, or "<_CONDOR_SLOT>/job". */
static int job_cgroup_rel(AgentExecutor *ex, const AgentJobSpec *spec, char **ret) {
        const char *slot = NULL;

        if (spec->cgroup) {
                *ret = strdup(spec->cgroup);
                return *ret ? 0 : -ENOMEM;
        }
        for (char **e = spec->envp; e && *e; e++)
                if (strncmp(*e, "_CONDOR_SLOT=", 13) == 0)
                        slot = *e + 13;
        if (!slot || !*slot || strchr(slot, '/'))
                return agent_exec_error(ex, -EINVAL,
                                        "the job has no cgroup: neither a cgroup path nor a usable _CONDOR_SLOT in its "
                                        "environment");
        if (asprintf(ret, "%s/job", slot) < 0)
                return -ENOMEM;
        return 0;
}

static void linger_unlink(Lingering *l) {
        for (Lingering **pp = &l->owner->lingering; *pp; pp = &(*pp)->next)
                if (*pp == l) {
                        *pp = l->next;
                        break;
                }
}

static void on_linger_event(Cg *cg, void *userdata) {
        Lingering *l = userdata;
        bool populated = true;

        if (cg_events(cg, &populated, NULL) >= 0 && populated)
                return;
        int r = cg_remove(cg);
        if (r < 0)
                glean_log_warning("cannot remove the cgroup %s, empty at last: %s", cg_path(cg), strerror(-r));
        else
                glean_log_info("the cgroup %s emptied at last and is removed", cg_path(cg));
        linger_unlink(l);
        cg_free(l->cg);
        free(l);
}

/* A populated cgroup left by job j: watched until it empties. */
static bool linger(CgJob *j) {
        CgExecutor *cx = (CgExecutor *) j->core.owner;
        Lingering *l = calloc(1, sizeof(*l));

        if (!l || cx->closing) {
                free(l);
                return false;
        }
        l->owner = cx;
        l->cg = j->cg;
        if (cg_watch(l->cg, cx->x.event, on_linger_event, l) < 0) {
                free(l);
                return false;
        }
        l->next = cx->lingering;
        cx->lingering = l;
        j->cg = NULL;
        return true;
}

/* rmdir of the job cgroup (it must be empty); the Cg is closed, or kept
 * watched while processes that would not die are still in it. */
static void job_remove_cgroup(ExecJob *e) {
        CgJob *j = (CgJob *) e;
        int r;

        if (!j->cg)
                return;
        r = cg_remove(j->cg);
        if (r == -EBUSY && linger(j)) {
                glean_log_warning("the cgroup %s of job %d is not empty: removed once it is", j->cg_path,
                                  (int) j->core.base.pid);
                return;
        }
        if (r < 0)
                glean_log_warning("cannot remove the cgroup %s of job %d: %s", j->cg_path, (int) j->core.base.pid,
                                  strerror(-r));
        cg_free(j->cg);
        j->cg = NULL;
}

/* At the executor's end: removed if empty by now (free), else closed. */
static void lingering_free(CgExecutor *cx, bool remove) {
        cx->closing = true;
        while (cx->lingering) {
                Lingering *l = cx->lingering;
                cx->lingering = l->next;
                if (remove)
                        (void) cg_remove(l->cg);
                cg_free(l->cg);
                free(l);
        }
}

static void job_destroy(ExecJob *e) {
        CgJob *j = (CgJob *) e;

        j->freeze_timer = sd_event_source_disable_unref(j->freeze_timer);
        j->drain_timer = sd_event_source_disable_unref(j->drain_timer);
        exec_job_release(e);
        cg_free(j->cg); /* removed by now, or left behind (logged) */
        free(j->cg_path);
        free(j);
}

/* ---- freezing ---- */

static void freeze_confirmed(CgJob *j) {
        uint64_t us = (now_ns() - j->freeze_t0) / 1000;

        j->freeze_result = us > INT_MAX ? INT_MAX : (int) us;
        glean_log_debug("job %d %s in %d us", (int) j->core.base.pid, j->freeze_target ? "frozen" : "thawed",
                        j->freeze_result);
        j->freeze_target = -1;
        if (j->freeze_timer)
                (void) sd_event_source_set_enabled(j->freeze_timer, SD_EVENT_OFF);
}

/* Confirms a pending freeze/thaw if cgroup.events says so. */
static void freeze_check(CgJob *j) {
        bool frozen;

        if (j->freeze_target < 0 || !j->cg || cg_events(j->cg, NULL, &frozen) < 0)
                return;
        if (frozen == (j->freeze_target == 1))
                freeze_confirmed(j);
}

static int on_freeze_timeout(sd_event_source *s, uint64_t usec, void *userdata) {
        CgJob *j = userdata;

        (void) s;
        (void) usec;
        if (j->freeze_target < 0)
                return 0;
        freeze_check(j);
        if (j->freeze_target < 0) {
                glean_log_warning("job %d: the cgroup %s was %s, but the kernel's notification never came",
                                  (int) j->core.base.pid, j->cg_path, j->freeze_target ? "frozen" : "thawed");
                return 0;
        }
        glean_log_warning("job %d: the cgroup %s is not %s %llu s after writing cgroup.freeze", (int) j->core.base.pid,
                          j->cg_path, j->freeze_target ? "frozen" : "thawed",
                          (unsigned long long) (FREEZE_TIMEOUT_USEC / USEC_PER_SEC));
        j->freeze_result = -ETIMEDOUT;
        j->freeze_target = -1;
        return 0;
}

static int cgx_freeze(AgentJob *job, bool frozen) {
        CgJob *j = (CgJob *) job;
        int r;

        if (j->main_exited || !j->cg)
                return -ESRCH;
        j->freeze_t0 = now_ns();
        r = cg_freeze(j->cg, frozen);
        if (r < 0)
                return r;
        j->freeze_target = frozen ? 1 : 0;
        /* Already there (nothing to wait for, or asked twice: the kernel
         * then sends no notification). */
        freeze_check(j);
        if (j->freeze_target < 0)
                return 0;
        bool made = !j->freeze_timer;
        r = glean_timer_arm_in(j->core.owner->event, &j->freeze_timer, CLOCK_MONOTONIC, FREEZE_TIMEOUT_USEC,
                               10 * USEC_PER_MSEC, on_freeze_timeout, j);
        if (r >= 0 && made)
                (void) sd_event_source_set_description(j->freeze_timer, "agent-job-freeze");
        if (r < 0)
                glean_log_warning("job %d: cannot time the confirmation of cgroup.freeze: %s", (int) job->pid,
                                  strerror(-r));
        return 0;
}

static int cgx_suspend(AgentJob *job) {
        return cgx_freeze(job, true);
}

static int cgx_resume(AgentJob *job) {
        return cgx_freeze(job, false);
}

static int cgx_freeze_latency_us(AgentJob *job) {
        CgJob *j = (CgJob *) job;

        return j->freeze_target >= 0 ? -EINPROGRESS : j->freeze_result;
}

/* ---- the exit ---- */

/* memory.events: a new OOM kill while the job runs ends the rest of it. */
static void oom_check(CgJob *j) {
        uint64_t oom_kill = 0;
        int r;

        if (!j->cg || cg_memory_events(j->cg, NULL, &oom_kill) < 0)
                return;
        if (oom_kill <= j->oom_kill_seen)
                return;
        j->oom_kill_seen = oom_kill;
        if (j->core.base.exited)
                return;
        if (j->main_exited || j->oom_ending) {
                glean_log_notice("job %d: the OOM killer ended a process in %s (oom_kill %llu)",
                                 (int) j->core.base.pid, j->cg_path, (unsigned long long) oom_kill);
                return;
        }
        glean_log_notice("job %d: the OOM killer ended a process in %s (oom_kill %llu): killing the rest of the job",
                         (int) j->core.base.pid, j->cg_path, (unsigned long long) oom_kill);
        j->oom_ending = true;
        r = cg_kill(j->cg);
        if (r < 0)
                glean_log_warning("job %d: cannot kill the rest of the job in %s: %s", (int) j->core.base.pid,
                                  j->cg_path, strerror(-r));
}

static void reason_add(AgentJobExit *ex, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void reason_add(AgentJobExit *ex, const char *fmt, ...) {
        size_t n = strlen(ex->reason);
        va_list ap;

        if (n > 0 && n + 2 < sizeof(ex->reason)) {
                memcpy(ex->reason + n, "; ", 3);
                n += 2;
        }
        if (n + 1 >= sizeof(ex->reason))
                return;
        va_start(ap, fmt);
        vsnprintf(ex->reason + n, sizeof(ex->reason) - n, fmt, ap);
        va_end(ap);
}

/* The cgroup is empty (drained) or would not empty: the report. */
static void job_report(CgJob *j, bool drained) {
        AgentJobExit *ex = &j->core.result;
        CgUsage u;

        j->drain_timer = sd_event_source_disable_unref(j->drain_timer);
        j->freeze_timer = sd_event_source_disable_unref(j->freeze_timer);
        j->core.pid_source = sd_event_source_disable_unref(j->core.pid_source);
        j->freeze_target = -1;

        if (cg_usage(j->cg, &u) >= 0) {
                if (u.usage_usec > 0) {
                        ex->user_cpu = (double) u.user_usec / 1e6;
                        ex->sys_cpu = (double) u.system_usec / 1e6;
                }
                if (u.memory_peak >= 0)
                        ex->max_rss_kb = u.memory_peak / 1024;
        }
        oom_check(j);
        if (j->oom_kill_seen > j->oom_kill_start) {
                unsigned long long n = (unsigned long long) (j->oom_kill_seen - j->oom_kill_start);

                ex->oom_killed = true;
                reason_add(ex, "out of memory: the kernel's OOM killer ended %llu process%s of the job", n,
                           n == 1 ? "" : "es");
        }
        if (ex->status_unknown)
                reason_add(ex, "%s", ADOPTED_REASON);
        if (!drained) {
                ex->cgroup_stuck = true;
                reason_add(ex, "the job's cgroup %s would not empty within %llu s after its main process exited",
                           j->cg_path, (unsigned long long) ((j->drain_timeout + USEC_PER_SEC / 2) / USEC_PER_SEC));
                glean_log_warning("job %d: the cgroup %s would not empty", (int) j->core.base.pid, j->cg_path);
        }
        j->core.base.exited = true;
        cg_unwatch(j->cg);

        exec_job_report(&j->core, job_remove_cgroup, job_destroy);
}

static uint64_t mono_usec(void) {
        return now_ns() / 1000;
}

static int on_drain_timer(sd_event_source *s, uint64_t usec, void *userdata);

/* (Re)arms the re-check of a draining cgroup. */
static int drain_arm(CgJob *j) {
        bool made = !j->drain_timer;
        int r = glean_timer_arm_in(j->core.owner->event, &j->drain_timer, CLOCK_MONOTONIC, j->drain_poll, USEC_PER_MSEC,
                                   on_drain_timer, j);
        if (r >= 0 && made)
                (void) sd_event_source_set_description(j->drain_timer, "agent-job-drain");
        if (r >= 0)
                j->drain_poll = j->drain_poll * 2 > DRAIN_MAX_POLL_USEC ? DRAIN_MAX_POLL_USEC : j->drain_poll * 2;
        return r;
}

/* After the main process: reports now if the cgroup is empty, else
 * (re)arms the re-check timer; reports anyway past the deadline. */
static void drain_check(CgJob *j) {
        bool populated = true;
        int r;

        r = cg_events(j->cg, &populated, NULL);
        if (r == -ENODEV || (r >= 0 && !populated)) {
                job_report(j, true);
                return;
        }
        if (mono_usec() >= j->drain_deadline) {
                job_report(j, false);
                return;
        }
        (void) cg_kill(j->cg); /* a process that was being created at the first one */
        r = drain_arm(j);
        if (r < 0) {
                glean_log_warning("job %d: cannot time the wait for its cgroup to empty: %s", (int) j->core.base.pid,
                                  strerror(-r));
                job_report(j, false);
                return;
        }
}

static int on_drain_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) s;
        (void) usec;
        drain_check(userdata);
        return 0;
}

static void adopted_main_exited(CgJob *j);

static void on_cg_event(Cg *cg, void *userdata) {
        CgJob *j = userdata;
        bool populated = true;

        (void) cg;
        if (j->core.base.exited)
                return;
        oom_check(j);
        freeze_check(j);
        if (!j->main_exited && j->adopted && j->core.pidfd < 0 && cg_events(j->cg, &populated, NULL) >= 0 &&
            !populated)
                adopted_main_exited(j); /* no main process known: the job was its cgroup */
        if (j->main_exited)
                drain_check(j); /* may free j */
}

/* The main process is gone: what is left in the cgroup is killed, and the
 * caller drains. */
static void job_kill_rest(CgJob *j) {
        int r;

        j->main_exited = true;
        r = cg_kill(j->cg);
        if (r < 0 && r != -ENODEV)
                glean_log_warning("job %d: cannot kill what is left in %s: %s", (int) j->core.base.pid, j->cg_path,
                                  strerror(-r));
        j->drain_deadline = mono_usec() + j->drain_timeout;
        j->drain_poll = DRAIN_FIRST_POLL_USEC;
}

static int on_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        CgJob *j = userdata;
        siginfo_t si = {};
        struct rusage ru = {};

        (void) s;
        (void) fd;
        (void) revents;

        if (exec_job_reap(&j->core, &si, &ru) == 0)
                return 0;
        exec_job_fill_exit(&j->core, &si, &ru); /* cpu.stat replaces the CPU times when it can be read */
        job_kill_rest(j);
        drain_check(j); /* may free j */
        return 0;
}

/* An adopted job's reaper or main process is gone (or none is known and
 * the cgroup is empty): the status is the exit file's, else unknown; the
 * rest is killed, and the caller drains. */
static void adopted_main_exited(CgJob *j) {
        exec_job_close_pid(&j->core);
        j->core.result = (AgentJobExit) {
                .max_rss_kb = j->core.max_rss_kb, /* memory.peak replaces it when there */
                .wall_time = agent_elapsed_since(&j->core.started),
        };
        /* cpu.stat replaces the CPU times when it can be read */
        j->core.result.status_unknown = !exec_job_read_exit_file(&j->core);
        job_kill_rest(j);
}

/* The pinned reaper (or main process) of an adopted job exited: not our
 * child, nothing to reap (init or a subreaper has its status). */
static int on_adopted_pidfd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        CgJob *j = userdata;

        (void) s;
        (void) fd;
        (void) revents;
        glean_log_debug("adopted job %d: its main process exited", (int) j->core.base.pid);
        adopted_main_exited(j);
        drain_check(j); /* may free j */
        return 0;
}

/* ---- start ---- */

static CgJob *job_new(CgExecutor *cx, const AgentJobSpec *spec) {
        CgJob *j = exec_job_new(sizeof(*j), &cx->x, spec);

        if (!j)
                return NULL;
        j->freeze_target = -1;
        j->freeze_result = -ENODATA;
        j->drain_timeout = spec->kill_timeout > 0 ? (uint64_t) spec->kill_timeout * USEC_PER_SEC : DRAIN_TIMEOUT_USEC;
        return j;
}

/* Watches the job's cgroup.events and memory.events, from the oom_kill
 * count of now. */
static int job_watch(AgentExecutor *ex, CgJob *j) {
        int r;

        (void) cg_memory_events(j->cg, NULL, &j->oom_kill_start);
        j->oom_kill_seen = j->oom_kill_start;
        r = cg_watch(j->cg, j->core.owner->event, on_cg_event, j);
        if (r < 0)
                agent_exec_error(ex, r, "cannot watch %s/cgroup.events: %s", j->cg_path, strerror(-r));
        return r;
}

/* A job that did not start or was not adopted: its cgroup is closed (as
 * it is), j and rel freed. */
static void job_discard(CgJob *j, char *rel) {
        cg_free(j->cg);
        free(rel);
        free(j->cg_path);
        exec_job_discard(&j->core);
}

static int cgx_start(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                     AgentJob **ret) {
        CgExecutor *cx = (CgExecutor *) ex;
        char why[512] = "", *rel = NULL;
        bool populated = false, frozen = false;
        ExecStarted st;
        CgJob *j;
        int r;

        j = job_new(cx, spec);
        if (!j)
                return -ENOMEM;
        r = job_cgroup_rel(ex, spec, &rel);
        if (r < 0)
                goto fail;
        r = cg_open(cx->root, rel, &j->cg, why, sizeof(why));
        if (r < 0) {
                agent_exec_error(ex, r, "cannot create the job's cgroup %s: %s", rel, why[0] ? why : strerror(-r));
                goto fail;
        }
        j->cg_path = strdup(cg_path(j->cg));
        if (!j->cg_path) {
                r = -ENOMEM;
                goto fail_cg;
        }
        r = cg_events(j->cg, &populated, &frozen);
        if (r < 0) {
                agent_exec_error(ex, r, "cannot read %s/cgroup.events: %s", j->cg_path, strerror(-r));
                goto fail_cg;
        }
        if (populated) {
                /* Not ours to empty: another job (or one we lost track of) runs there. */
                r = agent_exec_error(ex, -EBUSY, "the job's cgroup %s still has processes", j->cg_path);
                cg_free(j->cg);
                j->cg = NULL;
                goto fail;
        }
        if (frozen && (r = cg_freeze(j->cg, false)) < 0) {
                agent_exec_error(ex, r, "cannot thaw the job's cgroup %s: %s", j->cg_path, strerror(-r));
                goto fail_cg;
        }
        r = job_watch(ex, j);
        if (r < 0)
                goto fail_cg;

        clock_gettime(CLOCK_MONOTONIC, &j->core.started);
        j->core.token = exec_new_token();
        r = agent_child_start(ex, spec, cg_dirfd(j->cg), j->cg_path, j->core.token, &st);
        if (r < 0)
                goto fail_cg;
        j->core.pidfd = st.reaper_pidfd;
        j->core.base.pid = st.pid;
        j->core.reaper_pid = st.reaper_pid;
        r = sd_event_add_io(cx->x.event, &j->core.pid_source, st.reaper_pidfd, EPOLLIN, on_pidfd, j);
        if (r < 0) {
                (void) cg_kill(j->cg);
                agent_reap_now(st.reaper_pidfd, st.reaper_pid, AGENT_REAP_TIMEOUT_MS);
                agent_exec_error(ex, r, "cannot watch the process of '%s': %s", spec->argv[0], strerror(-r));
                for (int i = 0; i < FREE_DRAIN_TIMEOUT_MS && cg_events(j->cg, &populated, NULL) >= 0 && populated;
                     i++)
                        (void) usleep(1000);
                goto fail_cg;
        }
        (void) sd_event_source_set_description(j->core.pid_source, "agent-job");

        exec_job_link(&j->core, on_exit, userdata);
        free(rel);
        *ret = &j->core.base;
        return 0;

fail_cg:
        cg_unwatch(j->cg);
        (void) cg_remove(j->cg);
        cg_free(j->cg);
        j->cg = NULL;
fail:
        job_discard(j, rel); /* agent_exec_start removes the scratch directory */
        return r;
}

/* ---- adoption ---- */

/* A pidfd for pid if it is a process of cg; -ESRCH if it is not (gone,
 * or the number is another process's now); another -errno when it cannot
 * be told (no pidfd_open here, the cgroup unreadable). The pid is pinned
 * first, the cgroup's processes read next, and the pinned process must
 * still be alive after: then the pid read there was that process's. */
static int pin_main(Cg *cg, pid_t pid) {
        pid_t *pids = NULL;
        size_t n = 0;
        bool member = false;
        int pidfd, r;

        pidfd = pidfd_open(pid, 0);
        if (pidfd < 0)
                return -errno;
        r = cg_pids(cg, &pids, &n);
        if (r >= 0)
                for (size_t i = 0; i < n && !member; i++)
                        member = pids[i] == pid;
        free(pids);
        if (r >= 0 && (!member || pidfd_send_signal(pidfd, 0, NULL, 0) < 0))
                r = -ESRCH;
        if (r < 0) {
                close(pidfd);
                return r;
        }
        return pidfd;
}

static int cgx_adopt(AgentExecutor *ex, const AgentJobSpec *spec, const AgentJobId *id, double started_wall,
                     AgentJobExitFn on_exit, void *userdata, AgentJob **ret) {
        CgExecutor *cx = (CgExecutor *) ex;
        char why[512] = "", *rel = NULL;
        bool populated = false, frozen = false, main_gone = false;
        pid_t pid = id->pid;
        CgJob *j;
        int r;

        j = job_new(cx, spec);
        if (!j)
                return -ENOMEM;
        j->adopted = true;
        j->core.kept = true;
        r = job_cgroup_rel(ex, spec, &rel);
        if (r < 0)
                goto fail;
        r = exec_cgroup_exists(cx->root, rel);
        if (r == 0) {
                r = agent_exec_error(ex, -ESRCH, "the job's cgroup %s/slots/%s does not exist", cg_root_path(cx->root),
                                     rel);
                goto fail;
        }
        if (r < 0) {
                agent_exec_error(ex, r, "cannot look for the job's cgroup %s: %s", rel, strerror(-r));
                goto fail;
        }
        r = cg_open(cx->root, rel, &j->cg, why, sizeof(why));
        if (r < 0) {
                agent_exec_error(ex, r, "cannot open the job's cgroup %s: %s", rel, why[0] ? why : strerror(-r));
                goto fail;
        }
        j->cg_path = strdup(cg_path(j->cg));
        if (!j->cg_path) {
                r = -ENOMEM;
                goto fail;
        }
        for (ExecJob *e = cx->x.jobs; e; e = e->next) {
                CgJob *o = (CgJob *) e;

                if (!o->core.base.exited && o->cg_path && strcmp(o->cg_path, j->cg_path) == 0) {
                        r = agent_exec_error(ex, -EBUSY, "the cgroup %s is job %d's already", j->cg_path,
                                             (int) o->core.base.pid);
                        goto fail;
                }
        }
        r = job_watch(ex, j);
        if (r < 0)
                goto fail;
        /* After the watch: an emptying from now on is seen. */
        r = cg_events(j->cg, &populated, &frozen);
        if (r < 0) {
                agent_exec_error(ex, r, "cannot read %s/cgroup.events: %s", j->cg_path, strerror(-r));
                goto fail;
        }
        if (!populated) {
                AgentJobExit probe;

                /* Ended while no agent watched: its exit file says how, or it is lost. */
                if (id->reaper_pid <= 0 || !spec->exit_file ||
                    agent_exit_file_read(spec->exit_file, id, &probe, why, sizeof(why)) < 0) {
                        r = agent_exec_error(ex, -ESRCH, "the job's cgroup %s has no processes left", j->cg_path);
                        goto fail;
                }
        }
        if (id->reaper_pid > 0) {
                /* Its reaper, pinned by its start time: its end is the job's, with the exit file. */
                j->core.base.pid = pid;
                j->core.reaper_pid = id->reaper_pid;
                j->core.reaper_start = id->reaper_start;
                j->core.job_start = id->start;
                j->core.token = id->token;
                r = exec_pin(id->reaper_pid, id->reaper_start);
                if (r >= 0)
                        j->core.pidfd = r;
                else if (r == -ESRCH)
                        main_gone = true;
                else
                        glean_log_warning("adopted job in %s: cannot tell whether process %d is its reaper: %s",
                                          j->cg_path, (int) id->reaper_pid, strerror(-r));
                pid = 0; /* watched below: the reaper's pidfd */
                if (j->core.pidfd >= 0) {
                        r = sd_event_add_io(cx->x.event, &j->core.pid_source, j->core.pidfd, EPOLLIN, on_adopted_pidfd, j);
                        if (r < 0) {
                                agent_exec_error(ex, r, "cannot watch the reaper %d: %s", (int) id->reaper_pid,
                                                 strerror(-r));
                                goto fail;
                        }
                        (void) sd_event_source_set_description(j->core.pid_source, "agent-adopted-job");
                }
        }
        if (pid > 0) {
                r = pin_main(j->cg, pid);
                if (r >= 0)
                        j->core.pidfd = r;
                else if (r == -ESRCH)
                        main_gone = true;
                else
                        /* Cannot tell: the job is its cgroup (nothing killed on a doubt). */
                        glean_log_warning("adopted job in %s: cannot tell whether process %d is its own: %s",
                                          j->cg_path, (int) pid, strerror(-r));
                if (j->core.pidfd >= 0) {
                        r = sd_event_add_io(cx->x.event, &j->core.pid_source, j->core.pidfd, EPOLLIN, on_adopted_pidfd, j);
                        if (r < 0) {
                                agent_exec_error(ex, r, "cannot watch the process %d: %s", (int) pid, strerror(-r));
                                goto fail;
                        }
                        (void) sd_event_source_set_description(j->core.pid_source, "agent-adopted-job");
                        j->core.base.pid = pid;
                }
        }
        if (frozen && (r = cg_freeze(j->cg, false)) < 0) {
                agent_exec_error(ex, r, "cannot thaw the job's cgroup %s: %s", j->cg_path, strerror(-r));
                goto fail;
        }
        exec_mono_of_wall(started_wall, &j->core.started);

        exec_job_link(&j->core, on_exit, userdata);
        if (main_gone) {
                glean_log_notice("adopted job in %s: its %s %d is gone, killing the rest", j->cg_path,
                                 id->reaper_pid > 0 ? "reaper" : "main process",
                                 (int) (id->reaper_pid > 0 ? id->reaper_pid : id->pid));
                adopted_main_exited(j);
                r = drain_arm(j); /* reported from the event loop, never before we return */
                if (r < 0)
                        glean_log_warning("adopted job in %s: cannot time the wait for its cgroup to empty: %s",
                                          j->cg_path, strerror(-r));
        }
        free(rel);
        *ret = &j->core.base;
        return 0;

fail:
        job_discard(j, rel);
        return r;
}

/* ---- signals, usage ---- */

static int cgx_signal(AgentJob *job, int sig) {
        CgJob *j = (CgJob *) job;
        int r;

        if (j->main_exited || !j->cg)
                return -ESRCH;
        r = cg_signal(j->cg, sig);
        return r < 0 ? r : 0;
}

static int cgx_kill(AgentJob *job) {
        CgJob *j = (CgJob *) job;
        int r;

        if (job->exited || !j->cg)
                return -ESRCH;
        r = cg_kill(j->cg);
        return r < 0 ? r : 0;
}

/* Resident size of every process of the cgroup, for a host without the
 * memory controller. */
static int64_t pids_rss_kb(Cg *cg) {
        long page_kb = sysconf(_SC_PAGESIZE) / 1024;
        int64_t total = 0;
        pid_t *pids = NULL;
        size_t n = 0;

        if (cg_pids(cg, &pids, &n) < 0)
                return -1;
        for (size_t i = 0; i < n; i++) {
                char path[64], buf[128];
                long long size, rss;

                snprintf(path, sizeof(path), "/proc/%d/statm", (int) pids[i]);
                if (exec_read_small(AT_FDCWD, path, buf, sizeof(buf)) < 0)
                        continue;
                if (sscanf(buf, "%lld %lld", &size, &rss) == 2)
                        total += rss * page_kb;
        }
        free(pids);
        return total;
}

static int cgx_usage(AgentJob *job, AgentJobExit *ret) {
        CgJob *j = (CgJob *) job;
        int64_t rss_kb;
        CgUsage u;
        int r;

        if (exec_job_usage_exited(&j->core, ret))
                return 0;
        if (!j->cg)
                return -ESRCH;
        r = cg_usage(j->cg, &u);
        if (r < 0)
                return r;
        rss_kb = u.memory_peak >= 0 ? u.memory_peak / 1024
                 : u.memory_current >= 0 ? u.memory_current / 1024
                                         : pids_rss_kb(j->cg);
        exec_job_usage_fill(&j->core, (double) u.user_usec / 1e6, (double) u.system_usec / 1e6, rss_kb, ret);
        ret->oom_killed = j->oom_kill_seen > j->oom_kill_start;
        return 0;
}

/* ---- freeing ---- */

static void kill_cgroup(ExecJob *e) {
        CgJob *j = (CgJob *) e;

        if (j->cg)
                (void) cg_kill(j->cg);
}

static void cgx_free_job(AgentJob *job) {
        /* Abandoned when running: killed now, drained, cleaned up and freed by the event loop. */
        if (!exec_job_free_later((ExecJob *) job, kill_cgroup))
                job_destroy((ExecJob *) job);
}

/* Blocking end of a job that was not reported: kill, reap, wait for the
 * cgroup to empty (bounded), remove it. */
static void job_end_now(ExecJob *e) {
        CgJob *j = (CgJob *) e;
        bool populated = true;

        j->core.pid_source = sd_event_source_disable_unref(j->core.pid_source);
        if (j->cg) {
                cg_unwatch(j->cg);
                (void) cg_kill(j->cg);
        }
        if (j->core.pidfd >= 0)
                agent_reap_now(j->core.pidfd, j->core.base.pid, AGENT_REAP_TIMEOUT_MS);
        for (int i = 0; j->cg && i < FREE_DRAIN_TIMEOUT_MS; i++) {
                if (cg_events(j->cg, &populated, NULL) < 0 || !populated)
                        break;
                (void) usleep(1000);
        }
        job_remove_cgroup(e);
}

static void cgx_free(AgentExecutor *ex) {
        lingering_free((CgExecutor *) ex, true);
        exec_executor_free((ExecExecutor *) ex, job_end_now, job_destroy);
}

/* Frees everything, kills nothing, removes nothing (an agent that died):
 * the cgroups are closed, not removed. */
static void cgx_forget(AgentExecutor *ex) {
        lingering_free((CgExecutor *) ex, false);
        exec_executor_forget((ExecExecutor *) ex, job_destroy);
}

static const AgentExecutorOps cgroup_ops = {
        .name = "cgroup",
        .start = cgx_start,
        .suspend = cgx_suspend,
        .resume = cgx_resume,
        .signal = cgx_signal,
        .kill = cgx_kill,
        .usage = cgx_usage,
        .freeze_latency_us = cgx_freeze_latency_us,
        .free_job = cgx_free_job,
        .free = cgx_free,
        .adopt = cgx_adopt,
        .forget = cgx_forget,
};

int agent_executor_cgroup_new(sd_event *ev, CgRoot *root, AgentExecutor **ret) {
        CgExecutor *cx;

        if (!ev || !root || !ret)
                return -EINVAL;
        cx = exec_executor_new(sizeof(*cx), &cgroup_ops, ev);
        if (!cx)
                return -ENOMEM;
        cx->root = root;
        *ret = &cx->x.base;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.h — the agent's cgroup v2 driver: its delegated subtree, one
 * cgroup per slot (dynamic slots inside their partitionable slot) and per
 * job, limits, freezing, killing, usage and the kernel's event files.
 *
 * Layout under the base (the agent's own cgroup under systemd's
 * Delegate=yes, or BASE_CGROUP):
 *
 *     <base>/agent                    the agent itself (processes live only in leaves)
 *     <base>/slots/slot1              a static or partitionable slot
 *     <base>/slots/slot1/slot1_2      a dynamic slot
 *     <base>/slots/slot1/slot1_2/job  the job's leaf (the job may not write its limits:
 *                                     the files belong to root, the job never runs as root)
 *
 * Every file is written relative to a directory fd with O_WRONLY|O_CLOEXEC
 * (never O_CREAT); a file that does not exist means "controller not
 * enabled here" (-ENODEV with a reason), never a failure of the whole
 * agent. Hosts differ: on a hybrid host cgroup v2 has only its core files
 * (cgroup.freeze, cgroup.kill, cgroup.events, cpu.stat) and no controllers;
 * freezing, killing and CPU usage still work there.
 *
 * Conventions: >= 0 on success, -errno on failure; why (when given) says
 * what went wrong in a sentence naming the file.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

/* Controllers, as a mask. */
enum {
        CG_CPU = 1u << 0,
        CG_CPUSET = 1u << 1,
        CG_MEMORY = 1u << 2,
        CG_PIDS = 1u << 3,
        CG_IO = 1u << 4,
};

typedef struct CgRoot CgRoot; /* the agent's subtree */
typedef struct Cg Cg;         /* one cgroup of it */

/* Finds the cgroup v2 mount (/sys/fs/cgroup when it is cgroup2, else
 * /sys/fs/cgroup/unified on a hybrid host; mount_override for tests), the
 * base (base_override, a path relative to the mount, e.g. BASE_CGROUP; else
 * the agent's own cgroup from /proc/self/cgroup), moves the calling process
 * into <base>/agent when move_self, enables in <base>/cgroup.subtree_control
 * every controller of <base>/cgroup.controllers it can, and creates
 * <base>/slots with the same controllers enabled. -ENOENT when there is no
 * cgroup v2 at all. The base may be written "/a/b" as /proc/self/cgroup has
 * it ("a/b"; ".." is -EINVAL); an absent one is created (mkdir -p), and
 * nothing above it is ever written. A controller it could not enable is no
 * error: cg_root_note() says which and why. */
int cg_root_open(const char *mount_override, const char *base_override, bool move_self, CgRoot **ret, char *why,
                 size_t whylen);
void cg_root_free(CgRoot *r); /* accepts NULL; removes nothing */
/* The controllers slots get ("cpu memory pids" order: cpu cpuset io memory pids). */
unsigned cg_root_controllers(const CgRoot *r);
const char *cg_root_path(const CgRoot *r); /* absolute path of the base */
/* What cg_root_open() had to do without, in a sentence for the log (e.g. a
 * controller it could not enable and why); "" when nothing. */
const char *cg_root_note(const CgRoot *r);
/* "cpu io memory pids", "" for none. */
void cg_controllers_string(unsigned mask, char *buf, size_t len);

/* parent/name into buf, or name alone when parent is NULL or "": the path
 * of a cgroup below <base>/slots as cg_open() takes it. -EINVAL for no
 * name, -ENAMETOOLONG when it does not fit. */
int cg_subpath(char *buf, size_t len, const char *parent, const char *name);
/* The names of the child cgroups of <base>/slots/<path> ("" for slots
 * itself), sorted, NULL-terminated, free with cg_strv_free. -EINVAL for a
 * path cg_open() would refuse, -ENOENT when there is no such cgroup. */
int cg_root_children(const CgRoot *r, const char *path, char ***ret);
/* rmdir of every child of <base>/slots whose name starts with prefix;
 * those with processes or cgroups inside stay (the kernel refuses). How
 * many went, or -errno. */
int cg_root_prune(CgRoot *r, const char *prefix);
/* The pids in <base>/agent (the agent's own cgroup when cg_root_open()
 * moved it there): -ENOENT without one. */
int cg_root_agent_pids(const CgRoot *r, pid_t **ret, size_t *ret_n);

/* The cgroup <base>/slots/<path> ("slot1", "slot1/slot1_2", "slot1/slot1_2/job"),
 * created if absent (mkdir 0755, parents first), with the controllers of its
 * parent enabled in the parent's subtree_control as it goes; an existing one
 * is opened as it is (re-adoption). -EINVAL for an absolute path, an empty
 * name ("a//b", "a/"), "." or "..", a name over NAME_MAX, a control
 * character, or a name that would collide with a control file
 * ("cgroup.x", "memory.x", ...). The Cg does not refer to the CgRoot. */
int cg_open(CgRoot *r, const char *path, Cg **ret, char *why, size_t whylen);
void cg_free(Cg *cg);           /* closes; accepts NULL */
int cg_remove(Cg *cg);          /* rmdir of an empty cgroup (its children first); -EBUSY if populated
                                 * (then nothing is removed); 0 if already gone; ends cg_watch() */
int cg_dirfd(const Cg *cg);     /* O_PATH|O_DIRECTORY fd: clone3(CLONE_INTO_CGROUP) */
const char *cg_path(const Cg *cg);  /* absolute */
uint64_t cg_id(const Cg *cg);   /* the cgroup id (inode), what bpf_get_current_cgroup_id() returns */
/* Names of the child cgroups, NULL-terminated, free with cg_strv_free. */
int cg_children(const Cg *cg, char ***ret);
/* Every pid in the cgroup and below. */
int cg_pids(const Cg *cg, pid_t **ret, size_t *ret_n);
/* Moves pid into cg (writes it to cgroup.procs): the way in where
 * clone3(CLONE_INTO_CGROUP) is missing (kernels before 5.7). */
int cg_attach(Cg *cg, pid_t pid);
/* The controllers cg has (its cgroup.controllers), i.e. the limits it takes. */
unsigned cg_controllers(const Cg *cg);
void cg_strv_free(char **v);

/* Limits; a field of 0 leaves the file alone, CG_MAX writes "max",
 * CG_ZERO writes 0 in the int64_t fields (memory_swap_max = CG_ZERO: no
 * swap); any other negative value is -EINVAL. */
#define CG_MAX INT64_MAX
#define CG_ZERO INT64_MIN
typedef struct CgLimits {
        uint64_t cpu_weight;    /* cpu.weight, 1..10000 */
        int64_t cpu_max_quota;  /* cpu.max quota in us per cpu_max_period */
        int64_t cpu_max_period; /* default 100000 */
        const char *cpuset_cpus;/* cpuset.cpus, e.g. "0-1" */
        int64_t memory_max;     /* bytes */
        int64_t memory_high;
        int64_t memory_swap_max;
        int64_t pids_max;
        uint64_t io_weight;     /* io.weight, 1..10000 */
} CgLimits;
/* Writes what it can; *ret_applied says which controllers took their
 * values (a file that does not exist is skipped, not an error). Every value
 * is checked first (-EINVAL, nothing written: weights over 10000, negative
 * values other than CG_ZERO, a newline in cpuset.cpus). A write the kernel
 * refuses is returned (the first one, why names the file) after the others
 * were tried; *ret_applied is set then too. On success why lists the files
 * skipped ("" when none). cpu.max is written only when cpu_max_quota != 0;
 * io.weight as "default N". */
int cg_set_limits(Cg *cg, const CgLimits *l, unsigned *ret_applied, char *why, size_t whylen);

/* cgroup.freeze: 1 or 0. Confirmation comes in cgroup.events (frozen 1).
 * -ENODEV before Linux 5.2. */
int cg_freeze(Cg *cg, bool frozen);
/* cgroup.events: populated and frozen (either output may be NULL). */
int cg_events(Cg *cg, bool *ret_populated, bool *ret_frozen);
/* memory.events: oom and oom_kill counts (0 without the memory controller).
 * Returns 1 when they were read from memory.events, 0 when there is none. */
int cg_memory_events(Cg *cg, uint64_t *ret_oom, uint64_t *ret_oom_kill);
/* cgroup.kill; where the kernel lacks it, SIGKILL to every pid, repeated
 * until the cgroup is empty or tries run out. With cgroup.kill, 0 means
 * the kill was sent: the processes are gone when cgroup.events says
 * populated 0 (cg_watch); the fallback returns once the cgroup is empty
 * (0), or -EBUSY after about a second. */
int cg_kill(Cg *cg);
/* sig to every process of the cgroup and below; returns how many were
 * signalled. Each pid is pinned with a pidfd and signalled only if
 * cgroup.procs still lists it, so a reused pid is never hit. sig 0 counts. */
int cg_signal(Cg *cg, int sig);

typedef struct CgUsage {
        uint64_t usage_usec, user_usec, system_usec; /* cpu.stat */
        uint64_t nr_periods, nr_throttled, throttled_usec;
        int64_t memory_current, memory_peak;         /* -1 when unknown */
        int64_t pids_current;                        /* -1 when unknown */
} CgUsage;
int cg_usage(Cg *cg, CgUsage *ret);

/* ---- a process's own cgroup ----
 *
 * The one reading of the "0::" line of /proc/<pid>/cgroup (the cgroup v2
 * line; v1 hierarchies have "N:controllers:" lines, which are passed over). */

/* The cgroup v2 path in /proc/<pid>/cgroup's text ("0::/a/b\n"): "/a/b",
 * relative to the cgroup2 mount. -ENOENT without a "0::" line (a v1-only
 * host), -EINVAL for an empty or relative path (or no text),
 * -ENAMETOOLONG when it does not fit in len. */
int cg_own_from_text(const char *text, char *buf, size_t len);
/* The same out of /proc/<pid>/cgroup (pid 0: the caller's own). */
int cg_own(pid_t pid, char *buf, size_t len);
/* The smallest memory.max (bytes) of the caller's cgroup v2 and its
 * ancestors below the root ("max" is none): 0, -ENOENT when none has one. */
int cg_own_memory_max(int64_t *ret);

/* ---- the jobs' scope under systemd: the plan (cgroup-scope.c; pure) ----
 *
 * Under a systemd before 254 (no DelegateSubgroup=) a service's cgroup
 * that holds the slots is an inner cgroup, where systemd cannot start the
 * next main process (EBUSY, 219/CGROUP). So the slots live in a transient
 * scope unit beside the service, in the same slice:
 * /system.slice/glean-agent.service -> /system.slice/glean-agent-jobs.scope. */

typedef struct CgScopePlan {
        char service[256]; /* "glean-agent.service" */
        char slice[256];   /* "system.slice" ("-.slice" at the root) */
        char name[256];    /* "glean-agent-jobs.scope" */
        char cgroup[4096]; /* "/system.slice/glean-agent-jobs.scope" */
} CgScopePlan;

/* The scope for a process in the cgroup own (absolute, as cg_own() gives
 * it). knob: AGENT_JOBS_SCOPE, a scope's name, or "auto" (or NULL): the
 * service's name with "-jobs.scope" for ".service". -ENOMEDIUM when own is not a service's cgroup in a slice
 * (no scope then), -EINVAL for a knob that is no valid "*.scope" name. */
int cg_scope_plan(const char *own, const char *knob, CgScopePlan *ret);

/* ---- the jobs' scope under systemd: the unit (cgroup-systemd.c; sd-bus) ---- */

typedef struct CgScope CgScope;
/* The scope of plan in the cgroup2 mount; nothing is done yet. */
int cg_scope_new(const CgScopePlan *plan, CgScope **ret);
/* The scope found with its placeholder in <scope>/init and taken as it
 * is, or created (StartTransientUnit, the placeholder moved into init);
 * a scope with jobs but without its placeholder gets a new one. Logs what
 * it found or made; -errno with why. */
int cg_scope_start(CgScope *s, char *why, size_t whylen);
/* At a clean exit: the placeholder killed (if still alone in init) and
 * the scope gone, unless processes are left in its slots. */
void cg_scope_end(CgScope *s);
void cg_scope_free(CgScope *s); /* accepts NULL; ends nothing */
const char *cg_scope_path(const CgScope *s); /* absolute */

/* ---- watching a cgroup (cgroup-ctl.c) ---- */

/* Calls cb from the event loop each time cgroup.events or memory.events of
 * cg changes (the kernel signals them with POLLPRI on an open fd; it sends
 * at most one notification per file per 10 ms, so a state may be seen up to
 * 10 ms late: read the state in cb with cg_events()). A second call
 * replaces the first; -ENODEV without cgroup.events. Once the cgroup is
 * removed, cb is called a last time and the watch turns itself off. */
typedef void (*CgEventFn)(Cg *cg, void *userdata);
int cg_watch(Cg *cg, sd_event *ev, CgEventFn cb, void *userdata);
void cg_unwatch(Cg *cg);

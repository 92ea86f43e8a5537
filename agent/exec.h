/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec.h — running a job: what to execute (the job ad turned into an
 * AgentJobSpec) and the executors that run it.
 *
 * An executor is a small table of operations (crun's habit): the plain
 * fork/exec executor and the cgroup v2 one, behind the same calls.
 * Jobs never run as root. Exits are reported from the sd-event loop.
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success.
 */
#pragma once

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "classad.h"

/* ---- what to execute ---- */

typedef struct AgentJobSpec {
        char **argv;           /* argv[0] = Cmd (absolute path; relative Cmd is relative to Iwd) */
        char **envp;           /* the job's environment: Environment/Env plus _CONDOR_SCRATCH_DIR,
                                * GLEAN_SCRATCH_DIR, _CONDOR_SLOT=slotN (always set), TMPDIR=scratch,
                                * HOME, USER, PATH (when the job sets none of its own) */
        char *iwd;             /* Iwd, or the scratch directory when the job has none */
        char *in, *out, *err;  /* In/Out/Err (absolute, relative ones taken from iwd), NULL = /dev/null */
        char *owner;           /* the job's Owner, a literal string (NULL: none) */
        bool as_owner;         /* it runs as the account Owner names (else the slot user's or the agent's) */
        char *user;            /* the account the job runs as */
        uid_t uid;
        gid_t gid;
        gid_t *groups;         /* supplementary groups from the group database (gid 0 left out) */
        size_t n_groups;
        char *scratch;         /* per-job scratch directory (created by agent_exec_start, removed after exit) */
        bool scratch_kept;     /* the daemon made scratch (a transferring run's sandbox, agent/transfer.h)
                                * and removes it: the executor neither creates nor removes it */
        int kill_sig;          /* KillSig (default SIGTERM) */
        bool has_umask;        /* the job ad's Umask (the submitter's, recorded by glean submit) ... */
        mode_t umask;          /* ... which the job gets; without one the job's umask is 022 */
        char *cgroup;          /* cgroup executor: the job's cgroup relative to <base>/slots, e.g.
                                * "slot1/slot1_2/job" (set by the daemon); NULL: "<_CONDOR_SLOT>/job" */
        int kill_timeout;      /* cgroup executor: seconds the job's cgroup may take to empty once its
                                * main process is gone and the rest was killed (the daemon: the slot's
                                * KILLING_TIMEOUT); <= 0: 5 s. Past it the exit is reported with
                                * cgroup_stuck */
        char *exit_file;       /* absolute: where the job's reaper records its exit (agent_exit_file_read),
                                * in a directory only root can write (the daemon: <EXECUTE>/.glean-state/
                                * <slot>.exit); NULL: nowhere (a job that outlives its agent then ends
                                * with its status unknown). Never removed by the executor */
        int64_t lease;         /* the claim's lease in seconds (0: none) and ... */
        char *lease_file;      /* ... the file whose mtime is its last keep-alive (the daemon: the slot's
                                * state file): once the agent died, the job's reaper kills the job when
                                * the lease ran out (a missing file: never). NULL: never */
} AgentJobSpec;

typedef struct AgentRunAs {
        const char *slot_user;     /* SLOT<N>_USER (NULL: "nobody"): used when the owner cannot be used */
        bool allow_runas_owner;    /* STARTER_ALLOW_RUNAS_OWNER (default true) */
        bool refuse_unknown_owner; /* refuse instead of slot_user when Owner is unknown */
} AgentRunAs;

/* Builds the spec from the job ad. Jobs NEVER run as root: when the agent
 * runs as root, the job runs as its Owner if that account exists, is not
 * uid 0 (nor primary gid 0) and allow_runas_owner; otherwise as slot_user
 * (which must exist and not be root) unless refuse_unknown_owner and the
 * Owner is unknown (runas NULL: the defaults). When the agent is not root it can only run jobs as its
 * own account: Owner must then be that account (or absent), else -EPERM.
 * Umask, when the ad has it, is an integer from 0 to 0777 (the umask of
 * the job, so of its output files; the submitter's, as glean submit
 * records it): -EINVAL otherwise.
 * Arguments (new syntax) wins over Args (old), Environment (new) over Env
 * (old; EnvDelim or a leading ';'/'|' names the delimiter); the syntaxes
 * are config/argsyntax.h's.
 * -EINVAL/-EPERM/-ENOENT with why (a sentence naming the attribute; why
 * may be NULL) on a job that cannot run: no Cmd, unparseable
 * Arguments/Environment, bad KillSig, relative Iwd, root owner with no
 * fallback... scratch_parent is the EXECUTE directory (absolute); slot_name
 * e.g. "slot1_2". The scratch directory is named
 * <scratch_parent>/dir_<slot_name>_<random>; it is not created here. */
int agent_jobspec_from_ad(const ClassAd *job, const AgentRunAs *runas, const char *scratch_parent,
                          const char *slot_name, AgentJobSpec **ret, char *why, size_t whylen);
void agent_jobspec_free(AgentJobSpec *spec); /* accepts NULL */

/* The identity attributes of a job, which decide who it runs as and who
 * is charged: Owner, User, AcctGroup, AcctGroupUser, AccountingGroup.
 * Each must be absent or a literal string (its expression IS a
 * string constant: ifThenElse(...) or strcat("a", "b") are refused even
 * when they evaluate to one), so that every reading of it gives the same
 * value. agent_jobspec_from_ad() checks them too. */
extern const char *const agent_identity_attrs[];
/* attr of job: 0 and *ret (malloc'd; NULL when absent), or -EINVAL with
 * why when it is anything but a literal string; -ENOMEM. */
int agent_job_literal_string(const ClassAd *job, const char *attr, char **ret, char *why, size_t whylen);
/* 0 when every identity attribute is absent or literal, else -EINVAL with why. */
int agent_job_identity_check(const ClassAd *job, char *why, size_t whylen);

/* "SIGTERM", "TERM", "term", "15" -> 15; -EINVAL otherwise. */
int agent_signal_from_name(const char *name, int *ret);
/* 15 -> "SIGTERM"; NULL for an unknown number. */
const char *agent_signal_name(int sig);

/* ---- running it ---- */

typedef struct AgentJobExit {
        bool by_signal;
        int exit_code;
        int signal;
        bool core_dumped;
        double user_cpu, sys_cpu;  /* seconds */
        int64_t max_rss_kb;
        double wall_time;          /* seconds from start to exit */
        bool oom_killed;           /* cgroup executor: the kernel's OOM killer ended a process of the job
                                    * (and the executor the rest, at once) */
        bool cgroup_stuck;         /* cgroup executor: processes of the job were still in its cgroup when
                                    * the exit was reported (they would not die within kill_timeout);
                                    * the cgroup stays */
        bool status_unknown;       /* an adopted job (agent_exec_adopt): its main process was not our child,
                                    * so by_signal/exit_code/signal/core_dumped say nothing (false/0) */
        char reason[256];          /* what the executor has to add ("" when nothing): out of memory, a
                                    * cgroup that would not empty, an exit status that is unknown */
} AgentJobExit;

/* Who a job is, for an agent that outlives it: what the daemon records
 * while the job runs and gives agent_exec_adopt_id() after a restart.
 *
 * Every job has a reaper: a small process of root's, the agent's child and
 * the job's parent (agent/exec/exec-child.c, agent/exec/reaper-core.c), in its own
 * session (and, with the cgroup executor, in the job's cgroup beside the
 * job). Once the job has exec'd it execs glean-reaper ($GLEAN_REAPER, else
 * beside the running program or in its ../libexec/glean/; found nowhere,
 * the agent's copy does the same work, holding a copy of the agent's
 * memory for the job's life). It waits for the job, kills what
 * is left of the job's process group, writes the job's wait status and
 * rusage to spec->exit_file (temp + rename) and exits mirroring the
 * job's status. It blocks every signal it can and runs as root: the job's
 * user can neither kill nor trace it. The job dies with its reaper
 * (PR_SET_PDEATHSIG); until the agent says, with agent_job_keep(), that
 * it has recorded the job (so that a new agent can re-adopt it), the
 * reaper ends the job when the agent dies: no process is left that no
 * agent knows of. Start times are field 22 of
 * /proc/PID/stat (clock ticks since boot): with the pid they name a process
 * for good, whatever pid is reused later. */
typedef struct AgentJobId {
        pid_t pid;              /* the job's main process (agent_job_pid()): its session and process group */
        uint64_t start;         /* its start time, 0: unknown */
        pid_t reaper_pid;       /* 0: no reaper (a job of an agent that had none) */
        uint64_t reaper_start;
        uint64_t token;         /* random, per job: its exit file must carry it */
} AgentJobId;

typedef struct AgentJob AgentJob;
/* Called from the event loop once the job's main process has exited (the
 * rest of its process group is killed then). The scratch directory still
 * exists during the call and is removed when it returns. The callback may
 * free the job. */
typedef void (*AgentJobExitFn)(AgentJob *job, const AgentJobExit *ex, void *userdata);

typedef struct AgentExecutor AgentExecutor;
typedef struct AgentExecutorOps {
        const char *name; /* "fork" */
        int (*start)(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                     AgentJob **ret);
        int (*suspend)(AgentJob *job);           /* stop every process of the job */
        int (*resume)(AgentJob *job);
        int (*signal)(AgentJob *job, int sig);    /* every process of the job */
        int (*kill)(AgentJob *job);               /* SIGKILL to every process */
        int (*usage)(AgentJob *job, AgentJobExit *ret); /* live cpu usage so far (exit fields unset) */
        int (*freeze_latency_us)(AgentJob *job);  /* NULL: not measured by this executor */
        void (*free_job)(AgentJob *job);          /* after on_exit, or to abandon (then kill first) */
        void (*free)(AgentExecutor *ex);
        /* optional (NULL: -EOPNOTSUPP): see agent_exec_adopt_id() */
        int (*adopt)(AgentExecutor *ex, const AgentJobSpec *spec, const AgentJobId *id, double started_wall,
                     AgentJobExitFn on_exit, void *userdata, AgentJob **ret);
        /* optional (NULL: free): see agent_executor_forget() */
        void (*forget)(AgentExecutor *ex);
} AgentExecutorOps;

/* The plain executor: each job in its own session and process group,
 * started with clone3(CLONE_PIDFD) (fork + pidfd_open where clone3 is
 * refused), its exit noticed through sd-event on the pidfd and reaped with
 * waitid(P_PIDFD) for its rusage. suspend/resume = SIGSTOP/SIGCONT to the
 * process group. The child resets its signals, closes every fd but 0-2,
 * drops privileges (setgroups, setresgid, setresuid, PR_SET_NO_NEW_PRIVS),
 * sets the umask (spec->umask, else 022), chdir(iwd), opens in/out/err as the job user, execve; a
 * failure before exec makes start() fail with its errno (the step is in
 * agent_executor_last_error()). The executor keeps a reference on ev. */
int agent_executor_fork_new(sd_event *ev, AgentExecutor **ret);

typedef struct CgRoot CgRoot; /* cgroup.h */

/* The same, and each job also in a cgroup v2 leaf of its own,
 * <leaves>/slots/job-<token> (cg_open; no controller is needed): signals
 * reach every process of the leaf too, a kill is cgroup.kill, and once
 * the job's reaper is gone what is left in the leaf is killed and the leaf
 * removed, so that a process that left the job's group (setsid) ends with
 * it. A leaf that cannot be made is logged; that job has its process group
 * only. leaves (NULL: none) must outlive the executor. */
int agent_executor_fork_new_leaves(sd_event *ev, CgRoot *leaves, AgentExecutor **ret);

/* The cgroup v2 executor: each job in a cgroup of its own,
 * <base>/slots/<spec->cgroup> (see AgentJobSpec.cgroup; created if absent,
 * refused with -EBUSY while it still holds processes), started with
 * clone3(CLONE_INTO_CGROUP | CLONE_PIDFD) so that it is never outside it;
 * in the child everything else as the fork executor (the same code).
 * - suspend/resume write cgroup.freeze and return at once; the kernel's
 *   confirmation (cgroup.events frozen 1/0) comes through the event loop,
 *   and agent_job_freeze_latency_us() says how long it took; one not
 *   confirmed within 5 s is logged (a warning) and reported there.
 * - signal: every process of the cgroup; kill: cgroup.kill.
 * - when the main process exits, whatever is left in the cgroup is killed
 *   and the exit is reported once cgroup.events says populated 0 (after
 *   spec->kill_timeout seconds without, it is reported anyway, with
 *   cgroup_stuck and a reason saying so, and the cgroup stays); then the
 *   job cgroup and the scratch directory are removed (after the callback).
 * - memory.events is watched: when oom_kill grows while the job runs (the
 *   OOM killer ended one of its processes, perhaps not the main one), the
 *   rest of the job is killed at once (cgroup.kill), as HTCondor ends a job
 *   that ran out of memory, and the exit follows.
 * - the exit's user_cpu/sys_cpu come from the cgroup's cpu.stat (every
 *   process of the job, not only those its main process waited for),
 *   max_rss_kb from memory.peak when there (else the largest of the main
 *   process's rusage and what usage() saw); oom_killed when memory.events
 *   oom_kill grew while the job ran (reason then starts "out of memory").
 * - usage(): cpu.stat, memory.peak/memory.current (the processes' resident
 *   sizes without the memory controller).
 * root must outlive the executor; the executor keeps a reference on ev. */
int agent_executor_cgroup_new(sd_event *ev, CgRoot *root, AgentExecutor **ret);

/* Re-adoption of a job an earlier agent started (the agent was killed
 * and started again; its jobs ran on in their cgroups). The cgroup
 * executor only; the fork executor: -EOPNOTSUPP.
 *
 * spec is the job's (from its ad; only spec->cgroup, or _CONDOR_SLOT, and
 * spec->scratch are used: nothing is started and no scratch directory is
 * created). The job cgroup <base>/slots/<spec->cgroup> must exist and hold
 * processes: -ESRCH otherwise (an empty cgroup is left as it is: see
 * agent_exec_cleanup); -EBUSY when a job of this executor runs there. A
 * frozen cgroup is thawed (the daemon suspends the job again if its policy
 * says so). pid (the job's main process, as agent_job_pid() said then) is
 * pinned with a pidfd if it is still in that cgroup (cgroup.procs, read
 * between pidfd_open and a check that the pinned process still lives, so a
 * reused pid is never taken); started_wall is when the job started
 * (CLOCK_REALTIME seconds; <= 0: now), for wall_time.
 *
 * The job then is as a started one (suspend, resume, signal, kill, usage,
 * free), and its end too:
 * - pid pinned: when that process exits, whatever is left in the cgroup is
 *   killed and the exit is reported once the cgroup is empty;
 * - pid > 0 but no longer in the cgroup (gone, or the number reused
 *   elsewhere): the main process is gone already: the rest is killed at
 *   once and the exit reported once the cgroup is empty;
 * - pid <= 0 (not known), or no telling (no pidfd_open): the job is its
 *   cgroup, reported when it empties.
 * agent_job_pid() is pid when pinned, else 0. The exit: status_unknown,
 * exit_code 0, by_signal false; reason "the agent restarted while the job
 * ran: its exit status is unknown", preceded by the out-of-memory one when
 * memory.events oom_kill grew since the adoption (oom_killed); user_cpu and
 * sys_cpu from cpu.stat (the whole job, from its start), max_rss_kb from
 * memory.peak when there (else the largest usage() saw), wall_time from
 * started_wall. Then, as for a started job, the job cgroup and the scratch
 * directory (spec->scratch, when set) are removed after the callback.
 * On failure nothing is touched and agent_executor_last_error() says why. */
int agent_exec_adopt(AgentExecutor *ex, const AgentJobSpec *spec, pid_t pid, double started_wall,
                     AgentJobExitFn on_exit, void *userdata, AgentJob **ret);

/* agent_exec_adopt() of a job whose reaper is known (id->reaper_pid > 0),
 * and the fork executor's too. The reaper is pinned with a pidfd and its
 * start time checked against id->reaper_start (so a reused pid is never
 * taken for it); when it exits, spec->exit_file (read with id: a file of
 * another job or a torn one is refused, logged) gives the job's real exit
 * status and rusage, and the report has status_unknown false and no
 * reason (but the out-of-memory one). The reaper already gone: the exit
 * file read at once (reported from the event loop).
 * - cgroup executor: as agent_exec_adopt() otherwise (the cgroup is the
 *   job; the CPU times from cpu.stat, the whole job);
 * - fork executor: the job is the process group id->pid, which must still
 *   be the process started at id->start (else: -ESRCH, as when both the
 *   reaper and the exit file are gone); suspend/resume/signal/kill go to
 *   the group, usage() adds up the session; the CPU times of the exit are
 *   the file's (the job and the children it waited for). Should the reaper
 *   end without a usable exit file, the status is unknown (reason as
 *   above) and what is left of the group is killed while its leader, still
 *   the one started at id->start, holds the group's id.
 * Without a reaper (id->reaper_pid <= 0) the cgroup executor does what
 * agent_exec_adopt(id->pid) does; the fork executor -EOPNOTSUPP. */
int agent_exec_adopt_id(AgentExecutor *ex, const AgentJobSpec *spec, const AgentJobId *id, double started_wall,
                        AgentJobExitFn on_exit, void *userdata, AgentJob **ret);

/* The job outlives the agent from now on: its identity is recorded where
 * a new agent will find it. Before, a job dies with the agent that started
 * it (its reaper hears of the end of the agent's thread that started it,
 * and kills the job's process group). One signal to the reaper, no wait:
 * a keep sent before the agent dies is always heard first. 0 (adopted jobs
 * are kept already), -ESRCH once exited. */
int agent_job_keep(AgentJob *job);

/* The identity of a running job (agent_job_pid(), the reaper, start times
 * read from /proc now): 0, -ESRCH once exited, -ENODATA when the job has no
 * reaper (an adopted one of an agent that had none). */
int agent_job_id(const AgentJob *job, AgentJobId *ret);

/* What a job's reaper wrote, read back: the status part (by_signal,
 * exit_code, signal, core_dumped) and user_cpu, sys_cpu, max_rss_kb of
 * *ret (the rest zero). Refused, with why saying which in a sentence (why
 * may be NULL): -ENOENT when there is no such file, -EBADMSG when it is
 * torn or malformed (a reaper killed while writing, a file edited by
 * hand), -ESTALE when it is another job's (token, job pid or reaper pid
 * differ from id's; id->reaper_pid <= 0: not checked), -EPERM when it is
 * not a regular file of root's (or the agent's uid) writable by no one else. */
int agent_exit_file_read(const char *path, const AgentJobId *id, AgentJobExit *ret, char *why, size_t whylen);

/* A job no agent can re-adopt any more (its slot gone from the
 * configuration, ...), known by id: its process group (only while its
 * leader is still the process started at id->start, which holds the
 * group's id) and its reaper (only while it is the one started at
 * id->reaper_start) get SIGKILL. How many of the two were signalled (0
 * when both are gone already); -EINVAL without id->start. Never anything
 * else. */
int agent_exec_kill_orphan(const AgentJobId *id);

/* A job cgroup nobody can re-adopt: <base>/slots/<cgroup_path> (relative,
 * e.g. "slot1/slot1_2/job"). Kills everything in it (cgroup.kill, the
 * cgroup and below; thawed if frozen), waits until it is empty (about 2 s
 * at most) and removes it. Returns how many processes it found there (0
 * too when the cgroup does not exist: it is never created here). -EBUSY
 * when it would not empty in time (it stays), -EINVAL for a path cg_open()
 * refuses, another -errno when it cannot be read or removed; why (may be
 * NULL) says what went wrong in a sentence, "" on success. Blocking. */
int agent_exec_cleanup(CgRoot *root, const char *cgroup_path, char *why, size_t whylen);

/* Dispatch helpers so callers never touch ops directly.
 * agent_exec_start checks the spec (absolute paths, never uid/gid 0:
 * -EPERM), creates the scratch directory (0700, owned by the job user;
 * -EEXIST if it is there already) and starts the job; on failure nothing
 * is left behind and agent_executor_last_error() says why. */
int agent_exec_start(AgentExecutor *ex, const AgentJobSpec *spec, AgentJobExitFn on_exit, void *userdata,
                     AgentJob **ret);
int agent_job_suspend(AgentJob *job);
int agent_job_resume(AgentJob *job);
/* After the exit: -ESRCH. */
int agent_job_signal(AgentJob *job, int sig);
int agent_job_kill(AgentJob *job);
/* While running: cpu of every process of the job so far, max_rss_kb the
 * largest resident size seen so far, wall_time so far. After the exit: the
 * exit itself. */
int agent_job_usage(AgentJob *job, AgentJobExit *ret);
/* How long the last suspend/resume took to be confirmed by the kernel,
 * in µs (write to cgroup.freeze -> cgroup.events frozen 1/0 seen by the
 * event loop). -EINPROGRESS while the last one is not confirmed yet,
 * -ETIMEDOUT when it was not within 5 s, -ENODATA before the first,
 * -EOPNOTSUPP from an executor that does not measure it (fork). */
int agent_job_freeze_latency_us(AgentJob *job);
pid_t agent_job_pid(const AgentJob *job);
bool agent_job_exited(const AgentJob *job);
/* A running job is killed and reaped later by the executor (its callback
 * is not called); accepts NULL. */
void agent_job_free(AgentJob *job);
/* Kills and frees whatever jobs are left (free your jobs first); accepts NULL. */
void agent_executor_free(AgentExecutor *ex);
/* Frees the executor and every job of it WITHOUT killing anything: the
 * processes run on (in their cgroups, which stay, as do the scratch
 * directories), no callback is called. What a crash of the agent leaves
 * behind, for agent_exec_adopt() (tests; an agent handing its jobs over).
 * Every AgentJob of ex is invalid afterwards (do not free them). Accepts NULL. */
void agent_executor_forget(AgentExecutor *ex);
const char *agent_executor_name(const AgentExecutor *ex);
/* Why the last agent_exec_start() failed, one sentence; "" if it did not. */
const char *agent_executor_last_error(const AgentExecutor *ex);

/* What the last failed start could not do, from the job's side (the
 * files and directory of the job, its program, its account) or the
 * agent's (AGENT_START_OTHER: fork, cgroup, scratch directory, ...), and
 * the errno (0 when none is known). */
typedef enum AgentStartFailure {
        AGENT_START_OTHER = 0,
        AGENT_START_IWD,     /* chdir to its initial directory */
        AGENT_START_INPUT,   /* open its standard input */
        AGENT_START_OUTPUT,  /* open its standard output */
        AGENT_START_ERROR,   /* open its standard error */
        AGENT_START_EXEC,    /* execve of its program */
        AGENT_START_ACCOUNT, /* become its user (setgroups, setgid, setuid) */
} AgentStartFailure;
AgentStartFailure agent_executor_last_failure(const AgentExecutor *ex, int *ret_errno);

/* Removes path and everything under it without following symbolic links
 * (openat/unlinkat, O_NOFOLLOW | O_DIRECTORY; any depth). -ENOENT if path
 * does not exist. */
int agent_remove_tree(const char *path);

/* ---- for executors only ---- */

/* The head of every executor and every job of an executor. */
struct AgentExecutor {
        const AgentExecutorOps *ops;
        char last_error[512];
        int last_failure;      /* AgentStartFailure of the last failed start */
        int last_errno;
};

struct AgentJob {
        AgentExecutor *executor;
        pid_t pid;
        bool exited;
};

/* Formats ex->last_error; returns r (a -errno) for `return agent_exec_error(ex, r, ...)`. */
int agent_exec_error(AgentExecutor *ex, int r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Creates spec->scratch (0700, owned by spec->uid/gid, never through a symlink). */
int agent_scratch_create(AgentExecutor *ex, const AgentJobSpec *spec);

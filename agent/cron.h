/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cron.h — HTCondor's startd cron (its "daemon ClassAd hooks"): programs
 * the agent runs now and then whose output, lines of `Attr = expression`,
 * becomes attributes of the slot ads.
 *
 *   the knobs   STARTD_CRON_JOBLIST and STARTD_CRON_<Name>_* read into a
 *               table (agent/cron/cron-config.c), every error naming the
 *               knob's file and line;
 *   the output  a bounded, incremental parser of what a run writes
 *               (agent/cron/cron-output.c): `Attr = expr` lines, a line
 *               starting with '-' ending one ad (`- tag update:true`);
 *   the merge   which of the published ads reach a slot (SLOTS,
 *               SlotMergeConstraint, SlotName/Name, SlotTypeId, SlotId),
 *               into its ad, and out again when no ad carries them
 *               (agent/cron/cron-merge.c); the next start of a job;
 *   the runner  one run: fork, an unprivileged account, stdin /dev/null,
 *               stdout into the parser and stderr into a bounded buffer
 *               through an sd-event loop, the exit from a pidfd
 *               (agent/cron/cron-run.c).
 *
 * The scheduling and the slots live in the daemon (agent/daemon/cron.c).
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "classad.h"
#include "config.h"

/* ---- the knobs ---- */

typedef enum AgentCronMode {
        AGENT_CRON_PERIODIC,       /* every PERIOD from its start (the default) */
        AGENT_CRON_WAIT_FOR_EXIT,  /* again PERIOD after it exits */
        AGENT_CRON_ONE_SHOT,       /* once, at the start of the agent */
        AGENT_CRON_ON_DEMAND,      /* HTCondor's benchmarks only: never run (warned) */
} AgentCronMode;

typedef enum AgentCronAutoPublish {
        AGENT_CRON_PUBLISH_NEVER,      /* the next advertisement carries the output */
        AGENT_CRON_PUBLISH_ALWAYS,     /* every ad published is advertised at once */
        AGENT_CRON_PUBLISH_IF_CHANGED, /* ... when it differs from the last one (LastUpdate aside) */
} AgentCronAutoPublish;

#define AGENT_CRON_MAX_JOBS 64
#define AGENT_CRON_MAX_SLOT_IDS 64

typedef struct AgentCronJob {
        char *name;          /* as STARTD_CRON_JOBLIST spells it */
        char *executable;    /* absolute */
        char **argv;         /* argv[0] = the job's name (HTCondor's), then ARGS; NULL-terminated */
        char **env;          /* ENV's NAME=value entries, NULL-terminated (never NULL) */
        char *cwd;           /* CWD (absolute), NULL: "/" */
        char *prefix;        /* PREFIX ("" when none): prepended to every attribute name */
        AgentCronMode mode;
        int64_t period;      /* seconds: Periodic >= 1, WaitForExit >= 0, OneShot and OnDemand 0 */
        bool kill;           /* KILL: a run still going at the next one's time is killed */
        double job_load;     /* JOB_LOAD (default 0.01) */
        unsigned slots[AGENT_CRON_MAX_SLOT_IDS]; /* SLOTS: the slot ids it may reach (n_slots 0: all) */
        size_t n_slots;
        char file[256];      /* where EXECUTABLE is defined */
        int line;
} AgentCronJob;

typedef struct AgentCronTable {
        AgentCronJob *jobs;
        size_t n;
        AgentCronAutoPublish autopublish; /* STARTD_CRON_AUTOPUBLISH */
        double max_job_load;              /* STARTD_CRON_MAX_JOB_LOAD (default 0.1) */
        char *config_val;                 /* STARTD_CRON_CONFIG_VAL (NULL: unset) */
        bool log_non_zero_exit;           /* STARTD_CRON_LOG_NON_ZERO_EXIT */
        char *user;                       /* STARTD_CRON_USER (glean's; default "nobody") */
        char user_at[300];                /* "file:line" of STARTD_CRON_USER; "" when not set */
} AgentCronTable;

/* The table of cfg's STARTD_CRON_JOBLIST (an empty one without). An error
 * (-EINVAL; -ENOMEM) fills err with the file and line of the knob at
 * fault: a name listed twice or not of letters, digits and '_', no
 * EXECUTABLE or one that is not absolute, an unknown MODE, a PERIOD
 * missing, malformed or below 1 s (0 is fine for WaitForExit: HTCondor's
 * continuous template), ARGS or ENV that do not parse, a
 * PREFIX with other characters than letters, digits and '_', a CWD that
 * is not absolute, JOB_LOAD, MAX_JOB_LOAD or AUTOPUBLISH malformed, a
 * SLOTS item that is not a slot number. The knobs glean reads but does
 * not honour (CONDITION, METRICS, OnDemand, a PERIOD of a OneShot job)
 * are warned about with config_warn(). */
int agent_cron_read(Config *cfg, AgentCronTable **ret, ConfigError *err);
void agent_cron_table_free(AgentCronTable *t); /* accepts NULL */

/* "30", "30s", "5m", "2h" (case-insensitive suffix): seconds. -EINVAL on
 * anything else, a negative number or more than INT32_MAX seconds. */
int agent_cron_parse_period(const char *text, int64_t *ret);
const char *agent_cron_mode_name(AgentCronMode m);

/* ---- the output ---- */

#define AGENT_CRON_MAX_OUTPUT (64u * 1024u) /* bytes of stdout one run may write */
#define AGENT_CRON_MAX_LINE (8u * 1024u)    /* bytes of one line */
#define AGENT_CRON_MAX_ATTRS 256u           /* attributes of one run, all its ads together */
#define AGENT_CRON_MAX_ADS 64u              /* ads (tags) of one job the store keeps */

/* One ad of a run: the attributes to merge (prefixed) and which slots
 * they are for. */
typedef struct AgentCronAd {
        char *tag;          /* "" for the job's own ad; "- name" names another */
        int update;         /* "update:true" 1, "update:false" 0, not said -1 */
        ClassAd *attrs;     /* what is merged, <prefix>LastUpdate included */
        ClassAd *select;    /* SlotMergeConstraint, SlotName, Name, SlotTypeId, SlotId as written */
} AgentCronAd;

void agent_cron_ad_free(AgentCronAd *ad); /* accepts NULL */

typedef struct AgentCronParseStats {
        size_t lines;       /* lines read */
        size_t attrs;       /* attributes taken */
        size_t malformed;   /* lines skipped: no '=', a bad name, a bad expression, NUL bytes, too long */
        size_t refused;     /* attributes refused: protected (agent_cron_protected) */
        size_t over_attrs;  /* attributes past AGENT_CRON_MAX_ATTRS */
        bool truncated;     /* output past AGENT_CRON_MAX_OUTPUT: the rest ignored */
        char first_problem[160]; /* the first malformed or refused line, for the log ("" none) */
} AgentCronParseStats;

typedef struct AgentCronParser AgentCronParser;
/* Called with each ad the output completes (taken: free it). */
typedef void (*AgentCronAdFn)(void *userdata, AgentCronAd *ad);

/* prefix (NULL: none) is the job's PREFIX; now is LastUpdate's value. */
int agent_cron_parser_new(const char *prefix, int64_t now, AgentCronAdFn emit, void *userdata,
                          AgentCronParser **ret);
void agent_cron_parser_free(AgentCronParser *p); /* accepts NULL */
/* A WaitForExit job writes for as long as it runs: the limits of output
 * and attributes then count from each '-' line (each ad), and LastUpdate
 * is the time each ad ends (time()). */
void agent_cron_parser_set_continuous(AgentCronParser *p);
/* Feed n bytes of output. -E2BIG once the output went past
 * AGENT_CRON_MAX_OUTPUT (what came before is kept; the rest is dropped:
 * the caller stops the run); -ENOMEM. */
int agent_cron_parser_feed(AgentCronParser *p, const char *buf, size_t n);
/* The output ended: a last line without a newline, and the ad of lines
 * after the last '-' line (if it has any attribute) are emitted. */
int agent_cron_parser_finish(AgentCronParser *p);
const AgentCronParseStats *agent_cron_parser_stats(const AgentCronParser *p);
/* Parse all of text at once (tests, fuzzing): each ad into emit. */
int agent_cron_parse_text(const char *text, size_t n, const char *prefix, int64_t now, AgentCronAdFn emit,
                          void *userdata, AgentCronParseStats *ret_stats);

/* The attributes no cron output may set (after its prefix): the slot's
 * identity (Name, Machine, SlotID, SlotTypeID, SlotType, MyType,
 * TargetType, MyAddress, ...), its resources (Cpus, Memory, Disk, Swap,
 * GPUs, Total*, Detected*, Assigned*, Child*, MachineResources, ...), its
 * state and claim (State, Activity, Entered*, RemoteUser, RemoteOwner,
 * AccountingGroup, JobId, ClientMachine, ClaimId, PublicClaimId, ...),
 * its policy (Start, Requirements, Rank, IsOwner, ...) and what the agent
 * measures (LoadAvg, CondorLoadAvg, KeyboardIdle, ConsoleIdle, ...).
 * Case-insensitive. */
bool agent_cron_protected(const char *name);

/* ---- the published ads, the merge, the schedule ---- */

typedef struct AgentCronStore AgentCronStore;
int agent_cron_store_new(AgentCronStore **ret);
void agent_cron_store_free(AgentCronStore *st); /* accepts NULL */
/* The ad of job (index into the table) replaces the job's ad of the same
 * tag (taken, also on failure). *ret_changed (may be NULL): it differs
 * from the one it replaces, LastUpdate aside. -E2BIG for a new tag of a
 * job that has AGENT_CRON_MAX_ADS already; -ENOMEM. */
int agent_cron_store_put(AgentCronStore *st, size_t job, AgentCronAd *ad, bool *ret_changed);
/* A run of job ended having published at least one ad: the job's ads
 * whose tag it did not publish (since agent_cron_store_begin) go. */
void agent_cron_store_begin(AgentCronStore *st, size_t job);
void agent_cron_store_end(AgentCronStore *st, size_t job);
/* Every ad of job goes (it is no longer configured). */
void agent_cron_store_drop(AgentCronStore *st, size_t job);
size_t agent_cron_store_count(const AgentCronStore *st);

/* What the merge did to one slot ad, kept per slot between merges. */
typedef struct AgentCronMerged AgentCronMerged;
void agent_cron_merged_free(AgentCronMerged *m); /* accepts NULL */

/* Merge the store's ads that reach slot_ad into it: the job's SLOTS
 * must hold its SlotID; then, first match wins, SlotMergeConstraint true
 * with the slot ad as TARGET, SlotName (else Name) a prefix of its Name,
 * SlotTypeId or SlotId equal to its own; an ad with none reaches every
 * slot. Jobs in table order, a job's untagged ad before its tagged ones,
 * a later one winning. An attribute the slot ad has that no merge put
 * there is the agent's and is refused, unless overridable (the slot's
 * STARTD_ATTRS / STARTD_EXPRS names, NULL-terminated; may be NULL): its
 * value is then kept and given back when no ad carries the attribute any
 * more. Attributes an earlier merge put there that no ad carries now are
 * deleted. *m (NULL at first) holds what it did. Returns the number of
 * attributes refused; -ENOMEM. */
int agent_cron_merge(const AgentCronStore *st, const AgentCronTable *t, ClassAd *slot_ad,
                     const char *const *overridable, AgentCronMerged **m);
/* The attributes the last merge put into the slot ad (for logs, tests). */
size_t agent_cron_merged_count(const AgentCronMerged *m);

/* When job should next start (seconds on the agent's clock), from when
 * its last run was due (0: never), when its last run exited (0: it did
 * not) and whether one runs now: Periodic last_due + period (now when
 * never); WaitForExit exited + period (at least 1 s), never while one
 * runs; OneShot now
 * when never, else never; OnDemand never. Never: INT64_MAX. */
int64_t agent_cron_next_start(const AgentCronJob *j, int64_t last_due, int64_t exited, bool running,
                              int64_t now);
/* Is a new ad advertised at once? Its `update:` when it says (1 yes, 0
 * no), else STARTD_CRON_AUTOPUBLISH: Always, or If_Changed and changed. */
bool agent_cron_wants_publish(AgentCronAutoPublish autopublish, int update, bool changed);
/* May a job of job_load start while running_load is running
 * (STARTD_CRON_MAX_JOB_LOAD)? Always when nothing runs. */
bool agent_cron_may_start(double running_load, double job_load, double max_load);

/* ---- the runner ---- */

/* The account runs are made under: never root. */
typedef struct AgentCronCred {
        bool change;        /* setgid/setgroups/setuid to these (the agent runs as root) */
        uid_t uid;
        gid_t gid;
        const char *home;   /* HOME of the run ("/" when NULL) */
        const char *user;   /* USER and LOGNAME */
} AgentCronCred;

/* The account of user (NULL: "nobody") when the agent runs as root, or
 * the agent's own account (user ignored) when not. -EPERM for uid 0 or a
 * primary gid 0, -ENOENT for an unknown user (why says which). Strings
 * point into *buf, which the caller frees. */
int agent_cron_cred(const char *user, AgentCronCred *ret, char **buf, char *why, size_t whylen);

typedef struct AgentCronExit {
        int code;          /* exit code, or -1 when killed */
        int signal;        /* the signal that killed it, or 0 */
        bool killed;       /* the runner killed it (agent_cron_run_kill, output past the limit) */
        const char *err;   /* what it wrote on stderr (at most AGENT_CRON_MAX_STDERR bytes), NUL-terminated */
        size_t err_len;
        const AgentCronParseStats *stats;
} AgentCronExit;

#define AGENT_CRON_MAX_STDERR 4096u

typedef struct AgentCronRun AgentCronRun;
typedef struct AgentCronRunFns {
        AgentCronAdFn ad;                                    /* each ad of the output, as it completes */
        void (*exited)(void *userdata, const AgentCronExit *ex); /* once, at the end; the run may be freed there */
} AgentCronRunFns;

/* Starts job under cred with stdin /dev/null, its stdout and stderr read
 * on e (never blocking), its end seen from a pidfd; extra_env (NULL-
 * terminated, may be NULL) comes before the job's ENV. In its own process
 * group, which is killed when the process exits. -errno when it cannot
 * start (fork, pipes); an exec failure is an exit with code 127 and the
 * reason on its stderr. */
int agent_cron_run_start(sd_event *e, const AgentCronJob *job, const AgentCronCred *cred,
                         char *const *extra_env, int64_t now, const AgentCronRunFns *fns, void *userdata,
                         AgentCronRun **ret);
/* SIGTERM to its process group, SIGKILL after grace_ms. */
void agent_cron_run_kill(AgentCronRun *r, unsigned grace_ms);
/* Frees the run; one still going is killed (SIGKILL) and reaped first. */
void agent_cron_run_free(AgentCronRun *r);
pid_t agent_cron_run_pid(const AgentCronRun *r);

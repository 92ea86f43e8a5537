/* SPDX-License-Identifier: Apache-2.0 */
/*
 * defaults.c — the built-in defaults ("<default>") and the values detected
 * on the machine ("<detected>"), defined by config_new() before any file.
 *
 * The policy macros and expressions are those of seed 002, section 3.5.9.1
 * ("Default Policy Settings"), written as its continuation lines join
 * (MachineBusy gets the closing parenthesis the manual's text lacks).
 * Knob values come from the seeds where they give one (priority factor
 * 1.0, PRIORITY_HALFLIFE, MATCH_TIMEOUT, KILLING_TIMEOUT, CLAIM_WORKLIFE,
 * the lease of 20 minutes, the JOB_DEFAULT_* and MODIFY_REQUEST_EXPR_*
 * expressions, ...), else from HTCondor's current param_info.in.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config-internal.h"

typedef struct Default {
        const char *name;
        const char *value;
} Default;

static const Default defaults[] = {
        /* ---- seed 002, 3.5.9.1: macros to write legible expressions ---- */
        { "MINUTE", "60" },
        { "HOUR", "(60 * $(MINUTE))" },
        { "StateTimer", "(CurrentTime - EnteredCurrentState)" },
        { "ActivityTimer", "(CurrentTime - EnteredCurrentActivity)" },
        { "ActivationTimer", "(CurrentTime - JobStart)" },
        { "LastCkpt", "(CurrentTime - LastPeriodicCheckpoint)" },
        { "NonCondorLoadAvg", "(LoadAvg - CondorLoadAvg)" },
        { "BackgroundLoad", "0.3" },
        { "HighLoad", "0.5" },
        { "StartIdleTime", "15 * $(MINUTE)" },
        { "ContinueIdleTime", "5 * $(MINUTE)" },
        { "MaxSuspendTime", "10 * $(MINUTE)" },
        { "MaxVacateTime", "10 * $(MINUTE)" },
        { "KeyboardBusy", "KeyboardIdle < $(MINUTE)" },
        { "ConsoleBusy", "(ConsoleIdle  < $(MINUTE))" },
        { "CPUIdle", "$(NonCondorLoadAvg) <= $(BackgroundLoad)" },
        { "CPUBusy", "$(NonCondorLoadAvg) >= $(HighLoad)" },
        { "KeyboardNotBusy", "($(KeyboardBusy) == False)" },
        { "MachineBusy", "($(CPUBusy) || $(KeyboardBusy))" },
        /* Used by 3.5.9.1 and 3.5.9.4 without a definition there; these
         * are HTCondor's: jobs under 15 MiB, vanilla universe (5), CPU
         * busy while the keyboard is not. */
        { "SmallJob", "(TARGET.ImageSize < (15 * 1024))" },
        { "IsVanilla", "(TARGET.JobUniverse == 5)" },
        { "JustCpu", "($(CPUBusy) && ($(KeyboardBusy) == False))" },

        /* ---- 3.5.9.1: the policy expressions ---- */
        { "WANT_SUSPEND", "( $(SmallJob) || $(KeyboardNotBusy) || $(IsVanilla) )" },
        { "WANT_VACATE", "( $(ActivationTimer) > 10 * $(MINUTE) || $(IsVanilla) )" },
        { "START", "( (KeyboardIdle > $(StartIdleTime)) && ( $(CPUIdle) || "
                   "(State != \"Unclaimed\" && State != \"Owner\")) )" },
        { "SUSPEND", "( $(KeyboardBusy) || ( (CpuBusyTime > 2 * $(MINUTE)) && $(ActivationTimer) > 90 ) )" },
        { "CONTINUE", "( $(CPUIdle) && ($(ActivityTimer) > 10) && (KeyboardIdle > $(ContinueIdleTime)) )" },
        { "PREEMPT", "( ((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) || "
                     "(SUSPEND && (WANT_SUSPEND == False)) )" },
        { "MAXJOBRETIREMENTTIME", "0" },
        { "MachineMaxVacateTime", "10 * $(MINUTE)" },
        { "KILL", "False" },
        { "PERIODIC_CHECKPOINT", "( (ImageSize < 60000) && ($(LastCkpt) > (6 * $(HOUR))) ) || "
                                 "( $(LastCkpt) > (12 * $(HOUR)) )" },
        /* 3.5.2, 3.5.7.1: the default IS_OWNER; 3.5.3: the checkpoint platform. */
        { "IS_OWNER", "(START =?= FALSE)" },
        { "IS_VALID_CHECKPOINT_PLATFORM",
          "( (TARGET.JobUniverse =!= 1) || ( (MY.CheckpointPlatform =!= UNDEFINED) && "
          "( (TARGET.LastCheckpointPlatform =?= MY.CheckpointPlatform) || (TARGET.NumCkpts == 0) ) ) )" },
        { "RANK", "0" },
        { "RUNBENCHMARKS", "False" },
        { "START_BACKFILL", "False" },
        { "EVICT_BACKFILL", "False" },

        /* ---- the startd: timers, claims, slots ---- */
        { "MATCH_TIMEOUT", "120" },           /* 3.5.7.3 */
        { "KILLING_TIMEOUT", "30" },          /* 3.5.7.5 */
        { "CLAIM_WORKLIFE", "3600" },         /* 3.5.9.5 */
        { "UPDATE_INTERVAL", "300" },
        { "POLLING_INTERVAL", "5" },
        { "ALIVE_INTERVAL", "300" },
        { "MAX_CLAIM_ALIVES_MISSED", "6" },
        /* glean: the longest claim lease the agent grants (a longer
         * JobLeaseDuration is cut to it, and the claimant told). */
        { "MAX_CLAIM_LEASE_DURATION", "7200" },
        /* glean: the agent's socket (agent/daemon/conns.c): connections in
         * all (bounded by the descriptor limit; the last eighth kept for root
         * and ADMINISTRATORS), per user (root and ADMINISTRATORS are not
         * held to it), and how long one may stay silent before its Hello and
         * after it (a connection waiting for the central manager's answer
         * is not silent). */
        { "AGENT_MAX_CONNECTIONS", "1024" },
        { "AGENT_MAX_CONNECTIONS_PER_USER", "64" },
        { "AGENT_HELLO_TIMEOUT", "20" },
        { "AGENT_CONNECTION_IDLE_TIMEOUT", "1200" },
        /* glean: where an agent serves its jobs' files (docs/transfer.md;
         * 0: none); MAX_CONCURRENT_*: HTCondor's schedd knobs (param_info.in). */
        { "TRANSFER_PORT", "9620" },
        { "MAX_CONCURRENT_UPLOADS", "100" },
        { "MAX_CONCURRENT_DOWNLOADS", "100" },
        { "UNUSED_CLAIM_TIMEOUT", "600" },
        { "JOB_DEFAULT_LEASE_DURATION", "1200" }, /* 3.5.5.1: JobLeaseDuration, 20 minutes */
        { "NUM_CPUS", "$(DETECTED_CPUS)" },
        { "MEMORY", "$(DETECTED_MEMORY)" },
        { "NUM_SLOTS", "$(NUM_CPUS)" },       /* 3.5.10.1 */
        { "NUM_CLAIMS", "1" },
        { "RESERVED_DISK", "0" },
        /* The machine's size as the agent takes it (param_info.in): hyperthreads
         * counted as CPUs, no memory kept back; STARTD_NAME unset (the slots are
         * slotN@FULL_HOSTNAME). */
        { "COUNT_HYPERTHREAD_CPUS", "True" },
        { "RESERVED_MEMORY", "0" },
        { "MACHINE_RESOURCE_NAMES", "" },
        { "STARTD_ATTRS", "" },
        { "STARTD_EXPRS", "" },
        { "STARTD_SLOT_ATTRS", "" },
        { "STARTD_JOB_ATTRS", "" },
        { "SLOTS_CONNECTED_TO_KEYBOARD", "0" },
        { "SLOTS_CONNECTED_TO_CONSOLE", "0" },
        { "DISCONNECTED_KEYBOARD_IDLE_BOOST", "1200" },
        { "CONSOLE_DEVICES", "mouse, console" },
        { "JOB_RENICE_INCREMENT", "0" },
        { "CLAIM_PARTITIONABLE_LEFTOVERS", "True" },
        { "ALLOW_PSLOT_PREEMPTION", "False" },
        { "MUST_MODIFY_REQUEST_EXPRS", "False" },
        { "MODIFY_REQUEST_EXPR_REQUESTCPUS", "quantize(RequestCpus, {1})" },                      /* 3.5.10.7 */
        /* The manual writes TotalSlotMem, an attribute no slot has: TotalSlotMemory is meant. */
        { "MODIFY_REQUEST_EXPR_REQUESTMEMORY", "quantize(RequestMemory, {TotalSlotMemory / TotalSlotCpus / 4})" },
        { "MODIFY_REQUEST_EXPR_REQUESTDISK", "quantize(RequestDisk, {1024})" },
        { "CONSUMPTION_POLICY", "False" },
        { "CONSUMPTION_CPUS", "quantize(target.RequestCpus, {1})" },   /* seed 003 */
        { "CONSUMPTION_MEMORY", "quantize(target.RequestMemory, {128})" },
        { "CONSUMPTION_DISK", "quantize(target.RequestDisk, {1024})" },
        { "SLOT_WEIGHT", "Cpus" },
        /* Under systemd, the slots and jobs live in this transient scope
         * (Delegate=yes) beside the agent's service, so that systemd can
         * restart the agent while its jobs run on: auto is the service's
         * name with -jobs.scope (glean-agent-jobs.scope); empty: in the
         * service's own cgroup. BASE_CGROUP, when set, wins. */
        { "AGENT_JOBS_SCOPE", "auto" },
        /* The fork executor's cgroup v2 leaves (one per job, so that a
         * process that calls setsid ends with its job): auto is the agent's
         * own cgroup v2 unless that is the root; a path (relative to the
         * cgroup2 mount) is made if absent; none: process groups only. */
        { "FORK_EXECUTOR_CGROUP", "auto" },

        /* ---- submit (3.5.10.7) ---- */
        { "JOB_DEFAULT_REQUESTMEMORY", "ifThenElse(MemoryUsage =!= UNDEFINED, MemoryUsage, 1)" },
        { "JOB_DEFAULT_REQUESTCPUS", "1" },
        { "JOB_DEFAULT_REQUESTDISK", "DiskUsage" },

        /* ---- negotiator and accountant (seeds 000, 001, 003) ---- */
        { "NEGOTIATOR_INTERVAL", "60" },
        { "NEGOTIATOR_MIN_INTERVAL", "5" },
        { "NEGOTIATOR_CYCLE_DELAY", "20" },
        { "NEGOTIATOR_UPDATE_INTERVAL", "300" },
        { "NEGOTIATOR_TIMEOUT", "30" },
        /* glean's own: what one user or address can make the central manager keep (docs/negotiator.md). */
        { "NEGOTIATOR_IDLE_TIMEOUT", "600" },
        { "NEGOTIATOR_MAX_CONNECTIONS_PER_USER", "64" },
        { "NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS", "16" },
        { "NEGOTIATOR_MAX_OUTPUT", "268435456" },
        { "NEGOTIATOR_MAX_WAITS_PER_USER", "1000" },
        { "NEGOTIATOR_TRANSFER_WAIT", "300" }, /* issue 24 */
        { "NEGOTIATOR_MAX_TIME_PER_CYCLE", "1200" },
        { "NEGOTIATOR_MAX_TIME_PER_SUBMITTER", "60" },
        { "NEGOTIATOR_MAX_TIME_PER_SCHEDD", "120" },
        { "NEGOTIATOR_MAX_TIME_PER_PIESPIN", "120" },
        { "NEGOTIATOR_CONSIDER_PREEMPTION", "True" },
        { "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION", "False" },
        { "NEGOTIATOR_USE_SLOT_WEIGHTS", "True" },
        { "NEGOTIATOR_USE_WEIGHTED_DEMAND", "True" },
        { "NEGOTIATOR_MATCHLIST_CACHING", "True" },
        { "NEGOTIATOR_DEPTH_FIRST", "False" },
        { "NEGOTIATOR_NUM_THREADS", "1" },
        { "NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE", "200" },
        { "NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES", "False" },
        /* 3.4.8: subgroups asking for more than their parent are scaled down
         * (HTCondor's code falls back to False too). */
        { "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", "False" },
        { "NEGOTIATE_ALL_JOBS_IN_CLUSTER", "False" },
        { "SIGNIFICANT_ATTRIBUTES", "" },
        { "SCHEDD_INTERVAL", "300" },
        { "NEGOTIATOR_PRE_JOB_RANK",
          "(10000000 * My.Rank) + (1000000 * (RemoteOwner =?= UNDEFINED)) - (100000 * Cpus) - Memory" },
        { "NEGOTIATOR_POST_JOB_RANK",
          "(RemoteOwner =?= UNDEFINED) * (ifthenElse(isUndefined(KFlops), 1000, Kflops) - SlotID - "
          "1.0e10*(Offline=?=True))" },
        { "PREEMPTION_REQUIREMENTS", "False" },
        { "PREEMPTION_REQUIREMENTS_STABLE", "True" },
        { "PREEMPTION_RANK", "(RemoteUserPrio * 1000000) - ifThenElse(isUndefined(TotalJobRuntime), 0, TotalJobRuntime)" },
        { "PREEMPTION_RANK_STABLE", "True" },
        { "PRIORITY_HALFLIFE", "86400" },           /* 3.4.1 */
        { "DEFAULT_PRIO_FACTOR", "1.0" },           /* 3.4.2 */
        { "NICE_USER_PRIO_FACTOR", "10000000" },    /* seed 001: "ten million" */
        { "REMOTE_PRIO_FACTOR", "10000000" },
        { "ACCOUNTANT_LOCAL_DOMAIN", "" },
        { "GROUP_NAMES", "" },
        { "GROUP_ACCEPT_SURPLUS", "False" },
        { "GROUP_AUTOREGROUP", "False" },
        { "GROUP_QUOTA_ROUND_ROBIN_RATE", "1.0e100" },
        { "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS", "3" },
        { "GROUP_SORT_EXPR",
          "ifThenElse(AccountingGroup=?=\"<none>\",3.4e+38,ifThenElse(GroupQuota>0,"
          "GroupResourcesInUse/GroupQuota,3.3e+38))" },

        /* ---- defragmentation (3.5.10.8) ---- */
        { "DEFRAG_INTERVAL", "600" },
        { "DEFRAG_DRAINING_MACHINES_PER_HOUR", "0" },
        { "DEFRAG_MAX_WHOLE_MACHINES", "-1" },
        { "DEFRAG_MAX_CONCURRENT_DRAINING", "-1" },

        /* ---- the pool and the files ---- */
        /* HTCondor's (param_info.in), informational: glean reads it nowhere (its
         * daemons are systemd services); the ROLE metaknobs add to it as
         * HTCondor's do (use ROLE : Execute: MASTER STARTD). */
        { "DAEMON_LIST", "MASTER" },
        { "UID_DOMAIN", "$(FULL_HOSTNAME)" },
        { "SPOOL", "/var/lib/glean" },
        /* The central manager's database: the accounts and the job queue. */
        { "NEGOTIATOR_DATABASE", "$(SPOOL)/negotiator.db" },
        /* The pool: where agents and remote users find the central manager. */
        { "CONDOR_HOST", "" },                       /* empty: the agent runs alone (glean agent run) */
        { "COLLECTOR_HOST", "$(CONDOR_HOST)" },      /* host or host:port */
        { "COLLECTOR_PORT", "9628" },                /* glean's own port, when COLLECTOR_HOST has none */
        { "NEGOTIATOR_ADDRESS", "" },                /* the address glean-negotiator listens on; empty: all */
        { "NEGOTIATOR_SOCKET", "/run/glean/negotiator.sock" }, /* local users and administrators */
        { "NEGOTIATOR_PORT_FILE", "" },              /* where the port is written (COLLECTOR_PORT = 0: any free one) */
        { "CLASSAD_LIFETIME", "900" },               /* a slot ad outlives its agent's connection so long */
        { "PERIODIC_EXPR_INTERVAL", "60" },          /* PeriodicHold/Release/Remove */
        { "SYSTEM_PERIODIC_HOLD", "" },
        { "SYSTEM_PERIODIC_RELEASE", "" },
        { "SYSTEM_PERIODIC_REMOVE", "" },
        /* Who a submit may say it is (queue/jobcmd-policy.c): the
         * accounting groups every user may name (a group allows its
         * subgroups; "*" any), ACCOUNTING_GROUPS_ALLOWED_<user> more for one
         * user; root and ADMINISTRATORS name any user and group. */
        { "ACCOUNTING_GROUPS_ALLOWED", "" },
        /* SUBMIT_REQUIREMENT_<Name> (and _REASON) for each name listed: true of every job submitted, or refused. */
        { "SUBMIT_REQUIREMENT_NAMES", "" },
        /* The agents (the Machine of their Hello) whose relayed users may be ADMINISTRATORS; none: no relayed
         * request is an administrator's, root's included. */
        { "ADMINISTRATORS_RELAYED_BY", "" },
        /* HTCondor's limits of the queue (condor_schedd's defaults), enforced
         * by the central manager: jobs of one submission, of one owner, of
         * the whole queue. */
        { "MAX_JOBS_PER_SUBMISSION", "20000" },
        { "MAX_JOBS_PER_OWNER", "100000" },
        { "MAX_JOBS_SUBMITTED", "2147483647" },
        { "SUBMIT_ID_LIFETIME", "86400" },            /* a submission's id answers a resend so long */
        { "SUBMIT_IDS_PER_USER", "1000000" },         /* ids of one user remembered at most */
        { "SUBMIT_RETRY_TIME", "120" },               /* glean submit retries a lost answer so long */
        { "HISTORY_DURATION", "604800" },            /* a week in the history */
        { "HISTORY_MAX_JOBS", "1000000" },
        /* HTCondor's schedd and condor_submit knobs the central manager does
         * (queue/submit-knobs.c, queue/queue-limits.c; HTCondor's defaults).
         * The history is in NEGOTIATOR_DATABASE: HISTORY = "" turns it off,
         * a path is not written; it keeps at most MAX_HISTORY_LOG x
         * (MAX_HISTORY_ROTATIONS + 1) bytes of ads. MAX_JOBS_RUNNING: jobs
         * with a claim at once. APPEND_REQ_VANILLA (else APPEND_REQUIREMENTS)
         * is and'ed to every job's Requirements and SUBMIT_ATTRS inserted, at
         * the central manager. */
        { "HISTORY", "$(SPOOL)/history" },
        { "ENABLE_HISTORY_ROTATION", "true" },
        { "MAX_HISTORY_LOG", "20971520" },
        { "MAX_HISTORY_ROTATIONS", "2" },
        { "MAX_JOBS_RUNNING", "MIN({$(DETECTED_MEMORY), 10000})" },
        { "APPEND_REQUIREMENTS", "" },
        { "APPEND_REQ_VANILLA", "" },
        { "SUBMIT_ATTRS", "" },
        { "NEGOTIATOR_RECONNECT_MAX", "60" },        /* the agent's back-off ceiling, seconds */
        /* The agent keeps a user's multi-part submit until its last part (agent/daemon/relay.c): dropped when
         * the next part does not come within so many seconds, or past so many bytes kept for one user. */
        { "RELAY_SUBMIT_TIMEOUT", "60" },
        { "RELAY_SUBMIT_MAX_BYTES", "268435456" },
        { "FILESYSTEM_DOMAIN", "$(FULL_HOSTNAME)" },
        /* glean submit (config/submit-xfer.c): should_transfer_files when a description does not say (YES, NO
         * or IF_NEEDED; empty or anything else: IF_NEEDED, as condor_submit). */
        { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES", "" },
        { "ALL_DEBUG", "" },
        { "ETC", "/etc/glean" },
        /* The pool key: 64 hex digits, root-only (glean pool-key --new). */
        { "POOL_KEY_FILE", "$(ETC)/pool.key" },
        /* Machine identities (glean token): the central manager's signing key (root-only), its public key
         * that every machine pins, the tokens it issued and revoked, and where a machine keeps its own. */
        /* How agents and the central manager authenticate each other: TOKEN (IDTOKENS), PASSWORD (the pool
         * key), FS; empty: what the machine holds (its token, else the pool key; on the central manager
         * TOKEN with a signing key and PASSWORD with a pool key file). */
        { "SEC_DEFAULT_AUTHENTICATION_METHODS", "" },
        { "SEC_TOKEN_POOL_SIGNING_KEY_FILE", "$(ETC)/signing.key" },
        { "SEC_TOKEN_MANAGER_KEY_FILE", "$(ETC)/manager.pub" },
        { "SEC_TOKEN_DIRECTORY", "$(ETC)/tokens.d" },
        { "TOKEN_REGISTRY", "$(SPOOL)/tokens" },
        { "LOCAL_CONFIG_DIR", "$(ETC)/config.d" },
        /* HTCondor's (scripts .pl .py .sh, .cfsaved too) and editors' and dpkg's leftovers. */
        { "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP",
          "^((\\..*)|(.*\\.pl)|(.*\\.py)|(.*\\.sh)|(.*~)|(#.*)|(.*\\.rpmsave)|(.*\\.rpmnew)|"
          "(.*\\.dpkg-(old|new|dist|tmp))|(.*\\.cfsaved)|(.*\\.swp))$" },
        /* Files read after LOCAL_CONFIG_DIR (or COMMAND |); one missing is an error unless
         * REQUIRE_LOCAL_CONFIG_FILE is false. */
        { "LOCAL_CONFIG_FILE", "" },
        { "REQUIRE_LOCAL_CONFIG_FILE", "true" },
        /* Seconds an include command (or LOCAL_CONFIG_FILE = COMMAND |) may run before it is killed. */
        { "GLEAN_CONFIG_COMMAND_TIMEOUT", "30" },
};

/* DETECTED_PHYSICAL_CPUS: the online CPUs that are the first thread of
 * their core (the first CPU of their topology/thread_siblings_list); cpus
 * when the topology cannot be read. */
static long physical_cpus(long cpus) {
        long n = 0;

        for (long c = 0; c < 4096; c++) {
                char path[96];
                long first;
                FILE *f;

                snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld/topology/thread_siblings_list", c);
                f = fopen(path, "re");
                if (!f) {
                        snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%ld", c);
                        if (access(path, F_OK) < 0)
                                break; /* past the last CPU */
                        continue;      /* offline */
                }
                if (fscanf(f, "%ld", &first) == 1 && first == c)
                        n++;
                fclose(f);
        }
        return n > 0 && n <= cpus ? n : cpus;
}

static int add_detected(Config *cfg) {
        char host[256] = "localhost", buf[32];
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        long pages = sysconf(_SC_PHYS_PAGES), page_size = sysconf(_SC_PAGESIZE);
        long long mib = pages > 0 && page_size > 0 ? (long long) pages * page_size / (1024 * 1024) : 0;
        char *dot;
        int r;

        if (cpus < 1)
                cpus = 1;
        snprintf(buf, sizeof(buf), "%ld", cpus);
        r = config_define(cfg, "DETECTED_CPUS", buf, CONFIG_SOURCE_DETECTED, 0);
        if (r >= 0)
                r = config_define(cfg, "DETECTED_CORES", buf, CONFIG_SOURCE_DETECTED, 0);
        snprintf(buf, sizeof(buf), "%ld", physical_cpus(cpus));
        if (r >= 0)
                r = config_define(cfg, "DETECTED_PHYSICAL_CPUS", buf, CONFIG_SOURCE_DETECTED, 0);
        snprintf(buf, sizeof(buf), "%lld", mib);
        if (r >= 0)
                r = config_define(cfg, "DETECTED_MEMORY", buf, CONFIG_SOURCE_DETECTED, 0);

        if (gethostname(host, sizeof(host) - 1) < 0)
                snprintf(host, sizeof(host), "localhost");
        host[sizeof(host) - 1] = '\0';
        if (r >= 0)
                r = config_define(cfg, "FULL_HOSTNAME", host, CONFIG_SOURCE_DETECTED, 0);
        dot = strchr(host, '.');
        if (dot)
                *dot = '\0';
        if (r >= 0)
                r = config_define(cfg, "HOSTNAME", host, CONFIG_SOURCE_DETECTED, 0);
        return r;
}

int config_add_defaults(Config *cfg) {
        int r;

        for (size_t i = 0; i < sizeof(defaults) / sizeof(defaults[0]); i++) {
                r = config_define(cfg, defaults[i].name, defaults[i].value, CONFIG_SOURCE_DEFAULT, 0);
                if (r < 0)
                        return r;
        }
        return add_detected(cfg);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h — what the files of glean-agent share: the agent, its slots and
 * its client connections. The decisions live in the agent library (slots,
 * policy, load); these files are the shell around them: the event loop,
 * the unix socket, the executor, the sensors and the logs.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <systemd/sd-event.h>

#include "cgroup.h"
#include "classad.h"
#include "config.h"
#include "cron.h"
#include "exec.h"
#include "log.h"
#include "policy.h"
#include "proto.h"
#include "bpf/sensors.h"
#include "common/usock.h"
#include "slots.h"
#include "transfer.h"
#include "xfer/xfer.h"

typedef struct Agent Agent;
typedef struct Conn Conn;
typedef struct Slot Slot;
typedef struct Upstream Upstream;
typedef struct RelayEntry RelayEntry;
typedef struct RelaySeries RelaySeries;
typedef struct NetWatch NetWatch;
typedef struct ConnUsers ConnUsers;
typedef struct AgentCron AgentCron;
typedef struct AgentXfer AgentXfer;         /* transfer.c */
typedef struct AgentXferChild AgentXferChild; /* transfer.c */
typedef struct AgentXrun AgentXrun;         /* xrun.c */

struct Slot {
        Agent *agent;
        Slot *next;
        char name[32];          /* "slot1", "slot1_2" */
        AgentSlotDef def;       /* a d-slot: its parent's def */
        bool partitionable, dynamic;
        Slot *parent;           /* a d-slot's p-slot */
        unsigned next_sub;      /* p-slot: the number of its next d-slot */
        AgentRes res;           /* what the slot has now (a p-slot: what is left) */
        ClassAd *ad;
        AgentSlotSM *sm;

        AgentJob *job;          /* the running job */
        AgentJobSpec *spec;     /* the job being started / running */
        char start_error[256];  /* why the last start failed ("" when it did not) */
        int start_failure;      /* its AgentStartFailure (agent/exec.h) and errno */
        int start_errno;
        const char *exit_reason;/* why the job is being ended: "vacated", "lease expired", ... */
        Conn *claimant;         /* the connection that holds the claim */
        uid_t claimant_uid;
        char claim_id[80];
        /* A preempting claim (a better RANK) waiting for the current job to
         * go: its claimant hears of its own claim only ("" when none). */
        Conn *pre_claimant;
        uid_t pre_claimant_uid;
        char pre_claim_id[80];

        Cg *cg;                 /* the slot's cgroup (NULL without cgroups) */
        bool has_cpus;          /* ASSIGN_CPU_AFFINITY: the slot is pinned to cpus */
        AgentCpus cpus;         /* its CPUs (its cgroup's cpuset.cpus) */
        AgentCpus cpus_free;    /* a p-slot: those of its CPUs no d-slot has */
        int64_t killing_timeout;/* KILLING_TIMEOUT of the slot, seconds */
        bool adopting;          /* the next start adopts a job of an earlier run */
        AgentJobId adopt_id;    /* its job, main pid, reaper (agent/exec.h) */
        double adopt_started;
        int64_t alive_recorded; /* the last keep-alive the state file's mtime says (0: none recorded) */
        AgentJob *backfill;     /* the backfill command */
        double condor_load;     /* CondorLoadAvg */
        int load_idx;           /* its number for the load sensor, -1: counted from CPU time */
        uint64_t load_integral, load_t; /* the load sensor's last reading */
        bool load_sampled;
        double last_cpu;        /* job CPU seconds at the last sample */
        int64_t last_sample;
        int64_t last_account;   /* draining statistics */
        bool release;           /* a d-slot to free */
        AgentCronMerged *cron;  /* what the startd cron merged into ad (cron.c) */
        /* A run whose files travel (xrun.c; NULL: none): its sandbox, the
         * input before the job, the output after it. */
        AgentXrun *xrun;
        ClassAd *exit_extra;    /* attributes the next JobExit carries too (bytes, a transfer's hold) */
};

struct Conn {
        Agent *agent;
        Conn *next, *prev;      /* in a->conns (conns.c) */
        GleanUsockConn *uc;     /* its socket, frames and output (common/usock.h); NULL: upstream */
        sd_event_source *idle_src; /* AGENT_HELLO_TIMEOUT / AGENT_CONNECTION_IDLE_TIMEOUT (conns.c) */
        GleanPeer peer;
        bool hello;             /* the handshake is done */
        bool manager;           /* the peer is the central manager: it gets SlotUpdate */
        bool dead;              /* sending failed: dropped by the deferred work */
        bool upstream;          /* the connection to the central manager (upstream.c): never in conns */
        /* Relayed requests (relay.c): how many await their last reply. */
        unsigned relays;
        RelaySeries *series;    /* relay.c: its multi-part Submit, kept until the last part */
};

struct Agent {
        sd_event *event;
        Config *cfg;
        AgentMachine machine;
        CarvePolicy *carve;    /* what a job takes of a partitionable slot (MODIFY_REQUEST_EXPR_*, parsed once) */
        AgentIdleKnobs idle;
        AgentExecutor *exec;
        CgRoot *cgroot;         /* the agent's cgroup v2 subtree (NULL: the fork executor) */
        CgRoot *fork_leaves;    /* the fork executor's cgroup v2 leaves (FORK_EXECUTOR_CGROUP; NULL: none) */
        CgScope *scope;         /* the jobs' scope under systemd (scope.c; NULL: none) */
        GleanSensors *sensors;  /* the kernel sensors (NULL: user space only) */
        sd_event_source *sensor_io, *sensor_timer;
        int64_t sensor_interval; /* SENSOR_SAMPLE_INTERVAL */
        double load_decay;      /* SLOT_LOAD_DECAY_TIME */
        bool psi_warned;
        bool assign_cpus;       /* ASSIGN_CPU_AFFINITY, and the cpuset controller is there */
        AgentCpus cpus_free;    /* the agent's CPUs no static or p-slot has */
        AgentRunAs runas;
        char *slot_user;
        char **admins;
        char *execute;
        char *socket_path;
        GleanUsock *server;     /* the unix socket (server.c) */
        sd_event_source *eval_timer, *update_timer, *defer;
        Slot *slots;
        Conn *conns;
        /* conns.c: connections counted in all and per uid, their limits
         * and timeouts; accepting paused at the descriptor limit. */
        unsigned n_conns, max_conns, conn_reserve, max_conns_per_user;
        int64_t idle_timeout, hello_timeout;
        ConnUsers *conn_users;
        bool accept_paused;
        sd_event_source *accept_timer;
        int64_t start_time;
        int64_t polling_interval, update_interval;
        bool shutting_down;
        AgentShutdownHow shutdown_how;
        bool draining;
        double drain_badput, drain_unclaimed;
        int64_t drain_last;
        int exit_code;
        Upstream *up;           /* the central manager connection (NULL: standalone, no COLLECTOR_HOST) */
        RelayEntry *relays;     /* relayed requests awaiting replies */
        int64_t relay_next_id;  /* the last RequestId upstream: relayed requests' and kept messages' */
        NetWatch *net;          /* the machine's addresses (netwatch.c) */
        AgentCron *cron;        /* the startd cron (cron.c) */
        AgentXfer *xfer;        /* the transfer listener and its sessions (transfer.c; NULL: TRANSFER_PORT 0) */
        AgentXferChild *xfer_children; /* every transfer session's process (transfer.c) */
};

/* ---- slots.c ---- */
int agent_slots_create(Agent *a, ConfigError *err);
void agent_slots_free(Agent *a);
Slot *agent_slot_find(Agent *a, const char *name);       /* "slot1" or "slot1@host" */
/* The name of s in what the agent sends: "slot1" when the agent's name is
 * its machine's (the central manager adds "@machine"), else in full
 * ("slot1@name@machine" with STARTD_NAME = name). buf: at least
 * AGENT_WIRE_NAME_MAX bytes. */
#define AGENT_WIRE_NAME_MAX 300
const char *agent_slot_wire_name(const Slot *s, char *buf, size_t len);
Slot *agent_slot_by_claim(Agent *a, const char *claim_id);
/* After the state machine of s moved: the preempting claim that became the
 * current one takes the claimant's place; one that is gone is forgotten. */
void agent_slot_sync_claims(Slot *s);
/* A new d-slot of p with res, in Owner (not yet claimed). */
int agent_slot_new_dynamic(Slot *p, const AgentRes *res, Slot **ret);
void agent_slot_destroy(Slot *s); /* a d-slot: resources back to its p-slot */
/* s never runs another job (agent_sm_set_broken): one log record
 * (GLEAN_SLOT, GLEAN_REASON, MESSAGE_ID in systemd/glean.catalog), its ad
 * says SlotBrokenReason, START = FALSE. Once: a second call changes nothing. */
void agent_slot_break(Slot *s, const char *reason);
/* The last start of s failed on the job's side (its input, output or
 * error file, its initial directory, its program, its account) for a
 * reason that trying again will not change: HoldReasonCode (HTCondor's:
 * 8 input, 7 output and error, 14 initial directory, 6 the program, 23
 * the account), HoldReasonSubCode (the errno) and HoldReason, for the
 * refusal of ActivateClaim, in a new ad. NULL when it may be transient (a
 * fork refused with EAGAIN, memory, a cgroup not made: the claimant backs
 * off and tries again). */
ClassAd *agent_slot_start_hold(const Slot *s);
/* Sensors, load and the per-slot attributes, then the policy of every slot. */
void agent_evaluate(Agent *a);
void agent_refresh_ads(Agent *a);
void agent_schedule(Agent *a);       /* re-arm the evaluation timer */
void agent_publish(Agent *a, Slot *s); /* SlotUpdate to the manager connections */
bool agent_idle_for_exit(const Agent *a); /* shutting down and no job left */
void agent_request_defer(Agent *a);  /* run the deferred work (free released d-slots, exit) soon */
int64_t agent_now(void);

/* ---- server.c ---- */
int agent_server_start(Agent *a);
void agent_server_stop(Agent *a);
void agent_conn_drop(Conn *c);
void agent_server_reap(Agent *a); /* drop the dead connections */
/* Queues msg for the peer (never blocks). On the upstream connection:
 * see agent_upstream_send(). */
int agent_conn_send(Conn *c, const ClassAd *msg);
/* A Reply to req (its RequestId echoed) with Ok, Reason and extra's attributes. */
int agent_reply(Conn *c, const ClassAd *req, bool ok, const char *reason, const ClassAd *extra);
/* Carries out a validated request of c (a local client or the central
 * manager): the commands of the slots, and for local clients the relayed
 * ones. < 0 only when c cannot be written to any more. */
int agent_dispatch(Conn *c, const ClassAd *req, GleanCommand cmd);
/* ---- userlog.c: a UserLogEvent appended to the job's log as its Owner ---- */
int agent_userlog_event(Conn *c, const ClassAd *req);

/* Tell the claimant of s (if connected) about an event of its claim. */
void agent_notify_claimant(Slot *s, GleanCommand cmd, ClassAd *msg);

/* ---- conns.c: the limits of the agent's socket ---- */
/* AGENT_MAX_CONNECTIONS (bounded by the descriptor limit),
 * AGENT_MAX_CONNECTIONS_PER_USER, AGENT_CONNECTION_IDLE_TIMEOUT,
 * AGENT_HELLO_TIMEOUT. */
int agent_conns_setup(Agent *a);
void agent_conns_free(Agent *a);
/* May a new connection of peer be kept? 0, or -EMFILE / -EUSERS and why
 * (a sentence for the refused client). Root and ADMINISTRATORS (admin)
 * are not held to the per-user limit and have a reserve of their own. */
int agent_conns_admit(Agent *a, const GleanPeer *peer, bool admin, char *why, size_t whylen);
unsigned agent_conns_of(const Agent *a, uid_t uid);
void agent_conns_add(Agent *a, Conn *c);    /* into a->conns, counted */
void agent_conns_remove(Agent *a, Conn *c); /* out of a->conns; accepting again if paused */
/* Input came (or the Hello): the connection's silence timer starts over. */
void agent_conn_touch(Conn *c);
/* accept4 failed with EMFILE/ENFILE (error): stop accepting until a
 * connection goes or a second has passed. */
void agent_conns_accept_pause(Agent *a, int error);
void agent_conns_accept_again(Agent *a);

/* ---- upstream.c: the persistent connection to the central manager ---- */
/* Reads COLLECTOR_HOST (empty: a->up stays NULL, the agent is standalone),
 * COLLECTOR_PORT, POOL_KEY_FILE and NEGOTIATOR_RECONNECT_MAX. Before
 * agent_adopt_jobs(), which gives adopted claims of the manager back to it. */
int agent_upstream_setup(Agent *a);
void agent_upstream_start(Agent *a);   /* the first dial, from the event loop */
void agent_upstream_stop(Agent *a);    /* flushes what is queued (briefly), closes */
void agent_upstream_free(Agent *a);    /* after the slots are gone */
/* The connection object the central manager's claims hold (s->claimant):
 * it outlives every TCP connection. NULL when standalone. */
Conn *agent_upstream_conn(Agent *a);
/* The Hello exchange is done: requests can be relayed. */
bool agent_upstream_ready(const Agent *a);
/* Sends msg up, sealed. JobExit, and Event with ClaimEnded, get a
 * RequestId of their own and are kept until the manager's Reply to it
 * (sent once its database holds what they changed); every one not
 * acknowledged is sent again, in order, after the re-advertisement of each
 * new connection. Anything else is -ENOTCONN when the connection is not
 * ready. Kept messages are files too (kept.c): an agent started again
 * sends those an earlier run left, after its slots. */
int agent_upstream_send(Agent *a, const ClassAd *msg);
/* SlotUpdate of s (SlotAd, and ClaimId when the manager holds its claim). */
void agent_upstream_publish(Agent *a, Slot *s);
/* Closes the connection soon (from the event loop) with a logged reason,
 * then reconnects with back-off. */
void agent_upstream_fail(Agent *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Waiting to dial again: dial now, the back-off started over (the network
 * changed). Otherwise nothing. */
void agent_upstream_retry_now(Agent *a);

/* ---- netwatch.c: the machine's interfaces and addresses (rtnetlink) ---- */
/* Reads them and watches for changes; before the slots are made. Never
 * fatal (without netlink: logged, the connection's address only). */
int agent_netwatch_open(Agent *a);
void agent_netwatch_close(Agent *a);
/* MyAddress, NetworkInterfaces and ManagerInterface into ad (agent/netinfo.h). */
void agent_netwatch_ad(Agent *a, ClassAd *ad);
/* The upstream TCP connection fd is made / is gone (upstream.c). */
void agent_netwatch_connected(Agent *a, int fd);
void agent_netwatch_disconnected(Agent *a);

/* ---- relay.c: users' requests for the central manager ---- */
/* Whether a local client's request goes to the central manager: Submit,
 * Query, History, QuerySlots, JobAction, UserPrio, Wait; Vacate, Drain and
 * CancelDrain naming another machine (Machine, or Slot "name@host"). */
bool agent_relay_wanted(const Agent *a, const ClassAd *req, GleanCommand cmd);
/* Forwards req with RelayUser/RelayUid of c and a RequestId of the
 * agent's, or refuses it; the replies come back to c. */
int agent_relay(Conn *c, const ClassAd *req, GleanCommand cmd);
/* A Reply from the central manager: to the client that asked (dropped
 * when it is gone). Takes nothing. */
void agent_relay_reply(Agent *a, const ClassAd *reply);
void agent_relay_forget_conn(Agent *a, Conn *c); /* c goes away */
void agent_relay_upstream_lost(Agent *a);        /* every request in flight fails */

/* ---- main.c ---- */
/* The expanded value of a string knob; def (may be NULL) when it is
 * undefined or empty. A broken definition is logged (file:line) and
 * returned as the error. */
int agent_knob_string(const Config *cfg, const char *name, const char *def, char **ret);
/* Logs "what: <the error with its file and line>"; returns r. */
int agent_log_config_error(const ConfigError *err, int r, const char *what);

/* ---- cgroups.c ---- */
/* Chooses the executor (AGENT_EXECUTOR, BASE_CGROUP) and sets a->exec. */
int agent_cgroups_setup(Agent *a);
void agent_slot_cgroup_path(const Slot *s, char *buf, size_t len);
/* "slot1/job", "slot1/slot1_2/backfill": the cgroup of a slot's leaf
 * below <base>/slots, malloc'd (NULL: out of memory). */
char *agent_slot_cgroup_leaf(const Slot *s, const char *leaf);
/* The slot's cgroup and its limits; with ASSIGN_CPU_AFFINITY its CPUs
 * (taken from its p-slot's, or the agent's) in cpuset.cpus and the ad. */
int agent_slot_cgroup_open(Slot *s);
void agent_slot_cgroup_close(Slot *s); /* removes it (it must be empty) */
/* A d-slot's CPUs back to its p-slot (whose ad says so then). */
void agent_slot_cpus_release(Slot *s);
/* AssignedCpus of the slot's ad (a p-slot: its CPUs no d-slot has). */
void agent_slot_cpus_ad(Slot *s);
void agent_cgroups_ad(const Agent *a, ClassAd *ad); /* CgroupControllers, HasCgroups */
/* Another process than this agent in <base>/agent (another agent on the same base): its pid, else 0. */
pid_t agent_cgroup_other_agent(const Agent *a);

/* ---- kept.c: the messages kept for the manager, as files ---- */
/* Saves a kept message's text as number seq (a file in
 * EXECUTE/.glean-state/kept/), forgets it, and loads them all in order:
 * each(userdata, seq, msg) for every file, whose message is removed (and
 * logged) when each() is < 0 or it does not parse; the number of messages
 * taken, and *ret_next past the highest number found. */
typedef int (*AgentKeptFn)(void *userdata, uint64_t seq, const ClassAd *msg);
int agent_kept_save(const Agent *a, uint64_t seq, const char *text, size_t len);
void agent_kept_forget(const Agent *a, uint64_t seq);
int agent_kept_load(const Agent *a, AgentKeptFn each, void *userdata, uint64_t *ret_next);

/* ---- scope.c ---- */
/* Under a systemd service with the cgroup executor, no BASE_CGROUP and
 * AGENT_JOBS_SCOPE not empty: the jobs' transient scope, found or created
 * with its placeholder in <scope>/init, and *ret_base its cgroup (relative
 * to the mount): 1. 0 and no base where there is none to have; -errno
 * (logged) when one was wanted and could not be had. */
int agent_scope_setup(Agent *a, char **ret_base);

/* ---- adopt.c ---- */
/* EXECUTE/.glean-state, made (0700) if it is not there, into buf. */
int agent_state_dir(const Agent *a, char *buf, size_t len);
void agent_state_save(Slot *s);   /* the running job's state file */
void agent_state_remove(Slot *s);
/* The state file's modification time follows the claim's last keep-alive
 * (a restarted agent ends a claim whose lease ran out meanwhile): touched
 * when it moved. Cheap when it did not. */
void agent_state_alive(Slot *s);
/* The slot's state file (malloc'ed; NULL: none): its mtime is the claim's
 * last keep-alive, which the job's reaper watches once the agent died. */
char *agent_state_file(Slot *s);
/* <EXECUTE>/.glean-state/<slot>.exit, where the job's reaper writes its
 * end (the directory made, root-only, when missing): a malloc'd path, NULL
 * when it cannot be had (then the job runs without one). */
char *agent_state_exit_file(Slot *s);
/* At start: re-adopt the jobs of an earlier run, clean up the rest. */
void agent_adopt_jobs(Agent *a);

/* ---- sensors.c ---- */
/* Seconds since the owner last used a terminal (utmp ttys) and the console
 * devices (CONSOLE_DEVICES); INT32_MAX when nothing tells. */
void agent_sense_idle(const Agent *a, int64_t now, int64_t *ret_kbd, int64_t *ret_console);
double agent_sense_loadavg(void);
/* The kernel sensors by the knobs, each sensor's method logged once; the
 * sampling timer. Never fatal: without them the agent senses in user space. */
int agent_sensors_open(Agent *a);
void agent_sensors_close(Agent *a);
void agent_sensors_slot_add(Slot *s);    /* after its cgroup is open */
void agent_sensors_slot_remove(Slot *s); /* before its cgroup goes */
void agent_sensors_sample(Agent *a);     /* every slot's CondorLoadAvg, from the load sensor */
void agent_sensors_ad(const Agent *a, Slot *s); /* InputSensor, TtySensor, LoadSensor (once: they stay) */
/* PSI of the machine (Total*) and of each slot's cgroup, SlotCpuTime. */
void agent_sense_pressure(Agent *a);

/* ---- cron.c: the startd cron (agent/cron.h) ---- */
/* Reads STARTD_CRON_* (an error logged with its file and line and
 * returned); right after the configuration is loaded, so that its
 * warnings are logged with the others. */
int agent_cron_configure(Agent *a);
/* The account of the runs (STARTD_CRON_USER), the jobs' timers; from the
 * event loop's start on. */
int agent_cron_start(Agent *a);
/* Every run killed and reaped, the table gone. */
void agent_cron_stop(Agent *a);
/* The published ads into every slot's ad (agent_refresh_ads). */
void agent_cron_merge_slots(Agent *a);

/* ---- transfer.c: the submit agent's listener, and every session's process ---- */
/* TRANSFER_PORT (default 9620; 0: none), TRANSFER_ADDRESS (default any),
 * MAX_CONCURRENT_UPLOADS / MAX_CONCURRENT_DOWNLOADS, MAX_TRANSFER_*_MB:
 * the listening socket in the event loop. A port that cannot be bound is
 * logged, and the agent serves no transfers. */
int agent_transfer_setup(Agent *a);
void agent_transfer_stop(Agent *a); /* every session killed (by its pid) and reaped */
int agent_transfer_port(const Agent *a); /* the port served, 0: none */
/* TransferGrant / TransferRevoke from the central manager (the upstream
 * connection only): 0, or -errno with why. */
int agent_transfer_grant(Agent *a, const ClassAd *msg, char *why, size_t whylen);
int agent_transfer_revoke(Agent *a, const ClassAd *msg, char *why, size_t whylen);
void agent_transfer_knobs(const Agent *a, uint64_t *ret_max_in_mb, uint64_t *ret_max_out_mb);

/* A process forked from the agent (root) that runs fn and reports its
 * XferResult through a pipe (xfer_result_to_text); the event loop waits
 * for it (its pidfd) and calls done with the result (one that could not
 * be read: error -EPIPE). */
typedef void (*AgentXferRun)(void *arg, XferResult *res);   /* in the child */
typedef void (*AgentXferDone)(void *userdata, const XferResult *res);
/* keep_fd: the one descriptor the child keeps besides its pipe (-1: none),
 * as fd 3; every other descriptor is closed in the child. */
int agent_xfer_child_start(Agent *a, int keep_fd, AgentXferRun fn, void *arg, AgentXferDone done, void *userdata,
                           AgentXferChild **ret);
pid_t agent_xfer_child_pid(const AgentXferChild *c);
/* SIGKILL to the child (by its pid): done is never called; reaped later. */
void agent_xfer_child_cancel(AgentXferChild *c);

/* ---- xrun.c: the execute side of a run that transfers ---- */
/* ActivateClaim with Transfer [ TransferId; TransferKey; Address ]: the
 * run's state, and s->spec turned into the sandbox's (agent/transfer.h).
 * 0 (nothing to do without Transfer), -errno with why. */
int agent_xrun_prepare(Slot *s, const ClassAd *req, const ClassAd *job, char *why, size_t whylen);
/* start_job of a slot with a run that transfers: the sandbox made, the
 * input fetched (a child), then the job started (agent_slot_start_job).
 * true when it took the start over. */
bool agent_xrun_start(Slot *s);
/* The job ended: true when the output is sent first (the exit reported
 * once it went, agent_slot_run_over). */
bool agent_xrun_job_ended(Slot *s, const AgentJobExit *ex, const char *reason);
/* A kill while a transfer runs (no job): the transfer is killed, the
 * sandbox removed and the run reported over; true when there was one. */
bool agent_xrun_kill(Slot *s, const char *reason);
bool agent_xrun_busy(const Slot *s); /* a transfer runs (or waits to be tried again) */
/* The run's Transfer into the slot's state file (adopt.c), so that an
 * agent started again sends the output of the job it re-adopts
 * (agent_xrun_prepare from the state file's Transfer). */
int agent_xrun_state(const Slot *s, ClassAd *st);
void agent_xrun_free(Slot *s);       /* the slot goes: its child killed, its sandbox removed */

/* ---- slots.c, for xrun.c ---- */
/* The job of s->spec started now (after its input arrived). */
void agent_slot_start_job(Slot *s);
/* The run of s is over without (or after) its job: the JobExit (ex may
 * be NULL: no job ran) with s->exit_extra, the state machine told. */
void agent_slot_run_over(Slot *s, const AgentJobExit *ex, const char *reason);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon.h — what the files of glean-negotiator share: the daemon, its
 * connections (agents over sealed TCP, users over the unix socket), the
 * collector's slots and the claims it holds. The decisions live in the
 * libraries (the matchmaker, the accounts, the queue); these files are the
 * shell around them: the event loop, the sockets, the claims' messages,
 * the logs.
 *
 * One event-loop iteration is one batch: the first change opens the
 * accounts' and the queue's transaction (nego_batch), and the post source
 * (main.c) commits it before any message the iteration queued leaves: a
 * Reply that acknowledges a submit, an ActivateClaim that starts a job,
 * go out only once what they announce is durable. A commit that fails (a
 * full disk) undoes the iteration: the queue and the accounts are read
 * back as the last commit left them, nothing the iteration queued leaves
 * (users' replies are taken back and each request handled in it gets Ok =
 * false with the reason; an agent whose connection carries some of it is
 * disconnected), and when the batch may have changed claims
 * (nego_batch rather than nego_batch_queue) the claims are rebuilt from
 * the queue as at a start and relearned from the agents, which are
 * disconnected to advertise again and to send again the job exits and
 * claim ends we did not acknowledge. The daemon runs on; the next commit
 * that succeeds ends the episode.
 */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/stat.h>

#include <systemd/sd-event.h>

#include "accounting.h"
#include "authz.h"
#include "classad.h"
#include "daemon-start.h"
#include "config.h"
#include "log.h"
#include "negotiator.h"
#include "proto.h"
#include "jobcmd.h"
#include "queue.h"
#include "ratelimit.h"
#include "secure.h"
#include "strmap.h"
#include "usock.h"

/* The MESSAGE_IDs of journal records: systemd/glean-messages.h. */
#include "systemd/glean-messages.h"

#define NEGO_CLAIM_ID_BYTES 24 /* random bytes of a claim id: 192 bits, 48 hex digits */
#define NEGO_CLAIM_ID_LEN (2 * NEGO_CLAIM_ID_BYTES)
#define NEGO_CLAIM_PUBLIC 8    /* hex digits of it that logs show (GLEAN_CLAIM) */

typedef struct Nego Nego;
typedef struct Conn Conn;
typedef struct SlotRec SlotRec;
typedef struct Claim Claim;
typedef struct Pending Pending;
typedef struct Waiter Waiter;
typedef struct Grant Grant;

/* The knobs, read at start and on SIGHUP (those marked * only at start). */
typedef struct NegoKnobs {
        char *address;            /* * NEGOTIATOR_ADDRESS ("" all) */
        int64_t port;             /* * COLLECTOR_PORT (0: any free port) */
        char *port_file;          /* * NEGOTIATOR_PORT_FILE or --port-file: the port chosen, written */
        char *socket_path;        /* * NEGOTIATOR_SOCKET */
        char *pool_key_file;      /* * POOL_KEY_FILE */
        char *signing_key_file;   /* * SEC_TOKEN_POOL_SIGNING_KEY_FILE */
        char *token_registry;     /* * TOKEN_REGISTRY */
        char *database;           /* * NEGOTIATOR_DATABASE */
        char *uid_domain;         /* UID_DOMAIN */
        char **admins;            /* ADMINISTRATORS */
        char **relay_admins;      /* ADMINISTRATORS_RELAYED_BY: agents (Machine of their Hello) whose relayed
                                   * users may be administrators (users.c) */
        JobCmdPolicy *submit_policy; /* ACCOUNTING_GROUPS_ALLOWED*, SUBMIT_REQUIREMENT_* (jobcmd.h) */
        /* ALLOW_* and DENY_* (auth.c): the lists as HTCondor's COLLECTOR
         * (agents advertising) and SCHEDD (users' requests) read them, and
         * the levels the configuration restricts (bits of GleanAuthzLevel). */
        GleanAuthz *authz_collector, *authz_schedd;
        unsigned authz_levels;
        char *full_hostname;      /* FULL_HOSTNAME: the host of local users */
        int64_t classad_lifetime; /* CLASSAD_LIFETIME */
        int64_t interval;         /* NEGOTIATOR_INTERVAL */
        int64_t min_interval;     /* NEGOTIATOR_MIN_INTERVAL */
        int64_t periodic_interval;/* PERIODIC_EXPR_INTERVAL */
        int64_t alive_interval;   /* ALIVE_INTERVAL */
        int64_t claim_worklife;   /* CLAIM_WORKLIFE: seconds a claim takes new jobs (-1 forever, 0 one job) */
        int64_t job_lease;        /* JOB_DEFAULT_LEASE_DURATION: a job without JobLeaseDuration */
        int64_t timeout;          /* NEGOTIATOR_TIMEOUT: handshake and Hello */
        int64_t max_lease;        /* ALIVE_INTERVAL * MAX_CLAIM_ALIVES_MISSED: a claim's lease when the agent says none */
        int64_t idle_timeout;     /* NEGOTIATOR_IDLE_TIMEOUT: a connection after its Hello, silent, nothing asked */
        int64_t max_user_conns;   /* NEGOTIATOR_MAX_CONNECTIONS_PER_USER: unix connections of one user */
        int64_t max_addr_handshakes; /* NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS: TCP before the handshake, per address */
        int64_t max_output;       /* NEGOTIATOR_MAX_OUTPUT: bytes waiting for one user (or agent) to read */
        int64_t max_waits;        /* NEGOTIATOR_MAX_WAITS_PER_USER: Waits parked for one user */
        int64_t transfer_wait;    /* NEGOTIATOR_TRANSFER_WAIT: seconds a claim waits for its job's submit
                                   * agent to be connected before it is released (grants.c) */
} NegoKnobs;

/* An intrusive list of connections (a Conn is on a list through one of
 * its ConnLink fields; net.c's CONN_LIST_* macros). */
typedef struct ConnLink {
        Conn *prev, *next;
} ConnLink;

typedef struct ConnList {
        Conn *head, *tail;
        size_t n;
} ConnList;

/* A user with connections on the unix socket or Waits parked (net.c):
 * what the per-user limits count. Freed when both are 0. */
typedef struct NetUser {
        char name[64];          /* the key: the peer's user name, or a relayed RelayUser */
        size_t conns;           /* its unix connections */
        size_t waits;           /* its Waits parked */
        size_t refused;         /* its connections over the limit, waiting for their Hello to be refused */
        size_t output;          /* bytes waiting for it to read, on all its unix connections */
} NetUser;

/* An address (common/ratelimit.h's key: IPv4, or an IPv6 /64) with TCP
 * connections still in their handshake (net.c). */
typedef struct NetAddr {
        char key[GLEAN_ADDR_KEY_STRLEN];
        ConnList handshakes;    /* oldest first, through Conn.addr_link */
} NetAddr;

/* A connection: an agent (TCP, sealed) or a local user (unix, plain). */
struct Conn {
        Nego *nego;
        ConnLink all_link;      /* Nego.conns */
        ConnLink out_link;      /* Nego.to_flush: output queued since the last flush */
        ConnLink batch_link;    /* Nego.batch_conns: output queued inside the open batch */
        ConnLink dead_link;     /* Nego.dead: to be freed */
        ConnLink hs_link;       /* Nego.handshakes: tcp, the handshake not done (oldest first) */
        ConnLink addr_link;     /* its NetAddr's handshakes */
        bool on_flush, on_batch, on_hs;
        uint64_t id;            /* never reused: pending requests name their connection by it */
        char id_text[24];       /* its key in Nego.conn_ids */
        NetUser *user;          /* unix: its user's counts */
        NetAddr *net_addr;      /* tcp, in the handshake: its address's */
        uint64_t last_active;   /* CLOCK_MONOTONIC usec: the last frame that came */
        uint64_t last_progress; /* ... the last time its output shrank (or none waited) */
        size_t waits;           /* Waits parked on it: not idle */
        size_t out_counted;     /* unix: what of its output its user's count holds */
        char *refused;          /* unix, over its user's limit: why, the answer to its Hello */
        int fd;
        sd_event_source *src, *timer;
        bool tcp;
        GleanSecure *sec;       /* tcp */
        GleanAddrKey addr;      /* tcp: the peer's address (its rate-limit key) */
        char addr_text[GLEAN_ADDR_KEY_STRLEN + 8];
        GleanUsockConn *uc;     /* unix: its socket, frames and output (common/usock.h) */
        GleanPeer peer;         /* unix: SO_PEERCRED */
        bool established;       /* tcp: the handshake succeeded */
        bool hello;             /* the Hello exchange is done */
        bool agent;             /* the peer is a glean-agent (tcp, Peer "glean-agent") */
        char *machine;          /* an agent's Machine */
        char peer_ip[48];       /* tcp: the peer's address as we see it (IPv4 or IPv6, no port) */
        uint16_t transfer_port; /* an agent's TransferPort (its Hello), 0: it serves no files */
        bool has_token;         /* tcp: it proved a token (auth.c), which names it */
        unsigned token_rights;
        uint8_t token_id[GLEAN_TOKEN_ID_SIZE];
        char token_name[GLEAN_TOKEN_NAME_MAX + 1];
        int64_t token_expires;  /* its token's expiry (s since the epoch) */
        GleanAuthzPeer authz_peer; /* tcp: its address, for ALLOW_ and DENY_ lists */
        int64_t agent_start;    /* its AgentStartTime */
        int64_t update_interval;/* its UpdateInterval (UPDATE_INTERVAL), 300 when it does not say */
        double hello_at;        /* when its Hello came: slots it did not advertise since are gone */
        bool dead;              /* dropped by the post work, after a last flush */
        bool flushing;          /* output waits for the socket (EPOLLOUT) */
        struct JobCmdSubmit *submit; /* a multi-part Submit in progress (jobcmd_submit) */
        size_t out_mark;        /* output queued when the batch opened: all a failed commit lets go */
        int64_t *batch_ids;     /* unix: RequestIds of the requests handled inside the batch (-1: none) */
        size_t n_batch_ids, cap_batch_ids;
};

/* The collector's record of one slot: the latest ad its agent sent. */
struct SlotRec {
        char *name;             /* Name ("slot1@host"), the key */
        char *machine;
        ClassAd *ad;
        char *claim_id;         /* the ClaimId of the agent's last SlotUpdate (NULL: none) */
        double updated;         /* when the last ad came */
        bool partitionable, dynamic;
        unsigned requests;      /* our RequestClaims in flight on it: left out of cycles */
        Claim *held;            /* our claim that holds it (granted) */
        Claim *waiting;         /* our preempting claim, granted, waiting for the slot to be ours */
        char *dropped;          /* a claim the agent runs that we do not hold, told to end (claims.c) */
        double dropped_at;
};

typedef enum ClaimState {
        CLAIM_REQUESTED,  /* Match, RequestClaim sent; no Reply yet */
        CLAIM_WAITING,    /* granted; the slot is not Claimed/Idle yet (a preempting claim) */
        CLAIM_ACTIVATING, /* ActivateClaim sent (the job is Running in the queue) */
        CLAIM_RUNNING,    /* the agent runs the job */
        CLAIM_RELEARNING, /* after our restart: the job is Running in the queue, the agent has not said */
} ClaimState;

struct Claim {
        char id[NEGO_CLAIM_ID_LEN + 1];
        char pub[NEGO_CLAIM_PUBLIC + 1]; /* what logs show */
        ClaimState state;
        char *slot;             /* the slot claimed (a d-slot's name once granted on a p-slot) */
        char *requested;        /* while CLAIM_REQUESTED: the slot asked (its requests count) */
        char jobkey[48];        /* "C.P" of job, the key in matching while it is there */
        double requested_at;
        char *machine;
        char *submitter;
        JobId job;              /* the job it is for or runs */
        double weight;          /* slot weight charged (the match's cost) */
        bool charged;           /* acct_claim_begin done */
        bool by_priority;       /* a preemption for user priority */
        double first_start;     /* the first job's start: CLAIM_WORKLIFE counts from it */
        double lease;           /* seconds without a keep-alive before the agent drops it */
        double alive_until;     /* the last acknowledged keep-alive + lease */
        double next_alive;      /* when the next KeepAlive goes */
        double deadline;        /* CLAIM_RELEARNING: requeued if not re-advertised by then */
        bool ending;            /* we asked the job to go (rm, hold, vacate, preemption) */
        bool evicting;          /* the agent said the slot is preempting the job */
        bool release;           /* release the claim once its job is gone */
        double idle_since;      /* RUNNING, yet its slot says Claimed/Idle since then: the job ended
                                   without a word unless its JobExit follows */
        double gone_since;      /* its agent advertises its slot without it since then: lost unless
                                   its JobExit follows */
        bool relearned_idle;    /* relearned after our restart with its slot Claimed/Idle: its job may
                                   never have started (the ActivateClaim not sent before the stop) */
        Grant *grant;           /* the file transfer of its run (grants.c), NULL: none */
        bool transfer_wanted;   /* its run transfers (nego_grant_check said so at its activation) */
        double transfer_wait_since; /* granted, its job's submit agent not there since then (grants.c) */
};

typedef enum PendingKind {
        PEND_MATCH,
        PEND_REQUEST_CLAIM,
        PEND_ACTIVATE,
        PEND_KEEP_ALIVE,
        PEND_OTHER,             /* Release, Deactivate, Vacate: the Reply is logged */
        PEND_FORWARD,           /* a user's Vacate/Drain/CancelDrain: the Reply goes to the user */
} PendingKind;

/* A request we sent an agent, until its Reply (by RequestId). */
struct Pending {
        char key[24];           /* the RequestId as text */
        uint64_t conn;          /* the agent's connection */
        PendingKind kind;
        char claim_id[NEGO_CLAIM_ID_LEN + 1];
        uint64_t user_conn;     /* PEND_FORWARD: who asked */
        ClassAd *user_req;      /* PEND_FORWARD: the request (its RequestId) */
};

/* A user's Wait, parked until the job leaves the queue. */
struct Waiter {
        Waiter *next;
        uint64_t conn;
        NetUser *user;          /* whose Wait it is (the per-user count) */
        ClassAd *req;
        JobId job;
        double deadline;        /* 0: none */
};

/* GLEAN_FAULT, read once at start: a fault the tests inject (test-only;
 * docs/negotiator.md). */
typedef enum NegoFault {
        NEGO_FAULT_NONE,
        NEGO_FAULT_KILL_BEFORE_COMMIT_JOB_EXIT, /* "kill-before-commit:JobExit": SIGKILL on ourselves in
                                                   place of the commit of the first batch that took a JobExit */
        NEGO_FAULT_KILL_AFTER_COMMIT_SUBMIT,   /* "kill-after-commit:Submit": SIGKILL on ourselves right after
                                                  committing the first batch that queued a Submit, before its
                                                  answer leaves */
} NegoFault;

typedef struct CycleStats {
        uint64_t number;
        size_t matches, rejections, submitters, preemptions;
        double seconds;
        double at;              /* when it ran (0: never) */
} CycleStats;

struct Nego {
        sd_event *event;
        GleanDaemonArgs args;   /* --config, --set NAME=VALUE */
        Config *cfg;
        NegoKnobs k;
        NegoSettings *settings;
        /* Who may connect (auth.c): the keys, the handshake's end, the
         * tokens issued and revoked. */
        GleanPoolKey key;
        GleanSigningKey signing;
        GleanSecureAuth auth;
        GleanTokenRegistry registry;
        struct stat registry_st;     /* of the registry as read */
        sd_event_source *registry_watch;
        char *registry_base;         /* its file name in its directory */
        sd_event_source *expiry_timer; /* the next token of a connected agent to expire */
        int64_t expiry_at;           /* when it is armed for (s since the epoch), 0: not armed */
        Accountant *acct;
        JobQueue *queue;

        int tcp_fd;
        GleanUsock *usock;      /* the unix socket NEGOTIATOR_SOCKET */
        uint16_t port;          /* the TCP port listened on */
        sd_event_source *tcp_src, *post, *tick, *cycle_timer, *signals[4];
        sd_event_source *reap;  /* frees the dead connections, before anything else */
        sd_event_source *accept_timer; /* listening again after running out of descriptors */
        sd_event_source *submit_work;  /* steps the submissions taken in slices (users.c) */
        bool accept_paused;
        ConnList conns, to_flush, batch_conns, dead, handshakes;
        GleanStrMap *conn_ids;  /* id_text -> Conn (live) */
        GleanStrMap *agent_conns; /* Machine -> Conn (live agents; case-insensitive) */
        GleanStrMap *net_users; /* name -> NetUser */
        GleanStrMap *net_addrs; /* key -> NetAddr */
        uint64_t next_conn;
        size_t n_agents, n_users, n_tcp;
        size_t fd_limit;        /* RLIMIT_NOFILE (soft, raised to the hard one) */
        size_t max_conns;       /* connections at most: what the descriptors leave */
        unsigned dispatches;    /* event sources dispatched since the post work ran */
        uint64_t refusals_window; /* CLOCK_MONOTONIC usec: the window of refusal records began */
        unsigned refusals_logged; /* records in it */
        uint64_t refusals_quiet;  /* refusals in it without a record of their own */
        char refusal_last[256];   /* the last of those */

        GleanStrMap *slots;     /* Name -> SlotRec */
        GleanStrMap *claims;    /* id -> Claim */
        size_t relearning;      /* claims in CLAIM_RELEARNING */
        GleanStrMap *matching;  /* "C.P" -> Claim: jobs with a claim on the way (not matched again) */
        GleanStrMap *backoff;   /* "C.P" -> StartBackoff: jobs whose start failed, left out a while (claims.c) */
        GleanStrMap *pending;   /* RequestId text -> Pending */
        GleanStrMap *revokes;   /* TransferId -> submit Machine: TransferRevokes not delivered yet (grants.c) */
        uint64_t next_request;
        Waiter *waiters;
        struct Parked *parked;  /* big submissions being taken in slices, and who waits for each (users.c) */

        bool in_batch;
        bool batch_claims;      /* the open batch may have changed claims (nego_batch) */
        uint64_t commit_failures; /* commits failed in a row */
        NegoFault fault;        /* GLEAN_FAULT (tests only) */
        bool fault_due;         /* the open batch took what the fault waits for */
        bool cycle_wanted;      /* a submit or a freed slot: a cycle after NEGOTIATOR_MIN_INTERVAL */
        bool cycle_soon;        /* ... or sooner: an idle job and a free slot (nego_want_cycle) */
        double last_periodic;
        CycleStats cycle;
        double started;
        bool stopping;
        int exit_code;
};

/* ---- main.c ---- */
double nego_now(void);              /* wall clock, seconds */
/* Seconds past a claim's lease before the claim is given up (claims.c). */
#define NEGO_LEASE_GRACE 2.0
/* Opens the batch of this iteration (once; the post work commits it). */
void nego_batch(Nego *n);
/* The same for changes of the queue and the accounts alone (users'
 * commands, periodic expressions, a cycle's accounting): if its commit
 * fails, the claims stand (a vacate or a claim request in it calls
 * nego_batch, which marks the batch as one that changes claims). */
void nego_batch_queue(Nego *n);
/* A cycle soon: NEGOTIATOR_MIN_INTERVAL after the last, or at once when
 * it could start an idle job on a free slot (nego_cycle_could_start), yet
 * no sooner after the last cycle than NEGO_SOON_SPACING times its length. */
#define NEGO_SOON_SPACING 10
void nego_want_cycle(Nego *n);
/* Whether p may administer: root or ADMINISTRATORS. */
bool nego_is_admin(const Nego *n, const GleanPeer *p);
/* Logs a record about a job (fields only when given). */
void nego_log_job(int prio, const char *message_id, JobId job, const char *user, const char *slot,
                  const Claim *c, const char *reason, const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* ---- net.c ---- */
int nego_net_start(Nego *n);
void nego_net_stop(Nego *n);
/* Queues msg for c (sent after the batch commits). -EPIPE when c is dead. */
int nego_send(Conn *c, const ClassAd *msg);
int nego_send_text(Conn *c, const char *text, size_t len); /* a message already unparsed */
/* Marks c to be dropped by the post work (after a last flush); logs why
 * when why is non-NULL. */
void nego_conn_fail(Conn *c, const char *why);

/* ---- auth.c: who may connect, and as whom ---- */
int nego_auth_setup(Nego *n);  /* at start: the keys, the registry and its watch; -errno logged */
void nego_auth_free(Nego *n);
void nego_auth_established(Conn *c); /* its handshake done: what its token says */
/* An agent's Hello claiming machine: 0, or -EPERM with why (its token names
 * another; a machine with a token that came with the pool key). */
int nego_auth_hello(Conn *c, const char *machine, char *why, size_t whylen);
/* ALLOW_ and DENY_ lists (auth.c). _load reads them from cfg into k
 * (-errno, the reason logged: an entry that is not one); _agent checks an
 * agent's Hello (ADVERTISE_STARTD, DAEMON); _user a user's request at level
 * (READ or WRITE) on c (local, or relayed by the agent on c), and whether
 * an administrator stays one (ADMINISTRATOR): 0 or -EACCES with the rule
 * in why. A level the configuration sets no list of is not checked. */
int nego_authz_load(const Config *cfg, NegoKnobs *k);
void nego_authz_clear(NegoKnobs *k);
int nego_authz_agent(Conn *c, const char *machine, char *why, size_t whylen);
int nego_authz_user(Conn *c, const char *user, GleanAuthzLevel level, bool *admin, char *why, size_t whylen);
Conn *nego_conn_by_id(Nego *n, uint64_t id);
Conn *nego_agent_conn(Nego *n, const char *machine); /* its live connection, NULL when none */
/* The post work: flush the output of the connections that have some. */
void nego_net_flush(Nego *n);
/* An event source of the loop was dispatched: after many without the
 * post work, the post work goes ahead of the next ones (main.c). */
void nego_net_dispatched(Nego *n);
/* The 1-second tick: the summary of refusals without a record each. */
void nego_net_tick(Nego *n);
/* A Wait of user parked (0) or refused with why (-EUSERS: the limit
 * NEGOTIATOR_MAX_WAITS_PER_USER); its end. */
int nego_net_wait_begin(Nego *n, Conn *c, const char *user, NetUser **ret, char *why, size_t len);
void nego_net_wait_end(Nego *n, uint64_t conn, NetUser *u);
/* The batch opened: what every connection has queued so far may leave
 * whatever its commit does. */
void nego_net_batch_begin(Nego *n);
/* A request of c handled inside the batch (its RequestId, -1 none). */
void nego_net_batch_request(Conn *c, int64_t request_id);
/* The batch ended: committed (why NULL) or failed (why: the reason): the
 * output queued since nego_net_batch_begin is taken back from users, who
 * get Ok = false with why for each request of theirs handled in it, and
 * an agent with some of it queued is disconnected. */
void nego_net_batch_end(Nego *n, const char *why);

/* ---- agents.c: the messages of agents ---- */
int nego_agent_message(Conn *c, const ClassAd *msg, GleanCommand cmd);
void nego_agent_gone(Conn *c);      /* its connection closes */
/* Sends cmd to the agent of machine with a new RequestId, remembered as
 * kind (claim: the claim it is about). -ENOTCONN when it is not connected. */
int nego_agent_request(Nego *n, const char *machine, ClassAd *msg, PendingKind kind, const char *claim_id,
                       Pending **ret);
void nego_pending_free(Pending *p);

/* ---- collector.c ---- */
SlotRec *nego_slot(Nego *n, const char *name);
int nego_slot_update(Nego *n, Conn *c, const ClassAd *msg);
void nego_slots_expire(Nego *n, double now);
/* A dynamic slot its agent gives back (its claim released): its ad leaves at once. */
void nego_slot_forget(Nego *n, SlotRec *s);
/* The slots of machine leave at once (a revoked machine), but those our
 * claims hold or ask for, which end as claims do; returns their number. */
size_t nego_slots_forget_machine(Nego *n, const char *machine, const char *why);
void nego_slots_free(Nego *n);
void nego_slots_clear(Nego *n);     /* every slot forgotten (the map stays) */
/* A slot's State and Activity from its ad ("" when absent), into buffers. */
void nego_slot_state(const SlotRec *s, char *state, size_t sl, char *activity, size_t al);
int nego_query_slots(Nego *n, Conn *c, const ClassAd *req);
/* "24 slots: 20 Claimed/Busy, 4 Unclaimed" */
void nego_slots_summary(Nego *n, char *buf, size_t len);

/* ---- claims.c ---- */
Claim *nego_claim(Nego *n, const char *id);
/* A new claim for job on slot (matched with cost), its RequestClaim sent. */
int nego_claim_request(Nego *n, SlotRec *s, Job *job, double cost, NegoReason reason);
void nego_claim_granted(Nego *n, Claim *c, const ClassAd *reply);
void nego_claim_refused(Nego *n, Claim *c, const char *why);
void nego_claim_activated(Nego *n, Claim *c, const ClassAd *reply);
void nego_claim_alive(Nego *n, Claim *c, const ClassAd *reply);
/* A JobExit of from's agent: the exit of the claim's current run is taken
 * (the queue, the claim's next job or its end, its charge); one of a claim
 * we no longer hold, of another job or of an earlier run (the agent sends
 * it until acknowledged) changes nothing. */
void nego_claim_job_exit(Nego *n, Conn *from, const ClassAd *msg);
void nego_claim_event(Nego *n, Conn *from, const ClassAd *msg);
/* The agent advertised slot s with claim id (NULL: none). */
void nego_claim_seen(Nego *n, Conn *from, SlotRec *s, const char *claim_id);
/* Ends c's job (vacate, rm, hold): Deactivate (graceful unless fast). */
int nego_claim_vacate(Nego *n, Claim *c, bool fast, const char *why);
/* MAX_JOBS_RUNNING lowered below the jobs running (a reload): the newest
 * runs beyond it are vacated, as condor_schedd aborts jobs until the
 * number running is within the limit; their jobs go back to Idle. */
void nego_claims_over_limit(Nego *n);
/* The claim is gone (lost, refused, released): its job back to Idle when
 * it ran, its usage stops, it is forgotten. */
void nego_claim_lost(Nego *n, Claim *c, const char *why);
/* The agent could not start c's job (ActivateClaim refused, reply its
 * Reply): with HoldReasonCode (a failure that would come again: its input,
 * output, initial directory, program) the job is held with that code,
 * subcode and HoldReason; otherwise it goes back to Idle and is left out
 * of the cycles for a while (5 s, doubling with each failure to 300 s).
 * The claim ends either way. */
void nego_claim_start_failed(Nego *n, Claim *c, const ClassAd *reply, const char *why);
/* Each charged claim whose slot's ad is known charged that slot's own
 * weight from now on (nego_settings_slot_weight): a claim on a dynamic
 * slot was charged its match's cost until its slot's first ad. At the
 * start of each cycle, before the pie is cut. */
void nego_claims_reweigh(Nego *n, double now);
/* ---- backoff.c: jobs whose start failed lately, left out of cycles ---- */
bool nego_job_backing_off(Nego *n, JobId id);
double nego_backoff_job(Nego *n, const char *jobkey); /* one more failure: the seconds it waits */
void nego_backoff_forget(Nego *n, const char *jobkey); /* it started */
void nego_backoffs_tick(Nego *n, double now);
void nego_backoffs_free(Nego *n);
/* Keep-alives, leases, relearning deadlines. */
void nego_claims_tick(Nego *n, double now);
/* At start: a claim to relearn for every Running job. */
int nego_claims_restore(Nego *n);
/* After a failed commit that may have changed claims: every agent is
 * disconnected, the claims, slots and requests in flight forgotten (a
 * user waiting on an agent's answer gets Ok = false with why), and the
 * claims restored from the queue as at a start. The JobExits the batch
 * took were not acknowledged: their agents send them again once they
 * have advertised their claims. */
void nego_claims_reset(Nego *n, const char *why);
void nego_claims_free(Nego *n);
/* The claim a running job runs under (NULL when none). */
Claim *nego_claim_of_job(Nego *n, JobId id);
/* A job changed state by the queue's own doing (periodic, rm, hold): its claim is vacated. */
void nego_job_leaving(Nego *n, JobId id, const char *why);

/* ---- cycle.c ---- */
int nego_cycle_run(Nego *n);
/* Whether a cycle now could start a job without preempting one: an idle
 * job not on its way to a slot, and a slot with room (Unclaimed, nothing
 * asked of it, its agent connected). */
bool nego_cycle_could_start(Nego *n);

/* ---- grants.c: what the two agents of a run that transfers files get ---- */

/* Whether activating c for job (Idle) needs a grant (docs/transfer.md):
 * 0 the run does not transfer; 1 it does and its submit agent is there;
 * -ENOTCONN its submit agent is not connected or serves no files (no
 * TransferPort): try again later; -ENOENT it has no SubmitMachine (it was
 * submitted on our own socket): its files cannot travel. why says which. */
int nego_grant_check(Nego *n, const Claim *c, const Job *job, char *why, size_t whylen);
/* The job started under c: a grant made and kept in c->grant, its
 * TransferGrant queued to the submit agent; 1 and the Transfer ad of the
 * ActivateClaim, or -errno with why (nothing kept). */
int nego_grant_make(Nego *n, Claim *c, const Job *job, ClassAd **ret_transfer, char *why, size_t whylen);
/* The run of c ended: its grant revoked (TransferRevoke to the submit
 * agent, now or when it is back) and forgotten. No-op without one. */
void nego_grant_end(Nego *n, Claim *c);
/* The agent on conn is (back): every live grant whose submit agent it is
 * sent again, and the revokes it missed. */
void nego_grants_agent_back(Nego *n, Conn *conn);
int nego_grants_init(Nego *n);
void nego_grants_free(Nego *n);
/* At our stop: c's grant forgotten, nothing sent. */
void nego_grant_drop(Claim *c);
/* claims.c: claims waiting for their job's submit agent (of machine, or
 * any when NULL) tried again; those waiting longer than
 * NEGOTIATOR_TRANSFER_WAIT released, their job told why. */
void nego_claims_transfer_retry(Nego *n, const char *machine, double now);

/* ---- users.c ---- */
int nego_user_message(Conn *c, const ClassAd *msg, GleanCommand cmd, const QueueRequester *who);
void nego_waiters_check(Nego *n, double now);
void nego_waiters_free(Nego *n);
void nego_parked_free(Nego *n);
void nego_user_gone(Conn *c);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * accounting.h — the accountant: who used how much of the pool, their user
 * priorities, and the accounting groups with their hierarchical quotas
 * (seed 000, 3.4.1 to 3.4.8; seed 001; seed 004).
 *
 * Pure parts (no clock, no I/O): the priority arithmetic, submitter
 * identities, the group tree read from a Config and the quota function.
 * The Accountant holds the accounts in memory and, when opened on a file,
 * keeps them in the central manager's SQLite database (store.c): every
 * change is one transaction, so after a crash the accounts are exactly as
 * of the last committed change.
 *
 * Times are seconds since the Unix epoch as doubles (sub-second claims are
 * charged too). Usage is in slot weight (SlotWeight, default Cpus, or one
 * per slot without NEGOTIATOR_USE_SLOT_WEIGHTS) times seconds.
 *
 * How a real user priority moves. Between two changes of what a submitter
 * holds, its usage rho is constant, so the manual's formula (3.4.4)
 *     RUP(t) = beta * RUP(t - dt) + (1 - beta) * rho,  beta = 0.5^(dt / h)
 * is applied exactly over each such stretch, at each change: a claim that
 * begins or ends between two priority updates is charged for exactly the
 * part of the interval it was held, and the result does not depend on
 * when (or how often) priorities are brought up to date. RUP never goes
 * below 0.5, the priority a new submitter starts with (3.4.1).
 *
 * Conventions: >= 0 on success, -errno on failure; outputs last, named
 * ret_*, set only on success; `why` buffers get a one-line reason.
 * Single-threaded.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"

#define ACCT_MIN_PRIORITY 0.5     /* 3.4.1: every user begins at one half */
#define ACCT_GROUP_NAME_MAX 40    /* 3.4.7: AccountingGroup is at most 40 characters */
#define ACCT_NONE_GROUP "<none>"  /* the group of jobs in no quota group */
#define ACCT_NICE_PREFIX "nice-user." /* nice_user jobs: nice-user.alice@domain */

/* ---- priority arithmetic (pure) ---- */

/* beta = 0.5^(dt / halflife) for dt >= 0; 1 when dt == 0; a halflife <= 0
 * (or one so short that beta underflows) gives 0 for any dt > 0. */
double acct_decay(double dt, double halflife);

/* The RUP dt seconds after it was rup, the submitter having held usage
 * (weighted) all along: max(0.5, beta * rup + (1 - beta) * usage). */
double acct_rup_advance(double rup, double usage, double dt, double halflife);

/* Shares inverse to the effective priorities (3.4.2, 3.4.6):
 * shares[i] = (1 / eup[i]) / sum_j (1 / eup[j]). EUPs must be > 0 and
 * finite (-EINVAL otherwise); n == 0 is fine. EUP 5, 10, 20 share 4:2:1. */
int acct_shares(const double *eup, size_t n, double *ret_shares);

/* ---- identities (pure) ---- */

/* Checks an AccountingGroup value (accounting_group, +AccountingGroup):
 * 1 to 40 characters, no white space, quotes, backslash or '@'. */
int acct_check_group_name(const char *name, char *why, size_t whylen);

/* An identity attribute read as the literal it must be, never evaluated:
 * 1 with *ret (malloc'd) / *ret set, 0 when ad has no such attribute,
 * -EINVAL when its expression is anything but one string literal (one
 * true or false), -ENOMEM. */
int acct_literal_string(const ClassAd *ad, const char *name, char **ret);
int acct_literal_bool(const ClassAd *ad, const char *name, bool *ret);

/* The submitter (accounting key) of a job: "<group.sub.user>@<domain>"
 * from AccountingGroup when the job has one, else its User ("alice@dom")
 * or Owner@uid_domain; with NiceUser, "nice-user." before it (HTCondor's
 * spelling). job may be any ClassAd with those attributes; each is read
 * as a literal (acct_literal_*), never evaluated. -EINVAL (why says) when
 * it has neither User nor Owner, or a bad or non-literal AccountingGroup
 * or NiceUser. */
int acct_job_submitter(const ClassAd *job, const char *uid_domain, char **ret, char *why, size_t whylen);

/* ---- settings ---- */

typedef struct AcctSettings {
        double halflife;       /* PRIORITY_HALFLIFE, seconds */
        double default_factor; /* DEFAULT_PRIO_FACTOR */
        double nice_factor;    /* NICE_USER_PRIO_FACTOR */
        double remote_factor;  /* REMOTE_PRIO_FACTOR */
        char *local_domain;    /* ACCOUNTANT_LOCAL_DOMAIN if set, else UID_DOMAIN */
        bool use_slot_weights; /* NEGOTIATOR_USE_SLOT_WEIGHTS */
} AcctSettings;

/* Reads the knobs above from cfg (built-in defaults apply); a malformed
 * value is -EINVAL with err naming its file and line. */
int acct_settings_from_config(const Config *cfg, AcctSettings *ret, ConfigError *err);
void acct_settings_clear(AcctSettings *s);

/* ---- accounting groups (pure) ---- */

typedef struct AcctGroup {
        char *name;             /* as GROUP_NAMES spells it; "<none>" for the root */
        size_t parent;          /* index of the parent; the root is its own parent */
        size_t *children;       /* indexes, in GROUP_NAMES order */
        size_t n_children;
        unsigned depth;         /* the root 0, top-level groups 1, ... */
        bool has_static;        /* GROUP_QUOTA_<name> */
        double static_quota;
        bool has_dynamic;       /* GROUP_QUOTA_DYNAMIC_<name>, 0.0 to 1.0 */
        double dynamic_quota;
        bool accept_surplus;    /* GROUP_ACCEPT_SURPLUS_<name>, else GROUP_ACCEPT_SURPLUS */
        bool autoregroup;       /* GROUP_AUTOREGROUP_<name>, else GROUP_AUTOREGROUP */
        double prio_factor;     /* GROUP_PRIO_FACTOR_<name>; 0 when not set */
} AcctGroup;

typedef struct AcctGroups AcctGroups;

/* The group tree of GROUP_NAMES ("group_physics, group_physics.lab1",
 * case-insensitive names, a subgroup's parent must be listed too) with
 * each group's knobs. Index 0 is the root, "<none>". A malformed value
 * or name is -EINVAL with err saying where and why. */
int acct_groups_from_config(const Config *cfg, AcctGroups **ret, ConfigError *err);
void acct_groups_free(AcctGroups *g); /* accepts NULL */

size_t acct_groups_count(const AcctGroups *g);
/* Group i; NULL past the end. The groups are one array, in GROUP_NAMES
 * order after the root: acct_groups_get(g, i) == acct_groups_get(g, 0) + i. */
const AcctGroup *acct_groups_get(const AcctGroups *g, size_t i);
/* NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION (default False: subgroups that
 * ask for more than their parent are scaled down, 3.4.8). */
bool acct_groups_allow_oversubscription(const AcctGroups *g);
/* The group named so (case-insensitive), -ENOENT when none. */
int acct_groups_find(const AcctGroups *g, const char *name, size_t *ret);
/* The quota group of a submitter ("group_physics.lab1.alice@dom"): the
 * group named by the longest dotted prefix of the part before '@', the
 * part after its last dot being the user (3.4.8); 0 ("<none>") when no
 * prefix names a group, and for a name without a dot (group accounting,
 * 3.4.7). Nice users are never in a quota group. */
size_t acct_groups_of_submitter(const AcctGroups *g, const char *submitter);

/* ---- hierarchical group quotas (pure) ---- */

typedef struct AcctQuota {
        double configured;        /* GROUP_QUOTA_<g>, or GROUP_QUOTA_DYNAMIC_<g> times the
                                     quota it is a fraction of; the pool for the root */
        double quota;             /* the group's effective quota, subgroups included: whole slots
                                     (the root's is the pool, as given) */
        double own;               /* what its own submitters may use: quota less its subgroups'
                                     (0 when oversubscribing subgroups take more) */
        double demand;            /* its own submitters' demand (the input) */
        double allocated;         /* what its own submitters get this cycle: min(demand, own)
                                     plus any surplus it is given */
        double subtree_allocated; /* allocated, subgroups included */
        bool scaled;              /* its quota was scaled down (an over-subscribed parent) */
} AcctQuota;

typedef struct AcctQuotaResult {
        AcctQuota *q;     /* one per group, as acct_groups_get() numbers them */
        size_t n;
        char **warnings;  /* one line each ("group quotas: ... rescaled from 40 to 33.333") */
        size_t n_warnings;
} AcctQuotaResult;

#define ACCT_QUOTA_MAX_AMOUNT 9007199254740992.0 /* 2^53 */

/* The quotas of every group for a pool of pool_size (total slot weight)
 * and the allocations for demand[i] (the weighted idle + running jobs of
 * group i's own submitters; NULL: no demand), in one pass over the tree:
 * static quotas first, dynamic ones as fractions of what is left of their
 * parent's (of the pool at the top), oversubscribing subgroups scaled,
 * every quota truncated to whole slots with the remainders handed to the
 * level above, then surplus (quota nobody demands) shared among groups
 * that accept it, in proportion to their quotas (3.4.8). -EINVAL when
 * pool_size or a demand is negative, NaN or over ACCT_QUOTA_MAX_AMOUNT. */
int acct_quotas_compute(const AcctGroups *g, double pool_size, const double *demand, AcctQuotaResult *ret);
void acct_quota_result_clear(AcctQuotaResult *r);

/* ---- the Accountant ---- */

typedef struct Accountant Accountant;

/* What a submitter or group looks like now. */
typedef struct AcctEntry {
        const char *name;            /* valid until the next change of the Accountant */
        bool is_group;               /* a quota group's roll-up, "<none>" included */
        size_t group;                /* its quota group (itself for a group) */
        double rup;                  /* real user priority */
        double factor;               /* priority factor in force */
        bool factor_set;             /* set by an administrator (else the default chain) */
        double eup;                  /* rup * factor */
        unsigned in_use;             /* claims held (subtree for a group) */
        double weighted_in_use;      /* their slot weight */
        double accumulated;          /* seconds of claims held */
        double weighted_accumulated; /* weight * seconds */
        double begin_usage;          /* first time it held anything; 0: never */
        double last_usage;           /* last time it held anything (now while it does); 0: never */
} AcctEntry;

typedef enum AcctOpenFlags {
        ACCT_OPEN_READONLY = 1 << 0, /* read the database, never write it (the CLI) */
        ACCT_OPEN_INIT = 1 << 1,     /* an existing file without the schema (empty) may be initialised */
} AcctOpenFlags;

/* Tables of the database's that another module owns (the job queue's,
 * queue/queue-schema.c): steps[i].sql brings a database from version
 * steps[i].version - 1 to steps[i].version. The accounts' own step is
 * version 1; with the opener's, the versions run 1, 2, ... without a gap,
 * one sequence for the one file. A step is never edited once released. */
typedef struct AcctSchemaStep {
        int version;
        const char *sql;
} AcctSchemaStep;

typedef struct AcctSchema {
        const AcctSchemaStep *steps;
        size_t n_steps;
} AcctSchema;

/* The accounts kept in the database at path (created when absent, unless
 * read-only; an existing file without glean's schema, such as a 0-byte
 * one, is refused with -ENODATA unless ACCT_OPEN_INIT), or in memory only
 * when path is NULL. more (may be NULL) are the other tables' steps: a
 * read-write open brings the file up to the last of them, and a file of a
 * later version than they reach is refused as newer (-EPROTO), so whoever
 * opens the central manager's database gives the queue's (queue_schema()).
 * Takes ownership of
 * settings' contents (cleared) and of groups. A database that is corrupt,
 * unreadable or of a newer schema fails (-EINVAL, -EACCES, -EPROTO, ...)
 * with why = "accounts database PATH: ..."; nothing is written then. */
int acct_open(const char *path, unsigned flags, const AcctSchema *more, AcctSettings *settings, AcctGroups *groups,
              double now, Accountant **ret, char *why, size_t whylen);
void acct_close(Accountant *a); /* accepts NULL */

/* New settings and groups (a reconfiguration), taken as acct_open takes
 * them; usage already charged stays charged. */
int acct_reconfigure(Accountant *a, AcctSettings *settings, AcctGroups *groups, double now);
const AcctGroups *acct_groups(const Accountant *a);
const AcctSettings *acct_settings(const Accountant *a);

/* The clock of the accounts: the latest time any call gave it (times given
 * later are never earlier: an earlier now is taken as this one). */
double acct_now(const Accountant *a);

/* Claims. A submitter holds a claim from begin to end and is charged its
 * weight (1 without NEGOTIATOR_USE_SLOT_WEIGHTS) for each second, and so
 * are its quota group and that group's ancestors (their roll-ups).
 * begin: -EEXIST for a claim id already held, -EINVAL for a weight that is
 * negative or not finite or a submitter name that is empty. end: -ENOENT
 * for an unknown claim. */
int acct_claim_begin(Accountant *a, const char *claim_id, const char *submitter, double weight, double now);
int acct_claim_end(Accountant *a, const char *claim_id, double now);
/* The claim charged weight from now on (what it used until now stays
 * charged at its old weight): the matchmaker's pseudo-match cost replaced
 * by the weight of the slot the claim holds. -ENOENT, -EINVAL as above. */
int acct_claim_set_weight(Accountant *a, const char *claim_id, double weight, double now);
size_t acct_claims_count(const Accountant *a);
/* The claim's submitter (valid while the claim is held), weight and begin time. */
int acct_claim_get(const Accountant *a, const char *claim_id, const char **ret_submitter, double *ret_weight,
                   double *ret_begin);

/* Whether a submitter still has jobs in the queue: entries of submitters
 * without claims, jobs or anything an administrator set are forgotten once
 * their priority is back at 0.5 (as HTCondor's accountant does). NULL:
 * none has jobs. */
typedef bool (*AcctHasJobsFn)(void *userdata, const char *submitter);

/* The periodic update (HTCondor's UpdatePriorities): brings every entry to
 * now, forgets the entries that carry nothing, and commits. A read-only
 * Accountant only brings its entries to now. */
int acct_update(Accountant *a, double now, AcctHasJobsFn has_jobs, void *userdata);

/* Every entry (submitters and groups) as of acct_now(), in no particular
 * order. *ret is malloc'd (free() it; the names are the Accountant's). */
int acct_list(const Accountant *a, AcctEntry **ret, size_t *ret_n);
/* One entry; a submitter the accounts do not know is -ENOENT, and
 * ret is then filled as a new submitter would be (RUP 0.5, its factor). */
int acct_get(const Accountant *a, const char *name, AcctEntry *ret);
/* The factor that applies to name when no administrator set one. */
double acct_default_factor(const Accountant *a, const char *name);

/* Makes sure the accounts know name (a submitter, with the name's quota
 * group), as a new submitter at 0.5; 0 when it was known already, 1 when
 * added. A change. (The central manager calls it for submitters with
 * jobs, so that an administrator can set their factors; the simulator
 * for the submitters of a scenario.) */
int acct_ensure(Accountant *a, const char *name, double now);

/* Administrators (condor_userprio's -setfactor, -setprio, -resetusage,
 * -delete). Names the accounts do not know are -ENOENT, except that
 * -setfactor and -setprio of a user@domain make the submitter known first
 * (as HTCondor: a factor may be given before the first job). A factor must be
 * finite and >= 1 (as HTCondor), a priority finite and >= 0.5: -EINVAL.
 * delete: -EBUSY while the submitter holds claims; a group cannot be
 * deleted (-EPERM). */
int acct_set_factor(Accountant *a, const char *name, double factor, double now);
int acct_set_priority(Accountant *a, const char *name, double priority, double now);
int acct_reset_usage(Accountant *a, const char *name, double now);
int acct_delete(Accountant *a, const char *name, double now);

/* Several changes in one transaction (the daemon batches one event loop
 * iteration): between begin and commit, changes are made in memory and
 * written, and commit makes them durable at once. Outside a batch every
 * change commits by itself. If a commit fails, the accounts are read back
 * as they were at the last commit and the error is returned. */
int acct_batch_begin(Accountant *a);
int acct_batch_commit(Accountant *a);

/* Numbers the central manager keeps beside the accounts (e.g.
 * "pool_size", the pool's total slot weight at its last cycle, which
 * `glean userprio -quotas` reads; "last_update", the time of the last
 * acct_update). get: -ENOENT when never set. set is a change. */
int acct_get_meta(const Accountant *a, const char *key, double *ret);
int acct_set_meta(Accountant *a, const char *key, double value);

/* The error of the last failed write, for logs ("" if none). */
const char *acct_last_error(const Accountant *a);

/* ---- the database's other tables (the job queue) ----
 *
 * The job queue (queue/queue.h) keeps its tables in the accounts'
 * database (its schema steps, AcctSchema above) and writes them through the same connection,
 * in the same transactions: a job's exit and the end of its claim's usage
 * commit together, and a batch covers both. Such a partner writes only
 * between acct_change_begin() and acct_change_end(), or inside a batch.
 * When a transaction fails (a write of the Accountant's or the
 * partner's, or the commit), everything since the last commit is rolled
 * back, the accounts are read back and the partner is told (tx_end with
 * committed false) so that it reads its own tables back too. */

struct sqlite3;
/* The connection (NULL when the accounts are in memory only). */
struct sqlite3 *acct_sqlite(Accountant *a);
/* SQLite's result code rc (of db, which may be NULL) as -errno, the same
 * for the accounts and whatever writes beside them: -ENOSPC full, -EROFS,
 * -EACCES, -EBUSY, -EINVAL, -EBADMSG corrupt, -E2BIG, -EFBIG, -EINTR,
 * -ECANCELED, the system's errno of an I/O error, else -EIO; 0 for OK,
 * ROW and DONE. */
int acct_sqlite_errno(struct sqlite3 *db, int rc);
bool acct_readonly(const Accountant *a);

typedef struct AcctPartner {
        /* A transaction that may hold the partner's writes ended: committed,
         * or rolled back (memory is to be brought back to the database). */
        void (*tx_end)(void *userdata, bool committed);
        void *userdata;
} AcctPartner;
/* One partner at a time (copied); NULL detaches it. */
void acct_set_partner(Accountant *a, const AcctPartner *p);

/* A change of the partner's: begin opens a transaction unless a batch is
 * open (-EROFS read-only; a batch whose write failed returns that error);
 * end(r) with r < 0 undoes everything since the last commit (why, may be
 * NULL, becomes acct_last_error()) and returns r; otherwise commits
 * unless in a batch (a failed commit undoes everything the same way and
 * returns its error). */
int acct_change_begin(Accountant *a);
int acct_change_end(Accountant *a, int r, const char *why);
bool acct_in_batch(const Accountant *a);

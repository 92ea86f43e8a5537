/* SPDX-License-Identifier: Apache-2.0 */
/*
 * knobs.c — the knob registry: every configuration name some part of glean
 * reads (a daemon, the CLI, the configuration language itself), and the
 * name patterns it builds at run time (SLOT<N>_NAME, SLOT_TYPE_<N>,
 * GROUP_QUOTA_<group>, ALLOW_<level>, ...). From it config_used() and
 * config_unused() (config.h) tell the knobs read from those read by
 * nothing, so that a knob HTCondor honours and glean does not is never
 * silently ignored: a name a file sets counts as read when glean reads it,
 * or when a name read refers to it as $(NAME), directly or through other
 * macros (policy macros like StartIdleTime, which START uses).
 *
 * Keep it honest: a new reader of a knob adds its name here (tests/config/
 * test-config-knobs.c checks the defaults and a table of known names).
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/authz.h"
#include "config-internal.h"

enum {
        KNOB_SLOT = 1u << 0, /* read through config_get_slot: SLOT<N>_NAME too */
};

typedef struct Knob {
        const char *name;
        unsigned flags;
} Knob;

/* Sorted by reader, not by name. */
static const Knob knobs[] = {
        /* the configuration language (config/load.c, getters.c) */
        { "LOCAL_CONFIG_DIR", 0 },
        { "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP", 0 },
        { "LOCAL_CONFIG_FILE", 0 },
        { "REQUIRE_LOCAL_CONFIG_FILE", 0 },
        { "GLEAN_CONFIG_COMMAND_TIMEOUT", 0 },
        { "STARTD_ATTRS", KNOB_SLOT },
        { "STARTD_EXPRS", KNOB_SLOT },
        { "SEC_DEFAULT_AUTHENTICATION_METHODS", 0 },

        /* agent: the slot policy (agent/policy/policy-config.c) */
        { "START", KNOB_SLOT },
        { "IS_OWNER", KNOB_SLOT },
        { "WANT_SUSPEND", KNOB_SLOT },
        { "SUSPEND", KNOB_SLOT },
        { "CONTINUE", KNOB_SLOT },
        { "PREEMPT", KNOB_SLOT },
        { "WANT_VACATE", KNOB_SLOT },
        { "KILL", KNOB_SLOT },
        { "RANK", KNOB_SLOT },
        { "MaxJobRetirementTime", KNOB_SLOT },
        { "MachineMaxVacateTime", KNOB_SLOT },
        { "START_BACKFILL", KNOB_SLOT },
        { "EVICT_BACKFILL", KNOB_SLOT },
        { "PERIODIC_CHECKPOINT", KNOB_SLOT },
        { "RunBenchmarks", KNOB_SLOT },
        { "WANT_SUSPEND_VANILLA", KNOB_SLOT },
        { "SUSPEND_VANILLA", KNOB_SLOT },
        { "CONTINUE_VANILLA", KNOB_SLOT },
        { "PREEMPT_VANILLA", KNOB_SLOT },
        { "WANT_VACATE_VANILLA", KNOB_SLOT },
        { "KILL_VANILLA", KNOB_SLOT },
        { "CPU_BUSY", 0 },
        { "CPUBusy", 0 },
        { "MATCH_TIMEOUT", KNOB_SLOT },
        { "KILLING_TIMEOUT", KNOB_SLOT },
        { "CLAIM_WORKLIFE", KNOB_SLOT },
        { "ALIVE_INTERVAL", KNOB_SLOT },
        { "MAX_CLAIM_ALIVES_MISSED", KNOB_SLOT },
        { "MAX_CLAIM_LEASE_DURATION", KNOB_SLOT },
        { "ENABLE_BACKFILL", 0 },
        { "BACKFILL_COMMAND", 0 },

        /* agent: the machine and its slots (agent/slots/) */
        { "NUM_CPUS", 0 },
        { "MEMORY", 0 },
        { "DISK", 0 },
        { "RESERVED_DISK", 0 },
        { "RESERVED_SWAP", 0 },
        { "NUM_SLOTS", 0 },
        { "MACHINE_RESOURCE_NAMES", 0 },
        { "DETECTED_CPUS", 0 },
        { "DETECTED_CORES", 0 },
        { "DETECTED_MEMORY", 0 },
        { "SLOTS_CONNECTED_TO_KEYBOARD", 0 },
        { "SLOTS_CONNECTED_TO_CONSOLE", 0 },
        { "DISCONNECTED_KEYBOARD_IDLE_BOOST", 0 },
        { "STARTD_SLOT_ATTRS", 0 },

        /* agent: the daemon (agent/daemon/) */
        { "AGENT_LOG_LEVEL", 0 },
        { "AGENT_SOCKET", 0 },
        { "AGENT_EXECUTOR", 0 },
        { "AGENT_JOBS_SCOPE", 0 },
        { "AGENT_MAX_CONNECTIONS", 0 },
        { "AGENT_MAX_CONNECTIONS_PER_USER", 0 },
        { "AGENT_HELLO_TIMEOUT", 0 },
        { "AGENT_CONNECTION_IDLE_TIMEOUT", 0 },
        /* agent: file transfer (agent/daemon/transfer.c, xrun.c) */
        { "TRANSFER_PORT", 0 },
        { "TRANSFER_ADDRESS", 0 },
        { "MAX_CONCURRENT_UPLOADS", 0 },
        { "MAX_CONCURRENT_DOWNLOADS", 0 },
        { "MAX_TRANSFER_INPUT_MB", 0 },
        { "MAX_TRANSFER_OUTPUT_MB", 0 },
        { "EXECUTE", 0 },
        { "FULL_HOSTNAME", 0 },
        { "SLOT_USER", 0 },
        { "STARTER_ALLOW_RUNAS_OWNER", 0 },
        { "ASSIGN_CPU_AFFINITY", 0 },
        { "BASE_CGROUP", 0 },
        { "FORK_EXECUTOR_CGROUP", 0 },
        { "CGROUP_CPU_HARD_LIMIT", 0 },
        { "CGROUP_MEMORY_HIGH_PERCENT", 0 },
        { "CGROUP_MEMORY_LIMIT_POLICY", 0 },
        { "CGROUP_PIDS_MAX", 0 },
        { "CGROUP_SWAP_MAX", 0 },
        { "UPDATE_INTERVAL", 0 },
        { "POLLING_INTERVAL", 0 },
        { "SENSOR_SAMPLE_INTERVAL", 0 },
        { "SLOT_LOAD_DECAY_TIME", 0 },
        { "CONSOLE_DEVICES", 0 },
        { "INPUT_SENSOR_METHODS", 0 },
        { "INPUT_SENSOR_IRQS", 0 },
        { "TTY_SENSOR_METHODS", 0 },
        { "LOAD_SENSOR", 0 },
        { "REFUSE_UNKNOWN_OWNER", 0 },
        { "RELAY_SUBMIT_TIMEOUT", 0 },
        { "RELAY_SUBMIT_MAX_BYTES", 0 },
        { "NEGOTIATOR_RECONNECT_MAX", 0 },

        /* the pool: addresses, keys, identities (agent, negotiator, cli) */
        { "COLLECTOR_HOST", 0 },
        { "COLLECTOR_PORT", 0 },
        { "NEGOTIATOR_ADDRESS", 0 },
        { "NEGOTIATOR_SOCKET", 0 },
        { "NEGOTIATOR_PORT_FILE", 0 },
        { "NEGOTIATOR_DATABASE", 0 },
        { "POOL_KEY_FILE", 0 },
        { "SEC_TOKEN_POOL_SIGNING_KEY_FILE", 0 },
        { "SEC_TOKEN_MANAGER_KEY_FILE", 0 },
        { "SEC_TOKEN_DIRECTORY", 0 },
        { "TOKEN_REGISTRY", 0 },
        { "ADMINISTRATORS", 0 },
        { "ADMINISTRATORS_RELAYED_BY", 0 },
        { "UID_DOMAIN", 0 },

        /* negotiator: the daemon and the matchmaker (negotiator/) */
        { "NEGOTIATOR_LOG_LEVEL", 0 },
        { "NEGOTIATOR_INTERVAL", 0 },
        { "NEGOTIATOR_MIN_INTERVAL", 0 },
        { "NEGOTIATOR_TIMEOUT", 0 },
        { "NEGOTIATOR_IDLE_TIMEOUT", 0 },
        { "NEGOTIATOR_MAX_CONNECTIONS_PER_USER", 0 },
        { "NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS", 0 },
        { "NEGOTIATOR_MAX_OUTPUT", 0 },
        { "NEGOTIATOR_MAX_WAITS_PER_USER", 0 },
        { "NEGOTIATOR_TRANSFER_WAIT", 0 }, /* issue 24: a claim waiting for its job's submit agent */
        { "NEGOTIATOR_PRE_JOB_RANK", 0 },
        { "NEGOTIATOR_POST_JOB_RANK", 0 },
        { "PREEMPTION_REQUIREMENTS", 0 },
        { "PREEMPTION_RANK", 0 },
        { "PREEMPTION_REQUIREMENTS_STABLE", 0 },
        { "PREEMPTION_RANK_STABLE", 0 },
        { "SLOT_WEIGHT", 0 },
        { "GROUP_SORT_EXPR", 0 },
        { "NEGOTIATOR_CONSIDER_PREEMPTION", 0 },
        { "NEGOTIATOR_CONSIDER_EARLY_PREEMPTION", 0 },
        { "NEGOTIATE_ALL_JOBS_IN_CLUSTER", 0 },
        { "NEGOTIATOR_USE_SLOT_WEIGHTS", 0 },
        { "NEGOTIATOR_MATCHLIST_CACHING", 0 },
        { "GROUP_QUOTA_MAX_ALLOCATION_ROUNDS", 0 },
        { "CLASSAD_LIFETIME", 0 },
        { "JOB_DEFAULT_LEASE_DURATION", 0 },

        /* accountant (accounting/) */
        { "PRIORITY_HALFLIFE", 0 },
        { "DEFAULT_PRIO_FACTOR", 0 },
        { "NICE_USER_PRIO_FACTOR", 0 },
        { "REMOTE_PRIO_FACTOR", 0 },
        { "ACCOUNTANT_LOCAL_DOMAIN", 0 },
        { "GROUP_NAMES", 0 },
        { "NEGOTIATOR_ALLOW_QUOTA_OVERSUBSCRIPTION", 0 },
        { "GROUP_ACCEPT_SURPLUS", 0 },
        { "GROUP_AUTOREGROUP", 0 },

        /* the queue (queue/) and submit (config/submit-*.c, cli/submit.c) */
        { "HISTORY_DURATION", 0 },
        { "HISTORY_MAX_JOBS", 0 },
        { "MAX_JOBS_PER_SUBMISSION", 0 },
        { "MAX_JOBS_PER_OWNER", 0 },
        { "MAX_JOBS_SUBMITTED", 0 },
        { "SUBMIT_ID_LIFETIME", 0 },
        { "SUBMIT_IDS_PER_USER", 0 },
        { "SUBMIT_RETRY_TIME", 0 },
        { "PERIODIC_EXPR_INTERVAL", 0 },
        { "SYSTEM_PERIODIC_HOLD", 0 },
        { "SYSTEM_PERIODIC_RELEASE", 0 },
        { "SYSTEM_PERIODIC_REMOVE", 0 },
        { "SYSTEM_PERIODIC_HOLD_REASON", 0 },
        { "SYSTEM_PERIODIC_RELEASE_REASON", 0 },
        { "SYSTEM_PERIODIC_REMOVE_REASON", 0 },
        { "SYSTEM_PERIODIC_HOLD_SUBCODE", 0 },
        { "ACCOUNTING_GROUPS_ALLOWED", 0 },
        { "SUBMIT_REQUIREMENT_NAMES", 0 },
        { "JOB_DEFAULT_REQUESTCPUS", 0 },
        { "JOB_DEFAULT_REQUESTMEMORY", 0 },
        { "JOB_DEFAULT_REQUESTDISK", 0 },

        /* submit: file transfer (config/submit-xfer.c, domains.c; the agent's
         * slot ads read FILESYSTEM_DOMAIN too, agent/slots/names.c) */
        { "SUBMIT_DEFAULT_SHOULD_TRANSFER_FILES", 0 },
        { "FILESYSTEM_DOMAIN", 0 },

        /* partitionable slots (carve/) */
        { "MODIFY_REQUEST_EXPR_REQUESTCPUS", 0 },
        { "MODIFY_REQUEST_EXPR_REQUESTMEMORY", 0 },
        { "MODIFY_REQUEST_EXPR_REQUESTDISK", 0 },
        { "MUST_MODIFY_REQUEST_EXPRS", 0 },

        /* agent: the machine (agent/slots/machine.c, names.c, topology.c) */
        { "RESERVED_MEMORY", 0 },
        { "COUNT_HYPERTHREAD_CPUS", 0 },
        { "STARTD_NAME", 0 },

        /* agent: startd cron (agent/cron/cron-config.c); STARTD_CRON_<job>_*
         * for the jobs STARTD_CRON_JOBLIST names: knob_read() */
        { "STARTD_CRON_JOBLIST", 0 },
        { "STARTD_CRON_AUTOPUBLISH", 0 },
        { "STARTD_CRON_MAX_JOB_LOAD", 0 },
        { "STARTD_CRON_CONFIG_VAL", 0 },
        { "STARTD_CRON_LOG_NON_ZERO_EXIT", 0 },
        { "STARTD_CRON_USER", 0 },

        /* the queue at submit (queue/submit-knobs.c, queue-limits.c,
         * queue-history.c, jobcmd-transform.c) */
        { "APPEND_REQUIREMENTS", 0 },
        { "APPEND_REQ_VANILLA", 0 },
        { "SUBMIT_ATTRS", 0 },
        { "SUBMIT_EXPRS", 0 },
        { "SYSTEM_SUBMIT_ATTRS", 0 },
        { "JOB_TRANSFORM_NAMES", 0 },
        { "MAX_JOBS_RUNNING", 0 },
        { "HISTORY", 0 },
        { "MAX_HISTORY_LOG", 0 },
        { "MAX_HISTORY_ROTATIONS", 0 },
        { "ENABLE_HISTORY_ROTATION", 0 },
        /* read to say what glean does instead (jobcmd_config_warnings) */
        { "ROTATE_HISTORY_DAILY", 0 },
        { "ROTATE_HISTORY_MONTHLY", 0 },
};

/* What agent/cron/cron-config.c reads of each job: STARTD_CRON_<job>_<item>
 * (RECONFIG and RECONFIG_RERUN need nothing: the agent reads its
 * configuration only at start, which runs every job again). */
static const char *const cron_items[] = {
        "EXECUTABLE", "ARGS", "ENV", "CWD", "MODE", "PERIOD", "PREFIX", "KILL", "SLOTS", "JOB_LOAD",
        "CONDITION", "METRICS", "RECONFIG", "RECONFIG_RERUN",
};

static const Knob *knob_find(const char *name) {
        for (size_t i = 0; i < sizeof knobs / sizeof *knobs; i++)
                if (strcasecmp(knobs[i].name, name) == 0)
                        return &knobs[i];
        return NULL;
}

/* s starts with prefix (case-insensitively): what follows, else NULL. */
static const char *after(const char *s, const char *prefix) {
        size_t n = strlen(prefix);

        return strncasecmp(s, prefix, n) == 0 ? s + n : NULL;
}

/* "<digits>" then end or "_": the rest ("" or "_..."), else NULL. */
static const char *after_number(const char *s) {
        const char *p = s;

        while (isdigit((unsigned char) *p))
                p++;
        return p > s && (*p == '\0' || *p == '_') ? p : NULL;
}

/* ---- the lists whose items name knobs ---- */

typedef struct StrSet {
        char **items; /* sorted case-insensitively */
        size_t n;
        size_t cap;
} StrSet;

typedef struct KnobLists {
        StrSet attrs;        /* STARTD_ATTRS, STARTD_EXPRS, SUBMIT_ATTRS */
        StrSet slot_items;   /* the items of every SLOT<N>_STARTD_ATTRS and _EXPRS */
        StrSet slot_attrs;   /* "<N>_item" for the items of SLOT<N>_STARTD_ATTRS and _EXPRS */
        StrSet groups;       /* GROUP_NAMES */
        StrSet requirements; /* SUBMIT_REQUIREMENT_NAMES */
        StrSet transforms;   /* JOB_TRANSFORM_NAMES */
        StrSet cron;         /* STARTD_CRON_JOBLIST */
} KnobLists;

static int cmp_str(const void *a, const void *b) {
        return strcasecmp(*(const char *const *) a, *(const char *const *) b);
}

static bool set_has(const StrSet *set, const char *item) {
        return set->n > 0 && bsearch(&item, set->items, set->n, sizeof(char *), cmp_str) != NULL;
}

/* The items of the list knob (expanded; undefined or broken: none), each
 * with prefix in front, added to set. */
static int set_add_list(StrSet *set, const Config *cfg, const char *knob, const char *prefix) {
        _cleanup_(config_strv_freep) char **items = NULL;

        if (config_get_list(cfg, knob, &items, NULL) < 0)
                return 0;
        for (char **i = items; *i; i++) {
                char *s = NULL;

                if (set->n == set->cap) {
                        size_t cap = set->cap ? set->cap * 2 : 16;
                        char **grown = realloc(set->items, cap * sizeof(char *));

                        if (!grown)
                                return -ENOMEM;
                        set->items = grown;
                        set->cap = cap;
                }
                if (asprintf(&s, "%s%s", prefix, *i) < 0)
                        return -ENOMEM;
                set->items[set->n++] = s;
        }
        return 0;
}

static void set_sort(StrSet *set) {
        if (set->n > 0)
                qsort(set->items, set->n, sizeof(char *), cmp_str);
}

static void set_done(StrSet *set) {
        for (size_t i = 0; i < set->n; i++)
                free(set->items[i]);
        free(set->items);
        *set = (StrSet){};
}

static void lists_done(KnobLists *l) {
        set_done(&l->attrs);
        set_done(&l->slot_items);
        set_done(&l->slot_attrs);
        set_done(&l->groups);
        set_done(&l->requirements);
        set_done(&l->transforms);
        set_done(&l->cron);
}

/* The slot ad publishes the attributes STARTD_ATTRS and STARTD_EXPRS name,
 * and slot N's those of SLOT<N>_STARTD_ATTRS and _EXPRS too, each from
 * SLOT<N>_ATTR or else ATTR (agent/daemon/slots.c, config_get_slot); a job
 * ad gets those SUBMIT_ATTRS names (a branch being merged). */
static int lists_load(const Config *cfg, KnobLists *l) {
        int r = 0;

        if ((r = set_add_list(&l->attrs, cfg, "STARTD_ATTRS", "")) < 0 ||
            (r = set_add_list(&l->attrs, cfg, "STARTD_EXPRS", "")) < 0 ||
            (r = set_add_list(&l->attrs, cfg, "SUBMIT_ATTRS", "")) < 0 ||
            (r = set_add_list(&l->attrs, cfg, "SUBMIT_EXPRS", "")) < 0 ||
            (r = set_add_list(&l->attrs, cfg, "SYSTEM_SUBMIT_ATTRS", "")) < 0 ||
            (r = set_add_list(&l->cron, cfg, "STARTD_CRON_JOBLIST", "")) < 0 ||
            (r = set_add_list(&l->groups, cfg, "GROUP_NAMES", "")) < 0 ||
            (r = set_add_list(&l->requirements, cfg, "SUBMIT_REQUIREMENT_NAMES", "")) < 0 ||
            (r = set_add_list(&l->transforms, cfg, "JOB_TRANSFORM_NAMES", "")) < 0)
                return r;
        for (size_t i = 0; i < cfg->n_entries && r >= 0; i++) {
                const char *name = cfg->entries[i].name, *num = after(name, "SLOT"), *rest;
                char prefix[32];

                if (!num || !(rest = after_number(num)) || (size_t) (rest - num) > 20)
                        continue;
                if (strcasecmp(rest, "_STARTD_ATTRS") != 0 && strcasecmp(rest, "_STARTD_EXPRS") != 0)
                        continue;
                snprintf(prefix, sizeof prefix, "%.*s_", (int) (rest - num), num);
                if ((r = set_add_list(&l->slot_items, cfg, name, "")) >= 0)
                        r = set_add_list(&l->slot_attrs, cfg, name, prefix);
        }
        set_sort(&l->attrs);
        set_sort(&l->slot_items);
        set_sort(&l->slot_attrs);
        set_sort(&l->groups);
        set_sort(&l->requirements);
        set_sort(&l->transforms);
        set_sort(&l->cron);
        return r;
}

/* A name glean reads by itself (not through a macro reference). */
static bool knob_read(const KnobLists *l, const char *name) {
        const Knob *k;
        const char *rest;
        int level;
        bool deny;
        const char *sub;

        if (knob_find(name) || set_has(&l->attrs, name) || set_has(&l->slot_items, name))
                return true;
        /* SLOT<N>_NAME for the knobs read per slot (config_get_slot), and
         * SLOT<N>_ATTR for the attributes slot N publishes. */
        if ((rest = after(name, "SLOT")) && isdigit((unsigned char) *rest)) {
                const char *tail = after_number(rest);

                if (tail && *tail == '_' &&
                    (((k = knob_find(tail + 1)) && (k->flags & KNOB_SLOT)) || set_has(&l->attrs, tail + 1)))
                        return true;
                if (tail && *tail == '_' && set_has(&l->slot_attrs, rest))
                        return true;
        }
        /* agent/slots/slottype.c: SLOT_TYPE_<N>, SLOT_TYPE_<N>_PARTITIONABLE, NUM_SLOTS_TYPE_<N> */
        if ((rest = after(name, "SLOT_TYPE_")) && (rest = after_number(rest)))
                return *rest == '\0' || strcasecmp(rest, "_PARTITIONABLE") == 0;
        if ((rest = after(name, "NUM_SLOTS_TYPE_")) && (rest = after_number(rest)))
                return *rest == '\0';
        /* agent/slots/machine.c: MACHINE_RESOURCE_<name> (not its INVENTORY_ form) */
        if ((rest = after(name, "MACHINE_RESOURCE_")) && *rest && !after(rest, "INVENTORY_"))
                return true;
        /* common/authz.c: ALLOW_<level>[_<SUBSYS>], DENY_... */
        if (glean_authz_knob(name, &level, &deny, &sub) == 0)
                return true;
        /* queue/jobcmd-policy.c: ACCOUNTING_GROUPS_ALLOWED_<user>;
         * SUBMIT_REQUIREMENT_<name>[_REASON] for the names listed */
        if ((rest = after(name, "ACCOUNTING_GROUPS_ALLOWED_")) && *rest)
                return true;
        if ((rest = after(name, "SUBMIT_REQUIREMENT_")) && *rest) {
                char req[CONFIG_MAX_NAME + 1];
                size_t n = strlen(rest);

                if (set_has(&l->requirements, rest))
                        return true;
                static const char *const suffixes[] = { "_REASON", "_IS_WARNING" };
                for (size_t i = 0; i < sizeof suffixes / sizeof *suffixes; i++) {
                        size_t len = strlen(suffixes[i]);

                        if (n > len && n < sizeof req && strcasecmp(rest + n - len, suffixes[i]) == 0) {
                                memcpy(req, rest, n - len);
                                req[n - len] = '\0';
                                if (set_has(&l->requirements, req))
                                        return true;
                        }
                }
                return false;
        }
        /* accounting/groups.c: the knobs of each group GROUP_NAMES lists */
        static const char *const group_prefixes[] = { "GROUP_QUOTA_DYNAMIC_", "GROUP_QUOTA_",
                                                      "GROUP_ACCEPT_SURPLUS_", "GROUP_AUTOREGROUP_",
                                                      "GROUP_PRIO_FACTOR_" };
        for (size_t i = 0; i < sizeof group_prefixes / sizeof *group_prefixes; i++)
                if ((rest = after(name, group_prefixes[i])) && *rest && set_has(&l->groups, rest))
                        return true;
        /* queue/jobcmd-transform.c: JOB_TRANSFORM_<name> for the names listed */
        if ((rest = after(name, "JOB_TRANSFORM_")) && *rest && set_has(&l->transforms, rest))
                return true;
        /* agent/cron/cron-config.c: STARTD_CRON_<job>_<item> for the jobs listed */
        if ((rest = after(name, "STARTD_CRON_")) && *rest) {
                size_t n = strlen(rest);

                for (size_t i = 0; i < sizeof cron_items / sizeof *cron_items; i++) {
                        size_t len = strlen(cron_items[i]);
                        char job[CONFIG_MAX_NAME + 1];

                        if (n > len + 1 && n - len - 1 < sizeof job && rest[n - len - 1] == '_' &&
                            strcasecmp(rest + n - len, cron_items[i]) == 0) {
                                memcpy(job, rest, n - len - 1);
                                job[n - len - 1] = '\0';
                                if (set_has(&l->cron, job))
                                        return true;
                        }
                }
        }
        return false;
}

/* ---- macro references ---- */

typedef struct Reach {
        const Config *cfg;
        bool *read;      /* per entry */
        size_t *queue;   /* entries to scan */
        size_t n_queue;
} Reach;

static int mark(Reach *x, size_t i) {
        if (x->read[i])
                return 0;
        x->read[i] = true;
        x->queue[x->n_queue++] = i;
        return 0;
}

static int mark_ref(const char *name, size_t n, void *userdata) {
        Reach *x = userdata;
        char buf[CONFIG_MAX_NAME + 1];
        size_t i;

        if (n >= sizeof buf)
                return 0;
        memcpy(buf, name, n);
        buf[n] = '\0';
        if (config_map_get(&x->cfg->index, buf, &i) < 0)
                return 0;
        return mark(x, i);
}

/* read[i]: entry i is read by glean or referred to by one that is. */
static int reach(const Config *cfg, bool **ret) {
        KnobLists lists = {};
        Reach x = { .cfg = cfg };
        int r = 0;

        x.read = calloc(cfg->n_entries + 1, sizeof *x.read);
        x.queue = calloc(cfg->n_entries + 1, sizeof *x.queue);
        if (!x.read || !x.queue) {
                free(x.read);
                free(x.queue);
                return -ENOMEM;
        }
        r = lists_load(cfg, &lists);
        for (size_t i = 0; i < cfg->n_entries && r >= 0; i++)
                if (knob_read(&lists, cfg->entries[i].name))
                        (void) mark(&x, i);
        lists_done(&lists);
        while (x.n_queue > 0 && r >= 0)
                r = config_refs(cfg->entries[x.queue[--x.n_queue]].value, mark_ref, &x);
        free(x.queue);
        if (r < 0) {
                free(x.read);
                return r;
        }
        *ret = x.read;
        return 0;
}

/* ---- the lists ---- */

/* Append s (taken; NULL: -ENOMEM) to strv of *n items (room made by the
 * caller), keeping it NULL-terminated. */
static int strv_push(char **strv, size_t *n, char *s) {
        if (!s)
                return -ENOMEM;
        strv[(*n)++] = s;
        strv[*n] = NULL;
        return 0;
}

static int cmp_entry_name(const void *a, const void *b, void *userdata) {
        const Config *cfg = userdata;

        return strcasecmp(cfg->entries[*(const size_t *) a].name, cfg->entries[*(const size_t *) b].name);
}

/* The entries in lexical order of their names. */
static int sorted_entries(const Config *cfg, size_t **ret) {
        size_t *order = calloc(cfg->n_entries + 1, sizeof *order);

        if (!order)
                return -ENOMEM;
        for (size_t i = 0; i < cfg->n_entries; i++)
                order[i] = i;
        qsort_r(order, cfg->n_entries, sizeof *order, cmp_entry_name, (void *) cfg);
        *ret = order;
        return 0;
}

/* used: the names read; else the names a file sets (not empty) that are
 * not, as "file:line: NAME is set but glean reads nothing from it". */
static int collect(const Config *cfg, bool used, char ***ret) {
        _cleanup_config_free_ bool *read = NULL;
        _cleanup_config_free_ size_t *order = NULL;
        _cleanup_(config_strv_freep) char **out = NULL;
        size_t n = 0;
        int r;

        if (!cfg || !ret)
                return -EINVAL;
        if ((r = reach(cfg, &read)) < 0 || (r = sorted_entries(cfg, &order)) < 0)
                return r;
        out = calloc(cfg->n_entries + 1, sizeof(char *));
        if (!out)
                return -ENOMEM;
        for (size_t k = 0; k < cfg->n_entries; k++) {
                const ConfigEntry *e = &cfg->entries[order[k]];
                const char *file = config_entry_file(cfg, e);
                char *s = NULL;

                if (used) {
                        if (!read[order[k]])
                                continue;
                        s = strdup(e->name);
                } else {
                        /* what a metaknob set is the metaknob's: its status (IMPLEMENTED,
                         * PARTIAL with a warning, REFUSED) says what glean does with it */
                        if (read[order[k]] || !e->value[0] || !file[0] || file[0] == '<' || e->metaknob)
                                continue;
                        if ((e->line > 0 ? asprintf(&s, "%s:%d: %s is set but glean reads nothing from it", file,
                                                    e->line, e->name)
                                         : asprintf(&s, "%s: %s is set but glean reads nothing from it", file,
                                                    e->name)) < 0)
                                s = NULL;
                }
                if ((r = strv_push(out, &n, s)) < 0)
                        return r;
        }
        if (n == 0) {
                *ret = NULL; /* none (out freed) */
                return 0;
        }
        *ret = out;
        out = NULL;
        return (int) n;
}

int config_unused(const Config *cfg, char ***ret) {
        return collect(cfg, false, ret);
}

int config_used(const Config *cfg, char ***ret) {
        return collect(cfg, true, ret);
}

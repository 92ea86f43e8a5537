/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c — glean-negotiator: the central manager (collector, job queue,
 * accountant, matchmaker, and the claims on the agents' slots).
 *
 *   glean-negotiator [--config FILE] [--set NAME=VALUE]... [--port-file FILE] [--init-db]
 *
 * Reads the configuration ($GLEAN_CONFIG or /etc/glean/glean.conf, then
 * LOCAL_CONFIG_DIR; again on SIGHUP), opens NEGOTIATOR_DATABASE (the
 * accounts and the queue), listens for agents on NEGOTIATOR_ADDRESS:
 * COLLECTOR_PORT (sealed with POOL_KEY_FILE; port 0 takes a free one, which
 * is logged and written to --port-file / NEGOTIATOR_PORT_FILE) and for
 * local users on NEGOTIATOR_SOCKET, and negotiates every
 * NEGOTIATOR_INTERVAL. A missing database is created; an existing file
 * without the schema (0 bytes: a lost database) is refused unless
 * --init-db says to initialise it. SIGTERM or SIGINT: a clean stop (the jobs go on
 * running on the agents; the next start relearns their claims).
 *
 * A commit to the database that fails (a full disk) does not stop it: the
 * iteration is undone and its requests refused with the reason (daemon.h).
 *
 * Exit: 0 after SIGTERM; 1 when it cannot start (the reason logged); 2
 * for a bad command line.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <systemd/sd-daemon.h>

#include "common/timer.h"
#include "daemon.h"

#define TICK_USEC 1000000ULL

static const char usage[] =
        "usage: glean-negotiator [--config FILE] [--set NAME=VALUE]... [--port-file FILE] [--init-db]\n";

/* --init-db: an existing NEGOTIATOR_DATABASE without the schema (empty)
 * may be initialised. */
static bool init_db;

double nego_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (double) ts.tv_sec + (double) ts.tv_nsec / 1e9;
}

bool nego_is_admin(const Nego *n, const GleanPeer *p) {
        return glean_peer_is_admin(p, n->k.admins);
}

void nego_log_job(int prio, const char *message_id, JobId job, const char *user, const char *slot, const Claim *c,
                  const char *reason, const char *fmt, ...) {
        char id[48], msg[1024];
        GleanLogField f[5];
        size_t k = 0;
        if (job.cluster > 0) {
                snprintf(id, sizeof id, "%" PRId64 ".%" PRId64, job.cluster, job.proc);
                f[k++] = (GleanLogField){ "GLEAN_JOB", id };
        }
        if (user)
                f[k++] = (GleanLogField){ "GLEAN_USER", user };
        if (slot)
                f[k++] = (GleanLogField){ "GLEAN_SLOT", slot };
        if (c)
                f[k++] = (GleanLogField){ "GLEAN_CLAIM", c->pub };
        if (reason)
                f[k++] = (GleanLogField){ "GLEAN_REASON", reason };
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        glean_log(prio, message_id, f, k, "%s", msg);
}

/* ---- knobs ---- */

static int log_config_error(const ConfigError *err, int r, const char *what) {
        char *m = config_error_format(err);
        glean_log(LOG_ERR, NULL, NULL, 0, "%s: %s", what, m && *m ? m : strerror(-r));
        free(m);
        return r;
}

/* A string knob's expanded value; def when undefined or empty. */
static int knob_string(const Config *cfg, const char *name, const char *def, char **ret) {
        ConfigError err = { 0 };
        char *v = NULL;
        int r = config_get(cfg, name, &v, &err);
        if (r == -ENOENT || (r >= 0 && !*v)) {
                free(v);
                *ret = def ? strdup(def) : NULL;
                return def && !*ret ? -ENOMEM : 0;
        }
        if (r < 0)
                return log_config_error(&err, r, name);
        *ret = v;
        return 0;
}

/* An integer knob in [min, max]; def when undefined. */
static int knob_int(const Config *cfg, const char *name, int64_t def, int64_t min, int64_t max, int64_t *ret) {
        ConfigError err = { 0 };
        int64_t v;
        int r = config_get_int(cfg, name, &v, &err);
        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        if (r < 0)
                return log_config_error(&err, r, name);
        if (v < min || v > max) {
                glean_log(LOG_ERR, NULL, NULL, 0, "%s = %" PRId64 ": must be %" PRId64 " to %" PRId64, name, v, min,
                          max);
                return -ERANGE;
        }
        *ret = v;
        return 0;
}

static void knobs_clear(NegoKnobs *k) {
        free(k->address);
        free(k->port_file);
        free(k->socket_path);
        free(k->pool_key_file);
        free(k->signing_key_file);
        free(k->token_registry);
        free(k->database);
        free(k->uid_domain);
        config_strv_free(k->admins);
        config_strv_free(k->relay_admins);
        jobcmd_policy_free(k->submit_policy);
        nego_authz_clear(k);
        *k = (NegoKnobs){ 0 };
}

static int knobs_load(const Config *cfg, const char *port_file, NegoKnobs *ret) {
        NegoKnobs k = { 0 };
        ConfigError err = { 0 };
        int64_t missed = 6;
        int r;
        if ((r = knob_string(cfg, "NEGOTIATOR_ADDRESS", "", &k.address)) < 0 ||
            (r = knob_string(cfg, "NEGOTIATOR_PORT_FILE", NULL, &k.port_file)) < 0 ||
            (r = knob_string(cfg, "NEGOTIATOR_SOCKET", "/run/glean/negotiator.sock", &k.socket_path)) < 0 ||
            (r = knob_string(cfg, "POOL_KEY_FILE", "/etc/glean/pool.key", &k.pool_key_file)) < 0 ||
            (r = knob_string(cfg, "SEC_TOKEN_POOL_SIGNING_KEY_FILE", "/etc/glean/signing.key",
                             &k.signing_key_file)) < 0 ||
            (r = knob_string(cfg, "TOKEN_REGISTRY", "/var/lib/glean/tokens", &k.token_registry)) < 0 ||
            (r = knob_string(cfg, "NEGOTIATOR_DATABASE", "/var/lib/glean/negotiator.db", &k.database)) < 0 ||
            (r = knob_string(cfg, "UID_DOMAIN", "localdomain", &k.uid_domain)) < 0 ||
            (r = knob_int(cfg, "COLLECTOR_PORT", 9628, 0, 65535, &k.port)) < 0 ||
            (r = knob_int(cfg, "CLASSAD_LIFETIME", 900, 1, INT32_MAX, &k.classad_lifetime)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_INTERVAL", 60, 1, INT32_MAX, &k.interval)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_MIN_INTERVAL", 5, 0, INT32_MAX, &k.min_interval)) < 0 ||
            (r = knob_int(cfg, "PERIODIC_EXPR_INTERVAL", 60, 1, INT32_MAX, &k.periodic_interval)) < 0 ||
            (r = knob_int(cfg, "ALIVE_INTERVAL", 300, 1, INT32_MAX, &k.alive_interval)) < 0 ||
            (r = knob_int(cfg, "MAX_CLAIM_ALIVES_MISSED", 6, 1, 1000, &missed)) < 0 ||
            (r = knob_int(cfg, "CLAIM_WORKLIFE", 3600, -1, INT32_MAX, &k.claim_worklife)) < 0 ||
            (r = knob_int(cfg, "JOB_DEFAULT_LEASE_DURATION", 1200, 1, INT32_MAX, &k.job_lease)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_TIMEOUT", 30, 1, 3600, &k.timeout)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_IDLE_TIMEOUT", 600, 1, INT32_MAX, &k.idle_timeout)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_MAX_CONNECTIONS_PER_USER", 64, 1, INT32_MAX, &k.max_user_conns)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_MAX_HANDSHAKES_PER_ADDRESS", 16, 1, INT32_MAX, &k.max_addr_handshakes)) <
                    0 ||
            (r = knob_int(cfg, "NEGOTIATOR_MAX_OUTPUT", 256 << 20, 2 * GLEAN_FRAME_MAX, INT64_MAX / 2, &k.max_output)) <
                    0 ||
            (r = knob_int(cfg, "NEGOTIATOR_MAX_WAITS_PER_USER", 1000, 1, INT32_MAX, &k.max_waits)) < 0 ||
            (r = knob_int(cfg, "NEGOTIATOR_TRANSFER_WAIT", 300, 1, INT32_MAX, &k.transfer_wait)) < 0)
                goto fail;
        k.max_lease = k.alive_interval * missed;
        if (port_file) {
                free(k.port_file);
                if (!(k.port_file = strdup(port_file))) {
                        r = -ENOMEM;
                        goto fail;
                }
        }
        r = config_get_list(cfg, "ADMINISTRATORS", &k.admins, &err);
        if (r < 0 && r != -ENOENT) {
                log_config_error(&err, r, "ADMINISTRATORS");
                goto fail;
        }
        r = config_get_list(cfg, "ADMINISTRATORS_RELAYED_BY", &k.relay_admins, &err);
        if (r < 0 && r != -ENOENT) {
                log_config_error(&err, r, "ADMINISTRATORS_RELAYED_BY");
                goto fail;
        }
        r = jobcmd_policy_from_config(cfg, &k.submit_policy, &err);
        if (r < 0) {
                log_config_error(&err, r, "the submit policy");
                goto fail;
        }
        if ((r = nego_authz_load(cfg, &k)) < 0)
                goto fail;
        *ret = k;
        return 0;
fail:
        knobs_clear(&k);
        return r;
}

static int load_config(Nego *n, Config **ret) {
        ConfigError err = { 0 };
        Config *cfg = NULL;
        int r = config_load_path(n->args.config_path, &cfg, &err);
        if (r < 0)
                return log_config_error(&err, r, "configuration");
        for (size_t i = 0; i < n->args.n_sets; i++) {
                const GleanSetting *set = &n->args.sets[i];
                if ((r = config_set(cfg, set->name, set->value)) < 0) {
                        config_free(cfg);
                        return glean_log_errno(LOG_ERR, r, "--set %s=%s: %m", set->name, set->value);
                }
        }
        char *level = NULL;
        if (config_get(cfg, "NEGOTIATOR_LOG_LEVEL", &level, &err) >= 0)
                (void) glean_daemon_log_level(level);
        free(level);
        /* what the configuration asks that glean does not do, each with its line; the
         * queue's knobs glean does not do as written (HISTORY naming a file, ...) */
        char **lines = NULL;
        (void) config_warnings(cfg, &lines);
        glean_daemon_log_lines(LOG_WARNING, lines);
        lines = NULL;
        (void) config_unused(cfg, &lines);
        glean_daemon_log_lines(LOG_WARNING, lines);
        lines = NULL;
        (void) jobcmd_config_warnings(cfg, &lines);
        glean_daemon_log_lines(LOG_WARNING, lines);
        *ret = cfg;
        return 0;
}

/* The accounts' and the matchmaker's settings from cfg. */
static int load_settings(Config *cfg, AcctSettings *ret_as, AcctGroups **ret_groups, NegoSettings **ret_ns) {
        ConfigError err = { 0 };
        AcctSettings as = { 0 };
        AcctGroups *groups = NULL;
        NegoSettings *ns = NULL;
        int r;
        if ((r = acct_settings_from_config(cfg, &as, &err)) < 0)
                return log_config_error(&err, r, "accounting");
        if ((r = acct_groups_from_config(cfg, &groups, &err)) < 0) {
                acct_settings_clear(&as);
                return log_config_error(&err, r, "accounting groups");
        }
        if ((r = nego_settings_from_config(cfg, &ns, &err)) < 0) {
                acct_settings_clear(&as);
                acct_groups_free(groups);
                return log_config_error(&err, r, "negotiator");
        }
        *ret_as = as;
        *ret_groups = groups;
        *ret_ns = ns;
        return 0;
}

static void reload(Nego *n) {
        Config *cfg = NULL;
        NegoKnobs k;
        AcctSettings as;
        AcctGroups *groups = NULL;
        NegoSettings *ns = NULL;
        if (load_config(n, &cfg) < 0 || knobs_load(cfg, n->k.port_file, &k) < 0) {
                config_free(cfg);
                glean_log(LOG_ERR, NULL, NULL, 0, "SIGHUP: the configuration has errors; keeping the old one");
                return;
        }
        QueueSettings qs = { 0 };
        ConfigError qerr = { 0 };
        int qr = queue_settings_from_config(cfg, &qs, &qerr);
        if (qr < 0)
                log_config_error(&qerr, qr, "job queue");
        if (qr < 0 || load_settings(cfg, &as, &groups, &ns) < 0) {
                queue_settings_clear(&qs);
                knobs_clear(&k);
                config_free(cfg);
                glean_log(LOG_ERR, NULL, NULL, 0, "SIGHUP: the configuration has errors; keeping the old one");
                return;
        }
        /* MAX_JOBS_RUNNING, the history's bounds, SYSTEM_PERIODIC_*: at once, as condor_reconfig. */
        queue_reconfigure(n->queue, &qs);
        nego_batch(n);
        nego_claims_over_limit(n);
        int r = acct_reconfigure(n->acct, &as, groups, nego_now());
        if (r < 0) {
                acct_settings_clear(&as);
                glean_log_errno(LOG_ERR, r, "SIGHUP: the accounts refuse the new settings: %m");
        }
        /* What the listeners and the database were opened with stays until a restart. */
        static const char *const fixed[] = { "NEGOTIATOR_ADDRESS", "COLLECTOR_PORT", "NEGOTIATOR_SOCKET",
                                             "POOL_KEY_FILE", "NEGOTIATOR_DATABASE",
                                             "SEC_TOKEN_POOL_SIGNING_KEY_FILE", "TOKEN_REGISTRY" };
        const char *old[] = { n->k.address, NULL, n->k.socket_path, n->k.pool_key_file, n->k.database,
                              n->k.signing_key_file, n->k.token_registry };
        const char *new[] = { k.address, NULL, k.socket_path, k.pool_key_file, k.database,
                              k.signing_key_file, k.token_registry };
        for (size_t i = 0; i < sizeof fixed / sizeof *fixed; i++) {
                bool changed = i == 1 ? k.port != n->k.port : strcmp(old[i], new[i]) != 0;
                if (changed)
                        glean_log(LOG_WARNING, NULL, NULL, 0, "SIGHUP: %s changed; it takes effect at the next start",
                                  fixed[i]);
        }
        char *t;
#define KEEP(f) (t = k.f, k.f = n->k.f, n->k.f = t)
        KEEP(address);
        KEEP(socket_path);
        KEEP(pool_key_file);
        KEEP(signing_key_file);
        KEEP(token_registry);
        KEEP(database);
#undef KEEP
        k.port = n->k.port;
        knobs_clear(&n->k);
        n->k = k;
        nego_settings_free(n->settings);
        n->settings = ns;
        config_free(n->cfg);
        n->cfg = cfg;
        glean_log(LOG_NOTICE, NULL, NULL, 0, "SIGHUP: configuration reloaded");
        nego_want_cycle(n);
}

/* ---- the batch and the post work ---- */

static void batch_open(Nego *n) {
        if (n->in_batch)
                return;
        /* One batch: the queue's is the Accountant's. */
        int r = queue_batch_begin(n->queue);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "cannot begin a batch: %m");
        n->in_batch = true;
        nego_net_batch_begin(n);
}

void nego_batch(Nego *n) {
        batch_open(n);
        n->batch_claims = true;
}

void nego_batch_queue(Nego *n) {
        batch_open(n);
}

static void status_line(Nego *n);

/* The batch's commit: >= 0, or the error with why filled in. */
static int batch_commit(Nego *n, char *why, size_t len) {
        why[0] = 0;
        int r = queue_batch_commit(n->queue, why, len);
        n->in_batch = false;
        if (r < 0 && !why[0])
                snprintf(why, len, "%s", acct_last_error(n->acct));
        return r;
}

/* A commit failed: memory is the last commit's again (the queue and the
 * accounts read it back); nothing the iteration queued leaves, the
 * requests it handled are refused, and the claims are rebuilt when it
 * may have changed them. The daemon runs on. */
static void batch_failed(Nego *n, int r, const char *why) {
        char reason[700];
        bool claims = n->batch_claims;
        n->batch_claims = false;
        n->commit_failures++;
        snprintf(reason, sizeof reason, "the central manager cannot write its database: %s; nothing of this was done",
                 why[0] ? why : strerror(-r));
        /* The first of an episode loudly, then now and then. */
        uint64_t k = n->commit_failures;
        if (k == 1 || (k & (k - 1)) == 0)
                glean_log(k == 1 ? LOG_CRIT : LOG_ERR, NULL, NULL, 0,
                          "cannot commit to %s: %s (%" PRIu64 " failed in a row); the changes are undone and the "
                          "requests refused%s; running on",
                          n->k.database, why[0] ? why : strerror(-r), k,
                          claims ? ", the agents reconnect and the claims are relearned" : "");
        nego_net_batch_end(n, reason);
        /* Rebuilt from the database; that may write (charges, requeues):
         * committed at once, and if that fails too, once more. */
        for (int i = 0; claims && i < 3; i++) {
                char w[512];
                nego_claims_reset(n, reason);
                claims = n->in_batch && batch_commit(n, w, sizeof w) < 0;
                if (claims)
                        glean_log(LOG_ERR, NULL, NULL, 0, "cannot commit the claims restored: %s", w);
                nego_net_batch_end(n, claims ? reason : NULL);
                n->batch_claims = false;
        }
}

/* GLEAN_FAULT (tests only): what the tests of restarts cannot hit from
 * outside, a kill -9 between taking a message and committing it. */
static void fault_read(Nego *n) {
        const char *f = getenv("GLEAN_FAULT");
        if (!f || !*f)
                return;
        if (strcmp(f, "kill-before-commit:JobExit") == 0) {
                n->fault = NEGO_FAULT_KILL_BEFORE_COMMIT_JOB_EXIT;
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "GLEAN_FAULT=%s: this daemon kills itself (SIGKILL) before committing the first batch "
                          "that takes a JobExit; for tests only",
                          f);
        } else if (strcmp(f, "kill-after-commit:Submit") == 0) {
                n->fault = NEGO_FAULT_KILL_AFTER_COMMIT_SUBMIT;
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "GLEAN_FAULT=%s: this daemon kills itself (SIGKILL) right after committing the first batch "
                          "that queued a Submit, before answering it; for tests only",
                          f);
        } else
                glean_log(LOG_WARNING, NULL, NULL, 0, "GLEAN_FAULT=%s: no such fault; ignored", f);
}

/* After the iteration's events: commit, then let what they queued go. */
static int on_post(sd_event_source *src, void *userdata) {
        (void) src;
        Nego *n = userdata;
        if (n->in_batch && n->fault_due && n->fault == NEGO_FAULT_KILL_BEFORE_COMMIT_JOB_EXIT) {
                glean_log(LOG_WARNING, NULL, NULL, 0,
                          "GLEAN_FAULT: killed before committing a batch that took a JobExit");
                raise(SIGKILL);
        }
        bool kill_after = n->in_batch && n->fault_due && n->fault == NEGO_FAULT_KILL_AFTER_COMMIT_SUBMIT;
        n->fault_due = false;
        if (n->in_batch) {
                char why[512];
                int r = batch_commit(n, why, sizeof why);
                if (r >= 0 && kill_after) {
                        glean_log(LOG_WARNING, NULL, NULL, 0,
                                  "GLEAN_FAULT: killed after committing a batch that queued a Submit, before its answer");
                        raise(SIGKILL);
                }
                if (r < 0)
                        batch_failed(n, r, why);
                else {
                        if (n->commit_failures > 0)
                                glean_log(LOG_NOTICE, NULL, NULL, 0, "commits to %s succeed again, after %" PRIu64
                                          " that failed", n->k.database, n->commit_failures);
                        n->commit_failures = 0;
                        n->batch_claims = false;
                        nego_net_batch_end(n, NULL);
                }
        }
        nego_net_flush(n);
        return 0;
}

/* ---- timers ---- */

static void arm_cycle(Nego *n, double at) {
        uint64_t usec = at <= 0 ? 1 : (uint64_t) (at * 1e6);
        int r = glean_timer_arm(NULL, &n->cycle_timer, CLOCK_REALTIME, usec, 0, NULL, NULL);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the negotiation cycle's timer: %m");
}

/* A cycle that only hands idle slots to idle jobs preempts nothing, so
 * NEGOTIATOR_MIN_INTERVAL, which keeps the matchmaker from reconsidering
 * the pool too often, need not hold it back: it runs at once, after the
 * batch of this iteration, unless the last cycle was long (then it waits
 * NEGO_SOON_SPACING times that length after it: cycles of a large queue
 * take at most about a tenth of the daemon's time this way). */
void nego_want_cycle(Nego *n) {
        if (n->cycle_soon || n->stopping)
                return;
        double at = n->cycle.at + (double) n->k.min_interval;
        if (at > nego_now() && nego_cycle_could_start(n)) {
                double soon = n->cycle.at + (1 + NEGO_SOON_SPACING) * n->cycle.seconds;
                if (soon < at) {
                        at = soon;
                        n->cycle_soon = true;
                }
        } else if (n->cycle_wanted)
                return;
        n->cycle_wanted = true;
        uint64_t cur = 0;
        sd_event_source_get_time(n->cycle_timer, &cur);
        if ((double) cur / 1e6 > at)
                arm_cycle(n, at);
}

static int on_cycle(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Nego *n = userdata;
        n->cycle_wanted = n->cycle_soon = false;
        nego_cycle_run(n);
        arm_cycle(n, n->cycle.at + (double) n->k.interval);
        status_line(n);
        return 0;
}

static void thousands(uint64_t v, char *buf, size_t len) {
        char digits[32];
        int nd = snprintf(digits, sizeof digits, "%" PRIu64, v);
        size_t k = 0;
        for (int i = 0; i < nd && k + 2 < len; i++) {
                if (i > 0 && (nd - i) % 3 == 0)
                        buf[k++] = ',';
                buf[k++] = digits[i];
        }
        buf[k] = 0;
}

/* STATUS=3 agents, 24 slots: 20 Claimed/Busy, 4 Unclaimed; 1,204 idle jobs; cycle 812: 33 matches in 0.04 s */
static void status_line(Nego *n) {
        char slots[512], idle[32], line[800];
        nego_slots_summary(n, slots, sizeof slots);
        thousands(queue_count(n->queue, JOB_IDLE), idle, sizeof idle);
        int k = snprintf(line, sizeof line, "STATUS=%zu agent%s, %s; %s idle job%s", n->n_agents,
                         n->n_agents == 1 ? "" : "s", slots, idle, strcmp(idle, "1") == 0 ? "" : "s");
        if (n->cycle.number > 0 && k > 0 && (size_t) k < sizeof line)
                snprintf(line + k, sizeof line - (size_t) k, "; cycle %" PRIu64 ": %zu match%s in %.2f s",
                         n->cycle.number, n->cycle.matches, n->cycle.matches == 1 ? "" : "es", n->cycle.seconds);
        sd_notify(0, line);
}

static void on_job_changed(void *userdata, Job *job, JobStatus from, JobStatus to, const char *reason) {
        Nego *n = userdata;
        nego_log_job(to == JOB_HELD ? LOG_NOTICE : LOG_INFO, to == JOB_HELD ? MESSAGE_ID_JOB_HOLD : NULL, job->id,
                     job->submitter, job->slot, NULL, reason, "job %" PRId64 ".%" PRId64 ": %s -> %s (%s)",
                     job->id.cluster, job->id.proc, job_status_name(from), job_status_name(to),
                     reason ? reason : "periodic expression");
        Claim *c = job->claim_id ? nego_claim(n, job->claim_id) : NULL;
        if (c && (to == JOB_HELD || to == JOB_REMOVED))
                nego_claim_vacate(n, c, false, reason ? reason : "periodic expression");
}

static int on_tick(sd_event_source *src, uint64_t usec, void *userdata) {
        Nego *n = userdata;
        double now = nego_now();
        nego_claims_tick(n, now);
        nego_slots_expire(n, now);
        nego_waiters_check(n, now);
        nego_net_tick(n);
        if (now >= n->last_periodic + (double) n->k.periodic_interval) {
                n->last_periodic = now;
                nego_batch_queue(n);
                int r = queue_periodic(n->queue, now, on_job_changed, n);
                if (r < 0)
                        glean_log_errno(LOG_ERR, r, "periodic expressions: %m");
                queue_history_trim(n->queue, now);
                status_line(n);
        }
        int r = glean_timer_arm(NULL, &src, CLOCK_REALTIME, usec + TICK_USEC, 0, NULL, NULL);
        if (r < 0)
                glean_log_errno(LOG_ERR, r, "the central manager's tick: %m");
        return 0;
}

static int on_signal(sd_event_source *src, const struct signalfd_siginfo *si, void *userdata) {
        (void) src;
        Nego *n = userdata;
        if (si->ssi_signo == SIGHUP) {
                sd_notify(0, "RELOADING=1");
                reload(n);
                sd_notify(0, "READY=1");
                status_line(n);
                return 0;
        }
        glean_log(LOG_NOTICE, NULL, NULL, 0, "%s: stopping (the jobs go on running on the agents)",
                  strsignal((int) si->ssi_signo));
        sd_notify(0, "STOPPING=1");
        n->stopping = true;
        sd_event_exit(n->event, 0);
        return 0;
}

/* ---- start and stop ---- */

static int open_state(Nego *n) {
        AcctSettings as;
        AcctGroups *groups = NULL;
        ConfigError err = { 0 };
        char why[512] = "";
        int r = load_settings(n->cfg, &as, &groups, &n->settings);
        if (r < 0)
                return r;
        /* The database's directory (StateDirectory= makes it under systemd). */
        char *dir = strdup(n->k.database), *slash = dir ? strrchr(dir, '/') : NULL;
        if (slash && slash != dir) {
                *slash = 0;
                if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                        glean_log_errno(LOG_WARNING, errno, "cannot create %s: %m", dir);
        }
        free(dir);
        r = acct_open(n->k.database, init_db ? ACCT_OPEN_INIT : 0, queue_schema(), &as, groups, nego_now(),
                      &n->acct, why, sizeof why);
        if (r < 0) {
                acct_settings_clear(&as);
                return glean_log_errno(LOG_ERR, r, "%s", why[0] ? why : "cannot open the accounts: %m");
        }
        QueueSettings qs = { 0 };
        if ((r = queue_settings_from_config(n->cfg, &qs, &err)) < 0)
                return log_config_error(&err, r, "job queue");
        r = queue_open(n->acct, &qs, &n->queue, why, sizeof why);
        if (r < 0) {
                queue_settings_clear(&qs);
                return glean_log_errno(LOG_ERR, r, "cannot open the job queue in %s: %s", n->k.database,
                                       why[0] ? why : strerror(-r));
        }
        if (queue_unfinished_rows(n->queue) > 0)
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "dropped %zu job rows of a submission this daemon had not finished when it stopped "
                          "(never acknowledged: its client sends it again)",
                          queue_unfinished_rows(n->queue));
        return 0;
}

static int setup(Nego *n) {
        int r = load_config(n, &n->cfg);
        if (r < 0)
                return r;
        const char *port_file = n->k.port_file; /* --port-file */
        NegoKnobs k;
        if ((r = knobs_load(n->cfg, port_file, &k)) < 0)
                return r;
        knobs_clear(&n->k);
        n->k = k;
        if ((r = nego_auth_setup(n)) < 0)
                return r;
        if ((r = glean_strmap_new(true, &n->slots)) < 0 || (r = glean_strmap_new(false, &n->claims)) < 0 ||
            (r = glean_strmap_new(false, &n->matching)) < 0 || (r = glean_strmap_new(false, &n->pending)) < 0 ||
            (r = nego_grants_init(n)) < 0)
                return r;
        if ((r = open_state(n)) < 0)
                return r;
        fault_read(n);
        n->started = nego_now();
        n->last_periodic = n->started;

        if ((r = sd_event_add_post(n->event, &n->post, on_post, n)) < 0 ||
            (r = sd_event_source_set_priority(n->post, SD_EVENT_PRIORITY_IDLE)) < 0)
                return glean_log_errno(LOG_ERR, r, "cannot add the post work: %m");
        uint64_t now_usec;
        sd_event_now(n->event, CLOCK_REALTIME, &now_usec);
        if ((r = sd_event_add_time(n->event, &n->tick, CLOCK_REALTIME, now_usec + TICK_USEC, 100000, on_tick, n)) <
                    0 ||
            (r = sd_event_source_set_enabled(n->tick, SD_EVENT_ON)) < 0)
                return glean_log_errno(LOG_ERR, r, "cannot add the timer: %m");
        /* The first cycle once the agents had a moment to advertise. */
        r = sd_event_add_time(n->event, &n->cycle_timer, CLOCK_REALTIME,
                              now_usec + (uint64_t) (n->k.min_interval > 0 ? n->k.min_interval : 1) * 1000000ULL,
                              1, on_cycle, n); /* to the microsecond: a cycle may be due at once */
        if (r < 0)
                return glean_log_errno(LOG_ERR, r, "cannot add the cycle timer: %m");
        n->cycle.at = n->started;
        if ((r = nego_claims_restore(n)) < 0)
                return r;
        return nego_net_start(n);
}

static void teardown(Nego *n) {
        if (n->in_batch && n->exit_code == 0) {
                /* The last iteration's batch: what it queued leaves only committed. */
                char why[512] = "";
                int r = queue_batch_commit(n->queue, why, sizeof why);
                n->in_batch = false;
                if (r < 0) {
                        glean_log(LOG_ERR, NULL, NULL, 0, "cannot commit to %s at the stop: %s", n->k.database,
                                  why[0] ? why : strerror(-r));
                        nego_net_batch_end(n, "the central manager stopped before it could commit this");
                } else {
                        nego_net_batch_end(n, NULL);
                        nego_net_flush(n);
                }
        }
        nego_net_stop(n);
        nego_waiters_free(n);
        nego_parked_free(n); /* not queued: their rows are deleted (or at the next start) */
        if (n->claims && n->pending) /* not when the start failed before they were made */
                nego_claims_free(n);
        if (n->slots)
                nego_slots_free(n);
        glean_strmap_free(n->slots);
        glean_strmap_free(n->claims);
        glean_strmap_free(n->matching);
        glean_strmap_free(n->pending);
        nego_grants_free(n);
        queue_close(n->queue);
        acct_close(n->acct);
        nego_settings_free(n->settings);
        nego_auth_free(n);
        sd_event_source_unref(n->post);
        sd_event_source_unref(n->tick);
        sd_event_source_unref(n->cycle_timer);
        for (size_t i = 0; i < sizeof n->signals / sizeof *n->signals; i++)
                sd_event_source_unref(n->signals[i]);
        knobs_clear(&n->k);
        config_free(n->cfg);
        sd_event_unref(n->event);
}

int main(int argc, char **argv) {
        const char *port_file = NULL, *init = NULL;
        const GleanDaemonOption own[] = { { "port-file", 'p', &port_file, false }, { "init-db", 'I', &init, true } };
        Nego n = { .tcp_fd = -1, .next_conn = 1, .next_request = 1 };
        int r = glean_daemon_args(argc, argv, "glean-negotiator", usage, own, 2, &n.args);
        if (r != 0)
                return r == 1 ? 0 : r == -EINVAL ? 2 : 1;
        init_db = init != NULL;
        if (port_file && !(n.k.port_file = strdup(port_file))) {
                glean_daemon_args_free(&n.args);
                return 1;
        }

        setlocale(LC_NUMERIC, "C");
        glean_daemon_begin("glean-negotiator");
        uint64_t fd_limit = 1024;
        glean_daemon_raise_fd_limit(&fd_limit);
        n.fd_limit = fd_limit > SIZE_MAX ? SIZE_MAX : (size_t) fd_limit;

        r = sd_event_new(&n.event);
        if (r >= 0) {
                sd_event_add_signal(n.event, &n.signals[0], SIGTERM, on_signal, &n);
                sd_event_add_signal(n.event, &n.signals[1], SIGINT, on_signal, &n);
                sd_event_add_signal(n.event, &n.signals[2], SIGHUP, on_signal, &n);
                sd_event_set_watchdog(n.event, true);
                r = setup(&n);
        }
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "cannot start: %s", strerror(-r));
                teardown(&n);
                glean_daemon_args_free(&n.args);
                return 1;
        }
        glean_log(LOG_NOTICE, NULL, NULL, 0,
                  "ready: agents on port %u, users on %s, database %s; %zu jobs in the queue (%zu running)",
                  (unsigned) n.port, n.k.socket_path, n.k.database, queue_size(n.queue),
                  queue_count(n.queue, JOB_RUNNING));
        sd_notify(0, "READY=1");
        status_line(&n);
        r = sd_event_loop(n.event);
        int code = n.exit_code ? n.exit_code : r < 0 ? 1 : 0;
        teardown(&n);
        glean_daemon_args_free(&n.args);
        return code;
}

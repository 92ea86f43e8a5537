/* SPDX-License-Identifier: Apache-2.0 */
/*
 * auth.c — who may connect to the central manager over the network, and
 * as whom (common/secure.h does the proofs):
 *
 *   - the methods: SEC_DEFAULT_AUTHENTICATION_METHODS, or when it is unset
 *     what this machine holds: TOKEN when the signing key file
 *     (SEC_TOKEN_POOL_SIGNING_KEY_FILE, `glean token --init`) exists, the
 *     pool key when POOL_KEY_FILE does (an empty file, or one saying
 *     "none", is none: what the unit hands the service for a credential
 *     that is missing);
 *   - a token's own checks are the handshake's (signature, times, holder);
 *     here, whether it was revoked: TOKEN_REGISTRY (what `glean token
 *     revoke` marks), read at start and again whenever it changes
 *     (inotify on its directory), when the agents whose tokens it revoked
 *     are dropped at once; an agent whose token expires while it is
 *     connected is dropped when it does (a timer at the next expiry);
 *   - the agent's Hello: a token names its machine, and an agent with one
 *     is that machine and no other; an agent of the pool key may not claim
 *     the name of a machine that holds a token (the registry knows them),
 *     so that the pool key, which every machine holds, does not let one of
 *     them pass for another that has moved to tokens.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "common/timer.h"
#include "common/file.h"
#include "common/secret.h"
#include "daemon.h"

/* ---- the registry ---- */

/* Reads TOKEN_REGISTRY again when it is another file or changed since:
 * 0 (unchanged, or read), or -errno with the old contents kept. A missing
 * registry is an empty one. */
static int registry_refresh(Nego *n) {
        struct stat st;
        char why[512] = "";

        if (!n->k.token_registry)
                return 0;
        /* lstat: never through a symbolic link (what it points to would not
         * be the registry's own). */
        if (lstat(n->k.token_registry, &st) < 0) {
                if (errno != ENOENT)
                        return -errno;
                glean_token_registry_clear(&n->registry);
                n->registry_st = (struct stat){ 0 };
                return 0;
        }
        if (S_ISLNK(st.st_mode))
                return -ELOOP;
        if (st.st_dev == n->registry_st.st_dev && st.st_ino == n->registry_st.st_ino &&
            st.st_size == n->registry_st.st_size && st.st_mtim.tv_sec == n->registry_st.st_mtim.tv_sec &&
            st.st_mtim.tv_nsec == n->registry_st.st_mtim.tv_nsec)
                return 0;
        char *text = NULL;
        size_t len = 0;
        int r = glean_read_file(n->k.token_registry, (size_t) 64 << 20, &text, &len);
        if (r < 0)
                return r;
        GleanTokenRegistry reg = { 0 };
        r = glean_token_registry_parse(text, len, n->k.token_registry, &reg, why, sizeof why);
        free(text);
        if (r < 0) {
                glean_log(LOG_ERR, NULL, NULL, 0, "the token registry: %s (the revocations read before still hold)",
                          why);
                return r;
        }
        glean_token_registry_clear(&n->registry);
        n->registry = reg;
        n->registry_st = st;
        return 0;
}

/* The record of a revoked token with id; NULL when it is not revoked. */
static const GleanTokenRecord *revoked(const Nego *n, const uint8_t id[GLEAN_TOKEN_ID_SIZE]) {
        const GleanTokenRecord *rec = glean_token_registry_find(&n->registry, id);

        return rec && rec->revoked ? rec : NULL;
}

/* "token 6f3a9c21 of agent@host was revoked on 2026-12-02 18:00:00 UTC" */
static void token_why(const uint8_t id[GLEAN_TOKEN_ID_SIZE], const char *name, const char *what, int64_t when,
                      char *why, size_t whylen) {
        char hex[2 * GLEAN_TOKEN_ID_SIZE + 1], date[40];
        time_t t = (time_t) when;
        struct tm tm;

        glean_token_id_format(id, hex);
        strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&t, &tm));
        snprintf(why, whylen, "token %.8s of %s %s on %s", hex, name, what, date);
}

static void revoked_why(const GleanTokenRecord *rec, char *why, size_t whylen) {
        token_why(rec->id, rec->name, "was revoked", rec->revoked, why, whylen);
}

/* The handshake's accept(): a token that checked, unless revoked. */
static int accept_token(const GleanToken *t, void *userdata, char *why, size_t whylen) {
        Nego *n = userdata;
        (void) registry_refresh(n); /* also on the watch; a stat is cheap next to a handshake */
        const GleanTokenRecord *rec = revoked(n, t->id);

        if (rec) {
                revoked_why(rec, why, whylen);
                return -EKEYREVOKED;
        }
        return 0;
}

/* Whether some token of the registry, not revoked and not expired, names
 * agent@machine. */
static bool machine_has_token(const Nego *n, const char *machine) {
        int64_t now = (int64_t) time(NULL);

        for (size_t i = 0; i < n->registry.n; i++) {
                const GleanTokenRecord *rec = &n->registry.rec[i];
                const char *at = strchr(rec->name, '@');
                if (!rec->revoked && rec->expires > now && at && strcasecmp(at + 1, machine) == 0)
                        return true;
        }
        return false;
}

static void expired_why(const Conn *c, char *why, size_t whylen) {
        token_why(c->token_id, c->token_name, "expired", c->token_expires, why, whylen);
}

/* Whether connection c's token may no longer be used (revoked, or expired
 * at now), why saying which. */
static bool token_void(const Nego *n, const Conn *c, int64_t now, char *why, size_t whylen) {
        const GleanTokenRecord *rec;
        if (!c->has_token || c->dead)
                return false;
        if ((rec = revoked(n, c->token_id))) {
                revoked_why(rec, why, whylen);
                return true;
        }
        if (c->token_expires <= now) {
                expired_why(c, why, whylen);
                return true;
        }
        return false;
}

static void expiry_arm(Nego *n, int64_t at);

/* Connected agents whose tokens are revoked or expired go, their unclaimed
 * slots with them; the expiry timer is set for the next token to expire. */
static void drop_void(Nego *n) {
        size_t pos = 0;
        const char *key;
        void *value;
        Conn *gone[64];
        char why[64][300];
        size_t k;
        int64_t now = (int64_t) time(NULL), next = 0;

        do {
                k = 0;
                pos = 0;
                next = 0;
                while (k < sizeof gone / sizeof *gone && glean_strmap_next(n->agent_conns, &pos, &key, &value)) {
                        Conn *c = value;
                        if (token_void(n, c, now, why[k], sizeof why[k]))
                                gone[k++] = c;
                        else if (c->has_token && !c->dead && (next == 0 || c->token_expires < next))
                                next = c->token_expires;
                }
                for (size_t i = 0; i < k; i++) {
                        char machine[256];
                        snprintf(machine, sizeof machine, "%s", gone[i]->machine ? gone[i]->machine : "");
                        nego_conn_fail(gone[i], why[i]); /* leaves agent_conns */
                        size_t held = machine[0] ? nego_slots_forget_machine(n, machine, why[i]) : 0;
                        if (held)
                                glean_log(LOG_NOTICE, NULL, NULL, 0,
                                          "%zu claimed slot%s of %s stay%s until %s claim%s end (lease)", held,
                                          held == 1 ? "" : "s", machine, held == 1 ? "s" : "", held == 1 ? "its" : "their",
                                          held == 1 ? "s" : "");
                }
        } while (k == sizeof gone / sizeof *gone);
        expiry_arm(n, next);
}

static int on_expiry(sd_event_source *src, uint64_t usec, void *userdata) {
        (void) src;
        (void) usec;
        Nego *n = userdata;
        n->expiry_at = 0;
        drop_void(n);
        return 0;
}

/* The expiry timer at `at` (s since the epoch; 0: off), or sooner if it
 * is armed for sooner. A token expires at second `at`: the timer fires
 * just after it begins. */
static void expiry_arm(Nego *n, int64_t at) {
        if (at == 0 || (n->expiry_at != 0 && n->expiry_at <= at))
                return;
        uint64_t usec = (uint64_t) at * 1000000ULL + 1000;
        int r = glean_timer_arm(n->event, &n->expiry_timer, CLOCK_REALTIME, usec, 100000, on_expiry, n);
        if (r < 0) {
                glean_log_errno(LOG_WARNING, r, "cannot set the timer of token expiries (%m): an agent whose token "
                                                "expires stays connected until it connects again");
                return;
        }
        n->expiry_at = at;
}

static int on_registry_event(sd_event_source *src, const struct inotify_event *ev, void *userdata) {
        (void) src;
        Nego *n = userdata;
        if (ev->len && strcmp(ev->name, n->registry_base) != 0)
                return 0;
        if (registry_refresh(n) >= 0)
                drop_void(n);
        return 0;
}

/* ---- setup ---- */

/* Whether a key file is there: an empty one, or one that says "none"
 * (glean-negotiator.service's SetCredential= fallback for a key the
 * machine does not have), is not. */
static bool key_present(const char *path) {
        struct stat st;
        char buf[8] = "";
        if (stat(path, &st) < 0 || st.st_size == 0)
                return false;
        if (st.st_size > 5)
                return true;
        FILE *f = fopen(path, "re");
        size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
        if (f)
                fclose(f);
        buf[n] = 0;
        return strcmp(buf, "none") != 0 && strcmp(buf, "none\n") != 0;
}

/* What the configuration asks for, loaded: -errno with the reason logged. */
int nego_auth_setup(Nego *n) {
        ConfigError err = { 0 };
        char why[600] = "";
        unsigned methods = 0;
        int r = config_get_auth_methods(n->cfg, &methods, &err);

        if (r < 0) {
                char *m = config_error_format(&err);
                glean_log(LOG_ERR, NULL, NULL, 0, "%s", m ? m : err.msg);
                free(m);
                return r;
        }
        bool chosen = methods != 0;
        if (!chosen) {
                if (key_present(n->k.signing_key_file))
                        methods |= GLEAN_SECURE_TOKEN;
                if (key_present(n->k.pool_key_file))
                        methods |= GLEAN_SECURE_POOL_KEY;
                if (!methods) {
                        glean_log(LOG_ERR, NULL, NULL, 0,
                                  "no way for agents to authenticate: neither a signing key %s (glean token --init) "
                                  "nor a pool key %s (glean pool-key --new)",
                                  n->k.signing_key_file, n->k.pool_key_file);
                        return -ENOENT;
                }
        }
        if ((methods & GLEAN_SECURE_TOKEN) &&
            (r = glean_signing_key_load(n->k.signing_key_file, &n->signing, why, sizeof why)) < 0)
                return glean_log_errno(LOG_ERR, r, "the signing key: %s", why);
        if ((methods & GLEAN_SECURE_POOL_KEY) &&
            (r = glean_pool_key_load(n->k.pool_key_file, &n->key, why, sizeof why)) < 0)
                return glean_log_errno(LOG_ERR, r, "the pool key: %s", why);
        n->auth = (GleanSecureAuth){ .methods = methods,
                                     .pool_key = &n->key,
                                     .signing = &n->signing,
                                     .accept = accept_token,
                                     .userdata = n };
        if ((r = registry_refresh(n)) < 0)
                return glean_log_errno(LOG_ERR, r, "the token registry %s: %m", n->k.token_registry);
        if (methods & GLEAN_SECURE_TOKEN) {
                char fp[GLEAN_SIGNING_FINGERPRINT_LEN + 8], *copy = strdup(n->k.token_registry), *dir;
                if (!copy || !(n->registry_base = strdup(basename(n->k.token_registry)))) {
                        free(copy);
                        return -ENOMEM;
                }
                dir = dirname(copy);
                r = sd_event_add_inotify(n->event, &n->registry_watch, dir,
                                         IN_CLOSE_WRITE | IN_MOVED_TO | IN_DELETE | IN_ONLYDIR, on_registry_event, n);
                if (r < 0)
                        glean_log_errno(LOG_WARNING, r,
                                        "cannot watch %s for revocations (%m): a revoked agent connected now stays "
                                        "until it connects again",
                                        dir);
                free(copy);
                glean_signing_key_fingerprint(n->signing.pk, fp);
                glean_log(LOG_NOTICE, NULL, NULL, 0, "agents authenticate by %s; the signing key's fingerprint is %s",
                          glean_secure_methods_name(methods), fp);
        } else
                glean_log(LOG_NOTICE, NULL, NULL, 0,
                          "agents authenticate by the pool key alone: every machine holding it can pass for any "
                          "other and for this central manager (glean token --init, then tokens, to end that)");
        return 0;
}

void nego_auth_free(Nego *n) {
        n->registry_watch = sd_event_source_disable_unref(n->registry_watch);
        n->expiry_timer = sd_event_source_disable_unref(n->expiry_timer);
        n->expiry_at = 0;
        free(n->registry_base);
        n->registry_base = NULL;
        glean_token_registry_clear(&n->registry);
        glean_signing_key_clear(&n->signing);
        glean_pool_key_clear(&n->key);
}

/* ---- a connection ---- */

void nego_auth_established(Conn *c) {
        const GleanToken *t = glean_secure_peer_token(c->sec);

        if (!t)
                return;
        c->has_token = true;
        c->token_rights = t->rights;
        memcpy(c->token_id, t->id, sizeof c->token_id);
        snprintf(c->token_name, sizeof c->token_name, "%s", t->name);
        c->token_expires = t->expires;
}

int nego_auth_hello(Conn *c, const char *machine, char *why, size_t whylen) {
        Nego *n = c->nego;

        if (c->has_token) {
                const char *host = strchr(c->token_name, '@') + 1;
                if (strcasecmp(host, machine) != 0) {
                        snprintf(why, whylen, "the agent's token names %s, its Hello the machine %s", host, machine);
                        return -EPERM;
                }
                /* valid at the handshake; the Hello may come after its end */
                if (token_void(n, c, (int64_t) time(NULL), why, whylen))
                        return -EPERM;
                expiry_arm(n, c->token_expires);
                return 0;
        }
        (void) registry_refresh(n);
        if (machine_has_token(n, machine)) {
                snprintf(why, whylen,
                         "%s has a token: it connects with it, not with the pool key (SEC_DEFAULT_AUTHENTICATION_METHODS "
                         "on the agent)",
                         machine);
                return -EPERM;
        }
        return 0;
}

/* ---- ALLOW_* and DENY_* ---- */

/* The levels whose lists the configuration may restrict, and the lists
 * that decide each (its own, its fallbacks): a level none of them is set
 * for stays open, as it is without any list. */
static const struct {
        GleanAuthzLevel level;
        unsigned decided_by; /* bits of GleanAuthzLevel, and DEFAULT_BIT */
} checked[] = {
        { GLEAN_AUTHZ_READ, 1u << GLEAN_AUTHZ_READ },
        { GLEAN_AUTHZ_WRITE, 1u << GLEAN_AUTHZ_WRITE },
        { GLEAN_AUTHZ_ADMINISTRATOR, 1u << GLEAN_AUTHZ_ADMINISTRATOR },
        { GLEAN_AUTHZ_ADVERTISE_STARTD, 1u << GLEAN_AUTHZ_ADVERTISE_STARTD | 1u << GLEAN_AUTHZ_DAEMON },
};
#define DEFAULT_BIT (1u << 31)

/* The level of an ALLOW_/DENY_ knob name (glean_authz_knob), or
 * DEFAULT_BIT for ALLOW_DEFAULT/DENY_DEFAULT, or 0 (OWNER, or not one). */
static unsigned knob_bit(const char *name) {
        int level;
        bool deny;
        const char *sub;

        if (glean_authz_knob(name, &level, &deny, &sub) < 0 || level == GLEAN_AUTHZ_KNOB_OWNER)
                return 0;
        return level == GLEAN_AUTHZ_KNOB_DEFAULT ? DEFAULT_BIT : 1u << level;
}

void nego_authz_clear(NegoKnobs *k) {
        glean_authz_free(k->authz_collector);
        glean_authz_free(k->authz_schedd);
        free(k->full_hostname);
        k->authz_collector = k->authz_schedd = NULL;
        k->full_hostname = NULL;
        k->authz_levels = 0;
}

int nego_authz_load(const Config *cfg, NegoKnobs *k) {
        char **names = NULL, why[900];
        ConfigError err = { 0 };
        int r;

        if ((r = config_get(cfg, "FULL_HOSTNAME", &k->full_hostname, &err)) < 0 && r != -ENOENT)
                return r;
        if ((r = glean_authz_new("COLLECTOR", &k->authz_collector)) < 0 ||
            (r = glean_authz_new("SCHEDD", &k->authz_schedd)) < 0 || (r = config_names(cfg, &names)) < 0)
                return r;
        for (size_t i = 0; names[i]; i++) {
                unsigned bit = knob_bit(names[i]);
                const char *file = NULL, *raw = config_raw(cfg, names[i]);
                int line = 0;
                if (!bit || !raw || config_where(cfg, names[i], &file, &line) < 0 || strcmp(file, "<default>") == 0)
                        continue;
                char *value = NULL, source[300];
                snprintf(source, sizeof source, "%s:%d", file, line);
                if ((r = config_get(cfg, names[i], &value, &err)) < 0) {
                        char *m = config_error_format(&err);
                        glean_log(LOG_ERR, NULL, NULL, 0, "%s: %s", names[i], m ? m : strerror(-r));
                        free(m);
                        break;
                }
                /* HTCondor reads "ALLOW_X =" as not set. */
                const char *text = value[strspn(value, " \t,")] ? value : NULL;
                int rc = glean_authz_set(k->authz_collector, names[i], text, source, why, sizeof why);
                int rs = rc < 0 && rc != -EINVAL ? rc : glean_authz_set(k->authz_schedd, names[i], text, source, why,
                                                                           sizeof why);
                free(value);
                if (rc == -EINVAL && rs == -EINVAL)
                        continue; /* not an authorization knob (ALLOW_SCRIPTS_TO_RUN_AS_EXECUTABLES, ...) */
                if ((rc < 0 && rc != -EINVAL) || (rs < 0 && rs != -EINVAL)) {
                        r = rc < 0 ? rc : rs;
                        glean_log(LOG_ERR, NULL, NULL, 0, "%s", why);
                        break;
                }
                if (rc == GLEAN_AUTHZ_IGNORED && rs == GLEAN_AUTHZ_IGNORED) {
                        glean_log(LOG_WARNING, NULL, NULL, 0, "%s: %s is not used by glean-negotiator: %s", source,
                                  names[i], why);
                        continue;
                }
                bool used = bit == DEFAULT_BIT;
                for (size_t j = 0; j < sizeof checked / sizeof *checked && !used; j++)
                        used = (checked[j].decided_by & bit) != 0;
                if (!used && !(bit & (1u << GLEAN_AUTHZ_DAEMON)))
                        glean_log(LOG_WARNING, NULL, NULL, 0,
                                  "%s: %s restricts nothing here: the central manager has no operation of that "
                                  "level (it checks READ, WRITE, ADMINISTRATOR, DAEMON and ADVERTISE_STARTD)",
                                  source, names[i]);
                k->authz_levels |= bit;
                r = 0;
        }
        config_strv_free(names);
        return r < 0 ? r : 0;
}

/* Whether the configuration restricts level at all. */
static bool restricted(const NegoKnobs *k, GleanAuthzLevel level) {
        for (size_t j = 0; j < sizeof checked / sizeof *checked; j++)
                if (checked[j].level == level)
                        return (k->authz_levels & (checked[j].decided_by | DEFAULT_BIT)) != 0;
        return false;
}

static void log_denied(Conn *c, const char *who, const char *what, const char *why) {
        GleanLogField f[] = { { "GLEAN_USER", who },
                              { "GLEAN_PEER", c->tcp ? c->addr_text : "local" },
                              { "GLEAN_COMMAND", what },
                              { "GLEAN_REASON", why } };
        glean_log(LOG_NOTICE, NULL, f, 4, "refused %s to %s from %s: %s", what, who, c->tcp ? c->addr_text : "this machine",
                  why);
}

int nego_authz_agent(Conn *c, const char *machine, char *why, size_t whylen) {
        const NegoKnobs *k = &c->nego->k;
        char user[GLEAN_TOKEN_NAME_MAX + 64], rule[800] = "";

        if (!restricted(k, GLEAN_AUTHZ_ADVERTISE_STARTD))
                return 0;
        /* A token's name; an agent of the pool key is the pool's, as
         * HTCondor's pool password makes it (condor_pool@UID_DOMAIN). */
        if (c->has_token)
                snprintf(user, sizeof user, "%s", c->token_name);
        else
                snprintf(user, sizeof user, "condor_pool@%s", k->uid_domain);
        GleanAuthzPeer peer = c->authz_peer;
        peer.user = user;
        peer.host = machine;
        if (glean_authz_check(k->authz_collector, GLEAN_AUTHZ_ADVERTISE_STARTD, &peer, rule, sizeof rule) == 0)
                return 0;
        snprintf(why, whylen, "%s may not advertise slots: %s", user, rule);
        log_denied(c, user, "ADVERTISE_STARTD", rule);
        return -EACCES;
}

int nego_authz_user(Conn *c, const char *user, GleanAuthzLevel level, bool *admin, char *why, size_t whylen) {
        const NegoKnobs *k = &c->nego->k;
        char name[300], rule[800] = "";
        GleanAuthzPeer peer = { 0 };

        if (!restricted(k, level) && !(*admin && restricted(k, GLEAN_AUTHZ_ADMINISTRATOR)))
                return 0;
        if (strchr(user, '@'))
                snprintf(name, sizeof name, "%s", user);
        else
                snprintf(name, sizeof name, "%s@%s", user, k->uid_domain);
        if (c->tcp) {
                peer = c->authz_peer; /* relayed by the agent on c: its machine */
                peer.host = c->machine;
        } else {
                peer.local = true;
                peer.host = k->full_hostname;
        }
        peer.user = name;
        if (restricted(k, level) && glean_authz_check(k->authz_schedd, level, &peer, rule, sizeof rule) < 0) {
                snprintf(why, whylen, "%s may not %s here: %s", name, level == GLEAN_AUTHZ_READ ? "read" : "write",
                         rule);
                log_denied(c, name, glean_authz_level_name(level), rule);
                return -EACCES;
        }
        if (*admin && restricted(k, GLEAN_AUTHZ_ADMINISTRATOR) &&
            glean_authz_check(k->authz_schedd, GLEAN_AUTHZ_ADMINISTRATOR, &peer, rule, sizeof rule) < 0) {
                *admin = false; /* a user still, not an administrator */
                GleanLogField f[] = { { "GLEAN_USER", name }, { "GLEAN_REASON", rule } };
                glean_log(LOG_INFO, NULL, f, 2, "%s is no administrator from there: %s", name, rule);
        }
        return 0;
}

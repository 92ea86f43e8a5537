/* SPDX-License-Identifier: Apache-2.0 */
/*
 * token.c — `glean token`: the central manager's signing key and the
 * machine tokens it issues (common/token.h), in the spirit of
 * condor_token_create, condor_token_list and condor_token_revoke.
 *
 *   glean token --init [--force]          on the central manager: the signing key
 *   glean token --fingerprint             the manager's key, to compare by eye
 *   glean token create --machine HOST [--lifetime TIME] [--relay-admins] [--rights LIST] [--output FILE]
 *   glean token list
 *   glean token revoke ID
 *   glean token install FILE [--manager-key FILE]   on the machine
 *
 * The files (knobs): SEC_TOKEN_POOL_SIGNING_KEY_FILE the signing key (the
 * central manager's, root-only), SEC_TOKEN_MANAGER_KEY_FILE its public
 * key (every machine pins it), TOKEN_REGISTRY the tokens issued and
 * revoked, SEC_TOKEN_DIRECTORY where a machine keeps its credential
 * ("machine": its token and its own key, root-only).
 *
 * Exit status: 0; 1 when a file cannot be read or written or a token is
 * refused; 2 for a wrong command line or configuration.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "cli.h"
#include "common/file.h"
#include "common/secret.h"
#include "common/token.h"
#include "config/config.h"

#define VERB "glean token"
#define LIFETIME_MAX (10LL * 366 * 86400)

static void usage(FILE *f) {
        fprintf(f,
                "usage: glean token --init [--force]\n"
                "       glean token --fingerprint\n"
                "       glean token create --machine HOST [--lifetime TIME] [--relay-admins] [--rights LIST]\n"
                "                          [--output FILE]\n"
                "       glean token list\n"
                "       glean token revoke ID\n"
                "       glean token install FILE [--manager-key FILE]\n"
                "\n"
                "Machine identities: the central manager signs a token for each machine.\n"
                "\n"
                "  --init          make the central manager's signing key (SEC_TOKEN_POOL_SIGNING_KEY_FILE)\n"
                "                  and its public key (SEC_TOKEN_MANAGER_KEY_FILE), which every machine pins\n"
                "  --fingerprint   the fingerprint of the manager's public key, to compare by eye\n"
                "  create          a token for agent@HOST (rights: advertise, run, relay; --relay-admins\n"
                "                  adds relaying administrators; --rights names them all, e.g. advertise,run),\n"
                "                  valid TIME (1y; s, m, h, d, y), with a key\n"
                "                  of the machine's own: the credential to copy to it (--output FILE, mode\n"
                "                  0600, or stdout); recorded in TOKEN_REGISTRY\n"
                "  list            the tokens issued: id, machine, rights, expiry, state\n"
                "  revoke ID       revoke a token (its id, or the first 8 or more digits of it)\n"
                "  install FILE    on the machine: check a credential against the manager's key\n"
                "                  (--manager-key FILE, or the one pinned) and keep both\n");
}

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, VERB ": ");
        vfprintf(stderr, fmt, ap);
        fputc('\n', stderr);
        va_end(ap);
        return CLI_EXIT_FAILURE;
}

typedef struct Paths {
        char *signing, *manager, *registry, *directory;
} Paths;

static void paths_clear(Paths *p) {
        free(p->signing);
        free(p->manager);
        free(p->registry);
        free(p->directory);
}

static int load_paths(Paths *p) {
        Config *cfg = NULL;
        ConfigError err = {};
        int r = config_load_default(&cfg, &err);
        if (r >= 0 && (r = config_get(cfg, "SEC_TOKEN_POOL_SIGNING_KEY_FILE", &p->signing, &err)) >= 0 &&
            (r = config_get(cfg, "SEC_TOKEN_MANAGER_KEY_FILE", &p->manager, &err)) >= 0 &&
            (r = config_get(cfg, "TOKEN_REGISTRY", &p->registry, &err)) >= 0)
                r = config_get(cfg, "SEC_TOKEN_DIRECTORY", &p->directory, &err);
        config_free(cfg);
        if (r < 0) {
                cli_config_error("token", &err);
                return CLI_EXIT_USAGE;
        }
        return CLI_EXIT_OK;
}

static char *date_of(int64_t t, char *buf, size_t len) {
        time_t tt = (time_t) t;
        struct tm tm;
        if (!gmtime_r(&tt, &tm) || strftime(buf, len, "%Y-%m-%d %H:%M:%SZ", &tm) == 0)
                snprintf(buf, len, "%" PRId64, t);
        return buf;
}

static int load_signing_key(const Paths *p, GleanSigningKey *ret) {
        char why[512];
        return glean_signing_key_load(p->signing, ret, why, sizeof why) < 0 ? fail("%s", why) : 0;
}

static int load_manager_key(const char *path, uint8_t ret[32]) {
        char why[512];
        return glean_manager_key_load(path, ret, why, sizeof why) < 0 ? fail("%s", why) : 0;
}

static int do_init(const Paths *p, bool force) {
        _cleanup_(glean_signing_key_clear) GleanSigningKey k = {};
        char seed[GLEAN_SEED_TEXT_LEN + 2], pk[GLEAN_PUBLIC_KEY_TEXT_LEN + 2], why[512],
                fp[GLEAN_SIGNING_FINGERPRINT_LEN + 8];
        if (glean_signing_key_generate(&k) < 0)
                return fail("cannot make a key: libsodium cannot be initialised");
        glean_signing_key_seed_format(&k, seed);
        strcat(seed, "\n");
        int r = glean_secret_file_save(p->signing, "signing key", seed, strlen(seed), force, why, sizeof why);
        sodium_memzero(seed, sizeof seed);
        if (r < 0)
                return fail("%s%s", why, r == -EEXIST ? " (--force replaces it: every token it signed stops working)" : "");
        glean_public_key_format(k.pk, pk);
        strcat(pk, "\n");
        r = glean_write_file_replace(p->manager, pk, strlen(pk), 0644);
        if (r < 0)
                return fail("%s: cannot write the public key: %s", p->manager, strerror(-r));
        glean_signing_key_fingerprint(k.pk, fp);
        printf("%s: new signing key; its public key in %s (copy it to every machine)\nfingerprint %s\n", p->signing,
               p->manager, fp);
        return CLI_EXIT_OK;
}

static int do_fingerprint(const Paths *p) {
        uint8_t pk[32];
        char fp[GLEAN_SIGNING_FINGERPRINT_LEN + 8];
        if (load_manager_key(p->manager, pk) != 0)
                return CLI_EXIT_FAILURE;
        glean_signing_key_fingerprint(pk, fp);
        printf("%s: central manager key, fingerprint %s\n", p->manager, fp);
        return CLI_EXIT_OK;
}

/* "90", "90s", "15m", "12h", "30d", "1y" -> seconds; -EINVAL. */
static int parse_lifetime(const char *text, int64_t *ret) {
        char *end = NULL;
        errno = 0;
        long long v = strtoll(text, &end, 10);
        if (errno || end == text || v <= 0)
                return -EINVAL;
        long long unit = !*end || strcmp(end, "s") == 0 ? 1
                         : strcmp(end, "m") == 0          ? 60
                         : strcmp(end, "h") == 0          ? 3600
                         : strcmp(end, "d") == 0          ? 86400
                         : strcmp(end, "y") == 0          ? 365LL * 86400
                                                          : 0;
        if (!unit || v > LIFETIME_MAX / unit)
                return -EINVAL;
        *ret = v * unit;
        return 0;
}

/* The registry, locked (its ".lock" beside it) while *lock_fd is open. */
static int registry_open(const char *path, int *lock_fd, GleanTokenRegistry *ret) {
        _cleanup_free_ char *lock = NULL, *text = NULL;
        char why[512];
        size_t len = 0;
        if (asprintf(&lock, "%s.lock", path) < 0)
                return fail("out of memory");
        int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0)
                return fail("%s: cannot open: %m", lock);
        if (flock(fd, LOCK_EX) < 0) {
                close(fd);
                return fail("%s: cannot lock: %m", lock);
        }
        int r = glean_read_file(path, 64u << 20, &text, &len);
        if (r == -ENOENT) {
                *ret = (GleanTokenRegistry) {};
                *lock_fd = fd;
                return 0;
        }
        if (r >= 0)
                r = glean_token_registry_parse(text, len, path, ret, why, sizeof why);
        else
                snprintf(why, sizeof why, "%s: cannot read: %s", path, strerror(-r));
        if (r < 0) {
                close(fd);
                return fail("%s", why);
        }
        *lock_fd = fd;
        return 0;
}

static int registry_save(const char *path, const GleanTokenRegistry *reg) {
        _cleanup_free_ char *text = glean_token_registry_format(reg);
        if (!text)
                return fail("out of memory");
        int r = glean_write_file_replace(path, text, strlen(text), 0644);
        return r < 0 ? fail("%s: cannot write: %s", path, strerror(-r)) : 0;
}

static int do_create(const Paths *p, const char *host, const char *lifetime, bool relay_admins, const char *rights_text,
                     const char *output) {
        _cleanup_(glean_signing_key_clear) GleanSigningKey signer = {}, holder = {};
        _cleanup_free_ char *token = NULL, *cred = NULL;
        char name[GLEAN_TOKEN_NAME_MAX + 2], why[512], id[2 * GLEAN_TOKEN_ID_SIZE + 1], seed[GLEAN_SEED_TEXT_LEN + 1],
                date[40];
        int64_t life = 365LL * 86400, now = (int64_t) time(NULL);
        GleanToken t;

        if (lifetime && parse_lifetime(lifetime, &life) < 0)
                return cli_usage_error("token", "glean token create --machine HOST [--lifetime TIME]",
                                       "'%s' is not a lifetime (a number and s, m, h, d or y; at most 10 years)",
                                       lifetime),
                       CLI_EXIT_USAGE;
        snprintf(name, sizeof name, "agent@%s", host);
        for (char *c = name; *c; c++)
                if (*c >= 'A' && *c <= 'Z')
                        *c = (char) (*c - 'A' + 'a');
        if (!glean_token_name_valid(name))
                return cli_usage_error("token", "glean token create --machine HOST",
                                       "'%s' is not a host name (letters, digits, '.' and '-')", host),
                       CLI_EXIT_USAGE;
        if (load_signing_key(p, &signer) != 0)
                return CLI_EXIT_FAILURE;
        if (glean_signing_key_generate(&holder) < 0)
                return fail("cannot make the machine's key");
        unsigned rights = GLEAN_RIGHTS_AGENT;
        if (rights_text && glean_token_rights_parse(rights_text, &rights) < 0)
                return cli_usage_error("token", "glean token create --machine HOST --rights LIST",
                                       "'%s' is not a list of rights (advertise, run, relay, relay-admins, "
                                       "separated by ',', each once)",
                                       rights_text),
                       CLI_EXIT_USAGE;
        if (relay_admins)
                rights |= GLEAN_RIGHT_RELAY_ADMINS;
        if (glean_token_issue(&signer, name, rights, now, now + life, holder.pk, &token, &t, why, sizeof why) < 0)
                return fail("%s", why);
        glean_token_id_format(t.id, id);
        glean_signing_key_seed_format(&holder, seed);
        int n = asprintf(&cred, "# glean: the credential of %s (token %s); keep it root-only (mode 0600)\n%s\n%s\n",
                         name, id, token, seed);
        sodium_memzero(seed, sizeof seed);
        if (n < 0)
                return fail("out of memory");

        int lock = -1;
        GleanTokenRegistry reg = {};
        if (registry_open(p->registry, &lock, &reg) != 0)
                return CLI_EXIT_FAILURE;
        int r = glean_token_registry_add(&reg, &t);
        if (r < 0) {
                glean_token_registry_clear(&reg);
                close(lock);
                return fail("%s: %s", p->registry, r == -E2BIG ? "too many tokens" : strerror(-r));
        }
        if (output) {
                r = glean_secret_file_save(output, "credential", cred, strlen(cred), false, why, sizeof why);
                if (r < 0) {
                        glean_token_registry_clear(&reg);
                        close(lock);
                        sodium_memzero(cred, strlen(cred));
                        return fail("%s", why);
                }
        }
        r = registry_save(p->registry, &reg);
        glean_token_registry_clear(&reg);
        close(lock);
        if (r != 0) {
                if (output)
                        (void) unlink(output);
                sodium_memzero(cred, strlen(cred));
                return CLI_EXIT_FAILURE;
        }
        if (output)
                fprintf(stderr, "token %s for %s, valid until %s, in %s: copy it to the machine and run "
                                "'glean token install FILE' there\n",
                        id, name, date_of(now + life, date, sizeof date), output);
        else
                fputs(cred, stdout);
        sodium_memzero(cred, strlen(cred));
        return CLI_EXIT_OK;
}

static int do_list(const Paths *p) {
        int lock = -1;
        GleanTokenRegistry reg = {};
        int64_t now = (int64_t) time(NULL);
        if (registry_open(p->registry, &lock, &reg) != 0)
                return CLI_EXIT_FAILURE;
        close(lock);
        printf("%-32s %-30s %-32s %-20s %s\n", "ID", "MACHINE", "RIGHTS", "EXPIRES", "STATE");
        for (size_t i = 0; i < reg.n; i++) {
                const GleanTokenRecord *t = &reg.rec[i];
                char id[2 * GLEAN_TOKEN_ID_SIZE + 1], rights[64], date[40];
                glean_token_id_format(t->id, id);
                glean_token_rights_format(t->rights, rights, sizeof rights);
                printf("%-32s %-30s %-32s %-20s %s\n", id, t->name, rights, date_of(t->expires, date, sizeof date),
                       t->revoked ? "revoked" : now >= t->expires ? "expired" : "valid");
        }
        glean_token_registry_clear(&reg);
        return CLI_EXIT_OK;
}

static int do_revoke(const Paths *p, const char *which) {
        size_t len = strlen(which);
        int lock = -1;
        GleanTokenRegistry reg = {};
        if (len < 8 || len > 2 * GLEAN_TOKEN_ID_SIZE || strspn(which, "0123456789abcdef") != len)
                return cli_usage_error("token", "glean token revoke ID",
                                       "'%s' is not a token id (8 to 32 lower-case hexadecimal digits)", which),
                       CLI_EXIT_USAGE;
        if (registry_open(p->registry, &lock, &reg) != 0)
                return CLI_EXIT_FAILURE;
        GleanTokenRecord *found = NULL;
        size_t matches = 0;
        for (size_t i = 0; i < reg.n; i++) {
                char id[2 * GLEAN_TOKEN_ID_SIZE + 1];
                glean_token_id_format(reg.rec[i].id, id);
                if (strncmp(id, which, len) == 0) {
                        found = &reg.rec[i];
                        matches++;
                }
        }
        int r = CLI_EXIT_OK;
        char id[2 * GLEAN_TOKEN_ID_SIZE + 1] = "";
        if (found)
                glean_token_id_format(found->id, id);
        if (matches == 0)
                r = fail("no token %s in %s", which, p->registry);
        else if (matches > 1)
                r = fail("%zu tokens begin with %s: give more of the id", matches, which);
        else if (found->revoked)
                printf("token %s of %s was revoked already\n", id, found->name);
        else {
                found->revoked = (int64_t) time(NULL);
                r = registry_save(p->registry, &reg);
                if (r == 0)
                        printf("token %s of %s revoked (recorded in %s)\n", id, found->name, p->registry);
        }
        glean_token_registry_clear(&reg);
        close(lock);
        return r;
}

static int do_install(const Paths *p, const char *file, const char *manager_key) {
        _cleanup_(glean_credential_clear) GleanCredential cred = {};
        char text[2 * GLEAN_TOKEN_TEXT_MAX], why[512], id[2 * GLEAN_TOKEN_ID_SIZE + 1], date[40],
                fp[GLEAN_SIGNING_FINGERPRINT_LEN + 8];
        size_t len = 0;
        uint8_t pk[32];
        const GleanToken *t = &cred.token;
        int r = glean_secret_file_read(file, "credential", NULL, text, sizeof text, &len, why, sizeof why);
        if (r < 0)
                return fail("%s", why);
        r = glean_credential_parse(text, len, &cred, why, sizeof why);
        if (r < 0) {
                sodium_memzero(text, sizeof text);
                return fail("%s: %s", file, why);
        }
        if (load_manager_key(manager_key ? manager_key : p->manager, pk) != 0) {
                sodium_memzero(text, sizeof text);
                return CLI_EXIT_FAILURE;
        }
        r = glean_token_verify(t, pk, (int64_t) time(NULL), why, sizeof why);
        if (r < 0) {
                sodium_memzero(text, sizeof text);
                return fail("%s: %s", file, why);
        }
        _cleanup_free_ char *dest = NULL;
        if (asprintf(&dest, "%s/machine", p->directory) < 0) {
                sodium_memzero(text, sizeof text);
                return fail("out of memory");
        }
        r = glean_secret_file_save(dest, "credential", text, len, true, why, sizeof why);
        sodium_memzero(text, sizeof text);
        if (r < 0)
                return fail("%s", why);
        if (manager_key) {
                char pkt[GLEAN_PUBLIC_KEY_TEXT_LEN + 2];
                glean_public_key_format(pk, pkt);
                strcat(pkt, "\n");
                r = glean_write_file_replace(p->manager, pkt, strlen(pkt), 0644);
                if (r < 0)
                        return fail("%s: cannot pin the central manager's key: %s", p->manager, strerror(-r));
        }
        glean_token_id_format(t->id, id);
        glean_signing_key_fingerprint(pk, fp);
        printf("%s: token %s installed in %s, valid until %s\ncentral manager key %s, fingerprint %s "
               "(compare with 'glean token --fingerprint' there)\n",
               t->name, id, dest, date_of(t->expires, date, sizeof date), p->manager, fp);
        return CLI_EXIT_OK;
}

int cli_verb_token(int argc, char **argv) {
        const char *cmd = NULL, *machine = NULL, *lifetime = NULL, *output = NULL, *manager_key = NULL, *arg = NULL,
                   *rights = NULL;
        bool force = false, relay_admins = false;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                const char **value = strcmp(a, "--machine") == 0    ? &machine
                                     : strcmp(a, "--lifetime") == 0 ? &lifetime
                                     : strcmp(a, "--rights") == 0   ? &rights
                                     : strcmp(a, "--output") == 0 || strcmp(a, "-o") == 0 ? &output
                                     : strcmp(a, "--manager-key") == 0                   ? &manager_key
                                                                                         : NULL;
                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return CLI_EXIT_OK;
                } else if (value) {
                        if (i + 1 >= argc || !*argv[i + 1]) {
                                fprintf(stderr, VERB ": %s needs a value\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        *value = argv[++i];
                } else if (strcmp(a, "--force") == 0)
                        force = true;
                else if (strcmp(a, "--relay-admins") == 0)
                        relay_admins = true;
                else if (!cmd && (strcmp(a, "--init") == 0 || strcmp(a, "--fingerprint") == 0 ||
                                  strcmp(a, "create") == 0 || strcmp(a, "list") == 0 || strcmp(a, "revoke") == 0 ||
                                  strcmp(a, "install") == 0))
                        cmd = a;
                else if (cmd && !arg && a[0] != '-' && (strcmp(cmd, "revoke") == 0 || strcmp(cmd, "install") == 0))
                        arg = a;
                else {
                        fprintf(stderr, VERB ": unexpected '%s'; try 'glean token --help'\n", a);
                        return CLI_EXIT_USAGE;
                }
        }
        bool is_create = cmd && strcmp(cmd, "create") == 0, is_init = cmd && strcmp(cmd, "--init") == 0,
             is_install = cmd && strcmp(cmd, "install") == 0;
        if (!cmd || (force && !is_init) || ((machine || lifetime || relay_admins || rights || output) && !is_create) ||
            (manager_key && !is_install) || (is_create && !machine) ||
            ((strcmp(cmd, "revoke") == 0 || is_install) && !arg)) {
                usage(stderr);
                return CLI_EXIT_USAGE;
        }
        _cleanup_(paths_clear) Paths p = {};
        int r = load_paths(&p);
        if (r != CLI_EXIT_OK)
                return r;
        if (is_init)
                return do_init(&p, force);
        if (strcmp(cmd, "--fingerprint") == 0)
                return do_fingerprint(&p);
        if (is_create)
                return do_create(&p, machine, lifetime, relay_admins, rights, output);
        if (strcmp(cmd, "list") == 0)
                return do_list(&p);
        if (strcmp(cmd, "revoke") == 0)
                return do_revoke(&p, arg);
        return do_install(&p, arg, manager_key);
}

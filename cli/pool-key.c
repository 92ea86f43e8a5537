/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pool-key.c — `glean pool-key`: make the pool key, or check one.
 *
 *   glean pool-key --new [--force] [--file PATH]
 *   glean pool-key --check [--file PATH]
 *
 * PATH is --file, else the configuration's POOL_KEY_FILE (default
 * /etc/glean/pool.key). The file format and the rules a key file must
 * follow are in common/secure.h and README.md. Exit status: 0; 1 when the
 * key cannot be written (it exists and --force was not given, I/O) or
 * --check finds it missing, unsafe or malformed; 2 when the command line
 * or the configuration is wrong.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/secure.h"
#include "config/config.h"

typedef enum Action {
        ACTION_NONE,
        ACTION_NEW,
        ACTION_CHECK,
} Action;

static void usage(FILE *f) {
        fprintf(f,
                "usage: glean pool-key --new [--force] [--file PATH]\n"
                "       glean pool-key --check [--file PATH]\n"
                "\n"
                "Make the pool key, the secret every machine of the pool holds to\n"
                "authenticate the others, or check one. Copy the same file to every\n"
                "machine (mode 0600, owned by root).\n"
                "\n"
                "  --new            write a new random key\n"
                "  --force          with --new: replace an existing key file\n"
                "  --check          check the key file: a regular file, owned by root, mode\n"
                "                   0600 or 0400, 64 hexadecimal digits; print its fingerprint\n"
                "  --file, -f PATH  the key file (default: POOL_KEY_FILE, /etc/glean/pool.key)\n"
                "\n"
                "Exit status: 0; 1 when the key cannot be written or fails the check;\n"
                "2 when the command line or the configuration is wrong.\n");
}

/* POOL_KEY_FILE from the configuration: 0, or the exit status. */
static int configured_path(char **ret) {
        Config *cfg = NULL;
        ConfigError err = {};
        char *path = NULL;
        int r;

        r = config_load_default(&cfg, &err);
        if (r >= 0)
                r = config_get(cfg, "POOL_KEY_FILE", &path, &err);
        config_free(cfg);
        if (r == -ENOMEM) {
                fprintf(stderr, "glean pool-key: out of memory\n");
                return CLI_EXIT_FAILURE;
        }
        if (r < 0) {
                _cleanup_free_ char *msg = config_error_format(&err);
                fprintf(stderr, "glean pool-key: %s\n", msg && *msg ? msg : strerror(-r));
                return CLI_EXIT_USAGE;
        }
        if (!*path) {
                free(path);
                fprintf(stderr, "glean pool-key: POOL_KEY_FILE is empty\n");
                return CLI_EXIT_USAGE;
        }
        *ret = path;
        return CLI_EXIT_OK;
}

static int make_key(const char *path, bool force) {
        _cleanup_(glean_pool_key_clear) GleanPoolKey key = {};
        char why[512], fp[GLEAN_POOL_KEY_FINGERPRINT_LEN + 1];
        int r;

        r = glean_pool_key_generate(&key);
        if (r >= 0)
                r = glean_pool_key_save(path, &key, force, why, sizeof(why));
        else
                snprintf(why, sizeof(why), "cannot make a key: %s", strerror(-r));
        if (r < 0) {
                fprintf(stderr, "glean pool-key: %s%s\n", why, r == -EEXIST ? " (--force replaces it)" : "");
                return CLI_EXIT_FAILURE;
        }
        glean_pool_key_fingerprint(&key, fp);
        printf("%s: new pool key, fingerprint %s\n", path, fp);
        return CLI_EXIT_OK;
}

static int check_key(const char *path) {
        _cleanup_(glean_pool_key_clear) GleanPoolKey key = {};
        char why[512], fp[GLEAN_POOL_KEY_FINGERPRINT_LEN + 1];

        if (glean_pool_key_load(path, &key, why, sizeof(why)) < 0) {
                fprintf(stderr, "glean pool-key: %s\n", why);
                return CLI_EXIT_FAILURE;
        }
        glean_pool_key_fingerprint(&key, fp);
        printf("%s: pool key OK, fingerprint %s\n", path, fp);
        return CLI_EXIT_OK;
}

int cli_verb_pool_key(int argc, char **argv) {
        _cleanup_free_ char *configured = NULL;
        const char *file = NULL;
        Action action = ACTION_NONE;
        bool force = false;
        int r;

        for (int i = 1; i < argc; i++) {
                const char *a = argv[i];
                Action act = strcmp(a, "--new") == 0 ? ACTION_NEW : strcmp(a, "--check") == 0 ? ACTION_CHECK :
                                                                                                   ACTION_NONE;

                if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
                        usage(stdout);
                        return CLI_EXIT_OK;
                } else if (act != ACTION_NONE) {
                        if (action != ACTION_NONE && action != act) {
                                fprintf(stderr, "glean pool-key: --new and --check exclude each other\n");
                                return CLI_EXIT_USAGE;
                        }
                        action = act;
                } else if (strcmp(a, "--force") == 0)
                        force = true;
                else if (strcmp(a, "--file") == 0 || strcmp(a, "-f") == 0) {
                        if (i + 1 >= argc || !*argv[i + 1]) {
                                fprintf(stderr, "glean pool-key: %s needs a file name\n", a);
                                return CLI_EXIT_USAGE;
                        }
                        file = argv[++i];
                } else if (strncmp(a, "--file=", 7) == 0 && a[7])
                        file = a + 7;
                else {
                        fprintf(stderr, "glean pool-key: unknown %s '%s'; try 'glean pool-key --help'\n",
                                a[0] == '-' ? "option" : "argument", a);
                        return CLI_EXIT_USAGE;
                }
        }
        if (action == ACTION_NONE) {
                usage(stderr);
                return CLI_EXIT_USAGE;
        }
        if (force && action != ACTION_NEW) {
                fprintf(stderr, "glean pool-key: --force goes with --new only\n");
                return CLI_EXIT_USAGE;
        }
        if (!file) {
                r = configured_path(&configured);
                if (r != CLI_EXIT_OK)
                        return r;
                file = configured;
        }
        return action == ACTION_NEW ? make_key(file, force) : check_key(file);
}

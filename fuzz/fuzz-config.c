/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz-config — libFuzzer target for the configuration language: the
 * parser (config_load_string), macro expansion of every defined name and
 * of arbitrary text, and every typed getter and daemon lookup.
 *
 * Input: a configuration text (NUL bytes read as newlines), loaded on top
 * of the built-in defaults with include refused (the fuzzer must not read
 * the file system). Checks, each an abort() when broken:
 *
 *   - a failed load leaves the Config exactly as it was (all or nothing)
 *     and says where and why;
 *   - every name has a raw value and an origin, and expands the same way
 *     twice (expansion is a pure function of the Config: $RANDOM_*() are
 *     drawn when a line is read, the ClassAd clock is pinned; only an
 *     input that calls the ClassAd function random() is let off);
 *   - an expanded value is at most 1 MiB; an error fills err.
 *
 * Every name the input defines is looked up in every way, and so are the
 * policy expressions of the defaults (which use many of the others); the
 * rest of the ~250 defaults are left alone, for speed.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

#define FUZZ_MAX_NAMES 4096 /* names looked up per input */
#define FUZZ_TWICE 64       /* names expanded a second time */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static _Noreturn void fail(const char *what, const char *detail) {
        fprintf(stderr, "FUZZ-CONFIG FAILURE: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        abort();
}

/* The Config every input starts from: defaults, read once. */
static const Config *base(void) {
        static Config *cfg;

        if (!cfg && config_new(&cfg) < 0)
                fail("config_new() failed", NULL);
        return cfg;
}

static void check_unchanged(const Config *a, const Config *b) {
        if (a->n_entries != b->n_entries)
                fail("a failed load changed the number of names", NULL);
        for (size_t i = 0; i < a->n_entries; i++) {
                const char *raw = config_raw(b, a->entries[i].name);

                if (!raw || strcmp(raw, a->entries[i].value) != 0)
                        fail("a failed load changed a value", a->entries[i].name);
        }
}

static void check_error(int r, const ConfigError *err, const char *what) {
        char *s;

        if (r >= 0 || r == -ENOENT || r == -ENOMEM)
                return;
        if (!err->msg[0])
                fail("an error without a reason", what);
        s = config_error_format(err);
        if (!s)
                fail("config_error_format() returned NULL", what);
        free(s);
}

/* Does text call the ClassAd function random() (which $EVAL() and its
 * kind evaluate at every lookup, as HTCondor does)? */
static bool calls_random(const char *text) {
        for (const char *p = text; (p = strcasestr(p, "random")); p += 6) {
                const char *q = p + 6;

                while (*q == ' ' || *q == '\t' || *q == '\n')
                        q++;
                if (*q == '(' && (p == text || (p[-1] != '$' && p[-1] != '_')))
                        return true;
        }
        return false;
}

static void lookups(const Config *cfg, const char *name, bool twice) {
        ConfigError err = {};
        ClassAdExpr *e = NULL;
        char *v = NULL, *w = NULL, **list = NULL;
        const char *file = NULL;
        int64_t n;
        double d;
        bool b;
        int line = -1, r;

        if (!config_raw(cfg, name) || config_where(cfg, name, &file, &line) < 0 || !file || line < 0)
                fail("a name without a raw value or an origin", name);

        r = config_get(cfg, name, &v, &err);
        check_error(r, &err, name);
        if (r == -ENOENT)
                fail("config_get() of a defined name gave -ENOENT", name);
        if (r == 0 && strlen(v) > CONFIG_MAX_VALUE)
                fail("an expansion longer than the limit", name);
        if (twice) {
                ConfigError err2 = {};
                int r2 = config_get(cfg, name, &w, &err2);

                if (r2 != r || (r == 0 && strcmp(v, w) != 0))
                        fail("two expansions differ", name);
                free(w);
        }
        free(v);

        err = (ConfigError){};
        check_error(config_get_int(cfg, name, &n, &err), &err, name);
        err = (ConfigError){};
        check_error(config_get_real(cfg, name, &d, &err), &err, name);
        err = (ConfigError){};
        check_error(config_get_bool(cfg, name, &b, &err), &err, name);
        err = (ConfigError){};
        r = config_get_expr(cfg, name, CA_MODE_OLD, &e, &err);
        check_error(r, &err, name);
        classad_expr_free(e);
        err = (ConfigError){};
        r = config_get_list(cfg, name, &list, &err);
        check_error(r, &err, name);
        config_strv_free(list);
        err = (ConfigError){};
        v = NULL;
        r = config_get_slot(cfg, 2, name, &v, &err);
        check_error(r, &err, name);
        free(v);
        err = (ConfigError){};
        v = NULL;
        r = config_get_universe(cfg, name, true, &v, &err);
        check_error(r, &err, name);
        free(v);
}

/* Defined by the input, or one of the policy expressions. */
static bool worth_looking_up(const Config *cfg, const ConfigEntry *e) {
        static const char *const policy[] = {
                "START", "SUSPEND", "CONTINUE", "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE", "IS_OWNER",
                "PERIODIC_CHECKPOINT", "MachineBusy", "LOCAL_CONFIG_DIR",
        };

        if (strcmp(config_entry_file(cfg, e), "<fuzz>") == 0)
                return true;
        for (size_t i = 0; i < sizeof(policy) / sizeof(policy[0]); i++)
                if (strcasecmp(e->name, policy[i]) == 0)
                        return true;
        return false;
}

static const char *lookup_raw(void *userdata, const char *name) {
        return config_raw(userdata, name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        Config *cfg = NULL;
        ConfigError err = {};
        char *text, **names = NULL, **attrs = NULL, *v = NULL;
        size_t count = 0;
        int r;

        text = malloc(size + 1);
        if (!text)
                return 0;
        for (size_t i = 0; i < size; i++)
                text[i] = data[i] ? (char) data[i] : '\n';
        text[size] = '\0';

        classad_set_now(1700000000);
        if (config_copy(base(), &cfg) < 0)
                fail("config_copy() failed", NULL);
        r = config_load_string_flags(cfg, text, "<fuzz>", CONFIG_LOAD_NO_INCLUDE, &err);
        if (r < 0) {
                if (r != -ENOMEM && (!err.msg[0] || strcmp(err.file, "<fuzz>") != 0 || err.line < 0))
                        fail("a load error without file, line or reason", err.msg);
                check_unchanged(base(), cfg);
                goto out;
        }

        if (config_names(cfg, &names) < 0)
                fail("config_names() failed", NULL);
        for (size_t i = 0; i < cfg->n_entries && count < FUZZ_MAX_NAMES; i++)
                if (worth_looking_up(cfg, &cfg->entries[i])) {
                        lookups(cfg, cfg->entries[i].name, count < FUZZ_TWICE && !calls_random(text));
                        count++;
                }

        for (unsigned slot = 0; slot < 3; slot++) {
                err = (ConfigError){};
                r = config_startd_attrs(cfg, slot, &attrs, &err);
                check_error(r, &err, "STARTD_ATTRS");
                config_strv_free(attrs);
                attrs = NULL;
        }

        /* the text itself, as text to expand, against the Config and
         * against a plain lookup function */
        err = (ConfigError){};
        r = config_expand(cfg, text, &v, &err);
        check_error(r, &err, "config_expand");
        free(v);
        v = NULL;
        err = (ConfigError){};
        r = config_expand_with(text, lookup_raw, cfg, &v, &err);
        check_error(r, &err, "config_expand_with");
        free(v);

out:
        config_strv_free(names);
        config_free(cfg);
        free(text);
        return 0;
}

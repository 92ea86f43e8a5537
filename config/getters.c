/* SPDX-License-Identifier: Apache-2.0 */
/*
 * getters.c — the lookups the daemons need: typed values (integer, real,
 * boolean, ClassAd expression, list), SLOT<N>_NAME over NAME, NAME_VANILLA
 * over NAME, and the merged STARTD_ATTRS of a slot.
 *
 * Numbers and booleans are read as HTCondor's param_integer() and friends
 * read them: a literal first, else the value as a ClassAd expression
 * evaluated with no ad (so `15 * $(MINUTE)` is the integer 900).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "config-internal.h"

/* The expanded, trimmed value of name and its entry. */
static int get_value(const Config *cfg, const char *name, char **ret_buf, const char **ret_value,
                     const ConfigEntry **ret_entry, ConfigError *err) {
        const ConfigEntry *e;
        char *v;
        int r;

        if (!cfg || !name)
                return -EINVAL;
        e = config_find(cfg, name);
        if (!e)
                return -ENOENT;
        r = config_get(cfg, name, &v, err);
        if (r < 0)
                return r;
        *ret_buf = v;
        *ret_value = config_strip(v);
        *ret_entry = e;
        return 0;
}

static int type_error(const Config *cfg, const ConfigEntry *e, const char *value, const char *what, ConfigError *err) {
        return config_error(err, config_entry_file(cfg, e), e->line, -EINVAL, "%s = '%.200s' is not %s", e->name,
                            value, what);
}

/* value evaluated as a ClassAd expression with no ad. */
static int eval_value(const char *value, CaValue *ret) {
        ClassAdExpr *e = NULL;
        CaError cerr = {};
        int r;

        r = classad_expr_parse(value, strlen(value), CA_MODE_OLD, &e, &cerr);
        if (r < 0)
                return r;
        r = classad_expr_eval(e, NULL, NULL, CA_MODE_OLD, ret);
        classad_expr_free(e);
        return r;
}

int config_get_int(const Config *cfg, const char *name, int64_t *ret, ConfigError *err) {
        _cleanup_config_free_ char *buf = NULL;
        const ConfigEntry *e;
        const char *value;
        CaValue v = ca_undefined();
        long long n;
        char *end;
        int r;

        r = get_value(cfg, name, &buf, &value, &e, err);
        if (r < 0)
                return r;
        if (!value[0])
                return -ENOENT;
        errno = 0;
        n = strtoll(value, &end, 10);
        if (end != value && !*end && errno == 0) {
                *ret = n;
                return 0;
        }
        if (eval_value(value, &v) >= 0) {
                bool ok = true;

                if (v.type == CA_INT)
                        n = v.u.i;
                else if (v.type == CA_REAL && isfinite(v.u.r) && v.u.r >= -9.2e18 && v.u.r <= 9.2e18)
                        n = (long long) v.u.r;
                else if (v.type == CA_BOOL)
                        n = v.u.b;
                else
                        ok = false;
                ca_value_clear(&v);
                if (ok) {
                        *ret = n;
                        return 0;
                }
        }
        return type_error(cfg, e, value, "an integer", err);
}

int config_get_real(const Config *cfg, const char *name, double *ret, ConfigError *err) {
        _cleanup_config_free_ char *buf = NULL;
        const ConfigEntry *e;
        const char *value;
        CaValue v = ca_undefined();
        char *end;
        double d;
        int r;

        r = get_value(cfg, name, &buf, &value, &e, err);
        if (r < 0)
                return r;
        if (!value[0])
                return -ENOENT;
        d = strtod(value, &end);
        if (end != value && !*end && isfinite(d)) {
                *ret = d;
                return 0;
        }
        if (eval_value(value, &v) >= 0) {
                bool ok = true;

                if (v.type == CA_INT)
                        d = (double) v.u.i;
                else if (v.type == CA_REAL && isfinite(v.u.r))
                        d = v.u.r;
                else
                        ok = false;
                ca_value_clear(&v);
                if (ok) {
                        *ret = d;
                        return 0;
                }
        }
        return type_error(cfg, e, value, "a number", err);
}

int config_get_bool(const Config *cfg, const char *name, bool *ret, ConfigError *err) {
        static const char *const yes[] = { "true", "yes", "t" }, *const no[] = { "false", "no", "f" };
        _cleanup_config_free_ char *buf = NULL;
        const ConfigEntry *e;
        const char *value;
        CaValue v = ca_undefined();
        int r;

        r = get_value(cfg, name, &buf, &value, &e, err);
        if (r < 0)
                return r;
        if (!value[0])
                return -ENOENT;
        for (size_t i = 0; i < 3; i++) {
                if (strcasecmp(value, yes[i]) == 0) {
                        *ret = true;
                        return 0;
                }
                if (strcasecmp(value, no[i]) == 0) {
                        *ret = false;
                        return 0;
                }
        }
        if (eval_value(value, &v) >= 0) {
                bool ok = true, b = false;

                if (v.type == CA_BOOL)
                        b = v.u.b;
                else if (v.type == CA_INT)
                        b = v.u.i != 0;
                else if (v.type == CA_REAL && !isnan(v.u.r))
                        b = v.u.r != 0;
                else
                        ok = false;
                ca_value_clear(&v);
                if (ok) {
                        *ret = b;
                        return 0;
                }
        }
        return type_error(cfg, e, value, "a boolean", err);
}

int config_get_expr(const Config *cfg, const char *name, CaMode mode, ClassAdExpr **ret, ConfigError *err) {
        _cleanup_config_free_ char *buf = NULL;
        const ConfigEntry *e;
        const char *value;
        CaError cerr = {};
        int r;

        r = get_value(cfg, name, &buf, &value, &e, err);
        if (r < 0)
                return r;
        if (!value[0])
                return -ENOENT;
        r = classad_expr_parse(value, strlen(value), mode, ret, &cerr);
        if (r == -ENOMEM)
                return config_error(err, config_entry_file(cfg, e), e->line, r, "out of memory");
        if (r < 0)
                return config_error(err, config_entry_file(cfg, e), e->line, -EINVAL,
                                    "%s = '%.160s' is not a ClassAd expression: column %d: %s", e->name, value,
                                    cerr.column, cerr.msg);
        return 0;
}

int config_get_list(const Config *cfg, const char *name, char ***ret, ConfigError *err) {
        _cleanup_config_free_ char *buf = NULL;
        const ConfigEntry *e;
        const char *value;
        int r;

        r = get_value(cfg, name, &buf, &value, &e, err);
        if (r < 0)
                return r;
        r = config_split_list(value, ret);
        if (r < 0)
                return config_error(err, NULL, 0, r, "out of memory");
        return 0;
}

int config_get_auth_methods(const Config *cfg, unsigned *ret, ConfigError *err) {
        static const struct {
                const char *word;
                unsigned method;
        } known[] = {
                { "TOKEN", CONFIG_AUTH_TOKEN },        { "TOKENS", CONFIG_AUTH_TOKEN },
                { "IDTOKEN", CONFIG_AUTH_TOKEN },      { "IDTOKENS", CONFIG_AUTH_TOKEN },
                { "PASSWORD", CONFIG_AUTH_POOL_KEY },  { "POOL_KEY", CONFIG_AUTH_POOL_KEY },
                { "FS", 0 }, /* local users: always SO_PEERCRED on the unix sockets */
        };
        const char *name = "SEC_DEFAULT_AUTHENTICATION_METHODS";
        _cleanup_config_free_ char *buf = NULL;
        const ConfigEntry *e;
        const char *value;
        char **words = NULL;
        unsigned methods = 0;
        int r;

        r = get_value(cfg, name, &buf, &value, &e, err);
        if (r == -ENOENT || (r >= 0 && !value[strspn(value, " \t,")])) {
                *ret = 0;
                return 0;
        }
        if (r < 0)
                return r;
        const char *file = config_entry_file(cfg, e);
        int line = e->line;
        r = config_split_list(value, &words);
        if (r < 0)
                return config_error(err, NULL, 0, r, "out of memory");
        for (char **w = words; *w; w++) {
                size_t i;
                for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
                        if (strcasecmp(*w, known[i].word) == 0)
                                break;
                if (i == sizeof(known) / sizeof(known[0])) {
                        r = config_error(err, file, line, -EINVAL,
                                         "%s: glean cannot use the authentication method %.64s (it knows TOKEN, "
                                         "also spelt IDTOKENS, PASSWORD, the pool key, and FS)",
                                         name, *w);
                        config_strv_free(words);
                        return r;
                }
                methods |= known[i].method;
        }
        config_strv_free(words);
        if (!methods)
                return config_error(err, file, line, -EINVAL,
                                    "%s = %.160s names no method the pool's connections can use (TOKEN or PASSWORD)",
                                    name, value);
        *ret = methods;
        return 0;
}

/* "SLOT<N>_<name>" */
static int slot_name(unsigned slot, const char *name, char *buf, size_t size) {
        int n = snprintf(buf, size, "SLOT%u_%s", slot, name);

        return n < 0 || (size_t) n >= size ? -ENAMETOOLONG : 0;
}

int config_get_slot(const Config *cfg, unsigned slot, const char *name, char **ret, ConfigError *err) {
        char full[CONFIG_MAX_NAME + 32];

        if (!cfg || !name)
                return -EINVAL;
        if (slot > 0 && slot_name(slot, name, full, sizeof(full)) >= 0 && config_find(cfg, full))
                return config_get(cfg, full, ret, err);
        return config_get(cfg, name, ret, err);
}

int config_get_universe(const Config *cfg, const char *name, bool vanilla, char **ret, ConfigError *err) {
        char full[CONFIG_MAX_NAME + 32];
        int n;

        if (!cfg || !name)
                return -EINVAL;
        n = snprintf(full, sizeof(full), "%s_VANILLA", name);
        if (vanilla && n > 0 && (size_t) n < sizeof(full) && config_find(cfg, full))
                return config_get(cfg, full, ret, err);
        return config_get(cfg, name, ret, err);
}

int config_startd_attrs(const Config *cfg, unsigned slot, char ***ret, ConfigError *err) {
        static const char *const lists[] = { "STARTD_ATTRS", "STARTD_EXPRS" };
        _cleanup_(config_strv_freep) char **out = calloc(1, sizeof(char *));
        size_t n = 0;
        int r;

        if (!cfg || !ret)
                return -EINVAL;
        if (!out)
                return -ENOMEM;
        /* 3.5.10.5: STARTD_ATTRS, STARTD_EXPRS, SLOT<N>_STARTD_ATTRS,
         * SLOT<N>_STARTD_EXPRS, in this order, each name once. */
        for (unsigned pass = 0; pass < (slot > 0 ? 2u : 1u); pass++)
                for (size_t l = 0; l < 2; l++) {
                        _cleanup_(config_strv_freep) char **items = NULL;
                        char full[64];

                        if (pass == 1)
                                (void) slot_name(slot, lists[l], full, sizeof(full));
                        else
                                snprintf(full, sizeof(full), "%s", lists[l]);
                        r = config_get_list(cfg, full, &items, err);
                        if (r == -ENOENT)
                                continue;
                        if (r < 0)
                                return r;
                        for (char **i = items; *i; i++) {
                                r = config_strv_add_unique(&out, &n, *i);
                                if (r < 0)
                                        return r;
                        }
                }
        *ret = out;
        out = NULL;
        return 0;
}

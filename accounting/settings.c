/* SPDX-License-Identifier: Apache-2.0 */
/*
 * settings.c — the accountant's knobs from the configuration.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "common/cleanup.h"

/* A real knob: absent → def; not a number, or below min → -EINVAL. */
static int get_real(const Config *cfg, const char *name, double def, double min, double *ret, ConfigError *err) {
        double v;
        int r = config_get_real(cfg, name, &v, err);

        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        if (r < 0)
                return r;
        if (!isfinite(v) || v < min) {
                const char *file = NULL;
                int line = 0;

                (void) config_where(cfg, name, &file, &line);
                snprintf(err->file, sizeof(err->file), "%s", file ? file : "");
                err->line = line;
                snprintf(err->msg, sizeof(err->msg), "%s: %g is not allowed (at least %g)", name, v, min);
                return -EINVAL;
        }
        *ret = v;
        return 0;
}

static int get_string(const Config *cfg, const char *name, char **ret, ConfigError *err) {
        char *v = NULL;
        int r = config_get(cfg, name, &v, err);

        if (r == -ENOENT)
                v = strdup("");
        else if (r < 0)
                return r;
        if (!v)
                return -ENOMEM;
        *ret = v;
        return 0;
}

int acct_settings_from_config(const Config *cfg, AcctSettings *ret, ConfigError *err) {
        _cleanup_free_ char *local = NULL, *uid_domain = NULL;
        AcctSettings s = {};
        bool weights = true;
        int r;

        if ((r = get_real(cfg, "PRIORITY_HALFLIFE", 86400, 0, &s.halflife, err)) < 0 ||
            (r = get_real(cfg, "DEFAULT_PRIO_FACTOR", 1.0, 1e-300, &s.default_factor, err)) < 0 ||
            (r = get_real(cfg, "NICE_USER_PRIO_FACTOR", 1e7, 1e-300, &s.nice_factor, err)) < 0 ||
            (r = get_real(cfg, "REMOTE_PRIO_FACTOR", 1e7, 1e-300, &s.remote_factor, err)) < 0)
                return r;
        r = config_get_bool(cfg, "NEGOTIATOR_USE_SLOT_WEIGHTS", &weights, err);
        if (r < 0 && r != -ENOENT)
                return r;
        s.use_slot_weights = weights;

        /* ACCOUNTANT_LOCAL_DOMAIN says who is local; unset, the pool's own
         * UID_DOMAIN does (glean's choice: HTCondor then takes everyone
         * as local, which makes REMOTE_PRIO_FACTOR a dead knob). */
        if ((r = get_string(cfg, "ACCOUNTANT_LOCAL_DOMAIN", &local, err)) < 0 ||
            (r = get_string(cfg, "UID_DOMAIN", &uid_domain, err)) < 0)
                return r;
        s.local_domain = *local ? TAKE_PTR(local) : TAKE_PTR(uid_domain);
        *ret = s;
        return 0;
}

void acct_settings_clear(AcctSettings *s) {
        free(s->local_domain);
        *s = (AcctSettings){};
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * unenforced.c — HTCondor's authorization knobs that glean-agent reads but
 * does not enforce (config.h, config_unenforced; the central manager does,
 * negotiator/daemon/auth.c): each one set is named with its file and line,
 * so that an administrator's ALLOW_WRITE is never silently ignored.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/authz.h"
#include "config.h"

/* ALLOW_<level>[_<SUBSYS>] and DENY_..., as the central manager reads them. */
static bool authorization_knob(const char *name) {
        int level;
        bool deny;
        const char *sub;

        return glean_authz_knob(name, &level, &deny, &sub) == 0;
}

int config_unenforced(const Config *cfg, char ***ret) {
        char **names = NULL, **out = NULL;
        size_t n = 0;
        int r = config_names(cfg, &names);
        if (r < 0)
                return r;
        for (size_t i = 0; names[i]; i++) {
                const char *file = NULL, *raw = config_raw(cfg, names[i]);
                int line = 0;
                if (!authorization_knob(names[i]) || !raw || !*raw || config_where(cfg, names[i], &file, &line) < 0)
                        continue;
                char **grown = realloc(out, (n + 2) * sizeof *grown);
                if (!grown) {
                        r = -ENOMEM;
                        break;
                }
                out = grown;
                out[n] = NULL;
                char *msg = NULL;
                if (asprintf(&msg, "%s:%d: %s is not enforced on an execute machine: the central manager "
                                   "enforces ALLOW_ and DENY_ lists, the agent takes claims only from the central "
                                   "manager it pinned (docs/operations.md)",
                             file, line, names[i]) < 0) {
                        r = -ENOMEM;
                        break;
                }
                out[n++] = msg;
                out[n] = NULL;
        }
        config_strv_free(names);
        if (r < 0) {
                config_strv_free(out);
                return r;
        }
        *ret = out;
        return (int) n;
}

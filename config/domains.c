/* SPDX-License-Identifier: Apache-2.0 */
/*
 * domains.c — the file system domain of this machine (FILESYSTEM_DOMAIN),
 * as both ends of a job read it: the submit side puts it into the job ad
 * (FileSystemDomain, which decides whether an IF_NEEDED job transfers),
 * the agent into its slot ads. Undefined or empty, it is the host's full
 * name: FULL_HOSTNAME (which the built-in defaults set to gethostname()),
 * else gethostname() itself, as agent/slots/machine.c finds the hostname.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config-internal.h"

/* name goes into ads as it is: printable, no blanks, quotes or backslashes
 * (what agent/slots/names.c requires of a domain). */
static bool printable_name(const char *s) {
        for (; *s; s++)
                if ((unsigned char) *s <= ' ' || *s == '"' || *s == '\\' || (unsigned char) *s == 0x7f)
                        return false;
        return true;
}

/* The expanded, trimmed knob; *ret NULL when undefined or empty. */
static int knob(const Config *cfg, const char *name, char **ret, ConfigError *err) {
        _cleanup_config_free_ char *v = NULL;
        char *p;
        int r;

        r = config_get(cfg, name, &v, err);
        if (r == -ENOENT) {
                *ret = NULL;
                return 0;
        }
        if (r < 0)
                return r;
        p = config_strip(v);
        if (!*p) {
                *ret = NULL;
                return 0;
        }
        memmove(v, p, strlen(p) + 1);
        *ret = v;
        v = NULL;
        return 0;
}

int config_filesystem_domain(const Config *cfg, char **ret, ConfigError *err) {
        _cleanup_config_free_ char *v = NULL;
        char host[256];
        int r;

        if (!cfg || !ret)
                return -EINVAL;
        r = knob(cfg, "FILESYSTEM_DOMAIN", &v, err);
        if (r >= 0 && !v)
                r = knob(cfg, "FULL_HOSTNAME", &v, err);
        if (r < 0)
                return r;
        if (!v) {
                if (gethostname(host, sizeof(host) - 1) < 0)
                        snprintf(host, sizeof(host), "localhost");
                host[sizeof(host) - 1] = '\0';
                v = strdup(host);
                if (!v)
                        return -ENOMEM;
        }
        if (!printable_name(v)) {
                const char *file = "";
                int line = 0;

                (void) config_where(cfg, "FILESYSTEM_DOMAIN", &file, &line);
                return config_error(err, file, line, -EINVAL,
                                    "FILESYSTEM_DOMAIN = '%s' has a blank, a quote or a backslash", v);
        }
        *ret = v;
        v = NULL;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-scope.c — where the jobs go when the agent runs as a systemd
 * service: the transient scope unit that holds its slots (the decision
 * only, from text; cgroup-systemd.c talks to systemd). Pure: no file,
 * no bus.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cgroup.h"

static bool ends_with(const char *s, size_t n, const char *suffix) {
        size_t k = strlen(suffix);

        return n > k && memcmp(s + n - k, suffix, k) == 0;
}

/* A unit name systemd takes: [A-Za-z0-9:_.\-@], at most 255, the suffix. */
static bool unit_name_ok(const char *name, const char *suffix) {
        size_t n = strlen(name);

        if (n == 0 || n > 255 || !ends_with(name, n, suffix) || name[0] == '.' || name[0] == '-')
                return false;
        for (const char *c = name; *c; c++)
                if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                      strchr(":_.-@\\", *c)))
                        return false;
        return true;
}

int cg_scope_plan(const char *own, const char *knob, CgScopePlan *ret) {
        const char *last, *slash;
        size_t n, parent_len, k;
        CgScopePlan p = { 0 };
        int w;

        if (!own || own[0] != '/')
                return -EINVAL;
        n = strlen(own);
        while (n > 1 && own[n - 1] == '/')
                n--;
        slash = own + n;
        while (slash > own && slash[-1] != '/')
                slash--;
        last = slash; /* the last component, n - (last - own) long */
        k = n - (size_t) (last - own);
        if (k == 0 || !ends_with(last, k, ".service") || k >= sizeof(p.service))
                return -ENOMEDIUM;
        memcpy(p.service, last, k);
        p.service[k] = '\0';
        if (!unit_name_ok(p.service, ".service"))
                return -ENOMEDIUM;

        /* The slice: the component above, "-.slice" at the root. */
        parent_len = (size_t) (last - own) - 1; /* without the '/' before the service */
        if (parent_len == 0)
                snprintf(p.slice, sizeof(p.slice), "-.slice");
        else {
                const char *s = own + parent_len;

                while (s > own && s[-1] != '/')
                        s--;
                k = parent_len - (size_t) (s - own);
                if (!ends_with(s, k, ".slice") || k >= sizeof(p.slice))
                        return -ENOMEDIUM;
                memcpy(p.slice, s, k);
                p.slice[k] = '\0';
        }

        if (!knob || strcmp(knob, "auto") == 0) {
                k = strlen(p.service) - strlen(".service");
                w = snprintf(p.name, sizeof(p.name), "%.*s-jobs.scope", (int) k, p.service);
                if (w < 0 || (size_t) w >= sizeof(p.name) || strlen(p.name) > 255)
                        return -ENAMETOOLONG;
        } else {
                if (strlen(knob) >= sizeof(p.name))
                        return -EINVAL;
                snprintf(p.name, sizeof(p.name), "%s", knob);
        }
        if (!unit_name_ok(p.name, ".scope"))
                return -EINVAL;

        w = snprintf(p.cgroup, sizeof(p.cgroup), "%.*s/%s", (int) parent_len, own, p.name);
        if (w < 0 || (size_t) w >= sizeof(p.cgroup))
                return -ENAMETOOLONG;
        *ret = p;
        return 0;
}

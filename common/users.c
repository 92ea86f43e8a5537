/* SPDX-License-Identifier: Apache-2.0 */
/*
 * users.c — user and group database lookups with buffers that grow as
 * needed (see users.h).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "users.h"

#define NSS_BUF_MAX (1024 * 1024)
#define GROUPS_MAX 65536

typedef enum NssLookup {
        NSS_PWUID,
        NSS_PWNAM,
        NSS_GRNAM,
} NssLookup;

/* getpwuid_r / getpwnam_r / getgrnam_r (by uid or name, into ent) with a
 * growing *buf: 1 found, 0 not. */
static int nss_lookup(NssLookup what, uid_t uid, const char *name, void *ent, char **buf) {
        for (size_t n = 1024; n <= NSS_BUF_MAX; n *= 2) {
                struct passwd *pw = NULL;
                struct group *gr = NULL;
                char *b = realloc(*buf, n);
                int e;

                if (!b)
                        return -ENOMEM;
                *buf = b;
                if (what == NSS_PWUID)
                        e = getpwuid_r(uid, ent, b, n, &pw);
                else if (what == NSS_PWNAM)
                        e = getpwnam_r(name, ent, b, n, &pw);
                else
                        e = getgrnam_r(name, ent, b, n, &gr);
                if (e != ERANGE)
                        return pw || gr ? 1 : 0;
        }
        return 0;
}

int glean_getpwuid(uid_t uid, struct passwd *pw, char **buf) {
        return nss_lookup(NSS_PWUID, uid, NULL, pw, buf);
}

int glean_getpwnam(const char *name, struct passwd *pw, char **buf) {
        return nss_lookup(NSS_PWNAM, 0, name, pw, buf);
}

int glean_getgrnam(const char *name, struct group *gr, char **buf) {
        return nss_lookup(NSS_GRNAM, 0, name, gr, buf);
}

int glean_getgrouplist(const char *user, gid_t gid, gid_t **ret, size_t *ret_n) {
        gid_t *groups = NULL;
        int n = 32;

        for (;;) {
                gid_t *g = realloc(groups, (size_t) n * sizeof(gid_t));
                int got = n;

                if (!g) {
                        free(groups);
                        return -ENOMEM;
                }
                groups = g;
                if (getgrouplist(user, gid, groups, &got) >= 0) {
                        *ret = groups;
                        *ret_n = (size_t) got;
                        return 0;
                }
                n = got > n ? got : n * 2; /* got: the number needed */
                if (n > GROUPS_MAX) {
                        free(groups);
                        return -E2BIG;
                }
        }
}

/* Whether name is a member of the group called group, by name. */
static bool name_in_group(const char *name, const char *group) {
        char *gbuf = NULL, *pbuf = NULL;
        struct group gr;
        struct passwd pw;
        bool yes = false;

        if (glean_getgrnam(group, &gr, &gbuf) > 0) {
                for (char **m = gr.gr_mem; m && *m && !yes; m++)
                        yes = strcmp(*m, name) == 0;
                if (!yes && glean_getpwnam(name, &pw, &pbuf) > 0)
                        yes = pw.pw_gid == gr.gr_gid;
        }
        free(gbuf);
        free(pbuf);
        return yes;
}

bool glean_name_is_admin(const char *name, char *const *administrators) {
        if (!name || !*name || !administrators)
                return false;
        for (char *const *a = administrators; *a; a++) {
                const char *entry = *a;
                if (entry[0] == '%') {
                        if (entry[1] && name_in_group(name, entry + 1))
                                return true;
                } else if (strcmp(entry, name) == 0)
                        return true;
        }
        return false;
}

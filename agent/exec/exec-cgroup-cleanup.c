/* SPDX-License-Identifier: Apache-2.0 */
/*
 * exec-cgroup-cleanup.c — the job cgroups nobody adopts
 * (agent_exec_cleanup): whatever is in one is killed (cgroup.kill, thawed
 * too), the cgroup drained (blocking, bounded) and removed; and the check
 * both this and adoption make that a job cgroup exists, never creating it.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroup.h"
#include "exec-internal.h"
#include "log.h"

/* How long to wait for a leftover cgroup to empty, and how often the kill
 * is repeated meanwhile (a process being forked). */
#define CLEANUP_TIMEOUT_MS 2000
#define CLEANUP_POLL_MS 10
#define CLEANUP_REKILL_MS 100

int exec_cgroup_exists(CgRoot *root, const char *rel) {
        struct stat st;
        char *abs = NULL;
        int r;

        if (!rel || !*rel || rel[0] == '/')
                return -EINVAL;
        for (const char *c = rel; c; c = strchr(c, '/') ? strchr(c, '/') + 1 : NULL) {
                size_t n = strcspn(c, "/");

                if ((n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.'))
                        return -EINVAL;
        }
        if (asprintf(&abs, "%s/slots/%s", cg_root_path(root), rel) < 0)
                return -ENOMEM;
        r = lstat(abs, &st) < 0 ? (errno == ENOENT ? 0 : -errno) : S_ISDIR(st.st_mode) ? 1 : -ENOTDIR;
        free(abs);
        return r;
}

int agent_exec_cleanup(CgRoot *root, const char *cgroup_path, char *why, size_t whylen) {
        char dummy[8];
        bool populated = true;
        pid_t *pids = NULL;
        size_t found = 0;
        Cg *cg = NULL;
        int r;

        if (!why || whylen == 0) {
                why = dummy;
                whylen = sizeof(dummy);
        }
        why[0] = '\0';
        if (!root || !cgroup_path)
                return -EINVAL;
        r = exec_cgroup_exists(root, cgroup_path);
        if (r == 0)
                return 0;
        if (r < 0) {
                snprintf(why, whylen, "cannot look for the cgroup %s: %s", cgroup_path, strerror(-r));
                return r;
        }
        r = cg_open(root, cgroup_path, &cg, why, whylen);
        if (r < 0)
                return r;
        r = cg_pids(cg, &pids, &found);
        free(pids);
        if (r < 0) {
                snprintf(why, whylen, "cannot list the processes of %s: %s", cg_path(cg), strerror(-r));
                goto out;
        }
        r = cg_events(cg, &populated, NULL);
        if (r == -ENODEV)
                populated = found > 0;
        else if (r < 0) {
                snprintf(why, whylen, "cannot read %s/cgroup.events: %s", cg_path(cg), strerror(-r));
                goto out;
        }
        if (populated) {
                r = cg_kill(cg);
                if (r < 0 && r != -EBUSY)
                        glean_log_warning("cannot kill the processes of %s: %s", cg_path(cg), strerror(-r));
                (void) cg_freeze(cg, false); /* a frozen one dies as well, but leave nothing frozen */
                for (int waited = 0; populated && waited < CLEANUP_TIMEOUT_MS; waited += CLEANUP_POLL_MS) {
                        usleep(CLEANUP_POLL_MS * 1000);
                        if (waited % CLEANUP_REKILL_MS == CLEANUP_REKILL_MS - CLEANUP_POLL_MS)
                                (void) cg_kill(cg);
                        if (cg_events(cg, &populated, NULL) < 0) {
                                size_t n = 0;

                                if (cg_pids(cg, &pids, &n) >= 0)
                                        populated = n > 0;
                                free(pids);
                                pids = NULL;
                        }
                }
                if (populated) {
                        r = -EBUSY;
                        snprintf(why, whylen, "the cgroup %s (%zu process%s) would not empty within %d s", cg_path(cg),
                                 found, found == 1 ? "" : "es", CLEANUP_TIMEOUT_MS / 1000);
                        goto out;
                }
        }
        r = cg_remove(cg);
        if (r < 0) {
                snprintf(why, whylen, "cannot remove the cgroup %s: %s", cg_path(cg), strerror(-r));
                goto out;
        }
        r = found > INT_MAX ? INT_MAX : (int) found;
out:
        cg_free(cg);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * backoff.c — jobs whose start failed for a reason that may pass (the
 * agent refused ActivateClaim without a HoldReasonCode: a fork refused
 * with EAGAIN, memory, a cgroup not made, its policy): left out of the
 * cycles for START_BACKOFF_MIN seconds, doubling with each failure up to
 * START_BACKOFF_MAX, forgotten once the job starts (or that long after
 * its last failure). By "C.P".
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "daemon.h"

#define START_BACKOFF_MIN 5.0   /* seconds a job whose start failed is left out of cycles, */
#define START_BACKOFF_MAX 300.0 /* doubling with each failure up to this */

typedef struct StartBackoff {
        char key[48];           /* "C.P": the map's key (the map keeps the pointer) */
        double until, wait;
} StartBackoff;

bool nego_job_backing_off(Nego *n, JobId id) {
        if (!n->backoff || glean_strmap_size(n->backoff) == 0)
                return false;
        char key[48];
        snprintf(key, sizeof key, "%" PRId64 ".%" PRId64, id.cluster, id.proc);
        StartBackoff *b = glean_strmap_get(n->backoff, key);
        return b && nego_now() < b->until;
}

void nego_backoffs_tick(Nego *n, double now) {
        if (!n->backoff)
                return;
        const char *key;
        void *v;
        for (size_t pos = 0; glean_strmap_next(n->backoff, &pos, &key, &v);) {
                StartBackoff *b = v;
                if (now > b->until + START_BACKOFF_MAX) {
                        free(glean_strmap_remove(n->backoff, key));
                        pos = 0; /* the map changed */
                }
        }
}

double nego_backoff_job(Nego *n, const char *jobkey) {
        if (!n->backoff && glean_strmap_new(false, &n->backoff) < 0)
                return 0;
        StartBackoff *b = glean_strmap_get(n->backoff, jobkey);
        if (!b) {
                b = calloc(1, sizeof *b);
                if (b)
                        snprintf(b->key, sizeof b->key, "%s", jobkey);
                if (!b || glean_strmap_put(n->backoff, b->key, b) < 0) {
                        free(b);
                        return 0;
                }
        }
        b->wait = b->wait <= 0 ? START_BACKOFF_MIN : b->wait * 2 > START_BACKOFF_MAX ? START_BACKOFF_MAX : b->wait * 2;
        b->until = nego_now() + b->wait;
        return b->wait;
}

void nego_backoff_forget(Nego *n, const char *jobkey) {
        if (n->backoff)
                free(glean_strmap_remove(n->backoff, jobkey));
}

void nego_backoffs_free(Nego *n) {
        size_t pos = 0;
        const char *key;
        void *v;
        while (n->backoff && glean_strmap_next(n->backoff, &pos, &key, &v))
                free(v);
        glean_strmap_free(n->backoff);
        n->backoff = NULL;
}

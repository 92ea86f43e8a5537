/* SPDX-License-Identifier: Apache-2.0 */
/*
 * queue-limits.c — HTCondor's schedd knobs of the running jobs and of
 * the history file, as the queue in the central manager's database has
 * them (queue.h):
 *
 *   MAX_JOBS_RUNNING        the jobs with a claim at once (condor_schedd's
 *                           running shadows): queue_run_room; 0 starts none
 *                           (how an administrator drains the queue);
 *   HISTORY                 where condor_schedd writes its history file. glean
 *                           keeps the history in its database: "" turns it
 *                           off as in HTCondor, a path keeps it on (the file
 *                           is not written: jobcmd_config_warnings says so);
 *   MAX_HISTORY_LOG,        the size of that file and how many rotated
 *   MAX_HISTORY_ROTATIONS,  copies are kept (at least 1), when
 *   ENABLE_HISTORY_ROTATION rotation is on: the history keeps at most
 *                           MAX_HISTORY_LOG x (MAX_HISTORY_ROTATIONS + 1)
 *                           bytes of ads, oldest forgotten first
 *                           (queue_history_trim); rotation off: no bound.
 *
 * The history's bytes are the ads' text as stored, counted once (at the
 * first trim after the open or after a rollback) and then kept up with the
 * writes and the trims of each transaction.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "queue-internal.h"

#define DEFAULT_MAX_HISTORY_LOG (20 * 1024 * 1024) /* HTCondor's */
#define DEFAULT_MAX_HISTORY_ROTATIONS 2

int queue_knob_count(const Config *cfg, const char *name, int64_t def, int64_t *ret, ConfigError *err) {
        int r = config_get_int(cfg, name, ret, err);

        if (r == -ENOENT) {
                *ret = def;
                return 0;
        }
        if (r < 0)
                return r;
        if (*ret < 0) {
                const char *file = NULL;
                int line = 0;
                *err = (ConfigError) { 0 };
                if (config_where(cfg, name, &file, &line) >= 0 && file) {
                        snprintf(err->file, sizeof err->file, "%s", file);
                        err->line = line;
                }
                snprintf(err->msg, sizeof(err->msg), "%s = %" PRId64 ": must be 0 or more", name, *ret);
                return -EINVAL;
        }
        return 0;
}

int queue_limits_from_config(const Config *cfg, QueueSettings *s, ConfigError *err) {
        int64_t log_size, rotations;
        bool rotate = true;
        char *history = NULL;
        int r;

        /* MAX_JOBS_RUNNING: 0 or less, none starts (condor_schedd). */
        r = config_get_int(cfg, "MAX_JOBS_RUNNING", &s->max_jobs_running, err);
        if (r < 0 && r != -ENOENT)
                return r;
        s->limit_running = r >= 0;
        if (!s->limit_running || s->max_jobs_running < 0)
                s->max_jobs_running = 0;
        /* HISTORY undefined: glean's default (kept); defined empty: off. */
        r = config_get(cfg, "HISTORY", &history, err);
        if (r < 0 && r != -ENOENT)
                return r;
        s->history_off = r >= 0 && history[strspn(history, " \t")] == '\0';
        free(history);
        if ((r = queue_knob_count(cfg, "MAX_HISTORY_LOG", DEFAULT_MAX_HISTORY_LOG, &log_size, err)) < 0 ||
            (r = queue_knob_count(cfg, "MAX_HISTORY_ROTATIONS", DEFAULT_MAX_HISTORY_ROTATIONS, &rotations, err)) < 0)
                return r;
        r = config_get_bool(cfg, "ENABLE_HISTORY_ROTATION", &rotate, err);
        if (r == -ENOENT)
                rotate = true, r = 0;
        if (r < 0)
                return r;
        if (rotations < 1)
                rotations = 1; /* HTCondor's minimum */
        s->history_max_bytes = 0;
        if (rotate && log_size > 0)
                s->history_max_bytes = log_size > INT64_MAX / (rotations + 1) || rotations >= INT64_MAX - 1
                                               ? INT64_MAX
                                               : log_size * (rotations + 1);
        return 0;
}

/* ---- MAX_JOBS_RUNNING ---- */

size_t queue_claimed(const JobQueue *q) {
        return glean_strmap_size(q->claims);
}

size_t queue_run_room(const JobQueue *q, size_t on_the_way) {
        size_t busy = queue_claimed(q) + on_the_way;

        if (!q->settings.limit_running)
                return SIZE_MAX;
        if ((uint64_t) q->settings.max_jobs_running <= busy)
                return 0;
        return (size_t) ((uint64_t) q->settings.max_jobs_running - busy);
}

/* ---- the history's bytes ---- */

void qhistory_bytes_tx_end(JobQueue *q, bool committed) {
        if (committed)
                q->history_bytes += q->history_bytes_pending;
        else
                q->history_bytes_known = false;
        q->history_bytes_pending = 0;
}

int qhistory_bytes(JobQueue *q, int64_t *ret) {
        sqlite3_stmt *st = NULL;
        int64_t n = 0;
        int rc;

        if (!q->db) {
                *ret = 0;
                return 0;
        }
        if (!q->history_bytes_known) {
                rc = sqlite3_prepare_v2(q->db, "SELECT coalesce(sum(length(CAST(ad AS BLOB))), 0) FROM queue_history",
                                        -1, &st, NULL);
                if (rc != SQLITE_OK)
                        return -EIO;
                rc = sqlite3_step(st);
                if (rc == SQLITE_ROW)
                        n = sqlite3_column_int64(st, 0);
                sqlite3_finalize(st);
                if (rc != SQLITE_ROW)
                        return -EIO;
                /* What the open transaction did is in the rows already. */
                q->history_bytes = n - q->history_bytes_pending;
                q->history_bytes_known = true;
        }
        *ret = q->history_bytes + q->history_bytes_pending;
        return 0;
}

int64_t queue_history_bytes(JobQueue *q) {
        int64_t n = 0;
        return qhistory_bytes(q, &n) < 0 ? -1 : n;
}

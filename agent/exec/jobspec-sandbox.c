/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobspec-sandbox.c — the spec of a run whose files travel
 * (agent/transfer.h): the job runs in its sandbox, with its program and
 * standard files there under their last components; a run that does not
 * transfer keeps the spec agent_jobspec_from_ad() built.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transfer.h"
#include "xfer/xfer.h" /* XFER_STDOUT_NAME, XFER_STDERR_NAME */

static bool ad_bool(const ClassAd *job, const char *attr, bool def) {
        bool b;
        return classad_eval_bool(job, attr, CA_MODE_OLD, &b) >= 0 ? b : def;
}

/* *path (absolute, or NULL) replaced by <sandbox>/<name>, name NULL: its
 * last component. */
static int into_sandbox(char **path, const char *sandbox, const char *name, const char *what, char *why,
                        size_t whylen) {
        if (!*path)
                return 0;
        const char *base = strrchr(*path, '/');
        base = name ? name : base ? base + 1 : *path;
        if (!*base || strcmp(base, ".") == 0 || strcmp(base, "..") == 0) {
                if (why && whylen)
                        snprintf(why, whylen, "%s '%s' names no file to transfer", what, *path);
                return -EINVAL;
        }
        char *s = NULL;
        if (asprintf(&s, "%s/%s", sandbox, base) < 0)
                return -ENOMEM;
        free(*path);
        *path = s;
        return 0;
}

int agent_jobspec_sandbox(AgentJobSpec *spec, const ClassAd *job, char *why, size_t whylen) {
        if (!spec || !spec->scratch || spec->scratch[0] != '/' || !spec->argv || !spec->argv[0])
                return -EINVAL;
        char *iwd = strdup(spec->scratch);
        if (!iwd)
                return -ENOMEM;
        int r = 0;
        if (ad_bool(job, "TransferExecutable", true))
                r = into_sandbox(&spec->argv[0], spec->scratch, NULL, "Cmd", why, whylen);
        if (r >= 0 && ad_bool(job, "TransferIn", true))
                r = into_sandbox(&spec->in, spec->scratch, NULL, "In", why, whylen);
        /* HTCondor's names, which the engine sends back to Out and Err */
        if (r >= 0 && ad_bool(job, "TransferOut", true))
                r = into_sandbox(&spec->out, spec->scratch, XFER_STDOUT_NAME, "Out", why, whylen);
        if (r >= 0 && ad_bool(job, "TransferErr", true))
                r = into_sandbox(&spec->err, spec->scratch, XFER_STDERR_NAME, "Err", why, whylen);
        if (r < 0) {
                free(iwd);
                return r;
        }
        free(spec->iwd);
        spec->iwd = iwd;
        spec->scratch_kept = true;
        return 0;
}

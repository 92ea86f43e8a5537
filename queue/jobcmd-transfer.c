/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd-transfer.c — what a submit that carries files needs from the
 * requester (docs/transfer.md): its files are served, and its event log
 * written, by the agent that relayed the submit (the job's
 * SubmitMachine). On the central manager's own socket there is none: a
 * job that always transfers (ShouldTransferFiles = "YES") is refused, one
 * that names a UserLog is taken with a warning that its log will not be
 * written. A proc's attribute overrides its cluster's, as in the queue.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "jobcmd-internal.h"

/* The string attribute name of the proc over its cluster (NULL: none). */
static char *proc_string(const ClassAd *cluster, const ClassAd *proc, const char *name) {
        char *v = NULL;
        if (proc && classad_has(proc, name))
                return classad_eval_string(proc, name, JOBCMD_MODE, &v) >= 0 ? v : NULL;
        return cluster && classad_eval_string(cluster, name, JOBCMD_MODE, &v) >= 0 ? v : NULL;
}

int jobcmd_transfer_check_part(const QueueRequester *who, const ClassAd *cluster, ClassAd *const *procs, size_t n,
                               char *why, size_t whylen) {
        bool log = false;

        if (who && who->machine)
                return 0; /* an agent relayed it: it serves the files and writes the log */
        for (size_t i = 0; i < (n ? n : 1); i++) {
                const ClassAd *p = n ? procs[i] : NULL;
                _cleanup_free_ char *stf = proc_string(cluster, p, "ShouldTransferFiles");
                _cleanup_free_ char *ulog = proc_string(cluster, p, "UserLog");
                if (stf && strcasecmp(stf, "YES") == 0)
                        return glean_why(-EPERM, why, whylen,
                                         "should_transfer_files = YES needs the submit to come through the glean-agent "
                                         "of the submit machine, which serves the job's files; this one came on the "
                                         "central manager's own socket, where no agent does (glean submit -spool is "
                                         "not done yet)");
                if (ulog && *ulog)
                        log = true;
        }
        if (log)
                return glean_why(1, why, whylen,
                                 "the job's event log (log = ...) will not be written: no agent relayed the submit "
                                 "(submit through the glean-agent of the submit machine)");
        return 0;
}

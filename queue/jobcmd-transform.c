/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd-transform.c — a Submit's parts through JOB_TRANSFORM_NAMES
 * (transform.h) as they come, before who the jobs say they are and
 * SUBMIT_REQUIREMENT_<Name> are checked (jobcmd-policy.c): condor_schedd
 * transforms a job, then checks its submit requirements on what the
 * transforms made of it.
 */
#include <stdio.h>

#include "jobcmd-internal.h"

int jobcmd_transform_part(const JobCmdPolicy *p, QueueXformSubmit **state, const QueueRequester *who,
                          const char *uid_domain, ClassAd **cluster, ClassAd **procs, size_t n, size_t first,
                          char *why, size_t whylen) {
        const QueueXforms *xs = jobcmd_policy_xforms(p);
        char user[600];

        if (queue_xforms_count(xs) == 0 || !who || !who->user || !cluster || !*cluster)
                return 0;
        snprintf(user, sizeof user, "%s%s%s", who->user, uid_domain && *uid_domain ? "@" : "",
                 uid_domain ? uid_domain : "");
        return queue_xform_part(xs, state, cluster, procs, n, first, who->user, user, why, whylen);
}

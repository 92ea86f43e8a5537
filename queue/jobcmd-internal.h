/* SPDX-License-Identifier: Apache-2.0 */
/*
 * jobcmd-internal.h — what the files of the user commands share: reading
 * a request's Ids, Constraint and Attrs, and small replies.
 */
#pragma once

#include "common/proto.h"
#include "jobcmd.h"
#include "transform.h"

#define JOBCMD_MODE GLEAN_CA_MODE

/* The jobs a request names: Ids parsed ("C" has proc -1). */
typedef struct JobCmdIds {
        JobId *ids;
        size_t n;
} JobCmdIds;

/* Ids, Constraint and Attrs of a request, each optional; a malformed one
 * is -EINVAL with why naming it. */
int jobcmd_parse_ids(const ClassAd *request, JobCmdIds *ret, char *why, size_t whylen);
int jobcmd_parse_constraint(const ClassAd *request, ClassAdExpr **ret, char *why, size_t whylen);
int jobcmd_parse_attrs(const ClassAd *request, char ***ret, char *why, size_t whylen);
void jobcmd_strv_free(char **v);

/* Does ad satisfy constraint (NULL: every ad does)? 1 or 0; -E2BIG when
 * the constraint ran out of the ClassAd evaluation budget on it: the
 * request is answered with JOBCMD_COSTLY instead of being carried on, so
 * that one user's constraint costs at most one budget, not one a job. */
int jobcmd_holds(const ClassAdExpr *constraint, const ClassAd *ad);
#define JOBCMD_COSTLY "Constraint too expensive to evaluate: it ran out of the evaluation budget on a job"

/* The last piece with Ok = ok (and Reason when !ok). */
int jobcmd_listing_end_ok(JobCmdListing *l, int64_t count, bool ok, const char *reason);

/* Sends a built reply ad (unparsed). */
int jobcmd_send_ad(const ClassAd *reply, const JobCmdSink *sink);

/* ---- job transforms at submit (jobcmd-transform.c) ---- */

/* JOB_TRANSFORM_NAMES of p (NULL: none). */
const QueueXforms *jobcmd_policy_xforms(const JobCmdPolicy *p);
/* One part of a submit through p's transforms (queue_xform_part), the
 * jobs seen as who's (Owner, User = Owner@uid_domain); before
 * jobcmd_policy_check_part, which then checks what they made. */
int jobcmd_transform_part(const JobCmdPolicy *p, QueueXformSubmit **state, const QueueRequester *who,
                          const char *uid_domain, ClassAd **cluster, ClassAd **procs, size_t n, size_t first,
                          char *why, size_t whylen);

/* ---- what a submit that carries files needs (jobcmd-transfer.c) ---- */

/* One part of a submit from who: -EPERM with why when a job transfers
 * always (ShouldTransferFiles "YES") and no agent relayed it (who->machine
 * NULL); 1 with why a warning when one names a UserLog then (it will not
 * be written); else 0. */
int jobcmd_transfer_check_part(const QueueRequester *who, const ClassAd *cluster, ClassAd *const *procs, size_t n,
                               char *why, size_t whylen);

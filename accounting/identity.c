/* SPDX-License-Identifier: Apache-2.0 */
/*
 * identity.c — who a job is charged to (3.4.7): its accounting group and
 * user, or its User, with the nice-user prefix; and the check of
 * AccountingGroup names.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "accounting.h"
#include "common/cleanup.h"

int acct_check_group_name(const char *name, char *why, size_t whylen) {
        size_t len = strlen(name);

        if (len == 0)
                return glean_why(-EINVAL, why, whylen, "an accounting group name cannot be empty");
        if (len > ACCT_GROUP_NAME_MAX)
                return glean_why(-EINVAL, why, whylen,
                                 "accounting group '%s' is %zu characters long, at most %d are allowed", name, len,
                                 ACCT_GROUP_NAME_MAX);
        if (strpbrk(name, " \t\r\n\"'\\@"))
                return glean_why(-EINVAL, why, whylen,
                                 "accounting group '%s' has white space, a quote, a backslash or '@'", name);
        return 0;
}

/* Submitter names go into keys and ads: no white space or quotes. */
static bool is_plain(const char *s) {
        return *s && !strpbrk(s, " \t\r\n\"'\\");
}

int acct_job_submitter(const ClassAd *job, const char *uid_domain, char **ret, char *why, size_t whylen) {
        _cleanup_free_ char *group = NULL, *user = NULL, *owner = NULL;
        const char *base, *domain = "";
        bool nice = false;
        char *name;
        int r;

        r = classad_eval_string(job, "AccountingGroup", CA_MODE_OLD, &group);
        if (r == -EINVAL)
                return glean_why(r, why, whylen, "AccountingGroup is not a string");
        if (r >= 0 && (r = acct_check_group_name(group, why, whylen)) < 0)
                return r;
        if (classad_eval_bool(job, "NiceUser", CA_MODE_OLD, &nice) < 0)
                nice = false;

        if (group) {
                base = group;
                domain = uid_domain;
        } else if (classad_eval_string(job, "User", CA_MODE_OLD, &user) >= 0 && is_plain(user)) {
                base = user;
                domain = NULL; /* User is "owner@domain" already */
        } else if (classad_eval_string(job, "Owner", CA_MODE_OLD, &owner) >= 0 && is_plain(owner)) {
                base = owner;
                domain = uid_domain;
        } else
                return glean_why(-EINVAL, why, whylen, "the job has no User or Owner to charge");

        if (domain && (!*domain || !is_plain(domain)))
                return glean_why(-EINVAL, why, whylen, "UID_DOMAIN '%s' cannot name a submitter", domain);
        if (asprintf(&name, "%s%s%s%s", nice ? ACCT_NICE_PREFIX : "", base, domain ? "@" : "",
                     domain ? domain : "") < 0)
                return -ENOMEM;
        *ret = name;
        return 0;
}

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
#include <strings.h>

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

/* Whether text (an attribute's unparsed expression) is one string
 * literal: a quote, then characters and escapes, its closing quote last. */
static bool is_string_literal(const char *text) {
        size_t len = strlen(text);

        if (len < 2 || text[0] != '"' || text[len - 1] != '"')
                return false;
        for (size_t i = 1; i < len - 1; i++) {
                if (text[i] == '\\') {
                        if (++i >= len - 1)
                                return false; /* the closing quote escaped */
                } else if (text[i] == '"')
                        return false; /* "a" + "b", strcat("a") ... */
        }
        return true;
}

int acct_literal_string(const ClassAd *ad, const char *name, char **ret) {
        _cleanup_free_ char *text = classad_unparse_attr(ad, name);
        char *v = NULL;
        int r;

        if (!text)
                return classad_has(ad, name) ? -ENOMEM : 0;
        if (!is_string_literal(text))
                return -EINVAL;
        r = classad_eval_string(ad, name, CA_MODE_OLD, &v);
        if (r < 0)
                return r == -ENOMEM ? r : -EINVAL;
        *ret = v;
        return 1;
}

int acct_literal_bool(const ClassAd *ad, const char *name, bool *ret) {
        _cleanup_free_ char *text = classad_unparse_attr(ad, name);

        if (!text)
                return classad_has(ad, name) ? -ENOMEM : 0;
        if (strcasecmp(text, "true") == 0)
                *ret = true;
        else if (strcasecmp(text, "false") == 0)
                *ret = false;
        else
                return -EINVAL;
        return 1;
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

        /* Read as the literals they must be (3.4.7 names, decided once at
         * submit), never evaluated: an expression could name another user
         * at every evaluation. */
        r = acct_literal_string(job, "AccountingGroup", &group);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "AccountingGroup is not a string literal");
        if (r > 0 && (r = acct_check_group_name(group, why, whylen)) < 0)
                return r;
        r = acct_literal_bool(job, "NiceUser", &nice);
        if (r == -ENOMEM)
                return r;
        if (r < 0)
                return glean_why(-EINVAL, why, whylen, "NiceUser is not a literal true or false");

        if (group) {
                base = group;
                domain = uid_domain;
        } else if (acct_literal_string(job, "User", &user) > 0 && is_plain(user)) {
                base = user;
                domain = NULL; /* User is "owner@domain" already */
        } else if (acct_literal_string(job, "Owner", &owner) > 0 && is_plain(owner)) {
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

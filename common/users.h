/* SPDX-License-Identifier: Apache-2.0 */
/*
 * users.h — the user and group databases (NSS), looked up without the
 * static buffers of getpwnam() and friends.
 *
 * The record lookups fill the caller's struct and keep its strings in *buf,
 * a buffer grown (up to 1 MiB) until the record fits: start with *buf NULL
 * and free it when done with the record. They return 1 when the entry was
 * found, 0 when there is no such entry (or it cannot be read), -ENOMEM.
 */
#pragma once

#include <grp.h>
#include <stdbool.h>
#include <pwd.h>
#include <stddef.h>
#include <sys/types.h>

int glean_getpwuid(uid_t uid, struct passwd *pw, char **buf);
int glean_getpwnam(const char *name, struct passwd *pw, char **buf);
int glean_getgrnam(const char *name, struct group *gr, char **buf);

/* The groups of user: gid and every group the group database lists user
 * in (getgrouplist()), as a malloc'd array of *ret_n gids. -E2BIG past
 * 65536 groups, -ENOMEM. */
int glean_getgrouplist(const char *user, gid_t gid, gid_t **ret, size_t *ret_n);

/* Whether the user called name (a name only: relayed by an agent, its uid
 * another machine's) is one of administrators (ADMINISTRATORS): an entry
 * that is the name itself, or "%group" where this machine's group
 * database lists name as a member of group or name's own passwd entry
 * here has group as its primary group. Entries that are uids never match
 * a name. */
bool glean_name_is_admin(const char *name, char *const *administrators);

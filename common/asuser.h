/* SPDX-License-Identifier: Apache-2.0 */
/*
 * asuser.h — doing file work as a user, from a root daemon: a process
 * that becomes the user for good (the transfer workers), and one file
 * opened as the user with the descriptor handed back (the job event log).
 * Root never opens a path the user controls.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

typedef struct GleanUserCred {
        uid_t uid;
        gid_t gid;
        char name[64];
        gid_t groups[64]; /* the user's supplementary groups (getgrouplist) */
        size_t n_groups;
} GleanUserCred;

/* The account called name (or decimal uid text): its uid, primary gid and
 * groups. -ENOENT no such user, -EPERM when it is root (uid 0): no
 * function here works as root. */
int glean_user_cred(const char *name, GleanUserCred *ret);

/* Makes the calling process the user for good: setgroups, setresgid,
 * setresuid, then checks that it cannot become root again. Call it in a
 * single-threaded child after fork(). -EPERM when cred->uid is 0, -errno of
 * the call that failed (the process must then exit). */
int glean_become_user(const GleanUserCred *cred);

/* Opens path as the user: a child forked for it becomes the user, opens
 * path with flags | O_NOFOLLOW | O_CLOEXEC (mode for O_CREAT) and passes the
 * descriptor back over a socketpair; the caller's privileges never touch
 * the path. -errno of the child's open (-ELOOP for a symbolic link as the
 * last component, -EACCES, -ENOENT ...), or of fork/socketpair. */
int glean_open_as_user(const GleanUserCred *cred, const char *path, int flags, mode_t mode, int *ret_fd);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-internal.h — what the files of the cgroup driver share (not
 * public): the two structures, file access relative to a directory fd,
 * the controller table and the walk over a subtree.
 *
 * cgroup.c         the subtree: mount, base, controllers, root, open,
 *                  paths; a process's own cgroup (the "0::" line)
 * cgroup-file.c    control files relative to a dir fd, keyed files, names
 * cgroup-tree.c    below a cgroup: children, walk, pids, attach, remove;
 *                  the same below the root's slots/
 * cgroup-ctl.c     what is done to a cgroup: limits, freeze, kill, signal,
 *                  usage, the event files and their watch
 * cgroup-scope.c   the jobs' scope under systemd: its name and cgroup (pure)
 * cgroup-systemd.c the scope's unit and placeholder (sd-bus)
 */
#pragma once

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cgroup.h"
#include "common/cleanup.h"

struct CgRoot {
        char *mount;          /* the cgroup2 mount, absolute */
        char *base;           /* absolute */
        int base_fd;          /* O_PATH|O_DIRECTORY */
        int slots_fd;         /* <base>/slots, O_PATH|O_DIRECTORY */
        unsigned controllers; /* enabled in <base>/slots/cgroup.subtree_control */
        char note[512];       /* what it had to do without; "" when nothing */
};

struct Cg {
        char *path;     /* absolute */
        char *name;     /* the last component */
        int dirfd;      /* O_PATH|O_DIRECTORY */
        int parent_fd;  /* the parent, O_PATH|O_DIRECTORY: rmdir */
        uint64_t id;    /* st_ino */

        /* cg_watch() */
        sd_event_source *events_source, *memory_source;
        int events_fd, memory_fd;
        CgEventFn watch_fn;
        void *watch_userdata;
};

/* The cgroup2 mount: /sys/fs/cgroup when it is cgroup2, else
 * /sys/fs/cgroup/unified (a hybrid host); -ENOENT when neither is. */
int cg_mount_find(const char **ret);

/* A path of cgroup names relative to a cgroup ("slot1/slot1_2/job"; ""
 * when allow_empty): no empty name, ".", "..", absolute path, control
 * character, name over NAME_MAX or name of a control file. 0, or -EINVAL
 * with why. */
int cg_path_check(const char *path, bool allow_empty, char *why, size_t whylen);

/* The controllers in the kernel's (alphabetical) order. */
typedef struct CgController {
        const char *name;
        unsigned bit;
} CgController;
extern const CgController cg_controller_table[5];

/* "cpu io memory" (any whitespace, unknown names ignored) -> mask. */
unsigned cg_mask_parse(const char *s);

/* Opens file under dirfd (O_WRONLY|O_CLOEXEC, never O_CREAT) and writes
 * value in one write(). -ENODEV when the file does not exist (controller
 * not enabled here); why names dir/file either way. */
int cg_write_at(int dirfd, const char *dir, const char *file, const char *value, char *why, size_t whylen);
/* Reads the whole of file under dirfd into *ret (malloc'd, NUL-terminated).
 * -ENOENT when it does not exist. */
int cg_read_at(int dirfd, const char *file, char **ret);
/* The same into buf (truncated to size - 1), for the small keyed files. */
int cg_read_small_at(int dirfd, const char *file, char *buf, size_t size);
/* The value of "key N" in a keyed file's text: 0, or -ENOENT. */
int cg_keyed_get(const char *text, const char *key, uint64_t *ret);
/* A single-value file ("123" or "max" -> INT64_MAX): 0, or -errno. */
int cg_read_int64_at(int dirfd, const char *file, int64_t *ret);

/* cgroup.events of the cgroup dirfd: populated and frozen (either output
 * may be NULL); -ENODEV without the file, -ENOENT without "populated". */
int cg_events_at(int dirfd, bool *ret_populated, bool *ret_frozen);

/* The names of the child cgroups of dirfd, sorted, NULL-terminated (free
 * with cg_strv_free). */
int cg_children_at(int dirfd, char ***ret);
/* Calls fn on dirfd and then on every cgroup below it (parents first),
 * each with an O_PATH|O_DIRECTORY fd; stops at the first fn < 0. */
typedef int (*CgWalkFn)(int dirfd, void *userdata);
int cg_walk(int dirfd, CgWalkFn fn, void *userdata);
/* The pids of cgroup.procs under dirfd (not below); none when the cgroup
 * is gone. */
int cg_procs_at(int dirfd, pid_t **ret, size_t *ret_n);
/* Moves pid into the cgroup dirfd (its cgroup.procs); dir names it in why. */
int cg_attach_at(int dirfd, const char *dir, pid_t pid, char *why, size_t whylen);

/* SIGKILL to every process of cg and below, frozen first so that nothing
 * forks meanwhile, repeated until the cgroup is empty (0) or the tries run
 * out (-EBUSY); thawed again at the end. What cg_kill() does without
 * cgroup.kill (kernels before 5.14); exposed for the tests. */
int cg_kill_fallback(Cg *cg);

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup-tree.c — the cgroups below one of the driver's cgroups: their
 * names, a walk over all of them, the processes in them, moving a process
 * in, and removal (children first, never while populated).
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup-internal.h"

/* Deeper than any layout of ours; bounds the recursion of cg_walk(). */
#define CG_WALK_MAX_DEPTH 64

int cg_children_at(int dirfd, char ***ret) {
        _cleanup_close_ int fd = -1;
        DIR *d;
        struct dirent *de;
        char **v = NULL;
        size_t n = 0;
        int k = 0;

        fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        d = fdopendir(fd);
        if (!d)
                return -errno;
        fd = -1; /* the DIR owns it */
        v = calloc(1, sizeof(*v));
        if (!v) {
                closedir(d);
                return -ENOMEM;
        }
        while ((errno = 0, de = readdir(d))) {
                char **bigger;

                if (de->d_type != DT_DIR || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                bigger = realloc(v, (n + 2) * sizeof(*v));
                if (!bigger) {
                        k = -ENOMEM;
                        break;
                }
                v = bigger;
                v[n] = strdup(de->d_name);
                v[n + 1] = NULL;
                if (!v[n]) {
                        k = -ENOMEM;
                        break;
                }
                n++;
        }
        if (k == 0 && errno != 0)
                k = -errno;
        closedir(d);
        if (k < 0) {
                cg_strv_free(v);
                return k;
        }
        for (size_t i = 1; i < n; i++) /* insertion sort: a handful of slots */
                for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
                        char *t = v[j];
                        v[j] = v[j - 1];
                        v[j - 1] = t;
                }
        *ret = v;
        return 0;
}

int cg_children(const Cg *cg, char ***ret) {
        if (!cg || !ret)
                return -EINVAL;
        return cg_children_at(cg->dirfd, ret);
}

void cg_strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

static int walk_depth(int dirfd, CgWalkFn fn, void *userdata, unsigned depth) {
        char **names = NULL;
        int k;

        if (depth > CG_WALK_MAX_DEPTH)
                return -ELOOP;
        k = fn(dirfd, userdata);
        if (k < 0)
                return k;
        k = cg_children_at(dirfd, &names);
        if (k < 0)
                return k == -ENOENT ? 0 : k; /* removed meanwhile */
        for (char **p = names; *p && k >= 0; p++) {
                int child = openat(dirfd, *p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (child < 0) {
                        if (errno != ENOENT)
                                k = -errno;
                        continue;
                }
                k = walk_depth(child, fn, userdata, depth + 1);
                (void) close(child);
        }
        cg_strv_free(names);
        return k < 0 ? k : 0;
}

int cg_walk(int dirfd, CgWalkFn fn, void *userdata) {
        return walk_depth(dirfd, fn, userdata, 0);
}

int cg_procs_at(int dirfd, pid_t **ret, size_t *ret_n) {
        _cleanup_free_ char *text = NULL;
        pid_t *v = NULL;
        size_t n = 0, cap = 0;
        int k;

        k = cg_read_at(dirfd, "cgroup.procs", &text);
        if (k == -ENOENT || k == -ENODEV) { /* removed meanwhile */
                *ret = calloc(1, sizeof(pid_t));
                *ret_n = 0;
                return *ret ? 0 : -ENOMEM;
        }
        if (k < 0)
                return k;
        for (char *p = text, *end; *p; p = end) {
                long pid;

                while (isspace((unsigned char) *p))
                        p++;
                if (!*p)
                        break;
                pid = strtol(p, &end, 10);
                if (end == p || pid <= 0) {
                        free(v);
                        return -EINVAL;
                }
                if (n == cap) {
                        pid_t *bigger = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));

                        if (!bigger) {
                                free(v);
                                return -ENOMEM;
                        }
                        v = bigger;
                }
                v[n++] = (pid_t) pid;
        }
        if (!v && !(v = calloc(1, sizeof(pid_t))))
                return -ENOMEM;
        *ret = v;
        *ret_n = n;
        return 0;
}

typedef struct PidList {
        pid_t *v;
        size_t n, cap;
} PidList;

static int collect_pids(int dirfd, void *userdata) {
        PidList *l = userdata;
        pid_t *v;
        size_t n;
        int k;

        k = cg_procs_at(dirfd, &v, &n);
        if (k < 0)
                return k;
        if (l->n + n > l->cap) {
                size_t cap = (l->n + n) * 2 + 16;
                pid_t *bigger = realloc(l->v, cap * sizeof(pid_t));

                if (!bigger) {
                        free(v);
                        return -ENOMEM;
                }
                l->v = bigger;
                l->cap = cap;
        }
        if (n > 0)
                memcpy(l->v + l->n, v, n * sizeof(pid_t));
        l->n += n;
        free(v);
        return 0;
}

int cg_pids(const Cg *cg, pid_t **ret, size_t *ret_n) {
        PidList l = {};
        int k;

        if (!cg || !ret || !ret_n)
                return -EINVAL;
        k = cg_walk(cg->dirfd, collect_pids, &l);
        if (k < 0) {
                free(l.v);
                return k;
        }
        if (!l.v && !(l.v = calloc(1, sizeof(pid_t))))
                return -ENOMEM;
        *ret = l.v;
        *ret_n = l.n;
        return 0;
}

int cg_attach_at(int dirfd, const char *dir, pid_t pid, char *why, size_t whylen) {
        char buf[32];

        if (pid <= 0)
                return glean_why(-EINVAL, why, whylen, "no pid to move into %s", dir);
        snprintf(buf, sizeof(buf), "%d", (int) pid);
        return cg_write_at(dirfd, dir, "cgroup.procs", buf, why, whylen);
}

int cg_attach(Cg *cg, pid_t pid) {
        if (!cg)
                return -EINVAL;
        return cg_attach_at(cg->dirfd, cg->path, pid, NULL, 0);
}

/* ---- below the root ---- */

int cg_root_children(const CgRoot *r, const char *path, char ***ret) {
        _cleanup_close_ int fd = -1;
        int k;

        if (!r || !ret)
                return -EINVAL;
        k = cg_path_check(path, true, NULL, 0);
        if (k < 0)
                return k;
        fd = openat(r->slots_fd, *path ? path : ".", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return cg_children_at(fd, ret);
}

int cg_root_prune(CgRoot *r, const char *prefix) {
        char **names = NULL;
        int k, n = 0;

        if (!r || !prefix)
                return -EINVAL;
        k = cg_children_at(r->slots_fd, &names);
        if (k < 0)
                return k;
        for (char **p = names; *p; p++)
                if (strncmp(*p, prefix, strlen(prefix)) == 0 && unlinkat(r->slots_fd, *p, AT_REMOVEDIR) == 0)
                        n++;
        cg_strv_free(names);
        return n;
}

int cg_root_agent_pids(const CgRoot *r, pid_t **ret, size_t *ret_n) {
        _cleanup_close_ int fd = -1;

        if (!r || !ret || !ret_n)
                return -EINVAL;
        fd = openat(r->base_fd, "agent", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        return cg_procs_at(fd, ret, ret_n);
}

/* ---- removal ---- */

static int remove_children(int dirfd, unsigned depth) {
        char **names = NULL;
        int k;

        if (depth > CG_WALK_MAX_DEPTH)
                return -ELOOP;
        k = cg_children_at(dirfd, &names);
        if (k < 0)
                return k;
        for (char **p = names; *p && k >= 0; p++) {
                int child = openat(dirfd, *p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

                if (child < 0) {
                        if (errno != ENOENT)
                                k = -errno;
                        continue;
                }
                k = remove_children(child, depth + 1);
                (void) close(child);
                if (k >= 0 && unlinkat(dirfd, *p, AT_REMOVEDIR) < 0 && errno != ENOENT)
                        k = -errno;
        }
        cg_strv_free(names);
        return k < 0 ? k : 0;
}

int cg_remove(Cg *cg) {
        bool populated = false;
        int k;

        if (!cg)
                return -EINVAL;
        k = cg_events(cg, &populated, NULL);
        if (k < 0 && k != -ENODEV)
                return k;
        if (populated)
                return -EBUSY;
        cg_unwatch(cg);
        k = remove_children(cg->dirfd, 0);
        if (k < 0)
                return k;
        if (unlinkat(cg->parent_fd, cg->name, AT_REMOVEDIR) < 0)
                return errno == ENOENT ? 0 : -errno;
        return 0;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cgroup.c — the agent's cgroup v2 subtree: finding the mount and the base,
 * enabling controllers down the tree, opening (creating) the cgroups of
 * slots and jobs, and which cgroup paths are acceptable.
 *
 * Every file is reached relative to a directory fd kept open (O_PATH), so a
 * cgroup renamed or a mount moved under us never sends a write elsewhere;
 * files are opened O_WRONLY|O_CLOEXEC, never O_CREAT (cgroupfs creates no
 * files: a missing one is a controller not enabled here).
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroup-internal.h"

/* ---- paths ---- */

/* Names the kernel's control files start with: a cgroup of that name would
 * collide with a file once the controller is enabled. */
static bool name_is_reserved(const char *name, size_t len) {
        static const char *const prefixes[] = { "cgroup", "cpu", "cpuset", "io", "memory", "pids",
                                                "hugetlb", "rdma", "misc", "freezer", "devices", "perf_event",
                                                "net_cls", "net_prio", "blkio", "cpuacct" };
        const char *dot = memchr(name, '.', len);

        if (!dot)
                return false;
        for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
                if (strlen(prefixes[i]) == (size_t) (dot - name) && strncmp(name, prefixes[i], dot - name) == 0)
                        return true;
        return false;
}

int cg_path_check(const char *path, bool allow_empty, char *why, size_t whylen) {
        const char *p = path;

        if (!path)
                return glean_why(-EINVAL, why, whylen, "no cgroup path given");
        if (*path == '\0' && allow_empty)
                return 0;
        if (*path == '/')
                return glean_why(-EINVAL, why, whylen, "cgroup path '%s' is absolute, want one relative to slots/",
                              path);
        if (strlen(path) >= PATH_MAX / 2)
                return glean_why(-EINVAL, why, whylen, "cgroup path of %zu characters is too long", strlen(path));
        for (;;) {
                size_t n = strcspn(p, "/");

                if (n == 0)
                        return glean_why(-EINVAL, why, whylen, "cgroup path '%s' has an empty name", path);
                if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return glean_why(-EINVAL, why, whylen, "cgroup path '%s' has '.' or '..'", path);
                if (n > NAME_MAX)
                        return glean_why(-EINVAL, why, whylen, "cgroup path '%.40s...' has a name of %zu characters (most %d)",
                                      path, n, NAME_MAX);
                for (size_t i = 0; i < n; i++)
                        if ((unsigned char) p[i] < 0x20 || p[i] == 0x7f)
                                return glean_why(-EINVAL, why, whylen, "cgroup path has a control character");
                if (name_is_reserved(p, n))
                        return glean_why(-EINVAL, why, whylen, "cgroup name '%.*s' would collide with a control file",
                                      (int) n, p);
                if (p[n] == '\0')
                        return 0;
                p += n + 1;
        }
}

static char *path_join(const char *a, const char *b) {
        char *s;

        if (!b || !*b)
                return strdup(a);
        if (asprintf(&s, "%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b) < 0)
                return NULL;
        return s;
}

int cg_subpath(char *buf, size_t len, const char *parent, const char *name) {
        int n;

        if (!name || !*name)
                return -EINVAL;
        if (parent && *parent)
                n = snprintf(buf, len, "%s/%s", parent, name);
        else
                n = snprintf(buf, len, "%s", name);
        return n < 0 || (size_t) n >= len ? -ENAMETOOLONG : 0;
}

static bool is_cgroup2(const char *path) {
        struct statfs fs;

        return statfs(path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

int cg_own_from_text(const char *text, char *buf, size_t len) {
        const char *p;
        size_t n;

        if (!text)
                return -EINVAL;
        for (p = text; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
                if (strncmp(p, "0::", 3) == 0)
                        break;
        if (!p)
                return -ENOENT;
        p += 3;
        n = strcspn(p, "\n");
        if (n == 0 || p[0] != '/')
                return -EINVAL;
        if (n >= len)
                return -ENAMETOOLONG;
        memcpy(buf, p, n);
        buf[n] = '\0';
        return 0;
}

int cg_own(pid_t pid, char *buf, size_t len) {
        _cleanup_free_ char *text = NULL;
        char file[64];
        int k;

        if (pid < 0)
                return -EINVAL;
        if (pid == 0)
                snprintf(file, sizeof(file), "/proc/self/cgroup");
        else
                snprintf(file, sizeof(file), "/proc/%d/cgroup", (int) pid);
        k = cg_read_at(AT_FDCWD, file, &text);
        if (k < 0)
                return k;
        return cg_own_from_text(text, buf, len);
}

int cg_mount_find(const char **ret) {
        if (is_cgroup2("/sys/fs/cgroup"))
                *ret = "/sys/fs/cgroup";
        else if (is_cgroup2("/sys/fs/cgroup/unified"))
                *ret = "/sys/fs/cgroup/unified";
        else
                return -ENOENT;
        return 0;
}

int cg_own_memory_max(int64_t *ret) {
        _cleanup_close_ int mount_fd = -1;
        const char *mount;
        char own[PATH_MAX];
        int64_t best = -1;
        size_t n;
        int k;

        k = cg_mount_find(&mount);
        if (k >= 0)
                k = cg_own(0, own, sizeof(own));
        if (k < 0)
                return k;
        mount_fd = open(mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (mount_fd < 0)
                return -errno;
        /* "/a/b", then "/a"; the root has no memory.max. */
        for (n = strlen(own); n > 1;) {
                _cleanup_close_ int fd = openat(mount_fd, own + 1, O_PATH | O_DIRECTORY | O_CLOEXEC);
                int64_t v;

                if (fd >= 0 && cg_read_int64_at(fd, "memory.max", &v) >= 0 && v > 0 && v != INT64_MAX &&
                    (best < 0 || v < best))
                        best = v;
                while (n > 0 && own[n - 1] != '/')
                        n--;
                if (n > 0)
                        n--;
                own[n] = '\0';
        }
        if (best < 0)
                return -ENOENT;
        *ret = best;
        return 0;
}

/* ---- controllers down the tree ---- */

static unsigned mask_of_file(int dirfd, const char *file) {
        char buf[512];

        if (cg_read_small_at(dirfd, file, buf, sizeof(buf)) < 0)
                return 0;
        return cg_mask_parse(buf);
}

unsigned cg_controllers(const Cg *cg) {
        return cg ? mask_of_file(cg->dirfd, "cgroup.controllers") : 0;
}

/* Enables the controllers of dirfd's cgroup.controllers in its
 * cgroup.subtree_control: all in one write, else one by one. Returns the
 * mask now enabled; why says what could not be (unchanged when all could). */
static unsigned enable_subtree(int dirfd, const char *dir, char *why, size_t whylen) {
        unsigned want = mask_of_file(dirfd, "cgroup.controllers");
        unsigned have = mask_of_file(dirfd, "cgroup.subtree_control");
        char line[128] = "", one[16];
        size_t used = 0;

        if ((want & ~have) == 0)
                return have;
        for (size_t i = 0; i < sizeof(cg_controller_table) / sizeof(cg_controller_table[0]); i++)
                if (want & ~have & cg_controller_table[i].bit)
                        used += (size_t) snprintf(line + used, sizeof(line) - used, "%s+%s", used ? " " : "",
                                                  cg_controller_table[i].name);
        if (cg_write_at(dirfd, dir, "cgroup.subtree_control", line, NULL, 0) < 0)
                for (size_t i = 0; i < sizeof(cg_controller_table) / sizeof(cg_controller_table[0]); i++)
                        if (want & ~have & cg_controller_table[i].bit) {
                                snprintf(one, sizeof(one), "+%s", cg_controller_table[i].name);
                                (void) cg_write_at(dirfd, dir, "cgroup.subtree_control", one, why, whylen);
                        }
        return mask_of_file(dirfd, "cgroup.subtree_control");
}

static void note_add(CgRoot *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note_add(CgRoot *r, const char *fmt, ...) {
        size_t used = strlen(r->note);
        va_list ap;

        if (used + 3 >= sizeof(r->note))
                return;
        if (used > 0) {
                strcpy(r->note + used, "; ");
                used += 2;
        }
        va_start(ap, fmt);
        vsnprintf(r->note + used, sizeof(r->note) - used, fmt, ap);
        va_end(ap);
}

/* mkdir -p of rel under dirfd; never writes anything in what it passes. */
static int mkdir_p_at(int dirfd, const char *rel) {
        _cleanup_free_ char *copy = strdup(rel);

        if (!copy)
                return -ENOMEM;
        for (char *slash = copy;; slash++) {
                slash = strchr(slash, '/');
                if (slash)
                        *slash = '\0';
                if (*copy && mkdirat(dirfd, copy, 0755) < 0 && errno != EEXIST)
                        return -errno;
                if (!slash)
                        return 0;
                *slash = '/';
        }
}

/* ---- the root ---- */

int cg_root_open(const char *mount_override, const char *base_override, bool move_self, CgRoot **ret, char *why,
                 size_t whylen) {
        _cleanup_free_ char *rel = NULL;
        _cleanup_close_ int mount_fd = -1;
        CgRoot *r = NULL;
        const char *mount;
        char buf[256], pid[32], *slots = NULL;
        unsigned base_mask, avail;
        int k;

        if (why && whylen)
                why[0] = '\0';

        r = calloc(1, sizeof(*r));
        if (!r)
                return -ENOMEM;
        r->base_fd = r->slots_fd = -1;

        if (mount_override) {
                if (!is_cgroup2(mount_override)) {
                        k = glean_why(-ENOENT, why, whylen, "%s is not a cgroup2 mount", mount_override);
                        goto fail;
                }
                r->mount = strdup(mount_override);
        } else if (cg_mount_find(&mount) >= 0)
                r->mount = strdup(mount);
        else {
                k = glean_why(-ENOENT, why, whylen, "no cgroup v2: neither /sys/fs/cgroup nor /sys/fs/cgroup/unified is cgroup2");
                goto fail;
        }
        if (!r->mount) {
                k = -ENOMEM;
                goto fail;
        }

        if (base_override) {
                const char *b = base_override;

                while (*b == '/')
                        b++;
                rel = strdup(b);
                if (rel && *rel && rel[strlen(rel) - 1] == '/')
                        rel[strlen(rel) - 1] = '\0';
        } else {
                char own[PATH_MAX];

                k = cg_own(0, own, sizeof(own));
                if (k >= 0)
                        rel = strdup(own + 1);
                if (k < 0) {
                        k = glean_why(k == -ENOENT ? -ENOENT : k, why, whylen,
                                   "cannot find our cgroup v2 in /proc/self/cgroup: %s", strerror(-k));
                        goto fail;
                }
        }
        if (!rel) {
                k = -ENOMEM;
                goto fail;
        }
        k = cg_path_check(rel, true, buf, sizeof(buf));
        if (k < 0) {
                k = glean_why(k, why, whylen, "base: %s", buf);
                goto fail;
        }
        r->base = path_join(r->mount, rel);
        if (!r->base) {
                k = -ENOMEM;
                goto fail;
        }

        mount_fd = open(r->mount, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (mount_fd < 0) {
                k = glean_why(-errno, why, whylen, "cannot open %s: %s", r->mount, strerror(errno));
                goto fail;
        }
        k = mkdir_p_at(mount_fd, rel);
        if (k < 0) {
                k = glean_why(k, why, whylen, "cannot create the base %s: %s", r->base, strerror(-k));
                goto fail;
        }
        r->base_fd = openat(mount_fd, *rel ? rel : ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (r->base_fd < 0) {
                k = glean_why(-errno, why, whylen, "cannot open %s: %s", r->base, strerror(errno));
                goto fail;
        }

        if (move_self) {
                _cleanup_close_ int agent_fd = -1;
                _cleanup_free_ char *agent = path_join(r->base, "agent");

                if (!agent) {
                        k = -ENOMEM;
                        goto fail;
                }
                if (mkdirat(r->base_fd, "agent", 0755) < 0 && errno != EEXIST) {
                        k = glean_why(-errno, why, whylen, "cannot create %s: %s", agent, strerror(errno));
                        goto fail;
                }
                agent_fd = openat(r->base_fd, "agent", O_PATH | O_DIRECTORY | O_CLOEXEC);
                if (agent_fd < 0) {
                        k = glean_why(-errno, why, whylen, "cannot open %s: %s", agent, strerror(errno));
                        goto fail;
                }
                snprintf(pid, sizeof(pid), "%d", (int) getpid());
                k = cg_write_at(agent_fd, agent, "cgroup.procs", pid, why, whylen);
                if (k < 0)
                        goto fail;
        }

        avail = mask_of_file(r->base_fd, "cgroup.controllers");
        buf[0] = '\0';
        base_mask = enable_subtree(r->base_fd, r->base, buf, sizeof(buf));
        if (avail & ~base_mask) {
                char names[64];

                cg_controllers_string(avail & ~base_mask, names, sizeof(names));
                note_add(r, "could not enable %s in %s/cgroup.subtree_control (%s)", names, r->base,
                         *buf ? buf : "refused");
        }

        slots = path_join(r->base, "slots");
        if (!slots) {
                k = -ENOMEM;
                goto fail;
        }
        if (mkdirat(r->base_fd, "slots", 0755) < 0 && errno != EEXIST) {
                k = glean_why(-errno, why, whylen, "cannot create %s: %s", slots, strerror(errno));
                goto fail;
        }
        r->slots_fd = openat(r->base_fd, "slots", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (r->slots_fd < 0) {
                k = glean_why(-errno, why, whylen, "cannot open %s: %s", slots, strerror(errno));
                goto fail;
        }
        buf[0] = '\0';
        r->controllers = enable_subtree(r->slots_fd, slots, buf, sizeof(buf));
        if (base_mask & ~r->controllers)
                note_add(r, "could not enable every controller in %s/cgroup.subtree_control (%s)", slots,
                         *buf ? buf : "refused");
        if (r->controllers == 0 && avail == 0)
                note_add(r, "no controllers in cgroup v2 at %s: no limits, freezing, killing and CPU usage only",
                         r->base);
        free(slots);
        *ret = r;
        return 0;

fail:
        free(slots);
        cg_root_free(r);
        return k;
}

void cg_root_free(CgRoot *r) {
        if (!r)
                return;
        if (r->base_fd >= 0)
                (void) close(r->base_fd);
        if (r->slots_fd >= 0)
                (void) close(r->slots_fd);
        free(r->mount);
        free(r->base);
        free(r);
}

unsigned cg_root_controllers(const CgRoot *r) {
        return r ? r->controllers : 0;
}

const char *cg_root_path(const CgRoot *r) {
        return r ? r->base : NULL;
}

const char *cg_root_note(const CgRoot *r) {
        return r ? r->note : "";
}

/* ---- one cgroup ---- */

int cg_open(CgRoot *r, const char *path, Cg **ret, char *why, size_t whylen) {
        _cleanup_free_ char *copy = NULL, *abs = NULL, *slots = NULL;
        _cleanup_close_ int parent = -1, dir = -1;
        struct stat st;
        Cg *cg;
        char *comp, *next;
        int k;

        if (why && whylen)
                why[0] = '\0';
        if (!r)
                return glean_why(-EINVAL, why, whylen, "no cgroup root");
        k = cg_path_check(path, false, why, whylen);
        if (k < 0)
                return k;
        copy = strdup(path);
        slots = path_join(r->base, "slots");
        abs = slots ? path_join(slots, path) : NULL;
        if (!copy || !abs)
                return -ENOMEM;

        dir = fcntl(r->slots_fd, F_DUPFD_CLOEXEC, 3);
        if (dir < 0)
                return -errno;
        for (comp = copy; comp; comp = next) {
                next = strchr(comp, '/');
                if (next)
                        *next++ = '\0';
                if (parent >= 0)
                        (void) close(parent);
                parent = TAKE_FD(dir);

                dir = openat(parent, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (dir < 0 && errno == ENOENT) {
                        /* Created here: the parent passes its controllers on first. */
                        (void) enable_subtree(parent, "(parent)", NULL, 0);
                        if (mkdirat(parent, comp, 0755) < 0 && errno != EEXIST)
                                return glean_why(-errno, why, whylen, "cannot create cgroup '%s' under %s: %s", comp,
                                              slots, strerror(errno));
                        dir = openat(parent, comp, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                }
                if (dir < 0)
                        return glean_why(-errno, why, whylen, "cannot open cgroup %s: %s", abs, strerror(errno));
        }
        if (fstat(dir, &st) < 0)
                return glean_why(-errno, why, whylen, "cannot stat %s: %s", abs, strerror(errno));

        cg = calloc(1, sizeof(*cg));
        if (!cg)
                return -ENOMEM;
        cg->name = strdup(strrchr(abs, '/') + 1);
        if (!cg->name) {
                free(cg);
                return -ENOMEM;
        }
        cg->path = TAKE_PTR(abs);
        cg->dirfd = TAKE_FD(dir);
        cg->parent_fd = TAKE_FD(parent);
        cg->id = (uint64_t) st.st_ino;
        cg->events_fd = cg->memory_fd = -1;
        *ret = cg;
        return 0;
}

void cg_free(Cg *cg) {
        if (!cg)
                return;
        cg_unwatch(cg);
        if (cg->dirfd >= 0)
                (void) close(cg->dirfd);
        if (cg->parent_fd >= 0)
                (void) close(cg->parent_fd);
        free(cg->path);
        free(cg->name);
        free(cg);
}

int cg_dirfd(const Cg *cg) {
        return cg ? cg->dirfd : -EBADF;
}

const char *cg_path(const Cg *cg) {
        return cg ? cg->path : NULL;
}

uint64_t cg_id(const Cg *cg) {
        return cg ? cg->id : 0;
}

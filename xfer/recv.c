/* SPDX-License-Identifier: Apache-2.0 */
/*
 * recv.c — the receiving half of a transfer: entries written beneath one
 * directory (the sandbox, or Iwd), each file aside under a temporary name
 * and renamed into place once its checksum and size hold; names that
 * would leave the directory or pass through a symbolic link refused; the
 * job's limit kept; the final STATUS sent.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/cleanup.h"
#include "xfer-internal.h"

typedef struct DirFix {
        char *rel;
        uint32_t mode;
        struct timespec ts[2];
} DirFix;

typedef struct Recv {
        XferConn *c;
        XferRecvMode mode;
        const XferJob *job;
        const char *dir;
        int rootfd;
        XferManifest *manifest;
        XferResult *res;
        int hold;
        uint64_t limit, bytes, files;
        mode_t umask;
        char *cur_rel; /* the directory whose descriptor is cur_fd */
        int cur_fd;
        char **cleaned; /* directories whose leftovers were removed */
        size_t n_cleaned;
        DirFix *dirs;
        size_t n_dirs;
} Recv;

static void recv_done(Recv *rv) {
        if (rv->cur_fd >= 0)
                close(rv->cur_fd);
        if (rv->rootfd >= 0)
                close(rv->rootfd);
        free(rv->cur_rel);
        for (size_t i = 0; i < rv->n_cleaned; i++)
                free(rv->cleaned[i]);
        free(rv->cleaned);
        for (size_t i = 0; i < rv->n_dirs; i++)
                free(rv->dirs[i].rel);
        free(rv->dirs);
}

static const char *what(const Recv *rv) {
        return rv->mode == XFER_RECV_INPUT ? "input" : "output";
}

/* The directory rel beneath the root (cached: 10,000 small files in one
 * directory open it once), its leftovers removed on first use. */
static int open_parent(Recv *rv, const char *rel, bool create, int *ret_fd) {
        if (rv->cur_rel && strcmp(rv->cur_rel, rel) == 0) {
                *ret_fd = rv->cur_fd;
                return 0;
        }
        int fd, r = xfer_open_dir_beneath(rv->rootfd, rel, create, &fd);
        if (r < 0)
                return r;
        bool seen = false;
        for (size_t i = 0; i < rv->n_cleaned && !seen; i++)
                seen = strcmp(rv->cleaned[i], rel) == 0;
        if (!seen) {
                xfer_clean_leftovers(fd);
                char **v = realloc(rv->cleaned, (rv->n_cleaned + 1) * sizeof *v);
                if (v) {
                        rv->cleaned = v;
                        if ((v[rv->n_cleaned] = strdup(rel)))
                                rv->n_cleaned++;
                }
        }
        if (rv->cur_fd >= 0)
                close(rv->cur_fd);
        free(rv->cur_rel);
        rv->cur_rel = strdup(rel);
        rv->cur_fd = rv->cur_rel ? fd : (close(fd), -1);
        if (rv->cur_fd < 0)
                return -ENOMEM;
        *ret_fd = fd;
        return 0;
}

/* Refuses: the reason in res, STATUS to the sender. */
static int refuse(Recv *rv, int error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int refuse(Recv *rv, int error, const char *fmt, ...) {
        va_list ap;

        rv->res->error = error;
        rv->res->hold_code = rv->hold;
        rv->res->hold_subcode = -error;
        va_start(ap, fmt);
        vsnprintf(rv->res->reason, sizeof rv->res->reason, fmt, ap);
        va_end(ap);
        rv->res->files = rv->files;
        rv->res->bytes_received = rv->bytes;
        (void) xfer_put_outcome(rv->c, XFER_T_STATUS, rv->res);
        (void) xfer_conn_flush(rv->c);
        return error;
}

static int lost(Recv *rv, int r) {
        rv->res->files = rv->files;
        rv->res->bytes_received = rv->bytes;
        return xfer_fail(rv->res, r, 0, "transfer connection lost while receiving %s: %s", what(rv), strerror(-r));
}

/* Normalises a relative path lexically into out ("a/./b" -> "a/b");
 * false when it goes above its start. */
static bool normalise(const char *path, char *out, size_t outlen) {
        size_t len = 0;

        out[0] = '\0';
        for (const char *p = path; p && *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (len == 0)
                                return false;
                        char *s = strrchr(out, '/');
                        len = s ? (size_t) (s - out) : 0;
                        out[len] = '\0';
                } else if (n > 0 && !(n == 1 && p[0] == '.')) {
                        if (len + n + 2 > outlen)
                                return false;
                        if (len)
                                out[len++] = '/';
                        memcpy(out + len, p, n);
                        len += n;
                        out[len] = '\0';
                }
                p = e ? e + 1 : NULL;
        }
        return len > 0;
}

/* A destination given by the submit side (a remap, Out, Err): relative to
 * Iwd or absolute inside it, as a path relative to Iwd. */
static bool inside_iwd(const Recv *rv, const char *path, char *out, size_t outlen) {
        const char *iwd = rv->job->iwd;
        size_t il = strlen(iwd);

        while (il > 1 && iwd[il - 1] == '/')
                il--;
        if (path[0] == '/') {
                if (strncmp(path, iwd, il) != 0 || (path[il] != '/' && il > 1))
                        return false;
                path += il;
                while (*path == '/')
                        path++;
        }
        return normalise(path, out, outlen);
}

/* Where the entry goes, relative to the root: out. */
static int destination(Recv *rv, const XferHeader *h, char *out, size_t outlen, bool *ret_chosen) {
        *ret_chosen = rv->mode == XFER_RECV_OUTPUT && (h->role != XFER_ROLE_PLAIN);
        if (rv->mode == XFER_RECV_OUTPUT && h->role != XFER_ROLE_PLAIN) {
                const char *p = h->role == XFER_ROLE_STDOUT ? rv->job->out : rv->job->err;
                if (!p || h->kind != XFER_KIND_FILE)
                        return refuse(rv, -EBADMSG, "the execute side sent a job %s the job does not have",
                                      h->role == XFER_ROLE_STDOUT ? "output (Out)" : "error (Err)");
                if (!inside_iwd(rv, p, out, outlen))
                        return refuse(rv, -EPERM, "output file '%s' is outside the job's Iwd '%s'", p, rv->job->iwd);
                return 0;
        }
        if (!xfer_name_ok(h->name))
                return refuse(rv, -EPERM, "refusing %s name '%s': not a plain relative path", what(rv), h->name);
        if (rv->mode == XFER_RECV_OUTPUT)
                for (size_t i = 0; i < rv->job->n_remaps; i++) {
                        const XferRemap *m = &rv->job->remaps[i];
                        size_t nl = strlen(m->name);
                        if (strncmp(h->name, m->name, nl) != 0 || (h->name[nl] != '\0' && h->name[nl] != '/'))
                                continue;
                        char path[XFER_NAME_MAX * 2 + 2];
                        snprintf(path, sizeof path, "%s%s", m->path, h->name + nl);
                        if (!inside_iwd(rv, path, out, outlen))
                                return refuse(rv, -EPERM,
                                              "output file '%s' remapped to '%s', which is outside the job's Iwd '%s'",
                                              h->name, path, rv->job->iwd);
                        *ret_chosen = true;
                        return 0;
                }
        snprintf(out, outlen, "%s", h->name);
        return 0;
}

static void split(char *rel, const char **ret_dir, const char **ret_base) {
        char *s = strrchr(rel, '/');
        if (s) {
                *s = '\0';
                *ret_dir = rel;
                *ret_base = s + 1;
        } else {
                *ret_dir = "";
                *ret_base = rel;
        }
}

/* ".glean-xfer.<16 random hex digits>": random once per process, then
 * counted (a name taken is tried again by O_EXCL's caller). */
static void tmp_name(char buf[64]) {
        static uint64_t next;
        if (next == 0)
                randombytes_buf(&next, sizeof next);
        snprintf(buf, 64, XFER_TMP_PREFIX "%016llx", (unsigned long long) next++);
}

static int recv_file(Recv *rv, const XferHeader *h, int dfd, const char *base, const char *shown) {
        char tmp[64];
        _cleanup_close_ int fd = -1;
        XferSum sha;
        uint64_t got = 0;
        int r;

        if (rv->limit && (h->size > rv->limit || rv->bytes + h->size > rv->limit))
                return refuse(rv, -EFBIG, "%s file '%s' (%" PRIu64 " bytes) exceeds MAX_TRANSFER_%s_MB (%" PRIu64 " MB)",
                              what(rv), shown, h->size, rv->mode == XFER_RECV_INPUT ? "INPUT" : "OUTPUT",
                              rv->limit / (1024 * 1024));
        /* created with its mode (the umask permitting): no fchmod for most */
        mode_t mode = (mode_t) (h->mode & 0777);
        for (int tries = 0; tries < 8; tries++) {
                tmp_name(tmp);
                fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
                if (fd >= 0 || errno != EEXIST)
                        break;
        }
        if (fd < 0)
                return refuse(rv, -errno, "cannot write %s file '%s': %m", what(rv), shown);
        xfer_sum_init(&sha, false);
        for (;;) {
                int type;
                const unsigned char *b;
                size_t n;
                r = xfer_conn_get(rv->c, &type, &b, &n);
                if (r < 0) {
                        (void) unlinkat(dfd, tmp, 0);
                        return lost(rv, r);
                }
                if (type == XFER_T_DATA) {
                        if (n > h->size - got) {
                                (void) unlinkat(dfd, tmp, 0);
                                return refuse(rv, -EBADMSG, "%s file '%s': the sender sent more than the %" PRIu64
                                              " bytes it announced", what(rv), shown, h->size);
                        }
                        xfer_sum_update(&sha, b, n);
                        for (size_t off = 0; off < n;) {
                                ssize_t w = write(fd, b + off, n - off);
                                if (w < 0 && errno == EINTR)
                                        continue;
                                if (w <= 0) {
                                        r = w < 0 ? -errno : -EIO;
                                        (void) unlinkat(dfd, tmp, 0);
                                        return refuse(rv, r, "cannot write %s file '%s': %s", what(rv), shown,
                                                      strerror(-r));
                                }
                                off += (size_t) w;
                        }
                        got += n;
                        continue;
                }
                if (type != XFER_T_SUM || n != crypto_hash_sha256_BYTES || got != h->size) {
                        (void) unlinkat(dfd, tmp, 0);
                        if (type == XFER_T_FAIL) {
                                XferResult o;
                                if (xfer_parse_outcome(b, n, &o) == 0 && o.error < 0) {
                                        rv->hold = o.hold_code;
                                        return refuse(rv, o.error, "%s",
                                                      o.reason[0] ? o.reason : "the sender failed without a reason");
                                }
                        }
                        return refuse(rv, -EBADMSG, "%s file '%s': %s", what(rv), shown,
                                      type == XFER_T_SUM && n == crypto_hash_sha256_BYTES
                                              ? "fewer bytes than announced"
                                              : "malformed transfer (expected data or its checksum)");
                }
                uint8_t sum[crypto_hash_sha256_BYTES];
                xfer_sum_final(&sha, sum);
                if (sodium_memcmp(sum, b, sizeof sum) != 0) {
                        (void) unlinkat(dfd, tmp, 0);
                        return refuse(rv, -EBADMSG, "%s file '%s': checksum mismatch", what(rv), shown);
                }
                break;
        }
        struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, { h->mtime_sec, (long) h->mtime_nsec } };
        if (((mode & ~rv->umask) != mode && fchmod(fd, mode) < 0) || futimens(fd, ts) < 0 || close(TAKE_FD(fd)) < 0 ||
            renameat(dfd, tmp, dfd, base) < 0) {
                r = -errno;
                (void) unlinkat(dfd, tmp, 0);
                return refuse(rv, r, "cannot write %s file '%s': %s", what(rv), shown, strerror(-r));
        }
        rv->bytes += h->size;
        rv->files++;
        return 0;
}

static int recv_entry(Recv *rv, const XferHeader *h) {
        char rel[XFER_NAME_MAX + 1];
        const char *dir, *base;
        int dfd, r;

        bool chosen;
        r = destination(rv, h, rel, sizeof rel, &chosen);
        if (r < 0)
                return r;
        char shown[XFER_NAME_MAX + 1];
        snprintf(shown, sizeof shown, "%s", rel);
        split(rel, &dir, &base);
        /* a plain name's directories are made; a remap's must exist */
        r = open_parent(rv, dir, !chosen, &dfd);
        if (r < 0)
                return refuse(rv, r, "cannot write %s file '%s': %s%s", what(rv), shown, strerror(-r),
                              r == -ENOTDIR || r == -ELOOP ? " (a path through a symbolic link is refused)" : "");
        switch (h->kind) {
        case XFER_KIND_FILE:
                r = recv_file(rv, h, dfd, base, shown);
                break;
        case XFER_KIND_DIR: {
                struct stat st;
                if (mkdirat(dfd, base, 0700) < 0 &&
                    (errno != EEXIST || fstatat(dfd, base, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)))
                        return refuse(rv, errno == EEXIST ? -EEXIST : -errno,
                                      "cannot make %s directory '%s': %s", what(rv), shown,
                                      errno == EEXIST ? "something else has that name" : strerror(errno));
                DirFix *v = realloc(rv->dirs, (rv->n_dirs + 1) * sizeof *v);
                if (!v)
                        return refuse(rv, -ENOMEM, "out of memory");
                rv->dirs = v;
                v[rv->n_dirs] = (DirFix){ .rel = strdup(shown), .mode = h->mode & 0777,
                                          .ts = { { .tv_nsec = UTIME_OMIT }, { h->mtime_sec, (long) h->mtime_nsec } } };
                if (v[rv->n_dirs].rel)
                        rv->n_dirs++;
                break;
        }
        case XFER_KIND_LINK: {
                if (!xfer_link_lexically_inside(dir, h->target))
                        return refuse(rv, -EPERM, "%s symbolic link '%s' -> '%s' leaves the directory", what(rv), shown,
                                      h->target);
                char tmp[64];
                tmp_name(tmp);
                if (symlinkat(h->target, dfd, tmp) < 0)
                        return refuse(rv, -errno, "cannot make %s symbolic link '%s': %m", what(rv), shown);
                if (renameat(dfd, tmp, dfd, base) < 0) {
                        r = -errno;
                        (void) unlinkat(dfd, tmp, 0);
                        return refuse(rv, r, "cannot make %s symbolic link '%s': %s", what(rv), shown, strerror(-r));
                }
                rv->files++;
                break;
        }
        }
        if (r >= 0 && rv->manifest && h->kind == XFER_KIND_FILE)
                r = xfer_manifest_add(rv->manifest, shown, h->size, h->mtime_sec, h->mtime_nsec);
        return r;
}

/* Directories get their mode and time last (adding files changed them),
 * the deepest first. */
static void fix_dirs(Recv *rv) {
        for (size_t i = rv->n_dirs; i-- > 0;) {
                int fd;
                if (xfer_open_dir_beneath(rv->rootfd, rv->dirs[i].rel, false, &fd) < 0)
                        continue;
                (void) fchmod(fd, (mode_t) rv->dirs[i].mode | 0700);
                (void) futimens(fd, rv->dirs[i].ts);
                close(fd);
        }
}

int xfer_recv_files(XferConn *c, XferRecvMode mode, const XferJob *job, const char *dir, XferManifest *manifest,
                    XferResult *res) {
        Recv rv = { .c = c, .mode = mode, .job = job, .dir = dir, .manifest = manifest, .res = res, .cur_fd = -1 };
        int r;

        *res = (XferResult){ 0 };
        rv.hold = mode == XFER_RECV_INPUT ? XFER_HOLD_INPUT : XFER_HOLD_OUTPUT;
        rv.limit = mode == XFER_RECV_INPUT ? job->max_input_bytes : job->max_output_bytes;
        if (sodium_init() < 0)
                return refuse(&rv, -EIO, "cannot initialise libsodium");
        rv.umask = umask(0077);
        umask(rv.umask);
        rv.rootfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (rv.rootfd < 0)
                return refuse(&rv, -errno, "cannot open the %s directory '%s': %m",
                              mode == XFER_RECV_INPUT ? "sandbox" : "Iwd", dir);
        for (;;) {
                int type;
                const unsigned char *b;
                size_t n;
                XferHeader h;
                r = xfer_conn_get(c, &type, &b, &n);
                if (r < 0) {
                        r = lost(&rv, r);
                        break;
                }
                if (type == XFER_T_HEADER) {
                        if (xfer_parse_header(b, n, &h) < 0) {
                                r = refuse(&rv, -EBADMSG, "malformed %s transfer (a bad entry header)", what(&rv));
                                break;
                        }
                        r = recv_entry(&rv, &h);
                        if (r < 0)
                                break;
                        continue;
                }
                if (type == XFER_T_END) {
                        uint64_t files, bytes;
                        if (xfer_parse_end(b, n, &files, &bytes) < 0 || files != rv.files || bytes != rv.bytes) {
                                r = refuse(&rv, -EBADMSG, "malformed %s transfer (the end does not match)", what(&rv));
                                break;
                        }
                        fix_dirs(&rv);
                        res->files = rv.files;
                        res->bytes_received = rv.bytes;
                        r = xfer_put_outcome(c, XFER_T_STATUS, res);
                        if (r >= 0)
                                r = xfer_conn_flush(c);
                        if (r < 0)
                                r = lost(&rv, r);
                        break;
                }
                if (type == XFER_T_FAIL) {
                        XferResult o;
                        if (xfer_parse_outcome(b, n, &o) < 0 || o.error >= 0) {
                                r = refuse(&rv, -EBADMSG, "malformed %s transfer (a bad failure)", what(&rv));
                                break;
                        }
                        rv.hold = o.hold_code;
                        r = refuse(&rv, o.error, "%s", o.reason[0] ? o.reason : "the sender failed without a reason");
                        break;
                }
                r = refuse(&rv, -EBADMSG, "malformed %s transfer (unexpected frame type %d)", what(&rv), type);
                break;
        }
        recv_done(&rv);
        return r < 0 ? r : 0;
}

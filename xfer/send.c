/* SPDX-License-Identifier: Apache-2.0 */
/*
 * send.c — the sending half of a transfer: the list of what goes (the
 * input from Iwd, or the output from the sandbox), built whole first so
 * that a missing or oversized entry fails before any byte moves, then
 * each entry streamed (header, data, checksum) and the receiver's STATUS
 * awaited. Symbolic links inside a directory sent go as links only when
 * they resolve inside the tree sent.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "common/cleanup.h"
#include "xfer-internal.h"

#define LINK_DEPTH_MAX 40

typedef struct Entry {
        char *src;  /* the path read */
        char *name; /* as sent */
        int kind, role;
        bool follow; /* a named entry: a link to it is followed */
        struct stat st;
        char *target;
} Entry;

typedef struct Send {
        XferConn *c;
        const XferJob *job;
        XferResult *res;
        int hold;
        const char *what; /* "input", "output" */
        Entry *v;
        size_t n, cap;
        uint64_t total;
} Send;

static void send_done(Send *s) {
        for (size_t i = 0; i < s->n; i++) {
                free(s->v[i].src);
                free(s->v[i].name);
                free(s->v[i].target);
        }
        free(s->v);
}

static int add(Send *s, const char *src, const char *name, int kind, int role, bool follow, const struct stat *st,
               const char *target) {
        if (strlen(name) > XFER_NAME_MAX)
                return xfer_fail(s->res, -ENAMETOOLONG, s->hold, "%s file '%s': name too long", s->what, src);
        if (s->n == s->cap) {
                size_t cap = s->cap ? s->cap * 2 : 64;
                Entry *v = realloc(s->v, cap * sizeof *v);
                if (!v)
                        return xfer_fail(s->res, -ENOMEM, 0, "out of memory");
                s->v = v;
                s->cap = cap;
        }
        Entry *e = &s->v[s->n];
        *e = (Entry){ .kind = kind, .role = role, .follow = follow, .st = *st };
        e->src = strdup(src);
        e->name = strdup(name);
        e->target = target ? strdup(target) : NULL;
        if (!e->src || !e->name || (target && !e->target)) {
                free(e->src);
                free(e->name);
                free(e->target);
                return xfer_fail(s->res, -ENOMEM, 0, "out of memory");
        }
        s->n++;
        if (kind == XFER_KIND_FILE)
                s->total += (uint64_t) st->st_size;
        return 0;
}

static const char *base_name(const char *p) {
        const char *s = strrchr(p, '/');
        return s ? s + 1 : p;
}

/* ---- whether a link stays inside the tree ---- */

/* Resolves target from cur (a path relative to root, changed in place to
 * where it leads), following the links it meets, refusing any step above
 * root: what the kernel does, bounded by the tree. */
static bool resolve_inside(const char *root, char *cur, size_t curlen, const char *target, int depth) {
        if (depth > LINK_DEPTH_MAX || target[0] == '/')
                return false;
        for (const char *p = target; p && *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                const char *next = e ? e + 1 : NULL;
                if (n == 0 || (n == 1 && p[0] == '.')) {
                        p = next;
                        continue;
                }
                size_t len = strlen(cur);
                if (n == 2 && p[0] == '.' && p[1] == '.') {
                        if (len == 0)
                                return false;
                        char *sl = strrchr(cur, '/');
                        *(sl ? sl : cur) = '\0';
                        p = next;
                        continue;
                }
                if (len + n + 2 > curlen)
                        return false;
                if (len)
                        cur[len++] = '/';
                memcpy(cur + len, p, n);
                cur[len + n] = '\0';
                char full[PATH_MAX * 2];
                struct stat st;
                snprintf(full, sizeof full, "%s/%s", root, cur);
                if (lstat(full, &st) == 0 && S_ISLNK(st.st_mode)) {
                        char t[PATH_MAX];
                        ssize_t tl = readlink(full, t, sizeof t - 1);
                        if (tl <= 0)
                                return false;
                        t[tl] = '\0';
                        cur[len ? len - 1 : 0] = '\0';
                        if (!resolve_inside(root, cur, curlen, t, depth + 1))
                                return false;
                }
                p = next;
        }
        return true;
}

/* ---- the list ---- */

static int add_tree(Send *s, const char *root, const char *src, const char *rel, const char *name_prefix);

/* One entry met inside a directory sent (never followed). */
static int add_child(Send *s, const char *root, const char *src, const char *rel, const char *name) {
        struct stat st;

        if (lstat(src, &st) < 0)
                return xfer_fail(s->res, -errno, s->hold, "cannot read %s file '%s': %m", s->what, src);
        if (S_ISREG(st.st_mode))
                return add(s, src, name, XFER_KIND_FILE, XFER_ROLE_PLAIN, false, &st, NULL);
        if (S_ISDIR(st.st_mode)) {
                int r = add(s, src, name, XFER_KIND_DIR, XFER_ROLE_PLAIN, false, &st, NULL);
                return r < 0 ? r : add_tree(s, root, src, rel, name);
        }
        if (S_ISLNK(st.st_mode)) {
                char t[PATH_MAX], cur[PATH_MAX];
                ssize_t tl = readlink(src, t, sizeof t - 1);
                if (tl <= 0)
                        return xfer_fail(s->res, tl < 0 ? -errno : -EINVAL, s->hold, "cannot read %s link '%s': %m",
                                         s->what, src);
                t[tl] = '\0';
                snprintf(cur, sizeof cur, "%s", rel);
                char *sl = strrchr(cur, '/');
                *(sl ? sl : cur) = '\0';
                if (!resolve_inside(root, cur, sizeof cur, t, 0))
                        return xfer_fail(s->res, -EPERM, s->hold,
                                         "%s symbolic link '%s' -> '%s' points outside the directory sent", s->what, src,
                                         t);
                return add(s, src, name, XFER_KIND_LINK, XFER_ROLE_PLAIN, false, &st, t);
        }
        return xfer_fail(s->res, -EINVAL, s->hold, "%s file '%s' is not a regular file, directory or link", s->what,
                         src);
}

/* The contents of directory src (rel beneath root), named name_prefix/... */
static int add_tree(Send *s, const char *root, const char *src, const char *rel, const char *name_prefix) {
        DIR *d = opendir(src);
        struct dirent *de;
        int r = 0;

        if (!d)
                return xfer_fail(s->res, -errno, s->hold, "cannot read %s directory '%s': %m", s->what, src);
        while ((de = readdir(d))) {
                if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
                        continue;
                _cleanup_free_ char *csrc = NULL, *crel = NULL, *cname = NULL;
                if (asprintf(&csrc, "%s/%s", src, de->d_name) < 0 ||
                    asprintf(&crel, "%s%s%s", rel, *rel ? "/" : "", de->d_name) < 0 ||
                    asprintf(&cname, "%s%s%s", name_prefix, *name_prefix ? "/" : "", de->d_name) < 0) {
                        r = xfer_fail(s->res, -ENOMEM, 0, "out of memory");
                        break;
                }
                r = add_child(s, root, csrc, crel, cname);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

/* The name an entry written "as written" goes under: its basename, or
 * with preserve_relative_paths its relative path (when it has no ".."). */
static void sent_name(const Send *s, const char *as_written, char *out, size_t outlen) {
        char tmp[XFER_NAME_MAX + 1];
        size_t len = strlen(as_written);

        /* without "." and empty components */
        size_t k = 0;
        for (const char *p = as_written; *p;) {
                const char *e = strchr(p, '/');
                size_t n = e ? (size_t) (e - p) : strlen(p);
                if (n > 0 && !(n == 1 && p[0] == '.') && k + n + 2 < sizeof tmp) {
                        if (k || as_written[0] == '/')
                                tmp[k++] = '/';
                        memcpy(tmp + k, p, n);
                        k += n;
                }
                if (!e)
                        break;
                p = e + 1;
        }
        tmp[k] = '\0';
        (void) len;
        if (s->job->preserve_relative_paths && tmp[0] != '/' && xfer_name_ok(tmp)) {
                snprintf(out, outlen, "%s", tmp);
                return;
        }
        snprintf(out, outlen, "%s", base_name(tmp));
}

/* A named entry (TransferInput, TransferOutput): path relative to base. */
static int add_named(Send *s, const char *base, const char *as_written) {
        _cleanup_free_ char *src = NULL;
        char name[XFER_NAME_MAX + 1];
        struct stat st;
        size_t len = strlen(as_written);
        bool contents = len > 1 && as_written[len - 1] == '/';

        if (as_written[0] == '/')
                src = strdup(as_written);
        else if (asprintf(&src, "%s/%s", base, as_written) < 0)
                src = NULL;
        if (!src)
                return xfer_fail(s->res, -ENOMEM, 0, "out of memory");
        if (stat(src, &st) < 0)
                return xfer_fail(s->res, -errno, s->hold, "cannot read %s file '%s': %m", s->what, as_written);
        sent_name(s, as_written, name, sizeof name);
        if (S_ISREG(st.st_mode)) {
                if (contents)
                        return xfer_fail(s->res, -ENOTDIR, s->hold, "cannot read %s directory '%s': %s", s->what,
                                         as_written, strerror(ENOTDIR));
                return add(s, src, name, XFER_KIND_FILE, XFER_ROLE_PLAIN, true, &st, NULL);
        }
        if (!S_ISDIR(st.st_mode))
                return xfer_fail(s->res, -EINVAL, s->hold, "%s file '%s' is not a regular file or directory", s->what,
                                 as_written);
        if (contents)
                return add_tree(s, src, src, "", "");
        if (!*name || strcmp(name, ".") == 0 || strcmp(name, "/") == 0 || strcmp(name, "..") == 0)
                return xfer_fail(s->res, -EINVAL, s->hold, "%s directory '%s' has no name to send it under", s->what,
                                 as_written);
        int r = add(s, src, name, XFER_KIND_DIR, XFER_ROLE_PLAIN, true, &st, NULL);
        return r < 0 ? r : add_tree(s, src, src, "", name);
}

static int add_file_role(Send *s, const char *src, const char *name, int role, bool optional, mode_t or_mode) {
        struct stat st;

        if (stat(src, &st) < 0) {
                if (optional && errno == ENOENT)
                        return 0;
                return xfer_fail(s->res, -errno, s->hold, "cannot read %s file '%s': %m", s->what, src);
        }
        if (!S_ISREG(st.st_mode))
                return xfer_fail(s->res, -EINVAL, s->hold, "%s file '%s' is not a regular file", s->what, src);
        st.st_mode |= or_mode;
        return add(s, src, name, XFER_KIND_FILE, role, true, &st, NULL);
}

/* ---- streaming ---- */

static int adopt_status(Send *s) {
        int type, r;
        const unsigned char *b;
        size_t n;
        XferResult o;
        uint64_t sent = s->res->bytes_sent, files = s->res->files;

        r = xfer_conn_get(s->c, &type, &b, &n);
        if (r < 0)
                return xfer_fail(s->res, r, 0, "transfer connection lost while sending %s: %s", s->what, strerror(-r));
        if (type != XFER_T_STATUS || xfer_parse_outcome(b, n, &o) < 0)
                return xfer_fail(s->res, -EBADMSG, 0, "malformed transfer status from the receiver");
        *s->res = o;
        s->res->bytes_received = 0;
        s->res->bytes_sent = sent;
        s->res->files = o.error < 0 ? files : o.files;
        return o.error;
}

static int send_file(Send *s, const Entry *e, XferHeader *h) {
        _cleanup_close_ int fd = open(e->src, O_RDONLY | O_CLOEXEC | (e->follow ? 0 : O_NOFOLLOW));
        XferSum sha;
        struct stat st;
        uint64_t left = (uint64_t) e->st.st_size;
        int r;

        if (fd < 0 || fstat(fd, &st) < 0)
                return xfer_fail(s->res, -errno, s->hold, "cannot read %s file '%s': %m", s->what, e->src);
        if (!S_ISREG(st.st_mode))
                return xfer_fail(s->res, -EINVAL, s->hold, "%s file '%s' is not a regular file", s->what, e->src);
        if (left >= XFER_DATA_CHUNK)
                (void) posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
        r = xfer_put_header(s->c, h);
        if (r < 0)
                return r;
        xfer_sum_init(&sha, false);
        while (left > 0) {
                size_t want = left < XFER_DATA_CHUNK ? (size_t) left : XFER_DATA_CHUNK;
                unsigned char *room = xfer_conn_data_room(s->c, want);
                if (!room)
                        return -EPIPE;
                ssize_t n = read(fd, room, want);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return xfer_fail(s->res, n < 0 ? -errno : -EIO, s->hold,
                                         "cannot read %s file '%s': %s", s->what, e->src,
                                         n < 0 ? strerror(errno) : "it shrank while being sent");
                xfer_sum_update(&sha, room, (size_t) n);
                r = xfer_conn_commit_data(s->c, (size_t) n);
                if (r < 0)
                        return r;
                left -= (uint64_t) n;
                s->res->bytes_sent += (uint64_t) n;
        }
        uint8_t sum[crypto_hash_sha256_BYTES];
        xfer_sum_final(&sha, sum);
        return xfer_conn_put(s->c, XFER_T_SUM, sum, sizeof sum, NULL, 0);
}

static int stream(Send *s, uint64_t limit, const char *knob) {
        int r;

        if (s->res->error == 0 && limit && s->total > limit)
                xfer_fail(s->res, -EFBIG, s->hold, "%s of %" PRIu64 " bytes exceeds %s (%" PRIu64 " MB)", s->what,
                          s->total, knob, limit / (1024 * 1024));
        for (size_t i = 0; s->res->error == 0 && i < s->n; i++) {
                const Entry *e = &s->v[i];
                XferHeader h = { .kind = e->kind, .role = e->role, .mode = (uint32_t) (e->st.st_mode & 0777),
                                 .mtime_sec = e->st.st_mtim.tv_sec, .mtime_nsec = (uint32_t) e->st.st_mtim.tv_nsec,
                                 .size = e->kind == XFER_KIND_FILE ? (uint64_t) e->st.st_size : 0 };
                snprintf(h.name, sizeof h.name, "%s", e->name);
                if (e->target)
                        snprintf(h.target, sizeof h.target, "%s", e->target);
                if (e->kind == XFER_KIND_FILE)
                        r = send_file(s, e, &h);
                else
                        r = xfer_put_header(s->c, &h);
                if (r < 0 && s->res->error == 0)
                        /* the connection broke: the receiver may have said why */
                        return adopt_status(s);
                if (r < 0)
                        break;
                if (e->kind != XFER_KIND_DIR)
                        s->res->files++;
                /* an early STATUS (a refusal): looked for every 64 entries and after a big file */
                if ((i % 64 == 63 || e->st.st_size >= (off_t) XFER_DATA_CHUNK) && xfer_conn_pending(s->c))
                        return adopt_status(s) < 0 ? s->res->error
                                                   : xfer_fail(s->res, -EBADMSG, 0, "the receiver ended early");
        }
        if (s->res->error < 0) {
                /* our own failure: the receiver learns it, and both keep ours */
                XferResult mine = *s->res;
                if (xfer_put_outcome(s->c, XFER_T_FAIL, &mine) >= 0)
                        (void) adopt_status(s);
                *s->res = mine;
                return s->res->error;
        }
        r = xfer_put_end(s->c, s->res->files, s->res->bytes_sent);
        if (r < 0)
                return adopt_status(s);
        return adopt_status(s);
}

int xfer_send_input_files(XferConn *c, const XferJob *job, XferResult *res) {
        Send s = { .c = c, .job = job, .res = res, .hold = XFER_HOLD_INPUT, .what = "input" };
        int r = 0;

        *res = (XferResult){ 0 };
        if (sodium_init() < 0)
                r = xfer_fail(res, -EIO, 0, "cannot initialise libsodium");
        if (r >= 0 && job->transfer_executable && job->cmd)
                r = add_file_role(&s, job->cmd, base_name(job->cmd), XFER_ROLE_PLAIN, false, S_IXUSR);
        if (r >= 0 && job->in) {
                _cleanup_free_ char *src = NULL;
                if (job->in[0] == '/' ? !(src = strdup(job->in)) : asprintf(&src, "%s/%s", job->iwd, job->in) < 0)
                        r = xfer_fail(res, -ENOMEM, 0, "out of memory");
                else
                        r = add_file_role(&s, src, base_name(job->in), XFER_ROLE_PLAIN, false, 0);
        }
        for (size_t i = 0; r >= 0 && i < job->n_input; i++)
                r = add_named(&s, job->iwd, job->input[i]);
        r = stream(&s, job->max_input_bytes, "MAX_TRANSFER_INPUT_MB");
        send_done(&s);
        return r;
}

static bool is_std_name(const XferJob *job, const char *name) {
        return strcmp(name, XFER_STDOUT_NAME) == 0 || strcmp(name, XFER_STDERR_NAME) == 0 ||
               (job->out && strcmp(name, base_name(job->out)) == 0) ||
               (job->err && strcmp(name, base_name(job->err)) == 0);
}

/* The new and changed files of the sandbox's top level. */
static int add_automatic(Send *s, const char *sandbox, const XferManifest *manifest) {
        DIR *d = opendir(sandbox);
        struct dirent *de;
        int r = 0;

        if (!d)
                return xfer_fail(s->res, -errno, s->hold, "cannot read the sandbox '%s': %m", sandbox);
        while ((de = readdir(d))) {
                const char *n = de->d_name;
                struct stat st;
                if (n[0] == '.' && (!n[1] || (n[1] == '.' && !n[2])))
                        continue;
                if (strncmp(n, XFER_TMP_PREFIX, sizeof XFER_TMP_PREFIX - 1) == 0 || is_std_name(s->job, n) ||
                    (s->job->transfer_executable && s->job->cmd && strcmp(n, base_name(s->job->cmd)) == 0))
                        continue;
                if (fstatat(dirfd(d), n, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
                        continue;
                const XferManifestEntry *m = xfer_manifest_find(manifest, n);
                if (m && m->size == (uint64_t) st.st_size && m->mtime_sec == st.st_mtim.tv_sec &&
                    m->mtime_nsec == (uint32_t) st.st_mtim.tv_nsec)
                        continue;
                _cleanup_free_ char *src = NULL;
                if (asprintf(&src, "%s/%s", sandbox, n) < 0) {
                        r = xfer_fail(s->res, -ENOMEM, 0, "out of memory");
                        break;
                }
                r = add(s, src, n, XFER_KIND_FILE, XFER_ROLE_PLAIN, false, &st, NULL);
                if (r < 0)
                        break;
        }
        closedir(d);
        return r;
}

/* Out or Err: the sandbox's _condor_stdout (or the file named like Out). */
static int add_std(Send *s, const char *sandbox, const char *path, const char *std_name, int role) {
        _cleanup_free_ char *a = NULL, *b = NULL;
        struct stat st;

        if (asprintf(&a, "%s/%s", sandbox, std_name) < 0 || asprintf(&b, "%s/%s", sandbox, base_name(path)) < 0)
                return xfer_fail(s->res, -ENOMEM, 0, "out of memory");
        const char *src = lstat(a, &st) == 0 ? a : b;
        if (lstat(src, &st) < 0)
                return 0; /* the job wrote nothing there */
        if (!S_ISREG(st.st_mode))
                return xfer_fail(s->res, -EINVAL, s->hold, "output file '%s' is not a regular file", src);
        return add(s, src, base_name(path), XFER_KIND_FILE, role, false, &st, NULL);
}

int xfer_send_output_files(XferConn *c, const XferJob *job, const char *sandbox, const XferManifest *manifest,
                           XferResult *res) {
        Send s = { .c = c, .job = job, .res = res, .hold = XFER_HOLD_OUTPUT, .what = "output" };
        int r = 0;

        *res = (XferResult){ 0 };
        if (sodium_init() < 0)
                r = xfer_fail(res, -EIO, 0, "cannot initialise libsodium");
        if (r >= 0 && job->output_given)
                for (size_t i = 0; r >= 0 && i < job->n_output; i++)
                        r = add_named(&s, sandbox, job->output[i]);
        else if (r >= 0)
                r = add_automatic(&s, sandbox, manifest);
        if (r >= 0 && job->out)
                r = add_std(&s, sandbox, job->out, XFER_STDOUT_NAME, XFER_ROLE_STDOUT);
        if (r >= 0 && job->err)
                r = add_std(&s, sandbox, job->err, XFER_STDERR_NAME, XFER_ROLE_STDERR);
        r = stream(&s, job->max_output_bytes, "MAX_TRANSFER_OUTPUT_MB");
        send_done(&s);
        return r;
}

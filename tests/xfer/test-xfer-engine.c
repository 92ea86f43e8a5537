/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-xfer-engine.c — the transfer workers over a socketpair, without
 * crypto or a user switch (xfer/xfer-internal.h): a file, the executable
 * and In; a directory with and without a trailing slash;
 * preserve_relative_paths; mode and mtime kept; a symbolic link inside a
 * directory kept as a link, one escaping it refused (13, naming it); a
 * missing input (13, naming it); input and output over their limits (13,
 * 12); the automatic output (new and changed files only), Out and Err,
 * TransferOutput with a missing entry (12); remaps inside Iwd followed
 * and outside refused (12). A hostile sender (more bytes than announced,
 * a wrong checksum, "../x", an absolute name, a name through a link in
 * the sandbox) leaves nothing under the real name and nothing outside;
 * a sender killed mid-file leaves nothing; a receiver killed mid-file
 * leaves only .glean-xfer.* files, which the next receive removes.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include <CUnit/CUnit.h>

#include "test-util.h"
#include "xfer/xfer-internal.h"

#define TIMEOUT_MS 10000

static char top[64]; /* a fresh directory per test: iwd/, box/ (the sandbox), out/ (a second Iwd) */
static char iwd[128], box[128], oiwd[128];

static void mkpath(const char *path, const char *content, mode_t mode, time_t mtime) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s", path);
        for (char *p = tmp + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        (void) mkdir(tmp, 0755);
                        *p = '/';
                }
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, mode);
        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_FATAL(write(fd, content, strlen(content)) == (ssize_t) strlen(content));
        fchmod(fd, mode);
        if (mtime) {
                struct timespec ts[2] = { { mtime, 0 }, { mtime, 123456789 } };
                futimens(fd, ts);
        }
        close(fd);
}

static void fresh(void) {
        snprintf(top, sizeof top, "/tmp/glean-xfer-test-XXXXXX");
        CU_ASSERT_FATAL(mkdtemp(top) != NULL);
        snprintf(iwd, sizeof iwd, "%s/iwd", top);
        snprintf(box, sizeof box, "%s/box", top);
        snprintf(oiwd, sizeof oiwd, "%s/out", top);
        CU_ASSERT_FATAL(mkdir(iwd, 0755) == 0 && mkdir(box, 0700) == 0 && mkdir(oiwd, 0755) == 0);
}

static void cleanup(void) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", top);
        CU_ASSERT(system(cmd) == 0);
}

static char *slurp(const char *dir, const char *name) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        char *text = NULL;
        size_t len = 0;
        FILE *f = fopen(path, "r");
        if (!f)
                return NULL;
        text = calloc(1, 1 << 20);
        len = fread(text, 1, (1 << 20) - 1, f);
        text[len] = '\0';
        fclose(f);
        return text;
}

static bool has(const char *dir, const char *name, const char *content) {
        char *t = slurp(dir, name);
        bool ok = t && (!content || strcmp(t, content) == 0);
        free(t);
        return ok;
}

static bool exists(const char *dir, const char *name) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, name);
        return lstat(path, &st) == 0;
}

/* How many entries of dir (one level) start with prefix ("" for all). */
static int count(const char *dir, const char *prefix) {
        DIR *d = opendir(dir);
        struct dirent *de;
        int n = 0;
        if (!d)
                return -1;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && !strncmp(de->d_name, prefix, strlen(prefix)))
                        n++;
        closedir(d);
        return n;
}

static XferJob *job_of(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static XferJob *job_of(const char *fmt, ...) {
        char text[4096], why[256] = "";
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof text, fmt, ap);
        va_end(ap);
        ClassAd *ad = NULL;
        CaError err;
        CU_ASSERT_FATAL(classad_parse(text, strlen(text), CA_MODE_OLD, &ad, &err) == 0);
        XferJob *j = NULL;
        int r = xfer_job_from_ad(ad, 0, 0, &j, why, sizeof why);
        GLEAN_TEST_CHECK_FATAL(r == 0, "job %s: %s", text, why);
        classad_free(ad);
        return j;
}

/* ---- a pair of workers ---- */

typedef struct Serve {
        int fd;
        const XferJob *job;
        XferResult res;
        int r;
} Serve;

static void *serve_thread(void *p) {
        Serve *s = p;
        s->r = xfer_worker_serve(s->fd, s->fd, s->job, TIMEOUT_MS, &s->res);
        close(s->fd);
        return NULL;
}

/* The execute side fetches (output false) or sends output (true) against
 * a submit side serving sub; res_e and res_s the two ends' results. */
static int pair(const XferJob *sub, const XferJob *exe, bool output, XferManifest *man, XferResult *res_e,
                XferResult *res_s) {
        int sv[2];
        pthread_t t;
        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        Serve s = { .fd = sv[1], .job = sub };
        CU_ASSERT_FATAL(pthread_create(&t, NULL, serve_thread, &s) == 0);
        int r = output ? xfer_worker_output(sv[0], sv[0], exe, box, man, TIMEOUT_MS, res_e)
                       : xfer_worker_fetch(sv[0], sv[0], exe, box, TIMEOUT_MS, man, res_e);
        close(sv[0]);
        pthread_join(t, NULL);
        *res_s = s.res;
        /* both ends agree */
        GLEAN_TEST_CHECK(res_e->error == res_s->error && res_e->hold_code == res_s->hold_code &&
                                 strcmp(res_e->reason, res_s->reason) == 0,
                         "the ends disagree: execute %d/%d '%s', submit %d/%d '%s'", res_e->error, res_e->hold_code,
                         res_e->reason, res_s->error, res_s->hold_code, res_s->reason);
        return r;
}

static void test_file_exe_in(void) {
        fresh();
        char p[256];
        snprintf(p, sizeof p, "%s/bin/prog", iwd);
        mkpath(p, "#!/bin/sh\necho hi\n", 0750, 1000000000);
        snprintf(p, sizeof p, "%s/in.dat", iwd);
        mkpath(p, "stdin data\n", 0640, 1100000000);
        snprintf(p, sizeof p, "%s/a.txt", iwd);
        mkpath(p, "alpha\n", 0604, 1200000000);
        XferJob *j = job_of("[ Iwd = \"%s\"; Cmd = \"bin/prog\"; In = \"in.dat\"; TransferInput = \"a.txt\" ]", iwd);
        XferResult re, rs;
        XferManifest man = { 0 };
        int r = pair(j, j, false, &man, &re, &rs);
        GLEAN_TEST_CHECK_FATAL(r == 0, "fetch gave %d: %s", r, re.reason);
        CU_ASSERT(has(box, "prog", "#!/bin/sh\necho hi\n") && has(box, "in.dat", "stdin data\n") &&
                  has(box, "a.txt", "alpha\n"));
        CU_ASSERT_EQUAL(count(box, ""), 3);
        CU_ASSERT(re.files == 3 && rs.files == 3 && re.bytes_received == 18 + 11 + 6 && rs.bytes_sent == 35);
        struct stat st;
        snprintf(p, sizeof p, "%s/prog", box);
        CU_ASSERT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0750 && st.st_mtim.tv_sec == 1000000000 &&
                  st.st_mtim.tv_nsec == 123456789);
        snprintf(p, sizeof p, "%s/a.txt", box);
        CU_ASSERT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0604 && st.st_mtim.tv_sec == 1200000000);
        CU_ASSERT(man.n == 3 && xfer_manifest_find(&man, "a.txt") && xfer_manifest_find(&man, "a.txt")->size == 6);
        /* the manifest's text round-trips, odd names too */
        CU_ASSERT(xfer_manifest_add(&man, "we%ird\nname", 1, 2, 3) == 0);
        char *text = xfer_manifest_to_text(&man);
        XferManifest back = { 0 };
        CU_ASSERT(text && xfer_manifest_parse(text, strlen(text), &back) == 0 && back.n == 4 &&
                  xfer_manifest_find(&back, "we%ird\nname") && xfer_manifest_find(&back, "we%ird\nname")->mtime_nsec == 3);
        CU_ASSERT_EQUAL(xfer_manifest_parse("12 x 3 a\n", 9, &back), -EBADMSG);
        free(text);
        xfer_manifest_clear(&back);
        xfer_manifest_clear(&man);
        xfer_job_free(j);
        cleanup();
}

/* iwd/d: f1, sub/f2, good -> sub/f2, up -> ../d/f1 (inside, through the tree's own name is refused
 * unless it stays beneath: "sub/../f1" is used instead) */
static void make_tree(bool escaping) {
        char p[256];
        snprintf(p, sizeof p, "%s/d/f1", iwd);
        mkpath(p, "one\n", 0644, 0);
        snprintf(p, sizeof p, "%s/d/sub/f2", iwd);
        mkpath(p, "two\n", 0600, 0);
        snprintf(p, sizeof p, "%s/d/good", iwd);
        CU_ASSERT_FATAL(symlink("sub/f2", p) == 0);
        snprintf(p, sizeof p, "%s/d/sub/back", iwd);
        CU_ASSERT_FATAL(symlink("../f1", p) == 0);
        if (escaping) {
                snprintf(p, sizeof p, "%s/d/sub/bad", iwd);
                CU_ASSERT_FATAL(symlink("../../secret", p) == 0);
                snprintf(p, sizeof p, "%s/secret", iwd);
                mkpath(p, "secret\n", 0600, 0);
        }
}

static void test_directory(void) {
        for (int slash = 0; slash < 2; slash++) {
                fresh();
                make_tree(false);
                XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"%s\" ]", iwd,
                                    slash ? "d/" : "d");
                XferResult re, rs;
                int r = pair(j, j, false, NULL, &re, &rs);
                GLEAN_TEST_CHECK_FATAL(r == 0, "fetch gave %d: %s", r, re.reason);
                char d[256];
                snprintf(d, sizeof d, "%s%s", box, slash ? "" : "/d");
                CU_ASSERT(has(d, "f1", "one\n") && has(d, "sub/f2", "two\n"));
                CU_ASSERT(has(d, "good", "two\n") && has(d, "sub/back", "one\n"));
                char p[512], t[64] = "";
                snprintf(p, sizeof p, "%s/good", d);
                CU_ASSERT(readlink(p, t, sizeof t - 1) == 6 && strcmp(t, "sub/f2") == 0);
                CU_ASSERT_EQUAL(count(box, ""), slash ? 3 : 1);
                struct stat st;
                snprintf(p, sizeof p, "%s/sub/f2", d);
                CU_ASSERT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0600);
                xfer_job_free(j);
                cleanup();
        }
}

static void test_preserve(void) {
        for (int keep = 0; keep < 2; keep++) {
                fresh();
                char p[256];
                snprintf(p, sizeof p, "%s/a/b/c.txt", iwd);
                mkpath(p, "c\n", 0644, 0);
                snprintf(p, sizeof p, "%s/x/b/c2.txt", iwd);
                mkpath(p, "c2\n", 0644, 0);
                XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a/b/c.txt, ./x/b/c2.txt\"; "
                                    "PreserveRelativePaths = %s ]",
                                    iwd, keep ? "true" : "false");
                XferResult re, rs;
                int r = pair(j, j, false, NULL, &re, &rs);
                GLEAN_TEST_CHECK_FATAL(r == 0, "fetch gave %d: %s", r, re.reason);
                if (keep) {
                        CU_ASSERT(has(box, "a/b/c.txt", "c\n") && !exists(box, "c.txt") && has(box, "x/b/c2.txt", "c2\n"));
                } else {
                        CU_ASSERT(has(box, "c.txt", "c\n") && has(box, "c2.txt", "c2\n") && count(box, "") == 2);
                }
                xfer_job_free(j);
                cleanup();
        }
}

static void expect_hold(int r, const XferResult *re, int hold, const char *names) {
        GLEAN_TEST_CHECK(r < 0 && re->error == r && re->hold_code == hold && strstr(re->reason, names),
                         "gave %d hold %d '%s', want hold %d naming '%s'", r, re->hold_code, re->reason, hold, names);
}

static void test_escaping_link(void) {
        fresh();
        make_tree(true);
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"d\" ]", iwd);
        XferResult re, rs;
        int r = pair(j, j, false, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_INPUT, "d/sub/bad");
        CU_ASSERT_EQUAL(count(box, ""), 0);
        xfer_job_free(j);
        cleanup();

        /* a link to "." then ".." out of it: the kernel's way is followed, not the text's */
        fresh();
        char p[256];
        snprintf(p, sizeof p, "%s/d/f", iwd);
        mkpath(p, "f\n", 0644, 0);
        snprintf(p, sizeof p, "%s/d/dot", iwd);
        CU_ASSERT_FATAL(symlink(".", p) == 0);
        snprintf(p, sizeof p, "%s/d/sneaky", iwd);
        CU_ASSERT_FATAL(symlink("dot/../d/f", p) == 0);
        j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"d/\" ]", iwd);
        r = pair(j, j, false, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_INPUT, "sneaky");
        xfer_job_free(j);
        cleanup();
}

static void test_missing_and_limits(void) {
        fresh();
        char p[256];
        snprintf(p, sizeof p, "%s/a.txt", iwd);
        mkpath(p, "0123456789", 0644, 0);
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a.txt, data/missing.txt\" ]",
                            iwd);
        XferResult re, rs;
        int r = pair(j, j, false, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_INPUT, "data/missing.txt");
        CU_ASSERT(re.hold_subcode == ENOENT && strstr(re.reason, "No such file"));
        CU_ASSERT_EQUAL(count(box, ""), 0);
        xfer_job_free(j);

        /* the executable missing */
        j = job_of("[ Iwd = \"%s\"; Cmd = \"nope\" ]", iwd);
        r = pair(j, j, false, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_INPUT, "nope");
        xfer_job_free(j);

        /* too big: 10 bytes against a limit of 0.000001 MB (1 byte) */
        j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a.txt\"; MaxTransferInputMB = 0.000001 ]",
                   iwd);
        r = pair(j, j, false, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_INPUT, "exceeds MAX_TRANSFER_INPUT_MB");
        CU_ASSERT_EQUAL(count(box, ""), 0);
        /* the receiver keeps its own limit against a sender that does not */
        XferJob *big = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a.txt\" ]", iwd);
        r = pair(big, j, false, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_INPUT, "a.txt");
        CU_ASSERT(strstr(re.reason, "exceeds MAX_TRANSFER_INPUT_MB") != NULL);
        CU_ASSERT_EQUAL(count(box, ""), 0);
        xfer_job_free(j);
        xfer_job_free(big);

        /* output too big */
        snprintf(p, sizeof p, "%s/o.dat", box);
        mkpath(p, "0123456789", 0644, 0);
        j = job_of("[ Iwd = \"%s\"; TransferExecutable = false; MaxTransferOutputMB = 0.000001 ]", oiwd);
        r = pair(j, j, true, NULL, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_OUTPUT, "exceeds MAX_TRANSFER_OUTPUT_MB");
        CU_ASSERT_EQUAL(count(oiwd, ""), 0);
        xfer_job_free(j);
        cleanup();
}

static void test_output(void) {
        fresh();
        char p[256];
        snprintf(p, sizeof p, "%s/prog", iwd);
        mkpath(p, "#!/bin/sh\n", 0755, 0);
        snprintf(p, sizeof p, "%s/keep.txt", iwd);
        mkpath(p, "same\n", 0644, 1000000000);
        snprintf(p, sizeof p, "%s/change.txt", iwd);
        mkpath(p, "before\n", 0644, 1000000000);
        XferJob *j = job_of("[ Iwd = \"%s\"; Cmd = \"prog\"; TransferInput = \"keep.txt,change.txt\"; Out = \"logs/out.txt\"; "
                            "Err = \"%s/err.txt\" ]",
                            iwd, oiwd);
        XferResult re, rs;
        XferManifest man = { 0 };
        int r = pair(j, j, false, &man, &re, &rs);
        GLEAN_TEST_CHECK_FATAL(r == 0, "fetch gave %d: %s", r, re.reason);
        /* the job: changes one file, makes a new one, a directory, its stdout and stderr */
        snprintf(p, sizeof p, "%s/change.txt", box);
        mkpath(p, "after!\n", 0644, 0);
        snprintf(p, sizeof p, "%s/new.txt", box);
        mkpath(p, "new\n", 0640, 0);
        snprintf(p, sizeof p, "%s/newdir/x", box);
        mkpath(p, "x\n", 0644, 0);
        snprintf(p, sizeof p, "%s/" XFER_STDOUT_NAME, box);
        mkpath(p, "stdout\n", 0644, 0);
        snprintf(p, sizeof p, "%s/" XFER_STDERR_NAME, box);
        mkpath(p, "stderr\n", 0644, 0);
        snprintf(p, sizeof p, "%s/.glean-xfer.leftover", box);
        mkpath(p, "junk", 0644, 0);

        XferJob *sub = job_of("[ Iwd = \"%s\"; Cmd = \"prog\"; Out = \"logs/out.txt\"; Err = \"%s/err.txt\" ]", oiwd, oiwd);
        snprintf(p, sizeof p, "%s/logs", oiwd);
        CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
        r = pair(sub, j, true, &man, &re, &rs);
        GLEAN_TEST_CHECK_FATAL(r == 0, "output gave %d: %s", r, re.reason);
        CU_ASSERT(has(oiwd, "change.txt", "after!\n") && has(oiwd, "new.txt", "new\n"));
        CU_ASSERT(has(oiwd, "logs/out.txt", "stdout\n") && has(oiwd, "err.txt", "stderr\n"));
        CU_ASSERT(!exists(oiwd, "keep.txt") && !exists(oiwd, "prog") && !exists(oiwd, "newdir") &&
                  !exists(oiwd, XFER_STDOUT_NAME) && !exists(oiwd, ".glean-xfer.leftover"));
        CU_ASSERT_EQUAL(count(oiwd, ""), 4);
        CU_ASSERT(rs.files == 4 && re.files == 4);
        struct stat st;
        snprintf(p, sizeof p, "%s/new.txt", oiwd);
        CU_ASSERT(stat(p, &st) == 0 && (st.st_mode & 0777) == 0640);
        xfer_job_free(sub);

        /* TransferOutput given: exactly those, a directory with its tree; a missing one holds (12) naming it */
        sub = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferOutput = \"newdir, keep.txt\" ]", oiwd);
        XferJob *exe = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferOutput = \"newdir, keep.txt\" ]", iwd);
        r = pair(sub, exe, true, &man, &re, &rs);
        GLEAN_TEST_CHECK(r == 0, "output gave %d: %s", r, re.reason);
        CU_ASSERT(has(oiwd, "newdir/x", "x\n") && has(oiwd, "keep.txt", "same\n"));
        xfer_job_free(exe);
        exe = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferOutput = \"newdir, results/none.dat\" ]", iwd);
        r = pair(sub, exe, true, &man, &re, &rs);
        expect_hold(r, &re, XFER_HOLD_OUTPUT, "results/none.dat");
        xfer_job_free(exe);
        xfer_job_free(sub);
        xfer_manifest_clear(&man);
        xfer_job_free(j);
        cleanup();
}

static void test_remaps(void) {
        fresh();
        char p[256];
        snprintf(p, sizeof p, "%s/o1", box);
        mkpath(p, "o1\n", 0644, 0);
        snprintf(p, sizeof p, "%s/res", oiwd);
        CU_ASSERT_FATAL(mkdir(p, 0755) == 0);
        XferJob *exe = job_of("[ Iwd = \"%s\"; TransferExecutable = false ]", iwd);
        XferJob *sub = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferOutputRemaps = \"o1 = res/one.txt\" ]",
                              oiwd);
        XferResult re, rs;
        int r = pair(sub, exe, true, NULL, &re, &rs);
        GLEAN_TEST_CHECK(r == 0, "output gave %d: %s", r, re.reason);
        CU_ASSERT(has(oiwd, "res/one.txt", "o1\n") && !exists(oiwd, "o1"));
        xfer_job_free(sub);

        /* absolute inside Iwd */
        sub = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferOutputRemaps = \"o1 = %s/res/two.txt\" ]", oiwd,
                     oiwd);
        r = pair(sub, exe, true, NULL, &re, &rs);
        GLEAN_TEST_CHECK(r == 0, "output gave %d: %s", r, re.reason);
        CU_ASSERT(has(oiwd, "res/two.txt", "o1\n"));
        xfer_job_free(sub);

        /* outside: by "..", absolute elsewhere, through a link that leaves Iwd */
        snprintf(p, sizeof p, "%s/esc", oiwd);
        CU_ASSERT_FATAL(symlink(top, p) == 0);
        const char *bad[] = { "../o1.txt", "/tmp/o1.txt", "res/../../o1.txt", "esc/o1.txt" };
        for (size_t i = 0; i < 4; i++) {
                sub = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferOutputRemaps = \"o1 = %s\" ]", oiwd, bad[i]);
                r = pair(sub, exe, true, NULL, &re, &rs);
                expect_hold(r, &re, XFER_HOLD_OUTPUT, "o1");
                xfer_job_free(sub);
        }
        CU_ASSERT(!exists(top, "o1.txt") && access("/tmp/o1.txt", F_OK) < 0);
        CU_ASSERT_EQUAL(count(top, ""), 3);
        xfer_job_free(exe);
        cleanup();
}

/* ---- a hostile sender ---- */

typedef struct Fetch {
        int fd;
        const XferJob *job;
        XferResult res;
        int r;
} Fetch;

static void *fetch_thread(void *p) {
        Fetch *f = p;
        f->r = xfer_worker_fetch(f->fd, f->fd, f->job, box, TIMEOUT_MS, NULL, &f->res);
        close(f->fd);
        return NULL;
}

static void put_file(XferConn *c, const char *name, const char *data, uint64_t announce, const char *extra,
                     bool bad_sum) {
        XferHeader h = { .kind = XFER_KIND_FILE, .mode = 0644, .size = announce };
        snprintf(h.name, sizeof h.name, "%s", name);
        xfer_put_header(c, &h);
        size_t len = strlen(data);
        if (len)
                xfer_conn_put(c, XFER_T_DATA, data, len, NULL, 0);
        if (extra)
                xfer_conn_put(c, XFER_T_DATA, extra, strlen(extra), NULL, 0);
        uint8_t sum[32];
        crypto_hash_sha256(sum, (const unsigned char *) data, len);
        if (bad_sum)
                sum[0] ^= 1;
        xfer_conn_put(c, XFER_T_SUM, sum, sizeof sum, NULL, 0);
        xfer_put_end(c, 1, announce);
        xfer_conn_flush(c);
}

static void test_hostile_sender(void) {
        static const struct {
                const char *name, *data, *extra;
                uint64_t announce;
                bool bad_sum;
                const char *why;
        } rows[] = {
                { "more.txt", "12345", "6789", 5, false, "more than the 5 bytes" },
                { "less.txt", "123", NULL, 5, false, "fewer bytes than announced" },
                { "sum.txt", "12345", NULL, 5, true, "checksum mismatch" },
                { "../x", "x", NULL, 1, false, "not a plain relative path" },
                { "a/../../x", "x", NULL, 1, false, "not a plain relative path" },
                { "/tmp/glean-xfer-abs", "x", NULL, 1, false, "not a plain relative path" },
                { "link/x", "x", NULL, 1, false, "symbolic link" },
                { ".glean-xfer.sneak", "x", NULL, 1, false, "not a plain relative path" },
        };
        CU_ASSERT_FATAL(sodium_init() >= 0);
        for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
                fresh();
                char p[256];
                snprintf(p, sizeof p, "%s/link", box);
                CU_ASSERT_FATAL(symlink(top, p) == 0);
                XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false ]", iwd);
                int sv[2];
                pthread_t t;
                CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
                Fetch f = { .fd = sv[1], .job = j };
                CU_ASSERT_FATAL(pthread_create(&t, NULL, fetch_thread, &f) == 0);
                XferConn c;
                CU_ASSERT_FATAL(xfer_conn_init(&c, sv[0], sv[0], TIMEOUT_MS) == 0);
                int type;
                const unsigned char *b;
                size_t n;
                CU_ASSERT(xfer_conn_get(&c, &type, &b, &n) == 0 && type == XFER_T_REQUEST);
                put_file(&c, rows[i].name, rows[i].data, rows[i].announce, rows[i].extra, rows[i].bad_sum);
                pthread_join(t, NULL);
                /* the receiver said why */
                XferResult st = { 0 };
                CU_ASSERT(xfer_conn_get(&c, &type, &b, &n) == 0 && type == XFER_T_STATUS &&
                          xfer_parse_outcome(b, n, &st) == 0 && st.error < 0);
                xfer_conn_done(&c);
                close(sv[0]);
                GLEAN_TEST_CHECK(f.r < 0 && f.res.hold_code == XFER_HOLD_INPUT && strstr(f.res.reason, rows[i].why),
                                 "row %zu (%s): gave %d hold %d '%s', want '%s'", i, rows[i].name, f.r, f.res.hold_code,
                                 f.res.reason, rows[i].why);
                GLEAN_TEST_CHECK(count(box, "") == 1 && count(top, "") == 3 && access("/tmp/glean-xfer-abs", F_OK) < 0,
                                 "row %zu (%s): something was written", i, rows[i].name);
                xfer_job_free(j);
                cleanup();
        }
}

/* A sender killed mid-file: nothing under the real name. A receiver
 * killed mid-file: only the aside file, removed by the next receive. */
static void test_interrupted(void) {
        fresh();
        CU_ASSERT_FATAL(sodium_init() >= 0);
        XferJob *j = job_of("[ Iwd = \"%s\"; TransferExecutable = false ]", iwd);
        int sv[2];
        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
                XferConn c;
                int type;
                const unsigned char *b;
                size_t n;
                close(sv[1]);
                xfer_conn_init(&c, sv[0], sv[0], TIMEOUT_MS);
                xfer_conn_get(&c, &type, &b, &n);
                XferHeader h = { .kind = XFER_KIND_FILE, .mode = 0644, .size = 1000 };
                snprintf(h.name, sizeof h.name, "big.dat");
                xfer_put_header(&c, &h);
                xfer_conn_put(&c, XFER_T_DATA, "half", 4, NULL, 0);
                xfer_conn_flush(&c);
                pause();
                _exit(0);
        }
        close(sv[0]);
        Fetch f = { .fd = sv[1], .job = j };
        pthread_t t;
        CU_ASSERT_FATAL(pthread_create(&t, NULL, fetch_thread, &f) == 0);
        for (int i = 0; i < 500 && count(box, ".glean-xfer.") == 0; i++)
                usleep(2000);
        CU_ASSERT_EQUAL(count(box, ".glean-xfer."), 1);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        pthread_join(t, NULL);
        CU_ASSERT(f.r < 0 && f.res.hold_code == 0 && strstr(f.res.reason, "connection lost"));
        CU_ASSERT_EQUAL(count(box, ""), 0);

        /* the receiver killed: its aside file stays */
        CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == 0);
        pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
                XferResult res;
                close(sv[0]);
                xfer_worker_fetch(sv[1], sv[1], j, box, TIMEOUT_MS, NULL, &res);
                _exit(0);
        }
        close(sv[1]);
        XferConn c;
        int type;
        const unsigned char *b;
        size_t n;
        xfer_conn_init(&c, sv[0], sv[0], TIMEOUT_MS);
        CU_ASSERT(xfer_conn_get(&c, &type, &b, &n) == 0);
        XferHeader h = { .kind = XFER_KIND_FILE, .mode = 0644, .size = 1000 };
        snprintf(h.name, sizeof h.name, "big.dat");
        xfer_put_header(&c, &h);
        xfer_conn_put(&c, XFER_T_DATA, "half", 4, NULL, 0);
        xfer_conn_flush(&c);
        for (int i = 0; i < 500 && count(box, ".glean-xfer.") == 0; i++)
                usleep(2000);
        usleep(20000);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        xfer_conn_done(&c);
        close(sv[0]);
        CU_ASSERT(count(box, ".glean-xfer.") == 1 && count(box, "") == 1 && !exists(box, "big.dat"));

        /* the next receive removes it */
        char p[256];
        snprintf(p, sizeof p, "%s/a.txt", iwd);
        mkpath(p, "a\n", 0644, 0);
        XferJob *k = job_of("[ Iwd = \"%s\"; TransferExecutable = false; TransferInput = \"a.txt\" ]", iwd);
        XferResult re, rs;
        CU_ASSERT_EQUAL(pair(k, k, false, NULL, &re, &rs), 0);
        CU_ASSERT(count(box, ".glean-xfer.") == 0 && has(box, "a.txt", "a\n") && count(box, "") == 1);
        xfer_job_free(k);
        xfer_job_free(j);
        cleanup();
}

static CU_TestInfo tests[] = {
        { "file, executable and In", test_file_exe_in },
        { "directory with and without slash", test_directory },
        { "preserve_relative_paths", test_preserve },
        { "escaping link refused", test_escaping_link },
        { "missing input and limits", test_missing_and_limits },
        { "output: automatic, Out/Err, named", test_output },
        { "remaps", test_remaps },
        { "hostile sender", test_hostile_sender },
        { "interrupted", test_interrupted },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "xfer-engine", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        signal(SIGPIPE, SIG_IGN);
        return glean_test_main(argc, argv, suites);
}

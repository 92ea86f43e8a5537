/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-poolkey.c — the pool key file (common/secure.h) and `glean
 * pool-key`: written and read back, never replaced without force, the
 * directory made; refused when missing, not a regular file (directory,
 * FIFO), open to group or others, owned by someone else, or not 64 hex
 * digits; a symbolic link followed; the fingerprint; the command's
 * output and exit status.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "secure.h"
#include "test-util.h"

static char tmpdir[64];

static void path_in_tmp(char *buf, size_t n, const char *name) {
        snprintf(buf, n, "%s/%s", tmpdir, name);
}

static void write_text(const char *path, const char *text, mode_t mode) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

        CU_ASSERT_FATAL(fd >= 0);
        CU_ASSERT_FATAL(write(fd, text, strlen(text)) == (ssize_t) strlen(text));
        CU_ASSERT_FATAL(fchmod(fd, mode) == 0);
        close(fd);
}

static bool contains(const char *s, const char *what) {
        return strstr(s, what) != NULL;
}

static void test_save_load(void) {
        GleanPoolKey k = {}, back = {}, other = {};
        char path[128], why[256] = "", fp1[17], fp2[17], fp3[17];
        struct stat st;
        char *text = NULL;
        size_t len = 0;

        path_in_tmp(path, sizeof(path), "pool.key");
        CU_ASSERT_EQUAL_FATAL(glean_pool_key_generate(&k), 0);
        CU_ASSERT_EQUAL_FATAL(glean_pool_key_save(path, &k, false, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(stat(path, &st), 0);
        CU_ASSERT_EQUAL(st.st_mode & 07777, 0600);
        CU_ASSERT_EQUAL(st.st_uid, geteuid());
        CU_ASSERT_EQUAL_FATAL(glean_test_read_file(path, &text, &len), 0);
        CU_ASSERT_EQUAL(len, 65);
        CU_ASSERT_EQUAL(text[64], '\n');
        CU_ASSERT_EQUAL(strspn(text, "0123456789abcdef"), 64);
        free(text);

        CU_ASSERT_EQUAL(glean_pool_key_load(path, &back, why, sizeof(why)), 0);
        CU_ASSERT(memcmp(&k, &back, sizeof(k)) == 0);
        glean_pool_key_fingerprint(&k, fp1);
        glean_pool_key_fingerprint(&back, fp2);
        CU_ASSERT_EQUAL(strlen(fp1), 16);
        CU_ASSERT_STRING_EQUAL(fp1, fp2);

        /* not replaced without force, and the old key is still there */
        CU_ASSERT_EQUAL(glean_pool_key_generate(&other), 0);
        CU_ASSERT_EQUAL(glean_pool_key_save(path, &other, false, why, sizeof(why)), -EEXIST);
        GLEAN_TEST_CHECK(contains(why, "already exists"), "why: %s", why);
        CU_ASSERT_EQUAL(glean_pool_key_load(path, &back, why, sizeof(why)), 0);
        CU_ASSERT(memcmp(&k, &back, sizeof(k)) == 0);
        /* replaced with it */
        CU_ASSERT_EQUAL(glean_pool_key_save(path, &other, true, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(glean_pool_key_load(path, &back, why, sizeof(why)), 0);
        CU_ASSERT(memcmp(&other, &back, sizeof(k)) == 0);
        glean_pool_key_fingerprint(&other, fp3);
        CU_ASSERT_STRING_NOT_EQUAL(fp1, fp3);

        glean_pool_key_clear(&back);
        CU_ASSERT(memcmp(&back, &(GleanPoolKey){}, sizeof(back)) == 0);
        glean_pool_key_clear(NULL);
        CU_ASSERT_EQUAL(unlink(path), 0);

        /* no temporary file left behind */
        char cmd[160];
        snprintf(cmd, sizeof(cmd), "test -z \"$(ls -A %s)\"", tmpdir);
        CU_ASSERT_EQUAL(system(cmd), 0);
}

static void test_save_makes_dir(void) {
        GleanPoolKey k;
        char dir[128], path[160], why[256] = "";
        struct stat st;

        path_in_tmp(dir, sizeof(dir), "etc-glean");
        snprintf(path, sizeof(path), "%s/pool.key", dir);
        CU_ASSERT_EQUAL(glean_pool_key_generate(&k), 0);
        CU_ASSERT_EQUAL(glean_pool_key_save(path, &k, false, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL(stat(dir, &st), 0);
        CU_ASSERT(S_ISDIR(st.st_mode));
        CU_ASSERT_EQUAL(unlink(path), 0);
        CU_ASSERT_EQUAL(rmdir(dir), 0);

        /* only the last component is made */
        snprintf(path, sizeof(path), "%s/a/b/pool.key", tmpdir);
        CU_ASSERT_EQUAL(glean_pool_key_save(path, &k, false, why, sizeof(why)), -ENOENT);
        CU_ASSERT_EQUAL(glean_pool_key_save("", &k, false, why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(glean_pool_key_save("/tmp/", &k, false, why, sizeof(why)), -EINVAL);
}

static void test_load_refusals(void) {
        const char *good = "00112233445566778899aabbccddeeff00112233445566778899AABBCCDDEEFF\n";
        const struct {
                const char *text; /* NULL: the good key */
                mode_t mode;
                int want;
                const char *why;
        } cases[] = {
                { NULL, 0600, 0, NULL },
                { NULL, 0400, 0, NULL },
                { NULL, 0644, -EPERM, "group or others have access to the pool key (mode 0644)" },
                { NULL, 0640, -EPERM, "(mode 0640)" },
                { NULL, 0604, -EPERM, "(mode 0604)" },
                { NULL, 0620, -EPERM, "(mode 0620)" },
                { "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff", 0600, 0, NULL },
                { "00112233445566778899aabbccddeeff00112233445566778899aabbccddeef\n", 0600, -EBADMSG,
                  "want 64 hexadecimal digits and a newline, found 63 bytes" },
                { "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff0\n", 0600, -EBADMSG, "found 65" },
                { "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n\n", 0600, -EBADMSG, "found 65" },
                { "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\r\n", 0600, -EBADMSG, "found 65" },
                { "0011223344556677 899aabbccddeeff00112233445566778899aabbccddeeff\n", 0600, -EBADMSG,
                  "a character other than a hexadecimal digit" },
                { "g0112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n", 0600, -EBADMSG,
                  "other than a hexadecimal digit" },
                { "0000000000000000000000000000000000000000000000000000000000000000\n", 0600, -EBADMSG, "all zeros" },
                { "", 0600, -EBADMSG, "found 0 bytes" },
                { "\n", 0600, -EBADMSG, "found 0 bytes" },
        };
        char path[128], why[256];

        path_in_tmp(path, sizeof(path), "k");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                GleanPoolKey k = {}, untouched = {};
                write_text(path, cases[i].text ? cases[i].text : good, cases[i].mode);
                why[0] = '\0';
                int r = glean_pool_key_load(path, &k, why, sizeof(why));
                GLEAN_TEST_CHECK(r == cases[i].want, "case %zu: %d, want %d (%s)", i, r, cases[i].want, why);
                if (cases[i].why)
                        GLEAN_TEST_CHECK(contains(why, cases[i].why) && contains(why, path),
                                         "case %zu: why \"%s\", want \"%s\" and the path", i, why, cases[i].why);
                if (r < 0) {
                        CU_ASSERT(memcmp(&k, &untouched, sizeof(k)) == 0);
                } else {
                        CU_ASSERT_EQUAL(k.bytes[31], 0xff);
                }
                unlink(path);
        }
}

static void test_load_file_types(void) {
        char path[128], target[128], why[256];
        GleanPoolKey k, saved;

        path_in_tmp(path, sizeof(path), "missing");
        CU_ASSERT_EQUAL(glean_pool_key_load(path, &k, why, sizeof(why)), -ENOENT);
        CU_ASSERT(contains(why, "no pool key there (make one with 'glean pool-key --new')"));
        CU_ASSERT_EQUAL(glean_pool_key_load("", &k, why, sizeof(why)), -EINVAL);
        CU_ASSERT_EQUAL(glean_pool_key_load(NULL, &k, why, sizeof(why)), -EINVAL);

        CU_ASSERT_EQUAL(glean_pool_key_load(tmpdir, &k, why, sizeof(why)), -EINVAL);
        CU_ASSERT(contains(why, "not a regular file"));

        /* a FIFO: refused at once, not read (which would block) */
        path_in_tmp(path, sizeof(path), "fifo");
        CU_ASSERT_EQUAL_FATAL(mkfifo(path, 0600), 0);
        CU_ASSERT_EQUAL(glean_pool_key_load(path, &k, why, sizeof(why)), -EINVAL);
        CU_ASSERT(contains(why, "not a regular file"));
        unlink(path);

        /* a symbolic link to a good key is followed */
        path_in_tmp(target, sizeof(target), "real.key");
        path_in_tmp(path, sizeof(path), "link.key");
        CU_ASSERT_EQUAL(glean_pool_key_generate(&saved), 0);
        CU_ASSERT_EQUAL(glean_pool_key_save(target, &saved, false, why, sizeof(why)), 0);
        CU_ASSERT_EQUAL_FATAL(symlink("real.key", path), 0);
        CU_ASSERT_EQUAL(glean_pool_key_load(path, &k, why, sizeof(why)), 0);
        CU_ASSERT(memcmp(&k, &saved, sizeof(k)) == 0);

        /* someone else's file (needs root to make one) */
        if (geteuid() == 0) {
                CU_ASSERT_EQUAL(chown(target, 65534, 65534), 0);
                CU_ASSERT_EQUAL(glean_pool_key_load(target, &k, why, sizeof(why)), -EPERM);
                GLEAN_TEST_CHECK(contains(why, "owned by uid 65534, not root"), "why: %s", why);
        } else {
                printf("\n    (not root: the owner check is not tried) ");
        }
        unlink(path);
        unlink(target);
}

/* ---- the command ---- */

static const char *glean_path(void) {
        const char *p = getenv("GLEAN");

        return p && *p ? p : "build/bin/glean";
}

static void run(const char *a1, const char *a2, const char *a3, const char *a4, int status, const char *out,
                const char *err) {
        char *argv[] = { (char *) glean_path(), "pool-key", (char *) a1, (char *) a2, (char *) a3, (char *) a4, NULL };
        GleanTestRun r;

        CU_ASSERT_EQUAL_FATAL(glean_test_run(argv, &r), 0);
        GLEAN_TEST_CHECK(r.status == status, "pool-key %s %s %s: status %d, want %d (stderr %s)", a1 ? a1 : "",
                         a2 ? a2 : "", a3 ? a3 : "", r.status, status, r.err);
        if (out)
                GLEAN_TEST_CHECK(contains(r.out, out), "stdout \"%s\", want \"%s\"", r.out, out);
        else
                GLEAN_TEST_CHECK(r.out_len == 0, "stdout \"%s\", want nothing", r.out);
        if (err)
                GLEAN_TEST_CHECK(contains(r.err, err), "stderr \"%s\", want \"%s\"", r.err, err);
        else
                GLEAN_TEST_CHECK(r.err_len == 0, "stderr \"%s\", want nothing", r.err);
        glean_test_run_done(&r);
}

static void test_cli(void) {
        char path[128];

        path_in_tmp(path, sizeof(path), "cli.key");
        run("--new", "--file", path, NULL, 0, ": new pool key, fingerprint ", NULL);
        run("--check", "--file", path, NULL, 0, ": pool key OK, fingerprint ", NULL);
        run("--new", "--file", path, NULL, 1, NULL, "already exists; not replacing it (--force replaces it)");
        run("--new", "--force", "-f", path, 0, "new pool key", NULL);
        CU_ASSERT_EQUAL(chmod(path, 0644), 0);
        run("--check", "-f", path, NULL, 1, NULL, "group or others have access to the pool key (mode 0644)");
        CU_ASSERT_EQUAL(unlink(path), 0);
        run("--check", "-f", path, NULL, 1, NULL, "no pool key there");

        run(NULL, NULL, NULL, NULL, 2, NULL, "usage: glean pool-key");
        run("--new", "--check", NULL, NULL, 2, NULL, "--new and --check exclude each other");
        run("--check", "--force", NULL, NULL, 2, NULL, "--force goes with --new only");
        run("--new", "--file", NULL, NULL, 2, NULL, "--file needs a file name");
        run("--bogus", NULL, NULL, NULL, 2, NULL, "unknown option '--bogus'");
        run("--help", NULL, NULL, NULL, 0, "usage: glean pool-key", NULL);
}

static int suite_init(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-test-poolkey-XXXXXX");
        return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void) {
        return rmdir(tmpdir) == 0 ? 0 : -1;
}

static CU_TestInfo tests[] = {
        { "save and load", test_save_load },
        { "save makes the directory", test_save_makes_dir },
        { "refused contents and modes", test_load_refusals },
        { "file types, links, owners", test_load_file_types },
        { "glean pool-key", test_cli },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "poolkey", suite_init, suite_clean, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-file.c — common/file.h: a whole file read back as written;
 * replaced whole (the old content until the rename, the mode less the
 * umask, no temporary left); a symbolic link at the temporary name is not
 * followed; a file over the limit is -EFBIG; a missing directory -ENOENT.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "common/file.h"
#include "test-util.h"

static void test_replace(void) {
        char dir[] = "/tmp/glean-file-test-XXXXXX", path[96], tmp[104], other[96];
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
        snprintf(path, sizeof path, "%s/state.ad", dir);
        snprintf(tmp, sizeof tmp, "%s.new", path);
        snprintf(other, sizeof other, "%s/other", dir);
        mode_t old = umask(022);

        CU_ASSERT_EQUAL(glean_write_file_replace(path, "[ A = 1 ]", 9, 0666), 0);
        char *text = NULL;
        size_t len = 0;
        CU_ASSERT_EQUAL(glean_read_file(path, 100, &text, &len), 0);
        CU_ASSERT(text && len == 9 && strcmp(text, "[ A = 1 ]") == 0);
        free(text);
        struct stat st;
        CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0644);
        CU_ASSERT(access(tmp, F_OK) < 0);

        /* replaced: the new content, whole; the mode of the new file */
        CU_ASSERT_EQUAL(glean_write_file_replace(path, "[ B = 22 ]", 10, 0600), 0);
        CU_ASSERT_EQUAL(glean_read_file(path, 100, &text, &len), 0);
        CU_ASSERT(text && len == 10 && strcmp(text, "[ B = 22 ]") == 0);
        free(text);
        CU_ASSERT(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
        CU_ASSERT_EQUAL(glean_read_file(path, 5, &text, NULL), -EFBIG);

        /* a link at the temporary name: refused, its target untouched, the old file kept */
        CU_ASSERT_EQUAL(symlink(other, tmp), 0);
        CU_ASSERT_EQUAL(glean_write_file_replace(path, "[ C = 3 ]", 9, 0600), -ELOOP);
        CU_ASSERT(access(other, F_OK) < 0);
        CU_ASSERT_EQUAL(glean_read_file(path, 100, &text, NULL), 0);
        CU_ASSERT(text && strcmp(text, "[ B = 22 ]") == 0);
        free(text);
        unlink(tmp);

        char missing[128];
        snprintf(missing, sizeof missing, "%s/no/such", dir);
        CU_ASSERT_EQUAL(glean_write_file_replace(missing, "x", 1, 0600), -ENOENT);

        umask(old);
        unlink(path);
        CU_ASSERT_EQUAL(rmdir(dir), 0);
}

static CU_TestInfo tests[] = {
        { "replace", test_replace },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "file", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-asuser.c — common/asuser.h, as root: a file opened as nobody is
 * nobody's and made with nobody's rights (a root-only directory refuses
 * it, a symbolic link as the last component is not followed); root is
 * refused as a user; a process that became the user cannot become root
 * again. Needs root: skipped otherwise.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "common/asuser.h"
#include "test-util.h"

static void test_cred(void) {
        GleanUserCred c;
        CU_ASSERT_EQUAL(glean_user_cred("root", &c), -EPERM);
        CU_ASSERT_EQUAL(glean_user_cred("0", &c), -EPERM);
        CU_ASSERT_EQUAL(glean_user_cred("no-such-user-glean", &c), -ENOENT);
        CU_ASSERT_EQUAL_FATAL(glean_user_cred("nobody", &c), 0);
        CU_ASSERT(c.uid != 0 && strcmp(c.name, "nobody") == 0 && c.n_groups >= 1);
        GleanUserCred d;
        char uid[16];
        snprintf(uid, sizeof uid, "%u", (unsigned) c.uid);
        CU_ASSERT_EQUAL(glean_user_cred(uid, &d), 0);
        CU_ASSERT(d.uid == c.uid && strcmp(d.name, "nobody") == 0);
}

static void test_open(void) {
        GleanUserCred c;
        CU_ASSERT_EQUAL_FATAL(glean_user_cred("nobody", &c), 0);
        char dir[] = "/tmp/glean-asuser-XXXXXX", mine[96], theirs[96], file[128], link[128], secret[128];
        CU_ASSERT_FATAL(mkdtemp(dir) != NULL);
        CU_ASSERT_EQUAL(chmod(dir, 0755), 0);
        snprintf(mine, sizeof mine, "%s/root-only", dir);
        snprintf(theirs, sizeof theirs, "%s/nobody", dir);
        CU_ASSERT_EQUAL(mkdir(mine, 0700), 0);
        CU_ASSERT_EQUAL(mkdir(theirs, 0755), 0);
        CU_ASSERT_EQUAL(chown(theirs, c.uid, c.gid), 0);

        int fd = -1;
        snprintf(file, sizeof file, "%s/log", theirs);
        CU_ASSERT_EQUAL(glean_open_as_user(&c, file, O_WRONLY | O_CREAT | O_APPEND, 0644, &fd), 0);
        CU_ASSERT(fd >= 0 && write(fd, "x\n", 2) == 2);
        if (fd >= 0)
                close(fd);
        struct stat st;
        CU_ASSERT(stat(file, &st) == 0 && st.st_uid == c.uid && st.st_size == 2);

        /* where nobody may not write */
        snprintf(secret, sizeof secret, "%s/log", mine);
        fd = -1;
        CU_ASSERT_EQUAL(glean_open_as_user(&c, secret, O_WRONLY | O_CREAT, 0644, &fd), -EACCES);
        CU_ASSERT(fd == -1 && access(secret, F_OK) < 0);

        /* a link nobody planted, pointing at root's file: not followed */
        int rfd = open(secret, O_WRONLY | O_CREAT, 0600);
        CU_ASSERT(rfd >= 0);
        if (rfd >= 0)
                close(rfd);
        snprintf(link, sizeof link, "%s/link", theirs);
        CU_ASSERT_EQUAL(symlink(secret, link), 0);
        CU_ASSERT_EQUAL(glean_open_as_user(&c, link, O_WRONLY | O_APPEND, 0, &fd), -ELOOP);
        CU_ASSERT(stat(secret, &st) == 0 && st.st_size == 0);

        GleanUserCred root = { .uid = 0 };
        CU_ASSERT_EQUAL(glean_open_as_user(&root, file, O_RDONLY, 0, &fd), -EPERM);

        unlink(link);
        unlink(file);
        unlink(secret);
        rmdir(mine);
        rmdir(theirs);
        CU_ASSERT_EQUAL(rmdir(dir), 0);
}

static void test_become(void) {
        GleanUserCred c;
        CU_ASSERT_EQUAL_FATAL(glean_user_cred("nobody", &c), 0);
        pid_t pid = fork();
        CU_ASSERT_FATAL(pid >= 0);
        if (pid == 0) {
                if (glean_become_user(&c) < 0)
                        _exit(2);
                if (setuid(0) == 0 || seteuid(0) == 0 || setgid(0) == 0)
                        _exit(3);
                if (getuid() != c.uid || geteuid() != c.uid || getgid() != c.gid)
                        _exit(4);
                _exit(0);
        }
        int status = 0;
        CU_ASSERT_EQUAL(waitpid(pid, &status, 0), pid);
        CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        GleanUserCred root = { .uid = 0 };
        CU_ASSERT_EQUAL(glean_become_user(&root), -EPERM);
}

static CU_TestInfo tests[] = {
        { "cred", test_cred },
        { "open", test_open },
        { "become", test_become },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "asuser", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        if (geteuid() != 0)
                return glean_test_skip("needs root (opens files as nobody)");
        return glean_test_main(argc, argv, suites);
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-submit-htcondor.c — HTCondor's own submit descriptions that use the
 * file transfer commands (tests/config/htcondor/submit/: the vanilla ones
 * of src/condor_tests/, and the complete descriptions of the users'
 * manual's quick-start guide and file transfer pages) load in glean, each
 * with its transfer meaning and no "not supported" warning for a transfer
 * command; the one HTCondor's test suite expects condor_submit to refuse
 * is refused, at its line.
 *
 * The files name executables and inputs that must exist when submitting
 * (as with condor_submit): each runs in a fresh directory, and what an
 * error says is missing there is created empty (at most MAX_STUBS), then
 * the file is read again.
 */
#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "submit-internal.h"
#include "submit-test.h"

#define FIXTURES "tests/config/htcondor/submit"
#define MAX_STUBS 256
#define N_TESTS_FILES 15  /* of src/condor_tests/ */
#define N_MANUAL_FILES 12 /* of docs/users-manual/ */

/* Files HTCondor's suite expects refused (job_filexfer_base-input4 is its
 * test that input files with should_transfer_files = NO fail). */
static const struct {
        const char *name;
        int line;
        const char *msg;
} refused[] = {
        { "job_filexfer_base-input4_van.cmd", 7,
          "transfer_input_files names files to transfer, but should_transfer_files is NO" },
};

static const char *const transfer_commands[] = {
        "should_transfer_files", "when_to_transfer_output", "transfer_input_files", "transfer_output_files",
        "transfer_output_remaps", "transfer_executable", "stream_output", "stream_error", "stream_input",
        "transfer_input", "transfer_output", "transfer_error", "preserve_relative_paths", "max_transfer_input_mb",
        "max_transfer_output_mb", "log_xml",
};

/* mkdir -p of path's directories (inside dir, which exists). */
static int make_parents(const char *dir, const char *path) {
        char buf[4096];

        snprintf(buf, sizeof(buf), "%s", path);
        for (char *p = buf + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
                *p = '\0';
                if (mkdir(buf, 0755) < 0 && errno != EEXIST)
                        return -errno;
                *p = '/';
        }
        return 0;
}

/* The path an error says is missing: "executable 'P': No such file..." or
 * "transfer_input_files: 'E' (P): No such file...". Created (a directory
 * for a trailing '/') when it is inside dir; false otherwise. */
static bool make_stub(const char *dir, const char *msg) {
        char path[4096];
        const char *p, *end;
        size_t dlen = strlen(dir);
        int fd;

        if (!strstr(msg, "No such file or directory"))
                return false;
        if (strncmp(msg, "executable '", 12) == 0) {
                p = msg + 12;
                end = strchr(p, '\'');
        } else if (strncmp(msg, "transfer_input_files: '", 23) == 0 && (p = strstr(msg, "' ("))) {
                p += 3;
                end = strstr(p, "): ");
        } else
                return false;
        if (!end || (size_t) (end - p) >= sizeof(path))
                return false;
        snprintf(path, sizeof(path), "%.*s", (int) (end - p), p);
        if (strncmp(path, dir, dlen) != 0 || path[dlen] != '/' || strstr(path, "/../"))
                return false;
        if (make_parents(dir, path) < 0)
                return false;
        if (path[strlen(path) - 1] == '/')
                return mkdir(path, 0755) == 0;
        fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
        if (fd < 0)
                return false;
        close(fd);
        return true;
}

static void remove_tree(const char *dir) {
        char cmd[4200];

        snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
        if (system(cmd) != 0)
                fprintf(stderr, "could not remove %s\n", dir);
}

/* Whether the description sets should_transfer_files, and to what. */
static const char *should_in_file(const char *path) {
        static char value[64];
        char line[1024];
        FILE *f = fopen(path, "re");

        value[0] = '\0';
        if (!f)
                return NULL;
        while (fgets(line, sizeof(line), f)) {
                char *p = line + strspn(line, " \t"), *eq;

                if (strncasecmp(p, "should_transfer_files", 21) != 0 || !(eq = strchr(p, '=')))
                        continue;
                eq += 1 + strspn(eq + 1, " \t");
                eq[strcspn(eq, " \t\r\n")] = '\0';
                snprintf(value, sizeof(value), "%s", eq);
        }
        fclose(f);
        return value[0] ? value : NULL;
}

static const char *canonical_should(const char *v) {
        if (strcasecmp(v, "yes") == 0 || strcasecmp(v, "true") == 0 || strcasecmp(v, "always") == 0)
                return "YES";
        if (strcasecmp(v, "no") == 0 || strcasecmp(v, "false") == 0 || strcasecmp(v, "never") == 0)
                return "NO";
        return "IF_NEEDED";
}

static void check_file(const char *path, const char *name) {
        char dir[] = "/tmp/glean-test-htc-submit-XXXXXX", *warnings = NULL, *should = NULL;
        const char *refused_msg = NULL, *in_file;
        ConfigSubmitOptions opts = { .cluster_id = 7, .qdate = SUBMIT_TEST_QDATE, .owner = SUBMIT_TEST_OWNER };
        FILE *saved = submit_warning_stream, *w;
        ConfigError err = {};
        ClassAd **ads = NULL;
        size_t n = 0, wlen = 0;
        int refused_line = 0, stubs = 0, r;

        for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
                if (strcmp(name, refused[i].name) == 0) {
                        refused_msg = refused[i].msg;
                        refused_line = refused[i].line;
                }
        GLEAN_TEST_CHECK_FATAL(mkdtemp(dir) != NULL, "mkdtemp: %m");
        opts.iwd = dir;
        w = tmpfile();
        GLEAN_TEST_CHECK_FATAL(w != NULL, "tmpfile");
        submit_warning_stream = w;
        for (;;) {
                err = (ConfigError) {};
                r = config_submit_parse_file(path, NULL, &opts, &ads, &n, &err);
                if (r >= 0 || stubs >= MAX_STUBS || !make_stub(dir, err.msg))
                        break;
                stubs++;
        }
        submit_warning_stream = saved;

        if (refused_msg) {
                GLEAN_TEST_CHECK(r < 0 && err.line == refused_line && strstr(err.msg, refused_msg),
                                 "%s: want refused at line %d ('%s'), got %d %s:%d: %s", name, refused_line,
                                 refused_msg, r, err.file, err.line, err.msg);
                if (r >= 0)
                        config_submit_free(ads, n);
                goto done;
        }
        GLEAN_TEST_CHECK(r >= 0 && n > 0, "%s: %d %s:%d: %s (%d files made)", name, r, err.file, err.line, err.msg,
                         stubs);
        if (r < 0)
                goto done;

        /* No transfer command left "not supported". */
        rewind(w);
        warnings = calloc(1, 65536);
        GLEAN_TEST_CHECK_FATAL(warnings != NULL, "calloc");
        wlen = fread(warnings, 1, 65535, w);
        warnings[wlen] = '\0';
        for (char *l = warnings; l && *l;) {
                char *nl = strchr(l, '\n');

                if (nl)
                        *nl = '\0';
                if (strstr(l, "not supported"))
                        for (size_t i = 0; i < sizeof(transfer_commands) / sizeof(transfer_commands[0]); i++)
                                GLEAN_TEST_CHECK(!strcasestr(l, transfer_commands[i]), "%s: %s", name, l);
                l = nl ? nl + 1 : NULL;
        }

        /* Each job has its transfer meaning, as the file says it. */
        in_file = should_in_file(path);
        for (size_t i = 0; i < n; i++) {
                _cleanup_config_free_ char *req = classad_unparse_attr(ads[i], "Requirements");

                free(should);
                should = NULL;
                GLEAN_TEST_CHECK(classad_eval_string(ads[i], "ShouldTransferFiles", CA_MODE_OLD, &should) >= 0,
                                 "%s: job %zu has no ShouldTransferFiles", name, i);
                if (should && in_file)
                        GLEAN_TEST_CHECK(strcmp(should, canonical_should(in_file)) == 0,
                                         "%s: job %zu: ShouldTransferFiles = %s, the file says %s", name, i, should,
                                         in_file);
                GLEAN_TEST_CHECK(req && (strstr(req, "TARGET.HasFileTransfer") ||
                                         strstr(req, "(TARGET.FileSystemDomain == MY.FileSystemDomain)")),
                                 "%s: job %zu: Requirements = %s", name, i, req ? req : "(none)");
        }
        config_submit_free(ads, n);
done:
        free(should);
        free(warnings);
        fclose(w);
        remove_tree(dir);
}

static size_t check_dir(const char *sub) {
        char dir[256];
        struct dirent **list = NULL;
        size_t count = 0;
        int n;

        snprintf(dir, sizeof(dir), FIXTURES "/%s", sub);
        n = scandir(dir, &list, NULL, alphasort);
        GLEAN_TEST_CHECK_FATAL(n >= 0, "%s: %m", dir);
        for (int i = 0; i < n; i++) {
                char path[512];
                const char *name = list[i]->d_name;
                size_t len = strlen(name);

                if (len > 4 && (strcmp(name + len - 4, ".sub") == 0 || strcmp(name + len - 4, ".cmd") == 0)) {
                        snprintf(path, sizeof(path), "%s/%s", dir, name);
                        check_file(path, name);
                        count++;
                }
                free(list[i]);
        }
        free(list);
        return count;
}

static void test_condor_tests(void) {
        size_t n = check_dir("tests");

        GLEAN_TEST_CHECK(n == N_TESTS_FILES, "%zu files of src/condor_tests, want %d", n, N_TESTS_FILES);
}

static void test_manual(void) {
        size_t n = check_dir("manual");

        GLEAN_TEST_CHECK(n == N_MANUAL_FILES, "%zu descriptions of the manual, want %d", n, N_MANUAL_FILES);
}

static CU_TestInfo tests[] = {
        { "condor_tests", test_condor_tests },
        { "users-manual", test_manual },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "htcondor-submit", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

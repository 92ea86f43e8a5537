/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-files.c — the statements of HTCondor's configuration
 * language that reach outside the text, and the files an administrator
 * lays out: `if version` and the other conditions, include commands (with
 * into and ifexist, and their limits: owner and mode of the including
 * file, time, output size, exit status, NUL bytes, nesting),
 * LOCAL_CONFIG_DIR and LOCAL_CONFIG_FILE in HTCondor's order,
 * REQUIRE_LOCAL_CONFIG_FILE, GLEAN_CONFIG / CONDOR_CONFIG, /dev/null and
 * ONLY_ENV, config_files_read(), and HTCondor's own files
 * (tests/config/htcondor/).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config/config-internal.h"
#include "test-util.h"

static char tmpdir[64];

static const char *path_of(const char *name) {
        static char path[8][512];
        static unsigned n;
        char *p = path[n++ % 8];

        snprintf(p, 512, "%s/%s", tmpdir, name);
        return p;
}

static void write_mode(const char *name, const char *text, mode_t mode) {
        const char *path = path_of(name);
        FILE *f;

        (void) unlink(path);
        f = fopen(path, "w");
        GLEAN_TEST_CHECK_FATAL(f != NULL, "cannot create %s", path);
        fputs(text, f);
        fclose(f);
        GLEAN_TEST_CHECK_FATAL(chmod(path, mode) == 0, "chmod %s", path);
}

static void write_file(const char *name, const char *text) {
        write_mode(name, text, 0644);
}

/* An executable shell script. */
static void write_script(const char *name, const char *body) {
        char text[4096];

        snprintf(text, sizeof(text), "#!/bin/sh\n%s", body);
        write_mode(name, text, 0755);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static int files_init(void) {
        umask(022);
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-config-files.XXXXXX");
        if (!mkdtemp(tmpdir))
                return 1;
        unsetenv("GLEAN_CONFIG");
        unsetenv("CONDOR_CONFIG");
        return 0;
}

static int files_cleanup(void) {
        return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : 1;
}

/* Load text as the program's own (commands allowed). */
static int load_text(Config **ret, const char *text, ConfigError *err) {
        Config *cfg = NULL;
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        *err = (ConfigError){};
        r = config_load_string_flags(cfg, text, "t.conf", CONFIG_LOAD_COMMANDS, err);
        *ret = cfg;
        return r;
}

static int load_path(Config **ret, const char *name, ConfigError *err) {
        *ret = NULL;
        *err = (ConfigError){};
        return config_load_path(path_of(name), ret, err);
}

static bool raw_is(const Config *cfg, const char *name, const char *want) {
        const char *v = cfg ? config_raw(cfg, name) : NULL;

        if (!want)
                return !v;
        return v && strcmp(v, want) == 0;
}

static bool has_warning(const Config *cfg, const char *part) {
        char **w = NULL;
        bool found = false;

        if (config_warnings(cfg, &w) < 0)
                return false;
        for (char **p = w; p && *p && !found; p++)
                found = strstr(*p, part) != NULL;
        config_strv_free(w);
        return found;
}

/* ---- conditions ---- */

typedef struct CondCase {
        const char *cond;
        int value; /* 1 true, 0 false, -1 an error containing msg */
        const char *msg;
} CondCase;

/* GLEAN_HTCONDOR_VERSION is 24.0.0. */
static const CondCase cond_cases[] = {
        { "version >= 24.0.0", 1, NULL },
        { "version > 24.0.0", 0, NULL },
        { "version >= 23.10.0", 1, NULL }, /* 00-security's test */
        { "version < 23.10.0", 0, NULL },
        { "version >= 8.1.6", 1, NULL }, /* the manual's example */
        { "version <= 24.0", 1, NULL },  /* a missing Z matches any */
        { "version == 24.0", 1, NULL },
        { "version == 24.0.0", 1, NULL },
        { "version == 24.0.1", 0, NULL },
        { "version != 24.0.1", 1, NULL },
        { "version != 24.0", 0, NULL },
        { "version = 24.0.0", 1, NULL },
        { "version 24.0.0", 1, NULL },
        { "version < 24.0.1", 1, NULL },
        { "version <= 23.99.99", 0, NULL },
        { "version > 23.99.99", 1, NULL },
        { "version >= 25.0", 0, NULL },
        { "version >= v24.0.0", 1, NULL },
        { "version>=24.0.0", 1, NULL },
        { "VERSION >= 24.0.0", 1, NULL },
        { "! version >= 25.0.0", 1, NULL },
        { "version !< 24.0.0", 1, NULL },
        { "version >= $(V)", 1, NULL },
        { "version >= 24", -1, "if: version: '24' is not a version X.Y or X.Y.Z" },
        { "version >= 5.0.0", -1, "is not a version" },
        { "version >= 24.0.0 and more", -1, "is not a version" },
        { "version >= 24.x", -1, "is not a version" },
        { "version", -1, "is not a version" },
        { "version <> 24.0", -1, "is not a version" },
        { "defined V", 1, NULL },
        { "defined NOPE", 0, NULL },
        { "defined v", 1, NULL },
        { "defined $(EMPTY)", 0, NULL },
        { "! defined $(EMPTY)", 1, NULL },
        { "defined true", 1, NULL },
        { "defined 0", 1, NULL },
        { "defined use POLICY", 1, NULL },
        { "defined use policy:desktop", 1, NULL },
        { "defined use POLICY:NOPE", 0, NULL },
        { "defined use NOPE", 0, NULL },
        { "defined use NOPE:X", 0, NULL },
        { "defined use POLICY: DESKTOP", -1, "defined use needs CATEGORY or CATEGORY:NAME without spaces" },
        { "defined a b", -1, "if: defined needs a name, not 'a b'" },
        { "$(NEG)", 0, NULL },
        { "! $(NEG)", -1, "if: '! true' is not a condition" }, /* one '!' only, as in HTCondor */
        { "$(EMPTY)", 0, NULL },
        { "$(V)", 1, NULL }, /* a number, not 0 */
        { "$(V).1", -1, "if: '24.0.1' is not a condition" },
        { "$(A) == 1", -1, "if: '1 == 1': complex conditions are not supported" },
        { "true && false", -1, "complex conditions are not supported" },
        { "(1)", -1, "complex conditions are not supported" },
        { "NAME", -1, "if: 'NAME' is not a condition" },
};

static void test_conditions(void) {
        for (size_t i = 0; i < sizeof(cond_cases) / sizeof(cond_cases[0]); i++) {
                const CondCase *c = &cond_cases[i];
                char text[512];
                ConfigError err;
                Config *cfg;
                int r;

                snprintf(text, sizeof(text),
                         "V = 24.0\nEMPTY =\nNEG = ! true\nA = 1\nif %s\nR = yes\nelse\nR = no\nendif\n", c->cond);
                r = load_text(&cfg, text, &err);
                if (c->value < 0)
                        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 5 && strstr(err.msg, c->msg),
                                         "case %zu '%s': %d line %d '%s', want '%s'", i, c->cond, r, err.line,
                                         err.msg, c->msg);
                else
                        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "R", c->value ? "yes" : "no"),
                                         "case %zu '%s': %d '%s', R %s", i, c->cond, r, err.msg,
                                         r == 0 ? config_raw(cfg, "R") : "-");
                config_free(cfg);
        }
}

static void test_version_compare(void) {
        static const struct {
                const char *v;
                int r, cmp;
        } cases[] = {
                { "24.0.0", 0, 0 },  { "24.0", 0, 0 },     { "24.0.7", 0, -1 }, { "23.10.18", 0, 1 },
                { "24.1", 0, -1 },   { "8.8.17", 0, 1 },   { "v25.0.0", 0, -1 }, { "24", -EINVAL, 0 },
                { "5.9.9", -EINVAL, 0 }, { "", -EINVAL, 0 }, { "24.0.0.1", -EINVAL, 0 }, { "24..0", -EINVAL, 0 },
                { "99999999999.0", -EINVAL, 0 },
        };
        int cmp = 9;

        GLEAN_TEST_CHECK(config_version_compare(GLEAN_HTCONDOR_VERSION, &cmp) == 0 && cmp == 0,
                         "GLEAN_HTCONDOR_VERSION '%s' parses", GLEAN_HTCONDOR_VERSION);
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int r;

                cmp = 9;
                r = config_version_compare(cases[i].v, &cmp);
                GLEAN_TEST_CHECK(r == cases[i].r && (r < 0 || cmp == cases[i].cmp), "'%s': %d %d, want %d %d",
                                 cases[i].v, r, cmp, cases[i].r, cases[i].cmp);
        }
}

/* if/endif that do not balance, each error at its line, also in an
 * included file. */
static void test_unbalanced(void) {
        static const struct {
                const char *text;
                int line;
                const char *msg;
        } cases[] = {
                { "A = 1\nif true\nB = 1\n", 2, "if without endif" },
                { "if true\nendif\nendif\n", 3, "endif without if" },
                { "if 1\n  if 0\n  else\nendif\n", 1, "if without endif" },
                { "if 1\nelse\nelse\nendif\n", 3, "else after else" },
                { "A = 1\n\nelif true\n", 3, "elif without if" },
                { "if version >= 24.0\nelif version >= 25.0\nelse\nendif\nelse\n", 5, "else without if" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err;
                Config *cfg;
                int r = load_text(&cfg, cases[i].text, &err);

                GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, "t.conf") == 0 && err.line == cases[i].line &&
                                         strstr(err.msg, cases[i].msg),
                                 "case %zu: %d %s:%d %s", i, r, err.file, err.line, err.msg);
                config_free(cfg);
        }

        /* An if left open in an included file is that file's error. */
        {
                char text[600];
                ConfigError err;
                Config *cfg;
                int r;

                write_file("open-if.conf", "A = 1\nif defined A\n");
                snprintf(text, sizeof(text), "if true\ninclude : %s\nendif\n", path_of("open-if.conf"));
                r = load_text(&cfg, text, &err);
                GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, path_of("open-if.conf")) == 0 && err.line == 2 &&
                                         strstr(err.msg, "if without endif"),
                                 "included: %d %s:%d %s", r, err.file, err.line, err.msg);
                config_free(cfg);
        }
}

/* ---- include commands ---- */

static void test_include_command(void) {
        char text[2048];
        ConfigError err;
        Config *cfg;
        const char *file;
        char **files = NULL;
        int line, r, n;

        write_script("gen.sh", "echo 'X = 1'\necho 'Y = $(X) 2'\necho \"ARGS = $*\"\n");
        write_script("env.sh", "if [ -e /proc/$$/fd/50 ]; then echo 'LEAK = yes'; else echo 'LEAK = no'; fi\n"
                               "echo \"IN = $(readlink /proc/$$/fd/0)\"\n");

        /* include : COMMAND | (arguments split on white space) */
        snprintf(text, sizeof(text), "A = 0\ninclude : %s one  two |\nB = $(Y)\n", path_of("gen.sh"));
        write_file("cmd.conf", text);
        r = load_path(&cfg, "cmd.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "X", "1") && raw_is(cfg, "ARGS", "one two"), "include : cmd |: %d %s",
                         r, err.msg);
        GLEAN_TEST_CHECK(cfg && config_where(cfg, "Y", &file, &line) == 0 && strstr(file, "gen.sh one  two |") &&
                                 line == 2,
                         "Y from %s:%d", cfg ? file : "", cfg ? line : 0);
        n = cfg ? config_files_read(cfg, &files) : -1;
        GLEAN_TEST_CHECK(n == 2 && strcmp(files[0], path_of("cmd.conf")) == 0 && strstr(files[1], "gen.sh one") &&
                                 strstr(files[1], " |"),
                         "files read: %d", n);
        config_strv_free(files);
        config_free(cfg);

        /* include command : COMMAND, include output : COMMAND |, the new
         * argument syntax in double quotes */
        {
                static const struct {
                        const char *before, *after, *args;
                } forms[] = {
                        { "include command : ", " a", "a" },
                        { "include output : ", " b |", "b" },
                        { "include : \"", " 'c d' e\" |", "c d e" },
                        { "INCLUDE IFEXIST COMMAND : ", " f", "f" },
                        { "@include : ", " g |", "g" },
                };

                for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
                        snprintf(text, sizeof(text), "%s%s%s", forms[i].before, path_of("gen.sh"), forms[i].after);
                        r = load_text(&cfg, text, &err);
                        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "ARGS", forms[i].args), "form %zu: %d %s:%d %s: '%s'",
                                         i, r, err.file, err.line, err.msg, r == 0 ? config_raw(cfg, "ARGS") : "");
                        config_free(cfg);
                }
        }

        /* stdin is /dev/null, no descriptor is inherited */
        {
                int fd = open("/dev/null", O_RDONLY), fd50 = dup2(fd, 50);

                snprintf(text, sizeof(text), "include : %s |\n", path_of("env.sh"));
                r = load_text(&cfg, text, &err);
                GLEAN_TEST_CHECK(fd50 == 50 && r == 0 && raw_is(cfg, "LEAK", "no") && raw_is(cfg, "IN", "/dev/null"),
                                 "descriptors: %d %s LEAK %s IN %s", r, err.msg, r == 0 ? config_raw(cfg, "LEAK") : "",
                                 r == 0 ? config_raw(cfg, "IN") : "");
                config_free(cfg);
                close(fd50);
                close(fd);
        }

}

static void test_include_into(void) {
        char text[2048];
        struct stat st;
        ConfigError err;
        Config *cfg;
        char **files = NULL;
        int r, n;

        write_script("stuff.sh", "echo 'STUFF = 1'\n");
        write_script("fail.sh", "echo 'STUFF = partial'\nexit 3\n");
        snprintf(text, sizeof(text),
                 "include command into cache/stuff.config : %s\nif ! defined stuff\n  error : stuff is needed!\n"
                 "endif\n",
                 path_of("stuff.sh"));
        mkdir(path_of("cache"), 0755);
        write_file("into.conf", text);

        /* first load: the command runs, its output is cached (relative to
         * the including file's directory) and read */
        r = load_path(&cfg, "into.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "STUFF", "1"), "into: %d %s:%d %s", r, err.file, err.line, err.msg);
        GLEAN_TEST_CHECK(stat(path_of("cache/stuff.config"), &st) == 0 && (st.st_mode & 0777) == 0644,
                         "cache file 0644");
        n = cfg ? config_files_read(cfg, &files) : -1;
        GLEAN_TEST_CHECK(n == 2 && strcmp(files[1], path_of("cache/stuff.config")) == 0, "files read %d", n);
        config_strv_free(files);
        config_free(cfg);

        /* second load: the cache is read, the command does not run */
        write_script("stuff.sh", "echo 'STUFF = 2'\n");
        r = load_path(&cfg, "into.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "STUFF", "1"), "cached: %d %s", r, err.msg);
        config_free(cfg);

        /* a failing command: an error naming the line and the status, no
         * cache file, nothing of its output */
        snprintf(text, sizeof(text), "A = 1\ninclude command into %s : %s\n", path_of("cache/fail.config"),
                 path_of("fail.sh"));
        r = load_text(&cfg, text, &err);
        GLEAN_TEST_CHECK(r < 0 && err.line == 2 && strstr(err.msg, "exited with status 3") &&
                                 access(path_of("cache/fail.config"), F_OK) < 0 && raw_is(cfg, "STUFF", NULL),
                         "failing into: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);

        /* ifexist: nothing included, a warning */
        snprintf(text, sizeof(text), "include ifexist command into %s : %s\nA = 1\n",
                 path_of("cache/fail.config"), path_of("fail.sh"));
        r = load_text(&cfg, text, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "A", "1") && raw_is(cfg, "STUFF", NULL) &&
                                 has_warning(cfg, "t.conf:1: include ifexist command") &&
                                 has_warning(cfg, "exited with status 3") &&
                                 access(path_of("cache/fail.config"), F_OK) < 0,
                         "ifexist into: %d %s", r, err.msg);
        config_free(cfg);

        snprintf(text, sizeof(text), "include ifexist : %s/nope |\nA = 1\n", tmpdir);
        r = load_text(&cfg, text, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "A", "1") && has_warning(cfg, "No such file or directory"),
                         "ifexist missing command: %d %s", r, err.msg);
        config_free(cfg);

        /* the syntax's own errors */
        static const struct {
                const char *text;
                const char *msg;
        } bad[] = {
                { "include into x : true", "include: unknown option 'into'" },
                { "include command into : true", "expected a file name after into" },
                { "include command into $(NOPE) : true", "expands to nothing" },
                { "include command into x| : true", "the destination may not be a command" },
                { "include command : ", "include: no command" },
                { "include : |", "include: no command" },
                { "include command command : true", "unknown option 'command'" },
                { "include : \"unterminated |", "include command '\"unterminated': cannot run" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                r = load_text(&cfg, bad[i].text, &err);
                GLEAN_TEST_CHECK(r < 0 && err.line == 1 && strstr(err.msg, bad[i].msg), "bad %zu: %d %s", i, r,
                                 err.msg);
                config_free(cfg);
        }
}

static double seconds_since(const struct timespec *t0) {
        struct timespec t1;

        clock_gettime(CLOCK_MONOTONIC, &t1);
        return (double) (t1.tv_sec - t0->tv_sec) + (double) (t1.tv_nsec - t0->tv_nsec) / 1e9;
}

static void test_command_limits(void) {
        char text[2048], pidtext[32] = "";
        struct timespec t0;
        ConfigError err;
        Config *cfg;
        FILE *f;
        int r;

        /* a file group- or world-writable may not run commands */
        snprintf(text, sizeof(text), "A = 1\ninclude : /bin/echo B = 2 |\n");
        write_mode("group-w.conf", text, 0664);
        r = load_path(&cfg, "group-w.conf", &err);
        GLEAN_TEST_CHECK(r == -EPERM && strcmp(err.file, path_of("group-w.conf")) == 0 && err.line == 2 &&
                                 strstr(err.msg, "is writable by its group"),
                         "group-writable: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);
        write_mode("world-w.conf", text, 0602);
        r = load_path(&cfg, "world-w.conf", &err);
        GLEAN_TEST_CHECK(r == -EPERM && err.line == 2 && strstr(err.msg, "is writable by others"),
                         "world-writable: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);
        /* ... nor one of another user (root can make one) */
        if (geteuid() == 0) {
                write_file("nobody.conf", text);
                GLEAN_TEST_CHECK_FATAL(chown(path_of("nobody.conf"), 65534, 65534) == 0, "chown");
                r = load_path(&cfg, "nobody.conf", &err);
                GLEAN_TEST_CHECK(r == -EPERM && err.line == 2 && strstr(err.msg, "is owned by uid 65534"),
                                 "other owner: %d %s:%d %s", r, err.file, err.line, err.msg);
                config_free(cfg);
        }
        /* ... nor can a file it includes */
        snprintf(text, sizeof(text), "include : %s\n", path_of("group-w.conf"));
        write_file("incl-gw.conf", text);
        r = load_path(&cfg, "incl-gw.conf", &err);
        GLEAN_TEST_CHECK(r == -EPERM && strcmp(err.file, path_of("group-w.conf")) == 0 && err.line == 2,
                         "included group-writable: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);
        /* text from outside (config_load_string without the flag) */
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        r = config_load_string(cfg, "include : /bin/echo A = 1 |\n", "s.conf", &err);
        GLEAN_TEST_CHECK(r == -EPERM && err.line == 1 && strstr(err.msg, "not run"), "string: %d %s", r, err.msg);
        /* fuzzing: no include at all */
        r = config_load_string_flags(cfg, "\ninclude : /bin/echo A = 1 |\n", "f.conf",
                                     CONFIG_LOAD_NO_INCLUDE | CONFIG_LOAD_COMMANDS, &err);
        GLEAN_TEST_CHECK(r == -EPERM && err.line == 2 && strstr(err.msg, "include is not allowed here"),
                         "no include: %d %s", r, err.msg);
        config_free(cfg);

        /* a command that never exits is killed at the time limit, its
         * whole process group with it */
        write_script("hang.sh", "echo $$ > \"$1\"\necho 'A = 1'\nsleep 1000 &\nwait\n");
        snprintf(text, sizeof(text), "GLEAN_CONFIG_COMMAND_TIMEOUT = 1\ninclude : %s %s |\n", path_of("hang.sh"),
                 path_of("hang.pid"));
        clock_gettime(CLOCK_MONOTONIC, &t0);
        r = load_text(&cfg, text, &err);
        GLEAN_TEST_CHECK(r == -ETIME && err.line == 2 && strstr(err.msg, "did not finish within 1 s") &&
                                 seconds_since(&t0) < 5,
                         "hang: %d %s:%d %s after %.1f s", r, err.file, err.line, err.msg, seconds_since(&t0));
        config_free(cfg);
        f = fopen(path_of("hang.pid"), "r");
        if (f) {
                if (!fgets(pidtext, sizeof(pidtext), f))
                        pidtext[0] = '\0';
                fclose(f);
        }
        GLEAN_TEST_CHECK(atoi(pidtext) > 0 && kill(atoi(pidtext), 0) < 0 && errno == ESRCH, "the command is gone");
        /* the sleep it started was in its process group: gone too (once
         * whoever inherited it reaped it) */
        for (int i = 0; i < 200 && kill(-atoi(pidtext), 0) == 0; i++)
                usleep(10000);
        GLEAN_TEST_CHECK(kill(-atoi(pidtext), 0) < 0 && errno == ESRCH, "its process group is gone");

        /* the knob is checked */
        r = load_text(&cfg, "GLEAN_CONFIG_COMMAND_TIMEOUT = 0\ninclude : /bin/true |\n", &err);
        GLEAN_TEST_CHECK(r == -ERANGE && err.line == 2 && strstr(err.msg, "from 1 to 3600"), "timeout 0: %d %s", r,
                         err.msg);
        config_free(cfg);

        /* more output than a file may hold */
        clock_gettime(CLOCK_MONOTONIC, &t0);
        r = load_text(&cfg, "A = 1\ninclude : /usr/bin/yes A = 1 |\n", &err);
        GLEAN_TEST_CHECK(r == -EFBIG && err.line == 2 && strstr(err.msg, "printed more than 16 MiB") &&
                                 raw_is(cfg, "A", NULL),
                         "yes: %d %s:%d %s (%.1f s)", r, err.file, err.line, err.msg, seconds_since(&t0));
        config_free(cfg);

        /* a command that fails, is killed, or is not there */
        r = load_text(&cfg, "A = 1\n\ninclude : \"/bin/sh -c 'echo B = 1; exit 1'\" |\n", &err);
        GLEAN_TEST_CHECK(r == -EIO && err.line == 3 && strstr(err.msg, "exited with status 1") && raw_is(cfg, "B", NULL),
                         "exit 1: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);
        r = load_text(&cfg, "include : \"/bin/sh -c 'kill -TERM $$'\" |\n", &err);
        GLEAN_TEST_CHECK(r == -EIO && err.line == 1 && strstr(err.msg, "killed by signal 15"), "signal: %d %s", r,
                         err.msg);
        config_free(cfg);
        r = load_text(&cfg, "include : /nonexistent/glean-gen |\n", &err);
        GLEAN_TEST_CHECK(r == -ENOENT && err.line == 1 &&
                                 strstr(err.msg, "cannot run '/nonexistent/glean-gen': No such file or directory"),
                         "missing: %d %s", r, err.msg);
        config_free(cfg);

        /* output holding a NUL byte */
        r = load_text(&cfg, "include : \"/usr/bin/printf 'A = 1\\nB = 2\\0\\n'\" |\n", &err);
        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 1 && strstr(err.msg, "NUL byte (line 2)"), "NUL: %d %s", r,
                         err.msg);
        config_free(cfg);

        /* a command whose output includes itself: bounded by the depth */
        snprintf(text, sizeof(text), "echo \"N = \\$(N)x\"\necho 'include : %s |'\n", path_of("self.sh"));
        write_script("self.sh", text);
        snprintf(text, sizeof(text), "include : %s |\n", path_of("self.sh"));
        r = load_text(&cfg, text, &err);
        GLEAN_TEST_CHECK(r == -ELOOP && strstr(err.file, "self.sh |") && err.line == 2 &&
                                 strstr(err.msg, "nested more than 20 levels deep"),
                         "nested: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);
}

/* ---- LOCAL_CONFIG_DIR, LOCAL_CONFIG_FILE, the standard files ---- */

static void test_local_files(void) {
        char text[2048];
        ConfigError err;
        Config *cfg;
        char **files = NULL;
        int r, n;

        mkdir(path_of("loc"), 0755);
        mkdir(path_of("loc/d1"), 0755);
        mkdir(path_of("loc/d2"), 0755);
        write_file("loc/d1/10.conf", "ORDER = $(ORDER) d1\n");
        write_file("loc/d1/20.sh", "ORDER = $(ORDER) script\n"); /* excluded, as in HTCondor */
        write_file("loc/d2/10.conf", "ORDER = $(ORDER) d2\n");
        snprintf(text, sizeof(text),
                 "ORDER = $(ORDER) b\nLOCAL_CONFIG_FILE = %s, %s %s\n", path_of("loc/b.conf"),
                 path_of("loc/c.conf"), path_of("loc/e.conf"));
        write_file("loc/b.conf", text); /* drops a.conf, adds e.conf: c then e follow */
        snprintf(text, sizeof(text), "ORDER = $(ORDER) c\nLOCAL_CONFIG_DIR = %s\n", path_of("loc/d2"));
        write_file("loc/c.conf", text);
        write_file("loc/e.conf", "ORDER = $(ORDER) e\n");
        write_file("loc/a.conf", "ORDER = $(ORDER) a\n");
        snprintf(text, sizeof(text), "ORDER = main\nLOCAL_CONFIG_DIR = %s\nLOCAL_CONFIG_FILE = %s,%s\t%s\n",
                 path_of("loc/d1"), path_of("loc/b.conf"), path_of("loc/a.conf"), path_of("loc/c.conf"));
        write_file("loc/main.conf", text);

        r = load_path(&cfg, "loc/main.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "ORDER", "main d1 b c e d2"), "order: %d %s:%d %s: ORDER '%s'", r,
                         err.file, err.line, err.msg, r == 0 ? config_raw(cfg, "ORDER") : "");
        n = cfg ? config_files_read(cfg, &files) : -1;
        GLEAN_TEST_CHECK(n == 6 && strcmp(files[0], path_of("loc/main.conf")) == 0 &&
                                 strcmp(files[1], path_of("loc/d1/10.conf")) == 0 &&
                                 strcmp(files[2], path_of("loc/b.conf")) == 0 &&
                                 strcmp(files[3], path_of("loc/c.conf")) == 0 &&
                                 strcmp(files[4], path_of("loc/e.conf")) == 0 &&
                                 strcmp(files[5], path_of("loc/d2/10.conf")) == 0,
                         "files read: %d", n);
        config_strv_free(files);
        config_free(cfg);

        /* a missing local file: an error naming it and the line asking */
        snprintf(text, sizeof(text), "A = 1\nLOCAL_CONFIG_FILE = %s %s\n", path_of("loc/e.conf"),
                 path_of("loc/missing.conf"));
        write_file("loc/miss.conf", text);
        r = load_path(&cfg, "loc/miss.conf", &err);
        GLEAN_TEST_CHECK(r == -ENOENT && strcmp(err.file, path_of("loc/miss.conf")) == 0 && err.line == 2 &&
                                 strstr(err.msg, "LOCAL_CONFIG_FILE: cannot read") && strstr(err.msg, "missing.conf"),
                         "missing: %d %s:%d %s", r, err.file, err.line, err.msg);
        GLEAN_TEST_CHECK(!cfg, "no Config on failure");
        /* ... skipped with a warning when REQUIRE_LOCAL_CONFIG_FILE is false */
        snprintf(text, sizeof(text), "REQUIRE_LOCAL_CONFIG_FILE = false\nLOCAL_CONFIG_FILE = %s %s\n",
                 path_of("loc/missing.conf"), path_of("loc/e.conf"));
        write_file("loc/miss-ok.conf", text);
        r = load_path(&cfg, "loc/miss-ok.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "ORDER", " e") && has_warning(cfg, "missing.conf' skipped"),
                         "not required: %d %s", r, err.msg);
        config_free(cfg);

        /* LOCAL_CONFIG_FILE = COMMAND | */
        write_script("loc/gen.sh", "echo 'GEN = $(GEN) ran'\n");
        snprintf(text, sizeof(text), "LOCAL_CONFIG_FILE = %s |\n", path_of("loc/gen.sh"));
        write_file("loc/cmd.conf", text);
        r = load_path(&cfg, "loc/cmd.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "GEN", " ran"), "local command: %d %s", r, err.msg);
        config_free(cfg);
        write_mode("loc/cmd-gw.conf", text, 0666);
        r = load_path(&cfg, "loc/cmd-gw.conf", &err);
        GLEAN_TEST_CHECK(r == -EPERM && strcmp(err.file, path_of("loc/cmd-gw.conf")) == 0 && err.line == 1 &&
                                 strstr(err.msg, "writable by others"),
                         "local command, world-writable: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);

        /* a LOCAL_CONFIG_DIR that does not exist: nothing to read */
        write_file("loc/nodir.conf", "LOCAL_CONFIG_DIR = /nonexistent/glean/config.d\nA = 1\n");
        r = load_path(&cfg, "loc/nodir.conf", &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "A", "1"), "no dir: %d %s", r, err.msg);
        config_free(cfg);
}

static void test_standard_files(void) {
        char text[600];
        ConfigError err = {};
        Config *cfg = NULL;
        char **files = NULL;
        int r;

        write_file("std-glean.conf", "WHO = glean\n");
        write_file("std-condor.conf", "WHO = condor\n");
        write_script("std-gen.sh", "echo 'WHO = command'\n");

        setenv("GLEAN_CONFIG", "/dev/null", 1);
        setenv("CONDOR_CONFIG", path_of("std-condor.conf"), 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", NULL) && config_files_read(cfg, &files) == 0 && !files &&
                                 config_raw(cfg, "LOCAL_CONFIG_DIR"),
                         "/dev/null: defaults only: %d %s", r, err.msg);
        config_free(cfg);

        setenv("GLEAN_CONFIG", path_of("std-glean.conf"), 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", "glean"), "GLEAN_CONFIG wins: %d %s", r, err.msg);
        config_free(cfg);

        unsetenv("GLEAN_CONFIG");
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", "condor"), "CONDOR_CONFIG: %d %s", r, err.msg);
        config_free(cfg);

        setenv("GLEAN_CONFIG", "", 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", "condor"), "empty GLEAN_CONFIG: %d %s", r, err.msg);
        config_free(cfg);
        unsetenv("GLEAN_CONFIG");

        setenv("CONDOR_CONFIG", "only_env", 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", NULL) && config_files_read(cfg, &files) == 0,
                         "ONLY_ENV: %d %s", r, err.msg);
        config_free(cfg);

        snprintf(text, sizeof(text), "%s |", path_of("std-gen.sh"));
        setenv("CONDOR_CONFIG", text, 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", "command"), "CONDOR_CONFIG command: %d %s", r, err.msg);
        config_free(cfg);

        setenv("CONDOR_CONFIG", path_of("std-absent.conf"), 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == -ENOENT && strstr(err.msg, "cannot read"), "absent CONDOR_CONFIG: %d %s", r, err.msg);
        unsetenv("CONDOR_CONFIG");

        r = config_load_path("/dev/null", &cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && raw_is(cfg, "WHO", NULL), "--file /dev/null: %d %s", r, err.msg);
        config_free(cfg);
}

static void test_files_read(void) {
        char text[1200];
        ConfigError err = {};
        Config *cfg = NULL, *copy = NULL;
        char **files = NULL;
        int n;

        write_file("fr-sub.conf", "S = 1\n");
        snprintf(text, sizeof(text), "include : %s\ninclude : %s\ninclude : %s\n", path_of("fr-sub.conf"),
                 path_of("fr-sub.conf"), path_of("fr-sub.conf"));
        write_file("fr-main.conf", text);
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        GLEAN_TEST_CHECK(config_files_read(cfg, &files) == 0 && !files, "none before loading");
        GLEAN_TEST_CHECK(config_load_file(cfg, path_of("fr-main.conf"), &err) == 0, "load: %s", err.msg);
        n = config_files_read(cfg, &files);
        GLEAN_TEST_CHECK(n == 2 && strcmp(files[0], path_of("fr-main.conf")) == 0 &&
                                 strcmp(files[1], path_of("fr-sub.conf")) == 0 && !files[2],
                         "each once: %d", n);
        config_strv_free(files);
        /* a failed load leaves the list as it was */
        write_file("fr-bad.conf", "oops\n");
        GLEAN_TEST_CHECK(config_load_file(cfg, path_of("fr-bad.conf"), &err) < 0 &&
                                 config_files_read(cfg, &files) == 2,
                         "all or nothing");
        config_strv_free(files);
        GLEAN_TEST_CHECK(config_copy(cfg, &copy) == 0 && config_files_read(copy, &files) == 2 &&
                                 strcmp(files[1], path_of("fr-sub.conf")) == 0,
                         "copied");
        config_strv_free(files);
        config_free(copy);
        config_free(cfg);
}

/* ---- HTCondor's files ---- */

/* The manual's include and condition examples, each copied into the
 * temporary directory (so that their owner and mode are ours), with
 * LOCAL_DIR and RELEASE_DIR pointing there; stuff.pl as the manual says. */
static void test_manual(void) {
        static const struct {
                int n;
                int line; /* 0: loads; else the line of the error */
                const char *msg;
        } cases[] = {
                { 25, 2, "cannot run '/bin/make_the_config': No such file or directory" },
                { 26, 2, "include: unknown option '[ifexist]'" }, /* the syntax summary, not a file */
                { 27, 3, "include: cannot read" },
                { 28, 3, "cannot run" },
                { 29, 3, "include: cannot read" },
                { 30, 3, "include: cannot read" },
                { 31, 0, NULL },
                { 32, 3, "error: <error message>" },
                { 33, 0, NULL },
                { 34, 0, NULL },
                { 35, 0, NULL },
        };
        char text[1200], name[64], src[256];

        mkdir(path_of("man"), 0755);
        write_file("man/stuff.pl", "print \"STUFF=1\\n\";\n");
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                _cleanup_config_free_ char *body = NULL;
                ConfigError err = {};
                Config *cfg = NULL;
                size_t len = 0;
                FILE *f;
                int r;

                snprintf(src, sizeof(src), "tests/config/htcondor/manual/introduction-to-configuration-%02d.conf",
                         cases[i].n);
                f = fopen(src, "r");
                GLEAN_TEST_CHECK_FATAL(f != NULL, "cannot open %s", src);
                body = calloc(1, 8192);
                len = fread(body, 1, 8191, f);
                fclose(f);
                body[len] = '\0';
                /* LOCAL_DIR and RELEASE_DIR first, then the example as it is */
                snprintf(name, sizeof(name), "man/%02d.conf", cases[i].n);
                snprintf(text, sizeof(text), "%s", body);
                write_file(name, text);
                snprintf(text, sizeof(text), "LOCAL_DIR = %s\nRELEASE_DIR = %s\nREQUIRE_LOCAL_CONFIG_FILE = true\n"
                                             "include : %s\n",
                         path_of("man"), path_of("man"), path_of(name));
                snprintf(name, sizeof(name), "man/%02d-wrap.conf", cases[i].n);
                write_file(name, text);
                (void) unlink(path_of("man/stuff.config"));
                r = load_path(&cfg, name, &err);
                snprintf(name, sizeof(name), "man/%02d.conf", cases[i].n);
                if (cases[i].line == 0)
                        GLEAN_TEST_CHECK(r == 0, "manual %d: %d %s:%d %s", cases[i].n, r, err.file, err.line, err.msg);
                else
                        GLEAN_TEST_CHECK(r < 0 && strcmp(err.file, path_of(name)) == 0 &&
                                                 err.line == cases[i].line && strstr(err.msg, cases[i].msg),
                                         "manual %d: %d %s:%d %s", cases[i].n, r, err.file, err.line, err.msg);
                if (cases[i].n == 31 || cases[i].n == 33)
                        GLEAN_TEST_CHECK(raw_is(cfg, "STUFF", "1"), "manual %d: STUFF", cases[i].n);
                if (cases[i].n == 34)
                        GLEAN_TEST_CHECK(raw_is(cfg, "X", "-1"), "manual 34: X");
                if (cases[i].n == 35)
                        GLEAN_TEST_CHECK(raw_is(cfg, "DO_X", "True") && raw_is(cfg, "DO_Y", NULL), "manual 35: DO_X");
                config_free(cfg);
        }
}

/* HTCondor's shipped files: condor_config.generic and .tarball with
 * their LOCAL_DIR in the temporary directory (set after them: the local
 * files are found once the main file is read), 00-security's `if version`. */
static void test_examples(void) {
        static const char *const mains[] = { "condor_config.generic", "condor_config.tarball" };
        char text[1200];

        mkdir(path_of("ex"), 0755);
        write_file("ex/condor_config.local", "LOCAL_WAS_READ = yes\n");
        for (size_t i = 0; i < 2; i++) {
                ConfigError err = {};
                Config *cfg = NULL;
                char **files = NULL;
                char cwd[400];
                int r, n;

                GLEAN_TEST_CHECK_FATAL(getcwd(cwd, sizeof(cwd)) != NULL, "getcwd");
                snprintf(text, sizeof(text), "include : %s/tests/config/htcondor/examples/%s\nLOCAL_DIR = %s\n", cwd,
                         mains[i], path_of("ex"));
                write_file("ex/wrap.conf", text);
                r = load_path(&cfg, "ex/wrap.conf", &err);
                GLEAN_TEST_CHECK(r == 0, "%s: %d %s:%d %s", mains[i], r, err.file, err.line, err.msg);
                n = cfg ? config_files_read(cfg, &files) : -1;
                GLEAN_TEST_CHECK(n == (i == 0 ? 3 : 2) && (i != 0 || raw_is(cfg, "LOCAL_WAS_READ", "yes")),
                                 "%s: %d files read", mains[i], n);
                config_strv_free(files);
                config_free(cfg);
        }

        /* 00-security: past its `if version >= 23.10.0` (line 28) */
        {
                ConfigError err = {};
                Config *cfg = NULL;
                int r = config_load_path("tests/config/htcondor/examples/00-security", &cfg, &err);

                GLEAN_TEST_CHECK(r == 0 || (err.line > 28 && !strstr(err.msg, "version")), "00-security: %d %s:%d %s",
                                 r, err.file, err.line, err.msg);
                config_free(cfg);
        }
}

static CU_TestInfo cond_tests[] = {
        { "conditions", test_conditions },
        { "version-compare", test_version_compare },
        { "unbalanced", test_unbalanced },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo command_tests[] = {
        { "include-command", test_include_command },
        { "include-into", test_include_into },
        { "limits", test_command_limits },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo local_tests[] = {
        { "local-files", test_local_files },
        { "standard-files", test_standard_files },
        { "files-read", test_files_read },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo htcondor_tests[] = {
        { "manual", test_manual },
        { "examples", test_examples },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "conditions", files_init, files_cleanup, NULL, NULL, cond_tests },
        { "include-commands", files_init, files_cleanup, NULL, NULL, command_tests },
        { "local-files", files_init, files_cleanup, NULL, NULL, local_tests },
        { "htcondor-files", files_init, files_cleanup, NULL, NULL, htcondor_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

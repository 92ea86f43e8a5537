/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-htcondor.c — HTCondor's own configuration loads in glean and
 * means what it means in HTCondor (tests/config/htcondor/README.md):
 *
 *   examples  every file HTCondor ships in src/condor_examples loads as the
 *             main file of a machine (with LOCAL_DIR pointing at a
 *             directory holding an empty condor_config.local, config/ and
 *             config.d/), and every name it defines expands
 *   values    a few knobs of those files hold what HTCondor documents
 *   manual    every condor-config block of HTCondor's administrators'
 *             manual loads and expands, except the blocks of a table that
 *             are not configuration (placeholders, a map file, includes of
 *             files that only exist on the manual's machine, an `error :`
 *             example), each of which must fail with the reason given
 *
 * What glean cannot honour in these files is a warning naming the line
 * (config_warnings()); the test prints how many there are.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config/config.h"
#include "test-util.h"

#define FIXTURES "tests/config/htcondor"

static char tmpdir[] = "/tmp/glean-test-htcondor-XXXXXX";

static int compare_names(const void *a, const void *b) {
        return strcmp(*(const char *const *) a, *(const char *const *) b);
}

/* The regular files of dir, sorted; NULL-terminated. */
static char **list_dir(const char *dir) {
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d = opendir(dir);

        GLEAN_TEST_CHECK_FATAL(d != NULL, "cannot open %s: %m (run from the top of the tree)", dir);
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || strcmp(de->d_name, "README.md") == 0)
                        continue;
                names = realloc(names, (n + 2) * sizeof(char *));
                GLEAN_TEST_CHECK_FATAL(names != NULL, "out of memory");
                names[n] = strdup(de->d_name);
                GLEAN_TEST_CHECK_FATAL(names[n] != NULL, "out of memory");
                names[++n] = NULL;
        }
        closedir(d);
        GLEAN_TEST_CHECK_FATAL(n > 0, "%s is empty", dir);
        qsort(names, n, sizeof(char *), compare_names);
        return names;
}

static char *path_join(const char *a, const char *b) {
        char *s = NULL;

        GLEAN_TEST_CHECK_FATAL(asprintf(&s, "%s/%s", a, b) >= 0, "out of memory");
        return s;
}

static void write_file(const char *path, const char *text) {
        FILE *f = fopen(path, "w");

        GLEAN_TEST_CHECK_FATAL(f != NULL, "cannot write %s: %m", path);
        fputs(text, f);
        GLEAN_TEST_CHECK_FATAL(fclose(f) == 0, "cannot write %s: %m", path);
}

/* Every defined name expands; returns how many did not (each reported). */
static int expand_all(const Config *cfg, const char *what) {
        char **names = NULL;
        int bad = 0;

        GLEAN_TEST_CHECK_FATAL(config_names(cfg, &names) >= 0, "config_names failed");
        for (char **n = names; *n; n++) {
                ConfigError err = {};
                char *v = NULL;
                int r = config_get(cfg, *n, &v, &err);

                GLEAN_TEST_CHECK(r >= 0, "%s: %s does not expand: %s:%d: %s", what, *n, err.file, err.line, err.msg);
                bad += r < 0;
                free(v);
        }
        config_strv_free(names);
        return bad;
}

static int count_warnings(const Config *cfg) {
        char **w = NULL;
        int n = config_warnings(cfg, &w);

        config_strv_free(w);
        return n > 0 ? n : 0;
}

/* An example as the main file of a machine: its text, then LOCAL_DIR set to
 * tmpdir (its local file and directories are there, empty); NULL on error
 * with err filled. */
static Config *load_example(const char *name, ConfigError *err) {
        char *src = NULL, *text = NULL, *main_path = NULL, *full = NULL;
        Config *cfg = NULL;
        size_t len = 0;

        src = path_join(FIXTURES "/examples", name);
        GLEAN_TEST_CHECK_FATAL(glean_test_read_file(src, &text, &len) == 0, "cannot read %s", src);
        GLEAN_TEST_CHECK_FATAL(asprintf(&full, "%s\nLOCAL_DIR = %s\n", text, tmpdir) >= 0, "out of memory");
        main_path = path_join(tmpdir, name);
        write_file(main_path, full);
        if (config_load_path(main_path, &cfg, err) < 0)
                cfg = NULL;
        free(src);
        free(text);
        free(full);
        free(main_path);
        return cfg;
}

static void test_examples(void) {
        char **names = list_dir(FIXTURES "/examples");
        int files = 0, loaded = 0, warnings = 0;

        for (char **n = names; *n; n++) {
                ConfigError err = {};
                Config *cfg = load_example(*n, &err);

                files++;
                GLEAN_TEST_CHECK(cfg != NULL, "examples/%s does not load: %s:%d: %s", *n, err.file, err.line, err.msg);
                if (!cfg)
                        continue;
                loaded++;
                expand_all(cfg, *n);
                warnings += count_warnings(cfg);
                config_free(cfg);
        }
        printf("\n  examples: %d of %d files load, %d warnings in all\n", loaded, files, warnings);
        config_strv_free(names);
}

/* ---- values ---- */

typedef struct ValueCase {
        const char *file; /* in examples/ */
        const char *name;
        const char *value; /* expanded; NULL: undefined */
} ValueCase;

static const ValueCase value_cases[] = {
        /* 00-minicondor: a personal pool that answers quickly */
        { "00-minicondor", "NEGOTIATOR_INTERVAL", "2" },
        { "00-minicondor", "SCHEDD_INTERVAL", "5" },
        { "00-minicondor", "UPDATE_INTERVAL", "5" },
        { "00-minicondor", "RUNBENCHMARKS", "0" },
        /* the roles put their daemons in DAEMON_LIST (param_info.in) */
        { "00-execution-point", "DAEMON_LIST", "MASTER STARTD" },
        { "00-access-point", "DAEMON_LIST", "MASTER SCHEDD" },
        /* a node that runs jobs, as HTCondor's current defaults */
        { "00-execution-point", "START", "TRUE" },
        { "00-execution-point", "SUSPEND", "FALSE" },
        { "00-execution-point", "PREEMPT", "FALSE" },
        { "condor_config.local.dedicated.resource", "RANK", "0" },
};

static void test_values(void) {
        for (size_t i = 0; i < sizeof(value_cases) / sizeof(value_cases[0]); i++) {
                const ValueCase *c = &value_cases[i];
                ConfigError err = {};
                Config *cfg = load_example(c->file, &err);
                char *v = NULL;
                int r;

                GLEAN_TEST_CHECK(cfg != NULL, "row %zu: %s does not load: %s:%d: %s", i, c->file, err.file, err.line,
                                 err.msg);
                if (!cfg)
                        continue;
                r = config_get(cfg, c->name, &v, &err);
                if (!c->value)
                        GLEAN_TEST_CHECK(r == -ENOENT, "row %zu: %s: %s is '%s', want undefined", i, c->file, c->name,
                                         v);
                else
                        GLEAN_TEST_CHECK(r >= 0 && strcasecmp(v, c->value) == 0, "row %zu: %s: %s is '%s', want '%s'",
                                         i, c->file, c->name, r >= 0 ? v : err.msg, c->value);
                free(v);
                config_free(cfg);
        }
}

/* ---- the manual ---- */

typedef struct ManualRefusal {
        const char *file;   /* in manual/ */
        const char *error;  /* a part of the error */
        const char *reason; /* why the block is not configuration that loads */
} ManualRefusal;

static const ManualRefusal manual_refusals[] = {
        { "ep-policy-configuration-21.conf", "not '...'", "'...' stands for lines left out" },
        { "ep-policy-configuration-22.conf", "not '...'", "'...' stands for lines left out" },
        { "ep-policy-configuration-62.conf", "'SLOT_TYPE_<N>_CONSUMPTION_POLICY' is not a valid name",
          "<N> is a placeholder" },
        { "introduction-to-configuration-02.conf", "'<macro_name>' is not a valid name", "a placeholder" },
        { "introduction-to-configuration-26.conf", "'[ifexist]'", "the syntax line: [ifexist] marks an option" },
        { "introduction-to-configuration-41.conf", "'<category name>'", "a placeholder" },
        { "introduction-to-configuration-27.conf", "config.vm", "includes a file of the manual's machine" },
        { "introduction-to-configuration-28.conf", "script.", "includes a command of the manual's machine" },
        { "introduction-to-configuration-29.conf", "config.vm", "includes a file of the manual's machine" },
        { "introduction-to-configuration-30.conf", "config.vm", "includes a file of the manual's machine" },
        { "introduction-to-configuration-32.conf", "error: <error message>", "shows `error :`, which refuses" },
        { "configuration-global-03.conf", "LOCAL_CONFIG_FILE: cannot read", "a local file of the manual's machine" },
        { "configuration-global-04.conf", "LOCAL_CONFIG_FILE: cannot read", "a local file of the manual's machine" },
        { "configuration-global-05.conf", "LOCAL_CONFIG_FILE: cannot read", "a local file of the manual's machine" },
        { "introduction-to-configuration-47.conf", "LOCAL_CONFIG_FILE: cannot read",
          "local files of the manual's machine" },
        { "introduction-to-configuration-25.conf", "'/bin/make_the_config'", "a command of the manual's machine" },
        { "introduction-to-configuration-33.conf", "'perl ", "a script of the manual's machine (stuff.pl)" },
        { "security-21.conf", "SCITOKENS", "a map file (CERTIFICATE_MAPFILE), not configuration" },
};

/* The manual's blocks that load but do not expand, on purpose. */
static const ManualRefusal manual_no_expand[] = {
        { "introduction-to-configuration-06.conf", "macro expansion loop: A -> B -> A", "shows a loop" },
};

static const ManualRefusal *find_refusal(const ManualRefusal *t, size_t n, const char *file) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(t[i].file, file) == 0)
                        return &t[i];
        return NULL;
}

static void test_manual(void) {
        char **names = list_dir(FIXTURES "/manual");
        int files = 0, loaded = 0, refused = 0, warnings = 0;

        for (char **n = names; *n; n++) {
                const ManualRefusal *no = find_refusal(manual_refusals, sizeof(manual_refusals) / sizeof(manual_refusals[0]), *n);
                const ManualRefusal *nx = find_refusal(manual_no_expand,
                                                       sizeof(manual_no_expand) / sizeof(manual_no_expand[0]), *n);
                char *path = path_join(FIXTURES "/manual", *n);
                ConfigError err = {};
                Config *cfg = NULL;
                int r = config_load_path(path, &cfg, &err);

                files++;
                if (no) {
                        GLEAN_TEST_CHECK(r < 0 && strstr(err.msg, no->error),
                                         "manual/%s should be refused (%s) with '%s', got %d: %s", *n, no->reason,
                                         no->error, r, err.msg);
                        refused += r < 0;
                } else {
                        GLEAN_TEST_CHECK(r >= 0, "manual/%s does not load: %s:%d: %s", *n, err.file, err.line,
                                         err.msg);
                        loaded += r >= 0;
                }
                if (r >= 0 && nx) {
                        char **defined = NULL;
                        bool failed = false;

                        GLEAN_TEST_CHECK_FATAL(config_names(cfg, &defined) >= 0, "config_names failed");
                        for (char **d = defined; *d && !failed; d++) {
                                char *v = NULL;

                                failed = config_get(cfg, *d, &v, &err) < 0 && strstr(err.msg, nx->error);
                                free(v);
                        }
                        config_strv_free(defined);
                        GLEAN_TEST_CHECK(failed, "manual/%s should not expand (%s): '%s'", *n, nx->reason, nx->error);
                } else if (r >= 0)
                        expand_all(cfg, *n);
                if (r >= 0)
                        warnings += count_warnings(cfg);
                config_free(cfg);
                free(path);
        }
        printf("\n  manual: %d of %d blocks load, %d refused as the table says, %d warnings in all\n", loaded, files,
               refused, warnings);
        config_strv_free(names);
}

/* ---- set-up ---- */

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static int suite_init(void) {
        static const char *const dirs[] = { "config", "config.d" };
        char p[512];
        FILE *f;

        if (!mkdtemp(tmpdir))
                return -1;
        /* GLEAN_CONFIG / CONDOR_CONFIG must not change what config_load_path reads */
        unsetenv("GLEAN_CONFIG");
        unsetenv("CONDOR_CONFIG");
        snprintf(p, sizeof p, "%s/condor_config.local", tmpdir);
        if (!(f = fopen(p, "w")) || fclose(f) != 0)
                return -1;
        for (size_t i = 0; i < 2; i++) {
                snprintf(p, sizeof p, "%s/%s", tmpdir, dirs[i]);
                if (mkdir(p, 0755) < 0)
                        return -1;
        }
        return 0;
}

static int suite_cleanup(void) {
        return nftw(tmpdir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static CU_TestInfo tests[] = {
        { "examples", test_examples },
        { "values", test_values },
        { "manual", test_manual },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "htcondor", suite_init, suite_cleanup, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

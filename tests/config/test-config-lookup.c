/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-lookup.c — what the daemons ask of a configuration: typed
 * values with errors naming file and line, SLOT<N>_NAME and NAME_VANILLA
 * lookups, the merged STARTD_ATTRS of a slot (seed 002, 3.5.10.5), every
 * name and where it comes from, config_set(); and loading from files:
 * includes of files, directories and globs, LOCAL_CONFIG_DIR, the
 * standard files, and all-or-nothing loading.
 */
#define _GNU_SOURCE
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

static void freep(void *p) {
        free(*(void **) p);
}
#define _cleanup_free_text_ __attribute__((cleanup(freep)))

static Config *load(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
        r = config_load_string(cfg, text, "t.conf", &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "loading failed: %d: %s", err.line, err.msg);
        return cfg;
}

/* ---- typed getters ---- */

typedef enum Kind { INT, REAL, BOOL, EXPR, LIST } Kind;

typedef struct TypedCase {
        Kind kind;
        const char *value; /* N = value */
        int r;
        int64_t i;
        double d;
        bool b;
        const char *text; /* EXPR: unparsed; LIST: items joined by '|' */
} TypedCase;

static const TypedCase typed_cases[] = {
        { INT, "42", 0, 42, 0, false, NULL },
        { INT, "  -7  ", 0, -7, 0, false, NULL },
        { INT, "+3", 0, 3, 0, false, NULL },
        { INT, "15 * $(MINUTE)", 0, 900, 0, false, NULL },
        { INT, "$(HOUR) * 24 * 2", 0, 172800, 0, false, NULL },
        { INT, "9223372036854775807", 0, INT64_MAX, 0, false, NULL },
        { INT, "2.9", 0, 2, 0, false, NULL },
        { INT, "10 / 4", 0, 2, 0, false, NULL },
        { INT, "true", 0, 1, 0, false, NULL },
        { INT, "", -ENOENT, 0, 0, false, NULL },
        { INT, "$(NOPE)", -ENOENT, 0, 0, false, NULL },
        { INT, "abc", -EINVAL, 0, 0, false, "N = 'abc' is not an integer" },
        { INT, "\"12\"", -EINVAL, 0, 0, false, "N = '\"12\"' is not an integer" },
        { INT, "1 +", -EINVAL, 0, 0, false, "N = '1 +' is not an integer" },
        { INT, "1e30", -EINVAL, 0, 0, false, "N = '1e30' is not an integer" },
        { REAL, "0.3", 0, 0, 0.3, false, NULL },
        { REAL, "1e3", 0, 0, 1000, false, NULL },
        { REAL, "7", 0, 0, 7, false, NULL },
        { REAL, "1 / 4.0", 0, 0, 0.25, false, NULL },
        { REAL, "$(BackgroundLoad) * 2", 0, 0, 0.6, false, NULL },
        { REAL, "nan", -EINVAL, 0, 0, false, "N = 'nan' is not a number" },
        { REAL, "x", -EINVAL, 0, 0, false, "N = 'x' is not a number" },
        { BOOL, "True", 0, 0, 0, true, NULL },
        { BOOL, "false", 0, 0, 0, false, NULL },
        { BOOL, "YES", 0, 0, 0, true, NULL },
        { BOOL, "no", 0, 0, 0, false, NULL },
        { BOOL, "T", 0, 0, 0, true, NULL },
        { BOOL, "f", 0, 0, 0, false, NULL },
        { BOOL, "1", 0, 0, 0, true, NULL },
        { BOOL, "0", 0, 0, 0, false, NULL },
        { BOOL, "2 > 1", 0, 0, 0, true, NULL },
        { BOOL, "0.0", 0, 0, 0, false, NULL },
        { BOOL, "KeyboardIdle > 3", -EINVAL, 0, 0, false, "N = 'KeyboardIdle > 3' is not a boolean" },
        { BOOL, "maybe", -EINVAL, 0, 0, false, "N = 'maybe' is not a boolean" },
        { BOOL, "", -ENOENT, 0, 0, false, NULL },
        { EXPR, "$(START)", 0, 0, 0, false,
          "((KeyboardIdle > 15 * 60) && ((LoadAvg - CondorLoadAvg) <= 3.000000000000000E-01 || "
          "(State != \"Unclaimed\" && State != \"Owner\")))" },
        { EXPR, "Memory >= 1024", 0, 0, 0, false, "Memory >= 1024" },
        { EXPR, "1 +", -EINVAL, 0, 0, false, "N = '1 +' is not a ClassAd expression: column" },
        { EXPR, "  ", -ENOENT, 0, 0, false, NULL },
        { LIST, "a, b  c,,d", 0, 0, 0, false, "a|b|c|d" },
        { LIST, " favorite_color,favorite_season ", 0, 0, 0, false, "favorite_color|favorite_season" },
        { LIST, "", 0, 0, 0, false, "" },
        { LIST, "$(CONSOLE_DEVICES), kbd", 0, 0, 0, false, "mouse|console|kbd" },
};

static void join(char **items, char *buf, size_t size) {
        size_t n = 0;

        buf[0] = '\0';
        for (char **i = items; *i && n < size; i++)
                n += (size_t) snprintf(buf + n, size - n, "%s%s", i == items ? "" : "|", *i);
}

static void test_typed(void) {
        for (size_t i = 0; i < sizeof(typed_cases) / sizeof(typed_cases[0]); i++) {
                const TypedCase *c = &typed_cases[i];
                _cleanup_free_text_ char *text = NULL;
                ConfigError err = {};
                Config *cfg;
                int64_t n = 0;
                double d = 0;
                bool b = false;
                int r = 0;

                if (asprintf(&text, "\n\nN = %s", c->value) < 0)
                        GLEAN_TEST_CHECK_FATAL(false, "out of memory");
                cfg = load(text);
                switch (c->kind) {
                case INT:
                        r = config_get_int(cfg, "N", &n, &err);
                        if (r == 0 && c->r == 0)
                                GLEAN_TEST_CHECK(n == c->i, "case %zu: %lld, want %lld", i, (long long) n,
                                                 (long long) c->i);
                        break;
                case REAL:
                        r = config_get_real(cfg, "N", &d, &err);
                        if (r == 0 && c->r == 0)
                                GLEAN_TEST_CHECK(d > c->d - 1e-12 && d < c->d + 1e-12, "case %zu: %g, want %g", i, d,
                                                 c->d);
                        break;
                case BOOL:
                        r = config_get_bool(cfg, "N", &b, &err);
                        if (r == 0 && c->r == 0)
                                GLEAN_TEST_CHECK(b == c->b, "case %zu: %d, want %d", i, b, c->b);
                        break;
                case EXPR: {
                        ClassAdExpr *e = NULL;

                        r = config_get_expr(cfg, "N", CA_MODE_OLD, &e, &err);
                        if (r == 0 && c->r == 0) {
                                char *u = classad_expr_unparse(e);

                                GLEAN_TEST_CHECK(u && strcmp(u, c->text) == 0, "case %zu: '%s', want '%s'", i, u,
                                                 c->text);
                                free(u);
                        }
                        classad_expr_free(e);
                        break;
                }
                case LIST: {
                        char **items = NULL, buf[256];

                        r = config_get_list(cfg, "N", &items, &err);
                        if (r == 0 && c->r == 0) {
                                join(items, buf, sizeof(buf));
                                GLEAN_TEST_CHECK(strcmp(buf, c->text) == 0, "case %zu: '%s', want '%s'", i, buf,
                                                 c->text);
                        }
                        config_strv_free(items);
                        break;
                }
                }
                GLEAN_TEST_CHECK(r == c->r, "case %zu: N = %s gave %d, want %d (%s)", i, c->value, r, c->r, err.msg);
                if (c->r == -EINVAL) {
                        GLEAN_TEST_CHECK(strcmp(err.file, "t.conf") == 0 && err.line == 3,
                                         "case %zu: error at %s:%d, want t.conf:3", i, err.file, err.line);
                        GLEAN_TEST_CHECK(c->kind == LIST || strncmp(err.msg, c->text, strlen(c->text)) == 0,
                                         "case %zu: reason '%s', want '%s'", i, err.msg, c->text);
                }
                config_free(cfg);
        }
}

/* Undefined names and broken expansions through every getter. */
static void test_typed_undefined(void) {
        Config *cfg = load("L1 = $(L2)\nL2 = $(L1)");
        ConfigError err = {};
        ClassAdExpr *e = NULL;
        char **items = NULL, *s = NULL;
        int64_t n;
        double d;
        bool b;

        GLEAN_TEST_CHECK(config_get_int(cfg, "NOPE", &n, &err) == -ENOENT, "int");
        GLEAN_TEST_CHECK(config_get_real(cfg, "NOPE", &d, &err) == -ENOENT, "real");
        GLEAN_TEST_CHECK(config_get_bool(cfg, "NOPE", &b, &err) == -ENOENT, "bool");
        GLEAN_TEST_CHECK(config_get_expr(cfg, "NOPE", CA_MODE_OLD, &e, &err) == -ENOENT, "expr");
        GLEAN_TEST_CHECK(config_get_list(cfg, "NOPE", &items, &err) == -ENOENT, "list");
        GLEAN_TEST_CHECK(config_get_slot(cfg, 1, "NOPE", &s, &err) == -ENOENT, "slot");
        GLEAN_TEST_CHECK(config_get_universe(cfg, "NOPE", true, &s, &err) == -ENOENT, "universe");
        GLEAN_TEST_CHECK(config_get_int(cfg, "L1", &n, &err) == -ELOOP && err.line == 2, "int of a loop: %s", err.msg);
        GLEAN_TEST_CHECK(config_get_list(cfg, "L1", &items, &err) == -ELOOP, "list of a loop");
        config_free(cfg);
}

/* ---- slots, universes, STARTD_ATTRS (seed 002, 3.5.7.4 and 3.5.10.5) ---- */

static void test_slot(void) {
        static const struct {
                unsigned slot;
                const char *name;
                const char *value;
        } cases[] = {
                { 1, "favorite_color", "\"blue\"" },  { 1, "favorite_season", "\"spring\"" },
                { 2, "favorite_color", "\"green\"" }, { 2, "favorite_season", "\"spring\"" },
                { 3, "favorite_color", "\"blue\"" },  { 3, "favorite_season", "\"summer\"" },
                { 0, "favorite_color", "\"blue\"" },  { 2, "FAVORITE_COLOR", "\"green\"" },
                { 12, "START", "True" },              { 1, "START", "False" },
        };
        Config *cfg = load("favorite_color = \"blue\"\n"
                           "favorite_season = \"spring\"\n"
                           "STARTD_ATTRS = favorite_color, favorite_season\n"
                           "SLOT2_favorite_color = \"green\"\n"
                           "SLOT3_favorite_season = \"summer\"\n"
                           "START = True\n"
                           "SLOT1_START = False\n");

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int r;

                r = config_get_slot(cfg, cases[i].slot, cases[i].name, &v, &err);
                GLEAN_TEST_CHECK(r == 0 && strcmp(v, cases[i].value) == 0, "slot%u %s: %d '%s', want '%s'",
                                 cases[i].slot, cases[i].name, r, v, cases[i].value);
                free(v);
        }
        config_free(cfg);
}

static void test_universe(void) {
        static const struct {
                const char *name;
                bool vanilla;
                const char *value;
        } cases[] = {
                { "WANT_SUSPEND", true, "True" },
                { "WANT_SUSPEND", false, "( (TARGET.ImageSize < (15 * 1024)) || (KeyboardIdle < 60 == False) || "
                                         "(TARGET.JobUniverse == 5) )" },
                { "SUSPEND", true, "( KeyboardIdle < 60 || ( (CpuBusyTime > 2 * 60) && (CurrentTime - JobStart) > 90 ) )" },
                { "WANT_VACATE", true, "True" },
                { "KILL", true, "False" },
                { "kill", false, "False" },
        };
        Config *cfg = load("WANT_SUSPEND_VANILLA = True\nwant_vacate_vanilla = True\n");

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                ConfigError err = {};
                char *v = NULL;
                int r;

                r = config_get_universe(cfg, cases[i].name, cases[i].vanilla, &v, &err);
                GLEAN_TEST_CHECK(r == 0 && strcmp(v, cases[i].value) == 0, "%s (vanilla %d): %d '%s', want '%s'",
                                 cases[i].name, cases[i].vanilla, r, v, cases[i].value);
                free(v);
        }
        config_free(cfg);
}

static void test_startd_attrs(void) {
        static const struct {
                const char *text;
                unsigned slot;
                const char *attrs;
        } cases[] = {
                /* the manual's example */
                { "STARTD_ATTRS = favorite_color, favorite_season\n"
                  "SLOT1_STARTD_ATTRS = favorite_movie\n"
                  "SLOT2_STARTD_ATTRS = favorite_song\n",
                  1, "favorite_color|favorite_season|favorite_movie" },
                { "STARTD_ATTRS = favorite_color, favorite_season\n"
                  "SLOT1_STARTD_ATTRS = favorite_movie\n"
                  "SLOT2_STARTD_ATTRS = favorite_song\n",
                  2, "favorite_color|favorite_season|favorite_song" },
                { "STARTD_ATTRS = favorite_color, favorite_season\n"
                  "SLOT1_STARTD_ATTRS = favorite_movie\n",
                  3, "favorite_color|favorite_season" },
                /* the order of the four lists, each name once */
                { "STARTD_ATTRS = a, b\nSTARTD_EXPRS = c, A\nSLOT1_STARTD_ATTRS = d\nSLOT1_STARTD_EXPRS = e b f\n",
                  1, "a|b|c|d|e|f" },
                { "STARTD_EXPRS = ConsumptionCpus, ConsumptionMemory, ConsumptionDisk\n", 1,
                  "ConsumptionCpus|ConsumptionMemory|ConsumptionDisk" },
                { "STARTD_ATTRS = $(STARTD_ATTRS) IsDesktop\n", 4, "IsDesktop" },
                { "SLOT1_STARTD_ATTRS = x\n", 0, "" },
                { "", 1, "" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Config *cfg = load(cases[i].text);
                ConfigError err = {};
                char **attrs = NULL, buf[256] = "";
                int r;

                r = config_startd_attrs(cfg, cases[i].slot, &attrs, &err);
                if (r == 0)
                        join(attrs, buf, sizeof(buf));
                GLEAN_TEST_CHECK(r == 0 && strcmp(buf, cases[i].attrs) == 0, "case %zu slot%u: %d '%s', want '%s'", i,
                                 cases[i].slot, r, buf, cases[i].attrs);
                config_strv_free(attrs);
                config_free(cfg);
        }
}

/* ---- names, origins, config_set ---- */

static void test_names_where_set(void) {
        Config *cfg = load("zeta = 1\nAlpha = 2\nSTART = $(START) && x\n");
        const char *file = NULL;
        char **names = NULL, *v = NULL;
        size_t n = 0;
        int line = -1;

        GLEAN_TEST_CHECK_FATAL(config_names(cfg, &names) == 0, "config_names failed");
        for (; names[n]; n++)
                if (n > 0)
                        GLEAN_TEST_CHECK(strcasecmp(names[n - 1], names[n]) < 0, "'%s' before '%s'", names[n - 1],
                                         names[n]);
        GLEAN_TEST_CHECK(n > 100, "only %zu names", n);
        GLEAN_TEST_CHECK(strcasecmp(names[0], "ACCOUNTANT_LOCAL_DOMAIN") == 0,
                         "first name '%s'", names[0]);
        config_strv_free(names);

        GLEAN_TEST_CHECK(config_where(cfg, "alpha", &file, &line) == 0 && strcmp(file, "t.conf") == 0 && line == 2,
                         "Alpha at %s:%d", file, line);
        GLEAN_TEST_CHECK(config_where(cfg, "MINUTE", &file, &line) == 0 && strcmp(file, "<default>") == 0 &&
                                 line == 0,
                         "MINUTE at %s:%d", file, line);
        GLEAN_TEST_CHECK(config_where(cfg, "DETECTED_CPUS", &file, &line) == 0 && strcmp(file, "<detected>") == 0,
                         "DETECTED_CPUS at %s", file);
        GLEAN_TEST_CHECK(config_where(cfg, "NOPE", &file, &line) == -ENOENT, "NOPE has an origin");

        GLEAN_TEST_CHECK(config_set(cfg, "zeta", "$(ZETA) 3") == 0, "config_set failed");
        GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "ZETA"), "1 3") == 0, "zeta is '%s'", config_raw(cfg, "ZETA"));
        GLEAN_TEST_CHECK(config_where(cfg, "zeta", &file, &line) == 0 && strcmp(file, "<set>") == 0 && line == 0,
                         "zeta at %s:%d", file, line);
        GLEAN_TEST_CHECK(config_set(cfg, "new.name", "") == 0 && strcmp(config_raw(cfg, "NEW.NAME"), "") == 0,
                         "empty value");
        GLEAN_TEST_CHECK(config_set(cfg, "bad name", "1") == -EINVAL, "bad name accepted");
        GLEAN_TEST_CHECK(config_set(cfg, "", "1") == -EINVAL, "empty name accepted");
        GLEAN_TEST_CHECK(config_set(cfg, "x", "$(unterminated") == -EINVAL, "malformed value accepted");
        GLEAN_TEST_CHECK(!config_raw(cfg, "x"), "x defined by a failed config_set");
        GLEAN_TEST_CHECK(config_get(cfg, "START", &v, NULL) == 0 && strstr(v, ") && x"), "START '%s'", v);
        free(v);

        /* DETECTED_* are numbers */
        {
                int64_t cpus = 0, mem = -1;

                GLEAN_TEST_CHECK(config_get_int(cfg, "DETECTED_CPUS", &cpus, NULL) == 0 && cpus >= 1, "cpus %lld",
                                 (long long) cpus);
                GLEAN_TEST_CHECK(config_get_int(cfg, "NUM_CPUS", &cpus, NULL) == 0 && cpus >= 1, "NUM_CPUS");
                GLEAN_TEST_CHECK(config_get_int(cfg, "DETECTED_MEMORY", &mem, NULL) == 0 && mem >= 0, "memory");
        }
        config_free(cfg);
}

/* ---- files ---- */

/* HTCondor's authorization knobs, set: each named with its line, never
 * silently ignored; other ALLOW_ knobs and empty values are not. */
static void test_unenforced(void) {
        Config *cfg = load("ALLOW_PSLOT_PREEMPTION = True\n"
                           "ALLOW_WRITE = *.example.org\n"
                           "DENY_READ = bad.example.org\n"
                           "ALLOW_ADMINISTRATOR_COLLECTOR = root@cm\n"
                           "ALLOW_DAEMON =\n"
                           "ALLOW_WRITER = x\n");
        char **msgs = NULL;
        int n = config_unenforced(cfg, &msgs);
        GLEAN_TEST_CHECK(n == 3, "%d knobs named, want 3", n);
        char all[2048] = "";
        for (char **m = msgs; m && *m; m++)
                snprintf(all + strlen(all), sizeof all - strlen(all), "%s\n", *m);
        GLEAN_TEST_CHECK(strstr(all, "t.conf:2: ALLOW_WRITE is not enforced") &&
                                 strstr(all, "t.conf:3: DENY_READ is not enforced") &&
                                 strstr(all, "t.conf:4: ALLOW_ADMINISTRATOR_COLLECTOR is not enforced") &&
                                 !strstr(all, "PSLOT") && !strstr(all, "ALLOW_DAEMON") && !strstr(all, "WRITER"),
                         "%s", all);
        config_strv_free(msgs);
        config_free(cfg);
        cfg = load("NUM_CPUS = 2\n");
        msgs = NULL;
        CU_ASSERT_EQUAL(config_unenforced(cfg, &msgs), 0);
        CU_ASSERT_PTR_NULL(msgs);
        config_free(cfg);
}

static char tmpdir[64];

static void write_file(const char *name, const char *text) {
        char path[256];
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        f = fopen(path, "w");
        GLEAN_TEST_CHECK_FATAL(f != NULL, "cannot create %s", path);
        fputs(text, f);
        fclose(f);
}

static void make_dir(const char *name) {
        char path[256];

        snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
        GLEAN_TEST_CHECK_FATAL(mkdir(path, 0755) == 0, "cannot create %s", path);
}

static const char *path_of(const char *name) {
        static char path[4][256];
        static unsigned n;
        char *p = path[n++ % 4];

        snprintf(p, 256, "%s/%s", tmpdir, name);
        return p;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path);
}

static int files_init(void) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/glean-config-test.XXXXXX");
        return mkdtemp(tmpdir) ? 0 : 1;
}

static int files_cleanup(void) {
        return nftw(tmpdir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) == 0 ? 0 : 1;
}

static void test_include(void) {
        Config *cfg = NULL;
        ConfigError err = {};
        char *v = NULL;
        int r;

        make_dir("inc");
        make_dir("inc/conf.d");
        make_dir("inc/conf.d/subdir");
        make_dir("inc/glob");
        write_file("inc/main.conf", "A = main\n"
                                    "include : sub.conf\n"
                                    "include : conf.d\n"
                                    "include : glob/*.conf\n"
                                    "include ifexist : missing.conf\n"
                                    "include : glob/*.none\n"
                                    "LIST = $(LIST) main\n");
        write_file("inc/sub.conf", "A = $(A) sub\nLIST = sub\nSUBDIR = $(SUBDIR:unset)\n");
        write_file("inc/conf.d/20-b.conf", "LIST = $(LIST) 20-b\n");
        write_file("inc/conf.d/10-a.conf", "LIST = $(LIST) 10-a\n");
        write_file("inc/conf.d/30-c.conf~", "LIST = $(LIST) backup\n");
        write_file("inc/conf.d/.hidden", "LIST = $(LIST) hidden\n");
        write_file("inc/conf.d/#emacs#", "LIST = $(LIST) emacs\n");
        write_file("inc/conf.d/40-d.rpmsave", "LIST = $(LIST) rpmsave\n");
        write_file("inc/conf.d/subdir/x.conf", "LIST = $(LIST) subdir\n");
        write_file("inc/glob/b.conf", "LIST = $(LIST) glob-b\n");
        write_file("inc/glob/a.conf", "LIST = $(LIST) glob-a\n");
        write_file("inc/glob/c.other", "LIST = $(LIST) glob-c\n");

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        r = config_load_file(cfg, path_of("inc/main.conf"), &err);
        GLEAN_TEST_CHECK(r == 0, "main.conf: %d %s:%d: %s", r, err.file, err.line, err.msg);
        GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "A"), "main sub") == 0, "A '%s'", config_raw(cfg, "A"));
        GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "LIST"), "sub 10-a 20-b glob-a glob-b main") == 0, "LIST '%s'",
                         config_raw(cfg, "LIST"));
        r = config_get(cfg, "SUBDIR", &v, &err);
        GLEAN_TEST_CHECK(r == 0 && strcmp(v, "unset") == 0, "SUBDIR '%s'", v);
        free(v);
        {
                const char *file = NULL;
                int line = 0;

                config_where(cfg, "A", &file, &line);
                GLEAN_TEST_CHECK(strcmp(file, path_of("inc/sub.conf")) == 0 && line == 1, "A from %s:%d", file,
                                 line);
        }
        config_free(cfg);
}

typedef struct FileError {
        const char *name;     /* file to load */
        const char *text;     /* its text */
        const char *where;    /* file name (under tmpdir) of the error; NULL: the loaded file */
        int line;
        const char *msg;
} FileError;

static void test_file_errors(void) {
        static const FileError cases[] = {
                { "e1.conf", "A = 1\ninclude : e1-sub.conf\n", "e1-sub.conf", 2, "B: '$(x' has no closing ')'" },
                { "e2.conf", "include : e2.conf\n", "e2.conf", 1, "include and use nested more than 20 levels deep" },
                { "e3.conf", "A = 1\n\ninclude : nothere.conf\n", "e3.conf", 3, "include: cannot read '" },
                { "e4.conf", "include : edir\n", "edir/b.conf", 1, "expected NAME = value" },
                { "e5.conf", "A = 2\ninclude : edir/*.conf\n", "edir/b.conf", 1, "expected NAME = value" },
                { "e6.conf", "A = 1\nB = 2\nC", "e6.conf", 3, "expected NAME = value" },
        };

        write_file("e1-sub.conf", "\nB = $(x\n");
        make_dir("edir");
        write_file("edir/a.conf", "A = 1\n");
        write_file("edir/b.conf", "oops\n");

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Config *cfg = NULL;
                ConfigError err = {};
                size_t before;
                char *raw_before;
                int r;

                write_file(cases[i].name, cases[i].text);
                GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0 && config_set(cfg, "A", "kept") == 0, "config_new");
                before = 0;
                {
                        char **names = NULL;

                        config_names(cfg, &names);
                        for (; names && names[before]; before++)
                                ;
                        config_strv_free(names);
                }
                raw_before = strdup(config_raw(cfg, "START"));
                r = config_load_file(cfg, path_of(cases[i].name), &err);
                GLEAN_TEST_CHECK(r < 0, "case %zu: loaded", i);
                GLEAN_TEST_CHECK(strcmp(err.file, path_of(cases[i].where)) == 0 && err.line == cases[i].line,
                                 "case %zu: error at %s:%d, want %s:%d (%s)", i, err.file, err.line,
                                 cases[i].where, cases[i].line, err.msg);
                GLEAN_TEST_CHECK(strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
                                 "case %zu: reason '%s', want '%s'", i, err.msg, cases[i].msg);

                /* the Config is unchanged: same names, same values */
                {
                        char **names = NULL;
                        size_t after = 0;

                        config_names(cfg, &names);
                        for (; names && names[after]; after++)
                                ;
                        config_strv_free(names);
                        GLEAN_TEST_CHECK(after == before, "case %zu: %zu names, were %zu", i, after, before);
                }
                GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "A"), "kept") == 0, "case %zu: A changed to '%s'", i,
                                 config_raw(cfg, "A"));
                GLEAN_TEST_CHECK(!config_raw(cfg, "B") && strcmp(config_raw(cfg, "START"), raw_before) == 0,
                                 "case %zu: the Config changed", i);
                free(raw_before);
                config_free(cfg);
        }
}

static void test_read_errors(void) {
        Config *cfg = NULL;
        ConfigError err = {};
        FILE *f;
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        r = config_load_file(cfg, path_of("does-not-exist.conf"), &err);
        GLEAN_TEST_CHECK(r == -ENOENT && err.line == 0 && strcmp(err.file, path_of("does-not-exist.conf")) == 0 &&
                                 strstr(err.msg, "cannot read: No such file"),
                         "missing file: %d %s: %s", r, err.file, err.msg);
        r = config_load_file(cfg, tmpdir, &err);
        GLEAN_TEST_CHECK(r == -EISDIR && strstr(err.msg, "cannot read: Is a directory"), "directory: %d %s", r,
                         err.msg);
        r = config_load_file(cfg, "/dev/null", &err);
        GLEAN_TEST_CHECK(r == -EINVAL && strstr(err.msg, "not a regular file"), "/dev/null: %d %s", r, err.msg);

        f = fopen(path_of("nul.conf"), "w");
        GLEAN_TEST_CHECK_FATAL(f != NULL, "cannot create nul.conf");
        fwrite("A = 1\nB = x\0y\n", 1, 14, f);
        fclose(f);
        r = config_load_file(cfg, path_of("nul.conf"), &err);
        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 2 && strstr(err.msg, "NUL byte"), "NUL: %d %d %s", r, err.line,
                         err.msg);
        GLEAN_TEST_CHECK(!config_raw(cfg, "A"), "A defined by a failed load");
        config_free(cfg);
}

/* The standard files: GLEAN_CONFIG, then LOCAL_CONFIG_DIR. */
static void test_load_default(void) {
        Config *cfg = NULL;
        ConfigError err = {};
        char text[512];
        int r;

        make_dir("std");
        make_dir("std/local.d");
        write_file("std/local.d/50-local.conf", "WHO = $(WHO) local\n");
        snprintf(text, sizeof(text), "WHO = main\nLOCAL_CONFIG_DIR = %s/std/local.d\n", tmpdir);
        write_file("std/glean.conf", text);
        write_file("std/no-dir.conf", "LOCAL_CONFIG_DIR = /nonexistent/glean.d\n");
        write_file("std/default-dir.conf", "ETC = /nonexistent/glean\nWHO = main\n");
        write_file("std/broken.conf", "WHO = main\nnot a definition\n");

        setenv("GLEAN_CONFIG", path_of("std/glean.conf"), 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && strcmp(config_raw(cfg, "WHO"), "main local") == 0, "default: %d %s WHO '%s'", r,
                         err.msg, cfg ? config_raw(cfg, "WHO") : "");
        config_free(cfg);
        cfg = NULL;

        r = config_load_path(path_of("std/default-dir.conf"), &cfg, &err);
        GLEAN_TEST_CHECK(r == 0 && strcmp(config_raw(cfg, "WHO"), "main") == 0, "default dir missing: %d %s", r,
                         err.msg);
        config_free(cfg);
        cfg = NULL;

        /* A LOCAL_CONFIG_DIR that does not exist holds nothing to read (HTCondor). */
        r = config_load_path(path_of("std/no-dir.conf"), &cfg, &err);
        GLEAN_TEST_CHECK(r == 0, "missing LOCAL_CONFIG_DIR: %d %s:%d %s", r, err.file, err.line, err.msg);
        config_free(cfg);
        cfg = NULL;

        r = config_load_path(path_of("std/broken.conf"), &cfg, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 2, "broken: %d %s:%d %s", r, err.file, err.line, err.msg);

        setenv("GLEAN_CONFIG", path_of("std/absent.conf"), 1);
        r = config_load_default(&cfg, &err);
        GLEAN_TEST_CHECK(r == -ENOENT && strstr(err.msg, "cannot read"), "absent GLEAN_CONFIG: %d %s", r, err.msg);
        unsetenv("GLEAN_CONFIG");
}

/* A daemon reloading: a broken file leaves the running Config alone. */
static void test_reload(void) {
        Config *cfg = NULL;
        ConfigError err = {};
        char *before = NULL, *after = NULL;
        int r;

        write_file("reload.conf", "START = $(START) && Memory > 1024\nNEGOTIATOR_INTERVAL = 30\n");
        write_file("reload-bad.conf", "START = False\nNEGOTIATOR_INTERVAL = 10\nbroken line\n");
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        r = config_load_file(cfg, path_of("reload.conf"), &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "reload.conf: %s", err.msg);
        GLEAN_TEST_CHECK(config_get(cfg, "START", &before, NULL) == 0, "START");

        r = config_load_file(cfg, path_of("reload-bad.conf"), &err);
        GLEAN_TEST_CHECK(r == -EINVAL && err.line == 3, "reload-bad.conf: %d line %d", r, err.line);
        GLEAN_TEST_CHECK(config_get(cfg, "START", &after, NULL) == 0 && strcmp(before, after) == 0,
                         "START changed to '%s'", after);
        {
                int64_t n = 0;

                GLEAN_TEST_CHECK(config_get_int(cfg, "NEGOTIATOR_INTERVAL", &n, NULL) == 0 && n == 30,
                                 "NEGOTIATOR_INTERVAL %lld", (long long) n);
        }
        r = config_load_string(cfg, "X = 1\nY = $(\n", "<reload>", &err);
        GLEAN_TEST_CHECK(r == -EINVAL && !config_raw(cfg, "X"), "string reload: %d", r);
        free(before);
        free(after);
        config_free(cfg);
}

/* SEC_DEFAULT_AUTHENTICATION_METHODS: HTCondor's names, ours, what is
 * not usable here (with file and line). */
static void test_auth_methods(void) {
        const struct {
                const char *text;
                int r;
                unsigned methods;
                const char *msg;
        } cases[] = {
                { "", 0, 0, NULL },
                { "SEC_DEFAULT_AUTHENTICATION_METHODS =\n", 0, 0, NULL },
                { "SEC_DEFAULT_AUTHENTICATION_METHODS = TOKEN\n", 0, CONFIG_AUTH_TOKEN, NULL },
                { "SEC_DEFAULT_AUTHENTICATION_METHODS = FS, IDTOKENS\n", 0, CONFIG_AUTH_TOKEN, NULL },
                { "SEC_DEFAULT_AUTHENTICATION_METHODS = idtoken password\n", 0,
                  CONFIG_AUTH_TOKEN | CONFIG_AUTH_POOL_KEY, NULL },
                { "SEC_DEFAULT_AUTHENTICATION_METHODS = POOL_KEY\n", 0, CONFIG_AUTH_POOL_KEY, NULL },
                { "X = 1\nSEC_DEFAULT_AUTHENTICATION_METHODS = FS, SSL, TOKEN\n", -EINVAL, 0,
                  "SEC_DEFAULT_AUTHENTICATION_METHODS: glean cannot use the authentication method SSL" },
                { "\nSEC_DEFAULT_AUTHENTICATION_METHODS = FS\n", -EINVAL, 0,
                  "SEC_DEFAULT_AUTHENTICATION_METHODS = FS names no method the pool's connections can use" },
        };
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                Config *cfg = load(cases[i].text);
                ConfigError err = {};
                unsigned m = 99;
                int r = config_get_auth_methods(cfg, &m, &err);
                GLEAN_TEST_CHECK(r == cases[i].r, "case %zu: %d, want %d (%s)", i, r, cases[i].r, err.msg);
                if (r == 0)
                        GLEAN_TEST_CHECK(m == cases[i].methods, "case %zu: methods %u, want %u", i, m,
                                         cases[i].methods);
                else
                        GLEAN_TEST_CHECK(strcmp(err.file, "t.conf") == 0 && err.line == 2 &&
                                                 strstr(err.msg, cases[i].msg),
                                         "case %zu: %s:%d: %s", i, err.file, err.line, err.msg);
                config_free(cfg);
        }
}

static CU_TestInfo lookup_tests[] = {
        { "typed", test_typed },
        { "typed-undefined", test_typed_undefined },
        { "slot", test_slot },
        { "universe", test_universe },
        { "startd-attrs", test_startd_attrs },
        { "names-where-set", test_names_where_set },
        { "unenforced", test_unenforced },
        { "authentication methods", test_auth_methods },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo file_tests[] = {
        { "include", test_include },
        { "errors", test_file_errors },
        { "read-errors", test_read_errors },
        { "load-default", test_load_default },
        { "reload", test_reload },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "lookup", NULL, NULL, NULL, NULL, lookup_tests },
        { "files", files_init, files_cleanup, NULL, NULL, file_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

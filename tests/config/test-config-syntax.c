/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-syntax.c — the lines of a configuration text: every form a
 * definition, a comment, a continuation, a conditional, a template, an
 * include can take, and every error a malformed line gives ("file:line:
 * reason"), each on a fresh Config that a failed load must leave as it was.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/config-internal.h"
#include "test-util.h"

typedef struct SyntaxCase {
        const char *text;
        const char *name;
        const char *raw; /* NULL: name must be undefined */
} SyntaxCase;

static const SyntaxCase syntax_cases[] = {
        /* definitions */
        { "A = 1", "A", "1" },
        { "a = 1", "A", "1" },
        { "A = 1", "a", "1" },
        { "A=1", "A", "1" },
        { "   A   =   spaced   value   ", "A", "spaced   value" },
        { "A\t=\tx", "A", "x" },
        { "A =", "A", "" },
        { "A =   ", "A", "" },
        { "A = 1\nA = 2", "A", "2" },
        { "A = 1\na = 2", "A", "2" },
        { "A : 1", "A", "1" },
        { "A = x = y", "A", "x = y" },
        { "A = x : y", "A", "x : y" },
        { "A = http://example.org:80/", "A", "http://example.org:80/" },
        { "MASTER.LOWPORT = 20000", "master.lowport", "20000" },
        { "GROUP_QUOTA_group_physics.experiment1 = 20", "GROUP_QUOTA_GROUP_PHYSICS.EXPERIMENT1", "20" },
        { "A/B_9 = 1", "a/b_9", "1" },
        { "A = a # not a comment", "A", "a # not a comment" },
        { "A = \"quoted\" string", "A", "\"quoted\" string" },
        { "A = 1\r\nB = 2\r\n", "A", "1" },
        { "A = 1\r\nB = 2\r\n", "B", "2" },
        { "\n\n   \n\tA = 1\n\n", "A", "1" },
        { "A = 1", "B", NULL },
        /* comments */
        { "# A = 1", "A", NULL },
        { "   # A = 1", "A", NULL },
        { "#A = 1\nB = 2", "A", NULL },
        { "# A = 1 \\\nA = 2", "A", "2" },
        { "[HTCondor Settings]\nA = 1", "A", "1" },
        /* continuations */
        { "A = x \\\n  y", "A", "x y" },
        { "A = x\\\ny", "A", "xy" },
        { "A = x \\\n  y \\\n  z", "A", "x y z" },
        { "A = x \\\n# a comment\ny", "A", "x y" },
        { "A = x \\\n   # a comment \\\ny", "A", "x y" },
        { "A = x \\\n# one\n# two\ny", "A", "x y" },
        { "A = x \\\n\nB = 2", "A", "x" },
        { "A = x \\\n\nB = 2", "B", "2" },
        { "A = x \\", "A", "x" },
        { "A = \\\n  1", "A", "1" },
        { "A \\\n = 1", "A", "1" },
        /* several lines: NAME @=tag ... @tag */
        { "A @=end\n  line one\n  line two\n@end", "A", "line one\nline two" },
        { "A @=end\nl1\n# comment\n\nl2\n@end\nB = 2", "A", "l1\nl2" },
        { "A @=end\n@end", "A", "" },
        { "A @= x\nA = 1\n@x", "A", "A = 1" },
        { "A@=end\nv\n@end", "A", "v" },
        /* self-references build on the previous definition */
        { "A = $(A) x", "A", " x" },
        { "A = 1\nA = $(A) 2", "A", "1 2" },
        { "A = 1\nA = $(a)2", "A", "12" },
        { "A = 1\nA = $(A)$(A)", "A", "11" },
        { "A = $(A:dflt)", "A", "dflt" },
        { "A =\nA = $(A:dflt)", "A", "dflt" },
        { "A = 1\nA = $(A:dflt)", "A", "1" },
        { "A = 1\nA = $(B:$(A))", "A", "$(B:1)" },
        { "A = 1\nA = $(B:$(C:$(A)))", "A", "$(B:$(C:1))" },
        { "A = 1\nA = $ENV(HOME:$(A))", "A", "$ENV(HOME:1)" },
        { "A = 1\nA = $(DOLLAR)(A)", "A", "$(DOLLAR)(A)" },
        { "A = 1\nA = $$(A)", "A", "$$(A)" },
        { "A = 1\nA = $(AB) $(B)", "A", "$(AB) $(B)" },
        { "A = $(B)\nB = 2\nA = $(A)+", "A", "$(B)+" },
        { "KILL = $(KILL)", "KILL", "False" },
        { "MINUTE = 2 * $(MINUTE)", "MINUTE", "2 * 60" },
        { "A = cost $5 and $", "A", "cost $5 and $" },
        { "A = $foo(x)", "A", "$foo(x)" },
        /* if / elif / else / endif */
        { "if true\nA = 1\nelse\nA = 2\nendif", "A", "1" },
        { "if false\nA = 1\nelse\nA = 2\nendif", "A", "2" },
        { "IF TRUE\nA = 1\nENDIF", "A", "1" },
        { "if yes\nA = 1\nendif", "A", "1" },
        { "if no\nA = 1\nendif", "A", NULL },
        { "if t\nA = 1\nendif", "A", "1" },
        { "if 1\nA = 1\nendif", "A", "1" },
        { "if 0\nA = 1\nendif", "A", NULL },
        { "if 2.5\nA = 1\nendif", "A", "1" },
        { "if !false\nA = 1\nendif", "A", "1" },
        { "if ! true\nA = 1\nendif", "A", NULL },
        { "if defined MINUTE\nA = 1\nendif", "A", "1" },
        { "if defined NOPE\nA = 1\nendif", "A", NULL },
        { "if ! defined NOPE\nA = 1\nendif", "A", "1" },
        { "E =\nif defined E\nA = 1\nendif", "A", NULL },
        { "if $(NOPE)\nA = 1\nelse\nA = 2\nendif", "A", "2" },
        { "X = yes\nif $(X)\nA = 1\nendif", "A", "1" },
        { "X = MINUTE\nif defined $(X)\nA = 1\nendif", "A", "1" },
        { "if 0\nA = 1\nelif 1\nA = 2\nelse\nA = 3\nendif", "A", "2" },
        { "if 1\nA = 1\nelif 1\nA = 2\nelse\nA = 3\nendif", "A", "1" },
        { "if 0\nA = 1\nelif 0\nA = 2\nelse\nA = 3\nendif", "A", "3" },
        { "if false\nif true\nA = 1\nendif\nelse\nA = 2\nendif", "A", "2" },
        { "if true\nif false\nA = 1\nelse\nA = 2\nendif\nendif", "A", "2" },
        { "if false\n  if bogus condition\n  A = 1\n  endif\nendif\nif true\nelif bogus too\nendif\nA = 3", "A",
          "3" },
        { "if false\nA @=x\nendif\nB = 1", "A", NULL },
        { "if false\ninclude : /nonexistent/glean.conf\nendif\nA = 1", "A", "1" },
        /* templates */
        { "use POLICY : ALWAYS_RUN_JOBS", "START", "True" },
        { "use policy:always_run_jobs", "START", "True" },
        { "@use POLICY : ALWAYS_RUN_JOBS", "PREEMPT", "False" },
        { "use POLICY : ALWAYS_RUN_JOBS, DESKTOP", "KILL", "False" },
        { "use POLICY : ALWAYS_RUN_JOBS\nSTART = $(START) && Memory > 1024", "START", "True && Memory > 1024" },
        { "use POLICY : TIME_OF_DAY\nWorkHours = False", "WorkHours", "False" },
        /* other statements */
        { "warning : look out\nA = 1", "A", "1" },
        { "include ifexist : /nonexistent/glean-test.conf\nA = 1", "A", "1" },
        { "include = 1", "include", "1" },
        { "use = 1", "use", "1" },
};

static Config *new_config(void) {
        Config *cfg = NULL;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0 && cfg, "config_new() failed");
        return cfg;
}

static void test_syntax(void) {
        for (size_t i = 0; i < sizeof(syntax_cases) / sizeof(syntax_cases[0]); i++) {
                const SyntaxCase *c = &syntax_cases[i];
                Config *cfg = new_config();
                ConfigError err = {};
                const char *raw;
                int r;

                r = config_load_string(cfg, c->text, "<test>", &err);
                GLEAN_TEST_CHECK(r == 0, "case %zu: loading gave %d: %s:%d: %s", i, r, err.file, err.line, err.msg);
                raw = config_raw(cfg, c->name);
                if (!c->raw)
                        GLEAN_TEST_CHECK(!raw, "case %zu: %s is '%s', want undefined", i, c->name, raw);
                else
                        GLEAN_TEST_CHECK(raw && strcmp(raw, c->raw) == 0, "case %zu: %s is '%s', want '%s'", i,
                                         c->name, raw ? raw : "(undefined)", c->raw);
                config_free(cfg);
        }
}

/* Where a definition comes from: the first line of a continued line. */
static void test_where(void) {
        static const struct {
                const char *text;
                const char *name;
                int line;
        } cases[] = {
                { "A = 1", "A", 1 },
                { "\n\n# c\nA = 1", "A", 4 },
                { "A = 1 \\\n 2\nB = 3", "B", 3 },
                { "A = 1 \\\n 2\nB = 3", "A", 1 },
                { "X = 0\nA @=end\nv\n@end", "A", 2 },
                { "\nuse POLICY : ALWAYS_RUN_JOBS", "START", 2 },
                { "\n\nif true\nA = 1\nendif", "A", 4 },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                Config *cfg = new_config();
                ConfigError err = {};
                const char *file = NULL;
                int line = -1, r;

                r = config_load_string(cfg, cases[i].text, "where.conf", &err);
                GLEAN_TEST_CHECK(r == 0, "case %zu: loading gave %d: %s", i, r, err.msg);
                r = config_where(cfg, cases[i].name, &file, &line);
                GLEAN_TEST_CHECK(r == 0 && file && strcmp(file, "where.conf") == 0 && line == cases[i].line,
                                 "case %zu: %s at %s:%d, want where.conf:%d", i, cases[i].name, file ? file : "?",
                                 line, cases[i].line);
                config_free(cfg);
        }
}

typedef struct ErrorCase {
        const char *text;
        int line;
        const char *msg; /* the reason starts with this */
} ErrorCase;

static const ErrorCase error_cases[] = {
        { "A", 1, "expected NAME = value, not 'A'" },
        { "A = 1\n  two words", 2, "expected NAME = value, not 'two words'" },
        { "A = 1 \\\n 2\nB", 3, "expected NAME = value" },
        { "A B = 1", 1, "unexpected 'B' between A and '='" },
        { "A B : 1", 1, "unexpected 'B' between A and ':'" },
        { "= 1", 1, "missing name before '='" },
        { " : 1", 1, "missing name before ':'" },
        { "A-B = 1", 1, "'A-B' is not a valid name" },
        { "$(X)_FOO = 1", 1, "'$(X)_FOO' is not a valid name" },
        { "@foo = 1", 1, "'@foo' is not a valid name" },
        { "A = $(B", 1, "A: '$(B' has no closing ')'" },
        { "A = $(B C)", 1, "A: '$(B C)': ' ' cannot be part of a macro name" },
        { "A = $()", 1, "A: '$()' names no macro" },
        { "A = $(:x)", 1, "A: '$(:x)' names no macro" },
        { "A = $(B:x", 1, "A: '$(B:x' has no closing ')'" },
        { "A = $(B:(x)", 1, "A: '$(B:(x)' has no closing ')'" },
        { "A = $(B:$(C)", 1, "A: '$(B:$(C)' has no closing ')'" },
        { "A = $ENV()", 1, "A: '$ENV()' names no environment variable" },
        { "A = $ENV(A.B)", 1, "A: '$ENV(A.B)': '.' cannot be part of a variable name" },
        { "A = $INT(X", 1, "A: '$INT(X' has no closing ')'" },
        { "A = $RANDOM_INTEGER(2,1)", 1, "A: $RANDOM_INTEGER(2,1): the minimum 2 is greater than the maximum 1" },
        { "A = $Fpz(X)", 1, "A: $Fpz(): 'z' is not a letter of the filename functions" },
        { "A = $(B:$RANDOM_CHOICE())", 1, "A: $RANDOM_CHOICE(): no list" },
        { "A @=", 1, "A @= needs one word" },
        { "A @= two words\n@two words", 1, "A @= needs one word" },
        { "A = 1\nB @=end\nvalue", 2, "no line '@end' ends the value of B" },
        { "include : /nonexistent/glean-test.conf", 1, "include: cannot read '/nonexistent/glean-test.conf': No such" },
        { "\ninclude bogus : x", 2, "include: unknown option 'bogus'" },
        { "include command : ls", 1, "include command: not run: commands do not run from text loaded as a string" },
        { "include :", 1, "include: no file name" },
        { "include : $(NOPE)", 1, "include: no file name" },
        /* metaknobs: every case of their own in test-config-metaknobs.c */
        { "use POLICY : NOPE", 1, "use POLICY: HTCondor has no metaknob 'NOPE'" },
        { "use NOPE : X", 1, "use: unknown category 'NOPE' (known: ROLE, POLICY, FEATURE, SECURITY, EXPERIMENTAL)" },
        { "use : DESKTOP", 1, "use needs a category and a name" },
        { "use POLICY :", 1, "use POLICY: which metaknob?" },
        { "use POLICY : DESKTOP(X)", 1, "use POLICY : Desktop takes no arguments, not (X)" },
        { "use POLICY : PREEMPT_IF", 1, "error: use POLICY : PREEMPT_IF requires an argument" },
        { "use POLICY : DESKTOP, NOPE", 1, "use POLICY: HTCondor has no metaknob 'NOPE'" },
        { "error : broken at $(MINUTE)", 1, "error: broken at 60" },
        { "A = 1\nerror 3 : stop", 2, "error: stop" },
        { "if", 1, "if needs a condition" },
        { "if !", 1, "if needs a condition" },
        { "if bogus\nendif", 1, "if: 'bogus' is not a condition" },
        { "if 1 2\nendif", 1, "if: '1 2' is not a condition" },
        { "if version >= 8\nendif", 1, "if: version: '8' is not a version X.Y or X.Y.Z" },
        { "if defined\nendif", 1, "if: defined needs a name" },
        { "if defined a b\nendif", 1, "if: defined needs a name, not 'a b'" },
        { "if $(B\nendif", 1, "'$(B' has no closing ')'" },
        { "endif", 1, "endif without if" },
        { "else", 1, "else without if" },
        { "elif 1", 1, "elif without if" },
        { "if 1\nelse\nelse\nendif", 3, "else after else" },
        { "if 1\nelse\nelif 1\nendif", 3, "elif after else" },
        { "if 1\nelse x\nendif", 2, "unexpected 'x' after else" },
        { "if 1\nendif x", 2, "unexpected 'x' after endif" },
        { "\nif 1\nA = 1", 2, "if without endif" },
        { "if 1\nif 0\nendif", 1, "if without endif" },
        { "X = $(Y)\nY = $(X)\ninclude : $(X)", 3, "macro expansion loop: X -> Y -> X" },
        { "X = $(Y)\nY = $(X)\nif $(X)\nendif", 3, "macro expansion loop: X -> Y -> X" },
};

static void test_errors(void) {
        for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
                const ErrorCase *c = &error_cases[i];
                Config *cfg = new_config();
                ConfigError err = {};
                size_t before = cfg->n_entries;
                int r;

                r = config_load_string(cfg, c->text, "bad.conf", &err);
                GLEAN_TEST_CHECK(r < 0, "case %zu: '%s' loaded", i, c->text);
                GLEAN_TEST_CHECK(strcmp(err.file, "bad.conf") == 0 && err.line == c->line,
                                 "case %zu: error at %s:%d, want bad.conf:%d (%s)", i, err.file, err.line, c->line,
                                 err.msg);
                GLEAN_TEST_CHECK(strncmp(err.msg, c->msg, strlen(c->msg)) == 0, "case %zu: reason '%s', want '%s...'",
                                 i, err.msg, c->msg);
                /* all or nothing: not even the good lines before the bad one */
                GLEAN_TEST_CHECK(cfg->n_entries == before && !config_raw(cfg, "A"),
                                 "case %zu: the failed load changed the Config", i);
                config_free(cfg);
        }
}

/* Errors that need a long text: prefix, then middle n times, then suffix n times. */
static char *repeat(const char *prefix, const char *middle, const char *suffix, size_t n) {
        size_t lp = strlen(prefix), lm = strlen(middle), ls = strlen(suffix), len = lp;
        char *s = malloc(lp + n * (lm + ls) + 1);

        if (!s)
                return NULL;
        memcpy(s, prefix, lp);
        for (size_t i = 0; i < n; i++, len += lm)
                memcpy(s + len, middle, lm);
        for (size_t i = 0; i < n; i++, len += ls)
                memcpy(s + len, suffix, ls);
        s[len] = '\0';
        return s;
}

static void test_error_limits(void) {
        static const struct {
                const char *prefix, *middle, *suffix;
                size_t n;
                int r;
                const char *msg;
        } cases[] = {
                { "", "if 1\n", "", 64, -EINVAL, "if nested more than 63 levels deep" },
                { "", "if 1\n", "endif\n", 63, 0, NULL },
                { "A = ", "$(B:", ")", 70, -EINVAL, "A: macro references nested more than 64 levels deep" },
                { "A = ", "$(B:", ")", 60, 0, NULL },
                { "A = 0123456789abcdef\n", "A = $(A)$(A)\n", "", 40, -E2BIG, "A: the value of A is longer than" },
                { "A = ", "x", "", 2 * 1024 * 1024, -E2BIG, "line longer than" },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *text = repeat(cases[i].prefix, cases[i].middle, cases[i].suffix, cases[i].n);
                Config *cfg = new_config();
                ConfigError err = {};
                int r;

                GLEAN_TEST_CHECK_FATAL(text, "out of memory");
                r = config_load_string(cfg, text, "big.conf", &err);
                GLEAN_TEST_CHECK(r == cases[i].r, "case %zu: gave %d, want %d (%s)", i, r, cases[i].r, err.msg);
                if (cases[i].msg)
                        GLEAN_TEST_CHECK(strstr(err.msg, cases[i].msg) != NULL, "case %zu: reason '%s', want '%s'", i,
                                         err.msg, cases[i].msg);
                free(text);
                config_free(cfg);
        }
}

/* include is refused where the file system must not be reached. */
static void test_no_include(void) {
        Config *cfg = new_config();
        ConfigError err = {};
        int r;

        r = config_load_string_flags(cfg, "A = 1\ninclude : /etc/passwd", "fuzz", CONFIG_LOAD_NO_INCLUDE, &err);
        GLEAN_TEST_CHECK(r == -EPERM && err.line == 2 && strstr(err.msg, "include is not allowed"),
                         "include with CONFIG_LOAD_NO_INCLUDE gave %d: %s", r, err.msg);
        GLEAN_TEST_CHECK(!config_raw(cfg, "A"), "the failed load changed the Config");
        config_free(cfg);
}

/* Text without a name is "<string>"; a NULL Config or text is -EINVAL. */
static void test_string_name(void) {
        Config *cfg = new_config();
        ConfigError err = {};
        const char *file = NULL;
        int r;

        r = config_load_string(cfg, "A = 1", NULL, &err);
        GLEAN_TEST_CHECK(r == 0 && config_where(cfg, "A", &file, NULL) == 0 && strcmp(file, "<string>") == 0,
                         "A from '%s'", file);
        r = config_load_string(cfg, "\nB", NULL, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, "<string>") == 0 && err.line == 2, "error at %s:%d",
                         err.file, err.line);
        GLEAN_TEST_CHECK(config_load_string(NULL, "A = 1", NULL, &err) == -EINVAL, "NULL Config");
        GLEAN_TEST_CHECK(config_load_string(cfg, NULL, NULL, &err) == -EINVAL, "NULL text");
        GLEAN_TEST_CHECK(config_load_file(cfg, NULL, &err) == -EINVAL, "NULL path");
        config_free(cfg);
        config_free(NULL);
}

/* warning : is recorded with its file and line, expanded, once; a load
 * that fails keeps the warnings it had before. */
static void test_warnings(void) {
        Config *cfg = new_config();
        ConfigError err = {};
        char **w = NULL;
        int n;

        GLEAN_TEST_CHECK(config_warnings(cfg, &w) == 0 && !w, "a fresh configuration has no warnings");
        for (int i = 0; i < 2; i++) /* the same file read twice warns once */
                GLEAN_TEST_CHECK(config_load_string(cfg, "X = disk\n\nwarning : low $(X)\n", "<w>", &err) == 0,
                                 "warning loads: %s", err.msg);
        n = config_warnings(cfg, &w);
        GLEAN_TEST_CHECK(n == 1 && w && strcmp(w[0], "<w>:3: warning: low disk") == 0 && !w[1],
                         "one warning '<w>:3: warning: low disk', got %d: %s", n, n > 0 ? w[0] : "");
        config_strv_free(w);
        GLEAN_TEST_CHECK(config_load_string(cfg, "warning : second\nerror : stop\n", "<e>", &err) < 0,
                         "error : refuses");
        n = config_warnings(cfg, &w);
        GLEAN_TEST_CHECK(n == 1, "the refused text left no warning behind, %d", n);
        config_strv_free(w);
        GLEAN_TEST_CHECK(config_load_string(cfg, "if false\nwarning : not read\nendif\n", "<f>", &err) == 0 &&
                                 config_warnings(cfg, &w) == 1,
                         "a warning in a branch not read is not recorded");
        config_strv_free(w);
        config_free(cfg);
}

static void test_error_format(void) {
        ConfigError a = { .file = "f.conf", .line = 3, .msg = "bad" };
        ConfigError b = { .file = "f.conf", .line = 0, .msg = "bad" };
        ConfigError c = { .msg = "bad" };
        char *s;

        s = config_error_format(&a);
        GLEAN_TEST_CHECK(s && strcmp(s, "f.conf:3: bad") == 0, "got '%s'", s);
        free(s);
        s = config_error_format(&b);
        GLEAN_TEST_CHECK(s && strcmp(s, "f.conf: bad") == 0, "got '%s'", s);
        free(s);
        s = config_error_format(&c);
        GLEAN_TEST_CHECK(s && strcmp(s, "bad") == 0, "got '%s'", s);
        free(s);
}

static CU_TestInfo tests[] = {
        { "forms", test_syntax },
        { "where", test_where },
        { "errors", test_errors },
        { "limits", test_error_limits },
        { "no-include", test_no_include },
        { "string-name", test_string_name },
        { "error-format", test_error_format },
        { "warnings", test_warnings },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "syntax", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

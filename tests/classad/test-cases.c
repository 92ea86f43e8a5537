/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cases.c — data-driven tests of the ClassAd language.
 *
 * Every file tests/classad/cases/NAME.txt (sorted) is one CUnit test; every case line
 * in it is one assertion. The format:
 *
 *     # comment
 *     @mode old | strict        mode of the cases that follow (default old)
 *     @my [ a = 1; b = "x" ]    ad used as MY scope ("@my" alone: none)
 *     @target [ c = 3 ]         match-context target ("@target" alone: none)
 *     @now 1700000000           pins the clock ("@now" alone: real clock)
 *     @tz UTC                   TZ for the cases that follow ("@tz" alone: as started)
 *     EXPR => EXPECTED
 *
 * A case parses EXPR in the current mode, evaluates it with MY and TARGET and
 * compares the printed value (ca_value_unparse) with EXPECTED. "=> PARSE_ERROR"
 * expects the parse to fail with a located, explained error. Every case that
 * parses is also unparsed, parsed again and unparsed again: both texts must be
 * equal, and the re-parsed expression must print the same value (unless it
 * depends on the clock or on random numbers).
 *
 * The case directory is $GLEAN_CLASSAD_CASES, else tests/classad/cases
 * relative to the working directory (the repository root under make check).
 * With $GLEAN_CLASSAD_TRACE set, every case is printed before it runs.
 */
#define _GNU_SOURCE

#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <CUnit/CUnit.h>

#include "classad.h"
#include "classad-internal.h"
#include "test-util.h"

#define PARSE_ERROR_WORD "PARSE_ERROR"

/* ---- where the cases are ---- */

static char cases_dir[PATH_MAX];
static glob_t case_files;

static bool is_dir(const char *path) {
        struct stat st;

        return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool find_cases_dir(void) {
        const char *env = getenv("GLEAN_CLASSAD_CASES");
        char exe[PATH_MAX];
        ssize_t n;

        if (env && *env) {
                snprintf(cases_dir, sizeof(cases_dir), "%s", env);
                return is_dir(cases_dir);
        }
        snprintf(cases_dir, sizeof(cases_dir), "tests/classad/cases");
        if (is_dir(cases_dir))
                return true;

        /* build/tests/classad/test-cases -> ../../../tests/classad/cases */
        n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n > 0) {
                char *slash;

                exe[n] = '\0';
                slash = strrchr(exe, '/');
                if (slash) {
                        *slash = '\0';
                        snprintf(cases_dir, sizeof(cases_dir), "%.*s/../../../tests/classad/cases",
                                 (int) (sizeof(cases_dir) - 40), exe);
                        if (is_dir(cases_dir))
                                return true;
                }
        }
        return false;
}

/* ---- small string helpers ---- */

static char *trim(char *s) {
        char *end;

        while (isspace((unsigned char) *s))
                s++;
        end = s + strlen(s);
        while (end > s && isspace((unsigned char) end[-1]))
                end--;
        *end = '\0';
        return s;
}

/* The first "=>" outside string literals and quoted attribute names; when
 * the expression has an unterminated literal, the last "=>". */
static char *find_arrow(char *line) {
        char quote = 0;
        char *last = NULL;

        for (char *p = line; *p; p++) {
                if (p[0] == '=' && p[1] == '>')
                        last = p;
                if (quote) {
                        if (*p == '\\' && p[1])
                                p++;
                        else if (*p == quote)
                                quote = 0;
                } else if (*p == '"' || *p == '\'')
                        quote = *p;
                else if (p[0] == '=' && p[1] == '>')
                        return p;
        }
        return last;
}

/* Does the expression read the clock or random numbers? */
static bool nondeterministic(const char *text, bool clock_pinned) {
        char *lower = strdup(text);
        bool r;

        if (!lower)
                return true;
        for (char *p = lower; *p; p++)
                *p = (char) tolower((unsigned char) *p);
        r = strstr(lower, "random") || (!clock_pinned && strstr(lower, "time"));
        free(lower);
        return r;
}

static char *value_text(const CaValue *v) {
        char *s = ca_value_unparse(v);

        return s ? s : strdup("<ca_value_unparse failed>");
}

/* ---- the state a case file sets up ---- */

typedef struct CaseEnv {
        const char *file;
        CaMode mode;
        char *my_text, *target_text;  /* "[ ... ]" as written, or NULL */
        int my_line, target_line;
        ClassAd *my, *target;         /* parsed in my_mode / target_mode */
        CaMode my_mode, target_mode;
        bool clock_pinned;
        char *tz_saved;               /* TZ when the file started, or NULL */
        bool tz_was_set;
        unsigned cases, failures;
} CaseEnv;

static void env_drop_ad(ClassAd **ad, char **text) {
        classad_free(*ad);
        *ad = NULL;
        free(*text);
        *text = NULL;
}

static void env_restore_tz(CaseEnv *env) {
        if (env->tz_was_set)
                setenv("TZ", env->tz_saved, 1);
        else
                unsetenv("TZ");
        tzset();
}

static void env_done(CaseEnv *env) {
        env_drop_ad(&env->my, &env->my_text);
        env_drop_ad(&env->target, &env->target_text);
        ca_set_now(0);
        env_restore_tz(env);
        free(env->tz_saved);
}

/* The ad of a directive, parsed in the mode of the case that uses it. An ad
 * that does not parse is reported once and dropped. */
static ClassAd *env_ad(CaseEnv *env, ClassAd **ad, char **text, CaMode *ad_mode, int line) {
        CaError err = {};
        int r;

        if (!*text)
                return NULL;
        if (*ad && *ad_mode == env->mode)
                return *ad;

        classad_free(*ad);
        *ad = NULL;
        r = classad_parse(*text, strlen(*text), env->mode, ad, &err);
        GLEAN_TEST_CHECK(r >= 0, "%s:%d: cannot parse the ad %s: %d (line %d, column %d: %s)",
                         env->file, line, *text, r, err.line, err.column, err.msg);
        if (r < 0) {
                fprintf(stderr, "%s:%d: cannot parse the ad %s (line %d, column %d: %s)\n",
                        env->file, line, *text, err.line, err.column, err.msg);
                *ad = NULL;
                free(*text);
                *text = NULL;
                return NULL;
        }
        *ad_mode = env->mode;
        return *ad;
}

/* ---- directives ---- */

static void directive(CaseEnv *env, char *line, int lineno) {
        char *arg = line + 1;
        char *word = arg;

        while (*arg && !isspace((unsigned char) *arg))
                arg++;
        if (*arg)
                *arg++ = '\0';
        arg = trim(arg);

        if (strcmp(word, "mode") == 0) {
                if (strcmp(arg, "old") == 0)
                        env->mode = CA_MODE_OLD;
                else if (strcmp(arg, "strict") == 0)
                        env->mode = CA_MODE_STRICT;
                else
                        GLEAN_TEST_CHECK(false, "%s:%d: bad @mode '%s'", env->file, lineno, arg);
        } else if (strcmp(word, "my") == 0) {
                env_drop_ad(&env->my, &env->my_text);
                if (*arg) {
                        env->my_text = strdup(arg);
                        env->my_line = lineno;
                }
        } else if (strcmp(word, "target") == 0) {
                env_drop_ad(&env->target, &env->target_text);
                if (*arg) {
                        env->target_text = strdup(arg);
                        env->target_line = lineno;
                }
        } else if (strcmp(word, "now") == 0) {
                char *end = NULL;
                long long t = *arg ? strtoll(arg, &end, 10) : 0;

                if (*arg && (!end || *end)) {
                        GLEAN_TEST_CHECK(false, "%s:%d: bad @now '%s'", env->file, lineno, arg);
                        return;
                }
                ca_set_now(t);
                env->clock_pinned = t != 0;
        } else if (strcmp(word, "tz") == 0) {
                if (*arg) {
                        setenv("TZ", arg, 1);
                        tzset();
                } else
                        env_restore_tz(env);
        } else
                GLEAN_TEST_CHECK(false, "%s:%d: unknown directive '@%s'", env->file, lineno, word);
}

/* ---- one case ---- */

typedef struct Outcome {
        bool parsed;
        char *value;    /* printed value, or the parse error */
        char *text;     /* unparsed expression */
} Outcome;

static void outcome_done(Outcome *o) {
        free(o->value);
        free(o->text);
        *o = (Outcome) {};
}

/* Parses and evaluates text; fills o. Returns false on an API failure
 * (described in o->value). */
static bool evaluate(CaseEnv *env, const char *text, ClassAd *my, ClassAd *target, Outcome *o,
                     CaError *ret_err) {
        ClassAdExpr *e = NULL;
        CaError err = {};
        CaValue v = ca_undefined();
        int r;

        *o = (Outcome) {};
        r = classad_expr_parse(text, strlen(text), env->mode, &e, &err);
        if (ret_err)
                *ret_err = err;
        if (r < 0) {
                if (asprintf(&o->value, "%s (line %d, column %d: %s)", PARSE_ERROR_WORD,
                             err.line, err.column, err.msg) < 0)
                        o->value = NULL;
                return true;
        }
        o->parsed = true;
        o->text = classad_expr_unparse(e);
        r = classad_expr_eval(e, my, target, env->mode, &v);
        if (r < 0) {
                if (asprintf(&o->value, "<classad_expr_eval failed: %s>", strerror(-r)) < 0)
                        o->value = NULL;
                classad_expr_free(e);
                return false;
        }
        o->value = value_text(&v);
        ca_value_clear(&v);
        classad_expr_free(e);
        return o->text != NULL;
}

static void run_case(CaseEnv *env, char *expr, char *expected, int lineno) {
        ClassAd *my = env_ad(env, &env->my, &env->my_text, &env->my_mode, env->my_line);
        ClassAd *target = env_ad(env, &env->target, &env->target_text, &env->target_mode,
                                 env->target_line);
        const char *mode = env->mode == CA_MODE_OLD ? "old" : "strict";
        bool want_error = strcmp(expected, PARSE_ERROR_WORD) == 0;
        Outcome first, second = {};
        CaError err = {};
        char problem[512] = "";
        bool ok;

        env->cases++;
        if (getenv("GLEAN_CLASSAD_TRACE"))   /* to find the case that crashes */
                fprintf(stderr, "%s:%d: %s\n", env->file, lineno, expr);
        ok = evaluate(env, expr, my, target, &first, &err);

        if (!first.parsed) {
                if (!want_error)
                        ok = false;
                else if (err.msg[0] == '\0' || err.line < 1) {
                        ok = false;
                        snprintf(problem, sizeof(problem),
                                 "the parse error has no message or no line (line %d, msg '%s')",
                                 err.line, err.msg);
                }
        } else if (want_error)
                ok = false;
        else if (!first.value || strcmp(first.value, expected) != 0)
                ok = false;

        /* Round trip: unparse, parse, unparse again; same text, same value. */
        if (first.parsed && first.text) {
                if (!evaluate(env, first.text, my, target, &second, NULL) || !second.parsed) {
                        ok = false;
                        snprintf(problem, sizeof(problem),
                                 "the unparsed text '%s' does not parse back: %s", first.text,
                                 second.value ? second.value : "?");
                } else if (strcmp(first.text, second.text) != 0) {
                        ok = false;
                        snprintf(problem, sizeof(problem),
                                 "round trip changes the text: '%s' -> '%s'", first.text,
                                 second.text);
                } else if (!nondeterministic(expr, env->clock_pinned) &&
                           strcmp(first.value ? first.value : "", second.value ? second.value : "") != 0) {
                        ok = false;
                        snprintf(problem, sizeof(problem),
                                 "the re-parsed text '%s' evaluates to %s, not %s", first.text,
                                 second.value, first.value);
                }
        } else if (first.parsed) {
                ok = false;
                snprintf(problem, sizeof(problem), "classad_expr_unparse failed");
        }

        if (!ok) {
                env->failures++;
                fprintf(stderr,
                        "%s:%d: FAIL [%s mode]\n"
                        "    expression: %s\n"
                        "    expected:   %s\n"
                        "    got:        %s\n"
                        "%s%s%s",
                        env->file, lineno, mode, expr, expected,
                        first.value ? first.value : "(nothing)",
                        problem[0] ? "    problem:    " : "", problem, problem[0] ? "\n" : "");
        }
        GLEAN_TEST_CHECK(ok, "%s:%d: [%s] %s => expected %s, got %s%s%s", env->file, lineno, mode,
                         expr, expected, first.value ? first.value : "(nothing)",
                         problem[0] ? "; " : "", problem);

        outcome_done(&first);
        outcome_done(&second);
}

/* ---- one file ---- */

static void run_file(const char *path) {
        const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
        CaseEnv env = { .file = base, .mode = CA_MODE_OLD };
        char *data = NULL, *line, *next;
        int lineno = 0, r;

        r = glean_test_read_file(path, &data, NULL);
        GLEAN_TEST_CHECK_FATAL(r >= 0, "cannot read %s: %s", path, strerror(-r));
        if (r < 0)
                return;

        env.tz_was_set = getenv("TZ") != NULL;
        env.tz_saved = env.tz_was_set ? strdup(getenv("TZ")) : NULL;
        ca_set_now(0);

        for (line = data; line; line = next) {
                char *arrow, *expr, *expected;

                next = strchr(line, '\n');
                if (next)
                        *next++ = '\0';
                lineno++;

                line = trim(line);
                if (*line == '\0' || *line == '#')
                        continue;
                if (*line == '@') {
                        directive(&env, line, lineno);
                        continue;
                }
                arrow = find_arrow(line);
                if (!arrow) {
                        GLEAN_TEST_CHECK(false, "%s:%d: no '=>' in '%s'", base, lineno, line);
                        continue;
                }
                *arrow = '\0';
                expr = trim(line);
                expected = trim(arrow + 2);
                run_case(&env, expr, expected, lineno);
        }

        printf("%u cases, %u failed: ", env.cases, env.failures);
        GLEAN_TEST_CHECK(env.cases > 0, "%s holds no cases", base);
        env_done(&env);
        free(data);
}

/* The CUnit test of a file is named after it. */
static void test_case_file(void) {
        CU_pTest test = CU_get_current_test();
        char path[PATH_MAX * 2];

        snprintf(path, sizeof(path), "%s/%s", cases_dir, test->pName);
        run_file(path);
}

int main(int argc, char **argv) {
        CU_TestInfo *tests;
        CU_SuiteInfo suites[2] = {};
        char pattern[PATH_MAX + 16];
        int r;

        /* A runaway evaluation must not hang make check. */
        alarm(600);

        if (!find_cases_dir()) {
                fprintf(stderr, "no case directory (tried $GLEAN_CLASSAD_CASES, tests/classad/cases)\n");
                return 1;
        }
        snprintf(pattern, sizeof(pattern), "%s/*.txt", cases_dir);
        r = glob(pattern, 0, NULL, &case_files);  /* sorted */
        if (r != 0 || case_files.gl_pathc == 0) {
                fprintf(stderr, "no case files match %s\n", pattern);
                return 1;
        }

        tests = calloc(case_files.gl_pathc + 1, sizeof(*tests));
        if (!tests)
                return 1;
        for (size_t i = 0; i < case_files.gl_pathc; i++) {
                const char *p = case_files.gl_pathv[i];

                tests[i].pName = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
                tests[i].pTestFunc = test_case_file;
        }
        suites[0] = (CU_SuiteInfo) { "cases", NULL, NULL, NULL, NULL, tests };

        r = glean_test_main(argc, argv, suites);
        free(tests);
        globfree(&case_files);
        return r;
}

/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-policy.c — the policies of seed 002, sections 3.5.9.1 to
 * 3.5.9.6, as the manual prints them (tests/config/config-seed-*.txt): they
 * load, expand to the expressions the manual shows, parse as ClassAd
 * expressions and decide what the manual says they decide. The built-in
 * defaults are 3.5.9.1's; glean's own `use POLICY : NAME` templates give the
 * same expressions as the manual's text, HTCondor's the same decisions.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config-internal.h"
#include "test-util.h"

/* ---- helpers ---- */

static Config *load_on(Config *cfg, const char *path) {
        ConfigError err = {};
        char *text = NULL;
        int r;

        r = glean_test_read_file(path, &text, NULL);
        GLEAN_TEST_CHECK_FATAL(r == 0, "cannot read %s: %s", path, strerror(-r));
        r = config_load_string(cfg, text, path, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s:%d: %s", err.file, err.line, err.msg);
        free(text);
        return cfg;
}

static Config *defaults(void) {
        Config *cfg = NULL;

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new() failed");
        return cfg;
}

static Config *load(const char *path) {
        return load_on(defaults(), path);
}

static Config *load_text(const char *text) {
        Config *cfg = defaults();
        ConfigError err = {};

        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "<test>", &err) == 0, "%d: %s", err.line, err.msg);
        return cfg;
}

static char *get(const Config *cfg, const char *name) {
        ConfigError err = {};
        char *v = NULL;
        int r;

        r = config_get(cfg, name, &v, &err);
        GLEAN_TEST_CHECK(r == 0, "%s: %d %s", name, r, err.msg);
        return v;
}

/* name expands to want, which parses in both modes. */
static void check_expansion(const Config *cfg, const char *what, const char *name, const char *want) {
        char *v = get(cfg, name);

        GLEAN_TEST_CHECK(v && strcmp(v, want) == 0, "%s: %s is\n  '%s', want\n  '%s'", what, name, v, want);
        for (int mode = CA_MODE_OLD; mode <= CA_MODE_STRICT; mode++) {
                ClassAdExpr *e = NULL;
                ConfigError err = {};
                int r = config_get_expr(cfg, name, (CaMode) mode, &e, &err);

                GLEAN_TEST_CHECK(r == 0, "%s: %s does not parse (mode %d): %s", what, name, mode, err.msg);
                classad_expr_free(e);
        }
        free(v);
}

/* Both Configs expand name the same. */
static void check_same(const Config *a, const Config *b, const char *what, const char *name) {
        char *x = get(a, name), *y = get(b, name);

        GLEAN_TEST_CHECK(x && y && strcmp(x, y) == 0, "%s: %s is\n  '%s' and\n  '%s'", what, name, x, y);
        free(x);
        free(y);
}

/* Evaluate name in a machine ad `machine` (bracketed text) holding the
 * policy expressions of cfg as attributes (as the agent publishes them),
 * against the job ad `job` (may be NULL). Returns 1 true, 0 false, -1
 * anything else. */
static int decide(const Config *cfg, const char *name, const char *machine, const char *job) {
        static const char *const published[] = { "START", "SUSPEND", "WANT_SUSPEND", "WANT_VACATE", "CONTINUE",
                                                 "PREEMPT", "KILL", "IsDesktop", "IS_OWNER" };
        ClassAd *m = NULL, *j = NULL;
        ClassAdExpr *e = NULL;
        CaValue v = ca_undefined();
        CaError cerr = {};
        ConfigError err = {};
        int r, result = -1;

        r = classad_parse(machine, strlen(machine), CA_MODE_OLD, &m, &cerr);
        GLEAN_TEST_CHECK_FATAL(r == 0, "machine ad: %s", cerr.msg);
        if (job) {
                r = classad_parse(job, strlen(job), CA_MODE_OLD, &j, &cerr);
                GLEAN_TEST_CHECK_FATAL(r == 0, "job ad: %s", cerr.msg);
        }
        for (size_t i = 0; i < sizeof(published) / sizeof(published[0]); i++) {
                ClassAdExpr *p = NULL;

                if (config_get_expr(cfg, published[i], CA_MODE_OLD, &p, NULL) == 0 && !classad_has(m, published[i]))
                        classad_set_expr(m, published[i], p);
                classad_expr_free(p);
        }
        r = config_get_expr(cfg, name, CA_MODE_OLD, &e, &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %s", name, err.msg);
        if (classad_expr_eval(e, m, j, CA_MODE_OLD, &v) == 0 && v.type == CA_BOOL)
                result = v.u.b;
        ca_value_clear(&v);
        classad_expr_free(e);
        classad_free(m);
        classad_free(j);
        return result;
}

typedef struct Decision {
        const char *name;
        const char *machine;
        const char *job;
        int want;
} Decision;

static void check_decisions(const Config *cfg, const char *what, const Decision *d, size_t n) {
        for (size_t i = 0; i < n; i++) {
                int got = decide(cfg, d[i].name, d[i].machine, d[i].job);

                GLEAN_TEST_CHECK(got == d[i].want, "%s, decision %zu: %s in %s against %s is %d, want %d", what, i,
                                 d[i].name, d[i].machine, d[i].job ? d[i].job : "no job", got, d[i].want);
        }
}

/* Machine ads: idle / busy owner, idle / busy CPU, 20 minutes into a job. */
#define IDLE_MACHINE \
        "[ KeyboardIdle = 1800; ConsoleIdle = 1800; LoadAvg = 0.1; CondorLoadAvg = 0.0; State = \"Unclaimed\"; " \
        "Activity = \"Idle\"; CpuBusyTime = 0; CurrentTime = 10000; JobStart = 8800; "                          \
        "EnteredCurrentActivity = 8800; EnteredCurrentState = 8800 ]"
#define TYPING_MACHINE \
        "[ KeyboardIdle = 5; ConsoleIdle = 5; LoadAvg = 0.1; CondorLoadAvg = 0.0; State = \"Claimed\"; " \
        "Activity = \"Busy\"; CpuBusyTime = 0; CurrentTime = 10000; JobStart = 8800; "                   \
        "EnteredCurrentActivity = 8800; EnteredCurrentState = 8800 ]"
#define LOADED_MACHINE \
        "[ KeyboardIdle = 1800; ConsoleIdle = 1800; LoadAvg = 1.2; CondorLoadAvg = 0.0; State = \"Claimed\"; " \
        "Activity = \"Busy\"; CpuBusyTime = 300; CurrentTime = 10000; JobStart = 8800; "                      \
        "EnteredCurrentActivity = 8800; EnteredCurrentState = 8800 ]"
#define VANILLA_JOB "[ Owner = \"tyner\"; JobUniverse = 5; ImageSize = 100000 ]"
#define COLTRANE_JOB "[ Owner = \"coltrane\"; JobUniverse = 5; ImageSize = 100000 ]"

/* ---- 3.5.9.1 ---- */

/* The manual's text defines exactly the built-in defaults. */
static void test_3591_defaults(void) {
        Config *seed = NULL, *dflt = defaults();
        ConfigError err = {};
        char *text = NULL, **names = NULL;
        int r;

        GLEAN_TEST_CHECK_FATAL(config_new_empty(&seed) == 0, "config_new_empty");
        GLEAN_TEST_CHECK_FATAL(glean_test_read_file("tests/config/config-seed-3591.txt", &text, NULL) == 0, "read");
        r = config_load_string(seed, text, "3591", &err);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%d: %s", err.line, err.msg);
        GLEAN_TEST_CHECK_FATAL(config_names(seed, &names) == 0, "names");
        GLEAN_TEST_CHECK(names[0] && names[25], "only a few names in 3.5.9.1");
        for (char **n = names; *n; n++) {
                const char *a = config_raw(seed, *n), *b = config_raw(dflt, *n);

                if (strcasecmp(*n, "MachineBusy") == 0) {
                        /* the manual prints it without its closing ')' */
                        GLEAN_TEST_CHECK(b && strncmp(a, b, strlen(a)) == 0 && strcmp(b + strlen(a), ")") == 0,
                                         "MachineBusy '%s' / '%s'", a, b);
                        continue;
                }
                GLEAN_TEST_CHECK(b && strcmp(a, b) == 0, "%s: manual '%s', default '%s'", *n, a, b ? b : "(none)");
        }
        {
                ClassAdExpr *e = NULL;

                r = config_get_expr(seed, "MachineBusy", CA_MODE_OLD, &e, &err);
                GLEAN_TEST_CHECK(r == -EINVAL && err.line == 23, "the manual's MachineBusy parses (%d, line %d)", r,
                                 err.line);
                classad_expr_free(e);
        }
        config_strv_free(names);
        free(text);
        config_free(seed);
        config_free(dflt);
}

static void test_3591_expansions(void) {
        static const char *const expected[][2] = {
                { "START", "( (KeyboardIdle > 15 * 60) && ( (LoadAvg - CondorLoadAvg) <= 0.3 || "
                           "(State != \"Unclaimed\" && State != \"Owner\")) )" },
                { "SUSPEND", "( KeyboardIdle < 60 || ( (CpuBusyTime > 2 * 60) && (CurrentTime - JobStart) > 90 ) )" },
                { "CONTINUE", "( (LoadAvg - CondorLoadAvg) <= 0.3 && ((CurrentTime - EnteredCurrentActivity) > 10) "
                              "&& (KeyboardIdle > 5 * 60) )" },
                { "PREEMPT", "( ((Activity == \"Suspended\") && ((CurrentTime - EnteredCurrentActivity) > 10 * 60)) "
                             "|| (SUSPEND && (WANT_SUSPEND == False)) )" },
                { "WANT_SUSPEND", "( (TARGET.ImageSize < (15 * 1024)) || (KeyboardIdle < 60 == False) || "
                                  "(TARGET.JobUniverse == 5) )" },
                { "WANT_VACATE", "( (CurrentTime - JobStart) > 10 * 60 || (TARGET.JobUniverse == 5) )" },
                { "KILL", "False" },
                { "MAXJOBRETIREMENTTIME", "0" },
                { "MachineMaxVacateTime", "10 * 60" },
                { "PERIODIC_CHECKPOINT", "( (ImageSize < 60000) && ((CurrentTime - LastPeriodicCheckpoint) > "
                                         "(6 * (60 * 60))) ) || ( (CurrentTime - LastPeriodicCheckpoint) > "
                                         "(12 * (60 * 60)) )" },
                { "MachineBusy", "((LoadAvg - CondorLoadAvg) >= 0.5 || KeyboardIdle < 60)" },
                { "ConsoleBusy", "(ConsoleIdle  < 60)" },
                { "JustCpu", "((LoadAvg - CondorLoadAvg) >= 0.5 && (KeyboardIdle < 60 == False))" },
                { "IS_OWNER", "(START =?= FALSE)" },
                { "HOUR", "(60 * 60)" },
        };
        Config *cfg = load("tests/config/config-seed-3591.txt");
        Config *dflt = defaults();

        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
                check_expansion(dflt, "defaults", expected[i][0], expected[i][1]);
                if (strcasecmp(expected[i][0], "MachineBusy") != 0)
                        check_expansion(cfg, "3.5.9.1", expected[i][0], expected[i][1]);
        }
        config_free(cfg);
        config_free(dflt);
}

static const Decision decisions_3591[] = {
        { "START", IDLE_MACHINE, VANILLA_JOB, 1 },
        { "START", TYPING_MACHINE, VANILLA_JOB, 0 },
        { "SUSPEND", TYPING_MACHINE, VANILLA_JOB, 1 },
        { "SUSPEND", LOADED_MACHINE, VANILLA_JOB, 1 },
        { "SUSPEND", IDLE_MACHINE, VANILLA_JOB, 0 },
        { "CONTINUE", IDLE_MACHINE, VANILLA_JOB, 1 },
        { "CONTINUE", TYPING_MACHINE, VANILLA_JOB, 0 },
        { "WANT_SUSPEND", TYPING_MACHINE, VANILLA_JOB, 1 },
        { "WANT_VACATE", IDLE_MACHINE, VANILLA_JOB, 1 },
        { "PREEMPT", TYPING_MACHINE, VANILLA_JOB, 0 },
        { "KILL", TYPING_MACHINE, VANILLA_JOB, 0 },
        { "IS_OWNER", TYPING_MACHINE, NULL, 1 },
        { "IS_OWNER", IDLE_MACHINE, NULL, 0 },
};

static void test_3591_decisions(void) {
        Config *cfg = defaults();

        check_decisions(cfg, "3.5.9.1", decisions_3591, sizeof(decisions_3591) / sizeof(decisions_3591[0]));
        config_free(cfg);
}

/* ---- 3.5.9.2: self-references build on the previous definition ---- */

static void test_3592(void) {
        static const Decision d[] = {
                { "START", TYPING_MACHINE, COLTRANE_JOB, 1 },
                { "START", TYPING_MACHINE, VANILLA_JOB, 0 },
                { "SUSPEND", TYPING_MACHINE, COLTRANE_JOB, 0 },
                { "SUSPEND", TYPING_MACHINE, VANILLA_JOB, 1 },
                { "PREEMPT", TYPING_MACHINE, COLTRANE_JOB, 0 },
        };
        Config *cfg = load("tests/config/config-seed-3592.txt"), *dflt = defaults();
        char want[1024], *start = get(dflt, "START"), *suspend = get(dflt, "SUSPEND"), *preempt = get(dflt, "PREEMPT");

        snprintf(want, sizeof(want), "(%s) || Owner == \"coltrane\"", start);
        check_expansion(cfg, "3.5.9.2", "START", want);
        snprintf(want, sizeof(want), "(%s) && Owner != \"coltrane\"", suspend);
        check_expansion(cfg, "3.5.9.2", "SUSPEND", want);
        snprintf(want, sizeof(want), "(%s) && Owner != \"coltrane\"", preempt);
        check_expansion(cfg, "3.5.9.2", "PREEMPT", want);
        check_same(cfg, dflt, "3.5.9.2", "CONTINUE");
        check_same(cfg, dflt, "3.5.9.2", "KILL");
        GLEAN_TEST_CHECK(strcmp(config_raw(cfg, "CONTINUE"), config_raw(dflt, "CONTINUE")) == 0, "raw CONTINUE");
        GLEAN_TEST_CHECK(strncmp(config_raw(cfg, "START"), "(( (KeyboardIdle > $(StartIdleTime))", 36) == 0,
                         "raw START '%s'", config_raw(cfg, "START"));
        check_decisions(cfg, "3.5.9.2", d, sizeof(d) / sizeof(d[0]));
        free(start);
        free(suspend);
        free(preempt);
        config_free(cfg);
        config_free(dflt);
}

/* ---- 3.5.9.3: time of day ---- */

#define WORK_HOURS_IDLE \
        "[ ClockMin = 600; ClockDay = 2; KeyboardIdle = 1800; LoadAvg = 0.1; CondorLoadAvg = 0.0; " \
        "State = \"Claimed\"; Activity = \"Busy\"; CpuBusyTime = 0; CurrentTime = 10000; JobStart = 8800; " \
        "EnteredCurrentActivity = 8800 ]"
#define EVENING_IDLE \
        "[ ClockMin = 1200; ClockDay = 2; KeyboardIdle = 1800; LoadAvg = 0.1; CondorLoadAvg = 0.0; " \
        "State = \"Claimed\"; Activity = \"Busy\"; CpuBusyTime = 0; CurrentTime = 10000; JobStart = 8800; " \
        "EnteredCurrentActivity = 8800 ]"
#define SUNDAY_NOON_IDLE \
        "[ ClockMin = 720; ClockDay = 0; KeyboardIdle = 1800; LoadAvg = 0.1; CondorLoadAvg = 0.0; " \
        "State = \"Unclaimed\"; Activity = \"Idle\"; CpuBusyTime = 0; CurrentTime = 10000; JobStart = 8800; " \
        "EnteredCurrentActivity = 8800 ]"

static void test_3593(void) {
        static const char *const names[] = { "WorkHours", "AfterHours", "START", "MachineBusy", "WANT_SUSPEND" };
        static const Decision d[] = {
                { "START", WORK_HOURS_IDLE, VANILLA_JOB, 0 },
                { "START", EVENING_IDLE, VANILLA_JOB, 1 },
                { "START", SUNDAY_NOON_IDLE, VANILLA_JOB, 1 },
                { "MachineBusy", WORK_HOURS_IDLE, NULL, 1 },
                { "MachineBusy", EVENING_IDLE, NULL, 0 },
                { "WANT_SUSPEND", WORK_HOURS_IDLE, NULL, 0 },
        };
        static const Decision t[] = {
                /* the template also suspends during work hours, and since
                 * WANT_SUSPEND is then false, PREEMPT: a job still running
                 * in the morning is preempted at once */
                { "SUSPEND", WORK_HOURS_IDLE, VANILLA_JOB, 1 },
                { "SUSPEND", EVENING_IDLE, VANILLA_JOB, 0 },
                { "PREEMPT", WORK_HOURS_IDLE, VANILLA_JOB, 1 },
                { "PREEMPT", EVENING_IDLE, VANILLA_JOB, 0 },
                { "START", EVENING_IDLE, VANILLA_JOB, 1 },
        };
        Config *cfg = load("tests/config/config-seed-3593.txt");
        Config *tpl = load_text("use POLICY : TIME_OF_DAY");

        check_expansion(cfg, "3.5.9.3", "START",
                        "( (ClockMin < 480 || ClockMin >= 1020) || (ClockDay == 0 || ClockDay == 6) ) && "
                        "(LoadAvg - CondorLoadAvg) <= 0.3 && KeyboardIdle > 15 * 60");
        check_expansion(cfg, "3.5.9.3", "MachineBusy",
                        "( ( (ClockMin >= 480 && ClockMin < 1020) && (ClockDay > 0 && ClockDay < 6) ) || "
                        "(LoadAvg - CondorLoadAvg) >= 0.5 || KeyboardIdle < 60 )");
        check_decisions(cfg, "3.5.9.3", d, sizeof(d) / sizeof(d[0]));
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
                check_same(cfg, tpl, "TIME_OF_DAY", names[i]);
        check_decisions(tpl, "TIME_OF_DAY", t, sizeof(t) / sizeof(t[0]));
        check_decisions(tpl, "TIME_OF_DAY", d, sizeof(d) / sizeof(d[0]));
        config_free(cfg);
        config_free(tpl);
}

/* ---- 3.5.9.4: desktop / non-desktop toggle ---- */

static void test_3594(void) {
        static const char *const names[] = { "START",   "WANT_SUSPEND",         "WANT_VACATE",          "SUSPEND",
                                             "CONTINUE", "PREEMPT",             "MAXJOBRETIREMENTTIME", "KILL",
                                             "MachineMaxVacateTime" };
        static const Decision dedicated[] = {
                { "START", TYPING_MACHINE, VANILLA_JOB, 1 },
                { "SUSPEND", TYPING_MACHINE, VANILLA_JOB, 0 },
                { "SUSPEND", LOADED_MACHINE, VANILLA_JOB, 1 },
                { "WANT_SUSPEND", LOADED_MACHINE, VANILLA_JOB, 1 },
        };
        static const Decision desktop[] = {
                { "START", TYPING_MACHINE, VANILLA_JOB, 0 },
                { "START", IDLE_MACHINE, VANILLA_JOB, 1 },
                { "SUSPEND", TYPING_MACHINE, VANILLA_JOB, 1 },
                { "CONTINUE", TYPING_MACHINE, VANILLA_JOB, 0 },
        };
        Config *cfg = load("tests/config/config-seed-3594.txt");
        Config *tpl = load_text("use POLICY : DESKTOP_TOGGLE");
        char **a = NULL, **b = NULL;
        int64_t n = -1;

        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char *v = get(cfg, names[i]);
                ClassAdExpr *e = NULL;

                GLEAN_TEST_CHECK(config_get_expr(cfg, names[i], CA_MODE_STRICT, &e, NULL) == 0, "%s: '%s'", names[i],
                                 v);
                classad_expr_free(e);
                free(v);
                check_same(cfg, tpl, "DESKTOP_TOGGLE", names[i]);
        }
        check_expansion(cfg, "3.5.9.4", "START",
                        "( ((LoadAvg - CondorLoadAvg) <= 0.3 || (State != \"Unclaimed\" && State != \"Owner\")) && "
                        "(IsDesktop =!= True || (KeyboardIdle > 15 * 60)) )");
        GLEAN_TEST_CHECK(config_get_int(cfg, "MAXJOBRETIREMENTTIME", &n, NULL) == 0 && n == 0, "retirement %lld",
                         (long long) n);
        GLEAN_TEST_CHECK(config_startd_attrs(cfg, 1, &a, NULL) == 0 && config_startd_attrs(tpl, 1, &b, NULL) == 0 &&
                                 a[0] && !a[1] && strcmp(a[0], "IsDesktop") == 0 && b[0] && !b[1] &&
                                 strcmp(b[0], "IsDesktop") == 0,
                         "STARTD_ATTRS");
        config_strv_free(a);
        config_strv_free(b);
        check_decisions(cfg, "3.5.9.4 dedicated", dedicated, sizeof(dedicated) / sizeof(dedicated[0]));
        check_decisions(tpl, "DESKTOP_TOGGLE dedicated", dedicated, sizeof(dedicated) / sizeof(dedicated[0]));
        /* `IsDesktop = True` in the local configuration makes a desktop */
        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "IsDesktop", "True") == 0 && config_set(tpl, "IsDesktop", "True") == 0,
                               "config_set");
        check_decisions(cfg, "3.5.9.4 desktop", desktop, sizeof(desktop) / sizeof(desktop[0]));
        check_decisions(tpl, "DESKTOP_TOGGLE desktop", desktop, sizeof(desktop) / sizeof(desktop[0]));
        config_free(cfg);
        config_free(tpl);
}

/* ---- 3.5.9.5: disabling preemption ---- */

static void test_3595(void) {
        Config *cfg = load("tests/config/config-seed-3595.txt");
        int64_t n = -1;
        bool b = true;

        GLEAN_TEST_CHECK(config_get_int(cfg, "MAXJOBRETIREMENTTIME", &n, NULL) == 0 && n == 2 * 24 * 3600,
                         "MAXJOBRETIREMENTTIME %lld", (long long) n);
        GLEAN_TEST_CHECK(config_get_bool(cfg, "PREEMPT", &b, NULL) == 0 && !b, "PREEMPT");
        b = true;
        GLEAN_TEST_CHECK(config_get_bool(cfg, "PREEMPTION_REQUIREMENTS", &b, NULL) == 0 && !b, "PREEMPTION_REQUIREMENTS");
        b = true;
        GLEAN_TEST_CHECK(config_get_bool(cfg, "NEGOTIATOR_CONSIDER_PREEMPTION", &b, NULL) == 0 && !b, "consider");
        GLEAN_TEST_CHECK(config_get_int(cfg, "RANK", &n, NULL) == 0 && n == 0, "RANK");
        GLEAN_TEST_CHECK(config_get_int(cfg, "CLAIM_WORKLIFE", &n, NULL) == 0 && n == 3600, "CLAIM_WORKLIFE");
        check_expansion(cfg, "3.5.9.5", "MAXJOBRETIREMENTTIME", "(60 * 60) * 24 * 2");
        config_free(cfg);
}

/* ---- 3.5.9.6: job suspension ---- */

static void test_3596(void) {
        Config *cfg = defaults();
        ConfigError err = {};
        ClassAdExpr *e = NULL;
        char **list = NULL;
        int64_t n = -1;
        int r;

        GLEAN_TEST_CHECK_FATAL(config_set(cfg, "DETECTED_CORES", "4") == 0 &&
                                       config_set(cfg, "DETECTED_MEMORY", "8000") == 0,
                               "config_set");
        load_on(cfg, "tests/config/config-seed-3596.txt");
        GLEAN_TEST_CHECK(config_get_int(cfg, "NUM_CPUS", &n, NULL) == 0 && n == 8, "NUM_CPUS %lld", (long long) n);
        GLEAN_TEST_CHECK(config_get_int(cfg, "MEMORY", &n, NULL) == 0 && n == 16000, "MEMORY %lld", (long long) n);
        check_expansion(cfg, "3.5.9.6", "IsSuspendableSlot", "SlotID > 4");
        check_expansion(cfg, "3.5.9.6", "SUSPEND",
                        "IsSuspendableSlot && (NonSuspendableSlotState =!= \"Claimed\" && NonSuspendableSlotState "
                        "=!= \"Preempting\")!=True");
        check_same(cfg, cfg, "3.5.9.6", "WANT_SUSPEND");
        check_expansion(cfg, "3.5.9.6", "CONTINUE",
                        "(IsSuspendableSlot && (NonSuspendableSlotState =!= \"Claimed\" && NonSuspendableSlotState "
                        "=!= \"Preempting\")!=True) != True");
        check_expansion(cfg, "3.5.9.6", "START",
                        "IsSuspendableSlot!=True && IsSuspendableJob=!=True || IsSuspendableSlot && "
                        "IsSuspendableJob==True && (NonSuspendableSlotState =!= \"Claimed\" && "
                        "NonSuspendableSlotState =!= \"Preempting\")");
        GLEAN_TEST_CHECK(config_get_list(cfg, "STARTD_SLOT_ATTRS", &list, NULL) == 0 && list[0] && !list[1] &&
                                 strcmp(list[0], "State") == 0,
                         "STARTD_SLOT_ATTRS");
        config_strv_free(list);
        GLEAN_TEST_CHECK(config_startd_attrs(cfg, 5, &list, NULL) == 0 && list[0] && list[1] && !list[2] &&
                                 strcmp(list[0], "IsSuspendableSlot") == 0 &&
                                 strcmp(list[1], "NonSuspendableSlotState") == 0,
                         "STARTD_ATTRS");
        config_strv_free(list);
        /* The manual prints NonSuspendableSlotState without its last ')':
         * the error names the file and the line. */
        r = config_get_expr(cfg, "NonSuspendableSlotState", CA_MODE_OLD, &e, &err);
        GLEAN_TEST_CHECK(r == -EINVAL && strcmp(err.file, "tests/config/config-seed-3596.txt") == 0 &&
                                 err.line == 16 && strstr(err.msg, "is not a ClassAd expression"),
                         "NonSuspendableSlotState: %d %s:%d %s", r, err.file, err.line, err.msg);
        classad_expr_free(e);
        config_free(cfg);
}

/* ---- templates ---- */

/* POLICY : DESKTOP is HTCondor's text (test-config-metaknobs compares it
 * knob by knob with param_info.in's), no longer a copy of the built-in
 * defaults, which are seed 002's older text (3.5.9.1): it makes the same
 * decisions on the seed's machines, also after other templates, and sets
 * what the defaults do not (the keyboard of every slot, no worklife). */
static void test_templates(void) {
        static const char *const texts[] = {
                "use POLICY : DESKTOP",
                "use POLICY : ALWAYS_RUN_JOBS\nuse POLICY : DESKTOP",
                "use POLICY : DESKTOP_TOGGLE, TIME_OF_DAY\nuse POLICY : DESKTOP",
        };

        for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
                Config *cfg = load_text(texts[i]);
                int64_t n = 0;

                check_decisions(cfg, texts[i], decisions_3591, sizeof(decisions_3591) / sizeof(decisions_3591[0]));
                GLEAN_TEST_CHECK(config_get_int(cfg, "SLOTS_CONNECTED_TO_KEYBOARD", &n, NULL) == 0 && n == 1000000,
                                 "'%s': SLOTS_CONNECTED_TO_KEYBOARD %lld", texts[i], (long long) n);
                GLEAN_TEST_CHECK(config_get_int(cfg, "CLAIM_WORKLIFE", &n, NULL) == -ENOENT, "'%s': CLAIM_WORKLIFE",
                                 texts[i]);
                config_free(cfg);
        }
}

static void test_always_run_jobs(void) {
        static const struct {
                const char *name;
                bool value;
        } bools[] = {
                { "START", true },         { "SUSPEND", false },       { "CONTINUE", true },
                { "PREEMPT", false },      { "KILL", false },          { "WANT_SUSPEND", false },
                { "WANT_VACATE", true },   { "IS_OWNER", false },      { "PREEMPTION_REQUIREMENTS", false },
                { "NEGOTIATOR_CONSIDER_PREEMPTION", false },
        };
        static const Decision d[] = {
                { "START", TYPING_MACHINE, VANILLA_JOB, 1 },
                { "SUSPEND", TYPING_MACHINE, VANILLA_JOB, 0 },
                { "PREEMPT", LOADED_MACHINE, VANILLA_JOB, 0 },
        };
        Config *cfg = load_text("use POLICY : ALWAYS_RUN_JOBS");
        int64_t n = 0;

        for (size_t i = 0; i < sizeof(bools) / sizeof(bools[0]); i++) {
                bool b = !bools[i].value;

                GLEAN_TEST_CHECK(config_get_bool(cfg, bools[i].name, &b, NULL) == 0 && b == bools[i].value, "%s",
                                 bools[i].name);
        }
        GLEAN_TEST_CHECK(config_get_int(cfg, "MaxJobRetirementTime", &n, NULL) == 0 && n == 2147483647, "retirement");
        GLEAN_TEST_CHECK(config_get_int(cfg, "CLAIM_WORKLIFE", &n, NULL) == 0 && n == 1200, "worklife");
        check_decisions(cfg, "ALWAYS_RUN_JOBS", d, sizeof(d) / sizeof(d[0]));
        config_free(cfg);
}

/* Every built-in default and every template expands, and every value that
 * is an expression parses in both modes. */
static void test_all_parse(void) {
        static const char *const not_expressions[] = {
                "DAEMON_LIST", "CONSOLE_DEVICES", "ETC", "LOCAL_CONFIG_DIR", "LOCAL_CONFIG_DIR_EXCLUDE_REGEXP",
                "FULL_HOSTNAME", "HOSTNAME", "UID_DOMAIN", "FILESYSTEM_DOMAIN", "SPOOL", "NEGOTIATOR_DATABASE",
                "POOL_KEY_FILE", "NEGOTIATOR_SOCKET", "SEC_TOKEN_POOL_SIGNING_KEY_FILE", "SEC_TOKEN_MANAGER_KEY_FILE",
                "SEC_TOKEN_DIRECTORY", "TOKEN_REGISTRY", "SEC_DEFAULT_AUTHENTICATION_METHODS",
                "HISTORY", /* a file path (queue/queue-limits.c) */
        };
        static const char *const texts[] = {
                "", "use POLICY : DESKTOP", "use POLICY : ALWAYS_RUN_JOBS", "use POLICY : TIME_OF_DAY",
                "use POLICY : DESKTOP_TOGGLE", "use POLICY : DESKTOP_TOGGLE, TIME_OF_DAY\nIsDesktop = True",
        };

        for (size_t t = 0; t < sizeof(texts) / sizeof(texts[0]); t++) {
                Config *cfg = load_text(texts[t]);
                char **names = NULL;
                size_t parsed = 0;

                GLEAN_TEST_CHECK_FATAL(config_names(cfg, &names) == 0, "names");
                for (char **n = names; *n; n++) {
                        char *v = get(cfg, *n);
                        bool skip = !v || !config_strip(v)[0];

                        for (size_t k = 0; k < sizeof(not_expressions) / sizeof(not_expressions[0]) && !skip; k++)
                                skip = strcasecmp(*n, not_expressions[k]) == 0;
                        for (int mode = CA_MODE_OLD; mode <= CA_MODE_STRICT && !skip; mode++) {
                                ClassAdExpr *e = NULL;
                                ConfigError err = {};

                                GLEAN_TEST_CHECK(config_get_expr(cfg, *n, (CaMode) mode, &e, &err) == 0,
                                                 "'%s': %s does not parse: %s", texts[t], *n, err.msg);
                                classad_expr_free(e);
                                parsed++;
                        }
                        free(v);
                }
                GLEAN_TEST_CHECK(parsed > 200, "'%s': only %zu parsed", texts[t], parsed);
                config_strv_free(names);
                config_free(cfg);
        }
}

static CU_TestInfo seed_tests[] = {
        { "3.5.9.1-defaults", test_3591_defaults },
        { "3.5.9.1-expansions", test_3591_expansions },
        { "3.5.9.1-decisions", test_3591_decisions },
        { "3.5.9.2", test_3592 },
        { "3.5.9.3", test_3593 },
        { "3.5.9.4", test_3594 },
        { "3.5.9.5", test_3595 },
        { "3.5.9.6", test_3596 },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo template_tests[] = {
        { "desktop", test_templates },
        { "always-run-jobs", test_always_run_jobs },
        { "all-parse", test_all_parse },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "seed", NULL, NULL, NULL, NULL, seed_tests },
        { "templates", NULL, NULL, NULL, NULL, template_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

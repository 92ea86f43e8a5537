/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-metaknobs.c — HTCondor's metaknobs, `use CATEGORY :
 * NAME[(ARGS)]`: the table knows every one of param_info.in (the fixtures
 * tests/config/htcondor/metaknobs/, its texts byte for byte); each text
 * glean reads sets every knob HTCondor's sets to the same raw value, but
 * for the deliberate differences listed here (and in glean.conf(5)); the
 * arguments are substituted as HTCondor's expand_meta_args() does; refused
 * metaknobs set nothing and warn at their line; malformed use lines are
 * errors naming their file and line; and every file HTCondor ships or its
 * manual prints that has a use line loads past it.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config/config-internal.h"
#include "test-util.h"

#define FIXTURES "tests/config/htcondor/metaknobs"

/* ---- helpers ---- */

static Config *base(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) == 0, "config_new");
        if (text)
                GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "<base>", &err) == 0, "base '%s': %s", text,
                                       err.msg);
        return cfg;
}

/* Load text on top of cfg; 0 or the error. */
static int load(Config *cfg, const char *text, const char *source, ConfigError *err) {
        *err = (ConfigError){};
        return config_load_string(cfg, text, source, err);
}

/* Runs of white space as one space, trimmed. */
static char *squeeze(const char *s) {
        char *out = malloc(strlen(s) + 1), *o = out;
        bool space = false;

        GLEAN_TEST_CHECK_FATAL(out != NULL, "malloc");
        while (*s == ' ' || *s == '\t' || *s == '\n')
                s++;
        for (; *s; s++) {
                if (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r') {
                        space = true;
                        continue;
                }
                if (space)
                        *o++ = ' ';
                space = false;
                *o++ = *s;
        }
        *o = '\0';
        return out;
}

static bool from(const Config *cfg, const char *name, const char *source) {
        const char *file = NULL;
        int line = 0;

        return config_where(cfg, name, &file, &line) == 0 && strcmp(file, source) == 0;
}

static bool has_warning(const Config *cfg, const char *part) {
        char **w = NULL;
        bool found = false;

        GLEAN_TEST_CHECK_FATAL(config_warnings(cfg, &w) >= 0, "config_warnings");
        for (char **p = w; p && *p && !found; p++)
                found = strstr(*p, part) != NULL;
        config_strv_free(w);
        return found;
}

static size_t n_warnings(const Config *cfg) {
        char **w = NULL;
        int n = config_warnings(cfg, &w);

        config_strv_free(w);
        return n < 0 ? 0 : (size_t) n;
}

static const char *raw(const Config *cfg, const char *name) {
        const char *v = config_raw(cfg, name);

        return v ? v : "(undefined)";
}

/* The fixture of category : name in *path (its file keeps param_info.in's
 * spelling, names compare in any case); false when there is none. */
static bool fixture_path(const char *category, const char *name, char *path, size_t size) {
        char want[256];
        DIR *d = opendir(FIXTURES);
        struct dirent *de;
        bool found = false;

        GLEAN_TEST_CHECK_FATAL(d != NULL, "opendir %s", FIXTURES);
        snprintf(want, sizeof(want), "%s-%s.conf", category, name);
        while (!found && (de = readdir(d)))
                if (strcasecmp(de->d_name, want) == 0) {
                        snprintf(path, size, FIXTURES "/%s", de->d_name);
                        found = true;
                }
        closedir(d);
        return found;
}

/* ---- the table ---- */

static bool has_meta_ref(const char *text) {
        for (const char *p = strstr(text, "$("); p; p = strstr(p + 2, "$("))
                if (p[2] >= '0' && p[2] <= '9')
                        return true;
        return false;
}

/* Every fixture is a metaknob of the table, every HTCondor metaknob of the
 * table has its fixture, and each entry is consistent. */
static void test_table(void) {
        size_t n = 0, seen = 0, counts[3] = { 0 };
        const ConfigMetaknob *t = config_metaknobs(&n);
        DIR *d = opendir(FIXTURES);
        struct dirent *de;

        GLEAN_TEST_CHECK_FATAL(d != NULL, "opendir %s", FIXTURES);
        while ((de = readdir(d))) {
                char cat[32], name[128];
                const char *dash = strchr(de->d_name, '-'), *dot = strrchr(de->d_name, '.');

                if (!dash || !dot || strcmp(dot, ".conf") != 0)
                        continue;
                snprintf(cat, sizeof(cat), "%.*s", (int) (dash - de->d_name), de->d_name);
                snprintf(name, sizeof(name), "%.*s", (int) (dot - dash - 1), dash + 1);
                GLEAN_TEST_CHECK(config_metaknob_find(cat, name) != NULL, "%s : %s (fixture) is not in the table", cat,
                                 name);
                seen++;
        }
        closedir(d);
        GLEAN_TEST_CHECK(seen == 76, "%zu fixtures, want param_info.in's 76", seen);

        for (size_t i = 0; i < n; i++) {
                const ConfigMetaknob *m = &t[i];
                char path[512];
                bool found;

                GLEAN_TEST_CHECK(m->status >= 0 && m->status <= 2 && config_metaknob_status_name(m->status),
                                 "%s : %s: status %d", m->category, m->name, m->status);
                if (m->status >= 0 && m->status <= 2)
                        counts[m->status]++;
                GLEAN_TEST_CHECK(m->note && m->note[0], "%s : %s: no note", m->category, m->name);
                GLEAN_TEST_CHECK((m->status == CONFIG_METAKNOB_REFUSED) == (m->text == NULL),
                                 "%s : %s: refused iff no text", m->category, m->name);
                if (m->text)
                        GLEAN_TEST_CHECK(has_meta_ref(m->text) == (m->args != NULL),
                                         "%s : %s: takes arguments iff it says so (%s)", m->category, m->name,
                                         m->args ? m->args : "none");
                GLEAN_TEST_CHECK(config_metaknob_find(m->category, m->name) == m, "%s : %s twice", m->category,
                                 m->name);
                found = fixture_path(m->category, m->name, path, sizeof(path));
                GLEAN_TEST_CHECK(found != m->glean, "%s : %s: %s", m->category, m->name,
                                 m->glean ? "glean's own has a fixture" : "no fixture");
        }
        GLEAN_TEST_CHECK(n == 79, "%zu metaknobs, want 76 of HTCondor's and 3 of glean's", n);
        printf("\n    metaknobs: %zu implemented, %zu partial, %zu refused\n", counts[0], counts[1], counts[2]);
}

/* ---- each text against HTCondor's ---- */

/* Arguments and settings to try a metaknob with (every other one: alone,
 * without arguments). */
typedef struct Case {
        const char *category, *name;
        const char *base; /* defined before, in both; NULL: nothing */
        const char *args; /* NULL: none */
} Case;

static const Case cases[] = {
        { "POLICY", "Preempt_If", "X_EXCEEDED = Memory > 1", "X_EXCEEDED" },
        { "POLICY", "Preempt_If", "X_EXCEEDED = Memory > 1\nPREEMPT = False\nWANT_SUSPEND =", "X_EXCEEDED" },
        { "POLICY", "Want_Hold_If", "X_EXCEEDED = Memory > 1", "X_EXCEEDED, 102, too much, really" },
        { "POLICY", "Limit_Job_Runtimes", NULL, NULL },
        { "POLICY", "Limit_Job_Runtimes", NULL, "3600" },
        { "POLICY", "Preempt_If_Runtime_Exceeds", NULL, "7200" },
        { "POLICY", "Hold_If_Runtime_Exceeds", NULL, "7200" },
        { "POLICY", "Desktop_Idle", NULL, NULL },
        { "POLICY", "Desktop_Idle", NULL, "8, 17, 1, 5" },
        { "POLICY", "Desktop_Hours", NULL, "7.5" },
        { "FEATURE", "POLICY_HOURS_TO_START", NULL, "7.5, 18" },
        { "FEATURE", "GPUs", "GPU_MONITOR = /usr/libexec/gpu-monitor", "-extra" },
        { "FEATURE", "GPUsMonitor", "GPU_MONITOR = /usr/libexec/gpu-monitor", NULL },
        { "FEATURE", "Monitor", NULL, "GPUs, WaitForExit, 300, /bin/mon, SUM:GPUs, PEAK:GPUsMemory" },
        { "FEATURE", "PartitionableSlot", NULL, NULL },
        { "FEATURE", "PartitionableSlot", NULL, "2, cpus=50%, memory=50%" },
        { "FEATURE", "StaticSlots", NULL, NULL },
        { "FEATURE", "StaticSlots", NULL, "2, 4" },
        { "FEATURE", "StaticSlots", NULL, "3, 2, cpus=1, memory=25%" },
        { "FEATURE", "OneShotCronHook", NULL, "STARTD_CRON, tag, /bin/x, -a" },
        { "FEATURE", "OneShotCronHook", NULL, "SCHEDD_CRON, tag, /bin/x" },
        { "FEATURE", "PeriodicCronHook", NULL, "STARTD_CRON, tag, 60, /bin/x, -a" },
        { "FEATURE", "ContinuousCronHook", NULL, "STARTD_CRON, tag, /bin/x" },
        { "FEATURE", "StartdCronPeriodic", NULL, "DYNGPU, 15*60, /bin/x, -dynamic" },
        { "FEATURE", "StartdCronOneShot", NULL, "tag, /bin/x" },
        { "FEATURE", "StartdCronContinuous", NULL, "tag, /bin/x, a b" },
        { "SECURITY", "Recommended_v9_0", NULL, NULL },
        { "SECURITY", "Recommended_v9_0", NULL, "svc, admin@x, other@y" },
        { "SECURITY", "Recommended_v24_0", NULL, NULL },
        { "SECURITY", "Recommended_v24_0", NULL, "svc, admin@x" },
        { "SECURITY", "Recommended", NULL, "svc" },
        { "SECURITY", "User_Based", "CondorIsAdmin = True", NULL },
        { "SECURITY", "User_Based", "CondorIsAdmin = False\nUSERNAME = alice", NULL },
};

/* Where glean's text differs from HTCondor's on purpose (glean.conf(5),
 * metaknob-texts.c): a knob that has another value, or that only glean
 * sets ("*": every name of extras). */
typedef struct Difference {
        const char *category, *name, *knob;
        const char *why;
} Difference;

static const Difference differences[] = {
        { "POLICY", "Desktop", "CpuBusyTimer", "glean's agent publishes the seconds busy as CpuBusyTime" },
        { "POLICY", "Desktop_Idle", "CpuBusyTimer", "the same" },
        { "POLICY", "Desktop_Hours", "CpuBusyTimer", "the same" },
        { "FEATURE", "UWCS_DESKTOP_POLICY_VALUES", "CpuBusyTimer", "the same" },
        { "POLICY", "Preempt_If_Runtime_Exceeds", "PREEMPT_RUNTIME_EXCEEDS",
          "glean's ads have no JobState: Activity and JobStart" },
        { "POLICY", "Hold_If_Runtime_Exceeds", "HOLD_RUNTIME_EXCEEDS", "the same" },
        { "ROLE", "Personal", "COLLECTOR_HOST", "no ':0': glean's agent needs the port (COLLECTOR_PORT)" },
        { "SECURITY", "Recommended_v9_0", "ALLOW_DAEMON", "glean's agents: agent@*, condor_pool@*" },
        { "SECURITY", "Recommended_v24_0", "ALLOW_DAEMON", "the same" },
};

/* What ROLE : Execute and ROLE : Personal add: HTCondor's default policy
 * in place of glean's built-in desktop one. */
static const char *const role_policy[] = {
        "START", "SUSPEND", "CONTINUE", "PREEMPT", "KILL", "WANT_SUSPEND", "WANT_VACATE", "IS_OWNER",
};

static bool deliberate(const ConfigMetaknob *m, const char *knob) {
        for (size_t i = 0; i < sizeof(differences) / sizeof(differences[0]); i++)
                if (strcasecmp(differences[i].category, m->category) == 0 &&
                    strcasecmp(differences[i].name, m->name) == 0 && strcasecmp(differences[i].knob, knob) == 0)
                        return true;
        if (strcmp(m->category, "ROLE") == 0 && (strcmp(m->name, "Execute") == 0 || strcmp(m->name, "Personal") == 0))
                for (size_t i = 0; i < sizeof(role_policy) / sizeof(role_policy[0]); i++)
                        if (strcasecmp(role_policy[i], knob) == 0)
                                return true;
        return false;
}

static unsigned compared, knobs_compared;

static void compare_one(const ConfigMetaknob *m, const char *basetext, const char *args) {
        char fixture[512], use[512], why[256] = "";
        char *htc_text = NULL, *htc = NULL, **names = NULL;
        Config *g = base(basetext), *h = base(basetext);
        ConfigError ge, he;
        int gr, hr, r;

        GLEAN_TEST_CHECK_FATAL(fixture_path(m->category, m->name, fixture, sizeof(fixture)), "%s : %s: no fixture",
                               m->category, m->name);
        r = glean_test_read_file(fixture, &htc_text, NULL);
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: %s", fixture, strerror(-r));
        r = config_meta_args(htc_text, args, &htc, why, sizeof(why));
        GLEAN_TEST_CHECK_FATAL(r == 0, "%s: arguments: %s", fixture, why);
        snprintf(use, sizeof(use), "use %s : %s%s%s%s", m->category, m->name, args ? "(" : "", args ? args : "",
                 args ? ")" : "");

        /* $RANDOM_INTEGER() draws when a line is read: the same seed for
         * both, so that both texts draw the same numbers */
        config_random_seed(0x75776373);
        gr = load(g, use, "<glean>", &ge);
        config_random_seed(0x75776373);
        hr = load(h, htc, "<htcondor>", &he);
        if (gr < 0 || hr < 0) {
                GLEAN_TEST_CHECK(false, "'%s': glean %d (%s), HTCondor's text %d (%s)", use, gr, ge.msg, hr, he.msg);
                goto done;
        }
        compared++;
        GLEAN_TEST_CHECK_FATAL(config_names(h, &names) == 0, "names");
        for (char **n = names; *n; n++) {
                char *a, *b;

                if (!from(h, *n, "<htcondor>"))
                        continue;
                knobs_compared++;
                if (deliberate(m, *n))
                        continue;
                a = squeeze(raw(g, *n));
                b = squeeze(raw(h, *n));
                GLEAN_TEST_CHECK(strcmp(a, b) == 0 && from(g, *n, "<glean>"), "'%s': %s is '%s', HTCondor's '%s'",
                                 use, *n, a, b);
                free(a);
                free(b);
        }
        config_strv_free(names);
        GLEAN_TEST_CHECK_FATAL(config_names(g, &names) == 0, "names");
        for (char **n = names; *n; n++)
                if (from(g, *n, "<glean>"))
                        GLEAN_TEST_CHECK(from(h, *n, "<htcondor>") || deliberate(m, *n),
                                         "'%s': glean also sets %s = '%s'", use, *n, raw(g, *n));
        config_strv_free(names);
done:
        free(htc_text);
        free(htc);
        config_free(g);
        config_free(h);
}

/* A refused metaknob sets nothing and says so at its line. */
static void refused_one(const ConfigMetaknob *m) {
        char use[256], want[256];
        Config *g = base(NULL);
        ConfigError e;
        char **names = NULL;
        int r;

        snprintf(use, sizeof(use), "A = 1\nuse %s : %s", m->category, m->name);
        r = load(g, use, "<glean>", &e);
        GLEAN_TEST_CHECK(r == 0, "'%s': %s", use, e.msg);
        snprintf(want, sizeof(want), "<glean>:2: use %s : %s: %s: nothing set", m->category, m->name, m->note);
        GLEAN_TEST_CHECK(has_warning(g, want), "'%s': no warning '%s'", use, want);
        GLEAN_TEST_CHECK_FATAL(config_names(g, &names) == 0, "names");
        for (char **n = names; *n; n++)
                GLEAN_TEST_CHECK(strcmp(*n, "A") == 0 || !from(g, *n, "<glean>"), "'%s' set %s", use, *n);
        config_strv_free(names);
        config_free(g);
}

static void test_against_htcondor(void) {
        size_t n = 0;
        const ConfigMetaknob *t = config_metaknobs(&n);

        compared = knobs_compared = 0;
        for (size_t i = 0; i < n; i++) {
                const ConfigMetaknob *m = &t[i];
                bool tried = false;

                if (m->glean)
                        continue;
                if (m->status == CONFIG_METAKNOB_REFUSED) {
                        refused_one(m);
                        continue;
                }
                for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
                        if (strcmp(cases[k].category, m->category) == 0 && strcmp(cases[k].name, m->name) == 0) {
                                compare_one(m, cases[k].base, cases[k].args);
                                tried = true;
                        }
                if (!tried)
                        compare_one(m, NULL, NULL);
        }
        printf("\n    %u expansions compared (%u knobs)\n", compared, knobs_compared);
        GLEAN_TEST_CHECK(compared >= 40 && knobs_compared >= 250, "only %u expansions, %u knobs compared", compared,
                         knobs_compared);
}

/* ---- arguments ---- */

typedef struct ArgCase {
        const char *text, *args, *want;
} ArgCase;

static const ArgCase arg_cases[] = {
        /* param_info.in's example, read as its code reads it: empty
         * arguments are skipped */
        { "$(0)", "arg1, , arg3", "arg1, , arg3" },
        { "$(0#)", "arg1, , arg3", "2" },
        { "$(0+)", "arg1, , arg3", "2" },
        { "$(0?)", "arg1, , arg3", "1" },
        { "$(1)", "arg1, , arg3", "arg1" },
        { "$(2)", "arg1, , arg3", "arg3" },
        { "$(3)", "arg1, , arg3", "" },
        { "$(1?)$(2?)$(3?)", "arg1, , arg3", "110" },
        { "$(1+)", "arg1, , arg3", "arg1, , arg3" },
        { "$(2+)", "arg1, , arg3", ", arg3" },
        { "$(2#)", "arg1, , arg3", ", arg3" },
        { "$(3+)", "arg1, , arg3", "" },
        { "[$(1)] [$(2)]", "  spaced  ,\tout\t", "[spaced] [out]" },
        { "$(3+)", "a, b, c, with, commas", "c, with, commas" },
        /* defaults */
        { "$(1:8)", NULL, "8" },
        { "$(1:8)", "9", "9" },
        { "$(2:12+5)", "9", "12+5" },
        { "$(2+:100%)", "1", "100%" },
        { "$(2+:100%)", "1, cpus=50%, mem=50%", "cpus=50%, mem=50%" },
        { "$(3+:1/$(NUM_SLOTS_TYPE_$(1:1)))", "2, 4", "1/$(NUM_SLOTS_TYPE_2)" },
        { "$(3+:1/$(NUM_SLOTS_TYPE_$(1:1)))", NULL, "1/$(NUM_SLOTS_TYPE_1)" },
        { "$(2:$(LOCAL_DIR)/localcache)", "1", "$(LOCAL_DIR)/localcache" },
        { "$(0:x)", NULL, "" },
        /* no arguments */
        { "$(0)|$(0#)|$(0?)|$(1)|$(1?)|$(2+)", NULL, "|0|0||0|" },
        { "$(0)|$(0#)|$(0?)", "", "|0|0" },
        /* everything else is left to the expansion at lookup */
        { "$($(1))", "MEMORY_EXCEEDED", "$(MEMORY_EXCEEDED)" },
        { "$($(1)_JOBLIST) $(X:$(1))", "STARTD_CRON", "$(STARTD_CRON_JOBLIST) $(X:STARTD_CRON)" },
        { "$(DOLLAR) $$(1) $ENV(HOME) $(A1)", "x", "$(DOLLAR) $x $ENV(HOME) $(A1)" },
        { "\"$(3+)\"", "X, 102, memory usage exceeded request_memory", "\"memory usage exceeded request_memory\"" },
        /* an argument's text is not scanned again */
        { "$(1)", "$(2)", "$(2)" },
        { "$(1) $(2)", "$(1), $(2)", "$(1) $(2)" },
        { "$(12)", "a,b,c,d,e,f,g,h,i,j,k,l", "l" },
};

static const ArgCase arg_errors[] = {
        { "$(1", "x", "'$(1' has no closing ')'" },
        { "A = $(1:$(B)", "x", "has no closing ')'" },
        { "$(1x)", "x", "'$(1x)' is not a metaknob argument" },
        { "$(1?x)", "x", "'$(1?x)' is not a metaknob argument" },
};

static void test_args(void) {
        for (size_t i = 0; i < sizeof(arg_cases) / sizeof(arg_cases[0]); i++) {
                const ArgCase *c = &arg_cases[i];
                char *got = NULL, why[256] = "";
                int r = config_meta_args(c->text, c->args, &got, why, sizeof(why));

                GLEAN_TEST_CHECK(r == 0 && strcmp(got, c->want) == 0, "case %zu: '%s' with (%s) is '%s' (%s), want '%s'",
                                 i, c->text, c->args ? c->args : "none", got ? got : "", why, c->want);
                free(got);
        }
        for (size_t i = 0; i < sizeof(arg_errors) / sizeof(arg_errors[0]); i++) {
                const ArgCase *c = &arg_errors[i];
                char *got = NULL, why[256] = "";
                int r = config_meta_args(c->text, c->args, &got, why, sizeof(why));

                GLEAN_TEST_CHECK(r == -EINVAL && strstr(why, c->want), "error %zu: '%s' gave %d '%s', want '%s'", i,
                                 c->text, r, why, c->want);
                free(got);
        }
}

/* ---- what the arguments do, as a configuration sees them ---- */

typedef struct UseCase {
        const char *text;
        const char *name;
        const char *raw; /* NULL: undefined */
} UseCase;

static const UseCase use_cases[] = {
        { "use POLICY : Limit_Job_Runtimes", "MAX_JOB_RUNTIME", "24*3600" },
        { "use POLICY : Limit_Job_Runtimes(3600)", "MAX_JOB_RUNTIME", "3600" },
        { "use POLICY : Limit_Job_Runtimes()", "MAX_JOB_RUNTIME", "24*3600" },
        { "use POLICY : Limit_Job_Runtimes ( 3600 )", "MAX_JOB_RUNTIME", "3600" },
        { "use POLICY : Limit_Job_Runtimes(3600)", "MaxJobRetirementTime", "$(MAX_JOB_RUNTIME)+120" },
        { "use FEATURE : PartitionableSlot", "SLOT_TYPE_1", "100%" },
        { "use FEATURE : PartitionableSlot", "SLOT_TYPE_1_PARTITIONABLE", "true" },
        { "use FEATURE : PartitionableSlot(2, cpus=50%, memory=50%)", "SLOT_TYPE_2", "cpus=50%, memory=50%" },
        { "use FEATURE : PartitionableSlot(2)", "NUM_SLOTS_TYPE_2", "1" },
        { "use FEATURE : StaticSlots", "NUM_SLOTS_TYPE_1", "$(NUM_CPUS)" },
        { "use FEATURE : StaticSlots(2, 4)", "NUM_SLOTS_TYPE_2", "4" },
        { "use FEATURE : StaticSlots(2, 4)", "SLOT_TYPE_2", "" },
        { "use FEATURE : StaticSlots(1, 2, cpus=1, mem=25%)", "SLOT_TYPE_1", "cpus=1, mem=25%" },
        { "X = Memory > 2\nuse POLICY : Preempt_If(X)", "PREEMPT",
          "$(X) || ( ((Activity == \"Suspended\") && ($(ActivityTimer) > $(MaxSuspendTime))) || "
          "(SUSPEND && (WANT_SUSPEND == False)) )" },
        { "X = Memory > 2\nuse POLICY : Preempt_If(X)", "MAXJOBRETIREMENTTIME", "ifthenelse($(X),-1,0)" },
        { "X = Memory > 2\nuse POLICY : Want_Hold_If(X, 7, too big, by far)", "WANT_HOLD_REASON",
          "ifThenElse($(X), \"too big, by far\", UNDEFINED)" },
        { "X = Memory > 2\nuse POLICY : Want_Hold_If(X, 7, too big)", "WANT_HOLD_SUBCODE",
          "ifThenElse($(X), 7 , UNDEFINED)" },
        { "use POLICY : Hold_If_Memory_Exceeded", "WANT_HOLD_SUBCODE",
          "ifThenElse($(MEMORY_EXCEEDED), $(HOLD_SUBCODE_MEMORY_EXCEEDED:102) , UNDEFINED)" },
        { "use FEATURE : StartdCronPeriodic(DYNGPU, 15*60, $(LOCAL_DIR)/gpu.pl, $(LIBEXEC)/condor_gpu_discovery -dynamic)",
          "STARTD_CRON_DYNGPU_ARGS", "$(LIBEXEC)/condor_gpu_discovery -dynamic" },
        { "use FEATURE : StartdCronPeriodic(DYNGPU, 15*60, /bin/x)", "STARTD_CRON_DYNGPU_PERIOD", "15*60" },
        { "use FEATURE : StartdCronPeriodic(DYNGPU, 15*60, /bin/x)", "STARTD_CRON_DYNGPU_ARGS", NULL },
        { "use FEATURE : StartdCronOneShot(cloud, /bin/x)", "STARTD_CRON_cloud_MODE", "OneShot" },
        { "use FEATURE : StartdCronContinuous(t, /bin/x)", "STARTD_CRON_t_MODE", "WaitForExit" },
        { "use FEATURE : StartdCronContinuous(t, /bin/x)\nuse FEATURE : StartdCronOneShot(u, /bin/y)",
          "STARTD_CRON_JOBLIST", " t u" },
        { "use FEATURE : Monitor(GPUs, WaitForExit, 300, /bin/m, SUM:GPUs, PEAK:GPUsMemory)",
          "STARTD_CRON_GPUs_MONITOR_METRICS", "SUM:GPUs, PEAK:GPUsMemory" },
        { "GPU_MONITOR = /bin/m\nuse FEATURE : GPUsMonitor", "STARTD_CRON_GPUs_MONITOR_EXECUTABLE", "$(GPU_MONITOR)" },
        { "use FEATURE : GPUsMonitor", "STARTD_CRON_JOBLIST", NULL },
        { "use FEATURE : GPUs(-extra)", "MACHINE_RESOURCE_INVENTORY_GPUs",
          "$(LIBEXEC)/condor_gpu_discovery -extra -properties $(GPU_DISCOVERY_EXTRA)" },
        { "use SECURITY : Recommended(svc, admin@x)", "ALLOW_ADMINISTRATOR", "svc@* condor@password admin@x" },
        { "use SECURITY : Recommended", "ALLOW_ADMINISTRATOR", "condor@* condor@password root@*" },
        { "use SECURITY : Recommended", "SEC_DEFAULT_ENCRYPTION", "required" },
        { "use SECURITY : Recommended", "ALLOW_DAEMON", "condor@* condor@password condor_pool@* agent@*" },
        { "use SECURITY : Recommended_v9_0", "ALLOW_DAEMON", "condor@* condor_pool@* agent@*" },
        { "use SECURITY : User_Based", "authuser", "condor" },
        { "use SECURITY : User_Based", "ALLOW_ADMINISTRATOR", "$(authuser)@* condor@password root@*" },
        { "CondorIsAdmin = False\nUSERNAME = alice\nuse SECURITY : User_Based", "ALLOW_WRITE",
          "$(authuser)@$(UID_DOMAIN)" },
        /* roles */
        { "use ROLE : Execute", "DAEMON_LIST", "MASTER STARTD" },
        { "DAEMON_LIST = MASTER\nuse ROLE : CentralManager Submit, Execute", "DAEMON_LIST",
          "MASTER COLLECTOR NEGOTIATOR SCHEDD STARTD" },
        { "use ROLE : Execute", "START", "True" },
        { "use ROLE : Execute", "SUSPEND", "False" },
        { "use ROLE : Execute", "WANT_VACATE", "True" },
        { "use ROLE : Execute", "IS_OWNER", "False" },
        { "use ROLE : Submit", "START", "( (KeyboardIdle > $(StartIdleTime)) && ( $(CPUIdle) || "
                                        "(State != \"Unclaimed\" && State != \"Owner\")) )" },
        { "START = Memory > 1\nuse ROLE : Execute", "START", "Memory > 1" },
        { "START = Memory > 1\nuse ROLE : Execute", "SUSPEND", "False" },
        { "use POLICY : Desktop\nuse ROLE : Execute", "SUSPEND",
          "($(KeyboardBusy) || ( ($(CpuBusyTimer) > 120) && $(ActivationTimer) > 90))" },
        { "use ROLE : Execute\nuse POLICY : Always_Run_Jobs", "MaxJobRetirementTime", "2147483647" },
        { "use ROLE : Personal", "COLLECTOR_HOST", "$(CONDOR_HOST)" },
        { "use ROLE : Personal", "CONDOR_HOST", "127.0.0.1" },
        { "use ROLE : Personal", "START", "True" },
        { "use ROLE : get_htcondor_execute", "TRUST_DOMAIN", "$(CONDOR_HOST)" },
        { "use ROLE : get_htcondor_execute", "START", "True" },
        /* the desktop policy sets what HTCondor's does */
        { "use POLICY : Desktop", "SLOTS_CONNECTED_TO_KEYBOARD", "1000000" },
        { "use POLICY : Desktop", "SLOTS_CONNECTED_TO_CONSOLE", "1000000" },
        { "use POLICY : Desktop", "CLAIM_WORKLIFE", "" },
        { "use POLICY : Desktop", "PolicyExprFragments", "1" },
        { "use POLICY : Desktop", "STARTD_LATCH_EXPRS", " CpuBusy" },
        { "use POLICY : Desktop", "CpuBusyTimer", "CpuBusyTime" },
        { "PolicyExprFragments = 1\nuse POLICY : Desktop", "ActivationTimer", "(CurrentTime - JobStart)" },
        /* names and categories in any case, as HTCondor */
        { "use policy : always_run_jobs", "START", "True" },
        { "USE Feature: partitionableslot", "NUM_SLOTS_TYPE_1", "1" },
        { "@use POLICY : ALWAYS_RUN_JOBS", "CLAIM_WORKLIFE", "1200" },
        /* an argument reference in a value (a submit template's) is text */
        { "SUBMIT_TEMPLATE_T @=end\n  if $(1?)\n    x = $(2+) $(0#)\n  endif\n@end", "SUBMIT_TEMPLATE_T",
          "if $(1?)\nx = $(2+) $(0#)\nendif" },
        /* refused: nothing set */
        { "use FEATURE : AssignAccountingGroup(/etc/map)", "JOB_TRANSFORM_NAMES", NULL },
        { "use FEATURE : KRB", "DAEMON_LIST", "MASTER" },
};

/* ... and expands to itself, as HTCondor leaves it. */
static void test_arg_text(void) {
        Config *cfg = base(NULL);
        ConfigError e;
        char *v = NULL;

        GLEAN_TEST_CHECK_FATAL(load(cfg, "T = a $(1?) b $(2+) c $(0#) $(1:x)", "<test>", &e) == 0, "%s", e.msg);
        GLEAN_TEST_CHECK(config_get(cfg, "T", &v, &e) == 0 && strcmp(v, "a $(1?) b $(2+) c $(0#) x") == 0,
                         "T expands to '%s' (%s)", v ? v : "", e.msg);
        free(v);
        config_free(cfg);
}

static void test_use(void) {
        for (size_t i = 0; i < sizeof(use_cases) / sizeof(use_cases[0]); i++) {
                const UseCase *c = &use_cases[i];
                Config *cfg = base(NULL);
                ConfigError e;
                int r = load(cfg, c->text, "<test>", &e);
                const char *v;

                GLEAN_TEST_CHECK(r == 0, "case %zu: '%s': %s:%d: %s", i, c->text, e.file, e.line, e.msg);
                v = config_raw(cfg, c->name);
                if (c->raw)
                        GLEAN_TEST_CHECK(v && strcmp(v, c->raw) == 0, "case %zu: '%s': %s is '%s', want '%s'", i,
                                         c->text, c->name, v ? v : "(undefined)", c->raw);
                else
                        GLEAN_TEST_CHECK(!v, "case %zu: '%s': %s is '%s', want undefined", i, c->text, c->name, v);
                config_free(cfg);
        }
}

/* Definitions are the use line's, and the warnings name it. */
static void test_lines_and_warnings(void) {
        static const struct {
                const char *text;
                const char *warning; /* NULL: none */
        } w[] = {
                { "A = 1\n\nuse FEATURE : ADSTASH",
                  "w.conf:3: use FEATURE : ADSTASH: glean has no condor_adstash (job history to Elasticsearch): "
                  "nothing set" },
                { "use feature: KRB", "w.conf:1: use FEATURE : KRB: glean has no credential monitor" },
                { "use SECURITY : FIPS", "w.conf:1: use SECURITY : FIPS: glean's cryptography" },
                { "use EXPERIMENTAL : HADSharedPort(a, b)", "w.conf:1: use EXPERIMENTAL : HADSharedPort: " },
                { "\nuse FEATURE : GPUsMonitor", "w.conf:2: use FEATURE : GPUsMonitor: glean ships no GPU monitor" },
                { "use FEATURE : GPUs", "w.conf:1: use FEATURE : GPUs: the knobs are HTCondor's, but glean runs no GPU" },
                { "use FEATURE : GPUs", "w.conf:1: use FEATURE : GPUsMonitor:" },
                { "X = 1\nuse POLICY : Want_Hold_If(X, 1, r)", "w.conf:2: use POLICY : Want_Hold_If: " },
                { "use POLICY : Hold_If_Cpus_Exceeded", "w.conf:1: use POLICY : Hold_If_Cpus_Exceeded: as "
                                                        "Preempt_If_Cpus_Exceeded, and WANT_HOLD (subcode 101)" },
                { "use FEATURE : PeriodicCronHook(SCHEDD_CRON, t, 60, /bin/x)",
                  "w.conf:1: use FEATURE : PeriodicCronHook: " },
                { "use FEATURE : ScheddCronOneShot(t, /bin/x)", "w.conf:1: use FEATURE : ScheddCronOneShot: " },
                { "use FEATURE : PeriodicCronHook(STARTD_CRON, t, 60, /bin/x)", NULL },
                { "use FEATURE : StartdCronPeriodic(t, 60, /bin/x)", NULL },
                { "GPU_MONITOR = /bin/m\nuse FEATURE : GPUsMonitor", NULL },
                { "use POLICY : Desktop", NULL },
                { "use ROLE : Execute", NULL },
                { "use SECURITY : Recommended", NULL },
        };
        Config *cfg;
        ConfigError e;
        const char *file = NULL;
        int line = 0;

        for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
                cfg = base(NULL);
                GLEAN_TEST_CHECK(load(cfg, w[i].text, "w.conf", &e) == 0, "'%s': %s", w[i].text, e.msg);
                if (w[i].warning)
                        GLEAN_TEST_CHECK(has_warning(cfg, w[i].warning), "'%s': no warning '%s'", w[i].text,
                                         w[i].warning);
                else
                        GLEAN_TEST_CHECK(n_warnings(cfg) == 0, "'%s': %zu warnings", w[i].text, n_warnings(cfg));
                config_free(cfg);
        }

        /* one warning for one line: the Want_Hold_If it uses does not warn again */
        cfg = base(NULL);
        GLEAN_TEST_CHECK_FATAL(load(cfg, "use POLICY : Hold_If_Memory_Exceeded", "w.conf", &e) == 0, "%s", e.msg);
        GLEAN_TEST_CHECK(n_warnings(cfg) == 1 && !has_warning(cfg, "Want_Hold_If"), "%zu warnings", n_warnings(cfg));
        config_free(cfg);

        cfg = base(NULL);
        GLEAN_TEST_CHECK_FATAL(load(cfg, "A = 1\n# x\n\nuse POLICY : Hold_If_Memory_Exceeded\nB = 2", "l.conf", &e) == 0,
                               "%s", e.msg);
        GLEAN_TEST_CHECK(config_where(cfg, "WANT_HOLD", &file, &line) == 0 && strcmp(file, "l.conf") == 0 && line == 4,
                         "WANT_HOLD at %s:%d", file, line);
        GLEAN_TEST_CHECK(config_where(cfg, "MEMORY_EXCEEDED", &file, &line) == 0 && line == 4, "MEMORY_EXCEEDED at %d",
                         line);
        config_free(cfg);
}

/* ---- errors ---- */

typedef struct ErrorCase {
        const char *text;
        int line;
        const char *msg; /* the start of the reason */
} ErrorCase;

static const ErrorCase error_cases[] = {
        { "A = 1\nuse NOPE : X", 2, "use: unknown category 'NOPE' (known: ROLE, POLICY, FEATURE, SECURITY, EXPERIMENTAL)" },
        { "use UPGRADE : DISCARD", 1, "use: unknown category 'UPGRADE'" },
        { "use <category name> : <template name>", 1, "use: unknown category '<category name>'" },
        { "\n\nuse POLICY : NoSuch", 3, "use POLICY: HTCondor has no metaknob 'NoSuch'" },
        { "use FEATURE : Desktop", 1, "use FEATURE: HTCondor has no metaknob 'Desktop'" },
        { "use ROLE : Execute, Worker", 1, "use ROLE: HTCondor has no metaknob 'Worker'" },
        { "use POLICY :", 1, "use POLICY: which metaknob?" },
        { "use POLICY : ,", 1, "use POLICY: which metaknob?" },
        { "use : Desktop", 1, "use needs a category and a name" },
        { "use POLICY : (X)", 1, "use POLICY: '(' without a name" },
        /* arguments */
        { "\nuse POLICY : Desktop(X)", 2, "use POLICY : Desktop takes no arguments, not (X)" },
        { "use ROLE : Execute(1)", 1, "use ROLE : Execute takes no arguments" },
        { "use POLICY : Preempt_If(X", 1, "use POLICY : Preempt_If: no ')' closes the arguments" },
        { "use POLICY : Preempt_If((X)", 1, "use POLICY : Preempt_If: no ')' closes the arguments" },
        { "use POLICY : Preempt_If([X)]", 1, "use POLICY : Preempt_If: no ')' closes the arguments" },
        { "A = 1\nuse POLICY : Preempt_If", 2, "error: use POLICY : PREEMPT_IF requires an argument" },
        { "use POLICY : Preempt_If()", 1, "error: use POLICY : PREEMPT_IF requires an argument" },
        { "use POLICY : Want_Hold_If(X)", 1, "error: use POLICY : WANT_HOLD_IF requires 3 arguments" },
        { "use POLICY : Want_Hold_If(X, 1)", 1, "error: use POLICY : WANT_HOLD_IF requires 3 arguments" },
        { "use POLICY : Want_Hold_If(X, , 1)", 1, "error: use POLICY : WANT_HOLD_IF requires 3 arguments" },
        { "use FEATURE : Monitor(a, b, c, d)", 1, "error: use feature : monitor requires five or more arguments" },
        { "use FEATURE : PeriodicCronHook(STARTD_CRON, t, 60)", 1,
          "error: use FEATURE : PeriodicCronHook requires at least 4 arguments" },
        { "use FEATURE : StartdCronPeriodic(t, 60)", 1,
          "error: use FEATURE : PeriodicCronHook requires at least 4 arguments" },
        { "use FEATURE : StartdCronOneShot", 1, "error: use FEATURE : OneShotCronHook requires at least 3 arguments" },
        { "use FEATURE : ContinuousCronHook(STARTD_CRON)", 1,
          "error: use FEATURE : ContinuousCronHook requires at least 3 arguments" },
        /* glean's own */
        { "use POLICY : Time_Of_Day(1)", 1, "use POLICY : Time_Of_Day takes no arguments" },
};

static void test_errors(void) {
        for (size_t i = 0; i < sizeof(error_cases) / sizeof(error_cases[0]); i++) {
                const ErrorCase *c = &error_cases[i];
                Config *cfg = base(NULL);
                size_t before = cfg->n_entries;
                ConfigError e;
                int r = load(cfg, c->text, "bad.conf", &e);

                GLEAN_TEST_CHECK(r < 0, "case %zu: '%s' loaded", i, c->text);
                GLEAN_TEST_CHECK(strcmp(e.file, "bad.conf") == 0 && e.line == c->line,
                                 "case %zu: '%s': error at %s:%d, want bad.conf:%d (%s)", i, c->text, e.file, e.line,
                                 c->line, e.msg);
                GLEAN_TEST_CHECK(strncmp(e.msg, c->msg, strlen(c->msg)) == 0, "case %zu: reason '%s', want '%s...'", i,
                                 e.msg, c->msg);
                GLEAN_TEST_CHECK(cfg->n_entries == before, "case %zu: the failed load changed the Config", i);
                config_free(cfg);
        }
}

/* The same metaknob many times builds on itself each time; a hostile
 * argument cannot make a text longer than a value may be. */
static void test_limits(void) {
        char text[4096] = "";
        Config *cfg = base(NULL);
        ConfigError e;
        size_t n = 300 * 1024;
        char *big = malloc(n + 128);
        int r;

        for (int i = 0; i < 25; i++)
                strcat(text, "use ROLE : get_htcondor_execute\n");
        r = load(cfg, text, "n.conf", &e);
        GLEAN_TEST_CHECK(r == 0, "25 uses in a row: %s", e.msg);
        GLEAN_TEST_CHECK(strstr(raw(cfg, "DAEMON_LIST"), "STARTD STARTD STARTD") != NULL, "DAEMON_LIST '%s'",
                         raw(cfg, "DAEMON_LIST"));
        config_free(cfg);

        /* the tag is substituted a dozen times: 3.6 MB, more than the 1 MiB
         * of a value */
        GLEAN_TEST_CHECK_FATAL(big != NULL, "malloc");
        strcpy(big, "\nuse FEATURE : StartdCronPeriodic(");
        memset(big + strlen(big), 'T', n);
        strcpy(big + strlen("\nuse FEATURE : StartdCronPeriodic(") + n, ", 60, /bin/x)");
        cfg = base(NULL);
        r = load(cfg, big, "big.conf", &e);
        GLEAN_TEST_CHECK(r == -E2BIG && e.line == 2 && strstr(e.msg, "too long"), "a 300 KiB tag: %d at %d: %s", r,
                         e.line, e.msg);
        GLEAN_TEST_CHECK(!config_raw(cfg, "STARTD_CRON_JOBLIST"), "the failed load set STARTD_CRON_JOBLIST");
        config_free(cfg);
        free(big);
}

/* ---- HTCondor's files ---- */

typedef struct FileCase {
        const char *path;
        int error_line;      /* 0: loads */
        const char *error;   /* the start of the reason */
        const char *warning; /* NULL: none expected */
        const char *waits;   /* why it does not load yet, whose work it waits for */
} FileCase;

static const FileCase files[] = {
        { "tests/config/htcondor/examples/00-execution-point", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/examples/00-access-point", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/examples/00-htcondor-9.0.config", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/examples/00-minicondor", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/examples/condor_config.local.adstash", 0, NULL, "use FEATURE : ADSTASH", NULL },
        { "tests/config/htcondor/examples/00-security", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/manual/ap-policy-configuration-14.conf", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/manual/cm-configuration-06.conf", 0, NULL, "use FEATURE : AssignAccountingGroup",
          NULL },
        { "tests/config/htcondor/manual/cm-configuration-20.conf", 0, NULL, "use FEATURE : GANGLIA", NULL },
        { "tests/config/htcondor/manual/ep-policy-configuration-58.conf", 0, NULL, "use FEATURE : GPUs", NULL },
        { "tests/config/htcondor/manual/ep-policy-configuration-59.conf", 0, NULL, "use FEATURE : GPUs", NULL },
        { "tests/config/htcondor/manual/file-and-cred-transfer-15.conf", 0, NULL, "use FEATURE : KRB", NULL },
        { "tests/config/htcondor/manual/introduction-to-configuration-41.conf", 2,
          "use: unknown category '<category name>'", NULL, "nothing: the manual's placeholder, an error in HTCondor too" },
        { "tests/config/htcondor/manual/introduction-to-configuration-42.conf", 0, NULL, "use FEATURE : GPUs", NULL },
        { "tests/config/htcondor/manual/introduction-to-configuration-43.conf", 0, NULL, "use FEATURE : GPUs", NULL },
        { "tests/config/htcondor/manual/introduction-to-configuration-44.conf", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/manual/introduction-to-configuration-45.conf", 0, NULL,
          "use POLICY : Want_Hold_If", NULL },
        { "tests/config/htcondor/manual/introduction-to-configuration-46.conf", 0, NULL, NULL, NULL },
        { "tests/config/htcondor/manual/security-30.conf", 0, NULL, "use SECURITY : FIPS", NULL },
};

static bool has_use_line(const char *text) {
        for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
                while (*l == ' ' || *l == '\t')
                        l++;
                if (*l == '@')
                        l++;
                if (strncasecmp(l, "use", 3) == 0 && (l[3] == ' ' || l[3] == '\t' || l[3] == ':'))
                        return true;
        }
        return false;
}

static void check_dir_listed(const char *dir, size_t *n_use) {
        DIR *d = opendir(dir);
        struct dirent *de;

        GLEAN_TEST_CHECK_FATAL(d != NULL, "opendir %s", dir);
        while ((de = readdir(d))) {
                char path[512], *text = NULL;
                bool listed = false;

                if (de->d_name[0] == '.')
                        continue;
                snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
                if (glean_test_read_file(path, &text, NULL) < 0)
                        continue;
                if (has_use_line(text)) {
                        (*n_use)++;
                        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
                                listed = listed || strcmp(files[i].path, path) == 0;
                        GLEAN_TEST_CHECK(listed, "%s has a use line and is not in files[]", path);
                }
                free(text);
        }
        closedir(d);
}

static void test_htcondor_files(void) {
        size_t n_use = 0, loaded = 0;

        check_dir_listed("tests/config/htcondor/examples", &n_use);
        check_dir_listed("tests/config/htcondor/manual", &n_use);
        GLEAN_TEST_CHECK(n_use == sizeof(files) / sizeof(files[0]), "%zu files with use lines, %zu listed", n_use,
                         sizeof(files) / sizeof(files[0]));
        for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
                const FileCase *f = &files[i];
                Config *cfg = base(NULL);
                ConfigError e = {};
                int r = config_load_file(cfg, f->path, &e);

                if (f->error_line == 0) {
                        GLEAN_TEST_CHECK(r == 0, "%s: %s:%d: %s", f->path, e.file, e.line, e.msg);
                        loaded += r == 0;
                } else
                        GLEAN_TEST_CHECK(r < 0 && e.line == f->error_line && strncmp(e.msg, f->error, strlen(f->error)) == 0,
                                         "%s: %d at %d '%s', want line %d '%s' (waits for %s)", f->path, r, e.line,
                                         e.msg, f->error_line, f->error, f->waits);
                if (r == 0 && f->warning)
                        GLEAN_TEST_CHECK(has_warning(cfg, f->warning), "%s: no warning '%s'", f->path, f->warning);
                config_free(cfg);
        }
        printf("\n    %zu of %zu files with use lines load\n", loaded, sizeof(files) / sizeof(files[0]));
}

static CU_TestInfo table_tests[] = {
        { "table", test_table },
        { "against-htcondor", test_against_htcondor },
        CU_TEST_INFO_NULL,
};

static CU_TestInfo use_tests[] = {
        { "arguments", test_args },
        { "use", test_use },
        { "argument-text", test_arg_text },
        { "lines-and-warnings", test_lines_and_warnings },
        { "errors", test_errors },
        { "limits", test_limits },
        { "htcondor-files", test_htcondor_files },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "table", NULL, NULL, NULL, NULL, table_tests },
        { "use", NULL, NULL, NULL, NULL, use_tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

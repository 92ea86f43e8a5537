/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-config-knobs.c — the knob registry (config/knobs.c): config_unused()
 * names the knobs a file sets that glean reads nothing from, once each,
 * with file and line; knobs read, their patterns (SLOT<N>_, SLOT_TYPE_<N>,
 * GROUP_QUOTA_<group>, ALLOW_, ...) and the macros they use do not warn;
 * and every built-in default either is read or is one of a known list of
 * HTCondor knobs glean defines and does not read (so that a new default
 * with a reader and no registry entry fails here).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "config/config.h"
#include "test-util.h"

typedef struct KnobCase {
        const char *text; /* the file "k.conf" */
        const char *warned[6]; /* the names config_unused gives, in its order (by name) */
} KnobCase;

static const KnobCase cases[] = {
        /* HTCondor knobs glean does not read */
        { "DEFRAG_INTERVAL = 60\n", { "DEFRAG_INTERVAL" } },
        { "NUM_CLAIMS = 2\nJOB_RENICE_INCREMENT = 10\n", { "JOB_RENICE_INCREMENT", "NUM_CLAIMS" } },
        /* a typo of a knob read is read by nothing */
        { "NEGOTIATOR_INTERVALL = 30\n", { "NEGOTIATOR_INTERVALL" } },
        /* knobs read */
        { "START = True\nNEGOTIATOR_INTERVAL = 30\nRANK = Memory\nSLOT_WEIGHT = Cpus\n", { NULL } },
        { "UID_DOMAIN = example.org\nCOLLECTOR_HOST = cm.example.org\n", { NULL } },
        /* the machine, the queue, startd cron: the jobs listed only, their items only */
        { "MAX_JOBS_RUNNING = 100\nRESERVED_MEMORY = 512\nSTARTD_CRON_JOBLIST = A, B_C\nSTARTD_CRON_A_EXECUTABLE = /x\n"
          "STARTD_CRON_B_C_PERIOD = 5m\nSTARTD_CRON_B_C_RECONFIG_RERUN = true\nSTARTD_CRON_USER = nobody\n"
          "APPEND_REQ_VANILLA = True\nHISTORY =\nROTATE_HISTORY_DAILY = True\n",
          { NULL } },
        { "STARTD_CRON_JOBLIST = A\nSTARTD_CRON_AA_EXECUTABLE = /x\nSTARTD_CRON_A_EXECUTABEL = /x\n",
          { "STARTD_CRON_A_EXECUTABEL", "STARTD_CRON_AA_EXECUTABLE" } },
        /* JOB_TRANSFORM_<name> and SUBMIT_ATTRS' macros for the names listed */
        { "JOB_TRANSFORM_NAMES = T\nJOB_TRANSFORM_T = SET X 1\nJOB_TRANSFORM_U = SET Y 1\n"
          "SUBMIT_ATTRS = Site\nSite = \"here\"\nSUBMIT_EXPRS = Zone\nZone = 1\n",
          { "JOB_TRANSFORM_U" } },
        /* SLOT<N>_ for the knobs read per slot, not for the others */
        { "SLOT2_START = False\nSLOT1_RANK = 1\nSLOT3_MATCH_TIMEOUT = 5\n", { NULL } },
        { "SLOT2_NEGOTIATOR_INTERVAL = 5\nSLOTX_START = 1\n", { "SLOT2_NEGOTIATOR_INTERVAL", "SLOTX_START" } },
        /* _VANILLA variants of the policy */
        { "SUSPEND_VANILLA = False\nSLOT1_KILL_VANILLA = True\nSTART_VANILLA = True\n", { "START_VANILLA" } },
        /* slot types */
        { "SLOT_TYPE_1 = cpus=1\nNUM_SLOTS_TYPE_1 = 2\nSLOT_TYPE_1_PARTITIONABLE = True\nSLOT_TYPE_X = 1\n",
          { "SLOT_TYPE_X" } },
        /* the groups GROUP_NAMES lists, and not the others */
        { "GROUP_NAMES = group_a, group_b.sub\nGROUP_QUOTA_group_a = 10\nGROUP_QUOTA_DYNAMIC_group_b.sub = 0.5\n"
          "GROUP_ACCEPT_SURPLUS_group_a = True\nGROUP_PRIO_FACTOR_group_a = 2\nGROUP_QUOTA_group_c = 1\n",
          { "GROUP_QUOTA_group_c" } },
        /* SUBMIT_REQUIREMENT_<name> for the names listed */
        { "SUBMIT_REQUIREMENT_NAMES = Small\nSUBMIT_REQUIREMENT_Small = RequestCpus < 2\n"
          "SUBMIT_REQUIREMENT_Small_REASON = \"too big\"\nSUBMIT_REQUIREMENT_Small_IS_WARNING = True\n"
          "SUBMIT_REQUIREMENT_Big = True\nSUBMIT_REQUIREMENT_Big_IS_WARNING = True\n",
          { "SUBMIT_REQUIREMENT_Big", "SUBMIT_REQUIREMENT_Big_IS_WARNING" } },
        /* authorization, per-user groups, machine resources */
        { "ALLOW_WRITE = *\nDENY_READ_COLLECTOR = bad.example.org\nACCOUNTING_GROUPS_ALLOWED_alice = group_a\n"
          "MACHINE_RESOURCE_GPUS = 2\nALLOW_BOGUS = 1\n",
          { "ALLOW_BOGUS" } },
        /* policy macros: used by START (a default), so not warned */
        { "StartIdleTime = 30 * $(MINUTE)\nBackgroundLoad = 0.5\n", { NULL } },
        /* macros of a knob read, through others; not those of a knob unread */
        { "WorkHours = (ClockHour >= 8)\nMyBusy = $(WorkHours:False)\nSTART = $(MyBusy) == False\n"
          "Unread = $(Lonely)\nLonely = 1\n",
          { "Lonely", "Unread" } },
        /* the macros a macro function of a knob read names, and those of defaults inside it */
        { "Foo = 3\nSTART = $INT(Foo) > 1\nBar = a.b\nRANK = $Fn(Bar) == $(Baz:$(Qux))\nQux = 1\nL = x,y\n"
          "SLOT_WEIGHT = $CHOICE(1, L)\nNotNamed = 1\n",
          { "NotNamed" } },
        /* STARTD_ATTRS names knobs the slot ad publishes (SLOT<N>_ too) */
        { "STARTD_ATTRS = $(STARTD_ATTRS) IsDesktop\nIsDesktop = True\nSLOT1_IsDesktop = False\n"
          "SLOT2_STARTD_EXPRS = Color\nColor = \"red\"\nNotListed = 1\n",
          { "NotListed" } },
        /* SLOT<N>_ATTR for the attributes of slot N, not of another slot */
        { "SLOT2_STARTD_ATTRS = Color\nSLOT2_Color = 1\nSLOT3_Color = 2\nColor = 3\n", { "SLOT3_Color" } },
        /* an empty value sets nothing; $$(...) is match time, $ENV() the environment */
        { "DEFRAG_INTERVAL =\nSTART = $$(Foo) && $ENV(HOME) != \"\"\nFoo = 1\n", { "Foo" } },
        /* what a metaknob sets is the metaknob's (SEC_DEFAULT_ENCRYPTION, STARTD_LATCH_EXPRS, DAEMON_LIST, ...);
         * the file's own definition after it counts again */
        { "use SECURITY : Recommended\nuse ROLE : Execute\nuse POLICY : Desktop\n", { NULL } },
        { "use SECURITY : Recommended\nSEC_DEFAULT_ENCRYPTION = OPTIONAL\n", { "SEC_DEFAULT_ENCRYPTION" } },
        /* each knob once, with the line of its last definition */
        { "FOO = 1\nFOO = 2\n", { "FOO" } },
};

static Config *load(const char *text) {
        Config *cfg = NULL;
        ConfigError err = {};

        if (config_new(&cfg) < 0)
                return NULL;
        if (config_load_string(cfg, text, "k.conf", &err) < 0) {
                config_free(cfg);
                return NULL;
        }
        return cfg;
}

/* The knob name of a config_unused line: "k.conf:3: NAME is set ...". */
static void line_name(const char *msg, char *buf, size_t size) {
        const char *p = strstr(msg, ": ");
        size_t n;

        p = p ? p + 2 : msg;
        n = strcspn(p, " ");
        snprintf(buf, size, "%.*s", (int) n, p);
}

static void test_cases(void) {
        for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
                Config *cfg = load(cases[i].text);
                char **msgs = NULL;
                size_t want = 0;
                int n;

                GLEAN_TEST_CHECK_FATAL(cfg != NULL, "case %zu: the text loads", i);
                while (want < 6 && cases[i].warned[want])
                        want++;
                n = config_unused(cfg, &msgs);
                GLEAN_TEST_CHECK(n == (int) want, "case %zu: %d warnings, want %zu (first '%s')", i, n, want,
                                 n > 0 ? msgs[0] : "");
                for (int k = 0; k < n && (size_t) k < want; k++) {
                        char name[128];

                        line_name(msgs[k], name, sizeof name);
                        GLEAN_TEST_CHECK(strcmp(name, cases[i].warned[k]) == 0, "case %zu: warning %d '%s', want %s",
                                         i, k, msgs[k], cases[i].warned[k]);
                        GLEAN_TEST_CHECK(strncmp(msgs[k], "k.conf:", 7) == 0 &&
                                                 strstr(msgs[k], " is set but glean reads nothing from it"),
                                         "case %zu: '%s' has file, line and reason", i, msgs[k]);
                }
                if (n == 0)
                        GLEAN_TEST_CHECK(msgs == NULL, "case %zu: NULL when none", i);
                config_strv_free(msgs);
                config_free(cfg);
        }
}

static void test_line(void) {
        Config *cfg = load("# a comment\nFOO = 1\nBAR = 2\n\nFOO = 3\n");
        char **msgs = NULL;

        GLEAN_TEST_CHECK_FATAL(cfg != NULL, "loads");
        GLEAN_TEST_CHECK_FATAL(config_unused(cfg, &msgs) == 2, "two knobs");
        GLEAN_TEST_CHECK(strcmp(msgs[0], "k.conf:3: BAR is set but glean reads nothing from it") == 0, "'%s'",
                         msgs[0]);
        GLEAN_TEST_CHECK(strcmp(msgs[1], "k.conf:5: FOO is set but glean reads nothing from it") == 0, "'%s'",
                         msgs[1]);
        config_strv_free(msgs);
        config_free(cfg);

        /* the built-in defaults alone warn of nothing */
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) >= 0, "config_new");
        GLEAN_TEST_CHECK(config_unused(cfg, &msgs) == 0 && !msgs, "no warning without a file");
        config_free(cfg);
}

/* Hostile sizes: a chain of 20000 macros (START -> K0 -> K1 -> ...), a list
 * of 5000 attributes (config_split_list grows its array an item at a time:
 * quadratic under the sanitizers' realloc), slot numbers of many digits, a
 * long name; quick, and right. */
static void test_hostile(void) {
        enum { N = 20000, N_ATTRS = 5000 };
        char *text = NULL, **msgs = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&text, &size);
        Config *cfg = NULL;
        ConfigError err = {};
        struct timespec t0, t1;
        int n;

        GLEAN_TEST_CHECK_FATAL(f != NULL, "open_memstream");
        fprintf(f, "START = $(K0)\n");
        for (int i = 0; i < N; i++)
                fprintf(f, "K%d = $(K%d) + 1\n", i, i + 1);
        fprintf(f, "STARTD_ATTRS =");
        for (int i = 0; i < N_ATTRS; i++)
                fprintf(f, " A%d", i);
        fprintf(f, "\n");
        for (int i = 0; i < N_ATTRS; i += 1000)
                fprintf(f, "A%d = 1\nSLOT7_A%d = 2\n", i, i);
        fprintf(f, "SLOT123456789012345678901234567890_START = 1\nSLOT1_%0200d = 1\nB%0200d = 1\n", 0, 0);
        fclose(f);
        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) >= 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "k.conf", &err) >= 0, "loads: %s", err.msg);
        clock_gettime(CLOCK_MONOTONIC, &t0);
        n = config_unused(cfg, &msgs);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        GLEAN_TEST_CHECK(n == 2, "%d warnings, want 2 (SLOT1_0..., B0...)", n);
        for (int i = 0; i < n; i++)
                GLEAN_TEST_CHECK(strstr(msgs[i], "SLOT1_000") || strstr(msgs[i], ": B000"), "'%.60s'", msgs[i]);
        GLEAN_TEST_CHECK((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 3000,
                         "config_unused over %d names took %ld ms", N + N_ATTRS / 500, (long) ((t1.tv_sec - t0.tv_sec) * 1000 +
                                                                     (t1.tv_nsec - t0.tv_nsec) / 1000000));
        config_strv_free(msgs);
        config_free(cfg);
        free(text);
}

/* The built-in defaults glean defines for HTCondor's sake and reads nothing
 * from (set in a file, they warn). A default missing from here warns
 * nothing, so it must be read: in the registry. */
static const char *const defaults_unread[] = {
        "ALL_DEBUG", "ALLOW_PSLOT_PREEMPTION", "CLAIM_PARTITIONABLE_LEFTOVERS", "ConsoleBusy",
        "CONSUMPTION_CPUS", "CONSUMPTION_DISK", "CONSUMPTION_MEMORY", "CONSUMPTION_POLICY", "DAEMON_LIST",
        "DEFRAG_DRAINING_MACHINES_PER_HOUR", "DEFRAG_INTERVAL", "DEFRAG_MAX_CONCURRENT_DRAINING",
        "DEFRAG_MAX_WHOLE_MACHINES", "GROUP_QUOTA_ROUND_ROBIN_RATE",
        "IS_VALID_CHECKPOINT_PLATFORM", "JOB_RENICE_INCREMENT", "JustCpu", "MachineBusy", "MaxVacateTime",
        "NEGOTIATOR_CYCLE_DELAY", "NEGOTIATOR_DEPTH_FIRST", "NEGOTIATOR_DISCOUNT_SUSPENDED_RESOURCES",
        "NEGOTIATOR_MAX_TIME_PER_CYCLE", "NEGOTIATOR_MAX_TIME_PER_PIESPIN", "NEGOTIATOR_MAX_TIME_PER_SCHEDD",
        "NEGOTIATOR_MAX_TIME_PER_SUBMITTER", "NEGOTIATOR_NUM_THREADS", "NEGOTIATOR_RESOURCE_REQUEST_LIST_SIZE",
        "NEGOTIATOR_UPDATE_INTERVAL", "NEGOTIATOR_USE_WEIGHTED_DEMAND", "NUM_CLAIMS", "SCHEDD_INTERVAL",
        "SIGNIFICANT_ATTRIBUTES", "STARTD_JOB_ATTRS", "StateTimer", "UNUSED_CLAIM_TIMEOUT",
};

static bool is_unread_default(const char *name) {
        for (size_t i = 0; i < sizeof defaults_unread / sizeof *defaults_unread; i++)
                if (strcasecmp(defaults_unread[i], name) == 0)
                        return true;
        return false;
}

/* Every default set in a file to its own value (or "x" when empty): the
 * warnings are exactly the known unread defaults. */
static void test_defaults(void) {
        Config *defaults = NULL, *cfg = NULL;
        char **names = NULL, **msgs = NULL;
        char *text = NULL;
        size_t size = 0, n_unread = 0;
        FILE *f = open_memstream(&text, &size);
        ConfigError err = {};
        int n;

        GLEAN_TEST_CHECK_FATAL(f && config_new(&defaults) >= 0 && config_names(defaults, &names) >= 0, "setup");
        for (char **p = names; *p; p++) {
                const char *file = NULL, *raw = config_raw(defaults, *p);
                int line = 0;

                if (config_where(defaults, *p, &file, &line) < 0 || strcmp(file, "<default>") != 0)
                        continue;
                if (strcasecmp(*p, "LOCAL_CONFIG_DIR") == 0)
                        continue; /* a directory to read: not here */
                fprintf(f, "%s = %s\n", *p, raw[0] ? raw : "x");
                n_unread += is_unread_default(*p);
        }
        fprintf(f, "LOCAL_CONFIG_DIR =\n");
        fclose(f);
        GLEAN_TEST_CHECK(n_unread == sizeof defaults_unread / sizeof *defaults_unread,
                         "every name of the unread list is a default (%zu of %zu)", n_unread,
                         sizeof defaults_unread / sizeof *defaults_unread);

        GLEAN_TEST_CHECK_FATAL(config_new(&cfg) >= 0, "config_new");
        GLEAN_TEST_CHECK_FATAL(config_load_string(cfg, text, "all.conf", &err) >= 0, "all defaults load: %s",
                               err.msg);
        n = config_unused(cfg, &msgs);
        GLEAN_TEST_CHECK(n == (int) n_unread, "%d defaults unread, want %zu", n, n_unread);
        for (int i = 0; i < n; i++) {
                char name[128];

                line_name(msgs[i], name, sizeof name);
                GLEAN_TEST_CHECK(is_unread_default(name),
                                 "%s: a default glean reads (by itself or as a macro) is missing from the registry "
                                 "(config/knobs.c), or belongs to the unread list",
                                 msgs[i]);
        }
        config_strv_free(msgs);

        /* config_used: sorted, every registry default in it, none of the unread ones */
        msgs = NULL;
        n = config_used(cfg, &msgs);
        GLEAN_TEST_CHECK_FATAL(n > 0, "config_used gives names");
        for (int i = 1; i < n; i++)
                GLEAN_TEST_CHECK(strcasecmp(msgs[i - 1], msgs[i]) < 0, "sorted: %s before %s", msgs[i - 1], msgs[i]);
        for (int i = 0; i < n; i++)
                GLEAN_TEST_CHECK(!is_unread_default(msgs[i]), "%s is not used", msgs[i]);
        config_strv_free(msgs);

        config_strv_free(names);
        config_free(cfg);
        config_free(defaults);
        free(text);
}

static CU_TestInfo tests[] = {
        { "cases", test_cases },
        { "file and line", test_line },
        { "defaults", test_defaults },
        { "hostile sizes", test_hostile },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "knobs", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

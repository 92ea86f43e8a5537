/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-cron-daemon.c — the startd cron in the real glean-agent: a Periodic
 * job's attributes in the slot ads (as nobody when the agent runs as root),
 * a per-slot ad reaching its slot only, a protected attribute refused, an
 * attribute the output stops carrying gone from the ads, a OneShot job run
 * once, and a broken STARTD_CRON knob refusing the start with its
 * file:line.
 */
#define _GNU_SOURCE
#include "agent-test.h"

static char *cron_config(const char *dir) {
        char *text = NULL;
        int r = asprintf(&text,
                         "STARTD_CRON_JOBLIST = probe once stream\n"
                         "STARTD_CRON_STREAM_EXECUTABLE = %s/stream.sh\n"
                         "STARTD_CRON_STREAM_MODE = WaitForExit\n"
                         "STARTD_CRON_STREAM_PERIOD = 1\n"
                         "STARTD_CRON_PROBE_EXECUTABLE = %s/probe.sh\n"
                         "STARTD_CRON_PROBE_PERIOD = 1s\n"
                         "STARTD_CRON_PROBE_ARGS = %s/jobs\n"
                         "STARTD_CRON_ONCE_EXECUTABLE = %s/once.sh\n"
                         "STARTD_CRON_ONCE_MODE = OneShot\n"
                         "STARTD_CRON_ONCE_PREFIX = once_\n"
                         "STARTD_CRON_ONCE_ARGS = %s/jobs\n",
                         dir, dir, dir, dir, dir);
        return r < 0 ? NULL : text;
}

static void write_script(const char *dir, const char *name, const char *text) {
        char path[256];
        snprintf(path, sizeof path, "%s/%s", dir, name);
        write_file(path, text);
        chmod(path, 0755);
}

static bool wait_attr(Pool *p, const char *slot, const char *attr, bool want, int seconds) {
        for (int i = 0; i < seconds * 10; i++) {
                ClassAd *ad = slot_ad(p, slot);
                bool has = ad && classad_has(ad, attr);
                classad_free(ad);
                if (has == want)
                        return true;
                usleep(100000);
        }
        return false;
}

static void test_daemon(void) {
        Pool p;
        /* The scripts and what they write: a directory of the test's own
         * (the pool makes its directory when it starts). */
        char dir[] = "/tmp/glean-cron-d-XXXXXX";
        GLEAN_TEST_CHECK_FATAL(mkdtemp(dir) != NULL, "mkdtemp");
        chmod(dir, 0755);
        char jobs[300];
        snprintf(jobs, sizeof jobs, "%s/jobs", dir);
        mkdir(jobs, 0777);
        chmod(jobs, 0777);
        write_script(dir, "probe.sh",
                     "#!/bin/sh\n"
                     "echo 'OnlyTwo = true'\n"
                     "echo 'SlotId = 2'\n"
                     "echo '- two'\n"
                     "echo \"CronUid = $(id -u)\"\n"
                     "echo 'Cpus = 99'\n"
                     "[ -e \"$1/quiet\" ] || echo 'CronFlag = true'\n"
                     "echo 'CronEverywhere = 1'\n");
        /* A continuous job: its ad counts as soon as its '-' line is
         * written, while it keeps running. */
        write_script(dir, "stream.sh", "#!/bin/sh\necho 'Stream = 1'\necho '-'\nexec sleep 120\n");
        write_script(dir, "once.sh", "#!/bin/sh\necho x >>\"$1/once-runs\"\necho 'Ran = true'\n");
        char *conf = cron_config(dir);
        GLEAN_TEST_CHECK_FATAL(conf != NULL, "config");
        bool up = pool_start(&p, conf);
        free(conf);
        GLEAN_TEST_CHECK_FATAL(up, "the agent started");

        GLEAN_TEST_CHECK(wait_attr(&p, "slot1", "CronFlag", true, 10), "CronFlag reached slot1");
        int64_t uid = slot_int(&p, "slot1", "CronUid");
        GLEAN_TEST_CHECK(uid > 0, "the job ran as uid %lld, not root", (long long) uid);
        if (geteuid() == 0)
                CU_ASSERT_EQUAL(uid, (int64_t) nobody_uid());
        CU_ASSERT_EQUAL(slot_int(&p, "slot1", "Cpus"), 1);
        CU_ASSERT_EQUAL(slot_int(&p, "slot1", "CronEverywhere"), 1);
        CU_ASSERT(wait_attr(&p, "slot2", "OnlyTwo", true, 5));
        CU_ASSERT(wait_attr(&p, "slot1", "OnlyTwo", false, 1));
        GLEAN_TEST_CHECK(wait_attr(&p, "slot1", "once_Ran", true, 5), "the OneShot job's attribute");
        CU_ASSERT(slot_int(&p, "slot1", "LastUpdate") > 0);
        GLEAN_TEST_CHECK(wait_attr(&p, "slot2", "Stream", true, 5), "a WaitForExit job's ad while it runs");

        /* The output stops carrying CronFlag: it goes. */
        char quiet[400];
        snprintf(quiet, sizeof quiet, "%s/quiet", jobs);
        write_file(quiet, "");
        GLEAN_TEST_CHECK(wait_attr(&p, "slot1", "CronFlag", false, 10), "CronFlag gone");
        CU_ASSERT_EQUAL(slot_int(&p, "slot1", "CronEverywhere"), 1);

        /* OneShot: once, however long the agent runs. */
        char runs[400], *text = NULL;
        snprintf(runs, sizeof runs, "%s/once-runs", jobs);
        CU_ASSERT(glean_test_read_file(runs, &text, NULL) == 0 && text && !strcmp(text, "x\n"));
        free(text);
        CU_ASSERT(log_line(&p, "startd cron probe", "protected", NULL));
        CU_ASSERT_EQUAL(pool_stop(&p), 0);
        remove_dir(dir);
}

static void test_daemon_refuses(void) {
        Pool p;
        bool ok = pool_launch(&p,
                              "STARTD_CRON_JOBLIST = bad\n"
                              "STARTD_CRON_BAD_EXECUTABLE = relative/path\n"
                              "STARTD_CRON_BAD_PERIOD = 5m\n",
                              true);
        GLEAN_TEST_CHECK_FATAL(ok, "the agent exited");
        CU_ASSERT_EQUAL(p.exit_status, 1);
        char *log = read_log(&p);
        GLEAN_TEST_CHECK(log && strstr(log, "glean.conf:") && strstr(log, "STARTD_CRON_BAD_EXECUTABLE") &&
                                 strstr(log, "absolute"),
                         "the log names the knob: %s", log ? log : "");
        free(log);
        pool_stop(&p);
}

static CU_TestInfo tests[] = {
        { "a periodic and a one-shot job in the slot ads", test_daemon },
        { "a broken knob refuses the start", test_daemon_refuses },
        CU_TEST_INFO_NULL,
};
static CU_SuiteInfo suites[] = {
        { "cron-daemon", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        return glean_test_main(argc, argv, suites);
}

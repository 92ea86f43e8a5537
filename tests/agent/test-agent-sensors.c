/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test-agent-sensors.c — the real glean-agent with its kernel sensors, in
 * cgroups of a test subtree of our own (BASE_CGROUP): the methods in use
 * are advertised (InputSensor, TtySensor, LoadSensor) and logged once with
 * what was refused; a busy job drives its slot's CondorLoadAvg towards 1
 * and leaves the other slot's near 0 (SLOT_LOAD_DECAY_TIME shortened);
 * pressure (PSI) and the slot's CPU time are in the ads. In the VM rig
 * (GLEAN_VM=1), with the desktop policy: a key press through /dev/uinput
 * suspends the job (its cgroup frozen), and idleness continues it.
 * Root and kernel BTF (77 otherwise).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/input.h>
#include <linux/uinput.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "agent-test.h"
#include "cgroup-test.h"

static CgTestEnv env;
static bool in_vm;
static unsigned n_agents;

typedef struct SensorPool {
        Pool p;
        char abs[256]; /* <mount>/<BASE_CGROUP> */
} SensorPool;

static bool spool_start(SensorPool *sp, const char *extra) {
        char base[128], config[2048];
        snprintf(base, sizeof base, "%s/agent-%u", env.base, ++n_agents);
        snprintf(sp->abs, sizeof sp->abs, "%s/%s", env.mount, base);
        snprintf(config, sizeof config,
                 "AGENT_EXECUTOR = cgroup\nBASE_CGROUP = %s\nSENSOR_SAMPLE_INTERVAL = 1\n"
                 "SLOT_LOAD_DECAY_TIME = 2\n%s",
                 base, extra ? extra : "");
        return pool_start(&sp->p, config);
}

static void spool_stop(SensorPool *sp) {
        GLEAN_TEST_CHECK(pool_stop(&sp->p) == 0, "the agent exits 0 after SIGTERM");
        cgtest_destroy(sp->abs);
}

static double slot_real(Pool *p, const char *slot, const char *attr) {
        ClassAd *ad = slot_ad(p, slot);
        double v = -1;
        if (ad)
                classad_eval_real(ad, attr, CA_MODE_OLD, &v);
        classad_free(ad);
        return v;
}

static int slow(int seconds) {
        return seconds * agent_test_slowdown();
}

/* The methods: advertised in every slot ad and logged once each. */
static void test_methods(void) {
        SensorPool sp;
        CU_ASSERT_FATAL(spool_start(&sp, NULL));
        char *in = slot_string(&sp.p, "slot1", "InputSensor");
        char *tty = slot_string(&sp.p, "slot2", "TtySensor");
        char *load = slot_string(&sp.p, "slot2", "LoadSensor");
        if (in_vm) {
                CU_ASSERT_STRING_EQUAL(in, "fentry");
                CU_ASSERT_STRING_EQUAL(tty, "fentry");
        } else {
                GLEAN_TEST_CHECK(*in != 0, "InputSensor missing");
                GLEAN_TEST_CHECK(*tty != 0, "TtySensor missing");
        }
        CU_ASSERT_STRING_EQUAL(load, "tp_btf");
        char *log = read_log(&sp.p);
        GLEAN_TEST_CHECK(count(log, "input sensor: ") == 1 && count(log, "tty sensor: ") == 1 &&
                                 count(log, "load sensor: tp_btf (kernel)") == 1,
                         "one record per sensor:\n%s", log);
        if (strcmp(in, "none") == 0)
                GLEAN_TEST_CHECK(strstr(log, "input sensor: none (user space); methods refused") &&
                                         strstr(log, "GLEAN_REFUSED=\"fentry: "),
                                 "the refusals are logged:\n%s", log);
        free(log);
        free(in);
        free(tty);
        free(load);
        spool_stop(&sp);
}

/* Methods named by the knobs: a bad one is refused and logged, the
 * next taken; none at all leaves user space. */
static void test_method_knobs(void) {
        SensorPool sp;
        CU_ASSERT_FATAL(spool_start(&sp, "INPUT_SENSOR_METHODS = bogus\nTTY_SENSOR_METHODS =\nLOAD_SENSOR = False\n"));
        char *in = slot_string(&sp.p, "slot1", "InputSensor");
        char *tty = slot_string(&sp.p, "slot1", "TtySensor");
        char *load = slot_string(&sp.p, "slot1", "LoadSensor");
        CU_ASSERT_STRING_EQUAL(in, "none");
        CU_ASSERT_STRING_EQUAL(tty, "atime");
        CU_ASSERT_STRING_EQUAL(load, "cpu.stat");
        char *log = read_log(&sp.p);
        GLEAN_TEST_CHECK(strstr(log, "GLEAN_REFUSED=\"bogus: not a method of the input sensor\"") != NULL, "%s", log);
        GLEAN_TEST_CHECK(strstr(log, "GLEAN_SENSOR=input") != NULL, "the record's fields: %s", log);
        free(log);
        free(in);
        free(tty);
        free(load);
        spool_stop(&sp);
}

/* A busy job in slot1: its CondorLoadAvg goes towards 1, slot2's stays
 * near 0; TotalCondorLoadAvg is their sum; PSI and SlotCpuTime are there. */
static void test_busy_slot_load(void) {
        SensorPool sp;
        CU_ASSERT_FATAL(spool_start(&sp, NULL));
        int fd = connect_agent(&sp.p);
        CU_ASSERT_FATAL(fd >= 0);
        ClassAd *job = job_ad(&sp.p, "/bin/sh", "-c 'while :; do :; done'", NULL);
        pid_t pid = claim_and_run(fd, "slot1", "sensors-busy-claim", job);
        CU_ASSERT_FATAL(pid > 0);
        double l1 = 0, l2 = 0, total = 0;
        for (int i = 0; i < slow(20) * 4; i++) {
                l1 = slot_real(&sp.p, "slot1", "CondorLoadAvg");
                if (l1 > 0.9)
                        break;
                usleep(250000);
        }
        l2 = slot_real(&sp.p, "slot2", "CondorLoadAvg");
        total = slot_real(&sp.p, "slot2", "TotalCondorLoadAvg");
        printf("\n    CondorLoadAvg: slot1 %.3f, slot2 %.3f, total %.3f\n", l1, l2, total);
        GLEAN_TEST_CHECK(l1 > 0.9 && l1 < 1.1, "slot1 CondorLoadAvg %.3f, want ~1", l1);
        GLEAN_TEST_CHECK(l2 >= 0 && l2 < 0.1, "slot2 CondorLoadAvg %.3f, want ~0", l2);
        GLEAN_TEST_CHECK(total > 0.8 && total < 1.2, "TotalCondorLoadAvg %.3f", total);
        double cpu = slot_real(&sp.p, "slot1", "SlotCpuTime");
        GLEAN_TEST_CHECK(cpu > 0.5, "slot1 SlotCpuTime %.3f s", cpu);
        if (access("/proc/pressure/cpu", R_OK) == 0) {
                double some = slot_real(&sp.p, "slot1", "TotalCpuPressureSome10");
                GLEAN_TEST_CHECK(some >= 0 && some <= 100, "TotalCpuPressureSome10 %.2f", some);
                some = slot_real(&sp.p, "slot1", "CpuPressureSome60");
                GLEAN_TEST_CHECK(some >= 0 && some <= 100, "slot1 CpuPressureSome60 %.2f", some);
        }
        ClassAd *r = claim_cmd(fd, GLEAN_CMD_RELEASE, "sensors-busy-claim", NULL);
        classad_free(r);
        classad_free(job);
        close(fd);
        /* Released: the load decays (2 s constant). */
        for (int i = 0; i < slow(20) * 4 && (l1 = slot_real(&sp.p, "slot1", "CondorLoadAvg")) > 0.1; i++)
                usleep(250000);
        GLEAN_TEST_CHECK(l1 < 0.1, "slot1 CondorLoadAvg %.3f after its job ended", l1);
        spool_stop(&sp);
}

/* `glean sensors`: the agent's readings; --local: the probes loaded by
 * the command itself; bad arguments. */
static void test_cli(void) {
        SensorPool sp;
        CU_ASSERT_FATAL(spool_start(&sp, NULL));
        const char *glean = bin("GLEAN", "build/bin/glean");
        char *argv[] = { (char *) glean, "sensors", "--socket", sp.p.sock, NULL };
        GleanTestRun r;
        CU_ASSERT_EQUAL_FATAL(glean_test_run(argv, &r), 0);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "methods: input ") && strstr(r.out, "machine: KeyboardIdle ") &&
                                 strstr(r.out, "\nslot1 ") && strstr(r.out, "\nslot2 ") && strstr(r.out, "tp_btf"),
                         "glean sensors: status %d\n%s%s", r.status, r.out, r.err);
        if (access("/proc/pressure/cpu", R_OK) == 0)
                GLEAN_TEST_CHECK(strstr(r.out, "  Cpu ") != NULL, "no machine pressure:\n%s", r.out);
        glean_test_run_done(&r);

        char *local[] = { (char *) glean, "sensors", "--local", NULL };
        CU_ASSERT_EQUAL_FATAL(glean_test_run(local, &r), 0);
        GLEAN_TEST_CHECK(r.status == 0 && strstr(r.out, "load  tp_btf") && strstr(r.out, "keyboard "),
                         "glean sensors --local: status %d\n%s%s", r.status, r.out, r.err);
        if (in_vm)
                GLEAN_TEST_CHECK(strstr(r.out, "input fentry") != NULL, "%s", r.out);
        else if (strstr(r.out, "input none"))
                GLEAN_TEST_CHECK(strstr(r.out, "refused: fentry: ") != NULL, "%s", r.out);
        glean_test_run_done(&r);

        char *bad[] = { (char *) glean, "sensors", "--local", "--socket", "/x", NULL };
        CU_ASSERT_EQUAL_FATAL(glean_test_run(bad, &r), 0);
        GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "exclude each other"), "status %d: %s", r.status, r.err);
        glean_test_run_done(&r);
        static const char *const watches[] = { "x", "0", "-1", "86401", "5s" };
        for (size_t i = 0; i < sizeof watches / sizeof *watches; i++) {
                char *w[] = { (char *) glean, "sensors", "--watch", (char *) watches[i], NULL };
                CU_ASSERT_EQUAL_FATAL(glean_test_run(w, &r), 0);
                GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "--watch takes seconds (1 to 86400)") &&
                                         strstr(r.err, watches[i]),
                                 "--watch %s: status %d: %s", watches[i], r.status, r.err);
                glean_test_run_done(&r);
        }
        char *extra[] = { (char *) glean, "sensors", "slot1", NULL };
        CU_ASSERT_EQUAL_FATAL(glean_test_run(extra, &r), 0);
        GLEAN_TEST_CHECK(r.status == 2 && strstr(r.err, "unexpected 'slot1'"), "status %d: %s", r.status, r.err);
        glean_test_run_done(&r);
        char *nosock[] = { (char *) glean, "sensors", "--socket", "/nonexistent/agent.sock", NULL };
        CU_ASSERT_EQUAL_FATAL(glean_test_run(nosock, &r), 0);
        GLEAN_TEST_CHECK(r.status == 1 && strstr(r.err, "cannot talk to the agent"), "status %d: %s", r.status, r.err);
        glean_test_run_done(&r);
        spool_stop(&sp);
}

/* ---- the desktop policy with a real keyboard (VM) ---- */

static int uinput_keyboard(void) {
        if (access("/dev/uinput", W_OK) < 0 && system("modprobe uinput") != 0)
                return -ENOENT;
        int fd = open("/dev/uinput", O_WRONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ioctl(fd, UI_SET_EVBIT, EV_KEY);
        ioctl(fd, UI_SET_KEYBIT, KEY_SPACE);
        struct uinput_setup us = { .id = { .bustype = BUS_VIRTUAL, .vendor = 0x676c, .product = 2 } };
        snprintf(us.name, sizeof us.name, "glean test desktop keyboard");
        if (ioctl(fd, UI_DEV_SETUP, &us) < 0 || ioctl(fd, UI_DEV_CREATE) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

static void press(int fd) {
        struct input_event ev[] = {
                { .type = EV_KEY, .code = KEY_SPACE, .value = 1 },
                { .type = EV_SYN, .code = SYN_REPORT },
                { .type = EV_KEY, .code = KEY_SPACE, .value = 0 },
                { .type = EV_SYN, .code = SYN_REPORT },
        };
        CU_ASSERT_EQUAL(write(fd, ev, sizeof ev), (ssize_t) sizeof ev);
}

static int frozen(const SensorPool *sp) {
        char path[384], buf[256];
        snprintf(path, sizeof path, "%s/slots/slot1/job/cgroup.events", sp->abs);
        if (cgtest_read(path, buf, sizeof buf) < 0)
                return -1;
        const char *f = strstr(buf, "frozen ");
        return f ? f[7] == '1' : -1;
}

/* The desktop policy (glean's built-in default, the seeds') with its minute shortened to
 * 2 s: a key press makes KeyboardBusy, the job is suspended (frozen);
 * ContinueIdleTime (3 s) of idleness and 10 s suspended continue it. */
static void test_desktop_keypress(void) {
        if (!in_vm) {
                printf("(uinput: the VM rig runs this one) ");
                return;
        }
        int kbd = uinput_keyboard();
        GLEAN_TEST_CHECK_FATAL(kbd >= 0, "/dev/uinput: %s", strerror(-kbd));
        SensorPool sp;
        CU_ASSERT_FATAL(spool_start(&sp, "use POLICY : DESKTOP\n"
                                          "MINUTE = 2\n"
                                          "StartIdleTime = 0\n"
                                          "ContinueIdleTime = 3\n"
                                          "BackgroundLoad = 100\n"
                                          "SLOTS_CONNECTED_TO_KEYBOARD = 2\n"
                                          "SLOTS_CONNECTED_TO_CONSOLE = 2\n"));
        int fd = connect_agent(&sp.p);
        CU_ASSERT_FATAL(fd >= 0);
        ClassAd *job = job_ad(&sp.p, "/bin/sleep", "300", NULL);
        pid_t pid = claim_and_run(fd, "slot1", "sensors-desktop-claim", job);
        CU_ASSERT_FATAL(pid > 0);
        CU_ASSERT(wait_state(&sp.p, "slot1", "Claimed/Busy", slow(5)));
        GLEAN_TEST_CHECK(frozen(&sp) == 0, "the job is frozen before any key press");

        press(kbd);
        CU_ASSERT(wait_state(&sp.p, "slot1", "Claimed/Suspended", slow(5)));
        int64_t idle = slot_int(&sp.p, "slot1", "KeyboardIdle");
        GLEAN_TEST_CHECK(idle >= 0 && idle < 5, "KeyboardIdle %lld after the key press", (long long) idle);
        for (int i = 0; i < 100 && frozen(&sp) != 1; i++)
                usleep(20000);
        GLEAN_TEST_CHECK(frozen(&sp) == 1, "the suspended job's cgroup is not frozen");
        CU_ASSERT(log_transition(&sp.p, "slot1", "Claimed/Busy", "Claimed/Suspended", 14));

        /* Nobody at the keyboard: continued after ContinueIdleTime and 10 s. */
        CU_ASSERT(wait_state(&sp.p, "slot1", "Claimed/Busy", slow(25)));
        for (int i = 0; i < 100 && frozen(&sp) != 0; i++)
                usleep(20000);
        GLEAN_TEST_CHECK(frozen(&sp) == 0, "the continued job's cgroup is still frozen");
        GLEAN_TEST_CHECK(kill(pid, 0) == 0, "the job did not survive its suspension");
        CU_ASSERT(log_transition(&sp.p, "slot1", "Claimed/Suspended", "Claimed/Busy", 15));

        ClassAd *r = claim_cmd(fd, GLEAN_CMD_RELEASE, "sensors-desktop-claim", NULL);
        classad_free(r);
        classad_free(job);
        close(fd);
        spool_stop(&sp);
        ioctl(kbd, UI_DEV_DESTROY);
        close(kbd);
}

static CU_TestInfo tests[] = {
        { "methods advertised and logged", test_methods },
        { "methods from the knobs", test_method_knobs },
        { "a busy slot's CondorLoadAvg", test_busy_slot_load },
        { "glean sensors", test_cli },
        { "desktop policy: a key press suspends, idleness continues", test_desktop_keypress },
        CU_TEST_INFO_NULL,
};

static CU_SuiteInfo suites[] = {
        { "agent-sensors", NULL, NULL, NULL, NULL, tests },
        CU_SUITE_INFO_NULL,
};

int main(int argc, char **argv) {
        in_vm = cgtest_in_vm();
        return cgtest_main(argc, argv, suites, &env, true);
}
